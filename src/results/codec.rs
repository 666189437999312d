//! The row codec, for both backends: the `runs` and `results` columns ↔
//! `Run`, `ResultRecord` and `Environment` (tags, machine, environment,
//! options and each result are JSON text), the parameter lists of the two
//! INSERTs, and the writer-gone rule applied to a stored row (the writer
//! lock its row names, tested by the backend; else the process rule).
//!
//! A backend only maps its driver's cells to [`Value`]s and back.

use super::liveness::Held;
use super::schema::{cpu_model_of, ResultRecord, Run, RunStatus};
use super::store::{RunSummary, Seen, Writer, WriterState};
use anyhow::{anyhow, bail, Context as _, Result};

/// One cell, to bind or as read. A NULL keeps a type so that PostgreSQL can
/// bind it; a NULL read from SQLite (which has no column types) comes as
/// `Text(None)`, and every reader below takes a NULL of any type.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(Option<String>),
    Int(Option<i64>),
    Real(Option<f64>),
}

impl Value {
    pub fn text(s: impl Into<String>) -> Value {
        Value::Text(Some(s.into()))
    }

    fn is_null(&self) -> bool {
        matches!(
            self,
            Value::Text(None) | Value::Int(None) | Value::Real(None)
        )
    }

    fn kind(&self) -> &'static str {
        match self {
            _ if self.is_null() => "NULL",
            Value::Text(_) => "text",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real number",
        }
    }
}

/// Reads the cells of one row in order, with one-line errors naming the store.
pub struct Cells<'a> {
    shown: &'a str,
    row: std::vec::IntoIter<Value>,
    at: usize,
}

impl<'a> Cells<'a> {
    pub fn new(shown: &'a str, row: Vec<Value>) -> Cells<'a> {
        Cells {
            shown,
            row: row.into_iter(),
            at: 0,
        }
    }

    /// The first row of a query's answer; with no row at all, the first
    /// read is an error ("has no column 1").
    pub fn first(shown: &'a str, rows: Vec<Vec<Value>>) -> Cells<'a> {
        Cells::new(shown, rows.into_iter().next().unwrap_or_default())
    }

    pub(crate) fn next(&mut self) -> Result<Value> {
        self.at += 1;
        self.row.next().ok_or_else(|| {
            anyhow!(
                "store '{}': a stored row has no column {}",
                self.shown,
                self.at
            )
        })
    }

    fn wrong(&self, kind: &str, want: &str) -> anyhow::Error {
        anyhow!(
            "store '{}': column {} of a stored row holds {kind}, not {want}",
            self.shown,
            self.at
        )
    }

    /// None for a NULL; an error for a cell of another type than `want`.
    fn null_or_wrong<T>(&self, v: Value, want: &str) -> Result<Option<T>> {
        if v.is_null() {
            Ok(None)
        } else {
            Err(self.wrong(v.kind(), want))
        }
    }

    pub fn opt_text(&mut self) -> Result<Option<String>> {
        match self.next()? {
            Value::Text(s) => Ok(s),
            v => self.null_or_wrong(v, "text"),
        }
    }

    pub fn opt_int(&mut self) -> Result<Option<i64>> {
        match self.next()? {
            Value::Int(n) => Ok(n),
            v => self.null_or_wrong(v, "an integer"),
        }
    }

    pub fn text(&mut self) -> Result<String> {
        self.opt_text()?.ok_or_else(|| self.wrong("NULL", "text"))
    }

    pub fn int(&mut self) -> Result<i64> {
        self.opt_int()?
            .ok_or_else(|| self.wrong("NULL", "an integer"))
    }
}

/// The `runs` columns read into a [`RawRun`], in its order.
pub const RUN_COLUMNS: &str = "id, schema, tool_version, started_at, finished_at, status, host, \
     profile, tags, machine, environment, options, writer_pid, writer_start, writer_boot, writer_host, \
     writer_lock";

/// The names of [`RUN_COLUMNS`], in order.
const RUN_COLUMN_NAMES: [&str; 17] = [
    "id",
    "schema",
    "tool_version",
    "started_at",
    "finished_at",
    "status",
    "host",
    "profile",
    "tags",
    "machine",
    "environment",
    "options",
    "writer_pid",
    "writer_start",
    "writer_boot",
    "writer_host",
    "writer_lock",
];

/// What is wrong with one stored run, e.g. `tags: not JSON`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Damage(pub(crate) String);

impl Damage {
    /// The one-line error of a command that needs run `id`.
    pub(crate) fn error(&self, shown: &str, id: &str) -> anyhow::Error {
        anyhow!("run {id} in store '{shown}' is damaged ({})", self.0)
    }

    /// The warning of a listing that leaves run `id` out.
    pub(crate) fn warning(&self, shown: &str, id: &str) -> String {
        format!(
            "run {id} in store '{shown}' is damaged ({}): skipped",
            self.0
        )
    }

    /// `what` does not parse as the JSON cpuscope stores there.
    fn json(what: &str, e: &serde_json::Error) -> Damage {
        use serde_json::error::Category;
        match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => Damage(format!("{what}: not JSON")),
            Category::Data => Damage(format!("{what}: not what cpuscope stores there ({e})")),
        }
    }
}

/// A runs row as read, before any cell is checked. Reading one never fails
/// on what a cell holds, so that a damaged row neither hides the other runs
/// from a listing nor keeps itself from being deleted; [`RawRun::decode`]
/// says what is wrong with it.
pub(crate) struct RawRun {
    /// The id as stored (for a damaged id cell, what it holds instead).
    pub(crate) id: String,
    /// The cells of [`RUN_COLUMNS`], in order.
    cells: Vec<Value>,
}

impl RawRun {
    /// The next cells of `c`, as selected by [`RUN_COLUMNS`].
    pub(crate) fn read(c: &mut Cells<'_>) -> Result<RawRun> {
        let cells = RUN_COLUMN_NAMES
            .iter()
            .map(|_| c.next())
            .collect::<Result<Vec<_>>>()?;
        Ok(RawRun::from_cells(cells))
    }

    fn from_cells(cells: Vec<Value>) -> RawRun {
        let id = match &cells[0] {
            Value::Text(Some(s)) => s.clone(),
            Value::Int(Some(n)) => n.to_string(),
            Value::Real(Some(x)) => x.to_string(),
            _ => "(without id)".to_string(),
        };
        RawRun { id, cells }
    }

    fn cell(&self, name: &str) -> &Value {
        let i = RUN_COLUMN_NAMES
            .iter()
            .position(|n| *n == name)
            .expect("a column of RUN_COLUMNS");
        &self.cells[i]
    }

    fn opt_text(&self, name: &str) -> std::result::Result<Option<String>, Damage> {
        match self.cell(name) {
            Value::Text(s) => Ok(s.clone()),
            v if v.is_null() => Ok(None),
            v => Err(Damage(format!("{name}: {}, not text", v.kind()))),
        }
    }

    fn text(&self, name: &str) -> std::result::Result<String, Damage> {
        self.opt_text(name)?
            .ok_or_else(|| Damage(format!("{name}: NULL, not text")))
    }

    /// An integer cell; None for NULL or anything else (writer columns
    /// only say who wrote a run, and are read leniently).
    fn lenient_int(&self, name: &str) -> Option<i64> {
        match self.cell(name) {
            Value::Int(n) => *n,
            _ => None,
        }
    }

    fn lenient_text(&self, name: &str) -> Option<String> {
        self.opt_text(name).ok().flatten()
    }

    fn json<T: serde::de::DeserializeOwned>(&self, name: &str) -> std::result::Result<T, Damage> {
        serde_json::from_str(&self.text(name)?).map_err(|e| Damage::json(name, &e))
    }

    pub(crate) fn writer(&self) -> Option<Writer> {
        let pid = u32::try_from(self.lenient_int("writer_pid")?).ok()?;
        Some(Writer {
            pid,
            start_ticks: self
                .lenient_int("writer_start")
                .and_then(|t| u64::try_from(t).ok()),
            boot_id: self.lenient_text("writer_boot"),
            hostname: self.lenient_text("writer_host"),
        })
    }

    /// The writer-gone rule, for a run left `running` (None for a finished
    /// one): the writer lock its row names, tested by `test` (the lock's
    /// kind, the run id), decides; a row without one (stored by an older
    /// cpuscope, or where no lock could be taken), or a lock that cannot be
    /// tested here, falls back on the process rule ([`Writer::seen`]). A row
    /// without writer either is gone.
    pub(crate) fn writer_seen(&self, test: impl FnOnce(&str, &str) -> Held) -> Option<WriterSeen> {
        if self.lenient_text("status").as_deref() != Some(RunStatus::Running.as_str()) {
            return None;
        }
        let writer = self.writer();
        let untested = match self.lenient_text("writer_lock") {
            Some(kind) => match test(&kind, &self.id) {
                Held::Yes => {
                    return Some(WriterSeen::new(
                        WriterState::Writing,
                        writer,
                        "it holds the run's writer lock",
                    ))
                }
                Held::No => {
                    return Some(WriterSeen::new(
                        WriterState::Gone,
                        writer,
                        "its writer lock is free",
                    ))
                }
                Held::Unknown(why) => format!("its writer lock cannot be tested here ({why})"),
            },
            None => "it holds no writer lock (stored by an older cpuscope)".to_string(),
        };
        let (state, why) = match writer.as_ref().map(Writer::seen) {
            None => (WriterState::Gone, format!("{untested}, and no process is recorded")),
            Some(Seen::Alive) => (WriterState::Writing, format!("{untested}; its process is alive")),
            Some(Seen::Gone) => (WriterState::Gone, format!("{untested}; its process ended")),
            Some(Seen::CannotTell) => (
                WriterState::Unknown,
                format!("{untested}, and it ran under another host name, whose processes cannot be seen from here"),
            ),
        };
        Some(WriterSeen { state, writer, why })
    }

    /// The stored run without results, every cell checked, as stored (the
    /// writer-gone rule not applied). With `full` false, `machine` and
    /// `options` are only checked to be JSON and come back as null (what a
    /// listing needs, without building them).
    fn decode(&self, full: bool) -> std::result::Result<Run, Damage> {
        let status = self.text("status")?;
        let status = RunStatus::parse(&status)
            .map_err(|_| Damage(format!("status: '{status}' is unknown")))?;
        let any = |name: &str| -> std::result::Result<serde_json::Value, Damage> {
            if full {
                self.json(name)
            } else {
                self.json::<serde::de::IgnoredAny>(name)
                    .map(|_| serde_json::Value::Null)
            }
        };
        Ok(Run {
            id: self.text("id")?,
            schema: self.text("schema")?,
            tool_version: self.text("tool_version")?,
            started_at: self.text("started_at")?,
            finished_at: self.opt_text("finished_at")?,
            status,
            host: self.text("host")?,
            profile: self.text("profile")?,
            tags: self.json("tags")?,
            machine: any("machine")?,
            environment: self.json("environment")?,
            options: any("options")?,
            results: Vec::new(),
        })
    }

    /// The stored run, without results, as it reads now: a run whose writer
    /// is gone (`seen`, from [`RawRun::writer_seen`]) comes back `partial`
    /// with a note saying so. A damaged row is an error that says what is
    /// wrong.
    pub(crate) fn into_run(self, shown: &str, seen: Option<&WriterSeen>) -> Result<Run> {
        let mut run = self.decode(true).map_err(|d| d.error(shown, &self.id))?;
        if let Some(seen) = seen.filter(|s| s.state == WriterState::Gone) {
            run.status = RunStatus::Partial;
            run.environment.notes.push(seen.note());
        }
        Ok(run)
    }

    /// The `runs` listing line: a `running` run whose writer is gone is
    /// shown as partial (abandoned). A row with any damaged cell is refused
    /// (the caller skips it), so that every run listed can be read.
    pub(crate) fn summary(
        self,
        cpu_model: Option<String>,
        n: i64,
        seen: Option<&WriterSeen>,
    ) -> std::result::Result<RunSummary, Damage> {
        let run = self.decode(false)?;
        let writer = seen.map(|s| s.state);
        let interrupted = writer == Some(WriterState::Gone);
        Ok(RunSummary {
            id: run.id,
            started_at: run.started_at,
            finished_at: run.finished_at,
            status: if interrupted {
                RunStatus::Partial
            } else {
                run.status
            },
            interrupted,
            writer,
            host: run.host,
            cpu_model,
            profile: run.profile,
            tags: run.tags,
            results: usize::try_from(n).unwrap_or(0),
        })
    }
}

/// How the writer of a run left `running` is found, who it was and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WriterSeen {
    pub(crate) state: WriterState,
    pub(crate) writer: Option<Writer>,
    /// Why, after "its writer …": "its writer lock is free".
    pub(crate) why: String,
}

impl WriterSeen {
    fn new(state: WriterState, writer: Option<Writer>, why: &str) -> WriterSeen {
        WriterSeen {
            state,
            writer,
            why: why.to_string(),
        }
    }

    /// "the writing process (pid N on host 'H')", or without what is unknown.
    pub(crate) fn who(&self) -> String {
        match &self.writer {
            Some(w) => format!("the writing process ({})", w.who()),
            None => "the writing process".to_string(),
        }
    }

    /// The note a gone writer's run is read with.
    fn note(&self) -> String {
        format!(
            "interrupted: {} ended before the run finished; the run is abandoned, \
             kept as partial ({})",
            self.who(),
            self.why
        )
    }
}

/// One stored result, from its `doc` column; a damaged one is an error
/// that names the run and the result.
pub(crate) fn decode_result(
    shown: &str,
    run_id: &str,
    seq: i64,
    doc: &str,
) -> Result<ResultRecord> {
    serde_json::from_str(doc)
        .map_err(|e| Damage::json(&format!("result #{seq}"), &e).error(shown, run_id))
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).context("cannot serialise to JSON")
}

/// Insert one runs row; parameters from [`run_params`].
pub const INSERT_RUN: &str =
    "INSERT INTO runs (id, schema, tool_version, started_at, finished_at, \
     status, host, cpu_model, profile, tags, machine, environment, options, writer_pid, \
     writer_start, writer_boot, writer_host, stored_seq, writer_lock) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)";

/// The parameters of [`INSERT_RUN`]: `run`'s header with `status` and
/// `finished_at` as given, the writer (None for an imported run) with the
/// kind of writer lock it holds (`liveness::SQLITE_LOCK`, `PG_LOCK`; None:
/// none) and the run's place in the order runs were stored (`stored_seq`:
/// 1 + the highest stored so far, which makes `latest` the run stored last).
pub(crate) fn run_params(
    run: &Run,
    status: RunStatus,
    finished_at: Option<&str>,
    writer: Option<(&Writer, Option<&str>)>,
    stored_seq: i64,
) -> Result<Vec<Value>> {
    let lock = writer.and_then(|(_, l)| l).map(str::to_string);
    let writer = writer.map(|(w, _)| w);
    Ok(vec![
        Value::text(&run.id),
        Value::text(&run.schema),
        Value::text(&run.tool_version),
        Value::text(&run.started_at),
        Value::Text(finished_at.map(str::to_string)),
        Value::text(status.as_str()),
        Value::text(&run.host),
        Value::Text(cpu_model_of(&run.machine)),
        Value::text(&run.profile),
        Value::text(to_json(&run.tags)?),
        Value::text(to_json(&run.machine)?),
        Value::text(to_json(&run.environment)?),
        Value::text(to_json(&run.options)?),
        Value::Int(writer.map(|w| i64::from(w.pid))),
        Value::Int(
            writer
                .and_then(|w| w.start_ticks)
                .and_then(|t| i64::try_from(t).ok()),
        ),
        Value::Text(writer.and_then(|w| w.boot_id.clone())),
        Value::Text(writer.and_then(|w| w.hostname.clone())),
        Value::Int(Some(stored_seq)),
        Value::Text(lock),
    ])
}

/// Insert one results row; parameters from [`result_params`].
pub const INSERT_RESULT: &str = "INSERT INTO results \
     (run_id, seq, experiment, key, metric, unit, value, doc) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// [`INSERT_RESULT`] without its one row of values: the rows follow, 8
/// parameters each, in [`result_params`]'s order.
pub const INSERT_RESULTS_HEAD: &str = "INSERT INTO results \
     (run_id, seq, experiment, key, metric, unit, value, doc) VALUES ";

/// The parameters of [`INSERT_RESULT`]: result `seq` of run `run_id`.
pub(crate) fn result_params(run_id: &str, seq: i64, rec: &ResultRecord) -> Result<Vec<Value>> {
    Ok(vec![
        Value::text(run_id),
        Value::Int(Some(seq)),
        Value::text(&rec.experiment),
        Value::text(&rec.key),
        Value::text(&rec.metric),
        Value::text(&rec.unit),
        Value::Real(rec.value),
        Value::text(to_json(rec)?),
    ])
}

/// A finish time must be RFC 3339 in UTC.
pub(crate) fn check_finished_at(run_id: &str, finished_at: &str) -> Result<()> {
    check_time(run_id, "finished_at", finished_at)
}

/// A time the run document holds (`what`) must be RFC 3339 in UTC, as
/// import checks it.
pub(crate) fn check_time(run_id: &str, what: &str, t: &str) -> Result<()> {
    let d = chrono::DateTime::parse_from_rfc3339(t)
        .map_err(|e| anyhow!("run {run_id}: {what} '{t}' is not RFC 3339: {e}"))?;
    if d.offset().local_minus_utc() != 0 {
        bail!("run {run_id}: {what} '{t}' is not in UTC");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_in_order_and_name_the_column() {
        let row = vec![
            Value::text("a"),
            Value::Text(None),
            Value::Int(Some(3)),
            Value::Text(None),
            Value::Real(Some(1.5)),
        ];
        let mut c = Cells::new("s", row);
        assert_eq!(c.text().unwrap(), "a");
        assert_eq!(c.opt_int().unwrap(), None); // a SQLite NULL
        assert_eq!(c.int().unwrap(), 3);
        let e = c.text().unwrap_err().to_string();
        assert_eq!(
            e,
            "store 's': column 4 of a stored row holds NULL, not text"
        );
        let e = c.opt_text().unwrap_err().to_string();
        assert!(e.contains("column 5") && e.contains("a real number"), "{e}");
        let e = c.int().unwrap_err().to_string();
        assert!(e.contains("has no column 6"), "{e}");
    }

    #[test]
    fn every_insert_parameter_is_given() {
        let run = Run::new(
            "h",
            "quick",
            serde_json::json!({}),
            Default::default(),
            serde_json::json!({}),
            vec![],
        );
        let me = Writer::current();
        let p = run_params(&run, RunStatus::Running, None, Some((&me, Some("ofd"))), 1).unwrap();
        assert_eq!(p.last(), Some(&Value::text("ofd")));
        assert_eq!(p.len(), INSERT_RUN.matches('?').count());
        assert_eq!(
            p.len(),
            INSERT_RUN
                .split(") VALUES")
                .next()
                .unwrap()
                .matches(',')
                .count()
                + 1
        );
        let rec = ResultRecord::new("memory", "stream", "GB/s", true);
        let p = result_params("r", 1, &rec).unwrap();
        assert_eq!(p.len(), INSERT_RESULT.matches('?').count());
    }

    fn raw(status: &str, pid: Option<i64>) -> RawRun {
        raw_with(status, pid, None, Writer::current().hostname)
    }

    fn raw_with(
        status: &str,
        pid: Option<i64>,
        lock: Option<&str>,
        host: Option<String>,
    ) -> RawRun {
        let me = Writer::current();
        let t = |s: &str| Value::text(s);
        RawRun::from_cells(vec![
            t("r"),
            t(crate::results::schema::RUN_SCHEMA),
            t("0"),
            t("2024-01-01T00:00:00Z"),
            Value::Text(None),
            t(status),
            t("h"),
            t("quick"),
            t("[]"),
            t("{}"),
            t(&to_json(&crate::results::schema::Environment::default()).unwrap()),
            t("{}"),
            Value::Int(pid),
            Value::Int(me.start_ticks.map(|t| t as i64)),
            Value::Text(me.boot_id.clone()),
            Value::Text(host),
            Value::Text(lock.map(str::to_string)),
        ])
    }

    /// No lock in the row: the process rule.
    fn untested(_: &str, _: &str) -> Held {
        panic!("a row without a writer lock has nothing to test")
    }

    fn state(r: &RawRun, held: Held) -> Option<WriterState> {
        r.writer_seen(|kind, id| {
            assert_eq!((kind, id), ("ofd", "r"));
            held
        })
        .map(|s| s.state)
    }

    #[test]
    fn writer_gone_rule() {
        let me = Writer::current();
        let live = raw("running", Some(i64::from(me.pid)));
        let seen = live.writer_seen(untested).unwrap();
        assert_eq!(seen.state, WriterState::Writing);
        assert_eq!(
            live.into_run("s", Some(&seen)).unwrap().status,
            RunStatus::Running
        );
        let gone = raw("running", Some(i64::from(u32::MAX - 1)));
        let seen = gone.writer_seen(untested).unwrap();
        assert_eq!(seen.state, WriterState::Gone);
        let s = raw("running", Some(i64::from(u32::MAX - 1)))
            .summary(None, 0, Some(&seen))
            .unwrap();
        assert!(s.interrupted && s.status == RunStatus::Partial);
        assert_eq!(s.status_text(), "partial (abandoned)");
        let run = gone.into_run("s", Some(&seen)).unwrap();
        assert_eq!(run.status, RunStatus::Partial);
        assert!(
            run.environment.notes[0]
                .starts_with("interrupted: the writing process (pid 4294967294")
                && run.environment.notes[0]
                    .contains(") ended before the run finished; the run is abandoned"),
            "{:?}",
            run.environment.notes
        );
        let unknown = raw("running", None);
        let seen = unknown.writer_seen(untested).unwrap();
        assert_eq!(
            unknown
                .into_run("s", Some(&seen))
                .unwrap()
                .environment
                .notes,
            [
                "interrupted: the writing process ended before the run finished; the run is \
              abandoned, kept as partial (it holds no writer lock (stored by an older \
              cpuscope), and no process is recorded)"
            ]
        );
        assert!(raw("complete", None).writer_seen(untested).is_none());
    }

    /// The lock decides wherever it can be tested, whatever the pid and
    /// host say; where it cannot, the process rule does.
    #[test]
    fn the_writer_lock_decides() {
        let me = Writer::current();
        let mine = Some(i64::from(me.pid));
        let other = Some("another-uts-namespace".to_string());
        // The old stranding: a writer under another host name, now gone.
        let r = raw_with("running", mine, Some("ofd"), other.clone());
        assert_eq!(state(&r, Held::No), Some(WriterState::Gone));
        assert_eq!(state(&r, Held::Yes), Some(WriterState::Writing));
        // A pid that is no process here (another PID namespace) but a held lock.
        let r = raw_with(
            "running",
            Some(i64::from(u32::MAX - 1)),
            Some("ofd"),
            me.hostname.clone(),
        );
        assert_eq!(state(&r, Held::Yes), Some(WriterState::Writing));
        // Untestable lock: the process rule.
        let r = raw_with("running", mine, Some("ofd"), other.clone());
        assert_eq!(
            state(&r, Held::Unknown("x".into())),
            Some(WriterState::Unknown)
        );
        let r = raw_with("running", mine, Some("ofd"), me.hostname.clone());
        assert_eq!(
            state(&r, Held::Unknown("x".into())),
            Some(WriterState::Writing)
        );
        // No lock (an older cpuscope) under another host name: unknown.
        let r = raw_with("running", mine, None, other);
        let seen = r.writer_seen(untested).unwrap();
        assert_eq!(seen.state, WriterState::Unknown);
        assert!(seen.why.contains("another host name"), "{}", seen.why);
        let s = r.summary(None, 0, Some(&seen)).unwrap();
        assert_eq!((s.status, s.interrupted), (RunStatus::Running, false));
        assert_eq!(s.status_text(), "running (writer unchecked)");
    }

    /// One damaged cell is named, in the listing and in the error of a
    /// command that needs the run; the writer rule still reads the row.
    #[test]
    fn damaged_cells_are_named() {
        let with = |i: usize, v: Value| {
            let mut r = raw("complete", None);
            r.cells[i] = v;
            r
        };
        let cases = [
            (8, Value::text("not json"), "tags: not JSON"),
            (
                8,
                Value::text("[1]"),
                "tags: not what cpuscope stores there",
            ),
            (8, Value::Text(None), "tags: NULL, not text"),
            (9, Value::text("{"), "machine: not JSON"),
            (
                10,
                Value::text("[]"),
                "environment: not what cpuscope stores",
            ),
            (11, Value::Int(Some(3)), "options: an integer, not text"),
            (5, Value::text("done"), "status: 'done' is unknown"),
            (0, Value::Int(Some(7)), "id: an integer, not text"),
        ];
        for (i, v, want) in cases {
            let d = with(i, v.clone()).summary(None, 0, None).unwrap_err();
            assert!(d.0.starts_with(want), "{} vs {want}", d.0);
            let e = with(i, v).into_run("s", None).unwrap_err().to_string();
            assert!(
                e.starts_with("run ")
                    && e.contains("in store 's' is damaged (")
                    && e.contains(want),
                "{e}"
            );
        }
        assert_eq!(
            Damage("tags: not JSON".into()).warning("s.db", "r1"),
            "run r1 in store 's.db' is damaged (tags: not JSON): skipped"
        );
        // A running row with damaged JSON still says whether its writer lives.
        let mut r = raw("running", Some(i64::from(u32::MAX - 1)));
        r.cells[8] = Value::text("x");
        assert_eq!(
            r.writer_seen(untested).map(|s| s.state),
            Some(WriterState::Gone)
        );
        let e = decode_result("s", "r1", 3, "{oops")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "run r1 in store 's' is damaged (result #3: not JSON)");
    }
}

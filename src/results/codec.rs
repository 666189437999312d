//! The row codec, for both backends: the `runs` and `results` columns ↔
//! `Run`, `ResultRecord` and `Environment` (tags, machine, environment,
//! options and each result are JSON text), the parameter lists of the two
//! INSERTs, and the writer-gone rule applied to a stored row.
//!
//! A backend only maps its driver's cells to [`Value`]s and back.

use super::schema::{cpu_model_of, ResultRecord, Run, RunStatus};
use super::store::{RunSummary, Writer};
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

    fn next(&mut self) -> Result<Value> {
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
     profile, tags, machine, environment, options, writer_pid, writer_start, writer_boot, writer_host";

/// A runs row before its JSON columns are parsed.
pub(crate) struct RawRun {
    pub(crate) id: String,
    pub(crate) schema: String,
    pub(crate) tool_version: String,
    pub(crate) started_at: String,
    pub(crate) finished_at: Option<String>,
    pub(crate) status: String,
    pub(crate) host: String,
    pub(crate) profile: String,
    pub(crate) tags: String,
    pub(crate) machine: String,
    pub(crate) environment: String,
    pub(crate) options: String,
    pub(crate) writer_pid: Option<i64>,
    pub(crate) writer_start: Option<i64>,
    pub(crate) writer_boot: Option<String>,
    pub(crate) writer_host: Option<String>,
}

impl RawRun {
    /// The next cells of `c`, as selected by [`RUN_COLUMNS`].
    pub(crate) fn read(c: &mut Cells<'_>) -> Result<RawRun> {
        Ok(RawRun {
            id: c.text()?,
            schema: c.text()?,
            tool_version: c.text()?,
            started_at: c.text()?,
            finished_at: c.opt_text()?,
            status: c.text()?,
            host: c.text()?,
            profile: c.text()?,
            tags: c.text()?,
            machine: c.text()?,
            environment: c.text()?,
            options: c.text()?,
            writer_pid: c.opt_int()?,
            writer_start: c.opt_int()?,
            writer_boot: c.opt_text()?,
            writer_host: c.opt_text()?,
        })
    }

    pub(crate) fn writer(&self) -> Option<Writer> {
        let pid = u32::try_from(self.writer_pid?).ok()?;
        Some(Writer {
            pid,
            start_ticks: self.writer_start.and_then(|t| u64::try_from(t).ok()),
            boot_id: self.writer_boot.clone(),
            hostname: self.writer_host.clone(),
        })
    }

    /// The writer-gone rule. For a run left `running`: Ok(writer) when its
    /// writer is still alive (the run is live), Err(writer) when the writer
    /// is gone or unknown (the run was interrupted: it reads as `partial`).
    /// None for a finished run.
    pub(crate) fn running_writer(&self) -> Option<std::result::Result<Writer, Option<Writer>>> {
        if self.status != RunStatus::Running.as_str() {
            return None;
        }
        Some(match self.writer() {
            Some(w) if w.is_alive() => Ok(w),
            w => Err(w),
        })
    }

    /// The stored run, without results, as it reads now: a run whose writer
    /// is gone comes back `partial` with a note saying so.
    pub(crate) fn into_run(self, shown: &str) -> Result<Run> {
        let gone = match self.running_writer() {
            Some(Err(w)) => Some(w),
            _ => None,
        };
        let id = self.id.clone();
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            anyhow!("store '{shown}': run {id}: stored {what} is damaged: {e}")
        };
        let mut run = Run {
            status: RunStatus::parse(&self.status).map_err(|e| bad("status", &e))?,
            tags: serde_json::from_str(&self.tags).map_err(|e| bad("tags", &e))?,
            machine: serde_json::from_str(&self.machine).map_err(|e| bad("machine", &e))?,
            environment: serde_json::from_str(&self.environment)
                .map_err(|e| bad("environment", &e))?,
            options: serde_json::from_str(&self.options).map_err(|e| bad("options", &e))?,
            schema: self.schema,
            id: self.id,
            tool_version: self.tool_version,
            started_at: self.started_at,
            finished_at: self.finished_at,
            host: self.host,
            profile: self.profile,
            results: Vec::new(),
        };
        if let Some(writer) = gone {
            run.status = RunStatus::Partial;
            let who = match writer {
                Some(w) => format!("the writing process (pid {})", w.pid),
                None => "the writing process".to_string(),
            };
            run.environment
                .notes
                .push(format!("interrupted: {who} ended before the run finished"));
        }
        Ok(run)
    }

    /// The `runs` listing line: a `running` run whose writer is gone is
    /// shown as partial (interrupted).
    pub(crate) fn summary(
        self,
        shown: &str,
        cpu_model: Option<String>,
        n: i64,
    ) -> Result<RunSummary> {
        let id = self.id.clone();
        let status = RunStatus::parse(&self.status)
            .map_err(|e| anyhow!("store '{shown}': run {id}: {e}"))?;
        let tags: Vec<String> = serde_json::from_str(&self.tags)
            .map_err(|e| anyhow!("store '{shown}': run {id}: stored tags are damaged: {e}"))?;
        let interrupted = matches!(self.running_writer(), Some(Err(_)));
        Ok(RunSummary {
            id,
            started_at: self.started_at,
            finished_at: self.finished_at,
            status: if interrupted {
                RunStatus::Partial
            } else {
                status
            },
            interrupted,
            host: self.host,
            cpu_model,
            profile: self.profile,
            tags,
            results: usize::try_from(n).unwrap_or(0),
        })
    }
}

/// One stored result, from its `doc` column.
pub(crate) fn decode_result(
    shown: &str,
    run_id: &str,
    seq: i64,
    doc: &str,
) -> Result<ResultRecord> {
    serde_json::from_str(doc)
        .map_err(|e| anyhow!("store '{shown}': run {run_id}: stored result #{seq} is damaged: {e}"))
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).context("cannot serialise to JSON")
}

/// Insert one runs row; parameters from [`run_params`].
pub const INSERT_RUN: &str =
    "INSERT INTO runs (id, schema, tool_version, started_at, finished_at, \
     status, host, cpu_model, profile, tags, machine, environment, options, writer_pid, \
     writer_start, writer_boot, writer_host) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";

/// The parameters of [`INSERT_RUN`]: `run`'s header with `status` and
/// `finished_at` as given, and the writer (None for an imported run).
pub(crate) fn run_params(
    run: &Run,
    status: RunStatus,
    finished_at: Option<&str>,
    writer: Option<&Writer>,
) -> Result<Vec<Value>> {
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
    ])
}

/// Insert one results row; parameters from [`result_params`].
pub const INSERT_RESULT: &str = "INSERT INTO results \
     (run_id, seq, experiment, key, metric, unit, value, doc) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

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
    let d = chrono::DateTime::parse_from_rfc3339(finished_at)
        .map_err(|e| anyhow!("run {run_id}: finished_at '{finished_at}' is not RFC 3339: {e}"))?;
    if d.offset().local_minus_utc() != 0 {
        bail!("run {run_id}: finished_at '{finished_at}' is not in UTC");
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
        let p = run_params(&run, RunStatus::Running, None, Some(&Writer::current())).unwrap();
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

    #[test]
    fn writer_gone_rule() {
        let me = Writer::current();
        let raw = |status: &str, pid: Option<i64>| RawRun {
            id: "r".into(),
            schema: crate::results::RUN_SCHEMA.into(),
            tool_version: "0".into(),
            started_at: "2024-01-01T00:00:00Z".into(),
            finished_at: None,
            status: status.into(),
            host: "h".into(),
            profile: "quick".into(),
            tags: "[]".into(),
            machine: "{}".into(),
            environment: to_json(&crate::results::Environment::default()).unwrap(),
            options: "{}".into(),
            writer_pid: pid,
            writer_start: me.start_ticks.map(|t| t as i64),
            writer_boot: me.boot_id.clone(),
            writer_host: me.hostname.clone(),
        };
        let live = raw("running", Some(i64::from(me.pid)));
        assert!(matches!(live.running_writer(), Some(Ok(_))));
        assert_eq!(live.into_run("s").unwrap().status, RunStatus::Running);
        let gone = raw("running", Some(i64::from(u32::MAX - 1)));
        let s = raw("running", Some(i64::from(u32::MAX - 1)))
            .summary("s", None, 0)
            .unwrap();
        assert!(s.interrupted && s.status == RunStatus::Partial);
        let run = gone.into_run("s").unwrap();
        assert_eq!(run.status, RunStatus::Partial);
        assert!(run.environment.notes[0].contains("(pid 4294967294) ended"));
        let unknown = raw("running", None).into_run("s").unwrap();
        assert_eq!(
            unknown.environment.notes,
            ["interrupted: the writing process ended before the run finished"]
        );
        assert!(raw("complete", None).running_writer().is_none());
    }
}

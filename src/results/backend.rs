//! The store's rules, written once over any SQL backend: what a write checks
//! and inserts, how `which` resolves (full id, unique prefix, `latest`: the
//! run stored last), how a run is read back (a damaged row is named, and
//! left out of listings with a warning) and when it may be deleted. A
//! backend (sqlite.rs, postgres.rs) gives a connection, its transactions and
//! its locking, the writer lock a run's writer holds while it writes (and
//! its test: src/results/liveness.rs), whether the store is still where its
//! name points, and maps its driver's cells to [`Value`]s ([`Backend`],
//! [`Sql`]); every type that is a `Backend` is a [`Store`].
//!
//! The SQL here is what both databases accept, with parameters written
//! `?1`, `?2`… (the PostgreSQL backend turns them into `$1`, `$2`…).

use super::codec::{self, Cells, Damage, RawRun, Value, WriterSeen, RUN_COLUMNS};
use super::liveness::Held;
use super::schema::{
    validate_record, validate_run, validate_run_header, Environment, ResultRecord, Run, RunStatus,
};
use super::store::{warn, RunSummary, Store, Writer, WriterState};
use anyhow::{anyhow, bail, Context as _, Result};

/// Statements on one connection, or inside one transaction. Errors are one
/// line and name the store.
pub trait Sql {
    /// The store's name for messages (a path, a URL without password).
    fn shown(&self) -> &str;

    /// Statements without parameters, separated by `;`.
    fn batch(&mut self, sql: &str) -> Result<()>;

    /// One statement; returns the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;

    /// One query; every row, each a cell per selected column.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>>;

    /// What a `SELECT` of one row ends with to keep that row locked until
    /// the transaction ends: "" outside a transaction, and where the
    /// transaction already holds a lock that covers it.
    fn row_lock(&self) -> &'static str;

    /// Whether a live process holds the writer lock of run `id`, of the
    /// kind its row names (`liveness::SQLITE_LOCK`, `PG_LOCK`): tested
    /// without taking it, whatever host or namespace the writer is in.
    fn writer_lock(&mut self, kind: &str, id: &str) -> Held;
}

/// A database that keeps runs: the part that differs between SQLite and
/// PostgreSQL.
pub trait Backend: Send {
    /// Human-readable location (a file path, a URL without password).
    fn shown(&self) -> String;

    /// Run `f` in one write transaction: committed when `f` succeeds, rolled
    /// back when it fails.
    fn write<T>(&mut self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T>;

    /// Run `f`'s statements as reads, each on its own.
    fn read<T>(&self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T>;

    /// Take the writer lock of run `id`, which this process then holds
    /// until [`Backend::unlock_writer`] or its end, however it ends (the
    /// kernel or the server drops it). Ok: the kind of lock, stored with
    /// the run for readers to test; Err: why none could be taken.
    fn lock_writer(&mut self, id: &str) -> std::result::Result<&'static str, String>;

    /// Let go of run `id`'s writer lock (the run is finished).
    fn unlock_writer(&mut self, id: &str);

    /// An error when the store this process opened is no longer the one
    /// its name points to (a SQLite file deleted, renamed or replaced):
    /// what was written is then not where anyone will look for it.
    /// Checked after every write.
    fn still_there(&mut self) -> Result<()>;
}

/// `done`, the outcome of a write, unless the store moved meanwhile: then
/// that is the error, whatever the write said (it explains a failed write,
/// and a write that succeeded went where nobody will look).
fn checked<B: Backend, T>(b: &mut B, done: Result<T>) -> Result<T> {
    b.still_there()?;
    done
}

/// How the writer of the run in `raw` is found (None: a finished run).
fn writer_seen(sql: &mut dyn Sql, raw: &RawRun) -> Option<WriterSeen> {
    raw.writer_seen(|kind, id| sql.writer_lock(kind, id))
}

/// The row `raw` as read (outside a write transaction) and how its writer
/// is found. A writer commits its run's final status before it lets go of
/// the lock, so a `running` row whose lock was found free may have been
/// finished between the read and the test: it is read again then, and
/// only a row still `running` is its gone writer's.
fn settled(sql: &mut dyn Sql, raw: RawRun) -> (RawRun, Option<WriterSeen>) {
    let seen = writer_seen(sql, &raw);
    if seen.as_ref().map(|s| s.state) != Some(WriterState::Gone) {
        return (raw, seen);
    }
    match load_run(sql, &raw.id) {
        Ok(again) => {
            let seen = writer_seen(sql, &again);
            (again, seen)
        }
        Err(_) => (raw, seen),
    }
}

/// True when the query answers at least one row.
fn any(sql: &mut dyn Sql, query: &str, params: &[Value]) -> Result<bool> {
    Ok(!sql.query(query, params)?.is_empty())
}

/// The status text of run `id` (locked until the transaction ends).
fn run_status(sql: &mut dyn Sql, id: &str) -> Result<Option<String>> {
    let q = format!("SELECT status FROM runs WHERE id = ?1{}", sql.row_lock());
    let rows = sql.query(&q, &[Value::text(id)])?;
    match rows.into_iter().next() {
        Some(row) => Ok(Some(Cells::new(sql.shown(), row).text()?)),
        None => Ok(None),
    }
}

/// The runs row of `id` (locked, in a write transaction), or why there is none.
fn load_run(sql: &mut dyn Sql, id: &str) -> Result<RawRun> {
    let q = format!(
        "SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1{}",
        sql.row_lock()
    );
    let rows = sql.query(&q, &[Value::text(id)])?;
    match rows.into_iter().next() {
        Some(row) => RawRun::read(&mut Cells::new(sql.shown(), row)),
        None => bail!("no run '{id}' in store '{}'", sql.shown()),
    }
}

fn load_results(sql: &mut dyn Sql, id: &str) -> Result<Vec<ResultRecord>> {
    let rows = sql.query(
        "SELECT seq, doc FROM results WHERE run_id = ?1 ORDER BY seq",
        &[Value::text(id)],
    )?;
    let shown = sql.shown();
    rows.into_iter()
        .map(|row| {
            let mut c = Cells::new(shown, row);
            let seq = c.int()?;
            let doc = c
                .text()
                .map_err(|_| Damage(format!("result #{seq}: not text")).error(shown, id))?;
            codec::decode_result(shown, id, seq, &doc)
        })
        .collect()
}

/// Full id of the run `which` names: the id itself, a unique prefix of one,
/// or `latest`: the run stored last (the highest `stored_seq`: the run most
/// recently begun by a writer or brought in by `import`, whatever start
/// time it claims; runs stored before layout 2 keep their start-time order).
fn resolve(sql: &mut dyn Sql, which: &str) -> Result<String> {
    if which.is_empty() {
        bail!("no run given");
    }
    let shown = sql.shown().to_string();
    let ids = |sql: &mut dyn Sql, q: &str, params: &[Value]| -> Result<Vec<String>> {
        let rows = sql.query(q, params)?;
        rows.into_iter()
            .map(|row| Cells::new(&shown, row).text())
            .collect()
    };
    if which == "latest" {
        let latest = ids(
            sql,
            "SELECT id FROM runs ORDER BY COALESCE(stored_seq, 0) DESC, id DESC LIMIT 1",
            &[],
        )?;
        return latest
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("store '{shown}' holds no runs yet"));
    }
    let w = [Value::text(which)];
    if any(sql, "SELECT 1 FROM runs WHERE id = ?1", &w)? {
        return Ok(which.to_string());
    }
    let ids = ids(
        sql,
        "SELECT id FROM runs WHERE substr(id, 1, length(CAST(?1 AS TEXT))) = CAST(?1 AS TEXT) \
         ORDER BY id LIMIT 6",
        &w,
    )?;
    match ids.len() {
        0 => bail!(
            "no run '{}' in store '{shown}' (see `cpuscope runs`)",
            which.escape_debug()
        ),
        1 => Ok(ids[0].clone()),
        n => {
            let more = if n > 5 { ", ..." } else { "" };
            bail!(
                "run '{which}' is ambiguous: it matches {}{more}",
                ids[..n.min(5)].join(", ")
            )
        }
    }
}

/// Insert `run` (header and results) with the status, finish time and
/// writer given (with the kind of writer lock it holds); refuses an id
/// already stored.
fn insert_run(
    sql: &mut dyn Sql,
    run: &Run,
    status: RunStatus,
    finished_at: Option<&str>,
    writer: Option<(&Writer, Option<&str>)>,
) -> Result<()> {
    if any(
        sql,
        "SELECT 1 FROM runs WHERE id = ?1",
        &[Value::text(&run.id)],
    )? {
        bail!("run {} is already in store '{}'", run.id, sql.shown());
    }
    // The write transaction holds the store's write lock (SQLite) or sees
    // every committed run (PostgreSQL, where two writers committing at the
    // same moment may share a number: `latest` then takes the higher id).
    let rows = sql.query("SELECT COALESCE(MAX(stored_seq), 0) + 1 FROM runs", &[])?;
    let seq = Cells::first(sql.shown(), rows).int()?;
    let params = codec::run_params(run, status, finished_at, writer, seq)?;
    sql.execute(codec::INSERT_RUN, &params)?;
    insert_results(sql, &run.id, &run.results)
}

/// Rows per `INSERT` of a whole run's results: 8 parameters each, far below
/// SQLite's oldest limit of 999 per statement (PostgreSQL's: 65,535).
const RESULT_ROWS_PER_INSERT: usize = 50;

/// The results of a run being stored whole (no result of it is stored
/// yet): numbered 1.. in order, a repeated key refused, many rows per
/// statement (a remote store pays a round trip per statement: one per row
/// made importing a fleet 5 runs/s over PostgreSQL, issue 38).
fn insert_results(sql: &mut dyn Sql, run_id: &str, results: &[ResultRecord]) -> Result<()> {
    let mut keys = std::collections::HashSet::new();
    if let Some(rec) = results.iter().find(|r| !keys.insert(r.key.as_str())) {
        bail!("run {run_id} already has a result with key '{}'", rec.key);
    }
    for (c, chunk) in results.chunks(RESULT_ROWS_PER_INSERT).enumerate() {
        let mut params = Vec::with_capacity(chunk.len() * 8);
        let mut rows = Vec::with_capacity(chunk.len());
        for (j, rec) in chunk.iter().enumerate() {
            let seq = (c * RESULT_ROWS_PER_INSERT + j + 1) as i64;
            let marks: Vec<String> = (1..=8).map(|k| format!("?{}", params.len() + k)).collect();
            rows.push(format!("({})", marks.join(", ")));
            params.extend(codec::result_params(run_id, seq, rec)?);
        }
        sql.execute(
            &format!("{}{}", codec::INSERT_RESULTS_HEAD, rows.join(", ")),
            &params,
        )?;
    }
    Ok(())
}

/// Append `rec` to run `run_id` as its next result; refuses a key it has.
fn insert_result(sql: &mut dyn Sql, run_id: &str, rec: &ResultRecord) -> Result<()> {
    let dup = any(
        sql,
        "SELECT 1 FROM results WHERE run_id = ?1 AND key = ?2",
        &[Value::text(run_id), Value::text(&rec.key)],
    )?;
    if dup {
        bail!("run {run_id} already has a result with key '{}'", rec.key);
    }
    let rows = sql.query(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM results WHERE run_id = ?1",
        &[Value::text(run_id)],
    )?;
    let seq = Cells::first(sql.shown(), rows).int()?;
    sql.execute(
        codec::INSERT_RESULT,
        &codec::result_params(run_id, seq, rec)?,
    )?;
    Ok(())
}

/// The summaries of the runs that `filter` (a `WHERE` clause over `runs`,
/// or "") keeps, with its `params`, in start order.
fn list_runs_where<B: Backend>(b: &B, filter: &str, params: &[Value]) -> Result<Vec<RunSummary>> {
    b.read(|sql| {
        let q = format!(
            "SELECT {RUN_COLUMNS}, cpu_model, \
             (SELECT COUNT(*) FROM results WHERE run_id = runs.id) \
             FROM runs {filter} ORDER BY started_at, id"
        );
        let rows = sql.query(&q, params)?;
        let shown = sql.shown().to_string();
        let shown = shown.as_str();
        let mut out = Vec::with_capacity(rows.len());
        // A damaged row is left out with a warning: the other runs list.
        for row in rows {
            let mut c = Cells::new(shown, row);
            let raw = RawRun::read(&mut c)?;
            let id = raw.id.clone();
            let cpu_model = c.opt_text().unwrap_or(None);
            let n = c.int()?;
            let (raw, seen) = settled(sql, raw);
            match raw.summary(cpu_model, n, seen.as_ref()) {
                Ok(s) => out.push(s),
                Err(d) => warn(&d.warning(shown, &id)),
            }
        }
        Ok(out)
    })
}

impl<B: Backend> Store for B {
    fn location(&self) -> String {
        self.shown()
    }

    fn begin_run(&mut self, run: &Run) -> Result<()> {
        validate_run_header(run)?;
        for r in &run.results {
            validate_record(r)?;
        }
        let writer = Writer::current();
        // The lock first: a reader that sees the row sees the lock held.
        let lock = match self.lock_writer(&run.id) {
            Ok(kind) => Some(kind),
            Err(why) => {
                warn(&format!(
                    "run {}: no writer lock ({why}); a reader on another host or in another \
                     namespace cannot tell whether this run is still being written",
                    run.id
                ));
                None
            }
        };
        let stored =
            self.write(|sql| insert_run(sql, run, RunStatus::Running, None, Some((&writer, lock))));
        if stored.is_err() && lock.is_some() {
            self.unlock_writer(&run.id);
        }
        checked(self, stored)
    }

    fn add_result(&mut self, run_id: &str, rec: &ResultRecord) -> Result<()> {
        validate_record(rec).with_context(|| format!("run {run_id}"))?;
        let done = self.write(|sql| {
            match run_status(sql, run_id)?.as_deref() {
                None => bail!("no run '{run_id}' in store '{}'", sql.shown()),
                Some("running") => {}
                Some(s) => {
                    bail!("run {run_id} is {s}: results can only be added to a running run")
                }
            }
            insert_result(sql, run_id, rec)
        });
        checked(self, done)
    }

    fn finish_run(
        &mut self,
        run_id: &str,
        status: RunStatus,
        finished_at: &str,
        environment: &Environment,
    ) -> Result<()> {
        if status == RunStatus::Running {
            bail!("run {run_id}: finish_run needs a final status, not running");
        }
        codec::check_finished_at(run_id, finished_at)?;
        // What import checks of the environment, so that every stored run
        // exports to a document that import takes.
        for l in [&environment.load_start, &environment.load_end]
            .into_iter()
            .flatten()
        {
            codec::check_time(run_id, "environment load time", &l.at)?;
        }
        let env = codec::to_json(environment)?;
        let done = self.write(|sql| {
            match run_status(sql, run_id)?.as_deref() {
                None => bail!("no run '{run_id}' in store '{}'", sql.shown()),
                Some("running") => {}
                Some(s) => bail!("run {run_id} is already {s}"),
            }
            sql.execute(
                "UPDATE runs SET status = ?2, finished_at = ?3, environment = ?4 WHERE id = ?1",
                &[
                    Value::text(run_id),
                    Value::text(status.as_str()),
                    Value::text(finished_at),
                    Value::text(env),
                ],
            )?;
            Ok(())
        });
        if done.is_ok() {
            self.unlock_writer(run_id);
        }
        checked(self, done)
    }

    fn put_runs(&mut self, runs: &[Run]) -> Result<()> {
        let mut ids = std::collections::BTreeSet::new();
        for run in runs {
            validate_run(run)?;
            if run.status == RunStatus::Running {
                bail!(
                    "run {} is still running; export it again once it has finished",
                    run.id
                );
            }
            if !ids.insert(run.id.as_str()) {
                bail!("run {} is given twice", run.id);
            }
        }
        let done = self.write(|sql| {
            for run in runs {
                insert_run(sql, run, run.status, run.finished_at.as_deref(), None)?;
            }
            Ok(())
        });
        checked(self, done)
    }

    fn list_runs(&self) -> Result<Vec<RunSummary>> {
        list_runs_where(self, "", &[])
    }

    fn list_runs_of(&self, hosts: &[String]) -> Result<Vec<RunSummary>> {
        if hosts.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (1..=hosts.len()).map(|i| format!("?{i}")).collect();
        let marks = marks.join(", ");
        let params: Vec<Value> = hosts.iter().map(Value::text).collect();
        list_runs_where(self, &format!("WHERE host IN ({marks})"), &params)
    }

    fn resolve(&self, which: &str) -> Result<String> {
        self.read(|sql| resolve(sql, which))
    }

    fn has_run(&self, id: &str) -> Result<bool> {
        self.read(|sql| any(sql, "SELECT 1 FROM runs WHERE id = ?1", &[Value::text(id)]))
    }

    fn get_run(&self, which: &str) -> Result<Run> {
        self.read(|sql| {
            let id = resolve(sql, which)?;
            let raw = load_run(sql, &id)?;
            let (raw, seen) = settled(sql, raw);
            let mut run = raw.into_run(sql.shown(), seen.as_ref())?;
            run.results = load_results(sql, &id)?;
            Ok(run)
        })
    }

    fn delete_run_with(&mut self, which: &str, force: bool) -> Result<String> {
        let id = self.resolve(which)?;
        let done = self.write(|sql| {
            let raw = load_run(sql, &id)?;
            if let Some(seen) = writer_seen(sql, &raw) {
                check_deletable(&id, &seen, force)?;
            }
            sql.execute("DELETE FROM runs WHERE id = ?1", &[Value::text(&id)])?;
            Ok(())
        });
        checked(self, done)?;
        Ok(id)
    }
}

/// Whether run `id`, stored as `running` with its writer found as `seen`,
/// may be deleted: not while its writer writes; with `force` only, when the
/// writer cannot be checked from here.
fn check_deletable(id: &str, seen: &WriterSeen, force: bool) -> Result<()> {
    let who = match &seen.writer {
        Some(w) => w.who(),
        None => "writer not recorded".into(),
    };
    match seen.state {
        WriterState::Gone => Ok(()),
        WriterState::Writing => bail!(
            "run {id} is still being written ({who}: {}); wait for it or stop it first",
            seen.why
        ),
        WriterState::Unknown if force => Ok(()),
        WriterState::Unknown => bail!(
            "run {id} may still be being written ({who}: {}); if that process has ended, \
             `cpuscope delete --force {id}` removes the run",
            seen.why
        ),
    }
}

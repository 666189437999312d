//! The SQLite store: one file, WAL mode (readers never block the writer),
//! a busy timeout (so concurrent `cpuscope run`s take turns instead of
//! failing), foreign keys, and versioned migrations recorded in
//! `schema_migrations`.

use super::schema::{
    cpu_model_of, validate_record, validate_run, validate_run_header, Environment, ResultRecord,
    Run, RunStatus,
};
use super::store::{RawRun, RunSummary, Store, Writer};
use anyhow::{anyhow, bail, Context as _, Result};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One step of the store's table layout. Steps are applied in order, each
/// in the same transaction as its `schema_migrations` row. Never edit a
/// released step: add a new one. The SQL sticks to what PostgreSQL also
/// accepts (TEXT, INTEGER, REAL, no SQLite-only column types).
pub struct Migration {
    pub version: u32,
    pub description: &'static str,
    pub sql: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    description: "runs and results",
    sql: "
CREATE TABLE runs (
    id           TEXT PRIMARY KEY,
    schema       TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    status       TEXT NOT NULL
                 CHECK (status IN ('running', 'complete', 'partial', 'failed')),
    host         TEXT NOT NULL,
    cpu_model    TEXT,
    profile      TEXT NOT NULL,
    tags         TEXT NOT NULL,
    machine      TEXT NOT NULL,
    environment  TEXT NOT NULL,
    options      TEXT NOT NULL,
    writer_pid   INTEGER,
    writer_start INTEGER,
    writer_boot  TEXT,
    writer_host  TEXT
);
CREATE INDEX runs_started_at ON runs (started_at, id);
CREATE TABLE results (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    experiment TEXT NOT NULL,
    key        TEXT NOT NULL,
    metric     TEXT NOT NULL,
    unit       TEXT NOT NULL,
    value      REAL,
    doc        TEXT NOT NULL,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, key)
);
CREATE INDEX results_key ON results (key);
",
}];

/// Version of the table layout this build writes.
pub const STORE_SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// SQLite `application_id` of a cpuscope store ("CPUS").
pub const APPLICATION_ID: i32 = 0x4350_5553;

/// How long a writer waits for another process's transaction to end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

/// A runs row as stored.
struct RunRow {
    run: Run,
    writer: Option<Writer>,
}

const RUN_COLUMNS: &str = "id, schema, tool_version, started_at, finished_at, status, host, \
     profile, tags, machine, environment, options, writer_pid, writer_start, writer_boot, writer_host";

impl SqliteStore {
    /// Open (creating if needed) the store at `path` and bring its tables
    /// up to date. Errors are one line and name the file.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        let shown = path.display().to_string();
        if path.is_dir() {
            bail!("store '{shown}' is a directory, not a SQLite file");
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                bail!(
                    "cannot open store '{shown}': directory '{}' does not exist",
                    dir.display()
                );
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(&shown, e))?;
        let mut s = SqliteStore {
            conn,
            path: path.to_path_buf(),
        };
        s.setup()?;
        Ok(s)
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    fn e(&self, e: rusqlite::Error) -> anyhow::Error {
        sql_err(&self.shown(), e)
    }

    fn setup(&mut self) -> Result<()> {
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.e(e))?;
        // The first read of the file: this is where a non-SQLite file shows.
        let app_id: i32 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(|e| self.e(e))?;
        if app_id != 0 && app_id != APPLICATION_ID {
            bail!(
                "store '{}' is a SQLite database of another application, not a cpuscope store",
                self.shown()
            );
        }
        self.conn
            .execute_batch("PRAGMA foreign_keys = ON")
            .map_err(|e| self.e(e))?;
        // WAL lets readers work while a run is being written. It can fail on
        // a read-only file or a filesystem without shared memory; the store
        // still works (with rollback journaling) then.
        let _ = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0));
        self.migrate()
    }

    /// The store's table-layout version: 0 for an empty database.
    fn schema_version(conn: &Connection) -> rusqlite::Result<Option<u32>> {
        let has_table: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations')",
            [],
            |r| r.get(0),
        )?;
        if has_table {
            let v: Option<u32> =
                conn.query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
                    r.get(0)
                })?;
            return Ok(Some(v.unwrap_or(0)));
        }
        let others: i64 = conn.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite%'",
            [],
            |r| r.get(0),
        )?;
        Ok(if others == 0 { Some(0) } else { None })
    }
}

/// Accept a layout version this build can use (equal or older).
fn check_version(shown: &str, v: Option<u32>) -> Result<u32> {
    const NEWEST: u32 = STORE_SCHEMA_VERSION;
    match v {
        None => bail!(
            "store '{shown}' is a SQLite database but not a cpuscope store \
             (it has other tables and no schema_migrations)"
        ),
        Some(v) if v > NEWEST => bail!(
            "store '{shown}' has layout version {v}, newer than this cpuscope \
             understands ({NEWEST}); upgrade cpuscope"
        ),
        Some(v) => Ok(v),
    }
}

impl SqliteStore {
    fn migrate(&mut self) -> Result<()> {
        let shown = self.shown();
        // Read outside a transaction, this can see another process's
        // migration half-way between its two queries (no schema_migrations
        // yet, then its tables): only a current or a newer store is decided
        // here; anything else is decided again under the write lock below.
        let v = Self::schema_version(&self.conn).map_err(|e| self.e(e))?;
        if let Some(v) = v {
            if check_version(&shown, Some(v))? == STORE_SCHEMA_VERSION {
                return Ok(());
            }
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&shown, e))?;
        // Another process may have migrated while we waited for the lock.
        let v = Self::schema_version(&tx).map_err(|e| sql_err(&shown, e))?;
        let have = check_version(&shown, v)?;
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version     INTEGER PRIMARY KEY,
                description TEXT NOT NULL,
                applied_at  TEXT NOT NULL
            )",
        )
        .map_err(|e| sql_err(&shown, e))?;
        for m in MIGRATIONS.iter().filter(|m| m.version > have) {
            tx.execute_batch(m.sql)
                .map_err(|e| sql_err(&shown, e))
                .with_context(|| format!("migration {} ({})", m.version, m.description))?;
            tx.execute(
                "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?1, ?2, ?3)",
                params![m.version, m.description, super::schema::now_rfc3339()],
            )
            .map_err(|e| sql_err(&shown, e))?;
        }
        tx.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {STORE_SCHEMA_VERSION};"
        ))
        .map_err(|e| sql_err(&shown, e))?;
        tx.commit().map_err(|e| sql_err(&shown, e))
    }

    fn load_row(&self, id: &str) -> Result<RunRow> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1");
        let raw = self
            .conn
            .query_row(&sql, [id], RawRun::from_sqlite_row)
            .optional()
            .map_err(|e| self.e(e))?;
        match raw {
            Some(r) => r.into_row(&self.shown()),
            None => bail!("no run '{id}' in store '{}'", self.shown()),
        }
    }

    fn load_results(&self, id: &str) -> Result<Vec<ResultRecord>> {
        let shown = self.shown();
        let mut st = self
            .conn
            .prepare("SELECT seq, doc FROM results WHERE run_id = ?1 ORDER BY seq")
            .map_err(|e| self.e(e))?;
        let rows = st
            .query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| sql_err(&shown, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, doc) = row.map_err(|e| sql_err(&shown, e))?;
            let rec: ResultRecord = serde_json::from_str(&doc).map_err(|e| {
                anyhow!("store '{shown}': run {id}: stored result #{seq} is damaged: {e}")
            })?;
            out.push(rec);
        }
        Ok(out)
    }

    /// Apply the "writer is gone" rule to a stored run.
    fn effective(run: &mut Run, writer: &Option<Writer>) -> bool {
        if run.status != RunStatus::Running {
            return false;
        }
        let alive = writer.as_ref().is_some_and(Writer::is_alive);
        if alive {
            return false;
        }
        run.status = RunStatus::Partial;
        let who = match writer {
            Some(w) => format!("the writing process (pid {})", w.pid),
            None => "the writing process".to_string(),
        };
        run.environment
            .notes
            .push(format!("interrupted: {who} ended before the run finished"));
        true
    }
}

/// Reading a runs row (the struct is shared: `store::RawRun`).
impl RawRun {
    fn from_sqlite_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRun> {
        Ok(RawRun {
            id: r.get(0)?,
            schema: r.get(1)?,
            tool_version: r.get(2)?,
            started_at: r.get(3)?,
            finished_at: r.get(4)?,
            status: r.get(5)?,
            host: r.get(6)?,
            profile: r.get(7)?,
            tags: r.get(8)?,
            machine: r.get(9)?,
            environment: r.get(10)?,
            options: r.get(11)?,
            writer_pid: r.get(12)?,
            writer_start: r.get(13)?,
            writer_boot: r.get(14)?,
            writer_host: r.get(15)?,
        })
    }

    fn into_row(self, shown: &str) -> Result<RunRow> {
        let id = self.id.clone();
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            anyhow!("store '{shown}': run {id}: stored {what} is damaged: {e}")
        };
        let writer = self.writer();
        let run = Run {
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
        Ok(RunRow { run, writer })
    }
}

fn sql_err(shown: &str, e: rusqlite::Error) -> anyhow::Error {
    let code = e.sqlite_error_code();
    let detail = e.to_string().replace('\n', " ");
    match code {
        Some(ErrorCode::NotADatabase) => anyhow!("store '{shown}' is not a SQLite database"),
        Some(ErrorCode::DatabaseCorrupt) => {
            anyhow!("store '{shown}' is damaged (SQLite: {detail})")
        }
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => anyhow!(
            "store '{shown}' stayed locked by another process for more than {} s",
            BUSY_TIMEOUT.as_secs()
        ),
        Some(ErrorCode::ReadOnly) => anyhow!("store '{shown}' is read-only ({detail})"),
        Some(ErrorCode::CannotOpen) => anyhow!("cannot open store '{shown}' ({detail})"),
        Some(ErrorCode::PermissionDenied) => {
            anyhow!("no permission to use store '{shown}' ({detail})")
        }
        _ => anyhow!("store '{shown}': {detail}"),
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).context("cannot serialise to JSON")
}

fn insert_run(
    tx: &rusqlite::Transaction<'_>,
    shown: &str,
    run: &Run,
    status: RunStatus,
    finished_at: Option<&str>,
    writer: Option<&Writer>,
) -> Result<()> {
    let exists: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)",
            [&run.id],
            |r| r.get(0),
        )
        .map_err(|e| sql_err(shown, e))?;
    if exists {
        bail!("run {} is already in store '{shown}'", run.id);
    }
    tx.execute(
        "INSERT INTO runs (id, schema, tool_version, started_at, finished_at, status, host, cpu_model, \
         profile, tags, machine, environment, options, writer_pid, writer_start, writer_boot, writer_host) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            run.id,
            run.schema,
            run.tool_version,
            run.started_at,
            finished_at,
            status.as_str(),
            run.host,
            cpu_model_of(&run.machine),
            run.profile,
            to_json(&run.tags)?,
            to_json(&run.machine)?,
            to_json(&run.environment)?,
            to_json(&run.options)?,
            writer.map(|w| i64::from(w.pid)),
            writer.and_then(|w| w.start_ticks).and_then(|t| i64::try_from(t).ok()),
            writer.and_then(|w| w.boot_id.clone()),
            writer.and_then(|w| w.hostname.clone()),
        ],
    )
    .map_err(|e| sql_err(shown, e))?;
    for rec in &run.results {
        insert_result(tx, shown, &run.id, rec)?;
    }
    Ok(())
}

fn insert_result(
    tx: &rusqlite::Transaction<'_>,
    shown: &str,
    run_id: &str,
    rec: &ResultRecord,
) -> Result<()> {
    let dup: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM results WHERE run_id = ?1 AND key = ?2)",
            params![run_id, rec.key],
            |r| r.get(0),
        )
        .map_err(|e| sql_err(shown, e))?;
    if dup {
        bail!("run {run_id} already has a result with key '{}'", rec.key);
    }
    let seq: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM results WHERE run_id = ?1",
            [run_id],
            |r| r.get(0),
        )
        .map_err(|e| sql_err(shown, e))?;
    tx.execute(
        "INSERT INTO results (run_id, seq, experiment, key, metric, unit, value, doc) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            run_id,
            seq,
            rec.experiment,
            rec.key,
            rec.metric,
            rec.unit,
            rec.value,
            to_json(rec)?
        ],
    )
    .map_err(|e| sql_err(shown, e))?;
    Ok(())
}

impl Store for SqliteStore {
    fn location(&self) -> String {
        self.shown()
    }

    fn begin_run(&mut self, run: &Run) -> Result<()> {
        validate_run_header(run)?;
        for r in &run.results {
            validate_record(r)?;
        }
        let shown = self.shown();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&shown, e))?;
        insert_run(
            &tx,
            &shown,
            run,
            RunStatus::Running,
            None,
            Some(&Writer::current()),
        )?;
        tx.commit().map_err(|e| sql_err(&shown, e))
    }

    fn add_result(&mut self, run_id: &str, rec: &ResultRecord) -> Result<()> {
        validate_record(rec).with_context(|| format!("run {run_id}"))?;
        let shown = self.shown();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&shown, e))?;
        let status: Option<String> = tx
            .query_row("SELECT status FROM runs WHERE id = ?1", [run_id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| sql_err(&shown, e))?;
        match status.as_deref() {
            None => bail!("no run '{run_id}' in store '{shown}'"),
            Some("running") => {}
            Some(s) => bail!("run {run_id} is {s}: results can only be added to a running run"),
        }
        insert_result(&tx, &shown, run_id, rec)?;
        tx.commit().map_err(|e| sql_err(&shown, e))
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
        let d = chrono::DateTime::parse_from_rfc3339(finished_at).map_err(|e| {
            anyhow!("run {run_id}: finished_at '{finished_at}' is not RFC 3339: {e}")
        })?;
        if d.offset().local_minus_utc() != 0 {
            bail!("run {run_id}: finished_at '{finished_at}' is not in UTC");
        }
        let shown = self.shown();
        let env = to_json(environment)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&shown, e))?;
        let cur: Option<String> = tx
            .query_row("SELECT status FROM runs WHERE id = ?1", [run_id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| sql_err(&shown, e))?;
        match cur.as_deref() {
            None => bail!("no run '{run_id}' in store '{shown}'"),
            Some("running") => {}
            Some(s) => bail!("run {run_id} is already {s}"),
        }
        tx.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3, environment = ?4 WHERE id = ?1",
            params![run_id, status.as_str(), finished_at, env],
        )
        .map_err(|e| sql_err(&shown, e))?;
        tx.commit().map_err(|e| sql_err(&shown, e))
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
        let shown = self.shown();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&shown, e))?;
        for run in runs {
            insert_run(
                &tx,
                &shown,
                run,
                run.status,
                run.finished_at.as_deref(),
                None,
            )?;
        }
        tx.commit().map_err(|e| sql_err(&shown, e))
    }

    fn list_runs(&self) -> Result<Vec<RunSummary>> {
        let shown = self.shown();
        let sql = format!(
            "SELECT {RUN_COLUMNS}, cpu_model, (SELECT COUNT(*) FROM results WHERE run_id = runs.id) \
             FROM runs ORDER BY started_at, id"
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| self.e(e))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    RawRun::from_sqlite_row(r)?,
                    r.get::<_, Option<String>>(16)?,
                    r.get::<_, i64>(17)?,
                ))
            })
            .map_err(|e| sql_err(&shown, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (raw, cpu_model, n) = row.map_err(|e| sql_err(&shown, e))?;
            out.push(raw.summary(&shown, cpu_model, n)?);
        }
        Ok(out)
    }

    fn resolve(&self, which: &str) -> Result<String> {
        let shown = self.shown();
        if which.is_empty() {
            bail!("no run given");
        }
        if which == "latest" {
            let id: Option<String> = self
                .conn
                .query_row(
                    "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.e(e))?;
            return id.ok_or_else(|| anyhow!("store '{shown}' holds no runs yet"));
        }
        let exact: bool = self
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)",
                [which],
                |r| r.get(0),
            )
            .map_err(|e| self.e(e))?;
        if exact {
            return Ok(which.to_string());
        }
        let mut st = self
            .conn
            .prepare("SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 6")
            .map_err(|e| self.e(e))?;
        let ids: Vec<String> = st
            .query_map([which], |r| r.get(0))
            .map_err(|e| sql_err(&shown, e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| sql_err(&shown, e))?;
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

    fn get_run(&self, which: &str) -> Result<Run> {
        let id = self.resolve(which)?;
        let RunRow { mut run, writer } = self.load_row(&id)?;
        run.results = self.load_results(&id)?;
        Self::effective(&mut run, &writer);
        Ok(run)
    }

    fn delete_run(&mut self, which: &str) -> Result<String> {
        let id = self.resolve(which)?;
        let shown = self.shown();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&shown, e))?;
        let row = tx
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                [&id],
                RawRun::from_sqlite_row,
            )
            .optional()
            .map_err(|e| sql_err(&shown, e))?;
        let Some(raw) = row else {
            bail!("no run '{id}' in store '{shown}'");
        };
        if raw.status == "running" {
            if let Some(w) = raw.writer().filter(Writer::is_alive) {
                bail!(
                    "run {id} is still being written by process {}; wait for it or stop it first",
                    w.pid
                );
            }
        }
        tx.execute("DELETE FROM runs WHERE id = ?1", [&id])
            .map_err(|e| sql_err(&shown, e))?;
        tx.commit().map_err(|e| sql_err(&shown, e))?;
        Ok(id)
    }
}

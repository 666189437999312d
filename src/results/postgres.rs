//! The PostgreSQL store (`--store postgres://user@host/db`): the fleet
//! store that many machines write to at once. Same tables, same columns and
//! the same migration list as the SQLite store (src/results/sqlite.rs
//! `MIGRATIONS`); the migration SQL is applied with PostgreSQL's 64-bit
//! column types (INTEGER → BIGINT, REAL → DOUBLE PRECISION) so that process
//! start times and figures keep their full range and precision.
//!
//! Concurrency: every write is one transaction; migrations take a
//! transaction-level advisory lock so that machines starting together do
//! not migrate twice; `add_result` locks its run row so that the sequence
//! numbers of one run never collide. Connections are plain TCP or a Unix
//! socket (no TLS in this build).

use super::schema::{
    cpu_model_of, validate_record, validate_run, validate_run_header, Environment, ResultRecord,
    Run, RunStatus,
};
use super::sqlite::{MIGRATIONS, STORE_SCHEMA_VERSION};
use super::store::{RawRun, RunSummary, Store, Writer};
use anyhow::{anyhow, bail, Context as _, Result};
use postgres::{Client, NoTls, Row, Transaction};
use std::cell::RefCell;
use std::time::Duration;

/// Advisory lock key taken while migrating ("CPUS").
const MIGRATION_LOCK: i64 = 0x4350_5553;

/// How long to wait for the server to accept a connection, unless the URL says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct PgStore {
    client: RefCell<Client>,
    /// The URL without its password.
    shown: String,
}

const RUN_COLUMNS: &str = "id, schema, tool_version, started_at, finished_at, status, host, \
     profile, tags, machine, environment, options, writer_pid, writer_start, writer_boot, writer_host";

/// True when a `--store` value names a PostgreSQL database.
pub fn is_postgres_url(spec: &str) -> bool {
    let lower = spec.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// A URL with any password removed (for messages and `location()`).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{user}@{host}")
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| !kv.to_ascii_lowercase().starts_with("password="))
                .collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// The migration SQL with PostgreSQL's 64-bit types: whole words `INTEGER`
/// become `BIGINT` and `REAL` becomes `DOUBLE PRECISION`; nothing else changes.
pub fn pg_dialect(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match word.as_str() {
            "INTEGER" => out.push_str("BIGINT"),
            "REAL" => out.push_str("DOUBLE PRECISION"),
            w => out.push_str(w),
        }
        word.clear();
    };
    for c in sql.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// One line from a PostgreSQL error.
fn pg_err(shown: &str, e: postgres::Error) -> anyhow::Error {
    if let Some(db) = e.as_db_error() {
        let mut s = db.message().to_string();
        if let Some(d) = db.detail() {
            s.push_str(&format!(" ({d})"));
        }
        return anyhow!(
            "store '{shown}': {} [{}]",
            s.replace('\n', " "),
            db.code().code()
        );
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(&e);
    while let Some(x) = src {
        let t = x.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = x.source();
    }
    anyhow!("store '{shown}': {}", s.replace('\n', " "))
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).context("cannot serialise to JSON")
}

/// Reading a runs row (the struct is shared: `store::RawRun`).
impl RawRun {
    fn from_pg_row(r: &Row) -> std::result::Result<RawRun, postgres::Error> {
        Ok(RawRun {
            id: r.try_get(0)?,
            schema: r.try_get(1)?,
            tool_version: r.try_get(2)?,
            started_at: r.try_get(3)?,
            finished_at: r.try_get(4)?,
            status: r.try_get(5)?,
            host: r.try_get(6)?,
            profile: r.try_get(7)?,
            tags: r.try_get(8)?,
            machine: r.try_get(9)?,
            environment: r.try_get(10)?,
            options: r.try_get(11)?,
            writer_pid: r.try_get(12)?,
            writer_start: r.try_get(13)?,
            writer_boot: r.try_get(14)?,
            writer_host: r.try_get(15)?,
        })
    }

    fn into_run(self, shown: &str) -> Result<(Run, Option<Writer>)> {
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
        Ok((run, writer))
    }
}

/// Apply the "writer is gone" rule (as the SQLite store does).
fn effective(run: &mut Run, writer: &Option<Writer>) {
    if run.status != RunStatus::Running || writer.as_ref().is_some_and(Writer::is_alive) {
        return;
    }
    run.status = RunStatus::Partial;
    let who = match writer {
        Some(w) => format!("the writing process (pid {})", w.pid),
        None => "the writing process".to_string(),
    };
    run.environment
        .notes
        .push(format!("interrupted: {who} ended before the run finished"));
}

fn insert_run(
    tx: &mut Transaction<'_>,
    shown: &str,
    run: &Run,
    status: RunStatus,
    finished_at: Option<&str>,
    writer: Option<&Writer>,
) -> Result<()> {
    let exists = tx
        .query_opt("SELECT 1 FROM runs WHERE id = $1", &[&run.id])
        .map_err(|e| pg_err(shown, e))?
        .is_some();
    if exists {
        bail!("run {} is already in store '{shown}'", run.id);
    }
    let cpu_model = cpu_model_of(&run.machine);
    let tags = to_json(&run.tags)?;
    let machine = to_json(&run.machine)?;
    let environment = to_json(&run.environment)?;
    let options = to_json(&run.options)?;
    let pid = writer.map(|w| i64::from(w.pid));
    let start = writer
        .and_then(|w| w.start_ticks)
        .and_then(|t| i64::try_from(t).ok());
    let boot = writer.and_then(|w| w.boot_id.clone());
    let whost = writer.and_then(|w| w.hostname.clone());
    tx.execute(
        "INSERT INTO runs (id, schema, tool_version, started_at, finished_at, status, host, cpu_model, \
         profile, tags, machine, environment, options, writer_pid, writer_start, writer_boot, writer_host) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        &[
            &run.id,
            &run.schema,
            &run.tool_version,
            &run.started_at,
            &finished_at,
            &status.as_str(),
            &run.host,
            &cpu_model,
            &run.profile,
            &tags,
            &machine,
            &environment,
            &options,
            &pid,
            &start,
            &boot,
            &whost,
        ],
    )
    .map_err(|e| pg_err(shown, e))?;
    for rec in &run.results {
        insert_result(tx, shown, &run.id, rec)?;
    }
    Ok(())
}

fn insert_result(
    tx: &mut Transaction<'_>,
    shown: &str,
    run_id: &str,
    rec: &ResultRecord,
) -> Result<()> {
    let dup = tx
        .query_opt(
            "SELECT 1 FROM results WHERE run_id = $1 AND key = $2",
            &[&run_id, &rec.key],
        )
        .map_err(|e| pg_err(shown, e))?
        .is_some();
    if dup {
        bail!("run {run_id} already has a result with key '{}'", rec.key);
    }
    let seq: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM results WHERE run_id = $1",
            &[&run_id],
        )
        .and_then(|r| r.try_get(0))
        .map_err(|e| pg_err(shown, e))?;
    let doc = to_json(rec)?;
    tx.execute(
        "INSERT INTO results (run_id, seq, experiment, key, metric, unit, value, doc) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &run_id,
            &seq,
            &rec.experiment,
            &rec.key,
            &rec.metric,
            &rec.unit,
            &rec.value,
            &doc,
        ],
    )
    .map_err(|e| pg_err(shown, e))?;
    Ok(())
}

impl PgStore {
    /// Connect to the database a `postgres://` URL names and bring its
    /// tables up to date. Errors are one line and never show the password.
    pub fn open(url: &str) -> Result<PgStore> {
        let shown = redact_url(url.trim());
        let mut cfg: postgres::Config = url
            .trim()
            .parse()
            .map_err(|e| anyhow!("store '{shown}' is not a valid PostgreSQL URL: {e}"))?;
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(CONNECT_TIMEOUT);
        }
        if cfg.get_application_name().is_none() {
            cfg.application_name("cpuscope");
        }
        let client = cfg.connect(NoTls).map_err(|e| pg_err(&shown, e))?;
        let s = PgStore {
            client: RefCell::new(client),
            shown,
        };
        s.migrate()?;
        Ok(s)
    }

    fn e(&self, e: postgres::Error) -> anyhow::Error {
        pg_err(&self.shown, e)
    }

    /// The layout version: 0 for a database without cpuscope tables; None
    /// when it has a `runs` table that is not ours (no schema_migrations).
    fn schema_version(
        tx: &mut Transaction<'_>,
    ) -> std::result::Result<Option<u32>, postgres::Error> {
        let has =
            |tx: &mut Transaction<'_>, t: &str| -> std::result::Result<bool, postgres::Error> {
                let r = tx.query_one("SELECT to_regclass($1::text) IS NOT NULL", &[&t])?;
                r.try_get(0)
            };
        if has(tx, "schema_migrations")? {
            let v: Option<i64> = tx
                .query_one("SELECT MAX(version)::BIGINT FROM schema_migrations", &[])?
                .try_get(0)?;
            return Ok(Some(v.and_then(|v| u32::try_from(v).ok()).unwrap_or(0)));
        }
        Ok(if has(tx, "runs")? { None } else { Some(0) })
    }

    fn migrate(&self) -> Result<()> {
        let shown = self.shown.clone();
        let mut c = self.client.borrow_mut();
        let mut tx = c.transaction().map_err(|e| pg_err(&shown, e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(|e| pg_err(&shown, e))?;
        let have = match Self::schema_version(&mut tx).map_err(|e| pg_err(&shown, e))? {
            None => bail!(
                "store '{shown}' has a 'runs' table that is not a cpuscope store's \
                 (no schema_migrations); use another database or schema"
            ),
            Some(v) if v > STORE_SCHEMA_VERSION => bail!(
                "store '{shown}' has layout version {v}, newer than this cpuscope \
                 understands ({STORE_SCHEMA_VERSION}); upgrade cpuscope"
            ),
            Some(v) => v,
        };
        if have == STORE_SCHEMA_VERSION {
            return tx.commit().map_err(|e| pg_err(&shown, e));
        }
        tx.batch_execute(&pg_dialect(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version     INTEGER PRIMARY KEY,
                description TEXT NOT NULL,
                applied_at  TEXT NOT NULL
            )",
        ))
        .map_err(|e| pg_err(&shown, e))?;
        for m in MIGRATIONS.iter().filter(|m| m.version > have) {
            tx.batch_execute(&pg_dialect(m.sql))
                .map_err(|e| pg_err(&shown, e))
                .with_context(|| format!("migration {} ({})", m.version, m.description))?;
            tx.execute(
                "INSERT INTO schema_migrations (version, description, applied_at) VALUES ($1, $2, $3)",
                &[
                    &i64::from(m.version),
                    &m.description,
                    &super::schema::now_rfc3339(),
                ],
            )
            .map_err(|e| pg_err(&shown, e))?;
        }
        tx.commit().map_err(|e| pg_err(&shown, e))
    }

    fn load_results(&self, id: &str) -> Result<Vec<ResultRecord>> {
        let rows = self
            .client
            .borrow_mut()
            .query(
                "SELECT seq, doc FROM results WHERE run_id = $1 ORDER BY seq",
                &[&id],
            )
            .map_err(|e| self.e(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let seq: i64 = r.try_get(0).map_err(|e| self.e(e))?;
            let doc: String = r.try_get(1).map_err(|e| self.e(e))?;
            let rec: ResultRecord = serde_json::from_str(&doc).map_err(|e| {
                anyhow!(
                    "store '{}': run {id}: stored result #{seq} is damaged: {e}",
                    self.shown
                )
            })?;
            out.push(rec);
        }
        Ok(out)
    }
}

impl Store for PgStore {
    fn location(&self) -> String {
        self.shown.clone()
    }

    fn begin_run(&mut self, run: &Run) -> Result<()> {
        validate_run_header(run)?;
        for r in &run.results {
            validate_record(r)?;
        }
        let shown = self.shown.clone();
        let mut c = self.client.borrow_mut();
        let mut tx = c.transaction().map_err(|e| pg_err(&shown, e))?;
        insert_run(
            &mut tx,
            &shown,
            run,
            RunStatus::Running,
            None,
            Some(&Writer::current()),
        )?;
        tx.commit().map_err(|e| pg_err(&shown, e))
    }

    fn add_result(&mut self, run_id: &str, rec: &ResultRecord) -> Result<()> {
        validate_record(rec).with_context(|| format!("run {run_id}"))?;
        let shown = self.shown.clone();
        let mut c = self.client.borrow_mut();
        let mut tx = c.transaction().map_err(|e| pg_err(&shown, e))?;
        let status: Option<String> = tx
            .query_opt(
                "SELECT status FROM runs WHERE id = $1 FOR UPDATE",
                &[&run_id],
            )
            .map_err(|e| pg_err(&shown, e))?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(|e| pg_err(&shown, e))?;
        match status.as_deref() {
            None => bail!("no run '{run_id}' in store '{shown}'"),
            Some("running") => {}
            Some(s) => bail!("run {run_id} is {s}: results can only be added to a running run"),
        }
        insert_result(&mut tx, &shown, run_id, rec)?;
        tx.commit().map_err(|e| pg_err(&shown, e))
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
        let env = to_json(environment)?;
        let shown = self.shown.clone();
        let mut c = self.client.borrow_mut();
        let mut tx = c.transaction().map_err(|e| pg_err(&shown, e))?;
        let cur: Option<String> = tx
            .query_opt(
                "SELECT status FROM runs WHERE id = $1 FOR UPDATE",
                &[&run_id],
            )
            .map_err(|e| pg_err(&shown, e))?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(|e| pg_err(&shown, e))?;
        match cur.as_deref() {
            None => bail!("no run '{run_id}' in store '{shown}'"),
            Some("running") => {}
            Some(s) => bail!("run {run_id} is already {s}"),
        }
        tx.execute(
            "UPDATE runs SET status = $2, finished_at = $3, environment = $4 WHERE id = $1",
            &[&run_id, &status.as_str(), &finished_at, &env],
        )
        .map_err(|e| pg_err(&shown, e))?;
        tx.commit().map_err(|e| pg_err(&shown, e))
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
        let shown = self.shown.clone();
        let mut c = self.client.borrow_mut();
        let mut tx = c.transaction().map_err(|e| pg_err(&shown, e))?;
        for run in runs {
            insert_run(
                &mut tx,
                &shown,
                run,
                run.status,
                run.finished_at.as_deref(),
                None,
            )?;
        }
        tx.commit().map_err(|e| pg_err(&shown, e))
    }

    fn list_runs(&self) -> Result<Vec<RunSummary>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS}, cpu_model, \
             (SELECT COUNT(*) FROM results WHERE run_id = runs.id)::BIGINT \
             FROM runs ORDER BY started_at, id"
        );
        let rows = self
            .client
            .borrow_mut()
            .query(sql.as_str(), &[])
            .map_err(|e| self.e(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let raw = RawRun::from_pg_row(&r).map_err(|e| self.e(e))?;
            let cpu_model: Option<String> = r.try_get(16).map_err(|e| self.e(e))?;
            let n: i64 = r.try_get(17).map_err(|e| self.e(e))?;
            out.push(raw.summary(&self.shown, cpu_model, n)?);
        }
        Ok(out)
    }

    fn resolve(&self, which: &str) -> Result<String> {
        let shown = &self.shown;
        if which.is_empty() {
            bail!("no run given");
        }
        let mut c = self.client.borrow_mut();
        if which == "latest" {
            let id: Option<String> = c
                .query_opt(
                    "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1",
                    &[],
                )
                .map_err(|e| pg_err(shown, e))?
                .map(|r| r.try_get(0))
                .transpose()
                .map_err(|e| pg_err(shown, e))?;
            return id.ok_or_else(|| anyhow!("store '{shown}' holds no runs yet"));
        }
        let exact = c
            .query_opt("SELECT 1 FROM runs WHERE id = $1::text", &[&which])
            .map_err(|e| pg_err(shown, e))?
            .is_some();
        if exact {
            return Ok(which.to_string());
        }
        let ids: Vec<String> = c
            .query(
                "SELECT id FROM runs WHERE substr(id, 1, length($1::text)) = $1::text ORDER BY id LIMIT 6",
                &[&which],
            )
            .map_err(|e| pg_err(shown, e))?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| pg_err(shown, e))?;
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
        let row = self
            .client
            .borrow_mut()
            .query_opt(
                format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1").as_str(),
                &[&id],
            )
            .map_err(|e| self.e(e))?;
        let Some(row) = row else {
            bail!("no run '{id}' in store '{}'", self.shown);
        };
        let raw = RawRun::from_pg_row(&row).map_err(|e| self.e(e))?;
        let (mut run, writer) = raw.into_run(&self.shown)?;
        run.results = self.load_results(&id)?;
        effective(&mut run, &writer);
        Ok(run)
    }

    fn delete_run(&mut self, which: &str) -> Result<String> {
        let id = self.resolve(which)?;
        let shown = self.shown.clone();
        let mut c = self.client.borrow_mut();
        let mut tx = c.transaction().map_err(|e| pg_err(&shown, e))?;
        let row = tx
            .query_opt(
                format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1 FOR UPDATE").as_str(),
                &[&id],
            )
            .map_err(|e| pg_err(&shown, e))?;
        let Some(row) = row else {
            bail!("no run '{id}' in store '{shown}'");
        };
        let raw = RawRun::from_pg_row(&row).map_err(|e| pg_err(&shown, e))?;
        if raw.status == "running" {
            if let Some(w) = raw.writer().filter(Writer::is_alive) {
                bail!(
                    "run {id} is still being written by process {}; wait for it or stop it first",
                    w.pid
                );
            }
        }
        tx.execute("DELETE FROM runs WHERE id = $1", &[&id])
            .map_err(|e| pg_err(&shown, e))?;
        tx.commit().map_err(|e| pg_err(&shown, e))?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialect_changes_only_types() {
        let s = pg_dialect("a INTEGER, b REAL, c TEXT, INTEGERS x, real_y REAL);");
        assert_eq!(
            s,
            "a BIGINT, b DOUBLE PRECISION, c TEXT, INTEGERS x, real_y DOUBLE PRECISION);"
        );
        for m in MIGRATIONS {
            let p = pg_dialect(m.sql);
            assert!(!p.contains(" INTEGER") && !p.contains(" REAL"), "{p}");
        }
    }

    #[test]
    fn urls() {
        assert!(is_postgres_url("postgres://u@h/db"));
        assert!(is_postgres_url("PostgreSQL://h/db"));
        assert!(!is_postgres_url("/tmp/x.db"));
        assert_eq!(
            redact_url("postgres://u:secret@h:5432/db?sslmode=disable&password=x"),
            "postgres://u@h:5432/db?sslmode=disable"
        );
        assert_eq!(redact_url("postgres://h/db"), "postgres://h/db");
        assert_eq!(
            redact_url("postgresql://u:p@%2Ftmp:5/db"),
            "postgresql://u@%2Ftmp:5/db"
        );
    }

    #[test]
    fn bad_url_is_one_line() {
        let e = match PgStore::open("postgres://u:pw@h:notaport/db") {
            Err(e) => format!("{e:#}"),
            Ok(_) => panic!("opened a bad URL"),
        };
        assert!(!e.contains('\n') && !e.contains("pw"), "{e}");
    }
}

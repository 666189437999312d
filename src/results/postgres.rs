//! The PostgreSQL store (`--store postgres://user@host/db`): the fleet
//! store that many machines write to at once. Same tables, same columns and
//! the same migration list as the SQLite store (src/results/migrations.rs);
//! the migration SQL is applied with PostgreSQL's 64-bit column types
//! (INTEGER → BIGINT, REAL → DOUBLE PRECISION, `pg_dialect`) so that process
//! start times and figures keep their full range and precision. The store's
//! rules are backend.rs's; this file connects, runs transactions, locks,
//! and maps PostgreSQL's cells to `codec::Value`s.
//!
//! Concurrency: every write is one transaction; migrations take a
//! transaction-level advisory lock so that machines starting together do
//! not migrate twice; a write locks the run row it reads (`FOR UPDATE`) so
//! that the sequence numbers of one run never collide. A run's writer holds
//! a session advisory lock on the run (`pg_advisory_lock_shared`, keys
//! `liveness::pg_keys`) for as long as its connection lives: the server
//! drops it when the writer ends, however and wherever it ran; readers look
//! for it in `pg_locks`. The writer's connection asks the server for TCP
//! keepalives (60 s idle, then 6 probes 10 s apart), so that a writer whose
//! machine vanished lets go of its lock within about two minutes.
//! Connections are plain TCP or a Unix socket (no TLS in this build).
//!
//! Every wait on the server is bounded and hears a stop request
//! (docs/reliability.md): the store drives tokio-postgres on its own
//! current-thread runtime, and each wait ([`Waiter::wait`]) races the
//! driver's future against a deadline and a 100 ms poll of the process's
//! stop flag (src/base/stop.rs). Connecting (TCP, startup and
//! authentication together) is bounded by the URL's `connect_timeout`
//! (libpq: seconds, per host; 0 or absent: 10 s); each statement by the
//! `statement_timeout` of the URL's `options` (`-c statement_timeout=30s`),
//! else 10 s, measured here, since a server that stopped answering cannot
//! enforce its own. After a stop request the waits still running, or still
//! to come, get [`STOP_GRACE`] more: enough for a live server to take what
//! a stopped run writes last (its partial status), short enough that the
//! command ends within a second when the server is gone. A wait given up
//! closes the connection (after a cancel request, so that a live server
//! drops the statement and its locks); the server rolls the open
//! transaction back, and the store's later calls fail at once.

use super::backend::{Backend, Sql};
use super::codec::{Cells, Value};
use super::liveness::{pg_keys, Held, PG_LOCK};
use super::migrations::{self, STORE_SCHEMA_VERSION};
use crate::base::stop;
use anyhow::{anyhow, Result};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Row};

/// Advisory lock key taken while migrating ("CPUS").
const MIGRATION_LOCK: i64 = 0x4350_5553;

/// How long to wait for a connection (TCP, startup, authentication), per
/// host, unless the URL's `connect_timeout` says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long to wait for the answer to one statement, unless the URL's
/// `options` set `statement_timeout`.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a wait looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);

/// How long waits go on after a stop request was first seen.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// How long a cancel request may take after a wait was given up.
const CANCEL_WAIT: Duration = Duration::from_millis(300);

/// How long closing a healthy connection (Terminate) may take.
const CLOSE_WAIT: Duration = Duration::from_millis(200);

pub struct PgStore {
    w: Waiter,
    conn: RefCell<Conn>,
}

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
fn pg_err(shown: &str, e: tokio_postgres::Error) -> anyhow::Error {
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

/// The neutral SQL's parameters `?1`, `?2`… as PostgreSQL writes them
/// (`$1`, `$2`…). The store's SQL has no `?` anywhere else (values are
/// always parameters, never literals).
pub fn pg_params(sql: &str) -> String {
    sql.replace('?', "$")
}

/// A parameter as PostgreSQL binds it (a NULL keeps its type).
fn bind(v: &Value) -> &(dyn ToSql + Sync) {
    match v {
        Value::Text(s) => s,
        Value::Int(n) => n,
        Value::Real(x) => x,
    }
}

/// Cell `i` of a row, by its column's type: integers and booleans as
/// integers, floats as reals, anything else read as text (a type without a
/// text reading fails with the driver's message).
fn cell(r: &Row, i: usize) -> Result<Value, tokio_postgres::Error> {
    let ty = r.columns()[i].type_();
    Ok(if *ty == Type::INT8 {
        Value::Int(r.try_get(i)?)
    } else if *ty == Type::INT4 {
        Value::Int(r.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if *ty == Type::INT2 {
        Value::Int(r.try_get::<_, Option<i16>>(i)?.map(i64::from))
    } else if *ty == Type::BOOL {
        Value::Int(r.try_get::<_, Option<bool>>(i)?.map(i64::from))
    } else if *ty == Type::FLOAT8 {
        Value::Real(r.try_get(i)?)
    } else if *ty == Type::FLOAT4 {
        Value::Real(r.try_get::<_, Option<f32>>(i)?.map(f64::from))
    } else {
        Value::Text(r.try_get(i)?)
    })
}

/// A duration as messages write it: `10 s`, `2.5 s`.
fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// A PostgreSQL time setting (`30s`, `1500`, `2min`; no unit: ms).
fn pg_duration(v: &str) -> Option<Duration> {
    let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: f64 = num.parse().ok()?;
    let ms = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1e3,
        "min" => 60e3,
        "h" => 3600e3,
        "d" => 86400e3,
        _ => return None,
    };
    Duration::try_from_secs_f64(n * ms / 1e3).ok()
}

/// The `statement_timeout` that libpq `options` set (`-c statement_timeout=30s`,
/// `-cstatement_timeout=30s`, `--statement-timeout=30s`), when over zero.
fn statement_timeout_in(options: &str) -> Option<Duration> {
    let mut words = options.split_whitespace();
    let mut found = None;
    while let Some(w) = words.next() {
        let setting = if w == "-c" {
            words.next().unwrap_or("")
        } else if let Some(s) = w.strip_prefix("--") {
            s
        } else if let Some(s) = w.strip_prefix("-c") {
            s
        } else {
            continue;
        };
        if let Some((k, v)) = setting.split_once('=') {
            if k.replace('-', "_")
                .eq_ignore_ascii_case("statement_timeout")
            {
                found = pg_duration(v); // the last one wins, as on the server
            }
        }
    }
    found.filter(|d| !d.is_zero())
}

/// The time limits of a connection: (connect, statement). Connecting is
/// bounded by `connect_timeout` per host (libpq), all hosts together here.
fn limits(cfg: &Config) -> (Duration, Duration) {
    let per_host = cfg
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT);
    let hosts = cfg.get_hosts().len().max(cfg.get_hostaddrs().len()).max(1);
    let connect = per_host.saturating_mul(u32::try_from(hosts).unwrap_or(u32::MAX));
    let statement = cfg
        .get_options()
        .and_then(statement_timeout_in)
        .unwrap_or(STATEMENT_TIMEOUT);
    (connect, statement)
}

/// What a wait is waiting for (for its message).
#[derive(Clone, Copy)]
enum Phase {
    Connecting,
    Answer,
}

/// Why a wait ended without the server's answer.
enum GaveUp {
    Timeout(Duration),
    Stopped,
}

impl GaveUp {
    /// The reason, after `store '…': `.
    fn reason(&self, phase: Phase) -> String {
        match (self, phase) {
            (GaveUp::Timeout(d), Phase::Connecting) => format!(
                "no answer from the server within {} while connecting (connect_timeout)",
                secs(*d)
            ),
            (GaveUp::Timeout(d), Phase::Answer) => format!(
                "no answer from the server within {} while waiting for an answer \
                 (statement timeout)",
                secs(*d)
            ),
            (GaveUp::Stopped, Phase::Connecting) => {
                "interrupted while connecting to the server".into()
            }
            (GaveUp::Stopped, Phase::Answer) => "interrupted while waiting for the server".into(),
        }
    }
}

/// The runtime that drives the connection, and the rules of every wait.
struct Waiter {
    /// Current-thread: the connection makes progress only while a wait runs.
    rt: Option<Runtime>,
    /// The URL without its password.
    shown: String,
    statement: Duration,
    /// When this store first saw the stop flag set.
    stop_seen: Cell<Option<Instant>>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Never wait for a blocking task (a host name lookup) at the end.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl Waiter {
    /// Run `fut` to its end on the runtime (the callers bound it).
    fn run<F: Future>(&self, fut: F) -> F::Output {
        match &self.rt {
            Some(rt) => rt.block_on(fut),
            None => unreachable!("the runtime lives as long as the store"),
        }
    }

    /// Drive `fut` (the connection) whenever a wait runs.
    fn spawn<F: Future<Output = ()> + Send + 'static>(&self, fut: F) -> JoinHandle<()> {
        match &self.rt {
            Some(rt) => rt.spawn(fut),
            None => unreachable!("the runtime lives as long as the store"),
        }
    }

    /// `fut`'s output, unless `limit` passes first, or a stop request
    /// (polled every [`STOP_POLL`]) is [`STOP_GRACE`] old.
    fn wait<F: Future>(&self, limit: Duration, fut: F) -> Result<F::Output, GaveUp> {
        let start = Instant::now();
        let deadline = start
            .checked_add(limit)
            .unwrap_or(start + Duration::from_secs(365 * 86400));
        let stop_seen = &self.stop_seen;
        self.run(async {
            let mut fut = pin!(fut);
            let mut tick = pin!(tokio::time::sleep(Duration::ZERO));
            std::future::poll_fn(|cx| {
                if let Poll::Ready(out) = fut.as_mut().poll(cx) {
                    return Poll::Ready(Ok(out));
                }
                loop {
                    let now = Instant::now();
                    if stop_seen.get().is_none() && stop::requested() {
                        stop_seen.set(Some(now));
                    }
                    let (until, why) = match stop_seen.get().map(|t| t + STOP_GRACE) {
                        Some(t) if t < deadline => (t, GaveUp::Stopped),
                        _ => (deadline, GaveUp::Timeout(limit)),
                    };
                    if now >= until {
                        return Poll::Ready(Err(why));
                    }
                    let next = (now + STOP_POLL).min(until);
                    tick.as_mut().reset(tokio::time::Instant::from_std(next));
                    if tick.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                }
            })
            .await
        })
    }

    /// Run `fut` for at most `limit`, stop request or not (cleanup).
    fn briefly<F: Future>(&self, limit: Duration, fut: F) -> Option<F::Output> {
        self.run(async { tokio::time::timeout(limit, fut).await.ok() })
    }
}

/// The connection, or why it was closed.
struct Conn {
    client: Option<Client>,
    /// The task that drives the connection's socket.
    task: Option<JoinHandle<()>>,
    /// Why the connection was closed (a wait given up).
    lost: Option<String>,
}

impl Conn {
    fn client(&self, shown: &str) -> Result<&Client> {
        self.client.as_ref().ok_or_else(|| {
            anyhow!(
                "store '{shown}': the connection was closed after an earlier error ({})",
                self.lost.as_deref().unwrap_or("closed")
            )
        })
    }

    /// Close after a wait given up: ask the server to cancel what it may
    /// still run (so that it lets go of its locks), then drop the socket;
    /// the server rolls back an open transaction.
    fn close(&mut self, w: &Waiter, why: String) {
        if let Some(client) = self.client.take() {
            let token = client.cancel_token();
            drop(client);
            w.briefly(CANCEL_WAIT, token.cancel_query(NoTls));
        }
        if let Some(task) = self.task.take() {
            task.abort();
            w.briefly(CLOSE_WAIT, task);
        }
        self.lost = Some(why);
    }
}

/// Statements on the connection, in a transaction or not.
struct Pg<'a> {
    w: &'a Waiter,
    conn: &'a mut Conn,
    /// In a write transaction (rows read for update are locked).
    in_tx: bool,
}

impl Pg<'_> {
    /// The answer of a wait, or its one-line error; a wait given up closes
    /// the connection.
    fn settle<T>(&mut self, r: Result<Result<T, tokio_postgres::Error>, GaveUp>) -> Result<T> {
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(pg_err(&self.w.shown, e)),
            Err(why) => {
                let reason = why.reason(Phase::Answer);
                self.conn.close(self.w, reason.clone());
                Err(anyhow!("store '{}': {reason}", self.w.shown))
            }
        }
    }

    /// End the transaction after an error: roll back (errors ignored: the
    /// one that made us roll back is the one to report). A closed
    /// connection has nothing to roll back here; the server does it.
    fn rollback(&mut self) {
        if self.conn.client.is_some() {
            let _ = self.batch("ROLLBACK");
        }
    }
}

impl Sql for Pg<'_> {
    fn shown(&self) -> &str {
        &self.w.shown
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        let client = self.conn.client(&self.w.shown)?;
        let r = self.w.wait(self.w.statement, client.batch_execute(sql));
        self.settle(r)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let params: Vec<_> = params.iter().map(bind).collect();
        let sql = pg_params(sql);
        let client = self.conn.client(&self.w.shown)?;
        let r = self
            .w
            .wait(self.w.statement, client.execute(sql.as_str(), &params));
        self.settle(r)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let params: Vec<_> = params.iter().map(bind).collect();
        let sql = pg_params(sql);
        let client = self.conn.client(&self.w.shown)?;
        let r = self
            .w
            .wait(self.w.statement, client.query(sql.as_str(), &params));
        let rows = self.settle(r)?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| cell(r, i)).collect())
            .collect::<Result<_, _>>()
            .map_err(|e| pg_err(&self.w.shown, e))
    }

    fn row_lock(&self) -> &'static str {
        if self.in_tx {
            " FOR UPDATE"
        } else {
            ""
        }
    }

    /// Whether any session of this database holds run `id`'s advisory
    /// lock (`pg_locks`, which every user may read; nothing is taken).
    fn writer_lock(&mut self, kind: &str, id: &str) -> Held {
        if kind != PG_LOCK {
            return Held::Unknown(format!("a writer lock of an unknown kind ('{kind}')"));
        }
        let (class, key) = pg_keys(id);
        let rows = self.query(
            "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             AND CAST(classid AS BIGINT) = ?1 AND CAST(objid AS BIGINT) = ?2 AND objsubid = 2",
            &[Value::Int(Some(class)), Value::Int(Some(key))],
        );
        match rows.and_then(|rows| Cells::first(&self.w.shown, rows).int()) {
            Ok(0) => Held::No,
            Ok(_) => Held::Yes,
            Err(e) => Held::Unknown(format!("pg_locks cannot be read: {e:#}")),
        }
    }
}

impl PgStore {
    /// Connect to the database a `postgres://` URL names and bring its
    /// tables up to date. Errors are one line and never show the password.
    pub fn open(url: &str) -> Result<PgStore> {
        let shown = redact_url(url.trim());
        let mut cfg: Config = url
            .trim()
            .parse()
            .map_err(|e| anyhow!("store '{shown}' is not a valid PostgreSQL URL: {e}"))?;
        let (connect, statement) = limits(&cfg);
        // Per address, for the TCP connect alone (the driver's own bound);
        // `connect` bounds the whole of it below.
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(CONNECT_TIMEOUT);
        }
        if cfg.get_application_name().is_none() {
            cfg.application_name("cpuscope");
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| anyhow!("store '{shown}': cannot start the client runtime: {e}"))?;
        let w = Waiter {
            rt: Some(rt),
            shown,
            statement,
            stop_seen: Cell::new(None),
        };
        let start = Instant::now();
        let (client, connection) = match w.wait(connect, cfg.connect(NoTls)) {
            Ok(Ok(c)) => c,
            // The driver's per-address timer may ring with ours.
            Ok(Err(_)) if start.elapsed() >= connect => {
                let why = GaveUp::Timeout(connect).reason(Phase::Connecting);
                return Err(anyhow!("store '{}': {why}", w.shown));
            }
            Ok(Err(e)) => return Err(pg_err(&w.shown, e)),
            Err(why) => {
                let why = why.reason(Phase::Connecting);
                return Err(anyhow!("store '{}': {why}", w.shown));
            }
        };
        let task = w.spawn(async move {
            let _ = connection.await;
        });
        let mut s = PgStore {
            w,
            conn: RefCell::new(Conn {
                client: Some(client),
                task: Some(task),
                lost: None,
            }),
        };
        s.migrate()?;
        Ok(s)
    }

    /// The layout version: 0 for a database without cpuscope tables; None
    /// when it has a `runs` table that is not ours (no schema_migrations).
    fn schema_version(sql: &mut dyn Sql) -> Result<Option<u32>> {
        fn has(sql: &mut dyn Sql, table: &str) -> Result<bool> {
            let rows = sql.query(
                "SELECT to_regclass(CAST(?1 AS TEXT)) IS NOT NULL",
                &[Value::text(table)],
            )?;
            Ok(Cells::first(sql.shown(), rows).int()? != 0)
        }
        if has(sql, "schema_migrations")? {
            return migrations::recorded_version(sql).map(Some);
        }
        Ok(if has(sql, "runs")? { None } else { Some(0) })
    }

    fn migrate(&mut self) -> Result<()> {
        let shown = self.w.shown.clone();
        self.write(|sql| {
            sql.execute(
                "SELECT pg_advisory_xact_lock(?1)",
                &[Value::Int(Some(MIGRATION_LOCK))],
            )?;
            let have = migrations::check_version(
                &shown,
                Self::schema_version(sql)?,
                "has a 'runs' table that is not a cpuscope store's \
                 (no schema_migrations); use another database or schema",
            )?;
            if have < STORE_SCHEMA_VERSION {
                migrations::apply(sql, have, pg_dialect)?;
            }
            Ok(())
        })
    }
}

impl Drop for PgStore {
    /// Close a healthy connection politely (Terminate), briefly.
    fn drop(&mut self) {
        let conn = self.conn.get_mut();
        if let (Some(client), Some(task)) = (conn.client.take(), conn.task.take()) {
            drop(client);
            self.w.briefly(CLOSE_WAIT, task);
        }
    }
}

impl Backend for PgStore {
    fn shown(&self) -> String {
        self.w.shown.clone()
    }

    fn write<T>(&mut self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
        let mut sql = Pg {
            w: &self.w,
            conn: self.conn.get_mut(),
            in_tx: true,
        };
        sql.batch("BEGIN")?;
        match f(&mut sql) {
            Ok(out) => {
                sql.batch("COMMIT")?;
                Ok(out)
            }
            Err(e) => {
                sql.rollback();
                Err(e)
            }
        }
    }

    fn read<T>(&self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
        let mut conn = self.conn.borrow_mut();
        f(&mut Pg {
            w: &self.w,
            conn: &mut conn,
            in_tx: false,
        })
    }

    /// A session advisory lock, shared (runs whose keys collide do not
    /// wait on each other), held by this connection.
    fn lock_writer(&mut self, id: &str) -> std::result::Result<&'static str, String> {
        let (class, key) = pg_keys(id);
        let mut sql = Pg {
            w: &self.w,
            conn: self.conn.get_mut(),
            in_tx: false,
        };
        // TCP only (ignored on a Unix socket); a server that refuses them
        // still holds the lock until it notices the connection gone.
        let _ = sql.batch(
            "SET tcp_keepalives_idle = 60; SET tcp_keepalives_interval = 10; \
             SET tcp_keepalives_count = 6",
        );
        sql.execute(
            "SELECT pg_advisory_lock_shared(CAST(CAST(?1 AS BIGINT) AS INTEGER), \
             CAST(CAST(?2 AS BIGINT) AS INTEGER))",
            &[Value::Int(Some(class)), Value::Int(Some(key))],
        )
        .map(|_| PG_LOCK)
        .map_err(|e| format!("{e:#}"))
    }

    fn unlock_writer(&mut self, id: &str) {
        let (class, key) = pg_keys(id);
        let mut sql = Pg {
            w: &self.w,
            conn: self.conn.get_mut(),
            in_tx: false,
        };
        let _ = sql.execute(
            "SELECT pg_advisory_unlock_shared(CAST(CAST(?1 AS BIGINT) AS INTEGER), \
             CAST(CAST(?2 AS BIGINT) AS INTEGER))",
            &[Value::Int(Some(class)), Value::Int(Some(key))],
        );
    }

    /// A database has no path to lose.
    fn still_there(&mut self) -> Result<()> {
        Ok(())
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
        for m in migrations::MIGRATIONS {
            let p = pg_dialect(m.sql);
            assert!(!p.contains(" INTEGER") && !p.contains(" REAL"), "{p}");
        }
    }

    #[test]
    fn params_are_numbered_with_dollars() {
        assert_eq!(
            pg_params("UPDATE runs SET status = ?2 WHERE id = ?1 AND x = ?10"),
            "UPDATE runs SET status = $2 WHERE id = $1 AND x = $10"
        );
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
    fn time_settings_read_as_postgresql_does() {
        let ms = |v: &str| pg_duration(v).map(|d| d.as_millis());
        assert_eq!(ms("1500"), Some(1500));
        assert_eq!(ms("30s"), Some(30_000));
        assert_eq!(ms("2min"), Some(120_000));
        assert_eq!(ms("'250ms'"), Some(250));
        assert_eq!(ms("1.5h"), Some(5_400_000));
        assert_eq!(ms("3 weeks"), None);
        assert_eq!(ms(""), None);
        let st = |o: &str| statement_timeout_in(o).map(|d| d.as_millis());
        assert_eq!(st("-c statement_timeout=30s"), Some(30_000));
        assert_eq!(st("-cstatement_timeout=5000 -c work_mem=4MB"), Some(5000));
        assert_eq!(st("--statement-timeout=2s"), Some(2000));
        assert_eq!(
            st("-c statement_timeout=1s -c statement_timeout=3s"),
            Some(3000)
        );
        assert_eq!(st("-c statement_timeout=0"), None, "0: the default bound");
        assert_eq!(st("-c lock_timeout=1s"), None);
    }

    #[test]
    fn limits_come_from_the_url() {
        let l = |u: &str| {
            let (c, s) = limits(&u.parse().unwrap());
            (c.as_secs_f64(), s.as_secs_f64())
        };
        assert_eq!(l("postgres://u@h/db"), (10.0, 10.0));
        assert_eq!(l("postgres://u@h/db?connect_timeout=2"), (2.0, 10.0));
        assert_eq!(l("postgres://u@h/db?connect_timeout=0"), (10.0, 10.0));
        assert_eq!(l("host=h user=u connect_timeout=3"), (3.0, 10.0));
        assert_eq!(l("postgres://u@h1,h2/db?connect_timeout=3"), (6.0, 10.0));
        assert_eq!(
            l("postgres://u@h/db?options=-c%20statement_timeout%3D2500"),
            (10.0, 2.5)
        );
        assert_eq!(
            l("host=h options='-c statement_timeout=20s' connect_timeout=4"),
            (4.0, 20.0)
        );
    }

    #[test]
    fn give_up_messages_name_phase_and_limit() {
        let t = GaveUp::Timeout(Duration::from_secs(10));
        assert_eq!(
            t.reason(Phase::Connecting),
            "no answer from the server within 10 s while connecting (connect_timeout)"
        );
        assert_eq!(
            GaveUp::Timeout(Duration::from_millis(2500)).reason(Phase::Answer),
            "no answer from the server within 2.5 s while waiting for an answer \
             (statement timeout)"
        );
        assert_eq!(
            GaveUp::Stopped.reason(Phase::Answer),
            "interrupted while waiting for the server"
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

//! The SQLite store: one file, WAL mode (readers never block the writer),
//! a busy timeout (so concurrent `cpuscope run`s take turns instead of
//! failing), foreign keys, and the versioned migrations of migrations.rs
//! recorded in `schema_migrations`. The store's rules are backend.rs's; this
//! file opens the file, takes SQLite's write lock (`BEGIN IMMEDIATE`) for
//! every write and maps SQLite's cells to `codec::Value`s.

use super::backend::{Backend, Sql};
use super::codec::{Cells, Value};
use super::migrations::{self, STORE_SCHEMA_VERSION};
use anyhow::{anyhow, bail, Result};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// SQLite `application_id` of a cpuscope store ("CPUS").
pub const APPLICATION_ID: i32 = 0x4350_5553;

/// How long a writer waits for another process's transaction to end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

/// Statements on the store's connection (or its open transaction, which
/// dereferences to it).
struct Lite<'a> {
    conn: &'a Connection,
    shown: &'a str,
}

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

    fn setup(&mut self) -> Result<()> {
        let shown = self.shown();
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql_err(&shown, e))?;
        // The first read of the file: this is where a non-SQLite file shows.
        let app_id = self.read(|sql| {
            let rows = sql.query("PRAGMA application_id", &[])?;
            Cells::first(sql.shown(), rows).int()
        })?;
        if app_id != 0 && app_id != i64::from(APPLICATION_ID) {
            bail!(
                "store '{shown}' is a SQLite database of another application, not a cpuscope store"
            );
        }
        self.read(|sql| sql.batch("PRAGMA foreign_keys = ON"))?;
        // WAL lets readers work while a run is being written. It can fail on
        // a read-only file or a filesystem without shared memory; the store
        // still works (with rollback journaling) then.
        let _ = self.read(|sql| sql.query("PRAGMA journal_mode = WAL", &[]));
        self.migrate()
    }

    /// The store's table-layout version: 0 for an empty database, None for
    /// one with other tables and no `schema_migrations`.
    fn schema_version(sql: &mut dyn Sql) -> Result<Option<u32>> {
        let ours = sql.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
            &[],
        )?;
        if !ours.is_empty() {
            return migrations::recorded_version(sql).map(Some);
        }
        let rows = sql.query(
            "SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite%'",
            &[],
        )?;
        let others = Cells::first(sql.shown(), rows).int()?;
        Ok(if others == 0 { Some(0) } else { None })
    }

    fn migrate(&mut self) -> Result<()> {
        const FOREIGN: &str = "is a SQLite database but not a cpuscope store \
             (it has other tables and no schema_migrations)";
        let shown = self.shown();
        // Read outside a transaction, this can see another process's
        // migration half-way between its two queries (no schema_migrations
        // yet, then its tables): only a current or a newer store is decided
        // here; anything else is decided again under the write lock below.
        if let Some(v) = self.read(Self::schema_version)? {
            if migrations::check_version(&shown, Some(v), FOREIGN)? == STORE_SCHEMA_VERSION {
                return Ok(());
            }
        }
        self.write(|sql| {
            // Another process may have migrated while we waited for the lock.
            let have = migrations::check_version(&shown, Self::schema_version(sql)?, FOREIGN)?;
            migrations::apply(sql, have, migrations::as_written)?;
            sql.batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {STORE_SCHEMA_VERSION};"
            ))
        })
    }
}

impl Backend for SqliteStore {
    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// `BEGIN IMMEDIATE`: the file's write lock is taken at once (waiting up
    /// to the busy timeout), so the transaction's reads see what it writes
    /// over and rows need no lock of their own.
    fn write<T>(&mut self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
        let shown = self.shown();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&shown, e))?;
        let out = f(&mut Lite {
            conn: &tx,
            shown: &shown,
        })?;
        tx.commit().map_err(|e| sql_err(&shown, e))?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
        let shown = self.shown();
        f(&mut Lite {
            conn: &self.conn,
            shown: &shown,
        })
    }
}

/// A parameter as SQLite binds it.
fn bind(v: &Value) -> &dyn rusqlite::ToSql {
    match v {
        Value::Text(s) => s,
        Value::Int(n) => n,
        Value::Real(x) => x,
    }
}

/// Cell `i` of a row.
fn cell(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Value> {
    Ok(match r.get_ref(i)? {
        ValueRef::Null => Value::Text(None),
        ValueRef::Integer(n) => Value::Int(Some(n)),
        ValueRef::Real(x) => Value::Real(Some(x)),
        // A blob fails here as "invalid column type".
        ValueRef::Text(_) | ValueRef::Blob(_) => Value::Text(Some(r.get(i)?)),
    })
}

impl Sql for Lite<'_> {
    fn shown(&self) -> &str {
        self.shown
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn
            .execute_batch(sql)
            .map_err(|e| sql_err(self.shown, e))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let params: Vec<&dyn rusqlite::ToSql> = params.iter().map(bind).collect();
        let n = self
            .conn
            .execute(sql, params.as_slice())
            .map_err(|e| sql_err(self.shown, e))?;
        Ok(n as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let e = |e: rusqlite::Error| sql_err(self.shown, e);
        let params: Vec<&dyn rusqlite::ToSql> = params.iter().map(bind).collect();
        let mut st = self.conn.prepare(sql).map_err(e)?;
        let n = st.column_count();
        let rows = st
            .query_map(params.as_slice(), |r| (0..n).map(|i| cell(r, i)).collect())
            .map_err(e)?;
        rows.collect::<rusqlite::Result<_>>().map_err(e)
    }

    fn row_lock(&self) -> &'static str {
        ""
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

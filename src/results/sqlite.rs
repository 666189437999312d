//! The SQLite store: one file, WAL mode (readers never block the writer),
//! a busy timeout (so concurrent `cpuscope run`s take turns instead of
//! failing), foreign keys, and the versioned migrations of migrations.rs
//! recorded in `schema_migrations`. The store's rules are backend.rs's; this
//! file opens the file, takes SQLite's write lock (`BEGIN IMMEDIATE`) for
//! every write and maps SQLite's cells to `codec::Value`s. A writer holds
//! each run's writer lock in the side file `STORE-writers`
//! (src/results/liveness.rs) and checks after every write that the store's
//! path still names the file it holds (`still_there`).
//!
//! Readers ([`SqliteStore::open_read_only`]) open the file read-only and
//! change nothing in it: no table, no migration, no journal mode. A store
//! they may not write beside (a read-only mount, another user's store) is
//! still read: SQLite cannot create the WAL index (`-shm`) there, so the
//! reader keeps that index in its own memory, and failing that reads the
//! file as immutable.

use super::backend::{Backend, Sql};
use super::codec::{Cells, Value};
use super::liveness::{test_sqlite, Held, SideLocks, SQLITE_LOCK};
use super::migrations::{self, STORE_SCHEMA_VERSION};
use super::store::{warn, NoStore};
use anyhow::{anyhow, bail, Result};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// SQLite `application_id` of a cpuscope store ("CPUS").
pub const APPLICATION_ID: i32 = 0x4350_5553;

/// How long a writer waits for another process's transaction to end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a SQLite database that is not a cpuscope store is, after "store '…' ".
const FOREIGN: &str = "is a SQLite database but not a cpuscope store \
     (it has other tables and no schema_migrations)";

/// The ways a reader opens the file, in the order tried: as a normal
/// read-only connection; then (where the WAL index cannot be created or
/// read) without file locks, with the WAL index in this process's memory
/// (`locking_mode = EXCLUSIVE` before the first read), which still reads
/// what the write-ahead log holds; then as an immutable file, without the
/// log. Each is a URI query and the statement run before the first read.
/// Reading without locks is safe where it is reached: a live writer keeps
/// its index (made with the store's own permissions) beside the store, and
/// then the first way works.
const READ_MODES: [(&str, &str); 3] = [
    ("mode=ro", ""),
    ("mode=ro&vfs=unix-none", "PRAGMA locking_mode = EXCLUSIVE"),
    ("mode=ro&immutable=1", ""),
];

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    /// The file a writer opened (device, inode), to notice it deleted or
    /// replaced (`still_there`); None for a reader.
    file_id: Option<(u64, u64)>,
    /// The writer locks this store holds (src/results/liveness.rs); after
    /// `conn`, so that they go last.
    locks: SideLocks,
}

/// Statements on the store's connection (or its open transaction, which
/// dereferences to it).
struct Lite<'a> {
    conn: &'a Connection,
    shown: &'a str,
    /// The store's path (for the writer locks beside it).
    path: &'a Path,
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
            file_id: None,
            locks: SideLocks::new(path),
        };
        s.setup()?;
        // The file SQLite holds now (it made it, if new): from here on, the
        // path must keep naming it.
        if !has_moved(&s.conn) {
            s.file_id = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
        }
        Ok(s)
    }

    /// Open the existing store at `path` to read it only: nothing in or
    /// beside the file is created or changed. A store with an older table
    /// layout is read through a view of the current one (it is brought up
    /// to date by the next command that writes to it); an empty database is
    /// a [`NoStore`] error. Errors are one line and name the file and why.
    pub fn open_read_only(path: &Path) -> Result<SqliteStore> {
        let shown = path.display().to_string();
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => bail!("store '{shown}' is a directory, not a SQLite file"),
            // (A FIFO would also block the open below.)
            Ok(m) if !m.is_file() => bail!("store '{shown}' is not a regular file"),
            Ok(_) => {}
            Err(e) => bail!("cannot read store '{shown}': {e}"),
        }
        // The system says best why a file cannot be read.
        if let Err(e) = std::fs::File::open(path) {
            bail!("cannot read store '{shown}': {e}");
        }
        let mut failed: Option<rusqlite::Error> = None;
        let mut conn = None;
        for (i, (query, first)) in READ_MODES.iter().enumerate() {
            match open_read_mode(path, query, first) {
                Ok(c) => {
                    if i == READ_MODES.len() - 1 {
                        warn_unread_wal(path, &shown);
                    }
                    conn = Some(c);
                    break;
                }
                // Where the WAL index cannot be made or read: the next way.
                Err(e) if i + 1 < READ_MODES.len() && may_read_otherwise(&e) => {
                    failed.get_or_insert(e);
                }
                Err(e) => {
                    // Not SQLite, another application's, damaged: said as is.
                    if failed.is_none() {
                        return Err(sql_err(&shown, e));
                    }
                    let why = unreadable_because(path)
                        .unwrap_or_else(|| failed.map(|f| detail(&f)).unwrap_or_default());
                    bail!(
                        "cannot read store '{shown}': {why} (SQLite, reading it as immutable: {})",
                        detail(&e)
                    );
                }
            }
        }
        let conn = conn.ok_or_else(|| anyhow!("cannot read store '{shown}'"))?;
        let mut s = SqliteStore {
            conn,
            path: path.to_path_buf(),
            file_id: None,
            locks: SideLocks::new(path),
        };
        s.check_application()?;
        let have = s.read(|sql| {
            let v = Self::schema_version(sql)?;
            migrations::check_version(sql.shown(), v, FOREIGN)
        })?;
        if have == 0 {
            return Err(anyhow!(NoStore { shown }));
        }
        s.older_layout_view(have)?;
        Ok(s)
    }

    /// For a reader of a store at an older layout `have`: temporary views
    /// (this connection's own, in its temporary schema, which shadows the
    /// file's tables) that read it as the current layout.
    fn older_layout_view(&mut self, have: u32) -> Result<()> {
        // Each step that changes what readers select needs its view here.
        // (Layout 4 adds an index only: layout 3 reads as it is.)
        const _: () = assert!(STORE_SCHEMA_VERSION == 4, "add a view for the new layout");
        // Layout 1 has no stored_seq: start-time order, as migration 2
        // numbers those runs. Layouts 1 and 2 have no writer_lock: NULL, as
        // migration 3 leaves the runs stored before it.
        let view = match have {
            1 => {
                "CREATE TEMP VIEW runs AS SELECT r.*, (
                     SELECT COUNT(*) FROM main.runs AS o
                     WHERE o.started_at < r.started_at
                        OR (o.started_at = r.started_at AND o.id <= r.id)
                 ) AS stored_seq, NULL AS writer_lock FROM main.runs AS r"
            }
            2 => "CREATE TEMP VIEW runs AS SELECT r.*, NULL AS writer_lock FROM main.runs AS r",
            _ => return Ok(()),
        };
        self.read(|sql| sql.batch(view))
    }

    /// The first read of the file: this is where a non-SQLite file shows.
    fn check_application(&mut self) -> Result<()> {
        let shown = self.shown();
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql_err(&shown, e))?;
        let app_id = self.read(|sql| {
            let rows = sql.query("PRAGMA application_id", &[])?;
            Cells::first(sql.shown(), rows).int()
        })?;
        if app_id != 0 && app_id != i64::from(APPLICATION_ID) {
            bail!(
                "store '{shown}' is a SQLite database of another application, not a cpuscope store"
            );
        }
        Ok(())
    }

    fn setup(&mut self) -> Result<()> {
        self.check_application()?;
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
            path: &self.path,
        })?;
        tx.commit().map_err(|e| sql_err(&shown, e))?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
        let shown = self.shown();
        f(&mut Lite {
            conn: &self.conn,
            shown: &shown,
            path: &self.path,
        })
    }

    /// A byte of `STORE-writers` (src/results/liveness.rs).
    fn lock_writer(&mut self, id: &str) -> std::result::Result<&'static str, String> {
        self.locks.hold(id).map(|()| SQLITE_LOCK)
    }

    fn unlock_writer(&mut self, id: &str) {
        self.locks.release(id);
    }

    /// The path still names the file this writer opened: not deleted, not
    /// renamed away, no other file renamed or copied over it (device and
    /// inode as at open, and SQLite's own check of the file it holds).
    fn still_there(&mut self) -> Result<()> {
        let Some(want) = self.file_id else {
            return Ok(());
        };
        let shown = self.shown();
        let why = match std::fs::metadata(&self.path) {
            Err(e) => Some(format!(
                "no file at that path now: {}",
                crate::base::output::io_text(&e)
            )),
            Ok(m) if (m.dev(), m.ino()) != want => {
                Some("another file is at that path now".to_string())
            }
            Ok(_) if has_moved(&self.conn) => {
                Some("SQLite finds the file it holds renamed or deleted".to_string())
            }
            Ok(_) => None,
        };
        if let Some(why) = why {
            // SQLite does not checkpoint a moved database when it closes,
            // and would leave its write-ahead log at the old path, beside
            // whatever file is there now, which readers would then read
            // through it. Copy the log into the file this writer holds (the
            // one renamed away, or the deleted one) and empty it.
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            bail!(
                "store '{shown}' was deleted or replaced while this process wrote to it ({why}); \
                 what was written is not in the store at that path"
            );
        }
        // A side file removed by hand is made again, with every lock held.
        if let Err(why) = self.locks.keep() {
            warn(&format!("store '{shown}': writer lock lost ({why})"));
        }
        Ok(())
    }
}

/// SQLite's own check (`SQLITE_FCNTL_HAS_MOVED`) that the main database
/// file it holds open was renamed or deleted since it was opened.
fn has_moved(conn: &Connection) -> bool {
    let mut moved: std::os::raw::c_int = 0;
    // SAFETY: the connection's own handle, a NUL-terminated schema name and
    // an int the file control writes; nothing is kept past the call.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_HAS_MOVED,
            (&mut moved as *mut std::os::raw::c_int).cast(),
        )
    };
    rc == rusqlite::ffi::SQLITE_OK && moved != 0
}

/// `path` as a SQLite URI filename with `query`: every byte but
/// `[A-Za-z0-9-._~/]` percent-encoded (so `?`, `#`, `%` and non-UTF-8 names
/// are taken as they are), and an absolute path behind an empty authority.
fn uri(path: &Path, query: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut s = String::from("file:");
    if path.is_absolute() {
        s.push_str("//");
    }
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.push('?');
    s.push_str(query);
    s
}

/// A read-only connection to `path` opened with URI `query`, `first` run
/// before anything is read, and one read done (where a WAL store fails
/// when its index cannot be made).
fn open_read_mode(path: &Path, query: &str, first: &str) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri(path, query), flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if !first.is_empty() {
        conn.execute_batch(first)?;
    }
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(conn)
}

/// An error of a read-only open that another way of reading may avoid:
/// the WAL index (or the log) could not be created, opened or locked.
fn may_read_otherwise(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            ErrorCode::CannotOpen
                | ErrorCode::ReadOnly
                | ErrorCode::PermissionDenied
                | ErrorCode::SystemIoFailure
                | ErrorCode::FileLockingProtocolFailed
        )
    )
}

/// `path` with `suffix` added to its file name (`-wal`, `-shm`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_os_string();
    p.push(suffix);
    PathBuf::from(p)
}

/// Why the files of a WAL store cannot be read here, as the system sees it.
fn unreadable_because(path: &Path) -> Option<String> {
    for suffix in ["-wal", "-shm"] {
        let f = beside(path, suffix);
        if let Ok(m) = std::fs::metadata(&f) {
            if !m.is_file() {
                return Some(format!("'{}' is not a file", f.display()));
            }
            if let Err(e) = std::fs::File::open(&f) {
                return Some(format!("'{}' cannot be read: {e}", f.display()));
            }
        }
    }
    let shm = beside(path, "-shm");
    if !shm.exists() {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: access(2) reads a NUL-terminated path and nothing else.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
            let e = std::io::Error::last_os_error();
            let how = match e.raw_os_error() {
                Some(libc::EROFS) => "is on a read-only filesystem".to_string(),
                Some(libc::EACCES) | Some(libc::EPERM) => {
                    "is not writable by this user".to_string()
                }
                _ => format!("cannot be written ({e})"),
            };
            return Some(format!(
                "it is in WAL mode and its directory '{}' {how}, so its index '{}' cannot be created",
                dir.display(),
                shm.display()
            ));
        }
    }
    None
}

/// Read as immutable, a store does not see its write-ahead log: say so, and
/// why, when there is one that may hold something.
fn warn_unread_wal(path: &Path, shown: &str) {
    let wal = beside(path, "-wal");
    let Ok(m) = std::fs::metadata(&wal) else {
        return;
    };
    if m.is_file() && m.len() == 0 {
        return;
    }
    let why = unreadable_because(path).unwrap_or_else(|| "SQLite cannot read it here".into());
    warn(&format!(
        "store '{shown}' is read without its write-ahead log '{}' ({why}): runs stored \
         since the log was last copied into the file are not seen",
        wal.display()
    ));
}

/// SQLite's message for `e`, on one line.
fn detail(e: &rusqlite::Error) -> String {
    e.to_string().replace('\n', " ")
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
        // A damaged cell (a blob, text that is not UTF-8) reads as text,
        // with U+FFFD for the bytes that are not UTF-8, so that one row
        // does not stop a query: the codec then says what is wrong with it.
        ValueRef::Text(b) | ValueRef::Blob(b) => {
            Value::Text(Some(String::from_utf8_lossy(b).into_owned()))
        }
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

    fn writer_lock(&mut self, kind: &str, id: &str) -> Held {
        if kind == SQLITE_LOCK {
            test_sqlite(self.path, id)
        } else {
            Held::Unknown(format!("a writer lock of an unknown kind ('{kind}')"))
        }
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

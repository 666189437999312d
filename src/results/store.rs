//! Where runs are kept. [`Store`] is the interface; every SQL backend
//! (src/results/backend.rs) implements it with the same rules, tables and
//! migration list: SQLite (src/results/sqlite.rs) and PostgreSQL
//! (src/results/postgres.rs).
//!
//! Commands that write (`run`, `tune`, `import`, `delete`) open the store
//! with [`open_store`], which creates a SQLite store on first use; commands
//! that only read (`runs`, `show`, `export`, `compare`, `fleet`) open it
//! with [`open_store_read`], which creates and changes nothing.

use super::schema::{Environment, ResultRecord, Run, RunStatus};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One line of `cpuscope runs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// As the store sees it now: a run left `running` by a writer that is
    /// gone is reported `partial` with `interrupted` true.
    pub status: RunStatus,
    /// True when the run was cut short (its writer died before finishing
    /// it): the run is abandoned, and reads as partial.
    pub interrupted: bool,
    /// For a run stored as `running`: how its writer is found now (writing,
    /// gone, or unknown: cannot be checked from here). None for a finished run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<WriterState>,
    pub host: String,
    pub cpu_model: Option<String>,
    pub profile: String,
    pub tags: Vec<String>,
    /// Number of result records stored.
    pub results: usize,
}

impl RunSummary {
    /// "complete", "running", "partial (abandoned)" (its writer is gone),
    /// "running (writer unchecked)" (its writer cannot be checked from here)...
    pub fn status_text(&self) -> String {
        if self.interrupted || self.writer == Some(WriterState::Gone) {
            format!("{} (abandoned)", self.status)
        } else if self.writer == Some(WriterState::Unknown) {
            format!("{} (writer unchecked)", self.status)
        } else {
            self.status.to_string()
        }
    }
}

/// How a reader finds the writer of a run stored as `running`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriterState {
    /// It holds the run's writer lock (or, for a run without one, its
    /// process is seen alive on this host): the run is being written.
    Writing,
    /// It is gone (the lock is free, or its process ended): the run is
    /// abandoned and reads as `partial`; `export` and `delete` take it.
    Gone,
    /// It cannot be checked from here: a run stored without a writer lock
    /// (by an older cpuscope) by a process under another host name, or a
    /// lock that cannot be tested here. Reads as `running`; `delete --force`
    /// removes it.
    Unknown,
}

/// A place that keeps runs.
///
/// Writers call `begin_run`, then `add_result` per finished experiment (each
/// in its own transaction, so what finished is kept if the process dies),
/// then `finish_run`. `put_run` stores a whole run at once (import).
///
/// `which` arguments accept a full run id, a unique prefix of one, or `latest`
/// (the run stored last: the one most recently begun by a writer or brought
/// in by `import`, whatever start time its document claims).
pub trait Store: Send {
    /// Human-readable location (a file path, a URL without password).
    fn location(&self) -> String;

    /// Insert `run` with status Running and no results (its `results` and
    /// `status` are ignored); records this process as the writer.
    fn begin_run(&mut self, run: &Run) -> Result<()>;

    /// Append one result to a running run, in its own transaction.
    fn add_result(&mut self, run_id: &str, rec: &ResultRecord) -> Result<()>;

    /// Close a running run: final status (not Running), finish time (RFC 3339
    /// UTC) and the environment as it is at the end (with `load_end` and any
    /// notes added during the run); it replaces the stored environment.
    fn finish_run(
        &mut self,
        run_id: &str,
        status: RunStatus,
        finished_at: &str,
        environment: &Environment,
    ) -> Result<()>;

    /// Store a whole, validated run in one transaction; refuses an id that
    /// is already stored.
    fn put_run(&mut self, run: &Run) -> Result<()> {
        self.put_runs(std::slice::from_ref(run))
    }

    /// Store several whole runs in one transaction: all or none.
    fn put_runs(&mut self, runs: &[Run]) -> Result<()>;

    /// All runs, oldest first.
    fn list_runs(&self) -> Result<Vec<RunSummary>>;

    /// The summaries of the runs of these hosts (exact names), in start
    /// order; none for no host.
    fn list_runs_of(&self, hosts: &[String]) -> Result<Vec<RunSummary>>;

    /// Whether a run of exactly this id is stored.
    fn has_run(&self, id: &str) -> Result<bool>;

    /// Full id of the run `which` names (id, unique prefix, or `latest`).
    fn resolve(&self, which: &str) -> Result<String>;

    /// The run `which` names, with all its results. A run whose writer is
    /// gone comes back with status Partial and a note saying so.
    fn get_run(&self, which: &str) -> Result<Run>;

    /// Delete the run `which` names and its results; returns its full id.
    /// Refuses a run that a live process is still writing, and one whose
    /// writer cannot be checked ([`WriterState::Unknown`]).
    fn delete_run(&mut self, which: &str) -> Result<String> {
        self.delete_run_with(which, false)
    }

    /// [`Store::delete_run`]; with `force`, also a run whose writer cannot
    /// be checked from here (never one whose writer is seen writing).
    fn delete_run_with(&mut self, which: &str, force: bool) -> Result<String>;
}

/// A line on standard error, `cpuscope: warning: …`; a failed write is ignored.
pub(crate) fn warn(msg: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "cpuscope: warning: {msg}");
}

/// A line on standard error, `cpuscope: note: …`; a failed write is ignored.
pub(crate) fn note(msg: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "cpuscope: note: {msg}");
}

/// A reading command found no SQLite store where `--store` (or the default)
/// points: nothing has been stored there yet. `runs` lists no runs then;
/// other readers fail with this one line.
#[derive(Debug)]
pub struct NoStore {
    /// The path, as shown.
    pub shown: String,
}

impl std::fmt::Display for NoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no store at '{}' (nothing has been stored yet: run `cpuscope run` first)",
            self.shown
        )
    }
}

impl std::error::Error for NoStore {}

/// The SQLite path a `--store` value names, or why it names none.
pub fn store_path_of(spec: &str) -> Result<PathBuf> {
    if spec.trim().is_empty() {
        bail!("--store is empty: give a SQLite file path");
    }
    if let Some(shown) = libpq_conninfo(spec) {
        bail!(
            "'--store' looks like a PostgreSQL key=value connection string ({shown}); \
             give a postgres://… URL (postgres://USER@HOST:PORT/DBNAME)"
        );
    }
    if let Some((scheme, rest)) = spec.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        return match scheme.as_str() {
            "sqlite" | "file" if !rest.is_empty() => Ok(PathBuf::from(rest)),
            "postgres" | "postgresql" => {
                bail!("'{scheme}://...' is a PostgreSQL store, not a SQLite file path")
            }
            _ => bail!(
                "unknown store '{scheme}://...': give a SQLite file path or a postgres:// URL"
            ),
        };
    }
    Ok(PathBuf::from(spec))
}

/// The keywords of a libpq connection string that give one away.
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "sslmode",
    "connect_timeout",
    "application_name",
    "options",
    "service",
    "target_session_attrs",
];

/// When `spec` reads as a libpq `key=value` connection string
/// (`host=db user=me password=…`): that string with the password's value
/// replaced by `***`, to show. None for anything else: a path may hold `=`
/// (`runs=old.db`, `/data/user=bob/runs.db`), so it takes a known keyword
/// and either two pairs or no `/` at all.
pub fn libpq_conninfo(spec: &str) -> Option<String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut complete = true;
    let mut chars = spec.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '=' {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if key.is_empty() || chars.next() != Some('=') {
            complete = false;
            break;
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        // A value: 'quoted' (backslash escapes) or up to the next space.
        let mut value = String::new();
        let quoted = chars.peek() == Some(&'\'');
        if quoted {
            value.push(chars.next().unwrap_or('\''));
        }
        while let Some(c) = chars.next() {
            if !quoted && c.is_whitespace() {
                break;
            }
            value.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    value.push(n);
                }
            } else if quoted && c == '\'' {
                break;
            }
        }
        pairs.push((key, value));
    }
    let known = pairs
        .iter()
        .any(|(k, _)| LIBPQ_KEYWORDS.contains(&k.as_str()));
    if !known || (pairs.len() < 2 && spec.contains('/')) {
        return None;
    }
    let mut shown: Vec<String> = pairs
        .into_iter()
        .map(|(k, v)| {
            if k == "password" {
                format!("{k}=***")
            } else {
                format!("{k}={v}")
            }
        })
        .collect();
    if !complete {
        shown.push("…".into());
    }
    Some(format!("'{}'", shown.join(" ")))
}

/// `$XDG_DATA_HOME/cpuscope/runs.db`, else `~/.local/share/cpuscope/runs.db`.
/// A relative XDG_DATA_HOME is ignored, as the XDG spec says, with a note
/// (once per process).
pub fn default_store_path() -> Result<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME") {
        let x = PathBuf::from(x);
        if x.is_absolute() {
            return Ok(x.join("cpuscope").join("runs.db"));
        }
        if !x.as_os_str().is_empty() {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                note(&format!(
                    "XDG_DATA_HOME='{}' is relative; the XDG spec says to ignore it: \
                     using ~/.local/share",
                    x.display()
                ))
            });
        }
    }
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(PathBuf::from(h).join(".local/share/cpuscope/runs.db")),
        _ => bail!("no place for the store: set --store, XDG_DATA_HOME or HOME"),
    }
}

/// The process writing a run: who it was (pid, start time, boot, host),
/// stored with the run and shown in messages. Whether it still writes is
/// decided by the writer lock it holds (src/results/liveness.rs); these
/// fields decide only for a run stored without one (by an older cpuscope,
/// or where no lock could be taken): [`Writer::seen`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    pub pid: u32,
    /// Start time of the process in clock ticks since boot (/proc/PID/stat
    /// field 22), so a recycled pid is not mistaken for the writer.
    pub start_ticks: Option<u64>,
    /// /proc/sys/kernel/random/boot_id, so a reboot ends every writer.
    pub boot_id: Option<String>,
    pub hostname: Option<String>,
}

/// What the process rule tells of a writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    Alive,
    Gone,
    /// Another host name (another machine, or another UTS namespace: every
    /// container): its processes cannot be seen from here.
    CannotTell,
}

impl Writer {
    /// This process.
    pub fn current() -> Writer {
        let pid = std::process::id();
        Writer {
            pid,
            start_ticks: process_start_ticks(pid),
            boot_id: read_trim("/proc/sys/kernel/random/boot_id"),
            hostname: local_hostname(),
        }
    }

    /// The process rule, for a run stored without a writer lock: whether
    /// this writer may still be running, seen from this process. A writer
    /// under another host name cannot be told. (A writer in another PID
    /// namespace under this host name is looked up by a pid that is not
    /// its own here: the reason runs now hold a lock.)
    pub fn seen(&self) -> Seen {
        let me = Writer::current();
        if self.hostname.is_some() && me.hostname.is_some() && self.hostname != me.hostname {
            return Seen::CannotTell;
        }
        if let (Some(a), Some(b)) = (&self.boot_id, &me.boot_id) {
            if a != b {
                return Seen::Gone; // rebooted since
            }
        }
        if self.pid == me.pid && self.start_ticks == me.start_ticks {
            return Seen::Alive;
        }
        match (self.start_ticks, process_start_ticks(self.pid)) {
            (_, None) => Seen::Gone, // no such process
            (Some(want), Some(now)) if want == now => Seen::Alive,
            (Some(_), Some(_)) => Seen::Gone,
            (None, Some(_)) => Seen::Alive, // a process with that pid exists; cannot tell more
        }
    }

    /// "pid N on host H" (or without the host when unknown).
    pub fn who(&self) -> String {
        match &self.hostname {
            Some(h) => format!(
                "pid {} on host '{}'",
                self.pid,
                crate::base::fmt::for_terminal(h)
            ),
            None => format!("pid {}", self.pid),
        }
    }
}

fn read_trim(p: &str) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Start time (clock ticks since boot) of process `pid`; None if there is
/// none, it has exited (a zombie), or the file is not the kernel's (qemu-user).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // rest starts at field 3 (state); starttime is field 22.
    let mut f = rest.split_whitespace();
    let state = f.next()?;
    if state == "Z" || state == "X" || state == "x" {
        return None; // exited (zombie or dead): not a writer any more
    }
    if !state.chars().all(|c| c.is_ascii_alphabetic()) {
        // Not the kernel's file: qemu-user answers a process's reads of its
        // own stat with one it makes up (state "0", a start time of its own
        // that differs from the kernel's by its start-up): unknown.
        return None;
    }
    f.nth(22 - 4)?.parse().ok()
}

/// This machine's host name (/proc/sys/kernel/hostname).
pub fn local_hostname() -> Option<String> {
    read_trim("/proc/sys/kernel/hostname")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert!(store_path_of("").is_err());
        let e = store_path_of("postgres://u@h/db").unwrap_err().to_string();
        assert!(e.contains("is a PostgreSQL store"), "{e}");
        let e = store_path_of("redis://x").unwrap_err().to_string();
        assert!(e.contains("unknown store"), "{e}");
        assert_eq!(
            store_path_of("/tmp/x.db").unwrap(),
            PathBuf::from("/tmp/x.db")
        );
        assert_eq!(
            store_path_of("sqlite:///tmp/x.db").unwrap(),
            PathBuf::from("/tmp/x.db")
        );
    }

    #[test]
    fn libpq_strings_are_refused_without_their_password() {
        for (spec, shown) in [
            (
                "host=db.example user=me password=hunter2 dbname=fleet",
                "'host=db.example user=me password=*** dbname=fleet'",
            ),
            (
                "password = 'a secret \\' one' host=/run/postgresql",
                "'password=*** host=/run/postgresql'",
            ),
            ("dbname=fleet", "'dbname=fleet'"),
            ("host=db password=hunter2 junk", "'host=db password=*** …'"),
        ] {
            assert_eq!(libpq_conninfo(spec).as_deref(), Some(shown), "{spec}");
            let e = store_path_of(spec).unwrap_err().to_string();
            assert!(
                e.starts_with("'--store' looks like a PostgreSQL key=value connection string")
                    && e.contains("give a postgres://… URL")
                    && !e.contains("hunter2")
                    && !e.contains("secret"),
                "{e}"
            );
        }
        // Paths that hold `=` stay paths.
        for path in [
            "runs=old.db",
            "/data/user=bob/runs.db",
            "user=bob/runs.db",
            "my runs.db",
            "./a b=c.db",
        ] {
            assert_eq!(libpq_conninfo(path), None, "{path}");
            assert_eq!(store_path_of(path).unwrap(), PathBuf::from(path));
        }
    }

    #[test]
    fn self_is_alive() {
        let me = Writer::current();
        assert_eq!(me.seen(), Seen::Alive);
        let elsewhere = Writer {
            hostname: Some(format!(
                "{}-elsewhere",
                me.hostname.clone().unwrap_or_default()
            )),
            ..me.clone()
        };
        if me.hostname.is_some() {
            assert_eq!(elsewhere.seen(), Seen::CannotTell);
        }
        if me.start_ticks.is_none() {
            // Under qemu-user a process's own stat is made up: unknown.
            assert!(std::env::var_os("CPUSCOPE_TEST_EMULATOR").is_some());
            return;
        }
        let gone = Writer {
            pid: u32::MAX - 1,
            ..me.clone()
        };
        assert_eq!(gone.seen(), Seen::Gone);
        let recycled = Writer {
            start_ticks: me.start_ticks.map(|t| t + 2),
            ..me
        };
        assert_eq!(recycled.seen(), Seen::Gone);
    }
}

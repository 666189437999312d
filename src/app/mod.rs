//! Command glue: each subcommand's arguments and the function that runs it.
//! `main.rs` only parses and dispatches to these.
//!
//! Output goes through `out!`/`outln!` (standard output: a failed write is
//! an error, a closed pipe a quiet exit, never a panic) and `errln!`
//! (standard error: a failed write is ignored, so that losing a progress
//! line never costs a run); files through [`Context::output`].

/// `print!` that returns the error of a failed write instead of panicking.
macro_rules! out {
    ($($t:tt)*) => { $crate::base::output::stdout(&format!($($t)*))? };
}

/// `println!` that returns the error of a failed write instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => { $crate::base::output::stdout(&format!("{}\n", format_args!($($t)*)))? };
}

/// `eprintln!` that never fails.
macro_rules! errln {
    ($($t:tt)*) => { $crate::base::output::err_line(&format!($($t)*)) };
}

pub mod args;
pub mod bandwidth;
pub mod c2c;
pub mod compare;
pub mod fleet;
pub mod info;
pub mod latency;
pub mod loaded_latency;
pub mod numa_maps;
pub mod numa_matrix;
pub mod placement;
pub mod progress;
pub mod rate;
pub mod record;
pub mod run;
pub mod run_filter;
pub mod session;
pub mod simd;
pub mod softirq;
pub mod stat;
pub mod store_cmds;
pub mod sync;
pub mod tune;
pub mod uarch;

use crate::base::output::Output;
use crate::base::Sysroot;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Options shared by every command.
#[derive(Clone, Debug)]
pub struct Context {
    /// Root of the filesystem to read sysfs/procfs from (`--sysroot`).
    pub sysroot: PathBuf,
    /// Store location (`--store`): a path to a SQLite file or a postgres:// URL.
    pub store: Option<String>,
}

impl Context {
    pub fn sysroot(&self) -> Result<Sysroot> {
        Sysroot::new(&self.sysroot)
    }

    /// The SQLite store's files (the database and its journals), which no
    /// output may name; none for a PostgreSQL store.
    pub fn store_files(&self) -> Vec<PathBuf> {
        let db = match self.store.as_deref() {
            Some(s) if crate::results::postgres::is_postgres_url(s) => return Vec::new(),
            Some(s) => crate::results::store::store_path_of(s).ok(),
            None => crate::results::store::default_store_path().ok(),
        };
        let Some(db) = db else { return Vec::new() };
        let mut v = vec![db.clone()];
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut p = db.clone().into_os_string();
            p.push(suffix);
            v.push(PathBuf::from(p));
        }
        v
    }

    /// Check a path the user named for output, before any work
    /// (`crate::base::output`'s rules; never the store).
    pub fn output(&self, path: &Path) -> Result<Output> {
        Output::check(path, &self.store_files())
    }

    /// Write `bytes` to a checked output (checked again as it is written).
    pub fn write_output(&self, out: &Output, bytes: &[u8]) -> Result<()> {
        out.write(bytes, &self.store_files())
    }
}

/// Print a serializable value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

//! Command glue: each subcommand's arguments and the function that runs it.
//! `main.rs` only parses and dispatches to these.

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
pub mod rate;
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

use crate::machine::Sysroot;
use anyhow::Result;
use std::path::PathBuf;

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
}

/// Print a serializable value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

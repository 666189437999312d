//! The one launcher of the binary under test: every test starts cpuscope
//! through here (`command`, `with_store`), or takes its path (`PATH`) where
//! another program runs it (Ansible, Slurm, a shell).

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The binary cargo built for this test run.
pub const PATH: &str = env!("CARGO_BIN_EXE_cpuscope");

/// `cpuscope`, to be given its arguments.
pub fn command() -> Command {
    Command::new(PATH)
}

/// `cpuscope --store STORE ARGS...`, run to its end.
pub fn with_store(store: &Path, args: &[&str]) -> Output {
    command()
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("spawn cpuscope")
}

//! The one launcher of the binary under test: every test starts cpuscope
//! through here (`command`, `with_store`), or takes its path (`PATH`) where
//! another program runs it (Ansible, Slurm, a shell).

#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Command, Output};

/// The binary cargo built for this test run.
pub const PATH: &str = env!("CARGO_BIN_EXE_cpuscope");

/// `cpuscope`, to be given its arguments.
pub fn command() -> Command {
    Command::new(PATH)
}

/// `cpuscope ARGS...`, run to its end.
pub fn run(args: &[&str]) -> Output {
    command().args(args).output().expect("spawn cpuscope")
}

/// `cpuscope ARGS...`, run to its end: the exit code (-1 when a signal
/// ended it), stdout and stderr as text.
pub fn run_text(args: &[&str]) -> (i32, String, String) {
    let o = run(args);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `cpuscope --store STORE ARGS...` (STORE a path or a URL), run to its end.
pub fn with_store(store: impl AsRef<OsStr>, args: &[&str]) -> Output {
    command()
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("spawn cpuscope")
}

/// `cpuscope run ARGS...` into a new store in a temporary directory, which
/// must succeed: its standard output (the verdict) and the stored run as
/// `show --json` gives it.
pub fn run_and_show(args: &[&str]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("s.db");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    let o = with_store(&db, &all);
    assert!(
        o.status.success(),
        "run {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let verdict = String::from_utf8_lossy(&o.stdout).into_owned();
    let o = with_store(&db, &["runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).expect("runs --json");
    let id = runs["runs"][0]["id"]
        .as_str()
        .expect("a stored run")
        .to_string();
    let o = with_store(&db, &["show", &id, "--json"]);
    let run = serde_json::from_slice(&o.stdout).expect("show --json");
    (verdict, run)
}

//! Fake roots for `--sysroot` and `Sysroot`: a temporary directory with
//! the one directory a root needs, and files written under it.

#![allow(dead_code)]

use std::fs;
use std::path::Path;

/// Write `text` at `rel` under `root`, making its directories.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("a parent directory")).expect("mkdir");
    fs::write(p, text).expect("write");
}

/// A root `Sysroot` takes: it needs sys/devices/system/cpu.
pub fn fake_root() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("a temporary directory");
    fs::create_dir_all(d.path().join("sys/devices/system/cpu/cpu0")).expect("mkdir");
    d
}

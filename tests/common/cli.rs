//! What every command must do with bad input: fail with one line on stderr
//! that starts `cpuscope: error:`, and never panic. And the shortest
//! measuring run the tests start (`QUICK_RUN`).

use std::process::Output;

/// Asserts `out` is such a failure; returns stderr.
pub fn one_line_error(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "expected failure: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {err}");
    assert!(lines[0].starts_with("cpuscope: error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// A short measuring run (it opens the store before measuring): the
/// arguments after `--store PATH`.
#[allow(dead_code)]
pub const QUICK_RUN: [&str; 7] = [
    "run",
    "--profile",
    "quick",
    "--only",
    "frequency",
    "--no-html",
    "--quiet",
];

//! The one rule for a test that lacks a tool, fixture or server: under CI
//! (`CI` set, as `.ci/run` runs, which installs everything) that is a
//! failure; elsewhere the test prints a visible `SKIP:` line and returns.
//! The line goes straight to stderr, past the test harness's capture, so a
//! skip is never silent.

#![allow(dead_code)]

use std::io::Write as _;

/// True when running under CI (`CI` set, not empty, not "false").
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// Under CI: panic with `what`. Elsewhere: print `SKIP: what` and return.
pub fn skip_or_fail(what: &str) {
    if in_ci() {
        panic!("{what} (failing: CI is set, and .ci/run installs it)");
    }
    let _ = writeln!(std::io::stderr(), "SKIP: {what}");
}

/// A test that needs what no install can give: a fact of this machine's
/// hardware (two NUMA nodes, cache sizes the CPU reports). Even under CI it
/// prints `SKIP: what (a fact of this machine's hardware, ...)` and returns
/// rather than failing.
pub fn skip_hardware(what: &str) {
    skip_even_under_ci(
        what,
        "a fact of this machine's hardware, not a failure under CI",
    );
}

/// A visible `SKIP: what (why)` that is not a failure under CI either:
/// `why` says why (another run of the suite covers it, say).
pub fn skip_even_under_ci(what: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIP: {what} ({why})");
}

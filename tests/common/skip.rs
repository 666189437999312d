//! The one rule for a test that lacks a tool, fixture or server: under CI
//! (`CI` set, as `.ci/run` runs, which installs everything) that is a
//! failure; elsewhere the test prints a visible `SKIP:` line and returns.
//! The line goes straight to stderr, past the test harness's capture, so a
//! skip is never silent.

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

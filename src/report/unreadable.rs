//! Payloads a reader could not read: a stored record whose `data` no longer
//! parses as its family's payload (an older record after a field changed
//! type) is said, one line each, never left out in silence. The readers
//! read through `ResultRecord::data_as`, which notes each failure for
//! `results::payload::collect`.

use crate::base::fmt::for_terminal;
use crate::results::payload::{collect, PayloadError};
use crate::results::schema::Run;
use std::fmt::Write as _;

/// What `render` writes for `run`, then one `not readable: ...` line per
/// payload it could not read (nothing more when every payload read).
pub fn after(run: &Run, render: impl FnOnce() -> String) -> String {
    let (mut out, bad) = collect(render);
    if !bad.is_empty() && !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&lines(run, &bad));
    out
}

/// One line per payload that does not parse.
pub fn lines(run: &Run, bad: &[PayloadError]) -> String {
    let mut out = String::new();
    for e in bad {
        let _ = writeln!(out, "{}", for_terminal(&e.line(&run.id)));
    }
    out
}

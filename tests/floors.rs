//! The floors of docs/architecture.md hold: `scripts/check-floors.py` finds
//! no import from a lower room to a higher one and no import cycle between
//! files of different folders in src/; and two ratchets of issue 26.
//!
//! When `python3` is missing the check cannot run: under CI (`CI` set) that
//! is a failure, elsewhere a visible `SKIP:` line.

#[path = "common/python_check.rs"]
mod python_check;
#[path = "common/skip.rs"]
mod skip;

#[test]
fn no_upward_import_and_no_cross_folder_cycle() {
    python_check::assert_passes("scripts/check-floors.py", "check-floors: ok");
}

/// Issue 26's ratchets: the string-keyed reads of record data
/// (`scripts/check-keyed-reads.py`) and the functions over 120 lines
/// (`scripts/fn-lengths.py`) may only go down from what each script names.
#[test]
fn keyed_reads_do_not_grow() {
    python_check::assert_passes("scripts/check-keyed-reads.py", "check-keyed-reads: ok");
}

#[test]
fn long_functions_do_not_grow() {
    python_check::assert_passes("scripts/fn-lengths.py", "fn-lengths: ok");
}

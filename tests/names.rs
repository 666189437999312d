//! No experiment or metric name is a string literal outside its own module
//! (issue 13): `scripts/check-names.py` finds none in src/, beyond the JSON
//! fields, the counters' own names and the allowlist it documents.
//!
//! When `python3` is missing the check cannot run: under CI (`CI` set) that
//! is a failure, elsewhere a visible `SKIP:` line.

#[path = "common/python_check.rs"]
mod python_check;
#[path = "common/skip.rs"]
mod skip;

// Ignored for now: src/app/, src/report/{summary,html,advice}.rs,
// src/report/compare/ and the unit tests of src/results/schema.rs still
// write names as literals until they are swept onto the experiments'
// constants; un-ignore then (`python3 scripts/check-names.py` lists what is
// left, file by file).
#[test]
#[ignore = "names are still literals in app/, report/{summary,html,advice}.rs, report/compare/, results/schema.rs's tests until their sweep"]
fn no_experiment_or_metric_name_as_a_literal_outside_its_module() {
    python_check::assert_passes("scripts/check-names.py", "check-names: ok");
}

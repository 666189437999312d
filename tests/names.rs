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

#[test]
fn no_experiment_or_metric_name_as_a_literal_outside_its_module() {
    python_check::assert_passes("scripts/check-names.py", "check-names: ok");
}

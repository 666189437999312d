//! The memory commands' text (`cpuscope latency`, `bandwidth`, …) and the
//! summary sections of its experiments: each record as a figure line, after
//! the table its own experiment draws of it (a curve, a sweep, a matrix;
//! in the experiment's folder). Never measures.

use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::memory::{bandwidth, latency, loaded_latency, numa_matrix};
use crate::experiments::render::figure_line;
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

/// A matrix or table cell: the figure, or `n/a`.
pub fn cell(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "n/a".into())
}

/// The table a record's experiment draws of it, if any.
fn structured(r: &ResultRecord) -> Option<String> {
    if r.is(numa_matrix::MATRIX) {
        numa_matrix::text::matrices(r)
    } else if r.is(loaded_latency::CURVE) {
        loaded_latency::text::points(r)
    } else if r.is(bandwidth::SATURATION_THREADS) {
        bandwidth::text::sweep(r)
    } else {
        None
    }
}

/// Render every record; structured ones (curves, sweeps, matrices) get
/// their own tables, the rest one line each.
pub fn render(recs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let mut exp = "";
    for r in recs {
        if r.experiment != exp {
            exp = &r.experiment;
            let _ = writeln!(out, "\n== {exp}");
        }
        if r.is(latency::CURVE) && r.data.is_some() {
            latency::text::curve(r, &mut out);
            for n in &r.notes {
                let _ = writeln!(out, "  note: {}", for_terminal(n));
            }
            continue;
        }
        if let Some(text) = structured(r) {
            out.push_str(&text);
        }
        let _ = writeln!(out, "{}", figure_line(r));
        for n in &r.notes {
            let _ = writeln!(out, "      {}", for_terminal(n));
        }
    }
    out
}

/// The section of one experiment's records of `run` (empty when it has none).
pub fn section(run: &crate::results::schema::Run, exp: &str) -> String {
    let recs: Vec<ResultRecord> = run.records_of(exp).cloned().collect();
    render(&recs).trim_start_matches('\n').to_string()
}

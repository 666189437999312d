//! rate's HTML in the report. Not typed yet (docs/views.md).

use crate::base::html::{esc, svg_bars};
use crate::experiments::compute::rate;
use crate::experiments::compute::text::param;
use crate::results::schema::{MetricId, ResultRecord, Run};
use std::fmt::Write as _;

fn of(run: &Run, id: MetricId) -> Vec<&ResultRecord> {
    run.records(id).collect()
}

pub fn rate_section(run: &Run) -> String {
    let rows: Vec<(String, f64)> = of(run, rate::JOBS_PER_HOUR)
        .iter()
        .filter_map(|r| {
            Some((
                format!(
                    "{} × {}{}",
                    param(r, "workload")?,
                    param(r, "copies")?,
                    param(r, "mem")
                        .map(|m| format!(", memory {m}"))
                        .unwrap_or_default()
                ),
                r.value?,
            ))
        })
        .collect();
    let mut h = svg_bars("Rate score (copies of one workload)", "jobs/hour", &rows);
    for e in of(run, rate::EFFICIENCY) {
        if let Some(v) = e.value {
            let _ = write!(
                h,
                "<div class=\"note\">efficiency per copy, {} copies={}{}: {v:.1}%</div>",
                esc(param(e, "workload").unwrap_or("?")),
                esc(param(e, "copies").unwrap_or("?")),
                esc(&param(e, "mem")
                    .map(|m| format!(", memory {m}"))
                    .unwrap_or_default())
            );
        }
    }
    for e in of(run, rate::MEM_CHANGE) {
        if let Some(v) = e.value {
            let _ = write!(
                h,
                "<div class=\"note\">{} × {}: memory {} {v:+.1}% against interleave (seed 003's reference)</div>",
                esc(param(e, "workload").unwrap_or("?")),
                esc(param(e, "copies").unwrap_or("?")),
                esc(param(e, "mem").unwrap_or("?"))
            );
        }
    }
    h
}

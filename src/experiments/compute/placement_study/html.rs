//! The placement study's HTML in the report. Not typed yet
//! (docs/views.md).

use crate::base::html::{esc, svg_bars};
use crate::experiments::compute::payload::SetThroughputData;
use crate::experiments::compute::placement_study;
use crate::experiments::compute::text::param;
use crate::results::schema::{MetricId, ResultRecord, Run};
use std::fmt::Write as _;

fn of(run: &Run, id: MetricId) -> Vec<&ResultRecord> {
    run.records(id).collect()
}

pub fn placement_section(run: &Run) -> String {
    let t = of(run, placement_study::THROUGHPUT);
    let mut groups: Vec<(&str, &str)> = Vec::new();
    for r in &t {
        if let (Some(c), Some(w)) = (param(r, "comparison"), param(r, "workload")) {
            if !groups.contains(&(c, w)) {
                groups.push((c, w));
            }
        }
    }
    let mut h = String::new();
    for (c, w) in groups {
        let mut rows = Vec::new();
        let mut na = Vec::new();
        for r in t
            .iter()
            .filter(|r| param(r, "comparison") == Some(c) && param(r, "workload") == Some(w))
        {
            let set = param(r, "set").unwrap_or("?");
            let d = r.data_as::<SetThroughputData>().unwrap_or_default();
            match d.relative_pct {
                Some(p) => rows.push((format!("{set} ({})", d.cpus), p)),
                None => na.push(format!(
                    "{set}: {}",
                    r.unavailable_reason.as_deref().unwrap_or("not measured")
                )),
            }
        }
        h.push_str(&svg_bars(
            &format!("Placement {c}, workload {w}"),
            "% of best",
            &rows,
        ));
        for n in na {
            let _ = write!(h, "<div class=\"note na\">{}</div>", esc(&n));
        }
    }
    let m: Vec<(String, f64)> = of(run, placement_study::MEMORY_LATENCY)
        .iter()
        .filter_map(|r| Some((param(r, "memory")?.to_string(), r.value?)))
        .collect();
    h.push_str(&svg_bars(
        "Memory placement (pointer chase)",
        "ns per load",
        &m,
    ));
    h
}

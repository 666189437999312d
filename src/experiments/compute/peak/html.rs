//! peak's HTML in the report (drawn after simd's table, in simd's
//! section): FLOPs per cycle against theory. Not typed yet (docs/views.md).

use crate::base::html::{esc, svg_bars};
use crate::experiments::compute::payload::PerCycleData;
use crate::experiments::compute::peak;
use crate::experiments::compute::text::param;
use crate::results::schema::{MetricId, ResultRecord, Run};
use std::fmt::Write as _;

fn of(run: &Run, id: MetricId) -> Vec<&ResultRecord> {
    run.records(id).collect()
}

pub fn peak_section(run: &Run) -> String {
    let pc = of(run, peak::FMA_FLOPS_PER_CYCLE);
    let actual = of(run, peak::FMA_FLOPS_PER_ACTUAL_CYCLE);
    let mut rows = Vec::new();
    for r in &pc {
        let w = peak::labels::record_width_label(r);
        if let Some(v) = r.value {
            rows.push((format!("{w} per scalar-clock cycle"), v));
        }
        if let Some(a) = actual
            .iter()
            .find(|a| {
                param(a, "width") == param(r, "width") && param(a, "threads") == param(r, "threads")
            })
            .and_then(|a| a.value)
        {
            rows.push((format!("{w} per actual cycle"), a));
        }
        if let Some(t) = r
            .data_as::<PerCycleData>()
            .and_then(|d| d.against_theory)
            .map(|a| a.theoretical)
        {
            rows.push((format!("{w} theoretical"), t));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h3>Peak FP64 FMA per core: measured vs theoretical</h3>");
    h.push_str(&svg_bars("FLOPs per cycle, one core", "FLOP/cycle", &rows));
    h.push_str("<div class=\"note\">Per scalar-clock cycle: at the add-chain clock read right before and after each sample. Per actual cycle: at the clock while that width runs (below).</div>");
    for r in pc.iter().take(1) {
        for n in &r.notes {
            let _ = write!(h, "<div class=\"note\">{}</div>", esc(n));
        }
    }
    // The clock while each width runs.
    let clocks = of(run, peak::SIMD_CLOCK);
    let bars: Vec<(String, f64)> = clocks
        .iter()
        .filter_map(|r| Some((peak::labels::clock_record_label(r), r.value?)))
        .collect();
    if !bars.is_empty() {
        h.push_str(&svg_bars(
            "Clock while each FMA width runs, one core (add chain with the FMAs in its shadow)",
            "GHz",
            &bars,
        ));
        for r in &clocks {
            let label = peak::labels::clock_record_label(r);
            match r.value {
                Some(_) => {
                    for n in &r.notes {
                        let _ = write!(h, "<div class=\"note\">{}: {}</div>", esc(&label), esc(n));
                    }
                }
                None => {
                    let _ = write!(
                        h,
                        "<div class=\"note na\">{}: not available: {}</div>",
                        esc(&label),
                        esc(r.unavailable_reason.as_deref().unwrap_or("?"))
                    );
                }
            }
        }
    }
    for r in of(run, peak::INSTRUCTION_RATE) {
        for n in &r.notes {
            let _ = write!(h, "<div class=\"note\">nop loop: {}</div>", esc(n));
        }
    }
    h
}

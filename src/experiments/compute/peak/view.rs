//! What peak FLOPs shows (docs/views.md): its place among the experiments, its
//! verdict lines and the figures the fleet compares across hosts. Its figures
//! are shown in simd's section and report table.

use super::FMA_FLOPS;
use crate::base::fmt::fmt_num;
use crate::experiments::compute::payload::PerCycleData;
use crate::results::schema::{ResultRecord, Run};
use crate::view::verdict::{fig, find, has, noisy_mark};
use crate::view::{param_text, KeyFigure, Rank, VerdictLine, Views};

/// The views of this experiment (the registry holds it).
pub struct PeakViews;

impl Views for PeakViews {
    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        peak_line(run).into_iter().collect()
    }

    fn rank(&self) -> Rank {
        Rank(60)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// One team member on every core.
fn per_core(r: &ResultRecord) -> bool {
    has(r, "threads", "per_core")
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: FMA_FLOPS,
    label: "peak FMA, every core",
    keep: per_core,
    top: None,
}];

// ---------------------------------------------------------------- verdict

fn peak_line(run: &Run) -> Option<VerdictLine> {
    let recs: Vec<&ResultRecord> = run
        .records(super::FMA_FLOPS)
        .filter(|r| r.value.is_some() && has(r, "threads", "1"))
        .collect();
    // A numbered width, or SVE at its recorded vector length.
    let widest = recs
        .iter()
        .max_by_key(|r| super::labels::record_bits(r).unwrap_or(64))?;
    let w = param_text(widest, "width").unwrap_or_default();
    let label = super::labels::record_width_label(widest);
    let mut t = format!("FP64 FMA {label}, one core {}", fig(widest));
    if let Some(pc) = find(run, super::FMA_FLOPS_PER_CYCLE, |r| {
        has(r, "threads", "1") && has(r, "width", &w)
    }) {
        t.push_str(&format!(" = {:.1} FLOP/cycle", pc.value.unwrap_or(0.0)));
        let d = pc.data_as::<PerCycleData>().unwrap_or_default();
        let theory = d.against_theory.as_ref().map(|a| a.theoretical);
        match (&d.against_theory, d.inferred_fma_units) {
            (Some(a), _) => t.push_str(&format!(
                " ({:.0}% of {:.0})",
                a.ratio * 100.0,
                a.theoretical
            )),
            (None, Some(i)) => t.push_str(&format!(" (≈{} FMA units, inferred)", fmt_num(i))),
            (None, None) => {}
        }
        // The clock while this width runs: the ratio above is per cycle
        // of the scalar clock; say what the width's own clock does.
        let clock = find(run, super::SIMD_CLOCK, |r| {
            has(r, "threads", "1") && has(r, "width", &w)
        });
        if let Some((c, words)) = clock.and_then(|c| Some((c, super::labels::clock_words(c)?))) {
            let dropped = super::labels::clock_change_of(c).is_some_and(|x| x.3);
            let actual = find(run, super::FMA_FLOPS_PER_ACTUAL_CYCLE, |r| {
                has(r, "threads", "1") && has(r, "width", &w)
            })
            .filter(|_| dropped);
            match actual.and_then(|a| a.value.map(|v| (a, v))) {
                Some((a, v)) => t.push_str(&format!(
                    " at the scalar clock; {words}{}: {v:.1} FLOP per actual cycle{}",
                    noisy_mark(c),
                    theory
                        .map(|th| format!(" ({:.0}%)", v / th * 100.0))
                        .unwrap_or_default()
                        + noisy_mark(a)
                )),
                None => t.push_str(&format!("; {words}{}", noisy_mark(c))),
            }
        }
    }
    if let Some(all) = find(run, super::FMA_FLOPS, |r| {
        has(r, "threads", "per_core") && has(r, "width", &w)
    }) {
        t.push_str(&format!(" · all cores {}", fig(all)));
    }
    Some(VerdictLine::plain("Compute", t))
}

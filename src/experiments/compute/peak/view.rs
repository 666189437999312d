//! What peak FLOPs shows (docs/views.md): its place among the experiments, its
//! verdict lines and the figures the fleet compares across hosts. Its figures
//! are shown in simd's section and report table.

use super::FMA_FLOPS;
use crate::base::fmt::fmt_num;
use crate::experiments::compute::payload::PerCycleData;
use crate::experiments::compute::peak;
use crate::experiments::compute::text::param;
use crate::results::schema::{ResultRecord, Run};
use crate::view::verdict::{fig, find, has, noisy_mark};
use crate::view::{param_text, BarGroup, Block, Chart, KeyFigure, Rank, VerdictLine, Views};

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

// ---------------------------------------------------------------- its part of simd's figure in the report

/// The blocks: FLOPs per cycle of each width (per scalar-clock cycle, per
/// actual cycle, theoretical) and their notes, the clock while each width
/// runs (a width without one: not available, and why), the nop loop's
/// notes. None without a figure per cycle.
pub fn report_blocks(run: &Run) -> Vec<Block> {
    let pc: Vec<_> = run.records(peak::FMA_FLOPS_PER_CYCLE).collect();
    let actual: Vec<_> = run.records(peak::FMA_FLOPS_PER_ACTUAL_CYCLE).collect();
    let mut rows = Vec::new();
    for r in &pc {
        let w = peak::labels::record_width_label(r);
        if let Some(v) = r.value {
            rows.push(BarGroup::single(format!("{w} per scalar-clock cycle"), v));
        }
        if let Some(a) = actual
            .iter()
            .find(|a| {
                param(a, "width") == param(r, "width") && param(a, "threads") == param(r, "threads")
            })
            .and_then(|a| a.value)
        {
            rows.push(BarGroup::single(format!("{w} per actual cycle"), a));
        }
        if let Some(t) = r
            .data_as::<PerCycleData>()
            .and_then(|d| d.against_theory)
            .map(|a| a.theoretical)
        {
            rows.push(BarGroup::single(format!("{w} theoretical"), t));
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![
        Block::Heading("Peak FP64 FMA per core: measured vs theoretical".into()),
        Block::Chart(Chart::bars("FLOPs per cycle, one core", "FLOP/cycle", rows)),
        Block::Note("Per scalar-clock cycle: at the add-chain clock read right before and after each sample. Per actual cycle: at the clock while that width runs (below).".into()),
    ];
    for r in pc.iter().take(1) {
        blocks.extend(r.notes.iter().cloned().map(Block::Note));
    }
    // The clock while each width runs.
    let clocks: Vec<_> = run.records(peak::SIMD_CLOCK).collect();
    let groups: Vec<BarGroup> = clocks
        .iter()
        .filter_map(|r| {
            Some(BarGroup::single(
                peak::labels::clock_record_label(r),
                r.value?,
            ))
        })
        .collect();
    if !groups.is_empty() {
        blocks.push(Block::Chart(Chart::bars(
            "Clock while each FMA width runs, one core (add chain with the FMAs in its shadow)",
            "GHz",
            groups,
        )));
        for r in &clocks {
            let label = peak::labels::clock_record_label(r);
            match r.value {
                Some(_) => {
                    blocks.extend(r.notes.iter().map(|n| Block::Note(format!("{label}: {n}"))))
                }
                None => blocks.push(Block::NotAvailable(format!(
                    "{label}: not available: {}",
                    r.unavailable_reason.as_deref().unwrap_or("?")
                ))),
            }
        }
    }
    for r in run.records(peak::INSTRUCTION_RATE) {
        blocks.extend(
            r.notes
                .iter()
                .map(|n| Block::Note(format!("nop loop: {n}"))),
        );
    }
    blocks
}

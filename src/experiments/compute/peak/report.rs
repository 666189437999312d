//! peak's part of the report (drawn after simd's table, in simd's figure):
//! FLOPs per cycle against theory, the clock while each width runs, as
//! typed blocks the HTML printer draws.

use crate::experiments::compute::payload::PerCycleData;
use crate::experiments::compute::peak;
use crate::experiments::compute::text::param;
use crate::results::schema::Run;
use crate::view::{BarGroup, Block, Chart, ChartKind, Scale};

/// Bars of `groups` in `unit` under `title` (linear, no reference).
fn bars(title: &str, unit: &str, groups: Vec<BarGroup>) -> Block {
    Block::Chart(Chart {
        title: title.into(),
        caption: None,
        kind: ChartKind::Bars {
            unit: unit.into(),
            scale: Scale::Linear,
            groups,
            reference: None,
        },
    })
}

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
        bars("FLOPs per cycle, one core", "FLOP/cycle", rows),
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
        blocks.push(bars(
            "Clock while each FMA width runs, one core (add chain with the FMAs in its shadow)",
            "GHz",
            groups,
        ));
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

//! What the rate score shows (docs/views.md): its place among the experiments,
//! its section of the summary, its charts in the report and the figures the
//! fleet compares across hosts.

use super::JOBS_PER_HOUR;
use crate::experiments::compute::text::param;
use crate::results::schema::Run;
use crate::view::{
    any, report_section, BarGroup, Block, Chart, ChartKind, Depth, KeyFigure, Rank, Scale, Section,
    Views,
};

/// The views of this experiment (the registry holds it).
pub struct RateViews;

impl Views for RateViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Report => report_section(depth, super::EXP, || report_blocks(run)),
            Depth::Summary | Depth::Command => super::text::sections_of(&run.results),
        }
    }

    fn rank(&self) -> Rank {
        Rank(90)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// The report's chart (jobs per hour of each workload × copies), then the
/// efficiency per copy and the memory policy's change as notes.
fn report_blocks(run: &Run) -> Vec<Block> {
    let mem = |m: Option<&str>| m.map(|m| format!(", memory {m}")).unwrap_or_default();
    let groups = run
        .records(JOBS_PER_HOUR)
        .filter_map(|r| {
            let label = format!(
                "{} × {}{}",
                param(r, "workload")?,
                param(r, "copies")?,
                mem(param(r, "mem"))
            );
            Some(BarGroup::single(label, r.value?))
        })
        .collect();
    let mut blocks = vec![Block::Chart(Chart {
        title: "Rate score (copies of one workload)".into(),
        caption: None,
        kind: ChartKind::Bars {
            unit: "jobs/hour".into(),
            scale: Scale::Linear,
            groups,
            reference: None,
        },
    })];
    for e in run.records(super::EFFICIENCY) {
        if let Some(v) = e.value {
            blocks.push(Block::Note(format!(
                "efficiency per copy, {} copies={}{}: {v:.1}%",
                param(e, "workload").unwrap_or("?"),
                param(e, "copies").unwrap_or("?"),
                mem(param(e, "mem"))
            )));
        }
    }
    for e in run.records(super::MEM_CHANGE) {
        if let Some(v) = e.value {
            blocks.push(Block::Note(format!(
                "{} × {}: memory {} {v:+.1}% against interleave (seed 003's reference)",
                param(e, "workload").unwrap_or("?"),
                param(e, "copies").unwrap_or("?"),
                param(e, "mem").unwrap_or("?")
            )));
        }
    }
    blocks
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: JOBS_PER_HOUR,
    label: "rate score",
    keep: any,
    top: None,
}];

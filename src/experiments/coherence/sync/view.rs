//! What the synchronisation costs show (docs/views.md): its place among the
//! experiments, its section of the summary (one line per kind of cost) and
//! its chart in the report (the costs as log-scale bars: they span 0.1 ns
//! to tens of microseconds).

use crate::results::schema::Run;
use crate::view::{
    report_section, BarGroup, Block, Chart, ChartKind, Depth, Rank, Scale, Section, Views,
};

/// The views of this experiment (the registry holds it).
pub struct SyncViews;

impl Views for SyncViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Summary => summary(run),
            Depth::Report => report_section(depth, super::EXP, || costs_chart(run)),
            Depth::Command => Vec::new(),
        }
    }

    fn rank(&self) -> Rank {
        Rank(52)
    }
}

/// The summary: a line per kind of cost (none without records).
fn summary(run: &Run) -> Vec<Section> {
    let lines = super::text::summary_lines(&run.results);
    if lines.is_empty() {
        return Vec::new();
    }
    vec![Section {
        id: super::EXP.to_string(),
        title: "Synchronisation costs (median; * = noisy)".into(),
        blocks: lines.into_iter().map(Block::Para).collect(),
    }]
}

/// Every cost in ns as a bar on a log scale (no chart without one).
fn costs_chart(run: &Run) -> Vec<Block> {
    let prefix = format!("{}: ", super::EXP);
    let groups: Vec<BarGroup> = run
        .records_of(super::EXP)
        .filter(|r| r.unit == "ns")
        .filter_map(|r| {
            let label = r.label();
            let label = label.strip_prefix(&prefix).unwrap_or(&label).to_string();
            Some(BarGroup::single(label, r.value?))
        })
        .collect();
    if groups.is_empty() {
        return Vec::new();
    }
    vec![Block::Chart(Chart {
        title: "Synchronisation costs".into(),
        caption: None,
        kind: ChartKind::Bars {
            unit: "ns".into(),
            scale: Scale::Log,
            groups,
            reference: None,
        },
    })]
}

//! What the placement study shows (docs/views.md): its place among the
//! experiments, its section of the summary and its charts in the report.

use crate::experiments::compute::payload::SetThroughputData;
use crate::experiments::compute::text::param;
use crate::results::schema::Run;
use crate::view::{report_section, BarGroup, Block, Chart, Depth, Rank, Section, Views};

/// The views of this experiment (the registry holds it).
pub struct PlacementStudyViews;

impl Views for PlacementStudyViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Report => report_section(depth, super::EXP, || report_blocks(run)),
            Depth::Summary | Depth::Command => super::text::sections_of(&run.results),
        }
    }

    fn rank(&self) -> Rank {
        Rank(92)
    }
}

/// The report's charts: for each comparison and workload, each CPU set's
/// throughput as a share of the best (a set without one: not available,
/// and why); then the memory placements' pointer-chase latency.
fn report_blocks(run: &Run) -> Vec<Block> {
    let t: Vec<_> = run.records(super::THROUGHPUT).collect();
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for r in &t {
        if let (Some(c), Some(w)) = (param(r, "comparison"), param(r, "workload")) {
            if !pairs.contains(&(c, w)) {
                pairs.push((c, w));
            }
        }
    }
    let mut blocks = Vec::new();
    for (c, w) in pairs {
        let mut groups = Vec::new();
        let mut na = Vec::new();
        for r in t
            .iter()
            .filter(|r| param(r, "comparison") == Some(c) && param(r, "workload") == Some(w))
        {
            let set = param(r, "set").unwrap_or("?");
            let d = r.data_as::<SetThroughputData>().unwrap_or_default();
            match d.relative_pct {
                Some(p) => groups.push(BarGroup::single(format!("{set} ({})", d.cpus), p)),
                None => na.push(Block::NotAvailable(format!(
                    "{set}: {}",
                    r.unavailable_reason.as_deref().unwrap_or("not measured")
                ))),
            }
        }
        blocks.push(Block::Chart(Chart::bars(
            format!("Placement {c}, workload {w}"),
            "% of best",
            groups,
        )));
        blocks.extend(na);
    }
    let memory = run
        .records(super::MEMORY_LATENCY)
        .filter_map(|r| Some(BarGroup::single(param(r, "memory")?, r.value?)))
        .collect();
    blocks.push(Block::Chart(Chart::bars(
        "Memory placement (pointer chase)",
        "ns per load",
        memory,
    )));
    blocks
}

//! What the TLB reach shows (docs/views.md): its place among the experiments
//! and its section of the summary.

use crate::experiments::memory::payload::{PageWalkData, PageWalkPoint};
use crate::experiments::render::figure_list;
use crate::results::schema::Run;
use crate::view::{Block, Depth, Rank, Section, Views};

/// The views of this experiment (the registry holds it).
pub struct TlbReachViews;

impl Views for TlbReachViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match (depth, figure_list(super::EXP, run)) {
            (Depth::Summary, Some(list)) => {
                let mut blocks = vec![Block::Figures(list)];
                blocks.extend(walk_curve(run).map(Block::Verbatim));
                vec![Section {
                    id: super::EXP.to_string(),
                    title: String::new(),
                    blocks,
                }]
            }
            _ => Vec::new(),
        }
    }

    fn rank(&self) -> Rank {
        Rank(22)
    }
}

/// The page-walk curve as two lines (extra ns per load against pages
/// touched), columns aligned.
fn walk_curve(run: &Run) -> Option<Vec<String>> {
    let curve = run
        .records(super::PAGE_WALK)
        .find_map(|r| r.data_as::<PageWalkData>())?;
    let col = |f: fn(&PageWalkPoint) -> String| -> String {
        curve.points.iter().map(f).collect::<Vec<_>>().join("")
    };
    Some(vec![
        format!(
            "  pages      {}",
            col(|p| format!("{:>6.0}", p.pages as f64))
        ),
        format!("  extra ns   {}", col(|p| format!("{:>6.1}", p.extra_ns))),
    ])
}

//! What the TLB reach shows (docs/views.md): its place among the experiments
//! and its section of the summary.

use crate::experiments::memory::payload::PageWalkData;
use crate::experiments::render::figure_list;
use crate::results::schema::Run;
use crate::view::{Align, Block, Cell, Depth, Rank, Section, Table, Views};

/// The views of this experiment (the registry holds it).
pub struct TlbReachViews;

impl Views for TlbReachViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match (depth, figure_list(super::EXP, run)) {
            (Depth::Summary, Some(list)) => {
                let mut blocks = vec![Block::Figures(list)];
                blocks.extend(walk_curve(run).map(Block::Table));
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

/// The page-walk curve as a table of one row: the pages touched are the
/// columns, the extra ns per load the row.
fn walk_curve(run: &Run) -> Option<Table> {
    let curve = run
        .records(super::PAGE_WALK)
        .find_map(|r| r.data_as::<PageWalkData>())?;
    let heads: Vec<String> = std::iter::once("pages".to_string())
        .chain(
            curve
                .points
                .iter()
                .map(|p| format!("{:.0}", p.pages as f64)),
        )
        .collect();
    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
    let mut t = Table::new(&heads);
    for c in t.columns.iter_mut().skip(1) {
        c.align = Align::Right;
    }
    let row = std::iter::once(Cell::Text("extra ns".into()))
        .chain(
            curve
                .points
                .iter()
                .map(|p| Cell::Text(format!("{:.1}", p.extra_ns))),
        )
        .collect();
    t.push(row).ok()?;
    Some(t)
}

//! What the TLB reach shows (docs/views.md): its place among the experiments
//! and its section of the summary.

use crate::experiments::memory::payload::{PageWalkData, PageWalkPoint};
use crate::results::schema::Run;
use crate::view::{Rank, Views};
use std::fmt::Write as _;

/// The views of this experiment (the registry holds it).
pub struct TlbReachViews;

impl Views for TlbReachViews {
    fn summary_text(&self, run: &Run) -> String {
        summary(run)
    }

    fn rank(&self) -> Rank {
        Rank(22)
    }
}

/// `tlb_reach`: one line per figure, then the page-walk curve (extra ns
/// per load against pages touched).
fn summary(run: &Run) -> String {
    let mut out = crate::experiments::render::generic_text(super::EXP, run);
    let Some(curve) = run
        .records(super::PAGE_WALK)
        .find_map(|r| r.data_as::<PageWalkData>())
    else {
        return out;
    };
    let col = |f: fn(&PageWalkPoint) -> String| -> String {
        curve.points.iter().map(f).collect::<Vec<_>>().join("")
    };
    let _ = writeln!(
        out,
        "  pages      {}",
        col(|p| format!("{:>6.0}", p.pages as f64))
    );
    let _ = writeln!(
        out,
        "  extra ns   {}",
        col(|p| format!("{:>6.1}", p.extra_ns))
    );
    out
}

//! What the TLB reach shows (docs/views.md): its place among the experiments
//! and its section of the summary.

use crate::results::schema::Run;
use crate::view::{Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct TlbReachViews;

impl Views for TlbReachViews {
    fn summary_text(&self, run: &Run) -> String {
        crate::experiments::memory::text::tlb_reach(run)
    }

    fn rank(&self) -> Rank {
        Rank(22)
    }
}

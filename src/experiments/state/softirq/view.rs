//! What softirq shows (docs/views.md): its place among the experiments and its
//! section of the summary.

use crate::results::schema::Run;
use crate::view::{Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct SoftirqViews;

impl Views for SoftirqViews {
    fn summary_text(&self, run: &Run) -> String {
        crate::experiments::state::text::softirq(&run.results)
    }

    fn rank(&self) -> Rank {
        Rank(12)
    }
}

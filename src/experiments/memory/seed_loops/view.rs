//! What the seeds' loops shows (docs/views.md): its place among the
//! experiments and its section of the summary.

use crate::results::schema::Run;
use crate::view::{Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct SeedLoopsViews;

impl Views for SeedLoopsViews {
    fn summary_text(&self, run: &Run) -> String {
        crate::experiments::memory::text::section(run, super::EXP)
    }

    fn rank(&self) -> Rank {
        Rank(44)
    }
}

//! What the seeds' loops shows (docs/views.md): its place among the
//! experiments and its section of the summary.

use crate::results::schema::Run;
use crate::view::{Depth, Rank, Section, Views};

/// The views of this experiment (the registry holds it).
pub struct SeedLoopsViews;

impl Views for SeedLoopsViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Summary => crate::experiments::memory::text::sections(run, super::EXP),
            Depth::Report | Depth::Command => Vec::new(),
        }
    }

    fn rank(&self) -> Rank {
        Rank(44)
    }
}

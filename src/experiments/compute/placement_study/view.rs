//! What the placement study shows (docs/views.md): its place among the
//! experiments, its section of the summary and its charts in the report.

use crate::results::schema::Run;
use crate::view::{Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct PlacementStudyViews;

impl Views for PlacementStudyViews {
    fn summary_text(&self, run: &Run) -> String {
        super::text::render_placement(&run.results)
    }

    fn report_html(&self, run: &Run) -> String {
        super::html::placement_section(run)
    }

    fn rank(&self) -> Rank {
        Rank(92)
    }
}

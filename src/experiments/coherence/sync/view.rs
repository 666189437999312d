//! What the synchronisation costs shows (docs/views.md): its place among the
//! experiments, its section of the summary and its charts in the report.

use crate::results::schema::Run;
use crate::view::{Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct SyncViews;

impl Views for SyncViews {
    fn summary_text(&self, run: &Run) -> String {
        super::text::render_sync_summary(&run.results)
    }

    fn report_html(&self, run: &Run) -> String {
        super::html::sync_charts(run)
    }

    fn rank(&self) -> Rank {
        Rank(52)
    }
}

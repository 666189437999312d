//! What the rate score shows (docs/views.md): its place among the experiments,
//! its section of the summary, its charts in the report and the figures the
//! fleet compares across hosts.

use super::JOBS_PER_HOUR;
use crate::results::schema::Run;
use crate::view::{any, KeyFigure, Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct RateViews;

impl Views for RateViews {
    fn summary_text(&self, run: &Run) -> String {
        super::text::render_rate(&run.results)
    }

    fn report_html(&self, run: &Run) -> String {
        super::html::rate_section(run)
    }

    fn rank(&self) -> Rank {
        Rank(90)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: JOBS_PER_HOUR,
    label: "rate score",
    keep: any,
    top: None,
}];

//! What a tune run shows (docs/views.md): its place among the experiments, its
//! section of the summary, its charts in the report and its verdict lines.

use crate::results::schema::Run;
use crate::view::verdict::short;
use crate::view::{report_section, Depth, Rank, Section, VerdictLine, Views};

/// The views of `tune` (the registry holds it).
pub struct TuneViews;

impl Views for TuneViews {
    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        tune_line(run).into_iter().collect()
    }

    fn summary_text(&self, run: &Run) -> String {
        super::text::render(run)
    }

    /// The report: the command, the verdict, the interval chart and the
    /// candidates' table.
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        report_section(depth, super::study::EXP, || {
            super::report_view::report_blocks(run)
        })
    }

    fn rank(&self) -> Rank {
        Rank(100)
    }
}

/// A tune run's own verdict sentence, with the command it measured.
fn tune_line(run: &Run) -> Option<VerdictLine> {
    let view = super::study::TuneView::of(run)?;
    let text = match &view.verdict {
        Some((_, d)) => format!("{}: {}", short(&d.command.join(" "), 40), d.text),
        None => format!(
            "{} candidates measured, no verdict (the run stopped before one)",
            view.candidates.len()
        ),
    };
    Some(VerdictLine::plain("Tune", text))
}

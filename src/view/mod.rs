//! Views: what a set of figures shows, format-neutral (docs/views.md).
//!
//! Every experiment implements [`Views`] in its folder's `view.rs`: its
//! [`Rank`], its [`Section`]s (typed [`Table`]s and [`Chart`]s of
//! [`Figure`]s; a few experiments still return their summary as text from
//! their own `text.rs`, docs/views.md), its
//! [`VerdictLine`]s, its [`Curve`]s, its [`KeyFigure`]s and its rules of
//! advice ([`Rule`], [`Finding`]), built from its typed payloads. Nothing
//! here measures or knows an experiment: the floor sits between `results/`
//! (records, which a [`KeyFigure`] refers to) and `experiments/` (which
//! build views).
//!
//! The printers draw any section, one file per format: [`text`] (the
//! terminal), [`html`] (the report's fragment, with one engine per chart
//! kind: [`lines`], [`bars`], [`heatmap`], [`intervals`]), [`markdown`] and [`csv`]
//! (long form). No experiment writes HTML, nor text layout for a typed
//! section (docs/views.md).

pub mod bars;
pub mod csv;
pub mod finding;
pub mod heatmap;
pub mod html;
pub mod intervals;
pub mod lines;
pub mod markdown;
mod model;
pub mod text;
pub mod verdict;

pub use finding::{Evidence, Finding, Rule, Severity};
pub use model::*;

use crate::results::schema::{ResultRecord, Run};

// ---------------------------------------------------------------- the trait

/// What an experiment shows, declared in its folder's `view.rs` and held by
/// the registry beside the experiment. Every method reads the run's records
/// (typed payloads); none measures. All but [`Views::rank`] default to
/// nothing.
pub trait Views: Sync {
    /// Its place among the others (verdict lines, key figures).
    fn rank(&self) -> Rank;

    /// Its sections of the summary, the report or its own command.
    fn sections(&self, _run: &Run, _depth: Depth) -> Vec<Section> {
        Vec::new()
    }

    /// Its lines of the verdict.
    fn verdict(&self, _run: &Run) -> Vec<VerdictLine> {
        Vec::new()
    }

    /// Its rules of advice (what its figures advise; docs/views.md).
    fn rules(&self) -> &'static [Rule] {
        &[]
    }

    /// The figures the fleet compares across hosts.
    fn key_figures(&self) -> &'static [KeyFigure] {
        &[]
    }

    /// Its section of the summary `cpuscope run` prints (and `show
    /// --summary`), from its records of the run; empty when it has nothing
    /// to show. By default [`Views::sections`] at [`Depth::Summary`] drawn
    /// by the text printer; an experiment whose sections are not typed yet
    /// writes it itself (docs/views.md).
    fn summary_text(&self, run: &Run) -> String {
        text::sections(&self.sections(run, Depth::Summary))
    }

    /// Its charts and tables in the HTML report (every figure is also in
    /// the report's results table); empty: none. By default
    /// [`Views::sections`] at [`Depth::Report`] drawn by the HTML printer.
    fn report_html(&self, run: &Run) -> String {
        html::sections(&self.sections(run, Depth::Report))
    }

    /// The curves one of its records carries (compare overlays them run by
    /// run); none for a record of another experiment.
    fn curves(&self, _rec: &ResultRecord) -> Vec<Curve> {
        Vec::new()
    }
}

//! What the seeds' workloads shows (docs/views.md): its place among the
//! experiments, its section of the summary, its charts in the report and the
//! figures the fleet compares across hosts.

use super::{BC_POW, OPENSSL_AES};
use crate::results::schema::Run;
use crate::view::{any, report_section, Depth, KeyFigure, Rank, Section, Views};

/// The views of this experiment (the registry holds it).
pub struct WorkloadsViews;

impl Views for WorkloadsViews {
    /// The summary: its figures, then the published comparisons; the
    /// report: its figures against the seeds' published ones.
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Report => report_section(depth, super::EXP, || {
                super::published_view::published_blocks(&run.results)
            }),
            Depth::Summary | Depth::Command => super::text::sections_of(&run.results),
        }
    }

    fn rank(&self) -> Rank {
        Rank(80)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: BC_POW,
        label: "bc 7^N",
        keep: any,
        top: None,
    },
    KeyFigure {
        id: OPENSSL_AES,
        label: "openssl AES",
        keep: any,
        top: None,
    },
];

//! What bandwidth shows beside its own section (docs/views.md): its place
//! among the experiments and the figures the fleet compares across hosts.

use super::{DRAM_SCOPE, TRIAD};
use crate::results::schema::ResultRecord;
use crate::view::{param_text, KeyFigure, Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct BandwidthViews;

impl Views for BandwidthViews {
    fn rank(&self) -> Rank {
        Rank(40)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// Triad with normal stores over a DRAM-sized buffer.
fn dram_triad(r: &ResultRecord) -> bool {
    param_text(r, "scope").as_deref() == Some(DRAM_SCOPE)
        && param_text(r, "store").as_deref() == Some("normal")
}

/// [`dram_triad`] on one thread.
fn dram_triad_one_thread(r: &ResultRecord) -> bool {
    dram_triad(r) && param_text(r, "threads").as_deref() == Some("1")
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: TRIAD,
        label: "triad, all threads",
        keep: dram_triad,
        top: Some("threads"),
    },
    KeyFigure {
        id: TRIAD,
        label: "triad, one thread",
        keep: dram_triad_one_thread,
        top: None,
    },
];

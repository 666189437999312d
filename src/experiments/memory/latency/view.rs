//! What the latency ladder shows beside its own section (docs/views.md): its place
//! among the experiments and the figures the fleet compares across hosts.

use super::{Pattern, DRAM, L1D, L2, L3};
use crate::results::schema::ResultRecord;
use crate::view::{param_text, KeyFigure, Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct LatencyViews;

impl Views for LatencyViews {
    fn rank(&self) -> Rank {
        Rank(20)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// The random pointer chase (the ladder's figures; the sequential one is
/// the prefetcher's).
fn random_chase(r: &ResultRecord) -> bool {
    param_text(r, "pattern").as_deref() == Some(Pattern::Random.name())
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: L1D,
        label: "L1d latency",
        keep: random_chase,
        top: None,
    },
    KeyFigure {
        id: L2,
        label: "L2 latency",
        keep: random_chase,
        top: None,
    },
    KeyFigure {
        id: L3,
        label: "L3 latency",
        keep: random_chase,
        top: None,
    },
    KeyFigure {
        id: DRAM,
        label: "DRAM latency",
        keep: random_chase,
        top: None,
    },
];

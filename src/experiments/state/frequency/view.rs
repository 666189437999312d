//! What the clock shows beside its own section (docs/views.md): its place
//! among the experiments and the figures the fleet compares across hosts.

use super::{ALL_CORES, SINGLE_CORE};
use crate::view::{any, KeyFigure, Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct FrequencyViews;

impl Views for FrequencyViews {
    fn rank(&self) -> Rank {
        Rank(10)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: SINGLE_CORE,
        label: "single-core clock",
        keep: any,
        top: None,
    },
    KeyFigure {
        id: ALL_CORES,
        label: "all-core clock",
        keep: any,
        top: None,
    },
];

//! What core-to-core latency shows beside its own section (docs/views.md): its place
//! among the experiments and the figures the fleet compares across hosts.

use super::ONE_WAY_LATENCY;
use crate::view::{any, KeyFigure, Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct C2cViews;

impl Views for C2cViews {
    fn rank(&self) -> Rank {
        Rank(50)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: ONE_WAY_LATENCY,
    label: "core-to-core latency",
    keep: any,
    top: None,
}];

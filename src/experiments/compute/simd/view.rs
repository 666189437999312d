//! What SIMD throughput and SMT yield shows beside its own section (docs/views.md): its place
//! among the experiments and the figures the fleet compares across hosts.

use super::BEST_THROUGHPUT;
use crate::view::{any, KeyFigure, Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct SimdViews;

impl Views for SimdViews {
    fn rank(&self) -> Rank {
        Rank(70)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: BEST_THROUGHPUT,
    label: "best SIMD throughput",
    keep: any,
    top: None,
}];

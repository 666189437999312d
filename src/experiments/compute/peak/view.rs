//! What peak FLOPs shows beside its own section (docs/views.md): its place
//! among the experiments and the figures the fleet compares across hosts.

use super::FMA_FLOPS;
use crate::results::schema::ResultRecord;
use crate::view::{param_text, KeyFigure, Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct PeakViews;

impl Views for PeakViews {
    fn rank(&self) -> Rank {
        Rank(60)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// One team member on every core.
fn per_core(r: &ResultRecord) -> bool {
    param_text(r, "threads").as_deref() == Some("per_core")
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: FMA_FLOPS,
    label: "peak FMA, every core",
    keep: per_core,
    top: None,
}];

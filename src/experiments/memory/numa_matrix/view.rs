//! What the NUMA matrix shows beside its own section (docs/views.md): its place
//! among the experiments and the figures the fleet compares across hosts.

use crate::view::{Rank, Views};

/// The views of this experiment (the registry holds it).
pub struct NumaMatrixViews;

impl Views for NumaMatrixViews {
    fn rank(&self) -> Rank {
        Rank(30)
    }
}

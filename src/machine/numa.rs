//! NUMA nodes: CPUs, memory, distances.

use super::Sysroot;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NumaNode {
    pub id: usize,
    pub cpus: crate::placement::CpuSet,
    pub memory_bytes: Option<u64>,
    pub distances: Vec<u32>,
}

pub fn read(sys: &Sysroot) -> Vec<NumaNode> {
    let _ = sys;
    Vec::new()
}

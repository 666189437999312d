//! Packages, dies, clusters, cores, hardware threads; online/offline/usable CPUs.

use super::Sysroot;
use crate::placement::CpuSet;
use anyhow::Result;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuLists {
    pub possible: CpuSet,
    pub present: CpuSet,
    pub online: CpuSet,
    pub offline: CpuSet,
    /// CPUs this process may run on (affinity and cgroup cpuset).
    pub usable: CpuSet,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Package {
    pub id: usize,
    pub cpus: CpuSet,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Core {
    pub package: usize,
    pub core_id: usize,
    pub cpus: CpuSet,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Thread {
    pub cpu: usize,
    pub package: usize,
    pub core_id: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub cpus: CpuLists,
    pub packages: Vec<Package>,
    pub cores: Vec<Core>,
    pub threads: Vec<Thread>,
}

pub fn read(sys: &Sysroot) -> Result<Topology> {
    let _ = sys;
    Ok(Topology::default())
}

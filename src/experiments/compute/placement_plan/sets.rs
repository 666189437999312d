//! What the planner returns: the CPU sets, the comparisons they answer, the
//! memory placements, the plan. Plain data.

use crate::base::CpuSet;
use crate::placement::MemPolicy;
use serde::Serialize;

/// One CPU set to run a workload on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlacementSet {
    /// Short stable name (`smt_siblings`, `two_cores`, `one_node`...).
    pub name: String,
    /// What the set is, in words, for this machine.
    pub what: String,
    /// The CPUs; None when not applicable.
    pub cpus: Option<CpuSet>,
    /// Why this set does not exist here.
    pub not_applicable: Option<String>,
}

impl PlacementSet {
    pub(super) fn ok(name: &str, what: String, cpus: CpuSet) -> PlacementSet {
        PlacementSet {
            name: name.into(),
            what,
            cpus: Some(cpus),
            not_applicable: None,
        }
    }
    pub(super) fn na(name: &str, what: &str, reason: impl Into<String>) -> PlacementSet {
        PlacementSet {
            name: name.into(),
            what: what.into(),
            cpus: None,
            not_applicable: Some(reason.into()),
        }
    }
}

/// Sets that answer one question, to be compared with each other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// `smt`, `l3`, `numa`, `spread`.
    pub name: String,
    pub question: String,
    pub sets: Vec<PlacementSet>,
}

impl Comparison {
    /// The set called `name`.
    pub fn set(&self, name: &str) -> Option<&PlacementSet> {
        self.sets.iter().find(|s| s.name == name)
    }
}

/// One thread on `cpu` with its memory placed by `policy`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryPlacement {
    /// `local`, `remote_near`, `remote_far`, `interleave`.
    pub name: String,
    pub what: String,
    pub cpu: Option<usize>,
    /// The policy in numactl-like notation (`bind:1`, `interleave:0-3`).
    pub policy_text: Option<String>,
    #[serde(skip)]
    pub policy: Option<MemPolicy>,
    /// Node distance between the CPU's node and the memory (sysfs), if known.
    pub distance: Option<u32>,
    pub not_applicable: Option<String>,
}

impl MemoryPlacement {
    /// A placement this machine cannot offer, with the reason.
    pub(super) fn na(name: &str, what: &str, cpu: Option<usize>, reason: &str) -> MemoryPlacement {
        MemoryPlacement {
            name: name.into(),
            what: what.into(),
            cpu,
            policy_text: None,
            policy: None,
            distance: None,
            not_applicable: Some(reason.into()),
        }
    }

    /// A thread on `cpu` with its memory placed by `policy`.
    pub(super) fn bound(
        name: &str,
        what: String,
        cpu: Option<usize>,
        policy: MemPolicy,
        distance: Option<u32>,
    ) -> MemoryPlacement {
        MemoryPlacement {
            name: name.into(),
            what,
            cpu,
            policy_text: Some(policy.to_string()),
            policy: Some(policy),
            distance,
            not_applicable: None,
        }
    }
}

/// Everything the placement study will run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// CPUs the plan draws from.
    pub usable: CpuSet,
    /// Cores per spread set (k), after capping to the usable cores.
    pub spread_k: usize,
    pub comparisons: Vec<Comparison>,
    pub memory: Vec<MemoryPlacement>,
    /// What the planner had to assume (missing topology facts).
    pub notes: Vec<String>,
}

impl Plan {
    pub fn comparison(&self, name: &str) -> Option<&Comparison> {
        self.comparisons.iter().find(|c| c.name == name)
    }
}

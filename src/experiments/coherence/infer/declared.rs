//! The topology the kernel declares for the measured CPUs, as partitions the
//! measured levels are set against. Never measures.

use crate::base::CpuSet;
use crate::machine::MachineInfo;
use serde::Serialize;
use std::collections::BTreeMap;

/// Declared sharing levels, finest first, in this canonical order when two
/// levels have the same partition.
pub const LEVEL_NAMES: &[(&str, &str)] = &[
    ("smt_sibling", "SMT siblings (same core)"),
    ("shared_l2", "shared L2"),
    ("shared_l3", "shared L3"),
    ("same_cluster", "same cluster"),
    ("same_die", "same die"),
    ("same_node", "same NUMA node"),
    ("same_package", "same package"),
];

/// Relation of two CPUs that share no declared level.
pub const CROSS_PACKAGE: &str = "cross_package";
/// Relation of two CPUs when the kernel declares nothing they could share.
pub const NOTHING_DECLARED: &str = "none_declared";

/// One declared level: a partition of the measured CPUs.
#[derive(Clone, Debug, Serialize)]
pub struct DeclaredLevel {
    /// Canonical names of the levels with this partition (e.g. `["shared_l3", "same_node"]`).
    pub names: Vec<String>,
    /// Human label (`shared L3 = same NUMA node`).
    pub label: String,
    /// Group number of each CPU (index into `Declared::cpus`).
    pub group_of: Vec<usize>,
    pub groups: usize,
}

impl DeclaredLevel {
    /// The relation name of two CPUs whose finest shared level is this one.
    pub fn relation(&self) -> &str {
        &self.names[0]
    }
}

/// The topology the kernel declares for the measured CPUs.
#[derive(Clone, Debug, Serialize)]
pub struct Declared {
    /// The CPUs, in matrix order.
    pub cpus: Vec<usize>,
    /// Levels, finest first (partitions with more groups first), excluding the
    /// whole machine.
    pub levels: Vec<DeclaredLevel>,
    /// Core (group of the SMT level) of each CPU; own index when cores are unknown.
    pub core_of: Vec<usize>,
    /// Levels the kernel does not declare for these CPUs, and why.
    pub notes: Vec<String>,
}

/// Partition from groups of CPU ids. CPUs in no group make the level unknown
/// (None); CPUs in two groups (overlapping lists) too.
pub(super) fn partition(cpus: &[usize], groups: &[CpuSet]) -> Option<Vec<usize>> {
    let mut of = vec![usize::MAX; cpus.len()];
    let mut seen = 0usize;
    let mut map: BTreeMap<usize, usize> = BTreeMap::new();
    for (g, set) in groups.iter().enumerate() {
        for (i, &c) in cpus.iter().enumerate() {
            if set.contains(c) {
                if of[i] != usize::MAX && of[i] != g {
                    return None;
                }
                of[i] = g;
            }
        }
    }
    if of.contains(&usize::MAX) {
        return None;
    }
    // Renumber groups 0.. in order of first appearance.
    for x in of.iter_mut() {
        let next = map.len();
        let id = *map.entry(*x).or_insert(next);
        *x = id;
        seen = seen.max(id + 1);
    }
    let _ = seen;
    Some(of)
}

pub(super) fn count_groups(of: &[usize]) -> usize {
    of.iter().copied().max().map(|m| m + 1).unwrap_or(0)
}

impl Declared {
    /// Build from named partitions given as CPU groups (used by tests and by
    /// [`Declared::from_machine`]). `parts` names must come from [`LEVEL_NAMES`];
    /// levels that do not cover every CPU are dropped with a note.
    pub fn from_groups(cpus: &[usize], parts: &[(&str, Vec<CpuSet>)]) -> Declared {
        let mut notes = Vec::new();
        let mut found: Vec<(usize, Vec<usize>)> = Vec::new(); // (canonical index, partition)
        for (name, groups) in parts {
            let Some(idx) = LEVEL_NAMES.iter().position(|(n, _)| n == name) else {
                notes.push(format!("unknown level name '{name}' ignored"));
                continue;
            };
            if groups.is_empty() {
                continue;
            }
            match partition(cpus, groups) {
                Some(p) => found.push((idx, p)),
                None => notes.push(format!(
                    "{}: the kernel's lists do not place every measured CPU in exactly one group; level left out",
                    LEVEL_NAMES[idx].1
                )),
            }
        }
        let core_of = found
            .iter()
            .find(|(i, _)| *i == 0)
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|| (0..cpus.len()).collect());
        // Merge identical partitions; drop the trivial "all in one" only when
        // nothing else names it (it still is a declared level, e.g. package).
        let mut levels: Vec<DeclaredLevel> = Vec::new();
        found.sort_by_key(|(i, _)| *i);
        for (idx, p) in found {
            if let Some(l) = levels.iter_mut().find(|l| l.group_of == p) {
                l.names.push(LEVEL_NAMES[idx].0.to_string());
                l.label = format!("{} = {}", l.label, LEVEL_NAMES[idx].1);
            } else {
                levels.push(DeclaredLevel {
                    names: vec![LEVEL_NAMES[idx].0.to_string()],
                    label: LEVEL_NAMES[idx].1.to_string(),
                    groups: count_groups(&p),
                    group_of: p,
                });
            }
        }
        // Finest first; stable, so canonical order breaks ties.
        levels.sort_by_key(|l| std::cmp::Reverse(l.groups));
        Declared {
            cpus: cpus.to_vec(),
            levels,
            core_of,
            notes,
        }
    }

    /// What the kernel declares about `cpus` in `machine`: cores, L2 and L3
    /// sharing, clusters and dies (when the topology room reports them), NUMA
    /// nodes and packages.
    pub fn from_machine(machine: &MachineInfo, cpus: &[usize]) -> Declared {
        let mut parts: Vec<(&str, Vec<CpuSet>)> = Vec::new();
        let mut missing = Vec::new();
        let cores: Vec<CpuSet> = machine.cores.iter().map(|c| c.cpus.clone()).collect();
        if cores.is_empty() {
            missing.push("cores (each CPU taken as its own core)");
        }
        parts.push(("smt_sibling", cores));
        for (lvl, name, what) in [
            (2, "shared_l2", "L2 sharing"),
            (3, "shared_l3", "L3 sharing"),
        ] {
            let g: Vec<CpuSet> = machine
                .caches
                .iter()
                .filter(|c| c.level == lvl && c.kind != "Instruction")
                .map(|c| c.shared_cpu_list.clone())
                .collect();
            if g.is_empty() {
                missing.push(what);
            }
            parts.push((name, g));
        }
        // Clusters and dies, as the machine reports them (none: empty).
        let clusters: Vec<CpuSet> = machine.clusters.iter().map(|c| c.cpus.clone()).collect();
        let dies: Vec<CpuSet> = machine.dies.iter().map(|d| d.cpus.clone()).collect();
        for (g, name) in [(clusters, "same_cluster"), (dies, "same_die")] {
            parts.push((name, g));
        }
        let nodes: Vec<CpuSet> = machine.numa_nodes.iter().map(|n| n.cpus.clone()).collect();
        if nodes.is_empty() {
            missing.push("NUMA nodes");
        }
        parts.push(("same_node", nodes));
        let mut packages: Vec<CpuSet> = machine.packages.iter().map(|p| p.cpus.clone()).collect();
        if packages.is_empty() && !machine.cores.is_empty() {
            let mut by: BTreeMap<usize, CpuSet> = BTreeMap::new();
            for c in &machine.cores {
                let e = by.entry(c.package).or_default();
                *e = e.union(&c.cpus);
            }
            packages = by.into_values().collect();
        }
        if packages.is_empty() {
            missing.push("packages");
        }
        parts.push(("same_package", packages));
        let mut d = Declared::from_groups(cpus, &parts);
        if !missing.is_empty() {
            d.notes.insert(
                0,
                format!(
                    "the machine snapshot does not declare: {}",
                    missing.join(", ")
                ),
            );
        }
        d
    }

    /// Index of a CPU id in `cpus`.
    pub fn index_of(&self, cpu: usize) -> Option<usize> {
        self.cpus.iter().position(|&c| c == cpu)
    }

    /// Finest declared level both CPUs (indices) belong to, if any.
    pub fn shared_level(&self, i: usize, j: usize) -> Option<&DeclaredLevel> {
        self.levels.iter().find(|l| l.group_of[i] == l.group_of[j])
    }

    /// Relation name of two CPUs (indices): the first name of their finest
    /// shared level, `cross_package` when packages are declared and differ,
    /// `none_declared` when nothing is declared.
    pub fn relation(&self, i: usize, j: usize) -> String {
        if let Some(l) = self.shared_level(i, j) {
            return l.relation().to_string();
        }
        if self
            .levels
            .iter()
            .any(|l| l.names.iter().any(|n| n == "same_package"))
        {
            CROSS_PACKAGE.to_string()
        } else {
            NOTHING_DECLARED.to_string()
        }
    }

    /// True when both CPUs (indices) are threads of one core.
    pub fn smt_siblings(&self, i: usize, j: usize) -> bool {
        i != j && self.core_of[i] == self.core_of[j]
    }
}

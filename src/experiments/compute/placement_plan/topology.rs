//! Where each usable CPU sits (core, package, node, L3) and the machine facts
//! the planner reads from it: the planner's one view of the topology. Pure.

use crate::base::CpuSet;
use crate::machine::MachineInfo;

/// Where one usable CPU sits.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loc {
    pub(super) cpu: usize,
    /// Index of its core (unknown cores: a unique id per CPU).
    pub(super) core: usize,
    pub(super) package: usize,
    pub(super) node: Option<usize>,
    pub(super) l3: Option<usize>,
}

impl Loc {
    /// Where `cpu` sits: its core, package, node and L3 instance (an index
    /// into `l3_sets`).
    fn locate(m: &MachineInfo, l3_sets: &[CpuSet], cpu: usize) -> Loc {
        let core_idx = m.cores.iter().position(|c| c.cpus.contains(cpu));
        let core = match core_idx {
            Some(i) => i,
            None => m.cores.len() + cpu,
        };
        let package = m
            .packages
            .iter()
            .find(|p| p.cpus.contains(cpu))
            .map(|p| p.id)
            .or_else(|| m.threads.iter().find(|t| t.cpu == cpu).map(|t| t.package))
            .or_else(|| core_idx.map(|i| m.cores[i].package))
            .unwrap_or(0);
        let node = m
            .numa_nodes
            .iter()
            .find(|n| n.cpus.contains(cpu))
            .map(|n| n.id);
        let l3 = l3_sets.iter().position(|s| s.contains(cpu));
        Loc {
            cpu,
            core,
            package,
            node,
            l3,
        }
    }
}

/// The distinct CPU lists of the machine's unified L3 caches, sorted.
fn l3_sets(m: &MachineInfo) -> Vec<CpuSet> {
    let mut l3_sets: Vec<CpuSet> = Vec::new();
    for c in &m.caches {
        if c.level == 3
            && !c.kind.eq_ignore_ascii_case("data")
            && !c.kind.eq_ignore_ascii_case("instruction")
            && !c.shared_cpu_list.is_empty()
            && !l3_sets.contains(&c.shared_cpu_list)
        {
            l3_sets.push(c.shared_cpu_list.clone());
        }
    }
    l3_sets.sort();
    l3_sets
}

pub(super) struct View {
    pub(super) locs: Vec<Loc>,
    /// Usable CPUs per core, by core id.
    pub(super) core_cpus: std::collections::BTreeMap<usize, Vec<usize>>,
    /// Node ids in the machine (sorted), with their distance rows.
    pub(super) nodes: Vec<(usize, Vec<u32>)>,
    /// Nodes this process may take memory from: with memory (or memory
    /// unknown) and in its allowed memory nodes.
    pub(super) mem_nodes: Vec<usize>,
    pub(super) l3_known: bool,
    pub(super) l3_instances: usize,
    pub(super) packages_known: bool,
}

impl View {
    pub(super) fn new(m: &MachineInfo, usable: &CpuSet, notes: &mut Vec<String>) -> View {
        let cores_known = !m.cores.is_empty();
        if !cores_known {
            notes.push("cores unknown: each CPU is treated as its own core".into());
        }
        let packages_known = !m.packages.is_empty()
            || !m.threads.is_empty()
            || m.cores.iter().any(|c| c.package != 0);
        if !packages_known {
            notes.push("packages unknown: every CPU is treated as one package".into());
        }
        let l3_sets = l3_sets(m);
        let l3_known = !l3_sets.is_empty();
        if m.numa_nodes.is_empty() {
            notes.push("NUMA nodes unknown: treated as one node".into());
        }
        let mut nodes: Vec<(usize, Vec<u32>)> = m
            .numa_nodes
            .iter()
            .map(|n| (n.id, n.distances.clone()))
            .collect();
        nodes.sort_by_key(|n| n.0);
        let mut mem_nodes: Vec<usize> = m
            .numa_nodes
            .iter()
            .filter(|n| n.usable && n.memory_bytes != Some(0))
            .map(|n| n.id)
            .collect();
        mem_nodes.sort_unstable();
        let mut locs = Vec::new();
        let mut core_cpus: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for cpu in usable.iter() {
            let loc = Loc::locate(m, &l3_sets, cpu);
            locs.push(loc);
            core_cpus.entry(loc.core).or_default().push(cpu);
        }
        View {
            locs,
            core_cpus,
            nodes,
            mem_nodes,
            l3_known,
            l3_instances: l3_sets.len(),
            packages_known,
        }
    }

    /// One location per core: the lowest usable CPU of each core.
    pub(super) fn primaries(&self) -> Vec<Loc> {
        let mut out: Vec<Loc> = Vec::new();
        for l in &self.locs {
            if !out.iter().any(|o| o.core == l.core) {
                out.push(*l);
            }
        }
        out
    }

    pub(super) fn distance(&self, from: usize, to: usize) -> Option<u32> {
        let row = &self.nodes.iter().find(|n| n.0 == from)?.1;
        let j = self.nodes.iter().position(|n| n.0 == to)?;
        row.get(j).copied()
    }

    /// The first pair (a < b, by CPU id) of primaries satisfying `pred`.
    pub(super) fn pair(&self, pred: impl Fn(&Loc, &Loc) -> bool) -> Option<(Loc, Loc)> {
        let p = self.primaries();
        for (i, a) in p.iter().enumerate() {
            for b in &p[i + 1..] {
                if pred(a, b) {
                    return Some((*a, *b));
                }
            }
        }
        None
    }

    /// Usable primaries (one per core) in node `n`.
    pub(super) fn cores_in_node(&self, n: Option<usize>) -> Vec<Loc> {
        self.primaries()
            .into_iter()
            .filter(|l| l.node == n)
            .collect()
    }

    /// Distinct node ids holding usable CPUs, ascending.
    pub(super) fn cpu_nodes(&self) -> Vec<Option<usize>> {
        let mut v: Vec<Option<usize>> = self.locs.iter().map(|l| l.node).collect();
        v.sort();
        v.dedup();
        v
    }

    pub(super) fn package_of_node(&self, n: Option<usize>) -> Option<usize> {
        self.locs.iter().find(|l| l.node == n).map(|l| l.package)
    }
}

pub(super) fn set_of(locs: &[Loc]) -> CpuSet {
    locs.iter().map(|l| l.cpu).collect()
}

pub(super) fn node_text(n: Option<usize>) -> String {
    n.map(|n| format!("node {n}"))
        .unwrap_or_else(|| "unknown node".into())
}

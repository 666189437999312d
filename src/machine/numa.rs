//! NUMA nodes: CPUs, memory, distances, huge pages. Read from
//! `/sys/devices/system/node/nodeN`; when that directory is absent (kernel
//! without NUMA support) the machine is one implicit node, said so in `NumaSummary::note`.

use crate::base::CpuSet;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

const NODE_DIR: &str = "/sys/devices/system/node";

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NumaNode {
    pub id: usize,
    /// CPUs of the node as the kernel lists them (may include offline CPUs on old kernels).
    pub cpus: crate::base::CpuSet,
    /// MemTotal of the node; null when not known (`memory_note` says why).
    pub memory_bytes: Option<u64>,
    /// MemFree of the node; null when not known.
    pub free_bytes: Option<u64>,
    pub memory_note: Option<String>,
    /// Distances to the nodes of `NumaSummary::nodes`, in that order (10 = local); empty when not known.
    pub distances: Vec<u32>,
    /// Huge page pools of this node.
    pub hugepages: Vec<HugePages>,
    /// May this process allocate here (cgroup cpuset mems / Mems_allowed)?
    pub usable: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct HugePages {
    pub page_bytes: u64,
    pub total: Option<u64>,
    pub free: Option<u64>,
}

/// Facts about NUMA as a whole.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NumaSummary {
    /// Node ids in the order of `numa_nodes` and of each node's `distances`.
    pub nodes: CpuSet,
    /// `possible` node list; null if the kernel does not say.
    pub possible: Option<CpuSet>,
    /// True when the kernel exposes no node directory and the machine is taken as one node.
    pub implicit: bool,
    /// Nodes with memory and no CPU (CXL, HBM, or CPUs offline/absent).
    pub memory_only: CpuSet,
    /// Nodes with CPUs and no memory.
    pub cpu_only: CpuSet,
    /// Nodes this process may allocate from.
    pub usable: CpuSet,
    /// Where `usable` came from.
    pub usable_source: String,
    pub note: Option<String>,
}

fn hugepages(sys: &Sysroot, dir: &str) -> Vec<HugePages> {
    let mut v: Vec<HugePages> = sys
        .list_dir(dir)
        .iter()
        .filter_map(|name| {
            let kb: u64 = name
                .strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()?;
            Some(HugePages {
                page_bytes: kb * 1024,
                total: sys.read_u64(&format!("{dir}/{name}/nr_hugepages")),
                free: sys.read_u64(&format!("{dir}/{name}/free_hugepages")),
            })
        })
        .collect();
    v.sort_by_key(|h| h.page_bytes);
    v
}

/// Read the NUMA nodes. `online` is used only for the implicit node;
/// `mems_allowed` (None = unrestricted) marks nodes this process may use.
pub fn read(
    sys: &Sysroot,
    online: &CpuSet,
    mems_allowed: Option<&CpuSet>,
    mems_source: &str,
) -> (Vec<NumaNode>, NumaSummary) {
    let ids = sys.list_numbered(NODE_DIR, "node");
    let mut summary = NumaSummary {
        possible: sys.read_cpulist(&format!("{NODE_DIR}/possible")),
        usable_source: mems_source.to_string(),
        ..Default::default()
    };
    let mut nodes = Vec::new();
    if ids.is_empty() {
        nodes.push(implicit_node(sys, online, &mut summary));
    } else {
        for id in &ids {
            nodes.push(read_node(sys, *id, mems_allowed));
        }
        note_overlapping_cpus(&nodes, &mut summary);
        drop_unsquare_distances(&mut nodes, &mut summary);
    }
    summarise_nodes(&nodes, &mut summary);
    (nodes, summary)
}

/// MemTotal and MemFree of a meminfo text, each when present.
fn total_and_free(meminfo: Option<&str>) -> (Option<u64>, Option<u64>) {
    let field = |name| meminfo.and_then(|t| crate::base::meminfo::field(t, name));
    (field("MemTotal"), field("MemFree"))
}

/// The one node 0 of a kernel without NUMA support: the online CPUs and
/// /proc/meminfo. Marks `summary` implicit and says why.
fn implicit_node(sys: &Sysroot, online: &CpuSet, summary: &mut NumaSummary) -> NumaNode {
    let meminfo = sys.read_raw("/proc/meminfo");
    let (total, free) = total_and_free(meminfo.as_deref());
    summary.implicit = true;
    summary.note = Some(format!(
        "{NODE_DIR} is absent (kernel without NUMA support): the whole machine is taken as one node 0"
    ));
    NumaNode {
        id: 0,
        cpus: online.clone(),
        memory_bytes: total,
        free_bytes: free,
        memory_note: if total.is_some() {
            Some("from /proc/meminfo".into())
        } else {
            Some("not known: /proc/meminfo has no MemTotal".into())
        },
        distances: Vec::new(),
        hugepages: hugepages(sys, "/sys/kernel/mm/hugepages"),
        usable: true,
    }
}

/// One node from `/sys/devices/system/node/node{id}`.
fn read_node(sys: &Sysroot, id: usize, mems_allowed: Option<&CpuSet>) -> NumaNode {
    let d = format!("{NODE_DIR}/node{id}");
    let cpus = sys
        .read_cpulist(&format!("{d}/cpulist"))
        .or_else(|| sys.read_cpumask(&format!("{d}/cpumap")))
        .unwrap_or_default();
    let meminfo = sys.read_raw(&format!("{d}/meminfo"));
    let (total, free) = total_and_free(meminfo.as_deref());
    let memory_note = match (&meminfo, total) {
        (None, _) => Some(format!("not known: {d}/meminfo is missing")),
        (Some(_), None) => Some(format!("not known: {d}/meminfo has no MemTotal")),
        _ => None,
    };
    let distances: Vec<u32> = sys
        .read_string(&format!("{d}/distance"))
        .map(|s| {
            s.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    NumaNode {
        id,
        cpus,
        memory_bytes: total,
        free_bytes: free,
        memory_note,
        distances,
        hugepages: hugepages(sys, &format!("{d}/hugepages")),
        usable: mems_allowed.is_none_or(|m| m.contains(id)),
    }
}

// A CPU belongs to one node: node CPU lists that overlap come from fake
// NUMA or a firmware bug (hwloc then keeps only one of the nodes). The
// nodes are kept as the kernel lists them, and the overlap is said.
fn note_overlapping_cpus(nodes: &[NumaNode], summary: &mut NumaSummary) {
    let mut seen = CpuSet::new();
    let mut twice = CpuSet::new();
    for n in nodes {
        twice = twice.union(&n.cpus.intersection(&seen));
        seen = seen.union(&n.cpus);
    }
    if !twice.is_empty() {
        summary.note = Some(format!(
            "CPUs {twice} are listed in more than one NUMA node (fake NUMA or a firmware bug): \
             each such CPU is counted in its first node"
        ));
    }
}

// Distances must form a square matrix over the listed nodes; otherwise drop them.
fn drop_unsquare_distances(nodes: &mut [NumaNode], summary: &mut NumaSummary) {
    let n = nodes.len();
    if nodes.iter().any(|x| x.distances.len() != n) {
        for x in nodes.iter_mut() {
            x.distances.clear();
        }
        let msg = "node distance rows do not match the node list: distances not reported";
        summary.note = Some(match summary.note.take() {
            Some(n) => format!("{n}; {msg}"),
            None => msg.to_string(),
        });
    }
}

/// Fill the node sets of `summary` (all, memory-only, CPU-only, usable) from `nodes`.
fn summarise_nodes(nodes: &[NumaNode], summary: &mut NumaSummary) {
    summary.nodes = nodes.iter().map(|n| n.id).collect();
    summary.memory_only = nodes
        .iter()
        .filter(|n| n.cpus.is_empty() && n.memory_bytes.unwrap_or(0) > 0)
        .map(|n| n.id)
        .collect();
    summary.cpu_only = nodes
        .iter()
        .filter(|n| !n.cpus.is_empty() && n.memory_bytes == Some(0))
        .map(|n| n.id)
        .collect();
    summary.usable = nodes.iter().filter(|n| n.usable).map(|n| n.id).collect();
}

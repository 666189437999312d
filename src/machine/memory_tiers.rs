//! Memory tiers as the firmware and the kernel declare them (issue 36): the
//! ACPI HMAT's performance per memory node and its initiators
//! (`/sys/devices/system/node/nodeN/accessC/initiators/`: `read_latency`,
//! `write_latency` in ns, `read_bandwidth`, `write_bandwidth` in MB/s, and
//! the initiator nodes as `nodeM` links; access class 0 is the best any
//! initiator gets, class 1 the best a CPU gets), the memory-side caches
//! in front of a node (`nodeN/memory_side_cache/indexK/`: `size`,
//! `line_size`, `indexing`, `write_policy`), and the kernel's memory tiers
//! (`/sys/devices/virtual/memory_tiering/memory_tierT/nodelist`; a lower
//! tier number is faster memory). Documentation/admin-guide/mm/numaperf.rst
//! and Documentation/ABI/stable/sysfs-devices-node give the units.
//!
//! Read only, and declared, never measured: these are the figures a
//! measured local/remote latency and bandwidth are set beside. A machine
//! whose firmware has no HMAT (most two-socket servers, every VM without
//! `hmat=on`) has none of these files; then `MemoryTiers::declared` is
//! false and `note` says why.

use crate::base::{CpuSet, Sysroot};
use serde::{Deserialize, Serialize};

const NODE_DIR: &str = "/sys/devices/system/node";
const TIER_DIR: &str = "/sys/devices/virtual/memory_tiering";

/// The performance the firmware declares for one node's memory from one
/// access class of initiators.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Access {
    /// 0: the best performance from any initiator (CPU or device); 1: from
    /// a CPU.
    pub class: u32,
    /// The initiator nodes this performance is declared for.
    pub initiators: CpuSet,
    /// Null when the firmware did not give it (the kernel shows 0).
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
    pub read_bandwidth_mb_s: Option<u64>,
    pub write_bandwidth_mb_s: Option<u64>,
}

impl Access {
    /// The same initiators and figures (access0 and access1 often are).
    pub fn same_as(&self, other: &Access) -> bool {
        Access {
            class: other.class,
            ..self.clone()
        } == *other
    }
}

/// A memory-side cache in front of a node's memory (HBM or DRAM caching a
/// slower tier).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct SideCache {
    /// The `indexK` directory's K (1 is nearest the memory's users).
    pub level: u32,
    pub size_bytes: Option<u64>,
    pub line_bytes: Option<u64>,
    /// `direct-mapped`, `indexed` or the kernel's number when another.
    pub indexing: Option<String>,
    /// `write-back`, `write-through` or the kernel's number when another.
    pub write_policy: Option<String>,
}

/// What the firmware declares about one node's memory.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct NodeTier {
    pub node: usize,
    pub access: Vec<Access>,
    pub side_caches: Vec<SideCache>,
    /// The kernel's memory tier holding the node (`memory_tierT`), if any.
    pub tier: Option<u32>,
    /// True for a node with memory and no CPU (a CXL expander's or a far
    /// tier's shape), false for a node with CPUs; null when `cpulist` is
    /// not readable.
    pub memory_only: Option<bool>,
}

impl NodeTier {
    /// What the node is: `memory-only` or `CPUs and memory`, or None.
    pub fn kind(&self) -> Option<&'static str> {
        self.memory_only
            .map(|m| if m { "memory-only" } else { "CPUs and memory" })
    }

    /// The access class declared for initiator node `from` (the CPU class
    /// first, then any initiator), if any: Linux lists each target's best
    /// initiators only, so another node's figures are not declared here.
    pub fn declared_for(&self, from: usize) -> Option<&Access> {
        let mut v: Vec<&Access> = self
            .access
            .iter()
            .filter(|a| a.initiators.contains(from))
            .collect();
        v.sort_by_key(|a| std::cmp::Reverse(a.class));
        v.first().copied()
    }
}

/// The memory tiers of the machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct MemoryTiers {
    /// True when the kernel published any HMAT access class or
    /// memory-side cache.
    pub declared: bool,
    /// Nodes with something declared, by node id.
    pub nodes: Vec<NodeTier>,
    /// The kernel's tiers: (tier number, its nodes), fastest first.
    pub tiers: Vec<(u32, CpuSet)>,
    /// Why nothing is declared (no HMAT), when it is not.
    pub note: Option<String>,
    /// The raw ACPI table: every initiator–target pair (sysfs lists each
    /// target's best initiators only), or why it was not read.
    pub hmat_table: super::hmat::HmatTable,
}

impl MemoryTiers {
    /// True when there is nothing to show: no HMAT figure in sysfs, no raw
    /// table read (a kernel older than sysfs's HMAT files may still let root
    /// read the table) and at most one kernel tier (every node in the
    /// default tier says nothing).
    pub fn is_empty(&self) -> bool {
        !self.declared && !self.hmat_table.read && self.tiers.len() <= 1
    }
}

fn access(sys: &Sysroot, node: usize, class: u32) -> Option<Access> {
    let dir = format!("{NODE_DIR}/node{node}/access{class}/initiators");
    if !sys.is_dir(&dir) {
        return None;
    }
    // The kernel shows 0 for a figure the firmware did not give.
    let read = |f: &str| sys.read_u64(&format!("{dir}/{f}")).filter(|&v| v > 0);
    let a = Access {
        class,
        initiators: sys
            .list_numbered(&dir, "node")
            .into_iter()
            .collect::<CpuSet>(),
        read_latency_ns: read("read_latency"),
        write_latency_ns: read("write_latency"),
        read_bandwidth_mb_s: read("read_bandwidth"),
        write_bandwidth_mb_s: read("write_bandwidth"),
    };
    // An initiator node has the directory too (its `targets/` beside it),
    // with nothing in it: that declares nothing about its memory.
    let empty = a.initiators.is_empty()
        && [
            a.read_latency_ns,
            a.write_latency_ns,
            a.read_bandwidth_mb_s,
            a.write_bandwidth_mb_s,
        ]
        .iter()
        .all(Option::is_none);
    (!empty).then_some(a)
}

fn named(v: Option<u64>, names: [&str; 2]) -> Option<String> {
    v.map(|n| match n {
        0 | 1 => names[n as usize].to_string(),
        n => n.to_string(),
    })
}

fn side_caches(sys: &Sysroot, node: usize) -> Vec<SideCache> {
    let dir = format!("{NODE_DIR}/node{node}/memory_side_cache");
    sys.list_numbered(&dir, "index")
        .into_iter()
        .map(|k| {
            let read = |f: &str| sys.read_u64(&format!("{dir}/index{k}/{f}"));
            SideCache {
                level: k as u32,
                size_bytes: read("size"),
                line_bytes: read("line_size"),
                indexing: named(read("indexing"), ["direct-mapped", "indexed"]),
                write_policy: named(read("write_policy"), ["write-back", "write-through"]),
            }
        })
        .collect()
}

/// The kernel's memory tiers, fastest (lowest number) first.
fn tiers(sys: &Sysroot) -> Vec<(u32, CpuSet)> {
    sys.list_numbered(TIER_DIR, "memory_tier")
        .into_iter()
        .filter_map(|t| {
            let nodes = sys.read_cpulist(&format!("{TIER_DIR}/memory_tier{t}/nodelist"))?;
            Some((t as u32, nodes))
        })
        .collect()
}

/// Read what is declared for `nodes` (the machine's node ids).
pub fn read(sys: &Sysroot, nodes: &[usize]) -> MemoryTiers {
    let tiers = tiers(sys);
    let mut out = MemoryTiers::default();
    for &node in nodes {
        let access: Vec<Access> = (0..2).filter_map(|c| access(sys, node, c)).collect();
        let side_caches = side_caches(sys, node);
        let tier = tiers
            .iter()
            .find(|(_, set)| set.contains(node))
            .map(|&(t, _)| t);
        if !access.is_empty() || !side_caches.is_empty() {
            out.declared = true;
        }
        if !access.is_empty() || !side_caches.is_empty() || tiers.len() > 1 {
            let cpus = sys.read_cpulist(&format!("{NODE_DIR}/node{node}/cpulist"));
            out.nodes.push(NodeTier {
                node,
                access,
                side_caches,
                tier,
                memory_only: cpus.map(|c| c.is_empty()),
            });
        }
    }
    if !out.declared {
        out.note = Some(
            "no node has access0/ or memory_side_cache/: the firmware declares no memory performance \
             (no ACPI HMAT; usual on two-socket servers and VMs)"
                .into(),
        );
    }
    out.tiers = tiers;
    out.hmat_table = super::hmat::read(sys);
    out
}

impl MemoryTiers {
    /// The declared read latency (ns) or read bandwidth (MB/s) from
    /// initiator node `from` to node `to`, and where it was read: the raw
    /// table first (every pair; its proximity domains taken as node ids),
    /// then sysfs (the CPU class first). Err(why) when neither declares it.
    pub fn declared_read(
        &self,
        from: usize,
        to: usize,
        latency: bool,
    ) -> Result<(f64, String), String> {
        let t = &self.hmat_table;
        let pick = |want: &str| {
            t.pairs.iter().find(|p| {
                p.initiator_pxm as usize == from
                    && p.target_pxm as usize == to
                    && p.hierarchy == "memory"
                    && p.data_type == want
            })
        };
        let (read, access) = if latency {
            ("read_latency", "access_latency")
        } else {
            ("read_bandwidth", "access_bandwidth")
        };
        let raw = pick(read).or_else(|| pick(access));
        if let Some(p) = raw {
            return match p.value {
                Some(v) => Ok((
                    v,
                    format!("raw HMAT table, {} PXM {from} → PXM {to}", p.data_type),
                )),
                None => Err(format!(
                    "the raw HMAT table declares node {to} unreachable from node {from}"
                )),
            };
        }
        let Some(node) = self.nodes.iter().find(|n| n.node == to) else {
            return Err(format!("the firmware declares nothing for node {to}"));
        };
        let Some(a) = node.declared_for(from) else {
            let listed: Vec<String> = node
                .access
                .iter()
                .map(|a| format!("access{} from nodes {}", a.class, a.initiators))
                .collect();
            let table = if t.read {
                "the raw HMAT table has no such pair either"
            } else {
                t.note
                    .as_deref()
                    .unwrap_or("the raw HMAT table was not read")
            };
            return Err(format!(
                "not declared for initiator node {from}: Linux lists node {to}'s best initiators only ({}); {table}",
                if listed.is_empty() { "none".to_string() } else { listed.join(", ") }
            ));
        };
        let v = if latency {
            a.read_latency_ns
        } else {
            a.read_bandwidth_mb_s
        };
        match v {
            Some(v) => Ok((
                v as f64,
                format!(
                    "HMAT access{} via sysfs, initiators {}",
                    a.class, a.initiators
                ),
            )),
            None => Err(format!(
                "HMAT access{} gives node {to} no {}",
                a.class,
                read.replace('_', " ")
            )),
        }
    }
}

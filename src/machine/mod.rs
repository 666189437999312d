//! What the machine is, read from sysfs/procfs under a configurable root.
//! This room never measures: it only reads files.

pub mod cache;
pub mod cgroup;
pub mod devices;
pub mod freq;
pub mod identity;
pub mod isa;
pub mod knobs;
pub mod numa;
pub mod process;
pub mod topology;

use crate::placement::CpuSet;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Name and version of the `info` JSON document.
pub const INFO_SCHEMA: &str = "cpuscope.info/1";

/// A filesystem root holding `sys/` and `proc/` (normally `/`).
#[derive(Clone, Debug)]
pub struct Sysroot {
    root: PathBuf,
}

impl Sysroot {
    /// Open a root; fails with a one-line error if it holds no sysfs CPU tree.
    pub fn new(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref().to_path_buf();
        if !root.is_dir() {
            bail!("sysroot '{}' is not a directory", root.display());
        }
        let cpu = root.join("sys/devices/system/cpu");
        if !cpu.is_dir() {
            bail!(
                "sysroot '{}' is not a sysfs root: it has no sys/devices/system/cpu",
                root.display()
            );
        }
        Ok(Sysroot { root })
    }

    /// True when this is the running system (root `/`), so live-only facts
    /// (own affinity, cpuid) may be consulted.
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Path of an absolute system path (e.g. `/sys/devices/system/cpu`) under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// File contents, trimmed of whitespace and NUL bytes (some recorded trees
    /// end sysfs files with `\n\0`); None if missing or unreadable.
    pub fn read_string(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok().map(|s| {
            s.trim_matches(|c: char| c.is_whitespace() || c == '\0')
                .to_string()
        })
    }

    /// File contents as they are (not trimmed).
    pub fn read_raw(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }

    pub fn read_u64(&self, rel: &str) -> Option<u64> {
        self.read_string(rel)?.parse().ok()
    }

    pub fn read_i64(&self, rel: &str) -> Option<i64> {
        self.read_string(rel)?.parse().ok()
    }

    /// A file holding a CPU list (`0-3,8`).
    pub fn read_cpulist(&self, rel: &str) -> Option<CpuSet> {
        CpuSet::parse(&self.read_string(rel)?).ok()
    }

    /// A file holding a kernel hex CPU mask (`00000000,0000000f`).
    pub fn read_cpumask(&self, rel: &str) -> Option<CpuSet> {
        CpuSet::parse_mask(&self.read_string(rel)?).ok()
    }

    /// A CPU set from `<base>_list` (a list) or, on old kernels, `<base>` (a mask).
    /// `base` is e.g. `/sys/devices/system/cpu/cpu0/topology/thread_siblings`.
    pub fn read_cpulist_or_mask(&self, base: &str) -> Option<CpuSet> {
        self.read_cpulist(&format!("{base}_list"))
            .or_else(|| self.read_cpumask(base))
    }

    /// Names of the entries of a directory, sorted; empty if missing.
    pub fn list_dir(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = match std::fs::read_dir(self.path(rel)) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }

    /// Entries `prefixN` of a directory (e.g. `cpu0`, `node3`), as sorted ids.
    pub fn list_numbered(&self, rel: &str, prefix: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .list_dir(rel)
            .iter()
            .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
            .collect();
        v.sort_unstable();
        v
    }
}

/// Everything `cpuscope info` knows about a machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MachineInfo {
    pub schema: String,
    /// The root the facts were read from (`/` for this machine).
    pub sysroot: String,
    pub identity: identity::Identity,
    pub cpus: topology::CpuLists,
    pub packages: Vec<topology::Package>,
    pub dies: Vec<topology::Die>,
    pub clusters: Vec<topology::Cluster>,
    pub cores: Vec<topology::Core>,
    pub threads: Vec<topology::Thread>,
    pub smt: topology::Smt,
    /// Kinds of cores on hybrid machines (P/E, big.LITTLE); empty when all cores are alike.
    pub core_kinds: Vec<topology::CoreKind>,
    pub numa_nodes: Vec<numa::NumaNode>,
    pub numa: numa::NumaSummary,
    pub caches: Vec<cache::CacheInstance>,
    /// Why `caches` is empty; null when caches were read.
    pub caches_unavailable: Option<String>,
    /// Things missing or odd in the topology files (old kernels, unknown ids).
    pub topology_notes: Vec<String>,
    pub isa: isa::Isa,
    pub frequency: freq::Frequency,
    pub knobs: knobs::Knobs,
    pub devices: devices::Devices,
}

impl MachineInfo {
    /// The thread record of a CPU (online CPUs only).
    pub fn thread(&self, cpu: usize) -> Option<&topology::Thread> {
        self.threads.iter().find(|t| t.cpu == cpu)
    }

    /// The core a CPU belongs to.
    pub fn core_of(&self, cpu: usize) -> Option<&topology::Core> {
        self.cores.get(self.thread(cpu)?.core)
    }

    /// Cores with at least one CPU this process may use.
    pub fn usable_cores(&self) -> impl Iterator<Item = &topology::Core> {
        self.cores
            .iter()
            .filter(|c| c.cpus.iter().any(|x| self.cpus.usable.contains(x)))
    }

    /// Packages with at least one CPU this process may use.
    pub fn usable_packages(&self) -> impl Iterator<Item = &topology::Package> {
        self.packages
            .iter()
            .filter(|p| p.cpus.iter().any(|x| self.cpus.usable.contains(x)))
    }

    /// Cache instances of one level and type letter ("d", "i", "" for unified),
    /// e.g. `caches_named("L1d")`, `caches_named("L3")`.
    pub fn caches_named(&self, name: &str) -> Vec<&cache::CacheInstance> {
        self.caches.iter().filter(|c| c.name() == name).collect()
    }

    /// The largest cache level present (the last level cache), if any.
    pub fn last_level(&self) -> Option<u32> {
        self.caches.iter().map(|c| c.level).max()
    }

    /// NUMA node of a CPU.
    pub fn node_of(&self, cpu: usize) -> Option<usize> {
        self.thread(cpu)?.node
    }
}

/// Read everything about the machine under `sys`.
pub fn discover(sys: &Sysroot) -> Result<MachineInfo> {
    let mut topo = topology::read(sys)?;
    let (numa_nodes, numa) = numa::read(
        sys,
        &topo.cpus.online,
        topo.mems_allowed.as_ref(),
        &topo.mems_allowed_source,
    );
    topology::assign_nodes(&mut topo, &numa_nodes);
    let (caches, caches_unavailable) = cache::read(sys, &topo.cpus.online, &topo.cores);
    Ok(MachineInfo {
        schema: INFO_SCHEMA.to_string(),
        sysroot: sys.root().display().to_string(),
        identity: identity::read(sys),
        cpus: topo.cpus,
        packages: topo.packages,
        dies: topo.dies,
        clusters: topo.clusters,
        cores: topo.cores,
        threads: topo.threads,
        smt: topo.smt,
        core_kinds: topo.core_kinds,
        numa_nodes,
        numa,
        caches,
        caches_unavailable,
        topology_notes: topo.notes,
        isa: isa::read(sys),
        frequency: freq::read(sys),
        knobs: knobs::read(sys),
        devices: devices::read(sys),
    })
}

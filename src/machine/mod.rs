//! What the machine is, read from sysfs/procfs under a configurable root.
//! This room never measures: it only reads files.

pub mod activity;
pub mod cache;
pub mod cgroup;
pub mod container;
pub mod devices;
pub mod dimm;
pub mod freq;
pub mod gather;
pub mod hmat;
pub mod identity;
pub mod isa;
pub mod knobs;
pub mod limits;
pub mod live;
pub mod memory_tiers;
pub mod numa;
pub mod numa_memory;
pub mod process;
pub mod topology;
pub mod uarch;

use crate::base::Sysroot;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Name and version of the `info` JSON document.
pub const INFO_SCHEMA: &str = "cpuscope.info/1";

/// Everything `cpuscope info` knows about a machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
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
    /// Memory per node as the kernel accounts it: free, page cache, anon,
    /// zone watermarks, reclaim knobs, numastat counters, advice.
    pub numa_memory: numa_memory::NumaMemory,
    /// Memory tiers as the firmware (ACPI HMAT) and the kernel declare
    /// them: per node, each access class's latency and bandwidth with its
    /// initiators, memory-side caches, the kernel's tier; or why none.
    pub memory_tiers: memory_tiers::MemoryTiers,
    pub caches: Vec<cache::CacheInstance>,
    /// Why `caches` is empty; null when caches were read.
    pub caches_unavailable: Option<String>,
    /// Documented levels the kernel does not list and cpuscope could not
    /// place (a shared level whose sharing is unknown), each with its source.
    pub caches_documented_notes: Vec<String>,
    /// Things missing or odd in the topology files (old kernels, unknown ids).
    pub topology_notes: Vec<String>,
    /// Files read under the root that were refused (not regular files, too
    /// large) or had bytes that are not UTF-8 (`Sysroot::notes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_notes: Vec<String>,
    pub isa: isa::Isa,
    pub frequency: freq::Frequency,
    pub knobs: knobs::Knobs,
    pub devices: devices::Devices,
    /// DIMMs from SMBIOS type 17, or why they are not known.
    pub memory_devices: dimm::MemoryDevices,
    /// The cores as cpuscope's knowledge base knows them (data/uarch/).
    pub uarch: uarch::Recognition,
    /// Whether this process runs in a container, and the signs seen.
    pub container: container::Container,
    /// The limits of this process's cgroup besides the cpuset (in
    /// `cpus.cgroup`): memory and what is left under it, CPU quota.
    pub limits: limits::Limits,
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
    let numa_memory = if numa.implicit {
        numa_memory::NumaMemory::default()
    } else {
        let ids: Vec<usize> = numa_nodes.iter().map(|n| n.id).collect();
        numa_memory::read(sys, &ids)
    };
    let memory_tiers = {
        let ids: Vec<usize> = numa_nodes.iter().map(|n| n.id).collect();
        memory_tiers::read(sys, &ids)
    };
    let (mut caches, caches_unavailable) = cache::read(sys, &topo.cpus.online, &topo.cores);
    let identity = identity::read(sys);
    let isa = isa::read(sys);
    let uarch = uarch::recognise(&identity, &isa, &topo.core_kinds, &topo.cpus.online);
    // Sizes the kernel leaves out, from the core's entry (labelled as such).
    let caches_documented_notes = if caches_unavailable.is_none() {
        cache::fill_documented(&mut caches, &topo.cores, &topo.cpus.online, |cpu| {
            uarch.core_for(cpu).ok()
        })
    } else {
        Vec::new()
    };
    Ok(MachineInfo {
        schema: INFO_SCHEMA.to_string(),
        sysroot: sys.shown(),
        identity,
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
        numa_memory,
        memory_tiers,
        caches,
        caches_unavailable,
        caches_documented_notes,
        topology_notes: topo.notes,
        isa,
        frequency: freq::read(sys),
        knobs: knobs::read(sys),
        devices: devices::read(sys),
        memory_devices: dimm::read(sys),
        uarch,
        container: container::read(sys),
        limits: limits::read(sys),
        read_notes: sys.notes(),
    })
}

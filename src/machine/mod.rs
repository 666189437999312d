//! What the machine is, read from sysfs/procfs under a configurable root.
//! This room never measures: it only reads files.

pub mod cache;
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

    /// File contents, trimmed; None if missing or unreadable.
    pub fn read_string(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel))
            .ok()
            .map(|s| s.trim().to_string())
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
    pub identity: identity::Identity,
    pub cpus: topology::CpuLists,
    pub packages: Vec<topology::Package>,
    pub cores: Vec<topology::Core>,
    pub threads: Vec<topology::Thread>,
    pub numa_nodes: Vec<numa::NumaNode>,
    pub caches: Vec<cache::CacheInstance>,
    pub isa: isa::Isa,
    pub frequency: freq::Frequency,
    pub knobs: knobs::Knobs,
    pub devices: devices::Devices,
}

/// Read everything about the machine under `sys`.
pub fn discover(sys: &Sysroot) -> Result<MachineInfo> {
    let topo = topology::read(sys)?;
    Ok(MachineInfo {
        schema: INFO_SCHEMA.to_string(),
        identity: identity::read(sys),
        cpus: topo.cpus,
        packages: topo.packages,
        cores: topo.cores,
        threads: topo.threads,
        numa_nodes: numa::read(sys),
        caches: cache::read(sys),
        isa: isa::read(sys),
        frequency: freq::read(sys),
        knobs: knobs::read(sys),
        devices: devices::read(sys),
    })
}

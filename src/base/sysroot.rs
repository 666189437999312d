//! `Sysroot`: a filesystem root holding `sys/` and `proc/` (normally `/`,
//! or a recorded tree given by `--sysroot`), and typed reads under it.

use crate::base::cpuset::CpuSet;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

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

    /// The cheap signs of a virtual machine under this root: the x86
    /// `hypervisor` flag in /proc/cpuinfo, or a /sys/hypervisor/type file.
    /// (`machine::identity` adds CPUID and names the hypervisor.)
    pub fn has_hypervisor_sign(&self) -> bool {
        let flag = self.read_raw("/proc/cpuinfo").is_some_and(|ci| {
            ci.lines()
                .filter(|l| l.starts_with("flags"))
                .any(|l| l.split_whitespace().any(|w| w == "hypervisor"))
        });
        flag || self.exists("/sys/hypervisor/type")
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

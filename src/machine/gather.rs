//! What `cpuscope record` copies: every file the rest of `machine/` reads
//! under a `Sysroot`, declared once in [`PATTERNS`] (plus the cgroup cpuset
//! files of this process, found from `/proc/mounts`, [`cgroup_paths`]),
//! gathered into one gzip'd tar archive with a manifest
//! ([`MANIFEST`], `cpuscope.record/1`), the habit of hwloc's
//! `hwloc-gather-topology`. `cpuscope info --sysroot ARCHIVE` (or the
//! unpacked directory) then reads the same machine.
//!
//! How the tree is copied so that the replay reads the same:
//! - every file, directory and link is reached through the `Sysroot`'s one
//!   resolver (`base::files::Root::at`), as `machine/` reads them: within
//!   the root, a link that leaves it refused;
//! - files by content, read as `machine/` reads them (regular files only,
//!   at most 16 MiB) and stored with the length read: sysfs and procfs
//!   sizes lie (0 or 4096);
//! - symbolic links as links, their targets as written (an absolute one
//!   made relative to the archive's root), once they are known to resolve
//!   inside the root; a path through a link is then followed to the real
//!   directory as the kernel does, so `canonicalize`, `read_link` and `..`
//!   give the same answers as on the live machine (a NIC's `device` and
//!   `driver` links, `/proc/self`, `cpuN/cpufreq`). Walking a tree (`**`)
//!   never follows a link, so no loop is possible there, and a path gives
//!   up after 40 links. Under a root other than `/`, a link that leads out
//!   of the root is neither stored nor followed, and nothing behind it is
//!   read: the manifest lists it as not copied, with its target (the
//!   reader refuses it too);
//! - a file that cannot be read (no read permission in its mode, as the
//!   write-only `compact`/`reclaim` attributes; EACCES, EIO, EINVAL; a
//!   FIFO or device) is listed in the manifest with the reason, never fatal;
//! - caps: `base::archive::MAX_ENTRIES` entries and `MAX_BYTES` of content;
//!   past them gathering stops, the archive keeps what came first and the
//!   manifest says why (`truncated`).

use super::cgroup;
use crate::base::archive::{self, Refused, Resolved, Writer};
use crate::base::Sysroot;
use anyhow::{anyhow, Result};
use serde::Serialize;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The manifest's name, at the archive's root.
pub use super::live::MANIFEST;
/// Name and version of the manifest document.
pub const RECORD_SCHEMA: &str = "cpuscope.record/1";
/// The words that begin the reason of a link out of the tree (never
/// followed, nothing behind it copied).
pub const OUT_OF_TREE: &str = "a symbolic link out of the recorded tree";
/// How deep a `**` walk goes.
const MAX_DEPTH: usize = 16;

/// Everything `machine/` reads under a root, as patterns. Each is an
/// absolute path whose components are:
/// - a name, matched exactly (a link there is stored and followed);
/// - a glob with `*` (any characters), matched against the directory's entries;
/// - `**` (last only): the whole subtree, files and links as they are, links not followed;
/// - `..`: the parent of the real directory reached so far (as the kernel takes `..`);
/// - `...`: the real directory reached and each ancestor down to
///   `/sys/devices/X`, the rest of the pattern tried in each (the PCI
///   device a NIC hangs below, which `devices.rs` finds by walking up).
///
/// A pattern that ends on a directory stores it (so its name lists); a
/// glob stores the directory it lists; a path that does not exist stores
/// nothing. The cgroup cpuset files depend on this process's cgroup:
/// [`cgroup_paths`].
pub const PATTERNS: &[&str] = &[
    // identity, ISA, frequency (cpuinfo), memory, zones, interrupts
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/zoneinfo",
    "/proc/vmstat",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/stat",
    "/proc/cmdline",
    // the allowed CPUs and nodes of the recording process, and its cgroup
    "/proc/mounts",
    "/proc/self/status",
    "/proc/self/cgroup",
    "/proc/self/cpuset",
    // container signs (container.rs; not /proc/1/environ: another
    // process's environment may hold secrets)
    "/.dockerenv",
    "/run/.containerenv",
    "/run/systemd/container",
    // kernel knobs (knobs.rs, numa_memory.rs, identity.rs, isa.rs)
    "/proc/sys/kernel/hostname",
    "/proc/sys/kernel/osrelease",
    "/proc/sys/kernel/numa_balancing",
    "/proc/sys/kernel/perf_event_paranoid",
    "/proc/sys/kernel/kptr_restrict",
    "/proc/sys/kernel/nmi_watchdog",
    "/proc/sys/kernel/sched_autogroup_enabled",
    "/proc/sys/vm/zone_reclaim_mode",
    "/proc/sys/vm/swappiness",
    "/proc/sys/vm/min_free_kbytes",
    "/proc/sys/vm/min_unmapped_ratio",
    "/proc/sys/vm/watermark_scale_factor",
    "/proc/sys/abi/sve_default_vector_length",
    "/proc/device-tree/compatible",
    "/proc/device-tree/hypervisor/compatible",
    // IRQ affinities (devices.rs)
    "/proc/irq/*/smp_affinity_list",
    "/proc/irq/*/effective_affinity_list",
    // CPUs (topology, caches, cpufreq, SMT, isolation, MIDR), nodes, huge pages, THP
    "/sys/devices/system/cpu/**",
    "/sys/devices/system/node/**",
    // the kernel's memory tiers and the firmware's raw HMAT (memory_tiers.rs, hmat.rs)
    "/sys/devices/virtual/memory_tiering/**",
    "/sys/firmware/acpi/tables/HMAT",
    "/sys/kernel/mm/hugepages/**",
    "/sys/kernel/mm/transparent_hugepage/**",
    // PMUs (knobs.rs) and hybrid core kinds (topology.rs)
    "/sys/bus/event_source/devices/*",
    "/sys/bus/event_source/devices/*/caps/**",
    "/sys/bus/event_source/devices/*/cpus",
    "/sys/bus/event_source/devices/*/type",
    "/sys/devices/cpu_core/cpus",
    "/sys/devices/cpu_atom/cpus",
    // virtualisation signs (identity.rs) and DIMMs (dimm.rs: SMBIOS type 17)
    "/sys/hypervisor/type",
    "/sys/firmware/dmi",
    "/sys/class/dmi/id",
    "/sys/class/dmi/id/sys_vendor",
    "/sys/class/dmi/id/product_name",
    "/sys/firmware/dmi/entries/17-*/**",
    // NICs, their queues, IRQs and PCI devices (devices.rs)
    "/sys/class/net/*",
    "/sys/class/net/*/operstate",
    "/sys/class/net/*/speed",
    "/sys/class/net/*/queues/*",
    "/sys/class/net/*/device/numa_node",
    "/sys/class/net/*/device/irq",
    "/sys/class/net/*/device/driver",
    "/sys/class/net/*/device/msi_irqs/*",
    "/sys/class/net/*/device/.../numa_node",
    "/sys/class/net/*/device/.../msi_irqs/*",
];

/// The cpuset files `cgroup.rs` reads in each cgroup directory.
const CGROUP_FILES: &[&str] = &[
    "cpuset.effective_cpus",
    "effective_cpus",
    "cpuset.cpus",
    "cpus",
    "cpuset.effective_mems",
    "effective_mems",
    "cpuset.mems",
    "mems",
    "cpuset.cpus.effective",
    "cpuset.mems.effective",
];

/// The manifest inside the archive (`cpuscope-record.json`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Manifest {
    pub schema: String,
    pub cpuscope_version: String,
    /// The recorded machine's host name (`/proc/sys/kernel/hostname`).
    pub host: Option<String>,
    /// When it was recorded (UTC, RFC 3339).
    pub date: String,
    /// The root recorded (`/` for this machine).
    pub source: String,
    /// Files copied, by content.
    pub files: Vec<String>,
    /// Symbolic links stored as links.
    pub links: Vec<LinkEntry>,
    /// Directories stored as such (so that they list the same).
    pub directories: Vec<String>,
    /// Files that could not be read, each with the reason.
    pub unreadable: Vec<Unreadable>,
    /// Bytes of file content copied.
    pub bytes: u64,
    /// Why gathering stopped before the end (a cap reached); null when complete.
    pub truncated: Option<String>,
    pub max_entries: usize,
    pub max_bytes: u64,
    /// What was gathered ([`PATTERNS`], then the cgroup files).
    pub patterns: Vec<String>,
    /// What the machine answered outside its files (uname, CPUID's
    /// hypervisor vendor, CTR_EL0), asked when recording this machine, or
    /// carried over from a recorded root's manifest; null when neither.
    pub live: Option<super::live::LiveFacts>,
}

impl Manifest {
    /// How many links out of the tree were refused (listed in `unreadable`).
    pub fn links_out(&self) -> usize {
        self.unreadable
            .iter()
            .filter(|u| u.reason.starts_with(OUT_OF_TREE))
            .count()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkEntry {
    pub path: String,
    pub target: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Unreadable {
    pub path: String,
    pub reason: String,
}

/// A recorded machine: the archive's bytes and its manifest.
pub struct Recording {
    pub archive: Vec<u8>,
    pub manifest: Manifest,
}

/// Gather everything [`PATTERNS`] names under `sys` into an archive.
pub fn record(sys: &Sysroot) -> Result<Recording> {
    record_capped(sys, archive::MAX_ENTRIES, archive::MAX_BYTES)
}

/// [`record`] with caps of its own (tests).
pub fn record_capped(sys: &Sysroot, max_entries: usize, max_bytes: u64) -> Result<Recording> {
    let cgroups = cgroup_paths(sys);
    let mut g = Gather {
        root: sys.root().to_path_buf(),
        sys: sys.clone(),
        w: Writer::with_caps(max_entries, max_bytes),
        seen: HashSet::new(),
        man: Manifest {
            schema: RECORD_SCHEMA.to_string(),
            cpuscope_version: env!("CARGO_PKG_VERSION").to_string(),
            host: sys.read_string("/proc/sys/kernel/hostname"),
            date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            source: sys.shown(),
            max_entries,
            max_bytes,
            live: super::live::facts(sys).map(|f| f.facts),
            ..Manifest::default()
        },
    };
    for p in PATTERNS {
        g.man.patterns.push(p.to_string());
        g.pattern(p);
    }
    for p in &cgroups {
        g.man.patterns.push(p.clone());
        g.literal(p);
    }
    let Gather { w, man, .. } = g;
    let json = serde_json::to_vec_pretty(&man)?;
    let archive = w.finish(Path::new(MANIFEST), &json).map_err(|e| {
        anyhow!(
            "cannot build the archive: {}",
            crate::base::output::io_text(&e)
        )
    })?;
    Ok(Recording {
        archive,
        manifest: man,
    })
}

/// The cgroup directories and cpuset files `cgroup.rs` may read for this
/// process: for each cpuset hierarchy in `/proc/mounts` (v1 `cpuset`, the
/// old cpuset filesystem, v2), the process's cgroup and each ancestor up to
/// the hierarchy's root; then the limit files `limits.rs` reads
/// (`limits::record_paths`).
pub fn cgroup_paths(sys: &Sysroot) -> Vec<String> {
    let Some(text) = sys.read_raw("/proc/mounts") else {
        return Vec::new();
    };
    let (v1, v2) = cgroup::self_cgroup_paths(sys);
    let legacy = sys
        .read_string("/proc/self/cpuset")
        .filter(|s| s.starts_with('/'));
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: String| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for m in cgroup::parse_mounts(&text) {
        let paths = if (m.fstype == "cgroup" && m.options.iter().any(|o| o == "cpuset"))
            || m.fstype == "cpuset"
        {
            [v1.clone(), legacy.clone()]
        } else if m.fstype == "cgroup2" {
            add(format!("{}/cgroup.controllers", m.mountpoint));
            [v2.clone(), legacy.clone()]
        } else {
            continue;
        };
        for p in paths.into_iter().flatten() {
            let mut cur = p;
            loop {
                let dir = cgroup::join_cg(&m.mountpoint, &cur);
                add(dir.clone());
                for f in CGROUP_FILES {
                    add(format!("{dir}/{f}"));
                }
                if cur == "/" || cur.is_empty() {
                    break;
                }
                cur = cgroup::parent(&cur);
            }
        }
    }
    // The memory, cpu and cpuacct hierarchies' files (limits.rs).
    for p in super::limits::record_paths(sys) {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Path components under the root.
type Coords = Vec<OsString>;

/// A path under the root as the machine names it (`/sys/...`).
fn text(c: &[OsString]) -> String {
    let parts: Vec<_> = c.iter().map(|p| p.to_string_lossy()).collect();
    format!("/{}", parts.join("/"))
}

/// A path under the root as the archive names it (`sys/...`).
fn rel(c: &[OsString]) -> PathBuf {
    c.iter().collect()
}

/// `target` (absolute, from the root) as seen from the directory of the link at `link`.
fn relative_from(link: &[OsString], target: &Path) -> PathBuf {
    let mut p = PathBuf::new();
    for _ in 1..link.len() {
        p.push("..");
    }
    for c in target.components() {
        if let Component::Normal(n) = c {
            p.push(n);
        }
    }
    if p.as_os_str().is_empty() {
        p.push(".");
    }
    p
}

/// Whether `name` matches `pat`, where `*` stands for any characters.
fn glob(pat: &str, name: &str) -> bool {
    let (p, n) = (pat.as_bytes(), name.as_bytes());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && p[i] == n[j] {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == b'*')
}

fn missing(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

struct Gather {
    /// The root's directory, for `archive::follow_link` (which reads links only).
    root: PathBuf,
    /// Every other access: within the root.
    sys: Sysroot,
    w: Writer,
    /// Paths stored (of any kind), so each is stored once.
    seen: HashSet<Coords>,
    man: Manifest,
}

impl Gather {
    fn full(&self) -> bool {
        self.man.truncated.is_some()
    }

    fn unreadable(&mut self, c: &[OsString], reason: String) {
        self.man.unreadable.push(Unreadable {
            path: text(c),
            reason,
        });
    }

    /// Whether the writer took the entry; a cap reached stops gathering.
    fn stored(&mut self, r: Result<(), Refused>, c: &[OsString]) -> bool {
        match r {
            Ok(()) => true,
            Err(Refused::Full(why)) => {
                self.man.truncated = Some(why);
                false
            }
            Err(e @ Refused::Io(_)) => {
                self.unreadable(c, format!("not stored: {e}"));
                false
            }
        }
    }

    fn pattern(&mut self, pat: &str) {
        let comps: Vec<&str> = pat.split('/').filter(|c| !c.is_empty()).collect();
        self.expand(Vec::new(), &comps);
    }

    /// A path whose every component is a name (no glob).
    fn literal(&mut self, path: &str) {
        let comps: Vec<&OsStr> = Path::new(path)
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        let mut at = Vec::new();
        for (i, n) in comps.iter().enumerate() {
            if self.full() {
                return;
            }
            match self.step(&at, n, i + 1 == comps.len()) {
                Some(next) => at = next,
                None => return,
            }
        }
        self.take(&at);
    }

    fn expand(&mut self, at: Coords, rest: &[&str]) {
        if self.full() {
            return;
        }
        let Some((first, rest)) = rest.split_first() else {
            self.take(&at);
            return;
        };
        let last = rest.is_empty();
        match *first {
            "**" => self.walk(&at, 0),
            ".." => {
                let mut up = at;
                if up.pop().is_some() {
                    self.expand(up, rest);
                }
            }
            "..." => {
                let mut a = at;
                while a.len() >= 3 {
                    self.expand(a.clone(), rest);
                    a.pop();
                }
            }
            g if g.contains('*') => {
                for n in self.list(&at) {
                    if glob(g, &n.to_string_lossy()) {
                        if let Some(next) = self.step(&at, &n, last) {
                            self.expand(next, rest);
                        }
                    }
                }
            }
            name => {
                if let Some(next) = self.step(&at, OsStr::new(name), last) {
                    self.expand(next, rest);
                }
            }
        }
    }

    /// The names in the real directory `at`, sorted; the directory is stored.
    fn list(&mut self, at: &[OsString]) -> Vec<OsString> {
        match self.sys.read_dir(rel(at)) {
            Ok(mut v) => {
                self.dir(at);
                v.sort();
                v
            }
            Err(e) if missing(&e) => Vec::new(),
            Err(e) => {
                self.unreadable(at, crate::base::output::io_text(&e));
                Vec::new()
            }
        }
    }

    /// From the real directory `at` into `name`: the real path it leads to
    /// (links met stored and followed); None when it does not exist or
    /// cannot be followed. `last`: nothing of the pattern follows.
    fn step(&mut self, at: &[OsString], name: &OsStr, last: bool) -> Option<Coords> {
        let mut c = at.to_vec();
        c.push(name.to_os_string());
        match self.sys.metadata(rel(&c), false) {
            Ok(m) if m.file_type().is_symlink() => self.through_link(&c, last),
            Ok(_) => Some(c),
            Err(e) if missing(&e) => None,
            Err(e) => {
                self.unreadable(&c, crate::base::output::io_text(&e));
                None
            }
        }
    }

    /// Follow the link at `c`, storing it and every link met on the way;
    /// the real path it leads to.
    fn through_link(&mut self, c: &[OsString], last: bool) -> Option<Coords> {
        let mut met: Vec<(Coords, PathBuf)> = Vec::new();
        let r = archive::follow_link(&self.root, c, &mut 0, &mut |l, t| {
            met.push((l.to_vec(), t.to_path_buf()))
        });
        for (l, t) in met {
            self.link(&l, &t);
        }
        match r {
            Ok(Resolved::Inside(real)) => Some(real),
            Ok(Resolved::Outside) => {
                // Only under a root other than `/`: the reader refuses it, and
                // nothing outside the tree is ever copied.
                let target = self
                    .sys
                    .at(rel(c), false)
                    .and_then(|e| e.read_link())
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                let what = if last { "not copied" } else { "not followed" };
                self.unreadable(c, format!("{OUT_OF_TREE} (-> '{target}'): {what}"));
                None
            }
            Ok(Resolved::Loop) => {
                self.unreadable(c, "a loop of symbolic links".into());
                None
            }
            Err(e) => {
                self.unreadable(c, crate::base::output::io_text(&e));
                None
            }
        }
    }

    /// Store what the real path `at` is: a directory or a file.
    fn take(&mut self, at: &[OsString]) {
        if at.is_empty() {
            return;
        }
        match self.sys.metadata(rel(at), false) {
            Ok(m) if m.is_dir() => self.dir(at),
            Ok(_) => self.file(at),
            Err(e) if missing(&e) => {}
            Err(e) => self.unreadable(at, crate::base::output::io_text(&e)),
        }
    }

    /// The subtree at the real directory `at`: files by content, links as
    /// links (never followed), directories walked.
    fn walk(&mut self, at: &[OsString], depth: usize) {
        if self.full() {
            return;
        }
        match self.sys.metadata(rel(at), false) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return self.file(at),
            Err(e) if missing(&e) => return,
            Err(e) => return self.unreadable(at, crate::base::output::io_text(&e)),
        }
        for n in self.list(at) {
            if self.full() {
                return;
            }
            let mut c = at.to_vec();
            c.push(n);
            let ft = match self.sys.metadata(rel(&c), false) {
                Ok(m) => m.file_type(),
                Err(e) if missing(&e) => continue,
                Err(e) => {
                    self.unreadable(&c, crate::base::output::io_text(&e));
                    continue;
                }
            };
            if ft.is_symlink() {
                if !self.seen.contains(&c) {
                    self.through_link(&c, true);
                }
            } else if ft.is_dir() {
                if depth + 1 >= MAX_DEPTH {
                    self.unreadable(&c, format!("deeper than {MAX_DEPTH} levels: not walked"));
                } else {
                    self.walk(&c, depth + 1);
                }
            } else {
                self.file(&c);
            }
        }
    }

    fn dir(&mut self, c: &[OsString]) {
        if c.is_empty() || self.full() || !self.seen.insert(c.to_vec()) {
            return;
        }
        let r = self.w.dir(&rel(c));
        if self.stored(r, c) {
            self.man.directories.push(text(c));
        }
    }

    /// The link at `c` whose target is `target` (it resolves inside the root).
    fn link(&mut self, c: &[OsString], target: &Path) {
        if self.full() || !self.seen.insert(c.to_vec()) {
            return;
        }
        let t = if target.is_absolute() {
            relative_from(c, target)
        } else {
            target.to_path_buf()
        };
        let r = self.w.link(&rel(c), &t);
        if self.stored(r, c) {
            self.man.links.push(LinkEntry {
                path: text(c),
                target: t.to_string_lossy().into_owned(),
            });
        }
    }

    /// The file at the real path `c` by content (read within the root), or
    /// its reason in the manifest.
    fn file(&mut self, c: &[OsString]) {
        if self.full() || !self.seen.insert(c.to_vec()) {
            return;
        }
        let p = rel(c);
        if let Ok(m) = self.sys.metadata(&p, false) {
            let mode = m.permissions().mode();
            if m.is_file() && mode & 0o444 == 0 {
                let what = if mode & 0o222 != 0 {
                    "write-only"
                } else {
                    "no read permission"
                };
                return self.unreadable(c, format!("{what} (mode {:03o}): not read", mode & 0o777));
            }
        }
        let read = self
            .sys
            .at(&p, true)
            .and_then(|e| e.read_capped(crate::base::files::MAX_FILE_BYTES));
        match read {
            Ok(b) => {
                let r = self.w.file(&p, &b);
                if self.stored(r, c) {
                    self.man.files.push(text(c));
                    self.man.bytes += b.len() as u64;
                }
            }
            Err(e) => self.unreadable(c, crate::base::output::io_text(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("*", "eth0"));
        assert!(glob("17-*", "17-12"));
        assert!(!glob("17-*", "16-1"));
        assert!(glob("cpuset.*", "cpuset.cpus"));
        assert!(glob("a*b*c", "aXXbYYc"));
        assert!(!glob("a*b*c", "aXXbYY"));
        assert!(glob("index*", "index"));
    }

    #[test]
    fn absolute_targets_become_relative() {
        let link: Coords = ["proc", "device-tree"].iter().map(OsString::from).collect();
        assert_eq!(
            relative_from(&link, Path::new("/sys/firmware/devicetree/base")),
            PathBuf::from("../sys/firmware/devicetree/base")
        );
        let top: Coords = vec![OsString::from("x")];
        assert_eq!(relative_from(&top, Path::new("/")), PathBuf::from("."));
    }

    /// A small recorded tree: 3 files under the CPU tree, a link, `/proc/cpuinfo`.
    fn small_tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let cpu = d.path().join("sys/devices/system/cpu");
        std::fs::create_dir_all(cpu.join("cpu0/topology")).unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(cpu.join("online"), "0\n").unwrap();
        std::fs::write(cpu.join("possible"), "0\n").unwrap();
        std::fs::write(cpu.join("cpu0/topology/core_id"), "0\n").unwrap();
        std::os::unix::fs::symlink("../cpu0", cpu.join("cpu0/self")).unwrap();
        std::fs::write(d.path().join("proc/cpuinfo"), "processor\t: 0\n").unwrap();
        d
    }

    #[test]
    fn a_tree_is_copied_whole_with_its_links() {
        let d = small_tree();
        let sys = Sysroot::new(d.path()).unwrap();
        let r = record(&sys).unwrap();
        let m = &r.manifest;
        assert!(m.truncated.is_none());
        assert!(m.unreadable.is_empty(), "{:?}", m.unreadable);
        for f in [
            "/proc/cpuinfo",
            "/sys/devices/system/cpu/online",
            "/sys/devices/system/cpu/cpu0/topology/core_id",
        ] {
            assert!(m.files.iter().any(|x| x == f), "{f}: {:?}", m.files);
        }
        assert_eq!(m.links.len(), 1);
        assert_eq!(m.links[0].target, "../cpu0");
        assert_eq!(m.source, d.path().display().to_string());
        assert_eq!(r.archive[..2], [0x1f, 0x8b]);
    }

    #[test]
    fn caps_stop_gathering_and_say_so() {
        let d = small_tree();
        let sys = Sysroot::new(d.path()).unwrap();
        let r = record_capped(&sys, 4, 1 << 20).unwrap();
        let m = &r.manifest;
        let n = m.files.len() + m.links.len() + m.directories.len();
        assert!(n <= 4, "{n} entries");
        assert_eq!(
            m.truncated.as_deref(),
            Some("the cap of 4 entries was reached")
        );
        let r = record_capped(&sys, 1000, 4).unwrap();
        assert!(r.manifest.bytes <= 4);
        assert_eq!(
            r.manifest.truncated.as_deref(),
            Some("the cap of 4 bytes of file content was reached")
        );
        // What was gathered, and the manifest, are a whole archive.
        let f = d.path().join("capped.tar.gz");
        std::fs::write(&f, &r.archive).unwrap();
        let t = archive::extract(&f).unwrap();
        assert!(t.path().join(MANIFEST).is_file());
    }

    #[test]
    fn patterns_are_absolute_and_well_formed() {
        for p in PATTERNS {
            assert!(p.starts_with('/'), "{p}");
            let comps: Vec<&str> = p.split('/').skip(1).collect();
            assert!(comps.iter().all(|c| !c.is_empty()), "{p}");
            if let Some(i) = comps.iter().position(|c| *c == "**") {
                assert_eq!(i + 1, comps.len(), "`**` must be last: {p}");
            }
        }
    }
}

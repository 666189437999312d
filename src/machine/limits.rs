//! The limits of this process's cgroup beyond its cpuset (`cgroup.rs`), for
//! cgroup v1 and v2: the memory limit (`memory.max`, `memory.high` /
//! `memory.limit_in_bytes`, the lowest among the cgroup and its ancestors:
//! a container's limit may sit on a parent) with what is left under it
//! (usage less the reclaimable page cache, `inactive_file` of `memory.stat`),
//! and the CPU quota (`cpu.max` / `cpu.cfs_quota_us` over
//! `cpu.cfs_period_us`). Also the readings that move while a run measures:
//! CPU-quota throttling (`cpu.stat` `nr_throttled`, `throttled_usec` /
//! `throttled_time`) and the cgroup's CPU time (`cpu.stat` `usage_usec` /
//! `cpuacct.usage`). Pure reading under a `Sysroot`.

use super::cgroup::{join_cg, parent, parse_mounts, self_cgroups, Mount, SelfCgroup};
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// A limit at or above this many bytes is "no limit" (cgroup v1 writes
/// `PAGE_COUNTER_MAX` pages, 9223372036854771712 on 4 KiB pages).
const NO_LIMIT: u64 = 1 << 60;

/// The cgroup limits of this process besides the cpuset.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Limits {
    /// The memory controller's reading; null when no memory controller is
    /// mounted for this process (no cgroup limit can apply).
    pub memory: Option<MemoryLimit>,
    /// The lowest CPU quota among the cgroup and its ancestors; null when
    /// none sets one (or no cpu controller is mounted).
    pub cpu_quota: Option<CpuQuota>,
    /// The file holding this cgroup's CPU time (v2 `cpu.stat` `usage_usec`,
    /// v1 `cpuacct.usage`), for the time of its other processes; null when
    /// the process sits in the machine's root cgroup (its time is the
    /// machine's) or no such file was found.
    pub cpu_usage_file: Option<String>,
    /// Things missing or odd while reading (a limit file that does not
    /// parse, a cgroup directory that is not there).
    pub notes: Vec<String>,
}

/// The memory controller of this process's cgroup.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct MemoryLimit {
    /// 1 or 2.
    pub version: u8,
    /// The cgroup path, as `/proc/self/cgroup` names it.
    pub cgroup: String,
    /// The lowest hard limit (`memory.max`, v1 `memory.limit_in_bytes`)
    /// among the cgroup and its ancestors, bytes; null: none.
    pub limit_bytes: Option<u64>,
    /// The file that sets it (absolute path on the machine).
    pub limit_file: Option<String>,
    /// The lowest `memory.high` (v2: above it the kernel reclaims and
    /// throttles), bytes; null: none.
    pub high_bytes: Option<u64>,
    pub high_file: Option<String>,
    /// Where the least memory is left under a limit: that cgroup's
    /// directory (it may be an ancestor whose limit is shared with siblings).
    pub left_at: Option<String>,
    /// Its usage (`memory.current`, v1 `memory.usage_in_bytes`), bytes.
    pub usage_bytes: Option<u64>,
    /// Its page cache the kernel can drop first (`inactive_file`, v1
    /// `total_inactive_file` of `memory.stat`), bytes; null: not read.
    pub reclaimable_bytes: Option<u64>,
    /// limit − usage + reclaimable there (never above the limit), bytes;
    /// null without a limit.
    pub left_bytes: Option<u64>,
}

impl MemoryLimit {
    /// The limit that binds first: the lower of `limit_bytes` and `high_bytes`.
    pub fn effective_bytes(&self) -> Option<u64> {
        match (self.limit_bytes, self.high_bytes) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The name of the binding limit, for sentences: "memory limit" or
    /// "memory.high".
    pub fn effective_name(&self) -> &'static str {
        match (self.limit_bytes, self.high_bytes) {
            (Some(a), Some(b)) if b < a => "memory.high",
            (None, Some(_)) => "memory.high",
            _ => "memory limit",
        }
    }
}

/// The lowest CPU quota among the cgroup and its ancestors.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CpuQuota {
    /// 1 or 2.
    pub version: u8,
    /// The cgroup path of this process, as `/proc/self/cgroup` names it.
    pub cgroup: String,
    /// Run time allowed per period, µs.
    pub quota_us: u64,
    /// The period, µs.
    pub period_us: u64,
    /// quota / period: CPUs' worth of time.
    pub cpus: f64,
    /// The file that sets it (`cpu.max`, v1 `cpu.cfs_quota_us`).
    pub file: String,
    /// The `cpu.stat` of that cgroup (its throttling counters).
    pub stat_file: String,
}

/// CPUs' worth of time in words: `0.5`, `1.5`, `2`, `0.25`.
pub fn cpus_text(cpus: f64) -> String {
    let s = format!("{cpus:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// One reading of a cgroup's throttling counters (`cpu.stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttling {
    /// Enforcement periods that ran (`nr_periods`).
    pub periods: u64,
    /// Periods in which the cgroup was throttled (`nr_throttled`).
    pub throttled: u64,
    /// Time its threads were held back, ns (`throttled_usec` × 1000, v1 `throttled_time`).
    pub throttled_ns: u64,
}

impl Throttling {
    /// What happened between `self` (earlier) and `later`.
    pub fn since(&self, later: &Throttling) -> Throttling {
        Throttling {
            periods: later.periods.saturating_sub(self.periods),
            throttled: later.throttled.saturating_sub(self.throttled),
            throttled_ns: later.throttled_ns.saturating_sub(self.throttled_ns),
        }
    }
}

/// Parse a `cpu.stat` (v1 or v2) into throttling counters; None when it
/// has no `nr_throttled`.
pub fn parse_throttling(text: &str) -> Option<Throttling> {
    let (mut p, mut t, mut ns) = (None, None, None);
    for l in text.lines() {
        let mut f = l.split_whitespace();
        let (Some(k), Some(v)) = (f.next(), f.next().and_then(|v| v.parse::<u64>().ok())) else {
            continue;
        };
        match k {
            "nr_periods" => p = Some(v),
            "nr_throttled" => t = Some(v),
            "throttled_usec" => ns = Some(v.saturating_mul(1000)),
            "throttled_time" => ns = Some(v),
            _ => {}
        }
    }
    Some(Throttling {
        periods: p.unwrap_or(0),
        throttled: t?,
        throttled_ns: ns.unwrap_or(0),
    })
}

/// Read the throttling counters of the cgroup whose quota binds now.
pub fn read_throttling(sys: &Sysroot, q: &CpuQuota) -> Option<Throttling> {
    parse_throttling(&sys.read_raw(&q.stat_file)?)
}

/// The cgroup's CPU time now, ns, from `file` (a v2 `cpu.stat` with
/// `usage_usec`, or a v1 `cpuacct.usage` in ns).
pub fn read_cpu_usage_ns(sys: &Sysroot, file: &str) -> Option<u64> {
    let text = sys.read_raw(file)?;
    if file.ends_with("cpu.stat") {
        text.lines().find_map(|l| {
            let v = l.strip_prefix("usage_usec ")?;
            v.trim().parse::<u64>().ok().map(|u| u.saturating_mul(1000))
        })
    } else {
        text.trim().parse().ok()
    }
}

/// Where one controller's files lie for this process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    /// 1 or 2.
    pub version: u8,
    /// The cgroup path, as `/proc/self/cgroup` names it.
    pub path: String,
    /// Where the hierarchy is mounted.
    pub mountpoint: String,
    /// The directories from the process's cgroup (the deepest of its path
    /// that exists under the mount: inside a container without a cgroup
    /// namespace the mount's root is the container's own cgroup) up to the
    /// mount's root.
    pub dirs: Vec<String>,
}

impl Hierarchy {
    /// A note when the process's cgroup is not where `/proc/self/cgroup`
    /// puts it under the mount, and an ancestor was read instead.
    pub fn moved_note(&self, what: &str) -> Option<String> {
        let want = join_cg(&self.mountpoint, &self.path);
        (self.dirs.first() != Some(&want)).then(|| {
            format!(
                "{what} cgroup {want} is not there (a container without its own cgroup namespace?): read from {} up",
                self.dirs.first().map(String::as_str).unwrap_or("?")
            )
        })
    }

    /// Whether the process's cgroup is the machine's root cgroup (its CPU
    /// time is the machine's): v1 the path `/`, v2 a directory without
    /// `cgroup.type` (only the true root lacks it; a cgroup namespace's
    /// root has one).
    pub fn is_machine_root(&self, sys: &Sysroot) -> bool {
        match self.version {
            1 => self.path == "/",
            _ => self
                .dirs
                .first()
                .is_none_or(|d| !sys.exists(&format!("{d}/cgroup.type"))),
        }
    }
}

/// The hierarchy holding `controller` (`memory`, `cpu`, `cpuacct`; `""`:
/// the v2 hierarchy whatever its controllers, for its core files) for this
/// process: a v1 mount of that controller first, else the v2 mount when its
/// `cgroup.controllers` lists it. None when neither.
pub fn hierarchy(
    sys: &Sysroot,
    mounts: &[Mount],
    lines: &[SelfCgroup],
    controller: &str,
) -> Option<Hierarchy> {
    if !controller.is_empty() {
        if let Some(m) = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.iter().any(|o| o == controller))
        {
            let path = lines
                .iter()
                .find(|l| l.id != "0" && l.controllers.iter().any(|c| c == controller))?
                .path
                .clone();
            return Some(walk(sys, 1, m, path));
        }
    }
    let path = lines
        .iter()
        .find(|l| l.id == "0" && l.controllers.is_empty())?
        .path
        .clone();
    let m = mounts.iter().find(|m| {
        m.fstype == "cgroup2"
            && (controller.is_empty()
                || sys
                    .read_string(&format!("{}/cgroup.controllers", m.mountpoint))
                    .is_some_and(|c| c.split_whitespace().any(|x| x == controller)))
    })?;
    Some(walk(sys, 2, m, path))
}

/// The directories of `path` under the mount, from the deepest that exists
/// up to the mount's root.
fn walk(sys: &Sysroot, version: u8, m: &Mount, path: String) -> Hierarchy {
    let mut cur = path.clone();
    while !(cur == "/" || cur.is_empty() || sys.path(&join_cg(&m.mountpoint, &cur)).is_dir()) {
        cur = parent(&cur);
    }
    let mut dirs = vec![join_cg(&m.mountpoint, &cur)];
    while !(cur == "/" || cur.is_empty()) {
        cur = parent(&cur);
        dirs.push(join_cg(&m.mountpoint, &cur));
    }
    Hierarchy {
        version,
        path,
        mountpoint: m.mountpoint.clone(),
        dirs,
    }
}

/// A limit file's value: bytes or µs; None for `max`, a v1 "unlimited"
/// (≥ 2^60) or -1.
fn limit_value(s: &str) -> Option<u64> {
    let s = s.trim();
    if s == "max" || s == "-1" {
        return None;
    }
    s.parse::<u64>().ok().filter(|&v| v < NO_LIMIT)
}

/// A field of a `memory.stat`.
fn stat_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// Read the memory controller of this process's cgroup.
fn read_memory(sys: &Sysroot, h: &Hierarchy) -> MemoryLimit {
    let v1 = h.version == 1;
    let (max_name, usage_name) = if v1 {
        ("memory.limit_in_bytes", "memory.usage_in_bytes")
    } else {
        ("memory.max", "memory.current")
    };
    let mut m = MemoryLimit {
        version: h.version,
        cgroup: h.path.clone(),
        ..MemoryLimit::default()
    };
    for dir in &h.dirs {
        let max = sys
            .read_string(&format!("{dir}/{max_name}"))
            .and_then(|s| limit_value(&s));
        let high = if v1 {
            None
        } else {
            sys.read_string(&format!("{dir}/memory.high"))
                .and_then(|s| limit_value(&s))
        };
        if let Some(b) = max.filter(|&b| m.limit_bytes.is_none_or(|x| b < x)) {
            m.limit_bytes = Some(b);
            m.limit_file = Some(format!("{dir}/{max_name}"));
        }
        if let Some(b) = high.filter(|&b| m.high_bytes.is_none_or(|x| b < x)) {
            m.high_bytes = Some(b);
            m.high_file = Some(format!("{dir}/memory.high"));
        }
        let Some(limit) = [max, high].into_iter().flatten().min() else {
            continue;
        };
        let Some(usage) = sys.read_u64(&format!("{dir}/{usage_name}")) else {
            continue;
        };
        let stat = sys
            .read_raw(&format!("{dir}/memory.stat"))
            .unwrap_or_default();
        let reclaimable = if v1 {
            stat_field(&stat, "total_inactive_file").or_else(|| stat_field(&stat, "inactive_file"))
        } else {
            stat_field(&stat, "inactive_file")
        };
        let left = limit
            .saturating_sub(usage)
            .saturating_add(reclaimable.unwrap_or(0))
            .min(limit);
        if m.left_bytes.is_none_or(|x| left < x) {
            m.left_bytes = Some(left);
            m.left_at = Some(dir.clone());
            m.usage_bytes = Some(usage);
            m.reclaimable_bytes = reclaimable;
        }
    }
    m
}

/// The quota set in one cgroup directory: (quota µs, period µs, file).
fn quota_in(sys: &Sysroot, version: u8, dir: &str) -> Option<(u64, u64, String)> {
    if version == 1 {
        let f = format!("{dir}/cpu.cfs_quota_us");
        let q = limit_value(&sys.read_string(&f)?)?;
        let p = sys.read_u64(&format!("{dir}/cpu.cfs_period_us"))?;
        Some((q, p, f))
    } else {
        let f = format!("{dir}/cpu.max");
        let s = sys.read_string(&f)?;
        let mut it = s.split_whitespace();
        let q = limit_value(it.next()?)?;
        let p = it.next().and_then(|p| p.parse().ok()).unwrap_or(100_000);
        Some((q, p, f))
    }
}

/// The lowest CPU quota among the cgroup and its ancestors.
fn read_quota(sys: &Sysroot, h: &Hierarchy) -> Option<CpuQuota> {
    let mut best: Option<CpuQuota> = None;
    for dir in &h.dirs {
        let Some((q, p, file)) = quota_in(sys, h.version, dir) else {
            continue;
        };
        if p == 0 {
            continue;
        }
        let cpus = q as f64 / p as f64;
        if best.as_ref().is_none_or(|b| cpus < b.cpus) {
            best = Some(CpuQuota {
                version: h.version,
                cgroup: h.path.clone(),
                quota_us: q,
                period_us: p,
                cpus,
                file,
                stat_file: format!("{dir}/cpu.stat"),
            });
        }
    }
    best
}

/// Read the limits of this process's cgroup under `sys`.
pub fn read(sys: &Sysroot) -> Limits {
    let Some(text) = sys.read_raw("/proc/mounts") else {
        return Limits::default();
    };
    let mounts = parse_mounts(&text);
    let lines = self_cgroups(sys);
    let mut l = Limits::default();
    if let Some(h) = hierarchy(sys, &mounts, &lines, "memory") {
        l.notes.extend(h.moved_note("memory"));
        l.memory = Some(read_memory(sys, &h));
    }
    if let Some(h) = hierarchy(sys, &mounts, &lines, "cpu") {
        l.cpu_quota = read_quota(sys, &h);
    }
    // The cgroup's CPU time: v1 cpuacct, else v2's cpu.stat (a core file).
    let usage = match hierarchy(sys, &mounts, &lines, "cpuacct") {
        Some(h) if h.version == 1 => {
            (!h.is_machine_root(sys)).then(|| format!("{}/cpuacct.usage", h.dirs[0]))
        }
        _ => hierarchy(sys, &mounts, &lines, "")
            .filter(|h| !h.is_machine_root(sys))
            .map(|h| format!("{}/cpu.stat", h.dirs[0])),
    };
    l.cpu_usage_file = usage.filter(|f| read_cpu_usage_ns(sys, f).is_some());
    l
}

/// The cgroup files [`read`] may read for this process, for `record`: for
/// the memory, cpu and cpuacct hierarchies (and v2's), each directory from
/// the process's cgroup up to the mount's root, with the files read there.
pub fn record_paths(sys: &Sysroot) -> Vec<String> {
    let Some(text) = sys.read_raw("/proc/mounts") else {
        return Vec::new();
    };
    let mounts = parse_mounts(&text);
    let lines = self_cgroups(sys);
    let mut out: Vec<String> = Vec::new();
    let files: [(&str, &[&str]); 4] = [
        (
            "memory",
            &[
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "memory.max",
                "memory.high",
                "memory.current",
                "memory.stat",
            ],
        ),
        (
            "cpu",
            &[
                "cpu.cfs_quota_us",
                "cpu.cfs_period_us",
                "cpu.max",
                "cpu.stat",
            ],
        ),
        ("cpuacct", &["cpuacct.usage"]),
        ("", &["cgroup.type", "cpu.stat"]),
    ];
    for (ctrl, names) in files {
        let Some(h) = hierarchy(sys, &mounts, &lines, ctrl) else {
            continue;
        };
        for d in &h.dirs {
            for f in std::iter::once(String::new()).chain(names.iter().map(|n| format!("/{n}"))) {
                let p = format!("{d}{f}");
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The memory this process may take now: the least of `MemAvailable` and
/// what is left under its cgroup's binding limit. Every plan that sizes a
/// buffer asks this (through `experiments::common`), so a buffer that
/// cannot fit is refused with this reason instead of meeting the OOM killer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryRoom {
    /// `MemAvailable` of `/proc/meminfo`, bytes (null: unreadable).
    pub available: Option<u64>,
    /// The cgroup's binding limit and what is left under it.
    pub cgroup: Option<CgroupRoom>,
}

/// The part of a [`MemoryRoom`] a cgroup sets.
#[derive(Clone, Debug, PartialEq)]
pub struct CgroupRoom {
    /// The binding limit, bytes.
    pub limit: u64,
    /// What is left under it, bytes.
    pub left: u64,
    /// "memory limit" or "memory.high".
    pub name: &'static str,
}

impl MemoryRoom {
    /// From `MemAvailable` and the memory controller's reading.
    pub fn of(available: Option<u64>, m: Option<&MemoryLimit>) -> MemoryRoom {
        let cgroup = m.and_then(|m| {
            Some(CgroupRoom {
                limit: m.effective_bytes()?,
                left: m.left_bytes?,
                name: m.effective_name(),
            })
        });
        MemoryRoom { available, cgroup }
    }

    /// Read under `sys` now.
    pub fn read(sys: &Sysroot) -> MemoryRoom {
        let available = sys
            .read_raw("/proc/meminfo")
            .and_then(|t| crate::base::meminfo::field(&t, "MemAvailable"));
        MemoryRoom::of(available, read(sys).memory.as_ref())
    }

    /// Bytes this process may take: the least of the two; None when
    /// neither is known.
    pub fn bytes(&self) -> Option<u64> {
        match (self.available, self.cgroup.as_ref().map(|c| c.left)) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }

    /// Whether the cgroup's limit is what bounds the room.
    pub fn cgroup_binds(&self) -> bool {
        self.cgroup
            .as_ref()
            .is_some_and(|c| self.available.is_none_or(|a| c.left <= a))
    }

    /// What bounds the room, in words: "the cgroup's 256 MiB memory limit
    /// (180 MiB left)", "available memory (22.1 GiB, MemAvailable)".
    pub fn words(&self) -> String {
        use crate::base::fmt::fmt_size;
        match (&self.cgroup, self.available) {
            (Some(c), _) if self.cgroup_binds() => format!(
                "the cgroup's {} {} ({} left)",
                fmt_size(c.limit),
                c.name,
                fmt_size(c.left)
            ),
            (_, Some(a)) => format!("available memory ({}, MemAvailable)", fmt_size(a)),
            _ => "memory of unknown size (MemAvailable unreadable)".to_string(),
        }
    }

    /// The reason a footprint of `bytes` does not fit when at most `max`
    /// may be taken: "the 384 MiB the DRAM point needs does not fit the
    /// cgroup's 256 MiB memory limit (180 MiB left): at most 90 MiB may be
    /// used, leaving headroom".
    pub fn refusal(&self, what: &str, bytes: u64, max: u64) -> String {
        use crate::base::fmt::fmt_size;
        format!(
            "the {} {what} does not fit {}: at most {} may be used, leaving headroom",
            fmt_size(bytes),
            self.words(),
            fmt_size(max)
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A recorded tree: `files` (path under the root, content) and the CPU
    /// directory every `Sysroot` needs (also `machine::container`'s tests).
    pub(crate) fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Sysroot) {
        let dir = tempfile::tempdir().unwrap();
        let mut all = vec![("sys/devices/system/cpu/cpu0/online", "1\n")];
        all.extend_from_slice(files);
        for (rel, text) in all {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let sys = Sysroot::new(dir.path()).unwrap();
        (dir, sys)
    }

    const POD: &str = "sys/fs/cgroup/kubepods/pod1";

    /// cgroup v2, a Kubernetes container whose limits sit on its pod (the
    /// parent cgroup), shared with a sibling that uses most of it.
    fn v2_pod() -> (tempfile::TempDir, Sysroot) {
        let f = |n: &str| format!("{POD}/{n}");
        let c = |n: &str| format!("{POD}/ctr/{n}");
        let files: Vec<(String, &str)> = vec![
            (
                "proc/mounts".into(),
                "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n",
            ),
            ("proc/self/cgroup".into(), "0::/kubepods/pod1/ctr\n"),
            (
                "sys/fs/cgroup/cgroup.controllers".into(),
                "cpuset cpu io memory pids\n",
            ),
            ("sys/fs/cgroup/kubepods/memory.max".into(), "1073741824\n"),
            (
                "sys/fs/cgroup/kubepods/memory.current".into(),
                "300000000\n",
            ),
            ("sys/fs/cgroup/kubepods/cgroup.type".into(), "domain\n"),
            (f("memory.max"), "268435456\n"),
            (f("memory.high"), "max\n"),
            (f("memory.current"), "200000000\n"),
            (
                f("memory.stat"),
                "anon 150000000\ninactive_file 50000000\nactive_file 1000\n",
            ),
            (f("cpu.max"), "150000 100000\n"),
            (
                f("cpu.stat"),
                "usage_usec 9000\nnr_periods 10\nnr_throttled 3\nthrottled_usec 2500\n",
            ),
            (f("cgroup.type"), "domain\n"),
            (c("memory.max"), "max\n"),
            (c("memory.high"), "400000000\n"),
            (c("memory.current"), "20000000\n"),
            (c("memory.stat"), "inactive_file 0\n"),
            (c("cpu.max"), "max 100000\n"),
            (c("cpu.stat"), "usage_usec 5000\n"),
            (c("cgroup.type"), "domain\n"),
        ];
        let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), *b)).collect();
        tree(&refs)
    }

    #[test]
    fn v2_limit_on_the_parent_binds() {
        let (_d, sys) = v2_pod();
        let l = read(&sys);
        let m = l.memory.as_ref().expect("memory controller");
        assert_eq!(m.version, 2);
        assert_eq!(m.cgroup, "/kubepods/pod1/ctr");
        assert_eq!(m.limit_bytes, Some(268_435_456));
        assert_eq!(
            m.limit_file.as_deref(),
            Some("/sys/fs/cgroup/kubepods/pod1/memory.max")
        );
        // memory.high of the container is above the pod's limit.
        assert_eq!(m.high_bytes, Some(400_000_000));
        assert_eq!(m.effective_bytes(), Some(268_435_456));
        assert_eq!(m.effective_name(), "memory limit");
        // Left under the pod: limit − its usage (the sibling's too) + its inactive file pages.
        assert_eq!(m.left_bytes, Some(268_435_456 - 200_000_000 + 50_000_000));
        assert_eq!(m.left_at.as_deref(), Some("/sys/fs/cgroup/kubepods/pod1"));
        assert_eq!(m.reclaimable_bytes, Some(50_000_000));
        let q = l.cpu_quota.as_ref().expect("quota on the pod");
        assert_eq!((q.quota_us, q.period_us), (150_000, 100_000));
        assert!((q.cpus - 1.5).abs() < 1e-9);
        assert_eq!(q.stat_file, "/sys/fs/cgroup/kubepods/pod1/cpu.stat");
        assert_eq!(
            read_throttling(&sys, q),
            Some(Throttling {
                periods: 10,
                throttled: 3,
                throttled_ns: 2_500_000
            })
        );
        assert_eq!(
            l.cpu_usage_file.as_deref(),
            Some("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.stat")
        );
        assert_eq!(
            read_cpu_usage_ns(&sys, "/sys/fs/cgroup/kubepods/pod1/ctr/cpu.stat"),
            Some(5_000_000)
        );
        // The room: the cgroup binds under 20 GiB of MemAvailable.
        let room = MemoryRoom::of(Some(20 << 30), l.memory.as_ref());
        assert_eq!(room.bytes(), Some(118_435_456));
        assert!(room.cgroup_binds());
        assert_eq!(
            room.words(),
            "the cgroup's 256 MiB memory limit (112.9 MiB left)"
        );
        let why = room.refusal("the DRAM point needs", 384 << 20, 56 << 20);
        assert!(
            why.starts_with("the 384 MiB the DRAM point needs does not fit the cgroup's 256 MiB memory limit (112.9 MiB left): at most 56 MiB may be used"),
            "{why}"
        );
        // Fewer bytes available than left: MemAvailable binds.
        let low = MemoryRoom::of(Some(64 << 20), l.memory.as_ref());
        assert_eq!(low.bytes(), Some(64 << 20));
        assert!(
            low.words().starts_with("available memory (64 MiB"),
            "{}",
            low.words()
        );
    }

    #[test]
    fn v2_memory_high_binds_when_lower() {
        let (_d, sys) = tree(&[
            ("proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
            ("proc/self/cgroup", "0::/job\n"),
            ("sys/fs/cgroup/cgroup.controllers", "memory\n"),
            ("sys/fs/cgroup/job/memory.max", "max\n"),
            ("sys/fs/cgroup/job/memory.high", "104857600\n"),
            ("sys/fs/cgroup/job/memory.current", "4857600\n"),
        ]);
        let l = read(&sys);
        let m = l.memory.unwrap();
        assert_eq!((m.limit_bytes, m.high_bytes), (None, Some(104_857_600)));
        assert_eq!(m.effective_name(), "memory.high");
        // No memory.stat: nothing counted as reclaimable, and said so (null).
        assert_eq!(
            (m.left_bytes, m.reclaimable_bytes),
            (Some(100_000_000), None)
        );
        // No cpu controller listed: no quota read; a v2 hierarchy without
        // cgroup.type in the directory is the machine's root.
        assert_eq!(l.cpu_quota, None);
        assert_eq!(l.cpu_usage_file, None);
    }

    /// cgroup v1 as Docker without a cgroup namespace shows it: the mounts'
    /// roots are the container's cgroups, `/proc/self/cgroup` names the
    /// host's path (`/docker/abc`), which is not under the mounts.
    #[test]
    fn v1_in_a_container_without_a_cgroup_namespace() {
        let (_d, sys) = tree(&[
            (
                "proc/mounts",
                "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n\
                 cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n",
            ),
            (
                "proc/self/cgroup",
                "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n",
            ),
            ("sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n"),
            ("sys/fs/cgroup/memory/memory.usage_in_bytes", "36870912\n"),
            (
                "sys/fs/cgroup/memory/memory.stat",
                "cache 100\ninactive_file 7\ntotal_inactive_file 1000000\n",
            ),
            ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n"),
            ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
            (
                "sys/fs/cgroup/cpu,cpuacct/cpu.stat",
                "nr_periods 40\nnr_throttled 12\nthrottled_time 310000000\n",
            ),
            ("sys/fs/cgroup/cpu,cpuacct/cpuacct.usage", "123456789\n"),
        ]);
        let l = read(&sys);
        let m = l.memory.as_ref().unwrap();
        assert_eq!((m.version, m.limit_bytes), (1, Some(536_870_912)));
        assert_eq!(m.left_bytes, Some(536_870_912 - 36_870_912 + 1_000_000));
        assert!(
            l.notes
                .iter()
                .any(|n| n.contains("/sys/fs/cgroup/memory/docker/abc is not there")),
            "{:?}",
            l.notes
        );
        let q = l.cpu_quota.as_ref().unwrap();
        assert!((q.cpus - 0.5).abs() < 1e-9);
        assert_eq!(q.file, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us");
        assert_eq!(
            read_throttling(&sys, q),
            Some(Throttling {
                periods: 40,
                throttled: 12,
                throttled_ns: 310_000_000
            })
        );
        // The v1 cgroup path is not `/`: its CPU time is the container's.
        assert_eq!(
            l.cpu_usage_file.as_deref(),
            Some("/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage")
        );
        assert_eq!(
            read_cpu_usage_ns(&sys, l.cpu_usage_file.as_deref().unwrap()),
            Some(123_456_789)
        );
        // What `record` copies holds every file read above.
        let rec = record_paths(&sys);
        for f in [
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.stat",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.stat",
            "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage",
        ] {
            assert!(rec.iter().any(|p| p == f), "{f} not in {rec:?}");
        }
    }

    /// v1 with an unlimited leaf (PAGE_COUNTER_MAX) under a limited parent,
    /// and no memory controller at all.
    #[test]
    fn v1_unlimited_leaf_and_no_controller() {
        let (_d, sys) = tree(&[
            (
                "proc/mounts",
                "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n",
            ),
            ("proc/self/cgroup", "4:memory:/slurm/job1/step0\n"),
            (
                "sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/job1/memory.limit_in_bytes",
                "2147483648\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/job1/memory.usage_in_bytes",
                "1073741824\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/job1/step0/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/job1/step0/memory.usage_in_bytes",
                "5\n",
            ),
        ]);
        let m = read(&sys).memory.unwrap();
        assert_eq!(m.limit_bytes, Some(2 << 30));
        assert_eq!(m.left_bytes, Some(1 << 30));
        assert_eq!(m.cgroup, "/slurm/job1/step0");
        let (_d2, none) = tree(&[("proc/mounts", "proc /proc proc rw 0 0\n")]);
        assert_eq!(read(&none), Limits::default());
        assert_eq!(
            MemoryRoom::of(None, None).words(),
            "memory of unknown size (MemAvailable unreadable)"
        );
    }

    #[test]
    fn throttling_and_cpus_in_words() {
        assert_eq!(parse_throttling("usage_usec 5\n"), None);
        let a = parse_throttling("nr_periods 4\nnr_throttled 1\nthrottled_usec 10\n").unwrap();
        let b = parse_throttling("nr_periods 9\nnr_throttled 3\nthrottled_usec 30\n").unwrap();
        assert_eq!(
            a.since(&b),
            Throttling {
                periods: 5,
                throttled: 2,
                throttled_ns: 20_000
            }
        );
        assert_eq!(cpus_text(0.5), "0.5");
        assert_eq!(cpus_text(1.5), "1.5");
        assert_eq!(cpus_text(2.0), "2");
        assert_eq!(cpus_text(0.25), "0.25");
    }
}

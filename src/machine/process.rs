//! Per-process facts: /proc/PID/numa_maps, status, sched NUMA counters.
//!
//! `numa_maps` semantics (fs/proc/task_mmu.c, show_numa_map): page counts are
//! in units of the mapping's `kernelpagesize_kB` (a hugetlb mapping counts
//! huge pages); `mapped=` is printed only when the page total differs from
//! both `anon=` and `dirty=`; `active=` is printed only when some pages are
//! inactive, so its absence means every page is active (hugetlb: never
//! printed). Mappings with no resident page have no counts at all.

use crate::base::CpuSet;
use crate::base::Sysroot;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One line of /proc/PID/numa_maps.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Mapping {
    /// Start address as printed (hex, no 0x).
    pub address: String,
    /// Memory policy: `default`, `bind:0-1`, `interleave:0-3`, `prefer:1`...
    pub policy: String,
    /// `file`, `heap`, `stack` or `anon`.
    pub kind: String,
    pub file: Option<String>,
    /// A hugetlbfs mapping (`huge`): counts are huge pages.
    pub huge: bool,
    /// Resident pages (sum of the `N<node>=` counts).
    pub pages: u64,
    pub per_node: BTreeMap<usize, u64>,
    pub anon: u64,
    pub dirty: u64,
    /// `mapped=` as printed (only when it differs from anon and dirty).
    pub mapped: Option<u64>,
    /// Highest number of processes mapping one page of this mapping.
    pub mapmax: u64,
    pub swapcache: u64,
    /// Active pages: `active=` when printed, else all pages (null for hugetlb).
    pub active: Option<u64>,
    pub writeback: u64,
    /// Page size of the mapping in kB; null when the line has no pages.
    pub kernel_page_kb: Option<u64>,
    /// Fields this parser does not know, kept as written.
    pub other: BTreeMap<String, String>,
}

impl Mapping {
    /// Bytes of one counted page (4 KiB when the kernel did not say).
    pub fn page_bytes(&self) -> u64 {
        self.kernel_page_kb.unwrap_or(4) * 1024
    }
}

/// Pages and bytes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Amount {
    /// Pages as counted in numa_maps (each in its mapping's page size).
    pub pages: u64,
    /// Bytes, each page at its real size.
    pub bytes: u64,
}

impl Amount {
    fn add(&mut self, pages: u64, page_bytes: u64) {
        self.pages += pages;
        self.bytes += pages * page_bytes;
    }
    pub fn gib(&self) -> f64 {
        self.bytes as f64 / (1u64 << 30) as f64
    }
}

/// Memory of one node.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeUsage {
    pub node: usize,
    pub amount: Amount,
}

/// Memory under one policy.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PolicyUsage {
    pub policy: String,
    pub mappings: usize,
    pub amount: Amount,
}

/// What numa-maps-summary.pl adds up, with correct units.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NumaSummary {
    pub per_node: Vec<NodeUsage>,
    pub total: Amount,
    pub anon: Amount,
    pub dirty: Amount,
    pub active: Amount,
    /// Sum of the `mapped=` fields as printed (what numa-maps-summary.pl shows).
    pub mapped: Amount,
    pub swapcache: Amount,
    pub writeback: Amount,
    /// Pages in hugetlb mappings (counted in huge pages).
    pub huge: Amount,
    /// Pages in file-backed mappings.
    pub file: Amount,
    /// Highest `mapmax` over all mappings.
    pub mapmax: u64,
    pub mappings: usize,
    pub mappings_resident: usize,
    /// Distinct page sizes seen, kB.
    pub page_sizes_kb: Vec<u64>,
    pub policies: Vec<PolicyUsage>,
}

/// /proc/PID/status facts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcStatus {
    pub name: Option<String>,
    pub threads: Option<u64>,
    pub cpus_allowed_list: Option<CpuSet>,
    pub mems_allowed_list: Option<CpuSet>,
    pub vm_rss_kb: Option<u64>,
}

/// NUMA fault statistics of one node from /proc/PID/sched.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeFaults {
    pub node: usize,
    pub task_private: u64,
    pub task_shared: u64,
    pub group_private: u64,
    pub group_shared: u64,
}

/// Automatic NUMA balancing state from /proc/PID/sched (main thread).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SchedNuma {
    pub numa_preferred_nid: Option<i64>,
    pub numa_pages_migrated: Option<u64>,
    pub total_numa_faults: Option<u64>,
    pub numa_scan_seq: Option<u64>,
    pub current_node: Option<i64>,
    pub numa_group_id: Option<i64>,
    pub faults: Vec<NodeFaults>,
}

/// Where a process's memory lives.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcessNuma {
    pub pid: u32,
    pub status: ProcStatus,
    pub summary: NumaSummary,
    pub mappings: Vec<Mapping>,
    /// Null when /proc/PID/sched has no NUMA lines (see `unavailable`).
    pub sched: Option<SchedNuma>,
    /// System-wide `numa_*` counters of /proc/vmstat.
    pub vmstat_numa: BTreeMap<String, u64>,
    /// The process's memory per node by kind, as `numastat -p PID` prints it
    /// (Huge, Heap, Stack, Private), from its numa_maps.
    pub numastat: Vec<ProcNodeStat>,
    /// The allocation counters (since boot, all processes) of the nodes
    /// holding this process's memory (`nodeN/numastat`).
    pub node_counters: Vec<NodeCounters>,
    pub unavailable: BTreeMap<String, String>,
}

/// One node's share of a process, by kind (`numastat -p`'s columns).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ProcNodeStat {
    pub node: usize,
    /// hugetlbfs mappings.
    pub huge_bytes: u64,
    /// The `[heap]` mapping.
    pub heap_bytes: u64,
    /// `[stack]` mappings.
    pub stack_bytes: u64,
    /// Everything else (anonymous and file mappings).
    pub private_bytes: u64,
    pub total_bytes: u64,
}

/// A node's numastat counters.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeCounters {
    pub node: usize,
    pub counters: super::numa_memory::NumaStat,
}

/// `numastat -p` from mappings: per node, bytes of huge, heap, stack and
/// the rest ("Private"), each page at its mapping's page size.
pub fn numastat_of(maps: &[Mapping]) -> Vec<ProcNodeStat> {
    let mut per: BTreeMap<usize, ProcNodeStat> = BTreeMap::new();
    for m in maps {
        let pb = m.page_bytes();
        for (n, pages) in &m.per_node {
            let e = per.entry(*n).or_insert_with(|| ProcNodeStat {
                node: *n,
                ..ProcNodeStat::default()
            });
            let b = pages * pb;
            if m.huge {
                e.huge_bytes += b;
            } else if m.kind == "heap" {
                e.heap_bytes += b;
            } else if m.kind == "stack" {
                e.stack_bytes += b;
            } else {
                e.private_bytes += b;
            }
            e.total_bytes += b;
        }
    }
    per.into_values().collect()
}

/// Check a PID argument: a positive decimal integer.
pub fn parse_pid(s: &str) -> Result<u32> {
    let t = s.trim();
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit()) {
        bail!("bad PID '{s}': a process id is a positive integer");
    }
    match t.parse::<u32>() {
        Ok(0) => bail!("bad PID '{s}': PID 0 is not a process"),
        Ok(p) => Ok(p),
        Err(_) => bail!("bad PID '{s}': out of range"),
    }
}

fn is_field(tok: &str) -> bool {
    if matches!(tok, "heap" | "stack" | "huge") || tok.starts_with("stack:") {
        return true;
    }
    let Some((k, v)) = tok.split_once('=') else {
        return false;
    };
    let num = !v.is_empty() && v.chars().all(|c| c.is_ascii_digit());
    let known =
        matches!(
            k,
            "anon"
                | "dirty"
                | "mapped"
                | "mapmax"
                | "swapcache"
                | "active"
                | "writeback"
                | "kernelpagesize_kB"
                | "locked"
        ) || (k.len() > 1 && k.starts_with('N') && k[1..].chars().all(|c| c.is_ascii_digit()));
    known && num
}

/// Parse one numa_maps line; None for blank or malformed lines.
pub fn parse_mapping(line: &str) -> Option<Mapping> {
    let mut toks = line.split_whitespace();
    let address = toks.next()?.to_string();
    if !address.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let policy = toks.next()?.to_string();
    let mut m = Mapping {
        address,
        policy,
        kind: "anon".into(),
        ..Mapping::default()
    };
    let rest: Vec<&str> = toks.collect();
    let mut i = 0;
    let mut active_seen = false;
    while i < rest.len() {
        let t = rest[i];
        i += 1;
        if let Some(path) = t.strip_prefix("file=") {
            m.file = Some(take_file_path(path, &rest, &mut i));
            m.kind = "file".into();
            continue;
        }
        if apply_token(&mut m, t) {
            active_seen = true;
        }
    }
    settle_page_counts(&mut m, active_seen);
    Some(m)
}

/// The path of a `file=` token: paths may hold spaces, so take tokens
/// (from `rest[*i]` on) until the next known field.
fn take_file_path(path: &str, rest: &[&str], i: &mut usize) -> String {
    let mut p = path.to_string();
    while *i < rest.len() && !is_field(rest[*i]) {
        p.push(' ');
        p.push_str(rest[*i]);
        *i += 1;
    }
    p
}

/// Apply one token of a numa_maps line (other than `file=`) to `m`;
/// true when it is the `active=` count.
fn apply_token(m: &mut Mapping, t: &str) -> bool {
    match t {
        "heap" => m.kind = "heap".into(),
        "stack" => m.kind = "stack".into(),
        "huge" => m.huge = true,
        _ if t.starts_with("stack:") => m.kind = "stack".into(),
        _ => {
            let Some((k, v)) = t.split_once('=') else {
                m.other.insert(t.to_string(), String::new());
                return false;
            };
            let n: Option<u64> = v.parse().ok();
            match (k, n) {
                ("anon", Some(n)) => m.anon = n,
                ("dirty", Some(n)) => m.dirty = n,
                ("mapped", Some(n)) => m.mapped = Some(n),
                ("mapmax", Some(n)) => m.mapmax = n,
                ("swapcache", Some(n)) => m.swapcache = n,
                ("active", Some(n)) => {
                    m.active = Some(n);
                    return true;
                }
                ("writeback", Some(n)) => m.writeback = n,
                ("kernelpagesize_kB", Some(n)) => m.kernel_page_kb = Some(n),
                (k, Some(n)) if k.len() > 1 && k.starts_with('N') => match k[1..].parse() {
                    Ok(node) => {
                        *m.per_node.entry(node).or_default() += n;
                    }
                    Err(_) => {
                        m.other.insert(k.to_string(), v.to_string());
                    }
                },
                _ => {
                    m.other.insert(k.to_string(), v.to_string());
                }
            }
        }
    }
    false
}

/// Total pages from the per-node counts (or `mapped=`), and `active` when
/// the line did not give it.
fn settle_page_counts(m: &mut Mapping, active_seen: bool) {
    m.pages = m.per_node.values().sum();
    if m.mapped.is_some_and(|v| v > m.pages) {
        // Kernels without N<node> counts (CONFIG_NUMA off) still print mapped=.
        m.pages = m.mapped.unwrap_or(m.pages);
    }
    if !active_seen && !m.huge {
        m.active = Some(m.pages);
    }
    if m.huge && !active_seen {
        m.active = None;
    }
}

/// Parse the whole numa_maps text.
pub fn parse_numa_maps(text: &str) -> Vec<Mapping> {
    text.lines().filter_map(parse_mapping).collect()
}

/// Add up mappings.
pub fn summarize(maps: &[Mapping]) -> NumaSummary {
    let mut s = NumaSummary {
        mappings: maps.len(),
        ..NumaSummary::default()
    };
    let mut nodes: BTreeMap<usize, Amount> = BTreeMap::new();
    let mut policies: BTreeMap<String, PolicyUsage> = BTreeMap::new();
    for m in maps {
        let pb = m.page_bytes();
        if m.pages > 0 {
            s.mappings_resident += 1;
        }
        for (n, p) in &m.per_node {
            nodes.entry(*n).or_default().add(*p, pb);
        }
        s.total.add(m.pages, pb);
        s.anon.add(m.anon, pb);
        s.dirty.add(m.dirty, pb);
        if let Some(a) = m.active {
            s.active.add(a, pb);
        }
        if let Some(v) = m.mapped {
            s.mapped.add(v, pb);
        }
        s.swapcache.add(m.swapcache, pb);
        s.writeback.add(m.writeback, pb);
        if m.huge {
            s.huge.add(m.pages, pb);
        }
        if m.file.is_some() {
            s.file.add(m.pages, pb);
        }
        s.mapmax = s.mapmax.max(m.mapmax);
        if let Some(k) = m.kernel_page_kb {
            if !s.page_sizes_kb.contains(&k) {
                s.page_sizes_kb.push(k);
            }
        }
        let pu = policies
            .entry(m.policy.clone())
            .or_insert_with(|| PolicyUsage {
                policy: m.policy.clone(),
                ..PolicyUsage::default()
            });
        pu.mappings += 1;
        pu.amount.add(m.pages, pb);
    }
    s.page_sizes_kb.sort_unstable();
    s.per_node = nodes
        .into_iter()
        .map(|(node, amount)| NodeUsage { node, amount })
        .collect();
    let mut pol: Vec<PolicyUsage> = policies.into_values().collect();
    pol.sort_by(|a, b| {
        b.amount
            .bytes
            .cmp(&a.amount.bytes)
            .then(a.policy.cmp(&b.policy))
    });
    s.policies = pol;
    s
}

/// Parse /proc/PID/status.
pub fn parse_status(text: &str) -> ProcStatus {
    let mut st = ProcStatus::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        match k {
            "Name" => st.name = Some(v.to_string()),
            "Threads" => st.threads = v.parse().ok(),
            "Cpus_allowed_list" => st.cpus_allowed_list = CpuSet::parse(v).ok(),
            "Mems_allowed_list" => st.mems_allowed_list = CpuSet::parse(v).ok(),
            "VmRSS" => st.vm_rss_kb = v.split_whitespace().next().and_then(|n| n.parse().ok()),
            _ => {}
        }
    }
    st
}

/// Parse the NUMA lines of /proc/PID/sched; None when it has none.
pub fn parse_sched(text: &str) -> Option<SchedNuma> {
    let mut s = SchedNuma::default();
    let mut any = false;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("numa_faults ") {
            let mut f = NodeFaults::default();
            let mut ok = false;
            for kv in rest.split_whitespace() {
                let Some((k, v)) = kv.split_once('=') else {
                    continue;
                };
                let v: u64 = v.trim_end_matches(',').parse().unwrap_or(0);
                match k {
                    "node" => {
                        f.node = v as usize;
                        ok = true;
                    }
                    "task_private" => f.task_private = v,
                    "task_shared" => f.task_shared = v,
                    "group_private" => f.group_private = v,
                    "group_shared" => f.group_shared = v,
                    _ => {}
                }
            }
            if ok {
                s.faults.push(f);
                any = true;
            }
            continue;
        }
        if l.starts_with("current_node=") {
            for kv in l.split(',') {
                let Some((k, v)) = kv.trim().split_once('=') else {
                    continue;
                };
                match k {
                    "current_node" => s.current_node = v.trim().parse().ok(),
                    "numa_group_id" => s.numa_group_id = v.trim().parse().ok(),
                    _ => {}
                }
            }
            any = true;
            continue;
        }
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let k = k.trim();
        let v = v.trim();
        match k {
            "numa_preferred_nid" => {
                s.numa_preferred_nid = v.parse().ok();
                any = true;
            }
            "numa_pages_migrated" => {
                s.numa_pages_migrated = v.parse().ok();
                any = true;
            }
            "total_numa_faults" => {
                s.total_numa_faults = v.parse().ok();
                any = true;
            }
            "mm->numa_scan_seq" => {
                s.numa_scan_seq = v.parse().ok();
                any = true;
            }
            _ => {}
        }
    }
    any.then_some(s)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        // SAFETY: geteuid has no preconditions and cannot fail.
        std::io::ErrorKind::PermissionDenied if unsafe { libc::geteuid() } == 0 => {
            "permission denied even to root (the kernel or a security module refuses: a container's namespace, Yama, SELinux or AppArmor)".into()
        }
        std::io::ErrorKind::PermissionDenied => {
            "permission denied (another user's process: run as root or with CAP_SYS_PTRACE)".into()
        }
        std::io::ErrorKind::NotFound => "no such file".into(),
        _ => e.to_string(),
    }
}

/// The most bytes read from `/proc/PID/numa_maps` (a line per mapping;
/// `vm.max_map_count` may be raised to hundreds of thousands).
const NUMA_MAPS_MAX_BYTES: u64 = 256 << 20;

/// Read where process `pid` has its memory, under `sys`.
pub fn read(sys: &Sysroot, pid: u32) -> Result<ProcessNuma> {
    let dir = format!("/proc/{pid}");
    if !sys.is_dir(&dir) {
        bail!(
            "no process with PID {pid} (no {dir} under {})",
            sys.root().display()
        );
    }
    let text = read_numa_maps_text(sys, &dir)?;
    let mappings = parse_numa_maps(&text);
    let mut out = ProcessNuma {
        pid,
        summary: summarize(&mappings),
        numastat: numastat_of(&mappings),
        mappings,
        ..ProcessNuma::default()
    };
    read_node_counters(sys, &mut out);
    if out.summary.mappings == 0 {
        out.unavailable.insert(
            "mappings".into(),
            "numa_maps is empty: a kernel thread or a process without memory".into(),
        );
    }
    read_status_into(sys, &dir, &mut out);
    read_sched_into(sys, &dir, &mut out);
    read_vmstat_numa(sys, &mut out);
    Ok(out)
}

/// The text of `{dir}/numa_maps`, or why it cannot be read.
fn read_numa_maps_text(sys: &Sysroot, dir: &str) -> Result<String> {
    // numa_maps has a line per mapping (file names may hold any bytes): a
    // larger cap than other procfs files, and read lossily.
    let text = match sys.read_text_capped(&format!("{dir}/numa_maps"), NUMA_MAPS_MAX_BYTES) {
        Ok((t, _)) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{dir}/numa_maps does not exist: the kernel is built without NUMA \
             (CONFIG_NUMA) or the process has just exited"
        ),
        Err(e) => bail!("cannot read {dir}/numa_maps: {}", io_reason(&e)),
    };
    Ok(text)
}

/// The numastat counters of each node the process has memory on.
fn read_node_counters(sys: &Sysroot, out: &mut ProcessNuma) {
    for n in out.numastat.iter().map(|n| n.node) {
        let f = format!("/sys/devices/system/node/node{n}/numastat");
        match sys.read_raw(&f) {
            Some(t) => out.node_counters.push(NodeCounters {
                node: n,
                counters: super::numa_memory::NumaStat::parse(&t),
            }),
            None => {
                out.unavailable
                    .insert(format!("node{n}_numastat"), format!("{f} is not readable"));
            }
        }
    }
}

/// `{dir}/status`, and which of its allowed lists are missing.
fn read_status_into(sys: &Sysroot, dir: &str, out: &mut ProcessNuma) {
    match sys.read_text(&format!("{dir}/status")) {
        Ok(t) => out.status = parse_status(&t),
        Err(e) => {
            out.unavailable
                .insert("status".into(), format!("{dir}/status: {}", io_reason(&e)));
        }
    }
    if out.status.cpus_allowed_list.is_none() && !out.unavailable.contains_key("status") {
        out.unavailable.insert(
            "cpus_allowed_list".into(),
            "no Cpus_allowed_list in status".into(),
        );
    }
    if out.status.mems_allowed_list.is_none() && !out.unavailable.contains_key("status") {
        out.unavailable.insert(
            "mems_allowed_list".into(),
            "no Mems_allowed_list in status (kernel without cpusets)".into(),
        );
    }
}

/// The NUMA lines of `{dir}/sched`, or why there are none.
fn read_sched_into(sys: &Sysroot, dir: &str, out: &mut ProcessNuma) {
    match sys.read_text(&format!("{dir}/sched")) {
        Ok(t) => {
            out.sched = parse_sched(&t);
            if out.sched.is_none() {
                out.unavailable.insert(
                    "sched".into(),
                    "no NUMA lines in /proc/PID/sched: kernel without NUMA balancing \
                     (CONFIG_NUMA_BALANCING)"
                        .into(),
                );
            }
        }
        Err(e) => {
            out.unavailable
                .insert("sched".into(), format!("{dir}/sched: {}", io_reason(&e)));
        }
    }
}

/// The system-wide `numa_*` counters of /proc/vmstat.
fn read_vmstat_numa(sys: &Sysroot, out: &mut ProcessNuma) {
    match sys.read_raw("/proc/vmstat") {
        Some(t) => {
            for line in t.lines() {
                let mut it = line.split_whitespace();
                if let (Some(k), Some(v)) = (it.next(), it.next()) {
                    if k.starts_with("numa_") {
                        if let Ok(n) = v.parse() {
                            out.vmstat_numa.insert(k.to_string(), n);
                        }
                    }
                }
            }
            if out.vmstat_numa.is_empty() {
                out.unavailable.insert(
                    "vmstat_numa".into(),
                    "no numa_* counters in /proc/vmstat: kernel without NUMA".into(),
                );
            }
        }
        None => {
            out.unavailable.insert(
                "vmstat_numa".into(),
                "/proc/vmstat not under this root".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_lines() {
        let m = parse_mapping(
            "7f0000000000 default file=/usr/lib/my\\040lib.so mapped=3 mapmax=9 N0=2 N1=1 kernelpagesize_kB=4",
        )
        .unwrap();
        assert_eq!(m.kind, "file");
        assert_eq!(m.pages, 3);
        assert_eq!(m.active, Some(3));
        assert_eq!(m.mapmax, 9);
        let m = parse_mapping("7f00 bind:1 file=/a b c anon=2 dirty=2 N1=2 kernelpagesize_kB=4")
            .unwrap();
        assert_eq!(m.file.as_deref(), Some("/a b c"));
        assert_eq!(m.policy, "bind:1");
        let h = parse_mapping(
            "2aaaaac00000 default file=/dev/hugepages/x huge dirty=2 N0=2 kernelpagesize_kB=2048",
        )
        .unwrap();
        assert!(h.huge);
        assert_eq!(h.active, None);
        assert_eq!(h.page_bytes(), 2 << 20);
        let e = parse_mapping("7ffd1000 default stack").unwrap();
        assert_eq!((e.kind.as_str(), e.pages), ("stack", 0));
    }

    #[test]
    fn pids() {
        assert!(parse_pid("abc").is_err());
        assert!(parse_pid("0").is_err());
        assert!(parse_pid("-5").is_err());
        assert_eq!(parse_pid("42").unwrap(), 42);
    }
}

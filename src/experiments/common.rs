//! Shared by the memory experiments (latency, bandwidth, NUMA matrix, loaded
//! latency, seed loops): cache sizes from `info`, size lists, CPU orders,
//! memory limits, page requests, the clock used to turn ns into cycles.

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::experiments::experiment::{ExpCtx, Profile};
use crate::harness::measure::{measure, Policy, Warmup};
use crate::kernels::chains::{Chain, CHAIN_LEN};
use crate::machine::limits::MemoryRoom;
use crate::machine::MachineInfo;
use crate::placement::buffer::{Buffer, BufferOptions, PageKind, PageReport, PageRequest};
use crate::placement::mempolicy::MemPolicy;
use anyhow::{bail, Result};
use serde::Serialize;
use std::time::Duration;

pub const KIB: usize = 1 << 10;
pub const MIB: usize = 1 << 20;
pub const GIB: usize = 1 << 30;

/// A DRAM figure needs a working set of at least this many times the
/// last-level cache one CPU sees (below it most loads still hit the
/// cache); a plan cut below it by memory says "not available" instead.
pub const DRAM_REACH: usize = 2;

/// The cache levels the memory experiments plan with, innermost first, by
/// their `info` names (`machine::cache`); latency names its per-level
/// figures after them (`latency::LEVELS`, same order).
pub const LEVEL_NAMES: [&str; 4] = ["L1d", "L2", "L3", "L4"];

/// Cache sizes the memory experiments plan with, from `info` (sysfs), or
/// fallbacks that are said to be fallbacks.
#[derive(Clone, Debug, Serialize)]
pub struct CacheFacts {
    /// Per-instance sizes, as declared.
    pub l1d: Option<usize>,
    pub l2: Option<usize>,
    pub l3: Option<usize>,
    /// Size of one instance of the last level, and its level.
    pub llc: usize,
    pub llc_level: u32,
    /// Sum of every last-level instance (STREAM's "total cache").
    pub llc_total: usize,
    /// Declared data/unified levels in order: (name, per-instance bytes).
    pub levels: Vec<(String, usize)>,
    /// Set when a size is a fallback, not read from the machine.
    pub note: Option<String>,
}

impl CacheFacts {
    pub fn of(machine: &MachineInfo) -> CacheFacts {
        let size_of = |name: &str| -> Option<usize> {
            machine
                .caches_named(name)
                .iter()
                .filter_map(|c| c.size_bytes)
                .max()
                .map(|b| b as usize)
        };
        let [l1d_name, l2_name, l3_name, l4_name] = LEVEL_NAMES;
        // A unified L1 stands in for a missing L1d (under the L1d's name).
        let l1d = size_of(l1d_name).or_else(|| size_of("L1u"));
        let l2 = size_of(l2_name);
        let l3 = size_of(l3_name);
        let l4 = size_of(l4_name);
        let mut levels = Vec::new();
        for (n, s) in [(l1d_name, l1d), (l2_name, l2), (l3_name, l3), (l4_name, l4)] {
            if let Some(s) = s {
                levels.push((n.to_string(), s));
            }
        }
        let (llc_level, llc) = match levels.last() {
            Some((n, s)) => (n[1..2].parse().unwrap_or(0), *s),
            None => (0, 0),
        };
        let mut note = None;
        let (llc, llc_level, llc_total) = if llc == 0 {
            note = Some(format!(
                "no cache sizes known ({}): planning with a 32 MiB last-level cache",
                machine
                    .caches_unavailable
                    .as_deref()
                    .unwrap_or("info reported none")
            ));
            (32 * MIB, 3, 32 * MIB)
        } else {
            let total: u64 = machine
                .caches
                .iter()
                .filter(|c| c.level == llc_level && c.kind != "Instruction")
                .filter_map(|c| c.size_bytes)
                .sum();
            (llc, llc_level, (total as usize).max(llc))
        };
        CacheFacts {
            l1d,
            l2,
            l3,
            llc,
            llc_level,
            llc_total,
            levels,
            note,
        }
    }

    /// Bytes of last-level cache that `cpus` can fill: the sum of the
    /// last-level instances shared by at least one of them (at least one
    /// instance, [`llc`](Self::llc), when the machine declares none).
    pub fn llc_serving(&self, machine: &MachineInfo, cpus: &CpuSet) -> usize {
        let total: u64 = machine
            .caches
            .iter()
            .filter(|c| c.level == self.llc_level && c.kind != "Instruction")
            .filter(|c| c.shared_cpu_list.iter().any(|x| cpus.contains(x)))
            .filter_map(|c| c.size_bytes)
            .sum();
        (total as usize).max(self.llc)
    }
}

/// The DRAM bandwidth that plans assume for `threads` streaming threads on
/// `nodes` NUMA nodes: 10 GB/s per thread, at most 50 GB/s per node (one
/// socket's memory of an older server; each node its own memory
/// controllers); a per-unit cost of the estimates, not a figure.
pub fn est_stream_bw(threads: usize, nodes: usize) -> f64 {
    (10e9 * threads.max(1) as f64).min(50e9 * nodes.max(1) as f64)
}

/// Parse a byte size: `4096`, `4K`, `4KiB`, `64k`, `2M`, `1G`, `1.5M`.
pub fn parse_size(s: &str) -> Result<usize> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let stripped = lower
        .trim_end_matches("ib")
        .trim_end_matches('b')
        .to_string();
    let (num, mult) = match stripped.chars().last() {
        Some('k') => (&stripped[..stripped.len() - 1], KIB as f64),
        Some('m') => (&stripped[..stripped.len() - 1], MIB as f64),
        Some('g') => (&stripped[..stripped.len() - 1], GIB as f64),
        Some('t') => (&stripped[..stripped.len() - 1], (GIB as f64) * 1024.0),
        _ => (stripped.as_str(), 1.0),
    };
    let v: f64 = num.trim().parse().map_err(|_| {
        anyhow::anyhow!(
            "bad size '{t}': expected a number with an optional K, M or G suffix, e.g. 64K"
        )
    })?;
    if !v.is_finite() || v < 0.0 {
        bail!("bad size '{t}': must be a positive number of bytes");
    }
    let b = v * mult;
    if b > 1e18 {
        bail!("bad size '{t}': too large");
    }
    Ok(b as usize)
}

/// Sizes from `lo` to `hi` (inclusive), `per_octave` points per doubling,
/// rounded to whole cache lines and deduplicated.
pub fn size_range(lo: usize, hi: usize, per_octave: usize) -> Vec<usize> {
    let mut out = Vec::new();
    if lo == 0 || hi < lo {
        return out;
    }
    let per = per_octave.max(1) as f64;
    let octaves = (hi as f64 / lo as f64).log2();
    let steps = (octaves * per).ceil() as usize;
    for k in 0..=steps {
        let s = (lo as f64 * 2f64.powf(k as f64 / per)).min(hi as f64);
        let s = ((s as usize) / 64 * 64).max(64);
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    if out.last() != Some(&(hi / 64 * 64).max(64)) {
        out.push((hi / 64 * 64).max(64));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Parse a size list: `4K,64K,1M` or a range `4K-512M` (with `per_octave`
/// points per doubling) or a mix. Every size must be > 0.
pub fn parse_size_list(s: &str, per_octave: usize) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            bail!("bad size list '{s}': empty element");
        }
        if let Some((a, b)) = part.split_once('-') {
            let (a, b) = (parse_size(a)?, parse_size(b)?);
            if a == 0 || b == 0 {
                bail!("bad size list '{s}': sizes must be larger than 0");
            }
            if b < a {
                bail!("bad size list '{s}': range '{part}' runs backwards");
            }
            out.extend(size_range(a, b, per_octave));
        } else {
            let v = parse_size(part)?;
            if v == 0 {
                bail!("bad size list '{s}': sizes must be larger than 0");
            }
            out.push(v);
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `MemAvailable` of /proc/meminfo in bytes.
pub fn mem_available() -> Option<usize> {
    crate::base::meminfo::live("MemAvailable").map(|b| b as usize)
}

/// `MemTotal` of /proc/meminfo in bytes.
pub fn mem_total() -> Option<usize> {
    crate::base::meminfo::live("MemTotal").map(|b| b as usize)
}

/// The memory this process may take now: the least of `MemAvailable` and
/// what is left under its cgroup's memory limit (`memory.max`,
/// `memory.high`, v1 `memory.limit_in_bytes`, on its cgroup or an
/// ancestor), read live. The one question every plan that sizes a buffer
/// asks (through [`auto_cap`], [`fit_or_reason`] and [`check_fits`]).
pub fn memory_room() -> MemoryRoom {
    match crate::base::Sysroot::new("/") {
        Ok(sys) => MemoryRoom::read(&sys),
        Err(_) => MemoryRoom {
            available: mem_available().map(|b| b as u64),
            cgroup: None,
        },
    }
}

/// Largest footprint a user-chosen size may take in `room`: three quarters
/// of it (a quarter left to everything else).
pub fn explicit_cap(room: &MemoryRoom) -> Option<usize> {
    room.bytes().map(|b| (b / 4 * 3) as usize)
}

/// Largest footprint the profile's automatic plans may take in `room`:
/// half of it (2 GiB when nothing is known).
pub fn auto_cap_of(room: &MemoryRoom) -> usize {
    room.bytes().map(|b| (b / 2) as usize).unwrap_or(2 * GIB)
}

/// Refuse a footprint larger than the memory this process can get.
pub fn check_fits(what: &str, bytes: usize) -> Result<()> {
    if bytes == 0 {
        bail!("{what}: size 0 is not a size");
    }
    let room = memory_room();
    if let Some(max) = explicit_cap(&room) {
        if bytes > max {
            bail!(
                "{what}: {} does not fit in memory ({}; at most {} may be used)",
                fmt_size(bytes),
                room.words(),
                fmt_size(max)
            );
        }
    }
    Ok(())
}

/// A size option `opt`: parsed, fitting in memory `arrays` times over, at
/// least `min` bytes (0 or 4 KiB).
pub fn size_option(opt: &str, s: &str, arrays: usize, min: usize) -> Result<usize> {
    let b = parse_size(s)?;
    check_fits(opt, b.saturating_mul(arrays))?;
    if b < min {
        bail!("{opt}: {b} bytes is too small (at least 4K)");
    }
    Ok(b)
}

/// Largest footprint the profile's automatic plans may take now (they
/// shrink to fit instead of failing, and say so): [`auto_cap_of`] the
/// [`memory_room`].
pub fn auto_cap() -> usize {
    auto_cap_of(&memory_room())
}

/// A footprint of `bytes` that a figure needs (`what`: "the DRAM point
/// needs"): Ok when it fits the automatic plans' share of `room`, else the
/// reason to give as the figure's "not available".
pub fn fit_or_reason(room: &MemoryRoom, what: &str, bytes: usize) -> Result<(), String> {
    let cap = auto_cap_of(room);
    if bytes <= cap {
        Ok(())
    } else {
        Err(room.refusal(what, bytes as u64, cap as u64))
    }
}

/// The note of a plan whose footprint was cut from `wanted` to `cap` by
/// `room`: "largest working set capped at 90 MiB by the cgroup's 256 MiB
/// memory limit (180 MiB left) (wanted 1.2 GiB)".
pub fn capped_note(what: &str, cap: usize, wanted: usize, room: &MemoryRoom) -> String {
    format!(
        "{what} capped at {} by {}, half of it for the buffers (wanted {})",
        fmt_size(cap),
        room.words(),
        fmt_size(wanted)
    )
}

/// Check a CPU list against the run's CPUs; one-line error naming the strays.
pub fn check_cpus(want: &CpuSet, allowed: &CpuSet, opt: &str) -> Result<()> {
    if want.is_empty() {
        bail!("{opt}: names no CPU");
    }
    let outside = want.difference(allowed);
    if !outside.is_empty() {
        bail!("{opt}: CPU(s) {outside} are not usable by this process (usable: {allowed})");
    }
    Ok(())
}

/// NUMA nodes with CPUs among `cpus`, each with its CPUs (∩ `cpus`); a
/// machine without node information is one node 0 holding every CPU.
pub fn node_cpus(machine: &MachineInfo, cpus: &CpuSet) -> Vec<(usize, CpuSet)> {
    let mut out: Vec<(usize, CpuSet)> = machine
        .numa_nodes
        .iter()
        .map(|n| (n.id, n.cpus.intersection(cpus)))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    if out.is_empty() {
        out.push((0, cpus.clone()));
    }
    out
}

/// Nodes that have memory and that this process may allocate from.
pub fn memory_nodes(machine: &MachineInfo) -> Vec<usize> {
    let v: Vec<usize> = machine
        .numa_nodes
        .iter()
        .filter(|n| n.usable && n.memory_bytes.is_none_or(|b| b > 0))
        .map(|n| n.id)
        .collect();
    if v.is_empty() {
        vec![0]
    } else {
        v
    }
}

/// Parse and check a node list against the nodes that exist.
pub fn check_nodes(list: &str, machine: &MachineInfo, opt: &str) -> Result<Vec<usize>> {
    let set = CpuSet::parse(list)
        .map_err(|e| anyhow::anyhow!("{opt}: {}", e.replace("CPU list", "node list")))?;
    if set.is_empty() {
        bail!("{opt}: names no node");
    }
    let known: CpuSet = if machine.numa_nodes.is_empty() {
        CpuSet::from_ids([0])
    } else {
        CpuSet::from_ids(machine.numa_nodes.iter().map(|n| n.id))
    };
    let bad = set.difference(&known);
    if !bad.is_empty() {
        bail!("{opt}: node(s) {bad} do not exist (nodes: {known})");
    }
    Ok(set.to_vec())
}

/// The params key of a record's thread placement (bandwidth's
/// [`Placement`] names, sync's placements of its threads).
pub const PLACEMENT_PARAM: &str = "placement";

/// One NUMA node named by `opt` (a list of one).
pub fn one_node(list: &str, machine: &MachineInfo, opt: &str) -> Result<usize> {
    let nodes = check_nodes(list, machine, opt)?;
    if nodes.len() != 1 {
        bail!("{opt}: give one node (got {list})");
    }
    Ok(nodes[0])
}

/// A list of counts (`0,1,2`, `1-16`) given to `opt`.
pub fn parse_counts(list: &str, opt: &str) -> Result<CpuSet> {
    CpuSet::parse(list).map_err(|e| anyhow::anyhow!("{opt}: {}", e.replace("CPU list", "list")))
}

/// A size the user chose below 4 × the last-level cache `llc`: what the
/// figure then measures, said as a note.
pub fn below_llc_note(what: &str, bytes: usize, llc: usize) -> Option<String> {
    (bytes < llc.saturating_mul(4)).then(|| {
        format!(
            "{what} of {} is below 4 × the last-level cache ({}): parts may come from caches, not memory",
            fmt_size(bytes),
            fmt_size(llc)
        )
    })
}

/// How threads are placed as their number grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Fill CPUs in topology order: all threads of a core, then the next core
    /// of the same node/package.
    Compact,
    /// One thread per core first (round-robin over packages), SMT siblings last.
    SpreadCore,
    /// Round-robin over NUMA nodes, one thread per core first.
    SpreadNode,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Compact => "compact",
            Placement::SpreadCore => "spread_core",
            Placement::SpreadNode => "spread_node",
        }
    }
    /// How threads are added, in words ("threads placed compactly: ...").
    pub fn words(self) -> &'static str {
        match self {
            Placement::Compact => "placed compactly (a node's cores first)",
            Placement::SpreadCore => "spread one per core over the packages",
            Placement::SpreadNode => "spread round-robin over the NUMA nodes",
        }
    }
    pub fn parse(s: &str) -> Option<Placement> {
        match s {
            "compact" => Some(Placement::Compact),
            "spread_core" | "spread-core" | "core" | "spread" => Some(Placement::SpreadCore),
            "spread_node" | "spread-node" | "node" => Some(Placement::SpreadNode),
            _ => None,
        }
    }
}

/// The order in which CPUs of `cpus` are taken for a placement.
pub fn cpu_order(machine: &MachineInfo, cpus: &CpuSet, placement: Placement) -> Vec<usize> {
    // (node, package, core index, smt, cpu)
    let mut info: Vec<(usize, usize, usize, usize, usize)> = cpus
        .iter()
        .map(|c| match machine.thread(c) {
            Some(t) => (t.node.unwrap_or(0), t.package, t.core, t.smt, c),
            None => (0, 0, c, 0, c),
        })
        .collect();
    match placement {
        Placement::Compact => {
            info.sort_by_key(|&(n, p, core, smt, c)| (n, p, core, smt, c));
            info.into_iter().map(|x| x.4).collect()
        }
        Placement::SpreadCore | Placement::SpreadNode => {
            // Rank within its group (package or node), SMT level first.
            let by_node = placement == Placement::SpreadNode;
            info.sort_by_key(|&(n, p, core, smt, c)| (smt, if by_node { n } else { p }, core, c));
            let mut groups: Vec<(usize, usize, Vec<usize>)> = Vec::new(); // (smt, group, cpus)
            for (n, p, _core, smt, c) in info {
                let g = if by_node { n } else { p };
                match groups.iter_mut().find(|x| x.0 == smt && x.1 == g) {
                    Some(x) => x.2.push(c),
                    None => groups.push((smt, g, vec![c])),
                }
            }
            let mut out = Vec::new();
            let mut smts: Vec<usize> = groups.iter().map(|g| g.0).collect();
            smts.dedup();
            for s in smts {
                let gs: Vec<&Vec<usize>> =
                    groups.iter().filter(|g| g.0 == s).map(|g| &g.2).collect();
                let longest = gs.iter().map(|g| g.len()).max().unwrap_or(0);
                for k in 0..longest {
                    for g in &gs {
                        if let Some(&c) = g.get(k) {
                            out.push(c);
                        }
                    }
                }
            }
            out
        }
    }
}

/// Thread counts of a sweep 1..=max: every count up to 8, then powers of two
/// and multiples of a step (4 up to 64 CPUs, then a multiple of 4 near
/// max/16, so that a 384-CPU sweep has about as many points as a 64-CPU one),
/// and `max`; `quick` keeps 1, 2, 4, ... and max; `full` every count.
pub fn thread_counts(max: usize, profile: Profile) -> Vec<usize> {
    let step = (max.div_ceil(16)).div_ceil(4).max(1) * 4;
    let mut v: Vec<usize> = match profile {
        Profile::Full => (1..=max).collect(),
        Profile::Standard => (1..=max)
            .filter(|&n| n <= 8 || n % step == 0 || n.is_power_of_two())
            .collect(),
        Profile::Quick => (1..=max)
            .filter(|&n| n.is_power_of_two() || n <= 2)
            .collect(),
    };
    if max > 0 && v.last() != Some(&max) {
        v.push(max);
    }
    v
}

/// A fixed repetition policy: `reps` samples of `iters` calls after one
/// warm-up call; no early stop.
pub fn fixed_policy(reps: usize, iters: u64) -> Policy {
    Policy {
        warmup: Warmup::Reps(1),
        min_reps: reps.max(1),
        max_reps: reps.max(1),
        time_budget: Duration::ZERO,
        target_cv: None,
        min_sample: Duration::ZERO,
        iters: Some(iters.max(1)),
        max_iters: 1 << 40,
    }
}

/// GHz to turn ns into cycles: the frequency experiment's single-core figure
/// when this run has it, else a short measurement of the same chain here.
pub fn ghz(ctx: &mut ExpCtx, cpu: usize) -> (Option<f64>, String) {
    if let Some(g) = ctx.facts.ghz_single {
        return (
            Some(g),
            "the frequency experiment's single-core clock".into(),
        );
    }
    let _g = match crate::placement::pin::AffinityGuard::pin(cpu) {
        Ok(g) => g,
        Err(e) => return (None, format!("cannot pin to measure the clock: {e:#}")),
    };
    // Many short samples, and the fastest one: preemption and steal time
    // only ever slow a sample down, so on a shared CPU the fastest sample is
    // the one that ran alone.
    let p = Policy {
        warmup: Warmup::Time(Duration::from_millis(20)),
        min_reps: 50,
        max_reps: 50,
        time_budget: Duration::from_millis(100),
        target_cv: None,
        min_sample: Duration::from_micros(200),
        iters: None,
        max_iters: 1 << 40,
    };
    match measure(&p, ctx.stop, |it| Chain::Add.run(it, 1)) {
        Ok(m) => {
            let g = CHAIN_LEN as f64 / m.stats.min;
            ctx.facts.ghz_single = Some(g);
            (
                Some(g),
                "measured here with the frequency experiment's add chain, fastest of 50 short samples (frequency was not run)".into(),
            )
        }
        Err(e) => (None, format!("clock not measured: {e:#}")),
    }
}

/// Which huge pages a buffer should use when "2 MiB pages" are asked for.
#[derive(Clone, Debug, Serialize)]
pub struct HugeOutcome {
    pub report: PageReport,
    /// "thp" or "hugetlbfs".
    pub mechanism: &'static str,
    pub note: Option<String>,
}

/// Map a buffer of huge pages: THP by madvise first (touched by `touch`);
/// if the kernel gave base pages for part of it, try hugetlbfs; keep the
/// better and say what was obtained.
pub fn huge_buffer(
    bytes: usize,
    policy: Option<MemPolicy>,
    touch: impl Fn(&Buffer) -> Result<()>,
) -> Result<(Buffer, HugeOutcome)> {
    let opts = BufferOptions {
        pages: PageRequest::Thp,
        policy: policy.clone(),
        touch: crate::placement::buffer::Touch::No,
    };
    let thp = Buffer::new(bytes, &opts);
    let thp_err = match thp {
        Ok(b) => {
            touch(&b)?;
            let rep = b.page_report();
            if rep.kind == PageKind::Thp {
                return Ok((
                    b,
                    HugeOutcome {
                        report: rep,
                        mechanism: "thp",
                        note: None,
                    },
                ));
            }
            return thp_incomplete(b, rep, bytes, policy, &touch);
        }
        Err(e) => e,
    };
    let opts_h = hugetlb_options(policy);
    match Buffer::new(bytes, &opts_h) {
        Ok(h) => {
            touch(&h)?;
            let r = h.page_report();
            Ok((
                h,
                HugeOutcome {
                    report: r,
                    mechanism: "hugetlbfs",
                    note: Some(format!("THP unavailable ({thp_err:#}); used hugetlbfs")),
                },
            ))
        }
        Err(e) => bail!("2 MiB pages not available: THP: {thp_err:#}; hugetlbfs: {e:#}"),
    }
}

/// Options of a hugetlbfs buffer of [`huge_buffer`] (touched afterwards).
fn hugetlb_options(policy: Option<MemPolicy>) -> BufferOptions {
    BufferOptions {
        pages: PageRequest::HugeTlb,
        policy,
        touch: crate::placement::buffer::Touch::No,
    }
}

/// Step of [`huge_buffer`]: THP buffer `b` (page report `rep`) got base
/// pages for part of it. Try hugetlbfs; fall back to the partial THP buffer.
fn thp_incomplete(
    b: Buffer,
    rep: PageReport,
    bytes: usize,
    policy: Option<MemPolicy>,
    touch: &impl Fn(&Buffer) -> Result<()>,
) -> Result<(Buffer, HugeOutcome)> {
    let why = rep
        .note
        .clone()
        .unwrap_or_else(|| format!("{:?}", rep.kind));
    // Try hugetlbfs; fall back to the partial THP buffer.
    let opts_h = hugetlb_options(policy);
    match Buffer::new(bytes, &opts_h) {
        Ok(h) => {
            touch(&h)?;
            let r = h.page_report();
            drop(b);
            Ok((
                h,
                HugeOutcome {
                    report: r,
                    mechanism: "hugetlbfs",
                    note: Some(format!("THP incomplete ({why}); used hugetlbfs")),
                },
            ))
        }
        Err(e) => Ok((
            b,
            HugeOutcome {
                report: rep,
                mechanism: "thp",
                note: Some(format!(
                    "THP incomplete ({why}) and hugetlbfs unavailable ({e:#}): figures mix page sizes"
                )),
            },
        )),
    }
}

/// Repetitions of one figure for the memory experiments.
pub fn reps(profile: Profile) -> usize {
    match profile {
        Profile::Quick => 5,
        Profile::Standard => 10,
        Profile::Full => 20,
    }
}

/// Counters around a seed loop (the counters room, `harness::counted`):
/// task-clock, page-faults, cycles, instructions, branches, cache
/// references/misses of the calling thread while `f` runs. Counting never
/// fails the measurement: events that cannot be counted carry their state and
/// reason in the value; the note says what was counted or why nothing was.
pub fn with_counters<R>(
    scope: &str,
    f: impl FnOnce() -> R,
) -> (R, Option<serde_json::Value>, String) {
    let (r, c) = crate::harness::counted::on_this_thread(scope, f);
    let counted: Vec<&str> = c
        .events
        .iter()
        .filter(|e| e.value.is_some())
        .map(|e| e.name.as_str())
        .collect();
    let missing: Vec<String> = c
        .events
        .iter()
        .filter(|e| e.value.is_none())
        .map(|e| e.why_missing())
        .collect();
    let mut note = if counted.is_empty() {
        "no counter could be read".to_string()
    } else {
        format!(
            "counted over the whole measurement, warm-up included: {}",
            counted.join(", ")
        )
    };
    if let Some(ipc) = c.metrics.ipc {
        note.push_str(&format!("; IPC {ipc:.2}"));
    }
    if let Some(first) = missing.first() {
        note.push_str(&format!(
            "; not available: {first}{}",
            if missing.len() > 1 {
                format!(" (and {} more)", missing.len() - 1)
            } else {
                String::new()
            }
        ));
    }
    (r, Some(crate::harness::counted::to_value(&[c])), note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_grows_slowly_with_the_cpus() {
        // Up to 64 CPUs: every count to 8, then every 4th, powers of two, max.
        assert_eq!(
            thread_counts(16, Profile::Standard),
            [1, 2, 3, 4, 5, 6, 7, 8, 12, 16]
        );
        assert_eq!(thread_counts(64, Profile::Standard).len(), 22);
        // Beyond: the step grows with the CPUs (8 at 128, 24 at 384).
        let big = thread_counts(128, Profile::Standard);
        assert_eq!(
            &big[8..],
            [16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128]
        );
        let huge = thread_counts(384, Profile::Standard);
        assert!(huge.len() <= 30, "{huge:?}");
        assert!(huge.contains(&256) && huge.ends_with(&[384]), "{huge:?}");
        assert_eq!(
            thread_counts(96, Profile::Quick),
            [1, 2, 4, 8, 16, 32, 64, 96]
        );
        assert_eq!(thread_counts(6, Profile::Full), [1, 2, 3, 4, 5, 6]);
    }
    use crate::machine::limits::CgroupRoom;

    /// A 256 MiB cgroup with 250 MiB left on a host with 20 GiB available.
    fn cgroup_room() -> MemoryRoom {
        MemoryRoom {
            available: Some(20 * GIB as u64),
            cgroup: Some(CgroupRoom {
                limit: 256 * MIB as u64,
                left: 250 * MIB as u64,
                name: "memory limit",
            }),
        }
    }

    #[test]
    fn plans_take_half_of_the_room_and_say_why_not() {
        let room = cgroup_room();
        assert_eq!(auto_cap_of(&room), 125 * MIB);
        assert_eq!(explicit_cap(&room), Some(187 * MIB + 512 * KIB));
        assert_eq!(
            fit_or_reason(&room, "the DRAM point needs", 100 * MIB),
            Ok(())
        );
        let why = fit_or_reason(&room, "the DRAM point needs", 384 * MIB).unwrap_err();
        assert_eq!(
            why,
            "the 384 MiB the DRAM point needs does not fit the cgroup's 256 MiB memory limit (250 MiB left): at most 125 MiB may be used, leaving headroom"
        );
        let note = capped_note("arrays", 125 * MIB, 3 * GIB, &room);
        assert_eq!(
            note,
            "arrays capped at 125 MiB by the cgroup's 256 MiB memory limit (250 MiB left), half of it for the buffers (wanted 3 GiB)"
        );
        // The host alone: half of MemAvailable, as before.
        let host = MemoryRoom {
            available: Some(8 * GIB as u64),
            cgroup: None,
        };
        assert_eq!(auto_cap_of(&host), 4 * GIB);
        assert_eq!(auto_cap_of(&MemoryRoom::default()), 2 * GIB);
    }
}

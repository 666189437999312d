//! What the bandwidth experiment measures on a machine: the kernels, widths,
//! stores, placements and thread counts of its points, the array sizes for
//! DRAM and each cache level, and its time (docs/methods-memory.md).

use super::arrays::Variant;
use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::experiments::common::{
    self, cpu_order, thread_counts, CacheFacts, Placement, LEVEL_NAMES, MIB,
};
use crate::experiments::experiment::Profile;
use crate::kernels::memory::{BwKernel, StoreKind, Width};
use crate::machine::MachineInfo;
use anyhow::{bail, Result};
use serde::Serialize;
use std::time::Duration;

/// The `scope` param of the sweep's figures when the arrays follow STREAM's
/// rule (see [`BandwidthPlan::scope`]): a place, not latency's figure.
pub const DRAM_SCOPE: &str = "dram";

/// Shortest sample of the sweep. One pass over arrays of 4× the last-level
/// cache normally lasts longer (a sample is then one pass, as in STREAM);
/// this only guards against passes so short that a microsecond of release
/// skew or a timer step would show. Longer samples would not be better: on
/// a busy machine every long sample catches some other task's time slice,
/// where short ones leave most samples clean and the median robust.
pub const SWEEP_MIN_SAMPLE: Duration = Duration::from_millis(2);

/// Everything the bandwidth experiment will do.
#[derive(Clone, Debug, Serialize)]
pub struct BandwidthPlan {
    /// Bytes of each array (all threads together).
    pub array_bytes: usize,
    /// CPUs available to the sweep.
    pub cpus: CpuSet,
    /// Placements swept, each with its thread counts.
    pub placements: Vec<Placement>,
    /// Thread counts (applied to every placement, capped by its CPUs).
    pub threads: Vec<usize>,
    /// Measured at every thread count and placement.
    pub sweep: Vec<Variant>,
    /// Measured at 1 thread and at all threads (compact) only.
    pub ends: Vec<Variant>,
    /// Per-cache-level working sets (per thread).
    pub levels: Vec<(String, usize)>,
    pub level_kernels: Vec<Variant>,
    pub reps: usize,
    /// Bind the arrays to this node (None: first touch by each thread).
    pub node: Option<usize>,
    /// `scope` parameter of the sweep's records: "dram" when the arrays follow
    /// STREAM's rule (≥ 4× the last-level cache), "array" for a smaller
    /// size chosen by the user or cut to fit memory (figures may come from
    /// a cache).
    pub scope: &'static str,
    /// Why the DRAM-scope figures are not available (STREAM's arrays do
    /// not fit the memory this process may take): one record says so.
    pub dram_unavailable: Option<String>,
    /// Each point of the sweep uses 4 × the last-level caches its own CPUs
    /// can fill (STREAM's rule for those threads; [`point_bytes`]), within
    /// `array_bytes`; false with `--size` (every point the whole arrays).
    pub per_point: bool,
    pub notes: Vec<String>,
}

impl BandwidthPlan {
    /// Bytes of each array that the sweep's point on `cpus` reads: with
    /// [`per_point`](Self::per_point), 4 × the last-level caches those CPUs
    /// can fill, at least 64 MiB, at most `array_bytes`.
    pub fn point_bytes(&self, machine: &MachineInfo, cpus: &[usize]) -> usize {
        if !self.per_point {
            return self.array_bytes;
        }
        let cf = CacheFacts::of(machine);
        let serving = cf.llc_serving(machine, &CpuSet::from_ids(cpus.iter().copied()));
        serving
            .saturating_mul(4)
            .max(64 * MIB)
            .min(self.array_bytes)
    }
}

fn vector() -> Width {
    Width::widest().unwrap_or(Width::Scalar)
}

/// Each STREAM array's bytes (STREAM's rule: at least 4 × the total
/// last-level cache), cut to the memory this process may take (a note
/// says so); cut below the rule, the records are scope `array` and the
/// DRAM figure is not available, with the reason.
fn dram_arrays(cf: &CacheFacts, notes: &mut Vec<String>) -> (usize, &'static str, Option<String>) {
    // STREAM rule: each array at least 4x the total last-level cache.
    let wanted = (cf.llc_total * 4).max(64 * MIB);
    let room = common::memory_room();
    let array = wanted
        .min(common::auto_cap_of(&room) / 3)
        .max(64 * common::KIB);
    let mut scope = DRAM_SCOPE;
    let mut dram_unavailable = None;
    if array < wanted {
        notes.push(common::capped_note("arrays", array * 3, wanted * 3, &room));
        if array < cf.llc_total * 4 {
            // Not STREAM's DRAM figure: measured as arrays (scope=array),
            // the DRAM figure not available with the reason.
            scope = "array";
            dram_unavailable = common::fit_or_reason(
                &room,
                &format!(
                    "the DRAM figure needs (3 arrays of 4 × the {} last-level cache, STREAM's rule)",
                    fmt_size(cf.llc_total)
                ),
                wanted * 3,
            )
            .err();
        }
    }
    (array, scope, dram_unavailable)
}

/// The default plan of a profile.
pub fn plan(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> BandwidthPlan {
    let cf = CacheFacts::of(machine);
    let mut notes = Vec::new();
    if let Some(n) = &cf.note {
        notes.push(n.clone());
    }
    let (array, scope, dram_unavailable) = dram_arrays(&cf, &mut notes);
    let v = vector();
    let (sweep, ends) = profile_variants(profile, v);
    let ends = ends.into_iter().filter(|e| !sweep.contains(e)).collect();
    let levels = level_working_sets(machine, &cf);
    BandwidthPlan {
        array_bytes: array,
        cpus: cpus.clone(),
        placements: vec![
            Placement::Compact,
            Placement::SpreadCore,
            Placement::SpreadNode,
        ],
        threads: thread_counts(cpus.len(), profile),
        sweep,
        ends,
        levels,
        level_kernels: vec![
            Variant::new(BwKernel::Read, v, StoreKind::Normal),
            Variant::new(BwKernel::Triad, v, StoreKind::Normal),
        ],
        reps: match profile {
            Profile::Quick => 3,
            Profile::Standard => 10,
            Profile::Full => 20,
        },
        node: None,
        scope,
        dram_unavailable,
        per_point: true,
        notes,
    }
}

/// The variants of a profile (`v`: the widest vector width): those swept
/// at every thread count and placement, and those measured at the ends only.
fn profile_variants(profile: Profile, v: Width) -> (Vec<Variant>, Vec<Variant>) {
    let nt = StoreKind::NonTemporal;
    let no = StoreKind::Normal;
    match profile {
        Profile::Quick => (
            vec![Variant::new(BwKernel::Triad, v, no)],
            vec![
                Variant::new(BwKernel::Read, v, no),
                Variant::new(BwKernel::Copy, v, no),
                Variant::new(BwKernel::Triad, v, nt),
                Variant::new(BwKernel::Triad, Width::Scalar, no),
            ],
        ),
        Profile::Standard => (
            vec![
                Variant::new(BwKernel::Triad, v, no),
                Variant::new(BwKernel::Copy, v, no),
            ],
            vec![
                Variant::new(BwKernel::Read, v, no),
                Variant::new(BwKernel::Write, v, no),
                Variant::new(BwKernel::Write, v, nt),
                Variant::new(BwKernel::Copy, v, nt),
                Variant::new(BwKernel::Triad, v, nt),
                Variant::new(BwKernel::Read, Width::Scalar, no),
                Variant::new(BwKernel::Triad, Width::Scalar, no),
            ],
        ),
        Profile::Full => {
            let mut ends = Vec::new();
            for w in [v, Width::Scalar] {
                for k in BwKernel::ALL {
                    for s in [no, nt] {
                        let var = Variant::new(k, w, s);
                        if !ends.contains(&var) {
                            ends.push(var);
                        }
                    }
                }
            }
            (
                vec![
                    Variant::new(BwKernel::Triad, v, no),
                    Variant::new(BwKernel::Copy, v, no),
                    Variant::new(BwKernel::Read, v, no),
                    Variant::new(BwKernel::Triad, v, nt),
                ],
                ends,
            )
        }
    }
}

/// Each cache level's working set per thread (a multiple of 4 KiB, at
/// least 8 KiB).
fn level_working_sets(machine: &MachineInfo, cf: &CacheFacts) -> Vec<(String, usize)> {
    let mut levels: Vec<(String, usize)> = Vec::new();
    // Per-thread working set: half of a private level, or half of the
    // shared level's share per core.
    for (name, size) in &cf.levels {
        let sharing = machine
            .caches_named(name)
            .first()
            .map(|c| c.shared_cpu_list.len().max(1))
            .unwrap_or(1);
        let ws = if name.as_str() == LEVEL_NAMES[0] || sharing == 1 {
            size / 2
        } else {
            size / sharing / 2
        };
        levels.push((name.clone(), (ws / 4096 * 4096).max(8192)));
    }
    levels
}

/// Rough duration (s): per point, passes over [`BandwidthPlan::point_bytes`]
/// at [`est_bw`]; first touches once per thread count on a machine with
/// several nodes (each team touches its own pages), else once.
pub fn estimate(plan: &BandwidthPlan, machine: &MachineInfo) -> f64 {
    // A sample lasts at least min_sample; a pass shorter than that is
    // repeated, after calibration passes.
    let min_s = SWEEP_MIN_SAMPLE.as_secs_f64();
    let per = |v: &Variant, bytes: usize, bw: f64| {
        let scalar = if v.width == Width::Scalar { 0.7 } else { 1.0 };
        let p = bytes as f64 / 8.0 * v.kernel.bus_bytes(v.store) as f64 / (bw * scalar);
        let calibration = if p < min_s { min_s * 1.5 } else { 0.0 };
        p.max(min_s) * (plan.reps as f64 + 1.0) + calibration + 0.01
    };
    let multi_node = machine.numa_nodes.len() > 1;
    let all = plan.cpus.len().max(1);
    let mut t = 0.0;
    let mut touched = false;
    for (placement, order, same) in distinct_orders(plan, machine) {
        if same.is_some() {
            continue;
        }
        for &th in plan.threads.iter().filter(|&&n| n <= order.len()) {
            let cpus = &order[..th];
            let bytes = plan.point_bytes(machine, cpus);
            let bw = est_bw(machine, cpus);
            if multi_node || !touched {
                // Three arrays, first-touched at ~4 GB/s per thread.
                t += bytes as f64 * 3.0 / (4e9 * th as f64).min(bw);
                touched = true;
            }
            for v in &plan.sweep {
                t += per(v, bytes, bw);
            }
            if placement == Placement::Compact && (th == 1 || th == all) {
                for v in &plan.ends {
                    t += per(v, bytes, bw);
                }
            }
        }
    }
    // Cache levels: calibrated samples, ~2 ms each.
    t += plan.levels.len() as f64 * plan.level_kernels.len() as f64 * 2.0 * 0.03;
    t
}

/// The DRAM bandwidth a plan assumes for threads on `cpus`:
/// [`common::est_stream_bw`] over the NUMA nodes they sit on.
pub fn est_bw(machine: &MachineInfo, cpus: &[usize]) -> f64 {
    let mut nodes: Vec<usize> = cpus.iter().filter_map(|&c| machine.node_of(c)).collect();
    nodes.sort_unstable();
    nodes.dedup();
    common::est_stream_bw(cpus.len(), nodes.len())
}

pub(super) fn distinct_orders(
    plan: &BandwidthPlan,
    machine: &MachineInfo,
) -> Vec<(Placement, Vec<usize>, Option<Placement>)> {
    let mut out: Vec<(Placement, Vec<usize>, Option<Placement>)> = Vec::new();
    for &p in &plan.placements {
        let order = cpu_order(machine, &plan.cpus, p);
        // Same order for every thread count as an earlier placement: skip.
        let same = out.iter().find(|(_, o, _)| *o == order).map(|(q, _, _)| *q);
        out.push((p, order, same));
    }
    out
}

/// What `cpuscope bandwidth` may change in a profile's plan (`None` or
/// empty: the profile's choice).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Thread counts to sweep (`1,2,4`, `1-16`).
    pub threads: Option<String>,
    /// Placements (compact, spread_core, spread_node).
    pub placements: Vec<String>,
    /// Kernels (read, write, copy, triad).
    pub kernels: Vec<String>,
    /// Widths (vector, scalar, avx512, avx, sse2, neon).
    pub widths: Vec<String>,
    /// Stores (normal, nt).
    pub stores: Vec<String>,
    /// Bytes of each array.
    pub size: Option<String>,
    /// Bind the arrays to this NUMA node.
    pub node: Option<String>,
    /// Leave out the per-cache-level figures.
    pub no_levels: bool,
    /// Rounds per figure.
    pub reps: Option<usize>,
}

/// Each value of a comma list option, parsed by `f`.
fn parse_list<T>(v: &[String], what: &str, f: impl Fn(&str) -> Option<T>) -> Result<Vec<T>> {
    v.iter()
        .map(|s| f(s.trim()).ok_or_else(|| anyhow::anyhow!("{what}: unknown value '{s}'")))
        .collect()
}

/// The profile's plan with `o` applied; each error is one line naming the option.
pub fn plan_with(m: &MachineInfo, cpus: &CpuSet, p: Profile, o: &Options) -> Result<BandwidthPlan> {
    let mut plan = plan(m, cpus, p);
    if let Some(t) = &o.threads {
        plan.threads = thread_counts_option(t, cpus)?;
    }
    if !o.placements.is_empty() {
        plan.placements = parse_list(&o.placements, "--placement", Placement::parse)?;
    }
    let widths = parse_list(&o.widths, "--width", |s| match s {
        "vector" => Some(vector()),
        o => Width::parse(o),
    })?;
    for w in &widths {
        if !w.supported() {
            bail!("--width: {} is not supported by this CPU", w.name());
        }
    }
    let kernels = parse_list(&o.kernels, "--kernels", BwKernel::parse)?;
    let stores = parse_list(&o.stores, "--stores", |s| match s {
        "normal" => Some(StoreKind::Normal),
        "nt" | "non-temporal" | "nontemporal" => Some(StoreKind::NonTemporal),
        _ => None,
    })?;
    if !kernels.is_empty() || !widths.is_empty() || !stores.is_empty() {
        plan.sweep = variants_of(kernels, widths, stores);
        plan.ends.clear();
    }
    if let Some(s) = &o.size {
        set_array_size(&mut plan, s, m)?;
    }
    if let Some(n) = &o.node {
        plan.node = Some(common::one_node(n, m, "--node")?);
    }
    if let Some(r) = o.reps {
        if r == 0 || r > 1000 {
            bail!("--reps {r}: must be between 1 and 1000");
        }
        plan.reps = r;
    }
    if o.no_levels {
        plan.levels.clear();
        plan.level_kernels.clear();
    }
    Ok(plan)
}

/// `--threads`: the thread counts to sweep, each at least 1 and at most
/// one per usable CPU.
fn thread_counts_option(t: &str, cpus: &CpuSet) -> Result<Vec<usize>> {
    let set = common::parse_counts(t, "--threads")?;
    if set.is_empty() || set.contains(0) {
        bail!("--threads '{t}': thread counts must be 1 or more");
    }
    let max = set.iter().last().unwrap_or(1);
    if max > cpus.len() {
        bail!(
            "--threads: {max} threads but only {} usable CPUs ({cpus}): one pinned thread per CPU",
            cpus.len()
        );
    }
    Ok(set.to_vec())
}

/// Every kernel × width × store asked for (an empty list: its default),
/// each once.
fn variants_of(kernels: Vec<BwKernel>, widths: Vec<Width>, stores: Vec<StoreKind>) -> Vec<Variant> {
    fn or<T>(v: Vec<T>, d: T) -> Vec<T> {
        if v.is_empty() {
            vec![d]
        } else {
            v
        }
    }
    let (ks, ws, ss) = (
        or(kernels, BwKernel::Triad),
        or(widths, vector()),
        or(stores, StoreKind::Normal),
    );
    let mut sweep = Vec::new();
    for &k in &ks {
        for &w in &ws {
            for &s in &ss {
                let v = Variant::new(k, w, s);
                if !sweep.contains(&v) {
                    sweep.push(v);
                }
            }
        }
    }
    sweep
}

/// `--size`: each array's bytes (`s`), checked to fit; smaller than
/// STREAM's rule, the records are scope `array` (a note says so).
fn set_array_size(plan: &mut BandwidthPlan, s: &str, m: &MachineInfo) -> Result<()> {
    let b = common::parse_size(s)?;
    if b == 0 {
        bail!("--size: size 0 is not a size");
    }
    common::check_fits("--size (3 arrays)", b.saturating_mul(3))?;
    plan.array_bytes = b;
    plan.per_point = false;
    plan.notes.clear();
    plan.scope = DRAM_SCOPE;
    plan.dram_unavailable = None;
    let cf = CacheFacts::of(m);
    if b < cf.llc_total.saturating_mul(4) {
        plan.scope = "array";
        plan.notes.push(format!(
            "arrays of {} are smaller than 4 × the last-level cache ({}): not a DRAM figure, parts may come from caches (records carry scope=array)",
            fmt_size(b),
            fmt_size(cf.llc_total)
        ));
    }
    Ok(())
}

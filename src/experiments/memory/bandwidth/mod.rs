//! Memory bandwidth with STREAM semantics (read, write, copy, triad), in the
//! widest vector width and in scalar code, with normal and non-temporal
//! stores, swept over thread counts with compact and spread placements, plus
//! bandwidth inside each cache level.
//!
//! Bytes are reported two ways: as the kernel counts them (STREAM: copy 16 B
//! per element, triad 24 B) and write-allocate adjusted (a normal store also
//! reads its line first: copy 24 B, triad 32 B; non-temporal stores do not).

mod arrays;
mod plan;
pub mod text;
pub mod view;

pub use arrays::*;
pub use plan::*;

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::experiments::common::{self, cpu_order, Placement, PLACEMENT_PARAM};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::experiments::memory::payload::{BandwidthData, SaturationData};
use crate::harness::measure::{measure_team_inline, Policy, Warmup};
use crate::kernels::memory::{BwKernel, StoreKind, BW_ELEMS_ALIGN};
use crate::machine::MachineInfo;
use crate::placement::team::Team;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{bail, Result};
use serde::Serialize;
use std::time::Duration;

pub struct Bandwidth;

pub const EXP: &str = "bandwidth";
const METHOD_VERSION: u32 = 1;

/// GB/s of one STREAM kernel, named after the kernel (see [`kernel_metric`]).
pub const READ: MetricId = MetricId::new(EXP, "read");
pub const WRITE: MetricId = MetricId::new(EXP, "write");
pub const COPY: MetricId = MetricId::new(EXP, "copy");
pub const TRIAD: MetricId = MetricId::new(EXP, "triad");
/// A placement's sweep, when it was not measured (same CPU order as another).
pub const SWEEP: MetricId = MetricId::new(EXP, "sweep");
/// The thread count after which the sweep stops growing; the curve in data.
pub const SATURATION_THREADS: MetricId = MetricId::new(EXP, "saturation_threads");
/// The best single-thread median over the kernels.
pub const PER_CORE_CEILING: MetricId = MetricId::new(EXP, "per_core_ceiling");
/// Per-level bandwidth, when no cache size is known.
pub const CACHE_LEVEL: MetricId = MetricId::new(EXP, "cache_level");

/// The figure of kernel `k`: its GB/s are named after it.
pub fn kernel_metric(k: BwKernel) -> MetricId {
    match k {
        BwKernel::Read => READ,
        BwKernel::Write => WRITE,
        BwKernel::Copy => COPY,
        BwKernel::Triad => TRIAD,
    }
}

/// One measured point: GB/s per round, counted and bus.
#[derive(Clone, Debug, Serialize)]
pub struct BwPoint {
    pub variant: Variant,
    pub threads: usize,
    pub cpus: Vec<usize>,
    /// Counted GB/s, one per round.
    pub samples: Vec<f64>,
    pub bus_factor: f64,
    pub working_set_bytes: usize,
    /// Per round: how late the last thread started after the release, ns.
    pub start_skew_ns: Vec<f64>,
    /// Per round: the slowest thread's own time over the fastest's.
    pub imbalance: Vec<f64>,
    /// Rounds in which a thread was switched out (None: not counted).
    pub preempted: Option<usize>,
}

/// Measure `v` on the team over the first `len` elements of each thread's
/// chunks; GB/s per round (team time, release to last finish).
pub fn measure_variant(
    team: &mut Team,
    arrays: &StreamArrays,
    v: &Variant,
    len: usize,
    policy: &Policy,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<BwPoint> {
    let n = team.size();
    let len = len.min(arrays.chunk(n)) / BW_ELEMS_ALIGN * BW_ELEMS_ALIGN;
    if len == 0 {
        bail!("{}: working set too small for {n} threads", v.label());
    }
    // All rounds back to back in one team round (see measure_team_inline).
    let m = measure_team_inline(team, policy, stop, |ctx, iters| {
        let mut s = 0.0;
        for _ in 0..iters {
            s += arrays.pass(v, ctx.index, n, len);
        }
        s
    })?;
    if m.last_results.iter().any(|r| r.is_nan()) {
        bail!(
            "{} could not run (unsupported width or bad arrays)",
            v.label()
        );
    }
    arrays.check(v, n, len)?;
    let (l, st) = v.kernel.counted_bytes();
    // Bytes per pass as the kernel counts them; bytes per ns = GB/s.
    let counted = (len * n * (l + st)) as f64;
    Ok(BwPoint {
        variant: *v,
        threads: n,
        cpus: team.cpus().to_vec(),
        samples: m.samples.iter().map(|ns| counted / ns).collect(),
        bus_factor: v.kernel.bus_bytes(v.store) as f64 / (l + st) as f64,
        working_set_bytes: len * n * 8 * v.kernel.arrays(),
        imbalance: (0..m.reps)
            .map(|r| {
                let ts = m.thread_samples.iter().filter_map(|t| t.get(r).copied());
                let (lo, hi) = ts.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
                    (lo.min(x), hi.max(x))
                });
                hi / lo
            })
            .collect(),
        start_skew_ns: m.max_start_skew_ns,
        preempted: m.preempted,
    })
}

fn method(v: &Variant) -> String {
    let (l, s) = v.kernel.counted_bytes();
    format!(
        "STREAM {} ({}), {}-bit {} loads/stores{}; each thread streams its own chunk of every array (first-touched by that thread); GB/s = {} B counted per element × elements / team time (release to last finish); a round is one pass over the arrays (passes back to back when one lasts under 2 ms); rounds back to back in one team region, the threads spinning at a barrier between them; median of rounds, best in data",
        v.kernel.name(),
        match v.kernel {
            BwKernel::Read => "s += a[i]",
            BwKernel::Write => "a[i] = q",
            BwKernel::Copy => "c[i] = a[i]",
            BwKernel::Triad => "a[i] = b[i] + q*c[i]",
        },
        v.width.bits(),
        v.width.name(),
        if v.store == StoreKind::NonTemporal {
            ", non-temporal stores"
        } else {
            ""
        },
        l + s
    )
}

fn record(p: &BwPoint, placement: Placement, scope: &str) -> ResultRecord {
    let v = &p.variant;
    let best = p.samples.iter().copied().fold(f64::NAN, f64::max);
    let st = crate::base::Stats::from_samples(&p.samples);
    let med = st.as_ref().map(|s| s.median);
    let mut r = ResultRecord::of(kernel_metric(v.kernel), "GB/s", true)
        .with_param("threads", p.threads as u64)
        .with_param("width", v.width.name())
        .with_param("store", v.store.name())
        .with_param("scope", scope)
        .with_method(&method(v), METHOD_VERSION)
        .with_samples(p.samples.clone());
    if scope == DRAM_SCOPE || scope == "array" {
        r = r.with_param(PLACEMENT_PARAM, placement.name());
    }
    if let Some(m) = med {
        if (p.bus_factor - 1.0).abs() > 1e-9 {
            r = r.with_note(&format!(
                "write-allocate adjusted: {:.2} GB/s on the bus (×{:.3}: each normal store also reads its line)",
                m * p.bus_factor,
                p.bus_factor
            ));
        }
    }
    if let Some(k) = p.preempted.filter(|&k| k > 0) {
        r = r.with_note(&format!(
            "{k} of {} rounds had a thread switched out (involuntary context switches): the machine was busy, figures may be low",
            p.samples.len()
        ));
    }
    let median_of = |xs: &[f64]| crate::base::Stats::from_samples(xs).map(|s| s.median);
    r.with_payload(&BandwidthData {
        cpus: p.cpus.clone(),
        preempted_rounds: p.preempted,
        start_skew_us_median: median_of(&p.start_skew_ns).map(|x| x / 1e3),
        start_skew_us_max: p
            .start_skew_ns
            .iter()
            .copied()
            .reduce(f64::max)
            .map(|x| x / 1e3),
        thread_imbalance_median: median_of(&p.imbalance),
        best_gbs: Some(best),
        median_gbs: med,
        bus_factor: p.bus_factor,
        bus_gbs_median: med.map(|m| m * p.bus_factor),
        bus_gbs_best: Some(best * p.bus_factor),
        working_set_bytes: p.working_set_bytes,
        theoretical_gbs: None,
        dram_efficiency: None,
    })
}

/// The theoretical DRAM bandwidth of the DIMMs behind `cpus` (SMBIOS type
/// 17, `machine::dimm`), with how it was made; Err: why there is none.
pub fn dram_theory(machine: &MachineInfo, cpus: &CpuSet) -> Result<(f64, String), String> {
    let md = &machine.memory_devices;
    if let Some(why) = &md.unavailable {
        return Err(format!("the DIMMs are not known ({why})"));
    }
    if let Some(n) = md.notes.iter().find(|n| n.contains("invented")) {
        return Err(n.clone());
    }
    let tb = md
        .theoretical_bandwidth
        .as_ref()
        .ok_or("no populated DIMM with a known speed in the SMBIOS table")?;
    let spanned: Vec<usize> = machine
        .packages
        .iter()
        .enumerate()
        .filter(|(_, p)| p.cpus.iter().any(|c| cpus.contains(c)))
        .map(|(i, _)| i)
        .collect();
    let bound = if tb.upper_bound { "at most " } else { "" };
    if spanned.len() >= machine.packages.len() {
        return Ok((tb.gbs, format!("{bound}{:.1} GB/s: {}", tb.gbs, tb.basis)));
    }
    // A subset of the sockets: their own channels, when the locators name
    // as many sockets as the machine has (matched in order).
    if tb.per_socket.len() != machine.packages.len() {
        return Err(format!(
            "these CPUs use {} of {} sockets and the DIMM locators do not tell which DIMMs are behind them",
            spanned.len(),
            machine.packages.len()
        ));
    }
    let per: Vec<f64> = tb.per_socket.values().copied().collect();
    let g: f64 = spanned.iter().filter_map(|&i| per.get(i)).sum();
    Ok((
        g,
        format!(
            "{bound}{g:.1} GB/s: the channels of the {} socket(s) these CPUs are on ({})",
            spanned.len(),
            tb.basis
        ),
    ))
}

/// A DRAM-scope bandwidth record with its efficiency against the DIMMs'
/// theoretical bandwidth, or the reason there is none.
fn with_dram_theory(r: ResultRecord, theory: &Result<(f64, String), String>) -> ResultRecord {
    if r.params.get("scope").and_then(|v| v.as_str()) != Some(DRAM_SCOPE) {
        return r;
    }
    let Some(v) = r.value else {
        return r;
    };
    match theory {
        Ok((g, basis)) => {
            let mut data = r.data_as::<BandwidthData>().unwrap_or_default();
            let bus = data
                .bus_gbs_median
                .filter(|b| (b - v).abs() > 1e-9)
                .map(|b| {
                    format!(
                        "; on the bus (write-allocate adjusted) {:.0}%",
                        b / g * 100.0
                    )
                })
                .unwrap_or_default();
            data.theoretical_gbs = Some(*g);
            data.dram_efficiency = Some(v / g);
            r.with_note(&format!(
                "{:.0}% of the DIMMs' theoretical {g:.1} GB/s{bus} ({basis})",
                v / g * 100.0
            ))
            .with_payload(&data)
        }
        Err(why) => r.with_note(&format!("theoretical DRAM bandwidth not available: {why}")),
    }
}

/// Where growth stops: the first thread count after which adding threads
/// gains 5% or less (None with fewer than two counts).
pub fn saturation(points: &[(usize, f64)]) -> Option<usize> {
    if points.len() < 2 {
        return None;
    }
    for w in points.windows(2) {
        if w[1].1 <= w[0].1 * 1.05 {
            return Some(w[0].0);
        }
    }
    None
}

/// The sweep's repetitions: `reps` samples after one warm-up pass, each
/// sample at least `min_sample` long (one pass over the arrays, or, when a
/// pass is shorter, as many passes back to back as it takes, calibrated by
/// passes before the warm-up). The passes run inside one team round
/// ([`measure_team_inline`]).
pub fn sweep_policy(reps: usize, min_sample: Duration) -> Policy {
    Policy {
        min_sample,
        iters: None,
        max_iters: 1 << 20,
        ..common::fixed_policy(reps, 1)
    }
}

/// Run a plan.
pub fn run_plan(
    ctx: &mut ExpCtx,
    plan: &BandwidthPlan,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    if plan.cpus.is_empty() {
        out(ResultRecord::unavailable(
            TRIAD.experiment,
            TRIAD.metric,
            "GB/s",
            "no usable CPU",
        ))?;
        return Ok(());
    }
    if let Some(why) = &plan.dram_unavailable {
        out(
            ResultRecord::unavailable(TRIAD.experiment, TRIAD.metric, "GB/s", why)
                .with_param("scope", DRAM_SCOPE)
                .with_method(
                    "STREAM triad over three arrays of at least 4 × the last-level cache",
                    METHOD_VERSION,
                ),
        )?;
    }
    let policy = sweep_policy(plan.reps, SWEEP_MIN_SAMPLE);
    let orders = distinct_orders(plan, ctx.machine);
    let mut one_thread: Vec<BwPoint> = Vec::new();
    // Sweep.
    for (placement, order, same) in &orders {
        if let Some(q) = same {
            out(same_order_record(*placement, order, *q))?;
            continue;
        }
        let Some(curve) = sweep_placement(
            ctx,
            plan,
            (*placement, order),
            &policy,
            &mut one_thread,
            out,
        )?
        else {
            return Ok(());
        };
        // Saturation per sweep variant.
        for v in &plan.sweep {
            out(saturation_record(v, *placement, &curve, order.len()))?;
        }
    }
    if let Some(r) = per_core_ceiling(&one_thread) {
        out(r)?;
    }
    // Cache levels.
    if !plan.level_kernels.is_empty() {
        cache_levels(ctx, plan, out)?;
    }
    Ok(())
}

/// The sweep of one placement (`order`: its CPUs in order): each variant
/// at every thread count of the plan that fits, one record each; the
/// one-thread compact points go to `one_thread`. Returns the curve
/// (variant, threads, GB/s) for the saturation records, or None when the
/// run was stopped.
fn sweep_placement(
    ctx: &mut ExpCtx,
    plan: &BandwidthPlan,
    (placement, order): (Placement, &[usize]),
    policy: &Policy,
    one_thread: &mut Vec<BwPoint>,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<Option<Vec<(Variant, usize, f64)>>> {
    let multi_node = ctx.machine.numa_nodes.len() > 1;
    let mut arrays: Option<(usize, StreamArrays)> = None;
    let mut curve: Vec<(Variant, usize, f64)> = Vec::new();
    for &n in plan.threads.iter().filter(|&&n| n <= order.len()) {
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        let cpus = &order[..n];
        let mut team = Team::new(cpus)?;
        // This point's arrays: 4 × the caches its CPUs can fill.
        let need = plan.point_bytes(ctx.machine, cpus);
        // With one node every page is local to every CPU: keep the
        // arrays (the whole plan's size); with several, first-touch them
        // again by this team, at this point's size.
        let remake = match &arrays {
            None => true,
            Some((t, _)) => multi_node && *t != n,
        };
        if remake {
            drop(arrays.take());
            let bytes = if multi_node { need } else { plan.array_bytes };
            (ctx.step)(&format!(
                "first touch of 3 × {} by {n} thread(s)",
                fmt_size(bytes)
            ));
            arrays = Some((n, StreamArrays::new(&mut team, bytes, plan.node)?));
        }
        let Some((_, arr)) = &arrays else { continue };
        let len = point_len(arr, n, need);
        let ends_here = placement == Placement::Compact && (n == 1 || n == order.len());
        let mut vs: Vec<Variant> = plan.sweep.clone();
        if ends_here {
            vs.extend(plan.ends.iter().copied());
        }
        for v in vs {
            if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(None);
            }
            (ctx.step)(&format!(
                "{} × {n} thread(s), {}",
                v.label(),
                placement.name()
            ));
            let p = measure_variant(&mut team, arr, &v, len, policy, ctx.stop)?;
            if v.kernel == BwKernel::Write {
                arr.reset(&mut team)?;
            }
            let used = if len == arr.chunk(n) {
                arr.elems * 8
            } else {
                len * n * 8
            };
            let mut rec = record(&p, placement, plan.scope).with_note(&format!(
                "arrays 3 × {} ({} pages)",
                fmt_size(used),
                arr.pages
            ));
            if n == 1 && placement == Placement::Compact {
                one_thread.push(p.clone());
            }
            if let Some(m) = rec.value {
                curve.push((v, n, m));
            }
            for note in &plan.notes {
                rec = rec.with_note(note);
            }
            out(rec)?;
        }
    }
    Ok(Some(curve))
}

/// Elements per thread that `n` threads read at a point of `need` bytes per
/// array: their chunks of `arr`, cut to `need` (a multiple of the kernels'
/// alignment).
fn point_len(arr: &StreamArrays, n: usize, need: usize) -> usize {
    let want = need / 8 / n.max(1) / BW_ELEMS_ALIGN * BW_ELEMS_ALIGN;
    arr.chunk(n).min(want.max(BW_ELEMS_ALIGN))
}

/// The sweep record of a placement that orders the CPUs exactly like `q`,
/// measured already: not measured twice.
fn same_order_record(placement: Placement, order: &[usize], q: Placement) -> ResultRecord {
    ResultRecord::unavailable(
        SWEEP.experiment,
        SWEEP.metric,
        "GB/s",
        &format!(
            "{} places threads exactly like {} on this machine (same CPU order {}): not measured twice",
            placement.name(),
            q.name(),
            CpuSet::from_ids(order.iter().copied())
        ),
    )
    .with_param(PLACEMENT_PARAM, placement.name())
}

/// The saturation record of sweep variant `v` under `placement`, from the
/// sweep's medians (`curve`: variant, threads, GB/s) over `cpus` usable
/// CPUs.
fn saturation_record(
    v: &Variant,
    placement: Placement,
    curve: &[(Variant, usize, f64)],
    cpus: usize,
) -> ResultRecord {
    let pts: Vec<(usize, f64)> = curve
        .iter()
        .filter(|(x, _, _)| x == v)
        .map(|(_, n, g)| (*n, *g))
        .collect();
    let sat = saturation(&pts);
    let best = pts.iter().map(|p| p.1).fold(f64::NAN, f64::max);
    let mut r = ResultRecord::of(SATURATION_THREADS, "threads", false)
        .with_param("kernel", v.kernel.name())
        .with_param("width", v.width.name())
        .with_param("store", v.store.name())
        .with_param(PLACEMENT_PARAM, placement.name())
        .with_method("smallest thread count after which one more step of the sweep gains 5% or less (derived from the sweep medians)", METHOD_VERSION)
        .with_payload(&SaturationData {
            curve: pts.iter().map(|&(n, g)| (n, Some(g))).collect(),
        });
    match sat {
        Some(s) => {
            r.value = Some(s as f64);
            r = r.with_note(&format!("peak {best:.1} GB/s over the sweep"));
        }
        None if pts.len() < 2 => {
            r.unavailable_reason = Some(format!(
                "a sweep needs at least two thread counts: {} measured ({})",
                pts.len(),
                if cpus < 2 {
                    "one usable CPU"
                } else {
                    "the thread counts asked for"
                }
            ));
        }
        None => {
            r.unavailable_reason = Some(format!(
                "still growing by more than 5% at {} threads (all usable CPUs): not saturated",
                pts.last().map(|p| p.0).unwrap_or(0)
            ));
        }
    }
    r
}

/// Per-core ceiling: the best single-thread median over the kernels (none
/// without a single-thread point).
fn per_core_ceiling(one_thread: &[BwPoint]) -> Option<ResultRecord> {
    let best = one_thread
        .iter()
        .filter_map(|p| crate::base::Stats::from_samples(&p.samples).map(|s| (p, s.median)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let mut r = ResultRecord::of(PER_CORE_CEILING, "GB/s", true)
        .with_method(
            "highest single-thread median over the measured kernels (counted bytes)",
            METHOD_VERSION,
        )
        .with_note(&format!(
            "from {} on CPU {:?}",
            best.0.variant.label(),
            best.0.cpus
        ));
    r.value = Some(best.1);
    Some(r)
}

fn cache_levels(
    ctx: &mut ExpCtx,
    plan: &BandwidthPlan,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    if plan.levels.is_empty() {
        out(ResultRecord::unavailable(
            CACHE_LEVEL.experiment,
            CACHE_LEVEL.metric,
            "GB/s",
            "no cache sizes known: per-level bandwidth not measured",
        ))?;
        return Ok(());
    }
    let order = cpu_order(ctx.machine, &plan.cpus, Placement::SpreadCore);
    let mut counts = vec![1usize];
    if order.len() > 1 {
        counts.push(order.len());
    }
    let pol = Policy {
        warmup: Warmup::Time(Duration::from_millis(5)),
        min_reps: plan.reps.max(3),
        max_reps: plan.reps.max(3) * 3,
        time_budget: Duration::from_millis(20),
        target_cv: Some(0.01),
        min_sample: Duration::from_millis(2),
        iters: None,
        max_iters: 1 << 30,
    };
    let levels = levels_that_fit(plan, counts.iter().copied().max().unwrap_or(1), out)?;
    let max_ws = levels.iter().map(|l| l.1).max().unwrap_or(0);
    if levels.is_empty() {
        return Ok(());
    }
    for &n in &counts {
        let mut team = Team::new(&order[..n])?;
        // Arrays sized for the largest per-thread working set (all 3 arrays).
        let arr = StreamArrays::new(&mut team, level_array_bytes(max_ws, n), None)?;
        for (name, ws) in &levels {
            for v in &plan.level_kernels {
                if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return Ok(());
                }
                // Elements per thread so that all arrays of v fit in ws.
                let elems = ws / 8 / v.kernel.arrays();
                (ctx.step)(&format!(
                    "{} in {name} ({} per thread) × {n}",
                    v.label(),
                    fmt_size(*ws)
                ));
                let p = measure_variant(&mut team, &arr, v, elems, &pol, ctx.stop)?;
                out(record(&p, Placement::SpreadCore, name).with_note(&format!(
                    "working set {} per thread (all arrays), inside {name}",
                    fmt_size(p.working_set_bytes / n)
                )))?;
            }
        }
    }
    Ok(())
}

/// Bytes of each of the 3 arrays the per-level figures use for a working
/// set of `ws` per thread over `n` threads.
fn level_array_bytes(ws: usize, n: usize) -> usize {
    (ws + 2 * BW_ELEMS_ALIGN * 8) * n
}

/// The cache levels whose arrays (3 of [`level_array_bytes`] at `n`
/// threads) fit the memory this process may take now; each other level's
/// figures are handed to `out` as not available, with the reason.
fn levels_that_fit(
    plan: &BandwidthPlan,
    n: usize,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<Vec<(String, usize)>> {
    let room = common::memory_room();
    let mut fit = Vec::new();
    for (name, ws) in &plan.levels {
        let need = level_array_bytes(*ws, n).saturating_mul(3);
        let what = format!(
            "the {name} figures need (3 arrays for {} per thread × {n} thread(s))",
            fmt_size(*ws)
        );
        match common::fit_or_reason(&room, &what, need) {
            Ok(()) => fit.push((name.clone(), *ws)),
            Err(why) => {
                for v in &plan.level_kernels {
                    out(ResultRecord::unavailable(
                        kernel_metric(v.kernel).experiment,
                        kernel_metric(v.kernel).metric,
                        "GB/s",
                        &why,
                    )
                    .with_param("width", v.width.name())
                    .with_param("store", v.store.name())
                    .with_param("scope", name.as_str()))?;
                }
            }
        }
    }
    Ok(fit)
}

impl Experiment for Bandwidth {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "memory bandwidth (STREAM kernels), thread sweep, per cache level"
    }
    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        estimate(&plan(machine, cpus, profile), machine)
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let mut p = plan(ctx.machine, &ctx.cpus, ctx.profile);
        self.run_with(ctx, &mut p, out)
    }
}

impl WithParams for Bandwidth {
    type Params = BandwidthPlan;
    /// Measure with a [`BandwidthPlan`] (`cpuscope bandwidth`, see [`plan_with`]).
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut BandwidthPlan,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        let theory = dram_theory(ctx.machine, &p.cpus);
        let mut with_theory = |r: ResultRecord| out(with_dram_theory(r, &theory));
        run_plan(ctx, p, &mut with_theory)
    }
}

#[cfg(test)]
mod tests;

//! Loaded latency: the DRAM latency one chasing thread sees while k other
//! threads stream through memory, k = 0 .. all other CPUs. Each point pairs
//! the latency with the bandwidth the streams drew at the same time: the
//! latency-vs-bandwidth curve (Intel MLC's --loaded_latency view, open and
//! cross-vendor; here the load is varied by the number of streams).

pub mod text;
pub mod view;

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::base::Stats;
use crate::experiments::common::{
    self, cpu_order, huge_buffer, CacheFacts, Placement, DRAM_REACH, MIB,
};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::experiments::memory::bandwidth::{StreamArrays, Variant};
use crate::experiments::memory::payload::{LoadedCurveData, LoadedCurvePoint, LoadedPointData};
use crate::kernels::memory::{BwKernel, Layout, PointerChain, StoreKind, Width, BW_ELEMS_ALIGN};
use crate::machine::MachineInfo;
use crate::placement::team::Team;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{bail, Result};
use serde::Serialize;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
pub use traffic::{arrays_of, Traffic};

pub struct LoadedLatency;

mod traffic;

pub const EXP: &str = "loaded_latency";
/// Chase latency with `streams` streaming threads running.
pub const LATENCY: MetricId = MetricId::new(EXP, "latency");
/// Loaded/unloaded latency at the highest load; the curve in data.
pub const CURVE: MetricId = MetricId::new(EXP, "curve");
const METHOD_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize)]
pub struct LoadedPlan {
    /// CPU that chases.
    pub chaser: usize,
    /// CPUs that stream, in the order they are added.
    pub streamers: Vec<usize>,
    /// Numbers of streaming threads to measure.
    pub counts: Vec<usize>,
    /// Injection delays to measure with the most streams, µs of pause after
    /// each block a stream moves (Mess's and MLC's way to sweep the load
    /// from idle to saturation with a fixed set of threads); none: the
    /// counts only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub delays_us: Vec<f64>,
    pub chain_bytes: usize,
    pub array_bytes: usize,
    pub traffic: BwKernel,
    pub store: StoreKind,
    /// Rounds per point.
    pub reps: usize,
    /// Chase time per round, ms.
    pub round_ms: f64,
    /// Why nothing is measured (the chase that reaches memory does not fit
    /// the memory this process may take); None to measure.
    pub unavailable: Option<String>,
    pub notes: Vec<String>,
}

pub fn plan(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> LoadedPlan {
    let cf = CacheFacts::of(machine);
    let mut notes = Vec::new();
    if let Some(n) = &cf.note {
        notes.push(n.clone());
    }
    let order = cpu_order(machine, cpus, Placement::SpreadCore);
    let chaser = order.first().copied().unwrap_or(0);
    let streamers: Vec<usize> = order.iter().skip(1).copied().collect();
    let counts = {
        let mut v: Vec<usize> = (0..=streamers.len())
            .filter(|&k| match profile {
                Profile::Full => true,
                Profile::Standard => k <= 8 || k % 4 == 0,
                Profile::Quick => k <= 2 || k.is_power_of_two(),
            })
            .collect();
        if v.last() != Some(&streamers.len()) {
            v.push(streamers.len());
        }
        v
    };
    let room = common::memory_room();
    let cap = common::auto_cap_of(&room) / 2;
    let want_chain = (cf.llc * 4).max(64 * MIB);
    let want_array = (cf.llc_total * 4).max(64 * MIB);
    let chain = want_chain.min(cap).max(64 * common::KIB);
    let array = want_array.min(cap).max(64 * common::KIB);
    if chain < want_chain || array < want_array {
        notes.push(common::capped_note(
            "chase chain and stream arrays",
            chain + array,
            want_chain + want_array,
            &room,
        ));
    }
    // The loaded latency is memory's: the chase must reach past the cache.
    let reach = cf.llc.saturating_mul(DRAM_REACH);
    let unavailable = (chain < reach).then(|| {
        common::fit_or_reason(
            &room,
            &format!(
                "the chase chain and stream arrays need (each {DRAM_REACH} × the {} last-level cache)",
                fmt_size(cf.llc)
            ),
            reach * 2,
        )
        .err()
        .unwrap_or_else(|| format!("the chase of {} stays below {DRAM_REACH} × the last-level cache", fmt_size(chain)))
    });
    if streamers.is_empty() {
        notes.push("one usable CPU: no other CPU to generate load, only the unloaded point".into());
    }
    LoadedPlan {
        chaser,
        streamers,
        counts,
        delays_us: Vec::new(),
        chain_bytes: chain,
        array_bytes: array,
        traffic: BwKernel::Read,
        store: StoreKind::Normal,
        // Short rounds, many of them: see the latency experiment.
        reps: match profile {
            Profile::Quick => 9,
            Profile::Standard => 15,
            Profile::Full => 25,
        },
        round_ms: match profile {
            Profile::Quick => 3.0,
            Profile::Standard => 5.0,
            Profile::Full => 10.0,
        },
        unavailable,
        notes,
    }
}

pub fn estimate(plan: &LoadedPlan) -> f64 {
    let setup = plan.chain_bytes as f64 / 64.0 * 8e-9 + plan.array_bytes as f64 / 4e9;
    setup + plan.levels().len() as f64 * (plan.reps as f64 + 1.0) * (plan.round_ms / 1000.0 + 0.01)
}

impl LoadedPlan {
    /// The load levels, in the order measured: each count of streams at
    /// full speed, then the most streams at each injection delay (none
    /// without streams).
    pub fn levels(&self) -> Vec<(usize, f64)> {
        let mut v: Vec<(usize, f64)> = self.counts.iter().map(|&k| (k, 0.0)).collect();
        let most = self.counts.iter().copied().max().unwrap_or(0);
        if most > 0 {
            v.extend(self.delays_us.iter().map(|&d| (most, d)));
        }
        v
    }
}

/// One point of the curve.
#[derive(Clone, Debug, Serialize)]
pub struct LoadedPoint {
    pub streams: usize,
    /// µs each stream paused after each block (0: full speed).
    #[serde(skip_serializing_if = "is_zero")]
    pub delay_us: f64,
    /// ns per load, one per round.
    pub latency_ns: Vec<f64>,
    /// GB/s drawn by the streams (counted bytes), one per round.
    pub bandwidth_gbs: Vec<f64>,
}

pub fn run_plan(
    ctx: &mut ExpCtx,
    plan: &LoadedPlan,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let width = Width::widest().unwrap_or(Width::Scalar);
    let v = Variant::new(plan.traffic, width, plan.store);
    let t = Traffic::plain(v);
    let measured = measure(ctx, plan, &[(t.clone(), plan.array_bytes)])?;
    let (points, method) = match measured.into_iter().next() {
        Some(m) => (m.points, m.method),
        None => (Vec::new(), method_text(plan, &t, "", plan.array_bytes)),
    };
    let base = points
        .first()
        .and_then(|p| Stats::from_samples(&p.latency_ns))
        .map(|s| s.median);
    let mut curve = Vec::new();
    for p in &points {
        let (rec, point) = point_record(plan, p, base, &method, &v);
        curve.push(point);
        out(rec)?;
    }
    out(curve_record(plan, &points, base, curve))
}

/// What one traffic gave: its curve's points and the method line.
pub struct Measured {
    /// Bytes of each of its arrays.
    pub array_bytes: usize,
    pub points: Vec<LoadedPoint>,
    pub method: String,
}

/// The chase every traffic is measured against: its chain, where it is,
/// and the steps of one round.
struct Chase {
    chain: PointerChain,
    pos: std::sync::atomic::AtomicUsize,
    steps: u64,
}

/// Measure the curve of each traffic (its STREAM variants, the bytes of
/// each of its arrays) in turn, over `plan`'s counts of streams: one chain
/// (built once, by the chaser), the arrays of each traffic first-touched by
/// its streams. Ctrl-C stops between rounds: the traffics measured so far
/// are returned (a traffic cut short keeps its finished points).
pub fn measure(
    ctx: &mut ExpCtx,
    plan: &LoadedPlan,
    traffics: &[(Traffic, usize)],
) -> Result<Vec<Measured>> {
    let max_k = plan.counts.iter().copied().max().unwrap_or(0);
    if max_k > plan.streamers.len() {
        bail!(
            "{max_k} streams asked for but only {} other CPUs",
            plan.streamers.len()
        );
    }
    // Team: chaser first, then every streamer that may be used.
    let mut cpus = vec![plan.chaser];
    cpus.extend_from_slice(&plan.streamers[..max_k]);
    let mut team = Team::new(&cpus)?;
    let (chain, mech) = build_chain(ctx, &mut team, plan)?;
    // Steps per round from an unloaded calibration.
    let mut pos = chain.chase(200_000);
    let t0 = std::time::Instant::now();
    pos = chain.chase_from(pos, 100_000);
    let ns0 = t0.elapsed().as_nanos() as f64 / 100_000.0;
    let steps = ((plan.round_ms * 1e6 / ns0.max(1.0)) as u64).clamp(10_000, 50_000_000);
    let chase = Chase {
        chain,
        pos: std::sync::atomic::AtomicUsize::new(pos),
        steps,
    };
    let mut all = Vec::new();
    for (t, bytes) in traffics {
        if ctx.stop.load(Ordering::Relaxed) {
            break;
        }
        let arrays = stream_arrays(ctx, plan, max_k, t, *bytes)?;
        let points = curve_points(ctx, plan, &mut team, &chase, arrays.as_ref(), t)?;
        all.push(Measured {
            array_bytes: *bytes,
            points,
            method: method_text(plan, t, &mech, *bytes),
        });
    }
    Ok(all)
}

/// The points of one traffic's curve: per count of streams, rounds in
/// which the chaser times its chase while the streams run `t` over their
/// chunks of `arrays` (none: no stream).
fn curve_points(
    ctx: &mut ExpCtx,
    plan: &LoadedPlan,
    team: &mut Team,
    chase: &Chase,
    arrays: Option<&StreamArrays>,
    t: &Traffic,
) -> Result<Vec<LoadedPoint>> {
    let max_k = team.size() - 1;
    let steps = chase.steps;
    let block = (256 * 1024 / 8) / BW_ELEMS_ALIGN * BW_ELEMS_ALIGN; // 256 KiB per array per step
    let mut points: Vec<LoadedPoint> = Vec::new();
    for (k, delay_us) in plan.levels() {
        if ctx.stop.load(Ordering::Relaxed) {
            break;
        }
        let pause = if delay_us > 0.0 {
            format!(", each pausing {delay_us} µs per block")
        } else {
            String::new()
        };
        (ctx.step)(&format!(
            "chasing on CPU {} with {k} streaming thread(s) ({}{pause})",
            plan.chaser,
            t.name()
        ));
        let delay_ns = delay_us * 1e3;
        let mut point = LoadedPoint::unmeasured(k, delay_us);
        for rep in 0..=plan.reps {
            let done = AtomicBool::new(false);
            let round = match team.run_round(|c| -> (f64, f64) {
                let timer = c.timer();
                if c.index == 0 {
                    // Let the streams get going first.
                    let t_start = timer.now();
                    while timer.since(t_start) < 3e5 && k > 0 {
                        std::hint::spin_loop();
                    }
                    let a = timer.now();
                    let p = chase
                        .chain
                        .chase_from(chase.pos.load(Ordering::Relaxed), steps);
                    let ns = timer.since(a);
                    chase.pos.store(p, Ordering::Relaxed);
                    done.store(true, Ordering::Release);
                    (ns, 0.0)
                } else if c.index <= k {
                    let Some(arr) = arrays else {
                        return (0.0, 0.0);
                    };
                    let how = Streaming {
                        arr,
                        t,
                        max_k,
                        block,
                        delay_ns,
                    };
                    how.until(timer, c.index - 1, &done)
                } else {
                    (0.0, 0.0)
                }
            }) {
                Ok(round) => round,
                // Ctrl-C gave the round up: keep the rounds and points done.
                Err(_) if ctx.stop.load(Ordering::Relaxed) => break,
                Err(e) => return Err(e),
            };
            if rep == 0 {
                continue; // warm-up round
            }
            point.add_round(&round.results, steps);
        }
        if point.latency_ns.is_empty() {
            break;
        }
        points.push(point);
    }
    Ok(points)
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// What a streaming thread of a round runs: `t`'s kernels in turn over its
/// chunk of `arr` (one of `max_k`), `block` elements at a time, pausing
/// `delay_ns` after each block (the injection delay; 0: none).
struct Streaming<'a> {
    arr: &'a StreamArrays,
    t: &'a Traffic,
    max_k: usize,
    block: usize,
    delay_ns: f64,
}

impl Streaming<'_> {
    /// Stream as thread `t` until the chaser is `done` (or the round was
    /// given up: the chaser's thread ended or panicked; Ctrl-C): the ns it
    /// ran and the bytes it counted.
    fn until(&self, timer: &crate::base::Timer, t: usize, done: &AtomicBool) -> (f64, f64) {
        let (arr, block) = (self.arr, self.block);
        let chunk = arr.chunk(self.max_k);
        let mut off = 0;
        let mut bytes = 0usize;
        let a = timer.now();
        let mut i = 0;
        while !done.load(Ordering::Acquire) && !crate::placement::watch::abandoned() {
            let v = self.t.block(i);
            i += 1;
            black_box(arr.pass_range(v, t, self.max_k, off, block));
            let (l, s) = v.kernel.counted_bytes();
            bytes += block.min(chunk - off) * (l + s);
            off += block;
            if off >= chunk {
                off = 0;
            }
            if self.delay_ns > 0.0 {
                // The injection delay: a pause that moves no byte.
                let d = timer.now();
                while timer.since(d) < self.delay_ns && !done.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
            }
        }
        let ns = timer.since(a);
        (ns, bytes as f64)
    }
}

impl LoadedPoint {
    /// The point of `streams` streams pausing `delay_us` after each block,
    /// before its first round.
    fn unmeasured(streams: usize, delay_us: f64) -> LoadedPoint {
        LoadedPoint {
            streams,
            delay_us,
            latency_ns: Vec::new(),
            bandwidth_gbs: Vec::new(),
        }
    }

    /// Add one measured round (`r`: per thread, ns and counted bytes; the
    /// chaser first, `steps` loads): its ns per load and the GB/s the
    /// streams drew together.
    fn add_round(&mut self, r: &[(f64, f64)], steps: u64) {
        self.latency_ns.push(r[0].0 / steps as f64);
        self.bandwidth_gbs.push(
            r.iter()
                .skip(1)
                .filter(|x| x.0 > 0.0)
                .map(|x| x.1 / x.0)
                .sum::<f64>(),
        );
    }
}

/// The chase chain, built by the chaser thread (team index 0, first touch
/// on its node), and how its huge pages were had.
fn build_chain(
    ctx: &mut ExpCtx,
    team: &mut Team,
    plan: &LoadedPlan,
) -> Result<(PointerChain, String)> {
    (ctx.step)(&format!(
        "building a {} chain on CPU {}",
        fmt_size(plan.chain_bytes),
        plan.chaser
    ));
    let chain_bytes = plan.chain_bytes;
    let built = team.run_round(|c| -> Option<Result<(PointerChain, String)>> {
        if c.index != 0 {
            return None;
        }
        Some((|| {
            let (buf, o) = huge_buffer(chain_bytes, None, |b| {
                b.touch_here();
                Ok(())
            })?;
            let ch = PointerChain::build(buf, chain_bytes, Layout::Random { stride: 64 }, 99)?;
            Ok((ch, o.mechanism.to_string()))
        })())
    })?;
    let Some(Some(r)) = built.results.into_iter().next() else {
        bail!("the chaser thread built no chain");
    };
    r
}

/// The streams' arrays: split among all `max_k` streamers, first-touched
/// by them (none without streamers).
fn stream_arrays(
    ctx: &mut ExpCtx,
    plan: &LoadedPlan,
    max_k: usize,
    t: &Traffic,
    array_bytes: usize,
) -> Result<Option<StreamArrays>> {
    if max_k == 0 {
        return Ok(None);
    }
    let mut st = Team::new(&plan.streamers[..max_k])?;
    (ctx.step)(&format!(
        "first touch of {} by {max_k} streaming thread(s)",
        fmt_size(array_bytes)
    ));
    Ok(Some(StreamArrays::with_count(
        &mut st,
        array_bytes,
        None,
        t.arrays(),
    )?))
}

/// The method line of the latency records (`mech`: how the chain's huge
/// pages were had).
fn method_text(plan: &LoadedPlan, t: &Traffic, mech: &str, array_bytes: usize) -> String {
    format!(
        "one thread chases a random cycle over {} (2 MiB pages by {mech}) on CPU {} while k threads stream {} ({}) over their own chunks of {}; per round: ns per load of the chaser, GB/s (counted bytes) of the streams over the same time; median of rounds",
        fmt_size(plan.chain_bytes),
        plan.chaser,
        t.words(),
        t.block(0).width.name(),
        fmt_size(array_bytes)
    )
}

/// The latency record of one point, with the load against the unloaded
/// latency (`base`) and the streams' bandwidth, and its entry of the curve.
/// The rounds in which streams drew bandwidth: a round where they moved no
/// byte measured no load (the streams got no CPU time while the chaser
/// ran), not a load of 0 GB/s.
pub fn drawn(gbs: &[f64]) -> Vec<f64> {
    gbs.iter().copied().filter(|&g| g > 0.0).collect()
}

fn point_record(
    plan: &LoadedPlan,
    p: &LoadedPoint,
    base: Option<f64>,
    method: &str,
    v: &Variant,
) -> (ResultRecord, LoadedCurvePoint) {
    // With streams, the rounds where they moved no byte measured no load
    // (no CPU time for them), not 0 GB/s: left out of the median.
    let bws = if p.streams > 0 {
        Stats::from_samples(&drawn(&p.bandwidth_gbs))
    } else {
        Stats::from_samples(&p.bandwidth_gbs)
    };
    let mut rec = ResultRecord::of(LATENCY, "ns", false)
        .with_param("streams", p.streams as u64)
        .with_param("traffic", v.kernel.name())
        .with_method(method, METHOD_VERSION)
        .with_samples(p.latency_ns.clone());
    if let (Some(b), Some(v)) = (base, rec.value) {
        if p.streams > 0 {
            rec = rec.with_note(&format!("×{:.2} the unloaded latency", v / b));
        }
    }
    if p.streams > 0 {
        rec = rec.with_note(&match &bws {
            Some(s) => format!("streams drew {:.2} GB/s (median) meanwhile", s.median),
            None => format!(
                "the {} stream(s) moved no byte in any round (no CPU time while the chaser ran: a busy machine): this point measured no load",
                p.streams
            ),
        });
    }
    let cpus_used: Vec<usize> = plan.streamers[..p.streams].to_vec();
    rec = rec.with_payload(&LoadedPointData {
        bandwidth_gbs: p.bandwidth_gbs.clone(),
        bandwidth_median_gbs: bws.as_ref().map(|s| s.median),
        stream_cpus: cpus_used,
        chaser_cpu: plan.chaser,
    });
    let point = LoadedCurvePoint {
        streams: p.streams,
        latency_ns: rec.value,
        bandwidth_gbs: bws.as_ref().map(|s| s.median),
    };
    for n in &plan.notes {
        rec = rec.with_note(n);
    }
    (rec, point)
}

/// The curve record: loaded over unloaded latency at the highest load, the
/// whole curve in data.
fn curve_record(
    plan: &LoadedPlan,
    points: &[LoadedPoint],
    base: Option<f64>,
    curve: Vec<LoadedCurvePoint>,
) -> ResultRecord {
    let mut c = ResultRecord::of(CURVE, "ratio", false)
        .with_method("loaded/unloaded latency at the highest load measured (derived); the whole curve in data", METHOD_VERSION)
        .with_payload(&LoadedCurveData {
            points: curve,
            chain_bytes: plan.chain_bytes,
            array_bytes: plan.array_bytes,
        });
    let last = points
        .last()
        .and_then(|p| Stats::from_samples(&p.latency_ns))
        .map(|s| s.median);
    match (base, last, points.len()) {
        (Some(b), Some(l), n) if n > 1 => c.value = Some(l / b),
        _ => {
            c.unavailable_reason =
                Some("only the unloaded point: no other usable CPU to generate load".into())
        }
    }
    c
}

/// What `cpuscope loaded-latency` may change in a profile's plan (`None`:
/// the profile's choice).
#[derive(Clone, Debug)]
pub struct Options {
    /// CPU that chases.
    pub chaser: Option<usize>,
    /// CPUs that stream, in the order they are added (`--cpus`).
    pub streamers: Option<String>,
    /// Numbers of streaming threads to measure.
    pub streams: Option<String>,
    /// Traffic of the streams: read, write, copy, triad.
    pub traffic: String,
    /// Non-temporal stores for the streams.
    pub nt: bool,
    /// Working set of the chase.
    pub chain_size: Option<String>,
    /// Bytes of the streams' arrays.
    pub size: Option<String>,
}

/// The profile's plan with `o` applied; each error is one line naming the option.
pub fn plan_with(m: &MachineInfo, cpus: &CpuSet, p: Profile, o: &Options) -> Result<LoadedPlan> {
    let mut plan = plan(m, cpus, p);
    if let Some(c) = o.chaser {
        common::check_cpus(&CpuSet::from_ids([c]), cpus, "--cpu")?;
        plan.chaser = c;
        plan.streamers.retain(|&x| x != c);
        if !plan.streamers.is_empty() || cpus.len() > 1 {
            let others: Vec<usize> = cpus.iter().filter(|&x| x != c).collect();
            plan.streamers.retain(|x| others.contains(x));
            for o in others {
                if !plan.streamers.contains(&o) {
                    plan.streamers.push(o);
                }
            }
        }
    }
    if let Some(l) = &o.streamers {
        let want = CpuSet::parse(l).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
        common::check_cpus(&want, cpus, "--cpus")?;
        if want.contains(plan.chaser) {
            bail!(
                "--cpus: CPU {} is the chasing CPU; list only the streaming CPUs",
                plan.chaser
            );
        }
        plan.streamers = want.to_vec();
    }
    let n = plan.streamers.len();
    plan.counts = match &o.streams {
        Some(s) => {
            let set = common::parse_counts(s, "--streams")?;
            if set.is_empty() {
                bail!("--streams '{s}': names no count");
            }
            if let Some(m) = set.iter().last() {
                if m > n {
                    bail!("--streams: {m} streams but only {n} streaming CPU(s) available");
                }
            }
            set.to_vec()
        }
        None => plan.counts.into_iter().filter(|&k| k <= n).collect(),
    };
    plan.traffic = BwKernel::parse(&o.traffic).ok_or_else(|| {
        anyhow::anyhow!(
            "--traffic: unknown kernel '{}' (read, write, copy, triad)",
            o.traffic
        )
    })?;
    if o.nt {
        plan.store = StoreKind::NonTemporal;
    }
    if let Some(s) = &o.chain_size {
        plan.chain_bytes = common::size_option("--chain-size", s, 1, 4096)?;
        plan.unavailable = None;
    }
    if let Some(s) = &o.size {
        plan.array_bytes = common::size_option("--size", s, 3, 0)?;
    }
    let llc = CacheFacts::of(m).llc;
    for (what, b, given) in [
        (
            "chase working set",
            plan.chain_bytes,
            o.chain_size.is_some(),
        ),
        ("stream array", plan.array_bytes, o.size.is_some()),
    ] {
        if let Some(n) = common::below_llc_note(what, b, llc).filter(|_| given) {
            plan.notes.push(n);
        }
    }
    Ok(plan)
}

impl Experiment for LoadedLatency {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "DRAM latency under streaming load from 0..all other CPUs (latency vs bandwidth)"
    }
    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        estimate(&plan(machine, cpus, profile))
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let mut p = plan(ctx.machine, &ctx.cpus, ctx.profile);
        self.run_with(ctx, &mut p, out)
    }
}

impl WithParams for LoadedLatency {
    type Params = LoadedPlan;
    /// Measure with a [`LoadedPlan`] (`cpuscope loaded-latency`, see [`plan_with`]).
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut LoadedPlan,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        if let Some(why) = &p.unavailable {
            for id in [LATENCY, CURVE] {
                out(ResultRecord::unavailable(
                    id.experiment,
                    id.metric,
                    "ns",
                    why,
                ))?;
            }
            return Ok(());
        }
        run_plan(ctx, p, out)
    }
}

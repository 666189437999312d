//! Load-to-use latency against working-set size: a pointer chase through one
//! random cycle (Sattolo) of cache-line slots, on 4 KiB and on 2 MiB pages,
//! plus a TLB-separating variant (random inside each 4 KiB page, pages in
//! random order) and a sequential-stride variant (lmbench `lat_mem_rd`).
//! The curve's plateaus are detected and matched to the cache sizes that
//! `info` reports; disagreements are findings.

mod analysis;
pub mod giant;
mod plan;
pub mod text;
pub mod view;

pub use analysis::*;
pub use plan::*;

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::base::Stats;
use crate::experiments::common::{self, huge_buffer, CacheFacts, HugeOutcome, KIB, MIB};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::experiments::memory::payload::{
    ClimbData, CurveData, CurvePoint, DramData, L3InstanceData, LevelData, LevelMatch, MemoryPart,
    Plateau, PublishedData,
};
use crate::harness::measure::{measure, Policy, Warmup};
use crate::kernels::memory::{Layout, PointerChain};
use crate::machine::uarch::Core;
use crate::machine::MachineInfo;
use crate::placement::buffer::{Buffer, BufferOptions, PageRequest, Touch};
use crate::placement::mempolicy::MemPolicy;
use crate::placement::pin::AffinityGuard;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{bail, Result};
use serde::Serialize;
use std::hint::black_box;
use std::time::Duration;

pub struct Latency;

pub const EXP: &str = "latency";
const METHOD_VERSION: u32 = 1;

/// A curve: latency at the largest working set, every size in data.points.
pub const CURVE: MetricId = MetricId::new(EXP, "curve");
/// Latency of DRAM (the last plateau), and in cycles.
pub const DRAM: MetricId = MetricId::new(EXP, "dram");
pub const DRAM_CYCLES: MetricId = MetricId::new(EXP, "dram_cycles");
/// Random chase on 4 KiB pages minus 2 MiB pages: the page-walk share.
pub const TLB_COST: MetricId = MetricId::new(EXP, "tlb_cost");
/// Latency 1 GiB pages save against 2 MiB pages at the largest working
/// set both reach (the guest's own page walks, in a VM).
pub const GIANT_PAGE_SAVING: MetricId = MetricId::new(EXP, "giant_page_saving");
/// Latency added per doubling of the working set past the memory plateau
/// (page walks; nested ones in a VM).
pub const PAGE_WALK_CLIMB: MetricId = MetricId::new(EXP, "page_walk_climb");
/// Latency inside the L3 from one CPU of each L3 instance.
pub const L3_INSTANCE: MetricId = MetricId::new(EXP, "L3_instance");
/// The plateau of each cache level, named after the level (see [`level`]),
/// in ns and in cycles.
pub const L1D: MetricId = MetricId::new(EXP, "L1d");
pub const L2: MetricId = MetricId::new(EXP, "L2");
pub const L3: MetricId = MetricId::new(EXP, "L3");
pub const L4: MetricId = MetricId::new(EXP, "L4");
pub const L1D_CYCLES: MetricId = MetricId::new(EXP, "L1d_cycles");
pub const L2_CYCLES: MetricId = MetricId::new(EXP, "L2_cycles");
pub const L3_CYCLES: MetricId = MetricId::new(EXP, "L3_cycles");
pub const L4_CYCLES: MetricId = MetricId::new(EXP, "L4_cycles");
/// Per cache level (the order of [`common::LEVEL_NAMES`]): its figure
/// in ns and in cycles.
pub const LEVELS: [(MetricId, MetricId); 4] = [
    (L1D, L1D_CYCLES),
    (L2, L2_CYCLES),
    (L3, L3_CYCLES),
    (L4, L4_CYCLES),
];

/// The figures (ns, cycles) of the cache level named `name` (a name of
/// [`CacheFacts::levels`]: L1d, L2, L3, L4); None for another name.
pub fn level(name: &str) -> Option<(MetricId, MetricId)> {
    LEVELS.iter().copied().find(|(ns, _)| ns.metric == name)
}

/// One measured size.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub bytes: usize,
    pub ns: Stats,
    #[serde(skip)]
    pub samples: Vec<f64>,
    pub cycles: Option<f64>,
}

/// The levels of a measured curve: matched before its memory part (when it
/// has one), un-named where as slow as memory.
pub fn curve_levels(c: &CurveResult, levels: &[(String, usize)]) -> (Vec<LevelMatch>, Vec<usize>) {
    levels_of(&c.plateaus, c.memory.as_ref(), levels)
}

/// [`curve_levels`] from a curve's plateaus and memory part.
pub fn levels_of(
    plateaus: &[Plateau],
    memory: Option<&MemoryPart>,
    levels: &[(String, usize)],
) -> (Vec<LevelMatch>, Vec<usize>) {
    match memory {
        Some(m) => {
            let (mut lv, un) = match_levels_before(plateaus, levels, Some(m.first));
            memory_check_ns(&mut lv, m.dram_ns);
            (lv, un)
        }
        None => {
            let (mut lv, un) = match_levels(plateaus, levels);
            memory_check(&mut lv, plateaus);
            (lv, un)
        }
    }
}

/// The memory latency of a curve: its memory plateau, else its last plateau.
pub fn curve_dram_ns(c: &CurveResult) -> Option<f64> {
    c.memory
        .as_ref()
        .map(|m| m.dram_ns)
        .or_else(|| c.plateaus.last().map(|p| p.level_ns))
}

/// What one curve produced.
#[derive(Clone, Debug, Serialize)]
pub struct CurveResult {
    pub pattern: Pattern,
    pub pages: Pages,
    pub pages_obtained: Option<HugeOutcome>,
    pub points: Vec<Point>,
    pub plateaus: Vec<Plateau>,
    /// Where memory starts, its plateau and the climb beyond.
    pub memory: Option<MemoryPart>,
}

fn point_policy(reps: usize, min_sample: Duration) -> Policy {
    Policy {
        warmup: Warmup::Time(Duration::from_millis(2)),
        min_reps: reps,
        max_reps: reps * 3,
        time_budget: min_sample * (reps as u32 + 2),
        target_cv: Some(0.01),
        min_sample,
        iters: None,
        max_iters: 1 << 34,
    }
}

/// Chase one chain: warm it, then sample ns per load.
pub fn chase_samples(
    chain: &PointerChain,
    reps: usize,
    min_sample: Duration,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Vec<f64>> {
    // Warm caches and TLB: up to two traversals, at most 200k loads.
    // Every call goes on from where the previous one stopped, so repeated
    // calls walk the whole cycle instead of re-reading its cached head.
    let warm = (chain.slots() as u64 * 2).min(200_000);
    let mut pos = black_box(chain.chase(warm));
    let m = measure(&point_policy(reps, min_sample), stop, |it| {
        pos = chain.chase_from(pos, it);
        pos as u64
    })?;
    Ok(m.samples)
}

/// Make the buffer of a curve (largest size), pinned on `cpu` already.
fn curve_buffer(
    bytes: usize,
    pages: Pages,
    node: Option<usize>,
) -> Result<(Buffer, Option<HugeOutcome>)> {
    let policy = node.map(|n| MemPolicy::Bind(CpuSet::from_ids([n])));
    match pages {
        Pages::Small => {
            let b = Buffer::new(
                bytes,
                &BufferOptions {
                    pages: PageRequest::Base,
                    policy,
                    touch: Touch::Here,
                },
            )?;
            Ok((b, None))
        }
        Pages::Huge => {
            let (b, o) = huge_buffer(bytes, policy, |b| {
                b.touch_here();
                Ok(())
            })?;
            Ok((b, Some(o)))
        }
        Pages::Giant => {
            let b = Buffer::new(
                bytes,
                &BufferOptions {
                    pages: PageRequest::HugeTlb1G,
                    policy,
                    touch: Touch::Here,
                },
            )?;
            let report = b.page_report();
            Ok((
                b,
                Some(HugeOutcome {
                    report,
                    mechanism: "hugetlbfs",
                    note: None,
                }),
            ))
        }
    }
}

/// Measure one curve on the calling (pinned) thread.
#[allow(clippy::too_many_arguments)]
pub fn measure_curve(
    spec: &CurveSpec,
    stride: usize,
    node: Option<usize>,
    reps: usize,
    min_sample: Duration,
    ghz: Option<f64>,
    stop: &std::sync::atomic::AtomicBool,
    step: &mut dyn FnMut(&str),
) -> Result<CurveResult> {
    let Some(&max) = spec.sizes.iter().max() else {
        bail!("no sizes to measure");
    };
    let (mut buf, outcome) = curve_buffer(max, spec.pages, node)?;
    let mut points = Vec::with_capacity(spec.sizes.len());
    for (k, &size) in spec.sizes.iter().enumerate() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        if k % 4 == 0 || size >= 64 * MIB {
            step(&format!(
                "{} chase, {} pages, {}",
                spec.pattern.name(),
                spec.pages.name(),
                fmt_size(size)
            ));
        }
        let layout = match spec.pattern {
            Pattern::Random => Layout::Random { stride },
            Pattern::PageLocal => Layout::PageLocal {
                stride,
                page: 4 * KIB,
            },
            Pattern::Sequential => Layout::Sequential { stride },
        };
        let size = size.max(2 * stride);
        let chain = PointerChain::build(buf, size, layout, 0x5eed ^ size as u64)?;
        let samples = chase_samples(&chain, point_reps(reps, size), min_sample, stop);
        buf = chain.into_buffer();
        let samples = match samples {
            Ok(s) => s,
            Err(e)
                if e.downcast_ref::<crate::harness::measure::Interrupted>()
                    .is_some() =>
            {
                break
            }
            Err(e) => return Err(e),
        };
        let Some(st) = Stats::from_samples(&samples) else {
            bail!("non-finite latency samples at {}", fmt_size(size));
        };
        points.push(Point {
            bytes: size,
            cycles: ghz.map(|g| st.median * g),
            ns: st,
            samples,
        });
    }
    // Steps are found on the fastest sample of each size: preemption (other
    // tasks on the CPU, steal time in a VM) only ever adds time, so the
    // minimum is the figure least disturbed by a loaded machine.
    let xy: Vec<(usize, f64)> = points.iter().map(|p| (p.bytes, p.ns.min)).collect();
    let (plateaus, memory) = analyse_curve(&xy);
    Ok(CurveResult {
        memory,
        pattern: spec.pattern,
        pages: spec.pages,
        pages_obtained: outcome,
        points,
        plateaus,
    })
}

fn method(spec: &CurveSpec, stride: usize) -> String {
    let pat = match spec.pattern {
        Pattern::Random => format!("pointer chase through one random cycle (Sattolo) of {stride}-byte slots"),
        Pattern::PageLocal => format!("pointer chase, {stride}-byte slots in random order inside each 4 KiB page, pages in random order (one TLB miss per page)"),
        Pattern::Sequential => format!("pointer chase with a fixed {stride}-byte stride (lmbench lat_mem_rd order; prefetchers help)"),
    };
    format!(
        "{pat}, {} pages; 8 dependent loads per loop iteration; ns per load = sample time / loads; median of samples (>= 2 ms each) after warm-up",
        spec.pages.name()
    )
}

fn plateau_point<'a>(c: &'a CurveResult, p: &Plateau) -> &'a Point {
    &c.points[(p.first + p.last) / 2]
}

/// The DRAM figure of a curve that cannot reach memory, with why.
fn dram_unavailable(c: &CurveResult, plan: &LatencyPlan, meth: &str, why: &str) -> ResultRecord {
    curve_params(
        ResultRecord::unavailable(DRAM.experiment, DRAM.metric, "ns", why),
        c,
        plan,
    )
    .with_method(meth, METHOD_VERSION)
}

fn curve_params(rec: ResultRecord, c: &CurveResult, plan: &LatencyPlan) -> ResultRecord {
    let mut r = rec
        .with_param("pages", c.pages.name())
        .with_param("pattern", c.pattern.name());
    if let Some(n) = plan.node {
        r = r.with_param("node", n as u64);
    }
    r
}

/// Measured load-to-use cycles of cache level `level` (`L1d`, `L2`, `L3`)
/// against the figure the knowledge base publishes for this core: a note
/// (a finding when they differ by more than 20%) and the record's data.
pub fn against_published(
    level: &str,
    measured: f64,
    core: Result<&Core, String>,
) -> (String, PublishedData) {
    let c = match core {
        Ok(c) => c,
        Err(e) => {
            return (
                format!("published latency not available: {e}"),
                PublishedData::default(),
            )
        }
    };
    let lat = c.latency.clone().unwrap_or_default();
    let field = level.to_ascii_lowercase();
    let published = match field.as_str() {
        "l1d" => lat.l1d,
        "l2" => lat.l2,
        "l3" => lat.l3,
        _ => None,
    };
    let Some(p) = published else {
        return (
            format!(
                "published latency not available: {} gives no {level} load-to-use latency",
                c.name
            ),
            PublishedData::default(),
        );
    };
    let src = c.field_source(&lat.source, &lat.sources, &field);
    let ratio = measured / p;
    let mut note = format!(
        "published {level} load-to-use: {p} cycles ({}; source: {src}); measured/published ×{ratio:.2}",
        c.name
    );
    let finding = (ratio - 1.0).abs() > 0.2;
    if finding {
        note.push_str(&format!(
            "; finding: {:.0}% {} than published — more than 20% off: another tenant sharing the cache (a VM), a plateau that is not this level (TLB misses, a cache shared or partitioned differently than declared), or a clock reading off",
            (ratio - 1.0).abs() * 100.0,
            if ratio > 1.0 { "slower" } else { "faster" }
        ));
    }
    (
        note,
        PublishedData {
            published_cycles: Some(p),
            published_source: Some(src),
            measured_over_published: Some(ratio),
            finding: Some(finding),
        },
    )
}

/// The points whose samples make the DRAM figure, and how they were chosen:
/// the memory plateau ([`memory_part`]) — its top octave when it runs to the
/// largest size (several chains and more time than one point keep the figure
/// repeatable on a machine whose memory is shared with other work), all of it
/// when latency climbs beyond it (the climb is page walks, not DRAM).
/// Without a memory part: the last plateau after the last level, else the
/// largest size.
fn dram_pool<'a>(c: &'a CurveResult, levels: &[LevelMatch]) -> (Vec<&'a Point>, String) {
    let sizes: Vec<usize> = c.points.iter().map(|q| q.bytes).collect();
    let pick =
        |idx: Vec<usize>| -> Vec<&'a Point> { idx.into_iter().map(|i| &c.points[i]).collect() };
    if let Some(m) = &c.memory {
        let (idx, how) = match &m.climb {
            None if m.flat_last + 1 == c.points.len() => (
                top_octave(&sizes, m.first, m.flat_last),
                "samples of its top octave pooled",
            ),
            _ => (
                (m.first..=m.flat_last).collect(),
                "samples of every point pooled",
            ),
        };
        let pool = pick(idx);
        let mut note = format!(
            "memory plateau from {} to {} (past the last step, the points within ×{DRAM_FLAT} of its first octave's median); {how} ({} to {})",
            fmt_size(m.from_bytes),
            fmt_size(m.flat_to_bytes),
            fmt_size(pool.first().map(|q| q.bytes).unwrap_or(m.from_bytes)),
            fmt_size(pool.last().map(|q| q.bytes).unwrap_or(m.flat_to_bytes)),
        );
        if let Some(cl) = &m.climb {
            note.push_str(&format!(
                "; beyond it latency climbs from {} ({:+.1} ns per doubling, {:.1} ns at {}): page walks, not DRAM (latency.page_walk_climb)",
                fmt_size(cl.from_bytes),
                cl.ns_per_doubling,
                cl.ns_at_end,
                fmt_size(cl.to_bytes)
            ));
        }
        return (pool, note);
    }
    let Some(last) = c.points.last() else {
        return (Vec::new(), String::new());
    };
    let last_level_plateau = levels.iter().filter_map(|l| l.plateau).max();
    let dram_pl = c
        .plateaus
        .iter()
        .rfind(|p| last_level_plateau.is_none_or(|l| p.first > c.plateaus[l].last));
    match dram_pl {
        Some(p) if p.last + 1 == c.points.len() => {
            let pool = pick(top_octave(&sizes, p.first, p.last));
            let from = pool.first().map(|q| q.bytes).unwrap_or(p.to_bytes);
            let note = format!(
                "last plateau from {} on; samples of its top octave pooled ({} to {})",
                fmt_size(p.from_bytes),
                fmt_size(from),
                fmt_size(p.to_bytes)
            );
            (pool, note)
        }
        _ => (
            vec![last],
            format!(
                "no flat DRAM plateau: latency still rising at {}, figure taken there",
                fmt_size(last.bytes)
            ),
        ),
    }
}

/// The page-walk climb of a curve beyond its memory plateau, as a figure.
fn climb_record(c: &CurveResult, plan: &LatencyPlan, vm: Option<bool>) -> Option<ResultRecord> {
    let m = c.memory.as_ref()?;
    let cl = m.climb.as_ref()?;
    let why = match vm {
        Some(true) => "nested page walks: in a VM the host walks its own page tables for the guest's memory on TLB misses (EPT/NPT/stage 2), and those tables stop fitting in the caches as the working set grows",
        _ => "page walks: beyond the TLB reach of these pages, each miss walks page tables that stop fitting in the caches as the working set grows",
    };
    let mut r = curve_params(ResultRecord::of(PAGE_WALK_CLIMB, "ns/doubling", false), c, plan)
        .with_method(
            "least-squares slope of the fastest-sample latency (median of 3 neighbours) against log2(working set), from the last point of the memory plateau to the largest working set (derived from the curve's points)",
            METHOD_VERSION,
        )
        .with_note(&format!(
            "from {} to {}: {:.1} ns (memory plateau) to {:.1} ns; {why}; neither a cache level nor DRAM latency",
            fmt_size(cl.from_bytes),
            fmt_size(cl.to_bytes),
            m.dram_ns,
            cl.ns_at_end
        ))
        .with_payload(&ClimbData {
            climb: cl.clone(),
            dram_ns: m.dram_ns,
            memory_from_bytes: m.from_bytes,
        });
    r.value = Some(cl.ns_per_doubling);
    Some(r)
}

/// What turns a curve's ns into cycles, and the published cycles to set
/// them against.
struct CurveClock<'a> {
    ghz: Option<f64>,
    source: String,
    published: Result<&'a Core, String>,
    /// The 2 MiB-page random curve's levels and DRAM plateau (ns), the
    /// reference of the 4 KiB-page curve's TLB check.
    huge: Option<(Vec<LevelMatch>, Option<f64>)>,
    /// Whether the machine is a VM (names the cause of a page-walk climb).
    vm: Option<bool>,
    /// What this kernel offers of 1 GiB pages (said beside a climb).
    giant: String,
}

/// Emit the records of one curve.
fn emit_curve(
    c: &CurveResult,
    spec: &CurveSpec,
    plan: &LatencyPlan,
    cf: &CacheFacts,
    clock: &CurveClock,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let Some(last) = c.points.last() else {
        return Ok(());
    };
    let (mut levels, unmatched) = curve_levels(c, &cf.levels);
    if c.pages == Pages::Small {
        small_page_levels(c, clock, &mut levels);
    }
    let e = CurveEmit {
        c,
        plan,
        clock,
        meth: method(spec, plan.stride),
        last,
    };
    out(e.curve_record(&levels, &unmatched))?;

    // Only the random curves define the levels (on 2 MiB and 4 KiB pages:
    // the 1 GiB curve starts past L2, for its memory plateau and climb).
    if c.pattern != Pattern::Random || c.pages == Pages::Giant {
        // DRAM figure of the variant.
        if let Some(why) = &plan.dram_unavailable {
            return out(dram_unavailable(c, plan, &e.meth, why));
        }
        let r = curve_params(ResultRecord::of(DRAM, "ns", false), c, plan)
            .with_method(&e.meth, METHOD_VERSION)
            .with_samples(last.samples.clone())
            .with_note(&format!("working set {}", fmt_size(last.bytes)));
        out(r)?;
        if c.pages == Pages::Giant {
            if let Some(r) = climb_record(c, plan, clock.vm) {
                out(r)?;
            }
        }
        return Ok(());
    }
    for lm in &levels {
        e.level_records(lm, out)?;
    }
    e.dram_records(&levels, out)?;
    if let Some(r) = climb_record(c, plan, clock.vm) {
        out(r.with_note(&clock.giant))?;
    }
    Ok(())
}

/// The levels of a 4 KiB-page curve: the random one checked against the
/// 2 MiB-page curve (TLB), the others noted as including TLB misses.
fn small_page_levels(c: &CurveResult, clock: &CurveClock, levels: &mut [LevelMatch]) {
    match &clock.huge {
        Some((huge, dram)) if c.pattern == Pattern::Random => tlb_check(levels, huge, *dram),
        _ => {
            for l in levels.iter_mut().filter(|l| l.plateau.is_some()) {
                l.note.push_str(
                    " (4 KiB pages only: beyond the TLB reach the plateau includes TLB misses)",
                );
            }
        }
    }
}

/// One curve's records being emitted: the curve, its method line and its
/// last (largest) point.
struct CurveEmit<'a> {
    c: &'a CurveResult,
    plan: &'a LatencyPlan,
    clock: &'a CurveClock<'a>,
    meth: String,
    last: &'a Point,
}

impl CurveEmit<'_> {
    /// The curve record: the latency at the largest working set, every
    /// size and the levels in data (`unmatched`: steps that match no
    /// declared cache).
    fn curve_record(&self, levels: &[LevelMatch], unmatched: &[usize]) -> ResultRecord {
        let (c, plan, last) = (self.c, self.plan, self.last);
        let mut rec = curve_params(ResultRecord::of(CURVE, "ns", false), c, plan)
            .with_method(&self.meth, METHOD_VERSION)
            .with_samples(last.samples.clone())
            .with_note(&format!(
                "value: latency at the largest working set ({}); every size in data.points",
                fmt_size(last.bytes)
            ));
        if let Some(o) = &c.pages_obtained {
            rec = rec.with_note(&format!(
                "{} pages by {}: {:?}{}",
                if c.pages == Pages::Giant {
                    "1 GiB"
                } else {
                    "2 MiB"
                },
                o.mechanism,
                o.report.kind,
                o.note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ));
        }
        for u in unmatched {
            rec = rec.with_note(&format!(
                "step at ~{} matches no declared cache (TLB reach, a partitioned or shared cache, or noise)",
                fmt_size(*u)
            ));
        }
        let points: Vec<CurvePoint> = c
            .points
            .iter()
            .map(|p| CurvePoint {
                bytes: p.bytes,
                ns: p.ns.median,
                min: p.ns.min,
                max: p.ns.max,
                cv: p.ns.cv,
                n: p.ns.n,
                cycles: p.cycles,
            })
            .collect();
        rec.with_payload(&CurveData {
            cpu: plan.cpu,
            stride: plan.stride,
            ghz: self.clock.ghz,
            ghz_source: self.clock.source.clone(),
            points,
            plateaus: c.plateaus.clone(),
            memory: c.memory.clone(),
            levels: levels.to_vec(),
            pages_obtained: c
                .pages_obtained
                .as_ref()
                .and_then(|o| serde_json::to_value(o).ok()),
        })
    }

    /// The records of one cache level: ns (or why it has no plateau) and,
    /// with a clock, cycles set against the published figure.
    fn level_records(
        &self,
        lm: &LevelMatch,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        let (c, plan, meth) = (self.c, self.plan, &self.meth);
        let (ghz, ghz_src) = (self.clock.ghz, self.clock.source.as_str());
        // Every name of CacheFacts::levels has its figures (tested).
        let Some((ns_id, cycles_id)) = level(&lm.name) else {
            return Ok(());
        };
        let Some(pi) = lm.plateau else {
            // A level the curve, cut by memory, does not reach past: why.
            let top = c.points.last().map_or(0, |p| p.bytes);
            let why = match &plan.top_cut {
                Some(cut) if top < lm.declared_bytes.saturating_mul(2) => format!(
                    "the curve stops at {}, short of twice {}'s declared {}: {cut}",
                    fmt_size(top),
                    lm.name,
                    fmt_size(lm.declared_bytes)
                ),
                _ => lm.note.clone(),
            };
            return out(curve_params(
                ResultRecord::unavailable(ns_id.experiment, ns_id.metric, "ns", &why),
                c,
                plan,
            ));
        };
        let p = plateau_point(c, &c.plateaus[pi]);
        let mut r = curve_params(ResultRecord::of(ns_id, "ns", false), c, plan)
            .with_method(meth, METHOD_VERSION)
            .with_samples(p.samples.clone())
            .with_note(&lm.note)
            .with_payload(&LevelData {
                working_set_bytes: p.bytes,
                cycles: p.cycles,
                level: lm.clone(),
            });
        if let Some(g) = ghz {
            r = r.with_note(&format!(
                "{:.1} cycles at {g:.2} GHz ({ghz_src})",
                p.ns.median * g
            ));
        }
        out(r)?;
        if let Some(g) = ghz {
            let mut r = curve_params(ResultRecord::of(cycles_id, "cycles", false), c, plan)
                .with_method(
                    &format!("{meth}; cycles = ns × {g:.3} GHz ({ghz_src})"),
                    METHOD_VERSION,
                )
                .with_samples(p.samples.iter().map(|s| s * g).collect());
            if let Some(v) = r.value {
                let (note, data) = against_published(&lm.name, v, self.clock.published.clone());
                r = r.with_note(&note).with_payload(&data);
            }
            out(r)?;
        }
        Ok(())
    }

    /// The DRAM records of a random curve: ns over the pooled DRAM points
    /// and, with a clock, cycles.
    fn dram_records(
        &self,
        levels: &[LevelMatch],
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        let (c, plan, meth) = (self.c, self.plan, &self.meth);
        if let Some(why) = &plan.dram_unavailable {
            return out(dram_unavailable(c, plan, meth, why));
        }
        let (ghz, ghz_src) = (self.clock.ghz, self.clock.source.as_str());
        let (pool, dnote) = dram_pool(c, levels);
        let dp = *pool.last().unwrap_or(&self.last);
        let samples: Vec<f64> = pool
            .iter()
            .flat_map(|q| q.samples.iter().copied())
            .collect();
        let sizes: Vec<usize> = pool.iter().map(|q| q.bytes).collect();
        let mut r = curve_params(ResultRecord::of(DRAM, "ns", false), c, plan)
            .with_method(meth, METHOD_VERSION)
            .with_samples(samples.clone())
            .with_note(&format!("working set {}: {dnote}", fmt_size(dp.bytes)))
            .with_payload(&DramData {
                working_set_bytes: dp.bytes,
                pooled_sizes: sizes,
                cycles: dp.cycles,
                memory_plateau_bytes: c.memory.as_ref().map(|m| [m.from_bytes, m.flat_to_bytes]),
            });
        if let (Some(g), Some(v)) = (ghz, r.value) {
            r = r.with_note(&format!("{:.0} cycles at {g:.2} GHz ({ghz_src})", v * g));
        }
        out(r)?;
        if let Some(g) = ghz {
            out(
                curve_params(ResultRecord::of(DRAM_CYCLES, "cycles", false), c, plan)
                    .with_method(
                        &format!("{meth}; cycles = ns × {g:.3} GHz ({ghz_src})"),
                        METHOD_VERSION,
                    )
                    .with_samples(samples.iter().map(|s| s * g).collect()),
            )?;
        }
        Ok(())
    }
}

/// Run a plan: every curve, level records, the TLB cost, per-L3 instances.
pub fn run_plan(
    ctx: &mut ExpCtx,
    plan: &LatencyPlan,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let cf = CacheFacts::of(ctx.machine);
    let (ghz, ghz_src) = common::ghz(ctx, plan.cpu);
    let _pin = AffinityGuard::pin(plan.cpu)?;
    let mut results: Vec<CurveResult> = Vec::new();
    for spec in &plan.curves {
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        if spec.sizes.is_empty() {
            continue;
        }
        let r = measure_curve(
            spec,
            plan.stride,
            plan.node,
            plan.reps,
            plan.min_sample,
            ghz,
            ctx.stop,
            ctx.step,
        );
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("{e:#}");
                out(
                    ResultRecord::unavailable(CURVE.experiment, CURVE.metric, "ns", &msg)
                        .with_param("pages", spec.pages.name())
                        .with_param("pattern", spec.pattern.name()),
                )?;
                continue;
            }
        };
        let mut rec_out = |r: ResultRecord| -> Result<()> {
            let mut r = r;
            for n in &plan.notes {
                if r.is(CURVE) {
                    r = r.with_note(n);
                }
            }
            out(r)
        };
        let clock = curve_clock(ctx.machine, plan, &results, &cf, (ghz, &ghz_src));
        emit_curve(&r, spec, plan, &cf, &clock, &mut rec_out)?;
        results.push(r);
    }
    if let Some(rec) = tlb_cost_record(&results) {
        out(rec)?;
    }
    if let Some(rec) = giant_saving(&results, ctx.machine.identity.virtualization.is_virtual) {
        out(rec)?;
    }
    // L3 per instance.
    if plan.per_l3_instance {
        per_l3_instances(ctx, plan, &results, out)?;
    }
    Ok(())
}

/// The figures of the curve of `pattern` on `pages`, if measured.
fn pages_curve(
    results: &[CurveResult],
    pattern: Pattern,
    pages: Pages,
) -> Option<giant::PagesCurve> {
    let c = results
        .iter()
        .find(|c| c.pattern == pattern && c.pages == pages)?;
    Some(giant::PagesCurve {
        points: c
            .points
            .iter()
            .map(|p| (p.bytes, p.ns.median, p.ns.min, p.ns.max))
            .collect(),
        climb: c
            .memory
            .as_ref()
            .and_then(|m| m.climb.as_ref())
            .map(|cl| cl.ns_per_doubling),
    })
}

/// What 1 GiB pages save against 2 MiB pages (both random curves measured).
fn giant_saving(results: &[CurveResult], vm: Option<bool>) -> Option<ResultRecord> {
    let of = |pages| pages_curve(results, Pattern::Random, pages);
    giant::saving_record(
        GIANT_PAGE_SAVING,
        &of(Pages::Huge)?,
        &of(Pages::Giant)?,
        vm,
        METHOD_VERSION,
    )
}

/// TLB cost: random chase on 4 KiB pages minus the same on 2 MiB pages at
/// the largest common size (page-local is the fallback: its in-page
/// locality also helps the prefetchers, so it overstates the cost).
fn tlb_cost_record(results: &[CurveResult]) -> Option<ResultRecord> {
    let against = pages_curve(results, Pattern::Random, Pages::Huge)
        .map(|c| (c, "2 MiB pages"))
        .or_else(|| {
            pages_curve(results, Pattern::PageLocal, Pages::Small).map(|c| {
                (
                    c,
                    "page-local on 4 KiB pages (prefetchers help it too: an upper bound)",
                )
            })
        })?;
    let small = pages_curve(results, Pattern::Random, Pages::Small)?;
    giant::tlb_cost(TLB_COST, &small, against, METHOD_VERSION)
}

/// The clock of the next curve: `ghz` from `ghz_src`, the published cycles
/// of the core of `plan.cpu`, and the 2 MiB-page random curve already
/// measured (if any) as the reference of the TLB check.
fn curve_clock<'a>(
    machine: &'a MachineInfo,
    plan: &LatencyPlan,
    results: &[CurveResult],
    cf: &CacheFacts,
    (ghz, ghz_src): (Option<f64>, &str),
) -> CurveClock<'a> {
    let huge = results
        .iter()
        .find(|h| h.pages == Pages::Huge && h.pattern == Pattern::Random)
        .map(|h| {
            let (lv, _) = curve_levels(h, &cf.levels);
            (lv, curve_dram_ns(h))
        });
    CurveClock {
        ghz,
        source: ghz_src.to_string(),
        published: machine.uarch.core_for(plan.cpu),
        huge,
        vm: machine.identity.virtualization.is_virtual,
        giant: giant::pages_note(machine, plan.curves.iter().any(|c| c.pages == Pages::Giant)),
    }
}

fn per_l3_instances(
    ctx: &mut ExpCtx,
    plan: &LatencyPlan,
    results: &[CurveResult],
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let cf = CacheFacts::of(ctx.machine);
    let inst: Vec<CpuSet> = ctx
        .machine
        .caches_named("L3")
        .iter()
        .map(|c| c.shared_cpu_list.intersection(&ctx.cpus))
        .filter(|s| !s.is_empty())
        .collect();
    if inst.len() < 2 {
        return Ok(());
    }
    let Some(c) = results.iter().find(|c| c.pattern == Pattern::Random) else {
        return Ok(());
    };
    let (levels, _) = curve_levels(c, &cf.levels);
    let Some(pi) = levels
        .iter()
        .find(|l| l.name == "L3")
        .and_then(|l| l.plateau)
    else {
        return Ok(());
    };
    let size = plateau_point(c, &c.plateaus[pi]).bytes;
    let layout = Layout::Random {
        stride: plan.stride,
    };
    for set in inst {
        let Some(cpu) = set.first() else { continue };
        (ctx.step)(&format!("L3 instance of CPU {cpu}, {}", fmt_size(size)));
        let _pin = AffinityGuard::pin(cpu)?;
        let (buf, _) = curve_buffer(size, c.pages, plan.node)?;
        let chain = PointerChain::build(buf, size, layout, 0x13)?;
        let s = chase_samples(&chain, plan.reps, plan.min_sample, ctx.stop)?;
        out(ResultRecord::of(L3_INSTANCE, "ns", false)
            .with_param("cpu", cpu as u64)
            .with_param("pages", c.pages.name())
            .with_method(
                &format!(
                    "random chase of {} (inside the L3 plateau) from one CPU of each L3 instance",
                    fmt_size(size)
                ),
                METHOD_VERSION,
            )
            .with_samples(s)
            .with_payload(&L3InstanceData {
                instance_cpus: set.to_string(),
                working_set_bytes: size,
            }))?;
    }
    Ok(())
}

impl Experiment for Latency {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "load-to-use latency vs working set (4 KiB and 2 MiB pages), cache plateaus"
    }
    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        estimate(&plan(machine, cpus, profile))
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let mut p = plan(ctx.machine, &ctx.cpus, ctx.profile);
        self.run_with(ctx, &mut p, out)
    }
}

impl WithParams for Latency {
    type Params = LatencyPlan;
    /// Measure with a [`LatencyPlan`] (`cpuscope latency`, see [`plan_with`]).
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut LatencyPlan,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        run_plan(ctx, p, out)
    }
}

#[cfg(test)]
mod tests;

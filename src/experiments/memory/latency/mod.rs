//! Load-to-use latency against working-set size: a pointer chase through one
//! random cycle (Sattolo) of cache-line slots, on 4 KiB and on 2 MiB pages,
//! plus a TLB-separating variant (random inside each 4 KiB page, pages in
//! random order) and a sequential-stride variant (lmbench `lat_mem_rd`).
//! The curve's plateaus are detected and matched to the cache sizes that
//! `info` reports; disagreements are findings.

pub mod view;

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::base::Stats;
use crate::experiments::common::{
    self, huge_buffer, size_range, CacheFacts, HugeOutcome, DRAM_REACH, KIB, MIB,
};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile};
use crate::experiments::memory::payload::{
    Climb, ClimbData, CurveData, CurvePoint, DramData, L3InstanceData, LevelData, LevelMatch,
    MemoryPart, Plateau, PublishedData,
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

/// Page size of a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pages {
    /// Base pages (4 KiB on x86_64), THP off for the range.
    Small,
    /// 2 MiB pages: THP by madvise, else hugetlbfs.
    Huge,
}

impl Pages {
    pub fn name(self) -> &'static str {
        match self {
            Pages::Small => "4k",
            Pages::Huge => "2m",
        }
    }
}

/// Chase pattern of a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Random,
    /// Random inside each 4 KiB page, pages in random order.
    PageLocal,
    /// Fixed stride (lmbench lat_mem_rd without -t).
    Sequential,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::PageLocal => "page_local",
            Pattern::Sequential => "sequential",
        }
    }
    pub fn parse(s: &str) -> Option<Pattern> {
        match s {
            "random" => Some(Pattern::Random),
            "page_local" | "page-local" | "tlb" => Some(Pattern::PageLocal),
            "sequential" | "stride" => Some(Pattern::Sequential),
            _ => None,
        }
    }
}

/// One curve to measure.
#[derive(Clone, Debug, Serialize)]
pub struct CurveSpec {
    pub pattern: Pattern,
    pub pages: Pages,
    pub sizes: Vec<usize>,
}

/// Everything the latency experiment will do.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyPlan {
    pub cpu: usize,
    /// Bind the memory to this node (None: local first touch).
    pub node: Option<usize>,
    pub stride: usize,
    pub curves: Vec<CurveSpec>,
    pub reps: usize,
    #[serde(skip)]
    pub min_sample: Duration,
    /// Measure the L3 plateau on one CPU of each L3 instance.
    pub per_l3_instance: bool,
    /// Why the DRAM figure is not available (the working set that reaches
    /// memory does not fit the memory this process may take); None when
    /// the curve reaches it.
    pub dram_unavailable: Option<String>,
    /// The note when memory cut the largest working set (the levels the
    /// curve then cannot reach say so).
    pub top_cut: Option<String>,
    pub notes: Vec<String>,
}

/// The default plan of a profile.
pub fn plan(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> LatencyPlan {
    let cf = CacheFacts::of(machine);
    let mut notes = Vec::new();
    if let Some(n) = &cf.note {
        notes.push(n.clone());
    }
    let factor = if profile == Profile::Full { 16 } else { 4 };
    let wanted = (cf.llc_total.max(cf.llc) * factor).max(64 * MIB);
    let room = common::memory_room();
    let cap = common::auto_cap_of(&room);
    let top = wanted.min(cap).max(8 * KIB);
    let top_cut =
        (top < wanted).then(|| common::capped_note("largest working set", top, wanted, &room));
    notes.extend(top_cut.clone());
    // The DRAM figure needs a working set well past the cache one CPU sees.
    let reach = cf.llc.saturating_mul(DRAM_REACH);
    let dram_unavailable = (top < reach).then(|| {
        common::fit_or_reason(
            &room,
            &format!(
                "the DRAM point needs ({DRAM_REACH} × the {} last-level cache)",
                fmt_size(cf.llc)
            ),
            reach,
        )
        .err()
        .unwrap_or_else(|| {
            format!(
                "the curve stops at {}: below {DRAM_REACH} × the last-level cache",
                fmt_size(top)
            )
        })
    });
    let (per, per_side) = match profile {
        Profile::Quick => (3, 1),
        Profile::Standard => (4, 2),
        Profile::Full => (8, 4),
    };
    let main = size_range(4 * KIB, top, per);
    let side = size_range(4 * KIB, top, per_side);
    let mut curves = vec![
        CurveSpec {
            pattern: Pattern::Random,
            pages: Pages::Huge,
            sizes: main.clone(),
        },
        CurveSpec {
            pattern: Pattern::Random,
            pages: Pages::Small,
            sizes: main,
        },
    ];
    // The TLB-separating and stride variants only matter past L2 in quick.
    let side_from = if profile == Profile::Quick {
        cf.l2.unwrap_or(MIB).max(256 * KIB)
    } else {
        4 * KIB
    };
    let side: Vec<usize> = side.into_iter().filter(|&s| s >= side_from).collect();
    curves.push(CurveSpec {
        pattern: Pattern::PageLocal,
        pages: Pages::Small,
        sizes: side.clone(),
    });
    curves.push(CurveSpec {
        pattern: Pattern::Sequential,
        pages: Pages::Small,
        sizes: side,
    });
    LatencyPlan {
        cpu: cpus.first().unwrap_or(0),
        node: None,
        stride: 64,
        curves,
        // Many short samples: shorter than a scheduler slice, most samples
        // run undisturbed even when other tasks share the CPU, so the median
        // stays clean where long samples would all include foreign time.
        reps: match profile {
            Profile::Quick => 9,
            Profile::Standard => 15,
            Profile::Full => 25,
        },
        min_sample: match profile {
            Profile::Quick | Profile::Standard => Duration::from_micros(500),
            Profile::Full => Duration::from_millis(1),
        },
        per_l3_instance: profile != Profile::Quick,
        dram_unavailable,
        top_cut,
        notes,
    }
}

/// Rough duration of a plan (s): per point sampling plus building the chains.
pub fn estimate(plan: &LatencyPlan) -> f64 {
    let per_point = plan.min_sample.as_secs_f64() * (plan.reps as f64 + 4.0) + 0.004;
    let mut t = 0.0;
    for c in &plan.curves {
        for &s in &c.sizes {
            t += per_point * (point_reps(plan.reps, s) as f64 + 4.0) / (plan.reps as f64 + 4.0);
        }
        // Building: ~6 ns per slot (Sattolo + link) plus faulting, per size.
        let bytes: usize = c.sizes.iter().sum();
        t += bytes as f64 / plan.stride as f64 * 8e-9
            + c.sizes.last().copied().unwrap_or(0) as f64 * 0.3e-9;
        // Pre-warm of large sizes.
        t += c.sizes.iter().filter(|&&s| s > 16 * MIB).count() as f64 * 0.03;
    }
    t
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

/// Neighbouring plateaus closer than this ratio are one level.
pub const MIN_STEP: f64 = 1.25;

/// Find plateaus in a latency curve (sizes ascending). A point joins the
/// current plateau when it is within `tol` (relative) of the plateau's
/// median; a rise beyond that ends it; the next plateau starts where two
/// consecutive points agree within `tol` again. Plateaus of a single point
/// inside the curve are treated as transition; neighbouring plateaus whose
/// levels differ by less than [`MIN_STEP`] are merged.
pub fn detect_plateaus(points: &[(usize, f64)], tol: f64) -> Vec<Plateau> {
    let n = points.len();
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let median = |v: &[f64]| -> f64 {
        let mut w = v.to_vec();
        w.sort_by(|a, b| a.total_cmp(b));
        w[w.len() / 2]
    };
    let mut i = 0;
    while i < n {
        // Start a plateau at i: it needs point i+1 to agree (or i is last).
        let mut members = vec![points[i].1];
        let first = i;
        let mut j = i + 1;
        while j < n {
            let level = median(&members);
            if points[j].1 <= level * (1.0 + tol) {
                members.push(points[j].1);
                j += 1;
            } else {
                break;
            }
        }
        let last = j - 1;
        let single_inside = last == first && j < n && first != 0;
        if !single_inside {
            out.push(Plateau {
                first,
                last,
                from_bytes: points[first].0,
                to_bytes: points[last].0,
                level_ns: median(&members),
                edge_bytes: None,
                ramp: false,
            });
        }
        if j >= n {
            break;
        }
        // Skip the transition: next plateau starts at the first k >= j whose
        // successor agrees with it within tol (or the last point).
        let mut k = j;
        while k + 1 < n && points[k + 1].1 > points[k].1 * (1.0 + tol) {
            k += 1;
        }
        // Two or more points rising between plateaus: keep them as a ramp.
        if k >= j + 2 {
            let vals: Vec<f64> = points[j..k].iter().map(|x| x.1).collect();
            out.push(Plateau {
                first: j,
                last: k - 1,
                from_bytes: points[j].0,
                to_bytes: points[k - 1].0,
                level_ns: median(&vals),
                edge_bytes: None,
                ramp: true,
            });
        }
        i = k;
    }
    // Merge neighbours whose levels differ by less than MIN_STEP: a drift
    // (noise, gradual TLB pressure), not a new level of the hierarchy.
    let mut merged: Vec<Plateau> = Vec::new();
    for p in out {
        match merged.last_mut() {
            Some(q)
                if !p.ramp
                    && !q.ramp
                    && p.level_ns < q.level_ns * MIN_STEP
                    && q.level_ns < p.level_ns * MIN_STEP =>
            {
                let vals: Vec<f64> = points[q.first..=p.last].iter().map(|x| x.1).collect();
                q.last = p.last;
                q.to_bytes = p.to_bytes;
                q.level_ns = median(&vals);
            }
            _ => merged.push(p),
        }
    }
    let mut out = merged;
    // Edges: where the curve crosses the geometric middle between a plateau's
    // level and the next plateau's (interpolated in log size and log ns):
    // robust to a rise that starts early (non-inclusive, shared or randomly
    // replaced caches) or ends late. Without a later plateau: the geometric
    // mean of the last size and the next measured one.
    let m = out.len();
    for p in 0..m {
        let last = out[p].last;
        if last + 1 >= n {
            continue;
        }
        let mut edge = ((points[last].0 as f64) * (points[last + 1].0 as f64)).sqrt();
        if p + 1 < m {
            let target = (out[p].level_ns * out[p + 1].level_ns).sqrt();
            let stop = out[p + 1].first.max(last + 1);
            if let Some(k) = (last + 1..=stop).find(|&k| points[k].1 >= target) {
                let (s0, y0) = (points[k - 1].0 as f64, points[k - 1].1.max(1e-9));
                let (s1, y1) = (points[k].0 as f64, points[k].1.max(1e-9));
                let f = if y1 > y0 {
                    ((target.ln() - y0.ln()) / (y1.ln() - y0.ln())).clamp(0.0, 1.0)
                } else {
                    0.5
                };
                edge = (s0.ln() + f * (s1.ln() - s0.ln())).exp();
            }
        }
        out[p].edge_bytes = Some(edge as usize);
    }
    out
}

/// A step is taken as a declared cache level only between these multiples
/// of the declared size; outside, the level is not measured (said why). A
/// random chase sees a cache's step before its full capacity (replacement,
/// page colouring, what the other levels keep: a 2 MiB L2 steps at ~1 MiB
/// on a Golden Cove VM, a 32 MiB L3 at ~16 MiB on a Zen 5 VM), never much
/// beyond it: a step at ×1.57 is something else.
pub const LEVEL_TOLERANCE: (f64, f64) = (0.4, 1.5);

/// On 4 KiB pages, a level whose plateau is this many times slower than the
/// same level on 2 MiB pages (or within reach of the 2 MiB-page DRAM
/// figure) is DRAM plus TLB misses, not the cache.
pub const TLB_PLATEAU_FACTOR: f64 = 2.0;

/// Cost of leaving a declared level without a step (as bad as a step 128×
/// away from the declared size).
const UNMATCHED_COST: f64 = 7.0;

/// Extra cost of taking the end of a ramp as a level's step: a flat
/// plateau's edge is preferred unless the ramp's is 2× closer.
const RAMP_COST: f64 = 1.0;

/// Match the plateau edges to the declared levels, keeping order (level k+1
/// takes a later edge than level k): the assignment with the smallest total
/// |log2(edge / declared)|, where leaving a level without an edge costs
/// [`UNMATCHED_COST`]. Every plateau of the curve may be a level (the curve
/// says where memory starts only through [`match_levels_before`]).
/// Returns the matches and the edges no level took.
pub fn match_levels(
    plateaus: &[Plateau],
    levels: &[(String, usize)],
) -> (Vec<LevelMatch>, Vec<usize>) {
    match_levels_before(plateaus, levels, None)
}

/// Which plateaus may be cache levels when memory starts at point
/// `memory_first` (None: all): those that end before memory, less the
/// transition into memory — the ramps and short plateaus (under one doubling
/// of the working set) between the last wide flat plateau and memory: the
/// mix of hits and misses of working sets just beyond the last cache, not a
/// level.
pub fn cache_candidates(plateaus: &[Plateau], memory_first: Option<usize>) -> Vec<bool> {
    let Some(m) = memory_first else {
        return vec![true; plateaus.len()];
    };
    let mut ok: Vec<bool> = plateaus.iter().map(|p| p.last < m).collect();
    for (i, p) in plateaus.iter().enumerate().rev() {
        if !ok[i] {
            continue;
        }
        let short = (p.to_bytes as f64) < 2.0 * p.from_bytes as f64;
        if i > 0 && (p.ramp || short) {
            ok[i] = false;
        } else {
            break;
        }
    }
    ok
}

/// [`match_levels`] over the plateaus before memory (`memory_first`: the
/// first point of the memory part, [`memory_part`]). The declared sizes name
/// the levels, they do not veto them: a step within [`LEVEL_TOLERANCE`] of
/// the declared size agrees; a step far below it is the level all the same,
/// at its effective capacity (`share`: a VM's share of a host cache, a
/// partitioned cache); a step far beyond it is not the level (the step stays
/// in the curve, unnamed).
pub fn match_levels_before(
    plateaus: &[Plateau],
    levels: &[(String, usize)],
    memory_first: Option<usize>,
) -> (Vec<LevelMatch>, Vec<usize>) {
    let candidate = cache_candidates(plateaus, memory_first);
    let edges: Vec<(usize, usize)> = plateaus
        .iter()
        .enumerate()
        .filter(|(i, _)| candidate[*i])
        .filter_map(|(i, p)| p.edge_bytes.map(|e| (i, e)))
        .collect();
    let ramp_of: Vec<bool> = edges.iter().map(|(i, _)| plateaus[*i].ramp).collect();
    let dist = |k: usize, s: usize| {
        ((edges[k].1 as f64) / (s as f64)).log2().abs() + if ramp_of[k] { RAMP_COST } else { 0.0 }
    };
    fn best(
        l: usize,
        from: usize,
        edges: &[(usize, usize)],
        levels: &[(String, usize)],
        dist: &dyn Fn(usize, usize) -> f64,
    ) -> (f64, Vec<Option<usize>>) {
        if l == levels.len() {
            return (0.0, Vec::new());
        }
        let (c, mut a) = best(l + 1, from, edges, levels, dist);
        let mut top = (c + UNMATCHED_COST, {
            a.insert(0, None);
            a
        });
        for k in from..edges.len() {
            let (c, mut a) = best(l + 1, k + 1, edges, levels, dist);
            let c = c + dist(k, levels[l].1);
            if c < top.0 {
                a.insert(0, Some(k));
                top = (c, a);
            }
        }
        top
    }
    let (_, taken) = best(0, 0, &edges, levels, &dist);
    let mut used = vec![false; edges.len()];
    for k in taken.iter().flatten() {
        used[*k] = true;
    }
    let mut out = Vec::new();
    for (l, (name, size)) in levels.iter().enumerate() {
        let Some(k) = taken[l] else {
            out.push(no_step(name, *size, plateaus, &candidate, memory_first));
            continue;
        };
        let (pi, e) = edges[k];
        let p = &plateaus[pi];
        let ratio = e as f64 / *size as f64;
        let (lo, hi) = LEVEL_TOLERANCE;
        if ratio > hi {
            // Not this cache: the step stays in the curve, unnamed.
            used[k] = false;
            out.push(LevelMatch {
                name: name.clone(),
                declared_bytes: *size,
                detected_bytes: Some(e),
                ratio: Some(ratio),
                agrees: false,
                level_ns: Some(p.level_ns),
                plateau: None,
                share: false,
                note: format!(
                    "finding: {name}: no step within ×{lo}–×{hi} of the declared {}; the nearest, at ~{} (×{ratio:.2}, {:.1} ns), is beyond the declared size and is not taken as {name} (the curve is in the record's data)",
                    fmt_size(*size),
                    fmt_size(e),
                    p.level_ns
                ),
            });
            continue;
        }
        let share = ratio < lo;
        let mut note = if share {
            format!(
                "{name}: plateau at {:.1} ns up to ~{}: effective ~{} of the {} declared (×{ratio:.2}): the share of the level this CPU gets (a VM's share of a host cache used by other tenants, or a partitioned cache: CAT, sub-NUMA clustering)",
                p.level_ns,
                fmt_size(e),
                fmt_size(e),
                fmt_size(*size)
            )
        } else {
            format!(
                "{name}: step at ~{} agrees with the declared {} (×{ratio:.2}, within ×{lo}–×{hi})",
                fmt_size(e),
                fmt_size(*size)
            )
        };
        if p.ramp {
            note.push_str(&format!(
                "; no flat plateau: latency ramps from {} to {}, the level's figure is the middle of the ramp",
                fmt_size(p.from_bytes),
                fmt_size(p.to_bytes)
            ));
        }
        out.push(LevelMatch {
            name: name.clone(),
            declared_bytes: *size,
            detected_bytes: Some(e),
            ratio: Some(ratio),
            agrees: !share,
            level_ns: Some(p.level_ns),
            plateau: Some(pi),
            share,
            note,
        });
    }
    let unmatched = edges
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(e, _)| e.1)
        .collect();
    (out, unmatched)
}

/// A declared level the curve gives no step to.
fn no_step(
    name: &str,
    size: usize,
    plateaus: &[Plateau],
    candidate: &[bool],
    memory_first: Option<usize>,
) -> LevelMatch {
    // Said more precisely when memory is preceded by a transition.
    let into_memory = memory_first.and_then(|m| {
        plateaus
            .iter()
            .zip(candidate)
            .find(|(p, ok)| !**ok && p.last < m)
            .map(|(p, _)| p)
    });
    let note = match into_memory {
        Some(r) => format!(
            "finding: {name} (declared {}) shows no plateau of its own: between the previous level and memory, latency only ramps (from {}, the mix of hits and misses of working sets beyond the last cache)",
            fmt_size(size),
            fmt_size(r.from_bytes)
        ),
        None => format!(
            "finding: {name} (declared {}) shows no step of its own in the curve",
            fmt_size(size)
        ),
    };
    LevelMatch {
        name: name.to_string(),
        declared_bytes: size,
        detected_bytes: None,
        ratio: None,
        agrees: false,
        level_ns: None,
        plateau: None,
        share: false,
        note,
    }
}

/// Rise per doubling of the working set at or above which two neighbouring
/// points of a curve are inside a step between levels.
pub const STEP_PER_DOUBLING: f64 = 1.5;
/// A step is a run of such rises that climbs at least this factor in all
/// (a slow climb, at less than ×1.5 per doubling, is never a step).
pub const MIN_STEP_RISE: f64 = 1.5;
/// The memory plateau: the points after the last step within this factor
/// of the median of the first octave past the step.
pub const DRAM_FLAT: f64 = 1.15;

/// The memory part of a curve (sizes ascending, ns; the smoothed fastest
/// samples): memory starts after the last step (a run of rises of at least
/// [`STEP_PER_DOUBLING`] per doubling, ×[`MIN_STEP_RISE`] in all); its
/// plateau is the points from there within [`DRAM_FLAT`] of the median of
/// its first octave; a climb beyond
/// that of more than [`DRAM_FLAT`] is measured as ns per doubling. None when
/// the curve has no step at all.
pub fn memory_part(points: &[(usize, f64)]) -> Option<MemoryPart> {
    let n = points.len();
    if n < 2 {
        return None;
    }
    let rise = |i: usize| -> f64 {
        let (s0, y0) = (points[i].0 as f64, points[i].1.max(1e-9));
        let (s1, y1) = (points[i + 1].0 as f64, points[i + 1].1.max(1e-9));
        let dbl = (s1 / s0).log2().max(1e-9);
        (y1 / y0).ln() / dbl
    };
    let big = STEP_PER_DOUBLING.ln();
    let mut first = None;
    let mut i = 0;
    while i + 1 < n {
        if rise(i) < big {
            i += 1;
            continue;
        }
        let a = i;
        while i + 1 < n && rise(i) >= big {
            i += 1;
        }
        // Segments a..i-1 rise steeply: points a to i.
        if points[i].1 >= points[a].1 * MIN_STEP_RISE {
            first = Some(i);
        }
    }
    let first = first?;
    // The plateau's level: the median of the first octave past the step
    // (its first point may still carry the end of the step).
    let mut octave: Vec<f64> = points[first..]
        .iter()
        .take_while(|p| p.0 <= points[first].0.saturating_mul(2))
        .map(|p| p.1)
        .collect();
    octave.sort_by(|a, b| a.total_cmp(b));
    let base = octave[octave.len() / 2];
    let mut flat_last = first;
    while flat_last + 1 < n && points[flat_last + 1].1 <= base * DRAM_FLAT {
        flat_last += 1;
    }
    let mut flat: Vec<f64> = points[first..=flat_last].iter().map(|p| p.1).collect();
    flat.sort_by(|a, b| a.total_cmp(b));
    let dram_ns = flat[flat.len() / 2];
    let climb = (flat_last + 1 < n).then(|| {
        let pts = &points[flat_last..];
        let xs: Vec<f64> = pts.iter().map(|p| (p.0 as f64).log2()).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let mx = xs.iter().sum::<f64>() / xs.len() as f64;
        let my = ys.iter().sum::<f64>() / ys.len() as f64;
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        Climb {
            first: flat_last + 1,
            from_bytes: points[flat_last + 1].0,
            to_bytes: points[n - 1].0,
            ns_at_end: points[n - 1].1,
            ns_per_doubling: if sxx > 0.0 { sxy / sxx } else { 0.0 },
        }
    });
    Some(MemoryPart {
        first,
        from_bytes: points[first].0,
        flat_last,
        flat_to_bytes: points[flat_last].0,
        dram_ns,
        climb,
    })
}

/// A cache is markedly faster than memory: a level whose plateau is within
/// this factor of the curve's last (memory) plateau is not a cache.
pub const CACHE_VS_MEMORY: f64 = 1.5;

/// Un-name the levels (past L1d) whose plateau is within
/// [`CACHE_VS_MEMORY`] of the curve's last plateau: memory at another
/// distance (a VM whose host memory spans nodes, sub-NUMA clustering, a
/// memory-side cache), not the declared cache.
pub fn memory_check(levels: &mut [LevelMatch], plateaus: &[Plateau]) {
    let Some(last) = plateaus.len().checked_sub(1) else {
        return;
    };
    unname_near_memory(levels, plateaus[last].level_ns, |pi| pi < last);
}

/// [`memory_check`] against the memory plateau of [`memory_part`] (every
/// candidate plateau is before memory there).
pub fn memory_check_ns(levels: &mut [LevelMatch], dram_ns: f64) {
    unname_near_memory(levels, dram_ns, |_| true);
}

fn unname_near_memory(levels: &mut [LevelMatch], dram: f64, before: impl Fn(usize) -> bool) {
    for l in levels.iter_mut().skip(1) {
        let (Some(pi), Some(ns)) = (l.plateau, l.level_ns) else {
            continue;
        };
        if before(pi) && ns * CACHE_VS_MEMORY > dram {
            l.note = format!(
                "finding: {}: the plateau ending at ~{} ({ns:.1} ns) is within ×{CACHE_VS_MEMORY} of the memory plateau ({dram:.1} ns): memory at another distance (a VM whose host memory spans nodes, sub-NUMA clustering), not the declared {}",
                l.name,
                fmt_size(l.detected_bytes.unwrap_or(0)),
                fmt_size(l.declared_bytes)
            );
            l.plateau = None;
            l.agrees = false;
            l.share = false;
        }
    }
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

/// On 4 KiB pages: un-name the levels whose plateau is DRAM plus TLB misses,
/// judged against the 2 MiB-page curve of the same run (`huge`: its level
/// matches; `huge_dram`: its DRAM plateau, ns). A level more than
/// [`TLB_PLATEAU_FACTOR`]× slower than the same level on 2 MiB pages, or
/// within that factor of the 2 MiB-page DRAM latency, is not the cache.
pub fn tlb_check(levels: &mut [LevelMatch], huge: &[LevelMatch], huge_dram: Option<f64>) {
    for l in levels.iter_mut().filter(|l| l.plateau.is_some()) {
        let Some(ns) = l.level_ns else {
            continue;
        };
        let same = huge
            .iter()
            .find(|h| h.name == l.name && h.plateau.is_some())
            .and_then(|h| h.level_ns);
        let why = match (same, huge_dram) {
            (Some(h), _) if ns > h * TLB_PLATEAU_FACTOR => Some(format!(
                "×{:.1} the 2 MiB-page {} ({h:.1} ns)",
                ns / h,
                l.name
            )),
            (_, Some(d)) if ns * TLB_PLATEAU_FACTOR > d && same.is_none_or(|h| ns > h * 1.2) => {
                Some(format!("close to the 2 MiB-page DRAM latency ({d:.1} ns)"))
            }
            _ => None,
        };
        if let Some(why) = why {
            l.note = format!(
                "finding: {}: on 4 KiB pages the plateau ending at ~{} ({ns:.1} ns) is DRAM plus TLB misses, not the cache: {why}; the 2 MiB-page curve gives the level",
                l.name,
                fmt_size(l.detected_bytes.unwrap_or(0))
            );
            l.plateau = None;
            l.agrees = false;
        }
    }
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

/// Working sets from this size on get [`BIG_POINT_REPS_FACTOR`] times the
/// samples: they are the DRAM points (or the far end of a large L3), whose
/// latency moves most with other traffic on the machine, and their chains
/// take longer to build than the extra samples take to measure.
pub const BIG_POINT: usize = 64 * MIB;
pub const BIG_POINT_REPS_FACTOR: usize = 8;

/// Samples for one point of a curve.
pub fn point_reps(reps: usize, size: usize) -> usize {
    if size >= BIG_POINT {
        reps * BIG_POINT_REPS_FACTOR
    } else {
        reps
    }
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

/// Plateaus and memory part of a curve of fastest samples (sizes
/// ascending, ns): smoothed by the median of 3 neighbours, plateaus at 20%
/// tolerance ([`detect_plateaus`]), memory after the last step
/// ([`memory_part`]). What a measured curve gets, and what tests of recorded
/// curves call.
pub fn analyse_curve(xy: &[(usize, f64)]) -> (Vec<Plateau>, Option<MemoryPart>) {
    let smooth = smooth3(xy);
    (detect_plateaus(&smooth, 0.2), memory_part(&smooth))
}

/// Median of each point with its neighbours (keeps the ends).
fn smooth3(xy: &[(usize, f64)]) -> Vec<(usize, f64)> {
    let n = xy.len();
    (0..n)
        .map(|i| {
            if i == 0 || i + 1 == n {
                xy[i]
            } else {
                let mut v = [xy[i - 1].1, xy[i].1, xy[i + 1].1];
                v.sort_by(|a, b| a.total_cmp(b));
                (xy[i].0, v[1])
            }
        })
        .collect()
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

/// The point at the middle of a plateau (its representative samples).
/// Indices of the points `first..=last` whose size is at least half the
/// size at `last` (the top octave of a plateau that ends at `last`); never
/// empty when `first <= last < sizes.len()`.
pub fn top_octave(sizes: &[usize], first: usize, last: usize) -> Vec<usize> {
    let Some(&top) = sizes.get(last) else {
        return Vec::new();
    };
    (first.min(last)..=last)
        .filter(|&i| sizes[i].saturating_mul(2) >= top)
        .collect()
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

/// What 1 GiB pages could tell about a climb here, and why no curve uses
/// them (none is measured on 1 GiB pages yet).
fn giant_pages_note(m: &MachineInfo) -> String {
    let pool = m.knobs.hugepages.iter().find(|p| p.size_kb == 1 << 20);
    let have = match pool {
        None => "this kernel offers no 1 GiB pages".to_string(),
        Some(p) => format!(
            "1 GiB pages: {} reserved, {} free",
            p.nr.map(|n| n.to_string()).unwrap_or_else(|| "?".into()),
            p.free.map(|n| n.to_string()).unwrap_or_else(|| "?".into())
        ),
    };
    format!("{have}; cpuscope does not chase on 1 GiB pages yet, so the climb is not split between the guest's own page walks and the host's")
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

    // Only the random curves define the levels.
    if c.pattern != Pattern::Random {
        // DRAM figure of the variant.
        if let Some(why) = &plan.dram_unavailable {
            return out(dram_unavailable(c, plan, &e.meth, why));
        }
        let r = curve_params(ResultRecord::of(DRAM, "ns", false), c, plan)
            .with_method(&e.meth, METHOD_VERSION)
            .with_samples(last.samples.clone())
            .with_note(&format!("working set {}", fmt_size(last.bytes)));
        out(r)?;
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
                "2 MiB pages by {}: {:?}{}",
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
        let huge = results
            .iter()
            .find(|h| h.pages == Pages::Huge && h.pattern == Pattern::Random)
            .map(|h| {
                let (lv, _) = curve_levels(h, &cf.levels);
                (lv, curve_dram_ns(h))
            });
        let clock = CurveClock {
            ghz,
            source: ghz_src.clone(),
            published: ctx.machine.uarch.core_for(plan.cpu),
            huge,
            vm: ctx.machine.identity.virtualization.is_virtual,
            giant: giant_pages_note(ctx.machine),
        };
        emit_curve(&r, spec, plan, &cf, &clock, &mut rec_out)?;
        results.push(r);
    }
    // TLB cost: random chase on 4 KiB pages minus the same on 2 MiB pages at
    // the largest common size (page-local is the fallback: its in-page
    // locality also helps the prefetchers, so it overstates the cost).
    let find = |pat: Pattern, pages: Pages| {
        results
            .iter()
            .find(|c| c.pattern == pat && c.pages == pages)
    };
    let against = find(Pattern::Random, Pages::Huge)
        .map(|c| (c, "2 MiB pages"))
        .or_else(|| {
            find(Pattern::PageLocal, Pages::Small).map(|c| {
                (
                    c,
                    "page-local on 4 KiB pages (prefetchers help it too: an upper bound)",
                )
            })
        });
    if let (Some(r), Some((p, what))) = (find(Pattern::Random, Pages::Small), against) {
        let common = r
            .points
            .iter()
            .rev()
            .find(|a| p.points.iter().any(|b| b.bytes == a.bytes));
        if let Some(a) = common {
            if let Some(b) = p.points.iter().find(|b| b.bytes == a.bytes) {
                let mut rec = ResultRecord::of(TLB_COST, "ns", false)
                    .with_param("pages", "4k")
                    .with_method(
                        &format!("random-cycle latency on 4 KiB pages minus {what}, same working set: the page-walk share of a DRAM access"),
                        METHOD_VERSION,
                    )
                    .with_note(&format!(
                        "at {}: {:.1} ns on 4 KiB pages, {:.1} ns {what} (derived from two medians)",
                        fmt_size(a.bytes),
                        a.ns.median,
                        b.ns.median
                    ));
                rec.value = Some(a.ns.median - b.ns.median);
                out(rec)?;
            }
        }
    }
    // L3 per instance.
    if plan.per_l3_instance {
        per_l3_instances(ctx, plan, &results, out)?;
    }
    Ok(())
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

/// What `cpuscope latency` may change in a profile's plan (`None` or empty:
/// the profile's choice).
#[derive(Clone, Debug)]
pub struct Options {
    /// CPU that chases.
    pub cpu: Option<usize>,
    /// Working-set sizes: a list and/or ranges (`4K,64K`, `4K-512M`).
    pub sizes: Option<String>,
    /// Points per doubling for ranges in `sizes`.
    pub per_octave: usize,
    /// Page sizes (`4k`, `2m`); the two of them: the profile's curves.
    pub pages: Vec<String>,
    /// Chase patterns (random, page_local, sequential).
    pub patterns: Vec<String>,
    /// Bytes between chased slots.
    pub stride: usize,
    /// Bind the chased memory to this NUMA node.
    pub node: Option<String>,
}

/// The profile's plan with `o` applied; each error is one line naming the option.
pub fn plan_with(m: &MachineInfo, cpus: &CpuSet, p: Profile, o: &Options) -> Result<LatencyPlan> {
    let mut plan = plan(m, cpus, p);
    if let Some(c) = o.cpu {
        common::check_cpus(&CpuSet::from_ids([c]), cpus, "--cpu")?;
        plan.cpu = c;
    }
    if o.stride < 8 || !o.stride.is_multiple_of(8) {
        bail!(
            "--stride {}: must be a positive multiple of 8 bytes",
            o.stride
        );
    }
    plan.stride = o.stride;
    if let Some(n) = &o.node {
        plan.node = Some(common::one_node(n, m, "--node")?);
    }
    let mut pages = Vec::new();
    for p in &o.pages {
        pages.push(match p.as_str() {
            "4k" | "4K" | "small" => Pages::Small,
            "2m" | "2M" | "huge" => Pages::Huge,
            o => bail!("--pages: unknown page size '{o}' (expected 4k or 2m)"),
        });
    }
    let mut patterns = Vec::new();
    for p in &o.patterns {
        patterns.push(Pattern::parse(p).ok_or_else(|| {
            anyhow::anyhow!(
                "--pattern: unknown pattern '{p}' (expected random, page_local or sequential)"
            )
        })?);
    }
    if o.per_octave == 0 || o.per_octave > 64 {
        bail!("--per-octave {}: must be between 1 and 64", o.per_octave);
    }
    let sizes = match &o.sizes {
        Some(s) => {
            // The user's sizes: the DRAM figure is read at the largest, as asked.
            plan.dram_unavailable = None;
            plan.top_cut = None;
            let v = common::parse_size_list(s, o.per_octave)?;
            let max = v.iter().copied().max().unwrap_or(0);
            common::check_fits("--sizes", max)?;
            if let Some(&min) = v.iter().min() {
                if min < 2 * plan.stride {
                    bail!(
                        "--sizes: {} is smaller than two {}-byte slots",
                        fmt_size(min),
                        plan.stride
                    );
                }
            }
            Some(v)
        }
        None => None,
    };
    // Rebuild the curve list when the user chose patterns, pages or sizes.
    if sizes.is_some() || !patterns.is_empty() || o.pages.len() != 2 {
        let pats = if patterns.is_empty() {
            vec![Pattern::Random]
        } else {
            patterns
        };
        let default_sizes = plan
            .curves
            .first()
            .map(|c| c.sizes.clone())
            .unwrap_or_default();
        let sizes = sizes.unwrap_or(default_sizes);
        let mut curves = Vec::new();
        for pat in pats {
            for &pg in &pages {
                curves.push(CurveSpec {
                    pattern: pat,
                    pages: pg,
                    sizes: sizes.clone(),
                });
            }
        }
        plan.curves = curves;
    }
    Ok(plan)
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
    /// Parameters: a [`LatencyPlan`] (`cpuscope latency`, see [`plan_with`]).
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let p = ctx.params_or(plan)?;
        run_plan(ctx, &p, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_planned_cache_level_has_its_figures() {
        for (name, (ns, cycles)) in common::LEVEL_NAMES.iter().zip(LEVELS) {
            assert_eq!(level(name), Some((ns, cycles)), "{name}");
            assert_eq!(ns.metric, *name);
            assert_eq!(cycles.metric, format!("{name}_cycles"));
            assert_eq!((ns.experiment, cycles.experiment), (EXP, EXP));
        }
        assert_eq!(level("L1i"), None);
    }
}

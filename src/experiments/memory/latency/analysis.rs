//! The latency curve read as levels (docs/methods-memory.md): plateaus and
//! the steps between them, which plateau is which declared cache level,
//! where memory starts and the page-walk climb beyond it, and the checks
//! that keep a transition or a TLB plateau from being named a cache. Pure
//! functions of (working set, ns) points; nothing here measures.

use crate::base::fmt::fmt_size;
use crate::experiments::memory::payload::{Climb, LevelMatch, MemoryPart, Plateau};

/// Neighbouring plateaus closer than this ratio are one level.
pub const MIN_STEP: f64 = 1.25;

/// Find plateaus in a latency curve (sizes ascending). A point joins the
/// current plateau when it is within `tol` (relative) of the plateau's
/// median; a rise beyond that ends it; the next plateau starts where two
/// consecutive points agree within `tol` again. Plateaus of a single point
/// inside the curve are treated as transition; neighbouring plateaus whose
/// levels differ by less than [`MIN_STEP`] are merged.
pub fn detect_plateaus(points: &[(usize, f64)], tol: f64) -> Vec<Plateau> {
    if points.is_empty() {
        return Vec::new();
    }
    let found = find_plateaus_and_ramps(points, tol);
    let mut out = merge_close_plateaus(points, found);
    set_plateau_edges(points, &mut out);
    out
}

/// The median of `v` (the upper one of an even count).
fn median(v: &[f64]) -> f64 {
    let mut w = v.to_vec();
    w.sort_by(|a, b| a.total_cmp(b));
    w[w.len() / 2]
}

/// The plateaus of a non-empty curve, left to right, with the ramps (two
/// or more points rising) between them; single-point plateaus inside the
/// curve are dropped as transition.
fn find_plateaus_and_ramps(points: &[(usize, f64)], tol: f64) -> Vec<Plateau> {
    let n = points.len();
    let mut out = Vec::new();
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
    out
}

/// Merge neighbours whose levels differ by less than MIN_STEP: a drift
/// (noise, gradual TLB pressure), not a new level of the hierarchy.
fn merge_close_plateaus(points: &[(usize, f64)], found: Vec<Plateau>) -> Vec<Plateau> {
    let mut merged: Vec<Plateau> = Vec::new();
    for p in found {
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
    merged
}

/// Edges: where the curve crosses the geometric middle between a plateau's
/// level and the next plateau's (interpolated in log size and log ns):
/// robust to a rise that starts early (non-inclusive, shared or randomly
/// replaced caches) or ends late. Without a later plateau: the geometric
/// mean of the last size and the next measured one.
fn set_plateau_edges(points: &[(usize, f64)], out: &mut [Plateau]) {
    let n = points.len();
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

/// Extra cost of taking the end of a short plateau (under one doubling of
/// the working set) as a level's step, as for a ramp: a level's figure is
/// its plateau, and a short one after it, short of the declared size, is
/// the working sets the level holds only in part (a Zen 5 L2 of 1 MiB: flat
/// at 3.4 ns to ~620 KiB, then 5 ns from 724 KiB to 1 MiB).
const SHORT_COST: f64 = 1.0;

/// Extra cost of a step beyond [`LEVEL_TOLERANCE`] of a level's declared
/// size: such a step is never the level, so one within it is preferred
/// even when farther off in log size.
const BEYOND_COST: f64 = 2.0;

/// A plateau (not a ramp) spanning less than one doubling of the working
/// set.
pub fn is_short(p: &Plateau) -> bool {
    !p.ramp && (p.to_bytes as f64) < 2.0 * p.from_bytes as f64
}

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
        if i > 0 && (p.ramp || is_short(p)) {
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
    let dist = |k: usize, s: usize| {
        let p = &plateaus[edges[k].0];
        let ratio = edges[k].1 as f64 / s as f64;
        let shape = if p.ramp {
            RAMP_COST
        } else if is_short(p) {
            SHORT_COST
        } else {
            0.0
        };
        let beyond = if ratio > LEVEL_TOLERANCE.1 {
            BEYOND_COST
        } else {
            0.0
        };
        ratio.log2().abs() + shape + beyond
    };
    let (_, taken) = cheapest_assignment(0, 0, &edges, levels, &dist);
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
        if ratio > LEVEL_TOLERANCE.1 {
            // Not this cache: the step stays in the curve, unnamed.
            used[k] = false;
            out.push(step_beyond_level(name, *size, e, p));
            continue;
        }
        let mut lm = level_at_step(name, *size, (pi, e), p);
        // The short plateaus and ramps right after the level's, no level's
        // own, up to ×1.5 of the declared size: held in part.
        let mut tail = Vec::new();
        for k2 in k + 1..edges.len() {
            let (qi, e2) = edges[k2];
            let q = &plateaus[qi];
            let fits = (e2 as f64) <= *size as f64 * LEVEL_TOLERANCE.1;
            if used[k2] || !(q.ramp || is_short(q)) || !fits {
                break;
            }
            tail.push((q, e2));
        }
        if held_in_part(&mut lm, p, &tail) {
            used[k + 1..=k + tail.len()].fill(true);
        }
        out.push(lm);
    }
    let unmatched = edges
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(e, _)| e.1)
        .collect();
    (out, unmatched)
}

/// The cheapest ordered assignment of `edges` (from index `from` on) to the
/// levels from `l` on: its total cost and, per level, the edge it takes
/// (None: left without one, at [`UNMATCHED_COST`]).
fn cheapest_assignment(
    l: usize,
    from: usize,
    edges: &[(usize, usize)],
    levels: &[(String, usize)],
    dist: &dyn Fn(usize, usize) -> f64,
) -> (f64, Vec<Option<usize>>) {
    if l == levels.len() {
        return (0.0, Vec::new());
    }
    let (c, mut a) = cheapest_assignment(l + 1, from, edges, levels, dist);
    let mut top = (c + UNMATCHED_COST, {
        a.insert(0, None);
        a
    });
    for k in from..edges.len() {
        let (c, mut a) = cheapest_assignment(l + 1, k + 1, edges, levels, dist);
        let c = c + dist(k, levels[l].1);
        if c < top.0 {
            a.insert(0, Some(k));
            top = (c, a);
        }
    }
    top
}

/// A declared level whose nearest step `e` (of plateau `p`) lies beyond
/// [`LEVEL_TOLERANCE`]: not this cache, the step is not taken.
fn step_beyond_level(name: &str, size: usize, e: usize, p: &Plateau) -> LevelMatch {
    let ratio = e as f64 / size as f64;
    let (lo, hi) = LEVEL_TOLERANCE;
    LevelMatch {
        name: name.to_string(),
        declared_bytes: size,
        detected_bytes: Some(e),
        ratio: Some(ratio),
        agrees: false,
        level_ns: Some(p.level_ns),
        plateau: None,
        share: false,
        note: format!(
            "finding: {name}: no step within ×{lo}–×{hi} of the declared {}; the nearest, at ~{} (×{ratio:.2}, {:.1} ns), is beyond the declared size and is not taken as {name} (the curve is in the record's data)",
            fmt_size(size),
            fmt_size(e),
            p.level_ns
        ),
    }
}

/// A declared level taken at the step `e` of plateau `pi` (`p`): agreeing
/// with the declared size, or below it (the share this CPU gets).
fn level_at_step(name: &str, size: usize, (pi, e): (usize, usize), p: &Plateau) -> LevelMatch {
    let ratio = e as f64 / size as f64;
    let (lo, hi) = LEVEL_TOLERANCE;
    let share = ratio < lo;
    let mut note = if share {
        format!(
            "{name}: plateau at {:.1} ns up to ~{}: effective ~{} of the {} declared (×{ratio:.2}): the share of the level this CPU gets (a VM's share of a host cache used by other tenants, or a partitioned cache: CAT, sub-NUMA clustering)",
            p.level_ns,
            fmt_size(e),
            fmt_size(e),
            fmt_size(size)
        )
    } else {
        format!(
            "{name}: step at ~{} agrees with the declared {} (×{ratio:.2}, within ×{lo}–×{hi})",
            fmt_size(e),
            fmt_size(size)
        )
    };
    if p.ramp {
        note.push_str(&format!(
            "; no flat plateau: latency ramps from {} to {}, the level's figure is the middle of the ramp",
            fmt_size(p.from_bytes),
            fmt_size(p.to_bytes)
        ));
    }
    LevelMatch {
        name: name.to_string(),
        declared_bytes: size,
        detected_bytes: Some(e),
        ratio: Some(ratio),
        agrees: !share,
        level_ns: Some(p.level_ns),
        plateau: Some(pi),
        share,
        note,
    }
}

/// A level `lm` taken at its plateau `p`, followed by `tail`: the short
/// plateaus or ramps (each with its step) that no level took, up to
/// [`LEVEL_TOLERANCE`]'s upper bound of the declared size. They are the
/// working sets the level holds only in part: said in its note, and not
/// listed as steps of their own (true). Where the plateau's edge alone is
/// below ×0.4 of the declared size but the tail's last step is within the
/// tolerance, the level agrees with the declared size (a Zen 3 guest's
/// 512 KiB L2: flat at 3.9 ns to ~204 KiB, then 5–12 ns to ~660 KiB), its
/// figure the plateau's all the same.
fn held_in_part(lm: &mut LevelMatch, p: &Plateau, tail: &[(&Plateau, usize)]) -> bool {
    let (Some(&(first, _)), Some(&(end, last))) = (tail.first(), tail.last()) else {
        return false;
    };
    let declared = lm.declared_bytes as f64;
    let reaches = last as f64 >= declared * LEVEL_TOLERANCE.0;
    if (lm.share && !reaches) || lm.ratio.is_none_or(|r| r >= 1.0) {
        return false;
    }
    let (lo_ns, hi_ns) = tail.iter().fold((f64::MAX, 0f64), |(a, b), (q, _)| {
        (a.min(q.level_ns), b.max(q.level_ns))
    });
    let what = match tail {
        [(q, _)] if q.ramp => "a ramp".to_string(),
        [_] => "a short step".to_string(),
        _ => format!("{} short steps", tail.len()),
    };
    let ns = if tail.len() == 1 {
        format!("{lo_ns:.1} ns")
    } else {
        format!("{lo_ns:.1}–{hi_ns:.1} ns")
    };
    let span = format!(
        "{what} to ~{} ({ns}, from {} to {})",
        fmt_size(last),
        fmt_size(first.from_bytes),
        fmt_size(end.to_bytes)
    );
    let eff = fmt_size(lm.detected_bytes.unwrap_or(0));
    if lm.share {
        // Reached the declared size through the tail: the level agrees.
        let (lo, hi) = LEVEL_TOLERANCE;
        lm.note = format!(
            "{}: plateau at {:.1} ns up to ~{eff}, the level's effective size; then {span}: working sets the level holds only in part, not its figure; the last step, ×{:.2} the declared {}, is within ×{lo}–×{hi}",
            lm.name,
            p.level_ns,
            last as f64 / declared,
            fmt_size(lm.declared_bytes)
        );
        lm.share = false;
        lm.agrees = true;
    } else {
        lm.note.push_str(&format!(
            "; its plateau holds to ~{eff}, the level's effective size; then {span}: working sets the level holds only in part, not its figure"
        ));
    }
    true
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

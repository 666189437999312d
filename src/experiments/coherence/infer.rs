//! Inference from a core-to-core latency matrix: cluster the CPUs into latency
//! groups and set them against the topology the kernel declares (SMT sibling,
//! shared L2, shared L3, cluster, die, NUMA node, package), as seed 001 does by
//! hand for an EPYC 7742 ("52.7 ns to itself, +7–8 ns inside a 4-core L3
//! group, < 120 ns same side of the IO die, ...").
//!
//! Method (docs/methods-c2c.md, "Inference"):
//! 1. Average-linkage agglomerative clustering of the CPUs, the distance of two
//!    CPUs being their measured one-way latency (unmeasured pairs are left out
//!    of the averages; clusters with no measured pair between them never merge).
//! 2. The merge heights, sorted, are cut into levels wherever one height is
//!    more than [`LEVEL_GAP_REL`] (relative) and [`LEVEL_GAP_ABS_NS`] above the
//!    previous one. Level k's partition is the clustering after every merge of
//!    levels 1..=k; its latency is the median over the measured pairs whose
//!    first common group is at level k; its increment is the difference to
//!    level k-1.
//! 3. Each measured partition is compared with each declared partition by the
//!    Jaccard index of their "same group" pair sets. Equal partitions match;
//!    an index of at least [`MATCH_JACCARD`] matches with exceptions (listed);
//!    below that the measured level is a level the kernel does not declare.
//!    Declared levels that no measured level matches show no latency step.
//! 4. Noise: two adjacent levels stay apart only when they are separated
//!    beyond the noise (`not_separated`): each holds at least
//!    [`min_level_pairs`] pairs, and the step between their medians exceeds
//!    the relative and absolute gaps, [`LEVEL_GAP_SPREAD_K`] robust standard
//!    deviations of the pair latencies inside either level, and
//!    [`LEVEL_GAP_PAIR_NOISE_K`] times the pairs' own noise; otherwise they
//!    are merged (and a note says why). [`infer_with`] clusters only the
//!    clean pairs (the caller leaves preempted ones out) and infers nothing
//!    when fewer than [`MIN_CLEAN_SHARE`] of the measured pairs are clean.
//!
//! Never measures: takes a matrix and a declared topology.

use crate::experiments::coherence::payload::{Inference, MeasuredLevel, RelationSummary};
use std::collections::BTreeMap;

mod declared;
pub use declared::*;

mod cluster;
pub use cluster::*;

/// Jaccard index of same-group pairs at or above which a measured level
/// matches a declared one (with the disagreeing pairs listed).
pub const MATCH_JACCARD: f64 = 0.9;
/// Two adjacent levels must differ (median to median) by more than this many
/// robust standard deviations (1.4826 × MAD) of the pair latencies inside
/// either of them: groups separated beyond their own spread.
pub const LEVEL_GAP_SPREAD_K: f64 = 3.0;
/// ... and by more than this many times the pairs' own relative noise (the
/// median over a level's pairs of each pair's CV over passes, or its
/// interquartile range / 1.349 over the median with fewer than 3 passes;
/// the larger of the two levels), times the mean of the two latencies.
pub const LEVEL_GAP_PAIR_NOISE_K: f64 = 2.0;
/// Fewest pairs a level may hold when there is more than one (see
/// [`min_level_pairs`]).
pub const MIN_LEVEL_PAIRS: usize = 2;
/// Groups are inferred only when at least this share of the measured pairs
/// are clean (not marked preempted); below it, none (and the reason).
pub const MIN_CLEAN_SHARE: f64 = 0.5;

/// Fewest pairs each level must hold when a matrix over `n` CPUs with
/// `pairs` measured pairs splits into several levels: [`MIN_LEVEL_PAIRS`],
/// or a quarter of the pairs per CPU (`pairs / 2n`, which is `(n - 1) / 4`
/// for a full matrix), whichever is more. A real level in which every CPU
/// has a partner holds at least `n / 2` pairs; a level made of a few noisy
/// pairs holds fewer.
pub fn min_level_pairs(n: usize, pairs: usize) -> usize {
    if n == 0 {
        return MIN_LEVEL_PAIRS;
    }
    MIN_LEVEL_PAIRS.max(pairs.div_ceil(2 * n))
}

/// A declared partition as `infer` matches it: label, level names, group of each CPU.
type DeclPart<'a> = (String, Vec<String>, &'a [usize]);

/// Cluster the matrix and set it against the declared topology (every
/// measured pair taken as clean).
pub fn infer(m: &LatencyMatrix, decl: &Declared) -> Inference {
    infer_with(m, m, decl)
}

/// Cluster the clean pairs of a matrix and set the groups against the
/// declared topology. `m` holds every measured pair (partial matrix,
/// relations); `clean` the same CPUs with only the pairs the grouping may use
/// (the caller leaves out pairs marked preempted and gives each pair's figure
/// from its clean samples, with its noise). With fewer than
/// [`MIN_CLEAN_SHARE`] of the measured pairs clean, no group is inferred and
/// `not_inferred` says why. Adjacent levels not separated beyond the noise
/// are merged (`not_separated`), with a note.
pub fn infer_with(m: &LatencyMatrix, clean: &LatencyMatrix, decl: &Declared) -> Inference {
    let n = m.n();
    let clean = if clean.cpus == m.cpus { clean } else { m };
    let mut notes = decl.notes.clone();
    let mut findings = Vec::new();
    let total_pairs = n * n.saturating_sub(1) / 2;
    let measured = m.measured_pairs();
    let pairs_clean = clean.measured_pairs();
    let partial = measured < total_pairs;
    if partial {
        notes.push(format!(
            "partial matrix: {measured} of {total_pairs} pairs measured; groups are inferred from the measured pairs only"
        ));
    }
    let relations = relation_summaries(m, decl, &mut findings);
    let mut inference = Inference {
        levels: Vec::new(),
        findings: Vec::new(),
        notes: Vec::new(),
        relations,
        partial,
        not_inferred: None,
        pairs_clean,
        pairs_measured: measured,
    };
    if pairs_clean < measured {
        notes.push(format!(
            "{} of {measured} pairs left out of the grouping: marked preempted while measuring (their figures are kept in the matrix)",
            measured - pairs_clean
        ));
    }
    inference.not_inferred = too_few_clean(measured, pairs_clean);
    if inference.not_inferred.is_some() {
        inference.findings = findings;
        inference.notes = notes;
        return inference;
    }

    let merges = average_linkage(clean);
    if merges.is_empty() {
        if n >= 2 {
            notes.push("no measured pair: nothing to cluster".into());
        }
        inference.findings = findings;
        inference.notes = notes;
        return inference;
    }
    // Sized on the measured matrix: leaving preempted pairs out must not
    // lower the bar for a group.
    let min_pairs = min_level_pairs(n, measured);
    let (parts, merged_why) = separated_partitions(clean, &merges, min_pairs);
    if !merged_why.is_empty() {
        notes.push(format!(
            "{} latency step(s) not separated beyond the noise merged into one group: {}",
            merged_why.len(),
            merged_why.join("; ")
        ));
    }
    let placed = placed_cpus(m, clean, &parts, &mut notes);
    inference.levels = levels_against_declared(
        clean,
        decl,
        &parts,
        &placed,
        partial || pairs_clean < measured,
        &mut findings,
    );
    inference.findings = findings;
    inference.notes = notes;
    inference
}

/// Why no group is inferred when fewer than [`MIN_CLEAN_SHARE`] of the
/// `measured` pairs are clean, if so.
fn too_few_clean(measured: usize, pairs_clean: usize) -> Option<String> {
    let need = ((measured as f64 * MIN_CLEAN_SHARE).ceil() as usize).max(1);
    (measured > 0 && pairs_clean < need).then(|| {
        format!(
            "only {pairs_clean} of {measured} pairs were measured without preemption (at least {need} needed): groups made of disturbed pairs would be noise"
        )
    })
}

/// Step of `infer_with`: which CPUs the clean pairs place in a group, with
/// notes on the CPUs left in none and on separate groups at the top.
fn placed_cpus(
    m: &LatencyMatrix,
    clean: &LatencyMatrix,
    parts: &[Vec<usize>],
    notes: &mut Vec<String>,
) -> Vec<bool> {
    let n = m.n();
    // CPUs whose every measured pair was left out are in no group.
    let placed: Vec<bool> = (0..n).map(|i| has_pair(clean, i)).collect();
    let unplaced: Vec<usize> = (0..n)
        .filter(|&i| !placed[i] && has_pair(m, i))
        .map(|i| m.cpus[i])
        .collect();
    if !unplaced.is_empty() {
        notes.push(format!(
            "CPU(s) {}: every pair left out as preempted, so in no latency group",
            fmt_cpus(&unplaced)
        ));
    }
    let roots = top_groups(m, parts, &placed);
    if roots > 1 {
        notes.push(format!(
            "the measured pairs leave {roots} separate groups at the top (no measured pair joins them)"
        ));
    }
    placed
}

/// Step of `infer_with`: the measured levels of `parts`, each matched with
/// the declared partitions, and the closing findings (`disturbed`: the
/// matrix is partial or pairs were left out).
fn levels_against_declared(
    clean: &LatencyMatrix,
    decl: &Declared,
    parts: &[Vec<usize>],
    placed: &[bool],
    disturbed: bool,
    findings: &mut Vec<String>,
) -> Vec<MeasuredLevel> {
    let n = clean.n();
    let whole = vec![0usize; n];
    let decl_parts = declared_parts(decl, n, &whole);
    let mut matched_decl: Vec<bool> = vec![false; decl_parts.len()];
    let levels = measured_levels(
        clean,
        parts,
        (&decl_parts, &mut matched_decl),
        placed,
        findings,
    );
    closing_findings(
        clean,
        &decl_parts,
        &matched_decl,
        disturbed,
        &levels,
        findings,
    );
    levels
}

/// Step of `infer`: the partitions at the cuts of the merge heights, after
/// merging adjacent levels that the noise does not separate (one boundary at
/// a time, the lowest failing first, until every boundary holds;
/// `min_pairs`: the fewest pairs a level needs), and why each was merged.
fn separated_partitions(
    clean: &LatencyMatrix,
    merges: &[Merge],
    min_pairs: usize,
) -> (Vec<Vec<usize>>, Vec<String>) {
    let n = clean.n();
    let mut cuts = level_cuts(&merges.iter().map(|m| m.height).collect::<Vec<_>>());
    let mut merged_why = Vec::new();
    let parts = loop {
        let parts = partitions_at_cuts(merges, &cuts, n);
        let mut steps: Vec<(usize, LevelPairs)> = Vec::new();
        let mut prev: Vec<usize> = (0..n).collect();
        for (ci, part) in parts.iter().enumerate() {
            let lp = level_pairs(clean, part, &prev);
            if !lp.ns.is_empty() {
                steps.push((ci, lp));
            }
            prev = part.clone();
        }
        let fail = steps.windows(2).find_map(|w| {
            not_separated(&w[0].1, &w[1].1, min_pairs).map(|why| {
                (
                    w[0].0,
                    format!(
                        "{:.1} ns ({} pairs) and {:.1} ns ({} pairs): {why}",
                        w[0].1.median(),
                        w[0].1.ns.len(),
                        w[1].1.median(),
                        w[1].1.ns.len()
                    ),
                )
            })
        });
        match fail {
            Some((ci, why)) if ci < cuts.len() => {
                merged_why.push(why);
                cuts.remove(ci);
            }
            _ => break parts,
        }
    };
    (parts, merged_why)
}

/// Whether CPU index `i` has a measured pair in `m`.
fn has_pair(m: &LatencyMatrix, i: usize) -> bool {
    (0..m.n()).any(|j| j != i && m.dist(i, j).is_some())
}

/// How many separate groups the last partition leaves at the top, counting
/// the CPUs in a group (`placed`) and those with no measured pair at all.
fn top_groups(m: &LatencyMatrix, parts: &[Vec<usize>], placed: &[bool]) -> usize {
    let n = m.n();
    parts
        .last()
        .map(|p| {
            let mut g: Vec<usize> = (0..n)
                .filter(|&i| placed[i] || !has_pair(m, i))
                .map(|i| p[i])
                .collect();
            g.sort_unstable();
            g.dedup();
            g.len()
        })
        .unwrap_or(n)
}

/// Step of `infer`: the declared partitions plus the whole machine
/// (`whole`: every CPU in group 0); a partition that puts every CPU alone
/// (the cores of a machine without SMT, a per-core L2) joins no pair, so it
/// names no group and bounds no hidden level.
fn declared_parts<'a>(decl: &'a Declared, n: usize, whole: &'a [usize]) -> Vec<DeclPart<'a>> {
    let mut decl_parts: Vec<DeclPart> = decl
        .levels
        .iter()
        .filter(|l| n < 2 || count_groups(&l.group_of) < n)
        .map(|l| (l.label.clone(), l.names.clone(), l.group_of.as_slice()))
        .collect();
    if !decl_parts.iter().any(|(_, _, p)| p.iter().all(|&g| g == 0)) {
        decl_parts.push(("whole machine".into(), vec!["machine".into()], whole));
    }
    decl_parts
}

/// Step of `infer`: the measured level each partition adds, matched
/// against the declared partitions (marking `matched_decl`), numbered from
/// 1 with its increment over the one below.
fn measured_levels(
    clean: &LatencyMatrix,
    parts: &[Vec<usize>],
    (decl_parts, matched_decl): (&[DeclPart], &mut [bool]),
    placed: &[bool],
    findings: &mut Vec<String>,
) -> Vec<MeasuredLevel> {
    let n = clean.n();
    let mut levels: Vec<MeasuredLevel> = Vec::new();
    let mut prev_part: Vec<usize> = (0..n).collect();
    for (li, part) in parts.iter().enumerate() {
        let Some(mut level) = level_step(clean, part, &prev_part) else {
            prev_part = part.clone();
            continue;
        };
        match_level(
            clean,
            li,
            &mut level,
            part,
            decl_parts,
            placed,
            matched_decl,
            findings,
        );
        level.increment_ns = levels
            .last()
            .map(|p: &MeasuredLevel| level.latency_ns - p.latency_ns);
        level.level = levels.len() + 1;
        levels.push(level);
        prev_part = part.clone();
    }
    levels
}

/// The pairs a level adds: their latencies and (where known) their own
/// relative noise.
struct LevelPairs {
    ns: Vec<f64>,
    noise: Vec<f64>,
}

impl LevelPairs {
    fn median(&self) -> f64 {
        median(&mut self.ns.clone())
    }
}

/// The measured pairs of `m` first joined by `part` (together in `part`,
/// apart in `prev_part`).
fn level_pairs(m: &LatencyMatrix, part: &[usize], prev_part: &[usize]) -> LevelPairs {
    let n = m.n();
    let mut lp = LevelPairs {
        ns: Vec::new(),
        noise: Vec::new(),
    };
    for i in 0..n {
        for j in i + 1..n {
            if part[i] == part[j] && prev_part[i] != prev_part[j] {
                if let Some(d) = m.dist(i, j) {
                    lp.ns.push(d);
                    if let Some(r) = m.noise_of(i, j) {
                        lp.noise.push(r);
                    }
                }
            }
        }
    }
    lp
}

/// Robust standard deviation: 1.4826 × the median absolute deviation.
fn robust_sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let med = median(&mut v.to_vec());
    let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    1.4826 * median(&mut dev)
}

/// Why two adjacent levels (`a` the faster) are not separated beyond the
/// noise, or None when they are: each must hold at least `min_pairs` pairs,
/// and the step between their medians must exceed [`LEVEL_GAP_REL`] of the
/// faster one and [`LEVEL_GAP_ABS_NS`], [`LEVEL_GAP_SPREAD_K`] robust
/// standard deviations of either level's pair latencies, and
/// [`LEVEL_GAP_PAIR_NOISE_K`] times the pairs' own relative noise (the
/// median over each level's pairs, the larger of the two) times the mean
/// of the two medians.
fn not_separated(a: &LevelPairs, b: &LevelPairs, min_pairs: usize) -> Option<String> {
    let few = a.ns.len().min(b.ns.len());
    if few < min_pairs {
        return Some(format!(
            "{few} pair(s) in a group, fewer than the {min_pairs} a group needs"
        ));
    }
    let (ma, mb) = (a.median(), b.median());
    let gap = mb - ma;
    if gap <= LEVEL_GAP_ABS_NS || gap <= LEVEL_GAP_REL * ma {
        return Some(format!(
            "a step of {gap:.1} ns, within {:.0}% / {LEVEL_GAP_ABS_NS:.0} ns",
            LEVEL_GAP_REL * 100.0
        ));
    }
    let spread = robust_sd(&a.ns).max(robust_sd(&b.ns));
    if gap <= LEVEL_GAP_SPREAD_K * spread {
        return Some(format!(
            "a step of {gap:.1} ns, within {LEVEL_GAP_SPREAD_K:.0} × the spread of the pairs inside a group ({spread:.1} ns)"
        ));
    }
    // The noisier level's typical pair (as the spread above: either level).
    let rel = [&a.noise, &b.noise]
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| median(&mut v.to_vec()))
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    if let Some(rel) = rel {
        let own = rel * (ma + mb) / 2.0;
        if gap <= LEVEL_GAP_PAIR_NOISE_K * own {
            return Some(format!(
                "a step of {gap:.1} ns, within {LEVEL_GAP_PAIR_NOISE_K:.0} × the pairs' own noise ({:.1}% = {own:.1} ns)",
                rel * 100.0
            ));
        }
    }
    None
}

/// Step of `infer`: the latency of each declared relation, finest first,
/// with a finding where a coarser relation is faster.
fn relation_summaries(
    m: &LatencyMatrix,
    decl: &Declared,
    findings: &mut Vec<String>,
) -> Vec<RelationSummary> {
    let n = m.n();
    let mut rel: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for i in 0..n {
        for j in i + 1..n {
            if let Some(d) = m.dist(i, j) {
                rel.entry(decl.relation(i, j)).or_default().push(d);
            }
        }
    }
    let label_of = |name: &str| -> String {
        LEVEL_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| l.to_string())
            .unwrap_or_else(|| match name {
                CROSS_PACKAGE => "different packages".to_string(),
                _ => "no shared level declared".to_string(),
            })
    };
    // Finest declared level first (the order of `decl.levels`), then the rest.
    let rank = |name: &str| -> usize {
        decl.levels
            .iter()
            .position(|l| l.names.iter().any(|x| x == name))
            .unwrap_or(decl.levels.len())
    };
    let mut relations: Vec<RelationSummary> = rel
        .into_iter()
        .map(|(r, mut v)| {
            let (mn, mx) = v
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            let pairs = v.len();
            RelationSummary {
                label: label_of(&r),
                relation: r,
                pairs,
                median_ns: median(&mut v),
                min_ns: mn,
                max_ns: mx,
            }
        })
        .collect();
    relations.sort_by_key(|r| rank(&r.relation));
    for w in relations.windows(2) {
        if w[1].median_ns < w[0].median_ns * 0.95 {
            findings.push(format!(
                "pairs declared '{}' ({:.1} ns) are faster than pairs declared '{}' ({:.1} ns): the declared nesting does not match the cost",
                w[1].label, w[1].median_ns, w[0].label, w[0].median_ns
            ));
        }
    }
    relations
}

/// Step of `infer`: the level that partition `part` adds over `prev_part`,
/// its declared match left blank; None when no measured pair joins there.
fn level_step(m: &LatencyMatrix, part: &[usize], prev_part: &[usize]) -> Option<MeasuredLevel> {
    let n = m.n();
    let mut lat = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if part[i] == part[j] && prev_part[i] != prev_part[j] {
                if let Some(d) = m.dist(i, j) {
                    lat.push(d);
                }
            }
        }
    }
    if lat.is_empty() {
        return None;
    }
    let (mn, mx) = lat
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let pairs = lat.len();
    let latency = median(&mut lat);
    let groups = groups_of(part, &m.cpus);
    let mut sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let prev_groups = groups_of(prev_part, &m.cpus);
    let cpus_per_cpu = {
        let mut s = 0usize;
        for i in 0..n {
            s += groups[part[i]].len() - prev_groups[prev_part[i]].len();
        }
        s as f64 / n as f64
    };
    Some(MeasuredLevel {
        level: 0,
        latency_ns: latency,
        min_ns: mn,
        max_ns: mx,
        pairs,
        increment_ns: None,
        groups,
        group_sizes: sizes,
        cpus_per_cpu,
        matches: Vec::new(),
        label: String::new(),
        jaccard: 0.0,
        exceptions: Vec::new(),
    })
}

/// Step of `infer`: set `level` (the `li`th cut, partition `part`) against
/// its best declared match, with findings for partial or hidden levels.
#[allow(clippy::too_many_arguments)]
fn match_level(
    m: &LatencyMatrix,
    li: usize,
    level: &mut MeasuredLevel,
    part: &[usize],
    decl_parts: &[DeclPart],
    placed: &[bool],
    matched_decl: &mut [bool],
    findings: &mut Vec<String>,
) {
    // Compare over the placed CPUs only (those with a pair the grouping
    // used): a CPU whose every pair was left out is in no measured group.
    let keep: Vec<usize> = (0..part.len())
        .filter(|&i| placed.get(i).copied().unwrap_or(true))
        .collect();
    let proj = |v: &[usize]| -> Vec<usize> {
        let mut map: BTreeMap<usize, usize> = BTreeMap::new();
        keep.iter()
            .map(|&i| {
                let next = map.len();
                *map.entry(v[i]).or_insert(next)
            })
            .collect()
    };
    let part = &proj(part)[..];
    let projected: Vec<Vec<usize>> = decl_parts.iter().map(|(_, _, dp)| proj(dp)).collect();
    let decl_parts: Vec<DeclPart> = decl_parts
        .iter()
        .zip(&projected)
        .map(|((l, n, _), p)| (l.clone(), n.clone(), p.as_slice()))
        .collect();
    let cpus: Vec<usize> = keep.iter().map(|&i| m.cpus[i]).collect();
    let latency = level.latency_ns;
    // Best declared match.
    let mut best: Option<(usize, f64)> = None;
    for (di, (_, _, dp)) in decl_parts.iter().enumerate() {
        let jv = jaccard(part, dp);
        if best.is_none_or(|(_, bj)| jv > bj) {
            best = Some((di, jv));
        }
    }
    let Some((di, jv)) = best else {
        return;
    };
    level.jaccard = jv;
    let (dl, dn, dp) = &decl_parts[di];
    if jv >= MATCH_JACCARD {
        matched_decl[di] = true;
        level.matches = dn.clone();
        level.label = dl.clone();
        if jv < 1.0 {
            level.exceptions = match_exceptions(&cpus, part, dp);
            findings.push(format!(
                "level {} ({:.1} ns) matches '{}' except for some CPU pairs (Jaccard {:.2}): {}",
                li + 1,
                latency,
                dl,
                jv,
                level.exceptions.join("; ")
            ));
        }
    } else {
        level.label = undeclared_label(&decl_parts, part);
        let place = undeclared_place(&decl_parts, part);
        let sizes_txt = level
            .group_sizes
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("/");
        findings.push(format!(
            "hidden level: {} groups of {} CPUs at {:.1} ns that the kernel does not declare ({}); e.g. group {}",
            level.groups.len(),
            sizes_txt,
            latency,
            place,
            fmt_cpus(&level.groups[0])
        ));
    }
}

/// Step of `infer`: the CPU pairs (up to 5 each way) where measured
/// partition `part` and declared partition `dp` disagree.
fn match_exceptions(cpus: &[usize], part: &[usize], dp: &[usize]) -> Vec<String> {
    let n = cpus.len();
    let mut exceptions = Vec::new();
    let mut ex_m = Vec::new();
    let mut ex_d = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let same_m = part[i] == part[j];
            let same_d = dp[i] == dp[j];
            if same_m && !same_d && ex_m.len() < 5 {
                ex_m.push(format!("{},{}", cpus[i], cpus[j]));
            }
            if !same_m && same_d && ex_d.len() < 5 {
                ex_d.push(format!("{},{}", cpus[i], cpus[j]));
            }
        }
    }
    if !ex_m.is_empty() {
        exceptions.push(format!(
            "measured together but declared apart: {}",
            ex_m.join(" ")
        ));
    }
    if !ex_d.is_empty() {
        exceptions.push(format!(
            "declared together but measured apart: {}",
            ex_d.join(" ")
        ));
    }
    exceptions
}

/// The first name of a declared label ("shared L3 = same NUMA node" ->
/// "shared L3"): the phrase a hidden level's label uses for it.
fn first_name(label: &str) -> &str {
    label.split(" = ").next().unwrap_or(label)
}

/// Where an undeclared partition `part` sits among the declared ones
/// (finest it refines, coarsest it is refined by), as a phrase without
/// quotes: "between shared L2 and shared L3".
fn undeclared_place(decl_parts: &[DeclPart], part: &[usize]) -> String {
    let below = decl_parts
        .iter()
        .filter(|(_, _, dp)| refines(dp, part))
        .min_by_key(|(_, _, dp)| count_groups(dp))
        .map(|(l, _, _)| first_name(l).to_string());
    let above = decl_parts
        .iter()
        .filter(|(_, _, dp)| refines(part, dp))
        .max_by_key(|(_, _, dp)| count_groups(dp))
        .map(|(l, _, _)| first_name(l).to_string());
    match (&below, &above) {
        (Some(b), Some(a)) => format!("between {b} and {a}"),
        (None, Some(a)) => format!("finer than {a}"),
        (Some(b), None) => format!("coarser than {b}"),
        (None, None) => "across the declared levels".into(),
    }
}

/// Step of `infer`: the label of a measured level the kernel does not
/// declare: "hidden level between shared L2 and shared L3".
fn undeclared_label(decl_parts: &[DeclPart], part: &[usize]) -> String {
    format!("{HIDDEN_LEVEL} {}", undeclared_place(decl_parts, part))
}

/// How the label of a measured level that matches no declared one begins.
pub const HIDDEN_LEVEL: &str = "hidden level";

/// Step of `infer`: findings for declared levels with no latency step of
/// their own, and for inverted levels.
fn closing_findings(
    m: &LatencyMatrix,
    decl_parts: &[DeclPart],
    matched_decl: &[bool],
    partial: bool,
    levels: &[MeasuredLevel],
    findings: &mut Vec<String>,
) {
    let n = m.n();
    // Declared levels with no latency step of their own.
    for (di, (dl, _, dp)) in decl_parts.iter().enumerate() {
        if matched_decl[di] || count_groups(dp) == n {
            continue;
        }
        // Only meaningful when some pair inside it was measured.
        let inside = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .any(|(i, j)| dp[i] == dp[j] && m.dist(i, j).is_some());
        if inside && !partial {
            findings.push(format!(
                "declared level '{dl}' ({} groups) has no latency step of its own: no measured group matches it",
                count_groups(dp)
            ));
        }
    }
    for w in levels.windows(2) {
        if let Some(inc) = w[1].increment_ns {
            if inc < 0.0 {
                findings.push(format!(
                    "level {} is faster than level {}: inverted hierarchy (noisy matrix?)",
                    w[1].level, w[0].level
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::CpuSet;

    #[test]
    fn partition_requires_cover() {
        let cpus = [0, 1, 2, 3];
        let g = vec![CpuSet::parse("0-1").unwrap(), CpuSet::parse("2-3").unwrap()];
        assert_eq!(partition(&cpus, &g), Some(vec![0, 0, 1, 1]));
        let g = vec![CpuSet::parse("0-1").unwrap()];
        assert_eq!(partition(&cpus, &g), None);
    }

    #[test]
    fn cuts_split_on_gaps() {
        let c = level_cuts(&[10.0, 10.5, 11.0, 30.0, 31.0, 100.0]);
        assert_eq!(c, vec![11.0, 31.0, 100.0]);
    }

    fn lp(ns: &[f64], noise: &[f64]) -> LevelPairs {
        LevelPairs {
            ns: ns.to_vec(),
            noise: noise.to_vec(),
        }
    }

    #[test]
    fn min_level_pairs_scales_with_the_matrix() {
        assert_eq!(min_level_pairs(2, 1), 2);
        assert_eq!(min_level_pairs(4, 6), 2);
        assert_eq!(min_level_pairs(16, 120), 4);
        assert_eq!(min_level_pairs(256, 256 * 255 / 2), 64);
        // One measured row of 16 CPUs.
        assert_eq!(min_level_pairs(16, 15), 2);
    }

    #[test]
    fn levels_must_be_separated_beyond_the_noise() {
        let quiet_a = lp(&[40.0, 40.4, 39.6, 40.2], &[]);
        let quiet_b = lp(&[70.0, 69.5, 70.5, 70.2], &[]);
        assert_eq!(not_separated(&quiet_a, &quiet_b, 4), None);
        // Too few pairs in one level.
        let why = not_separated(&quiet_a, &quiet_b, 5).unwrap();
        assert!(why.contains("fewer than the 5"), "{why}");
        // A step within the spread of the pairs inside a level.
        let wide = lp(&[55.0, 62.0, 70.0, 78.0, 85.0, 71.0], &[]);
        let why = not_separated(&quiet_a, &wide, 4).unwrap();
        assert!(why.contains("spread of the pairs inside a group"), "{why}");
        // A step within the pairs' own noise (10% over passes).
        let noisy_a = lp(&[60.0, 60.3, 59.8, 60.1], &[0.1; 4]);
        let noisy_b = lp(&[70.0, 69.8, 70.3, 70.1], &[0.1; 4]);
        let why = not_separated(&noisy_a, &noisy_b, 4).unwrap();
        assert!(why.contains("own noise"), "{why}");
        // Below the relative gap.
        let close = lp(&[42.0, 42.1, 41.9, 42.0], &[]);
        let why = not_separated(&quiet_a, &close, 4).unwrap();
        assert!(why.contains("within 8%"), "{why}");
    }

    #[test]
    fn hidden_level_labels_are_plain_phrases() {
        let singles: Vec<usize> = (0..8).collect();
        let l3 = vec![0usize; 8];
        let halves = vec![0, 0, 0, 0, 1, 1, 1, 1];
        let parts: Vec<DeclPart> = vec![
            (
                "SMT siblings (same core) = shared L2".into(),
                vec![],
                &singles,
            ),
            ("shared L3 = same NUMA node".into(), vec![], &l3),
        ];
        let quads = vec![0, 0, 1, 1, 2, 2, 3, 3];
        assert_eq!(
            undeclared_label(&parts, &quads),
            "hidden level between SMT siblings (same core) and shared L3"
        );
        // Without the singleton partition (no SMT: infer leaves it out).
        assert_eq!(
            undeclared_label(&parts[1..], &halves),
            "hidden level finer than shared L3"
        );
    }

    #[test]
    fn refinement() {
        assert!(refines(&[0, 0, 1, 2], &[0, 0, 1, 1]));
        assert!(!refines(&[0, 1, 1, 2], &[0, 0, 1, 1]));
    }
}

//! Core-to-core latency: a round-trip ping-pong between two pinned threads
//! for every pair of CPUs, the pairs run as rounds of disjoint pairs.
//!
//! Method (docs/methods-c2c.md):
//! - For each pair a fresh page is mapped and first touched by the initiating
//!   thread (the lower CPU id of the pair), pinned to its CPU, so the line is
//!   new to both caches and homed on the initiator's node; the lines used sit
//!   at offsets 0 and 256 (128-byte aligned, never the adjacent-line pair).
//! - The initiator times batches of `round_trips` round trips with the
//!   harness timer (TSC on x86), read by the initiator only; one sample = one
//!   batch; reported one-way latency = batch time / round trips / 2. A few
//!   warm-up batches are discarded. Per pair: median, quartiles, min, max, CV.
//! - Pairs are scheduled by the circle method (round-robin tournament) and
//!   packed greedily into rounds where no physical core carries two pairs
//!   (SMT siblings of busy cores stay idle); each round is released by the
//!   team's barrier and its pairs run in parallel.
//! - The planner fits the schedule to the profile's time budget: fewer
//!   samples, then shorter batches, then fewer CPUs (every pair of a subset
//!   spread over the NUMA nodes: a round's pairs run in parallel, so time
//!   goes with the number of rounds, about one per CPU), and says which it did.

pub mod inference_view;
mod plan;
pub mod text;
pub mod view;

pub use plan::*;

/// The pair protocol lives in the harness; its types and entry points keep
/// their c2c paths.
pub use crate::harness::pairs::{pair_stats_marked, run_plan, MatrixRun, PairStats, Plan};

use crate::base::CpuSet;
use crate::base::Stats;
use crate::experiments::coherence::infer::{self as c2c_infer, Declared, LatencyMatrix};
use crate::experiments::coherence::payload::{
    DeclaredLevelData, Disturbance, Inference, MatrixData, PairCell, PairSpread, PlanFacts,
    StealTime,
};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::kernels::c2c::Method;
use crate::machine::MachineInfo;
use crate::placement::team::Team;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Instant;

pub struct C2c;

pub const EXP: &str = "c2c";
/// Core-to-core latency of every measured pair (samples: the pairs' medians).
pub const MATRIX: MetricId = MetricId::new(EXP, "matrix");
/// One-way latency per relation of the pair (SMT, same L3, cross package...).
pub const ONE_WAY_LATENCY: MetricId = MetricId::new(EXP, "one_way_latency");
pub const METHOD_VERSION: u32 = 1;

/// A pair is marked preempted when more than this share of its samples
/// was disturbed (samples during which the initiator was switched out, plus
/// the responder's switches): a stray timer tick does not mark it.
pub const PREEMPTED_PAIR_SHARE: f64 = 0.01;
/// Steal time (of the measured CPUs' time over the experiment) from which
/// the figure is called disturbed.
pub const STEAL_MATERIAL_SHARE: f64 = 0.02;

/// Method line for the records.
pub fn method_text(method: Method, plan: &Plan) -> String {
    format!(
        "{}; fresh 128-byte-aligned line(s) per pair, first touched by the initiator (lower CPU id); initiator times batches of {} round trips with the harness timer; one-way latency = round trip / 2; {} pass(es) over the schedule, each {} samples per pair after {} warm-up batches; median per pair over the pooled samples",
        method.describe(),
        plan.round_trips,
        plan.passes,
        plan.samples,
        plan.warmup
    )
}

/// Per-pair detail objects are stored for matrices up to this many CPUs;
/// above, the matrix and a summary of the worst pairs (keeps a 256-CPU
/// record near 1 MB instead of 10).
pub const MAX_DETAILED_CPUS: usize = 64;

/// Declared relation of every pair: (relation names, n×n index into them,
/// -1 on the diagonal).
pub fn pair_relations(decl: &Declared, cpus: &[usize]) -> (Vec<String>, Vec<Vec<i32>>) {
    let n = cpus.len();
    let idx: Vec<Option<usize>> = cpus.iter().map(|&c| decl.index_of(c)).collect();
    let mut names: Vec<String> = Vec::new();
    let mut code = |name: String| -> i32 {
        match names.iter().position(|x| *x == name) {
            Some(p) => p as i32,
            None => {
                names.push(name);
                names.len() as i32 - 1
            }
        }
    };
    let m = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| match (idx[i], idx[j]) {
                    _ if i == j => -1,
                    (Some(a), Some(b)) => code(decl.relation(a, b)),
                    _ => code(c2c_infer::NOTHING_DECLARED.to_string()),
                })
                .collect()
        })
        .collect();
    (names, m)
}

/// The structured result of one method (the matrix record's data): matrix,
/// per-pair spread, relations, inference. Shared by the experiment and the
/// stand-alone command.
pub fn matrix_data(
    run: &MatrixRun,
    plan: &Plan,
    decl: &Declared,
    inference: &Inference,
    ghz: Option<f64>,
) -> MatrixData {
    let m = run.matrix();
    let n = m.n();
    let round1 = |x: f64| (x * 10.0).round() / 10.0;
    let rows: Vec<Vec<Option<f64>>> = (0..n)
        .map(|i| (0..n).map(|j| m.get(i, j).map(round1)).collect())
        .collect();
    let detailed = n <= MAX_DETAILED_CPUS;
    // Above MAX_DETAILED_CPUS: the 20 widest-spread pairs only.
    let mut shown: Vec<&PairStats> = run.pairs.iter().collect();
    if !detailed {
        shown.sort_by(|a, b| b.iqr_ratio().total_cmp(&a.iqr_ratio()));
        shown.truncate(20);
    }
    let cells: Vec<PairCell> = shown
        .into_iter()
        .map(|p| PairCell {
            cpus: [p.initiator, p.responder],
            median_ns: p.median(),
            samples: p.stats.n,
            spread: p.spread(),
        })
        .collect();
    let (rel_names, rel_index) = pair_relations(decl, &m.cpus);
    let smt: Vec<[usize; 2]> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(
            |&(i, j)| match (decl.index_of(m.cpus[i]), decl.index_of(m.cpus[j])) {
                (Some(a), Some(b)) => decl.smt_siblings(a, b),
                _ => false,
            },
        )
        .map(|(i, j)| [m.cpus[i], m.cpus[j]])
        .collect();
    MatrixData {
        method: run.method.as_str().to_string(),
        unit: "ns".to_string(),
        one_way: "round-trip time / 2".to_string(),
        cpus: m.cpus.clone(),
        matrix_ns: rows,
        pairs: cells,
        smt_siblings: smt,
        pairs_detail: if detailed { "every measured pair" } else { "the 20 pairs with the widest spread (interquartile range over median); the matrix has every pair" }.to_string(),
        relation_names: rel_names,
        relation_index: rel_index,
        declared_levels: decl
            .levels
            .iter()
            .map(|l| DeclaredLevelData {
                names: l.names.clone(),
                label: l.label.clone(),
                groups: l.groups,
            })
            .collect(),
        inference: Some(inference.clone()),
        ghz_single: ghz,
        plan: plan_facts(run, plan),
        preemption_note: preemption_note(&run.pairs),
        disturbance: Some(disturbance(run)),
    }
}

/// How `run` was measured under `plan`, as the matrix record keeps it.
fn plan_facts(run: &MatrixRun, plan: &Plan) -> PlanFacts {
    PlanFacts {
        pairs_planned: plan.pairs.len(),
        pairs_measured: run.pairs.len(),
        rounds_planned: run.rounds_planned,
        rounds_done: run.rounds_done,
        max_pairs_per_round: plan.max_round_width(),
        round_trips_per_sample: plan.round_trips,
        samples_per_pair_per_pass: plan.samples,
        passes: plan.passes,
        warmup_batches: plan.warmup,
        estimated_s: plan.est_secs,
        budget_s: plan.budget_secs,
        elapsed_s: run.elapsed_s,
        full_matrix: plan.full_matrix,
        notes: plan.notes.clone(),
        stopped: run.stopped.clone(),
    }
}

/// A note when pairs were disturbed by preemption.
pub fn preemption_note(pairs: &[PairStats]) -> Option<String> {
    let hit: Vec<&PairStats> = pairs
        .iter()
        .filter(|p| p.preempted_samples.unwrap_or(0) > 0 || p.responder_switches.unwrap_or(0) > 0)
        .collect();
    if hit.is_empty() {
        return None;
    }
    let samples: usize = hit.iter().filter_map(|p| p.preempted_samples).sum();
    let marked = pairs.iter().filter(|p| p.is_preempted()).count();
    let share = PREEMPTED_PAIR_SHARE * 100.0;
    Some(if marked > 0 {
        format!(
            "{marked} of {} pairs marked preempted (more than {share:.0}% of their samples disturbed; {} pair(s) saw a switch, {samples} initiator samples disturbed in all): the machine was busy; medians resist it, means do not; marked pairs are left out of the latency groups",
            pairs.len(),
            hit.len(),
        )
    } else {
        format!(
            "{} of {} pairs saw a preemption ({samples} initiator samples disturbed; none on more than {share:.0}% of its samples, so none marked preempted): medians resist it, means do not",
            hit.len(),
            pairs.len(),
        )
    })
}

/// Why the matrix is called disturbed (most pairs preempted, or material
/// steal time), or None when it is a clean one.
fn disturbed_why(run: &MatrixRun) -> Option<String> {
    let pairs = run.pairs.len();
    let preempted = run.pairs.iter().filter(|p| p.is_preempted()).count();
    let most = pairs > 0 && preempted * 2 > pairs;
    let mut why = Vec::new();
    if most {
        why.push(format!("{preempted} of {pairs} pairs preempted"));
    }
    if let Some(st) = run.steal.as_ref().filter(|s| s.is_material()) {
        why.push(format!(
            "steal time {:.1}% of the measured CPUs' time ({:.2} s)",
            st.share * 100.0,
            st.seconds
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// How disturbed a method's measurement was: pairs marked preempted, their
/// samples, the steal time over the experiment, and the verdict on it
/// (`disturbed` when most pairs were marked preempted or the steal time is
/// material), as the matrix record keeps it (`data.disturbance`).
pub fn disturbance(run: &MatrixRun) -> Disturbance {
    let pairs = run.pairs.len();
    let preempted = run.pairs.iter().filter(|p| p.is_preempted()).count();
    let why = disturbed_why(run);
    let disturbed = why.is_some();
    let samples: usize = run.pairs.iter().map(|p| p.stats.n).sum();
    let samples_preempted: usize = run.pairs.iter().filter_map(|p| p.preempted_samples).sum();
    let switches: i64 = run.pairs.iter().filter_map(|p| p.responder_switches).sum();
    Disturbance {
        pairs_measured: pairs,
        pairs_preempted: preempted,
        preempted_pair_share: PREEMPTED_PAIR_SHARE,
        samples,
        samples_preempted,
        responder_switches: switches,
        steal: run.steal.clone(),
        steal_material_share: STEAL_MATERIAL_SHARE,
        disturbed,
        why,
    }
}

/// Records of one method: the matrix record, then one per relation.
pub fn records(
    run: &MatrixRun,
    plan: &Plan,
    decl: &Declared,
    ghz: Option<f64>,
) -> (Vec<ResultRecord>, Inference) {
    let m = run.matrix();
    let inference = c2c_infer::infer_with(&m, &run.clean_matrix(), decl);
    let method = run.method;
    let mtext = method_text(method, plan);
    let mut recs = Vec::new();
    let mat = matrix_record(run, plan, decl, &inference, ghz, &mtext);
    recs.push(matrix_notes(mat, run, plan, &inference));

    // Per relation.
    let by_rel = pairs_by_relation(run, decl);
    for (rel, ps) in &by_rel {
        let label = inference
            .relations
            .iter()
            .find(|r| &r.relation == rel)
            .map(|r| r.label.clone())
            .unwrap_or_else(|| rel.clone());
        recs.push(relation_record(method, rel, ps, &label, &mtext, ghz));
    }
    for rel in ["smt_sibling", c2c_infer::CROSS_PACKAGE] {
        if !by_rel.contains_key(rel) {
            recs.push(
                ResultRecord::unavailable(
                    ONE_WAY_LATENCY.experiment,
                    ONE_WAY_LATENCY.metric,
                    "ns",
                    &missing_relation_reason(rel, run, plan, decl),
                )
                .with_param("method", method.as_str())
                .with_param("relation", rel),
            );
        }
    }
    for r in recs.iter_mut() {
        r.higher_is_better = false;
    }
    (recs, inference)
}

/// The matrix record, before its notes: the pairs' medians (or why there
/// are none) and the structured result.
fn matrix_record(
    run: &MatrixRun,
    plan: &Plan,
    decl: &Declared,
    inference: &Inference,
    ghz: Option<f64>,
    mtext: &str,
) -> ResultRecord {
    let medians: Vec<f64> = run.pairs.iter().map(|p| p.median()).collect();
    let mut mat = if medians.is_empty() {
        ResultRecord::unavailable(
            MATRIX.experiment,
            MATRIX.metric,
            "ns",
            run.stopped.as_deref().unwrap_or("no pair was measured"),
        )
    } else {
        ResultRecord::of(MATRIX, "ns", false).with_samples(medians)
    };
    mat = mat
        .with_param("method", run.method.as_str())
        .with_method(
            &format!("{mtext}; one sample per pair (its median), value = median over pairs"),
            METHOD_VERSION,
        )
        .with_payload(&matrix_data(run, plan, decl, inference, ghz));
    mat.higher_is_better = false;
    mat
}

/// The matrix record's notes: the plan's, how the rounds stopped or were
/// cut, preemption, steal time, disturbance, and the latency groups.
fn matrix_notes(
    mut mat: ResultRecord,
    run: &MatrixRun,
    plan: &Plan,
    inference: &Inference,
) -> ResultRecord {
    for n in &plan.notes {
        mat = mat.with_note(n);
    }
    if let Some(s) = &run.stopped {
        mat = mat.with_note(s);
    }
    for a in &run.adapted {
        mat = mat.with_note(a);
    }
    if let Some(n) = preemption_note(&run.pairs) {
        mat = mat.with_note(&n);
    }
    match &run.steal {
        Some(StealTime {
            unavailable: Some(why),
            ..
        }) => mat = mat.with_note(&format!("steal time not available: {why}")),
        Some(st) if st.ticks > 0 => {
            mat = mat.with_note(&format!(
                "steal time during the experiment: {:.2} s, {:.1}% of the measured CPUs' time (/proc/stat)",
                st.seconds,
                st.share * 100.0
            ))
        }
        _ => {}
    }
    if let Some(why) = disturbed_why(run) {
        mat = mat.with_note(&format!(
            "disturbed: {why}; the figure is not a clean one (rerun on a quiet host)"
        ));
    }
    inference_notes(mat, inference)
}

/// The inference's notes on the matrix record: why no groups, levels not
/// separated beyond the noise, findings, and each latency group.
fn inference_notes(mut mat: ResultRecord, inference: &Inference) -> ResultRecord {
    if let Some(why) = &inference.not_inferred {
        mat = mat.with_note(&format!("latency groups not inferred: {why}"));
    }
    for n in inference
        .notes
        .iter()
        .filter(|n| n.contains("not separated beyond the noise"))
    {
        mat = mat.with_note(n);
    }
    for f in &inference.findings {
        mat = mat.with_note(&format!("finding: {f}"));
    }
    for l in &inference.levels {
        let inc = l
            .increment_ns
            .map(|d| format!(" ({d:+.1} ns)"))
            .unwrap_or_default();
        mat = mat.with_note(&format!(
            "group {}: {:.1} ns{inc}, groups of {} CPUs: {}",
            l.level,
            l.latency_ns,
            l.group_sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("/"),
            if l.label.is_empty() { "?" } else { &l.label }
        ));
    }
    mat
}

/// The measured pairs by their closest shared declared level.
fn pairs_by_relation<'a>(
    run: &'a MatrixRun,
    decl: &Declared,
) -> BTreeMap<String, Vec<&'a PairStats>> {
    let mut by_rel: BTreeMap<String, Vec<&PairStats>> = BTreeMap::new();
    let idx = |c: usize| decl.index_of(c);
    for p in &run.pairs {
        let rel = match (idx(p.initiator), idx(p.responder)) {
            (Some(a), Some(b)) => decl.relation(a, b),
            _ => c2c_infer::NOTHING_DECLARED.to_string(),
        };
        by_rel.entry(rel).or_default().push(p);
    }
    by_rel
}

/// The record of relation `rel` from its pairs `ps`: the samples and how
/// they were taken, and its notes (`label`: the relation in words).
fn relation_record(
    method: Method,
    rel: &str,
    ps: &[&PairStats],
    label: &str,
    mtext: &str,
    ghz: Option<f64>,
) -> ResultRecord {
    let (samples, how) = if ps.len() == 1 && ps[0].pass_medians.len() >= 3 {
        (
            ps[0].pass_medians.clone(),
            format!(
                "the one pair ({},{}): one sample per pass (the pass's median), {} passes",
                ps[0].initiator,
                ps[0].responder,
                ps[0].pass_medians.len()
            ),
        )
    } else if ps.len() == 1 && !ps[0].samples.is_empty() {
        (
            ps[0].samples.clone(),
            format!(
                "the one pair ({},{}): its {} samples",
                ps[0].initiator, ps[0].responder, ps[0].stats.n
            ),
        )
    } else {
        (
            ps.iter().map(|p| p.median()).collect(),
            format!("{} pairs: one sample per pair (its median)", ps.len()),
        )
    };
    let mut r = ResultRecord::of(ONE_WAY_LATENCY, "ns", false)
        .with_param("method", method.as_str())
        .with_param("relation", rel)
        .with_method(&format!("{mtext}; {how}"), METHOD_VERSION)
        .with_samples(samples);
    r.higher_is_better = false;
    r = r.with_note(&format!(
        "CPU pairs whose closest shared declared level is: {label}"
    ));
    if let Some(n) = preemption_note(&ps.iter().map(|p| (*p).clone()).collect::<Vec<_>>()) {
        r = r.with_note(&n);
    }
    if ps.len() == 1 {
        let p = ps[0];
        r = r.with_note(&format!(
            "pair {},{}: median {:.1} ns over all {} samples, quartiles {:.1}–{:.1} ns",
            p.initiator, p.responder, p.stats.median, p.stats.n, p.p25, p.p75
        ));
    }
    match (ghz, r.value) {
        (Some(g), Some(v)) => {
            r = r.with_note(&format!("{:.0} cycles at the measured {g:.2} GHz", v * g))
        }
        _ => {
            r = r.with_note(
                "cycles not available: no measured clock (the frequency experiment did not run)",
            )
        }
    }
    r
}

/// Why relation `rel` (SMT siblings or cross package) has no pairs: the
/// plan held such pairs but the rounds stopped first, or the measured CPUs
/// have none.
fn missing_relation_reason(rel: &str, run: &MatrixRun, plan: &Plan, decl: &Declared) -> String {
    let idx = |c: usize| decl.index_of(c);
    // Did the plan hold such a pair? Then it was cut short, and the
    // reason is the stop, not the machine.
    let planned = plan.pairs.iter().any(|&(a, b)| match (idx(a), idx(b)) {
        (Some(i), Some(j)) if rel == "smt_sibling" => decl.smt_siblings(i, j),
        (Some(i), Some(j)) => decl.relation(i, j) == c2c_infer::CROSS_PACKAGE,
        _ => false,
    });
    match (rel, planned, run.stopped.as_deref()) {
        (_, true, Some(s)) => format!("not measured: such pairs were planned but {s}"),
        ("smt_sibling", _, _) => {
            "no two measured CPUs are threads of one core (no SMT, or siblings not selected)"
                .to_string()
        }
        _ => "all measured CPUs are in one package (or packages are not declared)".to_string(),
    }
}

/// What `cpuscope c2c` may change (`None`: the profile's choice).
#[derive(Clone, Debug)]
pub struct Options {
    /// One pair `A,B` instead of the matrix.
    pub pair: Option<String>,
    pub methods: Vec<Method>,
    /// Samples per pair (fixed).
    pub samples: Option<usize>,
    /// Round trips per sample (fixed).
    pub round_trips: Option<u64>,
    /// Measure at most this many pairs (`--sample`).
    pub max_pairs: Option<usize>,
    /// One pair at a time.
    pub serial: bool,
}

/// The experiment's parameters under `cpuscope c2c`.
#[derive(Debug)]
pub struct Params {
    pub plan: Plan,
    /// Sizes fixed by the user: no deadline (otherwise the measurement stops
    /// at twice the budget, keeping what finished).
    pub fixed: bool,
    /// Keep every sample of each pair (one pair: `--pair`).
    pub keep_samples: bool,
    /// Set by the experiment: each method's measured pairs (for the
    /// command's matrix text, CSV and one-pair views).
    pub runs: Vec<MatrixRun>,
}

impl Params {
    /// The plan `o` asks for among `cpus` (`--pair`: its two CPUs, which
    /// must be among them); each error is one line naming the option.
    pub fn new(
        machine: &MachineInfo,
        cpus: &CpuSet,
        profile: Profile,
        o: &Options,
    ) -> Result<Params> {
        if o.samples == Some(0) || o.round_trips == Some(0) {
            bail!("--samples and --round-trips must be at least 1");
        }
        if o.max_pairs == Some(0) {
            bail!("--sample must be at least 1 pair");
        }
        let list = match &o.pair {
            Some(p) => {
                let (a, b) = parse_pair(p, cpus)?;
                vec![a.min(b), a.max(b)]
            }
            None => cpus.to_vec(),
        };
        let mut req = PlanRequest::for_profile(profile, &list, &o.methods);
        if let Some(s) = o.samples {
            req.max_samples = s;
            req.fixed = true;
        }
        if let Some(r) = o.round_trips {
            req.round_trips = r;
            req.fixed = true;
        }
        req.max_pairs = o.max_pairs;
        if o.serial {
            req.max_parallel = Some(1);
        }
        Ok(Params {
            plan: plan(machine, &req)?,
            fixed: req.fixed,
            keep_samples: o.pair.is_some(),
            runs: Vec::new(),
        })
    }
}

/// Parse `A,B` into two different CPUs of `usable`.
pub fn parse_pair(s: &str, usable: &CpuSet) -> Result<(usize, usize)> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 2 {
        bail!("--pair '{s}': expected two CPU ids separated by a comma, e.g. --pair 0,17");
    }
    let num = |p: &str| -> Result<usize> {
        p.parse::<usize>()
            .map_err(|_| anyhow::anyhow!("--pair '{s}': '{p}' is not a CPU id"))
    };
    let (a, b) = (num(parts[0])?, num(parts[1])?);
    if a == b {
        bail!("--pair '{s}': the two CPUs must differ");
    }
    for c in [a, b] {
        if !usable.contains(c) {
            bail!("--pair '{s}': CPU {c} is not usable by this process (usable: {usable})");
        }
    }
    Ok((a, b))
}

/// One pair measured by every method (`cpuscope c2c --pair`).
pub struct PairView {
    /// The initiator (lower id) and the responder.
    pub cpus: (usize, usize),
    /// Closest shared declared level, and its label.
    pub relation: String,
    pub label: String,
    pub smt: bool,
    pub results: Vec<(Method, PairStats)>,
}

impl PairView {
    /// The pair of `p` (a one-pair plan) as measured; an error when it was not.
    pub fn of(machine: &MachineInfo, p: &Params) -> Result<PairView> {
        let (lo, hi) = (p.plan.cpus[0], p.plan.cpus[1]);
        let decl = Declared::from_machine(machine, &p.plan.cpus);
        let relation = decl.relation(0, 1);
        let mut results = Vec::new();
        for run in &p.runs {
            match run.pairs.first() {
                Some(s) => results.push((run.method, s.clone())),
                None => bail!(
                    "the pair {lo},{hi} was not measured ({})",
                    run.stopped.as_deref().unwrap_or("no sample")
                ),
            }
        }
        if results.is_empty() {
            bail!("the pair {lo},{hi} was not measured (stopped)");
        }
        let label = c2c_infer::LEVEL_NAMES
            .iter()
            .find(|(n, _)| *n == relation)
            .map(|(_, l)| l.to_string())
            .unwrap_or_else(|| relation.clone());
        Ok(PairView {
            cpus: (lo, hi),
            smt: decl.smt_siblings(0, 1),
            relation,
            label,
            results,
        })
    }

    /// The pair's figures as JSON fields (with the clock used for cycles).
    pub fn json(&self, plan: &Plan, ghz: Option<f64>, clock_note: &str) -> Value {
        let (lo, hi) = self.cpus;
        let ms: Vec<Value> = self
            .results
            .iter()
            .map(|(m, p)| {
                p.json_with(json!({
                    "method": m.as_str(),
                    "one_way_ns": p.median(),
                    "round_trip_ns": p.median() * 2.0,
                    "passes_cv": Stats::from_samples(&p.pass_medians).map(|s| s.cv),
                    "one_way_cycles": ghz.map(|g| p.median() * g),
                    "samples": p.samples,
                }))
            })
            .collect();
        json!({
            "cpus": [lo, hi],
            "initiator": lo,
            "relation": self.relation,
            "relation_label": self.label,
            "smt_siblings": self.smt,
            "round_trips_per_sample": plan.round_trips,
            "samples_per_pass": plan.samples,
            "passes": plan.passes,
            "warmup_batches": plan.warmup,
            "cycles_unavailable_reason": if ghz.is_none() { Some(clock_note) } else { None },
            "methods": ms,
        })
    }
}

/// USER_HZ, the unit of /proc/stat's times (100 where sysconf does not say).
fn user_hz() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// The CPUs to measure in a run: all usable ones.
fn run_cpus(cpus: &CpuSet) -> Vec<usize> {
    cpus.to_vec()
}

/// What c2c makes of the steal time over its pairs.
impl StealTime {
    /// Material: at least [`STEAL_MATERIAL_SHARE`] of the measured CPUs'
    /// time (and more than one tick).
    pub fn is_material(&self) -> bool {
        self.unavailable.is_none() && self.ticks > 1 && self.share >= STEAL_MATERIAL_SHARE
    }
}

/// What c2c makes of a pair's figures (the pair itself is the harness's).
impl PairStats {
    /// Marked preempted: more than [`PREEMPTED_PAIR_SHARE`] of its samples
    /// were disturbed. Such a pair keeps its figure but is left out of the
    /// latency groups.
    pub fn is_preempted(&self) -> bool {
        self.disturbed_samples() as f64 > PREEMPTED_PAIR_SHARE * self.stats.n.max(1) as f64
    }

    /// The pair's spread (ns), as its matrix cell and its pair view write it.
    pub fn spread(&self) -> PairSpread {
        PairSpread {
            pooled_median_ns: self.stats.median,
            p25_ns: self.p25,
            p75_ns: self.p75,
            mean_ns: self.stats.mean,
            min_ns: self.stats.min,
            max_ns: self.stats.max,
            cv: self.stats.cv,
            iqr_over_median: self.iqr_ratio(),
            pass_medians_ns: self.pass_medians.clone(),
            preempted_samples: self.preempted_samples,
            responder_switches: self.responder_switches,
            marked_preempted: self.is_preempted(),
            clean_median_ns: self.clean_median(),
        }
    }

    /// The pair's spread as JSON fields (ns), with `more` fields added.
    pub fn json_with(&self, more: Value) -> Value {
        let mut v = serde_json::to_value(self.spread()).unwrap_or(Value::Null);
        if let (Value::Object(a), Value::Object(b)) = (&mut v, more) {
            a.extend(b);
        }
        v
    }
}

impl MatrixRun {
    /// What the latency groups may use: the pairs not marked preempted,
    /// each with its figure from its clean samples and its own noise.
    pub fn clean_matrix(&self) -> LatencyMatrix {
        let mut m = LatencyMatrix::new(self.cpus.clone());
        let idx: BTreeMap<usize, usize> =
            self.cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        for p in self.pairs.iter().filter(|p| !p.is_preempted()) {
            if let (Some(&i), Some(&j), Some(v)) = (
                idx.get(&p.initiator),
                idx.get(&p.responder),
                p.clean_median(),
            ) {
                m.set_sym(i, j, v);
                m.set_noise_sym(i, j, p.rel_noise());
            }
        }
        m
    }

    /// Median one-way latency per pair as a symmetric matrix over `cpus`.
    pub fn matrix(&self) -> LatencyMatrix {
        let mut m = LatencyMatrix::new(self.cpus.clone());
        let idx: BTreeMap<usize, usize> =
            self.cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        for p in &self.pairs {
            if let (Some(&i), Some(&j)) = (idx.get(&p.initiator), idx.get(&p.responder)) {
                m.set_sym(i, j, p.median());
            }
        }
        m
    }
}

impl Experiment for C2c {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "core-to-core latency matrix (CAS and load/store ping-pong) and latency groups vs declared topology"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        let c = run_cpus(cpus);
        if c.len() < 2 {
            return 0.0;
        }
        let req = PlanRequest::for_profile(profile, &c, &[Method::Cas, Method::LoadStore]);
        plan(machine, &req).map(|p| p.est_secs).unwrap_or(0.0)
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let cpus = run_cpus(&ctx.cpus);
        if cpus.len() < 2 {
            for m in [Method::Cas, Method::LoadStore] {
                out(ResultRecord::unavailable(
                    MATRIX.experiment,
                    MATRIX.metric,
                    "ns",
                    "core-to-core latency needs at least two usable CPUs",
                )
                .with_param("method", m.as_str()))?;
            }
            return Ok(());
        }
        let req = PlanRequest::for_profile(ctx.profile, &cpus, &[Method::Cas, Method::LoadStore]);
        let plan = plan(ctx.machine, &req)?;
        let keep = plan.pairs.len() == 1;
        measure(ctx, &plan, false, keep, out).map(drop)
    }
}

/// `cpuscope c2c`'s [`Params`]; it hands back the measured runs in
/// `Params::runs`.
impl WithParams for C2c {
    type Params = Params;
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut Params,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        p.runs = measure(ctx, &p.plan, p.fixed, p.keep_samples, out)?;
        Ok(())
    }
}

/// Measure `plan` (`fixed`: sizes the user fixed, no deadline; `keep`:
/// every sample of each pair), hand each figure to `out`, return the runs.
fn measure(
    ctx: &mut ExpCtx,
    plan: &Plan,
    fixed: bool,
    keep: bool,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<Vec<MatrixRun>> {
    let decl = Declared::from_machine(ctx.machine, &plan.cpus);
    (ctx.step)(&format!(
        "{} CPUs, {} pairs in {} rounds (~{:.1} s)",
        plan.cpus.len(),
        plan.pairs.len(),
        plan.rounds.len(),
        plan.est_secs
    ));
    let mut team = Team::new(&plan.cpus)?;
    // Under heavy load a ping-pong pair runs only while both threads are
    // on a CPU: stop at twice the budget (keeping what finished) unless
    // the sizes are fixed.
    let deadline = (!fixed)
        .then(|| Instant::now() + std::time::Duration::from_secs_f64(plan.budget_secs * 2.0 + 1.0));
    let step = &mut ctx.step;
    let mut last = Instant::now();
    let mut prog = |m: Method, pass: usize, d: usize, t: usize| {
        if last.elapsed().as_millis() > 500 || d == t {
            step(&format!(
                "{} pass {}/{}: round {d}/{t}",
                m.as_str(),
                pass + 1,
                plan.passes
            ));
            last = Instant::now();
        }
    };
    // Steal time over the measurement: /proc/stat's steal column before
    // and after, over the measured CPUs.
    let sys = crate::base::Sysroot::new("/").map_err(|e| format!("{e:#}"));
    let read_steal = || {
        sys.as_ref()
            .map_err(Clone::clone)
            .and_then(crate::machine::devices::read_stat_steal)
    };
    let before = read_steal();
    let t_steal = Instant::now();
    let mut runs = run_plan(plan, &mut team, ctx.stop, deadline, keep, &mut prog)?;
    let steal = match (before, read_steal()) {
        (Ok(b), Ok(a)) => StealTime::between(
            &b,
            &a,
            &plan.cpus,
            user_hz(),
            t_steal.elapsed().as_secs_f64(),
        ),
        (Err(e), _) | (_, Err(e)) => StealTime::unavailable(&e),
    };
    for run in runs.iter_mut() {
        run.steal = Some(steal.clone());
    }
    for run in &runs {
        let (recs, _) = records(run, plan, &decl, ctx.facts.ghz_single);
        for r in recs {
            out(r)?;
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests;

//! `cpuscope tune -- CMD ARGS...`: the best placement for the user's own
//! command, with the evidence. The candidates come from the placement
//! planner (`placement_plan::sized_sets`, `memory_for_set`): no binding
//! (the baseline); `k` CPUs of one node with local, preferred, interleaved
//! and remote memory; two nodes of one socket; two nodes on two sockets
//! (nearest and farthest pair); all nodes; packed on SMT siblings; and,
//! when the command takes a thread count (`{threads}` in its arguments or
//! an environment variable), the thread-count curve without binding. Only
//! the sets this machine has; the others are listed with the reason.
//!
//! The command runs as a child of this (unprivileged) process, once per
//! candidate per round, in a random order each round (interleaved: drift
//! and other load spread over every candidate alike), after warm-up
//! rounds, until the ranking is settled (a winner separated from the
//! runner-up, or the best two equal to within `resolution`), `max_runs`
//! rounds, or the time budget. The score is its wall time (lower is
//! better), or a figure read from its output or from a file it writes.
//! Per candidate: median, spread, the ratio to the baseline with a
//! distribution-free 95% interval (Hodges–Lehmann / Mann–Whitney, see
//! `base::mann_whitney`), counters, the remote share of its pages, and the
//! numactl/taskset line that reproduces it. A winner is declared only when
//! it is separated from the runner-up beyond noise, at a level corrected
//! for the number of candidates (Bonferroni).

pub use super::analysis::*;
pub use super::candidates::*;
pub use super::score::*;
use crate::base::args;
use crate::base::fmt::fmt_num;
use crate::base::mann_whitney::RatioEstimate;
use crate::base::CpuSet;
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::experiments::tune::payload::{
    fmt_ratio, BoundKind, CandidateData, RunBound, Stopped, VerdictData,
};
use crate::harness::child::{count_events, round_order, run_once, ChildRun, ChildSpec, Output};
use crate::machine::MachineInfo;
use crate::placement::binding::Binding;
use crate::results::schema::{MetricId, ResultRecord, Run};
use anyhow::{bail, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

mod child_figures;
use child_figures::*;

pub struct Tune;

pub const EXP: &str = "tune";
/// One candidate's score (params set, memory, threads): the median of its
/// runs, its samples, and in `data` everything else ([`CandidateData`]).
pub const SCORE: MetricId = MetricId::new(EXP, "score");
/// The ranking and the verdict (value: the best candidate's ratio to the
/// baseline; `data`: [`VerdictData`]).
pub const VERDICT: MetricId = MetricId::new(EXP, "verdict");
const METHOD_VERSION: u32 = 1;

/// The unit of a score read from the output or a file, unless given.
pub const DEFAULT_UNIT: &str = "score";
/// What the intervals are, in words (output and docs).
pub const INTERVAL_METHOD: &str = "ratio to the baseline: Hodges–Lehmann estimate with a 95% \
distribution-free Mann–Whitney (Moses) interval on the logarithms of the scores (exact U \
distribution up to 2500 pairs)";

/// A run is killed past this many times its candidate's median run time
/// (or, before its first finished run, the slowest run finished so far)...
pub const BOUND_MULTIPLE: f64 = 10.0;
/// ... but never before this many seconds.
pub const BOUND_FLOOR_S: f64 = 10.0;

/// Everything `cpuscope tune` asks.
#[derive(Clone, Debug)]
pub struct Params {
    /// The command, `{threads}` placeholders unfilled: bytes, passed to
    /// exec as given.
    pub command: Vec<OsString>,
    pub plan: TunePlan,
    pub score: Score,
    /// Discarded runs of each candidate first.
    pub warmup: usize,
    /// Runs of each candidate before the ranking may be called settled.
    pub min_runs: usize,
    pub max_runs: usize,
    /// Time for all runs, warm-up included.
    pub budget: Duration,
    /// Seed of the run order.
    pub seed: u64,
    /// Two candidates within this fraction of each other (at the interval's
    /// level) count as equal.
    pub resolution: f64,
    pub counters: bool,
    pub numa_maps: bool,
    /// Pass the command's output through instead of keeping it.
    pub show_output: bool,
    /// Kill a run (and stop its candidate) past this, instead of the
    /// default bound ([`run_bound`]).
    pub run_timeout: Option<Duration>,
}

impl Params {
    /// The arguments for candidate `c` (`{threads}` filled).
    pub fn argv_for(&self, c: &Candidate) -> Vec<OsString> {
        match c.threads {
            Some(t) => self
                .command
                .iter()
                .map(|a| args::replace(a, THREADS_PLACEHOLDER, &t.to_string()))
                .collect(),
            None => self.command.clone(),
        }
    }

    /// The environment set for candidate `c`.
    pub fn env_for(&self, c: &Candidate) -> Vec<(String, String)> {
        match (&self.plan.threads, c.threads) {
            (Some(ThreadKnob { env: Some(v), .. }), Some(t)) => vec![(v.clone(), t.to_string())],
            _ => Vec::new(),
        }
    }

    /// The shell line that reproduces candidate `c` with numactl/taskset
    /// (the command's exact bytes: `args::shell_line`).
    pub fn command_line(&self, c: &Candidate) -> String {
        let mut b = Binding::none();
        b.cpus = c.cpus.clone();
        b.memory = c.policy.clone();
        let head = b.command_line(&self.env_for(c), &[]);
        let tail = args::shell_line(&self.argv_for(c));
        if head.is_empty() {
            tail
        } else {
            format!("{head} {tail}")
        }
    }

    /// How each run is bounded, in words (stated in the output).
    pub fn bound_rule(&self) -> String {
        if let Some(t) = self.run_timeout {
            return format!(
                "each run is killed (its whole process group) past --run-timeout {}",
                secs(t.as_secs_f64())
            );
        }
        format!(
            "each run is killed (its whole process group) past {m} × its candidate's median run time, at least {f} (in the rounds after the first measured one, at the end of the budget if that comes first); a candidate's first run at the end of the budget (--budget {b}), or past {m} × the slowest run finished so far (at least {f}) if that is later",
            m = BOUND_MULTIPLE,
            f = secs(BOUND_FLOOR_S),
            b = secs(self.budget.as_secs_f64())
        )
    }

    /// The notes of the plan, with one on arguments that are not UTF-8.
    pub fn notes(&self) -> Vec<String> {
        let mut n = self.plan.notes.clone();
        n.extend(args::not_utf8_note(&self.command));
        n
    }
}

/// One candidate while the rounds go.
#[derive(Default)]
struct State {
    samples: Vec<f64>,
    runs: Vec<ChildRun>,
    failed: Option<String>,
    binding: Option<Binding>,
    /// Wall time of every run that exited with status 0, warm-up
    /// included: what its bound is a multiple of.
    finished: Vec<f64>,
    /// The bound of its last run started.
    bound: Option<RunBound>,
    /// Its last run was killed at its bound (`failed` says so).
    timed_out: bool,
}

/// The node of each CPU, when the machine has more than one node.
fn cpu_nodes(m: &MachineInfo) -> Option<BTreeMap<usize, usize>> {
    if m.numa_nodes.len() < 2 {
        return None;
    }
    let mut map = BTreeMap::new();
    for n in &m.numa_nodes {
        for c in n.cpus.iter() {
            map.insert(c, n.id);
        }
    }
    Some(map)
}

impl Experiment for Tune {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "your command under each placement the topology offers, ranked with intervals (cpuscope tune -- CMD)"
    }
    fn estimate_secs(&self, _m: &MachineInfo, _cpus: &CpuSet, _p: Profile) -> f64 {
        0.0
    }
    fn in_run(&self) -> bool {
        false
    }
    /// Under `run` there is no command to tune.
    fn run(
        &self,
        _ctx: &mut ExpCtx,
        _out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        Ok(())
    }
}

/// `cpuscope tune`'s [`Params`].
impl WithParams for Tune {
    type Params = Params;
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut Params,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        run_tune(ctx, p, out)
    }
}

fn run_tune(
    ctx: &mut ExpCtx,
    p: &Params,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let cands = &p.plan.candidates;
    if cands.is_empty() {
        bail!("no candidate placement planned");
    }
    let baseline = cands.iter().position(|c| c.baseline).unwrap_or(0);
    let mut st = bind_candidates(cands);
    let (nodes, numa_reason) = numa_sampling(p, ctx.machine);
    let mut race = Race {
        t0: Instant::now(),
        said: None,
        notes: Vec::new(),
    };
    let (rounds, mut stopped) = run_rounds(ctx, p, &mut st, nodes.as_ref(), &mut race);
    if (0..cands.len()).all(|i| st[i].failed.is_some()) {
        stopped = Stopped::AllFailed;
    }
    let samples: Vec<Vec<f64>> = st.iter().map(|s| s.samples.clone()).collect();
    let a = analyse(
        &samples,
        baseline,
        p.score.higher_is_better,
        p.resolution,
        1,
    );
    let method = format!(
        "{}; interleaved rounds in a random order (seed {}), {} warm-up run(s) each; {}",
        p.score.describe(),
        p.seed,
        p.warmup,
        INTERVAL_METHOD
    );
    for (i, c) in cands.iter().enumerate() {
        let s = &st[i];
        let data = candidate_data(p, c, s, &a, i, numa_reason.as_deref());
        out(candidate_record(p, c, s, &data, stopped, &method)?)?;
    }
    // Rounds in which something was measured.
    let rounds = rounds.min(st.iter().map(|s| s.samples.len()).max().unwrap_or(0));
    let end = Ending {
        rounds,
        stopped,
        notes: &race.notes,
    };
    out(verdict_record(p, cands, &st, &a, &end, &method)?)?;
    Ok(())
}

/// The rounds' clock and what they said on the way.
struct Race {
    t0: Instant,
    /// The kind of bound last stated on the progress lines.
    said: Option<BoundKind>,
    /// Notes for the verdict (a run cut at the end of the budget).
    notes: Vec<String>,
}

impl Race {
    /// Say on the progress line past what a run of `c` is killed, when the
    /// kind of `bound` is not the one last said.
    fn say_bound(&mut self, ctx: &mut ExpCtx, what: &str, c: &Candidate, bound: &RunBound) {
        if self.said != Some(bound.kind) {
            (ctx.step)(&format!(
                "{what}: {}: killed if it runs past {}: {}",
                c.label(),
                secs(bound.secs),
                bound.why
            ));
            self.said = Some(bound.kind);
        }
    }
}

/// What comes after one run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Go,
    /// Ctrl-C (or SIGTERM, SIGHUP): the round ends.
    Interrupted,
    /// The budget is spent: no further run.
    BudgetSpent,
}

/// The interleaved rounds, warm-up first, until the ranking is settled,
/// the budget is spent, `max_runs`, Ctrl-C or every candidate failed:
/// the measured rounds and why they stopped.
fn run_rounds(
    ctx: &mut ExpCtx,
    p: &Params,
    st: &mut [State],
    nodes: Option<&BTreeMap<usize, usize>>,
    race: &mut Race,
) -> (usize, Stopped) {
    let cands = &p.plan.candidates;
    let baseline = cands.iter().position(|c| c.baseline).unwrap_or(0);
    let mut rounds = 0usize;
    for round in 0..p.warmup + p.max_runs {
        let live: Vec<usize> = (0..cands.len())
            .filter(|&i| st[i].failed.is_none())
            .collect();
        if let Some(why) = round_gate(ctx, p, st, &live, rounds, race.t0) {
            return (rounds, why);
        }
        // The warm-up and the first measured round always run (there is
        // then something to show); later ones end with the budget.
        let gated = round > p.warmup;
        for i in round_order(&live, round as u64, p.seed) {
            if ctx.stop.load(Ordering::Relaxed) {
                break;
            }
            let left = p.budget.as_secs_f64() - race.t0.elapsed().as_secs_f64();
            let Some(bound) = run_bound(p, st, i, left, gated) else {
                return (rounds, Stopped::Budget);
            };
            match run_candidate(ctx, p, &cands[i], st, i, nodes, round, bound, race) {
                Next::Go => {}
                Next::Interrupted => break,
                Next::BudgetSpent => return (rounds, Stopped::Budget),
            }
        }
        if ctx.stop.load(Ordering::Relaxed) {
            return (rounds, Stopped::Interrupted);
        }
        if round < p.warmup {
            continue;
        }
        rounds += 1;
        if rounds >= p.min_runs && settled(p, st, baseline) {
            return (rounds, Stopped::Settled);
        }
    }
    (rounds, Stopped::MaxRuns)
}

/// `v` seconds in words: `10 s`, `2.5 s`, `0.125 s`.
fn secs(v: f64) -> String {
    if v >= 9.95 {
        format!("{v:.0} s")
    } else if v >= 1.0 {
        format!("{v:.1} s")
    } else {
        format!("{v:.3} s")
    }
}

/// The bound of the next run of candidate `i`, `left_s` seconds of the
/// budget left; `gated`: a round past the first measured one, which the
/// budget bounds too. `--run-timeout` when given. Else, with runs of its
/// own finished: [`BOUND_MULTIPLE`] × their median, at least
/// [`BOUND_FLOOR_S`]. Its first run (no median of its own): the end of the
/// budget, or [`BOUND_MULTIPLE`] × the slowest run finished so far (at
/// least the floor) when that is later, as a thread count or a placement
/// may be several times slower than the others. While no run has
/// finished: the end of the budget. None: the budget is spent where it is
/// the bound, so the run is not started.
fn run_bound(p: &Params, st: &[State], i: usize, left_s: f64, gated: bool) -> Option<RunBound> {
    if let Some(t) = p.run_timeout {
        return Some(RunBound {
            secs: t.as_secs_f64(),
            kind: BoundKind::RunTimeout,
            why: format!("--run-timeout {}", secs(t.as_secs_f64())),
        });
    }
    let end = format!(
        "the end of the time budget (--budget {})",
        secs(p.budget.as_secs_f64())
    );
    let budget = |why: String| {
        (left_s > 0.0).then_some(RunBound {
            secs: left_s,
            kind: BoundKind::Budget,
            why,
        })
    };
    let multiple = |x: f64| (BOUND_MULTIPLE * x).max(BOUND_FLOOR_S);
    let floor = secs(BOUND_FLOOR_S);
    let slowest = st
        .iter()
        .flat_map(|s| s.finished.iter().copied())
        .reduce(f64::max);
    match (median(&st[i].finished), slowest) {
        (Some(m), _) => {
            let why = format!(
                "{BOUND_MULTIPLE} × its median run time ({}), at least {floor}",
                secs(m)
            );
            if gated && left_s < multiple(m) {
                return budget(format!("{end}, before {why}"));
            }
            Some(RunBound {
                secs: multiple(m),
                kind: BoundKind::Median,
                why,
            })
        }
        (None, Some(x)) => {
            let why = format!(
                "{BOUND_MULTIPLE} × the slowest run finished so far ({}), at least {floor}",
                secs(x)
            );
            if left_s > multiple(x) {
                return budget(format!(
                    "{end}: its first run (no median of its own yet), later than {why}"
                ));
            }
            Some(RunBound {
                secs: multiple(x),
                kind: BoundKind::Slowest,
                why: format!(
                    "{why}: its first run (no median of its own yet), the budget nearly spent"
                ),
            })
        }
        (None, None) => budget(format!(
            "{end}: no run has finished yet, so there is no median run time to bound it by"
        )),
    }
}

/// How the rounds ended: how many were measured, why they stopped, and
/// the notes they left (a run cut at the end of the budget).
struct Ending<'a> {
    rounds: usize,
    stopped: Stopped,
    notes: &'a [String],
}

/// One state per candidate, bound up front: a candidate that cannot be
/// bound fails before the first round.
fn bind_candidates(cands: &[Candidate]) -> Vec<State> {
    let mut st: Vec<State> = cands.iter().map(|_| State::default()).collect();
    for (c, s) in cands.iter().zip(st.iter_mut()) {
        match Binding::new(c.cpus.as_ref(), c.policy.as_ref()) {
            Ok(b) => s.binding = Some(b),
            Err(e) => s.failed = Some(format!("cannot bind: {e:#}")),
        }
    }
    st
}

/// The CPU → node map the numa_maps sampling needs, and why there is none
/// (not asked for, or one node only).
fn numa_sampling(p: &Params, m: &MachineInfo) -> (Option<BTreeMap<usize, usize>>, Option<String>) {
    let nodes = if p.numa_maps { cpu_nodes(m) } else { None };
    let numa_reason = if !p.numa_maps {
        Some("not sampled (--no-numa-maps)".to_string())
    } else if nodes.is_none() {
        Some("one NUMA node: no memory is remote".to_string())
    } else {
        None
    };
    (nodes, numa_reason)
}

/// Why the next round must not start, if so: every candidate failed,
/// Ctrl-C, or the budget (never start a round expected to end past it, the
/// first measured round excepted, so that there is something to show).
fn round_gate(
    ctx: &ExpCtx,
    p: &Params,
    st: &[State],
    live: &[usize],
    rounds: usize,
    t0: Instant,
) -> Option<Stopped> {
    if live.is_empty() {
        return Some(Stopped::AllFailed);
    }
    if ctx.stop.load(Ordering::Relaxed) {
        return Some(Stopped::Interrupted);
    }
    let expect: f64 = live
        .iter()
        .map(|&i| {
            let w: Vec<f64> = st[i].runs.iter().map(|r| r.wall_s).collect();
            median(&w).unwrap_or(0.0)
        })
        .sum();
    if rounds >= 1 && t0.elapsed().as_secs_f64() + expect > p.budget.as_secs_f64() {
        return Some(Stopped::Budget);
    }
    None
}

/// How the progress lines name `round`: a warm-up round below `p.warmup`,
/// then the measured rounds.
fn round_label(p: &Params, round: usize) -> String {
    if round < p.warmup {
        format!("warm-up {}/{}", round + 1, p.warmup)
    } else {
        format!("round {}/{}", round - p.warmup + 1, p.max_runs)
    }
}

/// Runs candidate `c` (`st[i]`) once in `round` (a warm-up round below
/// `p.warmup`), killed past `bound`, and keeps its score, or marks it
/// failed (timed out at its bound, among other reasons).
#[allow(clippy::too_many_arguments)]
fn run_candidate(
    ctx: &mut ExpCtx,
    p: &Params,
    c: &Candidate,
    st: &mut [State],
    i: usize,
    nodes: Option<&BTreeMap<usize, usize>>,
    round: usize,
    bound: RunBound,
    race: &mut Race,
) -> Next {
    let warm = round < p.warmup;
    let what = round_label(p, round);
    let anything_finished = st.iter().any(|s| !s.finished.is_empty());
    let s = &mut st[i];
    let Some(binding) = s.binding.clone() else {
        return Next::Go;
    };
    race.say_bound(ctx, &what, c, &bound);
    let argv = p.argv_for(c);
    let env = p.env_for(c);
    let events = count_events();
    let spec = ChildSpec {
        env: &env,
        output: if p.show_output {
            Output::PassThrough
        } else {
            Output::Keep
        },
        counters: p.counters.then_some(&events[..]),
        cpu_nodes: nodes,
        timeout: Some(Duration::from_secs_f64(bound.secs.max(0.001))),
        ..ChildSpec::new(&argv, &binding)
    };
    let stamp = p.score.file_stamp();
    s.bound = Some(bound.clone());
    let run = run_once(&spec, ctx.stop);
    if run.interrupted {
        return Next::Interrupted;
    }
    if run.timed_out {
        let cut = format!(
            "killed after {} at its bound: {}",
            secs(run.wall_s),
            bound.why
        );
        if bound.kind == BoundKind::Budget && anything_finished {
            // The budget ran out under a candidate that runs: not its fault.
            (ctx.step)(&format!(
                "{what}: {}: {cut}; the run is discarded",
                c.label()
            ));
            race.notes.push(format!(
                "a run of {} was {cut}; it is discarded and the rounds stop there",
                c.label()
            ));
            return Next::BudgetSpent;
        }
        (ctx.step)(&format!("{what}: {}: timed out: {cut}", c.label()));
        s.timed_out = true;
        s.failed = Some(format!(
            "timed out after {}: {} {} was {cut}",
            secs(run.wall_s),
            if warm { "warm-up run" } else { "run" },
            s.samples.len() + 1
        ));
        return Next::Go;
    }
    if run.succeeded() {
        s.finished.push(run.wall_s);
    }
    keep_score(ctx, p, c, s, run, stamp.as_ref(), &what, warm);
    Next::Go
}

/// The score of a run that ended by itself: kept (measured rounds), or
/// why there is none (the candidate then fails).
#[allow(clippy::too_many_arguments)]
fn keep_score(
    ctx: &mut ExpCtx,
    p: &Params,
    c: &Candidate,
    s: &mut State,
    run: ChildRun,
    stamp: Option<&FileStamp>,
    what: &str,
    warm: bool,
) {
    if let Some(why) = run.failure() {
        (ctx.step)(&format!("{what}: {} failed: {why}", c.label()));
        s.failed = Some(format!(
            "{} {}: {why}",
            if warm { "warm-up run" } else { "run" },
            s.samples.len() + 1
        ));
        return;
    }
    match p.score.read(&run, stamp) {
        Ok(v) if v.is_finite() && v > 0.0 => {
            (ctx.step)(&format!(
                "{what}: {} {} {}",
                c.label(),
                fmt_num(v),
                p.score.unit
            ));
            if !warm {
                s.samples.push(v);
                s.runs.push(run);
            }
        }
        Ok(v) => {
            s.failed = Some(format!(
                "score {v} is not a positive number (ratios need positive scores)"
            ));
        }
        Err(why) => {
            (ctx.step)(&format!("{what}: {} failed: {why}", c.label()));
            s.failed = Some(why);
        }
    }
}

/// Whether the ranking is settled after a measured round (the sequential
/// test spends its level over the rounds from `min_runs` to `max_runs`).
fn settled(p: &Params, st: &[State], baseline: usize) -> bool {
    let samples: Vec<Vec<f64>> = st.iter().map(|s| s.samples.clone()).collect();
    let looks = p.max_runs + 1 - p.min_runs;
    let a = analyse(
        &samples,
        baseline,
        p.score.higher_is_better,
        p.resolution,
        looks,
    );
    a.settled
}

/// Everything the record of candidate `i` carries beyond its samples.
fn candidate_data(
    p: &Params,
    c: &Candidate,
    s: &State,
    a: &Analysis,
    i: usize,
    numa_reason: Option<&str>,
) -> CandidateData {
    CandidateData {
        label: c.label(),
        set: c.set.clone(),
        memory: c.memory.clone(),
        threads: c.threads,
        what: c.what.clone(),
        cpus: c.cpus.as_ref().map(|x| x.to_string()),
        policy: c.policy.as_ref().map(|x| x.to_string()),
        env: p.env_for(c),
        command_line: p.command_line(c),
        baseline: c.baseline,
        also: c.also.clone(),
        rank: a.order.iter().position(|&o| o == i).map(|r| r + 1),
        vs_baseline: a.vs_baseline[i].clone(),
        failed: s.failed.clone(),
        wall_s: s.runs.iter().map(|r| r.wall_s).collect(),
        counters: counter_medians(&s.runs, p.counters),
        numa: numa_share(&s.runs, numa_reason),
        bound: s.bound.clone(),
        timed_out: s.timed_out,
    }
}

/// The score record of one candidate: its samples, or why it has none.
fn candidate_record(
    p: &Params,
    c: &Candidate,
    s: &State,
    data: &CandidateData,
    stopped: Stopped,
    method: &str,
) -> Result<ResultRecord> {
    let mut rec = ResultRecord::of(SCORE, &p.score.unit, p.score.higher_is_better)
        .with_param("set", c.set.as_str())
        .with_param("memory", c.memory.as_str())
        .with_method(method, METHOD_VERSION);
    if let Some(t) = c.threads {
        rec = rec.with_param("threads", t as u64);
    }
    if s.samples.is_empty() {
        rec.unavailable_reason = Some(match &s.failed {
            // "timed out after N s: ..."
            Some(f) if s.timed_out => f.clone(),
            Some(f) => format!("failed: {f}"),
            None if stopped == Stopped::Interrupted => "interrupted before its first run".into(),
            None if stopped == Stopped::Budget && s.bound.is_none() => format!(
                "not run: the time budget (--budget {}) was spent before its first run",
                secs(p.budget.as_secs_f64())
            ),
            None => "no run finished".into(),
        });
    } else {
        rec = rec.with_samples(s.samples.clone());
        if let Some(f) = &s.failed {
            rec = rec.with_note(&format!("stopped after {} run(s): {f}", s.samples.len()));
        }
    }
    let counters = serde_json::to_value(&data.counters)?;
    Ok(rec
        .with_counters(counters)
        .with_data(serde_json::to_value(data)?))
}

fn verdict_record(
    p: &Params,
    cands: &[Candidate],
    st: &[State],
    a: &Analysis,
    end: &Ending,
    method: &str,
) -> Result<ResultRecord> {
    let (rounds, stopped) = (end.rounds, end.stopped);
    let label = |i: usize| cands[i].label();
    let baseline = cands.iter().position(|c| c.baseline).unwrap_or(0);
    let hib = p.score.higher_is_better;
    let (better, worse) = separated_from_baseline(a, cands, hib);
    let best = a.order.first().copied();
    let runner = a.order.get(1).copied();
    let text = verdict_text(a, cands, st, (&better, &worse), rounds);
    let data = VerdictData {
        kind: serde_json::to_value(a.kind)?
            .as_str()
            .unwrap_or_default()
            .to_string(),
        text,
        winner: (a.kind == VerdictKind::Winner)
            .then(|| best.map(label))
            .flatten(),
        best: best.map(label),
        runner_up: runner.map(label),
        best_vs_runner_up: a.top.clone(),
        winner_level: a.winner_level,
        better_than_baseline: better,
        worse_than_baseline: worse,
        ranking: a.order.iter().map(|&i| label(i)).collect(),
        rounds,
        warmup: p.warmup,
        stopped: Some(stopped),
        score: p.score.describe(),
        interval_method: INTERVAL_METHOD.into(),
        seed: p.seed,
        command: args::lossy_all(&p.command),
        command_line: args::shell_line(&p.command),
        run_bound: p.bound_rule(),
        k: p.plan.k,
        not_applicable: p.plan.not_applicable.clone(),
        notes: [p.notes(), end.notes.to_vec()].concat(),
        higher_is_better: hib,
        unit: p.score.unit.clone(),
    };
    let mut rec = ResultRecord::of(VERDICT, "ratio", hib).with_method(method, METHOD_VERSION);
    match best.and_then(|b| {
        if b == baseline {
            Some(1.0)
        } else {
            a.vs_baseline[b].as_ref().map(|r| r.ratio)
        }
    }) {
        Some(v) => {
            rec.value = Some(v);
            rec.repetitions = u32::try_from(rounds).unwrap_or(u32::MAX);
        }
        None => {
            rec.unavailable_reason = Some(data.text.clone());
        }
    }
    Ok(rec.with_data(serde_json::to_value(&data)?))
}

/// The candidates whose interval of the ratio to the baseline excludes 1:
/// (better, worse) labels, in planning order.
fn separated_from_baseline(
    a: &Analysis,
    cands: &[Candidate],
    hib: bool,
) -> (Vec<String>, Vec<String>) {
    let mut better = Vec::new();
    let mut worse = Vec::new();
    for (i, r) in a.vs_baseline.iter().enumerate() {
        if let Some(r) = r.as_ref().filter(|r| r.excludes_one()) {
            if (r.low > 1.0) == hib {
                better.push(cands[i].label());
            } else {
                worse.push(cands[i].label());
            }
        }
    }
    (better, worse)
}

/// The verdict in one sentence: the winner, no difference, no single
/// winner (with those better / worse than the baseline), or why there is
/// not enough to tell.
fn verdict_text(
    a: &Analysis,
    cands: &[Candidate],
    st: &[State],
    (better, worse): (&[String], &[String]),
    rounds: usize,
) -> String {
    let label = |i: usize| cands[i].label();
    let baseline = cands.iter().position(|c| c.baseline).unwrap_or(0);
    let best = a.order.first().copied();
    let runner = a.order.get(1).copied();
    let fmt_iv = |r: &RatioEstimate| {
        format!(
            "{} [{}, {}]",
            fmt_ratio(r.ratio),
            fmt_ratio(r.low),
            fmt_ratio(r.high)
        )
    };
    match (a.kind, best, runner) {
        (VerdictKind::Winner, Some(b), Some(r)) => {
            let vs = a.vs_baseline[b]
                .as_ref()
                .map(|x| format!("; against no binding {}", fmt_iv(x)))
                .unwrap_or_default();
            format!(
                "winner: {} (ratio to the runner-up {}: {} at {:.1}%{vs})",
                label(b),
                label(r),
                a.top.as_ref().map(fmt_iv).unwrap_or_default(),
                a.winner_level * 100.0
            )
        }
        (VerdictKind::NoneDistinguishable, _, _) => {
            "no placement is distinguishable from no binding: every 95% interval of the ratio to the baseline holds 1".to_string()
        }
        (VerdictKind::NoSingleWinner, Some(b), Some(r)) => {
            let mut s = format!(
                "no single winner: {} and {} are within noise of each other ({} at {:.1}%)",
                label(b),
                label(r),
                a.top.as_ref().map(fmt_iv).unwrap_or_default(),
                a.winner_level * 100.0
            );
            if !better.is_empty() {
                s.push_str(&format!("; better than no binding: {}", better.join(", ")));
            }
            if !worse.is_empty() {
                s.push_str(&format!("; worse than no binding: {}", worse.join(", ")));
            }
            s
        }
        _ => {
            if a.order.len() < 2 {
                "not enough to rank: fewer than two candidates have scores".to_string()
            } else if st.get(baseline).is_some_and(|s| s.samples.is_empty()) {
                "not enough to tell: the baseline (no binding) has no score".to_string()
            } else {
                format!(
                    "not enough runs to tell: with {rounds} run(s) per candidate the {:.0}% intervals are unbounded (more runs: --min-runs, --budget)",
                    LEVEL * 100.0
                )
            }
        }
    }
}

/// The typed view of a run's tune records: candidates (in planning order)
/// and the verdict.
pub struct TuneView {
    pub candidates: Vec<(ResultRecord, CandidateData)>,
    pub verdict: Option<(ResultRecord, VerdictData)>,
}

impl TuneView {
    /// None when the run has no tune records.
    pub fn of(run: &Run) -> Option<TuneView> {
        let candidates: Vec<(ResultRecord, CandidateData)> = run
            .records(SCORE)
            .map(|r| (r.clone(), r.data_as::<CandidateData>().unwrap_or_default()))
            .collect();
        let verdict = run
            .records(VERDICT)
            .next()
            .map(|r| (r.clone(), r.data_as::<VerdictData>().unwrap_or_default()));
        if candidates.is_empty() && verdict.is_none() {
            return None;
        }
        Some(TuneView {
            candidates,
            verdict,
        })
    }

    /// Candidates with a rank, best first, then the others in planning order.
    pub fn ranked(&self) -> Vec<&(ResultRecord, CandidateData)> {
        let mut v: Vec<&(ResultRecord, CandidateData)> = self.candidates.iter().collect();
        v.sort_by_key(|(_, d)| d.rank.unwrap_or(usize::MAX));
        v
    }
}

/// A plan and its command lines, for `--dry-run`, as JSON.
pub fn plan_json(p: &Params) -> serde_json::Value {
    json!({
        "command": args::lossy_all(&p.command),
        "command_line": args::shell_line(&p.command),
        "run_bound": p.bound_rule(),
        "k": p.plan.k,
        "score": p.score.describe(),
        "warmup": p.warmup,
        "min_runs": p.min_runs,
        "max_runs": p.max_runs,
        "budget_s": p.budget.as_secs_f64(),
        "seed": p.seed,
        "threads": p.plan.threads,
        "candidates": p.plan.candidates.iter().map(|c| json!({
            "label": c.label(),
            "set": c.set,
            "memory": c.memory,
            "threads": c.threads,
            "what": c.what,
            "cpus": c.cpus.as_ref().map(|x| x.to_string()),
            "policy": c.policy.as_ref().map(|x| x.to_string()),
            "baseline": c.baseline,
            "also": c.also,
            "command_line": p.command_line(c),
        })).collect::<Vec<_>>(),
        "not_applicable": p.plan.not_applicable,
        "notes": p.notes(),
    })
}

#[cfg(test)]
mod tests;

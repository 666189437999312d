//! Pairs of pinned threads, round after round: the protocol c2c measures
//! core-to-core latency with (docs/methods-c2c.md). A [`Plan`] (which pairs,
//! in which rounds of disjoint pairs run in parallel, how many samples of
//! how many round trips) is run on a [`Team`] pinned one thread per CPU:
//! each pair's two threads share one cache line on a page of the
//! initiator's node, the initiator times `round_trips` exchanges per sample
//! with the kernel's protocol ([`crate::kernels::c2c`]), the responder
//! answers; a round's pairs run together. Pacing cuts samples when rounds
//! run slower than planned; Ctrl-C and the deadline stop within one sample;
//! a pair keeps the samples it took and which of them its initiator was
//! switched out during. Passes are pooled per pair ([`merge_passes`]).
//! Which pairs to measure and what the figures mean is the experiment's
//! (`experiments/coherence/c2c`, which also reads /proc/stat before and
//! after); the steal time between two readings is [`StealTime::between`].

use crate::base::timer::Timer;
use crate::kernels::c2c::{self as k, Method};
use crate::placement::buffer::{Buffer, BufferOptions, Touch};
use crate::placement::team::Team;
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod stats;
pub use stats::*;

/// Fewest samples per pair that a slow machine's rounds are cut to.
pub const MIN_ADAPTED_SAMPLES: usize = 5;

/// How many budgets each method's first pass may take on a slow machine
/// before the deadline stops it, counted from that method's own start, so
/// that a first method slowed down cannot leave the next without its matrix
/// (later passes keep the caller's deadline).
pub const FIRST_PASS_SLACK: f64 = 10.0;

/// A c2c measurement plan.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// The CPUs measured (all requested ones, or a subset spread over the nodes).
    pub cpus: Vec<usize>,
    /// How many CPUs were asked for.
    pub requested_cpus: usize,
    #[serde(serialize_with = "ser_methods")]
    pub methods: Vec<Method>,
    /// (initiator, responder) CPU ids; initiator < responder.
    pub pairs: Vec<(usize, usize)>,
    /// Indices into `pairs`, one list per round.
    pub rounds: Vec<Vec<usize>>,
    pub round_trips: u64,
    /// Samples per pair in one pass.
    pub samples: usize,
    pub warmup: usize,
    /// Passes over the schedule; a pair's figures pool the samples of all passes.
    pub passes: usize,
    /// Estimated seconds for all methods and passes.
    pub est_secs: f64,
    pub budget_secs: f64,
    /// Every pair of `cpus` is measured.
    pub full_matrix: bool,
    /// What the planner reduced to fit the budget.
    pub notes: Vec<String>,
}

fn ser_methods<S: serde::Serializer>(m: &[Method], s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(m.len()))?;
    for x in m {
        seq.serialize_element(x.as_str())?;
    }
    seq.end()
}

impl Plan {
    /// Largest number of pairs in one round.
    pub fn max_round_width(&self) -> usize {
        self.rounds.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// Involuntary context switches of the calling thread so far (None when the
/// kernel does not report them).
fn involuntary_switches() -> Option<i64> {
    // SAFETY: getrusage fills a caller-provided struct; zeroed is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (rc == 0).then_some(ru.ru_nivcsw)
}

/// Per-round meeting point of a pair.
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    /// Address of the pair's page; FAILED when the initiator could not map it.
    line: AtomicU64,
    /// Set by the responder when it has answered every round trip.
    done: AtomicU64,
    /// Responder's involuntary switches during the pair, + 1 (0 = unknown).
    switches: AtomicU64,
}

const FAILED: u64 = 1;

/// What one pair of a round brings back.
struct PairResult {
    pair: usize,
    samples: Vec<f64>,
    /// Per sample: the initiator was switched out during it (empty when the
    /// kernel does not say).
    flags: Vec<bool>,
    /// Samples marked preempted (None when the kernel does not say).
    preempted: Option<usize>,
    /// Cut short by the deadline or Ctrl-C.
    cut: bool,
}

/// Measure `method` over the plan's rounds on a team pinned to the plan's
/// CPUs. Stops between rounds on `stop` or past `deadline`, keeping what
/// finished, and inside a round too: each pair stops after the sample
/// under way (a pair keeps the samples it took, at least one), so a machine
/// far slower than planned (emulated, oversubscribed) still stops near its
/// deadline and Ctrl-C within one sample. `progress(done, total)` is called
/// after each round.
pub fn run_matrix(
    plan: &Plan,
    method: Method,
    team: &mut Team,
    stop: &AtomicBool,
    deadline: Option<Instant>,
    keep_samples: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<MatrixRun> {
    let t0 = Instant::now();
    let cpus = team.cpus().to_vec();
    let index: BTreeMap<usize, usize> = cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let width = plan.max_round_width().max(1);
    let slots: Vec<Slot> = (0..width).map(|_| Slot::default()).collect();
    let timer = Timer::global();
    let rt = plan.round_trips;
    let mut pace = Pacing::new(plan, t0);
    let mut out = Vec::with_capacity(plan.pairs.len());
    let mut stopped = None;
    let mut done = 0;
    for (r, round) in plan.rounds.iter().enumerate() {
        pace.adapt(plan, r);
        let (samples, warmup) = (pace.samples, pace.warmup);
        let total_rt = (samples + warmup) as u64 * rt;
        if let Some(why) = stop_before_round(plan, r, stop, deadline, t0) {
            stopped = Some(why);
            break;
        }
        let roles = round_roles(plan, round, &index, cpus.len())?;
        reset_slots(&slots);
        let batches = Batches {
            method,
            rt,
            samples,
            warmup,
            deadline,
            stop,
        };
        let res = team.run_round(|ctx| -> PairOutcome {
            let Some((s, p, initiator)) = roles[ctx.index] else {
                return Ok(None);
            };
            let slot = &slots[s];
            if initiator {
                initiate(&batches, slot, ctx.cpu, plan.pairs[p], p, timer)
            } else {
                respond(method, slot, total_rt)
            }
        });
        // A team that lost a thread (panicked, ended, kept its partner
        // waiting past the team's bound; Ctrl-C while a pair hung): the
        // rounds stop here with the reason, the pairs measured are kept.
        let res = match res {
            Ok(res) => res,
            Err(e) => {
                stopped = Some(round_failed(plan, r, &e));
                break;
            }
        };
        let cut = collect_round(plan, round, &slots, keep_samples, res.results, &mut out)?;
        done = r + 1;
        progress(done, plan.rounds.len());
        if cut {
            stopped = Some(cut_reason(plan, done, stop, t0));
            break;
        }
    }
    Ok(MatrixRun {
        method,
        cpus,
        pairs: out,
        rounds_done: done,
        rounds_planned: plan.rounds.len(),
        elapsed_s: t0.elapsed().as_secs_f64(),
        stopped,
        adapted: pace.adapted,
        steal: None,
    })
}

/// The initiator of pair `p` (CPUs `pair`): maps the pair's page on its
/// own CPU, times the batches and checks the line(s) afterwards.
fn initiate(
    batches: &Batches,
    slot: &Slot,
    cpu: usize,
    pair: (usize, usize),
    p: usize,
    timer: &Timer,
) -> PairOutcome {
    let (method, rt, warmup) = (batches.method, batches.rt, batches.warmup);
    let buf = pair_page(slot, cpu)?;
    let base = buf.as_ptr();
    // SAFETY: the page is mapped, zeroed, page-aligned and lives
    // until the responder reported done (`release_page`).
    let (a, b) = unsafe { pair_lines(base) };
    slot.line.store(base as u64, Ordering::Release);
    let (seq, v, mut flags, preempted, cut) = batches.ping((a, b), timer);
    // The protocol's check: the line(s) hold what the round trips
    // made. A pair cut short first waits for the responder's last
    // answer, then writes ABORT for it (`k::abort`).
    let ran = (warmup + v.len()) as u64 * rt;
    let check = line_check(method, (a, b), slot, seq, ran, cut);
    release_page(buf, slot);
    if let Err((got_a, want)) = check {
        return Err(format!(
            "ping-pong check failed on CPUs {},{}: line holds {got_a}, expected {want}",
            pair.0, pair.1
        ));
    }
    if preempted.is_none() {
        flags.clear();
    }
    Ok(Some(PairResult {
        pair: p,
        samples: v,
        flags,
        preempted,
        cut,
    }))
}

/// Why the rounds stopped at round `r` when the team failed it.
fn round_failed(plan: &Plan, r: usize, e: &anyhow::Error) -> String {
    format!(
        "round {} of {} failed: {}",
        r + 1,
        plan.rounds.len(),
        format!("{e:#}").replace('\n', " ")
    )
}

/// What an initiator times: `warmup` then up to `samples` batches of `rt`
/// round trips, stopping between samples (never before the first) past
/// `deadline` or on `stop`.
struct Batches<'a> {
    method: Method,
    rt: u64,
    samples: usize,
    warmup: usize,
    deadline: Option<Instant>,
    stop: &'a AtomicBool,
}

impl Batches<'_> {
    fn ping(&self, (a, b): (&AtomicU64, &AtomicU64), timer: &Timer) -> Pinged {
        let (method, rt) = (self.method, self.rt);
        let mut v = Vec::with_capacity(self.samples);
        let mut flags: Vec<bool> = Vec::with_capacity(self.samples);
        let mut seq = 0u64;
        for _ in 0..self.warmup {
            seq = k::ping(method, a, b, seq, rt);
        }
        let mut preempted = Some(0usize);
        let mut cut = false;
        for i in 0..self.samples {
            let late = self.deadline.is_some_and(|d| Instant::now() > d);
            if i > 0 && (late || self.stop.load(Ordering::Relaxed)) {
                cut = true;
                break;
            }
            let before = involuntary_switches();
            let t0 = timer.now();
            seq = k::ping(method, a, b, seq, rt);
            let t1 = timer.now();
            v.push(timer.ns(t0, t1) / rt as f64 / 2.0);
            match (before, involuntary_switches(), preempted.as_mut()) {
                (Some(x), Some(y), Some(p)) if y > x => {
                    *p += 1;
                    flags.push(true);
                }
                (Some(_), Some(_), _) => flags.push(false),
                _ => preempted = None,
            }
        }
        (seq, v, flags, preempted, cut)
    }
}

/// The initiator's page of one pair (two lines), mapped and touched on
/// its own CPU; on failure the slot says FAILED so the responder returns.
fn pair_page(slot: &Slot, cpu: usize) -> std::result::Result<Buffer, String> {
    match Buffer::new(
        4096,
        &BufferOptions {
            touch: Touch::Here,
            ..Default::default()
        },
    ) {
        Ok(b) => Ok(b),
        Err(e) => {
            slot.line.store(FAILED, Ordering::Release);
            Err(format!("CPU {cpu}: {e:#}"))
        }
    }
}

/// How long an initiator waits for its responder's `done` before it lets
/// their page go.
const RELEASE_WAIT: Duration = Duration::from_secs(1);

/// Unmap the pair's page only once the responder said it is done with it.
/// After a cut (Ctrl-C, the deadline) the responder answers on the page
/// until it sees ABORT, and the wait for its `done` in [`line_check`] gives
/// up whenever the team abandons the round (Ctrl-C, the team's watchdog, a
/// member gone): unmapping then made the responder's next compare-and-swap
/// fault (SIGSEGV, seen as a c2c killed by Ctrl-C with nothing printed).
/// Wait up to [`RELEASE_WAIT`] for `done`, without giving up on a stop;
/// past it (a hung responder), leave the page mapped for the process's life
/// (4 KiB) rather than fault it. A responder that never reached the page
/// says `done` too ([`respond`]).
fn release_page(buf: Buffer, slot: &Slot) {
    let t0 = Instant::now();
    while slot.done.load(Ordering::Acquire) == 0 {
        if t0.elapsed() > RELEASE_WAIT {
            std::mem::forget(buf);
            return;
        }
        std::thread::yield_now();
    }
    drop(buf);
}

/// The protocol's check after the timed samples: the line(s) hold what the
/// round trips made. A pair cut short first waits for the responder's last
/// answer, then writes ABORT for it (`k::abort`). Err((held, expected)).
fn line_check(
    method: Method,
    (a, b): (&AtomicU64, &AtomicU64),
    slot: &Slot,
    seq: u64,
    ran: u64,
    cut: bool,
) -> std::result::Result<(), (u64, u64)> {
    let want = k::expected_line_value(method, seq);
    let got_a = if cut {
        let held = k::abort(method, a, seq, Duration::from_secs(10));
        k::wait_nonzero(&slot.done);
        held
    } else {
        k::wait_nonzero(&slot.done);
        a.load(Ordering::Acquire)
    };
    let ok = got_a == want
        && seq == 2 * ran
        && (method == Method::Cas || b.load(Ordering::Acquire) == want);
    if ok {
        Ok(())
    } else {
        Err((got_a, want))
    }
}

/// The responder of one pair: waits for the initiator's page, answers
/// every round trip (`k::pong`), counts its involuntary switches and says
/// it is done.
fn respond(method: Method, slot: &Slot, total_rt: u64) -> PairOutcome {
    let addr = k::wait_nonzero(&slot.line);
    // FAILED: the initiator has no page; 0: the round was given up. Either
    // way this side never touches the page: say so, so that the initiator
    // need not wait for it (`release_page`).
    if addr == FAILED || addr == 0 {
        slot.done.store(1, Ordering::Release);
        return Ok(None);
    }
    let base = addr as *const u8;
    // SAFETY: the initiator keeps the page mapped until `done`.
    let (a, b) = unsafe { pair_lines(base) };
    let before = involuntary_switches();
    let seq = k::pong(method, a, b, 0, total_rt);
    if let (Some(x), Some(y)) = (before, involuntary_switches()) {
        slot.switches
            .store((y - x).max(0) as u64 + 1, Ordering::Relaxed);
    }
    slot.done.store(1, Ordering::Release);
    std::hint::black_box(seq);
    Ok(None)
}

/// Samples and warm-up batches per pair as the rounds go: the plan's, cut
/// when rounds run slower than planned.
struct Pacing {
    t0: Instant,
    /// This method's share of the budget for one pass: past it, later
    /// rounds take fewer samples per pair (never fewer than
    /// MIN_ADAPTED_SAMPLES), so that a machine slower than the estimate (an
    /// oversubscribed or emulated one) still gets every pair measured
    /// instead of hitting the deadline.
    share: f64,
    samples: usize,
    warmup: usize,
    /// What was cut, and why (notes of the matrix record).
    adapted: Vec<String>,
}

impl Pacing {
    fn new(plan: &Plan, t0: Instant) -> Pacing {
        Pacing {
            t0,
            share: plan.budget_secs / (plan.methods.len().max(1) * plan.passes.max(1)) as f64,
            samples: plan.samples,
            warmup: plan.warmup,
            adapted: Vec::new(),
        }
    }

    /// Before round `r`: fewer samples when the rounds so far, at their
    /// pace, would run the remaining ones well past the share.
    fn adapt(&mut self, plan: &Plan, r: usize) {
        let (share, samples) = (self.share, self.samples);
        if r > 0 && samples > MIN_ADAPTED_SAMPLES {
            let spent = self.t0.elapsed().as_secs_f64();
            let per_round = spent / r as f64;
            let left = plan.rounds.len() - r;
            let room = share - spent;
            if per_round * left as f64 > room.max(0.0) * 1.25 {
                let scale = (room.max(0.0) / (per_round * left as f64)).clamp(0.0, 1.0);
                let s_new = ((samples as f64 * scale).floor() as usize).max(MIN_ADAPTED_SAMPLES);
                if s_new < samples {
                    self.adapted.push(format!(
                        "samples per pair cut from {samples} to {s_new} after round {r} of {}: rounds took {:.2} s each, the plan assumed {:.2} s (a slower or busier machine than estimated)",
                        plan.rounds.len(),
                        per_round,
                        share / plan.rounds.len().max(1) as f64
                    ));
                    self.samples = s_new;
                    self.warmup = self.warmup.min(self.samples).max(1);
                }
            }
        }
    }
}

/// Why round `r` must not start, if so: Ctrl-C or the deadline.
fn stop_before_round(
    plan: &Plan,
    r: usize,
    stop: &AtomicBool,
    deadline: Option<Instant>,
    t0: Instant,
) -> Option<String> {
    if stop.load(Ordering::Relaxed) {
        return Some(format!(
            "interrupted after {r} of {} rounds",
            plan.rounds.len()
        ));
    }
    if let Some(d) = deadline {
        if Instant::now() > d {
            return Some(format!(
                "stopped at the time limit after {r} of {} rounds ({:.1} s)",
                plan.rounds.len(),
                t0.elapsed().as_secs_f64()
            ));
        }
    }
    None
}

/// Roles of the `n` team threads in `round`: team index -> role (`index`
/// maps a CPU id to its team index).
fn round_roles(
    plan: &Plan,
    round: &[usize],
    index: &BTreeMap<usize, usize>,
    n: usize,
) -> Result<Vec<Role>> {
    let mut roles: Vec<Role> = vec![None; n];
    for (s, &p) in round.iter().enumerate() {
        let (a, b) = plan.pairs[p];
        let (Some(&ia), Some(&ib)) = (index.get(&a), index.get(&b)) else {
            bail!("pair ({a},{b}) names a CPU outside the team");
        };
        roles[ia] = Some((s, p, true));
        roles[ib] = Some((s, p, false));
    }
    Ok(roles)
}

/// Clears the meeting points before a round.
fn reset_slots(slots: &[Slot]) {
    for s in slots {
        s.line.store(0, Ordering::Relaxed);
        s.done.store(0, Ordering::Relaxed);
        s.switches.store(0, Ordering::Relaxed);
    }
}

/// The statistics of each pair `round` measured, with the responder's
/// switches (from its slot), appended to `out`. Whether a pair was cut
/// short; an error when one failed.
fn collect_round(
    plan: &Plan,
    round: &[usize],
    slots: &[Slot],
    keep_samples: bool,
    results: Vec<PairOutcome>,
    out: &mut Vec<PairStats>,
) -> Result<bool> {
    let mut cut = false;
    for r in results {
        match r {
            Ok(Some(PairResult {
                pair: p,
                samples: v,
                flags,
                preempted: pre,
                cut: c,
            })) => {
                cut |= c;
                let (a, b) = plan.pairs[p];
                let slot = round.iter().position(|&q| q == p).map(|s| &slots[s]);
                if let Some(mut ps) = pair_stats_marked(a, b, v, flags, keep_samples) {
                    ps.preempted_samples = pre;
                    ps.responder_switches = slot
                        .map(|s| s.switches.load(Ordering::Relaxed))
                        .filter(|&x| x > 0)
                        .map(|x| x as i64 - 1);
                    out.push(ps);
                }
            }
            Ok(None) => {}
            Err(e) => bail!("{e}"),
        }
    }
    Ok(cut)
}

/// Why the rounds stopped inside round `done` (a pair cut short).
fn cut_reason(plan: &Plan, done: usize, stop: &AtomicBool, t0: Instant) -> String {
    format!(
        "{} in round {done} of {} ({:.1} s): its pairs kept the samples they had",
        if stop.load(Ordering::Relaxed) {
            "interrupted"
        } else {
            "stopped at the time limit"
        },
        plan.rounds.len(),
        t0.elapsed().as_secs_f64()
    )
}

/// One pair's passes pooled so far.
struct PooledPair {
    samples: Vec<f64>,
    preempted: Option<usize>,
    responder_switches: Option<i64>,
    pass_medians: Vec<f64>,
    /// Per sample: the initiator was switched out during it.
    flags: Vec<bool>,
    clean_pass_medians: Vec<f64>,
}

impl PooledPair {
    fn new() -> PooledPair {
        PooledPair {
            samples: Vec::new(),
            preempted: Some(0),
            responder_switches: Some(0),
            pass_medians: Vec::new(),
            flags: Vec::new(),
            clean_pass_medians: Vec::new(),
        }
    }

    /// Adds one pass's figures of the pair.
    fn add(&mut self, p: &PairStats) {
        // Flags stay parallel to the samples: a pass without them
        // (kernel silent) marks its samples clean.
        self.flags.resize(self.samples.len(), false);
        if p.sample_preempted.len() == p.samples.len() {
            self.flags.extend_from_slice(&p.sample_preempted);
        } else {
            self.flags
                .resize(self.samples.len() + p.samples.len(), false);
        }
        self.samples.extend_from_slice(&p.samples);
        self.pass_medians.extend_from_slice(&p.pass_medians);
        self.clean_pass_medians
            .extend_from_slice(&p.clean_pass_medians);
        self.preempted = match (self.preempted, p.preempted_samples) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        self.responder_switches = match (self.responder_switches, p.responder_switches) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    /// The pair's statistics over all its pooled samples.
    fn into_stats(self, (a, b): (usize, usize), keep_samples: bool) -> Option<PairStats> {
        let mut ps = pair_stats_marked(a, b, self.samples, self.flags, keep_samples)?;
        ps.preempted_samples = self.preempted;
        ps.responder_switches = self.responder_switches;
        ps.pass_medians = self.pass_medians;
        ps.clean_pass_medians = self.clean_pass_medians;
        Some(ps)
    }
}

/// Pool the passes of one method: samples of a pair are concatenated and
/// its statistics recomputed; rounds and time add up; the first stop reason
/// is kept.
pub fn merge_passes(runs: Vec<MatrixRun>, keep_samples: bool) -> Option<MatrixRun> {
    let mut it = runs.into_iter();
    let first = it.next()?;
    let mut acc: BTreeMap<(usize, usize), PooledPair> = BTreeMap::new();
    let mut order: Vec<(usize, usize)> = Vec::new();
    let (method, cpus) = (first.method, first.cpus.clone());
    let (mut done, mut planned, mut elapsed, mut stopped) = (0, 0, 0.0, None);
    let mut adapted: Vec<String> = Vec::new();
    for run in std::iter::once(first).chain(it) {
        adapted.extend(run.adapted.iter().cloned());
        done += run.rounds_done;
        planned += run.rounds_planned;
        elapsed += run.elapsed_s;
        if stopped.is_none() {
            stopped = run.stopped.clone();
        }
        for p in run.pairs {
            let key = (p.initiator, p.responder);
            let e = acc.entry(key).or_insert_with(|| {
                order.push(key);
                PooledPair::new()
            });
            e.add(&p);
        }
    }
    let pairs = order
        .into_iter()
        .filter_map(|k| acc.remove(&k)?.into_stats(k, keep_samples))
        .collect();
    Some(MatrixRun {
        method,
        cpus,
        pairs,
        rounds_done: done,
        rounds_planned: planned,
        elapsed_s: elapsed,
        stopped,
        adapted,
        steal: None,
    })
}

/// Measure every method of the plan over all its passes (methods alternate
/// within a pass, so they see the same machine state); one pooled run per
/// method. Stops between rounds on `stop` or past `deadline`.
pub fn run_plan(
    plan: &Plan,
    team: &mut Team,
    stop: &AtomicBool,
    deadline: Option<Instant>,
    keep_samples: bool,
    progress: &mut dyn FnMut(Method, usize, usize, usize),
) -> Result<Vec<MatrixRun>> {
    let mut per: Vec<Vec<MatrixRun>> = plan.methods.iter().map(|_| Vec::new()).collect();
    let t0 = Instant::now();
    let mut skipped_passes = None;
    // A method of the first pass cut at its own limit: no later pass.
    let mut first_pass_cut = false;
    'passes: for pass in 0..plan.passes.max(1) {
        if first_pass_cut {
            break;
        }
        // A later pass only repeats pairs already measured: skip it when the
        // passes so far took more than their share of the budget.
        let spent = t0.elapsed().as_secs_f64();
        if pass > 0 && spent > plan.budget_secs * pass as f64 / plan.passes as f64 * 1.25 {
            skipped_passes = Some(format!(
                "{} of {} passes run: the first took {:.1} s of a {:.1} s budget",
                pass, plan.passes, spent, plan.budget_secs
            ));
            break;
        }
        for (mi, &method) in plan.methods.iter().enumerate() {
            let mut prog = |d: usize, t: usize| progress(method, pass, d, t);
            // The first pass gives each method's matrix its every pair: on a
            // machine slower than planned (samples already cut to the fewest)
            // each method may run to FIRST_PASS_SLACK budgets from its own
            // start before the stop.
            let limit = if pass == 0 {
                let own = Instant::now()
                    + std::time::Duration::from_secs_f64(plan.budget_secs * FIRST_PASS_SLACK);
                deadline.map(|d| d.max(own))
            } else {
                deadline
            };
            let mut run = run_matrix(plan, method, team, stop, limit, true, &mut prog)?;
            if let Some(why) = &run.stopped {
                run.stopped = Some(format!("{why}, in pass {} of {}", pass + 1, plan.passes));
            }
            let stopped = run.stopped.is_some();
            per[mi].push(run);
            if stopped {
                // Ctrl-C or a later pass past the deadline stops every
                // method; a first pass cut at its own limit stops only
                // itself (the next method has its own) and the passes after.
                if pass > 0 || stop.load(Ordering::Relaxed) {
                    break 'passes;
                }
                first_pass_cut = true;
            }
        }
    }
    let mut out = Vec::new();
    for (mi, runs) in per.into_iter().enumerate() {
        match merge_passes(runs, keep_samples) {
            Some(mut r) => {
                r.adapted.extend(skipped_passes.iter().cloned());
                out.push(r)
            }
            None => out.push(MatrixRun {
                method: plan.methods[mi],
                cpus: team.cpus().to_vec(),
                pairs: Vec::new(),
                rounds_done: 0,
                rounds_planned: plan.rounds.len() * plan.passes,
                elapsed_s: 0.0,
                stopped: Some("not started: an earlier method was stopped".into()),
                adapted: Vec::new(),
                steal: None,
            }),
        }
    }
    Ok(out)
}

type PairOutcome = std::result::Result<Option<PairResult>, String>;

/// The batches' outcome: the sequence reached, ns per one-way trip per
/// sample, per sample whether the initiator was switched out, how many
/// were (None when the kernel does not say), whether the batches were cut.
type Pinged = (u64, Vec<f64>, Vec<bool>, Option<usize>, bool);

/// The two lines of a pair's page: the first and the one at
/// `k::SECOND_LINE_OFFSET`.
///
/// # Safety
/// `base` must point to a mapped, page-aligned page that stays mapped for
/// `'a`.
unsafe fn pair_lines<'a>(base: *const u8) -> (&'a AtomicU64, &'a AtomicU64) {
    // SAFETY: the caller's promise; both offsets lie inside the page and
    // are 8-byte aligned.
    unsafe {
        (
            &*(base as *const AtomicU64),
            &*(base.add(k::SECOND_LINE_OFFSET) as *const AtomicU64),
        )
    }
}

/// A thread's part in a round: (slot, pair index, initiator?).
type Role = Option<(usize, usize, bool)>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.25), 2.0);
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 1.0), 5.0);
    }
}

//! Repetition policy: calibrate, warm up, repeat, stop.
//!
//! Guarantees:
//! - The measured closure is called as `f(iters)` and runs `iters` inner
//!   iterations of its kernel; the harness reads the clock right before and
//!   right after the call and records ns per inner iteration. `iters` is
//!   calibrated (unless fixed by the policy) so that one sample lasts at least
//!   `min_sample` (10 ms by default), far above the timer's resolution and
//!   overhead (both recorded in [`TimerInfo`]).
//! - Nothing is allocated or printed between the two clock reads: the sample
//!   vector is allocated for `max_reps` before the first sample, and the value
//!   the closure returns goes through `black_box` so the kernel cannot be
//!   optimised away.
//! - Order: calibration calls, then warm-up (a count of calls or a duration),
//!   then samples until at least `min_reps` AND (the time budget is spent OR
//!   the coefficient of variation is at or below `target_cv`), and never more
//!   than `max_reps`. Why it stopped is recorded in [`StopReason`].
//! - The stop flag (set by a Ctrl-C handler) is checked between samples, never
//!   inside one. Stopping before any sample gives the [`Interrupted`] error;
//!   after some samples, the partial result with `StopReason::Interrupted`.
//! - [`measure_team`] does the same for a [`Team`]: each sample is one round,
//!   released by the spin barrier; it records the team time (release to last
//!   finish) and each thread's own time.
//! - [`measure_bracketed`] brackets every sample with a short reference call
//!   before and after it, for per-sample ratios (FLOPs per cycle).

use crate::base::timer::{Tick, Timer, TimerInfo};
use crate::base::Stats;
use crate::placement::team::{Team, ThreadCtx};
use anyhow::{bail, Result};
use serde::Serialize;
use std::fmt;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long to warm up before sampling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// This many calls (at the calibrated `iters`).
    Reps(usize),
    /// Calls until this much time has passed.
    Time(Duration),
}

/// When to stop repeating.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Policy {
    pub warmup: Warmup,
    /// Fewest samples.
    pub min_reps: usize,
    /// Most samples (the sample vector is pre-allocated to this size).
    pub max_reps: usize,
    /// Time for the sampling phase, after calibration and warm-up.
    pub time_budget: Duration,
    /// Stop early once CV (stddev/mean) is at or below this; None: never.
    pub target_cv: Option<f64>,
    /// Shortest acceptable sample; `iters` is calibrated to reach it.
    pub min_sample: Duration,
    /// Fixed inner iteration count (no calibration).
    pub iters: Option<u64>,
    /// Upper bound for calibrated `iters`.
    pub max_iters: u64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            warmup: Warmup::Time(Duration::from_millis(50)),
            min_reps: 5,
            max_reps: 1000,
            time_budget: Duration::from_secs(1),
            target_cv: Some(0.01),
            min_sample: Duration::from_millis(10),
            iters: None,
            max_iters: 1 << 40,
        }
    }
}

impl Policy {
    /// A short policy for smoke runs and tests: 2 ms samples, 3..20 reps,
    /// 50 ms budget, 5 ms warm-up.
    pub fn quick() -> Policy {
        Policy {
            warmup: Warmup::Time(Duration::from_millis(5)),
            min_reps: 3,
            max_reps: 20,
            time_budget: Duration::from_millis(50),
            target_cv: Some(0.02),
            min_sample: Duration::from_millis(2),
            iters: None,
            max_iters: 1 << 40,
        }
    }

    fn check(&self) -> Result<()> {
        if self.min_reps == 0 {
            bail!("bad repetition policy: min_reps must be at least 1");
        }
        if self.max_reps < self.min_reps {
            bail!(
                "bad repetition policy: max_reps ({}) is below min_reps ({})",
                self.max_reps,
                self.min_reps
            );
        }
        if self.max_reps > 10_000_000 {
            bail!(
                "bad repetition policy: max_reps {} is too large",
                self.max_reps
            );
        }
        if let Some(cv) = self.target_cv {
            if !(cv.is_finite() && cv >= 0.0) {
                bail!("bad repetition policy: target CV {cv} is not a non-negative number");
            }
        }
        if self.iters == Some(0) || self.max_iters == 0 {
            bail!("bad repetition policy: inner iterations must be at least 1");
        }
        Ok(())
    }
}

/// Why sampling stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The CV reached the target after min_reps.
    TargetCv,
    /// The time budget was spent after min_reps.
    TimeBudget,
    /// max_reps samples taken.
    MaxReps,
    /// The stop flag was set.
    Interrupted,
}

/// The stop flag was set before any sample was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interrupted before the first sample")
    }
}

impl std::error::Error for Interrupted {}

/// Result of [`measure`].
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// Inner iterations per sample.
    pub iters: u64,
    /// One entry per sample: ns per inner iteration.
    pub samples: Vec<f64>,
    pub stats: Stats,
    /// Samples taken (= samples.len()).
    pub reps: usize,
    /// Calls made to calibrate `iters` (not in the samples).
    pub calibration_calls: usize,
    /// Warm-up calls (not in the samples).
    pub warmup_calls: usize,
    /// Wall time of the sampling phase, ns.
    pub total_ns: f64,
    pub stop: StopReason,
    pub timer: TimerInfo,
    /// Samples during which the thread was involuntarily switched out
    /// (getrusage RUSAGE_THREAD ru_nivcsw changed): the machine was busy.
    /// None when the kernel does not report it.
    pub preempted: Option<usize>,
}

/// Involuntary context switches of the calling thread so far.
fn involuntary_switches() -> Option<i64> {
    // SAFETY: getrusage fills a caller-provided struct; zeroed is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (rc == 0).then_some(ru.ru_nivcsw)
}

/// Next calibration step: aim 20% past `min_ns`, growing `iters` at least
/// 2x and at most 1000x, never past `max_iters`.
fn grow_iters(iters: u64, t: f64, min_ns: f64, max_iters: u64) -> u64 {
    let factor = if t > 0.0 {
        (min_ns * 1.2 / t).clamp(2.0, 1000.0)
    } else {
        1000.0
    };
    ((iters as f64 * factor).ceil() as u64).min(max_iters)
}

/// Counts samples during which the thread was switched out involuntarily;
/// None once the kernel fails to report it.
struct Preemptions(Option<usize>);

impl Preemptions {
    fn new() -> Self {
        Preemptions(Some(0))
    }
    /// Call before a sample: the switch count now.
    fn before(&self) -> Option<i64> {
        involuntary_switches()
    }
    /// Call after the sample with what [`before`](Self::before) returned.
    fn after(&mut self, before: Option<i64>) {
        match (before, involuntary_switches(), self.0.as_mut()) {
            (Some(a), Some(b), Some(p)) if b > a => *p += 1,
            (Some(_), Some(_), _) => {}
            _ => self.0 = None,
        }
    }
}

impl Measurement {
    /// A note for the result when samples were disturbed by preemption.
    pub fn preemption_note(&self) -> Option<String> {
        match self.preempted {
            Some(p) if p > 0 => Some(format!(
                "{p} of {} samples were preempted (involuntary context switches): the machine was busy, figures may be low",
                self.reps
            )),
            _ => None,
        }
    }
}

/// Result of [`measure_team`].
#[derive(Clone, Debug, Serialize)]
pub struct TeamMeasurement<R> {
    /// Inner iterations per thread per round.
    pub iters: u64,
    /// CPUs of the team, in order.
    pub cpus: Vec<usize>,
    /// One entry per round: team time (release to last finish) per inner iteration, ns.
    pub samples: Vec<f64>,
    pub stats: Stats,
    /// Per thread, one entry per round: the thread's own time per inner iteration, ns.
    pub thread_samples: Vec<Vec<f64>>,
    pub thread_stats: Vec<Stats>,
    /// Per round: the latest any thread saw the release, ns.
    pub max_start_skew_ns: Vec<f64>,
    pub reps: usize,
    pub calibration_calls: usize,
    pub warmup_calls: usize,
    pub total_ns: f64,
    pub stop: StopReason,
    pub timer: TimerInfo,
    /// Results of the last sampled round, per thread.
    #[serde(skip)]
    pub last_results: Vec<R>,
    /// Sampled rounds during which at least one thread was switched out
    /// involuntarily (getrusage RUSAGE_THREAD ru_nivcsw, read by each thread
    /// outside the timed region); counted by [`measure_team_inline`] only
    /// (None elsewhere, or when the kernel does not report it).
    pub preempted: Option<usize>,
}

impl<R> TeamMeasurement<R> {
    /// A note for the result when rounds were disturbed by preemption.
    pub fn preemption_note(&self) -> Option<String> {
        match self.preempted {
            Some(p) if p > 0 => Some(format!(
                "{p} of {} rounds had a thread switched out (involuntary context switches): the machine was busy, figures may be low",
                self.reps
            )),
            _ => None,
        }
    }
}

/// Phase a sample is taken in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Calibrate,
    Warmup,
    Sample,
}

struct Driven {
    iters: u64,
    samples: Vec<f64>,
    calibration_calls: usize,
    warmup_calls: usize,
    total_ns: f64,
    stop: StopReason,
}

/// Running mean and variance (Welford), no allocation.
#[derive(Default)]
struct Running {
    n: usize,
    mean: f64,
    m2: f64,
}

impl Running {
    fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    fn cv(&self) -> f64 {
        if self.n < 2 || self.mean == 0.0 {
            return f64::INFINITY;
        }
        (self.m2 / (self.n - 1) as f64).sqrt() / self.mean.abs()
    }
}

/// The repetition loop shared by [`measure`] and [`measure_team`].
/// `sample(iters, phase)` runs one timed call and returns its elapsed ns.
fn drive<S>(policy: &Policy, stop: &AtomicBool, mut sample: S) -> Result<Driven>
where
    S: FnMut(u64, Phase) -> Result<f64>,
{
    policy.check()?;
    let interrupted = || stop.load(Ordering::Relaxed);
    let min_ns = policy.min_sample.as_nanos() as f64;

    // Calibrate iters.
    let mut calibration_calls = 0;
    let iters = match policy.iters {
        Some(n) => n,
        None => find_iters(min_ns, policy.max_iters, stop, |iters| {
            calibration_calls += 1;
            sample(iters, Phase::Calibrate)
        })?,
    };

    // Warm up.
    let mut warmup_calls = 0;
    match policy.warmup {
        Warmup::Reps(n) => {
            for _ in 0..n {
                if interrupted() {
                    return Err(Interrupted.into());
                }
                sample(iters, Phase::Warmup)?;
                warmup_calls += 1;
            }
        }
        Warmup::Time(d) => {
            let t0 = Instant::now();
            while t0.elapsed() < d {
                if interrupted() {
                    return Err(Interrupted.into());
                }
                sample(iters, Phase::Warmup)?;
                warmup_calls += 1;
            }
        }
    }

    // Sample.
    let mut samples = Vec::with_capacity(policy.max_reps);
    let mut run = Running::default();
    let t0 = Instant::now();
    let stop_reason = loop {
        if interrupted() {
            if samples.is_empty() {
                return Err(Interrupted.into());
            }
            break StopReason::Interrupted;
        }
        let per_iter = sample(iters, Phase::Sample)? / iters as f64;
        samples.push(per_iter);
        run.push(per_iter);
        if samples.len() >= policy.max_reps {
            break StopReason::MaxReps;
        }
        if samples.len() >= policy.min_reps {
            if let Some(target) = policy.target_cv {
                if run.cv() <= target {
                    break StopReason::TargetCv;
                }
            }
            if t0.elapsed() >= policy.time_budget {
                break StopReason::TimeBudget;
            }
        }
    };
    Ok(Driven {
        iters,
        samples,
        calibration_calls,
        warmup_calls,
        total_ns: t0.elapsed().as_nanos() as f64,
        stop: stop_reason,
    })
}

/// Measure `f(iters)` on the calling thread (pin it first if it matters).
/// `f` runs `iters` inner iterations and returns a value derived from its
/// work (a checksum), which is kept alive with `black_box`.
pub fn measure<F>(policy: &Policy, stop: &AtomicBool, f: F) -> Result<Measurement>
where
    F: FnMut(u64) -> u64,
{
    measure_around(policy, stop, f, |_| {})
}

/// Where [`measure_around`]'s hook is called: right before or right after a
/// sample's timed region (never inside it, never around calibration or
/// warm-up calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edge {
    Before,
    After,
}

/// [`measure`] with `hook` called right before and right after every
/// sample, outside the timed region.
fn measure_around<F, H>(
    policy: &Policy,
    stop: &AtomicBool,
    mut f: F,
    mut hook: H,
) -> Result<Measurement>
where
    F: FnMut(u64) -> u64,
    H: FnMut(Edge),
{
    let timer = Timer::new();
    let mut preempted = Preemptions::new();
    let d = drive(policy, stop, |iters, phase| {
        let sampling = phase == Phase::Sample;
        if sampling {
            hook(Edge::Before);
        }
        let before = if sampling { preempted.before() } else { None };
        let t0 = timer.now();
        let r = f(black_box(iters));
        let t1 = timer.now();
        black_box(r);
        if sampling {
            preempted.after(before);
            hook(Edge::After);
        }
        Ok(timer.ns(t0, t1))
    })?;
    let stats = Stats::from_samples(&d.samples)
        .ok_or_else(|| anyhow::anyhow!("the measurement produced non-finite samples"))?;
    Ok(Measurement {
        iters: d.iters,
        reps: d.samples.len(),
        samples: d.samples,
        stats,
        calibration_calls: d.calibration_calls,
        warmup_calls: d.warmup_calls,
        total_ns: d.total_ns,
        stop: d.stop,
        timer: timer.info(),
        preempted: preempted.0,
    })
}

/// Result of [`measure_bracketed`].
#[derive(Clone, Debug, Serialize)]
pub struct Bracketed {
    /// The subject's measurement (samples: ns per inner iteration).
    pub subject: Measurement,
    /// Inner iterations per reference call.
    pub ref_iters: u64,
    /// Per subject sample: the reference's ns per inner iteration right
    /// before it.
    pub ref_before: Vec<f64>,
    /// Per subject sample: the reference's ns per inner iteration right
    /// after it.
    pub ref_after: Vec<f64>,
}

/// Calibrate inner iterations so that one call of `f` lasts at least `min`.
fn calibrate<F>(min: Duration, max_iters: u64, stop: &AtomicBool, mut f: F) -> Result<u64>
where
    F: FnMut(u64) -> u64,
{
    let timer = Timer::new();
    find_iters(min.as_nanos() as f64, max_iters, stop, |iters| {
        let t0 = timer.now();
        black_box(f(black_box(iters)));
        Ok(timer.ns(t0, timer.now()))
    })
}

/// The smallest inner-iteration count (growing from 1) for which `time`
/// reports at least `min_ns`, or `max_iters`. A first call pays for cold
/// code, page faults and (under an emulator) translation, so a count is
/// accepted only when a second call at it lasts as long: otherwise one slow
/// first call of a 10 ns kernel picks 1 iteration and every sample reads a
/// timer tick or less.
fn find_iters<T>(min_ns: f64, max_iters: u64, stop: &AtomicBool, mut time: T) -> Result<u64>
where
    T: FnMut(u64) -> Result<f64>,
{
    let mut iters: u64 = 1;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted.into());
        }
        let mut t = time(iters)?;
        if iters >= max_iters {
            return Ok(iters);
        }
        if t >= min_ns {
            t = time(iters)?;
            if t >= min_ns {
                return Ok(iters);
            }
        }
        iters = grow_iters(iters, t, min_ns, max_iters);
    }
}

/// [`measure`] with every sample of `f` bracketed by a short call of a
/// reference kernel right before and right after it (each lasting about
/// `ref_sample`), so that a per-sample ratio subject/reference is taken
/// under the same conditions: for example FLOPs per cycle, with a dependent
/// add chain as the clock, on a host whose clock drifts between samples.
/// The reference calls sit outside the subject's timed region; their times
/// go into vectors allocated before sampling.
pub fn measure_bracketed<R, F>(
    policy: &Policy,
    stop: &AtomicBool,
    ref_sample: Duration,
    mut reference: R,
    f: F,
) -> Result<Bracketed>
where
    R: FnMut(u64) -> u64,
    F: FnMut(u64) -> u64,
{
    policy.check()?;
    let ref_iters = calibrate(ref_sample, policy.max_iters, stop, &mut reference)?;
    let timer = Timer::new();
    let mut ref_before = Vec::with_capacity(policy.max_reps);
    let mut ref_after = Vec::with_capacity(policy.max_reps);
    let subject = measure_around(policy, stop, f, |edge| {
        let t0 = timer.now();
        black_box(reference(black_box(ref_iters)));
        let ns = timer.ns(t0, timer.now()) / ref_iters as f64;
        match edge {
            Edge::Before => ref_before.push(ns),
            Edge::After => ref_after.push(ns),
        }
    })?;
    Ok(Bracketed {
        subject,
        ref_iters,
        ref_before,
        ref_after,
    })
}

/// Measure a team kernel: every round, all threads are released together and
/// run `f(ctx, iters)`. Samples are the team time per inner iteration.
pub fn measure_team<R, F>(
    team: &mut Team,
    policy: &Policy,
    stop: &AtomicBool,
    f: F,
) -> Result<TeamMeasurement<R>>
where
    R: Send,
    F: Fn(ThreadCtx<'_>, u64) -> R + Sync,
{
    policy.check()?;
    let n = team.size();
    let cpus = team.cpus().to_vec();
    let timer = team.timer().clone();
    let mut thread_samples: Vec<Vec<f64>> = (0..n)
        .map(|_| Vec::with_capacity(policy.max_reps))
        .collect();
    let mut max_skew = Vec::with_capacity(policy.max_reps);
    let mut last_results = Vec::new();
    let d = drive(policy, stop, |iters, phase| {
        let round = team.run_round(|ctx| f(ctx, iters))?;
        if phase == Phase::Sample {
            for (i, t) in round.thread_ns.iter().enumerate() {
                thread_samples[i].push(t / iters as f64);
            }
            max_skew.push(round.start_skew_ns.iter().copied().fold(0.0, f64::max));
            last_results = round.results;
        }
        Ok(round.elapsed_ns)
    })?;
    let stats = Stats::from_samples(&d.samples)
        .ok_or_else(|| anyhow::anyhow!("the team measurement produced non-finite samples"))?;
    let thread_stats = thread_samples
        .iter()
        .map(|s| Stats::from_samples(s).unwrap_or_default())
        .collect();
    Ok(TeamMeasurement {
        iters: d.iters,
        cpus,
        reps: d.samples.len(),
        samples: d.samples,
        stats,
        thread_samples,
        thread_stats,
        max_start_skew_ns: max_skew,
        calibration_calls: d.calibration_calls,
        warmup_calls: d.warmup_calls,
        total_ns: d.total_ns,
        stop: d.stop,
        timer: timer.info(),
        last_results,
        preempted: None,
    })
}

/// One thread's ticks of the pass it last ran, written by that thread only and
/// read by the thread that arrives last at the next barrier (the barrier's
/// atomics order the two).
#[repr(align(128))]
#[derive(Default)]
struct PassSlot {
    start: AtomicU64,
    end: AtomicU64,
    preempted: AtomicBool,
}

/// The bookkeeping of [`measure_team_inline`], touched only by the thread
/// that arrives last at a barrier (so its mutex is never contended).
struct InlineState {
    /// Phase of the pass now running.
    phase: Phase,
    /// Passes started.
    passes: usize,
    /// Release of the pass now running.
    release: Tick,
    /// Inner iterations of the pass now running.
    iters: u64,
    /// Whether `iters` is final (fixed by the policy, or a pass at it lasted
    /// at least `min_sample`).
    calibrated: bool,
    calibration_calls: usize,
    warmup_calls: usize,
    warmup_start: Option<Tick>,
    sample_start: Option<Tick>,
    end: Option<Tick>,
    samples: Vec<f64>,
    run: Running,
    thread_samples: Vec<Vec<f64>>,
    max_skew: Vec<f64>,
    preempted: usize,
    stop: Option<StopReason>,
}

/// Like [`measure_team`], with every sample taken inside one team round:
/// the threads stay on their CPUs from the first pass to the last sample and
/// meet at the team's spin barrier between passes, the way an OpenMP loop of
/// `parallel for` regions does (STREAM), instead of going to sleep on a
/// condition variable after every round and being woken for the next. So no
/// thread is asleep (its CPU idle, in a VM its vCPU halted and handed back
/// to the host) between samples or after finishing its share of a sample
/// early, no wake-up chain precedes a sample, and the calling thread does
/// not run between samples.
///
/// The thread that arrives last at the barrier accounts the pass just ended
/// (team time: from the release, which it stamps right before releasing the
/// others, to the last thread's end; each thread's own time; how late the
/// last thread started), applies the policy and either releases the next
/// pass or ends the round. Passes before the samples calibrate `iters`
/// (unless the policy fixes it: grown from 1 like [`measure_team`] until a
/// pass lasts at least `min_sample`) and warm up (`Warmup::Reps(k)`: at
/// least k passes; `Warmup::Time(d)`: at least d); then samples until the
/// policy stops (minimum and maximum count, time budget, target CV) or the
/// stop flag is seen (a Ctrl-C ends the figure after the pass running).
/// Each thread reads its own involuntary context switches around every pass
/// (outside the timed region): [`TeamMeasurement::preempted`] counts the
/// sampled passes in which some thread was switched out.
///
/// `f` must not wait on the team barrier itself (`ThreadCtx::wait`): the
/// passes are separated by it.
pub fn measure_team_inline<R, F>(
    team: &mut Team,
    policy: &Policy,
    stop: &AtomicBool,
    f: F,
) -> Result<TeamMeasurement<R>>
where
    R: Send,
    F: Fn(ThreadCtx<'_>, u64) -> R + Sync,
{
    policy.check()?;
    let n = team.size();
    let cpus = team.cpus().to_vec();
    let timer = team.timer().clone();
    let counted = involuntary_switches().is_some();
    let slots: Vec<PassSlot> = (0..n).map(|_| PassSlot::default()).collect();
    let finish = AtomicBool::new(false);
    let iters_now = AtomicU64::new(policy.iters.unwrap_or(1));
    let state = std::sync::Mutex::new(InlineState::new(policy, n));
    let min_ns = policy.min_sample.as_nanos() as f64;
    let budget_ns = policy.time_budget.as_nanos() as f64;
    // Run by the last thread to arrive at a barrier, before it releases the
    // others: account the pass that just ended, then start the next or end.
    let decide = || {
        let mut guard = state.lock().unwrap_or_else(|e| e.into_inner());
        let st = &mut *guard;
        if st.passes > 0 {
            st.account_pass(&slots, &timer, policy, min_ns);
        }
        let now = timer.now();
        if stop.load(Ordering::Relaxed) {
            st.stop = Some(StopReason::Interrupted);
        } else {
            st.advance(now, &timer, policy, budget_ns);
        }
        if st.stop.is_some() {
            st.end = Some(now);
            finish.store(true, Ordering::Relaxed);
        } else {
            st.passes += 1;
            iters_now.store(st.iters, Ordering::Relaxed);
            st.release = timer.now();
        }
    };
    let round = team.run_round(|ctx| {
        let barrier = ctx.barrier();
        let slot = &slots[ctx.index];
        let mut last = None;
        let mut switches = if counted {
            involuntary_switches()
        } else {
            None
        };
        loop {
            barrier.wait_then(decide);
            if finish.load(Ordering::Relaxed) {
                break;
            }
            let iters = iters_now.load(Ordering::Relaxed);
            let t0 = timer.now();
            let r = f(ctx, black_box(iters));
            let t1 = timer.now();
            slot.start.store(t0.0, Ordering::Relaxed);
            slot.end.store(t1.0, Ordering::Relaxed);
            if counted {
                let now = involuntary_switches();
                let switched = matches!((switches, now), (Some(a), Some(b)) if b > a);
                slot.preempted.store(switched, Ordering::Relaxed);
                switches = now;
            }
            last = Some(black_box(r));
        }
        last
    })?;
    let st = state.into_inner().unwrap_or_else(|e| e.into_inner());
    let last_results = round.results.into_iter().flatten().collect();
    st.into_measurement(&timer, cpus, counted, last_results)
}

impl InlineState {
    /// The state before the first pass: warming up (calibrating `iters`
    /// first unless the policy fixes it), with room for `max_reps` samples
    /// of each of `n` threads.
    fn new(policy: &Policy, n: usize) -> Self {
        InlineState {
            phase: Phase::Warmup,
            passes: 0,
            release: Tick(0),
            iters: policy.iters.unwrap_or(1),
            calibrated: policy.iters.is_some(),
            calibration_calls: 0,
            warmup_calls: 0,
            warmup_start: None,
            sample_start: None,
            end: None,
            samples: Vec::with_capacity(policy.max_reps),
            run: Running::default(),
            thread_samples: (0..n)
                .map(|_| Vec::with_capacity(policy.max_reps))
                .collect(),
            max_skew: Vec::with_capacity(policy.max_reps),
            preempted: 0,
            stop: None,
        }
    }

    /// Accounts the pass that just ended from the threads' slots: in the
    /// sample phase, a sample (team time from the release to the last
    /// thread's end, each thread's own time, how late the last thread
    /// started, whether some thread was switched out); before it, a
    /// calibration pass (`iters` grows while a pass lasts less than
    /// `min_ns`) or a warm-up pass.
    fn account_pass(&mut self, slots: &[PassSlot], timer: &Timer, policy: &Policy, min_ns: f64) {
        let (release, iters) = (self.release, self.iters as f64);
        let mut last_end = release;
        let mut skew = 0.0f64;
        let mut any_preempted = false;
        for (i, slot) in slots.iter().enumerate() {
            let s = Tick(slot.start.load(Ordering::Relaxed));
            let e = Tick(slot.end.load(Ordering::Relaxed));
            last_end = last_end.max(e);
            skew = skew.max(timer.ns(release, s));
            any_preempted |= slot.preempted.load(Ordering::Relaxed);
            if self.phase == Phase::Sample {
                self.thread_samples[i].push(timer.ns(s, e) / iters);
            }
        }
        let team_ns = timer.ns(release, last_end);
        if self.phase == Phase::Sample {
            self.samples.push(team_ns / iters);
            self.run.push(team_ns / iters);
            self.max_skew.push(skew);
            self.preempted += usize::from(any_preempted);
        } else if !self.calibrated && team_ns < min_ns && self.iters < policy.max_iters {
            self.calibration_calls += 1;
            self.iters = grow_iters(self.iters, team_ns, min_ns, policy.max_iters);
        } else {
            self.calibrated = true;
            self.warmup_calls += 1;
        }
    }

    /// Applies the policy at `now` (the stop flag not set): moves from
    /// warm-up to sampling once calibrated and warm (`Warmup::Reps(k)`: k
    /// passes; `Warmup::Time(d)`: d since the first warm-up pass), and in the
    /// sample phase sets the stop reason once the samples are enough
    /// (maximum count; from the minimum count on, target CV or time budget).
    fn advance(&mut self, now: Tick, timer: &Timer, policy: &Policy, budget_ns: f64) {
        if self.phase == Phase::Warmup && self.calibrated {
            let warm = match policy.warmup {
                Warmup::Reps(k) => self.warmup_calls >= k,
                Warmup::Time(d) => {
                    let t0 = *self.warmup_start.get_or_insert(now);
                    timer.ns(t0, now) >= d.as_nanos() as f64
                }
            };
            if warm {
                self.phase = Phase::Sample;
                self.sample_start = Some(now);
            }
        }
        if self.phase == Phase::Sample {
            let k = self.samples.len();
            let t0 = self.sample_start.unwrap_or(now);
            if k >= policy.max_reps {
                self.stop = Some(StopReason::MaxReps);
            } else if k >= policy.min_reps {
                if policy.target_cv.is_some_and(|t| self.run.cv() <= t) {
                    self.stop = Some(StopReason::TargetCv);
                } else if timer.ns(t0, now) >= budget_ns {
                    self.stop = Some(StopReason::TimeBudget);
                }
            }
        }
    }

    /// The measurement of the ended round: its samples and their statistics
    /// (the [`Interrupted`] error, or an error, when it took none), with the
    /// threads' last results.
    fn into_measurement<R>(
        self,
        timer: &Timer,
        cpus: Vec<usize>,
        counted: bool,
        last_results: Vec<R>,
    ) -> Result<TeamMeasurement<R>> {
        if self.samples.is_empty() {
            if self.stop == Some(StopReason::Interrupted) {
                return Err(Interrupted.into());
            }
            bail!("the team measurement took no sample");
        }
        let stats = Stats::from_samples(&self.samples)
            .ok_or_else(|| anyhow::anyhow!("the team measurement produced non-finite samples"))?;
        let thread_stats = self
            .thread_samples
            .iter()
            .map(|s| Stats::from_samples(s).unwrap_or_default())
            .collect();
        let total_ns = match (self.sample_start, self.end) {
            (Some(a), Some(b)) => timer.ns(a, b),
            _ => 0.0,
        };
        Ok(TeamMeasurement {
            iters: self.iters,
            cpus,
            reps: self.samples.len(),
            samples: self.samples,
            stats,
            thread_samples: self.thread_samples,
            thread_stats,
            max_start_skew_ns: self.max_skew,
            calibration_calls: self.calibration_calls,
            warmup_calls: self.warmup_calls,
            total_ns,
            stop: self.stop.unwrap_or(StopReason::MaxReps),
            timer: timer.info(),
            last_results,
            preempted: counted.then_some(self.preempted),
        })
    }
}

#[cfg(test)]
mod tests;

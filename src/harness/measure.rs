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

use crate::base::timer::{Timer, TimerInfo};
use crate::base::Stats;
use crate::placement::team::{Team, ThreadCtx};
use anyhow::{bail, Result};
use serde::Serialize;
use std::fmt;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welford_matches_stats() {
        let xs = [3.0, 1.0, 2.0, 4.0];
        let mut r = Running::default();
        for x in xs {
            r.push(x);
        }
        let s = Stats::from_samples(&xs).unwrap();
        assert!((r.cv() - s.cv).abs() < 1e-12);
    }

    #[test]
    fn bad_policies_are_refused() {
        let stop = AtomicBool::new(false);
        for p in [
            Policy {
                min_reps: 0,
                ..Policy::quick()
            },
            Policy {
                max_reps: 1,
                min_reps: 2,
                ..Policy::quick()
            },
            Policy {
                iters: Some(0),
                ..Policy::quick()
            },
            Policy {
                target_cv: Some(f64::NAN),
                ..Policy::quick()
            },
        ] {
            let e = measure(&p, &stop, |n| n).unwrap_err().to_string();
            assert!(e.starts_with("bad repetition policy"), "{e}");
        }
    }

    #[test]
    fn stop_flag_before_start_is_interrupted() {
        let stop = AtomicBool::new(true);
        let e = measure(&Policy::quick(), &stop, |n| n).unwrap_err();
        assert!(e.downcast_ref::<Interrupted>().is_some());
    }
}

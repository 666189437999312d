//! Synchronisation costs: spin-wait hints (PAUSE; YIELD and ISB on arm), an
//! uncontended and a contended atomic increment (2…N threads on one line, on
//! SMT siblings, within an L3, across nodes), a spin lock against a futex
//! mutex (uncontended, contended, and a strict handoff), and false sharing
//! against padded counters with the slowdown ratio.
//!
//! Method (docs/methods-c2c.md, "Synchronisation costs"): every figure comes
//! from the harness (`measure` on one pinned thread, `measure_team` on a team
//! of pinned threads released by a barrier), median of samples of at least a
//! few milliseconds each. Cycles = ns × the single-core clock measured by the
//! frequency experiment (`Facts::ghz_single`); without it cycles are reported
//! as not available.

pub mod text;
pub mod view;

use crate::base::timer::{Timer, TimerInfo};
use crate::base::CpuSet;
use crate::experiments::coherence::infer::Declared;
use crate::experiments::coherence::payload::{AtomicIncrementData, LockData, SyncCpus};
use crate::experiments::common::PLACEMENT_PARAM;
use crate::experiments::experiment::{one_cpu_per_core, ExpCtx, Experiment, Profile};
use crate::harness::measure::{measure, measure_team, Policy, Warmup};
use crate::kernels::chains::{Chain, CHAIN_LEN};
use crate::kernels::sync::{self as k, Hint, Protected, SpinLock, Wait};
use crate::machine::MachineInfo;
use crate::placement::pin::AffinityGuard;
use crate::placement::team::Team;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct SyncCosts;

pub const EXP: &str = "sync";
/// ns (and cycles) per spin-wait hint instruction (param instruction).
pub const SPIN_HINT: MetricId = MetricId::new(EXP, "spin_hint");
pub const SPIN_HINT_CYCLES: MetricId = MetricId::new(EXP, "spin_hint_cycles");
/// ns (and cycles) per locked increment, alone or contended (params threads, placement).
pub const ATOMIC_INCREMENT: MetricId = MetricId::new(EXP, "atomic_increment");
pub const ATOMIC_INCREMENT_CYCLES: MetricId = MetricId::new(EXP, "atomic_increment_cycles");
/// ns (and cycles) per lock acquisition (params kind, threads).
pub const LOCK: MetricId = MetricId::new(EXP, "lock");
pub const LOCK_CYCLES: MetricId = MetricId::new(EXP, "lock_cycles");
/// ns per one-way handoff between two threads (param wait).
pub const HANDOFF: MetricId = MetricId::new(EXP, "handoff");
/// ns per increment with counters in one line or padded (param layout).
pub const FALSE_SHARING: MetricId = MetricId::new(EXP, "false_sharing");
/// Shared-line time / padded time.
pub const FALSE_SHARING_SLOWDOWN: MetricId = MetricId::new(EXP, "false_sharing_slowdown");
pub const METHOD_VERSION: u32 = 1;

/// Repetition policy per profile: shorter than the profile's default so the
/// dozen figures fit the c2c+sync share of the run.
pub fn policy(profile: Profile) -> Policy {
    match profile {
        Profile::Quick => Policy {
            warmup: Warmup::Time(Duration::from_millis(10)),
            min_reps: 5,
            max_reps: 100,
            time_budget: Duration::from_millis(120),
            target_cv: Some(0.01),
            min_sample: Duration::from_millis(2),
            iters: None,
            max_iters: 1 << 40,
        },
        Profile::Standard => Policy {
            warmup: Warmup::Time(Duration::from_millis(30)),
            min_reps: 10,
            max_reps: 300,
            time_budget: Duration::from_millis(400),
            target_cv: Some(0.005),
            min_sample: Duration::from_millis(5),
            iters: None,
            max_iters: 1 << 40,
        },
        Profile::Full => profile.policy(),
    }
}

/// Measure the single-core clock on `cpu` with the frequency experiment's
/// dependent add chain (one add per cycle): GHz, median of samples.
pub fn measure_clock(cpu: usize, policy: &Policy, stop: &AtomicBool) -> Result<f64> {
    let _g = AffinityGuard::pin(cpu)?;
    let m = measure(policy, stop, |iters| Chain::Add.run(iters, 1))?;
    Ok(CHAIN_LEN as f64 / m.stats.median)
}

/// Placements of two threads, each with the CPUs or why there is none.
#[derive(Clone, Debug)]
pub struct Placements {
    pub same_core: std::result::Result<(usize, usize), String>,
    pub same_l3: std::result::Result<(usize, usize), String>,
    pub cross_node: std::result::Result<(usize, usize), String>,
    /// Two CPUs on different cores, as close as declared (for the lock and
    /// false-sharing pairs); None with one core.
    pub two_cores: Option<(usize, usize)>,
}

/// Find the labelled two-thread placements among `cpus`.
pub fn placements(machine: &MachineInfo, cpus: &[usize]) -> Placements {
    let decl = Declared::from_machine(machine, cpus);
    let n = cpus.len();
    let pairs = || (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j)));
    let level = |name: &str| {
        decl.levels
            .iter()
            .find(|l| l.names.iter().any(|x| x == name))
    };
    let same_core = pairs()
        .find(|&(i, j)| decl.smt_siblings(i, j))
        .map(|(i, j)| (cpus[i], cpus[j]))
        .ok_or_else(|| {
            if machine.cores.is_empty() {
                "cores are not declared (topology unknown)".to_string()
            } else {
                "no SMT: no two usable CPUs are threads of one core".to_string()
            }
        });
    let same_l3 = match level("shared_l3") {
        None => Err("L3 sharing is not declared (cache topology unknown)".to_string()),
        Some(l) => pairs()
            .find(|&(i, j)| l.group_of[i] == l.group_of[j] && decl.core_of[i] != decl.core_of[j])
            .map(|(i, j)| (cpus[i], cpus[j]))
            .ok_or_else(|| "no two usable CPUs on different cores share an L3".to_string()),
    };
    let cross_node = match level("same_node") {
        None => Err("NUMA nodes are not declared".to_string()),
        Some(l) => pairs()
            .find(|&(i, j)| l.group_of[i] != l.group_of[j])
            .map(|(i, j)| (cpus[i], cpus[j]))
            .ok_or_else(|| "all usable CPUs are on one NUMA node".to_string()),
    };
    let two_cores = same_l3.clone().ok().or_else(|| {
        pairs()
            .find(|&(i, j)| decl.core_of[i] != decl.core_of[j])
            .map(|(i, j)| (cpus[i], cpus[j]))
    });
    Placements {
        same_core,
        same_l3,
        cross_node,
        two_cores,
    }
}

#[repr(align(128))]
struct Line<T>(T);

/// A note when samples of a time-per-operation figure were preempted.
fn preempted_note(preempted: Option<usize>, reps: usize) -> Option<String> {
    match preempted {
        Some(p) if p > 0 => Some(format!(
            "{p} of {reps} samples were preempted (involuntary context switches): the machine was busy; those samples run long, the median resists them"
        )),
        _ => None,
    }
}

/// A cycles record from ns samples, or unavailable.
fn cycles_record(
    id: MetricId,
    params: &[(&str, serde_json::Value)],
    ns: &[f64],
    ghz: Option<f64>,
    method: &str,
) -> ResultRecord {
    let mut r = match ghz {
        Some(g) => ResultRecord::of(id, "cycles", false)
            .with_samples(ns.iter().map(|x| x * g).collect())
            .with_method(
                &format!("{method}; cycles = ns × {g:.3} GHz (single-core clock measured by the frequency experiment)"),
                METHOD_VERSION,
            ),
        None => ResultRecord::unavailable(
            id.experiment,
            id.metric,
            "cycles",
            "cycles not available: no measured clock (run the frequency experiment first, or use `cpuscope sync`, which measures it)",
        ),
    };
    for (k, v) in params {
        r = r.with_param(k, v.clone());
    }
    r.higher_is_better = false;
    r
}

fn ns_record(
    id: MetricId,
    params: &[(&str, serde_json::Value)],
    ns: Vec<f64>,
    method: &str,
) -> ResultRecord {
    let mut r = ResultRecord::of(id, "ns", false)
        .with_method(method, METHOD_VERSION)
        .with_samples(ns);
    for (k, v) in params {
        r = r.with_param(k, v.clone());
    }
    r.higher_is_better = false;
    r
}

fn cycles_note(r: ResultRecord, ghz: Option<f64>) -> ResultRecord {
    match (ghz, r.value) {
        (Some(g), Some(v)) => {
            let t = format!("≈ {:.0} cycles at the measured {g:.2} GHz", v * g);
            r.with_note(&t)
        }
        (None, Some(_)) => r.with_note("cycles not available: no measured clock"),
        _ => r,
    }
}

/// Per round: mean over threads of each thread's own ns per iteration.
fn per_thread_means(thread_samples: &[Vec<f64>]) -> Vec<f64> {
    let rounds = thread_samples.iter().map(Vec::len).min().unwrap_or(0);
    (0..rounds)
        .map(|r| thread_samples.iter().map(|t| t[r]).sum::<f64>() / thread_samples.len() as f64)
        .collect()
}

/// The contended atomic increment on `cpus`: per-thread ns per increment
/// (samples) and aggregate ns per increment (median).
fn contended(cpus: &[usize], policy: &Policy, stop: &AtomicBool) -> Result<(Vec<f64>, f64)> {
    let counter = Box::new(Line(AtomicU64::new(0)));
    let mut team = Team::new(cpus)?;
    let m = measure_team(&mut team, policy, stop, |_c, iters| {
        k::atomic_increments(&counter.0, iters)
    })?;
    let agg = m.stats.median / cpus.len() as f64;
    Ok((per_thread_means(&m.thread_samples), agg))
}

/// Thread counts of the spread sweep: 2, 4, 8, … and all.
fn sweep_counts(n: usize, profile: Profile) -> Vec<usize> {
    let mut v = Vec::new();
    let mut t = 2;
    while t < n {
        v.push(t);
        t *= 2;
    }
    if n >= 2 {
        v.push(n);
    }
    if profile == Profile::Quick && v.len() > 2 {
        let last = v[v.len() - 1];
        v = vec![2, last];
    }
    v
}

/// False sharing: the same per-thread plain increments on counters packed in
/// one line and on counters 128 bytes apart, alternated round by round.
/// Returns (shared ns/incr per round, padded ns/incr per round, ratio per round).
pub fn false_sharing(
    cpus: &[usize],
    atomic: bool,
    policy: &Policy,
    stop: &AtomicBool,
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let n = cpus.len();
    anyhow::ensure!((1..=8).contains(&n), "false sharing uses 1 to 8 threads");
    // 8 counters in one 128-byte block; 8 counters in 8 blocks.
    let shared: Box<Line<[AtomicU64; 16]>> = Box::new(Line(Default::default()));
    let padded: Vec<Line<[AtomicU64; 16]>> = (0..n).map(|_| Line(Default::default())).collect();
    let mut team = Team::new(cpus)?;
    let run = |team: &mut Team, pad: bool, iters: u64| -> Result<f64> {
        let r = team.run_round(|ctx| {
            let c = if pad {
                &padded[ctx.index].0[0]
            } else {
                &shared.0[ctx.index]
            };
            if atomic {
                k::atomic_increments(c, iters)
            } else {
                k::plain_increments(c, iters)
            }
        })?;
        Ok(r.thread_ns.iter().sum::<f64>() / n as f64 / iters as f64)
    };
    // Calibrate on the padded layout (the faster one).
    let min_ns = policy.min_sample.as_nanos() as f64;
    let mut iters = 1000u64;
    loop {
        let t = run(&mut team, true, iters)? * iters as f64;
        if t >= min_ns || iters >= 1 << 34 {
            break;
        }
        iters = (iters as f64 * (min_ns * 1.2 / t.max(1.0)).clamp(2.0, 100.0)) as u64;
    }
    let warm_until = Instant::now()
        + match policy.warmup {
            Warmup::Time(d) => d,
            Warmup::Reps(_) => Duration::from_millis(10),
        };
    while Instant::now() < warm_until {
        run(&mut team, false, iters)?;
        run(&mut team, true, iters)?;
    }
    let (mut s, mut p, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let t0 = Instant::now();
    while ratio.len() < policy.max_reps.max(1) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let a = run(&mut team, false, iters)?;
        let b = run(&mut team, true, iters)?;
        s.push(a);
        p.push(b);
        ratio.push(a / b);
        if ratio.len() >= policy.min_reps && t0.elapsed() >= policy.time_budget {
            break;
        }
    }
    for (i, c) in padded.iter().enumerate() {
        std::hint::black_box(c.0[0].load(Ordering::Relaxed) + i as u64);
    }
    std::hint::black_box(shared.0[0].load(Ordering::Relaxed));
    Ok((s, p, ratio))
}

/// Strict handoff between two threads: ns per handoff (one-way), samples.
fn handoff(
    cpus: (usize, usize),
    wait: Wait,
    policy: &Policy,
    stop: &AtomicBool,
) -> Result<Vec<f64>> {
    let turn = Box::new(Line(AtomicU32::new(0)));
    let mut team = Team::new(&[cpus.0, cpus.1])?;
    let m = measure_team(&mut team, policy, stop, |ctx, iters| {
        if ctx.index == 0 {
            turn.0.store(0, Ordering::Release);
        }
        ctx.wait();
        k::handoff_loop(&turn.0, wait, ctx.index as u32, 0, iters)
    })?;
    // One inner iteration = one turn of each thread = two handoffs.
    Ok(m.samples.iter().map(|x| x / 2.0).collect())
}

/// Lock cost: ns per acquisition as seen by each thread, and the fraction of
/// acquisitions that took the lock from the other thread.
fn lock_cost(
    cpus: &[usize],
    spin: bool,
    policy: &Policy,
    stop: &AtomicBool,
) -> Result<(Vec<f64>, f64)> {
    let lock = Box::new(Line(SpinLock::new()));
    let count = Box::new(Line([AtomicU64::new(0), AtomicU64::new(u64::MAX)]));
    let mutex = Box::new(Line(Mutex::new(Protected {
        count: 0,
        owner: u64::MAX,
    })));
    let mut team = Team::new(cpus)?;
    let m = measure_team(&mut team, policy, stop, |ctx, iters| {
        let me = ctx.index as u64;
        let h = if spin {
            k::spin_lock_loop(&lock.0, &count.0[0], &count.0[1], me, iters)
        } else {
            k::mutex_loop(&mutex.0, me, iters)
        };
        (h, iters)
    })?;
    let (h, it) = m
        .last_results
        .iter()
        .fold((0u64, 0u64), |(a, b), &(h, i)| (a + h, b + i));
    let frac = if it > 0 { h as f64 / it as f64 } else { 0.0 };
    Ok((per_thread_means(&m.thread_samples), frac))
}

/// The state every step of one `run_all` pass shares: policy, stop flag,
/// clock and the two callbacks.
struct Pass<'a> {
    pol: Policy,
    stop: &'a AtomicBool,
    ghz: Option<f64>,
    step: &'a mut dyn FnMut(&str),
    out: &'a mut dyn FnMut(ResultRecord) -> Result<()>,
}

impl Pass<'_> {
    /// A figure's measurement; or, when it failed (a team that lost a
    /// thread: panicked, ended, never arrived; a CPU that cannot be
    /// pinned), None after the figure `id` with `params` is written *not
    /// available* with the reason, so the next figures are measured. After
    /// Ctrl-C, the error (the session keeps what finished).
    fn measured<T>(
        &mut self,
        m: Result<T>,
        id: MetricId,
        params: &[(&str, serde_json::Value)],
    ) -> Result<Option<T>> {
        match m {
            Ok(v) => Ok(Some(v)),
            Err(e) if self.stop.load(Ordering::Relaxed) => Err(e),
            Err(e) => {
                let why = format!("{e:#}").replace('\n', " ");
                let mut r = ResultRecord::unavailable(id.experiment, id.metric, "ns", &why);
                for (k, v) in params {
                    r = r.with_param(k, v.clone());
                }
                (self.out)(r)?;
                Ok(None)
            }
        }
    }
}

/// Run every synchronisation measurement on `cpus`, handing records to `out`.
/// `ghz`: measured single-core clock for cycles. `step`: progress.
pub fn run_all(
    machine: &MachineInfo,
    cpus: &CpuSet,
    profile: Profile,
    ghz: Option<f64>,
    stop: &AtomicBool,
    step: &mut dyn FnMut(&str),
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let pol = policy(profile);
    let list = cpus.to_vec();
    let Some(&first) = list.first() else {
        out(ResultRecord::unavailable(
            SPIN_HINT.experiment,
            SPIN_HINT.metric,
            "ns",
            "no usable CPU",
        ))?;
        return Ok(());
    };
    let timer = Timer::new().info();
    let mut p = Pass {
        pol,
        stop,
        ghz,
        step,
        out,
    };

    // 1. Spin-wait hints.
    spin_hints(&mut p, first, &timer)?;
    // 2. Uncontended atomic increment.
    atomic_alone(&mut p, first)?;
    // 3. Contended atomic increment.
    let pl = placements(machine, &list);
    let spread = one_cpu_per_core(machine, cpus).to_vec();
    if atomic_contended(&mut p, &pl, &list, &spread, profile)? {
        return Ok(());
    }
    // 4. Locks: uncontended, contended, handoff.
    locks(&mut p, &pl, first)?;
    // 5. False sharing.
    false_sharing_all(&mut p, &pl, &spread, profile)
}

/// Step 1 of `run_all`: each spin-wait hint instruction, alone on `first`.
fn spin_hints(p: &mut Pass, first: usize, timer: &TimerInfo) -> Result<()> {
    let hints = Hint::available();
    if hints.is_empty() {
        (p.out)(ResultRecord::unavailable(
            SPIN_HINT.experiment,
            SPIN_HINT.metric,
            "ns",
            &format!("no spin-wait hint kernel for {}", std::env::consts::ARCH),
        ))?;
    }
    for h in hints {
        (p.step)(&format!("{} instruction on CPU {first}", h.name()));
        let _g = AffinityGuard::pin(first)?;
        let m = measure(&p.pol, p.stop, |iters| k::hint_loop(h, iters))?;
        let ns: Vec<f64> = m
            .samples
            .iter()
            .map(|x| x / k::HINTS_PER_ITER as f64)
            .collect();
        let method = format!(
            "{} back-to-back `{}` per loop iteration on one pinned thread (CPU {first}), timed by the harness ({}); ns per instruction; median of samples",
            k::HINTS_PER_ITER,
            h.name(),
            timer.source.as_str()
        );
        let params = [("instruction", json!(h.name()))];
        let mut r = ns_record(SPIN_HINT, &params, ns.clone(), &method);
        if let Some(n) = preempted_note(m.preempted, m.reps) {
            r = r.with_note(&n);
        }
        (p.out)(r)?;
        (p.out)(cycles_record(
            SPIN_HINT_CYCLES,
            &params,
            &ns,
            p.ghz,
            &method,
        ))?;
    }
    Ok(())
}

/// Step 2 of `run_all`: an uncontended atomic increment on `first`.
fn atomic_alone(p: &mut Pass, first: usize) -> Result<()> {
    (p.step)(&format!("atomic increment, alone on CPU {first}"));
    let _g = AffinityGuard::pin(first)?;
    let c = Box::new(Line(AtomicU64::new(0)));
    let m = measure(&p.pol, p.stop, |iters| k::atomic_increments(&c.0, iters))?;
    let method = "locked fetch_add (x86 LOCK XADD, arm LDADD or LDXR/STXR) of a private counter, one pinned thread; ns per increment; median of samples";
    let params = [("threads", json!(1)), (PLACEMENT_PARAM, json!("alone"))];
    let mut r = ns_record(ATOMIC_INCREMENT, &params, m.samples.clone(), method);
    if let Some(n) = preempted_note(m.preempted, m.reps) {
        r = r.with_note(&n);
    }
    (p.out)(r)?;
    (p.out)(cycles_record(
        ATOMIC_INCREMENT_CYCLES,
        &params,
        &m.samples,
        p.ghz,
        method,
    ))
}

/// The method text of the contended atomic increment's records.
const CONTENDED_METHOD: &str = "every thread does locked fetch_add on one shared counter (one cache line), pinned threads released together; sample = mean over threads of each thread's ns per increment";

/// Step 3 of `run_all`: the contended atomic increment, labelled placements
/// then the thread-count sweep; true when stopped.
fn atomic_contended(
    p: &mut Pass,
    pl: &Placements,
    list: &[usize],
    spread: &[usize],
    profile: Profile,
) -> Result<bool> {
    let cmethod = CONTENDED_METHOD;
    let labelled = contended_placements(p, pl)?;
    let mut order = spread.to_vec();
    order.extend(list.iter().filter(|c| !spread.contains(c)));
    for t in sweep_counts(order.len(), profile) {
        let set: Vec<usize> = order[..t].to_vec();
        let mut sorted = set.clone();
        sorted.sort_unstable();
        let dup = labelled.iter().any(|l| {
            let mut x = l.clone();
            x.sort_unstable();
            x == sorted
        });
        let params = [("threads", json!(t)), (PLACEMENT_PARAM, json!("spread"))];
        let cs = CpuSet::from_ids(set.iter().copied()).to_string();
        (p.step)(&format!(
            "contended atomic increment, {t} threads (CPUs {cs})"
        ));
        let m = contended(&set, &p.pol, p.stop);
        let Some((s, agg)) = p.measured(m, ATOMIC_INCREMENT, &params)? else {
            continue;
        };
        let mut r = ns_record(ATOMIC_INCREMENT, &params, s, cmethod)
            .with_note(&format!(
                "CPUs {cs} (one per core first); aggregate {agg:.1} ns per increment, {:.1} M increments/s in all",
                1e3 / agg
            ))
            .with_payload(&AtomicIncrementData {
                cpus: SyncCpus::List(cs),
                aggregate_ns_per_increment: agg,
            });
        if dup {
            r = r.with_note("same CPUs as a labelled placement above");
        }
        (p.out)(cycles_note(r, p.ghz))?;
        if p.stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Part of step 3: the contended atomic increment on each labelled
/// placement of two threads (not available where the machine has none);
/// the pairs measured.
fn contended_placements(p: &mut Pass, pl: &Placements) -> Result<Vec<Vec<usize>>> {
    let cmethod = CONTENDED_METHOD;
    let mut labelled: Vec<Vec<usize>> = Vec::new();
    for (name, pair) in [
        ("same_core", &pl.same_core),
        ("same_l3", &pl.same_l3),
        ("cross_node", &pl.cross_node),
    ] {
        let params = [("threads", json!(2)), (PLACEMENT_PARAM, json!(name))];
        match pair {
            Err(why) => {
                let mut r = ResultRecord::unavailable(
                    ATOMIC_INCREMENT.experiment,
                    ATOMIC_INCREMENT.metric,
                    "ns",
                    why,
                );
                for (k, v) in &params {
                    r = r.with_param(k, v.clone());
                }
                (p.out)(r)?;
            }
            Ok((a, b)) => {
                (p.step)(&format!(
                    "contended atomic increment, {name} (CPUs {a},{b})"
                ));
                let m = contended(&[*a, *b], &p.pol, p.stop);
                let Some((s, agg)) = p.measured(m, ATOMIC_INCREMENT, &params)? else {
                    continue;
                };
                labelled.push(vec![*a, *b]);
                let r = ns_record(ATOMIC_INCREMENT, &params, s, cmethod)
                    .with_note(&format!(
                        "CPUs {a},{b}; aggregate {agg:.1} ns per increment (both threads together)"
                    ))
                    .with_payload(&AtomicIncrementData {
                        cpus: SyncCpus::Pair([*a, *b]),
                        aggregate_ns_per_increment: agg,
                    });
                (p.out)(cycles_note(r, p.ghz))?;
            }
        }
    }
    Ok(labelled)
}

/// The method text of a lock record: `kind` "spin" or "mutex", `t` threads.
fn lock_method(kind: &str, t: usize) -> String {
    format!(
        "{} lock/unlock around a shared counter, {t} pinned thread(s) looping; sample = mean over threads of each thread's ns per acquisition",
        if kind == "spin" {
            "test-and-test-and-set spin lock (spin-wait hint while held)"
        } else {
            "std::sync::Mutex (futex: CAS when free, brief spin, FUTEX_WAIT when held)"
        }
    )
}

/// Step 4 of `run_all`: locks uncontended on `first`, then contended and
/// handoff on two cores.
fn locks(p: &mut Pass, pl: &Placements, first: usize) -> Result<()> {
    for kind in ["spin", "mutex"] {
        (p.step)(&format!("{kind} lock, uncontended"));
        let params = [("kind", json!(kind)), ("threads", json!(1))];
        let m = lock_cost(&[first], kind == "spin", &p.pol, p.stop);
        let Some((s, _)) = p.measured(m, LOCK, &params)? else {
            continue;
        };
        let m = lock_method(kind, 1);
        (p.out)(ns_record(LOCK, &params, s.clone(), &m))?;
        (p.out)(cycles_record(LOCK_CYCLES, &params, &s, p.ghz, &m))?;
    }
    match pl.two_cores {
        None => locks_unavailable(p),
        Some((a, b)) => locks_two(p, a, b),
    }
}

/// Step 4 of `run_all` without two cores: the contended lock and handoff
/// records, unavailable.
fn locks_unavailable(p: &mut Pass) -> Result<()> {
    for kind in ["spin", "mutex"] {
        (p.out)(
            ResultRecord::unavailable(
                LOCK.experiment,
                LOCK.metric,
                "ns",
                "needs two usable CPUs on different cores",
            )
            .with_param("kind", kind)
            .with_param("threads", 2),
        )?;
    }
    for w in ["spin", "futex"] {
        (p.out)(
            ResultRecord::unavailable(
                HANDOFF.experiment,
                HANDOFF.metric,
                "ns",
                "needs two usable CPUs on different cores",
            )
            .with_param("wait", w),
        )?;
    }
    Ok(())
}

/// Step 4 of `run_all` on CPUs `a`, `b` of two cores: contended locks, then
/// spin and futex handoff.
fn locks_two(p: &mut Pass, a: usize, b: usize) -> Result<()> {
    for kind in ["spin", "mutex"] {
        (p.step)(&format!("{kind} lock, 2 threads (CPUs {a},{b})"));
        let params = [("kind", json!(kind)), ("threads", json!(2))];
        let m = lock_cost(&[a, b], kind == "spin", &p.pol, p.stop);
        let Some((s, frac)) = p.measured(m, LOCK, &params)? else {
            continue;
        };
        let r = ns_record(
            LOCK,
            &params,
            s,
            &lock_method(kind, 2),
        )
        .with_note(&format!(
            "CPUs {a},{b}; {:.0}% of acquisitions took the lock from the other thread (the rest re-took it)",
            frac * 100.0
        ))
        .with_payload(&LockData {
            cpus: [a, b],
            handoff_fraction: frac,
        });
        (p.out)(cycles_note(r, p.ghz))?;
    }
    for (w, wait) in [("spin", Wait::Spin), ("futex", Wait::Futex)] {
        (p.step)(&format!("{w} handoff (CPUs {a},{b})"));
        let m = handoff((a, b), wait, &p.pol, p.stop);
        let Some(s) = p.measured(m, HANDOFF, &[("wait", json!(w))])? else {
            continue;
        };
        let m = if wait == Wait::Spin {
            "strict alternation of two pinned threads on one turn word; the waiter spins (spin-wait hint) until its turn; ns per one-way handoff = round time / 2 per turn pair"
        } else {
            "strict alternation of two pinned threads on one turn word; the waiter sleeps in FUTEX_WAIT and is woken by FUTEX_WAKE; ns per one-way handoff (wake-up latency included)"
        };
        let r = ns_record(HANDOFF, &[("wait", json!(w))], s, m).with_note(&format!("CPUs {a},{b}"));
        (p.out)(cycles_note(r, p.ghz))?;
    }
    Ok(())
}

/// Step 5 of `run_all`: false sharing at each thread count (2, and all
/// cores up to 8 beyond the quick profile).
fn false_sharing_all(
    p: &mut Pass,
    pl: &Placements,
    spread: &[usize],
    profile: Profile,
) -> Result<()> {
    let fs_counts: Vec<usize> = {
        let cores = spread.len().min(8);
        let mut v = Vec::new();
        if cores >= 2 {
            v.push(2);
        }
        if profile != Profile::Quick && cores > 2 {
            v.push(cores);
        }
        v
    };
    if fs_counts.is_empty() {
        for layout in ["shared_line", "padded"] {
            (p.out)(
                ResultRecord::unavailable(
                    FALSE_SHARING.experiment,
                    FALSE_SHARING.metric,
                    "ns",
                    "needs two usable CPUs on different cores",
                )
                .with_param("layout", layout)
                .with_param("threads", 2),
            )?;
        }
        (p.out)(
            ResultRecord::unavailable(
                FALSE_SHARING_SLOWDOWN.experiment,
                FALSE_SHARING_SLOWDOWN.metric,
                "x",
                "needs two usable CPUs on different cores",
            )
            .with_param("threads", 2),
        )?;
    }
    for t in fs_counts {
        let set: Vec<usize> = if t == 2 {
            match pl.two_cores {
                Some((a, b)) => vec![a, b],
                None => spread[..2].to_vec(),
            }
        } else {
            spread[..t].to_vec()
        };
        if false_sharing_set(p, &set, t)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Step 5 of `run_all` on one CPU `set` of `t` threads: plain then atomic
/// increments; true when stopped.
fn false_sharing_set(p: &mut Pass, set: &[usize], t: usize) -> Result<bool> {
    let cs = CpuSet::from_ids(set.iter().copied()).to_string();
    for (op, atomic) in [("plain", false), ("atomic", true)] {
        (p.step)(&format!(
            "false sharing, {op} increments, {t} threads (CPUs {cs})"
        ));
        let m = false_sharing(set, atomic, &p.pol, p.stop);
        let params = [("op", json!(op)), ("threads", json!(t))];
        let Some((s, pd, ratio)) = p.measured(m, FALSE_SHARING, &params)? else {
            continue;
        };
        let how = if atomic {
            "locked fetch_add"
        } else {
            "plain load/add/store (the `counter++` of ordinary code)"
        };
        let base = format!(
            "each pinned thread increments its own counter with a {how}, counters either packed in one cache line (8 bytes apart) or 128 bytes apart; the two layouts alternate round by round"
        );
        for (layout, v) in [("shared_line", s), ("padded", pd)] {
            (p.out)(
                ns_record(
                    FALSE_SHARING,
                    &[
                        ("layout", json!(layout)),
                        ("op", json!(op)),
                        ("threads", json!(t)),
                    ],
                    v,
                    &format!("{base}; ns per increment per thread"),
                )
                .with_note(&format!("CPUs {cs}")),
            )?;
        }
        let mut r = ResultRecord::of(FALSE_SHARING_SLOWDOWN, "x", false)
            .with_param("op", op)
            .with_param("threads", t)
            .with_method(
                &format!("{base}; sample = shared-line time / padded time of adjacent rounds"),
                METHOD_VERSION,
            )
            .with_samples(ratio)
            .with_note(&format!("CPUs {cs}"));
        r.higher_is_better = false;
        if let Some(v) = r.value {
            if v <= 1.05 {
                r = r.with_note("no measurable slowdown: the threads may share a core's L1, or the hypervisor runs them on one core");
            } else if !atomic && v < 2.0 {
                r = r.with_note("plain stores wait in the store buffer and commit in bursts while the line is owned, which hides much of the ping-pong; the atomic variant cannot");
            }
        }
        (p.out)(r)?;
        if p.stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Measurements `run_all` makes (for the time estimate).
fn count_measurements(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> (usize, usize) {
    let list = cpus.to_vec();
    let pl = placements(machine, &list);
    let mut single = Hint::available().len() + 1 + 2;
    let mut multi = [&pl.same_core, &pl.same_l3, &pl.cross_node]
        .iter()
        .filter(|p| p.is_ok())
        .count();
    multi += sweep_counts(list.len(), profile).len();
    if pl.two_cores.is_some() {
        multi += 4;
        multi += if profile != Profile::Quick && one_cpu_per_core(machine, cpus).len() > 2 {
            8
        } else {
            4
        };
    }
    if list.is_empty() {
        single = 0;
    }
    (single, multi)
}

impl Experiment for SyncCosts {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "PAUSE/YIELD/ISB, atomic increments (alone and contended), spin lock vs futex mutex, false sharing"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        let p = policy(profile);
        let (single, multi) = count_measurements(machine, cpus, profile);
        let warm = match p.warmup {
            Warmup::Time(d) => d.as_secs_f64(),
            Warmup::Reps(_) => 0.01,
        };
        let per = p.time_budget.as_secs_f64() + warm + 0.05;
        single as f64 * per + multi as f64 * (per + 0.01)
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let ghz = ctx.facts.ghz_single;
        let step = &mut ctx.step;
        run_all(
            ctx.machine,
            &ctx.cpus,
            ctx.profile,
            ghz,
            ctx.stop,
            *step,
            out,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_counts_cover_two_to_all() {
        assert_eq!(sweep_counts(2, Profile::Standard), vec![2]);
        assert_eq!(sweep_counts(6, Profile::Standard), vec![2, 4, 6]);
        assert_eq!(sweep_counts(8, Profile::Standard), vec![2, 4, 8]);
        assert_eq!(sweep_counts(64, Profile::Quick), vec![2, 64]);
        assert!(sweep_counts(1, Profile::Quick).is_empty());
    }
}

//! SIMD × threads × SMT scaling (seed 004): ChaCha20 keystream in every SIMD
//! form the CPU supports, at 1 thread, one thread per physical core and all
//! logical CPUs (plus a sweep between with `full`), pinned. Gives the
//! throughput and per-thread efficiency table in seed 004's form, the clock
//! at each point (from the frequency experiment), the SMT yield per variant
//! (what the second hardware thread adds, as a fraction of a core) and the
//! recommendation the figures support.
//!
//! Also holds the helpers the other compute experiments share (policies,
//! thread points, pinned single/team throughput).

mod table_view;
pub mod text;
pub mod view;

use crate::base::CpuSet;
use crate::experiments::compute::payload::{
    CountedData, SimdBestData, SimdEfficiencyData, SimdThroughputData, SmtYieldData, VariantCheck,
    VerifiedData,
};
use crate::experiments::experiment::{
    one_cpu_per_core, ExpCtx, Experiment, Facts, Profile, WithParams,
};
use crate::harness::counted::{self, Counted};
use crate::harness::measure::{measure, measure_team, Policy, TeamMeasurement, Warmup};
use crate::kernels::chacha::{self, Variant, CHUNK_BYTES};
use crate::machine::MachineInfo;
use crate::placement::pin::AffinityGuard;
use crate::placement::team::{Team, ThreadCtx};
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub struct Simd;

pub const EXP: &str = "simd";
/// Every supported ChaCha20 form verified (count; digests in data).
pub const VERIFIED_VARIANTS: MetricId = MetricId::new(EXP, "verified_variants");
/// Aggregate MB/s of one variant at one thread point (params variant, threads).
pub const THROUGHPUT: MetricId = MetricId::new(EXP, "throughput");
/// Per-thread throughput against one thread (%).
pub const EFFICIENCY: MetricId = MetricId::new(EXP, "efficiency");
/// What the second hardware thread adds, as a fraction of a core.
pub const SMT_YIELD: MetricId = MetricId::new(EXP, "smt_yield");
/// The best throughput over every variant and thread point.
pub const BEST_THROUGHPUT: MetricId = MetricId::new(EXP, "best_throughput");
/// Counted IPC and GHz of the throughput runs (see [`counted_figures`]).
pub const IPC: MetricId = MetricId::new(EXP, "ipc");
pub const GHZ: MetricId = MetricId::new(EXP, "ghz");
const METHOD_VERSION: u32 = 1;

/// Repetition policy for the compute experiments: shorter than the
/// profile's default in quick and standard (many figures share the budget).
pub fn compute_policy(profile: Profile) -> Policy {
    match profile {
        Profile::Quick => Policy {
            warmup: Warmup::Time(Duration::from_millis(10)),
            min_reps: 3,
            max_reps: 60,
            time_budget: Duration::from_millis(100),
            target_cv: Some(0.01),
            min_sample: Duration::from_millis(5),
            iters: None,
            max_iters: 1 << 40,
        },
        Profile::Standard => Policy {
            warmup: Warmup::Time(Duration::from_millis(30)),
            min_reps: 5,
            max_reps: 200,
            time_budget: Duration::from_millis(400),
            target_cv: Some(0.005),
            min_sample: Duration::from_millis(10),
            iters: None,
            max_iters: 1 << 40,
        },
        Profile::Full => profile.policy(),
    }
}

/// Rough wall time of one figure under [`compute_policy`], seconds
/// (calibration + warm-up + budget + team start-up).
pub fn secs_per_figure(profile: Profile) -> f64 {
    let p = compute_policy(profile);
    let warm = match p.warmup {
        Warmup::Time(d) => d.as_secs_f64(),
        Warmup::Reps(_) => 0.05,
    };
    p.time_budget.as_secs_f64() + warm + p.min_sample.as_secs_f64() * 4.0 + 0.02
}

/// CPUs in the order threads are added: one per physical core first (the
/// lowest CPU of each core), then the remaining hardware threads.
pub fn ordered_cpus(machine: &MachineInfo, cpus: &CpuSet) -> Vec<usize> {
    let per_core = one_cpu_per_core(machine, cpus);
    let mut v = per_core.to_vec();
    v.extend(cpus.difference(&per_core).iter());
    v
}

/// One thread-count point of a scaling study.
#[derive(Clone, Debug)]
pub struct Point {
    /// `1`, `per_core`, `all`, or a count for sweep points.
    pub label: String,
    pub cpus: CpuSet,
}

/// The thread points: 1, one per core, all logical CPUs (only when it
/// differs from one per core), and with `full` a sweep of counts between.
/// Returns the points and, when `all` is left out, why.
pub fn thread_points(
    machine: &MachineInfo,
    cpus: &CpuSet,
    profile: Profile,
) -> (Vec<Point>, Option<String>) {
    let order = ordered_cpus(machine, cpus);
    let per_core = one_cpu_per_core(machine, cpus);
    let mut pts = Vec::new();
    if order.is_empty() {
        return (pts, Some("no usable CPU".into()));
    }
    pts.push(Point {
        label: "1".into(),
        cpus: CpuSet::from_ids([order[0]]),
    });
    let mut counts: Vec<usize> = Vec::new();
    if profile == Profile::Full {
        let mut n = 2;
        while n < order.len() {
            if n != per_core.len() {
                counts.push(n);
            }
            n *= 2;
        }
    }
    let push_count = |n: usize, pts: &mut Vec<Point>| {
        pts.push(Point {
            label: n.to_string(),
            cpus: order[..n].iter().copied().collect(),
        })
    };
    for &n in counts.iter().filter(|&&n| n < per_core.len()) {
        push_count(n, &mut pts);
    }
    if per_core.len() > 1 {
        pts.push(Point {
            label: "per_core".into(),
            cpus: per_core.clone(),
        });
    }
    for &n in counts.iter().filter(|&&n| n > per_core.len()) {
        push_count(n, &mut pts);
    }
    let all_reason = if cpus.len() > per_core.len() {
        pts.push(Point {
            label: "all".into(),
            cpus: cpus.clone(),
        });
        None
    } else if per_core.len() == 1 {
        Some("one usable CPU: no multi-thread points".to_string())
    } else {
        Some("no SMT among the usable CPUs: all logical CPUs = one thread per core".to_string())
    };
    (pts, all_reason)
}

/// The measured clock that applies to a thread point, and where it came from.
pub fn ghz_at(facts: &Facts, label: &str) -> (Option<f64>, String) {
    match label {
        "1" => match facts.ghz_single {
            Some(g) => (Some(g), "frequency: single_core (measured this run)".into()),
            None => (
                None,
                "not available: the frequency experiment did not run".into(),
            ),
        },
        "per_core" | "all" => match facts.ghz_all {
            Some(g) => (
                Some(g),
                if label == "all" {
                    "frequency: all_cores (one thread per core; the SMT clock is not separately measured)".into()
                } else {
                    "frequency: all_cores (measured this run)".into()
                },
            ),
            None => (
                None,
                "not available: the frequency experiment did not run".into(),
            ),
        },
        _ => (
            None,
            "not available: the clock is measured only at 1 thread and one thread per core".into(),
        ),
    }
}

/// Pinned single-thread measurement: samples in units per second, where one
/// kernel iteration is `units_per_iter` units.
pub fn single_rate<F>(
    cpu: usize,
    policy: &Policy,
    stop: &AtomicBool,
    units_per_iter: f64,
    f: F,
) -> Result<Vec<f64>>
where
    F: FnMut(u64) -> u64,
{
    let _g = AffinityGuard::pin(cpu)?;
    let m = measure(policy, stop, f)?;
    Ok(rates(&m.samples, units_per_iter))
}

fn rates(ns: &[f64], units_per_iter: f64) -> Vec<f64> {
    ns.iter().map(|ns| units_per_iter / ns * 1e9).collect()
}

/// Why a figure was not measured, from its measurement's error: the reason
/// line of a *not available* record (a team that lost a thread: panicked,
/// ended, never arrived; a CPU that cannot be pinned), so the next figures
/// are measured. After Ctrl-C the error itself (the session keeps what
/// finished).
pub fn not_measured(stop: &AtomicBool, e: anyhow::Error) -> Result<String> {
    if stop.load(Ordering::Relaxed) {
        return Err(e);
    }
    Ok(format!("{e:#}").replace('\n', " "))
}

/// A figure's measurement, or (after writing its *not available* record,
/// made by `unavailable` from the reason, see [`not_measured`]) None.
pub fn measured_or_reason<T>(
    measured: Result<T>,
    stop: &AtomicBool,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    unavailable: impl FnOnce(&str) -> ResultRecord,
) -> Result<Option<T>> {
    match measured {
        Ok(m) => Ok(Some(m)),
        Err(e) => {
            out(unavailable(&not_measured(stop, e)?))?;
            Ok(None)
        }
    }
}

/// What counters cover around an in-process measurement.
pub const COUNTED_SCOPE_SINGLE: &str =
    "the pinned measuring thread over calibration, warm-up and samples (the kernel, plus the harness's clock reads between calls)";
/// What counters cover around a team measurement.
pub const COUNTED_SCOPE_TEAM: &str =
    "every pinned worker thread over calibration, warm-up and samples (the kernel, plus each round's start barrier and wake-up)";

/// [`single_rate`] with counters on the measuring thread around the whole
/// measurement (one counter group: a few system calls before and after).
pub fn single_rate_counted<F>(
    cpu: usize,
    policy: &Policy,
    stop: &AtomicBool,
    units_per_iter: f64,
    f: F,
) -> Result<(Vec<f64>, Counted)>
where
    F: FnMut(u64) -> u64,
{
    let _g = AffinityGuard::pin(cpu)?;
    let (m, c) = counted::on_this_thread(COUNTED_SCOPE_SINGLE, || measure(policy, stop, f));
    Ok((rates(&m?.samples, units_per_iter), c))
}

/// A team measurement: per round, the aggregate rate (all threads' units
/// over the team time, units per second); and each thread's median rate.
pub fn team_rate<F>(
    cpus: &CpuSet,
    policy: &Policy,
    stop: &AtomicBool,
    units_per_iter: f64,
    f: F,
) -> Result<(Vec<f64>, Vec<f64>)>
where
    F: Fn(ThreadCtx<'_>, u64) -> u64 + Sync,
{
    let mut team = Team::new(&cpus.to_vec())?;
    let m = measure_team(&mut team, policy, stop, f)?;
    Ok(team_rates(&m, team.size(), units_per_iter))
}

fn team_rates<R>(m: &TeamMeasurement<R>, n: usize, units_per_iter: f64) -> (Vec<f64>, Vec<f64>) {
    let n = n as f64;
    let agg = m
        .samples
        .iter()
        .map(|ns| n * units_per_iter / ns * 1e9)
        .collect();
    let per = m
        .thread_stats
        .iter()
        .map(|s| {
            if s.median > 0.0 {
                units_per_iter / s.median * 1e9
            } else {
                f64::NAN
            }
        })
        .collect();
    (agg, per)
}

/// [`team_rate`] with counters on every worker thread around the whole
/// measurement.
pub fn team_rate_counted<F>(
    cpus: &CpuSet,
    policy: &Policy,
    stop: &AtomicBool,
    units_per_iter: f64,
    f: F,
) -> Result<(Vec<f64>, Vec<f64>, Counted)>
where
    F: Fn(ThreadCtx<'_>, u64) -> u64 + Sync,
{
    let mut team = Team::new(&cpus.to_vec())?;
    let (m, c) = counted::on_team(&mut team, COUNTED_SCOPE_TEAM, |t| {
        measure_team(t, policy, stop, f)
    });
    let (agg, per) = team_rates(&m?, team.size(), units_per_iter);
    Ok((agg, per, c))
}

/// Turbo/boost state as the machine snapshot reports it.
pub fn turbo_state(machine: &MachineInfo) -> (Option<bool>, String) {
    let boost = &machine.frequency.boost;
    match boost.enabled {
        Some(true) => (Some(true), "on".into()),
        Some(false) => (Some(false), "off".into()),
        None => (
            None,
            boost
                .reason
                .as_deref()
                .map(|r| format!("unknown ({r})"))
                .unwrap_or_else(|| "unknown (not reported by the machine snapshot)".into()),
        ),
    }
}

/// SMT facts of the CPUs: (cores, logical CPUs, threads per core if uniform).
pub fn smt_shape(machine: &MachineInfo, cpus: &CpuSet) -> (usize, usize) {
    (one_cpu_per_core(machine, cpus).len(), cpus.len())
}

/// What the second hardware thread adds, as a fraction of a core:
/// `(T_all − T_per_core) / (T_per_core / cores) / extra_threads`.
pub fn smt_yield(t_per_core: f64, t_all: f64, cores: usize, logical: usize) -> Option<f64> {
    let extra = logical.checked_sub(cores)?;
    if extra == 0 || cores == 0 || t_per_core <= 0.0 {
        return None;
    }
    Some((t_all - t_per_core) / (t_per_core / cores as f64) / extra as f64)
}

/// The recommendation the SMT yield supports.
pub fn smt_advice(variant: &str, y: f64) -> String {
    if y < 0.10 {
        format!("with {variant} use one thread per physical core: the second hardware thread adds {:.2} of a core", y)
    } else if y < 0.30 {
        format!("with {variant} SMT adds little ({:.2} of a core): one thread per physical core unless every last bit of throughput counts", y)
    } else {
        format!(
            "with {variant} use all logical CPUs: the second hardware thread adds {:.2} of a core",
            y
        )
    }
}

/// Method version of the counted IPC / GHz figures.
const COUNTED_METHOD_VERSION: u32 = 1;

/// The counted figures of a record's windows, for its `data`: `ipc`,
/// `ghz_counted` (medians over the windows) and, when absent, the counters'
/// reason (`ipc_reason`, `ghz_counted_reason`); null, never 0.
pub fn counted_data(windows: &[Counted]) -> CountedData {
    let ipcs: Vec<Result<f64, String>> = windows.iter().map(|c| c.ipc()).collect();
    let ghzs: Vec<Result<f64, String>> = windows.iter().map(|c| c.ghz()).collect();
    let (i, iw) = counted::median_or_reason(&ipcs);
    let (g, gw) = counted::median_or_reason(&ghzs);
    let med = |v: &[f64]| crate::base::Stats::from_samples(v).map(|s| s.median);
    CountedData {
        ipc: med(&i),
        ipc_reason: iw,
        ghz_counted: med(&g),
        ghz_counted_reason: gw,
    }
}

/// IPC and GHz as figures of their own (`ipc` and `ghz` of the calling
/// experiment, e.g. [`IPC`] and [`GHZ`], with `params`), one sample per
/// counted window. Without a figure: nothing, or with `always` a "not
/// available" record carrying the counters' reason.
pub fn counted_figures(
    (ipc, ghz): (MetricId, MetricId),
    params: &[(&str, Value)],
    windows: &[Counted],
    always: bool,
) -> Vec<ResultRecord> {
    let scope = windows
        .first()
        .map(|c| c.scope.clone())
        .unwrap_or_else(|| "nothing".into());
    let mut out = Vec::new();
    for (id, unit, what) in [
        (ipc, "IPC", "instructions / cycles"),
        (
            ghz,
            "GHz",
            "cycles / task-clock (average clock while running)",
        ),
    ] {
        let figs: Vec<Result<f64, String>> = windows
            .iter()
            .map(|c| if id == ipc { c.ipc() } else { c.ghz() })
            .collect();
        let (ok, why) = counted::median_or_reason(&figs);
        let mut r = match why {
            None => ResultRecord::of(id, unit, true)
                .with_method(
                    &format!(
                        "{what} counted with perf_event_open over {scope}; median of the counted runs"
                    ),
                    COUNTED_METHOD_VERSION,
                )
                .with_samples(ok),
            Some(w) if always => ResultRecord::unavailable(id.experiment, id.metric, unit, &w)
                .with_method(
                    &format!("{what} counted with perf_event_open over {scope}"),
                    COUNTED_METHOD_VERSION,
                ),
            Some(_) => continue,
        };
        if id == ghz {
            if let Some(note) = fixed_gigahertz_note(&figs) {
                r = r.with_note(note);
            }
        }
        for (k, v) in params {
            r = r.with_param(k, v.clone());
        }
        out.push(r);
    }
    out
}

/// A cycle counter that ticks at exactly 1 GHz in every counted window is
/// what an emulator's PMU does (QEMU's counts nanoseconds, TCG and its
/// virtual PMU alike): say so beside the figure. A real core clocked at
/// exactly 1 GHz reads the same, so the figure is labelled, not dropped.
fn fixed_gigahertz_note(figs: &[Result<f64, String>]) -> Option<&'static str> {
    let ok: Vec<f64> = figs
        .iter()
        .filter_map(|f| f.as_ref().ok().copied())
        .collect();
    (ok.len() >= 2 && ok.iter().all(|g| (g - 1.0).abs() < 0.005)).then_some(
        "cycles ticked at exactly 1 GHz in every counted run: an emulated PMU (QEMU counts nanoseconds as cycles) gives exactly this, and then this GHz and the IPC describe the emulator, not the core",
    )
}

fn method_text(v: Variant) -> String {
    format!(
        "ChaCha20 keystream (RFC 8439), {} form ({} block(s) per step, {}-bit registers), {} KiB per kernel iteration into an L1-resident buffer; pinned threads released together; aggregate MB/s = threads × bytes / team time; median of samples",
        v.name(),
        v.lanes(),
        v.width_bits(),
        CHUNK_BYTES / 1024
    )
}

/// (thread-point label, threads, median throughput).
type PointResult = (String, usize, f64);

/// Verify every supported variant: RFC 8439 vectors and the same digest as
/// the scalar form. Returns (variant, Ok(digest) | Err(reason)).
pub fn verify_variants() -> Vec<(Variant, Result<u64, String>)> {
    // 35 blocks: two full 16-block AVX-512 steps plus a scalar tail.
    let mut buf = vec![0u8; 35 * 64];
    let reference = chacha::check_rfc8439(Variant::Scalar)
        .and_then(|_| chacha::verification_digest(Variant::Scalar, &mut buf));
    Variant::ALL
        .into_iter()
        .map(|v| {
            let r = match v.unsupported_reason() {
                Some(r) => Err(format!("not supported: {r}")),
                None => chacha::check_rfc8439(v)
                    .and_then(|_| chacha::verification_digest(v, &mut buf))
                    .and_then(|d| match &reference {
                        Ok(want) if *want == d => Ok(d),
                        Ok(want) => Err(format!(
                            "digest {d:016x} differs from the scalar form's {want:016x}"
                        )),
                        Err(e) => Err(format!("the scalar reference failed: {e}")),
                    }),
            };
            (v, r)
        })
        .collect()
}

/// Variants selected for measuring: supported and verified, optionally
/// restricted to `only`.
fn selected(verified: &[(Variant, Result<u64, String>)], only: &[Variant]) -> Vec<Variant> {
    verified
        .iter()
        .filter(|(v, r)| r.is_ok() && (only.is_empty() || only.contains(v)))
        .map(|(v, _)| *v)
        .collect()
}

/// The study, with an optional variant filter (the `simd` command's
/// `--variants`).
pub fn run_study(
    ctx: &mut ExpCtx,
    only: &[Variant],
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let policy = compute_policy(ctx.profile);
    let verified = verify_variants();
    let (turbo, turbo_text) = turbo_state(ctx.machine);
    let (cores, logical) = smt_shape(ctx.machine, &ctx.cpus);

    // 1. Verification record.
    out(verification_record(&verified))?;

    let variants = selected(&verified, only);
    for (v, r) in &verified {
        if let Err(e) = r {
            if only.is_empty() || only.contains(v) {
                out(ResultRecord::unavailable(
                    THROUGHPUT.experiment,
                    THROUGHPUT.metric,
                    "MB/s",
                    e,
                )
                .with_param("variant", v.name())
                .with_param("threads", "1")
                .with_method(&method_text(*v), METHOD_VERSION))?;
            }
        }
    }
    let (points, all_reason) = thread_points(ctx.machine, &ctx.cpus, ctx.profile);

    // 2. Throughput at every point.
    // results[variant][point label] = median MB/s
    let mut table: Vec<(Variant, Vec<PointResult>)> = Vec::new();
    for v in &variants {
        let mut row = Vec::new();
        for p in &points {
            if let Some(pr) = throughput_point(ctx, out, &policy, *v, p, turbo)? {
                row.push(pr);
            }
        }
        if let Some(r) = &all_reason {
            out(
                ResultRecord::unavailable(THROUGHPUT.experiment, THROUGHPUT.metric, "MB/s", r)
                    .with_param("variant", v.name())
                    .with_param("threads", "all")
                    .with_method(&method_text(*v), METHOD_VERSION),
            )?;
        }
        table.push((*v, row));
    }

    // 3. Per-thread efficiency vs 1 thread (seed 004's table).
    efficiency_records(&table, out)?;
    // 4. Ordering of the variants at 1 thread.
    let order_notes = ordering_notes(&table);
    // 5. SMT yield and the recommendation.
    let advice = smt_records(&table, all_reason.as_deref(), cores, logical, out)?;
    // 6. Headline: the best throughput and what to do.
    let notes = HeadlineNotes {
        order_notes: &order_notes,
        advice: &advice,
        all_reason: all_reason.as_deref(),
    };
    if let Some(r) = best_record(&table, &notes, &turbo_text, cores, logical) {
        out(r)?;
    }
    Ok(())
}

/// Step 1 of `run_study`: how many variants passed verification, with each
/// one's digest or reason.
fn verification_record(verified: &[(Variant, Result<u64, String>)]) -> ResultRecord {
    let ok: Vec<&(Variant, Result<u64, String>)> =
        verified.iter().filter(|(_, r)| r.is_ok()).collect();
    let variants = verified
        .iter()
        .map(|(v, r)| {
            (
                v.name().to_string(),
                match r {
                    Ok(d) => VariantCheck::Passed {
                        digest: format!("{d:016x}"),
                        rfc8439: "pass".into(),
                        matches_scalar: true,
                    },
                    Err(e) => VariantCheck::Failed {
                        digest: (),
                        reason: e.clone(),
                    },
                },
            )
        })
        .collect();
    let mut vr = ResultRecord::of(VERIFIED_VARIANTS, "variants", true)
        .with_method(
            "each supported form checked against RFC 8439 2.3.2 (block at every lane position) and 2.4.2 (encryption), then 35 blocks compared with the scalar form (FNV-1a digest)",
            METHOD_VERSION,
        )
        .with_payload(&VerifiedData { variants });
    vr.value = Some(ok.len() as f64);
    if let Some((_, Ok(d))) = ok.first() {
        vr = vr.with_note(&format!(
            "{} form(s) ({}) give the same keystream (digest {d:016x}) and pass RFC 8439",
            ok.len(),
            ok.iter()
                .map(|(v, _)| v.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    vr
}

/// Step 2 of `run_study`: variant `v` at thread point `p`, its throughput
/// record and counted figures; the point's median when measured.
fn throughput_point(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
    v: Variant,
    p: &Point,
    turbo: Option<bool>,
) -> Result<Option<PointResult>> {
    (ctx.step)(&format!(
        "{} × {} thread(s) ({})",
        v.name(),
        p.cpus.len(),
        p.label
    ));
    let measured = if p.cpus.len() == 1 {
        let cpu = p.cpus.first().unwrap_or(0);
        single_rate_counted(cpu, policy, ctx.stop, CHUNK_BYTES as f64 / 1e6, |it| {
            chacha::run(v, it, 0)
        })
        .map(|(s, c)| (s, Vec::new(), c))
    } else {
        team_rate_counted(
            &p.cpus,
            policy,
            ctx.stop,
            CHUNK_BYTES as f64 / 1e6,
            |t, it| chacha::run(v, it, t.index as u64 * 1_000_000),
        )
    };
    let unavailable = |why: &str| {
        ResultRecord::unavailable(THROUGHPUT.experiment, THROUGHPUT.metric, "MB/s", why)
            .with_param("variant", v.name())
            .with_param("threads", p.label.as_str())
            .with_method(&method_text(v), METHOD_VERSION)
    };
    let Some((agg, per_thread, cnt)) = measured_or_reason(measured, ctx.stop, out, unavailable)?
    else {
        return Ok(None);
    };
    let windows = [cnt];
    let (ghz, ghz_src) = ghz_at(ctx.facts, &p.label);
    let mut rec = ResultRecord::of(THROUGHPUT, "MB/s", true)
        .with_param("variant", v.name())
        .with_param("threads", p.label.as_str())
        .with_method(&method_text(v), METHOD_VERSION)
        .with_samples(agg);
    let n = p.cpus.len();
    let cpb = match (rec.value, ghz) {
        (Some(mbs), Some(g)) if mbs > 0.0 => Some(g * 1e9 * n as f64 / (mbs * 1e6)),
        _ => None,
    };
    rec = rec
        .with_payload(&SimdThroughputData {
            cpus: p.cpus.to_string(),
            threads: n,
            per_thread_mb_s: per_thread,
            ghz,
            ghz_source: ghz_src,
            cycles_per_byte: cpb,
            lanes: v.lanes(),
            width_bits: v.width_bits(),
            turbo,
            counted: counted_data(&windows),
        })
        .with_counters(counted::to_value(&windows));
    if let Some(c) = cpb {
        rec = rec.with_note(&format!(
            "{c:.2} cycles per byte per thread at {:.2} GHz",
            ghz.unwrap_or(0.0)
        ));
    }
    let point = rec.value.map(|val| (p.label.clone(), n, val));
    let measured = rec.value.is_some();
    out(rec)?;
    if measured {
        counted_point_records(out, v, p, &windows)?;
    }
    Ok(point)
}

/// Step 2 of `run_study`: the counted IPC and GHz of variant `v` at point `p`.
fn counted_point_records(
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    v: Variant,
    p: &Point,
    windows: &[Counted],
) -> Result<()> {
    for r in counted_figures(
        (IPC, GHZ),
        &[
            ("variant", json!(v.name())),
            ("threads", json!(p.label.as_str())),
        ],
        windows,
        false,
    ) {
        out(r)?;
    }
    Ok(())
}

/// Step 3 of `run_study`: each variant's per-thread efficiency at each point
/// against its 1-thread throughput.
fn efficiency_records(
    table: &[(Variant, Vec<PointResult>)],
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    for (v, row) in table {
        let Some(one) = row.iter().find(|r| r.0 == "1").map(|r| r.2) else {
            continue;
        };
        for (label, n, t) in row.iter().filter(|r| r.0 != "1") {
            let eff = t / *n as f64 / one * 100.0;
            let mut r = ResultRecord::of(EFFICIENCY, "%", true)
                .with_param("variant", v.name())
                .with_param("threads", label.as_str())
                .with_method(
                    "per-thread throughput at this point / throughput of 1 thread (seed 004's efficiency), from the medians",
                    METHOD_VERSION,
                )
                .with_payload(&SimdEfficiencyData {
                    threads: *n,
                    throughput_mb_s: *t,
                    one_thread_mb_s: one,
                });
            r.value = Some(eff);
            out(r)?;
        }
    }
    Ok(())
}

/// Step 4 of `run_study`: a note for each variant not faster at 1 thread
/// than the narrower one before it.
fn ordering_notes(table: &[(Variant, Vec<PointResult>)]) -> Vec<String> {
    let ones: Vec<(Variant, f64)> = table
        .iter()
        .filter_map(|(v, row)| row.iter().find(|r| r.0 == "1").map(|r| (*v, r.2)))
        .collect();
    let mut order_notes = Vec::new();
    for w in ones.windows(2) {
        let ((a, ta), (b, tb)) = (w[0], w[1]);
        if tb <= ta {
            order_notes.push(format!(
                "exception: {} ({:.0} MB/s) is not faster than {} ({:.0} MB/s) at 1 thread; wider registers do not pay here (possible causes, not measured: a lower clock under wide vectors, 512-bit operations issued on fewer ports, or a virtual machine's vector state handling)",
                b.name(), tb, a.name(), ta
            ));
        }
    }
    order_notes
}

/// Step 5 of `run_study`: each variant's SMT yield record; the advice given.
fn smt_records(
    table: &[(Variant, Vec<PointResult>)],
    all_reason: Option<&str>,
    cores: usize,
    logical: usize,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<Vec<String>> {
    let mut advice = Vec::new();
    for (v, row) in table {
        let pc = row.iter().find(|r| r.0 == "per_core").map(|r| r.2);
        let all = row.iter().find(|r| r.0 == "all").map(|r| r.2);
        let rec = match (pc, all) {
            (Some(pc), Some(all)) => match smt_yield(pc, all, cores, logical) {
                Some(y) => {
                    let a = smt_advice(v.name(), y);
                    advice.push(a.clone());
                    let mut r = ResultRecord::of(SMT_YIELD, "cores", true)
                        .with_param("variant", v.name())
                        .with_method(
                            "(throughput at all logical CPUs - at one thread per core) / (per-core throughput per core) / extra hardware threads: what each extra hardware thread adds, as a fraction of a core",
                            METHOD_VERSION,
                        )
                        .with_payload(&SmtYieldData {
                            per_core_mb_s: pc,
                            all_mb_s: all,
                            cores,
                            logical,
                        })
                        .with_note(&a);
                    r.value = Some(y);
                    r
                }
                None => ResultRecord::unavailable(
                    SMT_YIELD.experiment,
                    SMT_YIELD.metric,
                    "cores",
                    "no extra hardware threads among the usable CPUs",
                )
                .with_param("variant", v.name()),
            },
            _ => {
                let reason = all_reason.map(str::to_string).unwrap_or_else(|| {
                    "the per-core or all-CPU throughput was not measured".into()
                });
                ResultRecord::unavailable(SMT_YIELD.experiment, SMT_YIELD.metric, "cores", &reason)
                    .with_param("variant", v.name())
            }
        };
        out(rec)?;
    }
    Ok(advice)
}

/// The notes steps 4 and 5 of `run_study` hand to the headline record.
struct HeadlineNotes<'a> {
    /// Variants not faster than narrower ones.
    order_notes: &'a [String],
    /// SMT advice, one per variant.
    advice: &'a [String],
    /// Why the all-CPU point was not measured, if it was not.
    all_reason: Option<&'a str>,
}

/// Step 6 of `run_study`: the best throughput over the table, with the
/// ordering notes and the recommendation; None when nothing was measured.
fn best_record(
    table: &[(Variant, Vec<PointResult>)],
    notes: &HeadlineNotes,
    turbo_text: &str,
    cores: usize,
    logical: usize,
) -> Option<ResultRecord> {
    let best = table
        .iter()
        .flat_map(|(v, row)| row.iter().map(move |r| (*v, r.0.clone(), r.1, r.2)))
        .max_by(|a, b| a.3.total_cmp(&b.3));
    let (v, label, n, t) = best?;
    let mut r = ResultRecord::of(BEST_THROUGHPUT, "MB/s", true)
        .with_method(
            "the highest median throughput over every measured variant and thread point",
            METHOD_VERSION,
        )
        .with_payload(&SimdBestData {
            variant: v.name().to_string(),
            threads: label.clone(),
            n,
            turbo: turbo_text.to_string(),
            cores,
            logical,
        })
        .with_note(&format!(
            "best: {} with {n} thread(s) ({label}); turbo {turbo_text}",
            v.name()
        ));
    r.value = Some(t);
    for n in notes.order_notes {
        r = r.with_note(n);
    }
    if notes.advice.is_empty() {
        r = r.with_note(&format!(
            "no SMT result: {}",
            notes.all_reason.unwrap_or("not measured")
        ));
    }
    for a in notes.advice {
        r = r.with_note(&format!("recommendation: {a}"));
    }
    Some(r)
}

impl Experiment for Simd {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "ChaCha20 scalar/SSE2/AVX2/AVX-512/NEON/SVE × 1 thread, per core, all CPUs: efficiency, SMT yield"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        let variants = Variant::ALL
            .iter()
            .filter(|v| runs_on(machine, **v))
            .count();
        let (pts, _) = thread_points(machine, cpus, profile);
        variants as f64 * pts.len() as f64 * secs_per_figure(profile)
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        run_study(ctx, &[], out)
    }
}

/// Whether `machine` runs variant `v`, by its recorded SIMD levels (so that
/// `run --list --sysroot` plans a recorded machine, not this one); by this
/// CPU when no flag list was read.
fn runs_on(machine: &MachineInfo, v: Variant) -> bool {
    let isa = &machine.isa;
    if isa.simd.is_empty() && isa.family != "x86" && isa.family != "arm" {
        return v.supported();
    }
    let has = |s: &str| isa.simd.iter().any(|x| x == s);
    match v {
        Variant::Scalar => true,
        Variant::Sse2 => has("SSE2"),
        Variant::Avx2 => has("AVX2"),
        Variant::Avx512 => has("AVX-512"),
        Variant::Neon => has("NEON"),
        Variant::Sve => has("SVE"),
    }
}

/// `cpuscope simd --variants`'s [`Params`].
impl WithParams for Simd {
    type Params = Params;
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut Params,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        run_study(ctx, &p.variants, out)
    }
}

/// What `cpuscope simd` may change: which ChaCha20 forms (empty: every one).
#[derive(Clone, Debug, Default)]
pub struct Params {
    pub variants: Vec<Variant>,
}

impl Params {
    /// Parse `--variants` (names; blanks ignored).
    pub fn parse(list: &[String]) -> Result<Params> {
        if list.iter().any(|s| s.trim().is_empty()) {
            anyhow::bail!(
                "--variants: an empty name (give scalar, sse2, avx2, avx512, neon or sve; leave --variants out for all)"
            );
        }
        let variants = list
            .iter()
            .map(|s| {
                Variant::parse(s).ok_or_else(|| {
                    anyhow::anyhow!(
                        "unknown SIMD variant '{s}' (scalar, sse2, avx2, avx512, neon, sve)"
                    )
                })
            })
            .collect::<Result<_>>()?;
        Ok(Params { variants })
    }
}

#[cfg(test)]
mod tests;

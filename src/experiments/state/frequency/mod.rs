//! Effective frequency: dependent integer chains (one link per cycle) timed
//! on one core, on one thread per core at once, on all usable CPUs at once,
//! and on SMT siblings together; set against what the kernel declares.
//!
//! Method (docs/methods.md, "Effective frequency"): a chain of `CHAIN_LEN`
//! dependent `add reg, reg` per loop iteration runs at one link per cycle, so
//! GHz = links / ns. `add reg, imm` is NOT used: Golden Cove and later fold
//! immediate adds at rename and run such chains faster than one per cycle.
//! An `xor reg, reg` chain is the independent second method.

pub mod view;

use crate::base::timer::Timer;
use crate::base::CpuSet;
use crate::experiments::experiment::{one_cpu_per_core, smt_groups, ExpCtx, Experiment, Profile};
use crate::experiments::state::payload::{CpuClock, DeclaredClock, SingleCoreData, TeamClockData};
use crate::harness::measure::{measure, measure_bracketed, measure_team, Policy};
use crate::kernels::chains::{Chain, CHAIN_LEN};
use crate::machine::MachineInfo;
use crate::placement::pin::AffinityGuard;
use crate::placement::team::Team;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use std::time::Duration;

pub struct Frequency;

pub const EXP: &str = "frequency";
/// GHz of one core (add chain), the headline; per-CPU figures in data.
pub const SINGLE_CORE: MetricId = MetricId::new(EXP, "single_core");
/// GHz of the same core by the xor chain (the independent check).
pub const SINGLE_CORE_XOR: MetricId = MetricId::new(EXP, "single_core_xor");
/// The xor chain's GHz over the add chain's, sample by sample.
pub const XOR_VS_ADD: MetricId = MetricId::new(EXP, "xor_vs_add");
/// GHz by a 3-cycle imul chain (full profile).
pub const SINGLE_CORE_IMUL: MetricId = MetricId::new(EXP, "single_core_imul");
/// GHz with one thread per physical core at once.
pub const ALL_CORES: MetricId = MetricId::new(EXP, "all_cores");
/// GHz with every usable logical CPU at once (with SMT).
pub const ALL_CPUS: MetricId = MetricId::new(EXP, "all_cpus");
/// GHz of the hardware threads of one core together.
pub const SMT_PAIR: MetricId = MetricId::new(EXP, "smt_pair");
const METHOD_VERSION: u32 = 1;

/// Length of each add-chain reading around an xor sample.
const BRACKET: Duration = Duration::from_millis(2);

fn ghz_of(ns_per_iter: f64, chain: Chain) -> f64 {
    (CHAIN_LEN as f64) * chain.latency_cycles() / ns_per_iter
}

fn method_text(chain: Chain) -> String {
    format!(
        "dependent chain of {CHAIN_LEN} `{}` per iteration ({} cycle(s) each), timed by the harness; GHz = cycles / ns; median of samples",
        chain.name(),
        chain.latency_cycles()
    )
}

/// How many single-core measurements the profile allows.
fn single_core_sample(profile: Profile, per_core: &CpuSet) -> CpuSet {
    let cap = match profile {
        Profile::Quick => 1,
        Profile::Standard => 8,
        Profile::Full => usize::MAX,
    };
    let v = per_core.to_vec();
    if v.len() <= cap {
        return per_core.clone();
    }
    // Spread the sample over the list (first, last and evenly between).
    let mut out = CpuSet::new();
    for i in 0..cap {
        out.insert(v[i * (v.len() - 1) / (cap - 1).max(1)]);
    }
    out
}

/// GHz samples on one CPU, and a note when the samples were preempted.
fn single(
    cpu: usize,
    chain: Chain,
    policy: &Policy,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<(Vec<f64>, Option<String>)> {
    let _guard = AffinityGuard::pin(cpu)?;
    let m = measure(policy, stop, |iters| chain.run(iters, 1))?;
    Ok((
        m.samples.iter().map(|&ns| ghz_of(ns, chain)).collect(),
        m.preemption_note(),
    ))
}

/// Per round: mean of the threads' GHz; plus per-thread medians.
fn team(
    cpus: &CpuSet,
    chain: Chain,
    policy: &Policy,
    ctx: &ExpCtx,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut t = Team::new(&cpus.to_vec())?;
    let m = measure_team(&mut t, policy, ctx.stop, |_c, iters| chain.run(iters, 1))?;
    let n = m.thread_samples.len();
    let rounds = m.samples.len();
    let per_round: Vec<f64> = (0..rounds)
        .map(|r| {
            m.thread_samples
                .iter()
                .map(|ts| ghz_of(ts[r], chain))
                .sum::<f64>()
                / n as f64
        })
        .collect();
    let per_thread = m
        .thread_stats
        .iter()
        .map(|s| ghz_of(s.median, chain))
        .collect();
    Ok((per_round, per_thread))
}

/// Every clock the machine declares, from the typed snapshot (MHz).
fn declared(machine: &MachineInfo, timer_ghz: Option<f64>) -> DeclaredClock {
    let f = &machine.frequency;
    DeclaredClock {
        cpuinfo_mhz: f.declared.as_ref().map(|d| d.mean_mhz),
        cpuinfo_label: f.declared.as_ref().map(|d| d.label.clone()),
        cpufreq_max_mhz: f.max_khz.map(|k| k as f64 / 1000.0),
        cpufreq_base_mhz: f.base_khz.map(|k| k as f64 / 1000.0),
        model_name_mhz: f.nominal_mhz,
        tsc_mhz: timer_ghz.map(|g| g * 1000.0),
        cpufreq_reason: f.cpufreq_reason.clone(),
    }
}

/// One line listing every declared figure, labelled as declared.
fn declared_line(decl: &DeclaredClock) -> String {
    let mut parts = Vec::new();
    for (mhz, label) in [
        (decl.cpuinfo_mhz, "/proc/cpuinfo cpu MHz"),
        (decl.cpufreq_max_mhz, "cpufreq max"),
        (decl.cpufreq_base_mhz, "cpufreq base"),
        (decl.model_name_mhz, "model name"),
        (decl.tsc_mhz, "TSC rate (calibrated)"),
    ] {
        match mhz {
            Some(mhz) => parts.push(format!("{label} {mhz:.0} MHz")),
            None if label == "cpufreq max" => {
                let why = decl.cpufreq_reason.as_deref().unwrap_or("not exposed");
                parts.push(format!("cpufreq max n/a ({why})"));
            }
            None => {}
        }
    }
    format!("declared, not measured: {}", parts.join("; "))
}

/// Findings: where a declared figure differs from the measured one by > 5%.
fn disagreements(measured_ghz: f64, decl: &DeclaredClock) -> Vec<String> {
    let mut notes = Vec::new();
    for (mhz, label) in [
        (decl.cpuinfo_mhz, "/proc/cpuinfo 'cpu MHz'"),
        (decl.cpufreq_max_mhz, "cpufreq cpuinfo_max_freq"),
        (decl.tsc_mhz, "the TSC rate"),
        (decl.model_name_mhz, "the model name's nominal clock"),
    ] {
        if let Some(mhz) = mhz {
            let ratio = measured_ghz * 1000.0 / mhz;
            if (ratio - 1.0).abs() > 0.05 {
                notes.push(format!(
                    "finding: measured {:.0} MHz is {:+.0}% against {label} ({mhz:.0} MHz, declared)",
                    measured_ghz * 1000.0,
                    (ratio - 1.0) * 100.0
                ));
            }
        }
    }
    notes
}

/// A team's clock as its record's data.
fn team_data(cpus: &CpuSet, per_thread: &[f64]) -> TeamClockData {
    TeamClockData {
        cpus: cpus.to_string(),
        per_thread_ghz: per_thread.iter().map(|g| Some(*g)).collect(),
    }
}

impl Experiment for Frequency {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "effective core clock: one core, all cores, SMT siblings"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        let p = profile.policy();
        let per = p.time_budget.as_secs_f64() + 0.15;
        let singles = single_core_sample(profile, &one_cpu_per_core(machine, cpus)).len();
        let smt = if smt_groups(machine, cpus).is_empty() {
            0
        } else {
            2
        };
        per * (singles as f64 + 2.0 + 2.0 + smt as f64)
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let policy = ctx.profile.policy();
        let per_core = one_cpu_per_core(ctx.machine, &ctx.cpus);
        let first = match ctx.cpus.first() {
            Some(c) => c,
            None => {
                out(ResultRecord::unavailable(
                    SINGLE_CORE.experiment,
                    SINGLE_CORE.metric,
                    "GHz",
                    "no usable CPU",
                ))?;
                return Ok(());
            }
        };
        single_core_records(ctx, &policy, &per_core, first, out)?;
        xor_and_imul_checks(ctx, &policy, first, out)?;
        all_cores_record(ctx, &policy, &per_core, out)?;
        smt_records(ctx, &policy, out)?;
        Ok(())
    }
}

type Out<'a> = &'a mut dyn FnMut(ResultRecord) -> Result<()>;

/// Step 1, one core at a time (add chain) on a sample of cores: the headline
/// figure, measured beside every declared clock.
fn single_core_records(
    ctx: &mut ExpCtx,
    policy: &Policy,
    per_core: &CpuSet,
    first: usize,
    out: Out,
) -> Result<()> {
    let timer = Timer::new().info();
    let tsc_ghz = match timer.source {
        crate::base::timer::TimerSource::Tsc => Some(timer.ticks_per_ns),
        _ => None,
    };
    let decl = declared(ctx.machine, tsc_ghz);

    // 1. One core at a time (add chain), on a sample of cores.
    let sample = single_core_sample(ctx.profile, per_core);
    let mut per_cpu = Vec::new();
    let mut headline: Option<(Vec<f64>, Option<String>)> = None;
    for cpu in sample.iter() {
        (ctx.step)(&format!("single core, CPU {cpu}"));
        let (ghz, busy) = single(cpu, Chain::Add, policy, ctx.stop)?;
        let st = crate::base::Stats::from_samples(&ghz);
        per_cpu.push(CpuClock {
            cpu,
            ghz: st.as_ref().map(|s| s.median),
            cv: st.as_ref().map(|s| s.cv),
        });
        if headline.is_none() {
            headline = Some((ghz, busy));
        }
    }
    let (headline, busy) = headline.unwrap_or_default();
    let mut rec = ResultRecord::of(SINGLE_CORE, "GHz", true)
        .with_param("threads", 1)
        .with_method(&method_text(Chain::Add), METHOD_VERSION)
        .with_samples(headline)
        .with_note(&format!("measured on CPU {first}; per-CPU figures in data"));
    rec = rec.with_note(&declared_line(&decl));
    if let Some(b) = busy {
        rec = rec.with_note(&b);
    }
    if let Some(v) = rec.value {
        ctx.facts.ghz_single = Some(v);
        for n in disagreements(v, &decl) {
            rec = rec.with_note(&n);
        }
    }
    rec = rec.with_payload(&SingleCoreData {
        per_cpu,
        declared: decl,
        timer: serde_json::to_value(&timer).unwrap_or_default(),
    });
    out(rec)?;

    Ok(())
}

/// Step 2, independent checks on the first CPU: the xor chain bracketed by add
/// chain readings, and with the full profile the imul chain.
fn xor_and_imul_checks(ctx: &mut ExpCtx, policy: &Policy, first: usize, out: Out) -> Result<()> {
    // 2. Independent check: xor chain on the same CPU, every sample
    // bracketed by a short add-chain reading right before and after it,
    // so that the two methods are compared under the same conditions
    // (the host's clock moves from second to second).
    (ctx.step)("single core, xor chain (independent check)");
    let b = {
        let _guard = AffinityGuard::pin(first)?;
        measure_bracketed(
            policy,
            ctx.stop,
            BRACKET,
            |it| Chain::Add.run(it, 1),
            |it| Chain::Xor.run(it, 1),
        )?
    };
    let xs: Vec<f64> = b
        .subject
        .samples
        .iter()
        .map(|&ns| ghz_of(ns, Chain::Xor))
        .collect();
    let ratios: Vec<f64> = xs
        .iter()
        .zip(b.ref_before.iter().zip(&b.ref_after))
        .map(|(x, (a, c))| x / ((ghz_of(*a, Chain::Add) + ghz_of(*c, Chain::Add)) / 2.0))
        .collect();
    let mut xr = ResultRecord::of(SINGLE_CORE_XOR, "GHz", true)
        .with_param("threads", 1)
        .with_method(&method_text(Chain::Xor), METHOD_VERSION)
        .with_samples(xs);
    if let Some(n) = b.subject.preemption_note() {
        xr = xr.with_note(&n);
    }
    let mut agree = ResultRecord::of(XOR_VS_ADD, "ratio", true)
        .with_param("threads", 1)
        .with_method(
            &format!(
                "per sample: the xor chain's GHz over the mean of {} ms add-chain readings on the same CPU right before and right after it; median of samples; 1.000 = the two methods agree",
                BRACKET.as_millis()
            ),
            METHOD_VERSION,
        )
        .with_samples(ratios);
    if let Some(r) = agree.value {
        let note = format!(
            "the xor chain agrees with the add chain within {:.1}% (sample by sample, same conditions)",
            (r - 1.0).abs() * 100.0
        );
        xr = xr.with_note(&note);
        agree = agree.with_note(&note);
    }
    out(xr)?;
    out(agree)?;

    if ctx.profile == Profile::Full {
        (ctx.step)("single core, imul chain (3-cycle check)");
        let (ms, _) = single(first, Chain::Mul, policy, ctx.stop)?;
        out(ResultRecord::of(SINGLE_CORE_IMUL, "GHz", true)
            .with_param("threads", 1)
            .with_method(&method_text(Chain::Mul), METHOD_VERSION)
            .with_samples(ms)
            .with_note("assumes a 3-cycle 64-bit multiply; a different figure means a different latency, not a different clock"))?;
    }

    Ok(())
}

/// Step 3, one thread per physical core, all at once.
fn all_cores_record(ctx: &mut ExpCtx, policy: &Policy, per_core: &CpuSet, out: Out) -> Result<()> {
    // 3. One thread per physical core, all at once.
    let n = per_core.len();
    (ctx.step)(&format!("all cores ({n} threads, one per core)"));
    let (rounds, per_thread) = team(per_core, Chain::Add, policy, ctx)?;
    let mut all = ResultRecord::of(ALL_CORES, "GHz", true)
        .with_param("threads", "per_core")
        .with_method(
            &format!("{}; one pinned thread per physical core released by a barrier; sample = mean of the threads' GHz", method_text(Chain::Add)),
            METHOD_VERSION,
        )
        .with_samples(rounds)
        .with_payload(&team_data(per_core, &per_thread));
    if let (Some(s), Some(a)) = (ctx.facts.ghz_single, all.value) {
        ctx.facts.ghz_all = Some(a);
        all = all.with_note(&format!(
            "{:+.1}% against one core ({:.2} -> {:.2} GHz)",
            (a / s - 1.0) * 100.0,
            s,
            a
        ));
    }
    out(all)?;

    Ok(())
}

/// Step 4, all usable logical CPUs and one core's SMT siblings (differs from 3
/// only with SMT).
fn smt_records(ctx: &mut ExpCtx, policy: &Policy, out: Out) -> Result<()> {
    // 4. All usable logical CPUs (differs from 3 only with SMT).
    let groups = smt_groups(ctx.machine, &ctx.cpus);
    if groups.is_empty() {
        out(ResultRecord::unavailable(
            SMT_PAIR.experiment,
            SMT_PAIR.metric,
            "GHz",
            "no SMT: every usable core runs one hardware thread",
        )
        .with_param("threads", "smt_pair"))?;
    } else {
        (ctx.step)(&format!("all CPUs ({} threads)", ctx.cpus.len()));
        let (rounds, per_thread) = team(&ctx.cpus, Chain::Add, policy, ctx)?;
        out(ResultRecord::of(ALL_CPUS, "GHz", true)
            .with_param("threads", "all")
            .with_method(&method_text(Chain::Add), METHOD_VERSION)
            .with_samples(rounds)
            .with_payload(&team_data(&ctx.cpus, &per_thread)))?;
        let pair = &groups[0];
        (ctx.step)(&format!("SMT siblings {pair}"));
        let (rounds, per_thread) = team(pair, Chain::Add, policy, ctx)?;
        out(ResultRecord::of(SMT_PAIR, "GHz", true)
            .with_param("threads", "smt_pair")
            .with_method(
                &format!(
                    "{}; the hardware threads of one core together",
                    method_text(Chain::Add)
                ),
                METHOD_VERSION,
            )
            .with_samples(rounds)
            .with_payload(&team_data(pair, &per_thread)))?;
    }
    Ok(())
}

/// A short clock reading for the run's environment: the add chain on `cpu`,
/// 2 ms samples for about 60 ms, median GHz. Taken at the start and at the
/// end of `cpuscope run`, it tells whether the host's clock moved while the
/// run measured (VM hosts drift from minute to minute). None when the CPU
/// cannot be pinned or the chain has no implementation here.
pub fn sentinel_ghz(cpu: usize, stop: &std::sync::atomic::AtomicBool) -> Option<f64> {
    if !Chain::Add.supported() {
        return None;
    }
    let policy = Policy {
        warmup: crate::harness::measure::Warmup::Time(Duration::from_millis(5)),
        min_reps: 15,
        max_reps: 30,
        time_budget: Duration::from_millis(60),
        target_cv: None,
        min_sample: Duration::from_millis(2),
        iters: None,
        max_iters: 1 << 40,
    };
    let (ghz, _) = single(cpu, Chain::Add, &policy, stop).ok()?;
    crate::base::Stats::from_samples(&ghz).map(|s| s.median)
}

/// The environment note for two sentinel readings (GHz at start, at end).
pub fn sentinel_note(cpu: usize, start: f64, end: f64) -> String {
    let moved = end / start - 1.0;
    let mut n = format!(
        "clock sentinel (add chain on CPU {cpu}, ~60 ms): {start:.2} GHz at the start, {end:.2} GHz at the end ({:+.1}%)",
        moved * 100.0
    );
    if moved.abs() > 0.05 {
        n.push_str(": the clock moved during the run; compare its figures as ratios taken close together, or repeat the run");
    }
    n
}

#[cfg(test)]
mod sentinel_tests {
    use super::sentinel_note;

    #[test]
    fn a_moving_clock_is_called_out() {
        let still = sentinel_note(0, 2.40, 2.424);
        assert!(still.contains("+1.0%"), "{still}");
        assert!(!still.contains("moved during the run"), "{still}");
        let moved = sentinel_note(3, 2.60, 2.34);
        assert!(
            moved.contains("CPU 3") && moved.contains("-10.0%"),
            "{moved}"
        );
        assert!(moved.contains("moved during the run"), "{moved}");
    }
}

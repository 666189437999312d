//! Theoretical peak next to measured (seed 000's formula and FLOPs/cycle):
//!
//! - FMA FLOPs per cycle per SIMD width on one core (FP64 FMA chains with
//!   enough independent accumulators), converted to per-cycle figures with
//!   the measured single-core clock, against FMA instructions/cycle × lanes ×
//!   2 from the core table below;
//! - the widest width on one thread per core at once, against
//!   clock × cores × FLOPs/cycle;
//! - seed 000's "capacity" formula, clock × cores × issue width × SMT factor
//!   (1.3 for 2-way, 1.5 for 4-way SMT), against the instructions per second
//!   the nop loop (known instruction count) reaches on all logical CPUs.
//!
//! Theoretical figures come from cpuscope's knowledge base (data/uarch/,
//! `machine::uarch`, each figure with its source). Where the base has no
//! figure (a core it does not know, a width its sources do not give), the
//! record says why and the measured FLOP/cycle is read for the FMA units it
//! implies, labelled inferred ([`infer_fma_units`]).

mod clock;
pub mod labels;
pub mod text;
mod theory;
pub mod view;

pub use clock::*;
pub use theory::*;

use crate::base::CpuSet;
use crate::base::Stats;
use crate::experiments::compute::payload::{
    ActualCycleData, AgainstTheory, ClockData, InstructionRateData, IssueWidths, NopBoundData,
    OneCoreFlopsData, PerCoreFlopsData, PerCycleData, Theory,
};
use crate::experiments::compute::simd::{
    compute_policy, measured_or_reason, secs_per_figure, team_rate,
};
use crate::experiments::experiment::{one_cpu_per_core, ExpCtx, Experiment, Profile};
use crate::harness::{measure_bracketed, Bracketed, Policy};
use crate::kernels::chains::{Chain, CHAIN_LEN};
use crate::kernels::cpu_loops::{nop_loop, NOP_LOOP_INSNS};
use crate::kernels::fma::{self, ClockProbe, Width};
use crate::machine::uarch::Core;
use crate::machine::MachineInfo;
use crate::placement::pin::AffinityGuard;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use std::time::Duration;

pub struct Peak;

pub const EXP: &str = "peak";
/// GFLOP/s of FMA chains at one width (params width, threads).
pub const FMA_FLOPS: MetricId = MetricId::new(EXP, "fma_flops");
/// FLOP per cycle of one core at one width, each sample by its own clock.
pub const FMA_FLOPS_PER_CYCLE: MetricId = MetricId::new(EXP, "fma_flops_per_cycle");
/// GHz of one core while FMAs of one width run (param width: `none` = the
/// probe's add chain alone, the reference; `scalar`, `128`, `256`, `512`,
/// `sve`): a dependent add chain with the FMAs in its shadow.
pub const SIMD_CLOCK: MetricId = MetricId::new(EXP, "simd_clock");
/// FLOP per actual cycle of one core at one width: the per-cycle figure
/// (counted at the scalar add-chain clock) over the clock while that width
/// runs, relative to the scalar clock.
pub const FMA_FLOPS_PER_ACTUAL_CYCLE: MetricId = MetricId::new(EXP, "fma_flops_per_actual_cycle");
/// G instructions/s of seed 000's nop loop on every usable CPU.
pub const INSTRUCTION_RATE: MetricId = MetricId::new(EXP, "instruction_rate");
const METHOD_VERSION: u32 = 1;

/// Length of each add-chain clock reading around an FMA sample.
const CLOCK_SAMPLE: Duration = Duration::from_millis(1);

/// Per-sample figures of a bracketed FMA measurement.
struct Paired {
    gflops: Vec<f64>,
    /// Per sample: the higher of the clock right before and right after, GHz.
    ghz: Vec<f64>,
    /// Per sample: after / before - 1.
    drift: Vec<f64>,
    per_cycle: Vec<f64>,
    /// Samples across which the clock moved by more than 5%.
    moved: usize,
}

impl Paired {
    fn of(b: &Bracketed, flops_per_iter: f64) -> Paired {
        let cyc = CHAIN_LEN as f64; // add chain: 1 cycle per add
        let gflops: Vec<f64> = b
            .subject
            .samples
            .iter()
            .map(|ns| flops_per_iter / ns)
            .collect();
        let before = b.ref_before.iter().map(|ns| cyc / ns);
        let after = b.ref_after.iter().map(|ns| cyc / ns);
        let pairs: Vec<(f64, f64)> = before.zip(after).collect();
        // The higher of the two readings: a reading disturbed by an interrupt
        // or by the host can only read low (1 add per cycle is the ceiling),
        // and a low clock would overstate FLOP/cycle.
        let ghz: Vec<f64> = pairs.iter().map(|(a, b)| a.max(*b)).collect();
        let drift: Vec<f64> = pairs.iter().map(|(a, b)| b / a - 1.0).collect();
        let per_cycle = gflops.iter().zip(&ghz).map(|(f, g)| f / g).collect();
        let moved = drift.iter().filter(|d| d.abs() > 0.05).count();
        Paired {
            gflops,
            ghz,
            drift,
            per_cycle,
            moved,
        }
    }
    fn ghz_median(&self) -> Option<f64> {
        Stats::from_samples(&self.ghz).map(|s| s.median)
    }
    fn drift_median(&self) -> Option<f64> {
        Stats::from_samples(&self.drift).map(|s| s.median)
    }
    fn best(&self) -> Option<f64> {
        self.per_cycle
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .reduce(f64::max)
    }
}

fn method_fma(w: Width) -> String {
    format!(
        "{} accumulators of `{}` (FP64, {} lane(s)) per loop iteration, independent chains; GFLOP/s = 2 × lanes × FMAs / ns; FLOPs/cycle = GFLOP/s / measured clock; median of samples",
        w.accumulators(),
        w.instruction(),
        w.lanes()
    )
}

/// Whether `machine` runs the FMA kernel of width `w`, by its recorded SIMD
/// levels (so that `run --list --sysroot` plans a recorded machine, not this
/// one); by this CPU when no flag list was read.
fn runs_on(machine: &MachineInfo, w: Width) -> bool {
    let isa = &machine.isa;
    let has = |s: &str| isa.simd.iter().any(|x| x == s);
    match isa.family.as_str() {
        "x86" => match w {
            Width::Scalar | Width::V128 | Width::V256 => has("FMA") && has("AVX"),
            Width::V512 => has("AVX-512"),
            Width::Sve => false,
        },
        "arm" => match w {
            Width::Scalar | Width::V128 => true,
            Width::V256 | Width::V512 => false,
            Width::Sve => has("SVE"),
        },
        _ => w.supported(),
    }
}

impl Experiment for Peak {
    /// Shown in simd's section (`render_simd_configurations` takes simd and peak together).
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "FMA FLOPs/cycle per SIMD width and seed 000's capacity formula, measured vs theoretical"
    }

    fn estimate_secs(&self, machine: &MachineInfo, _cpus: &CpuSet, profile: Profile) -> f64 {
        let widths = Width::ALL.iter().filter(|w| runs_on(machine, **w)).count() as f64;
        // Per width: the FMA figure, its clock probe and the probe's check
        // (half the budget); the reference probe; per core; the nop loop.
        (3.5 * widths + 6.5) * secs_per_figure(profile)
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let policy = compute_policy(ctx.profile);
        let per_core = one_cpu_per_core(ctx.machine, &ctx.cpus);
        let Some(first) = per_core.first() else {
            out(ResultRecord::unavailable(
                FMA_FLOPS.experiment,
                FMA_FLOPS.metric,
                "GFLOP/s",
                "no usable CPU",
            ))?;
            return Ok(());
        };
        let spec = spec_for(ctx.machine, first);
        let theory = theory_data(&spec, ctx.machine, first);
        let mut widest: Option<(Width, Option<f64>)> = None;

        // The probe's add chain alone first: the reference every width's
        // clock is read against, which must read the plain chain's clock.
        let reference = ClockProbe {
            width: None,
            blocks: 1,
            quarters: 0,
        };
        (ctx.step)("clock probe: the add chain alone");
        let under = measure_clock_under(ctx, &policy, first, reference)?;
        let none = FmaRate {
            rate: None,
            fits: true,
            w: None,
        };
        out(clock_record(ctx, None, under.as_ref(), &none))?;

        // 1. One core, every width. Every FMA sample is bracketed by a short
        // add-chain clock reading right before and right after it (same CPU,
        // same conditions), so each sample has its own FLOP/cycle figure even
        // when the host's clock drifts between samples; then the clock while
        // that width runs, and FLOP per actual cycle.
        for w in Width::ALL {
            if let Some(r) = w.unsupported_reason() {
                for (id, unit) in [
                    (FMA_FLOPS, "GFLOP/s"),
                    (SIMD_CLOCK, "GHz"),
                    (FMA_FLOPS_PER_ACTUAL_CYCLE, "FLOP/cycle"),
                ] {
                    let mut rec = ResultRecord::unavailable(id.experiment, id.metric, unit, &r)
                        .with_param("width", w.name())
                        .with_param("threads", "1");
                    if id == FMA_FLOPS {
                        rec = rec.with_method(&method_fma(w), METHOD_VERSION);
                    }
                    out(rec)?;
                }
                continue;
            }
            let one = fma_one_core(ctx, out, &policy, &spec, &theory, first, w)?;
            widest = Some((w, one));
        }

        // 2. Widest width, one thread per core.
        if let Some((w, one)) = widest {
            if per_core.len() > 1 {
                fma_per_core(ctx, out, &policy, &spec, &per_core, (w, one))?;
            }
        }

        // 3. Seed 000's capacity formula vs the nop loop on all logical CPUs.
        capacity_formula(ctx, out, &policy, &spec, &per_core, theory)
    }
}

/// The clock readings of one width's FMA samples on one core.
struct WidthClocks<'a> {
    /// Median add-chain clock around the samples (GHz).
    ghz1: Option<f64>,
    /// Median relative clock change across a sample.
    drift: Option<f64>,
    /// The clock while FMAs of this width run, against the scalar clock.
    under: Option<&'a ClockUnder>,
}

/// Step 1 of `Peak::run` at width `w`: FMA GFLOP/s, FLOP per scalar-clock
/// cycle, the clock while this width runs and FLOP per actual cycle on CPU
/// `first`; returns the GFLOP/s figure.
fn fma_one_core(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
    spec: &Spec,
    theory: &Theory,
    first: usize,
    w: Width,
) -> Result<Option<f64>> {
    (ctx.step)(&format!("FMA {}-bit, one core", w.bits()));
    // The whole budget, not stopping at a CV target: the peak is the
    // best sample, and more samples give a fairer chance of one
    // undisturbed by whatever else shares the core or the host.
    let fma_policy = Policy {
        target_cv: None,
        ..policy.clone()
    };
    let b = {
        let _g = AffinityGuard::pin(first)?;
        measure_bracketed(
            &fma_policy,
            ctx.stop,
            CLOCK_SAMPLE,
            |it| Chain::Add.run(it, 1),
            |it| fma::run(w, it),
        )?
    };
    let paired = Paired::of(&b, w.flops_per_iter());
    let theo = theoretical_flops_per_cycle(spec, w).ok();
    let (probe, fma_rate) = clock_probe_for(w, &paired, theo);
    (ctx.step)(&format!(
        "clock under {} FMAs",
        Width::label(w.name(), Some(w.bits()))
    ));
    let under = measure_clock_under(ctx, policy, first, probe)?;
    let clocks = WidthClocks {
        ghz1: paired.ghz_median(),
        drift: paired.drift_median(),
        under: under.as_ref(),
    };
    let rec = one_core_record(ctx, first, w, &paired, &clocks, theo, theory);
    let one_core = rec.value;
    out(rec)?;
    let per_cycle = per_cycle_record(w, &paired, &clocks, spec, theo);
    let actual = per_actual_cycle_record(w, &per_cycle, under.as_ref(), theo);
    out(per_cycle)?;
    out(clock_record(ctx, Some(w), under.as_ref(), &fma_rate))?;
    out(actual)?;
    Ok(one_core)
}

/// Step 1 of `Peak::run` at width `w`: the probe that reads the clock while
/// FMAs of this width run, and the FMA rate its density was chosen from.
fn clock_probe_for(w: Width, paired: &Paired, theo: Option<f64>) -> (ClockProbe, FmaRate) {
    // The clock while FMAs of this width run (power licence), at an FMA
    // density the units can take: from this width's measured rate (FMA
    // instructions per scalar-clock cycle), else the documented one.
    let per_insn = 2.0 * w.lanes() as f64;
    let measured_rate = Stats::from_samples(&paired.per_cycle).map(|s| s.median / per_insn);
    let rate = match (measured_rate, theo) {
        (Some(m), _) if m > 0.0 => Some((m, "measured")),
        (_, Some(t)) => Some((t / per_insn, "documented")),
        _ => None,
    };
    let (quarters, fits) = fma::probe_quarters_for(rate.map(|r| r.0).unwrap_or(1.0));
    let probe = ClockProbe {
        width: Some(w),
        blocks: 1,
        quarters,
    };
    let fma_rate = FmaRate {
        rate,
        fits,
        w: Some(w),
    };
    (probe, fma_rate)
}

/// Step 1 of `Peak::run` at width `w`: the one-core [`FMA_FLOPS`] record on
/// CPU `first`, with its FLOP/cycle figures by each clock.
fn one_core_record(
    ctx: &ExpCtx,
    first: usize,
    w: Width,
    paired: &Paired,
    clocks: &WidthClocks,
    theo: Option<f64>,
    theory: &Theory,
) -> ResultRecord {
    let WidthClocks { ghz1, drift, under } = *clocks;
    let rec = ResultRecord::of(FMA_FLOPS, "GFLOP/s", true)
        .with_param("width", w.name())
        .with_param("threads", "1")
        .with_method(&method_fma(w), METHOD_VERSION)
        .with_samples(paired.gflops.clone());
    let fpc = ghz1.and_then(|g| rec.value.map(|v| v / g));
    let fpc_freq = ctx.facts.ghz_single.and_then(|g| rec.value.map(|v| v / g));
    let change = under.and_then(|u| u.change());
    let lic = change.zip(ghz1).map(|(c, g)| g * c.ratio);
    let fpc_lic = change.zip(fpc).map(|(c, f)| f / c.ratio);
    rec.with_payload(&OneCoreFlopsData {
        cpu: first,
        vector_bits: w.bits(),
        flops_per_cycle: fpc,
        ghz: ghz1,
        ghz_source: "add chain on the same CPU right before and right after every sample; median over samples of the higher of the two".into(),
        ghz_drift: drift,
        ghz_under_this_width: lic,
        clock_ratio_under_this_width: change.map(|c| c.ratio),
        flops_per_cycle_at_that_clock: fpc_lic,
        ghz_frequency_experiment: ctx.facts.ghz_single,
        flops_per_cycle_vs_frequency_experiment: fpc_freq,
        theoretical_flops_per_cycle: theo,
        theory: Some(theory.clone()),
    })
}

// ------------------------------------------------- the clock under each width

/// The FMA rate a probe's density was chosen from.
struct FmaRate {
    /// FMA instructions per cycle and where the figure came from.
    rate: Option<(f64, &'static str)>,
    /// Whether a density at most 85% of that rate was available.
    fits: bool,
    w: Option<Width>,
}

/// How a probe width is shown: "512-bit", "scalar", "SVE 256-bit", and for
/// the reference "add chain alone".
pub fn clock_width_label(w: Option<Width>) -> String {
    match w {
        Some(w) => Width::label(w.name(), Some(w.bits())),
        None => "add chain alone".into(),
    }
}

/// The `width` parameter of a [`SIMD_CLOCK`] record.
pub fn clock_width_param(w: Option<Width>) -> &'static str {
    w.map(Width::name).unwrap_or("none")
}

fn clock_method(probe: &ClockProbe) -> String {
    format!(
        "{}; GHz = adds × iterations / ns (the chain is the critical path: 1 add per cycle). Every sample bracketed by a {} ms plain add chain (256 `add`, as in frequency: the scalar clock) on the same CPU right before and after it; the change = median of the per-sample ratios; a second run with twice the chain and twice the FMAs per iteration checks that the chain sets the pace",
        probe.describe(),
        PROBE_BRACKET.as_millis()
    )
}

/// Step 1 of `Peak::run`: the [`SIMD_CLOCK`] record of width `w` (None:
/// the probe's chain alone, the reference), or not available with why.
fn clock_record(
    ctx: &ExpCtx,
    w: Option<Width>,
    under: Option<&ClockUnder>,
    fr: &FmaRate,
) -> ResultRecord {
    let Some(u) = under else {
        return clock_unavailable(w);
    };
    let mut rec = ResultRecord::of(SIMD_CLOCK, "GHz", true)
        .with_param("width", clock_width_param(w))
        .with_param("threads", "1")
        .with_method(&clock_method(&u.probe), METHOD_VERSION)
        .with_samples(u.ghz.clone());
    if let Some(p) = &u.preempted {
        rec = rec.with_note(p);
    }
    let change = u.change();
    let scalar = u.scalar_median();
    let ratio_stats = Stats::from_samples(&u.ratio);
    // Two medians, each with its noise: twice the tolerance.
    let check_ok = match (change, u.check_ratio) {
        (Some(c), Some(k)) => Some((k / c.ratio - 1.0).abs() <= 2.0 * c.tolerance),
        _ => None,
    };
    let duty = fr.rate.map(|(r, _)| u.probe.fmas_per_cycle() / r);
    if let (Some(c), Some(g)) = (change, scalar) {
        rec = with_clock_change_notes(rec, w, c, g);
    }
    if let Some(c) = change.filter(|c| !c.consistent) {
        rec = rec.with_suspect(&inconsistent_words(&c));
    }
    if let (Some(false), Some(k), Some(c)) = (check_ok, u.check_ratio, change) {
        rec = rec.with_suspect(&format!(
            "twice the chain per iteration read {:+.1}% against the scalar clock, this probe {:+.1}%: beyond twice the tolerance (±{:.1}%), so the chain may not be what sets the pace, or the machine was busy",
            (k - 1.0) * 100.0,
            (c.ratio - 1.0) * 100.0,
            2.0 * c.tolerance * 100.0
        ));
    }
    if !fr.fits {
        rec = rec.with_note(&format!(
            "the sparsest probe ({:.2} FMAs per cycle) is {:.0}% of the FMA rate this width reaches: the FMA units may set the pace, and the figure may read low",
            u.probe.fmas_per_cycle(),
            duty.unwrap_or(f64::NAN) * 100.0
        ));
    }
    rec.with_payload(&ClockData {
        cpu: u.cpu,
        vector_bits: fr.w.map(Width::bits),
        chain_adds: u.probe.chain_adds(),
        fmas_per_iteration: u.probe.fmas_per_iter(),
        fmas_per_cycle: u.probe.fmas_per_cycle(),
        fma_rate_per_cycle: fr.rate.map(|r| r.0),
        fma_rate_source: fr.rate.map(|r| r.1.to_string()),
        fma_units_busy: duty,
        ghz_scalar: scalar,
        ratio_vs_scalar: change.map(|c| c.ratio),
        high_ratio_vs_scalar: change.map(|c| c.high_ratio),
        change_pct: change.map(|c| (c.ratio - 1.0) * 100.0),
        ratio_stats,
        noise_tolerance: change.map(|c| c.tolerance),
        drop_beyond_noise: change.map(|c| c.drop_beyond_noise),
        above_beyond_noise: change.map(|c| c.above_beyond_noise),
        check_double_chain_ratio: u.check_ratio,
        check_double_chain_agrees: check_ok,
        ghz_frequency_experiment: ctx.facts.ghz_single,
    })
}

/// The [`SIMD_CLOCK`] record of width `w` when it was not measured, with why.
fn clock_unavailable(w: Option<Width>) -> ResultRecord {
    let why = ClockProbe {
        width: w,
        blocks: 1,
        quarters: fma::PROBE_QUARTERS[0],
    }
    .unsupported_reason()
    .unwrap_or_else(|| "not measured".into());
    ResultRecord::unavailable(SIMD_CLOCK.experiment, SIMD_CLOCK.metric, "GHz", &why)
        .with_param("width", clock_width_param(w))
        .with_param("threads", "1")
}

/// The notes and suspicions of a [`SIMD_CLOCK`] record of width `w` from the
/// clock change `c` against the scalar clock `g` (GHz).
fn with_clock_change_notes(
    mut rec: ResultRecord,
    w: Option<Width>,
    c: ClockChange,
    g: f64,
) -> ResultRecord {
    let label = clock_width_label(w);
    let pct = (c.ratio - 1.0) * 100.0;
    let tol = c.tolerance * 100.0;
    let here = g * c.ratio;
    let text = if w.is_none() {
        if c.drop_beyond_noise || c.above_beyond_noise {
            format!("the probe's add chain alone reads {here:.2} GHz, {pct:+.1}% against the plain add chain ({g:.2} GHz; tolerance ±{tol:.1}%): it should read the same clock")
        } else {
            format!("the probe's add chain alone reads the scalar clock: {here:.2} GHz against the plain add chain's {g:.2} GHz ({pct:+.1}%, within ±{tol:.1}%): the probe measures the clock")
        }
    } else if c.drop_beyond_noise {
        format!("{label} runs at {here:.2} GHz ({pct:+.1}% vs scalar, {g:.2} GHz; beyond the noise of ±{tol:.1}%)")
    } else if c.above_beyond_noise {
        format!("{label} reads {here:.2} GHz, {pct:+.1}% above the scalar clock ({g:.2} GHz; tolerance ±{tol:.1}%)")
    } else {
        format!("{label} runs at the scalar clock: {here:.2} GHz against {g:.2} GHz ({pct:+.1}%, within the noise of ±{tol:.1}%)")
    };
    rec = rec.with_note(&text);
    if w == Some(Width::Scalar) && c.drop_beyond_noise {
        rec = rec.with_suspect(&format!(
            "scalar FMAs hold no power licence, yet the chain with scalar FMAs in its shadow read {pct:+.1}% (beyond ±{tol:.1}%): the FMAs delay the chain here (shared ports or a busy core), so a drop at a wider width is not the clock alone"
        ));
    }
    if c.above_beyond_noise || (w.is_none() && c.drop_beyond_noise) {
        rec = rec.with_suspect(&format!(
            "the probe read {pct:+.1}% against the plain add chain beyond the noise (±{tol:.1}%): a chain of one add per cycle cannot run faster than the clock, and the chain alone must read it; the clock reading was disturbed (another tenant on the core's ALU ports, a busy machine)"
        ));
    }
    rec
}

/// Why a clock reading whose samples disagree is not a figure to rest on.
fn inconsistent_words(c: &ClockChange) -> String {
    format!(
        "the median per-sample ratio ({:+.1}%) and the undisturbed (90th percentile) readings ({:+.1}%) disagree beyond ±{:.1}%: most samples were disturbed (another process or the host on this CPU); repeat on a quiet machine",
        (c.ratio - 1.0) * 100.0,
        (c.high_ratio - 1.0) * 100.0,
        c.tolerance * 100.0
    )
}

/// Step 1 of `Peak::run`: FLOP per actual cycle at width `w`: the per-cycle
/// record's samples (each at its own scalar-clock reading) over the clock
/// ratio under this width.
fn per_actual_cycle_record(
    w: Width,
    per_cycle: &ResultRecord,
    under: Option<&ClockUnder>,
    theo: Option<f64>,
) -> ResultRecord {
    let label = clock_width_label(Some(w));
    let change = under.and_then(ClockUnder::change);
    let samples = per_cycle.samples.clone();
    let (Some(c), Some(u), false) = (change, under, samples.is_empty()) else {
        let why = if per_cycle.value.is_none() {
            "the FLOP per scalar-clock cycle was not measured".to_string()
        } else {
            "the clock while this width runs was not measured".to_string()
        };
        return ResultRecord::unavailable(
            FMA_FLOPS_PER_ACTUAL_CYCLE.experiment,
            FMA_FLOPS_PER_ACTUAL_CYCLE.metric,
            "FLOP/cycle",
            &why,
        )
        .with_param("width", w.name())
        .with_param("threads", "1");
    };
    let scalar = u.scalar_median();
    let actual: Vec<f64> = samples.iter().map(|x| x / c.ratio).collect();
    let mut rec = ResultRecord::of(FMA_FLOPS_PER_ACTUAL_CYCLE, "FLOP/cycle", true)
        .with_param("width", w.name())
        .with_param("threads", "1")
        .with_method(
            &format!("{}; each per-sample FLOP per scalar-clock cycle (peak: fma_flops_per_cycle) divided by the clock while {label} runs relative to the scalar clock (peak: simd_clock, median of per-sample ratios)", method_fma(w)),
            METHOD_VERSION,
        )
        .with_samples(actual);
    if !c.consistent {
        rec = rec.with_suspect(&inconsistent_words(&c));
    }
    let nominal = per_cycle.value;
    if let (Some(a), Some(n)) = (rec.value, nominal) {
        let clock = scalar
            .map(|g| format!("{:.2} GHz", g * c.ratio))
            .unwrap_or_else(|| "its measured clock".into());
        let th = theo
            .map(|t| format!(" = {:.1}% of the theoretical {t:.0}", a / t * 100.0))
            .unwrap_or_default();
        rec = rec.with_note(&format!(
            "{a:.2} FLOP per actual cycle at the clock while {label} runs ({clock}, {:+.1}% vs scalar){th}; {n:.2} per scalar-clock cycle",
            (c.ratio - 1.0) * 100.0
        ));
    }
    let value = rec.value;
    rec.with_payload(&ActualCycleData {
        vector_bits: w.bits(),
        flops_per_nominal_cycle: nominal,
        nominal_clock: "the scalar add-chain clock (peak: fma_flops_per_cycle)".into(),
        actual_clock: format!(
            "the clock while {label} runs (peak: simd_clock width={})",
            w.name()
        ),
        ghz_scalar: scalar,
        ghz_actual: scalar.map(|g| g * c.ratio),
        clock_ratio: c.ratio,
        clock_drop_beyond_noise: c.drop_beyond_noise,
        theoretical: theo,
        ratio: theo.zip(value).map(|(t, a)| a / t),
    })
}

/// Step 1 of `Peak::run`: the FLOP/cycle record of width `w`, each sample by
/// its own clock, with its notes against the theoretical figure.
fn per_cycle_record(
    w: Width,
    paired: &Paired,
    clocks: &WidthClocks,
    spec: &Spec,
    theo: Option<f64>,
) -> ResultRecord {
    let WidthClocks { ghz1, drift, .. } = *clocks;
    // Per-cycle figure with its own samples.
    let mut per_cycle = match ghz1 {
        Some(_) => ResultRecord::of(FMA_FLOPS_PER_CYCLE, "FLOP/cycle", true)
            .with_param("width", w.name())
            .with_param("threads", "1")
            .with_method(
                &format!("{}; each sample divided by its own clock: a {} ms dependent add chain on the same CPU right before and right after it (the higher of the two: a disturbed reading can only be low); value = median of the per-sample figures, peak = the best sample", method_fma(w), CLOCK_SAMPLE.as_millis()),
                METHOD_VERSION,
            )
            .with_samples(paired.per_cycle.clone()),
        None => ResultRecord::unavailable(
            FMA_FLOPS_PER_CYCLE.experiment,
            FMA_FLOPS_PER_CYCLE.metric,
            "FLOP/cycle",
            "the clock could not be measured",
        )
        .with_param("width", w.name())
        .with_param("threads", "1"),
    };
    if let Some(d) = drift.filter(|d| d.abs() > 0.05) {
        per_cycle = per_cycle.with_note(&format!(
            "unreliable: the measured clock moved {:+.0}% (median over samples) between right before and right after the kernel (other load or frequency changes)",
            d * 100.0
        ));
    } else if paired.moved > 0 {
        per_cycle = per_cycle.with_note(&format!(
            "in {} of {} samples the clock moved more than 5% across the sample",
            paired.moved,
            paired.per_cycle.len()
        ));
    }
    let mut data = PerCycleData {
        vector_bits: w.bits(),
        ..PerCycleData::default()
    };
    match (spec, theo, per_cycle.value) {
        (Ok(s), Some(t), Some(m)) => {
            let against;
            (per_cycle, against) = with_theory_notes(per_cycle, w, paired, clocks, s, t, m);
            data.against_theory = Some(against);
        }
        (_, None, m) => {
            let why = theoretical_flops_per_cycle(spec, w)
                .err()
                .unwrap_or_default();
            per_cycle = per_cycle.with_note(&format!("theoretical figure not available: {why}"));
            // Where no documented figure exists, the measurement speaks.
            if let Some(m) = m {
                per_cycle = match infer_fma_units(w.bits(), m) {
                    Ok((units, text)) => {
                        data.inferred_fma_units = Some(units);
                        data.inferred = Some(text.clone());
                        per_cycle.with_note(&text)
                    }
                    Err(text) => per_cycle.with_note(&text),
                };
            }
        }
        _ => {}
    }
    per_cycle.with_payload(&data)
}

/// Step 1 of `Peak::run`: the notes and data of a FLOP/cycle record whose
/// median `m` has a theoretical figure `t` from core `s`.
fn with_theory_notes(
    mut per_cycle: ResultRecord,
    w: Width,
    paired: &Paired,
    clocks: &WidthClocks,
    s: &Core,
    t: f64,
    m: f64,
) -> (ResultRecord, AgainstTheory) {
    let WidthClocks { ghz1, drift, under } = *clocks;
    let change = under.and_then(ClockUnder::change);
    let lic = change.zip(ghz1).map(|(c, g)| g * c.ratio);
    let best = paired.best();
    per_cycle = per_cycle.with_note(&format!(
        "{:.1}% of the theoretical {t:.0} FLOP/cycle per scalar-clock cycle (median of {} samples){} (source: {})",
        m / t * 100.0,
        paired.per_cycle.len(),
        best.map(|b| format!(
            "; peak (best sample) {b:.2} FLOP/cycle = {:.1}%",
            b / t * 100.0
        ))
        .unwrap_or_default(),
        fp_source(s)
    ));
    if m > t * 1.02 {
        per_cycle = per_cycle.with_note(&format!(
            "the median reads {:.1}% of theoretical, more than the core can do: the clock reading is low. A dependent add chain runs slower than one add per cycle when something else competes for the core's ALU ports (on a VM, a host SMT sibling running another tenant), while independent FMAs lose less; FLOP/cycle here is an upper bound, and GFLOP/s is the figure to trust",
            m / t * 100.0
        ));
    }
    if let Some(b) = best.filter(|b| *b > t && m <= t * 1.02) {
        let cv = per_cycle
            .stats
            .as_ref()
            .map(|s| s.cv * 100.0)
            .unwrap_or(f64::NAN);
        per_cycle = per_cycle.with_note(&format!(
            "the best sample reads {:.1}% of theoretical, above what the core can do: that is the noise of the per-sample clock reading (per-sample CV {:.1}%); the median is the figure to use",
            b / t * 100.0,
            cv
        ));
    }
    let against = AgainstTheory {
        theoretical: t,
        ratio: m / t,
        best,
        best_ratio: best.map(|b| b / t),
        ghz_reference: ghz1,
        ghz_drift: drift,
        clock_moved_samples: paired.moved,
        ghz_under_this_width: lic,
    };
    if let (Some(c), Some(l)) = (change, lic) {
        let at_lic = m / c.ratio;
        let label = clock_width_label(Some(w));
        per_cycle = per_cycle.with_note(&if c.drop_beyond_noise {
            format!(
                "{label} runs at {l:.2} GHz ({:+.1}% vs scalar, beyond the noise of ±{:.1}%): per actual cycle the kernel reaches {at_lic:.2} FLOP/cycle = {:.1}% of theoretical",
                (c.ratio - 1.0) * 100.0,
                c.tolerance * 100.0,
                at_lic / t * 100.0
            )
        } else {
            format!(
                "{label} runs at the scalar clock ({l:.2} GHz, {:+.1}%, within the noise of ±{:.1}%): per actual cycle {at_lic:.2} FLOP/cycle = {:.1}% of theoretical",
                (c.ratio - 1.0) * 100.0,
                c.tolerance * 100.0,
                at_lic / t * 100.0
            )
        });
    }
    (per_cycle, against)
}

/// Step 2 of `Peak::run`: the widest width `w`, one thread per core at once.
fn fma_per_core(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
    spec: &Spec,
    per_core: &CpuSet,
    (w, one_core): (Width, Option<f64>),
) -> Result<()> {
    (ctx.step)(&format!("FMA {}-bit, {} cores", w.bits(), per_core.len()));
    let measured = team_rate(
        per_core,
        policy,
        ctx.stop,
        w.flops_per_iter() / 1e9,
        |_t, it| fma::run(w, it),
    );
    let unavailable = |why: &str| {
        ResultRecord::unavailable(FMA_FLOPS.experiment, FMA_FLOPS.metric, "GFLOP/s", why)
            .with_param("width", w.name())
            .with_param("threads", "per_core")
    };
    let Some((agg, per_thread)) = measured_or_reason(measured, ctx.stop, out, unavailable)? else {
        return Ok(());
    };
    let mut rec = ResultRecord::of(FMA_FLOPS, "GFLOP/s", true)
        .with_param("width", w.name())
        .with_param("threads", "per_core")
        .with_method(
            &format!("{}; one pinned thread per core, aggregate", method_fma(w)),
            METHOD_VERSION,
        )
        .with_samples(agg);
    let theo = match (spec, ctx.facts.ghz_all) {
        (Ok(_), Some(g)) => theoretical_flops_per_cycle(spec, w)
            .ok()
            .map(|f| f * g * per_core.len() as f64),
        _ => None,
    };
    if let (Some(t), Some(m)) = (theo, rec.value) {
        rec = rec.with_note(&format!(
            "{:.1}% of the theoretical {t:.0} GFLOP/s (measured all-core clock {:.2} GHz × {} cores × {:.0} FLOP/cycle)",
            m / t * 100.0,
            ctx.facts.ghz_all.unwrap_or(0.0),
            per_core.len(),
            t / ctx.facts.ghz_all.unwrap_or(1.0) / per_core.len() as f64
        ));
    }
    if let Some(why) = all_cores_implausible(rec.value, one_core, per_core.len()) {
        rec = rec.with_suspect(&why);
    }
    rec = rec.with_payload(&PerCoreFlopsData {
        cpus: per_core.to_string(),
        vector_bits: w.bits(),
        per_thread_gflops: per_thread,
        theoretical_gflops: theo,
        ghz_all: ctx.facts.ghz_all,
    });
    out(rec)
}

/// The nop loop on every usable CPU at once: G instr/s per round, or None
/// after its *not available* record (the team could not measure it).
fn nop_rate(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
) -> Result<Option<Vec<f64>>> {
    (ctx.step)(&format!("nop loop on {} CPUs", ctx.cpus.len()));
    let insns = NOP_LOOP_INSNS as f64;
    let measured = team_rate(&ctx.cpus, policy, ctx.stop, insns / 1e9, |_t, it| {
        nop_loop(it)
    });
    let unavailable = |why: &str| {
        ResultRecord::unavailable(
            INSTRUCTION_RATE.experiment,
            INSTRUCTION_RATE.metric,
            "G instr/s",
            why,
        )
        .with_param("threads", "all")
    };
    Ok(measured_or_reason(measured, ctx.stop, out, unavailable)?.map(|(agg, _)| agg))
}

/// Step 3 of `Peak::run`: seed 000's capacity formula against the nop loop
/// on every usable CPU.
fn capacity_formula(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
    spec: &Spec,
    per_core: &CpuSet,
    theory: Theory,
) -> Result<()> {
    let Some(agg) = nop_rate(ctx, out, policy)? else {
        return Ok(());
    };
    let cores = per_core.len();
    let tpc = if cores > 0 {
        ctx.cpus.len().div_ceil(cores)
    } else {
        1
    };
    let mut rec = ResultRecord::of(INSTRUCTION_RATE, "G instr/s", true)
        .with_param("threads", "all")
        .with_method(
            "seed 000's cpu_bound loop (3 × nop + decrement + branch = 5 instructions per iteration, asm) on every usable CPU at once; G instr/s = threads × 5 × iterations / team time",
            METHOD_VERSION,
        )
        .with_samples(agg);
    let ghz = ctx.facts.ghz_all;
    let fe = spec.as_ref().ok().and_then(|c| c.frontend.clone());
    let dispatch = fe.as_ref().and_then(|f| f.dispatch);
    let seed_width = fe.as_ref().and_then(|f| f.seed_stated_issue_width);
    let f_of = |w: Option<f64>| match (w, ghz) {
        (Some(iw), Some(g)) => Some(capacity(g, cores, iw, tpc)),
        _ => None,
    };
    let cap = Capacity {
        cores,
        tpc,
        ghz,
        formula: f_of(dispatch),
        formula_seed: f_of(seed_width),
    };
    rec = with_formula_notes(rec, spec, &cap);
    let bound = nop_bound(spec, ghz, cores);
    rec = with_nop_bound_note(rec, &bound);
    rec = rec.with_payload(&InstructionRateData {
        formula_g_instr_s: cap.formula,
        formula_seed_stated_g_instr_s: cap.formula_seed,
        issue_widths: fe.as_ref().map(|f| IssueWidths {
            decode: f.decode,
            uop_cache: f.uop_cache,
            dispatch: f.dispatch,
            seed_stated_issue_width: f.seed_stated_issue_width,
        }),
        nop_bound: bound.as_ref().ok().map(|b| NopBoundData {
            g_instr_s: b.g_instr_s,
            per_core_per_cycle: b.per_cycle,
            basis: b.basis.clone(),
        }),
        threads_per_core: tpc,
        smt_factor: smt_factor(tpc),
        cores,
        theory: Some(theory),
    });
    out(rec)?;
    Ok(())
}

/// Seed 000's capacity formula on this machine: its inputs and its figures.
struct Capacity {
    cores: usize,
    /// Threads per core.
    tpc: usize,
    /// The all-core clock (GHz), measured.
    ghz: Option<f64>,
    /// G instr/s by the formula with the documented dispatch width.
    formula: Option<f64>,
    /// G instr/s by the formula with the seed's own stated issue width.
    formula_seed: Option<f64>,
}

/// Step 3 of `Peak::run`: the notes of the [`INSTRUCTION_RATE`] record
/// against seed 000's formula (`cap`), or why the formula is not available.
fn with_formula_notes(mut rec: ResultRecord, spec: &Spec, cap: &Capacity) -> ResultRecord {
    let Capacity {
        cores, tpc, ghz, ..
    } = *cap;
    match (cap.formula, rec.value, spec) {
        (Some(f), Some(m), Ok(c)) => {
            let fe = c.frontend.clone().unwrap_or_default();
            let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_else(|| "-".into());
            rec = rec.with_note(&format!(
                "{:.1}% of seed 000's formula with the documented width: {:.2} GHz (all-core, measured) × {cores} cores × issue width {} (documented dispatch/rename width of {}; source: {}) × SMT factor {} = {f:.1} G instr/s; documented widths: decode {}, µop cache {}, dispatch {}",
                m / f * 100.0,
                ghz.unwrap_or(0.0),
                fe.dispatch.unwrap_or(0.0),
                c.name,
                c.field_source(&fe.source, &fe.sources, "dispatch"),
                smt_factor(tpc),
                opt(fe.decode),
                opt(fe.uop_cache),
                opt(fe.dispatch),
            ));
            if let (Some(fs), Some(w)) = (cap.formula_seed, fe.seed_stated_issue_width) {
                rec = rec.with_note(&format!(
                    "{:.1}% of seed 000's formula with the seed's own stated issue width {w} (stated by the seed for this core, not a documented width; source: {}): {:.2} GHz × {cores} cores × {w} × SMT factor {} = {fs:.1} G instr/s",
                    m / fs * 100.0,
                    c.field_source(&fe.source, &fe.sources, "seed_stated_issue_width"),
                    ghz.unwrap_or(0.0),
                    smt_factor(tpc),
                ));
            }
        }
        (None, _, Err(e)) => rec = rec.with_note(&format!("seed 000's formula not available: {e}")),
        (None, _, Ok(c)) => {
            rec = rec.with_note(&format!(
                "seed 000's formula not available: {}",
                if c.frontend.as_ref().and_then(|f| f.dispatch).is_none() {
                    format!("{}'s dispatch width is not in the knowledge base", c.name)
                } else {
                    "the all-core clock was not measured".to_string()
                }
            ))
        }
        _ => {}
    }
    rec
}

/// Step 3 of `Peak::run`: the note of the [`INSTRUCTION_RATE`] record against
/// the nop-loop bound, or why the bound is not available.
fn with_nop_bound_note(mut rec: ResultRecord, bound: &Result<NopBound, String>) -> ResultRecord {
    match (bound, rec.value) {
        (Ok(b), Some(m)) => {
            rec = rec.with_note(&format!(
                "{:.1}% of the nop-loop bound {:.1} G instr/s ({})",
                m / b.g_instr_s * 100.0,
                b.g_instr_s,
                b.basis
            ))
        }
        (Err(e), _) => rec = rec.with_note(&format!("nop-loop bound not available: {e}")),
        _ => {}
    }
    rec
}

#[cfg(test)]
mod tests;

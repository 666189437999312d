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
//! Theoretical figures come from [`core_spec`]: a small table of cores whose
//! FMA throughput and issue width are documented (sources in the table and
//! in docs/methods-compute.md). A core not in the table gets "not available"
//! with the reason; measured figures are still reported.

use super::simd::{compute_policy, secs_per_figure, single_rate, team_rate};
use super::{one_cpu_per_core, ExpCtx, Experiment, Profile};
use crate::harness::{measure_bracketed, Bracketed, Policy, Stats};
use crate::kernels::chains::{Chain, CHAIN_LEN};
use crate::kernels::cpu_loops::{nop_loop, NOP_LOOP_INSNS};
use crate::kernels::fma::{self, Width};
use crate::machine::MachineInfo;
use crate::placement::pin::AffinityGuard;
use crate::placement::CpuSet;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use serde::Serialize;
use serde_json::json;
use std::time::Duration;

pub struct Peak;

pub const EXP: &str = "peak";
/// GFLOP/s of FMA chains at one width (params width, threads).
pub const FMA_FLOPS: MetricId = MetricId::new(EXP, "fma_flops");
/// FLOP per cycle of one core at one width, each sample by its own clock.
pub const FMA_FLOPS_PER_CYCLE: MetricId = MetricId::new(EXP, "fma_flops_per_cycle");
/// G instructions/s of seed 000's nop loop on every usable CPU.
pub const INSTRUCTION_RATE: MetricId = MetricId::new(EXP, "instruction_rate");
const METHOD_VERSION: u32 = 1;

/// What the documentation says about one core.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreSpec {
    /// Core (microarchitecture) name.
    pub core: String,
    /// How it was recognised (CPUID family/model, flags, MIDR).
    pub matched_by: String,
    /// FP64 FMA instructions per cycle for scalar, 128, 256, 512-bit; None:
    /// not documented here (or not supported).
    pub fma_per_cycle: [Option<f64>; 4],
    /// Instructions the core can take in per cycle (x86: allocation/rename
    /// width; Arm: decode width), for seed 000's formula; None if unknown.
    pub issue_width: Option<f64>,
    pub source: String,
}

impl CoreSpec {
    /// Theoretical FP64 FLOPs per cycle per core for a width.
    pub fn flops_per_cycle(&self, w: Width) -> Option<f64> {
        let i = match w {
            Width::Scalar => 0,
            Width::V128 => 1,
            Width::V256 => 2,
            Width::V512 => 3,
        };
        self.fma_per_cycle[i].map(|f| f * w.lanes() as f64 * 2.0)
    }
}

/// Identity of a core as the table needs it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CoreId {
    pub vendor: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub brand: Option<String>,
    /// x86 CPUID flags the table looks at: `amx_tile`, `avx512f`.
    pub amx_tile: bool,
    pub avx512f: bool,
    pub arm_implementer: Option<u32>,
    pub arm_part: Option<u32>,
}

fn spec(
    core: &str,
    matched_by: String,
    fma: [Option<f64>; 4],
    issue: Option<f64>,
    source: &str,
) -> CoreSpec {
    CoreSpec {
        core: core.into(),
        matched_by,
        fma_per_cycle: fma,
        issue_width: issue,
        source: source.into(),
    }
}

const INTEL_OPT: &str = "Intel 64 and IA-32 Architectures Optimization Reference Manual (execution ports and allocation width of the core)";
const INTEL_ARK: &str = "Intel ARK, 'number of AVX-512 FMA units' of Xeon Scalable SKUs";
const AMD_SOG: &str = "AMD Software Optimization Guide for the family (FP pipes, dispatch width)";
const ARM_SOG: &str =
    "Arm Neoverse Software Optimization Guide of the core (FP/ASIMD pipes, decode width)";

/// The core table: documented FMA throughput and issue width.
/// Err(reason) when the core is not in it.
pub fn core_spec(id: &CoreId) -> Result<CoreSpec, String> {
    let two = Some(2.0);
    let one = Some(1.0);
    let vendor = id.vendor.as_deref().unwrap_or("");
    let fm = format!(
        "vendor {vendor}, family {}, model {}",
        id.family.map(|f| format!("{f:#x}")).unwrap_or("?".into()),
        id.model.map(|m| format!("{m:#x}")).unwrap_or("?".into())
    );
    match vendor {
        "GenuineIntel" if id.family == Some(6) => {
            let model = id.model.unwrap_or(0);
            if id.amx_tile {
                return Ok(spec(
                    "Golden Cove-class server core (Sapphire Rapids or later Xeon)",
                    format!("{fm}; AMX-TILE present (only the Xeon server cores since Sapphire Rapids have AMX)"),
                    [two, two, two, two],
                    Some(6.0),
                    &format!("{INTEL_OPT}: Golden Cove, two FMA units on ports 0 and 1 (fused for 512-bit) plus the 512-bit FMA on port 5, i.e. 2 FMA/cycle at every width; 6-wide allocation"),
                ));
            }
            match model {
                106 | 108 => Ok(spec(
                    "Sunny Cove server core (Ice Lake-SP)",
                    fm,
                    [two, two, two, two],
                    Some(5.0),
                    &format!("{INTEL_OPT}: Sunny Cove, 5-wide allocation; {INTEL_ARK}: 2 on 3rd-generation Xeon Scalable"),
                )),
                85 => {
                    let b = id.brand.as_deref().unwrap_or("");
                    let (avx512, how) = if b.contains("Platinum") || b.contains("Gold 6") {
                        (two, "Platinum / Gold 6xxx: 2 AVX-512 FMA units")
                    } else if b.contains("Silver") || b.contains("Bronze") {
                        (one, "Silver / Bronze: 1 AVX-512 FMA unit")
                    } else {
                        (None, "SKU not recognised in the brand string: AVX-512 FMA units (1 or 2) unknown")
                    };
                    Ok(spec(
                        "Skylake-SP / Cascade Lake server core",
                        format!("{fm}; brand '{b}' ({how})"),
                        [two, two, two, avx512],
                        Some(4.0),
                        &format!("{INTEL_OPT}: Skylake, 4-wide allocation, FMA on ports 0 and 1; {INTEL_ARK}"),
                    ))
                }
                60 | 63 | 69 | 70 | 61 | 71 | 79 | 86 => Ok(spec(
                    "Haswell / Broadwell core",
                    fm,
                    [two, two, two, None],
                    Some(4.0),
                    &format!("{INTEL_OPT}: Haswell, FMA on ports 0 and 1, 4-wide allocation"),
                )),
                78 | 94 | 142 | 158 | 165 | 166 => Ok(spec(
                    "Skylake client core (Skylake to Comet Lake)",
                    fm,
                    [two, two, two, None],
                    Some(4.0),
                    &format!("{INTEL_OPT}: Skylake, FMA on ports 0 and 1, 4-wide allocation"),
                )),
                _ => Err(format!("core not in cpuscope's table ({fm})")),
            }
        }
        "AuthenticAMD" | "HygonGenuine" => {
            let fam = id.family.unwrap_or(0);
            let model = id.model.unwrap_or(0);
            let zen1 = (vendor == "HygonGenuine" && fam == 0x18) || (fam == 0x17 && model < 0x30);
            if zen1 {
                Ok(spec(
                    "Zen / Zen+ core (Hygon Dhyana is Zen)",
                    fm,
                    [two, two, one, None],
                    Some(6.0),
                    &format!("{AMD_SOG} 17h: two 128-bit FMA pipes (256-bit operations take both), dispatch of 6 macro-ops per cycle"),
                ))
            } else if fam == 0x17 {
                Ok(spec(
                    "Zen 2 core",
                    fm,
                    [two, two, two, None],
                    Some(6.0),
                    &format!("{AMD_SOG} 17h models 30h+: two 256-bit FMA pipes, dispatch of 6 macro-ops per cycle"),
                ))
            } else if fam == 0x19 {
                let zen4 = matches!(model, 0x10..=0x1f | 0x60..=0x7f | 0xa0..=0xaf);
                if zen4 {
                    Ok(spec(
                        "Zen 4 core",
                        fm,
                        [two, two, two, one],
                        Some(6.0),
                        &format!("{AMD_SOG} 19h: two 256-bit FMA pipes, 512-bit operations issued as two halves; dispatch 6"),
                    ))
                } else {
                    Ok(spec(
                        "Zen 3 core",
                        fm,
                        [two, two, two, None],
                        Some(6.0),
                        &format!("{AMD_SOG} 19h: two 256-bit FMA pipes, dispatch 6"),
                    ))
                }
            } else {
                Err(format!("core not in cpuscope's table ({fm})"))
            }
        }
        _ => match (id.arm_implementer, id.arm_part) {
            (Some(0x41), Some(0xd0c)) => Ok(spec(
                "Arm Neoverse N1",
                "MIDR implementer 0x41, part 0xd0c".into(),
                [two, two, None, None],
                Some(4.0),
                &format!("{ARM_SOG} N1: two 128-bit FP/ASIMD pipes with FMA, 4-wide decode"),
            )),
            (Some(0x41), Some(0xd49)) => Ok(spec(
                "Arm Neoverse N2",
                "MIDR implementer 0x41, part 0xd49".into(),
                [two, two, None, None],
                Some(5.0),
                &format!("{ARM_SOG} N2: two 128-bit FP/ASIMD pipes with FMA, 5-wide decode"),
            )),
            (Some(0x41), Some(0xd40)) => Ok(spec(
                "Arm Neoverse V1",
                "MIDR implementer 0x41, part 0xd40".into(),
                [Some(4.0), Some(4.0), None, None],
                Some(5.0),
                &format!("{ARM_SOG} V1: four 128-bit FP/ASIMD pipes with FMA, 5-wide decode"),
            )),
            (Some(0x41), Some(0xd4f)) => Ok(spec(
                "Arm Neoverse V2",
                "MIDR implementer 0x41, part 0xd4f".into(),
                [Some(4.0), Some(4.0), None, None],
                Some(6.0),
                &format!("{ARM_SOG} V2: four 128-bit FP/ASIMD pipes with FMA, 6-wide decode"),
            )),
            (Some(0x48), Some(0xd01)) => Ok(spec(
                "HiSilicon TaiShan v110 (Kunpeng 920)",
                "MIDR implementer 0x48, part 0xd01".into(),
                [None, None, None, None],
                Some(4.0),
                "seed 000 ('TaiShan ARM ... 4 instructions/cycle'); FMA throughput not documented in cpuscope's sources",
            )),
            (Some(i), Some(p)) => Err(format!(
                "core not in cpuscope's table (MIDR implementer {i:#x}, part {p:#x})"
            )),
            _ => Err(format!("core not in cpuscope's table ({fm})")),
        },
    }
}

/// The running CPU's identity: the machine snapshot's identity (read as
/// JSON, so it does not depend on field layout), completed from CPUID on
/// x86_64 or the MIDR register file on aarch64.
pub fn this_core(machine: &MachineInfo) -> CoreId {
    let j = serde_json::to_value(&machine.identity).unwrap_or_default();
    let s = |p: &str| j.pointer(p).and_then(|v| v.as_str()).map(str::to_string);
    let n = |p: &str| j.pointer(p).and_then(|v| v.as_u64()).map(|x| x as u32);
    let mut id = CoreId {
        vendor: s("/vendor"),
        family: n("/family"),
        model: n("/model"),
        brand: s("/model_name"),
        arm_implementer: n("/arm_cores/0/implementer"),
        arm_part: n("/arm_cores/0/part"),
        ..Default::default()
    };
    fill_live(&mut id);
    id
}

#[cfg(target_arch = "x86_64")]
fn fill_live(id: &mut CoreId) {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    // CPUID exists on every x86_64 CPU (the intrinsics are safe).
    {
        let l0 = __cpuid(0);
        let mut v = Vec::with_capacity(12);
        for r in [l0.ebx, l0.edx, l0.ecx] {
            v.extend_from_slice(&r.to_le_bytes());
        }
        if id.vendor.is_none() {
            id.vendor = Some(String::from_utf8_lossy(&v).into_owned());
        }
        let l1 = __cpuid(1);
        let base_fam = (l1.eax >> 8) & 0xf;
        let fam = if base_fam == 0xf {
            base_fam + ((l1.eax >> 20) & 0xff)
        } else {
            base_fam
        };
        let mut model = (l1.eax >> 4) & 0xf;
        if base_fam == 0x6 || base_fam == 0xf {
            model |= ((l1.eax >> 16) & 0xf) << 4;
        }
        id.family.get_or_insert(fam);
        id.model.get_or_insert(model);
        if l0.eax >= 7 {
            let l7 = __cpuid_count(7, 0);
            id.amx_tile = (l7.edx >> 24) & 1 == 1;
        }
        id.avx512f = std::arch::is_x86_feature_detected!("avx512f");
        if id.brand.is_none() && __cpuid(0x8000_0000).eax >= 0x8000_0004 {
            let mut b = Vec::with_capacity(48);
            for leaf in 0x8000_0002u32..=0x8000_0004 {
                let r = __cpuid(leaf);
                for x in [r.eax, r.ebx, r.ecx, r.edx] {
                    b.extend_from_slice(&x.to_le_bytes());
                }
            }
            let t = String::from_utf8_lossy(&b)
                .trim_matches(char::from(0))
                .trim()
                .to_string();
            if !t.is_empty() {
                id.brand = Some(t);
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
fn fill_live(id: &mut CoreId) {
    if id.arm_implementer.is_some() {
        return;
    }
    let p = "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1";
    if let Some(m) = std::fs::read_to_string(p)
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
    {
        id.arm_implementer = Some(((m >> 24) & 0xff) as u32);
        id.arm_part = Some(((m >> 4) & 0xfff) as u32);
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn fill_live(_id: &mut CoreId) {}

/// SMT factor of seed 000's formula: 1.0 without SMT, 1.3 for 2-way, 1.5 for 4-way.
pub fn smt_factor(threads_per_core: usize) -> f64 {
    match threads_per_core {
        0 | 1 => 1.0,
        2 | 3 => 1.3,
        _ => 1.5,
    }
}

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

impl Experiment for Peak {
    /// Shown in simd's section (`render_simd_configurations` takes simd and peak together).
    fn summary_text(&self, _run: &crate::results::schema::Run) -> String {
        String::new()
    }
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "FMA FLOPs/cycle per SIMD width and seed 000's capacity formula, measured vs theoretical"
    }

    fn estimate_secs(&self, _machine: &MachineInfo, _cpus: &CpuSet, profile: Profile) -> f64 {
        let widths = Width::ALL.iter().filter(|w| w.supported()).count() as f64;
        (2.0 * widths + 5.0) * secs_per_figure(profile)
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let policy = compute_policy(ctx.profile);
        let id = this_core(ctx.machine);
        let spec = core_spec(&id);
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
        let theory_json = match &spec {
            Ok(s) => json!(s),
            Err(e) => json!({"reason": e}),
        };
        let mut widest: Option<Width> = None;

        // 1. One core, every width. Every FMA sample is bracketed by a short
        // add-chain clock reading right before and right after it (same CPU,
        // same conditions), so each sample has its own FLOP/cycle figure even
        // when the host's clock drifts between samples.
        for w in Width::ALL {
            if let Some(r) = w.unsupported_reason() {
                out(ResultRecord::unavailable(
                    FMA_FLOPS.experiment,
                    FMA_FLOPS.metric,
                    "GFLOP/s",
                    &r,
                )
                .with_param("width", w.name())
                .with_param("threads", "1")
                .with_method(&method_fma(w), METHOD_VERSION))?;
                continue;
            }
            widest = Some(w);
            fma_one_core(ctx, out, &policy, &spec, &theory_json, first, w)?;
        }

        // 2. Widest width, one thread per core.
        if let Some(w) = widest {
            if per_core.len() > 1 {
                fma_per_core(ctx, out, &policy, &spec, &per_core, w)?;
            }
        }

        // 3. Seed 000's capacity formula vs the nop loop on all logical CPUs.
        capacity_formula(ctx, out, &policy, &spec, &per_core, theory_json)
    }
}

/// The clock readings of one width's FMA samples on one core.
struct WidthClocks {
    /// Median add-chain clock around the samples (GHz).
    ghz1: Option<f64>,
    /// Median relative clock change across a sample.
    drift: Option<f64>,
    /// The clock while FMAs of this width run (GHz).
    lic: Option<f64>,
}

/// Step 1 of `Peak::run` at width `w`: FMA GFLOP/s and FLOP/cycle on CPU `first`.
fn fma_one_core(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
    spec: &Result<CoreSpec, String>,
    theory_json: &serde_json::Value,
    first: usize,
    w: Width,
) -> Result<()> {
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
    let gflops = paired.gflops.clone();
    let ghz1 = paired.ghz_median();
    let drift = paired.drift_median();
    // The clock while FMAs of this width run (power licence).
    let lic = if fma::probe_supported(w) {
        (ctx.step)(&format!("clock under {}-bit FMA load", w.bits()));
        let s = single_rate(
            first,
            policy,
            ctx.stop,
            fma::PROBE_ADDS as f64 / 1e9,
            |it| fma::clock_probe(w, it),
        )?;
        Stats::from_samples(&s).map(|s| s.median)
    } else {
        None
    };
    let theo = spec.as_ref().ok().and_then(|s| s.flops_per_cycle(w));
    let mut rec = ResultRecord::of(FMA_FLOPS, "GFLOP/s", true)
        .with_param("width", w.name())
        .with_param("threads", "1")
        .with_method(&method_fma(w), METHOD_VERSION)
        .with_samples(gflops.clone());
    let fpc = ghz1.and_then(|g| rec.value.map(|v| v / g));
    let fpc_freq = ctx.facts.ghz_single.and_then(|g| rec.value.map(|v| v / g));
    let fpc_lic = lic.and_then(|g| rec.value.map(|v| v / g));
    rec = rec.with_data(json!({
        "cpu": first,
        "flops_per_cycle": fpc,
        "ghz": ghz1,
        "ghz_source": "add chain on the same CPU right before and right after every sample; median over samples of the higher of the two",
        "ghz_drift": drift,
        "ghz_under_this_width": lic,
        "flops_per_cycle_at_that_clock": fpc_lic,
        "ghz_frequency_experiment": ctx.facts.ghz_single,
        "flops_per_cycle_vs_frequency_experiment": fpc_freq,
        "theoretical_flops_per_cycle": theo,
        "theory": theory_json,
    }));
    out(rec)?;
    let clocks = WidthClocks { ghz1, drift, lic };
    out(per_cycle_record(w, &paired, &clocks, spec, theo))
}

/// Step 1 of `Peak::run`: the FLOP/cycle record of width `w`, each sample by
/// its own clock, with its notes against the theoretical figure.
fn per_cycle_record(
    w: Width,
    paired: &Paired,
    clocks: &WidthClocks,
    spec: &Result<CoreSpec, String>,
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
    match (spec, theo, per_cycle.value) {
        (Ok(s), Some(t), Some(m)) => {
            per_cycle = with_theory_notes(per_cycle, w, paired, clocks, s, t, m);
        }
        (Ok(s), None, _) => {
            per_cycle = per_cycle.with_note(&format!(
                "theoretical figure not available: {} FMA throughput at {} bits is not documented in cpuscope's table",
                s.core,
                w.bits()
            ));
        }
        (Err(e), _, _) => {
            per_cycle = per_cycle.with_note(&format!("theoretical figure not available: {e}"));
        }
        _ => {}
    }
    per_cycle
}

/// Step 1 of `Peak::run`: the notes and data of a FLOP/cycle record whose
/// median `m` has a theoretical figure `t` from core `s`.
fn with_theory_notes(
    mut per_cycle: ResultRecord,
    w: Width,
    paired: &Paired,
    clocks: &WidthClocks,
    s: &CoreSpec,
    t: f64,
    m: f64,
) -> ResultRecord {
    let WidthClocks { ghz1, drift, lic } = *clocks;
    let best = paired.best();
    per_cycle = per_cycle.with_note(&format!(
        "{:.1}% of the theoretical {t:.0} FLOP/cycle (median of {} samples){} ({}; source: {})",
        m / t * 100.0,
        paired.per_cycle.len(),
        best.map(|b| format!(
            "; peak (best sample) {b:.2} FLOP/cycle = {:.1}%",
            b / t * 100.0
        ))
        .unwrap_or_default(),
        s.core,
        s.source
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
    per_cycle = per_cycle
        .with_data(json!({"theoretical": t, "ratio": m / t, "best": best, "best_ratio": best.map(|b| b / t), "ghz_reference": ghz1, "ghz_drift": drift, "clock_moved_samples": paired.moved, "ghz_under_this_width": lic}));
    if let (Some(l), Some(g)) = (lic, ghz1) {
        let at_lic = m * g / l;
        per_cycle = per_cycle.with_note(&format!(
            "the clock while {}-bit FMAs run is {l:.2} GHz ({:+.1}% against the add-chain clock); at that clock the kernel reaches {at_lic:.2} FLOP/cycle = {:.1}% of theoretical",
            w.bits(),
            (l / g - 1.0) * 100.0,
            at_lic / t * 100.0
        ));
    }
    per_cycle
}

/// Step 2 of `Peak::run`: the widest width `w`, one thread per core at once.
fn fma_per_core(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
    spec: &Result<CoreSpec, String>,
    per_core: &CpuSet,
    w: Width,
) -> Result<()> {
    (ctx.step)(&format!("FMA {}-bit, {} cores", w.bits(), per_core.len()));
    let (agg, per_thread) = team_rate(
        per_core,
        policy,
        ctx.stop,
        w.flops_per_iter() / 1e9,
        |_t, it| fma::run(w, it),
    )?;
    let mut rec = ResultRecord::of(FMA_FLOPS, "GFLOP/s", true)
        .with_param("width", w.name())
        .with_param("threads", "per_core")
        .with_method(
            &format!("{}; one pinned thread per core, aggregate", method_fma(w)),
            METHOD_VERSION,
        )
        .with_samples(agg);
    let theo = match (spec, ctx.facts.ghz_all) {
        (Ok(s), Some(g)) => s.flops_per_cycle(w).map(|f| f * g * per_core.len() as f64),
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
    rec = rec.with_data(json!({"cpus": per_core.to_string(), "per_thread_gflops": per_thread, "theoretical_gflops": theo, "ghz_all": ctx.facts.ghz_all}));
    out(rec)
}

/// Step 3 of `Peak::run`: seed 000's capacity formula against the nop loop
/// on every usable CPU.
fn capacity_formula(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    policy: &Policy,
    spec: &Result<CoreSpec, String>,
    per_core: &CpuSet,
    theory_json: serde_json::Value,
) -> Result<()> {
    (ctx.step)(&format!("nop loop on {} CPUs", ctx.cpus.len()));
    let insns = NOP_LOOP_INSNS as f64;
    let (agg, _) = team_rate(&ctx.cpus, policy, ctx.stop, insns / 1e9, |_t, it| {
        nop_loop(it)
    })?;
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
    let formula = match (spec, ctx.facts.ghz_all) {
        (Ok(s), Some(g)) => s
            .issue_width
            .map(|iw| g * cores as f64 * iw * smt_factor(tpc)),
        _ => None,
    };
    match (formula, rec.value, spec) {
        (Some(f), Some(m), Ok(s)) => {
            rec = rec.with_note(&format!(
                "{:.1}% of seed 000's formula: {:.2} GHz (all-core, measured) × {cores} cores × issue width {} ({}) × SMT factor {} = {f:.1} G instr/s",
                m / f * 100.0,
                ctx.facts.ghz_all.unwrap_or(0.0),
                s.issue_width.unwrap_or(0.0),
                s.core,
                smt_factor(tpc),
            ));
        }
        (None, _, Err(e)) => {
            rec = rec.with_note(&format!("seed 000's formula not available: {e}"))
        }
        (None, _, Ok(_)) => {
            rec = rec.with_note(
                "seed 000's formula not available: issue width unknown or the all-core clock was not measured",
            )
        }
        _ => {}
    }
    rec = rec
        .with_note("the nop loop takes one taken branch per iteration; most cores run at most one taken branch per cycle, so it cannot exceed 5 instructions per cycle per thread")
        .with_data(json!({"formula_g_instr_s": formula, "threads_per_core": tpc, "smt_factor": smt_factor(tpc), "cores": cores, "theory": theory_json}));
    out(rec)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intel(model: u32, amx: bool, brand: &str) -> CoreId {
        CoreId {
            vendor: Some("GenuineIntel".into()),
            family: Some(6),
            model: Some(model),
            brand: Some(brand.into()),
            amx_tile: amx,
            avx512f: true,
            ..Default::default()
        }
    }

    #[test]
    fn sapphire_rapids_by_amx_even_with_a_masked_model() {
        // This VM reports model 0xa7 and a generic brand; AMX gives it away.
        let s = core_spec(&intel(0xa7, true, "Intel(R) Xeon(R) Processor")).unwrap();
        assert_eq!(s.flops_per_cycle(Width::V512), Some(32.0));
        assert_eq!(s.flops_per_cycle(Width::V256), Some(16.0));
        assert_eq!(s.flops_per_cycle(Width::Scalar), Some(4.0));
        assert_eq!(s.issue_width, Some(6.0));
    }

    #[test]
    fn skylake_sp_by_sku() {
        let gold = core_spec(&intel(
            85,
            false,
            "Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz",
        ))
        .unwrap();
        assert_eq!(gold.flops_per_cycle(Width::V512), Some(32.0));
        let silver = core_spec(&intel(85, false, "Intel(R) Xeon(R) Silver 4114 CPU")).unwrap();
        assert_eq!(silver.flops_per_cycle(Width::V512), Some(16.0));
        let other = core_spec(&intel(85, false, "Intel Xeon")).unwrap();
        assert_eq!(other.flops_per_cycle(Width::V512), None);
        assert_eq!(other.flops_per_cycle(Width::V256), Some(16.0));
    }

    #[test]
    fn hygon_is_zen1() {
        let s = core_spec(&CoreId {
            vendor: Some("HygonGenuine".into()),
            family: Some(0x18),
            model: Some(1),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(s.flops_per_cycle(Width::V256), Some(8.0));
        assert_eq!(s.flops_per_cycle(Width::V128), Some(8.0));
    }

    #[test]
    fn unknown_cores_say_so() {
        let e = core_spec(&CoreId {
            arm_implementer: Some(0x70),
            arm_part: Some(0x663),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.contains("not in cpuscope's table"), "{e}");
        let kp = core_spec(&CoreId {
            arm_implementer: Some(0x48),
            arm_part: Some(0xd01),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(kp.issue_width, Some(4.0));
        assert_eq!(kp.flops_per_cycle(Width::V128), None);
    }

    #[test]
    fn seed_smt_factors() {
        assert_eq!(smt_factor(1), 1.0);
        assert_eq!(smt_factor(2), 1.3);
        assert_eq!(smt_factor(4), 1.5);
    }
}

//! The clock while a SIMD width runs (docs/methods-compute.md): a short
//! scalar probe bracketed by FMA work on the same core, its ratio to the
//! scalar clock, and whether a change is beyond the probe's own noise.

use crate::base::Stats;
use crate::experiments::experiment::ExpCtx;
use crate::harness::{measure_bracketed, Policy};
use crate::kernels::chains::{Chain, CHAIN_LEN};
use crate::kernels::fma::ClockProbe;
use crate::placement::pin::AffinityGuard;
use anyhow::Result;
use std::time::Duration;

/// Length of each plain add-chain reading around a clock-probe sample.
pub(super) const PROBE_BRACKET: Duration = Duration::from_millis(1);

/// The smallest clock change called beyond noise (2%): the per-sample ratio
/// of two add chains on one CPU repeats to about 0.1% (`frequency:
/// xor_vs_add`), but a host moves its clock by a few % within a sample.
pub const CLOCK_NOISE_FLOOR: f64 = 0.02;

/// The clock while one width runs, against the scalar clock: the probe's
/// samples, each bracketed by the plain add chain of `frequency` (the scalar
/// clock) right before and right after it on the same CPU.
#[derive(Clone, Debug)]
pub struct ClockUnder {
    pub probe: ClockProbe,
    pub cpu: usize,
    /// Per sample: the probe's GHz (chain adds / ns per iteration).
    pub ghz: Vec<f64>,
    /// Per sample: the mean of the two plain add-chain readings, GHz.
    pub scalar_ghz: Vec<f64>,
    /// Per sample: `ghz / scalar_ghz`.
    pub ratio: Vec<f64>,
    /// The same probe with twice the chain and twice the FMAs per iteration
    /// (same density): median ratio against the scalar clock. Equal to the
    /// main ratio when the chain, not the loop or the FMAs, sets the pace.
    pub check_ratio: Option<f64>,
    pub preempted: Option<String>,
}

/// How the clock under a width compares with the scalar clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockChange {
    /// Median of the per-sample ratios (clock under the width / scalar clock).
    pub ratio: f64,
    /// The 90th percentile of the width's clock readings over that of the
    /// scalar clock's: a chain can only read low when disturbed (an
    /// interrupt, another process, the host), so the high readings of both
    /// are the undisturbed ones.
    pub high_ratio: f64,
    /// The noise tolerance: the larger of [`CLOCK_NOISE_FLOOR`] and three
    /// robust standard errors of the median ratio (1.4826 × MAD × 1.2533 / √n).
    pub tolerance: f64,
    /// The clock is lower than the scalar clock by more than the tolerance,
    /// by the median ratio and by the high readings alike.
    pub drop_beyond_noise: bool,
    /// The clock reads higher than the scalar clock by more than the
    /// tolerance (both ways): impossible for a chain of one add per cycle
    /// (the probe or the reading is wrong).
    pub above_beyond_noise: bool,
    /// The median ratio and the high readings agree within the tolerance;
    /// false when most samples were disturbed (a busy machine).
    pub consistent: bool,
}

/// The `q` quantile (0..1, nearest rank) of the finite values.
fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let i = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1;
    Some(s[i])
}

/// The change of the clock under a width from its samples: per-sample
/// ratios (clock under the width / scalar clock, bracketed sample by
/// sample) and the two clocks' readings; None without samples.
pub fn clock_change(ratios: &[f64], ghz: &[f64], scalar: &[f64]) -> Option<ClockChange> {
    let v: Vec<f64> = ratios.iter().copied().filter(|r| r.is_finite()).collect();
    let s = Stats::from_samples(&v)?;
    let dev: Vec<f64> = v.iter().map(|r| (r - s.median).abs()).collect();
    let mad = Stats::from_samples(&dev).map(|d| d.median).unwrap_or(0.0);
    let se = 1.4826 * mad * 1.2533 / (v.len() as f64).sqrt();
    let tolerance = CLOCK_NOISE_FLOOR.max(3.0 * se);
    let high_ratio = match (quantile(ghz, 0.9), quantile(scalar, 0.9)) {
        (Some(g), Some(c)) if c > 0.0 => g / c,
        _ => s.median,
    };
    Some(ClockChange {
        ratio: s.median,
        high_ratio,
        tolerance,
        drop_beyond_noise: s.median < 1.0 - tolerance && high_ratio < 1.0 - tolerance,
        above_beyond_noise: s.median > 1.0 + tolerance && high_ratio > 1.0 + tolerance,
        consistent: (s.median - high_ratio).abs() <= tolerance,
    })
}

impl ClockUnder {
    pub fn change(&self) -> Option<ClockChange> {
        clock_change(&self.ratio, &self.ghz, &self.scalar_ghz)
    }
    pub(super) fn scalar_median(&self) -> Option<f64> {
        Stats::from_samples(&self.scalar_ghz).map(|s| s.median)
    }
}

/// The samples of one clock-probe measurement.
struct ProbeSamples {
    /// Per sample: the probe's GHz.
    ghz: Vec<f64>,
    /// Per sample: the mean of the plain add chain right before and after.
    scalar: Vec<f64>,
    /// Per sample: `ghz / scalar`.
    ratio: Vec<f64>,
    preempted: Option<String>,
}

/// One clock-probe measurement on `cpu`, each sample bracketed by the
/// plain add chain.
fn bracketed_probe(
    ctx: &ExpCtx,
    policy: &Policy,
    cpu: usize,
    probe: ClockProbe,
) -> Result<ProbeSamples> {
    let _g = AffinityGuard::pin(cpu)?;
    let b = measure_bracketed(
        policy,
        ctx.stop,
        PROBE_BRACKET,
        |it| Chain::Add.run(it, 1),
        |it| probe.run(it),
    )?;
    let adds = probe.chain_adds() as f64;
    let cyc = CHAIN_LEN as f64;
    let ghz: Vec<f64> = b.subject.samples.iter().map(|ns| adds / ns).collect();
    let scalar: Vec<f64> = b
        .ref_before
        .iter()
        .zip(&b.ref_after)
        .map(|(a, z)| (cyc / a + cyc / z) / 2.0)
        .collect();
    let ratio = ghz.iter().zip(&scalar).map(|(g, s)| g / s).collect();
    Ok(ProbeSamples {
        ghz,
        scalar,
        ratio,
        preempted: b.subject.preemption_note(),
    })
}

/// The clock under `probe` on `cpu`, and the same probe with twice the
/// chain (the check that the chain sets the pace, on half the budget).
/// None when the probe cannot run here.
pub(super) fn measure_clock_under(
    ctx: &mut ExpCtx,
    policy: &Policy,
    cpu: usize,
    probe: ClockProbe,
) -> Result<Option<ClockUnder>> {
    if probe.unsupported_reason().is_some() {
        return Ok(None);
    }
    // Samples as long as the plain chain's readings around them (1 ms), so
    // that both are as likely to be disturbed (the timer tick, another
    // process, the host); many of them, the whole budget.
    let pp = Policy {
        min_sample: PROBE_BRACKET,
        min_reps: policy.min_reps.max(10),
        max_reps: policy.max_reps.max(60),
        target_cv: None,
        ..policy.clone()
    };
    let main = bracketed_probe(ctx, &pp, cpu, probe)?;
    let half = Policy {
        time_budget: pp.time_budget / 2,
        ..pp.clone()
    };
    let double = ClockProbe { blocks: 2, ..probe };
    let check = bracketed_probe(ctx, &half, cpu, double)?;
    Ok(Some(ClockUnder {
        probe,
        cpu,
        ghz: main.ghz,
        scalar_ghz: main.scalar,
        ratio: main.ratio,
        check_ratio: Stats::from_samples(&check.ratio).map(|s| s.median),
        preempted: main.preempted,
    }))
}

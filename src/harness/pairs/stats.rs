//! What one pair's measurement gives: its statistics (quartiles, the median of
//! the samples its initiator was not switched out during, pass medians), a
//! method's matrix run, and the steal time over the measured CPUs.

use crate::base::Stats;
use crate::kernels::c2c::Method;
use serde::{Deserialize, Serialize};

/// Steal time over the c2c experiment: the delta of the `steal` column of
/// /proc/stat, summed over the measured CPUs ([`StealTime::between`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StealTime {
    /// None with the reason when it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Steal ticks (USER_HZ) over the measured CPUs.
    pub ticks: u64,
    /// Every column's ticks over the measured CPUs (their whole time).
    pub total_ticks: u64,
    /// `ticks` in seconds.
    pub seconds: f64,
    /// Steal over the measured CPUs' time, 0..1.
    pub share: f64,
    pub cpus: usize,
    /// Wall time between the two readings, seconds.
    pub wall_s: f64,
}

/// Statistics of one pair.
#[derive(Clone, Debug, Serialize)]
pub struct PairStats {
    pub initiator: usize,
    pub responder: usize,
    /// One-way latency statistics over the samples, ns.
    pub stats: Stats,
    pub p25: f64,
    pub p75: f64,
    /// Samples during which the initiator was involuntarily switched out
    /// (getrusage ru_nivcsw changed); None when the kernel does not say.
    pub preempted_samples: Option<usize>,
    /// Involuntary switches of the responder over the whole pair.
    pub responder_switches: Option<i64>,
    /// Median of each pass, in pass order (repeatability over time).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass_medians: Vec<f64>,
    /// The samples themselves (kept only when asked).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// Per sample, parallel to `samples` when both are kept: the initiator
    /// was switched out during it.
    #[serde(skip)]
    pub sample_preempted: Vec<bool>,
    /// Median of the samples not marked preempted (all of them when the
    /// kernel does not say); None when every sample was.
    pub clean_median_ns: Option<f64>,
    /// Median of each pass's samples not marked preempted, in pass order
    /// (a pass whose every sample was preempted has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clean_pass_medians: Vec<f64>,
}

/// The result of measuring one method over a plan.
#[derive(Clone, Debug, Serialize)]
pub struct MatrixRun {
    #[serde(serialize_with = "ser_method")]
    pub method: Method,
    pub cpus: Vec<usize>,
    pub pairs: Vec<PairStats>,
    pub rounds_done: usize,
    pub rounds_planned: usize,
    pub elapsed_s: f64,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
    /// What was cut on the way to stay within the budget (fewer samples
    /// per pair, fewer passes), when rounds ran slower than planned.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub adapted: Vec<String>,
    /// Steal time of the measured CPUs over the experiment (set by the
    /// experiment; all methods share it, as they alternate within passes).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub steal: Option<StealTime>,
}

impl StealTime {
    /// Not readable, with the reason.
    pub fn unavailable(why: &str) -> StealTime {
        StealTime {
            unavailable: Some(why.to_string()),
            ..Default::default()
        }
    }

    /// From two readings of /proc/stat's steal column, over `cpus`;
    /// `hz` = USER_HZ.
    pub fn between(
        before: &[crate::machine::devices::CpuSteal],
        after: &[crate::machine::devices::CpuSteal],
        cpus: &[usize],
        hz: f64,
        wall_s: f64,
    ) -> StealTime {
        let (mut ticks, mut total, mut seen) = (0u64, 0u64, 0usize);
        for &c in cpus {
            let b = before.iter().find(|x| x.cpu == c);
            let a = after.iter().find(|x| x.cpu == c);
            if let (Some(b), Some(a)) = (b, a) {
                ticks += a.steal.saturating_sub(b.steal);
                total += a.total.saturating_sub(b.total);
                seen += 1;
            }
        }
        if seen == 0 {
            return StealTime::unavailable("/proc/stat lists none of the measured CPUs");
        }
        StealTime {
            unavailable: None,
            ticks,
            total_ticks: total,
            seconds: ticks as f64 / hz.max(1.0),
            share: if total > 0 {
                ticks as f64 / total as f64
            } else {
                0.0
            },
            cpus: seen,
            wall_s,
        }
    }
}

pub(super) fn ser_method<S: serde::Serializer>(
    m: &Method,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(m.as_str())
}

impl PairStats {
    /// The pair's figure: the median of its pass medians when there are at
    /// least three passes (robust to a pass the machine disturbed), else the
    /// median of its samples.
    pub fn median(&self) -> f64 {
        if self.pass_medians.len() >= 3 {
            let mut v = self.pass_medians.clone();
            v.sort_by(|a, b| a.total_cmp(b));
            quantile(&v, 0.5)
        } else {
            self.stats.median
        }
    }

    /// Interquartile range over the median: a spread that preemption
    /// outliers do not inflate.
    pub fn iqr_ratio(&self) -> f64 {
        (self.p75 - self.p25) / self.stats.median
    }

    /// The pair's figure from its clean samples only (what the grouping
    /// uses): the median of the clean pass medians with at least three,
    /// else the median of the clean samples.
    pub fn clean_median(&self) -> Option<f64> {
        if self.clean_pass_medians.len() >= 3 {
            let mut v = self.clean_pass_medians.clone();
            v.sort_by(|a, b| a.total_cmp(b));
            Some(quantile(&v, 0.5))
        } else {
            self.clean_median_ns
        }
    }

    /// Relative noise of the pair's figure: the CV of its (clean) pass
    /// medians with at least three passes, else the spread of its samples
    /// (interquartile range / 1.349 over the median, a standard deviation
    /// that preemption outliers do not inflate).
    pub fn rel_noise(&self) -> f64 {
        let passes = if self.clean_pass_medians.len() >= 3 {
            &self.clean_pass_medians
        } else {
            &self.pass_medians
        };
        if passes.len() >= 3 {
            if let Some(s) = Stats::from_samples(passes) {
                return s.cv;
            }
        }
        self.iqr_ratio() / 1.349
    }

    /// Samples disturbed by preemption: the initiator's marked samples plus
    /// the responder's involuntary switches (each disturbs about one sample).
    pub fn disturbed_samples(&self) -> usize {
        self.preempted_samples.unwrap_or(0) + self.responder_switches.unwrap_or(0).max(0) as usize
    }
}

/// Quartile by linear interpolation of sorted values.
pub(super) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Statistics of a pair's samples.
pub fn pair_stats(a: usize, b: usize, samples: Vec<f64>, keep: bool) -> Option<PairStats> {
    pair_stats_marked(a, b, samples, Vec::new(), keep)
}

/// Statistics of a pair's samples, `preempted` marking the samples during
/// which the initiator was switched out (empty or of another length: none
/// known). The clean median leaves the marked samples out.
pub fn pair_stats_marked(
    a: usize,
    b: usize,
    samples: Vec<f64>,
    preempted: Vec<bool>,
    keep: bool,
) -> Option<PairStats> {
    let stats = Stats::from_samples(&samples)?;
    let mut s = samples.clone();
    s.sort_by(|x, y| x.total_cmp(y));
    let marked = preempted.len() == samples.len();
    let mut clean: Vec<f64> = if marked {
        samples
            .iter()
            .zip(&preempted)
            .filter(|(_, &p)| !p)
            .map(|(&x, _)| x)
            .collect()
    } else {
        s.clone()
    };
    clean.sort_by(|x, y| x.total_cmp(y));
    let clean_median = (!clean.is_empty()).then(|| quantile(&clean, 0.5));
    Some(PairStats {
        initiator: a,
        responder: b,
        stats,
        p25: quantile(&s, 0.25),
        p75: quantile(&s, 0.75),
        preempted_samples: None,
        responder_switches: None,
        pass_medians: vec![quantile(&s, 0.5)],
        clean_median_ns: clean_median,
        clean_pass_medians: clean_median.into_iter().collect(),
        sample_preempted: if keep && marked {
            preempted
        } else {
            Vec::new()
        },
        samples: if keep { samples } else { Vec::new() },
    })
}

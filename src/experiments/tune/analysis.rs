//! What tune's runs say (docs/methods-tune.md): each candidate against the
//! baseline, a Hodges–Lehmann ratio with its distribution-free interval,
//! and the verdict kind.

use crate::base::mann_whitney::{ratio_estimate, RatioEstimate};
use crate::base::Stats;
use serde::{Deserialize, Serialize};

/// The confidence level of every interval shown.
pub const LEVEL: f64 = 0.95;

/// The verdict's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    /// The best is separated from the runner-up beyond noise.
    Winner,
    /// Every candidate's interval against the baseline holds 1.
    NoneDistinguishable,
    /// Some differ from the baseline, but the best two are within noise.
    NoSingleWinner,
    /// Too few runs (or one candidate) to tell.
    NotEnough,
}

/// The ranking of candidates with scores.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// Indices of the candidates with scores, best first.
    pub order: Vec<usize>,
    /// Each candidate's ratio to the baseline (None: no scores, or it is the baseline).
    pub vs_baseline: Vec<Option<RatioEstimate>>,
    /// The best against the runner-up, at [`Analysis::winner_level`].
    pub top: Option<RatioEstimate>,
    pub winner_level: f64,
    pub kind: VerdictKind,
    /// The ranking cannot change its answer with more runs of this kind.
    pub settled: bool,
}

pub(super) fn median(v: &[f64]) -> Option<f64> {
    Stats::from_samples(v).map(|s| s.median)
}

/// Rank the candidates by median score and decide: a winner when the
/// best's interval against the runner-up (at `1 - 0.05/(n-1)`, n ranked
/// candidates) lies on the better side of 1; "none distinguishable" when
/// every 95% interval against the baseline holds 1. Settled when the best
/// is separated from the runner-up at the stricter level of `looks`
/// interim checks (Bonferroni over the looks, so that stopping at the first
/// lucky round does not make winners of noise), or the best two are equal
/// to within `resolution`.
pub fn analyse(
    samples: &[Vec<f64>],
    baseline: usize,
    higher_is_better: bool,
    resolution: f64,
    looks: usize,
) -> Analysis {
    let mut order: Vec<usize> = (0..samples.len())
        .filter(|&i| median(&samples[i]).is_some())
        .collect();
    let key = |i: &usize| median(&samples[*i]).unwrap_or(f64::NAN);
    order.sort_by(|a, b| {
        let (x, y) = (key(a), key(b));
        let c = x.total_cmp(&y);
        (if higher_is_better { c.reverse() } else { c }).then(a.cmp(b))
    });
    let base = samples.get(baseline).filter(|s| !s.is_empty());
    let vs_baseline: Vec<Option<RatioEstimate>> = (0..samples.len())
        .map(|i| {
            if i == baseline {
                return None;
            }
            ratio_estimate(&samples[i], base?, LEVEL)
        })
        .collect();
    let n = order.len();
    let winner_level = if n > 2 {
        1.0 - (1.0 - LEVEL) / (n - 1) as f64
    } else {
        LEVEL
    };
    let top = (n >= 2)
        .then(|| ratio_estimate(&samples[order[0]], &samples[order[1]], winner_level))
        .flatten();
    let better = |r: &RatioEstimate| {
        if higher_is_better {
            r.low > 1.0
        } else {
            r.high < 1.0
        }
    };
    let winner = top.as_ref().is_some_and(better);
    let all_bounded = vs_baseline
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != baseline && !samples[*i].is_empty())
        .all(|(_, r)| r.as_ref().is_some_and(|r| r.bounded()));
    let none_differ = vs_baseline.iter().flatten().all(|r| !r.excludes_one());
    let kind = if winner {
        VerdictKind::Winner
    } else if n < 2 || base.is_none() || !all_bounded || !top.as_ref().is_some_and(|t| t.bounded())
    {
        VerdictKind::NotEnough
    } else if none_differ {
        VerdictKind::NoneDistinguishable
    } else {
        VerdictKind::NoSingleWinner
    };
    let early_level = 1.0 - (1.0 - winner_level) / looks.max(1) as f64;
    let early = (n >= 2)
        .then(|| ratio_estimate(&samples[order[0]], &samples[order[1]], early_level))
        .flatten();
    let settled =
        early.as_ref().is_some_and(better) || top.as_ref().is_some_and(|t| t.within(resolution));
    Analysis {
        order,
        vs_baseline,
        top,
        winner_level,
        kind,
        settled,
    }
}

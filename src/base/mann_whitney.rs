//! Comparing two sets of repeated measurements without assuming a
//! distribution: the Mann–Whitney (Wilcoxon rank-sum) test, and the ratio of
//! two sets' typical values with its distribution-free confidence interval
//! (Hodges–Lehmann estimate and Moses interval, on logarithms).
//!
//! For positive figures `a` and `b` (times, scores), on `ln a` and `ln b`:
//! the estimate of the shift is the median of every pairwise difference
//! `ln a_i - ln b_j`; the interval is the pair of order statistics of those
//! differences that the null distribution of the Mann–Whitney U puts at
//! `(1 - level) / 2` on each side. `exp` of both is the ratio `a / b` and its
//! interval. The coverage is at least `level` for any continuous
//! distribution whose shape is the same in both sets (a pure change of
//! scale), whatever the sample sizes: with too few samples for the level the
//! interval is unbounded (`low = 0`, `high = inf`), never too narrow. The U
//! distribution is exact (counted) up to `EXACT_MAX_PAIRS` pairs, normal
//! beyond.

/// Largest `n * m` for which the null distribution of U is counted exactly.
pub const EXACT_MAX_PAIRS: usize = 2500;

/// The ratio of two sets' typical values, with its interval and test.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RatioEstimate {
    /// Hodges–Lehmann estimate of `a / b` (exp of the median log difference).
    pub ratio: f64,
    /// Lower end of the interval (0 when the samples are too few).
    pub low: f64,
    /// Upper end (infinite when the samples are too few; JSON: null).
    #[serde(with = "inf_as_null")]
    pub high: f64,
    /// The interval's confidence level (0.95).
    pub level: f64,
    /// Two-sided Mann–Whitney p-value of "no difference".
    pub p_value: f64,
    pub n_a: usize,
    pub n_b: usize,
    /// `exact` (counted U distribution) or `normal` (approximation).
    pub method: String,
}

impl RatioEstimate {
    /// True when the interval holds neither 1 nor its neighbourhood: the two
    /// sets differ at this level.
    pub fn excludes_one(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }

    /// True when both ends lie within `[1/(1+tol), 1+tol]`: the sets are
    /// equal to within `tol` at this level.
    pub fn within(&self, tol: f64) -> bool {
        self.low >= 1.0 / (1.0 + tol) && self.high <= 1.0 + tol
    }

    /// True when the interval is bounded (enough samples for the level).
    pub fn bounded(&self) -> bool {
        self.low > 0.0 && self.high.is_finite()
    }
}

mod inf_as_null {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
    }
}

/// The null distribution of U for sample sizes `n` and `m`: `P(U = u)` for
/// `u = 0 ..= n*m`, counted (every arrangement of the two samples equally
/// likely). None when `n * m` exceeds [`EXACT_MAX_PAIRS`] or a size is 0.
pub fn u_distribution(n: usize, m: usize) -> Option<Vec<f64>> {
    if n == 0 || m == 0 || n * m > EXACT_MAX_PAIRS {
        return None;
    }
    // c(i, j, u) = c(i-1, j, u-j) + c(i, j-1, u): the largest of the i+j
    // values is either an `a` (beating all j `b`s) or a `b`. Additions of
    // non-negative counts only, so f64 keeps the tails accurate.
    // prev[j] = c(i-1, j, ·), row[j] = c(i, j, ·).
    let mut prev: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut row: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        row.push(vec![1.0]);
        for j in 1..=m {
            let mut c = vec![0.0; i * j + 1];
            for (u, v) in prev[j].iter().enumerate() {
                c[u + j] += v;
            }
            for (u, v) in row[j - 1].iter().enumerate() {
                c[u] += v;
            }
            row.push(c);
        }
        prev = row;
    }
    let counts = prev.pop()?;
    let total: f64 = counts.iter().sum();
    Some(counts.into_iter().map(|c| c / total).collect())
}

/// Standard normal cumulative distribution.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, relative
/// error below 1.2e-7 everywhere).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Quantile of the standard normal distribution (Acklam's rational
/// approximation, relative error below 1.2e-9), for `p` in (0, 1).
#[allow(clippy::excessive_precision)] // the published coefficients, as printed
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383577518672690e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let lo = 0.02425;
    if p < lo {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - lo {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -normal_quantile(1.0 - p)
    }
}

/// U of `a` against `b`: pairs where `a` is larger, ties counting one half.
pub fn u_statistic(a: &[f64], b: &[f64]) -> f64 {
    let mut u = 0.0;
    for x in a {
        for y in b {
            if x > y {
                u += 1.0;
            } else if x == y {
                u += 0.5;
            }
        }
    }
    u
}

/// Two-sided p-value of the Mann–Whitney test that `a` and `b` come from
/// one distribution. None when a set is empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return None;
    }
    let u = u_statistic(a, b);
    let nm = (n * m) as f64;
    let lower = u.min(nm - u);
    let p = match u_distribution(n, m) {
        Some(dist) => {
            // P(U <= lower), lower rounded down (a tie's half counts against).
            let k = lower.floor() as usize;
            2.0 * dist[..=k.min(dist.len() - 1)].iter().sum::<f64>()
        }
        None => {
            let mean = nm / 2.0;
            let sd = (nm * (n + m + 1) as f64 / 12.0).sqrt();
            2.0 * normal_cdf((lower + 0.5 - mean) / sd)
        }
    };
    Some(p.min(1.0))
}

/// How many differences to cut from each end for a `level` interval: the
/// largest `k` with `P(U <= k - 1) <= (1 - level) / 2` (0: not enough
/// samples for this level).
fn cut(n: usize, m: usize, level: f64) -> (usize, &'static str) {
    let alpha2 = (1.0 - level) / 2.0;
    match u_distribution(n, m) {
        Some(dist) => {
            let mut cum = 0.0;
            let mut k = 0;
            for p in &dist {
                if cum + p > alpha2 + 1e-12 {
                    break;
                }
                cum += p;
                k += 1;
            }
            (k.min(n * m / 2), "exact")
        }
        None => {
            let nm = (n * m) as f64;
            let sd = (nm * (n + m + 1) as f64 / 12.0).sqrt();
            let z = normal_quantile(1.0 - alpha2);
            let k = (nm / 2.0 - z * sd).floor().max(0.0) as usize;
            (k.min(n * m / 2), "normal")
        }
    }
}

/// The ratio `a / b` of two sets of positive figures: Hodges–Lehmann
/// estimate, Moses interval at `level`, Mann–Whitney p-value. None when a
/// set is empty or holds a figure that is not positive and finite.
pub fn ratio_estimate(a: &[f64], b: &[f64], level: f64) -> Option<RatioEstimate> {
    let ok = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_finite() && *x > 0.0);
    if !(ok(a) && ok(b) && level > 0.0 && level < 1.0) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let mut d: Vec<f64> = Vec::with_capacity(la.len() * lb.len());
    for x in &la {
        for y in &lb {
            d.push(x - y);
        }
    }
    d.sort_by(|x, y| x.total_cmp(y));
    let n = d.len();
    let median = if n % 2 == 1 {
        d[n / 2]
    } else {
        (d[n / 2 - 1] + d[n / 2]) / 2.0
    };
    let (k, method) = cut(a.len(), b.len(), level);
    let (low, high) = if k == 0 {
        (0.0, f64::INFINITY)
    } else {
        (d[k - 1].exp(), d[n - k].exp())
    };
    Some(RatioEstimate {
        ratio: median.exp(),
        low,
        high,
        level,
        p_value: mann_whitney_p(a, b).unwrap_or(1.0),
        n_a: a.len(),
        n_b: b.len(),
        method: method.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_distribution_small() {
        // n = m = 2: arrangements aabb.. 6 in all; U = 0,1,2,2,3,4.
        let d = u_distribution(2, 2).unwrap();
        let want = [1.0, 1.0, 2.0, 1.0, 1.0].map(|c| c / 6.0);
        for (g, w) in d.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{d:?}");
        }
        let d = u_distribution(10, 12).unwrap();
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Symmetric.
        for u in 0..=120 {
            assert!((d[u] - d[120 - u]).abs() < 1e-15);
        }
        assert!(u_distribution(60, 60).is_none());
    }

    #[test]
    fn normal_helpers() {
        assert!((normal_cdf(1.959964) - 0.975).abs() < 1e-6);
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.005) + 2.5758293).abs() < 1e-5);
    }

    #[test]
    fn p_values() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        // Complete separation of 5 and 5: p = 2 / C(10,5) = 2/252.
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        assert!((mann_whitney_p(&a, &a).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn interval_too_few_samples_is_unbounded() {
        let r = ratio_estimate(&[1.0, 1.1, 1.2], &[2.0, 2.1, 2.2], 0.95).unwrap();
        assert!((r.ratio - 0.5238).abs() < 0.01);
        assert!(!r.bounded());
        assert!(!r.excludes_one());
        let r = ratio_estimate(&[1.0, 1.1, 1.2, 1.3], &[2.0, 2.1, 2.2, 2.3], 0.95).unwrap();
        assert!(r.bounded() && r.excludes_one(), "{r:?}");
        assert!(ratio_estimate(&[0.0], &[1.0], 0.95).is_none());
    }
}

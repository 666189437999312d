//! Summary statistics of repeated measurements.

use serde::{Deserialize, Serialize};

/// Coefficient of variation above which a figure is flagged as noisy.
pub const NOISY_CV: f64 = 0.05;

/// Median, min, max, mean, standard deviation and CV of a sample set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n-1).
    pub stddev: f64,
    /// stddev / mean (a fraction, 0.02 = 2%).
    pub cv: f64,
}

impl Stats {
    /// Statistics of `samples`; None when empty or when a sample is not finite.
    pub fn from_samples(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let stddev = var.sqrt();
        let cv = if mean != 0.0 {
            stddev / mean.abs()
        } else {
            0.0
        };
        Some(Stats {
            n,
            median,
            min: v[0],
            max: v[n - 1],
            mean,
            stddev,
            cv,
        })
    }

    /// True when the spread is above the noise threshold (CV > 5%).
    pub fn is_noisy(&self) -> bool {
        self.cv > NOISY_CV
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_stats() {
        let s = Stats::from_samples(&[3.0, 1.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.n, 4);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        assert_eq!(s.mean, 2.5);
        assert!((s.stddev - 1.2909944).abs() < 1e-6);
        assert!(s.is_noisy());
        assert!(Stats::from_samples(&[]).is_none());
        assert!(Stats::from_samples(&[f64::NAN]).is_none());
        let one = Stats::from_samples(&[5.0]).unwrap();
        assert_eq!((one.median, one.cv), (5.0, 0.0));
    }
}

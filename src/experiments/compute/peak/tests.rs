//! Unit tests of `peak` (beside it, to keep the module readable).

use super::labels::*;
use super::*;
use serde_json::json;

#[test]
fn all_cores_under_one_core_is_implausible() {
    // The ARM lab's first all-cores 128-bit figure after boot: 0.0011
    // GFLOP/s on 8 vCPUs against 0.33 on one.
    let why = all_cores_implausible(Some(0.0011), Some(0.33), 8).unwrap();
    assert!(why.contains("under half of one core alone"), "{why}");
    // Shared clocks and power may cost, never this much.
    assert!(all_cores_implausible(Some(0.9), Some(0.33), 8).is_none());
    assert!(all_cores_implausible(Some(0.2), Some(0.33), 8).is_none());
    assert!(all_cores_implausible(Some(0.1), Some(0.33), 1).is_none());
    assert!(all_cores_implausible(None, Some(0.33), 8).is_none());
    // Flagged: marked in the verdict and kept out of advice.
    let r = ResultRecord::of(FMA_FLOPS, "GFLOP/s", true)
        .with_samples(vec![0.0011])
        .with_suspect(&why);
    assert!(r.is_suspect() && r.is_flagged() && !r.is_noisy());
}

#[test]
fn clock_change_against_the_scalar_clock() {
    // The user's 512-bit case: 8% below the scalar clock, 1% noise.
    let drop: Vec<f64> = (0..12).map(|i| 0.92 + (i % 3) as f64 * 0.005).collect();
    let g = |r: &[f64]| r.iter().map(|x| 3.0 * x).collect::<Vec<f64>>();
    let flat = [3.0; 12];
    let c = clock_change(&drop, &g(&drop), &flat).unwrap();
    assert!(
        c.drop_beyond_noise && !c.above_beyond_noise && c.consistent,
        "{c:?}"
    );
    assert!((c.ratio - 0.925).abs() < 0.006);
    assert_eq!(c.tolerance, CLOCK_NOISE_FLOOR);
    // Within the floor: the scalar clock.
    let same = [0.995, 0.99, 1.004, 0.998, 1.001, 0.993];
    let c = clock_change(&same, &g(&same), &flat).unwrap();
    assert!(!c.drop_beyond_noise && !c.above_beyond_noise, "{c:?}");
    // A wide spread widens the tolerance: 6% below, but noisy.
    let noisy = [0.80, 1.05, 0.94, 0.88, 1.02, 0.95, 0.86];
    let c = clock_change(&noisy, &g(&noisy), &flat).unwrap();
    assert!(c.tolerance > CLOCK_NOISE_FLOOR, "{c:?}");
    assert!(!c.drop_beyond_noise, "{c:?}");
    // Above the scalar clock beyond noise: what a chain cannot do.
    let up = [1.06, 1.07, 1.05, 1.06, 1.06];
    let c = clock_change(&up, &g(&up), &flat).unwrap();
    assert!(c.above_beyond_noise);
    // Most samples of the width disturbed by another process (read low,
    // the median ratio too), its undisturbed readings at the scalar
    // clock: not a drop.
    let busy = [0.6, 0.61, 0.6, 0.6, 1.0, 0.99, 0.6, 0.6, 1.0, 0.6];
    let c = clock_change(&busy, &g(&busy), &flat).unwrap();
    assert!(c.ratio < 0.9 && c.high_ratio > 0.98, "{c:?}");
    assert!(!c.drop_beyond_noise && !c.consistent, "{c:?}");
    assert!(clock_change(&[], &[], &[]).is_none());
    assert!(clock_change(&[f64::NAN], &[], &[]).is_none());
}

#[test]
fn clock_words_name_the_width_and_the_drop() {
    let rec = |w: &str, ratio: f64, drop: bool| {
        ResultRecord::of(SIMD_CLOCK, "GHz", true)
            .with_param("width", w)
            .with_param("threads", "1")
            .with_samples(vec![3.0 * ratio; 5])
            .with_data(json!({"ghz_scalar": 3.0, "ratio_vs_scalar": ratio, "noise_tolerance": 0.02, "drop_beyond_noise": drop}))
    };
    assert_eq!(
        clock_words(&rec("512", 0.92, true)).unwrap(),
        "512-bit runs at 2.76 GHz (\u{2212}8% vs scalar)"
    );
    assert_eq!(
        clock_words(&rec("256", 0.99, false)).unwrap(),
        "256-bit runs at the scalar clock (±2%)"
    );
    assert_eq!(
        clock_record_label(&rec("none", 1.0, false)),
        "add chain alone"
    );
    let na = ResultRecord::unavailable(SIMD_CLOCK.experiment, SIMD_CLOCK.metric, "GHz", "x");
    assert!(clock_words(&na).is_none());
}

#[test]
fn seed_smt_factors() {
    assert_eq!(smt_factor(1), 1.0);
    assert_eq!(smt_factor(2), 1.3);
    assert_eq!(smt_factor(4), 1.5);
}

#[test]
fn inference_from_measured_flops() {
    // Two 512-bit FMA units at 98%.
    let (u, t) = infer_fma_units(512, 31.5).unwrap();
    assert_eq!(u, 2.0);
    assert!(
        t.contains("two 512-bit FMA units") && t.contains("inferred"),
        "{t}"
    );
    // Zen 4: 512-bit split in two halves over two 256-bit units.
    assert_eq!(infer_fma_units(512, 15.6).unwrap().0, 1.0);
    assert_eq!(infer_fma_units(256, 7.9).unwrap().0, 1.0);
    assert_eq!(infer_fma_units(256, 4.0).unwrap().0, 0.5);
    assert_eq!(infer_fma_units(64, 7.8).unwrap().0, 4.0);
    // Between two counts: nothing inferred.
    let e = infer_fma_units(256, 11.0).unwrap_err();
    assert!(e.contains("nothing inferred"), "{e}");
}

//! Where a latency-vs-bandwidth curve bends: its idle latency, its
//! saturation (the most bandwidth measured, and the latency there) and its
//! knee, the bandwidth at which the latency reaches twice the idle one
//! (Mess's and MLC's reading of the curve; docs/methods-memory.md,
//! "Read/write mixes"). Reads points only; imports nothing of its parent.

/// The latency at the knee, as a multiple of the idle latency.
pub const KNEE_FACTOR: f64 = 2.0;

/// What a curve shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Bend {
    pub idle_ns: f64,
    /// The most bandwidth measured and the latency there.
    pub saturation_gbs: f64,
    pub saturation_ns: f64,
    /// The bandwidth where the latency reaches [`KNEE_FACTOR`] × idle
    /// (linear between the two points around it), or why there is none.
    pub knee_gbs: Result<f64, String>,
}

/// The bend of the loaded points `(GB/s, ns)` of a curve whose unloaded
/// latency is `idle_ns`; none without a loaded point.
pub fn bend(idle_ns: f64, loaded: &[(f64, f64)]) -> Option<Bend> {
    let mut pts: Vec<(f64, f64)> = loaded
        .iter()
        .copied()
        .filter(|p| p.0.is_finite() && p.1.is_finite() && p.0 > 0.0)
        .collect();
    if pts.is_empty() || idle_ns.is_nan() || idle_ns <= 0.0 {
        return None;
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (saturation_gbs, saturation_ns) = pts[pts.len() - 1];
    let target = KNEE_FACTOR * idle_ns;
    let mut prev = (0.0, idle_ns);
    let mut knee = None;
    for &p in &pts {
        if p.1 >= target {
            let f = if p.1 > prev.1 {
                (target - prev.1) / (p.1 - prev.1)
            } else {
                1.0
            };
            knee = Some(prev.0 + f.clamp(0.0, 1.0) * (p.0 - prev.0));
            break;
        }
        prev = p;
    }
    let worst = pts.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let knee_gbs = knee.ok_or_else(|| {
        format!(
            "no knee: the latency stays below {KNEE_FACTOR}× idle ({:.0} ns) at every load measured (at most ×{:.2}, up to {:.1} GB/s): the streams this machine can run do not saturate its memory",
            target,
            worst / idle_ns,
            saturation_gbs
        )
    });
    Some(Bend {
        idle_ns,
        saturation_gbs,
        saturation_ns,
        knee_gbs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_where_latency_doubles_between_two_points() {
        // Mess-like: flat, then a wall.
        let pts = [
            (20.0, 110.0),
            (60.0, 130.0),
            (100.0, 180.0),
            (120.0, 260.0),
            (125.0, 380.0),
        ];
        let b = bend(100.0, &pts).unwrap();
        assert_eq!((b.saturation_gbs, b.saturation_ns), (125.0, 380.0));
        // 200 ns lies a quarter of the way from (100, 180) to (120, 260).
        assert!((b.knee_gbs.unwrap() - 105.0).abs() < 1e-9);
    }

    #[test]
    fn points_come_in_any_order_and_the_knee_may_be_the_first() {
        let b = bend(100.0, &[(50.0, 300.0), (10.0, 250.0)]).unwrap();
        // From idle (0 GB/s, 100 ns) to (10, 250): 200 ns at 2/3 of the way.
        assert!((b.knee_gbs.unwrap() - 10.0 * 100.0 / 150.0).abs() < 1e-9);
        assert_eq!(b.saturation_gbs, 50.0);
    }

    #[test]
    fn a_curve_that_never_doubles_says_how_far_it_went() {
        let b = bend(100.0, &[(5.0, 104.0), (12.0, 121.0)]).unwrap();
        let why = b.knee_gbs.unwrap_err();
        assert!(why.contains("×1.21") && why.contains("12.0 GB/s"), "{why}");
        assert!(bend(100.0, &[]).is_none());
        assert!(bend(0.0, &[(1.0, 2.0)]).is_none());
        assert!(bend(100.0, &[(f64::NAN, 2.0)]).is_none());
    }
}

//! Timer and repetition policy. Properties only: no assertion on how fast
//! anything runs.

use cpuscope::base::timer::{Tick, Timer, TimerSource};
use cpuscope::harness::measure::{
    measure, measure_bracketed, measure_team, Interrupted, Policy, StopReason, Warmup,
};
use cpuscope::placement::pin::{current_affinity, pin_current_thread};
use cpuscope::placement::team::Team;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// A trivial kernel: `iters` dependent adds.
fn kernel(iters: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..iters {
        acc = black_box(acc.wrapping_add(i ^ 0x9e37));
    }
    acc
}

#[test]
fn timer_is_monotonic_and_fine() {
    let t = Timer::new();
    let info = t.info();
    eprintln!("timer: {info:?}");
    assert!(info.ticks_per_ns > 0.0 && info.ticks_per_ns.is_finite());
    assert!(
        info.resolution_ns.is_finite() && info.resolution_ns > 0.0,
        "{info:?}"
    );
    assert!(
        info.resolution_ns < 1000.0,
        "resolution {} ns",
        info.resolution_ns
    );
    assert!(info.overhead_ns.is_finite() && info.overhead_ns >= 0.0);
    #[cfg(target_arch = "x86_64")]
    if info.source != TimerSource::Tsc {
        assert!(
            info.fallback_reason.is_some(),
            "a fallback says why: {info:?}"
        );
    }
    // Monotonic on one CPU.
    std::thread::scope(|s| {
        s.spawn(|| {
            let cpu = current_affinity().unwrap().first().unwrap();
            pin_current_thread(cpu).unwrap();
            let mut last = t.now();
            for _ in 0..100_000 {
                let now = t.now();
                assert!(now >= last, "{now:?} < {last:?}");
                last = now;
            }
        });
    });
    // Cached: the same calibration every time.
    assert_eq!(Timer::new().info(), info);
    // Serialises with the source as a word.
    let json = serde_json::to_value(&info).unwrap();
    assert!(json["source"].is_string());
}

#[test]
fn timer_converts_ticks_to_wall_time() {
    let t = Timer::new();
    // A sleep is never shorter than asked: a lower bound is a property, not a
    // speed assertion.
    let a = t.now();
    std::thread::sleep(Duration::from_millis(5));
    let b = t.now();
    let ns = t.ns(a, b);
    assert!(ns >= 4.9e6, "5 ms sleep measured as {ns} ns");
    assert_eq!(t.ns(a, a), 0.0);
    assert!(t.ns(b, a) < 0.0);
    assert_eq!(
        Timer::with_source(TimerSource::ClockMonotonic).ns(Tick(0), Tick(10)),
        10.0
    );
}

#[test]
fn measure_converges_on_a_trivial_closure() {
    let stop = AtomicBool::new(false);
    let p = Policy::quick();
    let m = measure(&p, &stop, kernel).unwrap();
    assert!(m.iters >= 1);
    assert!(
        m.reps >= p.min_reps && m.reps <= p.max_reps,
        "{} reps",
        m.reps
    );
    assert_eq!(m.samples.len(), m.reps);
    assert_eq!(m.stats.n, m.reps);
    assert!(m.samples.iter().all(|x| x.is_finite() && *x >= 0.0));
    assert!(m.stats.min <= m.stats.median && m.stats.median <= m.stats.max);
    assert!(m.stats.cv >= 0.0);
    assert!(m.calibration_calls >= 1);
    if m.stop == StopReason::TargetCv {
        assert!(m.stats.cv <= p.target_cv.unwrap() + 1e-12);
    }
    assert!(matches!(
        m.stop,
        StopReason::TargetCv | StopReason::TimeBudget | StopReason::MaxReps
    ));
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["reps"], m.reps);
}

#[test]
fn measure_respects_max_reps_and_budget() {
    let stop = AtomicBool::new(false);
    let capped = Policy {
        warmup: Warmup::Reps(1),
        min_reps: 3,
        max_reps: 7,
        time_budget: Duration::from_secs(3600),
        target_cv: None,
        iters: Some(100),
        ..Policy::quick()
    };
    let m = measure(&capped, &stop, kernel).unwrap();
    assert_eq!(
        (m.reps, m.stop, m.iters, m.calibration_calls, m.warmup_calls),
        (7, StopReason::MaxReps, 100, 0, 1)
    );

    let budget0 = Policy {
        time_budget: Duration::ZERO,
        max_reps: 1000,
        ..capped
    };
    let m = measure(&budget0, &stop, kernel).unwrap();
    assert_eq!((m.reps, m.stop), (3, StopReason::TimeBudget));
}

#[test]
fn measure_stops_on_the_flag_between_samples() {
    let stop = AtomicBool::new(false);
    let calls = AtomicUsize::new(0);
    let p = Policy {
        warmup: Warmup::Reps(2),
        min_reps: 10,
        max_reps: 100,
        target_cv: None,
        iters: Some(10),
        ..Policy::quick()
    };
    let m = measure(&p, &stop, |n| {
        // Calls 1-2 warm up, 3.. are samples; the 5th sets the flag.
        if calls.fetch_add(1, Ordering::SeqCst) + 1 == 5 {
            stop.store(true, Ordering::SeqCst);
        }
        kernel(n)
    })
    .unwrap();
    assert_eq!((m.reps, m.stop), (3, StopReason::Interrupted));

    let stop = AtomicBool::new(true);
    let e = measure(&p, &stop, kernel).unwrap_err();
    assert!(e.downcast_ref::<Interrupted>().is_some(), "{e}");
}

#[test]
fn measure_team_records_team_and_thread_times() {
    let u = current_affinity().unwrap().to_vec();
    let cpus = if u.len() >= 2 {
        vec![u[0], u[1]]
    } else {
        vec![u[0], u[0]]
    };
    let mut team = Team::new(&cpus).unwrap();
    let stop = AtomicBool::new(false);
    let p = Policy {
        warmup: Warmup::Reps(1),
        min_reps: 4,
        max_reps: 4,
        target_cv: None,
        iters: Some(1000),
        ..Policy::quick()
    };
    let m = measure_team(&mut team, &p, &stop, |ctx, iters| {
        kernel(iters + ctx.index as u64)
    })
    .unwrap();
    assert_eq!(m.reps, 4);
    assert_eq!(m.cpus, cpus);
    assert_eq!(m.samples.len(), 4);
    assert_eq!(m.thread_samples.len(), 2);
    assert!(m.thread_samples.iter().all(|s| s.len() == 4));
    assert_eq!(m.thread_stats.len(), 2);
    assert_eq!(m.max_start_skew_ns.len(), 4);
    assert_eq!(m.last_results, vec![kernel(1000), kernel(1001)]);
    assert!(m.samples.iter().all(|x| x.is_finite()));

    // Calibrated team measurement also works, and the team is reusable.
    let m = measure_team(&mut team, &Policy::quick(), &stop, |_, iters| kernel(iters)).unwrap();
    assert!(m.iters >= 1 && m.reps >= 3);
}

#[test]
fn bracketed_samples_each_have_a_reference_before_and_after() {
    let stop = AtomicBool::new(false);
    let p = Policy::quick();
    let ref_calls = AtomicUsize::new(0);
    let b = measure_bracketed(
        &p,
        &stop,
        Duration::from_micros(200),
        |it| {
            ref_calls.fetch_add(1, Ordering::Relaxed);
            kernel(it)
        },
        kernel,
    )
    .unwrap();
    let n = b.subject.reps;
    assert!(n >= p.min_reps);
    assert_eq!(b.ref_before.len(), n);
    assert_eq!(b.ref_after.len(), n);
    assert!(b.ref_iters >= 1);
    assert!(
        b.ref_before
            .iter()
            .chain(&b.ref_after)
            .all(|x| x.is_finite() && *x > 0.0),
        "reference samples {:?} / {:?} ({} iterations each)",
        b.ref_before,
        b.ref_after,
        b.ref_iters
    );
    // Calibration calls plus exactly two per sample: none during the
    // subject's calibration or warm-up.
    let calls = ref_calls.load(Ordering::Relaxed);
    assert!(calls > 2 * n, "{calls} reference calls for {n} samples");
    assert!(
        calls <= 2 * n + 64,
        "{calls} reference calls for {n} samples"
    );
}

#[test]
fn bracketed_stops_on_the_flag_before_sampling() {
    let stop = AtomicBool::new(true);
    let e = measure_bracketed(
        &Policy::quick(),
        &stop,
        Duration::from_micros(100),
        kernel,
        kernel,
    )
    .unwrap_err();
    assert!(e.downcast_ref::<Interrupted>().is_some());
}

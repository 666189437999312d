//! Unit tests of `measure` (beside it, to keep the module readable).

use super::*;
use std::sync::atomic::AtomicUsize;

/// Two CPUs this process may use (the same one twice on a 1-CPU machine).
fn two_cpus() -> Vec<usize> {
    let u = crate::placement::pin::current_affinity().unwrap().to_vec();
    vec![u[0], *u.get(1).unwrap_or(&u[0])]
}

/// A few microseconds of work per iteration that the compiler keeps.
fn spin(iters: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..iters * 2000 {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

#[test]
fn inline_passes_run_in_one_round_with_every_sample_accounted() {
    let cpus = two_cpus();
    let mut team = Team::new(&cpus).unwrap();
    let stop = AtomicBool::new(false);
    let calls = AtomicUsize::new(0);
    let p = Policy {
        warmup: Warmup::Reps(2),
        min_reps: 5,
        max_reps: 5,
        target_cv: None,
        iters: Some(3),
        ..Policy::quick()
    };
    let m = measure_team_inline(&mut team, &p, &stop, |ctx, iters| {
        calls.fetch_add(1, Ordering::Relaxed);
        spin(iters) + ctx.index as u64
    })
    .unwrap();
    // 2 warm-up passes + 5 samples, on each of the 2 threads.
    assert_eq!(calls.load(Ordering::Relaxed), 2 * 7);
    assert_eq!((m.reps, m.warmup_calls, m.calibration_calls), (5, 2, 0));
    assert_eq!((m.iters, m.stop), (3, StopReason::MaxReps));
    assert_eq!(m.cpus, cpus);
    assert_eq!(m.thread_samples.len(), 2);
    assert!(m.thread_samples.iter().all(|s| s.len() == 5));
    assert_eq!(m.max_start_skew_ns.len(), 5);
    assert_eq!(m.last_results, vec![spin(3), spin(3) + 1]);
    // The team time covers every thread's own time.
    for r in 0..5 {
        for t in 0..2 {
            assert!(m.samples[r] >= m.thread_samples[t][r] * 0.999);
        }
    }
    assert!(m.preempted.is_some_and(|p| p <= 5));
    // The team is usable again afterwards.
    assert_eq!(team.run_round(|c| c.index).unwrap().results, vec![0, 1]);
}

#[test]
fn inline_passes_calibrate_iters_before_warming_up() {
    let mut team = Team::new(&two_cpus()).unwrap();
    let stop = AtomicBool::new(false);
    let p = Policy {
        warmup: Warmup::Reps(1),
        min_reps: 3,
        max_reps: 3,
        target_cv: None,
        min_sample: Duration::from_millis(2),
        iters: None,
        ..Policy::quick()
    };
    let m = measure_team_inline(&mut team, &p, &stop, |_, iters| spin(iters)).unwrap();
    assert!(m.calibration_calls >= 1, "{}", m.calibration_calls);
    assert!(m.iters > 1);
    assert_eq!((m.warmup_calls, m.reps), (1, 3));
    // Every sample at the calibrated count lasts about min_sample or more
    // (a generous floor: the CPUs may be shared).
    assert!(m.samples.iter().all(|ns| ns * m.iters as f64 > 0.5e6));
}

#[test]
fn inline_passes_stop_on_the_flag_between_passes() {
    let mut team = Team::new(&two_cpus()).unwrap();
    let p = Policy {
        warmup: Warmup::Reps(0),
        min_reps: 50,
        max_reps: 50,
        target_cv: None,
        iters: Some(1),
        ..Policy::quick()
    };
    // Set before the first pass: no sample, the Interrupted error.
    let stop = AtomicBool::new(true);
    let e = measure_team_inline(&mut team, &p, &stop, |_, it| spin(it)).unwrap_err();
    assert!(e.downcast_ref::<Interrupted>().is_some(), "{e}");
    // Set during the 4th pass: that pass is kept, no further one runs.
    let stop = AtomicBool::new(false);
    let passes = AtomicUsize::new(0);
    let m = measure_team_inline(&mut team, &p, &stop, |ctx, it| {
        if ctx.index == 0 && passes.fetch_add(1, Ordering::Relaxed) == 3 {
            stop.store(true, Ordering::Relaxed);
        }
        spin(it)
    })
    .unwrap();
    assert_eq!((m.reps, m.stop), (4, StopReason::Interrupted));
    assert_eq!(passes.load(Ordering::Relaxed), 4);
}

#[test]
fn inline_worker_panic_is_an_error_and_the_team_survives() {
    let mut team = Team::new(&two_cpus()).unwrap();
    let stop = AtomicBool::new(false);
    let p = Policy {
        iters: Some(1),
        ..Policy::quick()
    };
    let e = measure_team_inline(&mut team, &p, &stop, |ctx, it| {
        if ctx.index == 1 {
            panic!("pass failed");
        }
        spin(it)
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("pass failed"), "{e}");
    let m = measure_team_inline(&mut team, &p, &stop, |_, it| spin(it)).unwrap();
    assert!(m.reps >= 3);
}

#[test]
fn welford_matches_stats() {
    let xs = [3.0, 1.0, 2.0, 4.0];
    let mut r = Running::default();
    for x in xs {
        r.push(x);
    }
    let s = Stats::from_samples(&xs).unwrap();
    assert!((r.cv() - s.cv).abs() < 1e-12);
}

#[test]
fn bad_policies_are_refused() {
    let stop = AtomicBool::new(false);
    for p in [
        Policy {
            min_reps: 0,
            ..Policy::quick()
        },
        Policy {
            max_reps: 1,
            min_reps: 2,
            ..Policy::quick()
        },
        Policy {
            iters: Some(0),
            ..Policy::quick()
        },
        Policy {
            target_cv: Some(f64::NAN),
            ..Policy::quick()
        },
    ] {
        let e = measure(&p, &stop, |n| n).unwrap_err().to_string();
        assert!(e.starts_with("bad repetition policy"), "{e}");
    }
}

#[test]
fn stop_flag_before_start_is_interrupted() {
    let stop = AtomicBool::new(true);
    let e = measure(&Policy::quick(), &stop, |n| n).unwrap_err();
    assert!(e.downcast_ref::<Interrupted>().is_some());
}

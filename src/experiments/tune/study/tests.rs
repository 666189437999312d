//! Unit tests of `study` (beside it, to keep the module readable).

use super::*;

#[test]
fn numbers() {
    assert_eq!(parse_number("14,460.5"), Some(14460.5));
    assert_eq!(parse_number(" 1_000 "), Some(1000.0));
    assert_eq!(parse_number("abc"), None);
    assert_eq!(first_number("took 1.5e3 ms"), Some(1500.0));
    assert_eq!(first_number("none"), None);
    assert_eq!(fmt_ratio(0.97312), "0.973");
    assert_eq!(fmt_ratio(12.345), "12.3");
    assert_eq!(fmt_ratio(f64::INFINITY), "inf");
}

fn params(budget_s: f64, run_timeout: Option<f64>) -> Params {
    Params {
        command: vec!["true".into()],
        plan: TunePlan {
            k: 1,
            candidates: Vec::new(),
            not_applicable: Vec::new(),
            notes: Vec::new(),
            threads: None,
        },
        score: Score::wall_time(),
        warmup: 1,
        min_runs: 3,
        max_runs: 5,
        budget: Duration::from_secs_f64(budget_s),
        seed: 1,
        resolution: 0.02,
        counters: false,
        numa_maps: false,
        show_output: false,
        run_timeout: run_timeout.map(Duration::from_secs_f64),
    }
}

fn finished(runs: &[&[f64]]) -> Vec<State> {
    runs.iter()
        .map(|r| State {
            finished: r.to_vec(),
            ..State::default()
        })
        .collect()
}

#[test]
fn each_run_is_bounded_and_says_by_what() {
    let p = params(300.0, None);
    // Nothing finished: the time left of the budget; none left: not run.
    let st = finished(&[&[], &[]]);
    let b = run_bound(&p, &st, 0, 300.0, false).unwrap();
    assert_eq!((b.kind, b.secs), (BoundKind::Budget, 300.0));
    assert!(b.why.contains("no run has finished yet"), "{}", b.why);
    assert!(run_bound(&p, &st, 1, 0.0, false).is_none());
    // Its own runs: 10 × their median, at least 10 s.
    let st = finished(&[&[2.0, 3.0, 4.0], &[0.1]]);
    let b = run_bound(&p, &st, 0, 5.0, false).unwrap();
    assert_eq!((b.kind, b.secs), (BoundKind::Median, 30.0));
    let b = run_bound(&p, &st, 1, 5.0, false).unwrap();
    assert_eq!((b.kind, b.secs), (BoundKind::Median, BOUND_FLOOR_S));
    // ... and the budget's end first in a gated round; spent: not run.
    let b = run_bound(&p, &st, 0, 5.0, true).unwrap();
    assert_eq!((b.kind, b.secs), (BoundKind::Budget, 5.0));
    assert!(b.why.contains("before 10 × its median"), "{}", b.why);
    assert!(run_bound(&p, &st, 0, -1.0, true).is_none());
    // A first run: the budget's end, or 10 × the slowest finished run
    // when later (a thread count may be far slower than the others).
    let st = finished(&[&[2.0, 3.0], &[]]);
    let b = run_bound(&p, &st, 1, 200.0, true).unwrap();
    assert_eq!((b.kind, b.secs), (BoundKind::Budget, 200.0));
    let b = run_bound(&p, &st, 1, 0.0, true).unwrap();
    assert_eq!((b.kind, b.secs), (BoundKind::Slowest, 30.0));
    // --run-timeout replaces all of it.
    let p = params(300.0, Some(7.0));
    let b = run_bound(&p, &st, 1, 0.0, true).unwrap();
    assert_eq!((b.kind, b.secs), (BoundKind::RunTimeout, 7.0));
    assert!(p.bound_rule().contains("--run-timeout 7.0 s"));
}

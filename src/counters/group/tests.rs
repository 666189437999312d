//! Unit tests of `group` (beside it, to keep the module readable).

use super::*;

fn ev(n: &str) -> Event {
    Event::named(n)
}

fn count(v: u64, e: u64, r: u64) -> Sample {
    Sample::Count(RawCount {
        value: v,
        enabled: e,
        running: r,
    })
}

#[test]
fn parses_group_buffer() {
    // nr=2, enabled=1000, running=500, (123,id 7), (456,id 9)
    let buf = [2u64, 1000, 500, 123, 7, 456, 9];
    let g = parse_group_read(&buf).unwrap();
    assert_eq!((g.enabled, g.running), (1000, 500));
    assert_eq!(g.value_of(9), Some(456));
    assert_eq!(g.value_of(8), None);
    assert!(parse_group_read(&buf[..5])
        .unwrap_err()
        .contains("truncated"));
    assert!(parse_group_read(&[1, 2]).is_err());
    assert!(parse_group_read(&[u64::MAX, 0, 0]).is_err());
}

#[test]
fn multiplex_scaling_like_perf() {
    let evs = vec![ev("cycles"), ev("instructions")];
    let samples = vec![vec![
        count(1_000, 3_000_000, 1_000_000),
        count(2_000, 3_000_000, 1_000_000),
    ]];
    let r = aggregate(&evs, &[0, 0], &[None, None], &samples, &PerfEnv::default());
    assert_eq!(r[0].state, EventState::Counted);
    assert_eq!(r[0].value, Some(3_000.0));
    assert_eq!(r[0].raw, Some(1_000));
    let pct = r[0].running_pct.unwrap();
    assert!((pct - 33.333).abs() < 0.01, "{pct}");
    assert_eq!(r[1].value, Some(6_000.0));
}

#[test]
fn sums_over_targets_then_scales() {
    let evs = vec![ev("cycles")];
    let samples = vec![
        vec![count(100, 1_000_000, 1_000_000)],
        vec![count(50, 1_000_000, 500_000)],
    ];
    let r = aggregate(&evs, &[0], &[None], &samples, &PerfEnv::default());
    // (100+50) * 2e6 / 1.5e6 = 200
    assert!((r[0].value.unwrap() - 200.0).abs() < 1e-9);
    assert_eq!(r[0].time_enabled_ns, Some(2_000_000));
}

#[test]
fn not_counted_and_not_supported() {
    let evs = vec![ev("cycles"), ev("instructions"), ev("task-clock")];
    let fail = Reason::new("no-pmu", "ENOENT: no hardware PMU");
    let samples = vec![vec![count(0, 5_000, 0), Sample::Unopened, count(0, 0, 0)]];
    let r = aggregate(
        &evs,
        &[0, 0, 1],
        &[None, Some((libc::ENOENT, fail)), None],
        &samples,
        &PerfEnv::default(),
    );
    assert_eq!(r[0].state, EventState::NotCounted);
    assert_eq!(r[0].reason_code.as_deref(), Some("not-scheduled"));
    assert_eq!(r[0].value, None);
    assert_eq!(r[1].state, EventState::NotSupported);
    assert_eq!(r[1].errno, Some(libc::ENOENT));
    assert_eq!(r[1].errno_name.as_deref(), Some("ENOENT"));
    assert_eq!(r[1].reason_code.as_deref(), Some("no-pmu"));
    assert_eq!(r[2].state, EventState::NotCounted);
    assert_eq!(r[2].reason_code.as_deref(), Some("not-enabled"));
    let rd = Readings {
        events: r,
        ..Default::default()
    };
    assert!(rd
        .value("instructions")
        .unwrap_err()
        .contains("no hardware PMU"));
    assert!(rd.value("branches").unwrap_err().contains("not measured"));
}

#[test]
fn zero_pmu_detected() {
    let evs = vec![ev("cycles"), ev("instructions"), ev("task-clock")];
    let samples = vec![vec![
        count(0, 2_000_000, 2_000_000),
        count(0, 2_000_000, 2_000_000),
        count(2_000_000, 2_000_000, 2_000_000),
    ]];
    let r = aggregate(
        &evs,
        &[0, 0, 1],
        &[None, None, None],
        &samples,
        &PerfEnv::default(),
    );
    assert_eq!(r[0].state, EventState::NotSupported);
    assert_eq!(r[0].reason_code.as_deref(), Some("returns-zeros"));
    assert_eq!(r[1].value, None);
    assert_eq!(r[2].state, EventState::Counted, "software stays counted");
    // Too short to judge: stays counted (a 0 is then a real 0).
    let samples = vec![vec![
        count(0, 1_000, 1_000),
        count(0, 1_000, 1_000),
        count(1_000, 1_000, 1_000),
    ]];
    let r = aggregate(
        &evs,
        &[0, 0, 1],
        &[None, None, None],
        &samples,
        &PerfEnv::default(),
    );
    assert_eq!(r[0].state, EventState::Counted);
    // A working PMU with one zero event is not flagged.
    let samples = vec![vec![
        count(0, 2_000_000, 2_000_000),
        count(5, 2_000_000, 2_000_000),
        count(1, 1, 1),
    ]];
    let r = aggregate(
        &evs,
        &[0, 0, 1],
        &[None, None, None],
        &samples,
        &PerfEnv::default(),
    );
    assert_eq!(r[0].state, EventState::Counted);
    assert_eq!(r[0].value, Some(0.0));
}

#[test]
fn snapshot_delta() {
    let a = Snapshot {
        samples: vec![vec![count(100, 1000, 500), Sample::Unopened]],
        wall_ns: Some(10),
    };
    let b = Snapshot {
        samples: vec![vec![count(250, 3000, 1500), Sample::Unopened]],
        wall_ns: Some(30),
    };
    let d = b.delta(&a);
    assert_eq!(d.samples[0][0], count(150, 2000, 1000));
    assert_eq!(d.samples[0][1], Sample::Unopened);
    assert_eq!(d.wall_ns, Some(20));
}

#[test]
fn sysfs_scale_applies() {
    let mut e = ev("cycles");
    e.scale = 2.0;
    let r = aggregate(
        &[e],
        &[0],
        &[None],
        &[vec![count(10, 5, 5)]],
        &PerfEnv::default(),
    );
    assert_eq!(r[0].value, Some(20.0));
}

//! Unit tests of `rate` (beside it, to keep the module readable).

use super::*;

#[test]
fn workload_names() {
    assert_eq!(
        parse_workload("bc-pow").unwrap(),
        RateWorkload::BcPow(99_999)
    );
    assert_eq!(
        parse_workload("bc-pow:999999").unwrap(),
        RateWorkload::BcPow(999_999)
    );
    assert_eq!(
        parse_workload("bc-pi:5000").unwrap(),
        RateWorkload::BcPi(5000)
    );
    assert_eq!(
        parse_workload("chacha").unwrap(),
        RateWorkload::Chacha(Variant::Scalar)
    );
    assert_eq!(parse_workload("nop").unwrap(), RateWorkload::Nop);
    for bad in ["", "bc-pow:0", "bc-pow:x", "chacha:mmx", "spec", "nop:3"] {
        assert!(parse_workload(bad).is_err(), "{bad}");
    }
    assert!(parse_workload("chacha:mmx")
        .unwrap_err()
        .to_string()
        .contains("unknown variant"));
}

#[test]
fn efficiency_from_runs() {
    let one = RateRun {
        copies: 1,
        cpus: CpuSet::from_ids([0]),
        makespan_s: vec![1.0],
        copy_s: vec![vec![1.0]],
        mem: None,
        pages: None,
    };
    let four = RateRun {
        copies: 4,
        cpus: CpuSet::from_ids([0, 1, 2, 3]),
        makespan_s: vec![2.0],
        copy_s: vec![vec![2.0; 4]],
        mem: None,
        pages: None,
    };
    let recs = rate_records(
        &RateWorkload::Nop,
        &[("1".into(), one), ("4".into(), four)],
        Some(10),
    );
    let jph: Vec<f64> = recs
        .iter()
        .filter(|r| r.is(JOBS_PER_HOUR))
        .filter_map(|r| r.value)
        .collect();
    assert_eq!(jph, [3600.0, 7200.0]);
    let eff = recs.iter().find(|r| r.is(EFFICIENCY)).unwrap();
    assert_eq!(eff.value, Some(50.0));
}

#[test]
fn too_many_copies_is_an_error() {
    let stop = AtomicBool::new(false);
    let e = measure_rate(
        &RateWorkload::Nop,
        &[0],
        2,
        1,
        10,
        Duration::from_secs(1),
        &stop,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("2 copies need 2 usable CPUs"), "{e}");
    let e = measure_rate(
        &RateWorkload::Nop,
        &[0],
        0,
        1,
        10,
        Duration::from_secs(1),
        &stop,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("at least 1"), "{e}");
}

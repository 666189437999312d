//! simd's unit tests.

use super::*;

#[test]
fn a_cycle_counter_at_exactly_one_gigahertz_is_labelled() {
    // What the ARM lab's TCG guests count (QEMU's PMU ticks in ns).
    let tcg = [Ok(0.9996), Ok(1.0021), Ok(0.9984)];
    assert!(fixed_gigahertz_note(&tcg).unwrap().contains("emulated PMU"));
    // A real clock, or one window off exact: no label.
    assert!(fixed_gigahertz_note(&[Ok(2.6), Ok(2.61)]).is_none());
    assert!(fixed_gigahertz_note(&[Ok(1.0), Ok(1.08)]).is_none());
    assert!(fixed_gigahertz_note(&[Ok(1.0)]).is_none());
    assert!(fixed_gigahertz_note(&[Err("no PMU".into()), Ok(1.0)]).is_none());
}

#[test]
fn yield_formula() {
    // Seed 000: "Intel's HT is worth half a core".
    let y = smt_yield(100.0, 150.0, 8, 16).unwrap();
    assert!((y - 0.5).abs() < 1e-12);
    assert!(smt_yield(100.0, 150.0, 8, 8).is_none());
    assert!(smt_advice("avx512", 0.05).contains("one thread per physical core"));
    assert!(smt_advice("scalar", 0.5).contains("all logical CPUs"));
}

#[test]
fn points_without_topology() {
    let m = MachineInfo::default();
    let (pts, why) = thread_points(&m, &CpuSet::from_ids([0, 1]), Profile::Quick);
    let labels: Vec<&str> = pts.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["1", "per_core"]);
    assert!(why.unwrap().contains("no SMT"));
}

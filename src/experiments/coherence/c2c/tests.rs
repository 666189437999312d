//! Unit tests of `c2c` (beside it, to keep the module readable).

use super::*;
use crate::harness::pairs::{merge_passes, pair_stats};

#[test]
fn circle_rounds_are_perfect_matchings() {
    for n in [2usize, 3, 4, 7, 8, 16] {
        let mut rounds: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for i in 0..n {
            for j in i + 1..n {
                rounds
                    .entry(circle_round(i, j, n))
                    .or_default()
                    .push((i, j));
            }
        }
        let m = if n.is_multiple_of(2) { n } else { n + 1 };
        assert_eq!(rounds.len(), m - 1, "n={n}");
        for ps in rounds.values() {
            let mut seen = std::collections::BTreeSet::new();
            for &(i, j) in ps {
                assert!(
                    seen.insert(i) && seen.insert(j),
                    "n={n}: CPU twice in a round"
                );
            }
        }
    }
}

#[test]
fn preempted_samples_stay_out_of_the_clean_median() {
    let mut v = vec![70.0; 90];
    v.extend(vec![5000.0; 10]);
    let mut flags = vec![false; 90];
    flags.extend(vec![true; 10]);
    let mut p = pair_stats_marked(0, 1, v.clone(), flags, true).unwrap();
    assert_eq!(p.clean_median(), Some(70.0));
    p.preempted_samples = Some(10);
    p.responder_switches = Some(0);
    assert!(p.is_preempted(), "10 of 100 samples");
    p.preempted_samples = Some(1);
    assert!(!p.is_preempted(), "1 of 100 samples is a stray tick");
    // Unknown flags: every sample is clean.
    let q = pair_stats(0, 1, v, false).unwrap();
    assert_eq!(q.clean_median(), Some(q.stats.median));
    // Pooled over passes, flags stay with their samples.
    let a = pair_stats_marked(0, 1, vec![70.0, 900.0], vec![false, true], true).unwrap();
    let b = pair_stats_marked(0, 1, vec![72.0, 71.0], vec![false, false], true).unwrap();
    let run = |p: PairStats| MatrixRun {
        method: Method::Cas,
        cpus: vec![0, 1],
        pairs: vec![p],
        rounds_done: 1,
        rounds_planned: 1,
        elapsed_s: 0.0,
        stopped: None,
        adapted: Vec::new(),
        steal: None,
    };
    let m = merge_passes(vec![run(a), run(b)], true).unwrap();
    assert_eq!(m.pairs[0].clean_median_ns, Some(71.0));
    assert_eq!(m.pairs[0].clean_pass_medians, vec![70.0, 71.5]);
}

#[test]
fn steal_time_between_two_readings() {
    use crate::machine::devices::CpuSteal;
    let r = |cpu, steal, total| CpuSteal { cpu, steal, total };
    let before = [r(0, 10, 1000), r(1, 5, 1000), r(2, 0, 1000)];
    let after = [r(0, 16, 1100), r(1, 9, 1100), r(2, 50, 1100)];
    let s = StealTime::between(&before, &after, &[0, 1], 100.0, 1.0);
    assert_eq!((s.ticks, s.total_ticks, s.cpus), (10, 200, 2));
    assert!((s.share - 0.05).abs() < 1e-12 && (s.seconds - 0.1).abs() < 1e-12);
    assert!(s.is_material());
    let quiet = StealTime::between(&before, &before, &[0, 1], 100.0, 1.0);
    assert!(!quiet.is_material());
    assert!(StealTime::between(&before, &after, &[7], 100.0, 1.0)
        .unavailable
        .is_some());
}

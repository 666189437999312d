//! `cpuscope tune`: the plan on recorded topologies (seed 000's Kunpeng 920
//! sets), the interleaving order, the statistics on synthetic samples,
//! score extraction, failure handling, storage, Ctrl-C and bad input.
//! No timing is asserted: the commands run are trivial (`true`, `sh -c`).
#![allow(clippy::needless_update)]

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/seed_trees.rs"]
mod seed_trees;
#[path = "common/skip.rs"]
mod skip;

#[path = "common/emulator.rs"]
mod emulator;
use cpuscope::base::mann_whitney::ratio_estimate;
use cpuscope::base::pattern::Pattern;
use cpuscope::base::CpuSet;
use cpuscope::base::Sysroot;
use cpuscope::experiments::compute::placement_plan::{memory_for_set, sized_sets};
use cpuscope::experiments::tune::study::{
    analyse, extract, plan_candidates, Score, ScoreSource, ThreadKnob, VerdictKind,
};
use cpuscope::harness::child::{round_order, ChildRun, SplitMix64};
use cpuscope::machine::numa::NumaNode;
use cpuscope::machine::topology::Core;
use cpuscope::machine::{discover, MachineInfo};
use cpuscope::placement::MemPolicy;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn set(s: &str) -> CpuSet {
    CpuSet::parse(s).expect("valid list")
}

fn run(args: &[&str]) -> Output {
    bin::command()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn cpuscope")
}

use cli::one_line_error;

fn tree(name: &str) -> Option<MachineInfo> {
    let root = seed_trees::tree(name)?;
    Some(discover(&Sysroot::new(&root).expect("sysroot")).expect("discover"))
}

fn usable(m: &MachineInfo) -> CpuSet {
    if m.cpus.usable.is_empty() {
        m.cpus.online.clone()
    } else {
        m.cpus.usable.clone()
    }
}

fn cpus_of(
    p: &cpuscope::experiments::compute::placement_plan::SizedPlan,
    name: &str,
) -> Option<CpuSet> {
    p.set(name).and_then(|s| s.cpus.clone())
}

// ------------------------------------------------------------------ plan

#[test]
fn kunpeng_920_gives_the_seeds_five_sets() {
    let Some(m) = tree("kunpeng-920-4826") else {
        return;
    };
    let all = usable(&m);
    assert_eq!(all.len(), 96);
    let p = sized_sets(&m, &all, 4);
    assert_eq!(p.k, 4);
    // Seed 000's tpmC table: 72-75 (one node), 48,49,72,73 (two nodes of
    // one socket), 24,25,72,73 and 0,1,72,73 (two nodes on two sockets),
    // 0,24,48,72 (four nodes); the planner takes the lowest ids that ask
    // the same questions, and the nearest and farthest socket pairs.
    assert_eq!(cpus_of(&p, "one_node"), Some(set("0-3")));
    assert_eq!(cpus_of(&p, "two_nodes_same_socket"), Some(set("0,1,24,25")));
    assert_eq!(
        cpus_of(&p, "two_nodes_cross_socket"),
        Some(set("0,1,48,49"))
    );
    assert_eq!(
        cpus_of(&p, "two_nodes_cross_socket_far"),
        Some(set("24,25,72,73")),
        "nodes 1 and 3 are the farthest pair on two sockets (24)"
    );
    assert_eq!(cpus_of(&p, "all_nodes"), Some(set("0,24,48,72")));
    let measured: Vec<&str> = p
        .sets
        .iter()
        .filter(|s| s.cpus.is_some())
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(measured.len(), 5, "{measured:?}");
    assert!(p
        .set("smt_packed")
        .and_then(|s| s.not_applicable.as_deref())
        .unwrap()
        .contains("no SMT"));

    // The candidates: the baseline, the five sets with local memory, and
    // the one-node set's preferred, interleaved and remote memory.
    let c = plan_candidates(&m, &all, 4, None);
    let labels: Vec<String> = c.candidates.iter().map(|c| c.label()).collect();
    assert_eq!(
        labels,
        [
            "none",
            "one_node/local",
            "one_node/preferred",
            "one_node/interleave",
            "one_node/remote",
            "two_nodes_same_socket/local",
            "two_nodes_cross_socket/local",
            "two_nodes_cross_socket_far/local",
            "all_nodes/local",
        ]
    );
    let policy = |l: &str| {
        c.candidates
            .iter()
            .find(|c| c.label() == l)
            .and_then(|c| c.policy.clone())
    };
    assert_eq!(policy("one_node/local"), Some(MemPolicy::Bind(set("0"))));
    assert_eq!(policy("one_node/preferred"), Some(MemPolicy::Preferred(0)));
    assert_eq!(
        policy("one_node/interleave"),
        Some(MemPolicy::Interleave(set("0-3")))
    );
    // Nearest other node to node 0: node 1 (distance 12).
    assert_eq!(policy("one_node/remote"), Some(MemPolicy::Bind(set("1"))));
    assert_eq!(
        policy("two_nodes_cross_socket_far/local"),
        Some(MemPolicy::Bind(set("1,3")))
    );
    assert_eq!(policy("all_nodes/local"), Some(MemPolicy::Bind(set("0-3"))));
    assert!(c.candidates[0].baseline && c.candidates[0].cpus.is_none());
}

#[test]
fn kunpeng_dry_run_prints_the_numactl_lines() {
    let Some(root) = seed_trees::tree_arg("kunpeng-920-4826") else {
        return;
    };
    let out = run(&[
        "--sysroot",
        &root,
        "tune",
        "--dry-run",
        "--cpus-needed",
        "4",
        "--json",
        "--",
        "sh",
        "-c",
        "echo tpmC: 1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let lines: Vec<&str> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command_line"].as_str().unwrap())
        .collect();
    assert!(lines.contains(&"sh -c 'echo tpmC: 1'"), "{lines:?}");
    assert!(
        lines.contains(&"numactl --physcpubind=24-25,72-73 --membind=1,3 -- sh -c 'echo tpmC: 1'"),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"numactl --physcpubind=0-3 --interleave=0-3 -- sh -c 'echo tpmC: 1'"),
        "{lines:?}"
    );
    // And as text.
    let out = run(&[
        "--sysroot",
        &root,
        "tune",
        "--dry-run",
        "--cpus-needed",
        "4",
        "--",
        "true",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("all_nodes/local"), "{text}");
    assert!(
        text.contains("numactl --physcpubind=0,24,48,72 --membind=0-3 -- true"),
        "{text}"
    );
    assert!(text.contains("smt_packed: no SMT"), "{text}");
}

#[test]
fn kunpeng_restricted_to_node_3_has_one_node_and_its_memory() {
    let Some(m) = tree("kunpeng-920-4826") else {
        return;
    };
    let mems = memory_for_set(&m, &usable(&m), &set("72-75"));
    let pol = |n: &str| {
        mems.iter()
            .find(|x| x.name == n)
            .and_then(|x| x.policy.clone())
    };
    assert_eq!(pol("local"), Some(MemPolicy::Bind(set("3"))));
    assert_eq!(pol("preferred"), Some(MemPolicy::Preferred(3)));
    // Node 3's nearest other node is node 2 (distance 12).
    assert_eq!(pol("remote"), Some(MemPolicy::Bind(set("2"))));
    let c = plan_candidates(&m, &set("72-95"), 4, None);
    assert!(c
        .not_applicable
        .iter()
        .any(|(n, r)| n == "all_nodes" && r.contains("one NUMA node")));
    assert_eq!(c.candidates[1].cpus, Some(set("72-75")));
}

#[test]
fn smt_machine_plans_with_and_without_siblings() {
    let Some(m) = tree("hygon-c86-5280") else {
        return;
    };
    let all = usable(&m);
    let c = plan_candidates(&m, &all, 4, None);
    let get = |l: &str| c.candidates.iter().find(|c| c.label() == l).cloned();
    let packed = get("smt_packed/local").expect("SMT packed candidate");
    let cores = get("one_node/local").expect("one node candidate");
    assert_eq!(packed.cpus.as_ref().map(|s| s.len()), Some(4));
    assert_eq!(cores.cpus.as_ref().map(|s| s.len()), Some(4));
    // Packed: two cores' siblings; one node: four cores.
    let core_count = |s: &CpuSet| {
        m.cores
            .iter()
            .filter(|c| !c.cpus.intersection(s).is_empty())
            .count()
    };
    assert_eq!(core_count(packed.cpus.as_ref().unwrap()), 2);
    assert_eq!(core_count(cores.cpus.as_ref().unwrap()), 4);
}

/// A one-node machine of `n` CPUs without SMT (like the build machine).
fn one_node(n: usize) -> MachineInfo {
    let all: CpuSet = (0..n).collect();
    MachineInfo {
        cores: (0..n)
            .map(|c| Core {
                core_id: c,
                cpus: CpuSet::from_ids([c]),
                ..Default::default()
            })
            .collect(),
        numa_nodes: vec![NumaNode {
            id: 0,
            cpus: all.clone(),
            distances: vec![10],
            usable: true,
            memory_bytes: Some(8 << 30),
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn one_node_machine_has_only_the_baseline_and_one_set() {
    let m = one_node(2);
    let c = plan_candidates(&m, &set("0-1"), 2, None);
    let labels: Vec<String> = c.candidates.iter().map(|c| c.label()).collect();
    assert_eq!(labels, ["none", "one_node/local"]);
    for (name, why) in [
        ("one_node/remote", "no remote memory"),
        ("one_node/interleave", "nothing to interleave"),
        ("smt_packed", "no SMT"),
        ("all_nodes", "one NUMA node"),
    ] {
        assert!(
            c.not_applicable
                .iter()
                .any(|(n, r)| n == name && r.contains(why)),
            "{name}: {:?}",
            c.not_applicable
        );
    }
    // With a thread knob: the baseline and the set run k threads, the
    // curve the other counts without binding.
    let knob = ThreadKnob {
        counts: vec![1, 2, 4, 8],
        env: None,
        placeholder: true,
    };
    let c = plan_candidates(&m, &set("0-1"), 2, Some(knob));
    let labels: Vec<String> = c.candidates.iter().map(|c| c.label()).collect();
    assert_eq!(
        labels,
        [
            "none t=2",
            "one_node/local t=2",
            "none t=1",
            "none t=4",
            "none t=8"
        ]
    );
    assert!(c.candidates[0].baseline);
}

// ------------------------------------------------------------ interleaving

#[test]
fn every_round_runs_each_candidate_once_in_a_shuffled_order() {
    let live = [0, 1, 2, 3, 4];
    let mut first = [0usize; 5];
    let mut orders = std::collections::BTreeSet::new();
    for r in 0..200 {
        let o = round_order(&live, r, 17);
        let mut sorted = o.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, live, "round {r}: {o:?}");
        first[o[0]] += 1;
        orders.insert(o);
    }
    // Each candidate comes first in about a fifth of the rounds.
    assert!(first.iter().all(|&n| (20..=60).contains(&n)), "{first:?}");
    assert!(orders.len() > 60);
    // Reproducible for a seed, different for another.
    assert_eq!(round_order(&live, 7, 17), round_order(&live, 7, 17));
    assert!((0..10).any(|r| round_order(&live, r, 17) != round_order(&live, r, 18)));
    // A candidate that stopped is left out.
    assert_eq!(round_order(&[0, 2, 4], 3, 17).len(), 3);
}

#[test]
fn the_command_runs_interleaved_round_by_round() {
    if emulator::lacks(
        emulator::Needs::MemPolicy,
        "the_command_runs_interleaved_round_by_round",
    ) {
        return;
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n < 2 {
        skip::skip_or_fail(
            "interleaving end to end needs two CPUs (one_node/local must differ from no binding)",
        );
        if skip::in_ci() {
            unreachable!();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("order.log");
    let script = format!(
        "echo \"$T $(grep Cpus_allowed_list /proc/self/status | tr -d '[:space:]')\" >> {}",
        log.display()
    );
    let out = run(&[
        "tune",
        "--no-store",
        "-q",
        "--cpus",
        "0-1",
        "--cpus-needed",
        "1",
        "--threads",
        "1,2,3",
        "--threads-env",
        "T",
        "--warmup",
        "1",
        "--min-runs",
        "3",
        "--max-runs",
        "3",
        "--no-counters",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Candidates: none t=1 (baseline), one_node/local t=1, none t=2, none t=3.
    let k = 4;
    assert_eq!(lines.len(), 4 * k, "{text}");
    let distinct: std::collections::BTreeSet<&str> = lines.iter().copied().collect();
    assert_eq!(distinct.len(), k, "{text}");
    for (i, block) in lines.chunks(k).enumerate() {
        let b: std::collections::BTreeSet<&str> = block.iter().copied().collect();
        assert_eq!(b.len(), k, "round {i} ran a candidate twice: {block:?}");
    }
    // Not the same order every round.
    let rounds: std::collections::BTreeSet<Vec<&str>> =
        lines.chunks(k).map(|b| b.to_vec()).collect();
    assert!(rounds.len() > 1, "{text}");
}

// ------------------------------------------------------------- statistics

/// `n` samples of `mean * (1 + cv * z)`, z standard normal (Box–Muller on
/// SplitMix64): deterministic synthetic timings.
fn normal(g: &mut SplitMix64, n: usize, mean: f64, cv: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let u1 = (g.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let u2 = (g.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let z = (-2.0 * u1.max(1e-300).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            mean * (1.0 + cv * z)
        })
        .collect()
}

#[test]
fn a_real_5_percent_difference_is_found() {
    let mut found = 0;
    for seed in 0..200 {
        let mut g = SplitMix64::new(seed);
        let base = normal(&mut g, 15, 1.0, 0.02);
        let faster = normal(&mut g, 15, 0.95, 0.02);
        let a = analyse(&[base, faster], 0, false, 0.02, 1);
        if a.kind == VerdictKind::Winner && a.order[0] == 1 {
            found += 1;
            let r = a.vs_baseline[1].as_ref().unwrap();
            assert!(r.high < 1.0 && (0.9..1.0).contains(&r.ratio), "{r:?}");
        }
    }
    assert!(found >= 195, "found in {found} of 200");
    // Among three, the 5% faster one wins against the runner-up.
    let mut g = SplitMix64::new(1);
    let s = vec![
        normal(&mut g, 20, 1.0, 0.02),
        normal(&mut g, 20, 1.0, 0.02),
        normal(&mut g, 20, 0.95, 0.02),
    ];
    let a = analyse(&s, 0, false, 0.02, 1);
    assert_eq!(a.kind, VerdictKind::Winner);
    assert_eq!(a.order[0], 2);
    assert!(a.winner_level > 0.95);
    // Higher is better: a 5% higher score wins.
    let mut g = SplitMix64::new(2);
    let s = vec![
        normal(&mut g, 15, 100.0, 0.02),
        normal(&mut g, 15, 105.0, 0.02),
    ];
    let a = analyse(&s, 0, true, 0.02, 1);
    assert_eq!((a.kind, a.order[0]), (VerdictKind::Winner, 1));
}

#[test]
fn a_noise_only_pair_is_not() {
    let mut winners = 0;
    let mut none = 0;
    for seed in 1000..1200 {
        let mut g = SplitMix64::new(seed);
        let base = normal(&mut g, 15, 1.0, 0.03);
        let same = normal(&mut g, 15, 1.0, 0.03);
        let a = analyse(&[base, same], 0, false, 0.02, 1);
        match a.kind {
            VerdictKind::Winner => winners += 1,
            VerdictKind::NoneDistinguishable => none += 1,
            _ => {}
        }
    }
    // A 95% interval: about 5% of noise-only pairs look different.
    assert!(winners <= 16, "{winners} false winners of 200");
    assert!(none >= 184, "{none} of 200 called indistinguishable");
    // The deterministic case the docs quote.
    let mut g = SplitMix64::new(17);
    let s = vec![normal(&mut g, 20, 1.0, 0.03), normal(&mut g, 20, 1.0, 0.03)];
    let a = analyse(&s, 0, false, 0.02, 1);
    assert_eq!(a.kind, VerdictKind::NoneDistinguishable, "{a:?}");
}

#[test]
fn early_looks_are_stricter_and_too_few_runs_say_so() {
    // Five runs each, a clear 3% difference: separated at 95%, but not at
    // the Bonferroni level of 26 looks, so the ranking is not settled yet.
    let mut g = SplitMix64::new(5);
    let s = vec![
        normal(&mut g, 5, 1.0, 0.005),
        normal(&mut g, 5, 1.03, 0.005),
    ];
    let a = analyse(&s, 0, false, 0.001, 26);
    assert_eq!(a.kind, VerdictKind::Winner);
    assert!(!a.settled);
    // Three runs each cannot reach 95%: "not enough", never a winner.
    let s = vec![vec![1.0, 1.01, 1.02], vec![2.0, 2.01, 2.02]];
    let a = analyse(&s, 0, false, 0.02, 1);
    assert_eq!(a.kind, VerdictKind::NotEnough);
}

#[test]
fn the_interval_covers_the_true_ratio() {
    let mut g = SplitMix64::new(99);
    let mut covered = 0;
    for _ in 0..300 {
        let a = normal(&mut g, 12, 1.1, 0.04);
        let b = normal(&mut g, 12, 1.0, 0.04);
        let r = ratio_estimate(&a, &b, 0.95).unwrap();
        if r.low <= 1.1 && 1.1 <= r.high {
            covered += 1;
        }
    }
    assert!(covered >= 276, "covered {covered} of 300");
}

// ------------------------------------------------------- score extraction

fn child(stdout: &str, stderr: &str, wall: f64) -> ChildRun {
    ChildRun {
        wall_s: wall,
        stdout: stdout.into(),
        stderr: stderr.into(),
        ..Default::default()
    }
}

#[test]
fn scores_are_read_from_the_output_and_files() {
    let wall = Score::wall_time();
    assert_eq!(wall.read(&child("", "", 1.25), None), Ok(1.25));
    let p = Pattern::new(r"tpmC: ([0-9.,]+)").unwrap();
    let out = Score {
        source: ScoreSource::Output(p.clone()),
        higher_is_better: true,
        unit: "tpmC".into(),
    };
    let text = "warming up\ntpmC: 9,000\nCurrent tpmC: 14,460.5\n";
    assert_eq!(out.read(&child(text, "", 1.0), None), Ok(14460.5));
    // Not on stdout: stderr.
    assert_eq!(out.read(&child("", "tpmC: 77", 1.0), None), Ok(77.0));
    let e = out.read(&child("nothing here", "", 1.0), None).unwrap_err();
    assert!(e.contains("does not match"), "{e}");
    // No group: the whole match.
    assert_eq!(
        extract(&Pattern::new(r"\d+\.\d+").unwrap(), "x 3.5 y 4.5"),
        Some(4.5)
    );

    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("score.txt");
    let file = Score {
        source: ScoreSource::File {
            path: f.clone(),
            pattern: None,
        },
        higher_is_better: false,
        unit: "ms".into(),
    };
    // Not there before, not written: no score.
    assert_eq!(file.file_stamp(), None);
    let e = file.read(&child("", "", 1.0), None).unwrap_err();
    assert!(e.contains("does not exist"), "{e}");
    std::fs::write(&f, "old 1").unwrap();
    let before = file.file_stamp();
    assert!(before.is_some());
    // The same file after the run: left from before, not this run's.
    let e = file.read(&child("", "", 1.0), before.as_ref()).unwrap_err();
    assert!(e.contains("not written during the run"), "{e}");
    std::fs::write(&f, "latency 12.5 ms, p99 20 ms").unwrap();
    assert_eq!(file.read(&child("", "", 1.0), before.as_ref()), Ok(12.5));
    let with_pattern = Score {
        source: ScoreSource::File {
            path: f.clone(),
            pattern: Some(Pattern::new(r"p99 (\d+)").unwrap()),
        },
        higher_is_better: false,
        unit: "ms".into(),
    };
    assert_eq!(
        with_pattern.read(&child("", "", 1.0), before.as_ref()),
        Ok(20.0)
    );
    std::fs::write(&f, "no figure").unwrap();
    let e = file.read(&child("", "", 1.0), None).unwrap_err();
    assert!(e.contains("holds no number"), "{e}");
}

// -------------------------------------------------- the command end to end

const QUICK: [&str; 8] = [
    "--warmup",
    "0",
    "--min-runs",
    "3",
    "--max-runs",
    "3",
    "--cpus-needed",
    "1",
];

fn tune(store: Option<&str>, extra: &[&str], cmd: &[&str]) -> Output {
    let mut args: Vec<&str> = Vec::new();
    if let Some(s) = store {
        args.extend(["--store", s]);
    }
    args.extend(["tune", "-q"]);
    if store.is_none() {
        args.push("--no-store");
    }
    args.extend(QUICK);
    args.extend(extra);
    args.push("--");
    args.extend(cmd);
    run(&args)
}

#[test]
fn a_failing_candidate_stops_only_itself() {
    if emulator::lacks(
        emulator::Needs::MemPolicy,
        "a_failing_candidate_stops_only_itself",
    ) {
        return;
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n < 2 {
        skip::skip_or_fail("needs two CPUs: the bound candidate must differ from no binding");
        return;
    }
    // Fails when bound to one CPU (no range or list in its allowed CPUs).
    let out = tune(
        None,
        &["--cpus", "0-1"],
        &[
            "sh",
            "-c",
            "grep -q '^Cpus_allowed_list:.*[-,]' /proc/self/status || { echo bound >&2; exit 3; }",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("failed (stopped that candidate only)"),
        "{text}"
    );
    assert!(
        text.contains("one_node/local: failed: run 1: exited with status 3 (stderr: bound)"),
        "{text}"
    );
    assert!(text.contains("none (baseline)"), "{text}");
}

#[test]
fn a_missing_score_fails_every_candidate_and_exits_1() {
    let out = tune(
        None,
        &["--score-regex", r"tpmC: (\d+)"],
        &["echo", "no score here"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("no score: 'tpmC: (\\d+)' does not match"),
        "{text}"
    );
    assert!(text.contains("verdict: not enough"), "{text}");
}

#[test]
fn a_score_regex_ranks_by_the_figure() {
    let out = tune(
        None,
        &[
            "--score-regex",
            r"tpmC: ([0-9.]+)",
            "--higher-is-better",
            "--score-unit",
            "tpmC",
        ],
        &["echo", "tpmC: 14460"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("14460 tpmC"), "{text}");
    assert!(text.contains("higher is better"), "{text}");
}

#[test]
fn stored_shown_compared_and_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db = db.to_str().unwrap();
    let html = dir.path().join("tune.html");
    let out = tune(
        Some(db),
        &["--html", html.to_str().unwrap(), "--no-counters"],
        &["true"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("stored as"), "{text}");
    assert!(text.contains("verdict:"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>tune: <code>true</code></h2>"), "{page}");
    assert!(page.contains("reproduce"));
    let out = tune(Some(db), &["--json", "--no-html"], &["true"]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["schema"], "cpuscope.run/1");
    let res = doc["results"].as_array().unwrap();
    assert!(res.iter().any(|r| r["metric"] == "verdict"));
    assert!(res
        .iter()
        .any(|r| r["metric"] == "score" && r["params"]["set"] == "none"));
    let show = run(&["--store", db, "show", "latest"]);
    let s = String::from_utf8_lossy(&show.stdout);
    assert!(show.status.success() && s.contains("Tune "), "{s}");
    let show = run(&["--store", db, "show", "latest", "--all"]);
    let s = String::from_utf8_lossy(&show.stdout);
    assert!(show.status.success() && s.contains("tune: score"), "{s}");
    let runs = run(&["--store", db, "runs", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let ids: Vec<&str> = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2);
    let cmp = run(&["--store", db, "compare", ids[0], ids[1]]);
    let c = String::from_utf8_lossy(&cmp.stdout);
    assert!(
        cmp.status.success(),
        "{c}{}",
        String::from_utf8_lossy(&cmp.stderr)
    );
    assert!(c.contains("tune"), "{c}");
}

#[test]
fn ctrl_c_kills_the_command_group_and_keeps_what_finished() {
    let marker = format!("cpuscope-tune-ctrl-c-{}", std::process::id());
    let script = format!("sleep 30; echo {marker}");
    let child = bin::command()
        .args([
            "tune",
            "-q",
            "--no-store",
            "--warmup",
            "0",
            "--no-counters",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "Ctrl-C did not stop tune"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("interrupted"), "{text}");
    // No process of the command is left.
    let left = Command::new("pgrep").args(["-f", &marker]).output();
    if let Ok(l) = left {
        assert!(
            l.stdout.is_empty(),
            "left running: {}",
            String::from_utf8_lossy(&l.stdout)
        );
    }
}

#[test]
fn bad_input_is_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["tune"], "give the command to tune after --"),
        (
            &["tune", "--", "cpuscope-no-such-command-xyz"],
            "command not found",
        ),
        (&["tune", "--threads", "1,2", "--", "true"], "{threads}"),
        (
            &["tune", "--higher-is-better", "--", "true"],
            "--higher-is-better needs",
        ),
        (&["tune", "--budget", "soon", "--", "true"], "bad --budget"),
        (
            &["tune", "--cpus-needed", "0", "--", "true"],
            "0 is not in 1..=65536",
        ),
        (
            &["tune", "--cpus-needed", "60000", "--", "true"],
            "--cpus-needed 60000",
        ),
        (
            &["tune", "--score-regex", "(", "--", "true"],
            "--score-regex: bad pattern",
        ),
        (&["tune", "--min-runs", "2", "--", "true"], "--min-runs"),
        (
            &["tune", "--min-runs", "9", "--max-runs", "5", "--", "true"],
            "below --min-runs",
        ),
        (
            &["tune", "--resolution", "200%", "--", "true"],
            "bad --resolution",
        ),
        (
            &["tune", "--threads", "0,2", "--", "echo", "x{threads}"],
            "1 or more",
        ),
        (&["run", "--only", "tune"], "not part of `run`"),
    ];
    for (args, want) in cases {
        let out = run(args);
        let err = one_line_error(&out);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // `run --list` does not list tune (it needs a command).
    let out = run(&["run", "--list", "--profile", "quick"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("tune"), "{text}");
}

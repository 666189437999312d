//! Core-to-core latency and synchronisation: the planner on large fixture
//! machines, inference on synthetic matrices, and the commands' answers to
//! bad input. No test asserts a speed.

// The machine structs gain fields on the topology branch; `..Default::default()`
// keeps these hand-built machines valid on both sides of that merge.
#![allow(clippy::needless_update)]
#[path = "common/bin.rs"]
mod bin;
#[path = "common/hwloc_trees.rs"]
mod hwloc_trees;
#[path = "common/seed_trees.rs"]
mod seed_trees;
#[path = "common/skip.rs"]
mod skip;

use cpuscope::base::CpuSet;
use cpuscope::experiments::coherence::c2c::{self, circle_round, schedule, PlanRequest};
use cpuscope::experiments::coherence::infer::{infer, Declared, LatencyMatrix};
use cpuscope::experiments::experiment::Profile;
use cpuscope::kernels::c2c::Method;
use cpuscope::machine::cache::CacheInstance;
use cpuscope::machine::numa::NumaNode;
use cpuscope::machine::topology::{Core, Package};
use cpuscope::machine::MachineInfo;
use std::collections::BTreeSet;

fn set(ids: impl IntoIterator<Item = usize>) -> CpuSet {
    CpuSet::from_ids(ids)
}

/// A machine built by hand: `cores` lists each core's CPUs; groups of cores
/// (by index) for L2, L3, nodes and packages.
struct Spec {
    cores: Vec<Vec<usize>>,
    l2: Vec<Vec<usize>>,
    l3: Vec<Vec<usize>>,
    nodes: Vec<Vec<usize>>,
    packages: Vec<Vec<usize>>,
}

fn cpus_of(spec: &Spec, core_ids: &[usize]) -> CpuSet {
    set(core_ids.iter().flat_map(|&c| spec.cores[c].iter().copied()))
}

fn machine(spec: &Spec) -> MachineInfo {
    let mut m = MachineInfo::default();
    let pkg_of = |core: usize| {
        spec.packages
            .iter()
            .position(|p| p.contains(&core))
            .unwrap_or(0)
    };
    for (i, c) in spec.cores.iter().enumerate() {
        m.cores.push(Core {
            package: pkg_of(i),
            core_id: i,
            cpus: set(c.iter().copied()),
            ..Default::default()
        });
    }
    for (lvl, groups) in [(2u32, &spec.l2), (3u32, &spec.l3)] {
        for g in groups {
            m.caches.push(CacheInstance {
                level: lvl,
                kind: "Unified".into(),
                shared_cpu_list: cpus_of(spec, g),
                ..Default::default()
            });
        }
    }
    for (i, g) in spec.nodes.iter().enumerate() {
        m.numa_nodes.push(NumaNode {
            id: i,
            cpus: cpus_of(spec, g),
            ..Default::default()
        });
    }
    for (i, g) in spec.packages.iter().enumerate() {
        m.packages.push(Package {
            id: i,
            cpus: cpus_of(spec, g),
            ..Default::default()
        });
    }
    let all = set(spec.cores.iter().flatten().copied());
    m.cpus.online = all.clone();
    m.cpus.usable = all;
    m
}

fn chunks(n: usize, size: usize) -> Vec<Vec<usize>> {
    (0..n / size)
        .map(|g| (g * size..(g + 1) * size).collect())
        .collect()
}

/// Phytium FT2500-like: 2 packages × 64 cores, 16 NUMA nodes of 8 cores,
/// L2 shared by 4 cores, no L3, no SMT: 128 CPUs.
fn ft2500() -> MachineInfo {
    machine(&Spec {
        cores: (0..128).map(|c| vec![c]).collect(),
        l2: chunks(128, 4),
        l3: Vec::new(),
        nodes: chunks(128, 8),
        packages: chunks(128, 64),
    })
}

/// 2 packages × `cores_per_pkg` cores × 2 threads, Linux numbering (CPU c and
/// c + cores are siblings); L3 per `ccx` cores; one node per package.
fn smt_machine(cores_per_pkg: usize, ccx: usize) -> (MachineInfo, Spec) {
    let nc = 2 * cores_per_pkg;
    let spec = Spec {
        cores: (0..nc).map(|c| vec![c, c + nc]).collect(),
        l2: (0..nc).map(|c| vec![c]).collect(),
        l3: chunks(nc, ccx),
        nodes: chunks(nc, cores_per_pkg),
        packages: chunks(nc, cores_per_pkg),
    };
    (machine(&spec), spec)
}

/// Deterministic ±amp relative noise.
fn noise(i: usize, j: usize, amp: f64) -> f64 {
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    let u = (x % 10_000) as f64 / 10_000.0; // [0,1)
    1.0 + amp * (2.0 * u - 1.0)
}

fn matrix_from(cpus: &[usize], f: impl Fn(usize, usize) -> f64) -> LatencyMatrix {
    let mut m = LatencyMatrix::new(cpus.to_vec());
    for i in 0..cpus.len() {
        for j in i + 1..cpus.len() {
            let v = f(cpus[i], cpus[j]) * noise(cpus[i], cpus[j], 0.02);
            m.set_sym(i, j, v);
        }
    }
    m
}

// ---------------------------------------------------------------- planner

fn check_schedule(plan: &c2c::Plan, core_of: impl Fn(usize) -> usize) {
    let mut seen = BTreeSet::new();
    for r in &plan.rounds {
        let mut cores = BTreeSet::new();
        for &p in r {
            let (a, b) = plan.pairs[p];
            assert!(a < b, "initiator is the lower CPU");
            assert!(seen.insert(p), "pair ({a},{b}) scheduled twice");
            let (ca, cb) = (core_of(a), core_of(b));
            assert!(
                cores.insert(ca),
                "core of CPU {a} carries two pairs in one round"
            );
            if cb != ca {
                assert!(
                    cores.insert(cb),
                    "core of CPU {b} carries two pairs in one round"
                );
            }
        }
    }
    assert_eq!(seen.len(), plan.pairs.len(), "every pair is scheduled");
}

#[test]
fn ft2500_plan_fits_every_profile_budget() {
    let m = ft2500();
    let cpus: Vec<usize> = (0..128).collect();
    assert_eq!(m.numa_nodes.len(), 16);
    for profile in [Profile::Quick, Profile::Standard, Profile::Full] {
        let req = PlanRequest::for_profile(profile, &cpus, &[Method::Cas, Method::LoadStore]);
        let plan = c2c::plan(&m, &req).unwrap();
        assert!(
            plan.est_secs <= c2c::budget_secs(profile),
            "{profile:?}: estimate {:.1} s over budget {:.1} s",
            plan.est_secs,
            c2c::budget_secs(profile)
        );
        // 128 CPUs, no SMT: the whole matrix fits, as 127 rounds of 64 disjoint pairs.
        assert!(plan.full_matrix, "{profile:?}: {:?}", plan.notes);
        assert_eq!(plan.pairs.len(), 128 * 127 / 2);
        assert_eq!(plan.rounds.len(), 127);
        assert!(plan.rounds.iter().all(|r| r.len() == 64));
        assert!(plan.samples >= c2c::MIN_SAMPLES);
        check_schedule(&plan, |c| c);
    }
    // The estimate the run command shows is the plan's.
    let est = cpuscope::experiments::experiment::Experiment::estimate_secs(
        &c2c::C2c,
        &m,
        &set(0..128),
        Profile::Quick,
    );
    assert!(est > 0.0 && est <= c2c::budget_secs(Profile::Quick));
}

#[test]
fn ft2500_sample_is_a_subset_spread_over_every_node() {
    let m = ft2500();
    let cpus: Vec<usize> = (0..128).collect();
    let mut req = PlanRequest::for_profile(Profile::Standard, &cpus, &[Method::Cas]);
    req.max_pairs = Some(3 * 127);
    let plan = c2c::plan(&m, &req).unwrap();
    assert!(!plan.full_matrix);
    assert_eq!(plan.requested_cpus, 128);
    // 28 CPUs: 378 pairs <= 381 < 406.
    assert_eq!(plan.cpus.len(), 28);
    assert_eq!(plan.pairs.len(), 28 * 27 / 2);
    assert_eq!(plan.rounds.len(), 27);
    let nodes: BTreeSet<usize> = plan.cpus.iter().map(|c| c / 8).collect();
    assert_eq!(
        nodes.len(),
        16,
        "every node is represented: {:?}",
        plan.cpus
    );
    check_schedule(&plan, |c| c);
    assert!(plan.notes.iter().any(|n| n.contains("--sample")));
}

#[test]
fn smt_machine_schedule_keeps_siblings_of_busy_cores_idle() {
    let (m, _) = smt_machine(8, 4); // 32 CPUs
    let cpus: Vec<usize> = (0..32).collect();
    let req = PlanRequest::for_profile(Profile::Standard, &cpus, &[Method::Cas]);
    let plan = c2c::plan(&m, &req).unwrap();
    assert!(plan.full_matrix);
    check_schedule(&plan, |c| c % 16);
    // 16 cores: at most 16 cores busy at once (a pair of siblings takes one).
    for r in &plan.rounds {
        let cores: usize = r
            .iter()
            .map(|&p| {
                if plan.pairs[p].0 % 16 == plan.pairs[p].1 % 16 {
                    1
                } else {
                    2
                }
            })
            .sum();
        assert!(cores <= 16);
    }
    // Sibling pairs are in the plan, labelled by the declared cores.
    assert!(plan.pairs.contains(&(0, 16)));
}

#[test]
fn huge_machine_is_sampled_to_fit_quick() {
    // 1024 CPUs, 8 nodes: the full matrix cannot fit 4 s.
    let spec = Spec {
        cores: (0..1024).map(|c| vec![c]).collect(),
        l2: Vec::new(),
        l3: chunks(1024, 16),
        nodes: chunks(1024, 128),
        packages: chunks(1024, 512),
    };
    let m = machine(&spec);
    let cpus: Vec<usize> = (0..1024).collect();
    let req = PlanRequest::for_profile(Profile::Quick, &cpus, &[Method::Cas, Method::LoadStore]);
    let plan = c2c::plan(&m, &req).unwrap();
    assert!(
        plan.est_secs <= c2c::budget_secs(Profile::Quick),
        "{}",
        plan.est_secs
    );
    assert!(!plan.full_matrix);
    assert!(!plan.pairs.is_empty());
    assert!(plan.notes.iter().any(|n| n.contains("does not fit")));
    assert!(
        plan.cpus.len() < 1024 && plan.cpus.len() > 100,
        "{}",
        plan.cpus.len()
    );
    let nodes: BTreeSet<usize> = plan.cpus.iter().map(|c| c / 128).collect();
    assert_eq!(nodes.len(), 8);
    assert_eq!(
        plan.pairs.len(),
        plan.cpus.len() * (plan.cpus.len() - 1) / 2
    );
    check_schedule(&plan, |c| c);
}

#[test]
fn serial_plan_runs_one_pair_per_round() {
    let m = ft2500();
    let cpus: Vec<usize> = (0..8).collect();
    let mut req = PlanRequest::for_profile(Profile::Quick, &cpus, &[Method::Cas]);
    req.max_parallel = Some(1);
    let plan = c2c::plan(&m, &req).unwrap();
    assert_eq!(plan.rounds.len(), 28);
    assert_eq!(plan.max_round_width(), 1);
}

#[test]
fn planner_refuses_bad_requests() {
    let m = ft2500();
    let e = c2c::plan(
        &m,
        &PlanRequest::for_profile(Profile::Quick, &[3], &[Method::Cas]),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("at least two"), "{e}");
    let mut req = PlanRequest::for_profile(Profile::Quick, &[0, 1], &[Method::Cas]);
    req.max_pairs = Some(0);
    assert!(c2c::plan(&m, &req).is_err());
    let req = PlanRequest::for_profile(Profile::Quick, &[0, 1], &[]);
    assert!(c2c::plan(&m, &req).is_err());
}

#[test]
fn circle_method_meets_everyone_once() {
    let n = 10;
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .collect();
    let ids: Vec<usize> = (0..n).collect();
    let rounds = schedule(&pairs, &ids, &|c| c, usize::MAX);
    assert_eq!(rounds.len(), 9);
    for r in &rounds {
        assert_eq!(r.len(), 5);
        let k = circle_round(pairs[r[0]].0, pairs[r[0]].1, n);
        assert!(r
            .iter()
            .all(|&p| circle_round(pairs[p].0, pairs[p].1, n) == k));
    }
}

/// The seed Phytium FT2500 tree (phytium-ft2500, generated at test time by
/// tests/fixtures/seed/gen.py): 2 packages × 64 cores, 16 NUMA nodes, L2 per
/// 4-core cluster. `None` (after a visible SKIP line) without python3.
fn ft2500_fixture() -> Option<MachineInfo> {
    let root = seed_trees::tree("phytium-ft2500")?;
    let sys = cpuscope::base::Sysroot::new(&root).expect("FT2500 seed tree is a sysroot");
    Some(cpuscope::machine::discover(&sys).expect("discover the FT2500 seed tree"))
}

#[test]
fn ft2500_fixture_tree_plans_within_budget() {
    let Some(m) = ft2500_fixture() else {
        return; // seed_trees has said SKIP (no python3)
    };
    let cpus = m.cpus.online.to_vec();
    assert_eq!(cpus.len(), 128);
    assert_eq!(m.numa_nodes.len(), 16);
    for profile in [Profile::Quick, Profile::Standard, Profile::Full] {
        let req = PlanRequest::for_profile(profile, &cpus, &[Method::Cas, Method::LoadStore]);
        let plan = c2c::plan(&m, &req).unwrap();
        assert!(
            plan.est_secs <= c2c::budget_secs(profile),
            "{profile:?}: {}",
            plan.est_secs
        );
        assert!(plan.full_matrix);
        assert_eq!(plan.rounds.len(), 127);
        check_schedule(&plan, |c| c);
    }
    // Inference against the fixture's declared topology: cluster (L2), node,
    // package (= L3), machine.
    let lat = |a: usize, b: usize| {
        if a / 4 == b / 4 {
            40.0
        } else if a / 8 == b / 8 {
            70.0
        } else if a / 64 == b / 64 {
            120.0
        } else {
            200.0
        }
    };
    let mat = matrix_from(&cpus, lat);
    let inf = infer(&mat, &Declared::from_machine(&m, &cpus));
    let names: Vec<Vec<String>> = inf.levels.iter().map(|l| l.matches.clone()).collect();
    assert_eq!(inf.levels.len(), 4, "{names:?}");
    assert!(names[0].contains(&"shared_l2".to_string()), "{names:?}");
    assert!(names[1].contains(&"same_node".to_string()), "{names:?}");
    assert!(names[2].contains(&"same_package".to_string()), "{names:?}");
    assert!(inf.findings.is_empty(), "{:?}", inf.findings);
}

// -------------------------------------------------------------- inference

#[test]
fn two_socket_smt_machine_groups_and_increments() {
    let (m, _) = smt_machine(4, 4); // 16 CPUs: cores 0-7, siblings 8-15
    let cpus: Vec<usize> = (0..16).collect();
    let core = |c: usize| c % 8;
    let sock = |c: usize| core(c) / 4;
    let lat = |a: usize, b: usize| {
        if core(a) == core(b) {
            12.0
        } else if sock(a) == sock(b) {
            40.0
        } else {
            120.0
        }
    };
    let mat = matrix_from(&cpus, lat);
    let decl = Declared::from_machine(&m, &cpus);
    let inf = infer(&mat, &decl);
    let lv: Vec<f64> = inf.levels.iter().map(|l| l.latency_ns).collect();
    assert_eq!(inf.levels.len(), 3, "{lv:?}");
    for (got, want) in lv.iter().zip([12.0, 40.0, 120.0]) {
        assert!((got / want - 1.0).abs() < 0.03, "{lv:?}");
    }
    let inc1 = inf.levels[1].increment_ns.unwrap();
    assert!((inc1 - 28.0).abs() < 2.0, "{inc1}");
    assert_eq!(inf.levels[0].group_sizes, vec![2]);
    assert!(inf.levels[0].matches.contains(&"smt_sibling".to_string()));
    assert_eq!(inf.levels[1].group_sizes, vec![8]);
    assert!(inf.levels[1].matches.contains(&"shared_l3".to_string()));
    assert!(inf.levels[1].matches.contains(&"same_package".to_string()));
    assert_eq!(inf.levels[2].group_sizes, vec![16]);
    assert!(inf.findings.is_empty(), "{:?}", inf.findings);
    // Relations: SMT siblings, shared L3, cross package.
    let rels: Vec<&str> = inf.relations.iter().map(|r| r.relation.as_str()).collect();
    assert_eq!(rels, vec!["smt_sibling", "shared_l3", "cross_package"]);
    assert_eq!(inf.relations[0].pairs, 8);
    assert_eq!(inf.relations[2].pairs, 64);
}

/// The seed's EPYC 7742 (2 × 64 cores, SMT, NPS1): 52.7 ns to the sibling,
/// +7–8 ns inside a 4-core L3 group, < 120 ns on the same side of the IO die,
/// < 130 ns in the socket, < 180 ns across sockets. Seed 001's groups, seen
/// from core #16:
///   "< 60 ns:只有core#16发起给自己的本地,52.7ns作为比较基线。"
///   "< 70 ns: 即最绿的部分,4个,其实是共享L3缓存的4个core"   (4 cores)
///   "< 120 ns:32个,参考上面的图片,在IO die同一侧的4个core die。" (32 cores:
///     4 core dies × 8 cores — not 16, as this model had it before)
///   "< 130 ns: 64个,同一个socket上所有的core。"   (64 cores)
///   "< 180 ns: 所有的两个socket上所有的core。"
/// (`seed001-epyc7742.json` has the same 4 / 32 / 64 / 128.)
const EPYC7742_SAME_SIDE_CORES: usize = 32;

fn epyc7742_latency(a: usize, b: usize) -> f64 {
    let core = |c: usize| c % 128;
    let (ca, cb) = (core(a), core(b));
    let side = EPYC7742_SAME_SIDE_CORES;
    if ca == cb {
        52.7
    } else if ca / 4 == cb / 4 {
        60.5
    } else if ca / side == cb / side {
        112.0
    } else if ca / 64 == cb / 64 {
        126.0
    } else if (ca % 64) / side == (cb % 64) / side {
        // the opposite socket, mirrored quadrant: the far diagonal
        175.0
    } else {
        162.0
    }
}

#[test]
fn epyc7742_groups_match_the_seed_and_find_the_io_die_quadrants() {
    let (m, _) = smt_machine(64, 4); // 256 CPUs
    let cpus: Vec<usize> = (0..256).collect();
    let mat = matrix_from(&cpus, epyc7742_latency);
    let decl = Declared::from_machine(&m, &cpus);
    let inf = infer(&mat, &decl);
    let lv: Vec<f64> = inf.levels.iter().map(|l| l.latency_ns).collect();
    assert_eq!(inf.levels.len(), 5, "{lv:?}");
    for (got, want) in lv.iter().zip([52.7, 60.5, 112.0, 126.0, 165.0]) {
        assert!((got - want).abs() < 0.05 * want, "{lv:?}");
    }
    let inc = inf.levels[1].increment_ns.unwrap();
    assert!(
        (7.0..=9.0).contains(&inc),
        "the L3 group costs +7–8 ns, got {inc}"
    );
    let sizes: Vec<Vec<usize>> = inf.levels.iter().map(|l| l.group_sizes.clone()).collect();
    assert_eq!(
        sizes,
        vec![vec![2], vec![8], vec![64], vec![128], vec![256]]
    );
    assert!(inf.levels[0].matches.contains(&"smt_sibling".into()));
    assert!(inf.levels[1].matches.contains(&"shared_l3".into()));
    // The IO-die quadrant is not declared by the kernel (NPS1): a hidden level
    // between the L3 and the node/package.
    assert!(inf.levels[2].matches.is_empty());
    assert!(
        inf.levels[2].label.contains("between"),
        "{}",
        inf.levels[2].label
    );
    assert!(inf.levels[3].matches.contains(&"same_node".into()));
    assert!(
        inf.findings
            .iter()
            .any(|f| f.starts_with("hidden level: 4 groups of 64 CPUs")),
        "{:?}",
        inf.findings
    );
    // Seen from one CPU: 1 sibling, 6 more in its L3 group, 56 more on its
    // side of the IO die (32 cores × 2 threads), 64 more in the socket, ...
    let per: Vec<f64> = inf.levels.iter().map(|l| l.cpus_per_cpu).collect();
    assert_eq!(per, vec![1.0, 6.0, 56.0, 64.0, 128.0]);
    // The model's group sizes are the published set's.
    let set = cpuscope::results::published::by_id("seed001-epyc7742").unwrap();
    let in_group = |g: &str| {
        set.figures
            .iter()
            .find(|f| f.params.get("group").and_then(|v| v.as_str()) == Some(g))
            .and_then(|f| f.params.get("cores_in_group"))
            .and_then(|v| v.as_u64())
    };
    assert_eq!(
        in_group("the 4 core dies on the same side of the IO die"),
        Some(EPYC7742_SAME_SIDE_CORES as u64)
    );
    assert_eq!(in_group("cores sharing the L3 (same CCX)"), Some(4));
    assert_eq!(in_group("same socket"), Some(64));
}

#[test]
fn wrong_declared_l3_is_reported() {
    // Hardware: 4-core L3 groups; kernel declares 8-core L3 groups.
    let (m, _) = smt_machine(8, 8); // 32 CPUs, declared L3 = 8 cores
    let cpus: Vec<usize> = (0..32).collect();
    let lat = |a: usize, b: usize| {
        let (ca, cb) = (a % 16, b % 16);
        if ca == cb {
            10.0
        } else if ca / 4 == cb / 4 {
            30.0
        } else if ca / 8 == cb / 8 {
            70.0
        } else {
            140.0
        }
    };
    let mat = matrix_from(&cpus, lat);
    let inf = infer(&mat, &Declared::from_machine(&m, &cpus));
    assert_eq!(inf.levels.len(), 4);
    assert!(inf.levels[1].matches.is_empty(), "{:?}", inf.levels[1]);
    assert!(
        inf.findings
            .iter()
            .any(|f| f.starts_with("hidden level: 4 groups of 8 CPUs")),
        "{:?}",
        inf.findings
    );
    assert!(inf.levels[2].matches.contains(&"shared_l3".into()));
}

#[test]
fn declared_level_without_a_step_is_reported() {
    // Kernel declares 2 nodes per package, but node and package cost the same.
    let spec = Spec {
        cores: (0..16).map(|c| vec![c]).collect(),
        l2: Vec::new(),
        l3: chunks(16, 8),
        nodes: chunks(16, 4),
        packages: chunks(16, 8),
    };
    let m = machine(&spec);
    let cpus: Vec<usize> = (0..16).collect();
    let lat = |a: usize, b: usize| if a / 8 == b / 8 { 40.0 } else { 130.0 };
    let inf = infer(&matrix_from(&cpus, lat), &Declared::from_machine(&m, &cpus));
    assert_eq!(inf.levels.len(), 2);
    assert!(
        inf.findings
            .iter()
            .any(|f| f.contains("'same NUMA node'") && f.contains("no latency step")),
        "{:?}",
        inf.findings
    );
}

#[test]
fn partial_matrix_is_said_partial() {
    let (m, _) = smt_machine(4, 4);
    let cpus: Vec<usize> = (0..16).collect();
    let mut mat = LatencyMatrix::new(cpus.clone());
    // One row only: CPU 0 to everyone.
    for j in 1..16 {
        mat.set_sym(
            0,
            j,
            if j == 8 {
                12.0
            } else if j % 8 < 4 {
                40.0
            } else {
                120.0
            },
        );
    }
    let inf = infer(&mat, &Declared::from_machine(&m, &cpus));
    assert!(inf.partial);
    assert!(inf.notes.iter().any(|n| n.contains("partial matrix")));
    assert!(!inf.levels.is_empty());
}

#[test]
fn declared_relations_from_a_hand_built_machine() {
    let (m, _) = smt_machine(4, 2);
    let cpus: Vec<usize> = (0..16).collect();
    let d = Declared::from_machine(&m, &cpus);
    let ix = |c: usize| d.index_of(c).unwrap();
    assert_eq!(d.relation(ix(0), ix(8)), "smt_sibling");
    assert!(d.smt_siblings(ix(0), ix(8)));
    assert_eq!(d.relation(ix(0), ix(1)), "shared_l3");
    assert_eq!(d.relation(ix(0), ix(2)), "same_node");
    assert_eq!(d.relation(ix(0), ix(4)), "cross_package");
    // Nothing declared: every pair is "none_declared", each CPU its own core.
    let bare = Declared::from_machine(&MachineInfo::default(), &[0, 1]);
    assert_eq!(bare.relation(0, 1), "none_declared");
    assert!(!bare.notes.is_empty());
}

// ---------------------------------------------------------------- commands

fn assert_one_line_error(args: &[&str], needle: &str) {
    let (code, _out, err) = bin::run_text(args);
    assert_ne!(code, 0, "{args:?} should fail");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected, got {err:?}");
    assert!(lines[0].starts_with("cpuscope: error: "), "{err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_gives_one_line_errors() {
    assert_one_line_error(&["c2c", "--pair", "0,0"], "must differ");
    assert_one_line_error(&["c2c", "--pair", "0,65000"], "not usable");
    assert_one_line_error(&["c2c", "--pair", "x,1"], "not a CPU id");
    assert_one_line_error(&["c2c", "--pair", "1"], "two CPU ids");
    assert_one_line_error(&["c2c", "--sample", "0"], "0 is not in 1..=1000000");
    assert_one_line_error(&["c2c", "--samples", "0"], "0 is not in 1..=100000");
    assert_one_line_error(&["c2c", "--cpus", "60000"], "not usable");
    assert_one_line_error(&["c2c", "--cpus", "zz"], "--cpus");
    assert_one_line_error(&["sync", "--cpus", "60000"], "not usable");
    if let Some(r) = hwloc_trees::tree_arg("16amd64-8n2c") {
        assert_one_line_error(&["--sysroot", &r, "c2c"], "only applies to `info`");
        assert_one_line_error(&["--sysroot", &r, "sync"], "only applies to `info`");
    }
}

fn usable_cpus() -> Vec<usize> {
    cpuscope::placement::current_affinity()
        .map(|s| s.to_vec())
        .unwrap_or_default()
}

#[test]
fn plan_json_needs_no_measurement() {
    let cpus = usable_cpus();
    if cpus.len() < 2 {
        skip::skip_or_fail(&format!(
            "plan_json_needs_no_measurement: needs two usable CPUs, this process has {cpus:?}"
        ));
        return;
    }
    let (code, out, err) = bin::run_text(&["c2c", "--plan", "--json", "--profile", "quick"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "cpuscope.c2c-plan/1");
    let n = v["plan"]["cpus"].as_array().unwrap().len();
    assert_eq!(
        v["plan"]["pairs"].as_array().unwrap().len(),
        n * (n - 1) / 2
    );
}

#[test]
fn one_pair_json_has_every_field() {
    let cpus = usable_cpus();
    if cpus.len() < 2 {
        skip::skip_or_fail(&format!(
            "one_pair_json_has_every_field: needs two usable CPUs, this process has {cpus:?}"
        ));
        return;
    }
    let pair = format!("{},{}", cpus[0], cpus[1]);
    let (code, out, err) = bin::run_text(&[
        "c2c",
        "--pair",
        &pair,
        "--method",
        "both",
        "--samples",
        "5",
        "--round-trips",
        "50",
        "--no-clock",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // The session's document (cpuscope.run/1) with the pair's own keys.
    assert_eq!(v["schema"], "cpuscope.run/1");
    assert_eq!(v["options"]["command"], "c2c");
    assert_eq!(v["initiator"], cpus[0].min(cpus[1]));
    assert!(v["results"].as_array().is_some_and(|r| !r.is_empty()));
    assert!(v["clock_ghz"].is_null());
    assert!(v["cycles_unavailable_reason"]
        .as_str()
        .unwrap()
        .contains("--no-clock"));
    let ms = v["methods"].as_array().unwrap();
    assert_eq!(ms.len(), 2);
    for m in ms {
        assert!(m["one_way_ns"].as_f64().unwrap() > 0.0);
        assert_eq!(m["samples"].as_array().unwrap().len(), 5);
        assert!(m["one_way_cycles"].is_null());
    }
}

#[test]
fn matrix_csv_is_square() {
    let cpus = usable_cpus();
    if cpus.len() < 2 {
        skip::skip_or_fail(&format!(
            "matrix_csv_is_square: needs two usable CPUs, this process has {cpus:?}"
        ));
        return;
    }
    let list = format!("{},{}", cpus[0], cpus[1]);
    let (code, out, err) = bin::run_text(&[
        "c2c",
        "--cpus",
        &list,
        "--samples",
        "3",
        "--round-trips",
        "50",
        "--no-clock",
        "--csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], format!("cpu,{},{}", cpus[0], cpus[1]));
    assert!(lines[1].split(',').nth(2).unwrap().parse::<f64>().unwrap() > 0.0);
}

/// hwloc's recorded 4-socket SMT Xeon (16em64t-4s2c2t): L2 per core, L3 per
/// package, one NUMA node for the whole machine.
#[test]
fn hwloc_4s2c2t_declared_levels_plan_and_groups() {
    let Some(root) = hwloc_trees::tree("16em64t-4s2c2t") else {
        return;
    };
    let sys = cpuscope::base::Sysroot::new(&root).unwrap();
    let m = cpuscope::machine::discover(&sys).unwrap();
    let cpus: Vec<usize> = (0..16).collect();
    let d = Declared::from_machine(&m, &cpus);
    let ix = |c: usize| d.index_of(c).unwrap();
    assert_eq!(d.relation(ix(0), ix(8)), "smt_sibling");
    assert!(d.smt_siblings(ix(0), ix(8)));
    assert_eq!(d.relation(ix(0), ix(4)), "shared_l3");
    // Different packages on the one node: their closest shared level is the node.
    assert_eq!(d.relation(ix(0), ix(1)), "same_node");
    let labels: Vec<&str> = d.levels.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        vec![
            "SMT siblings (same core) = shared L2",
            "shared L3 = same die = same package",
            "same NUMA node"
        ],
        "{labels:?}"
    );

    // The planner keeps the siblings of busy cores idle.
    let req = PlanRequest::for_profile(Profile::Quick, &cpus, &[Method::Cas]);
    let plan = c2c::plan(&m, &req).unwrap();
    assert!(plan.full_matrix);
    let core_of = |c: usize| d.core_of[ix(c)];
    check_schedule(&plan, core_of);

    // A matrix with SMT 10 ns, package 40 ns, cross-package 100 ns.
    let pkg = |c: usize| m.packages.iter().position(|p| p.cpus.contains(c)).unwrap();
    let lat = |a: usize, b: usize| {
        if core_of(a) == core_of(b) {
            10.0
        } else if pkg(a) == pkg(b) {
            40.0
        } else {
            100.0
        }
    };
    let inf = infer(&matrix_from(&cpus, lat), &d);
    let sizes: Vec<Vec<usize>> = inf.levels.iter().map(|l| l.group_sizes.clone()).collect();
    assert_eq!(sizes, vec![vec![2], vec![4], vec![16]]);
    assert!(inf.levels[1].matches.contains(&"same_package".to_string()));
    assert!(inf.levels[2].matches.contains(&"same_node".to_string()));
    assert!(inf.findings.is_empty(), "{:?}", inf.findings);
}

/// Ctrl-C stops c2c within one sample, not at the end of a round: a round
/// whose samples take minutes (here 1000 samples of 4 million round trips,
/// minutes on any machine; the ARM lab's TCG guests took up to 111 s per
/// round against a 4 s budget) ends soon after SIGINT, keeping what it
/// measured.
///
/// Three times: the page a pair shares was once unmapped under a responder
/// still answering on it after Ctrl-C (SIGSEGV, nothing printed), a race
/// one interrupt in four lost in a debug build.
#[test]
fn ctrl_c_stops_inside_a_round() {
    let cpus = usable_cpus();
    if cpus.len() < 2 {
        skip::skip_or_fail(&format!(
            "ctrl_c_stops_inside_a_round: c2c needs two usable CPUs, this process has {cpus:?}"
        ));
        return;
    }
    for _ in 0..3 {
        interrupt_one_c2c(cpus[0], cpus[1]);
    }
}

/// c2c on CPUs `x`,`y` with a round of minutes, sent SIGINT a second after
/// its plan line: it ends within 30 s, printing "interrupted".
fn interrupt_one_c2c(x: usize, y: usize) {
    use std::io::BufRead;
    let pair = format!("{x},{y}");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let mut child = bin::command()
        .args(["c2c", "--cpus", &pair, "--method", "cas"])
        .args(["--round-trips", "4000000", "--samples", "1000"])
        .args(["--store", store.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Signal only once the handler is in: the plan's progress line comes
    // after it (a fixed sleep lost that race on a loaded CI machine, where
    // the default SIGINT ended the child with nothing printed).
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        // Bytes, not lines of UTF-8: the pipe is drained to its end whatever
        // it holds, so the child never blocks on it.
        for line in std::io::BufReader::new(stderr).split(b'\n') {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line);
            if line.contains("pairs in") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let ready = rx.recv_timeout(std::time::Duration::from_secs(120)).is_ok();
    std::thread::sleep(std::time::Duration::from_secs(1));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let waited = t0.elapsed().as_secs_f64();
    let err = reader.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let what = format!("{:?}; stdout:\n{text}\nstderr:\n{err}", out.status);
    assert!(ready, "no plan line within 120 s: {what}");
    // One sample of 4 million round trips is a few seconds at most (about
    // 1 s at 120 ns per one-way trip); the round alone would be 1000 of them.
    assert!(waited < 30.0, "{waited:.1} s after SIGINT: {what}");
    assert!(text.contains("interrupted"), "{what}");
}

// ------------------------------------------------- noise and disturbance (issue 24)

/// One pair of the recorded noisy matrix.
#[derive(serde::Deserialize)]
struct NoisyPair {
    cpus: [usize; 2],
    median_ns: f64,
    samples: usize,
    preempted_samples: usize,
    responder_switches: i64,
    pass_cv: f64,
}

#[derive(serde::Deserialize)]
struct NoisyMatrix {
    cpus: Vec<usize>,
    steal: serde_json::Value,
    pairs: Vec<NoisyPair>,
}

/// tests/fixtures/c2c/cloud-16vcpu-noisy.json: a 16-vCPU cloud guest's
/// matrix (no SMT, one L3), ~70 ns ±3% with preemption outliers.
fn noisy_fixture() -> NoisyMatrix {
    let p = format!(
        "{}/tests/fixtures/c2c/cloud-16vcpu-noisy.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The fixture's machine: 16 CPUs, one core each, one L3, one node, one package.
fn cloud16() -> MachineInfo {
    machine(&Spec {
        cores: (0..16).map(|c| vec![c]).collect(),
        l2: (0..16).map(|c| vec![c]).collect(),
        l3: vec![(0..16).collect()],
        nodes: vec![(0..16).collect()],
        packages: vec![(0..16).collect()],
    })
}

/// The fixture as a measured CAS run: each pair's samples around its figure
/// (±2%), its preempted samples marked and lasting a scheduler slice, four
/// passes whose medians spread by the pair's CV; `scale` multiplies the
/// preempted samples (capped at a third of the samples).
fn noisy_run(f: &NoisyMatrix, scale: usize, steal: bool) -> c2c::MatrixRun {
    let pairs = f
        .pairs
        .iter()
        .map(|p| {
            let pre = (p.preempted_samples * scale).min(p.samples / 3);
            let m = p.median_ns;
            let mut samples = Vec::with_capacity(p.samples);
            let mut flags = Vec::with_capacity(p.samples);
            for k in 0..p.samples {
                if k < pre {
                    samples.push(m * 40.0);
                    flags.push(true);
                } else {
                    samples.push(m * noise(p.cpus[0] * 1000 + k, p.cpus[1], 0.02));
                    flags.push(false);
                }
            }
            let mut ps =
                c2c::pair_stats_marked(p.cpus[0], p.cpus[1], samples, flags, false).unwrap();
            ps.preempted_samples = Some(pre);
            ps.responder_switches = Some(p.responder_switches * scale as i64);
            let c = p.pass_cv / 0.816;
            ps.pass_medians = vec![m * (1.0 - c), m, m * (1.0 + c), m];
            ps.clean_pass_medians = ps.pass_medians.clone();
            ps
        })
        .collect();
    c2c::MatrixRun {
        method: Method::Cas,
        cpus: f.cpus.clone(),
        pairs,
        rounds_done: 15,
        rounds_planned: 15,
        elapsed_s: 3.2,
        stopped: None,
        adapted: Vec::new(),
        steal: steal.then(|| serde_json::from_value(f.steal.clone()).unwrap()),
    }
}

/// Every quote and bracket of a label is closed.
fn balanced(s: &str) -> bool {
    s.matches('\'').count().is_multiple_of(2)
        && s.matches('"').count().is_multiple_of(2)
        && s.matches('(').count() == s.matches(')').count()
}

/// The records and the verdict of a noisy run on the fixture's machine.
fn noisy_records(run: &c2c::MatrixRun) -> (Vec<cpuscope::results::schema::ResultRecord>, String) {
    let m = cloud16();
    let cpus: Vec<usize> = (0..16).collect();
    let plan = c2c::plan(
        &m,
        &PlanRequest::for_profile(Profile::Quick, &cpus, &[Method::Cas]),
    )
    .unwrap();
    let decl = Declared::from_machine(&m, &cpus);
    let (recs, _) = c2c::records(run, &plan, &decl, None);
    let mut r = cpuscope::results::schema::Run::new(
        "cloud16",
        "quick",
        serde_json::json!({}),
        Default::default(),
        serde_json::json!({}),
        Vec::new(),
    );
    r.results = recs.clone();
    let text =
        cpuscope::report::verdict::render(&r, None, &cpuscope::report::verdict::Style::plain(160));
    let line = text
        .lines()
        .find(|l| l.starts_with("Core↔core"))
        .unwrap_or_else(|| panic!("no Core↔core line:\n{text}"))
        .to_string();
    (recs, line)
}

fn inference_of(
    recs: &[cpuscope::results::schema::ResultRecord],
) -> cpuscope::experiments::coherence::payload::Inference {
    let mat = recs.iter().find(|r| r.is(c2c::MATRIX)).unwrap();
    serde_json::from_value(mat.data.as_ref().unwrap()["inference"].clone()).unwrap()
}

#[test]
fn noisy_cloud_matrix_infers_one_group() {
    let f = noisy_fixture();
    let run = noisy_run(&f, 1, false);
    let marked = run.pairs.iter().filter(|p| p.is_preempted()).count();
    assert_eq!(marked, 39, "the fixture's marked pairs");
    let decl = Declared::from_machine(&cloud16(), &f.cpus);
    // Every pair, outliers included, with the pairs' own noise: the noise
    // rule alone. The 8%/2 ns cut finds 49, 70 and 94 ns here; the 3 pairs
    // at 48 ns are too few for a group. (The 94 ns step, the two
    // descheduled vCPUs joining the rest, is merged too, by the spread of
    // its pairs, but only just: leaving them out is what the experiment
    // relies on.)
    let mut full = run.matrix();
    for p in &run.pairs {
        full.set_noise_sym(p.initiator, p.responder, p.rel_noise());
    }
    let all = infer(&full, &decl);
    assert!(all.levels.len() <= 2, "{:#?}", all.levels);
    assert!(
        all.levels
            .iter()
            .all(|l| l.pairs >= 4 && l.latency_ns > 60.0),
        "{:#?}",
        all.levels
    );
    assert!(
        all.notes
            .iter()
            .any(|n| n.contains("3 pair(s) in a group, fewer than the 4")),
        "{:?}",
        all.notes
    );
    // The clean pairs only (what the experiment does).
    let inf = cpuscope::experiments::coherence::infer::infer_with(
        &run.matrix(),
        &run.clean_matrix(),
        &decl,
    );
    assert_eq!(inf.levels.len(), 1, "{:#?}", inf.levels);
    assert_eq!(inf.pairs_measured, 120);
    assert_eq!(inf.pairs_clean, 120 - 39);
    let l = &inf.levels[0];
    assert!((l.latency_ns / 70.0 - 1.0).abs() < 0.03, "{}", l.latency_ns);
    // vCPUs 11 and 13 lost every pair (preempted): in no group.
    assert_eq!(l.group_sizes, vec![1, 14]);
    assert!(l.groups.contains(&vec![11]) && l.groups.contains(&vec![13]));
    assert!(
        inf.notes
            .iter()
            .any(|n| n.contains("CPU(s) 11,13: every pair left out")),
        "{:?}",
        inf.notes
    );
    assert!(
        !inf.notes.iter().any(|n| n.contains("separate groups")),
        "{:?}",
        inf.notes
    );
    assert!(l.matches.contains(&"shared_l3".to_string()), "{l:?}");
    assert!(
        !l.label.contains("SMT") && balanced(&l.label),
        "{}",
        l.label
    );
    assert!(
        inf.notes
            .iter()
            .any(|n| n.contains("39 of 120 pairs left out")),
        "{:?}",
        inf.notes
    );
    // The records and the verdict: one group, not disturbed by pairs alone.
    let (recs, line) = noisy_records(&run);
    assert_eq!(inference_of(&recs).levels.len(), 1);
    assert!(line.contains("1 group(s): shared L3 "), "{line}");
    assert!(!line.contains("disturbed"), "{line}");
}

#[test]
fn noise_rule_merges_steps_within_the_pairs_own_noise() {
    // Two real-looking levels, 60 and 70 ns (+17%), but every pair wanders
    // 10% over its passes: not separated beyond the noise, one group.
    let m = cloud16();
    let cpus: Vec<usize> = (0..16).collect();
    let lat = |a: usize, b: usize| if a / 4 == b / 4 { 60.0 } else { 70.0 };
    let mut mat = matrix_from(&cpus, lat);
    let decl = Declared::from_machine(&m, &cpus);
    assert_eq!(
        infer(&mat, &decl).levels.len(),
        2,
        "quiet pairs: two levels"
    );
    for i in 0..16 {
        for j in i + 1..16 {
            mat.set_noise_sym(i, j, 0.10);
        }
    }
    let inf = infer(&mat, &decl);
    assert_eq!(inf.levels.len(), 1, "{:#?}", inf.levels);
    assert!(
        inf.notes
            .iter()
            .any(|n| n.contains("not separated beyond the noise") && n.contains("own noise")),
        "{:?}",
        inf.notes
    );
}

#[test]
fn no_smt_label_without_smt_and_labels_are_balanced() {
    // No SMT, one 16-CPU L3; the hardware has 4-CPU groups (30 ns) the
    // kernel does not declare, 70 ns across them.
    let m = cloud16();
    let cpus: Vec<usize> = (0..16).collect();
    let lat = |a: usize, b: usize| if a / 4 == b / 4 { 30.0 } else { 70.0 };
    let inf = infer(&matrix_from(&cpus, lat), &Declared::from_machine(&m, &cpus));
    assert_eq!(inf.levels.len(), 2, "{:#?}", inf.levels);
    assert_eq!(inf.levels[0].label, "hidden level finer than shared L3");
    for l in &inf.levels {
        assert!(!l.label.contains("SMT"), "{}", l.label);
        assert!(balanced(&l.label), "{}", l.label);
    }
    for f in &inf.findings {
        assert!(!f.contains("SMT") && balanced(f), "{f}");
    }
    // With SMT, the finest group is still called SMT siblings.
    let (sm, _) = smt_machine(4, 4);
    let lat = |a: usize, b: usize| if a % 8 == b % 8 { 12.0 } else { 40.0 };
    let inf = infer(
        &matrix_from(&cpus, lat),
        &Declared::from_machine(&sm, &cpus),
    );
    assert!(
        inf.levels[0].label.starts_with("SMT siblings"),
        "{:?}",
        inf.levels[0]
    );
    assert!(inf.levels.iter().all(|l| balanced(&l.label)));
}

#[test]
fn verdict_label_of_an_older_record_is_balanced_and_says_no_smt() {
    // A record stored before issue 24, from a machine without SMT: the
    // label that read "not declared: between 'SMT siblings (same core) 48.44 ns".
    let mut rec = cpuscope::results::schema::ResultRecord::of(c2c::MATRIX, "ns", false)
        .with_param("method", "cas")
        .with_samples(vec![70.0, 71.0]);
    rec.data = Some(serde_json::json!({
        "smt_siblings": [],
        "inference": {"levels": [
            {"level": 1, "latency_ns": 48.44, "label": "not declared: between 'SMT siblings (same core) = shared L2' and 'shared L3 = same die = same NUMA node = same package'"},
            {"level": 2, "latency_ns": 92.08, "label": "shared L3 = same die = same NUMA node = same package"}
        ]}
    }));
    let one_way = cpuscope::results::schema::ResultRecord::of(c2c::ONE_WAY_LATENCY, "ns", false)
        .with_param("method", "cas")
        .with_param("relation", "shared_l3")
        .with_samples(vec![70.0]);
    let mut r = cpuscope::results::schema::Run::new(
        "old",
        "quick",
        serde_json::json!({}),
        Default::default(),
        serde_json::json!({}),
        Vec::new(),
    );
    r.results = vec![rec, one_way];
    let text =
        cpuscope::report::verdict::render(&r, None, &cpuscope::report::verdict::Style::plain(160));
    let line = text.lines().find(|l| l.starts_with("Core↔core")).unwrap();
    assert!(
        line.contains("hidden level finer than shared L3 48.44 ns · shared L3 92.08 ns"),
        "{line}"
    );
    assert!(!line.contains("SMT") && balanced(line), "{line}");
}

#[test]
fn disturbed_verdict_when_most_pairs_are_preempted() {
    let f = noisy_fixture();
    // Every pair that saw a switch now lost more than 1% of its samples:
    // 98 of 120 marked, as on the guest of issue 24.
    let run = noisy_run(&f, 5, true);
    let marked = run.pairs.iter().filter(|p| p.is_preempted()).count();
    assert_eq!(marked, 98);
    let (recs, line) = noisy_records(&run);
    assert!(
        line.contains(
            "disturbed: 98 of 120 pairs preempted, steal 6.1% of CPU time (3.120 s) during c2c"
        ),
        "{line}"
    );
    assert!(line.contains("not a clean figure"), "{line}");
    assert!(!line.contains("group"), "no groups when disturbed: {line}");
    // Too few clean pairs: no groups, and why.
    let inf = inference_of(&recs);
    assert!(inf.levels.is_empty());
    let why = inf.not_inferred.as_deref().unwrap();
    assert!(why.contains("only 22 of 120 pairs"), "{why}");
    let mat = recs.iter().find(|r| r.is(c2c::MATRIX)).unwrap();
    let d = &mat.data.as_ref().unwrap()["disturbance"];
    assert_eq!(d["disturbed"], true);
    assert_eq!(d["pairs_preempted"], 98);
    assert!((d["steal"]["share"].as_f64().unwrap() - 0.061).abs() < 1e-9);
    assert!(
        mat.notes.iter().any(|n| n.starts_with("disturbed: ")),
        "{:?}",
        mat.notes
    );
    // The renderers say so too.
    let text = cpuscope::experiments::coherence::c2c::text::render_matrices(&recs);
    assert!(
        text.contains("DISTURBED: 98 of 120 pairs marked preempted"),
        "{text}"
    );
    assert!(
        text.contains("Latency groups: not inferred: only 22 of 120"),
        "{text}"
    );
}

#[test]
fn material_steal_alone_makes_the_figure_disturbed() {
    let f = noisy_fixture();
    // 39 of 120 pairs marked (not most), but 6.1% steal time.
    let (_, line) = noisy_records(&noisy_run(&f, 1, true));
    assert!(
        line.contains("disturbed: 39 of 120 pairs preempted, steal 6.1% of CPU time"),
        "{line}"
    );
}

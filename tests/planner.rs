//! The placement planner on the seeds' machines (Hygon C86 5280: 2 sockets,
//! 4 nodes, SMT; Kunpeng 920-4826: 2 sockets, 4 nodes; Phytium FT2500:
//! 2 sockets, 16 nodes), built by hand from the lscpu / numactl -H output
//! quoted in seed 000, plus a 2-CPU VM and a machine with no topology.
// Structs are built with `..Default::default()` so that fields added by
// other rooms do not break these tests; on today's structs that update can
// be needless.
#![allow(clippy::needless_update)]

#[path = "common/hwloc_trees.rs"]
mod hwloc_trees;

use cpuscope::base::CpuSet;
use cpuscope::experiments::compute::placement_plan::{plan, Plan};
use cpuscope::machine::cache::CacheInstance;
use cpuscope::machine::numa::NumaNode;
use cpuscope::machine::topology::{Core, Package};
use cpuscope::machine::MachineInfo;
use cpuscope::placement::MemPolicy;

fn set(s: &str) -> CpuSet {
    CpuSet::parse(s).expect("valid list")
}

/// A machine from per-node CPU lists, node->package, core thread lists,
/// L3 instances and the distance matrix.
fn machine(
    nodes: &[&str],
    node_pkg: &[usize],
    cores: Vec<CpuSet>,
    l3: &[&str],
    dist: &[&[u32]],
) -> MachineInfo {
    let mut pkgs: Vec<Package> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let p = node_pkg[i];
        match pkgs.iter_mut().find(|x| x.id == p) {
            Some(x) => x.cpus = x.cpus.union(&set(n)),
            None => pkgs.push(Package {
                id: p,
                cpus: set(n),
                ..Default::default()
            }),
        }
    }
    let core_list = cores
        .into_iter()
        .enumerate()
        .map(|(i, cpus)| {
            let first = cpus.first().unwrap_or(0);
            let package = pkgs
                .iter()
                .find(|p| p.cpus.contains(first))
                .map(|p| p.id)
                .unwrap_or(0);
            Core {
                package,
                core_id: i,
                cpus,
                ..Default::default()
            }
        })
        .collect();
    let numa_nodes = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| NumaNode {
            id: i,
            cpus: set(n),
            memory_bytes: Some(1 << 30),
            distances: dist.get(i).map(|d| d.to_vec()).unwrap_or_default(),
            usable: true,
            ..Default::default()
        })
        .collect();
    let caches = l3
        .iter()
        .map(|s| CacheInstance {
            level: 3,
            kind: "Unified".into(),
            shared_cpu_list: set(s),
            ..Default::default()
        })
        .collect();
    MachineInfo {
        packages: pkgs,
        cores: core_list,
        numa_nodes,
        caches,
        ..Default::default()
    }
}

fn all_cpus(m: &MachineInfo) -> CpuSet {
    m.numa_nodes
        .iter()
        .fold(CpuSet::new(), |a, n| a.union(&n.cpus))
}

/// Hygon C86 5280: 64 CPUs, core c has threads c and c+32; node n holds
/// cores 8n..8n+7; nodes 0,1 on package 0, nodes 2,3 on package 1; one L3
/// per CCX of 4 cores (8 MB, Zen 1).
fn hygon() -> MachineInfo {
    let cores = (0..32).map(|c| CpuSet::from_ids([c, c + 32])).collect();
    let l3: Vec<String> = (0..8)
        .map(|x| format!("{}-{},{}-{}", 4 * x, 4 * x + 3, 32 + 4 * x, 32 + 4 * x + 3))
        .collect();
    let l3r: Vec<&str> = l3.iter().map(|s| s.as_str()).collect();
    machine(
        &["0-7,32-39", "8-15,40-47", "16-23,48-55", "24-31,56-63"],
        &[0, 0, 1, 1],
        cores,
        &l3r,
        &[
            &[10, 16, 28, 22],
            &[16, 10, 22, 28],
            &[28, 22, 10, 16],
            &[22, 28, 16, 10],
        ],
    )
}

/// Kunpeng 920-4826: 96 cores, no SMT, 4 nodes of 24, nodes 0,1 on socket 0;
/// one L3 per node (per SCCL).
fn kunpeng() -> MachineInfo {
    let cores = (0..96).map(|c| CpuSet::from_ids([c])).collect();
    machine(
        &["0-23", "24-47", "48-71", "72-95"],
        &[0, 0, 1, 1],
        cores,
        &["0-23", "24-47", "48-71", "72-95"],
        &[
            &[10, 12, 20, 22],
            &[12, 10, 22, 24],
            &[20, 22, 10, 12],
            &[22, 24, 12, 10],
        ],
    )
}

/// Phytium FT2500: 128 cores, no SMT, 16 nodes of 8, nodes 0-7 on socket 0;
/// no L3 information given to the planner.
fn ft2500() -> MachineInfo {
    let cores = (0..128).map(|c| CpuSet::from_ids([c])).collect();
    let nodes: Vec<String> = (0..16)
        .map(|n| format!("{}-{}", 8 * n, 8 * n + 7))
        .collect();
    let nr: Vec<&str> = nodes.iter().map(|s| s.as_str()).collect();
    let pkg: Vec<usize> = (0..16).map(|n| n / 8).collect();
    let row0: [[u32; 8]; 8] = [
        [10, 20, 40, 30, 20, 30, 50, 40],
        [20, 10, 30, 40, 50, 20, 40, 50],
        [40, 30, 10, 20, 40, 50, 20, 30],
        [30, 40, 20, 10, 30, 20, 40, 50],
        [20, 50, 40, 30, 10, 50, 30, 20],
        [30, 20, 50, 20, 50, 10, 50, 40],
        [50, 40, 20, 40, 30, 50, 10, 30],
        [40, 50, 30, 50, 20, 40, 30, 10],
    ];
    let rows: Vec<Vec<u32>> = (0..16)
        .map(|i| {
            (0..16)
                .map(|j| {
                    if i / 8 == j / 8 {
                        row0[i % 8][j % 8]
                    } else {
                        100
                    }
                })
                .collect()
        })
        .collect();
    let rr: Vec<&[u32]> = rows.iter().map(|r| r.as_slice()).collect();
    machine(&nr, &pkg, cores, &[], &rr)
}

fn cpus_of(p: &Plan, cmp: &str, name: &str) -> Option<CpuSet> {
    p.comparison(cmp)
        .and_then(|c| c.set(name))
        .and_then(|s| s.cpus.clone())
}

fn reason_of(p: &Plan, cmp: &str, name: &str) -> String {
    p.comparison(cmp)
        .and_then(|c| c.set(name))
        .and_then(|s| s.not_applicable.clone())
        .unwrap_or_default()
}

fn mem<'a>(
    p: &'a Plan,
    name: &str,
) -> &'a cpuscope::experiments::compute::placement_plan::MemoryPlacement {
    p.memory
        .iter()
        .find(|m| m.name == name)
        .expect("memory placement listed")
}

#[test]
fn hygon_pairs() {
    let m = hygon();
    let p = plan(&m, &all_cpus(&m), 4);
    assert_eq!(cpus_of(&p, "smt", "smt_siblings"), Some(set("0,32")));
    assert_eq!(cpus_of(&p, "smt", "two_cores"), Some(set("0,1")));
    assert_eq!(cpus_of(&p, "l3", "same_l3"), Some(set("0,1")));
    // Different CCX, same node: cores 0 and 4.
    assert_eq!(cpus_of(&p, "l3", "different_l3"), Some(set("0,4")));
    assert_eq!(cpus_of(&p, "numa", "same_node"), Some(set("0,1")));
    assert_eq!(cpus_of(&p, "numa", "cross_node"), Some(set("0,8")));
    assert_eq!(cpus_of(&p, "numa", "cross_socket"), Some(set("0,16")));
}

#[test]
fn hygon_spread_and_memory() {
    let m = hygon();
    let p = plan(&m, &all_cpus(&m), 4);
    assert_eq!(p.spread_k, 4);
    assert_eq!(cpus_of(&p, "spread", "one_node"), Some(set("0-3")));
    assert_eq!(
        cpus_of(&p, "spread", "two_nodes_same_socket"),
        Some(set("0,1,8,9"))
    );
    assert_eq!(
        cpus_of(&p, "spread", "two_nodes_cross_socket"),
        Some(set("0,1,16,17"))
    );
    assert_eq!(cpus_of(&p, "spread", "all_nodes"), Some(set("0,8,16,24")));
    assert_eq!(cpus_of(&p, "spread", "smt_packed"), Some(set("0,1,32,33")));
    assert_eq!(mem(&p, "local").policy, Some(MemPolicy::Bind(set("0"))));
    // From node 0: nearest node 1 (16), farthest node 2 (28).
    assert_eq!(
        mem(&p, "remote_near").policy,
        Some(MemPolicy::Bind(set("1")))
    );
    assert_eq!(mem(&p, "remote_near").distance, Some(16));
    assert_eq!(
        mem(&p, "remote_far").policy,
        Some(MemPolicy::Bind(set("2")))
    );
    assert_eq!(mem(&p, "remote_far").distance, Some(28));
    assert_eq!(
        mem(&p, "interleave").policy,
        Some(MemPolicy::Interleave(set("0-3")))
    );
}

#[test]
fn kunpeng_sets() {
    let m = kunpeng();
    let p = plan(&m, &all_cpus(&m), 4);
    assert_eq!(cpus_of(&p, "smt", "smt_siblings"), None);
    assert!(reason_of(&p, "smt", "smt_siblings").contains("no SMT"));
    assert_eq!(cpus_of(&p, "smt", "two_cores"), Some(set("0,1")));
    assert_eq!(cpus_of(&p, "l3", "same_l3"), Some(set("0,1")));
    // L3 per node: different L3 means a different node of the same socket.
    assert_eq!(cpus_of(&p, "l3", "different_l3"), Some(set("0,24")));
    assert_eq!(cpus_of(&p, "numa", "cross_node"), Some(set("0,24")));
    assert_eq!(cpus_of(&p, "numa", "cross_socket"), Some(set("0,48")));
    // The seed's table (72,73,74,75 / 48,49,72,73 / 24,25,72,73 / 0,24,48,72),
    // with the lowest ids that ask the same questions.
    assert_eq!(cpus_of(&p, "spread", "one_node"), Some(set("0-3")));
    assert_eq!(
        cpus_of(&p, "spread", "two_nodes_same_socket"),
        Some(set("0,1,24,25"))
    );
    assert_eq!(
        cpus_of(&p, "spread", "two_nodes_cross_socket"),
        Some(set("0,1,48,49"))
    );
    assert_eq!(cpus_of(&p, "spread", "all_nodes"), Some(set("0,24,48,72")));
    assert!(reason_of(&p, "spread", "smt_packed").contains("no SMT"));
    assert_eq!(
        mem(&p, "remote_near").policy,
        Some(MemPolicy::Bind(set("1")))
    );
    assert_eq!(
        mem(&p, "remote_far").policy,
        Some(MemPolicy::Bind(set("3")))
    );
    assert_eq!(mem(&p, "remote_far").distance, Some(22));
}

#[test]
fn kunpeng_restricted_to_the_seeds_node_3() {
    // `--cpus 72-95`: everything inside one node.
    let m = kunpeng();
    let p = plan(&m, &set("72-95"), 4);
    assert_eq!(cpus_of(&p, "spread", "one_node"), Some(set("72-75")));
    assert!(reason_of(&p, "numa", "cross_node").contains("one NUMA node"));
    assert!(reason_of(&p, "spread", "all_nodes").contains("one NUMA node"));
    assert!(reason_of(&p, "l3", "different_l3").contains("no two usable cores"));
    // Memory: node 3 local, node 2 nearest (12), node 1 farthest (24).
    assert_eq!(mem(&p, "local").cpu, Some(72));
    assert_eq!(mem(&p, "local").policy, Some(MemPolicy::Bind(set("3"))));
    assert_eq!(
        mem(&p, "remote_near").policy,
        Some(MemPolicy::Bind(set("2")))
    );
    assert_eq!(
        mem(&p, "remote_far").policy,
        Some(MemPolicy::Bind(set("1")))
    );
}

#[test]
fn ft2500_sixteen_nodes() {
    let m = ft2500();
    let p = plan(&m, &all_cpus(&m), 4);
    assert!(reason_of(&p, "l3", "same_l3").contains("no L3 cache information"));
    assert!(reason_of(&p, "smt", "smt_siblings").contains("no SMT"));
    assert_eq!(cpus_of(&p, "numa", "same_node"), Some(set("0,1")));
    assert_eq!(cpus_of(&p, "numa", "cross_node"), Some(set("0,8")));
    assert_eq!(cpus_of(&p, "numa", "cross_socket"), Some(set("0,64")));
    assert_eq!(
        cpus_of(&p, "spread", "two_nodes_cross_socket"),
        Some(set("0,1,64,65"))
    );
    // Four of sixteen nodes, one core each.
    assert_eq!(cpus_of(&p, "spread", "all_nodes"), Some(set("0,8,16,24")));
    // Node 0: nearest others at 20 (node 1 is the lowest), farthest 100 (node 8).
    assert_eq!(
        mem(&p, "remote_near").policy,
        Some(MemPolicy::Bind(set("1")))
    );
    assert_eq!(
        mem(&p, "remote_far").policy,
        Some(MemPolicy::Bind(set("8")))
    );
    assert_eq!(mem(&p, "remote_far").distance, Some(100));
    assert_eq!(
        mem(&p, "interleave").policy,
        Some(MemPolicy::Interleave(set("0-15")))
    );
}

#[test]
fn small_vm_says_what_does_not_apply() {
    // This machine's shape: 2 cores, no SMT, one node, one L3.
    let m = machine(&["0-1"], &[0], vec![set("0"), set("1")], &["0-1"], &[&[10]]);
    let p = plan(&m, &set("0-1"), 4);
    assert_eq!(p.spread_k, 2);
    assert!(p.notes.iter().any(|n| n.contains("only 2 usable cores")));
    assert_eq!(cpus_of(&p, "smt", "two_cores"), Some(set("0,1")));
    assert_eq!(cpus_of(&p, "l3", "same_l3"), Some(set("0,1")));
    assert!(reason_of(&p, "l3", "different_l3").contains("one L3 instance"));
    assert!(reason_of(&p, "numa", "cross_node").contains("one NUMA node"));
    assert!(reason_of(&p, "numa", "cross_socket").contains("one package"));
    assert_eq!(cpus_of(&p, "spread", "one_node"), Some(set("0,1")));
    assert!(mem(&p, "remote_near")
        .not_applicable
        .as_deref()
        .unwrap_or("")
        .contains("one NUMA node"));
    assert_eq!(mem(&p, "local").policy, Some(MemPolicy::Bind(set("0"))));
}

#[test]
fn smt_siblings_outside_the_cpu_list_are_reported() {
    let m = hygon();
    // Only the first thread of each core is allowed.
    let p = plan(&m, &set("0-31"), 4);
    assert!(reason_of(&p, "smt", "smt_siblings").contains("no core has two usable CPUs"));
    assert_eq!(cpus_of(&p, "smt", "two_cores"), Some(set("0,1")));
}

#[test]
fn no_topology_at_all() {
    let m = MachineInfo::default();
    let p = plan(&m, &set("0-3"), 4);
    assert!(p.notes.iter().any(|n| n.contains("cores unknown")));
    assert!(p.notes.iter().any(|n| n.contains("NUMA nodes unknown")));
    assert_eq!(cpus_of(&p, "smt", "two_cores"), Some(set("0,1")));
    assert!(reason_of(&p, "smt", "smt_siblings").contains("no SMT"));
    assert!(reason_of(&p, "numa", "cross_socket").contains("packages unknown"));
    assert!(mem(&p, "local")
        .not_applicable
        .as_deref()
        .unwrap_or("")
        .contains("NUMA nodes unknown"));
    // Every set is either planned or says why not.
    for c in &p.comparisons {
        for s in &c.sets {
            assert!(s.cpus.is_some() != s.not_applicable.is_some(), "{s:?}");
        }
    }
}

#[test]
fn every_planned_set_uses_usable_cpus_and_distinct_cores() {
    for m in [hygon(), kunpeng(), ft2500()] {
        let usable = all_cpus(&m);
        let p = plan(&m, &usable, 4);
        for c in &p.comparisons {
            for s in &c.sets {
                if let Some(cpus) = &s.cpus {
                    assert!(cpus.is_subset(&usable));
                    let cores: std::collections::BTreeSet<usize> = cpus
                        .iter()
                        .map(|x| m.cores.iter().position(|k| k.cpus.contains(x)).unwrap())
                        .collect();
                    let want = if s.name == "smt_siblings" || s.name == "smt_packed" {
                        cpus.len() / 2
                    } else {
                        cpus.len()
                    };
                    assert_eq!(cores.len(), want, "{}: {}", s.name, cpus);
                }
            }
        }
    }
}

/// The recorded hwloc machines (tarballs under tests/fixtures/hwloc-linux,
/// unpacked on demand), read by the topology reader. `None` only after a
/// visible `SKIP:` line (tar/bzip2 missing, outside CI).
fn recorded(name: &str) -> Option<MachineInfo> {
    let root = hwloc_trees::tree(name)?;
    let sys = cpuscope::base::Sysroot::new(&root).expect("recorded sysroot");
    Some(cpuscope::machine::discover(&sys).expect("discover recorded tree"))
}

#[test]
fn recorded_eight_node_opteron() {
    let Some(m) = recorded("16amd64-8n2c") else {
        return;
    };
    let p = plan(&m, &all_cpus(&m), 4);
    assert_eq!(cpus_of(&p, "numa", "same_node"), Some(set("0,1")));
    assert_eq!(cpus_of(&p, "numa", "cross_socket"), Some(set("0,2")));
    assert_eq!(cpus_of(&p, "spread", "all_nodes"), Some(set("0,2,4,6")));
    assert!(reason_of(&p, "spread", "one_node").contains("no NUMA node holds 4"));
    assert_eq!(
        mem(&p, "remote_near").policy,
        Some(MemPolicy::Bind(set("1")))
    );
    assert_eq!(
        mem(&p, "interleave").policy,
        Some(MemPolicy::Interleave(set("0-7")))
    );
}

#[test]
fn recorded_four_socket_smt_xeon() {
    let Some(m) = recorded("16em64t-4s2c2t") else {
        return;
    };
    let p = plan(&m, &all_cpus_or_online(&m), 4);
    assert_eq!(cpus_of(&p, "smt", "smt_siblings"), Some(set("0,8")));
    assert_eq!(cpus_of(&p, "numa", "cross_socket"), Some(set("0,1")));
    assert_eq!(cpus_of(&p, "spread", "smt_packed"), Some(set("0,4,8,12")));
}

fn all_cpus_or_online(m: &MachineInfo) -> CpuSet {
    let s = all_cpus(m);
    if s.is_empty() {
        m.cpus.online.clone()
    } else {
        s
    }
}

/// The lab's memless topology: node 0 (CPUs 0-3, memory), node 1 (CPUs 4-7,
/// no memory), node 2 (memory only). Memory is never bound to node 1.
#[test]
fn memoryless_node_is_never_a_memory_target() {
    let cores = (0..8).map(|c| CpuSet::from_ids([c])).collect();
    let mut m = machine(
        &["0-3", "4-7", ""],
        &[0, 1, 1],
        cores,
        &["0-3", "4-7"],
        &[&[10, 21, 17], &[21, 10, 28], &[17, 28, 10]],
    );
    m.numa_nodes[1].memory_bytes = Some(0);
    let p = plan(&m, &all_cpus(&m), 4);
    assert_eq!(mem(&p, "local").policy, Some(MemPolicy::Bind(set("0"))));
    assert_eq!(
        mem(&p, "remote_near").policy,
        Some(MemPolicy::Bind(set("2")))
    );
    assert!(mem(&p, "remote_far").not_applicable.is_some());
    assert_eq!(
        mem(&p, "interleave").policy,
        Some(MemPolicy::Interleave(set("0,2")))
    );
}

/// The lab's offline-cgroup topology: CPUs 1-4 allowed, memory node 1 only.
/// Local memory is CPU 4's node; remote is a CPU of node 0 reading node 1;
/// nothing to interleave over.
#[test]
fn cpuset_with_one_memory_node() {
    let cores = (0..4)
        .map(|c| CpuSet::from_ids([2 * c, 2 * c + 1]))
        .collect();
    let mut m = machine(
        &["0-3", "4-7"],
        &[0, 1],
        cores,
        &["0-3", "4-7"],
        &[&[10, 21], &[21, 10]],
    );
    m.numa_nodes[0].usable = false;
    let p = plan(&m, &set("1-4"), 4);
    let local = mem(&p, "local");
    assert_eq!(local.cpu, Some(4));
    assert_eq!(local.policy, Some(MemPolicy::Bind(set("1"))));
    let remote = mem(&p, "remote_near");
    assert_eq!(remote.cpu, Some(1));
    assert_eq!(remote.policy, Some(MemPolicy::Bind(set("1"))));
    assert!(mem(&p, "interleave")
        .not_applicable
        .as_deref()
        .unwrap_or("")
        .contains("one usable memory node"));
}

/// The lab's 2s2c2t topology: one two-core node per socket. The spread sets
/// use 2 cores (what a node holds) so that one_node is measured too.
#[test]
fn two_core_nodes_fit_the_spread_sets() {
    let cores = (0..4)
        .map(|c| CpuSet::from_ids([2 * c, 2 * c + 1]))
        .collect();
    let m = machine(
        &["0-3", "4-7"],
        &[0, 1],
        cores,
        &["0-3", "4-7"],
        &[&[10, 21], &[21, 10]],
    );
    let p = plan(&m, &all_cpus(&m), 4);
    assert_eq!(p.spread_k, 2);
    assert_eq!(cpus_of(&p, "spread", "one_node"), Some(set("0,2")));
    assert_eq!(
        cpus_of(&p, "spread", "two_nodes_cross_socket"),
        Some(set("0,4"))
    );
    assert!(p
        .notes
        .iter()
        .any(|n| n.contains("spread sets use 2 cores")));
}

//! The placement planner: from what the machine is ([`MachineInfo`]) and the
//! CPUs a run may use, pick the CPU sets (and memory policies) that answer
//! the placement questions of the seeds:
//!
//! - two SMT siblings vs two cores;
//! - two cores sharing an L3 vs two cores on different L3 instances;
//! - two cores in one NUMA node vs in two nodes of one package vs in two
//!   packages (sockets);
//! - `k` cores (default 4) in one node / two nodes of one socket / two nodes
//!   on two sockets / one per node / packed on SMT siblings (seed 000's
//!   "72,73,74,75 → 14460 … 0,24,48,72 → 10800" table);
//! - one thread with its memory local / on the nearest remote node / on the
//!   farthest node / interleaved over all nodes.
//!
//! Pure: reads only the `MachineInfo` value, so it is tested on fixture
//! topologies. A set that cannot exist on the machine is returned with the
//! reason (`not_applicable`), never silently dropped. Choices are
//! deterministic: the lowest CPU ids that satisfy the question.

use crate::base::CpuSet;
use crate::machine::MachineInfo;
use crate::placement::MemPolicy;
use serde::Serialize;

mod sets;
pub use sets::*;

mod topology;
use topology::*;

/// Plan every comparison for the CPUs in `usable` (normally the run's CPUs);
/// spread sets use `k` cores (capped to the usable cores; at least 2).
pub fn plan(m: &MachineInfo, usable: &CpuSet, k: usize) -> Plan {
    let mut notes = Vec::new();
    let v = View::new(m, usable, &mut notes);
    let cores = v.primaries().len();
    let mut k = k.max(2);
    if cores < k {
        if cores >= 2 {
            notes.push(format!(
                "only {cores} usable cores: spread sets use {cores} cores instead of {k}"
            ));
        }
        k = cores.max(2);
    }
    if k % 2 == 1 {
        notes.push(format!(
            "spread sets over two nodes need an even count: using {} of {k} cores there",
            k - 1
        ));
    }
    // The spread comparison sets k cores in one node against the same k over
    // two nodes, two sockets, all nodes: where no node holds k cores (small
    // nodes, e.g. 2 cores per node), use what the largest node holds so that
    // every set the machine has is measured (e.g. two sockets of one
    // two-core node each).
    let nodes = v.cpu_nodes();
    let biggest = nodes
        .iter()
        .map(|n| v.cores_in_node(*n).len())
        .max()
        .unwrap_or(0);
    // Only where all_nodes still spans every node with the smaller count.
    if nodes.len() > 1 && biggest >= 2 && biggest < k && nodes.len() <= biggest - biggest % 2 {
        let fit = biggest - biggest % 2;
        notes.push(format!(
            "no NUMA node holds {k} usable cores: spread sets use {fit} cores (the largest node holds {biggest})"
        ));
        k = fit;
    }
    let comparisons = vec![smt(m, &v), l3(&v), numa(&v), spread(&v, k)];
    let memory = memory(&v);
    Plan {
        usable: usable.clone(),
        spread_k: k,
        comparisons,
        memory,
        notes,
    }
}

fn smt(m: &MachineInfo, v: &View) -> Comparison {
    let sib = v.core_cpus.values().find(|c| c.len() >= 2);
    let sib_set = match sib {
        Some(c) => PlacementSet::ok(
            "smt_siblings",
            format!(
                "two hardware threads of one core (CPUs {} and {})",
                c[0], c[1]
            ),
            CpuSet::from_ids([c[0], c[1]]),
        ),
        None => {
            let exists = m.cores.iter().any(|c| c.cpus.len() >= 2);
            PlacementSet::na(
                "smt_siblings",
                "two hardware threads of one core",
                if exists {
                    "SMT siblings exist but no core has two usable CPUs (--cpus or the cpuset)"
                } else {
                    "no SMT: each core runs one hardware thread"
                },
            )
        }
    };
    // Two cores, as close as possible otherwise (same L3, node, package),
    // starting from the sibling pair's first CPU when there is one.
    let near = |a: &Loc, b: &Loc| {
        a.core != b.core && a.l3 == b.l3 && a.node == b.node && a.package == b.package
    };
    let first = sib.map(|c| c[0]);
    let pair = v
        .pair(|a, b| near(a, b) && first.is_none_or(|f| a.cpu == f))
        .or_else(|| v.pair(near))
        .or_else(|| v.pair(|a, b| a.core != b.core && a.node == b.node))
        .or_else(|| v.pair(|a, b| a.core != b.core));
    let cores_set = match pair {
        Some((a, b)) => PlacementSet::ok(
            "two_cores",
            format!(
                "two cores, one thread each (CPUs {} and {}{})",
                a.cpu,
                b.cpu,
                if a.l3.is_some() && a.l3 == b.l3 {
                    ", same L3"
                } else {
                    ""
                }
            ),
            CpuSet::from_ids([a.cpu, b.cpu]),
        ),
        None => PlacementSet::na(
            "two_cores",
            "two cores, one thread each",
            "fewer than two usable cores",
        ),
    };
    Comparison {
        name: "smt".into(),
        question: "two threads on one core's SMT siblings vs on two cores".into(),
        sets: vec![sib_set, cores_set],
    }
}

fn l3(v: &View) -> Comparison {
    let question = "two cores sharing an L3 vs on two different L3 instances".to_string();
    if !v.l3_known {
        let r = "no L3 cache information (sysfs has no level-3 cache for these CPUs)";
        return Comparison {
            name: "l3".into(),
            question,
            sets: vec![
                PlacementSet::na("same_l3", "two cores sharing one L3", r),
                PlacementSet::na("different_l3", "two cores on different L3 instances", r),
            ],
        };
    }
    let same = v
        .pair(|a, b| {
            a.core != b.core
                && a.l3.is_some()
                && a.l3 == b.l3
                && a.node == b.node
                && a.package == b.package
        })
        .or_else(|| v.pair(|a, b| a.core != b.core && a.l3.is_some() && a.l3 == b.l3));
    let same_set = match same {
        Some((a, b)) => PlacementSet::ok(
            "same_l3",
            format!("two cores sharing one L3 (CPUs {} and {})", a.cpu, b.cpu),
            CpuSet::from_ids([a.cpu, b.cpu]),
        ),
        None => PlacementSet::na(
            "same_l3",
            "two cores sharing one L3",
            "no L3 instance holds two usable cores",
        ),
    };
    let diff =
        |a: &Loc, b: &Loc| a.core != b.core && a.l3.is_some() && b.l3.is_some() && a.l3 != b.l3;
    let found = [
        (
            v.pair(|a, b| diff(a, b) && a.node == b.node && a.package == b.package),
            "same node",
        ),
        (
            v.pair(|a, b| diff(a, b) && a.package == b.package),
            "same package, different nodes",
        ),
        (v.pair(diff), "different packages"),
    ]
    .into_iter()
    .find(|(p, _)| p.is_some());
    let diff_set = match found {
        Some((Some((a, b)), how)) => PlacementSet::ok(
            "different_l3",
            format!(
                "two cores on different L3 instances, {how} (CPUs {} and {})",
                a.cpu, b.cpu
            ),
            CpuSet::from_ids([a.cpu, b.cpu]),
        ),
        _ => PlacementSet::na(
            "different_l3",
            "two cores on different L3 instances",
            if v.l3_instances <= 1 {
                "one L3 instance is shared by all usable CPUs".to_string()
            } else {
                "no two usable cores sit on different L3 instances".to_string()
            },
        ),
    };
    Comparison {
        name: "l3".into(),
        question,
        sets: vec![same_set, diff_set],
    }
}

fn numa(v: &View) -> Comparison {
    let same = v.pair(|a, b| a.core != b.core && a.node == b.node && a.package == b.package);
    let same_set = match same {
        Some((a, b)) => PlacementSet::ok(
            "same_node",
            format!(
                "two cores in {} (CPUs {} and {})",
                node_text(a.node),
                a.cpu,
                b.cpu
            ),
            CpuSet::from_ids([a.cpu, b.cpu]),
        ),
        None => PlacementSet::na(
            "same_node",
            "two cores in one NUMA node",
            "no NUMA node holds two usable cores",
        ),
    };
    let nodes = v.cpu_nodes();
    let cross = v.pair(|a, b| a.node != b.node && a.package == b.package);
    let cross_set = match cross {
        Some((a, b)) => PlacementSet::ok(
            "cross_node",
            format!(
                "two cores in two nodes of package {} ({} and {}: CPUs {} and {})",
                a.package,
                node_text(a.node),
                node_text(b.node),
                a.cpu,
                b.cpu
            ),
            CpuSet::from_ids([a.cpu, b.cpu]),
        ),
        None => PlacementSet::na(
            "cross_node",
            "two cores in two NUMA nodes of one package",
            if nodes.len() <= 1 {
                "one NUMA node (among the usable CPUs)"
            } else {
                "no package holds two NUMA nodes"
            },
        ),
    };
    let socket = v.pair(|a, b| a.package != b.package);
    let socket_set = match socket {
        Some((a, b)) => PlacementSet::ok(
            "cross_socket",
            format!(
                "two cores in two packages ({} and {}: CPUs {} and {})",
                a.package, b.package, a.cpu, b.cpu
            ),
            CpuSet::from_ids([a.cpu, b.cpu]),
        ),
        None => PlacementSet::na(
            "cross_socket",
            "two cores in two packages (sockets)",
            if v.packages_known {
                "one package (socket) among the usable CPUs"
            } else {
                "packages unknown: cannot tell sockets apart"
            },
        ),
    };
    Comparison {
        name: "numa".into(),
        question: "two cores in one NUMA node vs two nodes of one socket vs two sockets".into(),
        sets: vec![same_set, cross_set, socket_set],
    }
}

fn spread(v: &View, k: usize) -> Comparison {
    let nodes = v.cpu_nodes();
    let mut sets = vec![one_node_set(v, &nodes, k)];
    // k/2 + k/2 in two nodes, of one package / of two packages.
    for (name, same_pkg, label) in [
        ("two_nodes_same_socket", true, "one socket"),
        ("two_nodes_cross_socket", false, "two sockets"),
    ] {
        sets.push(two_nodes_set(v, &nodes, k / 2, (name, label), same_pkg));
    }
    sets.push(all_nodes_set(v, &nodes, k));
    sets.push(smt_packed_set(v, k));
    Comparison {
        name: "spread".into(),
        question: format!("{k} threads: packed in one node vs spread over nodes and sockets"),
        sets,
    }
}

/// `one_node`: k cores in one node.
fn one_node_set(v: &View, nodes: &[Option<usize>], k: usize) -> PlacementSet {
    let one = nodes
        .iter()
        .map(|n| v.cores_in_node(*n))
        .find(|c| c.len() >= k);
    match one {
        Some(c) => PlacementSet::ok(
            "one_node",
            format!("{k} cores in {}", node_text(c[0].node)),
            set_of(&c[..k]),
        ),
        None => PlacementSet::na(
            "one_node",
            &format!("{k} cores in one NUMA node"),
            format!("no NUMA node holds {k} usable cores"),
        ),
    }
}

/// The first two nodes, of one package (`same_pkg`) or of two, with `half`
/// usable cores each, and those cores.
fn two_nodes(
    v: &View,
    nodes: &[Option<usize>],
    half: usize,
    same_pkg: bool,
) -> Option<(Vec<Loc>, Vec<Loc>)> {
    for (i, a) in nodes.iter().enumerate() {
        let ca = v.cores_in_node(*a);
        if ca.len() < half {
            continue;
        }
        for b in &nodes[i + 1..] {
            let cb = v.cores_in_node(*b);
            let same = v.package_of_node(*a) == v.package_of_node(*b);
            if cb.len() >= half && same == same_pkg {
                return Some((ca[..half].to_vec(), cb[..half].to_vec()));
            }
        }
    }
    None
}

/// `half` + `half` cores in two nodes of one package (`same_pkg`) or of two
/// (`name`, and `label`: which, in words).
fn two_nodes_set(
    v: &View,
    nodes: &[Option<usize>],
    half: usize,
    (name, label): (&str, &str),
    same_pkg: bool,
) -> PlacementSet {
    let what = format!("{half} + {half} cores in two NUMA nodes of {label}");
    if half == 0 {
        return PlacementSet::na(name, &what, "fewer than two usable cores");
    }
    match two_nodes(v, nodes, half, same_pkg) {
        Some((a, b)) => {
            let mut all = a.clone();
            all.extend(b.iter().copied());
            PlacementSet::ok(
                name,
                format!(
                    "{half} cores in {} + {half} in {}",
                    node_text(a[0].node),
                    node_text(b[0].node)
                ),
                set_of(&all),
            )
        }
        None => PlacementSet::na(
            name,
            &what,
            if nodes.len() <= 1 {
                "one NUMA node (among the usable CPUs)".to_string()
            } else if same_pkg {
                format!("no socket holds two NUMA nodes with {half} usable cores each")
            } else if !v.packages_known {
                "packages unknown: cannot tell sockets apart".to_string()
            } else {
                format!("no two NUMA nodes on different sockets with {half} usable cores each")
            },
        ),
    }
}

/// `all_nodes`: k cores, one core per node, round robin.
fn all_nodes_set(v: &View, nodes: &[Option<usize>], k: usize) -> PlacementSet {
    if nodes.len() <= 1 {
        return PlacementSet::na(
            "all_nodes",
            &format!("{k} cores spread one per NUMA node"),
            "one NUMA node (among the usable CPUs)",
        );
    }
    let per: Vec<Vec<Loc>> = nodes.iter().map(|n| v.cores_in_node(*n)).collect();
    let mut picked = Vec::new();
    let mut round = 0;
    while picked.len() < k {
        let before = picked.len();
        for c in &per {
            if picked.len() < k {
                if let Some(l) = c.get(round) {
                    picked.push(*l);
                }
            }
        }
        if picked.len() == before {
            break;
        }
        round += 1;
    }
    let used = nodes.len().min(k);
    if picked.len() == k {
        PlacementSet::ok(
            "all_nodes",
            format!("{k} cores spread round-robin over {used} NUMA nodes"),
            set_of(&picked),
        )
    } else {
        PlacementSet::na(
            "all_nodes",
            &format!("{k} cores spread one per NUMA node"),
            format!("fewer than {k} usable cores"),
        )
    }
}

/// `smt_packed`: k threads packed on k/2 cores' SMT siblings.
fn smt_packed_set(v: &View, k: usize) -> PlacementSet {
    let half = k / 2;
    let sib: Vec<&Vec<usize>> = v.core_cpus.values().filter(|c| c.len() >= 2).collect();
    let what = format!("{k} threads on the SMT siblings of {half} cores");
    if half == 0 {
        PlacementSet::na("smt_packed", &what, "fewer than two usable cores")
    } else if sib.len() >= half {
        let mut s = CpuSet::new();
        for c in &sib[..half] {
            s.insert(c[0]);
            s.insert(c[1]);
        }
        PlacementSet::ok("smt_packed", what, s)
    } else if sib.is_empty() {
        PlacementSet::na(
            "smt_packed",
            &what,
            "no SMT: each core runs one hardware thread",
        )
    } else {
        PlacementSet::na(
            "smt_packed",
            &what,
            format!("only {} cores have two usable hardware threads", sib.len()),
        )
    }
}

/// The memory placements of the placement study, in order.
const MEMORY_NAMES: [(&str, &str); 4] = [
    ("local", "memory on the thread's own node"),
    ("remote_near", "memory on the nearest other node"),
    ("remote_far", "memory on the farthest node"),
    ("interleave", "memory interleaved over all nodes"),
];

fn memory(v: &View) -> Vec<MemoryPlacement> {
    let names = MEMORY_NAMES;
    let all_na = |r: &str| {
        names
            .iter()
            .map(|(n, w)| MemoryPlacement::na(n, w, None, r))
            .collect()
    };
    if v.locs.is_empty() {
        return all_na("no usable CPU");
    }
    if v.locs.iter().all(|l| l.node.is_none()) {
        return all_na("NUMA nodes unknown");
    }
    // The home CPU: the first usable CPU whose node holds memory this
    // process may use (a CPU-only node, or one outside the cpuset's mems,
    // has no local memory to bind to).
    let Some((first, home)) = v
        .locs
        .iter()
        .find_map(|l| l.node.filter(|n| v.mem_nodes.contains(n)).map(|n| (*l, n)))
    else {
        let r = format!(
            "no usable CPU sits on a node whose memory this process may use (memory nodes allowed: {})",
            v.mem_nodes.iter().copied().collect::<CpuSet>()
        );
        return all_na(&r);
    };
    let mut out = vec![MemoryPlacement::bound(
        "local",
        format!("CPU {} with memory bound to its node {home}", first.cpu),
        Some(first.cpu),
        MemPolicy::Bind(CpuSet::from_ids([home])),
        v.distance(home, home),
    )];
    let remotes = remote_candidates(v, first.cpu, home);
    if remotes.is_empty() {
        let r = if v.nodes.len() <= 1 {
            "one NUMA node: there is no remote memory".to_string()
        } else {
            format!(
                "one usable NUMA node: no other node with memory this process may use (allowed {}) and no usable CPU on another node",
                v.mem_nodes.iter().copied().collect::<CpuSet>()
            )
        };
        for (n, w) in &names[1..] {
            out.push(MemoryPlacement::na(n, w, None, &r));
        }
        return out;
    }
    out.extend(remote_near_far(&remotes));
    out.push(interleave_from(v, first.cpu, home));
    out
}

/// A remote placement: a CPU with memory bound to a node other than its own.
struct Remote {
    cpu: usize,
    cpu_node: usize,
    mem: usize,
    distance: Option<u32>,
}

/// The remote placements: the home CPU (`cpu`, on node `home`) with memory
/// bound to another allowed memory node; where there is none, a CPU of
/// another node with memory bound to home.
fn remote_candidates(v: &View, cpu: usize, home: usize) -> Vec<Remote> {
    let mut remotes: Vec<Remote> = v
        .mem_nodes
        .iter()
        .filter(|&&n| n != home)
        .map(|&n| Remote {
            cpu,
            cpu_node: home,
            mem: n,
            distance: v.distance(home, n),
        })
        .collect();
    if remotes.is_empty() {
        let mut seen = Vec::new();
        for l in &v.locs {
            if let Some(n) = l.node.filter(|&n| n != home && !seen.contains(&n)) {
                seen.push(n);
                remotes.push(Remote {
                    cpu: l.cpu,
                    cpu_node: n,
                    mem: home,
                    distance: v.distance(n, home),
                });
            }
        }
    }
    remotes
}

/// `remote_near` and `remote_far` from the remote placements (at least
/// one): the nearest and the farthest, far not applicable when distances
/// are unknown or all equal.
fn remote_near_far(remotes: &[Remote]) -> [MemoryPlacement; 2] {
    let known = remotes.iter().all(|d| d.distance.is_some());
    let near = remotes
        .iter()
        .min_by_key(|d| (d.distance.unwrap_or(u32::MAX), d.mem, d.cpu_node))
        .unwrap_or(&remotes[0]);
    let far = remotes
        .iter()
        .max_by_key(|d| {
            (
                d.distance.unwrap_or(0),
                std::cmp::Reverse(d.mem),
                std::cmp::Reverse(d.cpu_node),
            )
        })
        .unwrap_or(&remotes[0]);
    let remote_text = |r: &Remote| {
        format!(
            "CPU {} (node {}) with memory bound to node {}{}",
            r.cpu,
            r.cpu_node,
            r.mem,
            r.distance
                .map(|d| format!(", distance {d}"))
                .unwrap_or_default()
        )
    };
    let near_p = MemoryPlacement::bound(
        "remote_near",
        remote_text(near),
        Some(near.cpu),
        MemPolicy::Bind(CpuSet::from_ids([near.mem])),
        near.distance,
    );
    let far_p = if !known {
        MemoryPlacement::na(
            "remote_far",
            "memory on the farthest node",
            None,
            "node distances unknown",
        )
    } else if far.distance == near.distance {
        MemoryPlacement::na(
            "remote_far",
            "memory on the farthest node",
            None,
            "every other node is at the same distance as the nearest",
        )
    } else {
        MemoryPlacement::bound(
            "remote_far",
            remote_text(far),
            Some(far.cpu),
            MemPolicy::Bind(CpuSet::from_ids([far.mem])),
            far.distance,
        )
    };
    [near_p, far_p]
}

/// `interleave`: the home CPU (`cpu`, on node `home`) with memory
/// interleaved over every allowed memory node.
fn interleave_from(v: &View, cpu: usize, home: usize) -> MemoryPlacement {
    if v.mem_nodes.len() < 2 {
        MemoryPlacement::na(
            "interleave",
            "memory interleaved over all nodes",
            None,
            &format!(
                "one usable memory node ({}): nothing to interleave over",
                home
            ),
        )
    } else {
        let all: CpuSet = v.mem_nodes.iter().copied().collect();
        MemoryPlacement::bound(
            "interleave",
            format!("CPU {} with memory interleaved over nodes {all}", cpu),
            Some(cpu),
            MemPolicy::Interleave(all),
            None,
        )
    }
}

/// The CPU sets a command that needs `k` CPUs can be bound to, and what the
/// planner had to assume.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SizedPlan {
    /// CPUs per set after capping to the machine (see [`plan`]).
    pub k: usize,
    pub sets: Vec<PlacementSet>,
    pub notes: Vec<String>,
}

impl SizedPlan {
    /// The set called `name`.
    pub fn set(&self, name: &str) -> Option<&PlacementSet> {
        self.sets.iter().find(|s| s.name == name)
    }
}

/// The sets for a command that needs `k` CPUs (`cpuscope tune
/// --cpus-needed`): the spread comparison's sets for `k` (one node, two
/// nodes of one socket, two nodes on two sockets, all nodes, packed on SMT
/// siblings), and two nodes on two sockets at the largest node distance
/// (`two_nodes_cross_socket_far`) where cross-socket node pairs differ in
/// distance: seed 000 measured both 24,25,72,73 and 0,1,72,73 on its
/// Kunpeng 920. With `k = 1`: one CPU of one node, and the sets that need
/// two CPUs are not applicable.
pub fn sized_sets(m: &MachineInfo, usable: &CpuSet, k: usize) -> SizedPlan {
    let p = plan(m, usable, k.max(2));
    let mut notes = p.notes.clone();
    let mut sets: Vec<PlacementSet> = p
        .comparison("spread")
        .map(|c| c.sets.clone())
        .unwrap_or_default();
    if k <= 1 {
        sized_for_one_cpu(&mut sets);
        notes.retain(|n| !n.contains("spread sets"));
        return SizedPlan { k: 1, sets, notes };
    }
    let k = p.spread_k;
    let mut scratch = Vec::new();
    let v = View::new(m, usable, &mut scratch);
    let far = cross_socket_far_set(&v, k / 2);
    insert_after_cross_socket(&mut sets, far);
    SizedPlan { k, sets, notes }
}

/// The spread sets for a command that needs 1 CPU: one CPU of one node, and
/// every set that needs two CPUs not applicable (`two_nodes_cross_socket_far`
/// too).
fn sized_for_one_cpu(sets: &mut Vec<PlacementSet>) {
    for s in sets.iter_mut() {
        if s.name == "one_node" {
            if let Some(first) = s.cpus.as_ref().and_then(|c| c.first()) {
                s.cpus = Some(CpuSet::from_ids([first]));
                s.what = format!("1 CPU ({first}) of one NUMA node");
            }
        } else {
            *s = PlacementSet::na(
                &s.name,
                &s.what,
                "the command needs 1 CPU (--cpus-needed 1)",
            );
        }
    }
    insert_after_cross_socket(
        sets,
        PlacementSet::na(
            "two_nodes_cross_socket_far",
            "two NUMA nodes of two sockets farthest apart",
            "the command needs 1 CPU (--cpus-needed 1)",
        ),
    );
}

/// Put `set` right after `two_nodes_cross_socket` (at the end without it).
fn insert_after_cross_socket(sets: &mut Vec<PlacementSet>, set: PlacementSet) {
    let at = sets
        .iter()
        .position(|s| s.name == "two_nodes_cross_socket")
        .map(|i| i + 1)
        .unwrap_or(sets.len());
    sets.insert(at, set);
}

/// Cross-socket node pairs that hold `half` usable cores each, with their
/// distance: (node a, node b, distance), a before b.
fn cross_socket_pairs(v: &View, half: usize) -> Vec<(Option<usize>, Option<usize>, Option<u32>)> {
    let nodes = v.cpu_nodes();
    let mut pairs: Vec<(Option<usize>, Option<usize>, Option<u32>)> = Vec::new();
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            let differ = v.package_of_node(*a) != v.package_of_node(*b);
            if differ
                && half > 0
                && v.cores_in_node(*a).len() >= half
                && v.cores_in_node(*b).len() >= half
            {
                let d = match (a, b) {
                    (Some(x), Some(y)) => v.distance(*x, *y),
                    _ => None,
                };
                pairs.push((*a, *b, d));
            }
        }
    }
    pairs
}

/// `two_nodes_cross_socket_far`: `half` + `half` cores in the two nodes of
/// two sockets farthest apart, when cross-socket node pairs differ in
/// distance.
fn cross_socket_far_set(v: &View, half: usize) -> PlacementSet {
    // Cross-socket node pairs that hold `half` usable cores each.
    let pairs = cross_socket_pairs(v, half);
    let name = "two_nodes_cross_socket_far";
    let what = format!("{half} + {half} cores in the two NUMA nodes of two sockets farthest apart");
    match pairs.first() {
        None => PlacementSet::na(
            name,
            &what,
            "no two NUMA nodes on different sockets (see two_nodes_cross_socket)",
        ),
        Some(_) if pairs.iter().any(|p| p.2.is_none()) => {
            PlacementSet::na(name, &what, "node distances unknown")
        }
        Some(near) => {
            let far = pairs
                .iter()
                .max_by_key(|p| (p.2, std::cmp::Reverse(p.0), std::cmp::Reverse(p.1)))
                .unwrap_or(near);
            if far.2 == near.2 {
                PlacementSet::na(
                    name,
                    &what,
                    "every pair of nodes on two sockets is at the same distance",
                )
            } else {
                let mut all = v.cores_in_node(far.0)[..half].to_vec();
                all.extend(v.cores_in_node(far.1)[..half].iter().copied());
                PlacementSet::ok(
                    name,
                    format!(
                        "{half} cores in {} + {half} in {}, distance {} (the nearest pair on two sockets: {})",
                        node_text(far.0),
                        node_text(far.1),
                        far.2.unwrap_or(0),
                        near.2.unwrap_or(0)
                    ),
                    set_of(&all),
                )
            }
        }
    }
}

/// The memory policies for a set, in order.
const SET_MEMORY_NAMES: [(&str, &str); 4] = [
    ("local", "memory on the set's own nodes"),
    ("preferred", "memory preferred on the set's first node"),
    ("interleave", "memory interleaved over all nodes"),
    ("remote", "memory on the nearest node outside the set"),
];

/// Memory policies for a command bound to `set` (a subset of `usable`):
/// `local` (bound to the set's own nodes), `preferred` (the node of the
/// set's first CPU, falling back elsewhere when full), `interleave` (over
/// every node this process may take memory from) and `remote` (bound to the
/// nearest node outside the set). `cpu` is the set's first CPU; a policy
/// the machine cannot offer comes with its reason.
pub fn memory_for_set(m: &MachineInfo, usable: &CpuSet, set: &CpuSet) -> Vec<MemoryPlacement> {
    let mut scratch = Vec::new();
    let v = View::new(m, usable, &mut scratch);
    let names = SET_MEMORY_NAMES;
    let cpu = set.first();
    let mut set_nodes: Vec<usize> = v
        .locs
        .iter()
        .filter(|l| set.contains(l.cpu))
        .filter_map(|l| l.node)
        .collect();
    set_nodes.sort_unstable();
    set_nodes.dedup();
    if set_nodes.is_empty() {
        return names
            .iter()
            .map(|(n, w)| MemoryPlacement::na(n, w, cpu, "NUMA nodes unknown"))
            .collect();
    }
    let local: CpuSet = set_nodes
        .iter()
        .copied()
        .filter(|n| v.mem_nodes.contains(n))
        .collect();
    let first_node = v
        .locs
        .iter()
        .find(|l| set.contains(l.cpu))
        .and_then(|l| l.node);
    let home = first_node
        .filter(|n| v.mem_nodes.contains(n))
        .or_else(|| local.first());
    let mut out = local_and_preferred(&v, cpu, home, &local).to_vec();
    if v.mem_nodes.len() < 2 {
        out.push(MemoryPlacement::na(
            "interleave",
            names[2].1,
            cpu,
            "one memory node: nothing to interleave over",
        ));
    } else {
        let all: CpuSet = v.mem_nodes.iter().copied().collect();
        out.push(MemoryPlacement::bound(
            "interleave",
            format!("memory interleaved over nodes {all}"),
            cpu,
            MemPolicy::Interleave(all),
            None,
        ));
    }
    out.push(remote_for_set(&v, cpu, &set_nodes, home.or(first_node)));
    out
}

/// `local` (bound to the set's nodes that hold memory, `local`) and
/// `preferred` (on `home`, the node of the set's first CPU) for a set
/// whose first CPU is `cpu`.
fn local_and_preferred(
    v: &View,
    cpu: Option<usize>,
    home: Option<usize>,
    local: &CpuSet,
) -> [MemoryPlacement; 2] {
    let names = SET_MEMORY_NAMES;
    let Some(home) = home else {
        let r = "the set's nodes hold no memory this process may use";
        return [
            MemoryPlacement::na("local", names[0].1, cpu, r),
            MemoryPlacement::na("preferred", names[1].1, cpu, r),
        ];
    };
    let local_p = MemoryPlacement::bound(
        "local",
        format!("memory bound to the set's node(s) {local}"),
        cpu,
        MemPolicy::Bind(local.clone()),
        v.distance(home, home),
    );
    let preferred = if v.mem_nodes.len() < 2 {
        MemoryPlacement::na(
            "preferred",
            names[1].1,
            cpu,
            "one memory node: preferred is the same as local",
        )
    } else {
        MemoryPlacement::bound(
            "preferred",
            format!("memory preferred on node {home}, elsewhere when it is full"),
            cpu,
            MemPolicy::Preferred(home),
            v.distance(home, home),
        )
    };
    [local_p, preferred]
}

/// `remote`: memory bound to the allowed memory node outside the set
/// (`set_nodes`) nearest to `from`.
fn remote_for_set(
    v: &View,
    cpu: Option<usize>,
    set_nodes: &[usize],
    from: Option<usize>,
) -> MemoryPlacement {
    let remote = v
        .mem_nodes
        .iter()
        .copied()
        .filter(|n| !set_nodes.contains(n))
        .min_by_key(|n| (from.and_then(|f| v.distance(f, *n)).unwrap_or(u32::MAX), *n));
    match remote {
        Some(r) => {
            let d = from.and_then(|f| v.distance(f, r));
            MemoryPlacement::bound(
                "remote",
                format!(
                    "memory bound to node {r}, outside the set{}",
                    d.map(|d| format!(" (distance {d})")).unwrap_or_default()
                ),
                cpu,
                MemPolicy::Bind(CpuSet::from_ids([r])),
                d,
            )
        }
        None => MemoryPlacement::na(
            "remote",
            SET_MEMORY_NAMES[3].1,
            cpu,
            if v.nodes.len() <= 1 {
                "one NUMA node: there is no remote memory"
            } else {
                "the set spans every node this process may take memory from"
            },
        ),
    }
}

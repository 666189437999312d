//! What the NUMA matrix shows (docs/views.md): its place among the
//! experiments, its section of the summary, its charts in the report, its
//! verdict lines and its rules of advice.

use crate::base::fmt::fmt_num;
use crate::experiments::memory::payload::NumaMatrixData;
use crate::machine::MachineInfo;
use crate::results::schema::{ResultRecord, Run};
use crate::view::finding::{ev, from_result, param_num, Evidence, Finding, Severity};
use crate::view::{
    param_text, Block, Chart, ChartKind, Depth, Heatmap, Rank, Rule, Section, VerdictLine, Views,
};
use std::collections::BTreeMap;

/// The views of this experiment (the registry holds it).
pub struct NumaMatrixViews;

impl Views for NumaMatrixViews {
    fn rules(&self) -> &'static [Rule] {
        RULES
    }

    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        numa_line(run).into_iter().collect()
    }

    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        crate::experiments::memory::text::summary_or_report(run, super::EXP, depth, || {
            matrix_blocks(run)
        })
    }

    fn rank(&self) -> Rank {
        Rank(30)
    }
}

/// The report's matrices of each matrix record: latency, read bandwidth
/// and measured over declared distance, rows the CPUs of a node, columns
/// the memory; then its notes.
fn matrix_blocks(run: &Run) -> Vec<Block> {
    let mut blocks = Vec::new();
    for r in run.records_of(super::EXP).filter(|r| r.is(super::MATRIX)) {
        let Some(d) = r.data_as::<NumaMatrixData>() else {
            continue;
        };
        let rows: Vec<String> = d.rows.iter().map(|n| n.to_string()).collect();
        let nodes = d.node_targets();
        for (title, cols, m, unit) in [
            (
                "NUMA latency, ns (rows: CPUs of node; columns: memory)",
                &d.targets,
                &d.latency_ns,
                "ns",
            ),
            (
                "NUMA read bandwidth, GB/s",
                &d.targets,
                &d.bandwidth_gbs,
                "GB/s",
            ),
            (
                "Measured latency ratio / declared distance ratio",
                &nodes,
                &d.measured_over_declared,
                "",
            ),
        ] {
            let map = Heatmap::filled(rows.clone(), cols.clone(), m, unit);
            blocks.push(Block::Chart(Chart {
                title: title.into(),
                caption: None,
                kind: ChartKind::Heatmap(map.labelled("node", "CPUs of node", "memory")),
            }));
        }
        blocks.extend(r.notes.iter().cloned().map(Block::Note));
    }
    blocks
}

/// Its rules of advice ([`Views::rules`]).
const RULES: &[Rule] = &[
    Rule {
        id: "numa-balancing-pinned",
        rank: 20,
        timed: false,
        find: numa_balancing_pinned,
    },
    Rule {
        id: "remote-local-latency",
        rank: 30,
        timed: true,
        find: remote_local_latency,
    },
    Rule {
        id: "distances-vs-measured",
        rank: 40,
        timed: true,
        find: distances_vs_measured,
    },
    Rule {
        id: "memory-only-tier",
        rank: 45,
        timed: true,
        find: memory_only_tier,
    },
];

/// NUMA node ids of the machine, in the order of the distance rows.
fn node_ids(m: &MachineInfo) -> Vec<usize> {
    m.numa_nodes.iter().map(|n| n.id).collect()
}

/// Declared distance (SLIT) from node `a` to node `b`.
fn distance(m: &MachineInfo, a: usize, b: usize) -> Option<u64> {
    let bi = node_ids(m).iter().position(|x| *x == b)?;
    let row = &m.numa_nodes.iter().find(|n| n.id == a)?.distances;
    row.get(bi).map(|d| u64::from(*d))
}

const CPU_NODE_PARAMS: &[&str] = &[
    "cpu_node",
    "from_node",
    "src_node",
    "run_node",
    "thread_node",
];

const MEM_NODE_PARAMS: &[&str] = &[
    "mem_node",
    "memory_node",
    "mem",
    "to_node",
    "dst_node",
    "data_node",
];

/// Measured latency from CPU node to memory node, with the evidence source
/// of each entry: from per-pair records (params cpu_node/mem_node...) or
/// numa_matrix's matrix record (`NumaMatrixData`). A core-to-core (CPU × CPU)
/// matrix is not memory latency and is not read here.
struct NodeLatency {
    /// (cpu node, memory node) → (ns, source, noisy)
    pairs: BTreeMap<(usize, usize), (f64, String, bool)>,
    what: String,
}

fn node_latency(run: &Run) -> Option<NodeLatency> {
    // 1. per-pair records, else 2. numa_matrix's matrix record.
    latency_of_pair_records(run).or_else(|| latency_of_matrix_record(run))
}

/// Node latency from per-pair records (params cpu_node/mem_node...), when
/// they hold a local and a remote pair.
fn latency_of_pair_records(run: &Run) -> Option<NodeLatency> {
    // 1. Per-pair records: group by the other params, keep the largest group
    //    (ties: the largest buffer, which reaches DRAM).
    let mut groups: BTreeMap<String, Vec<(&ResultRecord, usize, usize)>> = BTreeMap::new();
    for r in &run.results {
        if r.unit != "ns" || r.value.is_none() {
            continue;
        }
        let c = CPU_NODE_PARAMS.iter().find_map(|k| param_num(r, k));
        let mm = MEM_NODE_PARAMS.iter().find_map(|k| param_num(r, k));
        let (Some(c), Some(mm)) = (c, mm) else {
            continue;
        };
        let mut rest = r.params.clone();
        for k in CPU_NODE_PARAMS.iter().chain(MEM_NODE_PARAMS) {
            rest.remove(*k);
        }
        let g = format!(
            "{}:{}:{}",
            r.experiment,
            r.metric,
            serde_json::to_string(&rest).unwrap_or_default()
        );
        groups
            .entry(g)
            .or_default()
            .push((r, c as usize, mm as usize));
    }
    let size_of = |r: &ResultRecord| {
        ["size", "bytes", "size_bytes", "buffer_bytes"]
            .iter()
            .find_map(|k| param_num(r, k))
            .unwrap_or(0.0)
    };
    let best = groups.into_values().max_by(|a, b| {
        a.len()
            .cmp(&b.len())
            .then(size_of(a[0].0).total_cmp(&size_of(b[0].0)))
    });
    if let Some(g) = best {
        let has_remote = g.iter().any(|(_, c, m)| c != m);
        let has_local = g.iter().any(|(_, c, m)| c == m);
        if has_remote && has_local {
            let first = g[0].0;
            return Some(NodeLatency {
                what: format!("{}: {}", first.experiment, first.metric),
                pairs: g
                    .iter()
                    .filter_map(|(r, c, m)| {
                        Some(((*c, *m), (r.value?, from_result(r), r.is_noisy())))
                    })
                    .collect(),
            });
        }
    }
    None
}

/// Node latency from numa_matrix's matrix record, when it holds a local
/// and a remote pair.
fn latency_of_matrix_record(run: &Run) -> Option<NodeLatency> {
    // 2. numa_matrix's matrix record: latency from the CPUs of each node
    //    (rows) to the memory of each node (the node targets; interleave is
    //    no node). A core-to-core (CPU × CPU) matrix is the cost of moving a
    //    cache line between cores, not of reaching another node's memory,
    //    and is never read as one.
    for r in run.records(super::MATRIX) {
        let Some(d) = r.data_as::<NumaMatrixData>() else {
            continue;
        };
        let src = format!("result {} (data.latency_ns)", r.key);
        let mut pairs = BTreeMap::new();
        for (i, row) in d.rows.iter().enumerate() {
            for (j, target) in d.targets.iter().enumerate() {
                let Ok(mem) = target.parse::<usize>() else {
                    continue;
                };
                let v = d
                    .latency_ns
                    .get(i)
                    .and_then(|l| l.get(j).copied().flatten());
                if let Some(v) = v {
                    pairs.insert((*row, mem), (v, src.clone(), r.is_noisy()));
                }
            }
        }
        let has_remote = pairs.keys().any(|(c, m)| c != m);
        let has_local = pairs.keys().any(|(c, m)| c == m);
        if has_remote && has_local {
            return Some(NodeLatency {
                what: format!("{}: {}", r.experiment, r.metric),
                pairs,
            });
        }
    }
    None
}

/// (worst remote / mean local, the worst remote pair, local mean).
fn remote_ratio(nl: &NodeLatency) -> Option<(f64, (usize, usize), f64)> {
    let local: Vec<f64> = nl
        .pairs
        .iter()
        .filter(|((a, b), _)| a == b)
        .map(|(_, v)| v.0)
        .collect();
    if local.is_empty() {
        return None;
    }
    let lm = local.iter().sum::<f64>() / local.len() as f64;
    let (pair, worst) = nl
        .pairs
        .iter()
        .filter(|((a, b), _)| a != b)
        .map(|(k, v)| (*k, v.0))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (lm > 0.0).then(|| (worst / lm, pair, lm))
}

/// Remote memory costs much more than local (threshold 1.3x).
pub fn remote_local_latency(run: &Run) -> Vec<Finding> {
    const THRESHOLD: f64 = 1.3;
    let Some(nl) = node_latency(run) else {
        return Vec::new();
    };
    let Some((ratio, (a, b), lm)) = remote_ratio(&nl) else {
        return Vec::new();
    };
    if ratio < THRESHOLD {
        return Vec::new();
    }
    let mut evidence: Vec<Evidence> = nl
        .pairs
        .iter()
        .filter(|((x, y), _)| x == y)
        .map(|((x, _), (v, src, _))| {
            ev(
                format!("local latency, CPU node {x} → memory node {x}"),
                format!("{} ns", fmt_num(*v)),
                src.clone(),
            )
        })
        .collect();
    let (wv, wsrc, _) = &nl.pairs[&(a, b)];
    evidence.push(ev(
        format!("slowest remote latency, CPU node {a} → memory node {b}"),
        format!("{} ns", fmt_num(*wv)),
        wsrc.clone(),
    ));
    let noisy = nl.pairs.values().any(|v| v.2);
    vec![Finding {
        rule: "remote-local-latency",
        severity: Severity::Advice,
        title: format!(
            "remote memory costs {ratio:.2}x local ({} ns vs {} ns, {})",
            fmt_num(*wv),
            fmt_num(lm),
            nl.what
        ),
        advice: format!(
            "Keep each thread's memory on its own node: start latency-bound processes with \
             numactl --cpunodebind=N --membind=N (or --localalloc), first-touch data from the thread \
             that uses it, and interleave (numactl --interleave=all) only memory that every node \
             shares.{}",
            if noisy {
                " Some of these figures are noisy (CV above 5%): repeat the run to confirm."
            } else {
                ""
            }
        ),
        evidence,
    }]
}

/// The declared NUMA distances disagree with measured latencies.
pub fn distances_vs_measured(run: &Run) -> Vec<Finding> {
    let Some(nl) = node_latency(run) else {
        return Vec::new();
    };
    let m = run.machine_info();
    let remote: Vec<((usize, usize), f64, String, u64)> = nl
        .pairs
        .iter()
        .filter(|((a, b), _)| a != b)
        .filter_map(|(&(a, b), (v, src, _))| Some(((a, b), *v, src.clone(), distance(&m, a, b)?)))
        .collect();
    // Pairs the firmware orders one way and the measurement the other (10% margin),
    // or calls equal while they differ by more than 20%.
    let mut worst: Option<(f64, usize, usize)> = None;
    for i in 0..remote.len() {
        for j in 0..remote.len() {
            let (_, li, _, di) = &remote[i];
            let (_, lj, _, dj) = &remote[j];
            let disagrees = (di < dj && *li > lj * 1.10) || (di == dj && *li > lj * 1.20);
            if !disagrees {
                continue;
            }
            let score = li / lj;
            if worst.is_none_or(|w| score > w.0) {
                worst = Some((score, i, j));
            }
        }
    }
    let Some((score, i, j)) = worst else {
        return Vec::new();
    };
    let (pi, li, si, di) = &remote[i];
    let (pj, lj, sj, dj) = &remote[j];
    let rel = if di == dj { "equal to" } else { "shorter than" };
    vec![Finding {
        rule: "distances-vs-measured",
        severity: Severity::Advice,
        title: format!(
            "declared NUMA distances disagree with measured latency: {}→{} is declared {rel} {}→{} but is {:.0}% slower",
            pi.0,
            pi.1,
            pj.0,
            pj.1,
            (score - 1.0) * 100.0
        ),
        advice: "The kernel, numactl's nearest-node choices and many runtimes place memory by the firmware's \
                 distance table (SLIT). Here the measured cost orders the nodes differently: choose fallback \
                 nodes and interleave sets by the measured latencies, and report the table to the platform vendor."
            .into(),
        evidence: vec![
            ev(
                format!("declared distance node {} → node {}", pi.0, pi.1),
                di.to_string(),
                "machine numa_nodes[].distances",
            ),
            ev(
                format!("declared distance node {} → node {}", pj.0, pj.1),
                dj.to_string(),
                "machine numa_nodes[].distances",
            ),
            ev(
                format!("measured latency node {} → node {}", pi.0, pi.1),
                format!("{} ns", fmt_num(*li)),
                si.clone(),
            ),
            ev(
                format!("measured latency node {} → node {}", pj.0, pj.1),
                format!("{} ns", fmt_num(*lj)),
                sj.clone(),
            ),
        ],
    }]
}

/// NUMA balancing is on, on a multi-node machine, while work is pinned.
pub fn numa_balancing_pinned(run: &Run) -> Vec<Finding> {
    let m = run.machine_info();
    let Some(v) = m.knobs.value("numa_balancing").map(str::to_string) else {
        return Vec::new();
    };
    let nodes = node_ids(&m).len();
    if v.trim() == "0" || nodes < 2 {
        return Vec::new();
    }
    let mut evidence = vec![
        ev(
            "kernel.numa_balancing",
            v.clone(),
            "machine knobs.numa_balancing (/proc/sys/kernel/numa_balancing)",
        ),
        ev("NUMA nodes", nodes.to_string(), "machine numa_nodes"),
    ];
    let pinned = run.results.iter().filter(|r| r.value.is_some()).count();
    if pinned > 0 {
        evidence.push(ev(
            "figures of this run measured with pinned threads and placed memory",
            pinned.to_string(),
            "results of this run",
        ));
    }
    if let Some(nl) = node_latency(run) {
        if let Some((ratio, _, _)) = remote_ratio(&nl) {
            evidence.push(ev(
                "measured remote/local memory latency",
                format!("{ratio:.2}x"),
                nl.what.clone(),
            ));
        }
    }
    vec![Finding {
        rule: "numa-balancing-pinned",
        severity: Severity::Warning,
        title: format!("automatic NUMA balancing is on ({v}) on a {nodes}-node machine"),
        advice: "For work pinned with numactl/taskset (as cpuscope pins its threads), balancing can only \
                 unmap pages to sample faults and migrate memory the placement already chose: it adds \
                 page faults and jitter. Turn it off for pinned workloads (sysctl kernel.numa_balancing=0) \
                 and keep it for unpinned ones."
            .into(),
        evidence,
    }]
}

// ---------------------------------------------------------------- verdict

/// Local vs remote memory latency from the NUMA matrix, when it has both.
fn numa_line(run: &Run) -> Option<VerdictLine> {
    let lat: Vec<&ResultRecord> = run
        .records(super::LATENCY)
        .filter(|r| r.value.is_some())
        .collect();
    let is_local = |r: &ResultRecord| {
        param_text(r, "cpu_node").is_some() && param_text(r, "cpu_node") == param_text(r, "mem")
    };
    let local: Vec<f64> = lat
        .iter()
        .filter(|r| is_local(r))
        .filter_map(|r| r.value)
        .collect();
    let remote: Vec<f64> = lat
        .iter()
        .filter(|r| {
            !is_local(r) && param_text(r, "mem").is_some_and(|m| m.parse::<usize>().is_ok())
        })
        .filter_map(|r| r.value)
        .collect();
    if local.is_empty() || remote.is_empty() {
        return None;
    }
    let l = local.iter().sum::<f64>() / local.len() as f64;
    let worst = remote.iter().copied().fold(f64::NAN, f64::max);
    Some(VerdictLine::plain(
        // Under the latency curve's line when there is one (the layout
        // prints a repeated heading empty).
        "Latency",
        format!(
            "NUMA: local {} ns · remote up to {} ns (×{:.2}) over {} node pairs",
            fmt_num(l),
            fmt_num(worst),
            worst / l,
            remote.len()
        ),
    ))
}

/// A memory-only node (a CXL expander's, HBM's or a far tier's shape)
/// measured from the CPU nodes: which tier it is, what it costs against
/// the nearest CPU node's own memory, what the firmware declares, and what
/// to place there.
pub fn memory_only_tier(run: &Run) -> Vec<Finding> {
    let m = run.machine_info();
    let Some(nl) = node_latency(run) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for far in m.numa.memory_only.iter() {
        // The nearest CPU node, measured, and its own memory.
        let nearest = nl
            .pairs
            .iter()
            .filter(|((c, mm), _)| *mm == far && *c != far)
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0));
        let Some((&(c, _), (v, src, noisy))) = nearest else {
            continue;
        };
        let Some((local, lsrc, lnoisy)) = nl.pairs.get(&(c, c)) else {
            continue;
        };
        let tier = m
            .memory_tiers
            .nodes
            .iter()
            .find(|n| n.node == far)
            .and_then(|n| n.tier)
            .map(|t| format!(" (kernel memory_tier{t})"))
            .unwrap_or_default();
        let mut evidence = vec![
            ev(
                format!("latency, CPU node {c} → memory-only node {far}"),
                format!("{} ns", fmt_num(*v)),
                src.clone(),
            ),
            ev(
                format!("local latency, CPU node {c} → memory node {c}"),
                format!("{} ns", fmt_num(*local)),
                lsrc.clone(),
            ),
        ];
        if let Ok((d, dsrc)) = m.memory_tiers.declared_read(c, far, true) {
            evidence.push(ev(
                format!("declared read latency, node {c} → node {far}"),
                format!("{d} ns"),
                format!("firmware: {dsrc}"),
            ));
        }
        out.push(Finding {
            rule: "memory-only-tier",
            severity: Severity::Advice,
            title: format!(
                "node {far} is memory without CPUs{tier}: {} ns from node {c}, {:.2}x that node's own memory",
                fmt_num(*v),
                v / local
            ),
            advice: format!(
                "Treat node {far} as a slower tier: keep latency-bound memory on the CPU nodes \
                 (numactl --membind=<CPU nodes>), give node {far} the large, rarely touched data \
                 (numactl --preferred={far}, or mbind on those buffers), or let the kernel demote \
                 cold pages to it (/sys/kernel/mm/numa/demotion_enabled).{}",
                if *noisy || *lnoisy {
                    " Some of these figures are noisy (CV above 5%): repeat the run to confirm."
                } else {
                    ""
                }
            ),
            evidence,
        });
    }
    out
}

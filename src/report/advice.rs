//! Advice: rules that read one run (its results and the machine snapshot
//! taken at its start) and say what to change, each with the figures of
//! this run that support it. No rule speaks without evidence from the run:
//! a finding always carries at least one [`Evidence`] naming the result key
//! or the machine-snapshot field it comes from. Never measures.
//!
//! Rules (docs/compare.md lists the result shapes each reads):
//! - `nic-irq-remote-node`: a NIC's interrupts are served on another NUMA node than the NIC's.
//! - `numa-balancing-pinned`: kernel NUMA balancing is on, on a multi-node machine, for pinned work.
//! - `remote-local-latency`: remote memory costs much more than local.
//! - `smt-yield-wide-simd`: a second hardware thread adds little to wide-SIMD throughput.
//! - `all-core-frequency-drop`: the clock falls when every core is busy.
//! - `memory-bandwidth-saturation`: memory bandwidth stops growing after k cores.
//! - `distances-vs-measured`: the firmware's NUMA distances disagree with measured latencies.
//! - `declared-vs-measured-frequency`: the clock the machine declares is not what it runs at.
//! - `dimm-population`: memory channels left empty, or DIMMs of mixed sizes or speeds (SMBIOS).
//! - `cache-latency-vs-published`: a cache level's measured latency is more than 20% off the
//!   core's published load-to-use latency (cpuscope's knowledge base).

use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::common::{Placement, PLACEMENT_PARAM};
use crate::experiments::memory::payload::{BandwidthData, NumaMatrixData};
use crate::experiments::memory::{bandwidth, numa_matrix};
use crate::experiments::state::frequency;
use crate::experiments::state::payload::{SingleCoreData, TeamClockData};
use crate::machine::MachineInfo;
use crate::results::schema::{MetricId, ResultRecord, Run};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Costs performance now; change something.
    Warning,
    /// Worth knowing when sizing or placing work.
    Advice,
}

/// One figure behind a finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evidence {
    /// What the figure is.
    pub what: String,
    /// The figure, with its unit.
    pub value: String,
    /// Where it comes from: `result <key>` or `machine <field>`.
    pub source: String,
}

/// One piece of advice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Stable rule id, e.g. `all-core-frequency-drop`.
    pub rule: &'static str,
    pub severity: Severity,
    /// One line: what was found.
    pub title: String,
    /// What to do about it.
    pub advice: String,
    /// The figures of this run that support it (never empty).
    pub evidence: Vec<Evidence>,
}

type Rule = fn(&Run) -> Vec<Finding>;

/// Every rule, in the order findings are reported.
pub const RULES: &[(&str, Rule)] = &[
    ("nic-irq-remote-node", nic_irq_remote_node),
    ("numa-balancing-pinned", numa_balancing_pinned),
    ("remote-local-latency", remote_local_latency),
    ("distances-vs-measured", distances_vs_measured),
    ("memory-bandwidth-saturation", memory_bandwidth_saturation),
    ("smt-yield-wide-simd", smt_yield_wide_simd),
    ("all-core-frequency-drop", all_core_frequency_drop),
    (
        "declared-vs-measured-frequency",
        declared_vs_measured_frequency,
    ),
    ("dimm-population", dimm_population),
    ("cache-latency-vs-published", cache_latency_vs_published),
];

/// Rules whose findings rest on timed figures (not on configuration read from the machine).
const MEASURED_RULES: &[&str] = &[
    "remote-local-latency",
    "distances-vs-measured",
    "memory-bandwidth-saturation",
    "smt-yield-wide-simd",
    "all-core-frequency-drop",
    "declared-vs-measured-frequency",
    "cache-latency-vs-published",
];

/// What the run's own figures advise. Findings without evidence are dropped.
/// When the machine was busy as the run started, findings from timed
/// figures say so (with the load as evidence).
pub fn findings(run: &Run) -> Vec<Finding> {
    let mut out: Vec<Finding> = RULES
        .iter()
        .flat_map(|(_, rule)| rule(run))
        .filter(|f| !f.evidence.is_empty())
        .collect();
    if let Some(a) = run.environment.activity.as_ref().filter(|a| a.busy) {
        // Measured on a busy machine: withheld as hardware facts, kept as
        // leads (severity lowered, title and advice say why).
        for f in out.iter_mut().filter(|f| MEASURED_RULES.contains(&f.rule)) {
            f.severity = Severity::Advice;
            f.title = format!(
                "{} (busy machine: not a hardware fact until repeated idle)",
                f.title
            );
            f.advice = format!(
                "Measured while the machine was busy ({}): other programs' load or a busy host can cause this; repeat on an idle machine before acting on it. {}",
                a.summary(),
                f.advice
            );
            f.evidence.push(ev(
                "other programs' CPU time and steal time during the run",
                a.summary(),
                "environment.activity",
            ));
        }
    } else if let Some((load, cpus)) = busy(run) {
        for f in out.iter_mut().filter(|f| MEASURED_RULES.contains(&f.rule)) {
            f.advice.push_str(&format!(
                " The machine was busy when the run started (load average {load:.2} on {cpus} CPUs): \
                 repeat on an idle machine before acting on this."
            ));
            f.evidence.push(ev(
                "load average (1 min) when the run started",
                format!("{load:.2} on {cpus} CPUs"),
                "environment.load_start",
            ));
        }
    }
    out.sort_by_key(|f| f.severity);
    out
}

/// (1-minute load, logical CPUs) when the load at the start was at least
/// 1 and more than half the CPUs.
fn busy(run: &Run) -> Option<(f64, usize)> {
    let load = run.environment.load_start.as_ref()?.loadavg_1?;
    let m = run.machine_info();
    let cpus = Some(m.cpus.online.len())
        .filter(|n| *n > 0)
        .or_else(|| Some(m.threads.len()).filter(|n| *n > 0))?;
    (load >= 1.0 && load > 0.5 * cpus as f64).then_some((load, cpus))
}

// ------------------------------------------------------------ helpers

fn ev(what: impl Into<String>, value: impl Into<String>, source: impl Into<String>) -> Evidence {
    Evidence {
        what: what.into(),
        value: value.into(),
        source: source.into(),
    }
}

fn from_result(r: &ResultRecord) -> String {
    format!("result {}", r.key)
}

fn noisy_note(recs: &[&ResultRecord]) -> String {
    let noisy: Vec<&str> = recs
        .iter()
        .filter(|r| r.is_flagged())
        .map(|r| r.key.as_str())
        .collect();
    if noisy.is_empty() {
        String::new()
    } else {
        format!(
            " (caution: {} noisy (CV above 5%) or implausible; repeat the run to confirm).",
            noisy.join(", ")
        )
    }
}

fn measured(run: &Run, id: MetricId) -> Option<&ResultRecord> {
    run.records(id).find(|r| r.value.is_some())
}

fn param_str(r: &ResultRecord, k: &str) -> Option<String> {
    r.params.get(k).map(|v| match v {
        Value::String(s) => s.clone(),
        o => o.to_string(),
    })
}

fn param_num(r: &ResultRecord, k: &str) -> Option<f64> {
    match r.params.get(k)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

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
    // 2. numa_matrix's matrix record: latency from the CPUs of each node
    //    (rows) to the memory of each node (the node targets; interleave is
    //    no node). A core-to-core (CPU × CPU) matrix is the cost of moving a
    //    cache line between cores, not of reaching another node's memory,
    //    and is never read as one.
    for r in run.records(numa_matrix::MATRIX) {
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

// ------------------------------------------------------------ rules

/// A NIC's interrupts are served on another node than the NIC's own.
pub fn nic_irq_remote_node(run: &Run) -> Vec<Finding> {
    let mut out = Vec::new();
    let m = run.machine_info();
    for nic in &m.devices.nics {
        let name = nic.name.as_str();
        if nic.is_virtual {
            continue;
        }
        let Some(node) = nic.numa_node.filter(|n| *n >= 0) else {
            continue;
        };
        let irq_nodes: Vec<i64> = nic.irq_nodes.iter().map(|n| *n as i64).collect();
        let remote: Vec<i64> = irq_nodes.iter().copied().filter(|n| *n != node).collect();
        if remote.is_empty() {
            continue;
        }
        let served = nic.served_cpus.to_string();
        let nirq = nic.irqs.len();
        let node_cpus = m
            .numa_nodes
            .iter()
            .find(|n| n.id as i64 == node)
            .map(|n| n.cpus.to_string());
        let list = |v: &[i64]| {
            v.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut evidence = vec![
            ev(
                format!("{name}: NUMA node of the device"),
                node.to_string(),
                format!("machine devices.nics[{name}].numa_node"),
            ),
            ev(
                format!("{name}: nodes whose CPUs served its {nirq} IRQ(s)"),
                list(&irq_nodes),
                format!("machine devices.nics[{name}].irq_nodes"),
            ),
        ];
        if !served.is_empty() {
            evidence.push(ev(
                format!("{name}: CPUs that served its IRQs"),
                served,
                format!("machine devices.nics[{name}].served_cpus"),
            ));
        }
        let target = node_cpus
            .map(|c| format!("CPUs {c} (node {node})"))
            .unwrap_or_else(|| format!("CPUs of node {node}"));
        out.push(Finding {
            rule: "nic-irq-remote-node",
            severity: Severity::Warning,
            title: format!(
                "{name} sits on node {node} but its interrupts are served on node {}",
                list(&remote)
            ),
            advice: format!(
                "Every packet crosses the interconnect twice (DMA to node {node}, handling on node {}). \
                 Route {name}'s IRQs to {target} (write /proc/irq/N/smp_affinity_list, or configure irqbalance), \
                 and run the network-heavy threads on node {node}.",
                list(&remote)
            ),
            evidence,
        });
    }
    out
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

/// Memory bandwidth stops growing after k threads (of more measured).
pub fn memory_bandwidth_saturation(run: &Run) -> Vec<Finding> {
    const NEAR_MAX: f64 = 0.90;
    // Bandwidth records that differ only by a numeric thread count.
    let mut groups: BTreeMap<String, Vec<(f64, f64, &ResultRecord)>> = BTreeMap::new();
    for r in &run.results {
        let bw_unit = matches!(r.unit.as_str(), "GB/s" | "GiB/s" | "MB/s" | "MiB/s");
        if !bw_unit || !r.higher_is_better {
            continue;
        }
        // Cache-level bandwidth saturates for other reasons: memory only.
        if param_str(r, "scope").is_some_and(|sc| sc != bandwidth::DRAM_SCOPE && sc != "memory") {
            continue;
        }
        let Some(v) = r.value else { continue };
        let Some(k) = ["threads", "cores", "threads_per_node", "cores_per_node"]
            .iter()
            .find_map(|p| param_num(r, p))
        else {
            continue;
        };
        let mut rest = r.params.clone();
        for p in [
            "threads",
            "cores",
            "threads_per_node",
            "cores_per_node",
            "cpus",
        ] {
            rest.remove(p);
        }
        let g = format!(
            "{}:{}:{}:{}",
            r.experiment,
            r.metric,
            r.unit,
            serde_json::to_string(&rest).unwrap_or_default()
        );
        groups.entry(g).or_default().push((k, v, r));
    }
    // One finding per experiment, node and placement: the variant with the highest peak.
    let mut best: BTreeMap<String, (f64, Finding)> = BTreeMap::new();
    for (_, mut pts) in groups {
        if pts.len() < 3 {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let max = pts.iter().map(|p| p.1).fold(0.0f64, f64::max);
        let kmax = pts.last().map(|p| p.0).unwrap_or(0.0);
        let Some(sat) = pts.iter().find(|p| p.1 >= NEAR_MAX * max) else {
            continue;
        };
        if sat.0 >= kmax || max <= 0.0 {
            continue;
        }
        // It must actually have grown before: a flat curve says nothing about saturation.
        if pts[0].1 > NEAR_MAX * max {
            continue;
        }
        let r = sat.2;
        let node = ["node", "mem_node", "cpu_node"]
            .iter()
            .find_map(|p| param_str(r, p));
        let scope = node
            .map(|n| format!("node {n}"))
            .unwrap_or_else(|| "the measured CPUs".into());
        let evidence = pts
            .iter()
            .map(|(k, v, rec)| {
                ev(
                    format!("{}: {} with {k} thread(s)", rec.experiment, rec.metric),
                    format!("{} {}", fmt_num(*v), rec.unit),
                    from_result(rec),
                )
            })
            .collect();
        let recs: Vec<&ResultRecord> = pts.iter().map(|p| p.2).collect();
        let where_key = format!(
            "{}|{scope}|{}",
            r.experiment,
            param_str(r, PLACEMENT_PARAM).unwrap_or_default()
        );
        // Each placement is its own curve: say which one this is.
        let placed = param_str(r, PLACEMENT_PARAM)
            .map(|p| {
                let words = Placement::parse(&p).map(Placement::words).unwrap_or(&p);
                format!(" with threads {words}")
            })
            .unwrap_or_default();
        let f = Finding {
            rule: "memory-bandwidth-saturation",
            severity: Severity::Advice,
            title: format!(
                "memory bandwidth of {scope} saturates at {} thread(s){placed}: {} of {} {} peak ({} threads measured)",
                sat.0,
                fmt_num(sat.1),
                fmt_num(max),
                r.unit,
                kmax
            ),
            advice: format!(
                "More than {} memory-bound threads on {scope} add no bandwidth, only queueing. Spread \
                 memory-bound work across nodes (each node's controllers give their own bandwidth) and use \
                 the remaining cores for compute-bound work.{}",
                sat.0,
                noisy_note(&recs)
            ),
            evidence,
        };
        if best.get(&where_key).is_none_or(|b| max > b.0) {
            best.insert(where_key, (max, f));
        }
    }
    best.into_values().map(|(_, f)| f).collect()
}

const WIDE_SIMD: &[&str] = &[
    "avx", "avx2", "avx512", "avx-512", "avx512f", "amx", "sve", "sve2", "fma", "256", "512",
];

fn simd_of(r: &ResultRecord) -> Option<String> {
    [
        "isa", "simd", "variant", "width", "vector", "kernel", "level",
    ]
    .iter()
    .find_map(|k| param_str(r, k))
}

fn is_wide(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    WIDE_SIMD.iter().any(|w| l.contains(w))
}

/// A second hardware thread adds little to wide-SIMD throughput (< 15%).
pub fn smt_yield_wide_simd(run: &Run) -> Vec<Finding> {
    const LOW: f64 = 1.15;
    let mut out = Vec::new();
    // (a) Explicit yields: metric mentions smt and yield/gain/scaling, unit "x" (ratio) or "%" (gain).
    for r in &run.results {
        let m = r.metric.to_ascii_lowercase();
        if !(m.contains("smt") && (m.contains("yield") || m.contains("gain") || m.contains("scal")))
        {
            continue;
        }
        let (Some(v), Some(isa)) = (r.value, simd_of(r)) else {
            continue;
        };
        if !is_wide(&isa) {
            continue;
        }
        // "x"/"ratio": all threads over one per core; "%": the gain;
        // "cores": what each extra hardware thread adds, as a fraction of a core.
        let y = match r.unit.as_str() {
            "x" | "ratio" | "×" => v,
            "%" => 1.0 + v / 100.0,
            "cores" => 1.0 + v,
            _ => continue,
        };
        if y >= LOW {
            continue;
        }
        out.push(smt_finding(
            &isa,
            y,
            vec![ev(
                format!("SMT yield for {isa} ({})", r.metric),
                format!("{} {}", fmt_num(v), r.unit),
                from_result(r),
            )],
            &[r],
        ));
    }
    if !out.is_empty() {
        return out;
    }
    // (b) Throughput with one thread per core vs all hardware threads, same other params.
    for a in &run.results {
        if !a.higher_is_better || param_str(a, "threads").as_deref() != Some("per_core") {
            continue;
        }
        let (Some(va), Some(isa)) = (a.value, simd_of(a)) else {
            continue;
        };
        if !is_wide(&isa) {
            continue;
        }
        let mut want = a.params.clone();
        want.insert("threads".into(), Value::from("all"));
        let Some(b) = run.results.iter().find(|b| {
            b.experiment == a.experiment
                && b.metric == a.metric
                && b.unit == a.unit
                && b.params == want
        }) else {
            continue;
        };
        let Some(vb) = b.value else { continue };
        if va <= 0.0 {
            continue;
        }
        let y = vb / va;
        if y >= LOW {
            continue;
        }
        out.push(smt_finding(
            &isa,
            y,
            vec![
                ev(
                    format!("{} ({isa}), one thread per core", a.metric),
                    format!("{} {}", fmt_num(va), a.unit),
                    from_result(a),
                ),
                ev(
                    format!("{} ({isa}), every hardware thread", b.metric),
                    format!("{} {}", fmt_num(vb), b.unit),
                    from_result(b),
                ),
            ],
            &[a, b],
        ));
    }
    out
}

fn smt_finding(isa: &str, y: f64, evidence: Vec<Evidence>, recs: &[&ResultRecord]) -> Finding {
    Finding {
        rule: "smt-yield-wide-simd",
        severity: Severity::Advice,
        title: format!(
            "SMT adds {:+.0}% to {isa} throughput: the second hardware thread of a core competes for the same vector units",
            (y - 1.0) * 100.0
        ),
        advice: format!(
            "For {isa} code, run as many threads as physical cores, not logical CPUs (one per core, \
             e.g. the first sibling of each core): the extra threads add contention, cache pressure and \
             jitter, not throughput. Scalar and SSE code may still gain from SMT.{}",
            noisy_note(recs)
        ),
        evidence,
    }
}

/// The clock falls when every core is busy (≥ 5% below one core).
pub fn all_core_frequency_drop(run: &Run) -> Vec<Finding> {
    const DROP: f64 = 0.05;
    let (Some(s), Some(a)) = (
        measured(run, frequency::SINGLE_CORE),
        measured(run, frequency::ALL_CORES),
    ) else {
        return Vec::new();
    };
    let (Some(vs), Some(va)) = (s.value, a.value) else {
        return Vec::new();
    };
    if vs <= 0.0 {
        return Vec::new();
    }
    let drop = 1.0 - va / vs;
    if drop < DROP {
        return Vec::new();
    }
    let n = a.data_as::<TeamClockData>().map(|d| d.per_thread_ghz.len());
    let threads = n
        .map(|n| format!("{n} cores"))
        .unwrap_or_else(|| "all cores".into());
    vec![Finding {
        rule: "all-core-frequency-drop",
        severity: Severity::Advice,
        title: format!(
            "the clock drops {:.0}% with {threads} busy: {} GHz on one core, {} GHz on all",
            drop * 100.0,
            fmt_num(vs),
            fmt_num(va)
        ),
        advice: format!(
            "Per-core throughput with every core busy is at most {:.0}% of a lone core's: size parallel \
             work (and read single-thread benchmarks) with the all-core clock, keep boost enabled, and do \
             not expect N threads to give N times one thread.{}",
            va / vs * 100.0,
            noisy_note(&[s, a])
        ),
        evidence: vec![
            ev("one core", format!("{} GHz", fmt_num(vs)), from_result(s)),
            ev(
                format!("{threads} at once, per core"),
                format!("{} GHz", fmt_num(va)),
                from_result(a),
            ),
        ],
    }]
}

/// The measured clock differs from what the machine declares (> 5%).
pub fn declared_vs_measured_frequency(run: &Run) -> Vec<Finding> {
    const OFF: f64 = 0.05;
    let Some(s) = measured(run, frequency::SINGLE_CORE) else {
        return Vec::new();
    };
    let Some(v) = s.value else {
        return Vec::new();
    };
    let Some(decl) = s.data_as::<SingleCoreData>().map(|d| d.declared) else {
        return Vec::new();
    };
    let mhz = v * 1000.0;
    let mut below = Vec::new();
    let mut above = Vec::new();
    for (k, label, value) in [
        (
            "cpufreq_max_mhz",
            "cpufreq maximum (cpuinfo_max_freq)",
            decl.cpufreq_max_mhz,
        ),
        (
            "model_name_mhz",
            "the model name's clock",
            decl.model_name_mhz,
        ),
        ("cpuinfo_mhz", "/proc/cpuinfo 'cpu MHz'", decl.cpuinfo_mhz),
        (
            "cpufreq_base_mhz",
            "cpufreq base frequency",
            decl.cpufreq_base_mhz,
        ),
    ] {
        let Some(d) = value.filter(|d| *d > 0.0) else {
            continue;
        };
        let ratio = mhz / d;
        let e = ev(
            format!("declared: {label}"),
            format!("{d:.0} MHz"),
            format!("result {} (data.declared.{k})", s.key),
        );
        if ratio < 1.0 - OFF && k == "cpufreq_max_mhz" {
            below.push((e, ratio));
        } else if ratio > 1.0 + OFF && (k == "model_name_mhz" || k == "cpufreq_base_mhz") {
            above.push((e, ratio));
        } else if (ratio - 1.0).abs() > OFF && k == "cpuinfo_mhz" {
            if ratio < 1.0 {
                below.push((e, ratio));
            } else {
                above.push((e, ratio));
            }
        }
    }
    let measured_ev = ev(
        "measured: one core",
        format!("{mhz:.0} MHz"),
        from_result(s),
    );
    let mut out = Vec::new();
    if !below.is_empty() {
        let worst = below.iter().map(|b| b.1).fold(f64::INFINITY, f64::min);
        let gov = run.environment.governor.clone();
        let mut evidence = vec![measured_ev.clone()];
        evidence.extend(below.into_iter().map(|b| b.0));
        if let Some(g) = &gov {
            evidence.push(ev("cpufreq governor", g.clone(), "environment.governor"));
        }
        out.push(Finding {
            rule: "declared-vs-measured-frequency",
            severity: Severity::Warning,
            title: format!(
                "one core runs {:.0}% below the clock the machine declares",
                (1.0 - worst) * 100.0
            ),
            advice: format!(
                "The core does not reach its declared clock. Check the governor{} and energy preference \
                 (performance), whether boost/turbo is disabled, power or thermal limits, and in a VM the \
                 host's CPU quota. Use the measured GHz, not the declared one, to turn times into cycles.",
                gov.map(|g| format!(" (now {g})")).unwrap_or_default()
            ) + &noisy_note(&[s]),
            evidence,
        });
    }
    if !above.is_empty() {
        let best = above.iter().map(|b| b.1).fold(0.0f64, f64::max);
        let mut evidence = vec![measured_ev];
        evidence.extend(above.into_iter().map(|b| b.0));
        out.push(Finding {
            rule: "declared-vs-measured-frequency",
            severity: Severity::Advice,
            title: format!(
                "one core runs {:.0}% above the nominal clock (turbo)",
                (best - 1.0) * 100.0
            ),
            advice: "The nominal clock understates what one core runs at: turn times into cycles with the \
                     measured clock, and compare machines by measured, not nominal, frequency. Expect less \
                     with many cores busy (see the all-core figure)."
                .into(),
            evidence,
        });
    }
    out
}

// ------------------------------------------------------------ rendering

/// Channels empty while others hold DIMMs, or DIMMs of mixed sizes or
/// speeds: the controller interleaves over fewer or unequal channels, a
/// common cause of lost bandwidth. Not on a table a hypervisor invented.
pub fn dimm_population(run: &Run) -> Vec<Finding> {
    let m = run.machine_info();
    let md = &m.memory_devices;
    if md.dimms.is_empty() || md.notes.iter().any(|n| n.contains("invented")) {
        return Vec::new();
    }
    let s = &md.summary;
    let mut all: Vec<&str> = md
        .dimms
        .iter()
        .filter_map(|d| d.channel.as_deref())
        .collect();
    all.sort_unstable();
    all.dedup();
    let mut used: Vec<&str> = md
        .dimms
        .iter()
        .filter(|d| d.populated())
        .filter_map(|d| d.channel.as_deref())
        .collect();
    used.sort_unstable();
    used.dedup();
    let empty_channels: Vec<&str> = all.iter().filter(|c| !used.contains(c)).copied().collect();
    let mixed = s.sizes.len() > 1 || s.speeds_mts.len() > 1;
    if empty_channels.is_empty() && !mixed {
        return Vec::new();
    }
    let mut evidence = Vec::new();
    let mut what = Vec::new();
    if !empty_channels.is_empty() {
        what.push(format!(
            "{} of {} memory channels empty",
            empty_channels.len(),
            all.len()
        ));
        evidence.push(ev(
            "channels without a DIMM (from the slot locators)",
            empty_channels.join(", "),
            "machine memory_devices.dimms (SMBIOS type 17)",
        ));
    }
    if mixed {
        what.push(
            s.balance_note
                .clone()
                .unwrap_or_else(|| "mixed DIMMs".into()),
        );
        evidence.push(ev(
            "DIMM sizes and speeds",
            format!("{} size(s), speeds {:?} MT/s", s.sizes.len(), s.speeds_mts),
            "machine memory_devices.summary",
        ));
    }
    if let Some(b) = &md.theoretical_bandwidth {
        evidence.push(ev(
            "theoretical DRAM bandwidth of the populated channels",
            format!("{} GB/s", fmt_num(b.gbs)),
            "machine memory_devices.theoretical_bandwidth",
        ));
    }
    let eff = run
        .records(bandwidth::TRIAD)
        .filter(|r| r.value.is_some())
        .filter_map(|r| Some((r, r.data_as::<BandwidthData>()?.dram_efficiency?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((r, e)) = eff {
        evidence.push(ev(
            "best triad against that theoretical bandwidth",
            format!("{:.0}%", e * 100.0),
            from_result(r),
        ));
    }
    vec![Finding {
        rule: "dimm-population",
        severity: if empty_channels.is_empty() { Severity::Advice } else { Severity::Warning },
        title: format!("unbalanced memory population: {}", what.join("; ")),
        advice: "Memory bandwidth scales with the populated channels, and the controller interleaves evenly only over channels with the same capacity and speed: populate every channel of every socket alike (same size, rank and speed) before comparing this machine's bandwidth with its peers."
            .into(),
        evidence,
    }]
}

/// A cache level's measured load-to-use cycles more than 20% off the
/// core's published figure (the latency experiment marks them).
pub fn cache_latency_vs_published(run: &Run) -> Vec<Finding> {
    use crate::experiments::memory::latency;
    use crate::experiments::memory::payload::PublishedData;
    let mut out = Vec::new();
    for id in [latency::L1D_CYCLES, latency::L2_CYCLES, latency::L3_CYCLES] {
        // One finding per level: the 2 MiB-page curve first (no TLB cost).
        let mut recs: Vec<&ResultRecord> = run
            .records(id)
            .filter(|r| r.value.is_some())
            .filter(|r| r.data_as::<PublishedData>().and_then(|d| d.finding) == Some(true))
            .collect();
        recs.sort_by_key(|r| param_str(r, "pages").as_deref() != Some("2m"));
        let Some(r) = recs.first() else {
            continue;
        };
        let d = r.data_as::<PublishedData>().unwrap_or_default();
        let (Some(m), Some(p)) = (r.value, d.published_cycles) else {
            continue;
        };
        let level = id.metric.trim_end_matches("_cycles");
        out.push(Finding {
            rule: "cache-latency-vs-published",
            severity: Severity::Advice,
            title: format!(
                "{level} latency measured {} cycles, published {} ({:+.0}%)",
                fmt_num(m),
                fmt_num(p),
                (m / p - 1.0) * 100.0
            ),
            advice: format!(
                "The measured {level} plateau is not what this core's documentation gives. In a VM the cache may be shared with other tenants or partitioned by the host; on 4 KiB pages the plateau may be TLB misses rather than the cache; a cache the kernel declares with a different size moves the step. Check the latency curve (cpuscope show RUN --all) before sizing work to this level. Published figure: {}.",
                d.published_source.as_deref().unwrap_or("knowledge base")
            ),
            evidence: vec![
                ev(format!("measured {level} load-to-use"), format!("{} cycles", fmt_num(m)), from_result(r)),
                ev(
                    format!("published {level} load-to-use"),
                    format!("{} cycles", fmt_num(p)),
                    "machine uarch (data/uarch/)",
                ),
            ],
        });
    }
    out
}

/// Findings as text (for `show` and `run`): empty string when there are none.
pub fn render_text(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let mut out = String::from("Advice (from this run's own figures)\n");
    for f in findings {
        let sev = match f.severity {
            Severity::Warning => "warning",
            Severity::Advice => "advice",
        };
        // Findings quote the run's own strings (governor, knob values,
        // reasons): one terminal line each, whatever the document holds.
        let _ = writeln!(out, "  [{sev}] {}", for_terminal(&f.title));
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "      evidence: {} = {}  ({})",
                for_terminal(&e.what),
                for_terminal(&e.value),
                for_terminal(&e.source)
            );
        }
        let _ = writeln!(out, "      what to do: {}", for_terminal(&f.advice));
    }
    out
}

/// Findings as an HTML section (empty when there are none).
pub fn render_html(findings: &[Finding]) -> String {
    use crate::base::html::esc;
    if findings.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2>Advice</h2><p class=\"note\">From this run's own figures; each finding lists the figures behind it.</p>");
    for f in findings {
        let (sev, colour) = match f.severity {
            Severity::Warning => ("warning", "#b35900"),
            Severity::Advice => ("advice", "#2f6f9f"),
        };
        let _ = write!(
            h,
            "<div class=\"finding\" style=\"border-left:4px solid {colour};padding:.2em .8em;margin:.6em 0\"><b style=\"color:{colour}\">{sev}</b> {}<ul>",
            esc(&f.title)
        );
        for e in &f.evidence {
            let _ = write!(
                h,
                "<li>{} = <b>{}</b> <span class=\"note\">({})</span></li>",
                esc(&e.what),
                esc(&e.value),
                esc(&e.source)
            );
        }
        let _ = write!(h, "</ul><div>{}</div></div>", esc(&f.advice));
    }
    h
}

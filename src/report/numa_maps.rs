//! Text of `cpuscope numa-maps PID`: the numa-maps-summary.pl table, with
//! bytes computed at each mapping's real page size.

use crate::base::fmt::{for_terminal, for_terminal_lines};
use crate::machine::process::{Amount, NumaSummary, ProcessNuma};
use std::fmt::Write as _;

/// Unit for the size column: GiB like numa-maps-summary.pl, MiB for small processes.
#[derive(Clone, Copy)]
enum Unit {
    GiB,
    MiB,
}

fn line(out: &mut String, label: &str, a: &Amount, unit: Unit) {
    let (v, u) = match unit {
        Unit::GiB => (a.gib(), "GiB"),
        Unit::MiB => (a.bytes as f64 / (1u64 << 20) as f64, "MiB"),
    };
    let _ = writeln!(out, "{label:<10}: {:>12} ({v:>8.2} {u})", a.pages);
}

/// Render the summary as text. The process names itself (`comm`, any
/// bytes its owner chose): it and every other value reach the terminal
/// escaped.
pub fn render(p: &ProcessNuma) -> String {
    for_terminal_lines(&summary(p)).into_owned()
}

fn summary(p: &ProcessNuma) -> String {
    let mut out = String::new();
    header(p, &mut out);
    if p.summary.mappings == 0 {
        let _ = writeln!(out, "no mappings: {}", not_available(p, "mappings"));
        return out;
    }
    amounts(&p.summary, &mut out);
    balancing(p, &mut out);
    numastat_table(p, &mut out);
    node_counters(p, &mut out);
    out
}

/// `not available` with the reason recorded for `k` (or for the status file).
fn not_available(p: &ProcessNuma, k: &str) -> String {
    p.unavailable
        .get(k)
        .or_else(|| p.unavailable.get("status"))
        .map(|r| format!("not available: {}", for_terminal(r)))
        .unwrap_or_else(|| "not available".into())
}

/// The process, its threads, its allowed CPUs and nodes.
fn header(p: &ProcessNuma, out: &mut String) {
    let name = for_terminal(p.status.name.as_deref().unwrap_or("?"));
    let threads = p
        .status
        .threads
        .map(|t| format!(", {t} threads"))
        .unwrap_or_default();
    let _ = writeln!(out, "pid {} ({name}){threads}", p.pid);
    let na = |k: &str| not_available(p, k);
    let cpus = p
        .status
        .cpus_allowed_list
        .as_ref()
        .map(|c| format!("{c} ({} CPUs)", c.len()))
        .unwrap_or_else(|| na("cpus_allowed_list"));
    let mems = p
        .status
        .mems_allowed_list
        .as_ref()
        .map(|c| c.to_string())
        .unwrap_or_else(|| na("mems_allowed_list"));
    let _ = writeln!(out, "allowed CPUs : {cpus}");
    let _ = writeln!(out, "allowed nodes: {mems}");
}

/// Resident memory per node and by kind, page sizes, the largest share,
/// the memory policies.
fn amounts(s: &NumaSummary, out: &mut String) {
    let _ = writeln!(out);
    let unit = if s.total.bytes >= 1 << 30 {
        Unit::GiB
    } else {
        Unit::MiB
    };
    for n in &s.per_node {
        line(out, &format!("N{}", n.node), &n.amount, unit);
    }
    line(out, "total", &s.total, unit);
    line(out, "active", &s.active, unit);
    line(out, "anon", &s.anon, unit);
    line(out, "dirty", &s.dirty, unit);
    line(out, "mapped", &s.mapped, unit);
    line(out, "file", &s.file, unit);
    if s.swapcache.pages > 0 {
        line(out, "swapcache", &s.swapcache, unit);
    }
    if s.writeback.pages > 0 {
        line(out, "writeback", &s.writeback, unit);
    }
    line(out, "huge", &s.huge, unit);
    let _ = writeln!(
        out,
        "{:<10}: {:>12} (most processes sharing one page)",
        "mapmax", s.mapmax
    );
    let sizes: Vec<String> = s.page_sizes_kb.iter().map(|k| format!("{k} kB")).collect();
    let _ = writeln!(
        out,
        "\n{} mappings, {} with resident pages; page sizes: {}",
        s.mappings,
        s.mappings_resident,
        if sizes.is_empty() {
            "none".into()
        } else {
            sizes.join(", ")
        }
    );
    if s.page_sizes_kb.iter().any(|k| *k != 4) {
        let _ = writeln!(
            out,
            "pages are counted in each mapping's own page size; GiB uses the real size"
        );
    }
    if total_nonzero(s.total.bytes) && s.per_node.len() > 1 {
        let max = s.per_node.iter().max_by_key(|n| n.amount.bytes);
        if let Some(m) = max {
            let pct = 100.0 * m.amount.bytes as f64 / s.total.bytes as f64;
            let _ = writeln!(
                out,
                "largest share: node {} holds {pct:.1}% of resident memory",
                m.node
            );
        }
    }
    if s.policies.len() > 1 || s.policies.first().is_some_and(|p| p.policy != "default") {
        let parts: Vec<String> = s
            .policies
            .iter()
            .map(|p| {
                format!(
                    "{} {:.2} GiB ({} mappings)",
                    p.policy,
                    p.amount.gib(),
                    p.mappings
                )
            })
            .collect();
        let _ = writeln!(out, "memory policies: {}", parts.join("; "));
    }
}

/// What NUMA balancing did to the main thread.
fn balancing(p: &ProcessNuma, out: &mut String) {
    match &p.sched {
        Some(sc) => {
            let mut parts = Vec::new();
            if let Some(n) = sc.numa_preferred_nid {
                parts.push(if n < 0 {
                    "no preferred node".to_string()
                } else {
                    format!("preferred node {n}")
                });
            }
            if let Some(m) = sc.numa_pages_migrated {
                parts.push(format!("{m} pages migrated"));
            }
            if let Some(f) = sc.total_numa_faults {
                parts.push(format!("{f} NUMA hinting faults"));
            }
            let _ = writeln!(out, "NUMA balancing (main thread): {}", parts.join(", "));
        }
        None => {
            let _ = writeln!(
                out,
                "NUMA balancing: not available: {}",
                not_available(p, "sched")
            );
        }
    }
}

/// `numastat -p PID`: the process's memory per node by kind, MiB.
fn numastat_table(p: &ProcessNuma, out: &mut String) {
    if !p.numastat.is_empty() {
        // numastat -p PID: the process's memory per node by kind, MiB.
        let mib = |b: u64| format!("{:.2}", b as f64 / (1u64 << 20) as f64);
        let mut rows: Vec<Vec<String>> = vec![std::iter::once("numastat -p (MiB)".to_string())
            .chain(p.numastat.iter().map(|n| format!("Node {}", n.node)))
            .chain(std::iter::once("Total".to_string()))
            .collect()];
        type Pick = fn(&crate::machine::process::ProcNodeStat) -> u64;
        let kinds: [(&str, Pick); 5] = [
            ("Huge", |n| n.huge_bytes),
            ("Heap", |n| n.heap_bytes),
            ("Stack", |n| n.stack_bytes),
            ("Private", |n| n.private_bytes),
            ("Total", |n| n.total_bytes),
        ];
        for (label, f) in kinds {
            let total: u64 = p.numastat.iter().map(f).sum();
            rows.push(
                std::iter::once(label.to_string())
                    .chain(p.numastat.iter().map(|n| mib(f(n))))
                    .chain(std::iter::once(mib(total)))
                    .collect(),
            );
        }
        let _ = writeln!(out);
        out.push_str(&crate::base::fmt::columns(&rows, "  "));
    }
}

/// The node counters of the process's nodes and the system-wide NUMA counters.
fn node_counters(p: &ProcessNuma, out: &mut String) {
    if !p.node_counters.is_empty() {
        let _ = writeln!(
            out,
            "node counters of those nodes (nodeN/numastat, all processes, pages since boot):"
        );
        for n in &p.node_counters {
            let parts: Vec<String> = n
                .counters
                .fields()
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{k} {}",
                        v.map(|x| x.to_string()).unwrap_or_else(|| "n/a".into())
                    )
                })
                .collect();
            let _ = writeln!(out, "  node {}: {}", n.node, parts.join(", "));
        }
    }
    if !p.vmstat_numa.is_empty() {
        let g = |k: &str| p.vmstat_numa.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "system-wide (/proc/vmstat): numa_hit {} numa_miss {} numa_foreign {} \
             numa_pages_migrated {}",
            g("numa_hit"),
            g("numa_miss"),
            g("numa_foreign"),
            g("numa_pages_migrated")
        );
    }
}

fn total_nonzero(b: u64) -> bool {
    b > 0
}

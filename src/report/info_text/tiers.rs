//! `cpuscope info`'s memory-tier section: what the firmware (ACPI HMAT) and
//! the kernel declare per memory node (machine/memory_tiers.rs). Nothing
//! when nothing is declared (the JSON's `memory_tiers.note` says why).

use crate::base::fmt::{fmt_bytes, for_terminal};
use crate::machine::memory_tiers::{Access, MemoryTiers, NodeTier};
use std::fmt::Write as _;

/// Latency and bandwidth, whichever the firmware gave.
fn figures(lat: Option<u64>, bw: Option<u64>) -> Option<String> {
    let parts: Vec<String> = [
        lat.map(|v| format!("{v} ns")),
        bw.map(|v| format!("{v} MB/s")),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One access class: who it is for, then read (and write where it differs).
fn access_line(a: &Access, also_cpus: bool) -> String {
    let who = match (a.class, also_cpus) {
        (0, true) => "any initiator = CPUs",
        (0, false) => "any initiator",
        (1, _) => "CPUs",
        _ => "initiators",
    };
    let read = figures(a.read_latency_ns, a.read_bandwidth_mb_s);
    let write = figures(a.write_latency_ns, a.write_bandwidth_mb_s);
    let figs = match (&read, &write) {
        (None, None) => "no figures given".to_string(),
        (Some(r), Some(w)) if r == w => format!("read/write {r}"),
        (Some(r), None) => format!("read {r}"),
        (r, Some(w)) => format!("read {}, write {w}", r.as_deref().unwrap_or("n/a")),
    };
    format!(
        "access{} ({who}, from nodes {}): {figs}",
        a.class, a.initiators
    )
}

fn node_lines(n: &NodeTier, out: &mut String) {
    let tier = n
        .tier
        .map(|t| format!(" (memory_tier{t})"))
        .unwrap_or_default();
    let head = format!("node {}{tier}", n.node);
    let mut first = true;
    let mut line = |out: &mut String, text: String| {
        let label = if first { head.as_str() } else { "" };
        first = false;
        let _ = writeln!(out, "  {label:<23} {text}");
    };
    if let Some(kind) = n.kind() {
        line(out, format!("{kind} node"));
    }
    if n.access.is_empty() && n.side_caches.is_empty() {
        line(out, "no HMAT figures".into());
    }
    // access1 is printed only where it differs from access0.
    let same = matches!(&n.access[..], [a0, a1] if a0.class == 0 && a0.same_as(a1));
    for a in n.access.iter().take(if same { 1 } else { 2 }) {
        line(out, access_line(a, same));
    }
    for c in &n.side_caches {
        line(
            out,
            format!(
                "memory-side cache {}: {}, line {}, {}, {}",
                c.level,
                c.size_bytes.map_or("size n/a".into(), fmt_bytes),
                c.line_bytes.map_or("n/a".into(), |b| format!("{b} B")),
                c.indexing.as_deref().unwrap_or("indexing n/a"),
                c.write_policy.as_deref().unwrap_or("write policy n/a"),
            ),
        );
    }
}

/// The section: one line per access class and memory-side cache of each
/// node, then the kernel's tiers.
pub fn section(t: &MemoryTiers) -> String {
    if t.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "Memory tiers (declared by the firmware's HMAT: nodeN/accessC/initiators, memory_side_cache)\n",
    );
    for n in &t.nodes {
        node_lines(n, &mut out);
    }
    if !t.tiers.is_empty() {
        let tiers: Vec<String> = t
            .tiers
            .iter()
            .map(|(k, nodes)| format!("memory_tier{k}: nodes {nodes}"))
            .collect();
        let _ = writeln!(
            out,
            "  {:<23} {} (fastest first)",
            "kernel tiers",
            tiers.join(" · ")
        );
    }
    table_lines(t, &mut out);
    out
}

/// The raw table's memory pairs, one line per figure kind (initiator →
/// target), or why it was not read when sysfs declares something.
fn table_lines(t: &MemoryTiers, out: &mut String) {
    let h = &t.hmat_table;
    if !h.read {
        if t.declared {
            if let Some(why) = &h.note {
                let _ = writeln!(out, "  {:<23} {}", "raw HMAT table", for_terminal(why));
            }
        }
        return;
    }
    let mut kinds: Vec<&str> = Vec::new();
    for p in h.pairs.iter().filter(|p| p.hierarchy == "memory") {
        if !kinds.contains(&p.data_type.as_str()) {
            kinds.push(&p.data_type);
        }
    }
    let mut first = true;
    for k in kinds {
        let unit = if k.ends_with("_latency") {
            "ns"
        } else {
            "MB/s"
        };
        let cells: Vec<String> = h
            .pairs
            .iter()
            .filter(|p| p.hierarchy == "memory" && p.data_type == k)
            .map(|p| {
                let v = p
                    .value
                    .map_or("unreachable".into(), |v| format!("{v} {unit}"));
                format!("{}→{} {v}", p.initiator_pxm, p.target_pxm)
            })
            .collect();
        let label = if first {
            format!("raw HMAT ({} B, PXM)", h.bytes)
        } else {
            String::new()
        };
        first = false;
        let _ = writeln!(
            out,
            "  {label:<23} {}: {}",
            k.replace('_', " "),
            cells.join(", ")
        );
    }
    if first {
        let _ = writeln!(
            out,
            "  {:<23} read, no memory latency or bandwidth pair",
            "raw HMAT table"
        );
    }
}

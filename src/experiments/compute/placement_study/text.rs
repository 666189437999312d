//! Text of placement: the relative placement tables and the plan. Renders stored records; never measures.

use crate::base::fmt::columns_ragged;
use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::compute::payload::{MemoryPlacementData, SetThroughputData};
use crate::experiments::compute::placement_plan::Plan;
use crate::experiments::compute::placement_study;
use crate::experiments::compute::text::{na, of, param};
use crate::results::schema::ResultRecord;
use serde_json::Value;
use std::fmt::Write as _;

/// Placement: one relative table per comparison and workload, then memory.
pub fn render_placement(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let t = of(rs, placement_study::THROUGHPUT);
    let m = of(rs, placement_study::MEMORY_LATENCY);
    if t.is_empty() && m.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "Placement (relative to the best set of each comparison)"
    );
    if let Some(p) = of(rs, placement_study::PLAN).first() {
        for n in &p.notes {
            let _ = writeln!(out, "  note: {}", for_terminal(n));
        }
    }
    out.push_str(&comparison_tables(&t));
    out.push_str(&seed_reference_table(&t));
    if !m.is_empty() {
        out.push_str(&memory_table(&m));
    }
    out
}

/// One relative table per comparison and workload of the throughput records
/// `t`, in the order they first come.
fn comparison_tables(t: &[&ResultRecord]) -> String {
    let mut out = String::new();
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in t {
        let k = (
            param(r, "comparison").unwrap_or("?").to_string(),
            param(r, "workload").unwrap_or("?").to_string(),
        );
        if !groups.contains(&k) {
            groups.push(k);
        }
    }
    for (c, w) in groups {
        let rows_in: Vec<&&ResultRecord> = t
            .iter()
            .filter(|r| param(r, "comparison") == Some(&c) && param(r, "workload") == Some(&w))
            .collect();
        let unit = rows_in.first().map(|r| r.unit.clone()).unwrap_or_default();
        let _ = writeln!(out, "  {c} / {w} ({unit})");
        let mut rows = Vec::new();
        for r in rows_in {
            let set = param(r, "set").unwrap_or("?").to_string();
            match r.value {
                Some(v) => {
                    let d = r.data_as::<SetThroughputData>().unwrap_or_default();
                    rows.push(vec![
                        set,
                        d.cpus,
                        format!("{}{}", fmt_num(v), if r.is_noisy() { " NOISY" } else { "" }),
                        d.relative_pct
                            .map(|p| format!("{p:.1}%"))
                            .unwrap_or_default(),
                    ])
                }
                None => rows.push(vec![set, na(r)]),
            }
        }
        out.push_str(&columns_ragged(&rows, "    "));
    }
    out
}

/// Seed 000's published reference, from the first throughput record that
/// carries it (empty without).
fn seed_reference_table(t: &[&ResultRecord]) -> String {
    let mut out = String::new();
    if let Some(reference) = t
        .iter()
        .find_map(|r| r.data_as::<SetThroughputData>()?.seed_reference)
    {
        if let Some(rows) = reference.rows {
            let _ = writeln!(
                out,
                "  seed 000 reference (published, Kunpeng 920 tpmC, 4 cores):"
            );
            let mut tr = Vec::new();
            for r in rows {
                tr.push(vec![
                    r.cpus.unwrap_or_default(),
                    r.set.unwrap_or_default(),
                    // As JSON writes it (14460.0; null without a figure).
                    Value::from(r.tpm_c).to_string(),
                    r.relative_pct
                        .map(|p| format!("{p:.1}%"))
                        .unwrap_or_default(),
                ]);
            }
            out.push_str(&columns_ragged(&tr, "    "));
        }
    }
    out
}

/// The memory placements' chase latencies `m`, one row each.
fn memory_table(m: &[&ResultRecord]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  memory placement (pointer chase, ns per load)");
    let mut rows = Vec::new();
    for r in m {
        let name = param(r, "memory").unwrap_or("?").to_string();
        match r.value {
            Some(v) => rows.push(vec![
                name,
                r.data_as::<MemoryPlacementData>()
                    .and_then(|d| d.policy)
                    .unwrap_or_default(),
                format!("{} ns", fmt_num(v)),
                r.notes.last().cloned().unwrap_or_default(),
            ]),
            None => rows.push(vec![name, na(r)]),
        }
    }
    out.push_str(&columns_ragged(&rows, "    "));
    out
}

/// The planner's choices, without measuring.
pub fn render_plan(p: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Placement plan for CPUs {} (spread sets of {} cores)",
        p.usable, p.spread_k
    );
    for n in &p.notes {
        let _ = writeln!(out, "  note: {}", for_terminal(n));
    }
    for c in &p.comparisons {
        let _ = writeln!(out, "  {}: {}", c.name, c.question);
        let mut rows = Vec::new();
        for s in &c.sets {
            match &s.cpus {
                Some(cpus) => rows.push(vec![s.name.clone(), cpus.to_string(), s.what.clone()]),
                None => rows.push(vec![
                    s.name.clone(),
                    format!(
                        "not applicable: {}",
                        s.not_applicable.as_deref().unwrap_or("?")
                    ),
                ]),
            }
        }
        out.push_str(&columns_ragged(&rows, "    "));
    }
    let _ = writeln!(out, "  memory: one thread, memory placed by policy");
    let mut rows = Vec::new();
    for m in &p.memory {
        match (&m.cpu, &m.policy_text) {
            (Some(c), Some(pt)) => rows.push(vec![
                m.name.clone(),
                format!("CPU {c}"),
                pt.clone(),
                m.what.clone(),
            ]),
            _ => rows.push(vec![
                m.name.clone(),
                format!(
                    "not applicable: {}",
                    m.not_applicable.as_deref().unwrap_or("?")
                ),
            ]),
        }
    }
    out.push_str(&columns_ragged(&rows, "    "));
    out
}

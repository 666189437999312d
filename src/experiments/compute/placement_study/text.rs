//! Placement's summary (and `cpuscope placement`'s text) as a typed
//! section: the relative placement tables, seed 000's reference and the
//! memory placements; and the plan as text. Renders stored records; never
//! measures.

use crate::base::fmt::columns_ragged;
use crate::base::fmt::for_terminal;
use crate::experiments::compute::payload::{MemoryPlacementData, SetThroughputData};
use crate::experiments::compute::placement_plan::Plan;
use crate::experiments::compute::placement_study;
use crate::experiments::compute::text::{of, param};
use crate::results::schema::ResultRecord;
use crate::view::{text, Align, Block, Cell, Figure, Section, Table};
use serde_json::Value;
use std::fmt::Write as _;

/// `cpuscope placement`'s text: its section, drawn by the text printer.
pub fn render_placement(rs: &[ResultRecord]) -> String {
    text::sections(&sections_of(rs))
}

/// Its section: the plan's notes, one relative table per comparison and
/// workload, seed 000's published reference, then memory.
pub fn sections_of(rs: &[ResultRecord]) -> Vec<Section> {
    let t = of(rs, placement_study::THROUGHPUT);
    let m = of(rs, placement_study::MEMORY_LATENCY);
    if t.is_empty() && m.is_empty() {
        return Vec::new();
    }
    let mut blocks: Vec<Block> = of(rs, placement_study::PLAN)
        .first()
        .map(|p| {
            p.notes
                .iter()
                .map(|n| Block::Note(format!("note: {n}")))
                .collect()
        })
        .unwrap_or_default();
    blocks.extend(comparison_tables(&t));
    blocks.extend(seed_reference_table(&t));
    if !m.is_empty() {
        blocks.push(Block::Table(memory_table(&m)));
    }
    vec![Section {
        id: placement_study::EXP.to_string(),
        title: "Placement (relative to the best set of each comparison)".into(),
        blocks,
    }]
}

/// A table of `headers`, the columns from `right` on right-aligned.
fn table(caption: String, headers: &[&str], right: usize) -> Table {
    let mut t = Table::new(headers);
    for c in t.columns.iter_mut().skip(right) {
        c.align = Align::Right;
    }
    t.caption = Some(caption);
    t
}

/// One relative table per comparison and workload of the throughput records
/// `t`, in the order they first come.
fn comparison_tables(t: &[&ResultRecord]) -> Vec<Block> {
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
    let mut out = Vec::new();
    for (c, w) in groups {
        let rows_in: Vec<&&ResultRecord> = t
            .iter()
            .filter(|r| param(r, "comparison") == Some(&c) && param(r, "workload") == Some(&w))
            .collect();
        let unit = rows_in.first().map(|r| r.unit.clone()).unwrap_or_default();
        let mut tb = table(
            format!("{c} / {w}"),
            &["set", "CPUs", "measured", "of the best"],
            2,
        );
        tb.columns[2].unit = Some(unit);
        for r in rows_in {
            let d = r.data_as::<SetThroughputData>().unwrap_or_default();
            let pct = d.relative_pct.map(|p| format!("{p:.1}%"));
            tb.rows.push(vec![
                Cell::Text(param(r, "set").unwrap_or("?").to_string()),
                Cell::Text(if r.value.is_some() {
                    d.cpus
                } else {
                    String::new()
                }),
                Cell::Figure(Figure::of(r)),
                Cell::Text(pct.filter(|_| r.value.is_some()).unwrap_or_default()),
            ]);
        }
        out.push(Block::Table(tb));
    }
    out
}

/// Seed 000's published reference, from the first throughput record that
/// carries it (none without).
fn seed_reference_table(t: &[&ResultRecord]) -> Option<Block> {
    let rows = t
        .iter()
        .find_map(|r| r.data_as::<SetThroughputData>()?.seed_reference)?
        .rows?;
    let mut tb = table(
        "seed 000 reference (published, Kunpeng 920 tpmC, 4 cores; not measured here)".into(),
        &["CPUs", "set", "tpmC", "of the best"],
        2,
    );
    for r in rows {
        tb.rows.push(vec![
            Cell::Text(r.cpus.unwrap_or_default()),
            Cell::Text(r.set.unwrap_or_default()),
            // As JSON writes it (14460.0; null without a figure).
            Cell::Text(Value::from(r.tpm_c).to_string()),
            Cell::Text(
                r.relative_pct
                    .map(|p| format!("{p:.1}%"))
                    .unwrap_or_default(),
            ),
        ]);
    }
    Some(Block::Table(tb))
}

/// The memory placements' chase latencies `m`, one row each.
fn memory_table(m: &[&ResultRecord]) -> Table {
    let mut tb = table(
        "memory placement (pointer chase, one thread)".into(),
        &["memory", "policy", "per load", "note"],
        2,
    );
    tb.columns[3].align = Align::Left;
    tb.columns[2].unit = Some("ns".into());
    for r in m {
        let measured = r.value.is_some();
        tb.rows.push(vec![
            Cell::Text(param(r, "memory").unwrap_or("?").to_string()),
            Cell::Text(
                r.data_as::<MemoryPlacementData>()
                    .and_then(|d| d.policy)
                    .filter(|_| measured)
                    .unwrap_or_default(),
            ),
            Cell::Figure(Figure::of(r)),
            Cell::Text(
                r.notes
                    .last()
                    .filter(|_| measured)
                    .cloned()
                    .unwrap_or_default(),
            ),
        ]);
    }
    tb
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

#[cfg(test)]
mod tests {
    use super::*;

    fn set(set: &str, v: Option<f64>, pct: f64) -> ResultRecord {
        let r = ResultRecord::of(placement_study::THROUGHPUT, "MB/s", true)
            .with_param("comparison", "numa")
            .with_param("workload", "compute")
            .with_param("set", set);
        match v {
            Some(v) => r.with_samples(vec![v]).with_payload(&SetThroughputData {
                cpus: "0-3".into(),
                relative_pct: Some(pct),
                ..SetThroughputData::default()
            }),
            None => ResultRecord {
                unavailable_reason: Some("not applicable: one <node>".into()),
                ..r
            },
        }
    }

    #[test]
    fn a_comparison_is_a_table_of_sets_and_memory_a_table_of_placements() {
        let rs = vec![
            set("same_node", Some(800.0), 100.0),
            set("cross_node", Some(600.0), 75.0),
            set("cross_socket", None, 0.0),
            ResultRecord::of(placement_study::MEMORY_LATENCY, "ns", false)
                .with_param("memory", "remote_far")
                .with_samples(vec![140.0])
                .with_payload(&MemoryPlacementData {
                    policy: Some("bind:3".into()),
                    ..MemoryPlacementData::default()
                })
                .with_note("distance 32"),
        ];
        let s = render_placement(&rs);
        let words = |k: &str| -> Vec<String> {
            let l = s.lines().find(|l| l.trim_start().starts_with(k));
            l.unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        assert!(
            s.starts_with(
                "Placement (relative to the best set of each comparison)\n  numa / compute\n"
            ),
            "{s}"
        );
        assert_eq!(
            words("set"),
            ["set", "CPUs", "measured", "MB/s", "of", "the", "best"],
            "{s}"
        );
        assert_eq!(
            words("cross_node"),
            ["cross_node", "0-3", "600.0", "75.0%"],
            "{s}"
        );
        assert_eq!(words("cross_socket"), ["cross_socket", "n/a"], "{s}");
        assert!(
            s.contains("n/a (cross_socket): not applicable: one <node>"),
            "{s}"
        );
        assert_eq!(
            words("remote_far"),
            ["remote_far", "bind:3", "140.0", "distance", "32"],
            "{s}"
        );
        assert!(sections_of(&[]).is_empty());
    }
}

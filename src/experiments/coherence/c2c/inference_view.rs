//! The latency groups inferred from a c2c matrix, as blocks (docs/views.md):
//! the groups' table (seed 001's form), the declared relations' medians,
//! the findings and notes. The summary, the report and `cpuscope c2c` draw
//! them through their printers. Renders stored records; never measures.

use crate::experiments::coherence::payload::{Inference, MeasuredLevel};
use crate::view::{Align, Block, Cell, Table};

/// The latency groups (or why none were inferred), the declared relations'
/// medians, the findings and the notes; `ghz` turns ns into cycles.
pub fn inference_blocks(inf: &Inference, ghz: Option<f64>) -> Vec<Block> {
    let mut out = Vec::new();
    match (&inf.not_inferred, inf.levels.is_empty()) {
        (Some(why), true) => out.push(Block::NotAvailable(format!(
            "Latency groups: not inferred: {why}"
        ))),
        (None, true) => out.push(Block::Plain(
            "Latency groups: none (no measured pair)".into(),
        )),
        _ => out.push(Block::Table(groups_table(&inf.levels, ghz))),
    }
    if !inf.relations.is_empty() {
        let mut t = Table::new(&["declared relation", "median ns", "range ns", "pairs"]);
        for c in t.columns.iter_mut().skip(1) {
            c.align = Align::Right;
        }
        t.caption = Some("By declared relation".into());
        for r in &inf.relations {
            let _ = t.push(vec![
                Cell::Text(r.label.clone()),
                Cell::Text(format!("{:.1}", r.median_ns)),
                Cell::Text(format!("{:.1}–{:.1}", r.min_ns, r.max_ns)),
                Cell::Text(r.pairs.to_string()),
            ]);
        }
        out.push(Block::Table(t));
    }
    if !inf.findings.is_empty() {
        out.push(Block::Heading("Findings".into()));
        out.push(Block::List(inf.findings.clone()));
    } else if inf.not_inferred.is_none() && !inf.levels.is_empty() {
        // Without groups there is nothing to agree or disagree with.
        out.push(Block::Plain(
            "Findings: the measured groups agree with the declared topology".into(),
        ));
    }
    out.extend(inf.notes.iter().map(|n| Block::Note(format!("note: {n}"))));
    out
}

/// A row per group: its latency (and cycles), its increment over the group
/// before and over group 1, its range and pairs, its groups of CPUs, how
/// many CPUs each CPU reaches first at it, what it is in the declared
/// topology.
fn groups_table(levels: &[MeasuredLevel], ghz: Option<f64>) -> Table {
    let mut heads = vec!["group", "latency ns"];
    if ghz.is_some() {
        heads.push("≈ cycles");
    }
    heads.extend([
        "increment",
        "range ns",
        "pairs",
        "groups (CPUs each)",
        "each CPU reaches",
        "declared",
    ]);
    let mut t = Table::new(&heads);
    let figures = heads
        .iter()
        .position(|h| *h == "groups (CPUs each)")
        .unwrap_or(0);
    for c in t.columns.iter_mut().take(figures) {
        c.align = Align::Right;
    }
    t.caption = Some("Latency groups (average-linkage clustering of the matrix)".into());
    let base = levels.first().map(|l| l.latency_ns).unwrap_or(0.0);
    for l in levels {
        let inc = match l.increment_ns {
            Some(d) if l.level > 2 => format!(
                "{d:+.1} over {}, {:+.1} over 1",
                l.level - 1,
                l.latency_ns - base
            ),
            Some(d) => format!("{d:+.1} over 1"),
            None => "base".to_string(),
        };
        let sizes: Vec<String> = l.group_sizes.iter().map(|s| s.to_string()).collect();
        let declared = if l.label.is_empty() {
            "?".to_string()
        } else if l.matches.is_empty() {
            l.label.clone()
        } else {
            format!("= {}", l.label)
        };
        let mut row = vec![
            Cell::Text(l.level.to_string()),
            Cell::Text(format!("{:.1}", l.latency_ns)),
        ];
        if let Some(g) = ghz {
            row.push(Cell::Text(format!("{:.0}", l.latency_ns * g)));
        }
        row.extend([
            Cell::Text(inc),
            Cell::Text(format!("{:.1}–{:.1}", l.min_ns, l.max_ns)),
            Cell::Text(l.pairs.to_string()),
            Cell::Text(format!("{} ({})", l.groups.len(), sizes.join("/"))),
            Cell::Text(format!("{:.1} CPU(s) first", l.cpus_per_cpu)),
            Cell::Text(declared),
        ]);
        let _ = t.push(row);
    }
    t
}

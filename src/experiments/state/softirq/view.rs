//! What softirq shows (docs/views.md): its place among the experiments and its
//! section of the summary (and of `cpuscope softirq`).

use crate::results::schema::{ResultRecord, Run};
use crate::view::{
    text, Align, Block, Cell, Depth, Figure, Rank, Section, Table, Views, NO_REASON,
};

/// The views of this experiment (the registry holds it).
pub struct SoftirqViews;

impl Views for SoftirqViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Summary | Depth::Command => sections_of(&run.results),
            Depth::Report => Vec::new(),
        }
    }

    fn rank(&self) -> Rank {
        Rank(12)
    }
}

/// `cpuscope softirq`'s text: its section, drawn by the text printer.
pub fn summary(rs: &[ResultRecord]) -> String {
    text::sections(&sections_of(rs))
}

/// Its section: a row per kind (the rate, its per-node shares), the
/// softirq CPU time per node, the busiest CPU, and the rates' notes.
pub fn sections_of(rs: &[ResultRecord]) -> Vec<Section> {
    let mine: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(super::EXP))
        .collect();
    if mine.is_empty() {
        return Vec::new();
    }
    let mut t = Table::new(&["kind", "measured", "per node"]);
    t.columns[1].align = Align::Right;
    let rates: Vec<&&ResultRecord> = mine.iter().filter(|r| r.is(super::RATE)).collect();
    if let Some(u) = rates.first().map(|r| r.unit.clone()) {
        // One unit for the column when every rate has it.
        t.columns[1].unit = rates.iter().all(|r| r.unit == u).then_some(u);
    }
    for r in &rates {
        t.rows.push(rate_row(r, &mine));
    }
    let mut blocks = vec![Block::Table(t)];
    let times: Vec<String> = mine
        .iter()
        .filter(|r| r.is(super::NODE_TIME))
        .filter_map(|r| Some(format!("node {} {:.2}%", param(r, "node")?, r.value?)))
        .collect();
    if !times.is_empty() {
        blocks.push(Block::Plain(format!(
            "softirq CPU time: {}",
            times.join(", ")
        )));
    }
    for r in mine.iter().filter(|r| r.is(super::BUSIEST_CPU)) {
        blocks.push(Block::Plain(busiest(r)));
    }
    for r in mine.iter().filter(|r| r.is(super::RATE)) {
        blocks.extend(r.notes.iter().map(|n| Block::Note(format!("note: {n}"))));
    }
    vec![Section {
        id: super::EXP.to_string(),
        title: "Network softirqs (sampled)".into(),
        blocks,
    }]
}

/// A parameter of a record as text (a string as it is, anything else as
/// JSON).
fn param(r: &ResultRecord, k: &str) -> Option<String> {
    r.params.get(k).map(|v| match v {
        serde_json::Value::String(s) => s.clone(),
        o => o.to_string(),
    })
}

/// The row of one rate record `r`, with its kind's per-node shares among
/// `mine`.
fn rate_row(r: &ResultRecord, mine: &[&ResultRecord]) -> Vec<Cell> {
    let kind = param(r, "kind").unwrap_or_default();
    let shares: Vec<String> = mine
        .iter()
        .filter(|s| s.is(super::NODE_SHARE) && param(s, "kind") == Some(kind.clone()))
        .filter_map(|s| Some(format!("node {} {:.0}%", param(s, "node")?, s.value?)))
        .collect();
    vec![
        Cell::Text(kind),
        Cell::Figure(Figure::of(r)),
        Cell::Text(shares.join(", ")),
    ]
}

/// The line of the busiest CPU record `r`.
fn busiest(r: &ResultRecord) -> String {
    match (r.value, param(r, "cpu")) {
        (Some(v), Some(cpu)) => format!("busiest CPU: {cpu} with {v:.2}% of its time in softirq"),
        (Some(_), None) => format!(
            "busiest CPU: none, {}",
            r.notes
                .first()
                .map(String::as_str)
                .unwrap_or("no softirq time")
        ),
        (None, _) => format!(
            "busiest CPU: not available: {}",
            r.unavailable_reason.as_deref().unwrap_or(NO_REASON)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_a_table_of_rates_with_their_shares_and_reasons() {
        let rs = vec![
            ResultRecord::of(super::super::RATE, "softirqs/s", true)
                .with_param("kind", "NET_RX")
                .with_samples(vec![1200.0]),
            ResultRecord::of(super::super::NODE_SHARE, "%", true)
                .with_param("kind", "NET_RX")
                .with_param("node", 1)
                .with_samples(vec![75.0]),
            ResultRecord::unavailable(
                super::super::EXP,
                "net_softirq_rate",
                "softirqs/s",
                "no <NIC>",
            )
            .with_param("kind", "NET_TX"),
            ResultRecord::of(super::super::BUSIEST_CPU, "%", false)
                .with_param("cpu", 3)
                .with_samples(vec![2.5]),
        ];
        let s = summary(&rs);
        assert!(s.starts_with("Network softirqs (sampled)\n"), "{s}");
        assert!(s.contains("measured softirqs/s"), "{s}");
        let row = s.lines().find(|l| l.contains("NET_RX")).unwrap_or_default();
        let words: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(words, ["NET_RX", "1200", "node", "1", "75%"], "{s}");
        assert!(s.contains("n/a (NET_TX): no <NIC>"), "{s}");
        assert!(
            s.contains("busiest CPU: 3 with 2.50% of its time in softirq"),
            "{s}"
        );
        assert!(sections_of(&[]).is_empty());
    }
}

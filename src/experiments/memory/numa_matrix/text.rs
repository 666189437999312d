//! numa_matrix's text: its matrices as tables.

use crate::experiments::memory::payload::NumaMatrixData;
use crate::experiments::memory::text::cell;
use crate::results::schema::ResultRecord;
use crate::view::{Align, Block, Cell, Table};

fn matrix_table(title: &str, rows: &[usize], targets: &[String], m: &[Vec<Option<f64>>]) -> Block {
    let mut head = vec!["node"];
    head.extend(targets.iter().map(String::as_str));
    let mut t = Table::new(&head);
    for c in t.columns.iter_mut().skip(1) {
        c.align = Align::Right;
    }
    t.caption = Some(format!("{title} (rows: CPUs of node; columns: memory)"));
    for (ri, r) in rows.iter().enumerate() {
        let mut row = vec![Cell::Text(r.to_string())];
        for ci in 0..targets.len() {
            let v = m.get(ri).and_then(|row| row.get(ci)).copied().flatten();
            row.push(Cell::Text(cell(v)));
        }
        let _ = t.push(row);
    }
    Block::Table(t)
}

/// The matrices of a matrix record (latency, bandwidth, declared distance,
/// measured over declared) under their heading; nothing without its data.
pub fn matrices(r: &ResultRecord) -> Vec<Block> {
    let Some(d) = r.data_as::<NumaMatrixData>() else {
        return Vec::new();
    };
    let nodes = d.node_targets();
    let declared: Vec<Vec<Option<f64>>> = d
        .declared_distance
        .iter()
        .map(|row| row.iter().map(|v| v.map(f64::from)).collect())
        .collect();
    vec![
        Block::Heading("NUMA matrices".into()),
        matrix_table("latency, ns", &d.rows, &d.targets, &d.latency_ns),
        matrix_table(
            "bandwidth (read), GB/s",
            &d.rows,
            &d.targets,
            &d.bandwidth_gbs,
        ),
        matrix_table("declared distance (kernel)", &d.rows, &nodes, &declared),
        matrix_table(
            "measured latency ratio / declared distance ratio (1.00 = the distances tell the truth)",
            &d.rows,
            &nodes,
            &d.measured_over_declared,
        ),
    ]
}

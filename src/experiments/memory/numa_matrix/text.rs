//! numa_matrix's text: its matrices as tables.

use crate::experiments::memory::payload::NumaMatrixData;
use crate::experiments::memory::text::cell;
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

fn matrix_text(title: &str, rows: &[usize], targets: &[String], m: &[Vec<Option<f64>>]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "  {title} (rows: CPUs of node; columns: memory)");
    let mut line = format!("    {:>8}", "node");
    for t in targets {
        let _ = write!(line, " {:>11}", t);
    }
    let _ = writeln!(o, "{line}");
    for (ri, r) in rows.iter().enumerate() {
        let mut line = format!("    {r}");
        for ci in 0..targets.len() {
            let v = m.get(ri).and_then(|row| row.get(ci)).copied().flatten();
            let _ = write!(line, " {:>11}", cell(v));
        }
        let _ = writeln!(o, "{line}");
    }
    o
}

/// The matrices of a matrix record (latency, bandwidth, declared distance,
/// measured over declared), after a blank line.
pub fn matrices(r: &ResultRecord) -> Option<String> {
    let mut o = String::new();
    let d = r.data_as::<NumaMatrixData>()?;
    let _ = writeln!(o, "\nNUMA matrices");
    o.push_str(&matrix_text(
        "latency, ns",
        &d.rows,
        &d.targets,
        &d.latency_ns,
    ));
    o.push_str(&matrix_text(
        "bandwidth (read), GB/s",
        &d.rows,
        &d.targets,
        &d.bandwidth_gbs,
    ));
    let nodes = d.node_targets();
    let declared: Vec<Vec<Option<f64>>> = d
        .declared_distance
        .iter()
        .map(|row| row.iter().map(|v| v.map(f64::from)).collect())
        .collect();
    o.push_str(&matrix_text(
        "declared distance (kernel)",
        &d.rows,
        &nodes,
        &declared,
    ));
    o.push_str(&matrix_text(
        "measured latency ratio / declared distance ratio (1.00 = the distances tell the truth)",
        &d.rows,
        &nodes,
        &d.measured_over_declared,
    ));
    Some(o)
}

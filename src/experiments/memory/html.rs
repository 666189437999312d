//! HTML charts of the memory experiments for the run report: latency curves
//! (log size, log ns, declared cache sizes marked), bandwidth vs threads,
//! loaded latency (latency vs bandwidth), NUMA matrices. Never measures.

use crate::base::fmt::fmt_bytes_axis;
use crate::base::html::esc;
use crate::experiments::common::PLACEMENT_PARAM;
use crate::experiments::memory::payload::{
    CurveData, LoadedCurveData, NumaMatrixData, SaturationData,
};
use crate::experiments::memory::{bandwidth, latency, loaded_latency, numa_matrix};
use crate::results::schema::{ResultRecord, Run};
pub use crate::view::lines::{svg_lines, Series};
use serde_json::Value;
use std::fmt::Write as _;

fn param(r: &ResultRecord, k: &str) -> String {
    match r.params.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

pub fn latency_chart(recs: &[&ResultRecord]) -> String {
    let mut series = Vec::new();
    let mut vlines: Vec<(f64, String)> = Vec::new();
    for r in recs.iter().filter(|r| r.is(latency::CURVE)) {
        let Some(d) = r.data_as::<CurveData>() else {
            continue;
        };
        let pts: Vec<(f64, f64)> = d.points.iter().map(|p| (p.bytes as f64, p.min)).collect();
        series.push((
            format!("{} {}", param(r, "pattern"), param(r, "pages")),
            pts,
        ));
        if vlines.is_empty() {
            for l in &d.levels {
                vlines.push((l.declared_bytes as f64, format!("{} (sysfs)", l.name)));
                if let (true, Some(e)) = (l.share, l.detected_bytes) {
                    vlines.push((e as f64, format!("{} effective (measured)", l.name)));
                }
            }
            if let Some(m) = &d.memory {
                vlines.push((m.from_bytes as f64, "memory (measured)".to_string()));
                if let Some(c) = &m.climb {
                    vlines.push((c.from_bytes as f64, "page-walk climb".to_string()));
                }
            }
        }
    }
    svg_lines(
        "Load-to-use latency vs working set, fastest sample per size (dashed: cache sizes declared by sysfs, and where the first curve shows an effective cache share, memory and a page-walk climb begin)",
        "working set (bytes, log scale)",
        "ns (log)",
        &series,
        true,
        true,
        &vlines,
        &fmt_bytes_axis,
    )
}

pub fn bandwidth_chart(recs: &[&ResultRecord]) -> String {
    let mut series = Vec::new();
    for r in recs.iter().filter(|r| r.is(bandwidth::SATURATION_THREADS)) {
        let Some(d) = r.data_as::<SaturationData>() else {
            continue;
        };
        let pts: Vec<(f64, f64)> = d
            .curve
            .iter()
            .filter_map(|&(n, g)| Some((n as f64, g?)))
            .collect();
        if pts.len() > 1 {
            series.push((
                format!(
                    "{} {} {}",
                    param(r, "kernel"),
                    param(r, "width"),
                    param(r, PLACEMENT_PARAM)
                ),
                pts,
            ));
        }
    }
    svg_lines(
        "Memory bandwidth vs threads (counted bytes)",
        "threads",
        "GB/s",
        &series,
        false,
        false,
        &[],
        &|x| {
            if (x - x.round()).abs() < 0.05 {
                format!("{x:.0}")
            } else {
                format!("{x:.1}")
            }
        },
    )
}

pub fn loaded_chart(recs: &[&ResultRecord]) -> String {
    let mut out = String::new();
    for r in recs.iter().filter(|r| r.is(loaded_latency::CURVE)) {
        let Some(d) = r.data_as::<LoadedCurveData>() else {
            continue;
        };
        let pts: Vec<(f64, f64)> = d
            .points
            .iter()
            .filter_map(|p| Some((p.bandwidth_gbs.unwrap_or(0.0), p.latency_ns?)))
            .collect();
        out.push_str(&svg_lines(
            "Loaded latency: chase latency vs bandwidth drawn by k streaming threads",
            "stream bandwidth (GB/s)",
            "ns",
            // The points are the loaded_latency:latency figures.
            &[(loaded_latency::LATENCY.metric.to_string(), pts)],
            false,
            false,
            &[],
            &|x| format!("{x:.1}"),
        ));
    }
    out
}

pub fn numa_tables(recs: &[&ResultRecord]) -> String {
    let mut out = String::new();
    for r in recs.iter().filter(|r| r.is(numa_matrix::MATRIX)) {
        let Some(d) = r.data_as::<NumaMatrixData>() else {
            continue;
        };
        let nodes = d.node_targets();
        for (title, cols, m) in [
            (
                "NUMA latency, ns (rows: CPUs of node; columns: memory)",
                &d.targets,
                &d.latency_ns,
            ),
            ("NUMA read bandwidth, GB/s", &d.targets, &d.bandwidth_gbs),
            (
                "Measured latency ratio / declared distance ratio",
                &nodes,
                &d.measured_over_declared,
            ),
        ] {
            out.push_str(&heat_table(title, &d.rows, cols, m));
        }
        for n in &r.notes {
            let _ = write!(out, "<div class=\"note\">{}</div>", esc(n));
        }
    }
    out
}

/// One NUMA matrix as a table shaded from its lowest to its highest cell.
fn heat_table(title: &str, rows: &[usize], cols: &[String], m: &[Vec<Option<f64>>]) -> String {
    let mut out = String::new();
    let all: Vec<f64> = m.iter().flatten().flatten().copied().collect();
    let (lo, hi) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |a, v| (a.0.min(*v), a.1.max(*v)));
    let _ = write!(out, "<p><b>{}</b></p><table><tr><th>node</th>", esc(title));
    for c in cols {
        let _ = write!(out, "<th>{}</th>", esc(c));
    }
    out.push_str("</tr>");
    for (ri, rv) in rows.iter().enumerate() {
        let _ = write!(out, "<tr><th>{rv}</th>");
        for (ci, col) in cols.iter().enumerate() {
            match m.get(ri).and_then(|row| row.get(ci)).copied().flatten() {
                Some(v) => {
                    let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
                    let _ = write!(
                        out,
                        r#"<td class="num" style="background:rgba(208,138,60,{:.2})" title="{}: CPUs of node {rv}, memory {} → {}">{}</td>"#,
                        0.1 + 0.6 * f,
                        esc(title),
                        esc(col),
                        crate::base::fmt::fmt_num(v),
                        crate::base::fmt::fmt_num(v)
                    );
                }
                None => out.push_str(r#"<td class="na">n/a</td>"#),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// Every record of `run`, as the chart functions take them.
pub fn records(run: &Run) -> Vec<&ResultRecord> {
    run.results.iter().collect()
}

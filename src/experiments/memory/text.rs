//! Text rendering of the memory experiments' records (latency curves,
//! bandwidth sweeps, NUMA matrices, loaded latency, seed loops). Never measures.

use crate::base::fmt::{fmt_num, fmt_size, for_terminal};
use crate::experiments::memory::payload::{
    CurveData, LoadedCurveData, MemoryPart, NumaMatrixData, PageWalkData, SaturationData,
};
use crate::experiments::memory::{bandwidth, latency, loaded_latency, numa_matrix, tlb_reach};
use crate::experiments::render::{figure_line, params_text};
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

fn latency_curve(r: &ResultRecord, out: &mut String) {
    let Some(d) = r.data_as::<CurveData>() else {
        return;
    };
    let _ = writeln!(
        out,
        "\nLatency curve: {} (CPU {}, stride {} B)",
        params_text(r),
        d.cpu,
        d.stride
    );
    let _ = writeln!(
        out,
        "  {:>10}  {:>9}  {:>8}  {:>9}  {:>9}  {:>6}",
        "size", "ns", "cycles", "min", "max", "CV%"
    );
    for p in &d.points {
        let _ = writeln!(
            out,
            "  {:>10}  {:>9}  {:>8}  {:>9}  {:>9}  {:>6.1}",
            fmt_size(p.bytes as f64),
            fmt_num(p.ns),
            p.cycles
                .map(|c| format!("{c:.1}"))
                .unwrap_or_else(|| "n/a".into()),
            fmt_num(p.min),
            fmt_num(p.max),
            p.cv * 100.0
        );
    }
    if d.ghz.is_none() {
        let why = if d.ghz_source.is_empty() {
            "no clock figure"
        } else {
            d.ghz_source.as_str()
        };
        let _ = writeln!(out, "  cycles not available: {why}");
    }
    if !d.plateaus.is_empty() {
        let _ = writeln!(out, "  plateaus:");
        for p in &d.plateaus {
            let _ = writeln!(
                out,
                "    {:>10} .. {:<10} {:>8} ns{}",
                fmt_size(p.from_bytes as f64),
                fmt_size(p.to_bytes as f64),
                fmt_num(p.level_ns),
                p.edge_bytes
                    .map(|e| format!("   step at ~{}", fmt_size(e as f64)))
                    .unwrap_or_default()
            );
        }
    }
    if let Some(m) = &d.memory {
        let _ = writeln!(out, "  {}", memory_part_text(m));
    }
    for l in &d.levels {
        let _ = writeln!(out, "  {}", for_terminal(&l.note));
    }
}

/// One line: where memory starts, its plateau, and the climb beyond.
pub fn memory_part_text(m: &MemoryPart) -> String {
    let mut t = format!(
        "memory: from {} (after the last step), plateau to {} at {} ns (DRAM)",
        fmt_size(m.from_bytes as f64),
        fmt_size(m.flat_to_bytes as f64),
        fmt_num(m.dram_ns)
    );
    match &m.climb {
        Some(c) => {
            let _ = write!(
                t,
                "; beyond it latency climbs from {}: {:+.1} ns per doubling, {} ns at {} (page walks, not a cache and not DRAM)",
                fmt_size(c.from_bytes as f64),
                c.ns_per_doubling,
                fmt_num(c.ns_at_end),
                fmt_size(c.to_bytes as f64)
            );
        }
        None => t.push_str("; flat to the largest working set"),
    }
    t
}

fn cell(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "n/a".into())
}

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

/// Tables for records that carry a sweep or a matrix.
fn structured(r: &ResultRecord) -> Option<String> {
    let mut o = String::new();
    if r.is(numa_matrix::MATRIX) {
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
    } else if r.is(loaded_latency::CURVE) {
        let d = r.data_as::<LoadedCurveData>()?;
        let _ = writeln!(o, "\nLoaded latency (latency vs bandwidth)");
        let _ = writeln!(
            o,
            "    {:>7}  {:>10}  {:>12}",
            "streams", "latency ns", "stream GB/s"
        );
        for p in &d.points {
            let _ = writeln!(
                o,
                "    {:>7}  {:>10}  {:>12}",
                p.streams,
                cell(p.latency_ns),
                cell(p.bandwidth_gbs)
            );
        }
    } else if r.is(bandwidth::SATURATION_THREADS) {
        let d = r.data_as::<SaturationData>()?;
        if d.curve.len() < 2 {
            return None;
        }
        let _ = writeln!(o, "\nBandwidth sweep: {}", params_text(r));
        let _ = writeln!(o, "    {:>7}  {:>9}  {:>8}", "threads", "GB/s", "gain");
        let mut prev: Option<f64> = None;
        for &(n, g) in &d.curve {
            let gain = match (prev, g) {
                (Some(a), Some(b)) if a > 0.0 => format!("{:+.1}%", (b / a - 1.0) * 100.0),
                _ => String::new(),
            };
            let _ = writeln!(o, "    {:>7}  {:>9}  {:>8}", n, cell(g), gain);
            prev = g;
        }
    } else {
        return None;
    }
    Some(o)
}

/// Render every record; structured ones (curves, sweeps, matrices) get
/// their own tables, the rest one line each.
pub fn render(recs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let mut exp = "";
    for r in recs {
        if r.experiment != exp {
            exp = &r.experiment;
            let _ = writeln!(out, "\n== {exp}");
        }
        if r.is(latency::CURVE) && r.data.is_some() {
            latency_curve(r, &mut out);
            for n in &r.notes {
                let _ = writeln!(out, "  note: {}", for_terminal(n));
            }
            continue;
        }
        if let Some(text) = structured(r) {
            out.push_str(&text);
        }
        let _ = writeln!(out, "{}", figure_line(r));
        for n in &r.notes {
            let _ = writeln!(out, "      {}", for_terminal(n));
        }
    }
    out
}

/// The section of one experiment's records of `run` (empty when it has none).
pub fn section(run: &crate::results::schema::Run, exp: &str) -> String {
    let recs: Vec<ResultRecord> = run.records_of(exp).cloned().collect();
    render(&recs).trim_start_matches('\n').to_string()
}

/// `tlb_reach`: one line per figure, then the page-walk curve (extra ns
/// per load against pages touched).
pub fn tlb_reach(run: &crate::results::schema::Run) -> String {
    let mut out = crate::experiments::render::generic_text(tlb_reach::EXP, run);
    let Some(curve) = run
        .records(tlb_reach::PAGE_WALK)
        .find_map(|r| r.data_as::<PageWalkData>())
    else {
        return out;
    };
    let col = |f: fn(&crate::experiments::memory::payload::PageWalkPoint) -> String| -> String {
        curve.points.iter().map(f).collect::<Vec<_>>().join("")
    };
    let _ = writeln!(
        out,
        "  pages      {}",
        col(|p| format!("{:>6.0}", p.pages as f64))
    );
    let _ = writeln!(
        out,
        "  extra ns   {}",
        col(|p| format!("{:>6.1}", p.extra_ns))
    );
    out
}

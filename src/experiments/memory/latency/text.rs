//! latency's text: a curve's table (size, ns, cycles, spread), its
//! plateaus, where memory starts, the declared levels' notes.

use crate::base::fmt::{fmt_num, fmt_size, for_terminal};
use crate::experiments::memory::payload::{CurveData, MemoryPart};
use crate::experiments::render::params_text;
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

/// The table of a curve record, after a blank line; nothing without its
/// data.
pub fn curve(r: &ResultRecord, out: &mut String) {
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

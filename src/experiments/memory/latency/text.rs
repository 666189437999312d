//! latency's text: a curve's table (size, ns, cycles, spread), its
//! plateaus, where memory starts, the declared levels' notes, as blocks.

use crate::base::fmt::{fmt_num, fmt_size};
use crate::experiments::memory::payload::{CurveData, MemoryPart};
use crate::experiments::render::params_text;
use crate::results::schema::ResultRecord;
use crate::view::{Align, Block, Cell, Table};
use std::fmt::Write as _;

/// The table of a curve record (size, ns, cycles, spread), its plateaus,
/// where memory starts and the declared levels' notes; nothing without its
/// data.
pub fn curve(r: &ResultRecord) -> Vec<Block> {
    let Some(d) = r.data_as::<CurveData>() else {
        return Vec::new();
    };
    let mut t = Table::new(&["size", "ns", "cycles", "min", "max", "CV%"]);
    for c in t.columns.iter_mut() {
        c.align = Align::Right;
    }
    t.caption = Some(format!(
        "Latency curve: {} (CPU {}, stride {} B)",
        params_text(r),
        d.cpu,
        d.stride
    ));
    for p in &d.points {
        let _ = t.push(
            [
                fmt_size(p.bytes as f64),
                fmt_num(p.ns),
                p.cycles
                    .map(|c| format!("{c:.1}"))
                    .unwrap_or_else(|| "n/a".into()),
                fmt_num(p.min),
                fmt_num(p.max),
                format!("{:.1}", p.cv * 100.0),
            ]
            .into_iter()
            .map(Cell::Text)
            .collect(),
        );
    }
    let mut out = vec![Block::Table(t)];
    if d.ghz.is_none() {
        let why = if d.ghz_source.is_empty() {
            "no clock figure"
        } else {
            d.ghz_source.as_str()
        };
        out.push(Block::NotAvailable(format!("cycles not available: {why}")));
    }
    if !d.plateaus.is_empty() {
        let mut p = Table::new(&["from", "to", "ns", "step at"]);
        for c in p.columns.iter_mut().take(3) {
            c.align = Align::Right;
        }
        p.caption = Some("plateaus".into());
        for l in &d.plateaus {
            let _ = p.push(vec![
                Cell::Text(fmt_size(l.from_bytes as f64)),
                Cell::Text(fmt_size(l.to_bytes as f64)),
                Cell::Text(fmt_num(l.level_ns)),
                Cell::Text(
                    l.edge_bytes
                        .map(|e| format!("~{}", fmt_size(e as f64)))
                        .unwrap_or_default(),
                ),
            ]);
        }
        out.push(Block::Table(p));
    }
    if let Some(m) = &d.memory {
        out.push(Block::Note(memory_part_text(m)));
    }
    out.extend(d.levels.iter().map(|l| Block::Note(l.note.clone())));
    out
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

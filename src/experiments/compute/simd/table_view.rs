//! simd's table, as blocks (docs/views.md): seed 004's table (ChaCha20
//! throughput and per-thread efficiency by threads) with its context and
//! notes, in the summary and the report (where the one-thread bars follow).

use crate::experiments::compute::payload::{SimdBestData, SimdThroughputData};
use crate::experiments::compute::simd;
use crate::experiments::compute::text::{of, param};
use crate::results::schema::ResultRecord;
use crate::view::{Align, BarGroup, Block, Cell, Chart, Span, Style, Table};

/// The report's blocks: the table and its notes, then the one-thread bars.
pub fn table_blocks(rs: &[ResultRecord]) -> Vec<Block> {
    let mut out = summary_blocks(rs);
    let one: Vec<BarGroup> = of(rs, simd::THROUGHPUT)
        .into_iter()
        .filter(|r| param(r, "threads") == Some("1"))
        .filter_map(|r| Some(BarGroup::single(param(r, "variant")?, r.value?)))
        .collect();
    if !out.is_empty() {
        out.push(Block::Chart(Chart::bars("ChaCha20, 1 thread", "MB/s", one)));
    }
    out
}

/// The heading, what the table was measured under (turbo, cores, the
/// variants' checks), the table and its notes; nothing without a measured
/// throughput.
pub fn summary_blocks(rs: &[ResultRecord]) -> Vec<Block> {
    let thr = of(rs, simd::THROUGHPUT);
    let (variants, points) = variants_and_points(&thr);
    if variants.is_empty() {
        return Vec::new();
    }
    let mut heads = vec!["threads".to_string(), "n".to_string(), "GHz".to_string()];
    for v in &variants {
        heads.extend([format!("{v} MB/s"), "efficiency".to_string()]);
    }
    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
    let mut t = Table::new(&heads);
    for c in t.columns.iter_mut().skip(1) {
        c.align = Align::Right;
    }
    let mut out = vec![Block::Heading("SIMD × threads (seed 004's table): ChaCha20 throughput and per-thread efficiency vs 1 thread".into())];
    out.extend(context(rs).into_iter().map(Block::Note));
    for p in &points {
        if let Err(e) = t.push(threads_row(rs, &thr, &variants, p)) {
            out.push(Block::Note(format!("a row left out: {e}")));
        }
    }
    out.push(Block::Table(t));
    out.extend(table_notes(rs, &thr).into_iter().map(Block::Note));
    out
}

/// The turbo state and core counts of the best point, and the variants'
/// verification notes.
fn context(rs: &[ResultRecord]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(best) = of(rs, simd::BEST_THROUGHPUT).first() {
        if let Some(d) = best.data_as::<SimdBestData>() {
            let how = if param(best, "turbo").is_some() {
                "set with --turbo, restored afterwards"
            } else {
                "as found; cpuscope does not change it"
            };
            out.push(format!(
                "turbo: {} ({how})  ·  {} cores, {} logical CPUs",
                d.turbo, d.cores, d.logical
            ));
        }
    }
    if let Some(v) = of(rs, simd::VERIFIED_VARIANTS).first() {
        out.extend(v.notes.iter().map(|n| format!("verified: {n}")));
    }
    out
}

/// The variants and thread counts of the measured throughput records, each
/// once, in the order they come.
fn variants_and_points<'a>(thr: &[&'a ResultRecord]) -> (Vec<&'a str>, Vec<&'a str>) {
    let mut variants: Vec<&str> = Vec::new();
    let mut points: Vec<&str> = Vec::new();
    for r in thr.iter().filter(|r| r.value.is_some()) {
        if let Some(v) = param(r, "variant") {
            if !variants.contains(&v) {
                variants.push(v);
            }
        }
        if let Some(p) = param(r, "threads") {
            if !points.contains(&p) {
                points.push(p);
            }
        }
    }
    (variants, points)
}

/// The table's row of thread count `p`: the threads it ran, the clock, then
/// MB/s and efficiency per variant (a dash for each lacking, its reason in
/// the notes).
fn threads_row(
    rs: &[ResultRecord],
    thr: &[&ResultRecord],
    variants: &[&str],
    p: &str,
) -> Vec<Cell> {
    let mut ghz = String::from("n/a");
    let mut n = String::new();
    let mut cells = Vec::new();
    for v in variants {
        let t = thr
            .iter()
            .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p));
        let e = of(rs, simd::EFFICIENCY)
            .into_iter()
            .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p))
            .and_then(|r| r.value);
        match t.and_then(|r| r.value.map(|x| (r, x))) {
            Some((r, x)) => {
                if let Some(d) = r.data_as::<SimdThroughputData>() {
                    n = d.threads.to_string();
                    if let Some(g) = d.ghz {
                        ghz = format!("{g:.2}");
                    }
                }
                let eff = if p == "1" {
                    "100.0%".to_string()
                } else {
                    e.map(|e| format!("{e:.1}%")).unwrap_or_else(|| "-".into())
                };
                let value = if r.is_noisy() {
                    Cell::Spans(vec![
                        Span::new(format!("{x:.0} "), Style::Plain),
                        Span::new("NOISY", Style::Noisy),
                    ])
                } else {
                    Cell::Text(format!("{x:.0}"))
                };
                cells.extend([value, Cell::Text(eff)]);
            }
            None => {
                let dash = || Cell::Absent {
                    text: "-".into(),
                    span: 1,
                };
                cells.extend([dash(), dash()]);
            }
        }
    }
    let mut row = vec![Cell::Text(p.to_string()), Cell::Text(n), Cell::Text(ghz)];
    row.extend(cells);
    row
}

/// The notes under the table: each throughput not available (once), the
/// SMT yields, and the best throughput's notes.
fn table_notes(rs: &[ResultRecord], thr: &[&ResultRecord]) -> Vec<String> {
    let mut said: Vec<String> = Vec::new();
    for r in thr.iter().filter(|r| r.value.is_none()) {
        let line = format!(
            "{} threads={}: not available: {}",
            param(r, "variant").unwrap_or("?"),
            param(r, "threads").unwrap_or("?"),
            r.unavailable_reason.as_deref().unwrap_or("?")
        );
        if !said.contains(&line) {
            said.push(line);
        }
    }
    for y in of(rs, simd::SMT_YIELD) {
        said.push(match y.value {
            Some(v) => format!(
                "SMT yield, {}: {v:.2} of a core",
                param(y, "variant").unwrap_or("?")
            ),
            None => format!(
                "SMT yield, {}: not available: {}",
                param(y, "variant").unwrap_or("?"),
                y.unavailable_reason.as_deref().unwrap_or("?")
            ),
        });
    }
    if let Some(b) = of(rs, simd::BEST_THROUGHPUT).first() {
        said.extend(b.notes.iter().cloned());
    }
    said
}

//! simd's HTML in the report: seed 004's table (ChaCha20 throughput and
//! per-thread efficiency by threads), its notes and the one-thread bars.
//! Not typed yet (docs/views.md): it writes its own HTML.

use crate::base::html::{esc, svg_bars};
use crate::experiments::compute::payload::SimdThroughputData;
use crate::experiments::compute::simd;
use crate::experiments::compute::text::param;
use crate::results::schema::{MetricId, ResultRecord, Run};
use std::fmt::Write as _;

fn of(run: &Run, id: MetricId) -> Vec<&ResultRecord> {
    run.records(id).collect()
}

pub fn simd_table(run: &Run) -> String {
    let thr = of(run, simd::THROUGHPUT);
    let (variants, points) = variants_and_points(&thr);
    if variants.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h3>SIMD × threads (seed 004's table): ChaCha20 throughput and per-thread efficiency vs 1 thread</h3><table><tr><th>threads</th><th>GHz</th>");
    for v in &variants {
        let _ = write!(h, "<th>{} MB/s</th><th>efficiency</th>", esc(v));
    }
    h.push_str("</tr>");
    for p in &points {
        h.push_str(&threads_row(run, &thr, &variants, p));
    }
    h.push_str("</table>");
    for s in table_notes(run, &thr) {
        let _ = write!(h, "<div class=\"note\">{}</div>", esc(&s));
    }
    let one: Vec<(String, f64)> = thr
        .iter()
        .filter(|r| param(r, "threads") == Some("1"))
        .filter_map(|r| Some((param(r, "variant")?.to_string(), r.value?)))
        .collect();
    h.push_str(&svg_bars("ChaCha20, 1 thread", "MB/s", &one));
    h
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

/// The table's row of thread count `p`: the clock, then MB/s and efficiency
/// per variant.
fn threads_row(run: &Run, thr: &[&ResultRecord], variants: &[&str], p: &str) -> String {
    let mut ghz = String::from("n/a");
    let mut cells = String::new();
    for v in variants {
        let t = thr
            .iter()
            .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p));
        let e = of(run, simd::EFFICIENCY)
            .into_iter()
            .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p))
            .and_then(|r| r.value);
        match t.and_then(|r| r.value.map(|x| (r, x))) {
            Some((r, x)) => {
                if let Some(g) = r.data_as::<SimdThroughputData>().and_then(|d| d.ghz) {
                    ghz = format!("{g:.2}");
                }
                let eff = if p == "1" {
                    "100.0%".to_string()
                } else {
                    e.map(|e| format!("{e:.1}%")).unwrap_or_else(|| "-".into())
                };
                let noisy = if r.is_noisy() {
                    " <span class=\"noisy\">NOISY</span>"
                } else {
                    ""
                };
                let _ = write!(
                    cells,
                    "<td class=\"num\">{x:.0}{noisy}</td><td class=\"num\">{eff}</td>"
                );
            }
            None => cells.push_str("<td class=\"na\">-</td><td class=\"na\">-</td>"),
        }
    }
    format!(
        "<tr><td>{}</td><td class=\"num\">{}</td>{cells}</tr>",
        esc(p),
        esc(&ghz)
    )
}

/// The notes under the table: each throughput not available (once), the
/// SMT yields, and the best throughput's notes.
fn table_notes(run: &Run, thr: &[&ResultRecord]) -> Vec<String> {
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
    for y in of(run, simd::SMT_YIELD) {
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
    if let Some(b) = of(run, simd::BEST_THROUGHPUT).first() {
        said.extend(b.notes.iter().cloned());
    }
    said
}

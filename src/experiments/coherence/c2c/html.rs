//! HTML parts for core-to-core latency: an SVG heat map of each c2c matrix,
//! its latency groups and findings, and the log-scale bars (sync draws its
//! costs with them too). Never measures.

use super::text;
use crate::base::html::esc;
use crate::experiments::coherence::c2c;
use crate::experiments::coherence::payload::Inference;
use crate::results::schema::Run;
use std::fmt::Write as _;

/// Matrices up to this many CPUs get one rectangle (with a tooltip) per cell.
pub const DETAILED_HEATMAP: usize = 64;

/// Colour of a latency between lo and hi: green (fast) to red (slow).
fn colour(v: f64, lo: f64, hi: f64) -> String {
    let t = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    format!("hsl({:.0},70%,{:.0}%)", 120.0 - 120.0 * t, 55.0 - 10.0 * t)
}

/// SVG heat map of a `matrix_ns` array over `cpus`, with SMT sibling cells outlined.
pub fn svg_heatmap(
    title: &str,
    cpus: &[u64],
    rows: &[Vec<Option<f64>>],
    smt: &[(u64, u64)],
) -> String {
    let n = cpus.len();
    if n == 0 || rows.len() != n {
        return String::new();
    }
    let vals: Vec<f64> = rows.iter().flatten().flatten().copied().collect();
    if vals.is_empty() {
        return String::new();
    }
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let cell = (640.0 / n as f64).clamp(2.0, 36.0);
    let label = n <= 64;
    let left = if label { 40.0 } else { 10.0 };
    let top = 40.0;
    let size = cell * n as f64;
    let w = (left + size + 20.0).max(460.0);
    let h = top + size + 40.0;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" role="img" aria-label="{t}" class="chart"><text x="0" y="14" font-weight="bold">{t}</text>"#,
        t = esc(title)
    );
    let map = Heatmap {
        cpus,
        rows,
        smt,
        lo,
        hi,
        cell,
        left,
        top,
    };
    if label {
        map.axis_labels(&mut s);
    }
    if n > DETAILED_HEATMAP {
        map.quantised_runs(&mut s);
        map.smt_dots(&mut s);
    } else {
        map.cells(&mut s);
    }
    let ly = top + size + 20.0;
    let smt_how = if n > DETAILED_HEATMAP {
        "dots"
    } else {
        "outlined"
    };
    let range = if hi > lo {
        format!("{lo:.1} ns (green) … {hi:.1} ns (red)")
    } else {
        format!("{lo:.1} ns")
    };
    let _ = write!(
        s,
        r#"<text x="{left}" y="{ly:.0}">{range}; {smt_how}: SMT siblings; grey: not measured</text></svg>"#
    );
    s
}

/// A heat map being drawn: the matrix, its range of values and the
/// geometry (cell size, left and top margins).
struct Heatmap<'a> {
    cpus: &'a [u64],
    rows: &'a [Vec<Option<f64>>],
    smt: &'a [(u64, u64)],
    lo: f64,
    hi: f64,
    cell: f64,
    left: f64,
    top: f64,
}

impl Heatmap<'_> {
    /// The CPU numbers along the top and the left side.
    fn axis_labels(&self, s: &mut String) {
        let (cell, left, top) = (self.cell, self.left, self.top);
        for (i, c) in self.cpus.iter().enumerate() {
            let x = left + cell * i as f64 + cell / 2.0;
            let y = top + cell * i as f64 + cell / 2.0 + 4.0;
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{c}</text><text x="{:.1}" y="{y:.1}" text-anchor="end">{c}</text>"#,
                top - 4.0,
                left - 4.0
            );
        }
    }

    /// Large matrices: colours quantised to 32 steps and runs of equal
    /// colour along a row drawn as one rectangle with one tooltip. Keeps a
    /// 256-CPU map to a few hundred KB.
    fn quantised_runs(&self, s: &mut String) {
        let (cpus, lo, hi) = (self.cpus, self.lo, self.hi);
        let (cell, left, top) = (self.cell, self.left, self.top);
        let n = cpus.len();
        for (i, row) in self.rows.iter().enumerate() {
            let y = top + cell * i as f64;
            let key = |j: usize| -> i32 {
                match row[j] {
                    _ if i == j => -1,
                    Some(v) => {
                        let t = if hi > lo {
                            ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
                        } else {
                            0.0
                        };
                        (t * 31.0).round() as i32
                    }
                    None => -2,
                }
            };
            let mut j = 0;
            while j < n {
                let k = key(j);
                let mut e = j + 1;
                while e < n && key(e) == k {
                    e += 1;
                }
                let fill = match k {
                    -1 => "#fff".to_string(),
                    -2 => "#ddd".to_string(),
                    q => colour(lo + (hi - lo) * q as f64 / 31.0, lo, hi),
                };
                let (tip, dv) = match k {
                    -1 => ("same CPU".to_string(), String::new()),
                    -2 => ("not measured".to_string(), String::new()),
                    q => {
                        let v = lo + (hi - lo) * q as f64 / 31.0;
                        (format!("~{v:.0} ns"), format!(r#" data-v="{v:.3}""#))
                    }
                };
                let _ = write!(
                    s,
                    r#"<rect x="{:.2}" y="{y:.2}" width="{:.2}" height="{cell:.2}" fill="{fill}"{dv}><title>CPU {} → CPUs {}–{}: {tip}</title></rect>"#,
                    left + cell * j as f64,
                    cell * (e - j) as f64,
                    cpus.get(i).copied().unwrap_or(i as u64),
                    cpus.get(j).copied().unwrap_or(j as u64),
                    cpus.get(e - 1).copied().unwrap_or((e - 1) as u64)
                );
                j = e;
            }
        }
    }

    /// Large matrices: SMT siblings marked by a dot.
    fn smt_dots(&self, s: &mut String) {
        let (cell, left, top) = (self.cell, self.left, self.top);
        for &(a, b) in self.smt {
            let (Some(i), Some(j)) = (
                self.cpus.iter().position(|&c| c == a),
                self.cpus.iter().position(|&c| c == b),
            ) else {
                continue;
            };
            for (r, c) in [(i, j), (j, i)] {
                let _ = write!(
                    s,
                    r##"<circle cx="{:.2}" cy="{:.2}" r="{:.2}" fill="#000"/>"##,
                    left + cell * c as f64 + cell / 2.0,
                    top + cell * r as f64 + cell / 2.0,
                    (cell / 2.0).max(1.0)
                );
            }
        }
    }

    /// Up to DETAILED_HEATMAP CPUs: one rectangle per cell with its
    /// tooltip, SMT siblings outlined, values written in (up to 16 CPUs).
    fn cells(&self, s: &mut String) {
        let (cpus, lo, hi) = (self.cpus, self.lo, self.hi);
        let (cell, left, top) = (self.cell, self.left, self.top);
        let n = cpus.len();
        let is_smt = |a: u64, b: u64| {
            self.smt
                .iter()
                .any(|&(x, y)| (x == a && y == b) || (x == b && y == a))
        };
        for (i, row) in self.rows.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let x = left + cell * j as f64;
                let y = top + cell * i as f64;
                let (fill, tip) = match v {
                    Some(v) if i != j => (
                        colour(*v, lo, hi),
                        format!("CPU {} ↔ {}: {v:.1} ns", cpus[i], cpus[j]),
                    ),
                    _ if i == j => ("#fff".to_string(), format!("CPU {}", cpus[i])),
                    _ => (
                        "#ddd".to_string(),
                        format!("CPU {} ↔ {}: not measured", cpus[i], cpus[j]),
                    ),
                };
                let stroke = if i != j && is_smt(cpus[i], cpus[j]) {
                    r##" stroke="#000" stroke-width="1""##
                } else {
                    ""
                };
                // The measured value as data-v (the report's chart check reads it).
                let dv = match v {
                    Some(v) if i != j && v.is_finite() => format!(r#" data-v="{v:.3}""#),
                    _ => String::new(),
                };
                let _ = write!(
                    s,
                    r#"<rect x="{x:.2}" y="{y:.2}" width="{cell:.2}" height="{cell:.2}" fill="{fill}"{stroke}{dv}><title>{}</title></rect>"#,
                    esc(&tip)
                );
                if n <= 16 && i != j {
                    if let Some(v) = v {
                        let _ = write!(
                            s,
                            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{v:.0}</text>"#,
                            x + cell / 2.0,
                            y + cell / 2.0 + 4.0
                        );
                    }
                }
            }
        }
    }
}

/// Horizontal bars on a logarithmic scale (figures spanning 0.1 ns to tens
/// of microseconds), each labelled with its value.
pub fn svg_log_bars(title: &str, unit: &str, rows: &[(String, f64)]) -> String {
    let rows: Vec<&(String, f64)> = rows
        .iter()
        .filter(|r| r.1 > 0.0 && r.1.is_finite())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let lo = rows.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(|r| r.1).fold(0.0f64, f64::max);
    let floor = 10f64.powf(lo.log10().floor());
    let span = (hi / floor).log10().max(1e-9);
    let (left, width, row_h) = (340.0, 420.0, 18.0);
    let h = 40.0 + row_h * rows.len() as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{t}" class="chart"><text x="0" y="14" font-weight="bold">{t} ({u}, log scale from {floor})</text>"#,
        w = left + width + 90.0,
        t = esc(title),
        u = esc(unit)
    );
    for (i, (label, v)) in rows.iter().enumerate() {
        let y = 24.0 + row_h * i as f64;
        let bw = ((v / floor).log10() / span * width).max(1.0);
        let _ = write!(
            s,
            r#"<text x="0" y="{ty}">{l}</text><rect class="bar" x="{left}" y="{y}" width="{bw:.1}" height="{bh}"><title>{l}: {val} {u}</title></rect><text x="{tx:.1}" y="{ty}">{val}</text>"#,
            u = esc(unit),
            ty = y + 12.0,
            l = esc(label),
            bh = row_h - 4.0,
            tx = left + bw + 4.0,
            val = crate::base::fmt::fmt_num(*v)
        );
    }
    s.push_str("</svg>");
    s
}

fn inference_html(inf: &Inference) -> String {
    let mut h = String::new();
    if let (true, Some(why)) = (inf.levels.is_empty(), &inf.not_inferred) {
        let _ = write!(h, "<p>Latency groups not inferred: {}</p>", esc(why));
    }
    if !inf.levels.is_empty() {
        h.push_str("<table><tr><th>group</th><th>latency (ns)</th><th>increment</th><th>pairs</th><th>group sizes</th><th>declared</th></tr>");
        for l in &inf.levels {
            let sizes: Vec<String> = l.group_sizes.iter().map(|x| x.to_string()).collect();
            let _ = write!(
                h,
                r#"<tr><td class="num">{}</td><td class="num">{:.1}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td><td>{}</td></tr>"#,
                l.level,
                l.latency_ns,
                l.increment_ns
                    .map(|d| format!("{d:+.1}"))
                    .unwrap_or_else(|| "base".into()),
                l.pairs,
                esc(&sizes.join("/")),
                esc(&l.label)
            );
        }
        h.push_str("</table>");
    }
    if !inf.findings.is_empty() {
        h.push_str("<ul>");
        for x in &inf.findings {
            let _ = write!(h, "<li>{}</li>", esc(x));
        }
        h.push_str("</ul>");
    }
    h
}

/// Charts for c2c and sync results (called from `report::html::charts`).
pub fn c2c_charts(run: &Run) -> String {
    let mut out = String::new();
    for r in run.records(c2c::MATRIX) {
        let Some(d) = text::matrix_data(r) else {
            continue;
        };
        let cpus: Vec<u64> = d.cpus.iter().map(|c| *c as u64).collect();
        let smt: Vec<(u64, u64)> = d
            .smt_siblings
            .iter()
            .map(|p| (p[0] as u64, p[1] as u64))
            .collect();
        out.push_str("<div>");
        out.push_str(&svg_heatmap(
            &format!("Core-to-core latency, one-way ns ({})", d.method),
            &cpus,
            &d.matrix_ns,
            &smt,
        ));
        if let Some(dist) = &d.disturbance {
            let text = esc(&dist.line());
            if dist.disturbed {
                let _ = write!(out, "<p><strong>{text}</strong></p>");
            } else {
                let _ = write!(out, "<p>{text}</p>");
            }
        }
        if let Some(inf) = &d.inference {
            out.push_str(&inference_html(inf));
        }
        out.push_str("</div>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_bars_skip_unusable_values() {
        let rows = vec![
            ("a".to_string(), 0.5),
            ("b".to_string(), 16000.0),
            ("c".to_string(), f64::NAN),
        ];
        let s = svg_log_bars("t", "ns", &rows);
        assert_eq!(s.matches("<rect").count(), 2);
        assert!(svg_log_bars("t", "ns", &[]).is_empty());
    }

    #[test]
    fn large_heatmap_merges_runs() {
        let n = 100u64;
        let ids: Vec<u64> = (0..n).collect();
        let rows: Vec<Vec<Option<f64>>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            None
                        } else if i / 50 == j / 50 {
                            Some(40.0)
                        } else {
                            Some(120.0)
                        }
                    })
                    .collect()
            })
            .collect();
        let s = svg_heatmap("t", &ids, &rows, &[(0, 50)]);
        // Per row: a run before the diagonal, the diagonal, a run after it, the other half.
        assert!(s.matches("<rect").count() <= 4 * n as usize);
        assert_eq!(s.matches("<circle").count(), 2);
    }

    #[test]
    fn heatmap_has_a_cell_per_pair() {
        let rows = vec![vec![None, Some(40.0)], vec![Some(40.0), None]];
        let s = svg_heatmap("t", &[0, 1], &rows, &[]);
        assert_eq!(s.matches("<rect").count(), 4);
        assert!(s.contains("40.0 ns"));
        assert!(svg_heatmap("t", &[], &[], &[]).is_empty());
    }
}

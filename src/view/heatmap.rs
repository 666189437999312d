//! The pair-matrix engine of the HTML printer: a square matrix of pairs
//! of the same things (CPUs) as an SVG heat map, green (low) to red
//! (high), the diagonal blank, the outlined pairs marked (SMT siblings),
//! each cell's value and pair on hover and in `data-v`. Large matrices are
//! drawn as runs of one colour so a 256-CPU map stays a few hundred KB.

use super::model::Heatmap;
use crate::base::html::esc;
use std::fmt::Write as _;

/// Matrices up to this many rows get one rectangle (with a tooltip) per cell.
pub const DETAILED_HEATMAP: usize = 64;

/// The SVG heat map of `map`, a square matrix (its rows' labels name both
/// sides; `row_label` is one of them, `col_label` several), its `outlined`
/// pairs of row indices marked as `outlined_label` says. Empty when it is
/// not square or has no value.
pub fn svg_pair_matrix(
    title: &str,
    map: &Heatmap,
    outlined: &[(usize, usize)],
    outlined_label: &str,
) -> String {
    let n = map.rows.len();
    let rows = &map.cells;
    if n == 0 || rows.len() != n || rows.iter().any(|r| r.len() != n) {
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
    let draw = Draw {
        map,
        outlined,
        lo,
        hi,
        cell,
        left,
        top,
    };
    if label {
        draw.axis_labels(&mut s);
    }
    if n > DETAILED_HEATMAP {
        draw.quantised_runs(&mut s);
        draw.outline_dots(&mut s);
    } else {
        draw.cells(&mut s);
    }
    let ly = top + size + 20.0;
    let how = if n > DETAILED_HEATMAP {
        "dots"
    } else {
        "outlined"
    };
    let unit = esc(&map.unit);
    let range = if hi > lo {
        format!("{lo:.1} {unit} (green) … {hi:.1} {unit} (red)")
    } else {
        format!("{lo:.1} {unit}")
    };
    let _ = write!(
        s,
        r#"<text x="{left}" y="{ly:.0}">{range}; {how}: {}; grey: not measured</text></svg>"#,
        esc(outlined_label)
    );
    s
}

/// Colour of a value between lo and hi: green (low) to red (high).
fn colour(v: f64, lo: f64, hi: f64) -> String {
    let t = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    format!("hsl({:.0},70%,{:.0}%)", 120.0 - 120.0 * t, 55.0 - 10.0 * t)
}

/// A pair matrix being drawn: the matrix, its outlined pairs, its range of
/// values and the geometry (cell size, left and top margins).
struct Draw<'a> {
    map: &'a Heatmap,
    outlined: &'a [(usize, usize)],
    lo: f64,
    hi: f64,
    cell: f64,
    left: f64,
    top: f64,
}

impl Draw<'_> {
    /// The labels along the top and the left side.
    fn axis_labels(&self, s: &mut String) {
        let (cell, left, top) = (self.cell, self.left, self.top);
        for (i, c) in self.map.rows.iter().enumerate() {
            let x = left + cell * i as f64 + cell / 2.0;
            let y = top + cell * i as f64 + cell / 2.0 + 4.0;
            let c = esc(c);
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{c}</text><text x="{:.1}" y="{y:.1}" text-anchor="end">{c}</text>"#,
                top - 4.0,
                left - 4.0
            );
        }
    }

    /// Large matrices: colours quantised to 32 steps and runs of equal
    /// colour along a row drawn as one rectangle with one tooltip.
    fn quantised_runs(&self, s: &mut String) {
        let (lo, hi) = (self.lo, self.hi);
        let (cell, left, top) = (self.cell, self.left, self.top);
        let (names, unit) = (&self.map.rows, esc(&self.map.unit));
        let (one, many) = (esc(&self.map.row_label), esc(&self.map.col_label));
        let n = names.len();
        for (i, row) in self.map.cells.iter().enumerate() {
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
                    -1 => (format!("same {one}"), String::new()),
                    -2 => ("not measured".to_string(), String::new()),
                    q => {
                        let v = lo + (hi - lo) * q as f64 / 31.0;
                        (format!("~{v:.0} {unit}"), format!(r#" data-v="{v:.3}""#))
                    }
                };
                let _ = write!(
                    s,
                    r#"<rect x="{:.2}" y="{y:.2}" width="{:.2}" height="{cell:.2}" fill="{fill}"{dv}><title>{one} {} → {many} {}–{}: {tip}</title></rect>"#,
                    left + cell * j as f64,
                    cell * (e - j) as f64,
                    esc(&names[i]),
                    esc(&names[j]),
                    esc(&names[e - 1])
                );
                j = e;
            }
        }
    }

    /// Large matrices: the outlined pairs marked by a dot.
    fn outline_dots(&self, s: &mut String) {
        let (cell, left, top) = (self.cell, self.left, self.top);
        let n = self.map.rows.len();
        for &(i, j) in self.outlined.iter().filter(|p| p.0 < n && p.1 < n) {
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

    /// Up to DETAILED_HEATMAP rows: one rectangle per cell with its
    /// tooltip, outlined pairs outlined, values written in (up to 16 rows).
    fn cells(&self, s: &mut String) {
        let (lo, hi) = (self.lo, self.hi);
        let (cell, left, top) = (self.cell, self.left, self.top);
        let (names, unit, one) = (&self.map.rows, &self.map.unit, &self.map.row_label);
        let n = names.len();
        let outlined = |a: usize, b: usize| {
            self.outlined
                .iter()
                .any(|&(x, y)| (x == a && y == b) || (x == b && y == a))
        };
        for (i, row) in self.map.cells.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let x = left + cell * j as f64;
                let y = top + cell * i as f64;
                let (fill, tip) = match v {
                    Some(v) if i != j => (
                        colour(*v, lo, hi),
                        format!("{one} {} ↔ {}: {v:.1} {unit}", names[i], names[j]),
                    ),
                    _ if i == j => ("#fff".to_string(), format!("{one} {}", names[i])),
                    _ => (
                        "#ddd".to_string(),
                        format!("{one} {} ↔ {}: not measured", names[i], names[j]),
                    ),
                };
                let stroke = if i != j && outlined(i, j) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: usize, rows: Vec<Vec<Option<f64>>>) -> Heatmap {
        let names: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        Heatmap::new(names.clone(), names, rows, "ns")
            .unwrap()
            .labelled("CPU", "CPU", "CPUs")
    }

    #[test]
    fn large_heatmap_merges_runs() {
        let n = 100u64;
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
        let s = svg_pair_matrix("t", &matrix(n as usize, rows), &[(0, 50)], "SMT siblings");
        // Per row: a run before the diagonal, the diagonal, a run after it, the other half.
        assert!(s.matches("<rect").count() <= 4 * n as usize);
        assert_eq!(s.matches("<circle").count(), 2);
    }

    #[test]
    fn heatmap_has_a_cell_per_pair() {
        let rows = vec![vec![None, Some(40.0)], vec![Some(40.0), None]];
        let s = svg_pair_matrix("t", &matrix(2, rows), &[], "SMT siblings");
        assert_eq!(s.matches("<rect").count(), 4);
        assert!(s.contains("CPU 0 ↔ 1: 40.0 ns"));
        assert!(svg_pair_matrix("t", &matrix(0, vec![]), &[], "x").is_empty());
    }
}

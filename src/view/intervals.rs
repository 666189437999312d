//! The interval chart's engine (docs/views.md): estimates with their
//! intervals, one row each, on a log axis around a reference line (a
//! ratio to a baseline, 1), a dot at the estimate and a whisker over the
//! interval, the row's text after it; the highlighted row in green. Every
//! string is escaped.

use super::model::Interval;
use crate::base::html::esc;
use std::fmt::Write as _;

/// The lowest and highest finite positive value of the rows (estimate or
/// interval end), the reference included.
fn range(rows: &[Interval], reference: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (reference, reference);
    for r in rows {
        for x in [r.estimate, r.low, r.high] {
            if x.is_finite() && x > 0.0 {
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
    }
    (lo, hi)
}

/// The chart: `title` (its accessible name) then `, subtitle` over it.
pub fn svg_intervals(
    title: &str,
    subtitle: &str,
    rows: &[Interval],
    reference: f64,
    reference_label: &str,
) -> String {
    let (lo, hi) = range(rows, reference);
    let (lo, hi) = (lo.ln() - 0.05, hi.ln() + 0.05);
    let (left, width, row_h) = (230.0, 560.0, 22.0);
    let x = |r: f64| left + (r.clamp(lo.exp(), hi.exp()).ln() - lo) / (hi - lo) * width;
    let height = 50.0 + row_h * rows.len() as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" role="img" aria-label="{t}" class="chart"><text x="0" y="14" font-weight="bold">{t}, {sub}</text>"#,
        w = left + width + 200.0,
        t = esc(title),
        sub = esc(subtitle)
    );
    let x1 = x(reference);
    let _ = write!(
        s,
        r##"<line x1="{x1:.1}" y1="22" x2="{x1:.1}" y2="{y2:.1}" stroke="#888" stroke-dasharray="3,3"/><text x="{x1:.1}" y="{yt:.1}" text-anchor="middle">{l}</text>"##,
        y2 = height - 18.0,
        yt = height - 4.0,
        l = esc(reference_label)
    );
    for (i, r) in rows.iter().enumerate() {
        let y = 36.0 + row_h * i as f64;
        let colour = if r.highlight { "#2e8b57" } else { "#4a7ab5" };
        let _ = write!(
            s,
            r#"<text x="{tx:.1}" y="{ty:.1}" text-anchor="end">{label}</text>"#,
            tx = left - 8.0,
            ty = y + 4.0,
            label = esc(&r.label)
        );
        let (xl, xh) = (x(r.low.max(1e-300)), x(r.high));
        let _ = write!(
            s,
            r#"<line x1="{xl:.1}" y1="{y:.1}" x2="{xh:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2"/><line x1="{xl:.1}" y1="{a:.1}" x2="{xl:.1}" y2="{b:.1}" stroke="{colour}"/><line x1="{xh:.1}" y1="{a:.1}" x2="{xh:.1}" y2="{b:.1}" stroke="{colour}"/><circle cx="{xr:.1}" cy="{y:.1}" r="4" fill="{colour}"/><text x="{tx:.1}" y="{ty:.1}">{val}</text>"#,
            a = y - 5.0,
            b = y + 5.0,
            xr = x(r.estimate),
            tx = xh + 6.0,
            ty = y + 4.0,
            val = esc(&r.text)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, e: f64, l: f64, h: f64, win: bool) -> Interval {
        Interval {
            label: label.into(),
            estimate: e,
            low: l,
            high: h,
            text: format!("{e} <x>"),
            highlight: win,
        }
    }

    #[test]
    fn rows_whiskers_reference_and_the_highlight_are_drawn_escaped() {
        let rows = [
            row("1. a <b>", 0.8, 0.7, 0.9, true),
            row("2. none (baseline)", 1.0, 1.0, 1.0, false),
            row("3. c", 1.3, 1.1, f64::INFINITY, false),
        ];
        let s = svg_intervals("score <s>", "95% intervals: s", &rows, 1.0, "1 (none)");
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"), "{s}");
        assert!(s.contains("aria-label=\"score &lt;s&gt;\""), "{s}");
        assert!(
            s.contains(">score &lt;s&gt;, 95% intervals: s</text>"),
            "{s}"
        );
        assert!(s.contains("1. a &lt;b&gt;") && !s.contains("<b>"), "{s}");
        assert_eq!(s.matches("<circle").count(), 3);
        assert_eq!(s.matches("#2e8b57").count(), 4, "one row highlighted: {s}");
        assert!(s.contains(">1 (none)</text>"), "{s}");
        assert!(!s.contains("NaN") && !s.contains("inf"), "{s}");
    }
}

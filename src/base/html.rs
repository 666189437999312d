//! HTML pieces every renderer may use: escaping and the simple inline SVG
//! charts (no script, no external resource: the report is one offline file).

use super::fmt::fmt_num;
use std::fmt::Write as _;

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Line breaks and tabs stay (pre-formatted blocks); any other
            // control character and the bidi overrides, which would reorder
            // the page's text, are shown escaped as on a terminal.
            '\n' | '\t' => o.push(c),
            c if super::fmt::is_unsafe_on_terminal(c) => {
                o.push_str(&super::fmt::for_terminal(c.encode_utf8(&mut [0; 4])))
            }
            _ => o.push(c),
        }
    }
    o
}

/// A horizontal bar chart as inline SVG: (label, value) rows.
pub fn svg_bars(title: &str, unit: &str, rows: &[(String, f64)]) -> String {
    let max = rows.iter().map(|r| r.1).fold(0.0f64, f64::max);
    if rows.is_empty() || max <= 0.0 {
        return String::new();
    }
    let row_h = 20.0;
    let left = 160.0;
    let width = 640.0;
    let h = 30.0 + row_h * rows.len() as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{t}" class="chart"><text x="0" y="14" font-weight="bold">{t} ({u})</text>"#,
        w = left + width + 80.0,
        t = esc(title),
        u = esc(unit)
    );
    for (i, (label, v)) in rows.iter().enumerate() {
        let y = 24.0 + row_h * i as f64;
        let bw = (v / max * width).max(1.0);
        let _ = write!(
            s,
            r#"<text x="0" y="{ty}">{l}</text><rect class="bar" x="{left}" y="{y}" width="{bw:.1}" height="{bh}"><title>{l}: {val} {u}</title></rect><text x="{tx:.1}" y="{ty}">{val}</text>"#,
            ty = y + 13.0,
            l = esc(label),
            bh = row_h - 4.0,
            tx = left + bw + 4.0,
            val = fmt_num(*v),
            u = esc(unit)
        );
    }
    s.push_str("</svg>");
    s
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
            val = fmt_num(*v)
        );
    }
    s.push_str("</svg>");
    s
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
}

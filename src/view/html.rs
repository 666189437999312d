//! The HTML printer (docs/views.md, "Printers"): draws [`Section`]s as a
//! fragment of the report's page (its CSS classes: `num`, `noisy`, `na`,
//! `note`). Tables as tables (a figure right-aligned with its unit and, on
//! hover, its spread; one without a value as `n/a` with its reason), line
//! charts through the one line engine ([`super::lines`]), bar charts through
//! the one bar engine ([`super::bars`], on a log scale in a block of their
//! own), heatmaps as tables, pair
//! matrices ([`super::heatmap`]) and intervals ([`super::intervals`]) by
//! their engines; marked pieces of text in their classes. Every string is
//! escaped.

use super::bars::{svg_bars, BarChart};
use super::heatmap::svg_pair_matrix;
use super::lines::{svg_lines, LineChart};
use super::model::{
    Align, Block, Cell, Chart, ChartKind, Figure, Heatmap, Mark, Scale, Section, Span, Style,
    Table, NO_REASON,
};
use crate::base::fmt::fmt_num;
use crate::base::html::esc;
use std::fmt::Write as _;

/// The rules every page starts with: the body's width and font, its
/// headings.
const PAGE_CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
"#;

/// The tables' rules, which every page uses (after its own heading rules,
/// if any).
pub const TABLE_CSS: &str = "table{border-collapse:collapse;margin:.5em 0;font-size:.9em}th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\n";

/// The rules of the figures' cells (right-aligned numbers), as the report
/// and compare draw them.
pub const FIGURE_CSS: &str =
    "th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}\n";

/// The charts' rules (the engines' classes: `bar`, `axis`, `grid`, `ref`),
/// which every page with a chart uses.
pub const CHART_CSS: &str = "svg text{font-size:11px;fill:#333}.bar{fill:#4a7ab5}svg .axis{stroke:#999;stroke-width:1}svg .grid{stroke:#e4e4e4;stroke-width:1}svg .ref{stroke:#444;stroke-dasharray:4 3}\nsvg circle:hover,svg rect:hover{stroke:#000;stroke-width:1}\n";

/// The one page shell: a self-contained HTML document (inline CSS, no
/// script, font or network) titled `title` (escaped here), its style the
/// shared rules then `css` (the page's own, in order), then `body`.
pub fn page(title: &str, css: &[&str], body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 4096);
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{PAGE_CSS}",
        esc(title)
    );
    for c in css {
        out.push_str(c);
    }
    out.push_str("</style></head><body>");
    out.push_str(body);
    out.push_str("</body></html>\n");
    out
}

/// The sections as one HTML fragment; empty for none.
pub fn sections(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&section(s));
    }
    out
}

/// One section: its title as a heading (when it has one), then its blocks.
pub fn section(s: &Section) -> String {
    let mut out = String::new();
    if !s.title.is_empty() {
        let _ = write!(out, "<h4 id=\"{}\">{}</h4>", esc(&s.id), esc(&s.title));
    }
    blocks(&mut out, &s.blocks);
    out
}

/// Blocks in order; a group's in one `div`.
fn blocks(out: &mut String, blocks: &[Block]) {
    for b in blocks {
        match b {
            Block::Heading(h) => {
                let _ = write!(out, "<h3>{}</h3>", esc(h));
            }
            Block::Title(spans) => {
                let _ = write!(out, "<h2>{}</h2>", spans_html(spans));
            }
            Block::Plain(p) => {
                let _ = write!(out, "<p>{}</p>", esc(p));
            }
            Block::Strong(p) => {
                let _ = write!(out, "<p><strong>{}</strong></p>", esc(p));
            }
            Block::List(items) => {
                out.push_str("<ul>");
                for i in items {
                    let _ = write!(out, "<li>{}</li>", esc(i));
                }
                out.push_str("</ul>");
            }
            Block::Figures(list) => {
                if let Some(h) = &list.heading {
                    let _ = write!(out, "<h3>{}</h3>", esc(h));
                }
                let mut t = list.table();
                t.caption = None;
                out.push_str(&table(&t));
                for n in list.notes() {
                    let _ = write!(out, "<div class=\"note\">{}</div>", esc(&n));
                }
            }
            Block::Group(inner) => {
                out.push_str("<div>");
                self::blocks(out, inner);
                out.push_str("</div>");
            }
            Block::Para(p) => {
                let _ = write!(out, "<p class=\"note\">{}</p>", esc(p));
            }
            Block::Note(n) => {
                let _ = write!(out, "<div class=\"note\">{}</div>", esc(n));
            }
            Block::NotAvailable(n) => {
                let _ = write!(out, "<div class=\"note na\">{}</div>", esc(n));
            }
            Block::Verbatim(lines) => {
                let _ = write!(out, "<pre>{}</pre>", esc(&lines.join("\n")));
            }
            Block::Table(t) => out.push_str(&table(t)),
            Block::Chart(c) => out.push_str(&chart(c)),
        }
    }
}

fn figure_cell(f: &Figure, unit_in_header: bool) -> String {
    let Some(v) = f.value else {
        let why = f.na_reason.as_deref().unwrap_or(NO_REASON);
        return format!(
            "<td class=\"na\" title=\"{}\">n/a: {}</td>",
            esc(why),
            esc(why)
        );
    };
    let unit = if unit_in_header || f.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", esc(&f.unit))
    };
    let title = f
        .spread
        .as_ref()
        .map(|s| {
            format!(
                " title=\"median of {}, min {} max {}, CV {:.1}%\"",
                s.n,
                fmt_num(s.min),
                fmt_num(s.max),
                s.cv * 100.0
            )
        })
        .unwrap_or_default();
    let body = format!("{}{unit}", fmt_num(v));
    let body = match f.mark {
        Mark::Clean => body,
        m => format!("<span class=\"noisy\">{body}{}</span>", m.suffix()),
    };
    format!("<td class=\"num\"{title}>{body}</td>")
}

/// Marked pieces of text: a noisy figure and a reason in their classes, a
/// command as code.
fn spans_html(spans: &[Span]) -> String {
    let mut out = String::new();
    for s in spans {
        let t = esc(&s.text);
        let _ = match s.style {
            Style::Plain => write!(out, "{t}"),
            Style::Noisy => write!(out, "<span class=\"noisy\">{t}</span>"),
            Style::NotAvailable => write!(out, "<span class=\"na\">{t}</span>"),
            Style::Code => write!(out, "<code>{t}</code>"),
        };
    }
    out
}

/// A table, with its caption.
pub fn table(t: &Table) -> String {
    let mut out = String::from("<table>");
    if let Some(c) = &t.caption {
        let _ = write!(out, "<caption>{}</caption>", esc(c));
    }
    out.push_str("<tr>");
    for c in &t.columns {
        let head = match &c.unit {
            Some(u) => format!("{} ({u})", c.header),
            None => c.header.clone(),
        };
        let _ = write!(out, "<th>{}</th>", esc(&head));
    }
    out.push_str("</tr>");
    for r in &t.rows {
        out.push_str("<tr>");
        // Cells a spanning one before covers.
        let mut covered = 0;
        for (c, col) in r.iter().zip(&t.columns) {
            if covered > 0 {
                covered -= 1;
                continue;
            }
            let class = if col.align == Align::Right {
                " class=\"num\""
            } else {
                ""
            };
            match c {
                Cell::Empty => {
                    let _ = write!(out, "<td{class}></td>");
                }
                Cell::Text(s) => {
                    let _ = write!(out, "<td{class}>{}</td>", esc(s));
                }
                Cell::Spans(spans) => {
                    let _ = write!(out, "<td{class}>{}</td>", spans_html(spans));
                }
                Cell::Absent { text, span } => {
                    covered = span.saturating_sub(1);
                    let colspan = if *span > 1 {
                        format!(" colspan=\"{span}\"")
                    } else {
                        String::new()
                    };
                    let _ = write!(out, "<td{colspan} class=\"na\">{}</td>", esc(text));
                }
                Cell::Figure(f) => out.push_str(&figure_cell(f, col.unit.is_some())),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// A chart: a line chart through the line engine, a bar chart as bars (one
/// per group and bar), a heatmap as a table; its caption under it.
pub fn chart(c: &Chart) -> String {
    let mut out = match &c.kind {
        ChartKind::Lines {
            x,
            y,
            series,
            marks,
            reference,
        } => svg_lines(&LineChart {
            title: &c.title,
            x,
            y,
            series,
            marks,
            reference: reference.as_ref(),
        }),
        ChartKind::Bars {
            unit,
            groups,
            scale,
            reference,
        } => {
            let svg = svg_bars(&BarChart {
                title: &c.title,
                unit,
                scale: *scale,
                groups,
                reference: reference.as_ref(),
            });
            match scale {
                // Figures spanning decades, on a line of their own.
                Scale::Log => format!("<div>{svg}</div>"),
                Scale::Linear | Scale::Auto => svg,
            }
        }
        ChartKind::Heatmap(h) => heat_table(&c.title, h),
        ChartKind::PairMatrix {
            map,
            outlined,
            outlined_label,
        } => svg_pair_matrix(&c.title, map, outlined, outlined_label),
        ChartKind::Intervals {
            subtitle,
            rows,
            reference,
            reference_label,
        } => super::intervals::svg_intervals(&c.title, subtitle, rows, *reference, reference_label),
    };
    if let Some(cap) = &c.caption {
        let _ = write!(out, "<p class=\"note\">{}</p>", esc(cap));
    }
    out
}

/// A heatmap as a table shaded from its lowest to its highest cell, each
/// cell's value and place on hover; a cell without a value `n/a`.
fn heat_table(title: &str, h: &Heatmap) -> String {
    let mut out = String::new();
    let (lo, hi) = h
        .cells
        .iter()
        .flatten()
        .flatten()
        .fold((f64::MAX, f64::MIN), |a, v| (a.0.min(*v), a.1.max(*v)));
    let _ = write!(
        out,
        "<p><b>{}</b></p><table><tr><th>{}</th>",
        esc(title),
        esc(&h.corner)
    );
    for c in &h.cols {
        let _ = write!(out, "<th>{}</th>", esc(c));
    }
    out.push_str("</tr>");
    for (rv, row) in h.rows.iter().zip(&h.cells) {
        let _ = write!(out, "<tr><th>{}</th>", esc(rv));
        for (col, v) in h.cols.iter().zip(row) {
            match v {
                Some(v) => {
                    let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
                    let _ = write!(
                        out,
                        r#"<td class="num" style="background:rgba(208,138,60,{:.2})" title="{}: {} {}, {} {} → {}">{}</td>"#,
                        0.1 + 0.6 * f,
                        esc(title),
                        esc(&h.row_label),
                        esc(rv),
                        esc(&h.col_label),
                        esc(col),
                        fmt_num(*v),
                        fmt_num(*v)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::model::{Axis, BarGroup, Series, Spread, Ticks, XMark};

    #[test]
    fn figures_carry_unit_mark_spread_and_reason_escaped() {
        let mut t = Table::new(&["mix <b>", "x"]);
        t.columns[1].align = Align::Right;
        let mut f = Figure::measured(12.5, "GB/s");
        f.mark = Mark::Noisy;
        f.spread = Some(Spread {
            n: 9,
            min: 12.0,
            max: 13.0,
            cv: 0.07,
        });
        t.push(vec![Cell::Text("1:1 & nt".into()), Cell::Figure(f)])
            .unwrap();
        t.push(vec![
            Cell::Text("b".into()),
            Cell::Figure(Figure::na("GB/s", "no <other> CPU")),
        ])
        .unwrap();
        let h = table(&t);
        assert!(h.contains("<th>mix &lt;b&gt;</th>"), "{h}");
        assert!(h.contains("1:1 &amp; nt"), "{h}");
        assert!(
            h.contains("median of 9, min 12.00 max 13.00, CV 7.0%"),
            "{h}"
        );
        assert!(
            h.contains("<span class=\"noisy\">12.50 GB/s !</span>"),
            "{h}"
        );
        assert!(h.contains("n/a: no &lt;other&gt; CPU"), "{h}");
        assert!(!h.contains("<other>"), "{h}");
    }

    #[test]
    fn a_line_chart_is_drawn_by_the_line_engine() {
        let c = Chart {
            title: "y vs x".into(),
            caption: Some("one series per mix".into()),
            kind: ChartKind::Lines {
                x: Axis::new("x", "GB/s", Scale::Linear),
                y: Axis::new("y", "ns", Scale::Auto),
                series: vec![Series {
                    name: Some("a".into()),
                    points: vec![(0.0, 80.0), (12.5, 95.0)],
                    hue: None,
                }],
                reference: None,
                marks: Vec::new(),
            },
        };
        let h = chart(&c);
        assert!(h.starts_with("<svg"), "{h}");
        assert!(h.contains("<polyline") && h.contains(">a</text>"), "{h}");
        assert!(
            h.ends_with("<p class=\"note\">one series per mix</p>"),
            "{h}"
        );
    }

    #[test]
    fn a_heatmap_is_a_shaded_table_with_its_labels_escaped() {
        let h = Heatmap::filled(
            vec!["0".into(), "1<".into()],
            vec!["0".into(), "interleave".into()],
            // A short row: the missing cell is not measured.
            &[vec![Some(80.0), Some(100.0)], vec![Some(140.0)]],
            "ns",
        )
        .labelled("node", "CPUs of node", "memory");
        let c = Chart {
            title: "NUMA & latency".into(),
            caption: None,
            kind: ChartKind::Heatmap(h),
        };
        let s = chart(&c);
        assert!(
            s.starts_with("<p><b>NUMA &amp; latency</b></p><table><tr><th>node</th><th>0</th>"),
            "{s}"
        );
        // Lowest cell lightest, highest darkest.
        assert!(
            s.contains("rgba(208,138,60,0.10)") && s.contains("rgba(208,138,60,0.70)"),
            "{s}"
        );
        assert!(
            s.contains("title=\"NUMA &amp; latency: CPUs of node 1&lt;, memory 0 → 140.0\""),
            "{s}"
        );
        assert!(s.contains("<th>1&lt;</th>") && !s.contains("1<"), "{s}");
        assert_eq!(s.matches("<td class=\"na\">n/a</td>").count(), 1, "{s}");
    }

    #[test]
    fn line_charts_write_ticks_as_their_axis_says_and_draw_markers() {
        let kind = |ticks| ChartKind::Lines {
            x: Axis {
                ticks,
                ..Axis::new("working set", "bytes", Scale::Log)
            },
            y: Axis::new("load-to-use", "ns", Scale::Log),
            series: vec![Series {
                name: Some("random".into()),
                points: vec![(4096.0, 1.2), (1048576.0, 4.0), (268435456.0, 90.0)],
                hue: None,
            }],
            reference: None,
            marks: vec![XMark {
                x: 32768.0,
                label: "L1d <sysfs>".into(),
            }],
        };
        let draw = |ticks| {
            chart(&Chart {
                title: "t".into(),
                caption: None,
                kind: kind(ticks),
            })
        };
        let bytes = draw(Ticks::Bytes);
        assert!(
            bytes.contains(">256M</text>") && bytes.contains("→ 1.200 ns"),
            "{bytes}"
        );
        assert!(bytes.contains("L1d &lt;sysfs&gt;"), "{bytes}");
        assert!(bytes.contains("working set (bytes, log scale)"), "{bytes}");
        let figures = draw(Ticks::Figure);
        assert_ne!(bytes, figures, "the tick style changes the labels");
    }

    #[test]
    fn headings_notes_and_not_available_lines_are_escaped() {
        let s = section(&Section {
            id: "x".into(),
            title: String::new(),
            blocks: vec![
                Block::Heading("Peak <FMA>".into()),
                Block::Note("a <b> note".into()),
                Block::NotAvailable("x: not available: no <y>".into()),
            ],
        });
        assert_eq!(
            s,
            "<h3>Peak &lt;FMA&gt;</h3><div class=\"note\">a &lt;b&gt; note</div><div class=\"note na\">x: not available: no &lt;y&gt;</div>"
        );
    }

    #[test]
    fn a_group_keeps_its_blocks_together_and_everything_is_escaped() {
        let names: Vec<String> = ["0", "1<"].iter().map(|s| s.to_string()).collect();
        let map = Heatmap::filled(
            names.clone(),
            names,
            &[vec![None, Some(40.0)], vec![Some(60.0), None]],
            "ns",
        )
        .labelled("CPU", "CPU", "CPUs");
        let matrix = Chart {
            title: "c2c <x>".into(),
            caption: None,
            kind: ChartKind::PairMatrix {
                map,
                outlined: vec![(0, 1)],
                outlined_label: "SMT <siblings>".into(),
            },
        };
        let s = section(&Section {
            id: "x".into(),
            title: String::new(),
            blocks: vec![Block::Group(vec![
                Block::Chart(matrix),
                Block::Strong("disturbed <a>".into()),
                Block::Plain("plain & b".into()),
                Block::List(vec!["one <i>".into(), "two".into()]),
            ])],
        });
        assert!(s.starts_with("<div><svg"), "{s}");
        assert!(
            s.ends_with("<ul><li>one &lt;i&gt;</li><li>two</li></ul></div>"),
            "{s}"
        );
        assert!(s.contains("<p><strong>disturbed &lt;a&gt;</strong></p><p>plain &amp; b</p>"));
        // A cell per pair, the outlined pair outlined both ways, labels escaped.
        assert_eq!(s.matches("<rect").count(), 4);
        assert_eq!(s.matches(r##"stroke="#000""##).count(), 2);
        assert!(s.contains("CPU 0 ↔ 1&lt;: 40.0 ns") && s.contains("SMT &lt;siblings&gt;"));
        assert!(!s.contains("<x>") && !s.contains("1<"));
    }

    #[test]
    fn log_scale_bars_stand_in_a_block_of_their_own() {
        let mut c = Chart::bars(
            "costs",
            "ns",
            vec![BarGroup::single("a", 0.5), BarGroup::single("b", 5e4)],
        );
        if let ChartKind::Bars { scale, .. } = &mut c.kind {
            *scale = Scale::Log;
        }
        let s = chart(&c);
        assert!(
            s.starts_with("<div><svg") && s.ends_with("</svg></div>"),
            "{s}"
        );
        assert!(s.contains("log scale from 0.1"));
    }

    #[test]
    fn marked_pieces_and_absent_cells_spanning_columns() {
        let mut t = Table::new(&["cpu", "a", "b", "c"]);
        t.columns[1].align = Align::Right;
        t.push(vec![
            Cell::Text("x".into()),
            Cell::Spans(vec![
                Span::new("12 ", Style::Plain),
                Span::new("NOISY", Style::Noisy),
            ]),
            Cell::Spans(vec![Span::new("why <not>", Style::NotAvailable)]),
            Cell::Spans(vec![Span::new("ls -l 'a'", Style::Code)]),
        ])
        .unwrap();
        t.push(vec![
            Cell::Text("y".into()),
            Cell::Absent {
                text: "not <published>".into(),
                span: 3,
            },
        ])
        .unwrap();
        t.push(vec![
            Cell::Text("z".into()),
            Cell::Absent {
                text: "-".into(),
                span: 1,
            },
        ])
        .unwrap();
        let s = table(&t);
        assert!(
            s.contains("<td class=\"num\">12 <span class=\"noisy\">NOISY</span></td>"),
            "{s}"
        );
        assert!(
            s.contains("<td><span class=\"na\">why &lt;not&gt;</span></td>"),
            "{s}"
        );
        assert!(s.contains("<td><code>ls -l &#39;a&#39;</code></td>"), "{s}");
        assert!(
            s.contains(
                "<tr><td>y</td><td colspan=\"3\" class=\"na\">not &lt;published&gt;</td></tr>"
            ),
            "the covered cells are not drawn: {s}"
        );
        assert!(
            s.contains("<tr><td>z</td><td class=\"na\">-</td><td></td><td></td></tr>"),
            "{s}"
        );
        let title = Block::Title(vec![
            Span::new("tune: ", Style::Plain),
            Span::new("a<b", Style::Code),
        ]);
        let mut out = String::new();
        blocks(&mut out, &[title]);
        assert_eq!(out, "<h2>tune: <code>a&lt;b</code></h2>");
    }
}

//! The text printer (docs/views.md, "Printers"): draws [`Section`]s for a
//! terminal. Tables are padded to their widest cell (right-aligned columns
//! for figures), a column's unit is said once in its header, a figure is
//! marked `!` when noisy and `?` when suspect, and one without a value
//! prints `n/a` with its reason in a note under the table. Charts print as
//! the table of their points (the HTML report draws them). Every string
//! from a record is made safe for a terminal.

use super::model::{
    Align, Block, Cell, Chart, ChartKind, Figure, FigureList, Mark, Section, Span, Table, NO_REASON,
};
use crate::base::fmt::{fmt_num, for_terminal};
use std::fmt::Write as _;

/// Indent of a table's rows under its caption.
const INDENT: &str = "    ";

/// The sections as text, one after the other; empty for none.
pub fn sections(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&section(s));
    }
    out
}

/// One section: its title (when it has one), then its blocks (a table's
/// caption indented under a title, as the lines are).
pub fn section(s: &Section) -> String {
    let mut out = String::new();
    let titled = !s.title.is_empty();
    if titled {
        let _ = writeln!(out, "{}", for_terminal(&s.title));
    }
    blocks(&mut out, &s.blocks, titled);
    out
}

/// Blocks in order (a group's as its own).
fn blocks(out: &mut String, blocks: &[Block], titled: bool) {
    for b in blocks {
        match b {
            Block::Heading(h) if titled => {
                let _ = writeln!(out, "  {}", for_terminal(h));
            }
            Block::Heading(h) => {
                let _ = writeln!(out, "{}", for_terminal(h));
            }
            Block::Title(spans) => {
                let _ = writeln!(out, "{}", for_terminal(&Span::joined(spans)));
            }
            Block::Plain(p) | Block::Strong(p) => {
                let _ = writeln!(out, "  {}", for_terminal(p));
            }
            Block::List(items) => {
                for i in items {
                    let _ = writeln!(out, "  - {}", for_terminal(i));
                }
            }
            Block::Group(inner) => self::blocks(out, inner, titled),
            Block::Figures(list) => figure_lines(out, list),
            Block::Para(p) => {
                let _ = writeln!(out, "  {}", for_terminal(p));
            }
            Block::Note(n) => {
                let _ = writeln!(out, "  {}", for_terminal(n));
            }
            Block::NotAvailable(n) => {
                let _ = writeln!(out, "  {}", for_terminal(n));
            }
            Block::Verbatim(lines) => {
                for l in lines {
                    let _ = writeln!(out, "{}", for_terminal(l));
                }
            }
            Block::Table(t) if titled && t.caption.is_some() => {
                let mut inner = t.clone();
                let caption = inner.caption.take().unwrap_or_default();
                let _ = writeln!(out, "  {}", for_terminal(&caption));
                out.push_str(&table(&inner));
            }
            Block::Table(t) => out.push_str(&table(t)),
            Block::Chart(c) => out.push_str(&table(&chart_table(c))),
        }
    }
}

/// A list of figures: `== heading`, then per figure a line of fixed
/// columns (name and parameters, value, unit, then its spread, `(derived)`
/// without one, or `not available:` and the reason) and its notes under it.
fn figure_lines(out: &mut String, list: &FigureList) {
    if let Some(h) = &list.heading {
        let _ = writeln!(out, "== {}", for_terminal(h));
    }
    for i in &list.items {
        let label = format!("{:<14} {}", i.name, i.params);
        let f = &i.figure;
        let line = match (f.value, &f.spread) {
            (Some(v), Some(st)) => format!(
                "  {label:<48} {:>10} {:<6} median of {}, min {} max {}, CV {:.1}%{}",
                fmt_num(v),
                f.unit,
                st.n,
                fmt_num(st.min),
                fmt_num(st.max),
                st.cv * 100.0,
                if f.mark == Mark::Noisy { "  NOISY" } else { "" }
            ),
            (Some(v), None) => format!("  {label:<48} {:>10} {:<6} (derived)", fmt_num(v), f.unit),
            _ => format!(
                "  {label:<48} not available: {}",
                f.na_reason.as_deref().unwrap_or(NO_REASON)
            ),
        };
        let _ = writeln!(out, "{}", for_terminal(&line));
        for n in &i.notes {
            let _ = writeln!(out, "      {}", for_terminal(n));
        }
    }
}

/// A figure's cell: its value (with its unit unless the column says it)
/// and mark, or `n/a`.
fn figure_text(f: &Figure, unit_in_header: bool) -> String {
    let Some(v) = f.value else {
        return "n/a".into();
    };
    let mark = f.mark.suffix();
    if unit_in_header || f.unit.is_empty() {
        format!("{}{mark}", fmt_num(v))
    } else {
        format!("{} {}{mark}", fmt_num(v), f.unit)
    }
}

fn cell_text(c: &Cell, unit_in_header: bool) -> String {
    match c {
        Cell::Empty => String::new(),
        Cell::Text(t) | Cell::Absent { text: t, .. } => for_terminal(t).into_owned(),
        Cell::Spans(spans) => for_terminal(&Span::joined(spans)).into_owned(),
        Cell::Figure(f) => figure_text(f, unit_in_header),
    }
}

/// A table: its caption, the header row (each column's unit after its
/// name), the rows padded to the widest cell, then a note per figure
/// without a value (`n/a` in the table), with its reason.
pub fn table(t: &Table) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "{}", for_terminal(c));
    }
    let header: Vec<String> = t
        .columns
        .iter()
        .map(|c| match &c.unit {
            Some(u) => for_terminal(&format!("{} {u}", c.header)).into_owned(),
            None => for_terminal(&c.header).into_owned(),
        })
        .collect();
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            // A short row is filled with empty cells.
            let mut cells: Vec<String> = r
                .iter()
                .zip(&t.columns)
                .map(|(c, col)| cell_text(c, col.unit.is_some()))
                .collect();
            cells.resize(t.columns.len(), String::new());
            cells
        })
        .collect();
    // A reason over several columns is written out after its row's other
    // cells: it widens no column.
    let spans = |r: usize| -> Option<usize> {
        t.rows
            .get(r)?
            .iter()
            .position(|c| matches!(c, Cell::Absent { span, .. } if *span > 1))
    };
    let widths: Vec<usize> = (0..t.columns.len())
        .map(|i| {
            let body = rows
                .iter()
                .enumerate()
                .filter(|(r, _)| spans(*r).is_none_or(|k| i < k))
                .map(|(_, r)| r[i].chars().count());
            body.chain([header[i].chars().count()]).max().unwrap_or(0)
        })
        .collect();
    let pad = |c: &str, align: Align, w: usize| match align {
        Align::Left => format!("{c:<w$}"),
        Align::Right => format!("{c:>w$}"),
    };
    for (k, r) in std::iter::once(&header).chain(&rows).enumerate() {
        let cut = k.checked_sub(1).and_then(spans).unwrap_or(r.len());
        let mut cells: Vec<String> = r
            .iter()
            .zip(&t.columns)
            .zip(&widths)
            .take(cut)
            .map(|((c, col), &w)| pad(c, col.align, w))
            .collect();
        cells.extend(r.get(cut).cloned());
        let _ = writeln!(out, "{INDENT}{}", cells.join("  ").trim_end());
    }
    for (r, why) in t.missing() {
        let first = rows[r].first().cloned().unwrap_or_default();
        let _ = writeln!(out, "{INDENT}n/a ({}): {}", first.trim(), for_terminal(why));
    }
    out
}

/// A chart as the table of what it draws: a line chart's points (series,
/// x, y), a bar chart's bars, a heatmap's cells.
pub fn chart_table(c: &Chart) -> Table {
    let right = |t: &mut Table, from: usize| {
        for col in t.columns.iter_mut().skip(from) {
            col.align = Align::Right;
        }
    };
    let num = |v: f64, unit: &str| Cell::Figure(Figure::measured(v, unit));
    let mut t;
    match &c.kind {
        ChartKind::Lines { x, y, series, .. } => {
            t = Table::new(&["series", &x.label, &y.label]);
            t.columns[1].unit = Some(x.unit.clone()).filter(|u| !u.is_empty());
            t.columns[2].unit = Some(y.unit.clone()).filter(|u| !u.is_empty());
            right(&mut t, 1);
            for s in series {
                for &(px, py) in &s.points {
                    let name = s.name.clone().unwrap_or_default();
                    let _ = t.push(vec![Cell::Text(name), num(px, ""), num(py, "")]);
                }
            }
        }
        ChartKind::Bars { unit, groups, .. } => {
            t = Table::new(&["group", "bar", "value"]);
            t.columns[2].unit = Some(unit.clone()).filter(|u| !u.is_empty());
            right(&mut t, 2);
            for g in groups {
                for b in &g.bars {
                    let _ = t.push(vec![
                        Cell::Text(g.label.clone()),
                        Cell::Text(b.label.clone()),
                        num(b.value, ""),
                    ]);
                }
            }
        }
        ChartKind::Heatmap(h) | ChartKind::PairMatrix { map: h, .. } => {
            let mut heads = vec![h.corner.as_str()];
            heads.extend(h.cols.iter().map(String::as_str));
            t = Table::new(&heads);
            right(&mut t, 1);
            for (label, row) in h.rows.iter().zip(&h.cells) {
                let mut cells = vec![Cell::Text(label.clone())];
                cells.extend(row.iter().map(|v| match v {
                    Some(v) => num(*v, ""),
                    None => Cell::Text("-".into()),
                }));
                let _ = t.push(cells);
            }
        }
        ChartKind::Intervals { rows, .. } => {
            t = Table::new(&["row", "estimate", "low", "high"]);
            right(&mut t, 1);
            for r in rows {
                let _ = t.push(vec![
                    Cell::Text(r.label.clone()),
                    num(r.estimate, ""),
                    num(r.low, ""),
                    num(r.high, ""),
                ]);
            }
        }
    }
    t.caption = Some(match &c.caption {
        Some(cap) => format!("{} ({cap})", c.title),
        None => c.title.clone(),
    });
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::model::{Axis, Mark, Scale, Series};

    fn fig(v: f64) -> Cell {
        Cell::Figure(Figure::measured(v, "ns"))
    }

    #[test]
    fn tables_pad_to_the_widest_cell_and_say_units_once() {
        let mut t = Table::new(&["mix", "y"]);
        t.columns[1].align = Align::Right;
        t.columns[1].unit = Some("ns".into());
        t.caption = Some("Mixes".into());
        t.push(vec![Cell::Text("a".into()), fig(81.5)]).unwrap();
        t.push(vec![Cell::Text("1:1 nt".into()), fig(1234.0)])
            .unwrap();
        let s = table(&t);
        assert_eq!(
            s,
            "Mixes\n    mix      y ns\n    a       81.50\n    1:1 nt   1234\n"
        );
    }

    #[test]
    fn a_figure_without_a_value_prints_na_and_its_reason() {
        let mut t = Table::new(&["mix", "x"]);
        t.push(vec![
            Cell::Text("b".into()),
            Cell::Figure(Figure::na("GB/s", "no other CPU")),
        ])
        .unwrap();
        let s = table(&t);
        assert!(s.contains("    b    n/a"), "{s}");
        assert!(s.contains("n/a (b): no other CPU"), "{s}");
    }

    #[test]
    fn marks_and_terminal_escapes() {
        let mut noisy = Figure::measured(2.0, "GB/s");
        noisy.mark = Mark::Noisy;
        let mut t = Table::new(&["a\x1b[31m", "b"]);
        t.push(vec![Cell::Text("x\x07".into()), Cell::Figure(noisy)])
            .unwrap();
        let s = table(&t);
        assert!(!s.contains('\x1b') && !s.contains('\x07'), "{s:?}");
        assert!(s.contains("2.000 GB/s !"), "{s}");
    }

    #[test]
    fn a_line_chart_prints_its_points() {
        let c = Chart {
            title: "y vs x".into(),
            caption: None,
            kind: ChartKind::Lines {
                x: Axis::new("x", "GB/s", Scale::Linear),
                y: Axis::new("y", "ns", Scale::Linear),
                series: vec![Series {
                    name: Some("a".into()),
                    points: vec![(0.0, 80.0), (12.5, 95.0)],
                    hue: None,
                }],
                reference: None,
                marks: Vec::new(),
            },
        };
        let s = section(&Section {
            id: "x".into(),
            title: String::new(),
            blocks: vec![Block::Chart(c)],
        });
        assert!(s.starts_with("y vs x\n"), "{s}");
        assert!(s.contains("x GB/s"), "{s}");
        assert!(
            s.contains("\n    a ") && s.contains("12.50") && s.contains("95.00"),
            "{s}"
        );
    }

    #[test]
    fn a_reason_over_several_columns_widens_none_and_a_titled_sections_captions_indent() {
        let mut t = Table::new(&["CPU", "time", "speed"]);
        t.caption = Some("bc <vs> published".into());
        t.rows.push(vec![
            Cell::Text("A".into()),
            Cell::Text("2 s".into()),
            Cell::Text("90%".into()),
        ]);
        t.rows.push(vec![
            Cell::Text("B".into()),
            Cell::Absent {
                text: "no time published for this machine".into(),
                span: 2,
            },
        ]);
        let s = section(&Section {
            id: "x".into(),
            title: "Seed workloads".into(),
            blocks: vec![Block::Heading("against published".into()), Block::Table(t)],
        });
        assert_eq!(
            s,
            "Seed workloads\n  against published\n  bc <vs> published\n    CPU  time  speed\n    A    2 s   90%\n    B    no time published for this machine\n"
                ,
            "{s}"
        );
    }

    #[test]
    fn a_figure_list_is_one_line_per_figure_in_fixed_columns() {
        let item = |name: &str, figure: Figure, notes: &[&str]| crate::view::model::FigureItem {
            name: name.into(),
            params: "pages=2m".into(),
            figure,
            notes: notes.iter().map(|n| n.to_string()).collect(),
        };
        let mut noisy = Figure::measured(221.9, "ns");
        noisy.spread = Some(crate::view::model::Spread {
            n: 288,
            min: 203.6,
            max: 390.1,
            cv: 0.117,
        });
        noisy.mark = Mark::Noisy;
        let list = FigureList {
            heading: Some("mem".into()),
            items: vec![
                item("far", noisy, &["working set \x1b[2J1.9 GiB"]),
                item("L2_ratio", Figure::measured(1.5, "ratio"), &[]),
                item("L9", Figure::na("ns", "no L9"), &[]),
            ],
        };
        let s = section(&Section {
            id: "mem".into(),
            title: String::new(),
            blocks: vec![Block::Figures(list)],
        });
        assert_eq!(
            s,
            "== mem\n  far            pages=2m                               221.9 ns     median of 288, min 203.6 max 390.1, CV 11.7%  NOISY\n      working set \\x1b[2J1.9 GiB\n  L2_ratio       pages=2m                               1.500 ratio  (derived)\n  L9             pages=2m                          not available: no L9\n"
        );
    }
}

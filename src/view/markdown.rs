//! The Markdown printer (docs/views.md, "Printers"): draws [`Section`]s as
//! CommonMark with GitHub's tables, for an article, a ticket or a wiki page.
//! A section's title is a level-3 heading; a table is a pipe table (a
//! column's unit in its header, figures right-aligned, `!` noisy, `?`
//! suspect, `n/a` with its reason in a list under the table); a chart is the
//! table of what it draws (the HTML report draws it); pre-formatted text is a
//! fenced block. Every string from a record is made safe for a terminal and
//! escaped where Markdown would read it as markup (a pipe never ends a cell,
//! a `<` never opens a tag).

use super::model::{Align, Block, Cell, Figure, Section, Span, Style, Table};
use super::text::chart_table;
use crate::base::fmt::{fmt_num, for_terminal};
use std::fmt::Write as _;

/// The sections as Markdown, each followed by a blank line; empty for none.
pub fn sections(sections: &[Section]) -> String {
    sections.iter().map(section).collect()
}

/// One section: its title as a heading (when it has one), then its blocks,
/// each followed by a blank line.
pub fn section(s: &Section) -> String {
    let mut out = String::new();
    if !s.title.is_empty() {
        let _ = writeln!(out, "### {}\n", inline(&s.title));
    }
    blocks(&mut out, &s.blocks);
    out
}

/// Blocks in order, each followed by a blank line (a group's as its own).
fn blocks(out: &mut String, blocks: &[Block]) {
    for b in blocks {
        match b {
            Block::Heading(h) => {
                let _ = writeln!(out, "#### {}\n", inline(h));
            }
            Block::Title(spans) => {
                let _ = writeln!(out, "### {}\n", spans_text(spans));
            }
            Block::Para(p) | Block::Note(p) | Block::Plain(p) => {
                let _ = writeln!(out, "{}\n", paragraph(p));
            }
            Block::Strong(p) => {
                let _ = writeln!(out, "**{}**\n", inline(p));
            }
            Block::List(items) => {
                for i in items {
                    let _ = writeln!(out, "- {}", inline(i));
                }
                out.push('\n');
            }
            Block::Group(inner) => self::blocks(out, inner),
            Block::Figures(list) => {
                if let Some(h) = &list.heading {
                    let _ = writeln!(out, "#### {}\n", inline(h));
                }
                let mut t = list.table();
                t.caption = None;
                let _ = writeln!(out, "{}", table(&t));
                for n in list.notes() {
                    let _ = writeln!(out, "{}\n", paragraph(&n));
                }
            }
            Block::NotAvailable(n) => {
                let _ = writeln!(out, "*n/a:* {}\n", inline(n));
            }
            Block::Verbatim(lines) => {
                let _ = writeln!(out, "{}", fenced(lines));
            }
            Block::Table(t) => {
                let _ = writeln!(out, "{}", table(t));
            }
            Block::Chart(c) => {
                let _ = writeln!(out, "{}", table(&chart_table(c)));
            }
        }
    }
}

/// Text inside a line: terminal-safe, on one line, with every character
/// Markdown could read as markup behind a backslash (CommonMark escapes any
/// ASCII punctuation that way).
pub fn inline(s: &str) -> String {
    let safe = for_terminal(s);
    let chars: Vec<char> = safe.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        // An underscore between two letters or digits never marks emphasis
        // (CommonMark's flanking rules): `x86_64` stays as it is.
        let inside_word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        if c == '_' && inside_word(i.checked_sub(1)) && inside_word(Some(i + 1)) {
            out.push(c);
            continue;
        }
        match c {
            // A `>` opens a block quote only at a line's start (`paragraph`).
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '|' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// Inline code: fenced by more backticks than any run inside, a table's
/// `|` escaped (GFM reads it inside code too), line breaks as spaces.
fn code(s: &str) -> String {
    let body: String = for_terminal(s)
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect::<String>()
        .replace('|', "\\|");
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {body} {fence}")
}

/// A paragraph: [`inline`], and a first character that would start a
/// heading, a list or a block quote escaped too.
fn paragraph(s: &str) -> String {
    let text = inline(s);
    let starts_block = text.starts_with(['#', '+', '-', '=', '>'])
        || text
            .split_once(['.', ')'])
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    if starts_block {
        format!("\\{text}")
    } else {
        text
    }
}

/// Pre-formatted lines in a fenced block whose fence is longer than any
/// run of backticks inside, so nothing inside can close it.
fn fenced(lines: &[String]) -> String {
    let body: Vec<String> = lines.iter().map(|l| for_terminal(l).into_owned()).collect();
    let longest = body
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let mut out = format!("{fence}text\n");
    for l in &body {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "{fence}");
    out
}

fn figure_text(f: &Figure, unit_in_header: bool) -> String {
    let Some(v) = f.value else {
        return "n/a".into();
    };
    let mark = inline(f.mark.suffix());
    if unit_in_header || f.unit.is_empty() {
        format!("{}{mark}", fmt_num(v))
    } else {
        format!("{} {}{mark}", fmt_num(v), inline(&f.unit))
    }
}

/// Marked pieces: a command as code, the rest as text (a noisy piece
/// carries its own word).
fn spans_text(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| match s.style {
            Style::Code => code(&s.text),
            Style::Plain | Style::Noisy | Style::NotAvailable => inline(&s.text),
        })
        .collect()
}

fn cell_text(c: &Cell, unit_in_header: bool) -> String {
    match c {
        Cell::Empty => String::new(),
        Cell::Text(t) | Cell::Absent { text: t, .. } => inline(t),
        Cell::Spans(spans) => spans_text(spans),
        Cell::Figure(f) => figure_text(f, unit_in_header),
    }
}

/// A table: its caption in bold, the pipe table (a column's unit in its
/// header, in brackets), then each figure without a value and its reason.
pub fn table(t: &Table) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "**{}**\n", inline(c));
    }
    let header: Vec<String> = t
        .columns
        .iter()
        .map(|c| match &c.unit {
            Some(u) => format!("{} ({})", inline(&c.header), inline(u)),
            None => inline(&c.header),
        })
        .collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let rule: Vec<&str> = t
        .columns
        .iter()
        .map(|c| match c.align {
            Align::Left => "---",
            Align::Right => "---:",
        })
        .collect();
    let _ = writeln!(out, "| {} |", rule.join(" | "));
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&t.columns)
            .map(|(c, col)| cell_text(c, col.unit.is_some()))
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let missing: Vec<String> = t
        .missing()
        .map(|(r, why)| {
            let first = t.rows[r]
                .first()
                .map(|c| cell_text(c, false))
                .unwrap_or_default();
            format!("- n/a ({}): {}", first.trim(), inline(why))
        })
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(out, "\n{}", missing.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::model::{Axis, Chart, ChartKind, Mark, Scale, Series};

    #[test]
    fn code_pieces_are_fenced_beyond_their_backticks_and_pipes_escaped() {
        let mut t = Table::new(&["candidate", "reproduce"]);
        t.push(vec![
            Cell::Absent {
                text: "not *published*".into(),
                span: 1,
            },
            Cell::Spans(vec![
                Span::new("run ", Style::Plain),
                Span::new("a | b `c`", Style::Code),
            ]),
        ])
        .unwrap();
        let s = table(&t);
        assert!(
            s.contains("| not \\*published\\* | run `` a \\| b `c` `` |"),
            "{s}"
        );
    }

    #[test]
    fn a_table_is_a_pipe_table_with_units_in_headers_and_reasons_below() {
        let mut t = Table::new(&["mix", "delay"]);
        t.columns[1].align = Align::Right;
        t.columns[1].unit = Some("ns".into());
        t.caption = Some("Mixes".into());
        let mut noisy = Figure::measured(1234.0, "ns");
        noisy.mark = Mark::Noisy;
        t.push(vec![Cell::Text("a".into()), Cell::Figure(noisy)])
            .unwrap();
        t.push(vec![
            Cell::Text("b".into()),
            Cell::Figure(Figure::na("ns", "no other CPU")),
        ])
        .unwrap();
        assert_eq!(
            table(&t),
            "**Mixes**\n\n| mix | delay (ns) |\n| --- | ---: |\n| a | 1234 ! |\n| b | n/a |\n\n- n/a (b): no other CPU\n"
        );
    }

    #[test]
    fn markup_and_control_characters_from_records_are_escaped() {
        let mut t = Table::new(&["cpu|model"]);
        t.push(vec![Cell::Text("<script>*x*\x1b[31m".into())])
            .unwrap();
        let s = table(&t);
        assert!(s.contains("| cpu\\|model |"), "{s}");
        assert!(s.contains("\\<script>\\*x\\*"), "{s}");
        assert!(!s.contains('\x1b'), "{s:?}");
        assert_eq!(paragraph("1. not a list"), "\\1. not a list");
        assert_eq!(paragraph("# not a heading"), "\\# not a heading");
        assert_eq!(paragraph("L2 1.5 MiB"), "L2 1.5 MiB");
        assert_eq!(inline("x86_64 _a_ b_"), "x86_64 \\_a\\_ b\\_");
    }

    #[test]
    fn verbatim_text_is_fenced_beyond_any_backticks_inside() {
        let s = section(&Section {
            id: "x".into(),
            title: "Latency".into(),
            blocks: vec![Block::Verbatim(vec!["a ```` b".into(), "c".into()])],
        });
        assert!(
            s.starts_with("### Latency\n\n`````text\na ```` b\nc\n`````\n"),
            "{s}"
        );
    }

    #[test]
    fn a_chart_prints_as_the_table_of_its_points() {
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
        assert!(s.starts_with("**y vs x**\n\n| series | x (GB/s) | y (ns) |\n| --- | ---: | ---: |\n| a | 0 | 80.00 |"), "{s}");
    }

    #[test]
    fn a_group_prints_its_blocks_strong_in_bold_and_a_list_as_items() {
        let s = section(&Section {
            id: "pairs".into(),
            title: String::new(),
            blocks: vec![Block::Group(vec![
                Block::Strong("disturbed *x*".into()),
                Block::Plain("not inferred".into()),
                Block::List(vec!["one <b>".into(), "two".into()]),
            ])],
        });
        assert_eq!(
            s,
            "**disturbed \\*x\\***\n\nnot inferred\n\n- one \\<b>\n- two\n\n"
        );
    }
}

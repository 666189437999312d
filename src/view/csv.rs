//! The CSV printer (docs/views.md, "Printers"): draws [`Section`]s as one
//! long-form CSV, a line per cell, so a spreadsheet or a script filters it
//! without knowing any table's shape:
//!
//! `section,table,row,column,text,value,unit,mark,na_reason`
//!
//! - `section`: the section's id; `table`: the table's caption or the
//!   chart's title (a chart gives the table of what it draws);
//! - `row` (from 0) and `column` (the column's header) place the cell;
//! - a text cell fills `text`; a figure fills `value` (full precision),
//!   `unit`, `mark` (`noisy`, `suspect` or empty) and, without a value,
//!   `na_reason`;
//! - prose is a line too: `table` is `title` (the section's), `heading`,
//!   `para`, `note` or `not_available`,
//!   and pre-formatted text is one line per line (`table` `text`), so
//!   nothing a section holds is left out.
//!
//! Text cells go through [`csv_cell`] (one line, never a formula, RFC 4180
//! quoting).

use super::model::{Block, Cell, Figure, Mark, Section, Span, Style, Table};
use super::text::chart_table;
use crate::base::fmt::csv_cell;
use std::fmt::Write as _;

/// The header line.
pub const HEADER: &str = "section,table,row,column,text,value,unit,mark,na_reason";

/// The sections as CSV, the header first.
pub fn sections(sections: &[Section]) -> String {
    let mut out = format!("{HEADER}\n");
    for s in sections {
        out.push_str(&section(s));
    }
    out
}

/// One section's lines (no header).
pub fn section(s: &Section) -> String {
    let mut out = String::new();
    if !s.title.is_empty() {
        prose(&mut out, &s.id, "title", 0, &s.title);
    }
    blocks(&mut out, &s.id, &s.blocks);
    out
}

/// A line of prose: its kind as the table, its place as the row.
fn prose(out: &mut String, id: &str, kind: &str, row: usize, text: &str) {
    line(out, id, kind, row, "text", &Cell::Text(text.into()));
}

/// Blocks in order, each prose block's row its place (a group's blocks
/// numbered within it).
fn blocks(out: &mut String, id: &str, blocks: &[Block]) {
    for (i, b) in blocks.iter().enumerate() {
        match b {
            Block::Heading(h) => prose(out, id, "heading", i, h),
            Block::Title(spans) => prose(out, id, "title", i, &Span::joined(spans)),
            Block::Para(p) => prose(out, id, "para", i, p),
            Block::Plain(p) => prose(out, id, "plain", i, p),
            Block::Strong(p) => prose(out, id, "strong", i, p),
            Block::Note(n) => prose(out, id, "note", i, n),
            Block::NotAvailable(n) => prose(out, id, "not_available", i, n),
            Block::List(items) => {
                for (r, l) in items.iter().enumerate() {
                    prose(out, id, "list", r, l);
                }
            }
            Block::Verbatim(lines) => {
                for (r, l) in lines.iter().enumerate() {
                    prose(out, id, "text", r, l);
                }
            }
            Block::Group(inner) => self::blocks(out, id, inner),
            Block::Figures(list) => {
                table(out, id, &list.table());
                for (r, n) in list.notes().enumerate() {
                    prose(out, id, "note", r, &n);
                }
            }
            Block::Table(t) => table(out, id, t),
            Block::Chart(c) => table(out, id, &chart_table(c)),
        }
    }
}

fn table(out: &mut String, section: &str, t: &Table) {
    let name = t.caption.as_deref().unwrap_or("");
    for (r, row) in t.rows.iter().enumerate() {
        for (c, col) in row.iter().zip(&t.columns) {
            if matches!(c, Cell::Empty) {
                continue;
            }
            line(out, section, name, r, &col.header, c);
        }
    }
}

fn line(out: &mut String, section: &str, table: &str, row: usize, column: &str, cell: &Cell) {
    let (text, value, unit, mark, why) = match cell {
        Cell::Empty => (String::new(), String::new(), "", "", ""),
        Cell::Text(t) => (csv_cell(t), String::new(), "", "", ""),
        Cell::Absent { text, .. } => (csv_cell(text), String::new(), "", "", ""),
        Cell::Spans(spans) => {
            let noisy = spans.iter().any(|s| s.style == Style::Noisy);
            let why = spans
                .iter()
                .find(|s| s.style == Style::NotAvailable)
                .map_or("", |s| s.text.as_str());
            (
                csv_cell(&Span::joined(spans)),
                String::new(),
                "",
                if noisy { "noisy" } else { "" },
                why,
            )
        }
        Cell::Figure(Figure {
            value,
            unit,
            mark,
            na_reason,
            ..
        }) => (
            String::new(),
            value.map(|v| format!("{v}")).unwrap_or_default(),
            unit.as_str(),
            match mark {
                Mark::Clean => "",
                Mark::Noisy => "noisy",
                Mark::Suspect => "suspect",
            },
            na_reason.as_deref().unwrap_or(""),
        ),
    };
    let _ = writeln!(
        out,
        "{},{},{row},{},{text},{value},{},{mark},{}",
        csv_cell(section),
        csv_cell(table),
        csv_cell(column),
        csv_cell(unit),
        csv_cell(why)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::model::Align;

    #[test]
    fn marked_pieces_carry_their_mark_and_reason() {
        let mut t = Table::new(&["cv", "median"]);
        t.push(vec![
            Cell::Spans(vec![Span::new("6.2%", Style::Noisy)]),
            Cell::Spans(vec![Span::new("failed, a", Style::NotAvailable)]),
        ])
        .unwrap();
        let mut out = String::new();
        table(&mut out, "s1", &t);
        assert_eq!(
            out,
            "s1,,0,cv,6.2%,,,noisy,\ns1,,0,median,\"failed, a\",,,,\"failed, a\"\n"
        );
    }

    #[test]
    fn every_cell_and_line_of_prose_is_one_line() {
        let mut t = Table::new(&["mix", "delay"]);
        t.columns[1].align = Align::Right;
        t.caption = Some("Mixes, all".into());
        let mut noisy = Figure::measured(81.25, "ns");
        noisy.mark = Mark::Noisy;
        t.push(vec![Cell::Text("=1:1".into()), Cell::Figure(noisy)])
            .unwrap();
        t.push(vec![
            Cell::Text("b".into()),
            Cell::Figure(Figure::na("ns", "no other CPU")),
        ])
        .unwrap();
        let s = sections(&[Section {
            id: "mixes".into(),
            title: "Mixes".into(),
            blocks: vec![
                Block::Table(t),
                Block::Note("a note".into()),
                Block::Verbatim(vec!["x".into(), "y".into()]),
            ],
        }]);
        assert_eq!(
            s,
            "section,table,row,column,text,value,unit,mark,na_reason\n\
             mixes,title,0,text,Mixes,,,,\n\
             mixes,\"Mixes, all\",0,mix,\"'=1:1\",,,,\n\
             mixes,\"Mixes, all\",0,delay,,81.25,ns,noisy,\n\
             mixes,\"Mixes, all\",1,mix,b,,,,\n\
             mixes,\"Mixes, all\",1,delay,,,ns,,no other CPU\n\
             mixes,note,1,text,a note,,,,\n\
             mixes,text,0,text,x,,,,\n\
             mixes,text,1,text,y,,,,\n"
        );
    }

    #[test]
    fn a_group_prints_its_blocks_in_order_and_a_list_each_item() {
        let s = section(&Section {
            id: "pairs".into(),
            title: String::new(),
            blocks: vec![Block::Group(vec![
                Block::Strong("disturbed".into()),
                Block::Plain("not inferred".into()),
                Block::List(vec!["one, two".into(), "three".into()]),
            ])],
        });
        assert_eq!(
            s,
            "pairs,strong,0,text,disturbed,,,,\n\
             pairs,plain,1,text,not inferred,,,,\n\
             pairs,list,0,text,\"one, two\",,,,\n\
             pairs,list,1,text,three,,,,\n"
        );
    }
}

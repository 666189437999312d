//! The memory commands' text (`cpuscope latency`, `bandwidth`, …) and the
//! summary sections of its experiments, as typed blocks: each record an item
//! of the experiment's figure list, after the table its own experiment draws
//! of it (a curve, a sweep, a matrix; in the experiment's folder, as
//! tables). Never measures.

use crate::base::fmt::fmt_num;
use crate::experiments::memory::{bandwidth, latency, loaded_latency, numa_matrix};
use crate::experiments::render::figure_item;
use crate::results::schema::{ResultRecord, Run};
use crate::view::{report_section, text, Block, Depth, FigureList, Section};

/// A matrix or table cell: the figure, or `n/a`.
pub fn cell(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "n/a".into())
}

/// The tables a record's experiment draws of it, if any.
fn structured(r: &ResultRecord) -> Vec<Block> {
    if r.is(numa_matrix::MATRIX) {
        numa_matrix::text::matrices(r)
    } else if r.is(loaded_latency::CURVE) {
        loaded_latency::text::points(r)
    } else if r.is(bandwidth::SATURATION_THREADS) {
        bandwidth::text::sweep(r)
    } else {
        Vec::new()
    }
}

/// The blocks of records, in order, one experiment after another: each
/// experiment's figures as a list under its name, and before a record's
/// figure the table its experiment draws of it (a curve, a sweep, a
/// matrix) as it is laid out; a latency curve is its table and notes.
pub fn blocks(recs: &[ResultRecord]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut list: Option<FigureList> = None;
    let mut exp = "";
    for r in recs {
        if r.experiment != exp {
            exp = &r.experiment;
            flush(&mut out, &mut list);
            list = Some(FigureList {
                heading: Some(exp.to_string()),
                items: Vec::new(),
            });
        }
        let curve = r.is(latency::CURVE) && r.data.is_some();
        if curve {
            flush(&mut out, &mut list);
            out.extend(latency::text::curve(r));
            out.extend(r.notes.iter().map(|n| Block::Note(format!("note: {n}"))));
            continue;
        }
        let tables = structured(r);
        if !tables.is_empty() {
            flush(&mut out, &mut list);
            out.extend(tables);
        }
        list.get_or_insert_with(|| FigureList {
            heading: None,
            items: Vec::new(),
        })
        .items
        .push(figure_item(r));
    }
    flush(&mut out, &mut list);
    out
}

/// The list so far as a block (a heading alone too: it starts the
/// experiment's part).
fn flush(out: &mut Vec<Block>, list: &mut Option<FigureList>) {
    if let Some(l) = list.take() {
        if l.heading.is_some() || !l.items.is_empty() {
            out.push(Block::Figures(l));
        }
    }
}

/// Every record as text (the memory commands): each experiment's part after
/// an empty line.
pub fn render(recs: &[ResultRecord]) -> String {
    let mut out = String::new();
    for b in blocks(recs) {
        if matches!(
            &b,
            Block::Figures(FigureList {
                heading: Some(_),
                ..
            })
        ) {
            out.push('\n');
        }
        out.push_str(&text::section(&Section {
            id: String::new(),
            title: String::new(),
            blocks: vec![b],
        }));
    }
    out
}

/// The summary's section of experiment `exp` in `run` (none when it has no
/// record).
pub fn sections(run: &Run, exp: &str) -> Vec<Section> {
    let recs: Vec<ResultRecord> = run.records_of(exp).cloned().collect();
    if recs.is_empty() {
        return Vec::new();
    }
    vec![Section {
        id: exp.to_string(),
        title: String::new(),
        blocks: blocks(&recs),
    }]
}

/// A memory experiment's sections: its summary ([`sections`]) at
/// [`Depth::Summary`], its report's `blocks` at [`Depth::Report`].
pub fn summary_or_report(
    run: &Run,
    exp: &str,
    depth: Depth,
    blocks: impl FnOnce() -> Vec<Block>,
) -> Vec<Section> {
    match depth {
        Depth::Summary => sections(run, exp),
        Depth::Report | Depth::Command => report_section(depth, exp, blocks),
    }
}

//! The published comparisons in the report, as sections (docs/views.md):
//! bc and openssl against the seeds' tables, labelled as published data.

use crate::experiments::compute::payload::{
    BcData, OpensslData, PerCopyRow, PublishedComparison, TimeRow,
};
use crate::experiments::compute::text::param;
use crate::experiments::compute::workloads;
use crate::results::schema::ResultRecord;
use crate::view::{Align, Block, Cell, Table};

/// A table of these columns, all but the first right-aligned.
fn numbers_table(headers: &[&str]) -> Table {
    let mut t = Table::new(headers);
    for c in t.columns.iter_mut().skip(1) {
        c.align = Align::Right;
    }
    t
}

/// A bc time against the published machines' times (nothing without rows).
fn bc_blocks(r: &ResultRecord, c: &PublishedComparison<TimeRow>) -> Vec<Block> {
    let Some(rows) = &c.rows else {
        return Vec::new();
    };
    let mut t = numbers_table(&[
        "CPU (published)",
        "published time",
        "this machine's speed relative to it (wall time)",
        "(CPU time)",
    ]);
    for row in rows {
        let cells = match row.compared() {
            Some(x) => vec![
                Cell::Text(x.cpu.clone()),
                Cell::Text(format!("{:.2} s", x.published_s)),
                Cell::Text(format!("{:.0}%", x.this_machine_speed_pct)),
                Cell::Text(
                    x.this_machine_speed_pct_by_cpu_time
                        .map(|c| format!("{c:.0}%"))
                        .unwrap_or_default(),
                ),
            ],
            None => vec![
                Cell::Text(row.cpu().to_string()),
                Cell::Absent {
                    text: row.reason().unwrap_or("no figure published").to_string(),
                    span: 3,
                },
            ],
        };
        let _ = t.push(cells);
    }
    vec![
        Block::Heading(format!(
            "{}: this machine {:.2} s vs {}",
            r.metric,
            r.value.unwrap_or(0.0),
            c.cited_label()
        )),
        Block::Table(t),
    ]
}

/// An openssl figure per copy against the published per-copy figures.
fn openssl_blocks(r: &ResultRecord, c: &PublishedComparison<PerCopyRow>) -> Vec<Block> {
    let Some(rows) = &c.rows else {
        return Vec::new();
    };
    let mut t = numbers_table(&[
        "CPU (published)",
        "copies",
        "published MB/s per copy",
        "this machine per copy",
    ]);
    for row in rows {
        let _ = t.push(vec![
            Cell::Text(row.cpu.clone()),
            Cell::Text(row.published_copies.to_string()),
            Cell::Text(format!("{:.1}", row.published_mb_s_per_copy)),
            Cell::Text(format!("{:.0}%", row.this_machine_per_copy_pct)),
        ]);
    }
    vec![
        Block::Heading(format!(
            "openssl {} ({} copies) vs {}",
            param(r, "alg").unwrap_or("?"),
            param(r, "copies").unwrap_or("?"),
            c.cited_label()
        )),
        Block::Table(t),
    ]
}

/// The comparisons of the run's measured bc and openssl figures; nothing
/// when none was compared.
pub fn published_blocks(rs: &[ResultRecord]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut said: Vec<String> = Vec::new();
    if rs
        .iter()
        .filter(|r| r.is(workloads::OPENSSL_AES))
        .any(|r| r.value.is_none() && param(r, "alg") == Some("aes-256-ige"))
    {
        // Its "not available" reason (in the results table) says it once.
        said.push("aes-256-cbc".into());
    }
    for r in rs
        .iter()
        .filter(|r| r.from_experiment(workloads::EXP) && r.value.is_some())
    {
        if r.metric.starts_with("bc_") {
            if let Some(c) = r.data_as::<BcData>().and_then(|d| d.published) {
                out.extend(bc_blocks(r, &c));
            }
        } else if r.is(workloads::OPENSSL_AES) {
            let Some(c) = r.data_as::<OpensslData>().map(|d| d.published) else {
                continue;
            };
            if c.label == "not compared" {
                // Once per algorithm.
                let alg = param(r, "alg").unwrap_or("?").to_string();
                if !said.contains(&alg) {
                    out.push(Block::Para(format!(
                        "openssl {alg}: not compared with the published figures: {}",
                        c.reason.as_deref().unwrap_or("no reason recorded")
                    )));
                    said.push(alg);
                }
                continue;
            }
            if r.params.get("bytes").and_then(|b| b.as_u64())
                == Some(u64::from(workloads::MAIN_BLOCK_BYTES))
            {
                out.extend(openssl_blocks(r, &c));
            }
        }
    }
    if !out.is_empty() {
        out.splice(
            0..0,
            [
                Block::Heading("Seed workloads against published figures".into()),
                Block::Para("Published figures come from the seed articles (data/published/), not from this run; they are compared only where the workload is the same.".into()),
            ],
        );
    }
    out
}

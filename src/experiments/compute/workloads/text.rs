//! The seeds' workloads in the summary (and `cpuscope run`'s end) as a typed
//! section: a row per figure with its IPC by instruction count, then the
//! published comparisons the report draws (`published_view.rs`). Renders
//! stored records; never measures.

use crate::experiments::compute::payload::{LoopNestData, NopLoopData};
use crate::experiments::compute::text::{param, param_text};
use crate::experiments::compute::workloads;
use crate::results::schema::ResultRecord;
use crate::view::{text, Align, Block, Cell, Figure, Section, Table};

/// The section as text (the text printer's).
pub fn render_workloads(rs: &[ResultRecord]) -> String {
    text::sections(&sections_of(rs))
}

/// Its section: the figures' table, the published comparisons, and how the
/// openssl algorithm was chosen.
pub fn sections_of(rs: &[ResultRecord]) -> Vec<Section> {
    let ws: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(workloads::EXP))
        .collect();
    if ws.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Table(workload_rows(&ws))];
    blocks.extend(super::published_view::published_blocks(rs));
    blocks.extend(openssl_choice_note(&ws));
    vec![Section {
        id: workloads::EXP.to_string(),
        title: "Seed workloads".into(),
        blocks,
    }]
}

/// One row per workload figure: its params, value and IPC by instruction count.
fn workload_rows(ws: &[&ResultRecord]) -> Table {
    let mut t = Table::new(&["figure", "measured", "IPC by instruction count"]);
    t.columns[1].align = Align::Right;
    t.columns[2].align = Align::Right;
    for r in ws {
        let p: Vec<String> = r
            .params
            .keys()
            .filter_map(|k| param_text(r, k).map(|v| format!("{k}={v}")))
            .collect();
        let label = if p.is_empty() {
            r.metric.clone()
        } else {
            format!("{} ({})", r.metric, p.join(", "))
        };
        let ipc = ipc_by_count(r)
            .filter(|_| r.value.is_some())
            .map(|i| format!("{i:.2}"))
            .unwrap_or_default();
        t.rows.push(vec![
            Cell::Text(label),
            Cell::Figure(Figure::of(r)),
            Cell::Text(ipc),
        ]);
    }
    t
}

/// The IPC a workload record derives from its instruction count (the nop
/// loop's and the loop nests'), if any.
fn ipc_by_count(r: &ResultRecord) -> Option<f64> {
    if r.is(workloads::NOP_LOOP) {
        r.data_as::<NopLoopData>()?.ipc_from_instruction_count
    } else if r.is(workloads::BRANCH_ORDER) {
        r.data_as::<LoopNestData>()?.ipc_from_instruction_count
    } else {
        None
    }
}

/// How the openssl algorithm was chosen, once.
fn openssl_choice_note(ws: &[&ResultRecord]) -> Option<Block> {
    // How the algorithm was chosen (e.g. through OpenSSL 3's legacy
    // provider), once; a missing IGE is its own "not available" row above.
    let r = ws
        .iter()
        .find(|r| r.is(workloads::OPENSSL_AES) && r.value.is_some())?;
    let n = r
        .notes
        .first()
        .filter(|_| param(r, "alg") == Some("aes-256-ige"))?;
    Some(Block::Note(format!("openssl: {n}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_a_row_per_figure_with_its_ipc_by_count_and_reasons() {
        let rs = vec![
            ResultRecord::of(workloads::NOP_LOOP, "ns/iteration", false)
                .with_samples(vec![0.25])
                .with_payload(&NopLoopData {
                    ipc_from_instruction_count: Some(4.0),
                    ..NopLoopData::default()
                }),
            ResultRecord::unavailable(workloads::EXP, "ipc", "IPC", "no <PMU>")
                .with_param("workload", "nop_loop"),
        ];
        let s = render_workloads(&rs);
        let words: Vec<&str> = s
            .lines()
            .find(|l| l.trim_start().starts_with("nop_loop"))
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(words, ["nop_loop", "0.2500", "ns/iteration", "4.00"], "{s}");
        assert!(s.starts_with("Seed workloads\n"), "{s}");
        assert!(s.contains("n/a (ipc (workload=nop_loop)): no <PMU>"), "{s}");
        assert!(sections_of(&[]).is_empty());
    }
}

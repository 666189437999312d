//! Text of workloads: the seeds' workloads, their counters and the published comparisons. Renders stored records; never measures.

use crate::base::fmt::columns_ragged;
use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::compute::payload::{
    BcData, LoopNestData, NopLoopData, OpensslData, PerCopyRow, TimeRow,
};
use crate::experiments::compute::text::{na, param, param_text};
use crate::experiments::compute::workloads;
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

/// The seed workloads, with the published comparison where it applies.
pub fn render_workloads(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let ws: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(workloads::EXP))
        .collect();
    if ws.is_empty() {
        return out;
    }
    let _ = writeln!(out, "Seed workloads");
    out.push_str(&workload_rows(&ws));
    out.push_str(&published_tables(&ws));
    out.push_str(&openssl_choice_note(&ws));
    out
}

/// One row per workload figure: its params, value and IPC by instruction count.
fn workload_rows(ws: &[&ResultRecord]) -> String {
    let mut out = String::new();
    let mut rows = Vec::new();
    for r in ws {
        let mut label = r.metric.clone();
        let p: Vec<String> = r
            .params
            .keys()
            .filter_map(|k| param_text(r, k).map(|v| format!("{k}={v}")))
            .collect();
        if !p.is_empty() {
            label = format!("{label} ({})", p.join(", "));
        }
        match r.value {
            Some(v) => rows.push(vec![
                label,
                format!(
                    "{} {}{}",
                    fmt_num(v),
                    r.unit,
                    if r.is_noisy() { " NOISY" } else { "" }
                ),
                ipc_by_count(r)
                    .map(|i| format!("IPC {i:.2} (by instruction count)"))
                    .unwrap_or_default(),
            ]),
            None => rows.push(vec![label, na(r)]),
        }
    }
    out.push_str(&columns_ragged(&rows, "  "));
    out
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

/// Each figure beside the published ones it is compared with (bc times,
/// openssl per copy), or once per algorithm why it is not compared.
fn published_tables(ws: &[&ResultRecord]) -> String {
    let mut out = String::new();
    let mut said_not_compared: Vec<String> = Vec::new();
    // A missing aes-256-ige record already says that nothing is compared.
    if ws.iter().any(|r| {
        r.is(workloads::OPENSSL_AES) && r.value.is_none() && param(r, "alg") == Some("aes-256-ige")
    }) {
        said_not_compared.push("aes-256-cbc".into());
    }
    for r in ws {
        if r.metric.starts_with("bc_") {
            let Some(c) = r.data_as::<BcData>().and_then(|d| d.published) else {
                continue;
            };
            if let Some(rows) = &c.rows {
                out.push_str(&bc_table(r, &c.cited_label(), rows));
            }
        } else if r.is(workloads::OPENSSL_AES) {
            let Some(c) = r.data_as::<OpensslData>().map(|d| d.published) else {
                continue;
            };
            if c.label == "not compared" {
                // Once per algorithm, not once per record.
                let alg = param(r, "alg").unwrap_or("?").to_string();
                if !said_not_compared.contains(&alg) {
                    let _ = writeln!(
                        out,
                        "  openssl {alg}: not compared with the published figures: {}",
                        c.reason.as_deref().unwrap_or("no reason recorded")
                    );
                    said_not_compared.push(alg);
                }
                continue;
            }
            // The comparison tables at the seed's main block size (the
            // JSON carries every size's).
            if r.params.get("bytes").and_then(|b| b.as_u64())
                != Some(u64::from(workloads::MAIN_BLOCK_BYTES))
            {
                continue;
            }
            if let Some(rows) = &c.rows {
                out.push_str(&openssl_table(r, &c.cited_label(), rows));
            }
        }
    }
    out
}

/// A bc time against the published machines' times: speed by wall and CPU time.
fn bc_table(r: &ResultRecord, lbl: &str, prow: &[TimeRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  {} vs {lbl}:", r.metric);
    let mut t = vec![vec![
        "CPU".to_string(),
        "published".into(),
        "this machine's speed (wall)".into(),
        "(CPU time)".into(),
    ]];
    for row in prow {
        let cpu = row.cpu().to_string();
        match row.compared() {
            Some(c) => t.push(vec![
                cpu,
                format!("{:.2} s", c.published_s),
                format!("{:.0}%", c.this_machine_speed_pct),
                c.this_machine_speed_pct_by_cpu_time
                    .map(|c| format!("{c:.0}%"))
                    .unwrap_or_default(),
            ]),
            None => t.push(vec![cpu, row.reason().unwrap_or("no figure").to_string()]),
        }
    }
    out.push_str(&columns_ragged(&t, "    "));
    out
}

/// An openssl figure per copy against the published per-copy figures.
fn openssl_table(r: &ResultRecord, lbl: &str, prow: &[PerCopyRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  openssl {} copies={} vs {lbl}:",
        param(r, "alg").unwrap_or("?"),
        param(r, "copies").unwrap_or("?")
    );
    let mut t = vec![vec![
        "CPU".to_string(),
        "copies".into(),
        "published MB/s per copy".into(),
        "this machine per copy".into(),
    ]];
    for row in prow {
        t.push(vec![
            row.cpu.clone(),
            row.published_copies.to_string(),
            format!("{:.1}", row.published_mb_s_per_copy),
            format!("{:.0}%", row.this_machine_per_copy_pct),
        ]);
    }
    out.push_str(&columns_ragged(&t, "    "));
    out
}

/// How the openssl algorithm was chosen, once.
fn openssl_choice_note(ws: &[&ResultRecord]) -> String {
    let mut out = String::new();
    // How the algorithm was chosen (e.g. through OpenSSL 3's legacy
    // provider), once; a missing IGE is its own "not available" row above.
    for r in ws
        .iter()
        .filter(|r| r.is(workloads::OPENSSL_AES) && r.value.is_some())
        .take(1)
    {
        if let Some(n) = r
            .notes
            .first()
            .filter(|_| param(r, "alg") == Some("aes-256-ige"))
        {
            let _ = writeln!(out, "  openssl: {}", for_terminal(n));
        }
    }
    out
}

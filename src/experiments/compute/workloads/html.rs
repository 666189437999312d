//! The published comparisons' HTML in the report (bc and openssl against
//! the seeds' tables, labelled as published data). Not typed yet
//! (docs/views.md).

use crate::base::html::esc;
use crate::experiments::compute::payload::{
    BcData, OpensslData, PerCopyRow, PublishedComparison, TimeRow,
};
use crate::experiments::compute::text::param;
use crate::experiments::compute::workloads;
use crate::results::schema::{ResultRecord, Run};
use std::fmt::Write as _;

/// A bc time against the published machines' times (nothing without rows).
fn bc_html(r: &ResultRecord, c: &PublishedComparison<TimeRow>) -> String {
    let mut h = String::new();
    let Some(rows) = &c.rows else {
        return h;
    };
    let _ = write!(
        h,
        "<h3>{}: this machine {:.2} s vs {}</h3><table><tr><th>CPU (published)</th><th>published time</th><th>this machine's speed relative to it (wall time)</th><th>(CPU time)</th></tr>",
        esc(&r.metric),
        r.value.unwrap_or(0.0),
        esc(&c.cited_label())
    );
    for row in rows {
        match row.compared() {
            Some(t) => {
                let cpu_pct = t
                    .this_machine_speed_pct_by_cpu_time
                    .map(|c| format!("{c:.0}%"))
                    .unwrap_or_default();
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td class=\"num\">{:.2} s</td><td class=\"num\">{:.0}%</td><td class=\"num\">{cpu_pct}</td></tr>",
                    esc(&t.cpu),
                    t.published_s,
                    t.this_machine_speed_pct
                );
            }
            None => {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td colspan=\"3\" class=\"na\">{}</td></tr>",
                    esc(row.cpu()),
                    esc(row.reason().unwrap_or("no figure published"))
                );
            }
        }
    }
    h.push_str("</table>");
    h
}

/// An openssl figure per copy against the published per-copy figures.
fn openssl_html(r: &ResultRecord, c: &PublishedComparison<PerCopyRow>) -> String {
    let mut h = String::new();
    let Some(rows) = &c.rows else {
        return h;
    };
    let _ = write!(
        h,
        "<h3>openssl {} ({} copies) vs {}</h3><table><tr><th>CPU (published)</th><th>copies</th><th>published MB/s per copy</th><th>this machine per copy</th></tr>",
        esc(param(r, "alg").unwrap_or("?")),
        esc(param(r, "copies").unwrap_or("?")),
        esc(&c.cited_label())
    );
    for row in rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}</td><td class=\"num\">{:.0}%</td></tr>",
            esc(&row.cpu),
            row.published_copies,
            row.published_mb_s_per_copy,
            row.this_machine_per_copy_pct
        );
    }
    h.push_str("</table>");
    h
}

pub fn published_section(run: &Run) -> String {
    let mut h = String::new();
    let mut said: Vec<String> = Vec::new();
    if run
        .records(workloads::OPENSSL_AES)
        .any(|r| r.value.is_none() && param(r, "alg") == Some("aes-256-ige"))
    {
        // Its "not available" reason (in the results table) says it once.
        said.push("aes-256-cbc".into());
    }
    for r in run
        .results
        .iter()
        .filter(|r| r.from_experiment(workloads::EXP) && r.value.is_some())
    {
        if r.metric.starts_with("bc_") {
            if let Some(c) = r.data_as::<BcData>().and_then(|d| d.published) {
                h.push_str(&bc_html(r, &c));
            }
        } else if r.is(workloads::OPENSSL_AES) {
            let Some(c) = r.data_as::<OpensslData>().map(|d| d.published) else {
                continue;
            };
            if c.label == "not compared" {
                // Once per algorithm.
                let alg = param(r, "alg").unwrap_or("?").to_string();
                if !said.contains(&alg) {
                    let _ = write!(
                        h,
                        "<p class=\"note\">openssl {}: not compared with the published figures: {}</p>",
                        esc(&alg),
                        esc(c.reason.as_deref().unwrap_or("no reason recorded"))
                    );
                    said.push(alg);
                }
                continue;
            }
            if r.params.get("bytes").and_then(|b| b.as_u64())
                == Some(u64::from(workloads::MAIN_BLOCK_BYTES))
            {
                h.push_str(&openssl_html(r, &c));
            }
        }
    }
    if !h.is_empty() {
        h = format!(
            "<h3>Seed workloads against published figures</h3><p class=\"note\">Published figures come from the seed articles (data/published/), not from this run; they are compared only where the workload is the same.</p>{h}"
        );
    }
    h
}

//! Text of rate: jobs per hour per copy count and memory placement. Renders stored records; never measures.

use crate::base::fmt::columns_ragged;
use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::compute::payload::{PagesPerNode, RateData};
use crate::experiments::compute::rate;
use crate::experiments::compute::text::{na, of, param};
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

/// Rate: jobs/hour per copy count and the efficiency per copy.
pub fn render_rate(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let j = of(rs, rate::JOBS_PER_HOUR);
    if j.is_empty() {
        return out;
    }
    let mut workloads: Vec<&str> = Vec::new();
    for r in &j {
        let w = param(r, "workload").unwrap_or("?");
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    for wl in workloads {
        out.push_str(&rate_table(rs, &j, wl));
    }
    out
}

/// One workload's table: a row per copy count (and memory placement), then
/// its notes once each.
fn rate_table(rs: &[ResultRecord], j: &[&ResultRecord], wl: &str) -> String {
    let mut out = String::new();
    let recs: Vec<&&ResultRecord> = j
        .iter()
        .filter(|r| param(r, "workload").unwrap_or("?") == wl)
        .collect();
    let with_mem = recs.iter().any(|r| param(r, "mem").is_some());
    let _ = writeln!(
        out,
        "Rate (SPEC-rate style): {wl}{}",
        if with_mem {
            " by memory placement (seed 003)"
        } else {
            ""
        }
    );
    let mut head = vec!["copies".to_string()];
    if with_mem {
        head.push("memory".into());
    }
    head.extend([
        "CPUs".to_string(),
        "jobs/hour".into(),
        "slowest copy".into(),
        "efficiency per copy".into(),
    ]);
    if with_mem {
        head.push("vs interleave".into());
        head.push("pages (mem:N only, move_pages)".into());
    }
    let mut rows = vec![head];
    let mut notes: Vec<String> = Vec::new();
    for r in recs {
        rows.push(rate_row(rs, r, with_mem, &mut notes));
    }
    out.push_str(&columns_ragged(&rows, "  "));
    for n in notes {
        let _ = writeln!(out, "  note: {}", for_terminal(&n));
    }
    out
}

/// One row of a rate table: copies, memory, CPUs, jobs/hour, the slowest
/// copy, the efficiency per copy and, by memory placement, the change
/// against interleave and the pages per node. Notes worth saying once go
/// to `notes`.
fn rate_row(
    rs: &[ResultRecord],
    r: &ResultRecord,
    with_mem: bool,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let c = param(r, "copies").unwrap_or("?").to_string();
    let mem = param(r, "mem");
    let same = |e: &ResultRecord| {
        param(e, "copies") == Some(&c)
            && param(e, "workload") == param(r, "workload")
            && param(e, "mem") == mem
    };
    let mut row = vec![format!(
        "{c}{}",
        r.data_as::<RateData>()
            .filter(|_| c.parse::<usize>().is_err())
            .map(|d| format!(" ({})", d.copies))
            .unwrap_or_default()
    )];
    if with_mem {
        row.push(mem.unwrap_or("default").to_string());
    }
    // The matching record of `id` as text: Some("-") when it has no
    // value, None when there is none.
    let cell = |id, f: &dyn Fn(f64) -> String| {
        of(rs, id)
            .into_iter()
            .find(|e| same(e))
            .map(|e| e.value.map(f).unwrap_or_else(|| "-".into()))
    };
    match r.value {
        Some(v) => {
            let eff = cell(rate::EFFICIENCY, &|x| format!("{x:.1}%")).unwrap_or_else(|| {
                if c == "1" {
                    "100% (baseline)".into()
                } else {
                    "-".into()
                }
            });
            let d = r.data_as::<RateData>().unwrap_or_default();
            let slow = crate::base::Stats::from_samples(&d.makespan_s)
                .map(|s| format!("{:.3} s", s.median))
                .unwrap_or_default();
            row.extend([
                d.cpus,
                format!("{}{}", fmt_num(v), if r.is_noisy() { " NOISY" } else { "" }),
                slow,
                eff,
            ]);
            if with_mem {
                let change =
                    cell(rate::MEM_CHANGE, &|x| format!("{x:+.1}%")).unwrap_or_else(|| {
                        if mem == Some("interleave") {
                            "(reference)".into()
                        } else {
                            "-".into()
                        }
                    });
                row.push(change);
                row.push(pages_cell(r, notes));
            }
            for n in &r.notes {
                if (n.starts_with("one NUMA node") || n.contains("touches little memory"))
                    && !notes.contains(n)
                {
                    notes.push(n.clone());
                }
            }
        }
        None => row.push(na(r)),
    }
    row
}

/// The pages-per-node cell of a memory-placement row (share per node), or
/// why the pages were not counted (said once in `notes`).
fn pages_cell(r: &ResultRecord, notes: &mut Vec<String>) -> String {
    match r.data_as::<RateData>().and_then(|d| d.pages_per_node) {
        Some(PagesPerNode::NotCounted { not_available: e }) => {
            let n = format!("pages not counted: {e}");
            if !notes.contains(&n) {
                notes.push(n);
            }
            "n/a".into()
        }
        Some(PagesPerNode::Counted(o)) => {
            let total: f64 = o.values().map(|v| *v as f64).sum();
            o.iter()
                .filter(|_| total > 0.0)
                .map(|(k, v)| format!("N{k} {:.0}%", *v as f64 / total * 100.0))
                .collect::<Vec<_>>()
                .join(" ")
        }
        None => "-".into(),
    }
}

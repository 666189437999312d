//! The seeds' published figures for these workloads (docs/methods-compute.md):
//! which sets are compared with this run's times (the same binary and
//! workload) and which are carried as reference only, and the notes that
//! quote them.

use crate::experiments::compute::payload::{
    ComparedTime, NotMeasuredTime, NotPublishedTime, PerCopyRow, PublishedComparison, Reference,
    ReferenceFigure, TimeRow,
};
use crate::results::published::{self, Figure, PublishedSet};
use crate::results::schema::ResultRecord;
use serde_json::{json, Value};

/// Seed 000's openssl speed tables.
pub const OPENSSL_SET: &str = "seed000-openssl";
/// Seed 000's cpu_bound loop (reference only).
pub const CPU_BOUND_SET: &str = "seed000-cpu-bound";
/// Seed 002's loop-order case (reference only).
pub const BRANCH_ORDER_SET: &str = "seed002-branch-order";

/// Label of every published comparison in a record's data.
pub const PUBLISHED_LABEL: &str = "published data (not measured on this run)";

fn param_str(f: &Figure, k: &str) -> Option<String> {
    f.params.get(k).map(|v| match v {
        Value::String(s) => s.clone(),
        o => o.to_string(),
    })
}

/// This machine's time against the published times of the same workload:
/// the published figures that a declared mapping puts beside `rec` (e.g.
/// seed 000's 7^999999 table beside `workloads:bc_pow {exp: 999999}`), one
/// row per machine of that table, relative speed = published time / this
/// time × 100%. A machine of the table without a published time gets a
/// row with `published_s: null` and the reason. None when no published
/// time maps to `rec` (e.g. another exponent).
pub fn compare_times_in(
    sets: &[PublishedSet],
    rec: &ResultRecord,
    measured_s: f64,
) -> Option<PublishedComparison<TimeRow>> {
    let matches = published::matches_in(sets, rec);
    let first = matches
        .iter()
        .find(|m| m.figure.metric == "time" && m.figure.unit == "s")?;
    let set = first.set;
    let expr = first.figure.params.get("expression");
    let in_table = |f: &Figure| f.params.get("expression") == expr;
    let mut machines: Vec<&str> = Vec::new();
    for f in set.figures.iter().filter(|f| in_table(f)) {
        if !machines.contains(&f.machine.as_str()) {
            machines.push(&f.machine);
        }
    }
    let figure_of = |machine: &str, metric: &str| {
        set.figures
            .iter()
            .find(|f| f.machine == machine && f.metric == metric && in_table(f))
    };
    let rows: Vec<TimeRow> = machines
        .iter()
        .map(|&m| {
            let time = matches
                .iter()
                .find(|x| x.set.id == set.id && x.figure.machine == m && x.figure.metric == "time");
            let ipc = figure_of(m, "ipc").and_then(|f| f.value);
            let ghz = figure_of(m, "stated_clock").and_then(|f| f.value);
            match time.and_then(|t| t.value) {
                Some(p) if measured_s > 0.0 => TimeRow::Compared(ComparedTime {
                    cpu: m.to_string(),
                    published_s: p,
                    published_ipc: ipc,
                    published_ghz: ghz,
                    this_machine_speed_pct: p / measured_s * 100.0,
                    this_machine_speed_pct_by_cpu_time: None,
                    note: time.and_then(|t| t.figure.note.clone()),
                }),
                Some(_) => TimeRow::NotMeasured(NotMeasuredTime {
                    cpu: m.to_string(),
                    published_s: (),
                    reason: "no positive time measured here".into(),
                }),
                None => TimeRow::NotPublished(NotPublishedTime {
                    cpu: m.to_string(),
                    published_s: (),
                    published_ghz: ghz,
                    reason:
                        "no time published for this machine (the source's table leaves it blank)"
                            .into(),
                }),
            }
        })
        .collect();
    Some(PublishedComparison {
        label: PUBLISHED_LABEL.to_string(),
        set: Some(set.id.clone()),
        source: Some(set.source.cite()),
        rows: Some(rows),
        ..PublishedComparison::default()
    })
}

/// [`compare_times_in`] over the embedded published sets.
pub fn compare_times(rec: &ResultRecord, measured_s: f64) -> Option<PublishedComparison<TimeRow>> {
    published::all()
        .ok()
        .and_then(|sets| compare_times_in(sets, rec, measured_s))
}

/// This machine's openssl figure at one block size against seed 000's
/// figures of the same algorithm and block size, per copy (every published
/// process count: 1, 32, every logical CPU). Only the same algorithm is
/// compared: an aes-256-cbc figure (AES-NI path) is never set beside the
/// seed's aes-256-ige (no AES-NI path); it gets `label: "not compared"` and why.
pub fn compare_openssl(
    alg: &str,
    copies: usize,
    bytes: u32,
    measured_mb_s: f64,
) -> PublishedComparison<PerCopyRow> {
    let not_compared = |reason: String, set: Option<String>| PublishedComparison {
        label: "not compared".into(),
        reason: Some(reason),
        set,
        ..PublishedComparison::default()
    };
    let set = match published::by_id(OPENSSL_SET) {
        Ok(s) => s,
        Err(e) => return not_compared(format!("{e:#}"), None),
    };
    let figs: Vec<&Figure> = set
        .figures
        .iter()
        .filter(|f| {
            f.metric == alg
                && f.unit == "kB/s"
                && f.params.get("block_bytes") == Some(&json!(bytes))
        })
        .collect();
    if figs.is_empty() {
        let mut algs: Vec<&str> = set.figures.iter().map(|f| f.metric.as_str()).collect();
        algs.sort_unstable();
        algs.dedup();
        return not_compared(
            format!(
                "the seed's figures are {} (no AES-NI code path in OpenSSL); this is {alg}, a different mode and code path",
                algs.join(", ")
            ),
            Some(set.id.clone()),
        );
    }
    let per_copy_here = measured_mb_s / copies.max(1) as f64;
    let rows: Vec<PerCopyRow> = figs
        .iter()
        .filter_map(|f| {
            let v = f.value?;
            let n = f.params.get("process_count")?.as_u64()?.max(1);
            let total = v / 1000.0;
            let per_copy_pub = total / n as f64;
            Some(PerCopyRow {
                cpu: f.machine.clone(),
                published_processes: param_str(f, "processes"),
                published_copies: n,
                published_mb_s_total: total,
                published_mb_s_per_copy: per_copy_pub,
                this_machine_mb_s_per_copy: per_copy_here,
                this_machine_per_copy_pct: per_copy_here / per_copy_pub * 100.0,
            })
        })
        .collect();
    PublishedComparison {
        label: format!("{PUBLISHED_LABEL}, {bytes}-byte blocks, per copy"),
        bytes: Some(bytes),
        set: Some(set.id.clone()),
        source: Some(set.source.cite()),
        rows: Some(rows),
        reason: None,
    }
}

/// A published set kept as reference only (a different binary or
/// workload): its figures, labelled, never compared.
pub fn published_reference(id: &str) -> Reference {
    match published::by_id(id) {
        Ok(s) => Reference {
            label: format!("{PUBLISHED_LABEL}: reference only, not the same binary"),
            set: Some(s.id.clone()),
            source: Some(s.source.cite()),
            workload: Some(s.workload.clone()),
            figures: Some(
                s.figures
                    .iter()
                    .map(|f| ReferenceFigure {
                        machine: f.machine.clone(),
                        metric: f.metric.clone(),
                        unit: f.unit.clone(),
                        value: f.value,
                        params: f.params.clone(),
                    })
                    .collect(),
            ),
            reason: None,
        },
        Err(e) => Reference {
            label: "not available".into(),
            reason: Some(format!("{e:#}")),
            ..Reference::default()
        },
    }
}

/// "seed 000 published IPC 1.57 (…) and 0.45 (…)" from seed 000's cpu_bound set.
pub(super) fn cpu_bound_note() -> String {
    let ipcs: Vec<String> = published::by_id(CPU_BOUND_SET)
        .map(|s| {
            s.figures
                .iter()
                .filter(|f| f.metric == "ipc")
                .filter_map(|f| {
                    Some(format!(
                        "{} ({})",
                        published::fmt_published(f.value?),
                        f.machine
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    format!(
        "seed 000 published IPC {} for its compiled C loop, counted system-wide: a different binary, reference only",
        if ipcs.is_empty() { "(not available)".to_string() } else { ipcs.join(" and ") }
    )
}

/// "seed 002 published 25560 ms / 23420 ms = 1.09 …" from seed 002's set (run 1).
pub(super) fn branch_order_note() -> String {
    let run1 = |case: &str| {
        published::by_id(BRANCH_ORDER_SET).ok().and_then(|s| {
            s.figures
                .iter()
                .find(|f| {
                    param_str(f, "run").as_deref() == Some("1")
                        && param_str(f, "case").is_some_and(|c| c.starts_with(case))
                })
                .and_then(|f| f.value)
        })
    };
    match (run1("case1"), run1("case2")) {
        (Some(a), Some(b)) if b > 0.0 => format!(
            "seed 002 published {} ms / {} ms = {:.2} on x86_64 (compiled C, counters in memory): reference only",
            published::fmt_published(a),
            published::fmt_published(b),
            a / b
        ),
        _ => "seed 002's published loop-order times are not available".into(),
    }
}

// ---------------------------------------------------------------------------
// Counters.

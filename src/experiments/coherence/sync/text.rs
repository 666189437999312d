//! sync's text: its table (`cpuscope sync`) and its section of the run's
//! summary.

use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::common::PLACEMENT_PARAM;
use crate::results::schema::{MetricId, ResultRecord};
use std::fmt::Write as _;

/// Synchronisation records as a table: figure, value, spread, notes.
pub fn render_sync(recs: &[ResultRecord]) -> String {
    let mut out = String::from("Synchronisation costs (median of samples):\n");
    let w = recs
        .iter()
        .map(|r| r.label().chars().count())
        .max()
        .unwrap_or(10);
    for r in recs {
        let label = r.label();
        match r.value {
            Some(v) => {
                let spread = r
                    .stats
                    .as_ref()
                    .map(|s| {
                        format!(
                            "  (min {}, max {}, CV {:.1}%, n={}){}",
                            fmt_num(s.min),
                            fmt_num(s.max),
                            s.cv * 100.0,
                            s.n,
                            if s.is_noisy() { " NOISY" } else { "" }
                        )
                    })
                    .unwrap_or_default();
                let _ = writeln!(out, "  {label:<w$}  {:>10} {}{spread}", fmt_num(v), r.unit);
            }
            None => {
                let _ = writeln!(
                    out,
                    "  {label:<w$}  not available: {}",
                    r.unavailable_reason
                        .as_deref()
                        .unwrap_or("no reason recorded")
                );
            }
        }
        for n in &r.notes {
            let _ = writeln!(out, "  {:<w$}    {}", "", for_terminal(n));
        }
    }
    out
}

/// One figure of a record list by metric and params (all given params must match).
fn find<'a>(
    rs: &'a [ResultRecord],
    id: MetricId,
    params: &[(&str, &str)],
) -> Option<&'a ResultRecord> {
    rs.iter().find(|r| {
        r.is(id)
            && params.iter().all(|(k, v)| match r.params.get(*k) {
                Some(serde_json::Value::String(s)) => s == v,
                Some(o) => o.as_u64().map(|n| n.to_string()).as_deref() == Some(*v),
                None => false,
            })
    })
}

fn value_text(r: Option<&ResultRecord>) -> String {
    match r {
        Some(r) => match r.value {
            Some(v) => {
                let noisy = if r.is_noisy() { "*" } else { "" };
                if r.unit == "ns" && v >= 1_000.0 {
                    format!("{:.1} µs{noisy}", v / 1000.0)
                } else {
                    format!("{} {}{noisy}", fmt_num(v), r.unit)
                }
            }
            None => format!("{} n/a", r.unit),
        },
        None => "not run".into(),
    }
}

/// The summary's lines for `sync` records, one per kind of cost (none when
/// the run has no sync record).
pub fn summary_lines(results: &[ResultRecord]) -> Vec<String> {
    let s: Vec<ResultRecord> = results
        .iter()
        .filter(|r| r.from_experiment(super::EXP))
        .cloned()
        .collect();
    let mut out = Vec::new();
    if s.is_empty() {
        return out;
    }
    let hints = spin_hint_texts(&s);
    if !hints.is_empty() {
        out.push(format!("spin-wait hint: {}", hints.join(", ")));
    }
    out.push(atomic_increment_text(&s));
    let lock = |kind: &str, threads: &str| {
        value_text(find(
            &s,
            super::LOCK,
            &[("kind", kind), ("threads", threads)],
        ))
    };
    out.push(format!(
        "lock/unlock: alone spin {}, mutex {}; two threads spin {}, mutex {}",
        lock("spin", "1"),
        lock("mutex", "1"),
        lock("spin", "2"),
        lock("mutex", "2"),
    ));
    out.push(format!(
        "handoff between two threads: spinning {}, futex sleep/wake {}",
        value_text(find(&s, super::HANDOFF, &[("wait", "spin")])),
        value_text(find(&s, super::HANDOFF, &[("wait", "futex")])),
    ));
    let fs = false_sharing_texts(&s);
    if !fs.is_empty() {
        out.push(format!(
            "false sharing (one line vs padded): {}",
            fs.join("; ")
        ));
    }
    out
}

/// Each spin-wait hint of the summary: instruction, time (cycles).
fn spin_hint_texts(s: &[ResultRecord]) -> Vec<String> {
    s.iter()
        .filter(|r| r.is(super::SPIN_HINT))
        .map(|r| {
            let ins = r
                .params
                .get("instruction")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let cyc = find(s, super::SPIN_HINT_CYCLES, &[("instruction", ins)]);
            format!(
                "{} {} ({})",
                ins.to_uppercase(),
                value_text(Some(r)),
                value_text(cyc)
            )
        })
        .collect()
}

/// The summary's atomic increment line: alone, then two threads on one
/// line by placement.
fn atomic_increment_text(s: &[ResultRecord]) -> String {
    let alone = find(s, super::ATOMIC_INCREMENT, &[(PLACEMENT_PARAM, "alone")]);
    let alone_c = find(
        s,
        super::ATOMIC_INCREMENT_CYCLES,
        &[(PLACEMENT_PARAM, "alone")],
    );
    let mut contended = Vec::new();
    for p in ["same_core", "same_l3", "cross_node"] {
        if let Some(r) = find(s, super::ATOMIC_INCREMENT, &[(PLACEMENT_PARAM, p)]) {
            if r.value.is_some() {
                contended.push(format!("{p} {}", value_text(Some(r))));
            }
        }
    }
    format!(
        "atomic increment: alone {} ({}); two threads on one line: {}",
        value_text(alone),
        value_text(alone_c),
        if contended.is_empty() {
            "n/a".to_string()
        } else {
            contended.join(", ")
        }
    )
}

/// Each measured false-sharing slowdown of the summary: operation,
/// threads, slowdown.
fn false_sharing_texts(s: &[ResultRecord]) -> Vec<String> {
    s.iter()
        .filter(|r| r.is(super::FALSE_SHARING_SLOWDOWN) && r.value.is_some())
        .map(|r| {
            let op = r.params.get("op").and_then(|v| v.as_str()).unwrap_or("?");
            let t = r
                .params
                .get("threads")
                .map(|v| v.to_string())
                .unwrap_or_default();
            format!("{op} increments, {t} threads: {}", value_text(Some(r)))
        })
        .collect()
}

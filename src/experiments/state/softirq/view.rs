//! What softirq shows (docs/views.md): its place among the experiments and its
//! section of the summary.

use crate::base::fmt::fmt_num;
use crate::results::schema::{ResultRecord, Run};
use crate::view::{Rank, Views};
use std::fmt::Write as _;

/// The views of this experiment (the registry holds it).
pub struct SoftirqViews;

impl Views for SoftirqViews {
    fn summary_text(&self, run: &Run) -> String {
        summary(&run.results)
    }

    fn rank(&self) -> Rank {
        Rank(12)
    }
}

/// Its section of the summary (and of `cpuscope softirq`): rates, per-node
/// shares, softirq time, the busiest CPU.
pub fn summary(rs: &[ResultRecord]) -> String {
    let mine: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(super::EXP))
        .collect();
    if mine.is_empty() {
        return String::new();
    }
    let mut out = String::from("Network softirqs (sampled)\n");
    for r in mine.iter().filter(|r| r.is(super::RATE)) {
        write_rate(&mut out, r, &mine);
    }
    let times: Vec<String> = mine
        .iter()
        .filter(|r| r.is(super::NODE_TIME))
        .filter_map(|r| Some(format!("node {} {:.2}%", param(r, "node")?, r.value?)))
        .collect();
    if !times.is_empty() {
        let _ = writeln!(out, "  softirq CPU time: {}", times.join(", "));
    }
    for r in mine.iter().filter(|r| r.is(super::BUSIEST_CPU)) {
        write_busiest(&mut out, r);
    }
    for r in mine.iter().filter(|r| r.is(super::RATE)) {
        for n in &r.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    out
}

/// A parameter of a record as text (a string as it is, anything else as
/// JSON).
fn param(r: &ResultRecord, k: &str) -> Option<String> {
    r.params.get(k).map(|v| match v {
        serde_json::Value::String(s) => s.clone(),
        o => o.to_string(),
    })
}

/// The summary's line of one rate record `r`, with its kind's per-node
/// shares among `mine`.
fn write_rate(out: &mut String, r: &ResultRecord, mine: &[&ResultRecord]) {
    let kind = param(r, "kind").unwrap_or_default();
    let shares: Vec<String> = mine
        .iter()
        .filter(|s| s.is(super::NODE_SHARE) && param(s, "kind") == Some(kind.clone()))
        .filter_map(|s| Some(format!("node {} {:.0}%", param(s, "node")?, s.value?)))
        .collect();
    match r.value {
        Some(v) => {
            let _ = writeln!(
                out,
                "  {kind:<7} {} /s{}",
                fmt_num(v),
                if shares.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", shares.join(", "))
                }
            );
        }
        None => {
            let _ = writeln!(
                out,
                "  {kind:<7} not available: {}",
                r.unavailable_reason.as_deref().unwrap_or("?")
            );
        }
    }
}

/// The summary's line of the busiest CPU record `r`.
fn write_busiest(out: &mut String, r: &ResultRecord) {
    match (r.value, param(r, "cpu")) {
        (Some(v), Some(cpu)) => {
            let _ = writeln!(
                out,
                "  busiest CPU: {cpu} with {v:.2}% of its time in softirq"
            );
        }
        (Some(_), None) => {
            let _ = writeln!(
                out,
                "  busiest CPU: none, {}",
                r.notes
                    .first()
                    .map(String::as_str)
                    .unwrap_or("no softirq time")
            );
        }
        (None, _) => {
            let _ = writeln!(
                out,
                "  busiest CPU: not available: {}",
                r.unavailable_reason.as_deref().unwrap_or("?")
            );
        }
    }
}

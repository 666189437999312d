//! Text renderers of the machine-state family: effective frequency and
//! network softirqs, read from their records.

use crate::base::fmt::fmt_num;
use crate::experiments::state::{frequency, softirq};
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

/// Frequency: one line per placement, measured beside declared.
pub fn frequency(rs: &[ResultRecord]) -> String {
    let f: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(frequency::EXP))
        .collect();
    if f.is_empty() {
        return String::new();
    }
    let mut out = String::from("Effective frequency (measured; dependent add chain)\n");
    for r in &f {
        match (r.value, &r.stats) {
            (Some(v), Some(s)) => {
                let _ = writeln!(
                    out,
                    "  {:<18} {:>7} {:<5} CV {:>5.1}%  n={}{}",
                    r.metric,
                    fmt_num(v),
                    r.unit,
                    s.cv * 100.0,
                    s.n,
                    if s.is_noisy() { "  NOISY" } else { "" }
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "  {:<18} not available: {}",
                    r.metric,
                    r.unavailable_reason
                        .as_deref()
                        .unwrap_or("no reason recorded")
                );
            }
        }
    }
    if let Some(d) = f
        .iter()
        .find(|r| r.is(frequency::SINGLE_CORE))
        .and_then(|r| r.notes.iter().find(|n| n.starts_with("declared")))
    {
        let _ = writeln!(out, "  {d}");
    }
    out
}

/// The section: rates, per-node shares, softirq time, the busiest CPU.
pub fn softirq(rs: &[ResultRecord]) -> String {
    let mine: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(softirq::EXP))
        .collect();
    if mine.is_empty() {
        return String::new();
    }
    let mut out = String::from("Network softirqs (sampled)\n");
    let p = |r: &ResultRecord, k: &str| {
        r.params.get(k).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            o => o.to_string(),
        })
    };
    for r in mine.iter().filter(|r| r.is(softirq::RATE)) {
        let kind = p(r, "kind").unwrap_or_default();
        let shares: Vec<String> = mine
            .iter()
            .filter(|s| s.is(softirq::NODE_SHARE) && p(s, "kind") == Some(kind.clone()))
            .filter_map(|s| Some(format!("node {} {:.0}%", p(s, "node")?, s.value?)))
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
    let times: Vec<String> = mine
        .iter()
        .filter(|r| r.is(softirq::NODE_TIME))
        .filter_map(|r| Some(format!("node {} {:.2}%", p(r, "node")?, r.value?)))
        .collect();
    if !times.is_empty() {
        let _ = writeln!(out, "  softirq CPU time: {}", times.join(", "));
    }
    for r in mine.iter().filter(|r| r.is(softirq::BUSIEST_CPU)) {
        match (r.value, p(r, "cpu")) {
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
    for r in mine.iter().filter(|r| r.is(softirq::RATE)) {
        for n in &r.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    out
}

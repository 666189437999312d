//! Findings: what a run's own figures advise, each with the evidence it
//! rests on, and the rules that find them (docs/views.md). The machine's
//! rules live in `report/advice.rs`; each experiment's, in its folder's
//! `view.rs` ([`super::Views::rules`]). The helpers below are what rules
//! share. Nothing here measures.

use crate::results::schema::{MetricId, ResultRecord, Run};
use serde::Serialize;
use serde_json::Value;

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Costs performance now; change something.
    Warning,
    /// Worth knowing when sizing or placing work.
    Advice,
}

/// One figure behind a finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evidence {
    /// What the figure is.
    pub what: String,
    /// The figure, with its unit.
    pub value: String,
    /// Where it comes from: `result <key>` or `machine <field>`.
    pub source: String,
}

/// One piece of advice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Stable rule id, e.g. `all-core-frequency-drop`.
    pub rule: &'static str,
    pub severity: Severity,
    /// One line: what was found.
    pub title: String,
    /// What to do about it.
    pub advice: String,
    /// The figures of this run that support it (never empty).
    pub evidence: Vec<Evidence>,
}

/// One rule of advice: its id, its place in the list of findings, whether
/// it rests on timed figures, and the rule itself.
pub struct Rule {
    /// Stable id, the findings' `rule` (e.g. `all-core-frequency-drop`).
    pub id: &'static str,
    /// Its place among every rule (machine rules too): findings are listed
    /// by severity, then in this order.
    pub rank: u16,
    /// It rests on timed figures (not on configuration read from the
    /// machine): on a busy machine its findings are leads, not facts.
    pub timed: bool,
    pub find: fn(&Run) -> Vec<Finding>,
}

// ------------------------------------------------------------ helpers

/// One figure behind a finding.
pub fn ev(
    what: impl Into<String>,
    value: impl Into<String>,
    source: impl Into<String>,
) -> Evidence {
    Evidence {
        what: what.into(),
        value: value.into(),
        source: source.into(),
    }
}

/// A record as a source of evidence.
pub fn from_result(r: &ResultRecord) -> String {
    format!("result {}", r.key)
}

/// A caution naming the noisy or implausible records among `recs` (empty:
/// none).
pub fn noisy_note(recs: &[&ResultRecord]) -> String {
    let noisy: Vec<&str> = recs
        .iter()
        .filter(|r| r.is_flagged())
        .map(|r| r.key.as_str())
        .collect();
    if noisy.is_empty() {
        String::new()
    } else {
        format!(
            " (caution: {} noisy (CV above 5%) or implausible; repeat the run to confirm).",
            noisy.join(", ")
        )
    }
}

/// The first record of `id` with a value.
pub fn measured(run: &Run, id: MetricId) -> Option<&ResultRecord> {
    run.records(id).find(|r| r.value.is_some())
}

/// A record's numeric param (a number, or a string that parses as one).
pub fn param_num(r: &ResultRecord, k: &str) -> Option<f64> {
    match r.params.get(k)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

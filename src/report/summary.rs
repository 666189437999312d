//! The summary `cpuscope run` prints at the end: one section per experiment
//! with its headline figures (each experiment's own renderer), what could not
//! be measured here grouped by reason, and the advice. `cpuscope show RUN`
//! prints every figure.

use crate::base::fmt::{for_terminal, for_terminal_lines};
use crate::experiments;
use crate::results::schema::Run;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Figures that could not be measured, grouped by reason.
pub fn render_unavailable(run: &Run) -> String {
    let mut by_reason: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &run.results {
        if r.value.is_none() {
            by_reason
                .entry(
                    r.unavailable_reason
                        .clone()
                        .unwrap_or_else(|| "no reason recorded".into()),
                )
                .or_default()
                .push(format!("{}:{}", r.experiment, r.metric));
        }
    }
    if by_reason.is_empty() {
        return String::new();
    }
    let mut out = String::from("Not available on this machine (with the reason)\n");
    for (reason, what) in by_reason {
        let mut w: Vec<String> = what;
        w.dedup();
        let shown = if w.len() > 4 {
            format!("{} and {} more", w[..4].join(", "), w.len() - 4)
        } else {
            w.join(", ")
        };
        let _ = writeln!(
            out,
            "  - {}: {}",
            for_terminal(&reason),
            for_terminal(&shown)
        );
    }
    out
}

/// Every registered experiment's own section, in run order.
fn experiment_sections(run: &Run) -> Vec<String> {
    experiments::registry::registry()
        .into_iter()
        .map(|e| e.views.summary_text(run))
        .filter(|s| !s.is_empty())
        .collect()
}

/// The end-of-run summary.
pub fn render(run: &Run) -> String {
    super::unreadable::after(run, || render_sections(run))
}

/// The summary itself (`render` adds what could not be read).
fn render_sections(run: &Run) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cpuscope run {} — {} on {} (profile {}, {})",
        for_terminal(&run.id),
        for_terminal(&run.cpu_model().unwrap_or_else(|| "unknown CPU".into())),
        for_terminal(&run.host),
        for_terminal(&run.profile),
        run.status.as_str()
    );
    let measured = run.results.iter().filter(|r| r.value.is_some()).count();
    let noisy = run.results.iter().filter(|r| r.is_noisy()).count();
    let _ = writeln!(
        out,
        "{} figures measured, {} not available here, {} noisy (CV > 5%)\n",
        measured,
        run.results.len() - measured,
        noisy
    );
    let mut sections = experiment_sections(run);
    sections.push(render_unavailable(run));
    sections.push(super::advice::render_text(&super::advice::findings(run)));
    for s in sections.into_iter().filter(|s| !s.is_empty()) {
        // Sections are built by each experiment from its records: no
        // control character of a record reaches the terminal.
        out.push_str(&for_terminal_lines(&s));
        if !s.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Every figure with its spread and notes: cpuscope show {}",
        for_terminal(&run.id)
    );
    out
}

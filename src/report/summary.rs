//! The summary `cpuscope run` prints at the end: one section per experiment
//! with its headline figures (each experiment's own renderer), what could not
//! be measured here grouped by reason, and the advice. `cpuscope show RUN`
//! prints every figure.

use crate::base::fmt::{for_terminal, for_terminal_lines};
use crate::experiments;
use crate::results::schema::Run;
use crate::view::{Block, Cell, Depth, Section, Severity, Table};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Figures that could not be measured, grouped by reason.
pub fn render_unavailable(run: &Run) -> String {
    let by_reason = unavailable_by_reason(run);
    if by_reason.is_empty() {
        return String::new();
    }
    let mut out = String::from("Not available on this machine (with the reason)\n");
    for (reason, what) in by_reason {
        let _ = writeln!(
            out,
            "  - {}: {}",
            for_terminal(&reason),
            for_terminal(&shown_list(what))
        );
    }
    out
}

/// The names of what lacks a figure: four, then how many more.
fn shown_list(mut what: Vec<String>) -> String {
    what.dedup();
    if what.len() > 4 {
        format!("{} and {} more", what[..4].join(", "), what.len() - 4)
    } else {
        what.join(", ")
    }
}

/// `experiment:metric` of each record without a figure, by its reason.
fn unavailable_by_reason(run: &Run) -> BTreeMap<String, Vec<String>> {
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
    by_reason
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

/// The summary's first line: the run, its CPU and host, profile and status.
fn title(run: &Run) -> String {
    format!(
        "cpuscope run {} — {} on {} (profile {}, {})",
        run.id,
        run.cpu_model().unwrap_or_else(|| "unknown CPU".into()),
        run.host,
        run.profile,
        run.status.as_str()
    )
}

/// How many figures were measured, not available, noisy.
fn counts(run: &Run) -> String {
    let measured = run.results.iter().filter(|r| r.value.is_some()).count();
    let noisy = run.results.iter().filter(|r| r.is_noisy()).count();
    format!(
        "{} figures measured, {} not available here, {} noisy (CV > 5%)",
        measured,
        run.results.len() - measured,
        noisy
    )
}

/// Where every figure is.
fn more(run: &Run) -> String {
    format!(
        "Every figure with its spread and notes: cpuscope show {}",
        run.id
    )
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
    let _ = writeln!(out, "{}\n", counts(run));
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
    let _ = writeln!(out, "{}", for_terminal(&more(run)));
    out
}

// ------------------------------------------------- the summary as a view

/// The summary as Markdown: the run's line as the document's title, then
/// [`view`] drawn by the Markdown printer.
pub fn markdown(run: &Run) -> String {
    let mut sections = view(run);
    let mut out = String::new();
    if let Some(first) = sections.first_mut() {
        let _ = writeln!(out, "# {}\n", crate::view::markdown::inline(&first.title));
        first.title.clear();
    }
    out.push_str(&crate::view::markdown::sections(&sections));
    out
}

/// The summary as sections any printer draws (`show --summary --markdown`,
/// `--csv`): the run, each experiment's sections, what is not available
/// and why, the advice, and what could not be read. An experiment whose
/// summary is still written as text (docs/views.md, "Where it stands")
/// gives that text as one pre-formatted block: nothing is left out.
pub fn view(run: &Run) -> Vec<Section> {
    let (mut out, bad) = crate::results::payload::collect(|| {
        let mut out = vec![Section {
            id: "run".into(),
            title: title(run),
            blocks: vec![Block::Para(counts(run))],
        }];
        out.extend(experiment_views(run));
        out.extend(unavailable_view(run));
        out.extend(advice_view(run));
        out
    });
    if !bad.is_empty() {
        out.push(Section {
            id: "not_readable".into(),
            title: "Not readable".into(),
            blocks: bad.iter().map(|e| Block::Note(e.line(&run.id))).collect(),
        });
    }
    out.push(Section {
        id: "more".into(),
        title: String::new(),
        blocks: vec![Block::Para(more(run))],
    });
    out
}

/// Each experiment's sections of the summary: its typed sections where its
/// summary is exactly them drawn as text, else its summary text.
fn experiment_views(run: &Run) -> Vec<Section> {
    let mut out = Vec::new();
    for e in experiments::registry::registry() {
        let text = e.views.summary_text(run);
        if text.is_empty() {
            continue;
        }
        let typed = e.views.sections(run, Depth::Summary);
        if !typed.is_empty() && crate::view::text::sections(&typed) == text {
            out.extend(typed);
        } else {
            out.push(Section {
                id: e.experiment.name().into(),
                title: String::new(),
                blocks: vec![Block::Verbatim(text.lines().map(str::to_owned).collect())],
            });
        }
    }
    out
}

/// What is not available, by reason (every name, not the text's first four).
fn unavailable_view(run: &Run) -> Option<Section> {
    let by_reason = unavailable_by_reason(run);
    if by_reason.is_empty() {
        return None;
    }
    let mut t = Table::new(&["reason", "figures"]);
    for (reason, mut what) in by_reason {
        what.dedup();
        let _ = t.push(vec![Cell::Text(reason), Cell::Text(what.join(", "))]);
    }
    Some(Section {
        id: "not_available".into(),
        title: "Not available on this machine (with the reason)".into(),
        blocks: vec![Block::Table(t)],
    })
}

/// The findings, one row each, with their evidence.
fn advice_view(run: &Run) -> Option<Section> {
    let findings = super::advice::findings(run);
    if findings.is_empty() {
        return None;
    }
    let mut t = Table::new(&["severity", "finding", "evidence", "what to do"]);
    for f in findings {
        let evidence: Vec<String> = f
            .evidence
            .iter()
            .map(|e| format!("{} = {} ({})", e.what, e.value, e.source))
            .collect();
        let severity = match f.severity {
            Severity::Warning => "warning",
            Severity::Advice => "advice",
        };
        let _ = t.push(vec![
            Cell::Text(severity.into()),
            Cell::Text(f.title),
            Cell::Text(evidence.join("; ")),
            Cell::Text(f.advice),
        ]);
    }
    Some(Section {
        id: "advice".into(),
        title: "Advice (from this run's own figures)".into(),
        blocks: vec![Block::Table(t)],
    })
}

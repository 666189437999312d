//! The comparison as Markdown tables (`cpuscope compare --markdown`).

use super::{cell_text, na, pct_text, Comparison, Difference, Row};
use crate::base::fmt::for_terminal;
use std::fmt::Write as _;

/// A table cell: one line (control characters and bidirectional overrides
/// as visible escapes, as on the terminal the Markdown is printed to), `|`
/// escaped.
fn md(s: &str) -> String {
    for_terminal(s).replace('|', "\\|")
}

/// The comparison as Markdown tables.
pub fn render(c: &Comparison) -> String {
    let mut out = String::new();
    runs_table(&mut out, c);
    differences_table(&mut out, c);
    results_table(&mut out, c);
    published_table(&mut out, c);
    for n in &c.notes {
        let _ = writeln!(out, "\n_note: {}_", md(n));
    }
    out
}

/// The runs compared, the baseline said.
fn runs_table(out: &mut String, c: &Comparison) {
    out.push_str(
        "## Runs\n\n| | run | host | CPU | profile | status |\n|---|---|---|---|---|---|\n",
    );
    for h in &c.runs {
        let _ = writeln!(
            out,
            "| {}{} | `{}` | {} | {} | {} | {} |",
            h.label,
            if h.baseline { " (baseline)" } else { "" },
            md(&h.id),
            md(&h.host),
            md(h.cpu_model.as_deref().unwrap_or("(not recorded)")),
            md(&h.profile),
            md(&h.status)
        );
    }
}

/// The environment and topology fields that differ between the runs (when
/// more than one run is compared).
fn differences_table(out: &mut String, c: &Comparison) {
    let diff: Vec<&Difference> = c.differences.iter().filter(|d| d.differs).collect();
    if c.runs.len() > 1 {
        out.push_str("\n## Differences\n\n");
        if diff.is_empty() {
            out.push_str("No difference of environment or topology recorded.\n");
        } else {
            let _ = writeln!(
                out,
                "| | {} |\n|---|{}",
                c.runs
                    .iter()
                    .map(|r| r.label.as_str())
                    .collect::<Vec<_>>()
                    .join(" | "),
                "---|".repeat(c.runs.len())
            );
            for d in diff {
                let _ = writeln!(
                    out,
                    "| {} | {} |",
                    md(&d.field),
                    d.values
                        .iter()
                        .map(|v| md(&na(v)))
                        .collect::<Vec<_>>()
                        .join(" | ")
                );
            }
        }
    }
}

/// One row per result relative to the baseline, and the geometric mean.
fn results_table(out: &mut String, c: &Comparison) {
    let base = &c.runs[c.baseline];
    let _ = writeln!(
        out,
        "\n## Results\n\nRelative to {}: above 100% = better (lower-is-better figures inverted); ! = noisy (CV > 5%).\n",
        base.label
    );
    let _ = writeln!(
        out,
        "| result | unit | {} |\n|---|---|{}",
        c.runs
            .iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
        "---:|".repeat(c.runs.len())
    );
    for row in &c.rows {
        let _ = writeln!(
            out,
            "| {}{} | {} | {} |",
            md(&row.label),
            if row.higher_is_better {
                ""
            } else {
                " (lower is better)"
            },
            md(&row.unit),
            row.cells
                .iter()
                .enumerate()
                .map(|(i, cell)| md(&cell_text(cell, i == c.baseline)))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    let g = &c.geomean;
    let _ = writeln!(
        out,
        "| **geometric mean** ({} of {} results) | % | {} |",
        g.results_used,
        g.results_total,
        g.per_run
            .iter()
            .map(|p| p.map(pct_text).unwrap_or_else(|| "n/a".into()))
            .collect::<Vec<_>>()
            .join(" | ")
    );
}

/// The published figures of other machines beside the results, when any.
fn published_table(out: &mut String, c: &Comparison) {
    let pubs: Vec<&Row> = c.rows.iter().filter(|r| !r.published.is_empty()).collect();
    if !pubs.is_empty() {
        out.push_str("\n## Published figures (not measured here)\n\n| result | machine | published | vs baseline | source |\n|---|---|---:|---:|---|\n");
        for row in pubs {
            for p in &row.published {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} {} | {} | {} |",
                    md(&row.label),
                    md(&p.machine),
                    md(&p.text),
                    md(&row.unit),
                    p.relative_pct.map(pct_text).unwrap_or_default(),
                    md(&p.source)
                );
            }
        }
    }
}

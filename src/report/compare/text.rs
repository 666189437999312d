//! The comparison as text (`cpuscope compare`). The runs' strings (host,
//! CPU model, notes, reasons, published names) reach the terminal through
//! [`for_terminal`]; table cells get it from [`columns`].

use super::{cell_text, na, pct_text, CellState, Comparison, Difference, Row, RunHead};
use crate::base::fmt::{columns, for_terminal};
use std::fmt::Write as _;

/// `prefix` then `items` joined by "; ", wrapped between items to lines of
/// at most `width` characters (an item is never split), each line indented.
fn wrap_items(prefix: &str, items: &[String], width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = prefix.to_string();
    let mut first = true;
    for it in items {
        let it = for_terminal(it);
        let add = if first {
            it.to_string()
        } else {
            format!("; {it}")
        };
        if !first && line.chars().count() + add.chars().count() > width {
            let _ = writeln!(out, "{indent}{line};");
            line = format!("  {it}");
        } else {
            line.push_str(&add);
        }
        first = false;
    }
    let _ = writeln!(out, "{indent}{line}");
    out
}

fn run_line(h: &RunHead) -> Vec<String> {
    vec![
        h.label.clone(),
        h.id.clone(),
        h.host.clone(),
        h.cpu_model
            .clone()
            .unwrap_or_else(|| "(CPU not recorded)".into()),
        h.profile.clone(),
        h.status.clone(),
        if h.baseline {
            "baseline".into()
        } else {
            String::new()
        },
    ]
}

/// The comparison as text (`cpuscope compare`).
pub fn render(c: &Comparison) -> String {
    let mut out = String::new();
    let base = &c.runs[c.baseline];
    let _ = writeln!(
        out,
        "Comparing {} run(s); baseline {} ({})",
        c.runs.len(),
        for_terminal(&base.label),
        for_terminal(&base.id)
    );
    out.push_str(&columns(
        &c.runs.iter().map(run_line).collect::<Vec<_>>(),
        "  ",
    ));
    if c.runs.len() > 1 {
        out.push('\n');
        environment(&mut out, c);
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "Results (relative to {}: above 100% = better; lower-is-better figures inverted; ! = noisy, CV > 5%)",
        for_terminal(&base.label)
    );
    if c.rows.is_empty() {
        out.push_str("  no results in these runs\n");
    } else {
        results_table(&mut out, c);
    }
    if c.with_published {
        out.push('\n');
        published(&mut out, c);
    }
    out.push('\n');
    geomean(&mut out, c);
    for n in &c.notes {
        let _ = writeln!(out, "note: {}", for_terminal(n));
    }
    out
}

/// The environment and topology fields that differ between the runs (a
/// table, or that none does), then those the same on all.
fn environment(out: &mut String, c: &Comparison) {
    let diff: Vec<&Difference> = c.differences.iter().filter(|d| d.differs).collect();
    if diff.is_empty() {
        out.push_str("Environment and topology: no difference recorded between the runs\n");
    } else {
        out.push_str("Differences (environment and topology: they explain results)\n");
        let mut rows = vec![{
            let mut h = vec![String::new()];
            h.extend(c.runs.iter().map(|r| r.label.clone()));
            h
        }];
        for d in &diff {
            let mut r = vec![d.field.clone()];
            r.extend(d.values.iter().map(na));
            rows.push(r);
        }
        out.push_str(&columns(&rows, "  "));
    }
    let same: Vec<String> = c
        .differences
        .iter()
        .filter(|d| !d.differs)
        .map(|d| format!("{} {}", d.field, na(&d.values[0])))
        .collect();
    if !same.is_empty() {
        out.push_str(&wrap_items("same on all: ", &same, 100, "  "));
    }
}

/// The results table (one row per result, one column per run), the reasons
/// for n/a cells as numbered footnotes under it so the table stays narrow.
fn results_table(out: &mut String, c: &Comparison) {
    let mut rows = vec![{
        let mut h = vec!["result".to_string(), "unit".into()];
        h.extend(c.runs.iter().map(|r| r.label.clone()));
        h
    }];
    let mut reasons: Vec<String> = Vec::new();
    for row in &c.rows {
        let dir = if row.higher_is_better {
            ""
        } else {
            " (lower is better)"
        };
        let mut r = vec![format!("{}{dir}", row.label), row.unit.clone()];
        for (i, cell) in row.cells.iter().enumerate() {
            r.push(match (&cell.state, &cell.unavailable_reason) {
                (CellState::Unavailable, Some(why)) => {
                    let n = match reasons.iter().position(|x| x == why) {
                        Some(k) => k + 1,
                        None => {
                            reasons.push(why.clone());
                            reasons.len()
                        }
                    };
                    format!("n/a [{n}]")
                }
                _ => cell_text(cell, i == c.baseline),
            });
        }
        rows.push(r);
    }
    out.push_str(&columns(&rows, "  "));
    for (k, why) in reasons.iter().enumerate() {
        let _ = writeln!(out, "  [{}] not available: {}", k + 1, for_terminal(why));
    }
}

/// The published figures for the same workloads (`--published`), each
/// against the baseline, or that none matches.
fn published(out: &mut String, c: &Comparison) {
    let base = &c.runs[c.baseline];
    let pubs: Vec<&Row> = c.rows.iter().filter(|r| !r.published.is_empty()).collect();
    if pubs.is_empty() {
        out.push_str("Published figures: none matches these results (see `cpuscope published`)\n");
        return;
    }
    out.push_str(
        "Published figures for the same workloads (from the sources named; NOT measured here)\n",
    );
    for row in pubs {
        let _ = writeln!(
            out,
            "  {} [{}]",
            for_terminal(&row.label),
            for_terminal(&row.unit)
        );
        let mut t = Vec::new();
        for p in &row.published {
            let rel = p
                .relative_pct
                .map(|x| format!("{} of {}", pct_text(x), base.label))
                .unwrap_or_default();
            t.push(vec![
                format!("published: {}", p.machine),
                p.text.clone(),
                rel,
                p.source.clone(),
            ]);
        }
        out.push_str(&columns(&t, "    "));
    }
}

/// The geometric mean per run over the results measured on every run (or
/// why there is none), and what was left out of it.
fn geomean(out: &mut String, c: &Comparison) {
    let g = &c.geomean;
    if g.results_used == 0 {
        let _ = writeln!(
            out,
            "Geometric mean: not available (no result is measured on every run; {} result(s) in all)",
            g.results_total
        );
    } else {
        let per: Vec<String> = c
            .runs
            .iter()
            .zip(&g.per_run)
            .map(|(h, p)| {
                format!(
                    "{} {}",
                    h.label,
                    p.map(pct_text).unwrap_or_else(|| "n/a".into())
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "Geometric mean over the {} of {} results measured on every run: {}",
            g.results_used,
            g.results_total,
            for_terminal(&per.join("  "))
        );
    }
    if !g.left_out.is_empty() {
        let why: Vec<String> = g.left_out.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(out, "  left out: {}", for_terminal(&why.join(", ")));
    }
}

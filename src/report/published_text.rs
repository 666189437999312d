//! `cpuscope published`: the seed articles' reference figures as text.
//! The sets are files compiled in, but their text (titles, notes, machine
//! descriptions) is escaped for the terminal like any other.

use crate::base::fmt::{columns, for_terminal, for_terminal_lines};
use crate::results::published::{value_text, PublishedSet};
use std::fmt::Write as _;

/// Text listing of published sets.
pub fn render(sets: &[&PublishedSet]) -> String {
    for_terminal_lines(&listing(sets)).into_owned()
}

/// Where a set comes from: a seed's file is said to be one; another source
/// by its name and address.
fn source_lines(out: &mut String, s: &PublishedSet) {
    let t = |s: &str| for_terminal(s).into_owned();
    let seed = if s.source.seed.ends_with(".txt") {
        "seed "
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  source: {seed}{} — {}\n  section: {}",
        t(&s.source.seed),
        t(&s.source.document),
        t(&s.source.section)
    );
    if let Some(url) = &s.source.url {
        let _ = writeln!(out, "  address: {}", t(url));
    }
}

fn listing(sets: &[&PublishedSet]) -> String {
    let t = |s: &str| for_terminal(s).into_owned();
    let mut out = String::new();
    for s in sets {
        let _ = writeln!(out, "{}  {}", t(&s.id), t(&s.title));
        source_lines(&mut out, s);
        let _ = writeln!(out, "  workload: {}", t(&s.workload));
        for n in &s.notes {
            let _ = writeln!(out, "  note: {}", t(n));
        }
        for (m, d) in &s.machines {
            let _ = writeln!(out, "  machine: {}: {}", t(m), t(d));
        }
        for m in &s.mappings {
            let _ = writeln!(
                out,
                "  shown beside: {} {} [{}]{}{}",
                m.result.experiment,
                m.result.metric,
                m.result.unit,
                if m.result.params.is_empty() {
                    String::new()
                } else {
                    format!(
                        " {}",
                        serde_json::Value::from(
                            m.result
                                .params
                                .clone()
                                .into_iter()
                                .collect::<serde_json::Map<_, _>>()
                        )
                    )
                },
                if m.scale != 1.0 {
                    format!(" (published × {})", m.scale)
                } else {
                    String::new()
                }
            );
        }
        let mut rows: Vec<Vec<String>> = Vec::new();
        for f in &s.figures {
            let params: Vec<String> = f
                .params
                .iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(t) => format!("{k}={t}"),
                    o => format!("{k}={o}"),
                })
                .collect();
            rows.push(vec![
                f.machine.clone(),
                f.metric.clone(),
                params.join(", "),
                format!("{} {}", value_text(f.value, f.range, f.qualifier), f.unit),
                if f.higher_is_better {
                    "higher is better".into()
                } else {
                    "lower is better".into()
                },
            ]);
        }
        out.push_str(&columns(&rows, "    "));
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} set(s). These figures are published by the sources named; cpuscope did not measure them.",
        sets.len()
    );
    out
}

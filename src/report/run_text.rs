//! Text rendering of stored runs: `cpuscope show` (one run, in full) and
//! `cpuscope runs` (one line per run). Never measures. Every string of a
//! run (host, CPU model, tags, notes, reasons: an imported document may hold
//! anything) reaches the terminal through [`for_terminal`]; table cells get
//! it from [`columns`].

use crate::base::fmt::columns;
use crate::base::fmt::{fmt_num, for_terminal};
use crate::results::payload::PayloadError;
use crate::results::schema::{Load, ResultRecord, Run};
use crate::results::store::RunSummary;
use std::fmt::Write as _;

/// `cpuscope runs`: a table of runs, oldest first.
pub fn render_runs(runs: &[RunSummary], location: &str) -> String {
    let location = for_terminal(location);
    if runs.is_empty() {
        return format!("no runs in store '{location}' yet (make one with `cpuscope run`)\n");
    }
    let mut rows = vec![vec![
        "ID".to_string(),
        "STARTED".into(),
        "HOST".into(),
        "CPU".into(),
        "PROFILE".into(),
        "STATUS".into(),
        "RESULTS".into(),
    ]];
    for r in runs {
        rows.push(vec![
            r.id.clone(),
            r.started_at.clone(),
            r.host.clone(),
            r.cpu_model
                .clone()
                .unwrap_or_else(|| "(not recorded)".into()),
            r.profile.clone(),
            r.status_text(),
            r.results.to_string(),
        ]);
    }
    let mut out = columns(&rows, "");
    let _ = writeln!(out, "{} run(s) in store '{location}'", runs.len());
    out
}

fn duration_text(start: &str, end: &str) -> Option<String> {
    let a = chrono::DateTime::parse_from_rfc3339(start).ok()?;
    let b = chrono::DateTime::parse_from_rfc3339(end).ok()?;
    let s = (b - a).num_seconds();
    if s < 0 {
        return None;
    }
    Some(if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, (s % 3600) / 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    })
}

/// `cpuscope show --all`: the run, its environment, then every result (a
/// result whose payload a reader cannot read says so under its row).
pub fn render_run(run: &Run) -> String {
    let bad = unreadable(run);
    let mut out = header(run);
    out.push_str(&environment(run));
    out.push_str(&results(run, &bad));
    if run.results.is_empty() {
        return out;
    }
    let advice = super::advice::render_text(&super::advice::findings(run));
    if !advice.is_empty() {
        out.push('\n');
        out.push_str(&advice);
    }
    out
}

/// Every payload of `run` that a reader (the verdict, the summary's
/// sections, the advice) tries and fails to read.
fn unreadable(run: &Run) -> Vec<PayloadError> {
    crate::results::payload::collect(|| {
        let _ = super::summary::render(run);
        let _ = super::verdict::render(run, None, &super::verdict::Style::plain(100));
    })
    .1
}

/// The run's identity: status, times, host, CPU, profile, tags, tool.
fn header(run: &Run) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Run {}", for_terminal(&run.id));
    let mut head: Vec<Vec<String>> = Vec::new();
    let mut kv = |k: &str, v: String| head.push(vec![k.to_string(), v]);
    kv("status", run.status.to_string());
    kv("started", run.started_at.clone());
    match &run.finished_at {
        Some(f) => {
            let d = duration_text(&run.started_at, f)
                .map(|d| format!("  ({d})"))
                .unwrap_or_default();
            kv("finished", format!("{f}{d}"));
        }
        None => kv("finished", "not finished".into()),
    }
    kv("host", run.host.clone());
    kv(
        "cpu",
        run.cpu_model()
            .unwrap_or_else(|| "not available (not in the machine snapshot)".into()),
    );
    kv("profile", run.profile.clone());
    if !run.tags.is_empty() {
        kv("tags", run.tags.join(", "));
    }
    kv(
        "tool",
        format!("cpuscope {} ({})", run.tool_text(), run.schema),
    );
    out.push_str(&columns(&head, "  "));

    out
}

/// The environment the run was measured in.
fn environment(run: &Run) -> String {
    let mut out = String::new();
    let env = &run.environment;
    out.push_str("\nEnvironment\n");
    let rows: Vec<Vec<String>> = vec![
        vec![
            "kernel".into(),
            env.kernel
                .clone()
                .unwrap_or_else(|| "not available (not recorded)".into()),
        ],
        vec![
            "virtual machine".into(),
            match env.is_vm {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => "unknown (not recorded)".into(),
            },
        ],
        vec![
            "governor".into(),
            env.governor
                .clone()
                .unwrap_or_else(|| "not available (no cpufreq governor recorded)".into()),
        ],
        vec![
            "load at start".into(),
            env.load_start
                .as_ref()
                .map(Load::summary)
                .unwrap_or_else(|| "not recorded".into()),
        ],
        vec![
            "load at end".into(),
            env.load_end
                .as_ref()
                .map(Load::summary)
                .unwrap_or_else(|| "not recorded (the run did not finish normally)".into()),
        ],
        vec![
            "CPU time of others".into(),
            env.activity
                .as_ref()
                .map(|a| {
                    format!(
                        "{}{}",
                        a.summary(),
                        if a.busy { " (busy machine)" } else { "" }
                    )
                })
                .unwrap_or_else(|| "not recorded (an older version, or /proc unreadable)".into()),
        ],
    ];
    out.push_str(&columns(&rows, "  "));
    for n in &env.notes {
        let _ = writeln!(out, "  note: {}", for_terminal(n));
    }

    out
}

/// Every result: figure, spread, repetitions, NOISY flag, notes; reasons
/// for what is not available; `bad`: the payloads that do not parse.
fn results(run: &Run, bad: &[PayloadError]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nResults ({})", run.results.len());
    if run.results.is_empty() {
        out.push_str("  none stored\n");
        return out;
    }
    let mut rows = vec![vec![
        "RESULT".to_string(),
        "VALUE".into(),
        "MEDIAN".into(),
        "MIN".into(),
        "MAX".into(),
        "CV".into(),
        "REPS".into(),
        "".into(),
    ]];
    // Unavailable results get a one-cell row (so they do not widen the
    // figure columns) and their reason after the label column; notes go
    // on lines of their own under the row they belong to.
    let label_w = run
        .results
        .iter()
        .map(|r| for_terminal(&r.label()).chars().count())
        .chain(std::iter::once("RESULT".len()))
        .max()
        .unwrap_or(0);
    let mut tails: Vec<Option<String>> = vec![None];
    let mut extra: Vec<Vec<String>> = vec![Vec::new()];
    for r in &run.results {
        let label = r.label();
        match r.value {
            None => {
                let reason = r
                    .unavailable_reason
                    .clone()
                    .unwrap_or_else(|| "no reason recorded".into());
                rows.push(vec![label]);
                tails.push(Some(format!("not available: {}", for_terminal(&reason))));
            }
            Some(v) => {
                rows.push(figure_row(r, label, v));
                tails.push(None);
            }
        }
        extra.push(result_notes(run, r, bad));
    }
    let table = columns(&rows, "  ");
    for ((line, tail), notes) in table.lines().zip(&tails).zip(&extra) {
        match tail {
            Some(t) => {
                let pad = label_w.saturating_sub(line.trim_start().chars().count());
                let _ = writeln!(out, "{line}{}  {t}", " ".repeat(pad));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
        for n in notes {
            let _ = writeln!(out, "      {n}");
        }
    }
    out
}

/// The row of a result with a value: label, value and unit, median, min,
/// max, CV, repetitions and its flag.
fn figure_row(r: &ResultRecord, label: String, v: f64) -> Vec<String> {
    let (med, min, max, cv) = match &r.stats {
        Some(s) => (
            fmt_num(s.median),
            fmt_num(s.min),
            fmt_num(s.max),
            format!("{:.1}%", s.cv * 100.0),
        ),
        None => ("-".into(), "-".into(), "-".into(), "-".into()),
    };
    let flag = if r.is_suspect() {
        "SUSPECT"
    } else if r.is_disturbed() {
        "DISTURBED"
    } else if r.is_noisy() {
        "NOISY"
    } else {
        ""
    };
    vec![
        label,
        format!("{} {}", fmt_num(v), r.unit),
        med,
        min,
        max,
        cv,
        r.repetitions.to_string(),
        flag.into(),
    ]
}

/// The lines under a result's row: its notes, why its payload does not
/// parse, and what else is stored for it.
fn result_notes(run: &Run, r: &ResultRecord, bad: &[PayloadError]) -> Vec<String> {
    let mut notes = Vec::new();
    for n in &r.notes {
        notes.push(format!("note: {}", for_terminal(n)));
    }
    let unreadable = bad.iter().filter(|e| e.key == r.key);
    let mut readable = true;
    for e in unreadable {
        readable = false;
        notes.push(for_terminal(&e.line(&run.id)).into_owned());
    }
    if r.data.is_some() && readable {
        notes.push("structured data (curve/matrix) stored: see `cpuscope export`".into());
    }
    if r.counters.is_some() {
        notes.push("counter readings stored: see `cpuscope export`".into());
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(fmt_num(3.51234), "3.512");
        assert_eq!(fmt_num(1234.6), "1235");
        assert_eq!(fmt_num(0.0123), "0.01230");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(f64::NAN), "n/a");
        assert_eq!(fmt_num(2.5e9), "2.500e9");
    }
}

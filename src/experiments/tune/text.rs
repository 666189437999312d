//! Text of `cpuscope tune`: the plan (`--dry-run`) and the ranked table,
//! the verdict, the lines that reproduce each candidate, the thread-count
//! curve, what failed and what this machine cannot offer. Renders stored
//! records only (the run summary and `tune` itself print the same).

use crate::base::fmt::{columns, fmt_num, for_terminal, for_terminal_lines};
use crate::base::term;
use crate::experiments::tune::payload::{CandidateData, VerdictData};
use crate::experiments::tune::study::{Params, TuneView, NO_BINDING};
use crate::harness::child::COUNT_KEYS;
use crate::results::schema::{ResultRecord, Run};
use std::ffi::OsStr;
use std::fmt::Write as _;

/// The plan and the command lines, nothing measured. The command is the
/// user's, and a stored run's strings may hold anything: no control
/// character reaches the terminal (see [`shell_line`]).
pub fn render_plan(p: &Params) -> String {
    for_terminal_lines(&plan_text(p)).into_owned()
}

fn plan_text(p: &Params) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "tune plan (dry run: nothing is run)");
    let _ = writeln!(o, "command: {}", shell_line(&p.command));
    let _ = writeln!(o, "score: {}", p.score.describe());
    let _ = writeln!(
        o,
        "runs: {} warm-up + {} to {} measured per candidate, interleaved in a random order per round (seed {}), budget {} s",
        p.warmup,
        p.min_runs,
        p.max_runs,
        p.seed,
        fmt_num(p.budget.as_secs_f64())
    );
    let _ = writeln!(o, "bound: {}", p.bound_rule());
    let _ = writeln!(o, "CPUs per placement set: {}", p.plan.k);
    if let Some(t) = &p.plan.threads {
        let via: Vec<String> = [
            t.placeholder
                .then(|| "{threads} in the arguments".to_string()),
            t.env.as_ref().map(|e| format!("${e}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        let counts: Vec<String> = t.counts.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(
            o,
            "thread counts (no binding): {} via {}",
            counts.join(", "),
            via.join(" and ")
        );
    }
    let _ = writeln!(o);
    o.push_str(&candidate_table(p));
    o.push_str(&command_lines(p));
    if !p.plan.not_applicable.is_empty() {
        let _ = writeln!(o, "\nnot applicable here:");
        for (n, r) in &p.plan.not_applicable {
            let _ = writeln!(o, "  {}: {}", for_terminal(n), for_terminal(r));
        }
    }
    for n in &p.notes() {
        let _ = writeln!(o, "note: {}", for_terminal(n));
    }
    o
}

/// The plan's candidates, one row each: label, CPUs, memory policy and what
/// it is.
fn candidate_table(p: &Params) -> String {
    let mut rows = vec![vec![
        "candidate".to_string(),
        "CPUs".into(),
        "memory".into(),
        "what".into(),
    ]];
    for c in &p.plan.candidates {
        let mut label = c.label();
        if c.baseline {
            label.push_str(" (baseline)");
        }
        rows.push(vec![
            label,
            c.cpus
                .as_ref()
                .map(|x| x.to_string())
                .unwrap_or_else(|| "-".into()),
            c.policy
                .as_ref()
                .map(|x| x.to_string())
                .unwrap_or_else(|| "-".into()),
            if c.also.is_empty() {
                c.what.clone()
            } else {
                format!("{} (also: {})", c.what, c.also.join(", "))
            },
        ]);
    }
    columns(&rows, "")
}

/// The command line of each candidate, under its label.
fn command_lines(p: &Params) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "\ncommand lines:");
    let w = p
        .plan
        .candidates
        .iter()
        .map(|c| c.label().len())
        .max()
        .unwrap_or(0);
    for c in &p.plan.candidates {
        let _ = writeln!(
            o,
            "  {:<w$}  {}",
            c.label(),
            for_terminal(&p.command_line(c))
        );
    }
    o
}

/// A command as one shell line: each argument quoted for the shell; one
/// that holds a control or bidirectional character (a newline, ESC) or a
/// byte that is not UTF-8 is written in bash's `$'...'` form with escapes,
/// so that the line is still one line, safe on a terminal, and gives the
/// same argument when pasted (`base::args::shell_line`).
pub fn shell_line<S: AsRef<OsStr>>(argv: &[S]) -> String {
    crate::base::args::shell_line(argv)
}

fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// The tune section of a run: empty when the run has no tune records.
/// Every string of the run reaches the terminal escaped.
pub fn render(run: &Run) -> String {
    for_terminal_lines(&section(run)).into_owned()
}

fn section(run: &Run) -> String {
    let Some(v) = TuneView::of(run) else {
        return String::new();
    };
    let mut o = String::new();
    let vd = v.verdict.as_ref().map(|(_, d)| d);
    if let Some(d) = vd {
        run_header(&mut o, d);
    }
    let _ = writeln!(o);
    let mut missing: Vec<String> = Vec::new();
    ranked_table(&mut o, &v, &mut missing);
    if let Some(d) = vd {
        verdict_lines(&mut o, &v, d);
    }
    thread_curve(&mut o, &v);
    reproduce_lines(&mut o, &v);
    failed_lines(&mut o, &v);
    if let Some(d) = vd {
        plan_notes(&mut o, d);
    }
    for m in missing {
        let _ = writeln!(o, "note: {}", for_terminal(&m));
    }
    o
}

/// The command, the score, how the rounds went and the interval method.
fn run_header(o: &mut String, d: &VerdictData) {
    let line = if d.command_line.is_empty() {
        shell_line(&d.command)
    } else {
        d.command_line.clone()
    };
    let _ = writeln!(o, "tune: {line}");
    let _ = writeln!(o, "score: {}", d.score);
    let _ = writeln!(
        o,
        "runs: {} measured per candidate after {} warm-up, interleaved in a random order per round (seed {}); stopped: {}",
        d.rounds,
        d.warmup,
        d.seed,
        d.stopped.map(|s| s.words()).unwrap_or("?")
    );
    let _ = writeln!(o, "intervals: {}", d.interval_method);
    if !d.run_bound.is_empty() {
        let _ = writeln!(o, "bound: {}", d.run_bound);
    }
}

/// The table of candidates, best first, with the legend of its marks; what
/// a measured candidate lacks (counters, remote pages) goes to `missing`,
/// each reason once.
fn ranked_table(o: &mut String, v: &TuneView, missing: &mut Vec<String>) {
    let mut rows = vec![vec![
        "rank".to_string(),
        "candidate".into(),
        "CPUs".into(),
        "memory".into(),
        "runs".into(),
        "median".into(),
        "CV".into(),
        "vs no binding [95%]".into(),
        "IPC".into(),
        "migrations".into(),
        "page faults".into(),
        "remote pages".into(),
    ]];
    for (r, d) in v.ranked() {
        rows.push(ranked_row(r, d, missing));
    }
    let marked = rows
        .iter()
        .skip(1)
        .any(|r| r[6].ends_with('!') || r[7].ends_with('*'));
    o.push_str(&columns(&rows, ""));
    if marked {
        let _ = writeln!(
            o,
            "  * the interval excludes 1: different from no binding beyond noise; ! CV above 5%"
        );
    }
}

/// One candidate's row of the ranked table.
fn ranked_row(r: &ResultRecord, d: &CandidateData, missing: &mut Vec<String>) -> Vec<String> {
    let mut note_missing = |s: String| {
        if !missing.contains(&s) {
            missing.push(s);
        }
    };
    let mut label = d.label.clone();
    if d.baseline {
        label.push_str(" (baseline)");
    }
    let (median, cv) = match (&r.value, &r.stats) {
        (Some(m), Some(s)) => (
            format!("{} {}", fmt_num(*m), r.unit),
            format!(
                "{:.1}%{}",
                s.cv * 100.0,
                if s.is_noisy() { "!" } else { "" }
            ),
        ),
        _ if d.timed_out => ("timed out".into(), "-".into()),
        _ if d.bound.is_none() && d.failed.is_none() => ("not run".into(), "-".into()),
        _ => ("failed".into(), "-".into()),
    };
    let vs = d.vs_baseline_text(true).unwrap_or_else(|| "-".into());
    let c = &d.counters;
    let num = |x: Option<f64>, key: &str, f: &dyn Fn(f64) -> String| match x {
        Some(v) => f(v),
        None => {
            if r.value.is_some() {
                if let Some(why) = c.missing.get(key) {
                    return format!("n/a ({})", short(key, why));
                }
            }
            "n/a".into()
        }
    };
    for key in COUNT_KEYS.iter().take(3).copied() {
        if let Some(why) = c.missing.get(key) {
            if r.value.is_some() {
                note_missing(format!("{key} not available: {why}"));
            }
        }
    }
    let remote = match (d.numa.remote_share, &d.numa.unavailable) {
        (Some(s), _) => pct(s),
        (None, Some(why)) => {
            if r.value.is_some() {
                note_missing(format!("remote pages not available: {why}"));
            }
            "n/a".into()
        }
        _ => "n/a".into(),
    };
    vec![
        d.rank.map(|x| x.to_string()).unwrap_or_else(|| "-".into()),
        label,
        d.cpus.clone().unwrap_or_else(|| "-".into()),
        d.policy.clone().unwrap_or_else(|| "-".into()),
        r.stats.as_ref().map(|s| s.n).unwrap_or(0).to_string(),
        median,
        cv,
        vs,
        num(c.ipc, COUNT_KEYS[0], &|x| format!("{x:.2}")),
        num(c.cpu_migrations, COUNT_KEYS[1], &fmt_num),
        num(c.page_faults, COUNT_KEYS[2], &fmt_num),
        remote,
    ]
}

/// The verdict, and the line that reproduces the winner when there is one.
fn verdict_lines(o: &mut String, v: &TuneView, d: &VerdictData) {
    let _ = writeln!(o, "\nverdict: {}", for_terminal(&d.text));
    if let Some(w) = &d.winner {
        if let Some((_, c)) = v.candidates.iter().find(|(_, c)| &c.label == w) {
            let _ = writeln!(
                o,
                "reproduce the winner:\n  {}",
                for_terminal(&c.command_line)
            );
        }
    }
}

/// The longest bar of the thread-count curve, in columns...
pub const CURVE_BAR_MAX: usize = 40;
/// ... and the shortest the longest may be: below it the bars would not
/// show a difference (the floor of a narrow `COLUMNS`).
pub const CURVE_BAR_MIN: usize = 10;

/// The thread-count curve (no binding), when more than one count ran. The
/// longest bar takes what the output's width (`COLUMNS`, the terminal:
/// `base::term`) leaves after the text, from [`CURVE_BAR_MIN`] to
/// [`CURVE_BAR_MAX`] columns.
fn thread_curve(o: &mut String, v: &TuneView) {
    let mut curve: Vec<_> = v
        .candidates
        .iter()
        .filter(|(_, d)| d.set == NO_BINDING && d.threads.is_some())
        .collect();
    if curve.len() <= 1 {
        return;
    }
    curve.sort_by_key(|(_, d)| d.threads);
    let best = curve
        .iter()
        .filter_map(|(r, _)| r.value)
        .fold(0.0f64, f64::max);
    let _ = writeln!(o, "\nthread count (no binding):");
    let mut rows = vec![vec![
        "threads".to_string(),
        "median".into(),
        "vs baseline [95%]".into(),
    ]];
    for (r, d) in &curve {
        rows.push(vec![
            d.threads.map(|t| t.to_string()).unwrap_or_default(),
            r.value
                .map(|m| format!("{} {}", fmt_num(m), r.unit))
                .unwrap_or_else(|| "failed".into()),
            d.vs_baseline_text(false).unwrap_or_else(|| "-".into()),
        ]);
    }
    // The indent, each column and the two spaces after it.
    let used = 2
        + (0..3)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0) + 2)
            .sum::<usize>();
    let room = term::bar_columns(term::width(1), used, CURVE_BAR_MIN, CURVE_BAR_MAX);
    rows[0].push(String::new());
    for (row, (r, _)) in rows.iter_mut().skip(1).zip(&curve) {
        row.push(
            r.value
                .filter(|_| best > 0.0)
                .map(|x| "#".repeat(((x / best) * room as f64).round().max(1.0) as usize))
                .unwrap_or_default(),
        );
    }
    o.push_str(&columns(&rows, "  "));
}

/// The command line of each candidate, best first.
fn reproduce_lines(o: &mut String, v: &TuneView) {
    let _ = writeln!(o, "\nreproduce:");
    let w = v
        .candidates
        .iter()
        .map(|(_, d)| d.label.len())
        .max()
        .unwrap_or(0);
    for (_, d) in v.ranked() {
        let _ = writeln!(
            o,
            "  {:<w$}  {}",
            for_terminal(&d.label),
            for_terminal(&d.command_line)
        );
    }
}

/// The candidates that failed (a timed-out run among the reasons), with
/// why, and those never run (the budget spent before their turn).
fn failed_lines(o: &mut String, v: &TuneView) {
    let (not_run, failed): (Vec<_>, Vec<_>) = v
        .candidates
        .iter()
        .filter_map(|(r, d)| {
            r.unavailable_reason
                .as_ref()
                .or(d.failed.as_ref())
                .map(|f| (d, f))
        })
        .partition(|(_, f)| f.starts_with("not run"));
    for (head, list) in [
        ("failed (stopped that candidate only)", failed),
        ("not run", not_run),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n{head}:");
        for (d, f) in list {
            let f = f.strip_prefix("not run: ").unwrap_or(f);
            let _ = writeln!(o, "  {}: {}", for_terminal(&d.label), for_terminal(f));
        }
    }
}

/// What this machine could not offer, and the planner's notes.
fn plan_notes(o: &mut String, d: &VerdictData) {
    if !d.not_applicable.is_empty() {
        let _ = writeln!(o, "\nnot applicable here:");
        for (n, r) in &d.not_applicable {
            let _ = writeln!(o, "  {}: {}", for_terminal(n), for_terminal(r));
        }
    }
    for n in &d.notes {
        let _ = writeln!(o, "note: {}", for_terminal(n));
    }
}

/// A short reason code for a table cell (the full reason is in the notes).
fn short(_key: &str, why: &str) -> &'static str {
    if why.contains("no-pmu") || why.contains("no hardware PMU") {
        "no PMU"
    } else if why.contains("--no-counters") {
        "off"
    } else if why.contains("permission") || why.contains("paranoid") {
        "denied"
    } else {
        "see note"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::fmt::is_unsafe_on_terminal;

    #[test]
    fn a_command_with_control_characters_is_one_safe_line_that_pastes_back() {
        let argv: Vec<String> = vec![
            "bash".into(),
            "-c".into(),
            "echo 'hi'\nprintf '\x1b[2J'\u{202e}".into(),
        ];
        let line = shell_line(&argv);
        assert_eq!(
            line,
            "bash -c $'echo \\'hi\\'\\nprintf \\'\\x1b[2J\\'\\u202e'"
        );
        assert!(!line.chars().any(is_unsafe_on_terminal), "{line}");
        // Plain arguments keep their usual quoting.
        assert_eq!(shell_line(&["echo", "a b"]), "echo 'a b'");
    }
}

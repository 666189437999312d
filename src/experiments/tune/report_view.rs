//! A tune run's part of the report, as blocks (docs/views.md): the command
//! and the verdict, each candidate's score relative to no binding with its
//! 95% interval (an interval chart on a log scale, 1 = the baseline), and
//! the table with the command lines. Reads stored records only.

use crate::base::fmt::fmt_num;
use crate::experiments::tune::payload::{fmt_ratio, CandidateData, VerdictData};
use crate::experiments::tune::study::TuneView;
use crate::experiments::tune::text::shell_line;
use crate::results::schema::{ResultRecord, Run};
use crate::view::{Align, Block, Cell, Chart, ChartKind, Interval, Span, Style, Table};

/// The blocks; none when the run has no tune records.
pub fn report_blocks(run: &Run) -> Vec<Block> {
    let Some(v) = TuneView::of(run) else {
        return Vec::new();
    };
    let vd = v.verdict.as_ref().map(|(_, d)| d);
    let command = vd
        .map(|d| {
            if d.command_line.is_empty() {
                shell_line(&d.command)
            } else {
                d.command_line.clone()
            }
        })
        .unwrap_or_default();
    let mut out = vec![Block::Title(vec![
        Span::new("tune: ", Style::Plain),
        Span::new(command, Style::Code),
    ])];
    if let Some(d) = vd {
        out.push(Block::Strong(d.text.clone()));
        out.push(Block::Para(format!(
            "score: {} · {} measured run(s) per candidate after {} warm-up, interleaved in a random order (seed {}) · {}",
            d.score, d.rounds, d.warmup, d.seed, d.interval_method
        )));
    }
    out.extend(chart(&v).map(Block::Chart));
    out.push(Block::Table(candidates_table(&v)));
    out
}

/// Text marked as a reason no figure is there.
fn na(s: &str) -> Cell {
    Cell::Spans(vec![Span::new(s, Style::NotAvailable)])
}

/// One row per candidate, ranked: its placement, score, spread, ratio to
/// no binding, counters and the command that reproduces it.
fn candidates_table(v: &TuneView) -> Table {
    let mut t = Table::new(&[
        "rank",
        "candidate",
        "CPUs",
        "memory",
        "median",
        "CV",
        "vs no binding [95%]",
        "IPC",
        "migrations",
        "page faults",
        "remote pages",
        "reproduce",
    ]);
    for i in [0, 4, 5, 6, 7, 8, 9, 10] {
        t.columns[i].align = Align::Right;
    }
    for (r, d) in v.ranked() {
        let _ = t.push(candidate_row(r, d));
    }
    t
}

fn candidate_row(r: &ResultRecord, d: &CandidateData) -> Vec<Cell> {
    let text = |s: String| Cell::Text(s);
    let median = match r.value {
        Some(m) => text(format!("{} {}", fmt_num(m), r.unit)),
        None => na(r.unavailable_reason.as_deref().unwrap_or("failed")),
    };
    let cv = match &r.stats {
        Some(s) if s.is_noisy() => Cell::Spans(vec![Span::new(
            format!("{:.1}%", s.cv * 100.0),
            Style::Noisy,
        )]),
        Some(s) => text(format!("{:.1}%", s.cv * 100.0)),
        None => Cell::Empty,
    };
    let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| {
        x.map(|x| text(f(x))).unwrap_or_else(|| na("n/a"))
    };
    vec![
        text(d.rank.map(|x| x.to_string()).unwrap_or_else(|| "-".into())),
        text(format!(
            "{}{}",
            d.label,
            if d.baseline { " (baseline)" } else { "" }
        )),
        text(d.cpus.clone().unwrap_or_else(|| "-".into())),
        text(d.policy.clone().unwrap_or_else(|| "-".into())),
        median,
        cv,
        text(d.vs_baseline_text(false).unwrap_or_default()),
        opt(d.counters.ipc, &|x| format!("{x:.2}")),
        opt(d.counters.cpu_migrations, &fmt_num),
        opt(d.counters.page_faults, &fmt_num),
        opt(d.numa.remote_share, &|x| format!("{:.0}%", x * 100.0)),
        Cell::Spans(vec![Span::new(d.command_line.clone(), Style::Code)]),
    ]
}

/// Score relative to no binding, one row per measured candidate (ranked);
/// none under two.
fn chart(v: &TuneView) -> Option<Chart> {
    let vd = v.verdict.as_ref().map(|(_, d)| d);
    let rows: Vec<Interval> = v
        .ranked()
        .into_iter()
        .filter(|(r, d)| r.value.is_some() && (d.baseline || d.vs_baseline.is_some()))
        .map(|(_, d)| interval(d, vd))
        .collect();
    if rows.len() < 2 {
        return None;
    }
    Some(Chart {
        title: "score relative to no binding".into(),
        caption: None,
        kind: ChartKind::Intervals {
            subtitle: format!("95% intervals: {}", unit_text(vd)),
            rows,
            reference: 1.0,
            reference_label: "1 (no binding)".into(),
        },
    })
}

/// A candidate's row of the chart: the baseline at 1, the others at their
/// ratio and interval; the winner highlighted.
fn interval(d: &CandidateData, vd: Option<&VerdictData>) -> Interval {
    let (r, l, h) = match &d.vs_baseline {
        Some(e) => (e.ratio, e.low, e.high),
        None => (1.0, 1.0, 1.0),
    };
    let text = if d.baseline {
        "1".to_string()
    } else if h.is_finite() && l > 0.0 {
        format!("{} [{}, {}]", fmt_ratio(r), fmt_ratio(l), fmt_ratio(h))
    } else {
        format!("{} (interval unbounded)", fmt_ratio(r))
    };
    Interval {
        label: format!(
            "{}. {}{}",
            d.rank.unwrap_or(0),
            d.label,
            if d.baseline { " (baseline)" } else { "" }
        ),
        estimate: r,
        low: l,
        high: h,
        text,
        highlight: vd
            .and_then(|vd| vd.winner.as_ref())
            .is_some_and(|w| w == &d.label),
    }
}

/// The score's unit and which way is better (empty without a verdict).
fn unit_text(vd: Option<&VerdictData>) -> String {
    vd.map(|d| {
        format!(
            "{} ({})",
            d.unit,
            if d.higher_is_better {
                "higher is better"
            } else {
                "lower is better"
            }
        )
    })
    .unwrap_or_default()
}

//! The HTML section of a tune run: the verdict, a chart of each
//! candidate's score relative to no binding with its 95% interval (log
//! scale, 1 = the baseline), and the table with the command lines.
//! Renders stored records only (`report::html` calls it through the
//! registry).

use crate::base::fmt::fmt_num;
use crate::base::html::esc;
use crate::experiments::tune::payload::{fmt_ratio, CandidateData};
use crate::experiments::tune::study::TuneView;
use crate::experiments::tune::text::shell_line;
use crate::results::schema::{ResultRecord, Run};
use std::fmt::Write as _;

/// The section; empty when the run has no tune records.
pub fn render(run: &Run) -> String {
    let Some(v) = TuneView::of(run) else {
        return String::new();
    };
    let mut h = String::new();
    let vd = v.verdict.as_ref().map(|(_, d)| d);
    let _ = write!(
        h,
        "<h2>tune: <code>{}</code></h2>",
        esc(&vd
            .map(|d| if d.command_line.is_empty() {
                shell_line(&d.command)
            } else {
                d.command_line.clone()
            })
            .unwrap_or_default())
    );
    if let Some(d) = vd {
        let _ = write!(
            h,
            "<p><b>{}</b></p><p class=\"note\">score: {} · {} measured run(s) per candidate after {} warm-up, interleaved in a random order (seed {}) · {}</p>",
            esc(&d.text),
            esc(&d.score),
            d.rounds,
            d.warmup,
            d.seed,
            esc(&d.interval_method)
        );
    }
    h.push_str(&chart(&v));
    h.push_str("<table><tr><th>rank</th><th>candidate</th><th>CPUs</th><th>memory</th><th>median</th><th>CV</th><th>vs no binding [95%]</th><th>IPC</th><th>migrations</th><th>page faults</th><th>remote pages</th><th>reproduce</th></tr>");
    for (r, d) in v.ranked() {
        let na = |s: &str| format!("<span class=\"na\">{}</span>", esc(s));
        let median = match r.value {
            Some(m) => format!("{} {}", fmt_num(m), esc(&r.unit)),
            None => na(r.unavailable_reason.as_deref().unwrap_or("failed")),
        };
        let cv = r
            .stats
            .as_ref()
            .map(|s| {
                let t = format!("{:.1}%", s.cv * 100.0);
                if s.is_noisy() {
                    format!("<span class=\"noisy\">{t}</span>")
                } else {
                    t
                }
            })
            .unwrap_or_default();
        let vs = d.vs_baseline_text(false).unwrap_or_default();
        let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map(f).unwrap_or_else(|| na("n/a"));
        let _ = write!(
            h,
            "<tr><td class=\"num\">{}</td><td>{}{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>",
            d.rank.map(|x| x.to_string()).unwrap_or_else(|| "-".into()),
            esc(&d.label),
            if d.baseline { " (baseline)" } else { "" },
            esc(d.cpus.as_deref().unwrap_or("-")),
            esc(d.policy.as_deref().unwrap_or("-")),
            median,
            cv,
            vs,
            opt(d.counters.ipc, &|x| format!("{x:.2}")),
            opt(d.counters.cpu_migrations, &fmt_num),
            opt(d.counters.page_faults, &fmt_num),
            opt(d.numa.remote_share, &|x| format!("{:.0}%", x * 100.0)),
            esc(&d.command_line)
        );
    }
    h.push_str("</table>");
    h
}

/// Score relative to no binding, one row per candidate (ranked), a dot at
/// the estimate and a whisker over the 95% interval, on a log axis.
fn chart(v: &TuneView) -> String {
    let rows: Vec<_> = v
        .ranked()
        .into_iter()
        .filter(|(r, d)| r.value.is_some() && (d.baseline || d.vs_baseline.is_some()))
        .collect();
    if rows.len() < 2 {
        return String::new();
    }
    let (lo, hi) = ratio_range(&rows);
    let (lo, hi) = (lo.ln() - 0.05, hi.ln() + 0.05);
    let (left, width, row_h) = (230.0, 560.0, 22.0);
    let x = |r: f64| left + (r.clamp(lo.exp(), hi.exp()).ln() - lo) / (hi - lo) * width;
    let height = 50.0 + row_h * rows.len() as f64;
    let unit = unit_text(v);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" role="img" aria-label="score relative to no binding" class="chart"><text x="0" y="14" font-weight="bold">score relative to no binding, 95% intervals: {u}</text>"#,
        w = left + width + 200.0,
        u = esc(&unit)
    );
    let x1 = x(1.0);
    let _ = write!(
        s,
        r##"<line x1="{x1:.1}" y1="22" x2="{x1:.1}" y2="{y2:.1}" stroke="#888" stroke-dasharray="3,3"/><text x="{x1:.1}" y="{yt:.1}" text-anchor="middle">1 (no binding)</text>"##,
        y2 = height - 18.0,
        yt = height - 4.0
    );
    for (i, (_, d)) in rows.iter().enumerate() {
        let y = 36.0 + row_h * i as f64;
        let winner = v
            .verdict
            .as_ref()
            .and_then(|(_, vd)| vd.winner.as_ref())
            .is_some_and(|w| w == &d.label);
        let colour = if winner { "#2e8b57" } else { "#4a7ab5" };
        let _ = write!(
            s,
            r#"<text x="{tx:.1}" y="{ty:.1}" text-anchor="end">{label}</text>"#,
            tx = left - 8.0,
            ty = y + 4.0,
            label = esc(&format!(
                "{}. {}{}",
                d.rank.unwrap_or(0),
                d.label,
                if d.baseline { " (baseline)" } else { "" }
            ))
        );
        let (r, l, hgh) = match &d.vs_baseline {
            Some(e) => (e.ratio, e.low, e.high),
            None => (1.0, 1.0, 1.0),
        };
        let (xl, xh) = (x(l.max(1e-300)), x(hgh));
        let _ = write!(
            s,
            r#"<line x1="{xl:.1}" y1="{y:.1}" x2="{xh:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2"/><line x1="{xl:.1}" y1="{a:.1}" x2="{xl:.1}" y2="{b:.1}" stroke="{colour}"/><line x1="{xh:.1}" y1="{a:.1}" x2="{xh:.1}" y2="{b:.1}" stroke="{colour}"/><circle cx="{xr:.1}" cy="{y:.1}" r="4" fill="{colour}"/><text x="{tx:.1}" y="{ty:.1}">{val}</text>"#,
            a = y - 5.0,
            b = y + 5.0,
            xr = x(r),
            tx = xh + 6.0,
            ty = y + 4.0,
            val = esc(&if d.baseline {
                "1".to_string()
            } else if hgh.is_finite() && l > 0.0 {
                format!("{} [{}, {}]", fmt_ratio(r), fmt_ratio(l), fmt_ratio(hgh))
            } else {
                format!("{} (interval unbounded)", fmt_ratio(r))
            })
        );
    }
    s.push_str("</svg>");
    s
}

/// The lowest and highest finite positive ratio (estimate or interval end)
/// of the rows, 1 included.
fn ratio_range(rows: &[&(ResultRecord, CandidateData)]) -> (f64, f64) {
    let (mut lo, mut hi) = (1.0f64, 1.0f64);
    for (_, d) in rows {
        if let Some(e) = &d.vs_baseline {
            for x in [e.ratio, e.low, e.high] {
                if x.is_finite() && x > 0.0 {
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
        }
    }
    (lo, hi)
}

/// The score's unit and which way is better, for the chart's title (empty
/// without a verdict).
fn unit_text(v: &TuneView) -> String {
    v.verdict
        .as_ref()
        .map(|(_, d)| {
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

//! The comparison page (`cpuscope compare --html FILE`): one self-contained
//! HTML file, inline CSS and SVG, no script, no font, no CDN. Charts: the
//! geometric mean per run, the relative figures of each experiment as
//! grouped bars, overlaid curves where results carry curve data, and the
//! published figures beside the runs' own. Every chart is an `svg.chart`
//! whose marks carry their value in `data-v`.
//!
//! The curves of a result are the ones its experiment declares in its
//! folder's `view.rs` (`Views::curves`, read from its typed payload, taken
//! through the registry): the latency curve, the bandwidth sweep and the
//! loaded-latency curve.

use super::{cell_text, CellState, Comparison, Row};
use crate::base::fmt::fmt_num;
use crate::experiments::registry::curves_of;
use crate::report::html::esc;
use crate::results::schema::Run;
use crate::view::html::{chart, page, CHART_CSS, FIGURE_CSS, TABLE_CSS};
use crate::view::{
    Axis, Bar, BarGroup, Chart, ChartKind, Curve, Hue, Reference, Scale, Series, Ticks,
};
use std::fmt::Write as _;

/// The comparison page's own rules, after the shell's, the tables' and
/// the figures' (`view::html::page`).
const CSS: &str = r#"tr.diff td{background:#fff6e0}.noisy{color:#b35900;font-weight:bold}.na{color:#888;font-style:italic}
.note{color:#555;font-size:.85em}.pub{color:#555;font-style:italic}.meta{color:#555}
svg.chart{display:block;margin:.6em 0 1.2em}
"#;

/// The colour of run `i` (A, B, C…; published figures are grey), as every
/// chart of the page draws it.
fn color(i: usize) -> &'static str {
    crate::view::lines::color(Some(Hue::Series(i)), i)
}

fn pct(p: f64) -> String {
    format!("{p:.1}%")
}

fn series_name(c: &Comparison, i: usize) -> String {
    let h = &c.runs[i];
    format!("{} {}", h.label, h.host)
}

/// A bar of run `i` at `value`, with its text.
fn run_bar(label: String, i: usize, value: f64, text: String) -> Bar {
    Bar {
        label,
        value,
        text: Some(text),
        hue: Some(Hue::Series(i)),
    }
}

/// A bar chart of `groups` (texts beside the bars, no unit of its own) on a
/// linear scale, with its reference line if any.
fn bar_chart(title: String, groups: Vec<BarGroup>, reference: Option<Reference>) -> Chart {
    Chart {
        title,
        caption: None,
        kind: ChartKind::Bars {
            unit: String::new(),
            scale: Scale::Linear,
            groups,
            reference,
        },
    }
}

/// A bar chart of `groups` in percent of the baseline, 100% marked.
fn relative_bars(title: String, groups: Vec<BarGroup>) -> Chart {
    let hundred = Reference {
        value: 100.0,
        label: pct(100.0),
    };
    bar_chart(title, groups, Some(hundred))
}

fn relative_charts(c: &Comparison) -> String {
    let mut out = String::new();
    let mut experiments: Vec<&str> = Vec::new();
    for r in &c.rows {
        if !experiments.contains(&r.experiment.as_str()) {
            experiments.push(&r.experiment);
        }
    }
    for e in experiments {
        let groups: Vec<BarGroup> = c
            .rows
            .iter()
            .filter(|r| r.experiment == e)
            .filter(|r| r.cells.iter().any(|x| x.relative_pct.is_some()))
            .map(|r| {
                let bars = r
                    .cells
                    .iter()
                    .enumerate()
                    .filter_map(|(i, x)| {
                        let p = x.relative_pct?;
                        let v = x.value.map(fmt_num).unwrap_or_default();
                        let text = format!("{} ({v} {})", pct(p), r.unit);
                        Some(run_bar(c.runs[i].label.clone(), i, p, text))
                    })
                    .collect();
                BarGroup {
                    label: r.label.clone(),
                    bars,
                }
            })
            .collect();
        let title = format!(
            "{e}: relative to {} (above 100% = better)",
            c.runs[c.baseline].label
        );
        out.push_str(&chart(&relative_bars(title, groups)));
    }
    out
}

/// The axis a curve's x takes: sizes in bytes as sizes, whole numbers
/// (thread counts) as whole numbers.
fn x_axis(m: &Curve) -> Axis {
    let scale = match m.log_x {
        Some(true) => Scale::Log,
        Some(false) => Scale::Linear,
        None => Scale::Auto,
    };
    let ticks = if m.x_unit == "bytes" || m.x_unit == "B" {
        Ticks::Bytes
    } else if m.points.iter().all(|p| p.0 == p.0.round()) {
        Ticks::Count
    } else {
        Ticks::Figure
    };
    Axis {
        ticks,
        ..Axis::new(&m.x_label, &m.x_unit, scale)
    }
}

fn curve_charts(c: &Comparison, runs: &[Run]) -> String {
    let mut out = String::new();
    for row in &c.rows {
        let mut series: Vec<Series> = Vec::new();
        let mut meta: Option<Curve> = None;
        for (i, run) in runs.iter().enumerate() {
            let Some(rec) = run.results.iter().find(|r| r.key == row.key) else {
                continue;
            };
            let curves = curves_of(rec);
            let multi = curves.len() > 1;
            for cv in curves {
                let name = match (&cv.name, multi) {
                    (Some(n), true) => format!("{} {n}", series_name(c, i)),
                    _ => series_name(c, i),
                };
                series.push(Series {
                    name: Some(name),
                    points: cv.points.clone(),
                    hue: Some(Hue::Series(i)),
                });
                meta.get_or_insert(cv);
            }
        }
        if let Some(m) = meta {
            out.push_str(&chart(&Chart {
                title: row.label.clone(),
                caption: None,
                kind: ChartKind::Lines {
                    x: x_axis(&m),
                    y: Axis::new("", &m.y_unit, Scale::Linear),
                    series,
                    reference: None,
                    marks: Vec::new(),
                },
            }));
        }
    }
    out
}

fn published_chart(c: &Comparison) -> String {
    let mut out = String::new();
    for row in c.rows.iter().filter(|r| !r.published.is_empty()) {
        let mut bars: Vec<Bar> = row
            .cells
            .iter()
            .enumerate()
            .filter_map(|(i, x)| {
                let v = x.value?;
                let label = format!("{} (measured)", series_name(c, i));
                Some(run_bar(label, i, v, format!("{} {}", fmt_num(v), row.unit)))
            })
            .collect();
        for p in &row.published {
            if let Some(v) = p.value {
                bars.push(Bar {
                    label: format!("published: {}", p.machine),
                    value: v,
                    text: Some(format!("{} {}", p.text, row.unit)),
                    hue: Some(Hue::Published),
                });
            }
        }
        if bars.is_empty() {
            continue;
        }
        let title = format!(
            "{} [{}]: these runs and published figures",
            row.label, row.unit
        );
        let groups = vec![BarGroup {
            label: row.label.clone(),
            bars,
        }];
        out.push_str(&chart(&bar_chart(title, groups, None)));
    }
    out
}

fn cell_html(c: &Comparison, i: usize, row: &Row) -> String {
    let cell = &row.cells[i];
    match cell.state {
        CellState::Measured => {
            let mut s = format!(
                "<td class=\"num\">{}",
                esc(&cell.value.map(fmt_num).unwrap_or_default())
            );
            if i != c.baseline {
                match cell.relative_pct {
                    Some(p) => {
                        let _ = write!(s, " <b>({})</b>", pct(p));
                    }
                    None => s.push_str(" <span class=\"na\">(no %)</span>"),
                }
            }
            if cell.noisy {
                let cv = cell
                    .cv
                    .map(|v| format!("{:.1}%", v * 100.0))
                    .unwrap_or_default();
                let _ = write!(
                    s,
                    " <span class=\"noisy\" title=\"CV {cv}, above 5%\">NOISY</span>"
                );
            }
            s.push_str("</td>");
            s
        }
        _ => format!(
            "<td class=\"na\">{}</td>",
            esc(&cell_text(cell, i == c.baseline))
        ),
    }
}

/// The comparison page. `runs` are the compared runs in the order of `c.runs`
/// (their curve data is drawn).
pub fn render(c: &Comparison, runs: &[Run]) -> String {
    let mut h = String::new();
    let base = &c.runs[c.baseline];
    let _ = write!(
        h,
        "<h1>cpuscope comparison</h1><p class=\"meta\">{} run(s), baseline {} · relative figures: above 100% is better than the baseline (lower-is-better figures inverted) · NOISY = CV above 5%</p>",
        c.runs.len(),
        esc(&base.label)
    );
    runs_table(&mut h, c);
    if c.runs.len() > 1 {
        environment_table(&mut h, c);
    }
    h.push_str("<h2>Charts</h2>");
    geomean_chart(&mut h, c);
    h.push_str(&relative_charts(c));
    h.push_str(&curve_charts(c, runs));
    h.push_str(&published_chart(c));
    results_table(&mut h, c);
    if c.with_published {
        published_table(&mut h, c);
    }
    for n in &c.notes {
        let _ = write!(h, "<p class=\"note\">note: {}</p>", esc(n));
    }
    page(
        &format!("cpuscope: {} runs compared", c.runs.len()),
        &[TABLE_CSS, FIGURE_CSS, CHART_CSS, CSS],
        &h,
    )
}

/// The "Runs" section: one row per run with its colour, id, host, CPU,
/// profile, status, start and tags.
fn runs_table(h: &mut String, c: &Comparison) {
    h.push_str("<h2>Runs</h2><table><tr><th></th><th>run</th><th>host</th><th>CPU</th><th>profile</th><th>status</th><th>started</th><th>tags</th></tr>");
    for (i, r) in c.runs.iter().enumerate() {
        let _ = write!(
            h,
            "<tr><td><span style=\"color:{}\">■</span> <b>{}</b>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            color(i),
            esc(&r.label),
            if r.baseline { " (baseline)" } else { "" },
            esc(&r.id),
            esc(&r.host),
            esc(r.cpu_model.as_deref().unwrap_or("(not recorded)")),
            esc(&r.profile),
            esc(&r.status),
            esc(&r.started_at),
            esc(&r.tags.join(", "))
        );
    }
    h.push_str("</table>");
}

/// The "Environment and topology" section (two runs or more): each field
/// per run, the rows that differ highlighted.
fn environment_table(h: &mut String, c: &Comparison) {
    h.push_str("<h2>Environment and topology</h2><p class=\"note\">Highlighted rows differ between the runs: they explain results.</p><table><tr><th></th>");
    for r in &c.runs {
        let _ = write!(h, "<th>{}</th>", esc(&r.label));
    }
    h.push_str("</tr>");
    for d in &c.differences {
        let _ = write!(
            h,
            "<tr{}><th>{}</th>",
            if d.differs { " class=\"diff\"" } else { "" },
            esc(&d.field)
        );
        for v in &d.values {
            match v {
                Some(v) => {
                    let _ = write!(h, "<td>{}</td>", esc(v));
                }
                None => h.push_str("<td class=\"na\">not recorded</td>"),
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

/// The geometric-mean chart (one bar per run, 100% marked), or why there is
/// none.
fn geomean_chart(h: &mut String, c: &Comparison) {
    let g = &c.geomean;
    if g.results_used > 0 {
        let bars: Vec<Bar> = g
            .per_run
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some(run_bar(c.runs[i].label.clone(), i, (*p)?, pct((*p)?))))
            .collect();
        let title = format!(
            "Geometric mean over the {} of {} results measured on every run",
            g.results_used, g.results_total
        );
        let groups = vec![BarGroup {
            label: "all common results".into(),
            bars,
        }];
        h.push_str(&chart(&relative_bars(title, groups)));
    } else {
        let _ = write!(
            h,
            "<p class=\"na\">Geometric mean not available: no result is measured on every run ({} results in all).</p>",
            g.results_total
        );
    }
}

/// The "Results" section: one row per result with each run's cell, the
/// geometric mean row, and what was left out of the mean.
fn results_table(h: &mut String, c: &Comparison) {
    let g = &c.geomean;
    h.push_str("<h2>Results</h2><table><tr><th>result</th><th>unit</th>");
    for r in &c.runs {
        let _ = write!(h, "<th>{}</th>", esc(&r.label));
    }
    h.push_str("</tr>");
    for row in &c.rows {
        let _ = write!(
            h,
            "<tr><td>{}{}<div class=\"note\"><code>{}</code></div></td><td>{}</td>",
            esc(&row.label),
            if row.higher_is_better {
                ""
            } else {
                " <span class=\"note\">(lower is better)</span>"
            },
            esc(&row.key),
            esc(&row.unit)
        );
        for i in 0..row.cells.len() {
            h.push_str(&cell_html(c, i, row));
        }
        h.push_str("</tr>");
    }
    let _ = write!(
        h,
        "<tr><th>geometric mean</th><td>%</td>{}</tr></table>",
        g.per_run
            .iter()
            .map(|p| format!(
                "<td class=\"num\"><b>{}</b></td>",
                p.map(pct).unwrap_or_else(|| "n/a".into())
            ))
            .collect::<String>()
    );
    if !g.left_out.is_empty() {
        let why: Vec<String> = g.left_out.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = write!(
            h,
            "<p class=\"note\">Left out of the geometric mean: {}.</p>",
            esc(&why.join(", "))
        );
    }
}

/// The "Published figures" section (`--published`): each published figure
/// matching a result, with its source, or that none matches.
fn published_table(h: &mut String, c: &Comparison) {
    h.push_str("<h2>Published figures (not measured here)</h2>");
    let rows: Vec<&Row> = c.rows.iter().filter(|r| !r.published.is_empty()).collect();
    if rows.is_empty() {
        h.push_str("<p class=\"na\">No published figure matches these results.</p>");
        return;
    }
    h.push_str("<table><tr><th>result</th><th>machine (published)</th><th>published</th><th>vs baseline</th><th>source</th></tr>");
    for row in rows {
        for p in &row.published {
            let _ = write!(
                h,
                "<tr class=\"pub\"><td>{}</td><td>{}</td><td class=\"num\">{} {}</td><td class=\"num\">{}</td><td>{}{}</td></tr>",
                esc(&row.label),
                esc(&p.machine),
                esc(&p.text),
                esc(&row.unit),
                p.relative_pct.map(pct).unwrap_or_default(),
                esc(&p.source),
                p.note
                    .as_deref()
                    .map(|n| format!("<div class=\"note\">{}</div>", esc(n)))
                    .unwrap_or_default()
            );
        }
    }
    h.push_str("</table><p class=\"note\">Published figures are copied from the sources named; cpuscope did not measure them.</p>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::memory::{bandwidth, latency, loaded_latency};
    use crate::results::schema::ResultRecord;

    #[test]
    fn curves_from_data() {
        // The memory experiments' records, by the registry's declaration.
        let lat = ResultRecord::of(latency::CURVE, "ns", false).with_data(serde_json::json!({
            "points": [{"bytes": 4096, "ns": 1.1, "cv": 0.01}, {"bytes": 1048576, "ns": 9.5, "cv": 0.02}]
        }));
        let c = curves_of(&lat);
        assert_eq!(c[0].points, vec![(4096.0, 1.1), (1048576.0, 9.5)]);
        assert_eq!(
            (c[0].x_unit.as_str(), c[0].y_unit.as_str()),
            ("bytes", "ns")
        );
        let loaded =
            ResultRecord::of(loaded_latency::CURVE, "ratio", false).with_data(serde_json::json!({
                "points": [{"streams": 0, "latency_ns": 90.0, "bandwidth_gbs": 1.0},
                           {"streams": 1, "latency_ns": 120.0, "bandwidth_gbs": 9.0}]
            }));
        let c = curves_of(&loaded);
        assert_eq!(c[0].points, vec![(1.0, 90.0), (9.0, 120.0)]);
        assert_eq!((c[0].x_unit.as_str(), c[0].y_unit.as_str()), ("GB/s", "ns"));
        let sat = ResultRecord::of(bandwidth::SATURATION_THREADS, "threads", false)
            .with_data(serde_json::json!({"curve": [[1, 10.0], [2, 18.0], [4, 19.0]]}));
        assert_eq!(curves_of(&sat)[0].points.len(), 3);
        // An experiment that declares no curves has none, whatever its data.
        let none = ResultRecord::new("x", "y", "ns", false).with_data(serde_json::json!({"a": 1}));
        assert!(curves_of(&none).is_empty());
        let probe = ResultRecord::new("probe", "delay", "ns", false)
            .with_data(serde_json::json!({"points": [[4096, 1.2], [8192, 1.3]]}));
        assert!(curves_of(&probe).is_empty());
    }
}

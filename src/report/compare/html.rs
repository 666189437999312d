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
use crate::view::html::{page, FIGURE_CSS, TABLE_CSS};
use crate::view::Curve;
use std::fmt::Write as _;

/// The comparison page's own rules, after the shell's, the tables' and
/// the figures' (`view::html::page`).
const CSS: &str = r#"tr.diff td{background:#fff6e0}.noisy{color:#b35900;font-weight:bold}.na{color:#888;font-style:italic}
.note{color:#555;font-size:.85em}.pub{color:#555;font-style:italic}.meta{color:#555}
svg.chart{display:block;margin:.6em 0 1.2em}svg text{font-size:11px;fill:#333}svg .axis{stroke:#999;stroke-width:1}
svg .grid{stroke:#e4e4e4;stroke-width:1}svg .ref{stroke:#444;stroke-dasharray:4 3}
"#;

/// Colours of runs A, B, C... (published figures are grey).
pub const PALETTE: &[&str] = &[
    "#4a7ab5", "#d08a3c", "#5a9e5a", "#b5524a", "#8a6bb5", "#3f9f9f", "#a58a3a", "#c0609a",
];
const PUB_COLOR: &str = "#9a9a9a";

/// One line of a line chart: (name, colour, points).
pub type Series<'a> = (String, &'a str, Vec<(f64, f64)>);
/// One bar: (series name, colour, value, text shown beside it).
pub type Bar<'a> = (String, &'a str, f64, String);
/// A labelled group of bars.
pub type BarGroup<'a> = (String, Vec<Bar<'a>>);

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

fn pct(p: f64) -> String {
    format!("{p:.1}%")
}

fn axis_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(raw);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(t);
        t += step;
    }
    out
}

fn x_tick_text(v: f64, unit: &str) -> String {
    if unit == "bytes" || unit == "B" {
        let b = v;
        for (s, u) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
            if b >= s as f64 {
                return format!("{}{u}", fmt_short(b / s as f64));
            }
        }
        return format!("{}B", fmt_short(b));
    }
    fmt_short(v)
}

fn fmt_short(v: f64) -> String {
    if v == v.round() && v.abs() < 1e6 {
        format!("{v:.0}")
    } else {
        fmt_num(v)
    }
}

/// The plot area of a line chart and its scales: the data's range (y from 0
/// or 5% below a negative minimum, to 5% above the maximum), log2 or linear x.
struct LinePlot {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    log: bool,
    /// Size of the whole chart.
    w: f64,
    h: f64,
    /// Left and top margins, and the plot area's width and height.
    l: f64,
    t: f64,
    pw: f64,
    ph: f64,
}

impl LinePlot {
    /// The plot of `all` points (not empty); `log_x` forces or forbids a log
    /// x axis (by default log when positive x span 64 times or more).
    fn new(all: &[(f64, f64)], log_x: Option<bool>) -> LinePlot {
        let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
        for &(x, y) in all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        let log = log_x.unwrap_or(x0 > 0.0 && x1 / x0 >= 64.0) && x0 > 0.0;
        let y0 = if y0 >= 0.0 { 0.0 } else { y0 * 1.05 };
        let y1 = if y1 > y0 { y1 * 1.05 } else { y0 + 1.0 };
        let (w, h) = (760.0, 320.0);
        let (l, r, t, b) = (64.0, 170.0, 28.0, 42.0);
        LinePlot {
            x0,
            x1,
            y0,
            y1,
            log,
            w,
            h,
            l,
            t,
            pw: w - l - r,
            ph: h - t - b,
        }
    }

    /// The horizontal position of `x`.
    fn fx(&self, x: f64) -> f64 {
        let (a, bb, v) = if self.log {
            (self.x0.log2(), self.x1.log2(), x.log2())
        } else {
            (self.x0, self.x1, x)
        };
        if bb > a {
            self.l + (v - a) / (bb - a) * self.pw
        } else {
            self.l + self.pw / 2.0
        }
    }

    /// The vertical position of `y`.
    fn fy(&self, y: f64) -> f64 {
        self.t + self.ph - (y - self.y0) / (self.y1 - self.y0) * self.ph
    }

    /// The x ticks: powers of two (at most about 10) on a log axis.
    fn x_ticks(&self) -> Vec<f64> {
        let (x0, x1) = (self.x0, self.x1);
        if !self.log {
            return axis_ticks(x0, x1, 6);
        }
        let mut v = Vec::new();
        let mut e = x0.log2().floor();
        while e <= x1.log2().ceil() {
            let x = e.exp2();
            if x >= x0 * 0.999 && x <= x1 * 1.001 {
                v.push(x);
            }
            e += 1.0;
        }
        if v.len() > 10 {
            let k = v.len().div_ceil(10);
            v = v.into_iter().step_by(k).collect();
        }
        v
    }

    /// The grid lines and their tick texts, y then x.
    fn write_grid(&self, s: &mut String, x_unit: &str) {
        let (l, t, pw, ph) = (self.l, self.t, self.pw, self.ph);
        for ty in axis_ticks(self.y0, self.y1, 5) {
            let y = self.fy(ty);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{l}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                l + pw,
                l - 4.0,
                y + 4.0,
                fmt_short(ty)
            );
        }
        for tx in self.x_ticks() {
            let x = self.fx(tx);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{t}" y2="{:.1}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                t + ph,
                t + ph + 14.0,
                esc(&x_tick_text(tx, x_unit))
            );
        }
    }

    /// The two axes and their labels (the x label says a log scale).
    fn write_axes(&self, s: &mut String, x_label: &str, x_unit: &str, y_unit: &str) {
        let (l, t, pw, ph) = (self.l, self.t, self.pw, self.ph);
        let _ = write!(
            s,
            r#"<line class="axis" x1="{l}" x2="{l}" y1="{t}" y2="{:.1}"/><line class="axis" x1="{l}" x2="{:.1}" y1="{:.1}" y2="{:.1}"/>"#,
            t + ph,
            l + pw,
            t + ph,
            t + ph
        );
        let xl = if x_unit.is_empty() {
            x_label.to_string()
        } else {
            format!(
                "{x_label} ({x_unit}{})",
                if self.log { ", log scale" } else { "" }
            )
        };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="12" y="{:.1}" transform="rotate(-90 12 {:.1})" text-anchor="middle">{}</text>"#,
            l + pw / 2.0,
            self.h - 6.0,
            esc(&xl),
            t + ph / 2.0,
            t + ph / 2.0,
            esc(y_unit)
        );
    }

    /// Series `i`: its line (points sorted by x), a marker with a tooltip
    /// per point, and its legend entry.
    fn write_series(&self, s: &mut String, i: usize, series: &Series, units: (&str, &str)) {
        let (name, col, pts) = series;
        let (x_unit, y_unit) = units;
        let mut pts = pts.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", self.fx(x), self.fy(y)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{col}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for &(x, y) in &pts {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{col}" data-v="{y}"><title>{}: {} → {} {}</title></circle>"#,
                self.fx(x),
                self.fy(y),
                esc(name),
                esc(&x_tick_text(x, x_unit)),
                fmt_num(y),
                esc(y_unit)
            );
        }
        let ly = self.t + 6.0 + 16.0 * i as f64;
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{ly:.1}" width="12" height="10" fill="{col}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            self.l + self.pw + 12.0,
            self.l + self.pw + 28.0,
            ly + 9.0,
            esc(name)
        );
    }
}

/// Overlaid line chart: (series name, colour, points).
pub fn svg_lines(
    title: &str,
    x_label: &str,
    x_unit: &str,
    y_unit: &str,
    log_x: Option<bool>,
    series: &[Series],
) -> String {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.2.iter().copied()).collect();
    if all.is_empty() {
        return String::new();
    }
    let plot = LinePlot::new(&all, log_x);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" role="img" aria-label="{tt}"><text x="0" y="14" font-weight="bold">{tt}</text>"#,
        w = plot.w,
        h = plot.h,
        tt = esc(title)
    );
    plot.write_grid(&mut s, x_unit);
    plot.write_axes(&mut s, x_label, x_unit, y_unit);
    for (i, one) in series.iter().enumerate() {
        plot.write_series(&mut s, i, one, (x_unit, y_unit));
    }
    s.push_str("</svg>");
    s
}

/// Horizontal grouped bars: groups of (label, [(series name, colour, value, shown text)]),
/// with an optional dashed reference line (100% for relative charts).
pub fn svg_grouped_bars(title: &str, groups: &[BarGroup], reference: Option<f64>) -> String {
    let max = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|b| b.2))
        .chain(reference)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    if groups.iter().all(|g| g.1.is_empty()) || max <= 0.0 {
        return String::new();
    }
    let left = 300.0;
    let width = 420.0;
    let bar_h = 13.0;
    let gap = 8.0;
    let mut y = 26.0;
    let mut body = String::new();
    for (label, bars) in groups {
        let gh = bar_h * bars.len() as f64;
        let _ = write!(
            body,
            r#"<text x="0" y="{:.1}">{}</text>"#,
            y + gh / 2.0 + 4.0,
            esc(&shorten(label, 48))
        );
        for (name, col, v, shown) in bars {
            let bw = if v.is_finite() && *v > 0.0 {
                (v / max * width).max(1.0)
            } else {
                0.0
            };
            let _ = write!(
                body,
                r#"<rect class="bar" x="{left}" y="{y:.1}" width="{bw:.1}" height="{:.1}" fill="{col}" data-v="{v}"><title>{}: {}</title></rect><text x="{:.1}" y="{:.1}">{} {}</text>"#,
                bar_h - 2.0,
                esc(name),
                esc(shown),
                left + bw + 4.0,
                y + bar_h - 3.0,
                esc(name),
                esc(shown)
            );
            y += bar_h;
        }
        y += gap;
    }
    let h = y + 6.0;
    // Room for the longest text beside a bar (about 6.5 px a character at 11 px).
    let text_w = groups
        .iter()
        .flat_map(|g| g.1.iter())
        .map(|b| (b.0.chars().count() + b.3.chars().count() + 1) as f64 * 6.5)
        .fold(120.0f64, f64::max);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{:.0}" height="{h:.0}" role="img" aria-label="{t}"><text x="0" y="14" font-weight="bold">{t}</text>"#,
        left + width + text_w + 12.0,
        t = esc(title)
    );
    if let Some(r) = reference {
        let x = left + r / max * width;
        let _ = write!(
            s,
            r#"<line class="ref" x1="{x:.1}" x2="{x:.1}" y1="20" y2="{:.1}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            h - 10.0,
            h - 1.0,
            pct(r)
        );
    }
    s.push_str(&body);
    s.push_str("</svg>");
    s
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}

fn series_name(c: &Comparison, i: usize) -> String {
    let h = &c.runs[i];
    format!("{} {}", h.label, h.host)
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
                        Some((
                            c.runs[i].label.clone(),
                            color(i),
                            p,
                            format!("{} ({v} {})", pct(p), r.unit),
                        ))
                    })
                    .collect();
                (r.label.clone(), bars)
            })
            .collect();
        out.push_str(&svg_grouped_bars(
            &format!(
                "{e}: relative to {} (above 100% = better)",
                c.runs[c.baseline].label
            ),
            &groups,
            Some(100.0),
        ));
    }
    out
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
                series.push((name, color(i), cv.points.clone()));
                meta.get_or_insert(cv);
            }
        }
        if let Some(m) = meta {
            out.push_str(&svg_lines(
                &row.label, &m.x_label, &m.x_unit, &m.y_unit, m.log_x, &series,
            ));
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
                Some((
                    format!("{} (measured)", series_name(c, i)),
                    color(i),
                    v,
                    format!("{} {}", fmt_num(v), row.unit),
                ))
            })
            .collect();
        for p in &row.published {
            if let Some(v) = p.value {
                bars.push((
                    format!("published: {}", p.machine),
                    PUB_COLOR,
                    v,
                    format!("{} {}", p.text, row.unit),
                ));
            }
        }
        if bars.is_empty() {
            continue;
        }
        out.push_str(&svg_grouped_bars(
            &format!(
                "{} [{}]: these runs and published figures",
                row.label, row.unit
            ),
            &[(row.label.clone(), bars)],
            None,
        ));
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
        &[TABLE_CSS, FIGURE_CSS, CSS],
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
            .filter_map(|(i, p)| Some((c.runs[i].label.clone(), color(i), (*p)?, pct((*p)?))))
            .collect();
        h.push_str(&svg_grouped_bars(
            &format!(
                "Geometric mean over the {} of {} results measured on every run",
                g.results_used, g.results_total
            ),
            &[("all common results".to_string(), bars)],
            Some(100.0),
        ));
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
    fn ticks() {
        assert_eq!(
            axis_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(x_tick_text(32768.0, "bytes"), "32KiB");
        assert_eq!(x_tick_text(3.0 * 1048576.0, "bytes"), "3MiB");
    }

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

    #[test]
    fn empty_charts_render_nothing() {
        assert!(svg_lines("t", "x", "", "y", None, &[]).is_empty());
        assert!(svg_grouped_bars("t", &[], Some(100.0)).is_empty());
    }
}

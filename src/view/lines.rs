//! The line-chart engine of every page (docs/views.md, "Printers"): SVG
//! lines on linear or log axes, a point with a hover title at each value,
//! a legend, and labelled vertical markers. The HTML printer draws a
//! [`crate::view::ChartKind::Lines`] with it; the memory experiments' charts
//! call it directly until their sections are typed.

use crate::base::html::esc;
use std::fmt::Write as _;

const COLORS: [&str; 8] = [
    "#4a7ab5", "#d08a3c", "#4f9a5a", "#b5494a", "#7d5ab5", "#3c9fb0", "#a0a03c", "#666666",
];

/// A line series: name and (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// An SVG line chart. `logx`/`logy` use log2/log10 axes; `vlines` are
/// labelled vertical markers at x values; `xfmt` formats x tick labels.
#[allow(clippy::too_many_arguments)]
pub fn svg_lines(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
    logx: bool,
    logy: bool,
    vlines: &[(f64, String)],
    xfmt: &dyn Fn(f64) -> String,
) -> String {
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .filter(|p| {
            p.0.is_finite() && p.1.is_finite() && (!logx || p.0 > 0.0) && (!logy || p.1 > 0.0)
        })
        .collect();
    if pts.is_empty() {
        return String::new();
    }
    let (w, h, l, r, t, b) = (720.0, 300.0, 60.0, 170.0, 24.0, 40.0);
    let pw = w - l - r;
    let ph = h - t - b;
    let f = Frame::new(&pts, (logx, logy), (l, t, pw, ph));
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{t}" class="chart"><text x="0" y="14" font-weight="bold">{t}</text>"#,
        t = esc(title)
    );
    let _ = write!(
        s,
        r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="#999"/><text x="{xl}" y="{yb}">{xlab}</text><text x="4" y="{ym}" transform="rotate(-90 12 {ym})">{ylab}</text>"##,
        xl = l + pw / 2.0 - 30.0,
        yb = h - 4.0,
        ym = t + ph / 2.0 + 30.0,
        xlab = esc(xlabel),
        ylab = esc(ylabel)
    );
    f.ticks(&mut s, xfmt);
    f.vlines(&mut s, vlines);
    for (i, (name, p)) in series.iter().enumerate() {
        f.series(
            &mut s,
            i,
            (name.as_str(), p.as_slice()),
            (xlabel, ylabel),
            xfmt,
        );
    }
    s.push_str("</svg>");
    s
}

/// The plot area of a line chart: its axes (log or linear, their range in
/// axis units) and where it sits (left, top, width, height in pixels).
struct Frame {
    logx: bool,
    logy: bool,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    l: f64,
    t: f64,
    pw: f64,
    ph: f64,
}

impl Frame {
    /// The frame that holds `pts` (linear y axes start at 0).
    fn new(
        pts: &[(f64, f64)],
        (logx, logy): (bool, bool),
        (l, t, pw, ph): (f64, f64, f64, f64),
    ) -> Frame {
        let mut f = Frame {
            logx,
            logy,
            x0: 0.0,
            x1: 0.0,
            y0: 0.0,
            y1: 0.0,
            l,
            t,
            pw,
            ph,
        };
        let (mut x0, mut x1) = pts.iter().fold((f64::MAX, f64::MIN), |a, p| {
            (a.0.min(f.tx(p.0)), a.1.max(f.tx(p.0)))
        });
        let (mut y0, mut y1) = pts.iter().fold((f64::MAX, f64::MIN), |a, p| {
            (a.0.min(f.ty(p.1)), a.1.max(f.ty(p.1)))
        });
        if !logy {
            y0 = y0.min(0.0);
        }
        if x1 - x0 < 1e-9 {
            x0 -= 1.0;
            x1 += 1.0;
        }
        if y1 - y0 < 1e-9 {
            y1 += 1.0;
        }
        (f.x0, f.x1, f.y0, f.y1) = (x0, x1, y0, y1);
        f
    }

    /// x in axis units.
    fn tx(&self, x: f64) -> f64 {
        if self.logx {
            x.log2()
        } else {
            x
        }
    }

    /// y in axis units.
    fn ty(&self, y: f64) -> f64 {
        if self.logy {
            y.log10()
        } else {
            y
        }
    }

    /// x in pixels.
    fn sx(&self, x: f64) -> f64 {
        self.l + (self.tx(x) - self.x0) / (self.x1 - self.x0) * self.pw
    }

    /// y in pixels.
    fn sy(&self, y: f64) -> f64 {
        self.t + self.ph - (self.ty(y) - self.y0) / (self.y1 - self.y0) * self.ph
    }

    /// Whether a point can be drawn (finite, positive on a log axis).
    fn shows(&self, q: &(f64, f64)) -> bool {
        q.0.is_finite() && q.1.is_finite() && (!self.logx || q.0 > 0.0) && (!self.logy || q.1 > 0.0)
    }

    /// Ticks: 6 on each axis.
    fn ticks(&self, s: &mut String, xfmt: &dyn Fn(f64) -> String) {
        let (x0, x1, y0, y1) = (self.x0, self.x1, self.y0, self.y1);
        let (l, t, pw, ph) = (self.l, self.t, self.pw, self.ph);
        for k in 0..=5 {
            let fx = x0 + (x1 - x0) * k as f64 / 5.0;
            let xv = if self.logx { 2f64.powf(fx) } else { fx };
            let px = l + pw * k as f64 / 5.0;
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px,
                t + ph + 14.0,
                esc(&xfmt(xv))
            );
            let fy = y0 + (y1 - y0) * k as f64 / 5.0;
            let yv = if self.logy { 10f64.powf(fy) } else { fy };
            let py = t + ph - ph * k as f64 / 5.0;
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                l - 4.0,
                py + 4.0,
                crate::base::fmt::fmt_num(yv)
            );
        }
    }

    /// The labelled vertical markers that fall inside the frame.
    fn vlines(&self, s: &mut String, vlines: &[(f64, String)]) {
        let (l, t, pw, ph) = (self.l, self.t, self.pw, self.ph);
        for (x, label) in vlines {
            if *x <= 0.0 && self.logx {
                continue;
            }
            let px = self.sx(*x);
            if px < l || px > l + pw {
                continue;
            }
            let _ = write!(
                s,
                r##"<line x1="{px:.1}" y1="{t}" x2="{px:.1}" y2="{yb}" stroke="#aaa" stroke-dasharray="4 3"/><text x="{tx:.1}" y="{ty}" fill="#777">{lab}</text>"##,
                yb = t + ph,
                tx = px + 2.0,
                ty = t + 10.0,
                lab = esc(label)
            );
        }
    }

    /// Series `i`: its line, a point with a hover title at each value, and
    /// its legend entry.
    fn series(
        &self,
        s: &mut String,
        i: usize,
        (name, p): (&str, &[(f64, f64)]),
        (xlabel, ylabel): (&str, &str),
        xfmt: &dyn Fn(f64) -> String,
    ) {
        let (l, t, pw) = (self.l, self.t, self.pw);
        let c = COLORS[i % COLORS.len()];
        let shown: Vec<(f64, f64)> = p.iter().copied().filter(|q| self.shows(q)).collect();
        if shown.is_empty() {
            return;
        }
        let path: Vec<String> = shown
            .iter()
            .map(|q| format!("{:.1},{:.1}", self.sx(q.0), self.sy(q.1)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1.8" points="{}"/>"#,
            path.join(" ")
        );
        // Each point carries its values as a hover title.
        for q in &shown {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.6" fill="{c}"><title>{}: {} {} → {} {}</title></circle>"#,
                self.sx(q.0),
                self.sy(q.1),
                esc(name),
                esc(&xfmt(q.0)),
                esc(xlabel),
                crate::base::fmt::fmt_num(q.1),
                esc(ylabel)
            );
        }
        let ly = t + 12.0 + 16.0 * i as f64;
        let _ = write!(
            s,
            r#"<rect x="{lx}" y="{ry}" width="10" height="10" fill="{c}"/><text x="{tx}" y="{ly}">{n}</text>"#,
            lx = l + pw + 10.0,
            ry = ly - 9.0,
            tx = l + pw + 24.0,
            n = esc(name)
        );
    }
}

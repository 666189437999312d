//! The line-chart engine of every page (docs/views.md, "Printers"): the
//! report's curves and compare's overlaid runs are drawn here, from a
//! [`crate::view::ChartKind::Lines`]. SVG lines on linear or log axes with
//! grid lines at round ticks (powers of two on a log x axis, decades on a
//! log y axis), a point with its value (`data-v`) and a hover title at each
//! value, a legend, labelled vertical markers and a dashed reference line.
//! Points are drawn in the order given (a loaded-latency curve may turn
//! back on its x axis).

use super::model::{Axis, Hue, Reference, Scale, Series, Ticks, XMark};
use crate::base::fmt::{fmt_bytes_axis, fmt_num};
use crate::base::html::esc;
use std::fmt::Write as _;

/// The colours of series 0, 1, 2… (a comparison's runs A, B, C…).
pub const PALETTE: [&str; 8] = [
    "#4a7ab5", "#d08a3c", "#5a9e5a", "#b5524a", "#8a6bb5", "#3f9f9f", "#a58a3a", "#c0609a",
];
/// The colour of a published figure.
pub const PUBLISHED: &str = "#9a9a9a";

/// The colour of `hue`, or of the `i`th series when none is set.
pub fn color(hue: Option<Hue>, i: usize) -> &'static str {
    match hue {
        Some(Hue::Published) => PUBLISHED,
        Some(Hue::Series(k)) => PALETTE[k % PALETTE.len()],
        None => PALETTE[i % PALETTE.len()],
    }
}

/// What a line chart draws.
pub struct LineChart<'a> {
    pub title: &'a str,
    pub x: &'a Axis,
    pub y: &'a Axis,
    pub series: &'a [Series],
    pub marks: &'a [XMark],
    pub reference: Option<&'a Reference>,
}

/// Whether an axis of `scale` over `values` is drawn on a log scale (Auto:
/// when the positive values span more than a factor of 20).
pub fn log_scale(scale: Scale, values: impl Iterator<Item = f64>) -> bool {
    match scale {
        Scale::Linear => false,
        Scale::Log => true,
        Scale::Auto => {
            let (lo, hi) = values
                .filter(|v| v.is_finite() && *v > 0.0)
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            hi > 0.0 && hi / lo > 20.0
        }
    }
}

/// A tick label of an axis written as `ticks` says.
pub fn tick(ticks: Ticks, v: f64) -> String {
    match ticks {
        Ticks::Figure => round_or_figure(v),
        Ticks::Bytes => fmt_bytes_axis(v),
        Ticks::Count if (v - v.round()).abs() < 0.05 => format!("{v:.0}"),
        Ticks::Count | Ticks::Tenths => format!("{v:.1}"),
    }
}

/// A whole number without decimals, any other as a figure.
fn round_or_figure(v: f64) -> String {
    if v == v.round() && v.abs() < 1e6 {
        format!("{v:.0}")
    } else {
        fmt_num(v)
    }
}

/// An axis's label: its name, its unit and whether it is a log scale.
fn axis_label(a: &Axis, log: bool) -> String {
    let scale = if log { "log scale" } else { "" };
    let inside: Vec<&str> = [a.unit.as_str(), scale]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    match (a.label.is_empty(), inside.is_empty()) {
        (_, true) => a.label.clone(),
        (true, false) => inside.join(", "),
        (false, false) => format!("{} ({})", a.label, inside.join(", ")),
    }
}

/// The chart as inline SVG, or nothing when no point can be drawn.
pub fn svg_lines(c: &LineChart) -> String {
    let xs = || c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = || c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let logs = (log_scale(c.x.scale, xs()), log_scale(c.y.scale, ys()));
    let Some(f) = Frame::new(c, logs) else {
        return String::new();
    };
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" role="img" aria-label="{t}"><text x="0" y="14" font-weight="bold">{t}</text>"#,
        w = Frame::W,
        h = Frame::H,
        t = esc(c.title)
    );
    f.grid(&mut s, c.x.ticks, c.y.ticks);
    f.axes(&mut s, &axis_label(c.x, f.logx), &axis_label(c.y, f.logy));
    f.marks(&mut s, c.marks);
    if let Some(r) = c.reference {
        f.reference(&mut s, r);
    }
    let mut legend = 0;
    for (i, one) in c.series.iter().enumerate() {
        if f.series(&mut s, (i, legend), one, c) {
            legend += usize::from(one.name.is_some());
        }
    }
    s.push_str("</svg>");
    s
}

/// The plot area: its axes (log or linear, their range in axis units) and
/// where it sits in the chart.
struct Frame {
    logx: bool,
    logy: bool,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    const W: f64 = 760.0;
    const H: f64 = 320.0;
    /// Left and top margins; the plot's width and height.
    const L: f64 = 64.0;
    const T: f64 = 28.0;
    const PW: f64 = Self::W - Self::L - 170.0;
    const PH: f64 = Self::H - Self::T - 42.0;

    /// The frame that holds every drawable point and the reference: x from
    /// the least to the greatest; a linear y from 0 (or 5% below a
    /// negative least) to 5% above the greatest; a log y over whole decades.
    fn new(c: &LineChart, (logx, logy): (bool, bool)) -> Option<Frame> {
        let mut f = Frame {
            logx,
            logy,
            x0: f64::INFINITY,
            x1: f64::NEG_INFINITY,
            y0: f64::INFINITY,
            y1: f64::NEG_INFINITY,
        };
        let pts: Vec<(f64, f64)> = c
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|p| f.shows(p))
            .collect();
        let ys: Vec<f64> = c
            .reference
            .iter()
            .map(|r| r.value)
            .filter(|y| f.shows_y(*y))
            .collect();
        for (x, y) in pts {
            (f.x0, f.x1) = (f.x0.min(f.tx(x)), f.x1.max(f.tx(x)));
            (f.y0, f.y1) = (f.y0.min(f.ty(y)), f.y1.max(f.ty(y)));
        }
        if !f.x0.is_finite() {
            return None;
        }
        for y in ys {
            (f.y0, f.y1) = (f.y0.min(f.ty(y)), f.y1.max(f.ty(y)));
        }
        if f.x1 - f.x0 < 1e-9 {
            (f.x0, f.x1) = (f.x0 - 1.0, f.x1 + 1.0);
        }
        if logy {
            (f.y0, f.y1) = (f.y0.floor(), f.y1.ceil().max(f.y0.floor() + 1.0));
        } else {
            f.y0 = if f.y0 >= 0.0 { 0.0 } else { f.y0 * 1.05 };
            f.y1 = if f.y1 > f.y0 {
                f.y1 + f.y1.abs() * 0.05
            } else {
                f.y0 + 1.0
            };
        }
        Some(f)
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
        Self::L + (self.tx(x) - self.x0) / (self.x1 - self.x0) * Self::PW
    }

    /// y in pixels.
    fn sy(&self, y: f64) -> f64 {
        Self::T + Self::PH - (self.ty(y) - self.y0) / (self.y1 - self.y0) * Self::PH
    }

    /// Whether a point can be drawn (finite, positive on a log axis).
    fn shows(&self, q: &(f64, f64)) -> bool {
        self.shows_x(q.0) && self.shows_y(q.1)
    }

    fn shows_x(&self, x: f64) -> bool {
        x.is_finite() && (!self.logx || x > 0.0)
    }

    fn shows_y(&self, y: f64) -> bool {
        y.is_finite() && (!self.logy || y > 0.0)
    }

    /// The x ticks: powers of two on a log axis (at most about 10), else
    /// round steps (whole ones on an axis of counts).
    fn x_ticks(&self, ticks: Ticks) -> Vec<f64> {
        if !self.logx {
            let least = if ticks == Ticks::Count { 1.0 } else { 0.0 };
            return round_ticks(self.x0, self.x1, 6, least);
        }
        let v: Vec<f64> = (self.x0.ceil() as i64..=self.x1.floor() as i64)
            .map(|e| (e as f64).exp2())
            .collect();
        let k = v.len().div_ceil(10).max(1);
        v.into_iter().step_by(k).collect()
    }

    /// The y ticks: each decade (with 2 and 5 between when there are two
    /// or fewer) on a log axis, else round steps.
    fn y_ticks(&self) -> Vec<f64> {
        if !self.logy {
            return round_ticks(self.y0, self.y1, 5, 0.0);
        }
        let decades = (self.y1 - self.y0).round() as i64;
        let steps: &[f64] = if decades <= 2 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        (self.y0 as i64..=self.y1 as i64)
            .flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e as i32)))
            .filter(|v| v.log10() <= self.y1 + 1e-9)
            .collect()
    }

    /// The grid lines and their tick texts, y then x.
    fn grid(&self, s: &mut String, xt: Ticks, yt: Ticks) {
        let (l, t, pw, ph) = (Self::L, Self::T, Self::PW, Self::PH);
        for v in self.y_ticks() {
            let y = self.sy(v);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{l}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                l + pw,
                l - 4.0,
                y + 4.0,
                esc(&tick(yt, v))
            );
        }
        for v in self.x_ticks(xt) {
            let x = self.sx(v);
            let _ = write!(
                s,
                r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{t}" y2="{:.1}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                t + ph,
                t + ph + 14.0,
                esc(&tick(xt, v))
            );
        }
    }

    /// The two axes and their labels.
    fn axes(&self, s: &mut String, xl: &str, yl: &str) {
        let (l, t, pw, ph) = (Self::L, Self::T, Self::PW, Self::PH);
        let (yb, ym) = (t + ph, t + ph / 2.0);
        let _ = write!(
            s,
            r#"<line class="axis" x1="{l}" x2="{l}" y1="{t}" y2="{yb:.1}"/><line class="axis" x1="{l}" x2="{:.1}" y1="{yb:.1}" y2="{yb:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="12" y="{ym:.1}" transform="rotate(-90 12 {ym:.1})" text-anchor="middle">{}</text>"#,
            l + pw,
            l + pw / 2.0,
            Self::H - 6.0,
            esc(xl),
            esc(yl)
        );
    }

    /// The labelled vertical markers that fall inside the frame, left to
    /// right, each label on the first of four rows where it clears the one
    /// before it (on the row ending first when none is clear).
    fn marks(&self, s: &mut String, marks: &[XMark]) {
        let (t, ph) = (Self::T, Self::PH);
        let mut inside: Vec<(f64, &XMark)> = marks
            .iter()
            .filter(|m| self.shows_x(m.x))
            .map(|m| (self.sx(m.x), m))
            .filter(|(px, _)| (Self::L - 0.5..=Self::L + Self::PW + 0.5).contains(px))
            .collect();
        inside.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut ends = [f64::NEG_INFINITY; 4];
        for (px, m) in inside {
            let row = ends.iter().position(|e| *e < px).unwrap_or_else(|| {
                (0..ends.len())
                    .min_by(|a, b| ends[*a].total_cmp(&ends[*b]))
                    .unwrap_or(0)
            });
            ends[row] = px + 6.0 + 6.0 * m.label.chars().count() as f64;
            let _ = write!(
                s,
                r##"<line x1="{px:.1}" y1="{t}" x2="{px:.1}" y2="{:.1}" stroke="#aaa" stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" fill="#777">{}</text>"##,
                t + ph,
                px + 2.0,
                t + 10.0 + 11.0 * row as f64,
                esc(&m.label)
            );
        }
    }

    /// The dashed reference line and its label, at the right end.
    fn reference(&self, s: &mut String, r: &Reference) {
        if !self.shows_y(r.value) {
            return;
        }
        let y = self.sy(r.value);
        let _ = write!(
            s,
            r#"<line class="ref" x1="{}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            Self::L,
            Self::L + Self::PW,
            Self::L + Self::PW - 2.0,
            y - 3.0,
            esc(&r.label)
        );
    }

    /// Series `i` (legend row `row`): its line, a point with its value and
    /// a hover title at each value, and its legend entry when it has a name.
    /// False when none of its points can be drawn.
    fn series(
        &self,
        s: &mut String,
        (i, row): (usize, usize),
        one: &Series,
        c: &LineChart,
    ) -> bool {
        let col = color(one.hue, i);
        let shown: Vec<(f64, f64)> = one
            .points
            .iter()
            .copied()
            .filter(|q| self.shows(q))
            .collect();
        if shown.is_empty() {
            return false;
        }
        let path: Vec<String> = shown
            .iter()
            .map(|q| format!("{:.1},{:.1}", self.sx(q.0), self.sy(q.1)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{col}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        let name = one.name.as_deref().unwrap_or(c.title);
        for &(x, y) in &shown {
            let xt = join_unit(&tick(c.x.ticks, x), c.x.ticks, &c.x.unit);
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{col}" data-v="{y}"><title>{}: {} → {}</title></circle>"#,
                self.sx(x),
                self.sy(y),
                esc(name),
                esc(&xt),
                esc(&join_unit(&fmt_num(y), Ticks::Figure, &c.y.unit))
            );
        }
        if let Some(n) = &one.name {
            let ly = Self::T + 6.0 + 16.0 * row as f64;
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{ly:.1}" width="12" height="10" fill="{col}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                Self::L + Self::PW + 12.0,
                Self::L + Self::PW + 28.0,
                ly + 9.0,
                esc(n)
            );
        }
        true
    }
}

/// A value and its unit, for a hover title (a size in bytes says so by its
/// suffix already).
fn join_unit(v: &str, ticks: Ticks, unit: &str) -> String {
    if unit.is_empty() || ticks == Ticks::Bytes {
        v.to_string()
    } else {
        format!("{v} {unit}")
    }
}

/// Ticks at a round step (1, 2, 2.5 or 5 times a power of ten, `least`
/// at least) from `lo` to `hi`, about `n` of them.
fn round_ticks(lo: f64, hi: f64, n: usize, least: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(raw)
        .max(least);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart<'a>(x: &'a Axis, y: &'a Axis, series: &'a [Series]) -> LineChart<'a> {
        LineChart {
            title: "t",
            x,
            y,
            series,
            marks: &[],
            reference: None,
        }
    }

    #[test]
    fn ticks_are_written_as_their_axis_says() {
        assert_eq!(tick(Ticks::Count, 3.0), "3");
        assert_eq!(tick(Ticks::Count, 2.5), "2.5");
        assert_eq!(tick(Ticks::Tenths, 3.0), "3.0");
        assert_eq!(tick(Ticks::Figure, 200.0), "200");
        assert_eq!(tick(Ticks::Bytes, 65536.0), "64K");
    }

    #[test]
    fn round_ticks_fall_on_round_steps() {
        assert_eq!(
            round_ticks(0.0, 10.5, 5, 0.0),
            vec![0.0, 2.5, 5.0, 7.5, 10.0]
        );
        assert_eq!(round_ticks(3.0, 3.0, 5, 0.0), vec![3.0]);
        assert_eq!(round_ticks(1.0, 2.0, 6, 1.0), vec![1.0, 2.0]);
    }

    #[test]
    fn a_log_x_axis_ticks_at_powers_of_two_and_says_log_scale() {
        let x = Axis {
            ticks: Ticks::Bytes,
            ..Axis::new("working set", "bytes", Scale::Log)
        };
        let y = Axis::new("load-to-use", "ns", Scale::Log);
        let s = [Series::finite(Some("a"), [(4096.0, 1.0), (1048576.0, 90.0)]).unwrap()];
        let svg = svg_lines(&chart(&x, &y, &s));
        for t in [">4K<", ">64K<", ">1M<", ">10<", ">100<"] {
            assert!(svg.contains(t), "{t}: {svg}");
        }
        assert!(svg.contains("working set (bytes, log scale)"), "{svg}");
        assert!(svg.contains("load-to-use (ns, log scale)"), "{svg}");
        assert_eq!(svg.matches("data-v=").count(), 2);
    }

    #[test]
    fn points_keep_their_order_and_colours_follow_the_hue() {
        let x = Axis::new("GB/s", "", Scale::Linear);
        let y = Axis::new("ns", "", Scale::Linear);
        let mut back = Series::finite(Some("b"), [(1.0, 1.0), (3.0, 2.0), (2.0, 3.0)]).unwrap();
        back.hue = Some(Hue::Series(2));
        let svg = svg_lines(&chart(&x, &y, std::slice::from_ref(&back)));
        let pts = svg.split("points=\"").nth(1).unwrap();
        let xs: Vec<f64> = pts
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert!(xs[1] > xs[2], "drawn as given: {xs:?}");
        assert!(svg.contains(PALETTE[2]));
    }

    #[test]
    fn nothing_drawable_draws_nothing() {
        let x = Axis::new("x", "", Scale::Log);
        let y = Axis::new("y", "", Scale::Linear);
        let s = [Series::finite(None, [(0.0, 1.0), (-1.0, 2.0)]).unwrap()];
        assert!(svg_lines(&chart(&x, &y, &s)).is_empty());
        assert!(svg_lines(&chart(&x, &y, &[])).is_empty());
    }

    #[test]
    fn the_reference_line_is_drawn_with_its_label() {
        let x = Axis::new("x", "", Scale::Linear);
        let y = Axis::new("y", "", Scale::Linear);
        let s = [Series::finite(None, [(1.0, 1.0), (2.0, 2.0)]).unwrap()];
        let r = Reference {
            value: 4.0,
            label: "peak <4>".into(),
        };
        let svg = svg_lines(&LineChart {
            reference: Some(&r),
            ..chart(&x, &y, &s)
        });
        assert!(svg.contains("class=\"ref\"") && svg.contains("peak &lt;4&gt;"));
    }
}

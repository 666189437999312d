//! The bar-chart engine of every page (docs/views.md, "Printers"): a
//! [`crate::view::ChartKind::Bars`] as horizontal bars, grouped under their
//! labels (a group of one bar is a plain bar chart's row), on a linear
//! scale or a log one (figures spanning decades), each bar with its value
//! (`data-v`), a hover title and its text beside it, and an optional dashed
//! reference line (a comparison's 100%).

use super::lines::{color, log_scale};
use super::model::{Bar, BarGroup, Reference, Scale};
use crate::base::fmt::fmt_num;
use crate::base::html::esc;
use std::fmt::Write as _;

/// What a bar chart draws.
pub struct BarChart<'a> {
    pub title: &'a str,
    pub unit: &'a str,
    pub scale: Scale,
    pub groups: &'a [BarGroup],
    pub reference: Option<&'a Reference>,
}

/// Where a value falls on the bars' axis: a share of the plot's width.
enum Axis {
    Linear { max: f64 },
    Log { floor: f64, span: f64 },
}

impl Axis {
    /// The axis of every drawable value and the reference; none when no bar
    /// can be drawn (no finite value; none above 0 on a log scale).
    fn of(c: &BarChart) -> Option<Axis> {
        let values = || c.groups.iter().flat_map(|g| g.bars.iter().map(|b| b.value));
        if log_scale(c.scale, values()) {
            let pos = || values().filter(|v| v.is_finite() && *v > 0.0);
            let lo = pos().fold(f64::INFINITY, f64::min);
            let hi = pos().fold(0.0f64, f64::max);
            let floor = 10f64.powf(lo.log10().floor());
            return lo.is_finite().then(|| Axis::Log {
                floor,
                span: (hi / floor).log10().max(1e-9),
            });
        }
        let refs = c.reference.iter().map(|r| r.value);
        let max = values()
            .chain(refs)
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        (max > 0.0 && values().any(f64::is_finite)).then_some(Axis::Linear { max })
    }

    /// The share of the width at `v`, or none when it cannot be drawn.
    fn share(&self, v: f64) -> Option<f64> {
        match *self {
            _ if !v.is_finite() => None,
            Axis::Linear { max } => Some((v / max).max(0.0)),
            Axis::Log { floor, span } => (v > 0.0).then(|| (v / floor).log10() / span),
        }
    }

    /// What the title says of the scale after the unit.
    fn words(&self, unit: &str) -> String {
        match self {
            Axis::Linear { .. } if unit.is_empty() => String::new(),
            Axis::Linear { .. } => format!(" ({unit})"),
            Axis::Log { floor, .. } if unit.is_empty() => format!(" (log scale from {floor})"),
            Axis::Log { floor, .. } => format!(" ({unit}, log scale from {floor})"),
        }
    }
}

const WIDTH: f64 = 420.0;
const BAR_H: f64 = 16.0;

/// The text beside a bar: its own, or its value; a bar in a group of
/// several is named first.
fn shown(group: &BarGroup, b: &Bar) -> String {
    let v = b.text.clone().unwrap_or_else(|| fmt_num(b.value));
    if group.bars.len() > 1 && !b.label.is_empty() {
        format!("{} {v}", b.label)
    } else {
        v
    }
}

/// The chart as inline SVG, or nothing when no bar can be drawn.
pub fn svg_bars(c: &BarChart) -> String {
    let Some(axis) = Axis::of(c) else {
        return String::new();
    };
    let chars = |s: &str| s.chars().count() as f64 * 6.5;
    let left = c
        .groups
        .iter()
        .map(|g| chars(&g.label) + 12.0)
        .fold(120.0f64, f64::max)
        .min(340.0);
    let mut body = String::new();
    let mut y = 24.0;
    let mut text_w = 80.0f64;
    for g in c.groups {
        let gh = BAR_H * g.bars.len() as f64;
        let _ = write!(
            body,
            r#"<text x="0" y="{:.1}">{}</text>"#,
            y + gh / 2.0 + 4.0,
            esc(&shorten(&g.label, ((left - 12.0) / 6.5) as usize))
        );
        for (j, b) in g.bars.iter().enumerate() {
            let text = shown(g, b);
            text_w = text_w.max(chars(&text));
            bar(&mut body, (g, j, b), &text, (left, y), (&axis, c.unit));
            y += BAR_H;
        }
        y += if g.bars.len() > 1 { 8.0 } else { 2.0 };
    }
    let h = y + if c.reference.is_some() { 16.0 } else { 4.0 };
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{:.0}" height="{h:.0}" role="img" aria-label="{t}"><text x="0" y="14" font-weight="bold">{t}{}</text>"#,
        left + WIDTH + text_w + 12.0,
        esc(&axis.words(c.unit)),
        t = esc(c.title)
    );
    if let Some((r, share)) = c.reference.and_then(|r| Some((r, axis.share(r.value)?))) {
        let x = left + share * WIDTH;
        let _ = write!(
            s,
            r#"<line class="ref" x1="{x:.1}" x2="{x:.1}" y1="20" y2="{:.1}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            h - 14.0,
            h - 3.0,
            esc(&r.label)
        );
    }
    s.push_str(&body);
    s.push_str("</svg>");
    s
}

/// One bar at `y`: its rectangle (coloured by its hue, by its place in a
/// group of several, else by the page's `.bar` rule), hover title and text.
/// A value that cannot be drawn (not finite, or not above 0 on a log
/// scale) leaves its text alone in its row.
fn bar(
    s: &mut String,
    (g, j, b): (&BarGroup, usize, &Bar),
    text: &str,
    (left, y): (f64, f64),
    (axis, unit): (&Axis, &str),
) {
    let Some(share) = axis.share(b.value) else {
        let _ = write!(
            s,
            r#"<text x="{left}" y="{:.1}">{}</text>"#,
            y + BAR_H - 4.0,
            esc(text)
        );
        return;
    };
    let bw = (share * WIDTH).max(1.0);
    let fill = match (b.hue, g.bars.len()) {
        (None, 1) => String::new(),
        // A style, not a fill attribute: the page's `.bar` rule would win.
        (hue, _) => format!(r#" style="fill:{}""#, color(hue, j)),
    };
    let name = [g.label.as_str(), b.label.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let hover = match (&b.text, unit.is_empty()) {
        (None, false) => format!("{name}: {} {unit}", fmt_num(b.value)),
        _ => format!(
            "{name}: {}",
            b.text.clone().unwrap_or_else(|| fmt_num(b.value))
        ),
    };
    let _ = write!(
        s,
        r#"<rect class="bar" x="{left:.1}" y="{y:.1}" width="{bw:.1}" height="{:.1}"{fill} data-v="{}"><title>{}</title></rect><text x="{:.1}" y="{:.1}">{}</text>"#,
        BAR_H - 3.0,
        b.value,
        esc(&hover),
        left + bw + 4.0,
        y + BAR_H - 4.0,
        esc(text)
    );
}

/// `s` cut to `n` characters, an ellipsis ending a cut one.
fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n.max(2) {
        s.to_string()
    } else {
        let t: String = s.chars().take(n.max(2) - 1).collect();
        format!("{t}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::model::Hue;

    fn chart<'a>(scale: Scale, groups: &'a [BarGroup]) -> BarChart<'a> {
        BarChart {
            title: "t",
            unit: "ns",
            scale,
            groups,
            reference: None,
        }
    }

    #[test]
    fn log_bars_skip_unusable_values_and_say_their_floor() {
        let g = [
            BarGroup::single("a", 0.5),
            BarGroup::single("b", 5e4),
            BarGroup::single("c", 0.0),
            BarGroup::single("d", f64::NAN),
        ];
        let s = svg_bars(&chart(Scale::Log, &g));
        assert!(s.contains("log scale from 0.1"), "{s}");
        assert_eq!(s.matches("<rect").count(), 2, "{s}");
        assert!(!s.contains("NaN"));
        assert!(svg_bars(&chart(Scale::Log, &g[2..])).is_empty());
        assert!(svg_bars(&chart(Scale::Linear, &[])).is_empty());
    }

    #[test]
    fn grouped_bars_take_their_hues_and_the_reference_its_label() {
        let mut a = Bar::new("run A", 120.0);
        a.hue = Some(Hue::Series(1));
        a.text = Some("120.0% (3 ns)".into());
        let mut p = Bar::new("published", 80.0);
        p.hue = Some(Hue::Published);
        let g = [BarGroup {
            label: "L1d <latency>".into(),
            bars: vec![a, p],
        }];
        let r = Reference {
            value: 100.0,
            label: "100%".into(),
        };
        let s = svg_bars(&BarChart {
            reference: Some(&r),
            ..chart(Scale::Linear, &g)
        });
        assert!(s.contains(crate::view::lines::PALETTE[1]));
        assert!(s.contains(crate::view::lines::PUBLISHED));
        assert!(s.contains("run A 120.0% (3 ns)"));
        assert!(s.contains("L1d &lt;latency&gt;"));
        assert!(s.contains("class=\"ref\"") && s.contains(">100%<"));
        assert_eq!(s.matches("data-v=").count(), 2);
    }

    #[test]
    fn a_plain_bar_takes_the_pages_colour_and_says_its_unit_on_hover() {
        let g = [BarGroup::single("all cores", 3.2)];
        let s = svg_bars(&BarChart {
            unit: "GHz",
            ..chart(Scale::Linear, &g)
        });
        assert!(!s.contains("fill:#"), "{s}");
        assert!(s.contains("<title>all cores: 3.200 GHz</title>"), "{s}");
        assert!(s.contains("t (GHz)"));
    }
}

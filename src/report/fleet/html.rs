//! The fleet page (`cpuscope fleet --html FILE`): one self-contained HTML
//! file, inline CSS and SVG, no script, no font, no network. Per group: the
//! hosts, the outliers with their evidence, the environment differences,
//! and a strip plot per key figure (one dot per host, the median as a
//! dashed line, outliers in red and named, hosts far off but within their
//! own noise as hollow orange rings). Every chart is an `svg.chart` whose
//! marks carry their value in `data-v`.

use super::{Figure, Fleet, Group, HostValue, Verdict};
use crate::base::fmt::fmt_num;
use crate::base::html::esc;
use crate::view::html::{page, CHART_CSS, TABLE_CSS};
use std::fmt::Write as _;

/// The fleet page's own rules (`view::html::page`): its third-level
/// headings come before the tables' rules, the rest after.
const H3_CSS: &str = "h3{font-size:1.05em;margin-top:1.2em}\n";
const CSS: &str = r#"th{background:#f4f4f4}.meta{color:#555}.note{color:#555;font-size:.9em}
.outlier{color:#b03a2e;font-weight:bold}.noise{color:#b35900}.ev{color:#444;font-size:.88em}
svg.chart{display:block;margin:.3em 0 .9em}
svg .dot{fill:#4a7ab5;fill-opacity:.75}
svg .dot.out{fill:#c0392b;fill-opacity:1}svg .dot.noise{fill:none;stroke:#d08a3c;stroke-width:2}
"#;

/// The page.
pub fn render(f: &Fleet) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<h1>cpuscope fleet</h1><p class=\"meta\">{} host(s), the latest run of each, in {} group(s) · store {}</p>",
        f.runs,
        f.groups.len(),
        esc(&f.selection.store)
    );
    let r = &f.rule;
    let _ = write!(
        s,
        "<p class=\"note\">A host stands out on a figure when its distance from its peers' median is above {} robust standard deviations (1.4826·MAD of the peers, at least their typical within-run SD), at least {}% of the median, and beyond its own noise ({}·SD of its repetitions, and half their min–max range). Groups need {} hosts. The axes span at least ±10% of the median.</p>",
        r.threshold,
        r.min_diff_pct,
        r.own_noise_sd,
        r.min_hosts
    );
    for n in &f.notes {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc(n));
    }
    if !f.enough {
        s.push_str("<p><strong>Too little to compare:</strong> no group has enough hosts to find the odd ones out.</p>");
    }
    for (i, g) in f.groups.iter().enumerate() {
        group(&mut s, i + 1, g);
    }
    page("cpuscope fleet", &[H3_CSS, TABLE_CSS, CHART_CSS, CSS], &s)
}

fn group(s: &mut String, i: usize, g: &Group) {
    let _ = write!(
        s,
        "<h2>Group {i}: {} ({} host{})</h2>",
        esc(&g.label),
        g.members.len(),
        if g.members.len() == 1 { "" } else { "s" }
    );
    members_table(s, g);
    if !g.judged {
        s.push_str("<p class=\"note\">Too few hosts in this group to judge any of them; the figures are shown without verdicts.</p>");
    } else {
        outliers(s, g);
    }
    if g.members.len() > 1 {
        differences(s, g);
    }
    if !g.figures.is_empty() {
        s.push_str("<h3>Key figures, one dot per host</h3>");
        for f in &g.figures {
            s.push_str(&strip(f));
        }
    }
}

/// The hosts of a group: each one's run, start, profile and tags.
fn members_table(s: &mut String, g: &Group) {
    s.push_str(
        "<table><tr><th>host</th><th>run</th><th>started</th><th>profile</th><th>tags</th></tr>",
    );
    for m in &g.members {
        let _ = write!(
            s,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&m.host),
            esc(&m.run_id),
            esc(&m.started_at),
            esc(&m.profile),
            esc(&m.tags.join(", "))
        );
    }
    s.push_str("</table>");
}

/// The outliers with their evidence, then the hosts far off but within
/// their own noise.
fn outliers(s: &mut String, g: &Group) {
    s.push_str("<h3>Outliers</h3>");
    if g.outliers.is_empty() {
        s.push_str("<p>None: no host stands out on any key figure.</p>");
    } else {
        s.push_str("<ul>");
        for o in &g.outliers {
            let _ = write!(s, "<li><span class=\"outlier\">{}</span><ul>", esc(&o.text));
            for e in &o.evidence {
                let _ = write!(s, "<li class=\"ev\">{}</li>", esc(e));
            }
            s.push_str("</ul></li>");
        }
        s.push_str("</ul>");
    }
    if !g.within_noise.is_empty() {
        s.push_str("<h3>Far from their peers, within their own noise (not flagged)</h3><ul>");
        for o in &g.within_noise {
            let _ = write!(s, "<li><span class=\"noise\">{}</span><ul>", esc(&o.text));
            for e in &o.evidence {
                let _ = write!(s, "<li class=\"ev\">{}</li>", esc(e));
            }
            s.push_str("</ul></li>");
        }
        s.push_str("</ul>");
    }
}

/// The environment and configuration facts that differ between the hosts.
fn differences(s: &mut String, g: &Group) {
    s.push_str("<h3>Environment and configuration differences</h3>");
    if g.differences.is_empty() {
        s.push_str("<p>No difference recorded between the hosts.</p>");
    } else {
        s.push_str("<table><tr><th>fact</th><th>value: hosts</th></tr>");
        for d in &g.differences {
            let vals: Vec<String> = d
                .values
                .iter()
                .map(|v| {
                    format!(
                        "<b>{}</b>: {}",
                        esc(v.value.as_deref().unwrap_or("(not recorded)")),
                        esc(&v.hosts.join(", "))
                    )
                })
                .collect();
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&d.field),
                vals.join("<br>")
            );
        }
        s.push_str("</table>");
    }
}

/// One figure's strip plot.
pub fn strip(f: &Figure) -> String {
    let vals: Vec<f64> = f
        .values
        .iter()
        .map(|v| v.value)
        .filter(|v| v.is_finite())
        .collect();
    if vals.is_empty() {
        return String::new();
    }
    let (w, h, left, right) = (760.0, 86.0, 20.0, 740.0);
    let (lo, hi, pad) = strip_range(f, &vals);
    let x = |v: f64| left + (v - lo) / (hi - lo) * (right - left);
    let dir = if f.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" role="img" aria-label="{t}"><text x="0" y="13" font-weight="bold">{t} ({u}, {dir}) — median {m}, MAD {mad}, n={n}</text>"#,
        t = esc(&f.label),
        u = esc(&f.unit),
        m = fmt_num(f.median),
        mad = fmt_num(f.mad),
        n = f.n
    );
    let axis_y = 62.0;
    let _ = write!(
        s,
        r#"<line class="axis" x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}"/>"#
    );
    for v in [lo + pad, hi - pad] {
        // The axis ends: the range shown (at least ±10% of the median).
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(v),
            axis_y + 14.0,
            fmt_num(v)
        );
    }
    if f.median.is_finite() {
        let _ = write!(
            s,
            r#"<line class="ref" x1="{0:.1}" y1="22" x2="{0:.1}" y2="{1:.1}" data-v="{2}"><title>median {3} {4}</title></line>"#,
            x(f.median),
            axis_y,
            f.median,
            fmt_num(f.median),
            esc(&f.unit)
        );
    }
    for (i, v) in f.values.iter().enumerate() {
        if !v.value.is_finite() {
            continue;
        }
        host_dot(&mut s, f, i, v, &x);
    }
    s.push_str("</svg>");
    s
}

/// The axis of a strip plot: (low end, high end, padding), at least ±10%
/// around the median, then padded on both sides.
fn strip_range(f: &Figure, vals: &[f64]) -> (f64, f64, f64) {
    let vmin = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let vmax = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // At least ±10% around the median, so that a spread of 1% looks small.
    let (mut lo, mut hi) = (vmin, vmax);
    if f.median.is_finite() {
        lo = lo.min(f.median - 0.1 * f.median.abs());
        hi = hi.max(f.median + 0.1 * f.median.abs());
    }
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else {
        (lo.abs() * 0.01).max(1e-9)
    };
    lo -= pad;
    hi += pad;
    (lo, hi, pad)
}

/// The dot of the `i`th host (staggered over three rows), its value and
/// distance in its title, named above the axis when an outlier or within
/// its noise.
fn host_dot(s: &mut String, f: &Figure, i: usize, v: &HostValue, x: &dyn Fn(f64) -> f64) {
    let (class, r) = match v.verdict {
        Verdict::Outlier => ("dot out", 6.0),
        Verdict::WithinNoise => ("dot noise", 6.0),
        _ => ("dot", 4.5),
    };
    let cy = 46.0 + ((i % 3) as f64 - 1.0) * 5.0;
    let dev = v
        .deviation_pct
        .map(|p| format!(", {p:+.1}% from its peers' median"))
        .unwrap_or_default();
    let cv =
        v.cv.map(|c| format!(", CV {:.1}%", c * 100.0))
            .unwrap_or_default();
    let _ = write!(
        s,
        r#"<circle class="{class}" cx="{:.1}" cy="{cy:.1}" r="{r}" data-v="{}"><title>{}: {} {}{dev}{cv}</title></circle>"#,
        x(v.value),
        v.value,
        esc(&v.host),
        fmt_num(v.value),
        esc(&f.unit)
    );
    if matches!(v.verdict, Verdict::Outlier | Verdict::WithinNoise) {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="30" text-anchor="middle" class="{}">{}</text>"#,
            x(v.value),
            if v.verdict == Verdict::Outlier {
                "outlier"
            } else {
                "noise"
            },
            esc(&v.host)
        );
    }
}

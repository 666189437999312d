//! The HTML report: one self-contained file (inline CSS and SVG, no script
//! from elsewhere, no fonts, no CDN), readable offline.

use crate::base::fmt::fmt_num;
pub use crate::base::html::esc;
use crate::results::schema::{Load, ResultRecord, Run};
use crate::view::html::{page, CHART_CSS, FIGURE_CSS, TABLE_CSS};
use serde_json::Value;
use std::fmt::Write as _;

/// The report's own rules, after the shell's, the tables' and the figures'
/// (`view::html::page`).
const CSS: &str = r#".noisy{color:#b35900;font-weight:bold}.na{color:#888;font-style:italic}.note{color:#555;font-size:.85em}
.meta{color:#555}
.verdict{border:1px solid #bcd;border-radius:6px;background:#f7fbff;padding:.2em 1em 1em;margin:1em 0}
.verdict h2{border:none;margin-top:.4em}.verdict table{width:100%}.verdict th{width:7em;background:none;border:none;color:#456}
.verdict td{border:none}.verdict tr.warn td{color:#9a4d00;font-weight:600}.verdict tr.lead td{font-weight:600}
nav.toc{font-size:.9em;margin:.5em 0 1em;display:flex;flex-wrap:wrap;gap:.2em 1em}nav.toc a{white-space:nowrap}figure{margin:1em 0}figcaption{color:#555;font-size:.85em;max-width:900px}
@media print{body{max-width:none;margin:0;font-size:10pt}nav.toc{display:none}.verdict{break-inside:avoid}
h2{break-after:avoid}figure,svg,table{break-inside:avoid}a{color:inherit;text-decoration:none}}
"#;

fn machine_summary(m: &crate::machine::MachineInfo) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    let id = &m.identity;
    if let Some(v) = &id.model_name {
        rows.push(("CPU model".into(), v.clone()));
    }
    if !id.architecture.is_empty() {
        rows.push(("Architecture".into(), id.architecture.clone()));
    }
    if !m.cpus.online.is_empty() {
        rows.push(("Online CPUs".into(), m.cpus.online.to_string()));
    }
    if !m.cpus.usable.is_empty() {
        rows.push(("Usable CPUs".into(), m.cpus.usable.to_string()));
    }
    for (label, n) in [
        ("Packages", m.packages.len()),
        ("Cores", m.cores.len()),
        ("Hardware threads", m.threads.len()),
        ("NUMA nodes", m.numa_nodes.len()),
    ] {
        if n > 0 {
            rows.push((label.into(), n.to_string()));
        }
    }
    if let Some(v) = &id.virtualization.hypervisor {
        rows.push(("Hypervisor".into(), v.clone()));
    }
    if let Some(v) = &id.kernel_release {
        rows.push(("Kernel".into(), v.clone()));
    }
    // In a container or a limited cgroup: what `info` says of it.
    rows.extend(
        crate::report::info_limits::rows(m)
            .into_iter()
            // Which file holds the cgroup's CPU time is for `info`.
            .filter(|(k, _)| k != "cgroup CPU time")
            .map(|(k, v)| {
                let mut c = k.chars();
                let first = c.next().map(|f| f.to_uppercase().to_string());
                (first.unwrap_or_default() + c.as_str(), v)
            }),
    );
    rows
}

fn result_row(r: &ResultRecord) -> String {
    let params: Vec<String> = r
        .params
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            o => format!("{k}={o}"),
        })
        .collect();
    let mut s = format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td>",
        esc(&r.experiment),
        esc(&r.metric),
        esc(&params.join(", "))
    );
    match (&r.value, &r.stats) {
        (Some(v), Some(st)) => {
            let noisy = if st.is_noisy() {
                r#" <span class="noisy" title="CV above 5%">NOISY</span>"#
            } else {
                ""
            };
            let _ = write!(
                s,
                r#"<td class="num">{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{:.2}%{}</td><td class="num">{}</td>"#,
                fmt_num(*v),
                esc(&r.unit),
                fmt_num(st.min),
                fmt_num(st.max),
                st.cv * 100.0,
                noisy,
                st.n
            );
        }
        (Some(v), None) => {
            let _ = write!(
                s,
                r#"<td class="num">{}</td><td>{}</td><td colspan="4" class="na">derived, no samples</td>"#,
                fmt_num(*v),
                esc(&r.unit)
            );
        }
        _ => {
            let _ = write!(
                s,
                r#"<td colspan="6" class="na">not available: {}</td>"#,
                esc(r
                    .unavailable_reason
                    .as_deref()
                    .unwrap_or("no reason recorded"))
            );
        }
    }
    let mut notes = String::new();
    if !r.method.is_empty() {
        let _ = write!(
            notes,
            "<div class=\"note\">method: {}</div>",
            esc(&r.method)
        );
    }
    for n in &r.notes {
        let _ = write!(notes, "<div class=\"note\">{}</div>", esc(n));
    }
    let _ = write!(s, "<td>{notes}</td></tr>");
    s
}

/// Charts for the results that carry per-thread or per-CPU data: each
/// experiment's own renderer, in a figure with a caption saying what it shows
/// (the experiment's title) and how it was measured (its records' method);
/// the (anchor, title) of each for the table of contents.
fn charts(run: &Run) -> (String, Vec<(String, String)>) {
    let mut out = String::new();
    let mut toc = Vec::new();
    for entry in crate::experiments::registry::registry() {
        let body = entry.views.report_html(run);
        let e = entry.experiment;
        if body.is_empty() {
            continue;
        }
        let anchor = format!("exp-{}", e.name());
        let method = run
            .records_of(e.name())
            .map(|r| r.method.clone())
            .find(|m| !m.is_empty())
            .map(|m| format!(" Measured: {m}."))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<figure id=\"{}\"><h3>{}</h3>{body}<figcaption>{}: {}.{} Hover a bar, point or cell for its value; every figure is in the results table with its spread.</figcaption></figure>",
            esc(&anchor),
            esc(e.name()),
            esc(e.name()),
            esc(e.title()),
            esc(&method)
        );
        toc.push((anchor, e.name().to_string()));
    }
    (out, toc)
}

/// Render one run as a complete HTML document.
pub fn render_run(run: &Run) -> String {
    let mut h = String::new();
    let model = run.cpu_model().unwrap_or_else(|| "unknown CPU".into());
    let _ = write!(
        h,
        "<h1>cpuscope report: {}</h1><p class=\"meta\">run <code>{}</code> · host {} · profile {} · status {} · started {} · cpuscope {}</p>",
        esc(&model),
        esc(&run.id),
        esc(&run.host),
        esc(&run.profile),
        esc(run.status.as_str()),
        esc(&run.started_at),
        esc(&run.tool_text())
    );
    h.push_str(&super::verdict::html_card(run));
    let (chart_html, chart_toc) = charts(run);
    h.push_str("<nav class=\"toc\"><b>Contents:</b> <a href=\"#verdict\">verdict</a><a href=\"#machine\">machine</a><a href=\"#environment\">environment</a>");
    if !chart_toc.is_empty() {
        h.push_str("<a href=\"#charts\">charts</a>");
        for (a, t) in &chart_toc {
            let _ = write!(h, "<a href=\"#{}\">{}</a>", esc(a), esc(t));
        }
    }
    h.push_str("<a href=\"#results\">every figure</a><a href=\"#advice\">advice</a><a href=\"#published\">published</a></nav>");
    h.push_str("<h2 id=\"machine\">Machine</h2><table>");
    for (k, v) in machine_summary(&run.machine_info()) {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    h.push_str("</table>");
    environment_table(&mut h, run);
    if !chart_html.is_empty() {
        h.push_str("<h2 id=\"charts\">Charts</h2>");
        h.push_str(&chart_html);
    }
    h.push_str("<h2 id=\"results\">Results</h2><table><tr><th>experiment</th><th>metric</th><th>parameters</th><th>median</th><th>unit</th><th>min</th><th>max</th><th>CV</th><th>n</th><th>method and notes</th></tr>");
    for r in &run.results {
        h.push_str(&result_row(r));
    }
    h.push_str("</table>");
    h.push_str("<p class=\"note\">Every figure above was measured on this run; figures that could not be measured say why. CV above 5% is flagged NOISY.</p>");
    h.push_str("<div id=\"advice\">");
    h.push_str(&super::advice::render_html(&super::advice::findings(run)));
    h.push_str("</div><div id=\"published\">");
    h.push_str(&published_for_run(run));
    h.push_str("</div>");
    page(
        &format!("cpuscope: {} on {}", run.id, run.host),
        &[TABLE_CSS, FIGURE_CSS, CHART_CSS, CSS],
        &h,
    )
}

/// The run's environment table: load at start and end, the CPU time of
/// others, kernel, virtual machine and governor (those recorded), the notes.
fn environment_table(h: &mut String, run: &Run) {
    h.push_str("<h2 id=\"environment\">Environment</h2><table>");
    let env = &run.environment;
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    let rows: [(&str, Option<String>); 6] = [
        ("load at start", env.load_start.as_ref().map(Load::summary)),
        ("load at end", env.load_end.as_ref().map(Load::summary)),
        (
            "CPU time of others",
            env.activity.as_ref().map(|a| {
                format!(
                    "{}{}",
                    a.summary(),
                    if a.busy { " — busy machine" } else { "" }
                )
            }),
        ),
        ("kernel", env.kernel.clone()),
        ("virtual machine", env.is_vm.map(yes_no)),
        ("governor", env.governor.clone()),
    ];
    for (k, v) in rows {
        if let Some(v) = v {
            let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
        }
    }
    if !env.notes.is_empty() {
        let _ = write!(
            h,
            "<tr><th>notes</th><td>{}</td></tr>",
            esc(&env.notes.join("; "))
        );
    }
    h.push_str("</table>");
}

/// For the single-run report: the published figures (seed articles) for
/// the same workloads as this run's results, beside the run's own figure.
/// Empty when none matches.
fn published_for_run(run: &Run) -> String {
    let mut rows = String::new();
    for r in &run.results {
        for m in crate::results::published::matches_for(r) {
            let rel = match (m.value, r.value, m.figure.qualifier) {
                (_, _, crate::results::published::Qualifier::AtMost)
                | (_, _, crate::results::published::Qualifier::AtLeast) => None,
                (Some(p), Some(v), _) => {
                    crate::report::compare::relative_pct(p, v, r.higher_is_better)
                }
                _ => None,
            };
            let _ = write!(
                rows,
                "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{} {}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&r.label()),
                r.value
                    .map(|v| format!("{} {}", crate::base::fmt::fmt_num(v), esc(&r.unit)))
                    .unwrap_or_else(|| "n/a".into()),
                esc(&m.figure.machine),
                esc(&crate::results::published::value_text(m.value, m.range, m.figure.qualifier)),
                esc(&r.unit),
                rel.map(|p| format!("{p:.1}%")).unwrap_or_default(),
                esc(&m.set.source.cite())
            );
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Published figures for the same workloads</h2><p class=\"note\">Copied from the sources named, \
         NOT measured on this run; \"published vs this run\" is the published machine against this one \
         (above 100% = better).</p><table><tr><th>result</th><th>this run</th><th>machine (published)</th>\
         <th>published</th><th>published vs this run</th><th>source</th></tr>{rows}</table>"
    )
}

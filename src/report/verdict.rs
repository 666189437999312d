//! The verdict: what `cpuscope run` (and `show` without `--all`) ends with,
//! one screen (at most 40 lines, within the terminal's width): the machine,
//! its clock, the latency ladder, bandwidth, core-to-core groups, peak
//! FLOPs, SIMD and SMT yield, the seed workloads against the published
//! CPUs, the top findings with their evidence, how many figures are noisy,
//! what could not be measured grouped by cause, and where the rest lives.
//! Every figure is one of the run's own records; a line whose figures the
//! run lacks says why in a few words or is left out. Each experiment writes
//! its own lines (its folder's `view.rs`, `Views::verdict`, in rank order
//! through the registry); this module lays them out in the frame (machine,
//! busy, seeds, findings, noise, n/a, more). Never measures.

use super::advice::{self, Finding, Severity};
use crate::base::fmt::{for_terminal, wrap};
use crate::experiments::registry;
use crate::results::published;
use crate::results::schema::Run;
pub use crate::view::verdict::cause;
use crate::view::verdict::short;
use crate::view::{shown_headings, Rank, Tone, VerdictLine};
use std::collections::BTreeMap;

/// The most lines the verdict may take.
pub const MAX_LINES: usize = 40;
/// Width of the key column ("Latency   ").
const KEY: usize = 10;
/// The key of a line that spans the whole width (no key column).
const FULL: &str = "*";

/// How the verdict is laid out: width and colour.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub width: usize,
    pub color: bool,
}

impl Style {
    /// Plain text of `width` columns.
    pub fn plain(width: usize) -> Style {
        Style {
            width: width.clamp(60, 200),
            color: false,
        }
    }

    /// For standard output: as wide as `COLUMNS` and the terminal allow
    /// (the smaller; 100 columns when neither says), 60 at least; colour
    /// only on a terminal whose `TERM` takes it (set, not `dumb`) and
    /// without `NO_COLOR` (`base::term`).
    pub fn for_stdout() -> Style {
        Style {
            width: crate::base::term::width(1).unwrap_or(100).clamp(60, 200),
            color: crate::base::term::color(1),
        }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// One line of the verdict before layout.
#[derive(Clone)]
struct Line {
    key: String,
    text: String,
    /// ANSI colour of the text (None: plain).
    tone: Option<&'static str>,
}

fn line(key: &str, text: impl Into<String>) -> Line {
    Line {
        key: key.to_string(),
        text: text.into(),
        tone: None,
    }
}

// ---------------------------------------------------------------- lines

/// Where the seeds line falls among the experiments' lines (after simd's,
/// before tune's): the frame's own line, it reads every record.
const SEEDS_RANK: Rank = Rank(95);

/// Every experiment's verdict lines in rank order, with the seeds line in
/// its place; a heading that repeats the line before's is printed empty
/// (the NUMA line under the latency curve).
fn experiment_lines(run: &Run) -> Vec<Line> {
    let mut ranked: Vec<(Rank, Vec<VerdictLine>)> = registry::registry()
        .iter()
        .map(|e| (e.views.rank(), e.views.verdict(run)))
        .collect();
    ranked.push((SEEDS_RANK, seeds_line(run).into_iter().collect()));
    ranked.sort_by_key(|(rank, _)| *rank);
    let lines: Vec<VerdictLine> = ranked.into_iter().flat_map(|(_, l)| l).collect();
    let shown = shown_headings(&lines);
    lines
        .iter()
        .zip(shown)
        .map(|(l, key)| Line {
            key: key.to_string(),
            text: l.text.clone(),
            tone: match l.tone {
                Tone::Plain => None,
                Tone::Lead => Some("1"),
                Tone::Warn => Some("33"),
            },
        })
        .collect()
}

fn machine_line(run: &Run) -> Line {
    let m = run.machine_info();
    let mut parts = vec![run.cpu_model().unwrap_or_else(|| "unknown CPU".into())];
    if let Ok(c) = m.uarch.primary() {
        // The core's short name: "Intel Golden Cove / Raptor Cove (server: ...)" → before " (".
        let short_name = c.name.split(" (").next().unwrap_or(&c.name);
        parts[0].push_str(&format!(" [{short_name}]"));
    }
    if m.identity.virtualization.is_virtual == Some(true) {
        parts.push(match &m.identity.virtualization.hypervisor {
            Some(h) => format!("{h} guest"),
            None => "virtual machine".into(),
        });
    }
    let sockets = m.packages.len().max(1);
    parts.push(if m.threads.is_empty() {
        format!("{sockets} socket{}", if sockets == 1 { "" } else { "s" })
    } else {
        format!(
            "{sockets} socket{}, {} cores, {} CPUs",
            if sockets == 1 { "" } else { "s" },
            m.cores.len(),
            m.threads.len()
        )
    });
    let tpc = if m.cores.is_empty() {
        1
    } else {
        m.threads.len().div_ceil(m.cores.len())
    };
    parts.push(if tpc > 1 {
        format!("SMT{tpc}")
    } else {
        "no SMT".into()
    });
    let nodes = m.numa_nodes.len().max(1);
    parts.push(format!(
        "{nodes} NUMA node{}",
        if nodes == 1 { "" } else { "s" }
    ));
    if let Some(l3) = m
        .caches
        .iter()
        .filter(|c| c.level >= 3 && c.kind != "Instruction")
        .max_by_key(|c| c.level)
    {
        let n = m.caches.iter().filter(|c| c.level == l3.level).count();
        parts.push(format!(
            "L{} {}{}",
            l3.level,
            crate::base::fmt::fmt_size(l3.size_bytes.unwrap_or(0) as usize),
            if n > 1 {
                format!(" × {n}")
            } else {
                String::new()
            }
        ));
    }
    // In a container or a limited cgroup: said on the Machine line.
    let confined =
        run.environment.confinement.clone().or_else(|| {
            crate::machine::container::confinement_line(&m.container, &m.cpus, &m.limits)
        });
    parts.extend(confined);
    line("Machine", parts.join(" · "))
}

/// The seed workloads beside the published CPUs: per workload figure, the
/// published machine closest to this one, as "this run vs that machine".
fn seeds_line(run: &Run) -> Option<VerdictLine> {
    let mut parts = Vec::new();
    let mut seen = Vec::new();
    for r in run.results.iter().filter(|r| r.value.is_some()) {
        let ms = published::matches_for(r);
        let Some(v) = r.value else {
            continue;
        };
        let mut best: Option<(f64, String)> = None;
        for m in ms {
            let Some(p) = m.value else {
                continue;
            };
            if matches!(
                m.figure.qualifier,
                published::Qualifier::AtMost | published::Qualifier::AtLeast
            ) {
                continue;
            }
            let Some(rel) = super::compare::relative_pct(v, p, r.higher_is_better) else {
                continue;
            };
            let d = (rel - 100.0).abs();
            if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
                best = Some((
                    d,
                    format!(
                        "{} {} ×{:.2} vs {}",
                        r.experiment,
                        r.metric,
                        rel / 100.0,
                        m.figure.machine
                    ),
                ));
            }
        }
        if let Some((_, s)) = best {
            if !seen.contains(&r.metric) {
                seen.push(r.metric.clone());
                parts.push(s);
            }
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(VerdictLine::plain(
        "Seeds",
        format!("{} (×>1: this run faster)", parts.join(" · ")),
    ))
}

/// Unavailable reasons grouped by cause: (cause, what) in order of size.
pub fn grouped_unavailable(run: &Run) -> Vec<(String, String)> {
    let mut by: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for r in run.results.iter().filter(|r| r.value.is_none()) {
        let reason = r
            .unavailable_reason
            .as_deref()
            .unwrap_or("no reason recorded");
        let what = if r.metric == r.experiment {
            r.experiment.clone()
        } else {
            format!("{} {}", r.experiment, r.metric)
        };
        *by.entry(cause(reason))
            .or_default()
            .entry(what)
            .or_default() += 1;
    }
    let mut v: Vec<(usize, String, String)> = by
        .into_iter()
        .map(|(c, whats)| {
            let n = whats.values().sum();
            let w: Vec<String> = whats
                .into_iter()
                .map(|(w, k)| if k > 1 { format!("{w} ×{k}") } else { w })
                .collect();
            (n, c, w.join(", "))
        })
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    v.into_iter().map(|(_, c, w)| (c, w)).collect()
}

fn findings_lines(run: &Run, f: &[Finding], max: usize) -> Vec<Line> {
    let mut out = Vec::new();
    for x in f.iter().take(max) {
        let (mark, tone) = match x.severity {
            Severity::Warning => ("!", Some("33")),
            Severity::Advice => ("·", None),
        };
        out.push(Line {
            key: String::new(),
            text: format!("{mark} {}", x.title),
            tone,
        });
        if let Some(e) = x.evidence.first() {
            out.push(line("", format!("  evidence: {} = {}", e.what, e.value)));
        }
        // What to do: the advice's first sentence.
        let masked = x
            .advice
            .replace("e.g. ", "e.g.\u{a0}")
            .replace("i.e. ", "i.e.\u{a0}");
        let first = masked
            .split(". ")
            .next()
            .unwrap_or(&masked)
            .trim_end_matches('.')
            .replace('\u{a0}', " ");
        out.push(line("", format!("  → {}", short(&first, 150))));
    }
    if f.len() > max {
        out.push(line(
            "",
            format!(
                "… {} more in `cpuscope show {} --all`",
                f.len() - max,
                run.id
            ),
        ));
    }
    out
}

// ---------------------------------------------------------------- layout

fn layout(lines: &[Line], style: &Style) -> Vec<String> {
    let mut out = Vec::new();
    let body = style.width.saturating_sub(KEY + 2).max(20);
    for l in lines {
        // The text holds the run's strings (CPU model, notes, reasons, a
        // tune command): escaped here, before wrapping and colour, once for
        // every line.
        let text = for_terminal(&l.text);
        if l.key == FULL {
            for w in wrap(&text, style.width) {
                out.push(match l.tone {
                    Some(c) => style.paint(c, &w),
                    None => w,
                });
            }
            continue;
        }
        for (i, w) in wrap(&text, body).into_iter().enumerate() {
            let key = if i == 0 { l.key.as_str() } else { "" };
            let k = format!("{key:<KEY$}");
            let k = if key.is_empty() {
                k
            } else {
                style.paint("1", &k)
            };
            let t = match l.tone {
                Some(c) => style.paint(c, &w),
                None => w,
            };
            out.push(format!("{k}  {t}").trim_end().to_string());
        }
    }
    out
}

/// On a busy machine, said before any figure: what other programs and the
/// host took while the run measured.
fn busy_line(run: &Run) -> Option<Line> {
    let a = run.environment.activity.as_ref().filter(|a| a.busy)?;
    Some(Line {
        key: "BUSY".into(),
        text: format!(
            "{}: figures are disturbed; findings from them are marked, not stated as hardware facts; repeat on an idle machine",
            a.summary()
        ),
        tone: Some("33"),
    })
}

/// The end of the Noise line: how many figures are implausible (`suspect`)
/// and how many the cgroup's CPU quota throttled while they were measured.
fn flag_counts(run: &Run, suspect: usize) -> String {
    let mut s = String::new();
    if suspect > 0 {
        s.push_str(&format!("; {suspect} implausible (marked ?)"));
    }
    let disturbed = run.results.iter().filter(|r| r.is_disturbed()).count();
    if disturbed > 0 {
        s.push_str(&format!(
            "; {disturbed} disturbed while measured, the CPU quota throttling them (marked !)"
        ));
    }
    s
}

/// What every try of the layout shares: the experiments' lines and the
/// findings, each computed once per verdict.
struct Parts {
    experiments: Vec<Line>,
    findings: Vec<Finding>,
}

impl Parts {
    fn of(run: &Run) -> Parts {
        Parts {
            experiments: experiment_lines(run),
            findings: advice::findings(run),
        }
    }
}

/// Every line of the verdict before layout, with at most `nf` findings and
/// `nu` causes of "not available"; `html`: the report's path, if written.
fn assemble(run: &Run, parts: &Parts, html: Option<&str>, nf: usize, nu: usize) -> Vec<Line> {
    let measured = run.results.iter().filter(|r| r.value.is_some()).count();
    let noisy = run.results.iter().filter(|r| r.is_noisy()).count();
    let suspect = run.results.iter().filter(|r| r.is_suspect()).count();
    let mut all = vec![
        Line {
            key: FULL.into(),
            text: format!(
                "cpuscope verdict · run {} · {} profile · {} · {measured} figures measured",
                run.id,
                run.profile,
                run.status.as_str()
            ),
            tone: Some("1"),
        },
        machine_line(run),
    ];
    all.extend(busy_line(run));
    all.extend(parts.experiments.iter().cloned());
    let f = findings_lines(run, &parts.findings, nf);
    if !f.is_empty() {
        all.push(line("Findings", ""));
        all.extend(f);
    }
    let busy = run.environment.activity.as_ref().filter(|a| a.busy);
    all.push(line(
        "Noise",
        format!(
            "{noisy} of {measured} figures with CV > 5%{}{}",
            match (noisy > 0, busy) {
                (true, Some(a)) => format!(
                    " (marked ! above and in show --all): the machine was busy, other programs {:.0}% of its CPU time, steal {:.1}%",
                    a.others_share * 100.0,
                    a.steal_share * 100.0
                ),
                (true, None) => " (marked ! above and in show --all)".to_string(),
                _ => String::new(),
            },
            flag_counts(run, suspect)
        ),
    ));
    let unavailable = grouped_unavailable(run);
    let n = unavailable.len();
    for (i, (c, w)) in unavailable.iter().take(nu).enumerate() {
        let more = if i + 1 == nu && n > nu {
            format!(" (+{} more causes)", n - nu)
        } else {
            String::new()
        };
        all.push(line(
            if i == 0 { "n/a" } else { "" },
            format!("{c}: {}{more}", short(w, 70)),
        ));
    }
    all.push(line(
        "More",
        format!(
            "every figure: cpuscope show {id} --all · per experiment: cpuscope show {id} --summary",
            id = run.id
        ),
    ));
    if let Some(h) = html {
        all.push(line(FULL, format!("HTML report: {h}")));
    }
    all
}

/// The verdict of `run` as terminal text; `html` is the report's path when
/// one was written. Fits [`MAX_LINES`] lines of `style.width` columns:
/// fewer findings, then fewer causes, until it does. A payload the verdict
/// could not read is said after it, one line each.
pub fn render(run: &Run, html: Option<&str>, style: &Style) -> String {
    super::unreadable::after(run, || render_lines(run, html, style))
}

/// The verdict's lines, at most `MAX_LINES`.
fn render_lines(run: &Run, html: Option<&str>, style: &Style) -> String {
    let parts = Parts::of(run);
    let mut best = Vec::new();
    for (nf, nu) in [(5, 5), (4, 4), (3, 3), (3, 2), (2, 2), (1, 1), (0, 1)] {
        best = layout(&assemble(run, &parts, html, nf, nu), style);
        if best.len() <= MAX_LINES {
            break;
        }
    }
    best.truncate(MAX_LINES);
    let mut s = best.join("\n");
    s.push('\n');
    s
}

/// The verdict as the HTML report's opening card: the same lines, one row
/// each, warnings marked.
pub fn html_card(run: &Run) -> String {
    use crate::base::html::esc;
    let mut h = String::from("<section class=\"verdict\" id=\"verdict\"><h2>Verdict</h2><table>");
    for l in assemble(run, &Parts::of(run), None, 5, 5) {
        if l.key == "More" {
            continue;
        }
        let class = match l.tone {
            Some("33") => " class=\"warn\"",
            Some("1") => " class=\"lead\"",
            _ => "",
        };
        if l.key == FULL {
            h.push_str(&format!(
                "<tr{class}><td colspan=\"2\">{}</td></tr>",
                esc(&l.text)
            ));
        } else {
            h.push_str(&format!(
                "<tr{class}><th>{}</th><td>{}</td></tr>",
                esc(&l.key),
                esc(&l.text)
            ));
        }
    }
    h.push_str("</table></section>");
    h
}

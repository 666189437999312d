//! The summary `cpuscope run` prints at the end: one section per experiment
//! family with its headline figures (each room's own renderer), what could not
//! be measured here grouped by reason, and the advice. `cpuscope show RUN`
//! prints every figure.

use crate::base::fmt::fmt_num;
use crate::experiments;
use crate::results::schema::{ResultRecord, Run};
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn of(run: &Run, exps: &[&str]) -> Vec<ResultRecord> {
    run.results
        .iter()
        .filter(|r| exps.contains(&r.experiment.as_str()))
        .cloned()
        .collect()
}

/// Frequency: one line per placement, measured beside declared.
pub fn render_frequency(rs: &[ResultRecord]) -> String {
    let f: Vec<&ResultRecord> = rs.iter().filter(|r| r.experiment == "frequency").collect();
    if f.is_empty() {
        return String::new();
    }
    let mut out = String::from("Effective frequency (measured; dependent add chain)\n");
    for r in &f {
        match (r.value, &r.stats) {
            (Some(v), Some(s)) => {
                let _ = writeln!(
                    out,
                    "  {:<18} {:>7} {:<5} CV {:>5.1}%  n={}{}",
                    r.metric,
                    fmt_num(v),
                    r.unit,
                    s.cv * 100.0,
                    s.n,
                    if s.is_noisy() { "  NOISY" } else { "" }
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "  {:<18} not available: {}",
                    r.metric,
                    r.unavailable_reason
                        .as_deref()
                        .unwrap_or("no reason recorded")
                );
            }
        }
    }
    if let Some(d) = f
        .iter()
        .find(|r| r.metric == "single_core")
        .and_then(|r| r.notes.iter().find(|n| n.starts_with("declared")))
    {
        let _ = writeln!(out, "  {d}");
    }
    out
}

/// Figures that could not be measured, grouped by reason.
pub fn render_unavailable(run: &Run) -> String {
    let mut by_reason: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &run.results {
        if r.value.is_none() {
            by_reason
                .entry(
                    r.unavailable_reason
                        .clone()
                        .unwrap_or_else(|| "no reason recorded".into()),
                )
                .or_default()
                .push(format!("{}:{}", r.experiment, r.metric));
        }
    }
    if by_reason.is_empty() {
        return String::new();
    }
    let mut out = String::from("Not available on this machine (with the reason)\n");
    for (reason, what) in by_reason {
        let mut w: Vec<String> = what;
        w.dedup();
        let shown = if w.len() > 4 {
            format!("{} and {} more", w[..4].join(", "), w.len() - 4)
        } else {
            w.join(", ")
        };
        let _ = writeln!(out, "  - {reason}: {shown}");
    }
    out
}

/// Experiments whose summary section the family renderers above print.
const FAMILY_RENDERED: &[&str] = &[
    experiments::frequency::EXP,
    experiments::latency::EXP,
    experiments::bandwidth::EXP,
    experiments::numa_matrix::EXP,
    experiments::loaded_latency::EXP,
    experiments::seed_loops::EXP,
    experiments::c2c::EXP,
    experiments::sync::EXP,
    experiments::simd::EXP,
    experiments::peak::EXP,
    experiments::workloads::EXP,
    experiments::rate::EXP,
    experiments::placement_study::EXP,
];

/// The sections of every other registered experiment, by its own renderer.
fn registry_sections(run: &Run) -> String {
    experiments::registry()
        .into_iter()
        .filter(|e| !FAMILY_RENDERED.contains(&e.name()))
        .map(|e| e.summary_text(run))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The end-of-run summary.
pub fn render(run: &Run) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cpuscope run {} — {} on {} (profile {}, {})",
        run.id,
        run.cpu_model().unwrap_or_else(|| "unknown CPU".into()),
        run.host,
        run.profile,
        run.status.as_str()
    );
    let measured = run.results.iter().filter(|r| r.value.is_some()).count();
    let noisy = run.results.iter().filter(|r| r.is_noisy()).count();
    let _ = writeln!(
        out,
        "{} figures measured, {} not available here, {} noisy (CV > 5%)\n",
        measured,
        run.results.len() - measured,
        noisy
    );
    let sections = [
        render_frequency(&run.results),
        crate::experiments::view::memory_text::render(&of(
            run,
            &[
                "latency",
                "bandwidth",
                "numa_matrix",
                "loaded_latency",
                "seed_loops",
            ],
        )),
        crate::experiments::view::c2c_text::render_summary(&run.results),
        crate::experiments::view::compute_text::render_compute(&of(
            run,
            &["simd", "peak", "workloads", "rate", "placement"],
        )),
        registry_sections(run),
        render_unavailable(run),
        super::advice::render_text(&super::advice::findings(run)),
    ];
    for s in sections.into_iter().filter(|s| !s.is_empty()) {
        out.push_str(&s);
        if !s.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Every figure with its spread and notes: cpuscope show {}",
        run.id
    );
    out
}

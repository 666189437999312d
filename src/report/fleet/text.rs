//! The fleet view as text (`cpuscope fleet`). Host names, CPU models,
//! notes and the findings built from them reach the terminal through
//! [`for_terminal`]; table cells get it from [`columns`].

use super::{Finding, Fleet, Group, Verdict};
use crate::base::fmt::{columns, fmt_num, for_terminal};
use std::fmt::Write as _;

/// Hosts as `a, b, c` (at most `max`, then "and N more"), each escaped
/// for the terminal.
pub fn host_list(hosts: &[String], max: usize) -> String {
    let shown: Vec<String> = hosts
        .iter()
        .take(max)
        .map(|h| for_terminal(h).into_owned())
        .collect();
    if hosts.len() <= max {
        return shown.join(", ");
    }
    format!("{} and {} more", shown.join(", "), hosts.len() - max)
}

/// The fleet view as text.
pub fn render(f: &Fleet) -> String {
    let mut out = String::new();
    let r = &f.rule;
    let _ = writeln!(
        out,
        "Fleet: {} host(s) (the latest run of each) in {} group(s), from {}",
        f.runs,
        f.groups.len(),
        for_terminal(&f.selection.store)
    );
    let _ = writeln!(
        out,
        "Outlier rule: |value − peers' median| above {} robust SDs (1.4826·MAD, at least the peers' own SD), at least {}% of the median, and beyond the host's own noise ({}·SD, half its min–max); groups of {}+ hosts",
        r.threshold,
        r.min_diff_pct,
        r.own_noise_sd,
        r.min_hosts
    );
    for n in &f.notes {
        let _ = writeln!(out, "note: {}", for_terminal(n));
    }
    for (i, g) in f.groups.iter().enumerate() {
        out.push('\n');
        group(&mut out, i + 1, g, f.rule.min_hosts);
    }
    if !f.enough {
        out.push('\n');
        out.push_str(
            "Too little to compare: no group has enough hosts to find the odd ones out.\n",
        );
    }
    out
}

fn group(out: &mut String, i: usize, g: &Group, min_hosts: usize) {
    let hosts: Vec<String> = g.members.iter().map(|m| m.host.clone()).collect();
    let _ = writeln!(
        out,
        "Group {i}: {} — {} host(s): {}",
        for_terminal(&g.label),
        g.members.len(),
        host_list(&hosts, 12)
    );
    if !g.judged {
        let _ = writeln!(
            out,
            "  too little to compare: {} host(s), a group needs at least {min_hosts}; figures shown without verdicts",
            g.members.len()
        );
    }
    if g.judged {
        findings(out, g);
    }
    if g.members.len() > 1 {
        differences(out, g);
    }
    if g.figures.is_empty() {
        out.push_str("  Key figures: none measured in these runs\n");
        return;
    }
    figures(out, g);
}

/// A judged group's verdicts: its outliers (or that there is none), then
/// the hosts far from their peers but within their own noise; each with its
/// evidence.
fn findings(out: &mut String, g: &Group) {
    if g.outliers.is_empty() {
        out.push_str("  Outliers: none (no host stands out on any key figure)\n");
    } else {
        let _ = writeln!(out, "  Outliers ({})", g.outliers.len());
        finding_lines(out, &g.outliers);
    }
    if !g.within_noise.is_empty() {
        let _ = writeln!(
            out,
            "  Far from their peers but within their own noise, not flagged ({})",
            g.within_noise.len()
        );
        finding_lines(out, &g.within_noise);
    }
}

/// Each finding's text and its lines of evidence.
fn finding_lines(out: &mut String, list: &[Finding]) {
    for o in list {
        let _ = writeln!(out, "    {}", for_terminal(&o.text));
        for e in &o.evidence {
            let _ = writeln!(out, "      evidence: {}", for_terminal(e));
        }
    }
}

/// The environment and configuration fields that differ between the
/// group's hosts (each value with its hosts, or their count beyond 3), or
/// that none does.
fn differences(out: &mut String, g: &Group) {
    if g.differences.is_empty() {
        out.push_str("  Environment and configuration: no difference recorded between the hosts\n");
        return;
    }
    out.push_str(
        "  Environment and configuration differences (listed whether or not a figure moved)\n",
    );
    let mut rows = Vec::new();
    for d in &g.differences {
        let vals: Vec<String> = d
            .values
            .iter()
            .map(|v| {
                let val = v.value.clone().unwrap_or_else(|| "(not recorded)".into());
                if v.hosts.len() > 3 {
                    format!("{val} on {} hosts", v.hosts.len())
                } else {
                    format!("{val} on {}", v.hosts.join(", "))
                }
            })
            .collect();
        rows.push(vec![d.field.clone(), vals.join("; ")]);
    }
    out.push_str(&columns(&rows, "    "));
}

/// The key figures table (median, MAD, range, count, the hosts standing out
/// marked ! or ~ with their deviation), then the figures some hosts lack.
fn figures(out: &mut String, g: &Group) {
    out.push_str(
        "  Key figures across the group (! = outlier, ~ = far but within its own noise)\n",
    );
    let mut rows = vec![vec![
        "figure".to_string(),
        "unit".into(),
        "median".into(),
        "MAD".into(),
        "min".into(),
        "max".into(),
        "n".into(),
        "hosts standing out".into(),
    ]];
    for fig in &g.figures {
        let marks: Vec<String> = fig
            .values
            .iter()
            .filter_map(|v| match v.verdict {
                Verdict::Outlier => Some(format!(
                    "!{} {:+.0}%",
                    v.host,
                    v.deviation_pct.unwrap_or(0.0)
                )),
                Verdict::WithinNoise => Some(format!(
                    "~{} {:+.0}%",
                    v.host,
                    v.deviation_pct.unwrap_or(0.0)
                )),
                _ => None,
            })
            .collect();
        let dir = if fig.higher_is_better {
            ""
        } else {
            " (lower is better)"
        };
        rows.push(vec![
            format!("{}{dir}", fig.label),
            fig.unit.clone(),
            fmt_num(fig.median),
            fmt_num(fig.mad),
            fmt_num(fig.min),
            fmt_num(fig.max),
            fig.n.to_string(),
            marks.join(" "),
        ]);
    }
    out.push_str(&columns(&rows, "    "));
    let missing: Vec<String> = g
        .figures
        .iter()
        .filter(|f| !f.missing.is_empty())
        .map(|f| format!("{} on {}", for_terminal(&f.label), host_list(&f.missing, 4)))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(out, "  not measured: {}", missing.join("; "));
    }
}

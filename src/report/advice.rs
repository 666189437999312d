//! Advice: rules that read one run (its results and the machine snapshot
//! taken at its start) and say what to change, each with the figures of
//! this run that support it. No rule speaks without evidence from the run:
//! a finding always carries at least one [`Evidence`] naming the result key
//! or the machine-snapshot field it comes from. Never measures.
//!
//! Rules (docs/compare.md lists the result shapes each reads). The one that
//! reads the machine snapshot alone (`nic-irq-remote-node`) is here; the
//! others are their experiments' (each in its folder's `view.rs`, gathered
//! through the registry, `Views::rules`):
//! - `nic-irq-remote-node`: a NIC's interrupts are served on another NUMA node than the NIC's.
//! - `numa-balancing-pinned`: kernel NUMA balancing is on, on a multi-node machine, for pinned work.
//! - `remote-local-latency`: remote memory costs much more than local.
//! - `smt-yield-wide-simd`: a second hardware thread adds little to wide-SIMD throughput.
//! - `all-core-frequency-drop`: the clock falls when every core is busy.
//! - `memory-bandwidth-saturation`: memory bandwidth stops growing after k cores.
//! - `distances-vs-measured`: the firmware's NUMA distances disagree with measured latencies.
//! - `declared-vs-measured-frequency`: the clock the machine declares is not what it runs at.
//! - `dimm-population`: memory channels left empty, or DIMMs of mixed sizes or speeds (SMBIOS).
//! - `cache-latency-vs-published`: a cache level's measured latency is more than 20% off the
//!   core's published load-to-use latency (cpuscope's knowledge base).

use crate::base::fmt::for_terminal;
use crate::experiments::registry;
use crate::results::schema::Run;
use crate::view::finding::ev;
pub use crate::view::{Finding, Rule, Severity};
use std::fmt::Write as _;

/// The rules that read the machine snapshot only; each experiment's rules
/// are in its folder's `view.rs` (`Views::rules`).
const MACHINE_RULES: &[Rule] = &[Rule {
    id: "nic-irq-remote-node",
    rank: 10,
    timed: false,
    find: nic_irq_remote_node,
}];

/// Every rule, the machine's and every experiment's (through the
/// registry), in the order their findings are listed within a severity.
pub fn rules() -> Vec<&'static Rule> {
    let mut all: Vec<&'static Rule> = MACHINE_RULES.iter().collect();
    for e in registry::registry() {
        all.extend(e.views.rules());
    }
    all.sort_by_key(|r| r.rank);
    all
}

/// What the run's own figures advise. Findings without evidence are dropped.
/// When the machine was busy as the run started, findings from timed
/// figures say so (with the load as evidence).
pub fn findings(run: &Run) -> Vec<Finding> {
    // Each finding with whether its rule rests on timed figures.
    let mut out: Vec<(bool, Finding)> = rules()
        .iter()
        .flat_map(|rule| (rule.find)(run).into_iter().map(|f| (rule.timed, f)))
        .filter(|(_, f)| !f.evidence.is_empty())
        .collect();

    if let Some(a) = run.environment.activity.as_ref().filter(|a| a.busy) {
        // Measured on a busy machine: withheld as hardware facts, kept as
        // leads (severity lowered, title and advice say why).
        for (_, f) in out.iter_mut().filter(|(timed, _)| *timed) {
            f.severity = Severity::Advice;
            f.title = format!(
                "{} (busy machine: not a hardware fact until repeated idle)",
                f.title
            );
            f.advice = format!(
                "Measured while the machine was busy ({}): other programs' load or a busy host can cause this; repeat on an idle machine before acting on it. {}",
                a.summary(),
                f.advice
            );
            f.evidence.push(ev(
                "other programs' CPU time and steal time during the run",
                a.summary(),
                "environment.activity",
            ));
        }
    } else if let Some((load, cpus)) = busy(run) {
        for (_, f) in out.iter_mut().filter(|(timed, _)| *timed) {
            f.advice.push_str(&format!(
                " The machine was busy when the run started (load average {load:.2} on {cpus} CPUs): \
                 repeat on an idle machine before acting on this."
            ));
            f.evidence.push(ev(
                "load average (1 min) when the run started",
                format!("{load:.2} on {cpus} CPUs"),
                "environment.load_start",
            ));
        }
    }
    let mut out: Vec<Finding> = out.into_iter().map(|(_, f)| f).collect();
    out.sort_by_key(|f| f.severity);
    out
}

/// (1-minute load, logical CPUs) when the load at the start was at least
/// 1 and more than half the CPUs.
fn busy(run: &Run) -> Option<(f64, usize)> {
    let load = run.environment.load_start.as_ref()?.loadavg_1?;
    let m = run.machine_info();
    let cpus = Some(m.cpus.online.len())
        .filter(|n| *n > 0)
        .or_else(|| Some(m.threads.len()).filter(|n| *n > 0))?;
    (load >= 1.0 && load > 0.5 * cpus as f64).then_some((load, cpus))
}

// ------------------------------------------------------------ rules

/// A NIC's interrupts are served on another node than the NIC's own.
pub fn nic_irq_remote_node(run: &Run) -> Vec<Finding> {
    let mut out = Vec::new();
    let m = run.machine_info();
    for nic in &m.devices.nics {
        let name = nic.name.as_str();
        if nic.is_virtual {
            continue;
        }
        let Some(node) = nic.numa_node.filter(|n| *n >= 0) else {
            continue;
        };
        let irq_nodes: Vec<i64> = nic.irq_nodes.iter().map(|n| *n as i64).collect();
        let remote: Vec<i64> = irq_nodes.iter().copied().filter(|n| *n != node).collect();
        if remote.is_empty() {
            continue;
        }
        let served = nic.served_cpus.to_string();
        let nirq = nic.irqs.len();
        let node_cpus = m
            .numa_nodes
            .iter()
            .find(|n| n.id as i64 == node)
            .map(|n| n.cpus.to_string());
        let list = |v: &[i64]| {
            v.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut evidence = vec![
            ev(
                format!("{name}: NUMA node of the device"),
                node.to_string(),
                format!("machine devices.nics[{name}].numa_node"),
            ),
            ev(
                format!("{name}: nodes whose CPUs served its {nirq} IRQ(s)"),
                list(&irq_nodes),
                format!("machine devices.nics[{name}].irq_nodes"),
            ),
        ];
        if !served.is_empty() {
            evidence.push(ev(
                format!("{name}: CPUs that served its IRQs"),
                served,
                format!("machine devices.nics[{name}].served_cpus"),
            ));
        }
        let target = node_cpus
            .map(|c| format!("CPUs {c} (node {node})"))
            .unwrap_or_else(|| format!("CPUs of node {node}"));
        out.push(Finding {
            rule: "nic-irq-remote-node",
            severity: Severity::Warning,
            title: format!(
                "{name} sits on node {node} but its interrupts are served on node {}",
                list(&remote)
            ),
            advice: format!(
                "Every packet crosses the interconnect twice (DMA to node {node}, handling on node {}). \
                 Route {name}'s IRQs to {target} (write /proc/irq/N/smp_affinity_list, or configure irqbalance), \
                 and run the network-heavy threads on node {node}.",
                list(&remote)
            ),
            evidence,
        });
    }
    out
}

// ------------------------------------------------------------ rendering

/// Findings as text (for `show` and `run`): empty string when there are none.
pub fn render_text(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let mut out = String::from("Advice (from this run's own figures)\n");
    for f in findings {
        let sev = match f.severity {
            Severity::Warning => "warning",
            Severity::Advice => "advice",
        };
        // Findings quote the run's own strings (governor, knob values,
        // reasons): one terminal line each, whatever the document holds.
        let _ = writeln!(out, "  [{sev}] {}", for_terminal(&f.title));
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "      evidence: {} = {}  ({})",
                for_terminal(&e.what),
                for_terminal(&e.value),
                for_terminal(&e.source)
            );
        }
        let _ = writeln!(out, "      what to do: {}", for_terminal(&f.advice));
    }
    out
}

/// Findings as an HTML section (empty when there are none).
pub fn render_html(findings: &[Finding]) -> String {
    use crate::base::html::esc;
    if findings.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2>Advice</h2><p class=\"note\">From this run's own figures; each finding lists the figures behind it.</p>");
    for f in findings {
        let (sev, colour) = match f.severity {
            Severity::Warning => ("warning", "#b35900"),
            Severity::Advice => ("advice", "#2f6f9f"),
        };
        let _ = write!(
            h,
            "<div class=\"finding\" style=\"border-left:4px solid {colour};padding:.2em .8em;margin:.6em 0\"><b style=\"color:{colour}\">{sev}</b> {}<ul>",
            esc(&f.title)
        );
        for e in &f.evidence {
            let _ = write!(
                h,
                "<li>{} = <b>{}</b> <span class=\"note\">({})</span></li>",
                esc(&e.what),
                esc(&e.value),
                esc(&e.source)
            );
        }
        let _ = write!(h, "</ul><div>{}</div></div>", esc(&f.advice));
    }
    h
}

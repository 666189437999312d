//! Text sections of `cpuscope info` for identity, ISA, frequency, knobs, devices,
//! memory devices (DIMMs).
//! Each returns a block of lines starting with its title and ending with a
//! newline; an unavailable figure is printed as "n/a (reason)". Values read
//! under the root (model name, knob values, device names: a recorded tree
//! may hold anything) are escaped with [`for_terminal`] before wrapping.

use crate::base::fmt::{fmt_bytes, fmt_num, for_terminal, wrap};
use crate::machine::dimm::Dimm;
use crate::machine::identity::{Identity, Virtualization};
use crate::machine::MachineInfo;
use std::fmt::Write as _;

const W: usize = 16;
/// Longest line aimed for; longer values wrap under their column.
const WIDTH: usize = 100;

/// `  key:          value`, the value wrapped under its column.
pub(super) fn kv(out: &mut String, k: &str, v: impl std::fmt::Display) {
    let v = v.to_string();
    for (i, line) in wrap(&for_terminal(&v), WIDTH - 2 - W).iter().enumerate() {
        let key = if i == 0 { for_terminal(k) } else { "".into() };
        let _ = writeln!(out, "  {key:<W$}{line}");
    }
}

fn na(reasons: &std::collections::BTreeMap<String, String>, key: &str) -> String {
    match reasons.get(key) {
        Some(r) => format!("n/a ({r})"),
        None => "n/a".to_string(),
    }
}

fn mhz(khz: u64) -> String {
    format!("{:.0} MHz", khz as f64 / 1000.0)
}

/// Identity section (architecture, vendor, model, MIDR, microcode, hypervisor).
pub fn identity(info: &MachineInfo) -> String {
    let id = &info.identity;
    let mut out = String::from("Identity\n");
    let no_cpuinfo = id.unavailable.contains_key("cpuinfo");
    if id.model_name.is_none() && id.arm_cores.is_empty() && no_cpuinfo {
        // Vendor, family, microcode all come from /proc/cpuinfo: one reason covers them.
        kv(
            &mut out,
            "CPU:",
            format!(
                "n/a (no /proc/cpuinfo and no sysfs MIDR under this root){}",
                if id.architecture == "unknown" {
                    String::new()
                } else {
                    format!(" [{}]", id.architecture)
                }
            ),
        );
    } else {
        let model = id
            .model_name
            .clone()
            .unwrap_or_else(|| na(&id.unavailable, "model_name"));
        let arch = if id.architecture_source.is_empty() || id.architecture_source == "none" {
            id.architecture.clone()
        } else {
            format!("{}, from {}", id.architecture, id.architecture_source)
        };
        kv(&mut out, "CPU:", format!("{model} [{arch}]"));
        if id.arm_cores.is_empty() {
            vendor_lines(&mut out, id);
        } else {
            midr_lines(&mut out, id);
        }
        uarch_lines(&mut out, info);
    }
    kv(
        &mut out,
        "machine:",
        virtualization_text(&id.virtualization),
    );
    let host = match (&id.hostname, &id.kernel_release) {
        (None, None) => "n/a (hostname and kernel release not under this root)".to_string(),
        (h, k) => format!(
            "{}, kernel {}",
            h.clone().unwrap_or_else(|| na(&id.unavailable, "hostname")),
            k.clone()
                .unwrap_or_else(|| na(&id.unavailable, "kernel_release"))
        ),
    };
    kv(&mut out, "host:", host);
    out
}

/// Vendor (with family, model, stepping) and microcode: x86 and whatever
/// else has no MIDR.
fn vendor_lines(out: &mut String, id: &Identity) {
    let mut vendor = match (&id.vendor, &id.vendor_name) {
        (Some(v), Some(n)) if v != n => format!("{n} ({v})"),
        (Some(v), _) => v.clone(),
        _ => na(&id.unavailable, "vendor"),
    };
    if id.family.is_some() || id.model.is_some() {
        let f = |v: Option<u32>| v.map(|x| x.to_string()).unwrap_or_else(|| "?".into());
        vendor.push_str(&format!(
            ", family {} model {} ({:#x}) stepping {}",
            f(id.family),
            f(id.model),
            id.model.unwrap_or(0),
            f(id.stepping)
        ));
    }
    kv(out, "vendor:", vendor);
    let mc = id
        .microcode
        .clone()
        .unwrap_or_else(|| na(&id.unavailable, "microcode"));
    kv(out, "microcode:", mc);
}

/// One MIDR line per kind of ARM core: implementer, part, stepping, CPUs.
fn midr_lines(out: &mut String, id: &Identity) {
    for c in &id.arm_cores {
        let raw = c
            .midr_raw
            .as_ref()
            .filter(|r| **r != c.midr)
            .map(|r| format!(" (raw {r})"))
            .unwrap_or_default();
        kv(
            out,
            "MIDR:",
            format!(
                "{}{raw}: implementer {} = {}, part {} = {}, {}; CPUs {}; no microcode \
                 revision on ARM",
                c.midr,
                c.implementer_hex,
                c.implementer_name.as_deref().unwrap_or("unknown"),
                c.part_hex,
                c.part_name.as_deref().unwrap_or("not in the part table"),
                c.stepping,
                c.cpus,
            ),
        );
    }
}

/// Virtual machine (and hypervisor) or bare metal, with the evidence.
fn virtualization_text(v: &Virtualization) -> String {
    match v.is_virtual {
        Some(true) => format!(
            "virtual machine{} [{}]",
            v.hypervisor
                .as_ref()
                .map(|h| format!(" ({h})"))
                .unwrap_or_default(),
            v.evidence.join("; ")
        ),
        Some(false) => format!(
            "bare metal or undetected hypervisor [{}]",
            v.evidence.join("; ")
        ),
        None => format!("unknown ({})", v.reason.as_deref().unwrap_or("no evidence")),
    }
}

/// ISA / SIMD section.
pub fn isa(info: &MachineInfo) -> String {
    let isa = &info.isa;
    let mut out = String::from("Instruction set\n");
    if isa.flags.is_empty() {
        kv(&mut out, "SIMD:", na(&isa.unavailable, "flags"));
        return out;
    }
    let mut simd: Vec<String> = isa
        .simd
        .iter()
        .filter(|s| *s != "AVX-512" && !s.starts_with("MMX") && *s != "SSE")
        .cloned()
        .collect();
    if !isa.avx512.is_empty() {
        simd.push(format!("AVX-512 ({})", isa.avx512.join(" ")));
    }
    if !isa.amx.is_empty() {
        simd.push(format!("AMX ({})", isa.amx.join(" ")));
    }
    let widest = match (isa.widest_vector_bits, isa.sve_vector_bits) {
        (_, Some(sve)) => format!("widest {sve}-bit (SVE)"),
        (Some(w), None) if isa.has_flag("sve") => format!(
            "widest >= {w}-bit; SVE length {}",
            na(&isa.unavailable, "sve_vector_bits")
        ),
        (Some(w), None) => format!("widest {w}-bit"),
        (None, None) => format!("widest {}", na(&isa.unavailable, "widest_vector_bits")),
    };
    let simd_line = if simd.is_empty() {
        "none found in the flags".to_string()
    } else {
        simd.join(", ")
    };
    kv(&mut out, "SIMD:", format!("{simd_line}; {widest}"));
    if !isa.crypto.is_empty() {
        kv(&mut out, "crypto:", isa.crypto.join(" "));
    }
    if !isa.other.is_empty() {
        kv(&mut out, "other:", isa.other.join(", "));
    }
    if !isa.cpus_with_other_flags.is_empty() {
        let cpus: crate::base::CpuSet = isa.cpus_with_other_flags.iter().copied().collect();
        kv(
            &mut out,
            "note:",
            format!("CPUs {cpus} report a different flag list than the first CPU (hybrid or mixed parts)"),
        );
    }
    kv(
        &mut out,
        "flags:",
        format!(
            "{} raw flags ({}; full list in --json)",
            isa.flags.len(),
            isa.flags_source.as_deref().unwrap_or("/proc/cpuinfo")
        ),
    );
    out
}

/// Frequency section.
pub fn frequency(info: &MachineInfo) -> String {
    let f = &info.frequency;
    let mut out = String::from("Frequency (declared by the kernel, not measured)\n");
    let no_cpuinfo = info.identity.unavailable.contains_key("cpuinfo");
    if !f.cpufreq && no_cpuinfo {
        kv(
            &mut out,
            "clocks:",
            "n/a (no cpufreq and no /proc/cpuinfo under this root)",
        );
        return out;
    }
    if !no_cpuinfo {
        let nominal = f
            .nominal_mhz
            .map(|m| format!("{:.2} GHz (from the model name)", m / 1000.0))
            .unwrap_or_else(|| na(&f.unavailable, "nominal_mhz"));
        kv(&mut out, "nominal:", nominal);
    }
    if f.cpufreq {
        cpufreq_lines(&mut out, f);
    } else {
        kv(
            &mut out,
            "cpufreq:",
            format!(
                "n/a ({})",
                f.cpufreq_reason.as_deref().unwrap_or("no cpufreq driver")
            ),
        );
    }
    if let Some(b) = boost_text(f) {
        kv(&mut out, "boost:", b);
    }
    declared_line(&mut out, f);
    if let Some(t) = &f.tsc {
        let yes = |b: bool, s: &str| if b { s.to_string() } else { format!("not {s}") };
        kv(
            &mut out,
            "TSC:",
            format!(
                "{}, {}, {}",
                yes(t.constant, "constant"),
                yes(t.nonstop, "nonstop"),
                if t.known_freq {
                    "rate known from CPUID"
                } else {
                    "rate calibrated at boot"
                }
            ),
        );
    }
    for n in &f.notes {
        kv(&mut out, "note:", n);
    }
    out
}

/// The cpufreq lines: range (and maxima by CPU when they differ), base,
/// driver, governor, EPP, the current clocks' span.
fn cpufreq_lines(out: &mut String, f: &crate::machine::freq::Frequency) {
    let range = match (f.min_khz, f.max_khz) {
        (Some(a), Some(b)) => format!("{} - {}", mhz(a), mhz(b)),
        (None, Some(b)) => format!("max {}", mhz(b)),
        (Some(a), None) => format!("min {}", mhz(a)),
        (None, None) => "limits not exposed".into(),
    };
    kv(out, "cpufreq range:", range);
    if f.max_khz_groups.len() > 1 {
        let g: Vec<String> = f
            .max_khz_groups
            .iter()
            .map(|g| {
                let khz: u64 = g.value.parse().unwrap_or(0);
                format!("{} on CPUs {}", mhz(khz), g.cpus)
            })
            .collect();
        kv(out, "max by CPU:", g.join("; "));
    }
    if let Some(b) = f.base_khz {
        kv(out, "base:", format!("{} (base_frequency)", mhz(b)));
    }
    let groups = |gs: &[crate::machine::freq::Group], key: &str| -> String {
        if gs.is_empty() {
            na(&f.unavailable, key)
        } else if gs.len() == 1 {
            gs[0].value.clone()
        } else {
            gs.iter()
                .map(|g| format!("{} (CPUs {})", g.value, g.cpus))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut drv = groups(&f.drivers, "drivers");
    if let Some(p) = &f.pstate_status {
        drv.push_str(&format!(" [{p}]"));
    }
    kv(out, "driver:", drv);
    kv(out, "governor:", groups(&f.governors, "governors"));
    if !f.epp.is_empty() {
        kv(out, "EPP:", groups(&f.epp, "epp"));
    }
    let cur: Vec<u64> = f.per_cpu.iter().filter_map(|c| c.cur_khz).collect();
    if !cur.is_empty() {
        let lo = cur.iter().min().copied().unwrap_or(0);
        let hi = cur.iter().max().copied().unwrap_or(0);
        kv(
            out,
            "current:",
            format!("{} - {} (scaling_cur_freq, a snapshot)", mhz(lo), mhz(hi)),
        );
    }
}

/// The boost line's value: enabled or disabled and where that is read, or
/// why unknown; none without cpufreq (no boost switch: the cpufreq line says
/// why).
fn boost_text(f: &crate::machine::freq::Frequency) -> Option<String> {
    match f.boost.enabled {
        Some(true) => Some(format!(
            "enabled ({})",
            f.boost.source.as_deref().unwrap_or("")
        )),
        Some(false) => Some(format!(
            "disabled ({})",
            f.boost.source.as_deref().unwrap_or("")
        )),
        None if !f.cpufreq => None,
        None => Some(format!(
            "n/a ({})",
            f.boost.reason.as_deref().unwrap_or("unknown")
        )),
    }
}

/// The "cpu MHz" line: the clocks /proc/cpuinfo declares (one value or a
/// span with the mean), or why none.
fn declared_line(out: &mut String, f: &crate::machine::freq::Frequency) {
    match &f.declared {
        Some(d) => {
            let v = if (d.max_mhz - d.min_mhz).abs() < 0.5 {
                format!("{:.0} MHz on all {} CPUs", d.mean_mhz, d.cpus)
            } else {
                format!(
                    "{:.0} - {:.0} MHz over {} CPUs (mean {:.0})",
                    d.min_mhz, d.max_mhz, d.cpus, d.mean_mhz
                )
            };
            let note = d
                .note
                .as_ref()
                .map(|n| format!("; {n}"))
                .unwrap_or_default();
            kv(
                out,
                "cpu MHz:",
                format!("{v} (/proc/cpuinfo, declared{note})"),
            );
        }
        None => kv(out, "cpu MHz:", na(&f.unavailable, "declared")),
    }
}

/// Width of the name column of the knobs section.
const KW: usize = 21;

/// Kernel knobs section: one line per knob (name, value, why it matters),
/// unrecorded knobs folded into one line, then the values worth attention.
pub fn knobs(info: &MachineInfo) -> String {
    let k = &info.knobs;
    let mut out = String::from("Kernel knobs\n");
    let missing = knob_lines(&mut out, k);
    let nothing =
        missing.len() == k.knobs.len() && k.pmu.present.is_none() && k.hugepages.is_empty();
    if nothing {
        kv(
            &mut out,
            "settings:",
            "n/a (no knob files, perf event sources or huge page pools recorded under this root)",
        );
        return out;
    }
    // Unrecorded PMU and huge page pools join the unrecorded knobs' line.
    let pmu_unrecorded = k.pmu.present.is_none();
    let pools_unrecorded = k.hugepages.is_empty() && missing.len() > 4;
    if !missing.is_empty() {
        let line = if missing.len() <= 4 {
            format!("n/a (not recorded under this root): {}", missing.join(", "))
        } else {
            let mut extra = String::new();
            if pmu_unrecorded {
                extra.push_str(", PMU");
            }
            if pools_unrecorded {
                extra.push_str(", huge pages");
            }
            format!(
                "n/a: {} knobs{extra} not recorded under this root",
                missing.len()
            )
        };
        knob_row(&mut out, "settings", &line);
    }
    let folded = missing.len() > 4;
    if !(folded && pmu_unrecorded) {
        knob_row(&mut out, "hardware PMU", &for_terminal(&pmu_text(k)));
    }
    if !(folded && pools_unrecorded) {
        knob_row(&mut out, "huge page pools", &pools_text(k));
    }
    for knob in k.knobs.iter().filter(|k| k.attention) {
        let v = knob.value.as_deref().unwrap_or("");
        let what = knob.note.as_deref().unwrap_or(knob.why.as_str());
        kv(&mut out, "attention:", format!("{}={v}: {what}", knob.name));
    }
    out
}

/// `  name                 text`, the text wrapped under its column (the
/// knobs section's wider name column).
fn knob_row(out: &mut String, name: &str, text: &str) {
    for (i, l) in wrap(text, WIDTH - 2 - KW).iter().enumerate() {
        let name = if i == 0 { name } else { "" };
        let _ = writeln!(out, "  {name:<KW$}{l}");
    }
}

/// One line per recorded knob (value and why it matters, or why it is not
/// readable); returns the names of the knobs not recorded under the root,
/// left for one folded line.
fn knob_lines<'a>(out: &mut String, k: &'a crate::machine::knobs::Knobs) -> Vec<&'a str> {
    let unrecorded =
        |r: &Option<String>| r.as_deref().is_some_and(|r| r.starts_with("not recorded"));
    let mut missing: Vec<&str> = Vec::new();
    for knob in &k.knobs {
        if knob.value.is_none() && unrecorded(&knob.reason) {
            missing.push(&knob.name);
            continue;
        }
        let line = match &knob.value {
            Some(v) => {
                let v = if v.is_empty() { "(empty)" } else { v.as_str() };
                format!("{v:<13} {}", knob.why)
            }
            None => format!("n/a ({})", knob.reason.as_deref().unwrap_or("not readable")),
        };
        knob_row(out, &knob.name, &for_terminal(&line));
    }
    missing
}

/// The hardware PMU line's value: its core devices and name, none and why,
/// or n/a.
fn pmu_text(k: &crate::machine::knobs::Knobs) -> String {
    match k.pmu.present {
        Some(true) => format!(
            "present: {}{}",
            k.pmu.core_devices.join(", "),
            k.pmu
                .pmu_name
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ),
        Some(false) => format!("none: {}", k.pmu.reason.as_deref().unwrap_or("no core PMU")),
        None => format!("n/a ({})", k.pmu.reason.as_deref().unwrap_or("unknown")),
    }
}

/// The huge page pools line's value: each pool's size, pages and free pages
/// (per node when several nodes hold some), or n/a.
fn pools_text(k: &crate::machine::knobs::Knobs) -> String {
    if k.hugepages.is_empty() {
        return "n/a (no sys/kernel/mm/hugepages)".to_string();
    }
    k.hugepages
        .iter()
        .map(|p| {
            let size = if p.size_kb >= 1 << 20 {
                format!("{} GiB", p.size_kb >> 20)
            } else if p.size_kb >= 1024 {
                format!("{} MiB", p.size_kb >> 10)
            } else {
                format!("{} kB", p.size_kb)
            };
            let o = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "?".into());
            let mut s = format!("{size}: {} in pool, {} free", o(p.nr), o(p.free));
            if p.per_node.len() > 1 && p.nr.unwrap_or(0) > 0 {
                let per: Vec<String> = p
                    .per_node
                    .iter()
                    .map(|n| format!("N{}={}", n.node, o(n.nr)))
                    .collect();
                s.push_str(&format!(" [{}]", per.join(" ")));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn nic_line(out: &mut String, name: &str, text: &str) {
    let name = for_terminal(name);
    for (i, l) in wrap(&for_terminal(text), WIDTH - 2 - 12).iter().enumerate() {
        let n = if i == 0 { name.as_ref() } else { "" };
        let _ = writeln!(out, "  {n:<12}{l}");
    }
}

/// Devices (NICs and IRQs) section.
pub fn devices(info: &MachineInfo) -> String {
    let d = &info.devices;
    let mut out = String::from("Network devices and interrupts\n");
    if d.nics.is_empty() && d.interrupts.is_none() {
        kv(
            &mut out,
            "devices:",
            "n/a (no sys/class/net and no /proc/interrupts under this root)",
        );
        return out;
    }
    if d.nics.is_empty() {
        kv(&mut out, "NICs:", na(&d.unavailable, "nics"));
    }
    for nic in &d.nics {
        if nic.is_virtual {
            nic_line(&mut out, &nic.name, "virtual (software interface)");
            continue;
        }
        let mut parts = Vec::new();
        parts.push(nic.driver.clone().unwrap_or_else(|| "driver ?".into()));
        if let Some(p) = &nic.pci_address {
            parts.push(format!("PCI {p}"));
        }
        parts.push(format!("NUMA: {}", nic.numa_affinity));
        parts.push(match nic.speed_mbps {
            Some(s) if s >= 1000 => format!("{} Gb/s", s / 1000),
            Some(s) => format!("{s} Mb/s"),
            None => format!("speed {}", na(&nic.unavailable, "speed_mbps")),
        });
        nic_line(&mut out, &nic.name, &parts.join(", "));
        nic_line(&mut out, "", &nic_irqs_text(nic));
    }
    match &d.interrupts {
        Some(t) => kv(&mut out, "device IRQs:", device_irqs_text(t)),
        None => kv(&mut out, "IRQ totals:", na(&d.unavailable, "interrupts")),
    }
    for w in &d.warnings {
        kv(&mut out, "warning:", w);
    }
    for a in &d.advice {
        kv(&mut out, "advice:", a);
    }
    out
}

/// A NIC's IRQ line: its IRQs, the CPUs (and nodes) they are routed to and
/// served on, IRQs by node, its queues; or why its IRQs are not known.
fn nic_irqs_text(nic: &crate::machine::devices::Nic) -> String {
    if nic.irqs.is_empty() {
        return format!(
            "IRQs: {}; {}",
            na(&nic.unavailable, "irqs"),
            queues_text(nic)
        );
    }
    let ids: crate::base::CpuSet = nic.irqs.iter().map(|i| i.irq as usize).collect();
    let counted = nic.irqs.iter().any(|i| i.total.is_some());
    // Not counted: the IRQ totals line below says why.
    let served = if !counted {
        "n/a".to_string()
    } else if nic.served_cpus.is_empty() {
        "none yet".to_string()
    } else {
        nic.served_cpus.to_string()
    };
    let nodes = if nic.irq_nodes.is_empty() {
        String::new()
    } else {
        let set: crate::base::CpuSet = nic.irq_nodes.iter().copied().collect();
        format!(" (node {set})")
    };
    let routed = if nic.affinity_cpus.is_empty() {
        "?".to_string()
    } else {
        nic.affinity_cpus.to_string()
    };
    let by_node = if nic.irqs_per_node.len() > 1 {
        format!(
            "; IRQs by node {}",
            nic.irqs_per_node
                .iter()
                .map(|x| format!("{}:{}", x.node, x.irqs))
                .collect::<Vec<_>>()
                .join(" ")
        )
    } else {
        String::new()
    };
    // irq_nodes are the served CPUs' nodes, else the routed ones'.
    let (routed_nodes, served_nodes) = if nic.served_cpus.is_empty() {
        (nodes, String::new())
    } else {
        (String::new(), nodes)
    };
    format!(
        "{} IRQs ({ids}); routed to CPUs {routed}{routed_nodes}, served on CPUs {served}{served_nodes}{by_node}; {}",
        nic.irqs.len(),
        queues_text(nic)
    )
}

/// The device IRQs line's value: per node with shares when there are
/// several nodes, else the total since boot and the busiest CPU's share.
fn device_irqs_text(t: &crate::machine::devices::InterruptTotals) -> String {
    if t.per_node.len() > 1 {
        let total: u64 = t.per_node.iter().map(|n| n.device).sum();
        let parts: Vec<String> = t
            .per_node
            .iter()
            .map(|n| {
                let pct = if total > 0 {
                    100.0 * n.device as f64 / total as f64
                } else {
                    0.0
                };
                format!("node {} {} ({pct:.0}%)", n.node, n.device)
            })
            .collect();
        parts.join(", ")
    } else {
        let total: u64 = t.per_cpu.iter().map(|c| c.device).sum();
        let busiest = t.per_cpu.iter().max_by_key(|c| c.device);
        let b = busiest
            .filter(|_| total > 0)
            .map(|c| {
                format!(
                    "; busiest CPU {} with {:.0}%",
                    c.cpu,
                    100.0 * c.device as f64 / total as f64
                )
            })
            .unwrap_or_default();
        format!("{total} since boot over {} CPUs{b}", t.per_cpu.len())
    }
}

/// "queues 8 rx, 8 tx" or why not known.
fn queues_text(nic: &crate::machine::devices::Nic) -> String {
    match (nic.rx_queues, nic.tx_queues) {
        (Some(r), Some(t)) => format!("queues {r} rx, {t} tx"),
        _ => format!("queues {}", na(&nic.unavailable, "queues")),
    }
}

/// Memory devices (SMBIOS type 17 DIMMs) section: slots, total, kinds of
/// DIMM, theoretical bandwidth, balance, or why the DIMMs are not known.
pub fn memory_devices(info: &MachineInfo) -> String {
    let m = &info.memory_devices;
    let mut out = String::from("Memory devices (SMBIOS type 17)\n");
    if let Some(why) = &m.unavailable {
        kv(&mut out, "DIMMs:", format!("n/a ({why})"));
        return out;
    }
    if m.dimms.is_empty() {
        kv(&mut out, "DIMMs:", "n/a (not read)");
        return out;
    }
    let s = &m.summary;
    kv(
        &mut out,
        "slots:",
        format!("{} ({} populated, {} empty)", s.slots, s.populated, s.empty),
    );
    let unknown = if s.unknown_size > 0 {
        format!(" (+{} of unknown size)", s.unknown_size)
    } else {
        String::new()
    };
    kv(
        &mut out,
        "total:",
        format!("{}{unknown}", fmt_bytes(s.total_bytes)),
    );
    // One line per kind of populated DIMM: size, type, speed, ranks, maker, part.
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for d in m.dimms.iter().filter(|d| d.populated()) {
        let k = dimm_kind(d);
        match kinds.iter_mut().find(|(x, _)| *x == k) {
            Some(e) => e.1 += 1,
            None => kinds.push((k, 1)),
        }
    }
    for (k, n) in &kinds {
        kv(&mut out, "DIMMs:", format!("{n} × {k}"));
    }
    if let Some(b) = &m.theoretical_bandwidth {
        let bound = if b.upper_bound { "at most " } else { "" };
        kv(
            &mut out,
            "theoretical:",
            format!("{bound}{} GB/s ({})", fmt_num(b.gbs), b.basis),
        );
    } else if s.populated > 0 {
        kv(&mut out, "theoretical:", "n/a (no DIMM speed known)");
    }
    kv(
        &mut out,
        "balance:",
        s.balance_note
            .as_deref()
            .unwrap_or("all slots populated alike"),
    );
    for n in &m.notes {
        kv(&mut out, "note:", n);
    }
    out
}

/// What tells one kind of DIMM from another: size, type, speed, ranks,
/// width (and ECC), maker and part.
fn dimm_kind(d: &Dimm) -> String {
    let mut parts = vec![d
        .size_bytes
        .map(fmt_bytes)
        .unwrap_or_else(|| "size ?".into())];
    parts.push(d.memory_type.clone().unwrap_or_else(|| "type ?".into()));
    parts.push(match (d.configured_speed_mts, d.speed_mts) {
        (Some(c), Some(r)) if c != r => format!("{c} MT/s (rated {r})"),
        (Some(c), _) => format!("{c} MT/s"),
        (None, Some(r)) => format!("{r} MT/s (rated)"),
        (None, None) => "speed unknown".into(),
    });
    if let Some(r) = d.rank {
        parts.push(format!("{r}R"));
    }
    if let (Some(dw), Some(tw)) = (d.data_width_bits, d.total_width_bits) {
        parts.push(if tw > dw {
            format!("x{dw} +ECC")
        } else {
            format!("x{dw}")
        });
    }
    let maker = [d.manufacturer.as_deref(), d.part_number.as_deref()]
        .iter()
        .flatten()
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    if !maker.is_empty() {
        parts.push(maker);
    }
    parts.join(", ")
}

/// The knowledge base's view of the cores, one line per core kind for the
/// identity section: the entry (with its variant), or
/// why the core is not known. `cpuscope uarch ID` shows the entry's figures
/// and sources; the JSON carries them in `uarch`.
fn uarch_lines(out: &mut String, info: &MachineInfo) {
    for rc in &info.uarch.cores {
        let key = match &rc.kind {
            Some(k) => format!("{k}:"),
            None => "core:".to_string(),
        };
        let text = match &rc.core {
            Some(c) => format!(
                "{}{} (figures and sources: cpuscope uarch {})",
                c.name,
                c.variant
                    .as_deref()
                    .map(|v| format!(", {v}"))
                    .unwrap_or_default(),
                c.id,
            ),
            None => format!(
                "{}: theoretical figures are inferred from the measurements",
                rc.unknown.as_deref().unwrap_or("no identity")
            ),
        };
        kv(out, &key, text);
    }
}

//! Text sections of `cpuscope info` for identity, ISA, frequency, knobs, devices.
//! Each returns a block of lines starting with its title and ending with a
//! newline; an unavailable figure is printed as "n/a (reason)".

use crate::machine::MachineInfo;
use std::fmt::Write as _;

const W: usize = 14;

fn kv(out: &mut String, k: &str, v: impl std::fmt::Display) {
    let _ = writeln!(out, "  {k:<W$}{v}");
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
    let model = id
        .model_name
        .clone()
        .unwrap_or_else(|| na(&id.unavailable, "model_name"));
    kv(&mut out, "CPU:", model);
    let arch = if id.architecture_source.is_empty() || id.architecture_source == "none" {
        id.architecture.clone()
    } else {
        format!("{} (from {})", id.architecture, id.architecture_source)
    };
    kv(&mut out, "architecture:", arch);
    if id.arm_cores.is_empty() {
        let vendor = match (&id.vendor, &id.vendor_name) {
            (Some(v), Some(n)) if v != n => format!("{n} ({v})"),
            (Some(v), _) => v.clone(),
            _ => na(&id.unavailable, "vendor"),
        };
        kv(&mut out, "vendor:", vendor);
        if id.family.is_some() || id.model.is_some() {
            let f = |v: Option<u32>| v.map(|x| x.to_string()).unwrap_or_else(|| "?".into());
            kv(
                &mut out,
                "family:",
                format!(
                    "{} model {} ({:#x}) stepping {}",
                    f(id.family),
                    f(id.model),
                    id.model.unwrap_or(0),
                    f(id.stepping)
                ),
            );
        }
    } else {
        for c in &id.arm_cores {
            let raw = c
                .midr_raw
                .as_ref()
                .filter(|r| **r != c.midr)
                .map(|r| format!(", raw {r}"))
                .unwrap_or_default();
            kv(
                &mut out,
                "MIDR:",
                format!(
                    "{}{raw}: implementer {} ({}), part {} ({}), {} -- CPUs {} [{}]",
                    c.midr,
                    c.implementer_hex,
                    c.implementer_name.as_deref().unwrap_or("unknown"),
                    c.part_hex,
                    c.part_name.as_deref().unwrap_or("not in the part table"),
                    c.stepping,
                    c.cpus,
                    c.source
                ),
            );
        }
    }
    let mc = id
        .microcode
        .clone()
        .unwrap_or_else(|| na(&id.unavailable, "microcode"));
    kv(&mut out, "microcode:", mc);
    let v = &id.virtualization;
    let virt = match v.is_virtual {
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
    };
    kv(&mut out, "machine:", virt);
    let host = id
        .hostname
        .clone()
        .unwrap_or_else(|| na(&id.unavailable, "hostname"));
    let kernel = id
        .kernel_release
        .clone()
        .unwrap_or_else(|| na(&id.unavailable, "kernel_release"));
    kv(&mut out, "host:", host);
    kv(&mut out, "kernel:", kernel);
    out
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
        let cpus: crate::placement::CpuSet = isa.cpus_with_other_flags.iter().copied().collect();
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
    let nominal = f
        .nominal_mhz
        .map(|m| format!("{:.2} GHz (from the model name)", m / 1000.0))
        .unwrap_or_else(|| na(&f.unavailable, "nominal_mhz"));
    kv(&mut out, "nominal:", nominal);
    if f.cpufreq {
        let range = match (f.min_khz, f.max_khz) {
            (Some(a), Some(b)) => format!("{} - {}", mhz(a), mhz(b)),
            (None, Some(b)) => format!("max {}", mhz(b)),
            (Some(a), None) => format!("min {}", mhz(a)),
            (None, None) => "limits not exposed".into(),
        };
        kv(&mut out, "cpufreq range:", range);
        if f.max_khz_groups.len() > 1 {
            let g: Vec<String> = f
                .max_khz_groups
                .iter()
                .map(|g| {
                    let khz: u64 = g.value.parse().unwrap_or(0);
                    format!("{} on CPUs {}", mhz(khz), g.cpus)
                })
                .collect();
            kv(&mut out, "max by CPU:", g.join("; "));
        }
        if let Some(b) = f.base_khz {
            kv(&mut out, "base:", format!("{} (base_frequency)", mhz(b)));
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
        kv(&mut out, "driver:", drv);
        kv(&mut out, "governor:", groups(&f.governors, "governors"));
        if !f.epp.is_empty() {
            kv(&mut out, "EPP:", groups(&f.epp, "epp"));
        }
        let cur: Vec<u64> = f.per_cpu.iter().filter_map(|c| c.cur_khz).collect();
        if !cur.is_empty() {
            let lo = cur.iter().min().copied().unwrap_or(0);
            let hi = cur.iter().max().copied().unwrap_or(0);
            kv(
                &mut out,
                "current:",
                format!("{} - {} (scaling_cur_freq, a snapshot)", mhz(lo), mhz(hi)),
            );
        }
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
    let boost = match f.boost.enabled {
        Some(true) => format!("enabled ({})", f.boost.source.as_deref().unwrap_or("")),
        Some(false) => format!("disabled ({})", f.boost.source.as_deref().unwrap_or("")),
        None => format!("n/a ({})", f.boost.reason.as_deref().unwrap_or("unknown")),
    };
    kv(&mut out, "boost:", boost);
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
            kv(&mut out, "cpu MHz:", format!("{v}: {}", d.label));
            if let Some(n) = &d.note {
                kv(&mut out, "", n);
            }
        }
        None => kv(&mut out, "cpu MHz:", na(&f.unavailable, "declared")),
    }
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

/// Kernel knobs section.
pub fn knobs(info: &MachineInfo) -> String {
    let k = &info.knobs;
    let mut out = String::from("Kernel knobs\n");
    for knob in &k.knobs {
        let value = match &knob.value {
            Some(v) if v.is_empty() => "(empty)".to_string(),
            Some(v) => v.clone(),
            None => format!("n/a ({})", knob.reason.as_deref().unwrap_or("not readable")),
        };
        let note = knob
            .note
            .as_ref()
            .map(|n| format!(" -- {n}"))
            .unwrap_or_default();
        let _ = writeln!(out, "  {:<20}{value}{note}", knob.name);
        let _ = writeln!(out, "  {:<20}  why: {}", "", knob.why);
    }
    let pmu = if k.pmu.present {
        format!(
            "present ({}{})",
            k.pmu.core_devices.join(", "),
            k.pmu
                .pmu_name
                .as_ref()
                .map(|n| format!(", pmu_name {n}"))
                .unwrap_or_default()
        )
    } else {
        format!(
            "none ({})",
            k.pmu.reason.as_deref().unwrap_or("no core PMU")
        )
    };
    let _ = writeln!(out, "  {:<20}{pmu}", "hardware PMU");
    let _ = writeln!(
        out,
        "  {:<20}  why: without it IPC, cache misses and branch misses cannot be counted",
        ""
    );
    if k.hugepages.is_empty() {
        let _ = writeln!(
            out,
            "  {:<20}n/a (no sys/kernel/mm/hugepages)",
            "huge page pools"
        );
    } else {
        let pools: Vec<String> = k
            .hugepages
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
            .collect();
        let _ = writeln!(out, "  {:<20}{}", "huge page pools", pools.join("; "));
    }
    out
}

/// Devices (NICs and IRQs) section.
pub fn devices(info: &MachineInfo) -> String {
    let d = &info.devices;
    let mut out = String::from("Network devices and interrupts\n");
    if d.nics.is_empty() {
        kv(&mut out, "NICs:", na(&d.unavailable, "nics"));
    }
    for nic in &d.nics {
        if nic.is_virtual {
            let _ = writeln!(out, "  {:<12}virtual (software interface)", nic.name);
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
        let _ = writeln!(out, "  {:<12}{}", nic.name, parts.join(", "));
        if nic.irqs.is_empty() {
            let _ = writeln!(out, "  {:<12}IRQs: {}", "", na(&nic.unavailable, "irqs"));
        } else {
            let ids: crate::placement::CpuSet = nic.irqs.iter().map(|i| i.irq as usize).collect();
            let served = if nic.served_cpus.is_empty() {
                "none yet".to_string()
            } else {
                nic.served_cpus.to_string()
            };
            let nodes = if nic.irq_nodes.is_empty() {
                String::new()
            } else {
                format!(
                    " (node {})",
                    nic.irq_nodes
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            let _ = writeln!(
                out,
                "  {:<12}{} IRQs ({ids}); routed to CPUs {}, served on CPUs {served}{nodes}",
                "",
                nic.irqs.len(),
                if nic.affinity_cpus.is_empty() {
                    "?".to_string()
                } else {
                    nic.affinity_cpus.to_string()
                }
            );
        }
    }
    match &d.interrupts {
        Some(t) => {
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
                kv(&mut out, "device IRQs:", parts.join(", "));
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
                kv(
                    &mut out,
                    "device IRQs:",
                    format!("{total} since boot over {} CPUs{b}", t.per_cpu.len()),
                );
            }
        }
        None => kv(&mut out, "IRQ totals:", na(&d.unavailable, "interrupts")),
    }
    for w in &d.warnings {
        kv(&mut out, "warning:", w);
    }
    out
}

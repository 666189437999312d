//! Kernel knobs that change what a benchmark measures: THP, NUMA balancing,
//! zone reclaim, SMT control, perf permissions, watchdog, swappiness,
//! autogroup, CPU isolation, huge page pools, and whether a hardware PMU is
//! present (and why not).

use crate::base::CpuSet;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// One kernel setting.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Knob {
    /// Short stable name, e.g. `thp_enabled`.
    pub name: String,
    /// The effective value (the bracketed choice for THP files); null when
    /// the file is absent (see `reason`).
    pub value: Option<String>,
    /// The file as written (all choices for THP), when it differs from `value`.
    pub raw: Option<String>,
    /// The file read.
    pub source: String,
    /// One line: why it matters for performance.
    pub why: String,
    /// What this value means here, when worth saying.
    pub note: Option<String>,
    /// The value deserves a performance engineer's attention (see `note`).
    pub attention: bool,
    /// Why `value` is null.
    pub reason: Option<String>,
}

/// Hardware performance monitoring unit.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Pmu {
    /// A core PMU (`cpu`, `cpu_core`, `cpu_atom`, `armv8_*`...) is registered;
    /// null when a recorded root holds no event_source tree at all.
    pub present: Option<bool>,
    /// The core PMU devices found.
    pub core_devices: Vec<String>,
    /// Every device under /sys/bus/event_source/devices.
    pub all_devices: Vec<String>,
    /// `cpu/caps/pmu_name` (e.g. `skylake`), when exposed.
    pub pmu_name: Option<String>,
    /// Why no hardware counters, when none.
    pub reason: Option<String>,
}

/// One huge page pool.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HugePagePool {
    pub size_kb: u64,
    pub nr: Option<u64>,
    pub free: Option<u64>,
    pub reserved: Option<u64>,
    pub surplus: Option<u64>,
    /// (node, nr, free) where the per-node files exist.
    pub per_node: Vec<NodePool>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodePool {
    pub node: usize,
    pub nr: Option<u64>,
    pub free: Option<u64>,
}

/// All knobs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Knobs {
    pub knobs: Vec<Knob>,
    pub pmu: Pmu,
    pub hugepages: Vec<HugePagePool>,
    /// CPUs the kernel keeps the scheduler off (`isolated`), parsed.
    pub isolated_cpus: Option<CpuSet>,
    /// CPUs with the tick stopped (`nohz_full`), parsed.
    pub nohz_full_cpus: Option<CpuSet>,
}

impl Knobs {
    /// A knob by its name.
    pub fn get(&self, name: &str) -> Option<&Knob> {
        self.knobs.iter().find(|k| k.name == name)
    }

    /// A knob's value by its name.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.get(name)?.value.as_deref()
    }
}

/// The bracketed choice of a sysfs "multiple choice" file: `always [madvise] never` -> `madvise`.
pub fn bracketed(raw: &str) -> Option<String> {
    let start = raw.find('[')?;
    let end = raw[start..].find(']')? + start;
    Some(raw[start + 1..end].to_string())
}

struct Spec {
    name: &'static str,
    path: &'static str,
    why: &'static str,
    bracket: bool,
    missing: &'static str,
}

const SPECS: &[Spec] = &[
    Spec {
        name: "thp_enabled",
        path: "/sys/kernel/mm/transparent_hugepage/enabled",
        why: "huge pages cut TLB misses; 'always' can bloat memory and stall",
        bracket: true,
        missing: "no transparent_hugepage in sysfs: the kernel is built without THP",
    },
    Spec {
        name: "thp_defrag",
        path: "/sys/kernel/mm/transparent_hugepage/defrag",
        why: "'always' compacts memory inside page faults: allocation stalls",
        bracket: true,
        missing: "no transparent_hugepage in sysfs: the kernel is built without THP",
    },
    Spec {
        name: "thp_shmem_enabled",
        path: "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
        why: "whether tmpfs/shared memory (buffer pools) gets huge pages",
        bracket: true,
        missing: "no shmem_enabled: kernel without THP for shmem",
    },
    Spec {
        name: "numa_balancing",
        path: "/proc/sys/kernel/numa_balancing",
        why: "moves pages and tasks at run time: faults, jitter when pinned",
        bracket: false,
        missing: "no kernel.numa_balancing: kernel without NUMA balancing or without NUMA",
    },
    Spec {
        name: "zone_reclaim_mode",
        path: "/proc/sys/vm/zone_reclaim_mode",
        why: "non-zero: reclaims local cache before using a remote node",
        bracket: false,
        missing: "no vm.zone_reclaim_mode: kernel without NUMA",
    },
    Spec {
        name: "smt_control",
        path: "/sys/devices/system/cpu/smt/control",
        why: "whether sibling hyperthreads may run",
        bracket: false,
        missing: "no smt/control: kernel older than 4.19 or no SMT support",
    },
    Spec {
        name: "smt_active",
        path: "/sys/devices/system/cpu/smt/active",
        why: "1 when sibling threads are online and sharing cores",
        bracket: false,
        missing: "no smt/active: kernel older than 4.19 or no SMT support",
    },
    Spec {
        name: "perf_event_paranoid",
        path: "/proc/sys/kernel/perf_event_paranoid",
        why: "who may count: >=2 limits users to their own user space",
        bracket: false,
        missing: "no perf_event_paranoid: kernel without perf events",
    },
    Spec {
        name: "kptr_restrict",
        path: "/proc/sys/kernel/kptr_restrict",
        why: "non-zero hides kernel symbols from perf",
        bracket: false,
        missing: "not under this root",
    },
    Spec {
        name: "nmi_watchdog",
        path: "/proc/sys/kernel/nmi_watchdog",
        why: "1 takes one hardware counter per CPU away from perf",
        bracket: false,
        missing: "no nmi_watchdog: kernel without the lockup detector",
    },
    Spec {
        name: "swappiness",
        path: "/proc/sys/vm/swappiness",
        why: "how eagerly anonymous memory is swapped out",
        bracket: false,
        missing: "not under this root",
    },
    Spec {
        name: "sched_autogroup",
        path: "/proc/sys/kernel/sched_autogroup_enabled",
        why: "per-session CPU fairness: skews shares between shells",
        bracket: false,
        missing: "no sched_autogroup_enabled: kernel without autogroup",
    },
    Spec {
        name: "isolated",
        path: "/sys/devices/system/cpu/isolated",
        why: "CPUs the scheduler leaves alone (isolcpus=)",
        bracket: false,
        missing: "no cpu/isolated file: kernel older than 4.x",
    },
    Spec {
        name: "nohz_full",
        path: "/sys/devices/system/cpu/nohz_full",
        why: "CPUs without the periodic tick: less jitter",
        bracket: false,
        missing: "no cpu/nohz_full file: kernel built without NO_HZ_FULL",
    },
    Spec {
        name: "cpuidle_driver",
        path: "/sys/devices/system/cpu/cpuidle/current_driver",
        why: "deep C-states save power but add wake-up latency",
        bracket: false,
        missing: "no cpuidle driver registered",
    },
    Spec {
        name: "cpuidle_governor",
        path: "/sys/devices/system/cpu/cpuidle/current_governor_ro",
        why: "how idle states are picked (menu, teo, haltpoll)",
        bracket: false,
        missing: "no cpuidle governor file",
    },
];

fn note_for(name: &str, v: &str) -> Option<String> {
    let n = |s: &str| Some(s.to_string());
    match (name, v) {
        ("thp_enabled", "always") => n("every anonymous mapping may get huge pages"),
        ("thp_enabled", "madvise") => {
            n("only regions that ask with madvise(MADV_HUGEPAGE) get huge pages")
        }
        ("thp_enabled", "never") => n("no transparent huge pages: large heaps run on 4 KiB pages"),
        ("thp_defrag", "always") => n("faults may stall in direct compaction"),
        ("numa_balancing", "1") => n("on: pages and tasks move during the run"),
        ("numa_balancing", "0") => n("off: placement stays where first touch put it"),
        ("zone_reclaim_mode", x) if x != "0" => {
            n("on: may reclaim local cache instead of using remote memory")
        }
        ("smt_control", "notsupported") => n("the CPU or hypervisor exposes no SMT"),
        ("smt_control", "off") | ("smt_control", "forceoff") => n("sibling threads are disabled"),
        ("perf_event_paranoid", x) => match x.parse::<i32>() {
            Ok(p) if p >= 2 => {
                n("unprivileged users: own user-space counts only (root is not limited; lower it to let users count more)")
            }
            Ok(1) => n("unprivileged users: own process incl. kernel, no CPU-wide counting"),
            Ok(p) if p <= 0 => n("CPU-wide counting allowed for all users"),
            _ => None,
        },
        ("kptr_restrict", x) if x != "0" => n("kernel symbols hidden from non-root perf"),
        ("nmi_watchdog", "1") => n("one counter per CPU is taken by the watchdog"),
        ("isolated", "") => n("none"),
        ("nohz_full", "") | ("nohz_full", "(null)") => n("none"),
        ("cpuidle_driver", "none") => n("no idle driver: idle CPUs use the default halt loop"),
        ("cpuidle_driver", "haltpoll") => n("guest idle polling: wakes fast, burns host CPU"),
        _ => None,
    }
}

/// Values that change what a benchmark measures enough to point out.
fn needs_attention(name: &str, v: &str) -> bool {
    match name {
        "thp_enabled" => v != "madvise",
        "thp_defrag" => v == "always",
        "numa_balancing" => v != "0",
        "zone_reclaim_mode" => v != "0",
        "smt_control" => v == "off" || v == "forceoff",
        "perf_event_paranoid" => v.parse::<i32>().is_ok_and(|p| p >= 2),
        "kptr_restrict" => v != "0",
        "nmi_watchdog" => v == "1",
        "isolated" | "nohz_full" => !v.is_empty() && v != "(null)",
        "cpuidle_driver" => v == "haltpoll",
        _ => false,
    }
}

fn is_core_pmu(name: &str) -> bool {
    matches!(name, "cpu" | "cpu_core" | "cpu_atom")
        || name.starts_with("armv8_")
        || name.starts_with("armv7_")
        || name.starts_with("arm_cortex")
        || name.starts_with("apple_")
        || name == "armv8_pmuv3"
}

fn read_pmu(sys: &Sysroot) -> Pmu {
    let dir = "/sys/bus/event_source/devices";
    let all = sys.list_dir(dir);
    let core: Vec<String> = all.iter().filter(|d| is_core_pmu(d)).cloned().collect();
    let pmu_name = ["cpu", "cpu_core"]
        .iter()
        .find_map(|d| sys.read_string(&format!("{dir}/{d}/caps/pmu_name")));
    let recorded = sys.exists(dir);
    let reason = if !core.is_empty() {
        None
    } else if !recorded && !sys.is_live() {
        Some("not recorded under this root".to_string())
    } else if all.is_empty() {
        Some(format!(
            "{dir} is empty or absent: kernel without perf events"
        ))
    } else {
        let virt = sys.has_hypervisor_sign();
        Some(if virt {
            "no core PMU registered, only software/tracepoint sources: the hypervisor does not \
             expose performance counters to this VM"
                .to_string()
        } else {
            "no core PMU registered, only software/tracepoint sources: PMU driver not loaded or \
             the firmware hides the counters"
                .to_string()
        })
    };
    Pmu {
        present: if core.is_empty() && !recorded && !sys.is_live() {
            None
        } else {
            Some(!core.is_empty())
        },
        core_devices: core,
        all_devices: all,
        pmu_name,
        reason,
    }
}

fn read_hugepages(sys: &Sysroot) -> Vec<HugePagePool> {
    let mut out = Vec::new();
    let base = "/sys/kernel/mm/hugepages";
    let nodes = sys.list_numbered("/sys/devices/system/node", "node");
    for d in sys.list_dir(base) {
        let Some(size) = d
            .strip_prefix("hugepages-")
            .and_then(|s| s.strip_suffix("kB"))
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let f = |n: &str| sys.read_u64(&format!("{base}/{d}/{n}"));
        let per_node = nodes
            .iter()
            .filter_map(|&node| {
                let p = format!("/sys/devices/system/node/node{node}/hugepages/{d}");
                let nr = sys.read_u64(&format!("{p}/nr_hugepages"));
                let free = sys.read_u64(&format!("{p}/free_hugepages"));
                if nr.is_none() && free.is_none() {
                    None
                } else {
                    Some(NodePool { node, nr, free })
                }
            })
            .collect();
        out.push(HugePagePool {
            size_kb: size,
            nr: f("nr_hugepages"),
            free: f("free_hugepages"),
            reserved: f("resv_hugepages"),
            surplus: f("surplus_hugepages"),
            per_node,
        });
    }
    out.sort_by_key(|p| p.size_kb);
    out
}

/// Why a knob file is absent: unreadable; not in a recorded root (which
/// cannot tell a missing feature from an unrecorded file); or, on the live
/// root, the kernel lacks the feature.
pub fn missing_reason(sys: &Sysroot, path: &str, kernel_lacks: &str) -> String {
    if sys.exists(path) {
        return format!("{path} exists but is not readable");
    }
    if !sys.is_live() {
        return "not recorded under this root".to_string();
    }
    kernel_lacks.to_string()
}

/// True when none of the knob files were found (a recorded root without them).
impl Knobs {
    pub fn none_recorded(&self) -> bool {
        self.knobs.iter().all(|k| {
            k.value.is_none()
                && k.reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("not recorded"))
        })
    }
}

/// Kernel command-line parameters that shape CPU behaviour.
fn cmdline_knobs(sys: &Sysroot) -> Vec<Knob> {
    let Some(cmd) = sys.read_string("/proc/cmdline") else {
        return Vec::new();
    };
    let wanted: &[(&str, &str)] = &[
        ("isolcpus", "CPUs isolated at boot"),
        ("nohz_full", "tickless CPUs requested at boot"),
        ("rcu_nocbs", "CPUs whose RCU callbacks run elsewhere"),
        ("irqaffinity", "default CPUs for device interrupts"),
        ("intel_pstate", "intel_pstate mode forced at boot"),
        ("intel_idle.max_cstate", "deepest C-state allowed"),
        ("processor.max_cstate", "deepest ACPI C-state allowed"),
        ("idle", "idle loop override (poll/halt)"),
        (
            "mitigations",
            "speculative-execution mitigations: 'off' removes their cost",
        ),
        ("transparent_hugepage", "THP mode forced at boot"),
        ("numa_balancing", "NUMA balancing forced at boot"),
        ("numa", "numa=off hides NUMA from the kernel"),
        ("nosmt", "SMT disabled at boot"),
    ];
    let mut out = Vec::new();
    for tok in cmd.split_whitespace() {
        let (k, v) = tok.split_once('=').unwrap_or((tok, ""));
        if let Some((_, why)) = wanted.iter().find(|(w, _)| *w == k) {
            out.push(Knob {
                name: format!("cmdline:{k}"),
                value: Some(v.to_string()),
                raw: None,
                source: "/proc/cmdline".into(),
                why: (*why).to_string(),
                note: None,
                attention: matches!(k, "isolcpus" | "nohz_full" | "idle" | "nosmt")
                    || k.ends_with("max_cstate")
                    || (k == "mitigations" && v == "off"),
                reason: None,
            });
        }
    }
    out
}

/// Read the knobs of the machine under `sys`.
pub fn read(sys: &Sysroot) -> Knobs {
    let mut ks = Knobs::default();
    for s in SPECS {
        let raw = sys.read_string(s.path);
        let (value, raw_kept) = match &raw {
            Some(r) if s.bracket => match bracketed(r) {
                Some(b) => (Some(b), Some(r.clone())),
                None => (Some(r.clone()), None),
            },
            Some(r) => (Some(r.clone()), None),
            None => (None, None),
        };
        let note = value.as_deref().and_then(|v| note_for(s.name, v));
        let attention = value.as_deref().is_some_and(|v| needs_attention(s.name, v));
        let reason = if value.is_none() {
            Some(missing_reason(sys, s.path, s.missing))
        } else {
            None
        };
        ks.knobs.push(Knob {
            name: s.name.to_string(),
            value,
            raw: raw_kept,
            source: s.path.to_string(),
            why: s.why.to_string(),
            note,
            attention,
            reason,
        });
    }
    ks.knobs.extend(cmdline_knobs(sys));
    ks.isolated_cpus = sys
        .read_string("/sys/devices/system/cpu/isolated")
        .and_then(|s| CpuSet::parse(&s).ok());
    ks.nohz_full_cpus = sys
        .read_string("/sys/devices/system/cpu/nohz_full")
        .filter(|s| s != "(null)")
        .and_then(|s| CpuSet::parse(&s).ok());
    ks.pmu = read_pmu(sys);
    ks.hugepages = read_hugepages(sys);
    ks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracket_choice() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            bracketed("always defer defer+madvise [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("0"), None);
    }

    #[test]
    fn core_pmu_names() {
        assert!(is_core_pmu("cpu"));
        assert!(is_core_pmu("armv8_pmuv3_0"));
        assert!(!is_core_pmu("software"));
        assert!(!is_core_pmu("uncore_imc_0"));
    }
}

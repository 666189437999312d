//! Frequencies the kernel declares: cpufreq limits, driver, governor, EPP,
//! boost state, `/proc/cpuinfo` "cpu MHz", the model name's nominal clock,
//! TSC facts. Nothing here is measured: the measured clock comes from the
//! frequency experiment.

use super::identity::{unavailable, CpuInfo, Unavailable};
use crate::base::CpuSet;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// One CPU's cpufreq and cpuinfo facts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuFreq {
    pub cpu: usize,
    /// `scaling_cur_freq`: the kernel's last view of the clock (kHz).
    pub cur_khz: Option<u64>,
    /// `cpuinfo_min_freq` / `cpuinfo_max_freq`: the hardware limits (kHz).
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    /// `scaling_min_freq` / `scaling_max_freq`: the policy limits (kHz).
    pub scaling_min_khz: Option<u64>,
    pub scaling_max_khz: Option<u64>,
    /// `base_frequency` (intel_pstate, amd-pstate: the guaranteed clock, kHz).
    pub base_khz: Option<u64>,
    pub driver: Option<String>,
    pub governor: Option<String>,
    /// `energy_performance_preference`.
    pub epp: Option<String>,
    /// `/proc/cpuinfo` "cpu MHz": declared by the kernel, never measured.
    pub declared_mhz: Option<f64>,
}

/// A value shared by a set of CPUs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Group {
    pub value: String,
    pub cpus: CpuSet,
}

/// Turbo/boost state.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Boost {
    /// true: boost allowed; false: disabled; null: unknown (see reason).
    pub enabled: Option<bool>,
    /// The file it was read from.
    pub source: Option<String>,
    pub reason: Option<String>,
}

/// TSC facts from the x86 flags.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Tsc {
    /// `constant_tsc`: ticks at a fixed rate whatever the core clock.
    pub constant: bool,
    /// `nonstop_tsc`: keeps ticking in deep C-states.
    pub nonstop: bool,
    /// `tsc_known_freq`: the kernel took the rate from CPUID/firmware, not calibration.
    pub known_freq: bool,
}

/// `/proc/cpuinfo` "cpu MHz" over all CPUs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Declared {
    pub min_mhz: f64,
    pub max_mhz: f64,
    pub mean_mhz: f64,
    pub cpus: usize,
    /// Always "declared by the kernel (/proc/cpuinfo cpu MHz), not measured".
    pub label: String,
    pub note: Option<String>,
}

/// Everything the kernel says about frequency.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Frequency {
    /// A cpufreq driver is present for at least one CPU.
    pub cpufreq: bool,
    /// Why there is no cpufreq, when there is none.
    pub cpufreq_reason: Option<String>,
    pub drivers: Vec<Group>,
    pub governors: Vec<Group>,
    pub epp: Vec<Group>,
    /// CPUs grouped by `cpuinfo_max_freq` (more than one group: hybrid or
    /// favoured cores).
    pub max_khz_groups: Vec<Group>,
    /// Lowest `cpuinfo_min_freq`, highest `cpuinfo_max_freq` (kHz).
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    /// `base_frequency` of the first CPU that has it (kHz).
    pub base_khz: Option<u64>,
    /// The clock in the model name ("@ 2.50GHz"), MHz.
    pub nominal_mhz: Option<f64>,
    /// intel_pstate / amd_pstate mode (`active`, `passive`, `guided`).
    pub pstate_status: Option<String>,
    pub boost: Boost,
    pub declared: Option<Declared>,
    /// x86 only.
    pub tsc: Option<Tsc>,
    pub per_cpu: Vec<CpuFreq>,
    /// Interpretations worth a performance engineer's attention.
    pub notes: Vec<String>,
    pub unavailable: Unavailable,
}

fn group<T: ToString>(items: impl Iterator<Item = (usize, T)>) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (cpu, v) in items {
        let v = v.to_string();
        match out.iter_mut().find(|g| g.value == v) {
            Some(g) => {
                g.cpus.insert(cpu);
            }
            None => out.push(Group {
                value: v,
                cpus: CpuSet::from_ids([cpu]),
            }),
        }
    }
    out
}

/// The clock in a model name: "Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz" -> 2500.
pub fn nominal_mhz_from_model_name(name: &str) -> Option<f64> {
    let (_, tail) = name.rsplit_once('@')?;
    let tail = tail.trim();
    let num: String = tail
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let v: f64 = num.parse().ok()?;
    let unit = tail[num.len()..].trim().to_ascii_lowercase();
    if unit.starts_with("ghz") {
        Some(v * 1000.0)
    } else if unit.starts_with("mhz") {
        Some(v)
    } else {
        None
    }
}

fn read_boost(sys: &Sysroot) -> Boost {
    let missing = if sys.is_live() {
        "no intel_pstate/no_turbo, cpufreq/boost or policyN/boost file: \
         the driver does not expose a boost switch"
    } else {
        "no intel_pstate/no_turbo, cpufreq/boost or policyN/boost file recorded under this root"
    };
    let b = |enabled: bool, src: &str| Boost {
        enabled: Some(enabled),
        source: Some(src.to_string()),
        reason: None,
    };
    if let Some(v) = sys.read_string("/sys/devices/system/cpu/intel_pstate/no_turbo") {
        return b(v == "0", "/sys/devices/system/cpu/intel_pstate/no_turbo");
    }
    if let Some(v) = sys.read_string("/sys/devices/system/cpu/cpufreq/boost") {
        return b(v == "1", "/sys/devices/system/cpu/cpufreq/boost");
    }
    for p in sys.list_numbered("/sys/devices/system/cpu/cpufreq", "policy") {
        let path = format!("/sys/devices/system/cpu/cpufreq/policy{p}/boost");
        if let Some(v) = sys.read_string(&path) {
            return b(v == "1", &path);
        }
    }
    Boost {
        enabled: None,
        source: None,
        reason: Some(missing.into()),
    }
}

/// Read the frequency facts of the machine under `sys`.
pub fn read(sys: &Sysroot) -> Frequency {
    let cpuinfo = CpuInfo::read(sys);
    let ci = cpuinfo.as_ref();
    let mut fr = Frequency {
        per_cpu: read_per_cpu(sys, ci),
        ..Frequency::default()
    };
    summarize_cpufreq(&mut fr, sys);
    fr.pstate_status = sys
        .read_string("/sys/devices/system/cpu/intel_pstate/status")
        .map(|s| format!("intel_pstate {s}"))
        .or_else(|| {
            sys.read_string("/sys/devices/system/cpu/amd_pstate/status")
                .map(|s| format!("amd-pstate {s}"))
        });

    fr.boost = read_boost(sys);

    read_declared(&mut fr, sys, ci);
    read_tsc(&mut fr, ci);
    interpret(&mut fr);
    fr
}

/// Each CPU's cpufreq files and /proc/cpuinfo `cpu MHz`.
fn read_per_cpu(sys: &Sysroot, ci: Option<&CpuInfo>) -> Vec<CpuFreq> {
    let mut out = Vec::new();
    let mut cpus = sys.list_numbered("/sys/devices/system/cpu", "cpu");
    if cpus.is_empty() {
        if let Some(c) = ci {
            cpus = c.cpus();
        }
    }
    for cpu in cpus {
        let base = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
        let f = |name: &str| sys.read_u64(&format!("{base}/{name}"));
        let s = |name: &str| {
            sys.read_string(&format!("{base}/{name}"))
                .filter(|v| !v.is_empty())
        };
        let c = CpuFreq {
            cpu,
            cur_khz: f("scaling_cur_freq"),
            min_khz: f("cpuinfo_min_freq"),
            max_khz: f("cpuinfo_max_freq"),
            scaling_min_khz: f("scaling_min_freq"),
            scaling_max_khz: f("scaling_max_freq"),
            base_khz: f("base_frequency"),
            driver: s("scaling_driver"),
            governor: s("scaling_governor"),
            epp: s("energy_performance_preference"),
            declared_mhz: ci
                .and_then(|c| c.get(cpu, "cpu MHz"))
                .and_then(|v| v.parse().ok()),
        };
        out.push(c);
    }

    out
}

/// Whether cpufreq exists, and its drivers, governors, EPP and limits grouped over CPUs.
fn summarize_cpufreq(fr: &mut Frequency, sys: &Sysroot) {
    fr.cpufreq = fr
        .per_cpu
        .iter()
        .any(|c| c.max_khz.is_some() || c.driver.is_some() || c.cur_khz.is_some());
    if !fr.cpufreq {
        let why = if sys.has_hypervisor_sign() {
            "no cpufreq driver: typical of VMs, the hypervisor owns the clock"
        } else {
            "no cpufreq driver: no firmware P-state interface or no driver loaded"
        };
        fr.cpufreq_reason = Some(why.to_string());
        for k in ["min_khz", "max_khz", "drivers", "governors"] {
            unavailable(&mut fr.unavailable, k, why);
        }
    }

    fr.drivers = group(
        fr.per_cpu
            .iter()
            .filter_map(|c| Some((c.cpu, c.driver.clone()?))),
    );
    fr.governors = group(
        fr.per_cpu
            .iter()
            .filter_map(|c| Some((c.cpu, c.governor.clone()?))),
    );
    fr.epp = group(
        fr.per_cpu
            .iter()
            .filter_map(|c| Some((c.cpu, c.epp.clone()?))),
    );
    fr.max_khz_groups = group(fr.per_cpu.iter().filter_map(|c| Some((c.cpu, c.max_khz?))));
    fr.min_khz = fr.per_cpu.iter().filter_map(|c| c.min_khz).min();
    fr.max_khz = fr.per_cpu.iter().filter_map(|c| c.max_khz).max();
    fr.base_khz = fr.per_cpu.iter().find_map(|c| c.base_khz);
    if fr.cpufreq && fr.drivers.is_empty() {
        unavailable(
            &mut fr.unavailable,
            "drivers",
            "cpufreq limits are present but scaling_driver is not recorded",
        );
    }
    if fr.cpufreq && fr.governors.is_empty() {
        unavailable(
            &mut fr.unavailable,
            "governors",
            "cpufreq limits are present but scaling_governor is not recorded",
        );
    }
    if fr.cpufreq && fr.epp.is_empty() {
        unavailable(
            &mut fr.unavailable,
            "epp",
            "no energy_performance_preference: only intel_pstate/amd-pstate in active mode expose it",
        );
    }
    if fr.cpufreq && fr.base_khz.is_none() {
        unavailable(
            &mut fr.unavailable,
            "base_khz",
            "no base_frequency file: only intel_pstate and amd-pstate expose it",
        );
    }
}

/// The clock the model name and /proc/cpuinfo declare.
fn read_declared(fr: &mut Frequency, sys: &Sysroot, ci: Option<&CpuInfo>) {
    // Nominal clock from the model name.
    if let Some(name) = ci.and_then(|c| c.first("model name")) {
        fr.nominal_mhz = nominal_mhz_from_model_name(name);
    }
    if fr.nominal_mhz.is_none() {
        let why = match ci {
            None => "no /proc/cpuinfo under this root",
            Some(c) if c.looks_arm() => "ARM kernels print no model name with a clock",
            Some(c) if c.first("model name").is_none() => "no 'model name' in /proc/cpuinfo",
            Some(_) => "the model name has no '@ x.xxGHz' part",
        };
        unavailable(&mut fr.unavailable, "nominal_mhz", why);
    }

    // Declared cpu MHz.
    let mhz: Vec<f64> = fr.per_cpu.iter().filter_map(|c| c.declared_mhz).collect();
    if mhz.is_empty() {
        let why = match ci {
            None => "no /proc/cpuinfo under this root",
            Some(c) if c.looks_arm() => {
                "no 'cpu MHz' in /proc/cpuinfo: ARM kernels do not print it"
            }
            Some(_) => "no 'cpu MHz' in /proc/cpuinfo",
        };
        unavailable(&mut fr.unavailable, "declared", why);
    } else {
        let min = mhz.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = mhz.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mean = mhz.iter().sum::<f64>() / mhz.len() as f64;
        let note = if sys.has_hypervisor_sign() {
            Some("in a VM: the TSC rate, not the running clock".to_string())
        } else if !fr.cpufreq {
            Some("without cpufreq: the TSC rate".to_string())
        } else {
            None
        };
        fr.declared = Some(Declared {
            min_mhz: min,
            max_mhz: max,
            mean_mhz: mean,
            cpus: mhz.len(),
            label: "declared by the kernel (/proc/cpuinfo cpu MHz), not measured".into(),
            note,
        });
    }
}

/// The x86 TSC flags.
fn read_tsc(fr: &mut Frequency, ci: Option<&CpuInfo>) {
    if let Some(flags) = ci.and_then(|c| c.first("flags")) {
        let has = |f: &str| flags.split_whitespace().any(|x| x == f);
        fr.tsc = Some(Tsc {
            constant: has("constant_tsc"),
            nonstop: has("nonstop_tsc"),
            known_freq: has("tsc_known_freq"),
        });
    } else {
        unavailable(
            &mut fr.unavailable,
            "tsc",
            "no x86 flags: the TSC is an x86 counter",
        );
    }
}

/// Notes on what the declared figures mean (turbo placeholder, caps, hybrid, powersave).
fn interpret(fr: &mut Frequency) {
    if let (Some(nom), Some(max)) = (fr.nominal_mhz, fr.max_khz) {
        let max_mhz = max as f64 / 1000.0;
        if (max_mhz - nom - 1.0).abs() < 0.5 {
            fr.notes.push(format!(
                "max {max_mhz:.0} MHz = nominal + 1 MHz: the turbo placeholder that acpi-cpufreq \
                 reports; the real turbo ceiling is not in sysfs (measure it)"
            ));
        } else if max_mhz + 0.5 < nom {
            fr.notes.push(format!(
                "cpuinfo_max_freq {max_mhz:.0} MHz is below the nominal {nom:.0} MHz: \
                 turbo is off or the firmware caps the clock"
            ));
        }
    }
    if fr.max_khz_groups.len() > 1 {
        fr.notes.push(format!(
            "{} different maximum clocks across CPUs: hybrid cores or favoured (Turbo Boost Max 3.0) cores",
            fr.max_khz_groups.len()
        ));
    }
    if fr.governors.iter().any(|g| g.value == "powersave")
        && fr.drivers.iter().any(|d| d.value == "acpi-cpufreq")
    {
        fr.notes.push(
            "acpi-cpufreq with the powersave governor pins the lowest clock: benchmarks will be slow"
                .into(),
        );
    }
    if fr.boost.enabled == Some(false) {
        fr.notes.push(
            "boost/turbo is disabled: single-thread results will be at the base clock".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nominal() {
        assert_eq!(
            nominal_mhz_from_model_name("Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz"),
            Some(2500.0)
        );
        assert_eq!(
            nominal_mhz_from_model_name("Hygon C86 5280 16-core Processor"),
            None
        );
        assert_eq!(nominal_mhz_from_model_name("Foo @ 800MHz"), Some(800.0));
    }
}

//! Top-down level 1 (retiring, bad speculation, frontend bound, backend
//! bound) on the PMUs that offer it:
//!
//! - Intel Ice Lake and later: the `slots` fixed counter and the
//!   `topdown-*` PERF_METRICS events (group led by `slots`); each fraction is
//!   its event over the sum of the four.
//! - Intel Sandy Bridge .. Skylake-era: `topdown-total-slots`,
//!   `topdown-slots-issued`, `topdown-slots-retired`,
//!   `topdown-fetch-bubbles`, `topdown-recovery-bubbles` (sysfs, with scales).
//! - AMD Zen 4 / Zen 5: dispatch-slot events (6 or 8 slots per cycle).
//! - ARM (Neoverse and others with STALL_SLOT events and `caps/slots`).
//!
//! Elsewhere detection says why it is not available.

use super::events::Event;
use super::group::Readings;
use super::sysfs::{self, DEVICES};
use super::topdown_model::TopdownModel;
use crate::base::Sysroot;
use serde::Serialize;

/// Top-down level 1, in percent of pipeline slots.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopDown {
    /// Which model computed it.
    pub method: String,
    pub retiring_pct: Option<f64>,
    pub bad_speculation_pct: Option<f64>,
    pub frontend_bound_pct: Option<f64>,
    pub backend_bound_pct: Option<f64>,
}

const INTEL_PM: [&str; 5] = [
    "slots",
    "topdown-retiring",
    "topdown-bad-spec",
    "topdown-fe-bound",
    "topdown-be-bound",
];
const INTEL_OLD: [&str; 5] = [
    "topdown-total-slots",
    "topdown-slots-issued",
    "topdown-slots-retired",
    "topdown-fetch-bubbles",
    "topdown-recovery-bubbles",
];
/// AMD Zen 4/5 events: (name, event select, unit mask).
const AMD_ZEN: [(&str, u32, u32); 5] = [
    ("ls_not_halted_cyc", 0x76, 0x00),
    ("de_no_dispatch_per_slot.no_ops_from_frontend", 0x1a0, 0x01),
    ("de_no_dispatch_per_slot.backend_stalls", 0x1a0, 0x1e),
    ("de_src_op_disp.all", 0xaa, 0x07),
    ("ex_ret_ops", 0xc1, 0x00),
];
const ARM: [&str; 6] = [
    "cpu_cycles",
    "stall_slot",
    "stall_slot_frontend",
    "stall_slot_backend",
    "op_retired",
    "op_spec",
];

fn has_events(sys: &Sysroot, pmu: &str, names: &[&str]) -> bool {
    names
        .iter()
        .all(|n| sys.exists(&format!("{DEVICES}/{pmu}/events/{n}")))
}

fn cpuinfo_field(info: &str, key: &str) -> Option<String> {
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// Detect the top-down model, or say why there is none. `per_thread` tells
/// whether counting follows threads (pre-Ice Lake Intel needs whole cores
/// when SMT is on).
pub fn detect(sys: &Sysroot, per_thread: bool) -> Result<TopdownModel, String> {
    let core = sysfs::core_pmus(sys);
    if core.is_empty() {
        return Err("no hardware PMU is registered (a VM without a virtual PMU?)".into());
    }
    // Intel: the P-core PMU on hybrid parts, else `cpu`.
    for pmu in ["cpu_core", "cpu"] {
        if !core.iter().any(|p| p == pmu) {
            continue;
        }
        if has_events(sys, pmu, &INTEL_PM) {
            return Ok(TopdownModel::IntelPerfMetrics { pmu: pmu.into() });
        }
        if has_events(sys, pmu, &INTEL_OLD) {
            let smt = sys.read_string("/sys/devices/system/cpu/smt/active");
            if per_thread && smt.as_deref() == Some("1") {
                return Err(
                    "pre-Ice Lake Intel top-down counts whole cores; with SMT on it needs per-CPU \
                     counting (--cpus), like perf's -a"
                        .into(),
                );
            }
            return Ok(TopdownModel::IntelSlots { pmu: pmu.into() });
        }
    }
    let info = sys.read_raw("/proc/cpuinfo").unwrap_or_default();
    let vendor = cpuinfo_field(&info, "vendor_id").unwrap_or_default();
    if vendor == "AuthenticAMD" && core.iter().any(|p| p == "cpu") {
        let family: u32 = cpuinfo_field(&info, "cpu family")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let model: u32 = cpuinfo_field(&info, "model")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let width = match (family, model) {
            (0x19, 0x10..=0x1f | 0x60..=0x7f | 0xa0..=0xaf) => Some(6),
            (0x1a, _) => Some(8),
            _ => None,
        };
        let Some(width) = width else {
            return Err(format!(
                "AMD family {family:#x} model {model:#x} predates Zen 4: no dispatch-slot events for top-down"
            ));
        };
        if !sys.exists(&format!("{DEVICES}/cpu/format/event")) {
            return Err("the AMD cpu PMU has no format/event description in sysfs".into());
        }
        return Ok(TopdownModel::AmdZen {
            pmu: "cpu".into(),
            width,
        });
    }
    for pmu in &core {
        let Some(slots) = sys.read_string(&format!("{DEVICES}/{pmu}/caps/slots")) else {
            continue;
        };
        let slots = sysfs_number(&slots).unwrap_or(0);
        if slots > 0 && has_events(sys, pmu, &ARM) {
            return Ok(TopdownModel::ArmSlots {
                pmu: pmu.clone(),
                slots,
            });
        }
    }
    Err(format!(
        "the core PMU ({}) offers no top-down events (needs Intel topdown-* events, AMD Zen 4/5, \
         or ARM STALL_SLOT events with caps/slots)",
        core.join(", ")
    ))
}

fn sysfs_number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

impl TopdownModel {
    pub fn describe(&self) -> String {
        match self {
            TopdownModel::IntelPerfMetrics { pmu } => format!("Intel PERF_METRICS ({pmu}/slots)"),
            TopdownModel::IntelSlots { pmu } => format!("Intel topdown slot events ({pmu})"),
            TopdownModel::AmdZen { width, .. } => {
                format!("AMD Zen dispatch slots ({width} per cycle)")
            }
            TopdownModel::ArmSlots { pmu, slots } => {
                format!("ARM STALL_SLOT events ({pmu}, {slots} slots per cycle)")
            }
        }
    }

    /// The counter groups to open for this model.
    pub fn groups(&self, sys: &Sysroot) -> Result<Vec<Vec<Event>>, String> {
        let parse = |spec: String| Event::parse(&spec, sys).map_err(|e| format!("{e:#}"));
        let named = |pmu: &str, names: &[&str]| -> Result<Vec<Event>, String> {
            names.iter().map(|n| parse(format!("{pmu}/{n}/"))).collect()
        };
        match self {
            // slots must lead the group for PERF_METRICS.
            TopdownModel::IntelPerfMetrics { pmu } => Ok(vec![named(pmu, &INTEL_PM)?]),
            TopdownModel::IntelSlots { pmu } => Ok(vec![
                named(pmu, &INTEL_OLD[..3])?,
                named(pmu, &INTEL_OLD[3..])?,
            ]),
            TopdownModel::AmdZen { pmu, .. } => Ok(vec![AMD_ZEN
                .iter()
                .map(|(n, ev, um)| parse(format!("{pmu}/event={ev:#x},umask={um:#x},name={n}/")))
                .collect::<Result<Vec<_>, _>>()?]),
            TopdownModel::ArmSlots { pmu, .. } => Ok(vec![named(pmu, &ARM)?]),
        }
    }

    /// Compute level 1 from readings; the error says which input is missing.
    pub fn compute(&self, r: &Readings) -> Result<TopDown, String> {
        let v = |k: &str| r.value(k);
        let pct = |x: f64| Some((x * 100.0).clamp(0.0, 100.0));
        let nonzero = |x: f64, what: &str| {
            if x > 0.0 {
                Ok(x)
            } else {
                Err(format!("{what} counted 0: top-down undefined"))
            }
        };
        let (ret, bad, fe, be) = match self {
            TopdownModel::IntelPerfMetrics { .. } => {
                let (ret, bad, fe, be) = (
                    v("topdown-retiring")?,
                    v("topdown-bad-spec")?,
                    v("topdown-fe-bound")?,
                    v("topdown-be-bound")?,
                );
                let total = nonzero(ret + bad + fe + be, "topdown-* sum")?;
                (ret / total, bad / total, fe / total, be / total)
            }
            TopdownModel::IntelSlots { .. } => {
                let total = nonzero(v("topdown-total-slots")?, "topdown-total-slots")?;
                let issued = v("topdown-slots-issued")?;
                let retired = v("topdown-slots-retired")?;
                let fetch = v("topdown-fetch-bubbles")?;
                let recovery = v("topdown-recovery-bubbles")?;
                let fe = fetch / total;
                let bad = (issued - retired + recovery) / total;
                let ret = retired / total;
                let be = 1.0 - (fe + bad + ret);
                (ret, bad, fe, be)
            }
            TopdownModel::AmdZen { width, .. } => {
                let slots = nonzero(*width as f64 * v(AMD_ZEN[0].0)?, "ls_not_halted_cyc")?;
                let fe = v(AMD_ZEN[1].0)? / slots;
                let be = v(AMD_ZEN[2].0)? / slots;
                let disp = v(AMD_ZEN[3].0)?;
                let retired = v(AMD_ZEN[4].0)?;
                ((retired / slots), (disp - retired) / slots, fe, be)
            }
            TopdownModel::ArmSlots { slots, .. } => {
                let total = nonzero(*slots as f64 * v("cpu_cycles")?, "cpu_cycles")?;
                let spec = nonzero(v("op_spec")?, "op_spec")?;
                let retired = v("op_retired")?;
                let busy = 1.0 - v("stall_slot")? / total;
                let fe = v("stall_slot_frontend")? / total;
                let be = v("stall_slot_backend")? / total;
                let ret_frac = retired / spec;
                (ret_frac * busy, (1.0 - ret_frac) * busy, fe, be)
            }
        };
        Ok(TopDown {
            method: self.describe(),
            retiring_pct: pct(ret),
            bad_speculation_pct: pct(bad),
            frontend_bound_pct: pct(fe),
            backend_bound_pct: pct(be),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::group::{EventReading, EventState};
    use super::super::sysfs::testroot::FakeRoot;
    use super::*;

    fn reading(key: &str, v: f64) -> EventReading {
        EventReading {
            name: key.into(),
            key: key.into(),
            group: 0,
            state: EventState::Counted,
            value: Some(v),
            raw: Some(v as u64),
            unit: None,
            time_enabled_ns: Some(1),
            time_running_ns: Some(1),
            running_pct: Some(100.0),
            errno: None,
            errno_name: None,
            reason_code: None,
            reason: None,
            hardware: true,
        }
    }

    fn readings(kv: &[(&str, f64)]) -> Readings {
        Readings {
            events: kv.iter().map(|(k, v)| reading(k, *v)).collect(),
            ..Default::default()
        }
    }

    fn close(a: Option<f64>, b: f64) {
        let a = a.expect("value");
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn no_pmu_is_unavailable_with_reason() {
        let r = FakeRoot::new();
        r.write("sys/bus/event_source/devices/software/type", "1");
        let e = detect(&r.sys(), true).unwrap_err();
        assert!(e.contains("no hardware PMU"), "{e}");
    }

    #[test]
    fn intel_icelake_detect_and_compute() {
        let r = FakeRoot::new();
        r.intel_cpu_pmu("cpu_core");
        r.intel_cpu_pmu("cpu_atom");
        let b = "sys/bus/event_source/devices/cpu_core/events";
        r.write(&format!("{b}/slots"), "event=0x00,umask=0x4")
            .write(&format!("{b}/topdown-retiring"), "event=0x00,umask=0x80")
            .write(&format!("{b}/topdown-bad-spec"), "event=0x00,umask=0x81")
            .write(&format!("{b}/topdown-fe-bound"), "event=0x00,umask=0x82")
            .write(&format!("{b}/topdown-be-bound"), "event=0x00,umask=0x83");
        let s = r.sys();
        let m = detect(&s, true).unwrap();
        assert_eq!(
            m,
            TopdownModel::IntelPerfMetrics {
                pmu: "cpu_core".into()
            }
        );
        let g = m.groups(&s).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(g[0][0].key, "slots", "slots leads the group");
        assert_eq!(g[0][1].config, 0x8000);
        let td = m
            .compute(&readings(&[
                ("slots", 1000.0),
                ("topdown-retiring", 400.0),
                ("topdown-bad-spec", 100.0),
                ("topdown-fe-bound", 200.0),
                ("topdown-be-bound", 300.0),
            ]))
            .unwrap();
        close(td.retiring_pct, 40.0);
        close(td.bad_speculation_pct, 10.0);
        close(td.frontend_bound_pct, 20.0);
        close(td.backend_bound_pct, 30.0);
    }

    #[test]
    fn intel_pre_icelake() {
        let r = FakeRoot::new();
        r.intel_cpu_pmu("cpu");
        let b = "sys/bus/event_source/devices/cpu/events";
        r.write(
            &format!("{b}/topdown-total-slots"),
            "event=0x3c,umask=0x0,any=1",
        )
        .write(&format!("{b}/topdown-total-slots.scale"), "2")
        .write(&format!("{b}/topdown-slots-issued"), "event=0xe,umask=0x1")
        .write(
            &format!("{b}/topdown-slots-retired"),
            "event=0xc2,umask=0x2",
        )
        .write(
            &format!("{b}/topdown-fetch-bubbles"),
            "event=0x9c,umask=0x1",
        )
        .write(
            &format!("{b}/topdown-recovery-bubbles"),
            "event=0xd,umask=0x3,any=1",
        )
        .write(&format!("{b}/topdown-recovery-bubbles.scale"), "2")
        .write("sys/devices/system/cpu/smt/active", "1");
        let s = r.sys();
        assert!(detect(&s, true).unwrap_err().contains("SMT"));
        let m = detect(&s, false).unwrap();
        let g = m.groups(&s).unwrap();
        assert_eq!(g.iter().map(|x| x.len()).sum::<usize>(), 5);
        assert_eq!(g[0][0].scale, 2.0);
        let td = m
            .compute(&readings(&[
                ("topdown-total-slots", 1000.0),
                ("topdown-slots-issued", 600.0),
                ("topdown-slots-retired", 500.0),
                ("topdown-fetch-bubbles", 150.0),
                ("topdown-recovery-bubbles", 50.0),
            ]))
            .unwrap();
        close(td.frontend_bound_pct, 15.0);
        close(td.bad_speculation_pct, 15.0);
        close(td.retiring_pct, 50.0);
        close(td.backend_bound_pct, 20.0);
    }

    #[test]
    fn amd_zen4_and_old_zen() {
        let r = FakeRoot::new();
        let b = "sys/bus/event_source/devices/cpu";
        r.write(&format!("{b}/type"), "4")
            .write(&format!("{b}/format/event"), "config:0-7,32-35")
            .write(&format!("{b}/format/umask"), "config:8-15")
            .write(
                "proc/cpuinfo",
                "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n",
            );
        let s = r.sys();
        let m = detect(&s, true).unwrap();
        assert_eq!(
            m,
            TopdownModel::AmdZen {
                pmu: "cpu".into(),
                width: 6
            }
        );
        let g = m.groups(&s).unwrap();
        assert_eq!(g[0][1].config, 0xa0 | (1 << 32) | (0x01 << 8));
        assert_eq!(g[0][1].key, "de_no_dispatch_per_slot.no_ops_from_frontend");
        let td = m
            .compute(&readings(&[
                ("ls_not_halted_cyc", 1000.0),
                ("de_no_dispatch_per_slot.no_ops_from_frontend", 1200.0),
                ("de_no_dispatch_per_slot.backend_stalls", 1800.0),
                ("de_src_op_disp.all", 3300.0),
                ("ex_ret_ops", 3000.0),
            ]))
            .unwrap();
        close(td.frontend_bound_pct, 20.0);
        close(td.backend_bound_pct, 30.0);
        close(td.retiring_pct, 50.0);
        close(td.bad_speculation_pct, 5.0);

        r.write(
            "proc/cpuinfo",
            "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n",
        );
        assert!(detect(&r.sys(), true)
            .unwrap_err()
            .contains("predates Zen 4"));
    }

    #[test]
    fn arm_neoverse() {
        let r = FakeRoot::new();
        let b = "sys/bus/event_source/devices/armv8_pmuv3_0";
        r.write(&format!("{b}/type"), "8")
            .write(&format!("{b}/format/event"), "config:0-15")
            .write(&format!("{b}/caps/slots"), "0x00000008");
        for (n, code) in [
            ("cpu_cycles", "0x0011"),
            ("stall_slot", "0x003f"),
            ("stall_slot_frontend", "0x003e"),
            ("stall_slot_backend", "0x003d"),
            ("op_retired", "0x003a"),
            ("op_spec", "0x003b"),
        ] {
            r.write(&format!("{b}/events/{n}"), &format!("event={code}"));
        }
        let s = r.sys();
        let m = detect(&s, true).unwrap();
        assert_eq!(
            m,
            TopdownModel::ArmSlots {
                pmu: "armv8_pmuv3_0".into(),
                slots: 8
            }
        );
        assert_eq!(m.groups(&s).unwrap()[0][0].config, 0x11);
        // 1000 cycles * 8 slots = 8000; stall 4000 -> busy 0.5
        let td = m
            .compute(&readings(&[
                ("cpu_cycles", 1000.0),
                ("stall_slot", 4000.0),
                ("stall_slot_frontend", 1600.0),
                ("stall_slot_backend", 2400.0),
                ("op_retired", 3600.0),
                ("op_spec", 4000.0),
            ]))
            .unwrap();
        close(td.frontend_bound_pct, 20.0);
        close(td.backend_bound_pct, 30.0);
        close(td.retiring_pct, 45.0);
        close(td.bad_speculation_pct, 5.0);
    }

    #[test]
    fn missing_input_gives_reason() {
        let m = TopdownModel::AmdZen {
            pmu: "cpu".into(),
            width: 6,
        };
        let e = m
            .compute(&readings(&[("ls_not_halted_cyc", 10.0)]))
            .unwrap_err();
        assert!(e.contains("not measured"), "{e}");
        let e = m
            .compute(&readings(&[("ls_not_halted_cyc", 0.0)]))
            .unwrap_err();
        assert!(e.contains("counted 0"), "{e}");
    }

    #[test]
    fn pmu_without_topdown() {
        let r = FakeRoot::new();
        r.intel_cpu_pmu("cpu");
        r.write("proc/cpuinfo", "vendor_id\t: GenuineIntel\n");
        let e = detect(&r.sys(), true).unwrap_err();
        assert!(e.contains("offers no top-down events"), "{e}");
    }
}

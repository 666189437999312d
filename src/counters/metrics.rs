//! Derived metrics over readings. A metric whose inputs are not all counted
//! (or whose denominator counted 0) is absent (`None`, JSON `null`) and
//! `missing` says why; it is never 0.

use super::group::Readings;
use super::topdown::TopDown;
use super::topdown_model::TopdownStatus;
use serde::Serialize;
use std::collections::BTreeMap;

/// Metrics derived from counts. Percentages are 0..100.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DerivedMetrics {
    /// instructions / cycles.
    pub ipc: Option<f64>,
    /// cycles / instructions.
    pub cpi: Option<f64>,
    /// cycles / task time (ns), i.e. average GHz while running.
    pub ghz: Option<f64>,
    /// task-clock / wall time.
    pub cpus_utilized: Option<f64>,
    /// branch-misses / branches.
    pub branch_miss_pct: Option<f64>,
    /// cache-misses / cache-references.
    pub cache_miss_pct: Option<f64>,
    /// L1-dcache-load-misses / L1-dcache-loads.
    pub l1d_miss_pct: Option<f64>,
    /// L1-icache-load-misses / L1-icache-loads.
    pub l1i_miss_pct: Option<f64>,
    /// LLC-load-misses / LLC-loads.
    pub llc_miss_pct: Option<f64>,
    /// dTLB-load-misses / dTLB-loads.
    pub dtlb_miss_pct: Option<f64>,
    /// iTLB-load-misses / iTLB-loads.
    pub itlb_miss_pct: Option<f64>,
    /// stalled-cycles-frontend / cycles.
    pub frontend_stall_pct: Option<f64>,
    /// stalled-cycles-backend / cycles.
    pub backend_stall_pct: Option<f64>,
    /// max(stalled-cycles-frontend, stalled-cycles-backend) / instructions:
    /// perf's "stalled cycles per insn" (with one of the two counted, that one).
    pub stalled_cycles_per_insn: Option<f64>,
    /// Top-down level 1, when the PMU offers it.
    pub topdown: Option<TopDown>,
    /// Why each absent metric is absent (metric name -> reason).
    pub missing: BTreeMap<String, String>,
}

/// Ratio metrics: (field, numerator, denominator, factor).
pub const RATIOS: &[(&str, &str, &str, f64)] = &[
    ("ipc", "instructions", "cycles", 1.0),
    ("cpi", "cycles", "instructions", 1.0),
    ("branch_miss_pct", "branch-misses", "branches", 100.0),
    ("cache_miss_pct", "cache-misses", "cache-references", 100.0),
    (
        "l1d_miss_pct",
        "L1-dcache-load-misses",
        "L1-dcache-loads",
        100.0,
    ),
    (
        "l1i_miss_pct",
        "L1-icache-load-misses",
        "L1-icache-loads",
        100.0,
    ),
    ("llc_miss_pct", "LLC-load-misses", "LLC-loads", 100.0),
    ("dtlb_miss_pct", "dTLB-load-misses", "dTLB-loads", 100.0),
    ("itlb_miss_pct", "iTLB-load-misses", "iTLB-loads", 100.0),
    (
        "frontend_stall_pct",
        "stalled-cycles-frontend",
        "cycles",
        100.0,
    ),
    (
        "backend_stall_pct",
        "stalled-cycles-backend",
        "cycles",
        100.0,
    ),
];

/// `factor * num / den`, or why not.
pub fn ratio(r: &Readings, num: &str, den: &str, factor: f64) -> Result<f64, String> {
    match (r.value(num), r.value(den)) {
        (Ok(n), Ok(d)) => {
            if d > 0.0 {
                Ok(factor * n / d)
            } else {
                Err(format!("{den} counted 0: ratio undefined"))
            }
        }
        (Err(_), Err(_)) => {
            let (wn, wd) = (r.why(num), r.why(den));
            if wn == wd {
                Err(format!("needs {num} and {den}, both {wn}"))
            } else {
                Err(format!("needs {num} ({wn}) and {den} ({wd})"))
            }
        }
        (Err(a), _) => Err(format!("needs {a}")),
        (_, Err(b)) => Err(format!("needs {b}")),
    }
}

/// perf's "stalled cycles per insn": the larger of the frontend and backend
/// stalled cycles over the instructions (perf's stat-shadow takes the max
/// of the two); with only one of the two counted, that one, said in the
/// error of neither.
pub fn stalled_per_insn(r: &Readings) -> Result<f64, String> {
    let fe = r.value("stalled-cycles-frontend");
    let be = r.value("stalled-cycles-backend");
    let stalled = match (&fe, &be) {
        (Ok(a), Ok(b)) => a.max(*b),
        (Ok(a), Err(_)) => *a,
        (Err(_), Ok(b)) => *b,
        (Err(_), Err(_)) => {
            let (wf, wb) = (
                r.why("stalled-cycles-frontend"),
                r.why("stalled-cycles-backend"),
            );
            return Err(if wf == wb {
                format!("needs stalled-cycles-frontend or stalled-cycles-backend, both {wf}")
            } else {
                format!("needs stalled-cycles-frontend ({wf}) or stalled-cycles-backend ({wb})")
            });
        }
    };
    match r.value("instructions") {
        Ok(i) if i > 0.0 => Ok(stalled / i),
        Ok(_) => Err("instructions counted 0: ratio undefined".into()),
        Err(e) => Err(format!("needs {e}")),
    }
}

/// The task (or CPU) time in ns the counts cover: task-clock, else
/// cpu-clock, else the enabled time of the cycles group (for per-thread
/// counters that is the time the thread ran).
fn task_time_ns(r: &Readings) -> Result<f64, String> {
    if let Ok(t) = r.value("task-clock") {
        return Ok(t);
    }
    if let Ok(t) = r.value("cpu-clock") {
        return Ok(t);
    }
    match r.get("cycles").and_then(|c| c.time_enabled_ns) {
        Some(t) if t > 0 => Ok(t as f64),
        _ => Err("needs task-clock (or cpu-clock) or a counted cycles group".into()),
    }
}

impl Readings {
    /// Derived metrics (IPC, miss ratios, GHz, top-down) over these readings.
    pub fn metrics(&self) -> DerivedMetrics {
        compute(self)
    }
}

/// Compute every metric the readings allow.
pub fn compute(r: &Readings) -> DerivedMetrics {
    let mut m = DerivedMetrics::default();
    for (field, num, den, factor) in RATIOS {
        let v = ratio(r, num, den, *factor);
        let slot = match *field {
            "ipc" => &mut m.ipc,
            "cpi" => &mut m.cpi,
            "branch_miss_pct" => &mut m.branch_miss_pct,
            "cache_miss_pct" => &mut m.cache_miss_pct,
            "l1d_miss_pct" => &mut m.l1d_miss_pct,
            "l1i_miss_pct" => &mut m.l1i_miss_pct,
            "llc_miss_pct" => &mut m.llc_miss_pct,
            "dtlb_miss_pct" => &mut m.dtlb_miss_pct,
            "itlb_miss_pct" => &mut m.itlb_miss_pct,
            "frontend_stall_pct" => &mut m.frontend_stall_pct,
            _ => &mut m.backend_stall_pct,
        };
        match v {
            Ok(x) => *slot = Some(x),
            Err(e) => {
                m.missing.insert(field.to_string(), e);
            }
        }
    }
    match stalled_per_insn(r) {
        Ok(v) => m.stalled_cycles_per_insn = Some(v),
        Err(e) => {
            m.missing.insert("stalled_cycles_per_insn".into(), e);
        }
    }
    match (r.value("cycles"), task_time_ns(r)) {
        (Ok(c), Ok(t)) if t > 0.0 => m.ghz = Some(c / t),
        (Err(e), _) => {
            m.missing.insert("ghz".into(), format!("needs cycles: {e}"));
        }
        (_, Err(e)) => {
            m.missing.insert("ghz".into(), e);
        }
        _ => {
            m.missing.insert("ghz".into(), "task time counted 0".into());
        }
    }
    let clock = r.value("task-clock").or_else(|_| r.value("cpu-clock"));
    match (clock, r.wall_ns) {
        (Ok(t), Some(w)) if w > 0 => m.cpus_utilized = Some(t / w as f64),
        (Err(e), _) => {
            m.missing
                .insert("cpus_utilized".into(), format!("needs task-clock: {e}"));
        }
        _ => {
            m.missing
                .insert("cpus_utilized".into(), "wall time not measured".into());
        }
    }
    match &r.topdown {
        TopdownStatus::Model(model) => match model.compute(r) {
            Ok(td) => m.topdown = Some(td),
            Err(e) => {
                m.missing.insert("topdown".into(), e);
            }
        },
        TopdownStatus::Unavailable(why) => {
            m.missing
                .insert("topdown".into(), format!("not available: {why}"));
        }
        TopdownStatus::NotRequested => {
            m.missing.insert("topdown".into(), "not requested".into());
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::env::{PerfEnv, Reason};
    use super::super::events::Event;
    use super::super::group::{aggregate, RawCount, Sample};
    use super::*;

    fn readings(
        names: &[&str],
        samples: Vec<Sample>,
        failures: Vec<Option<(i32, Reason)>>,
    ) -> Readings {
        let evs: Vec<Event> = names.iter().map(|n| Event::named(n)).collect();
        let groups: Vec<usize> = (0..evs.len()).collect();
        Readings {
            events: aggregate(&evs, &groups, &failures, &[samples], &PerfEnv::default()),
            wall_ns: Some(2_000_000),
            topdown: TopdownStatus::NotRequested,
        }
    }

    fn c(v: u64, e: u64, r: u64) -> Sample {
        Sample::Count(RawCount {
            value: v,
            enabled: e,
            running: r,
        })
    }

    #[test]
    fn ipc_cpi_ghz_from_recorded_counts() {
        // A recorded run: 3.0e6 cycles, 4.5e6 instructions over 1 ms task time.
        let r = readings(
            &[
                "task-clock",
                "cycles",
                "instructions",
                "branches",
                "branch-misses",
            ],
            vec![
                c(1_000_000, 1_000_000, 1_000_000),
                c(3_000_000, 1_000_000, 1_000_000),
                c(4_500_000, 1_000_000, 1_000_000),
                c(900_000, 1_000_000, 1_000_000),
                c(9_000, 1_000_000, 1_000_000),
            ],
            vec![None; 5],
        );
        let m = r.metrics();
        assert!((m.ipc.unwrap() - 1.5).abs() < 1e-12);
        assert!((m.cpi.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((m.ghz.unwrap() - 3.0).abs() < 1e-12);
        assert!((m.branch_miss_pct.unwrap() - 1.0).abs() < 1e-12);
        assert!((m.cpus_utilized.unwrap() - 0.5).abs() < 1e-12);
        assert!(m.cache_miss_pct.is_none());
        assert!(m.missing["cache_miss_pct"].contains("not measured"));
    }

    #[test]
    fn stalled_cycles_per_insn_as_perf_prints_it() {
        // Seed 000's Kunpeng 920 (DRDS, cross-NUMA binding): 229,958,980,614
        // instructions, 146,201,062,116 backend and 301,814,831,043 frontend
        // stalled cycles: perf printed "# 1.31 stalled cycles per insn".
        let r = readings(
            &[
                "instructions",
                "stalled-cycles-backend",
                "stalled-cycles-frontend",
            ],
            vec![
                c(229_958_980_614, 1, 1),
                c(146_201_062_116, 1, 1),
                c(301_814_831_043, 1, 1),
            ],
            vec![None; 3],
        );
        let v = r.metrics().stalled_cycles_per_insn.unwrap();
        assert!((v - 1.31).abs() < 0.005, "{v}");
        // Seed 000's Yitian 710 bc run: 4,913,750,141 backend, 4,255,139,235
        // frontend, 114,779,081,188 instructions: "# 0.04 stalled cycles per insn".
        let r = readings(
            &[
                "instructions",
                "stalled-cycles-backend",
                "stalled-cycles-frontend",
            ],
            vec![
                c(114_779_081_188, 1, 1),
                c(4_913_750_141, 1, 1),
                c(4_255_139_235, 1, 1),
            ],
            vec![None; 3],
        );
        let v = r.metrics().stalled_cycles_per_insn.unwrap();
        assert!((v - 0.04).abs() < 0.005, "{v}");
        // One stall event alone still gives the figure; none gives the reason.
        let r = readings(
            &["instructions", "stalled-cycles-backend"],
            vec![c(100, 1, 1), c(25, 1, 1)],
            vec![None; 2],
        );
        assert_eq!(r.metrics().stalled_cycles_per_insn, Some(0.25));
        let r = readings(&["instructions"], vec![c(100, 1, 1)], vec![None]);
        let m = r.metrics();
        assert_eq!(m.stalled_cycles_per_insn, None);
        assert!(m.missing["stalled_cycles_per_insn"].contains("stalled-cycles-frontend"));
    }

    #[test]
    fn multiplexed_inputs_scale_before_ratio() {
        // cycles ran 50% of the time in one group, instructions 25% in another.
        let r = readings(
            &["cycles", "instructions"],
            vec![c(1_000, 2_000, 1_000), c(1_000, 2_000, 500)],
            vec![None, None],
        );
        let m = r.metrics();
        // cycles 2000, instructions 4000
        assert!((m.ipc.unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(r.get("instructions").unwrap().running_pct, Some(25.0));
    }

    #[test]
    fn missing_inputs_are_null_never_zero() {
        let why = Reason::new("no-pmu", "ENOENT: no hardware PMU is registered");
        let r = readings(
            &["task-clock", "cycles", "instructions"],
            vec![
                c(5_000_000, 5_000_000, 5_000_000),
                Sample::Unopened,
                Sample::Unopened,
            ],
            vec![
                None,
                Some((libc::ENOENT, why.clone())),
                Some((libc::ENOENT, why)),
            ],
        );
        let m = r.metrics();
        assert_eq!(m.ipc, None);
        assert_eq!(m.cpi, None);
        assert_eq!(m.ghz, None);
        assert!(m.missing["ipc"].contains("no hardware PMU"));
        assert!(m.missing["ghz"].contains("cycles"));
        assert!(m.cpus_utilized.is_some());
        let j = serde_json::to_value(&m).unwrap();
        assert!(j["ipc"].is_null());
        assert!(j["missing"]["ipc"].is_string());
    }

    #[test]
    fn zero_denominator_and_not_counted() {
        let r = readings(
            &["cycles", "instructions", "cache-references", "cache-misses"],
            vec![c(0, 10, 0), c(100, 10, 10), c(0, 10, 10), c(0, 10, 10)],
            vec![None; 4],
        );
        let m = r.metrics();
        assert_eq!(m.ipc, None);
        assert!(m.missing["ipc"].contains("not counted"));
        assert_eq!(m.cache_miss_pct, None);
        assert!(m.missing["cache_miss_pct"].contains("counted 0"));
    }

    #[test]
    fn ghz_falls_back_to_enabled_time() {
        let r = readings(
            &["cycles"],
            vec![c(2_000_000, 1_000_000, 1_000_000)],
            vec![None],
        );
        assert!((r.metrics().ghz.unwrap() - 2.0).abs() < 1e-12);
    }
}

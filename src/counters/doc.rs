//! The `cpuscope stat` result document, versioned `cpuscope.stat/1`.

use super::env::PerfEnv;
use super::group::EventReading;
use super::metrics::DerivedMetrics;
use super::workload::ExitInfo;
use serde::Serialize;

pub const STAT_SCHEMA: &str = "cpuscope.stat/1";

/// What was counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StatTarget {
    /// `command`, `pid` or `cpus`.
    pub kind: String,
    pub command: Option<Vec<String>>,
    pub pid: Option<i32>,
    /// Threads of `pid` attached at start.
    pub threads: Option<usize>,
    /// CPU list counted (per-CPU mode).
    pub cpus: Option<String>,
}

/// Counts of one CPU (per-CPU mode with `--per-cpu`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerCpu {
    pub cpu: u32,
    pub events: Vec<EventReading>,
    pub metrics: DerivedMetrics,
}

/// Counts over one interval (`-I`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// Seconds since counting started, at the end of the interval.
    pub t_s: f64,
    pub events: Vec<EventReading>,
    pub metrics: DerivedMetrics,
}

/// The whole `cpuscope stat` result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatDoc {
    pub schema: String,
    pub target: StatTarget,
    /// `per-thread` (task counters, inherited by children) or `per-cpu`.
    pub mode: String,
    /// Wall time counted.
    pub elapsed_s: f64,
    /// How the command ended (command mode).
    pub exit: Option<ExitInfo>,
    pub events: Vec<EventReading>,
    pub metrics: DerivedMetrics,
    /// Top-down method used, or null (the reason is in metrics.missing.topdown).
    pub topdown_method: Option<String>,
    pub per_cpu: Option<Vec<PerCpu>>,
    pub intervals: Option<Vec<Interval>>,
    /// The counting environment (PMUs, paranoid level, capabilities).
    pub environment: PerfEnv,
    pub notes: Vec<String>,
}

//! The machine-state family's record payloads: what the frequency and
//! softirq experiments write into their records' `data`, typed, and what
//! every reader (the verdict, the advice) reads back with
//! `ResultRecord::data_as`. A leaf: it imports nothing of the experiments.
//! The JSON keys are the field names (docs/schema-run.md).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `frequency.single_core`'s data: each sampled CPU's clock, what the
/// machine declares, and the timer the figures were taken with.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SingleCoreData {
    pub per_cpu: Vec<CpuClock>,
    pub declared: DeclaredClock,
    /// The timer's own description (`base::timer::TimerInfo`), kept as
    /// written; no reader takes it apart.
    pub timer: serde_json::Value,
}

/// One CPU's single-core clock: median GHz of its samples and their CV.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuClock {
    pub cpu: usize,
    pub ghz: Option<f64>,
    pub cv: Option<f64>,
}

/// Every clock the machine declares (never measured), MHz.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DeclaredClock {
    /// Mean of /proc/cpuinfo's `cpu MHz`.
    pub cpuinfo_mhz: Option<f64>,
    /// What that figure is (the kernel's word, in a VM the TSC rate).
    pub cpuinfo_label: Option<String>,
    /// cpufreq `cpuinfo_max_freq`.
    pub cpufreq_max_mhz: Option<f64>,
    /// cpufreq `base_frequency`.
    pub cpufreq_base_mhz: Option<f64>,
    /// The `@ x.xxGHz` of the model name.
    pub model_name_mhz: Option<f64>,
    /// The calibrated TSC rate, when the timer is the TSC.
    pub tsc_mhz: Option<f64>,
    /// Why there is no cpufreq, when there is none.
    pub cpufreq_reason: Option<String>,
}

/// A team's clock (`frequency.all_cores`, `all_cpus`, `smt_pair`): its
/// CPUs and each thread's mean GHz.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TeamClockData {
    pub cpus: String,
    pub per_thread_ghz: Vec<Option<f64>>,
}

/// `softirq.net_softirq_rate`'s data: the kind's softirqs on each counted
/// CPU over the sample (keyed by CPU id), the sample's length in seconds,
/// and the physical NICs with their NUMA affinity (`name (affinity)`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SoftirqRateData {
    pub per_cpu: BTreeMap<usize, u64>,
    pub seconds: f64,
    pub nics: Vec<String>,
}

/// `softirq.net_node_share`'s data: the kind's softirqs on the node's
/// CPUs, on all counted CPUs, and the sample's length in seconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeShareData {
    pub count: u64,
    pub total: u64,
    pub seconds: f64,
}

/// `softirq.softirq_time`'s data: the node's CPUs' softirq ticks and all
/// their ticks (/proc/stat, USER_HZ) over the sample, and its length.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SoftirqTimeData {
    pub softirq_ticks: u64,
    pub ticks: u64,
    pub seconds: f64,
}

/// `softirq.busiest_cpu_softirq_time`'s data: the busiest CPU, every
/// counted CPU's share of its time in softirq (%, keyed by CPU id; CPUs
/// with no tick left out), and the sample's length in seconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BusiestCpuData {
    pub cpu: usize,
    pub per_cpu_pct: BTreeMap<usize, f64>,
    pub seconds: f64,
}

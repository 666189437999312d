//! The compute family's record payloads, typed: what its experiments write
//! into a record's `data` and every reader reads back with
//! `ResultRecord::data_as`. A leaf: it imports nothing of the experiments.
//! The JSON keys are the field names (docs/schema-run.md). Only part of
//! the family is typed yet (docs/architecture.md says which).

use crate::base::Stats;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `simd.best_throughput`'s data: the best variant and thread point, the
/// turbo state it ran under and the core counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SimdBestData {
    pub variant: String,
    /// The thread point's label (`1`, `per_core`, `all`, …).
    pub threads: String,
    /// Threads at that point.
    pub n: usize,
    /// "on", "off" or "unknown (why)".
    pub turbo: String,
    pub cores: usize,
    pub logical: usize,
}

/// The counters' IPC and clock over a record's counted windows (median),
/// or why each is missing: part of every counted compute record's data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CountedData {
    pub ipc: Option<f64>,
    pub ipc_reason: Option<String>,
    pub ghz_counted: Option<f64>,
    pub ghz_counted_reason: Option<String>,
}

/// A workload figure beside published ones (`data.published`): the label
/// ("published data …" or "not compared"), the set and its citation, one
/// row per published machine; or the reason it is not compared.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound(deserialize = "R: Deserialize<'de>"))]
pub struct PublishedComparison<R> {
    #[serde(default)]
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The block size compared (openssl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<String>,
    /// The set's citation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<R>>,
}

impl<R> Default for PublishedComparison<R> {
    fn default() -> Self {
        PublishedComparison {
            label: String::new(),
            reason: None,
            bytes: None,
            set: None,
            source: None,
            rows: None,
        }
    }
}

impl<R> PublishedComparison<R> {
    /// `label [set: seed citation]`, or the label alone.
    pub fn cited_label(&self) -> String {
        match (&self.set, &self.source) {
            (Some(set), Some(cite)) => format!("{} [{set}: seed {cite}]", self.label),
            _ => self.label.clone(),
        }
    }
}

/// One published machine's time beside this machine's (a row of a bc
/// comparison): compared, or why not.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TimeRow {
    Compared(ComparedTime),
    /// No positive time was measured here.
    NotMeasured(NotMeasuredTime),
    /// The source publishes no time for this machine.
    NotPublished(NotPublishedTime),
}

impl TimeRow {
    pub fn cpu(&self) -> &str {
        match self {
            TimeRow::Compared(r) => &r.cpu,
            TimeRow::NotMeasured(r) => &r.cpu,
            TimeRow::NotPublished(r) => &r.cpu,
        }
    }

    pub fn compared(&self) -> Option<&ComparedTime> {
        match self {
            TimeRow::Compared(r) => Some(r),
            _ => None,
        }
    }

    /// Why the row has no comparison.
    pub fn reason(&self) -> Option<&str> {
        match self {
            TimeRow::Compared(_) => None,
            TimeRow::NotMeasured(r) => Some(&r.reason),
            TimeRow::NotPublished(r) => Some(&r.reason),
        }
    }
}

/// A published time and this machine's speed relative to it (published
/// time / this time × 100%), by wall time and, where measured, CPU time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ComparedTime {
    pub cpu: String,
    pub published_s: f64,
    pub published_ipc: Option<f64>,
    pub published_ghz: Option<f64>,
    pub this_machine_speed_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub this_machine_speed_pct_by_cpu_time: Option<f64>,
    pub note: Option<String>,
}

/// A published machine with no positive time measured here.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotMeasuredTime {
    pub cpu: String,
    /// Always null.
    pub published_s: (),
    pub reason: String,
}

/// A published machine without a published time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NotPublishedTime {
    pub cpu: String,
    /// Always null.
    pub published_s: (),
    pub published_ghz: Option<f64>,
    pub reason: String,
}

/// One published openssl figure per copy beside this machine's.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PerCopyRow {
    pub cpu: String,
    /// The source's words for the process count.
    pub published_processes: Option<String>,
    pub published_copies: u64,
    pub published_mb_s_total: f64,
    pub published_mb_s_per_copy: f64,
    pub this_machine_mb_s_per_copy: f64,
    pub this_machine_per_copy_pct: f64,
}

/// A published set kept as reference only (another binary or workload):
/// its figures, labelled, never compared; or why it is not available.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Reference {
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<Vec<ReferenceFigure>>,
}

/// One figure of a reference set, as published.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReferenceFigure {
    pub machine: String,
    pub metric: String,
    pub unit: String,
    pub value: Option<f64>,
    pub params: BTreeMap<String, Value>,
}

/// `workloads: bc_*`'s data: the command, the CPU it ran on, CPU times,
/// counters, the published comparison where a mapping applies.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BcData {
    pub cpu: usize,
    pub command: String,
    pub bc: String,
    pub ghz_single: Option<f64>,
    pub ghz_source: String,
    pub cpu_s: Vec<f64>,
    #[serde(flatten)]
    pub counted: CountedData,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<PublishedComparison<TimeRow>>,
}

/// `workloads: openssl_aes`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OpensslData {
    pub command: String,
    pub cpus: String,
    pub copies: usize,
    #[serde(flatten)]
    pub counted: CountedData,
    pub published: PublishedComparison<PerCopyRow>,
}

/// `workloads: nop_loop`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NopLoopData {
    pub cpu: usize,
    pub instructions_per_iteration: u64,
    pub ipc_from_instruction_count: Option<f64>,
    pub ghz: Option<f64>,
    pub ghz_source: String,
    pub published: Reference,
    #[serde(flatten)]
    pub counted: CountedData,
}

/// `workloads: branch_order`'s data: one loop-nest shape.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoopNestData {
    pub cpu: usize,
    pub seed_shape: String,
    pub middle: u64,
    pub inner: u64,
    pub instructions_per_inner_iteration: f64,
    pub ipc_from_instruction_count: Option<f64>,
    pub ghz: Option<f64>,
    pub branch_misses: Option<f64>,
    pub branch_misses_reason: Option<String>,
    pub branch_miss_pct: Option<f64>,
    pub branch_miss_pct_reason: Option<String>,
    #[serde(flatten)]
    pub counted: CountedData,
}

/// `workloads: branch_order_ratio`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BranchOrderRatioData {
    pub published: Reference,
}

/// `simd: throughput`'s data: one variant at one thread point.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SimdThroughputData {
    pub cpus: String,
    pub threads: usize,
    pub per_thread_mb_s: Vec<f64>,
    /// The clock at this thread point (the frequency experiment's).
    pub ghz: Option<f64>,
    pub ghz_source: String,
    pub cycles_per_byte: Option<f64>,
    pub lanes: usize,
    pub width_bits: u32,
    /// Turbo as the machine snapshot reports it; null: unknown.
    pub turbo: Option<bool>,
    #[serde(flatten)]
    pub counted: CountedData,
}

/// The knowledge base's entry a peak record is held against (`theory`):
/// the core, how it was matched, its FP and front-end entries as stored,
/// the citation; or why there is none.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Theory {
    Known(KnownCore),
    Unknown { reason: String },
}

impl Theory {
    pub fn known(&self) -> Option<&KnownCore> {
        match self {
            Theory::Known(k) => Some(k),
            Theory::Unknown { .. } => None,
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Theory::Known(_) => None,
            Theory::Unknown { reason } => Some(reason),
        }
    }
}

/// A core of the knowledge base as a peak record cites it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KnownCore {
    /// The core's id in the knowledge base.
    pub core: String,
    pub name: String,
    pub variant: Option<String>,
    pub matched_by: Option<String>,
    /// The entry's FP figures, as the knowledge base holds them.
    pub fp: Value,
    pub frontend: Value,
    /// Where the figures come from.
    pub source: String,
}

/// `peak: fma_flops`'s data at one thread (`threads=1`): the figure per
/// cycle at each clock it can be read against, and the theory.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OneCoreFlopsData {
    pub cpu: usize,
    pub vector_bits: u32,
    pub flops_per_cycle: Option<f64>,
    pub ghz: Option<f64>,
    pub ghz_source: String,
    pub ghz_drift: Option<f64>,
    pub ghz_under_this_width: Option<f64>,
    pub clock_ratio_under_this_width: Option<f64>,
    pub flops_per_cycle_at_that_clock: Option<f64>,
    pub ghz_frequency_experiment: Option<f64>,
    pub flops_per_cycle_vs_frequency_experiment: Option<f64>,
    pub theoretical_flops_per_cycle: Option<f64>,
    /// Always written; None only in a record without it.
    pub theory: Option<Theory>,
}

/// `peak: fma_flops`'s data with one thread per core.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PerCoreFlopsData {
    pub cpus: String,
    pub vector_bits: u32,
    pub per_thread_gflops: Vec<f64>,
    pub theoretical_gflops: Option<f64>,
    pub ghz_all: Option<f64>,
}

/// `peak: fma_flops_per_cycle`'s data: against the theoretical figure
/// where the knowledge base has one, else what the measurement infers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PerCycleData {
    pub vector_bits: u32,
    #[serde(flatten)]
    pub against_theory: Option<AgainstTheory>,
    /// FMA units inferred from the figure (no documented one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred_fma_units: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred: Option<String>,
}

/// A FLOP/cycle figure against its theoretical figure.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgainstTheory {
    pub theoretical: f64,
    pub ratio: f64,
    /// The best sample, and its ratio.
    pub best: Option<f64>,
    pub best_ratio: Option<f64>,
    pub ghz_reference: Option<f64>,
    pub ghz_drift: Option<f64>,
    #[serde(default)]
    pub clock_moved_samples: usize,
    pub ghz_under_this_width: Option<f64>,
}

/// `peak: simd_clock`'s data: the clock while a width runs, against the
/// scalar clock, with the probe's shape and the chain check.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ClockData {
    pub cpu: usize,
    /// Null for the add chain alone (`width=none`).
    pub vector_bits: Option<u32>,
    pub chain_adds: u64,
    pub fmas_per_iteration: u64,
    pub fmas_per_cycle: f64,
    pub fma_rate_per_cycle: Option<f64>,
    pub fma_rate_source: Option<String>,
    pub fma_units_busy: Option<f64>,
    pub ghz_scalar: Option<f64>,
    pub ratio_vs_scalar: Option<f64>,
    pub high_ratio_vs_scalar: Option<f64>,
    pub change_pct: Option<f64>,
    pub ratio_stats: Option<Stats>,
    pub noise_tolerance: Option<f64>,
    pub drop_beyond_noise: Option<bool>,
    pub above_beyond_noise: Option<bool>,
    pub check_double_chain_ratio: Option<f64>,
    pub check_double_chain_agrees: Option<bool>,
    pub ghz_frequency_experiment: Option<f64>,
}

/// `peak: fma_flops_per_actual_cycle`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ActualCycleData {
    pub vector_bits: u32,
    pub flops_per_nominal_cycle: Option<f64>,
    pub nominal_clock: String,
    pub actual_clock: String,
    pub ghz_scalar: Option<f64>,
    pub ghz_actual: Option<f64>,
    pub clock_ratio: f64,
    pub clock_drop_beyond_noise: bool,
    pub theoretical: Option<f64>,
    pub ratio: Option<f64>,
}

/// `rate: jobs_per_hour`'s data: the copies, their CPUs, the seconds until
/// the last copy finished (per round) and each copy's, the memory
/// placement and where the pages lay.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RateData {
    pub copies: usize,
    pub cpus: String,
    pub makespan_s: Vec<f64>,
    pub copy_s: Vec<Vec<f64>>,
    pub work_iterations_per_copy: Option<u64>,
    /// The memory placement's label; None: the default policy.
    pub mem: Option<String>,
    pub mem_nodes: String,
    /// None: not counted (no memory placement asked for).
    pub pages_per_node: Option<PagesPerNode>,
}

/// Pages per NUMA node (node number as text → pages), or why not counted.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PagesPerNode {
    NotCounted { not_available: String },
    Counted(BTreeMap<String, u64>),
}

/// `rate: efficiency`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EfficiencyData {
    pub copies: usize,
    pub jobs_per_hour: f64,
    pub one_copy_jobs_per_hour: f64,
}

/// `rate: mem_change`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MemChangeData {
    pub jobs_per_hour: f64,
    pub interleave_jobs_per_hour: f64,
}

/// `placement: throughput`'s data: the set's CPUs and what it answers,
/// per-thread figures; relative to the best set of its comparison, and for
/// the spread comparison seed 000's published reference.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SetThroughputData {
    pub cpus: String,
    pub what: String,
    pub per_thread: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_reference: Option<PublishedComparison<SeedSetRow>>,
}

/// One of seed 000's bindings as % of its best (published tpmC).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SeedSetRow {
    /// The cores as the source names them.
    pub cpus: Option<String>,
    /// The planner set it stands for.
    pub set: Option<String>,
    #[serde(rename = "tpmC")]
    pub tpm_c: Option<f64>,
    pub relative_pct: Option<f64>,
}

/// `placement: memory_latency`'s data: the CPU, the memory policy, what
/// it answers, the node distance, where the pages lay.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryPlacementData {
    pub cpu: usize,
    pub policy: Option<String>,
    pub what: String,
    pub distance: Option<u32>,
    /// The buffer's page report, as stored.
    pub pages: Value,
}

/// `simd: verified_variants`'s data: each form's check, by name.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifiedData {
    pub variants: BTreeMap<String, VariantCheck>,
}

/// One SIMD form checked against RFC 8439 and the scalar form, or why it
/// was not.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VariantCheck {
    Passed {
        /// FNV-1a digest of the keystream, hex.
        digest: String,
        rfc8439: String,
        matches_scalar: bool,
    },
    Failed {
        /// Always null.
        digest: (),
        reason: String,
    },
}

/// `simd: efficiency`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SimdEfficiencyData {
    pub threads: usize,
    pub throughput_mb_s: f64,
    pub one_thread_mb_s: f64,
}

/// `simd: smt_yield`'s data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SmtYieldData {
    pub per_core_mb_s: f64,
    pub all_mb_s: f64,
    pub cores: usize,
    pub logical: usize,
}

/// `peak: instruction_rate`'s data: seed 000's formula with the documented
/// and the seed's stated width, the nop-loop bound, the theory.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct InstructionRateData {
    pub formula_g_instr_s: Option<f64>,
    pub formula_seed_stated_g_instr_s: Option<f64>,
    pub issue_widths: Option<IssueWidths>,
    pub nop_bound: Option<NopBoundData>,
    pub threads_per_core: usize,
    pub smt_factor: f64,
    pub cores: usize,
    pub theory: Option<Theory>,
}

/// The knowledge base's front-end widths (instructions per cycle).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IssueWidths {
    pub decode: Option<f64>,
    pub uop_cache: Option<f64>,
    pub dispatch: Option<f64>,
    pub seed_stated_issue_width: Option<f64>,
}

/// The nop loop's bound: G instructions/s, per core per cycle, its basis.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NopBoundData {
    pub g_instr_s: f64,
    pub per_core_per_cycle: f64,
    pub basis: String,
}

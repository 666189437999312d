//! The coherence family's record payloads: what c2c and sync write into
//! their records' `data`, typed, and what every reader (the renderers, the
//! verdict) reads back with `ResultRecord::data_as`. A leaf: it imports
//! nothing of the experiments (c2c's inferred latency groups, `Inference`,
//! live here so that the matrix record can carry them). The JSON keys are
//! the field names (docs/schema-run.md).

use serde::{Deserialize, Serialize};

/// `c2c.matrix`'s data: one method's matrix (one-way ns, rounded to 0.1 ns,
/// null where not measured), each pair's spread, the declared relations
/// and levels, the inferred latency groups, how it was measured and how
/// disturbed the measurement was. What the one c2c renderer reads (for
/// `cpuscope c2c`, the run summary and the HTML report alike).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MatrixData {
    pub method: String,
    /// Always "ns".
    pub unit: String,
    /// How one-way is derived ("round-trip time / 2").
    pub one_way: String,
    pub cpus: Vec<usize>,
    /// Row-major by `cpus`; null on the diagonal and where not measured.
    pub matrix_ns: Vec<Vec<Option<f64>>>,
    /// Every measured pair, or on large machines the widest-spread ones
    /// (`pairs_detail` says which).
    pub pairs: Vec<PairCell>,
    pub smt_siblings: Vec<[usize; 2]>,
    pub pairs_detail: String,
    /// The declared relations' names, indexed by `relation_index`.
    pub relation_names: Vec<String>,
    /// Per pair of `cpus`, the index of its relation in `relation_names`
    /// (-1 on the diagonal).
    pub relation_index: Vec<Vec<i32>>,
    pub declared_levels: Vec<DeclaredLevelData>,
    /// Always written; an Option for records that might lack it.
    pub inference: Option<Inference>,
    /// The single-core clock used for cycles; None without one.
    pub ghz_single: Option<f64>,
    pub plan: PlanFacts,
    pub preemption_note: Option<String>,
    /// How disturbed the measurement was (absent in older records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
}

impl MatrixData {
    /// True when CPUs `a` and `b` are among the record's SMT sibling pairs.
    pub fn smt(&self, a: usize, b: usize) -> bool {
        self.smt_siblings
            .iter()
            .any(|p| (p[0] == a && p[1] == b) || (p[0] == b && p[1] == a))
    }
}

/// One pair's detail in a matrix record: its CPUs (initiator first), its
/// figure and sample count, and its spread.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PairCell {
    pub cpus: [usize; 2],
    /// The pair's figure (median of its pass medians with three passes or
    /// more, else of its samples).
    pub median_ns: f64,
    pub samples: usize,
    #[serde(flatten)]
    pub spread: PairSpread,
}

/// A pair's spread (ns), as a matrix record's pair and `cpuscope c2c`'s
/// pair view both write it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PairSpread {
    /// Median of all samples pooled over the passes.
    pub pooled_median_ns: f64,
    pub p25_ns: f64,
    pub p75_ns: f64,
    pub mean_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub cv: f64,
    pub iqr_over_median: f64,
    /// Median of each pass, in pass order.
    pub pass_medians_ns: Vec<f64>,
    /// Samples during which the initiator was switched out; None when the
    /// kernel does not say.
    pub preempted_samples: Option<usize>,
    /// Involuntary switches of the responder over the whole pair.
    pub responder_switches: Option<i64>,
    /// More than `c2c::PREEMPTED_PAIR_SHARE` of its samples disturbed
    /// (absent in older records).
    pub marked_preempted: bool,
    /// The figure from the clean samples only; None when every sample was
    /// preempted.
    pub clean_median_ns: Option<f64>,
}

/// A declared level as a matrix record keeps it: its names, its label and
/// how many groups it has among the measured CPUs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DeclaredLevelData {
    pub names: Vec<String>,
    pub label: String,
    pub groups: usize,
}

/// How a matrix was measured, as its record keeps it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanFacts {
    pub pairs_planned: usize,
    pub pairs_measured: usize,
    pub rounds_planned: usize,
    pub rounds_done: usize,
    pub max_pairs_per_round: usize,
    pub round_trips_per_sample: u64,
    pub samples_per_pair_per_pass: usize,
    pub passes: usize,
    pub warmup_batches: usize,
    pub estimated_s: f64,
    pub budget_s: f64,
    pub elapsed_s: f64,
    pub full_matrix: bool,
    pub notes: Vec<String>,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
}

/// A matrix record's `data.disturbance`: pairs marked preempted, their
/// samples, steal time, and whether the figure is called disturbed (most
/// pairs marked preempted, or material steal time).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Disturbance {
    pub pairs_measured: usize,
    pub pairs_preempted: usize,
    /// `c2c::PREEMPTED_PAIR_SHARE`, as it was.
    pub preempted_pair_share: f64,
    pub samples: usize,
    pub samples_preempted: usize,
    pub responder_switches: i64,
    /// None when not measured.
    pub steal: Option<StealTime>,
    /// `c2c::STEAL_MATERIAL_SHARE`, as it was.
    pub steal_material_share: f64,
    pub disturbed: bool,
    pub why: Option<String>,
}

impl Disturbance {
    /// One line: disturbed or not, by how many pairs, how much steal time.
    pub fn line(&self) -> String {
        let steal = match &self.steal {
            None => "steal time not measured".to_string(),
            Some(StealTime {
                unavailable: Some(why),
                ..
            }) => format!("steal time not available ({why})"),
            Some(s) => format!(
                "steal time {:.2} s = {:.1}% of the measured CPUs' time over {:.1} s",
                s.seconds,
                s.share * 100.0,
                s.wall_s
            ),
        };
        format!(
            "{}{} of {} pairs marked preempted ({} of {} samples), {steal}",
            if self.disturbed { "DISTURBED: " } else { "" },
            self.pairs_preempted,
            self.pairs_measured,
            self.samples_preempted,
            self.samples
        )
    }
}

/// Steal time over the c2c experiment (a harness measurement; its stored
/// form is this struct's).
pub use crate::harness::pairs::StealTime;

/// One latency level found in the matrix (`infer`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MeasuredLevel {
    /// 1 = fastest.
    pub level: usize,
    /// Median one-way latency of the measured pairs whose first common group is this level.
    pub latency_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Measured pairs at this level.
    pub pairs: usize,
    /// Latency minus the previous level's (None for level 1).
    pub increment_ns: Option<f64>,
    /// Groups of this level (CPU ids), each one cluster after this level's merges.
    pub groups: Vec<Vec<usize>>,
    /// Distinct group sizes (CPUs), ascending.
    pub group_sizes: Vec<usize>,
    /// Mean number of other CPUs a CPU reaches first at this level.
    pub cpus_per_cpu: f64,
    /// Declared levels this one matches (names), empty when none.
    pub matches: Vec<String>,
    /// Label of the matched declared level, or of where it lies between.
    pub label: String,
    /// Jaccard index against the best declared level.
    pub jaccard: f64,
    /// Pairs measured in one group here but declared apart, and the reverse (examples).
    pub exceptions: Vec<String>,
}

/// What the matrix says about the machine (`infer::infer_with`): a matrix
/// record's `data.inference`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Inference {
    pub levels: Vec<MeasuredLevel>,
    /// Disagreements between measured structure and the declared one.
    pub findings: Vec<String>,
    /// Other remarks (partial matrix, missing declarations).
    pub notes: Vec<String>,
    /// Per declared relation: median latency and pair count.
    pub relations: Vec<RelationSummary>,
    /// True when the matrix had unmeasured pairs.
    pub partial: bool,
    /// Why no latency group was inferred although pairs were measured (too
    /// few clean pairs); None when groups were inferred or nothing was measured.
    pub not_inferred: Option<String>,
    /// Measured pairs the grouping used (clean ones), of `pairs_measured`.
    pub pairs_clean: usize,
    pub pairs_measured: usize,
}

/// One declared relation's pairs: their median latency and range.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RelationSummary {
    pub relation: String,
    pub label: String,
    pub pairs: usize,
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
}

/// `sync.atomic_increment`'s data: the CPUs that contended and the
/// aggregate ns per increment (both or all threads together).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AtomicIncrementData {
    pub cpus: SyncCpus,
    pub aggregate_ns_per_increment: f64,
}

/// The CPUs of a contended record: a labelled placement's two CPUs, or a
/// thread count's CPUs as a CPU list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SyncCpus {
    /// `[a, b]`, in placement order.
    Pair([usize; 2]),
    /// A CPU list (`0,2-3`).
    List(String),
}

/// `sync.lock`'s data (two threads): their CPUs and the share of
/// acquisitions that took the lock from the other thread.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LockData {
    pub cpus: [usize; 2],
    pub handoff_fraction: f64,
}

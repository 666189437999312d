//! The memory family's record payloads: what its experiments (latency,
//! tlb_reach, numa_matrix, loaded_latency, bandwidth, seed_loops) write
//! into each record's `data`, typed, and what every reader (the renderers,
//! the verdict, the advice) reads back with `ResultRecord::data_as`. A leaf:
//! it imports nothing of the experiments, so experiments and renderers both
//! stand on it. The JSON keys are the field names (docs/schema-run.md).

use serde::{Deserialize, Serialize};

/// `latency.curve`'s data: one load-to-use latency curve, every size.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CurveData {
    /// The CPU the chase ran on.
    pub cpu: usize,
    /// Bytes between two visited lines.
    pub stride: usize,
    /// The clock that turns ns into cycles; None when there is none.
    pub ghz: Option<f64>,
    /// Where that clock comes from, or why there is none.
    pub ghz_source: String,
    /// One point per working-set size, ascending.
    pub points: Vec<CurvePoint>,
    pub plateaus: Vec<Plateau>,
    /// Where memory starts and what it does beyond (None without a step).
    pub memory: Option<MemoryPart>,
    /// Each declared cache level against the curve.
    pub levels: Vec<LevelMatch>,
    /// The huge pages obtained for a 2 MiB-page curve (the placement
    /// layer's page report, kept as written; no reader takes it apart).
    pub pages_obtained: Option<serde_json::Value>,
}

/// One size of a latency curve: ns per load (median of the repetitions,
/// with their min, max, CV and count) and cycles when a clock is known.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CurvePoint {
    pub bytes: usize,
    pub ns: f64,
    pub min: f64,
    pub max: f64,
    pub cv: f64,
    pub n: usize,
    pub cycles: Option<f64>,
}

/// A cache level's figure (`latency.L1d` … `latency.L4`): the working set
/// of the point it was read at, its cycles, and the level's match.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LevelData {
    pub working_set_bytes: usize,
    pub cycles: Option<f64>,
    #[serde(rename = "match")]
    pub level: LevelMatch,
}

/// A cache level's cycles record (`latency.L1d_cycles` …): the core's
/// published load-to-use cycles beside the measured ones. Without a
/// published figure only `published_cycles` (null) is written.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PublishedData {
    pub published_cycles: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_over_published: Option<f64>,
    /// More than 20% off the published figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<bool>,
}

/// `latency.dram`'s data: the point it was read at and the sizes pooled.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DramData {
    pub working_set_bytes: usize,
    pub pooled_sizes: Vec<usize>,
    pub cycles: Option<f64>,
    /// The working sets of the memory plateau the figure is read on, first
    /// and last (past the last cache step, before any page-walk climb);
    /// None when the curve showed no step into memory (the figure is then
    /// the largest size's, which may still be a cache) or in runs before it.
    pub memory_plateau_bytes: Option<[usize; 2]>,
}

/// `latency.page_walk_climb`'s data.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClimbData {
    pub climb: Climb,
    pub dram_ns: f64,
    pub memory_from_bytes: usize,
}

/// A run of sizes with about the same latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// Index of the first and last point.
    pub first: usize,
    pub last: usize,
    pub from_bytes: usize,
    pub to_bytes: usize,
    /// Median latency of its points, ns.
    pub level_ns: f64,
    /// Capacity estimate where it ends: where the curve crosses the
    /// geometric middle of this level and the next (None for the last).
    pub edge_bytes: Option<usize>,
    /// Not flat: a run of two or more rising points between two plateaus
    /// (a level too small or too shared to flatten, as an L3 in a VM).
    pub ramp: bool,
}

/// A declared cache level set against what the curve shows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LevelMatch {
    pub name: String,
    pub declared_bytes: usize,
    /// The step of the curve taken as this level's capacity.
    pub detected_bytes: Option<usize>,
    /// detected / declared.
    pub ratio: Option<f64>,
    /// Within `latency::LEVEL_TOLERANCE` of the declared size (and, on 4 KiB
    /// pages, not a TLB-miss plateau): only then is the plateau this level.
    pub agrees: bool,
    /// Latency of the plateau this level ends (ns).
    pub level_ns: Option<f64>,
    pub plateau: Option<usize>,
    /// Named although its step is far below the declared size: the
    /// effective capacity this CPU gets of the level (a VM's share of a host
    /// cache shared with other tenants, a partitioned cache); the figure is
    /// the level's, its capacity is `detected_bytes`.
    #[serde(default)]
    pub share: bool,
    pub note: String,
}

/// Where a latency curve reaches memory, and what it does beyond.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryPart {
    /// Index of the first point past the last step (memory starts here).
    pub first: usize,
    pub from_bytes: usize,
    /// Index of the last point of the memory plateau (within `latency::DRAM_FLAT`
    /// of the first).
    pub flat_last: usize,
    pub flat_to_bytes: usize,
    /// Median latency of the memory plateau's points, ns.
    pub dram_ns: f64,
    /// The climb beyond the memory plateau, if latency goes on rising.
    pub climb: Option<Climb>,
}

/// Latency rising past the memory plateau as the working set grows: page
/// walks (nested ones in a VM, whose host walks its own tables for the
/// guest's memory; beyond the TLB reach of the page size on metal), not a
/// cache level and not DRAM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Climb {
    /// First point of the climb (the last point of the plateau is its base).
    pub first: usize,
    pub from_bytes: usize,
    pub to_bytes: usize,
    /// Latency at the largest working set, ns.
    pub ns_at_end: f64,
    /// Least-squares slope of ns against log2(size) from the plateau's last
    /// point to the end: ns added per doubling of the working set.
    pub ns_per_doubling: f64,
}

/// `tlb_reach`'s page-walk record: the extra cost of a load as the pages
/// it touches grow (one line per page, minus the same lines packed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageWalkData {
    pub page_bytes: usize,
    pub points: Vec<PageWalkPoint>,
}

/// One page count of the page-walk curve; medians, ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageWalkPoint {
    pub pages: usize,
    pub spread_ns: f64,
    pub packed_ns: f64,
    /// `spread_ns - packed_ns`: what the page walks add.
    pub extra_ns: f64,
}

/// `numa_matrix.matrix`'s data: latency and read bandwidth from the CPUs of
/// each node (`rows`) to each memory target (`targets`: the nodes, then
/// interleave), the declared distances and the measured latency ratio over
/// the declared distance ratio (node columns only).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NumaMatrixData {
    pub rows: Vec<usize>,
    pub targets: Vec<String>,
    pub latency_ns: Vec<Vec<Option<f64>>>,
    pub bandwidth_gbs: Vec<Vec<Option<f64>>>,
    pub declared_distance: Vec<Vec<Option<u32>>>,
    pub measured_over_declared: Vec<Vec<Option<f64>>>,
    pub latency_bytes: usize,
    pub array_bytes: usize,
}

/// A `numa_matrix` cell's latency or bandwidth record's data where the
/// firmware declares memory performance (ACPI HMAT): the declared figure
/// for the cell's initiator and target, or why there is none.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DeclaredCell {
    /// Where the figure was read (`raw HMAT table, read_latency PXM 0 →
    /// PXM 1`, or `HMAT access1 via sysfs, initiators 0`).
    pub source: Option<String>,
    /// Read latency (ns) or read bandwidth (GB/s, the MB/s declared / 1000).
    pub declared: Option<f64>,
    pub unit: Option<String>,
    pub measured_over_declared: Option<f64>,
    /// Beyond ×1.5 either way and outside the samples' range.
    pub mismatch: bool,
    /// Why nothing is declared for this cell while HMAT declares others.
    pub not_declared: Option<String>,
}

/// The interleave column's label in [`NumaMatrixData::targets`].
pub const INTERLEAVE_TARGET: &str = "interleave";

impl NumaMatrixData {
    /// The node columns (every target but interleave).
    pub fn node_targets(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter(|t| t.as_str() != INTERLEAVE_TARGET)
            .cloned()
            .collect()
    }
}

/// `loaded_latency.curve`'s data: the chase latency at each number of
/// streaming threads, with the bandwidth they drew.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadedCurveData {
    pub points: Vec<LoadedCurvePoint>,
    pub chain_bytes: usize,
    pub array_bytes: usize,
}

/// One load level of the loaded-latency curve (medians).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadedCurvePoint {
    pub streams: usize,
    pub latency_ns: Option<f64>,
    pub bandwidth_gbs: Option<f64>,
}

/// One loaded-latency figure's data: the streams' GB/s per round, their
/// median, and the CPUs that streamed and chased.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadedPointData {
    pub bandwidth_gbs: Vec<f64>,
    pub bandwidth_median_gbs: Option<f64>,
    pub stream_cpus: Vec<usize>,
    pub chaser_cpu: usize,
}

/// `bandwidth.saturation_threads`'s data: the sweep's median GB/s per
/// thread count, as `[threads, GB/s]` pairs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SaturationData {
    pub curve: Vec<(usize, Option<f64>)>,
}

/// A bandwidth figure's data: the CPUs, the spread of the team's start and
/// work, best and median GB/s, the write-allocate factor and what it makes
/// on the bus, and (DRAM scope) the efficiency against the DIMMs'
/// theoretical bandwidth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BandwidthData {
    pub cpus: Vec<usize>,
    /// Rounds with a thread switched out (None: not counted here).
    pub preempted_rounds: Option<usize>,
    pub start_skew_us_median: Option<f64>,
    pub start_skew_us_max: Option<f64>,
    pub thread_imbalance_median: Option<f64>,
    pub best_gbs: Option<f64>,
    pub median_gbs: Option<f64>,
    /// Bytes on the bus per byte counted (2 for a normal write, 1.5 for
    /// a normal copy or triad, 1 otherwise).
    pub bus_factor: f64,
    pub bus_gbs_median: Option<f64>,
    pub bus_gbs_best: Option<f64>,
    pub working_set_bytes: usize,
    /// DRAM scope with a known DIMM configuration: the theoretical GB/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theoretical_gbs: Option<f64>,
    /// The median over the theoretical GB/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_efficiency: Option<f64>,
}

/// `latency.L3_instance`'s data: the CPUs of the L3 instance chased from
/// (a CPU list, `0-7`) and the working set, inside the L3 plateau.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct L3InstanceData {
    pub instance_cpus: String,
    pub working_set_bytes: usize,
}

/// `seed_loops.cacheline_ratio`'s data: ns per element each loop visits
/// (every element; every 16th) and the array's elements.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CachelineRatioData {
    pub ns_per_element_every: f64,
    pub ns_per_element_every16: f64,
    pub elements: usize,
}

//! The compute family's record payloads, typed: what its experiments write
//! into a record's `data` and every reader reads back with
//! `ResultRecord::data_as`. A leaf: it imports nothing of the experiments.
//! The JSON keys are the field names (docs/schema-run.md). Only part of
//! the family is typed yet (docs/architecture.md says which).

use serde::{Deserialize, Serialize};

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

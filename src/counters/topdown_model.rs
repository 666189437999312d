//! What top-down level 1 is computed from on this machine ([`TopdownModel`])
//! and whether it is wanted and possible ([`TopdownStatus`]): a leaf that
//! the counter group carries and `topdown` detects and computes, so neither
//! imports the other for it.

use serde::Serialize;

/// How top-down is computed on this machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TopdownModel {
    /// Intel Ice Lake+ PERF_METRICS through `slots` + `topdown-*`.
    IntelPerfMetrics { pmu: String },
    /// Intel pre-Ice Lake slot events.
    IntelSlots { pmu: String },
    /// AMD Zen 4 (width 6) / Zen 5 (width 8) dispatch slots.
    AmdZen { pmu: String, width: u32 },
    /// ARM STALL_SLOT events; `slots` from the PMU's caps/slots.
    ArmSlots { pmu: String, slots: u64 },
}

/// Whether top-down metrics are wanted and possible.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TopdownStatus {
    #[default]
    NotRequested,
    Unavailable(String),
    Model(TopdownModel),
}

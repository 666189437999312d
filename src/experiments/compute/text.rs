//! What the compute experiments' text tables share: a record's param, the
//! records of a metric, "n/a (why)". Each experiment's tables are in its
//! folder's `text.rs` (simd, peak, workloads, rate, placement_study).
//! Renders stored records; never measures.

use crate::results::schema::{MetricId, ResultRecord};

pub(crate) fn param<'a>(r: &'a ResultRecord, k: &str) -> Option<&'a str> {
    r.params.get(k).and_then(|v| v.as_str())
}

pub(crate) use crate::view::param_text;

pub(crate) fn of(rs: &[ResultRecord], id: MetricId) -> Vec<&ResultRecord> {
    rs.iter().filter(|r| r.is(id)).collect()
}

pub(crate) fn na(r: &ResultRecord) -> String {
    format!(
        "not available: {}",
        r.unavailable_reason
            .as_deref()
            .unwrap_or("no reason recorded")
            .trim_start_matches("not available: ")
    )
}

//! loaded_latency's text: a curve's points as a table.

use crate::experiments::memory::payload::LoadedCurveData;
use crate::experiments::memory::text::cell;
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

/// The points of a curve record (streams, latency, stream bandwidth),
/// after a blank line.
pub fn points(r: &ResultRecord) -> Option<String> {
    let mut o = String::new();
    let d = r.data_as::<LoadedCurveData>()?;
    let _ = writeln!(o, "\nLoaded latency (latency vs bandwidth)");
    let _ = writeln!(
        o,
        "    {:>7}  {:>10}  {:>12}",
        "streams", "latency ns", "stream GB/s"
    );
    for p in &d.points {
        let _ = writeln!(
            o,
            "    {:>7}  {:>10}  {:>12}",
            p.streams,
            cell(p.latency_ns),
            cell(p.bandwidth_gbs)
        );
    }
    Some(o)
}

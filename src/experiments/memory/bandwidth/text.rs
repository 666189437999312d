//! bandwidth's text: a saturation sweep as a table.

use crate::experiments::memory::payload::SaturationData;
use crate::experiments::memory::text::cell;
use crate::experiments::render::params_text;
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

/// The sweep of a saturation record (threads, GB/s, gain over the step
/// before), after a blank line; nothing under two steps.
pub fn sweep(r: &ResultRecord) -> Option<String> {
    let mut o = String::new();
    let d = r.data_as::<SaturationData>()?;
    if d.curve.len() < 2 {
        return None;
    }
    let _ = writeln!(o, "\nBandwidth sweep: {}", params_text(r));
    let _ = writeln!(o, "    {:>7}  {:>9}  {:>8}", "threads", "GB/s", "gain");
    let mut prev: Option<f64> = None;
    for &(n, g) in &d.curve {
        let gain = match (prev, g) {
            (Some(a), Some(b)) if a > 0.0 => format!("{:+.1}%", (b / a - 1.0) * 100.0),
            _ => String::new(),
        };
        let _ = writeln!(o, "    {:>7}  {:>9}  {:>8}", n, cell(g), gain);
        prev = g;
    }
    Some(o)
}

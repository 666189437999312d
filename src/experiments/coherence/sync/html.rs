//! sync's charts in the report: its costs as log-scale bars (they span
//! 0.1 ns to tens of microseconds). Not typed yet (docs/views.md).

use crate::experiments::coherence::c2c::html::svg_log_bars;
use crate::results::schema::Run;

/// The synchronisation costs as log-scale bars (empty without sync records).
pub fn sync_charts(run: &Run) -> String {
    let mut out = String::new();
    let prefix = format!("{}: ", super::EXP);
    let sync: Vec<(String, f64)> = run
        .records_of(super::EXP)
        .filter(|r| r.unit == "ns")
        .filter_map(|r| {
            let label = r.label();
            let label = label.strip_prefix(&prefix).unwrap_or(&label).to_string();
            Some((label, r.value?))
        })
        .collect();
    if !sync.is_empty() {
        out.push_str("<div>");
        out.push_str(&svg_log_bars("Synchronisation costs", "ns", &sync));
        out.push_str("</div>");
    }
    out
}

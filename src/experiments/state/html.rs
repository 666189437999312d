//! HTML renderers of the machine-state family.

use crate::experiments::state::frequency;
use crate::results::schema::Run;

/// Effective frequency by thread placement, as bars.
pub fn frequency(run: &Run) -> String {
    let bars: Vec<(String, f64)> = run
        .records_of(frequency::EXP)
        .filter(|r| r.unit == "GHz")
        .filter_map(|r| Some((r.metric.clone(), r.value?)))
        .collect();
    crate::base::html::svg_bars("Effective frequency by thread placement", "GHz", &bars)
}

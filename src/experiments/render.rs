//! What every experiment's renderers share: the generic text section (one
//! line per figure) that an experiment gets when it brings no renderer of
//! its own, and the line format its own renderers may reuse.

use crate::base::fmt::fmt_num;
use crate::results::schema::{ResultRecord, Run};
use serde_json::Value;
use std::fmt::Write as _;

/// `k=v k=v` of a record's parameters.
pub fn params_text(r: &ResultRecord) -> String {
    r.params
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            o => format!("{k}={o}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One line for a figure: `metric [params]  value unit  (median of n, min, max, CV)`,
/// `(derived)` for a figure computed from others, or `not available: reason`.
pub fn figure_line(r: &ResultRecord) -> String {
    let label = format!("{:<14} {}", r.metric, params_text(r));
    match (r.value, &r.stats) {
        (Some(v), Some(st)) => format!(
            "  {label:<48} {:>10} {:<6} median of {}, min {} max {}, CV {:.1}%{}",
            fmt_num(v),
            r.unit,
            st.n,
            fmt_num(st.min),
            fmt_num(st.max),
            st.cv * 100.0,
            if st.is_noisy() { "  NOISY" } else { "" }
        ),
        (Some(v), None) => format!("  {label:<48} {:>10} {:<6} (derived)", fmt_num(v), r.unit),
        _ => format!(
            "  {label:<48} not available: {}",
            r.unavailable_reason
                .as_deref()
                .unwrap_or("no reason recorded")
        ),
    }
}

/// The generic section of experiment `exp`: a `== exp` heading, then each of
/// its records of `run` as a [`figure_line`] with its notes. Empty when the
/// run has none.
pub fn generic_text(exp: &str, run: &Run) -> String {
    let mut out = String::new();
    for r in run.records_of(exp) {
        if out.is_empty() {
            let _ = writeln!(out, "== {exp}");
        }
        let _ = writeln!(out, "{}", figure_line(r));
        for n in &r.notes {
            let _ = writeln!(out, "      {n}");
        }
    }
    out
}

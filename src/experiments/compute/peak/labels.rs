//! Peak's records read back as words: the width of a record, the clock
//! while a width runs and how it changed (used by its view, simd's and the
//! text renderers).

use super::{
    clock_width_label, FMA_FLOPS, FMA_FLOPS_PER_ACTUAL_CYCLE, FMA_FLOPS_PER_CYCLE, SIMD_CLOCK,
};
use crate::experiments::compute::payload::{
    ActualCycleData, ClockData, OneCoreFlopsData, PerCoreFlopsData, PerCycleData,
};
use crate::kernels::fma::Width;
use crate::results::schema::ResultRecord;

/// The register width of an FMA record in bits: the number its `width`
/// parameter names, or SVE's recorded `vector_bits`.
pub fn record_bits(r: &ResultRecord) -> Option<u32> {
    let w = r.params.get("width").and_then(|v| v.as_str())?;
    w.parse().ok().or_else(|| recorded_bits(r))
}

/// The `vector_bits` an FMA or clock record's data holds.
fn recorded_bits(r: &ResultRecord) -> Option<u32> {
    let bits = if r.is(FMA_FLOPS) && r.params.get("threads").and_then(|v| v.as_str()) == Some("1") {
        r.data_as::<OneCoreFlopsData>()?.vector_bits
    } else if r.is(FMA_FLOPS) {
        r.data_as::<PerCoreFlopsData>()?.vector_bits
    } else if r.is(FMA_FLOPS_PER_CYCLE) {
        r.data_as::<PerCycleData>()?.vector_bits
    } else if r.is(FMA_FLOPS_PER_ACTUAL_CYCLE) {
        r.data_as::<ActualCycleData>()?.vector_bits
    } else if r.is(SIMD_CLOCK) {
        r.data_as::<ClockData>()?.vector_bits?
    } else {
        return None;
    };
    (bits > 0).then_some(bits)
}

/// How an FMA record's width is shown: "512-bit", "scalar", "SVE 256-bit".
pub fn record_width_label(r: &ResultRecord) -> String {
    let w = r
        .params
        .get("width")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    Width::label(w, record_bits(r))
}

/// How a [`SIMD_CLOCK`] record's width is shown: "512-bit", "scalar",
/// "SVE 256-bit", or "add chain alone" for the reference (`width=none`).
pub fn clock_record_label(r: &ResultRecord) -> String {
    match r.params.get("width").and_then(|v| v.as_str()) {
        Some("none") => clock_width_label(None),
        _ => record_width_label(r),
    }
}

/// A [`SIMD_CLOCK`] record read for reports: (clock GHz, change against
/// the scalar clock as a ratio, noise tolerance, drop beyond noise); None
/// when it has no figure.
pub fn clock_change_of(r: &ResultRecord) -> Option<(f64, f64, f64, bool)> {
    let d = r.data_as::<ClockData>()?;
    let ratio = d.ratio_vs_scalar?;
    let tol = d.noise_tolerance?;
    let ghz = d.ghz_scalar.map(|g| g * ratio).or(r.value)?;
    Some((ghz, ratio, tol, d.drop_beyond_noise.unwrap_or(false)))
}

/// The words the verdict uses for the clock while a width runs: "512-bit
/// runs at 3.10 GHz (−8% vs scalar)" when the drop is beyond noise, else
/// "512-bit runs at the scalar clock (±2%)"; None without a figure.
pub fn clock_words(r: &ResultRecord) -> Option<String> {
    let (ghz, ratio, tol, drop) = clock_change_of(r)?;
    let label = clock_record_label(r);
    Some(if drop {
        format!(
            "{label} runs at {ghz:.2} GHz ({}% vs scalar)",
            signed_pct(ratio - 1.0)
        )
    } else {
        format!("{label} runs at the scalar clock (±{:.0}%)", tol * 100.0)
    })
}

/// "−8", "+3", "0": a change in whole percent with a real minus sign.
fn signed_pct(x: f64) -> String {
    let p = (x * 100.0).round();
    if p < 0.0 {
        format!("\u{2212}{}", -p)
    } else if p > 0.0 {
        format!("+{p}")
    } else {
        "0".into()
    }
}

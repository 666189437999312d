//! What SIMD throughput and SMT yield shows (docs/views.md): its place among
//! the experiments, its section of the summary, its charts in the report, its
//! verdict lines, the figures the fleet compares across hosts and its rules of
//! advice.

use super::BEST_THROUGHPUT;
use crate::base::fmt::fmt_num;
use crate::experiments::compute::peak;
use crate::results::schema::{ResultRecord, Run};
use crate::view::finding::{ev, from_result, noisy_note, Evidence, Finding, Severity};
use crate::view::verdict::{fig, has, noisy_mark, short};
use crate::view::{
    any, param_text, report_section, Depth, KeyFigure, Rank, Rule, Section, VerdictLine, Views,
};
use serde_json::Value;

/// The views of this experiment (the registry holds it).
pub struct SimdViews;

impl Views for SimdViews {
    fn rules(&self) -> &'static [Rule] {
        RULES
    }

    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        simd_line(run).into_iter().collect()
    }

    /// The summary: its table and peak's per configuration. The report: its
    /// table, then peak's figures.
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Report => report_section(depth, super::EXP, || {
                let mut blocks = super::table_view::table_blocks(&run.results);
                blocks.extend(peak::view::report_blocks(run));
                blocks
            }),
            Depth::Summary | Depth::Command => super::text::sections_of(&run.results),
        }
    }

    fn rank(&self) -> Rank {
        Rank(70)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: BEST_THROUGHPUT,
    label: "best SIMD throughput",
    keep: any,
    top: None,
}];

/// Its rules of advice ([`Views::rules`]).
const RULES: &[Rule] = &[Rule {
    id: "smt-yield-wide-simd",
    rank: 60,
    timed: true,
    find: smt_yield_wide_simd,
}];

const WIDE_SIMD: &[&str] = &[
    "avx", "avx2", "avx512", "avx-512", "avx512f", "amx", "sve", "sve2", "fma", "256", "512",
];

fn simd_of(r: &ResultRecord) -> Option<String> {
    [
        "isa", "simd", "variant", "width", "vector", "kernel", "level",
    ]
    .iter()
    .find_map(|k| param_text(r, k))
}

fn is_wide(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    WIDE_SIMD.iter().any(|w| l.contains(w))
}

/// Below this yield (every hardware thread over one thread per core), a
/// second hardware thread adds little.
const LOW_YIELD: f64 = 1.15;

/// A second hardware thread adds little to wide-SIMD throughput (< 15%).
pub fn smt_yield_wide_simd(run: &Run) -> Vec<Finding> {
    // (a) Explicit yields: metric mentions smt and yield/gain/scaling, unit "x" (ratio) or "%" (gain).
    let out: Vec<Finding> = run.results.iter().filter_map(explicit_yield).collect();
    if !out.is_empty() {
        return out;
    }
    // (b) Throughput with one thread per core vs all hardware threads, same other params.
    run.results
        .iter()
        .filter_map(|a| per_core_against_all(run, a))
        .collect()
}

/// The finding of an explicit SMT yield record `r` of a wide SIMD kind below
/// [`LOW_YIELD`].
fn explicit_yield(r: &ResultRecord) -> Option<Finding> {
    let m = r.metric.to_ascii_lowercase();
    if !(m.contains("smt") && (m.contains("yield") || m.contains("gain") || m.contains("scal"))) {
        return None;
    }
    let (Some(v), Some(isa)) = (r.value, simd_of(r)) else {
        return None;
    };
    if !is_wide(&isa) {
        return None;
    }
    // "x"/"ratio": all threads over one per core; "%": the gain;
    // "cores": what each extra hardware thread adds, as a fraction of a core.
    let y = match r.unit.as_str() {
        "x" | "ratio" | "×" => v,
        "%" => 1.0 + v / 100.0,
        "cores" => 1.0 + v,
        _ => return None,
    };
    if y >= LOW_YIELD {
        return None;
    }
    Some(smt_finding(
        &isa,
        y,
        vec![ev(
            format!("SMT yield for {isa} ({})", r.metric),
            format!("{} {}", fmt_num(v), r.unit),
            from_result(r),
        )],
        &[r],
    ))
}

/// The finding of a wide SIMD throughput `a` with one thread per core whose
/// twin with every hardware thread (same other params) gains less than
/// [`LOW_YIELD`].
fn per_core_against_all(run: &Run, a: &ResultRecord) -> Option<Finding> {
    if !a.higher_is_better || !has(a, "threads", "per_core") {
        return None;
    }
    let (Some(va), Some(isa)) = (a.value, simd_of(a)) else {
        return None;
    };
    if !is_wide(&isa) {
        return None;
    }
    let mut want = a.params.clone();
    want.insert("threads".into(), Value::from("all"));
    let b = run.results.iter().find(|b| {
        b.experiment == a.experiment && b.metric == a.metric && b.unit == a.unit && b.params == want
    })?;
    let vb = b.value?;
    if va <= 0.0 {
        return None;
    }
    let y = vb / va;
    if y >= LOW_YIELD {
        return None;
    }
    Some(smt_finding(
        &isa,
        y,
        vec![
            ev(
                format!("{} ({isa}), one thread per core", a.metric),
                format!("{} {}", fmt_num(va), a.unit),
                from_result(a),
            ),
            ev(
                format!("{} ({isa}), every hardware thread", b.metric),
                format!("{} {}", fmt_num(vb), b.unit),
                from_result(b),
            ),
        ],
        &[a, b],
    ))
}

fn smt_finding(isa: &str, y: f64, evidence: Vec<Evidence>, recs: &[&ResultRecord]) -> Finding {
    Finding {
        rule: "smt-yield-wide-simd",
        severity: Severity::Advice,
        title: format!(
            "SMT adds {:+.0}% to {isa} throughput: the second hardware thread of a core competes for the same vector units",
            (y - 1.0) * 100.0
        ),
        advice: format!(
            "For {isa} code, run as many threads as physical cores, not logical CPUs (one per core, \
             e.g. the first sibling of each core): the extra threads add contention, cache pressure and \
             jitter, not throughput. Scalar and SSE code may still gain from SMT.{}",
            noisy_note(recs)
        ),
        evidence,
    }
}

// ---------------------------------------------------------------- verdict

fn simd_line(run: &Run) -> Option<VerdictLine> {
    let one: Vec<&ResultRecord> = run
        .records(super::THROUGHPUT)
        .filter(|r| r.value.is_some() && has(r, "threads", "1"))
        .collect();
    // The clock while each FMA width runs: the widths whose clock drops
    // beyond noise by name, the others as running at the scalar clock.
    let clocks: Vec<&ResultRecord> = run
        .records(peak::SIMD_CLOCK)
        .filter(|r| r.value.is_some() && has(r, "threads", "1") && !has(r, "width", "none"))
        .collect();
    let mut dropped = Vec::new();
    let mut same = Vec::new();
    for c in &clocks {
        match peak::labels::clock_change_of(c) {
            Some((.., true)) => {
                dropped.extend(peak::labels::clock_words(c).map(|w| w + noisy_mark(c)))
            }
            Some(_) => same.push(peak::labels::clock_record_label(c) + noisy_mark(c)),
            None => {}
        }
    }
    if !same.is_empty() {
        let tol = clocks
            .iter()
            .filter_map(|c| peak::labels::clock_change_of(c).map(|x| x.2))
            .fold(0.0, f64::max);
        dropped.push(format!(
            "{} {} at the scalar clock (±{:.0}%)",
            same.join(", "),
            if same.len() == 1 { "runs" } else { "run" },
            tol * 100.0
        ));
    }
    let clock_text = (!dropped.is_empty()).then(|| format!("FMA clock: {}", dropped.join("; ")));
    let Some(scalar) = one.iter().find(|r| has(r, "variant", "scalar")) else {
        return clock_text.map(|c| VerdictLine::plain("SIMD", c));
    };
    let best = one
        .iter()
        .max_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))?;
    let mut t = format!(
        "ChaCha20 {} {} = ×{:.1} scalar",
        param_text(best, "variant").unwrap_or_default(),
        fig(best),
        best.value.unwrap_or(0.0) / scalar.value.unwrap_or(1.0)
    );
    if let Some(c) = &clock_text {
        t.push_str(&format!(" · {c}"));
    }
    let yields: Vec<String> = run
        .records(super::SMT_YIELD)
        .filter(|r| r.value.is_some())
        .map(|r| {
            format!(
                "{} {} {}",
                param_text(r, "variant").unwrap_or_default(),
                fmt_num(r.value.unwrap_or(0.0)),
                r.unit
            )
        })
        .collect();
    if !yields.is_empty() {
        t.push_str(&format!(" · SMT yield {}", yields.join(", ")));
    } else if let Some(r) = run.records(super::SMT_YIELD).next() {
        t.push_str(&format!(
            " · SMT yield n/a ({})",
            short(
                r.unavailable_reason.as_deref().unwrap_or("not measured"),
                40
            )
        ));
    }
    Some(VerdictLine::plain("SIMD", t))
}

//! What SIMD throughput and SMT yield shows beside its own section (docs/views.md): its place
//! among the experiments, the figures the fleet compares across hosts and
//! its rules of advice.

use super::BEST_THROUGHPUT;
use crate::base::fmt::fmt_num;
use crate::results::schema::ResultRecord;
use crate::results::schema::Run;
use crate::view::finding::{ev, from_result, noisy_note, Evidence, Finding, Severity};
use crate::view::param_text;
use crate::view::{any, KeyFigure, Rank, Rule, Views};
use serde_json::Value;

/// The views of this experiment (the registry holds it).
pub struct SimdViews;

impl Views for SimdViews {
    fn rules(&self) -> &'static [Rule] {
        RULES
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

/// A second hardware thread adds little to wide-SIMD throughput (< 15%).
pub fn smt_yield_wide_simd(run: &Run) -> Vec<Finding> {
    const LOW: f64 = 1.15;
    let mut out = Vec::new();
    // (a) Explicit yields: metric mentions smt and yield/gain/scaling, unit "x" (ratio) or "%" (gain).
    for r in &run.results {
        let m = r.metric.to_ascii_lowercase();
        if !(m.contains("smt") && (m.contains("yield") || m.contains("gain") || m.contains("scal")))
        {
            continue;
        }
        let (Some(v), Some(isa)) = (r.value, simd_of(r)) else {
            continue;
        };
        if !is_wide(&isa) {
            continue;
        }
        // "x"/"ratio": all threads over one per core; "%": the gain;
        // "cores": what each extra hardware thread adds, as a fraction of a core.
        let y = match r.unit.as_str() {
            "x" | "ratio" | "×" => v,
            "%" => 1.0 + v / 100.0,
            "cores" => 1.0 + v,
            _ => continue,
        };
        if y >= LOW {
            continue;
        }
        out.push(smt_finding(
            &isa,
            y,
            vec![ev(
                format!("SMT yield for {isa} ({})", r.metric),
                format!("{} {}", fmt_num(v), r.unit),
                from_result(r),
            )],
            &[r],
        ));
    }
    if !out.is_empty() {
        return out;
    }
    // (b) Throughput with one thread per core vs all hardware threads, same other params.
    for a in &run.results {
        if !a.higher_is_better || param_text(a, "threads").as_deref() != Some("per_core") {
            continue;
        }
        let (Some(va), Some(isa)) = (a.value, simd_of(a)) else {
            continue;
        };
        if !is_wide(&isa) {
            continue;
        }
        let mut want = a.params.clone();
        want.insert("threads".into(), Value::from("all"));
        let Some(b) = run.results.iter().find(|b| {
            b.experiment == a.experiment
                && b.metric == a.metric
                && b.unit == a.unit
                && b.params == want
        }) else {
            continue;
        };
        let Some(vb) = b.value else { continue };
        if va <= 0.0 {
            continue;
        }
        let y = vb / va;
        if y >= LOW {
            continue;
        }
        out.push(smt_finding(
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
        ));
    }
    out
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

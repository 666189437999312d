//! Text rendering of core-to-core latency: the
//! matrix (numbers, or a heat map on large machines), the latency groups in
//! the style of seed 001, one pair, the plan, the CSV form. Never measures.

use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::coherence::c2c::inference_view::inference_blocks;
use crate::experiments::coherence::c2c::{self, PairStats, PairView, Plan};
use crate::experiments::coherence::infer::LatencyMatrix;
use crate::experiments::coherence::payload::{MatrixData, PairCell};
use crate::kernels::c2c::Method;
use crate::results::schema::ResultRecord;
use crate::view::Section;
use std::fmt::Write as _;

/// Matrices up to this many CPUs are printed with numbers; larger ones as a heat map.
pub const MAX_NUMERIC: usize = 24;

/// Glyphs of the heat map, fastest to slowest.
pub const HEAT: &[char] = &['.', ':', '-', '=', '+', '*', '#', '%', '@'];

/// The matrix as CSV: a header `cpu,<ids>`, then one row per CPU; medians in
/// ns with 3 decimals, empty where not measured (and on the diagonal).
pub fn matrix_csv(m: &LatencyMatrix) -> String {
    let mut s = String::from("cpu");
    for c in &m.cpus {
        let _ = write!(s, ",{c}");
    }
    s.push('\n');
    for i in 0..m.n() {
        let _ = write!(s, "{}", m.cpus[i]);
        for j in 0..m.n() {
            match m.get(i, j) {
                Some(v) if i != j => {
                    let _ = write!(s, ",{v:.3}");
                }
                _ => s.push(','),
            }
        }
        s.push('\n');
    }
    s
}

/// Bucket of a value in [lo, hi] for the heat map.
fn bucket(v: f64, lo: f64, hi: f64) -> usize {
    if hi <= lo {
        return 0;
    }
    let t = ((v - lo) / (hi - lo)).clamp(0.0, 1.0);
    ((t * (HEAT.len() - 1) as f64).round() as usize).min(HEAT.len() - 1)
}

/// The matrix: numbers (ns, SMT siblings marked `s`) for small machines, a
/// one-glyph-per-cell heat map with a legend for large ones.
pub fn render_matrix(m: &LatencyMatrix, is_smt: &dyn Fn(usize, usize) -> bool) -> String {
    let n = m.n();
    let mut out = String::new();
    let vals: Vec<f64> = m.ns.iter().flatten().copied().collect();
    if vals.is_empty() {
        out.push_str("  (no pair measured)\n");
        return out;
    }
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let smt = |i: usize, j: usize| is_smt(m.cpus[i], m.cpus[j]);
    let idw = m
        .cpus
        .iter()
        .map(|c| c.to_string().len())
        .max()
        .unwrap_or(1)
        .max(3);
    if n <= MAX_NUMERIC {
        write_numeric_matrix(&mut out, m, &smt, idw);
    } else {
        write_heat_map(&mut out, m, &smt, idw, (lo, hi));
    }
    out
}

/// The matrix with numbers (ns, SMT siblings marked `s`; `smt` takes
/// indices), CPU ids `idw` wide.
fn write_numeric_matrix(
    out: &mut String,
    m: &LatencyMatrix,
    smt: &dyn Fn(usize, usize) -> bool,
    idw: usize,
) {
    let n = m.n();
    let w = 7;
    let _ = write!(out, "  {:>idw$}", "");
    for c in &m.cpus {
        let _ = write!(out, "{c:>w$}");
    }
    out.push('\n');
    for i in 0..n {
        let _ = write!(out, "  {:>idw$}", m.cpus[i]);
        for j in 0..n {
            let cell = if i == j {
                "·".to_string()
            } else {
                match m.get(i, j) {
                    Some(v) => format!(
                        "{}{}",
                        if v >= 100.0 {
                            format!("{v:.0}")
                        } else {
                            format!("{v:.1}")
                        },
                        if smt(i, j) { "s" } else { "" }
                    ),
                    None => "?".to_string(),
                }
            };
            let _ = write!(out, "{cell:>w$}");
        }
        out.push('\n');
    }
    out.push_str("  ns one-way, median per pair; · = same CPU, ? = not measured");
    if (0..n).any(|i| (0..n).any(|j| smt(i, j))) {
        out.push_str(", s = SMT siblings");
    }
    out.push('\n');
}

/// The matrix as a heat map, one glyph per cell between `lo` and `hi` ns
/// (SMT siblings marked `s`; `smt` takes indices), with its legend.
fn write_heat_map(
    out: &mut String,
    m: &LatencyMatrix,
    smt: &dyn Fn(usize, usize) -> bool,
    idw: usize,
    (lo, hi): (f64, f64),
) {
    let n = m.n();
    // Column header: CPU ids vertically would be tall; print every 10th.
    let _ = write!(out, "  {:>idw$} ", "");
    let mut hdr = String::new();
    let mut j = 0;
    while j < n {
        let label = m.cpus[j].to_string();
        if j % 10 == 0 && j + label.len() <= n {
            hdr.push_str(&label);
            j += label.len();
        } else {
            hdr.push(' ');
            j += 1;
        }
    }
    out.push_str(hdr.trim_end());
    out.push('\n');
    for i in 0..n {
        let _ = write!(out, "  {:>idw$} ", m.cpus[i]);
        for j in 0..n {
            let ch = if i == j {
                ' '
            } else {
                match m.get(i, j) {
                    Some(v) if smt(i, j) => {
                        let _ = v;
                        's'
                    }
                    Some(v) => HEAT[bucket(v, lo, hi)],
                    None => '?',
                }
            };
            out.push(ch);
        }
        out.push('\n');
    }
    let step = (hi - lo) / (HEAT.len() - 1) as f64;
    out.push_str("  heat map, ns one-way:");
    for (k, g) in HEAT.iter().enumerate() {
        let _ = write!(out, " {g}≈{:.0}", lo + step * k as f64);
    }
    out.push_str("; s = SMT siblings, ? = not measured\n");
}

/// The plan: CPUs, pairs, rounds, batch sizes, estimate.
pub fn render_plan(plan: &Plan) -> String {
    let mut out = String::new();
    let cpus = crate::base::CpuSet::from_ids(plan.cpus.iter().copied());
    let _ = writeln!(out, "c2c plan: CPUs {cpus} ({})", plan.cpus.len());
    let _ = writeln!(
        out,
        "  methods {}; {} pairs{} in {} rounds of at most {} pairs in parallel",
        plan.methods
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        plan.pairs.len(),
        if plan.full_matrix {
            " (full matrix)"
        } else {
            " (sampled)"
        },
        plan.rounds.len(),
        plan.max_round_width()
    );
    let _ = writeln!(
        out,
        "  per pair: {} pass(es) of {} samples of {} round trips after {} warm-up batches",
        plan.passes, plan.samples, plan.round_trips, plan.warmup
    );
    let _ = writeln!(
        out,
        "  estimated {:.1} s (budget {:.0} s; planned with {:.0} ns round trips)",
        plan.est_secs,
        plan.budget_secs,
        crate::experiments::coherence::c2c::PLAN_RTT_NS
    );
    for n in &plan.notes {
        let _ = writeln!(out, "  note: {}", for_terminal(n));
    }
    out
}

/// The data of a c2c matrix record (`payload::MatrixData`); None for
/// another record or none stored.
pub fn matrix_data(r: &ResultRecord) -> Option<MatrixData> {
    if !r.is(c2c::MATRIX) {
        return None;
    }
    r.data_as()
}

/// A matrix record's matrix (medians rounded to 0.1 ns, as stored).
pub fn latency_matrix(d: &MatrixData) -> LatencyMatrix {
    let mut m = LatencyMatrix::new(d.cpus.clone());
    let n = m.n();
    for (i, row) in d.matrix_ns.iter().enumerate().take(n) {
        for (j, v) in row.iter().enumerate().take(n) {
            m.ns[i * n + j] = *v;
        }
    }
    m
}

/// One method's matrix record: the one c2c renderer.
pub fn render_matrix_record(r: &ResultRecord) -> String {
    let mut out = String::new();
    let method = r
        .params
        .get("method")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let Some(v) = r.value else {
        let _ = writeln!(
            out,
            "  {method}: not available: {}",
            r.unavailable_reason
                .as_deref()
                .unwrap_or("no reason recorded")
        );
        return out;
    };
    let d = matrix_data(r).unwrap_or_default();
    let _ = writeln!(
        out,
        "  {method}: {} CPUs, {} pair(s), median over pairs {} ns",
        d.cpus.len(),
        r.repetitions,
        fmt_num(v)
    );
    write_measurement(&mut out, &d);
    if let Some(inf) = &d.inference {
        out.push_str(&crate::view::text::sections(&[Section {
            id: c2c::EXP.into(),
            title: String::new(),
            blocks: inference_blocks(inf, d.ghz_single),
        }]));
    }
    out
}

/// How a matrix record was measured: the plan as run, the
/// matrix, its spread and disturbances.
fn write_measurement(out: &mut String, d: &MatrixData) {
    let p = &d.plan;
    let _ = writeln!(
        out,
        "  one-way = round trip / 2; {} pass(es) × {} samples of {} round trips per pair; {} pairs, {} rounds, {:.1} s",
        p.passes, p.samples_per_pair_per_pass, p.round_trips_per_sample, p.pairs_measured, p.rounds_done, p.elapsed_s
    );
    if let Some(s) = &p.stopped {
        let _ = writeln!(out, "  stopped: {s}");
    }
    for n in &p.notes {
        let _ = writeln!(out, "  note: {}", for_terminal(n));
    }
    out.push_str(&render_matrix(&latency_matrix(d), &|a, b| d.smt(a, b)));
    let noisy: Vec<&PairCell> = d
        .pairs
        .iter()
        .filter(|c| c.spread.iqr_over_median > 0.10)
        .collect();
    if let Some(c) = noisy.first() {
        let of = if d.pairs.len() == p.pairs_measured {
            format!("{} pairs", d.pairs.len())
        } else {
            format!("the {} widest-spread pairs kept in detail", d.pairs.len())
        };
        let _ = writeln!(
            out,
            "  {} of {of} spread widely (interquartile range above 10% of the median), e.g. {},{}: {:.1}–{:.1} ns",
            noisy.len(),
            c.cpus[0],
            c.cpus[1],
            c.spread.p25_ns,
            c.spread.p75_ns
        );
    }
    if let Some(n) = &d.preemption_note {
        let _ = writeln!(out, "  {}", for_terminal(n));
    }
    if let Some(dist) = &d.disturbance {
        let _ = writeln!(out, "  {}", for_terminal(&dist.line()));
    }
    if let [c] = d.pairs.as_slice() {
        let passes = &c.spread.pass_medians_ns;
        if passes.len() >= 3 {
            if let Some(s) = crate::base::Stats::from_samples(passes) {
                let _ = writeln!(
                    out,
                    "  over {} passes the pair's median ranged {:.1}–{:.1} ns (CV {:.1}%)",
                    passes.len(),
                    s.min,
                    s.max,
                    s.cv * 100.0
                );
            }
        }
    }
}

/// One pair, every method.
#[allow(clippy::too_many_arguments)]
pub fn render_pair(
    a: usize,
    b: usize,
    relation: &str,
    smt: bool,
    results: &[(Method, PairStats)],
    plan: &Plan,
    ghz: Option<f64>,
    clock_note: &str,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "CPUs {a} -> {b}: {relation}{}; initiator CPU {a} (first touches the line)",
        if smt { " (SMT siblings)" } else { "" }
    );
    let _ = writeln!(
        out,
        "  {} pass(es) of {} samples of {} round trips after {} warm-up batches; one-way = round trip / 2",
        plan.passes, plan.samples, plan.round_trips, plan.warmup
    );
    for (m, p) in results {
        let cyc = ghz
            .map(|g| format!(" = {:.0} cycles", p.median() * g))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<10} one-way {:>7.1} ns{cyc}  (quartiles {:.1}–{:.1}, mean {:.1}, min {:.1}, max {:.1}); round trip {:.1} ns",
            m.as_str(),
            p.median(),
            p.p25,
            p.p75,
            p.stats.mean,
            p.stats.min,
            p.stats.max,
            p.median() * 2.0
        );
        if p.pass_medians.len() >= 3 {
            if let Some(s) = crate::base::Stats::from_samples(&p.pass_medians) {
                let _ = writeln!(
                    out,
                    "             over {} passes the median ranged {:.1}–{:.1} ns (CV {:.1}%)",
                    p.pass_medians.len(),
                    s.min,
                    s.max,
                    s.cv * 100.0
                );
            }
        }
        if let Some(n) =
            crate::experiments::coherence::c2c::preemption_note(std::slice::from_ref(p))
        {
            let _ = writeln!(out, "             {}", for_terminal(&n));
        }
    }
    let _ = writeln!(out, "  {clock_note}");
    out
}

/// `cpuscope c2c`'s text of every c2c matrix record of `results` (one per
/// method): how it was measured, the matrix and its spread, the latency
/// groups (the run summary's are typed: `view.rs`).
pub fn render_matrices(results: &[ResultRecord]) -> String {
    let mats: Vec<&ResultRecord> = results.iter().filter(|r| r.is(c2c::MATRIX)).collect();
    if mats.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("Core-to-core latency (one-way = round trip / 2, median per pair)\n");
    for r in mats {
        out.push_str(&render_matrix_record(r));
    }
    out
}

/// One pair per method as CSV.
pub fn pair_csv(view: &PairView) -> String {
    let (lo, hi) = view.cpus;
    let mut out =
        String::from("method,cpu_a,cpu_b,one_way_ns,p25_ns,p75_ns,min_ns,max_ns,cv,samples\n");
    for (m, p) in &view.results {
        out += &format!(
            "{},{lo},{hi},{:.3},{:.3},{:.3},{:.3},{:.3},{:.5},{}\n",
            m.as_str(),
            p.median(),
            p.p25,
            p.p75,
            p.stats.min,
            p.stats.max,
            p.stats.cv,
            p.stats.n
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_header_and_blank_diagonal() {
        let mut m = LatencyMatrix::new(vec![0, 1, 2]);
        m.set_sym(0, 1, 40.0);
        m.set_sym(1, 2, 90.5);
        let s = matrix_csv(&m);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "cpu,0,1,2");
        assert_eq!(lines[1], "0,,40.000,");
        assert_eq!(lines[2], "1,40.000,,90.500");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn heat_buckets_span_the_glyphs() {
        assert_eq!(bucket(10.0, 10.0, 20.0), 0);
        assert_eq!(bucket(20.0, 10.0, 20.0), HEAT.len() - 1);
        assert_eq!(bucket(5.0, 5.0, 5.0), 0);
    }
}

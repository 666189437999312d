//! Text of peak: FMA FLOPs per width against the theory, the clock under each width, as typed blocks of
//! simd's section. Renders stored records; never measures.

use crate::base::fmt::fmt_num;
use crate::experiments::compute::payload::{
    ActualCycleData, AgainstTheory, ClockData, OneCoreFlopsData, PerCoreFlopsData, PerCycleData,
    Theory,
};
use crate::experiments::compute::peak;
use crate::experiments::compute::text::{na, of, param};
use crate::results::schema::ResultRecord;
use crate::view::{Align, Block, Cell, Table};

/// FLOPs/cycle per width against the theoretical figure, per scalar-clock
/// cycle and per actual cycle (at the clock while that width runs); the
/// clock under each width; seed 000's formula. Nothing without a figure.
pub fn summary_blocks(rs: &[ResultRecord]) -> Vec<Block> {
    let pc = of(rs, peak::FMA_FLOPS_PER_CYCLE);
    let fl = of(rs, peak::FMA_FLOPS);
    let actual = of(rs, peak::FMA_FLOPS_PER_ACTUAL_CYCLE);
    let clocks = of(rs, peak::SIMD_CLOCK);
    if pc.is_empty() && fl.is_empty() {
        return Vec::new();
    }
    let mut t = Table::new(&[
        "width",
        "threads",
        "GFLOP/s",
        "FLOP/cycle",
        "theoretical",
        "ratio",
        "clock (vs scalar)",
        "FLOP/actual cycle",
        "ratio",
        "note",
    ]);
    for c in [2, 3, 7] {
        t.columns[c].align = Align::Right;
    }
    let mut left_out = Vec::new();
    for f in &fl {
        if let Err(e) = t.push(peak_row(f, &pc, &actual)) {
            left_out.push(Block::Note(format!("a row left out: {e}")));
        }
    }
    let mut out = vec![
        Block::Heading("Peak FP64 FMA, measured vs theoretical".into()),
        Block::Table(t),
    ];
    out.extend(left_out);
    out.push(Block::Note(
        "FLOP/cycle: per scalar-clock cycle (the add chain right before and after each sample); FLOP/actual cycle: at the clock while that width runs (below)".into(),
    ));
    out.extend(simd_clock_blocks(&clocks));
    out.extend(peak_theory_and_rate(rs, &fl));
    out
}

/// One row of the peak table: a width and thread count's GFLOP/s, FLOP per
/// scalar-clock cycle against the theoretical figure, and per actual cycle.
fn peak_row(f: &ResultRecord, pc: &[&ResultRecord], actual: &[&ResultRecord]) -> Vec<Cell> {
    let w = param(f, "width").unwrap_or("?");
    let t = param(f, "threads").unwrap_or("?");
    let shown = peak::labels::record_width_label(f);
    let Some(v) = f.value else {
        return vec![
            Cell::Text(shown),
            Cell::Text(t.into()),
            Cell::Absent {
                text: na(f),
                span: 8,
            },
        ];
    };
    let same = |r: &&&ResultRecord| param(r, "width") == Some(w) && param(r, "threads") == Some(t);
    let p = pc.iter().find(same);
    let per = p.and_then(|r| r.value);
    let against = p
        .and_then(|r| r.data_as::<PerCycleData>())
        .and_then(|d| d.against_theory);
    let theo = against.as_ref().map(|a| a.theoretical);
    let (theo_s, ratio_s) = theory_cells(f, t, v, per, against.as_ref());
    // Per actual cycle: the clock while this width runs.
    let (clock_s, act_s, act_ratio_s) = actual_cycle_cells(t, actual.iter().find(same), theo);
    let mut flags = Vec::new();
    if let Some(d) = against
        .as_ref()
        .and_then(|a| a.ghz_drift)
        .filter(|d| d.abs() > 0.05)
    {
        flags.push(format!(
            "unreliable: clock moved {:+.0}% during the kernel",
            d * 100.0
        ));
    }
    [
        shown,
        t.into(),
        fmt_num(v),
        per.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into()),
        theo_s,
        ratio_s,
        clock_s,
        act_s,
        act_ratio_s,
        flags.join("; "),
    ]
    .into_iter()
    .map(Cell::Text)
    .collect()
}

/// The theoretical figure and the ratio against it of a peak row with
/// `t` threads and value `v` (GFLOP/s): per cycle on one core (`per`, with
/// the best sample), else GFLOP/s on every core.
fn theory_cells(
    f: &ResultRecord,
    t: &str,
    v: f64,
    per: Option<f64>,
    against: Option<&AgainstTheory>,
) -> (String, String) {
    let theo = against.map(|a| a.theoretical);
    if t == "1" {
        (
            theo.map(|x| format!("{x:.0} FLOP/cycle"))
                .unwrap_or_else(|| "n/a".into()),
            per.zip(theo)
                .map(|(a, b)| {
                    let best = against
                        .and_then(|a| a.best)
                        .map(|x| format!(" (peak {:.1}%)", x / b * 100.0))
                        .unwrap_or_default();
                    format!("{:.1}%{best}", a / b * 100.0)
                })
                .unwrap_or_else(|| "n/a".into()),
        )
    } else {
        let tg = f
            .data_as::<PerCoreFlopsData>()
            .and_then(|d| d.theoretical_gflops);
        (
            tg.map(|x| format!("{x:.0} GFLOP/s"))
                .unwrap_or_else(|| "n/a".into()),
            tg.map(|x| format!("{:.1}%", v / x * 100.0))
                .unwrap_or_else(|| "n/a".into()),
        )
    }
}

/// The clock, FLOP per actual cycle and its ratio to the theoretical `theo`
/// of a peak row with `t` threads, from its per-actual-cycle record `a`.
fn actual_cycle_cells(
    t: &str,
    a: Option<&&ResultRecord>,
    theo: Option<f64>,
) -> (String, String, String) {
    match (t, a) {
        ("1", Some(a)) if a.value.is_some() => {
            let av = a.value.unwrap_or(f64::NAN);
            let clock = match a.data_as::<ActualCycleData>() {
                Some(ActualCycleData {
                    ghz_actual: Some(g),
                    clock_ratio: r,
                    ..
                }) => format!("{g:.2} GHz ({:+.1}%)", (r - 1.0) * 100.0),
                Some(d) => format!("{:+.1}%", (d.clock_ratio - 1.0) * 100.0),
                None => "-".into(),
            };
            (
                clock,
                format!("{av:.2}"),
                theo.map(|x| format!("{:.1}%", av / x * 100.0))
                    .unwrap_or_else(|| "n/a".into()),
            )
        }
        ("1", _) => ("n/a".into(), "n/a".into(), String::new()),
        _ => (String::new(), String::new(), String::new()),
    }
}

/// Where the theoretical figures come from, and the nop loop's rate.
fn peak_theory_and_rate(rs: &[ResultRecord], fl: &[&ResultRecord]) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(th) = fl
        .iter()
        .filter(|r| param(r, "threads") == Some("1"))
        .find_map(|r| r.data_as::<OneCoreFlopsData>()?.theory)
    {
        out.push(match th {
            Theory::Known(k) => {
                Block::Note(format!("theoretical: {}; source: {}", k.core, k.source))
            }
            Theory::Unknown { reason } => {
                Block::NotAvailable(format!("theoretical: not available: {reason}"))
            }
        });
    }
    for r in of(rs, peak::INSTRUCTION_RATE) {
        match r.value {
            Some(v) => {
                out.push(Block::Note(format!(
                    "nop loop on all CPUs: {} G instr/s",
                    fmt_num(v)
                )));
                out.extend(r.notes.iter().map(|n| Block::Note(format!("  {n}"))));
            }
            None => out.push(Block::NotAvailable(format!(
                "nop loop on all CPUs: {}",
                na(r)
            ))),
        }
    }
    out
}

/// The clock while each width runs (`peak: simd_clock`): GHz with its
/// spread, the change against the scalar clock and whether it is beyond
/// noise, the FMA density and the chain check.
fn simd_clock_blocks(clocks: &[&ResultRecord]) -> Vec<Block> {
    if clocks.is_empty() {
        return Vec::new();
    }
    let mut t = Table::new(&[
        "width",
        "GHz",
        "min-max",
        "CV",
        "vs scalar",
        "FMAs/cycle (units busy)",
        "2x chain",
        "finding",
    ]);
    t.columns[1].align = Align::Right;
    t.caption = Some("Clock while each width runs (add chain with independent FMAs in its shadow, each sample bracketed by the plain add chain)".into());
    let mut notes = Vec::new();
    for r in clocks {
        if let Err(e) = t.push(clock_row(r, &mut notes)) {
            notes.push(format!("a row left out: {e}"));
        }
    }
    let mut out = vec![Block::Table(t)];
    out.extend(notes.into_iter().map(Block::Note));
    out
}

/// One row of the clock table (`peak: simd_clock`) for record `r`; its
/// suspicions go to `notes`, each with the width's label.
fn clock_row(r: &ResultRecord, notes: &mut Vec<String>) -> Vec<Cell> {
    let w = param(r, "width").unwrap_or("?");
    let label = peak::labels::clock_record_label(r);
    let Some(v) = r.value else {
        return vec![
            Cell::Text(label),
            Cell::Absent {
                text: na(r),
                span: 7,
            },
        ];
    };
    let st = r.stats.as_ref();
    let d = r.data_as::<ClockData>().unwrap_or_default();
    let change = d.change_pct;
    let tol = d.noise_tolerance.map(|t| t * 100.0);
    let beyond = d.drop_beyond_noise.unwrap_or(false);
    let verdict = match (w, change, beyond) {
        ("none", Some(_), _) => "reference (must read the scalar clock)".to_string(),
        (_, Some(c), true) => format!("{c:+.1}%: beyond noise"),
        (_, Some(_), false) => "at the scalar clock".to_string(),
        _ => String::new(),
    };
    let check = match (d.check_double_chain_ratio, d.check_double_chain_agrees) {
        (Some(k), Some(ok)) => format!(
            "{:+.1}%{}",
            (k - 1.0) * 100.0,
            if ok { " ok" } else { " DIFFERS" }
        ),
        _ => "-".into(),
    };
    let density = match (Some(d.fmas_per_cycle), d.fma_units_busy) {
        (Some(0.0), _) | (None, _) => "-".to_string(),
        (Some(d), Some(b)) => format!("{d:.2} ({:.0}%)", b * 100.0),
        (Some(d), None) => format!("{d:.2}"),
    };
    for n in r.notes.iter().filter(|n| n.starts_with("suspect:")) {
        notes.push(format!("{label}: {n}"));
    }
    [
        label,
        format!(
            "{}{}",
            fmt_num(v),
            if r.is_suspect() {
                " ?"
            } else if r.is_noisy() {
                " *"
            } else {
                ""
            }
        ),
        st.map(|s| format!("{}-{}", fmt_num(s.min), fmt_num(s.max)))
            .unwrap_or_default(),
        st.map(|s| format!("{:.1}%", s.cv * 100.0))
            .unwrap_or_default(),
        match (change, tol) {
            (Some(c), Some(t)) => format!("{c:+.1}% (±{t:.1}%)"),
            _ => "-".into(),
        },
        density,
        check,
        verdict,
    ]
    .into_iter()
    .map(Cell::Text)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::text;

    #[test]
    fn a_width_without_a_figure_says_why_across_its_row() {
        let rs = vec![
            ResultRecord::of(peak::FMA_FLOPS, "GFLOP/s", true)
                .with_param("width", "avx2")
                .with_param("threads", "1")
                .with_samples(vec![40.0, 41.0, 40.5]),
            ResultRecord::unavailable(peak::EXP, "fma_flops", "GFLOP/s", "no AVX-512 here")
                .with_param("width", "avx512")
                .with_param("threads", "1"),
            ResultRecord::unavailable(peak::EXP, "simd_clock", "GHz", "no AVX-512 here")
                .with_param("width", "avx512")
                .with_param("threads", "1"),
        ];
        let blocks = summary_blocks(&rs);
        let tables = blocks
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .count();
        assert_eq!(tables, 2, "the FLOPs and the clocks: {blocks:?}");
        let s = text::sections(&[crate::view::Section {
            id: crate::experiments::compute::simd::EXP.into(),
            title: String::new(),
            blocks,
        }]);
        assert!(
            s.starts_with("Peak FP64 FMA, measured vs theoretical\n"),
            "{s}"
        );
        assert!(s.contains("not available: no AVX-512 here"), "{s}");
        assert!(s.contains("40.50"), "{s}");
        assert!(summary_blocks(&[]).is_empty());
    }
}

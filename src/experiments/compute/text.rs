//! Text tables for the compute experiments (simd, peak, workloads, rate,
//! placement): seed 004's efficiency table, the published comparisons, the
//! relative placement tables. Renders stored records; never measures.

use crate::base::fmt::columns_ragged;
use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::compute::payload::{
    ActualCycleData, BcData, ClockData, LoopNestData, MemoryPlacementData, NopLoopData,
    OneCoreFlopsData, OpensslData, PagesPerNode, PerCopyRow, PerCoreFlopsData, PerCycleData,
    RateData, SetThroughputData, SimdBestData, SimdThroughputData, Theory, TimeRow,
};
use crate::experiments::compute::placement_plan::Plan;
use crate::experiments::compute::{peak, placement_study, rate, simd, workloads};
use crate::results::schema::{MetricId, ResultRecord};
use serde_json::Value;
use std::fmt::Write as _;

fn param<'a>(r: &'a ResultRecord, k: &str) -> Option<&'a str> {
    r.params.get(k).and_then(|v| v.as_str())
}

fn param_text(r: &ResultRecord, k: &str) -> Option<String> {
    r.params.get(k).map(|v| match v {
        Value::String(s) => s.clone(),
        o => o.to_string(),
    })
}

fn of(rs: &[ResultRecord], id: MetricId) -> Vec<&ResultRecord> {
    rs.iter().filter(|r| r.is(id)).collect()
}

fn na(r: &ResultRecord) -> String {
    format!(
        "not available: {}",
        r.unavailable_reason
            .as_deref()
            .unwrap_or("no reason recorded")
            .trim_start_matches("not available: ")
    )
}

/// Seed 004's table: throughput and per-thread efficiency per variant and
/// thread point, the clock at each point, SMT yield, recommendations.
pub fn render_simd(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let thr = of(rs, simd::THROUGHPUT);
    if thr.is_empty() {
        return out;
    }
    let (variants, points) = simd_axes(&thr);
    let _ = writeln!(
        out,
        "ChaCha20 keystream: throughput (MB/s) and per-thread efficiency vs 1 thread (seed 004's table)"
    );
    out.push_str(&simd_context(rs));
    out.push_str(&simd_table(rs, &thr, &variants, &points));
    out.push_str(&simd_unmeasured(&thr));
    out.push_str(&smt_yield_lines(rs));
    if let Some(best) = of(rs, simd::BEST_THROUGHPUT).first() {
        for n in &best.notes {
            let _ = writeln!(out, "  {}", for_terminal(n));
        }
    }
    out
}

/// The variants and thread points measured, in first-seen order.
fn simd_axes(thr: &[&ResultRecord]) -> (Vec<String>, Vec<String>) {
    let mut variants: Vec<String> = Vec::new();
    let mut points: Vec<String> = Vec::new();
    for r in thr {
        if r.value.is_none() {
            continue;
        }
        if let Some(v) = param(r, "variant") {
            if !variants.iter().any(|x| x == v) {
                variants.push(v.to_string());
            }
        }
        if let Some(p) = param(r, "threads") {
            if !points.iter().any(|x| x == p) {
                points.push(p.to_string());
            }
        }
    }
    (variants, points)
}

/// The turbo state and core counts of the best point, and the variants'
/// verification notes.
fn simd_context(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    if let Some(best) = of(rs, simd::BEST_THROUGHPUT).first() {
        if let Some(d) = best.data_as::<SimdBestData>() {
            let how = if param(best, "turbo").is_some() {
                "set with --turbo, restored afterwards"
            } else {
                "as found; cpuscope does not change it"
            };
            let _ = writeln!(
                out,
                "  turbo: {} ({how})  ·  {} cores, {} logical CPUs",
                d.turbo, d.cores, d.logical
            );
        }
    }
    if let Some(v) = of(rs, simd::VERIFIED_VARIANTS).first() {
        for n in &v.notes {
            let _ = writeln!(out, "  verified: {}", for_terminal(n));
        }
    }
    out
}

/// The table: per thread point, n and GHz, then each variant's MB/s and
/// efficiency.
fn simd_table(
    rs: &[ResultRecord],
    thr: &[&ResultRecord],
    variants: &[String],
    points: &[String],
) -> String {
    let mut out = String::new();
    let mut head = vec!["threads".to_string(), "n".into(), "GHz".into()];
    for v in variants {
        head.push(format!("{v} MB/s"));
        head.push("eff".into());
    }
    let mut rows = vec![head];
    for p in points {
        let mut row = vec![p.clone(), String::new(), String::new()];
        for v in variants {
            let t = thr
                .iter()
                .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p));
            let eff = of(rs, simd::EFFICIENCY)
                .into_iter()
                .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p));
            match t.and_then(|r| r.value) {
                Some(x) => {
                    let t = t.unwrap_or(&thr[0]);
                    let d = t.data_as::<SimdThroughputData>();
                    if row[1].is_empty() {
                        row[1] = d
                            .as_ref()
                            .map(|d| d.threads.to_string())
                            .unwrap_or_default();
                    }
                    if row[2].is_empty() {
                        row[2] = d
                            .and_then(|d| d.ghz)
                            .map(|g| format!("{g:.2}"))
                            .unwrap_or_else(|| "n/a".into());
                    }
                    row.push(format!(
                        "{}{}",
                        fmt_num(x),
                        if t.is_noisy() { "*" } else { "" }
                    ));
                    row.push(if p == "1" {
                        "100.0%".into()
                    } else {
                        eff.and_then(|e| e.value)
                            .map(|e| format!("{e:.1}%"))
                            .unwrap_or_else(|| "-".into())
                    });
                }
                None => {
                    row.push("-".into());
                    row.push("-".into());
                }
            }
        }
        rows.push(row);
    }
    out.push_str(&columns_ragged(&rows, "  "));
    out
}

/// Points not measured for every variant, each reason once, and the noise
/// mark's legend.
fn simd_unmeasured(thr: &[&ResultRecord]) -> String {
    let mut out = String::new();
    // Points not measured for every variant (e.g. no SMT).
    let mut said = Vec::new();
    for r in thr.iter().filter(|r| r.value.is_none()) {
        let why = na(r);
        let p = param(r, "threads").unwrap_or("?");
        let line = if p == "1" {
            format!(
                "  {}: {}",
                for_terminal(param(r, "variant").unwrap_or("?")),
                for_terminal(&why)
            )
        } else {
            format!("  threads={p}: {}", for_terminal(&why))
        };
        if !said.contains(&line) {
            said.push(line);
        }
    }
    for l in said {
        let _ = writeln!(out, "{l}");
    }
    if thr.iter().any(|r| r.is_noisy()) {
        let _ = writeln!(out, "  * NOISY: CV above 5%");
    }
    out
}

/// What the second hardware thread adds, per variant, or why not measured.
fn smt_yield_lines(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let ys = of(rs, simd::SMT_YIELD);
    let measured: Vec<&&ResultRecord> = ys.iter().filter(|r| r.value.is_some()).collect();
    if !measured.is_empty() {
        let _ = writeln!(
            out,
            "  SMT yield (what the second hardware thread adds, in cores):"
        );
        for r in measured {
            let _ = writeln!(
                out,
                "    {:<8} {:.2}",
                param(r, "variant").unwrap_or("?"),
                r.value.unwrap_or(0.0)
            );
        }
    } else if let Some(r) = ys.first() {
        let _ = writeln!(out, "  SMT yield: {}", na(r));
    }
    out
}

/// The configuration a record was measured under (`simd --smt/--turbo`):
/// its `smt` and `turbo` params; (None, None) as found.
fn configuration(r: &ResultRecord) -> (Option<String>, Option<String>) {
    (param_text(r, "smt"), param_text(r, "turbo"))
}

/// `render_simd` and `render_peak` once per configuration (`smt=on/off`,
/// `turbo=on/off`), each under its heading, then SMT on against off per
/// variant. Records without those params render exactly as before.
pub fn render_simd_configurations(rs: &[ResultRecord]) -> String {
    let mut configs: Vec<(Option<String>, Option<String>)> = Vec::new();
    for r in rs
        .iter()
        .filter(|r| r.from_experiment(simd::EXP) || r.from_experiment(peak::EXP))
    {
        let c = configuration(r);
        if !configs.contains(&c) {
            configs.push(c);
        }
    }
    let one = |rs: &[ResultRecord]| {
        [render_simd(rs), render_peak(rs)]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    };
    if configs.len() <= 1
        && configs
            .first()
            .is_none_or(|c| c.0.is_none() && c.1.is_none())
    {
        return one(rs);
    }
    let mut parts = Vec::new();
    for c in &configs {
        let sub: Vec<ResultRecord> = rs
            .iter()
            .filter(|r| configuration(r) == *c)
            .cloned()
            .collect();
        let name = [
            c.0.as_ref().map(|s| format!("SMT {s}")),
            c.1.as_ref().map(|t| format!("turbo {t}")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        parts.push(format!("== configuration: {name} ==\n{}", one(&sub)));
    }
    let cmp = render_smt_on_off(rs);
    if !cmp.is_empty() {
        parts.push(cmp);
    }
    parts.join("\n")
}

/// Best throughput per variant with SMT on and with SMT off (same turbo).
fn render_smt_on_off(rs: &[ResultRecord]) -> String {
    let thr: Vec<&ResultRecord> = of(rs, simd::THROUGHPUT)
        .into_iter()
        .filter(|r| r.value.is_some())
        .collect();
    let mut turbos: Vec<Option<String>> = Vec::new();
    for r in &thr {
        let t = param_text(r, "turbo");
        if !turbos.contains(&t) {
            turbos.push(t);
        }
    }
    let best = |v: &str, smt: &str, t: &Option<String>| {
        thr.iter()
            .filter(|r| {
                param(r, "variant") == Some(v)
                    && param(r, "smt") == Some(smt)
                    && param_text(r, "turbo") == *t
            })
            .max_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))
            .map(|r| {
                (
                    r.value.unwrap_or(0.0),
                    param(r, "threads").unwrap_or("?").to_string(),
                )
            })
    };
    let mut rows = vec![vec![
        "variant".to_string(),
        "turbo".into(),
        "SMT on MB/s".into(),
        "SMT off MB/s".into(),
        "on/off".into(),
    ]];
    for t in &turbos {
        let mut variants: Vec<&str> = Vec::new();
        for r in &thr {
            if let Some(v) = param(r, "variant") {
                if !variants.contains(&v) {
                    variants.push(v);
                }
            }
        }
        for v in variants {
            if let (Some((on, pon)), Some((off, poff))) = (best(v, "on", t), best(v, "off", t)) {
                rows.push(vec![
                    v.to_string(),
                    t.clone().unwrap_or_else(|| "as found".into()),
                    format!("{} ({pon})", fmt_num(on)),
                    format!("{} ({poff})", fmt_num(off)),
                    if off > 0.0 {
                        format!("{:.2}x", on / off)
                    } else {
                        "-".into()
                    },
                ]);
            }
        }
    }
    if rows.len() == 1 {
        return String::new();
    }
    format!(
        "SMT on against off: best throughput over the thread points (the point in brackets)\n{}",
        columns_ragged(&rows, "  ")
    )
}

/// FLOPs/cycle per width against the theoretical figure, per scalar-clock
/// cycle and per actual cycle (at the clock while that width runs); the
/// clock under each width; seed 000's formula.
pub fn render_peak(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let pc = of(rs, peak::FMA_FLOPS_PER_CYCLE);
    let fl = of(rs, peak::FMA_FLOPS);
    let actual = of(rs, peak::FMA_FLOPS_PER_ACTUAL_CYCLE);
    let clocks = of(rs, peak::SIMD_CLOCK);
    if pc.is_empty() && fl.is_empty() {
        return out;
    }
    let _ = writeln!(out, "Peak FP64 FMA, measured vs theoretical");
    let mut rows = vec![vec![
        "width".to_string(),
        "threads".into(),
        "GFLOP/s".into(),
        "FLOP/cycle".into(),
        "theoretical".into(),
        "ratio".into(),
        "clock (vs scalar)".into(),
        "FLOP/actual cycle".into(),
        "ratio".into(),
    ]];
    for f in &fl {
        rows.push(peak_row(f, &pc, &actual));
    }
    out.push_str(&columns_ragged(&rows, "  "));
    let _ = writeln!(
        out,
        "  FLOP/cycle: per scalar-clock cycle (the add chain right before and after each sample); FLOP/actual cycle: at the clock while that width runs (below)"
    );
    out.push_str(&render_simd_clocks(&clocks));
    out.push_str(&peak_theory_and_rate(rs, &fl));
    out
}

/// One row of the peak table: a width and thread count's GFLOP/s, FLOP per
/// scalar-clock cycle against the theoretical figure, and per actual cycle.
fn peak_row(f: &ResultRecord, pc: &[&ResultRecord], actual: &[&ResultRecord]) -> Vec<String> {
    let w = param(f, "width").unwrap_or("?");
    let t = param(f, "threads").unwrap_or("?");
    let shown = peak::labels::record_width_label(f);
    let Some(v) = f.value else {
        return vec![shown, t.into(), na(f)];
    };
    let same = |r: &&&ResultRecord| param(r, "width") == Some(w) && param(r, "threads") == Some(t);
    let p = pc.iter().find(same);
    let per = p.and_then(|r| r.value);
    let against = p
        .and_then(|r| r.data_as::<PerCycleData>())
        .and_then(|d| d.against_theory);
    let theo = against.as_ref().map(|a| a.theoretical);
    let (theo_s, ratio_s) = if t == "1" {
        (
            theo.map(|x| format!("{x:.0} FLOP/cycle"))
                .unwrap_or_else(|| "n/a".into()),
            per.zip(theo)
                .map(|(a, b)| {
                    let best = against
                        .as_ref()
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
    };
    // Per actual cycle: the clock while this width runs.
    let (clock_s, act_s, act_ratio_s) = match (t, actual.iter().find(same)) {
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
    };
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
    vec![
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
}

/// Where the theoretical figures come from, and the nop loop's rate.
fn peak_theory_and_rate(rs: &[ResultRecord], fl: &[&ResultRecord]) -> String {
    let mut out = String::new();
    if let Some(th) = fl
        .iter()
        .filter(|r| param(r, "threads") == Some("1"))
        .find_map(|r| r.data_as::<OneCoreFlopsData>()?.theory)
    {
        match th {
            Theory::Known(k) => {
                let _ = writeln!(out, "  theoretical: {}; source: {}", k.core, k.source);
            }
            Theory::Unknown { reason } => {
                let _ = writeln!(
                    out,
                    "  theoretical: not available: {}",
                    for_terminal(&reason)
                );
            }
        }
    }
    for r in of(rs, peak::INSTRUCTION_RATE) {
        match r.value {
            Some(v) => {
                let _ = writeln!(out, "  nop loop on all CPUs: {} G instr/s", fmt_num(v));
                for n in &r.notes {
                    let _ = writeln!(out, "    {}", for_terminal(n));
                }
            }
            None => {
                let _ = writeln!(out, "  nop loop on all CPUs: {}", na(r));
            }
        }
    }
    out
}

/// The clock while each width runs (`peak: simd_clock`): GHz with its
/// spread, the change against the scalar clock and whether it is beyond
/// noise, the FMA density and the chain check.
pub fn render_simd_clocks(clocks: &[&ResultRecord]) -> String {
    let mut out = String::new();
    if clocks.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "  Clock while each width runs (add chain with independent FMAs in its shadow, each sample bracketed by the plain add chain):"
    );
    let mut rows = vec![vec![
        "width".to_string(),
        "GHz".into(),
        "min-max".into(),
        "CV".into(),
        "vs scalar".into(),
        "FMAs/cycle (units busy)".into(),
        "2x chain".into(),
        "".into(),
    ]];
    let mut notes = Vec::new();
    for r in clocks {
        let w = param(r, "width").unwrap_or("?");
        let label = peak::labels::clock_record_label(r);
        let Some(v) = r.value else {
            rows.push(vec![label, na(r)]);
            continue;
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
        rows.push(vec![
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
        ]);
    }
    out.push_str(&columns_ragged(&rows, "    "));
    for n in notes {
        let _ = writeln!(out, "    {}", for_terminal(&n));
    }
    out
}

/// The seed workloads, with the published comparison where it applies.
pub fn render_workloads(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let ws: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(workloads::EXP))
        .collect();
    if ws.is_empty() {
        return out;
    }
    let _ = writeln!(out, "Seed workloads");
    out.push_str(&workload_rows(&ws));
    out.push_str(&published_tables(&ws));
    out.push_str(&openssl_choice_note(&ws));
    out
}

/// One row per workload figure: its params, value and IPC by instruction count.
fn workload_rows(ws: &[&ResultRecord]) -> String {
    let mut out = String::new();
    let mut rows = Vec::new();
    for r in ws {
        let mut label = r.metric.clone();
        let p: Vec<String> = r
            .params
            .keys()
            .filter_map(|k| param_text(r, k).map(|v| format!("{k}={v}")))
            .collect();
        if !p.is_empty() {
            label = format!("{label} ({})", p.join(", "));
        }
        match r.value {
            Some(v) => rows.push(vec![
                label,
                format!(
                    "{} {}{}",
                    fmt_num(v),
                    r.unit,
                    if r.is_noisy() { " NOISY" } else { "" }
                ),
                ipc_by_count(r)
                    .map(|i| format!("IPC {i:.2} (by instruction count)"))
                    .unwrap_or_default(),
            ]),
            None => rows.push(vec![label, na(r)]),
        }
    }
    out.push_str(&columns_ragged(&rows, "  "));
    out
}

/// The IPC a workload record derives from its instruction count (the nop
/// loop's and the loop nests'), if any.
fn ipc_by_count(r: &ResultRecord) -> Option<f64> {
    if r.is(workloads::NOP_LOOP) {
        r.data_as::<NopLoopData>()?.ipc_from_instruction_count
    } else if r.is(workloads::BRANCH_ORDER) {
        r.data_as::<LoopNestData>()?.ipc_from_instruction_count
    } else {
        None
    }
}

/// Each figure beside the published ones it is compared with (bc times,
/// openssl per copy), or once per algorithm why it is not compared.
fn published_tables(ws: &[&ResultRecord]) -> String {
    let mut out = String::new();
    let mut said_not_compared: Vec<String> = Vec::new();
    // A missing aes-256-ige record already says that nothing is compared.
    if ws.iter().any(|r| {
        r.is(workloads::OPENSSL_AES) && r.value.is_none() && param(r, "alg") == Some("aes-256-ige")
    }) {
        said_not_compared.push("aes-256-cbc".into());
    }
    for r in ws {
        if r.metric.starts_with("bc_") {
            let Some(c) = r.data_as::<BcData>().and_then(|d| d.published) else {
                continue;
            };
            if let Some(rows) = &c.rows {
                out.push_str(&bc_table(r, &c.cited_label(), rows));
            }
        } else if r.is(workloads::OPENSSL_AES) {
            let Some(c) = r.data_as::<OpensslData>().map(|d| d.published) else {
                continue;
            };
            if c.label == "not compared" {
                // Once per algorithm, not once per record.
                let alg = param(r, "alg").unwrap_or("?").to_string();
                if !said_not_compared.contains(&alg) {
                    let _ = writeln!(
                        out,
                        "  openssl {alg}: not compared with the published figures: {}",
                        c.reason.as_deref().unwrap_or("no reason recorded")
                    );
                    said_not_compared.push(alg);
                }
                continue;
            }
            // The comparison tables at the seed's main block size (the
            // JSON carries every size's).
            if r.params.get("bytes").and_then(|b| b.as_u64())
                != Some(u64::from(workloads::MAIN_BLOCK_BYTES))
            {
                continue;
            }
            if let Some(rows) = &c.rows {
                out.push_str(&openssl_table(r, &c.cited_label(), rows));
            }
        }
    }
    out
}

/// A bc time against the published machines' times: speed by wall and CPU time.
fn bc_table(r: &ResultRecord, lbl: &str, prow: &[TimeRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  {} vs {lbl}:", r.metric);
    let mut t = vec![vec![
        "CPU".to_string(),
        "published".into(),
        "this machine's speed (wall)".into(),
        "(CPU time)".into(),
    ]];
    for row in prow {
        let cpu = row.cpu().to_string();
        match row.compared() {
            Some(c) => t.push(vec![
                cpu,
                format!("{:.2} s", c.published_s),
                format!("{:.0}%", c.this_machine_speed_pct),
                c.this_machine_speed_pct_by_cpu_time
                    .map(|c| format!("{c:.0}%"))
                    .unwrap_or_default(),
            ]),
            None => t.push(vec![cpu, row.reason().unwrap_or("no figure").to_string()]),
        }
    }
    out.push_str(&columns_ragged(&t, "    "));
    out
}

/// An openssl figure per copy against the published per-copy figures.
fn openssl_table(r: &ResultRecord, lbl: &str, prow: &[PerCopyRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  openssl {} copies={} vs {lbl}:",
        param(r, "alg").unwrap_or("?"),
        param(r, "copies").unwrap_or("?")
    );
    let mut t = vec![vec![
        "CPU".to_string(),
        "copies".into(),
        "published MB/s per copy".into(),
        "this machine per copy".into(),
    ]];
    for row in prow {
        t.push(vec![
            row.cpu.clone(),
            row.published_copies.to_string(),
            format!("{:.1}", row.published_mb_s_per_copy),
            format!("{:.0}%", row.this_machine_per_copy_pct),
        ]);
    }
    out.push_str(&columns_ragged(&t, "    "));
    out
}

/// How the openssl algorithm was chosen, once.
fn openssl_choice_note(ws: &[&ResultRecord]) -> String {
    let mut out = String::new();
    // How the algorithm was chosen (e.g. through OpenSSL 3's legacy
    // provider), once; a missing IGE is its own "not available" row above.
    for r in ws
        .iter()
        .filter(|r| r.is(workloads::OPENSSL_AES) && r.value.is_some())
        .take(1)
    {
        if let Some(n) = r
            .notes
            .first()
            .filter(|_| param(r, "alg") == Some("aes-256-ige"))
        {
            let _ = writeln!(out, "  openssl: {}", for_terminal(n));
        }
    }
    out
}

/// Rate: jobs/hour per copy count and the efficiency per copy.
pub fn render_rate(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let j = of(rs, rate::JOBS_PER_HOUR);
    if j.is_empty() {
        return out;
    }
    let mut workloads: Vec<&str> = Vec::new();
    for r in &j {
        let w = param(r, "workload").unwrap_or("?");
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    for wl in workloads {
        out.push_str(&rate_table(rs, &j, wl));
    }
    out
}

/// One workload's table: a row per copy count (and memory placement), then
/// its notes once each.
fn rate_table(rs: &[ResultRecord], j: &[&ResultRecord], wl: &str) -> String {
    let mut out = String::new();
    let recs: Vec<&&ResultRecord> = j
        .iter()
        .filter(|r| param(r, "workload").unwrap_or("?") == wl)
        .collect();
    let with_mem = recs.iter().any(|r| param(r, "mem").is_some());
    let _ = writeln!(
        out,
        "Rate (SPEC-rate style): {wl}{}",
        if with_mem {
            " by memory placement (seed 003)"
        } else {
            ""
        }
    );
    let mut head = vec!["copies".to_string()];
    if with_mem {
        head.push("memory".into());
    }
    head.extend([
        "CPUs".to_string(),
        "jobs/hour".into(),
        "slowest copy".into(),
        "efficiency per copy".into(),
    ]);
    if with_mem {
        head.push("vs interleave".into());
        head.push("pages (mem:N only, move_pages)".into());
    }
    let mut rows = vec![head];
    let mut notes: Vec<String> = Vec::new();
    for r in recs {
        rows.push(rate_row(rs, r, with_mem, &mut notes));
    }
    out.push_str(&columns_ragged(&rows, "  "));
    for n in notes {
        let _ = writeln!(out, "  note: {}", for_terminal(&n));
    }
    out
}

/// One row of a rate table: copies, memory, CPUs, jobs/hour, the slowest
/// copy, the efficiency per copy and, by memory placement, the change
/// against interleave and the pages per node. Notes worth saying once go
/// to `notes`.
fn rate_row(
    rs: &[ResultRecord],
    r: &ResultRecord,
    with_mem: bool,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let c = param(r, "copies").unwrap_or("?").to_string();
    let mem = param(r, "mem");
    let same = |e: &ResultRecord| {
        param(e, "copies") == Some(&c)
            && param(e, "workload") == param(r, "workload")
            && param(e, "mem") == mem
    };
    let mut row = vec![format!(
        "{c}{}",
        r.data_as::<RateData>()
            .filter(|_| c.parse::<usize>().is_err())
            .map(|d| format!(" ({})", d.copies))
            .unwrap_or_default()
    )];
    if with_mem {
        row.push(mem.unwrap_or("default").to_string());
    }
    // The matching record of `id` as text: Some("-") when it has no
    // value, None when there is none.
    let cell = |id, f: &dyn Fn(f64) -> String| {
        of(rs, id)
            .into_iter()
            .find(|e| same(e))
            .map(|e| e.value.map(f).unwrap_or_else(|| "-".into()))
    };
    match r.value {
        Some(v) => {
            let eff = cell(rate::EFFICIENCY, &|x| format!("{x:.1}%")).unwrap_or_else(|| {
                if c == "1" {
                    "100% (baseline)".into()
                } else {
                    "-".into()
                }
            });
            let d = r.data_as::<RateData>().unwrap_or_default();
            let slow = crate::base::Stats::from_samples(&d.makespan_s)
                .map(|s| format!("{:.3} s", s.median))
                .unwrap_or_default();
            row.extend([
                d.cpus,
                format!("{}{}", fmt_num(v), if r.is_noisy() { " NOISY" } else { "" }),
                slow,
                eff,
            ]);
            if with_mem {
                let change =
                    cell(rate::MEM_CHANGE, &|x| format!("{x:+.1}%")).unwrap_or_else(|| {
                        if mem == Some("interleave") {
                            "(reference)".into()
                        } else {
                            "-".into()
                        }
                    });
                row.push(change);
                row.push(pages_cell(r, notes));
            }
            for n in &r.notes {
                if (n.starts_with("one NUMA node") || n.contains("touches little memory"))
                    && !notes.contains(n)
                {
                    notes.push(n.clone());
                }
            }
        }
        None => row.push(na(r)),
    }
    row
}

/// The pages-per-node cell of a memory-placement row (share per node), or
/// why the pages were not counted (said once in `notes`).
fn pages_cell(r: &ResultRecord, notes: &mut Vec<String>) -> String {
    match r.data_as::<RateData>().and_then(|d| d.pages_per_node) {
        Some(PagesPerNode::NotCounted { not_available: e }) => {
            let n = format!("pages not counted: {e}");
            if !notes.contains(&n) {
                notes.push(n);
            }
            "n/a".into()
        }
        Some(PagesPerNode::Counted(o)) => {
            let total: f64 = o.values().map(|v| *v as f64).sum();
            o.iter()
                .filter(|_| total > 0.0)
                .map(|(k, v)| format!("N{k} {:.0}%", *v as f64 / total * 100.0))
                .collect::<Vec<_>>()
                .join(" ")
        }
        None => "-".into(),
    }
}

/// Placement: one relative table per comparison and workload, then memory.
pub fn render_placement(rs: &[ResultRecord]) -> String {
    let mut out = String::new();
    let t = of(rs, placement_study::THROUGHPUT);
    let m = of(rs, placement_study::MEMORY_LATENCY);
    if t.is_empty() && m.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "Placement (relative to the best set of each comparison)"
    );
    if let Some(p) = of(rs, placement_study::PLAN).first() {
        for n in &p.notes {
            let _ = writeln!(out, "  note: {}", for_terminal(n));
        }
    }
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in &t {
        let k = (
            param(r, "comparison").unwrap_or("?").to_string(),
            param(r, "workload").unwrap_or("?").to_string(),
        );
        if !groups.contains(&k) {
            groups.push(k);
        }
    }
    for (c, w) in groups {
        let rows_in: Vec<&&ResultRecord> = t
            .iter()
            .filter(|r| param(r, "comparison") == Some(&c) && param(r, "workload") == Some(&w))
            .collect();
        let unit = rows_in.first().map(|r| r.unit.clone()).unwrap_or_default();
        let _ = writeln!(out, "  {c} / {w} ({unit})");
        let mut rows = Vec::new();
        for r in rows_in {
            let set = param(r, "set").unwrap_or("?").to_string();
            match r.value {
                Some(v) => {
                    let d = r.data_as::<SetThroughputData>().unwrap_or_default();
                    rows.push(vec![
                        set,
                        d.cpus,
                        format!("{}{}", fmt_num(v), if r.is_noisy() { " NOISY" } else { "" }),
                        d.relative_pct
                            .map(|p| format!("{p:.1}%"))
                            .unwrap_or_default(),
                    ])
                }
                None => rows.push(vec![set, na(r)]),
            }
        }
        out.push_str(&columns_ragged(&rows, "    "));
    }
    if let Some(reference) = t
        .iter()
        .find_map(|r| r.data_as::<SetThroughputData>()?.seed_reference)
    {
        if let Some(rows) = reference.rows {
            let _ = writeln!(
                out,
                "  seed 000 reference (published, Kunpeng 920 tpmC, 4 cores):"
            );
            let mut tr = Vec::new();
            for r in rows {
                tr.push(vec![
                    r.cpus.unwrap_or_default(),
                    r.set.unwrap_or_default(),
                    // As JSON writes it (14460.0; null without a figure).
                    Value::from(r.tpm_c).to_string(),
                    r.relative_pct
                        .map(|p| format!("{p:.1}%"))
                        .unwrap_or_default(),
                ]);
            }
            out.push_str(&columns_ragged(&tr, "    "));
        }
    }
    if !m.is_empty() {
        let _ = writeln!(out, "  memory placement (pointer chase, ns per load)");
        let mut rows = Vec::new();
        for r in m {
            let name = param(r, "memory").unwrap_or("?").to_string();
            match r.value {
                Some(v) => rows.push(vec![
                    name,
                    r.data_as::<MemoryPlacementData>()
                        .and_then(|d| d.policy)
                        .unwrap_or_default(),
                    format!("{} ns", fmt_num(v)),
                    r.notes.last().cloned().unwrap_or_default(),
                ]),
                None => rows.push(vec![name, na(r)]),
            }
        }
        out.push_str(&columns_ragged(&rows, "    "));
    }
    out
}

/// The planner's choices, without measuring.
pub fn render_plan(p: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Placement plan for CPUs {} (spread sets of {} cores)",
        p.usable, p.spread_k
    );
    for n in &p.notes {
        let _ = writeln!(out, "  note: {}", for_terminal(n));
    }
    for c in &p.comparisons {
        let _ = writeln!(out, "  {}: {}", c.name, c.question);
        let mut rows = Vec::new();
        for s in &c.sets {
            match &s.cpus {
                Some(cpus) => rows.push(vec![s.name.clone(), cpus.to_string(), s.what.clone()]),
                None => rows.push(vec![
                    s.name.clone(),
                    format!(
                        "not applicable: {}",
                        s.not_applicable.as_deref().unwrap_or("?")
                    ),
                ]),
            }
        }
        out.push_str(&columns_ragged(&rows, "    "));
    }
    let _ = writeln!(out, "  memory: one thread, memory placed by policy");
    let mut rows = Vec::new();
    for m in &p.memory {
        match (&m.cpu, &m.policy_text) {
            (Some(c), Some(pt)) => rows.push(vec![
                m.name.clone(),
                format!("CPU {c}"),
                pt.clone(),
                m.what.clone(),
            ]),
            _ => rows.push(vec![
                m.name.clone(),
                format!(
                    "not applicable: {}",
                    m.not_applicable.as_deref().unwrap_or("?")
                ),
            ]),
        }
    }
    out.push_str(&columns_ragged(&rows, "    "));
    out
}

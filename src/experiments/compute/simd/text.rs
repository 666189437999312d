//! Text of simd: the throughput table per variant and thread count, SMT on/off, the yields. Renders stored records; never measures.

use crate::base::fmt::columns_ragged;
use crate::base::fmt::{fmt_num, for_terminal};
use crate::experiments::compute::payload::{SimdBestData, SimdThroughputData};
use crate::experiments::compute::peak::text::render_peak;
use crate::experiments::compute::text::{na, of, param, param_text};
use crate::experiments::compute::{peak, simd};
use crate::results::schema::ResultRecord;
use std::fmt::Write as _;

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

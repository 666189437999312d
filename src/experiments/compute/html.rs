//! HTML sections for the compute experiments: seed 004's efficiency table,
//! FLOPs/cycle against theory, the published comparisons (labelled as
//! published data), rate and placement charts. Called from
//! `report::html::charts`; renders stored records only.

use crate::base::html::{esc, svg_bars};
use crate::experiments::compute::payload::{
    BcData, OpensslData, PerCopyRow, PerCycleData, PublishedComparison, SetThroughputData,
    SimdThroughputData, TimeRow,
};
use crate::experiments::compute::text::param;
use crate::experiments::compute::{peak, placement_study, rate, simd, workloads};
use crate::results::schema::{MetricId, ResultRecord, Run};
use std::fmt::Write as _;

fn of(run: &Run, id: MetricId) -> Vec<&ResultRecord> {
    run.records(id).collect()
}

pub fn simd_table(run: &Run) -> String {
    let thr = of(run, simd::THROUGHPUT);
    let mut variants: Vec<&str> = Vec::new();
    let mut points: Vec<&str> = Vec::new();
    for r in thr.iter().filter(|r| r.value.is_some()) {
        if let Some(v) = param(r, "variant") {
            if !variants.contains(&v) {
                variants.push(v);
            }
        }
        if let Some(p) = param(r, "threads") {
            if !points.contains(&p) {
                points.push(p);
            }
        }
    }
    if variants.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h3>SIMD × threads (seed 004's table): ChaCha20 throughput and per-thread efficiency vs 1 thread</h3><table><tr><th>threads</th><th>GHz</th>");
    for v in &variants {
        let _ = write!(h, "<th>{} MB/s</th><th>efficiency</th>", esc(v));
    }
    h.push_str("</tr>");
    for p in &points {
        let mut ghz = String::from("n/a");
        let mut cells = String::new();
        for v in &variants {
            let t = thr
                .iter()
                .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p));
            let e = of(run, simd::EFFICIENCY)
                .into_iter()
                .find(|r| param(r, "variant") == Some(v) && param(r, "threads") == Some(p))
                .and_then(|r| r.value);
            match t.and_then(|r| r.value.map(|x| (r, x))) {
                Some((r, x)) => {
                    if let Some(g) = r.data_as::<SimdThroughputData>().and_then(|d| d.ghz) {
                        ghz = format!("{g:.2}");
                    }
                    let eff = if *p == "1" {
                        "100.0%".to_string()
                    } else {
                        e.map(|e| format!("{e:.1}%")).unwrap_or_else(|| "-".into())
                    };
                    let noisy = if r.is_noisy() {
                        " <span class=\"noisy\">NOISY</span>"
                    } else {
                        ""
                    };
                    let _ = write!(
                        cells,
                        "<td class=\"num\">{x:.0}{noisy}</td><td class=\"num\">{eff}</td>"
                    );
                }
                None => cells.push_str("<td class=\"na\">-</td><td class=\"na\">-</td>"),
            }
        }
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td>{cells}</tr>",
            esc(p),
            esc(&ghz)
        );
    }
    h.push_str("</table>");
    let mut said: Vec<String> = Vec::new();
    for r in thr.iter().filter(|r| r.value.is_none()) {
        let line = format!(
            "{} threads={}: not available: {}",
            param(r, "variant").unwrap_or("?"),
            param(r, "threads").unwrap_or("?"),
            r.unavailable_reason.as_deref().unwrap_or("?")
        );
        if !said.contains(&line) {
            said.push(line);
        }
    }
    for y in of(run, simd::SMT_YIELD) {
        said.push(match y.value {
            Some(v) => format!(
                "SMT yield, {}: {v:.2} of a core",
                param(y, "variant").unwrap_or("?")
            ),
            None => format!(
                "SMT yield, {}: not available: {}",
                param(y, "variant").unwrap_or("?"),
                y.unavailable_reason.as_deref().unwrap_or("?")
            ),
        });
    }
    if let Some(b) = of(run, simd::BEST_THROUGHPUT).first() {
        said.extend(b.notes.iter().cloned());
    }
    for s in said {
        let _ = write!(h, "<div class=\"note\">{}</div>", esc(&s));
    }
    let one: Vec<(String, f64)> = thr
        .iter()
        .filter(|r| param(r, "threads") == Some("1"))
        .filter_map(|r| Some((param(r, "variant")?.to_string(), r.value?)))
        .collect();
    h.push_str(&svg_bars("ChaCha20, 1 thread", "MB/s", &one));
    h
}

pub fn peak_section(run: &Run) -> String {
    let pc = of(run, peak::FMA_FLOPS_PER_CYCLE);
    let actual = of(run, peak::FMA_FLOPS_PER_ACTUAL_CYCLE);
    let mut rows = Vec::new();
    for r in &pc {
        let w = peak::labels::record_width_label(r);
        if let Some(v) = r.value {
            rows.push((format!("{w} per scalar-clock cycle"), v));
        }
        if let Some(a) = actual
            .iter()
            .find(|a| {
                param(a, "width") == param(r, "width") && param(a, "threads") == param(r, "threads")
            })
            .and_then(|a| a.value)
        {
            rows.push((format!("{w} per actual cycle"), a));
        }
        if let Some(t) = r
            .data_as::<PerCycleData>()
            .and_then(|d| d.against_theory)
            .map(|a| a.theoretical)
        {
            rows.push((format!("{w} theoretical"), t));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h3>Peak FP64 FMA per core: measured vs theoretical</h3>");
    h.push_str(&svg_bars("FLOPs per cycle, one core", "FLOP/cycle", &rows));
    h.push_str("<div class=\"note\">Per scalar-clock cycle: at the add-chain clock read right before and after each sample. Per actual cycle: at the clock while that width runs (below).</div>");
    for r in pc.iter().take(1) {
        for n in &r.notes {
            let _ = write!(h, "<div class=\"note\">{}</div>", esc(n));
        }
    }
    // The clock while each width runs.
    let clocks = of(run, peak::SIMD_CLOCK);
    let bars: Vec<(String, f64)> = clocks
        .iter()
        .filter_map(|r| Some((peak::labels::clock_record_label(r), r.value?)))
        .collect();
    if !bars.is_empty() {
        h.push_str(&svg_bars(
            "Clock while each FMA width runs, one core (add chain with the FMAs in its shadow)",
            "GHz",
            &bars,
        ));
        for r in &clocks {
            let label = peak::labels::clock_record_label(r);
            match r.value {
                Some(_) => {
                    for n in &r.notes {
                        let _ = write!(h, "<div class=\"note\">{}: {}</div>", esc(&label), esc(n));
                    }
                }
                None => {
                    let _ = write!(
                        h,
                        "<div class=\"note na\">{}: not available: {}</div>",
                        esc(&label),
                        esc(r.unavailable_reason.as_deref().unwrap_or("?"))
                    );
                }
            }
        }
    }
    for r in of(run, peak::INSTRUCTION_RATE) {
        for n in &r.notes {
            let _ = write!(h, "<div class=\"note\">nop loop: {}</div>", esc(n));
        }
    }
    h
}

/// A bc time against the published machines' times (nothing without rows).
fn bc_html(r: &ResultRecord, c: &PublishedComparison<TimeRow>) -> String {
    let mut h = String::new();
    let Some(rows) = &c.rows else {
        return h;
    };
    let _ = write!(
        h,
        "<h3>{}: this machine {:.2} s vs {}</h3><table><tr><th>CPU (published)</th><th>published time</th><th>this machine's speed relative to it (wall time)</th><th>(CPU time)</th></tr>",
        esc(&r.metric),
        r.value.unwrap_or(0.0),
        esc(&c.cited_label())
    );
    for row in rows {
        match row.compared() {
            Some(t) => {
                let cpu_pct = t
                    .this_machine_speed_pct_by_cpu_time
                    .map(|c| format!("{c:.0}%"))
                    .unwrap_or_default();
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td class=\"num\">{:.2} s</td><td class=\"num\">{:.0}%</td><td class=\"num\">{cpu_pct}</td></tr>",
                    esc(&t.cpu),
                    t.published_s,
                    t.this_machine_speed_pct
                );
            }
            None => {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td colspan=\"3\" class=\"na\">{}</td></tr>",
                    esc(row.cpu()),
                    esc(row.reason().unwrap_or("no figure published"))
                );
            }
        }
    }
    h.push_str("</table>");
    h
}

/// An openssl figure per copy against the published per-copy figures.
fn openssl_html(r: &ResultRecord, c: &PublishedComparison<PerCopyRow>) -> String {
    let mut h = String::new();
    let Some(rows) = &c.rows else {
        return h;
    };
    let _ = write!(
        h,
        "<h3>openssl {} ({} copies) vs {}</h3><table><tr><th>CPU (published)</th><th>copies</th><th>published MB/s per copy</th><th>this machine per copy</th></tr>",
        esc(param(r, "alg").unwrap_or("?")),
        esc(param(r, "copies").unwrap_or("?")),
        esc(&c.cited_label())
    );
    for row in rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}</td><td class=\"num\">{:.0}%</td></tr>",
            esc(&row.cpu),
            row.published_copies,
            row.published_mb_s_per_copy,
            row.this_machine_per_copy_pct
        );
    }
    h.push_str("</table>");
    h
}

pub fn published_section(run: &Run) -> String {
    let mut h = String::new();
    let mut said: Vec<String> = Vec::new();
    if run
        .records(workloads::OPENSSL_AES)
        .any(|r| r.value.is_none() && param(r, "alg") == Some("aes-256-ige"))
    {
        // Its "not available" reason (in the results table) says it once.
        said.push("aes-256-cbc".into());
    }
    for r in run
        .results
        .iter()
        .filter(|r| r.from_experiment(workloads::EXP) && r.value.is_some())
    {
        if r.metric.starts_with("bc_") {
            if let Some(c) = r.data_as::<BcData>().and_then(|d| d.published) {
                h.push_str(&bc_html(r, &c));
            }
        } else if r.is(workloads::OPENSSL_AES) {
            let Some(c) = r.data_as::<OpensslData>().map(|d| d.published) else {
                continue;
            };
            if c.label == "not compared" {
                // Once per algorithm.
                let alg = param(r, "alg").unwrap_or("?").to_string();
                if !said.contains(&alg) {
                    let _ = write!(
                        h,
                        "<p class=\"note\">openssl {}: not compared with the published figures: {}</p>",
                        esc(&alg),
                        esc(c.reason.as_deref().unwrap_or("no reason recorded"))
                    );
                    said.push(alg);
                }
                continue;
            }
            if r.params.get("bytes").and_then(|b| b.as_u64())
                == Some(u64::from(workloads::MAIN_BLOCK_BYTES))
            {
                h.push_str(&openssl_html(r, &c));
            }
        }
    }
    if !h.is_empty() {
        h = format!(
            "<h3>Seed workloads against published figures</h3><p class=\"note\">Published figures come from the seed articles (data/published/), not from this run; they are compared only where the workload is the same.</p>{h}"
        );
    }
    h
}

pub fn rate_section(run: &Run) -> String {
    let rows: Vec<(String, f64)> = of(run, rate::JOBS_PER_HOUR)
        .iter()
        .filter_map(|r| {
            Some((
                format!(
                    "{} × {}{}",
                    param(r, "workload")?,
                    param(r, "copies")?,
                    param(r, "mem")
                        .map(|m| format!(", memory {m}"))
                        .unwrap_or_default()
                ),
                r.value?,
            ))
        })
        .collect();
    let mut h = svg_bars("Rate score (copies of one workload)", "jobs/hour", &rows);
    for e in of(run, rate::EFFICIENCY) {
        if let Some(v) = e.value {
            let _ = write!(
                h,
                "<div class=\"note\">efficiency per copy, {} copies={}{}: {v:.1}%</div>",
                esc(param(e, "workload").unwrap_or("?")),
                esc(param(e, "copies").unwrap_or("?")),
                esc(&param(e, "mem")
                    .map(|m| format!(", memory {m}"))
                    .unwrap_or_default())
            );
        }
    }
    for e in of(run, rate::MEM_CHANGE) {
        if let Some(v) = e.value {
            let _ = write!(
                h,
                "<div class=\"note\">{} × {}: memory {} {v:+.1}% against interleave (seed 003's reference)</div>",
                esc(param(e, "workload").unwrap_or("?")),
                esc(param(e, "copies").unwrap_or("?")),
                esc(param(e, "mem").unwrap_or("?"))
            );
        }
    }
    h
}

pub fn placement_section(run: &Run) -> String {
    let t = of(run, placement_study::THROUGHPUT);
    let mut groups: Vec<(&str, &str)> = Vec::new();
    for r in &t {
        if let (Some(c), Some(w)) = (param(r, "comparison"), param(r, "workload")) {
            if !groups.contains(&(c, w)) {
                groups.push((c, w));
            }
        }
    }
    let mut h = String::new();
    for (c, w) in groups {
        let mut rows = Vec::new();
        let mut na = Vec::new();
        for r in t
            .iter()
            .filter(|r| param(r, "comparison") == Some(c) && param(r, "workload") == Some(w))
        {
            let set = param(r, "set").unwrap_or("?");
            let d = r.data_as::<SetThroughputData>().unwrap_or_default();
            match d.relative_pct {
                Some(p) => rows.push((format!("{set} ({})", d.cpus), p)),
                None => na.push(format!(
                    "{set}: {}",
                    r.unavailable_reason.as_deref().unwrap_or("not measured")
                )),
            }
        }
        h.push_str(&svg_bars(
            &format!("Placement {c}, workload {w}"),
            "% of best",
            &rows,
        ));
        for n in na {
            let _ = write!(h, "<div class=\"note na\">{}</div>", esc(&n));
        }
    }
    let m: Vec<(String, f64)> = of(run, placement_study::MEMORY_LATENCY)
        .iter()
        .filter_map(|r| Some((param(r, "memory")?.to_string(), r.value?)))
        .collect();
    h.push_str(&svg_bars(
        "Memory placement (pointer chase)",
        "ns per load",
        &m,
    ));
    h
}

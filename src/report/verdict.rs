//! The verdict: what `cpuscope run` (and `show` without `--all`) ends with,
//! one screen (at most 40 lines, within the terminal's width): the machine,
//! its clock, the latency ladder, bandwidth, core-to-core groups, peak
//! FLOPs, SIMD and SMT yield, the seed workloads against the published
//! CPUs, the top findings with their evidence, how many figures are noisy,
//! what could not be measured grouped by cause, and where the rest lives.
//! Every figure is one of the run's own records; a line whose figures the
//! run lacks says why in a few words or is left out. Never measures.

use super::advice::{self, Severity};
use crate::base::fmt::{fmt_num, fmt_size, for_terminal, wrap};
use crate::experiments::coherence::c2c;
use crate::experiments::coherence::payload::MatrixData;
use crate::experiments::common::{LEVEL_NAMES, PLACEMENT_PARAM};
use crate::experiments::compute::payload::PerCycleData;
use crate::experiments::compute::{peak, simd};
use crate::experiments::memory::bandwidth;
use crate::experiments::memory::payload::{BandwidthData, ClimbData, DramData, LevelData};
use crate::experiments::memory::{latency, numa_matrix};
use crate::experiments::state::frequency;
use crate::experiments::state::payload::SingleCoreData;
use crate::experiments::tune::study as tune;
use crate::results::published;
use crate::results::schema::{MetricId, ResultRecord, Run};
use serde_json::Value;
use std::collections::BTreeMap;

/// The most lines the verdict may take.
pub const MAX_LINES: usize = 40;
/// Width of the key column ("Latency   ").
const KEY: usize = 10;
/// The key of a line that spans the whole width (no key column).
const FULL: &str = "*";

/// How the verdict is laid out: width and colour.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub width: usize,
    pub color: bool,
}

impl Style {
    /// Plain text of `width` columns.
    pub fn plain(width: usize) -> Style {
        Style {
            width: width.clamp(60, 200),
            color: false,
        }
    }

    /// For standard output: as wide as `COLUMNS` and the terminal allow
    /// (the smaller; 100 columns when neither says), 60 at least; colour
    /// only on a terminal whose `TERM` takes it (set, not `dumb`) and
    /// without `NO_COLOR` (`base::term`).
    pub fn for_stdout() -> Style {
        Style {
            width: crate::base::term::width(1).unwrap_or(100).clamp(60, 200),
            color: crate::base::term::color(1),
        }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// One line of the verdict before layout.
struct Line {
    key: &'static str,
    text: String,
    /// ANSI colour of the text (None: plain).
    tone: Option<&'static str>,
}

fn line(key: &'static str, text: impl Into<String>) -> Line {
    Line {
        key,
        text: text.into(),
        tone: None,
    }
}

// ---------------------------------------------------------------- helpers

fn param(r: &ResultRecord, k: &str) -> Option<String> {
    r.params.get(k).map(|v| match v {
        Value::String(s) => s.clone(),
        o => o.to_string(),
    })
}

fn has(r: &ResultRecord, k: &str, v: &str) -> bool {
    param(r, k).as_deref() == Some(v)
}

/// The first measured record of `id` whose params satisfy `f`.
fn find(run: &Run, id: MetricId, f: impl Fn(&ResultRecord) -> bool) -> Option<&ResultRecord> {
    run.records(id).filter(|r| r.value.is_some()).find(|r| f(r))
}

fn noisy_mark(r: &ResultRecord) -> &'static str {
    if r.is_suspect() {
        " ?"
    } else if r.is_noisy() || r.is_disturbed() {
        " !"
    } else {
        ""
    }
}

/// `value unit` with the noisy mark.
fn fig(r: &ResultRecord) -> String {
    format!(
        "{} {}{}",
        fmt_num(r.value.unwrap_or(f64::NAN)),
        r.unit,
        noisy_mark(r)
    )
}

// ---------------------------------------------------------------- lines

fn machine_line(run: &Run) -> Line {
    let m = run.machine_info();
    let mut parts = vec![run.cpu_model().unwrap_or_else(|| "unknown CPU".into())];
    if let Ok(c) = m.uarch.primary() {
        // The core's short name: "Intel Golden Cove / Raptor Cove (server: ...)" → before " (".
        let short_name = c.name.split(" (").next().unwrap_or(&c.name);
        parts[0].push_str(&format!(" [{short_name}]"));
    }
    if m.identity.virtualization.is_virtual == Some(true) {
        parts.push(match &m.identity.virtualization.hypervisor {
            Some(h) => format!("{h} guest"),
            None => "virtual machine".into(),
        });
    }
    let sockets = m.packages.len().max(1);
    parts.push(if m.threads.is_empty() {
        format!("{sockets} socket{}", if sockets == 1 { "" } else { "s" })
    } else {
        format!(
            "{sockets} socket{}, {} cores, {} CPUs",
            if sockets == 1 { "" } else { "s" },
            m.cores.len(),
            m.threads.len()
        )
    });
    let tpc = if m.cores.is_empty() {
        1
    } else {
        m.threads.len().div_ceil(m.cores.len())
    };
    parts.push(if tpc > 1 {
        format!("SMT{tpc}")
    } else {
        "no SMT".into()
    });
    let nodes = m.numa_nodes.len().max(1);
    parts.push(format!(
        "{nodes} NUMA node{}",
        if nodes == 1 { "" } else { "s" }
    ));
    if let Some(l3) = m
        .caches
        .iter()
        .filter(|c| c.level >= 3 && c.kind != "Instruction")
        .max_by_key(|c| c.level)
    {
        let n = m.caches.iter().filter(|c| c.level == l3.level).count();
        parts.push(format!(
            "L{} {}{}",
            l3.level,
            crate::base::fmt::fmt_size(l3.size_bytes.unwrap_or(0) as usize),
            if n > 1 {
                format!(" × {n}")
            } else {
                String::new()
            }
        ));
    }
    // In a container or a limited cgroup: said on the Machine line.
    let confined =
        run.environment.confinement.clone().or_else(|| {
            crate::machine::container::confinement_line(&m.container, &m.cpus, &m.limits)
        });
    parts.extend(confined);
    line("Machine", parts.join(" · "))
}

fn clock_line(run: &Run) -> Option<Line> {
    let one = find(run, frequency::SINGLE_CORE, |_| true)?;
    let mut t = format!("one core {}", fig(one));
    if let Some(all) = find(run, frequency::ALL_CORES, |_| true) {
        let d = all.value.unwrap_or(0.0) / one.value.unwrap_or(1.0) - 1.0;
        t.push_str(&format!(" · all cores {} ({:+.0}%)", fig(all), d * 100.0));
    }
    let declared = one
        .data_as::<SingleCoreData>()
        .map(|d| d.declared)
        .unwrap_or_default();
    if let Some(mx) = declared.cpufreq_max_mhz {
        t.push_str(&format!(" · declared max {:.2} GHz", mx / 1000.0));
    }
    if let Some(b) = declared.cpufreq_base_mhz.or(declared.cpuinfo_mhz) {
        t.push_str(&format!(" · nominal {:.2} GHz", b / 1000.0));
    }
    Some(line("Clock", t))
}

/// The latency lines: the curve's levels and DRAM, then local vs remote memory.
fn latency_lines(run: &Run) -> Vec<Line> {
    let mut out = Vec::new();
    // The 2 MiB-page random curve defines the levels (no TLB cost), else 4 KiB.
    let pages = ["2m", "4k"].into_iter().find(|p| {
        find(run, latency::DRAM, |r| {
            has(r, "pages", p) && has(r, "pattern", "random")
        })
        .is_some()
    });
    if let Some(pg) = pages {
        out.push(curve_line(run, pg));
    }
    if let Some(l) = numa_line(run, if out.is_empty() { "Latency" } else { "" }) {
        out.push(l);
    }
    out
}

/// One line of the random-chase curve on `pg` pages: each cache level, DRAM
/// (on the memory plateau it is read on) and any page-walk climb beyond.
fn curve_line(run: &Run, pg: &str) -> Line {
    let pick = |id| {
        find(run, id, |r| {
            has(r, "pages", pg) && has(r, "pattern", "random")
        })
    };
    let mut parts = Vec::new();
    for name in LEVEL_NAMES.iter().take(3) {
        let Some((ns_id, cy_id)) = latency::level(name) else {
            continue;
        };
        let missing = run
            .records(ns_id)
            .find(|r| r.value.is_none() && has(r, "pages", pg) && has(r, "pattern", "random"));
        if let Some(r) = missing {
            let why = r
                .unavailable_reason
                .as_deref()
                .map(cause)
                .unwrap_or_default();
            parts.push(format!("{name} n/a ({})", short(&why, 40)));
        }
        if let Some(ns) = pick(ns_id) {
            let cy = pick(cy_id)
                .and_then(|c| c.value)
                .map(|c| format!(" ({c:.0} c)"))
                .unwrap_or_default();
            let share = ns
                .data_as::<LevelData>()
                .map(|d| d.level)
                .filter(|m| m.share)
                .map(|m| {
                    format!(
                        " (effective ~{} of {} declared)",
                        fmt_size(m.detected_bytes.unwrap_or(0)),
                        fmt_size(m.declared_bytes)
                    )
                })
                .unwrap_or_default();
            parts.push(format!(
                "{name} {} ns{cy}{share}{}",
                fmt_num(ns.value.unwrap_or(0.0)),
                noisy_mark(ns)
            ));
        }
    }
    if let Some(d) = pick(latency::DRAM) {
        let cy = pick(latency::DRAM_CYCLES)
            .and_then(|c| c.value)
            .map(|c| format!(" ({c:.0} c)"))
            .unwrap_or_default();
        let plateau = d
            .data_as::<DramData>()
            .and_then(|p| p.memory_plateau_bytes)
            .map(|[a, b]| format!(" on {}–{}", fmt_size(a), fmt_size(b)))
            .unwrap_or_default();
        parts.push(format!(
            "DRAM {} ns{cy}{plateau}{}",
            fmt_num(d.value.unwrap_or(0.0)),
            noisy_mark(d)
        ));
    }
    if let Some(c) = pick(latency::PAGE_WALK_CLIMB) {
        let from = c.data_as::<ClimbData>().map(|d| d.climb);
        if let (Some(v), Some(cl)) = (c.value, from) {
            parts.push(format!(
                "then {v:+.0} ns per doubling from {} (page walks, not DRAM)",
                fmt_size(cl.from_bytes)
            ));
        }
    }
    line(
        "Latency",
        format!(
            "{}   [{} pages, random chase]",
            parts.join(" · "),
            if pg == "2m" { "2 MiB" } else { "4 KiB" }
        ),
    )
}

/// Local vs remote memory latency from the NUMA matrix, when it has both.
fn numa_line(run: &Run, label: &'static str) -> Option<Line> {
    let lat: Vec<&ResultRecord> = run
        .records(numa_matrix::LATENCY)
        .filter(|r| r.value.is_some())
        .collect();
    let is_local = |r: &ResultRecord| {
        param(r, "cpu_node").is_some() && param(r, "cpu_node") == param(r, "mem")
    };
    let local: Vec<f64> = lat
        .iter()
        .filter(|r| is_local(r))
        .filter_map(|r| r.value)
        .collect();
    let remote: Vec<f64> = lat
        .iter()
        .filter(|r| !is_local(r) && param(r, "mem").is_some_and(|m| m.parse::<usize>().is_ok()))
        .filter_map(|r| r.value)
        .collect();
    if local.is_empty() || remote.is_empty() {
        return None;
    }
    let l = local.iter().sum::<f64>() / local.len() as f64;
    let worst = remote.iter().copied().fold(f64::NAN, f64::max);
    Some(line(
        label,
        format!(
            "NUMA: local {} ns · remote up to {} ns (×{:.2}) over {} node pairs",
            fmt_num(l),
            fmt_num(worst),
            worst / l,
            remote.len()
        ),
    ))
}

fn bandwidth_line(run: &Run) -> Option<Line> {
    let dram: Vec<&ResultRecord> = run
        .records(bandwidth::TRIAD)
        .filter(|r| r.value.is_some())
        .filter(|r| has(r, "scope", bandwidth::DRAM_SCOPE) && has(r, "store", "normal"))
        .filter(|r| !has(r, "width", "scalar"))
        .filter(|r| param(r, PLACEMENT_PARAM).is_none_or(|p| p == "compact"))
        .collect();
    let threads = |r: &&ResultRecord| {
        param(r, "threads")
            .and_then(|t| t.parse::<usize>().ok())
            .unwrap_or(0)
    };
    let one = dram.iter().find(|r| threads(r) == 1)?;
    let all = dram.iter().max_by_key(|r| threads(r))?;
    let mut t = format!("triad one core {}", fig(one));
    if threads(all) > 1 {
        t.push_str(&format!(" · {} threads {}", threads(all), fig(all)));
    }
    let bw = all.data_as::<BandwidthData>().unwrap_or_default();
    match bw.dram_efficiency {
        Some(e) => t.push_str(&format!(
            " = {:.0}% of the DIMMs' {} GB/s",
            e * 100.0,
            fmt_num(bw.theoretical_gbs.unwrap_or(0.0))
        )),
        None => {
            if let Some(n) = all
                .notes
                .iter()
                .find(|n| n.starts_with("theoretical DRAM bandwidth not available"))
            {
                let why = n.split_once(": ").map(|x| x.1).unwrap_or(n);
                t.push_str(&format!(" · theory n/a ({})", short(why, 60)));
            }
        }
    }
    Some(line("Bandwidth", t))
}

/// The first `n` characters of `s` (at a word), with "…" when cut.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let cut: String = s.chars().take(n).collect();
    let cut = cut.rsplit_once(' ').map(|x| x.0).unwrap_or(&cut);
    format!("{cut}…")
}

fn c2c_line(run: &Run) -> Option<Line> {
    fn words(rel: &str) -> &str {
        match rel {
            "smt_sibling" => "SMT siblings",
            "shared_l2" => "same L2",
            "shared_l3" => "same L3",
            "same_die" => "same die",
            "same_package" => "same socket",
            "cross_package" => "across sockets",
            "same_node" => "same node",
            "cross_node" => "across nodes",
            o => o,
        }
    }
    let mat = run.records(c2c::MATRIX).find(|r| has(r, "method", "cas"));
    // A disturbed measurement: the figure with by how much, not plainly.
    if let Some(t) = mat.and_then(c2c_disturbed) {
        return Some(Line {
            key: "Core↔core",
            text: t,
            tone: Some("33"),
        });
    }
    let recs: Vec<&ResultRecord> = run
        .records(c2c::ONE_WAY_LATENCY)
        .filter(|r| r.value.is_some() && has(r, "method", "cas"))
        .collect();
    if recs.is_empty() {
        return None;
    }
    let parts: Vec<String> = recs
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                words(&param(r, "relation").unwrap_or_default()),
                fig(r)
            )
        })
        .collect();
    // The matrix record's payload, typed (coherence::payload::MatrixData).
    let data = mat.and_then(ResultRecord::data_as::<MatrixData>);
    // SMT among the measured CPUs: the record's sibling pairs.
    let smt = data.as_ref().map(|d| !d.smt_siblings.is_empty());
    // The inferred latency groups, each with what it matches, else the
    // declared relations' medians.
    let levels: Vec<String> = data
        .as_ref()
        .and_then(|d| d.inference.as_ref())
        .map(|inf| inf.levels.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|l| {
            format!(
                "{} {} ns",
                c2c_group_label(&l.label, smt),
                fmt_num(l.latency_ns)
            )
        })
        .collect();
    let t = if levels.is_empty() {
        format!("one-way CAS: {}", parts.join(" · "))
    } else {
        format!(
            "one-way CAS, {} group(s): {}",
            levels.len(),
            levels.join(" · ")
        )
    };
    Some(line("Core↔core", t))
}

/// The c2c line of a disturbed CAS matrix record (`data.disturbance`):
/// the figure, by how many pairs and by how much steal time it was
/// disturbed; None when it was not.
fn c2c_disturbed(r: &ResultRecord) -> Option<String> {
    let d = r.data_as::<MatrixData>()?.disturbance?;
    if !d.disturbed {
        return None;
    }
    let steal = match &d.steal {
        None => "steal time not measured".to_string(),
        Some(s) if s.unavailable.is_some() => "steal time n/a".to_string(),
        Some(s) if s.ticks == 0 => "no steal time".to_string(),
        Some(s) => format!(
            "steal {:.1}% of CPU time ({} s)",
            s.share * 100.0,
            fmt_num(s.seconds)
        ),
    };
    let figure = match r.value {
        Some(_) => format!("{} (median of pairs)", fig(r)),
        None => "n/a".to_string(),
    };
    Some(format!(
        "one-way CAS {figure}, disturbed: {} of {} pairs preempted, {steal} during c2c; not a clean figure",
        d.pairs_preempted, d.pairs_measured
    ))
}

/// A latency group's label as a short phrase: a declared level's first
/// name ("shared L3 = same NUMA node" -> "shared L3"); a hidden level as
/// stored ("hidden level between shared L2 and shared L3"), or from the
/// older form ("not declared: between 'A = B' and 'C'"), quotes dropped, each
/// side by its first name. Without SMT among the measured CPUs (`smt`
/// false) no group is called SMT siblings.
fn c2c_group_label(label: &str, smt: Option<bool>) -> String {
    let hidden = label
        .strip_prefix("not declared: ")
        .or_else(|| label.strip_prefix("hidden level "));
    let mut t = match hidden {
        Some(rest) => {
            // Inside quotes (odd segments) keep the first name only.
            let phrase: String = rest
                .split('\'')
                .enumerate()
                .map(|(i, seg)| {
                    if i % 2 == 1 {
                        seg.split(" = ").next().unwrap_or(seg)
                    } else {
                        seg
                    }
                })
                .collect();
            format!("hidden level {}", phrase.replace("cuts across", "across"))
        }
        None => label.split(" = ").next().unwrap_or(label).to_string(),
    };
    if smt == Some(false) && t.contains("SMT siblings") {
        t = t
            .replace("between SMT siblings (same core) and ", "finer than ")
            .replace("SMT siblings (same core)", "one core")
            .replace("SMT siblings", "one core");
    }
    t
}

fn peak_line(run: &Run) -> Option<Line> {
    let recs: Vec<&ResultRecord> = run
        .records(peak::FMA_FLOPS)
        .filter(|r| r.value.is_some() && has(r, "threads", "1"))
        .collect();
    // A numbered width, or SVE at its recorded vector length.
    let widest = recs
        .iter()
        .max_by_key(|r| peak::record_bits(r).unwrap_or(64))?;
    let w = param(widest, "width").unwrap_or_default();
    let label = peak::record_width_label(widest);
    let mut t = format!("FP64 FMA {label}, one core {}", fig(widest));
    if let Some(pc) = find(run, peak::FMA_FLOPS_PER_CYCLE, |r| {
        has(r, "threads", "1") && has(r, "width", &w)
    }) {
        t.push_str(&format!(" = {:.1} FLOP/cycle", pc.value.unwrap_or(0.0)));
        let d = pc.data_as::<PerCycleData>().unwrap_or_default();
        let theory = d.against_theory.as_ref().map(|a| a.theoretical);
        match (&d.against_theory, d.inferred_fma_units) {
            (Some(a), _) => t.push_str(&format!(
                " ({:.0}% of {:.0})",
                a.ratio * 100.0,
                a.theoretical
            )),
            (None, Some(i)) => t.push_str(&format!(" (≈{} FMA units, inferred)", fmt_num(i))),
            (None, None) => {}
        }
        // The clock while this width runs: the ratio above is per cycle
        // of the scalar clock; say what the width's own clock does.
        let clock = find(run, peak::SIMD_CLOCK, |r| {
            has(r, "threads", "1") && has(r, "width", &w)
        });
        if let Some((c, words)) = clock.and_then(|c| Some((c, peak::clock_words(c)?))) {
            let dropped = peak::clock_change_of(c).is_some_and(|x| x.3);
            let actual = find(run, peak::FMA_FLOPS_PER_ACTUAL_CYCLE, |r| {
                has(r, "threads", "1") && has(r, "width", &w)
            })
            .filter(|_| dropped);
            match actual.and_then(|a| a.value.map(|v| (a, v))) {
                Some((a, v)) => t.push_str(&format!(
                    " at the scalar clock; {words}{}: {v:.1} FLOP per actual cycle{}",
                    noisy_mark(c),
                    theory
                        .map(|th| format!(" ({:.0}%)", v / th * 100.0))
                        .unwrap_or_default()
                        + noisy_mark(a)
                )),
                None => t.push_str(&format!("; {words}{}", noisy_mark(c))),
            }
        }
    }
    if let Some(all) = find(run, peak::FMA_FLOPS, |r| {
        has(r, "threads", "per_core") && has(r, "width", &w)
    }) {
        t.push_str(&format!(" · all cores {}", fig(all)));
    }
    Some(line("Compute", t))
}

fn simd_line(run: &Run) -> Option<Line> {
    let one: Vec<&ResultRecord> = run
        .records(simd::THROUGHPUT)
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
        match peak::clock_change_of(c) {
            Some((.., true)) => dropped.extend(peak::clock_words(c).map(|w| w + noisy_mark(c))),
            Some(_) => same.push(peak::clock_record_label(c) + noisy_mark(c)),
            None => {}
        }
    }
    if !same.is_empty() {
        let tol = clocks
            .iter()
            .filter_map(|c| peak::clock_change_of(c).map(|x| x.2))
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
        return clock_text.map(|c| line("SIMD", c));
    };
    let best = one
        .iter()
        .max_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))?;
    let mut t = format!(
        "ChaCha20 {} {} = ×{:.1} scalar",
        param(best, "variant").unwrap_or_default(),
        fig(best),
        best.value.unwrap_or(0.0) / scalar.value.unwrap_or(1.0)
    );
    if let Some(c) = &clock_text {
        t.push_str(&format!(" · {c}"));
    }
    let yields: Vec<String> = run
        .records(simd::SMT_YIELD)
        .filter(|r| r.value.is_some())
        .map(|r| {
            format!(
                "{} {} {}",
                param(r, "variant").unwrap_or_default(),
                fmt_num(r.value.unwrap_or(0.0)),
                r.unit
            )
        })
        .collect();
    if !yields.is_empty() {
        t.push_str(&format!(" · SMT yield {}", yields.join(", ")));
    } else if let Some(r) = run.records(simd::SMT_YIELD).next() {
        t.push_str(&format!(
            " · SMT yield n/a ({})",
            short(
                r.unavailable_reason.as_deref().unwrap_or("not measured"),
                40
            )
        ));
    }
    Some(line("SIMD", t))
}

/// The seed workloads beside the published CPUs: per workload figure, the
/// published machine closest to this one, as "this run vs that machine".
fn seeds_line(run: &Run) -> Option<Line> {
    let mut parts = Vec::new();
    let mut seen = Vec::new();
    for r in run.results.iter().filter(|r| r.value.is_some()) {
        let ms = published::matches_for(r);
        let Some(v) = r.value else {
            continue;
        };
        let mut best: Option<(f64, String)> = None;
        for m in ms {
            let Some(p) = m.value else {
                continue;
            };
            if matches!(
                m.figure.qualifier,
                published::Qualifier::AtMost | published::Qualifier::AtLeast
            ) {
                continue;
            }
            let Some(rel) = super::compare::relative_pct(v, p, r.higher_is_better) else {
                continue;
            };
            let d = (rel - 100.0).abs();
            if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
                best = Some((
                    d,
                    format!(
                        "{} {} ×{:.2} vs {}",
                        r.experiment,
                        r.metric,
                        rel / 100.0,
                        m.figure.machine
                    ),
                ));
            }
        }
        if let Some((_, s)) = best {
            if !seen.contains(&r.metric) {
                seen.push(r.metric.clone());
                parts.push(s);
            }
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(line(
        "Seeds",
        format!("{} (×>1: this run faster)", parts.join(" · ")),
    ))
}

/// Unavailable reasons grouped by cause: (cause, what) in order of size.
pub fn grouped_unavailable(run: &Run) -> Vec<(String, String)> {
    let mut by: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for r in run.results.iter().filter(|r| r.value.is_none()) {
        let reason = r
            .unavailable_reason
            .as_deref()
            .unwrap_or("no reason recorded");
        let what = if r.metric == r.experiment {
            r.experiment.clone()
        } else {
            format!("{} {}", r.experiment, r.metric)
        };
        *by.entry(cause(reason))
            .or_default()
            .entry(what)
            .or_default() += 1;
    }
    let mut v: Vec<(usize, String, String)> = by
        .into_iter()
        .map(|(c, whats)| {
            let n = whats.values().sum();
            let w: Vec<String> = whats
                .into_iter()
                .map(|(w, k)| if k > 1 { format!("{w} ×{k}") } else { w })
                .collect();
            (n, c, w.join(", "))
        })
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    v.into_iter().map(|(_, c, w)| (c, w)).collect()
}

/// The cause of an unavailable reason, in a few words: reasons that differ
/// only in detail (which counter, which errno text) share a cause.
pub fn cause(reason: &str) -> String {
    let l = reason.to_ascii_lowercase();
    let has = |k: &str| l.contains(k);
    if has("pmu") || (has("not supported") && (has("cycles") || has("instructions"))) {
        return if has("virtual machine") || has("hypervisor") {
            "no hardware counters (PMU) in this VM".into()
        } else {
            "hardware counters (PMU) not available".into()
        };
    }
    if has("perf_event_paranoid") || has("eacces") || has("permission") {
        return "not permitted to count (perf_event_paranoid)".into();
    }
    if has("smt") || has("threads of one core") || has("hardware thread") {
        return "no SMT".into();
    }
    // NUMA: what the reason says of the nodes, most specific first (a
    // 2-node machine whose sockets hold one node each is not "one node").
    if has("holds two numa nodes") || has("no two numa nodes on different sockets") {
        return "one NUMA node per socket".into();
    }
    if has("no numa node holds") {
        return "NUMA nodes smaller than the placement set".into();
    }
    if has("same distance as the nearest") {
        return "one remote distance (no farther node)".into();
    }
    if has("one numa node")
        || has("one usable numa node")
        || has("no remote memory")
        || has("there is no remote")
        || has("numa nodes unknown")
    {
        return "one NUMA node".into();
    }
    if has("package") || has("socket") || has("one l3") {
        return "one socket / one L3".into();
    }
    if has("neon") || has("avx") || has("sve") || has("instruction set") {
        return "instruction set not on this CPU".into();
    }
    if has("not the cache") {
        return "4 KiB-page plateau is DRAM plus TLB misses (the 2 MiB-page curve has the level)"
            .into();
    }
    if has("of the memory plateau") {
        return "plateau at memory latency, not a cache (VM or sub-NUMA memory)".into();
    }
    if has("no step within") || has("no step of its own") {
        return "cache level without a step near its declared size".into();
    }
    if has("places threads exactly like") {
        return "placements identical on this machine".into();
    }
    if has("huge page") || has("hugetlb") {
        return "no huge pages".into();
    }
    if has("not saturated") || has("still growing") {
        return "bandwidth still growing at all CPUs".into();
    }
    short(reason.split(": ").next().unwrap_or(reason), 60)
}

fn findings_lines(run: &Run, max: usize) -> Vec<Line> {
    let f = advice::findings(run);
    let mut out = Vec::new();
    for x in f.iter().take(max) {
        let (mark, tone) = match x.severity {
            Severity::Warning => ("!", Some("33")),
            Severity::Advice => ("·", None),
        };
        out.push(Line {
            key: "",
            text: format!("{mark} {}", x.title),
            tone,
        });
        if let Some(e) = x.evidence.first() {
            out.push(line("", format!("  evidence: {} = {}", e.what, e.value)));
        }
        // What to do: the advice's first sentence.
        let masked = x
            .advice
            .replace("e.g. ", "e.g.\u{a0}")
            .replace("i.e. ", "i.e.\u{a0}");
        let first = masked
            .split(". ")
            .next()
            .unwrap_or(&masked)
            .trim_end_matches('.')
            .replace('\u{a0}', " ");
        out.push(line("", format!("  → {}", short(&first, 150))));
    }
    if f.len() > max {
        out.push(line(
            "",
            format!(
                "… {} more in `cpuscope show {} --all`",
                f.len() - max,
                run.id
            ),
        ));
    }
    out
}

// ---------------------------------------------------------------- layout

fn layout(lines: &[Line], style: &Style) -> Vec<String> {
    let mut out = Vec::new();
    let body = style.width.saturating_sub(KEY + 2).max(20);
    for l in lines {
        // The text holds the run's strings (CPU model, notes, reasons, a
        // tune command): escaped here, before wrapping and colour, once for
        // every line.
        let text = for_terminal(&l.text);
        if l.key == FULL {
            for w in wrap(&text, style.width) {
                out.push(match l.tone {
                    Some(c) => style.paint(c, &w),
                    None => w,
                });
            }
            continue;
        }
        for (i, w) in wrap(&text, body).into_iter().enumerate() {
            let key = if i == 0 { l.key } else { "" };
            let k = format!("{key:<KEY$}");
            let k = if key.is_empty() {
                k
            } else {
                style.paint("1", &k)
            };
            let t = match l.tone {
                Some(c) => style.paint(c, &w),
                None => w,
            };
            out.push(format!("{k}  {t}").trim_end().to_string());
        }
    }
    out
}

/// A tune run's own verdict sentence, with the command it measured.
fn tune_line(run: &Run) -> Option<Line> {
    let view = tune::TuneView::of(run)?;
    let text = match &view.verdict {
        Some((_, d)) => format!("{}: {}", short(&d.command.join(" "), 40), d.text),
        None => format!(
            "{} candidates measured, no verdict (the run stopped before one)",
            view.candidates.len()
        ),
    };
    Some(line("Tune", text))
}

/// Every line of the verdict before layout, with at most `nf` findings and
/// `nu` causes of "not available"; `html`: the report's path, if written.
/// On a busy machine, said before any figure: what other programs and the
/// host took while the run measured.
fn busy_line(run: &Run) -> Option<Line> {
    let a = run.environment.activity.as_ref().filter(|a| a.busy)?;
    Some(Line {
        key: "BUSY",
        text: format!(
            "{}: figures are disturbed; findings from them are marked, not stated as hardware facts; repeat on an idle machine",
            a.summary()
        ),
        tone: Some("33"),
    })
}

/// The end of the Noise line: how many figures are implausible (`suspect`)
/// and how many the cgroup's CPU quota throttled while they were measured.
fn flag_counts(run: &Run, suspect: usize) -> String {
    let mut s = String::new();
    if suspect > 0 {
        s.push_str(&format!("; {suspect} implausible (marked ?)"));
    }
    let disturbed = run.results.iter().filter(|r| r.is_disturbed()).count();
    if disturbed > 0 {
        s.push_str(&format!(
            "; {disturbed} disturbed while measured, the CPU quota throttling them (marked !)"
        ));
    }
    s
}

fn assemble(run: &Run, html: Option<&str>, nf: usize, nu: usize) -> Vec<Line> {
    let measured = run.results.iter().filter(|r| r.value.is_some()).count();
    let noisy = run.results.iter().filter(|r| r.is_noisy()).count();
    let suspect = run.results.iter().filter(|r| r.is_suspect()).count();
    let mut all = vec![
        Line {
            key: FULL,
            text: format!(
                "cpuscope verdict · run {} · {} profile · {} · {measured} figures measured",
                run.id,
                run.profile,
                run.status.as_str()
            ),
            tone: Some("1"),
        },
        machine_line(run),
    ];
    all.extend(busy_line(run));
    all.extend(clock_line(run));
    all.extend(latency_lines(run));
    all.extend(bandwidth_line(run));
    all.extend(c2c_line(run));
    all.extend(peak_line(run));
    all.extend(simd_line(run));
    all.extend(seeds_line(run));
    all.extend(tune_line(run));
    let f = findings_lines(run, nf);
    if !f.is_empty() {
        all.push(line("Findings", ""));
        all.extend(f);
    }
    let busy = run.environment.activity.as_ref().filter(|a| a.busy);
    all.push(line(
        "Noise",
        format!(
            "{noisy} of {measured} figures with CV > 5%{}{}",
            match (noisy > 0, busy) {
                (true, Some(a)) => format!(
                    " (marked ! above and in show --all): the machine was busy, other programs {:.0}% of its CPU time, steal {:.1}%",
                    a.others_share * 100.0,
                    a.steal_share * 100.0
                ),
                (true, None) => " (marked ! above and in show --all)".to_string(),
                _ => String::new(),
            },
            flag_counts(run, suspect)
        ),
    ));
    let unavailable = grouped_unavailable(run);
    let n = unavailable.len();
    for (i, (c, w)) in unavailable.iter().take(nu).enumerate() {
        let more = if i + 1 == nu && n > nu {
            format!(" (+{} more causes)", n - nu)
        } else {
            String::new()
        };
        all.push(line(
            if i == 0 { "n/a" } else { "" },
            format!("{c}: {}{more}", short(w, 70)),
        ));
    }
    all.push(line(
        "More",
        format!(
            "every figure: cpuscope show {id} --all · per experiment: cpuscope show {id} --summary",
            id = run.id
        ),
    ));
    if let Some(h) = html {
        all.push(line(FULL, format!("HTML report: {h}")));
    }
    all
}

/// The verdict of `run` as terminal text; `html` is the report's path when
/// one was written. Fits [`MAX_LINES`] lines of `style.width` columns:
/// fewer findings, then fewer causes, until it does. A payload the verdict
/// could not read is said after it, one line each.
pub fn render(run: &Run, html: Option<&str>, style: &Style) -> String {
    super::unreadable::after(run, || render_lines(run, html, style))
}

/// The verdict's lines, at most `MAX_LINES`.
fn render_lines(run: &Run, html: Option<&str>, style: &Style) -> String {
    let mut best = Vec::new();
    for (nf, nu) in [(5, 5), (4, 4), (3, 3), (3, 2), (2, 2), (1, 1), (0, 1)] {
        best = layout(&assemble(run, html, nf, nu), style);
        if best.len() <= MAX_LINES {
            break;
        }
    }
    best.truncate(MAX_LINES);
    let mut s = best.join("\n");
    s.push('\n');
    s
}

/// The verdict as the HTML report's opening card: the same lines, one row
/// each, warnings marked.
pub fn html_card(run: &Run) -> String {
    use crate::base::html::esc;
    let mut h = String::from("<section class=\"verdict\" id=\"verdict\"><h2>Verdict</h2><table>");
    for l in assemble(run, None, 5, 5) {
        if l.key == "More" {
            continue;
        }
        let class = match l.tone {
            Some("33") => " class=\"warn\"",
            Some("1") => " class=\"lead\"",
            _ => "",
        };
        if l.key == FULL {
            h.push_str(&format!(
                "<tr{class}><td colspan=\"2\">{}</td></tr>",
                esc(&l.text)
            ));
        } else {
            h.push_str(&format!(
                "<tr{class}><th>{}</th><td>{}</td></tr>",
                esc(l.key),
                esc(&l.text)
            ));
        }
    }
    h.push_str("</table></section>");
    h
}

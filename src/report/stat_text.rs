//! Rendering of `cpuscope stat` results: perf-like text (with derived
//! metrics and reasons for what is missing), CSV and interval lines.

use crate::base::fmt::for_terminal;
use crate::counters::doc::StatDoc;
use crate::counters::group::{EventReading, EventState};
use crate::counters::metrics::{DerivedMetrics, RATIOS};
use std::collections::BTreeMap;
use std::fmt::Write;

/// `1234567` -> `1,234,567`.
pub fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn is_clock(r: &EventReading) -> bool {
    r.unit.as_deref() == Some("ns")
}

/// The value column and unit column of an event line.
fn value_cols(r: &EventReading) -> (String, String) {
    match (r.state, r.value) {
        (EventState::Counted, Some(v)) => {
            if is_clock(r) {
                let ms = v / 1e6;
                let int = thousands(ms.trunc() as u64);
                (
                    format!("{int}.{:02}", ((ms.fract() * 100.0).round() as u64).min(99)),
                    "msec".into(),
                )
            } else {
                let unit = r.unit.clone().unwrap_or_default();
                if v.fract() != 0.0 && v < 1e6 && !unit.is_empty() {
                    (format!("{v:.2}"), unit)
                } else {
                    (thousands(v.round() as u64), unit)
                }
            }
        }
        _ => (r.state.marker().to_string(), String::new()),
    }
}

fn rate(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.3} G/sec", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.3} M/sec", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.3} K/sec", v / 1e3)
    } else {
        format!("{v:.3} /sec")
    }
}

/// The `# ...` annotation perf prints next to some events.
fn annotation(r: &EventReading, m: &DerivedMetrics, task_s: Option<f64>) -> Option<String> {
    if r.state != EventState::Counted {
        return None;
    }
    let pct = |x: Option<f64>, what: &str| x.map(|v| format!("{v:6.2}% {what}"));
    match r.key.as_str() {
        "task-clock" | "cpu-clock" => m.cpus_utilized.map(|v| format!("{v:8.3} CPUs utilized")),
        "cycles" => m.ghz.map(|v| format!("{v:8.3} GHz")),
        "instructions" => m.ipc.map(|v| {
            let mut a = format!("{v:8.2}  insn per cycle");
            if let Some(s) = m.stalled_cycles_per_insn {
                let _ = write!(a, ", {s:.2} stalled cycles per insn");
            }
            a
        }),
        "branch-misses" => pct(m.branch_miss_pct, "of all branches"),
        "cache-misses" => pct(m.cache_miss_pct, "of all cache refs"),
        "L1-dcache-load-misses" => pct(m.l1d_miss_pct, "of all L1-dcache accesses"),
        "L1-icache-load-misses" => pct(m.l1i_miss_pct, "of all L1-icache accesses"),
        "LLC-load-misses" => pct(m.llc_miss_pct, "of all LL-cache accesses"),
        "dTLB-load-misses" => pct(m.dtlb_miss_pct, "of all dTLB cache accesses"),
        "iTLB-load-misses" => pct(m.itlb_miss_pct, "of all iTLB cache accesses"),
        "stalled-cycles-frontend" => pct(m.frontend_stall_pct, "frontend cycles idle"),
        "stalled-cycles-backend" => pct(m.backend_stall_pct, "backend cycles idle"),
        "context-switches" | "cpu-migrations" | "page-faults" | "minor-faults" | "major-faults" => {
            let t = task_s?;
            let v = r.value?;
            (t > 0.0).then(|| format!("{:>12}", rate(v / t)))
        }
        _ => None,
    }
}

fn task_seconds(events: &[EventReading]) -> Option<f64> {
    events
        .iter()
        .find(|e| (e.key == "task-clock" || e.key == "cpu-clock") && e.state == EventState::Counted)
        .and_then(|e| e.value)
        .map(|ns| ns / 1e9)
}

/// One perf-like event line (without newline).
pub fn event_line(r: &EventReading, m: &DerivedMetrics, task_s: Option<f64>) -> String {
    let (val, unit) = value_cols(r);
    let mut line = format!("{val:>18} {unit:<4} {:<32}", for_terminal(&r.name));
    if let Some(a) = annotation(r, m, task_s) {
        let _ = write!(line, " # {a}");
    }
    match r.state {
        EventState::Counted => {
            if let Some(p) = r.running_pct {
                if p < 99.995 {
                    let _ = write!(line, "  ({p:.2}%)");
                }
            }
        }
        _ => {
            if let Some(code) = &r.reason_code {
                let _ = write!(line, " [{}]", for_terminal(code));
            }
        }
    }
    line.trim_end().to_string()
}

/// Names of the derived metrics in text order with their display label and unit.
const METRIC_LABELS: &[(&str, &str, &str)] = &[
    ("ipc", "IPC (insn per cycle)", ""),
    ("cpi", "CPI (cycles per insn)", ""),
    ("ghz", "effective frequency", "GHz"),
    ("cpus_utilized", "CPUs utilized", ""),
    ("branch_miss_pct", "branch misses", "%"),
    ("cache_miss_pct", "cache misses", "%"),
    ("l1d_miss_pct", "L1-dcache load misses", "%"),
    ("l1i_miss_pct", "L1-icache load misses", "%"),
    ("llc_miss_pct", "LLC load misses", "%"),
    ("dtlb_miss_pct", "dTLB load misses", "%"),
    ("itlb_miss_pct", "iTLB load misses", "%"),
    ("frontend_stall_pct", "frontend stalled cycles", "%"),
    ("backend_stall_pct", "backend stalled cycles", "%"),
    ("stalled_cycles_per_insn", "stalled cycles per insn", ""),
];

/// Value of a metric field by name.
pub fn metric_value(m: &DerivedMetrics, name: &str) -> Option<f64> {
    match name {
        "ipc" => m.ipc,
        "cpi" => m.cpi,
        "ghz" => m.ghz,
        "cpus_utilized" => m.cpus_utilized,
        "branch_miss_pct" => m.branch_miss_pct,
        "cache_miss_pct" => m.cache_miss_pct,
        "l1d_miss_pct" => m.l1d_miss_pct,
        "l1i_miss_pct" => m.l1i_miss_pct,
        "llc_miss_pct" => m.llc_miss_pct,
        "dtlb_miss_pct" => m.dtlb_miss_pct,
        "itlb_miss_pct" => m.itlb_miss_pct,
        "frontend_stall_pct" => m.frontend_stall_pct,
        "backend_stall_pct" => m.backend_stall_pct,
        "stalled_cycles_per_insn" => m.stalled_cycles_per_insn,
        _ => None,
    }
}

/// Short "why absent" for a metric: the state and reason codes of its
/// missing inputs (so metrics failing for the same reason share one line).
/// None when an input was not requested at all (the metric is then not
/// shown in text; JSON still carries it as null with its reason).
fn short_missing(name: &str, m: &DerivedMetrics, events: &[EventReading]) -> Option<String> {
    let has = |k: &str| events.iter().any(|e| e.key == k);
    let inputs: Vec<&str> = match RATIOS.iter().find(|(f, ..)| *f == name) {
        Some((_, a, b, _)) => vec![a, b],
        None if name == "ghz" => vec!["cycles"],
        None if name == "stalled_cycles_per_insn" => {
            // Shown when either stall event was asked for (perf shows it
            // with either); its inputs are the stall events and instructions.
            if !has("stalled-cycles-frontend") && !has("stalled-cycles-backend") {
                return None;
            }
            [
                "stalled-cycles-frontend",
                "stalled-cycles-backend",
                "instructions",
            ]
            .into_iter()
            .filter(|k| has(k))
            .collect()
        }
        None if name == "cpus_utilized" => {
            if !has("task-clock") && !has("cpu-clock") {
                return None;
            }
            vec![]
        }
        None => vec![],
    };
    let mut parts: Vec<String> = Vec::new();
    for i in inputs {
        let p = match events.iter().find(|e| e.key == i) {
            None => return None,
            Some(e) if e.state != EventState::Counted => format!(
                "inputs {} [{}]",
                e.state.marker().trim_matches(['<', '>']),
                e.reason_code.as_deref().unwrap_or("?")
            ),
            _ => continue,
        };
        if !parts.contains(&p) {
            parts.push(p);
        }
    }
    Some(if parts.is_empty() {
        m.missing
            .get(name)
            .cloned()
            .unwrap_or_else(|| "not available".into())
    } else {
        parts.join(", ")
    })
}

/// Perf-like text of a whole result.
pub fn render_text(doc: &StatDoc) -> String {
    let mut o = String::new();
    let what = match (&doc.target.command, doc.target.pid) {
        (_, Some(pid)) => format!("process id '{pid}'"),
        // The command as given (its arguments may hold anything).
        (Some(c), None) => format!("'{}'", for_terminal(&c.join(" "))),
        (None, None) => String::new(),
    };
    let cpus = match (&doc.target.cpus, what.is_empty()) {
        (Some(c), true) => format!("'CPU(s) {c}'"),
        (Some(c), false) => format!(" on CPU(s) {c}"),
        (None, _) => String::new(),
    };
    let _ = writeln!(o, "\n Performance counter stats for {what}{cpus}:\n");
    if let Some(per) = &doc.per_cpu {
        for pc in per {
            let ts = task_seconds(&pc.events);
            for e in &pc.events {
                let _ = writeln!(o, "CPU{:<4}{}", pc.cpu, event_line(e, &pc.metrics, ts));
            }
        }
        o.push('\n');
    }
    let ts = task_seconds(&doc.events);
    for e in &doc.events {
        let _ = writeln!(o, "{}", event_line(e, &doc.metrics, ts));
    }
    o.push_str(&render_reasons(&doc.events));
    o.push_str(&render_metrics(
        &doc.metrics,
        &doc.events,
        doc.topdown_method.as_deref(),
    ));
    let _ = writeln!(o, "\n{:>18.9} seconds time elapsed", doc.elapsed_s);
    if let Some(x) = &doc.exit {
        let _ = writeln!(o, "\n{:>18.9} seconds user", x.user_s);
        let _ = writeln!(o, "{:>18.9} seconds sys", x.sys_s);
    }
    for n in &doc.notes {
        let _ = writeln!(o, "\n note: {}", for_terminal(n));
    }
    o.push('\n');
    o
}

/// One line per distinct reason, listing the events it applies to.
pub fn render_reasons(events: &[EventReading]) -> String {
    let mut by: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.state != EventState::Counted) {
        let code = e.reason_code.clone().unwrap_or_else(|| "?".into());
        let text = e.reason.clone().unwrap_or_default();
        let names = by.entry((code, text)).or_default();
        if !names.contains(&e.name) {
            names.push(e.name.clone());
        }
    }
    if by.is_empty() {
        return String::new();
    }
    let mut o = String::from("\n Not counted here:\n");
    for ((code, text), names) in by {
        let _ = writeln!(
            o,
            "   [{}] {}: {}",
            for_terminal(&code),
            for_terminal(&names.join(", ")),
            for_terminal(&text)
        );
    }
    o
}

/// The derived-metrics block: values, then what is absent and why.
pub fn render_metrics(
    m: &DerivedMetrics,
    events: &[EventReading],
    td_method: Option<&str>,
) -> String {
    let mut o = String::from("\n Derived metrics:\n");
    let mut absent: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (name, label, unit) in METRIC_LABELS {
        match metric_value(m, name) {
            Some(v) => {
                let _ = writeln!(
                    o,
                    "{}",
                    format!("   {label:<28} {v:>10.3} {unit}").trim_end()
                );
            }
            None => {
                if let Some(why) = short_missing(name, m, events) {
                    absent.entry(why).or_default().push(label);
                }
            }
        }
    }
    match &m.topdown {
        Some(td) => {
            let _ = writeln!(
                o,
                "   top-down level 1 ({})",
                td_method.unwrap_or(td.method.as_str())
            );
            for (label, v) in [
                ("retiring", td.retiring_pct),
                ("bad speculation", td.bad_speculation_pct),
                ("frontend bound", td.frontend_bound_pct),
                ("backend bound", td.backend_bound_pct),
            ] {
                match v {
                    Some(v) => {
                        let _ = writeln!(o, "     {label:<26} {v:>10.1} %");
                    }
                    None => {
                        let _ = writeln!(o, "     {label:<26} {:>10}", "n/a");
                    }
                }
            }
        }
        None => {
            let why = m
                .missing
                .get("topdown")
                .cloned()
                .unwrap_or_else(|| "not available".into());
            if why != "not requested" {
                let _ = writeln!(o, "   top-down level 1: {}", for_terminal(&why));
            }
        }
    }
    for (why, labels) in absent {
        let _ = writeln!(
            o,
            "   not available: {} ({})",
            labels.join(", "),
            for_terminal(&why)
        );
    }
    o
}

/// Header of interval text output.
pub fn interval_header() -> String {
    format!(
        "#{:>15} {:>18} {:<4} {}\n",
        "time", "counts", "unit", "events"
    )
}

/// Text lines of one interval.
pub fn render_interval_text(t_s: f64, events: &[EventReading], m: &DerivedMetrics) -> String {
    let ts = task_seconds(events);
    let mut o = String::new();
    for e in events {
        let _ = writeln!(o, "{t_s:>16.9}{}", event_line(e, m, ts));
    }
    if let Some(td) = &m.topdown {
        let f = |v: Option<f64>| {
            v.map(|x| format!("{x:.1}%"))
                .unwrap_or_else(|| "n/a".into())
        };
        let _ = writeln!(
            o,
            "{t_s:>16.9}{:>25} top-down: retiring {} bad-spec {} frontend {} backend {}",
            "",
            f(td.retiring_pct),
            f(td.bad_speculation_pct),
            f(td.frontend_bound_pct),
            f(td.backend_bound_pct)
        );
    }
    o
}

/// A CSV text field: [`crate::base::fmt::csv_cell`] (one line, never a
/// formula, RFC 4180 quoting).
pub fn csv_field(s: &str) -> String {
    crate::base::fmt::csv_cell(s)
}

/// CSV header (with a leading `time` column in interval mode).
pub fn csv_header(interval: bool) -> String {
    let t = if interval { "time," } else { "" };
    format!(
        "{t}kind,name,value,unit,state,time_enabled_ns,time_running_ns,running_pct,reason_code,reason\n"
    )
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// CSV rows: one per event, one per metric (absent metrics have an empty
/// value, state `absent` and the reason).
pub fn csv_rows(t_s: Option<f64>, events: &[EventReading], m: &DerivedMetrics) -> String {
    let t = t_s.map(|t| format!("{t:.9},")).unwrap_or_default();
    let mut o = String::new();
    for e in events {
        let state = match e.state {
            EventState::Counted => "counted",
            EventState::NotCounted => "not-counted",
            EventState::NotSupported => "not-supported",
        };
        let _ = writeln!(
            o,
            "{t}event,{},{},{},{},{},{},{},{},{}",
            csv_field(&e.name),
            e.value.map(|v| format!("{v:.0}")).unwrap_or_default(),
            csv_field(e.unit.as_deref().unwrap_or("")),
            state,
            opt(e.time_enabled_ns),
            opt(e.time_running_ns),
            e.running_pct.map(|p| format!("{p:.2}")).unwrap_or_default(),
            csv_field(e.reason_code.as_deref().unwrap_or("")),
            csv_field(e.reason.as_deref().unwrap_or("")),
        );
    }
    let mut metric = |name: &str, v: Option<f64>, unit: &str, why: Option<&String>| {
        let (val, state) = match v {
            Some(x) => (format!("{x:.6}"), "counted"),
            None => (String::new(), "absent"),
        };
        let _ = writeln!(
            o,
            "{t}metric,{name},{val},{unit},{state},,,,,{}",
            csv_field(if v.is_none() {
                why.map(|s| s.as_str()).unwrap_or("")
            } else {
                ""
            })
        );
    };
    for (name, _, unit) in METRIC_LABELS {
        metric(name, metric_value(m, name), unit, m.missing.get(*name));
    }
    let why = m.missing.get("topdown");
    let td = m.topdown.as_ref();
    metric(
        "topdown_retiring_pct",
        td.and_then(|x| x.retiring_pct),
        "%",
        why,
    );
    metric(
        "topdown_bad_speculation_pct",
        td.and_then(|x| x.bad_speculation_pct),
        "%",
        why,
    );
    metric(
        "topdown_frontend_bound_pct",
        td.and_then(|x| x.frontend_bound_pct),
        "%",
        why,
    );
    metric(
        "topdown_backend_bound_pct",
        td.and_then(|x| x.backend_bound_pct),
        "%",
        why,
    );
    o
}

/// CSV of a whole result (totals).
pub fn render_csv(doc: &StatDoc) -> String {
    let mut o = csv_header(false);
    o.push_str(&csv_rows(None, &doc.events, &doc.metrics));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::env::{PerfEnv, Reason};
    use crate::counters::events::Event;
    use crate::counters::group::{aggregate, RawCount, Readings, Sample};

    fn c(v: u64) -> Sample {
        Sample::Count(RawCount {
            value: v,
            enabled: 2_000_000,
            running: 1_000_000,
        })
    }

    fn sample_readings() -> Readings {
        let evs: Vec<Event> = [
            "task-clock",
            "cycles",
            "instructions",
            "branch-misses",
            "branches",
        ]
        .iter()
        .map(|n| Event::named(n))
        .collect();
        let why = Reason::new("no-pmu", "ENOENT: no hardware PMU is registered");
        let samples = vec![vec![
            Sample::Count(RawCount {
                value: 1_500_000,
                enabled: 1_500_000,
                running: 1_500_000,
            }),
            c(1_000_000),
            c(2_000_000),
            Sample::Unopened,
            c(10),
        ]];
        Readings {
            events: aggregate(
                &evs,
                &[0, 1, 1, 2, 2],
                &[None, None, None, Some((libc::ENOENT, why)), None],
                &samples,
                &PerfEnv::default(),
            ),
            wall_ns: Some(3_000_000),
            ..Default::default()
        }
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn perf_like_lines() {
        let r = sample_readings();
        let m = r.metrics();
        let ts = task_seconds(&r.events);
        let l = event_line(&r.events[0], &m, ts);
        assert!(l.contains("1.50 msec task-clock"), "{l}");
        assert!(l.contains("0.500 CPUs utilized"), "{l}");
        let l = event_line(&r.events[2], &m, ts);
        assert!(l.contains("4,000,000"), "{l}");
        assert!(l.contains("2.00  insn per cycle"), "{l}");
        assert!(l.contains("(50.00%)"), "{l}");
        let l = event_line(&r.events[3], &m, ts);
        assert!(l.contains("<not supported>"), "{l}");
        assert!(l.contains("[no-pmu]"), "{l}");
    }

    #[test]
    fn csv_has_null_metrics_with_reason() {
        let r = sample_readings();
        let m = r.metrics();
        let s = csv_rows(None, &r.events, &m);
        assert!(s.contains("metric,ipc,2.000000,,counted"), "{s}");
        let bm = s
            .lines()
            .find(|l| l.starts_with("metric,branch_miss_pct,"))
            .unwrap();
        assert!(bm.contains(",,%,absent,"), "{bm}");
        assert!(bm.contains("no hardware PMU"), "{bm}");
        let ev = s
            .lines()
            .find(|l| l.starts_with("event,branch-misses,"))
            .unwrap();
        assert!(ev.contains(",not-supported,"), "{ev}");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }

    #[test]
    fn metrics_block_never_prints_absent_as_zero() {
        let r = sample_readings();
        let m = r.metrics();
        let s = render_metrics(&m, &r.events, None);
        assert!(s.contains("IPC (insn per cycle)"));
        let line = s.lines().find(|l| l.contains("branch misses")).unwrap();
        assert!(line.contains("not available"), "{line}");
        assert!(line.contains("[no-pmu]"), "{line}");
    }
}

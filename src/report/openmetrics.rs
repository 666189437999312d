//! Runs as an OpenMetrics text exposition (`cpuscope export RUN --format
//! openmetrics`, `cpuscope fleet --format openmetrics`): what node_exporter's
//! textfile collector (or any Prometheus scrape) reads. docs/openmetrics.md
//! describes the names, units and labels.
//!
//! Every figure of a run (each [`ResultRecord`], the list `compare --csv`
//! walks too) is one gauge sample: family `cpuscope_<experiment>_<metric>_
//! <unit>`, labels `host`, `cpu_model`, `run_id` and the record's params.
//! Units are Prometheus base units (seconds, hertz, bytes, ratios, rates per
//! second; the rate score stays in jobs per hour): the value is converted,
//! never rounded. The spread of the repetitions is two more families:
//! `…_cv_ratio` and `…_repetitions`. A
//! figure that was not measured has no sample in its family (never a 0 or a
//! NaN): it is a `cpuscope_figure_unavailable` sample (value 1) with the
//! reason as a label. Samples of one family are contiguous, each family has
//! its `# HELP`, `# TYPE` and (with a unit) `# UNIT` once, no two samples of
//! a family have the same labels (a record that would repeat one is listed
//! unavailable, with the record's key), no timestamps, `# EOF` at the end.

use crate::results::schema::{ResultRecord, Run};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// The family of figures that are not available.
pub const UNAVAILABLE: &str = "cpuscope_figure_unavailable";
/// The family of the runs' start times.
pub const RUN_STARTED: &str = "cpuscope_run_started_timestamp_seconds";

/// Label names the exposition sets itself; a record's param of one of these
/// names is exported as `param_<name>`.
const OWN_LABELS: &[&str] = &[
    "host",
    "cpu_model",
    "run_id",
    "figure",
    "reason",
    "profile",
    "status",
];

/// Name endings the OpenMetrics text format gives to the samples of other
/// types: a unit-less gauge whose name would end so gets `_value`.
const RESERVED_ENDINGS: &[&str] = &[
    "_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info",
];

/// How a recorded unit's value becomes the exported one.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    /// Multiply by (exact for the powers of ten and two used).
    Mul(f64),
    /// Divide by (one correctly rounded operation: 1.5 ns is 1.5e-9 s).
    Div(f64),
}

impl Scale {
    fn apply(self, x: f64) -> f64 {
        match self {
            Scale::Mul(f) => x * f,
            Scale::Div(d) => x / d,
        }
    }
}

/// The OpenMetrics unit (the name's suffix, `""` for none) and scale of a
/// recorded unit this file knows.
fn known_unit(unit: &str) -> Option<(&'static str, Scale)> {
    use Scale::{Div, Mul};
    Some(match unit {
        "" => ("", Mul(1.0)),
        "ns" => ("seconds", Div(1e9)),
        "us" | "µs" => ("seconds", Div(1e6)),
        "ms" => ("seconds", Div(1e3)),
        "s" => ("seconds", Mul(1.0)),
        "Hz" => ("hertz", Mul(1.0)),
        "kHz" => ("hertz", Mul(1e3)),
        "MHz" => ("hertz", Mul(1e6)),
        "GHz" => ("hertz", Mul(1e9)),
        "B" | "bytes" => ("bytes", Mul(1.0)),
        "KiB" => ("bytes", Mul(1024.0)),
        "MiB" => ("bytes", Mul(1048576.0)),
        "GiB" => ("bytes", Mul(1073741824.0)),
        "B/s" => ("bytes_per_second", Mul(1.0)),
        "MB/s" => ("bytes_per_second", Mul(1e6)),
        "GB/s" => ("bytes_per_second", Mul(1e9)),
        "MiB/s" => ("bytes_per_second", Mul(1048576.0)),
        "GiB/s" => ("bytes_per_second", Mul(1073741824.0)),
        "%" => ("ratio", Div(100.0)),
        "ratio" | "x" => ("ratio", Mul(1.0)),
        "IPC" => ("instructions_per_cycle", Mul(1.0)),
        "GFLOP/s" => ("flops_per_second", Mul(1e9)),
        "FLOP/cycle" => ("flops_per_cycle", Mul(1.0)),
        "G instr/s" => ("instructions_per_second", Mul(1e9)),
        "M updates/s" => ("updates_per_second", Mul(1e6)),
        _ => return None,
    })
}

/// A denominator as a word: `s` second, `h` hour; else as written.
fn per_word(den: &str) -> String {
    match den.trim() {
        "s" => "second".into(),
        "min" => "minute".into(),
        "h" => "hour".into(),
        d => name_part(d),
    }
}

/// The OpenMetrics unit and scale of a recorded unit: a known one; `A/B`
/// with `A` a known unit (`ns/iteration`: `seconds_per_iteration`), or any
/// other (`jobs/h`: `jobs_per_hour`, value unchanged: the rate score is
/// defined per hour); else the unit itself as a name part (`cores`,
/// `pages`), value unchanged.
fn unit_of(unit: &str) -> (String, Scale) {
    let unit = unit.trim();
    if let Some((s, k)) = known_unit(unit) {
        return (s.to_string(), k);
    }
    if let Some((num, den)) = unit.split_once('/') {
        let den = per_word(den);
        let num = known_unit(num.trim())
            .filter(|(s, _)| !s.is_empty())
            .map(|(s, k)| (s.to_string(), k))
            .unwrap_or_else(|| (name_part(num), Scale::Mul(1.0)));
        if !den.is_empty() && !num.0.is_empty() {
            return (format!("{}_per_{den}", num.0), num.1);
        }
    }
    (name_part(unit), Scale::Mul(1.0))
}

/// `s` as a part of a metric name: lower case ASCII letters, digits and
/// single underscores, none at either end.
fn name_part(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// `cpuscope_<experiment>_<metric>` (the metric left out when it repeats
/// the experiment's name).
fn base_name(r: &ResultRecord) -> String {
    let mut n = format!("cpuscope_{}", name_part(&r.experiment));
    let m = name_part(&r.metric);
    if !m.is_empty() && m != name_part(&r.experiment) {
        n.push('_');
        n.push_str(&m);
    }
    n
}

/// `base` with its unit as the suffix (not repeated when `base` already
/// ends with it: `…_l1d_cycles`); a unit-less name that would end as the
/// samples of another type do gets `_value`.
fn with_unit(base: &str, unit: &str) -> String {
    if unit.is_empty() {
        if RESERVED_ENDINGS.iter().any(|e| base.ends_with(e)) {
            return format!("{base}_value");
        }
        return base.to_string();
    }
    if base.ends_with(&format!("_{unit}")) {
        base.to_string()
    } else {
        format!("{base}_{unit}")
    }
}

/// A label value escaped as OpenMetrics asks: `\\`, `\"`, `\n`.
fn escape_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A `# HELP` text: backslash and newline escaped, double quotes as single
/// ones (the one form both OpenMetrics and the older Prometheus text format
/// read the same).
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('"', "'")
}

/// A sample value: the shortest text that reads back as the same number;
/// exponent form for very small and very large ones.
fn fmt_value(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || (1e-3..1e15).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A param key as a label name (`[a-zA-Z_][a-zA-Z0-9_]*`, not `__…`), not
/// one of `taken` (the exposition's own labels and the params before it).
fn label_name(key: &str, taken: &mut BTreeSet<String>) -> String {
    let mut n: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()) {
        n.insert(0, '_');
    }
    if n.starts_with("__") {
        n.insert_str(0, "param");
    }
    while taken.contains(&n) {
        n.insert_str(0, "param_");
    }
    taken.insert(n.clone());
    n
}

/// A param's value as a label value: a string as it is, anything else as JSON.
fn param_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

type Labels = Vec<(String, String)>;

/// The record's params as labels, after `lead`.
fn with_params(lead: &Labels, r: &ResultRecord) -> Labels {
    let mut taken: BTreeSet<String> = OWN_LABELS.iter().map(|s| s.to_string()).collect();
    let mut out = lead.clone();
    for (k, v) in &r.params {
        out.push((label_name(k, &mut taken), param_value(v)));
    }
    out
}

/// `{a="x",b="y"}`.
fn label_text(labels: &Labels) -> String {
    let inner: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// One metric family being filled.
struct Family {
    name: String,
    help: String,
    unit: String,
    lines: Vec<String>,
    /// Label sets already used, sorted by name.
    seen: BTreeSet<Vec<(String, String)>>,
}

/// One sample a record asks for.
struct Sample {
    name: String,
    help: String,
    unit: String,
    labels: Labels,
    value: f64,
}

/// The families in the order they first appear.
#[derive(Default)]
struct Exposition {
    families: Vec<Family>,
    index: HashMap<String, usize>,
}

fn sorted(labels: &Labels) -> Vec<(String, String)> {
    let mut s = labels.clone();
    s.sort();
    s
}

impl Exposition {
    /// The sample can go in: its family is new, or has its unit and not its labels.
    fn fits(&self, s: &Sample) -> bool {
        match self.index.get(&s.name) {
            None => true,
            Some(&i) => {
                let f = &self.families[i];
                f.unit == s.unit && !f.seen.contains(&sorted(&s.labels))
            }
        }
    }

    /// Add the samples, all or (when one does not fit) none: true when added.
    fn add_all(&mut self, samples: Vec<Sample>) -> bool {
        let mut keys = BTreeSet::new();
        let fits = samples
            .iter()
            .all(|s| self.fits(s) && keys.insert((s.name.clone(), sorted(&s.labels))));
        if !fits {
            return false;
        }
        for s in samples {
            self.add(s);
        }
        true
    }

    fn add(&mut self, s: Sample) {
        let i = match self.index.get(&s.name) {
            Some(&i) => i,
            None => {
                self.families.push(Family {
                    name: s.name.clone(),
                    help: s.help,
                    unit: s.unit,
                    lines: Vec::new(),
                    seen: BTreeSet::new(),
                });
                self.index.insert(s.name.clone(), self.families.len() - 1);
                self.families.len() - 1
            }
        };
        let f = &mut self.families[i];
        if f.seen.insert(sorted(&s.labels)) {
            f.lines.push(format!(
                "{}{} {}",
                f.name,
                label_text(&s.labels),
                fmt_value(s.value)
            ));
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for f in &self.families {
            let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(&f.help));
            let _ = writeln!(out, "# TYPE {} gauge", f.name);
            if !f.unit.is_empty() {
                let _ = writeln!(out, "# UNIT {} {}", f.name, f.unit);
            }
            for l in &f.lines {
                out.push_str(l);
                out.push('\n');
            }
        }
        out.push_str("# EOF\n");
        out
    }
}

/// The labels every sample of a run carries.
fn run_labels(run: &Run) -> Labels {
    vec![
        ("host".into(), run.host.clone()),
        ("cpu_model".into(), run.cpu_model().unwrap_or_default()),
        ("run_id".into(), run.id.clone()),
    ]
}

/// The run's start time, when its `started_at` reads as RFC 3339.
fn started(run: &Run, lead: &Labels) -> Option<Sample> {
    let t = chrono::DateTime::parse_from_rfc3339(&run.started_at).ok()?;
    let mut labels = lead.clone();
    labels.push(("profile".into(), run.profile.clone()));
    labels.push(("status".into(), run.status.to_string()));
    Some(Sample {
        name: RUN_STARTED.into(),
        help: "When the run started (Unix time); its profile and status".into(),
        unit: "seconds".into(),
        labels,
        value: t.timestamp_millis() as f64 / 1000.0,
    })
}

/// The figure of `r` (named `name`) is not available, for `reason`.
fn unavailable(name: &str, lead: &Labels, r: &ResultRecord, reason: &str) -> Sample {
    let mut labels = lead.clone();
    labels.push(("figure".into(), name.to_string()));
    labels.extend(with_params(&Vec::new(), r));
    labels.push(("reason".into(), reason.to_string()));
    Sample {
        name: UNAVAILABLE.into(),
        help: "A figure of the run that is not available (value 1): its family has no \
               sample for these labels; the reason says why"
            .into(),
        unit: String::new(),
        labels,
        value: 1.0,
    }
}

/// The samples of a measured figure: its value, and the spread of its
/// repetitions (`_cv_ratio` from two repetitions on, `_repetitions`).
fn measured(r: &ResultRecord, lead: &Labels, value: f64) -> Vec<Sample> {
    let (unit, scale) = unit_of(&r.unit);
    let base = base_name(r);
    let labels = with_params(lead, r);
    let what = format!("cpuscope {} {}", r.experiment, r.metric);
    let unit_words = if unit.is_empty() {
        "no unit".to_string()
    } else {
        unit.replace('_', " ")
    };
    let mut out = vec![Sample {
        name: with_unit(&base, &unit),
        help: format!("{what}: the figure (the median of its repetitions), in {unit_words}"),
        unit,
        labels: labels.clone(),
        value: scale.apply(value),
    }];
    if let Some(st) = &r.stats {
        if st.n > 1 && st.cv.is_finite() {
            out.push(Sample {
                name: format!("{base}_cv_ratio"),
                help: format!(
                    "{what}: coefficient of variation of its repetitions (standard deviation / mean)"
                ),
                unit: "ratio".into(),
                labels: labels.clone(),
                value: st.cv,
            });
        }
        out.push(Sample {
            name: format!("{base}_repetitions"),
            help: format!("{what}: repetitions behind the figure"),
            unit: String::new(),
            labels,
            value: st.n as f64,
        });
    }
    out
}

/// One record: its measured samples, or its line in [`UNAVAILABLE`].
fn record(exp: &mut Exposition, lead: &Labels, r: &ResultRecord) {
    let name = with_unit(&base_name(r), &unit_of(&r.unit).0);
    let reason = match r.value {
        None => r
            .unavailable_reason
            .clone()
            .unwrap_or_else(|| "not measured (no reason recorded)".into()),
        Some(v) if !v.is_finite() => format!("the recorded value is not a finite number ({v})"),
        Some(v) => {
            if exp.add_all(measured(r, lead, v)) {
                return;
            }
            format!(
                "not exported: another figure of this run has the same name and labels \
                 (this one is result {})",
                r.key
            )
        }
    };
    exp.add(unavailable(&name, lead, r, &reason));
}

/// The exposition of `runs` (one, or a fleet's latest run per host).
pub fn render(runs: &[Run]) -> String {
    let mut exp = Exposition::default();
    for run in runs {
        let lead = run_labels(run);
        if let Some(s) = started(run, &lead) {
            exp.add(s);
        }
        for r in &run.results {
            record(&mut exp, &lead, r);
        }
    }
    exp.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_become_base_units() {
        let (u, s) = unit_of("ns");
        assert_eq!(u, "seconds");
        assert_eq!(s.apply(1.5), 1.5e-9);
        assert_eq!(unit_of("GB/s").0, "bytes_per_second");
        assert_eq!(unit_of("GB/s").1.apply(2.5), 2.5e9);
        assert_eq!(unit_of("%").1.apply(50.0), 0.5);
        assert_eq!(
            unit_of("ns/inner-iteration").0,
            "seconds_per_inner_iteration"
        );
        assert_eq!(unit_of("cores"), ("cores".to_string(), Scale::Mul(1.0)));
        assert_eq!(unit_of("").0, "");
        assert_eq!(
            unit_of("tasks/h"),
            ("tasks_per_hour".to_string(), Scale::Mul(1.0))
        );
        assert_eq!(unit_of("widgets/s").0, "widgets_per_second");
    }

    #[test]
    fn names_and_labels_are_valid() {
        assert_eq!(name_part("Ab1"), "ab1");
        assert_eq!(name_part("  a--b/c "), "a_b_c");
        assert_eq!(
            with_unit("cpuscope_latency_l1d_cycles", "cycles"),
            "cpuscope_latency_l1d_cycles"
        );
        assert_eq!(with_unit("cpuscope_x_count", ""), "cpuscope_x_count_value");
        let mut taken: BTreeSet<String> = OWN_LABELS.iter().map(|s| s.to_string()).collect();
        assert_eq!(label_name("host", &mut taken), "param_host");
        assert_eq!(label_name("2x", &mut taken), "_2x");
        assert_eq!(label_name("__a", &mut taken), "param__a");
        assert_eq!(label_name("a-b", &mut taken), "a_b");
        assert_eq!(label_name("a.b", &mut taken), "param_a_b");
        assert_eq!(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(escape_help("say \"x\"\n"), "say 'x'\\n");
        assert_eq!(fmt_value(1.5e-9), "1.5e-9");
        assert_eq!(fmt_value(3.0), "3");
        assert_eq!(fmt_value(0.25), "0.25");
    }
}

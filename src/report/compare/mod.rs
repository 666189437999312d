//! `cpuscope compare`: any number of runs side by side. Results are aligned
//! by comparison key; each gets its value, unit, and the figure relative to
//! the baseline run in % (100% = as good as the baseline, above = better;
//! lower-is-better results are inverted, like the seeds' tables "Intel 100%,
//! Hygon 138%"); noisy figures (CV > 5%) are flagged; a geometric mean is
//! taken only over results present, and positive, on every run. The
//! differences of environment and topology come first: they explain results.
//!
//! This module builds the [`Comparison`] (also the `--json` document,
//! `cpuscope.compare/1`) and the wording of a cell shared by the renderers;
//! each output form is one file beside it: [`text`], [`csv`], [`markdown`],
//! [`html`]. It never measures.

pub mod csv;
pub mod html;
pub mod markdown;
pub mod text;

use crate::base::fmt::{fmt_bytes_exact, fmt_num};
use crate::results::published::{self, Qualifier};
use crate::results::schema::{ResultRecord, Run};
use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Name and version of the `--json` document.
pub const COMPARE_SCHEMA: &str = "cpuscope.compare/1";

/// One compared run.
#[derive(Clone, Debug, Serialize)]
pub struct RunHead {
    /// Column label: A, B, C...
    pub label: String,
    pub id: String,
    pub host: String,
    pub cpu_model: Option<String>,
    pub started_at: String,
    pub profile: String,
    pub status: String,
    pub tags: Vec<String>,
    pub baseline: bool,
}

/// One environment or topology fact, per run.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    pub field: String,
    /// One per run; None = not recorded in that run.
    pub values: Vec<Option<String>>,
    pub differs: bool,
}

/// Where a result stands in one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellState {
    /// A figure was measured.
    Measured,
    /// The run has the result but could not measure it (see the reason).
    Unavailable,
    /// The run has no result with this key (not run, or another method version).
    Missing,
}

/// One result in one run.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub state: CellState,
    pub value: Option<f64>,
    pub unavailable_reason: Option<String>,
    /// Coefficient of variation of the samples (fraction), when there are samples.
    pub cv: Option<f64>,
    pub n: Option<usize>,
    /// CV above 5%.
    pub noisy: bool,
    /// Against the baseline, in % (higher = better, whatever the direction).
    pub relative_pct: Option<f64>,
    /// Why there is no relative figure, when there is a value but none.
    pub relative_note: Option<String>,
}

/// A published figure for the same workload (not re-measured).
#[derive(Clone, Debug, Serialize)]
pub struct PublishedCell {
    pub set: String,
    pub machine: String,
    /// `seed … § section`.
    pub source: String,
    /// In the result's unit.
    pub value: Option<f64>,
    pub range: Option<[f64; 2]>,
    pub qualifier: Qualifier,
    /// Value as printed ("~42", "5.5 to 6.6").
    pub text: String,
    /// Against the baseline run, in % (only for values that are not bounds).
    pub relative_pct: Option<f64>,
    pub note: Option<String>,
    /// "key" (same comparison key) or "mapping" (declared correspondence).
    pub matched_by: String,
}

/// One result key across the runs.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub experiment: String,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub params: BTreeMap<String, Value>,
    pub cells: Vec<Cell>,
    pub published: Vec<PublishedCell>,
    /// Counted in the geometric mean.
    pub in_geomean: bool,
}

/// The geometric mean of the relative figures.
#[derive(Clone, Debug, Serialize)]
pub struct GeoMean {
    /// Results present, measured and positive on every run.
    pub results_used: usize,
    pub results_total: usize,
    /// Per run, in % of the baseline; None when no result qualifies.
    pub per_run: Vec<Option<f64>>,
    /// Why results were left out: reason → count.
    pub left_out: BTreeMap<String, usize>,
}

/// Runs side by side.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub schema: String,
    /// Index of the baseline in `runs`.
    pub baseline: usize,
    pub runs: Vec<RunHead>,
    /// Every compared fact; those that differ first.
    pub differences: Vec<Difference>,
    pub rows: Vec<Row>,
    pub geomean: GeoMean,
    /// Whether published reference figures were looked up.
    pub with_published: bool,
    pub notes: Vec<String>,
}

/// Column label of run `i`: A..Z, then AA, AB...
pub fn label_of(i: usize) -> String {
    let mut n = i;
    let mut s = Vec::new();
    loop {
        s.push(b'A' + (n % 26) as u8);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// `value` against `base`, in % (higher = better): value/base for
/// higher-is-better, base/value for lower-is-better. None unless both are
/// positive finite numbers.
pub fn relative_pct(value: f64, base: f64, higher_is_better: bool) -> Option<f64> {
    if !(value.is_finite() && base.is_finite() && value > 0.0 && base > 0.0) {
        return None;
    }
    Some(if higher_is_better {
        value / base * 100.0
    } else {
        base / value * 100.0
    })
}

/// Geometric mean of percentages (each > 0).
pub fn geomean_pct(pcts: &[f64]) -> Option<f64> {
    if pcts.is_empty() || pcts.iter().any(|p| !(p.is_finite() && *p > 0.0)) {
        return None;
    }
    let s: f64 = pcts.iter().map(|p| (p / 100.0).ln()).sum();
    Some((s / pcts.len() as f64).exp() * 100.0)
}

fn cell_of(rec: Option<&ResultRecord>) -> Cell {
    match rec {
        None => Cell {
            state: CellState::Missing,
            value: None,
            unavailable_reason: None,
            cv: None,
            n: None,
            noisy: false,
            relative_pct: None,
            relative_note: None,
        },
        Some(r) => Cell {
            state: if r.value.is_some() {
                CellState::Measured
            } else {
                CellState::Unavailable
            },
            value: r.value,
            unavailable_reason: if r.value.is_none() {
                Some(
                    r.unavailable_reason
                        .clone()
                        .unwrap_or_else(|| "no reason recorded".into()),
                )
            } else {
                None
            },
            cv: r.stats.as_ref().map(|s| s.cv),
            n: r.stats.as_ref().map(|s| s.n),
            noisy: r.is_noisy(),
            relative_pct: None,
            relative_note: None,
        },
    }
}

// ---------------------------------------------------------------- facts

fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn count(n: usize) -> Option<usize> {
    (n > 0).then_some(n)
}

/// SMT on (threads per core) or off, when cores and threads are known.
fn smt_text(cores: Option<usize>, threads: Option<usize>) -> Option<String> {
    match (cores, threads) {
        (Some(c), Some(t)) if c > 0 => Some(if t > c {
            format!("on ({} threads per core)", fmt_num(t as f64 / c as f64))
        } else {
            "off (1 thread per core)".to_string()
        }),
        _ => None,
    }
}

/// The L3's total size (and its instances when several), when known.
fn l3_text(m: &crate::machine::MachineInfo) -> Option<String> {
    let sizes: Vec<u64> = m
        .caches
        .iter()
        .filter(|c| c.level == 3)
        .filter_map(|c| c.size_bytes)
        .collect();
    let total: u64 = sizes.iter().sum();
    match sizes.len() {
        0 => None,
        1 => Some(fmt_bytes_exact(total)),
        n => Some(format!("{} in {n} instances", fmt_bytes_exact(total))),
    }
}

/// Whether the run was in a virtual machine (and its hypervisor), when
/// recorded.
fn vm_text(run: &Run, m: &crate::machine::MachineInfo) -> Option<String> {
    match run.environment.is_vm {
        Some(true) => Some(
            match m
                .identity
                .virtualization
                .hypervisor
                .as_deref()
                .and_then(non_empty)
            {
                Some(h) => format!("yes ({h})"),
                None => "yes".to_string(),
            },
        ),
        Some(false) => Some("no".into()),
        None => None,
    }
}

/// The facts compared between runs: (field, value) in a fixed order.
pub fn facts(run: &Run) -> Vec<(&'static str, Option<String>)> {
    let m = run.machine_info();
    let cores = count(m.cores.len());
    let threads = count(m.threads.len()).or_else(|| count(m.cpus.online.len()));
    let smt = smt_text(cores, threads);
    let l3 = l3_text(&m);
    let vm = vm_text(run, &m);
    let drivers = cpufreq_drivers(&m);
    vec![
        ("host", Some(run.host.clone())),
        ("CPU model", run.cpu_model()),
        ("architecture", non_empty(&m.identity.architecture)),
        ("packages", count(m.packages.len()).map(|n| n.to_string())),
        ("cores", cores.map(|n| n.to_string())),
        ("logical CPUs", threads.map(|n| n.to_string())),
        ("SMT", smt),
        (
            "NUMA nodes",
            count(m.numa_nodes.len()).map(|n| n.to_string()),
        ),
        ("L3", l3),
        ("virtual machine", vm),
        ("kernel", run.environment.kernel.clone()),
        ("governor", run.environment.governor.clone()),
        ("cpufreq driver", drivers),
        ("boost", m.frequency.boost.enabled.map(|b| b.to_string())),
        (
            "numa_balancing",
            m.knobs.value("numa_balancing").map(str::to_string),
        ),
        ("THP", m.knobs.value("thp_enabled").map(str::to_string)),
        ("profile", Some(run.profile.clone())),
        (
            "CPUs used",
            run.options
                .get("cpus")
                .and_then(Value::as_str)
                .map(str::to_string),
        ),
        ("experiments (--only)", option_list(run, "only")),
        ("skipped (--skip)", option_list(run, "skip")),
        ("cpuscope version", Some(run.tool_text())),
        ("status", Some(run.status.to_string())),
        (
            "load at start (1 min)",
            run.environment
                .load_start
                .as_ref()
                .and_then(|l| l.loadavg_1)
                .map(|v| format!("{v:.2}")),
        ),
        ("environment notes", environment_notes(run)),
    ]
}

/// The cpufreq drivers, comma-separated; None when none is recorded.
fn cpufreq_drivers(m: &crate::machine::MachineInfo) -> Option<String> {
    non_empty(
        &m.frequency
            .drivers
            .iter()
            .map(|g| g.value.as_str())
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// A list option of the run (`--only`, `--skip`), comma-separated; None
/// when not given or empty.
fn option_list(run: &Run, k: &str) -> Option<String> {
    run.options
        .get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(",")
        })
        .filter(|s| !s.is_empty())
}

/// The environment notes but "measured for …", joined; None when none.
fn environment_notes(run: &Run) -> Option<String> {
    let notes: Vec<&str> = run
        .environment
        .notes
        .iter()
        .map(String::as_str)
        .filter(|n| !n.starts_with("measured for "))
        .collect();
    if notes.is_empty() {
        None
    } else {
        Some(notes.join("; "))
    }
}

fn differences(runs: &[Run]) -> Vec<Difference> {
    let all: Vec<Vec<(&'static str, Option<String>)>> = runs.iter().map(facts).collect();
    let Some(first) = all.first() else {
        return Vec::new();
    };
    let mut out: Vec<Difference> = Vec::new();
    for (i, (field, _)) in first.iter().enumerate() {
        let values: Vec<Option<String>> = all.iter().map(|f| f[i].1.clone()).collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let differs = values.iter().any(|v| v != &values[0]);
        out.push(Difference {
            field: field.to_string(),
            values,
            differs,
        });
    }
    // Differing facts first, each group in the fixed order.
    out.sort_by_key(|d| !d.differs);
    out
}

// ---------------------------------------------------------------- build

/// Put `runs` side by side against `runs[baseline]`. With `with_published`,
/// published figures for the same workloads are added to the rows.
pub fn compare(runs: &[Run], baseline: usize, with_published: bool) -> Result<Comparison> {
    if runs.is_empty() {
        bail!("nothing to compare: no runs");
    }
    if baseline >= runs.len() {
        bail!("baseline #{baseline} is not among the {} runs", runs.len());
    }
    let mut seen = BTreeSet::new();
    for r in runs {
        if !seen.insert(r.id.as_str()) {
            bail!("run {} is given twice", r.id);
        }
    }
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    let index: Vec<BTreeMap<&str, &ResultRecord>> = runs
        .iter()
        .map(|r| r.results.iter().map(|x| (x.key.as_str(), x)).collect())
        .collect();
    for (key, owner) in row_keys(runs, baseline) {
        rows.push(row(
            &index,
            &key,
            owner,
            baseline,
            with_published,
            &mut notes,
        )?);
    }
    let geomean = geomean_of(&mut rows, runs.len());
    let heads = runs
        .iter()
        .enumerate()
        .map(|(i, r)| RunHead {
            label: label_of(i),
            id: r.id.clone(),
            host: r.host.clone(),
            cpu_model: r.cpu_model(),
            started_at: r.started_at.clone(),
            profile: r.profile.clone(),
            status: r.status.to_string(),
            tags: r.tags.clone(),
            baseline: i == baseline,
        })
        .collect();
    if runs.len() == 1 {
        notes.push("one run: relative figures are against itself".into());
    }
    Ok(Comparison {
        schema: COMPARE_SCHEMA.to_string(),
        baseline,
        runs: heads,
        differences: differences(runs),
        rows,
        geomean,
        with_published,
        notes,
    })
}

/// Every key once, with the run that first has it: the baseline's results
/// first, then each other run's new ones.
fn row_keys(runs: &[Run], baseline: usize) -> Vec<(String, usize)> {
    let mut order: Vec<usize> = vec![baseline];
    order.extend((0..runs.len()).filter(|i| *i != baseline));
    let mut keys: Vec<(String, usize)> = Vec::new(); // (key, run index owning the first record)
    let mut known = BTreeSet::new();
    for &i in &order {
        for r in &runs[i].results {
            if known.insert(r.key.clone()) {
                keys.push((r.key.clone(), i));
            }
        }
    }
    keys
}

/// One key's row: a cell per run with its % against the baseline, and the
/// published figures it matches.
fn row(
    index: &[BTreeMap<&str, &ResultRecord>],
    key: &str,
    owner: usize,
    baseline: usize,
    with_published: bool,
    notes: &mut Vec<String>,
) -> Result<Row> {
    let proto = index[owner][key];
    let hib = index[baseline]
        .get(key)
        .map(|r| r.higher_is_better)
        .unwrap_or(proto.higher_is_better);
    if index
        .iter()
        .filter_map(|m| m.get(key))
        .any(|r| r.higher_is_better != hib)
    {
        notes.push(format!(
            "{key}: runs disagree on whether higher is better; the baseline's direction is used"
        ));
    }
    let mut cells: Vec<Cell> = index.iter().map(|m| cell_of(m.get(key).copied())).collect();
    let base = cells[baseline].value;
    for (i, c) in cells.iter_mut().enumerate() {
        let Some(v) = c.value else { continue };
        match base {
            None => {
                c.relative_note = Some(if i == baseline {
                    "baseline".into()
                } else {
                    "the baseline has no figure".into()
                });
            }
            Some(b) => match relative_pct(v, b, hib) {
                Some(p) => c.relative_pct = Some(p),
                None => c.relative_note = Some("not a positive figure".into()),
            },
        }
    }
    let published = if with_published {
        let sets = published::all()?;
        let rec = index[baseline].get(key).copied().unwrap_or(proto);
        published::matches_in(sets, rec)
            .into_iter()
            .map(|m| {
                let bound = matches!(m.figure.qualifier, Qualifier::AtMost | Qualifier::AtLeast);
                PublishedCell {
                    set: m.set.id.clone(),
                    machine: m.figure.machine.clone(),
                    source: m.set.source.cite(),
                    value: m.value,
                    range: m.range,
                    qualifier: m.figure.qualifier,
                    text: published::value_text(m.value, m.range, m.figure.qualifier),
                    relative_pct: match (m.value, base, bound) {
                        (Some(v), Some(b), false) => relative_pct(v, b, hib),
                        _ => None,
                    },
                    note: m.figure.note.clone(),
                    matched_by: m.how.to_string(),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(Row {
        key: key.to_string(),
        label: proto.label(),
        experiment: proto.experiment.clone(),
        metric: proto.metric.clone(),
        unit: proto.unit.clone(),
        higher_is_better: hib,
        params: proto.params.clone(),
        cells,
        published,
        in_geomean: false,
    })
}

/// The geometric mean of the % against the baseline over the rows measured
/// (and positive) on every run; marks the rows it uses.
fn geomean_of(rows: &mut [Row], nruns: usize) -> GeoMean {
    let mut left_out: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_run_pcts: Vec<Vec<f64>> = vec![Vec::new(); nruns];
    let mut used = 0;
    for row in rows.iter_mut() {
        let reason = if row.cells.iter().any(|c| c.state == CellState::Missing) {
            Some("missing on some run")
        } else if row.cells.iter().any(|c| c.state == CellState::Unavailable) {
            Some("not available on some run")
        } else if row.cells.iter().any(|c| c.relative_pct.is_none()) {
            Some("not a positive figure")
        } else {
            None
        };
        match reason {
            Some(r) => *left_out.entry(r.to_string()).or_default() += 1,
            None => {
                used += 1;
                row.in_geomean = true;
                for (i, c) in row.cells.iter().enumerate() {
                    if let Some(p) = c.relative_pct {
                        per_run_pcts[i].push(p);
                    }
                }
            }
        }
    }
    GeoMean {
        results_used: used,
        results_total: rows.len(),
        per_run: per_run_pcts.iter().map(|p| geomean_pct(p)).collect(),
        left_out,
    }
}

// ---------------------------------------------------------------- text

// ---------------------------------------------------------------- wording shared by the renderers

fn pct_text(p: f64) -> String {
    if (p - 100.0).abs() < 0.05 {
        "100%".into()
    } else if p >= 1000.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// A cell as text: "2.994 (99.9%)", "n/a: reason", "missing".
pub fn cell_text(c: &Cell, is_baseline: bool) -> String {
    match c.state {
        CellState::Missing => "missing".into(),
        CellState::Unavailable => format!(
            "n/a: {}",
            c.unavailable_reason.as_deref().unwrap_or("no reason")
        ),
        CellState::Measured => {
            let v = c.value.map(fmt_num).unwrap_or_default();
            let noisy = if c.noisy { " !" } else { "" };
            match (c.relative_pct, is_baseline) {
                (_, true) => format!("{v}{noisy}"),
                (Some(p), false) => format!("{v} ({}){noisy}", pct_text(p)),
                (None, false) => format!("{v} (no %){noisy}"),
            }
        }
    }
}

fn na(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "(not recorded)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(label_of(0), "A");
        assert_eq!(label_of(25), "Z");
        assert_eq!(label_of(26), "AA");
        assert_eq!(label_of(27), "AB");
    }

    #[test]
    fn relative_and_geomean() {
        assert_eq!(relative_pct(3.0, 2.0, true), Some(150.0));
        assert_eq!(relative_pct(2.0, 4.0, false), Some(200.0));
        assert_eq!(relative_pct(0.0, 4.0, true), None);
        let g = geomean_pct(&[200.0, 50.0]).unwrap();
        assert!((g - 100.0).abs() < 1e-9);
        assert!(geomean_pct(&[]).is_none());
    }
}

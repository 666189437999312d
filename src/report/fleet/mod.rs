//! `cpuscope fleet`: many hosts' latest runs read as one fleet. Hosts are
//! grouped by CPU model and declared configuration (architecture, packages,
//! physical cores, from each run's machine snapshot); for each key figure
//! the group's distribution (median, MAD, min, max, n); hosts whose figure
//! stands out by a robust rule that takes each figure's own noise into
//! account (docs/fleet.md), each explained with evidence from the runs
//! themselves (the figure, its spread, the environment where it differs
//! from its peers'); and every environment or configuration fact that
//! differs inside a group, whether or not a figure moved.
//!
//! This module builds the [`Fleet`] (also the `--json` document,
//! `cpuscope.fleet/1`); each other output form is one file beside it:
//! [`text`], [`html`]. It never measures.

mod finding_evidence;
pub mod html;
pub mod text;

use crate::base::fmt::{fmt_bytes, fmt_num};
use crate::experiments::registry;
use crate::report::compare;
use crate::results::schema::{result_key, ResultRecord, Run};
use crate::view::{param_text, KeyFigure};
use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Name and version of the `--json` document.
pub const FLEET_SCHEMA: &str = "cpuscope.fleet/1";

/// MAD × this = the standard deviation of a normal distribution.
pub const MAD_TO_SD: f64 = 1.4826;

/// The outlier rule's settings (docs/fleet.md, "The outlier rule").
#[derive(Clone, Debug, Serialize)]
pub struct Rule {
    /// A host stands out when its distance from its peers' median is more
    /// than this many robust standard deviations of the group (1.4826 × MAD,
    /// never less than the peers' typical within-run standard deviation).
    pub threshold: f64,
    /// ... and at least this far from the median, in % of it.
    pub min_diff_pct: f64,
    /// ... and beyond its own noise: this many of its own run's standard
    /// deviations, and half its own min–max range.
    pub own_noise_sd: f64,
    /// Hosts a group needs before anyone in it is judged.
    pub min_hosts: usize,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            threshold: 3.5,
            min_diff_pct: 5.0,
            own_noise_sd: 2.0,
            min_hosts: 3,
        }
    }
}

impl Rule {
    /// Refuse settings that make no rule.
    pub fn check(&self) -> Result<()> {
        if !(self.threshold.is_finite() && self.threshold > 0.0) {
            bail!(
                "--threshold {}: give a positive number of robust standard deviations (default 3.5)",
                self.threshold
            );
        }
        if !(self.min_diff_pct.is_finite() && (0.0..1000.0).contains(&self.min_diff_pct)) {
            bail!(
                "--min-diff {}: give a percentage from 0 to 1000 (default 5)",
                self.min_diff_pct
            );
        }
        if self.min_hosts < 3 {
            bail!("a group needs at least 3 hosts to be judged");
        }
        Ok(())
    }
}

/// How the runs were chosen (echoed in the document).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Selection {
    /// Where the runs came from (store location).
    pub store: String,
    pub host: Vec<String>,
    pub cpu: Vec<String>,
    pub tag: Vec<String>,
    /// The `--since` bound, RFC 3339, when given.
    pub since: Option<String>,
    /// Matching runs left out as older runs of the same hosts.
    pub older_runs_left_out: usize,
}

/// One host of a group: the run read for it.
#[derive(Clone, Debug, Serialize)]
pub struct Member {
    pub host: String,
    pub run_id: String,
    pub started_at: String,
    pub profile: String,
    pub status: String,
    pub tags: Vec<String>,
}

/// What hosts must share to be compared.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct GroupKey {
    pub cpu_model: String,
    pub architecture: Option<String>,
    pub packages: Option<usize>,
    /// Physical cores (the declared count; SMT and offline siblings aside).
    pub cores: Option<usize>,
}

impl GroupKey {
    fn of(run: &Run) -> GroupKey {
        let m = run.machine_info();
        let arch = m.identity.architecture.trim();
        GroupKey {
            cpu_model: run
                .cpu_model()
                .unwrap_or_else(|| "(CPU model not recorded)".into()),
            architecture: (!arch.is_empty()).then(|| arch.to_string()),
            packages: (!m.packages.is_empty()).then_some(m.packages.len()),
            cores: (!m.cores.is_empty()).then_some(m.cores.len()),
        }
    }

    /// `EPYC 7742 · x86_64 · 2 packages · 128 cores`.
    pub fn text(&self) -> String {
        let mut s = vec![self.cpu_model.clone()];
        if let Some(a) = &self.architecture {
            s.push(a.clone());
        }
        if let Some(p) = self.packages {
            s.push(format!("{p} package{}", if p == 1 { "" } else { "s" }));
        }
        if let Some(c) = self.cores {
            s.push(format!("{c} core{}", if c == 1 { "" } else { "s" }));
        }
        s.join(" · ")
    }
}

/// Where one host's figure stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within the group's spread.
    Typical,
    /// Stands out by every condition of the rule.
    Outlier,
    /// Far from its peers, but within its own run's noise: not flagged.
    WithinNoise,
    /// Too few hosts with this figure to judge.
    NotJudged,
}

/// One host's value of one figure.
#[derive(Clone, Debug, Serialize)]
pub struct HostValue {
    pub host: String,
    pub value: f64,
    /// The record it comes from (its comparison key).
    pub result_key: String,
    /// CV of the run's own repetitions (fraction), when it has samples.
    pub cv: Option<f64>,
    /// Repetitions behind the value.
    pub n: Option<usize>,
    /// The median of the other hosts of the group.
    pub peers_median: Option<f64>,
    /// (value − peers' median) / peers' median, in %.
    pub deviation_pct: Option<f64>,
    /// (value − peers' median) / the group's robust standard deviation.
    pub robust_z: Option<f64>,
    /// The host's own noise, in % of the peers' median (the larger of
    /// `own_noise_sd` standard deviations and half the min–max range).
    pub own_noise_pct: Option<f64>,
    pub verdict: Verdict,
}

/// One key figure across a group.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// `experiment:metric` and the params that identify it (without the
    /// one chosen per host, e.g. the largest thread count).
    pub key: String,
    pub label: String,
    pub experiment: String,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Hosts with a measured value.
    pub n: usize,
    pub median: f64,
    /// Median absolute deviation from the median.
    pub mad: f64,
    pub min: f64,
    pub max: f64,
    pub values: Vec<HostValue>,
    /// Hosts of the group without this figure (not measured, not run).
    pub missing: Vec<String>,
}

/// A recorded fact of one host that differs from what its peers have.
#[derive(Clone, Debug, Serialize)]
pub struct EnvDiff {
    pub field: String,
    pub value: Option<String>,
    /// The value most of its peers have.
    pub peers_value: Option<String>,
    /// How many peers have it.
    pub peers_with_it: usize,
}

impl EnvDiff {
    /// `numa_balancing=1 (peers: 0)`.
    pub fn text(&self) -> String {
        format!(
            "{}={} (peers: {})",
            self.field,
            na(&self.value),
            na(&self.peers_value)
        )
    }
}

/// A host whose figure stands out (or would, but for its own noise).
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub host: String,
    pub run_id: String,
    /// The figure's key and label.
    pub figure: String,
    pub label: String,
    pub unit: String,
    pub value: f64,
    pub peers_median: f64,
    /// Peers with the figure.
    pub peers: usize,
    pub deviation_pct: f64,
    /// Worse than the peers (lower when higher is better, and the reverse).
    pub worse: bool,
    pub robust_z: f64,
    pub cv: Option<f64>,
    pub own_noise_pct: f64,
    /// The host's facts that differ from its peers'.
    pub environment: Vec<EnvDiff>,
    /// Each item cites a figure or a fact of the runs.
    pub evidence: Vec<String>,
    /// The finding in one line.
    pub text: String,
}

/// One fact and who has which value.
#[derive(Clone, Debug, Serialize)]
pub struct FactValue {
    pub value: Option<String>,
    pub hosts: Vec<String>,
}

/// A fact that differs inside a group.
#[derive(Clone, Debug, Serialize)]
pub struct FactSpread {
    pub field: String,
    /// Most common value first.
    pub values: Vec<FactValue>,
}

/// Hosts of one CPU model and declared configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    pub key: GroupKey,
    pub label: String,
    pub members: Vec<Member>,
    /// At least `rule.min_hosts` hosts: figures are judged.
    pub judged: bool,
    pub figures: Vec<Figure>,
    pub outliers: Vec<Finding>,
    /// Far from the peers but within the host's own noise: not flagged.
    pub within_noise: Vec<Finding>,
    /// Facts that differ between the hosts (environment and configuration).
    pub differences: Vec<FactSpread>,
}

/// The fleet view.
#[derive(Clone, Debug, Serialize)]
pub struct Fleet {
    pub schema: String,
    pub selection: Selection,
    pub rule: Rule,
    /// Runs read (the latest of each host).
    pub runs: usize,
    pub groups: Vec<Group>,
    /// Some group has enough hosts to be judged.
    pub enough: bool,
    pub notes: Vec<String>,
}

// ---------------------------------------------------------------- key figures

/// A measured record stands for (identity key, record) per key figure.
fn picks<'a>(
    kf: &KeyFigure,
    run: &'a Run,
) -> Vec<(String, BTreeMap<String, Value>, &'a ResultRecord)> {
    let mut out: Vec<(String, BTreeMap<String, Value>, &ResultRecord)> = Vec::new();
    for r in run.records(kf.id) {
        if r.value.is_none() || !(kf.keep)(r) {
            continue;
        }
        let mut params = r.params.clone();
        let top_of = |x: &ResultRecord| {
            kf.top
                .and_then(|t| param_text(x, t))
                .and_then(|v| v.parse::<f64>().ok())
        };
        if let Some(t) = kf.top {
            if top_of(r).is_none() {
                continue;
            }
            params.remove(t);
        }
        let id = result_key(&r.experiment, &r.metric, &params, &r.unit, r.method_version);
        match out.iter_mut().find(|(k, _, _)| *k == id) {
            Some(slot) => {
                if top_of(r) > top_of(slot.2) {
                    slot.2 = r;
                }
            }
            None => out.push((id, params, r)),
        }
    }
    out
}

// ---------------------------------------------------------------- statistics

/// Median of `v` (None when empty).
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// Median absolute deviation from `m`.
pub fn mad(v: &[f64], m: f64) -> f64 {
    median(&v.iter().map(|x| (x - m).abs()).collect::<Vec<_>>()).unwrap_or(0.0)
}

/// The spread of one run's repetitions: (standard deviation, min, max).
fn own_spread(r: &ResultRecord) -> (f64, f64, f64) {
    match &r.stats {
        Some(s) if s.n > 1 => (s.stddev, s.min, s.max),
        _ => {
            let v = r.value.unwrap_or(0.0);
            (0.0, v, v)
        }
    }
}

// ---------------------------------------------------------------- facts

fn na(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "(not recorded)".into())
}

/// Facts of `compare` that are the group key or too run-specific to list here.
const NOT_LISTED: &[&str] = &[
    "host",
    "CPU model",
    "architecture",
    "packages",
    "cores",
    "status",
    "load at start (1 min)",
    "environment notes",
];

/// The environment and configuration facts compared inside a group, in a
/// fixed order: those of `compare` (kernel, governor, SMT, NUMA nodes,
/// THP...) but the group key and the per-run ones, then microcode, the
/// DIMM population, more kernel knobs, huge pages and whether the machine
/// was busy when the run began.
pub fn facts(run: &Run) -> Vec<(&'static str, Option<String>)> {
    let m = run.machine_info();
    let knob = |k: &str| m.knobs.value(k).map(str::to_string);
    let d = &m.memory_devices.summary;
    let dimms = (d.slots > 0).then(|| {
        let mut s = format!("{} of {} slots", d.populated, d.slots);
        if !d.sizes.is_empty() {
            let sizes: Vec<String> = d.sizes.iter().map(|b| fmt_bytes(*b)).collect();
            s.push_str(&format!(", {}", sizes.join("+")));
        }
        if !d.speeds_mts.is_empty() {
            let sp: Vec<String> = d.speeds_mts.iter().map(|x| x.to_string()).collect();
            s.push_str(&format!(", {} MT/s", sp.join("/")));
        }
        if !d.types.is_empty() {
            s.push_str(&format!(", {}", d.types.join("/")));
        }
        s
    });
    let huge = m
        .knobs
        .hugepages
        .iter()
        .find(|p| p.size_kb == 2048)
        .and_then(|p| p.nr)
        .map(|n| n.to_string());
    let logical = m.threads.len().max(m.cpus.online.len());
    let busy = run
        .environment
        .load_start
        .as_ref()
        .and_then(|l| l.loadavg_1)
        .map(|l| {
            if l >= 1.0 && logical > 0 && l >= 0.5 * logical as f64 {
                "busy (load at least half the CPUs)".to_string()
            } else {
                "idle".to_string()
            }
        });
    let microcode = m.identity.microcode.clone();
    let mut after_thp: Vec<(&'static str, Option<String>)> = vec![
        ("DIMMs", dimms),
        ("THP defrag", knob("thp_defrag")),
        ("zone_reclaim_mode", knob("zone_reclaim_mode")),
        ("2 MiB huge pages", huge),
        ("isolated CPUs", knob("isolated")),
        ("nohz_full", knob("nohz_full")),
        ("cpuidle governor", knob("cpuidle_governor")),
        ("machine at start", busy),
    ];
    // Microcode after the kernel, the rest after the THP line.
    let mut out = Vec::new();
    for (f, v) in compare::facts(run) {
        if NOT_LISTED.contains(&f) {
            continue;
        }
        out.push((f, v));
        if f == "kernel" {
            out.push(("microcode", microcode.clone()));
        }
        if f == "THP" {
            out.append(&mut after_thp);
        }
    }
    out.append(&mut after_thp);
    out
}

/// Facts that differ between `runs` (every value with its hosts).
fn spreads(runs: &[&Run], facts_of: &[Vec<(&'static str, Option<String>)>]) -> Vec<FactSpread> {
    let Some(first) = facts_of.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, (field, _)) in first.iter().enumerate() {
        let mut values: Vec<FactValue> = Vec::new();
        for (r, f) in runs.iter().zip(facts_of) {
            let v = f.get(i).and_then(|x| x.1.clone());
            match values.iter_mut().find(|x| x.value == v) {
                Some(x) => x.hosts.push(r.host.clone()),
                None => values.push(FactValue {
                    value: v,
                    hosts: vec![r.host.clone()],
                }),
            }
        }
        if values.len() > 1 {
            values.sort_by_key(|v| std::cmp::Reverse(v.hosts.len()));
            out.push(FactSpread {
                field: field.to_string(),
                values,
            });
        }
    }
    out
}

/// The facts where host `h` differs from the value most of its peers have.
fn env_diffs(h: usize, facts_of: &[Vec<(&'static str, Option<String>)>]) -> Vec<EnvDiff> {
    let mut out = Vec::new();
    for (i, (field, mine)) in facts_of[h].iter().enumerate() {
        let mut counts: Vec<(Option<String>, usize)> = Vec::new();
        for (j, f) in facts_of.iter().enumerate() {
            if j == h {
                continue;
            }
            let v = f.get(i).and_then(|x| x.1.clone());
            match counts.iter_mut().find(|c| c.0 == v) {
                Some(c) => c.1 += 1,
                None => counts.push((v, 1)),
            }
        }
        let Some((common, n)) = counts.iter().max_by_key(|c| c.1).cloned() else {
            continue;
        };
        if *mine != common && !(mine.is_none() && common.is_none()) {
            out.push(EnvDiff {
                field: field.to_string(),
                value: mine.clone(),
                peers_value: common,
                peers_with_it: n,
            });
        }
    }
    out
}

// ---------------------------------------------------------------- build

fn member(r: &Run) -> Member {
    Member {
        host: r.host.clone(),
        run_id: r.id.clone(),
        started_at: r.started_at.clone(),
        profile: r.profile.clone(),
        status: r.status.to_string(),
        tags: r.tags.clone(),
    }
}

fn pct_word(p: f64) -> String {
    if p.abs() >= 10.0 {
        format!("{:.0}%", p.abs())
    } else {
        format!("{:.1}%", p.abs())
    }
}

/// Read `runs` (one per host) as a fleet.
pub fn fleet(runs: &[Run], selection: Selection, rule: Rule) -> Result<Fleet> {
    rule.check()?;
    let mut hosts = BTreeSet::new();
    for r in runs {
        if !hosts.insert(r.host.as_str()) {
            bail!(
                "host {} has two runs here: a fleet view reads one run per host",
                r.host
            );
        }
    }
    let mut by_key: BTreeMap<GroupKey, Vec<&Run>> = BTreeMap::new();
    for r in runs {
        by_key.entry(GroupKey::of(r)).or_default().push(r);
    }
    let mut groups: Vec<Group> = by_key
        .into_iter()
        .map(|(k, mut rs)| {
            rs.sort_by(|a, b| a.host.cmp(&b.host));
            group(k, &rs, &rule)
        })
        .collect();
    // Largest groups first.
    groups.sort_by_key(|g| std::cmp::Reverse(g.members.len()));
    let enough = groups.iter().any(|g| g.judged);
    let mut notes = Vec::new();
    if !enough {
        notes.push(format!(
            "too little to compare: {} host{} in {} group{}; a group needs at least {} hosts of one CPU model and configuration",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            groups.len(),
            if groups.len() == 1 { "" } else { "s" },
            rule.min_hosts
        ));
    }
    if selection.older_runs_left_out > 0 {
        notes.push(format!(
            "{} older run(s) of the same hosts left out: the latest run of each host is read",
            selection.older_runs_left_out
        ));
    }
    Ok(Fleet {
        schema: FLEET_SCHEMA.to_string(),
        selection,
        rule,
        runs: runs.len(),
        groups,
        enough,
        notes,
    })
}

/// A figure's identity, its params, and each host's record of it.
type Slot<'a> = (
    String,
    BTreeMap<String, Value>,
    Vec<Option<&'a ResultRecord>>,
);

fn group(key: GroupKey, runs: &[&Run], rule: &Rule) -> Group {
    let judged = runs.len() >= rule.min_hosts;
    let facts_of: Vec<Vec<(&'static str, Option<String>)>> =
        runs.iter().map(|r| facts(r)).collect();
    let mut figures = Vec::new();
    let mut outliers = Vec::new();
    let mut within_noise = Vec::new();
    for kf in registry::key_figures() {
        // identity -> (params, per host record)
        let mut ids: Vec<Slot> = Vec::new();
        for (h, r) in runs.iter().enumerate() {
            for (id, params, rec) in picks(kf, r) {
                let slot = match ids.iter().position(|x| x.0 == id) {
                    Some(i) => i,
                    None => {
                        ids.push((id, params, vec![None; runs.len()]));
                        ids.len() - 1
                    }
                };
                ids[slot].2[h] = Some(rec);
            }
        }
        // The label names the params that tell this kind's figures apart.
        let varying: BTreeSet<String> = ids
            .iter()
            .flat_map(|(_, p, _)| p.keys().cloned())
            .filter(|k| {
                let vals: BTreeSet<String> = ids
                    .iter()
                    .map(|(_, p, _)| p.get(k).map(|v| v.to_string()).unwrap_or_default())
                    .collect();
                vals.len() > 1
            })
            .collect();
        for (id, params, recs) in ids {
            let shown: Vec<String> = params
                .iter()
                .filter(|(k, _)| varying.contains(*k))
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}={s}"),
                    o => format!("{k}={o}"),
                })
                .collect();
            let label = if shown.is_empty() {
                kf.label.to_string()
            } else {
                format!("{} ({})", kf.label, shown.join(", "))
            };
            let fig = figure(
                &id,
                label,
                kf,
                runs,
                &recs,
                &facts_of,
                rule,
                judged,
                &mut outliers,
                &mut within_noise,
            );
            figures.push(fig);
        }
    }
    let label = key.text();
    Group {
        key,
        label,
        members: runs.iter().map(|r| member(r)).collect(),
        judged,
        figures,
        outliers,
        within_noise,
        differences: spreads(runs, &facts_of),
    }
}

#[allow(clippy::too_many_arguments)]
fn figure(
    id: &str,
    label: String,
    kf: &KeyFigure,
    runs: &[&Run],
    recs: &[Option<&ResultRecord>],
    facts_of: &[Vec<(&'static str, Option<String>)>],
    rule: &Rule,
    judged: bool,
    outliers: &mut Vec<Finding>,
    within_noise: &mut Vec<Finding>,
) -> Figure {
    let proto = recs.iter().flatten().next().copied();
    let hib = proto.map(|r| r.higher_is_better).unwrap_or(true);
    let unit = proto.map(|r| r.unit.clone()).unwrap_or_default();
    let present: Vec<(usize, &ResultRecord, f64)> = recs
        .iter()
        .enumerate()
        .filter_map(|(h, r)| r.and_then(|r| r.value.map(|v| (h, r, v))))
        .collect();
    let all: Vec<f64> = present.iter().map(|x| x.2).collect();
    let med = median(&all).unwrap_or(f64::NAN);
    let enough = judged && present.len() >= rule.min_hosts;
    let scope = FigureScope {
        id,
        label: &label,
        unit: &unit,
        hib,
        runs,
        facts_of,
        rule,
    };
    let mut values = Vec::new();
    for &(h, r, x) in &present {
        let mut hv = unjudged_value(&runs[h].host, r, x);
        if enough {
            if let Some(f) = judge(&scope, &present, (h, r, x), &mut hv) {
                match hv.verdict {
                    Verdict::Outlier => outliers.push(f),
                    _ => within_noise.push(f),
                }
            }
        }
        values.push(hv);
    }
    let missing = missing_hosts(runs, recs, &present);
    Figure {
        key: id.to_string(),
        label,
        experiment: kf.id.experiment.to_string(),
        metric: kf.id.metric.to_string(),
        unit,
        higher_is_better: hib,
        n: all.len(),
        median: med,
        mad: if all.is_empty() {
            f64::NAN
        } else {
            mad(&all, med)
        },
        min: all.iter().copied().fold(f64::INFINITY, f64::min),
        max: all.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        values,
        missing,
    }
}

/// A host's value `x` (record `r`) before it is judged against its peers.
fn unjudged_value(host: &str, r: &ResultRecord, x: f64) -> HostValue {
    HostValue {
        host: host.to_string(),
        value: x,
        result_key: r.key.clone(),
        cv: r.stats.as_ref().filter(|s| s.n > 1).map(|s| s.cv),
        n: r.stats.as_ref().map(|s| s.n),
        peers_median: None,
        deviation_pct: None,
        robust_z: None,
        own_noise_pct: None,
        verdict: Verdict::NotJudged,
    }
}

/// The hosts of the group without a record of the figure.
fn missing_hosts(
    runs: &[&Run],
    recs: &[Option<&ResultRecord>],
    present: &[(usize, &ResultRecord, f64)],
) -> Vec<String> {
    recs.iter()
        .enumerate()
        .filter(|(h, r)| r.is_none() && !present.iter().any(|p| p.0 == *h))
        .map(|(h, _)| runs[h].host.clone())
        .collect()
}

/// What judging a host's value of one key figure needs besides the values:
/// the figure (key, label, unit, direction), the group's runs and their
/// facts, the rule.
struct FigureScope<'a> {
    id: &'a str,
    label: &'a str,
    unit: &'a str,
    hib: bool,
    runs: &'a [&'a Run],
    facts_of: &'a [Vec<(&'static str, Option<String>)>],
    rule: &'a Rule,
}

/// Judges host `h`'s value `x` (record `r`) against its peers (the other
/// hosts with a value, `present`): fills in `hv` the peers' median, the
/// deviation, the robust z, the host's own noise and the verdict (far from
/// the peers: beyond the threshold and the smallest difference; an outlier
/// when also beyond its own noise). The finding when it is not typical.
fn judge(
    s: &FigureScope,
    present: &[(usize, &ResultRecord, f64)],
    (h, r, x): (usize, &ResultRecord, f64),
    hv: &mut HostValue,
) -> Option<Finding> {
    let rule = s.rule;
    let (sd, lo, hi) = own_spread(r);
    let peers: Vec<&(usize, &ResultRecord, f64)> = present.iter().filter(|p| p.0 != h).collect();
    let pv: Vec<f64> = peers.iter().map(|p| p.2).collect();
    let m = median(&pv).unwrap_or(f64::NAN);
    let peer_sd =
        median(&peers.iter().map(|p| own_spread(p.1).0).collect::<Vec<_>>()).unwrap_or(0.0);
    let scale = (MAD_TO_SD * mad(&pv, m))
        .max(peer_sd)
        .max(1e-9 * m.abs())
        .max(f64::MIN_POSITIVE);
    let dev = x - m;
    let own = (rule.own_noise_sd * sd).max((hi - lo) / 2.0);
    if !(m.is_finite() && m != 0.0) {
        return None;
    }
    let z = dev / scale;
    let pct = dev / m.abs() * 100.0;
    let own_pct = own / m.abs() * 100.0;
    hv.peers_median = Some(m);
    hv.deviation_pct = Some(pct);
    hv.robust_z = Some(z);
    hv.own_noise_pct = Some(own_pct);
    let far = z.abs() > rule.threshold && pct.abs() >= rule.min_diff_pct;
    hv.verdict = if !far {
        Verdict::Typical
    } else if dev.abs() > own {
        Verdict::Outlier
    } else {
        Verdict::WithinNoise
    };
    if hv.verdict == Verdict::Typical {
        return None;
    }
    Some(finding(
        s.id,
        s.label,
        s.unit,
        s.hib,
        s.runs,
        h,
        r,
        x,
        m,
        pv.len(),
        pct,
        z,
        own_pct,
        peers
            .iter()
            .map(|p| (s.runs[p.0].host.as_str(), p.1))
            .collect(),
        s.facts_of,
        hv.verdict,
    ))
}

#[allow(clippy::too_many_arguments)]
fn finding(
    id: &str,
    label: &str,
    unit: &str,
    hib: bool,
    runs: &[&Run],
    h: usize,
    r: &ResultRecord,
    x: f64,
    m: f64,
    peers: usize,
    pct: f64,
    z: f64,
    own_pct: f64,
    peer_recs: Vec<(&str, &ResultRecord)>,
    facts_of: &[Vec<(&'static str, Option<String>)>],
    verdict: Verdict,
) -> Finding {
    let run = runs[h];
    let worse = if hib { x < m } else { x > m };
    let dir = if x < m { "below" } else { "above" };
    let env = env_diffs(h, facts_of);
    let cv = r.stats.as_ref().filter(|s| s.n > 1).map(|s| s.cv);
    let mut evidence = vec![format!(
        "{} = {} {unit} (result {}), peers' median {} {unit} over {peers} host(s), robust z {:.1}",
        label,
        fmt_num(x),
        r.key,
        fmt_num(m),
        z
    )];
    evidence.push(finding_evidence::own_repetitions(r, unit, own_pct));
    // Params where it was measured differently (e.g. fewer threads).
    evidence.extend(finding_evidence::param_differences(r, &peer_recs));
    for e in &env {
        evidence.push(format!("machine {}", e.text()));
    }
    let env_text = environment_text(&env);
    let text = match verdict {
        Verdict::WithinNoise => format!(
            "{}: {label} {} {dir} the median of its {peers} peers, but within its own noise (CV {}, ±{:.0}%): not flagged; repeat the run",
            run.host,
            pct_word(pct),
            cv.map(|c| format!("{:.0}%", c * 100.0)).unwrap_or_else(|| "n/a".into()),
            own_pct
        ),
        _ => format!(
            "{}: {label} {} {dir} the median of its {peers} peers ({}); {env_text}",
            run.host,
            pct_word(pct),
            if worse { "worse" } else { "better" },
        ),
    };
    Finding {
        host: run.host.clone(),
        run_id: run.id.clone(),
        figure: id.to_string(),
        label: label.to_string(),
        unit: unit.to_string(),
        value: x,
        peers_median: m,
        peers,
        deviation_pct: pct,
        worse,
        robust_z: z,
        cv,
        own_noise_pct: own_pct,
        environment: env,
        evidence,
        text,
    }
}

/// The host's environment against its peers', in the words of a finding.
fn environment_text(env: &[EnvDiff]) -> String {
    if env.is_empty() {
        "its recorded environment is the same as its peers'".to_string()
    } else {
        let items: Vec<String> = env
            .iter()
            .map(|e| format!("{}={}", e.field, na(&e.value)))
            .collect();
        format!("its environment differs: {}", items.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0], 3.0), 1.0);
    }

    #[test]
    fn rule_checks() {
        Rule::default().check().unwrap();
        let r = Rule {
            threshold: 0.0,
            ..Rule::default()
        };
        assert!(r.check().is_err());
        let r = Rule {
            min_diff_pct: f64::NAN,
            ..Rule::default()
        };
        assert!(r.check().is_err());
    }
}

//! The tune family's record payloads: what `tune` writes into a record's
//! `data` (each candidate, the verdict) and its renderers read back with
//! `ResultRecord::data_as`. A leaf: it imports nothing of the experiments.

use crate::base::mann_whitney::RatioEstimate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the rounds stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stopped {
    /// The ranking was settled.
    Settled,
    MaxRuns,
    Budget,
    Interrupted,
    /// Every candidate failed.
    AllFailed,
}

impl Stopped {
    pub fn words(self) -> &'static str {
        match self {
            Stopped::Settled => "the ranking was settled",
            Stopped::MaxRuns => "the most runs per candidate (--max-runs) were made",
            Stopped::Budget => "the time budget (--budget) was spent",
            Stopped::Interrupted => {
                "interrupted (Ctrl-C, SIGTERM or SIGHUP): the figures are what finished"
            }
            Stopped::AllFailed => "every candidate failed",
        }
    }
}

/// What bounds the time of a run (past it its process group is killed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoundKind {
    /// `--run-timeout`, as given.
    RunTimeout,
    /// A multiple of the candidate's median run time (with a floor).
    Median,
    /// A multiple of the slowest run any candidate finished: the candidate
    /// has not finished one yet.
    Slowest,
    /// The time left of `--budget`: no run has finished yet (nothing to
    /// take a median from), or a round past the first measured one.
    Budget,
}

/// The bound of one run: its length, what set it and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunBound {
    pub secs: f64,
    pub kind: BoundKind,
    /// Why this bound, in words.
    pub why: String,
}

/// Medians of the counters over a candidate's runs, and why one is missing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterMedians {
    pub ipc: Option<f64>,
    pub cpu_migrations: Option<f64>,
    pub page_faults: Option<f64>,
    pub context_switches: Option<f64>,
    pub missing: BTreeMap<String, String>,
}

/// Where a candidate's pages were (numa_maps samples over its runs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NumaShare {
    /// Bytes on a node none of its threads ran on / all resident bytes,
    /// summed over every sample of every run.
    pub remote_share: Option<f64>,
    pub samples: usize,
    /// Bytes per node at the last sample of the last run.
    pub last_per_node: BTreeMap<usize, u64>,
    pub unavailable: Option<String>,
}

/// A candidate's record data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CandidateData {
    pub label: String,
    pub set: String,
    pub memory: String,
    pub threads: Option<usize>,
    pub what: String,
    pub cpus: Option<String>,
    pub policy: Option<String>,
    pub env: Vec<(String, String)>,
    /// The shell line that reproduces it.
    pub command_line: String,
    pub baseline: bool,
    pub also: Vec<String>,
    /// 1 = best; None when it has no score.
    pub rank: Option<usize>,
    /// Its ratio to the baseline.
    pub vs_baseline: Option<RatioEstimate>,
    /// Why it stopped (the command failed, no score...).
    pub failed: Option<String>,
    /// Wall time of each measured run, seconds.
    pub wall_s: Vec<f64>,
    pub counters: CounterMedians,
    pub numa: NumaShare,
    /// The bound of its last run started (None: none was started).
    pub bound: Option<RunBound>,
    /// Its last run was killed at that bound.
    pub timed_out: bool,
}

impl CandidateData {
    /// Its ratio to the baseline as printed: "1 (baseline)", "0.98 [0.95,
    /// 1.01]" (with " *" when `mark` and the interval excludes 1), "1.02
    /// [too few runs]"; None when it has none.
    pub fn vs_baseline_text(&self, mark: bool) -> Option<String> {
        if self.baseline {
            return Some("1 (baseline)".into());
        }
        let e = self.vs_baseline.as_ref()?;
        Some(if !e.bounded() {
            format!("{} [too few runs]", fmt_ratio(e.ratio))
        } else {
            format!(
                "{} [{}, {}]{}",
                fmt_ratio(e.ratio),
                fmt_ratio(e.low),
                fmt_ratio(e.high),
                if mark && e.excludes_one() { " *" } else { "" }
            )
        })
    }
}

/// The verdict record's data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerdictData {
    /// `winner`, `none-distinguishable`, `no-single-winner`, `not-enough`.
    pub kind: String,
    /// The verdict in one sentence.
    pub text: String,
    pub winner: Option<String>,
    pub best: Option<String>,
    pub runner_up: Option<String>,
    /// The best against the runner-up.
    pub best_vs_runner_up: Option<RatioEstimate>,
    pub winner_level: f64,
    /// Candidates separated from the baseline, better / worse.
    pub better_than_baseline: Vec<String>,
    pub worse_than_baseline: Vec<String>,
    /// Ranked labels, best first.
    pub ranking: Vec<String>,
    /// Measured rounds (each candidate once per round).
    pub rounds: usize,
    pub warmup: usize,
    pub stopped: Option<Stopped>,
    pub score: String,
    pub interval_method: String,
    pub seed: u64,
    /// The command's arguments as text: a byte that is not UTF-8 shows as
    /// U+FFFD (a note says so); `command_line` has them exactly.
    pub command: Vec<String>,
    /// The command as one shell line that gives its exact bytes when
    /// pasted into bash (`$'\xff'` for a byte that is not UTF-8).
    pub command_line: String,
    /// How each run is bounded (the rule, in words).
    pub run_bound: String,
    pub k: usize,
    pub not_applicable: Vec<(String, String)>,
    pub notes: Vec<String>,
    pub higher_is_better: bool,
    pub unit: String,
}

/// A ratio with three significant digits (`0.973`, `1.25`, `12.3`).
pub fn fmt_ratio(r: f64) -> String {
    if !r.is_finite() {
        return "inf".into();
    }
    if r == 0.0 {
        return "0".into();
    }
    let digits = (2 - r.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{r:.digits$}")
}

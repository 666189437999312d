//! What every experiment is: the [`Experiment`] trait, the context it runs
//! in ([`ExpCtx`], [`Profile`], [`Facts`]) and the CPU choices several
//! families share. The lowest floor of experiments/: it imports no
//! experiment, and no experiment imports a renderer (the registry pairs them).
use crate::base::CpuSet;
use crate::harness::measure::{Policy, Warmup};
use crate::machine::MachineInfo;
use crate::results::schema::ResultRecord;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How much time a run may take: quick (< 60 s here), standard (< 5 min), full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Quick,
    Standard,
    Full,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Standard => "standard",
            Profile::Full => "full",
        }
    }

    /// Repetition policy for one figure, scaled by the profile.
    pub fn policy(self) -> Policy {
        match self {
            Profile::Quick => Policy {
                warmup: Warmup::Time(Duration::from_millis(20)),
                min_reps: 5,
                max_reps: 200,
                time_budget: Duration::from_millis(250),
                target_cv: Some(0.005),
                min_sample: Duration::from_millis(5),
                iters: None,
                max_iters: 1 << 40,
            },
            Profile::Standard => Policy {
                warmup: Warmup::Time(Duration::from_millis(50)),
                min_reps: 10,
                max_reps: 500,
                time_budget: Duration::from_millis(800),
                target_cv: Some(0.003),
                min_sample: Duration::from_millis(10),
                iters: None,
                max_iters: 1 << 40,
            },
            Profile::Full => Policy {
                warmup: Warmup::Time(Duration::from_millis(100)),
                min_reps: 20,
                max_reps: 2000,
                time_budget: Duration::from_secs(3),
                target_cv: Some(0.002),
                min_sample: Duration::from_millis(10),
                iters: None,
                max_iters: 1 << 40,
            },
        }
    }
}

/// Figures measured by earlier experiments that later ones use.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Facts {
    /// Measured single-core clock, GHz (turns ns into cycles).
    pub ghz_single: Option<f64>,
    /// Measured all-core clock, GHz.
    pub ghz_all: Option<f64>,
}

/// What an experiment gets to work with.
pub struct ExpCtx<'a> {
    pub machine: &'a MachineInfo,
    /// The CPUs this run may use (usable ∩ `--cpus`).
    pub cpus: CpuSet,
    pub profile: Profile,
    /// Set by Ctrl-C: stop between samples, keep what finished.
    pub stop: &'a AtomicBool,
    pub facts: &'a mut Facts,
    /// Report a sub-step (shown by the progress display).
    pub step: &'a mut dyn FnMut(&str),
}

pub trait Experiment: Sync {
    /// Short name used by `--only`/`--skip` and in result keys.
    fn name(&self) -> &'static str;
    /// One line saying what it measures.
    fn title(&self) -> &'static str;
    /// Expected duration in seconds on this machine with this profile.
    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64;
    /// Measure; hand each finished figure to `out` (stored at once).
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()>;
    /// Whether `cpuscope run` runs it. False for an experiment that needs
    /// what only its own command gives (`tune` needs the user's command):
    /// it is still registered, so its records are stored, shown, compared
    /// and rendered like any other.
    fn in_run(&self) -> bool {
        true
    }
}

/// An experiment whose own command (`cpuscope c2c`, `latency`, …) may set
/// more than the profile and the CPUs: its parameters are a type of its own,
/// checked when the command is compiled. [`Experiment::run`] measures with
/// the defaults it plans from the machine, the CPUs and the profile.
pub trait WithParams: Experiment {
    /// What the command may set (a plan for the memory family).
    type Params;
    /// Measure with `p`; an experiment may hand figures back in `p` (c2c
    /// returns its measured runs for the command's own views).
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut Self::Params,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()>;
}

/// CPUs to use for "one thread per physical core": the first usable CPU of each core.
pub fn one_cpu_per_core(machine: &MachineInfo, cpus: &CpuSet) -> CpuSet {
    let mut out = CpuSet::new();
    let mut covered = CpuSet::new();
    for core in &machine.cores {
        let mine = core.cpus.intersection(cpus);
        if let Some(c) = mine.first() {
            out.insert(c);
            covered = covered.union(&core.cpus);
        }
    }
    // CPUs whose core is unknown count as their own core.
    for c in cpus.iter() {
        if !covered.contains(c) {
            out.insert(c);
        }
    }
    out
}

/// SMT sibling groups (two or more usable CPUs on one core).
pub fn smt_groups(machine: &MachineInfo, cpus: &CpuSet) -> Vec<CpuSet> {
    machine
        .cores
        .iter()
        .map(|c| c.cpus.intersection(cpus))
        .filter(|s| s.len() > 1)
        .collect()
}

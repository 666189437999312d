//! Experiments: each plans its work from the machine, runs kernels through
//! the harness, and hands back `ResultRecord`s. They register in [`registry`],
//! the one place `cpuscope run` learns about them.

pub mod bandwidth;
pub mod c2c;
pub mod c2c_html;
pub mod c2c_infer;
pub mod c2c_text;
pub mod compute_html;
pub mod compute_text;
pub mod frequency;
pub mod latency;
pub mod loaded_latency;
pub mod mem_common;
pub mod memory_html;
pub mod memory_payload;
pub mod memory_text;
pub mod numa_matrix;
pub mod peak;
pub mod placement_plan;
pub mod placement_study;
pub mod rate;
pub mod render;
pub mod seed_loops;
pub mod simd;
pub mod softirq;
pub mod sync;
pub mod tlb_reach;
pub mod tune;
pub mod tune_html;
pub mod tune_text;
pub mod workloads;

use crate::harness::measure::{Policy, Warmup};
use crate::machine::MachineInfo;
use crate::placement::CpuSet;
use crate::results::schema::{ResultRecord, Run};
use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use std::any::Any;
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
    /// What a stand-alone command asks beyond the profile and the CPUs: the
    /// experiment's own parameter type (its `Plan` for the memory family,
    /// `Params` for the others), read with [`ExpCtx::params`]. `None` under
    /// `run`: the experiment plans its defaults.
    pub params: Option<&'a mut dyn Any>,
}

impl ExpCtx<'_> {
    /// The parameters the caller gave, if any. An error when they are not a
    /// `T`: parameters meant for another experiment are never ignored.
    pub fn params<T: Any>(&mut self) -> Result<Option<&mut T>> {
        match self.params.as_deref_mut() {
            None => Ok(None),
            Some(p) => p.downcast_mut::<T>().map(Some).ok_or_else(|| {
                anyhow!(
                    "internal: parameters of the wrong type (expected {})",
                    std::any::type_name::<T>()
                )
            }),
        }
    }

    /// The parameters the caller gave (a copy), else `default` from the
    /// machine, the CPUs and the profile (what `run` measures).
    pub fn params_or<T: Any + Clone>(
        &mut self,
        default: impl FnOnce(&MachineInfo, &CpuSet, Profile) -> T,
    ) -> Result<T> {
        let given = self.params::<T>()?.cloned();
        Ok(given.unwrap_or_else(|| default(self.machine, &self.cpus, self.profile)))
    }
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
    /// This experiment's section of the summary `cpuscope run` prints, from
    /// its records of `run`; empty when it has nothing to show. The default
    /// prints one line per figure ([`render::generic_text`]).
    fn summary_text(&self, run: &Run) -> String {
        render::generic_text(self.name(), run)
    }
    /// Its charts and tables in the HTML report (every figure is also in the
    /// report's results table). Default: none.
    fn report_html(&self, _run: &Run) -> String {
        String::new()
    }
    /// Whether `cpuscope run` runs it. False for an experiment that needs
    /// what only its own command gives (`tune` needs the user's command):
    /// it is still registered, so its records are stored, shown, compared
    /// and rendered like any other.
    fn in_run(&self) -> bool {
        true
    }
}

/// Every experiment, in the order `run` performs them (frequency first:
/// later experiments turn nanoseconds into cycles with its figure); last
/// the ones `run` leaves to their own command (`tune`).
pub fn registry() -> Vec<&'static dyn Experiment> {
    vec![
        &frequency::Frequency,
        &softirq::Softirq,
        &latency::Latency,
        &tlb_reach::TlbReach,
        &bandwidth::Bandwidth,
        &numa_matrix::NumaMatrix,
        &loaded_latency::LoadedLatency,
        &seed_loops::SeedLoops,
        &c2c::C2c,
        &sync::SyncCosts,
        &simd::Simd,
        &peak::Peak,
        &workloads::Workloads,
        &rate::Rate,
        &placement_study::PlacementStudy,
        &tune::Tune,
    ]
}

/// The registered experiment called `name`.
pub fn by_name(name: &str) -> Result<&'static dyn Experiment> {
    let all = registry();
    match all.iter().find(|e| e.name() == name) {
        Some(e) => Ok(*e),
        None => {
            let names: Vec<&str> = all.iter().map(|e| e.name()).collect();
            bail!("unknown experiment '{name}' (known: {})", names.join(", "))
        }
    }
}

/// The experiments `cpuscope run` selects by `--only` / `--skip` (comma
/// lists of names), among those it runs ([`Experiment::in_run`]).
pub fn select(only: &[String], skip: &[String]) -> Result<Vec<&'static dyn Experiment>> {
    for n in only.iter().chain(skip) {
        let e = by_name(n)?;
        if !e.in_run() && only.contains(n) {
            bail!("'{n}' is not part of `run`: it has its own command (cpuscope {n} --help)");
        }
    }
    let all = registry();
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|e| e.in_run())
        .filter(|e| only.is_empty() || only.iter().any(|o| o == e.name()))
        .filter(|e| !skip.iter().any(|s| s == e.name()))
        .collect();
    if chosen.is_empty() {
        bail!("--only and --skip leave no experiment to run (see cpuscope run --list)");
    }
    Ok(chosen)
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

//! The registry, the top floor of experiments/: every experiment paired
//! with its views (its folder's `view.rs`: its sections, verdict lines,
//! curves, key figures, rules of advice), one line each, in the order
//! `cpuscope run` performs them. The one place `run`, the verdict, advice,
//! the summary, the HTML report, compare and fleet learn about
//! experiments; no experiment imports a renderer, and nothing in
//! experiments/ imports this.

use crate::experiments::coherence::{c2c, sync};
use crate::experiments::compute::{peak, placement_study, rate, simd, workloads};
use crate::experiments::experiment::Experiment;
use crate::experiments::memory::{
    bandwidth, latency, loaded_latency, numa_matrix, seed_loops, tlb_reach,
};
use crate::experiments::state::{frequency, softirq};
use crate::experiments::tune::{self, study};
use crate::results::schema::ResultRecord;
use crate::view::{Curve, KeyFigure, Views};
use anyhow::{bail, Result};

/// An experiment and what it shows (its folder's `view.rs`).
pub struct Entry {
    pub experiment: &'static dyn Experiment,
    /// Its section of the summary and the report, its verdict lines, the
    /// curves compare overlays, the figures the fleet compares, its rules
    /// of advice and its rank among the others.
    pub views: &'static dyn Views,
}

/// One line of the registry.
const fn entry(experiment: &'static dyn Experiment, views: &'static dyn Views) -> Entry {
    Entry { experiment, views }
}

/// Every experiment with its views, in the order `run` performs them
/// (frequency first: later experiments turn nanoseconds into cycles with its
/// figure); last the ones `run` leaves to their own command (`tune`).
pub fn registry() -> Vec<Entry> {
    vec![
        entry(&frequency::Frequency, &frequency::view::FrequencyViews),
        entry(&softirq::Softirq, &softirq::view::SoftirqViews),
        entry(&latency::Latency, &latency::view::LatencyViews),
        entry(&tlb_reach::TlbReach, &tlb_reach::view::TlbReachViews),
        entry(&bandwidth::Bandwidth, &bandwidth::view::BandwidthViews),
        entry(
            &numa_matrix::NumaMatrix,
            &numa_matrix::view::NumaMatrixViews,
        ),
        entry(
            &loaded_latency::LoadedLatency,
            &loaded_latency::view::LoadedLatencyViews,
        ),
        entry(
            &crate::experiments::memory::rw_mix::RwMix,
            &crate::experiments::memory::rw_mix::view::RwMixViews,
        ),
        entry(&seed_loops::SeedLoops, &seed_loops::view::SeedLoopsViews),
        entry(&c2c::C2c, &c2c::view::C2cViews),
        entry(&sync::SyncCosts, &sync::view::SyncViews),
        entry(&simd::Simd, &simd::view::SimdViews),
        // Its figures are shown by simd's section and peak table.
        entry(&peak::Peak, &peak::view::PeakViews),
        entry(&workloads::Workloads, &workloads::view::WorkloadsViews),
        entry(&rate::Rate, &rate::view::RateViews),
        entry(
            &placement_study::PlacementStudy,
            &placement_study::view::PlacementStudyViews,
        ),
        entry(&study::Tune, &tune::view::TuneViews),
    ]
}

/// The figures the fleet compares across hosts, every experiment's in rank
/// order ([`Views::key_figures`]).
pub fn key_figures() -> Vec<&'static KeyFigure> {
    let mut all = registry();
    all.sort_by_key(|e| e.views.rank());
    all.iter().flat_map(|e| e.views.key_figures()).collect()
}

/// The curves record `rec` carries, as its experiment declares them
/// ([`Views::curves`]); none for an experiment not registered.
pub fn curves_of(rec: &ResultRecord) -> Vec<Curve> {
    registry()
        .into_iter()
        .find(|e| e.experiment.name() == rec.experiment)
        .map_or_else(Vec::new, |e| e.views.curves(rec))
}

/// Every experiment, in run order.
pub fn experiments() -> Vec<&'static dyn Experiment> {
    registry().into_iter().map(|e| e.experiment).collect()
}

/// The registered experiment called `name`.
pub fn by_name(name: &str) -> Result<&'static dyn Experiment> {
    let all = experiments();
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
    let all = experiments();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An experiment declares key figures of its own metrics only, and the
    /// fleet lists them in rank order (frequency first, peak before simd
    /// although simd runs first).
    #[test]
    fn key_figures_are_each_experiments_own_in_rank_order() {
        for e in registry() {
            for kf in e.views.key_figures() {
                assert_eq!(kf.id.experiment, e.experiment.name(), "{}", kf.label);
            }
        }
        let names: Vec<&str> = key_figures().iter().map(|k| k.id.experiment).collect();
        let rank = |n: &str| {
            registry()
                .into_iter()
                .find(|e| e.experiment.name() == n)
                .map(|e| e.views.rank())
        };
        let ranks: Vec<_> = names.iter().map(|n| rank(n)).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{names:?}");
        assert_eq!(names.first(), Some(&frequency::EXP));
        let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(at(peak::EXP) < at(simd::EXP), "{names:?}");
        for n in [
            latency::EXP,
            bandwidth::EXP,
            c2c::EXP,
            workloads::EXP,
            rate::EXP,
        ] {
            assert!(names.contains(&n), "{n} has key figures: {names:?}");
        }
    }

    /// Ranks tell experiments apart: no two share one.
    #[test]
    fn ranks_are_distinct() {
        let mut ranks: Vec<u16> = registry().iter().map(|e| e.views.rank().0).collect();
        let n = ranks.len();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), n);
    }
}

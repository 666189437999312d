//! The registry, the top floor of experiments/: every experiment paired
//! with its renderers (and the curves its records carry), in the order
//! `cpuscope run` performs them. The one place `run`, the summary, the HTML
//! report and the comparison page learn about experiments; no experiment
//! imports a renderer, and nothing in experiments/ imports this.

use crate::experiments::coherence::{self, c2c, sync};
use crate::experiments::compute::{self, peak, placement_study, rate, simd, workloads};
use crate::experiments::experiment::Experiment;
use crate::experiments::memory::curves::{self, Curve};
use crate::experiments::memory::{
    self, bandwidth, latency, loaded_latency, numa_matrix, seed_loops, tlb_reach,
};
use crate::experiments::state::{self, frequency, softirq};
use crate::experiments::tune::{self, study};
use crate::results::schema::{ResultRecord, Run};
use crate::view::{KeyFigure, Quiet, Views};
use anyhow::{bail, Result};

/// An experiment and how its records are shown.
pub struct Entry {
    pub experiment: &'static dyn Experiment,
    /// What it shows beyond its own section: its rank among the others,
    /// the figures the fleet compares (its folder's `view.rs`).
    pub views: &'static dyn Views,
    /// Its section of the summary `cpuscope run` prints, from its records of
    /// the run; empty when it has nothing to show.
    pub text: fn(&Run) -> String,
    /// Its charts and tables in the HTML report (every figure is also in the
    /// report's results table); empty: none.
    pub html: fn(&Run) -> String,
    /// The curves one of its records carries, which the comparison page
    /// overlays run by run; empty: none.
    pub curves: fn(&ResultRecord) -> Vec<Curve>,
}

/// No charts or tables of its own.
fn no_html(_: &Run) -> String {
    String::new()
}

/// No curves in its records.
fn no_curves(_: &ResultRecord) -> Vec<Curve> {
    Vec::new()
}

/// Every experiment with its renderers, in the order `run` performs them
/// (frequency first: later experiments turn nanoseconds into cycles with its
/// figure); last the ones `run` leaves to their own command (`tune`).
pub fn registry() -> Vec<Entry> {
    vec![
        Entry {
            experiment: &frequency::Frequency,
            views: &frequency::view::FrequencyViews,
            text: |run| state::text::frequency(&run.results),
            html: state::html::frequency,
            curves: no_curves,
        },
        Entry {
            experiment: &softirq::Softirq,
            views: &Quiet,
            text: |run| state::text::softirq(&run.results),
            html: no_html,
            curves: no_curves,
        },
        Entry {
            experiment: &latency::Latency,
            views: &latency::view::LatencyViews,
            text: |run| memory::text::section(run, latency::EXP),
            html: |run| memory::html::latency_chart(&memory::html::records(run)),
            curves: curves::latency,
        },
        Entry {
            experiment: &tlb_reach::TlbReach,
            views: &Quiet,
            text: memory::text::tlb_reach,
            html: no_html,
            curves: no_curves,
        },
        Entry {
            experiment: &bandwidth::Bandwidth,
            views: &bandwidth::view::BandwidthViews,
            text: |run| memory::text::section(run, bandwidth::EXP),
            html: |run| memory::html::bandwidth_chart(&memory::html::records(run)),
            curves: curves::saturation,
        },
        Entry {
            experiment: &numa_matrix::NumaMatrix,
            views: &numa_matrix::view::NumaMatrixViews,
            text: |run| memory::text::section(run, numa_matrix::EXP),
            html: |run| memory::html::numa_tables(&memory::html::records(run)),
            curves: no_curves,
        },
        Entry {
            experiment: &loaded_latency::LoadedLatency,
            views: &Quiet,
            text: |run| memory::text::section(run, loaded_latency::EXP),
            html: |run| memory::html::loaded_chart(&memory::html::records(run)),
            curves: curves::loaded,
        },
        Entry {
            experiment: &seed_loops::SeedLoops,
            views: &Quiet,
            text: |run| memory::text::section(run, seed_loops::EXP),
            html: no_html,
            curves: no_curves,
        },
        Entry {
            experiment: &c2c::C2c,
            views: &c2c::view::C2cViews,
            text: |run| coherence::text::render_summary(&run.results),
            html: coherence::html::c2c_charts,
            curves: no_curves,
        },
        Entry {
            experiment: &sync::SyncCosts,
            views: &Quiet,
            text: |run| coherence::text::render_sync_summary(&run.results),
            html: coherence::html::sync_charts,
            curves: no_curves,
        },
        Entry {
            experiment: &simd::Simd,
            views: &simd::view::SimdViews,
            text: |run| compute::text::render_simd_configurations(&run.results),
            html: |run| compute::html::simd_table(run) + &compute::html::peak_section(run),
            curves: no_curves,
        },
        Entry {
            // Its figures are shown by simd's section and peak table.
            experiment: &peak::Peak,
            views: &peak::view::PeakViews,
            text: |_| String::new(),
            html: no_html,
            curves: no_curves,
        },
        Entry {
            experiment: &workloads::Workloads,
            views: &workloads::view::WorkloadsViews,
            text: |run| compute::text::render_workloads(&run.results),
            html: compute::html::published_section,
            curves: no_curves,
        },
        Entry {
            experiment: &rate::Rate,
            views: &rate::view::RateViews,
            text: |run| compute::text::render_rate(&run.results),
            html: compute::html::rate_section,
            curves: no_curves,
        },
        Entry {
            experiment: &placement_study::PlacementStudy,
            views: &Quiet,
            text: |run| compute::text::render_placement(&run.results),
            html: compute::html::placement_section,
            curves: no_curves,
        },
        Entry {
            experiment: &study::Tune,
            views: &tune::view::TuneViews,
            text: tune::text::render,
            html: tune::html::render,
            curves: no_curves,
        },
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
/// ([`Entry::curves`]); none for an experiment not registered.
pub fn curves_of(rec: &ResultRecord) -> Vec<Curve> {
    registry()
        .into_iter()
        .find(|e| e.experiment.name() == rec.experiment)
        .map_or_else(Vec::new, |e| (e.curves)(rec))
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
        let mut seen: Vec<&str> = names.clone();
        seen.dedup();
        assert_eq!(
            seen,
            [
                frequency::EXP,
                latency::EXP,
                bandwidth::EXP,
                c2c::EXP,
                peak::EXP,
                simd::EXP,
                workloads::EXP,
                rate::EXP
            ]
        );
        assert_eq!(names.len(), 14);
    }

    /// Ranks tell experiments apart: no two with views share one.
    #[test]
    fn ranks_are_distinct() {
        let mut ranks: Vec<u16> = registry()
            .iter()
            .map(|e| e.views.rank().0)
            .filter(|&r| r != u16::MAX)
            .collect();
        let n = ranks.len();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), n);
    }
}

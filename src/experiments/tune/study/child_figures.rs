//! What a candidate's runs give beside its score: the median of each counter
//! over its runs, and the share of its memory pages on each NUMA node.

use crate::experiments::tune::analysis::median;
use crate::experiments::tune::payload::{CounterMedians, NumaShare};
use crate::harness::child::{ChildRun, COUNT_KEYS};

pub(super) fn counter_medians(runs: &[ChildRun], counting: bool) -> CounterMedians {
    let mut m = CounterMedians::default();
    if !counting {
        for k in COUNT_KEYS {
            m.missing
                .insert(k.into(), "not counted (--no-counters)".into());
        }
        return m;
    }
    let counts: Vec<_> = runs.iter().filter_map(ChildRun::counts).collect();
    let med = |f: &dyn Fn(&crate::harness::child::Counts) -> Option<f64>| {
        let v: Vec<f64> = counts.iter().filter_map(f).collect();
        median(&v)
    };
    m.ipc = med(&|c| c.ipc);
    m.cpu_migrations = med(&|c| c.cpu_migrations);
    m.page_faults = med(&|c| c.page_faults);
    m.context_switches = med(&|c| c.context_switches);
    if let Some(c) = counts.first() {
        m.missing = c.missing.clone();
    }
    m
}

pub(super) fn numa_share(runs: &[ChildRun], reason: Option<&str>) -> NumaShare {
    if let Some(r) = reason {
        return NumaShare {
            unavailable: Some(r.to_string()),
            ..NumaShare::default()
        };
    }
    let (mut remote, mut total, mut samples) = (0u64, 0u64, 0usize);
    for r in runs {
        remote += r.numa.remote_bytes;
        total += r.numa.total_bytes;
        samples += r.numa.samples;
    }
    NumaShare {
        remote_share: (total > 0).then(|| remote as f64 / total as f64),
        samples,
        last_per_node: runs
            .iter()
            .rev()
            .find(|r| r.numa.samples > 0)
            .map(|r| r.numa.last_per_node.clone())
            .unwrap_or_default(),
        unavailable: (samples == 0).then(|| {
            runs.iter()
                .find_map(|r| r.numa.unavailable.clone())
                .unwrap_or_else(|| "no run was sampled".into())
        }),
    }
}

//! Counters around a measured region (src/counters/): the calling thread, a
//! team's worker threads, or a child process tree, with the same events
//! (`events::harness_default()`: task-clock, page-faults, cycles,
//! instructions, branches, branch-misses, cache-references, cache-misses).
//!
//! Counting never fails a measurement: events that cannot be counted carry
//! their state and the counters room's reason, and derived figures (IPC,
//! GHz) are `None` with that reason, never 0. A record stores the windows it
//! counted as `counters: [Counted, ...]` (one per counted run) and, where a
//! figure exists, IPC / GHz as figures of their own.

use crate::base::Sysroot;
use crate::counters::group::TargetError;
use crate::counters::metrics::DerivedMetrics;
use crate::counters::{events, CounterGroup, Event, EventReading, PerfEnv, Readings, Target};
use crate::placement::team::Team;
use serde::Serialize;

/// The events counted around kernels and workloads.
pub fn workload_events() -> Vec<Event> {
    events::harness_default()
}

/// The perf environment of this machine (paranoid level, PMUs...), used to
/// explain why an event cannot be counted.
pub fn perf_env() -> PerfEnv {
    Sysroot::new("/")
        .ok()
        .map(|s| PerfEnv::detect(&s))
        .unwrap_or_default()
}

/// One thread's derived figures (team windows).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadFigures {
    pub tid: i32,
    pub ipc: Option<f64>,
    pub ghz: Option<f64>,
}

/// What one counting window gave.
#[derive(Clone, Debug, Serialize)]
pub struct Counted {
    /// What was counted, in words.
    pub scope: String,
    /// Every event, summed over the targets (scaled for multiplexing as perf does).
    pub events: Vec<EventReading>,
    /// IPC, GHz, miss ratios... `None` with `missing[name]` = why.
    pub metrics: DerivedMetrics,
    /// Per worker thread, for team windows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_thread: Vec<ThreadFigures>,
    /// Notes from opening (fallbacks, kernel limits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Counted {
    /// From readings of a counter group.
    pub fn from_readings(scope: &str, r: &Readings, notes: &[String]) -> Counted {
        Counted {
            scope: scope.to_string(),
            events: r.events.clone(),
            metrics: r.metrics(),
            per_thread: Vec::new(),
            notes: notes.to_vec(),
        }
    }

    /// Nothing could be counted (no target could be opened): every derived
    /// figure is absent with `reason`.
    pub fn unavailable(scope: &str, reason: &str) -> Counted {
        let mut metrics = DerivedMetrics::default();
        for k in ["ipc", "cpi", "ghz", "cpus_utilized"] {
            metrics.missing.insert(k.to_string(), reason.to_string());
        }
        Counted {
            scope: scope.to_string(),
            events: Vec::new(),
            metrics,
            per_thread: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn figure(&self, v: Option<f64>, name: &str) -> Result<f64, String> {
        match v {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self
                .metrics
                .missing
                .get(name)
                .cloned()
                .unwrap_or_else(|| format!("{name} was not derived from the counts"))),
        }
    }

    /// Instructions per cycle, or why not.
    pub fn ipc(&self) -> Result<f64, String> {
        self.figure(self.metrics.ipc, "ipc")
    }

    /// Average clock while running (cycles / task time), or why not.
    pub fn ghz(&self) -> Result<f64, String> {
        self.figure(self.metrics.ghz, "ghz")
    }

    /// The scaled count of an event, or why not.
    pub fn value(&self, key: &str) -> Result<f64, String> {
        match self.events.iter().find(|e| e.key == key) {
            Some(e) => match e.value {
                Some(v) => Ok(v),
                None => Err(e.why_missing()),
            },
            None => Err(format!("{key} not measured")),
        }
    }
}

/// A record's `counters` value: the windows it counted, in order.
pub fn to_value(windows: &[Counted]) -> serde_json::Value {
    serde_json::to_value(windows).unwrap_or(serde_json::Value::Null)
}

/// Median of the figures that exist, and the first reason when none does.
pub fn median_or_reason(figs: &[Result<f64, String>]) -> (Vec<f64>, Option<String>) {
    let ok: Vec<f64> = figs
        .iter()
        .filter_map(|f| f.as_ref().ok().copied())
        .collect();
    let why = if ok.is_empty() {
        Some(
            figs.iter()
                .find_map(|f| f.as_ref().err().cloned())
                .unwrap_or_else(|| "not counted".into()),
        )
    } else {
        None
    };
    (ok, why)
}

/// Count the calling thread while `f` runs.
pub fn on_this_thread<T>(scope: &str, f: impl FnOnce() -> T) -> (T, Counted) {
    let mut g = CounterGroup::open_self(&workload_events());
    g.enable();
    let out = f();
    g.disable();
    let c = Counted::from_readings(scope, &g.read(), g.notes());
    (out, c)
}

/// This thread's kernel thread id.
fn gettid() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Count every worker thread of `team` while `f` runs (which normally runs
/// the team's rounds). Counting covers the workers only, not the calling
/// thread; it includes the workers' wake-ups and start barriers between
/// rounds (short next to the samples).
pub fn on_team<T>(team: &mut Team, scope: &str, f: impl FnOnce(&mut Team) -> T) -> (T, Counted) {
    let tids: Result<Vec<i32>, String> = team
        .run_round(|_| gettid())
        .map(|r| r.results)
        .map_err(|e| format!("{e:#}"));
    let tids = match tids {
        Ok(t) => t,
        Err(e) => {
            let out = f(team);
            return (
                out,
                Counted::unavailable(scope, &format!("worker thread ids unknown: {e}")),
            );
        }
    };
    let targets: Vec<Target> = tids
        .iter()
        .map(|&tid| Target::Task {
            tid,
            inherit: false,
            enable_on_exec: false,
        })
        .collect();
    let groups = events::pack(&workload_events());
    let mut g = match CounterGroup::open(&groups, &targets, perf_env()) {
        Ok(g) => g,
        Err(e) => {
            let why = match e {
                TargetError::Gone => "the worker threads exited before counting".to_string(),
                TargetError::Denied(_, r) => {
                    format!("not allowed to count the worker threads: {r}")
                }
            };
            let out = f(team);
            return (out, Counted::unavailable(scope, &why));
        }
    };
    g.enable();
    let out = f(team);
    g.disable();
    let snap = g.snapshot();
    let mut c = Counted::from_readings(scope, &g.readings_from(&snap), g.notes());
    c.per_thread = g
        .readings_per_target(&snap)
        .into_iter()
        .map(|(t, r)| {
            let m = r.metrics();
            ThreadFigures {
                tid: match t {
                    Target::Task { tid, .. } => tid,
                    _ => 0,
                },
                ipc: m.ipc,
                ghz: m.ghz,
            }
        })
        .collect();
    (out, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(n: u64) -> u64 {
        let mut acc = 0u64;
        for i in 0..n {
            acc = std::hint::black_box(acc.wrapping_add(i ^ (acc >> 3)));
        }
        acc
    }

    #[test]
    fn this_thread_counts_task_clock_and_never_a_zero_ipc() {
        let (_, c) = on_this_thread("test", || spin(2_000_000));
        // task-clock is a software event: counted wherever perf_event_open works.
        if let Ok(t) = c.value("task-clock") {
            assert!(t > 0.0);
        }
        match c.ipc() {
            Ok(i) => assert!(i > 0.0),
            Err(why) => assert!(!why.is_empty()),
        }
        let v = to_value(std::slice::from_ref(&c));
        assert!(v[0]["metrics"]["ipc"].is_null() == c.metrics.ipc.is_none());
        if c.metrics.ipc.is_none() {
            assert!(v[0]["metrics"]["missing"]["ipc"].is_string());
        }
    }

    #[test]
    fn team_counts_each_worker() {
        let cpu = crate::placement::pin::current_affinity()
            .unwrap()
            .first()
            .unwrap();
        let mut team = Team::new(&[cpu, cpu]).unwrap();
        let (r, c) = on_team(&mut team, "team test", |t| {
            t.run_round(|_| spin(1_000_000)).map(|_| ())
        });
        r.unwrap();
        if !c.events.is_empty() {
            assert_eq!(c.per_thread.len(), 2);
        }
        if let Ok(t) = c.value("task-clock") {
            assert!(t > 0.0);
        }
    }

    #[test]
    fn unavailable_gives_reasons() {
        let c = Counted::unavailable("x", "no perf here");
        assert_eq!(c.ipc().unwrap_err(), "no perf here");
        assert_eq!(c.ghz().unwrap_err(), "no perf here");
        let (ok, why) = median_or_reason(&[Err("a".into()), Err("b".into())]);
        assert!(ok.is_empty());
        assert_eq!(why.as_deref(), Some("a"));
        let (ok, why) = median_or_reason(&[Err("a".into()), Ok(1.5)]);
        assert_eq!(ok, vec![1.5]);
        assert!(why.is_none());
    }
}

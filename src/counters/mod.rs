//! Hardware and software counters through `perf_event_open`, and the metrics
//! derived from them.
//!
//! - [`events`]: event names and encodings, `-e` list parsing.
//! - [`group`]: [`CounterGroup`] (leader + members read together, per thread,
//!   per task with inherit, per CPU), support states, multiplex scaling.
//! - [`metrics`]: [`DerivedMetrics`] (IPC, CPI, miss ratios, GHz, top-down).
//! - [`topdown`]: top-down level 1 where the PMU offers it.
//! - [`env`]: why an event cannot be counted here.
//! - [`workload`]: start a command stopped, so counts cover only it.
//! - [`doc`]: the `cpuscope.stat/1` document.
//! - [`stat`]: the `cpuscope stat` counting loop (command, process or CPUs,
//!   intervals), which builds that document.
//!
//! For the harness: wrap a measured region on the calling thread with
//! ```no_run
//! use cpuscope::counters::{events, CounterGroup};
//! let mut g = CounterGroup::open_self(&events::harness_default());
//! g.enable();
//! // ... measured region ...
//! g.disable();
//! let m = g.read().metrics(); // m.ipc: Option<f64>, None with m.missing["ipc"] when unavailable
//! ```

pub mod doc;
pub mod env;
pub mod events;
pub mod group;
pub mod metrics;
pub mod raw;
pub mod stat;
pub mod sysfs;
pub mod topdown;
pub mod topdown_model;
pub mod workload;

pub use env::{PerfEnv, Reason};
pub use events::Event;
pub use group::{CounterGroup, EventReading, EventState, Readings, Target};
pub use metrics::DerivedMetrics;
pub use topdown::TopDown;
pub use topdown_model::{TopdownModel, TopdownStatus};

use serde::Serialize;

/// Whether hardware counting works here, found by counting a short busy loop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Probe {
    /// `counted`, `not-counted` or `not-supported`.
    pub state: EventState,
    /// Short reason code when not counted.
    pub reason_code: Option<String>,
    pub reason: Option<String>,
    /// Instructions per cycle over the probe loop when counted.
    pub ipc: Option<f64>,
}

/// Count cycles and instructions over a short busy loop on this thread
/// (a few million additions, a few ms) and report whether hardware counting works,
/// including the "opens but returns zeros" case of some virtual PMUs.
pub fn probe_hardware() -> Probe {
    let evs = [Event::named("cycles"), Event::named("instructions")];
    let mut g = CounterGroup::open_self(&evs);
    g.enable();
    let mut acc = 0u64;
    for i in 0..3_000_000u64 {
        acc = std::hint::black_box(acc.wrapping_add(i ^ (acc >> 3)));
    }
    std::hint::black_box(acc);
    g.disable();
    let r = g.read();
    let cycles = r.get("cycles");
    let m = r.metrics();
    match cycles {
        Some(c) => Probe {
            state: c.state,
            reason_code: c.reason_code.clone(),
            reason: c.reason.clone(),
            ipc: m.ipc,
        },
        None => Probe {
            state: EventState::NotSupported,
            reason_code: Some("not-opened".into()),
            reason: Some("cycles not opened".into()),
            ipc: None,
        },
    }
}

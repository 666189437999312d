//! Timing, warm-up, repetitions, statistics, thread teams with barriers,
//! and counters around measured regions (`counted`).

pub mod counted;
pub mod measure;
pub mod stats;
pub mod timer;

pub use measure::{
    measure, measure_bracketed, measure_team, Bracketed, Interrupted, Measurement, Policy,
    StopReason, TeamMeasurement, Warmup,
};
pub use stats::Stats;
pub use timer::{Tick, Timer, TimerInfo, TimerSource};

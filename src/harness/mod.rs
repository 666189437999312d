//! Timing, warm-up, repetitions, statistics, thread teams with barriers,
//! a user's command run once as a measured child (`child`),
//! and counters around measured regions (`counted`).

pub mod child;
pub mod counted;
pub mod measure;
pub mod pairs;

pub use measure::{
    measure, measure_bracketed, measure_team, Bracketed, Interrupted, Measurement, Policy,
    StopReason, TeamMeasurement, Warmup,
};
// The clock and the statistics live on the bottom floor (`base`); these
// paths stay for callers written against `harness::`.

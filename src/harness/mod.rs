//! Timing, warm-up, repetitions, statistics, thread teams with barriers.

pub mod stats;

pub use stats::Stats;

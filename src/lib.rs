//! cpuscope: measure what a CPU really does, and put machines side by side.
//!
//! Data flows one way: machine -> plan -> harness + kernels (pinned, counted)
//! -> results -> store -> report. See docs/architecture.md.

pub mod app;
pub mod base;
pub mod counters;
pub mod experiments;
pub mod harness;
pub mod kernels;
pub mod machine;
pub mod placement;
pub mod report;
pub mod results;

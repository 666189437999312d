//! cpuscope: measure what a CPU really does, and put machines side by side.
//!
//! Data flows one way: machine -> plan -> harness + kernels (pinned, counted)
//! -> results -> store -> report. Imports follow the floors of
//! docs/architecture.md (checked by scripts/check-floors.py): base <
//! {machine, placement, counters} < kernels < harness < results < view <
//! experiments < report < app.

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
pub mod view;

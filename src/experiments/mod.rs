//! Experiments: each plans its work from the machine, runs kernels through
//! the harness, and hands back `ResultRecord`s. Floors inside this folder,
//! lowest first (scripts/check-floors.py checks them):
//! - [`experiment`] (the trait and its context), [`common`] (helpers every
//!   family shares) and each family's `payload.rs` (the typed `data` of its
//!   records, with its experiment and metric names);
//! - the experiments, one file each, in family folders: [`memory`],
//!   [`coherence`], [`compute`], [`tune`], [`state`];
//! - the renderers above them: [`render`] and each family's `text.rs` /
//!   `html.rs`, which read the payloads;
//! - [`registry`] on top: every experiment paired with its renderers, the one
//!   place `cpuscope run` learns about them.

pub mod coherence;
pub mod common;
pub mod compute;
pub mod experiment;
pub mod memory;
pub mod registry;
pub mod render;
pub mod state;
pub mod tune;

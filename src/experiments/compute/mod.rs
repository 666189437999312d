//! The compute family: SIMD yield and peak FLOPs, workloads, the rate score
//! and placement studies; `text` and `html` render them.

pub mod payload;
pub mod peak;
pub mod placement_plan;
pub mod placement_study;
pub mod rate;
pub mod simd;
pub mod text;
pub mod workloads;

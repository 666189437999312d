//! The machine-state family: effective frequency and network softirqs,
//! their typed payloads shared; each draws itself in its folder's view.rs.

pub mod frequency;
pub mod payload;
pub mod softirq;

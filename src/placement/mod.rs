//! Placement primitives: CPU lists, pinning, thread teams, memory policy.

pub mod cpulist;

pub use cpulist::CpuSet;

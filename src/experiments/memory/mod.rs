//! The memory family: latency of every cache level and DRAM, TLB reach,
//! bandwidth as threads grow, NUMA matrices, loaded latency, the seeds'
//! loops. `payload` (typed record data) < the experiments (and `curves`,
//! what a comparison draws of their records) < `text` (the summary lines
//! not typed yet); the report's charts are typed sections in each view.rs.

pub mod bandwidth;
pub mod latency;
pub mod loaded_latency;
pub mod numa_matrix;
pub mod payload;
pub mod rw_mix;
pub mod seed_loops;
pub mod text;
pub mod tlb_reach;

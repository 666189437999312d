//! The memory family: latency of every cache level and DRAM, TLB reach,
//! bandwidth as threads grow, NUMA matrices, loaded latency, the seeds'
//! loops. `payload` (typed record data) < the experiments (and `curves`,
//! what a comparison draws of their records) < `text`/`html`.

pub mod bandwidth;
pub mod html;
pub mod latency;
pub mod loaded_latency;
pub mod numa_matrix;
pub mod payload;
pub mod rw_mix;
pub mod seed_loops;
pub mod text;
pub mod tlb_reach;

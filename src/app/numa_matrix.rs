//! `cpuscope numa-matrix`: latency and bandwidth from the CPUs of each node
//! to the memory of each node (and interleaved), against declared distances.

use super::args::MeasureArgs;
use super::session;
use super::Context;
use crate::experiments::memory::numa_matrix;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct NumaMatrixArgs {
    /// Rows: nodes whose CPUs run the measurement (default: every node with usable CPUs).
    #[arg(long, value_name = "LIST")]
    pub cpu_nodes: Option<String>,
    /// Columns: nodes whose memory is read (default: every node with memory).
    #[arg(long, value_name = "LIST")]
    pub mem_nodes: Option<String>,
    /// Leave out the interleave column.
    #[arg(long)]
    pub no_interleave: bool,
    /// Working set of the latency chase (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub latency_size: Option<String>,
    /// Bytes of the bandwidth array (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Only the latency matrix.
    #[arg(long, conflicts_with = "bandwidth_only")]
    pub latency_only: bool,
    /// Only the bandwidth matrix.
    #[arg(long)]
    pub bandwidth_only: bool,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

impl NumaMatrixArgs {
    fn options(&self) -> numa_matrix::Options {
        numa_matrix::Options {
            cpu_nodes: self.cpu_nodes.clone(),
            mem_nodes: self.mem_nodes.clone(),
            no_interleave: self.no_interleave,
            latency_size: self.latency_size.clone(),
            size: self.size.clone(),
            latency: !self.bandwidth_only,
            bandwidth: !self.latency_only,
        }
    }
}

pub fn run(ctx: &Context, args: &NumaMatrixArgs) -> Result<i32> {
    let o = args.options();
    session::memory_command(
        ctx,
        "numa-matrix",
        None,
        &args.measure,
        &numa_matrix::NumaMatrix,
        |m, c, p| numa_matrix::plan_with(m, c, p, &o),
    )
}

//! `cpuscope bandwidth`: STREAM-style bandwidth on its own, with the thread
//! counts, CPUs, kernels, widths, stores, array size and node as options.

use super::args::MeasureArgs;
use super::session;
use super::Context;
use crate::experiments::memory::bandwidth;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct BandwidthArgs {
    /// Thread counts to sweep, e.g. 1,2,4 or 1-16 (default: the profile's sweep up to all CPUs).
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// Restrict to these CPUs (must be usable by this process).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Placements: compact, spread_core, spread_node.
    #[arg(long, value_delimiter = ',')]
    pub placement: Vec<String>,
    /// Kernels: read, write, copy, triad.
    #[arg(long, value_delimiter = ',')]
    pub kernels: Vec<String>,
    /// Widths: vector (the widest this CPU has), scalar, avx512, avx, sse2, neon.
    #[arg(long, value_delimiter = ',')]
    pub width: Vec<String>,
    /// Stores: normal, nt (non-temporal).
    #[arg(long, value_delimiter = ',')]
    pub stores: Vec<String>,
    /// Bytes of each array (default: 4 × the last-level cache, STREAM's rule).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Bind the arrays to this NUMA node (default: first touch by each thread).
    #[arg(long)]
    pub node: Option<String>,
    /// Skip the per-cache-level figures.
    #[arg(long)]
    pub no_levels: bool,
    /// Repetitions: N rounds per figure (default: the profile's).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    pub reps: Option<usize>,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

impl BandwidthArgs {
    fn options(&self) -> bandwidth::Options {
        bandwidth::Options {
            threads: self.threads.clone(),
            placements: self.placement.clone(),
            kernels: self.kernels.clone(),
            widths: self.width.clone(),
            stores: self.stores.clone(),
            size: self.size.clone(),
            node: self.node.clone(),
            no_levels: self.no_levels,
            reps: self.reps,
        }
    }
}

pub fn run(ctx: &Context, args: &BandwidthArgs) -> Result<i32> {
    let o = args.options();
    session::memory_command(
        ctx,
        bandwidth::EXP,
        args.cpus.as_deref(),
        &args.measure,
        &bandwidth::Bandwidth,
        |m, c, p| bandwidth::plan_with(m, c, p, &o),
    )
}

//! `cpuscope latency`: the latency-vs-working-set curve on its own.

use super::args::MeasureArgs;
use super::session;
use super::Context;
use crate::experiments::memory::latency;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct LatencyArgs {
    /// CPU that chases (default: the first usable CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Working-set sizes: a list (4K,64K,1M) and/or ranges (4K-512M).
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Points per doubling for ranges in --sizes.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub per_octave: usize,
    /// Page sizes: 4k, 2m (THP by madvise, else hugetlbfs), 1g (reserved 1 GiB hugetlbfs pages; never reserved here), or several. The default, 2m,4k, is the profile's curves (with 1g too when enough 1 GiB pages are free).
    #[arg(long, value_delimiter = ',', default_value = "2m,4k")]
    pub pages: Vec<String>,
    /// Chase patterns: random, page_local (TLB-separating), sequential (lmbench-like).
    #[arg(long, value_delimiter = ',')]
    pub pattern: Vec<String>,
    /// Bytes between chased slots.
    #[arg(long, default_value_t = 64, value_name = "BYTES")]
    pub stride: usize,
    /// Bind the chased memory to this NUMA node (default: local first touch).
    #[arg(long)]
    pub node: Option<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

impl LatencyArgs {
    fn options(&self) -> latency::Options {
        latency::Options {
            cpu: self.cpu,
            sizes: self.sizes.clone(),
            per_octave: self.per_octave,
            pages: self.pages.clone(),
            patterns: self.pattern.clone(),
            stride: self.stride,
            node: self.node.clone(),
        }
    }
}

pub fn run(ctx: &Context, args: &LatencyArgs) -> Result<i32> {
    let o = args.options();
    session::memory_command(
        ctx,
        latency::EXP,
        None,
        &args.measure,
        &latency::Latency,
        |m, c, p| latency::plan_with(m, c, p, &o),
    )
}

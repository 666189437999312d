//! `cpuscope loaded-latency`: DRAM latency of one chasing thread while k
//! other threads stream (the latency-vs-bandwidth curve).

use super::args::MeasureArgs;
use super::session;
use super::Context;
use crate::experiments::memory::loaded_latency;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct LoadedLatencyArgs {
    /// CPU that chases (default: the first usable CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// CPUs that stream, in the order they are added (default: every other usable CPU, one per core first).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Numbers of streaming threads to measure, e.g. 0,1,2 or 0-15 (default: the profile's).
    #[arg(long, value_name = "LIST")]
    pub streams: Option<String>,
    /// Traffic of the streams: read, write, copy, triad.
    #[arg(long, default_value = crate::kernels::memory::BwKernel::Read.name())]
    pub traffic: String,
    /// Non-temporal stores for the streams' traffic.
    #[arg(long)]
    pub nt: bool,
    /// Working set of the chase (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub chain_size: Option<String>,
    /// Bytes of the streams' arrays (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

impl LoadedLatencyArgs {
    fn options(&self) -> loaded_latency::Options {
        loaded_latency::Options {
            chaser: self.cpu,
            streamers: self.cpus.clone(),
            streams: self.streams.clone(),
            traffic: self.traffic.clone(),
            nt: self.nt,
            chain_size: self.chain_size.clone(),
            size: self.size.clone(),
        }
    }
}

/// `--cpus` names the streaming CPUs here, among every usable CPU.
pub fn run(ctx: &Context, args: &LoadedLatencyArgs) -> Result<i32> {
    let o = args.options();
    session::memory_command(
        ctx,
        "loaded-latency",
        None,
        &args.measure,
        &loaded_latency::LoadedLatency,
        |m, c, p| loaded_latency::plan_with(m, c, p, &o),
    )
}

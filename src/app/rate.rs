//! `cpuscope rate`: N copies of a workload at once (SPEC-rate style):
//! jobs per hour and the scaling efficiency per copy. Stand-alone (not stored).

use super::args::{formats, OutputArgs, Progress};
use super::session::Session;
use super::Context;
use crate::experiments::compute::rate;
use crate::experiments::compute::rate::text as rate_text;
use crate::experiments::experiment::Profile;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct RateArgs {
    /// Copies to run at once: a count or a comma list (e.g. 4 or 1,2,4);
    /// `per_core` and `all` name one copy per core and one per logical CPU.
    #[arg(long, value_delimiter = ',', required = true)]
    pub copies: Vec<String>,
    /// bc-pow[:EXP] (echo "7^EXP" | bc), bc-pi[:SCALE], chacha[:VARIANT], nop,
    /// mem[:MIB] (seed 002's arr[i] *= 3 over a private array per copy).
    #[arg(value_name = "WORKLOAD")]
    pub workload: Option<String>,
    /// Where the copies' memory goes (seed 003's variable): local,
    /// interleave (over every node with memory), node:N (all on node N:
    /// seed 003's "4+0"), preferred:N; a comma list runs each, and the
    /// change of each against interleave is reported.
    /// Example: --mem local,interleave,node:0
    #[arg(long, value_delimiter = ',', value_name = "PLACEMENT")]
    pub mem: Vec<String>,
    /// Or any command, after `--` (one process per copy); passed as given,
    /// bytes that are not UTF-8 included.
    #[arg(
        last = true,
        value_name = "COMMAND",
        value_parser = clap::value_parser!(std::ffi::OsString)
    )]
    pub command: Vec<std::ffi::OsString>,
    /// Rounds per copy count (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds of work per copy for in-process workloads (chacha, nop).
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Do not add the 1-copy baseline run (efficiency then is not available).
    #[arg(long)]
    pub no_baseline: bool,
    /// Per-round time limit in seconds for process workloads.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// Restrict to these CPUs (e.g. 0-3,8); copies are pinned one per CPU.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    #[command(flatten)]
    pub progress: Progress,
    #[command(flatten)]
    pub formats: OutputArgs<RateFormats>,
}

formats!(pub RateFormats { Json: "Print the results as JSON" });

pub fn run(ctx: &Context, args: &RateArgs) -> Result<i32> {
    let workload = rate::workload_from(args.workload.as_deref(), &args.command)?;
    let cpus = args.cpus.as_deref();
    let mut s = Session::open(
        ctx,
        crate::experiments::compute::rate::EXP,
        cpus,
        Profile::Standard,
        args.progress.quiet,
    )?;
    let copies = rate::copies_from(&args.copies, &s.machine, &s.cpus, !args.no_baseline)?;
    let mem = rate::mem_from(&args.mem, &s.machine)?;
    let mut p = rate::Params::chosen(
        workload,
        copies,
        args.rounds,
        args.seconds,
        args.timeout,
        mem,
    )?;
    s.measure_with(&rate::Rate, &mut p)?;
    let keys = s.command_keys();
    s.output(args.formats.json, keys, rate_text::render_rate)
}

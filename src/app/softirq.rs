//! `cpuscope softirq`: network softirqs (NET_RX/NET_TX) and softirq CPU time
//! per node and CPU over a short sample of /proc/softirqs and /proc/stat,
//! beside where the NICs and their queues sit (`cpuscope info`).

use super::args::{formats, OutputArgs, Progress};
use super::session::Session;
use super::Context;
use crate::experiments::experiment::Profile;
use crate::experiments::state::softirq;
use crate::experiments::state::softirq::view::summary as softirq_text;
use anyhow::{bail, Result};
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct SoftirqArgs {
    /// Length of the sample in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Count only these CPUs (e.g. 0-7).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    #[command(flatten)]
    pub formats: OutputArgs<SoftirqFormats>,
    #[command(flatten)]
    pub progress: Progress,
}

formats!(pub SoftirqFormats { Json: "Print JSON (the cpuscope.run/1 document) instead of text" });

pub fn run(ctx: &Context, args: &SoftirqArgs) -> Result<i32> {
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 3600.0) {
        bail!(
            "--seconds must be between 0 and 3600 (got {})",
            args.seconds
        );
    }
    let mut s = Session::open(
        ctx,
        softirq::EXP,
        args.cpus.as_deref(),
        Profile::Standard,
        args.progress.quiet || args.formats.json,
    )?;
    let mut p = softirq::Params {
        seconds: Duration::from_secs_f64(args.seconds),
    };
    s.measure_with(&softirq::Softirq, &mut p)?;
    let keys = s.command_keys();
    s.output(args.formats.json, keys, softirq_text)
}

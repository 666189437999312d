//! `cpuscope sync`: what synchronisation costs on this machine: PAUSE /
//! YIELD / ISB, atomic increments alone and contended, spin lock vs futex
//! mutex, false sharing vs padded counters.

use super::args::{formats, OutputArgs, Progress};
use super::session::Session;
use super::Context;
use crate::experiments::coherence::sync::{self, text as sync_text};
use crate::experiments::experiment::Profile;
use anyhow::Result;
use serde_json::json;

#[derive(clap::Args, Debug)]
pub struct SyncArgs {
    /// CPUs to use (default: every usable CPU), e.g. 0-7.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Time per figure: quick (~3 s in all here), standard, full.
    #[arg(long, value_enum, default_value = "quick")]
    pub profile: Profile,
    #[command(flatten)]
    pub formats: OutputArgs<SyncFormats>,
    /// Do not measure the clock (figures are then not converted to cycles).
    #[arg(long)]
    pub no_clock: bool,
    #[command(flatten)]
    pub progress: Progress,
}

formats!(pub SyncFormats { Json: "Print JSON (the result records) instead of text" });

pub fn run(ctx: &Context, args: &SyncArgs) -> Result<i32> {
    let quiet = args.progress.quiet || args.formats.json;
    let mut s = Session::open(
        ctx,
        crate::experiments::coherence::sync::EXP,
        args.cpus.as_deref(),
        args.profile,
        quiet,
    )?;
    let clock = s.clock(s.cpus.first().unwrap_or(0), args.no_clock);
    s.measure(sync::EXP)?;
    let extra = json!({
        "cpus": s.cpus.to_string(),
        "clock_ghz": s.ghz(),
        "clock": clock,
        "records": s.results(),
    });
    s.output(args.formats.json, extra, |recs| {
        format!("{}{clock}\n", sync_text::render_sync(recs))
    })
}

//! `cpuscope sync`: what synchronisation costs on this machine: PAUSE /
//! YIELD / ISB, atomic increments alone and contended, spin lock vs futex
//! mutex, false sharing vs padded counters.

use super::c2c::{choose_cpus, usable_cpus};
use super::Context;
use crate::experiments::{sync, Profile};
use crate::machine;
use crate::report::c2c_text;
use anyhow::{bail, Context as _, Result};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct SyncArgs {
    /// CPUs to use (default: every usable CPU), e.g. 0-7.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Time per figure: quick (~3 s in all here), standard, full.
    #[arg(long, value_enum, default_value = "quick")]
    pub profile: Profile,
    /// Print JSON (the result records) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Do not measure the clock (figures are then not converted to cycles).
    #[arg(long)]
    pub no_clock: bool,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(ctx: &Context, args: &SyncArgs) -> Result<i32> {
    let sys = ctx.sysroot()?;
    if !sys.is_live() {
        bail!(
            "sync measures this machine: --sysroot only applies to `info` (got '{}')",
            sys.root().display()
        );
    }
    let info = machine::discover(&sys)?;
    let usable = usable_cpus(&info)?;
    let cpus = choose_cpus(&usable, &info.cpus.pinnable(), args.cpus.as_deref())?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
    }
    let first = cpus.first().unwrap_or(0);
    let (ghz, clock_note) = if args.no_clock {
        (
            None,
            "cycles not available: clock not measured (--no-clock)".to_string(),
        )
    } else {
        match sync::measure_clock(first, &sync::policy(Profile::Quick), &stop) {
            Ok(g) => (
                Some(g),
                format!("cycles at {g:.2} GHz: single-core clock measured now on CPU {first} (dependent add chain)"),
            ),
            Err(e) => (None, format!("cycles not available: clock measurement failed ({e:#})")),
        }
    };
    let quiet = args.quiet || args.json;
    let mut step = |s: &str| {
        if !quiet {
            eprintln!("cpuscope: sync: {s}");
        }
    };
    let mut recs = Vec::new();
    let mut sink = |r: crate::results::schema::ResultRecord| -> Result<()> {
        recs.push(r);
        Ok(())
    };
    let res = sync::run_all(&info, &cpus, args.profile, ghz, &stop, &mut step, &mut sink);
    let interrupted = stop.load(Ordering::Relaxed);
    if let Err(e) = res {
        if !interrupted {
            return Err(e);
        }
    }
    if args.json {
        super::print_json(&json!({
            "schema": "cpuscope.sync/1",
            "cpus": cpus.to_string(),
            "profile": args.profile.as_str(),
            "clock_ghz": ghz,
            "clock": clock_note,
            "records": recs,
        }))?;
    } else {
        print!("{}", c2c_text::render_sync(&recs));
        println!("{clock_note}");
        if interrupted {
            println!("interrupted: the figures above are what finished");
        }
    }
    Ok(if interrupted { 130 } else { 0 })
}

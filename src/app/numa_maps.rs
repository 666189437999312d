//! `cpuscope numa-maps PID`: where a process's memory lives.

use super::args::{formats, OutputArgs};
use super::Context;
use crate::machine::process;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct NumaMapsArgs {
    /// Process id to inspect.
    pub pid: String,
    #[command(flatten)]
    pub formats: OutputArgs<NumaMapsFormats>,
}

formats!(pub NumaMapsFormats { Json: "Print JSON instead of text" });

pub fn run(ctx: &Context, args: &NumaMapsArgs) -> Result<i32> {
    let pid = process::parse_pid(&args.pid)?;
    let sys = ctx.sysroot()?;
    let p = process::read(&sys, pid)?;
    if args.formats.json {
        super::print_json(&p)?;
    } else {
        out!("{}", crate::report::numa_maps::render(&p));
    }
    Ok(0)
}

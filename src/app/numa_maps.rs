//! `cpuscope numa-maps PID`: where a process's memory lives.

use super::Context;
use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct NumaMapsArgs {
    /// Process id to inspect.
    pub pid: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_ctx: &Context, _args: &NumaMapsArgs) -> Result<i32> {
    bail!("numa-maps is not implemented yet")
}

//! `cpuscope run`: characterise this machine, store the run, print the summary.

use super::Context;
use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Profile: quick (< 60 s), standard (default), full.
    #[arg(long, default_value = "standard")]
    pub profile: String,
}

pub fn run(_ctx: &Context, _args: &RunArgs) -> Result<i32> {
    bail!("run is not implemented yet")
}

//! `cpuscope stat`: hardware and software counters for a command or process.

use super::Context;
use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct StatArgs {
    /// Command to run and count.
    #[arg(trailing_var_arg = true)]
    pub command: Vec<String>,
}

pub fn run(_ctx: &Context, _args: &StatArgs) -> Result<i32> {
    bail!("stat is not implemented yet")
}

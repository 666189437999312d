//! `cpuscope info`: what this machine is.

use super::args::{formats, OutputArgs};
use super::Context;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    pub formats: OutputArgs<InfoFormats>,
}

formats!(pub InfoFormats { Json: "Print the versioned JSON document instead of text" });

pub fn run(ctx: &Context, args: &InfoArgs) -> Result<i32> {
    let sys = ctx.sysroot()?;
    let info = crate::machine::discover(&sys)?;
    if args.formats.json {
        super::print_json(&info)?;
    } else {
        out!("{}", crate::report::info_text::render(&info));
    }
    Ok(0)
}

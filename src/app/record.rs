//! `cpuscope record FILE.tar.gz`: everything `--sysroot` reads, gathered
//! from this machine (or from the `--sysroot` given) into one gzip'd tar
//! archive with a manifest (`machine::gather`), to be read back elsewhere
//! with `cpuscope info --sysroot FILE.tar.gz` (or once unpacked, with the
//! directory).

use super::Context;
use crate::base::fmt::{fmt_bytes, for_terminal};
use crate::machine::gather;
use anyhow::{bail, Result};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// The archive to write (a gzip'd tar; `-` for standard output when it is not a terminal).
    #[arg(value_name = "FILE.tar.gz")]
    pub file: PathBuf,
}

pub fn run(ctx: &Context, args: &RecordArgs) -> Result<i32> {
    // The output is checked before anything is gathered.
    let out = ctx.output(&args.file)?;
    // SAFETY: isatty only looks at the descriptor.
    if out.is_stdout() && unsafe { libc::isatty(libc::STDOUT_FILENO) } == 1 {
        bail!("standard output is a terminal: name a file for the archive, or redirect it");
    }
    let sys = ctx.sysroot()?;
    let rec = gather::record(&sys)?;
    ctx.write_output(&out, &rec.archive)?;
    let m = &rec.manifest;
    let out_of_tree = match m.links_out() {
        0 => String::new(),
        n => format!(", of which {n} a symbolic link out of the tree, not copied"),
    };
    errln!(
        "recorded {} into {}: {} files ({}), {} links, {} directories, {} compressed; \
         {} unreadable{out_of_tree} (listed in {} inside)",
        for_terminal(&m.source),
        out.shown(),
        m.files.len(),
        fmt_bytes(m.bytes),
        m.links.len(),
        m.directories.len(),
        fmt_bytes(rec.archive.len() as u64),
        m.unreadable.len(),
        gather::MANIFEST
    );
    if let Some(why) = &m.truncated {
        errln!(
            "cpuscope: warning: the archive is incomplete: {why}; what was gathered first is kept"
        );
    }
    Ok(0)
}

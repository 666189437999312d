//! `cpuscope uarch`: the core knowledge base (data/uarch/).

use super::args::{formats, Format, OutputArgs};
use super::Context;
use crate::machine::uarch::Base;
use crate::report::uarch_text;
use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct UarchArgs {
    /// Show one entry (its id, e.g. zen5) in full.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub formats: OutputArgs<UarchFormats>,
    /// Read the entries from DIR instead of the embedded ones (checking new entries).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Check that every rule's own examples (each end of its model ranges, each part)
    /// resolve to its entry and to no other; exit 1 listing the problems.
    #[arg(long)]
    pub check: bool,
}

formats!(pub UarchFormats {
    Json: "Print JSON (`cpuscope.uarch/1`)",
    Markdown: "Print the table of docs/uarch.md",
});

pub fn run(_ctx: &Context, args: &UarchArgs) -> Result<i32> {
    let owned;
    let base: &Base = match &args.dir {
        Some(d) => {
            let mut files = Vec::new();
            let rd = std::fs::read_dir(d).map_err(|e| anyhow!("'{}': {e}", d.display()))?;
            for e in rd.filter_map(|e| e.ok()) {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.ends_with(".toml") {
                    // A FIFO or device named *.toml is refused, never opened
                    // to block; the knowledge base is UTF-8 (TOML), strictly.
                    let text = crate::base::files::read_file_bytes(&e.path())
                        .map_err(|err| err.to_string())
                        .and_then(|b| {
                            String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string())
                        })
                        .map_err(|err| anyhow!("'{}': {err}", e.path().display()))?;
                    files.push((name, text));
                }
            }
            files.sort();
            let refs: Vec<(&str, &str)> = files
                .iter()
                .map(|(n, t)| (n.as_str(), t.as_str()))
                .collect();
            owned = Base::parse(&refs).map_err(|e| anyhow!("knowledge base: {e}"))?;
            &owned
        }
        None => Base::embedded_checked().map_err(|e| anyhow!("knowledge base: {e}"))?,
    };
    if args.check {
        let problems = base.self_check();
        for p in &problems {
            outln!("{p}");
        }
        outln!(
            "uarch check: {} entries, {} sources, {} problem(s)",
            base.entries.len(),
            base.sources.len(),
            problems.len()
        );
        return Ok(if problems.is_empty() { 0 } else { 1 });
    }
    if let Some(id) = &args.id {
        let Some((_, core, variants)) = base.cores().into_iter().find(|(e, _, _)| &e.id == id)
        else {
            bail!("no entry '{id}' in the knowledge base (`cpuscope uarch` lists them)");
        };
        if args.formats.json {
            super::print_json(
                &serde_json::json!({"schema": uarch_text::SCHEMA, "core": core, "variants": variants}),
            )?;
        } else {
            out!("{}", uarch_text::render_one(base, id, &core, &variants));
        }
        return Ok(0);
    }
    match args.formats.chosen() {
        Format::Json => super::print_json(&uarch_text::json(base))?,
        Format::Markdown => out!("{}", uarch_text::markdown(base)),
        _ => out!("{}", uarch_text::render(base)),
    }
    Ok(0)
}

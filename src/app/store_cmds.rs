//! `cpuscope runs|show|export|import|delete`: the stored runs.

use super::args::{formats, Format, OutputArgs};
use super::Context;
use crate::report::run_text;
use crate::results::document::{export_text, read_run_file_capped};
use crate::results::{open_store, open_store_read, NoStore, Run};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunsArgs {
    #[command(flatten)]
    pub formats: OutputArgs<RunsFormats>,
    /// Only the runs of this host (exact name; repeatable).
    #[arg(long = "host", value_name = "NAME")]
    pub hosts: Vec<String>,
}

formats!(pub RunsFormats { Json: "Print JSON (`{\"store\": ..., \"runs\": [...]}`) instead of a table" });

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// Run id, a unique prefix of one, or `latest` (the run stored last).
    #[arg(value_name = "RUN")]
    pub run: String,
    #[command(flatten)]
    pub formats: OutputArgs<ShowFormats>,
    /// Every figure with its spread, method and notes (the full text).
    #[arg(long, conflicts_with_all = ["json", "summary", "markdown", "csv"])]
    pub all: bool,
    /// One section per experiment with its headline figures, what is not available, the advice.
    #[arg(long, conflicts_with = "json")]
    pub summary: bool,
}

formats!(pub ShowFormats {
    Json: "Print the run document (as `export` does) instead of text",
    Markdown: "Print the summary (as --summary) as Markdown: its tables as pipe tables, for an article or a ticket",
    Csv: "Print the summary's tables as long-form CSV, one line per cell (section,table,row,column,text,value,unit,mark,na_reason)",
});

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Run id, a unique prefix of one, or `latest` (the run stored last).
    #[arg(value_name = "RUN")]
    pub run: String,
    /// Write the document to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// What to write: the run document (`json`, cpuscope.run/1) or every
    /// figure as an OpenMetrics gauge (`openmetrics`, for node_exporter's
    /// textfile collector; docs/openmetrics.md).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
}

/// `export --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The run document (cpuscope.run/1), which `import` reads back.
    Json,
    /// OpenMetrics text exposition: one gauge sample per figure.
    Openmetrics,
}

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// Run documents written by `cpuscope export` (`-` reads standard input).
    /// All are checked before any is stored; if one is bad, none is stored.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// The largest document read, in bytes (`K`, `M`, `G` suffixes: powers
    /// of 1024); a longer one, or one with more JSON values than one per
    /// 32 bytes of it, is refused as it is read.
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = parse_max_size)]
    pub max_size: u64,
}

/// An `import --max-size` value: 1K to 1024G.
fn parse_max_size(s: &str) -> Result<u64, String> {
    crate::machine::cache::parse_size(s)
        .filter(|n| (1 << 10..=1 << 40).contains(n))
        .ok_or_else(|| {
            format!(
                "'{}': give a size from 1K to 1024G (a number of bytes, or with K, M or G)",
                crate::base::fmt::quote_short(s, 40)
            )
        })
}

#[derive(clap::Args, Debug)]
pub struct DeleteArgs {
    /// Run id, a unique prefix of one, or `latest` (the run stored last).
    #[arg(value_name = "RUN")]
    pub run: String,
    /// Also delete a run whose writer cannot be checked from here (`runs`
    /// shows it `running (writer unchecked)`: stored without a writer lock
    /// by an older cpuscope under another host name). Never deletes a run
    /// whose writer is seen writing.
    #[arg(long)]
    pub force: bool,
}

/// `cpuscope runs`
pub fn runs(ctx: &Context, args: &RunsArgs) -> Result<i32> {
    // Nothing stored yet: no runs (and a note), and no store made.
    let (location, runs) = match open_store_read(ctx.store.as_deref()) {
        Ok(store) if !args.hosts.is_empty() => (store.location(), store.list_runs_of(&args.hosts)?),
        Ok(store) => (store.location(), store.list_runs()?),
        Err(e) => match e.downcast_ref::<NoStore>() {
            Some(none) => {
                crate::results::store::note(&none.to_string());
                (none.shown.clone(), Vec::new())
            }
            None => return Err(e),
        },
    };
    if args.formats.json {
        #[derive(serde::Serialize)]
        struct RunsDoc<'a> {
            store: String,
            runs: &'a [crate::results::RunSummary],
        }
        super::print_json(&RunsDoc {
            store: location,
            runs: &runs,
        })?;
    } else if runs.is_empty() && !args.hosts.is_empty() {
        let hosts: Vec<String> = args
            .hosts
            .iter()
            .map(|h| crate::base::fmt::for_terminal(h).into_owned())
            .collect();
        outln!(
            "no run of host {} in store '{}'",
            hosts.join(", "),
            crate::base::fmt::for_terminal(&location)
        );
    } else {
        out!("{}", run_text::render_runs(&runs, &location));
        let store = ctx.store.as_ref().map(|_| location.as_str());
        for r in &runs {
            if let Some(hint) = writer_hint(r, store) {
                outln!("{hint}");
            }
        }
    }
    Ok(0)
}

/// The line under the `runs` table for a run left `running` whose writer
/// is gone (abandoned) or cannot be checked, with the commands that settle
/// it; `store`: the `--store` given (as shown), if any.
fn writer_hint(r: &crate::results::RunSummary, store: Option<&str>) -> Option<String> {
    use crate::results::store::WriterState;
    let me = match store {
        Some(s) => format!("cpuscope --store {}", shell_word(s)),
        None => "cpuscope".to_string(),
    };
    let id = crate::base::fmt::for_terminal(&r.id);
    match r.writer? {
        WriterState::Writing => None,
        WriterState::Gone => Some(format!(
            "run {id} is abandoned: its writer is gone; `{me} export {id} -o FILE` keeps it \
             (as partial), `{me} delete {id}` removes it"
        )),
        WriterState::Unknown => Some(format!(
            "run {id}: whether its writer still writes cannot be checked from here \
             (`{me} delete {id}` says why); if it has ended, `{me} delete --force {id}` \
             removes the run"
        )),
    }
}

/// `s` as one shell word: as it is when it holds only safe characters,
/// else in single quotes; control characters shown escaped.
fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._:@%+=,-".contains(c);
    let s = crate::base::fmt::for_terminal(s);
    if !s.is_empty() && s.chars().all(safe) {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `cpuscope show RUN`
pub fn show(ctx: &Context, args: &ShowArgs) -> Result<i32> {
    let store = open_store_read(ctx.store.as_deref())?;
    let run = store.get_run(&args.run)?;
    use crate::report::summary;
    let text = match args.formats.chosen() {
        Format::Json => return super::print_json(&run).map(|()| 0),
        Format::Markdown => summary::markdown(&run),
        Format::Csv => crate::view::csv::sections(&summary::view(&run)),
        Format::Text if args.all => run_text::render_run(&run),
        Format::Text if args.summary => summary::render(&run),
        Format::Text => {
            let style = crate::report::verdict::Style::for_stdout();
            crate::report::verdict::render(&run, None, &style)
        }
    };
    out!("{text}");
    Ok(0)
}

/// `cpuscope export RUN [-o FILE] [--format json|openmetrics]`
pub fn export(ctx: &Context, args: &ExportArgs) -> Result<i32> {
    let out = match &args.output {
        Some(p) => ctx.output(p)?,
        None => crate::base::output::Output::Stdout,
    };
    let store = open_store_read(ctx.store.as_deref())?;
    let run = store.get_run(&args.run)?;
    let (text, how) = match args.format {
        ExportFormat::Json => (export_text(&run)?, ""),
        ExportFormat::Openmetrics => (
            crate::report::openmetrics::render(std::slice::from_ref(&run)),
            " as OpenMetrics",
        ),
    };
    ctx.write_output(&out, text.as_bytes())?;
    if !out.is_stdout() {
        errln!(
            "exported run {} ({} results){how} to {}",
            run.id,
            run.results.len(),
            out.shown()
        );
    }
    Ok(0)
}

/// `cpuscope import FILE...`: check every file, then store all runs in one
/// transaction. A bad file changes nothing.
pub fn import(ctx: &Context, args: &ImportArgs) -> Result<i32> {
    // Ctrl-C ends a read that waits on a FIFO or standard input.
    crate::base::stop::install()?;
    // Check the files before touching the store at all.
    let mut runs: Vec<(String, Run)> = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for f in &args.files {
        let shown = f.display().to_string();
        let run = read_run_file_capped(f, args.max_size)?;
        if let Some(other) = seen.insert(run.id.clone(), shown.clone()) {
            bail!("'{shown}': run {} is also in '{other}'", run.id);
        }
        runs.push((shown, run));
    }
    let mut store = open_store(ctx.store.as_deref())?;
    // One look-up per run (an index), not a listing of the whole store:
    // imports into a fleet's store of 30,000 runs stay as fast as the first.
    for (shown, run) in &runs {
        if store.has_run(&run.id)? {
            bail!(
                "'{shown}': run {} is already in store '{}'; nothing imported",
                run.id,
                store.location()
            );
        }
    }
    let (shown, all): (Vec<String>, Vec<Run>) = runs.into_iter().unzip();
    store.put_runs(&all)?;
    for (shown, run) in shown.iter().zip(&all) {
        outln!(
            "imported run {} ({} results) from {}",
            run.id,
            run.results.len(),
            crate::base::fmt::for_terminal(shown)
        );
    }
    Ok(0)
}

/// `cpuscope delete RUN`
pub fn delete(ctx: &Context, args: &DeleteArgs) -> Result<i32> {
    let mut store = open_store(ctx.store.as_deref())?;
    let id = store.delete_run_with(&args.run, args.force)?;
    outln!("deleted run {id}");
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_size_takes_units_and_its_default_is_the_documents_cap() {
        assert_eq!(
            parse_max_size("64M"),
            Ok(crate::results::document::MAX_DOCUMENT_BYTES)
        );
        assert_eq!(parse_max_size("1K"), Ok(1024));
        assert_eq!(parse_max_size("2G"), Ok(2 << 30));
        for bad in ["", "0", "1023", "lots", "2000G", "-1"] {
            assert!(parse_max_size(bad).is_err(), "{bad}");
        }
    }
}

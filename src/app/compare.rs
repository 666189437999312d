//! `cpuscope compare` (runs side by side, from one store or many machines'
//! exported documents) and `cpuscope published` (the reference figures of
//! the seed articles, embedded in the binary).

use super::args::{formats, Format, OutputArgs};
use super::run_filter::RunFilter;
use super::Context;
use crate::report::compare;
use crate::report::published_text;
use crate::results::document::{select_runs, Loader};
use crate::results::published::{self, PublishedSet};
use crate::results::schema::Run;
use anyhow::{bail, Result};
use std::collections::BTreeSet;

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Runs: ids, unique prefixes, `latest`, or run documents written by `cpuscope export` (FILE.json).
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
    /// The run the others are set against (default: the first). Added if not among RUNs.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,
    /// Add the stored runs these pick (the latest of each host and tag unless --every).
    #[command(flatten)]
    pub filter: RunFilter,
    /// With --host/--cpu/--tag: keep every matching run, not only the latest of each host (and tag).
    #[arg(long)]
    pub every: bool,
    /// Show the published reference figures (seed articles) for the same workloads.
    #[arg(long)]
    pub published: bool,
    #[command(flatten)]
    pub formats: OutputArgs<CompareFormats>,
}

formats!(pub CompareFormats {
    Json: "Print the comparison as JSON (cpuscope.compare/1)",
    Csv: "Print CSV: one line per result and run",
    Markdown: "Print Markdown tables",
    Html: "Also write the comparison page (one offline HTML file with charts) to FILE",
});

#[derive(clap::Args, Debug)]
pub struct PublishedArgs {
    /// Show only this set (see the list for ids).
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub formats: OutputArgs<PublishedFormats>,
}

formats!(pub PublishedFormats { Json: "Print the sets as JSON (cpuscope.published/1 documents)" });

/// `cpuscope compare RUN… [--baseline RUN] [--host H] [--cpu M] [--tag T]`
pub fn run(ctx: &Context, args: &CompareArgs) -> Result<i32> {
    let html = args.formats.html().map(|p| ctx.output(p)).transpose()?;
    let mut loader = Loader::new(ctx.store.clone());
    let mut runs: Vec<Run> = Vec::new();
    let mut ids = BTreeSet::new();
    for w in &args.runs {
        let r = loader.load(w)?;
        if !ids.insert(r.id.clone()) {
            bail!("run {} is given twice", r.id);
        }
        runs.push(r);
    }
    if !args.filter.is_empty() {
        let f = &args.filter;
        let all = if f.host.is_empty() {
            loader.store()?.list_runs()?
        } else {
            loader.store()?.list_runs_of(&f.host)?
        };
        let picked = select_runs(&all, &f.host, &f.cpu, &f.tag, args.every);
        if picked.is_empty() {
            bail!(
                "no finished run in store '{}' matches {}",
                loader.store()?.location(),
                f.describe().join(" ")
            );
        }
        for s in picked {
            if ids.insert(s.id.clone()) {
                runs.push(loader.store()?.get_run(&s.id)?);
            }
        }
    }
    let mut baseline = 0;
    if let Some(b) = &args.baseline {
        let r = loader.load(b)?;
        match runs.iter().position(|x| x.id == r.id) {
            Some(i) => baseline = i,
            None => runs.insert(0, r),
        }
    }
    if runs.is_empty() {
        bail!("nothing to compare: give RUN arguments, or pick stored runs with --host, --cpu or --tag");
    }
    if runs.len() < 2 && !args.published {
        bail!(
            "compare needs at least two runs (got 1: {}); add RUNs or --host/--cpu/--tag, or use --published to set one run against published figures",
            runs[0].id
        );
    }
    let cmp = compare::compare(&runs, baseline, args.published)?;
    if let Some(out) = &html {
        let page = compare::html::render(&cmp, &runs);
        ctx.write_output(out, page.as_bytes())
            .map_err(|e| anyhow::anyhow!("the comparison page was not written: {e:#}"))?;
    }
    match args.formats.chosen() {
        Format::Json => super::print_json(&cmp)?,
        Format::Csv => out!("{}", compare::csv::render(&cmp)),
        Format::Markdown => out!("{}", compare::markdown::render(&cmp)),
        Format::Text => out!("{}", compare::text::render(&cmp)),
    }
    if let Some(out) = &html {
        errln!("comparison page: {}", out.shown());
    }
    Ok(0)
}

/// `cpuscope published [ID] [--json]`
pub fn published(_ctx: &Context, args: &PublishedArgs) -> Result<i32> {
    let sets: Vec<&PublishedSet> = match &args.id {
        Some(id) => vec![published::by_id(id)?],
        None => published::all()?.iter().collect(),
    };
    if args.formats.json {
        super::print_json(&sets)?;
    } else {
        out!("{}", published_text::render(&sets));
    }
    Ok(0)
}

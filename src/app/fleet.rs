//! `cpuscope fleet`: the latest run of each host in a store, read as a
//! fleet (report/fleet/: groups, distributions, outliers with evidence,
//! environment differences).

use super::args::{formats, OutputArgs};
use super::run_filter::RunFilter;
use super::Context;
use crate::base::output::Output;
use crate::report::fleet::{self, Rule, Selection};
use crate::results::document::{latest_per_host, parse_since, Loader};
use crate::results::Run;
use anyhow::{bail, Result};
use chrono::SecondsFormat;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct FleetArgs {
    /// Only the runs these pick.
    #[command(flatten)]
    pub filter: RunFilter,
    /// Only runs started since then: an RFC 3339 time, a date (YYYY-MM-DD) or an age (12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Robust standard deviations from the peers' median before a host stands out.
    #[arg(long, value_name = "Z", default_value_t = 3.5)]
    pub threshold: f64,
    /// Smallest difference from the peers' median that counts, in %.
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub min_diff: f64,
    /// What to print: the fleet view as text (the default) or JSON, or every
    /// figure of each host's latest run as an OpenMetrics gauge
    /// (`openmetrics`, for node_exporter's textfile collector; docs/openmetrics.md).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<FleetFormat>,
    /// Write what is printed to FILE instead of standard output (replaced
    /// atomically, as a textfile collector wants).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub formats: OutputArgs<FleetFormats>,
}

formats!(pub FleetFormats {
    Json: "Print the fleet view as JSON (cpuscope.fleet/1); the same as `--format json`",
    Html: "Also write the fleet page (one offline HTML file with strip plots) to FILE",
});

/// `fleet --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FleetFormat {
    /// The fleet view as text.
    Text,
    /// The fleet view as JSON (cpuscope.fleet/1).
    Json,
    /// OpenMetrics text exposition: each host's latest run, one gauge sample per figure.
    Openmetrics,
}

/// `cpuscope fleet [--host H] [--cpu M] [--tag T] [--since WHEN] [--format F] [-o FILE]`
pub fn run(ctx: &Context, args: &FleetArgs) -> Result<i32> {
    let rule = Rule {
        threshold: args.threshold,
        min_diff_pct: args.min_diff,
        ..Rule::default()
    };
    rule.check()?;
    let html = args.formats.html().map(|p| ctx.output(p)).transpose()?;
    let out = match &args.output {
        Some(p) => ctx.output(p)?,
        None => Output::Stdout,
    };
    let format = match (args.formats.json, args.format) {
        (true, _) => FleetFormat::Json,
        (false, f) => f.unwrap_or(FleetFormat::Text),
    };
    let (runs, selection) = latest_runs(ctx, args)?;
    let view = match (format, &html) {
        (FleetFormat::Openmetrics, None) => None,
        _ => Some(fleet::fleet(&runs, selection, rule)?),
    };
    if let (Some(page), Some(view)) = (&html, &view) {
        ctx.write_output(page, fleet::html::render(view).as_bytes())
            .map_err(|e| anyhow::anyhow!("the fleet page was not written: {e:#}"))?;
    }
    // The view is there for text and JSON (built above).
    let text = match view.as_ref().filter(|_| format != FleetFormat::Openmetrics) {
        None => crate::report::openmetrics::render(&runs),
        Some(view) if format == FleetFormat::Json => {
            format!("{}\n", serde_json::to_string_pretty(view)?)
        }
        Some(view) => fleet::text::render(view),
    };
    if out.is_stdout() {
        out!("{text}");
    } else {
        ctx.write_output(&out, text.as_bytes())?;
    }
    if let Some(page) = &html {
        errln!("fleet page: {}", page.shown());
    }
    if !out.is_stdout() {
        errln!("fleet ({} hosts): {}", runs.len(), out.shown());
    }
    Ok(0)
}

/// The latest run of each host that the filter and `--since` pick, read
/// whole, and how they were chosen.
fn latest_runs(ctx: &Context, args: &FleetArgs) -> Result<(Vec<Run>, Selection)> {
    let since = match &args.since {
        Some(s) => Some(parse_since(s, chrono::Utc::now())?),
        None => None,
    };
    let mut loader = Loader::new(ctx.store.clone());
    let store = loader.store()?;
    let f = &args.filter;
    // With --host, only those hosts' rows are read (an index: issue 38).
    let all = if f.host.is_empty() {
        store.list_runs()?
    } else {
        store.list_runs_of(&f.host)?
    };
    let (picked, older) = latest_per_host(&all, &f.host, &f.cpu, &f.tag, since);
    if picked.is_empty() {
        let mut what = f.describe();
        if let Some(s) = &args.since {
            what.push(format!("--since {s}"));
        }
        if what.is_empty() {
            bail!("no finished run in store '{}'", store.location());
        }
        bail!(
            "no finished run in store '{}' matches {}",
            store.location(),
            what.join(" ")
        );
    }
    let mut runs = Vec::new();
    for s in &picked {
        runs.push(store.get_run(&s.id)?);
    }
    let selection = Selection {
        store: store.location(),
        host: f.host.clone(),
        cpu: f.cpu.clone(),
        tag: f.tag.clone(),
        since: since.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true)),
        older_runs_left_out: older,
    };
    Ok((runs, selection))
}

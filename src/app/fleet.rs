//! `cpuscope fleet`: the latest run of each host in a store, read as a
//! fleet (report/fleet/: groups, distributions, outliers with evidence,
//! environment differences).

use super::run_filter::RunFilter;
use super::Context;
use crate::report::fleet::{self, Rule, Selection};
use crate::results::document::{latest_per_host, parse_since, Loader};
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
    /// Print the fleet view as JSON (cpuscope.fleet/1).
    #[arg(long)]
    pub json: bool,
    /// Also write the fleet page (one offline HTML file with strip plots) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `cpuscope fleet [--host H] [--cpu M] [--tag T] [--since WHEN]`
pub fn run(ctx: &Context, args: &FleetArgs) -> Result<i32> {
    let rule = Rule {
        threshold: args.threshold,
        min_diff_pct: args.min_diff,
        ..Rule::default()
    };
    rule.check()?;
    let html = args.html.as_deref().map(|p| ctx.output(p)).transpose()?;
    let since = match &args.since {
        Some(s) => Some(parse_since(s, chrono::Utc::now())?),
        None => None,
    };
    let mut loader = Loader::new(ctx.store.clone());
    let store = loader.store()?;
    let all = store.list_runs()?;
    let f = &args.filter;
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
    let view = fleet::fleet(&runs, selection, rule)?;
    if let Some(out) = &html {
        ctx.write_output(out, fleet::html::render(&view).as_bytes())
            .map_err(|e| anyhow::anyhow!("the fleet page was not written: {e:#}"))?;
    }
    if args.json {
        super::print_json(&view)?;
    } else {
        out!("{}", fleet::text::render(&view));
    }
    if let Some(out) = &html {
        errln!("fleet page: {}", out.shown());
    }
    Ok(0)
}

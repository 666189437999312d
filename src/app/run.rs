//! `cpuscope run`: characterise this machine, store the run, print the
//! summary, write the HTML report.

use super::session::Session;
use super::Context;
use crate::experiments::{self, Profile};
use crate::results::store::open_store;
use anyhow::{Context as _, Result};
use serde_json::json;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// How long to spend: quick (< 60 s on 2 cores), standard, full.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Only these experiments (comma list; see `cpuscope run --list`).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Skip these experiments (comma list).
    #[arg(long, value_delimiter = ',')]
    pub skip: Vec<String>,
    /// Restrict to these CPUs (e.g. 0-3,8); must be usable by this process.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Tag the stored run (repeatable), e.g. --tag baseline.
    #[arg(long)]
    pub tag: Vec<String>,
    /// The host name recorded in the run (default: this machine's host name), e.g. an
    /// inventory name, or one of several labels when one machine stands for several hosts.
    #[arg(long, value_name = "NAME")]
    pub host_label: Option<String>,
    /// List the experiments and their estimated time, then exit.
    #[arg(long)]
    pub list: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the run document as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Where to write the HTML report (default: next to the store, reports/RUN.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Do not write the HTML report.
    #[arg(long)]
    pub no_html: bool,
}

pub fn run(ctx: &Context, args: &RunArgs) -> Result<i32> {
    let mut s = Session::open(ctx, "run", args.cpus.as_deref(), args.profile, args.quiet)?;
    let selected = experiments::select(&args.only, &args.skip)?;
    let estimates: Vec<f64> = selected
        .iter()
        .map(|e| e.estimate_secs(&s.machine, &s.cpus, args.profile))
        .collect();
    let total: f64 = estimates.iter().sum();
    if args.list {
        for (e, secs) in selected.iter().zip(&estimates) {
            println!("{:<14} ~{:>5.1} s  {}", e.name(), secs, e.title());
        }
        println!(
            "{:<14} ~{:>5.1} s  (profile {})",
            "total",
            total,
            args.profile.as_str()
        );
        return Ok(0);
    }

    s.set_option("only", json!(args.only));
    s.set_option("skip", json!(args.skip));
    s.set_tags(args.tag.clone());
    if let Some(label) = &args.host_label {
        s.set_host(label)?;
    }
    s.store_in(open_store(ctx.store.as_deref())?)?;

    let sentinel_cpu = s.cpus.first();
    let clock_start =
        sentinel_cpu.and_then(|c| experiments::frequency::sentinel_ghz(c, s.stop_flag()));
    s.show_bar(total);
    let mut failed: Vec<String> = Vec::new();
    for (e, est) in selected.iter().zip(&estimates) {
        if s.stopped() {
            break;
        }
        s.step(e.name(), &format!("starting (estimated {est:.0} s)"));
        if let Err(err) = s.measure(e.name(), None) {
            let msg = format!("{}: {err:#}", e.name()).replace('\n', " ");
            s.note(format!("experiment failed: {msg}"));
            failed.push(msg);
        }
        s.advance(*est);
    }
    if !s.stopped() {
        if let (Some(cpu), Some(a)) = (sentinel_cpu, clock_start) {
            if let Some(b) = experiments::frequency::sentinel_ghz(cpu, s.stop_flag()) {
                s.note(experiments::frequency::sentinel_note(cpu, a, b));
            }
        }
    }
    let done = s.finish()?;
    let run = &done.run;
    let store = done
        .store
        .as_ref()
        .map(|st| st.location())
        .unwrap_or_default();

    let html_path = if args.no_html {
        None
    } else {
        let p = match &args.html {
            Some(p) => p.clone(),
            None => report_dir(ctx)?.join(format!("{}.html", run.id)),
        };
        if let Some(dir) = p.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create '{}'", dir.display()))?;
            }
        }
        std::fs::write(&p, crate::report::html::render_run(run))
            .with_context(|| format!("cannot write the HTML report '{}'", p.display()))?;
        Some(p)
    };

    if args.json {
        super::print_json(run)?;
    } else {
        let html = html_path.as_ref().map(|p| p.display().to_string());
        let style = crate::report::verdict::Style::for_stdout();
        print!(
            "{}",
            crate::report::verdict::render(run, html.as_deref(), &style)
        );
        println!("stored as {} in {store}", run.id);
        for f in &failed {
            println!("failed: {f}");
        }
    }
    Ok(done.exit_code())
}

/// Reports go in a `reports/` folder beside the SQLite store.
pub(super) fn report_dir(ctx: &Context) -> Result<PathBuf> {
    let db = match ctx.store.as_deref() {
        Some(s) if !crate::results::postgres::is_postgres_url(s) => {
            crate::results::store::store_path_of(s)?
        }
        _ => crate::results::store::default_store_path()?,
    };
    Ok(db
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| PathBuf::from("."))
        .join("reports"))
}

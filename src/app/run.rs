//! `cpuscope run`: characterise this machine, store the run, print the
//! summary, write the HTML report.

use super::args::{formats, OutputArgs, Progress};
use super::session::{Finished, Session};
use super::Context;
use crate::base::output::Output;
use crate::experiments;
use crate::experiments::experiment::{Experiment, Profile};
use anyhow::Result;
use serde_json::json;
use std::path::{Path, PathBuf};

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
    /// Tag the stored run (repeatable), e.g. --tag baseline: printable text,
    /// 1 to 64 characters, each tag once.
    #[arg(long, value_parser = crate::base::fmt::TagParser)]
    pub tag: Vec<String>,
    /// The host name recorded in the run (default: this machine's host name), e.g. an
    /// inventory name, or one of several labels when one machine stands for several hosts.
    #[arg(long, value_name = "NAME")]
    pub host_label: Option<String>,
    /// List the experiments and their estimated time, then exit (with --sysroot: the plan of a
    /// recorded machine).
    #[arg(long)]
    pub list: bool,
    #[command(flatten)]
    pub progress: Progress,
    #[command(flatten)]
    pub formats: OutputArgs<RunFormats>,
    /// Where to write the HTML report (default: next to the store, reports/RUN.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Do not write the HTML report.
    #[arg(long, conflicts_with = "html")]
    pub no_html: bool,
}

formats!(pub RunFormats { Json: "Print the run document as JSON instead of the summary" });

pub fn run(ctx: &Context, args: &RunArgs) -> Result<i32> {
    let selected = experiments::registry::select(&args.only, &args.skip)?;
    // Every path written is checked before anything is measured.
    let html = if args.list {
        HtmlReport::None
    } else {
        HtmlReport::plan(ctx, args.html.as_deref(), args.no_html)?
    };
    if args.list {
        return list_plan(ctx, args, &selected);
    }
    let mut s = Session::open(
        ctx,
        "run",
        args.cpus.as_deref(),
        args.profile,
        args.progress.quiet,
    )?;
    let estimates: Vec<f64> = selected
        .iter()
        .map(|e| e.estimate_secs(&s.machine, &s.cpus, args.profile))
        .collect();
    let total: f64 = estimates.iter().sum();

    label_and_store(&mut s, ctx, args)?;

    let sentinel_cpu = s.cpus.first();
    let clock_start =
        sentinel_cpu.and_then(|c| experiments::state::frequency::sentinel_ghz(c, s.stop_flag()));
    s.show_bar(total);
    let mut failed: Vec<String> = Vec::new();
    for (e, est) in selected.iter().zip(&estimates) {
        if s.stopped() {
            break;
        }
        s.step(e.name(), &format!("starting (estimated {est:.0} s)"));
        let t0 = std::time::Instant::now();
        if let Err(err) = s.measure(e.name()) {
            let msg = format!("{}: {err:#}", e.name()).replace('\n', " ");
            s.note(format!("experiment failed: {msg}"));
            failed.push(msg);
        }
        s.timed(e.name(), *est, t0.elapsed().as_secs_f64());
        s.advance(*est);
    }
    if !s.stopped() {
        if let (Some(cpu), Some(a)) = (sentinel_cpu, clock_start) {
            if let Some(b) = experiments::state::frequency::sentinel_ghz(cpu, s.stop_flag()) {
                s.note(experiments::state::frequency::sentinel_note(cpu, a, b));
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

    // A report that cannot be written is an error, after the figures.
    let html_written = write_html(ctx, &html, run, done.store.is_some());
    let html_path = html_written.as_ref().ok().cloned().flatten();

    let printed = print_outcome(args, &done, html_path.as_deref(), &store, &failed);
    done.report_lost();
    if let Err(e) = printed {
        if e.is::<crate::base::output::ClosedPipe>() || done.lost.is_some() {
            return Err(e);
        }
        anyhow::bail!("run {} is stored in {store}, but {e:#}", run.id);
    }
    html_written?;
    Ok(done.exit_code())
}

/// `--list`: the plan of this machine, or of a recorded one (`--sysroot
/// DIR|FILE.tar.gz`), by the estimates `run` itself uses; nothing measured.
fn list_plan(ctx: &Context, args: &RunArgs, selected: &[&dyn Experiment]) -> Result<i32> {
    let sys = ctx.sysroot()?;
    let machine = crate::machine::discover(&sys)?;
    if !sys.is_live() && machine.cpus.usable.is_empty() && machine.cpus.online.is_empty() {
        anyhow::bail!(
            "the machine recorded at '{}' lists no online CPU: no plan to make",
            crate::base::fmt::for_terminal(&ctx.sysroot.display().to_string())
        );
    }
    let cpus = super::session::choose_cpus(&machine, args.cpus.as_deref())?;
    let estimates: Vec<f64> = selected
        .iter()
        .map(|e| e.estimate_secs(&machine, &cpus, args.profile))
        .collect();
    let total: f64 = estimates.iter().sum();
    if !sys.is_live() {
        outln!(
            "plan for the machine recorded at {}: {} CPUs ({cpus}), {} NUMA node(s)",
            crate::base::fmt::for_terminal(&ctx.sysroot.display().to_string()),
            cpus.len(),
            machine.numa_nodes.len()
        );
    }
    print_list(selected, &estimates, total, args.profile)?;
    Ok(0)
}

/// `--list`: each experiment selected with its estimated time, and the total.
fn print_list(
    selected: &[&dyn Experiment],
    estimates: &[f64],
    total: f64,
    profile: Profile,
) -> Result<()> {
    for (e, secs) in selected.iter().zip(estimates) {
        outln!("{:<14} ~{:>5.1} s  {}", e.name(), secs, e.title());
    }
    outln!(
        "{:<14} ~{:>5.1} s  (profile {})",
        "total",
        total,
        profile.as_str()
    );
    Ok(())
}

/// The run's options, tags and host label, and the store it goes to.
fn label_and_store(s: &mut Session, ctx: &Context, args: &RunArgs) -> Result<()> {
    s.set_option("only", json!(args.only));
    s.set_option("skip", json!(args.skip));
    s.set_tags(args.tag.clone())?;
    if let Some(label) = &args.host_label {
        s.set_host(label)?;
    }
    s.store_in(ctx)
}

/// The finished run on stdout: the JSON document, or the verdict, where it
/// is stored and the experiments that failed.
fn print_outcome(
    args: &RunArgs,
    done: &Finished,
    html_path: Option<&Path>,
    store: &str,
    failed: &[String],
) -> Result<()> {
    let run = &done.run;
    if args.formats.json {
        super::print_json(run)?;
    } else {
        let html = html_path.map(|p| p.display().to_string());
        let style = crate::report::verdict::Style::for_stdout();
        out!(
            "{}",
            crate::report::verdict::render(run, html.as_deref(), &style)
        );
        if done.lost.is_none() {
            outln!(
                "stored as {} in {}",
                run.id,
                crate::base::fmt::for_terminal(store)
            );
        }
        for f in failed {
            outln!("failed: {f}");
        }
    }
    Ok(())
}

/// Where the HTML report of `run` or `tune` goes, decided before measuring.
pub(super) enum HtmlReport {
    None,
    /// `--html FILE`, checked.
    Named(Output),
    /// The default: `reports/RUN.html` beside the store, in this directory
    /// (created, as cpuscope's own).
    Default(PathBuf),
}

impl HtmlReport {
    /// Check `--html` (or the default report directory) before measuring.
    pub(super) fn plan(ctx: &Context, named: Option<&Path>, off: bool) -> Result<HtmlReport> {
        if off {
            return Ok(HtmlReport::None);
        }
        if let Some(p) = named {
            return Ok(HtmlReport::Named(ctx.output(p)?));
        }
        let dir = report_dir(ctx)?;
        std::fs::create_dir_all(&dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the report directory '{}': {} (give --html FILE or --no-html)",
                dir.display(),
                crate::base::output::io_text(&e)
            )
        })?;
        // The file itself is checked when its name (the run id) is known.
        ctx.output(&dir.join("check.html")).map_err(|e| {
            anyhow::anyhow!("{e:#} (the report directory; give --html FILE or --no-html)")
        })?;
        Ok(HtmlReport::Default(dir))
    }
}

/// Write the HTML report of a finished `run` (after the run is stored:
/// a failure says the run is safe).
pub(super) fn write_html(
    ctx: &Context,
    plan: &HtmlReport,
    run: &crate::results::Run,
    stored: bool,
) -> Result<Option<PathBuf>> {
    let out = match plan {
        HtmlReport::None => return Ok(None),
        HtmlReport::Named(o) => o.clone(),
        HtmlReport::Default(dir) => ctx.output(&dir.join(format!("{}.html", run.id)))?,
    };
    let page = crate::report::html::render_run(run);
    ctx.write_output(&out, page.as_bytes()).map_err(|e| {
        if stored {
            anyhow::anyhow!(
                "run {} is stored, but its HTML report was not written: {e:#}",
                run.id
            )
        } else {
            anyhow::anyhow!("the HTML report was not written: {e:#}")
        }
    })?;
    Ok(match out {
        crate::base::output::Output::Stdout => None,
        crate::base::output::Output::Fifo(p) | crate::base::output::Output::File(p) => Some(p),
    })
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

//! `cpuscope run`: characterise this machine, store the run, print the
//! summary, write the HTML report.

use super::Context;
use crate::experiments::{self, ExpCtx, Facts, Profile};
use crate::machine;
use crate::placement::CpuSet;
use crate::results::schema::{now_rfc3339, Environment, Run, RunStatus};
use crate::results::store::open_store;
use anyhow::{bail, Context as _, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Progress display: a bar on a terminal, plain lines when piped, nothing when quiet.
enum Progress {
    Bar(ProgressBar),
    Lines,
    Quiet,
}

impl Progress {
    fn new(quiet: bool, total_secs: f64) -> Progress {
        if quiet {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            let pb = ProgressBar::new((total_secs * 10.0).ceil() as u64);
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{bar:30}] {percent:>3}% ~{eta} left  {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            pb.enable_steady_tick(Duration::from_millis(200));
            Progress::Bar(pb)
        } else {
            Progress::Lines
        }
    }

    fn step(&self, exp: &str, msg: &str, done_secs: f64) {
        match self {
            Progress::Bar(pb) => {
                pb.set_position((done_secs * 10.0) as u64);
                pb.set_message(format!("{exp}: {msg}"));
            }
            Progress::Lines => eprintln!("cpuscope: {exp}: {msg}"),
            Progress::Quiet => {}
        }
    }

    fn finish(&self) {
        if let Progress::Bar(pb) = self {
            pb.finish_and_clear();
        }
    }
}

/// The CPUs the run may use: usable ∩ --cpus (error outside the usable set).
fn choose_cpus(info: &machine::MachineInfo, arg: Option<&str>) -> Result<CpuSet> {
    let usable = if !info.cpus.usable.is_empty() {
        info.cpus.usable.clone()
    } else if !info.cpus.online.is_empty() {
        info.cpus.online.clone()
    } else {
        // Topology unreadable: fall back to this process's affinity.
        crate::placement::pin::current_affinity()?
    };
    let Some(list) = arg else {
        return Ok(usable);
    };
    let want = CpuSet::parse(list).map_err(anyhow::Error::msg)?;
    if want.is_empty() {
        bail!("--cpus '{list}' names no CPU");
    }
    let outside = want.difference(&usable.union(&info.cpus.pinnable()));
    if !outside.is_empty() {
        bail!("--cpus: CPU(s) {outside} are not usable by this process (usable: {usable})");
    }
    Ok(want)
}

pub fn run(ctx: &Context, args: &RunArgs) -> Result<i32> {
    let sys = ctx.sysroot()?;
    if !sys.is_live() {
        bail!(
            "run measures this machine: --sysroot only applies to `info` (got '{}')",
            sys.root().display()
        );
    }
    let selected = experiments::select(&args.only, &args.skip)?;
    let info = machine::discover(&sys)?;
    let cpus = choose_cpus(&info, args.cpus.as_deref())?;
    let estimates: Vec<f64> = selected
        .iter()
        .map(|e| e.estimate_secs(&info, &cpus, args.profile))
        .collect();
    let total: f64 = estimates.iter().sum();
    if args.list {
        for (e, s) in selected.iter().zip(&estimates) {
            println!("{:<14} ~{:>5.1} s  {}", e.name(), s, e.title());
        }
        println!(
            "{:<14} ~{:>5.1} s  (profile {})",
            "total",
            total,
            args.profile.as_str()
        );
        return Ok(0);
    }

    let mut store = open_store(ctx.store.as_deref())?;
    let stop = Arc::new(AtomicBool::new(false));
    // First Ctrl-C: stop between samples and keep what finished. Second: exit now.
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
    }

    let host = crate::results::store::local_hostname().unwrap_or_else(|| "unknown".into());
    let options = serde_json::json!({
        "profile": args.profile.as_str(),
        "only": args.only,
        "skip": args.skip,
        "cpus": cpus.to_string(),
    });
    let mut env = Environment::from_machine(&info, &sys);
    let machine_json = serde_json::to_value(&info)?;
    let mut run = Run::new(
        &host,
        args.profile.as_str(),
        machine_json,
        env.clone(),
        options,
        args.tag.clone(),
    );
    store.begin_run(&run)?;

    let sentinel_cpu = cpus.first();
    let clock_start = sentinel_cpu.and_then(|c| experiments::frequency::sentinel_ghz(c, &stop));
    let progress = Progress::new(args.quiet, total);
    let mut facts = Facts::default();
    let mut done_est = 0.0;
    let t0 = Instant::now();
    let mut failed: Vec<String> = Vec::new();
    for (e, est) in selected.iter().zip(&estimates) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        progress.step(e.name(), "starting", done_est);
        let name = e.name();
        let mut step = |msg: &str| progress.step(name, msg, done_est);
        let mut ectx = ExpCtx {
            machine: &info,
            cpus: cpus.clone(),
            profile: args.profile,
            stop: &stop,
            facts: &mut facts,
            step: &mut step,
        };
        let mut sink = |rec: crate::results::schema::ResultRecord| -> Result<()> {
            store.add_result(&run.id, &rec)?;
            run.results.push(rec);
            Ok(())
        };
        if let Err(err) = e.run(&mut ectx, &mut sink) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let msg = format!("{name}: {err:#}").replace('\n', " ");
            env.notes.push(format!("experiment failed: {msg}"));
            failed.push(msg);
        }
        done_est += est;
    }
    progress.finish();
    let interrupted = stop.load(Ordering::Relaxed);
    if !interrupted {
        if let (Some(cpu), Some(a)) = (sentinel_cpu, clock_start) {
            if let Some(b) = experiments::frequency::sentinel_ghz(cpu, &stop) {
                env.notes
                    .push(experiments::frequency::sentinel_note(cpu, a, b));
            }
        }
    }
    env.load_end = Some(crate::results::schema::Load::read(&sys));
    env.notes
        .push(format!("measured for {:.1} s", t0.elapsed().as_secs_f64()));
    let status = if interrupted {
        env.notes
            .push("interrupted (Ctrl-C): kept what finished".into());
        RunStatus::Partial
    } else {
        RunStatus::Complete
    };
    let finished = now_rfc3339();
    store.finish_run(&run.id, status, &finished, &env)?;
    run.status = status;
    run.finished_at = Some(finished);
    run.environment = env;

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
        std::fs::write(&p, crate::report::html::render_run(&run))
            .with_context(|| format!("cannot write the HTML report '{}'", p.display()))?;
        Some(p)
    };

    if args.json {
        super::print_json(&run)?;
    } else {
        print!("{}", crate::report::summary::render(&run));
        println!("stored as {} in {}", run.id, store.location());
        if let Some(p) = &html_path {
            println!("HTML report: {}", p.display());
        }
        for f in &failed {
            println!("failed: {f}");
        }
    }
    Ok(if interrupted { 130 } else { 0 })
}

/// Reports go in a `reports/` folder beside the SQLite store.
fn report_dir(ctx: &Context) -> Result<PathBuf> {
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

//! `cpuscope tune [options] -- CMD ARGS...`: run the user's command under
//! each placement the topology offers, interleaved, and rank them with
//! intervals (experiments/tune.rs). Stored as a run (`show`, `compare`,
//! the HTML report); `--dry-run` prints the plan and the command lines
//! (and works on a recorded machine with --sysroot).

use super::args::{formats, OutputArgs, Progress};
use super::session::{self, Session};
use super::Context;
use crate::base::pattern::Pattern;
use crate::base::CpuSet;
use crate::counters::workload::resolve_command;
use crate::experiments::experiment::Profile;
use crate::experiments::tune::payload::Stopped;
use crate::experiments::tune::study::{
    self as tune, default_cpus_needed, plan_candidates, Params, Score, ScoreSource, ThreadKnob,
    TuneView, THREADS_PLACEHOLDER,
};
use crate::experiments::tune::text as tune_text;
use crate::machine;
use anyhow::{bail, Result};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  cpuscope tune -- bash -c 'echo \"7^99999\" | bc'\n  \
cpuscope tune --cpus-needed 4 --score-regex 'tpmC: ([0-9.]+)' --higher-is-better -- ./bench.sh\n  \
cpuscope tune --threads 1,2,4,8 -- ./app --threads {threads}\n  \
cpuscope tune --threads-env OMP_NUM_THREADS --dry-run -- ./omp_app\n\n\
Candidates: no binding (the baseline); N CPUs of one node with local, preferred, interleaved and \
remote memory; two nodes of one socket; two nodes on two sockets (nearest, farthest); all nodes; \
packed on SMT siblings; the thread counts without binding. Only what this machine has.\n\
Intervals: Hodges-Lehmann ratio to the baseline with a 95% Mann-Whitney (Moses) interval; a winner \
only when separated from the runner-up beyond noise. See docs/methods-tune.md."
)]
pub struct TuneArgs {
    /// CPUs the command uses: the size of each placement set (default: the cores of one NUMA node).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65_536))]
    pub cpus_needed: Option<usize>,
    /// Score = a figure in the command's output: the first group of the last match (e.g. 'tpmC: ([0-9.]+)').
    #[arg(long, value_name = "REGEX")]
    pub score_regex: Option<String>,
    /// Score = a figure in a file the command writes (with --score-regex: its match there; else the first number).
    #[arg(long, value_name = "FILE")]
    pub score_file: Option<PathBuf>,
    /// A higher score is better (with --score-regex or --score-file; wall time is lower-is-better).
    #[arg(long)]
    pub higher_is_better: bool,
    /// Unit of a score read from the output or a file.
    #[arg(long, value_name = "UNIT", default_value = tune::DEFAULT_UNIT)]
    pub score_unit: String,
    /// Thread counts for the curve without binding (e.g. 1,2,4,8); needs {threads} in the command or --threads-env.
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// Environment variable that takes the thread count (e.g. OMP_NUM_THREADS).
    #[arg(long, value_name = "VAR")]
    pub threads_env: Option<String>,
    /// Discarded runs of each candidate first.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1_000))]
    pub warmup: usize,
    /// Runs of each candidate before the ranking may be called settled (at least 3).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub min_runs: usize,
    /// Most runs of each candidate.
    #[arg(long, default_value_t = 30, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub max_runs: usize,
    /// Time for everything, warm-up included: seconds, or 90s, 5m, 1h.
    #[arg(long, default_value = "300", value_name = "TIME")]
    pub budget: String,
    /// Kill a run that takes longer than this (and stop its candidate): seconds, or 90s, 5m.
    #[arg(long, value_name = "TIME")]
    pub run_timeout: Option<String>,
    /// Seed of the random order of each round.
    #[arg(long, default_value_t = 17)]
    pub seed: u64,
    /// The best two count as equal (ranking settled) when their interval lies within this (e.g. 2%).
    #[arg(long, default_value = "2%", value_name = "PCT")]
    pub resolution: String,
    /// Do not count events (IPC, migrations, page faults).
    #[arg(long)]
    pub no_counters: bool,
    /// Do not sample /proc/PID/numa_maps.
    #[arg(long)]
    pub no_numa_maps: bool,
    /// Let the command's output through (a --score-regex needs it kept: not with that).
    #[arg(long)]
    pub show_output: bool,
    /// Print the plan and the command lines; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Plan the sets inside these CPUs (e.g. 0-15); the baseline stays unbound.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Tag the stored run (repeatable): printable text, 1 to 64 characters, each tag once.
    #[arg(long, value_parser = crate::base::fmt::TagParser)]
    pub tag: Vec<String>,
    /// Do not store the run.
    #[arg(long)]
    pub no_store: bool,
    /// Where to write the HTML report (default: next to the store, reports/RUN.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Do not write the HTML report.
    #[arg(long, conflicts_with = "html")]
    pub no_html: bool,
    #[command(flatten)]
    pub progress: Progress,
    #[command(flatten)]
    pub formats: OutputArgs<TuneFormats>,
    /// The command to tune and its arguments (after --); passed as given,
    /// bytes that are not UTF-8 included.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND",
        value_parser = clap::value_parser!(std::ffi::OsString)
    )]
    pub command: Vec<std::ffi::OsString>,
}

formats!(pub TuneFormats { Json: "Print the run document (cpuscope.run/1) as JSON; with --dry-run, the plan" });

/// A time for `option`: `300`, `300s`, `5m`, `1h`, `1.5m`.
pub fn parse_time(option: &str, s: &str) -> Result<Duration> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * mult <= 1e7 => {
            Ok(Duration::from_secs_f64(v * mult))
        }
        _ => bail!("bad {option} '{s}': expected seconds or a time like 90s, 5m, 1h"),
    }
}

/// `2%` or `0.02`.
pub fn parse_fraction(s: &str) -> Result<f64> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => bail!("bad --resolution '{s}': expected a percentage like 2% (between 0 and 100)"),
    }
}

fn score_of(a: &TuneArgs) -> Result<Score> {
    let pattern = a
        .score_regex
        .as_deref()
        .map(|r| Pattern::new(r).map_err(|e| anyhow::anyhow!("--score-regex: {e}")))
        .transpose()?;
    if a.score_unit.trim().is_empty() {
        bail!("--score-unit: empty unit");
    }
    if let Some(path) = &a.score_file {
        // Refused before anything is measured: reading a FIFO would wait for
        // a writer, a device would never end (tune reads it after each run).
        let md = std::fs::metadata(path);
        if let Some(why) = md.ok().as_ref().and_then(crate::base::files::not_regular) {
            bail!(
                "--score-file '{}': {why}: the command must write its score to a regular file",
                path.display()
            );
        }
    }
    let source = match (&a.score_file, pattern) {
        (Some(path), pattern) => ScoreSource::File {
            path: path.clone(),
            pattern,
        },
        (None, Some(p)) => {
            if a.show_output {
                bail!("--show-output lets the output through, so --score-regex cannot read it: drop one of them");
            }
            ScoreSource::Output(p)
        }
        (None, None) => {
            if a.higher_is_better {
                bail!("--higher-is-better needs --score-regex or --score-file (wall time is lower-is-better)");
            }
            return Ok(Score::wall_time());
        }
    };
    Ok(Score {
        source,
        higher_is_better: a.higher_is_better,
        unit: a.score_unit.trim().to_string(),
    })
}

fn knob_of(a: &TuneArgs, usable: usize, k: usize) -> Result<Option<ThreadKnob>> {
    let placeholder = a
        .command
        .iter()
        .any(|x| crate::base::args::contains(x, THREADS_PLACEHOLDER));
    if let Some(v) = &a.threads_env {
        if v.is_empty() || v.contains('=') || v.contains('\0') {
            bail!("bad --threads-env '{v}': expected a variable name like OMP_NUM_THREADS");
        }
    }
    if !placeholder && a.threads_env.is_none() {
        if a.threads.is_some() {
            bail!("--threads needs a {THREADS_PLACEHOLDER} placeholder in the command or --threads-env VAR");
        }
        return Ok(None);
    }
    let counts: Vec<usize> = match &a.threads {
        Some(list) => {
            let set = CpuSet::parse(list)
                .map_err(|e| anyhow::anyhow!("--threads: {}", e.replace("CPU", "thread count")))?;
            if set.is_empty() || set.contains(0) {
                bail!("--threads '{list}': thread counts are 1 or more");
            }
            if set.iter().any(|t| t > 65536) {
                bail!("--threads '{list}': a thread count above 65536");
            }
            set.iter().collect()
        }
        None => {
            let mut v: Vec<usize> = std::iter::successors(Some(1usize), |x| Some(x * 2))
                .take_while(|&x| x <= usable)
                .collect();
            v.push(usable);
            v.push(k);
            v.sort_unstable();
            v.dedup();
            v
        }
    };
    Ok(Some(ThreadKnob {
        counts,
        env: a.threads_env.clone(),
        placeholder,
    }))
}

fn params_of(a: &TuneArgs, m: &machine::MachineInfo, cpus: &CpuSet) -> Result<Params> {
    let score = score_of(a)?;
    let budget = parse_time("--budget", &a.budget)?;
    let resolution = parse_fraction(&a.resolution)?;
    if a.min_runs < 3 {
        bail!("--min-runs must be at least 3 (got {})", a.min_runs);
    }
    if a.max_runs < a.min_runs {
        bail!(
            "--max-runs ({}) is below --min-runs ({})",
            a.max_runs,
            a.min_runs
        );
    }
    if a.max_runs > 10_000 || a.warmup > 1000 {
        bail!("--max-runs is at most 10000 and --warmup at most 1000");
    }
    let k = match a.cpus_needed {
        Some(0) => bail!("--cpus-needed must be at least 1"),
        Some(n) if n > cpus.len() => bail!(
            "--cpus-needed {n}: only {} CPUs to plan from ({cpus})",
            cpus.len()
        ),
        Some(n) => n,
        None => default_cpus_needed(m, cpus),
    };
    let knob = knob_of(a, cpus.len(), k)?;
    let plan = plan_candidates(m, cpus, k, knob);
    Ok(Params {
        command: a.command.clone(),
        plan,
        score,
        warmup: a.warmup,
        min_runs: a.min_runs,
        max_runs: a.max_runs,
        budget,
        seed: a.seed,
        resolution,
        counters: !a.no_counters,
        numa_maps: !a.no_numa_maps,
        show_output: a.show_output,
        run_timeout: a
            .run_timeout
            .as_deref()
            .map(|t| parse_time("--run-timeout", t))
            .transpose()?,
    })
}

pub fn run(ctx: &Context, a: &TuneArgs) -> Result<i32> {
    if a.command.is_empty() {
        bail!("give the command to tune after --, e.g. cpuscope tune -- ./app --threads {THREADS_PLACEHOLDER}");
    }
    if let Err(e) = resolve_command(&a.command[0]) {
        bail!("{}", e.message);
    }
    if a.dry_run {
        return dry_run(ctx, a);
    }
    // Every path written is checked before anything is measured.
    let html = super::run::HtmlReport::plan(
        ctx,
        a.html.as_deref(),
        a.no_html || (a.no_store && a.html.is_none()),
    )?;
    let mut s = Session::open(
        ctx,
        tune::EXP,
        a.cpus.as_deref(),
        Profile::Standard,
        a.progress.quiet,
    )?;
    let mut p = params_of(a, &s.machine, &s.cpus)?;
    s.set_option("command", json!(tune::EXP));
    s.set_option("candidates", tune::plan_json(&p));
    s.set_tags(a.tag.clone())?;
    if !a.no_store {
        s.store_in(ctx)?;
    }
    s.say(&format!(
        "{} candidate(s), {} CPUs per set; score: {}",
        p.plan.candidates.len(),
        p.plan.k,
        p.score.describe()
    ));
    s.measure_with(&tune::Tune, &mut p)?;
    let done = s.finish()?;
    let run = &done.run;
    let html_path = super::run::write_html(ctx, &html, run, done.store.is_some());
    done.report_lost();
    let html_path = html_path?;
    print_outcome(a, &done, html_path.as_deref())?;
    let view = TuneView::of(run);
    let all_failed = view
        .as_ref()
        .and_then(|v| v.verdict.as_ref())
        .is_some_and(|(_, d)| d.stopped == Some(Stopped::AllFailed));
    // Nothing measured at all (every candidate failed, timed out or was
    // never run): an error for a script, as when every candidate failed.
    let no_score = view
        .as_ref()
        .is_some_and(|v| v.candidates.iter().all(|(r, _)| r.value.is_none()));
    Ok(if done.interrupted {
        done.exit_code()
    } else if all_failed || no_score {
        1
    } else {
        0
    })
}

/// `--dry-run`: the plan and the command lines, nothing run.
fn dry_run(ctx: &Context, a: &TuneArgs) -> Result<i32> {
    // Nothing runs: a recorded machine (--sysroot) will do.
    let m = machine::discover(&ctx.sysroot()?)?;
    let cpus = session::choose_cpus(&m, a.cpus.as_deref())?;
    let p = params_of(a, &m, &cpus)?;
    if a.formats.json {
        super::print_json(&tune::plan_json(&p))?;
    } else {
        out!("{}", tune_text::render_plan(&p));
    }
    Ok(0)
}

/// The finished study on stdout: the JSON document, or the ranking, where it
/// is stored, the HTML report and whether it was interrupted.
fn print_outcome(a: &TuneArgs, done: &session::Finished, html_path: Option<&Path>) -> Result<()> {
    let run = &done.run;
    if a.formats.json {
        super::print_json(run)?;
    } else {
        out!("{}", tune_text::render(run));
        if let Some(st) = done.store.as_ref() {
            outln!(
                "stored as {} in {}",
                run.id,
                crate::base::fmt::for_terminal(&st.location())
            );
        }
        if let Some(p) = html_path {
            outln!(
                "HTML report: {}",
                crate::base::fmt::for_terminal(&p.display().to_string())
            );
        }
        if done.interrupted {
            outln!(
                "interrupted ({}): the figures above are what finished",
                crate::base::stop::cause()
            );
        }
    }
    Ok(())
}

//! `cpuscope stat`: hardware and software counters for a command, a running
//! process or whole CPUs, like `perf stat`.

use super::args::{formats, OutputArgs};
use super::{session, Context};
use crate::counters::doc::Interval;
use crate::counters::group::EventState;
use crate::counters::stat;
use crate::report::stat_text;
use anyhow::{bail, Result};
use std::io::Write;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  cpuscope stat -- bc -l <<< '7^99999'\n  cpuscope stat -e cycles,instructions,{branches,branch-misses} -- ./app\n  \
cpuscope stat -p 1234 --duration 5 --json -o counts.json\n  cpuscope stat --cpus 0-3 -I 1000 -- ./app\n\n\
Results go to stderr (the command owns stdout), or to the -o file."
)]
pub struct StatArgs {
    /// Events, comma-separated; {a,b} forms a group; may be repeated
    /// (default: software events, cycles/instructions/branches, caches, TLBs, top-down).
    #[arg(short = 'e', long = "event", value_name = "LIST")]
    pub events: Vec<String>,
    /// Count whole CPUs (everything running on them) instead of the command's threads.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// With --cpus: print counts per CPU too.
    #[arg(long)]
    pub per_cpu: bool,
    /// Count an existing process (all its threads, and children it creates).
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pid: Option<String>,
    /// With -p or --cpus: stop after this many seconds (default: until the process ends or Ctrl-C).
    #[arg(long, value_name = "S")]
    pub duration: Option<String>,
    /// Print counts every MS milliseconds (>= 10).
    #[arg(short = 'I', long = "interval", value_name = "MS")]
    pub interval: Option<String>,
    /// Add top-down level 1 to an -e list (always tried with the default events).
    #[arg(long)]
    pub topdown: bool,
    #[command(flatten)]
    pub formats: OutputArgs<StatFormats>,
    /// Write the results to FILE instead of stderr.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// List the events this machine knows and exit.
    #[arg(long)]
    pub list: bool,
    /// Command to run and count (after --); its arguments are passed as
    /// given, bytes that are not UTF-8 included.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND",
        value_parser = clap::value_parser!(std::ffi::OsString)
    )]
    pub command: Vec<std::ffi::OsString>,
}

formats!(
    /// stat's own rule: --json with --csv is refused when it runs.
    pub StatFormats, shared = true {
        Csv: "CSV output (one row per event and per derived metric)",
        Json: "JSON document \"cpuscope.stat/1\"",
    }
);

impl StatArgs {
    fn options(&self) -> stat::Options {
        stat::Options {
            events: self.events.clone(),
            topdown: self.topdown,
            cpus: self.cpus.clone(),
            per_cpu: self.per_cpu,
            pid: self.pid.clone(),
            duration: self.duration.clone(),
            interval: self.interval.clone(),
            command: self.command.clone(),
        }
    }
}

/// Where results go: stderr (the command owns stdout), or the -o file,
/// which gets the whole output at the end, written once through
/// `crate::base::output` (checked before the command starts).
struct Output<'a> {
    args: &'a StatArgs,
    file: Option<(crate::base::output::Output, String)>,
}

impl Output<'_> {
    fn put(&mut self, s: &str) {
        match &mut self.file {
            None => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(s.as_bytes());
            }
            Some((_, buf)) => buf.push_str(s),
        }
    }
}

impl stat::Watch for Output<'_> {
    fn started(&mut self) {
        match (self.args.formats.json, self.args.formats.csv) {
            (true, _) => {}
            (false, false) => self.put(&stat_text::interval_header()),
            (false, true) => self.put(&stat_text::csv_header(true)),
        }
    }
    fn interval(&mut self, i: &Interval) -> bool {
        match (self.args.formats.json, self.args.formats.csv) {
            (true, _) => return false,
            (false, false) => self.put(&stat_text::render_interval_text(
                i.t_s, &i.events, &i.metrics,
            )),
            (false, true) => self.put(&stat_text::csv_rows(Some(i.t_s), &i.events, &i.metrics)),
        }
        true
    }
}

pub fn run(ctx: &Context, args: &StatArgs) -> Result<i32> {
    if args.list {
        out!("{}", stat::event_list(&ctx.sysroot()?));
        return Ok(0);
    }
    if let Some(first) = args
        .command
        .first()
        .filter(|c| c.as_encoded_bytes().starts_with(b"-"))
    {
        let shown = crate::base::args::display(first);
        bail!(
            "'{shown}' is not an option of stat (see cpuscope stat --help); to count a program whose name starts with '-', give its path: ./{shown}"
        );
    }
    let sys = session::live_sysroot(ctx, "stat")?;
    let req = stat::Request::parse(&args.options())?;
    if args.formats.json && args.formats.csv {
        bail!("give either --json or --csv, not both");
    }
    let file = match &args.output {
        Some(p) => Some((ctx.output(p)?, String::new())),
        None => None,
    };
    let mut out = Output { args, file };
    let (doc, code) = match stat::count(&sys, &req, &mut out)? {
        stat::Outcome::NotStarted(e) => {
            errln!("cpuscope: error: {}", e.message);
            return Ok(e.exit_code);
        }
        stat::Outcome::Counted { doc, code, exited } => {
            if let Some(msg) = exited {
                errln!("cpuscope: note: {msg}");
            }
            (doc, code)
        }
    };
    if args.formats.json {
        out.put(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
    } else if !args.formats.csv {
        out.put(&stat_text::render_text(&doc));
    } else if req.interval.is_none() {
        out.put(&stat_text::render_csv(&doc));
    }
    if let Some((file, text)) = &out.file {
        ctx.write_output(file, text.as_bytes())?;
    }
    // Every event refused (not opened: permissions, no PMU): an error.
    // Events opened but never scheduled (a process that slept) are counts
    // of nothing, not a failure.
    if !doc.events.is_empty()
        && doc
            .events
            .iter()
            .all(|e| e.state == EventState::NotSupported)
    {
        let why = doc
            .events
            .iter()
            .find_map(|e| e.reason.clone())
            .unwrap_or_else(|| "no reason given".into());
        errln!(
            "cpuscope: error: no event could be counted (first reason: {}); every count above is not available",
            why.replace('\n', " ")
        );
        return Ok(if code == 0 { 1 } else { code });
    }
    Ok(code)
}

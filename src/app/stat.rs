//! `cpuscope stat`: hardware and software counters for a command, a running
//! process or whole CPUs, like `perf stat`.

use super::Context;
use crate::counters::doc::{Interval, PerCpu, StatDoc, StatTarget, STAT_SCHEMA};
use crate::counters::events::{self, Event};
use crate::counters::group::{CounterGroup, Readings, Snapshot, Target, TargetError};
use crate::counters::topdown::{self, TopdownStatus};
use crate::counters::workload::{self, ExitInfo, Workload};
use crate::counters::{sysfs, PerfEnv};
use crate::placement::CpuSet;
use crate::report::stat_text;
use anyhow::{bail, Context as _, Result};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// CSV output (one row per event and per derived metric).
    #[arg(long)]
    pub csv: bool,
    /// JSON document "cpuscope.stat/1".
    #[arg(long)]
    pub json: bool,
    /// Write the results to FILE instead of stderr.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// List the events this machine knows and exit.
    #[arg(long)]
    pub list: bool,
    /// Command to run and count (after --).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

/// Where results go.
enum Sink {
    Stderr,
    File(std::fs::File),
}

impl Sink {
    fn put(&mut self, s: &str) {
        let _ = match self {
            Sink::Stderr => std::io::stderr().write_all(s.as_bytes()),
            Sink::File(f) => f.write_all(s.as_bytes()).and_then(|_| f.flush()),
        };
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Csv,
    Json,
}

/// Parsed and checked options.
struct Plan {
    pid: Option<i32>,
    cpus: Option<CpuSet>,
    duration: Option<Duration>,
    interval: Option<Duration>,
    format: Format,
}

fn parse_plan(args: &StatArgs) -> Result<Plan> {
    let pid = match &args.pid {
        None => None,
        Some(s) => {
            let p: i64 = s
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("bad PID '{s}': expected a positive number"))?;
            if p <= 0 || p > i32::MAX as i64 {
                bail!("bad PID '{s}': expected a positive number");
            }
            Some(p as i32)
        }
    };
    let cpus = match &args.cpus {
        None => None,
        Some(s) => {
            let set = CpuSet::parse(s).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
            if set.is_empty() {
                bail!("--cpus: empty CPU list");
            }
            Some(set)
        }
    };
    let duration = match &args.duration {
        None => None,
        Some(s) => {
            let d: f64 = s
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("bad --duration '{s}': expected seconds, e.g. 2.5"))?;
            if !(d.is_finite() && d > 0.0 && d <= 1e7) {
                bail!("bad --duration '{s}': expected seconds > 0");
            }
            Some(Duration::from_secs_f64(d))
        }
    };
    let interval = match &args.interval {
        None => None,
        Some(s) => {
            let ms: u64 = s
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("bad -I '{s}': expected milliseconds"))?;
            if ms < 10 {
                bail!("bad -I '{s}': the interval must be at least 10 ms");
            }
            Some(Duration::from_millis(ms))
        }
    };
    if pid.is_some() && !args.command.is_empty() {
        bail!("give either -p PID or a command, not both");
    }
    if pid.is_some() && cpus.is_some() {
        bail!("--cpus counts whole CPUs and cannot be combined with -p");
    }
    if pid.is_none() && cpus.is_none() && args.command.is_empty() {
        bail!("nothing to count: give a command after --, -p PID, or --cpus LIST");
    }
    if duration.is_some() && !args.command.is_empty() {
        bail!("--duration applies to -p or --cpus without a command; a command is counted until it ends");
    }
    if args.per_cpu && cpus.is_none() {
        bail!("--per-cpu needs --cpus LIST");
    }
    if args.json && args.csv {
        bail!("give either --json or --csv, not both");
    }
    let format = if args.json {
        Format::Json
    } else if args.csv {
        Format::Csv
    } else {
        Format::Text
    };
    Ok(Plan {
        pid,
        cpus,
        duration,
        interval,
        format,
    })
}

fn list_events(ctx: &Context) -> Result<i32> {
    let sys = ctx.sysroot()?;
    let mut o = String::from("Built-in events (availability depends on the PMU):\n");
    for (n, class) in events::builtin_names() {
        o.push_str(&format!("  {n:<32} [{class}]\n"));
    }
    for pmu in sysfs::pmus(&sys) {
        let names = sysfs::pmu_event_names(&sys, &pmu);
        if names.is_empty() {
            continue;
        }
        o.push_str(&format!("\nPMU {pmu} (use as NAME or {pmu}/NAME/):\n"));
        for n in names {
            o.push_str(&format!("  {n}\n"));
        }
    }
    let env = PerfEnv::detect(&sys);
    if env.core_pmus.is_empty() {
        o.push_str(&format!(
            "\nNo hardware PMU is registered here (event sources: {}): hardware events will be reported as not supported.\n",
            env.pmus.join(", ")
        ));
    }
    o.push_str("\nRaw encodings: rNNNN (hex), or pmu/event=0x..,umask=0x../ using the PMU's format terms.\n");
    print!("{o}");
    Ok(0)
}

pub fn run(ctx: &Context, args: &StatArgs) -> Result<i32> {
    if args.list {
        return list_events(ctx);
    }
    let sys = ctx.sysroot()?;
    if !sys.is_live() {
        bail!(
            "stat counts this machine: --sysroot must be / (got '{}')",
            ctx.sysroot.display()
        );
    }
    let plan = parse_plan(args)?;
    let per_cpu_mode = plan.cpus.is_some();
    if let Some(cpus) = &plan.cpus {
        let online = sys
            .read_cpulist("/sys/devices/system/cpu/online")
            .context("cannot read the online CPU list")?;
        if let Some(bad) = cpus.iter().find(|c| !online.contains(*c)) {
            bail!("--cpus: CPU {bad} is not online (online: {})", online);
        }
    }
    let env = PerfEnv::detect(&sys);

    // Events and top-down.
    let default_events = args.events.is_empty();
    let mut groups = if default_events {
        events::default_groups(per_cpu_mode)
    } else {
        events::parse_event_lists(&args.events, &sys)?
    };
    let mut td_status = TopdownStatus::NotRequested;
    if default_events || args.topdown {
        td_status = match topdown::detect(&sys, !per_cpu_mode) {
            Ok(model) => match model.groups(&sys) {
                Ok(g) => {
                    groups.extend(g);
                    TopdownStatus::Model(model)
                }
                Err(e) => TopdownStatus::Unavailable(e),
            },
            Err(e) => TopdownStatus::Unavailable(e),
        };
    }

    // Ctrl-C / SIGTERM stop counting -p and --cpus runs.
    // Ctrl-C reaches the command through the terminal; SIGTERM is forwarded.
    let stop = Arc::new(AtomicBool::new(false));
    let term = Arc::new(AtomicBool::new(false));
    for (sig, flag) in [
        (libc::SIGINT, &stop),
        (libc::SIGTERM, &stop),
        (libc::SIGTERM, &term),
    ] {
        signal_hook::flag::register(sig, Arc::clone(flag))
            .with_context(|| format!("cannot handle signal {sig}"))?;
    }

    let mut sink = match &args.output {
        None => Sink::Stderr,
        Some(p) => Sink::File(
            std::fs::File::create(p).with_context(|| format!("cannot write '{}'", p.display()))?,
        ),
    };

    // Targets.
    let mut workload: Option<Workload> = None;
    if !args.command.is_empty() {
        match Workload::prepare(&args.command) {
            Ok(w) => workload = Some(w),
            Err(e) => {
                eprintln!("cpuscope: error: {}", e.message);
                return Ok(e.exit_code);
            }
        }
    }
    let mut threads = None;
    let targets: Vec<Target> = if let Some(cpus) = &plan.cpus {
        cpus.iter().map(|c| Target::Cpu(c as u32)).collect()
    } else if let Some(w) = &workload {
        vec![Target::Task {
            tid: w.pid(),
            inherit: true,
            enable_on_exec: true,
        }]
    } else {
        let pid = plan.pid.unwrap_or(0);
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            bail!("no process with PID {pid}");
        }
        if !workload::process_alive(pid) {
            bail!("process {pid} has already exited");
        }
        let tids = workload::process_threads(pid);
        threads = Some(tids.len());
        tids.into_iter()
            .map(|tid| Target::Task {
                tid,
                inherit: true,
                enable_on_exec: false,
            })
            .collect()
    };
    let mut cg = match CounterGroup::open(&groups, &targets, env.clone()) {
        Ok(g) => g,
        Err(TargetError::Gone) => match plan.pid {
            Some(p) => bail!("process {p} exited before counters could be attached"),
            None => bail!("the command exited before counters could be attached"),
        },
        Err(TargetError::Denied(errno, reason)) => match plan.pid {
            Some(p) => bail!(
                "not allowed to count process {p} ({}): it needs ptrace rights over the process \
                 (same user, or CAP_PERFMON/CAP_SYS_PTRACE) and a permitting \
                 kernel.perf_event_paranoid (now {})",
                crate::counters::raw::errno_name(errno),
                env.paranoid
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "unknown".into())
            ),
            None => bail!("not allowed to count: {reason}"),
        },
    };
    cg.set_topdown(td_status.clone());

    let mut intervals: Vec<Interval> = Vec::new();
    let mut notes: Vec<String> = cg.notes().to_vec();
    if plan.format == Format::Text && plan.interval.is_some() {
        sink.put(&stat_text::interval_header());
    }
    if plan.format == Format::Csv && plan.interval.is_some() {
        sink.put(&stat_text::csv_header(true));
    }

    // Run.
    let t0 = Instant::now();
    let mut exit: Option<ExitInfo> = None;
    if per_cpu_mode {
        cg.enable();
    } else if workload.is_some() {
        cg.mark_started();
    } else {
        cg.enable();
    }
    if let Some(w) = workload.as_mut() {
        if let Err(e) = w.start(&args.command[0]) {
            eprintln!("cpuscope: error: {}", e.message);
            return Ok(e.exit_code);
        }
    }
    let end = plan.duration.map(|d| t0 + d);
    let pidfd = plan.pid.and_then(workload::pidfd_open);
    let mut prev = Snapshot {
        samples: Vec::new(),
        wall_ns: Some(0),
    };
    let mut next_tick = plan.interval.map(|i| t0 + i);
    let mut pid_exited = false;
    loop {
        let deadline = [end, next_tick].into_iter().flatten().min();
        if let Some(w) = workload.as_mut() {
            let step = Instant::now() + Duration::from_millis(200);
            if let Some(x) = w.wait(Some(deadline.map_or(step, |d| d.min(step)))) {
                exit = Some(x);
                break;
            }
            if term.swap(false, Ordering::Relaxed) {
                w.kill(libc::SIGTERM);
                notes.push("SIGTERM forwarded to the command".into());
            }
        } else {
            if stop.load(Ordering::Relaxed) {
                notes.push("interrupted".into());
                break;
            }
            if let Some(pid) = plan.pid {
                if !workload::process_alive(pid) {
                    pid_exited = true;
                    break;
                }
            }
            let now = Instant::now();
            if end.is_some_and(|e| now >= e) {
                break;
            }
            let left = deadline
                .map(|d| d.saturating_duration_since(now))
                .unwrap_or(Duration::from_millis(100))
                .min(Duration::from_millis(100));
            if plan.pid.is_some() {
                workload::wait_fd_or_sleep(pidfd.as_ref(), Some(left));
            } else {
                std::thread::sleep(left);
            }
        }
        let now = Instant::now();
        if let (Some(tick), Some(iv)) = (next_tick, plan.interval) {
            if now >= tick {
                let snap = cg.snapshot();
                let delta = if prev.samples.is_empty() {
                    snap.clone()
                } else {
                    snap.delta(&prev)
                };
                let r = cg.readings_from(&delta);
                let m = r.metrics();
                let t_s = t0.elapsed().as_secs_f64();
                match plan.format {
                    Format::Text => sink.put(&stat_text::render_interval_text(t_s, &r.events, &m)),
                    Format::Csv => sink.put(&stat_text::csv_rows(Some(t_s), &r.events, &m)),
                    Format::Json => intervals.push(Interval {
                        t_s,
                        events: r.events,
                        metrics: m,
                    }),
                }
                prev = snap;
                let mut t = tick + iv;
                while t <= now {
                    t += iv;
                }
                next_tick = Some(t);
            }
        }
    }
    if per_cpu_mode || workload.is_none() {
        cg.disable();
    } else {
        cg.mark_stopped();
    }
    let elapsed = t0.elapsed().as_secs_f64();

    if let Some(pid) = plan.pid {
        if pid_exited {
            let msg = match plan.duration {
                Some(d) => format!(
                    "process {pid} exited after {elapsed:.3} s, before the requested {:.3} s",
                    d.as_secs_f64()
                ),
                None => format!("process {pid} exited after {elapsed:.3} s"),
            };
            eprintln!("cpuscope: note: {msg}");
            notes.push(msg);
        }
    }

    let snap = cg.snapshot();
    let readings: Readings = cg.readings_from(&snap);
    let metrics = readings.metrics();
    let per_cpu = if args.per_cpu {
        Some(
            cg.readings_per_target(&snap)
                .into_iter()
                .filter_map(|(t, r)| match t {
                    Target::Cpu(c) => {
                        let m = r.metrics();
                        Some(PerCpu {
                            cpu: c,
                            events: r.events,
                            metrics: m,
                        })
                    }
                    _ => None,
                })
                .collect(),
        )
    } else {
        None
    };
    let topdown_method = match &td_status {
        TopdownStatus::Model(m) => Some(m.describe()),
        _ => None,
    };
    let target = StatTarget {
        kind: if plan.cpus.is_some() {
            "cpus".into()
        } else if plan.pid.is_some() {
            "pid".into()
        } else {
            "command".into()
        },
        command: (!args.command.is_empty()).then(|| args.command.clone()),
        pid: plan.pid,
        threads,
        cpus: plan.cpus.as_ref().map(|c| c.to_string()),
    };
    let doc = StatDoc {
        schema: STAT_SCHEMA.into(),
        target,
        mode: if per_cpu_mode {
            "per-cpu"
        } else {
            "per-thread"
        }
        .into(),
        elapsed_s: elapsed,
        exit: exit.clone(),
        events: readings.events,
        metrics,
        topdown_method,
        per_cpu,
        intervals: plan.interval.map(|_| intervals),
        environment: env,
        notes,
    };
    match plan.format {
        Format::Json => sink.put(&format!("{}\n", serde_json::to_string_pretty(&doc)?)),
        Format::Csv => {
            if plan.interval.is_none() {
                sink.put(&stat_text::render_csv(&doc));
            }
        }
        Format::Text => sink.put(&stat_text::render_text(&doc)),
    }
    Ok(exit.map(|x| x.shell_code()).unwrap_or(0))
}

/// Parse one event name (for other commands that take event lists).
pub fn parse_event(ctx: &Context, name: &str) -> Result<Event> {
    Event::parse(name, &ctx.sysroot()?)
}

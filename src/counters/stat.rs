//! The `cpuscope stat` counting loop: open the counters on a command started
//! stopped (fork/exec), on every thread of a running process (`-p PID`) or on
//! whole CPUs (`--cpus`), count until the command ends, the process exits,
//! `--duration` passes or Ctrl-C, sample every `-I` interval, and build the
//! `cpuscope.stat/1` document. Printing is the caller's: intervals are
//! handed to it as they come.

use super::doc::{Interval, PerCpu, StatDoc, StatTarget, STAT_SCHEMA};
use super::events;
use super::group::{CounterGroup, Readings, Snapshot, Target, TargetError};
use super::topdown;
use super::topdown_model::TopdownStatus;
use super::workload::{self, ExitInfo, LaunchError, Workload};
use super::{sysfs, PerfEnv};
use crate::base::{CpuSet, Sysroot};
use anyhow::{bail, Context as _, Result};
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to count, as the command line gives it (checked by [`Request::parse`]).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Event lists (`-e`, repeatable; empty: the default events).
    pub events: Vec<String>,
    /// Add top-down level 1 to an event list.
    pub topdown: bool,
    /// Whole CPUs to count (`--cpus`).
    pub cpus: Option<String>,
    /// With `cpus`: counts per CPU too.
    pub per_cpu: bool,
    /// A running process (`-p`).
    pub pid: Option<String>,
    /// Seconds to count a process or CPUs.
    pub duration: Option<String>,
    /// Milliseconds between interval counts (`-I`).
    pub interval: Option<String>,
    /// The command to start and count: bytes, passed to exec as given.
    pub command: Vec<OsString>,
}

/// Checked options.
#[derive(Clone, Debug)]
pub struct Request {
    pub pid: Option<i32>,
    pub cpus: Option<CpuSet>,
    pub duration: Option<Duration>,
    pub interval: Option<Duration>,
    opts: Options,
}

impl Request {
    /// Check the options; each error is one line naming the option.
    pub fn parse(o: &Options) -> Result<Request> {
        let pid = o.pid.as_deref().map(parse_pid).transpose()?;
        let cpus = o.cpus.as_deref().map(parse_cpus).transpose()?;
        let duration = o.duration.as_deref().map(parse_duration).transpose()?;
        let interval = o.interval.as_deref().map(parse_interval).transpose()?;
        let command = !o.command.is_empty();
        if pid.is_some() && command {
            bail!("give either -p PID or a command, not both");
        }
        if pid.is_some() && cpus.is_some() {
            bail!("--cpus counts whole CPUs and cannot be combined with -p");
        }
        if pid.is_none() && cpus.is_none() && !command {
            bail!("nothing to count: give a command after --, -p PID, or --cpus LIST");
        }
        if duration.is_some() && command {
            bail!("--duration applies to -p or --cpus without a command; a command is counted until it ends");
        }
        if o.per_cpu && cpus.is_none() {
            bail!("--per-cpu needs --cpus LIST");
        }
        Ok(Request {
            pid,
            cpus,
            duration,
            interval,
            opts: o.clone(),
        })
    }
}

/// `-p PID`: a positive process id.
fn parse_pid(s: &str) -> Result<i32> {
    match s.trim().parse::<i64>() {
        Ok(p) if p > 0 && p <= i32::MAX as i64 => Ok(p as i32),
        _ => bail!("bad PID '{s}': expected a positive number"),
    }
}

/// `--cpus LIST`: CPUs to count whole.
fn parse_cpus(s: &str) -> Result<CpuSet> {
    let set = CpuSet::parse(s).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
    if set.is_empty() {
        bail!("--cpus: empty CPU list");
    }
    Ok(set)
}

/// `--duration S`: seconds, more than 0.
fn parse_duration(s: &str) -> Result<Duration> {
    let d: f64 = s
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("bad --duration '{s}': expected seconds, e.g. 2.5"))?;
    if !(d.is_finite() && d > 0.0 && d <= 1e7) {
        bail!("bad --duration '{s}': give seconds from more than 0 to 10000000");
    }
    Ok(Duration::from_secs_f64(d))
}

/// `-I MS`: milliseconds, at least 10.
fn parse_interval(s: &str) -> Result<Duration> {
    const MAX_MS: u64 = 86_400_000;
    let t = s.trim();
    let ms: u64 = match t.parse() {
        Ok(v) => v,
        Err(_) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => u64::MAX,
        Err(_) => bail!("bad -I '{s}': expected whole milliseconds, from 10 to {MAX_MS}"),
    };
    if ms > MAX_MS {
        bail!("bad -I '{s}': the interval must be at most {MAX_MS} ms (a day)");
    }
    if ms < 10 {
        bail!("bad -I '{s}': the interval must be at least 10 ms");
    }
    Ok(Duration::from_millis(ms))
}

/// What the caller sees while counting (printing is the caller's).
pub trait Watch {
    /// The options are good and the counting starts next (where the caller
    /// opens its output): before the command starts and the counters open.
    fn ready(&mut self) -> Result<()> {
        Ok(())
    }
    /// The counters are open and counting starts (interval mode only).
    fn started(&mut self) {}
    /// One interval's counts; `false` keeps it in the document instead.
    fn interval(&mut self, _interval: &Interval) -> bool {
        false
    }
}

/// How counting ended.
pub enum Outcome {
    /// Counted. `code`: the exit status to give (the command's, else 0);
    /// `exited`: the note when a counted process ended first (also in the
    /// document's notes).
    Counted {
        doc: Box<StatDoc>,
        code: i32,
        exited: Option<String>,
    },
    /// The command could not be started (message and shell status, 126/127).
    NotStarted(LaunchError),
}

/// Count what `req` names under `sys` (the live machine), telling `watch`.
pub fn count(sys: &Sysroot, req: &Request, watch: &mut dyn Watch) -> Result<Outcome> {
    let o = &req.opts;
    let per_cpu_mode = req.cpus.is_some();
    check_cpus_online(sys, req)?;
    let env = PerfEnv::detect(sys);

    // Events and top-down.
    let (groups, td_status) = event_groups(sys, o, per_cpu_mode)?;

    // Ctrl-C / SIGTERM / SIGHUP stop counting -p and --cpus runs.
    // Ctrl-C reaches the command through the terminal; SIGTERM and SIGHUP
    // are forwarded to it, and counting goes on until it ends.
    let signals = Signals::register()?;
    watch.ready()?;

    // Targets.
    let mut workload: Option<Workload> = None;
    if !o.command.is_empty() {
        match Workload::prepare(&o.command) {
            Ok(w) => workload = Some(w),
            Err(e) => return Ok(Outcome::NotStarted(e)),
        }
    }
    let (targets, threads) = targets_of(req, workload.as_ref())?;
    let mut cg = open_counters(&groups, &targets, &env, req)?;
    cg.set_topdown(td_status.clone());

    let mut notes = opening_notes(&cg, o, &groups);
    if req.interval.is_some() {
        watch.started();
    }

    // Run.
    let t0 = Instant::now();
    if workload.is_some() && !per_cpu_mode {
        cg.mark_started();
    } else {
        cg.enable();
    }
    if let Some(w) = workload.as_mut() {
        if let Err(e) = w.start(&o.command[0]) {
            return Ok(Outcome::NotStarted(e));
        }
    }
    let (exit, pid_exited, intervals) =
        count_loop(&cg, req, watch, workload.as_mut(), &signals, &mut notes, t0);
    if workload.is_some() && !per_cpu_mode {
        cg.mark_stopped();
    } else {
        cg.disable();
    }
    let elapsed = t0.elapsed().as_secs_f64();

    let exited = exited_note(req, pid_exited, elapsed, &mut notes);
    let run = CountRun {
        threads,
        elapsed,
        exit: exit.clone(),
        intervals,
        notes,
    };
    let doc = stat_doc(&cg, req, &td_status, env, run);
    Ok(Outcome::Counted {
        doc: Box::new(doc),
        code: exit.map(|x| x.shell_code()).unwrap_or(0),
        exited,
    })
}

/// Step of `count`: the notes of the opened counters, of a command name
/// that is not UTF-8, and of each pseudo event counted (once each).
fn opening_notes(cg: &CounterGroup, o: &Options, groups: &[Vec<events::Event>]) -> Vec<String> {
    let mut notes: Vec<String> = cg.notes().to_vec();
    notes.extend(crate::base::args::not_utf8_note(&o.command));
    for e in groups.iter().flatten() {
        if let Some(n) = events::pseudo_event_note(&e.key) {
            if !notes.iter().any(|x| x == n) {
                notes.push(n.to_string());
            }
        }
    }
    notes
}

/// Step of `count`: when the `-p` process ended before counting did, the
/// note that says so (also pushed onto `notes`).
fn exited_note(
    req: &Request,
    pid_exited: bool,
    elapsed: f64,
    notes: &mut Vec<String>,
) -> Option<String> {
    let mut exited = None;
    if let (Some(pid), true) = (req.pid, pid_exited) {
        let msg = match req.duration {
            Some(d) => format!(
                "process {pid} exited after {elapsed:.3} s, before the requested {:.3} s",
                d.as_secs_f64()
            ),
            None => format!("process {pid} exited after {elapsed:.3} s"),
        };
        notes.push(msg.clone());
        exited = Some(msg);
    }
    exited
}

/// What one counting run gave, for its document.
struct CountRun {
    threads: Option<usize>,
    elapsed: f64,
    exit: Option<ExitInfo>,
    intervals: Vec<Interval>,
    notes: Vec<String>,
}

/// Step of `count`: the document of a finished run, from the final counts.
fn stat_doc(
    cg: &CounterGroup,
    req: &Request,
    td_status: &TopdownStatus,
    env: PerfEnv,
    run: CountRun,
) -> StatDoc {
    let o = &req.opts;
    let per_cpu_mode = req.cpus.is_some();
    let snap = cg.snapshot();
    let readings: Readings = cg.readings_from(&snap);
    let metrics = readings.metrics();
    let per_cpu = o.per_cpu.then(|| per_cpu_readings(cg, &snap));
    let topdown_method = match td_status {
        TopdownStatus::Model(m) => Some(m.describe()),
        _ => None,
    };
    StatDoc {
        schema: STAT_SCHEMA.into(),
        target: stat_target(req, run.threads),
        mode: if per_cpu_mode {
            "per-cpu"
        } else {
            "per-thread"
        }
        .into(),
        elapsed_s: run.elapsed,
        exit: run.exit,
        events: readings.events,
        metrics,
        topdown_method,
        per_cpu,
        intervals: req.interval.map(|_| run.intervals),
        environment: env,
        notes: run.notes,
    }
}

/// Step of `count`: an error unless every CPU of `--cpus` is online.
fn check_cpus_online(sys: &Sysroot, req: &Request) -> Result<()> {
    if let Some(cpus) = &req.cpus {
        let online = sys
            .read_cpulist("/sys/devices/system/cpu/online")
            .context("cannot read the online CPU list")?;
        if let Some(bad) = cpus.iter().find(|c| !online.contains(*c)) {
            bail!("--cpus: CPU {bad} is not online (online: {})", online);
        }
    }
    Ok(())
}

/// Step of `count`: the event groups to open, top-down's included, and
/// top-down's status.
fn event_groups(
    sys: &Sysroot,
    o: &Options,
    per_cpu_mode: bool,
) -> Result<(Vec<Vec<events::Event>>, TopdownStatus)> {
    let default_events = o.events.is_empty();
    let mut groups = if default_events {
        events::default_groups(per_cpu_mode)
    } else {
        events::parse_event_lists(&o.events, sys)?
    };
    let mut td_status = TopdownStatus::NotRequested;
    if default_events || o.topdown {
        td_status = match topdown::detect(sys, !per_cpu_mode) {
            Ok(model) => match model.groups(sys) {
                Ok(g) => {
                    groups.extend(g);
                    TopdownStatus::Model(model)
                }
                Err(e) => TopdownStatus::Unavailable(e),
            },
            Err(e) => TopdownStatus::Unavailable(e),
        };
    }
    Ok((groups, td_status))
}

/// The flags the stop signals set while `count` runs.
struct Signals {
    /// Set by SIGINT, SIGTERM and SIGHUP (unless started ignored, as under
    /// `nohup`): stop counting a PID or CPUs.
    stop: Arc<AtomicBool>,
    /// Set by SIGTERM and SIGHUP: forward that signal to the command (which
    /// shares cpuscope's process group, so the terminal's Ctrl-C and its
    /// hangup reach it anyway; a signal sent to cpuscope alone must too, or
    /// the command would outlive it).
    forward: Vec<(i32, Arc<AtomicBool>)>,
}

impl Signals {
    /// Step of `count`: register the flags for the stop signals
    /// (`base::stop::signals`).
    fn register() -> Result<Signals> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut forward = Vec::new();
        for &sig in crate::base::stop::signals() {
            signal_hook::flag::register(sig, Arc::clone(&stop))
                .with_context(|| format!("cannot handle signal {sig}"))?;
            if sig != libc::SIGINT {
                let f = Arc::new(AtomicBool::new(false));
                signal_hook::flag::register(sig, Arc::clone(&f))
                    .with_context(|| format!("cannot handle signal {sig}"))?;
                forward.push((sig, f));
            }
        }
        Ok(Signals { stop, forward })
    }

    /// Pass the signals that came on to the command (`w`), noting each.
    fn forward_to(&self, w: &Workload, notes: &mut Vec<String>) {
        for (sig, f) in &self.forward {
            if f.swap(false, Ordering::Relaxed) {
                w.kill(*sig);
                let name = if *sig == libc::SIGHUP {
                    "SIGHUP"
                } else {
                    "SIGTERM"
                };
                let note = format!("{name} forwarded to the command");
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
}

/// Step of `count`: what to count (CPUs, the command, or a PID's threads)
/// and, for a PID, its thread count.
fn targets_of(req: &Request, workload: Option<&Workload>) -> Result<(Vec<Target>, Option<usize>)> {
    let mut threads = None;
    let targets: Vec<Target> = if let Some(cpus) = &req.cpus {
        cpus.iter().map(|c| Target::Cpu(c as u32)).collect()
    } else if let Some(w) = workload {
        vec![Target::Task {
            tid: w.pid(),
            inherit: true,
            enable_on_exec: true,
        }]
    } else {
        let pid = req.pid.unwrap_or(0);
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
    Ok((targets, threads))
}

/// Step of `count`: open the counters on the targets, an error that says why
/// when the target is gone or counting is not allowed.
fn open_counters(
    groups: &[Vec<events::Event>],
    targets: &[Target],
    env: &PerfEnv,
    req: &Request,
) -> Result<CounterGroup> {
    Ok(match CounterGroup::open(groups, targets, env.clone()) {
        Ok(g) => g,
        Err(TargetError::Gone) => match req.pid {
            Some(p) => bail!("process {p} exited before counters could be attached"),
            None => bail!("the command exited before counters could be attached"),
        },
        Err(TargetError::Denied(errno, reason)) => match req.pid {
            Some(p) => bail!(
                "not allowed to count process {p} ({}): it needs ptrace rights over the process \
                 (same user, or CAP_PERFMON/CAP_SYS_PTRACE) and a permitting \
                 kernel.perf_event_paranoid (now {})",
                super::raw::errno_name(errno),
                env.paranoid
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "unknown".into())
            ),
            None => bail!("not allowed to count: {reason}"),
        },
    })
}

/// Step of `count`: wait for the end (command exit, duration, PID exit,
/// signal), taking interval readings; the exit, whether the PID exited, the
/// intervals not handed to `watch`.
fn count_loop(
    cg: &CounterGroup,
    req: &Request,
    watch: &mut dyn Watch,
    mut workload: Option<&mut Workload>,
    signals: &Signals,
    notes: &mut Vec<String>,
    t0: Instant,
) -> (Option<ExitInfo>, bool, Vec<Interval>) {
    let mut intervals: Vec<Interval> = Vec::new();
    let mut exit: Option<ExitInfo> = None;
    let end = req.duration.map(|d| t0 + d);
    let pidfd = req.pid.and_then(workload::pidfd_open);
    let mut prev = Snapshot {
        samples: Vec::new(),
        wall_ns: Some(0),
    };
    let mut next_tick = req.interval.map(|i| t0 + i);
    let mut pid_exited = false;
    loop {
        let deadline = [end, next_tick].into_iter().flatten().min();
        if let Some(w) = workload.as_deref_mut() {
            let step = Instant::now() + Duration::from_millis(200);
            if let Some(x) = w.wait(Some(deadline.map_or(step, |d| d.min(step)))) {
                exit = Some(x);
                break;
            }
            signals.forward_to(w, notes);
        } else {
            if signals.stop.load(Ordering::Relaxed) {
                notes.push("interrupted".into());
                break;
            }
            if let Some(pid) = req.pid {
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
            if req.pid.is_some() {
                workload::wait_fd_or_sleep(pidfd.as_ref(), Some(left));
            } else {
                std::thread::sleep(left);
            }
        }
        let now = Instant::now();
        if let (Some(tick), Some(iv)) = (next_tick, req.interval) {
            if now >= tick {
                let interval = interval_reading(cg, &mut prev, t0);
                if !watch.interval(&interval) {
                    intervals.push(interval);
                }
                let mut t = tick + iv;
                while t <= now {
                    t += iv;
                }
                next_tick = Some(t);
            }
        }
    }
    (exit, pid_exited, intervals)
}

/// Step of `count`: the readings since snapshot `prev` (all of them the
/// first time), which becomes the snapshot taken now.
fn interval_reading(cg: &CounterGroup, prev: &mut Snapshot, t0: Instant) -> Interval {
    let snap = cg.snapshot();
    let delta = if prev.samples.is_empty() {
        snap.clone()
    } else {
        snap.delta(prev)
    };
    let r = cg.readings_from(&delta);
    let interval = Interval {
        t_s: t0.elapsed().as_secs_f64(),
        metrics: r.metrics(),
        events: r.events,
    };
    *prev = snap;
    interval
}

/// Step of `count`: the readings of each counted CPU in snapshot `snap`.
fn per_cpu_readings(cg: &CounterGroup, snap: &Snapshot) -> Vec<PerCpu> {
    cg.readings_per_target(snap)
        .into_iter()
        .filter_map(|(t, r)| match t {
            Target::Cpu(c) => Some(PerCpu {
                cpu: c,
                metrics: r.metrics(),
                events: r.events,
            }),
            _ => None,
        })
        .collect()
}

/// Step of `count`: what was counted, as the document states it.
fn stat_target(req: &Request, threads: Option<usize>) -> StatTarget {
    let o = &req.opts;
    StatTarget {
        kind: if req.cpus.is_some() {
            "cpus"
        } else if req.pid.is_some() {
            "pid"
        } else {
            "command"
        }
        .into(),
        command: (!o.command.is_empty()).then(|| crate::base::args::lossy_all(&o.command)),
        pid: req.pid,
        threads,
        cpus: req.cpus.as_ref().map(|c| c.to_string()),
    }
}

/// The events this machine knows (`cpuscope stat --list`), as text.
pub fn event_list(sys: &Sysroot) -> String {
    let mut o = String::from("Built-in events (availability depends on the PMU):\n");
    for (n, class) in events::builtin_names() {
        o.push_str(&format!("  {n:<32} [{class}]\n"));
    }
    for pmu in sysfs::pmus(sys) {
        let names = sysfs::pmu_event_names(sys, &pmu);
        if names.is_empty() {
            continue;
        }
        o.push_str(&format!("\nPMU {pmu} (use as NAME or {pmu}/NAME/):\n"));
        for n in names {
            o.push_str(&format!("  {n}\n"));
        }
    }
    let env = PerfEnv::detect(sys);
    if env.core_pmus.is_empty() {
        o.push_str(&format!(
            "\nNo hardware PMU is registered here (event sources: {}): hardware events will be reported as not supported.\n",
            env.pmus.join(", ")
        ));
    }
    o.push_str("\nRaw encodings: rNNNN (hex), or pmu/event=0x..,umask=0x../ using the PMU's format terms.\n");
    o
}

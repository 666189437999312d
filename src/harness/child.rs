//! The one runner of measured child processes (`tune`'s candidates,
//! `workloads`' bc and openssl, `rate`'s copies): each command started
//! stopped (so its counters cover it from exec), bound by a [`Binding`]
//! applied between fork and exec, in a process group of its own, its
//! standard input `/dev/null` or a short text, its output passed through,
//! or kept (the end of it) in files with no name ([`kept_file`]); timed from exec to
//! exit; its CPU time from `wait4`; counted where perf_event allows; its
//! pages sampled per node from /proc/PID/numa_maps of every process of its
//! group while it runs. Several commands run together ([`run_together`]:
//! the copies of a rate) are started one after the other and watched at
//! once; [`run_once`] is the set of one.
//!
//! Ctrl-C (the stop flag) kills every group (SIGTERM, SIGKILL a second
//! later) and reports the runs as interrupted; a run past its time limit is
//! killed the same way and reported as timed out. Processes a command
//! leaves behind in its group are killed when it exits, so they cannot
//! disturb the next run. Nothing fails: what went wrong is in each
//! [`ChildRun`].
//!
//! Also the order of interleaved runs: [`round_order`].

use crate::counters::events::Event;
use crate::counters::group::TargetError;
use crate::counters::workload::{self, ChildStdio, ExitInfo, LaunchOptions, Workload};
use crate::counters::{CounterGroup, Readings, Target};
use crate::harness::counted;
use crate::machine::process::{parse_numa_maps, summarize, Mapping};
use crate::placement::binding::Binding;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Where a command's standard output and error go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// cpuscope's own streams: the user watches the command.
    PassThrough,
    /// Kept: the end of each (at most [`TAIL_BYTES`]) in [`ChildRun`].
    Keep,
    /// Standard output discarded (`/dev/null`), standard error kept.
    KeepErrors,
}

/// What to run and how to watch it.
pub struct ChildSpec<'a> {
    /// The command and its arguments (placeholders already filled), as
    /// bytes: passed to exec as they are.
    pub argv: Vec<OsString>,
    /// Environment variables set for it.
    pub env: &'a [(String, String)],
    pub binding: &'a Binding,
    /// Text given on its standard input (at most [`STDIN_MAX`] bytes);
    /// None: `/dev/null`.
    pub stdin: Option<&'a str>,
    pub output: Output,
    /// Event groups counted over it and every process it starts (None:
    /// not counted).
    pub counters: Option<&'a [Vec<Event>]>,
    /// Sample numa_maps, with the node of each CPU (None: do not sample).
    pub cpu_nodes: Option<&'a BTreeMap<usize, usize>>,
    /// Kill the command's group when it runs longer than this.
    pub timeout: Option<Duration>,
}

impl<'a> ChildSpec<'a> {
    /// `argv` bound by `binding`: no environment, no input, output kept,
    /// not counted, not sampled, no time limit.
    pub fn new<S: AsRef<OsStr>>(argv: &[S], binding: &'a Binding) -> ChildSpec<'a> {
        ChildSpec {
            argv: argv.iter().map(|a| a.as_ref().to_os_string()).collect(),
            env: &[],
            binding,
            stdin: None,
            output: Output::Keep,
            counters: None,
            cpu_nodes: None,
            timeout: None,
        }
    }
}

/// The most input text a command is given: it is written into the pipe
/// before the command starts, so it must fit the pipe's buffer.
pub const STDIN_MAX: usize = 32 * 1024;

/// The names of the [`Counts`] figures, as their `missing` map keys them:
/// IPC, CPU migrations, page faults, context switches.
pub const COUNT_KEYS: [&str; 4] = ["ipc", "cpu_migrations", "page_faults", "context_switches"];

/// `tune`'s figures of one run, from its counters (inherited by every
/// thread and child process).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counts {
    pub ipc: Option<f64>,
    pub cpu_migrations: Option<f64>,
    pub page_faults: Option<f64>,
    pub context_switches: Option<f64>,
    /// CPU time of the command, seconds.
    pub task_clock_s: Option<f64>,
    /// Why a figure above is absent.
    pub missing: BTreeMap<String, String>,
}

/// What a run's counters gave.
#[derive(Clone, Debug)]
pub enum ChildCounters {
    /// Read at its exit: every event (with its state and reason) and the
    /// notes from opening them.
    Read {
        readings: Readings,
        notes: Vec<String>,
    },
    /// Why they could not be opened.
    NotOpened(String),
}

/// Where the command's pages were while it ran (numa_maps samples).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NumaSample {
    /// Samples taken (0 when it ended before the first).
    pub samples: usize,
    /// Bytes of its own memory ([`is_process_memory`]) on a node where none
    /// of its threads was running at the sample, summed over the samples.
    pub remote_bytes: u64,
    /// All resident bytes, summed over the samples.
    pub total_bytes: u64,
    /// Bytes per node at the last sample.
    pub last_per_node: BTreeMap<usize, u64>,
    /// Nodes its threads ran on at the last sample.
    pub last_cpu_nodes: Vec<usize>,
    /// Why nothing was sampled.
    pub unavailable: Option<String>,
}

impl NumaSample {
    /// Remote share of the resident bytes (0..1), when sampled.
    pub fn remote_share(&self) -> Option<f64> {
        (self.total_bytes > 0).then(|| self.remote_bytes as f64 / self.total_bytes as f64)
    }
}

/// One run of the command.
#[derive(Clone, Debug, Default)]
pub struct ChildRun {
    /// Seconds from exec to exit.
    pub wall_s: f64,
    /// How it ended; None when it could not start or was killed.
    pub exit: Option<ExitInfo>,
    /// Ctrl-C came: the group was killed, the run does not count.
    pub interrupted: bool,
    /// It ran past [`ChildSpec::timeout`] and its group was killed.
    pub timed_out: bool,
    /// Why it could not be started.
    pub launch_error: Option<String>,
    /// The end of its standard output and error (at most [`TAIL_BYTES`]
    /// each), where kept.
    pub stdout: String,
    pub stderr: String,
    /// Bytes it wrote to each kept stream in all: more than [`TAIL_BYTES`]
    /// means `stdout` / `stderr` hold only the end of it.
    pub stdout_len: u64,
    pub stderr_len: u64,
    /// What its counters gave (None: not counted).
    pub counters: Option<ChildCounters>,
    pub numa: NumaSample,
}

impl ChildRun {
    /// A run that never started, and why.
    fn not_started(why: &str) -> ChildRun {
        ChildRun {
            launch_error: Some(why.to_string()),
            ..ChildRun::default()
        }
    }

    /// Exited with status 0.
    pub fn succeeded(&self) -> bool {
        !self.interrupted && self.exit.as_ref().is_some_and(|x| x.code == Some(0))
    }

    /// CPU time of the command and the children it waited for (user +
    /// system, from `wait4`), when it exited.
    pub fn cpu_s(&self) -> Option<f64> {
        self.exit.as_ref().map(|x| x.user_s + x.sys_s)
    }

    /// `tune`'s four figures from the counters (None: not counted).
    pub fn counts(&self) -> Option<Counts> {
        match self.counters.as_ref()? {
            ChildCounters::Read { readings, .. } => Some(counts_of(readings)),
            ChildCounters::NotOpened(why) => {
                let mut c = Counts::default();
                for k in COUNT_KEYS {
                    c.missing.insert(k.into(), why.clone());
                }
                Some(c)
            }
        }
    }

    /// Why the run failed, in one line (None when it succeeded).
    pub fn failure(&self) -> Option<String> {
        if let Some(e) = &self.launch_error {
            return Some(e.clone());
        }
        if self.interrupted {
            return Some(format!("interrupted ({})", crate::base::stop::cause()));
        }
        if self.timed_out {
            return Some(format!(
                "ran past its time limit: its process group was killed after {:.1} s",
                self.wall_s
            ));
        }
        let x = self.exit.as_ref()?;
        let how = match (x.code, x.signal) {
            (Some(0), _) => return None,
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            _ => "ended in an unknown way".into(),
        };
        let last = self
            .stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| {
                format!(
                    " (stderr: {})",
                    l.trim().chars().take(160).collect::<String>()
                )
            })
            .unwrap_or_default();
        Some(format!("{how}{last}"))
    }
}

/// Bytes kept of each output stream (its end).
pub const TAIL_BYTES: u64 = 4 << 20;

/// A file for one kept output stream, with no name anywhere (the child gets
/// a copy of its descriptor): a memfd, in memory, so that a full or
/// read-only disk changes nothing; where the kernel has none (before 3.17),
/// an unlinked file in `$TMPDIR`, else `/tmp` (`base::tempdir`: the error
/// names each place tried). [`trim_head`] bounds it.
fn kept_file() -> Result<File, String> {
    let name = b"cpuscope-output\0";
    // SAFETY: a NUL-terminated name and a flag; no wrapper in glibc 2.17.
    let fd = unsafe { libc::syscall(libc::SYS_memfd_create, name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd >= 0 {
        // SAFETY: a fresh descriptor from the kernel, owned here.
        return Ok(unsafe { File::from_raw_fd(fd as i32) });
    }
    crate::base::tempdir::first_usable(false, |d| temp_output_in(d).map_err(|e| e.to_string()))
}

/// Free the head of a kept stream that has grown past twice [`TAIL_BYTES`],
/// all but its last `TAIL_BYTES` (whole pages; the size and the writer's
/// offset stay), so a chatty command holds about `2 × TAIL_BYTES` of memory
/// or disk, not all it wrote. `freed` is how far it was freed before.
fn trim_head(f: &File, freed: &mut u64) {
    let Ok(len) = f.metadata().map(|m| m.len()) else {
        return;
    };
    let cut = len.saturating_sub(TAIL_BYTES) & !0xffff;
    if len <= 2 * TAIL_BYTES || cut <= *freed + TAIL_BYTES {
        return;
    }
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: fallocate on a descriptor we own; a range inside the file.
    if unsafe { libc::fallocate(f.as_raw_fd(), mode, 0, cut as libc::off_t) } == 0 {
        *freed = cut;
    }
}

/// An unlinked file in `dir` for one output stream (created new, then its
/// name removed).
fn temp_output_in(dir: &std::path::Path) -> std::io::Result<File> {
    for i in 0..100u32 {
        let p = dir.join(format!(
            ".cpuscope-out-{}-{}-{i}",
            std::process::id(),
            nanos()
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&p);
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free temporary file name"))
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// The last [`TAIL_BYTES`] of a kept stream, and how many bytes it got.
fn tail_of(f: &mut File) -> (String, u64) {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES);
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(start)).is_ok() {
        let _ = f.take(TAIL_BYTES).read_to_end(&mut buf);
    }
    (String::from_utf8_lossy(&buf).into_owned(), len)
}

/// The events behind [`Counts`]: software first (always there unless
/// perf_event is refused), then cycles and instructions (a PMU).
pub fn count_events() -> Vec<Vec<Event>> {
    vec![
        [
            "task-clock",
            "context-switches",
            "cpu-migrations",
            "page-faults",
        ]
        .iter()
        .map(|n| Event::named(n))
        .collect(),
        ["cycles", "instructions"]
            .iter()
            .map(|n| Event::named(n))
            .collect(),
    ]
}

fn dev_null(write: bool) -> Result<OwnedFd, String> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .open("/dev/null")
        .map(OwnedFd::from)
        .map_err(|e| format!("cannot open /dev/null: {e}"))
}

/// The read end of a pipe that already holds `text` (written before the
/// command starts; non-blocking, so a pipe too small is an error, not a
/// hang).
fn stdin_text(text: &str) -> Result<OwnedFd, String> {
    if text.len() > STDIN_MAX {
        return Err(format!(
            "the command's input is {} bytes: at most {} KiB is passed through the pipe before it starts",
            text.len(),
            STDIN_MAX / 1024
        ));
    }
    let (r, w) =
        workload::pipe().map_err(|e| format!("cannot create a pipe for the input: {e}"))?;
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(w.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(w.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
    File::from(w)
        .write_all(text.as_bytes())
        .map_err(|e| format!("cannot pass the input to the command: {e}"))?;
    Ok(r)
}

/// The files a run's kept output goes to: (stdout, stderr).
type Kept = (Option<File>, Option<File>);

/// The command's standard streams, and the files its kept output goes to
/// (to read the tails from). Err: why they could not be made.
fn child_stdio(spec: &ChildSpec) -> Result<(ChildStdio, Kept), String> {
    let stdin = match spec.stdin {
        Some(text) => stdin_text(text)?,
        None => dev_null(false)?,
    };
    let mut stdio = ChildStdio {
        stdin: Some(stdin),
        ..ChildStdio::default()
    };
    let temp = || {
        kept_file()
            .map_err(|e| format!("cannot create a temporary file for the command's output: {e}"))
    };
    let copy = |f: &File| f.try_clone().ok().map(OwnedFd::from);
    let mut kept: Kept = (None, None);
    if spec.output == Output::Keep {
        let o = temp()?;
        stdio.stdout = copy(&o);
        kept.0 = Some(o);
    } else if spec.output == Output::KeepErrors {
        stdio.stdout = Some(dev_null(true)?);
    }
    if spec.output != Output::PassThrough {
        let e = temp()?;
        stdio.stderr = copy(&e);
        kept.1 = Some(e);
    }
    Ok((stdio, kept))
}

/// The counters `groups` of the prepared (not yet started) process `pid`
/// and its children, enabled at its exec; or why they could not be opened.
fn open_counters(pid: i32, groups: &[Vec<Event>]) -> Result<CounterGroup, String> {
    let target = Target::Task {
        tid: pid,
        inherit: true,
        enable_on_exec: true,
    };
    match CounterGroup::open(groups, &[target], counted::perf_env()) {
        Ok(g) => Ok(g),
        Err(TargetError::Gone) => {
            Err("the child exited before counters could be attached".to_string())
        }
        Err(TargetError::Denied(_, r)) => Err(format!("not allowed to count the child: {r}")),
    }
}

/// One command of a set, from its fork to its end.
struct Live<'s> {
    spec: &'s ChildSpec<'s>,
    w: Workload,
    kept: Kept,
    /// How far the head of each kept stream was freed ([`trim_head`]).
    freed: [u64; 2],
    counters: Option<Result<CounterGroup, String>>,
    /// Released to exec.
    t0: Instant,
    /// Killed (Ctrl-C or its time limit) at this instant.
    killed: Option<Instant>,
    done: bool,
    next_sample: Instant,
    gap: Duration,
    run: ChildRun,
}

/// Fork `spec`'s command, stopped before exec, and open its counters.
fn prepare<'s>(spec: &'s ChildSpec<'s>) -> Result<Live<'s>, String> {
    if spec.argv.is_empty() {
        return Err("no command given".into());
    }
    let (stdio, kept) = child_stdio(spec)?;
    let binding = spec.binding;
    let apply = move || binding.apply_raw();
    let opts = LaunchOptions {
        env: spec.env.to_vec(),
        own_group: true,
        before_exec: Some(&apply),
    };
    let w = Workload::prepare_opts(&spec.argv, stdio, &opts).map_err(|e| e.message)?;
    let counters = spec.counters.map(|g| open_counters(w.pid(), g));
    let now = Instant::now();
    Ok(Live {
        spec,
        w,
        kept,
        freed: [0, 0],
        counters,
        t0: now,
        killed: None,
        done: false,
        next_sample: now,
        gap: Duration::from_millis(200),
        run: ChildRun::default(),
    })
}

impl Live<'_> {
    /// Release it to exec; Err: why exec failed.
    fn start(&mut self) -> Result<(), String> {
        if let Some(Ok(g)) = self.counters.as_mut() {
            g.mark_started();
        }
        self.t0 = Instant::now();
        self.next_sample = self.t0 + Duration::from_millis(100);
        self.w.start(&self.spec.argv[0]).map_err(|e| e.message)
    }

    /// Reap it if it has ended (without waiting).
    fn poll(&mut self) {
        if let Some(x) = self.w.wait(Some(Instant::now())) {
            if self.killed.is_none() {
                self.run.wall_s = self.t0.elapsed().as_secs_f64();
                self.run.exit = Some(x);
            }
            self.done = true;
        }
    }

    /// Kill its group (SIGTERM) for Ctrl-C or its time limit.
    fn kill(&mut self, interrupted: bool) {
        self.run.wall_s = self.t0.elapsed().as_secs_f64();
        self.run.interrupted = interrupted;
        self.run.timed_out = !interrupted;
        self.killed = Some(Instant::now());
        self.w.kill_group(libc::SIGTERM);
    }

    /// A group that outlived SIGTERM by a second gets SIGKILL.
    fn kill_hard_if_late(&mut self) {
        if self
            .killed
            .is_some_and(|k| k.elapsed() >= Duration::from_secs(1))
        {
            self.w.kill_group(libc::SIGKILL);
            let _ = self.w.wait(None);
            self.done = true;
        }
    }

    /// Keep its kept output to about its tail ([`trim_head`]).
    fn trim(&mut self) {
        let [o, e] = &mut self.freed;
        for (f, freed) in [(&self.kept.0, o), (&self.kept.1, e)] {
            if let Some(f) = f {
                trim_head(f, freed);
            }
        }
    }

    /// One numa_maps sample when it is due.
    fn sample(&mut self) {
        if let Some(map) = self.spec.cpu_nodes {
            if Instant::now() >= self.next_sample {
                sample_numa(self.w.pid(), map, &mut self.run.numa);
                self.next_sample = Instant::now() + self.gap;
                self.gap = (self.gap * 2).min(Duration::from_secs(1));
            }
        }
    }

    /// When it next needs attention: a sample, SIGKILL, or its time limit.
    fn next_event(&self) -> Option<Instant> {
        let sample = self.spec.cpu_nodes.map(|_| self.next_sample);
        let hard = self.killed.map(|k| k + Duration::from_secs(1));
        let limit = match self.killed {
            None => self.spec.timeout.map(|t| self.t0 + t),
            Some(_) => None,
        };
        [sample, hard, limit].into_iter().flatten().min()
    }

    /// Its run, once it has ended: what it left in its group killed, its
    /// counters read, its kept output's tails.
    fn finish(mut self) -> ChildRun {
        self.w.kill_group(libc::SIGKILL);
        let mut run = std::mem::take(&mut self.run);
        run.counters = self.counters.take().map(|c| match c {
            Ok(mut g) => {
                g.mark_stopped();
                ChildCounters::Read {
                    readings: g.read(),
                    notes: g.notes().to_vec(),
                }
            }
            Err(why) => ChildCounters::NotOpened(why),
        });
        if self.spec.cpu_nodes.is_some() && run.numa.samples == 0 && run.numa.unavailable.is_none()
        {
            run.numa.unavailable = Some(format!(
                "not sampled: the command ended within {:.0} ms, before the first numa_maps sample",
                run.wall_s * 1000.0
            ));
        }
        if let Some(o) = self.kept.0.as_mut() {
            (run.stdout, run.stdout_len) = tail_of(o);
        }
        if let Some(e) = self.kept.1.as_mut() {
            (run.stderr, run.stderr_len) = tail_of(e);
        }
        run
    }
}

/// Run `spec` once; `stop` (Ctrl-C) interrupts it. Never fails: what went
/// wrong is in the returned run.
pub fn run_once(spec: &ChildSpec, stop: &AtomicBool) -> ChildRun {
    run_together(std::slice::from_ref(spec), stop)
        .pop()
        .unwrap_or_default()
}

/// Run every command of `specs` at the same time and wait for them all:
/// each is forked and its counters opened first, then all are released to
/// exec one after the other. Where one cannot be started, none runs and
/// every run carries that reason. `stop` (Ctrl-C) kills them all; set
/// before, it starts none (each run says interrupted).
pub fn run_together(specs: &[ChildSpec], stop: &AtomicBool) -> Vec<ChildRun> {
    let not_started = |why: &str| vec![ChildRun::not_started(why); specs.len()];
    if stop.load(Ordering::Relaxed) {
        // Ctrl-C came before: nothing is started.
        let run = ChildRun {
            interrupted: true,
            ..ChildRun::default()
        };
        return vec![run; specs.len()];
    }
    let mut live = Vec::with_capacity(specs.len());
    for s in specs {
        match prepare(s) {
            Ok(l) => live.push(l),
            // The prepared ones are killed and reaped as they drop.
            Err(why) => return not_started(&why),
        }
    }
    for i in 0..live.len() {
        if let Err(why) = live[i].start() {
            for l in &live[..i] {
                l.w.kill_group(libc::SIGKILL);
            }
            return not_started(why.as_str());
        }
    }
    watch(&mut live, stop);
    live.into_iter().map(Live::finish).collect()
}

/// Wait for every command of the set to end: each reaped as soon as its
/// pidfd says it ended; killed on Ctrl-C or at its time limit; its pages
/// sampled on schedule.
fn watch(live: &mut [Live], stop: &AtomicBool) {
    const TICK: Duration = Duration::from_millis(50);
    loop {
        live.iter_mut().filter(|l| !l.done).for_each(Live::poll);
        if live.iter().all(|l| l.done) {
            return;
        }
        let interrupted = stop.load(Ordering::Relaxed);
        for l in live.iter_mut().filter(|l| !l.done) {
            let late = l.spec.timeout.is_some_and(|t| l.t0.elapsed() > t);
            if l.killed.is_none() && (interrupted || late) {
                l.kill(!late);
            }
            l.kill_hard_if_late();
            l.sample();
            l.trim();
        }
        let now = Instant::now();
        let next = live
            .iter()
            .filter(|l| !l.done)
            .filter_map(Live::next_event)
            .min()
            .map_or(TICK, |t| t.saturating_duration_since(now).min(TICK));
        let waiting: Vec<&Workload> = live.iter().filter(|l| !l.done).map(|l| &l.w).collect();
        workload::wait_any(&waiting, next);
    }
}

fn counts_of(r: &Readings) -> Counts {
    let m = r.metrics();
    let mut c = Counts {
        ipc: m.ipc,
        ..Counts::default()
    };
    if let Some(why) = m.missing.get(COUNT_KEYS[0]) {
        c.missing.insert(COUNT_KEYS[0].into(), why.clone());
    }
    let mut take = |key: &str, field: &str| match r.value(key) {
        Ok(v) => Some(v),
        Err(why) => {
            c.missing.insert(field.into(), why);
            None
        }
    };
    let mig = take("cpu-migrations", "cpu_migrations");
    let pf = take("page-faults", "page_faults");
    let cs = take("context-switches", "context_switches");
    let tc = take("task-clock", "task_clock_s").map(|ns| ns / 1e9);
    c.cpu_migrations = mig;
    c.page_faults = pf;
    c.context_switches = cs;
    c.task_clock_s = tc;
    c
}

/// The processes whose process group is `pgid`, with the CPU each of
/// their threads last ran on.
fn group_members(pgid: i32) -> Vec<(i32, Vec<usize>)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if stat_field(&stat, 5).and_then(|s| s.parse::<i32>().ok()) != Some(pgid) {
            continue;
        }
        let mut cpus = Vec::new();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let p = t.path().join("stat");
                if let Some(c) = std::fs::read_to_string(p)
                    .ok()
                    .and_then(|s| stat_field(&s, 39).and_then(|f| f.parse::<usize>().ok()))
                {
                    cpus.push(c);
                }
            }
        }
        out.push((pid, cpus));
    }
    out
}

/// Field `n` (1-based, as in proc(5)) of a /proc/PID/stat line; the command
/// name (field 2) may hold spaces and parentheses.
pub fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let (_, rest) = stat.rsplit_once(')')?;
    if n < 3 {
        return None;
    }
    rest.split_whitespace().nth(n - 3)
}

/// The process's own memory: anonymous mappings, heap, stacks and shared
/// memory (shm, SysV, memfd), not program text and the page cache of the
/// files it maps (placed by whoever read them first).
pub fn is_process_memory(m: &Mapping) -> bool {
    match &m.file {
        None => true,
        Some(f) => {
            f.starts_with("/dev/shm/")
                || f.starts_with("/SYSV")
                || f.starts_with("/memfd:")
                || f.starts_with("/dev/zero")
        }
    }
}

/// One numa_maps sample of the group `pgid` into `acc`.
fn sample_numa(pgid: i32, cpu_nodes: &BTreeMap<usize, usize>, acc: &mut NumaSample) {
    let members = group_members(pgid);
    let mut per_node: BTreeMap<usize, u64> = BTreeMap::new();
    let mut home: BTreeSet<usize> = BTreeSet::new();
    let mut read_any = false;
    for (pid, cpus) in &members {
        home.extend(cpus.iter().filter_map(|c| cpu_nodes.get(c)));
        match std::fs::read_to_string(format!("/proc/{pid}/numa_maps")) {
            Ok(t) => {
                read_any = true;
                let maps: Vec<_> = parse_numa_maps(&t)
                    .into_iter()
                    .filter(is_process_memory)
                    .collect();
                for n in summarize(&maps).per_node {
                    *per_node.entry(n.node).or_insert(0) += n.amount.bytes;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && acc.samples == 0 => {
                acc.unavailable = Some(
                    "/proc/PID/numa_maps does not exist: a kernel without NUMA (CONFIG_NUMA)"
                        .into(),
                );
            }
            Err(_) => {}
        }
    }
    if !read_any || home.is_empty() {
        return;
    }
    acc.unavailable = None;
    acc.samples += 1;
    let total: u64 = per_node.values().sum();
    let remote: u64 = per_node
        .iter()
        .filter(|(n, _)| !home.contains(n))
        .map(|(_, b)| *b)
        .sum();
    acc.total_bytes += total;
    acc.remote_bytes += remote;
    acc.last_per_node = per_node;
    acc.last_cpu_nodes = home.into_iter().collect();
}

/// A small deterministic generator (SplitMix64) for run orders.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The order of round `round` over the items `live` (indices): every item
/// once, shuffled (Fisher–Yates) by a generator seeded from `seed` and the
/// round, so a run is reproducible and each round's order differs.
pub fn round_order(live: &[usize], round: u64, seed: u64) -> Vec<usize> {
    let mut v = live.to_vec();
    let mut g = SplitMix64::new(seed ^ round.wrapping_mul(0xd6e8_feb8_6659_fd93));
    for i in (1..v.len()).rev() {
        let j = g.below(i + 1);
        v.swap(i, j);
    }
    v
}

#[cfg(test)]
mod tests;

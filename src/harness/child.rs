//! Running a user's command once, as a measured child: started stopped (so
//! its counters cover it from exec), bound by a [`Binding`] applied between
//! fork and exec, in a process group of its own, its standard input
//! `/dev/null` and its output kept in unlinked temporary files; timed from
//! exec to exit; counted (task clock, context switches, migrations, page
//! faults, cycles, instructions) where perf_event allows; its pages sampled
//! per node from /proc/PID/numa_maps of every process of its group while it
//! runs. Ctrl-C (the stop flag) kills the whole group (SIGTERM, SIGKILL a
//! second later) and reports the run as interrupted; so does a run past its
//! time limit, reported as timed out. Processes the command leaves behind in its group are killed
//! when it exits, so they cannot disturb the next run.
//!
//! Also the order of interleaved runs: [`round_order`].

use crate::base::Sysroot;
use crate::counters::events::Event;
use crate::counters::workload::{ChildStdio, ExitInfo, LaunchOptions, Workload};
use crate::counters::{CounterGroup, PerfEnv, Target};
use crate::machine::process::{parse_numa_maps, summarize, Mapping};
use crate::placement::binding::Binding;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What to run and how to watch it.
pub struct ChildSpec<'a> {
    /// The command and its arguments (placeholders already filled).
    pub argv: &'a [String],
    /// Environment variables set for it.
    pub env: &'a [(String, String)],
    pub binding: &'a Binding,
    /// Keep stdout/stderr (for a score) instead of passing them through.
    pub capture: bool,
    /// Count events with perf_event.
    pub counters: bool,
    /// Sample numa_maps, with the node of each CPU (None: do not sample).
    pub cpu_nodes: Option<&'a BTreeMap<usize, usize>>,
    /// Kill the command's group when it runs longer than this.
    pub timeout: Option<Duration>,
}

/// The names of the [`Counts`] figures, as their `missing` map keys them:
/// IPC, CPU migrations, page faults, context switches.
pub const COUNT_KEYS: [&str; 4] = ["ipc", "cpu_migrations", "page_faults", "context_switches"];

/// Counts over one run (inherited by every thread and child process).
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
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChildRun {
    /// Seconds from exec to exit.
    pub wall_s: f64,
    /// How it ended; None when it could not start or was interrupted.
    pub exit: Option<ExitInfo>,
    /// Ctrl-C came: the group was killed, the run does not count.
    pub interrupted: bool,
    /// It ran past [`ChildSpec::timeout`] and its group was killed.
    pub timed_out: bool,
    /// Why it could not be started.
    pub launch_error: Option<String>,
    /// The end of its standard output and error (at most [`TAIL_BYTES`] each), when captured.
    #[serde(skip)]
    pub stdout: String,
    #[serde(skip)]
    pub stderr: String,
    pub counts: Option<Counts>,
    pub numa: NumaSample,
}

impl ChildRun {
    /// Exited with status 0.
    pub fn succeeded(&self) -> bool {
        !self.interrupted && self.exit.as_ref().is_some_and(|x| x.code == Some(0))
    }

    /// Why the run failed, in one line (None when it succeeded).
    pub fn failure(&self) -> Option<String> {
        if let Some(e) = &self.launch_error {
            return Some(e.clone());
        }
        if self.interrupted {
            return Some("interrupted (Ctrl-C)".into());
        }
        if self.timed_out {
            return Some(format!(
                "ran longer than the limit (--run-timeout): killed after {:.1} s",
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

/// An unlinked temporary file for one output stream; the child gets a copy
/// of its descriptor.
fn temp_output() -> std::io::Result<File> {
    let dir = std::env::temp_dir();
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

fn tail_of(f: &mut File) -> String {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES);
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(start)).is_ok() {
        let _ = f.take(TAIL_BYTES).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// The events counted for each run: software first (always there unless
/// perf_event is refused), then cycles and instructions (a PMU).
fn events() -> Vec<Vec<Event>> {
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

/// The command's standard streams: stdin from /dev/null; with `capture`,
/// stdout and stderr to two temporary files (also returned, to read the
/// tails from). Err: why the files could not be made.
fn child_stdio(spec: &ChildSpec) -> Result<(ChildStdio, Option<(File, File)>), String> {
    let mut stdio = ChildStdio {
        stdin: File::open("/dev/null").ok().map(OwnedFd::from),
        ..ChildStdio::default()
    };
    if !spec.capture {
        return Ok((stdio, None));
    }
    match (temp_output(), temp_output()) {
        (Ok(o), Ok(e)) => {
            stdio.stdout = o.try_clone().ok().map(OwnedFd::from);
            stdio.stderr = e.try_clone().ok().map(OwnedFd::from);
            Ok((stdio, Some((o, e))))
        }
        (Err(e), _) | (_, Err(e)) => Err(format!(
            "cannot create a temporary file for the command's output in {}: {e}",
            std::env::temp_dir().display()
        )),
    }
}

/// The counters of the prepared (not yet started) process `pid` and its
/// children, enabled at its exec; or why they could not be opened.
fn open_counters(pid: i32) -> (Option<CounterGroup>, Option<String>) {
    let env = Sysroot::new("/")
        .map(|s| PerfEnv::detect(&s))
        .unwrap_or_default();
    let target = Target::Task {
        tid: pid,
        inherit: true,
        enable_on_exec: true,
    };
    match CounterGroup::open(&events(), &[target], env) {
        Ok(g) => (Some(g), None),
        Err(e) => (None, Some(format!("counters not opened: {e:?}"))),
    }
}

/// Run `spec` once; `stop` (Ctrl-C) interrupts it. Never fails: what went
/// wrong is in the returned run.
pub fn run_once(spec: &ChildSpec, stop: &AtomicBool) -> ChildRun {
    let mut run = ChildRun::default();
    let Some(name) = spec.argv.first() else {
        run.launch_error = Some("no command given".into());
        return run;
    };
    let (stdio, outs) = match child_stdio(spec) {
        Ok(x) => x,
        Err(e) => {
            run.launch_error = Some(e);
            return run;
        }
    };
    let binding = spec.binding;
    let apply = move || binding.apply_raw();
    let opts = LaunchOptions {
        env: spec.env.to_vec(),
        own_group: true,
        before_exec: Some(&apply),
    };
    let mut w = match Workload::prepare_opts(spec.argv, stdio, &opts) {
        Ok(w) => w,
        Err(e) => {
            run.launch_error = Some(e.message);
            return run;
        }
    };
    let (mut cg, count_note) = if spec.counters {
        open_counters(w.pid())
    } else {
        (None, None)
    };
    let t0 = Instant::now();
    if let Some(g) = cg.as_mut() {
        g.mark_started();
    }
    if let Err(e) = w.start(name) {
        run.launch_error = Some(e.message);
        return run;
    }
    let mut next_sample = t0 + Duration::from_millis(100);
    let mut gap = Duration::from_millis(200);
    loop {
        let now = Instant::now();
        let deadline = (now + Duration::from_millis(50)).min(next_sample.max(now));
        if let Some(x) = w.wait(Some(deadline)) {
            run.wall_s = t0.elapsed().as_secs_f64();
            run.exit = Some(x);
            break;
        }
        let late = spec.timeout.is_some_and(|t| t0.elapsed() > t);
        if stop.load(Ordering::Relaxed) || late {
            run.wall_s = t0.elapsed().as_secs_f64();
            run.interrupted = !late;
            run.timed_out = late;
            w.kill_group(libc::SIGTERM);
            if w.wait(Some(Instant::now() + Duration::from_secs(1)))
                .is_none()
            {
                w.kill_group(libc::SIGKILL);
                let _ = w.wait(None);
            }
            break;
        }
        if let Some(map) = spec.cpu_nodes {
            if Instant::now() >= next_sample {
                sample_numa(w.pid(), map, &mut run.numa);
                next_sample = Instant::now() + gap;
                gap = (gap * 2).min(Duration::from_secs(1));
            }
        }
    }
    // Whatever it left running in its group goes too.
    w.kill_group(libc::SIGKILL);
    if let Some(g) = cg.as_mut() {
        g.mark_stopped();
        run.counts = Some(counts_of(g));
    } else if spec.counters {
        let mut c = Counts::default();
        let why = count_note.unwrap_or_else(|| "counters not opened".into());
        for k in COUNT_KEYS {
            c.missing.insert(k.into(), why.clone());
        }
        run.counts = Some(c);
    }
    if spec.cpu_nodes.is_some() && run.numa.samples == 0 && run.numa.unavailable.is_none() {
        run.numa.unavailable = Some(format!(
            "not sampled: the command ended within {:.0} ms, before the first numa_maps sample",
            run.wall_s * 1000.0
        ));
    }
    if let Some((mut o, mut e)) = outs {
        run.stdout = tail_of(&mut o);
        run.stderr = tail_of(&mut e);
    }
    run
}

fn counts_of(g: &CounterGroup) -> Counts {
    let r = g.read();
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
mod tests {
    use super::*;

    #[test]
    fn stat_fields() {
        let s = "123 (a (b) c) S 1 456 456 0 -1";
        assert_eq!(stat_field(s, 3), Some("S"));
        assert_eq!(stat_field(s, 5), Some("456"));
        assert_eq!(stat_field(s, 2), None);
    }

    #[test]
    fn orders_are_permutations() {
        let live = [0, 1, 2, 3, 4];
        let mut seen = std::collections::BTreeSet::new();
        for r in 0..20 {
            let mut o = round_order(&live, r, 17);
            seen.insert(o.clone());
            o.sort_unstable();
            assert_eq!(o, live);
        }
        assert!(seen.len() > 10);
        assert_eq!(round_order(&live, 3, 17), round_order(&live, 3, 17));
    }
}

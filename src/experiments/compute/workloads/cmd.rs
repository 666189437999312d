//! The workloads' commands (bc, openssl): found in PATH, bound to their
//! CPUs and memory, run once or as copies together through the harness's
//! child runner, counted, their exit checked.

use crate::base::CpuSet;
use crate::counters::events;
use crate::harness::child::{run_once, run_together, ChildCounters, ChildRun, ChildSpec, Output};
use crate::harness::counted::{self, Counted};
use crate::placement::binding::Binding;
use crate::placement::mempolicy::MemPolicy;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What counters cover for a child-process workload.
pub const COUNTED_SCOPE_CHILD: &str =
    "the child process and every process it starts (inherit), from its exec to its exit";

// ---------------------------------------------------------------------------
// Child processes.

/// One finished child process.
#[derive(Clone, Debug, Default)]
pub struct ProcRun {
    pub wall_s: f64,
    /// CPU time of the child (user + system, from wait4's rusage); None if unknown.
    pub cpu_s: Option<f64>,
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

/// A command to run as a child: program, arguments, optional stdin text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cmd {
    pub program: PathBuf,
    /// As the kernel takes them: bytes (`rate -- CMD` passes them as given).
    pub args: Vec<std::ffi::OsString>,
    pub stdin: Option<String>,
}

impl Cmd {
    /// The command line, for records and messages (on one line, each byte
    /// that is not UTF-8 as `\xNN`, controls escaped: `base::args::display`).
    pub fn display(&self) -> String {
        let mut s = crate::base::args::display(self.program.as_os_str());
        for a in &self.args {
            s.push(' ');
            s.push_str(&crate::base::args::display(a));
        }
        if let Some(i) = &self.stdin {
            s = format!("echo '{}' | {s}", i.trim_end());
        }
        s
    }
}

/// Find an executable in PATH.
pub fn find_in_path(name: impl AsRef<std::ffi::OsStr>) -> Option<PathBuf> {
    let name = name.as_ref();
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

impl Cmd {
    /// The program and its arguments, as the child runner takes them: the
    /// program's path as bytes (a PATH directory need not be UTF-8).
    fn argv(&self) -> Vec<std::ffi::OsString> {
        let mut argv = vec![self.program.clone().into_os_string()];
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// The harness's run of this command as a finished process, or why it
    /// did not finish: it could not start, Ctrl-C, or past `timeout`.
    fn finished(&self, run: ChildRun, timeout: Duration) -> Result<ProcRun> {
        if let Some(why) = &run.launch_error {
            bail!("cannot start '{}': {why}", self.program.display());
        }
        if run.interrupted {
            bail!("{} interrupted", self.display());
        }
        if run.timed_out {
            bail!(
                "{} timed out after {:.0} s",
                self.display(),
                timeout.as_secs_f64()
            );
        }
        Ok(ProcRun {
            wall_s: run.wall_s,
            cpu_s: run.cpu_s(),
            code: run.exit.as_ref().and_then(|x| x.code),
            stdout: run.stdout,
            stderr: run.stderr,
        })
    }
}

/// Where each copy of a rate runs: on its CPU of `cpus`, its memory by
/// `policy` (from its first page: the binding is applied before exec).
pub fn copy_bindings(cpus: &[usize], policy: Option<&MemPolicy>) -> Result<Vec<Binding>> {
    cpus.iter()
        .map(|&c| Binding::new(Some(&CpuSet::from_ids([c])), policy))
        .collect()
}

/// Run one copy of `cmd` per binding at the same time (the harness's child
/// runner) and wait for them all; standard output discarded, standard
/// error kept. Fails when one cannot start, on Ctrl-C, or past `timeout`
/// (every copy is then killed).
pub fn run_copies(
    cmd: &Cmd,
    bindings: &[Binding],
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<Vec<ProcRun>> {
    let argv = cmd.argv();
    let specs: Vec<ChildSpec> = bindings
        .iter()
        .map(|b| ChildSpec {
            stdin: cmd.stdin.as_deref(),
            output: Output::KeepErrors,
            timeout: Some(timeout),
            ..ChildSpec::new(&argv, b)
        })
        .collect();
    run_together(&specs, stop)
        .into_iter()
        .map(|r| cmd.finished(r, timeout))
        .collect()
}

/// Run one command bound to `cpus` and count it (the harness's child
/// runner): counters attached with inherit (its own children count too)
/// and enabled at its exec. Wall time from its release to its exit; CPU
/// time from wait4. When the counters cannot be attached, the run still
/// happens and the counts say why.
pub fn run_counted(
    cmd: &Cmd,
    cpus: Option<&CpuSet>,
    capture: bool,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<(ProcRun, Counted)> {
    let binding = Binding::new(cpus, None)?;
    let argv = cmd.argv();
    let groups = events::pack(&counted::workload_events());
    let spec = ChildSpec {
        stdin: cmd.stdin.as_deref(),
        output: if capture {
            Output::Keep
        } else {
            Output::KeepErrors
        },
        counters: Some(&groups),
        timeout: Some(timeout),
        ..ChildSpec::new(&argv, &binding)
    };
    let mut run = run_once(&spec, stop);
    let counted = match run.counters.take() {
        Some(ChildCounters::Read { readings, notes }) => {
            Counted::from_readings(COUNTED_SCOPE_CHILD, &readings, &notes)
        }
        Some(ChildCounters::NotOpened(why)) => Counted::unavailable(COUNTED_SCOPE_CHILD, &why),
        None => Counted::unavailable(COUNTED_SCOPE_CHILD, "not counted"),
    };
    Ok((cmd.finished(run, timeout)?, counted))
}

pub(super) fn check_exit(cmd: &Cmd, r: &ProcRun) -> Result<()> {
    if r.code != Some(0) {
        let first = r.stderr.lines().next().unwrap_or("").trim();
        bail!(
            "'{}' exited with {}{}",
            cmd.display(),
            r.code
                .map(|c| format!("status {c}"))
                .unwrap_or_else(|| "a signal".into()),
            if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            }
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// bc.

//! Starting a command stopped, so counters can be attached before it runs:
//! fork, let the child block on a pipe, open counters on its pid (with
//! enable_on_exec), then release it to exec. A second close-on-exec pipe
//! reports an exec failure back (EOF means exec succeeded). Also: waiting for
//! a process (ours or not) with a timeout.

use crate::base::args::display;
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why a command could not be started, with the shell's exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchError {
    /// 127: not found; 126: found but not executable.
    pub exit_code: i32,
    pub message: String,
}

impl LaunchError {
    fn not_found(msg: String) -> Self {
        LaunchError {
            exit_code: 127,
            message: msg,
        }
    }
    fn not_exec(msg: String) -> Self {
        LaunchError {
            exit_code: 126,
            message: msg,
        }
    }
}

/// How a command ended.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ExitInfo {
    /// Exit status when it exited.
    pub code: Option<i32>,
    /// Signal number when it was killed.
    pub signal: Option<i32>,
    /// User and system CPU time of it and its waited-for children.
    pub user_s: f64,
    pub sys_s: f64,
}

impl ExitInfo {
    /// The exit code a shell would report (128 + signal when killed).
    pub fn shell_code(&self) -> i32 {
        match (self.code, self.signal) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            _ => 1,
        }
    }
}

/// Resolve a command name like a shell (PATH search when it has no '/').
/// The name is bytes, as exec takes it; messages show it escaped.
pub fn resolve_command(name: impl AsRef<OsStr>) -> Result<PathBuf, LaunchError> {
    let name = name.as_ref();
    if name.is_empty() {
        return Err(LaunchError::not_found("empty command name".into()));
    }
    let check = |p: &Path| -> Result<(), LaunchError> {
        let md = std::fs::metadata(p).map_err(|e| {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                LaunchError::not_exec(format!(
                    "cannot run '{}': permission denied",
                    display(p.as_os_str())
                ))
            } else {
                LaunchError::not_found(format!(
                    "cannot run '{}': no such file or directory",
                    display(p.as_os_str())
                ))
            }
        })?;
        if md.is_dir() {
            return Err(LaunchError::not_exec(format!(
                "cannot run '{}': is a directory",
                display(p.as_os_str())
            )));
        }
        let c = CString::new(p.as_os_str().as_bytes()).map_err(|_| {
            LaunchError::not_found(format!("cannot run '{}': bad path", display(p.as_os_str())))
        })?;
        // SAFETY: c is a valid NUL-terminated path.
        let ok = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
        if !ok || md.permissions().mode() & 0o111 == 0 {
            return Err(LaunchError::not_exec(format!(
                "cannot run '{}': permission denied (not executable)",
                display(p.as_os_str())
            )));
        }
        Ok(())
    };
    if name.as_bytes().contains(&b'/') {
        let p = PathBuf::from(name);
        check(&p)?;
        return Ok(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut first_err: Option<LaunchError> = None;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let p = dir.join(name);
        if !p.exists() {
            continue;
        }
        match check(&p) {
            Ok(()) => return Ok(p),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| {
        LaunchError::not_found(format!("cannot run '{}': command not found", display(name)))
    }))
}

fn cstr(s: &OsStr) -> Result<CString, LaunchError> {
    CString::new(s.as_bytes()).map_err(|_| {
        LaunchError::not_found(format!("argument '{}' contains a NUL byte", display(s)))
    })
}

/// A close-on-exec pipe: (read end, write end).
pub fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two fresh descriptors we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Where the child's standard streams go: each `Some` descriptor becomes
/// the child's stdin / stdout / stderr (`dup2` before exec); `None` keeps
/// cpuscope's own. The parent's copies are closed once the child is forked.
#[derive(Debug, Default)]
pub struct ChildStdio {
    pub stdin: Option<OwnedFd>,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
}

/// How to start a child beyond its standard streams.
#[derive(Default)]
pub struct LaunchOptions<'a> {
    /// Environment variables set (or replaced) for the child.
    pub env: Vec<(String, String)>,
    /// Start the child in a process group of its own (its pid), so that a
    /// signal to the group ([`Workload::kill_group`]) reaches every process
    /// the command starts, and the terminal's Ctrl-C reaches only cpuscope.
    pub own_group: bool,
    /// Called in the child after fork, before exec: 0, or an errno (the
    /// child then exits 126 and [`Workload::start`] reports it). Must be
    /// async-signal-safe (raw syscalls on data prepared before fork).
    pub before_exec: Option<&'a (dyn Fn() -> i32 + Sync)>,
}

/// A forked child waiting to exec its command.
pub struct Workload {
    pid: i32,
    go: Option<OwnedFd>,
    status: Option<OwnedFd>,
    reaped: Option<ExitInfo>,
    pidfd: Option<OwnedFd>,
    /// Started in a process group of its own.
    group: bool,
}

/// The child's environment as exec takes it: cpuscope's own, less the
/// variables `env` sets, then `env`'s `name=value` pairs.
fn child_env(env: &[(String, String)]) -> Result<Vec<CString>, LaunchError> {
    let mut cenv: Vec<CString> = std::env::vars_os()
        .filter(|(k, _)| !env.iter().any(|(n, _)| OsStr::new(n) == k))
        .filter_map(|(k, v)| {
            let mut b = k.as_bytes().to_vec();
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            CString::new(b).ok()
        })
        .collect();
    for (k, v) in env {
        cenv.push(cstr(OsStr::new(&format!("{k}={v}")))?);
    }
    Ok(cenv)
}

/// What the forked child uses, all prepared before fork (the child must not
/// allocate): the command, its streams and the two pipes' ends.
struct ChildPlan<'a> {
    cpath: &'a CString,
    argp: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    stdio: &'a ChildStdio,
    own_group: bool,
    before_exec: Option<&'a (dyn Fn() -> i32 + Sync)>,
    go_r: &'a OwnedFd,
    go_w: &'a OwnedFd,
    st_r: &'a OwnedFd,
    st_w: &'a OwnedFd,
}

/// The child after fork: redirect its streams, wait for the parent's go,
/// run the step before exec, and exec; an error goes back on the status
/// pipe and the child exits.
fn exec_in_child(plan: ChildPlan) -> ! {
    let ChildPlan {
        cpath,
        argp,
        envp,
        stdio,
        own_group,
        before_exec,
        go_r,
        go_w,
        st_r,
        st_w,
    } = plan;
    // SAFETY: async-signal-safe calls on descriptors and buffers prepared before fork.
    unsafe {
        libc::close(go_w.as_raw_fd());
        libc::close(st_r.as_raw_fd());
        if own_group {
            libc::setpgid(0, 0);
        }
        for (fd, to) in [(&stdio.stdin, 0), (&stdio.stdout, 1), (&stdio.stderr, 2)] {
            if let Some(fd) = fd {
                // dup2 clears close-on-exec on the copy; the original closes at exec.
                if libc::dup2(fd.as_raw_fd(), to) < 0 {
                    libc::_exit(126);
                }
            }
        }
        let mut b = [0u8; 1];
        let n = loop {
            let n = libc::read(go_r.as_raw_fd(), b.as_mut_ptr() as *mut libc::c_void, 1);
            if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            break n;
        };
        if n != 1 {
            // Parent gave up before starting us.
            libc::_exit(1);
        }
        if let Some(f) = before_exec {
            let e = f();
            if e != 0 {
                // Negative: the step before exec failed, not exec.
                let bytes = (-e).to_ne_bytes();
                libc::write(st_w.as_raw_fd(), bytes.as_ptr() as *const libc::c_void, 4);
                libc::_exit(126);
            }
        }
        libc::execve(cpath.as_ptr(), argp.as_ptr(), envp.as_ptr());
        let e: i32 = *libc::__errno_location();
        let bytes = e.to_ne_bytes();
        libc::write(st_w.as_raw_fd(), bytes.as_ptr() as *const libc::c_void, 4);
        libc::_exit(if e == libc::ENOENT { 127 } else { 126 });
    }
}

impl Workload {
    /// Fork a child that waits for [`Workload::start`] before exec'ing `argv`
    /// (bytes, passed to exec as given).
    pub fn prepare<S: AsRef<OsStr>>(argv: &[S]) -> Result<Workload, LaunchError> {
        Workload::prepare_with(argv, ChildStdio::default())
    }

    /// [`Workload::prepare`] with the child's standard streams redirected.
    /// The child inherits the calling thread's CPU affinity.
    pub fn prepare_with<S: AsRef<OsStr>>(
        argv: &[S],
        stdio: ChildStdio,
    ) -> Result<Workload, LaunchError> {
        Workload::prepare_opts(argv, stdio, &LaunchOptions::default())
    }

    /// [`Workload::prepare_with`] with an environment, a process group of
    /// its own and a step before exec ([`LaunchOptions`]).
    pub fn prepare_opts<S: AsRef<OsStr>>(
        argv: &[S],
        stdio: ChildStdio,
        opts: &LaunchOptions,
    ) -> Result<Workload, LaunchError> {
        let Some(first) = argv.first().map(|a| a.as_ref()) else {
            return Err(LaunchError::not_found("no command given".into()));
        };
        let path = resolve_command(first)?;
        let cpath = cstr(path.as_os_str())?;
        let cargs: Vec<CString> = argv
            .iter()
            .map(|a| cstr(a.as_ref()))
            .collect::<Result<_, _>>()?;
        let cenv = child_env(&opts.env)?;
        let own_group = opts.own_group;
        let before_exec = opts.before_exec;
        let mut argp: Vec<*const libc::c_char> = cargs.iter().map(|c| c.as_ptr()).collect();
        argp.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = cenv.iter().map(|c| c.as_ptr()).collect();
        envp.push(std::ptr::null());

        let io = |e: std::io::Error| LaunchError {
            exit_code: 1,
            message: format!("cannot start '{}': {e}", display(first)),
        };
        let (go_r, go_w) = pipe().map_err(io)?;
        let (st_r, st_w) = pipe().map_err(io)?;
        // SAFETY: fork in a process that, at this point, runs no other threads
        // that hold locks the child needs; the child only calls async-signal-
        // safe functions (close, read, write, execve, _exit) on prepared data.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io(std::io::Error::last_os_error()));
        }
        if pid == 0 {
            // Child.
            exec_in_child(ChildPlan {
                cpath: &cpath,
                argp: &argp,
                envp: &envp,
                stdio: &stdio,
                own_group,
                before_exec,
                go_r: &go_r,
                go_w: &go_w,
                st_r: &st_r,
                st_w: &st_w,
            });
        }
        if own_group {
            // Also here, so the group exists before anyone signals it.
            // SAFETY: setpgid on our own child, which has not exec'd yet.
            unsafe { libc::setpgid(pid, pid) };
        }
        drop(go_r);
        drop(st_w);
        drop(stdio);
        Ok(Workload {
            pid,
            go: Some(go_w),
            status: Some(st_r),
            reaped: None,
            pidfd: pidfd_open(pid),
            group: own_group,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Let the child exec. Returns once exec succeeded, or the exec error
    /// (the child then exits 126/127 and is reaped here).
    pub fn start(&mut self, name: impl AsRef<OsStr>) -> Result<(), LaunchError> {
        let name = display(name.as_ref());
        let Some(go) = self.go.take() else {
            return Ok(());
        };
        let b = [1u8];
        // SAFETY: writing one byte from a valid buffer to our pipe.
        unsafe { libc::write(go.as_raw_fd(), b.as_ptr() as *const libc::c_void, 1) };
        drop(go);
        let Some(st) = self.status.take() else {
            return Ok(());
        };
        let mut buf = [0u8; 4];
        let n = loop {
            // SAFETY: reading into a valid 4-byte buffer.
            let n = unsafe { libc::read(st.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, 4) };
            if n < 0 && super::raw::errno() == libc::EINTR {
                continue;
            }
            break n;
        };
        if n == 4 {
            let e = i32::from_ne_bytes(buf);
            let _ = self.wait(None);
            if e < 0 {
                let msg = std::io::Error::from_raw_os_error(-e).to_string();
                return Err(LaunchError::not_exec(format!(
                    "cannot start '{name}': the step before exec failed: {msg}"
                )));
            }
            let msg = std::io::Error::from_raw_os_error(e).to_string();
            let err = if e == libc::ENOENT {
                LaunchError::not_found(format!("cannot run '{name}': {msg}"))
            } else {
                LaunchError::not_exec(format!("cannot run '{name}': {msg}"))
            };
            return Err(err);
        }
        Ok(())
    }

    /// Wait for the child to end, until `deadline` (None: forever). Returns
    /// its exit when it ended.
    pub fn wait(&mut self, deadline: Option<Instant>) -> Option<ExitInfo> {
        if let Some(r) = &self.reaped {
            return Some(r.clone());
        }
        loop {
            if let Some(info) = self.try_reap() {
                self.reaped = Some(info.clone());
                return Some(info);
            }
            let left = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    Some(d - now)
                }
                None => None,
            };
            if deadline.is_none() && self.pidfd.is_none() {
                // Blocking wait.
                if let Some(info) = self.reap(0) {
                    self.reaped = Some(info.clone());
                    return Some(info);
                }
                continue;
            }
            wait_fd_or_sleep(self.pidfd.as_ref(), left);
        }
    }

    fn try_reap(&mut self) -> Option<ExitInfo> {
        self.reap(libc::WNOHANG)
    }

    fn reap(&mut self, flags: i32) -> Option<ExitInfo> {
        let mut status = 0i32;
        // SAFETY: rusage is plain data filled by the kernel.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointers to locals.
        let r = unsafe { libc::wait4(self.pid, &mut status, flags, &mut ru) };
        if r == self.pid {
            let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let (code, signal) = if libc::WIFEXITED(status) {
                (Some(libc::WEXITSTATUS(status)), None)
            } else if libc::WIFSIGNALED(status) {
                (None, Some(libc::WTERMSIG(status)))
            } else {
                return None;
            };
            return Some(ExitInfo {
                code,
                signal,
                user_s: tv(ru.ru_utime),
                sys_s: tv(ru.ru_stime),
            });
        }
        if r < 0 && super::raw::errno() == libc::ECHILD {
            // Someone else reaped it; report an unknown exit.
            return Some(ExitInfo::default());
        }
        None
    }

    /// Send a signal to the child's process group (children it started
    /// included), when it was started with [`LaunchOptions::own_group`].
    /// Also after the child itself ended: processes it left running in its
    /// group keep the group (and its id) alive, so the id names them only.
    pub fn kill_group(&self, sig: i32) {
        if self.group {
            // SAFETY: signalling the process group our child created.
            unsafe { libc::killpg(self.pid, sig) };
        } else {
            self.kill(sig);
        }
    }

    /// Send a signal to the child (if it still runs).
    pub fn kill(&self, sig: i32) {
        if self.reaped.is_none() {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(self.pid, sig) };
        }
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        if self.reaped.is_none() {
            // Never started, or abandoned: do not leave it running or a zombie.
            self.go.take();
            self.kill(libc::SIGKILL);
            let _ = self.reap(0);
        }
    }
}

/// `pidfd_open(pid)`, None where the kernel lacks it.
pub fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: plain syscall with integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::c_long, 0 as libc::c_long) };
    if fd < 0 {
        None
    } else {
        // SAFETY: fresh descriptor from the kernel.
        Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }
}

/// Wait until one of `fds` is readable (a pidfd: the process ended) or
/// `left` elapses (None: no limit). The limit is rounded up to whole
/// milliseconds, so a wait shorter than 1 ms is not a busy loop.
fn poll_readable(fds: &[RawFd], left: Option<Duration>) {
    let ms = left
        .map(|d| d.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32)
        .unwrap_or(-1);
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `p` holds `p.len()` valid pollfds.
    unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, ms) };
}

/// Wait until `fd` is readable (a pidfd: the process ended) or `left`
/// elapses; without a pidfd sleep a short step.
pub fn wait_fd_or_sleep(fd: Option<&OwnedFd>, left: Option<Duration>) {
    const STEP: Duration = Duration::from_millis(20);
    match fd {
        Some(fd) => poll_readable(&[fd.as_raw_fd()], left),
        None => std::thread::sleep(left.map(|l| l.min(STEP)).unwrap_or(STEP)),
    }
}

/// Wait until one of `ws` has ended (its pidfd readable) or `left` has
/// elapsed. Where one of them has no pidfd (a kernel before 5.3), sleep a
/// short step instead (at most `left`), so an end is seen within 1 ms.
pub fn wait_any(ws: &[&Workload], left: Duration) {
    const STEP: Duration = Duration::from_millis(1);
    let fds: Option<Vec<RawFd>> = ws
        .iter()
        .map(|w| w.pidfd.as_ref().map(|fd| fd.as_raw_fd()))
        .collect();
    match fds {
        Some(fds) if !fds.is_empty() => poll_readable(&fds, Some(left)),
        _ => std::thread::sleep(left.min(STEP)),
    }
}

/// Whether a process exists and is not a zombie.
pub fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            // state is the field after the ")" closing the command name.
            let state = s
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

/// Thread ids of a process.
pub fn process_threads(pid: i32) -> Vec<i32> {
    let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_like_a_shell() {
        assert!(resolve_command("sh").is_ok());
        let e = resolve_command("cpuscope-no-such-command-xyz").unwrap_err();
        assert_eq!(e.exit_code, 127);
        assert!(e.message.contains("command not found"));
        let e = resolve_command("/nonexistent/x").unwrap_err();
        assert_eq!(e.exit_code, 127);
        let e = resolve_command("/").unwrap_err();
        assert_eq!(e.exit_code, 126);
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("script");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        let e = resolve_command(f.to_str().unwrap()).unwrap_err();
        assert_eq!(e.exit_code, 126);
    }

    #[test]
    fn runs_and_passes_exit_code() {
        let mut w = Workload::prepare(&["sh", "-c", "exit 7"]).unwrap();
        w.start("sh").unwrap();
        let x = w.wait(None).unwrap();
        assert_eq!(x.code, Some(7));
        assert_eq!(x.shell_code(), 7);
    }

    #[test]
    fn launch_options_env_group_and_step_before_exec() {
        let argv: Vec<String> = [
            "sh",
            "-c",
            "test \"$CPUSCOPE_T\" = 7 && test \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\"",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let opts = LaunchOptions {
            env: vec![("CPUSCOPE_T".into(), "7".into())],
            own_group: true,
            before_exec: None,
        };
        let mut w = Workload::prepare_opts(&argv, ChildStdio::default(), &opts).unwrap();
        w.start("sh").unwrap();
        assert_eq!(w.wait(None).unwrap().code, Some(0));
        // A failing step before exec is reported, not run.
        let fail = || libc::EPERM;
        let opts = LaunchOptions {
            before_exec: Some(&fail),
            ..LaunchOptions::default()
        };
        let mut w = Workload::prepare_opts(&argv, ChildStdio::default(), &opts).unwrap();
        let e = w.start("sh").unwrap_err();
        assert_eq!(e.exit_code, 126);
        assert!(
            e.message.contains("step before exec failed"),
            "{}",
            e.message
        );
    }

    #[test]
    fn killed_by_signal_is_128_plus() {
        let x = ExitInfo {
            code: None,
            signal: Some(9),
            ..Default::default()
        };
        assert_eq!(x.shell_code(), 137);
    }

    #[test]
    fn alive_and_threads() {
        let me = std::process::id() as i32;
        assert!(process_alive(me));
        assert!(process_threads(me).contains(&me));
        assert!(!process_alive(i32::MAX));
    }
}

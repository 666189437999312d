//! The process's one stop request. [`install`] makes SIGINT, SIGTERM and
//! SIGHUP (a dropped SSH session, a closed terminal) set a process-wide
//! flag (the first one: stop between samples, keep what finished) and exit
//! at once with status 130 on the second. Every loop and every wait of a
//! command that installed it polls [`requested`] (or the flag [`install`]
//! returns), so a command ends within a second of being asked, whatever it
//! waits on (a measurement, a child, a database server).
//!
//! SIGHUP is left alone when the process started with it ignored (`nohup
//! cpuscope ...`): the user asked the run to outlive the terminal, and the
//! commands cpuscope starts inherit that (a handler would be reset to the
//! default at their exec, an ignored signal stays ignored). [`signals`] is
//! the list every handler of these signals registers for.
//!
//! A backstop for what no loop of ours can poll (a thread stuck inside a
//! library or a system call): a thread started by [`install`] sleeps on a
//! socket the signal handlers write to; [`BACKSTOP`] after the first stop
//! signal, if the process is still there, it says so in one line and raises
//! a second signal itself (the handlers then write the machine switches
//! back and exit with status 130, as a second Ctrl-C does).

use anyhow::{Context as _, Result};
use std::io::{Read as _, Write as _};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long after the first stop signal a process still running is ended
/// by the backstop (every wait of ours ends within a second of the signal;
/// a run's last records are stored within a few more).
pub const BACKSTOP: Duration = Duration::from_secs(15);

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static INSTALLED: Mutex<bool> = Mutex::new(false);
/// The first stop signal that came (0: none yet).
static FIRST: AtomicI32 = AtomicI32::new(0);

/// The process-wide stop flag (set by a stop signal once [`install`]ed).
pub fn flag() -> Arc<AtomicBool> {
    Arc::clone(FLAG.get_or_init(|| Arc::new(AtomicBool::new(false))))
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Whether the process started with SIGHUP ignored (`nohup`). Read once,
/// before any handler of ours replaces the disposition, and kept.
pub fn hangup_ignored() -> bool {
    static IGNORED: OnceLock<bool> = OnceLock::new();
    *IGNORED.get_or_init(|| {
        // SAFETY: sigaction with a null new action only reads the current one.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        }
    })
}

/// The signals that ask a command to stop: SIGINT, SIGTERM, and SIGHUP
/// unless the process started with it ignored ([`hangup_ignored`]).
pub fn signals() -> &'static [i32] {
    const ALL: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    if hangup_ignored() {
        &ALL[..2]
    } else {
        &ALL
    }
}

/// What asked for the stop, in words ("Ctrl-C", "SIGTERM", "SIGHUP: the
/// terminal hung up"); "Ctrl-C" when nothing did yet.
pub fn cause() -> &'static str {
    signal_words(FIRST.load(Ordering::Relaxed))
}

/// A stop signal in words (as [`cause`] says it).
pub fn signal_words(sig: i32) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP: the terminal hung up",
        _ => "Ctrl-C",
    }
}

/// Make the stop [`signals`] set the flag (a second one exits with 130);
/// idempotent. Returns the flag.
pub fn install() -> Result<Arc<AtomicBool>> {
    let flag = flag();
    let mut done = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        for &sig in signals() {
            // SAFETY: the action only does a compare-and-swap on an atomic,
            // which is async-signal-safe.
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    let _ = FIRST.compare_exchange(0, sig, Ordering::Relaxed, Ordering::Relaxed);
                })
            }
            .context("cannot install the Ctrl-C handler")?;
            signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&flag))
                .context("cannot install the Ctrl-C handler")?;
            signal_hook::flag::register(sig, Arc::clone(&flag))
                .context("cannot install the Ctrl-C handler")?;
        }
        install_backstop()?;
        *done = true;
    }
    Ok(flag)
}

/// Start the backstop thread (see the module): it blocks on a socket pair
/// the stop signals' handlers write one byte to, so it costs nothing until
/// a signal comes.
fn install_backstop() -> Result<()> {
    if super::glibc::thread_hazard().is_some() {
        // No thread can be started in this process (base::glibc): a spawn
        // would hang here.
        return Ok(());
    }
    let (mut rx, tx) =
        std::os::unix::net::UnixStream::pair().context("cannot install the Ctrl-C backstop")?;
    for &sig in signals() {
        let tx = tx
            .try_clone()
            .context("cannot install the Ctrl-C backstop")?;
        signal_hook::low_level::pipe::register(sig, tx)
            .context("cannot install the Ctrl-C backstop")?;
    }
    std::thread::Builder::new()
        .name("cpuscope-stop".into())
        .spawn(move || {
            let mut byte = [0u8; 1];
            loop {
                match rx.read(&mut byte) {
                    Ok(1) => break,
                    Ok(_) => return,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                }
            }
            std::thread::sleep(BACKSTOP);
            // Straight to stderr (output.rs polls this module: no cycle).
            let _ = writeln!(
                std::io::stderr().lock(),
                "cpuscope: error: stopped ({}) {} s ago and still running: something is stuck; ending now (the figures already stored are kept)",
                cause(),
                BACKSTOP.as_secs()
            );
            // SAFETY: raise has no memory effects; the handlers installed
            // above take it as the second signal (status 130).
            unsafe { libc::raise(libc::SIGINT) };
        })
        .context("cannot install the Ctrl-C backstop")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_signals_and_their_words() {
        let s = signals();
        assert!(s.contains(&libc::SIGINT) && s.contains(&libc::SIGTERM));
        assert_eq!(s.contains(&libc::SIGHUP), !hangup_ignored());
        assert_eq!(signal_words(libc::SIGINT), "Ctrl-C");
        assert!(signal_words(libc::SIGHUP).starts_with("SIGHUP"));
        assert_eq!(signal_words(0), "Ctrl-C");
    }
}

//! The process's one stop request. [`install`] makes SIGINT and SIGTERM set
//! a process-wide flag (the first one: stop between samples, keep what
//! finished) and exit at once with status 130 on the second. Every loop and
//! every wait of a command that installed it polls [`requested`] (or the
//! flag [`install`] returns), so a command ends within a second of being
//! asked, whatever it waits on (a measurement, a child, a database server).
//!
//! A backstop for what no loop of ours can poll (a thread stuck inside a
//! library or a system call): a thread started by [`install`] sleeps on a
//! pipe the signal handler writes to; [`BACKSTOP`] after the first signal,
//! if the process is still there, it says so in one line and raises the
//! second signal itself (the handlers then write the machine switches back
//! and exit with status 130, as a second Ctrl-C does).

use anyhow::{Context as _, Result};
use std::io::Read as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long after the first SIGINT/SIGTERM a process still running is ended
/// by the backstop (every wait of ours ends within a second of the signal;
/// a run's last records are stored within a few more).
pub const BACKSTOP: Duration = Duration::from_secs(15);

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static INSTALLED: Mutex<bool> = Mutex::new(false);

/// The process-wide stop flag (set by SIGINT/SIGTERM once [`install`]ed).
pub fn flag() -> Arc<AtomicBool> {
    Arc::clone(FLAG.get_or_init(|| Arc::new(AtomicBool::new(false))))
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Make SIGINT and SIGTERM set the flag (a second one exits with 130);
/// idempotent. Returns the flag.
pub fn install() -> Result<Arc<AtomicBool>> {
    let flag = flag();
    let mut done = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
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
/// the SIGINT/SIGTERM handlers write one byte to, so it costs nothing until
/// a signal comes.
fn install_backstop() -> Result<()> {
    let (mut rx, tx) =
        std::os::unix::net::UnixStream::pair().context("cannot install the Ctrl-C backstop")?;
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
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
            super::output::err_line(&format!(
                "cpuscope: error: stopped (Ctrl-C) {} s ago and still running: something is stuck; ending now (the figures already stored are kept)",
                BACKSTOP.as_secs()
            ));
            // SAFETY: raise has no memory effects; the handlers installed
            // above take it as the second signal (status 130).
            unsafe { libc::raise(libc::SIGINT) };
        })
        .context("cannot install the Ctrl-C backstop")?;
    Ok(())
}

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
//!
//! A temporary file the careful writer holds ([`remove_on_signal`]) is
//! removed by the signal handler itself, first, on every stop signal:
//! before the exit of a second signal.

use anyhow::{Context as _, Result};
use std::ffi::CString;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};
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

/// The paths of the files to remove if a signal comes ([`remove_on_signal`]):
/// each a C string leaked to the handler, or null. Whoever swaps one out
/// owns it. Four: one per file being written at once.
static DOOMED: [AtomicPtr<libc::c_char>; 4] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 4];

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

/// The handler's first act: unlink the doomed files, if any (`unlink` is
/// async-signal-safe; the strings are left to the process's end).
fn unlink_doomed() {
    DOOMED.iter().for_each(unlink_slot);
}

fn unlink_slot(slot: &AtomicPtr<libc::c_char>) {
    let p = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: p is a NUL-terminated string leaked by remove_on_signal,
        // and only this swap's winner uses it.
        unsafe { libc::unlink(p) };
    }
}

/// Make the stop [`signals`] set the flag (a second one exits with 130),
/// each first removing the file [`remove_on_signal`] names; idempotent.
/// Returns the flag.
pub fn install() -> Result<Arc<AtomicBool>> {
    let flag = flag();
    let mut done = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        let why = "cannot install the Ctrl-C handler";
        for &sig in signals() {
            // Registered first, so it runs before the exit of a second signal.
            // SAFETY: the action only swaps an atomic and calls unlink(2).
            unsafe { signal_hook::low_level::register(sig, unlink_doomed) }.context(why)?;
            // SAFETY: the action only does a compare-and-swap on an atomic,
            // which is async-signal-safe.
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    let _ = FIRST.compare_exchange(0, sig, Ordering::Relaxed, Ordering::Relaxed);
                })
            }
            .context(why)?;
            signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&flag))
                .context(why)?;
            signal_hook::flag::register(sig, Arc::clone(&flag)).context(why)?;
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

/// While this lives, a stop signal ([`signals`]) removes its file (the
/// careful writer's temporary file).
#[derive(Debug)]
pub struct RemoveOnSignal {
    /// The slot of [`DOOMED`] holding `path`; None when all four were taken.
    slot: Option<(usize, *mut libc::c_char)>,
}

/// Have the signal handler ([`install`]ed here) remove `path` if a signal
/// comes before the guard is dropped. [`RemoveOnSignal::signalled`] says
/// whether one came.
pub fn remove_on_signal(path: &Path) -> Result<RemoveOnSignal> {
    install()?;
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .context("a NUL byte in the temporary file's path")?
        .into_raw();
    for (i, slot) in DOOMED.iter().enumerate() {
        let null = std::ptr::null_mut();
        if slot
            .compare_exchange(null, c, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Ok(RemoveOnSignal { slot: Some((i, c)) });
        }
    }
    // SAFETY: the string leaked above, given to no slot.
    drop(unsafe { CString::from_raw(c) });
    Ok(RemoveOnSignal { slot: None })
}

impl RemoveOnSignal {
    /// Whether a signal came (and removed the file) since the guard was made.
    pub fn signalled(&self) -> bool {
        self.slot
            .is_some_and(|(i, p)| DOOMED[i].load(Ordering::SeqCst) != p)
    }
}

impl Drop for RemoveOnSignal {
    fn drop(&mut self) {
        if let Some((i, p)) = self.slot {
            let null = std::ptr::null_mut();
            if DOOMED[i]
                .compare_exchange(p, null, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                // SAFETY: the string remove_on_signal leaked, taken back by us.
                drop(unsafe { CString::from_raw(p) });
            }
        }
    }
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

    #[test]
    fn guards_hold_their_own_slots() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let ga = remove_on_signal(&a).unwrap();
        let gb = remove_on_signal(&b).unwrap();
        assert!(!ga.signalled() && !gb.signalled());
        drop(ga);
        assert!(
            !gb.signalled(),
            "dropping one guard leaves the other's slot"
        );
        // What the handler does on a signal (here to these two slots only:
        // other tests may be writing files): the files go, the guards know.
        let gc = remove_on_signal(&a).unwrap();
        for g in [&gb, &gc] {
            unlink_slot(&DOOMED[g.slot.unwrap().0]);
        }
        assert!(gb.signalled() && gc.signalled());
        assert!(!a.exists() && !b.exists());
    }
}

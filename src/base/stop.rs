//! The process's one stop request. [`install`] makes SIGINT and SIGTERM set
//! a process-wide flag (the first one: stop between samples, keep what
//! finished) and exit at once with status 130 on the second. Every loop and
//! every wait of a command that installed it polls [`requested`] (or the
//! flag [`install`] returns), so a command ends within a second of being
//! asked, whatever it waits on (a measurement, a child, a database server).

use anyhow::{Context as _, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
        *done = true;
    }
    Ok(flag)
}

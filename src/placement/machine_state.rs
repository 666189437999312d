//! Machine-wide switches that a measurement may change for its duration:
//! SMT (`/sys/devices/system/cpu/smt/control`) and turbo/boost
//! (`intel_pstate/no_turbo`, inverted; `cpufreq/boost`; or every
//! `cpufreq/policyN/boost`). This is the one place in cpuscope that writes
//! machine state; `machine/` only reads it.
//!
//! Guarantee: a [`Switch`] records every file's original contents before it
//! writes anything and puts them back when it is dropped (normal return,
//! error, unwinding panic). The same originals sit in a process-wide,
//! async-signal-safe registry: [`install_signal_restore`] makes SIGINT,
//! SIGTERM and SIGHUP write them back from the signal handler (so even a second Ctrl-C,
//! which exits at once, leaves the machine as found), and the panic hook
//! calls [`restore_registered`]. Only SIGKILL or a power cut can leave a
//! changed setting behind.
//!
//! Every path lives under a [`Sysroot`], so tests drive the switches on a
//! writable temporary tree; the live machine is root `/`. Whether the
//! process may change the machine is a [`Privilege`] passed in, not looked
//! up inside, for the same reason.

use crate::base::Sysroot;
use anyhow::{bail, Context as _, Result};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    On,
    Off,
}

impl Setting {
    pub fn as_str(self) -> &'static str {
        match self {
            Setting::On => "on",
            Setting::Off => "off",
        }
    }

    pub fn other(self) -> Setting {
        match self {
            Setting::On => Setting::Off,
            Setting::Off => Setting::On,
        }
    }
}

/// What the user asked for a switch (`--smt`, `--turbo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Want {
    On,
    Off,
    /// Measure with the switch on and with it off (the current state first).
    Both,
    /// Leave the machine as found and label nothing (the default).
    #[default]
    #[value(name = "as-is")]
    AsIs,
}

impl Want {
    /// The settings to measure under, in order; `None`: as found, unlabelled.
    /// `current` is the state now (None when unknown or mixed).
    pub fn settings(self, current: Option<Setting>) -> Vec<Option<Setting>> {
        match self {
            Want::AsIs => vec![None],
            Want::On => vec![Some(Setting::On)],
            Want::Off => vec![Some(Setting::Off)],
            Want::Both => {
                let first = current.unwrap_or(Setting::On);
                vec![Some(first), Some(first.other())]
            }
        }
    }
}

/// May this process change machine state? Injected so tests can act as
/// an unprivileged user even when they run as root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privilege {
    Root,
    /// Not root: the effective uid.
    User(u32),
}

impl Privilege {
    /// This process's effective uid.
    pub fn current() -> Privilege {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        if uid == 0 {
            Privilege::Root
        } else {
            Privilege::User(uid)
        }
    }
}

/// Which switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    Smt,
    Turbo,
}

impl Knob {
    pub fn name(self) -> &'static str {
        match self {
            Knob::Smt => "SMT",
            Knob::Turbo => "turbo",
        }
    }

    /// The command-line option that asks for it.
    pub fn option(self) -> &'static str {
        match self {
            Knob::Smt => "--smt",
            Knob::Turbo => "--turbo",
        }
    }
}

pub const SMT_CONTROL: &str = "/sys/devices/system/cpu/smt/control";
pub const NO_TURBO: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";
pub const CPUFREQ_BOOST: &str = "/sys/devices/system/cpu/cpufreq/boost";

/// One file of a control: where it is and how "on" reads in it.
#[derive(Clone, Debug)]
pub struct ControlFile {
    /// The system path (e.g. `/sys/devices/system/cpu/smt/control`).
    pub rel: String,
    /// The path under the sysroot.
    pub path: PathBuf,
    /// Contents when found, trimmed.
    pub original: String,
    /// How this file spells on and off.
    on_text: &'static str,
    off_text: &'static str,
}

impl ControlFile {
    fn setting(&self) -> Option<Setting> {
        if self.original == self.on_text {
            Some(Setting::On)
        } else if self.original == self.off_text {
            Some(Setting::Off)
        } else {
            None
        }
    }

    fn text(&self, s: Setting) -> &'static str {
        match s {
            Setting::On => self.on_text,
            Setting::Off => self.off_text,
        }
    }
}

/// A switch as found: its files, the state now, and whether it can change.
#[derive(Clone, Debug)]
pub struct Control {
    pub knob: Knob,
    pub files: Vec<ControlFile>,
    /// The state now; None when the files disagree or say something else.
    pub current: Option<Setting>,
    /// Why the state cannot be changed at all (e.g. `smt/control` says
    /// `forceoff`); None when the kernel allows a change.
    pub fixed: Option<String>,
}

/// Why a switch is not there (absent file, `notsupported`…), one line.
pub type Absent = String;

/// `smt/control` under `sys`.
pub fn smt_control(sys: &Sysroot) -> std::result::Result<Control, Absent> {
    let Some(v) = sys.read_string(SMT_CONTROL) else {
        return Err(format!(
            "{SMT_CONTROL} is absent (kernel older than 4.19, or built without SMT support)"
        ));
    };
    let why = match v.as_str() {
        "notsupported" => Some("the CPU or hypervisor exposes no SMT"),
        "notimplemented" => Some("this kernel implements no SMT control for the architecture"),
        _ => None,
    };
    if let Some(why) = why {
        return Err(format!("{SMT_CONTROL} says '{v}': {why}"));
    }
    let file = ControlFile {
        rel: SMT_CONTROL.into(),
        path: sys.path(SMT_CONTROL),
        original: v.clone(),
        on_text: "on",
        off_text: "off",
    };
    let (current, fixed) = match v.as_str() {
        "forceoff" => (
            Some(Setting::Off),
            Some(format!(
                "{SMT_CONTROL} says 'forceoff': SMT was disabled at boot (nosmt=force) and cannot be turned on before a reboot"
            )),
        ),
        _ => (file.setting(), None),
    };
    if current.is_none() && fixed.is_none() {
        return Err(format!(
            "{SMT_CONTROL} says '{v}', which cpuscope does not know"
        ));
    }
    Ok(Control {
        knob: Knob::Smt,
        files: vec![file],
        current,
        fixed,
    })
}

/// The boost switch under `sys`, looked for in the order `machine::freq`
/// reads it: `intel_pstate/no_turbo` (1 = turbo off), `cpufreq/boost`,
/// then every `cpufreq/policyN/boost` (all of them are switched together).
pub fn boost_control(sys: &Sysroot) -> std::result::Result<Control, Absent> {
    let file = |rel: &str, original: String, inverted: bool| ControlFile {
        rel: rel.to_string(),
        path: sys.path(rel),
        original,
        on_text: if inverted { "0" } else { "1" },
        off_text: if inverted { "1" } else { "0" },
    };
    let files = if let Some(v) = sys.read_string(NO_TURBO) {
        vec![file(NO_TURBO, v, true)]
    } else if let Some(v) = sys.read_string(CPUFREQ_BOOST) {
        vec![file(CPUFREQ_BOOST, v, false)]
    } else {
        sys.list_numbered("/sys/devices/system/cpu/cpufreq", "policy")
            .into_iter()
            .filter_map(|p| {
                let rel = format!("/sys/devices/system/cpu/cpufreq/policy{p}/boost");
                sys.read_string(&rel).map(|v| file(&rel, v, false))
            })
            .collect()
    };
    if files.is_empty() {
        return Err(
            "no boost switch: no intel_pstate/no_turbo, cpufreq/boost or cpufreq/policyN/boost file (no cpufreq driver, or one without boost control)"
                .into(),
        );
    }
    let states: Vec<Option<Setting>> = files.iter().map(|f| f.setting()).collect();
    let current = if states.windows(2).all(|w| w[0] == w[1]) {
        states[0]
    } else {
        None
    };
    Ok(Control {
        knob: Knob::Turbo,
        files,
        current,
        fixed: None,
    })
}

impl Control {
    /// Can the process switch to `s`? Err: one line saying what is missing.
    pub fn check(&self, privilege: Privilege, s: Setting) -> Result<()> {
        if self.current == Some(s) {
            return Ok(());
        }
        if let Some(f) = &self.fixed {
            bail!(
                "{} {}: cannot switch {} {}: {f}",
                self.knob.option(),
                s.as_str(),
                self.knob.name(),
                s.as_str()
            );
        }
        let paths = self
            .files
            .iter()
            .map(|f| f.rel.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let writable = if self.files.len() > 1 {
            "writable"
        } else {
            "a writable"
        };
        if let Privilege::User(uid) = privilege {
            bail!(
                "{} needs root and {writable} {paths} to switch {} {} (running as uid {uid}); use {} as-is to measure the machine as it is",
                self.knob.option(),
                self.knob.name(),
                s.as_str(),
                self.knob.option()
            );
        }
        for f in &self.files {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&f.path)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "{} needs {writable} {paths} to switch {} {}: {}: {e}",
                        self.knob.option(),
                        self.knob.name(),
                        s.as_str(),
                        f.rel
                    )
                })?;
        }
        Ok(())
    }

    /// Take the switch: register the originals for restoring, write nothing yet.
    pub fn take(&self, privilege: Privilege) -> Result<Switch> {
        if let Privilege::User(uid) = privilege {
            bail!(
                "{} needs root to change machine state (running as uid {uid})",
                self.knob.option()
            );
        }
        let mut slots = Vec::new();
        for f in &self.files {
            match register(&f.path, f.original.as_bytes()) {
                Some(i) => slots.push(i),
                None => {
                    for i in slots {
                        unregister(i);
                    }
                    bail!("too many machine switches held at once (at most {SLOTS_N})");
                }
            }
        }
        Ok(Switch {
            control: self.clone(),
            slots,
            now: self.current,
        })
    }
}

/// A held switch: set it as often as needed; dropping it writes every
/// file's original contents back (and forgets them in the signal registry).
#[derive(Debug)]
pub struct Switch {
    control: Control,
    slots: Vec<usize>,
    now: Option<Setting>,
}

/// `SMT` switch (same type, named for readers of the callers).
pub type SmtSwitch = Switch;
/// Turbo/boost switch.
pub type BoostSwitch = Switch;

impl Switch {
    pub fn knob(&self) -> Knob {
        self.control.knob
    }

    /// The setting in force now (None: as found and unknown/mixed).
    pub fn now(&self) -> Option<Setting> {
        self.now
    }

    /// What the files said when the switch was taken, e.g. "on" or "1".
    pub fn original_text(&self) -> String {
        self.control
            .files
            .iter()
            .map(|f| f.original.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Write `s` to every file (no write when it is already in force),
    /// then read it back.
    pub fn set(&mut self, s: Setting) -> Result<()> {
        if self.now == Some(s) {
            return Ok(());
        }
        if let Some(f) = &self.control.fixed {
            if self.control.current != Some(s) {
                bail!(
                    "cannot switch {} {}: {f}",
                    self.control.knob.name(),
                    s.as_str()
                );
            }
        }
        for f in &self.control.files {
            let text = f.text(s);
            std::fs::write(&f.path, text).with_context(|| {
                format!(
                    "cannot switch {} {}: writing '{text}' to {}",
                    self.control.knob.name(),
                    s.as_str(),
                    f.rel
                )
            })?;
            // The kernel may refuse silently (e.g. no_turbo when the
            // firmware disabled turbo): read it back.
            let back = std::fs::read_to_string(&f.path)
                .map(|v| v.trim().to_string())
                .unwrap_or_default();
            if back != text {
                bail!(
                    "cannot switch {} {}: wrote '{text}' to {} but it reads '{back}'",
                    self.control.knob.name(),
                    s.as_str(),
                    f.rel
                );
            }
        }
        self.now = Some(s);
        Ok(())
    }

    /// Put every file back as found. Idempotent; Drop calls it.
    pub fn restore(&mut self) -> Result<()> {
        let mut errs = Vec::new();
        for f in &self.control.files {
            let now = std::fs::read_to_string(&f.path)
                .map(|v| v.trim().to_string())
                .unwrap_or_default();
            if now == f.original {
                continue;
            }
            if let Err(e) = std::fs::write(&f.path, &f.original) {
                errs.push(format!("{}: {e}", f.rel));
            }
        }
        self.now = self.control.current;
        if errs.is_empty() {
            Ok(())
        } else {
            bail!(
                "could not restore {} as found: {}",
                self.control.knob.name(),
                errs.join("; ")
            )
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            crate::base::output::err_line(&format!("cpuscope: warning: {e:#}"));
        }
        for &i in &self.slots {
            unregister(i);
        }
    }
}

// ---- The process-wide restore registry (async-signal-safe). ----

const SLOTS_N: usize = 32;

/// One file to write back: NUL-terminated path and the bytes to write.
struct Entry {
    path: CString,
    value: Vec<u8>,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: AtomicPtr<Entry> = AtomicPtr::new(std::ptr::null_mut());
static SLOTS: [AtomicPtr<Entry>; SLOTS_N] = [EMPTY; SLOTS_N];

fn register(path: &Path, value: &[u8]) -> Option<usize> {
    let path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let e = Box::into_raw(Box::new(Entry {
        path,
        value: value.to_vec(),
    }));
    for (i, s) in SLOTS.iter().enumerate() {
        if s.compare_exchange(std::ptr::null_mut(), e, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `e` came from Box::into_raw above and was never shared.
    drop(unsafe { Box::from_raw(e) });
    None
}

fn unregister(i: usize) {
    // The entry is leaked on purpose (a few bytes per switch): a signal
    // handler on another thread may still be reading it.
    SLOTS[i].store(std::ptr::null_mut(), Ordering::Release);
}

/// Write one entry back with raw open/write/close (async-signal-safe).
/// O_TRUNC as a shell redirection does: harmless on sysfs, needed on the
/// regular files of a test tree.
fn write_back(e: &Entry) -> bool {
    // SAFETY: path is NUL-terminated; value is a valid buffer; the fd is
    // closed before returning.
    unsafe {
        let fd = libc::open(
            e.path.as_ptr(),
            libc::O_WRONLY | libc::O_TRUNC | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let n = libc::write(fd, e.value.as_ptr().cast(), e.value.len());
        libc::close(fd);
        n == e.value.len() as isize
    }
}

/// Write back every registered original now (signal handler, panic hook).
/// Async-signal-safe. Returns how many files were written.
pub fn restore_registered() -> usize {
    restore_where(|_| true)
}

/// [`restore_registered`] limited to files under `dir` (tests drive the
/// signal path on their own tree without touching other tests' files).
pub fn restore_registered_under(dir: &Path) -> usize {
    let prefix = dir.as_os_str().as_bytes();
    restore_where(|e| e.path.as_bytes().starts_with(prefix))
}

fn restore_where(keep: impl Fn(&Entry) -> bool) -> usize {
    let mut n = 0;
    for s in SLOTS.iter() {
        let p = s.load(Ordering::Acquire);
        if p.is_null() {
            continue;
        }
        // SAFETY: entries are never freed once registered (see unregister).
        let e = unsafe { &*p };
        if keep(e) && write_back(e) {
            n += 1;
        }
    }
    n
}

/// Make the stop signals (SIGINT, SIGTERM, SIGHUP: `base::stop::signals`)
/// write the registered originals back, from the handler itself. Call it before installing the stop-flag handlers: the
/// signal-hook actions run in registration order, and the conditional
/// shutdown on a second Ctrl-C exits at once. Idempotent.
pub fn install_signal_restore() -> Result<()> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let mut res = Ok(());
    ONCE.call_once(|| {
        for &sig in crate::base::stop::signals() {
            // SAFETY: the action only loads atomics and calls
            // open/write/close, all async-signal-safe.
            let r = unsafe {
                signal_hook::low_level::register(sig, || {
                    restore_registered();
                })
            };
            if let Err(e) = r {
                res = Err(anyhow::anyhow!(
                    "cannot install the restore-on-Ctrl-C handler: {e}"
                ));
                return;
            }
        }
    });
    res
}

/// The settings to measure a switch under, and the held switch when any
/// of them is a change.
#[derive(Debug)]
pub struct SwitchPlan {
    pub knob: Knob,
    /// In order; `None`: as found, unlabelled (`as-is`).
    pub settings: Vec<Option<Setting>>,
    /// The state found (None: as-is was asked, or unknown/mixed).
    pub found: Option<Setting>,
    /// Held only when some setting differs from the state found.
    pub switch: Option<Switch>,
}

/// Check that what `want` asks of `knob` is possible here, before anything
/// is measured or changed; take the switch when a change is needed.
/// Errors are one line naming the reason (absent file, `notsupported`,
/// `forceoff`, not root, not writable).
pub fn plan(sys: &Sysroot, knob: Knob, want: Want, privilege: Privilege) -> Result<SwitchPlan> {
    if want == Want::AsIs {
        return Ok(SwitchPlan {
            knob,
            settings: vec![None],
            found: None,
            switch: None,
        });
    }
    let control = match knob {
        Knob::Smt => smt_control(sys),
        Knob::Turbo => boost_control(sys),
    }
    .map_err(|why| {
        anyhow::anyhow!(
            "{} {}: {} cannot be switched here: {why}",
            knob.option(),
            want_name(want),
            knob.name()
        )
    })?;
    let settings = want.settings(control.current);
    for s in settings.iter().flatten() {
        control.check(privilege, *s)?;
    }
    let change = settings.iter().any(|s| *s != control.current);
    let switch = if change {
        Some(control.take(privilege)?)
    } else {
        None
    };
    Ok(SwitchPlan {
        knob,
        settings,
        found: control.current,
        switch,
    })
}

/// `on`, `off`, `both`, `as-is`.
pub fn want_name(w: Want) -> &'static str {
    match w {
        Want::On => "on",
        Want::Off => "off",
        Want::Both => "both",
        Want::AsIs => "as-is",
    }
}

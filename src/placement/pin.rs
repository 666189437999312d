//! Pinning the calling thread to CPUs.
//!
//! Guarantees:
//! - Every call acts on the *calling thread* only (the raw syscalls are made
//!   with tid 0), never on the whole process.
//! - Masks are sized dynamically, so CPU ids beyond glibc's 1024-bit
//!   `cpu_set_t` work (up to [`MAX_ID`]).
//! - [`pin_current_thread`] returns only when the kernel has accepted the
//!   single-CPU mask; the kernel migrates the thread before the syscall returns,
//!   so the thread runs on that CPU from then on. The error names the CPU, the
//!   errno, and what the process is allowed to use (cgroup cpuset / taskset).
//! - [`AffinityGuard`] restores the previous mask when dropped (best effort:
//!   a failure to restore on drop is ignored, it cannot be reported).

use crate::base::cpuset::{CpuSet, MAX_ID};
use anyhow::{bail, Result};
use std::io;

pub(crate) const WORD_BITS: usize = 8 * std::mem::size_of::<libc::c_ulong>();

/// errno of the last failed call, as an `io::Error` (name and number).
pub(crate) fn last_os_error() -> io::Error {
    io::Error::last_os_error()
}

/// Short symbolic name of an errno value, for one-line messages.
pub(crate) fn errno_name(e: &io::Error) -> String {
    let name = match e.raw_os_error() {
        Some(libc::EINVAL) => "EINVAL",
        Some(libc::EPERM) => "EPERM",
        Some(libc::ESRCH) => "ESRCH",
        Some(libc::EFAULT) => "EFAULT",
        Some(libc::ENOSYS) => "ENOSYS",
        Some(libc::ENOMEM) => "ENOMEM",
        Some(libc::EIO) => "EIO",
        Some(libc::EACCES) => "EACCES",
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EXDEV) => "EXDEV",
        Some(libc::EBUSY) => "EBUSY",
        Some(libc::E2BIG) => "E2BIG",
        Some(n) => return format!("errno {n}: {}", strip_os_suffix(e)),
        None => return e.to_string(),
    };
    format!("{name}: {}", strip_os_suffix(e))
}

/// `Invalid argument (os error 22)` -> `Invalid argument`.
fn strip_os_suffix(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

pub(crate) fn mask_from_set(set: &CpuSet, words: usize) -> Vec<libc::c_ulong> {
    let mut mask = vec![0 as libc::c_ulong; words];
    for cpu in set.iter() {
        mask[cpu / WORD_BITS] |= 1 << (cpu % WORD_BITS);
    }
    mask
}

fn set_from_mask(mask: &[libc::c_ulong]) -> CpuSet {
    let mut set = CpuSet::new();
    for (w, word) in mask.iter().enumerate() {
        for bit in 0..WORD_BITS {
            if word & (1 << bit) != 0 {
                set.insert(w * WORD_BITS + bit);
            }
        }
    }
    set
}

/// CPUs the calling thread may run on (`sched_getaffinity` on this thread).
pub fn current_affinity() -> Result<CpuSet> {
    // Start at 1024 bits and grow until the kernel accepts the size
    // (it answers EINVAL when the buffer is smaller than nr_cpu_ids).
    let mut words = 1024 / WORD_BITS;
    loop {
        let mut mask = vec![0 as libc::c_ulong; words];
        let bytes = words * std::mem::size_of::<libc::c_ulong>();
        // SAFETY: the buffer is `bytes` long and writable; tid 0 = this thread.
        let r = unsafe {
            libc::syscall(
                libc::SYS_sched_getaffinity,
                0 as libc::pid_t,
                bytes,
                mask.as_mut_ptr(),
            )
        };
        if r >= 0 {
            return Ok(set_from_mask(&mask));
        }
        let e = last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) && words * WORD_BITS <= MAX_ID {
            words *= 2;
            continue;
        }
        bail!(
            "cannot read this thread's CPU affinity: sched_getaffinity failed ({})",
            errno_name(&e)
        );
    }
}

fn set_affinity_raw(set: &CpuSet) -> std::result::Result<(), io::Error> {
    let max = set.iter().last().unwrap_or(0);
    let words = max / WORD_BITS + 1;
    let mask = mask_from_set(set, words);
    let bytes = words * std::mem::size_of::<libc::c_ulong>();
    // SAFETY: the buffer is `bytes` long and readable; tid 0 = this thread.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_setaffinity,
            0 as libc::pid_t,
            bytes,
            mask.as_ptr(),
        )
    };
    if r != 0 {
        Err(last_os_error())
    } else {
        Ok(())
    }
}

/// Restrict the calling thread to `set`. Returns the mask the kernel actually
/// applied (it silently drops CPUs outside the process's cpuset, and refuses
/// only when none of `set` is usable).
pub fn set_affinity(set: &CpuSet) -> Result<CpuSet> {
    if set.is_empty() {
        bail!("cannot set CPU affinity to an empty CPU list");
    }
    let max = set.iter().last().unwrap_or(0);
    if max > MAX_ID {
        bail!("cannot set CPU affinity to CPUs {set}: CPU {max} is larger than {MAX_ID}");
    }
    if let Err(e) = set_affinity_raw(set) {
        bail!(
            "cannot set CPU affinity to CPUs {set}: sched_setaffinity failed ({}){}",
            errno_name(&e),
            usable_hint(set)
        );
    }
    current_affinity()
}

/// Pin the calling thread to exactly one CPU.
pub fn pin_current_thread(cpu: usize) -> Result<()> {
    if cpu > MAX_ID {
        bail!("cannot pin to CPU {cpu}: CPU ids above {MAX_ID} are not supported");
    }
    let want = CpuSet::from_ids([cpu]);
    if let Err(e) = set_affinity_raw(&want) {
        bail!(
            "cannot pin to CPU {cpu}: sched_setaffinity failed ({}){}",
            errno_name(&e),
            usable_hint(&want)
        );
    }
    let got = current_affinity()?;
    if got != want {
        bail!("cannot pin to CPU {cpu}: the kernel applied CPU list {got} instead");
    }
    Ok(())
}

/// Explain why a CPU set was refused: which CPUs exist / are online / allowed.
fn usable_hint(set: &CpuSet) -> String {
    let online = read_cpu_list("/sys/devices/system/cpu/online");
    let allowed = process_allowed_cpus();
    let mut parts = Vec::new();
    if let Some(on) = &online {
        let off = set.difference(on);
        if !off.is_empty() {
            parts.push(format!("CPU {off} not online (online: {on})"));
        }
    }
    if let Some(al) = &allowed {
        let out = set.difference(al);
        if !out.is_empty() {
            parts.push(format!(
                "CPU {out} outside the allowed CPUs {al} (Cpus_allowed_list of this process)"
            ));
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join("; "))
    }
}

fn read_cpu_list(path: &str) -> Option<CpuSet> {
    let s = std::fs::read_to_string(path).ok()?;
    CpuSet::parse(s.trim()).ok()
}

/// CPUs this process may use (`Cpus_allowed_list` in /proc/self/status), which
/// reflects cgroup cpusets and taskset. None when unreadable.
pub fn process_allowed_cpus() -> Option<CpuSet> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
    CpuSet::parse(line.split_once(':')?.1.trim()).ok()
}

/// CPU the calling thread is running on right now (`sched_getcpu`); None when
/// the call is not supported. The answer can be stale as soon as it returns
/// unless the thread is pinned.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no arguments and no side effects.
    let r = unsafe { libc::sched_getcpu() };
    if r < 0 {
        None
    } else {
        Some(r as usize)
    }
}

/// Restores the thread's previous CPU affinity when dropped. Must be dropped
/// on the thread that created it (it is `!Send`).
#[must_use = "the previous affinity is restored when the guard is dropped"]
pub struct AffinityGuard {
    previous: CpuSet,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl AffinityGuard {
    /// Pin the calling thread to `cpu`, remembering the current mask.
    pub fn pin(cpu: usize) -> Result<AffinityGuard> {
        let previous = current_affinity()?;
        pin_current_thread(cpu)?;
        Ok(AffinityGuard {
            previous,
            _not_send: std::marker::PhantomData,
        })
    }

    /// Restrict the calling thread to `set`, remembering the current mask.
    pub fn set(set: &CpuSet) -> Result<AffinityGuard> {
        let previous = current_affinity()?;
        set_affinity(set)?;
        Ok(AffinityGuard {
            previous,
            _not_send: std::marker::PhantomData,
        })
    }

    /// The mask that will be restored.
    pub fn previous(&self) -> &CpuSet {
        &self.previous
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        let _ = set_affinity(&self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_round_trip() {
        let s = CpuSet::parse("0,3,63,64,130").unwrap();
        let m = mask_from_set(&s, 3);
        assert_eq!(set_from_mask(&m), s);
    }

    #[test]
    fn errno_names_are_short() {
        let e = io::Error::from_raw_os_error(libc::EINVAL);
        assert_eq!(errno_name(&e), "EINVAL: Invalid argument");
    }
}

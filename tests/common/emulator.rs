//! Tests run on the machine's own CPU, or as aarch64 code under qemu-user
//! (`scripts/cargo-aarch64.sh test`), which declares itself with
//! `CPUSCOPE_TEST_EMULATOR=qemu-user`. qemu-user hands most syscalls to the
//! host kernel but implements neither `perf_event_open` nor the NUMA
//! memory-policy calls (`get_mempolicy`, `set_mempolicy`, `mbind`,
//! `move_pages`): they answer ENOSYS. A test of what needs them prints a
//! `SKIP (qemu-user ...)` line and returns there, CI or not (no package adds
//! a syscall to the emulator), but only when the emulator is declared AND the
//! syscall really answers ENOSYS; anywhere else the test runs. The ARM
//! topology lab (`lab/run`, a real arm64 kernel under qemu-system-aarch64)
//! runs those paths on aarch64.

// Each test file uses the needs it has.
#![allow(dead_code)]

use std::io::Write as _;

/// The declared emulator, if any.
pub fn declared() -> Option<String> {
    std::env::var("CPUSCOPE_TEST_EMULATOR")
        .ok()
        .filter(|v| !v.is_empty())
}

/// A syscall a test needs.
#[derive(Clone, Copy, Debug)]
pub enum Needs {
    /// `perf_event_open` (every counter, hardware or software).
    PerfEvents,
    /// The NUMA memory-policy calls.
    MemPolicy,
    /// An anonymous mapping on a 1 GiB hugetlbfs page (`MAP_HUGE_1GB`):
    /// qemu-user maps in its own host-page steps and answers EINVAL even
    /// with a 1 GiB page free in the pool.
    GiantPages,
}

/// Whether the call `n` needs is refused here: ENOSYS for a missing
/// syscall, EINVAL for a 1 GiB mapping.
fn refused(n: Needs) -> bool {
    let nr = match n {
        Needs::PerfEvents => libc::SYS_perf_event_open,
        Needs::MemPolicy => libc::SYS_get_mempolicy,
        Needs::GiantPages => return giant_mapping_refused(),
    };
    // SAFETY: all-NULL/zero arguments: a real kernel answers EFAULT, EINVAL
    // or 0 without touching memory; an emulator that lacks the call, ENOSYS.
    let r = unsafe { libc::syscall(nr, 0usize, 0usize, 0usize, 0usize, 0usize) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS)
}

/// True when a 1 GiB hugetlbfs mapping answers EINVAL here (the caller has
/// reserved a page first, so the pool is not the reason).
fn giant_mapping_refused() -> bool {
    const HUGE_1GB: libc::c_int = 30 << libc::MAP_HUGE_SHIFT;
    let len = 1usize << 30;
    // SAFETY: a fresh anonymous mapping, unmapped at once if it succeeds.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | HUGE_1GB,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL);
    }
    // SAFETY: the mapping just made, of `len` bytes.
    unsafe { libc::munmap(p, len) };
    false
}

/// True, quietly, when the declared emulator lacks the syscall (a test
/// that goes on then expects what cpuscope does without it).
pub fn answers_enosys(n: Needs) -> bool {
    declared().is_some() && refused(n)
}

/// True (after printing why) when the declared emulator lacks what `what`
/// needs: the caller returns.
pub fn lacks(n: Needs, what: &str) -> bool {
    let Some(emu) = declared() else {
        return false;
    };
    if !refused(n) {
        return false;
    }
    let (answer, covered) = match n {
        Needs::GiantPages => ("EINVAL", "the native run of this test covers the same code"),
        _ => ("ENOSYS", "the ARM lab covers it on a real kernel"),
    };
    let _ = writeln!(
        std::io::stderr(),
        "SKIP ({emu} answers {answer} for {n:?}; {covered}): {what}"
    );
    true
}

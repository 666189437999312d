//! Synchronisation kernels: spin-wait hints, atomic increments, locks,
//! handoffs and (falsely) shared counters. Measured loops only: no I/O, no
//! allocation; every kernel returns a value derived from its work.
//!
//! Every wait for another thread (the spin lock, the handoff's turn) counts
//! its turns with a [`Patience`] (looked at every 1024 turns, never on the
//! turn that ends the wait; a futex wait looks when it times out, which an
//! answered wait never does): when the team's round was given up (the
//! partner ended, panicked or kept this thread waiting past the team's
//! bound; Ctrl-C), the kernel returns early. The `std::sync::Mutex` kernel
//! waits inside the standard library and cannot look: a partner that ends
//! holding it is the one wait the team's watchdog cannot end (it ends the
//! process, saying so).

use crate::placement::watch::Patience;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// Spin-wait hint instructions per loop iteration in [`hint_loop`].
pub const HINTS_PER_ITER: u64 = 16;

/// A spin-wait hint instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// x86 `PAUSE`.
    Pause,
    /// arm `YIELD`.
    Yield,
    /// arm `ISB` (instruction synchronisation barrier, used by Linux and
    /// several runtimes as a spin delay on arm64 because YIELD is a no-op on
    /// most cores).
    Isb,
}

impl Hint {
    pub fn name(self) -> &'static str {
        match self {
            Hint::Pause => "pause",
            Hint::Yield => "yield",
            Hint::Isb => "isb",
        }
    }

    /// The hints this CPU architecture has.
    pub fn available() -> Vec<Hint> {
        if cfg!(target_arch = "x86_64") {
            vec![Hint::Pause]
        } else if cfg!(target_arch = "aarch64") {
            vec![Hint::Yield, Hint::Isb]
        } else {
            Vec::new()
        }
    }
}

/// Run `iters` × [`HINTS_PER_ITER`] back-to-back hint instructions.
#[inline(never)]
pub fn hint_loop(hint: Hint, iters: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if hint == Hint::Pause {
            for _ in 0..iters {
                // SAFETY: PAUSE has no operands and no architectural effect.
                unsafe { core::arch::asm!(".rept 16", "pause", ".endr", options(nomem, nostack)) };
            }
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        match hint {
            Hint::Yield => {
                for _ in 0..iters {
                    // SAFETY: YIELD is a hint with no architectural effect.
                    unsafe {
                        core::arch::asm!(".rept 16", "yield", ".endr", options(nomem, nostack))
                    };
                }
            }
            Hint::Isb => {
                for _ in 0..iters {
                    // SAFETY: ISB only flushes the pipeline.
                    unsafe { core::arch::asm!(".rept 16", "isb", ".endr", options(nostack)) };
                }
            }
            Hint::Pause => {}
        }
    }
    let _ = hint;
    iters
}

/// `iters` locked increments (`fetch_add`, e.g. `LOCK XADD`) of one counter.
/// Returns the counter's value after the last increment of this thread.
#[inline(never)]
pub fn atomic_increments(counter: &AtomicU64, iters: u64) -> u64 {
    let mut last = 0;
    for _ in 0..iters {
        last = counter.fetch_add(1, Ordering::Relaxed);
    }
    last + 1
}

/// `iters` plain increments (`load; add; store`, no locked instruction) of a
/// counter only this thread writes: the `counter++` of ordinary code. The
/// atomic type only stops the compiler from keeping the value in a register.
#[inline(never)]
pub fn plain_increments(counter: &AtomicU64, iters: u64) -> u64 {
    for _ in 0..iters {
        let v = counter.load(Ordering::Relaxed);
        counter.store(v + 1, Ordering::Relaxed);
    }
    counter.load(Ordering::Relaxed)
}

/// A test-and-test-and-set spin lock that spins with the CPU's spin-wait hint.
#[derive(Default)]
pub struct SpinLock {
    locked: AtomicU32,
}

impl SpinLock {
    pub const fn new() -> SpinLock {
        SpinLock {
            locked: AtomicU32::new(0),
        }
    }

    /// Take the lock; false when the wait for it was given up (the lock
    /// is then not held).
    #[inline(always)]
    pub fn lock(&self) -> bool {
        let mut patience = Patience::new();
        loop {
            if self
                .locked
                .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return true;
            }
            while self.locked.load(Ordering::Relaxed) != 0 {
                std::hint::spin_loop();
                if patience.give_up() {
                    return false;
                }
            }
        }
    }

    #[inline(always)]
    pub fn unlock(&self) {
        self.locked.store(0, Ordering::Release);
    }
}

/// What a lock protects in the lock kernels: a counter and the last owner.
#[derive(Default)]
pub struct Protected {
    pub count: u64,
    pub owner: u64,
}

/// `iters` acquisitions of a spin lock; inside, bump the shared counter held
/// in `count`/`owner` (written only under the lock). Returns how many
/// acquisitions found another thread as the previous owner (handoffs); a
/// wait given up (see the module) ends the loop early.
#[inline(never)]
pub fn spin_lock_loop(
    lock: &SpinLock,
    count: &AtomicU64,
    owner: &AtomicU64,
    me: u64,
    iters: u64,
) -> u64 {
    let mut handoffs = 0;
    for _ in 0..iters {
        if !lock.lock() {
            break;
        }
        if owner.load(Ordering::Relaxed) != me {
            handoffs += 1;
            owner.store(me, Ordering::Relaxed);
        }
        count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        lock.unlock();
    }
    handoffs
}

/// `iters` acquisitions of a `std::sync::Mutex` (futex based on Linux: a
/// compare-and-swap when free, a short spin, then `FUTEX_WAIT`). Returns the
/// handoffs as in [`spin_lock_loop`].
#[inline(never)]
pub fn mutex_loop(m: &Mutex<Protected>, me: u64, iters: u64) -> u64 {
    let mut handoffs = 0;
    for _ in 0..iters {
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        if g.owner != me {
            handoffs += 1;
            g.owner = me;
        }
        g.count += 1;
    }
    handoffs
}

/// How a waiting thread waits for its turn in [`handoff_loop`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Spin on the turn word (with the spin-wait hint).
    Spin,
    /// Sleep in `FUTEX_WAIT` until the other thread's `FUTEX_WAKE`.
    Futex,
}

/// How long one `FUTEX_WAIT` of [`handoff_loop`] sleeps at most: an answered
/// wait never reaches it; a partner that never answers is looked at after it.
#[cfg(target_os = "linux")]
const FUTEX_LOOK: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};

/// Sleep while `word` holds `expected`, at most [`FUTEX_LOOK`]; true when
/// the sleep timed out.
#[cfg(target_os = "linux")]
fn futex_wait(word: &AtomicU32, expected: u32) -> bool {
    // SAFETY: the address is a valid, aligned u32 that outlives the call;
    // FUTEX_WAIT only reads it and the timespec. A spurious or EAGAIN return
    // is handled by the caller's loop.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &FUTEX_LOOK as *const libc::timespec,
        )
    };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT)
}

#[cfg(target_os = "linux")]
fn futex_wake(word: &AtomicU32) {
    // SAFETY: as above; FUTEX_WAKE does not access the word's contents.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn futex_wait(_word: &AtomicU32, _expected: u32) -> bool {
    std::thread::yield_now();
    false
}

#[cfg(not(target_os = "linux"))]
fn futex_wake(_word: &AtomicU32) {}

/// Strict alternation of two threads on one turn word: thread `side` (0 or 1)
/// waits for `turn ≡ side (mod 2)`, then advances `turn` by one (and, for
/// [`Wait::Futex`], wakes the other). Each thread takes `iters` turns, so a
/// round of both threads makes `2 × iters` handoffs. `start` is the turn value
/// when the call begins (even). Returns the last turn value this thread wrote
/// (the wait for a turn given up, see the module, ends the loop early).
#[inline(never)]
pub fn handoff_loop(turn: &AtomicU32, wait: Wait, side: u32, start: u32, iters: u64) -> u32 {
    let mut mine = start.wrapping_add(side);
    let mut written = 0;
    for _ in 0..iters {
        let mut spins = 0u32;
        let mut patience = Patience::new();
        loop {
            let v = turn.load(Ordering::Acquire);
            if v == mine {
                break;
            }
            let gave_up = match wait {
                Wait::Spin => {
                    spins = spins.wrapping_add(1);
                    if spins & 0xfffff == 0 {
                        // A partner preempted for long: let it run.
                        std::thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                    patience.give_up()
                }
                Wait::Futex => futex_wait(turn, v) && patience.look(),
            };
            if gave_up {
                return written;
            }
        }
        written = mine.wrapping_add(1);
        turn.store(written, Ordering::Release);
        if wait == Wait::Futex {
            futex_wake(turn);
        }
        mine = mine.wrapping_add(2);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_thread_kernels_count() {
        let c = AtomicU64::new(0);
        assert_eq!(atomic_increments(&c, 10), 10);
        assert_eq!(plain_increments(&c, 5), 15);
        let l = SpinLock::new();
        let owner = AtomicU64::new(u64::MAX);
        let count = AtomicU64::new(0);
        assert_eq!(spin_lock_loop(&l, &count, &owner, 7, 4), 1);
        assert_eq!(count.load(Ordering::Relaxed), 4);
        let m = Mutex::new(Protected::default());
        assert_eq!(mutex_loop(&m, 3, 6), 1);
        assert_eq!(m.lock().unwrap().count, 6);
        for h in Hint::available() {
            assert_eq!(hint_loop(h, 3), 3);
        }
    }

    #[test]
    fn handoff_alternates_between_two_threads() {
        for wait in [Wait::Spin, Wait::Futex] {
            let turn = AtomicU32::new(0);
            std::thread::scope(|s| {
                let a = s.spawn(|| handoff_loop(&turn, wait, 0, 0, 50));
                let b = s.spawn(|| handoff_loop(&turn, wait, 1, 0, 50));
                assert_eq!(a.join().unwrap(), 99);
                assert_eq!(b.join().unwrap(), 100);
            });
            assert_eq!(turn.load(Ordering::Relaxed), 100);
        }
    }
}

//! Small CPU loops from the seed articles, written in `asm!` so that the
//! instruction count per iteration is known by construction (which turns a
//! measured time and clock into instructions per cycle without counters):
//!
//! - [`nop_loop`]: seed 000's `cpu_bound()`: three `nop` per iteration plus
//!   the loop's decrement and branch (5 instructions).
//! - [`loop_nest`]: seed 002's branch-order loops: three nested counted
//!   loops; only the shape differs between `100000×1000×100` and
//!   `100×1000×100000` (same number of innermost iterations).
//!
//! And three simple data kernels for the placement study (until the memory
//! room's kernels are merged): [`triad`], [`chase`], [`shared_add`].

use std::sync::atomic::{AtomicU64, Ordering};

/// Instructions per iteration of [`nop_loop`] (3 × nop, decrement, branch).
pub const NOP_LOOP_INSNS: u64 = 5;

/// `iters` iterations of `nop; nop; nop; dec; jnz`. Returns `iters` (as
/// seen after the loop) so the call cannot be dropped.
#[inline(never)]
pub fn nop_loop(iters: u64) -> u64 {
    if iters == 0 {
        return 0;
    }
    nop_loop_impl(iters);
    iters
}

#[cfg(target_arch = "x86_64")]
fn nop_loop_impl(iters: u64) {
    let mut n = iters;
    // SAFETY: register-only loop.
    unsafe {
        core::arch::asm!(
            ".p2align 5",
            "2:",
            "nop",
            "nop",
            "nop",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) n,
            options(nomem, nostack)
        );
    }
    let _ = n;
}

#[cfg(target_arch = "aarch64")]
fn nop_loop_impl(iters: u64) {
    let mut n = iters;
    // SAFETY: register-only loop.
    unsafe {
        core::arch::asm!(
            ".p2align 5",
            "2:",
            "nop",
            "nop",
            "nop",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            n = inout(reg) n,
            options(nomem, nostack)
        );
    }
    let _ = n;
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn nop_loop_impl(iters: u64) {
    for i in 0..iters {
        std::hint::black_box(i);
    }
}

/// Three nested counted loops: `outer × middle × inner` innermost
/// iterations, each a decrement and a conditional branch (counters in
/// registers). Returns the number of innermost iterations run.
#[inline(never)]
pub fn loop_nest(outer: u64, middle: u64, inner: u64) -> u64 {
    if outer == 0 || middle == 0 || inner == 0 {
        return 0;
    }
    loop_nest_impl(outer, middle, inner);
    outer * middle * inner
}

#[cfg(target_arch = "x86_64")]
fn loop_nest_impl(outer: u64, middle: u64, inner: u64) {
    let mut j = outer;
    // SAFETY: register-only loops.
    unsafe {
        core::arch::asm!(
            "3:",
            "mov {k}, {mid}",
            "4:",
            "mov {c}, {inn}",
            ".p2align 4",
            "5:",
            "dec {c}",
            "jnz 5b",
            "dec {k}",
            "jnz 4b",
            "dec {j}",
            "jnz 3b",
            j = inout(reg) j,
            k = out(reg) _,
            c = out(reg) _,
            mid = in(reg) middle,
            inn = in(reg) inner,
            options(nomem, nostack)
        );
    }
    let _ = j;
}

#[cfg(target_arch = "aarch64")]
fn loop_nest_impl(outer: u64, middle: u64, inner: u64) {
    let mut j = outer;
    // SAFETY: register-only loops.
    unsafe {
        core::arch::asm!(
            "3:",
            "mov {k}, {mid}",
            "4:",
            "mov {c}, {inn}",
            ".p2align 4",
            "5:",
            "subs {c}, {c}, #1",
            "b.ne 5b",
            "subs {k}, {k}, #1",
            "b.ne 4b",
            "subs {j}, {j}, #1",
            "b.ne 3b",
            j = inout(reg) j,
            k = out(reg) _,
            c = out(reg) _,
            mid = in(reg) middle,
            inn = in(reg) inner,
            options(nomem, nostack)
        );
    }
    let _ = j;
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn loop_nest_impl(outer: u64, middle: u64, inner: u64) {
    for j in 0..outer {
        for k in 0..middle {
            for c in 0..inner {
                std::hint::black_box((j, k, c));
            }
        }
    }
}

/// STREAM-style triad `a[i] = b[i] + s × c[i]`, `reps` times over the
/// slices (the shortest length is used). Returns a checksum of `a`.
#[inline(never)]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], reps: u64) -> u64 {
    let n = a.len().min(b.len()).min(c.len());
    let s = 3.0f64;
    for _ in 0..reps {
        for ((x, y), z) in a[..n].iter_mut().zip(&b[..n]).zip(&c[..n]) {
            *x = y + s * z;
        }
        std::hint::black_box(&mut *a);
    }
    if n == 0 {
        0
    } else {
        (a[0] + a[n - 1]).to_bits()
    }
}

/// Make `buf` one random cycle of indices (Sattolo's algorithm with a fixed
/// xorshift seed), each entry pointing `stride` elements apart so that every
/// hop lands on a different cache line. Outside any timed part.
pub fn build_chase(buf: &mut [u64], stride: usize, seed: u64) {
    let stride = stride.max(1);
    let slots = buf.len() / stride;
    if slots == 0 {
        return;
    }
    let mut order: Vec<usize> = (0..slots).collect();
    let mut x = seed | 1;
    for i in (1..slots).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        order.swap(i, j);
    }
    for i in 0..slots {
        let from = order[i] * stride;
        let to = order[(i + 1) % slots] * stride;
        buf[from] = to as u64;
    }
}

/// Follow the chain built by [`build_chase`] for `hops` dependent loads,
/// starting at index 0. Returns the last index.
#[inline(never)]
pub fn chase(buf: &[u64], hops: u64) -> u64 {
    if buf.is_empty() {
        return 0;
    }
    let mut i = 0u64;
    for _ in 0..hops {
        // Indices were written by build_chase and are always in range.
        i = buf[i as usize % buf.len()];
    }
    i
}

/// Lines of shared counters for [`shared_add`] (each on its own 128-byte slot).
pub const SHARED_LINES: usize = 4;

/// A small array of contended counters, each on its own cache line pair.
#[repr(C, align(128))]
pub struct Padded(pub AtomicU64, [u8; 120]);

impl Padded {
    pub fn new() -> Padded {
        Padded(AtomicU64::new(0), [0; 120])
    }
}

impl Default for Padded {
    fn default() -> Self {
        Padded::new()
    }
}

/// `iters` atomic increments spread over [`SHARED_LINES`] shared lines
/// (thread `who` starts at a different line): the cost of each is the
/// coherence traffic between the threads that share them.
#[inline(never)]
pub fn shared_add(lines: &[Padded], who: usize, iters: u64) -> u64 {
    if lines.is_empty() {
        return 0;
    }
    let n = lines.len();
    let mut acc = 0u64;
    for i in 0..iters {
        let l = &lines[(who + i as usize) % n];
        acc = acc.wrapping_add(l.0.fetch_add(1, Ordering::Relaxed));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_return_their_counts() {
        assert_eq!(nop_loop(1000), 1000);
        assert_eq!(nop_loop(0), 0);
        assert_eq!(loop_nest(3, 4, 5), 60);
        assert_eq!(loop_nest(0, 4, 5), 0);
    }

    #[test]
    fn chase_visits_every_slot() {
        let mut buf = vec![0u64; 64 * 8];
        build_chase(&mut buf, 8, 42);
        let mut seen = std::collections::BTreeSet::new();
        assert_eq!(chase(&buf, 64), 0, "64 hops return to the start");
        let mut at = 0usize;
        for _ in 0..64 {
            seen.insert(at);
            at = buf[at] as usize;
        }
        assert_eq!(seen.len(), 64);
        assert_eq!(at, 0, "one cycle through all slots");
    }

    #[test]
    fn triad_and_shared() {
        let mut a = vec![0.0; 8];
        let b = vec![1.0; 8];
        let c = vec![2.0; 8];
        triad(&mut a, &b, &c, 2);
        assert!(a.iter().all(|&x| x == 7.0));
        let lines: Vec<Padded> = (0..SHARED_LINES).map(|_| Padded::new()).collect();
        shared_add(&lines, 1, 10);
        let total: u64 = lines.iter().map(|l| l.0.load(Ordering::Relaxed)).sum();
        assert_eq!(total, 10);
    }
}

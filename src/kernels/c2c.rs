//! Core-to-core ping-pong kernels: two pinned threads pass a cache line back
//! and forth through the coherence protocol.
//!
//! Both methods keep a shared sequence number so that the two sides can never
//! drift apart and the caller can check the protocol ran to completion: after
//! `n` round trips started at sequence `s`, the shared value is `s + 2n`.
//!
//! - [`Method::Cas`]: one line. The initiator spins on `compare_exchange(2k ->
//!   2k+1)`, the responder on `compare_exchange(2k+1 -> 2k+2)`. Every failed
//!   attempt is itself a read-for-ownership of the line, as in a contended
//!   spin lock (this is the method of nviennot/core-to-core-latency, bench 1).
//! - [`Method::LoadStore`]: two lines, each written by one side only. The
//!   initiator stores `k+1` into its line and spins loading the responder's
//!   line until it reads `k+1`; the responder does the mirror image. Plain
//!   loads and release stores, no locked instruction (nviennot bench 2).
//!
//! No spin-wait hint (PAUSE/YIELD) is used inside the loops: on Skylake and
//! later a PAUSE lasts ~140 cycles and would quantise the latency.
//! No allocation, no I/O, no clock reads: the caller times batches.
//!
//! Every wait for the partner counts its turns with a
//! [`Patience`](crate::placement::watch::Patience): a counter in the waiting
//! branch only, looked at every 1024 turns (never on the turn that sees the
//! answer). When the team's round was given up (the partner's thread ended
//! or panicked, or it kept this one waiting past the team's bound; Ctrl-C),
//! the wait ends and the kernel returns early with the sequence reached:
//! a partner that never answers cannot hold a thread for ever.

use crate::placement::watch::Patience;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which ping-pong protocol to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// compare-and-swap on one shared line.
    Cas,
    /// plain load / store on two lines, one per writer.
    LoadStore,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Cas => "cas",
            Method::LoadStore => "load_store",
        }
    }

    pub fn parse(s: &str) -> Option<Method> {
        match s {
            "cas" => Some(Method::Cas),
            "load_store" | "load-store" | "ls" => Some(Method::LoadStore),
            _ => None,
        }
    }

    /// One line describing the protocol.
    pub fn describe(self) -> &'static str {
        match self {
            Method::Cas => "compare-and-swap ping-pong on one shared cache line (each side spins on CAS until it sees its turn)",
            Method::LoadStore => "load/store ping-pong on two cache lines, each written by one side (spin on load, then release store)",
        }
    }
}

/// Byte offset of the responder's line from the initiator's line in the
/// load/store method: 256 bytes, so the two lines are not the 128-byte-aligned
/// pair that the adjacent-line prefetcher fetches together.
pub const SECOND_LINE_OFFSET: usize = 256;

/// Initiator side: run `n` round trips starting from sequence `seq` (even).
/// Returns the sequence after the last round trip (`seq + 2n`).
#[inline(never)]
pub fn ping(method: Method, a: &AtomicU64, b: &AtomicU64, seq: u64, n: u64) -> u64 {
    match method {
        Method::Cas => cas_ping(a, seq, n),
        Method::LoadStore => ls_ping(a, b, seq, n),
    }
}

/// Responder side: answer `n` round trips starting from sequence `seq`.
/// Returns the sequence after the last round trip (`seq + 2n`).
#[inline(never)]
pub fn pong(method: Method, a: &AtomicU64, b: &AtomicU64, seq: u64, n: u64) -> u64 {
    match method {
        Method::Cas => cas_pong(a, seq, n),
        Method::LoadStore => ls_pong(a, b, seq, n),
    }
}

#[inline(always)]
fn cas_ping(line: &AtomicU64, seq: u64, n: u64) -> u64 {
    let mut s = seq;
    for _ in 0..n {
        let mut patience = Patience::new();
        while line
            .compare_exchange(s, s + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            if patience.give_up() {
                return s;
            }
        }
        s += 2;
    }
    s
}

#[inline(always)]
fn cas_pong(line: &AtomicU64, seq: u64, n: u64) -> u64 {
    let mut s = seq;
    for _ in 0..n {
        let mut patience = Patience::new();
        loop {
            match line.compare_exchange(s + 1, s + 2, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                // The initiator stopped early (see [`ABORT`]).
                Err(ABORT) => return s,
                Err(_) if patience.give_up() => return s,
                Err(_) => {}
            }
        }
        s += 2;
    }
    s
}

/// `mine` is written by the initiator, `theirs` by the responder. The values
/// are half-sequences (`seq/2 + k + 1`), so both lines end at `seq/2 + n`.
#[inline(always)]
fn ls_ping(mine: &AtomicU64, theirs: &AtomicU64, seq: u64, n: u64) -> u64 {
    let mut v = seq / 2;
    for _ in 0..n {
        v += 1;
        mine.store(v, Ordering::Release);
        let mut patience = Patience::new();
        while theirs.load(Ordering::Acquire) != v {
            if patience.give_up() {
                return (v - 1) * 2;
            }
        }
    }
    v * 2
}

#[inline(always)]
fn ls_pong(theirs: &AtomicU64, mine: &AtomicU64, seq: u64, n: u64) -> u64 {
    let mut v = seq / 2;
    for _ in 0..n {
        v += 1;
        let mut patience = Patience::new();
        loop {
            match theirs.load(Ordering::Acquire) {
                x if x == v => break,
                // The initiator stopped early (see [`ABORT`]).
                ABORT => return (v - 1) * 2,
                _ if patience.give_up() => return (v - 1) * 2,
                _ => {}
            }
        }
        mine.store(v, Ordering::Release);
    }
    v * 2
}

/// Written by the initiator into the first line to stop a responder before
/// its `n` round trips (a deadline or Ctrl-C between two timed batches): the
/// responder's spin sees it on its next turn and returns. Only the waiting
/// side compares against it, never the timed one, so the figures do not
/// change. The sequence never gets near it.
pub const ABORT: u64 = u64::MAX;

/// Stop a responder that waits in [`pong`] on the line(s) at `a`, once it
/// has answered the last round trip of `ping` (which ended at `seq`): a CAS
/// initiator returns before the responder's last answer, so this first waits
/// (at most `timeout`) for the line to read `expected_line_value(method,
/// seq)`; `ls_ping` returns only after reading the answer. Returns what the
/// line held: the expected value, unless the answer never came.
pub fn abort(method: Method, a: &AtomicU64, seq: u64, timeout: std::time::Duration) -> u64 {
    let want = expected_line_value(method, seq);
    let t0 = std::time::Instant::now();
    let mut seen = a.load(Ordering::Acquire);
    let mut patience = Patience::new();
    while method == Method::Cas && seen != want && t0.elapsed() < timeout && !patience.give_up() {
        spin_loop();
        seen = a.load(Ordering::Acquire);
    }
    a.store(ABORT, Ordering::Release);
    seen
}

/// The value the shared line(s) must hold after a completed run that ended at
/// sequence `seq`: for CAS the line itself, for load/store each line holds `seq/2`.
pub fn expected_line_value(method: Method, seq: u64) -> u64 {
    match method {
        Method::Cas => seq,
        Method::LoadStore => seq / 2,
    }
}

/// Spin until `flag` holds a non-zero value, yielding the CPU after a while so
/// a partner that has not started yet can run. Returns the value, or 0 when
/// the wait was given up (the team's round was; outside a team, Ctrl-C).
/// Used to meet the partner before timing, never inside a timed batch.
pub fn wait_nonzero(flag: &AtomicU64) -> u64 {
    let mut spins = 0u32;
    let mut patience = Patience::new();
    loop {
        let v = flag.load(Ordering::Acquire);
        if v != 0 {
            return v;
        }
        spins = spins.saturating_add(1);
        if spins < 1 << 16 {
            if patience.give_up() {
                return 0;
            }
            spin_loop();
        } else {
            // A turn that yields may wait out other programs' time slices:
            // it looks every time.
            if patience.look() {
                return 0;
            }
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_protocol_advances() {
        // With one thread taking both turns, one round trip at a time, both
        // protocols must advance the sequence by two per round trip.
        for m in [Method::Cas, Method::LoadStore] {
            let a = AtomicU64::new(0);
            let b = AtomicU64::new(0);
            let mut s = 0;
            for _ in 0..5 {
                if m == Method::Cas {
                    s = cas_ping(&a, s, 1);
                    let s2 = cas_pong(&a, s - 2, 1);
                    assert_eq!(s2, s);
                } else {
                    // Responder first answers what the initiator will write.
                    a.store(s / 2 + 1, Ordering::Release);
                    b.store(s / 2 + 1, Ordering::Release);
                    s = ls_ping(&a, &b, s, 1);
                }
            }
            assert_eq!(s, 10);
            match m {
                Method::Cas => assert_eq!(a.load(Ordering::Relaxed), expected_line_value(m, s)),
                Method::LoadStore => {
                    assert_eq!(a.load(Ordering::Relaxed), expected_line_value(m, s));
                    assert_eq!(b.load(Ordering::Relaxed), expected_line_value(m, s));
                }
            }
        }
    }

    #[test]
    fn an_aborted_responder_returns() {
        // A responder waiting for round trips that never come stops when
        // the initiator writes ABORT, in both protocols.
        for m in [Method::Cas, Method::LoadStore] {
            let a = AtomicU64::new(0);
            let b = AtomicU64::new(0);
            std::thread::scope(|sc| {
                let h = sc.spawn(|| pong(m, &a, &b, 0, 1_000_000));
                let s = ping(m, &a, &b, 0, 3);
                assert_eq!(s, 6);
                let held = abort(m, &a, s, std::time::Duration::from_secs(10));
                assert_eq!(held, expected_line_value(m, s));
                assert_eq!(h.join().unwrap(), 6, "{m:?}");
            });
        }
    }

    #[test]
    fn method_names_round_trip() {
        for m in [Method::Cas, Method::LoadStore] {
            assert_eq!(Method::parse(m.as_str()), Some(m));
        }
        assert_eq!(Method::parse("load-store"), Some(Method::LoadStore));
        assert_eq!(Method::parse("xyz"), None);
    }
}

//! What a team's threads tell the team's watchdog, and what it tells them.
//!
//! Every wait of a team thread for the others (the team's barriers, the
//! spin-waits of the kernels: ping-pong, handoffs, spin locks; an
//! experiment's own meeting points) counts its turns with a [`Patience`].
//! Every [`POLL_EVERY`] turns, never on the turn that ends the wait (so a
//! measured loop keeps its shape: one counter in a register, incremented
//! and tested in the waiting branch only; no clock read, no flag read, no
//! call, nothing to drop when the wait ends), it looks: it marks since when
//! this thread waits and that it still does (the watchdog in
//! `Team::run_round` names a member that keeps the others waiting past the
//! team's bound; a mark not renewed for [`STALE_US`] is a wait that ended)
//! and reads whether the round was given up (a member panicked, ended,
//! never arrived; Ctrl-C past the grace). A given-up wait ends at once: a
//! barrier unwinds, a kernel returns early, and the round's result is the
//! reason, never the figures.
//!
//! Outside a team (the measuring thread of a single-thread figure, tests), a
//! [`Patience`] gives up when a stop was asked for (`base::stop`): every
//! spin-wait hears Ctrl-C, inside a team or not.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Turns of a wait loop between two looks (a power of two).
pub const POLL_EVERY: u32 = 1024;

/// A wait's mark not renewed for this long (µs) is a wait that ended: far
/// above the time between two looks (1024 spins, one yield, or a futex
/// wait's 100 ms timeout).
pub const STALE_US: u64 = 500_000;

/// Where a member waits for the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum WaitIn {
    /// The barrier that starts every round.
    StartBarrier = 1,
    /// The barrier the round's own phases meet at (`ThreadCtx::wait`).
    Barrier = 2,
    /// A spin-wait of a kernel or an experiment (a partner's answer).
    Spin = 3,
}

impl WaitIn {
    fn from_u8(v: u8) -> Option<WaitIn> {
        match v {
            1 => Some(WaitIn::StartBarrier),
            2 => Some(WaitIn::Barrier),
            3 => Some(WaitIn::Spin),
            _ => None,
        }
    }

    /// Words for the reason line: "waited for it {where}".
    pub fn words(self) -> &'static str {
        match self {
            WaitIn::StartBarrier => "at the round's start barrier",
            WaitIn::Barrier => "at the team's barrier",
            WaitIn::Spin => "in a spin-wait",
        }
    }
}

/// One member's state, written by the member and read by the watchdog.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct MemberWatch {
    /// The thread's kernel id (`gettid`), set when it starts.
    pub tid: AtomicI32,
    /// It has tried to pin itself (`Team::new` waits for every member).
    pub started: AtomicBool,
    /// The last round whose job this member finished (returned or unwound).
    pub done: AtomicU64,
    /// Since when it waits for the others: µs since the watch's epoch, + 1
    /// (0: not waiting, or waiting less than [`POLL_EVERY`] turns).
    pub waiting_since: AtomicU64,
    /// Its last look in that wait, µs since the watch's epoch.
    pub last_look: AtomicU64,
    /// Where (a [`WaitIn`]), while `waiting_since` is set.
    pub waiting_in: AtomicU8,
    /// The watchdog found the thread gone (it never comes back).
    pub gone: AtomicBool,
}

/// A team's shared watch: its members and whether the round was given up.
pub(crate) struct Watch {
    pub members: Vec<MemberWatch>,
    epoch: Instant,
    abandoned: AtomicBool,
    reason: Mutex<Option<String>>,
}

impl Watch {
    pub fn new(n: usize) -> Watch {
        Watch {
            members: (0..n).map(|_| MemberWatch::default()).collect(),
            epoch: Instant::now(),
            abandoned: AtomicBool::new(false),
            reason: Mutex::new(None),
        }
    }

    /// µs since the epoch.
    pub fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// Give the round up for `reason`; the first reason stays. True when
    /// this call gave it up.
    pub fn abandon(&self, reason: String) -> bool {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        let first = r.is_none();
        if first {
            *r = Some(reason);
        }
        self.abandoned.store(true, Ordering::Release);
        first
    }

    pub fn abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Acquire)
    }

    pub fn reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Before a round, when no member is inside one.
    pub fn reset(&self) {
        *self.reason.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.abandoned.store(false, Ordering::Release);
        for m in &self.members {
            m.waiting_since.store(0, Ordering::Relaxed);
        }
    }

    /// The member's wait, when it still waits (its mark was renewed within
    /// [`STALE_US`]): since when (µs since the epoch) and where.
    pub fn waiting(&self, i: usize) -> Option<(u64, WaitIn)> {
        let m = &self.members[i];
        let since = m.waiting_since.load(Ordering::Acquire);
        let at = WaitIn::from_u8(m.waiting_in.load(Ordering::Relaxed))?;
        let last = m.last_look.load(Ordering::Relaxed);
        let fresh = self.now_us().saturating_sub(last) < STALE_US;
        (since > 0 && fresh).then(|| (since - 1, at))
    }
}

thread_local! {
    /// The team this thread works for, and its place in it.
    static MEMBER: RefCell<Option<(Arc<Watch>, usize)>> = const { RefCell::new(None) };
}

/// Called once by a team's worker thread when it starts.
pub(crate) fn join(watch: Arc<Watch>, index: usize) {
    MEMBER.with(|m| *m.borrow_mut() = Some((watch, index)));
}

/// Whether the round this thread works in was given up; outside a team,
/// whether a stop (Ctrl-C) was asked for. For loops that are not waits but
/// may run long for a partner (a stream that runs until the chaser is done).
pub fn abandoned() -> bool {
    MEMBER
        .try_with(|m| match &*m.borrow() {
            Some((w, _)) => w.abandoned(),
            None => crate::base::stop::requested(),
        })
        .unwrap_or(false)
}

/// The turn counter of one wait for the others. Create it where the wait
/// begins; call [`give_up`](Self::give_up) on every turn that did not end
/// the wait; when it returns true, end the wait (the round was given up).
/// Plain data in registers: nothing to drop when the wait ends (its mark
/// goes stale, see [`STALE_US`]).
#[derive(Clone, Copy)]
pub struct Patience {
    turns: u32,
    at: WaitIn,
    marked: bool,
}

impl Default for Patience {
    fn default() -> Self {
        Patience::new()
    }
}

impl Patience {
    /// A spin-wait of a kernel or an experiment.
    #[inline(always)]
    pub const fn new() -> Patience {
        Patience::at(WaitIn::Spin)
    }

    #[inline(always)]
    pub(crate) const fn at(at: WaitIn) -> Patience {
        Patience {
            turns: 0,
            at,
            marked: false,
        }
    }

    /// Count one turn of the wait; every [`POLL_EVERY`] turns, look (see
    /// [`look`](Self::look)). True: end the wait.
    #[inline(always)]
    pub fn give_up(&mut self) -> bool {
        self.turns = self.turns.wrapping_add(1);
        if self.turns & (POLL_EVERY - 1) != 0 {
            return false;
        }
        self.look()
    }

    /// Look now (for waits whose turns are slow already: a yield, a futex
    /// wait): mark since when this thread waits and that it still does, and
    /// say whether the round was given up (outside a team: whether a stop
    /// was asked for).
    #[inline(always)]
    pub fn look(&mut self) -> bool {
        // By value, not by reference: nothing of the counter leaves the
        // registers of the measured loop.
        let (gave_up, marked) = look(self.at, self.marked);
        self.marked = marked;
        gave_up
    }
}

impl Patience {
    /// The wait ended: take the mark back now rather than letting it go
    /// stale (for waits outside measured loops, such as the barriers: a
    /// member that passed a barrier must not read as still waiting there
    /// while the watchdog judges the next wait).
    #[inline(always)]
    pub fn done(self) {
        if self.marked {
            unmark();
        }
    }
}

#[cold]
#[inline(never)]
fn unmark() {
    let _ = MEMBER.try_with(|m| {
        if let Some((w, i)) = &*m.borrow() {
            w.members[*i].waiting_since.store(0, Ordering::Release);
        }
    });
}

/// A look (see [`Patience::look`]): (give up, marked now).
#[cold]
#[inline(never)]
fn look(at: WaitIn, marked: bool) -> (bool, bool) {
    MEMBER
        .try_with(|m| match &*m.borrow() {
            None => (crate::base::stop::requested(), marked),
            Some((w, i)) => {
                let m = &w.members[*i];
                let now = w.now_us();
                if !marked {
                    m.waiting_in.store(at as u8, Ordering::Relaxed);
                    m.waiting_since.store(now + 1, Ordering::Release);
                }
                m.last_look.store(now, Ordering::Relaxed);
                (w.abandoned(), true)
            }
        })
        .unwrap_or((false, marked))
}

//! Teams of pinned threads released together.
//!
//! Guarantees:
//! - [`Team::new`] spawns one thread per CPU of the list and pins each to its
//!   CPU *before* returning; if any CPU cannot be used, every thread is stopped
//!   and the error names the CPU — no round has run.
//! - [`Team::run_round`] runs the closure once on every thread. The threads
//!   are woken (futex, skewed), then meet at a [`SpinBarrier`] on atomics and
//!   are released together by one cache-line write (sub-microsecond skew). Each
//!   thread reads the clock right after release and right after its closure
//!   returns; the team time runs from the release (read by the last thread to
//!   arrive, just before it releases the others) to the last thread's end.
//! - Results come back in list order. A panic in a worker is caught, the
//!   round is given up (the barriers are poisoned so threads waiting in them
//!   unwind, every spin-wait of the kernels ends, `placement::watch`), and
//!   the round returns a one-line error naming the worker, the panic message
//!   and its location; the team stays usable for later rounds. (The process
//!   panic hook is wrapped once so that worker panics print no message or
//!   backtrace of their own; other threads' panics are untouched.)
//! - No round waits for ever. While it runs, the calling thread looks every
//!   100 ms: a worker whose thread is gone (whatever ended it), a worker
//!   that keeps the others waiting past the wait bound ([`WAIT_BOUND`]), a
//!   stop request older than [`STOP_GRACE`] give the round up, and it
//!   returns that one line (a team whose worker is gone fails every later
//!   round with it). It returns only once every live worker is back: one
//!   still out [`RETURN_GRACE`] after the round was given up ends the
//!   process with one line (the round's data cannot be freed under it).
//! - A process whose loader and C library are two glibc builds, where
//!   `pthread_create` never returns (`base::glibc`), gets no team: the
//!   reason is [`Team::new`]'s error.
//! - Threads persist between rounds (no re-spawning) and sleep on a condition
//!   variable between rounds, so an idle team costs no CPU.
//! - Two entries of the list may name the same CPU; the barrier then falls back
//!   from spinning to yielding so the threads sharing a CPU still progress.

use crate::base::timer::{Tick, Timer};
use crate::placement::pin::pin_current_thread;
use crate::placement::watch::{self, Patience, WaitIn, Watch};
use anyhow::{bail, Result};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Spins before a waiting thread starts yielding its CPU.
const SPINS_BEFORE_YIELD: u32 = 1 << 16;

/// How long a member may keep the others waiting (at a barrier or in a
/// spin-wait) before the round is given up, unless the team sets its own
/// bound ([`Team::set_wait_bound`]). Far above any round's spread between
/// its threads (a round lasts milliseconds; an emulated or oversubscribed
/// one, seconds).
pub const WAIT_BOUND: Duration = Duration::from_secs(30);

/// After a stop request (Ctrl-C), how long a round may go on before it is
/// given up (a round normally ends well within it, its figure kept).
pub const STOP_GRACE: Duration = Duration::from_millis(500);

/// After a round is given up, how long its live members have to come back
/// (a given-up wait ends within a few hundred microseconds; a kernel that
/// does not wait ends its batch). A member still out past it cannot be left
/// behind (it may still use the round's data), so the process ends, saying
/// why: the figures already stored are kept.
pub const RETURN_GRACE: Duration = Duration::from_secs(10);

/// How often the calling thread looks at a round under way.
const TICK: Duration = Duration::from_millis(100);

#[repr(align(128))]
struct Padded<T>(T);

/// Payload of the unwind that poisoned-barrier waiters take.
struct Poisoned;

/// A sense-reversing barrier on atomics for a fixed number of threads.
/// Waiters spin (then yield, if the wait gets long); the last to arrive
/// releases all by bumping the generation. Reusable without reset. On a
/// team's thread, every 1024 turns the wait looks at the round (see
/// `placement::watch`): a given-up round unwinds the waiters.
pub struct SpinBarrier {
    n: usize,
    at: WaitIn,
    count: Padded<AtomicUsize>,
    generation: Padded<AtomicUsize>,
    poisoned: AtomicBool,
}

impl SpinBarrier {
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier::at(n, WaitIn::Barrier)
    }

    fn at(n: usize, at: WaitIn) -> SpinBarrier {
        SpinBarrier {
            n: n.max(1),
            at,
            count: Padded(AtomicUsize::new(0)),
            generation: Padded(AtomicUsize::new(0)),
            poisoned: AtomicBool::new(false),
        }
    }

    /// Number of threads that must arrive.
    pub fn size(&self) -> usize {
        self.n
    }

    /// Wait until all `n` threads have arrived. Returns true on exactly one
    /// thread (the last to arrive). If another team thread panicked, or the
    /// round was given up, this unwinds (without running the panic hook) so
    /// the round can end.
    #[inline]
    pub fn wait(&self) -> bool {
        self.wait_then(|| ())
    }

    /// Like [`wait`](Self::wait); the last thread runs `on_last` just before
    /// releasing the others.
    #[inline]
    pub fn wait_then<F: FnOnce()>(&self, on_last: F) -> bool {
        let gen = self.generation.0.load(Ordering::Acquire);
        if self.count.0.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            on_last();
            self.count.0.store(0, Ordering::Relaxed);
            self.generation.0.fetch_add(1, Ordering::Release);
            return true;
        }
        let mut patience = Patience::at(self.at);
        let mut spins = 0u32;
        while self.generation.0.load(Ordering::Acquire) == gen {
            // Spinning turns are counted (a look every 1024); a turn that
            // yields costs a system call already (and may wait out other
            // programs' time slices): it looks every time.
            let yielding = spins >= SPINS_BEFORE_YIELD;
            let give_up = if yielding {
                patience.look()
            } else {
                patience.give_up()
            };
            if self.poisoned.load(Ordering::Relaxed) || give_up {
                resume_unwind(Box::new(Poisoned));
            }
            if yielding {
                std::thread::yield_now();
            } else {
                spins += 1;
                std::hint::spin_loop();
            }
        }
        patience.done();
        false
    }

    fn poison(&self) {
        self.poisoned.store(true, Ordering::Relaxed);
    }

    /// Only when no thread is inside.
    fn reset(&self) {
        self.count.0.store(0, Ordering::Relaxed);
        self.poisoned.store(false, Ordering::Relaxed);
    }
}

/// What a worker knows about itself inside a round.
#[derive(Clone, Copy)]
pub struct ThreadCtx<'a> {
    /// Position in the CPU list (0-based).
    pub index: usize,
    /// The CPU this thread is pinned to.
    pub cpu: usize,
    /// Number of threads in the team.
    pub team_size: usize,
    barrier: &'a SpinBarrier,
    timer: &'a Timer,
}

impl<'a> ThreadCtx<'a> {
    /// The barrier shared by the whole team, for phases inside a round.
    pub fn barrier(&self) -> &'a SpinBarrier {
        self.barrier
    }
    /// Shorthand for `barrier().wait()`.
    pub fn wait(&self) -> bool {
        self.barrier.wait()
    }
    /// The team's clock.
    pub fn timer(&self) -> &'a Timer {
        self.timer
    }
}

/// What one round produced.
#[derive(Clone, Debug)]
pub struct Round<R> {
    /// One result per thread, in CPU-list order.
    pub results: Vec<R>,
    /// From the release at the start barrier to the end of the last thread.
    pub elapsed_ns: f64,
    /// Per thread: from its own release to its own end.
    pub thread_ns: Vec<f64>,
    /// Per thread: from the release tick to this thread's start tick (how late
    /// each thread saw the release).
    pub start_skew_ns: Vec<f64>,
}

type Job<'a> = dyn Fn(&ThreadCtx<'_>) + Sync + 'a;

struct Control {
    round: u64,
    /// Lifetime-erased pointer to the current round's job; valid while
    /// `run_round` waits for the round to finish.
    job: Option<*const Job<'static>>,
    shutdown: bool,
}

// SAFETY: the raw job pointer is only dereferenced by workers during a round,
// while the `run_round` call that owns the job blocks waiting for them.
unsafe impl Send for Control {}

struct Shared {
    control: Mutex<Control>,
    wake: Condvar,
    /// What the calling thread sleeps on while the workers start or run a
    /// round (woken by each worker that is done, and every [`TICK`]).
    done: Mutex<()>,
    done_cv: Condvar,
    /// Workers that have tried to pin themselves.
    started: AtomicUsize,
    start: SpinBarrier,
    user: SpinBarrier,
    release: AtomicU64,
    watch: Arc<Watch>,
    timer: Timer,
    cpus: Vec<usize>,
}

impl Shared {
    /// "worker thread I (CPU C)", as every reason names a member.
    fn who(&self, i: usize) -> String {
        format!("worker thread {i} (CPU {})", self.cpus[i])
    }

    /// Give the round up for `reason` (the first reason stays): every wait
    /// of a member ends.
    fn abandon(&self, reason: String) {
        self.watch.abandon(reason);
        self.start.poison();
        self.user.poison();
    }

    fn notify_done(&self) {
        let _g = lock(&self.done);
        self.done_cv.notify_all();
    }

    /// Sleep until a worker is done or a [`TICK`] has passed.
    fn doze(&self) {
        let g = lock(&self.done);
        let _ = self.done_cv.wait_timeout(g, TICK);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A persistent team of pinned threads.
pub struct Team {
    cpus: Vec<usize>,
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
    wait_bound: Duration,
    /// Why the team runs no more rounds (a member is gone).
    broken: Option<String>,
}

impl Team {
    /// Spawn one thread per entry of `cpus` and pin it there. Fails, naming
    /// the CPU, before any round runs when a CPU cannot be used, or when a
    /// thread ends or does not start within [`WAIT_BOUND`].
    pub fn new(cpus: &[usize]) -> Result<Team> {
        if cpus.is_empty() {
            bail!("a thread team needs at least one CPU");
        }
        if let Some(why) = crate::base::glibc::thread_hazard() {
            bail!("{why}");
        }
        let n = cpus.len();
        quiet_worker_panics();
        let shared = Arc::new(Shared {
            control: Mutex::new(Control {
                round: 0,
                job: None,
                shutdown: false,
            }),
            wake: Condvar::new(),
            done: Mutex::new(()),
            done_cv: Condvar::new(),
            started: AtomicUsize::new(0),
            start: SpinBarrier::at(n, WaitIn::StartBarrier),
            user: SpinBarrier::at(n, WaitIn::Barrier),
            release: AtomicU64::new(0),
            watch: Arc::new(Watch::new(n)),
            timer: Timer::new(),
            cpus: cpus.to_vec(),
        });
        let pin_errors: Arc<Mutex<Vec<(usize, String)>>> = Arc::new(Mutex::new(Vec::new()));
        let mut team = Team {
            cpus: cpus.to_vec(),
            shared: shared.clone(),
            handles: Vec::with_capacity(n),
            wait_bound: WAIT_BOUND,
            broken: None,
        };
        for (index, &cpu) in cpus.iter().enumerate() {
            let sh = shared.clone();
            let errs = pin_errors.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("cpuscope-w{index}-cpu{cpu}"))
                .spawn(move || worker(sh, errs, index, cpu));
            match spawned {
                Ok(h) => team.handles.push(h),
                Err(e) => {
                    // Drop stops the threads already spawned.
                    bail!("cannot start worker thread {index} for CPU {cpu}: {e}");
                }
            }
        }
        team.await_start()?;
        let mut errs = lock(&pin_errors).clone();
        if !errs.is_empty() {
            errs.sort();
            if errs.len() == 1 {
                bail!("{}", errs[0].1);
            }
            let others: Vec<String> = errs[1..]
                .iter()
                .map(|(i, _)| cpus[*i].to_string())
                .collect();
            bail!("{} (CPUs {} failed too)", errs[0].1, others.join(","));
        }
        Ok(team)
    }

    /// Wait until every worker has tried to pin itself: a worker that ends
    /// first, or is not there within the wait bound, fails the team.
    fn await_start(&mut self) -> Result<()> {
        let sh = Arc::clone(&self.shared);
        let n = self.cpus.len();
        let t0 = Instant::now();
        while sh.started.load(Ordering::Acquire) < n {
            sh.doze();
            let missing = (0..n).find(|&i| !sh.watch.members[i].started.load(Ordering::Acquire));
            let Some(i) = missing else {
                continue;
            };
            if self.handles[i].is_finished() || self.member_gone(i) {
                sh.watch.members[i].gone.store(true, Ordering::Relaxed);
                bail!("{} ended before it was pinned", sh.who(i));
            }
            if t0.elapsed() >= self.wait_bound {
                // Left behind by Drop, not joined.
                sh.watch.members[i].gone.store(true, Ordering::Relaxed);
                bail!(
                    "{} did not start within {}",
                    sh.who(i),
                    secs(self.wait_bound)
                );
            }
        }
        Ok(())
    }

    /// CPUs of the team, in order.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    pub fn size(&self) -> usize {
        self.cpus.len()
    }

    /// The clock used for the round times.
    pub fn timer(&self) -> &Timer {
        &self.shared.timer
    }

    /// How long a member may keep the others waiting (at a barrier or in a
    /// spin-wait) before a round is given up with the reason
    /// ([`WAIT_BOUND`] unless set).
    pub fn set_wait_bound(&mut self, bound: Duration) {
        self.wait_bound = bound;
    }

    /// Run `f` once on every thread, released together; wait for all.
    ///
    /// The round fails with one line naming the member and what happened
    /// when a member panics, when its thread ends (whatever ended it), when
    /// it keeps the others waiting past the wait bound, or when a stop
    /// (Ctrl-C) came and the round is not over [`STOP_GRACE`] later. A team
    /// whose member is gone fails every later round the same way.
    pub fn run_round<R, F>(&mut self, f: F) -> Result<Round<R>>
    where
        R: Send,
        F: Fn(ThreadCtx<'_>) -> R + Sync,
    {
        if let Some(why) = &self.broken {
            bail!("{why}");
        }
        let n = self.cpus.len();
        let timer = &self.shared.timer;
        let slots: Vec<Mutex<Option<(R, Tick, Tick)>>> = (0..n).map(|_| Mutex::new(None)).collect();
        let job = |ctx: &ThreadCtx<'_>| {
            let start = timer.now();
            let r = f(*ctx);
            let end = timer.now();
            *lock(&slots[ctx.index]) = Some((r, start, end));
        };
        let job_ref: &Job<'_> = &job;
        // SAFETY: erase the lifetime so the pointer can sit in the shared
        // control block. Workers dereference it only between the round bump
        // below and their `done` mark, and this function does not return
        // (nor unwind: nothing below panics) until every worker is done or
        // its thread is gone (`await_round`, which ends the process rather
        // than return while a live worker may still be inside the round).
        let job_ptr: *const Job<'static> =
            unsafe { std::mem::transmute::<&Job<'_>, &'static Job<'static>>(job_ref) };

        self.shared.start.reset();
        self.shared.user.reset();
        self.shared.watch.reset();
        let round = {
            let mut c = lock(&self.shared.control);
            c.job = Some(job_ptr);
            c.round += 1;
            c.round
        };
        self.shared.wake.notify_all();
        self.await_round(round);
        lock(&self.shared.control).job = None;

        if let Some(why) = self.shared.watch.reason() {
            if self
                .shared
                .watch
                .members
                .iter()
                .any(|m| m.gone.load(Ordering::Relaxed))
            {
                self.broken = Some(why.clone());
            }
            bail!("{why}");
        }
        let release = Tick(self.shared.release.load(Ordering::Acquire));
        let mut results = Vec::with_capacity(n);
        let mut thread_ns = Vec::with_capacity(n);
        let mut start_skew_ns = Vec::with_capacity(n);
        let mut last_end = release;
        for (i, slot) in slots.into_iter().enumerate() {
            let Some((r, s, e)) = slot.into_inner().unwrap_or_else(|e| e.into_inner()) else {
                bail!(
                    "worker thread {i} (CPU {}) returned no result",
                    self.cpus[i]
                );
            };
            results.push(r);
            thread_ns.push(timer.ns(s, e));
            start_skew_ns.push(timer.ns(release, s));
            last_end = last_end.max(e);
        }
        Ok(Round {
            results,
            elapsed_ns: timer.ns(release, last_end),
            thread_ns,
            start_skew_ns,
        })
    }

    /// Whether every member is done with `round` or gone.
    fn back(&self, round: u64) -> bool {
        self.shared
            .watch
            .members
            .iter()
            .all(|m| m.done.load(Ordering::Acquire) >= round || m.gone.load(Ordering::Relaxed))
    }

    /// The calling thread's watch over a round: it sleeps until every
    /// member is back, looking every [`TICK`] whether the round must be
    /// given up (`look_at_round`). Returns only when every member is done
    /// with the round or gone; a live member still out [`RETURN_GRACE`]
    /// after the round was given up ends the process (`cannot_leave`).
    fn await_round(&self, round: u64) {
        let sh = &self.shared;
        let mut stop_seen = None;
        let mut given_up_at: Option<Instant> = None;
        while !self.back(round) {
            sh.doze();
            if self.back(round) {
                return;
            }
            let now = Instant::now();
            match given_up_at {
                None => {
                    if let Some(why) = self.look_at_round(round, now, &mut stop_seen) {
                        sh.abandon(why);
                    }
                    if sh.watch.abandoned() {
                        given_up_at = Some(now);
                    }
                }
                Some(t) => {
                    self.newly_gone(round);
                    if now.duration_since(t) > RETURN_GRACE {
                        self.cannot_leave(round);
                    }
                }
            }
        }
    }

    /// Why the round must be given up now, if it must: a member's thread is
    /// gone, a stop came more than [`STOP_GRACE`] ago, or a member keeps
    /// the others waiting past the wait bound.
    fn look_at_round(
        &self,
        round: u64,
        now: Instant,
        stop_seen: &mut Option<Instant>,
    ) -> Option<String> {
        if let Some(i) = self.newly_gone(round) {
            return Some(format!(
                "{} ended during the round without a panic: its thread is gone",
                self.shared.who(i)
            ));
        }
        if crate::base::stop::requested() {
            let t = *stop_seen.get_or_insert(now);
            if now.duration_since(t) >= STOP_GRACE {
                return Some(format!(
                    "interrupted ({}) before the round ended",
                    crate::base::stop::cause()
                ));
            }
        }
        self.overdue(round)
    }

    /// Members still in `round` whose thread no longer exists, marked gone;
    /// the first of them.
    fn newly_gone(&self, round: u64) -> Option<usize> {
        let mut first = None;
        for (i, m) in self.shared.watch.members.iter().enumerate() {
            if m.done.load(Ordering::Acquire) >= round || m.gone.load(Ordering::Relaxed) {
                continue;
            }
            if self.member_gone(i) {
                m.gone.store(true, Ordering::Relaxed);
                first.get_or_insert(i);
            }
        }
        first
    }

    /// Whether member `i`'s thread has ended (returned, or ended by
    /// anything else: the kernel no longer knows its thread id).
    fn member_gone(&self, i: usize) -> bool {
        self.handles.get(i).is_some_and(|h| h.is_finished())
            || thread_gone(self.shared.watch.members[i].tid.load(Ordering::Acquire))
    }

    /// The reason when a member has kept the others waiting past the bound.
    fn overdue(&self, round: u64) -> Option<String> {
        let w = &self.shared.watch;
        let (mut waiters, mut laggards, mut finished) = (Vec::new(), Vec::new(), Vec::new());
        let mut earliest: Option<(u64, watch::WaitIn)> = None;
        for (i, m) in w.members.iter().enumerate() {
            if m.done.load(Ordering::Acquire) >= round {
                finished.push(i);
            } else if m.gone.load(Ordering::Relaxed) {
                continue;
            } else if let Some((since, at)) = w.waiting(i) {
                waiters.push(i);
                if earliest.is_none_or(|(s, _)| since < s) {
                    earliest = Some((since, at));
                }
            } else {
                laggards.push(i);
            }
        }
        let (since, at) = earliest?;
        if w.now_us().saturating_sub(since) < self.wait_bound.as_micros() as u64 {
            return None;
        }
        let sh = &self.shared;
        let bound = secs(self.wait_bound);
        let who_waited = match waiters.as_slice() {
            [one] => sh.who(*one),
            many => format!("{} worker threads", many.len()),
        };
        Some(match (laggards.as_slice(), finished.as_slice()) {
            ([first, rest @ ..], _) => {
                let also = if rest.is_empty() {
                    String::new()
                } else {
                    let c: Vec<String> = rest.iter().map(|&i| self.cpus[i].to_string()).collect();
                    format!(" (nor did those on CPUs {})", c.join(","))
                };
                format!(
                    "{} did not arrive within {bound}: {who_waited} waited for it {}{also}",
                    sh.who(*first),
                    at.words()
                )
            }
            ([], [first, ..]) => format!(
                "{} ended its part of the round while {who_waited} waited for it {} ({bound})",
                sh.who(*first),
                at.words()
            ),
            ([], []) => format!(
                "every worker thread of the round waited {bound} for another {}: none arrived",
                at.words()
            ),
        })
    }

    /// A live member did not come back after the round was given up: the
    /// round's data cannot be freed under it, so the process ends here,
    /// with one line (the machine switches a measurement holds are written
    /// back first; the figures already stored are kept).
    fn cannot_leave(&self, round: u64) -> ! {
        let out: Vec<String> = (0..self.cpus.len())
            .filter(|&i| {
                let m = &self.shared.watch.members[i];
                m.done.load(Ordering::Acquire) < round && !m.gone.load(Ordering::Relaxed)
            })
            .map(|i| self.shared.who(i))
            .collect();
        let why = self.shared.watch.reason().unwrap_or_default();
        crate::placement::machine_state::restore_registered();
        crate::base::output::err_line(&format!(
            "cpuscope: error: {why}; {} did not come back within {} after the round was given up, so the process ends here (the figures already stored are kept)",
            out.join(", "),
            secs(RETURN_GRACE)
        ));
        std::process::exit(if crate::base::stop::requested() {
            130
        } else {
            1
        });
    }
}

/// "30 s", "0.5 s".
fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Whether the thread `tid` of this process has ended (`tgkill` with no
/// signal answers ESRCH).
fn thread_gone(tid: i32) -> bool {
    if tid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the thread exists; no memory is
    // passed.
    let r = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

fn gettid() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team").field("cpus", &self.cpus).finish()
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        lock(&self.shared.control).shutdown = true;
        self.shared.wake.notify_all();
        for (i, h) in self.handles.drain(..).enumerate() {
            // A member that is gone (or never started) is left behind, not
            // joined: it holds nothing but the shared block.
            if !self.shared.watch.members[i].gone.load(Ordering::Relaxed) {
                let _ = h.join();
            }
        }
    }
}

thread_local! {
    /// Set on team worker threads: their panics are reported by `run_round`.
    static IN_TEAM_WORKER: Cell<bool> = const { Cell::new(false) };
    /// Where the last panic on this worker thread happened.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Wrap the process panic hook once: on team worker threads, record where the
/// panic happened instead of printing a message and backtrace (the panic
/// becomes a one-line error of `run_round`); elsewhere, defer to the
/// previous hook.
fn quiet_worker_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_TEAM_WORKER.with(|w| w.get()) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-text panic payload)".to_string()
    }
}

fn worker(sh: Arc<Shared>, errs: Arc<Mutex<Vec<(usize, String)>>>, index: usize, cpu: usize) {
    let me = &sh.watch.members[index];
    me.tid.store(gettid(), Ordering::Release);
    let pinned = pin_current_thread(cpu);
    let ok = pinned.is_ok();
    if let Err(e) = pinned {
        lock(&errs).push((index, e.to_string()));
    }
    me.started.store(true, Ordering::Release);
    sh.started.fetch_add(1, Ordering::AcqRel);
    sh.notify_done();
    if !ok {
        return;
    }
    IN_TEAM_WORKER.with(|w| w.set(true));
    watch::join(Arc::clone(&sh.watch), index);
    let n = sh.cpus.len();
    let mut seen = 0u64;
    loop {
        let job = {
            let mut c = lock(&sh.control);
            while c.round == seen && !c.shutdown {
                c = sh.wake.wait(c).unwrap_or_else(|e| e.into_inner());
            }
            if c.shutdown {
                return;
            }
            seen = c.round;
            c.job
        };
        if let Some(job) = job {
            let ran = catch_unwind(AssertUnwindSafe(|| {
                // Meet the others; the last to arrive stamps the release time.
                sh.start
                    .wait_then(|| sh.release.store(sh.timer.now().0, Ordering::Relaxed));
                let ctx = ThreadCtx {
                    index,
                    cpu,
                    team_size: n,
                    barrier: &sh.user,
                    timer: &sh.timer,
                };
                // SAFETY: see run_round: the job outlives this round.
                let job: &Job<'static> = unsafe { &*job };
                job(&ctx)
            }));
            if let Err(p) = ran {
                if !p.is::<Poisoned>() {
                    let mut msg = panic_message(p.as_ref());
                    if let Some(at) = PANIC_AT.with(|a| a.borrow_mut().take()) {
                        msg = format!("{msg} (at {at})");
                    }
                    sh.abandon(format!("{} panicked: {msg}", sh.who(index)));
                }
            }
        }
        me.done.store(seen, Ordering::Release);
        sh.notify_done();
    }
}

/// Spawn a team on `cpus`, run one round, and stop the team.
pub fn run_once<R, F>(cpus: &[usize], f: F) -> Result<Round<R>>
where
    R: Send,
    F: Fn(ThreadCtx<'_>) -> R + Sync,
{
    Team::new(cpus)?.run_round(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::watch::{abandoned, Patience};

    /// Two CPUs this process may use (the same one twice on a 1-CPU machine).
    fn two_cpus() -> Vec<usize> {
        let u = crate::placement::pin::current_affinity().unwrap().to_vec();
        vec![u[0], *u.get(1).unwrap_or(&u[0])]
    }

    /// Stand-in for a member that is never scheduled: it does not come to
    /// the meeting point, but it does come back once the round is given up
    /// (as every wait of the code does). Gives up itself after `limit`.
    fn stay_away(limit: Duration) {
        let t0 = Instant::now();
        while !abandoned() && t0.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_member_that_panics_ends_the_round_with_its_reason_and_the_team_goes_on() {
        let cpus = two_cpus();
        let mut team = Team::new(&cpus).unwrap();
        // Member 0 waits in a spin-wait (not a barrier) for an answer that
        // member 1 never gives: it panics first.
        let line = AtomicU64::new(0);
        let t0 = Instant::now();
        let e = team
            .run_round(|ctx| {
                if ctx.index == 1 {
                    panic!("kernel bug on purpose");
                }
                let mut p = Patience::new();
                while line.load(Ordering::Acquire) == 0 {
                    if p.give_up() {
                        return 0;
                    }
                    std::hint::spin_loop();
                }
                1
            })
            .unwrap_err()
            .to_string();
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert!(
            e.starts_with(&format!("worker thread 1 (CPU {}) panicked: kernel bug on purpose (at src/placement/team.rs:", cpus[1])),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        // The next rounds run, with every member and a barrier.
        for _ in 0..3 {
            let r = team
                .run_round(|ctx| {
                    ctx.wait();
                    ctx.index
                })
                .unwrap();
            assert_eq!(r.results, vec![0, 1]);
        }
    }

    #[test]
    fn a_member_that_never_arrives_ends_the_round_within_the_bound() {
        let cpus = two_cpus();
        let mut team = Team::new(&cpus).unwrap();
        team.set_wait_bound(Duration::from_millis(300));
        for at_barrier in [true, false] {
            let line = AtomicU64::new(0);
            let t0 = Instant::now();
            let e = team
                .run_round(|ctx| {
                    if ctx.index == 1 {
                        stay_away(Duration::from_secs(60));
                        return;
                    }
                    if at_barrier {
                        ctx.wait();
                    } else {
                        let mut p = Patience::new();
                        while line.load(Ordering::Acquire) == 0 && !p.give_up() {
                            std::hint::spin_loop();
                        }
                    }
                })
                .unwrap_err()
                .to_string();
            let took = t0.elapsed();
            // The bound, plus a look every 100 ms: well under the 60 s the
            // member would stay away.
            assert!(took >= Duration::from_millis(300), "{took:?}");
            assert!(took < Duration::from_secs(5), "{took:?}");
            let where_ = if at_barrier {
                "at the team's barrier"
            } else {
                "in a spin-wait"
            };
            assert_eq!(
                e,
                format!(
                    "worker thread 1 (CPU {}) did not arrive within 0.3 s: worker thread 0 (CPU {}) waited for it {where_}",
                    cpus[1], cpus[0]
                )
            );
        }
        // The team goes on.
        let r = team.run_round(|ctx| ctx.index * 10).unwrap();
        assert_eq!(r.results, vec![0, 10]);
    }

    #[test]
    fn a_member_whose_thread_ends_is_named_and_the_team_runs_no_more_rounds() {
        let cpus = two_cpus();
        let mut team = Team::new(&cpus).unwrap();
        let t0 = Instant::now();
        let e = team
            .run_round(|ctx| {
                if ctx.index == 1 {
                    // What an emulator or a stray signal handler may do: the
                    // thread ends without unwinding (the raw exit system
                    // call ends this thread only).
                    // SAFETY: the thread holds no lock here; nothing of it
                    // is used again (the team leaves it behind).
                    unsafe { libc::syscall(libc::SYS_exit, 0) };
                }
                ctx.wait();
            })
            .unwrap_err()
            .to_string();
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        let want = format!(
            "worker thread 1 (CPU {}) ended during the round without a panic: its thread is gone",
            cpus[1]
        );
        assert_eq!(e, want);
        // Later rounds fail at once with the same reason; dropping the team
        // does not wait for the thread that is gone.
        let e = team.run_round(|ctx| ctx.index).unwrap_err().to_string();
        assert_eq!(e, want);
        drop(team);
    }

    #[test]
    fn a_wait_outside_a_team_polls_and_marks_nothing() {
        // Outside a team a Patience looks at the process's stop flag only
        // (not set in the unit tests: tests/reliability_teams.rs sets it in
        // a child process).
        let mut p = Patience::new();
        for _ in 0..(4 * crate::placement::watch::POLL_EVERY) {
            assert!(!p.give_up());
        }
        assert!(!abandoned());
    }

    #[test]
    fn an_idle_round_is_not_slowed_by_the_watch() {
        // Rounds that end at once are not held to the watch's tick.
        let mut team = Team::new(&two_cpus()).unwrap();
        let t0 = Instant::now();
        for _ in 0..50 {
            team.run_round(|ctx| ctx.wait()).unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    }
}

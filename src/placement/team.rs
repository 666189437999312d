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
//!   shared barrier is poisoned so threads waiting in it unwind instead of
//!   hanging, and the round returns a one-line error naming the worker, the
//!   panic message and its location; the team stays usable for later rounds.
//!   (The process panic hook is wrapped once so that worker panics print no
//!   message or backtrace of their own; other threads' panics are untouched.)
//! - Threads persist between rounds (no re-spawning) and sleep on a condition
//!   variable between rounds, so an idle team costs no CPU.
//! - Two entries of the list may name the same CPU; the barrier then falls back
//!   from spinning to yielding so the threads sharing a CPU still progress.

use crate::base::timer::{Tick, Timer};
use crate::placement::pin::pin_current_thread;
use anyhow::{bail, Result};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once};
use std::thread::JoinHandle;

/// Spins before a waiting thread starts yielding its CPU.
const SPINS_BEFORE_YIELD: u32 = 1 << 16;

#[repr(align(128))]
struct Padded<T>(T);

/// Payload of the unwind that poisoned-barrier waiters take.
struct Poisoned;

/// A sense-reversing barrier on atomics for a fixed number of threads.
/// Waiters spin (then yield, if the wait gets long); the last to arrive
/// releases all by bumping the generation. Reusable without reset.
pub struct SpinBarrier {
    n: usize,
    count: Padded<AtomicUsize>,
    generation: Padded<AtomicUsize>,
    poisoned: AtomicBool,
}

impl SpinBarrier {
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n: n.max(1),
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
    /// thread (the last to arrive). If another team thread panicked, this
    /// unwinds (without running the panic hook) so the round can end.
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
        let mut spins = 0u32;
        while self.generation.0.load(Ordering::Acquire) == gen {
            if self.poisoned.load(Ordering::Relaxed) {
                resume_unwind(Box::new(Poisoned));
            }
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
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
    /// Workers done with the current round (or with start-up).
    done: Mutex<usize>,
    done_cv: Condvar,
    start: SpinBarrier,
    user: SpinBarrier,
    release: AtomicU64,
    panics: Mutex<Vec<(usize, String)>>,
    timer: Timer,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A persistent team of pinned threads.
pub struct Team {
    cpus: Vec<usize>,
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl Team {
    /// Spawn one thread per entry of `cpus` and pin it there. Fails, naming
    /// the CPU, before any round runs when a CPU cannot be used.
    pub fn new(cpus: &[usize]) -> Result<Team> {
        if cpus.is_empty() {
            bail!("a thread team needs at least one CPU");
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
            done: Mutex::new(0),
            done_cv: Condvar::new(),
            start: SpinBarrier::new(n),
            user: SpinBarrier::new(n),
            release: AtomicU64::new(0),
            panics: Mutex::new(Vec::new()),
            timer: Timer::new(),
        });
        let pin_errors: Arc<Mutex<Vec<(usize, String)>>> = Arc::new(Mutex::new(Vec::new()));
        let mut team = Team {
            cpus: cpus.to_vec(),
            shared: shared.clone(),
            handles: Vec::with_capacity(n),
        };
        for (index, &cpu) in cpus.iter().enumerate() {
            let sh = shared.clone();
            let errs = pin_errors.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("cpuscope-w{index}-cpu{cpu}"))
                .spawn(move || worker(sh, errs, index, cpu, n));
            match spawned {
                Ok(h) => team.handles.push(h),
                Err(e) => {
                    // Drop stops the threads already spawned.
                    bail!("cannot start worker thread {index} for CPU {cpu}: {e}");
                }
            }
        }
        // Wait until every worker has tried to pin itself.
        {
            let mut done = lock(&shared.done);
            while *done < n {
                done = shared.done_cv.wait(done).unwrap_or_else(|e| e.into_inner());
            }
            *done = 0;
        }
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

    /// Run `f` once on every thread, released together; wait for all.
    pub fn run_round<R, F>(&mut self, f: F) -> Result<Round<R>>
    where
        R: Send,
        F: Fn(ThreadCtx<'_>) -> R + Sync,
    {
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
        // below and their `done` increment, and this function does not return
        // (nor unwind: nothing below panics) until all n workers are done.
        let job_ptr: *const Job<'static> =
            unsafe { std::mem::transmute::<&Job<'_>, &'static Job<'static>>(job_ref) };

        self.shared.start.reset();
        self.shared.user.reset();
        lock(&self.shared.panics).clear();
        {
            let mut c = lock(&self.shared.control);
            c.job = Some(job_ptr);
            c.round += 1;
        }
        self.shared.wake.notify_all();
        {
            let mut done = lock(&self.shared.done);
            while *done < n {
                done = self
                    .shared
                    .done_cv
                    .wait(done)
                    .unwrap_or_else(|e| e.into_inner());
            }
            *done = 0;
        }
        lock(&self.shared.control).job = None;

        let panics = lock(&self.shared.panics).clone();
        if let Some((index, msg)) = panics.iter().min() {
            bail!(
                "worker thread {index} (CPU {}) panicked: {msg}",
                self.cpus[*index]
            );
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
        for h in self.handles.drain(..) {
            let _ = h.join();
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

fn mark_done(sh: &Shared, n: usize) {
    let mut done = lock(&sh.done);
    *done += 1;
    if *done == n {
        sh.done_cv.notify_all();
    }
}

fn worker(
    sh: Arc<Shared>,
    errs: Arc<Mutex<Vec<(usize, String)>>>,
    index: usize,
    cpu: usize,
    n: usize,
) {
    let pinned = pin_current_thread(cpu);
    let ok = pinned.is_ok();
    if let Err(e) = pinned {
        lock(&errs).push((index, e.to_string()));
    }
    mark_done(&sh, n);
    if !ok {
        return;
    }
    IN_TEAM_WORKER.with(|w| w.set(true));
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
        let Some(job) = job else {
            mark_done(&sh, n);
            continue;
        };
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
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| job(&ctx))) {
            if !p.is::<Poisoned>() {
                let mut msg = panic_message(p.as_ref());
                if let Some(at) = PANIC_AT.with(|a| a.borrow_mut().take()) {
                    msg = format!("{msg} (at {at})");
                }
                lock(&sh.panics).push((index, msg));
            }
            sh.user.poison();
        }
        mark_done(&sh, n);
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

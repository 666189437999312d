//! Teams that lose a thread (issue 34): whatever ends or stalls a team's
//! thread (a panic, a thread that ends without one, a member that never
//! arrives), the round ends within the team's bound with one line naming the
//! member and what happened; every wait of the kernels (c2c ping-pong, spin
//! lock, handoff, the meeting points) ends with it; Ctrl-C ends a stuck
//! round; and the `simd` command that hung under qemu-aarch64 ends, with its
//! figures or their reasons. Run natively and under qemu-aarch64
//! (`scripts/cargo-aarch64.sh test --release --test reliability_teams`).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/emulator.rs"]
mod emulator;
#[path = "common/skip.rs"]
mod skip;

use cpuscope::kernels::c2c::{self as k, Method};
use cpuscope::kernels::sync::{self as ks, SpinLock, Wait};
use cpuscope::placement::team::Team;
use cpuscope::placement::watch::abandoned;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::{Duration, Instant};

/// Two CPUs this process may use (the same one twice on a 1-CPU machine).
fn two_cpus() -> Vec<usize> {
    let u = cpuscope::placement::current_affinity().unwrap().to_vec();
    vec![u[0], *u.get(1).unwrap_or(&u[0])]
}

/// How long a round may take to end once a member is lost: the bound, the
/// watchdog's look every 100 ms, and an emulator's slowness.
fn ends_within() -> Duration {
    if emulator::declared().is_some() {
        Duration::from_secs(20)
    } else {
        Duration::from_secs(5)
    }
}

/// A member that is never scheduled, as far as the others can tell: it
/// does not come to the meeting point, but comes back once the round is
/// given up (as every wait of the code does). It gives up by itself after
/// a minute, far past every bound below.
fn stay_away() {
    let t0 = Instant::now();
    while !abandoned() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Each wait of the kernels, on member 0, for a member 1 that stays away.
#[derive(Clone, Copy, Debug)]
enum KernelWait {
    Ping(Method),
    Pong(Method),
    SpinLock,
    Handoff(Wait),
    Meet,
}

const KERNEL_WAITS: [KernelWait; 8] = [
    KernelWait::Ping(Method::Cas),
    KernelWait::Ping(Method::LoadStore),
    KernelWait::Pong(Method::Cas),
    KernelWait::Pong(Method::LoadStore),
    KernelWait::SpinLock,
    KernelWait::Handoff(Wait::Spin),
    KernelWait::Handoff(Wait::Futex),
    KernelWait::Meet,
];

#[test]
fn a_member_that_panics_mid_ping_pong_ends_the_round_with_its_reason() {
    let cpus = two_cpus();
    let mut team = Team::new(&cpus).unwrap();
    for method in [Method::Cas, Method::LoadStore] {
        let (a, b) = (AtomicU64::new(0), AtomicU64::new(0));
        let t0 = Instant::now();
        // Member 0 starts a million round trips; member 1, the responder,
        // panics before its first answer.
        let e = team
            .run_round(|ctx| {
                if ctx.index == 1 {
                    panic!("responder lost on purpose");
                }
                k::ping(method, &a, &b, 0, 1_000_000)
            })
            .unwrap_err()
            .to_string();
        assert!(
            t0.elapsed() < ends_within(),
            "{method:?}: {:?}",
            t0.elapsed()
        );
        assert!(
            e.starts_with(&format!(
                "worker thread 1 (CPU {}) panicked: responder lost on purpose (at tests/reliability_teams.rs:",
                cpus[1]
            )),
            "{method:?}: {e}"
        );
        assert!(!e.contains('\n'), "{e}");
        // The team measures again: a whole ping-pong, both sides.
        let (a, b) = (AtomicU64::new(0), AtomicU64::new(0));
        let r = team
            .run_round(|ctx| {
                if ctx.index == 0 {
                    k::ping(method, &a, &b, 0, 1000)
                } else {
                    k::pong(method, &a, &b, 0, 1000)
                }
            })
            .unwrap();
        assert_eq!(r.results, vec![2000, 2000], "{method:?}");
    }
}

#[test]
fn a_member_that_never_answers_ends_every_kernel_wait_within_the_bound() {
    let cpus = two_cpus();
    let mut team = Team::new(&cpus).unwrap();
    team.set_wait_bound(Duration::from_millis(400));
    for wait in KERNEL_WAITS {
        let (a, b) = (AtomicU64::new(0), AtomicU64::new(0));
        let turn = AtomicU32::new(0);
        let lock = SpinLock::new();
        let counters = [AtomicU64::new(0), AtomicU64::new(0)];
        if matches!(wait, KernelWait::SpinLock) {
            // Held by the absent member (taken here, never given back).
            assert!(lock.lock());
        }
        let t0 = Instant::now();
        let e = team
            .run_round(|ctx| {
                if ctx.index == 1 {
                    stay_away();
                    return 0;
                }
                match wait {
                    KernelWait::Ping(m) => k::ping(m, &a, &b, 0, 1_000_000),
                    KernelWait::Pong(m) => k::pong(m, &a, &b, 0, 1_000_000),
                    KernelWait::SpinLock => {
                        ks::spin_lock_loop(&lock, &counters[0], &counters[1], 0, 1_000_000)
                    }
                    KernelWait::Handoff(w) => ks::handoff_loop(&turn, w, 0, 0, 1_000_000) as u64,
                    KernelWait::Meet => k::wait_nonzero(&a),
                }
            })
            .unwrap_err()
            .to_string();
        let took = t0.elapsed();
        assert!(took >= Duration::from_millis(400), "{wait:?}: {took:?}");
        assert!(took < ends_within(), "{wait:?}: {took:?}");
        assert_eq!(
            e,
            format!(
                "worker thread 1 (CPU {}) did not arrive within 0.4 s: worker thread 0 (CPU {}) waited for it in a spin-wait",
                cpus[1], cpus[0]
            ),
            "{wait:?}"
        );
    }
    // The same member kept away while member 0 waits at the team's barrier.
    let e = team
        .run_round(|ctx| {
            if ctx.index == 1 {
                stay_away();
            } else {
                ctx.wait();
            }
        })
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("waited for it at the team's barrier"), "{e}");
    // And the team goes on.
    assert_eq!(team.run_round(|c| c.index).unwrap().results, vec![0, 1]);
}

#[test]
fn a_member_whose_thread_ends_breaks_the_team_with_its_reason() {
    let cpus = two_cpus();
    let mut team = Team::new(&cpus).unwrap();
    let (a, b) = (AtomicU64::new(0), AtomicU64::new(0));
    let t0 = Instant::now();
    let e = team
        .run_round(|ctx| {
            if ctx.index == 1 {
                // A thread that ends without unwinding (what an emulator or a
                // stray handler may do): the raw exit system call ends this
                // thread only.
                // SAFETY: it holds no lock here; nothing of it is used again.
                unsafe { libc::syscall(libc::SYS_exit, 0) };
            }
            k::ping(Method::Cas, &a, &b, 0, 1_000_000)
        })
        .unwrap_err()
        .to_string();
    assert!(t0.elapsed() < ends_within(), "{:?}", t0.elapsed());
    let want = format!(
        "worker thread 1 (CPU {}) ended during the round without a panic: its thread is gone",
        cpus[1]
    );
    assert_eq!(e, want);
    assert_eq!(team.run_round(|c| c.index).unwrap_err().to_string(), want);
    // Dropping the team does not wait for the thread that is gone.
    let t0 = Instant::now();
    drop(team);
    assert!(t0.elapsed() < Duration::from_secs(2));
}

/// The environment variable that makes this test binary, started again by
/// a test, play the stuck process.
const CHILD: &str = "CPUSCOPE_TEST_TEAMS_CHILD";

/// Not a test of its own: the child processes of the tests below (it
/// returns at once unless started as one, `CHILD` naming which).
/// - `stuck`: with the Ctrl-C handler installed, member 0 waits at the
///   barrier for a member 1 that stays away, under a bound of ten minutes:
///   only the stop request can end the round.
/// - `never-back`: member 1 sleeps in a call that polls nothing (a minute)
///   while member 0 waits at the barrier; the bound is 0.3 s.
/// - `deaf`: the Ctrl-C handler installed, the main thread sleeps in a call
///   that polls nothing (a minute).
#[test]
fn child_process() {
    let Some(role) = std::env::var_os(CHILD) else {
        return;
    };
    cpuscope::base::stop::install().unwrap();
    let mut team = Team::new(&two_cpus()).unwrap();
    let deaf = || std::thread::sleep(Duration::from_secs(60));
    println!("child: ready");
    let r = match role.to_str() {
        Some("stuck") => {
            team.set_wait_bound(Duration::from_secs(600));
            team.run_round(|ctx| {
                if ctx.index == 1 {
                    stay_away();
                } else {
                    ctx.wait();
                }
            })
        }
        Some("never-back") => {
            team.set_wait_bound(Duration::from_millis(300));
            team.run_round(|ctx| {
                if ctx.index == 1 {
                    deaf();
                } else {
                    ctx.wait();
                }
            })
        }
        _ => {
            deaf();
            team.run_round(|_| ())
        }
    };
    match r {
        Ok(_) => eprintln!("round: measured"),
        Err(e) => eprintln!("round: {e}"),
    }
    std::process::exit(if cpuscope::base::stop::requested() {
        130
    } else {
        1
    });
}

/// Start this test binary as the child `role`, wait until it is ready and
/// half a second more, SIGINT it when `sigint`: the time from then to its
/// end, its exit status and its standard error.
fn run_child(role: &str, sigint: bool) -> (Duration, Option<i32>, String) {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, role)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = lines.any(|l| l.is_ok_and(|l| l.contains("child: ready")));
    assert!(ready, "the child {role} never got ready");
    // Let the round start and member 0 wait at the barrier.
    std::thread::sleep(Duration::from_millis(500));
    if sigint {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    }
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    (t0.elapsed(), out.status.code(), err)
}

/// An emulator's slowness on top of a bound, in seconds.
fn slack() -> u64 {
    if emulator::declared().is_some() {
        10
    } else {
        2
    }
}

#[test]
fn sigint_during_a_stuck_barrier_ends_the_process_promptly() {
    let (took, code, err) = run_child("stuck", true);
    // The round is given up 0.5 s after the stop; the wait polls every
    // 1024 turns: within about a second (more under an emulator).
    assert!(
        took < Duration::from_secs(1 + slack()),
        "{took:?} after SIGINT: {err}"
    );
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.contains("round: interrupted (Ctrl-C) before the round ended"),
        "{err}"
    );
}

#[test]
fn a_member_that_never_comes_back_ends_the_process_with_its_reason() {
    // Given up after 0.3 s; the member still out 10 s later (it sleeps in a
    // call that polls nothing) may still use the round's data: the process
    // ends, naming it, instead of freeing that data under it or hanging.
    let (took, code, err) = run_child("never-back", false);
    let cpus = two_cpus();
    assert!(took < Duration::from_secs(11 + slack()), "{took:?}: {err}");
    assert!(took >= Duration::from_secs(9), "{took:?}: {err}");
    assert_eq!(code, Some(1), "{err}");
    let want = format!(
        "cpuscope: error: worker thread 1 (CPU {}) did not arrive within 0.3 s: worker thread 0 (CPU {}) waited for it at the team's barrier; worker thread 1 (CPU {}) did not come back within 10 s after the round was given up, so the process ends here (the figures already stored are kept)",
        cpus[1], cpus[0], cpus[1]
    );
    assert_eq!(err.trim_end(), want);
}

#[test]
fn a_process_stuck_where_nothing_polls_ends_after_the_backstop() {
    // The main thread sleeps in a call no flag reaches (as a thread stuck in
    // a library does): 15 s after SIGINT the backstop ends the process.
    let (took, code, err) = run_child("deaf", true);
    assert!(took >= Duration::from_secs(14), "{took:?}: {err}");
    assert!(took < Duration::from_secs(15 + slack()), "{took:?}: {err}");
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(
        err.trim_end(),
        "cpuscope: error: stopped (Ctrl-C) 15 s ago and still running: something is stuck; ending now (the figures already stored are kept)"
    );
}

/// The SIMD variant this machine runs: NEON on aarch64 (the command that
/// hung under qemu-aarch64), else the widest x86 one.
fn variant() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            "avx2"
        } else {
            "sse2"
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        "neon"
    }
}

/// `simd --variants V --no-frequency --no-peak --profile quick` through
/// `cmd`, killed past `limit`: its exit status and standard output.
fn simd_ends(mut cmd: Command, variant: &str, limit: Duration, what: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let mut child = cmd
        .arg("--store")
        .arg(&store)
        .args(["simd", "--variants", variant, "--no-frequency", "--no-peak"])
        .args(["--profile", "quick"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what}: {:?}: {err}\n{text}",
        out.status
    );
    // The per-core row (two threads here) is there: its figure, or not
    // available with the reason.
    let measured = text.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.first() == Some(&"per_core")
            && f.get(3)
                .is_some_and(|v| v.trim_end_matches('*').parse::<f64>().is_ok())
    });
    let explained = text.contains("threads=per_core: not available: ");
    assert!(
        measured || explained,
        "{what}: no per_core figure nor reason:\n{text}"
    );
    text
}

/// The command of the report (issue 34): under qemu-aarch64, `simd
/// --variants neon --no-frequency --no-peak --profile quick` hung at `neon ×
/// 2 thread(s) (per_core)`. Its cause: with `QEMU_LD_PREFIX` naming the
/// cross sysroot while the host also has `libc6:arm64`, the loader of one
/// glibc build runs with the C library of another, and `pthread_create`
/// spins for ever in the stack cache (docs/reliability.md). Under the
/// emulator this test runs that command plainly and with that mix; natively
/// it runs the native variant, and the aarch64 binary under qemu-aarch64
/// when it is built (`scripts/cargo-aarch64.sh build --release`).
#[test]
fn the_simd_command_that_hung_under_qemu_ends_with_figures_or_reasons() {
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    if usable < 2 {
        skip::skip_or_fail(&format!(
            "the per_core point needs two usable CPUs, this process has {usable}"
        ));
        return;
    }
    let limit = Duration::from_secs(300);
    let cross = "/usr/aarch64-linux-gnu";
    let mixed_possible = std::path::Path::new(&format!("{cross}/lib/libc.so.6")).exists()
        && std::path::Path::new("/usr/lib/aarch64-linux-gnu/libc.so.6").exists();
    if emulator::declared().is_some() {
        simd_ends(bin::command(), "neon", limit, "qemu-aarch64");
        if mixed_possible {
            let mut cmd = bin::command();
            cmd.env("QEMU_LD_PREFIX", cross);
            simd_ends(cmd, "neon", limit, "qemu-aarch64 with QEMU_LD_PREFIX");
        }
        return;
    }
    simd_ends(bin::command(), variant(), limit, "native");
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let qemu = ["qemu-aarch64-static", "qemu-aarch64"]
        .into_iter()
        .find(|q| Command::new(q).arg("--version").output().is_ok());
    let Some(qemu) = qemu else {
        skip::skip_or_fail("qemu-aarch64 not found (apt-get install qemu-user-static)");
        return;
    };
    let a64 = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/cross/aarch64-unknown-linux-gnu/release/cpuscope");
    if !a64.exists() {
        // Not a missing tool: CI builds the aarch64 suite after this one and
        // runs this very test under qemu-aarch64 (the branch above).
        skip::skip_even_under_ci(
            &format!(
                "{} not built (scripts/cargo-aarch64.sh build --release)",
                a64.display()
            ),
            "the aarch64 run of this test covers the command",
        );
        return;
    }
    let mut plain = Command::new(qemu);
    plain.arg(&a64);
    if !std::path::Path::new("/lib/ld-linux-aarch64.so.1").exists() {
        plain.env("QEMU_LD_PREFIX", cross);
    }
    simd_ends(plain, "neon", limit, "qemu-aarch64");
    if mixed_possible {
        let mut mixed = Command::new(qemu);
        mixed.arg(&a64).env("QEMU_LD_PREFIX", cross);
        let text = simd_ends(mixed, "neon", limit, "qemu-aarch64 with QEMU_LD_PREFIX");
        // This machine has both builds (Debian 12: the cross 2.36-8 and
        // libc6:arm64's 2.36-9+debNuM): the teams say why they cannot start.
        if builds_differ(cross) {
            assert!(
                text.contains("threads=per_core: not available: threads cannot be started safely"),
                "{text}"
            );
        }
    }
}

/// Whether the cross sysroot's loader and the host's aarch64 C library are
/// two glibc builds (their banners differ).
fn builds_differ(cross: &str) -> bool {
    let banner = |path: &str, prefix: &[u8]| {
        std::fs::read(path)
            .ok()
            .and_then(|b| cpuscope::base::glibc::banner(&b, prefix))
    };
    let l = banner(&format!("{cross}/lib/ld-linux-aarch64.so.1"), b"ld.so (");
    let c = banner("/usr/lib/aarch64-linux-gnu/libc.so.6", b"GNU C Library (");
    l.is_some() && c.is_some() && l != c
}

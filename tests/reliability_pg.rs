//! The PostgreSQL store when the server does not answer (docs/reliability.md):
//! every wait on the server is bounded (connecting by `connect_timeout`,
//! default 10 s; each statement by the statement timeout, default 10 s)
//! and ends within a second of SIGINT/SIGTERM in a measuring command, each
//! time with one line on stderr that names the store without its password.
//!
//! The silent server is a loopback listener in the test that accepts and
//! never answers. The hung statement is a real server (tests/common/pg.rs)
//! whose table another connection keeps locked; without a server these
//! tests fail under CI and print SKIP elsewhere (tests/common/skip.rs).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/skip.rs"]
mod skip;

use cli::one_line_error;
use cpuscope::results::postgres::PgStore;
use cpuscope::results::schema::{Environment, ResultRecord, Run, RunStatus};
use std::io::Read as _;
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PASSWORD: &str = "sekret";

macro_rules! server_or_skip {
    () => {
        match pg::server() {
            Ok(s) => s,
            Err(why) => {
                skip::skip_or_fail(&format!("no PostgreSQL server: {why}"));
                return;
            }
        }
    };
}

/// A loopback port that accepts connections and never says a word; each
/// accepted connection is announced on the receiver and kept open.
fn silent_server() -> (u16, mpsc::Receiver<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        for s in l.incoming().flatten() {
            kept.push(s);
            let _ = tx.send(());
        }
    });
    (port, rx)
}

/// `cpuscope --store URL ARGS…`, with its own data directory.
fn cpuscope(url: &str, args: &[&str], data: &tempfile::TempDir) -> Command {
    let mut c = bin::command();
    c.arg("--store")
        .arg(url)
        .args(args)
        .env("XDG_DATA_HOME", data.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs the command to its end (killed after `limit`); its output and time.
fn timed(mut c: Command, limit: Duration) -> (Output, Duration) {
    let t0 = Instant::now();
    let child = c.spawn().unwrap();
    let out = finish(child, t0, limit);
    (out, t0.elapsed())
}

/// Waits for `child` until `t0 + limit`, killing it then; its output.
fn finish(mut child: Child, t0: Instant, limit: Duration) -> Output {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
            child
                .stdout
                .take()
                .unwrap()
                .read_to_end(&mut stdout)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_end(&mut stderr)
                .unwrap();
            return Output {
                status,
                stdout,
                stderr,
            };
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("still running after {limit:?} (killed): {}", pg::text(&out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: libc::c_int) {
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill failed");
}

/// The one error line, checked: names the store without its password.
fn error_line(out: &Output, wants: &str) -> String {
    let err = one_line_error(out);
    assert!(!err.contains(PASSWORD), "password shown: {err}");
    assert!(err.contains("store 'postgres://u@127.0.0.1:"), "{err}");
    assert!(err.contains(wants), "wanted '{wants}': {err}");
    err
}

#[test]
fn connecting_to_a_silent_server_is_bounded() {
    let (port, _accepts) = silent_server();
    let data = tempfile::tempdir().unwrap();
    let url = format!("postgres://u:{PASSWORD}@127.0.0.1:{port}/db");

    // The default: 10 s for TCP, startup and authentication together.
    let (out, took) = timed(cpuscope(&url, &["runs"], &data), Duration::from_secs(30));
    error_line(
        &out,
        "no answer from the server within 10 s while connecting (connect_timeout)",
    );
    assert!(
        took >= Duration::from_millis(9500) && took < Duration::from_secs(12),
        "took {took:?}"
    );

    // The URL's connect_timeout (libpq: seconds).
    let short = format!("{url}?connect_timeout=2");
    let (out, took) = timed(cpuscope(&short, &["runs"], &data), Duration::from_secs(30));
    error_line(&out, "within 2 s while connecting (connect_timeout)");
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(4),
        "took {took:?}"
    );
}

#[test]
fn a_stop_request_ends_a_run_waiting_to_connect() {
    let (port, accepts) = silent_server();
    let data = tempfile::tempdir().unwrap();
    // A long connect_timeout: only the signal can end these waits early.
    let url = format!("postgres://u:{PASSWORD}@127.0.0.1:{port}/db?connect_timeout=60");
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let mut c = cpuscope(&url, &cli::QUICK_RUN, &data);
        let t0 = Instant::now();
        let child = c.spawn().unwrap();
        // The store opens after the stop flag is installed: once the
        // server got the connection, the run is waiting on it.
        accepts
            .recv_timeout(Duration::from_secs(20))
            .expect("cpuscope run never connected");
        std::thread::sleep(Duration::from_secs(1).saturating_sub(t0.elapsed()));
        signal(&child, sig);
        let t1 = Instant::now();
        let out = finish(child, t1, Duration::from_secs(10));
        let took = t1.elapsed();
        error_line(&out, "interrupted while connecting to the server");
        assert!(took < Duration::from_secs(2), "signal {sig}: took {took:?}");
    }
}

/// A second connection to the server, to hold locks and look at the
/// server's sessions.
fn holder(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

/// How many of cpuscope's sessions wait for a lock / exist at all.
fn cpuscope_sessions(h: &mut postgres::Client) -> (i64, i64) {
    let r = h
        .query_one(
            "SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'), count(*) \
             FROM pg_stat_activity WHERE application_name = 'cpuscope'",
            &[],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

/// Polls until `pred` holds for cpuscope's sessions, or panics after `limit`.
fn until_sessions(h: &mut postgres::Client, limit: Duration, pred: impl Fn((i64, i64)) -> bool) {
    let t0 = Instant::now();
    loop {
        let s = cpuscope_sessions(h);
        if pred(s) {
            return;
        }
        assert!(
            t0.elapsed() < limit,
            "cpuscope's sessions (waiting, all) still {s:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The server's URL with a password that the server ignores (trust), and
/// the test's user `u` for the redaction check; the server knows `cpuscope`.
fn with_password(url: &str) -> String {
    url.replacen(
        "postgres://cpuscope@",
        &format!("postgres://cpuscope:{PASSWORD}@"),
        1,
    )
}

fn error_line_real(out: &Output, wants: &str) -> String {
    let err = one_line_error(out);
    assert!(!err.contains(PASSWORD), "password shown: {err}");
    assert!(
        err.contains("store 'postgres://cpuscope@127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains(wants), "wanted '{wants}': {err}");
    err
}

#[test]
fn a_hung_write_times_out_rolls_back_and_lets_go() {
    let srv = server_or_skip!();
    let data = tempfile::tempdir().unwrap();
    PgStore::open(&srv.url).unwrap(); // the tables
    let mut run = Run::new(
        "hung",
        "quick",
        serde_json::json!({"identity": {"model_name": "CPU", "architecture": "x86_64"}, "cores": [{}, {}]}),
        Environment::default(),
        serde_json::json!({}),
        vec![],
    );
    run.status = RunStatus::Complete;
    run.finished_at = Some(run.started_at.clone());
    run.results.push(
        ResultRecord::new("frequency", "single_core", "GHz", true)
            .with_param("threads", 1)
            .with_samples(vec![3.0, 3.0, 3.0]),
    );
    let file = data.path().join("run.json");
    std::fs::write(&file, serde_json::to_string_pretty(&run).unwrap()).unwrap();

    // Reads pass; the import's INSERT INTO results waits for the lock,
    // inside the transaction that already inserted the run's row.
    let mut h = holder(&srv.url);
    // Outside any transaction: pg_stat_activity is read once per transaction.
    let mut watch = holder(&srv.url);
    let mut tx = h.transaction().unwrap();
    tx.batch_execute("LOCK TABLE results IN SHARE MODE")
        .unwrap();
    let url = with_password(&srv.url);
    let (out, took) = timed(
        cpuscope(&url, &["import", file.to_str().unwrap()], &data),
        Duration::from_secs(30),
    );
    error_line_real(
        &out,
        "no answer from the server within 10 s while waiting for an answer (statement timeout)",
    );
    assert!(
        took >= Duration::from_millis(9500) && took < Duration::from_secs(12),
        "took {took:?}"
    );
    // The cancel request: the server stopped waiting for our lock, and
    // cpuscope's session is gone, while the lock is still held.
    until_sessions(&mut watch, Duration::from_secs(3), |(_, all)| all == 0);
    tx.rollback().unwrap();
    // Rolled back: the run's row is not there.
    let n: i64 = h
        .query_one("SELECT count(*) FROM runs WHERE id = $1", &[&run.id])
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "the interrupted import left its run behind");
    // And the store works again: the same import now succeeds.
    let (out, _) = timed(
        cpuscope(&url, &["import", file.to_str().unwrap()], &data),
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", pg::text(&out));
}

#[test]
fn a_hung_statement_hears_the_timeout_knob_and_signals() {
    let srv = server_or_skip!();
    let data = tempfile::tempdir().unwrap();
    PgStore::open(&srv.url).unwrap(); // the tables
    let mut h = holder(&srv.url);
    let mut watch = holder(&srv.url);
    let mut tx = h.transaction().unwrap();
    tx.batch_execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let url = with_password(&srv.url);

    // The URL's options set the statement timeout (server and client).
    let short = format!("{url}?options=-c%20statement_timeout%3D2s");
    let (out, took) = timed(cpuscope(&short, &["runs"], &data), Duration::from_secs(30));
    error_line_real(&out, "statement timeout");
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(4),
        "took {took:?}"
    );
    until_sessions(&mut watch, Duration::from_secs(3), |(_, all)| all == 0);

    // A measuring command: the first SIGINT gives the wait up, at once.
    let mut c = cpuscope(&url, &cli::QUICK_RUN, &data);
    let t0 = Instant::now();
    let child = c.spawn().unwrap();
    until_sessions(&mut watch, Duration::from_secs(20), |(waiting, _)| {
        waiting >= 1
    });
    std::thread::sleep(Duration::from_secs(1).saturating_sub(t0.elapsed()));
    signal(&child, libc::SIGINT);
    let t1 = Instant::now();
    let out = finish(child, t1, Duration::from_secs(10));
    let took = t1.elapsed();
    error_line_real(&out, "interrupted while waiting for the server");
    assert!(took < Duration::from_secs(2), "took {took:?}");
    until_sessions(&mut watch, Duration::from_secs(3), |(_, all)| all == 0);

    // A read-only command installs no handler: SIGINT ends it at once.
    let mut c = cpuscope(&url, &["runs"], &data);
    let child = c.spawn().unwrap();
    until_sessions(&mut watch, Duration::from_secs(20), |(waiting, _)| {
        waiting >= 1
    });
    signal(&child, libc::SIGINT);
    let t1 = Instant::now();
    let out = finish(child, t1, Duration::from_secs(10));
    assert!(t1.elapsed() < Duration::from_secs(1), "{:?}", t1.elapsed());
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGINT),
        "{}",
        pg::text(&out)
    );
    tx.rollback().unwrap();
}

#[test]
fn a_run_stopped_while_measuring_still_records_its_partial_status() {
    let srv = server_or_skip!();
    let data = tempfile::tempdir().unwrap();
    PgStore::open(&srv.url).unwrap(); // the tables
    let mut watch = holder(&srv.url);
    let running = |w: &mut postgres::Client| -> Vec<(String, String)> {
        w.query("SELECT id, status FROM runs", &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    };
    // About 10 s of measuring; the stop comes while it measures, and the
    // store must still take the run's last write (status partial) after
    // the stop request: the waits' grace after a stop.
    let mut c = cpuscope(
        &with_password(&srv.url),
        &[
            "run",
            "--profile",
            "quick",
            "--only",
            "frequency,latency,bandwidth,sync",
            "--no-html",
            "--quiet",
        ],
        &data,
    );
    let child = c.spawn().unwrap();
    let t0 = Instant::now();
    while running(&mut watch).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(20), "no run begun");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(700));
    signal(&child, libc::SIGINT);
    let t1 = Instant::now();
    let out = finish(child, t1, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(130), "{}", pg::text(&out));
    assert!(!pg::text(&out).contains("error"), "{}", pg::text(&out));
    let runs = running(&mut watch);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].1, "partial", "{runs:?}");
}

//! `cpuscope run` end to end: store, list, show, export/import, Ctrl-C, bad input.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
/// Tests that measure run one at a time: two measurements pinned to the same
/// CPU would halve each other's clock.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn run_ok(args: &[&str]) -> Output {
    let out = bin::command().args(args).output().expect("spawn cpuscope");
    assert!(
        out.status.success(),
        "cpuscope {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

use cli::one_line_error;

#[test]
fn quick_frequency_run_is_stored_listed_shown_and_round_trips() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db = db.to_str().unwrap();
    let out = run_ok(&[
        "--store",
        db,
        "run",
        "--profile",
        "quick",
        "--only",
        "frequency",
        "--quiet",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    // The verdict: one screen, the clock line, no colour when piped.
    assert!(
        text.contains("Clock") && text.contains("one core"),
        "{text}"
    );
    assert!(
        !text.contains('\x1b'),
        "colour codes in piped output: {text:?}"
    );
    assert!(text.lines().count() <= 42, "{text}");
    assert!(text.contains("stored as"), "{text}");
    assert!(text.contains("HTML report:"), "{text}");
    let html_line = text
        .lines()
        .find(|l| l.starts_with("HTML report:"))
        .unwrap();
    let html_path = html_line.trim_start_matches("HTML report:").trim();
    let html = std::fs::read_to_string(html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("http://cdn") && !html.contains("<script src"));

    let runs = run_ok(&["--store", db, "runs", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let list = v
        .as_array()
        .or_else(|| v["runs"].as_array())
        .expect("runs list")
        .clone();
    assert_eq!(list.len(), 1);

    let show = run_ok(&["--store", db, "show", "latest", "--json"]);
    let run: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(run["status"], "complete");
    let results = run["results"].as_array().unwrap();
    let single = results
        .iter()
        .find(|r| r["metric"] == "single_core")
        .expect("single_core result");
    let ghz = single["value"].as_f64().expect("measured GHz");
    assert!(ghz > 0.3 && ghz < 7.0, "implausible clock {ghz} GHz");
    assert!(single["stats"]["n"].as_u64().unwrap() >= 5);
    // The independent method measures the same clock (sanity bound only: a
    // shared VM drifts; the tight agreement is checked by hand, docs/methods.md).
    let xor = results
        .iter()
        .find(|r| r["metric"] == "single_core_xor")
        .expect("xor check");
    let x = xor["value"].as_f64().unwrap();
    assert!(x / ghz > 0.5 && x / ghz < 2.0, "add {ghz} vs xor {x}");
    // Sample by sample (each xor sample bracketed by add-chain readings) the
    // two methods measure the same clock: a ratio near 1, unit "ratio".
    let agree = results
        .iter()
        .find(|r| r["metric"] == "xor_vs_add")
        .expect("xor_vs_add agreement");
    assert_eq!(agree["unit"], "ratio");
    let a = agree["value"].as_f64().unwrap();
    // Sanity bound only, like add vs xor above: on a loaded 2-CPU VM the
    // median per-sample ratio was seen at 0.61 (preempted samples); the
    // agreement itself (0.1% here when quiet) is scripts/repeat-frequency.sh's.
    assert!(a > 0.5 && a < 2.0, "xor/add per-sample ratio {a}");
    // Without SMT the SMT figure is not available, with a reason, never 0.
    for r in results {
        if r["value"].is_null() {
            assert!(r["unavailable_reason"]
                .as_str()
                .is_some_and(|s| !s.is_empty()));
        } else {
            assert!(r["value"].as_f64().unwrap() > 0.0);
        }
    }

    let e1 = dir.path().join("e1.json");
    run_ok(&[
        "--store",
        db,
        "export",
        "latest",
        "-o",
        e1.to_str().unwrap(),
    ]);
    let db2 = dir.path().join("fresh.db");
    run_ok(&[
        "--store",
        db2.to_str().unwrap(),
        "import",
        e1.to_str().unwrap(),
    ]);
    let e2 = dir.path().join("e2.json");
    run_ok(&[
        "--store",
        db2.to_str().unwrap(),
        "export",
        "latest",
        "-o",
        e2.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read(&e1).unwrap(), std::fs::read(&e2).unwrap());
}

#[test]
fn sigint_keeps_what_finished() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db = db.to_str().unwrap();
    // An earlier run that must survive.
    run_ok(&[
        "--store",
        db,
        "run",
        "--profile",
        "quick",
        "--only",
        "frequency",
        "--quiet",
        "--no-html",
    ]);
    let mut child = bin::command()
        .args([
            "--store",
            db,
            "run",
            "--profile",
            "full",
            "--only",
            "frequency",
            "--no-html",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the new run (the one not complete) has stored a figure.
    let t0 = Instant::now();
    let partial_id = loop {
        std::thread::sleep(Duration::from_millis(200));
        let out = bin::command()
            .args(["--store", db, "runs", "--json"])
            .output()
            .unwrap();
        if out.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let found = v["runs"].as_array().and_then(|runs| {
                runs.iter()
                    .find(|r| r["status"] != "complete" && r["results"].as_u64().unwrap_or(0) > 0)
                    .and_then(|r| r["id"].as_str().map(str::to_string))
            });
            if let Some(id) = found {
                break id;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "run stored nothing in 120 s"
        );
    };
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit code after Ctrl-C");
    let out = run_ok(&["--store", db, "runs", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = v
        .as_array()
        .or_else(|| v["runs"].as_array())
        .unwrap()
        .clone();
    assert_eq!(list.len(), 2);
    let show = run_ok(&["--store", db, "show", &partial_id, "--json"]);
    let run: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(run["status"], "partial");
    assert!(!run["results"].as_array().unwrap().is_empty());
}

#[test]
fn bad_input_gives_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db = db.to_str().unwrap();
    one_line_error(
        &bin::command()
            .args(["--store", db, "run", "--cpus", "4000"])
            .output()
            .unwrap(),
    );
    one_line_error(
        &bin::command()
            .args(["--store", db, "run", "--cpus", "0-"])
            .output()
            .unwrap(),
    );
    one_line_error(
        &bin::command()
            .args(["--store", db, "run", "--only", "nonsense"])
            .output()
            .unwrap(),
    );
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    one_line_error(
        &bin::command()
            .args(["--store", db, "--sysroot", fixture.to_str().unwrap(), "run"])
            .output()
            .unwrap(),
    );
    one_line_error(
        &bin::command()
            .args(["--store", "mysql://x", "run"])
            .output()
            .unwrap(),
    );
    // Nothing was stored by the failed attempts.
    let out = bin::command()
        .args(["--store", db, "runs", "--json"])
        .output()
        .unwrap();
    if out.status.success() {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let n = v
            .as_array()
            .or_else(|| v["runs"].as_array())
            .map(|a| a.len())
            .unwrap_or(0);
        assert_eq!(n, 0);
    }
}

#[test]
fn list_shows_experiments_and_estimates() {
    let out = run_ok(&["run", "--list", "--profile", "quick"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("frequency"));
    assert!(text.contains("total"));
}

#[test]
fn a_bad_command_line_is_one_line_too() {
    // clap's own errors (unknown flag, missing argument, unknown command):
    // one line, exit 2, with where the help is.
    for (args, must) in [
        (&["rate", "--bogus"][..], "see cpuscope rate --help"),
        (&["rate", "--rounds", "1"][..], "--copies"),
        (&["frobnicate"][..], "see cpuscope --help"),
        (
            &["--store", "/nonexistent/x.db", "latency", "--pages"][..],
            "--pages",
        ),
    ] {
        let out = bin::command().args(args).output().expect("spawn cpuscope");
        let err = one_line_error(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(must), "{args:?}: {err}");
        assert!(!err.contains("Usage:"), "{err}");
    }
    // Help is still help.
    let out = bin::command()
        .args(["rate", "--help"])
        .output()
        .expect("spawn cpuscope");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage:"));
}

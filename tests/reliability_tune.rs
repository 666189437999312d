//! `tune`, `stat` and `rate` cannot strand or hang a command, and what they
//! print fits the terminal they print on:
//!
//! - SIGHUP (a dropped SSH session) ends the command's whole process group
//!   as Ctrl-C does (tune, rate), or is forwarded to it (stat); under
//!   `nohup` (SIGHUP ignored from the start) it stays ignored, for cpuscope
//!   and for the command;
//! - every run of `tune` is bounded by default: the first by the budget,
//!   later ones by 10 × the median run time (at least 10 s), the bound
//!   stated in the text and the JSON, the group killed;
//! - a `--score-regex` miss past the 4 MiB kept says so;
//! - arguments that are not UTF-8 reach the command as bytes;
//! - `TERM=dumb` (or no `TERM`) gets neither colour nor cursor control, and
//!   the bars fit `COLUMNS` (checked on a real pseudo-terminal).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/emulator.rs"]
mod emulator;
#[path = "common/skip.rs"]
mod skip;

use serde_json::Value;
use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

// ------------------------------------------------------------ helpers

/// `cmd` started with SIGHUP at its default action (`ignored`: ignored,
/// as `nohup` starts it), whatever the test runner inherited.
fn with_sighup(cmd: &mut Command, ignored: bool) -> &mut Command {
    let action = if ignored {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY: signal() is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGHUP, action);
            Ok(())
        })
    }
}

/// Fields of /proc/PID/stat after the command name: (state, ppid, pgrp).
fn proc_stat(pid: i32) -> Option<(String, i32, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = s.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((
        f.first()?.to_string(),
        f.get(1)?.parse().ok()?,
        f.get(2)?.parse().ok()?,
    ))
}

/// The live (not zombie) processes whose process group is `pgid`.
fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            proc_stat(pid).is_some_and(|(state, _, pg)| pg == pgid && state != "Z" && state != "X")
        })
        .collect()
}

/// Wait until every process of group `pgid` is gone (at most `limit`).
fn group_gone(pgid: i32, limit: Duration) -> Result<(), Vec<i32>> {
    let t0 = Instant::now();
    loop {
        let left = group_members(pgid);
        if left.is_empty() {
            return Ok(());
        }
        if t0.elapsed() > limit {
            return Err(left);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pids the command wrote to `file` (one a line), once there are `n`.
fn pids_in(file: &Path, n: usize, limit: Duration) -> Vec<i32> {
    let t0 = Instant::now();
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= n || t0.elapsed() > limit {
            return pids;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Wait for `child` at most `limit`; kill it (and fail) past that.
fn wait_for(mut child: Child, limit: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A shell command that writes its pid (its group, as it leads it) to
/// `file`, then sleeps far longer than any test.
fn sleeper(file: &Path) -> String {
    format!("echo $$ >> '{}'; sleep 1000; :", file.display())
}

/// The first two CPUs this process may run on, as a list (a plan inside
/// them has two or three candidates whatever the machine).
fn two_cpus() -> String {
    let list = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Cpus_allowed_list:")
                .map(|x| x.trim().to_string())
        })
        .unwrap_or_else(|| "0".into());
    let set = cpuscope::base::CpuSet::parse(&list).expect("a CPU list");
    let two: Vec<String> = set.iter().take(2).map(|c| c.to_string()).collect();
    two.join(",")
}

fn sighup(child: &Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
}

// ------------------------------------------------------------ SIGHUP

#[test]
fn sighup_to_tune_ends_the_tuned_commands_group() {
    let d = tempfile::tempdir().unwrap();
    let pids = d.path().join("pids");
    let child = with_sighup(&mut bin::command(), false)
        .args(["tune", "--no-store", "--no-counters", "--warmup", "0"])
        .args(["--", "sh", "-c", &sleeper(&pids)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let group = pids_in(&pids, 1, Duration::from_secs(30));
    let Some(&group) = group.first() else {
        let out = wait_for(child, Duration::from_secs(1), "tune");
        panic!("the command never started: {}", text(&out.stderr));
    };
    assert!(
        !group_members(group).is_empty(),
        "no process in group {group}"
    );
    sighup(&child);
    let out = wait_for(child, Duration::from_secs(20), "tune after SIGHUP");
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{stdout}{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("interrupted (SIGHUP"), "{stdout}");
    if let Err(left) = group_gone(group, Duration::from_secs(5)) {
        panic!("processes of the tuned command's group {group} left running: {left:?}");
    }
}

#[test]
fn under_nohup_sighup_stays_ignored_for_tune_and_its_command() {
    if let Some(emu) = emulator::declared() {
        // Seen in CI: under qemu-user the command was killed by SIGHUP. The
        // emulator keeps a guest's SIG_IGN in its own table and holds a
        // handler of its own in the host's, which the command's exec resets
        // to the default: an ignored signal does not reach the command
        // ignored. Tested natively; no package changes the emulator.
        let _ = writeln!(
            std::io::stderr(),
            "SKIP (emulator {emu}): under_nohup_sighup_stays_ignored_for_tune_and_its_command: the emulator does not hand an ignored SIGHUP to the command it starts"
        );
        return;
    }
    // The command hangs itself up: it survives only if SIGHUP stayed
    // ignored through cpuscope (a handler would be reset at its exec).
    let child = with_sighup(&mut bin::command(), true)
        .args(["tune", "-q", "--no-store", "--no-counters"])
        .args(["--warmup", "0", "--min-runs", "3", "--max-runs", "3"])
        .args(["--cpus-needed", "1", "--"])
        .args(["sh", "-c", "kill -HUP $$; sleep 0.3"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    sighup(&child);
    let out = wait_for(child, Duration::from_secs(60), "tune under nohup");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(!stdout.contains("interrupted"), "{stdout}");
    assert!(!stdout.contains("killed by signal"), "{stdout}");
    assert!(stdout.contains("stopped: "), "{stdout}");
}

#[test]
fn sighup_to_stat_is_forwarded_and_leaves_no_command() {
    let child = with_sighup(&mut bin::command(), false)
        .args(["stat", "-e", "task-clock", "--", "sleep", "1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let me = child.id() as i32;
    // The command: stat's child running sleep.
    let t0 = Instant::now();
    let sleep = loop {
        let found = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .find(|&p| {
                proc_stat(p).is_some_and(|(_, ppid, _)| ppid == me)
                    && std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "sleep")
            });
        if let Some(p) = found {
            break p;
        }
        if t0.elapsed() > Duration::from_secs(20) {
            let out = wait_for(child, Duration::from_secs(5), "stat");
            panic!("the command never started: {}", text(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    sighup(&child);
    let out = wait_for(child, Duration::from_secs(20), "stat after SIGHUP");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("SIGHUP forwarded to the command"),
        "{stderr}"
    );
    // The command's status, as a shell gives it: killed by SIGHUP.
    assert_eq!(out.status.code(), Some(128 + libc::SIGHUP), "{stderr}");
    assert!(
        proc_stat(sleep).is_none_or(|(s, _, _)| s == "Z" || s == "X"),
        "the command (pid {sleep}) outlived stat"
    );
}

#[test]
fn sighup_to_rate_ends_every_copys_group() {
    let d = tempfile::tempdir().unwrap();
    let pids = d.path().join("pids");
    let store = d.path().join("s.db");
    let child = with_sighup(&mut bin::command(), false)
        .arg("--store")
        .arg(&store)
        .args([
            "rate",
            "-q",
            "--copies",
            "2",
            "--no-baseline",
            "--rounds",
            "1",
        ])
        .args(["--", "sh", "-c", &sleeper(&pids)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let groups = pids_in(&pids, 2, Duration::from_secs(30));
    if groups.len() < 2 {
        let out = wait_for(child, Duration::from_secs(5), "rate");
        panic!("the copies never started: {}", text(&out.stderr));
    }
    sighup(&child);
    let out = wait_for(child, Duration::from_secs(20), "rate after SIGHUP");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    for g in groups {
        if let Err(left) = group_gone(g, Duration::from_secs(5)) {
            panic!("processes of a copy's group {g} left running: {left:?}");
        }
    }
}

// ------------------------------------------------------------ the default bound

fn tune_json(extra: &[&str], cmd: &[&str]) -> (Value, Output) {
    let out = bin::command()
        .args(["tune", "-q", "--no-store", "--no-counters", "--json"])
        .args(extra)
        .arg("--")
        .args(cmd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    (doc, out)
}

fn scores(doc: &Value) -> Vec<&Value> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "score")
        .collect()
}

fn verdict(doc: &Value) -> &Value {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "verdict")
        .expect("a verdict record")
}

#[test]
fn a_command_that_never_ends_is_bounded_by_the_budget_and_says_so() {
    if emulator::lacks(
        emulator::Needs::MemPolicy,
        "a_command_that_never_ends_is_bounded_by_the_budget_and_says_so",
    ) {
        return;
    }
    // The issue's probe: it ran past 120 s.
    let t0 = Instant::now();
    let out = bin::command()
        .args([
            "tune",
            "--no-store",
            "--budget",
            "10",
            "--",
            "sleep",
            "infinity",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let took = t0.elapsed();
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(took < Duration::from_secs(30), "took {took:?}: {stdout}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "nothing measured: {stdout}{stderr}"
    );
    assert!(
        stdout.contains("bound: each run is killed (its whole process group)"),
        "{stdout}"
    );
    assert!(stdout.contains("timed out after 10 s"), "{stdout}");
    assert!(
        stdout.contains("the end of the time budget (--budget 10 s): no run has finished yet"),
        "{stdout}"
    );
    // The first run's bound is said as it starts.
    assert!(
        stderr.contains("killed if it runs past 10 s: the end of the time budget"),
        "{stderr}"
    );

    // The same in JSON, and no process of any run's group is left.
    let d = tempfile::tempdir().unwrap();
    let pids = d.path().join("pids");
    let (doc, out) = tune_json(&["--budget", "2"], &["sh", "-c", &sleeper(&pids)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let s = scores(&doc);
    let timed: Vec<&&Value> = s
        .iter()
        .filter(|r| r["data"]["timed_out"] == true)
        .collect();
    assert_eq!(timed.len(), 1, "{doc:#}");
    let r = timed[0];
    assert!(r["value"].is_null());
    let why = r["unavailable_reason"].as_str().unwrap();
    assert!(why.starts_with("timed out after 2"), "{why}");
    assert_eq!(r["data"]["bound"]["kind"], "budget");
    assert!((r["data"]["bound"]["secs"].as_f64().unwrap() - 2.0).abs() < 0.5);
    for r in s.iter().filter(|r| r["data"]["timed_out"] != true) {
        let why = r["unavailable_reason"].as_str().unwrap();
        assert!(why.starts_with("not run: the time budget"), "{why}");
    }
    let v = verdict(&doc);
    assert!(v["data"]["run_bound"].as_str().unwrap().contains("10 ×"));
    assert_eq!(v["data"]["stopped"], "budget");
    for g in pids_in(&pids, 1, Duration::from_secs(1)) {
        if let Err(left) = group_gone(g, Duration::from_secs(5)) {
            panic!("group {g} of a timed-out run left running: {left:?}");
        }
    }
}

#[test]
fn a_run_that_hangs_later_is_bounded_by_a_multiple_of_the_runs_before() {
    if emulator::lacks(
        emulator::Needs::MemPolicy,
        "a_run_that_hangs_later_is_bounded_by_a_multiple_of_the_runs_before",
    ) {
        return;
    }
    // Each candidate's first run (its warm-up) ends at once; its next one
    // hangs. A candidate is told apart by the CPUs it may use.
    let d = tempfile::tempdir().unwrap();
    let pids = d.path().join("pids");
    let script = format!(
        "k=$(grep Cpus_allowed_list /proc/self/status | tr -dc '0-9,-'); \
         if [ -e '{dir}/ran-'\"$k\" ]; then echo $$ >> '{pids}'; sleep 1000; fi; \
         touch '{dir}/ran-'\"$k\"",
        dir = d.path().display(),
        pids = pids.display()
    );
    let cpus = two_cpus();
    let t0 = Instant::now();
    let (doc, out) = tune_json(
        &[
            "--warmup",
            "1",
            "--min-runs",
            "3",
            "--max-runs",
            "3",
            "--cpus",
            &cpus,
            "--cpus-needed",
            "1",
        ],
        &["sh", "-c", &script],
    );
    let took = t0.elapsed();
    let s = scores(&doc);
    assert!(!s.is_empty(), "{doc:#}");
    // Each hanging run is killed at 10 × its candidate's median run time,
    // here the 10 s floor, not at the end of the 300 s budget.
    assert!(
        took < Duration::from_secs(15 * s.len() as u64),
        "took {took:?} for {} candidates",
        s.len()
    );
    for r in &s {
        assert_eq!(r["data"]["timed_out"], true, "{r:#}");
        let b = &r["data"]["bound"];
        assert_eq!(b["kind"], "median", "{b}");
        assert!((b["secs"].as_f64().unwrap() - 10.0).abs() < 0.01, "{b}");
        let why = b["why"].as_str().unwrap();
        assert!(
            why.contains("10 × its median run time") && why.contains("at least 10 s"),
            "{b}"
        );
        let reason = r["unavailable_reason"].as_str().unwrap();
        assert!(reason.starts_with("timed out after 10"), "{reason}");
    }
    assert_eq!(out.status.code(), Some(1), "every candidate timed out");
    let groups = pids_in(&pids, s.len(), Duration::from_secs(1));
    assert_eq!(groups.len(), s.len(), "{groups:?}");
    for g in groups {
        if let Err(left) = group_gone(g, Duration::from_secs(5)) {
            panic!("group {g} of a timed-out run left running: {left:?}");
        }
    }
}

#[test]
fn a_later_run_cut_by_the_budget_is_discarded_not_a_failure() {
    if emulator::lacks(
        emulator::Needs::MemPolicy,
        "a_later_run_cut_by_the_budget_is_discarded_not_a_failure",
    ) {
        return;
    }
    // Each candidate's first two runs take 0.2 s, the next ones 5 s: the
    // second measured round starts within the budget (3 s), and its slow
    // run is cut at the budget's end.
    let d = tempfile::tempdir().unwrap();
    let script = format!(
        "k=$(grep Cpus_allowed_list /proc/self/status | tr -dc '0-9,-'); f='{dir}/n-'\"$k\"; \
         n=$(cat \"$f\" 2>/dev/null || echo 0); echo $((n + 1)) > \"$f\"; \
         if [ \"$n\" -ge 2 ]; then sleep 5; else sleep 0.2; fi",
        dir = d.path().display()
    );
    let t0 = Instant::now();
    let (doc, out) = tune_json(
        &[
            "--warmup",
            "1",
            "--min-runs",
            "3",
            "--max-runs",
            "5",
            "--budget",
            "3",
            "--cpus",
            &two_cpus(),
            "--cpus-needed",
            "1",
        ],
        &["sh", "-c", &script],
    );
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = verdict(&doc);
    assert_eq!(v["data"]["stopped"], "budget", "{v:#}");
    let notes = v["data"]["notes"].to_string();
    assert!(notes.contains("the end of the time budget"), "{notes}");
    assert!(notes.contains("it is discarded"), "{notes}");
    for r in scores(&doc) {
        // Not the candidate's fault: no failure, its finished run kept.
        assert_eq!(r["data"]["timed_out"], false, "{r:#}");
        assert!(r["data"]["failed"].is_null(), "{r:#}");
        assert!(r["value"].is_number(), "{r:#}");
    }
}

// ------------------------------------------------------------ --score-regex

#[test]
fn a_score_regex_miss_past_the_kept_output_names_the_4_mib_window() {
    if emulator::lacks(
        emulator::Needs::MemPolicy,
        "a_score_regex_miss_past_the_kept_output_names_the_4_mib_window",
    ) {
        return;
    }
    let (doc, out) = tune_json(
        &[
            "--warmup",
            "0",
            "--min-runs",
            "3",
            "--max-runs",
            "3",
            "--cpus-needed",
            "1",
            "--score-regex",
            r"SCORE: (\d+)",
        ],
        &["sh", "-c", "echo SCORE: 5; yes abcdefg | head -c 6000000"],
    );
    assert_eq!(out.status.code(), Some(1));
    for r in scores(&doc) {
        let why = r["unavailable_reason"].as_str().unwrap();
        assert!(
            why.contains("does not match the last 4 MiB of the command's output")
                && why.contains("only the last 4 MiB of each stream are kept and searched"),
            "{why}"
        );
    }
    // A short output that does not match says only that.
    let (doc, _) = tune_json(
        &[
            "--warmup",
            "0",
            "--min-runs",
            "3",
            "--max-runs",
            "3",
            "--cpus-needed",
            "1",
            "--score-regex",
            r"SCORE: (\d+)",
        ],
        &["echo", "nothing"],
    );
    for r in scores(&doc) {
        let why = r["unavailable_reason"].as_str().unwrap();
        assert!(
            why.ends_with("does not match the command's output"),
            "{why}"
        );
    }
}

// ------------------------------------------------------------ arguments as bytes

fn latin1_arg() -> OsString {
    OsString::from_vec(b"caf\xe9-\xff".to_vec())
}

#[test]
fn an_argument_that_is_not_utf8_reaches_the_tuned_command_as_bytes() {
    let d = tempfile::tempdir().unwrap();
    let got = d.path().join("got");
    let script = format!("printf %s \"$1\" > '{}'", got.display());
    let out = bin::command()
        .args(["tune", "-q", "--no-store", "--no-counters", "--warmup", "0"])
        .args(["--min-runs", "3", "--max-runs", "3", "--cpus-needed", "1"])
        .args(["--", "sh", "-c", &script, "sh"])
        .arg(latin1_arg())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert_eq!(std::fs::read(&got).unwrap(), b"caf\xe9-\xff");
    // Shown escaped, exactly (a bash line), never as raw bytes.
    assert!(
        std::str::from_utf8(&out.stdout).is_ok(),
        "raw bytes on stdout"
    );
    assert!(stdout.contains("$'caf\\xe9-\\xff'"), "{stdout}");
    assert!(stdout.contains("are not UTF-8"), "{stdout}");
    // JSON: the text with U+FFFD and a note, the exact bytes in command_line.
    let (doc, out) = tune_json(
        &[
            "--warmup",
            "0",
            "--min-runs",
            "3",
            "--max-runs",
            "3",
            "--cpus-needed",
            "1",
        ],
        &["/bin/echo", "caf\u{e9}"],
    );
    assert!(out.status.success());
    assert_eq!(verdict(&doc)["data"]["command"][1], "caf\u{e9}");
    let out = bin::command()
        .args(["tune", "--dry-run", "--json", "--", "/bin/echo"])
        .arg(latin1_arg())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["command"][1], "caf\u{fffd}-\u{fffd}");
    assert_eq!(plan["command_line"], "/bin/echo $'caf\\xe9-\\xff'");
    assert!(plan["notes"].to_string().contains("not UTF-8"), "{plan}");
}

#[test]
fn an_argument_that_is_not_utf8_reaches_the_counted_command_as_bytes() {
    let d = tempfile::tempdir().unwrap();
    let got = d.path().join("got");
    let script = format!("printf %s \"$1\" > '{}'", got.display());
    let out = bin::command()
        .args([
            "stat",
            "--json",
            "-e",
            "task-clock",
            "--",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .arg(latin1_arg())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // Under an emulator without perf_event_open no event is counted: stat
    // ends with exit 1 and one line after its JSON (docs/reliability.md);
    // the command still got its bytes.
    let no_events = emulator::answers_enosys(emulator::Needs::PerfEvents);
    let err = text(&out.stderr);
    let json = if no_events {
        assert_eq!(out.status.code(), Some(1), "{err}");
        let (json, last) = err
            .trim_end()
            .rsplit_once('\n')
            .expect("JSON then one line");
        assert!(
            last.starts_with("cpuscope: error: no event could be counted"),
            "{err}"
        );
        json.to_string()
    } else {
        assert!(out.status.success(), "{err}");
        err
    };
    assert_eq!(std::fs::read(&got).unwrap(), b"caf\xe9-\xff");
    let doc: Value = serde_json::from_str(&json).expect("stat --json on stderr");
    assert_eq!(doc["target"]["command"][4], "caf\u{fffd}-\u{fffd}");
    assert!(
        doc["notes"].to_string().contains("$'caf\\\\xe9-\\\\xff'"),
        "{}",
        doc["notes"]
    );
    // A program name that is not UTF-8 and does not exist: one line, escaped.
    let out = bin::command()
        .arg("stat")
        .arg("--")
        .arg(OsString::from_vec(b"/nonexistent/\xff\x1b[2J".to_vec()))
        .output()
        .unwrap();
    let err = cli::one_line_error(&out);
    assert!(err.contains("/nonexistent/\\xff\\x1b[2J"), "{err}");
    let out = bin::command()
        .args(["tune", "--"])
        .arg(OsString::from_vec(b"/nonexistent/\xff".to_vec()))
        .output()
        .unwrap();
    let err = cli::one_line_error(&out);
    assert!(err.contains("/nonexistent/\\xff"), "{err}");
}

#[test]
fn an_argument_that_is_not_utf8_reaches_each_rate_copy_as_bytes() {
    let d = tempfile::tempdir().unwrap();
    let got = d.path().join("got");
    let store = d.path().join("s.db");
    let script = format!("printf %s \"$1\" > '{}'", got.display());
    let out = bin::command()
        .args([
            "rate", "--copies", "1", "--rounds", "1", "--json", "--store",
        ])
        .arg(&store)
        .args(["--", "sh", "-c", &script, "sh"])
        .arg(latin1_arg())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&got).unwrap(), b"caf\xe9-\xff");
    // The workload's name shows each byte that is not UTF-8 as \xNN: on
    // the terminal, in JSON and in the store alike.
    let doc = text(&out.stdout);
    assert!(doc.contains("sh caf\\\\xe9-\\\\xff\""), "{doc}");
    assert!(
        std::str::from_utf8(&out.stderr).is_ok(),
        "raw bytes on stderr"
    );
    let out = bin::command()
        .args(["rate", "--copies", "1", "--"])
        .arg(OsString::from_vec(b"/nonexistent/\xff\x1b[2J".to_vec()))
        .output()
        .unwrap();
    let err = cli::one_line_error(&out);
    assert!(err.contains("/nonexistent/\\xff\\x1b[2J"), "{err}");
}

// ------------------------------------------------------------ the terminal

/// A new pseudo-terminal: its master and the path of its slave; None
/// (after the skip rule) where the machine has none.
fn new_pty() -> Option<(OwnedFd, String)> {
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname on a descriptor we own;
    // ptsname's buffer is copied before anything else calls it.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if m < 0 {
            skip::skip_or_fail(&format!(
                "no pseudo-terminal (posix_openpt: {}): /dev/pts is not mounted",
                std::io::Error::last_os_error()
            ));
            return None;
        }
        let master = OwnedFd::from_raw_fd(m);
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let name = libc::ptsname(m);
        assert!(!name.is_null());
        let path = std::ffi::CStr::from_ptr(name)
            .to_string_lossy()
            .into_owned();
        Some((master, path))
    }
}

/// Run cpuscope with `args` on a new pseudo-terminal `cols` wide (its
/// standard output and error), with `env` set (None: removed); what the
/// terminal showed, and how it ended. None: no pseudo-terminal here.
fn in_pty(cols: u16, env: &[(&str, Option<&str>)], args: &[&str]) -> Option<(Vec<u8>, ExitStatus)> {
    let (master, slave_path) = new_pty()?;
    let ws = libc::winsize {
        ws_row: 50,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ with a valid winsize on our master.
    unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_path)
        .unwrap();
    let mut cmd = bin::command();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let mut master = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        // EIO once the child's copies of the slave are closed.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    });
    let status = child.wait().unwrap();
    Some((reader.join().unwrap(), status))
}

/// The lines as the terminal shows them: split at line ends and carriage
/// returns, escape sequences (CSI) removed.
fn shown_lines(b: &[u8]) -> Vec<String> {
    let s = text(b);
    let mut plain = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' {
            if it.peek() == Some(&'[') {
                it.next();
                for d in it.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        plain.push(c);
    }
    plain
        .split(['\r', '\n'])
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect()
}

/// The verdict's floor: it is never laid out narrower than this.
const VERDICT_FLOOR: usize = 60;

#[test]
fn term_dumb_gets_no_colour_no_cursor_and_lines_within_columns() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let store = store.to_str().unwrap();
    let run = [
        "--store",
        store,
        "run",
        "--profile",
        "quick",
        "--only",
        "frequency",
        "--no-html",
    ];
    for term in [Some("dumb"), None] {
        let Some((out, status)) = in_pty(
            150,
            &[("TERM", term), ("COLUMNS", Some("10")), ("NO_COLOR", None)],
            &run,
        ) else {
            return;
        };
        let shown = text(&out);
        assert!(status.success(), "TERM={term:?}: {shown}");
        assert!(
            !out.contains(&0x1b),
            "TERM={term:?}: an escape sequence reached the terminal: {shown:?}"
        );
        // Progress as plain lines, one per step.
        assert!(shown.contains("cpuscope: frequency: "), "{shown}");
        // Nothing wider than COLUMNS, or the verdict's floor where text
        // cannot be narrower.
        for l in shown_lines(&out) {
            if l.starts_with("cpuscope: ") || l.starts_with("stored as") {
                continue;
            }
            assert!(
                l.chars().count() <= VERDICT_FLOOR,
                "TERM={term:?} COLUMNS=10: {} columns: {l:?}",
                l.chars().count()
            );
        }
    }
    // A capable TERM: the progress bar is drawn in place and fits COLUMNS
    // (70, below the window's 150); the verdict too.
    let (out, status) = in_pty(
        150,
        &[
            ("TERM", Some("xterm")),
            ("COLUMNS", Some("70")),
            ("NO_COLOR", None),
        ],
        &run,
    )
    .unwrap();
    assert!(status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("\x1b[2K"),
        "no bar drawn: {:?}",
        text(&out)
    );
    for l in shown_lines(&out) {
        if l.starts_with("stored as") {
            continue;
        }
        assert!(
            l.chars().count() <= 70,
            "{} columns: {l:?}",
            l.chars().count()
        );
    }
    // The same with COLUMNS=10: too narrow for the bar: plain lines.
    let (out, _) = in_pty(
        150,
        &[("TERM", Some("xterm")), ("COLUMNS", Some("10"))],
        &run,
    )
    .unwrap();
    assert!(!text(&out).contains("\x1b[2K"), "{:?}", text(&out));
    assert!(text(&out).contains("cpuscope: frequency: "));
    // NO_COLOR: no colour (SGR) sequence, whatever TERM.
    let (out, _) = in_pty(
        150,
        &[
            ("TERM", Some("xterm")),
            ("NO_COLOR", Some("1")),
            ("COLUMNS", None),
        ],
        &run,
    )
    .unwrap();
    let shown = text(&out);
    for (i, _) in shown.match_indices("\x1b[") {
        let seq: String = shown[i + 2..]
            .chars()
            .take_while(|c| !('@'..='~').contains(c))
            .collect();
        let end = shown[i + 2 + seq.len()..].chars().next();
        assert_ne!(end, Some('m'), "a colour sequence with NO_COLOR: {seq:?}");
    }
}

#[test]
fn the_thread_curve_bars_fit_columns() {
    let curve = |columns: &str| -> Vec<String> {
        let out = bin::command()
            .env("COLUMNS", columns)
            .args(["tune", "-q", "--no-store", "--no-counters", "--warmup", "0"])
            .args(["--min-runs", "3", "--max-runs", "3", "--threads", "1,2,4"])
            .args(["--", "sh", "-c", "sleep 0.0{threads}"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let t = text(&out.stdout);
        t.lines()
            .skip_while(|l| !l.starts_with("thread count"))
            .skip(2)
            .take_while(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    let wide = curve("200");
    assert_eq!(wide.len(), 3, "{wide:?}");
    let bar = |l: &String| l.chars().filter(|c| *c == '#').count();
    assert_eq!(wide.iter().map(bar).max(), Some(40), "{wide:?}");
    // COLUMNS=60: every line fits 60.
    for l in curve("60") {
        assert!(l.chars().count() <= 60, "{l:?}");
    }
    // COLUMNS=10: below the text itself; the longest bar keeps its floor of
    // 10 columns (a narrower one would not show a difference), no more.
    let narrow = curve("10");
    assert_eq!(narrow.iter().map(bar).max(), Some(10), "{narrow:?}");
}

#[test]
fn the_bars_are_not_drawn_where_nothing_reads_a_terminal() {
    // Not a terminal (a pipe): no escape sequence at all, whatever TERM says.
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let out = bin::command()
        .env("TERM", "xterm")
        .arg("--store")
        .arg(&store)
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "frequency",
            "--no-html",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b));
}

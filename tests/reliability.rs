//! Never lose a run, never write where it must not, always stop when asked
//! (docs/reliability.md): real files, real signals and real failures, each
//! test ending with the store's earlier runs intact (integrity_check and a
//! byte-identical export, tests/common/guard.rs). The store's own faults
//! are in reliability_store.rs, PostgreSQL's in reliability_pg.rs, recorded
//! trees in reliability_sysroot.rs, terminal escaping in
//! reliability_terminal.rs.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/guard.rs"]
mod guard;
#[path = "common/skip.rs"]
mod skip;

use guard::Guarded;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// The ids and statuses of the runs in the guarded store.
fn runs(g: &Guarded) -> Vec<(String, String, u64)> {
    let o = g.run(&["runs", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    d["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
                r["results"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A short measuring run: one experiment, quick.
const QUICK: [&str; 6] = ["run", "--profile", "quick", "--only", "frequency", "-q"];

/// `cpuscope --store STORE run --profile quick --only frequency --no-html EXTRA...`
fn quick_run(g: &Guarded, extra: &[&str]) -> Command {
    let mut c = bin::command();
    c.arg("--store")
        .arg(&g.store)
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "frequency",
            "--no-html",
        ])
        .args(extra);
    c
}

#[test]
fn no_output_may_name_the_store() {
    let g = Guarded::new();
    let store = g.store.display().to_string();
    // The same file by another name, and by a hard link.
    let alias = g.dir.path().join(".").join("runs.db").display().to_string();
    let hard = g.dir.path().join("hard.db");
    std::fs::hard_link(&g.store, &hard).unwrap();
    let hard = hard.display().to_string();
    let ids: Vec<String> = runs(&g).into_iter().map(|r| r.0).collect();
    for target in [&store, &alias, &hard] {
        for args in [
            vec!["export", "latest", "-o", target],
            vec!["compare", &ids[0], &ids[1], "--html", target],
            vec!["fleet", "--html", target],
            vec!["stat", "-o", target, "--", "true"],
            vec![
                "run",
                "--profile",
                "quick",
                "--only",
                "frequency",
                "--html",
                target,
            ],
            vec!["tune", "--html", target, "--", "true"],
        ] {
            let o = g.run(&args);
            let e = cli::one_line_error(&o);
            assert!(
                e.contains("it is the store") || e.contains("hard links"),
                "{args:?}: {e}"
            );
        }
    }
    // Nothing was measured either: still the two runs.
    assert_eq!(runs(&g).len(), 2);
    g.assert_intact();
}

/// A store other than the one in use is as sacred: no output replaces a
/// SQLite database, whichever store the command names.
#[test]
fn no_output_may_replace_another_store() {
    let g = Guarded::new();
    let other = g.dir.path().join("other.db");
    let target = g.store.display().to_string();
    for args in [
        vec!["export", "latest", "-o", target.as_str()],
        vec!["record", target.as_str()],
        vec!["fleet", "--html", target.as_str()],
    ] {
        let o = guard::cpuscope(&other, &args);
        let e = cli::one_line_error(&o);
        assert!(e.contains("it is a SQLite database"), "{args:?}: {e}");
    }
    assert_eq!(runs(&g).len(), 2);
    g.assert_intact();
}

#[test]
fn export_writes_atomically_keeps_the_mode_and_follows_no_link() {
    let g = Guarded::new();
    let d = g.dir.path();
    // A private file stays private.
    let private = d.join("private.json");
    std::fs::write(&private, "old").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = g.run(&["export", "latest", "-o", private.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = std::fs::metadata(&private).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&private)
        .unwrap()
        .contains("cpuscope.run/1"));
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("cpuscope-")), "{names:?}");

    // A symbolic link (planted or not) is never written through.
    let victim = d.join("victim");
    std::fs::write(&victim, "secret").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let e = cli::one_line_error(&g.run(&["export", "latest", "-o", link.to_str().unwrap()]));
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());

    // A file with other hard links, a device, a directory, a missing directory.
    let linked = d.join("linked.json");
    std::fs::write(&linked, "x").unwrap();
    std::fs::hard_link(&linked, d.join("other-name")).unwrap();
    for (target, why) in [
        (linked.display().to_string(), "hard links"),
        ("/dev/null".to_string(), "character device"),
        (d.display().to_string(), "directory"),
        (
            d.join("no/such/dir/x.json").display().to_string(),
            "No such file",
        ),
    ] {
        let e = cli::one_line_error(&g.run(&["export", "latest", "-o", &target]));
        assert!(e.contains(why), "{target}: {e}");
    }
    assert_eq!(std::fs::read_to_string(&linked).unwrap(), "x");
    g.assert_intact();
}

#[test]
fn another_users_file_in_a_sticky_directory_is_not_taken_over() {
    if !is_root() {
        skip::skip_or_fail("another user's file needs root to create (chown)");
        if !skip::in_ci() {
            return;
        }
    }
    let g = Guarded::new();
    let shared = g.dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = shared.join("report.html");
    std::fs::write(&theirs, "theirs").unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let e = cli::one_line_error(&g.run(&["export", "latest", "-o", theirs.to_str().unwrap()]));
    assert!(e.contains("another user"), "{e}");
    let m = std::fs::metadata(&theirs).unwrap();
    assert_eq!(
        (m.uid(), std::fs::read_to_string(&theirs).unwrap().as_str()),
        (65534, "theirs")
    );
    // Their symbolic link to our private file: refused, the file unchanged.
    let mine = g.dir.path().join("mine");
    std::fs::write(&mine, "mine").unwrap();
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o600)).unwrap();
    let planted = shared.join("run.json");
    std::os::unix::fs::symlink(&mine, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(65534), Some(65534)).unwrap();
    let e = cli::one_line_error(&g.run(&["export", "latest", "-o", planted.to_str().unwrap()]));
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    g.assert_intact();
}

#[test]
fn a_fifo_is_written_when_read_and_refused_without_a_reader() {
    let g = Guarded::new();
    let fifo = g.dir.path().join("out.fifo");
    mkfifo(&fifo);
    let t0 = Instant::now();
    let e = cli::one_line_error(&g.run(&["export", "latest", "-o", fifo.to_str().unwrap()]));
    assert!(e.contains("no reader"), "{e}");
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "waited {:?}",
        t0.elapsed()
    );
    // With a reader: the document arrives through it.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut s)
                .unwrap();
            s
        })
    };
    // Let the reader open its end first.
    let mut o = None;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        let r = g.run(&["export", "latest", "-o", fifo.to_str().unwrap()]);
        if r.status.success() {
            o = Some(r);
            break;
        }
    }
    assert!(o.is_some(), "the FIFO never took the document");
    let got = reader.join().unwrap();
    assert!(got.contains("\"schema\": \"cpuscope.run/1\""), "{got}");
    g.assert_intact();
}

#[test]
fn failed_standard_output_is_one_line_and_a_closed_pipe_is_quiet() {
    let g = Guarded::new();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    for args in [
        vec!["runs"],
        vec!["show", "latest"],
        vec!["export", "latest"],
        vec!["info"],
        vec!["published"],
        vec!["uarch"],
        vec!["c2c", "--plan"],
    ] {
        let o = bin::command()
            .arg("--store")
            .arg(&g.store)
            .args(&args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let e = cli::one_line_error(&o);
        assert!(e.contains("No space left on device"), "{args:?}: {e}");
    }
    // `stat -o /dev/full`: a device is refused before the command runs.
    let e = cli::one_line_error(&g.run(&["stat", "-o", "/dev/full", "--", "true"]));
    assert!(e.contains("character device"), "{e}");
    // A pipe closed by its reader: no message, the exit status of SIGPIPE.
    let mut c = bin::command()
        .arg("--store")
        .arg(&g.store)
        .args(["show", "latest", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(c.stdout.take());
    let o = c.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(141),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    g.assert_intact();
}

#[test]
fn a_run_whose_output_goes_away_is_stored_whole() {
    let g = Guarded::new();
    let before = runs(&g).len();
    // stderr and stdout into a pipe closed after the first line.
    let mut c = quick_run(&g, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(c.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    drop(err);
    drop(c.stdout.take());
    let st = c.wait().unwrap();
    assert!(matches!(st.code(), Some(141) | Some(0)), "{st:?}");
    // stderr on a full device.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = quick_run(&g, &[])
        .stdout(Stdio::null())
        .stderr(full.try_clone().unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    // --json onto a full device: stored, and the error says so.
    let o = quick_run(&g, &["--json", "-q"])
        .stdout(full)
        .output()
        .unwrap();
    let e = cli::one_line_error(&o);
    assert!(
        e.contains("is stored in") && e.contains("No space left"),
        "{e}"
    );
    let after = runs(&g);
    assert_eq!(after.len(), before + 3);
    for (id, status, results) in &after[before..] {
        assert_eq!(status, "complete", "{id}");
        assert!(*results > 0, "{id}");
    }
    g.assert_intact();
}

#[test]
fn outputs_are_checked_before_measuring() {
    let g = Guarded::new();
    let missing = g.dir.path().join("no/such/dir/report.html");
    let missing = missing.to_str().unwrap();
    for args in [
        vec![
            "run",
            "--profile",
            "quick",
            "--only",
            "frequency",
            "--html",
            missing,
        ],
        vec!["tune", "--html", missing, "--", "true"],
        vec!["stat", "-o", missing, "--", "true"],
    ] {
        let t0 = Instant::now();
        let e = cli::one_line_error(&g.run(&args));
        assert!(e.contains("No such file"), "{args:?}: {e}");
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "{args:?} measured first"
        );
    }
    assert_eq!(runs(&g).len(), 2, "nothing may be stored");
    g.assert_intact();
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    let g = Guarded::new();
    let huge = "18446744073709551615";
    for (args, says) in [
        (
            vec!["c2c", "--round-trips", huge, "--plan"],
            "1..=100000000",
        ),
        (vec!["c2c", "--samples", huge, "--plan"], "1..=100000"),
        (vec!["c2c", "--sample", "0", "--plan"], "1..=1000000"),
        (vec!["bandwidth", "--reps", huge], "1..=10000"),
        (vec!["tune", "--max-runs", "0", "--", "true"], "1..=100000"),
        (
            vec!["run", "--only", "frequency", "--skip", "frequency"],
            "no experiment",
        ),
        (
            vec!["run", "--html", "x.html", "--no-html"],
            "cannot be used with",
        ),
        (vec!["simd", "--variants", ""], "empty name"),
        // Too large is named as too large, not as "not a number".
        (
            vec!["rate", "--copies", "1", "bc-pow:99999999999999999999"],
            "from 1 to 100000000",
        ),
        (
            vec!["rate", "--copies", "1", "mem:999999"],
            "from 1 to 65536",
        ),
        (
            vec!["stat", "-I", huge, "--", "true"],
            "at most 86400000 ms",
        ),
        (
            vec!["stat", "-p", "1", "--duration", "1e300"],
            "from more than 0 to 10000000",
        ),
    ] {
        let e = cli::one_line_error(&g.run(&args));
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // `stat -p=1` is not a program to run.
    let bin = g.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let marker = g.dir.path().join("ran");
    let prog = bin.join("-p=1");
    std::fs::write(&prog, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = bin::command()
        .args(["stat", "-p=1"])
        .env("PATH", path)
        .output()
        .unwrap();
    let e = cli::one_line_error(&o);
    assert!(e.contains("not an option of stat"), "{e}");
    assert!(!marker.exists(), "a program named -p=1 ran");
    assert_eq!(runs(&g).len(), 2);
    g.assert_intact();
}

/// A tmpfs mounted on a directory, unmounted on drop.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn free_kib(dir: &Path) -> u64 {
    let o = Command::new("df")
        .args(["-k", "--output=avail"])
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_full_disk_never_costs_a_measurement() {
    if !is_root() {
        skip::skip_or_fail("a tiny tmpfs needs root to mount");
        if !skip::in_ci() {
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip::skip_or_fail("cannot mount a tmpfs here");
        return;
    }
    let _mount = Tmpfs(dir.path().to_path_buf());
    let g = Guarded::in_dir(dir);
    let fallback_dir = tempfile::tempdir().unwrap();
    let fill = g.dir.path().join("fill");
    let mut saved = None;
    // Leave less and less room: the store refuses the run before measuring
    // (nothing measured, nothing lost) or the run is saved to a file.
    for left in [400u64, 300, 200, 150, 120, 100, 80] {
        let _ = std::fs::remove_file(&fill);
        let avail = free_kib(g.dir.path());
        let fill_kib = avail.saturating_sub(left);
        std::fs::write(&fill, vec![0u8; (fill_kib * 1024) as usize]).ok();
        let before = runs_ids(&g);
        let mut args = QUICK.to_vec();
        args.push("--no-html");
        let o = bin::command()
            .arg("--store")
            .arg(&g.store)
            .args(&args)
            .env("TMPDIR", fallback_dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        if o.status.success() {
            continue; // there was room
        }
        assert!(!err.contains("panicked"), "{err}");
        if err.contains("nothing was measured") {
            assert!(err.contains("KiB free"), "{err}");
            continue;
        }
        assert!(
            err.contains("the whole run is saved in"),
            "{left} KiB left: {err}"
        );
        let _ = std::fs::remove_file(&fill);
        let after = runs_ids(&g);
        assert!(after.len() <= before.len() + 1);
        saved = Some((err, after));
        break;
    }
    let _ = std::fs::remove_file(&fill);
    let (err, _) = saved.expect("no room left ever made the store refuse a finished measurement");
    // The fallback file is importable: into a fresh store, whole.
    let file: PathBuf = std::fs::read_dir(fallback_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".json"))
        .unwrap_or_else(|| panic!("no fallback file: {err}"));
    assert!(err.contains(&file.display().to_string()), "{err}");
    let other = tempfile::tempdir().unwrap();
    let o = guard::cpuscope(
        &other.path().join("s.db"),
        &["import", file.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["status"], "complete");
    assert!(!doc["results"].as_array().unwrap().is_empty());
    g.assert_intact();
}

fn runs_ids(g: &Guarded) -> Vec<String> {
    runs(g).into_iter().map(|r| r.0).collect()
}

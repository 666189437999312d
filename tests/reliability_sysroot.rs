//! Reliability of reading recorded and system files: what `--sysroot`,
//! `uarch --dir` and `tune --score-file` do with a FIFO, a symlink to
//! /dev/zero and a non-UTF-8 byte (docs/reliability.md, "Files that are not
//! files"). Every command runs in its own process group under a deadline and
//! an address-space limit, so a regression (a hang, or reading /dev/zero
//! until memory runs out) fails the test instead of blocking the suite or
//! the machine.
//!
//! The recorded tree is a copy of hwloc's `16em64t-4s2c2t` (an x86 machine
//! with a `model name` in proc/cpuinfo), unpacked by common/hwloc_trees.rs.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/hwloc_trees.rs"]
mod hwloc_trees;

use cli::one_line_error;
use std::ffi::CString;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// How long any command here may take (each ends in well under a second).
const DEADLINE: Duration = Duration::from_secs(10);
/// Address space allowed to a command: reading /dev/zero ends in an
/// allocation failure well before the machine runs out of memory.
const ADDRESS_SPACE: u64 = 4 << 30;

const FIXTURE: &str = "16em64t-4s2c2t";
const MODEL: &str = "Intel(R) Xeon(TM) CPU 2.60GHz";

fn mkfifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {p:?}"
    );
}

fn link_to_dev_zero(p: &Path) {
    let _ = std::fs::remove_file(p);
    std::os::unix::fs::symlink("/dev/zero", p).unwrap();
}

/// Copy a tree, keeping symlinks as symlinks.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type().unwrap();
        if t.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if t.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A private copy of the recorded tree (None after a visible SKIP line when
/// tar/bzip2 are missing outside CI).
fn tree() -> Option<(tempfile::TempDir, PathBuf)> {
    let src = hwloc_trees::tree(FIXTURE)?;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    copy_tree(&src, &root);
    Some((dir, root))
}

/// Runs cpuscope with `args`; panics when it outlives [`DEADLINE`] (after
/// killing its process group) or dies of a signal (a panic's abort, an
/// allocation failure).
fn run(args: &[&str]) -> Output {
    let mut cmd = bin::command();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn cpuscope");
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > DEADLINE {
            // SAFETY: signalling the process group of our own child.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("cpuscope {args:?} still running after {DEADLINE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!e.contains("panicked"), "cpuscope {args:?} panicked: {e}");
    assert!(
        out.status.signal().is_none(),
        "cpuscope {args:?} died of signal {:?}: {e}",
        out.status.signal()
    );
    out
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `info` and `info --json` on `root`: both exit 0; returns the text and JSON.
fn info(root: &Path) -> (String, serde_json::Value) {
    let r = root.to_str().unwrap();
    let t = run(&["--sysroot", r, "info"]);
    assert!(
        t.status.success(),
        "info: {}",
        String::from_utf8_lossy(&t.stderr)
    );
    let j = run(&["--sysroot", r, "info", "--json"]);
    assert!(
        j.status.success(),
        "info --json: {}",
        String::from_utf8_lossy(&j.stderr)
    );
    let v = serde_json::from_slice(&j.stdout).expect("info --json is JSON");
    (text(&t), v)
}

/// The control: the unmodified copy shows the CPU.
#[test]
fn the_copied_tree_shows_its_cpu() {
    let Some((_d, root)) = tree() else { return };
    let (t, j) = info(&root);
    assert!(t.contains(MODEL), "{t}");
    assert_eq!(j["identity"]["model_name"], MODEL);
}

/// A FIFO at proc/cpuinfo (nothing ever writes it) used to block `info` in
/// open(2) forever; it is now refused and reads as missing: exit 0, the CPU
/// n/a with the missing-file reason, the topology still read from sysfs.
#[test]
fn a_fifo_at_proc_cpuinfo_reads_as_missing() {
    let Some((_d, root)) = tree() else { return };
    mkfifo(&root.join("proc/cpuinfo"));
    let (t, j) = info(&root);
    assert!(
        t.contains("CPU:") && t.contains("n/a (no /proc/cpuinfo"),
        "{t}"
    );
    assert!(t.contains("16 CPUs"), "{t}");
    assert!(j["identity"]["model_name"].is_null(), "{}", j["identity"]);
    assert!(
        j["identity"]["unavailable"]["cpuinfo"].is_string(),
        "{}",
        j["identity"]
    );
}

/// FIFOs in the sysfs CPU tree (a topology file, a cache file, the online
/// list) read as missing too: `info` ends, exit 0.
#[test]
fn fifos_in_the_sysfs_cpu_tree_read_as_missing() {
    let Some((_d, root)) = tree() else { return };
    let cpu = root.join("sys/devices/system/cpu");
    mkfifo(&cpu.join("cpu0/topology/core_id"));
    mkfifo(&cpu.join("cpu0/topology/thread_siblings"));
    mkfifo(&cpu.join("cpu0/cache/index0/size"));
    mkfifo(&cpu.join("online"));
    mkfifo(&root.join("proc/stat"));
    let (t, j) = info(&root);
    assert!(t.contains(MODEL), "{t}");
    assert!(t.contains("16 CPUs"), "{t}");
    assert_eq!(j["identity"]["model_name"], MODEL);
}

/// A symlink to /dev/zero (a character device) used to be read until memory
/// ran out; it is refused like a FIFO, at proc/cpuinfo and in sysfs.
#[test]
fn symlinks_to_dev_zero_are_refused() {
    let Some((_d, root)) = tree() else { return };
    link_to_dev_zero(&root.join("proc/cpuinfo"));
    let cpu = root.join("sys/devices/system/cpu");
    link_to_dev_zero(&cpu.join("cpu1/topology/core_id"));
    link_to_dev_zero(&cpu.join("cpu1/cache/index0/size"));
    let (t, j) = info(&root);
    assert!(t.contains("n/a (no /proc/cpuinfo"), "{t}");
    assert!(t.contains("16 CPUs"), "{t}");
    assert!(j["identity"]["model_name"].is_null(), "{}", j["identity"]);
}

/// A symlink to a regular file elsewhere in the tree is still followed
/// (only non-regular files, and links out of the tree, are refused: see
/// tests/reliability_sysroot_links.rs).
#[test]
fn a_symlink_to_a_regular_file_is_still_followed() {
    let Some((_d, root)) = tree() else { return };
    let elsewhere = root.join("cpuinfo-elsewhere");
    std::fs::rename(root.join("proc/cpuinfo"), &elsewhere).unwrap();
    std::os::unix::fs::symlink("../cpuinfo-elsewhere", root.join("proc/cpuinfo")).unwrap();
    let (t, j) = info(&root);
    assert!(t.contains(MODEL), "{t}");
    assert_eq!(j["identity"]["model_name"], MODEL);
}

/// One 0xff byte in the model name line used to make the whole of
/// /proc/cpuinfo count as missing ("no /proc/cpuinfo"); it is read lossily:
/// the byte shows as U+FFFD and the CPU is still identified.
#[test]
fn a_non_utf8_byte_in_the_model_name_keeps_the_cpu() {
    let Some((_d, root)) = tree() else { return };
    let p = root.join("proc/cpuinfo");
    let bytes = std::fs::read(&p).unwrap();
    let at = bytes
        .windows(8)
        .position(|w| w == b"Intel(R)")
        .expect("model name in the fixture");
    let mut changed = bytes[..at].to_vec();
    changed.push(0xff);
    changed.extend_from_slice(&bytes[at..]);
    std::fs::write(&p, changed).unwrap();
    let (t, j) = info(&root);
    assert!(!t.contains("no /proc/cpuinfo"), "{t}");
    assert!(t.contains(&format!("\u{fffd}{MODEL}")), "{t}");
    assert_eq!(
        j["identity"]["model_name"],
        format!("\u{fffd}{MODEL}").as_str()
    );
    assert_eq!(j["identity"]["vendor"], "GenuineIntel");
    assert!(j["identity"]["unavailable"]["cpuinfo"].is_null());
}

/// The live root still works: /proc and /sys files are regular files that
/// report size 0, and must not be taken for special ones.
#[test]
fn the_live_root_still_reads_proc_and_sys() {
    if !Path::new("/proc/cpuinfo").is_file() || !Path::new("/sys/devices/system/cpu").is_dir() {
        hwloc_trees::say("SKIP: the_live_root_still_reads_proc_and_sys: no /proc or /sys here");
        return;
    }
    let j = run(&["info", "--json"]);
    assert!(j.status.success(), "{}", String::from_utf8_lossy(&j.stderr));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert!(
        v["identity"]["unavailable"]["cpuinfo"].is_null(),
        "{}",
        v["identity"]
    );
    assert!(v["cpus"]["online"].is_string() || v["cpus"]["online"].is_array());
}

/// `uarch --dir` with a FIFO or a /dev/zero link named *.toml: a one-line
/// error naming the file, at once.
#[test]
fn uarch_dir_refuses_a_fifo_and_a_device() {
    let d = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/uarch");
    for e in std::fs::read_dir(&data).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().ends_with(".toml") {
            std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
        }
    }
    let dir = d.path().to_str().unwrap();
    let ok = run(&["uarch", "--dir", dir]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    let fifo = d.path().join("zz-fifo.toml");
    mkfifo(&fifo);
    let err = one_line_error(&run(&["uarch", "--dir", dir]));
    assert!(
        err.contains("zz-fifo.toml': not a regular file (a FIFO)"),
        "{err}"
    );
    std::fs::remove_file(&fifo).unwrap();

    link_to_dev_zero(&d.path().join("zero.toml"));
    let err = one_line_error(&run(&["uarch", "--dir", dir]));
    assert!(
        err.contains("zero.toml': not a regular file (a character device)"),
        "{err}"
    );
}

const QUICK: [&str; 11] = [
    "tune",
    "-q",
    "--no-store",
    "--no-counters",
    "--warmup",
    "0",
    "--min-runs",
    "3",
    "--max-runs",
    "3",
    "--budget=5",
];

/// `tune --score-file FIFO` used to hang past Ctrl-C and --budget (reading
/// the FIFO after a run waits for a writer); it is refused before anything
/// runs, with one line.
#[test]
fn tune_refuses_a_fifo_score_file_up_front() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("score");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let mut args = QUICK.to_vec();
    args.extend(["--cpus-needed", "1", "--score-file", f, "--", "true"]);
    let err = one_line_error(&run(&args));
    assert!(
        err.contains("--score-file") && err.contains("not a regular file (a FIFO)"),
        "{err}"
    );
    // The same for a device, and in --dry-run.
    let zero = d.path().join("zero");
    link_to_dev_zero(&zero);
    let z = zero.to_str().unwrap();
    let mut args = QUICK.to_vec();
    args.extend(["--dry-run", "--score-file", z, "--", "true"]);
    let err = one_line_error(&run(&args));
    assert!(err.contains("(a character device)"), "{err}");
}

/// A command that replaces the score file by a FIFO each run: the reading
/// after the run refuses it (never waits for a writer), every candidate fails
/// with that reason, and tune ends at once (exit 1: nothing could be scored).
#[test]
fn tune_refuses_a_score_file_the_command_makes_a_fifo() {
    let d = tempfile::tempdir().unwrap();
    let score = d.path().join("score");
    let s = score.to_str().unwrap();
    let script = format!("rm -f '{s}'; mkfifo '{s}'");
    let mut args = QUICK.to_vec();
    args.extend([
        "--cpus-needed",
        "1",
        "--score-file",
        s,
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let out = run(&args);
    let t = text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{t}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        t.contains("no score: cannot read") && t.contains("not a regular file (a FIFO)"),
        "{t}"
    );
}

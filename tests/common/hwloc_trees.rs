//! hwloc's recorded Linux trees (tests/fixtures/hwloc-linux/NAME.tar.bz2, from
//! hwloc's own test suite, see COPYING.hwloc), unpacked on demand.
//!
//! Only the tarballs are committed. The first test that needs a tree unpacks it
//! with `tar xjf` under cargo's per-target temporary directory, keyed by the
//! tarball's content hash, so later runs (and other test binaries) reuse it.
//! When `tar` or `bzip2` is missing the tree cannot be read: under CI (`CI` set)
//! that is a failure; elsewhere a `SKIP: ...` line is written to the terminal
//! (not to the captured test output) and the caller skips.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hwloc-linux")
}

/// Write a line straight to the terminal's stderr (the test harness captures
/// `eprintln!`, so a skip would otherwise go unseen).
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn tool_works(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `None` when tar and bzip2 are both usable, else what is missing.
fn missing_tools() -> Option<String> {
    let missing: Vec<&str> = [("tar", "--version"), ("bzip2", "--help")]
        .into_iter()
        .filter(|(t, a)| !tool_works(t, a))
        .map(|(t, _)| t)
        .collect();
    (!missing.is_empty()).then(|| missing.join(" and "))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

static UNPACK: Mutex<()> = Mutex::new(());

/// The root (holding `sys/`, `proc/`) of the tree recorded in `NAME.tar.bz2`.
/// `None` (after a visible `SKIP:` line) when tar/bzip2 are missing outside CI.
pub fn tree(name: &str) -> Option<PathBuf> {
    let tarball = fixtures_dir().join(format!("{name}.tar.bz2"));
    let bytes = std::fs::read(&tarball).unwrap_or_else(|e| panic!("{}: {e}", tarball.display()));
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hwloc-linux");
    let dest = base.join(format!("{name}-{:016x}", fnv1a(&bytes)));
    let _guard = UNPACK.lock().unwrap_or_else(|e| e.into_inner());
    if !dest.is_dir() {
        if let Some(what) = missing_tools() {
            let msg = format!(
                "SKIP: hwloc tree {name}: {what} not found, cannot unpack {}",
                tarball.display()
            );
            if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false") {
                panic!("{msg} (failing: CI is set)");
            }
            say(&msg);
            return None;
        }
        std::fs::create_dir_all(&base).expect("create unpack dir");
        let tmp = base.join(format!(
            ".{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).expect("create temp unpack dir");
        let out = Command::new("tar")
            .arg("xjf")
            .arg(&tarball)
            .arg("-C")
            .arg(&tmp)
            .output()
            .expect("run tar");
        assert!(
            out.status.success(),
            "tar xjf {}: {}",
            tarball.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // Another process may have won the race: then use its copy.
        if std::fs::rename(&tmp, &dest).is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
            assert!(dest.is_dir(), "could not place {}", dest.display());
        }
    }
    // hwloc's tarballs hold one directory (not always named like the tarball).
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&dest)
        .expect("unpacked dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "{name}: expected one directory in the tarball"
    );
    dirs.pop()
}

/// Like `tree`, as a `String` path for command lines.
pub fn tree_arg(name: &str) -> Option<String> {
    tree(name).map(|p| p.to_string_lossy().into_owned())
}

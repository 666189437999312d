//! The seed machines' sysfs/procfs trees (hygon-c86-5280, kunpeng-920-4826,
//! phytium-ft2500, xeon-e5-2682v4, xeon-platinum-8269cy), generated on demand
//! by `tests/fixtures/seed/gen.py` (see the README.md next to it).
//!
//! Only the generator is committed. The first test of a process that needs a
//! tree runs `python3 gen.py DIR` into a private temporary directory under
//! cargo's per-target temporary directory, writes a marker file holding
//! gen.py's hash, and renames the finished directory to `seed/gen-HASH`; so a
//! changed gen.py generates afresh, later runs and other test binaries reuse
//! it, and parallel test binaries never see a half-written tree (the loser of
//! the rename race drops its copy). When `python3` cannot be run the trees
//! cannot be made: under CI (`CI` set) that is a failure; elsewhere a
//! `SKIP: python3 missing, seed trees not generated` line is written to the
//! terminal (not to the captured test output) and the caller skips.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The five trees gen.py writes.
pub const NAMES: [&str; 5] = [
    "hygon-c86-5280",
    "xeon-platinum-8269cy",
    "xeon-e5-2682v4",
    "kunpeng-920-4826",
    "phytium-ft2500",
];

/// Name of the marker file (content: gen.py's hash) in a finished directory.
const MARKER: &str = ".gen-py-hash";

pub fn generator() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed/gen.py")
}

/// Write a line straight to the terminal's stderr: the test harness captures
/// `eprintln!` (shown only for failing tests), so a skip would go unseen.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

fn python_works() -> bool {
    Command::new("python3")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The two synthetic 384-CPU servers gen.py writes with `--synthetic`
/// (not recorded machines: the scaling bounds of issue 38).
pub const SYNTHETIC: [&str; 2] = ["synthetic-2x96-zen4", "synthetic-2x192-arm"];

/// Generate (or find) the directory holding all five trees. `Err` only when
/// python3 is missing; any other failure panics.
fn generate() -> Result<PathBuf, String> {
    generate_set("seed", &[], &NAMES)
}

/// Generate (or find) the directory of one set of gen.py's trees (`args`
/// before the output directory; `names`: the trees it must hold).
fn generate_set(set: &str, args: &[&str], names: &[&str]) -> Result<PathBuf, String> {
    let script = generator();
    let bytes = std::fs::read(&script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let hash = format!("{:016x}", fnv1a(&bytes));
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(set);
    let dest = base.join(format!("gen-{hash}"));
    let finished =
        |d: &Path| std::fs::read_to_string(d.join(MARKER)).is_ok_and(|m| m.trim() == hash);
    if finished(&dest) {
        return Ok(dest);
    }
    if !python_works() {
        return Err(format!(
            "SKIP: python3 missing, seed trees not generated (cannot run {})",
            script.display()
        ));
    }
    std::fs::create_dir_all(&base).expect("create seed tree dir");
    let tmp = base.join(format!(".gen-{hash}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let out = Command::new("python3")
        .arg(&script)
        .args(args)
        .arg(&tmp)
        .stdin(Stdio::null())
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python3 {} {}: {}{}",
        script.display(),
        tmp.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for name in names {
        assert!(
            tmp.join(name).join("sys").is_dir(),
            "gen.py wrote no {name}/sys"
        );
    }
    std::fs::write(tmp.join(MARKER), format!("{hash}\n")).expect("write marker");
    // Another process may have won the race: then use its copy. (A directory
    // without the marker cannot be at `dest`: only finished ones are renamed.)
    if std::fs::rename(&tmp, &dest).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        assert!(finished(&dest), "could not place {}", dest.display());
    }
    Ok(dest)
}

fn ci() -> bool {
    // The same rule as tests/common/skip.rs (each helper is included alone).
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// The root (holding `sys/`, `proc/`) of the seed tree `name` (one of
/// `NAMES`). `None` (after a visible `SKIP:` line) when python3 is missing
/// outside CI; under CI that panics.
pub fn tree(name: &str) -> Option<PathBuf> {
    assert!(NAMES.contains(&name), "no seed tree named {name}");
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    found(DIR.get_or_init(generate), name)
}

/// Tree `name` in a generated directory, or (after a visible `SKIP:` line,
/// a panic under CI) none when it could not be generated.
fn found(dir: &Result<PathBuf, String>, name: &str) -> Option<PathBuf> {
    match dir {
        Ok(dir) => Some(dir.join(name)),
        Err(msg) => {
            if ci() {
                panic!("{msg} (failing: CI is set)");
            }
            say(&format!("{msg} [{name}]"));
            None
        }
    }
}

/// The root of the synthetic tree `name` (one of `SYNTHETIC`), generated
/// like the seed trees (`gen.py --synthetic`); `None` after a visible
/// `SKIP:` line when python3 is missing outside CI.
pub fn synthetic(name: &str) -> Option<PathBuf> {
    assert!(SYNTHETIC.contains(&name), "no synthetic tree named {name}");
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    found(
        DIR.get_or_init(|| generate_set("synthetic", &["--synthetic"], &SYNTHETIC)),
        name,
    )
}

/// Like `tree`, as a `String` path for command lines.
pub fn tree_arg(name: &str) -> Option<String> {
    tree(name).map(|p| p.to_string_lossy().into_owned())
}

//! Embeds the core knowledge base (`data/uarch/*.toml`) in the binary: writes
//! `$OUT_DIR/uarch_files.rs`, a list of (file name, contents) pairs, so that
//! adding an entry is adding a file. Also says what the build is
//! (`base::build`): the git commit and whether tracked files differed from it,
//! the build date (UTC; `SOURCE_DATE_EPOCH` when set), the target, the profile
//! and the oldest glibc the binary is made to start on.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    uarch_files();
    build_facts();
}

fn uarch_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/uarch");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut out = String::from("&[\n");
    for n in &names {
        let p = dir.join(n);
        println!("cargo:rerun-if-changed={}", p.display());
        let _ = writeln!(
            out,
            "    ({n:?}, include_str!({:?})),",
            p.display().to_string()
        );
    }
    out.push(']');
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("uarch_files.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
}

/// What the binary is built from.
const SOURCES: [&str; 5] = ["src", "data", "Cargo.toml", "Cargo.lock", "build.rs"];

/// `cargo:rustc-env` lines read by `src/base/build.rs`.
fn build_facts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The commit and its dirtiness are read again whenever the sources or
    // the checked-out commit change (not on every `git status`).
    for p in SOURCES {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    // Only files that exist: a missing one makes cargo rerun every time.
    let git_dir = git(root, &["rev-parse", "--git-dir"]).map(|d| root.join(d));
    let common = git(root, &["rev-parse", "--git-common-dir"]).map(|d| root.join(d));
    let watch = [
        git_dir.as_ref().map(|g| g.join("HEAD")),
        common.as_ref().map(|g| g.join("refs/heads")),
        common.as_ref().map(|g| g.join("packed-refs")),
    ];
    for p in watch.into_iter().flatten().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    for v in ["SOURCE_DATE_EPOCH", "CPUSCOPE_GLIBC_FLOOR"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let commit = git(root, &["rev-parse", "--short=12", "HEAD"]);
    // Dirty: the files the binary is built from differ from the commit
    // (the same files that make this script run again).
    let dirty = commit.as_ref().and_then(|_| {
        let mut args = vec!["status", "--porcelain", "--untracked-files=no", "--"];
        args.extend(SOURCES);
        git(root, &args).map(|s| !s.is_empty()).or(Some(false))
    });
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let (floor, floor_source) = glibc_floor(&target, &host);
    let env = |k: &str, v: &str| println!("cargo:rustc-env={k}={v}");
    env("CPUSCOPE_BUILD_COMMIT", commit.as_deref().unwrap_or(""));
    env(
        "CPUSCOPE_BUILD_DIRTY",
        match dirty {
            Some(true) => "dirty",
            Some(false) => "clean",
            None => "",
        },
    );
    env("CPUSCOPE_BUILD_DATE", &utc(secs));
    env("CPUSCOPE_BUILD_TARGET", &target);
    env("CPUSCOPE_BUILD_PROFILE", &profile);
    env("CPUSCOPE_GLIBC_FLOOR_VALUE", &floor);
    env("CPUSCOPE_GLIBC_FLOOR_SOURCE", &floor_source);
}

/// The oldest glibc the binary starts on, and how that is known: declared by
/// a portable build (`scripts/package.sh` sets `CPUSCOPE_GLIBC_FLOOR` from
/// its `cargo zigbuild --target …-gnu.2.17`; CI checks the symbol versions),
/// else the build machine's own glibc (a binary linked against it needs it
/// or newer), else not known.
fn glibc_floor(target: &str, host: &str) -> (String, String) {
    if !target.contains("-gnu") {
        return (String::new(), format!("not a glibc build ({target})"));
    }
    if let Ok(v) = std::env::var("CPUSCOPE_GLIBC_FLOOR") {
        let v = v.trim().to_string();
        if !v.is_empty() {
            return (
                v.clone(),
                format!("declared by the portable build (linked against glibc {v}'s symbols)"),
            );
        }
    }
    if target == host {
        if let Some(v) = command("getconf", &["GNU_LIBC_VERSION"], Path::new("/")) {
            if let Some(v) = v.strip_prefix("glibc ") {
                return (
                    v.trim().to_string(),
                    "the build machine's glibc: built against it, the binary may need it (scripts/package.sh makes one for glibc 2.17)".into(),
                );
            }
        }
    }
    (
        String::new(),
        "not known: built against another glibc than this machine's (cross build)".into(),
    )
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    command("git", args, root)
}

fn command(cmd: &str, args: &[&str], dir: &Path) -> Option<String> {
    let out = std::process::Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (civil date from days,
/// H. Hinnant's algorithm: no date library in the build script).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

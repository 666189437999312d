//! Nothing is read outside a recorded root (issue 34, docs/reliability.md,
//! "Links out of a recorded tree"): under `--sysroot DIR` every path is
//! resolved within DIR, so a symbolic link that leaves it (an absolute
//! target, or more `..` than the tree is deep; to a file or a directory)
//! and a loop of links are refused with one note naming the link, as an
//! archive's are; `record` copies nothing from outside the tree and lists
//! the link as not copied. Links that stay inside (sysfs is full of them)
//! still work. With no /sys mounted, `info` says so.
//!
//! The secret each probe links to is a file of its own, outside the tree,
//! holding a marker made for this run: it must appear in no output and in
//! no archive. Every command runs in its own process group under a
//! deadline; its peak RSS (`wait4`'s `ru_maxrss`) must stay under 256 MiB.
//!
//! The recorded tree is a copy of hwloc's `16em64t-4s2c2t` (16 CPUs, with
//! sysfs's own relative links), unpacked by common/hwloc_trees.rs.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/hwloc_trees.rs"]
mod hwloc_trees;
#[path = "common/skip.rs"]
mod skip;

use std::io::Read as _;
use std::os::unix::fs::symlink;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long any command here may take (each ends in about a second).
const DEADLINE: Duration = Duration::from_secs(60);
/// The most memory a command may reach, in KiB (`ru_maxrss`): 256 MiB.
const PEAK_KIB: i64 = 256 << 10;

const FIXTURE: &str = "16em64t-4s2c2t";
const MODEL: &str = "Intel(R) Xeon(TM) CPU 2.60GHz";

/// What a command did.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn out_lines_with(&self, words: &str) -> Vec<&str> {
        self.stdout.lines().filter(|l| l.contains(words)).collect()
    }
}

/// Runs `cmd` to its end under [`DEADLINE`] in its own process group;
/// panics when it hangs, dies of a signal, panics, or passes [`PEAK_KIB`].
/// The child is reaped by `wait4` (for its rusage), not `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_cmd(mut cmd: Command, what: &str) -> Ran {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id() as libc::pid_t;
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
    let (status, peak) = loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid one to be filled.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waiting for our own child, with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if r == pid {
            break (status, ru.ru_maxrss);
        }
        if t0.elapsed() > DEADLINE {
            // SAFETY: signalling the process group of our own child.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            panic!("{what}: still running after {DEADLINE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let ran = Ran {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
    };
    assert!(
        !libc::WIFSIGNALED(status),
        "{what}: died of signal {}: {}",
        libc::WTERMSIG(status),
        ran.stderr
    );
    assert!(!ran.stderr.contains("panicked"), "{what}: {}", ran.stderr);
    assert!(
        peak < PEAK_KIB,
        "{what}: peak RSS {peak} KiB, over {PEAK_KIB} KiB"
    );
    ran
}

/// `cpuscope ARGS`, run as [`run_cmd`] runs it.
fn run(args: &[&str]) -> Ran {
    let mut cmd = bin::command();
    cmd.args(args);
    run_cmd(cmd, &format!("cpuscope {args:?}"))
}

/// Copy a tree, keeping symlinks as symlinks.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type().unwrap();
        if t.is_symlink() {
            symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if t.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A private copy of the recorded tree at `DIR/root` and a secret beside it
/// (`DIR/outside/secret`, holding the marker); None after a visible SKIP
/// line when tar/bzip2 are missing outside CI.
struct Probe {
    dir: tempfile::TempDir,
    root: PathBuf,
    marker: String,
}

impl Probe {
    fn new() -> Option<Probe> {
        let src = hwloc_trees::tree(FIXTURE)?;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        copy_tree(&src, &root);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let marker = format!("cpuscope-secret-{}-{nanos}", std::process::id());
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/secret"), format!("{marker}\n")).unwrap();
        Some(Probe { dir, root, marker })
    }

    fn secret(&self) -> PathBuf {
        self.dir.path().join("outside/secret")
    }

    fn r(&self) -> &str {
        self.root.to_str().unwrap()
    }

    /// A symbolic link at `at` (under the root) to `target`, whose content
    /// the kernel itself reads (so the probe is real) when `reads` is set.
    fn link(&self, at: &str, target: &Path, reads: Option<&str>) {
        let p = self.root.join(at);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_dir_all(&p);
        symlink(target, &p).unwrap();
        if let Some(want) = reads {
            let got = std::fs::read_to_string(&p).unwrap();
            assert!(got.contains(want), "{at} -> {target:?} reads {got:?}");
        }
    }

    /// Asserts the marker is in none of `ran`'s output.
    fn unseen(&self, ran: &Ran, what: &str) {
        assert!(
            !ran.stdout.contains(&self.marker) && !ran.stderr.contains(&self.marker),
            "{what} printed the secret:\n{}{}",
            ran.stdout,
            ran.stderr
        );
    }

    /// `info` and `info --json`: both exit 0 without the secret; the text
    /// has one note line naming each refused link (`links`), the JSON the
    /// same in `read_notes`. Returns the text and JSON.
    fn info_refusing(&self, links: &[(&str, &str)]) -> (Ran, serde_json::Value) {
        let t = run(&["--sysroot", self.r(), "info"]);
        assert_eq!(t.code, Some(0), "info: {}", t.stderr);
        self.unseen(&t, "info");
        let j = run(&["--sysroot", self.r(), "info", "--json"]);
        assert_eq!(j.code, Some(0), "info --json: {}", j.stderr);
        self.unseen(&j, "info --json");
        let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("info --json is JSON");
        let notes: Vec<&str> = v["read_notes"]
            .as_array()
            .map(|a| a.iter().filter_map(|n| n.as_str()).collect())
            .unwrap_or_default();
        for (link, why) in links {
            let named = format!("symbolic link '{link}' -> ");
            let lines = t.out_lines_with(&named);
            assert_eq!(lines.len(), 1, "one line for {link}:\n{}", t.stdout);
            assert!(lines[0].contains(why), "{}", lines[0]);
            assert!(
                lines[0].ends_with(": refused, read as missing"),
                "{}",
                lines[0]
            );
            let n: Vec<_> = notes.iter().filter(|n| n.contains(&named)).collect();
            assert_eq!(n.len(), 1, "{link} in read_notes: {notes:?}");
            assert!(n[0].contains(why), "{}", n[0]);
        }
        let refused = t.out_lines_with(": refused, read as missing").len();
        assert_eq!(refused, links.len(), "{}", t.stdout);
        (t, v)
    }

    /// `record` of the tree: exit 0, one line on stderr, no secret in it,
    /// in the archive's bytes or in any entry; each of `links` is listed as
    /// not copied (or not followed, for a directory) with `why`. Returns
    /// the archive and its manifest.
    fn record_refusing(&self, links: &[(&str, &str)]) -> (PathBuf, serde_json::Value) {
        let archive = self.dir.path().join("rec.tar.gz");
        let _ = std::fs::remove_file(&archive);
        let o = run(&["--sysroot", self.r(), "record", archive.to_str().unwrap()]);
        assert_eq!(o.code, Some(0), "record: {}", o.stderr);
        self.unseen(&o, "record");
        let lines: Vec<&str> = o.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "record says one line: {}", o.stderr);
        let bytes = std::fs::read(&archive).unwrap();
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut raw)
            .expect("a gzip'd archive");
        let m = self.marker.as_bytes();
        assert!(
            !raw.windows(m.len()).any(|w| w == m),
            "the archive holds the secret"
        );
        let mut manifest = None;
        let mut ar = tar::Archive::new(&raw[..]);
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let path = e.path().unwrap().into_owned();
            for (link, _) in links {
                assert_ne!(Path::new("/").join(&path), Path::new(link), "{link} stored");
            }
            if path == Path::new("cpuscope-record.json") {
                let mut s = String::new();
                e.read_to_string(&mut s).unwrap();
                manifest = Some(serde_json::from_str::<serde_json::Value>(&s).unwrap());
            }
        }
        let manifest = manifest.expect("a manifest");
        for (link, why) in links {
            let u = manifest["unreadable"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u["path"] == *link)
                .unwrap_or_else(|| panic!("{link} not listed: {}", manifest["unreadable"]));
            let reason = u["reason"].as_str().unwrap();
            assert!(reason.contains(why), "{link}: {reason}");
        }
        (archive, manifest)
    }
}

/// The probe of issue 34: a sysfs/procfs file linked to a secret outside
/// the tree (there `/etc/shadow`). `info` printed it; now the read is
/// refused with one note naming the link, in text and JSON, and the knob
/// it feeds is read as missing.
#[test]
fn info_does_not_read_a_file_link_out_of_the_tree() {
    let Some(p) = Probe::new() else { return };
    let nmi = "/proc/sys/kernel/nmi_watchdog";
    p.link(&nmi[1..], &p.secret(), Some(&p.marker));
    let (t, v) = p.info_refusing(&[(nmi, "leads out of the tree")]);
    // Everything else of the tree is read as before.
    assert!(t.stdout.contains(MODEL), "{}", t.stdout);
    assert_eq!(v["identity"]["model_name"], MODEL);
}

/// `record` of that tree copied the secret into the archive; now nothing
/// from outside the tree is copied: the manifest lists the link as not
/// copied, with its target, and the archive reads back.
#[test]
fn record_does_not_copy_a_file_link_out_of_the_tree() {
    let Some(p) = Probe::new() else { return };
    let nmi = "/proc/sys/kernel/nmi_watchdog";
    p.link(&nmi[1..], &p.secret(), Some(&p.marker));
    let (archive, m) = p.record_refusing(&[(nmi, "out of the recorded tree")]);
    let reason = m["unreadable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["path"] == nmi)
        .unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        reason,
        format!(
            "a symbolic link out of the recorded tree (-> '{}'): not copied",
            p.secret().display()
        )
    );
    let back = run(&["--sysroot", archive.to_str().unwrap(), "info"]);
    assert_eq!(back.code, Some(0), "{}", back.stderr);
    assert!(back.stdout.contains(MODEL), "{}", back.stdout);
    p.unseen(&back, "info of the archive");
}

/// A relative link that climbs out of the tree with `..` (from
/// `root/proc`, `../../outside/...`): refused as an absolute one is.
#[test]
fn a_link_climbing_out_with_dotdot_is_refused() {
    let Some(p) = Probe::new() else { return };
    let cpuinfo = std::fs::read_to_string(p.root.join("proc/cpuinfo")).unwrap();
    let fake = p.dir.path().join("outside/cpuinfo");
    std::fs::write(&fake, cpuinfo.replace(MODEL, &p.marker)).unwrap();
    p.link(
        "proc/cpuinfo",
        Path::new("../../outside/cpuinfo"),
        Some(&p.marker),
    );
    let (t, v) = p.info_refusing(&[("/proc/cpuinfo", "-> '../../outside/cpuinfo' leads out")]);
    assert!(t.stdout.contains("n/a (no /proc/cpuinfo"), "{}", t.stdout);
    assert!(v["identity"]["model_name"].is_null(), "{}", v["identity"]);
    p.record_refusing(&[("/proc/cpuinfo", "not copied")]);
}

/// An absolute link out of the tree: `/proc/cpuinfo` -> a cpuinfo elsewhere
/// whose model name is the secret. (An absolute target names the host's
/// file, not the tree's: an archive refuses any, and so does this.)
#[test]
fn an_absolute_link_out_of_the_tree_is_refused() {
    let Some(p) = Probe::new() else { return };
    let cpuinfo = std::fs::read_to_string(p.root.join("proc/cpuinfo")).unwrap();
    let fake = p.dir.path().join("outside/cpuinfo");
    std::fs::write(&fake, cpuinfo.replace(MODEL, &p.marker)).unwrap();
    p.link("proc/cpuinfo", &fake, Some(&p.marker));
    let (t, v) = p.info_refusing(&[("/proc/cpuinfo", "leads out of the tree")]);
    assert!(t.stdout.contains("n/a (no /proc/cpuinfo"), "{}", t.stdout);
    assert!(v["identity"]["model_name"].is_null(), "{}", v["identity"]);
    p.record_refusing(&[("/proc/cpuinfo", "not copied")]);
}

/// Directory links out of the tree (cpu0's cache, absolute; cpu1's, by
/// `..`): nothing under them is read or copied, one note each, however many
/// files lie below; the other CPUs' caches are read as before.
#[test]
fn a_directory_link_out_of_the_tree_is_refused() {
    let Some(p) = Probe::new() else { return };
    let cpu = "sys/devices/system/cpu";
    for n in [0, 1] {
        let out = p.dir.path().join(format!("outside/cache{n}"));
        copy_tree(&p.root.join(format!("{cpu}/cpu{n}/cache")), &out);
        std::fs::write(out.join("index0/shared_cpu_list"), &p.marker).unwrap();
    }
    let abs = p.dir.path().join("outside/cache0");
    p.link(&format!("{cpu}/cpu0/cache"), &abs, None);
    let climb = Path::new("../../../../../../outside/cache1");
    p.link(&format!("{cpu}/cpu1/cache"), climb, None);
    let read = std::fs::read_to_string(
        p.root
            .join(format!("{cpu}/cpu1/cache/index0/shared_cpu_list")),
    );
    assert_eq!(read.unwrap(), p.marker, "the kernel follows cpu1/cache out");
    let c0 = format!("/{cpu}/cpu0/cache");
    let c1 = format!("/{cpu}/cpu1/cache");
    let (t, v) = p.info_refusing(&[
        (&c0, "leads out of the tree"),
        (&c1, "leads out of the tree"),
    ]);
    assert!(t.stdout.contains("16 CPUs"), "{}", t.stdout);
    assert!(
        v["caches"].as_array().is_some_and(|c| !c.is_empty()),
        "{}",
        v["caches"]
    );
    p.record_refusing(&[(&c0, "not copied"), (&c1, "not copied")]);
}

/// A root whose `sys` is itself a link out of the tree (`sys -> /sys`): the
/// root is refused with one line naming the link, exit 1.
#[test]
fn a_root_whose_sys_leads_out_is_refused_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("proc")).unwrap();
    symlink("/sys", d.path().join("sys")).unwrap();
    let r = d.path().to_str().unwrap();
    for args in [&["info"][..], &["info", "--json"], &["record", "-"]] {
        let mut all = vec!["--sysroot", r];
        all.extend_from_slice(args);
        let o = run(&all);
        let e = o.stderr.trim_end();
        assert_eq!(e.lines().count(), 1, "one line: {e}");
        assert!(e.starts_with("cpuscope: error: "), "{e}");
        assert!(
            e.contains(&format!(
                "sysroot '{r}' is not a sysfs root: sys/devices/system/cpu: symbolic link '/sys' -> '/sys' leads out of the tree: refused"
            )),
            "{e}"
        );
        assert_eq!(o.code, Some(1), "{e}");
    }
}

/// Loops of links (two links naming each other; a link naming itself) and
/// a chain longer than the kernel follows (41 links): each read ends at
/// once with one note, as a loop; a chain of 39 is followed.
#[test]
fn a_loop_of_links_ends_with_one_line() {
    let Some(p) = Probe::new() else { return };
    p.link("proc/cpuinfo", Path::new("cpuinfo2"), None);
    p.link("proc/cpuinfo2", Path::new("cpuinfo"), None);
    let core = "sys/devices/system/cpu/cpu0/topology/core_id";
    p.link(core, Path::new("core_id"), None);
    // cpu1's core_id through 41 links; cpu2's through 39.
    for (cpu, n) in [(1, 41), (2, 39)] {
        let t = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        let real = p.root.join(format!("{t}/core_id"));
        std::fs::rename(&real, p.root.join(format!("{t}/real_core_id"))).unwrap();
        for i in 0..n {
            let next = if i + 1 == n {
                "real_core_id".to_string()
            } else {
                format!("l{}", i + 1)
            };
            let at = if i == 0 {
                "core_id".to_string()
            } else {
                format!("l{i}")
            };
            p.link(&format!("{t}/{at}"), Path::new(&next), None);
        }
    }
    let (t, _) = p.info_refusing(&[
        (
            "/proc/cpuinfo",
            "is a loop of links (more than 40 followed)",
        ),
        (&format!("/{core}"), "is a loop of links"),
        (
            "/sys/devices/system/cpu/cpu1/topology/l40",
            "is a loop of links",
        ),
    ]);
    assert!(t.stdout.contains("n/a (no /proc/cpuinfo"), "{}", t.stdout);
    assert!(t.stdout.contains("16 CPUs"), "{}", t.stdout);
    let (_, m) = p.record_refusing(&[("/proc/cpuinfo", "loop"), (&format!("/{core}"), "loop")]);
    // cpu2's chain of 39 is recorded as links, and reads back.
    let links = m["links"].as_array().unwrap();
    assert!(
        links
            .iter()
            .any(|l| l["path"] == "/sys/devices/system/cpu/cpu2/topology/core_id"),
        "{links:?}"
    );
}

/// Links that stay inside the tree still work: the fixture's own sysfs
/// links, and new ones (proc/cpuinfo and cpu0's topology moved elsewhere in
/// the tree and linked back, relative): `info` shows the same machine as
/// the unmodified tree, with no refusal, and so does the archive `record`
/// makes of it.
#[test]
fn links_inside_the_tree_still_work() {
    let Some(p) = Probe::new() else { return };
    let before = run(&["--sysroot", p.r(), "info", "--json"]);
    assert_eq!(before.code, Some(0), "{}", before.stderr);
    let before: serde_json::Value = serde_json::from_str(&before.stdout).unwrap();
    // Moved within the CPU tree, which `record` copies whole.
    let cpu = "sys/devices/system/cpu";
    let moved = p.root.join(format!("{cpu}/moved"));
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::rename(p.root.join("proc/cpuinfo"), moved.join("cpuinfo")).unwrap();
    p.link(
        "proc/cpuinfo",
        Path::new("../sys/devices/system/cpu/moved/cpuinfo"),
        Some(MODEL),
    );
    std::fs::rename(
        p.root.join(format!("{cpu}/cpu0/topology")),
        moved.join("topology0"),
    )
    .unwrap();
    p.link(
        &format!("{cpu}/cpu0/topology"),
        Path::new("../moved/topology0"),
        None,
    );
    let (t, after) = p.info_refusing(&[]);
    assert!(t.stdout.contains(MODEL), "{}", t.stdout);
    assert!(t.stdout.contains("16 CPUs"), "{}", t.stdout);
    for k in [
        "identity",
        "cpus",
        "packages",
        "cores",
        "threads",
        "caches",
        "numa_nodes",
    ] {
        assert_eq!(after[k], before[k], "{k}");
    }
    let (archive, m) = p.record_refusing(&[]);
    assert!(
        m["unreadable"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| !u["reason"]
                .as_str()
                .unwrap()
                .contains("out of the recorded tree")),
        "{}",
        m["unreadable"]
    );
    let back = run(&["--sysroot", archive.to_str().unwrap(), "info", "--json"]);
    assert_eq!(back.code, Some(0), "{}", back.stderr);
    let back: serde_json::Value = serde_json::from_str(&back.stdout).unwrap();
    for k in ["identity", "cpus", "packages", "cores", "threads", "caches"] {
        assert_eq!(back[k], before[k], "{k} from the archive");
    }
}

/// With no /sys mounted (a mount namespace of its own: /sys unmounted, or
/// an empty tmpfs over it) and no `--sysroot`, `info` says that /sys is not
/// mounted, in one line, exit 1 (it said "sysroot '/' is not a sysfs root").
#[test]
fn info_without_sys_mounted_says_so() {
    // SAFETY: geteuid only reads.
    if unsafe { libc::geteuid() } != 0 {
        skip::skip_or_fail("info_without_sys_mounted_says_so: needs root (a mount namespace)");
        return;
    }
    let bin = bin::PATH;
    let want = "cpuscope: error: /sys is not mounted here (no /sys/devices/system/cpu): mount sysfs (mount -t sysfs sysfs /sys), or give --sysroot";
    for (how, script) in [
        (
            "/sys unmounted",
            "umount -l /sys || exit 97; exec \"$0\" info",
        ),
        (
            "an empty tmpfs over /sys",
            "mount -t tmpfs none /sys || exit 97; exec \"$0\" info --json",
        ),
    ] {
        if let Err(e) = Command::new("unshare").arg("--version").output() {
            skip::skip_or_fail(&format!(
                "info_without_sys_mounted_says_so: no unshare: {e}"
            ));
            return;
        }
        let mut cmd = Command::new("unshare");
        cmd.args(["-m", "--propagation", "private", "sh", "-c", script, bin]);
        let o = run_cmd(cmd, how);
        if o.code == Some(97) || o.stderr.starts_with("unshare:") {
            skip::skip_or_fail(&format!(
                "info_without_sys_mounted_says_so: {how}: cannot make the namespace: {}",
                o.stderr.trim()
            ));
            return;
        }
        assert_eq!(o.code, Some(1), "{how}: {}{}", o.stdout, o.stderr);
        assert_eq!(o.stderr.trim_end(), want, "{how}");
        assert!(o.stdout.is_empty(), "{how}: {}", o.stdout);
    }
    // /sys is still this machine's outside the namespace.
    assert!(Path::new("/sys/devices/system/cpu").is_dir() || !skip::in_ci());
}

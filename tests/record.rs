//! `cpuscope record FILE.tar.gz` and `--sysroot FILE.tar.gz` (issue 24):
//! this machine recorded and read back (as the archive, and unpacked by hand
//! with tar), recorded trees that must replay byte for byte the same, the
//! manifest's list of files that cannot be read, hostile archives refused
//! with one line, and outputs refused before anything is gathered.
//!
//! Every command runs with `TMPDIR` set to a directory of the test's own, so
//! each test also checks that `--sysroot ARCHIVE` leaves nothing behind
//! there (its private directory is removed, on success and on refusal).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/emulator.rs"]
mod emulator;
#[path = "common/hwloc_trees.rs"]
mod hwloc_trees;
#[path = "common/seed_trees.rs"]
mod seed_trees;

use cli::one_line_error;
use serde_json::Value;
use std::ffi::CString;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = bin::PATH;
const MANIFEST: &str = "cpuscope-record.json";

/// A scratch directory, and a TMPDIR of its own that must stay empty.
struct Scratch {
    dir: tempfile::TempDir,
    tmp: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        Scratch { dir, tmp }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env("TMPDIR", &self.tmp)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        let o = self.cmd(args).output().unwrap();
        self.assert_tmp_empty(args);
        o
    }

    fn ok(&self, args: &[&str]) -> Output {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_slice(&self.ok(args).stdout).unwrap()
    }

    /// The private directory `--sysroot ARCHIVE` unpacks into is gone.
    fn assert_tmp_empty(&self, args: &[&str]) {
        let left: Vec<_> = std::fs::read_dir(&self.tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?} in TMPDIR");
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The manifest inside an archive.
fn manifest(archive: &Path) -> Value {
    let f = std::fs::File::open(archive).unwrap();
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap() == Path::new(MANIFEST) {
            let mut text = String::new();
            e.read_to_string(&mut text).unwrap();
            return serde_json::from_str(&text).unwrap();
        }
    }
    panic!("no {MANIFEST} in {}", archive.display());
}

/// The sections of `info --json` that say what the machine is (identity,
/// CPUs and topology, caches, NUMA nodes), without what is legitimately
/// read differently on the live machine than from a recording:
/// - `identity.architecture_source` (`uname` live, `uname (recorded)` from
///   the manifest) and `identity.virtualization`'s evidence (the CPUID
///   vendor is marked recorded): compared by [`same_virtualization`];
/// - `cpus.allowed_source` (live: sched_getaffinity; recorded: the cgroup
///   cpuset and /proc/self/status of the recording process; the sets are
///   the same and are compared);
/// - each node's `free_bytes` and its huge pages' `free`: readings of the
///   moment (MemFree moves between two reads);
/// - a cache line size taken from CTR_EL0 (arm64) and its note, which says
///   when it was recorded.
fn what_it_is(info: &Value) -> Value {
    let mut v = serde_json::Map::new();
    for k in [
        "identity",
        "cpus",
        "packages",
        "dies",
        "clusters",
        "cores",
        "threads",
        "smt",
        "core_kinds",
        "topology_notes",
        "caches",
        "caches_unavailable",
        "caches_documented_notes",
        "numa_nodes",
        "numa",
    ] {
        v.insert(k.to_string(), info[k].clone());
    }
    let mut v = Value::Object(v);
    let id = v["identity"].as_object_mut().unwrap();
    id.remove("architecture_source");
    id.remove("virtualization");
    if let Some(e) = emulator::declared() {
        // Under qemu-user the live architecture is uname's (the emulated
        // aarch64) while /proc is the host's: the archive holds only the
        // files, whose shape says the host's. Compared natively only.
        eprintln!("{e}: identity.architecture not compared (live uname is the emulator's)");
        id.remove("architecture");
    }
    v["cpus"].as_object_mut().unwrap().remove("allowed_source");
    for n in v["numa_nodes"].as_array_mut().unwrap() {
        n.as_object_mut().unwrap().remove("free_bytes");
        for h in n["hugepages"].as_array_mut().into_iter().flatten() {
            h.as_object_mut().unwrap().remove("free");
        }
    }
    for c in v["caches"].as_array_mut().unwrap() {
        let ctr = c["notes"].as_array().is_some_and(|n| {
            n.iter()
                .any(|x| x.as_str().unwrap_or("").contains("CTR_EL0"))
        });
        if ctr {
            let c = c.as_object_mut().unwrap();
            c.remove("line_bytes");
            c.remove("notes");
        }
    }
    v
}

/// Live and replayed `info --json` say the same of virtualization: the
/// same verdict, the same hypervisor, the same evidence but for the CPUID
/// vendor's "(recorded)" mark; the architecture from uname, marked.
fn same_virtualization(live: &Value, back: &Value) {
    let (l, b) = (
        &live["identity"]["virtualization"],
        &back["identity"]["virtualization"],
    );
    assert_eq!(l["is_virtual"], b["is_virtual"], "{l} vs {b}");
    assert_eq!(l["hypervisor"], b["hypervisor"], "{l} vs {b}");
    let unmarked: Vec<String> = b["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().replace(" (recorded)", ""))
        .collect();
    let want: Vec<String> = l["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    assert_eq!(want, unmarked);
    if live["identity"]["architecture_source"] == "uname" {
        assert_eq!(back["identity"]["architecture_source"], "uname (recorded)");
    }
}

/// `a` and `b` equal, or the first difference.
fn assert_same(a: &Value, b: &Value, what: &str) {
    fn first_diff(a: &Value, b: &Value, at: &str) -> Option<String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for k in x.keys().chain(y.keys()) {
                    let (u, v) = (&x.get(k), &y.get(k));
                    match (u, v) {
                        (Some(u), Some(v)) => {
                            if let Some(d) = first_diff(u, v, &format!("{at}.{k}")) {
                                return Some(d);
                            }
                        }
                        _ => return Some(format!("{at}.{k}: {u:?} vs {v:?}")),
                    }
                }
                None
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (u, v))| first_diff(u, v, &format!("{at}[{i}]"))),
            _ if a == b => None,
            _ => Some(format!("{at}: {a} vs {b}")),
        }
    }
    if let Some(d) = first_diff(a, b, "") {
        panic!("{what}: {d}");
    }
}

/// `info --json` under `root`, without the `sysroot` field.
fn info_under(sc: &Scratch, root: &str) -> Value {
    let mut v = sc.json(&["--sysroot", root, "info", "--json"]);
    v.as_object_mut().unwrap().remove("sysroot");
    v
}

#[test]
fn this_machine_recorded_reads_back_the_same() {
    let sc = Scratch::new();
    let archive = sc.path("me.tar.gz");
    let o = sc.ok(&["record", s(&archive)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("recorded / into"), "{err}");
    let live = sc.json(&["info", "--json"]);
    let back = sc.json(&["--sysroot", s(&archive), "info", "--json"]);
    assert_eq!(back["sysroot"], s(&archive), "info names the archive");
    assert_same(&what_it_is(&live), &what_it_is(&back), "live vs archive");
    same_virtualization(&live, &back);
    // The NICs are read the same (their IRQ counts move: not compared).
    let nics = |v: &Value| -> Vec<Value> {
        v["devices"]["nics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let mut n = n.clone();
                let o = n.as_object_mut().unwrap();
                o.remove("irqs");
                o.remove("irqs_per_node");
                o.remove("affinity_cpus");
                n
            })
            .collect()
    };
    assert_eq!(nics(&live), nics(&back));

    let m = manifest(&archive);
    assert_eq!(m["schema"], "cpuscope.record/1");
    assert_eq!(m["source"], "/");
    assert!(m["live"]["uname_machine"].is_string(), "{}", m["live"]);
    assert!(m["truncated"].is_null(), "{}", m["truncated"]);
    let files: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for f in [
        "/proc/cpuinfo",
        "/sys/devices/system/cpu/online",
        "/sys/devices/system/cpu/cpu0/topology/core_id",
    ] {
        if Path::new(f).exists() {
            assert!(files.contains(&f), "{f} not recorded");
        }
    }
    // Write-only attributes are listed, not read (root or not).
    let compact = "/sys/devices/system/node/node0/compact";
    if Path::new(compact).exists() {
        let u = m["unreadable"].as_array().unwrap();
        assert!(
            u.iter()
                .any(|x| x["path"] == compact
                    && x["reason"].as_str().unwrap().contains("write-only")),
            "{u:?}"
        );
    }
}

#[test]
fn an_archive_unpacked_by_hand_reads_the_same() {
    let sc = Scratch::new();
    let archive = sc.path("me.tar.gz");
    sc.ok(&["record", s(&archive)]);
    let dir = sc.path("unpacked");
    std::fs::create_dir(&dir).unwrap();
    let st = Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&dir)
        .status()
        .expect("tar");
    assert!(st.success());
    assert!(dir.join(MANIFEST).is_file());
    let from_dir = info_under(&sc, s(&dir));
    let from_archive = info_under(&sc, s(&archive));
    assert_same(&from_archive, &from_dir, "archive vs unpacked");
    let live = sc.json(&["info", "--json"]);
    assert_same(
        &what_it_is(&live),
        &what_it_is(&from_dir),
        "live vs unpacked",
    );
}

/// Recorded trees (hwloc's, and a seed machine with NICs, IRQs and a
/// cgroup) re-recorded with `--sysroot DIR record` read back exactly as the
/// directory does: every section, knobs, devices and memory included.
#[test]
fn recorded_trees_replay_exactly() {
    let sc = Scratch::new();
    let mut roots: Vec<PathBuf> = Vec::new();
    for name in [
        "16amd64-4n4c-cgroup-distance-merge",
        "128arm-2pa2n8cluster4co",
        "16amd64-8n2c",
    ] {
        match hwloc_trees::tree(name) {
            Some(r) => roots.push(r),
            None => return,
        }
    }
    if let Some(r) = seed_trees::tree("phytium-ft2500") {
        roots.push(r);
    }
    for root in roots {
        let archive = sc.path("tree.tar.gz");
        sc.ok(&["--sysroot", s(&root), "record", s(&archive)]);
        let want = info_under(&sc, s(&root));
        let got = info_under(&sc, s(&archive));
        assert_same(&want, &got, &root.display().to_string());
        let m = manifest(&archive);
        assert_eq!(
            m["unreadable"].as_array().unwrap().len(),
            0,
            "{}",
            m["unreadable"]
        );
    }
}

/// A recorded root whose manifest keeps the CPUID hypervisor vendor (issue
/// 36: a KVM guest's record replayed as "hypervisor unknown"): named on
/// replay, marked recorded; a root without it says it cannot name one;
/// a forged vendor or machine name that no CPU would give is dropped.
#[test]
fn a_recorded_cpuid_hypervisor_vendor_is_replayed() {
    let sc = Scratch::new();
    let root = sc.path("guest");
    std::fs::create_dir_all(root.join("proc")).unwrap();
    std::fs::create_dir_all(root.join("sys/devices/system/cpu/cpu0")).unwrap();
    std::fs::write(
        root.join("proc/cpuinfo"),
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n\
         model name\t: AMD EPYC\nflags\t\t: fpu sse2 hypervisor\n\n",
    )
    .unwrap();
    std::fs::write(root.join("sys/devices/system/cpu/online"), "0\n").unwrap();
    let virt = |sc: &Scratch| -> Value {
        sc.json(&["--sysroot", s(&root), "info", "--json"])["identity"].clone()
    };
    // No manifest: virtual, the hypervisor not named, and why.
    let id = virt(&sc);
    assert_eq!(id["virtualization"]["is_virtual"], true, "{id}");
    assert!(id["virtualization"]["hypervisor"].is_null(), "{id}");
    assert!(id["virtualization"]["reason"].is_string(), "{id}");
    // A manifest that kept what the node answered.
    let live = serde_json::json!({"live": {"uname_machine": "x86_64",
        "cpuid_hypervisor_vendor": "KVMKVMKVM", "ctr_el0_lines": null}});
    std::fs::write(root.join(MANIFEST), live.to_string()).unwrap();
    let id = virt(&sc);
    assert_eq!(id["virtualization"]["hypervisor"], "KVM", "{id}");
    let ev = id["virtualization"]["evidence"].to_string();
    assert!(ev.contains("'KVMKVMKVM' (recorded)"), "{ev}");
    assert_eq!(id["architecture_source"], "uname (recorded)", "{id}");
    let text = String::from_utf8(sc.ok(&["--sysroot", s(&root), "info"]).stdout).unwrap();
    assert!(text.contains("virtual machine (KVM)"), "{text}");
    // Forged facts: a terminal escape, an overlong machine name.
    let forged = serde_json::json!({"live": {"uname_machine": "x86_64\u{1b}[2J",
        "cpuid_hypervisor_vendor": "KVM\u{1b}]0;pwned\u{7}", "ctr_el0_lines": [3, 64]}});
    std::fs::write(root.join(MANIFEST), forged.to_string()).unwrap();
    let id = virt(&sc);
    assert!(id["virtualization"]["hypervisor"].is_null(), "{id}");
    assert_ne!(id["architecture_source"], "uname (recorded)", "{id}");
    let text = String::from_utf8(sc.ok(&["--sysroot", s(&root), "info"]).stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
}

fn mkfifo(p: &Path) {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[test]
fn the_manifest_lists_what_could_not_be_read() {
    let sc = Scratch::new();
    let root = sc.path("fake");
    let w = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let cpu = "sys/devices/system/cpu";
    w(&format!("{cpu}/online"), "0-1\n");
    w(&format!("{cpu}/possible"), "0-1\n");
    w(&format!("{cpu}/present"), "0-1\n");
    for c in 0..2 {
        w(&format!("{cpu}/cpu{c}/topology/core_id"), &format!("{c}\n"));
        w(&format!("{cpu}/cpu{c}/topology/physical_package_id"), "0\n");
        w(
            &format!("{cpu}/cpu{c}/topology/thread_siblings_list"),
            &format!("{c}\n"),
        );
    }
    w("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\n");
    // A FIFO, a file nobody may read, a write-only attribute, a link to a
    // device (out of the tree), a loop of links, a link out of the tree to
    // a regular file.
    mkfifo(&root.join(format!("{cpu}/cpu0/topology/die_id")));
    w(&format!("{cpu}/cpu1/topology/die_id"), "0\n");
    // (Not a file `info` reads: as root, `info` on the tree itself reads it.)
    let secret = root.join(format!("{cpu}/cpu1/secret"));
    std::fs::write(&secret, "0\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    w("sys/devices/system/node/node0/compact", "");
    std::fs::set_permissions(
        root.join("sys/devices/system/node/node0/compact"),
        std::fs::Permissions::from_mode(0o200),
    )
    .unwrap();
    w("sys/devices/system/node/node0/cpulist", "0-1\n");
    std::os::unix::fs::symlink("/dev/zero", root.join(format!("{cpu}/zero"))).unwrap();
    std::os::unix::fs::symlink("loop", root.join(format!("{cpu}/loop"))).unwrap();
    let outside = sc.path("outside.txt");
    std::fs::write(&outside, "0-1\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join(format!("{cpu}/isolated"))).unwrap();

    let archive = sc.path("fake.tar.gz");
    let o = sc.ok(&["--sysroot", s(&root), "record", s(&archive)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unreadable"), "{err}");
    let m = manifest(&archive);
    let why = |path: &str| -> String {
        m["unreadable"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["path"] == path)
            .unwrap_or_else(|| panic!("{path} not listed: {}", m["unreadable"]))["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(why(&format!("/{cpu}/cpu0/topology/die_id")).contains("FIFO"));
    assert!(why(&format!("/{cpu}/cpu1/secret")).contains("no read permission (mode 000)"));
    assert!(why("/sys/devices/system/node/node0/compact").contains("write-only (mode 200)"));
    assert!(why(&format!("/{cpu}/zero")).contains("out of the recorded tree (-> '/dev/zero')"));
    assert!(why(&format!("/{cpu}/loop")).contains("loop"));
    let files = m["files"].as_array().unwrap();
    // A link out of the tree is never followed: the reader refuses it, and
    // `record` copies nothing from outside the tree.
    assert!(
        why(&format!("/{cpu}/isolated")).contains("out of the recorded tree")
            && why(&format!("/{cpu}/isolated")).ends_with("not copied"),
        "{}",
        why(&format!("/{cpu}/isolated"))
    );
    assert!(
        !files.iter().any(|f| f == &format!("/{cpu}/isolated")),
        "{files:?}"
    );
    assert!(files.iter().any(|f| f == "/proc/cpuinfo"));

    // The archive reads back, and as the tree does.
    let want = info_under(&sc, s(&root));
    let got = info_under(&sc, s(&archive));
    assert_ne!(got["cpus"]["isolated"], "0-1");
    assert_eq!(got["cpus"]["isolated"], want["cpus"]["isolated"]);
    assert_same(
        &what_it_is(&want),
        &what_it_is(&got),
        "fake tree vs its archive",
    );
}

/// A raw tar entry: (name, type byte, link target, data).
type Raw<'a> = (&'a str, u8, &'a str, &'a str);

/// A gzip'd tar built from raw headers, as a hostile tool could write it.
fn raw_archive(path: &Path, entries: &[Raw]) {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for (name, kind, link, data) in entries {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_entry_type(tar::EntryType::new(*kind));
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        h.set_cksum();
        b.append(&h, data.as_bytes()).unwrap();
    }
    std::fs::write(path, b.into_inner().unwrap().finish().unwrap()).unwrap();
}

#[test]
fn hostile_archives_are_refused_with_one_line() {
    let sc = Scratch::new();
    let online = ("sys/devices/system/cpu/online", b'0', "", "0\n");
    let victim = sc.path("x");
    let cases: Vec<(Vec<Raw>, &str)> = vec![
        (vec![online, ("../x", b'0', "", "owned\n")], "'..'"),
        (vec![online, ("sys/../../x", b'0', "", "owned\n")], "'..'"),
        (
            vec![online, (s(&victim), b'0', "", "owned\n")],
            "absolute path",
        ),
        (vec![online, ("sys/l", b'2', "/etc", "")], "absolute path"),
        (vec![online, ("sys/l", b'2', "../../..", "")], "leads out"),
        (
            vec![
                online,
                ("sys/l", b'2', "..", ""),
                ("sys/l/x", b'0', "", "owned\n"),
            ],
            "not a directory",
        ),
        (
            vec![online, ("sys/h", b'1', "/etc/passwd", "")],
            "hard link",
        ),
        (vec![online, ("sys/d", b'3', "", "")], "character device"),
    ];
    for (i, (entries, want)) in cases.iter().enumerate() {
        let bad = sc.path(&format!("bad{i}.tar.gz"));
        raw_archive(&bad, entries);
        let e = one_line_error(&sc.run(&["--sysroot", s(&bad), "info"]));
        assert!(e.contains(want) && e.contains("refused"), "case {i}: {e}");
        assert!(!victim.exists(), "case {i} wrote outside");
    }
    // Not gzip, and gzip cut short.
    let junk = sc.path("junk.tar.gz");
    std::fs::write(&junk, "not an archive\n").unwrap();
    let e = one_line_error(&sc.run(&["--sysroot", s(&junk), "info"]));
    assert!(e.contains("not a gzip'd tar archive"), "{e}");
    let good = sc.path("good.tar.gz");
    sc.ok(&["record", s(&good)]);
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&junk, &bytes[..bytes.len() / 2]).unwrap();
    let e = one_line_error(&sc.run(&["--sysroot", s(&junk), "info"]));
    assert!(e.contains("not a readable tar.gz"), "{e}");
    // An archive without a CPU tree.
    raw_archive(&junk, &[("proc/cpuinfo", b'0', "", "processor : 0\n")]);
    let e = one_line_error(&sc.run(&["--sysroot", s(&junk), "info"]));
    assert!(e.contains("not a sysfs root"), "{e}");
    // Measuring commands refuse a recorded machine, archive or not.
    let e = one_line_error(&sc.run(&["--sysroot", s(&good), "sync"]));
    assert!(e.contains("only applies to `info`"), "{e}");
}

#[test]
fn record_refuses_a_bad_output_before_gathering() {
    let sc = Scratch::new();
    // A --sysroot that does not exist: the output is refused first.
    let nothing = sc.path("no-such-root");
    let target = sc.path("keep.txt");
    std::fs::write(&target, "keep").unwrap();
    let link = sc.path("link.tar.gz");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let refused = |out: &str, want: &str| {
        let e = one_line_error(&sc.run(&["--sysroot", s(&nothing), "record", out]));
        assert!(
            e.contains(want) && !e.contains("no-such-root"),
            "{out}: {e}"
        );
    };
    refused(s(&link), "symbolic link");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    refused(s(&sc.path("no/such/dir/x.tar.gz")), "No such file");
    refused("/dev/full", "character device");
    refused(s(sc.dir.path()), "directory");
    if unsafe { libc::geteuid() } != 0 {
        let ro = sc.path("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        refused(s(&ro.join("x.tar.gz")), "not writable");
    }
    // Then the sysroot is the error, once the output is fine.
    let e =
        one_line_error(&sc.run(&["--sysroot", s(&nothing), "record", s(&sc.path("ok.tar.gz"))]));
    assert!(e.contains("no-such-root"), "{e}");
    assert!(!sc.path("ok.tar.gz").exists());
    // Standard output, when it is not a terminal, takes the archive.
    let o = sc.ok(&["record", "-"]);
    assert_eq!(&o.stdout[..2], &[0x1f, 0x8b]);
}

//! The fault classes of docs/reliability.md that had no test of their own
//! (issue 34: "docs/reliability.md lists each fault class with the test
//! that covers it"): a read-only output file, `numa-maps` refused by the
//! kernel, a PostgreSQL statement that fails inside a write, a second
//! signal to a measuring command, the 16 MiB cap on one extracted file at
//! its boundary, JSON output as stored and HTML pages with control and
//! bidirectional characters. And the index at the top of
//! docs/reliability.md: every test it names exists.
//!
//! Tests that need root, a user namespace or a PostgreSQL server fail under
//! CI and print `SKIP:` elsewhere (tests/common/skip.rs). Every test that
//! uses a guarded store ends with [`Guarded::assert_intact`].

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/guard.rs"]
mod guard;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/skip.rs"]
mod skip;

use guard::Guarded;
use serde_json::{json, Value};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The uid and gid of `nobody`.
const NOBODY: u32 = 65534;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn text(o: &Output) -> String {
    pg::text(o)
}

/// The ids of the runs of a store, in `runs` order.
fn run_ids(store: &Path) -> Vec<String> {
    let o = bin::with_store(store, &["runs", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// `cpuscope ARGS…` as `nobody` (through setpriv) when the test runs as
/// root, else as the test's own user.
fn as_unprivileged(args: &[&str]) -> Output {
    let mut c = if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "--",
        ])
        .arg(bin::PATH);
        c
    } else {
        bin::command()
    };
    c.args(args)
        .env("XDG_DATA_HOME", "/nonexistent")
        .stdin(Stdio::null())
        .output()
        .expect("spawn cpuscope")
}

fn chown_tree(p: &Path, uid: u32) {
    std::os::unix::fs::chown(p, Some(uid), Some(uid)).unwrap();
    if p.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            chown_tree(&e.unwrap().path(), uid);
        }
    }
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".cpuscope-"))
        .collect()
}

// ------------------------------------------------------ writing files

#[test]
fn a_read_only_output_file_is_refused_and_left_as_it_was() {
    if is_root() && Command::new("setpriv").arg("--version").output().is_err() {
        skip::skip_or_fail("running as root and setpriv is missing (util-linux)");
        return;
    }
    // A guarded store in a directory the unprivileged user may use.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let g = Guarded::in_dir(dir);
    let owner = if is_root() {
        chown_tree(g.dir.path(), NOBODY);
        NOBODY
    } else {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    };
    let ids = run_ids(&g.store);
    let store = g.store.to_str().unwrap().to_string();
    let out = g.dir.path().join("ro.json");
    let html = g.dir.path().join("ro.html");
    for f in [&out, &html] {
        std::fs::write(f, "old\n").unwrap();
        std::os::unix::fs::chown(f, Some(owner), Some(owner)).unwrap();
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let (o_s, h_s) = (out.to_str().unwrap(), html.to_str().unwrap());
    for (args, shown) in [
        (vec!["--store", &store, "export", &ids[0], "-o", o_s], o_s),
        (
            vec![
                "--store", &store, "compare", &ids[0], &ids[1], "--html", h_s,
            ],
            h_s,
        ),
    ] {
        let o = as_unprivileged(&args);
        let e = cli::one_line_error(&o);
        assert!(
            e.contains(&format!(
                "cannot write '{shown}': it is read-only (mode 444)"
            )),
            "{e}"
        );
        assert_eq!(o.status.code(), Some(1), "{e}");
        let f = Path::new(shown);
        assert_eq!(std::fs::read(f).unwrap(), b"old\n", "{shown} changed");
        let md = std::fs::metadata(f).unwrap();
        assert_eq!(md.mode() & 0o7777, 0o444);
        assert_eq!(md.uid(), owner);
    }
    assert_eq!(temp_files(g.dir.path()), Vec::<String>::new());
    // A file of this user in a directory it may not write (as root the
    // test makes one, so that this is tried where CI runs).
    let locked = g.dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mine = locked.join("mine.json");
    std::fs::write(&mine, "old\n").unwrap();
    std::os::unix::fs::chown(&mine, Some(owner), Some(owner)).unwrap();
    let m_s = mine.to_str().unwrap();
    let o = as_unprivileged(&["--store", &store, "export", &ids[0], "-o", m_s]);
    let e = cli::one_line_error(&o);
    assert!(
        e.contains(&format!(
            "cannot write '{m_s}': directory '{}' is not writable",
            locked.display()
        )),
        "{e}"
    );
    assert_eq!(std::fs::read(&mine).unwrap(), b"old\n");
    // The refusal is the mode's: the same file made writable is written.
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = as_unprivileged(&["--store", &store, "export", &ids[0], "-o", o_s]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["id"], ids[0].as_str());
    g.assert_intact();
}

// ------------------------------------------------------ bad command lines

#[test]
fn numa_maps_refused_by_the_kernel_says_why() {
    // Another user's process, not root: the reason says how to get in.
    let o = as_unprivileged(&["numa-maps", "1"]);
    let e = cli::one_line_error(&o);
    assert!(
        e.contains(
            "cannot read /proc/1/numa_maps: permission denied (another user's process: \
             run as root or with CAP_SYS_PTRACE)"
        ),
        "{e}"
    );
    // Root in a user namespace of its own (as in a container): the kernel
    // refuses root, and the reason says so instead of "run as root".
    let probe = Command::new("unshare")
        .args(["--user", "--map-root-user", "true"])
        .output();
    if !probe.is_ok_and(|p| p.status.success()) {
        skip::skip_or_fail("unshare --user --map-root-user does not work here");
        return;
    }
    let o = Command::new("unshare")
        .args(["--user", "--map-root-user", bin::PATH, "numa-maps", "1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let e = cli::one_line_error(&o);
    assert!(
        e.contains(
            "cannot read /proc/1/numa_maps: permission denied even to root (the kernel or a \
             security module refuses: a container's namespace, Yama, SELinux or AppArmor)"
        ),
        "{e}"
    );
    assert!(!e.contains("run as root"), "{e}");
}

// ------------------------------------------------------ PostgreSQL

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

const VM_RUN: &str = "tests/fixtures/runs/vm-2cpu-quick.json";
const LAB_RUN: &str = "tests/fixtures/runs/lab-2s2c2t-quick.json";
const VM_ID: &str = "20261125T124517Z-vm-a8a4";
const LAB_ID: &str = "20261125T114200Z--none--1544";

fn fixture_path(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

fn pg_import(url: &str, data: &Path, files: &[String]) -> (Output, Duration) {
    let t0 = Instant::now();
    let o = bin::command()
        .arg("--store")
        .arg(url)
        .arg("import")
        .args(files)
        .env("XDG_DATA_HOME", data)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (o, t0.elapsed())
}

fn pg_count(h: &mut postgres::Client, sql: &str) -> i64 {
    h.query_one(sql, &[]).unwrap().get(0)
}

#[test]
fn a_failing_statement_in_a_write_rolls_back_and_says_the_first_error() {
    let srv = server_or_skip!();
    let data = tempfile::tempdir().unwrap();
    cpuscope::results::postgres::PgStore::open(&srv.url).unwrap(); // the tables
    let mut h = postgres::Client::connect(&srv.url, postgres::NoTls).unwrap();
    // A rule of the store: the second run of the import is refused by a
    // trigger, after the first run and its 184 results were inserted in
    // the same transaction.
    h.batch_execute(&format!(
        "CREATE FUNCTION no_lab() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           IF NEW.id = '{LAB_ID}' THEN RAISE EXCEPTION 'cpuscope-test: this store takes no lab runs'; END IF; \
           RETURN NEW; END $$; \
         CREATE TRIGGER no_lab BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION no_lab()"
    ))
    .unwrap();
    let files = [fixture_path(VM_RUN), fixture_path(LAB_RUN)];
    let (o, took) = pg_import(&srv.url, data.path(), &files);
    let e = cli::one_line_error(&o);
    assert!(
        e.contains("cpuscope-test: this store takes no lab runs"),
        "not the first error: {e}"
    );
    assert!(e.contains("store 'postgres://cpuscope@127.0.0.1:"), "{e}");
    // The first error, not what a statement after it would have said.
    assert!(!e.contains("current transaction is aborted"), "{e}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    // Rolled back: nothing of either run is stored.
    assert_eq!(pg_count(&mut h, "SELECT count(*) FROM runs"), 0);
    assert_eq!(pg_count(&mut h, "SELECT count(*) FROM results"), 0);

    // An SQL error in the results of the only run: a CHECK constraint.
    h.batch_execute("DROP TRIGGER no_lab ON runs; ALTER TABLE results ADD CONSTRAINT no_ghz CHECK (unit <> 'GHz')")
        .unwrap();
    let (o, took) = pg_import(&srv.url, data.path(), &files[..1]);
    let e = cli::one_line_error(&o);
    assert!(
        e.contains("no_ghz") && e.contains("check constraint"),
        "not the first error: {e}"
    );
    assert!(!e.contains("current transaction is aborted"), "{e}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(pg_count(&mut h, "SELECT count(*) FROM runs"), 0);
    // No session of cpuscope is left in a transaction (or at all).
    let t0 = Instant::now();
    while pg_count(
        &mut h,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cpuscope'",
    ) > 0
    {
        assert!(t0.elapsed() < Duration::from_secs(3), "a session is left");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The store works once the rule is gone: both runs, whole.
    h.batch_execute("ALTER TABLE results DROP CONSTRAINT no_ghz")
        .unwrap();
    let (o, _) = pg_import(&srv.url, data.path(), &files);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(pg_count(&mut h, "SELECT count(*) FROM runs"), 2);
    let vm = bin::command()
        .args(["--store", &srv.url, "export", VM_ID])
        .env("XDG_DATA_HOME", data.path())
        .output()
        .unwrap();
    assert!(vm.status.success(), "{}", text(&vm));
    let doc: Value = serde_json::from_slice(&vm.stdout).unwrap();
    assert_eq!(doc["results"].as_array().unwrap().len(), 184);
}

// ------------------------------------------------------ stopping when asked

#[test]
fn a_second_signal_ends_a_run_at_once_with_130_and_the_store_intact() {
    let g = Guarded::new();
    let before = run_ids(&g.store);
    let mut child = bin::command()
        .arg("--store")
        .arg(&g.store)
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "softirq,sync,seed_loops",
            "--no-html",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the run's first stored result: it is measuring then.
    let t0 = Instant::now();
    let id = loop {
        let o = bin::with_store(&g.store, &["runs", "--json"]);
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap_or(json!({}));
        let found = doc["runs"].as_array().and_then(|runs| {
            runs.iter()
                .find(|r| {
                    !before.iter().any(|b| r["id"] == b.as_str())
                        && r["results"].as_u64() >= Some(1)
                })
                .map(|r| r["id"].as_str().unwrap().to_string())
        });
        if let Some(id) = found {
            break id;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no result stored in 120 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before it was signalled: pick a longer experiment"
    );
    let pid = child.id() as i32;
    // Two signals 0.2 s apart (sent together, the kernel would merge them
    // into one): the first asks the run to stop, the second ends it.
    // SAFETY: our own child, still running (checked above).
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(200));
    let t1 = Instant::now();
    // SAFETY: as above (a zombie at worst: not reaped before the wait).
    unsafe { libc::kill(pid, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let took = t1.elapsed();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
    // The store is whole: the earlier runs unchanged, the new one readable
    // with what it had stored, and never `complete`.
    g.assert_intact();
    let o = bin::with_store(&g.store, &["show", &id, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(doc["status"], "complete", "{}", doc["status"]);
    assert!(!doc["results"].as_array().unwrap().is_empty());
}

// ------------------------------------------------------ archives

/// A gzip'd tar holding a minimal sysfs tree and `sys/big` of `size` zero bytes.
fn archive_with_a_file_of(path: &Path, size: u64) {
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::fast(),
    );
    let mut b = tar::Builder::new(gz);
    let mut add = |name: &str, len: u64, data: &mut dyn std::io::Read| {
        let mut h = tar::Header::new_gnu();
        h.set_size(len);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        b.append_data(&mut h, name, data).unwrap();
    };
    add(
        "sys/devices/system/cpu/online",
        4,
        &mut std::io::Cursor::new(b"0-1\n"),
    );
    add(
        "sys/big",
        size,
        &mut std::io::Read::take(std::io::repeat(0), size),
    );
    b.into_inner().unwrap().finish().unwrap();
}

#[test]
fn an_extracted_file_over_16_mib_is_refused_and_one_of_16_mib_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let over = dir.path().join("over.tar.gz");
    archive_with_a_file_of(&over, (16 << 20) + 1);
    let o = bin::command()
        .args(["--sysroot", over.to_str().unwrap(), "info"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let e = cli::one_line_error(&o);
    assert!(
        e.contains(
            "entry 'sys/big' holds 16777217 bytes, more than a sysfs/procfs file (16 MiB): refused"
        ),
        "{e}"
    );
    assert_eq!(o.status.code(), Some(1), "{e}");
    // The private directory is removed on the refusal.
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    // At the cap itself the file is taken: whatever `info` says of this
    // small tree, it is not the size.
    let at = dir.path().join("at.tar.gz");
    archive_with_a_file_of(&at, 16 << 20);
    let o = bin::command()
        .args(["--sysroot", at.to_str().unwrap(), "info"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(
        !text(&o).contains("more than a sysfs/procfs file"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

// ------------------------------------------------------ strings from outside

/// The bidirectional formatting characters ("Trojan Source").
const BIDI: &[char] = &[
    '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
];

const HOST: &str = "vm\r\x1b[2K\u{202e}tsoh<script>";
const MODEL: &str = "Evil\x1b[31m CPU\u{9b}2J \u{202e}kcatta\u{202c}\u{2066}i\u{2069} 海光";
const NOTE: &str = "\x1b]0;title\x07 note\x00? \u{202b}rtl\u{200f}\u{061c} \x7f <b>bold</b>";
const TAG: &str = "t\x1b[1m\n\u{202e}gat";

fn fixture(rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture_path(rel)).unwrap()).unwrap()
}

/// The vm fixture with control characters and bidi overrides in the
/// strings `import` takes (the CPU model, notes, a reason).
fn hostile_but_importable(id: &str) -> Value {
    let mut d = fixture(VM_RUN);
    d["id"] = json!(id);
    d["machine"]["identity"]["model_name"] = json!(MODEL);
    let note = NOTE.replace('\x00', "");
    d["environment"]["notes"]
        .as_array_mut()
        .unwrap()
        .push(json!(note));
    let results = d["results"].as_array_mut().unwrap();
    results[0]["notes"]
        .as_array_mut()
        .unwrap()
        .push(json!(note));
    let gone = results.iter_mut().find(|r| r["value"].is_null()).unwrap();
    gone["unavailable_reason"] = json!(format!("{MODEL}\n{note}"));
    d
}

/// No raw control character but the line break: what JSON escapes.
fn assert_no_raw_c0(what: &str, bytes: &[u8]) {
    if let Some(b) = bytes.iter().find(|&&b| b < 0x20 && b != b'\n') {
        panic!("{what}: a raw control byte {b:#04x} in the output");
    }
}

const HOSTILE_ID: &str = "20261126T010203Z-hostile-0001";
const OLD_ID: &str = "20261126T020304Z-old-0002";

#[test]
fn json_output_is_the_document_as_stored_with_its_hostile_strings() {
    let g = Guarded::new();
    let doc = hostile_but_importable(HOSTILE_ID);
    let file = g.dir.path().join("hostile.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let o = g.run(&["import", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    for args in [
        vec!["export", HOSTILE_ID],
        vec!["show", HOSTILE_ID, "--json"],
    ] {
        let what = args.join(" ");
        let o = g.run(&args);
        assert!(o.status.success(), "{what}: {}", text(&o));
        assert_no_raw_c0(&what, &o.stdout);
        let raw = String::from_utf8(o.stdout.clone()).unwrap();
        assert!(raw.contains(r"Evil\u001b[31m CPU"), "{what}: {raw}");
        let got: Value = serde_json::from_slice(&o.stdout).unwrap();
        // Every hostile string exactly as it was given, bidi and all.
        for ptr in [
            "/machine/identity/model_name",
            "/results/0/notes",
            "/environment/notes",
        ] {
            assert_eq!(got.pointer(ptr), doc.pointer(ptr), "{what}: {ptr}");
        }
        let reason = |d: &Value| {
            d["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["value"].is_null())
                .map(|r| r["unavailable_reason"].clone())
        };
        assert_eq!(reason(&got), reason(&doc), "{what}");
    }
    // Export → import into a fresh store → export: the same bytes.
    let first = g.run(&["export", HOSTILE_ID]).stdout;
    let again = tempfile::tempdir().unwrap();
    let s2 = again.path().join("s2.db");
    let f2 = again.path().join("x.json");
    std::fs::write(&f2, &first).unwrap();
    let o = bin::with_store(&s2, &["import", f2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(bin::with_store(&s2, &["export", HOSTILE_ID]).stdout == first);

    // A host and a tag `import` refuses, in a store an older cpuscope wrote:
    // `show --json` gives them exactly, escaped as JSON; `export` refuses
    // them with import's reason, on one line.
    store_directly(&g.store, &old_hostile(OLD_ID));
    let o = g.run(&["show", OLD_ID, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_no_raw_c0("show --json", &o.stdout);
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got["host"], HOST);
    assert_eq!(got["tags"], json!([TAG, "plain"]));
    let e = cli::one_line_error(&g.run(&["export", OLD_ID]));
    assert!(e.contains("that `run` refuses"), "{e}");
    assert!(!e.as_bytes().contains(&0x1b), "{e}");
    g.assert_intact();
}

/// A run with a hostile host, tag and CPU model, as an older cpuscope's
/// `import` stored it (today's refuses the host and the tag).
fn old_hostile(id: &str) -> Value {
    let mut d = hostile_but_importable(id);
    d["host"] = json!(HOST);
    d["tags"] = json!([TAG, "plain"]);
    d
}

fn store_directly(store: &Path, doc: &Value) {
    use cpuscope::results::store::Store as _;
    let run: cpuscope::results::Run = serde_json::from_value(doc.clone()).unwrap();
    cpuscope::results::sqlite::SqliteStore::open(store)
        .and_then(|mut s| s.put_runs(&[run]))
        .expect("store the hostile run");
}

/// No control character but the line break and the tab, and no
/// bidirectional override, isolate or mark.
fn assert_html_safe(what: &str, page: &str) {
    for (i, line) in page.lines().enumerate() {
        if let Some(c) = line
            .chars()
            .find(|c| (c.is_control() && *c != '\t') || BIDI.contains(c))
        {
            panic!("{what}: line {} holds {c:?}: {line:?}", i + 1);
        }
    }
}

#[test]
fn html_pages_show_control_and_bidi_characters_escaped() {
    // The function every page escapes its strings with.
    assert_eq!(
        cpuscope::base::html::esc("a\x1b[31m\u{202e}b\u{9b}\r\n\t<&>\"'\u{2069}\x7f海"),
        "a\\x1b[31m\\u{202e}b\\u{9b}\\r\n\t&lt;&amp;&gt;&quot;&#39;\\u{2069}\\x7f海"
    );
    let g = Guarded::new();
    store_directly(&g.store, &old_hostile(OLD_ID));
    let mut lab = fixture(LAB_RUN);
    lab["id"] = json!(HOSTILE_ID);
    lab["host"] = json!(format!("lab{}", HOST));
    store_directly(&g.store, &lab);
    let dir = g.dir.path();
    let (cmp, fleet) = (dir.join("cmp.html"), dir.join("fleet.html"));
    for args in [
        vec![
            "compare",
            OLD_ID,
            HOSTILE_ID,
            "--html",
            cmp.to_str().unwrap(),
        ],
        vec!["fleet", "--html", fleet.to_str().unwrap()],
    ] {
        let o = g.run(&args);
        assert!(o.status.success(), "{}: {}", args.join(" "), text(&o));
    }
    let run: cpuscope::results::Run = serde_json::from_value(old_hostile(OLD_ID)).unwrap();
    for (what, page) in [
        ("compare --html", std::fs::read_to_string(&cmp).unwrap()),
        ("fleet --html", std::fs::read_to_string(&fleet).unwrap()),
        ("the run's report", cpuscope::report::html::render_run(&run)),
    ] {
        assert_html_safe(what, &page);
        // The host, escaped: visible, in the order it is stored.
        assert!(
            page.contains("vm\\r\\x1b[2K\\u{202e}tsoh&lt;script&gt;"),
            "{what} lacks the escaped host"
        );
        assert!(!page.contains("<script>"), "{what}");
    }
    let report = cpuscope::report::html::render_run(&run);
    for want in [
        "Evil\\x1b[31m CPU\\u{9b}2J \\u{202e}kcatta\\u{202c}\\u{2066}i\\u{2069} 海光",
        "\\x1b]0;title\\x07 note? \\u{202b}rtl\\u{200f}\\u{61c} \\x7f &lt;b&gt;bold&lt;/b&gt;",
    ] {
        assert!(report.contains(want), "the run's report lacks {want:?}");
    }
    g.assert_intact();
}

// ------------------------------------------------------ the index

/// The lines of docs/reliability.md's index section.
fn index_section(doc: &str) -> Vec<&str> {
    let start = doc
        .find("\n## Index: each fault class and its test\n")
        .expect("docs/reliability.md has the index section");
    let body = &doc[start + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |e| e + 3);
    body[..end].lines().collect()
}

/// Every `` `tests/FILE.rs NAME` `` or `` `src/…rs NAME` `` in `text`.
fn named_tests(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for span in text.split('`').skip(1).step_by(2) {
        let mut parts = span.split(' ');
        let (Some(file), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let is_name =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if (file.starts_with("tests/") || file.starts_with("src/"))
            && file.ends_with(".rs")
            && is_name
        {
            out.push((file.to_string(), name.to_string()));
        }
    }
    out
}

#[test]
fn the_reliability_index_names_tests_that_exist() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/reliability.md")).unwrap();
    let index = index_section(&doc);
    // One line per fault class, each naming at least one test.
    let mut lines = 0;
    for line in index.iter().filter(|l| l.starts_with("- ")) {
        lines += 1;
        assert!(
            !named_tests(line).is_empty(),
            "an index line names no test: {line}"
        );
    }
    assert!(lines >= 80, "the index has {lines} fault classes");
    // Every test the whole document names, the index included.
    let mut missing = Vec::new();
    let all = named_tests(&doc);
    assert!(all.len() >= 150, "{} tests named", all.len());
    for (file, name) in all {
        // A module's unit tests may sit beside it: `X.rs` -> `X/tests.rs`,
        // `X/mod.rs` -> `X/tests.rs`.
        let beside = match file.strip_suffix("/mod.rs") {
            Some(dir) => format!("{dir}/tests.rs"),
            None => format!("{}/tests.rs", file.trim_end_matches(".rs")),
        };
        if !root.join(&file).exists() {
            missing.push(format!("{file} (no such file) {name}"));
            continue;
        }
        let src = [file.as_str(), beside.as_str()]
            .iter()
            .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_default())
            .collect::<String>();
        if !src.contains(&format!("fn {name}(")) {
            missing.push(format!("{file} {name}"));
        }
    }
    assert!(missing.is_empty(), "named but not found: {missing:#?}");
}

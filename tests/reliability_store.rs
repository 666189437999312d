//! The SQLite store under the conditions real stores meet: read by commands
//! that must change nothing, on read-only media and by other users, with a
//! damaged row, with runs imported from the future, at an older table
//! layout, and written by a process that was killed. Every test that uses
//! a guarded store (tests/common/guard.rs) ends with `assert_intact`.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/guard.rs"]
mod guard;
#[path = "common/skip.rs"]
mod skip;

use cpuscope::results::schema::{now_rfc3339, Load};
use cpuscope::results::sqlite::SqliteStore;
use cpuscope::results::{Environment, ResultRecord, Run, RunStatus, Store};
use guard::{cpuscope, Guarded, FIXTURE_RUNS};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = bin::PATH;
const NO_STORE: &str = "(nothing has been stored yet: run `cpuscope run` first)";

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    stdout(o)
}

/// A one-line `cpuscope: error:` failure that contains `want`.
fn fails_with(o: &Output, want: &str) -> String {
    let e = cli::one_line_error(o);
    assert!(e.contains(want), "{e:?} lacks {want:?}");
    e
}

/// Every entry under `dir`, recursively, as sorted relative paths.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Ids of the runs `runs --json` lists.
fn listed(g: &Guarded) -> Vec<String> {
    let doc: Value = serde_json::from_str(&ok(&g.run(&["runs", "--json"]))).unwrap();
    doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// The id `show RUN --json` resolves `which` to.
fn shown_id(g: &Guarded, which: &str) -> String {
    let doc: Value = serde_json::from_str(&ok(&g.run(&["show", which, "--json"]))).unwrap();
    doc["id"].as_str().unwrap().to_string()
}

/// A fixture run document with another id, host, start time and tags,
/// written into `dir`; returns its path.
fn variant(dir: &Path, id: &str, host: &str, started_at: &str, tags: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(FIXTURE_RUNS[0])).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["id"] = json!(id);
    v["host"] = json!(host);
    v["started_at"] = json!(started_at);
    v["finished_at"] = json!(started_at);
    v["tags"] = json!(tags);
    let p = dir.join(format!("{id}.json"));
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    p
}

fn machine() -> Value {
    json!({"schema": "cpuscope.info/1", "identity": {"model_name": "Test CPU 9000"}})
}

fn env() -> Environment {
    Environment {
        load_start: Some(Load::parse("0.1 0.2 0.3 1/100 42", &now_rfc3339())),
        kernel: Some("6.1.0-test".into()),
        ..Environment::default()
    }
}

fn record(i: usize) -> ResultRecord {
    ResultRecord::new("loop", "loop", "ns", false)
        .with_param("i", i)
        .with_samples(vec![i as f64 + 0.1, i as f64 + 0.3])
}

/// Write a run into `store` as `cpuscope run` does: begin, `n` results, and
/// (unless `status` is None) finish. Returns its id.
fn write_run(store: &Path, host: &str, n: usize, status: Option<RunStatus>) -> String {
    let mut s = SqliteStore::open(store).unwrap();
    let run = Run::new(
        host,
        "quick",
        machine(),
        env(),
        json!({}),
        vec!["t1".into()],
    );
    s.begin_run(&run).unwrap();
    for i in 0..n {
        s.add_result(&run.id, &record(i)).unwrap();
    }
    if let Some(st) = status {
        s.finish_run(&run.id, st, &now_rfc3339(), &env()).unwrap();
    }
    run.id
}

// ---- a writer that is killed ----------------------------------------------
//
// `child_process` does nothing unless CPUSCOPE_RELIABILITY_CHILD is set: the
// tests below run this test binary again as a writer and SIGKILL it.

#[test]
fn child_process() {
    let Ok(mode) = std::env::var("CPUSCOPE_RELIABILITY_CHILD") else {
        return;
    };
    let store = PathBuf::from(std::env::var("CPUSCOPE_RELIABILITY_STORE").unwrap());
    let mut s = SqliteStore::open(&store).unwrap();
    let id = match mode.as_str() {
        // A run begun, two results added, never finished.
        "begin" => {
            let run = Run::new("killed", "quick", machine(), env(), json!({}), vec![]);
            s.begin_run(&run).unwrap();
            s.add_result(&run.id, &record(0)).unwrap();
            s.add_result(&run.id, &record(1)).unwrap();
            run.id
        }
        // A whole run stored, and the process killed before it closes the
        // store: the run is only in the write-ahead log.
        doc => {
            let run = cpuscope::results::parse_run(&std::fs::read_to_string(doc).unwrap()).unwrap();
            s.put_run(&run).unwrap();
            run.id
        }
    };
    // The test harness has printed "test child_process ... " without a newline.
    println!("\nready {id}");
    std::thread::sleep(std::time::Duration::from_secs(600));
}

/// Run `child_process` in `mode` on `store` until it is ready, SIGKILL it;
/// returns the id of its run.
fn killed_writer(store: &Path, mode: &str) -> String {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CPUSCOPE_RELIABILITY_CHILD", mode)
        .env("CPUSCOPE_RELIABILITY_STORE", store)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the writer");
    let out = child.stdout.take().unwrap();
    let mut id = None;
    for line in BufReader::new(out).lines() {
        if let Some(r) = line.unwrap().strip_prefix("ready ") {
            id = Some(r.to_string());
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    assert!(!child.wait().unwrap().success());
    id.expect("the writer said it was ready")
}

// ---- reading commands create nothing ----------------------------------------

#[test]
fn reading_commands_create_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let note = format!(
        "cpuscope: note: no store at '{}' {NO_STORE}\n",
        db.display()
    );
    // `runs`: an empty list, and the note.
    let o = cpuscope(&db, &["runs"]);
    assert!(ok(&o).starts_with("no runs in store"), "{}", stdout(&o));
    assert_eq!(stderr(&o), note);
    let o = cpuscope(&db, &["runs", "--json"]);
    let doc: Value = serde_json::from_str(&ok(&o)).unwrap();
    assert_eq!(doc["runs"], json!([]));
    assert_eq!(stderr(&o), note);
    // Every other reader: one line saying there is no store.
    let file = dir.path().join("x.json");
    for args in [
        &["show", "latest"][..],
        &["show", "20261125"],
        &["export", "latest"],
        &["export", "latest", "-o", file.to_str().unwrap()],
        &["compare", "latest", "20261125"],
        &["compare", "--tag", "x"],
        &["fleet"],
    ] {
        let o = cpuscope(&db, args);
        fails_with(&o, &format!("no store at '{}' {NO_STORE}", db.display()));
    }
    // A --store in a directory that is not there is named as such.
    let o = cpuscope(&dir.path().join("no/such/x.db"), &["runs"]);
    fails_with(&o, "does not exist");
    // The default store: not created, nor its directories.
    for args in [&["runs"][..], &["fleet"], &["show", "latest"]] {
        let o = Command::new(BIN)
            .args(args)
            .env("XDG_DATA_HOME", dir.path().join("xdg"))
            .env("HOME", dir.path().join("home"))
            .output()
            .unwrap();
        assert!(stderr(&o).contains("xdg/cpuscope/runs.db' (nothing has been stored yet"));
    }
    assert_eq!(
        tree(dir.path()),
        Vec::<String>::new(),
        "a reader created files"
    );
}

#[test]
fn reading_a_store_changes_nothing_in_it() {
    let g = Guarded::new();
    let before = std::fs::read(&g.store).unwrap();
    let ids = listed(&g);
    for args in [
        &["runs"][..],
        &["show", "latest"],
        &["show", &ids[0], "--all"],
        &["export", &ids[1]],
        &["compare", &ids[0], &ids[1]],
        &["fleet"],
    ] {
        ok(&g.run(args));
    }
    // SQLite's own -wal and -shm may be left beside a WAL store by a reader
    // (as the sqlite3 shell leaves them); the store itself is the same bytes.
    assert_eq!(std::fs::read(&g.store).unwrap(), before);
    for f in tree(g.dir.path()) {
        assert!(
            ["runs.db", "runs.db-wal", "runs.db-shm"].contains(&f.as_str()),
            "{f}"
        );
    }
    g.assert_intact();
}

#[test]
fn a_relative_xdg_data_home_is_ignored_with_one_note() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // `export -o` finds the default store twice (to keep the output off
    // it, then to read it): the note is given once.
    let o = Command::new(BIN)
        .args(["export", "latest", "-o", "out.json"])
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", "rel/data")
        .env("HOME", &home)
        .output()
        .unwrap();
    let err = stderr(&o);
    let want = "cpuscope: note: XDG_DATA_HOME='rel/data' is relative; the XDG spec says to \
                ignore it: using ~/.local/share\n";
    assert_eq!(err.matches(want).count(), 1, "{err}");
    let store = home.join(".local/share/cpuscope/runs.db");
    assert!(
        err.contains(&format!("no store at '{}'", store.display())),
        "{err}"
    );
    assert!(!dir.path().join("rel").exists());
    // An absolute XDG_DATA_HOME is used, without a note.
    let o = Command::new(BIN)
        .arg("runs")
        .env("XDG_DATA_HOME", dir.path().join("abs"))
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("XDG_DATA_HOME"), "{}", stderr(&o));
    assert!(stderr(&o).contains("abs/cpuscope/runs.db"));
}

#[test]
fn a_libpq_connection_string_is_refused_not_made_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join(FIXTURE_RUNS[0]).display().to_string();
    for spec in [
        "host=db.example user=cpuscope password=hunter2 dbname=fleet",
        "dbname=fleet password='hunter2 x'",
    ] {
        for args in [
            &["runs"][..],
            &["show", "latest"],
            &["export", "latest"],
            &["import", &fixture],
            &["delete", "latest"],
            &["fleet"],
        ] {
            let o = Command::new(BIN)
                .arg("--store")
                .arg(spec)
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            let e = fails_with(
                &o,
                "'--store' looks like a PostgreSQL key=value connection string",
            );
            assert!(e.contains("give a postgres://… URL"), "{e}");
            assert!(e.contains("password=***"), "{e}");
            assert!(!e.contains("hunter2"), "the password was shown: {e}");
        }
    }
    assert_eq!(tree(dir.path()), Vec::<String>::new());
}

#[test]
fn a_store_path_that_is_not_utf8_is_a_one_line_error() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let mut p = dir.path().as_os_str().to_os_string();
    p.push(std::ffi::OsStr::from_bytes(b"/runs-\xff.db"));
    for args in [&["runs"][..], &["import", "x.json"], &["show", "latest"]] {
        let o = cpuscope(Path::new(&p), args);
        let e = fails_with(&o, "is not valid UTF-8");
        assert!(e.contains("--store") && e.contains("\\xFF"), "{e}");
        assert_eq!(o.status.code(), Some(2));
    }
    assert_eq!(tree(dir.path()), Vec::<String>::new());
}

#[test]
fn a_store_path_with_uri_characters_is_read() {
    // `?`, `#`, `%` and `=` mean something in a SQLite URI filename.
    let dir = tempfile::Builder::new()
        .prefix("odd ?#%&=x ")
        .tempdir()
        .unwrap();
    let g = Guarded::in_dir(dir);
    assert_eq!(listed(&g).len(), 2);
    ok(&g.run(&["show", "latest", "--summary"]));
    g.assert_intact();
}

// ---- read-only stores --------------------------------------------------------

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A tmpfs mounted on a directory, unmounted (and the directory removed)
/// when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path) -> Option<Tmpfs> {
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64m,mode=0755", "cpuscope-test"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .ok()?;
        st.success().then(|| Tmpfs(dir.to_path_buf()))
    }

    fn remount(&self, how: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{how}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(st.success(), "remount {how}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Close the store as its last writer does: the write-ahead log is copied
/// into the file and removed, with its index (readers leave them behind).
fn settle(store: &Path) {
    let c = rusqlite::Connection::open(store).unwrap();
    let _: i64 = c
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    drop(c);
    for suffix in ["-wal", "-shm"] {
        let mut p = store.as_os_str().to_os_string();
        p.push(suffix);
        assert!(
            !Path::new(&p).exists(),
            "{} is left",
            Path::new(&p).display()
        );
    }
}

/// Each fixture run's export, by id.
fn exports(g: &Guarded, ids: &[String]) -> Vec<Vec<u8>> {
    ids.iter()
        .map(|id| {
            let o = g.run(&["export", id]);
            assert!(o.status.success(), "export {id}: {}", stderr(&o));
            o.stdout
        })
        .collect()
}

/// What every reader must manage on a store it may not write beside:
/// list `want` (ids), show the latest and export each as before.
fn reads_fully(run: &dyn Fn(&[&str]) -> Output, want: &[String], before: &[Vec<u8>]) {
    let o = run(&["runs", "--json"]);
    assert!(o.status.success(), "runs: {}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), want.len(), "{ids:?}");
    for id in want {
        assert!(ids.contains(&id.as_str()), "{id} not listed: {ids:?}");
    }
    let o = run(&["show", "latest", "--summary"]);
    assert!(o.status.success(), "show: {}", stderr(&o));
    for (id, b) in want.iter().zip(before) {
        let o = run(&["export", id]);
        assert!(o.status.success(), "export {id}: {}", stderr(&o));
        assert!(o.stdout == *b, "export {id} differs");
    }
    let o = run(&["fleet"]);
    assert!(o.status.success(), "fleet: {}", stderr(&o));
}

#[test]
fn a_store_on_a_read_only_mount_is_read() {
    if !is_root() {
        return chmod_read_only_store(None);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let Some(mnt) = Tmpfs::mount(&path) else {
        // No mount here (a container without CAP_SYS_ADMIN): the store
        // made read-only by its modes, read as `nobody`, whom they bind.
        eprintln!("note: mount -t tmpfs failed: reading a chmod-ed store as nobody instead");
        return chmod_read_only_store(Some(NOBODY));
    };
    let g = Guarded::in_dir(dir);
    let ids = listed(&g);
    let before = exports(&g, &ids);
    settle(&g.store);
    let files = tree(&path);
    let run = |args: &[&str]| g.run(args);

    // A store closed cleanly: no write-ahead log; SQLite cannot make its
    // index (-shm) on a read-only filesystem.
    mnt.remount("ro");
    reads_fully(&run, &ids, &before);
    assert_eq!(tree(&path), files);
    mnt.remount("rw");

    // A writer killed after it stored a run: that run is only in the
    // write-ahead log, and without its index.
    let third = variant(
        &std::env::temp_dir(),
        &format!("20261126T000000Z-walonly-{}", std::process::id()),
        "walonly",
        "2026-11-26T00:00:00Z",
        &[],
    );
    let id = killed_writer(&g.store, third.to_str().unwrap());
    std::fs::remove_file(&third).unwrap();
    let _ = std::fs::remove_file(path.join("runs.db-shm"));
    assert!(std::fs::metadata(path.join("runs.db-wal")).unwrap().len() > 0);
    let files = tree(&path);
    mnt.remount("ro");
    let mut want = ids.clone();
    want.push(id.clone());
    reads_fully(&run, &want, &before);
    assert_eq!(shown_id(&g, "latest"), id);
    assert_eq!(tree(&path), files);
    // A writer is refused on one line.
    let o = g.run(&["delete", &id]);
    cli::one_line_error(&o);
    mnt.remount("rw");

    // A log that cannot be read at all: the file is read as it is, and a
    // warning says what is not seen, and why.
    settle(&g.store);
    let wal = path.join("runs.db-wal");
    std::fs::create_dir(&wal).unwrap();
    std::fs::write(wal.join("x"), "x").unwrap();
    mnt.remount("ro");
    let o = g.run(&["runs"]);
    assert!(ok(&o).contains(&id));
    assert_eq!(
        stderr(&o),
        format!(
            "cpuscope: warning: store '{}' is read without its write-ahead log '{}' ('{}' is \
             not a file): runs stored since the log was last copied into the file are not seen\n",
            g.store.display(),
            wal.display(),
            wal.display()
        )
    );
    mnt.remount("rw");
    std::fs::remove_dir_all(&wal).unwrap();
    g.assert_intact();
    drop(g);
    drop(mnt);
}

#[test]
fn another_users_store_is_read() {
    if !is_root() {
        return chmod_read_only_store(None);
    }
    if !can_run_as_nobody() {
        return;
    }
    // Root plays the owner; `nobody` reads a store in a directory it may
    // not write to (no -shm can be made there).
    let g = Guarded::new();
    let ids = listed(&g);
    let before = exports(&g, &ids);
    let dir = g.dir.path().to_path_buf();
    let mode = |p: &Path, m: u32| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    settle(&g.store);
    mode(&dir, 0o755);
    mode(&g.store, 0o644);
    let as_nobody = |args: &[&str]| {
        Command::new(nobody_bin())
            .arg("--store")
            .arg(&g.store)
            .args(args)
            .uid(NOBODY)
            .gid(NOBODY)
            .env("HOME", "/nonexistent")
            .output()
            .expect("spawn cpuscope as nobody")
    };
    let files = tree(&dir);
    reads_fully(&as_nobody, &ids, &before);
    assert_eq!(
        tree(&dir),
        files,
        "a reader made files in another user's directory"
    );
    // A store this user may not read at all: the system's reason.
    mode(&g.store, 0o600);
    let o = as_nobody(&["runs"]);
    fails_with(
        &o,
        &format!(
            "cannot read store '{}': Permission denied",
            g.store.display()
        ),
    );
    mode(&g.store, 0o644);
    mode(&dir, 0o700);
    g.assert_intact();
    // The store and its directory read-only by their modes, as nobody.
    chmod_read_only_store(Some(NOBODY));
}

/// The uid (and gid) of `nobody`.
const NOBODY: u32 = 65534;

/// The cpuscope binary where `nobody` can run it: a copy in a directory
/// open to all (the build's own directory may not be: a checkout under a
/// mode-0700 temporary directory). One fixed place, replaced atomically, so
/// test runs leave one copy behind, not one each.
fn nobody_bin() -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        let d = std::env::temp_dir().join("cpuscope-tests-nobody");
        std::fs::create_dir_all(&d).expect("a directory for the copy");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let tmp = d.join(format!("cpuscope.{}", std::process::id()));
        std::fs::copy(BIN, &tmp).expect("copy the binary");
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
        let p = d.join("cpuscope");
        std::fs::rename(&tmp, &p).expect("put the copy in place");
        p
    })
    .clone()
}

/// Whether this (root) process can start cpuscope as `nobody`; if not, the
/// test is skipped (skip.rs: a failure under CI).
fn can_run_as_nobody() -> bool {
    let o = Command::new(nobody_bin())
        .arg("--version")
        .uid(NOBODY)
        .gid(NOBODY)
        .output();
    if o.is_ok_and(|o| o.status.success()) {
        return true;
    }
    skip::skip_or_fail("cannot run cpuscope as nobody (uid 65534) to read another user's store");
    false
}

/// The store and its directory made read-only by their modes, read by this
/// user (not root), or by `as_uid` (root, whom modes do not bind, reads as
/// `nobody`).
fn chmod_read_only_store(as_uid: Option<u32>) {
    use std::os::unix::fs::PermissionsExt as _;
    if as_uid.is_some() && !can_run_as_nobody() {
        return;
    }
    let g = Guarded::new();
    let ids = listed(&g);
    let before = exports(&g, &ids);
    let dir = g.dir.path().to_path_buf();
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    settle(&g.store);
    let files = tree(&dir);
    mode(&g.store, 0o444);
    mode(&dir, 0o555);
    let run = |args: &[&str]| {
        let mut c = Command::new(if as_uid.is_some() {
            nobody_bin()
        } else {
            PathBuf::from(BIN)
        });
        c.arg("--store").arg(&g.store).args(args);
        if let Some(u) = as_uid {
            c.uid(u).gid(u).env("HOME", "/nonexistent");
        }
        c.output().expect("spawn cpuscope")
    };
    reads_fully(&run, &ids, &before);
    assert_eq!(tree(&dir), files);
    mode(&g.store, 0o000);
    let o = run(&["runs"]);
    fails_with(
        &o,
        &format!(
            "cannot read store '{}': Permission denied",
            g.store.display()
        ),
    );
    mode(&dir, 0o755);
    mode(&g.store, 0o644);
    g.assert_intact();
}

// ---- damaged rows ------------------------------------------------------------

#[test]
fn a_damaged_row_is_skipped_with_a_warning_and_named_by_show() {
    let g = Guarded::new();
    let tmp = tempfile::tempdir().unwrap();
    let damaged = "20261127T000000Z-damaged-0001";
    let files = [
        variant(
            tmp.path(),
            damaged,
            "damaged",
            "2026-11-27T00:00:00Z",
            &["t"],
        ),
        variant(
            tmp.path(),
            "20261127T000000Z-a-0001",
            "a",
            "2026-11-27T00:00:00Z",
            &["t"],
        ),
        variant(
            tmp.path(),
            "20261127T000000Z-b-0001",
            "b",
            "2026-11-27T00:00:00Z",
            &["t"],
        ),
    ];
    let mut args = vec!["import"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    ok(&g.run(&args));
    let c = rusqlite::Connection::open(&g.store).unwrap();
    c.execute("UPDATE runs SET tags = 'not json' WHERE id = ?1", [damaged])
        .unwrap();
    drop(c);
    let warning = format!(
        "cpuscope: warning: run {damaged} in store '{}' is damaged (tags: not JSON): skipped\n",
        g.store.display()
    );
    // Listed without it, with one warning line.
    let o = g.run(&["runs"]);
    let out = ok(&o);
    assert!(
        !out.contains(damaged) && out.contains("20261127T000000Z-a-0001"),
        "{out}"
    );
    assert_eq!(stderr(&o), warning);
    let o = g.run(&["runs", "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 4);
    assert_eq!(stderr(&o), warning);
    // fleet and compare --tag read the others.
    let o = g.run(&["fleet"]);
    ok(&o);
    assert_eq!(stderr(&o), warning);
    let o = g.run(&["compare", "--tag", "t"]);
    let out = ok(&o);
    assert!(
        out.contains("20261127T000000Z-a-0001") && !out.contains(damaged),
        "{out}"
    );
    assert_eq!(stderr(&o), warning);
    // The damaged run itself: one line naming the damage.
    let want = format!(
        "run {damaged} in store '{}' is damaged (tags: not JSON)",
        g.store.display()
    );
    fails_with(&g.run(&["show", damaged]), &want);
    fails_with(&g.run(&["export", damaged]), &want);
    // A damaged result is named too.
    let c = rusqlite::Connection::open(&g.store).unwrap();
    c.execute(
        "UPDATE results SET doc = '{oops' WHERE run_id = ?1 AND seq = 3",
        ["20261127T000000Z-b-0001"],
    )
    .unwrap();
    drop(c);
    fails_with(
        &g.run(&["show", "20261127T000000Z-b-0001"]),
        "is damaged (result #3: not JSON)",
    );
    // The damaged run can be deleted; then nothing is skipped.
    ok(&g.run(&["delete", damaged]));
    let o = g.run(&["runs"]);
    ok(&o);
    assert_eq!(stderr(&o), "");
    g.assert_intact();
}

// ---- latest ------------------------------------------------------------------

#[test]
fn latest_is_the_run_stored_last_not_the_latest_claimed_start() {
    let g = Guarded::new();
    let tmp = tempfile::tempdir().unwrap();
    // The fixtures were imported in FIXTURE_RUNS order: latest is the
    // second, though the first started later.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let id_of = |f: &str| {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join(f)).unwrap()).unwrap();
        v["id"].as_str().unwrap().to_string()
    };
    let ids = listed(&g);
    assert_eq!(ids, [id_of(FIXTURE_RUNS[1]), id_of(FIXTURE_RUNS[0])]);
    assert_eq!(shown_id(&g, "latest"), id_of(FIXTURE_RUNS[1]));
    let future = "99991231T235959Z-future-0001";
    let f = variant(tmp.path(), future, "future", "9999-12-31T23:59:59Z", &[]);
    ok(&g.run(&["import", f.to_str().unwrap()]));
    assert_eq!(shown_id(&g, "latest"), future);
    let past = "20200101T000000Z-past-0001";
    let f = variant(tmp.path(), past, "past", "2020-01-01T00:00:00Z", &[]);
    ok(&g.run(&["import", f.to_str().unwrap()]));
    assert_eq!(shown_id(&g, "latest"), past);
    // A run measured now, after both.
    let now = write_run(&g.store, "now", 1, Some(RunStatus::Complete));
    assert_eq!(shown_id(&g, "latest"), now);
    let doc: Value = serde_json::from_slice(&g.run(&["export", "latest"]).stdout).unwrap();
    assert_eq!(doc["id"], json!(now));
    // `runs` lists by start time (the 9999 run last); delete latest takes
    // the run stored last.
    assert_eq!(listed(&g).last().unwrap(), future);
    assert!(ok(&g.run(&["delete", "latest"])).contains(&now));
    assert_eq!(shown_id(&g, "latest"), past);
    assert!(ok(&g.run(&["delete", "latest"])).contains(past));
    assert_eq!(shown_id(&g, "latest"), future);
    // The help says so.
    let help = ok(&Command::new(BIN).args(["show", "--help"]).output().unwrap());
    assert!(help.contains("`latest` (the run stored last)"), "{help}");
    g.assert_intact();
}

#[test]
fn an_older_layout_is_read_unchanged_and_brought_up_to_date_by_a_writer() {
    let g = Guarded::new();
    let ids = listed(&g);
    let before = exports(&g, &ids);
    // Take the store back to layout 1 (no stored_seq).
    let c = rusqlite::Connection::open(&g.store).unwrap();
    c.execute_batch(
        "DROP INDEX runs_stored_seq; ALTER TABLE runs DROP COLUMN stored_seq;
         ALTER TABLE runs DROP COLUMN writer_lock; DROP INDEX runs_host;
         DELETE FROM schema_migrations WHERE version > 1; PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(c);
    let bytes = std::fs::read(&g.store).unwrap();
    // Readers read it as it is: latest in start-time order, as layout 1 had it.
    let run = |args: &[&str]| g.run(args);
    reads_fully(&run, &ids, &before);
    assert_eq!(shown_id(&g, "latest"), ids[1]);
    ok(&g.run(&["compare", &ids[0], "latest"]));
    assert_eq!(
        std::fs::read(&g.store).unwrap(),
        bytes,
        "a reader changed the store"
    );
    // A writer brings it up to date; what it stores is latest.
    let tmp = tempfile::tempdir().unwrap();
    let old = "20200101T000000Z-old-0001";
    let f = variant(tmp.path(), old, "old", "2020-01-01T00:00:00Z", &[]);
    ok(&g.run(&["import", f.to_str().unwrap()]));
    let c = rusqlite::Connection::open(&g.store).unwrap();
    let v: i64 = c
        .query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(v, 4);
    let seqs: Vec<(String, i64)> = c
        .prepare("SELECT id, stored_seq FROM runs ORDER BY stored_seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    drop(c);
    assert_eq!(
        seqs,
        [
            (ids[0].clone(), 1),
            (ids[1].clone(), 2),
            (old.to_string(), 3)
        ]
    );
    assert_eq!(shown_id(&g, "latest"), old);
    g.assert_intact();
}

// ---- export and import take the same documents -------------------------------

#[test]
fn every_stored_run_exports_to_a_document_import_takes_back_byte_for_byte() {
    let g = Guarded::new();
    let tmp = tempfile::tempdir().unwrap();
    // Every state a stored run can be in.
    let complete = write_run(&g.store, "complete", 3, Some(RunStatus::Complete));
    let partial = write_run(&g.store, "partial", 2, Some(RunStatus::Partial));
    let failed_empty = write_run(&g.store, "failed", 0, Some(RunStatus::Failed));
    let interrupted = killed_writer(&g.store, "begin");
    let future = "99991231T235959Z-future-0001";
    let f = variant(tmp.path(), future, "future", "9999-12-31T23:59:59Z", &[]);
    ok(&g.run(&["import", f.to_str().unwrap()]));
    // A run this process is still writing: not exported, as import would
    // refuse it, and said so on one line.
    let mut s = SqliteStore::open(&g.store).unwrap();
    let live = Run::new("live", "quick", machine(), env(), json!({}), vec![]);
    s.begin_run(&live).unwrap();
    fails_with(&g.run(&["export", &live.id]), "is still running");
    // A finish that import would refuse is refused when it is stored.
    let mut bad = env();
    bad.load_end = Some(Load::parse("0 0 0 1/1 1", "yesterday"));
    let e = s
        .finish_run(&live.id, RunStatus::Complete, &now_rfc3339(), &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("environment load time 'yesterday'"), "{e}");
    drop(s);

    let mut ids = listed(&g);
    ids.retain(|id| *id != live.id);
    for id in [&complete, &partial, &failed_empty, &interrupted] {
        assert!(ids.contains(id), "{id} not listed");
    }
    assert_eq!(ids.len(), 7);
    let first = exports(&g, &ids);
    let mut files = Vec::new();
    for (id, text) in ids.iter().zip(&first) {
        let p = tmp.path().join(format!("{id}.export.json"));
        std::fs::write(&p, text).unwrap();
        files.push(p);
        // The same bytes again.
        assert!(g.run(&["export", id]).stdout == *text, "{id} unstable");
    }
    let doc: Value =
        serde_json::from_slice(&first[ids.iter().position(|i| *i == interrupted).unwrap()])
            .unwrap();
    assert_eq!(doc["status"], json!("partial"));
    // Into a fresh store, all at once, and out again: the same bytes.
    let other = tmp.path().join("other.db");
    let mut args = vec!["import"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let o = cpuscope(&other, &args);
    ok(&o);
    for (id, text) in ids.iter().zip(&first) {
        let o = cpuscope(&other, &["export", id]);
        assert!(o.status.success(), "{id}: {}", stderr(&o));
        assert!(o.stdout == *text, "run {id} came back different");
    }
    g.assert_intact();
}

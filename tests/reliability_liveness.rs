//! Runs that no writer can strand, and a store that cannot vanish under a
//! run unnoticed (docs/reliability.md, "Writers that are gone, stores that
//! vanish"):
//!
//! - a writer SIGKILLed in another UTS namespace (another host name: every
//!   container) or another PID namespace leaves a run that `runs` shows
//!   abandoned, `export` keeps as partial and `delete` removes; while it
//!   lives, it is `running` and cannot be deleted, wherever it runs. For
//!   SQLite (a lock beside the store) and PostgreSQL (an advisory lock);
//! - runs stored without a writer lock (by an older cpuscope) keep the
//!   process rule, and `delete --force` removes one it cannot check;
//! - the store deleted, or another file renamed over it, while `run`
//!   writes: the run is saved to the fallback file `import` takes back,
//!   said on one line, exit 1, never "stored as";
//! - an unusable `TMPDIR`: `/tmp` is tried, and each place tried is named.
//!
//! The namespaces need root (`unshare`); without them these tests fail
//! under CI and print SKIP elsewhere (tests/common/skip.rs). Tests that use
//! a SQLite store with runs in it end with `assert_intact`.

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

use cli::one_line_error;
use guard::Guarded;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A run that stores a first result within a second or two and then
/// measures for several more (the store is open from its start).
const LONG_RUN: [&str; 7] = [
    "run",
    "--profile",
    "quick",
    "--only",
    "softirq,sync,seed_loops,latency",
    "--no-html",
    "--quiet",
];

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The standard output of a command that must have succeeded.
fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    stdout(o)
}

/// `f` polled every 100 ms until it gives a value, at most `secs` seconds.
fn wait_for<T>(what: &str, secs: u64, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < end,
            "gave up after {secs} s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `runs --json` of `store`: each run's summary.
fn listed(store: &str) -> Vec<Value> {
    let o = bin::with_store(store, &["runs", "--json"]);
    let doc: Value = serde_json::from_str(&ok(&o)).expect("runs --json");
    doc["runs"].as_array().cloned().unwrap_or_default()
}

fn summary(store: &str, id: &str) -> Option<Value> {
    listed(store).into_iter().find(|r| r["id"] == id)
}

/// The `runs` line of run `id`.
fn runs_line(store: &str, id: &str) -> String {
    let text = ok(&bin::with_store(store, &["runs"]));
    text.lines()
        .find(|l| l.starts_with(id))
        .unwrap_or_else(|| panic!("{id} not listed: {text}"))
        .to_string()
}

/// Whether `unshare ARGS… true` works here (root, a kernel that allows it).
fn can_unshare(args: &[&str]) -> bool {
    let o = Command::new("unshare").args(args).arg("true").output();
    match o {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            skip::skip_or_fail(&format!(
                "unshare {} is refused here (needs root): {}",
                args.join(" "),
                stderr(&o).trim()
            ));
            false
        }
        Err(e) => {
            skip::skip_or_fail(&format!("no unshare: {e}"));
            false
        }
    }
}

/// A `cpuscope --store STORE ARGS…` started under `unshare UNSHARE…`, with
/// host name `host` in its new UTS namespace when given, and `env` set.
struct Writer {
    child: Child,
    err: PathBuf,
    _dir: tempfile::TempDir,
}

impl Writer {
    fn spawn(
        unshare: &[&str],
        host: Option<&str>,
        store: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Writer {
        let dir = tempfile::tempdir().unwrap();
        let err = dir.path().join("stderr");
        let script = match host {
            Some(_) => r#"hostname "$1" || exit 97; shift; exec "$0" --store "$@""#,
            None => r#"shift; exec "$0" --store "$@""#,
        };
        let child = Command::new("unshare")
            .args(unshare)
            .args(["sh", "-c", script, bin::PATH, host.unwrap_or("-"), store])
            .args(args)
            .envs(env.iter().copied())
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("spawn unshare");
        Writer {
            child,
            err,
            _dir: dir,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// The id of the run it writes, once `runs` lists it, running, its
    /// writer seen writing; `known`: the runs listed before it started.
    fn running_run(&mut self, store: &str, known: &[String]) -> String {
        wait_for("the writer's run to be listed as running", 60, || {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("the writer ended ({st}) first: {}", self.stderr());
            }
            listed(store).into_iter().find_map(|r| {
                let id = r["id"].as_str()?.to_string();
                (!known.contains(&id)).then(|| {
                    assert_eq!(r["status"], "running", "{r}");
                    assert_eq!(r["writer"], "writing", "{r}");
                    id
                })
            })
        })
    }

    /// SIGKILL (unshare itself: with --fork --kill-child, the kernel kills
    /// the writer with it).
    fn kill(mut self) {
        self.child.kill().unwrap();
        assert!(!self.child.wait().unwrap().success());
    }
}

fn ids(store: &str) -> Vec<String> {
    listed(store)
        .iter()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect()
}

/// While the writer lives: `running`, not deletable, not exported.
fn check_live(store: &str, id: &str, host: Option<&str>) {
    let line = runs_line(store, id);
    assert!(line.contains(" running "), "{line}");
    let e = one_line_error(&bin::with_store(store, &["delete", id]));
    assert!(
        e.contains(&format!("run {id} is still being written ("))
            && e.contains("it holds the run's writer lock); wait for it or stop it first"),
        "{e}"
    );
    if let Some(h) = host {
        assert!(e.contains(&format!("on host '{h}'")), "{e}");
    }
    // Not even --force deletes a run whose writer is seen writing.
    one_line_error(&bin::with_store(store, &["delete", "--force", id]));
    let e = one_line_error(&bin::with_store(store, &["export", id]));
    assert!(e.contains("is still running"), "{e}");
}

/// Once the writer is gone: `runs` says abandoned with the commands that
/// settle it, `export` keeps it as partial (and `import` takes that back),
/// `delete` removes it.
fn check_abandoned(store: &str, id: &str, hint_store: &str) {
    let s = wait_for("the killed writer's run to read as abandoned", 20, || {
        summary(store, id).filter(|s| s["writer"] == "gone")
    });
    assert_eq!(s["status"], "partial", "{s}");
    assert_eq!(s["interrupted"], true, "{s}");
    let line = runs_line(store, id);
    assert!(line.contains(" partial (abandoned) "), "{line}");
    let text = ok(&bin::with_store(store, &["runs"]));
    let hint = format!(
        "run {id} is abandoned: its writer is gone; `cpuscope --store {hint_store} export {id} \
         -o FILE` keeps it (as partial), `cpuscope --store {hint_store} delete {id}` removes it"
    );
    assert!(text.contains(&hint), "{text}");
    // export → a partial run with the note; import takes it into another store.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("abandoned.json");
    ok(&bin::with_store(
        store,
        &["export", id, "-o", file.to_str().unwrap()],
    ));
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["status"], "partial");
    let notes = doc["environment"]["notes"].to_string();
    assert!(
        notes.contains("ended before the run finished; the run is abandoned, kept as partial"),
        "{notes}"
    );
    let other = tmp.path().join("other.db");
    ok(&bin::with_store(
        other.to_str().unwrap(),
        &["import", file.to_str().unwrap()],
    ));
    assert_eq!(ids(other.to_str().unwrap()), [id]);
    // delete removes it.
    assert_eq!(
        ok(&bin::with_store(store, &["delete", id])),
        format!("deleted run {id}\n")
    );
    assert!(!ids(store).contains(&id.to_string()));
}

// ---- writers that are gone ------------------------------------------------

#[test]
fn a_writer_killed_in_another_uts_namespace_is_abandoned_and_deleted() {
    if !can_unshare(&["--uts"]) {
        return;
    }
    let g = Guarded::new();
    let store = g.store.to_str().unwrap();
    let known = ids(store);
    let host = format!("liveness-uts-{}", std::process::id());
    let mut w = Writer::spawn(&["--uts"], Some(&host), store, &LONG_RUN, &[]);
    let id = w.running_run(store, &known);
    assert!(id.contains(&host), "{id}");
    // The old rule took any writer under another host name as alive, for ever.
    check_live(store, &id, Some(&host));
    w.kill();
    check_abandoned(store, &id, store);
    g.assert_intact();
}

#[test]
fn a_writer_killed_in_another_pid_namespace_is_abandoned() {
    if !can_unshare(&["--pid", "--fork", "--kill-child"]) {
        return;
    }
    let g = Guarded::new();
    let store = g.store.to_str().unwrap();
    let known = ids(store);
    let mut w = Writer::spawn(
        &["--pid", "--fork", "--kill-child"],
        None,
        store,
        &LONG_RUN,
        &[],
    );
    let id = w.running_run(store, &known);
    // Its pid is its namespace's (1: the pid of this machine's init, here),
    // so the process rule cannot find it; the lock can.
    let c =
        rusqlite::Connection::open_with_flags(&g.store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let (pid, lock): (i64, String) = c
        .query_row(
            "SELECT writer_pid, writer_lock FROM runs WHERE id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    drop(c);
    assert_eq!((pid, lock.as_str()), (1, "ofd"));
    check_live(store, &id, None);
    w.kill();
    check_abandoned(store, &id, store);
    g.assert_intact();
}

#[test]
fn a_postgresql_writer_killed_in_another_uts_namespace_is_abandoned() {
    let server = match pg::server() {
        Ok(s) => s,
        Err(why) => return skip::skip_or_fail(&format!("no PostgreSQL server: {why}")),
    };
    if !can_unshare(&["--uts"]) {
        return;
    }
    let url = server.url.as_str();
    let known = ids(url);
    let host = format!("liveness-pg-{}", std::process::id());
    let mut w = Writer::spawn(&["--uts"], Some(&host), url, &LONG_RUN, &[]);
    let id = w.running_run(url, &known);
    check_live(url, &id, Some(&host));
    w.kill();
    check_abandoned(url, &id, url);
    assert_eq!(ids(url), known);
}

/// A copy of the first fixture run as run `id` of host `host`, in `dir`.
fn variant(dir: &Path, id: &str, host: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(guard::FIXTURE_RUNS[0])).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["id"] = Value::from(id);
    doc["host"] = Value::from(host);
    let p = dir.join(format!("{id}.json"));
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

/// Store run `id` and make its row `running`, written by `pid` under
/// `host`, holding `lock` (None: as an older cpuscope stored it).
fn running_row(g: &Guarded, id: &str, pid: i64, host: &str, lock: Option<&str>) {
    let tmp = tempfile::tempdir().unwrap();
    let f = variant(tmp.path(), id, host);
    ok(&g.run(&["import", f.to_str().unwrap()]));
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let c = rusqlite::Connection::open(&g.store).unwrap();
    c.execute(
        "UPDATE runs SET status = 'running', finished_at = NULL, writer_pid = ?2, \
         writer_start = NULL, writer_boot = ?3, writer_host = ?4, writer_lock = ?5 WHERE id = ?1",
        rusqlite::params![id, pid, boot.trim(), host, lock],
    )
    .unwrap();
}

#[test]
fn runs_of_an_older_cpuscope_keep_the_process_rule_and_force_deletes_the_unchecked() {
    let g = Guarded::new();
    let store = g.store.to_str().unwrap();
    let me = i64::from(std::process::id());
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let here = here.trim();
    // No lock, another host name: cannot be checked from here.
    let elsewhere = "20260101T000000Z-elsewhere-0001";
    running_row(&g, elsewhere, me, "elsewhere", None);
    // No lock, this host name, no such process: gone (the process rule).
    let dead = "20260101T000000Z-dead-0002";
    running_row(&g, dead, i64::from(u32::MAX - 1), here, None);
    // A lock that nobody holds, another host name: gone (the lock decides).
    let freed = "20260101T000000Z-freed-0003";
    running_row(&g, freed, me, "elsewhere", Some("ofd"));

    let check = |layout: &str| {
        let line = runs_line(store, elsewhere);
        assert!(
            line.contains(" running (writer unchecked) "),
            "{layout}: {line}"
        );
        assert_eq!(summary(store, elsewhere).unwrap()["writer"], "unknown");
        for id in [dead, freed] {
            let line = runs_line(store, id);
            assert!(line.contains(" partial (abandoned) "), "{layout}: {line}");
        }
        let text = ok(&bin::with_store(store, &["runs"]));
        assert!(
            text.contains(&format!(
                "run {elsewhere}: whether its writer still writes cannot be checked from here \
                 (`cpuscope --store {store} delete {elsewhere}` says why); if it has ended, \
                 `cpuscope --store {store} delete --force {elsewhere}` removes the run"
            )),
            "{layout}: {text}"
        );
        let e = one_line_error(&bin::with_store(store, &["export", elsewhere]));
        assert!(e.contains("is still running"), "{e}");
    };
    check("layout 3");
    // The same runs in a store at layout 2 (no writer_lock column), read as
    // it is: the row that had a free lock now has none, and its writer
    // under another host name cannot be checked.
    let c = rusqlite::Connection::open(&g.store).unwrap();
    c.execute_batch(&format!(
        "DELETE FROM runs WHERE id = '{freed}'; ALTER TABLE runs DROP COLUMN writer_lock; \
         DROP INDEX runs_host; \
         DELETE FROM schema_migrations WHERE version > 2; PRAGMA user_version = 2;"
    ))
    .unwrap();
    drop(c);
    let bytes = std::fs::read(&g.store).unwrap();
    let line = runs_line(store, elsewhere);
    assert!(line.contains(" running (writer unchecked) "), "{line}");
    assert!(runs_line(store, dead).contains(" partial (abandoned) "));
    assert_eq!(
        std::fs::read(&g.store).unwrap(),
        bytes,
        "a reader changed it"
    );
    // delete says why and how; --force deletes it (and brings the store
    // up to date, as any writer does).
    let e = one_line_error(&bin::with_store(store, &["delete", elsewhere]));
    assert!(
        e.contains(&format!("run {elsewhere} may still be being written (pid {me} on host 'elsewhere': it holds no writer lock (stored by an older cpuscope), and it ran under another host name"))
            && e.contains(&format!("`cpuscope delete --force {elsewhere}` removes the run")),
        "{e}"
    );
    ok(&bin::with_store(store, &["delete", "--force", elsewhere]));
    ok(&bin::with_store(store, &["delete", dead]));
    let c = rusqlite::Connection::open(&g.store).unwrap();
    let v: i64 = c
        .query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(v, 4);
    drop(c);
    assert_eq!(ids(store).len(), 2);
    g.assert_intact();
}

/// A run finished while readers look: its writer commits the final status
/// before it lets go of the lock, and a reader that found the lock free
/// reads the row again, so a run that finishes is never listed (or read)
/// as abandoned on the way.
#[test]
fn a_run_being_finished_is_never_read_as_abandoned() {
    use cpuscope::results::schema::{now_rfc3339, Environment, ResultRecord, Run, RunStatus};
    use cpuscope::results::sqlite::SqliteStore;
    use cpuscope::results::store::WriterState;
    use cpuscope::results::Store as _;
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db");
    let mut w = SqliteStore::open(&db).unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            let r = SqliteStore::open_read_only(&db).unwrap();
            let mut looks = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let listed = r.list_runs().unwrap();
                for s in &listed {
                    assert_ne!(s.writer, Some(WriterState::Gone), "{s:?}");
                }
                if !listed.is_empty() {
                    let run = r.get_run("latest").unwrap();
                    assert_ne!(
                        run.status,
                        RunStatus::Partial,
                        "{:?}",
                        run.environment.notes
                    );
                }
                looks += 1;
            }
            looks
        })
    };
    for i in 0..150 {
        let run = Run::new(
            &format!("h{i}"),
            "quick",
            serde_json::json!({}),
            Environment::default(),
            serde_json::json!({}),
            vec![],
        );
        w.begin_run(&run).unwrap();
        let rec = ResultRecord::new("x", "x", "s", false).with_samples(vec![1.0]);
        w.add_result(&run.id, &rec).unwrap();
        w.finish_run(
            &run.id,
            RunStatus::Complete,
            &now_rfc3339(),
            &run.environment,
        )
        .unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let looks = reader.join().expect("the reader saw an abandoned run");
    assert!(looks > 10, "the reader looked only {looks} times");
}

// ---- the store vanishing under a run --------------------------------------

/// Start `run` on `store`, wait for its first stored result, do `what` to
/// the store, wait for the end: the output and the run's id.
fn vanish_during_run(
    store: &Path,
    env: &[(&str, &str)],
    what: impl FnOnce(&Path),
) -> (Output, String) {
    let s = store.to_str().unwrap();
    let child = bin::command()
        .arg("--store")
        .arg(store)
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "softirq,sync,seed_loops",
            "--no-html",
        ])
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cpuscope run");
    let id = wait_for("the run's first stored result", 60, || {
        listed(s)
            .into_iter()
            .find(|r| r["status"] == "running" && r["results"].as_u64() >= Some(1))
            .and_then(|r| r["id"].as_str().map(str::to_string))
    });
    what(store);
    (child.wait_with_output().unwrap(), id)
}

/// The run ended saying where it saved the run, with exit 1 and never
/// "stored as"; the fallback file's path.
fn saved_elsewhere(o: &Output, id: &str, store: &str) -> PathBuf {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!stdout(o).contains("stored as"), "{}", stdout(o));
    assert!(!err.contains("panicked"), "{err}");
    let warned = format!(
        "cpuscope: warning: store '{store}' stopped taking run {id} (store '{store}' was deleted or \
         replaced while this process wrote to it ("
    );
    assert!(err.contains(&warned), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("cpuscope: error: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(
        line.starts_with(&format!(
            "cpuscope: error: store '{store}' could not take run {id} (store '{store}' was deleted \
             or replaced while this process wrote to it ("
        )),
        "{line}"
    );
    let path = line
        .split("the whole run is saved in ")
        .nth(1)
        .and_then(|r| r.split("; once").next())
        .unwrap_or_else(|| panic!("no fallback file named: {line}"));
    assert!(
        line.ends_with(&format!(
            "cpuscope delete {id} (its partial copy, if any) && cpuscope import {path}"
        )),
        "{line}"
    );
    PathBuf::from(path)
}

/// `import` of the fallback file brings the whole, complete run into the
/// store at `fresh` (made by the import), and only it; the file is removed.
fn import_restores(file: &Path, id: &str, fresh: &Path) {
    let f = fresh.to_str().unwrap();
    ok(&bin::with_store(f, &["import", file.to_str().unwrap()]));
    assert_eq!(ids(f), [id]);
    let s = summary(f, id).expect("the run is back");
    assert_eq!(s["status"], "complete", "{s}");
    assert!(s["results"].as_u64() > Some(1), "{s}");
    let c = rusqlite::Connection::open(fresh).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    std::fs::remove_file(file).unwrap();
}

#[test]
fn a_store_deleted_under_a_run_saves_the_run_to_a_file_import_takes() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s.db");
    let fallback = tmp.path().join("fallback");
    std::fs::create_dir(&fallback).unwrap();
    // `rm s.db`: its -wal and -shm stay.
    let (o, id) = vanish_during_run(&store, &[("TMPDIR", fallback.to_str().unwrap())], |s| {
        std::fs::remove_file(s).unwrap()
    });
    let file = saved_elsewhere(&o, &id, store.to_str().unwrap());
    assert_eq!(file, fallback.join(format!("cpuscope-{id}.json")));
    assert!(stderr(&o).contains("(no file at that path now: No such file or directory)"));
    // Nothing claims to hold it where the store was.
    assert!(!store.exists());
    // A new store at that path (beside what the old one left there) takes
    // the run back, and holds nothing of the old one.
    import_restores(&file, &id, &store);
}

#[test]
fn a_store_replaced_under_a_run_saves_the_run_and_an_unusable_tmpdir_falls_back_to_tmp() {
    let g = Guarded::new();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s.db");
    let missing = format!("/nonexistent-cpuscope-{}", std::process::id());
    let (o, id) = vanish_during_run(&store, &[("TMPDIR", &missing)], |s| {
        // A backup (another store) renamed over it.
        std::fs::rename(&g.store, s).unwrap();
    });
    let file = saved_elsewhere(&o, &id, store.to_str().unwrap());
    // TMPDIR does not exist: /tmp took it.
    assert_eq!(file, Path::new("/tmp").join(format!("cpuscope-{id}.json")));
    assert!(
        stderr(&o).contains("(another file is at that path now)"),
        "{}",
        stderr(&o)
    );
    // The store now at that path holds what it held, and not the run.
    let s = store.to_str().unwrap();
    assert_eq!(ids(s).len(), 2);
    assert!(!ids(s).contains(&id));
    import_restores(&file, &id, &tmp.path().join("fresh.db"));
    std::fs::rename(&store, &g.store).unwrap();
    g.assert_intact();
}

/// A directory that a tmpfs mounted over /tmp does not hide: the target
/// directory's, or /var/tmp when the checkout itself lives under /tmp (a
/// clone made with `mktemp -d`).
fn outside_tmp() -> tempfile::TempDir {
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let place = if under_tmp(target) {
        std::path::Path::new("/var/tmp")
    } else {
        target
    };
    assert!(
        !under_tmp(place),
        "no directory outside /tmp: tried {target:?} and /var/tmp"
    );
    tempfile::tempdir_in(place).unwrap()
}

/// `p` lies under /tmp (or cannot be resolved, so it may).
fn under_tmp(p: &std::path::Path) -> bool {
    p.canonicalize().map_or(true, |c| c.starts_with("/tmp"))
}

/// The binary, as a path that a tmpfs mounted over /tmp does not hide: a
/// copy in `dir` when the build lives under /tmp.
fn binary_outside_tmp(dir: &std::path::Path) -> String {
    let built = std::path::Path::new(bin::PATH);
    if !under_tmp(built) {
        return bin::PATH.to_string();
    }
    let copy = dir.join("cpuscope");
    std::fs::copy(built, &copy).unwrap();
    copy.to_str().unwrap().to_string()
}

#[test]
fn a_fallback_no_place_takes_names_every_place_tried() {
    if !can_unshare(&["--mount"]) {
        return;
    }
    let dir = outside_tmp();
    let store = dir.path().join("s.db");
    let s = store.to_str().unwrap();
    let missing = format!("/nonexistent-cpuscope-{}", std::process::id());
    // In its own mount namespace: /tmp read-only, and the current directory
    // is that /tmp; TMPDIR does not exist.
    let script = r#"mount -t tmpfs -o ro cpuscope-ro /tmp && cd /tmp && exec "$0" --store "$@""#;
    let binary = binary_outside_tmp(dir.path());
    let child = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            &binary,
            s,
        ])
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "softirq,sync,seed_loops",
            "--no-html",
        ])
        .env("TMPDIR", &missing)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the run's first stored result", 60, || {
        listed(s)
            .into_iter()
            .find(|r| r["results"].as_u64() >= Some(1))
    });
    std::fs::remove_file(&store).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!stdout(&o).contains("stored as"));
    let line = err
        .lines()
        .find(|l| l.starts_with("cpuscope: error: "))
        .unwrap();
    let tried = format!(
        "and no fallback file could be written (TMPDIR '{missing}': cannot create \
         '{missing}/cpuscope-"
    );
    assert!(line.contains(&tried), "{line}");
    for place in [
        ".json': No such file or directory; /tmp: cannot create '/tmp/cpuscope-",
        ".json': Read-only file system; the current directory: cannot create './cpuscope-",
        ".json': Read-only file system): the figures printed are all that is left",
    ] {
        assert!(line.contains(place), "{place}: {line}");
    }
    // The figures were printed.
    assert!(!stdout(&o).is_empty());
}

#[test]
fn an_unusable_tmpdir_is_named_and_tmp_is_tried_for_an_archive() {
    let dir = outside_tmp();
    let archive = dir.path().join("me.tar.gz");
    let a = archive.to_str().unwrap();
    let o = bin::command().args(["record", a]).output().unwrap();
    assert!(o.status.success(), "record: {}", stderr(&o));
    let missing = format!("/nonexistent-cpuscope-{}", std::process::id());
    // TMPDIR unusable: unpacked in /tmp instead.
    let o = bin::command()
        .args(["--sysroot", a, "info"])
        .env("TMPDIR", &missing)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("recorded machine at"), "{}", stdout(&o));
    if !can_unshare(&["--mount"]) {
        return;
    }
    // /tmp unusable too: one line naming both, and why.
    let script = r#"mount -t tmpfs -o ro cpuscope-ro /tmp && exec "$0" "$@""#;
    let binary = binary_outside_tmp(dir.path());
    let o = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            &binary,
        ])
        .args(["--sysroot", a, "info"])
        .env("TMPDIR", &missing)
        .output()
        .unwrap();
    let e = one_line_error(&o);
    assert_eq!(
        e.trim_end(),
        format!(
            "cpuscope: error: sysroot archive '{a}': cannot make a temporary directory: \
             TMPDIR '{missing}': No such file or directory; /tmp: Read-only file system"
        )
    );
}

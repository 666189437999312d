//! The run store: export/import round trips, bad input, a writer killed
//! mid-run, concurrent writers, and files that are not stores.

#[path = "common/bin.rs"]
mod bin;
use cpuscope::results::schema::{now_rfc3339, Load};
use cpuscope::results::sqlite::SqliteStore;
use cpuscope::results::{open_store, Environment, ResultRecord, Run, RunStatus, Store};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A failure must be exactly one line `cpuscope: error: ...` and exit non-zero.
fn assert_one_line_error(o: &Output, must_contain: &str) {
    let e = stderr(o);
    assert!(!o.status.success(), "expected failure, got success: {e}");
    assert_eq!(e.lines().count(), 1, "not one line: {e:?}");
    assert!(e.starts_with("cpuscope: error: "), "{e:?}");
    assert!(e.contains(must_contain), "{e:?} lacks {must_contain:?}");
    assert!(
        !e.contains("panicked") && !e.contains("internal error"),
        "{e}"
    );
}

fn machine() -> serde_json::Value {
    json!({
        "schema": "cpuscope.info/1",
        "identity": {"model_name": "Test CPU 9000", "vendor": "Acme"},
        "cpus": {"online": "0-3"},
    })
}

fn env() -> Environment {
    Environment {
        load_start: Some(Load::parse(
            "0.10 0.20 0.30 1/100 42",
            "2026-01-02T03:04:05Z",
        )),
        load_end: None,
        kernel: Some("6.1.0-test".into()),
        is_vm: Some(true),
        governor: None,
        notes: vec!["test machine".into()],
        activity: None,
        // Stored and read back with the rest of the environment.
        build: Some(cpuscope::base::build::BuildInfo::this()),
        container: None,
        limits: None,
        confinement: None,
        // Stored and read back too.
        timings: vec![cpuscope::results::schema::Timing {
            experiment: "frequency".into(),
            estimated_s: 2.5,
            actual_s: 2.75,
        }],
    }
}

/// A finished run with awkward figures (values that do not print exactly,
/// a curve, an unavailable result, a noisy one).
fn sample_run(host: &str) -> Run {
    let mut run = Run::new(
        host,
        "quick",
        machine(),
        env(),
        json!({"profile": "quick", "cpus": null}),
        vec!["t1".into(), "ü-tag".into()],
    );
    run.results.push(
        ResultRecord::new("frequency", "frequency", "GHz", true)
            .with_param("threads", 1)
            .with_method("rdtsc over a dependent add chain", 1)
            .with_samples(vec![0.1 + 0.2, 3.000_000_000_000_004, 1.0 / 3.0, 2.9e-300]),
    );
    run.results.push(
        ResultRecord::new("latency", "load-to-use latency", "ns", false)
            .with_param("size", "32 KiB")
            .with_samples(vec![1.0, 1.5, 0.9, 2.5])
            .with_note("first sample discarded")
            .with_data(json!({"sizes": [4096, 8192], "ns": [1.1, 1.234_567_890_123_456_7]})),
    );
    run.results.push(ResultRecord::unavailable(
        "c2c",
        "latency",
        "ns",
        "only one CPU is usable",
    ));
    let mut end = env();
    end.load_end = Some(Load::parse("0.5 0.2 0.3 2/101 43", "2026-01-02T03:05:05Z"));
    run.environment = end;
    run.status = RunStatus::Complete;
    run.finished_at = Some(now_rfc3339());
    run
}

/// Everything a store holds, as text: used to show that a store is unchanged.
fn dump(path: &Path) -> String {
    let s = SqliteStore::open(path).expect("open store");
    let mut out = String::new();
    for r in s.list_runs().expect("list") {
        out.push_str(&serde_json::to_string(&r).unwrap());
        out.push_str(&serde_json::to_string(&s.get_run(&r.id).expect("get")).unwrap());
        out.push('\n');
    }
    out
}

#[test]
fn export_then_import_gives_the_identical_document() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    let original = sample_run("host-a");
    // Written the way `cpuscope run` writes: begin, add per result, finish.
    {
        let mut s = open_store(Some(a.to_str().unwrap())).unwrap();
        s.begin_run(&Run {
            results: vec![],
            status: RunStatus::Running,
            finished_at: None,
            environment: env(),
            ..original.clone()
        })
        .unwrap();
        for r in &original.results {
            s.add_result(&original.id, r).unwrap();
        }
        s.finish_run(
            &original.id,
            RunStatus::Complete,
            original.finished_at.as_deref().unwrap(),
            &original.environment,
        )
        .unwrap();
        assert_eq!(s.get_run(&original.id).unwrap(), original);
    }
    let file = dir.path().join("run.json");
    let o = bin::with_store(&a, &["export", &original.id, "-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let exported = std::fs::read_to_string(&file).unwrap();

    let o = bin::with_store(&b, &["import", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&original.id));

    let o = bin::with_store(&b, &["export", &original.id]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), exported, "re-exported document differs");
    let back: Run = serde_json::from_str(&exported).unwrap();
    assert_eq!(back, original);

    // show --all (plain `show` prints the verdict screen since the verdict
    // change): environment, figures, the noisy flag, the unavailable reason.
    let o = bin::with_store(&b, &["show", &original.id[..12], "--all"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for want in [
        "status    complete",
        "Test CPU 9000",
        "6.1.0-test",
        "0.10 / 0.20 / 0.30",
        "NOISY",
        "latency: load-to-use latency (size=32 KiB)",
        "c2c: latency",
        "not available: only one CPU is usable",
        "note: first sample discarded",
    ] {
        assert!(text.contains(want), "show lacks {want:?}:\n{text}");
    }
    // show --json is the same document.
    let o = bin::with_store(&b, &["show", "latest", "--json"]);
    assert_eq!(stdout(&o), exported);

    // Importing it again is refused and changes nothing.
    let before = dump(&b);
    let o = bin::with_store(&b, &["import", file.to_str().unwrap()]);
    assert_one_line_error(&o, "already in store");
    assert_eq!(dump(&b), before);
}

#[test]
fn bad_imports_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let kept = sample_run("kept");
    open_store(Some(db.to_str().unwrap()))
        .unwrap()
        .put_run(&kept)
        .unwrap();
    let good_run = sample_run("good");
    let good_text = serde_json::to_string_pretty(&good_run).unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, &good_text).unwrap();

    let v: serde_json::Value = serde_json::from_str(&good_text).unwrap();
    let variant = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut c = v.clone();
        f(&mut c);
        serde_json::to_string(&c).unwrap()
    };
    let newer = variant(&|c| c["schema"] = json!("cpuscope.run/99"));
    let foreign = variant(&|c| c["schema"] = json!("cpuscope.info/1"));
    let no_host = variant(&|c| {
        c.as_object_mut().unwrap().remove("host");
    });
    let silent_null = variant(&|c| c["results"][0]["value"] = json!(null));
    let bad_time = variant(&|c| c["started_at"] = json!("yesterday"));
    let running = variant(&|c| c["status"] = json!("running"));
    let extra = variant(&|c| c["surprise"] = json!(1));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.json",
            good_text.as_bytes()[..good_text.len() / 2].to_vec(),
            "not valid JSON",
        ),
        ("newer.json", newer.into_bytes(), "cpuscope.run/99"),
        ("foreign.json", foreign.into_bytes(), "foreign schema"),
        ("text.txt", b"this is not json\n".to_vec(), "not valid JSON"),
        ("empty.json", Vec::new(), "empty"),
        ("array.json", b"[1,2]".to_vec(), "not an object"),
        (
            "no-schema.json",
            b"{\"id\": \"x\"}".to_vec(),
            "no \"schema\"",
        ),
        ("binary.bin", vec![0xff, 0xfe, 0x00, 0x12], "not UTF-8"),
        ("no-host.json", no_host.into_bytes(), "host"),
        (
            "silent-null.json",
            silent_null.into_bytes(),
            "unavailable_reason",
        ),
        ("bad-time.json", bad_time.into_bytes(), "RFC 3339"),
        ("running.json", running.into_bytes(), "still running"),
        ("extra.json", extra.into_bytes(), "surprise"),
    ];
    let before = dump(&db);
    for (name, bytes, why) in cases {
        let f = dir.path().join(name);
        std::fs::write(&f, bytes).unwrap();
        // The good file comes first: it must not be stored either.
        let o = bin::with_store(
            &db,
            &["import", good.to_str().unwrap(), f.to_str().unwrap()],
        );
        assert_one_line_error(&o, name);
        assert!(stderr(&o).contains(why), "{name}: {}", stderr(&o));
        assert_eq!(dump(&db), before, "{name} changed the store");
    }
    let missing = dir.path().join("missing.json");
    let o = bin::with_store(
        &db,
        &["import", good.to_str().unwrap(), missing.to_str().unwrap()],
    );
    assert_one_line_error(&o, "missing.json");
    // The same run twice in one import.
    let o = bin::with_store(
        &db,
        &["import", good.to_str().unwrap(), good.to_str().unwrap()],
    );
    assert_one_line_error(&o, "also in");
    assert_eq!(dump(&db), before);
    // And the good one alone goes in.
    let o = bin::with_store(&db, &["import", good.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = SqliteStore::open(&db).unwrap();
    assert_eq!(s.get_run(&good_run.id).unwrap(), good_run);
    assert_eq!(s.get_run(&kept.id).unwrap(), kept);
}

#[test]
fn unknown_runs_and_bad_stores_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for args in [
        &["show", "nope"][..],
        &["delete", "nope"],
        &["export", "nope"],
        &["show", "latest"],
    ] {
        let o = bin::with_store(&db, args);
        assert_one_line_error(&o, "");
    }
    let o = bin::with_store(&db, &["show", "nope"]);
    assert_one_line_error(&o, "no run 'nope'");

    // A file that is not SQLite: refused, and left exactly as it was.
    let junk = dir.path().join("junk.db");
    let content = b"just some text that is not a database\n".repeat(50);
    std::fs::write(&junk, &content).unwrap();
    for args in [&["runs"][..], &["show", "latest"], &["import", "x.json"]] {
        let o = bin::with_store(&junk, args);
        if args[0] == "import" {
            // import reads the files first: the missing file is named.
            assert_one_line_error(&o, "x.json");
        } else {
            assert_one_line_error(&o, "not a SQLite database");
        }
    }
    assert_eq!(std::fs::read(&junk).unwrap(), content);
    assert!(!dir.path().join("junk.db-wal").exists());

    // A SQLite database of something else.
    let other = dir.path().join("other.db");
    assert!(run_sql(&other, "CREATE TABLE notes (t TEXT)"));
    let o = bin::with_store(&other, &["runs"]);
    assert_one_line_error(&o, "not a cpuscope store");

    // A PostgreSQL URL is a PostgreSQL store (src/results/postgres.rs): with no
    // server there, the error is one line naming it, without the password.
    let o = bin::with_store(Path::new("postgres://u:secret@127.0.0.1:1/db"), &["runs"]);
    assert_one_line_error(&o, "store 'postgres://u@127.0.0.1:1/db'");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("secret"));
    let o = bin::with_store(Path::new("mongo://h/db"), &["runs"]);
    assert_one_line_error(&o, "unknown store");
    let o = bin::with_store(dir.path().join("no/such/dir/x.db"), &["runs"]);
    assert_one_line_error(&o, "does not exist");
}

fn run_sql(path: &Path, sql: &str) -> bool {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(sql).is_ok()
}

#[test]
fn default_store_lives_under_xdg_data_home() {
    // The first command that stores a run creates the default store there
    // (reading commands create nothing: tests/reliability_store.rs).
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/vm-2cpu-quick.json");
    let dir = tempfile::tempdir().unwrap();
    let o = bin::command()
        .arg("import")
        .arg(&doc)
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("cpuscope/runs.db").is_file());
    // Without XDG_DATA_HOME: ~/.local/share.
    let o = bin::command()
        .arg("import")
        .arg(&doc)
        .env_remove("XDG_DATA_HOME")
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join(".local/share/cpuscope/runs.db").is_file());
}

#[test]
fn newer_store_layout_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    drop(SqliteStore::open(&db).unwrap());
    assert!(run_sql(
        &db,
        "INSERT INTO schema_migrations (version, description, applied_at) VALUES (99, 'future', 'x')"
    ));
    let o = bin::with_store(&db, &["runs"]);
    assert_one_line_error(&o, "newer than this cpuscope");
}

#[test]
fn ids_prefixes_latest_delete() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut s = SqliteStore::open(&db).unwrap();
    let mut r1 = sample_run("h");
    r1.id = "20260101T000000Z-h-aaaa".into();
    r1.started_at = "2026-01-01T00:00:00Z".into();
    let mut r2 = sample_run("h");
    r2.id = "20260101T000000Z-h-aabb".into();
    r2.started_at = "2026-01-01T00:00:00Z".into();
    let mut r3 = sample_run("h");
    r3.id = "20260202T000000Z-h-cccc".into();
    r3.started_at = "2026-02-02T00:00:00Z".into();
    s.put_runs(&[r1.clone(), r2.clone(), r3.clone()]).unwrap();
    assert_eq!(s.resolve("latest").unwrap(), r3.id);
    assert_eq!(s.resolve("20260202").unwrap(), r3.id);
    assert_eq!(s.resolve("20260101T000000Z-h-aab").unwrap(), r2.id);
    let e = s.resolve("20260101").unwrap_err().to_string();
    assert!(e.contains("ambiguous") && e.contains(&r1.id), "{e}");
    // `%` and `_` are not wildcards.
    assert!(s.resolve("2026010_").is_err());
    assert!(s.resolve("%").is_err());
    let list = s.list_runs().unwrap();
    assert_eq!(
        list.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [&r1.id, &r2.id, &r3.id]
    );
    assert_eq!(list[0].cpu_model.as_deref(), Some("Test CPU 9000"));
    assert_eq!(list[0].results, 3);
    assert_eq!(list[0].status, RunStatus::Complete);

    let o = bin::with_store(&db, &["delete", "20260202"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&r3.id));
    let o = bin::with_store(&db, &["runs"]);
    assert!(!stdout(&o).contains(&r3.id));
    assert!(stdout(&o).contains("Test CPU 9000"));
    assert_eq!(s.list_runs().unwrap().len(), 2);
    // Results went with the run (foreign key cascade).
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM results WHERE run_id = ?1",
            [&r3.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn writer_rules() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut s = SqliteStore::open(&db).unwrap();
    let run = Run::new("h", "quick", machine(), env(), json!({}), vec![]);
    s.begin_run(&run).unwrap();
    // A run this (live) process is writing is shown running, and cannot be deleted.
    assert_eq!(s.get_run("latest").unwrap().status, RunStatus::Running);
    assert!(!s.list_runs().unwrap()[0].interrupted);
    let e = s.delete_run(&run.id).unwrap_err().to_string();
    assert!(e.contains("still being written"), "{e}");
    let r = ResultRecord::new("x", "x", "s", false).with_samples(vec![1.0]);
    s.add_result(&run.id, &r).unwrap();
    let e = s.add_result(&run.id, &r).unwrap_err().to_string();
    assert!(e.contains("already has a result with key"), "{e}");
    let e = s.add_result("nope", &r).unwrap_err().to_string();
    assert!(e.contains("no run 'nope'"), "{e}");
    let silent = ResultRecord {
        unavailable_reason: None,
        ..ResultRecord::unavailable("y", "y", "s", "r")
    };
    assert!(s.add_result(&run.id, &silent).is_err());
    assert!(s
        .finish_run(&run.id, RunStatus::Running, &now_rfc3339(), &env())
        .is_err());
    s.finish_run(&run.id, RunStatus::Failed, &now_rfc3339(), &env())
        .unwrap();
    let e = s.add_result(&run.id, &r).unwrap_err().to_string();
    assert!(e.contains("is failed"), "{e}");
    assert!(s
        .finish_run(&run.id, RunStatus::Complete, &now_rfc3339(), &env())
        .is_err());
    let back = s.get_run(&run.id).unwrap();
    assert_eq!(back.status, RunStatus::Failed);
    assert_eq!(back.results, vec![r]);
    s.delete_run(&run.id).unwrap();
}

// ---- child processes -------------------------------------------------------
//
// The tests below re-run this test binary as a child that writes to a store
// (`child_writer` does nothing unless CPUSCOPE_TEST_CHILD is set).

#[test]
fn child_writer() {
    let Ok(mode) = std::env::var("CPUSCOPE_TEST_CHILD") else {
        return;
    };
    let path = std::env::var("CPUSCOPE_TEST_STORE").unwrap();
    let mut s = open_store(Some(&path)).unwrap();
    let host = format!("child-{}", std::process::id());
    let run = Run::new(&host, "quick", machine(), env(), json!({}), vec![]);
    s.begin_run(&run).unwrap();
    // The test harness has printed "test child_writer ... " without a newline.
    println!("\nrun {}", run.id);
    let (count, pause, finish) = match mode.split_once(':') {
        Some(("finish", n)) => (n.parse::<usize>().unwrap(), 0, true),
        _ => (100_000, 5, false),
    };
    for i in 0..count {
        let r = ResultRecord::new("loop", "loop", "ns", false)
            .with_param("i", i)
            .with_samples(vec![i as f64, i as f64 + 0.5]);
        s.add_result(&run.id, &r).unwrap();
        println!("added {}", i + 1);
        if pause > 0 {
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
    }
    if finish {
        s.finish_run(&run.id, RunStatus::Complete, &now_rfc3339(), &env())
            .unwrap();
        println!("done");
    }
}

fn spawn_child(mode: &str, store: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["child_writer", "--exact", "--nocapture", "--test-threads=1"])
        .env("CPUSCOPE_TEST_CHILD", mode)
        .env("CPUSCOPE_TEST_STORE", store)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child writer")
}

fn store_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("shared.db")
}

#[test]
fn writer_killed_mid_run_leaves_a_readable_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_path(&dir);
    let earlier = sample_run("earlier");
    SqliteStore::open(&db).unwrap().put_run(&earlier).unwrap();

    let mut child = spawn_child("kill", &db);
    let out = child.stdout.take().unwrap();
    let mut id = None;
    let mut added = 0;
    for line in BufReader::new(out).lines() {
        let line = line.unwrap();
        if let Some(r) = line.strip_prefix("run ") {
            id = Some(r.to_string());
        }
        if let Some(n) = line.strip_prefix("added ") {
            added = n.parse::<usize>().unwrap();
            if added >= 8 {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    let st = child.wait().unwrap();
    assert!(!st.success());
    let id = id.expect("child printed its run id");
    assert!(added >= 8);

    let s = SqliteStore::open(&db).unwrap();
    assert_eq!(s.get_run(&earlier.id).unwrap(), earlier);
    let list = s.list_runs().unwrap();
    assert_eq!(list.len(), 2);
    let killed = list.iter().find(|r| r.id == id).unwrap();
    assert_eq!(killed.status, RunStatus::Partial);
    assert!(killed.interrupted);
    assert!(killed.results >= added, "{} < {added}", killed.results);
    let run = s.get_run(&id).unwrap();
    assert_eq!(run.status, RunStatus::Partial);
    assert!(run
        .environment
        .notes
        .iter()
        .any(|n| n.contains("interrupted")));

    let o = bin::with_store(&db, &["runs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with(&id))
        .unwrap()
        .to_string();
    assert!(line.contains("partial (abandoned)"), "{line}");
    let o = bin::with_store(&db, &["show", &id]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("partial"));
    // The interrupted run can be deleted (its writer is gone).
    let o = bin::with_store(&db, &["delete", &id]);
    assert!(o.status.success(), "{}", stderr(&o));
    // SQLite itself agrees the file is sound.
    let c = rusqlite::Connection::open(&db).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn concurrent_writers_both_land() {
    let dir = tempfile::tempdir().unwrap();
    // A fresh file: both children also race to create the tables.
    let db = store_path(&dir);
    let n = 60;
    let children: Vec<_> = (0..3)
        .map(|_| spawn_child(&format!("finish:{n}"), &db))
        .collect();
    let mut ids = Vec::new();
    for c in children {
        let o = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "child failed: {text}");
        assert!(text.contains("done"), "{text}");
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix("run "))
            .unwrap()
            .to_string();
        ids.push(id);
    }
    let s = SqliteStore::open(&db).unwrap();
    let list = s.list_runs().unwrap();
    assert_eq!(list.len(), 3);
    for id in &ids {
        let r = list.iter().find(|r| &r.id == id).unwrap();
        assert_eq!(r.status, RunStatus::Complete);
        assert_eq!(r.results, n);
        let run = s.get_run(id).unwrap();
        assert_eq!(run.results.len(), n);
        // In the order they were added.
        assert_eq!(run.results[n - 1].params["i"], json!(n - 1));
    }
}

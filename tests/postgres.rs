//! The PostgreSQL store against a real server: a throwaway one started by
//! the test (initdb + pg_ctl into a temporary directory, on a free loopback
//! port; tests/common/pg.rs), or the server named by CPUSCOPE_TEST_PG_URL. Without either it fails
//! under CI and prints SKIP elsewhere (tests/common/skip.rs). CI installs postgresql (.ci/run).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/skip.rs"]
mod skip;

use pg::{server, text};

use cpuscope::results::postgres::PgStore;
use cpuscope::results::schema::{Environment, ResultRecord, Run, RunStatus};
use cpuscope::results::sqlite::SqliteStore;
use cpuscope::results::store::Store;
use serde_json::json;

macro_rules! server_or_skip {
    () => {
        match server() {
            Ok(s) => s,
            Err(why) => {
                skip::skip_or_fail(&format!("no PostgreSQL server: {why}"));
                return;
            }
        }
    };
}

fn machine(cpu: &str) -> serde_json::Value {
    json!({"identity": {"model_name": cpu, "architecture": "x86_64"}, "cores": [{}, {}]})
}

fn unique(prefix: &str) -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}{:x}{:x}", std::process::id(), n & 0xffff_ffff)
}

fn record(i: usize, j: usize) -> ResultRecord {
    ResultRecord::new("memory", "bandwidth", "GB/s", true)
        .with_param("threads", j as u64 + 1)
        .with_method("test writer", 1)
        .with_samples(vec![
            10.0 + i as f64 + j as f64 / 7.0,
            10.1 + i as f64,
            0.1 + 1.0 / 3.0,
        ])
        .with_data(json!({"curve": {"points": [[1, 2.5], [2, 4.75]]}, "writer": i}))
}

#[test]
fn eight_concurrent_writers_lose_nothing() {
    let srv = server_or_skip!();
    let tag = unique("t");
    let n_writers = 8;
    let per_run = 6;
    let handles: Vec<_> = (0..n_writers)
        .map(|i| {
            let url = srv.url.clone();
            let tag = tag.clone();
            std::thread::spawn(move || -> Result<Run, String> {
                let mut st = PgStore::open(&url).map_err(|e| format!("{e:#}"))?;
                let mut run = Run::new(
                    &format!("host-{i}"),
                    "quick",
                    machine(if i % 2 == 0 { "CPU Even" } else { "CPU Odd" }),
                    Environment::default(),
                    json!({"writer": i}),
                    vec![tag.clone(), format!("w{i}")],
                );
                run.id = format!("{tag}-run-{i}");
                st.begin_run(&run).map_err(|e| format!("{e:#}"))?;
                for j in 0..per_run {
                    let r = record(i, j);
                    st.add_result(&run.id, &r).map_err(|e| format!("{e:#}"))?;
                    run.results.push(r);
                }
                let mut env = Environment::default();
                env.notes.push(format!("writer {i} done"));
                let fin = cpuscope::results::now_rfc3339();
                st.finish_run(&run.id, RunStatus::Complete, &fin, &env)
                    .map_err(|e| format!("{e:#}"))?;
                run.status = RunStatus::Complete;
                run.finished_at = Some(fin);
                run.environment = env;
                Ok(run)
            })
        })
        .collect();
    let mut written = Vec::new();
    for h in handles {
        written.push(
            h.join()
                .expect("writer thread panicked")
                .expect("writer failed"),
        );
    }

    let st = PgStore::open(&srv.url).unwrap();
    let listed: Vec<_> = st
        .list_runs()
        .unwrap()
        .into_iter()
        .filter(|s| s.tags.contains(&tag))
        .collect();
    assert_eq!(listed.len(), n_writers, "runs lost: {listed:?}");
    for s in &listed {
        assert_eq!(s.results, per_run, "{}", s.id);
        assert_eq!(s.status, RunStatus::Complete);
        assert!(s.cpu_model.as_deref().unwrap_or("").starts_with("CPU "));
    }
    for w in &written {
        let got = st.get_run(&w.id).unwrap();
        assert_eq!(&got, w, "run {} differs after the round trip", w.id);
    }

    // Export from PostgreSQL, import into SQLite: the same document.
    let dir = tempfile::tempdir().unwrap();
    let mut lite = SqliteStore::open(&dir.path().join("runs.db")).unwrap();
    let from_pg: Vec<Run> = written.iter().map(|w| st.get_run(&w.id).unwrap()).collect();
    lite.put_runs(&from_pg).unwrap();
    for r in &from_pg {
        let back = lite.get_run(&r.id).unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&back).unwrap(),
            serde_json::to_string_pretty(r).unwrap()
        );
    }
}

#[test]
fn export_import_through_the_binary_and_fleet_compare() {
    let srv = server_or_skip!();
    let tag = unique("cli");
    let mut st = PgStore::open(&srv.url).unwrap();
    let mut runs = Vec::new();
    for (i, (host, cpu, ghz)) in [("alpha", "Xeon X", 3.0), ("beta", "EPYC Y", 2.0)]
        .into_iter()
        .enumerate()
    {
        let mut r = Run::new(
            host,
            "quick",
            machine(cpu),
            Environment::default(),
            json!({}),
            vec![tag.clone()],
        );
        r.id = format!("{tag}-{i}-{host}");
        r.status = RunStatus::Complete;
        r.finished_at = Some(r.started_at.clone());
        r.results.push(
            ResultRecord::new("frequency", "single_core", "GHz", true)
                .with_param("threads", 1)
                .with_samples(vec![ghz, ghz, ghz]),
        );
        runs.push(r);
    }
    st.put_runs(&runs).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let lite = dir.path().join("runs.db");
    let lite = lite.to_str().unwrap();
    for r in &runs {
        let f = dir.path().join(format!("{}.json", r.id));
        let f = f.to_str().unwrap();
        let o = bin::with_store(&srv.url, &["export", &r.id, "-o", f]);
        assert!(o.status.success(), "{}", text(&o));
        let o = bin::with_store(lite, &["import", f]);
        assert!(o.status.success(), "{}", text(&o));
        let a = bin::with_store(&srv.url, &["export", &r.id]);
        let b = bin::with_store(lite, &["export", &r.id]);
        assert!(a.status.success() && b.status.success());
        assert_eq!(
            a.stdout, b.stdout,
            "export differs between PostgreSQL and SQLite"
        );
    }

    // Fleet compare: runs picked by tag, from PostgreSQL.
    let o = bin::with_store(&srv.url, &["compare", "--tag", &tag, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    let o = bin::with_store(
        &srv.url,
        &["compare", "--tag", &tag, "--cpu", "EPYC", "--json"],
    );
    assert!(!o.status.success(), "one run is not a comparison");
    let o = bin::with_store(
        &srv.url,
        &["compare", &runs[0].id, "--host", "beta", "--json"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rel = v["rows"][0]["cells"][1]["relative_pct"].as_f64().unwrap();
    assert!((rel - 200.0 / 3.0).abs() < 1e-9, "{rel}");
}

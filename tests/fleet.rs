//! `cpuscope fleet`: a synthetic fleet made from a real run (planted
//! outliers, noise-only and environment-only hosts; tests/common/synthetic_fleet.rs)
//! read in-process over many seeds and through the binary from a store;
//! a real two-run store (two short `cpuscope run`s) is too little to compare;
//! bad input gets one line and a non-zero exit.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/synthetic_fleet.rs"]
mod synthetic_fleet;

use cpuscope::report::fleet::{self, Rule, Selection, Verdict};
use cpuscope::results::document::{latest_per_host, parse_since};
use cpuscope::results::sqlite::SqliteStore;
use cpuscope::results::store::Store;
use std::collections::BTreeSet;
use std::process::Output;
use synthetic_fleet::{NOT_OUTLIERS, PLANTED};

fn view(seed: u64) -> fleet::Fleet {
    let runs = synthetic_fleet::fleet(seed);
    fleet::fleet(&runs, Selection::default(), Rule::default()).unwrap()
}

#[test]
fn every_planted_outlier_is_found_and_nothing_else_over_twenty_seeds() {
    for seed in 1..=20 {
        let f = view(seed);
        assert!(f.enough, "seed {seed}");
        assert_eq!(f.groups.len(), 2, "seed {seed}: two CPU models");
        let g = &f.groups[0];
        assert_eq!(g.members.len(), 12);
        assert!(g.judged);
        let found: BTreeSet<(String, String)> = g
            .outliers
            .iter()
            .map(|o| (o.host.clone(), o.label.clone()))
            .collect();
        let want: BTreeSet<(String, String)> = PLANTED
            .iter()
            .map(|(h, l)| (h.to_string(), l.to_string()))
            .collect();
        assert_eq!(found, want, "seed {seed}: outliers found vs planted");
        for o in &g.outliers {
            assert!(o.worse, "seed {seed}: {}", o.text);
            assert!(!NOT_OUTLIERS.contains(&o.host.as_str()));
            assert!(o.evidence.len() >= 2, "{:?}", o.evidence);
        }
        // The other CPU model: two hosts, never judged.
        let small = &f.groups[1];
        assert_eq!(small.members.len(), 2);
        assert!(!small.judged);
        assert!(small.outliers.is_empty() && small.within_noise.is_empty());
        assert!(small
            .figures
            .iter()
            .all(|fig| fig.values.iter().all(|v| v.verdict == Verdict::NotJudged)));
    }
}

#[test]
fn the_evidence_names_the_figure_and_the_environment() {
    let f = view(1);
    let g = &f.groups[0];
    let o7 = g.outliers.iter().find(|o| o.host == "node07").unwrap();
    assert!(
        (-42.0..-34.0).contains(&o7.deviation_pct),
        "{}",
        o7.deviation_pct
    );
    assert_eq!(o7.peers, 11);
    assert!(
        o7.text.starts_with("node07: triad, all threads (width=avx512) 3")
            && o7.text.contains("% below the median of its 11 peers (worse); its environment differs: numa_balancing=1, THP=never"),
        "{}",
        o7.text
    );
    let fields: Vec<&str> = o7.environment.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["numa_balancing", "THP"]);
    assert_eq!(o7.environment[0].peers_value.as_deref(), Some("0"));
    assert!(
        o7.evidence[0].contains("result bandwidth:triad/"),
        "{:?}",
        o7.evidence
    );
    assert!(
        o7.evidence[1].contains("its own repetitions: n=3"),
        "{:?}",
        o7.evidence
    );

    let o3 = g.outliers.iter().find(|o| o.host == "node03").unwrap();
    assert!(o3.text.contains("% above the median of its 11 peers (worse); its recorded environment is the same as its peers'"), "{}", o3.text);

    // The noise-only host: far off, within its own noise, said so, not flagged.
    let n9 = g
        .within_noise
        .iter()
        .find(|o| o.host == "node09")
        .expect("node09 listed as within its own noise");
    assert!(n9.text.contains("within its own noise"), "{}", n9.text);
    assert!(n9.cv.unwrap() > 0.15);
    assert!(g.within_noise.iter().all(|o| o.host != "node11"));

    // Environment differences are listed even where no figure moved (node11).
    let diff = |field: &str| g.differences.iter().find(|d| d.field == field);
    let mc = diff("microcode").expect("microcode difference");
    assert_eq!(mc.values[0].hosts.len(), 11);
    assert_eq!(mc.values[1].hosts, ["node11"]);
    assert_eq!(mc.values[1].value.as_deref(), Some("0xdeadbeef"));
    assert!(diff("governor").is_some());
    assert!(diff("numa_balancing").is_some() && diff("THP").is_some());
    assert!(diff("kernel").is_none(), "same kernel everywhere");

    // Distributions: the triad figure has all twelve hosts.
    let tri = g
        .figures
        .iter()
        .find(|x| x.label == "triad, all threads (width=avx512)")
        .unwrap();
    assert_eq!(tri.n, 12);
    assert!(tri.min < tri.median * 0.7 && tri.mad > 0.0 && tri.max >= tri.median);
}

#[test]
fn a_stricter_or_looser_rule_moves_the_line() {
    let runs = synthetic_fleet::fleet(3);
    let loose = Rule {
        min_diff_pct: 40.0,
        ..Rule::default()
    };
    let f = fleet::fleet(&runs, Selection::default(), loose).unwrap();
    assert!(
        f.groups[0].outliers.is_empty(),
        "nothing planted is 40% off"
    );
    let mut two = runs.clone();
    two[1] = runs[0].clone();
    assert!(fleet::fleet(&two, Selection::default(), Rule::default())
        .unwrap_err()
        .to_string()
        .contains("two runs"));
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn one_line_error(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(1), "{what}: {}", text(o));
    cli::one_line_error(o);
}

/// A store of the synthetic fleet (seed 1) and an older run of node01 that
/// the views must leave out.
fn fleet_store(dir: &std::path::Path) -> String {
    let db = dir.join("fleet.db");
    let mut st = SqliteStore::open(&db).unwrap();
    st.put_runs(&synthetic_fleet::fleet(1)).unwrap();
    let mut old = synthetic_fleet::fleet(2).remove(0);
    old.id = "20261101T000000Z-node01-old".into();
    old.started_at = "2026-11-01T00:00:00Z".into();
    st.put_run(&old).unwrap();
    db.to_str().unwrap().to_string()
}

#[test]
fn through_the_binary_from_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet_store(dir.path());
    let db = db.as_str();

    let o = bin::command()
        .args(["--store", db, "fleet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("{out}");
    assert!(out.contains("Fleet: 14 host(s)"), "{out}");
    assert!(
        out.contains("node07: triad, all threads (width=avx512) 3"),
        "{out}"
    );
    assert!(out.contains("its environment differs: numa_balancing=1, THP=never"));
    assert!(out.contains("evidence: machine numa_balancing=1 (peers: 0)"));
    assert!(out.contains("node03: L1d latency (pages=2m) 3"));
    assert!(out.contains("node05: peak FMA, every core 3"));
    assert!(out.contains("node09: all-core clock") && out.contains("within its own noise"));
    assert!(out.contains("microcode") && out.contains("0xdeadbeef on node11"));
    assert!(out.contains("1 older run(s) of the same hosts left out"));
    assert!(out.contains("too little to compare: 2 host(s)"), "{out}");

    let html = dir.path().join("fleet.html");
    let o = bin::command()
        .args([
            "--store",
            db,
            "fleet",
            "--json",
            "--since",
            "2026-11-20",
            "--html",
        ])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "cpuscope.fleet/1");
    assert_eq!(v["runs"], 14);
    assert_eq!(v["selection"]["since"], "2026-11-20T00:00:00Z");
    let mut outl: Vec<&str> = v["groups"][0]["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["host"].as_str().unwrap())
        .collect();
    outl.sort();
    assert_eq!(outl, ["node03", "node05", "node07"]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("class=\"dot out\"") && page.contains("node07"));
    for external in ["<script", "href=", "src=", "@import"] {
        assert!(!page.contains(external), "the page is offline: {external}");
    }

    // Filters: a tag, a host list, a CPU model.
    let o = bin::command()
        .args(["--store", db, "fleet", "--cpu", "other cpu", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"], 2);
    assert_eq!(v["enough"], false);
    let o = bin::command()
        .args([
            "--store", db, "fleet", "--host", "node01", "--host", "node07", "--host", "node08",
            "--json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"], 3);
    assert_eq!(v["enough"], true);

    // Bad input: one line, exit 1 (clap's usage errors: exit 2).
    for (args, what) in [
        (vec!["fleet", "--since", "yesterday"], "--since"),
        (vec!["fleet", "--threshold", "0"], "--threshold"),
        (vec!["fleet", "--min-diff=-3"], "--min-diff"),
        (vec!["fleet", "--tag", "no-such-tag"], "no run"),
    ] {
        let o = bin::command()
            .args(["--store", db])
            .args(&args)
            .output()
            .unwrap();
        one_line_error(&o, what);
    }
    let o = bin::command()
        .args(["--store", db, "fleet", "--threshold", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn two_real_runs_are_too_little_to_compare() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("two.db");
    let db = db.to_str().unwrap();
    for label in ["real-a", "real-b"] {
        let o = bin::command()
            .args([
                "--store",
                db,
                "run",
                "--profile",
                "quick",
                "--only",
                "frequency",
            ])
            .args(["--no-html", "-q", "--host-label", label, "--tag", "two"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            text(&o).contains(&format!("-{label}-")),
            "the run id takes the label"
        );
    }
    let st = SqliteStore::open(std::path::Path::new(db)).unwrap();
    let hosts: Vec<String> = st
        .list_runs()
        .unwrap()
        .into_iter()
        .map(|s| s.host)
        .collect();
    assert_eq!(hosts, ["real-a", "real-b"]);
    let o = bin::command()
        .args(["--store", db, "fleet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("{out}");
    assert!(
        out.contains("too little to compare: 2 hosts in 1 group"),
        "{out}"
    );
    assert!(out.contains("Too little to compare"), "{out}");
    assert!(!out.contains("Outliers"), "{out}");
    let o = bin::command()
        .args(["--store", db, "fleet", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["enough"], false);
    assert_eq!(v["groups"][0]["judged"], false);

    // A bad label: one line, exit 1, nothing stored.
    let o = bin::command()
        .args([
            "--store",
            db,
            "run",
            "--profile",
            "quick",
            "--only",
            "frequency",
        ])
        .args(["--no-html", "-q", "--host-label", "bad label"])
        .output()
        .unwrap();
    one_line_error(&o, "--host-label");
    assert_eq!(st.list_runs().unwrap().len(), 2);
}

#[test]
fn since_and_latest_per_host() {
    use chrono::{TimeZone, Utc};
    let now = Utc.with_ymd_and_hms(2026, 11, 25, 12, 0, 0).unwrap();
    assert_eq!(
        parse_since("7d", now).unwrap(),
        Utc.with_ymd_and_hms(2026, 11, 18, 12, 0, 0).unwrap()
    );
    assert_eq!(
        parse_since("90m", now).unwrap(),
        Utc.with_ymd_and_hms(2026, 11, 25, 10, 30, 0).unwrap()
    );
    assert_eq!(
        parse_since("2026-11-01", now).unwrap(),
        Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap()
    );
    assert_eq!(
        parse_since("2026-11-01T05:00:00+01:00", now).unwrap(),
        Utc.with_ymd_and_hms(2026, 11, 1, 4, 0, 0).unwrap()
    );
    for bad in ["", "d", "-3d", "3y", "yesterday", "99999999999w"] {
        assert!(parse_since(bad, now).is_err(), "{bad}");
    }

    let dir = tempfile::tempdir().unwrap();
    let mut st = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    let mut runs = synthetic_fleet::fleet(1);
    runs.truncate(3);
    let mut again = runs[1].clone();
    again.id = "20261126T000000Z-node02-new".into();
    again.started_at = "2026-11-26T00:00:00Z".into();
    runs.push(again);
    st.put_runs(&runs).unwrap();
    let all = st.list_runs().unwrap();
    let (picked, older) = latest_per_host(&all, &[], &[], &[], None);
    assert_eq!(older, 1);
    let ids: Vec<&str> = picked.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.contains(&"20261126T000000Z-node02-new"));
    let since = Utc.with_ymd_and_hms(2026, 11, 26, 0, 0, 0).unwrap();
    let (picked, older) = latest_per_host(&all, &[], &[], &[], Some(since));
    assert_eq!((picked.len(), older), (1, 0));
}

/// `runs --host` lists only those hosts' runs (read through the store's
/// index on host, issue 38), and `fleet --host` keeps only them.
#[test]
fn runs_and_fleet_of_some_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet_store(dir.path());
    let db = db.as_str();
    let o = bin::command()
        .args([
            "--store", db, "runs", "--json", "--host", "node01", "--host", "node05",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut hosts: Vec<String> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"].as_str().unwrap().to_string())
        .collect();
    hosts.sort();
    assert_eq!(hosts, ["node01", "node01", "node05"], "{doc}");
    // A host with no run: said so, not an error.
    let o = bin::command()
        .args(["--store", db, "runs", "--host", "nowhere"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("no run of host nowhere in store '"),
        "{out}"
    );
    let o = bin::command()
        .args([
            "--store", db, "fleet", "--host", "node01", "--host", "node05",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Fleet: 2 host(s)"), "{out}{}", text(&o));
}

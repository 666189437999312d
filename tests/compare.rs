//! `cpuscope compare` on hand-made runs: the arithmetic (baseline, lower-is-
//! better inversion, geometric mean only over results on every run, missing
//! and unavailable results), the environment differences, the output forms,
//! the published reference data, and one-line errors.

use cpuscope::report::compare::{self, CellState};
use cpuscope::results::published;
use cpuscope::results::schema::{Environment, ResultRecord, Run, RunStatus};
use serde_json::{json, Value};
use std::process::Output;

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;

fn machine(cpu: &str, cores: usize) -> Value {
    json!({
        "identity": {"model_name": cpu, "architecture": "x86_64"},
        "cores": vec![json!({}); cores],
        "threads": vec![json!({}); cores * 2],
        "numa_nodes": [{"id": 0}],
        "knobs": {"knobs": [{"name": "numa_balancing", "value": "0"}]}
    })
}

fn rec(exp: &str, metric: &str, unit: &str, hib: bool, v: f64) -> ResultRecord {
    ResultRecord::new(exp, metric, unit, hib).with_samples(vec![v, v, v])
}

fn run(id: &str, host: &str, cpu: &str, results: Vec<ResultRecord>) -> Run {
    let mut env = Environment {
        kernel: Some("6.1.0".into()),
        governor: Some("performance".into()),
        ..Environment::default()
    };
    if host == "b" {
        env.kernel = Some("6.8.0".into());
    }
    let mut r = Run::new(
        host,
        "quick",
        machine(cpu, 4),
        env,
        json!({"cpus": "0-3"}),
        vec![],
    );
    r.id = id.to_string();
    r.status = RunStatus::Complete;
    r.finished_at = Some(r.started_at.clone());
    r.results = results;
    r
}

/// A: bw 10 GB/s, lat 100 ns, ghz 2, only-a 5
/// B: bw 20 GB/s, lat  50 ns, ghz 2 (noisy), c2c unavailable, only-b 1
/// C: bw  5 GB/s, lat 200 ns, ghz 4
fn three() -> Vec<Run> {
    let a = run(
        "run-a",
        "a",
        "Xeon A",
        vec![
            rec("memory", "bandwidth", "GB/s", true, 10.0),
            rec("memory", "latency", "ns", false, 100.0),
            rec("frequency", "single_core", "GHz", true, 2.0),
            rec("extra", "only_a", "x", true, 5.0),
            rec("c2c", "latency", "ns", false, 40.0),
        ],
    );
    let b = run(
        "run-b",
        "b",
        "EPYC B",
        vec![
            rec("memory", "latency", "ns", false, 50.0),
            rec("memory", "bandwidth", "GB/s", true, 20.0),
            ResultRecord::new("frequency", "single_core", "GHz", true)
                .with_samples(vec![1.0, 2.0, 3.0]),
            ResultRecord::unavailable("c2c", "latency", "ns", "one CPU only"),
            rec("extra", "only_b", "x", true, 1.0),
        ],
    );
    let c = run(
        "run-c",
        "c",
        "Xeon A",
        vec![
            rec("memory", "bandwidth", "GB/s", true, 5.0),
            rec("memory", "latency", "ns", false, 200.0),
            rec("frequency", "single_core", "GHz", true, 4.0),
            rec("c2c", "latency", "ns", false, 80.0),
        ],
    );
    vec![a, b, c]
}

fn row<'a>(c: &'a compare::Comparison, key_start: &str) -> &'a compare::Row {
    c.rows
        .iter()
        .find(|r| r.key.starts_with(key_start))
        .unwrap_or_else(|| panic!("no row {key_start}"))
}

fn close(a: Option<f64>, b: f64) {
    let a = a.expect("no figure");
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

#[test]
fn arithmetic_against_the_baseline() {
    let runs = three();
    let c = compare::compare(&runs, 0, false).unwrap();
    assert_eq!(c.runs.len(), 3);
    assert!(c.runs[0].baseline && !c.runs[1].baseline);
    assert_eq!(
        c.runs.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(),
        ["A", "B", "C"]
    );
    // Higher is better: value / baseline.
    let bw = row(&c, "memory:bandwidth");
    close(bw.cells[0].relative_pct, 100.0);
    close(bw.cells[1].relative_pct, 200.0);
    close(bw.cells[2].relative_pct, 50.0);
    // Lower is better: inverted (baseline / value), so above 100% is still better.
    let lat = row(&c, "memory:latency");
    assert!(!lat.higher_is_better);
    close(lat.cells[1].relative_pct, 200.0);
    close(lat.cells[2].relative_pct, 50.0);
    // Noise flag from the samples' CV.
    let f = row(&c, "frequency:single_core");
    assert!(f.cells[1].noisy && !f.cells[0].noisy);
    // Missing and unavailable are told apart and carry no figure.
    let only_a = row(&c, "extra:only_a");
    assert_eq!(only_a.cells[1].state, CellState::Missing);
    assert_eq!(only_a.cells[1].relative_pct, None);
    let c2c = row(&c, "c2c:latency");
    assert_eq!(c2c.cells[1].state, CellState::Unavailable);
    assert_eq!(
        c2c.cells[1].unavailable_reason.as_deref(),
        Some("one CPU only")
    );
    close(c2c.cells[2].relative_pct, 50.0);
    // Rows: the baseline's results first, in its order, then the others' new ones.
    let keys: Vec<&str> = c.rows.iter().map(|r| r.key.as_str()).collect();
    assert!(keys[0].starts_with("memory:bandwidth") && keys[4].starts_with("c2c"));
    assert!(keys[5].starts_with("extra:only_b"));

    // Geometric mean only over results measured on all three runs:
    // bandwidth, latency, frequency (c2c unavailable on B, extras missing).
    assert_eq!(c.geomean.results_used, 3);
    assert_eq!(c.geomean.results_total, 6);
    assert_eq!(c.geomean.left_out.get("missing on some run"), Some(&2));
    assert_eq!(
        c.geomean.left_out.get("not available on some run"),
        Some(&1)
    );
    close(c.geomean.per_run[0], 100.0);
    // B: 200%, 200%, 100% (median 2.0) → cube root of 4 = 158.74%
    close(c.geomean.per_run[1], 100.0 * 4f64.powf(1.0 / 3.0));
    // C: 50%, 50%, 200% → cube root of 0.5 = 79.37%
    close(c.geomean.per_run[2], 100.0 * 0.5f64.powf(1.0 / 3.0));
}

#[test]
fn another_baseline_inverts_the_figures() {
    let runs = three();
    let c = compare::compare(&runs, 1, false).unwrap();
    assert!(c.runs[1].baseline);
    let bw = row(&c, "memory:bandwidth");
    close(bw.cells[0].relative_pct, 50.0);
    close(bw.cells[2].relative_pct, 25.0);
    let lat = row(&c, "memory:latency");
    close(lat.cells[0].relative_pct, 50.0);
    close(lat.cells[2].relative_pct, 25.0);
    // The baseline's own results come first.
    assert!(c.rows[0].key.starts_with("memory:latency"));
    // c2c is not available on the baseline: no relative figure for anyone.
    let c2c = row(&c, "c2c:latency");
    assert_eq!(c2c.cells[0].relative_pct, None);
    assert_eq!(
        c2c.cells[0].relative_note.as_deref(),
        Some("the baseline has no figure")
    );
    close(c.geomean.per_run[1], 100.0);
    close(c.geomean.per_run[0], 100.0 * 0.25f64.powf(1.0 / 3.0));
}

#[test]
fn no_common_result_means_no_geometric_mean() {
    let a = run("x1", "a", "A", vec![rec("e", "m1", "x", true, 1.0)]);
    let b = run("x2", "b", "B", vec![rec("e", "m2", "x", true, 1.0)]);
    let c = compare::compare(&[a, b], 0, false).unwrap();
    assert_eq!(c.geomean.results_used, 0);
    assert_eq!(c.geomean.per_run, vec![None, None]);
    let t = compare::text::render(&c);
    assert!(t.contains("Geometric mean: not available"), "{t}");
    // A zero figure has no ratio and stays out of the mean.
    let a = run("z1", "a", "A", vec![rec("e", "m", "x", true, 0.0)]);
    let b = run("z2", "b", "B", vec![rec("e", "m", "x", true, 2.0)]);
    let c = compare::compare(&[a, b], 0, false).unwrap();
    assert_eq!(c.rows[0].cells[1].relative_pct, None);
    assert_eq!(c.geomean.left_out.get("not a positive figure"), Some(&1));
}

#[test]
fn refuses_what_cannot_be_compared() {
    let runs = three();
    assert!(compare::compare(&[], 0, false).is_err());
    assert!(compare::compare(&runs, 3, false).is_err());
    let twice = vec![runs[0].clone(), runs[0].clone()];
    let e = compare::compare(&twice, 0, false).unwrap_err().to_string();
    assert!(e.contains("given twice"), "{e}");
}

#[test]
fn environment_differences_come_first() {
    let runs = three();
    let c = compare::compare(&runs, 0, false).unwrap();
    let first_same = c.differences.iter().position(|d| !d.differs).unwrap();
    assert!(c.differences[..first_same].iter().all(|d| d.differs));
    let fields: Vec<&str> = c.differences[..first_same]
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert!(
        fields.contains(&"host") && fields.contains(&"CPU model") && fields.contains(&"kernel")
    );
    let same: Vec<&str> = c.differences[first_same..]
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert!(same.contains(&"cores") && same.contains(&"SMT") && same.contains(&"governor"));
    let smt = c.differences.iter().find(|d| d.field == "SMT").unwrap();
    assert_eq!(
        smt.values[0].as_deref(),
        Some("on (2.000 threads per core)")
    );
    let t = compare::text::render(&c);
    let d = t.find("Differences").unwrap();
    let r = t.find("Results").unwrap();
    assert!(d < r, "differences must come before results:\n{t}");
    assert!(t.contains("6.8.0"));
}

#[test]
fn csv_markdown_and_json_forms() {
    let runs = three();
    let c = compare::compare(&runs, 0, false).unwrap();
    let csv = compare::csv::render(&c);
    let lines: Vec<&str> = csv.lines().collect();
    let ncol = lines[0].split(',').count();
    assert_eq!(ncol, 16);
    // 6 results × 3 runs + 3 geometric-mean lines + header.
    assert_eq!(lines.len(), 1 + 6 * 3 + 3);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("memory:latency") && l.contains(",B,run-b,b,measured,50,200,")));
    assert!(lines
        .iter()
        .any(|l| l.contains(",B,run-b,b,unavailable,,,") && l.ends_with("one CPU only")));
    let md = compare::markdown::render(&c);
    assert!(
        md.contains("| **geometric mean** (3 of 6 results) | % | 100% | 158.7% | 79.4% |"),
        "{md}"
    );
    let j = serde_json::to_value(&c).unwrap();
    assert_eq!(j["schema"], "cpuscope.compare/1");
    assert_eq!(j["rows"][0]["cells"][1]["state"], "measured");
}

#[test]
fn published_figures_sit_beside_matching_results() {
    let sets = published::all().unwrap();
    assert!(sets.len() >= 7);
    for needed in [
        "seed000-bc",
        "seed000-openssl",
        "seed000-unixbench",
        "seed000-kunpeng-numa-tpmc",
        "seed001-epyc7742",
        "seed003-spec2000-opteron",
        "seed004-smt-simd-efficiency",
    ] {
        let s = published::by_id(needed).unwrap();
        assert!(!s.source.seed.is_empty() && !s.source.section.is_empty());
    }
    let bc = published::by_id("seed000-bc").unwrap();
    let machines: Vec<&str> = bc
        .figures
        .iter()
        .filter(|f| f.metric == "time" && f.params.get("expression") == Some(&json!("7^999999")))
        .map(|f| f.machine.as_str())
        .collect();
    for m in [
        "Hygon C86 5280",
        "Kunpeng 920-4826",
        "Phytium FT2500",
        "Intel Xeon (article's 'Intel')",
        "Alibaba Yitian 710",
    ] {
        assert!(machines.contains(&m), "{m} missing from the bc table");
    }

    // A measured one-core clock is matched (declared mapping) with seed 004's 4.8 GHz.
    let one = rec("frequency", "single_core", "GHz", true, 2.4).with_param("threads", 1);
    let m = published::matches_for(&one);
    assert!(m
        .iter()
        .any(|x| x.value == Some(4.8) && x.set.id == "seed004-smt-simd-efficiency"));
    let r = run("p1", "a", "A", vec![one]);
    let c = compare::compare(&[r], 0, true).unwrap();
    let p = &c.rows[0].published;
    assert!(!p.is_empty());
    close(p[0].relative_pct, 200.0);
    let t = compare::text::render(&c);
    assert!(
        t.contains("NOT measured here") && t.contains("004_6f70dba26e99b71d.txt"),
        "{t}"
    );
    // A scaled mapping: openssl kB/s published, MB/s measured.
    let aes = rec("workloads", "openssl_aes", "MB/s", true, 100.0)
        .with_param("alg", "aes-256-ige")
        .with_param("copies", "1")
        .with_param("bytes", 8192);
    let m = published::matches_for(&aes);
    let hygon = m
        .iter()
        .find(|x| x.figure.machine == "Hygon C86 5280")
        .unwrap();
    close(hygon.value, 79.55524);
    // aes-256-cbc is another code path: never set beside the IGE figures.
    let cbc = rec("workloads", "openssl_aes", "MB/s", true, 900.0)
        .with_param("alg", "aes-256-cbc")
        .with_param("copies", "1")
        .with_param("bytes", 8192);
    assert!(published::matches_for(&cbc).is_empty());
    // bc 7^999999 (the seed's exponent) is matched; a smaller quick-profile exponent is not.
    let bc = rec("workloads", "bc_pow", "s", false, 20.0).with_param("exp", 999999);
    assert_eq!(published::matches_for(&bc).len(), 5);
    let quick = rec("workloads", "bc_pow", "s", false, 2.0).with_param("exp", 99999);
    assert!(published::matches_for(&quick).is_empty());
    // Nothing for a workload no source published.
    assert!(published::matches_for(&rec("x", "y", "z", true, 1.0)).is_empty());
}

fn one_line_error(o: &Output, must: &str) {
    let e = cli::one_line_error(o);
    assert!(e.contains(must), "{e:?} lacks {must:?}");
}

#[test]
fn the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let mut files = Vec::new();
    for r in three() {
        let f = dir.path().join(format!("{}.json", r.id));
        std::fs::write(&f, serde_json::to_string_pretty(&r).unwrap()).unwrap();
        files.push(f.display().to_string());
    }
    // Run documents from other machines compare without importing them.
    let o = bin::with_store(&db, &["compare", &files[0], &files[1], "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);

    let o = bin::with_store(&db, &["import", &files[0], &files[1], &files[2]]);
    assert!(o.status.success());
    let o = bin::with_store(
        &db,
        &["compare", "run-a", "run-b", "run-c", "--baseline", "run-b"],
    );
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(t.contains("baseline B (run-b)"), "{t}");
    // Picked by CPU model (every matching run: two hosts, one run each).
    let o = bin::with_store(&db, &["compare", "--cpu", "xeon", "--csv"]);
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(csv.contains(",run-a,") && csv.contains(",run-c,") && !csv.contains(",run-b,"));
    let o = bin::with_store(
        &db,
        &["compare", "--host", "a", "--host", "b", "--markdown"],
    );
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("## Differences"));
    // The HTML page.
    let page = dir.path().join("cmp.html");
    let o = bin::with_store(
        &db,
        &[
            "compare",
            "run-a",
            "run-c",
            "--html",
            page.to_str().unwrap(),
        ],
    );
    assert!(o.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg") && html.contains("class=\"chart\"") && !html.contains("<script"));
    // One run with --published is fine; without, it is an error.
    let o = bin::with_store(&db, &["compare", "run-a", "--published"]);
    assert!(o.status.success());
    one_line_error(
        &bin::with_store(&db, &["compare", "run-a"]),
        "at least two runs",
    );
    one_line_error(&bin::with_store(&db, &["compare"]), "nothing to compare");
    one_line_error(
        &bin::with_store(&db, &["compare", "run-a", "nope"]),
        "no run 'nope'",
    );
    one_line_error(
        &bin::with_store(&db, &["compare", "run-a", "run-a"]),
        "given twice",
    );
    one_line_error(
        &bin::with_store(&db, &["compare", "--tag", "nope"]),
        "matches --tag nope",
    );
    one_line_error(
        &bin::with_store(&db, &["compare", "run-a", "missing.json"]),
        "missing.json",
    );

    // `published`
    let o = bin::with_store(&db, &["published"]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        t.contains("seed000-bc")
            && t.contains("Alibaba Yitian 710")
            && t.contains("did not measure")
    );
    let o = bin::with_store(&db, &["published", "seed001-epyc7742", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["source"]["seed"], "001_29931b9f097575a1.txt");
    one_line_error(
        &bin::with_store(&db, &["published", "nope"]),
        "no published set 'nope'",
    );
}

#[test]
fn fleet_selection_by_host_cpu_and_tag() {
    use cpuscope::results::document::select_runs;
    use cpuscope::results::store::RunSummary;
    let s = |id: &str, host: &str, cpu: &str, tags: &[&str], status: RunStatus| RunSummary {
        id: id.into(),
        started_at: format!("2026-01-01T00:00:0{}Z", &id[1..]),
        finished_at: None,
        status,
        interrupted: false,
        writer: None,
        host: host.into(),
        cpu_model: Some(cpu.into()),
        profile: "quick".into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        results: 1,
    };
    // Oldest first, as list_runs gives them.
    let all = vec![
        s(
            "r1",
            "web1",
            "Intel Xeon Gold",
            &["before"],
            RunStatus::Complete,
        ),
        s(
            "r2",
            "web2",
            "AMD EPYC 7742",
            &["before"],
            RunStatus::Complete,
        ),
        s(
            "r3",
            "web1",
            "Intel Xeon Gold",
            &["after"],
            RunStatus::Complete,
        ),
        s(
            "r4",
            "web1",
            "Intel Xeon Gold",
            &["after"],
            RunStatus::Partial,
        ),
        s(
            "r5",
            "web2",
            "AMD EPYC 7742",
            &["after"],
            RunStatus::Running,
        ),
    ];
    let ids = |v: Vec<RunSummary>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let none: Vec<String> = vec![];
    let v = |x: &[&str]| x.iter().map(|t| t.to_string()).collect::<Vec<_>>();
    // Latest finished run of each host (r5 is still running).
    assert_eq!(
        ids(select_runs(&all, &none, &none, &none, false)),
        ["r4", "r2"]
    );
    // CPU model: case-insensitive substring.
    assert_eq!(
        ids(select_runs(&all, &none, &v(&["epyc"]), &none, false)),
        ["r2"]
    );
    // Tags: one run per host and tag, in the order the tags were given.
    assert_eq!(
        ids(select_runs(
            &all,
            &none,
            &none,
            &v(&["after", "before"]),
            false
        )),
        ["r4", "r1", "r2"]
    );
    // Hosts in the order given; --every keeps all.
    assert_eq!(
        ids(select_runs(&all, &v(&["web2", "web1"]), &none, &none, true)),
        ["r2", "r1", "r3", "r4"]
    );
    // Different options must all match.
    assert!(select_runs(&all, &v(&["web2"]), &v(&["xeon"]), &none, false).is_empty());
}

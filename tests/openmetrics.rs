//! `export --format openmetrics` and `fleet --format openmetrics` on the
//! stored runs of tests/fixtures/runs, read back by a real, strict parser:
//! the `prometheus_client` Python package's OpenMetrics parser (from
//! `CPUSCOPE_PROM_PYTHON`, the system python3, or a virtual environment made
//! by scripts/install-prometheus-client.sh; without it: `skip_or_fail`).
//! Every family a gauge with host, cpu_model and run_id on each sample, no
//! label set twice, values equal to the stored figures in base units, no
//! sample (no 0, no NaN) for a figure that is not available, every host of
//! the fleet; a bad `--format` is a one-line error.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/skip.rs"]
mod skip;

use cpuscope::results::schema::Run;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FIXTURES: &[&str] = &[
    "lab-2s2c2t-quick.json",
    "vm-2cpu-compute-standard.json",
    "vm-2cpu-quick.json",
];

/// Parses standard input with prometheus_client's OpenMetrics parser and
/// prints the families as JSON (values as text: NaN is not JSON).
const PARSE: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "unit": f.unit, "help": f.documentation,
                "samples": [{"name": s.name, "labels": s.labels, "value": repr(float(s.value)),
                             "timestamp": s.timestamp is not None} for s in f.samples]})
print(json.dumps(out))
"#;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn can_parse(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A python3 that imports prometheus_client, installed into a virtual
/// environment if need be.
fn parser_python() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CPUSCOPE_PROM_PYTHON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if can_parse(&p) {
            Ok(p)
        } else {
            Err(format!(
                "CPUSCOPE_PROM_PYTHON={} cannot import prometheus_client",
                p.display()
            ))
        };
    }
    if can_parse(Path::new("python3")) {
        return Ok("python3".into());
    }
    let o = Command::new("sh")
        .arg(repo().join("scripts/install-prometheus-client.sh"))
        .output()
        .map_err(|e| format!("cannot run install-prometheus-client.sh: {e}"))?;
    let path = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    if !o.status.success() || !can_parse(&path) {
        return Err(format!(
            "prometheus_client could not be installed from PyPI: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(path)
}

#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

#[derive(Debug)]
struct Family {
    name: String,
    typ: String,
    unit: String,
    samples: Vec<Sample>,
}

/// The exposition read by prometheus_client (a panic with its message when
/// it refuses it), checked for what every exposition must hold.
fn parse(python: &Path, text: &str) -> Vec<Family> {
    use std::io::Write as _;
    let mut child = Command::new(python)
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the parser");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "prometheus_client refuses the exposition: {}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let families: Vec<Family> = doc.iter().map(family).collect();
    check_shape(text, &families);
    families
}

fn family(f: &Value) -> Family {
    let samples = f["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["timestamp"], false, "a timestamp: {s}");
            Sample {
                name: s["name"].as_str().unwrap().to_string(),
                labels: serde_json::from_value(s["labels"].clone()).unwrap(),
                value: s["value"].as_str().unwrap().parse().unwrap(),
            }
        })
        .collect();
    Family {
        name: f["name"].as_str().unwrap().to_string(),
        typ: f["type"].as_str().unwrap().to_string(),
        unit: f["unit"].as_str().unwrap().to_string(),
        samples,
    }
}

/// Gauges only, named `cpuscope_…` with their unit as suffix, every sample
/// kept by the parser (it drops a repeated label set silently), with
/// host/cpu_model/run_id, finite; `# EOF` last.
fn check_shape(text: &str, families: &[Family]) {
    assert!(text.ends_with("# EOF\n"), "no # EOF at the end");
    let lines = text.lines().filter(|l| !l.starts_with('#')).count();
    let parsed: usize = families.iter().map(|f| f.samples.len()).sum();
    assert_eq!(
        lines, parsed,
        "the parser dropped samples (a repeated label set)"
    );
    let mut names = BTreeSet::new();
    for f in families {
        assert!(names.insert(f.name.clone()), "family {} twice", f.name);
        assert_eq!(f.typ, "gauge", "{}", f.name);
        assert!(f.name.starts_with("cpuscope_"), "{}", f.name);
        if !f.unit.is_empty() {
            assert!(f.name.ends_with(&format!("_{}", f.unit)), "{}", f.name);
        }
        let mut sets = BTreeSet::new();
        for s in &f.samples {
            assert_eq!(s.name, f.name);
            for l in ["host", "cpu_model", "run_id"] {
                assert!(s.labels.contains_key(l), "{} without {l}", f.name);
            }
            assert!(s.value.is_finite(), "{} = {}", f.name, s.value);
            assert!(sets.insert(&s.labels), "{}: labels twice", f.name);
        }
    }
}

fn fixture(name: &str) -> Run {
    let p = repo().join("tests/fixtures/runs").join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A store holding the fixtures.
fn store(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    for f in FIXTURES {
        let p = repo().join("tests/fixtures/runs").join(f);
        let o = bin::with_store(&db, &["import", p.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    db
}

fn stdout_of(db: &Path, args: &[&str]) -> String {
    let o = bin::with_store(db, args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The sample of `family` whose labels are exactly the run's and `params`.
fn value_of(fams: &[Family], family: &str, run: &Run, params: &[(&str, &str)]) -> Option<f64> {
    let f = fams.iter().find(|f| f.name == family)?;
    f.samples
        .iter()
        .find(|s| {
            s.labels.get("run_id") == Some(&run.id)
                && s.labels.len() == 3 + params.len()
                && params
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(v))
        })
        .map(|s| s.value)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// The stored value of the record with `key` in `run`.
fn stored(run: &Run, key: &str) -> f64 {
    let r = run.results.iter().find(|r| r.key == key).expect(key);
    r.value.expect(key)
}

fn python_or_skip() -> Option<PathBuf> {
    match parser_python() {
        Ok(p) => Some(p),
        Err(e) => {
            skip::skip_or_fail(&format!("no OpenMetrics parser: {e}"));
            None
        }
    }
}

/// A family, the params of the sample, the record's key, the scale to base units.
type Expected<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, f64);

#[test]
fn export_is_valid_openmetrics_with_the_stored_figures() {
    let Some(py) = python_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    for f in FIXTURES {
        let run = fixture(f);
        let text = stdout_of(&db, &["export", &run.id, "--format", "openmetrics"]);
        let fams = parse(&py, &text);
        check_every_record(&run, &fams);
    }
    // Specific figures, by value: GHz as hertz, ns as seconds, GB/s as bytes per second, % as a ratio.
    let run = fixture("vm-2cpu-quick.json");
    let text = stdout_of(&db, &["export", &run.id, "--format", "openmetrics"]);
    let fams = parse(&py, &text);
    let checks: &[Expected] = &[
        (
            "cpuscope_frequency_single_core_hertz",
            &[("threads", "1")],
            "frequency:single_core/threads=1/GHz/v1",
            1e9,
        ),
        (
            "cpuscope_latency_l1d_seconds",
            &[("pages", "4k"), ("pattern", "random")],
            "latency:L1d/pages=4k,pattern=random/ns/v1",
            1e-9,
        ),
        (
            "cpuscope_bandwidth_read_bytes_per_second",
            &[
                ("scope", "L2"),
                ("store", "normal"),
                ("threads", "1"),
                ("width", "avx512"),
            ],
            "bandwidth:read/scope=L2,store=normal,threads=1,width=avx512/GB%2Fs/v1",
            1e9,
        ),
        (
            "cpuscope_rate_efficiency_ratio",
            &[("copies", "per_core"), ("workload", "bc_pow_49999")],
            "rate:efficiency/copies=per_core,workload=bc_pow_49999/%25/v1",
            1e-2,
        ),
    ];
    for (family, params, key, scale) in checks {
        let got = value_of(&fams, family, &run, params).unwrap_or_else(|| panic!("{family}"));
        let want = stored(&run, key) * scale;
        assert!(close(got, want), "{family}: {got} != {want}");
    }
    // The spread: CV and repetitions of the L1d figure.
    let rec = run
        .results
        .iter()
        .find(|r| r.key == "latency:L1d/pages=4k,pattern=random/ns/v1")
        .unwrap();
    let st = rec.stats.as_ref().unwrap();
    let l1 = [("pages", "4k"), ("pattern", "random")];
    let cv = value_of(&fams, "cpuscope_latency_l1d_cv_ratio", &run, &l1).unwrap();
    assert!(close(cv, st.cv), "{cv} != {}", st.cv);
    let n = value_of(&fams, "cpuscope_latency_l1d_repetitions", &run, &l1).unwrap();
    assert_eq!(n, st.n as f64);
}

/// Each measured record is one sample (and its value is not 0 unless the
/// stored one is); each unavailable one is a `cpuscope_figure_unavailable`
/// sample with its reason, and its own family has no sample for it.
fn check_every_record(run: &Run, fams: &[Family]) {
    fn of<'a>(f: &'a Family, run: &Run) -> Vec<&'a Sample> {
        f.samples
            .iter()
            .filter(|s| s.labels.get("run_id") == Some(&run.id))
            .collect()
    }
    let mine = |f| of(f, run);
    let spread = |n: &str| n.ends_with("_cv_ratio") || n.ends_with("_repetitions");
    let figures: usize = fams
        .iter()
        .filter(|f| !spread(&f.name) && f.name != "cpuscope_figure_unavailable")
        .filter(|f| f.name != "cpuscope_run_started_timestamp_seconds")
        .map(|f| mine(f).len())
        .sum();
    let measured = run.results.iter().filter(|r| r.value.is_some()).count();
    assert_eq!(
        figures, measured,
        "run {}: one sample per measured figure",
        run.id
    );
    let zeros = run.results.iter().filter(|r| r.value == Some(0.0)).count();
    let zero_samples: usize = fams
        .iter()
        .filter(|f| !spread(&f.name) && f.name != "cpuscope_figure_unavailable")
        .map(|f| mine(f).iter().filter(|s| s.value == 0.0).count())
        .sum();
    assert_eq!(
        zero_samples, zeros,
        "run {}: a 0 that was not measured",
        run.id
    );
    let unavailable = fams
        .iter()
        .find(|f| f.name == "cpuscope_figure_unavailable")
        .map(mine)
        .unwrap_or_default();
    let none = run.results.iter().filter(|r| r.value.is_none()).count();
    assert_eq!(
        unavailable.len(),
        none,
        "run {}: unavailable figures",
        run.id
    );
    for u in unavailable {
        assert_eq!(u.value, 1.0);
        assert!(!u.labels["reason"].is_empty());
        let mut labels = u.labels.clone();
        let figure = labels.remove("figure").unwrap();
        labels.remove("reason");
        if let Some(f) = fams.iter().find(|f| f.name == figure) {
            assert!(
                !f.samples.iter().any(|s| s.labels == labels),
                "{figure}: a sample for a figure that is not available: {labels:?}"
            );
        }
    }
}

#[test]
fn fleet_exposes_every_hosts_latest_run() {
    let Some(py) = python_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let text = stdout_of(&db, &["fleet", "--format", "openmetrics"]);
    let fams = parse(&py, &text);
    // The hosts and runs the fleet view reads.
    let view: Value = serde_json::from_str(&stdout_of(&db, &["fleet", "--json"])).unwrap();
    let mut members: BTreeMap<String, String> = BTreeMap::new();
    for g in view["groups"].as_array().unwrap() {
        for m in g["members"].as_array().unwrap() {
            let host = m["host"].as_str().unwrap().to_string();
            members.insert(host, m["run_id"].as_str().unwrap().to_string());
        }
    }
    let hosts: BTreeSet<String> = FIXTURES.iter().map(|f| fixture(f).host).collect();
    assert_eq!(members.keys().cloned().collect::<BTreeSet<_>>(), hosts);
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &fams {
        for s in &f.samples {
            seen.entry(s.labels["host"].clone())
                .or_default()
                .insert(s.labels["run_id"].clone());
        }
    }
    let want: BTreeMap<String, BTreeSet<String>> = members
        .iter()
        .map(|(h, id)| (h.clone(), BTreeSet::from([id.clone()])))
        .collect();
    assert_eq!(seen, want, "every host, with its latest run only");
    for id in members.values() {
        let run = FIXTURES
            .iter()
            .map(|f| fixture(f))
            .find(|r| &r.id == id)
            .unwrap();
        check_every_record(&run, &fams);
    }
    // -o writes the same exposition, through the careful writer.
    let out = dir.path().join("cpuscope.prom");
    let o = bin::with_store(
        &db,
        &[
            "fleet",
            "--format",
            "openmetrics",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
}

#[test]
fn export_to_a_file_writes_what_stdout_shows() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let text = stdout_of(&db, &["export", "latest", "--format", "openmetrics"]);
    assert!(text.ends_with("# EOF\n"));
    let out = dir.path().join("run.prom");
    let o = bin::with_store(
        &db,
        &[
            "export",
            "latest",
            "--format",
            "openmetrics",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    assert!(String::from_utf8_lossy(&o.stderr).contains("as OpenMetrics"));
    // The default format is still the run document.
    let json = stdout_of(&db, &["export", "latest"]);
    assert_eq!(
        json,
        stdout_of(&db, &["export", "latest", "--format", "json"])
    );
    assert!(json.trim_start().starts_with('{'));
}

#[test]
fn a_bad_format_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    for args in [
        &["export", "latest", "--format", "prometheus"][..],
        &["export", "latest", "--format", ""][..],
        &["fleet", "--format", "xml"][..],
        &["fleet", "--json", "--format", "openmetrics"][..],
    ] {
        let o = bin::with_store(&db, args);
        assert!(!o.status.success(), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("cpuscope: error: "), "{args:?}: {err}");
    }
}

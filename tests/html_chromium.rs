//! The HTML report and the comparison page in a real browser: headless
//! Chromium (Debian's `chromium`) loads each page from a file, a small
//! checker script (injected by this test, not part of the pages) verifies
//! that every chart (`svg.chart`) has marks and a size and no NaN, and that
//! nothing reached the console; then a screenshot is saved under
//! target/tmp/. Without Chromium it fails under CI and prints SKIP elsewhere (tests/common/skip.rs; CI
//! installs it: .ci/run).

#[path = "common/skip.rs"]
mod skip;
#[path = "common/synthetic_fleet.rs"]
mod synthetic_fleet;

use cpuscope::experiments::memory::latency;
use cpuscope::experiments::memory::payload::{CurveData, CurvePoint};
use cpuscope::report::{compare, fleet, html};
use cpuscope::results::schema::{Environment, ResultRecord, Run, RunStatus};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for d in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ] {
            let p = d.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Records console errors and uncaught exceptions from the start of the page.
const EARLY: &str = r#"<script>window.__errs=[];window.addEventListener('error',function(e){window.__errs.push('uncaught: '+e.message)});(function(){var ce=console.error,cw=console.warn;console.error=function(){window.__errs.push('console.error: '+Array.prototype.join.call(arguments,' '));ce.apply(console,arguments)};console.warn=function(){window.__errs.push('console.warn: '+Array.prototype.join.call(arguments,' '));cw.apply(console,arguments)};})();</script>"#;

/// Checks every chart; writes the verdict into <html data-check="ok:N" | "err:...">.
const CHECK: &str = r#"<script>(function(){try{var cs=document.querySelectorAll('svg.chart'),bad=[];for(var i=0;i<cs.length;i++){var c=cs[i],m=c.querySelectorAll('rect.bar,[data-v],polyline').length,s=c.outerHTML,b=c.getBoundingClientRect();var vals=c.querySelectorAll('[data-v]'),badv=0;for(var j=0;j<vals.length;j++){if(!isFinite(parseFloat(vals[j].getAttribute('data-v'))))badv++;}if(m==0||badv>0||s.indexOf('NaN')>=0||s.indexOf('Infinity')>=0||!(b.width>0&&b.height>0))bad.push(i+' '+(c.getAttribute('aria-label')||''));}var errs=window.__errs||[];if(errs.length)bad.push('errors: '+errs.join(' / '));document.documentElement.setAttribute('data-check',bad.length?'err:'+bad.join(' | '):'ok:'+cs.length);}catch(e){document.documentElement.setAttribute('data-check','err:exception '+e);}})();</script>"#;

fn with_checker(page: &str) -> String {
    let p = page.replacen("<head>", &format!("<head>{EARLY}"), 1);
    match p.rfind("</body>") {
        Some(i) => format!("{}{CHECK}{}", &p[..i], &p[i..]),
        None => format!("{p}{CHECK}"),
    }
}

fn chrome_cmd(bin: &Path, profile: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Load `page` in Chromium: the number of charts (the checker's verdict must
/// be ok), and a screenshot at `shot`.
fn check_in_browser(bin: &Path, name: &str, page: &str, shot: &Path) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.html"));
    std::fs::write(&file, with_checker(page)).unwrap();
    let url = format!("file://{}", file.display());
    let out = chrome_cmd(bin, &dir.path().join("profile"))
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(&url)
        .output()
        .expect("cannot start chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: chromium failed: {log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{name}: console output: {console:?}");
    let verdict = dom
        .split("data-check=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or("no verdict (the checker did not run)")
        .to_string();
    assert!(verdict.starts_with("ok:"), "{name}: {verdict}");
    let n: usize = verdict[3..].parse().unwrap();

    // The screenshot, of the page without the checker.
    std::fs::write(&file, page).unwrap();
    let _ = std::fs::remove_file(shot);
    let out = chrome_cmd(bin, &dir.path().join("profile2"))
        .arg("--window-size=1200,2400")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .expect("cannot start chromium");
    assert!(out.status.success(), "{name}: screenshot failed");
    let png = std::fs::read(shot).expect("no screenshot written");
    assert!(
        png.len() > 1000 && png.starts_with(b"\x89PNG"),
        "{name}: not a PNG"
    );
    eprintln!("{name}: {n} chart(s), screenshot {}", shot.display());
    n
}

fn machine() -> serde_json::Value {
    json!({
        "identity": {"model_name": "Test CPU 9000", "architecture": "x86_64"},
        "cpus": {"online": "0-3", "usable": "0-3"},
        "cores": [{"cpus": "0"}, {"cpus": "1"}, {"cpus": "2"}, {"cpus": "3"}],
        "threads": [{"cpu": 0, "node": 0}, {"cpu": 1, "node": 0}, {"cpu": 2, "node": 1}, {"cpu": 3, "node": 1}],
        "numa_nodes": [{"id": 0, "cpus": "0-1", "distances": [10, 20]}, {"id": 1, "cpus": "2-3", "distances": [20, 10]}],
        "knobs": {"knobs": [{"name": "numa_balancing", "value": "1"}]}
    })
}

fn run(host: &str, ghz: f64, lat_scale: f64) -> Run {
    let mut r = Run::new(
        host,
        "quick",
        machine(),
        Environment::default(),
        json!({"cpus": "0-3"}),
        vec![],
    );
    r.status = RunStatus::Complete;
    r.finished_at = Some(r.started_at.clone());
    r.results = vec![
        ResultRecord::new("frequency", "single_core", "GHz", true)
            .with_param("threads", 1)
            .with_samples(vec![ghz, ghz * 1.001, ghz * 0.999])
            .with_data(json!({"declared": {"cpufreq_max_mhz": 3000.0}})),
        ResultRecord::new("frequency", "all_cores", "GHz", true)
            .with_param("threads", "per_core")
            .with_samples(vec![ghz * 0.85, ghz * 0.86, ghz * 0.84])
            .with_data(json!({"per_thread_ghz": vec![ghz * 0.85; 4]})),
        ResultRecord::of(latency::CURVE, "ns", false)
            .with_param("pattern", "random")
            .with_samples(vec![90.0 * lat_scale, 91.0 * lat_scale, 89.0 * lat_scale])
            .with_payload(&CurveData {
                points: [
                    (16384, 1.2),
                    (262144, 4.0),
                    (4194304, 12.0),
                    (67108864, 90.0),
                ]
                .into_iter()
                .map(|(bytes, ns)| CurvePoint {
                    bytes,
                    ns: ns * lat_scale,
                    min: ns * lat_scale,
                    ..CurvePoint::default()
                })
                .collect(),
                ..CurveData::default()
            }),
        ResultRecord::unavailable("c2c", "latency", "ns", "one CPU only"),
    ];
    for (k, bw) in [(1, 10.0), (2, 18.0), (4, 19.0)] {
        r.results.push(
            ResultRecord::new("memory", "bandwidth", "GB/s", true)
                .with_param("threads", k)
                .with_samples(vec![bw * ghz / 3.0; 3]),
        );
    }
    r
}

#[test]
fn report_and_comparison_render_in_chromium() {
    let Some(bin) = chromium() else {
        skip::skip_or_fail("chromium is not installed (apt-get install chromium)");
        return;
    };
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_chromium");
    std::fs::create_dir_all(&shots).unwrap();

    let a = run("alpha", 3.0, 1.0);
    let b = run("beta", 2.4, 1.3);
    let report = html::render_run(&a);
    let n = check_in_browser(&bin, "report", &report, &shots.join("report.png"));
    assert!(n >= 1, "the report has no chart");
    assert!(report.contains("Advice"), "the report shows no advice");

    let runs = vec![a, b];
    let c = compare::compare(&runs, 0, true).unwrap();
    let page = compare::html::render(&c, &runs);
    let n = check_in_browser(&bin, "compare", &page, &shots.join("compare.png"));
    // Geometric mean, one relative chart per experiment (3), one overlaid
    // curve (the latency curve), published figures beside frequency (2).
    assert!(n >= 6, "only {n} charts on the comparison page");
    assert!(page.contains("<polyline"), "no overlaid curve");
    assert!(page.contains("not measured here"));
}

#[test]
fn fleet_page_renders_in_chromium() {
    let Some(bin) = chromium() else {
        skip::skip_or_fail("chromium is not installed (apt-get install chromium)");
        return;
    };
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_chromium");
    std::fs::create_dir_all(&shots).unwrap();
    let runs = synthetic_fleet::fleet(1);
    let view = fleet::fleet(&runs, fleet::Selection::default(), fleet::Rule::default()).unwrap();
    let page = fleet::html::render(&view);
    let n = check_in_browser(&bin, "fleet", &page, &shots.join("fleet.png"));
    // A strip plot per key figure of each group.
    let figures: usize = view.groups.iter().map(|g| g.figures.len()).sum();
    assert_eq!(n, figures, "one chart per figure");
    assert!(n >= 20, "only {n} strip plots");
    // The three planted outliers are marked and named; the noise-only host is a ring.
    assert_eq!(page.matches("class=\"dot out\"").count(), 3);
    assert!(page.matches("class=\"dot noise\"").count() >= 1);
    assert!(page.contains("numa_balancing=1"));
}

#[test]
fn the_checker_catches_an_empty_chart_and_console_errors() {
    let Some(bin) = chromium() else {
        skip::skip_or_fail("chromium is not installed (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = r#"<!DOCTYPE html><html><head><title>t</title></head><body><svg class="chart" width="10" height="10"></svg></body></html>"#;
    let file = dir.path().join("bad.html");
    std::fs::write(&file, with_checker(page)).unwrap();
    let out = chrome_cmd(&bin, &dir.path().join("p"))
        .args(["--dump-dom"])
        .arg(format!("file://{}", file.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains("data-check=\"err:0"), "{dom}");

    let page = r#"<!DOCTYPE html><html><head><title>t</title></head><body><script>console.error("x")</script></body></html>"#;
    std::fs::write(&file, with_checker(page)).unwrap();
    let out = chrome_cmd(&bin, &dir.path().join("p2"))
        .args(["--dump-dom"])
        .arg(format!("file://{}", file.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains("errors: console.error: x"), "{dom}");
}

#[test]
fn a_recorded_two_socket_report_opens_with_the_verdict() {
    let Some(bin) = chromium() else {
        skip::skip_or_fail("chromium is not installed (apt-get install chromium)");
        return;
    };
    // A quick run recorded in the QEMU lab's 2-socket SMT guest (samples dropped).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/runs/lab-2s2c2t-quick.json"
    );
    let run: Run = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let page = html::render_run(&run);
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_chromium");
    std::fs::create_dir_all(&shots).unwrap();
    let n = check_in_browser(&bin, "lab-2s", &page, &shots.join("lab-2s.png"));
    assert!(n >= 3, "{n} charts");
    // The verdict card comes first, then the table of contents.
    let v = page.find("class=\"verdict\"").expect("no verdict card");
    let toc = page.find("class=\"toc\"").expect("no table of contents");
    let machine = page.find("id=\"machine\"").unwrap();
    assert!(v < toc && toc < machine);
    assert!(
        page.contains("2 sockets") && page.contains("SMT2"),
        "verdict machine line"
    );
    // Every chart in a figure with a caption; hover values on bars, points and cells.
    assert_eq!(
        page.matches("<figure").count(),
        page.matches("<figcaption>").count()
    );
    assert!(page.matches("<title>").count() >= 10, "few hover titles");
    assert!(page.contains("id=\"exp-c2c\"") && page.contains("id=\"exp-numa_matrix\""));
    assert!(page.contains("@media print"), "no print stylesheet");
}

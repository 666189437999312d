//! The verdict `run` and `show` end with: one screen (at most 40 lines of at
//! most 100 columns) for this machine's recorded run and for a recorded
//! 2-socket run, "not available" reasons grouped by cause, no colour unless
//! asked for.

#[path = "common/bin.rs"]
mod bin;
use cpuscope::report::verdict::{self, cause, grouped_unavailable, Style, MAX_LINES};
use cpuscope::results::schema::{Environment, ResultRecord, Run, RunStatus};
use serde_json::json;
use std::process::Command;

fn fixture(name: &str) -> Run {
    let p = format!("{}/tests/fixtures/runs/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn fits(text: &str, width: usize) {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= MAX_LINES, "{} lines:\n{text}", lines.len());
    for l in &lines {
        assert!(l.chars().count() <= width, "wider than {width}: {l:?}");
    }
    assert!(!text.contains('\x1b'), "colour codes in plain text");
}

#[test]
fn this_machines_run_fits_one_screen() {
    // A quick run of the 2-CPU KVM guest this project is developed on.
    let run = fixture("vm-2cpu-quick.json");
    let text = verdict::render(&run, Some("/tmp/r.html"), &Style::plain(100));
    fits(&text, 100);
    for key in [
        "Machine",
        "Clock",
        "Latency",
        "Bandwidth",
        "Core↔core",
        "Compute",
        "SIMD",
        "Noise",
        "n/a",
        "More",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(key)),
            "no {key} line:\n{text}"
        );
    }
    assert!(text.contains("HTML report: /tmp/r.html"));
    assert!(text.contains(&format!("cpuscope show {} --all", run.id)));
    // Narrow terminals still fit (fewer findings and causes if need be).
    fits(&verdict::render(&run, None, &Style::plain(60)), 60);
}

#[test]
fn a_two_socket_run_fits_one_screen() {
    // A quick run recorded in the QEMU lab's 2 sockets × 2 cores × 2 threads guest.
    let run = fixture("lab-2s2c2t-quick.json");
    let text = verdict::render(&run, None, &Style::plain(100));
    fits(&text, 100);
    assert!(
        text.contains("2 sockets") && text.contains("SMT2") && text.contains("2 NUMA nodes"),
        "{text}"
    );
    assert!(
        text.contains("NUMA: local") && text.contains("remote up to"),
        "{text}"
    );
    assert!(
        text.contains("automatic NUMA balancing"),
        "findings: {text}"
    );
}

#[test]
fn colour_only_when_asked() {
    let run = fixture("lab-2s2c2t-quick.json");
    let coloured = verdict::render(
        &run,
        None,
        &Style {
            width: 100,
            color: true,
        },
    );
    assert!(coloured.contains("\x1b["), "no colour with color=true");
    // The binary piped: no colour, even with a terminal-like COLUMNS.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let path = format!(
        "{}/tests/fixtures/runs/lab-2s2c2t-quick.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let bin = bin::PATH;
    let o = Command::new(bin)
        .args(["--store", db.to_str().unwrap(), "import", &path])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for env in [None, Some("1")] {
        let mut c = Command::new(bin);
        c.args(["--store", db.to_str().unwrap(), "show", "latest"])
            .env("COLUMNS", "100");
        if let Some(v) = env {
            c.env("NO_COLOR", v);
        }
        let o = c.output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success());
        fits(&text, 100);
    }
    // show --all keeps the full text, --summary the per-experiment sections.
    let all = Command::new(bin)
        .args(["--store", db.to_str().unwrap(), "show", "latest", "--all"])
        .output()
        .unwrap();
    let all = String::from_utf8_lossy(&all.stdout);
    assert!(
        all.lines().count() > 80 && all.contains("Results ("),
        "{}",
        &all[..all.len().min(400)]
    );
    let sum = Command::new(bin)
        .args([
            "--store",
            db.to_str().unwrap(),
            "show",
            "latest",
            "--summary",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&sum.stdout).contains("Not available on this machine"));
}

fn unavailable(exp: &str, metric: &str, reason: &str) -> ResultRecord {
    ResultRecord::unavailable(exp, metric, "x", reason)
}

#[test]
fn not_available_reasons_group_by_cause() {
    let pmu = "needs cycles: cycles not supported: ENOENT: no hardware PMU is registered (event sources: breakpoint, software); this is a virtual machine whose hypervisor exposes no virtual PMU";
    let pmu2 = "needs instructions and cycles, both not supported: ENOENT: no hardware PMU is registered (event sources: software); this is a virtual machine whose hypervisor exposes no virtual PMU";
    let mut results = Vec::new();
    for _ in 0..6 {
        results.push(unavailable("workloads", "ipc", pmu2));
        results.push(unavailable("workloads", "ghz", pmu));
    }
    results.push(unavailable(
        "frequency",
        "smt_pair",
        "no SMT: every usable core runs one hardware thread",
    ));
    results.push(unavailable(
        "simd",
        "smt_yield",
        "no SMT among the usable CPUs: all logical CPUs = one thread per core",
    ));
    results.push(unavailable(
        "placement",
        "memory_latency",
        "not applicable: one NUMA node: there is no remote memory",
    ));
    let mut run = Run::new(
        "h",
        "quick",
        json!({}),
        Environment::default(),
        json!({}),
        vec![],
    );
    run.status = RunStatus::Complete;
    run.results = results;
    let g = grouped_unavailable(&run);
    assert_eq!(g.len(), 3, "{g:#?}");
    // The biggest cause first, printed once, with what it covers counted.
    assert_eq!(g[0].0, "no hardware counters (PMU) in this VM");
    assert_eq!(g[0].1, "workloads ghz ×6, workloads ipc ×6");
    assert_eq!(g[1].0, "no SMT");
    assert!(g[1].1.contains("frequency smt_pair") && g[1].1.contains("simd smt_yield"));
    assert_eq!(g[2].0, "one NUMA node");
    assert_eq!(
        cause("permission denied: perf_event_paranoid is 3"),
        "not permitted to count (perf_event_paranoid)"
    );
    // A 2-node machine whose packages hold one node each: not "one NUMA
    // node" (the lab's ARM guest was filed so by a substring match).
    for (reason, want) in [
        (
            "not applicable: no package holds two NUMA nodes",
            "one NUMA node per socket",
        ),
        (
            "not applicable: no socket holds two NUMA nodes with 2 usable cores each",
            "one NUMA node per socket",
        ),
        (
            "not applicable: every other node is at the same distance as the nearest",
            "one remote distance (no farther node)",
        ),
        (
            "not applicable: no NUMA node holds 4 usable cores",
            "NUMA nodes smaller than the placement set",
        ),
        (
            "remote pages not available: numa_maps unreadable",
            "remote pages not available",
        ),
    ] {
        assert_eq!(cause(reason), want, "{reason}");
    }
    // An unknown reason is its own cause, shortened to its first clause.
    assert_eq!(
        cause("the moon is in the way: details"),
        "the moon is in the way"
    );
}

#[test]
fn a_missing_cache_level_says_why_on_the_latency_line() {
    // This machine's standard run: the 2 MiB-page L3 plateau sat at memory
    // latency (a VM whose host memory spans nodes), so L3 is not available.
    let mut run = fixture("vm-2cpu-quick.json");
    let reason = "finding: L3: the plateau ending at ~624.9 MiB (156.8 ns) is within ×1.5 of the memory plateau (219.0 ns): memory at another distance, not the declared 480 MiB";
    let mut found = false;
    for r in run.results.iter_mut() {
        let two_m = r.params.get("pages").and_then(|v| v.as_str()) == Some("2m")
            && r.params.get("pattern").and_then(|v| v.as_str()) == Some("random");
        if r.experiment == "latency" && r.metric.starts_with("L3") && two_m {
            r.value = None;
            r.unavailable_reason = Some(reason.into());
            found = true;
        }
    }
    assert!(found, "the fixture has a 2 MiB-page L3 record");
    let text = verdict::render(&run, None, &Style::plain(100));
    assert!(text.contains("L3 n/a (plateau at memory latency"), "{text}");
}

/// A figure a check found implausible (the ARM lab's all-cores FMA figure
/// under one core's) is marked `?` where the verdict shows it and counted
/// on the Noise line; an SVE peak is named by its recorded vector length.
#[test]
fn an_implausible_figure_is_marked_and_counted() {
    let mut run = fixture("vm-2cpu-quick.json");
    run.results.retain(|r| r.experiment != "peak");
    let rec = |threads: &str, v: f64| {
        ResultRecord::new("peak", "fma_flops", "GFLOP/s", true)
            .with_param("width", "sve")
            .with_param("threads", threads)
            .with_samples(vec![v, v, v])
            .with_data(json!({"vector_bits": 512}))
    };
    run.results.push(rec("1", 0.33));
    run.results
        .push(rec("per_core", 0.0011).with_suspect("8 cores together measured under one core"));
    let text = verdict::render(&run, None, &Style::plain(100));
    let compute = text.lines().find(|l| l.starts_with("Compute")).unwrap();
    assert!(
        compute.contains("FP64 FMA SVE 512-bit, one core"),
        "{compute}"
    );
    assert!(
        compute.contains("all cores 0.001100 GFLOP/s ?"),
        "{compute}"
    );
    // The Noise line (it may wrap).
    let noise = &text[text.find("\nNoise").unwrap()..];
    assert!(
        noise.replace('\n', " ").contains("1 implausible (marked"),
        "{noise}"
    );
}

/// Issue 24: a run measured while other programs held the CPUs says so on
/// its first lines, its findings from measured figures are marked (not
/// stated as hardware facts), and the Noise line says why.
#[test]
fn a_busy_machine_is_said_first_and_its_findings_are_marked() {
    use cpuscope::machine::activity::CpuTimes;
    use cpuscope::results::schema::Activity;
    let mut run = fixture("vm-2cpu-quick.json");
    let quiet = verdict::render(&run, None, &Style::plain(100));
    assert!(!quiet.contains("BUSY"), "{quiet}");
    // Two `yes` on 2 CPUs for 60 s: 118 CPU-s of others' time, 1% steal.
    let a = CpuTimes {
        total: 0,
        idle: 0,
        steal: 0,
        own: 0,
    };
    let b = CpuTimes {
        total: 12_000,
        idle: 100,
        steal: 120,
        own: 0,
    };
    let act = Activity::between(&a, &b, 60.0, 2, 100.0).expect("activity");
    assert!(
        act.busy && (act.others_share - 0.98).abs() < 0.01,
        "{act:?}"
    );
    run.environment.activity = Some(act);
    // A finding from a measured figure: one core below the declared clock.
    for r in run.results.iter_mut() {
        if r.experiment == "frequency" && r.metric == "single_core" {
            r.value = Some(r.value.unwrap_or(1000.0) * 0.5);
        }
    }
    let text = verdict::render(&run, None, &Style::plain(100));
    fits(&text, 100);
    let lines: Vec<&str> = text.lines().collect();
    let busy = lines
        .iter()
        .position(|l| l.starts_with("BUSY"))
        .unwrap_or_else(|| panic!("no BUSY line:\n{text}"));
    assert!(busy <= 4, "BUSY is not among the first lines:\n{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("(98%)"), "{text}");
    assert!(
        flat.contains("the machine was busy, other programs 98% of its CPU time, steal 1.0%"),
        "{text}"
    );
    if let Some(l) = lines.iter().find(|l| l.trim_start().starts_with("! ")) {
        panic!("a warning stated as a fact on a busy machine: {l}\n{text}");
    }
    let f = cpuscope::report::advice::findings(&run);
    let measured: Vec<_> = f
        .iter()
        .filter(|f| {
            f.evidence
                .iter()
                .any(|e| e.source == "environment.activity")
        })
        .collect();
    assert!(!measured.is_empty(), "{f:?}");
    for m in measured {
        assert!(m.title.contains("busy machine"), "{}", m.title);
    }
    // An idle run has no activity note; older runs (no activity) read.
    let quiet_again: Run =
        serde_json::from_str(&serde_json::to_string(&fixture("vm-2cpu-quick.json")).unwrap())
            .unwrap();
    assert!(quiet_again.environment.activity.is_none());
}

//! Compute room: kernels agree with each other and with RFC 8439, the SMT
//! arithmetic on seed 004's published table, the published data files, the
//! text tables, and the commands' answers to bad input. No timings are
//! asserted.
#![allow(clippy::needless_update)]

#[path = "common/bin.rs"]
mod bin;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/hwloc_trees.rs"]
mod hwloc_trees;
#[path = "common/seed_trees.rs"]
mod seed_trees;

#[path = "common/emulator.rs"]
mod emulator;
use cpuscope::base::CpuSet;
use cpuscope::experiments::compute::peak;
use cpuscope::experiments::compute::rate::text::render_rate;
use cpuscope::experiments::compute::rate::{parse_workload, RateWorkload};
use cpuscope::experiments::compute::simd::text::render_simd_configurations;
use cpuscope::experiments::compute::simd::{ordered_cpus, smt_advice, smt_yield, thread_points};
use cpuscope::experiments::experiment::Profile;
use cpuscope::kernels::chacha::{self, Variant};
use cpuscope::kernels::fma::Width;
use cpuscope::machine::topology::Core;
use cpuscope::machine::MachineInfo;
use cpuscope::report::verdict::{self, Style};
use cpuscope::results::published;
use cpuscope::results::schema::{ResultRecord, Run};
use serde_json::json;

#[test]
fn every_supported_variant_writes_the_same_keystream() {
    // Odd lengths (vector steps plus a scalar tail) and a counter that wraps.
    let key: [u8; 32] = core::array::from_fn(|i| (i * 7 + 3) as u8);
    let nonce: [u8; 12] = core::array::from_fn(|i| (0xa0 + i) as u8);
    for blocks in [1usize, 3, 4, 15, 16, 17, 33, 64] {
        for counter in [0u32, 1, 0xffff_fff5] {
            let mut want = vec![0u8; blocks * 64];
            chacha::keystream(Variant::Scalar, &key, &nonce, counter, &mut want).unwrap();
            for v in Variant::ALL.into_iter().filter(|v| v.supported()) {
                let mut got = vec![0u8; blocks * 64];
                chacha::keystream(v, &key, &nonce, counter, &mut got).unwrap();
                assert_eq!(
                    got,
                    want,
                    "{} blocks={blocks} counter={counter:#x}",
                    v.name()
                );
            }
        }
    }
}

#[test]
fn unsupported_variants_are_refused_with_the_reason() {
    let mut buf = [0u8; 64];
    for v in Variant::ALL.into_iter().filter(|v| !v.supported()) {
        let e = chacha::keystream(v, &chacha::RFC_KEY, &chacha::RFC_NONCE_232, 1, &mut buf)
            .unwrap_err();
        assert!(e.contains("not available"), "{e}");
    }
    // This build always has the scalar form, and x86_64 always has SSE2.
    assert!(Variant::Scalar.supported());
    if cfg!(target_arch = "x86_64") {
        assert!(Variant::Sse2.supported());
        assert!(!Variant::Neon.supported());
        assert!(Variant::Neon
            .unsupported_reason()
            .unwrap()
            .contains("aarch64"));
    }
}

#[test]
fn rfc8439_vectors_hold_for_every_supported_variant() {
    for v in Variant::ALL.into_iter().filter(|v| v.supported()) {
        chacha::check_rfc8439(v).unwrap();
    }
}

#[test]
fn fma_widths_follow_the_cpu() {
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        Width::V512.supported(),
        std::arch::is_x86_feature_detected!("avx512f")
    );
    for w in Width::ALL.into_iter().filter(|w| !w.supported()) {
        assert_eq!(
            cpuscope::kernels::fma::run(w, 10),
            0,
            "unsupported width runs nothing"
        );
    }
}

/// Seed 004's table (Intel 11th gen i7, 8 cores / 16 threads, turbo on),
/// from the published set: it reproduces its own efficiencies, and gives
/// the SMT yield it implies and the advice the figures support.
#[test]
fn seed004_table_gives_the_seeds_conclusion() {
    let set = published::by_id("seed004-smt-simd-efficiency").unwrap();
    let fig = |metric: &str, row: &str, isa: &str| {
        set.figures
            .iter()
            .find(|f| {
                f.metric == metric
                    && f.params.get("row") == Some(&json!(row))
                    && f.params.get("isa") == Some(&json!(isa))
            })
            .and_then(|f| f.value)
            .unwrap_or_else(|| panic!("{metric} {row} {isa} missing"))
    };
    let names = ["scalar", "sse", "avx2", "avx512"];
    // Every row of table 2 reproduces its own efficiency column:
    // per-thread throughput at N threads / throughput of 1 thread, same settings.
    for (row, one, n) in [
        ("1-2", "1-1", 8.0),
        ("1-3", "1-1", 16.0),
        ("2-2", "2-1", 8.0),
        ("3-2", "3-1", 8.0),
        ("3-3", "3-1", 16.0),
        ("4-2", "4-1", 8.0),
    ] {
        for isa in names {
            let eff = fig("throughput", row, isa) / n / fig("throughput", one, isa) * 100.0;
            let published_eff = fig("per_thread_efficiency", row, isa);
            assert!(
                (eff - published_eff).abs() < 0.2,
                "{row} {isa}: {eff} vs {published_eff}"
            );
        }
    }
    let mut yields = Vec::new();
    for isa in names {
        yields.push(
            smt_yield(
                fig("throughput", "1-2", isa),
                fig("throughput", "1-3", isa),
                8,
                16,
            )
            .unwrap(),
        );
    }
    // Scalar: the second thread adds ~0.7 of a core; AVX-512: ~0.15.
    assert!(yields[0] > 0.5, "{yields:?}");
    assert!(yields[3] < 0.2, "{yields:?}");
    assert!(
        yields.windows(2).all(|w| w[1] < w[0]),
        "wider SIMD, less SMT gain: {yields:?}"
    );
    assert!(smt_advice("scalar", yields[0]).contains("use all logical CPUs"));
    assert!(smt_advice("avx512", yields[3]).contains("one thread per physical core"));
}

fn smt_machine() -> MachineInfo {
    // 4 cores × 2 threads, Linux numbering: core c = {c, c+4}.
    MachineInfo {
        cores: (0..4)
            .map(|c| Core {
                package: 0,
                core_id: c,
                cpus: CpuSet::from_ids([c, c + 4]),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn thread_points_on_an_smt_machine() {
    let m = smt_machine();
    let cpus = CpuSet::parse("0-7").unwrap();
    assert_eq!(ordered_cpus(&m, &cpus), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    let (pts, why) = thread_points(&m, &cpus, Profile::Quick);
    let labels: Vec<(&str, String)> = pts
        .iter()
        .map(|p| (p.label.as_str(), p.cpus.to_string()))
        .collect();
    assert_eq!(
        labels,
        [
            ("1", "0".to_string()),
            ("per_core", "0-3".to_string()),
            ("all", "0-7".to_string())
        ]
    );
    assert!(why.is_none());
    // full adds a sweep between (2 threads, then 8 is "all").
    let (full, _) = thread_points(&m, &cpus, Profile::Full);
    let l: Vec<&str> = full.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(l, ["1", "2", "per_core", "all"]);
    // Without SMT siblings in the list: no "all" point, and the reason.
    let (pts, why) = thread_points(&m, &CpuSet::parse("0-3").unwrap(), Profile::Quick);
    assert_eq!(pts.len(), 2);
    assert!(why.unwrap().contains("no SMT"));
}

fn rec(metric: &str, variant: &str, threads: &str, value: f64) -> ResultRecord {
    let mut r = ResultRecord::new(
        "simd",
        metric,
        if metric == "efficiency" { "%" } else { "MB/s" },
        true,
    )
    .with_param("variant", variant)
    .with_param("threads", threads);
    if metric == "throughput" {
        r = r
            .with_samples(vec![value; 5])
            .with_data(json!({"threads": 1, "ghz": 3.0}));
    } else {
        r.value = Some(value);
    }
    r
}

#[test]
fn simd_table_renders_in_the_seeds_form() {
    let rs = vec![
        rec("throughput", "scalar", "1", 948.0),
        rec("throughput", "avx512", "1", 13780.0),
        rec("throughput", "scalar", "all", 11491.0),
        rec("throughput", "avx512", "all", 104483.0),
        rec("efficiency", "scalar", "all", 75.8),
        rec("efficiency", "avx512", "all", 47.4),
        ResultRecord::unavailable(
            "simd",
            "throughput",
            "MB/s",
            "not supported: NEON is an aarch64 instruction set",
        )
        .with_param("variant", "neon")
        .with_param("threads", "1"),
    ];
    let t = render_simd_configurations(&rs);
    assert!(t.contains("scalar MB/s"), "{t}");
    assert!(t.contains("avx512 MB/s"), "{t}");
    assert!(t.contains("75.8%") && t.contains("47.4%"), "{t}");
    assert!(
        t.contains("neon threads=1: not available: not supported"),
        "{t}"
    );
    assert!(
        !t.contains("neon MB/s"),
        "an unsupported variant gets no column: {t}"
    );
}

#[test]
fn simd_configurations_render_each_and_compare_smt_on_off() {
    // Unlabelled records (--smt/--turbo as-is): one table, no configuration.
    let plain = vec![
        rec("throughput", "scalar", "1", 948.0),
        rec("throughput", "scalar", "all", 11491.0),
    ];
    let t = render_simd_configurations(&plain);
    assert!(
        t.contains("scalar MB/s") && !t.contains("configuration"),
        "{t}"
    );
    assert_eq!(plain[0].key, rec("throughput", "scalar", "1", 1.0).key);
    assert!(!plain[0].key.contains("smt"), "{}", plain[0].key);

    let label = |r: ResultRecord, smt: &str| r.with_param("smt", smt);
    let rs = vec![
        label(rec("throughput", "avx2", "1", 1000.0), "on"),
        label(rec("throughput", "avx2", "per_core", 4000.0), "on"),
        label(rec("throughput", "avx2", "all", 5200.0), "on"),
        label(rec("throughput", "avx2", "1", 1010.0), "off"),
        label(rec("throughput", "avx2", "per_core", 4040.0), "off"),
    ];
    // The configuration is part of the key: both are kept side by side.
    assert_ne!(rs[0].key, rs[3].key);
    let t = render_simd_configurations(&rs);
    assert!(t.contains("configuration: SMT on\n"), "{t}");
    assert!(t.contains("configuration: SMT off\n"), "{t}");
    assert!(t.contains("SMT on against off"), "{t}");
    assert!(t.contains("(all)") && t.contains("(per_core)"), "{t}");
    assert!(t.contains("1.29x"), "{t}");
}

/// `simd --smt/--turbo` on a machine where the switch cannot change (no
/// smt/control support, no boost file, or not root): one line, exit 1,
/// nothing measured. Skipped where the switch could really change.
#[test]
fn simd_switch_refusals_are_one_line() {
    let root = unsafe { libc::geteuid() } == 0;
    let smt = std::fs::read_to_string("/sys/devices/system/cpu/smt/control")
        .map(|s| s.trim().to_string())
        .ok();
    let smt_fixed = matches!(
        smt.as_deref(),
        None | Some("notsupported") | Some("notimplemented") | Some("forceoff")
    );
    if smt_fixed || !root {
        let e = one_line_error(&["simd", "--smt", "both", "--quiet"]);
        assert!(e.contains("--smt"), "{e}");
        assert!(
            e.contains("needs root") || e.contains("cannot be switched") || e.contains("forceoff"),
            "{e}"
        );
    }
    let boost = [
        "/sys/devices/system/cpu/intel_pstate/no_turbo",
        "/sys/devices/system/cpu/cpufreq/boost",
        "/sys/devices/system/cpu/cpufreq/policy0/boost",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists());
    if !boost || !root {
        let e = one_line_error(&["simd", "--turbo", "both", "--quiet"]);
        assert!(e.contains("--turbo"), "{e}");
        assert!(
            e.contains("needs root") || e.contains("no boost switch"),
            "{e}"
        );
    }
    // A recorded machine (the generated Hygon seed tree) cannot be measured;
    // without python3 seed_trees says SKIP and this last check is left out.
    if let Some(fixture) = seed_trees::tree_arg("hygon-c86-5280") {
        let e = one_line_error(&["--sysroot", &fixture, "simd", "--smt", "both"]);
        assert!(e.contains("measures this machine"), "{e}");
    }
}

#[test]
fn rate_table_and_workload_names() {
    let r = ResultRecord::new("rate", "jobs_per_hour", "jobs/h", true)
        .with_param("workload", "nop")
        .with_param("copies", "1")
        .with_samples(vec![3600.0])
        .with_data(json!({"copies": 1, "cpus": "0", "makespan_s": [1.0]}));
    let t = render_rate(&[r]);
    assert!(t.contains("3600") && t.contains("baseline"), "{t}");
    assert_eq!(
        parse_workload("bc-pow:999999").unwrap(),
        RateWorkload::BcPow(999_999)
    );
}

/// `rate --mem`: seed 003's memory placements, one command each. On this
/// machine's memory nodes: every copy's pages are where the placement puts
/// them, each placement is set against interleave, and on one node the
/// output says interleave (and node:N) equal local.
#[test]
fn rate_memory_placements() {
    if emulator::lacks(emulator::Needs::MemPolicy, "rate_memory_placements") {
        return;
    }
    let out = bin::command()
        .args([
            "rate",
            "--copies",
            "1",
            "--mem",
            "local,interleave,node:0",
            "--rounds",
            "1",
            "--seconds",
            "0.05",
            "--json",
            "-q",
            "mem:4",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = d["results"].as_array().unwrap();
    let jph: Vec<&serde_json::Value> = recs
        .iter()
        .filter(|r| r["metric"] == "jobs_per_hour")
        .collect();
    let mems: Vec<&str> = jph
        .iter()
        .filter_map(|r| r["params"]["mem"].as_str())
        .collect();
    assert_eq!(mems, ["local", "interleave", "node:0"]);
    for r in &jph {
        assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
        let pages = r["data"]["pages_per_node"]
            .as_object()
            .expect("pages checked");
        assert!(!pages.is_empty(), "{r}");
        if r["params"]["mem"] == "node:0" {
            assert_eq!(pages.keys().collect::<Vec<_>>(), ["0"], "{r}");
        }
    }
    let change: Vec<&serde_json::Value> = recs
        .iter()
        .filter(|r| r["metric"] == "mem_change")
        .collect();
    assert_eq!(change.len(), 2, "local and node:0 against interleave");
    let machine = &d["machine"];
    let mem_nodes = machine["numa_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["memory_bytes"] != 0)
        .count();
    let text = bin::command()
        .args([
            "rate",
            "--copies",
            "1",
            "--mem",
            "interleave",
            "--rounds",
            "1",
            "--seconds",
            "0.05",
            "-q",
            "mem:4",
        ])
        .output()
        .unwrap();
    assert!(text.status.success());
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.contains("interleave"), "{t}");
    if mem_nodes == 1 {
        assert!(t.contains("interleave equals local"), "{t}");
    }
    // A node that does not exist: one line.
    let bad = bin::command()
        .args(["rate", "--copies", "1", "--mem", "node:999", "nop"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let e = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("NUMA node 999 does not exist"), "{e}");
}

#[test]
fn every_published_file_is_compiled_in_and_names_its_seed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/published");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    on_disk.sort();
    let mut compiled: Vec<String> = published::FILES
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    compiled.sort();
    assert_eq!(
        on_disk, compiled,
        "one format, one loader: every file is in published::FILES"
    );
    for s in published::all().unwrap() {
        // One naming: `seedNNN-name.json` holds set `seedNNN-name` from seed NNN;
        // a set from elsewhere is named for its source and gives its address.
        assert!(compiled.contains(&format!("{}.json", s.id)), "{}", s.id);
        assert!(!s.id.contains('_'), "{}", s.id);
        assert!(!s.source.section.trim().is_empty(), "{}", s.id);
        if !s.id.starts_with("seed") {
            let url = s.source.url.as_deref().unwrap_or_default();
            assert!(url.starts_with("https://"), "{}: no address", s.id);
            continue;
        }
        let nnn = &s.id[4..7];
        assert!(s.id.starts_with("seed") && nnn.chars().all(|c| c.is_ascii_digit()));
        assert!(
            s.source.seed.starts_with(&format!("{nnn}_")) && s.source.seed.ends_with(".txt"),
            "{}",
            s.id
        );
        assert!(!s.source.section.trim().is_empty(), "{}", s.id);
    }
    // Nothing published lost in the merge of the two formats.
    let bc = published::by_id("seed000-bc").unwrap();
    let count = |set: &published::PublishedSet, metric: &str, k: &str, v: serde_json::Value| {
        set.figures
            .iter()
            .filter(|f| f.metric == metric && f.params.get(k) == Some(&v))
            .count()
    };
    // The five CPUs of seed 000's 7^999999 table, four pi times (FT2500 blank), five pi clocks.
    assert_eq!(count(bc, "time", "expression", json!("7^999999")), 5);
    assert_eq!(count(bc, "ipc", "expression", json!("7^999999")), 5);
    assert_eq!(
        count(bc, "time", "expression", json!("scale=5000; 4*a(1)")),
        4
    );
    assert_eq!(
        count(
            bc,
            "stated_clock",
            "expression",
            json!("scale=5000; 4*a(1)")
        ),
        5
    );
    let ossl = published::by_id("seed000-openssl").unwrap();
    assert_eq!(
        ossl.figures.len(),
        45,
        "3 machines × 3 process counts × 5 block sizes"
    );
    let tpmc = published::by_id("seed000-kunpeng-numa-tpmc").unwrap();
    assert_eq!(
        tpmc.figures
            .iter()
            .filter(|f| f.params.contains_key("set"))
            .count(),
        5
    );
    let cpu = published::by_id("seed000-cpu-bound").unwrap();
    assert_eq!(cpu.figures.len(), 4);
    let br = published::by_id("seed002-branch-order").unwrap();
    assert_eq!(br.figures.len(), 4);
    let spec = published::by_id("seed003-spec2000-opteron").unwrap();
    assert!(spec.figures.len() >= 4);
    let s4 = published::by_id("seed004-smt-simd-efficiency").unwrap();
    assert_eq!(
        count(s4, "per_thread_efficiency", "isa", json!("avx512")),
        10
    );
}

fn one_line_error(args: &[&str]) -> String {
    let out = bin::command().args(args).output().unwrap();
    cli::one_line_error(&out).trim_end().to_string()
}

#[test]
fn commands_answer_bad_input_in_one_line() {
    assert!(one_line_error(&["simd", "--variants", "mmx"]).contains("unknown SIMD variant"));
    assert!(one_line_error(&["simd", "--cpus", "9999"]).contains("not usable"));
    assert!(one_line_error(&["simd", "--cpus", "x"]).contains("error"));
    assert!(one_line_error(&["rate", "--copies", "0", "nop"]).contains("positive count"));
    assert!(one_line_error(&["rate", "--copies", "100000", "nop"]).contains("usable CPUs"));
    assert!(one_line_error(&["rate", "--copies", "1"]).contains("no workload"));
    assert!(one_line_error(&["rate", "--copies", "1", "spec2000"]).contains("unknown workload"));
    assert!(
        one_line_error(&["rate", "--copies", "1", "bc-pow:-3"]).contains("whole number from 1 to")
    );
    assert!(
        one_line_error(&["rate", "--copies", "1", "--mem", "far", "nop"]).contains("bad --mem")
    );
    assert!(
        one_line_error(&["rate", "--copies", "1", "--mem", "node:x", "nop"])
            .contains("not a node number")
    );
    assert!(
        one_line_error(&["rate", "--copies", "1", "--", "/nonexistent/prog"])
            .contains("cannot start")
    );
    assert!(
        one_line_error(&["placement", "--workload", "x"]).contains("unknown placement workload")
    );
    assert!(one_line_error(&["placement", "--k", "1"]).contains("--k"));
    let Some(fixture) = hwloc_trees::tree_arg("16amd64-8n2c") else {
        return;
    };
    let fixture = fixture.as_str();
    assert!(one_line_error(&["--sysroot", fixture, "simd"]).contains("measures this machine"));
    assert!(one_line_error(&["--sysroot", fixture, "placement"]).contains("measures this machine"));
}

#[test]
fn placement_plan_on_a_recorded_machine() {
    let Some(fixture) = hwloc_trees::tree_arg("16em64t-4s2c2t") else {
        return;
    };
    let fixture = fixture.as_str();
    let out = bin::command()
        .args(["--sysroot", fixture, "placement", "--plan-only", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let set = |c: &str, s: &str| {
        p["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == c)
            .unwrap()["sets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == s)
            .unwrap()
            .clone()
    };
    // 4 sockets × 2 cores × 2 threads: CPU 0's sibling is 8; CPU 1 is on another socket.
    assert_eq!(set("smt", "smt_siblings")["cpus"], "0,8");
    assert_eq!(set("numa", "cross_socket")["cpus"], "0-1");
    assert!(set("numa", "cross_node")["not_applicable"]
        .as_str()
        .unwrap()
        .contains("one NUMA node"));
    assert_eq!(set("spread", "smt_packed")["cpus"], "0,4,8,12");
}

#[test]
fn run_lists_the_compute_experiments() {
    let out = bin::command()
        .args(["run", "--list", "--profile", "quick"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let t = String::from_utf8_lossy(&out.stdout);
    for e in ["simd", "peak", "workloads", "rate", "placement"] {
        assert!(
            t.lines().any(|l| l.starts_with(e)),
            "{e} missing from:\n{t}"
        );
    }
}

#[test]
fn bc_comparison_renders_as_published_data() {
    use cpuscope::experiments::compute::workloads::compare_times;
    use cpuscope::experiments::compute::workloads::text::render_workloads;
    let r = ResultRecord::new("workloads", "bc_pow", "s", false)
        .with_param("exp", 999_999)
        .with_samples(vec![26.729972414]);
    let c = compare_times(&r, 26.729972414).expect("seed 000's 7^999999 table maps to bc_pow");
    let r = r.with_data(json!({ "published": c }));
    let text = render_workloads(&[r]);
    assert!(
        text.contains("published data (not measured on this run)"),
        "{text}"
    );
    assert!(text.contains("seed000-bc"), "the source is named: {text}");
    let hygon = text.lines().find(|l| l.contains("Hygon")).unwrap();
    assert!(hygon.contains("100%"), "{text}");
    let ft = text.lines().find(|l| l.contains("FT2500")).unwrap();
    assert!(
        ft.contains("148%"),
        "39.65 s published vs 26.73 s here: {text}"
    );
}

#[test]
fn openssl_cbc_renders_as_not_compared() {
    use cpuscope::experiments::compute::workloads::compare_openssl;
    use cpuscope::experiments::compute::workloads::text::render_workloads;
    let r = ResultRecord::new("workloads", "openssl_aes", "MB/s", true)
        .with_param("alg", "aes-256-cbc")
        .with_param("copies", "1")
        .with_param("bytes", 8192)
        .with_samples(vec![900.0])
        .with_data(json!({ "published": compare_openssl("aes-256-cbc", 1, 8192, 900.0) }));
    let text = render_workloads(&[r]);
    assert!(!text.contains("per copy"), "{text}");
    assert!(text.contains("not compared"), "{text}");
}

/// Issue 24, the clock under each SIMD width, measured on this machine (a
/// quick run of `peak`): one GHz figure per width with its spread (and the
/// probe's add chain alone, the reference), "not available" with the reason
/// where the width is not here (never 0); a width's clock is not above the
/// scalar clock beyond the noise tolerance unless the record itself says the
/// reading is suspect; FLOP per actual cycle is FLOP per scalar-clock cycle
/// over the clock ratio, so never lower when the clock drops.
#[test]
fn the_clock_under_each_width_is_recorded_and_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let out = bin::command()
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "peak",
            "--json",
            "-q",
            "--no-html",
        ])
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Run = serde_json::from_slice(&out.stdout).unwrap();
    let clocks: Vec<&ResultRecord> = run.records(peak::SIMD_CLOCK).collect();
    let d = |r: &ResultRecord, k: &str| r.data.as_ref().and_then(|d| d[k].as_f64());
    let mut widths: Vec<Option<Width>> = vec![None];
    widths.extend(Width::ALL.map(Some));
    for w in widths {
        let name = w.map(Width::name).unwrap_or("none");
        let r = clocks
            .iter()
            .find(|r| {
                r.params.get("width") == Some(&json!(name))
                    && r.params.get("threads") == Some(&json!("1"))
            })
            .unwrap_or_else(|| panic!("no simd_clock record for width={name}"));
        assert_eq!(r.unit, "GHz");
        if let Some(why) = w.and_then(Width::unsupported_reason) {
            assert!(r.value.is_none(), "{name}: a width not here has no figure");
            assert_eq!(r.unavailable_reason.as_deref(), Some(why.as_str()));
            let a = run
                .records(peak::FMA_FLOPS_PER_ACTUAL_CYCLE)
                .find(|a| a.params.get("width") == Some(&json!(name)))
                .unwrap();
            assert!(a.value.is_none() && a.unavailable_reason.is_some());
            continue;
        }
        let v = r
            .value
            .unwrap_or_else(|| panic!("{name}: {:?}", r.unavailable_reason));
        let st = r.stats.as_ref().expect("spread");
        assert!(v > 0.0 && st.min <= st.median && st.median <= st.max && st.cv >= 0.0);
        assert!(r.repetitions >= 3, "{name}: {} samples", r.repetitions);
        let scalar = d(r, "ghz_scalar").expect("the scalar clock beside it");
        let ratio = d(r, "ratio_vs_scalar").unwrap();
        let tol = d(r, "noise_tolerance").unwrap();
        assert!(tol >= peak::CLOCK_NOISE_FLOOR, "{name}: tolerance {tol}");
        assert!(
            d(r, "check_double_chain_ratio").is_some(),
            "{name}: the chain check"
        );
        // Not above the scalar clock beyond noise, unless flagged.
        assert!(
            ratio <= 1.0 + tol || r.is_suspect(),
            "{name}: {ratio} × scalar (±{tol}) and not flagged: {:?}",
            r.notes
        );
        assert!(
            r.notes.iter().any(|n| n.contains("GHz")),
            "{name}: {:?}",
            r.notes
        );
        if w.is_none() {
            assert_eq!(d(r, "fmas_per_cycle"), Some(0.0));
            assert!(scalar > 0.0);
            continue;
        }
        assert!(d(r, "fmas_per_cycle").unwrap() > 0.0);
        // FLOP per actual cycle beside FLOP per scalar-clock cycle.
        let same = |x: &&ResultRecord| {
            x.params.get("width") == Some(&json!(name))
                && x.params.get("threads") == Some(&json!("1"))
        };
        let nominal = run.records(peak::FMA_FLOPS_PER_CYCLE).find(same).unwrap();
        let actual = run
            .records(peak::FMA_FLOPS_PER_ACTUAL_CYCLE)
            .find(same)
            .unwrap();
        assert_eq!(actual.unit, "FLOP/cycle");
        let (a, n) = (actual.value.unwrap(), nominal.value.unwrap());
        let r_used = d(actual, "clock_ratio").unwrap();
        assert!(
            (r_used - ratio).abs() < 1e-12,
            "{name}: the same clock ratio"
        );
        assert!(
            (a - n / r_used).abs() <= 1e-9 * n,
            "{name}: {a} != {n} / {r_used}"
        );
        if r_used < 1.0 {
            assert!(
                a >= n,
                "{name}: per actual cycle {a} < per scalar-clock cycle {n}"
            );
        }
        let named = actual.data.as_ref().unwrap();
        assert!(named["actual_clock"]
            .as_str()
            .unwrap()
            .contains("simd_clock"));
        assert!(named["nominal_clock"].as_str().unwrap().contains("scalar"));
    }
    // The peak table shows both, and the clock under each width.
    let text = render_simd_configurations(&run.results);
    assert!(
        text.contains("FLOP/actual cycle") && text.contains("Clock while each width runs"),
        "{text}"
    );
    assert!(text.contains("add chain alone"), "{text}");
}

/// The user's case (issue 24): 512-bit FMAs at 92% of 32 FLOP/cycle per
/// scalar-clock cycle on a core whose clock drops 8% under them. The
/// verdict says where the 8% went; without a drop it says the width runs at
/// the scalar clock.
#[test]
fn the_verdict_says_what_clock_each_width_runs_at() {
    let p = format!(
        "{}/tests/fixtures/runs/vm-2cpu-quick.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let base: Run = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let with = |drop_512: bool| {
        let mut run = base.clone();
        run.results.retain(|r| !r.from_experiment(peak::EXP));
        let one = |r: ResultRecord, w: &str| r.with_param("width", w).with_param("threads", "1");
        let ratio = if drop_512 { 0.92 } else { 0.995 };
        run.results.push(
            one(ResultRecord::of(peak::FMA_FLOPS, "GFLOP/s", true), "512")
                .with_samples(vec![88.2; 5]),
        );
        run.results.push(
            one(
                ResultRecord::of(peak::FMA_FLOPS_PER_CYCLE, "FLOP/cycle", true),
                "512",
            )
            .with_samples(vec![29.4; 5])
            .with_data(json!({"theoretical": 32.0, "ratio": 29.4 / 32.0})),
        );
        for (w, r, dropped) in [
            ("256", 0.99, false),
            ("512", ratio, drop_512),
            ("none", 1.0, false),
        ] {
            run.results.push(
                one(ResultRecord::of(peak::SIMD_CLOCK, "GHz", true), w)
                    .with_samples(vec![3.0 * r; 5])
                    .with_data(json!({"ghz_scalar": 3.0, "ratio_vs_scalar": r, "noise_tolerance": 0.02, "drop_beyond_noise": dropped, "vector_bits": w.parse::<u32>().ok()})),
            );
        }
        run.results.push(
            one(
                ResultRecord::of(peak::FMA_FLOPS_PER_ACTUAL_CYCLE, "FLOP/cycle", true),
                "512",
            )
            .with_samples(vec![29.4 / ratio; 5])
            .with_data(
                json!({"clock_ratio": ratio, "ghz_actual": 3.0 * ratio, "theoretical": 32.0}),
            ),
        );
        verdict::render(&run, None, &Style::plain(100))
    };
    let text = with(true);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("= 29.4 FLOP/cycle (92% of 32) at the scalar clock"),
        "{text}"
    );
    assert!(
        flat.contains(
            "512-bit runs at 2.76 GHz (\u{2212}8% vs scalar): 32.0 FLOP per actual cycle (100%)"
        ),
        "{text}"
    );
    assert!(
        flat.contains("256-bit runs at the scalar clock (±2%)"),
        "{text}"
    );
    let text = with(false);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("(92% of 32); 512-bit runs at the scalar clock (±2%)"),
        "{text}"
    );
    assert!(
        flat.contains("256-bit, 512-bit run at the scalar clock"),
        "{text}"
    );
    assert!(!flat.contains("per actual cycle"), "{text}");
}

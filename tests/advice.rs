//! Advice rules on hand-made runs: each rule has a run that triggers it and
//! one that does not; every finding carries evidence from the run.

use cpuscope::experiments::memory::numa_matrix;
use cpuscope::experiments::memory::payload::NumaMatrixData;
use cpuscope::report::advice::{self, Finding};
use cpuscope::results::schema::{Environment, ResultRecord, Run, RunStatus};
use serde_json::{json, Value};

fn run_with(machine: Value, results: Vec<ResultRecord>) -> Run {
    let mut r = Run::new(
        "h",
        "quick",
        machine,
        Environment::default(),
        json!({}),
        vec![],
    );
    r.status = RunStatus::Complete;
    r.results = results;
    r
}

/// Two NUMA nodes of two CPUs, SLIT 10/20.
fn two_nodes(extra: Value) -> Value {
    let mut m = json!({
        "identity": {"model_name": "Test"},
        "threads": [{"cpu": 0, "node": 0}, {"cpu": 1, "node": 0}, {"cpu": 2, "node": 1}, {"cpu": 3, "node": 1}],
        "numa_nodes": [
            {"id": 0, "cpus": "0-1", "distances": [10, 20]},
            {"id": 1, "cpus": "2-3", "distances": [20, 10]}
        ]
    });
    if let (Value::Object(a), Value::Object(b)) = (&mut m, extra) {
        a.extend(b);
    }
    m
}

fn one_node() -> Value {
    json!({"numa_nodes": [{"id": 0, "cpus": "0-1", "distances": [10]}]})
}

fn fixed(exp: &str, metric: &str, unit: &str, hib: bool, v: f64) -> ResultRecord {
    ResultRecord::new(exp, metric, unit, hib).with_samples(vec![v, v, v])
}

fn of_rule<'a>(f: &'a [Finding], rule: &str) -> Vec<&'a Finding> {
    f.iter().filter(|x| x.rule == rule).collect()
}

fn fires(run: &Run, rule: &str) -> Finding {
    let all = advice::findings(run);
    let mine = of_rule(&all, rule);
    assert_eq!(mine.len(), 1, "{rule} should fire once: {all:#?}");
    let f = mine[0].clone();
    assert!(!f.evidence.is_empty(), "{rule}: no evidence");
    for e in &f.evidence {
        assert!(
            e.source.starts_with("result ")
                || e.source.starts_with("machine ")
                || e.source.starts_with("environment")
                || e.source.starts_with("results of this run")
                || e.source.contains(':'),
            "{rule}: evidence without a source: {e:?}"
        );
    }
    // Evidence that names a result names one of this run's keys.
    for e in f
        .evidence
        .iter()
        .filter(|e| e.source.starts_with("result "))
    {
        let rest = &e.source["result ".len()..];
        assert!(
            run.results
                .iter()
                .any(|r| rest == r.key || rest.starts_with(&format!("{} (", r.key))),
            "{rule}: evidence names {rest}, not a result of the run"
        );
    }
    f
}

fn silent(run: &Run, rule: &str) {
    let all = advice::findings(run);
    assert!(
        of_rule(&all, rule).is_empty(),
        "{rule} should not fire: {all:#?}"
    );
}

#[test]
fn every_rule_is_listed() {
    // The machine's rule and each experiment's (through the registry), in
    // the order their findings are listed within a severity.
    let ids: Vec<&str> = advice::rules().iter().map(|r| r.id).collect();
    assert_eq!(
        ids,
        [
            "nic-irq-remote-node",
            "numa-balancing-pinned",
            "remote-local-latency",
            "distances-vs-measured",
            "memory-only-tier",
            "memory-bandwidth-saturation",
            "smt-yield-wide-simd",
            "all-core-frequency-drop",
            "declared-vs-measured-frequency",
            "dimm-population",
            "cache-latency-vs-published"
        ]
    );
    // Timed figures' rules are the ones a busy machine turns into leads.
    let timed: Vec<&str> = advice::rules()
        .iter()
        .filter(|r| r.timed)
        .map(|r| r.id)
        .collect();
    assert_eq!(timed.len(), 8, "{timed:?}");
    // An empty run advises nothing: no evidence, no advice.
    assert!(advice::findings(&run_with(json!({}), vec![])).is_empty());
}

fn nic(node: i64, irq_nodes: &[i64], is_virtual: bool) -> Value {
    json!({"devices": {"nics": [{
        "name": "eth0", "is_virtual": is_virtual, "numa_node": node,
        "irq_nodes": irq_nodes, "served_cpus": "2-3",
        "irqs": [{"irq": 40}, {"irq": 41}]
    }]}})
}

#[test]
fn nic_irqs_on_another_node() {
    let r = run_with(two_nodes(nic(0, &[1], false)), vec![]);
    let f = fires(&r, "nic-irq-remote-node");
    assert!(
        f.title.contains("eth0") && f.title.contains("node 1"),
        "{}",
        f.title
    );
    assert!(f.advice.contains("CPUs 0-1"), "{}", f.advice);
    silent(
        &run_with(two_nodes(nic(0, &[0], false)), vec![]),
        "nic-irq-remote-node",
    );
    silent(
        &run_with(two_nodes(nic(-1, &[1], false)), vec![]),
        "nic-irq-remote-node",
    );
    silent(
        &run_with(two_nodes(nic(0, &[1], true)), vec![]),
        "nic-irq-remote-node",
    );
}

fn balancing(v: &str) -> Value {
    json!({"knobs": {"knobs": [{"name": "numa_balancing", "value": v}]}})
}

#[test]
fn numa_balancing_with_pinned_work() {
    let res = vec![fixed("memory", "latency", "ns", false, 90.0)];
    let f = fires(
        &run_with(two_nodes(balancing("1")), res.clone()),
        "numa-balancing-pinned",
    );
    assert!(f.evidence.iter().any(|e| e.value == "1"));
    silent(
        &run_with(two_nodes(balancing("0")), res.clone()),
        "numa-balancing-pinned",
    );
    // One node: balancing has nothing to do.
    let mut m = one_node();
    m.as_object_mut()
        .unwrap()
        .extend(balancing("1").as_object().unwrap().clone());
    silent(&run_with(m, res), "numa-balancing-pinned");
}

fn lat(cpu: u64, mem: u64, ns: f64) -> ResultRecord {
    fixed("memory", "latency", "ns", false, ns)
        .with_param("cpu_node", cpu)
        .with_param("mem_node", mem)
        .with_param("size", "256 MiB")
}

#[test]
fn remote_memory_much_slower() {
    let r = run_with(
        two_nodes(json!({})),
        vec![
            lat(0, 0, 90.0),
            lat(0, 1, 140.0),
            lat(1, 1, 92.0),
            lat(1, 0, 138.0),
        ],
    );
    let f = fires(&r, "remote-local-latency");
    assert!(f.title.contains("1.54x"), "{}", f.title);
    assert!(f.advice.contains("--membind"));
    let near = run_with(
        two_nodes(json!({})),
        vec![
            lat(0, 0, 90.0),
            lat(0, 1, 100.0),
            lat(1, 1, 92.0),
            lat(1, 0, 99.0),
        ],
    );
    silent(&near, "remote-local-latency");
    // Only local figures: no remote/local evidence, no advice.
    silent(
        &run_with(two_nodes(json!({})), vec![lat(0, 0, 90.0), lat(1, 1, 90.0)]),
        "remote-local-latency",
    );
}

/// numa_matrix's matrix record: latency (ns) from the CPUs of each node of
/// `rows` to the memory of each of `targets`.
fn numa_matrix_of(
    rows: &[usize],
    targets: &[&str],
    latency_ns: Vec<Vec<Option<f64>>>,
) -> ResultRecord {
    fixed("numa_matrix", "matrix", "ratio", false, 1.0).with_payload(&NumaMatrixData {
        rows: rows.to_vec(),
        targets: targets.iter().map(|t| t.to_string()).collect(),
        latency_ns,
        ..NumaMatrixData::default()
    })
}

#[test]
fn remote_latency_from_a_matrix() {
    // Node × node (and interleave, which is no node) latency in numa_matrix's
    // matrix record, without its per-pair records.
    let m = numa_matrix_of(
        &[0, 1],
        &["0", "1", "interleave"],
        vec![
            vec![Some(80.0), Some(160.0), Some(120.0)],
            vec![Some(158.0), Some(81.0), Some(119.0)],
        ],
    );
    assert!(m.is(numa_matrix::MATRIX));
    let f = fires(
        &run_with(two_nodes(json!({})), vec![m]),
        "remote-local-latency",
    );
    assert!(f
        .evidence
        .iter()
        .any(|e| e.source.contains("numa_matrix:matrix") && e.source.contains("data.latency_ns")));
    // One node: no remote figure, no advice.
    let one = numa_matrix_of(&[0], &["0"], vec![vec![Some(80.0)]]);
    silent(&run_with(one_node(), vec![one]), "remote-local-latency");
}

/// Four nodes: SLIT says 0→1 is near (12) and 0→3 far (22); the measurement can say otherwise.
fn four_nodes() -> Value {
    json!({"numa_nodes": [
        {"id": 0, "distances": [10, 12, 20, 22]},
        {"id": 1, "distances": [12, 10, 22, 24]},
        {"id": 2, "distances": [20, 22, 10, 12]},
        {"id": 3, "distances": [22, 24, 12, 10]}
    ]})
}

#[test]
fn declared_distances_against_measured() {
    let agree = vec![
        lat(0, 0, 90.0),
        lat(0, 1, 100.0),
        lat(0, 2, 130.0),
        lat(0, 3, 140.0),
    ];
    silent(&run_with(four_nodes(), agree), "distances-vs-measured");
    let disagree = vec![
        lat(0, 0, 90.0),
        lat(0, 1, 150.0),
        lat(0, 2, 130.0),
        lat(0, 3, 120.0),
    ];
    let f = fires(&run_with(four_nodes(), disagree), "distances-vs-measured");
    assert!(f.title.contains("0→1"), "{}", f.title);
    assert!(f.evidence.iter().any(|e| e.source.contains("distances")));
    // A node × node memory-latency matrix (numa_matrix's matrix record):
    // SLIT says every remote pair is equal (20), the measurement says 0↔2 is
    // 50% slower.
    let m = json!({
        "threads": [{"cpu": 0, "node": 0}, {"cpu": 1, "node": 0}, {"cpu": 2, "node": 1},
                    {"cpu": 3, "node": 1}, {"cpu": 4, "node": 2}, {"cpu": 5, "node": 2}],
        "numa_nodes": [
            {"id": 0, "distances": [10, 20, 20]},
            {"id": 1, "distances": [20, 10, 20]},
            {"id": 2, "distances": [20, 20, 10]}
        ]
    });
    let cost = |a: usize, b: usize| match (a, b) {
        (x, y) if x == y => 90.0,
        (0, 2) | (2, 0) => 210.0,
        _ => 140.0,
    };
    let nodes: Vec<Vec<Option<f64>>> = (0..3)
        .map(|a| (0..3).map(|b| Some(cost(a, b))).collect())
        .collect();
    let mem = numa_matrix_of(&[0, 1, 2], &["0", "1", "2"], nodes);
    let f = fires(&run_with(m.clone(), vec![mem]), "distances-vs-measured");
    assert!(f.title.contains("declared equal to"), "{}", f.title);
    // A core-to-core matrix over CPUs (data.cpus) with the same shape is
    // the cost of moving a cache line, not of reaching memory: never read
    // as memory latency (the ARM lab's advice cited one as such).
    let node = |c: usize| c / 2;
    let matrix: Vec<Vec<Value>> = (0..6)
        .map(|a| {
            (0..6)
                .map(|b| {
                    if a == b {
                        Value::Null
                    } else {
                        json!(cost(node(a), node(b)))
                    }
                })
                .collect()
        })
        .collect();
    let c2c = fixed("c2c", "latency", "ns", false, 100.0)
        .with_data(json!({"cpus": [0, 1, 2, 3, 4, 5], "matrix": matrix}));
    silent(
        &run_with(m.clone(), vec![c2c.clone()]),
        "distances-vs-measured",
    );
    silent(&run_with(m, vec![c2c]), "remote-local-latency");
}

fn bw(threads: u64, v: f64) -> ResultRecord {
    fixed("memory", "bandwidth", "GB/s", true, v)
        .with_param("threads", threads)
        .with_param("node", 0)
}

#[test]
fn bandwidth_saturates_before_all_cores() {
    let r = run_with(
        two_nodes(json!({})),
        vec![
            bw(1, 12.0),
            bw(2, 22.0),
            bw(4, 40.0),
            bw(8, 41.0),
            bw(16, 42.0),
        ],
    );
    let f = fires(&r, "memory-bandwidth-saturation");
    assert!(
        f.title.contains("saturates at 4 thread(s)") && f.title.contains("node 0"),
        "{}",
        f.title
    );
    assert_eq!(f.evidence.len(), 5);
    let linear = run_with(
        two_nodes(json!({})),
        vec![bw(1, 10.0), bw(2, 20.0), bw(4, 40.0), bw(8, 80.0)],
    );
    silent(&linear, "memory-bandwidth-saturation");
    // Two points are not a curve.
    silent(
        &run_with(two_nodes(json!({})), vec![bw(1, 10.0), bw(2, 10.0)]),
        "memory-bandwidth-saturation",
    );
    // Two placements that both saturate: two findings, each saying which
    // placement it is (the ARM lab printed the same sentence twice).
    let placed = |p: &str, t: u64, v: f64| {
        fixed("bandwidth", "bandwidth", "GB/s", true, v)
            .with_param("threads", t)
            .with_param("placement", p)
    };
    let r = run_with(
        two_nodes(json!({})),
        vec![
            placed("compact", 1, 5.0),
            placed("compact", 2, 9.0),
            placed("compact", 4, 9.5),
            placed("spread_core", 1, 5.0),
            placed("spread_core", 2, 9.8),
            placed("spread_core", 4, 10.0),
        ],
    );
    let all = advice::findings(&r);
    let titles: Vec<&str> = all
        .iter()
        .filter(|f| f.rule == "memory-bandwidth-saturation")
        .map(|f| f.title.as_str())
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles.iter().any(|t| t.contains("placed compactly")),
        "{titles:?}"
    );
    assert!(
        titles.iter().any(|t| t.contains("spread one per core")),
        "{titles:?}"
    );
    assert_ne!(titles[0], titles[1]);
}

fn tput(isa: &str, threads: &str, v: f64) -> ResultRecord {
    fixed("compute", "throughput", "Gop/s", true, v)
        .with_param("isa", isa)
        .with_param("threads", threads)
}

#[test]
fn smt_adds_little_to_wide_simd() {
    let r = run_with(
        json!({}),
        vec![tput("avx2", "per_core", 100.0), tput("avx2", "all", 104.0)],
    );
    let f = fires(&r, "smt-yield-wide-simd");
    assert!(
        f.title.contains("+4%") && f.advice.contains("physical cores"),
        "{}",
        f.title
    );
    // Scalar code gains from SMT: no advice about it.
    silent(
        &run_with(
            json!({}),
            vec![
                tput("scalar", "per_core", 100.0),
                tput("scalar", "all", 104.0),
            ],
        ),
        "smt-yield-wide-simd",
    );
    // Wide SIMD that does gain.
    silent(
        &run_with(
            json!({}),
            vec![
                tput("avx512", "per_core", 100.0),
                tput("avx512", "all", 130.0),
            ],
        ),
        "smt-yield-wide-simd",
    );
    // An explicit yield figure.
    let y = fixed("compute", "smt_yield", "x", true, 1.05).with_param("isa", "avx512");
    fires(&run_with(json!({}), vec![y]), "smt-yield-wide-simd");
    let y = fixed("compute", "smt_yield", "x", true, 1.4).with_param("isa", "avx512");
    silent(&run_with(json!({}), vec![y]), "smt-yield-wide-simd");
}

fn freq(single: f64, all: f64, declared: Value) -> Vec<ResultRecord> {
    vec![
        fixed("frequency", "single_core", "GHz", true, single)
            .with_param("threads", 1)
            .with_data(json!({"declared": declared})),
        fixed("frequency", "all_cores", "GHz", true, all)
            .with_param("threads", "per_core")
            .with_data(json!({"per_thread_ghz": [all, all, all, all]})),
    ]
}

#[test]
fn clock_drops_at_all_cores() {
    let f = fires(
        &run_with(json!({}), freq(4.8, 4.4, json!({}))),
        "all-core-frequency-drop",
    );
    assert!(
        f.title.contains("8%") && f.title.contains("4 cores"),
        "{}",
        f.title
    );
    silent(
        &run_with(json!({}), freq(3.0, 2.95, json!({}))),
        "all-core-frequency-drop",
    );
}

#[test]
fn declared_clock_differs_from_measured() {
    let below = run_with(
        json!({}),
        freq(2.0, 2.0, json!({"cpufreq_max_mhz": 3000.0})),
    );
    let f = fires(&below, "declared-vs-measured-frequency");
    assert!(f.title.contains("33% below"), "{}", f.title);
    let turbo = run_with(json!({}), freq(3.5, 3.4, json!({"model_name_mhz": 2500.0})));
    let f = fires(&turbo, "declared-vs-measured-frequency");
    assert!(f.title.contains("40% above"), "{}", f.title);
    let agrees = run_with(
        json!({}),
        freq(
            3.0,
            3.0,
            json!({"cpufreq_max_mhz": 3050.0, "model_name_mhz": 2950.0, "cpuinfo_mhz": 3000.0}),
        ),
    );
    silent(&agrees, "declared-vs-measured-frequency");
    // Nothing declared: nothing to set against.
    silent(
        &run_with(json!({}), freq(2.0, 2.0, json!({}))),
        "declared-vs-measured-frequency",
    );
}

#[test]
fn text_and_html_show_the_evidence() {
    let r = run_with(json!({}), freq(4.8, 4.0, json!({})));
    let f = advice::findings(&r);
    let t = advice::render_text(&f);
    assert!(t.contains("evidence: one core = 4.800 GHz"), "{t}");
    assert!(t.contains("what to do:"));
    let h = advice::render_html(&f);
    assert!(h.contains("<h2>Advice</h2>") && h.contains("frequency:single_core"));
    assert!(advice::render_text(&[]).is_empty());
}

/// The shapes the memory, c2c and compute experiments write (their branches,
/// as of this writing): the rules must read them.
#[test]
fn rules_read_the_experiments_shapes() {
    // numa_matrix: latency per (cpu_node, mem) with mem a node label.
    let nm = |c: u64, m: &str, ns: f64| {
        fixed("numa_matrix", "latency", "ns", false, ns)
            .with_param("cpu_node", c)
            .with_param("mem", m)
    };
    let r = run_with(
        two_nodes(json!({})),
        vec![
            nm(0, "0", 85.0),
            nm(0, "1", 150.0),
            nm(0, "interleave", 118.0),
            nm(1, "1", 86.0),
            nm(1, "0", 149.0),
        ],
    );
    let f = fires(&r, "remote-local-latency");
    assert!(f.title.contains("numa_matrix"), "{}", f.title);

    // c2c: data.cpus + data.matrix_ns is core-to-core latency, not memory
    // latency: no remote/local memory finding rests on it, and the NUMA
    // balancing warning does not cite it as "remote/local memory latency".
    let m = json!({
        "threads": [{"cpu": 0, "node": 0}, {"cpu": 1, "node": 0}, {"cpu": 2, "node": 1}, {"cpu": 3, "node": 1}],
        "numa_nodes": [{"id": 0, "distances": [10, 20]}, {"id": 1, "distances": [20, 10]}],
        "knobs": {"knobs": [{"name": "numa_balancing", "value": "1"}]}
    });
    let c2c = fixed("c2c", "matrix", "ns", false, 60.0)
        .with_param("method", "cas")
        .with_data(json!({"cpus": [0, 1, 2, 3], "matrix_ns": [
            [null, 40.0, 140.0, 141.0], [40.0, null, 139.0, 142.0],
            [140.0, 139.0, null, 41.0], [141.0, 142.0, 41.0, null]]}));
    let r = run_with(m, vec![c2c]);
    silent(&r, "remote-local-latency");
    let f = fires(&r, "numa-balancing-pinned");
    assert!(
        f.evidence
            .iter()
            .all(|e| !e.source.contains("c2c") && !e.what.contains("memory latency")),
        "{:?}",
        f.evidence
    );

    // simd: smt_yield in "cores" (what one extra hardware thread adds).
    let y = |variant: &str, v: f64| {
        fixed("simd", "smt_yield", "cores", true, v).with_param("variant", variant)
    };
    let f = fires(
        &run_with(json!({}), vec![y("avx2", 0.06), y("scalar", 0.05)]),
        "smt-yield-wide-simd",
    );
    assert!(
        f.title.contains("avx2") && f.title.contains("+6%"),
        "{}",
        f.title
    );
    silent(
        &run_with(json!({}), vec![y("avx512", 0.45)]),
        "smt-yield-wide-simd",
    );

    // bandwidth: one record per kernel variant and thread count; cache levels excluded.
    let bwv = |width: &str, scope: &str, t: u64, g: f64| {
        fixed("bandwidth", "triad", "GB/s", true, g)
            .with_param("threads", t)
            .with_param("width", width)
            .with_param("store", "normal")
            .with_param("scope", scope)
            .with_param("placement", "compact")
    };
    let mut res = Vec::new();
    for (t, g) in [(1, 12.0), (2, 20.0), (4, 24.0), (8, 24.5)] {
        res.push(bwv("avx2", "dram", t, g));
        res.push(bwv("sse2", "dram", t, g * 0.95));
        res.push(bwv("avx2", "L2", t, g * 10.0 / t as f64 * t as f64));
    }
    let all = advice::findings(&run_with(json!({}), res));
    let sat = of_rule(&all, "memory-bandwidth-saturation");
    assert_eq!(sat.len(), 1, "{all:#?}");
    assert!(
        sat[0].title.contains("at 4 thread(s)") && sat[0].title.contains("24.50"),
        "{}",
        sat[0].title
    );
}

#[test]
fn a_busy_machine_is_said_and_shown() {
    use cpuscope::results::schema::Load;
    let mut r = run_with(
        json!({"cpus": {"online": "0-1"}}),
        freq(4.8, 4.0, json!({})),
    );
    r.environment.load_start = Some(Load {
        at: "2026-01-01T00:00:00Z".into(),
        loadavg_1: Some(3.5),
        ..Load::default()
    });
    let f = fires(&r, "all-core-frequency-drop");
    assert!(
        f.advice.contains("was busy") && f.advice.contains("3.50 on 2 CPUs"),
        "{}",
        f.advice
    );
    assert!(f
        .evidence
        .iter()
        .any(|e| e.source == "environment.load_start"));
    // Idle: no such caution.
    r.environment.load_start.as_mut().unwrap().loadavg_1 = Some(0.2);
    let f = fires(&r, "all-core-frequency-drop");
    assert!(!f.advice.contains("was busy"));
    // Configuration findings do not depend on load.
    let mut n = run_with(two_nodes(nic(0, &[1], false)), vec![]);
    n.environment.load_start = Some(Load {
        at: "2026-01-01T00:00:00Z".into(),
        loadavg_1: Some(9.0),
        ..Load::default()
    });
    assert!(!fires(&n, "nic-irq-remote-node").advice.contains("was busy"));
}

fn dimm(locator: &str, size_gib: u64, mts: u64) -> Value {
    let ch = cpuscope::machine::dimm::channel_of(Some(locator), None);
    if size_gib == 0 {
        return json!({"locator": locator, "empty": true, "channel": ch});
    }
    json!({"locator": locator, "empty": false, "size_bytes": size_gib << 30,
           "configured_speed_mts": mts, "data_width_bits": 64, "memory_type": "DDR4", "channel": ch})
}

fn memory(dimms: Vec<Value>, notes: Vec<&str>) -> Value {
    let parsed: Vec<cpuscope::machine::dimm::Dimm> = dimms
        .iter()
        .map(|d| serde_json::from_value(d.clone()).unwrap())
        .collect();
    json!({"memory_devices": {
        "dimms": dimms,
        "notes": notes,
        "summary": cpuscope::machine::dimm::summarize(&parsed),
        "theoretical_bandwidth": cpuscope::machine::dimm::theoretical_bandwidth(&parsed),
    }})
}

#[test]
fn unbalanced_dimm_population() {
    // Eight channels, two of them empty: a warning with the channels named.
    let mut d: Vec<Value> = "ABCDEF"
        .chars()
        .map(|c| dimm(&format!("CPU0_DIMM_{c}1"), 32, 3200))
        .collect();
    d.push(dimm("CPU0_DIMM_G1", 0, 0));
    d.push(dimm("CPU0_DIMM_H1", 0, 0));
    let run = run_with(memory(d, vec![]), vec![]);
    let f = fires(&run, "dimm-population");
    assert!(
        f.title.contains("2 of 8 memory channels empty"),
        "{}",
        f.title
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e.value.contains("socket 0 channel G")),
        "{f:#?}"
    );
    // Balanced: silent. Mixed sizes: advice.
    let bal: Vec<Value> = "ABCDEFGH"
        .chars()
        .map(|c| dimm(&format!("CPU0_DIMM_{c}1"), 32, 3200))
        .collect();
    silent(
        &run_with(memory(bal.clone(), vec![]), vec![]),
        "dimm-population",
    );
    let mut mixed = bal.clone();
    mixed[0] = dimm("CPU0_DIMM_A1", 16, 3200);
    let f = fires(&run_with(memory(mixed, vec![]), vec![]), "dimm-population");
    assert!(f.title.contains("mixed sizes"), "{}", f.title);
    // A table a hypervisor invented says nothing about the host.
    let mut d2: Vec<Value> = "ABCDEF"
        .chars()
        .map(|c| dimm(&format!("CPU0_DIMM_{c}1"), 32, 3200))
        .collect();
    d2.push(dimm("CPU0_DIMM_G1", 0, 0));
    silent(
        &run_with(
            memory(
                d2,
                vec!["the DIMM table looks invented by a hypervisor (x)"],
            ),
            vec![],
        ),
        "dimm-population",
    );
}

fn cycles(metric: &str, pages: &str, v: f64, published: f64) -> ResultRecord {
    let ratio = v / published;
    fixed("latency", metric, "cycles", false, v)
        .with_param("pages", pages)
        .with_param("pattern", "random")
        .with_data(
            json!({"published_cycles": published, "published_source": "test guide",
                          "measured_over_published": ratio, "finding": (ratio - 1.0).abs() > 0.2}),
        )
}

#[test]
fn cache_latency_against_published() {
    // L2 measured 67 cycles where the core publishes 16: one finding, from the 2 MiB curve.
    let run = run_with(
        one_node(),
        vec![
            cycles("L2_cycles", "4k", 18.5, 16.0),
            cycles("L2_cycles", "2m", 66.9, 16.0),
            cycles("L1d_cycles", "2m", 5.0, 5.0),
        ],
    );
    let f = fires(&run, "cache-latency-vs-published");
    assert!(
        f.title.contains("L2 latency measured 66.9") && f.title.contains("published 16"),
        "{}",
        f.title
    );
    // Within 20%: silent.
    silent(
        &run_with(one_node(), vec![cycles("L2_cycles", "2m", 17.5, 16.0)]),
        "cache-latency-vs-published",
    );
}

/// The lab's `hmat` guest (tests/fixtures/hmat/): node 2 is memory without
/// CPUs; the advice names it, its kernel tier, the cost from the nearest
/// CPU node measured, and the firmware's declared figure of that pair.
#[test]
fn a_memory_only_node_is_named_as_a_tier_with_its_figures() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hmat/hmat-numa-matrix-run.json"
    );
    let run = cpuscope::results::schema::parse_run(&std::fs::read_to_string(path).unwrap())
        .expect("the lab's run");
    let all = advice::findings(&run);
    let f: Vec<&Finding> = all
        .iter()
        .filter(|f| f.rule == "memory-only-tier")
        .collect();
    assert_eq!(f.len(), 1, "{all:#?}");
    let f = f[0];
    assert!(
        f.title
            .starts_with("node 2 is memory without CPUs (kernel memory_tier4): "),
        "{}",
        f.title
    );
    assert!(f.advice.contains("--preferred=2"), "{}", f.advice);
    let declared = f
        .evidence
        .iter()
        .find(|e| e.what.starts_with("declared read latency"))
        .expect("the declared figure");
    assert!(declared.source.contains("raw HMAT table"), "{declared:?}");
    assert!(
        ["250 ns", "300 ns"].contains(&declared.value.as_str()),
        "{declared:?}"
    );
}

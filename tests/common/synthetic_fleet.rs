//! A synthetic fleet made from one real run: tests/fixtures/fleet/quick-run.json
//! is the `cpuscope run --profile quick --json` document of a 2-core VM
//! (Intel Xeon, KVM; see tests/fixtures/fleet/README.md). It is cloned into
//! twelve hosts `node01`..`node12`: every measured figure of every host is
//! scaled by its own factor in 1 ± 1.5% (seeded), its repetitions kept (so
//! each figure keeps the real run's own noise), and deviations are planted:
//!
//! - node03: L1d latency (2 MiB pages) 35% higher (worse);
//! - node05: peak FMA on every core 30% lower;
//! - node07: all-thread DRAM triad 38% lower, and its environment differs
//!   (numa_balancing=1, THP never);
//! - node09: noise only: its all-core clock re-drawn with a CV of 30% around
//!   75% of the others' (far off, but within its own noise);
//! - node11: environment only: another microcode and governor, no figure moved;
//! - node12: noise only on a figure that is noisy everywhere (DRAM latency,
//!   4 KiB pages, 41% CV in the real run), 25% higher.
//!
//! Two more hosts, `other1` and `other2`, carry another CPU model: a group
//! too small to judge.

#![allow(dead_code)]

use cpuscope::experiments::compute::peak;
use cpuscope::experiments::memory::bandwidth;
use cpuscope::experiments::memory::latency;
use cpuscope::experiments::state::frequency;
use cpuscope::results::schema::{parse_run, MetricId, ResultRecord, Run};
use serde_json::Value;

/// The real run the fleet is made of.
pub fn template() -> Run {
    parse_run(include_str!("../fixtures/fleet/quick-run.json")).expect("the fixture parses")
}

/// xorshift64*: a small seeded generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box-Muller).
    pub fn gauss(&mut self) -> f64 {
        let u = self.uniform().max(1e-12);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn param(r: &ResultRecord, k: &str) -> Option<String> {
    r.params.get(k).map(|v| match v {
        Value::String(s) => s.clone(),
        o => o.to_string(),
    })
}

/// Scale one record's repetitions (and so its value and stats) by `f`.
fn scale(r: &mut ResultRecord, f: f64) {
    if r.samples.is_empty() {
        if let Some(v) = r.value.as_mut() {
            *v *= f;
        }
    } else {
        let s: Vec<f64> = r.samples.iter().map(|x| x * f).collect();
        *r = r.clone().with_samples(s);
    }
}

/// The record of kind `id` whose params hold every (key, value) of `want`.
fn rec<'a>(run: &'a mut Run, id: MetricId, want: &[(&str, &str)]) -> &'a mut ResultRecord {
    run.results
        .iter_mut()
        .find(|r| r.is(id) && want.iter().all(|(k, v)| param(r, k).as_deref() == Some(*v)))
        .unwrap_or_else(|| panic!("the fixture has no {id:?} {want:?}"))
}

fn set_knob(run: &mut Run, name: &str, value: &str) {
    let knobs = run
        .machine
        .pointer_mut("/knobs/knobs")
        .and_then(Value::as_array_mut)
        .expect("the fixture records knobs");
    let k = knobs
        .iter_mut()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no knob {name} in the fixture"));
    k["value"] = Value::String(value.to_string());
}

/// The all-thread DRAM triad record of the fixture (2 threads on its 2 CPUs).
pub const TRIAD_ALL: &[(&str, &str)] = &[
    ("scope", "dram"),
    ("store", "normal"),
    ("width", "avx512"),
    ("threads", "2"),
];
pub const L1D_2M: &[(&str, &str)] = &[("pages", "2m"), ("pattern", "random")];
pub const DRAM_4K: &[(&str, &str)] = &[("pages", "4k"), ("pattern", "random")];
pub const FMA_ALL: &[(&str, &str)] = &[("threads", "per_core")];

/// The planted outliers: (host, what the figure's label starts with).
pub const PLANTED: &[(&str, &str)] = &[
    ("node03", "L1d latency (pages=2m)"),
    ("node05", "peak FMA, every core"),
    ("node07", "triad, all threads (width=avx512)"),
];
/// Hosts with noise or environment changes only: never flagged.
pub const NOT_OUTLIERS: &[&str] = &["node09", "node11", "node12"];

/// Twelve hosts of the fixture's CPU and two of another, seeded.
pub fn fleet(seed: u64) -> Vec<Run> {
    let t = template();
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let names: Vec<String> = (1..=12)
        .map(|i| format!("node{i:02}"))
        .chain(["other1".to_string(), "other2".to_string()])
        .collect();
    for (i, h) in names.iter().enumerate() {
        let mut r = t.clone();
        r.host = h.clone();
        r.id = format!("20261125T0000{:02}Z-{h}-{:04x}", i + 1, seed & 0xffff);
        r.tags = vec!["synthetic".into(), format!("seed={seed}")];
        for rec in r.results.iter_mut().filter(|x| x.value.is_some()) {
            let f = 1.0 + (rng.uniform() * 2.0 - 1.0) * 0.015;
            scale(rec, f);
        }
        match h.as_str() {
            "node03" => scale(rec(&mut r, latency::L1D, L1D_2M), 1.35),
            "node05" => scale(rec(&mut r, peak::FMA_FLOPS, FMA_ALL), 0.70),
            "node07" => {
                scale(rec(&mut r, bandwidth::TRIAD, TRIAD_ALL), 0.62);
                set_knob(&mut r, "numa_balancing", "1");
                set_knob(&mut r, "thp_enabled", "never");
            }
            "node09" => {
                let x = rec(&mut r, frequency::ALL_CORES, &[]);
                let m = x.value.unwrap() * 0.75;
                let n = x.samples.len().max(8);
                let s: Vec<f64> = (0..n)
                    .map(|_| (m * (1.0 + 0.3 * rng.gauss())).max(m * 0.05))
                    .collect();
                *x = x.clone().with_samples(s);
            }
            "node11" => {
                r.machine["identity"]["microcode"] = Value::String("0xdeadbeef".into());
                r.environment.governor = Some("powersave".into());
            }
            "node12" => scale(rec(&mut r, latency::DRAM, DRAM_4K), 1.25),
            "other1" | "other2" => {
                r.machine["identity"]["model_name"] = Value::String("Other CPU 1234".into());
            }
            _ => {}
        }
        out.push(r);
    }
    out
}

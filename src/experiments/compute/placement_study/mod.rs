//! Placement study (seed 000's "bad core binding costs 25-30%"): the same
//! workloads pinned to the CPU sets the planner (src/experiments/placement_plan.rs)
//! picks from the topology — SMT siblings vs two cores, same vs different
//! L3, same node vs cross node vs cross socket, k cores packed vs spread —
//! and one thread with its memory local / remote / interleaved. Each
//! comparison is reported as a relative table (best set = 100%), like the
//! seed's "72,73,74,75 → 14460 … 0,24,48,72 → 10800". Sets that cannot exist
//! on this machine are reported as not applicable, with the reason.
//!
//! Workloads on each set: `compute` (ChaCha20 scalar: integer ALU bound,
//! sensitive to SMT sharing), `shared` (atomic increments on a few shared
//! cache lines: sensitive to the distance between the threads) and, outside
//! quick, `triad` (private STREAM-like triad per thread: sensitive to shared
//! caches and memory controllers). Memory placements use a pointer chase.
//! The triad and chase are simple own kernels until the memory room's are
//! merged.

pub mod text;
pub mod view;

use crate::base::CpuSet;
use crate::experiments::compute::payload::{
    MemoryPlacementData, PublishedComparison, SeedSetRow, SetThroughputData,
};
use crate::experiments::compute::placement_plan::{
    plan, Comparison, MemoryPlacement, PlacementSet, Plan,
};
use crate::experiments::compute::simd::{compute_policy, secs_per_figure, team_rate};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::harness::measure::{measure, measure_team};
use crate::kernels::chacha::{self, Variant, CHUNK_BYTES};
use crate::kernels::cpu_loops::{build_chase, chase, shared_add, triad, Padded, SHARED_LINES};
use crate::machine::MachineInfo;
use crate::placement::buffer::{Buffer, BufferOptions, PageRequest, Touch};
use crate::placement::pin::AffinityGuard;
use crate::placement::team::Team;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Mutex;

pub struct PlacementStudy;

pub const EXP: &str = "placement";
/// Throughput of a workload on one CPU set of a comparison (params
/// comparison, set, workload).
pub const THROUGHPUT: MetricId = MetricId::new(EXP, "throughput");
/// Chase latency with the memory placed by a policy (param memory).
pub const MEMORY_LATENCY: MetricId = MetricId::new(EXP, "memory_latency");
/// The CPU sets the planner chose (count; the plan in data).
pub const PLAN: MetricId = MetricId::new(EXP, "plan");
const METHOD_VERSION: u32 = 1;

/// A workload run on each CPU set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SetWorkload {
    Compute,
    Shared,
    Triad,
}

impl SetWorkload {
    pub fn name(self) -> &'static str {
        match self {
            SetWorkload::Compute => "compute",
            SetWorkload::Shared => "shared",
            SetWorkload::Triad => "triad",
        }
    }

    pub fn parse(s: &str) -> Option<SetWorkload> {
        [
            SetWorkload::Compute,
            SetWorkload::Shared,
            SetWorkload::Triad,
        ]
        .into_iter()
        .find(|w| w.name() == s.trim())
    }

    pub fn unit(self) -> &'static str {
        match self {
            SetWorkload::Compute => "MB/s",
            SetWorkload::Shared => "M updates/s",
            SetWorkload::Triad => "GB/s",
        }
    }

    fn method(self) -> String {
        match self {
            SetWorkload::Compute => format!("ChaCha20 scalar keystream, {} KiB per iteration per thread, one pinned thread per CPU of the set, released together; aggregate MB/s; median", CHUNK_BYTES / 1024),
            SetWorkload::Shared => format!("atomic fetch-add on {SHARED_LINES} shared cache lines (128-byte slots), one pinned thread per CPU of the set; aggregate million updates/s; median"),
            SetWorkload::Triad => "STREAM-like triad a = b + 3c on private arrays per thread (first-touched by the thread on its CPU, each array max(2 × L3 / threads, 16 MiB)); GB/s counts 24 bytes per element; median".into(),
        }
    }
}

/// Workloads per profile.
pub fn workloads(profile: Profile) -> Vec<SetWorkload> {
    match profile {
        Profile::Quick => vec![SetWorkload::Compute, SetWorkload::Shared],
        _ => vec![
            SetWorkload::Compute,
            SetWorkload::Shared,
            SetWorkload::Triad,
        ],
    }
}

/// Spread sets size (the seed used 4 cores).
pub fn spread_k(_profile: Profile) -> usize {
    4
}

/// Bytes of the largest L3 instance among the caches, if known.
fn l3_bytes(m: &MachineInfo) -> Option<u64> {
    m.caches
        .iter()
        .filter(|c| c.level == 3)
        .filter_map(|c| c.size_bytes)
        .max()
}

fn measure_set(w: SetWorkload, cpus: &CpuSet, ctx: &ExpCtx) -> Result<(Vec<f64>, Vec<f64>)> {
    let policy = compute_policy(ctx.profile);
    match w {
        SetWorkload::Compute => team_rate(
            cpus,
            &policy,
            ctx.stop,
            CHUNK_BYTES as f64 / 1e6,
            |t, it| chacha::run(Variant::Scalar, it, t.index as u64 * 1_000_000),
        ),
        SetWorkload::Shared => {
            let lines: Vec<Padded> = (0..SHARED_LINES).map(|_| Padded::new()).collect();
            team_rate(cpus, &policy, ctx.stop, 1e-6, |t, it| {
                shared_add(&lines, t.index, it)
            })
        }
        SetWorkload::Triad => {
            let n_threads = cpus.len().max(1) as u64;
            let per_array = (l3_bytes(ctx.machine).unwrap_or(32 << 20) * 2 / n_threads)
                .clamp(16 << 20, 256 << 20);
            let elems = (per_array / 8) as usize;
            let mut team = Team::new(&cpus.to_vec())?;
            let slots: Vec<Mutex<Option<[Vec<f64>; 3]>>> =
                (0..cpus.len()).map(|_| Mutex::new(None)).collect();
            // Untimed: each thread allocates and first-touches its arrays.
            team.run_round(|t| {
                let arrays = [
                    vec![0.0f64; elems],
                    vec![1.0f64; elems],
                    vec![2.0f64; elems],
                ];
                *slots[t.index].lock().unwrap_or_else(|e| e.into_inner()) = Some(arrays);
            })?;
            let gb_per_iter = 24.0 * elems as f64 / 1e9;
            let m = measure_team(&mut team, &policy, ctx.stop, |t, it| {
                let mut g = slots[t.index].lock().unwrap_or_else(|e| e.into_inner());
                match g.as_mut() {
                    Some([a, b, c]) => triad(a, b, c, it),
                    None => 0,
                }
            })?;
            let n = team.size() as f64;
            let agg = m
                .samples
                .iter()
                .map(|ns| n * gb_per_iter / ns * 1e9)
                .collect();
            let per = m
                .thread_stats
                .iter()
                .map(|s| gb_per_iter / s.median * 1e9)
                .collect();
            Ok((agg, per))
        }
    }
}

/// Seed 000's Kunpeng table (published set `seed000-kunpeng-numa-tpmc`).
pub const SPREAD_REFERENCE_SET: &str = "seed000-kunpeng-numa-tpmc";

/// Seed 000's 4-core Kunpeng bindings as % of the best, for the spread
/// comparison: the figures of the published set that name a planner set.
pub fn seed_spread_reference() -> PublishedComparison<SeedSetRow> {
    let set = match crate::results::published::by_id(SPREAD_REFERENCE_SET) {
        Ok(s) => s,
        Err(e) => {
            return PublishedComparison {
                label: "not available".into(),
                reason: Some(format!("{e:#}")),
                ..PublishedComparison::default()
            }
        }
    };
    let figs: Vec<&crate::results::published::Figure> = set
        .figures
        .iter()
        .filter(|f| f.metric == "tpmC" && f.params.contains_key("set"))
        .collect();
    let best = figs.iter().filter_map(|f| f.value).fold(0.0f64, f64::max);
    let text = |f: &crate::results::published::Figure, k: &str| {
        f.params.get(k).and_then(|v| v.as_str()).map(str::to_string)
    };
    let rel: Vec<SeedSetRow> = figs
        .iter()
        .map(|f| SeedSetRow {
            cpus: text(f, "cores"),
            set: text(f, "set"),
            tpm_c: f.value,
            relative_pct: f.value.filter(|_| best > 0.0).map(|v| v / best * 100.0),
        })
        .collect();
    PublishedComparison {
        label: "published data (seed 000, Kunpeng 920-4826, DRDS tpmC; not measured on this run)"
            .into(),
        set: Some(set.id.clone()),
        source: Some(set.source.cite()),
        rows: Some(rel),
        ..PublishedComparison::default()
    }
}

/// Figures already measured: (workload, CPUs) -> (aggregate samples,
/// per-thread figures, where first measured).
type SetCache = BTreeMap<(SetWorkload, CpuSet), (Vec<f64>, Vec<f64>, String)>;

/// Measure one comparison for one workload; `cache` reuses figures of CPU
/// sets already measured with this workload.
fn run_comparison(
    ctx: &mut ExpCtx,
    c: &Comparison,
    w: SetWorkload,
    cache: &mut SetCache,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    // (index in recs, value, data) of each set measured here.
    let mut measured: Vec<(usize, Option<f64>, SetThroughputData)> = Vec::new();
    let mut recs: Vec<ResultRecord> = Vec::new();
    for s in &c.sets {
        let base = |r: ResultRecord| {
            r.with_param("comparison", c.name.as_str())
                .with_param("set", s.name.as_str())
                .with_param("workload", w.name())
        };
        let Some(cpus) = &s.cpus else {
            recs.push(base(ResultRecord::unavailable(
                THROUGHPUT.experiment,
                THROUGHPUT.metric,
                w.unit(),
                &format!(
                    "not applicable: {}",
                    s.not_applicable
                        .as_deref()
                        .unwrap_or("no such CPU set here")
                ),
            )));
            continue;
        };
        let (agg, per, reused) = set_figures(ctx, c, s, cpus, w, cache)?;
        let data = SetThroughputData {
            cpus: cpus.to_string(),
            what: s.what.clone(),
            per_thread: per,
            ..SetThroughputData::default()
        };
        let mut r = base(ResultRecord::of(THROUGHPUT, w.unit(), true))
            .with_method(&w.method(), METHOD_VERSION)
            .with_samples(agg)
            .with_payload(&data);
        if let Some(from) = reused {
            r = r.with_note(&format!(
                "same CPUs as {from}: measured once, reported for both"
            ));
        }
        measured.push((recs.len(), r.value, data));
        recs.push(r);
    }
    relative_to_best(c, measured, &mut recs);
    for r in recs {
        out(r)?;
    }
    Ok(())
}

/// The figures of workload `w` on `cpus` (set `s` of comparison `c`):
/// (aggregate samples, per-thread figures, where first measured when reused),
/// from `cache` when these CPUs were measured already with `w`, else
/// measured now and cached.
fn set_figures(
    ctx: &mut ExpCtx,
    c: &Comparison,
    s: &PlacementSet,
    cpus: &CpuSet,
    w: SetWorkload,
    cache: &mut SetCache,
) -> Result<(Vec<f64>, Vec<f64>, Option<String>)> {
    let key = (w, cpus.clone());
    Ok(match cache.get(&key) {
        Some((a, p, from)) => (a.clone(), p.clone(), Some(from.clone())),
        None => {
            (ctx.step)(&format!("{} on {} ({})", w.name(), cpus, s.name));
            let (a, p) = measure_set(w, cpus, ctx)?;
            cache.insert(
                key,
                (a.clone(), p.clone(), format!("{}/{}", c.name, s.name)),
            );
            (a, p, None)
        }
    })
}

/// Each measured set of comparison `c` (index in `recs`, value, data) as a
/// share of the best set: a note and the data of its record, with seed
/// 000's reference for the spread comparison.
fn relative_to_best(
    c: &Comparison,
    measured: Vec<(usize, Option<f64>, SetThroughputData)>,
    recs: &mut [ResultRecord],
) {
    let best = measured
        .iter()
        .filter_map(|(_, v, _)| *v)
        .fold(f64::NAN, f64::max);
    // Seed 000's reference, read once for the spread comparison's records.
    let reference = (c.name == "spread").then(seed_spread_reference);
    for (i, v, mut d) in measured {
        if let (Some(v), true) = (v, best > 0.0) {
            let rel = v / best * 100.0;
            d.relative_pct = Some(rel);
            d.seed_reference = reference.clone();
            recs[i] = recs[i]
                .clone()
                .with_note(&format!(
                    "{rel:.1}% of the best set in '{}' ({})",
                    c.name, c.question
                ))
                .with_payload(&d);
        }
    }
}

fn run_memory(
    ctx: &mut ExpCtx,
    p: &Plan,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let policy = compute_policy(ctx.profile);
    let bytes = (l3_bytes(ctx.machine).unwrap_or(32 << 20) * 4).clamp(64 << 20, 1 << 30) as usize;
    let mut local: Option<f64> = None;
    let mut recs = Vec::new();
    let any_remote = p
        .memory
        .iter()
        .any(|m| m.name != "local" && m.cpu.is_some());
    for m in &p.memory {
        if !any_remote && m.cpu.is_some() {
            recs.push(memory_unavailable(
                m,
                "not applicable: no remote placement to compare local memory with (one NUMA node); the memory experiment measures local latency",
            ));
            continue;
        }
        let (Some(cpu), Some(pol)) = (m.cpu, &m.policy) else {
            recs.push(memory_unavailable(
                m,
                &format!(
                    "not applicable: {}",
                    m.not_applicable
                        .as_deref()
                        .unwrap_or("no such placement here")
                ),
            ));
            continue;
        };
        (ctx.step)(&format!(
            "pointer chase, {} ({})",
            m.name,
            m.policy_text.as_deref().unwrap_or("")
        ));
        let opts = BufferOptions {
            pages: PageRequest::Thp,
            policy: Some(pol.clone()),
            touch: Touch::No,
        };
        let res = (|| -> Result<(Vec<f64>, serde_json::Value)> {
            let _g = AffinityGuard::pin(cpu)?;
            let mut buf = Buffer::new(bytes, &opts)?;
            build_chase(buf.as_mut_slice::<u64>(), 8, 0x9e37_79b9);
            let pages = buf.page_report();
            let slice = buf.as_slice::<u64>();
            let meas = measure(&policy, ctx.stop, |hops| chase(slice, hops))?;
            Ok((meas.samples, json!(pages)))
        })();
        let rec = match res {
            Ok((samples, pages)) => {
                let r = chase_record(m, cpu, bytes, samples, pages);
                if m.name == "local" {
                    local = r.value;
                }
                r
            }
            Err(e) => memory_unavailable(m, &format!("{e:#}")),
        };
        recs.push(rec);
    }
    for r in recs {
        out(against_local(r, local))?;
    }
    Ok(())
}

/// The [`MEMORY_LATENCY`] record of placement `m` when it has no figure, with why.
fn memory_unavailable(m: &MemoryPlacement, why: &str) -> ResultRecord {
    ResultRecord::unavailable(MEMORY_LATENCY.experiment, MEMORY_LATENCY.metric, "ns", why)
        .with_param("memory", m.name.as_str())
}

/// The [`MEMORY_LATENCY`] record of placement `m`: the chase's `samples` over
/// a `bytes` buffer from CPU `cpu`, with where its `pages` went.
fn chase_record(
    m: &MemoryPlacement,
    cpu: usize,
    bytes: usize,
    samples: Vec<f64>,
    pages: serde_json::Value,
) -> ResultRecord {
    ResultRecord::of(MEMORY_LATENCY, "ns", false)
        .with_param("memory", m.name.as_str())
        .with_method(
            &format!("dependent loads along a random cycle over a {} MiB buffer (one hop per 64-byte line), thread pinned to CPU {cpu}, pages placed by the policy before first touch (THP requested); ns per load; median", bytes >> 20),
            METHOD_VERSION,
        )
        .with_samples(samples)
        .with_payload(&MemoryPlacementData {
            cpu,
            policy: m.policy_text.clone(),
            what: m.what.clone(),
            distance: m.distance,
            pages,
        })
}

/// A memory record other than local's, with its change against the local
/// latency `local`.
fn against_local(r: ResultRecord, local: Option<f64>) -> ResultRecord {
    match (r.value, local) {
        (Some(v), Some(l)) if r.params.get("memory").and_then(|x| x.as_str()) != Some("local") => r
            .with_note(&format!(
                "{:+.1}% against local memory",
                (v / l - 1.0) * 100.0
            )),
        _ => r,
    }
}

/// Run the study for some workloads (the `placement` command's filter).
pub fn run_study(
    ctx: &mut ExpCtx,
    wls: &[SetWorkload],
    k: usize,
    memory: bool,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let p = plan(ctx.machine, &ctx.cpus, k);
    let mut r = ResultRecord::of(PLAN, "sets", true)
        .with_method("CPU sets chosen by the placement planner from the topology (lowest CPU ids that answer each question)", METHOD_VERSION)
        .with_payload(&p);
    r.value = Some(
        p.comparisons
            .iter()
            .flat_map(|c| &c.sets)
            .filter(|s| s.cpus.is_some())
            .count() as f64,
    );
    for n in &p.notes {
        r = r.with_note(n);
    }
    out(r)?;
    let mut cache = BTreeMap::new();
    for w in wls {
        for c in &p.comparisons {
            run_comparison(ctx, c, *w, &mut cache, out)?;
        }
    }
    if memory {
        run_memory(ctx, &p, out)?;
    }
    Ok(())
}

/// Distinct CPU sets the plan measures (for estimates).
fn distinct_sets(p: &Plan) -> usize {
    let mut v: Vec<&CpuSet> = p
        .comparisons
        .iter()
        .flat_map(|c| &c.sets)
        .filter_map(|s| s.cpus.as_ref())
        .collect();
    v.sort();
    v.dedup();
    v.len()
}

impl Experiment for PlacementStudy {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "placement: SMT siblings vs cores, L3, NUMA node/socket, packed vs spread, local/remote memory"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        let p = plan(machine, cpus, spread_k(profile));
        let sets = distinct_sets(&p) as f64;
        let mem = p.memory.iter().filter(|m| m.cpu.is_some()).count() as f64;
        let triad_extra = if workloads(profile).contains(&SetWorkload::Triad) {
            sets * 0.3
        } else {
            0.0
        };
        sets * workloads(profile).len() as f64 * (secs_per_figure(profile) + 0.02)
            + triad_extra
            + mem * (secs_per_figure(profile) + 0.5)
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let mut p = Params {
            workloads: workloads(ctx.profile),
            k: spread_k(ctx.profile),
            memory: true,
        };
        self.run_with(ctx, &mut p, out)
    }
}

/// `cpuscope placement`'s [`Params`].
impl WithParams for PlacementStudy {
    type Params = Params;
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut Params,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        run_study(ctx, &p.workloads, p.k, p.memory, out)
    }
}

/// What `cpuscope placement` may change.
#[derive(Clone, Debug)]
pub struct Params {
    /// Workloads on each CPU set.
    pub workloads: Vec<SetWorkload>,
    /// Cores per spread set.
    pub k: usize,
    /// Compare memory local/remote/interleaved too.
    pub memory: bool,
}

impl Params {
    /// From the command's options: workload names (none: the profile's),
    /// `k` (2 to 4096), memory comparison or not.
    pub fn new(names: &[String], k: usize, memory: bool, profile: Profile) -> Result<Params> {
        if !(2..=4096).contains(&k) {
            anyhow::bail!("--k must be between 2 and 4096 (got {k})");
        }
        let mut workloads = Vec::new();
        for w in names.iter().filter(|s| !s.trim().is_empty()) {
            match SetWorkload::parse(w) {
                Some(x) => workloads.push(x),
                None => anyhow::bail!("unknown placement workload '{w}' (compute, shared, triad)"),
            }
        }
        if workloads.is_empty() {
            workloads = self::workloads(profile);
        }
        Ok(Params {
            workloads,
            k,
            memory,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_reference_from_the_published_set() {
        let r = serde_json::to_value(seed_spread_reference()).unwrap();
        assert_eq!(r["set"], SPREAD_REFERENCE_SET);
        assert!(r["label"].as_str().unwrap().contains("published"));
        let rows = r["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 5);
        let pct = |set: &str, cpus: &str| {
            rows.iter()
                .find(|x| x["set"] == set && x["cpus"] == cpus)
                .and_then(|x| x["relative_pct"].as_f64())
                .unwrap()
        };
        assert!((pct("one_node", "72,73,74,75") - 100.0).abs() < 1e-9);
        assert!((pct("all_nodes", "0,24,48,72") - 74.69).abs() < 0.01);
        assert!((pct("two_nodes_same_socket", "48,49,72,73") - 95.44).abs() < 0.01);
    }
}

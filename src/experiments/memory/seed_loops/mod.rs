//! The seeds' own loops as named experiments:
//! - seed 002's cache-line loop: `arr[i] *= 3` over every element, then over
//!   every 16th element of the same array; 16× fewer operations, yet the time
//!   ratio is far below 16 because both loops touch every cache line;
//! - seed 000's `memory_bound()`: `_mm_clflush(&a); b = a;` in a loop: ns per
//!   flushed load (a DRAM round trip from one hot line).

pub mod view;

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::base::Stats;
use crate::experiments::common::{self, fixed_policy, with_counters, CacheFacts, DRAM_REACH, MIB};
use crate::experiments::experiment::{ExpCtx, Experiment, Profile};
use crate::experiments::memory::payload::CachelineRatioData;
use crate::harness::measure::{measure, Policy, Warmup};
use crate::kernels::memory::{cacheline_loop, clflush_loop};
use crate::machine::MachineInfo;
use crate::placement::buffer::{Buffer, BufferOptions};
use crate::placement::pin::AffinityGuard;
use crate::results::published;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use std::time::Duration;

pub struct SeedLoops;

pub const EXP: &str = "seed_loops";
/// Seed 002's loop over an i32 array, every element and every 16th (ms per pass).
pub const CACHELINE_EVERY: MetricId = MetricId::new(EXP, "cacheline_every");
pub const CACHELINE_EVERY16: MetricId = MetricId::new(EXP, "cacheline_every16");
/// Time of the every-element loop / the every-16th loop.
pub const CACHELINE_RATIO: MetricId = MetricId::new(EXP, "cacheline_ratio");
/// Seed 000's loop: flush a line, load it (ns per iteration).
pub const CLFLUSH_LOAD: MetricId = MetricId::new(EXP, "clflush_load");
const METHOD_VERSION: u32 = 1;

/// Bytes of the cache-line loop's array on `cpu`: the seed's 64 Mi ints
/// (256 MiB), at least 4× the last-level caches that CPU can fill so both
/// loops run from DRAM.
pub fn array_bytes(machine: &MachineInfo, cpu: usize) -> usize {
    array_fit(machine, cpu).0
}

/// [`array_bytes`], a note when memory cut it, and why the loop's figures
/// are not available when the array that fits stays within
/// [`DRAM_REACH`] × the last-level cache (both loops would run from cache).
fn array_fit(machine: &MachineInfo, cpu: usize) -> (usize, Option<String>, Option<String>) {
    let cf = CacheFacts::of(machine);
    let llc = cf.llc_serving(machine, &CpuSet::from_ids([cpu]));
    let wanted = (256 * MIB).max(llc * 4);
    let room = common::memory_room();
    let bytes = (wanted.min(common::auto_cap_of(&room) / 2) / 64 * 64).max(64 * 1024);
    let note = (bytes < wanted)
        .then(|| common::capped_note("the cache-line loop's array", bytes, wanted, &room));
    let reach = llc.saturating_mul(DRAM_REACH);
    let why = (bytes < reach).then(|| {
        common::fit_or_reason(
            &room,
            &format!(
                "the cache-line loop needs (twice its {DRAM_REACH} × the {} last-level cache array: it runs from memory)",
                fmt_size(llc)
            ),
            reach * 2,
        )
        .err()
        .unwrap_or_else(|| format!("the array of {} stays within the caches", fmt_size(bytes)))
    });
    (bytes, note, why)
}

fn reps(profile: Profile) -> usize {
    match profile {
        Profile::Quick => 3,
        Profile::Standard => 7,
        Profile::Full => 10,
    }
}

/// `CACHELINE_RATIO`'s record from the two loops' statistics (`every`
/// over all `n` elements, `every16` over every 16th); not available
/// without a sample of each.
fn ratio_record(every: Option<Stats>, every16: Option<Stats>, n: usize) -> ResultRecord {
    let mut ratio = ResultRecord::of(CACHELINE_RATIO, "ratio", false).with_method(
        "time of the every-element loop / time of the every-16th loop (medians): 16 would mean time follows operations; near 1 means it follows cache lines",
        METHOD_VERSION,
    );
    match (every, every16) {
        (Some(a), Some(b)) if b.median > 0.0 => {
            ratio.value = Some(a.median / b.median);
            ratio = ratio
                .with_note(&format!(
                    "16× fewer multiplications, {:.1}× less time: the every-16th loop still loads every 64-byte line (16 ints), so memory traffic, not work, sets its time ({})",
                    a.median / b.median,
                    published_ratios()
                ))
                .with_payload(&CachelineRatioData {
                    ns_per_element_every: a.median / n as f64,
                    ns_per_element_every16: b.median / (n / 16) as f64,
                    elements: n,
                });
        }
        _ => ratio.unavailable_reason = Some("a loop produced no sample".into()),
    }
    ratio
}

pub fn run_cpu(
    ctx: &mut ExpCtx,
    cpu: usize,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let _pin = AffinityGuard::pin(cpu)?;
    let (bytes, cut, unavailable) = array_fit(ctx.machine, cpu);
    match unavailable {
        Some(why) => {
            for (id, unit) in [
                (CACHELINE_EVERY, "ms"),
                (CACHELINE_EVERY16, "ms"),
                (CACHELINE_RATIO, "ratio"),
            ] {
                out(ResultRecord::unavailable(
                    id.experiment,
                    id.metric,
                    unit,
                    &why,
                ))?;
            }
        }
        None => cacheline_figures(ctx, bytes, cut, out)?,
    }
    clflush_figure(ctx, out)
}

/// Seed 002's loop over an array of `bytes` (`cut`: the note when memory
/// made it smaller than the seed's).
fn cacheline_figures(
    ctx: &mut ExpCtx,
    bytes: usize,
    cut: Option<String>,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let n = bytes / 4;
    // 1. The cache-line loop.
    (ctx.step)(&format!("cache-line loop over {}", fmt_size(bytes)));
    let mut buf = Buffer::new(bytes, &BufferOptions::base_here())?;
    {
        let a = buf.as_mut_slice::<i32>();
        for (i, x) in a.iter_mut().enumerate() {
            *x = i as i32;
        }
    }
    let pol = fixed_policy(reps(ctx.profile), 1);
    let mut run = |step: usize| -> Result<(Vec<f64>, Option<serde_json::Value>, String)> {
        let a = buf.as_mut_slice::<i32>();
        let (m, c, why) = with_counters(
            &format!("seed 002 cache-line loop, step {step}, all passes"),
            || measure(&pol, ctx.stop, |_| cacheline_loop(a, step) as u64),
        );
        Ok((m?.samples, c, why))
    };
    let (every, c1, why) = run(1)?;
    let (every16, c16, why16) = run(16)?;
    let ms = |v: &[f64]| v.iter().map(|x| x / 1e6).collect::<Vec<f64>>();
    let method = |step: usize| {
        format!(
            "seed 002: for i in (0..{n}).step_by({step}) {{ arr[i] *= 3 }} over an i32 array of {} (volatile scalar accesses, as the C loop compiles); ms per pass; median of passes",
            fmt_size(bytes)
        )
    };
    let mut r1 = ResultRecord::of(CACHELINE_EVERY, "ms", false)
        .with_method(&method(1), METHOD_VERSION)
        .with_samples(ms(&every))
        .with_note(&format!("counters: {why}"));
    if let Some(c) = c1 {
        r1 = r1.with_counters(c);
    }
    let mut r16 = ResultRecord::of(CACHELINE_EVERY16, "ms", false)
        .with_method(&method(16), METHOD_VERSION)
        .with_samples(ms(&every16))
        .with_note(&format!("counters: {why16}"));
    if let Some(c) = c16 {
        r16 = r16.with_counters(c);
    }
    if let Some(c) = &cut {
        r1 = r1.with_note(c);
        r16 = r16.with_note(c);
    }
    out(r1)?;
    out(r16)?;
    out(ratio_record(
        Stats::from_samples(&every),
        Stats::from_samples(&every16),
        n,
    ))
}

/// Seed 000's loop: flush a line, load it.
fn clflush_figure(ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
    // 2. The clflush loop.
    (ctx.step)("clflush loop (flush a line, load it)");
    let byte = Box::new(1u8);
    let p = Policy {
        warmup: Warmup::Time(Duration::from_millis(10)),
        min_reps: reps(ctx.profile).max(5),
        max_reps: 50,
        time_budget: Duration::from_millis(match ctx.profile {
            Profile::Quick => 100,
            Profile::Standard => 300,
            Profile::Full => 1000,
        }),
        target_cv: Some(0.01),
        min_sample: Duration::from_millis(5),
        iters: None,
        max_iters: 1 << 30,
    };
    let rec = if clflush_loop(&byte, 1).is_none() {
        ResultRecord::unavailable(CLFLUSH_LOAD.experiment, CLFLUSH_LOAD.metric, "ns", "no user-level cache-line flush on this architecture (x86_64 clflush / aarch64 dc civac only)")
    } else {
        let (m, c, why) = with_counters("seed 000 clflush loop, all samples", || {
            measure(&p, ctx.stop, |it| clflush_loop(&byte, it).unwrap_or(0))
        });
        let m = m?;
        let mut r = ResultRecord::of(CLFLUSH_LOAD, "ns", false)
            .with_method(
                if cfg!(target_arch = "aarch64") {
                    "seed 000 memory_bound(): dc civac on a byte's line, then a volatile load of the byte; ns per iteration; median of samples"
                } else {
                    "seed 000 memory_bound(): _mm_clflush(&a); b = a; in a loop (no fence, as in the seed); ns per iteration = per flushed load; median of samples"
                },
                METHOD_VERSION,
            )
            .with_samples(m.samples)
            .with_note(&format!("counters: {why}"));
        if let Some(g) = ctx.facts.ghz_single {
            if let Some(v) = r.value {
                r = r.with_note(&format!("{:.0} cycles at {g:.2} GHz", v * g));
            }
        }
        if let Some(c) = c {
            r = r.with_counters(c);
        }
        r
    };
    out(rec)
}

/// Seed 002's published cache-line loop set (data/published/seed002-cacheline.json).
pub const CACHELINE_SET: &str = "seed002-cacheline";

/// "seed 002 saw 2790 ms / 730 ms = 3.8× on the Kunpeng 920 (attributed), …",
/// from the published set: the ratio of its two loops on each machine.
pub fn published_ratios() -> String {
    let Ok(set) = published::by_id(CACHELINE_SET) else {
        return "seed 002's published times are not available".into();
    };
    let time = |machine: &str, loop_: &str| {
        set.figures
            .iter()
            .find(|f| {
                f.machine == machine
                    && f.metric == "time"
                    && f.params.get("loop").and_then(|v| v.as_str()) == Some(loop_)
            })
            .and_then(|f| f.value)
    };
    let mut parts = Vec::new();
    for machine in set.machines.keys() {
        if let (Some(a), Some(b)) = (
            time(machine, "every element"),
            time(machine, "every 16th element"),
        ) {
            if b > 0.0 {
                parts.push(format!(
                    "{} ms / {} ms = {:.1}× on the {machine}",
                    published::fmt_published(a),
                    published::fmt_published(b),
                    a / b
                ));
            }
        }
    }
    if parts.is_empty() {
        return "seed 002's published times are not available".into();
    }
    format!(
        "seed 002 published {} (10 passes each; published data, not measured on this run)",
        parts.join(", ")
    )
}

impl Experiment for SeedLoops {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "the seeds' loops: cache-line loop (every vs every 16th), clflush load loop"
    }
    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        let b = array_bytes(machine, cpus.first().unwrap_or(0)) as f64;
        // init + (reps+1) passes of each loop (~1.5 ns per element, ~3 GB/s) + clflush.
        let n = b / 4.0;
        let r = reps(profile) as f64 + 1.0;
        b / 3e9
            + r * (n * 1.2e-9 + b / 3e9)
            + match profile {
                Profile::Quick => 0.2,
                Profile::Standard => 0.4,
                Profile::Full => 1.1,
            }
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let Some(cpu) = ctx.cpus.first() else {
            return out(ResultRecord::unavailable(
                CACHELINE_RATIO.experiment,
                CACHELINE_RATIO.metric,
                "ratio",
                "no usable CPU",
            ));
        };
        run_cpu(ctx, cpu, out)
    }
}

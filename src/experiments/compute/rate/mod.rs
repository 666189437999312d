//! Rate score (SPEC-rate style, seed 003): N copies of one workload started
//! together, each pinned to its own CPU (one per physical core first, then
//! the other hardware threads); the score is jobs per hour from the time the
//! last copy finishes, and the scaling efficiency per copy is
//! rate(N) / (N × rate(1)).
//!
//! Workloads: `bc-pow[:E]` (echo "7^E" | bc), `bc-pi[:S]` (bc -l, scale S),
//! `chacha[:VARIANT]` and `nop` (in-process pinned threads doing a fixed
//! amount of work each), `mem[:MIB]` (seed 002's `arr[i] *= 3` loop over a
//! private array per copy: memory-bound), or any command (`cpuscope rate --
//! CMD ARGS`).
//!
//! Memory placement (seed 003's variable: BIOS node interleave, NUMA local,
//! all memory on one node, "4+0"): `--mem local|interleave|node:N|preferred:N`
//! (a comma list runs each) starts every copy under that memory policy —
//! processes inherit it at fork, in-process copies' arrays are bound with
//! `mbind` and touched from the copy's CPU — and records it as param `mem`,
//! the pages' nodes (verified with `move_pages`) in `data`, and the change of
//! each placement against interleave (`mem_change`, seed 003's reference).
//! `run` adds that comparison on machines with more than one memory node.

pub mod text;
pub mod view;
mod workload;

pub use workload::*;

use crate::base::CpuSet;
use crate::experiments::common::{self, MIB};
use crate::experiments::compute::payload::{EfficiencyData, MemChangeData, PagesPerNode, RateData};
use crate::experiments::compute::simd::ordered_cpus;
use crate::experiments::compute::workloads::{
    bc_pi_cmd, bc_pow_cmd, copy_bindings, find_in_path, run_copies, Cmd, ProcRun,
};
use crate::experiments::experiment::{one_cpu_per_core, ExpCtx, Experiment, Profile, WithParams};
use crate::kernels::chacha::{self, Variant};
use crate::kernels::cpu_loops::nop_loop;
use crate::kernels::memory::cacheline_loop;
use crate::machine::MachineInfo;
use crate::placement::mempolicy::{page_nodes, set_thread_policy, MemPolicy};
use crate::placement::team::Team;
use crate::placement::{Buffer, BufferOptions, PageRequest, Touch};
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{bail, Result};
use std::ffi::OsString;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub struct Rate;

pub const EXP: &str = "rate";
/// Jobs per hour with N copies at once (params workload, copies).
pub const JOBS_PER_HOUR: MetricId = MetricId::new(EXP, "jobs_per_hour");
/// Rate with N copies / (N × rate with 1 copy), in %.
pub const EFFICIENCY: MetricId = MetricId::new(EXP, "efficiency");
/// Rate under a memory placement against interleave, same workload and
/// copies, in % (seed 003: "change against symmetric NUMA with Node
/// Interleave"); params workload, copies, mem.
pub const MEM_CHANGE: MetricId = MetricId::new(EXP, "mem_change");
const METHOD_VERSION: u32 = 1;

/// One rate measurement: N copies, some rounds.
#[derive(Clone, Debug)]
pub struct RateRun {
    pub copies: usize,
    pub cpus: CpuSet,
    /// Per round: seconds until the last copy finished.
    pub makespan_s: Vec<f64>,
    /// Per round, per copy: seconds.
    pub copy_s: Vec<Vec<f64>>,
    /// The memory placement the copies ran under (None: the default policy,
    /// not chosen).
    pub mem: Option<MemPlacement>,
    /// Where the copies' arrays lay (`mem` workload): pages per node, from
    /// `move_pages`; or why not known.
    pub pages: Option<std::result::Result<std::collections::BTreeMap<usize, usize>, String>>,
}

impl RateRun {
    /// Jobs per hour, per round.
    pub fn jobs_per_hour(&self) -> Vec<f64> {
        self.makespan_s
            .iter()
            .map(|m| self.copies as f64 * 3600.0 / m)
            .collect()
    }
}

/// Work per copy for in-process workloads: iterations for about `target`
/// seconds on one CPU (calibrated once, pinned).
pub fn calibrate_work(w: &RateWorkload, cpu: usize, target: Duration) -> Result<u64> {
    let _g = crate::placement::pin::AffinityGuard::pin(cpu)?;
    let mut buf = match w {
        RateWorkload::Mem(m) => Some(Buffer::new(*m as usize * MIB, &BufferOptions::base_here())?),
        _ => None,
    };
    let mut iters: u64 = 1;
    loop {
        let t0 = Instant::now();
        let arr = buf.as_mut().map(|b| b.as_mut_slice::<i32>());
        std::hint::black_box(run_internal(w, iters, 0, arr));
        let t = t0.elapsed();
        if t >= target / 4 || iters >= 1 << 40 {
            let scale = target.as_secs_f64() / t.as_secs_f64().max(1e-9);
            return Ok(((iters as f64 * scale).ceil() as u64).max(1));
        }
        iters = iters.saturating_mul(4);
    }
}

fn run_internal(w: &RateWorkload, iters: u64, seed: u64, arr: Option<&mut [i32]>) -> u64 {
    match (w, arr) {
        (RateWorkload::Chacha(v), _) => chacha::run(*v, iters, seed),
        (RateWorkload::Nop, _) => nop_loop(iters),
        (RateWorkload::Mem(_), Some(a)) => {
            let mut x = 0i64;
            for _ in 0..iters {
                x = x.wrapping_add(cacheline_loop(a, 1));
            }
            x as u64
        }
        _ => 0,
    }
}

/// A copy's array, shared with its team thread by address.
#[derive(Clone, Copy)]
struct ArrayPtr {
    addr: usize,
    ints: usize,
}

/// Command for a process workload.
pub fn process_cmd(w: &RateWorkload) -> Result<Cmd> {
    let bc = || {
        find_in_path("bc").ok_or_else(|| anyhow::anyhow!("bc not installed (not found in PATH)"))
    };
    Ok(match w {
        RateWorkload::BcPow(e) => bc_pow_cmd(&bc()?, *e),
        RateWorkload::BcPi(s) => bc_pi_cmd(&bc()?, *s),
        RateWorkload::Command(c) => c.clone(),
        _ => bail!("not a process workload"),
    })
}

/// Fail when any copy of a process workload did not exit with status 0:
/// the command, how the first failed copy ended and its first stderr line.
fn check_copies_ok(cmd: &Cmd, res: &[ProcRun]) -> Result<()> {
    if let Some(bad) = res.iter().find(|r| r.code != Some(0)) {
        bail!(
            "'{}' failed ({}): {}",
            cmd.display(),
            bad.code
                .map(|c| format!("status {c}"))
                .unwrap_or_else(|| "killed by a signal".into()),
            bad.stderr.lines().next().unwrap_or("").trim()
        );
    }
    Ok(())
}

/// The `mem` workload's arrays of `mib` MiB: one per copy, bound by the
/// policy and first touched from the copy's CPU (so "local" is the copy's
/// node).
fn mem_arrays(mib: u32, cpus: &[usize], policy: Option<&MemPolicy>) -> Result<Vec<Buffer>> {
    let mut bufs: Vec<Buffer> = Vec::new();
    for &c in cpus {
        bufs.push(Buffer::new(
            mib as usize * MIB,
            &BufferOptions {
                pages: PageRequest::Base,
                policy: policy.cloned(),
                touch: Touch::FromCpu(c),
            },
        )?);
    }
    Ok(bufs)
}

/// Where the arrays' pages lie, summed over the arrays (from `move_pages`),
/// or why not known (the last error met).
fn pages_per_node(
    bufs: &[Buffer],
) -> std::result::Result<std::collections::BTreeMap<usize, usize>, String> {
    let mut per: std::collections::BTreeMap<usize, usize> = Default::default();
    let mut why = None;
    for b in bufs {
        match page_nodes(b.as_ptr(), b.len()) {
            Ok(p) => {
                for (n, k) in p.per_node {
                    *per.entry(n).or_insert(0) += k;
                }
            }
            Err(e) => why = Some(format!("{e:#}")),
        }
    }
    match why {
        None => Ok(per),
        Some(e) => Err(e),
    }
}

/// At least one copy, and no more copies than `usable` CPUs.
fn check_copies(copies: usize, usable: usize) -> Result<()> {
    if copies == 0 {
        bail!("--copies must be at least 1");
    }
    if copies > usable {
        bail!("{copies} copies need {copies} usable CPUs; {usable} are usable");
    }
    Ok(())
}

/// Each copy's array as its address and length in `i32`s.
fn array_ptrs(bufs: &mut [Buffer]) -> Vec<ArrayPtr> {
    bufs.iter_mut()
        .map(|b| ArrayPtr {
            addr: b.as_mut_ptr() as usize,
            ints: b.len() / 4,
        })
        .collect()
}

/// Run `copies` copies on the first `copies` CPUs of `order`, `rounds` times.
/// `work` is the per-copy iteration count for in-process workloads.
#[allow(clippy::too_many_arguments)]
pub fn measure_rate(
    w: &RateWorkload,
    order: &[usize],
    copies: usize,
    rounds: usize,
    work: u64,
    timeout: Duration,
    stop: &AtomicBool,
    mem: Option<(&MemPlacement, &CpuSet)>,
) -> Result<RateRun> {
    check_copies(copies, order.len())?;
    let cpus: Vec<usize> = order[..copies].to_vec();
    let policy = mem.and_then(|(m, nodes)| m.policy(nodes));
    let mut run = RateRun {
        copies,
        cpus: cpus.iter().copied().collect(),
        makespan_s: Vec::new(),
        copy_s: Vec::new(),
        mem: mem.map(|(m, _)| m.clone()),
        pages: None,
    };
    if w.is_process() {
        let cmd = process_cmd(w)?;
        let bindings = copy_bindings(&cpus, policy.as_ref())?;
        for _ in 0..rounds {
            let t0 = Instant::now();
            let res = run_copies(&cmd, &bindings, timeout, stop)?;
            let makespan = t0.elapsed().as_secs_f64();
            check_copies_ok(&cmd, &res)?;
            run.makespan_s.push(makespan);
            run.copy_s.push(res.iter().map(|r| r.wall_s).collect());
        }
    } else {
        // The `mem` workload's arrays: one per copy, bound by the policy and
        // first touched from the copy's CPU (so "local" is the copy's node).
        let mut bufs: Vec<Buffer> = Vec::new();
        if let RateWorkload::Mem(m) = w {
            bufs = mem_arrays(*m, &cpus, policy.as_ref())?;
            run.pages = Some(pages_per_node(&bufs));
        }
        let arrays = array_ptrs(&mut bufs);
        let body = |index: usize, iters: u64, seed: u64| {
            let arr = arrays.get(index).map(|a| {
                // SAFETY: array `index` belongs to team thread `index` alone
                // for the whole round; `bufs` outlives every round.
                unsafe { std::slice::from_raw_parts_mut(a.addr as *mut i32, a.ints) }
            });
            run_internal(w, iters, seed, arr)
        };
        let mut team = Team::new(&cpus)?;
        // One unmeasured round: each thread takes the memory policy (for
        // what it allocates itself), faults in its stack and warms up.
        let warm = (work / 20).max(1);
        let set = team.run_round(|t| {
            let ok = match &policy {
                Some(p) => set_thread_policy(p).map_err(|e| format!("{e:#}")),
                None => Ok(()),
            };
            body(t.index, warm, t.index as u64);
            ok
        })?;
        if let Some(Err(e)) = set.results.into_iter().find(|r| r.is_err()) {
            bail!("{e}");
        }
        for _ in 0..rounds {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                bail!("interrupted");
            }
            let r = team.run_round(|t| body(t.index, work, t.index as u64 * 7919))?;
            run.makespan_s.push(r.elapsed_ns / 1e9);
            run.copy_s
                .push(r.thread_ns.iter().map(|ns| ns / 1e9).collect());
        }
        drop(team);
        drop(bufs);
    }
    Ok(run)
}

/// Build the records of a rate study: jobs/h for each copy count, and the
/// efficiency per copy against the 1-copy rate under the same memory
/// placement (when measured). Runs under a chosen placement carry param
/// `mem`; `nodes` are the usable memory nodes (for the notes).
pub fn rate_records(
    w: &RateWorkload,
    runs: &[(String, RateRun)],
    work: Option<u64>,
) -> Vec<ResultRecord> {
    rate_records_on(w, runs, work, &CpuSet::new(), true)
}

/// [`rate_records`] with the memory nodes named and the efficiency records
/// optional (the memory comparison of `run` has no 1-copy baseline).
pub fn rate_records_on(
    w: &RateWorkload,
    runs: &[(String, RateRun)],
    work: Option<u64>,
    nodes: &CpuSet,
    efficiency: bool,
) -> Vec<ResultRecord> {
    let mut out = Vec::new();
    let one = |mem: &Option<MemPlacement>| {
        runs.iter()
            .find(|r| r.1.copies == 1 && r.1.mem == *mem)
            .and_then(|r| median_jobs_per_hour(&r.1))
    };
    for (label, r) in runs {
        let rec = jobs_per_hour_record(w, label, r, work, nodes);
        let v = rec.value;
        out.push(rec);
        if r.copies > 1 && efficiency {
            out.push(efficiency_record(w, label, r, v, one(&r.mem)));
        }
    }
    // Each placement against interleave at the same copies (seed 003's reference).
    for (label, r) in runs {
        let Some(m) = r.mem.as_ref().filter(|m| **m != MemPlacement::Interleave) else {
            continue;
        };
        let Some(il) = runs
            .iter()
            .find(|x| x.0 == *label && x.1.mem.as_ref() == Some(&MemPlacement::Interleave))
        else {
            continue;
        };
        out.push(mem_change_record(w, label, m, (r, &il.1), nodes));
    }
    out
}

/// Median jobs/h over a run's rounds (None when there are no rounds).
fn median_jobs_per_hour(r: &RateRun) -> Option<f64> {
    crate::base::Stats::from_samples(&r.jobs_per_hour()).map(|s| s.median)
}

/// `rec` with param `mem` when the run had a chosen memory placement.
fn with_mem(mut rec: ResultRecord, r: &RateRun) -> ResultRecord {
    if let Some(m) = &r.mem {
        rec = rec.with_param("mem", m.label());
    }
    rec
}

/// The jobs/h record of one copy count: samples per round, the run's data
/// (CPUs, makespans, per-copy times, memory placement and pages) and the
/// placement notes.
fn jobs_per_hour_record(
    w: &RateWorkload,
    label: &str,
    r: &RateRun,
    work: Option<u64>,
    nodes: &CpuSet,
) -> ResultRecord {
    let mem_text = r
        .mem
        .as_ref()
        .map(|m| format!("; {}", m.describe(nodes)))
        .unwrap_or_default();
    let mut rec = with_mem(
        ResultRecord::of(JOBS_PER_HOUR, "jobs/h", true)
            .with_param("workload", w.key())
            .with_param("copies", label),
        r,
    )
    .with_method(
        &format!(
            "{}; {} copies started together, each pinned to its own CPU{mem_text}; jobs/h = copies × 3600 / seconds until the last copy finished; median of rounds",
            w.describe(),
            r.copies
        ),
        METHOD_VERSION,
    )
    .with_samples(r.jobs_per_hour());
    let pages = r.pages.as_ref().map(|p| match p {
        Ok(p) => PagesPerNode::Counted(p.iter().map(|(n, c)| (n.to_string(), *c as u64)).collect()),
        Err(e) => PagesPerNode::NotCounted {
            not_available: e.clone(),
        },
    });
    rec = rec.with_payload(&RateData {
        copies: r.copies,
        cpus: r.cpus.to_string(),
        makespan_s: r.makespan_s.clone(),
        copy_s: r.copy_s.clone(),
        work_iterations_per_copy: work,
        mem: r.mem.as_ref().map(|m| m.label()),
        mem_nodes: nodes.to_string(),
        pages_per_node: pages,
    });
    if let Some(m) = &r.mem {
        if let Some(n) = m.same_as_local(nodes) {
            rec = rec.with_note(&n);
        }
        if !w.uses_memory() {
            rec = rec.with_note(&format!(
                "{} touches little memory (its state fits in registers and the stack): the placement hardly matters to it",
                w.key()
            ));
        }
        if let Some(Ok(p)) = &r.pages {
            let total: usize = p.values().sum();
            if total > 0 {
                let parts: Vec<String> = p
                    .iter()
                    .map(|(n, k)| format!("node {n}: {:.0}%", *k as f64 / total as f64 * 100.0))
                    .collect();
                rec = rec.with_note(&format!("pages checked (move_pages): {}", parts.join(", ")));
            }
        }
    }
    rec
}

/// The scaling efficiency of one copy count: its median jobs/h `n` against
/// `copies` × the 1-copy median `one` under the same placement; not
/// available without a 1-copy rate.
fn efficiency_record(
    w: &RateWorkload,
    label: &str,
    r: &RateRun,
    n: Option<f64>,
    one: Option<f64>,
) -> ResultRecord {
    let mut e = with_mem(
        ResultRecord::of(EFFICIENCY, "%", true)
            .with_param("workload", w.key())
            .with_param("copies", label),
        r,
    )
    .with_method(
        "rate with N copies / (N × rate with 1 copy), from the medians: 100% = perfect scaling",
        METHOD_VERSION,
    );
    match (n, one) {
        (Some(n), Some(o)) if o > 0.0 => {
            e.value = Some(n / (r.copies as f64 * o) * 100.0);
            e = e.with_payload(&EfficiencyData {
                copies: r.copies,
                jobs_per_hour: n,
                one_copy_jobs_per_hour: o,
            });
        }
        _ => {
            e = with_mem(
                ResultRecord::unavailable(
                    EFFICIENCY.experiment,
                    EFFICIENCY.metric,
                    "%",
                    "the 1-copy rate was not measured",
                )
                .with_param("workload", w.key())
                .with_param("copies", label),
                r,
            );
        }
    }
    e
}

/// The change of jobs/h under placement `m` against memory interleaved
/// over every node, same workload and copies (`(run, interleaved run)`).
fn mem_change_record(
    w: &RateWorkload,
    label: &str,
    m: &MemPlacement,
    (r, il): (&RateRun, &RateRun),
    nodes: &CpuSet,
) -> ResultRecord {
    let mut c = ResultRecord::of(MEM_CHANGE, "%", true)
        .with_param("workload", w.key())
        .with_param("copies", label)
        .with_param("mem", m.label())
        .with_method(
            "jobs/h under this memory placement / jobs/h with memory interleaved over every node, same workload and copies, minus 1, in % (medians; seed 003's reference: symmetric NUMA with node interleave = 100%)",
            METHOD_VERSION,
        );
    match (median_jobs_per_hour(r), median_jobs_per_hour(il)) {
        (Some(a), Some(b)) if b > 0.0 => {
            c.value = Some((a / b - 1.0) * 100.0);
            c = c.with_payload(&MemChangeData {
                jobs_per_hour: a,
                interleave_jobs_per_hour: b,
            });
            if let Some(n) = m
                .same_as_local(nodes)
                .or_else(|| MemPlacement::Interleave.same_as_local(nodes))
            {
                c = c.with_note(&n);
            }
        }
        _ => {
            c = ResultRecord::unavailable(
                MEM_CHANGE.experiment,
                MEM_CHANGE.metric,
                "%",
                "a rate under one of the two placements was not measured",
            )
            .with_param("workload", w.key())
            .with_param("copies", label)
            .with_param("mem", m.label());
        }
    }
    c
}

/// The copy counts `run` uses: 1, one per core, all logical CPUs (if more).
pub fn default_copies(machine: &MachineInfo, cpus: &CpuSet) -> Vec<(String, usize)> {
    let per_core = one_cpu_per_core(machine, cpus).len();
    let mut v = vec![("1".to_string(), 1)];
    if per_core > 1 {
        v.push(("per_core".into(), per_core));
    }
    if cpus.len() > per_core {
        v.push(("all".into(), cpus.len()));
    }
    v
}

/// The workload `run` uses: bc 7^E when bc is installed, else ChaCha20 scalar.
pub fn default_workload(profile: Profile) -> RateWorkload {
    if find_in_path("bc").is_some() {
        RateWorkload::BcPow(match profile {
            Profile::Quick => 49_999,
            _ => 99_999,
        })
    } else {
        RateWorkload::Chacha(Variant::Scalar)
    }
}

fn rounds(profile: Profile) -> usize {
    match profile {
        Profile::Quick => 1,
        Profile::Standard => 2,
        Profile::Full => 5,
    }
}

impl Experiment for Rate {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "rate score: N copies of a workload (SPEC-rate style), jobs/hour and efficiency per copy"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        let per_copy = match default_workload(profile) {
            RateWorkload::BcPow(49_999) => 0.35,
            RateWorkload::BcPow(_) => 0.8,
            _ => 0.3,
        };
        let main =
            default_copies(machine, cpus).len() as f64 * rounds(profile) as f64 * per_copy * 1.3;
        // The memory-placement comparison on machines with several memory
        // nodes: three placements, each a calibrated 0.3 s per round, plus
        // touching the arrays (~1 GB/s per copy).
        let study = match MemStudy::for_machine(machine, cpus, profile) {
            Some(st) => {
                let bytes = st.mib as f64 * MIB as f64;
                0.5 + st.placements.len() as f64
                    * (rounds(profile) as f64 * 0.3 * 1.3 + bytes / 1e9)
            }
            None => 0.0,
        };
        main + study
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let mut p = Params::defaults(ctx.machine, &ctx.cpus, ctx.profile);
        self.run_with(ctx, &mut p, out)
    }
}

/// `cpuscope rate`'s [`Params`].
impl WithParams for Rate {
    type Params = Params;
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut Params,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        let w = &p.workload;
        let order = ordered_cpus(ctx.machine, &ctx.cpus);
        if order.is_empty() {
            out(ResultRecord::unavailable(
                JOBS_PER_HOUR.experiment,
                JOBS_PER_HOUR.metric,
                "jobs/h",
                "no usable CPU",
            ))?;
            return Ok(());
        }
        let nodes = mem_nodes(ctx.machine);
        // The `mem` workload's arrays: a copy count whose arrays do not fit
        // the memory this process may take is not available, with why.
        let refused = |n: usize| mem_copies_refused(w, n);
        if let Some(why) = refused(1) {
            for (label, _) in &p.copies {
                out(refused_record(w, label, &why))?;
            }
            return Ok(());
        }
        let work = if w.is_process() {
            None
        } else {
            Some(calibrate_work(w, order[0], p.calibrate)?)
        };
        let mut runs = Vec::new();
        for m in &p.placements() {
            for (label, n) in &p.copies {
                if let Some(why) = refused(*n) {
                    out(refused_record(w, label, &why))?;
                    continue;
                }
                (ctx.step)(&format!(
                    "{} × {n} copies{}",
                    w.key(),
                    m.as_ref()
                        .map(|m| format!(", memory {}", m.label()))
                        .unwrap_or_default()
                ));
                let r = measure_rate(
                    w,
                    &order,
                    *n,
                    p.rounds,
                    work.unwrap_or(0),
                    p.timeout,
                    ctx.stop,
                    m.as_ref().map(|m| (m, &nodes)),
                )?;
                runs.push((label.clone(), r));
            }
        }
        let per_core = one_cpu_per_core(ctx.machine, &ctx.cpus).len();
        let no_smt = p.explain_no_smt && ctx.cpus.len() == per_core;
        for mut r in rate_records_on(w, &runs, work, &nodes, true) {
            if no_smt && r.params.get("copies").and_then(|v| v.as_str()) == Some("per_core") {
                r = r.with_note(
                    "no SMT among the usable CPUs: one copy per core is also every logical CPU",
                );
            }
            out(r)?;
        }
        if no_smt {
            out(no_smt_record(w))?;
        }
        if let Some(st) = &p.mem_study {
            run_mem_study(ctx, st, &order, &nodes, p.rounds, out)?;
        }
        Ok(())
    }
}

/// Why `n` copies of the `mem` workload cannot have their arrays in the
/// memory this process may take now (`common::memory_room`: MemAvailable
/// and the cgroup's limit); None when they fit or `w` is another workload.
fn mem_copies_refused(w: &RateWorkload, n: usize) -> Option<String> {
    let RateWorkload::Mem(m) = w else {
        return None;
    };
    common::fit_or_reason(
        &common::memory_room(),
        &format!("{n} copies of the {m} MiB array need"),
        (*m as usize).saturating_mul(MIB).saturating_mul(n),
    )
    .err()
}

/// The not-available record of all logical CPUs where they are one copy per
/// core (no SMT).
fn no_smt_record(w: &RateWorkload) -> ResultRecord {
    ResultRecord::unavailable(
        JOBS_PER_HOUR.experiment,
        JOBS_PER_HOUR.metric,
        "jobs/h",
        "no SMT among the usable CPUs: all logical CPUs = one copy per core",
    )
    .with_param("workload", w.key())
    .with_param("copies", "all")
}

/// The not-available record of a copy count refused for memory.
fn refused_record(w: &RateWorkload, copies: &str, why: &str) -> ResultRecord {
    ResultRecord::unavailable(
        JOBS_PER_HOUR.experiment,
        JOBS_PER_HOUR.metric,
        "jobs/h",
        why,
    )
    .with_param("workload", w.key())
    .with_param("copies", copies)
}

/// `run`'s memory-placement comparison (seed 003): a memory-bound workload,
/// one copy per core, with memory local, interleaved over every node and
/// all on one node.
#[derive(Clone, Debug)]
pub struct MemStudy {
    pub mib: u32,
    pub copies: (String, usize),
    pub placements: Vec<MemPlacement>,
}

impl MemStudy {
    /// The comparison on a machine with more than one usable memory node
    /// and CPUs on at least one of them; None on one node.
    pub fn for_machine(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> Option<MemStudy> {
        let nodes = mem_nodes(machine);
        if nodes.len() < 2 {
            return None;
        }
        let per_core = one_cpu_per_core(machine, cpus).len();
        if per_core == 0 {
            return None;
        }
        // The node of the first usable CPU with memory (seed 003's "4+0":
        // all memory on the first processor's node).
        let first = ordered_cpus(machine, cpus)
            .iter()
            .filter_map(|c| machine.node_of(*c))
            .find(|n| nodes.contains(*n))
            .or_else(|| nodes.first())?;
        // At most a quarter of the memory this process may take over all
        // copies; at least 4 MiB each (if that does not fit, the study's
        // records say so: `run_mem_study`).
        let cap = (common::auto_cap() / 2 / per_core / MIB) as u32;
        let mib = DEFAULT_MEM_MIB.min(cap).max(4);
        let mib = if profile == Profile::Quick {
            mib.min(32)
        } else {
            mib
        };
        Some(MemStudy {
            mib,
            copies: ("per_core".into(), per_core),
            placements: vec![
                MemPlacement::Local,
                MemPlacement::Interleave,
                MemPlacement::Node(first),
            ],
        })
    }
}

fn run_mem_study(
    ctx: &mut ExpCtx,
    st: &MemStudy,
    order: &[usize],
    nodes: &CpuSet,
    rounds: usize,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let w = RateWorkload::Mem(st.mib);
    if let Some(why) = mem_copies_refused(&w, st.copies.1) {
        return out(refused_record(&w, &st.copies.0, &why));
    }
    let work = calibrate_work(&w, order[0], Duration::from_millis(300))?;
    let mut runs = Vec::new();
    for m in &st.placements {
        (ctx.step)(&format!(
            "{} × {} copies, memory {}",
            w.key(),
            st.copies.1,
            m.label()
        ));
        let r = measure_rate(
            &w,
            order,
            st.copies.1,
            rounds,
            work,
            Duration::from_secs(300),
            ctx.stop,
            Some((m, nodes)),
        );
        match r {
            Ok(r) => runs.push((st.copies.0.clone(), r)),
            Err(e) => out(ResultRecord::unavailable(
                JOBS_PER_HOUR.experiment,
                JOBS_PER_HOUR.metric,
                "jobs/h",
                &format!("{e:#}"),
            )
            .with_param("workload", w.key())
            .with_param("copies", st.copies.0.as_str())
            .with_param("mem", m.label()))?,
        }
    }
    for r in rate_records_on(&w, &runs, Some(work), nodes, false) {
        out(r)?;
    }
    Ok(())
}

/// What the rate experiment runs: `run`'s defaults, or `cpuscope rate`'s options.
#[derive(Clone, Debug)]
pub struct Params {
    pub workload: RateWorkload,
    /// Copy counts with their labels (`1`, `per_core`, `all`, a number).
    pub copies: Vec<(String, usize)>,
    /// Rounds per copy count (the median is reported).
    pub rounds: usize,
    /// Work per copy of in-process workloads: about this long on one CPU.
    pub calibrate: Duration,
    /// Per-round time limit of process workloads.
    pub timeout: Duration,
    /// Say so when one copy per core is every logical CPU (no SMT).
    pub explain_no_smt: bool,
    /// Memory placements to run every copy count under (`--mem`); empty:
    /// the default policy, no `mem` param on the records.
    pub mem: Vec<MemPlacement>,
    /// `run`'s memory-placement comparison (machines with several memory nodes).
    pub mem_study: Option<MemStudy>,
}

impl Params {
    /// The memory placements every copy count runs under (None: the default
    /// policy, no `mem` param).
    fn placements(&self) -> Vec<Option<MemPlacement>> {
        if self.mem.is_empty() {
            vec![None]
        } else {
            self.mem.iter().cloned().map(Some).collect()
        }
    }

    /// What `run` measures: the default workload at 1, one per core and all,
    /// and the memory-placement comparison where there are memory nodes.
    pub fn defaults(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> Params {
        Params {
            workload: default_workload(profile),
            copies: default_copies(machine, cpus),
            rounds: rounds(profile),
            calibrate: Duration::from_millis(300),
            timeout: Duration::from_secs(300),
            explain_no_smt: true,
            mem: Vec::new(),
            mem_study: MemStudy::for_machine(machine, cpus, profile),
        }
    }

    /// What `cpuscope rate` asks: its workload and copy counts, `rounds`
    /// (1 to 1000), `seconds` of work per in-process copy (up to an hour),
    /// a `timeout` per round of process copies, the memory placements.
    pub fn chosen(
        workload: RateWorkload,
        copies: Vec<(String, usize)>,
        rounds: usize,
        seconds: f64,
        timeout: u64,
        mem: Vec<MemPlacement>,
    ) -> Result<Params> {
        if rounds == 0 || rounds > 1000 {
            bail!("--rounds must be between 1 and 1000 (got {rounds})");
        }
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
            bail!("--seconds must be between 0 and 3600 (got {seconds})");
        }
        Ok(Params {
            workload,
            copies,
            rounds,
            calibrate: Duration::from_secs_f64(seconds),
            timeout: Duration::from_secs(timeout),
            explain_no_smt: false,
            mem,
            mem_study: None,
        })
    }
}

/// The workload named (`bc-pow[:EXP]`…) or given as a command after `--`
/// (found in PATH, or a path to a file); exactly one of the two.
pub fn workload_from(name: Option<&str>, command: &[OsString]) -> Result<RateWorkload> {
    match (name, command.is_empty()) {
        (Some(_), false) => bail!("give a WORKLOAD name or a command after --, not both"),
        (None, true) => bail!(
            "no workload: name one (bc-pow[:EXP], bc-pi[:SCALE], chacha[:VARIANT], nop) or give a command after --"
        ),
        (Some(w), true) => parse_workload(w),
        (None, false) => {
            let prog = &command[0];
            let shown = crate::base::args::display(prog);
            let path = if crate::base::args::contains(prog, "/") {
                let p = std::path::PathBuf::from(prog);
                if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
                    bail!("cannot start '{shown}': no such file");
                }
                p
            } else {
                find_in_path(prog)
                    .ok_or_else(|| anyhow::anyhow!("command '{shown}' not found in PATH"))?
            };
            Ok(RateWorkload::Command(Cmd {
                program: path,
                args: command[1..].to_vec(),
                stdin: None,
            }))
        }
    }
}

/// `--copies`: counts, `per_core` (one per core) or `all` (one per logical
/// CPU), each at most the CPUs there are; the 1-copy baseline first unless
/// `baseline` is false.
pub fn copies_from(
    list: &[String],
    machine: &MachineInfo,
    cpus: &CpuSet,
    baseline: bool,
) -> Result<Vec<(String, usize)>> {
    let per_core = one_cpu_per_core(machine, cpus).len();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in list {
        let t = c.trim();
        let n = match t {
            "per_core" => per_core,
            "all" => cpus.len(),
            _ => match t.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => bail!("--copies: '{t}' is not a positive count (or per_core, all)"),
            },
        };
        if n > cpus.len() {
            bail!(
                "--copies {n}: only {} usable CPUs (copies are pinned one per CPU)",
                cpus.len()
            );
        }
        if !counts.iter().any(|x| x.1 == n) {
            let label = if t == "per_core" || t == "all" {
                t.to_string()
            } else {
                n.to_string()
            };
            counts.push((label, n));
        }
    }
    if baseline && !counts.iter().any(|c| c.1 == 1) {
        counts.insert(0, ("1".into(), 1));
    }
    Ok(counts)
}

#[cfg(test)]
mod tests;

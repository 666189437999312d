//! Rate score (SPEC-rate style, seed 003): N copies of one workload started
//! together, each pinned to its own CPU (one per physical core first, then
//! the other hardware threads); the score is jobs per hour from the time the
//! last copy finishes, and the scaling efficiency per copy is
//! rate(N) / (N × rate(1)).
//!
//! Workloads: `bc-pow[:E]` (echo "7^E" | bc), `bc-pi[:S]` (bc -l, scale S),
//! `chacha[:VARIANT]` and `nop` (in-process pinned threads doing a fixed
//! amount of work each), or any command (`cpuscope rate -- CMD ARGS`).

use super::simd::ordered_cpus;
use super::workloads::{bc_pi_cmd, bc_pow_cmd, find_in_path, run_all, Cmd};
use super::{one_cpu_per_core, ExpCtx, Experiment, Profile};
use crate::kernels::chacha::{self, Variant};
use crate::kernels::cpu_loops::nop_loop;
use crate::machine::MachineInfo;
use crate::placement::team::Team;
use crate::placement::CpuSet;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{bail, Result};
use serde_json::json;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub struct Rate;

pub const EXP: &str = "rate";
/// Jobs per hour with N copies at once (params workload, copies).
pub const JOBS_PER_HOUR: MetricId = MetricId::new(EXP, "jobs_per_hour");
/// Rate with N copies / (N × rate with 1 copy), in %.
pub const EFFICIENCY: MetricId = MetricId::new(EXP, "efficiency");
const METHOD_VERSION: u32 = 1;

/// What each copy runs.
#[derive(Clone, Debug, PartialEq)]
pub enum RateWorkload {
    BcPow(u32),
    BcPi(u32),
    Chacha(Variant),
    Nop,
    Command(Cmd),
}

impl RateWorkload {
    /// Stable name used in result keys (`bc_pow_99999`, `chacha_avx2`...).
    pub fn key(&self) -> String {
        match self {
            RateWorkload::BcPow(e) => format!("bc_pow_{e}"),
            RateWorkload::BcPi(s) => format!("bc_pi_{s}"),
            RateWorkload::Chacha(v) => format!("chacha_{}", v.name()),
            RateWorkload::Nop => "nop".into(),
            RateWorkload::Command(c) => format!("command:{}", c.display()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            RateWorkload::BcPow(e) => format!("echo \"7^{e}\" | bc (one process per copy)"),
            RateWorkload::BcPi(s) => {
                format!("echo \"scale={s}; 4*a(1)\" | bc -l -q (one process per copy)")
            }
            RateWorkload::Chacha(v) => format!(
                "ChaCha20 {} keystream, a fixed amount per copy (one pinned thread per copy)",
                v.name()
            ),
            RateWorkload::Nop => {
                "seed 000's nop loop, a fixed count per copy (one pinned thread per copy)".into()
            }
            RateWorkload::Command(c) => format!("`{}` (one process per copy)", c.display()),
        }
    }

    fn is_process(&self) -> bool {
        matches!(
            self,
            RateWorkload::BcPow(_) | RateWorkload::BcPi(_) | RateWorkload::Command(_)
        )
    }
}

/// Parse `bc-pow[:E]`, `bc-pi[:S]`, `chacha[:VARIANT]`, `nop`.
pub fn parse_workload(s: &str) -> Result<RateWorkload> {
    let t = s.trim();
    let (name, arg) = match t.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (t, None),
    };
    let num = |a: Option<&str>, default: u32, what: &str| -> Result<u32> {
        match a {
            None => Ok(default),
            Some(x) => match x.parse::<u32>() {
                Ok(v) if v > 0 => Ok(v),
                _ => bail!("bad workload '{s}': {what} must be a positive integer"),
            },
        }
    };
    Ok(match name {
        "bc-pow" | "bc_pow" => RateWorkload::BcPow(num(arg, 99_999, "the exponent")?),
        "bc-pi" | "bc_pi" => RateWorkload::BcPi(num(arg, 1000, "the scale")?),
        "chacha" => {
            let v = match arg {
                None => Variant::Scalar,
                Some(a) => Variant::parse(a).ok_or_else(|| {
                    anyhow::anyhow!(
                        "bad workload '{s}': unknown variant '{a}' (scalar, sse2, avx2, avx512, neon)"
                    )
                })?,
            };
            if let Some(r) = v.unsupported_reason() {
                bail!("workload '{s}': ChaCha20 {} not available: {r}", v.name());
            }
            RateWorkload::Chacha(v)
        }
        "nop" if arg.is_none() => RateWorkload::Nop,
        _ => bail!(
            "unknown workload '{s}' (bc-pow[:EXP], bc-pi[:SCALE], chacha[:VARIANT], nop, or -- COMMAND ARGS)"
        ),
    })
}

/// One rate measurement: N copies, some rounds.
#[derive(Clone, Debug)]
pub struct RateRun {
    pub copies: usize,
    pub cpus: CpuSet,
    /// Per round: seconds until the last copy finished.
    pub makespan_s: Vec<f64>,
    /// Per round, per copy: seconds.
    pub copy_s: Vec<Vec<f64>>,
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
    let mut iters: u64 = 1;
    loop {
        let t0 = Instant::now();
        std::hint::black_box(run_internal(w, iters, 0));
        let t = t0.elapsed();
        if t >= target / 4 || iters >= 1 << 40 {
            let scale = target.as_secs_f64() / t.as_secs_f64().max(1e-9);
            return Ok(((iters as f64 * scale).ceil() as u64).max(1));
        }
        iters = iters.saturating_mul(4);
    }
}

fn run_internal(w: &RateWorkload, iters: u64, seed: u64) -> u64 {
    match w {
        RateWorkload::Chacha(v) => chacha::run(*v, iters, seed),
        RateWorkload::Nop => nop_loop(iters),
        _ => 0,
    }
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

/// Run `copies` copies on the first `copies` CPUs of `order`, `rounds` times.
/// `work` is the per-copy iteration count for in-process workloads.
pub fn measure_rate(
    w: &RateWorkload,
    order: &[usize],
    copies: usize,
    rounds: usize,
    work: u64,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<RateRun> {
    if copies == 0 {
        bail!("--copies must be at least 1");
    }
    if copies > order.len() {
        bail!(
            "{copies} copies need {copies} usable CPUs; {} are usable",
            order.len()
        );
    }
    let cpus: Vec<usize> = order[..copies].to_vec();
    let mut run = RateRun {
        copies,
        cpus: cpus.iter().copied().collect(),
        makespan_s: Vec::new(),
        copy_s: Vec::new(),
    };
    if w.is_process() {
        let cmd = process_cmd(w)?;
        for _ in 0..rounds {
            let specs: Vec<(Cmd, Option<CpuSet>)> = cpus
                .iter()
                .map(|&c| (cmd.clone(), Some(CpuSet::from_ids([c]))))
                .collect();
            let t0 = Instant::now();
            let res = run_all(&specs, false, timeout, stop)?;
            let makespan = t0.elapsed().as_secs_f64();
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
            run.makespan_s.push(makespan);
            run.copy_s.push(res.iter().map(|r| r.wall_s).collect());
        }
    } else {
        let mut team = Team::new(&cpus)?;
        // One unmeasured round to fault in the threads' stacks and warm up.
        let warm = (work / 20).max(1);
        team.run_round(|t| run_internal(w, warm, t.index as u64))?;
        for _ in 0..rounds {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                bail!("interrupted");
            }
            let r = team.run_round(|t| run_internal(w, work, t.index as u64 * 7919))?;
            run.makespan_s.push(r.elapsed_ns / 1e9);
            run.copy_s
                .push(r.thread_ns.iter().map(|ns| ns / 1e9).collect());
        }
    }
    Ok(run)
}

/// Build the records of a rate study: jobs/h for each copy count, and the
/// efficiency per copy against the 1-copy rate (when measured).
pub fn rate_records(
    w: &RateWorkload,
    runs: &[(String, RateRun)],
    work: Option<u64>,
) -> Vec<ResultRecord> {
    let mut out = Vec::new();
    let one = runs
        .iter()
        .find(|r| r.1.copies == 1)
        .and_then(|r| crate::harness::Stats::from_samples(&r.1.jobs_per_hour()).map(|s| s.median));
    for (label, r) in runs {
        let rec = ResultRecord::of(JOBS_PER_HOUR, "jobs/h", true)
            .with_param("workload", w.key())
            .with_param("copies", label.as_str())
            .with_method(
                &format!(
                    "{}; {} copies started together, each pinned to its own CPU; jobs/h = copies × 3600 / seconds until the last copy finished; median of rounds",
                    w.describe(),
                    r.copies
                ),
                METHOD_VERSION,
            )
            .with_samples(r.jobs_per_hour())
            .with_data(json!({
                "copies": r.copies,
                "cpus": r.cpus.to_string(),
                "makespan_s": r.makespan_s,
                "copy_s": r.copy_s,
                "work_iterations_per_copy": work,
            }));
        let v = rec.value;
        out.push(rec);
        if r.copies > 1 {
            let mut e = ResultRecord::of(EFFICIENCY, "%", true)
                .with_param("workload", w.key())
                .with_param("copies", label.as_str())
                .with_method(
                    "rate with N copies / (N × rate with 1 copy), from the medians: 100% = perfect scaling",
                    METHOD_VERSION,
                );
            match (v, one) {
                (Some(n), Some(o)) if o > 0.0 => {
                    e.value = Some(n / (r.copies as f64 * o) * 100.0);
                    e = e.with_data(json!({"copies": r.copies, "jobs_per_hour": n, "one_copy_jobs_per_hour": o}));
                }
                _ => {
                    e = ResultRecord::unavailable(
                        EFFICIENCY.experiment,
                        EFFICIENCY.metric,
                        "%",
                        "the 1-copy rate was not measured",
                    )
                    .with_param("workload", w.key())
                    .with_param("copies", label.as_str());
                }
            }
            out.push(e);
        }
    }
    out
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
    fn summary_text(&self, run: &crate::results::schema::Run) -> String {
        super::compute_text::render_rate(&run.results)
    }
    fn report_html(&self, run: &crate::results::schema::Run) -> String {
        super::compute_html::rate_section(run)
    }
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
        default_copies(machine, cpus).len() as f64 * rounds(profile) as f64 * per_copy * 1.3
    }

    /// Parameters: [`Params`] (`cpuscope rate`).
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let p = ctx.params_or(Params::defaults)?;
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
        let work = if w.is_process() {
            None
        } else {
            Some(calibrate_work(w, order[0], p.calibrate)?)
        };
        let mut runs = Vec::new();
        for (label, n) in &p.copies {
            (ctx.step)(&format!("{} × {n} copies", w.key()));
            let r = measure_rate(
                w,
                &order,
                *n,
                p.rounds,
                work.unwrap_or(0),
                p.timeout,
                ctx.stop,
            )?;
            runs.push((label.clone(), r));
        }
        let per_core = one_cpu_per_core(ctx.machine, &ctx.cpus).len();
        let no_smt = p.explain_no_smt && ctx.cpus.len() == per_core;
        for mut r in rate_records(w, &runs, work) {
            if no_smt && r.params.get("copies").and_then(|v| v.as_str()) == Some("per_core") {
                r = r.with_note(
                    "no SMT among the usable CPUs: one copy per core is also every logical CPU",
                );
            }
            out(r)?;
        }
        if no_smt {
            out(ResultRecord::unavailable(
                JOBS_PER_HOUR.experiment,
                JOBS_PER_HOUR.metric,
                "jobs/h",
                "no SMT among the usable CPUs: all logical CPUs = one copy per core",
            )
            .with_param("workload", w.key())
            .with_param("copies", "all"))?;
        }
        Ok(())
    }
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
}

impl Params {
    /// What `run` measures: the default workload at 1, one per core and all.
    pub fn defaults(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> Params {
        Params {
            workload: default_workload(profile),
            copies: default_copies(machine, cpus),
            rounds: rounds(profile),
            calibrate: Duration::from_millis(300),
            timeout: Duration::from_secs(300),
            explain_no_smt: true,
        }
    }

    /// What `cpuscope rate` asks: its workload and copy counts, `rounds`
    /// (1 to 1000), `seconds` of work per in-process copy (up to an hour),
    /// a `timeout` per round of process copies.
    pub fn chosen(
        workload: RateWorkload,
        copies: Vec<(String, usize)>,
        rounds: usize,
        seconds: f64,
        timeout: u64,
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
        })
    }
}

/// The workload named (`bc-pow[:EXP]`…) or given as a command after `--`
/// (found in PATH, or a path to a file); exactly one of the two.
pub fn workload_from(name: Option<&str>, command: &[String]) -> Result<RateWorkload> {
    match (name, command.is_empty()) {
        (Some(_), false) => bail!("give a WORKLOAD name or a command after --, not both"),
        (None, true) => bail!(
            "no workload: name one (bc-pow[:EXP], bc-pi[:SCALE], chacha[:VARIANT], nop) or give a command after --"
        ),
        (Some(w), true) => parse_workload(w),
        (None, false) => {
            let prog = &command[0];
            let path = if prog.contains('/') {
                let p = std::path::PathBuf::from(prog);
                if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
                    bail!("cannot start '{prog}': no such file");
                }
                p
            } else {
                find_in_path(prog)
                    .ok_or_else(|| anyhow::anyhow!("command '{prog}' not found in PATH"))?
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
mod tests {
    use super::*;

    #[test]
    fn workload_names() {
        assert_eq!(
            parse_workload("bc-pow").unwrap(),
            RateWorkload::BcPow(99_999)
        );
        assert_eq!(
            parse_workload("bc-pow:999999").unwrap(),
            RateWorkload::BcPow(999_999)
        );
        assert_eq!(
            parse_workload("bc-pi:5000").unwrap(),
            RateWorkload::BcPi(5000)
        );
        assert_eq!(
            parse_workload("chacha").unwrap(),
            RateWorkload::Chacha(Variant::Scalar)
        );
        assert_eq!(parse_workload("nop").unwrap(), RateWorkload::Nop);
        for bad in ["", "bc-pow:0", "bc-pow:x", "chacha:mmx", "spec", "nop:3"] {
            assert!(parse_workload(bad).is_err(), "{bad}");
        }
        assert!(parse_workload("chacha:mmx")
            .unwrap_err()
            .to_string()
            .contains("unknown variant"));
    }

    #[test]
    fn efficiency_from_runs() {
        let one = RateRun {
            copies: 1,
            cpus: CpuSet::from_ids([0]),
            makespan_s: vec![1.0],
            copy_s: vec![vec![1.0]],
        };
        let four = RateRun {
            copies: 4,
            cpus: CpuSet::from_ids([0, 1, 2, 3]),
            makespan_s: vec![2.0],
            copy_s: vec![vec![2.0; 4]],
        };
        let recs = rate_records(
            &RateWorkload::Nop,
            &[("1".into(), one), ("4".into(), four)],
            Some(10),
        );
        let jph: Vec<f64> = recs
            .iter()
            .filter(|r| r.is(JOBS_PER_HOUR))
            .filter_map(|r| r.value)
            .collect();
        assert_eq!(jph, [3600.0, 7200.0]);
        let eff = recs.iter().find(|r| r.is(EFFICIENCY)).unwrap();
        assert_eq!(eff.value, Some(50.0));
    }

    #[test]
    fn too_many_copies_is_an_error() {
        let stop = AtomicBool::new(false);
        let e = measure_rate(
            &RateWorkload::Nop,
            &[0],
            2,
            1,
            10,
            Duration::from_secs(1),
            &stop,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("2 copies need 2 usable CPUs"), "{e}");
        let e = measure_rate(
            &RateWorkload::Nop,
            &[0],
            0,
            1,
            10,
            Duration::from_secs(1),
            &stop,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at least 1"), "{e}");
    }
}

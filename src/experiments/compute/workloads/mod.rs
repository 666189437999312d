//! The seeds' workloads as named experiments, each with time or throughput,
//! counted (src/harness/counted.rs): the child processes with inherit, the
//! in-process loops on their thread. Every record stores its counter
//! readings (`counters`) and IPC / GHz in `data` (null with the counters'
//! reason where the machine cannot count them, never 0), and IPC / GHz
//! figures of their own (`workloads:ipc`, `workloads:ghz` with param
//! `workload`), "not available" with that reason when not counted:
//!
//! - `bc_pow`: `echo "7^999999" | bc` (seed 000); quick/standard use smaller
//!   exponents where the budget demands, and say so in the params;
//! - `bc_pi`: `echo "scale=5000; 4*a(1)" | bc -l -q` (seed 000);
//! - `openssl_aes`: `openssl speed` aes-256-ige (legacy provider tried on
//!   OpenSSL 3), else aes-256-cbc — labelled, and never compared with the
//!   seed's IGE figures — single and `-multi N`;
//! - `nop_loop`: seed 000's `cpu_bound()` loop (asm, 5 instructions);
//! - `branch_order`: seed 002's 100000×1000×100 vs 100×1000×100000 loops.
//!
//! The seeds' published figures (data/published/, loaded by
//! `results::published`) are compared, as relative %, only where a declared
//! mapping says the workload is the same; the others are carried as
//! reference only.

mod cmd;
mod published_sets;
mod published_view;
pub mod text;
pub mod view;

pub use cmd::*;
pub use published_sets::*;

use crate::base::CpuSet;
use crate::experiments::compute::payload::{
    BcData, BranchOrderRatioData, LoopNestData, NopLoopData, OpensslData, TimeRow,
};
use crate::experiments::compute::simd::{
    compute_policy, counted_data, counted_figures, ghz_at, ordered_cpus, secs_per_figure,
    single_rate_counted,
};
use crate::experiments::experiment::{one_cpu_per_core, ExpCtx, Experiment, Profile};
use crate::harness::counted::{self, Counted};
use crate::kernels::cpu_loops::{loop_nest, nop_loop, NOP_LOOP_INSNS};
use crate::machine::MachineInfo;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub struct Workloads;

pub const EXP: &str = "workloads";
/// Seconds of `bc` computing 7^N (param exp) and pi (param scale).
pub const BC_POW: MetricId = MetricId::new(EXP, "bc_pow");
pub const BC_PI: MetricId = MetricId::new(EXP, "bc_pi");
/// MB/s of `openssl speed` AES (params alg, copies, bytes).
pub const OPENSSL_AES: MetricId = MetricId::new(EXP, "openssl_aes");
/// ns per iteration of seed 000's cpu_bound loop.
pub const NOP_LOOP: MetricId = MetricId::new(EXP, "nop_loop");
/// ns per innermost iteration of seed 002's loop nests (param shape), and
/// the ratio of the two shapes.
pub const BRANCH_ORDER: MetricId = MetricId::new(EXP, "branch_order");
pub const BRANCH_ORDER_RATIO: MetricId = MetricId::new(EXP, "branch_order_ratio");
/// Counted IPC and GHz of each workload (param workload: the figure's metric).
pub const IPC: MetricId = MetricId::new(EXP, "ipc");
pub const GHZ: MetricId = MetricId::new(EXP, "ghz");
const METHOD_VERSION: u32 = 1;

// ---------------------------------------------------------------------------
// Published figures (data/published/, read through results::published).

/// Sizes of the bc workloads per profile: (exponent of 7, repetitions),
/// (pi scale, repetitions).
pub fn bc_sizes(profile: Profile) -> ((u32, usize), (u32, usize)) {
    match profile {
        Profile::Quick => ((99_999, 1), (1_000, 1)),
        Profile::Standard => ((999_999, 1), (5_000, 1)),
        Profile::Full => ((999_999, 3), (5_000, 1)),
    }
}

/// `echo "7^E" | bc`.
pub fn bc_pow_cmd(bc: &Path, exp: u32) -> Cmd {
    Cmd {
        program: bc.to_path_buf(),
        args: vec![],
        stdin: Some(format!("7^{exp}\n")),
    }
}

/// `echo "scale=S; 4*a(1)" | bc -l -q`.
pub fn bc_pi_cmd(bc: &Path, scale: u32) -> Cmd {
    Cmd {
        program: bc.to_path_buf(),
        args: vec!["-l".into(), "-q".into()],
        stdin: Some(format!("scale={scale}; 4*a(1)\n")),
    }
}

fn bc_timeout(profile: Profile) -> Duration {
    Duration::from_secs(match profile {
        Profile::Quick => 60,
        Profile::Standard => 180,
        Profile::Full => 900,
    })
}

/// A finished seed workload record and its IPC / GHz figures.
type WithFigures = (ResultRecord, Vec<ResultRecord>);

#[allow(clippy::too_many_arguments)]
fn bc_record(
    ctx: &mut ExpCtx,
    bc: &Path,
    id: MetricId,
    cmd: Cmd,
    param: (&str, u32),
    reps: usize,
    cpu: usize,
    size_note: Option<String>,
) -> Result<WithFigures> {
    let pin = CpuSet::from_ids([cpu]);
    let mut samples = Vec::new();
    let mut cpu_s = Vec::new();
    let mut windows = Vec::new();
    for i in 0..reps {
        (ctx.step)(&format!("{} ({} of {reps})", cmd.display(), i + 1));
        let (r, c) = run_counted(&cmd, Some(&pin), false, bc_timeout(ctx.profile), ctx.stop)?;
        check_exit(&cmd, &r)?;
        samples.push(r.wall_s);
        if let Some(c) = r.cpu_s {
            cpu_s.push(c);
        }
        windows.push(c);
    }
    let wall_med = crate::base::Stats::from_samples(&samples).map(|s| s.median);
    let cpu_med = crate::base::Stats::from_samples(&cpu_s).map(|s| s.median);
    let mut rec = ResultRecord::of(id, "s", false)
        .with_param(param.0, param.1)
        .with_method(
            &format!(
                "`{}` with output discarded, pinned to one CPU, wall time from its start to its exit; median of runs",
                cmd.display()
            ),
            METHOD_VERSION,
        )
        .with_samples(samples);
    let (ghz, ghz_src) = ghz_at(ctx.facts, "1");
    let mut data = BcData {
        cpu,
        command: cmd.display(),
        bc: bc.display().to_string(),
        ghz_single: ghz,
        ghz_source: ghz_src,
        cpu_s,
        counted: counted_data(&windows),
        published: None,
    };
    if let (Some(w), Some(c)) = (wall_med, cpu_med) {
        if c < 0.9 * w {
            rec = rec.with_note(&format!(
                "the process had its CPU {:.0}% of the time (CPU time {c:.2} s of {w:.2} s wall): other load shared the core, so the wall time overstates the work",
                c / w * 100.0
            ));
        }
    }
    if let Some(n) = size_note {
        rec = rec.with_note(&n);
    }
    rec = with_published_times(rec, cpu_med, &mut data);
    let figures = counted_figures(
        (IPC, GHZ),
        &[("workload", json!(id.metric)), (param.0, json!(param.1))],
        &windows,
        true,
    );
    rec = rec
        .with_payload(&data)
        .with_counters(counted::to_value(&windows));
    Ok((rec, figures))
}

/// A bc record against the seeds' published times of the same workload: a
/// note per published machine, and the comparison (by wall and by CPU time,
/// `cpu_med`) in `data`.
fn with_published_times(
    mut rec: ResultRecord,
    cpu_med: Option<f64>,
    data: &mut BcData,
) -> ResultRecord {
    if let Some(v) = rec.value {
        if let Some(mut c) = compare_times(&rec, v) {
            let compared = c.rows.iter_mut().flatten().filter_map(|r| match r {
                TimeRow::Compared(t) => Some(t),
                _ => None,
            });
            for row in compared {
                if let Some(cm) = cpu_med {
                    row.this_machine_speed_pct_by_cpu_time = Some(row.published_s / cm * 100.0);
                }
                rec = rec.with_note(&format!(
                    "vs {} (published {:.2} s): this machine runs at {:.0}% of its speed",
                    row.cpu, row.published_s, row.this_machine_speed_pct
                ));
            }
            data.published = Some(c);
        }
    }
    rec
}

/// Add the fields of `extra` (an object) to `data` (an object).
fn emit(
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    r: Result<WithFigures>,
    unavailable: impl FnOnce(String) -> ResultRecord,
) -> Result<()> {
    match r {
        Ok((rec, figs)) => {
            out(rec)?;
            for f in figs {
                out(f)?;
            }
        }
        Err(e) => out(unavailable(format!("{e:#}")))?,
    }
    Ok(())
}

fn run_bc(
    ctx: &mut ExpCtx,
    cpu: usize,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let ((exp, exp_reps), (scale, pi_reps)) = bc_sizes(ctx.profile);
    let Some(bc) = find_in_path("bc") else {
        for (id, p, v) in [(BC_POW, "exp", exp), (BC_PI, "scale", scale)] {
            out(ResultRecord::unavailable(
                id.experiment,
                id.metric,
                "s",
                "bc not installed (not found in PATH)",
            )
            .with_param(p, v))?;
        }
        return Ok(());
    };
    let pow_note = (exp != 999_999).then(|| {
        format!("profile {}: 7^{exp} instead of the seed's 7^999999 (not compared with the published figures)", ctx.profile.as_str())
    });
    let pi_note = (scale != 5000).then(|| {
        format!("profile {}: scale={scale} instead of the seed's 5000 (not compared with the published figures)", ctx.profile.as_str())
    });
    let runs = [
        (
            BC_POW,
            bc_pow_cmd(&bc, exp),
            ("exp", exp),
            exp_reps,
            pow_note,
        ),
        (
            BC_PI,
            bc_pi_cmd(&bc, scale),
            ("scale", scale),
            pi_reps,
            pi_note,
        ),
    ];
    for (id, cmd, param, reps, note) in runs {
        let rec = bc_record(ctx, &bc, id, cmd, param, reps, cpu, note);
        emit(out, rec, |e| {
            ResultRecord::unavailable(id.experiment, id.metric, "s", &e)
                .with_param(param.0, param.1)
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// openssl speed.

/// Which AES benchmark this OpenSSL can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AesChoice {
    /// `aes-256-ige` or `aes-256-cbc`.
    pub algorithm: String,
    /// Extra arguments (`-provider legacy -provider default`).
    pub provider_args: Vec<String>,
    /// How it was chosen, for the record.
    pub note: String,
    /// Why the seed's aes-256-ige could not be run (said once, in its own
    /// "not available" record); None when it runs.
    pub ige_missing: Option<String>,
}

impl AesChoice {
    pub fn is_ige(&self) -> bool {
        self.algorithm == "aes-256-ige"
    }

    fn with_missing(mut self, why: String) -> AesChoice {
        self.ige_missing = Some(why);
        self
    }
}

/// The last `+F:` line of `openssl speed -mr` output: bytes per second at
/// the one block size asked for.
pub fn parse_speed_mr(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .filter(|l| l.starts_with("+F:"))
        .filter_map(|l| l.rsplit(':').next()?.trim().parse::<f64>().ok())
        .next_back()
}

/// Seed 000's block sizes: the five columns of its `openssl speed` tables
/// (OpenSSL 1.0's sizes: 16, 64, 256, 1024, 8192 bytes).
pub const SEED_BLOCK_BYTES: [u32; 5] = [16, 64, 256, 1024, 8192];
/// The block size the seed's other figures and cpuscope's counters use.
pub const MAIN_BLOCK_BYTES: u32 = 8192;
/// Seed 000's middle process count ("测试32个线程并行": 32 processes).
pub const SEED_PROCESSES: usize = 32;

/// The block sizes a profile measures: quick only the 8192-byte column
/// (its time budget), standard and full the seed's five.
pub fn openssl_block_sizes(profile: Profile) -> &'static [u32] {
    match profile {
        Profile::Quick => &SEED_BLOCK_BYTES[4..],
        _ => &SEED_BLOCK_BYTES,
    }
}

fn openssl_cmd(
    openssl: &Path,
    choice: &AesChoice,
    secs: u32,
    multi: Option<usize>,
    bytes: u32,
) -> Cmd {
    let mut args = vec!["speed".to_string()];
    args.extend(choice.provider_args.iter().cloned());
    args.extend(["-elapsed", "-mr", "-bytes"].iter().map(|s| s.to_string()));
    args.push(bytes.to_string());
    args.push("-seconds".into());
    args.push(secs.to_string());
    if let Some(n) = multi {
        args.push("-multi".into());
        args.push(n.to_string());
    }
    args.push(choice.algorithm.clone());
    Cmd {
        program: openssl.to_path_buf(),
        args: args.into_iter().map(Into::into).collect(),
        stdin: None,
    }
}

/// Run the single-copy benchmark, choosing the algorithm on the way:
/// aes-256-ige; on "Unknown algorithm" the same with the legacy provider;
/// then aes-256-cbc. Returns the choice and the first measurement.
fn openssl_first(
    openssl: &Path,
    secs: u32,
    cpu: &CpuSet,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<(AesChoice, ProcRun, Counted)> {
    let tries = [
        AesChoice {
            algorithm: "aes-256-ige".into(),
            provider_args: vec![],
            note: "aes-256-ige, as in seed 000".into(),
            ige_missing: None,
        },
        AesChoice {
            algorithm: "aes-256-ige".into(),
            provider_args: ["-provider", "legacy", "-provider", "default"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            note: "aes-256-ige through OpenSSL 3's legacy provider, as in seed 000".into(),
            ige_missing: None,
        },
    ];
    let mut why = Vec::new();
    for t in tries {
        let cmd = openssl_cmd(openssl, &t, secs, None, MAIN_BLOCK_BYTES);
        let (r, c) = run_counted(&cmd, Some(cpu), true, timeout, stop)?;
        if r.code == Some(0) && parse_speed_mr(&r.stdout).is_some() {
            return Ok((t, r, c));
        }
        let msg = r
            .stderr
            .lines()
            .chain(r.stdout.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim()
            .to_string();
        let args: Vec<String> = cmd
            .args
            .iter()
            .map(|a| crate::base::args::display(a))
            .collect();
        why.push(format!("{}: {msg}", args.join(" ")));
    }
    let cbc = AesChoice {
        algorithm: "aes-256-cbc".into(),
        provider_args: vec![],
        note: "aes-256-cbc instead of the seed's aes-256-ige (not in this OpenSSL: see the aes-256-ige record): OpenSSL's EVP path (AES-NI / Armv8 AES where present), another mode and code path, never compared with the seed's figures".into(),
        ige_missing: None,
    };
    let missing = format!(
        "aes-256-ige, the seed's algorithm, is not in this OpenSSL ({}): nothing is compared with the seed's figures; aes-256-cbc is measured instead (another mode and code path: OpenSSL's EVP path with AES-NI / Armv8 AES where present)",
        why.join("; ")
    );
    let cmd = openssl_cmd(openssl, &cbc, secs, None, MAIN_BLOCK_BYTES);
    let (r, c) = run_counted(&cmd, Some(cpu), true, timeout, stop)?;
    check_exit(&cmd, &r)?;
    Ok((cbc.with_missing(missing), r, c))
}

#[allow(clippy::too_many_arguments)]
fn openssl_record(
    choice: &AesChoice,
    cmd: &Cmd,
    copies: usize,
    label: &str,
    cpus: &CpuSet,
    bytes: u32,
    bytes_per_s: Option<f64>,
    counted: Counted,
) -> WithFigures {
    let params = [
        ("alg", json!(choice.algorithm.as_str())),
        ("copies", json!(label)),
        ("bytes", json!(bytes)),
    ];
    let with_params = |mut r: ResultRecord| {
        for (k, v) in &params {
            r = r.with_param(k, v.clone());
        }
        r
    };
    let Some(b) = bytes_per_s else {
        return (
            with_params(ResultRecord::unavailable(
                OPENSSL_AES.experiment,
                OPENSSL_AES.metric,
                "MB/s",
                &format!("'{}' printed no +F result line", cmd.display()),
            )),
            Vec::new(),
        );
    };
    let mbs = b / 1e6;
    let mut rec = with_params(ResultRecord::of(OPENSSL_AES, "MB/s", true))
        .with_method(
            &format!(
                "`{}` (wall-clock divisor, {bytes}-byte blocks); the CPU set is inherited by its {} process(es), which the kernel places within it",
                cmd.display(),
                copies
            ),
            METHOD_VERSION,
        )
        .with_samples(vec![mbs])
        .with_note(&choice.note);
    let windows = [counted];
    // Only the same algorithm is compared: CBC (AES-NI) never beside IGE.
    let c = compare_openssl(&choice.algorithm, copies, bytes, mbs);
    if copies == 1 && bytes == MAIN_BLOCK_BYTES {
        for row in c.rows.iter().flatten().filter(|r| r.published_copies == 1) {
            rec = rec.with_note(&format!(
                "vs {} (published, 1 copy): {:.0}% per copy",
                row.cpu, row.this_machine_per_copy_pct
            ));
        }
    }
    let data = OpensslData {
        command: cmd.display(),
        cpus: cpus.to_string(),
        copies,
        counted: counted_data(&windows),
        published: c,
    };
    // IPC and GHz per process count at the seed's main block size: the
    // IPC-versus-processes curve of seed 000's openssl charts.
    let figures = if bytes == MAIN_BLOCK_BYTES {
        let mut fparams = vec![("workload", json!(OPENSSL_AES.metric))];
        fparams.extend(params.iter().cloned());
        counted_figures((IPC, GHZ), &fparams, &windows, true)
    } else {
        Vec::new()
    };
    (
        rec.with_payload(&data)
            .with_counters(counted::to_value(&windows)),
        figures,
    )
}

fn run_openssl(ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
    let Some(openssl) = find_in_path("openssl") else {
        out(openssl_unavailable(
            "openssl not installed (not found in PATH)",
        ))?;
        return Ok(());
    };
    let secs = openssl_seconds(ctx.profile);
    let sizes = openssl_block_sizes(ctx.profile);
    let timeout = Duration::from_secs(secs as u64 * 10 + 30);
    let per_core = one_cpu_per_core(ctx.machine, &ctx.cpus);
    let Some(first) = per_core.first() else {
        return Ok(());
    };
    let one = CpuSet::from_ids([first]);
    (ctx.step)("openssl speed, 1 copy");
    let (choice, r, c1) = match openssl_first(&openssl, secs, &one, timeout, ctx.stop) {
        Ok(x) => x,
        Err(e) => {
            out(openssl_unavailable(&format!("{e:#}")))?;
            return Ok(());
        }
    };
    // The seed's algorithm missing: said once, in its own record.
    if let Some(why) = &choice.ige_missing {
        out(
            ResultRecord::unavailable(OPENSSL_AES.experiment, OPENSSL_AES.metric, "MB/s", why)
                .with_param("alg", "aes-256-ige")
                .with_param("copies", "1")
                .with_param("bytes", MAIN_BLOCK_BYTES),
        )?;
    }
    let size_note = openssl_size_note(ctx.profile, sizes);
    let cmd1 = openssl_cmd(&openssl, &choice, secs, None, MAIN_BLOCK_BYTES);
    let (mut rec, figs) = openssl_record(
        &choice,
        &cmd1,
        1,
        "1",
        &one,
        MAIN_BLOCK_BYTES,
        parse_speed_mr(&r.stdout),
        c1,
    );
    if let Some(n) = &size_note {
        rec = rec.with_note(n);
    }
    out(rec)?;
    for f in figs {
        out(f)?;
    }
    let points = openssl_points(ctx, &choice, &one, &per_core, out)?;
    let speed = OpensslSpeed {
        openssl: &openssl,
        choice: &choice,
        secs,
        timeout,
        size_note: size_note.as_ref(),
    };
    for (label, cpus) in points {
        for &bytes in sizes {
            if label == "1" && bytes == MAIN_BLOCK_BYTES {
                continue; // measured first, above
            }
            openssl_at(ctx, out, &speed, &label, &cpus, bytes)?;
        }
    }
    Ok(())
}

/// The [`OPENSSL_AES`] record of one copy when openssl could not run, with why.
fn openssl_unavailable(why: &str) -> ResultRecord {
    ResultRecord::unavailable(OPENSSL_AES.experiment, OPENSSL_AES.metric, "MB/s", why)
        .with_param("copies", "1")
}

/// What every `openssl speed` run after the first shares.
struct OpensslSpeed<'a> {
    openssl: &'a Path,
    choice: &'a AesChoice,
    /// Seconds per run (`-seconds`).
    secs: u32,
    timeout: Duration,
    /// The profile's note on block sizes, for the main block size's records.
    size_note: Option<&'a String>,
}

/// `openssl speed` at one point (`label`: `1` or a process count, on `cpus`)
/// and block size `bytes`: its record and figures, or why not.
fn openssl_at(
    ctx: &mut ExpCtx,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    speed: &OpensslSpeed,
    label: &str,
    cpus: &CpuSet,
    bytes: u32,
) -> Result<()> {
    let OpensslSpeed {
        openssl,
        choice,
        secs,
        timeout,
        size_note,
    } = *speed;
    let multi = (label != "1").then_some(cpus.len());
    (ctx.step)(&format!(
        "openssl speed{} -bytes {bytes}",
        multi.map(|n| format!(" -multi {n}")).unwrap_or_default()
    ));
    let cmd = openssl_cmd(openssl, choice, secs, multi, bytes);
    let rec = run_counted(&cmd, Some(cpus), true, timeout, ctx.stop)
        .and_then(|(r, c)| check_exit(&cmd, &r).map(|_| (r, c)))
        .map(|(r, c)| {
            let (mut rec, figs) = openssl_record(
                choice,
                &cmd,
                cpus.len(),
                label,
                cpus,
                bytes,
                parse_speed_mr(&r.stdout),
                c,
            );
            if let Some(n) = size_note.filter(|_| bytes == MAIN_BLOCK_BYTES) {
                rec = rec.with_note(n);
            }
            (rec, figs)
        });
    emit(out, rec, |e| {
        ResultRecord::unavailable(OPENSSL_AES.experiment, OPENSSL_AES.metric, "MB/s", &e)
            .with_param("alg", choice.algorithm.as_str())
            .with_param("copies", label)
            .with_param("bytes", bytes)
    })
}

/// The note for profiles that run the main block size only (None when all
/// the seed's block sizes run).
fn openssl_size_note(profile: Profile, sizes: &[u32]) -> Option<String> {
    (sizes.len() < SEED_BLOCK_BYTES.len()).then(|| {
        format!(
            "profile {}: {MAIN_BLOCK_BYTES}-byte blocks only (the seed's five sizes 16, 64, 256, 1024, 8192 run in standard and full)",
            profile.as_str()
        )
    })
}

/// The process counts `openssl speed` runs at, each with its CPUs: 1 copy
/// (`one`), the seed's 32 processes, one per core, all logical CPUs. The
/// seed's 32 and "all" are reported not available (through `out`) where
/// the usable CPUs do not allow them.
fn openssl_points(
    ctx: &ExpCtx,
    choice: &AesChoice,
    one: &CpuSet,
    per_core: &CpuSet,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<Vec<(String, CpuSet)>> {
    let mut points: Vec<(String, CpuSet)> = vec![("1".into(), one.clone())];
    // The seed's 32 processes, where the machine has 32 usable CPUs.
    let order = ordered_cpus(ctx.machine, &ctx.cpus);
    if order.len() >= SEED_PROCESSES {
        points.push((
            SEED_PROCESSES.to_string(),
            order[..SEED_PROCESSES].iter().copied().collect(),
        ));
    } else {
        out(ResultRecord::unavailable(
            OPENSSL_AES.experiment,
            OPENSSL_AES.metric,
            "MB/s",
            &format!(
                "the seed's {SEED_PROCESSES} processes need {SEED_PROCESSES} usable CPUs; {} are usable here",
                order.len()
            ),
        )
        .with_param("alg", choice.algorithm.as_str())
        .with_param("copies", SEED_PROCESSES.to_string())
        .with_param("bytes", MAIN_BLOCK_BYTES))?;
    }
    if per_core.len() > 1 {
        points.push(("per_core".into(), per_core.clone()));
    }
    if ctx.cpus.len() > per_core.len() {
        points.push(("all".into(), ctx.cpus.clone()));
    } else {
        out(ResultRecord::unavailable(
            OPENSSL_AES.experiment,
            OPENSSL_AES.metric,
            "MB/s",
            "no SMT among the usable CPUs: all logical CPUs = one copy per core",
        )
        .with_param("alg", choice.algorithm.as_str())
        .with_param("copies", "all")
        .with_param("bytes", MAIN_BLOCK_BYTES))?;
    }
    Ok(points)
}

/// Seconds `openssl speed` runs each block size.
fn openssl_seconds(profile: Profile) -> u32 {
    match profile {
        Profile::Quick | Profile::Standard => 1,
        Profile::Full => 3,
    }
}

// ---------------------------------------------------------------------------
// In-process loops.

fn run_loops(
    ctx: &mut ExpCtx,
    cpu: usize,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let policy = compute_policy(ctx.profile);
    let (ghz, ghz_src) = ghz_at(ctx.facts, "1");

    // Seed 000 cpu_bound.
    (ctx.step)("nop loop (seed 000 cpu_bound)");
    let (s, cnt) = single_rate_counted(cpu, &policy, ctx.stop, 1.0, nop_loop)?;
    let windows = [cnt];
    let rec = nop_loop_record(cpu, &s, &windows, (ghz, &ghz_src));
    let measured = rec.value.is_some();
    out(rec)?;
    if measured {
        let params = [("workload", json!(NOP_LOOP.metric))];
        for f in counted_figures((IPC, GHZ), &params, &windows, true) {
            out(f)?;
        }
    }

    // Seed 002 loop order: same innermost iterations, different shapes.
    let mut per_inner: Vec<(String, f64)> = Vec::new();
    for nest in [
        LoopNest {
            shape: "outer_many",
            mid: 1000,
            inner: 100,
            seed_shape: "100000x1000x100",
        },
        LoopNest {
            shape: "inner_many",
            mid: 1000,
            inner: 100_000,
            seed_shape: "100x1000x100000",
        },
    ] {
        let LoopNest {
            shape,
            mid,
            inner,
            seed_shape,
        } = nest;
        (ctx.step)(&format!("loop nest {seed_shape}"));
        let per_call = (mid * inner) as f64;
        let (s, cnt) = single_rate_counted(cpu, &policy, ctx.stop, per_call, |n| {
            loop_nest(n, mid, inner)
        })?;
        let windows = [cnt];
        let rec = loop_nest_record(&nest, cpu, &s, &windows, ghz);
        if let Some(v) = rec.value {
            per_inner.push((shape.to_string(), v));
        }
        let measured = rec.value.is_some();
        out(rec)?;
        if measured {
            for f in counted_figures(
                (IPC, GHZ),
                &[
                    ("workload", json!(BRANCH_ORDER.metric)),
                    ("shape", json!(shape)),
                ],
                &windows,
                true,
            ) {
                out(f)?;
            }
        }
    }
    if let Some(r) = branch_order_ratio_record(&per_inner) {
        out(r)?;
    }
    Ok(())
}

/// One shape of seed 002's loop nest: the same innermost iterations in
/// total, `mid` × `inner` per outer iteration.
#[derive(Clone, Copy)]
struct LoopNest {
    /// Name in the record's `shape` param.
    shape: &'static str,
    /// Middle loop count.
    mid: u64,
    /// Innermost loop count.
    inner: u64,
    /// The seed's outer×middle×inner counts, for the method.
    seed_shape: &'static str,
}

/// The nop loop record (seed 000 cpu_bound): ns per iteration from the
/// rates `s`, with IPC from the measured clock `(ghz, source)` and the
/// counters of `windows`.
fn nop_loop_record(
    cpu: usize,
    s: &[f64],
    windows: &[Counted],
    (ghz, ghz_src): (Option<f64>, &str),
) -> ResultRecord {
    let ns: Vec<f64> = s.iter().map(|r| 1e9 / r).collect();
    let mut rec = ResultRecord::of(NOP_LOOP, "ns/iteration", false)
        .with_method(
            "seed 000's cpu_bound loop body in asm: nop; nop; nop; decrement; branch (5 instructions per iteration), pinned, timed by the harness; median",
            METHOD_VERSION,
        )
        .with_samples(ns);
    let ipc = match (rec.value, ghz) {
        (Some(v), Some(g)) => Some(NOP_LOOP_INSNS as f64 / (v * g)),
        _ => None,
    };
    if let Some(i) = ipc {
        rec = rec.with_note(&format!(
            "{i:.2} instructions per cycle (5 instructions per iteration by construction, measured clock {:.2} GHz)",
            ghz.unwrap_or(0.0)
        ));
    }
    let data = NopLoopData {
        cpu,
        instructions_per_iteration: NOP_LOOP_INSNS,
        ipc_from_instruction_count: ipc,
        ghz,
        ghz_source: ghz_src.to_string(),
        published: published_reference(CPU_BOUND_SET),
        counted: counted_data(windows),
    };
    rec.with_note(&cpu_bound_note())
        .with_payload(&data)
        .with_counters(counted::to_value(windows))
}

/// The record of one loop-nest shape: ns per innermost iteration from the
/// rates `s`, IPC from the instruction count and the measured clock `ghz`,
/// branch misses from the counters of `windows`.
fn loop_nest_record(
    nest: &LoopNest,
    cpu: usize,
    s: &[f64],
    windows: &[Counted],
    ghz: Option<f64>,
) -> ResultRecord {
    let LoopNest {
        shape,
        mid,
        inner,
        seed_shape,
    } = *nest;
    let ns: Vec<f64> = s.iter().map(|r| 1e9 / r).collect();
    let insns = 2.0 + 3.0 / inner as f64 + 3.0 / (inner * mid) as f64;
    let rec = ResultRecord::of(BRANCH_ORDER, "ns/inner-iteration", false)
        .with_param("shape", shape)
        .with_method(
            &format!(
                "seed 002's nested loops, shape {seed_shape} (the outer count scaled to the time budget), counters in registers (asm: decrement + branch per level); ns per innermost iteration; median"
            ),
            METHOD_VERSION,
        )
        .with_samples(ns);
    let ipc = match (rec.value, ghz) {
        (Some(v), Some(g)) => Some(insns / (v * g)),
        _ => None,
    };
    let c = &windows[0];
    let data = LoopNestData {
        cpu,
        seed_shape: seed_shape.to_string(),
        middle: mid,
        inner,
        instructions_per_inner_iteration: insns,
        ipc_from_instruction_count: ipc,
        ghz,
        branch_misses: c.value("branch-misses").ok(),
        branch_misses_reason: c.value("branch-misses").err(),
        branch_miss_pct: c.metrics.branch_miss_pct,
        branch_miss_pct_reason: c.metrics.missing.get("branch_miss_pct").cloned(),
        counted: counted_data(windows),
    };
    rec.with_payload(&data)
        .with_counters(counted::to_value(windows))
}

/// Time per innermost iteration, outer_many shape / inner_many shape, when
/// both were measured (`per_inner`: shape and ns per inner iteration).
fn branch_order_ratio_record(per_inner: &[(String, f64)]) -> Option<ResultRecord> {
    let a = per_inner.iter().find(|x| x.0 == "outer_many")?;
    let b = per_inner.iter().find(|x| x.0 == "inner_many")?;
    let ratio = a.1 / b.1;
    let mut r = ResultRecord::of(BRANCH_ORDER_RATIO, "ratio", false)
        .with_method(
            "time per innermost iteration, 100000×1000×100 shape / 100×1000×100000 shape (above 1: the many short inner loops cost more, e.g. a mispredicted exit per inner loop)",
            METHOD_VERSION,
        )
        .with_note(&branch_order_note())
        .with_payload(&BranchOrderRatioData {
            published: published_reference(BRANCH_ORDER_SET),
        });
    r.value = Some(ratio);
    Some(r)
}

impl Experiment for Workloads {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "seed workloads: bc 7^N and pi, openssl speed AES, nop loop, branch-order loops"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        // bc on this machine's class (a 2.6 GHz Sapphire Rapids VM core):
        // 7^99999 ≈ 0.3 s, 7^999999 ≈ 14 s, pi scale 1000 ≈ 0.2 s,
        // 5000 ≈ 14 s (seed 000's machines took 15.6-31 s for it).
        let bc = if find_in_path("bc").is_some() {
            match profile {
                Profile::Quick => 1.4,
                Profile::Standard => 14.0 + 14.0,
                Profile::Full => 3.0 * 14.0 + 14.0,
            }
        } else {
            0.0
        };
        let per_core = one_cpu_per_core(machine, cpus).len();
        let ossl_points =
            1.0 + if cpus.len() >= SEED_PROCESSES {
                1.0
            } else {
                0.0
            } + if per_core > 1 { 1.0 } else { 0.0 }
                + if cpus.len() > per_core { 1.0 } else { 0.0 };
        let ossl_runs = ossl_points * openssl_block_sizes(profile).len() as f64;
        let ossl = if find_in_path("openssl").is_some() {
            ossl_runs * (openssl_seconds(profile) as f64 + 0.3)
        } else {
            0.0
        };
        bc + ossl + 3.0 * secs_per_figure(profile) + 0.1
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let order = ordered_cpus(ctx.machine, &ctx.cpus);
        let Some(&cpu) = order.first() else {
            out(ResultRecord::unavailable(
                BC_POW.experiment,
                BC_POW.metric,
                "s",
                "no usable CPU",
            ))?;
            return Ok(());
        };
        run_loops(ctx, cpu, out)?;
        run_bc(ctx, cpu, out)?;
        run_openssl(ctx, out)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;

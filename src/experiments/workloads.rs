//! The seeds' workloads as named experiments, each with time or throughput
//! (and IPC / GHz when hardware counters are wired in):
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
//! The seeds' published figures (data/published/) are compared, as
//! relative %, only where the workload is the same.

use super::simd::{compute_policy, ghz_at, ordered_cpus, secs_per_figure, single_rate};
use super::{one_cpu_per_core, ExpCtx, Experiment, Profile};
use crate::kernels::cpu_loops::{loop_nest, nop_loop, NOP_LOOP_INSNS};
use crate::machine::MachineInfo;
use crate::placement::pin::AffinityGuard;
use crate::placement::CpuSet;
use crate::results::schema::ResultRecord;
use anyhow::{bail, Context as _, Result};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub struct Workloads;

pub const EXP: &str = "workloads";
const METHOD_VERSION: u32 = 1;

// ---------------------------------------------------------------------------
// Published figures (data/published/, compiled in).

/// Every published table: (file name, JSON text).
pub const PUBLISHED: &[(&str, &str)] = &[
    (
        "seed000_bc_pow.json",
        include_str!("../../data/published/seed000_bc_pow.json"),
    ),
    (
        "seed000_bc_pi.json",
        include_str!("../../data/published/seed000_bc_pi.json"),
    ),
    (
        "seed000_openssl_aes256ige.json",
        include_str!("../../data/published/seed000_openssl_aes256ige.json"),
    ),
    (
        "seed000_cpu_bound.json",
        include_str!("../../data/published/seed000_cpu_bound.json"),
    ),
    (
        "seed000_core_binding.json",
        include_str!("../../data/published/seed000_core_binding.json"),
    ),
    (
        "seed002_branch_order.json",
        include_str!("../../data/published/seed002_branch_order.json"),
    ),
    (
        "seed003_spec_rate_numa.json",
        include_str!("../../data/published/seed003_spec_rate_numa.json"),
    ),
    (
        "seed004_simd_efficiency.json",
        include_str!("../../data/published/seed004_simd_efficiency.json"),
    ),
];

/// One published table by file name, parsed.
pub fn published(name: &str) -> Option<Value> {
    PUBLISHED
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, t)| serde_json::from_str(t).ok())
}

/// This machine against each published row of a time table (lower is
/// better): relative speed = published time / this time × 100%.
pub fn compare_times(table: &Value, measured_s: f64) -> Value {
    let rows = table
        .get("rows")
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    let src = table.get("source").cloned().unwrap_or(Value::Null);
    let out: Vec<Value> = rows
        .iter()
        .map(|r| {
            let cpu = r.get("cpu").cloned().unwrap_or(Value::Null);
            match r.get("value").and_then(|v| v.as_f64()) {
                Some(p) if measured_s > 0.0 => json!({
                    "cpu": cpu,
                    "published_s": p,
                    "published_ipc": r.get("ipc"),
                    "published_ghz": r.get("ghz"),
                    "this_machine_speed_pct": p / measured_s * 100.0,
                }),
                _ => json!({"cpu": cpu, "published_s": null, "reason": r.get("note").cloned().unwrap_or(json!("no figure published"))}),
            }
        })
        .collect();
    json!({"label": "published data (not measured on this run)", "source": src, "rows": out})
}

/// This machine's openssl aes-256-ige figure at 8192 bytes against the
/// published rows with the same number of copies (per copy).
pub fn compare_openssl(table: &Value, copies: usize, measured_mb_s: f64) -> Value {
    let rows = table
        .get("rows")
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    let out: Vec<Value> = rows
        .iter()
        .filter_map(|r| {
            let n = r.get("copies")?.as_u64()? as usize;
            let kb = r.get("kb_s")?.as_array()?.last()?.as_f64()?;
            let per_copy_pub = kb / 1000.0 / n as f64;
            let per_copy_here = measured_mb_s / copies as f64;
            Some(json!({
                "cpu": r.get("cpu"),
                "published_copies": n,
                "published_mb_s_total": kb / 1000.0,
                "published_mb_s_per_copy": per_copy_pub,
                "this_machine_mb_s_per_copy": per_copy_here,
                "this_machine_per_copy_pct": per_copy_here / per_copy_pub * 100.0,
            }))
        })
        .collect();
    json!({"label": "published data (not measured on this run), 8192-byte blocks, per copy", "source": table.get("source"), "rows": out})
}

// ---------------------------------------------------------------------------
// Counters hook.

/// Hook for the counters room: IPC and cycles of a workload. Until the
/// `counters` branch is merged this says why they are not available; the
/// records keep `ipc: null` with this reason.
pub fn counters_unavailable_reason() -> String {
    "IPC and the workload's clock need hardware counters: the counters room (branch `counters`) is not wired in yet".into()
}

// ---------------------------------------------------------------------------
// Child processes.

/// One finished child process.
#[derive(Clone, Debug, Default)]
pub struct ProcRun {
    pub wall_s: f64,
    /// CPU time of the child (user + system, from wait4's rusage); None if unknown.
    pub cpu_s: Option<f64>,
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

/// A command to run as a child: program, arguments, optional stdin text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cmd {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub stdin: Option<String>,
}

impl Cmd {
    /// The command line, for records and messages.
    pub fn display(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        if let Some(i) = &self.stdin {
            s = format!("echo '{}' | {s}", i.trim_end());
        }
        s
    }
}

/// Find an executable in PATH.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

struct Running {
    child: Child,
    start: Instant,
    out: Option<std::thread::JoinHandle<String>>,
    err: Option<std::thread::JoinHandle<String>>,
}

fn spawn(cmd: &Cmd, cpus: Option<&CpuSet>, capture: bool) -> Result<Running> {
    // The child inherits the spawning thread's affinity.
    let _g = match cpus {
        Some(s) => Some(AffinityGuard::set(s)?),
        None => None,
    };
    let mut c = Command::new(&cmd.program);
    c.args(&cmd.args)
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = c
        .spawn()
        .with_context(|| format!("cannot start '{}'", cmd.program.display()))?;
    if let (Some(text), Some(mut sin)) = (&cmd.stdin, child.stdin.take()) {
        // A small input: the pipe buffer holds it; the child reads at EOF.
        let _ = sin.write_all(text.as_bytes());
    }
    let out = child.stdout.take().map(|mut o| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = o.read_to_string(&mut s);
            s
        })
    });
    let err = child.stderr.take().map(|mut o| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = o.read_to_string(&mut s);
            s
        })
    });
    Ok(Running {
        child,
        start,
        out,
        err,
    })
}

/// Reap a child if it has exited (non-blocking `wait4`): its exit code
/// (None when killed by a signal) and CPU time (user + system).
fn reap(pid: u32) -> Result<Option<(Option<i32>, Option<f64>)>> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data, fully written by wait4 on success.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; pid is our own child.
    let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, libc::WNOHANG, &mut ru) };
    if r < 0 {
        bail!(
            "waiting for child {pid} failed: {}",
            std::io::Error::last_os_error()
        );
    }
    if r == 0 {
        return Ok(None);
    }
    let code = if libc::WIFEXITED(status) {
        Some(libc::WEXITSTATUS(status))
    } else {
        None
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Some((code, Some(tv(ru.ru_utime) + tv(ru.ru_stime)))))
}

/// Run several commands at once, each pinned to its CPU set; wait for all.
/// Kills every child on timeout or when `stop` is set (then fails).
pub fn run_all(
    cmds: &[(Cmd, Option<CpuSet>)],
    capture: bool,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<Vec<ProcRun>> {
    let mut running = Vec::with_capacity(cmds.len());
    for (c, cpus) in cmds {
        match spawn(c, cpus.as_ref(), capture) {
            Ok(r) => running.push(r),
            Err(e) => {
                for r in &mut running {
                    let _ = r.child.kill();
                    let _ = r.child.wait();
                }
                return Err(e);
            }
        }
    }
    let mut done: Vec<Option<ProcRun>> = vec![None; running.len()];
    let t0 = Instant::now();
    loop {
        let mut all = true;
        for (i, r) in running.iter_mut().enumerate() {
            if done[i].is_some() {
                continue;
            }
            match reap(r.child.id())? {
                Some((code, cpu_s)) => {
                    done[i] = Some(ProcRun {
                        wall_s: r.start.elapsed().as_secs_f64(),
                        cpu_s,
                        code,
                        ..Default::default()
                    })
                }
                None => all = false,
            }
        }
        if all {
            break;
        }
        let why = if stop.load(Ordering::Relaxed) {
            Some("interrupted".to_string())
        } else if t0.elapsed() > timeout {
            Some(format!("timed out after {:.0} s", timeout.as_secs_f64()))
        } else {
            None
        };
        if let Some(why) = why {
            for (i, r) in running.iter_mut().enumerate() {
                if done[i].is_none() {
                    let _ = r.child.kill();
                    let _ = r.child.wait();
                }
            }
            bail!("{} {why}", cmds[0].0.display());
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let mut out = Vec::with_capacity(running.len());
    for (r, d) in running.into_iter().zip(done) {
        let mut d = d.unwrap_or_default();
        if let Some(h) = r.out {
            d.stdout = h.join().unwrap_or_default();
        }
        if let Some(h) = r.err {
            d.stderr = h.join().unwrap_or_default();
        }
        out.push(d);
    }
    Ok(out)
}

/// Run one command pinned to `cpus`.
pub fn run_one(
    cmd: &Cmd,
    cpus: Option<&CpuSet>,
    capture: bool,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<ProcRun> {
    let mut v = run_all(&[(cmd.clone(), cpus.cloned())], capture, timeout, stop)?;
    Ok(v.remove(0))
}

fn check_exit(cmd: &Cmd, r: &ProcRun) -> Result<()> {
    if r.code != Some(0) {
        let first = r.stderr.lines().next().unwrap_or("").trim();
        bail!(
            "'{}' exited with {}{}",
            cmd.display(),
            r.code
                .map(|c| format!("status {c}"))
                .unwrap_or_else(|| "a signal".into()),
            if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            }
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// bc.

/// Sizes of the bc workloads per profile: (exponent of 7, repetitions),
/// (pi scale, repetitions).
pub fn bc_sizes(profile: Profile) -> ((u32, usize), (u32, usize)) {
    match profile {
        Profile::Quick => ((99_999, 1), (1_000, 1)),
        Profile::Standard => ((999_999, 1), (2_000, 1)),
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

#[allow(clippy::too_many_arguments)]
fn bc_record(
    ctx: &mut ExpCtx,
    bc: &Path,
    metric: &str,
    cmd: Cmd,
    param: (&str, u32),
    reps: usize,
    cpu: usize,
    compare: Option<&str>,
    size_note: Option<String>,
) -> Result<ResultRecord> {
    let pin = CpuSet::from_ids([cpu]);
    let mut samples = Vec::new();
    let mut cpu_s = Vec::new();
    for i in 0..reps {
        (ctx.step)(&format!("{} ({} of {reps})", cmd.display(), i + 1));
        let r = run_one(&cmd, Some(&pin), false, bc_timeout(ctx.profile), ctx.stop)?;
        check_exit(&cmd, &r)?;
        samples.push(r.wall_s);
        if let Some(c) = r.cpu_s {
            cpu_s.push(c);
        }
    }
    let wall_med = crate::harness::Stats::from_samples(&samples).map(|s| s.median);
    let cpu_med = crate::harness::Stats::from_samples(&cpu_s).map(|s| s.median);
    let mut rec = ResultRecord::new(EXP, metric, "s", false)
        .with_param(param.0, param.1)
        .with_method(
            &format!(
                "`{}` with output discarded, pinned to one CPU, wall time from spawn to exit; median of runs",
                cmd.display()
            ),
            METHOD_VERSION,
        )
        .with_samples(samples);
    let (ghz, ghz_src) = ghz_at(ctx.facts, "1");
    let mut data = json!({
        "cpu": cpu,
        "command": cmd.display(),
        "bc": bc.display().to_string(),
        "ipc": null,
        "ipc_reason": counters_unavailable_reason(),
        "ghz_single": ghz,
        "ghz_source": ghz_src,
        "cpu_s": cpu_s,
    });
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
    match (compare.and_then(published), rec.value) {
        (Some(t), Some(v)) => {
            let mut c = compare_times(&t, v);
            if let (Some(cm), Some(rows)) = (cpu_med, c["rows"].as_array_mut()) {
                for row in rows {
                    if let Some(p) = row["published_s"].as_f64() {
                        row["this_machine_speed_pct_by_cpu_time"] = json!(p / cm * 100.0);
                    }
                }
            }
            for row in c["rows"].as_array().cloned().unwrap_or_default() {
                if let (Some(cpu), Some(p)) =
                    (row["cpu"].as_str(), row["this_machine_speed_pct"].as_f64())
                {
                    rec = rec.with_note(&format!(
                        "vs {cpu} (published {:.2} s): this machine runs at {p:.0}% of its speed",
                        row["published_s"].as_f64().unwrap_or(0.0)
                    ));
                }
            }
            data["published"] = c;
        }
        (None, _) if compare.is_some() => {}
        _ => {}
    }
    rec = rec.with_data(data);
    Ok(rec)
}

fn run_bc(
    ctx: &mut ExpCtx,
    cpu: usize,
    out: &mut dyn FnMut(ResultRecord) -> Result<()>,
) -> Result<()> {
    let ((exp, exp_reps), (scale, pi_reps)) = bc_sizes(ctx.profile);
    let Some(bc) = find_in_path("bc") else {
        for (m, p, v) in [("bc_pow", "exp", exp), ("bc_pi", "scale", scale)] {
            out(
                ResultRecord::unavailable(EXP, m, "s", "bc not installed (not found in PATH)")
                    .with_param(p, v),
            )?;
        }
        return Ok(());
    };
    let pow_note = (exp != 999_999).then(|| {
        format!("profile {}: 7^{exp} instead of the seed's 7^999999 (not compared with the published figures)", ctx.profile.as_str())
    });
    let rec = bc_record(
        ctx,
        &bc,
        "bc_pow",
        bc_pow_cmd(&bc, exp),
        ("exp", exp),
        exp_reps,
        cpu,
        (exp == 999_999).then_some("seed000_bc_pow.json"),
        pow_note,
    );
    out(rec.unwrap_or_else(|e| {
        ResultRecord::unavailable(EXP, "bc_pow", "s", &format!("{e:#}")).with_param("exp", exp)
    }))?;
    let pi_note = (scale != 5000).then(|| {
        format!("profile {}: scale={scale} instead of the seed's 5000 (not compared with the published figures)", ctx.profile.as_str())
    });
    let rec = bc_record(
        ctx,
        &bc,
        "bc_pi",
        bc_pi_cmd(&bc, scale),
        ("scale", scale),
        pi_reps,
        cpu,
        (scale == 5000).then_some("seed000_bc_pi.json"),
        pi_note,
    );
    out(rec.unwrap_or_else(|e| {
        ResultRecord::unavailable(EXP, "bc_pi", "s", &format!("{e:#}")).with_param("scale", scale)
    }))?;
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
}

impl AesChoice {
    pub fn is_ige(&self) -> bool {
        self.algorithm == "aes-256-ige"
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

fn openssl_cmd(openssl: &Path, choice: &AesChoice, secs: u32, multi: Option<usize>) -> Cmd {
    let mut args = vec!["speed".to_string()];
    args.extend(choice.provider_args.iter().cloned());
    args.extend(
        ["-elapsed", "-mr", "-bytes", "8192", "-seconds"]
            .iter()
            .map(|s| s.to_string()),
    );
    args.push(secs.to_string());
    if let Some(n) = multi {
        args.push("-multi".into());
        args.push(n.to_string());
    }
    args.push(choice.algorithm.clone());
    Cmd {
        program: openssl.to_path_buf(),
        args,
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
) -> Result<(AesChoice, ProcRun)> {
    let tries = [
        AesChoice {
            algorithm: "aes-256-ige".into(),
            provider_args: vec![],
            note: "aes-256-ige, as in seed 000".into(),
        },
        AesChoice {
            algorithm: "aes-256-ige".into(),
            provider_args: ["-provider", "legacy", "-provider", "default"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            note: "aes-256-ige through OpenSSL 3's legacy provider, as in seed 000".into(),
        },
    ];
    let mut why = Vec::new();
    for t in tries {
        let cmd = openssl_cmd(openssl, &t, secs, None);
        let r = run_one(&cmd, Some(cpu), true, timeout, stop)?;
        if r.code == Some(0) && parse_speed_mr(&r.stdout).is_some() {
            return Ok((t, r));
        }
        let msg = r
            .stderr
            .lines()
            .chain(r.stdout.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim()
            .to_string();
        why.push(format!("{}: {msg}", cmd.args.join(" ")));
    }
    let cbc = AesChoice {
        algorithm: "aes-256-cbc".into(),
        provider_args: vec![],
        note: format!(
            "aes-256-ige is not available in this OpenSSL ({}); measured aes-256-cbc instead: OpenSSL's EVP path (AES-NI / Armv8 AES where present), a different mode and code path from the seed's IGE figures, which it is never compared with",
            why.join("; ")
        ),
    };
    let cmd = openssl_cmd(openssl, &cbc, secs, None);
    let r = run_one(&cmd, Some(cpu), true, timeout, stop)?;
    check_exit(&cmd, &r)?;
    Ok((cbc, r))
}

fn openssl_record(
    choice: &AesChoice,
    cmd: &Cmd,
    copies: usize,
    label: &str,
    cpus: &CpuSet,
    bytes_per_s: Option<f64>,
) -> ResultRecord {
    let base = ResultRecord::new(EXP, "openssl_aes", "MB/s", true)
        .with_param("alg", choice.algorithm.as_str())
        .with_param("copies", label)
        .with_param("bytes", 8192);
    let Some(b) = bytes_per_s else {
        return ResultRecord::unavailable(
            EXP,
            "openssl_aes",
            "MB/s",
            &format!("'{}' printed no +F result line", cmd.display()),
        )
        .with_param("alg", choice.algorithm.as_str())
        .with_param("copies", label)
        .with_param("bytes", 8192);
    };
    let mbs = b / 1e6;
    let mut rec = base
        .with_method(
            &format!(
                "`{}` (wall-clock divisor, 8192-byte blocks); the CPU set is inherited by its {} process(es), which the kernel places within it",
                cmd.display(),
                copies
            ),
            METHOD_VERSION,
        )
        .with_samples(vec![mbs])
        .with_note(&choice.note);
    let mut data = json!({
        "command": cmd.display(),
        "cpus": cpus.to_string(),
        "copies": copies,
        "ipc": null,
        "ipc_reason": counters_unavailable_reason(),
    });
    if choice.is_ige() {
        if let Some(t) = published("seed000_openssl_aes256ige.json") {
            let c = compare_openssl(&t, copies, mbs);
            for row in c["rows"].as_array().cloned().unwrap_or_default() {
                if let (Some(cpu), Some(p), Some(n)) = (
                    row["cpu"].as_str(),
                    row["this_machine_per_copy_pct"].as_f64(),
                    row["published_copies"].as_u64(),
                ) {
                    if n == 1 && copies == 1 {
                        rec = rec
                            .with_note(&format!("vs {cpu} (published, 1 copy): {p:.0}% per copy"));
                    }
                }
            }
            data["published"] = c;
        }
    } else {
        data["published"] = json!({"label": "not compared", "reason": "the seed's figures are aes-256-ige (no AES-NI path); this is aes-256-cbc"});
    }
    rec.with_data(data)
}

fn run_openssl(ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
    let Some(openssl) = find_in_path("openssl") else {
        out(ResultRecord::unavailable(
            EXP,
            "openssl_aes",
            "MB/s",
            "openssl not installed (not found in PATH)",
        )
        .with_param("copies", "1"))?;
        return Ok(());
    };
    let secs = match ctx.profile {
        Profile::Quick => 1,
        Profile::Standard => 2,
        Profile::Full => 3,
    };
    let timeout = Duration::from_secs(secs as u64 * 10 + 30);
    let per_core = one_cpu_per_core(ctx.machine, &ctx.cpus);
    let Some(first) = per_core.first() else {
        return Ok(());
    };
    let one = CpuSet::from_ids([first]);
    (ctx.step)("openssl speed, 1 copy");
    let (choice, r) = match openssl_first(&openssl, secs, &one, timeout, ctx.stop) {
        Ok(x) => x,
        Err(e) => {
            out(
                ResultRecord::unavailable(EXP, "openssl_aes", "MB/s", &format!("{e:#}"))
                    .with_param("copies", "1"),
            )?;
            return Ok(());
        }
    };
    let cmd1 = openssl_cmd(&openssl, &choice, secs, None);
    out(openssl_record(
        &choice,
        &cmd1,
        1,
        "1",
        &one,
        parse_speed_mr(&r.stdout),
    ))?;
    let mut points: Vec<(String, CpuSet)> = Vec::new();
    if per_core.len() > 1 {
        points.push(("per_core".into(), per_core.clone()));
    }
    if ctx.cpus.len() > per_core.len() {
        points.push(("all".into(), ctx.cpus.clone()));
    } else {
        out(ResultRecord::unavailable(
            EXP,
            "openssl_aes",
            "MB/s",
            "no SMT among the usable CPUs: all logical CPUs = one copy per core",
        )
        .with_param("alg", choice.algorithm.as_str())
        .with_param("copies", "all")
        .with_param("bytes", 8192))?;
    }
    for (label, cpus) in points {
        (ctx.step)(&format!("openssl speed -multi {}", cpus.len()));
        let cmd = openssl_cmd(&openssl, &choice, secs, Some(cpus.len()));
        let rec = match run_one(&cmd, Some(&cpus), true, timeout, ctx.stop)
            .and_then(|r| check_exit(&cmd, &r).map(|_| r))
        {
            Ok(r) => openssl_record(
                &choice,
                &cmd,
                cpus.len(),
                &label,
                &cpus,
                parse_speed_mr(&r.stdout),
            ),
            Err(e) => ResultRecord::unavailable(EXP, "openssl_aes", "MB/s", &format!("{e:#}"))
                .with_param("alg", choice.algorithm.as_str())
                .with_param("copies", label.as_str())
                .with_param("bytes", 8192),
        };
        out(rec)?;
    }
    Ok(())
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
    let s = single_rate(cpu, &policy, ctx.stop, 1.0, nop_loop)?;
    let ns: Vec<f64> = s.iter().map(|r| 1e9 / r).collect();
    let mut rec = ResultRecord::new(EXP, "nop_loop", "ns/iteration", false)
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
    rec = rec
        .with_note("seed 000 published IPC 1.57 (Intel) and 0.45 (FT2500) for its compiled C loop, counted system-wide: a different binary, reference only")
        .with_data(json!({
            "cpu": cpu,
            "instructions_per_iteration": NOP_LOOP_INSNS,
            "ipc_from_instruction_count": ipc,
            "ghz": ghz,
            "ghz_source": ghz_src,
            "ipc_counters": null,
            "ipc_counters_reason": counters_unavailable_reason(),
            "published": published("seed000_cpu_bound.json"),
        }));
    out(rec)?;

    // Seed 002 loop order: same innermost iterations, different shapes.
    let mut per_inner: Vec<(String, f64)> = Vec::new();
    for (shape, mid, inner, seed_shape) in [
        ("outer_many", 1000u64, 100u64, "100000x1000x100"),
        ("inner_many", 1000u64, 100_000u64, "100x1000x100000"),
    ] {
        (ctx.step)(&format!("loop nest {seed_shape}"));
        let per_call = (mid * inner) as f64;
        let s = single_rate(cpu, &policy, ctx.stop, per_call, |n| {
            loop_nest(n, mid, inner)
        })?;
        let ns: Vec<f64> = s.iter().map(|r| 1e9 / r).collect();
        let insns = 2.0 + 3.0 / inner as f64 + 3.0 / (inner * mid) as f64;
        let mut rec = ResultRecord::new(EXP, "branch_order", "ns/inner-iteration", false)
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
        if let Some(v) = rec.value {
            per_inner.push((shape.to_string(), v));
        }
        rec = rec.with_data(json!({
            "cpu": cpu,
            "seed_shape": seed_shape,
            "middle": mid,
            "inner": inner,
            "instructions_per_inner_iteration": insns,
            "ipc_from_instruction_count": ipc,
            "ghz": ghz,
            "branch_misses": null,
            "branch_misses_reason": counters_unavailable_reason(),
        }));
        out(rec)?;
    }
    if let (Some(a), Some(b)) = (
        per_inner.iter().find(|x| x.0 == "outer_many"),
        per_inner.iter().find(|x| x.0 == "inner_many"),
    ) {
        let ratio = a.1 / b.1;
        let mut r = ResultRecord::new(EXP, "branch_order_ratio", "ratio", false)
            .with_method(
                "time per innermost iteration, 100000×1000×100 shape / 100×1000×100000 shape (above 1: the many short inner loops cost more, e.g. a mispredicted exit per inner loop)",
                METHOD_VERSION,
            )
            .with_note("seed 002 published 25560 ms / 23420 ms = 1.09 on x86_64 (compiled C, counters in memory): reference only")
            .with_data(json!({"published": published("seed002_branch_order.json")}));
        r.value = Some(ratio);
        out(r)?;
    }
    Ok(())
}

impl Experiment for Workloads {
    fn name(&self) -> &'static str {
        EXP
    }

    fn title(&self) -> &'static str {
        "seed workloads: bc 7^N and pi, openssl speed AES, nop loop, branch-order loops"
    }

    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        // bc on this machine's class: 7^99999 ≈ 0.8 s, 7^999999 ≈ 14 s,
        // pi scale 1000 ≈ 0.5 s, 2000 ≈ 3 s, 5000 ≈ 40 s.
        let bc = if find_in_path("bc").is_some() {
            match profile {
                Profile::Quick => 1.4,
                Profile::Standard => 17.0,
                Profile::Full => 3.0 * 14.0 + 40.0,
            }
        } else {
            0.0
        };
        let per_core = one_cpu_per_core(machine, cpus).len();
        let ossl_runs = 1.0
            + if per_core > 1 { 1.0 } else { 0.0 }
            + if cpus.len() > per_core { 1.0 } else { 0.0 };
        let secs = match profile {
            Profile::Quick => 1.0,
            Profile::Standard => 2.0,
            Profile::Full => 3.0,
        };
        let ossl = if find_in_path("openssl").is_some() {
            ossl_runs * (secs + 0.3)
        } else {
            0.0
        };
        bc + ossl + 3.0 * secs_per_figure(profile) + 0.1
    }

    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let order = ordered_cpus(ctx.machine, &ctx.cpus);
        let Some(&cpu) = order.first() else {
            out(ResultRecord::unavailable(
                EXP,
                "bc_pow",
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
mod tests {
    use super::*;

    #[test]
    fn published_tables_parse_and_name_their_source() {
        for (name, _) in PUBLISHED {
            let t = published(name).unwrap_or_else(|| panic!("{name} does not parse"));
            assert_eq!(t["schema"], "cpuscope.published/1", "{name}");
            assert!(t["source"]["file"]
                .as_str()
                .unwrap()
                .starts_with("shared/seeds/"));
            assert!(!t["rows"].as_array().unwrap().is_empty(), "{name}");
        }
    }

    #[test]
    fn time_comparison_is_relative_speed() {
        let t = published("seed000_bc_pow.json").unwrap();
        let c = compare_times(&t, 18.603323495);
        let intel = c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["cpu"].as_str().unwrap().starts_with("Intel"))
            .unwrap();
        assert!((intel["this_machine_speed_pct"].as_f64().unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(c["label"], "published data (not measured on this run)");
        // FT2500 pi: no figure, said so.
        let p = compare_times(&published("seed000_bc_pi.json").unwrap(), 20.0);
        assert!(p["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["published_s"].is_null()));
    }

    #[test]
    fn openssl_comparison_per_copy() {
        let t = published("seed000_openssl_aes256ige.json").unwrap();
        // Kunpeng single copy: 143196.16 kB/s = 143.19616 MB/s.
        let c = compare_openssl(&t, 1, 143.19616);
        let row = c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["cpu"].as_str().unwrap().starts_with("Kunpeng") && r["published_copies"] == 1
            })
            .unwrap();
        assert!((row["this_machine_per_copy_pct"].as_f64().unwrap() - 100.0).abs() < 1e-6);
    }

    #[test]
    fn speed_mr_parsing() {
        let single = "+DT:aes-256-cbc:1:8192\n+R:50969:aes-256-cbc:0.9\n+H:8192\n+F:21:aes-256-cbc:927862328.89\n";
        assert_eq!(parse_speed_mr(single), Some(927862328.89));
        let multi = "Got: +F:21:aes-256-cbc:243967493.07 from 0\nGot: +F:21:aes-256-cbc:245362566.34 from 1\n+F:21:aes-256-cbc:489330059.41\n";
        assert_eq!(parse_speed_mr(multi), Some(489330059.41));
        assert_eq!(
            parse_speed_mr("speed: Unknown algorithm aes-256-ige\n"),
            None
        );
    }

    #[test]
    fn quick_sizes_differ_from_the_seed_and_keys_differ() {
        let ((q, _), (qs, _)) = bc_sizes(Profile::Quick);
        let ((f, _), (fs, _)) = bc_sizes(Profile::Full);
        assert_ne!(q, f);
        assert_ne!(qs, fs);
        assert_eq!((f, fs), (999_999, 5000));
        let a = ResultRecord::new(EXP, "bc_pow", "s", false).with_param("exp", q);
        let b = ResultRecord::new(EXP, "bc_pow", "s", false).with_param("exp", f);
        assert_ne!(a.key, b.key);
    }

    #[test]
    fn missing_program_is_an_error_not_a_panic() {
        let stop = AtomicBool::new(false);
        let cmd = Cmd {
            program: PathBuf::from("/nonexistent/cpuscope-no-such-program"),
            args: vec![],
            stdin: None,
        };
        let e = run_one(&cmd, None, false, Duration::from_secs(5), &stop).unwrap_err();
        assert!(format!("{e:#}").contains("cannot start"));
    }
}

//! `cpuscope c2c`: the core-to-core latency matrix of this machine (or one
//! pair), the latency groups it shows and how they compare with the topology
//! the kernel declares.

use super::Context;
use crate::experiments::c2c::{self, PlanRequest};
use crate::experiments::c2c_infer::{self, Declared};
use crate::experiments::{sync, Profile};
use crate::kernels::c2c::Method;
use crate::machine::{self, MachineInfo};
use crate::placement::team::Team;
use crate::placement::CpuSet;
use crate::report::c2c_text;
use anyhow::{bail, Context as _, Result};
use serde_json::json;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MethodArg {
    /// compare-and-swap on one shared line (as nviennot/core-to-core-latency)
    Cas,
    /// plain load/store on two lines, one per writer
    LoadStore,
    /// both, one after the other
    Both,
}

impl MethodArg {
    fn methods(self) -> Vec<Method> {
        match self {
            MethodArg::Cas => vec![Method::Cas],
            MethodArg::LoadStore => vec![Method::LoadStore],
            MethodArg::Both => vec![Method::Cas, Method::LoadStore],
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct C2cArgs {
    /// Measure one pair of CPUs only, e.g. --pair 0,17.
    #[arg(long, value_name = "A,B")]
    pub pair: Option<String>,
    /// CPUs to include in the matrix (default: every usable CPU), e.g. 0-15,64-79.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Ping-pong method.
    #[arg(long, value_enum, default_value = "cas")]
    pub method: MethodArg,
    /// Time budget: quick (~4 s), standard (~30 s), full (~5 min).
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Measure at most N pairs: every pair of a subset of CPUs spread over the NUMA nodes.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Samples per pair (fixed; default from the profile, reduced to fit the budget).
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Round trips per sample (fixed; default from the profile).
    #[arg(long, value_name = "N")]
    pub round_trips: Option<u64>,
    /// One pair at a time instead of disjoint pairs in parallel.
    #[arg(long)]
    pub serial: bool,
    /// Print the plan (pairs, rounds, estimated time) and exit without measuring.
    #[arg(long)]
    pub plan: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the matrix of median one-way latencies (ns) as CSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Do not measure the clock (latencies are then not converted to cycles).
    #[arg(long)]
    pub no_clock: bool,
}

/// Usable CPUs: the snapshot's usable list, else online, else this thread's affinity.
pub(crate) fn usable_cpus(info: &MachineInfo) -> Result<CpuSet> {
    if !info.cpus.usable.is_empty() {
        return Ok(info.cpus.usable.clone());
    }
    if !info.cpus.online.is_empty() {
        return Ok(info.cpus.online.clone());
    }
    crate::placement::current_affinity()
}

/// `--cpus` within the usable CPUs (one-line error otherwise).
pub(crate) fn choose_cpus(usable: &CpuSet, pinnable: &CpuSet, arg: Option<&str>) -> Result<CpuSet> {
    let Some(list) = arg else {
        return Ok(usable.clone());
    };
    let want = CpuSet::parse(list).map_err(|e| anyhow::anyhow!("--cpus '{list}': {e}"))?;
    if want.is_empty() {
        bail!("--cpus '{list}' names no CPU");
    }
    let outside = want.difference(&usable.union(pinnable));
    if !outside.is_empty() {
        bail!("--cpus: CPU(s) {outside} are not usable by this process (usable: {usable})");
    }
    Ok(want)
}

/// Parse `A,B` into two different usable CPUs.
pub fn parse_pair(s: &str, usable: &CpuSet) -> Result<(usize, usize)> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 2 {
        bail!("--pair '{s}': expected two CPU ids separated by a comma, e.g. --pair 0,17");
    }
    let num = |p: &str| -> Result<usize> {
        p.parse::<usize>()
            .map_err(|_| anyhow::anyhow!("--pair '{s}': '{p}' is not a CPU id"))
    };
    let (a, b) = (num(parts[0])?, num(parts[1])?);
    if a == b {
        bail!("--pair '{s}': the two CPUs must differ");
    }
    for c in [a, b] {
        if !usable.contains(c) {
            bail!("--pair '{s}': CPU {c} is not usable by this process (usable: {usable})");
        }
    }
    Ok((a, b))
}

fn stop_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
    }
    Ok(stop)
}

/// Clock for cycles, or why there is none.
fn clock(cpu: usize, skip: bool, stop: &AtomicBool) -> (Option<f64>, String) {
    if skip {
        return (
            None,
            "cycles not available: clock not measured (--no-clock)".into(),
        );
    }
    match sync::measure_clock(cpu, &sync::policy(Profile::Quick), stop) {
        Ok(g) => (
            Some(g),
            format!("clock {g:.2} GHz on CPU {cpu} (dependent add chain, measured now)"),
        ),
        Err(e) => (
            None,
            format!("cycles not available: clock measurement failed ({e:#})"),
        ),
    }
}

pub fn run(ctx: &Context, args: &C2cArgs) -> Result<i32> {
    let sys = ctx.sysroot()?;
    if !sys.is_live() {
        bail!(
            "c2c measures this machine: --sysroot only applies to `info` (got '{}')",
            sys.root().display()
        );
    }
    if args.samples == Some(0) || args.round_trips == Some(0) {
        bail!("--samples and --round-trips must be at least 1");
    }
    if args.sample == Some(0) {
        bail!("--sample must be at least 1 pair");
    }
    let info = machine::discover(&sys)?;
    let usable = usable_cpus(&info)?;
    let methods = args.method.methods();

    if let Some(p) = &args.pair {
        if args.cpus.is_some() || args.sample.is_some() {
            bail!("--pair measures one pair: --cpus and --sample do not apply");
        }
        let (a, b) = parse_pair(p, &usable)?;
        return run_pair(&info, a, b, &methods, args);
    }

    let cpus = choose_cpus(&usable, &info.cpus.pinnable(), args.cpus.as_deref())?;
    let mut req = PlanRequest::for_profile(args.profile, &cpus.to_vec(), &methods);
    if let Some(s) = args.samples {
        req.max_samples = s;
        req.fixed = true;
    }
    if let Some(r) = args.round_trips {
        req.round_trips = r;
        req.fixed = true;
    }
    req.max_pairs = args.sample;
    if args.serial {
        req.max_parallel = Some(1);
    }
    let plan = c2c::plan(&info, &req)?;
    if args.plan {
        if args.json {
            super::print_json(&json!({"schema": "cpuscope.c2c-plan/1", "plan": plan}))?;
        } else {
            print!("{}", c2c_text::render_plan(&plan));
        }
        return Ok(0);
    }
    let stop = stop_flag()?;
    let decl = Declared::from_machine(&info, &plan.cpus);
    let (ghz, clock_note) = clock(plan.cpus[0], args.no_clock, &stop);
    let mut team = Team::new(&plan.cpus)?;
    let tty = std::io::stderr().is_terminal() && !args.json && !args.csv;
    let mut all_recs = Vec::new();
    let mut texts = Vec::new();
    let mut csvs = Vec::new();
    if !args.json && !args.csv {
        eprintln!(
            "cpuscope: c2c {}: {} CPUs, {} pairs in {} rounds, {} pass(es), ~{:.1} s",
            plan.methods
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(" + "),
            plan.cpus.len(),
            plan.pairs.len(),
            plan.rounds.len(),
            plan.passes,
            plan.est_secs
        );
    }
    let mut prog = |m: Method, pass: usize, d: usize, t: usize| {
        if tty {
            eprint!(
                "\r  {} pass {}/{}: round {d}/{t}   ",
                m.as_str(),
                pass + 1,
                plan.passes
            );
            if d == t && pass + 1 == plan.passes {
                eprintln!();
            }
        }
    };
    // Under heavy load a ping-pong pair runs only while both threads are on a
    // CPU: stop at twice the budget (keeping what finished) unless the user
    // fixed the sizes.
    let deadline = (!req.fixed).then(|| {
        std::time::Instant::now() + std::time::Duration::from_secs_f64(plan.budget_secs * 2.0 + 1.0)
    });
    let runs = c2c::run_plan(&plan, &mut team, &stop, deadline, false, &mut prog)?;
    for run in &runs {
        let (recs, inference) = c2c::records(run, &plan, &decl, ghz);
        csvs.push(c2c_text::matrix_csv(&run.matrix()));
        texts.push(c2c_text::render_matrix_run(
            run, &plan, &decl, &inference, ghz,
        ));
        all_recs.extend(recs);
    }
    let interrupted = stop.load(Ordering::Relaxed);
    if args.json {
        super::print_json(&json!({
            "schema": "cpuscope.c2c/1",
            "plan": plan,
            "clock_ghz": ghz,
            "clock": clock_note,
            "records": all_recs,
        }))?;
    } else if args.csv {
        for (i, c) in csvs.iter().enumerate() {
            if csvs.len() > 1 {
                println!("# method {}", plan.methods[i].as_str());
            }
            print!("{c}");
        }
    } else {
        for t in &texts {
            print!("{t}");
        }
        println!("{clock_note}");
        if interrupted {
            println!("interrupted: the figures above are what finished");
        }
    }
    Ok(if interrupted { 130 } else { 0 })
}

fn run_pair(
    info: &MachineInfo,
    a: usize,
    b: usize,
    methods: &[Method],
    args: &C2cArgs,
) -> Result<i32> {
    let (lo, hi) = (a.min(b), a.max(b));
    let mut req = PlanRequest::for_profile(args.profile, &[lo, hi], methods);
    if let Some(s) = args.samples {
        req.max_samples = s;
        req.fixed = true;
    }
    if let Some(r) = args.round_trips {
        req.round_trips = r;
        req.fixed = true;
    }
    let plan = c2c::plan(info, &req)?;
    let decl = Declared::from_machine(info, &plan.cpus);
    let relation = decl.relation(0, 1);
    let smt = decl.smt_siblings(0, 1);
    if args.plan {
        print!("{}", c2c_text::render_plan(&plan));
        return Ok(0);
    }
    let stop = stop_flag()?;
    let (ghz, clock_note) = clock(lo, args.no_clock, &stop);
    let mut team = Team::new(&plan.cpus)?;
    let mut results = Vec::new();
    for run in c2c::run_plan(&plan, &mut team, &stop, None, true, &mut |_, _, _, _| {})? {
        match run.pairs.first() {
            Some(p) => results.push((run.method, p.clone())),
            None => bail!(
                "the pair {lo},{hi} was not measured ({})",
                run.stopped.unwrap_or_else(|| "no sample".into())
            ),
        }
    }
    let label = c2c_infer::LEVEL_NAMES
        .iter()
        .find(|(n, _)| *n == relation)
        .map(|(_, l)| l.to_string())
        .unwrap_or_else(|| relation.clone());
    if args.json {
        let ms: Vec<serde_json::Value> = results
            .iter()
            .map(|(m, p)| {
                json!({
                    "method": m.as_str(),
                    "one_way_ns": p.median(),
                    "round_trip_ns": p.median() * 2.0,
                    "pooled_median_ns": p.stats.median,
                    "p25_ns": p.p25,
                    "p75_ns": p.p75,
                    "mean_ns": p.stats.mean,
                    "min_ns": p.stats.min,
                    "max_ns": p.stats.max,
                    "cv": p.stats.cv,
                    "iqr_over_median": p.iqr_ratio(),
                    "pass_medians_ns": p.pass_medians,
                    "passes_cv": crate::harness::Stats::from_samples(&p.pass_medians).map(|s| s.cv),
                    "preempted_samples": p.preempted_samples,
                    "responder_switches": p.responder_switches,
                    "one_way_cycles": ghz.map(|g| p.median() * g),
                    "samples": p.samples,
                })
            })
            .collect();
        super::print_json(&json!({
            "schema": "cpuscope.c2c-pair/1",
            "cpus": [lo, hi],
            "initiator": lo,
            "relation": relation,
            "relation_label": label,
            "smt_siblings": smt,
            "round_trips_per_sample": plan.round_trips,
            "samples_per_pass": plan.samples,
            "passes": plan.passes,
            "warmup_batches": plan.warmup,
            "clock_ghz": ghz,
            "clock": clock_note,
            "cycles_unavailable_reason": if ghz.is_none() { Some(clock_note.clone()) } else { None },
            "methods": ms,
        }))?;
    } else if args.csv {
        println!("method,cpu_a,cpu_b,one_way_ns,p25_ns,p75_ns,min_ns,max_ns,cv,samples");
        for (m, p) in &results {
            println!(
                "{},{lo},{hi},{:.3},{:.3},{:.3},{:.3},{:.3},{:.5},{}",
                m.as_str(),
                p.median(),
                p.p25,
                p.p75,
                p.stats.min,
                p.stats.max,
                p.stats.cv,
                p.stats.n
            );
        }
    } else {
        print!(
            "{}",
            c2c_text::render_pair(lo, hi, &label, smt, &results, &plan, ghz, &clock_note)
        );
    }
    Ok(0)
}

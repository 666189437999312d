//! `cpuscope placement`: the same workloads pinned to CPU sets chosen from
//! the topology (SMT siblings vs cores, L3, NUMA node/socket, packed vs
//! spread) and memory local/remote/interleaved. `--plan-only` prints the
//! planner's choice without measuring (and works on a recorded machine
//! with --sysroot). Stand-alone (not stored).

use super::simd::{choose_cpus, collect, prepare, print};
use super::Context;
use crate::experiments::placement_plan::plan;
use crate::experiments::placement_study::{run_study, workloads, SetWorkload};
use crate::experiments::Profile;
use crate::machine;
use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct PlacementArgs {
    /// How long to spend per figure: quick, standard, full.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Workloads on each CPU set (comma list: compute, shared, triad).
    #[arg(long, value_delimiter = ',')]
    pub workload: Vec<String>,
    /// Cores per spread set (the seed used 4).
    #[arg(long, default_value_t = 4)]
    pub k: usize,
    /// Skip the memory local/remote/interleaved comparison.
    #[arg(long)]
    pub no_memory: bool,
    /// Print the CPU sets the planner picks, measure nothing.
    #[arg(long)]
    pub plan_only: bool,
    /// Restrict to these CPUs (e.g. 0-3,8).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the results (or the plan) as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: &PlacementArgs) -> Result<i32> {
    if args.k < 2 || args.k > 4096 {
        bail!("--k must be between 2 and 4096 (got {})", args.k);
    }
    let mut wls = Vec::new();
    for w in args.workload.iter().filter(|s| !s.trim().is_empty()) {
        match SetWorkload::parse(w) {
            Some(x) => wls.push(x),
            None => bail!("unknown placement workload '{w}' (compute, shared, triad)"),
        }
    }
    if wls.is_empty() {
        wls = workloads(args.profile);
    }
    if args.plan_only {
        let sys = ctx.sysroot()?;
        let info = machine::discover(&sys)?;
        let cpus = choose_cpus(&info, args.cpus.as_deref())?;
        let p = plan(&info, &cpus, args.k);
        if args.json {
            super::print_json(&p)?;
        } else {
            print!("{}", crate::report::compute_text::render_plan(&p));
        }
        return Ok(0);
    }
    let mut st = prepare(ctx, args.cpus.as_deref(), "placement")?;
    let mut results = Vec::new();
    let (k, memory) = (args.k, !args.no_memory);
    collect(
        &mut st,
        args.profile,
        args.quiet,
        "placement",
        &mut results,
        |c, o| run_study(c, &wls, k, memory, o),
    )?;
    let text = crate::report::compute_text::render_placement(&results);
    print(args.json, "placement", args.profile, &st, &results, text)?;
    Ok(if st.stop.load(std::sync::atomic::Ordering::Relaxed) {
        130
    } else {
        0
    })
}

//! `cpuscope placement`: the same workloads pinned to CPU sets chosen from
//! the topology (SMT siblings vs cores, L3, NUMA node/socket, packed vs
//! spread) and memory local/remote/interleaved. `--plan-only` prints the
//! planner's choice without measuring (and works on a recorded machine
//! with --sysroot). Stand-alone (not stored).

use super::args::{formats, OutputArgs, Progress};
use super::session::{self, Session};
use super::Context;
use crate::experiments::compute::placement_study::text as placement_text;
use crate::experiments::compute::{placement_plan, placement_study};
use crate::experiments::experiment::Profile;
use crate::machine;
use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct PlacementArgs {
    /// How long to spend per figure: quick, standard, full.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Workloads on each CPU set (comma list: compute, shared, triad).
    #[arg(long, value_delimiter = ',')]
    pub workload: Vec<String>,
    /// Cores per spread set (the seed used 4).
    #[arg(long, default_value_t = 4, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65_536))]
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
    #[command(flatten)]
    pub progress: Progress,
    #[command(flatten)]
    pub formats: OutputArgs<PlacementFormats>,
}

formats!(pub PlacementFormats { Json: "Print the results (or the plan) as JSON" });

pub fn run(ctx: &Context, args: &PlacementArgs) -> Result<i32> {
    let wls = &args.workload;
    let mut p = placement_study::Params::new(wls, args.k, !args.no_memory, args.profile)?;
    if args.plan_only {
        // Nothing measured: a recorded machine (--sysroot) will do.
        let machine = machine::discover(&ctx.sysroot()?)?;
        let cpus = session::choose_cpus(&machine, args.cpus.as_deref())?;
        let plan = placement_plan::plan(&machine, &cpus, args.k);
        if args.formats.json {
            super::print_json(&plan)?;
        } else {
            out!("{}", placement_text::render_plan(&plan));
        }
        return Ok(0);
    }
    let cpus = args.cpus.as_deref();
    let mut s = Session::open(
        ctx,
        crate::experiments::compute::placement_study::EXP,
        cpus,
        args.profile,
        args.progress.quiet,
    )?;
    s.measure_with(&placement_study::PlacementStudy, &mut p)?;
    let keys = s.command_keys();
    s.output(args.formats.json, keys, placement_text::render_placement)
}

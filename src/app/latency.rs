//! `cpuscope latency`: the latency-vs-working-set curve on its own. Also
//! holds the glue the other memory commands share (machine, CPUs, Ctrl-C,
//! printing records).

use super::Context;
use crate::experiments::latency::{self, CurveSpec, Pages, Pattern};
use crate::experiments::mem_common::{self, check_fits, parse_size_list};
use crate::experiments::{ExpCtx, Facts, Profile};
use crate::machine::{self, MachineInfo};
use crate::placement::CpuSet;
use crate::results::schema::ResultRecord;
use anyhow::{bail, Context as _, Result};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct LatencyArgs {
    /// CPU that chases (default: the first usable CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Working-set sizes: a list (4K,64K,1M) and/or ranges (4K-512M).
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Points per doubling for ranges in --sizes.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub per_octave: usize,
    /// Page sizes: 4k, 2m (THP by madvise, else hugetlbfs), or both.
    #[arg(long, value_delimiter = ',', default_value = "2m,4k")]
    pub pages: Vec<String>,
    /// Chase patterns: random, page_local (TLB-separating), sequential (lmbench-like).
    #[arg(long, value_delimiter = ',')]
    pub pattern: Vec<String>,
    /// Bytes between chased slots.
    #[arg(long, default_value_t = 64, value_name = "BYTES")]
    pub stride: usize,
    /// Bind the chased memory to this NUMA node (default: local first touch).
    #[arg(long)]
    pub node: Option<String>,
    /// Repetitions and sample lengths of a profile.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Print the records as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What every memory command starts from.
pub struct CmdEnv {
    pub machine: MachineInfo,
    pub cpus: CpuSet,
    pub stop: Arc<AtomicBool>,
    pub facts: Facts,
}

impl CmdEnv {
    pub fn new(ctx: &Context) -> Result<CmdEnv> {
        let sys = ctx.sysroot()?;
        if !sys.is_live() {
            bail!(
                "this command measures this machine: --sysroot only applies to `info` (got '{}')",
                sys.root().display()
            );
        }
        let machine = machine::discover(&sys)?;
        let cpus = if machine.cpus.usable.is_empty() {
            machine.cpus.online.clone()
        } else {
            machine.cpus.usable.clone()
        };
        let stop = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
                .context("cannot install the Ctrl-C handler")?;
            signal_hook::flag::register(sig, Arc::clone(&stop))
                .context("cannot install the Ctrl-C handler")?;
        }
        Ok(CmdEnv {
            machine,
            cpus,
            stop,
            facts: Facts::default(),
        })
    }

    /// Run `f` with an experiment context; collect the records.
    pub fn collect(
        &mut self,
        profile: Profile,
        quiet: bool,
        name: &str,
        f: impl FnOnce(&mut ExpCtx, &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()>,
    ) -> Result<Vec<ResultRecord>> {
        let mut recs = Vec::new();
        let mut step = |m: &str| {
            if !quiet {
                eprintln!("cpuscope: {name}: {m}");
            }
        };
        let mut ectx = ExpCtx {
            machine: &self.machine,
            cpus: self.cpus.clone(),
            profile,
            stop: &self.stop,
            facts: &mut self.facts,
            step: &mut step,
        };
        let mut sink = |r: ResultRecord| -> Result<()> {
            recs.push(r);
            Ok(())
        };
        f(&mut ectx, &mut sink)?;
        Ok(recs)
    }
}

/// Print records as text (per the memory report) or JSON.
pub fn print_records(recs: &[ResultRecord], json: bool) -> Result<i32> {
    if json {
        super::print_json(&recs)?;
    } else {
        print!("{}", crate::report::memory_text::render(recs));
    }
    Ok(0)
}

/// Check a single CPU option against the usable set.
pub fn check_cpu(cpu: usize, usable: &CpuSet, opt: &str) -> Result<()> {
    mem_common::check_cpus(&CpuSet::from_ids([cpu]), usable, opt)
}

pub fn run(ctx: &Context, args: &LatencyArgs) -> Result<i32> {
    let mut env = CmdEnv::new(ctx)?;
    let mut plan = latency::plan(&env.machine, &env.cpus, args.profile);
    if let Some(c) = args.cpu {
        check_cpu(c, &env.cpus, "--cpu")?;
        plan.cpu = c;
    }
    if args.stride < 8 || !args.stride.is_multiple_of(8) {
        bail!(
            "--stride {}: must be a positive multiple of 8 bytes",
            args.stride
        );
    }
    plan.stride = args.stride;
    if let Some(n) = &args.node {
        let nodes = mem_common::check_nodes(n, &env.machine, "--node")?;
        if nodes.len() != 1 {
            bail!("--node: give one node (got {n})");
        }
        plan.node = Some(nodes[0]);
    }
    let mut pages = Vec::new();
    for p in &args.pages {
        pages.push(match p.as_str() {
            "4k" | "4K" | "small" => Pages::Small,
            "2m" | "2M" | "huge" => Pages::Huge,
            o => bail!("--pages: unknown page size '{o}' (expected 4k or 2m)"),
        });
    }
    let mut patterns = Vec::new();
    for p in &args.pattern {
        patterns.push(Pattern::parse(p).ok_or_else(|| {
            anyhow::anyhow!(
                "--pattern: unknown pattern '{p}' (expected random, page_local or sequential)"
            )
        })?);
    }
    if args.per_octave == 0 || args.per_octave > 64 {
        bail!("--per-octave {}: must be between 1 and 64", args.per_octave);
    }
    let sizes = match &args.sizes {
        Some(s) => {
            let v = parse_size_list(s, args.per_octave)?;
            let max = v.iter().copied().max().unwrap_or(0);
            check_fits("--sizes", max)?;
            if let Some(&min) = v.iter().min() {
                if min < 2 * plan.stride {
                    bail!(
                        "--sizes: {} is smaller than two {}-byte slots",
                        crate::base::fmt::fmt_size(min),
                        plan.stride
                    );
                }
            }
            Some(v)
        }
        None => None,
    };
    // Rebuild the curve list when the user chose patterns, pages or sizes.
    if sizes.is_some() || !patterns.is_empty() || args.pages.len() != 2 {
        let pats = if patterns.is_empty() {
            vec![Pattern::Random]
        } else {
            patterns
        };
        let default_sizes = plan
            .curves
            .first()
            .map(|c| c.sizes.clone())
            .unwrap_or_default();
        let sizes = sizes.unwrap_or(default_sizes);
        let mut curves = Vec::new();
        for pat in pats {
            for &pg in &pages {
                curves.push(CurveSpec {
                    pattern: pat,
                    pages: pg,
                    sizes: sizes.clone(),
                });
            }
        }
        plan.curves = curves;
    }
    let recs = env.collect(args.profile, args.quiet, "latency", |ectx, out| {
        latency::run_plan(ectx, &plan, out)
    })?;
    print_records(&recs, args.json)
}

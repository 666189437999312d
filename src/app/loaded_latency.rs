//! `cpuscope loaded-latency`: DRAM latency of one chasing thread while k
//! other threads stream (the latency-vs-bandwidth curve).

use super::latency::{check_cpu, print_records, CmdEnv};
use super::Context;
use crate::experiments::loaded_latency;
use crate::experiments::mem_common::{check_cpus, check_fits, parse_size};
use crate::experiments::Profile;
use crate::kernels::memory::{BwKernel, StoreKind};
use crate::placement::CpuSet;
use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct LoadedLatencyArgs {
    /// CPU that chases (default: the first usable CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// CPUs that stream, in the order they are added (default: every other usable CPU, one per core first).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Numbers of streaming threads to measure, e.g. 0,1,2 or 0-15 (default: the profile's).
    #[arg(long, value_name = "LIST")]
    pub streams: Option<String>,
    /// Traffic of the streams: read, write, copy, triad.
    #[arg(long, default_value = "read")]
    pub traffic: String,
    /// Non-temporal stores for the streams' traffic.
    #[arg(long)]
    pub nt: bool,
    /// Working set of the chase (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub chain_size: Option<String>,
    /// Bytes of the streams' arrays (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    #[arg(long)]
    pub json: bool,
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(ctx: &Context, args: &LoadedLatencyArgs) -> Result<i32> {
    let mut env = CmdEnv::new(ctx)?;
    let mut plan = loaded_latency::plan(&env.machine, &env.cpus, args.profile);
    if let Some(c) = args.cpu {
        check_cpu(c, &env.cpus, "--cpu")?;
        plan.chaser = c;
        plan.streamers.retain(|&x| x != c);
        if !plan.streamers.is_empty() || env.cpus.len() > 1 {
            let others: Vec<usize> = env.cpus.iter().filter(|&x| x != c).collect();
            plan.streamers.retain(|x| others.contains(x));
            for o in others {
                if !plan.streamers.contains(&o) {
                    plan.streamers.push(o);
                }
            }
        }
    }
    if let Some(l) = &args.cpus {
        let want = CpuSet::parse(l).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
        check_cpus(&want, &env.cpus, "--cpus")?;
        if want.contains(plan.chaser) {
            bail!(
                "--cpus: CPU {} is the chasing CPU; list only the streaming CPUs",
                plan.chaser
            );
        }
        plan.streamers = want.to_vec();
    }
    let n = plan.streamers.len();
    plan.counts = match &args.streams {
        Some(s) => {
            let set = CpuSet::parse(s)
                .map_err(|e| anyhow::anyhow!("--streams: {}", e.replace("CPU list", "list")))?;
            if set.is_empty() {
                bail!("--streams '{s}': names no count");
            }
            if let Some(m) = set.iter().last() {
                if m > n {
                    bail!("--streams: {m} streams but only {n} streaming CPU(s) available");
                }
            }
            set.to_vec()
        }
        None => plan.counts.into_iter().filter(|&k| k <= n).collect(),
    };
    plan.traffic = BwKernel::parse(&args.traffic).ok_or_else(|| {
        anyhow::anyhow!(
            "--traffic: unknown kernel '{}' (read, write, copy, triad)",
            args.traffic
        )
    })?;
    if args.nt {
        plan.store = StoreKind::NonTemporal;
    }
    if let Some(s) = &args.chain_size {
        let b = parse_size(s)?;
        check_fits("--chain-size", b)?;
        if b < 4096 {
            bail!("--chain-size: {b} bytes is too small (at least 4K)");
        }
        plan.chain_bytes = b;
    }
    if let Some(s) = &args.size {
        let b = parse_size(s)?;
        check_fits("--size", b.saturating_mul(3))?;
        plan.array_bytes = b;
    }
    let cf = crate::experiments::mem_common::CacheFacts::of(&env.machine);
    for (what, b, given) in [
        (
            "chase working set",
            plan.chain_bytes,
            args.chain_size.is_some(),
        ),
        ("stream array", plan.array_bytes, args.size.is_some()),
    ] {
        if given && b < cf.llc.saturating_mul(4) {
            plan.notes.push(format!(
                "{what} of {} is below 4 × the last-level cache ({}): parts may come from caches, not memory",
                crate::base::fmt::fmt_size(b),
                crate::base::fmt::fmt_size(cf.llc)
            ));
        }
    }
    let recs = env.collect(args.profile, args.quiet, "loaded-latency", |ectx, out| {
        loaded_latency::run_plan(ectx, &plan, out)
    })?;
    print_records(&recs, args.json)
}

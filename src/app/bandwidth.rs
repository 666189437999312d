//! `cpuscope bandwidth`: STREAM-style bandwidth on its own, with the thread
//! counts, CPUs, kernels, widths, stores, array size and node as options.

use super::latency::{check_cpu, print_records, CmdEnv};
use super::Context;
use crate::experiments::bandwidth::{self, Variant};
use crate::experiments::mem_common::{self, check_cpus, check_fits, parse_size, Placement};
use crate::experiments::Profile;
use crate::kernels::memory::{BwKernel, StoreKind, Width};
use crate::placement::CpuSet;
use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct BandwidthArgs {
    /// Thread counts to sweep, e.g. 1,2,4 or 1-16 (default: the profile's sweep up to all CPUs).
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// Restrict to these CPUs (must be usable by this process).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Placements: compact, spread_core, spread_node.
    #[arg(long, value_delimiter = ',')]
    pub placement: Vec<String>,
    /// Kernels: read, write, copy, triad.
    #[arg(long, value_delimiter = ',')]
    pub kernels: Vec<String>,
    /// Widths: vector (the widest this CPU has), scalar, avx512, avx, sse2, neon.
    #[arg(long, value_delimiter = ',')]
    pub width: Vec<String>,
    /// Stores: normal, nt (non-temporal).
    #[arg(long, value_delimiter = ',')]
    pub stores: Vec<String>,
    /// Bytes of each array (default: 4 × the last-level cache, STREAM's rule).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Bind the arrays to this NUMA node (default: first touch by each thread).
    #[arg(long)]
    pub node: Option<String>,
    /// Skip the per-cache-level figures.
    #[arg(long)]
    pub no_levels: bool,
    /// Repetitions: N rounds per figure (default: the profile's).
    #[arg(long)]
    pub reps: Option<usize>,
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    #[arg(long)]
    pub json: bool,
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_list<T>(v: &[String], what: &str, f: impl Fn(&str) -> Option<T>) -> Result<Vec<T>> {
    v.iter()
        .map(|s| f(s.trim()).ok_or_else(|| anyhow::anyhow!("--{what}: unknown value '{s}'")))
        .collect()
}

pub fn run(ctx: &Context, args: &BandwidthArgs) -> Result<i32> {
    let mut env = CmdEnv::new(ctx)?;
    if let Some(list) = &args.cpus {
        let want = CpuSet::parse(list).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
        check_cpus(&want, &env.cpus, "--cpus")?;
        env.cpus = want;
    }
    let mut plan = bandwidth::plan(&env.machine, &env.cpus, args.profile);
    if let Some(t) = &args.threads {
        let set = CpuSet::parse(t)
            .map_err(|e| anyhow::anyhow!("--threads: {}", e.replace("CPU list", "list")))?;
        if set.is_empty() || set.contains(0) {
            bail!("--threads '{t}': thread counts must be 1 or more");
        }
        let max = set.iter().last().unwrap_or(1);
        if max > env.cpus.len() {
            bail!(
                "--threads: {max} threads but only {} usable CPUs ({}): one pinned thread per CPU",
                env.cpus.len(),
                env.cpus
            );
        }
        plan.threads = set.to_vec();
    }
    if !args.placement.is_empty() {
        plan.placements = parse_list(&args.placement, "placement", Placement::parse)?;
    }
    let vector = Width::widest().unwrap_or(Width::Scalar);
    let widths = parse_list(&args.width, "width", |s| match s {
        "vector" => Some(vector),
        o => Width::parse(o),
    })?;
    for w in &widths {
        if !w.supported() {
            bail!("--width: {} is not supported by this CPU", w.name());
        }
    }
    let kernels = parse_list(&args.kernels, "kernels", BwKernel::parse)?;
    let stores = parse_list(&args.stores, "stores", |s| match s {
        "normal" => Some(StoreKind::Normal),
        "nt" | "non-temporal" | "nontemporal" => Some(StoreKind::NonTemporal),
        _ => None,
    })?;
    if !kernels.is_empty() || !widths.is_empty() || !stores.is_empty() {
        let ks = if kernels.is_empty() {
            vec![BwKernel::Triad]
        } else {
            kernels
        };
        let ws = if widths.is_empty() {
            vec![vector]
        } else {
            widths
        };
        let ss = if stores.is_empty() {
            vec![StoreKind::Normal]
        } else {
            stores
        };
        let mut sweep = Vec::new();
        for &k in &ks {
            for &w in &ws {
                for &s in &ss {
                    let v = Variant::new(k, w, s);
                    if !sweep.contains(&v) {
                        sweep.push(v);
                    }
                }
            }
        }
        plan.sweep = sweep;
        plan.ends.clear();
    }
    if let Some(s) = &args.size {
        let b = parse_size(s)?;
        if b == 0 {
            bail!("--size: size 0 is not a size");
        }
        check_fits("--size (3 arrays)", b.saturating_mul(3))?;
        plan.array_bytes = b;
        plan.notes.clear();
        let cf = crate::experiments::mem_common::CacheFacts::of(&env.machine);
        if b < cf.llc_total.saturating_mul(4) {
            plan.scope = "array";
            plan.notes.push(format!(
                "arrays of {} are smaller than 4 × the last-level cache ({}): not a DRAM figure, parts may come from caches (records carry scope=array)",
                crate::base::fmt::fmt_size(b),
                crate::base::fmt::fmt_size(cf.llc_total)
            ));
        }
    }
    if let Some(n) = &args.node {
        let nodes = mem_common::check_nodes(n, &env.machine, "--node")?;
        if nodes.len() != 1 {
            bail!("--node: give one node (got {n})");
        }
        plan.node = Some(nodes[0]);
    }
    if let Some(r) = args.reps {
        if r == 0 || r > 1000 {
            bail!("--reps {r}: must be between 1 and 1000");
        }
        plan.reps = r;
    }
    if args.no_levels {
        plan.levels.clear();
        plan.level_kernels.clear();
    }
    let _ = check_cpu;
    let recs = env.collect(args.profile, args.quiet, "bandwidth", |ectx, out| {
        bandwidth::run_plan(ectx, &plan, out)
    })?;
    print_records(&recs, args.json)
}

//! `cpuscope numa-matrix`: latency and bandwidth from the CPUs of each node
//! to the memory of each node (and interleaved), against declared distances.

use super::latency::{print_records, CmdEnv};
use super::Context;
use crate::experiments::mem_common::{self, check_fits, parse_size};
use crate::experiments::numa_matrix::{self, Target};
use crate::experiments::Profile;
use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct NumaMatrixArgs {
    /// Rows: nodes whose CPUs run the measurement (default: every node with usable CPUs).
    #[arg(long, value_name = "LIST")]
    pub cpu_nodes: Option<String>,
    /// Columns: nodes whose memory is read (default: every node with memory).
    #[arg(long, value_name = "LIST")]
    pub mem_nodes: Option<String>,
    /// Leave out the interleave column.
    #[arg(long)]
    pub no_interleave: bool,
    /// Working set of the latency chase (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub latency_size: Option<String>,
    /// Bytes of the bandwidth array (default: 4 × the last-level cache).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Only the latency matrix.
    #[arg(long, conflicts_with = "bandwidth_only")]
    pub latency_only: bool,
    /// Only the bandwidth matrix.
    #[arg(long)]
    pub bandwidth_only: bool,
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    #[arg(long)]
    pub json: bool,
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(ctx: &Context, args: &NumaMatrixArgs) -> Result<i32> {
    let mut env = CmdEnv::new(ctx)?;
    let mut plan = numa_matrix::plan(&env.machine, &env.cpus, args.profile);
    if let Some(l) = &args.cpu_nodes {
        let want = mem_common::check_nodes(l, &env.machine, "--cpu-nodes")?;
        let rows: Vec<_> = plan
            .rows
            .iter()
            .filter(|r| want.contains(&r.0))
            .cloned()
            .collect();
        if rows.len() != want.len() {
            let have: Vec<String> = plan.rows.iter().map(|r| r.0.to_string()).collect();
            bail!(
                "--cpu-nodes: some of node(s) {l} have no CPU this process may use (nodes with usable CPUs: {})",
                have.join(",")
            );
        }
        plan.rows = rows;
    }
    if let Some(l) = &args.mem_nodes {
        let want = mem_common::check_nodes(l, &env.machine, "--mem-nodes")?;
        plan.targets = want.iter().map(|&n| Target::Node(n)).collect();
        if want.len() > 1 {
            plan.targets.push(Target::Interleave(want.clone()));
        }
    }
    if args.no_interleave {
        plan.targets.retain(|t| matches!(t, Target::Node(_)));
    }
    if let Some(s) = &args.latency_size {
        let b = parse_size(s)?;
        check_fits("--latency-size", b)?;
        if b < 4096 {
            bail!("--latency-size: {b} bytes is too small (at least 4K)");
        }
        plan.latency_bytes = b;
    }
    if let Some(s) = &args.size {
        let b = parse_size(s)?;
        check_fits("--size", b)?;
        plan.array_bytes = b;
    }
    let cf = crate::experiments::mem_common::CacheFacts::of(&env.machine);
    for (what, b) in [
        ("latency working set", plan.latency_bytes),
        ("bandwidth array", plan.array_bytes),
    ] {
        if b < cf.llc.saturating_mul(4) && (args.size.is_some() || args.latency_size.is_some()) {
            plan.notes.push(format!(
                "{what} of {} is below 4 × the last-level cache ({}): parts may come from caches, not memory",
                crate::base::fmt::fmt_size(b),
                crate::base::fmt::fmt_size(cf.llc)
            ));
        }
    }
    plan.latency = !args.bandwidth_only;
    plan.bandwidth = !args.latency_only;
    let recs = env.collect(args.profile, args.quiet, "numa-matrix", |ectx, out| {
        numa_matrix::run_plan(ectx, &plan, out)
    })?;
    print_records(&recs, args.json)
}

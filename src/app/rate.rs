//! `cpuscope rate`: N copies of a workload at once (SPEC-rate style):
//! jobs per hour and the scaling efficiency per copy. Stand-alone (not stored).

use super::simd::{collect, prepare, print};
use super::Context;
use crate::experiments::one_cpu_per_core;
use crate::experiments::rate::{
    calibrate_work, measure_rate, parse_workload, rate_records, RateWorkload,
};
use crate::experiments::simd::ordered_cpus;
use crate::experiments::workloads::{find_in_path, Cmd};
use crate::experiments::Profile;
use anyhow::{bail, Result};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct RateArgs {
    /// Copies to run at once: a count or a comma list (e.g. 4 or 1,2,4);
    /// `per_core` and `all` name one copy per core and one per logical CPU.
    #[arg(long, value_delimiter = ',', required = true)]
    pub copies: Vec<String>,
    /// bc-pow[:EXP] (echo "7^EXP" | bc), bc-pi[:SCALE], chacha[:VARIANT], nop.
    #[arg(value_name = "WORKLOAD")]
    pub workload: Option<String>,
    /// Or any command, after `--` (one process per copy).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Rounds per copy count (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds of work per copy for in-process workloads (chacha, nop).
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Do not add the 1-copy baseline run (efficiency then is not available).
    #[arg(long)]
    pub no_baseline: bool,
    /// Per-round time limit in seconds for process workloads.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// Restrict to these CPUs (e.g. 0-3,8); copies are pinned one per CPU.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

fn workload(args: &RateArgs) -> Result<RateWorkload> {
    match (&args.workload, args.command.is_empty()) {
        (Some(_), false) => bail!("give a WORKLOAD name or a command after --, not both"),
        (None, true) => bail!(
            "no workload: name one (bc-pow[:EXP], bc-pi[:SCALE], chacha[:VARIANT], nop) or give a command after --"
        ),
        (Some(w), true) => parse_workload(w),
        (None, false) => {
            let prog = &args.command[0];
            let path = if prog.contains('/') {
                let p = PathBuf::from(prog);
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
                args: args.command[1..].to_vec(),
                stdin: None,
            }))
        }
    }
}

pub fn run(ctx: &Context, args: &RateArgs) -> Result<i32> {
    if args.rounds == 0 || args.rounds > 1000 {
        bail!("--rounds must be between 1 and 1000 (got {})", args.rounds);
    }
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 3600.0) {
        bail!(
            "--seconds must be between 0 and 3600 (got {})",
            args.seconds
        );
    }
    let w = workload(args)?;
    let mut st = prepare(ctx, args.cpus.as_deref(), "rate")?;
    let order = ordered_cpus(&st.info, &st.cpus);
    let per_core = one_cpu_per_core(&st.info, &st.cpus).len();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in &args.copies {
        let t = c.trim();
        let n = match t {
            "per_core" => per_core,
            "all" => st.cpus.len(),
            _ => match t.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => bail!("--copies: '{t}' is not a positive count (or per_core, all)"),
            },
        };
        if n > order.len() {
            bail!(
                "--copies {n}: only {} usable CPUs (copies are pinned one per CPU)",
                order.len()
            );
        }
        if !counts.iter().any(|x| x.1 == n) {
            counts.push((
                if t == "per_core" || t == "all" {
                    t.to_string()
                } else {
                    n.to_string()
                },
                n,
            ));
        }
    }
    if !args.no_baseline && !counts.iter().any(|c| c.1 == 1) {
        counts.insert(0, ("1".into(), 1));
    }
    let work = match &w {
        RateWorkload::Chacha(_) | RateWorkload::Nop => Some(calibrate_work(
            &w,
            order[0],
            Duration::from_secs_f64(args.seconds),
        )?),
        _ => None,
    };
    let mut results = Vec::new();
    let stop = st.stop.clone();
    let quiet = args.quiet;
    collect(
        &mut st,
        Profile::Standard,
        quiet,
        "rate",
        &mut results,
        |c, out| {
            let mut runs = Vec::new();
            for (label, n) in &counts {
                (c.step)(&format!("{} × {n} copies", w.key()));
                runs.push((
                    label.clone(),
                    measure_rate(
                        &w,
                        &order,
                        *n,
                        args.rounds,
                        work.unwrap_or(0),
                        Duration::from_secs(args.timeout),
                        &stop,
                    )?,
                ));
            }
            for r in rate_records(&w, &runs, work) {
                out(r)?;
            }
            Ok(())
        },
    )?;
    let text = crate::report::compute_text::render_rate(&results);
    print(args.json, "rate", Profile::Standard, &st, &results, text)?;
    Ok(0)
}

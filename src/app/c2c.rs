//! `cpuscope c2c`: the core-to-core latency matrix of this machine (or one
//! pair), the latency groups it shows and how they compare with the topology
//! the kernel declares.

use super::args::{formats, OutputArgs};
use super::session::{self, Session};
use super::Context;
use crate::experiments::coherence::c2c::text as c2c_text;
use crate::experiments::coherence::c2c::{self, PairView};
use crate::experiments::experiment::Profile;
use crate::kernels::c2c::Method;
use anyhow::{bail, Result};
use serde_json::json;

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
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub sample: Option<usize>,
    /// Samples per pair (fixed; default from the profile, reduced to fit the budget).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub samples: Option<usize>,
    /// Round trips per sample (fixed; default from the profile).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub round_trips: Option<u64>,
    /// One pair at a time instead of disjoint pairs in parallel.
    #[arg(long)]
    pub serial: bool,
    /// Print the plan (pairs, rounds, estimated time) and exit without measuring.
    #[arg(long)]
    pub plan: bool,
    #[command(flatten)]
    pub formats: OutputArgs<C2cFormats>,
    /// Do not measure the clock (latencies are then not converted to cycles).
    #[arg(long)]
    pub no_clock: bool,
}

formats!(pub C2cFormats {
    Json: "Print JSON instead of text",
    Csv: "Print the matrix of median one-way latencies (ns) as CSV",
});

impl C2cArgs {
    fn options(&self) -> c2c::Options {
        c2c::Options {
            pair: self.pair.clone(),
            methods: self.method.methods(),
            samples: self.samples,
            round_trips: self.round_trips,
            max_pairs: self.sample,
            serial: self.serial,
        }
    }
}

pub fn run(ctx: &Context, args: &C2cArgs) -> Result<i32> {
    if args.pair.is_some() && (args.cpus.is_some() || args.sample.is_some()) {
        bail!("--pair measures one pair: --cpus and --sample do not apply");
    }
    let quiet = args.formats.json || args.formats.csv;
    let mut s = Session::open(
        ctx,
        crate::experiments::coherence::c2c::EXP,
        args.cpus.as_deref(),
        args.profile,
        quiet,
    )?;
    let mut p = c2c::Params::new(&s.machine, &s.cpus, args.profile, &args.options())?;
    if args.plan {
        if args.formats.json {
            super::print_json(&json!({"schema": "cpuscope.c2c-plan/1", "plan": p.plan}))?;
        } else {
            out!("{}", c2c_text::render_plan(&p.plan));
        }
        return Ok(0);
    }
    let clock = s.clock(p.plan.cpus[0], args.no_clock);
    s.measure_with(&c2c::C2c, &mut p)?;
    let ghz = s.ghz();
    let extra = json!({"clock_ghz": ghz, "clock": clock});
    if args.pair.is_some() {
        let view = PairView::of(&s.machine, &p)?;
        if args.formats.csv {
            out!("{}", c2c_text::pair_csv(&view));
            return Ok(s.finish()?.exit_code());
        }
        let extra = session::merge(extra, view.json(&p.plan, ghz, &clock));
        return s.output(args.formats.json, extra, |_| {
            let (lo, hi) = view.cpus;
            let (label, smt) = (&view.label, view.smt);
            c2c_text::render_pair(lo, hi, label, smt, &view.results, &p.plan, ghz, &clock)
        });
    }
    if args.formats.csv {
        for run in &p.runs {
            if p.runs.len() > 1 {
                outln!("# method {}", run.method.as_str());
            }
            out!("{}", c2c_text::matrix_csv(&run.matrix()));
        }
        return Ok(s.finish()?.exit_code());
    }
    let extra = session::merge(extra, json!({"plan": p.plan, "records": s.results()}));
    s.output(args.formats.json, extra, |recs| {
        let out = c2c_text::render_matrices(recs);
        format!("{out}{clock}\n")
    })
}

//END

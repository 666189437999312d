//! `cpuscope simd`: the SIMD × threads × SMT study (seed 004) and the peak
//! FLOPs comparison, stand-alone (not stored), under the SMT and turbo
//! configurations asked.

use super::args::{formats, OutputArgs, Progress};
use super::session::{self, Session};
use super::Context;
use crate::experiments::compute::simd::text as simd_text;
use crate::experiments::compute::{peak, simd};
use crate::experiments::experiment::Profile;
use crate::experiments::state::frequency;
use crate::placement::machine_state::Want;
use anyhow::Result;
use serde_json::json;

#[derive(clap::Args, Debug)]
pub struct SimdArgs {
    /// How long to spend: quick, standard, full (full adds a thread-count sweep).
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Only these ChaCha20 forms (comma list: scalar, sse2, avx2, avx512, neon, sve).
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Restrict to these CPUs (e.g. 0-3,8); must be usable by this process.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Do not measure the clock first (GHz and cycles/byte become not available).
    #[arg(long)]
    pub no_frequency: bool,
    /// Skip the peak FLOPs comparison.
    #[arg(long)]
    pub no_peak: bool,
    #[command(flatten)]
    pub progress: Progress,
    #[command(flatten)]
    pub formats: OutputArgs<SimdFormats>,
    /// SMT for the study: on, off, both (measure each, current state first) or as-is.
    /// A change needs root and a writable /sys/devices/system/cpu/smt/control; the state
    /// found is restored at the end, on error and on Ctrl-C.
    #[arg(
        long,
        value_enum,
        default_value = "as-is",
        value_name = "on|off|both|as-is"
    )]
    pub smt: Want,
    /// Turbo/boost for the study: on, off, both or as-is. A change needs root and a boost
    /// switch (intel_pstate/no_turbo, cpufreq/boost or cpufreq/policyN/boost); restored as --smt.
    #[arg(
        long,
        value_enum,
        default_value = "as-is",
        value_name = "on|off|both|as-is"
    )]
    pub turbo: Want,
}

formats!(pub SimdFormats { Json: "Print the results as JSON" });

pub fn run(ctx: &Context, args: &SimdArgs) -> Result<i32> {
    let mut params = simd::Params::parse(&args.variants)?;
    let mut s = Session::open(
        ctx,
        crate::experiments::compute::simd::EXP,
        args.cpus.as_deref(),
        args.profile,
        args.progress.quiet,
    )?;
    let switched = s.configurations(args.smt, args.turbo, |s| {
        if !args.no_frequency {
            // The clock at 1 thread and one thread per core, for GHz and cycles/byte.
            s.measure_facts(frequency::EXP)?;
        }
        s.measure_with(&simd::Simd, &mut params)?;
        if !args.no_peak {
            s.measure(peak::EXP)?;
        }
        Ok(())
    })?;
    let extra = session::merge(s.command_keys(), switched.unwrap_or_else(|| json!({})));
    s.output(
        args.formats.json,
        extra,
        simd_text::render_simd_configurations,
    )
}

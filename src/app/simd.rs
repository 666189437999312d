//! `cpuscope simd`: the SIMD × threads × SMT study (seed 004) and the peak
//! FLOPs comparison, stand-alone (not stored). Also the small shared glue
//! of the stand-alone compute commands (`simd`, `rate`, `placement`).

use super::Context;
use crate::experiments::{frequency, peak, simd, ExpCtx, Experiment, Facts, Profile};
use crate::kernels::chacha::Variant;
use crate::machine::{self, MachineInfo};
use crate::placement::CpuSet;
use crate::results::schema::ResultRecord;
use anyhow::{bail, Context as _, Result};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct SimdArgs {
    /// How long to spend: quick, standard, full (full adds a thread-count sweep).
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Only these ChaCha20 forms (comma list: scalar, sse2, avx2, avx512, neon).
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
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What a stand-alone compute command works with.
pub(crate) struct Standalone {
    pub info: MachineInfo,
    pub cpus: CpuSet,
    pub stop: Arc<AtomicBool>,
    pub facts: Facts,
}

/// The CPUs a command may use: usable ∩ --cpus (error outside the usable set).
pub(crate) fn choose_cpus(info: &MachineInfo, arg: Option<&str>) -> Result<CpuSet> {
    let usable = if info.cpus.usable.is_empty() {
        info.cpus.online.clone()
    } else {
        info.cpus.usable.clone()
    };
    let Some(list) = arg else {
        if usable.is_empty() {
            bail!("no usable CPU found (the topology could not be read)");
        }
        return Ok(usable);
    };
    let want = CpuSet::parse(list).map_err(anyhow::Error::msg)?;
    if want.is_empty() {
        bail!("--cpus '{list}' names no CPU");
    }
    let outside = want.difference(&usable.union(&info.cpus.pinnable()));
    if !outside.is_empty() {
        bail!("--cpus: CPU(s) {outside} are not usable by this process (usable: {usable})");
    }
    Ok(want)
}

/// Discover this machine (live only), pick the CPUs, install Ctrl-C.
pub(crate) fn prepare(ctx: &Context, cpus: Option<&str>, what: &str) -> Result<Standalone> {
    let sys = ctx.sysroot()?;
    if !sys.is_live() {
        bail!(
            "{what} measures this machine: --sysroot does not apply (got '{}')",
            sys.root().display()
        );
    }
    let info = machine::discover(&sys)?;
    let cpus = choose_cpus(&info, cpus)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("cannot install the Ctrl-C handler")?;
    }
    Ok(Standalone {
        info,
        cpus,
        stop,
        facts: Facts::default(),
    })
}

/// Run `f` with an experiment context; collect the records it produces.
pub(crate) fn collect<F>(
    st: &mut Standalone,
    profile: Profile,
    quiet: bool,
    name: &str,
    results: &mut Vec<ResultRecord>,
    f: F,
) -> Result<()>
where
    F: FnOnce(&mut ExpCtx, &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()>,
{
    let mut step = |msg: &str| {
        if !quiet {
            eprintln!("cpuscope: {name}: {msg}");
        }
    };
    let mut ectx = ExpCtx {
        machine: &st.info,
        cpus: st.cpus.clone(),
        profile,
        stop: &st.stop,
        facts: &mut st.facts,
        step: &mut step,
    };
    let mut sink = |r: ResultRecord| -> Result<()> {
        results.push(r);
        Ok(())
    };
    f(&mut ectx, &mut sink)
}

/// Print the results: JSON document or the text rendering.
pub(crate) fn print(
    json: bool,
    command: &str,
    profile: Profile,
    st: &Standalone,
    results: &[ResultRecord],
    text: String,
) -> Result<()> {
    if json {
        super::print_json(&serde_json::json!({
            "command": command,
            "profile": profile.as_str(),
            "cpus": st.cpus.to_string(),
            "results": results,
        }))
    } else {
        print!("{text}");
        Ok(())
    }
}

/// Parse `--variants`.
pub fn parse_variants(list: &[String]) -> Result<Vec<Variant>> {
    list.iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            Variant::parse(s).ok_or_else(|| {
                anyhow::anyhow!("unknown SIMD variant '{s}' (scalar, sse2, avx2, avx512, neon)")
            })
        })
        .collect()
}

pub fn run(ctx: &Context, args: &SimdArgs) -> Result<i32> {
    let only = parse_variants(&args.variants)?;
    let mut st = prepare(ctx, args.cpus.as_deref(), "simd")?;
    let mut results = Vec::new();
    if !args.no_frequency {
        // The clock at 1 thread and one thread per core, for GHz and cycles/byte.
        let mut freq = Vec::new();
        collect(
            &mut st,
            args.profile,
            args.quiet,
            "frequency",
            &mut freq,
            |c, o| frequency::Frequency.run(c, o),
        )?;
    }
    collect(
        &mut st,
        args.profile,
        args.quiet,
        "simd",
        &mut results,
        |c, o| simd::run_study(c, &only, o),
    )?;
    if !args.no_peak {
        collect(
            &mut st,
            args.profile,
            args.quiet,
            "peak",
            &mut results,
            |c, o| peak::Peak.run(c, o),
        )?;
    }
    let text = [
        crate::report::compute_text::render_simd(&results),
        crate::report::compute_text::render_peak(&results),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join("\n");
    print(args.json, "simd", args.profile, &st, &results, text)?;
    Ok(if st.stop.load(std::sync::atomic::Ordering::Relaxed) {
        130
    } else {
        0
    })
}

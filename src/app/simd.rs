//! `cpuscope simd`: the SIMD × threads × SMT study (seed 004) and the peak
//! FLOPs comparison, stand-alone (not stored). Also the small shared glue
//! of the stand-alone compute commands (`simd`, `rate`, `placement`).

use super::Context;
use crate::experiments::{frequency, peak, simd, ExpCtx, Experiment, Facts, Profile};
use crate::kernels::chacha::Variant;
use crate::machine::{self, MachineInfo};
use crate::placement::machine_state::{self, Knob, Privilege, Setting, Want};
use crate::placement::CpuSet;
use crate::results::schema::ResultRecord;
use anyhow::{bail, Context as _, Result};
use std::sync::atomic::{AtomicBool, Ordering};
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
    // Before the stop flag: a second Ctrl-C exits at once, and the machine
    // switches (simd --smt/--turbo) must be written back before that.
    machine_state::install_signal_restore()?;
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
    match f(&mut ectx, &mut sink) {
        // Ctrl-C: what finished is kept and printed, the command exits 130
        // (as `run` does), not with the experiment's "interrupted" error.
        Err(_) if st.stop.load(Ordering::Relaxed) => Ok(()),
        other => other,
    }
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

/// Frequency (unless skipped), the study and peak (unless skipped) on
/// `st` as it is now.
fn measure(st: &mut Standalone, args: &SimdArgs, only: &[Variant]) -> Result<Vec<ResultRecord>> {
    let mut results = Vec::new();
    if !args.no_frequency {
        // The clock at 1 thread and one thread per core, for GHz and cycles/byte.
        let mut freq = Vec::new();
        collect(
            st,
            args.profile,
            args.quiet,
            "frequency",
            &mut freq,
            |c, o| frequency::Frequency.run(c, o),
        )?;
    }
    collect(
        st,
        args.profile,
        args.quiet,
        "simd",
        &mut results,
        |c, o| simd::run_study(c, only, o),
    )?;
    if !args.no_peak {
        collect(
            st,
            args.profile,
            args.quiet,
            "peak",
            &mut results,
            |c, o| peak::Peak.run(c, o),
        )?;
    }
    Ok(results)
}

/// The CPUs after a switch changed which are online: `--cpus` ∩ usable
/// (siblings of an SMT-off machine drop out), or every usable CPU.
fn rechoose_cpus(info: &MachineInfo, arg: Option<&str>) -> Result<CpuSet> {
    let all = choose_cpus(info, None)?;
    let Some(list) = arg else {
        return Ok(all);
    };
    let want = CpuSet::parse(list).map_err(anyhow::Error::msg)?;
    let left = want.intersection(&all);
    if left.is_empty() {
        bail!("--cpus '{list}': none of these CPUs is online in this configuration (online and usable: {all})");
    }
    Ok(left)
}

fn config_name(smt: Option<Setting>, turbo: Option<Setting>) -> String {
    let mut parts = Vec::new();
    if let Some(s) = smt {
        parts.push(format!("smt={}", s.as_str()));
    }
    if let Some(t) = turbo {
        parts.push(format!("turbo={}", t.as_str()));
    }
    parts.join(", ")
}

pub fn run(ctx: &Context, args: &SimdArgs) -> Result<i32> {
    let only = parse_variants(&args.variants)?;
    if args.smt == Want::AsIs && args.turbo == Want::AsIs {
        let mut st = prepare(ctx, args.cpus.as_deref(), "simd")?;
        let results = measure(&mut st, args, &only)?;
        let text = crate::report::compute_text::render_simd_configurations(&results);
        print(args.json, "simd", args.profile, &st, &results, text)?;
        return Ok(if st.stop.load(Ordering::Relaxed) {
            130
        } else {
            0
        });
    }
    // Check both switches before anything is measured or changed.
    let sys = ctx.sysroot()?;
    if !sys.is_live() {
        bail!(
            "simd measures this machine: --sysroot does not apply (got '{}')",
            sys.root().display()
        );
    }
    let privilege = Privilege::current();
    let mut smt = machine_state::plan(&sys, Knob::Smt, args.smt, privilege)?;
    let mut turbo = machine_state::plan(&sys, Knob::Turbo, args.turbo, privilege)?;
    let mut st = prepare(ctx, args.cpus.as_deref(), "simd")?;
    let say = |msg: &str| {
        if !args.quiet {
            eprintln!("cpuscope: simd: {msg}");
        }
    };
    let cpus_found = st.cpus.to_string();
    let mut results = Vec::new();
    let mut configurations = Vec::new();
    'outer: for s_smt in smt.settings.clone() {
        if let (Some(s), Some(sw)) = (s_smt, smt.switch.as_mut()) {
            if sw.now() != Some(s) {
                say(&format!("switching SMT {}", s.as_str()));
            }
            sw.set(s)?;
        }
        for s_turbo in turbo.settings.clone() {
            if st.stop.load(Ordering::Relaxed) {
                break 'outer;
            }
            if let (Some(t), Some(sw)) = (s_turbo, turbo.switch.as_mut()) {
                if sw.now() != Some(t) {
                    say(&format!("switching turbo {}", t.as_str()));
                }
                sw.set(t)?;
            }
            // CPUs come and go with SMT, the clock with turbo: read the machine again.
            st.info = machine::discover(&sys)?;
            st.cpus = rechoose_cpus(&st.info, args.cpus.as_deref())?;
            st.facts = Facts::default();
            let name = config_name(s_smt, s_turbo);
            say(&format!("configuration {name}: CPUs {}", st.cpus));
            let recs = measure(&mut st, args, &only)?;
            results.extend(recs.into_iter().map(|mut r| {
                if let Some(s) = s_smt {
                    r = r.with_param("smt", s.as_str());
                }
                if let Some(t) = s_turbo {
                    r = r.with_param("turbo", t.as_str());
                }
                r
            }));
            configurations.push(serde_json::json!({
                "smt": s_smt.map(|s| s.as_str()),
                "turbo": s_turbo.map(|t| t.as_str()),
                "cpus": st.cpus.to_string(),
                "cores": simd::smt_shape(&st.info, &st.cpus).0,
                "logical": st.cpus.len(),
            }));
        }
    }
    // Put the machine back now (Drop would too), so a failure is reported.
    for sw in [smt.switch.as_mut(), turbo.switch.as_mut()]
        .into_iter()
        .flatten()
    {
        sw.restore()?;
        say(&format!(
            "{} restored as found ({})",
            sw.knob().name(),
            sw.original_text()
        ));
    }
    let text = crate::report::compute_text::render_simd_configurations(&results);
    if args.json {
        super::print_json(&serde_json::json!({
            "command": "simd",
            "profile": args.profile.as_str(),
            "cpus": cpus_found,
            "configurations": configurations,
            // The state each changed switch was put back to.
            "restored": {
                "smt": smt.switch.as_ref().and(smt.found).map(|s| s.as_str()),
                "turbo": turbo.switch.as_ref().and(turbo.found).map(|s| s.as_str()),
            },
            "results": results,
        }))?;
    } else {
        print!("{text}");
    }
    Ok(if st.stop.load(Ordering::Relaxed) {
        130
    } else {
        0
    })
}

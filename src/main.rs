//! cpuscope command line: parses arguments and dispatches to `cpuscope::app`.

use clap::{CommandFactory, Parser, Subcommand};
use cpuscope::app::{self, Context};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "cpuscope",
    version = cpuscope::base::build::version_line(),
    long_version = cpuscope::base::build::version_long(),
    about = "What a CPU really does, measured, and machines side by side",
    long_about = "cpuscope characterises a Linux machine (topology, caches, NUMA, SIMD, \
frequencies, kernel knobs), measures what the hardware does (frequency, latency, bandwidth, \
core-to-core, counters), stores every run and compares runs.\n\n\
Examples:\n  cpuscope info\n  cpuscope run --profile quick\n  cpuscope runs"
)]
struct Cli {
    /// Filesystem root to read sys/ and proc/ from (a recorded machine: a directory or a
    /// `cpuscope record` .tar.gz; or / for this one).
    #[arg(
        long,
        global = true,
        default_value = "/",
        value_name = "DIR|FILE.tar.gz"
    )]
    sysroot: PathBuf,
    #[command(flatten)]
    store: app::args::StoreArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// What this machine is: identity, topology, caches, NUMA, ISA, frequency, knobs, devices.
    ///
    /// Example: cpuscope info --json
    Info(app::info::InfoArgs),
    /// Record what --sysroot reads (sysfs/procfs trees, knobs, DMI, NICs) into one .tar.gz with a manifest.
    ///
    /// Example: cpuscope record node07.tar.gz && cpuscope info --sysroot node07.tar.gz
    Record(app::record::RecordArgs),
    /// Where a process's memory lives, per NUMA node (like numa-maps-summary.pl).
    ///
    /// Example: cpuscope numa-maps $(pidof mysqld)
    NumaMaps(app::numa_maps::NumaMapsArgs),
    /// Characterise this machine, store the run, print the summary, write the HTML report.
    ///
    /// Example: cpuscope run --profile quick
    Run(app::run::RunArgs),
    /// Load-to-use latency against working-set size (pointer chase), cache plateaus.
    ///
    /// Example: cpuscope latency --sizes 4K-256M --pages 2m,4k
    Latency(app::latency::LatencyArgs),
    /// Memory bandwidth (STREAM read/write/copy/triad), thread sweep, per cache level.
    ///
    /// Example: cpuscope bandwidth --threads 1,2 --kernels triad,copy --size 512M
    Bandwidth(app::bandwidth::BandwidthArgs),
    /// NUMA latency and bandwidth matrices (CPUs of node i, memory of node j, interleave) vs declared distances.
    ///
    /// Example: cpuscope numa-matrix --json
    NumaMatrix(app::numa_matrix::NumaMatrixArgs),
    /// DRAM latency of one chasing thread while k other threads stream (latency vs bandwidth).
    ///
    /// Example: cpuscope loaded-latency --streams 0-3
    LoadedLatency(app::loaded_latency::LoadedLatencyArgs),
    /// SIMD × threads × SMT: ChaCha20 in every SIMD form at 1 thread, per core, all CPUs; peak FLOPs.
    ///
    /// Example: cpuscope simd --profile quick
    Simd(app::simd::SimdArgs),
    /// Rate score: N copies of a workload at once (SPEC-rate style), jobs/hour and efficiency.
    ///
    /// Example: cpuscope rate --copies 1,4 bc-pow
    Rate(app::rate::RateArgs),
    /// The same workload on CPU sets chosen from the topology; memory local/remote.
    ///
    /// Example: cpuscope placement --plan-only
    Placement(app::placement::PlacementArgs),
    /// Core-to-core latency matrix, latency groups vs the declared topology; or one pair.
    ///
    /// Example: cpuscope c2c --pair 0,17
    C2c(app::c2c::C2cArgs),
    /// Synchronisation costs: PAUSE, atomic increments, spin lock vs futex mutex, false sharing.
    ///
    /// Example: cpuscope sync --json
    Sync(app::sync::SyncArgs),
    /// Network softirqs (NET_RX/NET_TX) and softirq CPU time per node and CPU over a short sample.
    ///
    /// Example: cpuscope softirq --seconds 2
    Softirq(app::softirq::SoftirqArgs),
    /// Count hardware and software events of a command or process (like perf stat).
    ///
    /// Example: cpuscope stat -- bc -l <<< '7^99999'
    Stat(app::stat::StatArgs),
    /// Your command under each placement the topology offers, interleaved, ranked with intervals.
    ///
    /// Example: cpuscope tune -- bash -c 'echo "7^99999" | bc'
    Tune(app::tune::TuneArgs),
    /// List the stored runs.
    ///
    /// Example: cpuscope runs --json
    Runs(app::store_cmds::RunsArgs),
    /// Show one stored run: its environment and every result.
    ///
    /// Example: cpuscope show latest
    Show(app::store_cmds::ShowArgs),
    /// Write a stored run as a JSON document (cpuscope.run/1), or as OpenMetrics gauges.
    ///
    /// Example: cpuscope export latest -o run.json
    Export(app::store_cmds::ExportArgs),
    /// Store runs exported elsewhere; all files are checked before any is stored.
    ///
    /// Example: cpuscope import run1.json run2.json
    Import(app::store_cmds::ImportArgs),
    /// Runs side by side: relative figures, noise flags, geometric mean, environment differences.
    ///
    /// Example: cpuscope compare RUN1 RUN2 --baseline RUN1 --html cmp.html
    Compare(app::compare::CompareArgs),
    /// Many hosts' latest runs as one fleet: groups, distributions, outliers explained, differences.
    ///
    /// Example: cpuscope --store postgres://cpuscope@db/fleet fleet --tag batch=2026-11 --html fleet.html
    Fleet(app::fleet::FleetArgs),
    /// The published reference figures (seed articles) that cpuscope shows beside its own.
    ///
    /// Example: cpuscope published seed000-bc
    Published(app::compare::PublishedArgs),
    /// The core knowledge base: every core microarchitecture cpuscope knows, with its sources.
    ///
    /// Example: cpuscope uarch zen5
    Uarch(app::uarch::UarchArgs),
    /// Delete a stored run and its results.
    ///
    /// Example: cpuscope delete 20261122T010203Z-myhost-1a2b
    Delete(app::store_cmds::DeleteArgs),
    /// Shell completions (bash, zsh, fish, elvish, powershell) on stdout; the packages install them.
    ///
    /// Example: cpuscope completions bash > ~/.local/share/bash-completion/completions/cpuscope
    Completions(CompletionsArgs),
    /// A man page in roff on stdout: cpuscope(1), or cpuscope-NAME(1) of one sub-command.
    ///
    /// Example: cpuscope manpage run | man -l -
    #[command(hide = true)]
    Manpage(ManpageArgs),
}

#[derive(clap::Args, Debug)]
struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

#[derive(clap::Args, Debug)]
struct ManpageArgs {
    /// The sub-command (run, info, …); none for cpuscope(1) itself.
    name: Option<String>,
    /// List the page names (cpuscope, cpuscope-info, …), one per line.
    #[arg(long, conflicts_with = "name")]
    list: bool,
}

/// The command line as clap sees it once built (global options on every
/// sub-command), without the hidden commands: what completions and man
/// pages describe.
fn described() -> clap::Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd
}

fn completions(a: &CompletionsArgs) -> anyhow::Result<i32> {
    let mut cmd = described();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "cpuscope", &mut buf);
    cpuscope::base::output::stdout(&String::from_utf8_lossy(&buf))?;
    Ok(0)
}

/// Man pages come from the clap definitions above, never written twice:
/// `scripts/package.sh` renders every page with this command.
fn manpage(a: &ManpageArgs) -> anyhow::Result<i32> {
    let cmd = described();
    // clap's own `help` sub-command is `--help`: no page of its own.
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .collect();
    if a.list {
        let mut text = String::from("cpuscope\n");
        for c in &subs {
            text.push_str(&format!("cpuscope-{}\n", c.get_name()));
        }
        cpuscope::base::output::stdout(&text)?;
        return Ok(0);
    }
    let page = match &a.name {
        None => cmd.clone(),
        Some(n) => match subs.iter().find(|c| c.get_name() == n) {
            Some(c) => (*c).clone().display_name(format!("cpuscope-{n}")),
            None => anyhow::bail!(
                "no sub-command '{}' (cpuscope manpage --list names the pages)",
                cpuscope::base::fmt::for_terminal(n)
            ),
        },
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(page)
        .source(format!("cpuscope {}", env!("CARGO_PKG_VERSION")))
        .manual("cpuscope manual")
        .render(&mut buf)?;
    cpuscope::base::output::stdout(&String::from_utf8_lossy(&buf))?;
    Ok(0)
}

/// A bad command line as one line on stderr (clap's message, its tips, and
/// where the help is), exit 2; `--help` and `--version` print as usual.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let mut parts: Vec<String> = Vec::new();
    for l in text.lines() {
        let l = l.trim();
        if l.starts_with("Usage:") || l.starts_with("For more information") {
            break;
        }
        if l.is_empty() {
            continue;
        }
        let l = l.strip_prefix("error: ").unwrap_or(l);
        if l.starts_with("tip:") {
            parts.push(format!("({l})"));
        } else {
            parts.push(l.to_string());
        }
    }
    let cmd = Cli::command();
    let sub = std::env::args_os()
        .skip(1)
        .filter_map(|a| a.into_string().ok())
        .find(|a| !a.starts_with('-') && cmd.find_subcommand(a).is_some());
    let help = match sub {
        Some(s) => format!("cpuscope {s} --help"),
        None => "cpuscope --help".into(),
    };
    cpuscope::base::output::err_line(&format!(
        "cpuscope: error: {} (see {help})",
        parts.join(" ")
    ));
    std::process::exit(2);
}

fn main() {
    // SIGPIPE stays ignored (Rust's default): a measuring command whose
    // output pipe closes finishes and stores its run; the closed pipe then
    // ends the command quietly (below), as SIGPIPE ends other Unix tools.
    // Children get the default disposition back (std::process::Command).
    report_panics_in_one_line();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => usage_error(e),
    };
    // cpuscope keeps store paths as text: a name that is not UTF-8 is a
    // usage error of one line, not a panic.
    let store = match cli.store.location() {
        Ok(s) => s,
        Err(s) => {
            cpuscope::base::output::err_line(&format!(
                "cpuscope: error: --store {s:?} is not valid UTF-8; give a UTF-8 path \
                 (a link with a UTF-8 name to the store will do)"
            ));
            std::process::exit(2);
        }
    };
    let ctx = Context {
        sysroot: cli.sysroot,
        store,
    };
    let result = dispatch(&ctx, &cli.command);
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) if e.is::<cpuscope::base::output::ClosedPipe>() => {
            // 128 + SIGPIPE, what a shell reports for a tool SIGPIPE ended.
            std::process::exit(141);
        }
        Err(e) => {
            // One line, with anything from outside (paths, names) escaped.
            let msg = format!("{e:#}").replace('\n', " ");
            let msg = cpuscope::base::fmt::for_terminal(&msg);
            cpuscope::base::output::err_line(&format!("cpuscope: error: {msg}"));
            std::process::exit(1);
        }
    }
}

/// A panic as one line on stderr (its message and where), after putting
/// back any machine switch.
fn report_panics_in_one_line() {
    std::panic::set_hook(Box::new(|p| {
        let msg = p
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        let loc = p.location().map(|l| format!(" at {l}")).unwrap_or_default();
        cpuscope::base::output::err_line(&format!(
            "cpuscope: internal error: {}{loc}",
            msg.replace('\n', " ")
        ));
        // Put back any machine switch (simd --smt/--turbo) before unwinding,
        // in case nothing unwinds to the guard that holds it.
        cpuscope::placement::machine_state::restore_registered();
    }));
}

/// Run the sub-command; its exit code, or the error to print.
fn dispatch(ctx: &Context, command: &Command) -> anyhow::Result<i32> {
    match command {
        Command::Info(a) => app::info::run(ctx, a),
        Command::Record(a) => app::record::run(ctx, a),
        Command::NumaMaps(a) => app::numa_maps::run(ctx, a),
        Command::Run(a) => app::run::run(ctx, a),
        Command::Simd(a) => app::simd::run(ctx, a),
        Command::Rate(a) => app::rate::run(ctx, a),
        Command::Placement(a) => app::placement::run(ctx, a),
        Command::C2c(a) => app::c2c::run(ctx, a),
        Command::Sync(a) => app::sync::run(ctx, a),
        Command::Softirq(a) => app::softirq::run(ctx, a),
        Command::Stat(a) => app::stat::run(ctx, a),
        Command::Latency(a) => app::latency::run(ctx, a),
        Command::Bandwidth(a) => app::bandwidth::run(ctx, a),
        Command::NumaMatrix(a) => app::numa_matrix::run(ctx, a),
        Command::LoadedLatency(a) => app::loaded_latency::run(ctx, a),
        Command::Tune(a) => app::tune::run(ctx, a),
        Command::Runs(a) => app::store_cmds::runs(ctx, a),
        Command::Show(a) => app::store_cmds::show(ctx, a),
        Command::Export(a) => app::store_cmds::export(ctx, a),
        Command::Import(a) => app::store_cmds::import(ctx, a),
        Command::Delete(a) => app::store_cmds::delete(ctx, a),
        Command::Compare(a) => app::compare::run(ctx, a),
        Command::Fleet(a) => app::fleet::run(ctx, a),
        Command::Published(a) => app::compare::published(ctx, a),
        Command::Uarch(a) => app::uarch::run(ctx, a),
        Command::Completions(a) => completions(a),
        Command::Manpage(a) => manpage(a),
    }
}

//! One session for every measuring command: `run` and the stand-alone
//! `latency`, `bandwidth`, `numa-matrix`, `loaded-latency`, `c2c`, `sync`,
//! `simd`, `rate` and `placement`. A session refuses a recorded machine
//! (`--sysroot`), reads the machine once, chooses the CPUs by one rule for
//! `--cpus`, installs the Ctrl-C stop flag, holds the facts later
//! experiments use (the measured clock), shows progress, runs registered
//! experiments by name (with a command's typed parameters) and keeps every
//! record they hand back (and stores it at once, for `run`). It ends as one
//! `cpuscope.run/1` document: `run` stores it, the stand-alone commands
//! print it with `--json` (plus their own keys) or render its records.

use super::args::MeasureArgs;
use super::Context;
use crate::base::CpuSet;
use crate::base::Sysroot;
use crate::experiments;
use crate::experiments::coherence::sync;
use crate::experiments::experiment::{ExpCtx, Facts, Profile, WithParams};
use crate::machine::{self, MachineInfo};
use crate::placement::machine_state::{self, Knob, Privilege, Setting, Want};
use crate::results::schema::{new_run_id, now_rfc3339, Environment, ResultRecord, Run, RunStatus};
use crate::results::store::{local_hostname, Store};
use anyhow::{bail, Result};
use indicatif::ProgressBar;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The whole of a memory command (`latency`, `bandwidth`, `numa-matrix`,
/// `loaded-latency`): a session on `cpus`, the plan `plan_with` makes from
/// the machine, the CPUs and the profile (the experiment's parameters), the
/// registered experiment `exp` run with it, the records as the memory report.
pub fn memory_command<E: WithParams>(
    ctx: &Context,
    command: &'static str,
    cpus: Option<&str>,
    m: &MeasureArgs,
    exp: &E,
    plan_with: impl FnOnce(&MachineInfo, &CpuSet, Profile) -> Result<E::Params>,
) -> Result<i32> {
    let mut s = Session::open(ctx, command, cpus, m.profile, m.quiet())?;
    let mut plan = plan_with(&s.machine, &s.cpus, m.profile)?;
    s.measure_with(exp, &mut plan)?;
    s.output(
        m.json(),
        json!({}),
        crate::experiments::memory::text::render,
    )
}

/// The filesystem root, when it is this machine's: a command that measures
/// refuses a recorded tree.
pub fn live_sysroot(ctx: &Context, command: &str) -> Result<Sysroot> {
    let sys = ctx.sysroot()?;
    if !sys.is_live() {
        bail!(
            "{command} measures this machine: --sysroot only applies to `info` and `run --list` (got '{}')",
            sys.root().display()
        );
    }
    Ok(sys)
}

/// The CPUs a command may use, by one rule: every usable CPU (the snapshot's
/// usable list, else the online one, else this process's affinity), or
/// `--cpus`, which may name usable CPUs and the isolated ones this process
/// may pin to (`CpuLists::pinnable`); a one-line error for any other.
pub fn choose_cpus(machine: &MachineInfo, arg: Option<&str>) -> Result<CpuSet> {
    let usable = if !machine.cpus.usable.is_empty() {
        machine.cpus.usable.clone()
    } else if !machine.cpus.online.is_empty() {
        machine.cpus.online.clone()
    } else {
        crate::placement::current_affinity()?
    };
    let Some(list) = arg else {
        if usable.is_empty() {
            bail!("no usable CPU found (the topology could not be read)");
        }
        return Ok(usable);
    };
    let want = CpuSet::parse(list).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
    if want.is_empty() {
        bail!("--cpus '{list}' names no CPU");
    }
    let outside = want.difference(&usable.union(&machine.cpus.pinnable()));
    if !outside.is_empty() {
        bail!("--cpus: CPU(s) {outside} are not usable by this process (usable: {usable})");
    }
    Ok(want)
}

/// Progress: a bar on a terminal when the time is known (`run`), plain
/// lines otherwise, nothing when quiet.
enum Progress {
    Bar(ProgressBar),
    Lines,
    Quiet,
}

impl Progress {
    fn step(&self, who: &str, msg: &str, done_secs: f64) {
        match self {
            Progress::Bar(pb) => {
                pb.set_position((done_secs * 10.0) as u64);
                pb.set_message(format!("{who}: {msg}"));
            }
            Progress::Lines => errln!("cpuscope: {who}: {msg}"),
            Progress::Quiet => {}
        }
    }

    fn finish(&self) {
        if let Progress::Bar(pb) = self {
            pb.finish_and_clear();
        }
    }

    /// A warning line on stderr (above the bar, if one is drawn), quiet or not.
    fn warn(&self, msg: &str) {
        let line = format!("cpuscope: warning: {}", msg.replace('\n', " "));
        match self {
            Progress::Bar(pb) => pb.println(line),
            _ => crate::base::output::err_line(&line),
        }
    }
}

/// What one measuring command works with, from start to output.
pub struct Session {
    command: &'static str,
    sys: Sysroot,
    /// The machine (read again after a machine switch, see [`Session::configurations`]).
    pub machine: MachineInfo,
    /// The CPUs the command may use ([`choose_cpus`]).
    pub cpus: CpuSet,
    cpus_arg: Option<String>,
    pub profile: Profile,
    stop: Arc<AtomicBool>,
    facts: Facts,
    progress: Progress,
    done_secs: f64,
    /// The document: its results are every record kept so far.
    run: Run,
    store: Option<Box<dyn Store>>,
    /// Why the store stopped taking the run (it is then kept in memory and
    /// saved to a fallback file at the end).
    store_failed: Option<String>,
    /// Where the run is stored (kept when the store fails).
    store_location: Option<String>,
    /// The directory holding the SQLite store (for its free space).
    store_dir: Option<std::path::PathBuf>,
    /// Parameters added to every record kept (the machine configuration).
    record_params: Vec<(&'static str, String)>,
    t0: Instant,
    /// The machine's and this process's CPU time when the session opened
    /// (for the run's [`Activity`](crate::results::schema::Activity)).
    cpu_start: Option<machine::activity::CpuTimes>,
    /// This process's cgroup: quota throttling per figure, its other
    /// processes' CPU time over the run.
    cgroup: crate::results::disturbance::CgroupWatch,
}

impl Session {
    /// Open a session for `command` on this machine, with `--cpus` (or
    /// every usable CPU) and `profile`; `quiet`: no progress lines.
    pub fn open(
        ctx: &Context,
        command: &'static str,
        cpus: Option<&str>,
        profile: Profile,
        quiet: bool,
    ) -> Result<Session> {
        let sys = live_sysroot(ctx, command)?;
        let machine = machine::discover(&sys)?;
        let chosen = choose_cpus(&machine, cpus)?;
        // Before the stop flag: a second Ctrl-C exits at once, and machine
        // switches (simd --smt/--turbo) must be written back before that.
        machine_state::install_signal_restore()?;
        // First Ctrl-C: stop between samples and keep what finished. Second: exit now.
        let stop = crate::base::stop::install()?;
        let found = local_hostname().unwrap_or_else(|| "unknown".into());
        // Recorded as `import` takes it (the same host rule).
        let host = crate::base::fmt::clean_host(&found);
        let options = json!({"profile": profile.as_str(), "cpus": chosen.to_string()});
        let cgroup = crate::results::disturbance::CgroupWatch::new(
            &sys,
            &machine.limits,
            machine.cpus.usable.len(),
        );
        let mut run = Run::new(
            &host,
            profile.as_str(),
            serde_json::to_value(&machine)?,
            Environment::from_machine(&machine, &sys),
            options,
            Vec::new(),
        );
        if host != found {
            run.environment.notes.push(format!(
                "the host name '{}' is recorded as '{host}' (a host name is 1 to 64 bytes of printable text)",
                crate::base::fmt::quote_short(&found, 80)
            ));
        }
        Ok(Session {
            command,
            machine,
            cpus: chosen,
            cpus_arg: cpus.map(str::to_string),
            profile,
            stop,
            facts: Facts::default(),
            progress: if quiet {
                Progress::Quiet
            } else {
                Progress::Lines
            },
            done_secs: 0.0,
            run,
            store: None,
            store_failed: None,
            store_location: None,
            store_dir: ctx
                .store_files()
                .first()
                .and_then(|p| p.parent().map(|d| d.to_path_buf())),
            record_params: Vec::new(),
            cpu_start: machine::activity::read(&sys),
            cgroup,
            t0: Instant::now(),
            sys,
        })
    }

    /// Whether Ctrl-C (or SIGTERM) came.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The flag Ctrl-C sets.
    pub fn stop_flag(&self) -> &AtomicBool {
        &self.stop
    }

    /// A progress line of the command.
    pub fn say(&self, msg: &str) {
        self.progress.step(self.command, msg, self.done_secs);
    }

    /// A progress line of one experiment.
    pub fn step(&self, who: &str, msg: &str) {
        self.progress.step(who, msg, self.done_secs);
    }

    /// Show a bar for `total_secs` of estimated work, where standard error
    /// takes one (a terminal with cursor control, wide enough:
    /// `progress::bar`); plain lines otherwise.
    pub fn show_bar(&mut self, total_secs: f64) {
        if matches!(self.progress, Progress::Lines) {
            if let Some(pb) = super::progress::bar((total_secs * 10.0).ceil() as u64) {
                pb.enable_steady_tick(Duration::from_millis(200));
                self.progress = Progress::Bar(pb);
            }
        }
    }

    /// Count `secs` of estimated work as done.
    pub fn advance(&mut self, secs: f64) {
        self.done_secs += secs;
    }

    /// Add an option to the document's `options`.
    pub fn set_option(&mut self, key: &str, value: Value) {
        if let Value::Object(m) = &mut self.run.options {
            m.insert(key.into(), value);
        }
    }

    /// Record the run under the host name `label` (`run --host-label`)
    /// instead of this machine's; the run id takes it too. Before
    /// [`Session::store_in`].
    pub fn set_host(&mut self, label: &str) -> Result<()> {
        validate_host_label(label)?;
        if self.store.is_some() {
            bail!("the host label is set before the run is stored");
        }
        self.run.host = label.to_string();
        self.run.id = new_run_id(chrono::Utc::now(), label);
        Ok(())
    }

    /// Tag the document (`run --tag`, `tune --tag`): each tag printable
    /// text of 1 to 64 characters, each once ([`crate::base::fmt::screen_tags`],
    /// which `import` applies too; each tag also checked when the command
    /// line is parsed). A refused list
    /// is one line naming the tag; the document then keeps the good tags,
    /// once each, so no bad tag is stored whatever the caller does.
    pub fn set_tags(&mut self, tags: Vec<String>) -> Result<()> {
        let (kept, refused) = crate::base::fmt::screen_tags(tags);
        self.run.tags = kept;
        match refused {
            Some(e) => bail!("{e}"),
            None => Ok(()),
        }
    }

    /// Open the store `--store` names and store the document in it from
    /// now on: begun now, each record at once (its own transaction),
    /// finished by [`Session::finish`]. A store that fails here fails the
    /// command before anything is measured.
    pub fn store_in(&mut self, ctx: &Context) -> Result<()> {
        let free = || {
            free_text(self.store_dir.as_deref())
                .map(|f| format!(" ({f})"))
                .unwrap_or_default()
        };
        let mut store = match crate::results::open_store(ctx.store.as_deref()) {
            Ok(s) => s,
            Err(e) => bail!("{e:#}{}; nothing was measured", free()),
        };
        if let Err(e) = store.begin_run(&self.run) {
            bail!("{e:#}{}; nothing was measured", free());
        }
        self.store_location = Some(store.location());
        self.store = Some(store);
        Ok(())
    }

    /// A note on the environment of the document.
    pub fn note(&mut self, note: String) {
        self.run.environment.notes.push(note);
    }

    /// Keep experiment `name`'s estimated and actual wall time.
    pub fn timed(&mut self, name: &str, estimated_s: f64, actual_s: f64) {
        self.run
            .environment
            .timings
            .push(crate::results::schema::Timing {
                experiment: name.to_string(),
                estimated_s,
                actual_s,
            });
    }

    /// Every record kept so far.
    pub fn results(&self) -> &[ResultRecord] {
        &self.run.results
    }

    /// The single-core clock, GHz, when measured.
    pub fn ghz(&self) -> Option<f64> {
        self.facts.ghz_single
    }

    /// Run the registered experiment `name` with its defaults and keep what
    /// it hands back. Ctrl-C ends it early without an error: what finished
    /// is kept.
    pub fn measure(&mut self, name: &str) -> Result<()> {
        let e = experiments::registry::by_name(name)?;
        self.exec(e.name(), true, |ctx, out| e.run(ctx, out))
    }

    /// Run experiment `e` with the command's parameters `p` (its own type)
    /// and keep what it hands back, as [`Session::measure`]. `e` must be
    /// registered (its records are rendered through the registry).
    pub fn measure_with<E: WithParams>(&mut self, e: &E, p: &mut E::Params) -> Result<()> {
        let name = experiments::registry::by_name(e.name())?.name();
        self.exec(name, true, |ctx, out| e.run_with(ctx, p, out))
    }

    /// Run the registered experiment `name` for the facts it leaves (the
    /// frequency experiment's clock), dropping its records.
    pub fn measure_facts(&mut self, name: &str) -> Result<()> {
        let e = experiments::registry::by_name(name)?;
        self.exec(e.name(), false, |ctx, out| e.run(ctx, out))
    }

    /// Run `measure` (an experiment's `run` or `run_with`) as `name`,
    /// keeping its records unless `keep` is false.
    fn exec(
        &mut self,
        name: &'static str,
        keep: bool,
        measure: impl FnOnce(&mut ExpCtx, &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()>,
    ) -> Result<()> {
        let (progress, done) = (&self.progress, self.done_secs);
        let mut step = |msg: &str| progress.step(name, msg, done);
        let mut ectx = ExpCtx {
            machine: &self.machine,
            cpus: self.cpus.clone(),
            profile: self.profile,
            stop: &self.stop,
            facts: &mut self.facts,
            step: &mut step,
        };
        let (run, store, tags) = (&mut self.run, &mut self.store, &self.record_params);
        let failed = &mut self.store_failed;
        let watch = &mut self.cgroup;
        watch.begin();
        let mut sink = |mut rec: ResultRecord| -> Result<()> {
            if !keep {
                return Ok(());
            }
            for (k, v) in tags {
                rec = rec.with_param(k, v.as_str());
            }
            // CPU-quota throttling while it was measured marks it disturbed.
            rec = watch.mark(rec);
            if let Some(s) = store.as_mut() {
                // A store that cannot take a record (disk full, store gone)
                // never costs the measurement: the run goes on in memory
                // and is saved to a file at the end (Session::finish).
                if let Err(e) = s.add_result(&run.id, &rec) {
                    let why = format!("{e:#}");
                    progress.warn(&format!(
                        "store '{}' stopped taking run {} ({why}): the run goes on in memory \
                         and is saved to a file at the end",
                        s.location(),
                        run.id
                    ));
                    *failed = Some(why);
                    *store = None;
                }
            }
            run.results.push(rec);
            Ok(())
        };
        match measure(&mut ectx, &mut sink) {
            // Ctrl-C: what finished is kept, the command exits 130.
            Err(_) if self.stop.load(Ordering::Relaxed) => Ok(()),
            other => other,
        }
    }

    /// Measure the single-core clock now on `cpu` (the add chain, briefly)
    /// for the experiments that turn ns into cycles, unless `skip`; the
    /// line that says which clock the cycles use.
    pub fn clock(&mut self, cpu: usize, skip: bool) -> String {
        if skip {
            return "cycles not available: clock not measured (--no-clock)".into();
        }
        match sync::measure_clock(cpu, &sync::policy(Profile::Quick), &self.stop) {
            Ok(g) => {
                self.facts.ghz_single = Some(g);
                format!("clock {g:.2} GHz on CPU {cpu} (dependent add chain, measured now)")
            }
            Err(e) => format!("cycles not available: clock measurement failed ({e:#})"),
        }
    }

    /// Measure under each SMT × turbo configuration asked (SMT outer, turbo
    /// inner; `as-is` for both: once, as the machine is). Both switches are
    /// checked before anything changes; before each configuration the
    /// machine is read again (CPUs come and go with SMT, the clock with
    /// turbo), the CPUs chosen again (`--cpus` ∩ usable now), the facts
    /// forgotten, and the records tagged `smt=`/`turbo=`. The state found is
    /// put back at the end (and on error, Ctrl-C or panic, by the guards).
    /// Returns the JSON keys `configurations` and `restored`, or `None` when
    /// nothing was switched.
    pub fn configurations(
        &mut self,
        smt: Want,
        turbo: Want,
        mut measure: impl FnMut(&mut Session) -> Result<()>,
    ) -> Result<Option<Value>> {
        if smt == Want::AsIs && turbo == Want::AsIs {
            measure(self)?;
            return Ok(None);
        }
        let privilege = Privilege::current();
        let mut smt = machine_state::plan(&self.sys, Knob::Smt, smt, privilege)?;
        let mut turbo = machine_state::plan(&self.sys, Knob::Turbo, turbo, privilege)?;
        let mut configurations = Vec::new();
        'outer: for s_smt in smt.settings.clone() {
            if let (Some(s), Some(sw)) = (s_smt, smt.switch.as_mut()) {
                if sw.now() != Some(s) {
                    self.say(&format!("switching SMT {}", s.as_str()));
                }
                sw.set(s)?;
            }
            for s_turbo in turbo.settings.clone() {
                if self.stopped() {
                    break 'outer;
                }
                if let (Some(t), Some(sw)) = (s_turbo, turbo.switch.as_mut()) {
                    if sw.now() != Some(t) {
                        self.say(&format!("switching turbo {}", t.as_str()));
                    }
                    sw.set(t)?;
                }
                self.reread()?;
                self.record_params = configuration_params(s_smt, s_turbo);
                let name: Vec<String> = self
                    .record_params
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                self.say(&format!(
                    "configuration {}: CPUs {}",
                    name.join(", "),
                    self.cpus
                ));
                measure(self)?;
                configurations.push(json!({
                    "smt": s_smt.map(|s| s.as_str()),
                    "turbo": s_turbo.map(|t| t.as_str()),
                    "cpus": self.cpus.to_string(),
                    "cores": experiments::experiment::one_cpu_per_core(&self.machine, &self.cpus).len(),
                    "logical": self.cpus.len(),
                }));
            }
        }
        self.record_params.clear();
        // Put the machine back now (Drop would too), so a failure is reported.
        for sw in [smt.switch.as_mut(), turbo.switch.as_mut()]
            .into_iter()
            .flatten()
        {
            sw.restore()?;
            self.say(&format!(
                "{} restored as found ({})",
                sw.knob().name(),
                sw.original_text()
            ));
        }
        Ok(Some(json!({
            "configurations": configurations,
            // The state each changed switch was put back to.
            "restored": {
                "smt": smt.switch.as_ref().and(smt.found).map(|s| s.as_str()),
                "turbo": turbo.switch.as_ref().and(turbo.found).map(|s| s.as_str()),
            },
        })))
    }

    /// Read the machine again after a switch: the CPUs are `--cpus` ∩ the
    /// usable ones now (siblings of an SMT-off machine drop out), or every
    /// usable CPU; the facts measured before no longer hold.
    fn reread(&mut self) -> Result<()> {
        self.machine = machine::discover(&self.sys)?;
        let all = choose_cpus(&self.machine, None)?;
        self.cpus = match &self.cpus_arg {
            None => all,
            Some(list) => {
                let want = CpuSet::parse(list).map_err(anyhow::Error::msg)?;
                let left = want.intersection(&all);
                if left.is_empty() {
                    bail!("--cpus '{list}': none of these CPUs is online in this configuration (online and usable: {all})");
                }
                left
            }
        };
        self.facts = Facts::default();
        Ok(())
    }

    /// Close the document: load at the end, time measured, complete or
    /// partial (Ctrl-C), finished now; the store closes it too.
    pub fn finish(mut self) -> Result<Finished> {
        self.progress.finish();
        let interrupted = self.stopped();
        let env = &mut self.run.environment;
        env.load_end = Some(crate::results::schema::Load::read(&self.sys));
        let wall = self.t0.elapsed().as_secs_f64();
        env.notes.push(format!("measured for {wall:.1} s"));
        // SAFETY: sysconf has no memory effects.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let end = machine::activity::read(&self.sys);
        env.activity = match (self.cpu_start, end) {
            (Some(a), Some(b)) if hz > 0 => crate::results::schema::Activity::between(
                &a,
                &b,
                wall,
                self.machine.cpus.online.len(),
                hz as f64,
            ),
            _ => None,
        };
        // The cgroup's other processes count as other programs.
        if let (Some(a), Some(st), Some(en)) = (env.activity.take(), self.cpu_start, end) {
            let own = en.own.saturating_sub(st.own) as f64 / hz.max(1) as f64;
            let usable = self.machine.cpus.usable.len().max(1);
            env.activity = Some(match self.cgroup.activity(own, wall, usable) {
                Some(c) => a.with_cgroup(c),
                None => a,
            });
        }
        if let Some(a) = &env.activity {
            if a.busy {
                env.notes.push(format!(
                    "busy machine while measuring: {}; figures are disturbed",
                    a.summary()
                ));
            }
        }
        let status = if interrupted {
            env.notes.push(format!(
                "interrupted ({}): kept what finished",
                crate::base::stop::cause()
            ));
            RunStatus::Partial
        } else {
            RunStatus::Complete
        };
        let finished = now_rfc3339();
        if let Some(s) = self.store.as_mut() {
            if let Err(e) = s.finish_run(&self.run.id, status, &finished, &self.run.environment) {
                self.store_failed = Some(format!("{e:#}"));
            }
        }
        self.run.status = status;
        self.run.finished_at = Some(finished);
        let lost = self.store_failed.take().map(|why| {
            self.store = None;
            let location = self.store_location.clone().unwrap_or_default();
            save_fallback(&self.run, &location, &why, self.store_dir.as_deref())
        });
        Ok(Finished {
            run: self.run,
            store: self.store,
            interrupted,
            lost,
        })
    }

    /// The `command` and `cpus` (chosen at the start) keys that `simd`,
    /// `rate` and `placement` printed at the top of their JSON.
    pub fn command_keys(&self) -> Value {
        json!({"command": self.command, "cpus": self.run.options["cpus"]})
    }

    /// Finish and print a stand-alone command's result: with `json` the
    /// `cpuscope.run/1` document (`options.command` names the command) with
    /// the keys the command printed before at the top (`extra`, an object),
    /// else `text` of the records (and a line when Ctrl-C cut it short).
    /// Exit status: 130 after Ctrl-C, else 0.
    pub fn output(
        mut self,
        json: bool,
        extra: Value,
        text: impl FnOnce(&[ResultRecord]) -> String,
    ) -> Result<i32> {
        self.set_option("command", json!(self.command));
        let f = self.finish()?;
        if json {
            let mut doc = serde_json::to_value(&f.run)?;
            // The document's own fields come first: `schema` stays cpuscope.run/1.
            doc = merge(extra, doc);
            super::print_json(&doc)?;
        } else {
            out!("{}", text(&f.run.results));
            if f.interrupted {
                outln!("interrupted: the figures above are what finished");
            }
        }
        Ok(f.exit_code())
    }
}

/// Save a run the store could not take to `cpuscope-RUN.json` in `$TMPDIR`,
/// else `/tmp`, else the current directory (`base::tempdir`), as `export`
/// writes it, so that `import` takes it back; the line that tells the user
/// what happened and where the run is (or, when no place takes it, every
/// place tried and why).
fn save_fallback(
    run: &Run,
    location: &str,
    why: &str,
    store_dir: Option<&std::path::Path>,
) -> String {
    let free = free_text(store_dir)
        .map(|f| format!("; {f}"))
        .unwrap_or_default();
    let head = format!(
        "store '{location}' could not take run {} ({why}{free})",
        run.id
    );
    let text = match crate::results::document::export_text(run) {
        Ok(t) => t,
        Err(e) => return format!("{head}, and the run could not be serialised: {e:#}"),
    };
    let name = format!("cpuscope-{}.json", run.id);
    let saved = crate::base::tempdir::first_usable(true, |dir| {
        let p = dir.join(&name);
        crate::base::output::Output::create_new(&p, text.as_bytes())
            // A relative TMPDIR or `.`: the path shown works from anywhere.
            .map(|()| std::path::absolute(&p).unwrap_or(p))
            .map_err(|e| format!("{e:#}"))
    });
    match saved {
        Ok(p) => format!(
            "{head}: the whole run is saved in {p}; once the store is fixed: cpuscope delete {id} (its partial copy, if any) && cpuscope import {p}",
            p = crate::base::fmt::for_terminal(&p.display().to_string()),
            id = run.id
        ),
        Err(tried) => format!(
            "{head}, and no fallback file could be written ({tried}): the figures printed are all that is left"
        ),
    }
}

/// "N KiB free on its file system" for the store's directory, when known.
fn free_text(store_dir: Option<&std::path::Path>) -> Option<String> {
    store_dir
        .and_then(free_kib)
        .map(|k| format!("{k} KiB free on its file system"))
}

/// Free space available to this user on the file system holding `dir`.
fn free_kib(dir: &std::path::Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a statvfs to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64 / 1024)
}

/// A host label (`run --host-label`): a host name as every stored run has
/// ([`crate::base::fmt::check_host`], which `import` applies), and more
/// narrowly 1 to 64 letters, digits, '.', '_' or '-'.
pub fn validate_host_label(label: &str) -> Result<()> {
    let ok = |c: char| c.is_ascii_alphanumeric() || ".-_".contains(c);
    if crate::base::fmt::check_host(label).is_err() || !label.chars().all(ok) {
        bail!(
            "--host-label '{}': give 1 to 64 letters, digits, '.', '_' or '-'",
            label.escape_debug()
        );
    }
    Ok(())
}

/// The keys of the objects `a` and `b` in one object (`b`'s win).
pub fn merge(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Object(mut a), Value::Object(b)) => {
            a.extend(b);
            Value::Object(a)
        }
        (a, _) => a,
    }
}

/// The record parameters of one machine configuration.
fn configuration_params(
    smt: Option<Setting>,
    turbo: Option<Setting>,
) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    if let Some(s) = smt {
        v.push(("smt", s.as_str().to_string()));
    }
    if let Some(t) = turbo {
        v.push(("turbo", t.as_str().to_string()));
    }
    v
}

/// A closed session.
pub struct Finished {
    /// The `cpuscope.run/1` document.
    pub run: Run,
    /// Where it was stored (`run`); None when the store failed (`lost`).
    pub store: Option<Box<dyn Store>>,
    pub interrupted: bool,
    /// The store could not take the run: what happened and where the run
    /// was saved instead, as one line for the user.
    pub lost: Option<String>,
}

impl Finished {
    /// 1 when the store could not take the run (it was saved to a file),
    /// 130 after Ctrl-C (what finished was kept), else 0.
    pub fn exit_code(&self) -> i32 {
        if self.lost.is_some() {
            1
        } else if self.interrupted {
            130
        } else {
            0
        }
    }

    /// Say on stderr that the store could not take the run, when so.
    pub fn report_lost(&self) {
        if let Some(l) = &self.lost {
            crate::base::output::err_line(&format!("cpuscope: error: {}", l.replace('\n', " ")));
        }
    }
}

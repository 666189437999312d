//! The run document (`cpuscope.run/1`): one characterisation run of one
//! machine, with every result it produced. This is what the store keeps,
//! what `export` writes and what `import` reads. See docs/schema-run.md.

use crate::base::Stats;
use anyhow::{bail, Context as _, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hasher};

/// Name and version of the run document.
pub const RUN_SCHEMA: &str = "cpuscope.run/1";
/// Name part of [`RUN_SCHEMA`].
pub const RUN_SCHEMA_NAME: &str = "cpuscope.run";
/// Version part of [`RUN_SCHEMA`]; readers accept documents up to this version.
pub const RUN_SCHEMA_VERSION: u32 = 1;

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still being written (or its writer died and nobody noticed yet; the
    /// store reports such a run as `Partial`).
    Running,
    /// Every planned experiment ran.
    Complete,
    /// Interrupted (signal, crash, Ctrl-C): keeps what finished.
    Partial,
    /// The run itself failed (an error stopped it).
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Result<RunStatus> {
        Ok(match s {
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "partial" => RunStatus::Partial,
            "failed" => RunStatus::Failed,
            other => bail!("unknown run status '{other}'"),
        })
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// System load at one moment (from /proc/loadavg). Every field is None when
/// it could not be read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// When it was read (RFC 3339, UTC).
    pub at: String,
    pub loadavg_1: Option<f64>,
    pub loadavg_5: Option<f64>,
    pub loadavg_15: Option<f64>,
    /// Runnable scheduling entities at that moment (4th field of /proc/loadavg, before '/').
    pub procs_running: Option<u64>,
    /// All scheduling entities (4th field of /proc/loadavg, after '/').
    pub procs_total: Option<u64>,
}

impl Load {
    /// Parse the text of /proc/loadavg (`0.52 0.58 0.59 2/467 12345`).
    pub fn parse(text: &str, at: &str) -> Load {
        let f: Vec<&str> = text.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok());
        let (run, total) = match f.get(3).and_then(|s| s.split_once('/')) {
            Some((a, b)) => (a.parse().ok(), b.parse().ok()),
            None => (None, None),
        };
        Load {
            at: at.to_string(),
            loadavg_1: num(0),
            loadavg_5: num(1),
            loadavg_15: num(2),
            procs_running: run,
            procs_total: total,
        }
    }

    /// One line: `0.52 / 0.58 / 0.59 (1/5/15 min), 2 runnable of 467 tasks, at …`.
    pub fn summary(&self) -> String {
        let f = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "?".into());
        let mut s =
            if self.loadavg_1.is_none() && self.loadavg_5.is_none() && self.loadavg_15.is_none() {
                "load average not available (/proc/loadavg unreadable)".to_string()
            } else {
                format!(
                    "{} / {} / {} (1/5/15 min)",
                    f(self.loadavg_1),
                    f(self.loadavg_5),
                    f(self.loadavg_15)
                )
            };
        if let (Some(r), Some(t)) = (self.procs_running, self.procs_total) {
            s.push_str(&format!(", {r} runnable of {t} tasks"));
        }
        s.push_str(&format!(", at {}", self.at));
        s
    }

    /// Read /proc/loadavg under `sys` now.
    pub fn read(sys: &crate::base::Sysroot) -> Load {
        let now = now_rfc3339();
        match sys.read_string("/proc/loadavg") {
            Some(t) => Load::parse(&t, &now),
            None => Load {
                at: now,
                ..Load::default()
            },
        }
    }
}

/// Conditions the run was measured under.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Load when the run began.
    pub load_start: Option<Load>,
    /// Load when the run ended (None until it ends, or if interrupted).
    pub load_end: Option<Load>,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// Whether this is a virtual machine; None when unknown.
    pub is_vm: Option<bool>,
    /// cpufreq governor(s) in use, e.g. "performance" or "powersave,performance"
    /// when CPUs differ; None when there is no cpufreq.
    pub governor: Option<String>,
    /// Anything that may bias the figures (other load, throttling, a CPU went offline...).
    pub notes: Vec<String>,
    /// What other programs and the hypervisor took of the CPUs while the
    /// run measured (absent in runs of older versions, or when /proc was
    /// unreadable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<Activity>,
    /// The cpuscope build that measured the run (commit, date, target, glibc
    /// floor) and the glibc it ran on (absent in runs of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<crate::base::build::BuildInfo>,
    /// Whether the run measured in a container, with the signs seen
    /// (absent in runs of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<crate::machine::container::Container>,
    /// The cgroup's limits when the run began besides its cpuset (which is
    /// the machine snapshot's `cpus.cgroup`): the memory limit and what was
    /// left under it, the CPU quota (absent in runs of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<crate::machine::limits::Limits>,
    /// One line: container, cpuset, quota and memory limit, as `info`
    /// says it; absent when none applies (and in runs of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<String>,
    /// Each experiment run: the plan's estimate and the wall time it took
    /// (absent in runs of older versions and in runs of one experiment's
    /// own command).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timings: Vec<Timing>,
}

/// An experiment's estimated and actual wall time in a run (seconds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub experiment: String,
    pub estimated_s: f64,
    pub actual_s: f64,
}

/// Other programs' CPU time above this share of the machine's CPU time
/// (CPUs × wall time) makes a busy machine.
pub const BUSY_OTHERS_SHARE: f64 = 0.10;
/// Steal time above this share of all CPU time makes a busy host.
pub const BUSY_STEAL_SHARE: f64 = 0.05;

/// The machine's CPU time over a run, from two readings of /proc/stat and
/// /proc/self/stat (`machine::activity`): what other programs used (busy time
/// minus cpuscope's own, its waited-for children included) and what the
/// hypervisor stole.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Activity {
    /// Wall time between the two readings, s.
    pub wall_s: f64,
    /// CPUs the machine has online (the share's denominator).
    pub cpus: usize,
    /// CPU-seconds other programs used.
    pub others_cpu_s: f64,
    /// others_cpu_s / (wall_s × cpus).
    pub others_share: f64,
    /// CPU-seconds stolen by the hypervisor (the steal column).
    pub steal_s: f64,
    /// steal / all CPU time.
    pub steal_share: f64,
    /// others_share > [`BUSY_OTHERS_SHARE`] or steal_share > [`BUSY_STEAL_SHARE`],
    /// or the cgroup's other processes' share (`cgroup.others_share`) >
    /// [`BUSY_OTHERS_SHARE`].
    pub busy: bool,
    /// What this process's cgroup saw over the run: its other processes'
    /// CPU time and CPU-quota throttling (absent outside a cgroup of its
    /// own, and in runs of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupActivity>,
}

/// The CPU time of this process's cgroup over a run, from two readings of
/// its `cpu.stat` (v2) or `cpuacct.usage` and the quota's `cpu.stat` (v1):
/// inside a container, /proc/stat counts the whole host, so the
/// container's other processes are read here, against the CPUs the
/// container may use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgroupActivity {
    /// CPUs' worth of time the cgroup may use: its usable CPUs, or its
    /// quota when lower.
    pub cpus: f64,
    /// CPU-seconds the cgroup's other processes used (its CPU time minus
    /// cpuscope's, children included); null when its CPU time is not read.
    pub others_cpu_s: Option<f64>,
    /// others_cpu_s / (wall_s × cpus).
    pub others_share: Option<f64>,
    /// The quota's enforcement periods over the run, and in how many the
    /// cgroup was throttled; null without a quota.
    pub periods: Option<u64>,
    pub throttled_periods: Option<u64>,
    /// Time its threads were held back by the quota, s.
    pub throttled_s: Option<f64>,
}

impl CgroupActivity {
    /// Its part of [`Activity::summary`].
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let (Some(o), Some(sh)) = (self.others_cpu_s, self.others_share) {
            parts.push(format!(
                "other processes of this cgroup {o:.1} CPU-s ({:.0}% of its {} CPU{})",
                sh * 100.0,
                crate::machine::limits::cpus_text(self.cpus),
                if (self.cpus - 1.0).abs() < 1e-9 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        if let (Some(p), Some(t), Some(s)) =
            (self.periods, self.throttled_periods, self.throttled_s)
        {
            parts.push(format!(
                "CPU quota throttled it in {t} of {p} periods ({s:.1} s held back)"
            ));
        }
        parts.join("; ")
    }
}

impl Activity {
    /// From two readings `ticks_per_s` apart in unit (USER_HZ), over `wall_s`.
    pub fn between(
        a: &crate::machine::activity::CpuTimes,
        b: &crate::machine::activity::CpuTimes,
        wall_s: f64,
        cpus: usize,
        ticks_per_s: f64,
    ) -> Option<Activity> {
        if wall_s <= 0.0 || cpus == 0 || ticks_per_s <= 0.0 || b.total < a.total {
            return None;
        }
        let busy = b.busy().saturating_sub(a.busy()) as f64 / ticks_per_s;
        let own = b.own.saturating_sub(a.own) as f64 / ticks_per_s;
        let others = (busy - own).max(0.0);
        let all = (b.total - a.total) as f64;
        let steal = b.steal.saturating_sub(a.steal) as f64;
        let others_share = others / (wall_s * cpus as f64);
        let steal_share = if all > 0.0 { steal / all } else { 0.0 };
        Some(Activity {
            wall_s,
            cpus,
            others_cpu_s: others,
            others_share,
            steal_s: steal / ticks_per_s,
            steal_share,
            busy: others_share > BUSY_OTHERS_SHARE || steal_share > BUSY_STEAL_SHARE,
            cgroup: None,
        })
    }

    /// One line: `other programs used 1.9 CPU-s of 2 CPUs × 60 s (2%); steal 0.1%`,
    /// then what the cgroup saw ([`CgroupActivity::summary`]).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "other programs used {:.1} CPU-s of {} CPU{} × {:.1} s ({:.0}%); steal time {:.1}%",
            self.others_cpu_s,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            self.wall_s,
            self.others_share * 100.0,
            self.steal_share * 100.0
        );
        if let Some(c) = self.cgroup.as_ref().map(CgroupActivity::summary) {
            if !c.is_empty() {
                s.push_str("; ");
                s.push_str(&c);
            }
        }
        s
    }

    /// With what the cgroup saw: its other processes count as other
    /// programs (busy above [`BUSY_OTHERS_SHARE`] of its CPUs).
    pub fn with_cgroup(mut self, c: CgroupActivity) -> Activity {
        if c.others_share.is_some_and(|s| s > BUSY_OTHERS_SHARE) {
            self.busy = true;
        }
        self.cgroup = Some(c);
        self
    }
}

impl Environment {
    /// The environment a run starts in: kernel, VM and governor as the
    /// machine snapshot read them (`machine/` is the one reader of those
    /// files), and the load under `sys` now.
    pub fn from_machine(
        m: &crate::machine::MachineInfo,
        sys: &crate::base::Sysroot,
    ) -> Environment {
        let govs: BTreeSet<&str> = m
            .frequency
            .governors
            .iter()
            .map(|g| g.value.as_str())
            .filter(|g| !g.is_empty())
            .collect();
        Environment {
            load_start: Some(Load::read(sys)),
            load_end: None,
            kernel: m.identity.kernel_release.clone(),
            is_vm: m.identity.virtualization.is_virtual,
            governor: (!govs.is_empty()).then(|| govs.into_iter().collect::<Vec<_>>().join(",")),
            notes: Vec::new(),
            activity: None,
            build: Some(crate::base::build::BuildInfo::this()),
            container: Some(m.container.clone()),
            limits: Some(m.limits.clone()),
            confinement: crate::machine::container::confinement_line(
                &m.container,
                &m.cpus,
                &m.limits,
            ),
            timings: Vec::new(),
        }
    }
}

/// One stored run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// Always [`RUN_SCHEMA`] when written by this version.
    pub schema: String,
    /// Unique, sortable: `20261122T010203Z-<host>-<4 hex>`.
    pub id: String,
    /// cpuscope version that measured it.
    pub tool_version: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// RFC 3339, UTC; None while running or when interrupted.
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub host: String,
    /// The full `cpuscope info --json` document of the machine at the start.
    pub machine: Value,
    pub environment: Environment,
    /// Profile name (quick, standard, full...).
    pub profile: String,
    /// The options the run was started with.
    pub options: Value,
    pub tags: Vec<String>,
    pub results: Vec<ResultRecord>,
}

impl Run {
    /// The records of figure kind `id`, in run order.
    pub fn records(&self, id: MetricId) -> impl Iterator<Item = &ResultRecord> {
        self.results.iter().filter(move |r| r.is(id))
    }

    /// The build that measured the run: the build's line (version, commit,
    /// date, target, glibc floor) when the run recorded it, else the version.
    pub fn tool_text(&self) -> String {
        match &self.environment.build {
            Some(b) => b.line(),
            None => self.tool_version.clone(),
        }
    }

    /// The records of one experiment, in run order.
    pub fn records_of<'a>(&'a self, experiment: &'a str) -> impl Iterator<Item = &'a ResultRecord> {
        self.results
            .iter()
            .filter(move |r| r.from_experiment(experiment))
    }

    /// A new run, status Running, started now, no results yet.
    pub fn new(
        host: &str,
        profile: &str,
        machine: Value,
        environment: Environment,
        options: Value,
        tags: Vec<String>,
    ) -> Run {
        let now = Utc::now();
        Run {
            schema: RUN_SCHEMA.to_string(),
            id: new_run_id(now, host),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: now.to_rfc3339_opts(SecondsFormat::Secs, true),
            finished_at: None,
            status: RunStatus::Running,
            host: host.to_string(),
            machine,
            environment,
            profile: profile.to_string(),
            options,
            tags,
            results: Vec::new(),
        }
    }

    /// The machine snapshot, typed. Fields an older run did not record take
    /// their defaults (empty lists, `None`); a snapshot that is not a
    /// `cpuscope.info` document (an import from another tool) reads as empty.
    pub fn machine_info(&self) -> crate::machine::MachineInfo {
        serde_json::from_value(self.machine.clone()).unwrap_or_default()
    }

    /// CPU model name from the machine snapshot, if it has one.
    pub fn cpu_model(&self) -> Option<String> {
        cpu_model_of(&self.machine)
    }
}

/// JSON pointers tried, in order, to find the CPU model in a machine snapshot.
const CPU_MODEL_POINTERS: &[&str] = &[
    "/identity/model_name",
    "/identity/model",
    "/identity/cpu_model",
    "/identity/name",
    "/model_name",
    "/cpu_model",
];

/// CPU model name from an `info` document (first of identity.model_name,
/// identity.model, identity.cpu_model, identity.name, model_name, cpu_model
/// that is a non-empty string).
pub fn cpu_model_of(machine: &Value) -> Option<String> {
    CPU_MODEL_POINTERS.iter().find_map(|p| {
        machine
            .pointer(p)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    })
}

/// The name of one kind of figure: the experiment that makes it and its
/// metric. Each experiment declares its own as constants (`latency::CURVE`);
/// reports and advice find records through them, never through string
/// literals (scripts/check-names.py checks that).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetricId {
    pub experiment: &'static str,
    pub metric: &'static str,
}

impl MetricId {
    pub const fn new(experiment: &'static str, metric: &'static str) -> MetricId {
        MetricId { experiment, metric }
    }
}

/// The start of a note that flags a figure as implausible
/// ([`ResultRecord::with_suspect`]).
pub const SUSPECT: &str = "suspect: ";

/// The start of a note that flags a figure as disturbed while it was
/// measured by something outside it, e.g. its cgroup's CPU quota
/// throttling it ([`ResultRecord::with_disturbed`]).
pub const DISTURBED: &str = "disturbed: ";

/// One figure (or one structured result) of one experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultRecord {
    /// Experiment name, e.g. "frequency".
    pub experiment: String,
    /// Stable comparison key: see [`result_key`].
    pub key: String,
    /// What is measured, e.g. "frequency", "load-to-use latency".
    pub metric: String,
    /// Unit of `value` and `samples`, e.g. "GHz", "ns", "GB/s".
    pub unit: String,
    pub higher_is_better: bool,
    /// Parameters that identify the measurement (threads, size, cpus...).
    pub params: BTreeMap<String, Value>,
    /// Headline figure (normally the median of `samples`); None when not available.
    pub value: Option<f64>,
    /// Why `value` is None. Required when `value` is None.
    pub unavailable_reason: Option<String>,
    /// Every repetition's figure, in `unit`.
    pub samples: Vec<f64>,
    /// Statistics of `samples`.
    pub stats: Option<Stats>,
    /// How it was measured (one line).
    pub method: String,
    /// Bumped when the method changes so that figures are no longer comparable.
    pub method_version: u32,
    /// Repetitions made (normally `samples.len()`).
    pub repetitions: u32,
    pub notes: Vec<String>,
    /// Hardware/software counter readings, if any.
    pub counters: Option<Value>,
    /// Structured result (a curve, a matrix...), if any.
    pub data: Option<Value>,
}

impl ResultRecord {
    /// A measured figure with no samples yet; the key is built from the parts.
    /// Use the `with_*` methods to fill it.
    pub fn new(experiment: &str, metric: &str, unit: &str, higher_is_better: bool) -> ResultRecord {
        let mut r = ResultRecord {
            experiment: experiment.to_string(),
            key: String::new(),
            metric: metric.to_string(),
            unit: unit.to_string(),
            higher_is_better,
            params: BTreeMap::new(),
            value: None,
            unavailable_reason: None,
            samples: Vec::new(),
            stats: None,
            method: String::new(),
            method_version: 1,
            repetitions: 0,
            notes: Vec::new(),
            counters: None,
            data: None,
        };
        r.rekey();
        r
    }

    /// A measured figure named by its declared [`MetricId`].
    pub fn of(id: MetricId, unit: &str, higher_is_better: bool) -> ResultRecord {
        ResultRecord::new(id.experiment, id.metric, unit, higher_is_better)
    }

    /// True when this record is a figure of kind `id`.
    pub fn is(&self, id: MetricId) -> bool {
        self.experiment == id.experiment && self.metric == id.metric
    }

    /// True when this record belongs to experiment `experiment`.
    pub fn from_experiment(&self, experiment: &str) -> bool {
        self.experiment == experiment
    }

    /// A figure that could not be measured on this run, and why.
    pub fn unavailable(experiment: &str, metric: &str, unit: &str, reason: &str) -> ResultRecord {
        let mut r = ResultRecord::new(experiment, metric, unit, true);
        r.unavailable_reason = Some(reason.to_string());
        r
    }

    /// Set one parameter (and rebuild the key).
    pub fn with_param(mut self, name: &str, value: impl Into<Value>) -> ResultRecord {
        self.params.insert(name.to_string(), value.into());
        self.rekey();
        self
    }

    /// Set the method description and version (and rebuild the key).
    pub fn with_method(mut self, method: &str, version: u32) -> ResultRecord {
        self.method = method.to_string();
        self.method_version = version;
        self.rekey();
        self
    }

    /// Set the samples; computes `stats`, `repetitions`, and `value` = median.
    /// If the samples hold a non-finite number, the record becomes unavailable.
    pub fn with_samples(mut self, samples: Vec<f64>) -> ResultRecord {
        self.repetitions = u32::try_from(samples.len()).unwrap_or(u32::MAX);
        match Stats::from_samples(&samples) {
            Some(s) => {
                self.value = Some(s.median);
                self.unavailable_reason = None;
                self.stats = Some(s);
                self.samples = samples;
            }
            None => {
                self.value = None;
                self.stats = None;
                self.unavailable_reason = Some(if samples.is_empty() {
                    "no samples were taken".to_string()
                } else {
                    "a sample was not a finite number".to_string()
                });
                // Keep only what JSON can hold.
                self.samples = samples.into_iter().filter(|x| x.is_finite()).collect();
            }
        }
        self
    }

    pub fn with_note(mut self, note: &str) -> ResultRecord {
        self.notes.push(note.to_string());
        self
    }

    /// Set `data` to a family's typed payload (`T` serialized: its fields
    /// are the JSON keys). A payload that cannot be written as JSON (none of
    /// the families' can fail) leaves `data` empty with a note saying why.
    pub fn with_payload<T: Serialize>(self, payload: &T) -> ResultRecord {
        match serde_json::to_value(payload) {
            Ok(v) => self.with_data(v),
            Err(e) => self.with_note(&format!("data not recorded: {e}")),
        }
    }

    pub fn with_data(mut self, data: Value) -> ResultRecord {
        self.data = Some(data);
        self
    }

    /// Add the fields of the object `more` to `data` (an object), keeping
    /// the fields already there unless `more` names them too.
    pub fn add_data(mut self, more: Value) -> ResultRecord {
        match (self.data.as_mut(), more) {
            (Some(Value::Object(d)), Value::Object(m)) => d.extend(m),
            (_, m) => self.data = Some(m),
        }
        self
    }

    pub fn with_counters(mut self, counters: Value) -> ResultRecord {
        self.counters = Some(counters);
        self
    }

    /// Rebuild `key` from experiment, metric, params, unit and method version.
    pub fn rekey(&mut self) {
        self.key = result_key(
            &self.experiment,
            &self.metric,
            &self.params,
            &self.unit,
            self.method_version,
        );
    }

    /// True when the spread of the samples is above 5% CV.
    pub fn is_noisy(&self) -> bool {
        self.stats.as_ref().is_some_and(Stats::is_noisy)
    }

    /// Flag the figure as implausible, with why (a note that starts with
    /// [`SUSPECT`]): it stays, measured, but every reader marks it like a
    /// noisy one and no advice rests on it.
    pub fn with_suspect(self, why: &str) -> ResultRecord {
        self.with_note(&format!("{SUSPECT}{why}"))
    }

    /// True when a check of the experiment found the figure implausible.
    pub fn is_suspect(&self) -> bool {
        self.notes.iter().any(|n| n.starts_with(SUSPECT))
    }

    /// Flag the figure as disturbed while it was measured, with what
    /// disturbed it (a note that starts with [`DISTURBED`]): it stays,
    /// measured, marked like a noisy one, and no advice rests on it.
    pub fn with_disturbed(self, why: &str) -> ResultRecord {
        self.with_note(&format!("{DISTURBED}{why}"))
    }

    /// True when something outside the figure disturbed it (quota throttling).
    pub fn is_disturbed(&self) -> bool {
        self.notes.iter().any(|n| n.starts_with(DISTURBED))
    }

    /// Noisy (CV > 5%), suspect or disturbed: not a figure to rest advice on.
    pub fn is_flagged(&self) -> bool {
        self.is_noisy() || self.is_suspect() || self.is_disturbed()
    }

    /// Label for reports: `experiment` or `experiment: metric`, then the params.
    pub fn label(&self) -> String {
        let mut s = if self.metric == self.experiment {
            self.experiment.clone()
        } else {
            format!("{}: {}", self.experiment, self.metric)
        };
        if !self.params.is_empty() {
            let p: Vec<String> = self
                .params
                .iter()
                .map(|(k, v)| match v {
                    Value::String(t) => format!("{k}={t}"),
                    other => format!("{k}={other}"),
                })
                .collect();
            s.push_str(&format!(" ({})", p.join(", ")));
        }
        s
    }
}

/// The stable comparison key of a figure:
/// `experiment[:metric]/p1=v1,p2=v2/unit/vN`.
///
/// `:metric` is left out when the metric equals the experiment name; the
/// params segment is left out when there are none. Params are sorted by
/// name; string values are written raw, other values as compact JSON;
/// `%`, `/`, `,`, `=` and `:` in names/values are percent-encoded.
/// Example: `frequency/threads=1/GHz/v1`.
pub fn result_key(
    experiment: &str,
    metric: &str,
    params: &BTreeMap<String, Value>,
    unit: &str,
    method_version: u32,
) -> String {
    let mut k = enc(experiment);
    if metric != experiment {
        k.push(':');
        k.push_str(&enc(metric));
    }
    if !params.is_empty() {
        let p: Vec<String> = params
            .iter()
            .map(|(n, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                format!("{}={}", enc(n), enc(&v))
            })
            .collect();
        k.push('/');
        k.push_str(&p.join(","));
    }
    k.push('/');
    k.push_str(&enc(unit));
    k.push_str(&format!("/v{method_version}"));
    k
}

fn enc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' | '/' | ',' | '=' | ':' => o.push_str(&format!("%{:02X}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// Now, RFC 3339 UTC to the second (`2026-11-22T01:02:03Z`).
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A new run id: `YYYYMMDDTHHMMSSZ-<host>-<4 hex>`. The host is reduced to
/// `[A-Za-z0-9.-]` (other characters become '-', at most 40 kept).
pub fn new_run_id(at: DateTime<Utc>, host: &str) -> String {
    let mut h: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    if h.is_empty() {
        h = "host".into();
    }
    // Random per process (RandomState is seeded randomly), mixed with time and pid.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(at.timestamp_nanos_opt().unwrap_or_default() as u128);
    hasher.write_u32(std::process::id());
    let r = (hasher.finish() & 0xffff) as u16;
    format!("{}-{h}-{r:04x}", at.format("%Y%m%dT%H%M%SZ"))
}

/// Check a document's `schema` field: same name, version not newer than ours.
pub fn check_schema(schema: &str) -> Result<()> {
    let Some((name, ver)) = schema.rsplit_once('/') else {
        bail!("schema '{schema}' is not a cpuscope run schema (expected {RUN_SCHEMA})");
    };
    if name != RUN_SCHEMA_NAME {
        bail!("foreign schema '{schema}' (expected {RUN_SCHEMA})");
    }
    let v: u32 = ver
        .parse()
        .map_err(|_| anyhow::anyhow!("schema '{schema}' has no valid version number"))?;
    if v == 0 || v.to_string() != ver {
        bail!("schema '{schema}' has no valid version number");
    }
    if v > RUN_SCHEMA_VERSION {
        bail!(
            "schema '{schema}' is newer than this cpuscope understands ({RUN_SCHEMA}); upgrade cpuscope"
        );
    }
    Ok(())
}

/// Parse and validate a run document from JSON text. Errors are one line.
pub fn parse_run(text: &str) -> Result<Run> {
    if text.trim().is_empty() {
        bail!("empty file, not a run document");
    }
    let v: Value =
        serde_json::from_str(text).map_err(|e| anyhow::anyhow!("not valid JSON: {e}"))?;
    let Some(obj) = v.as_object() else {
        bail!("not a cpuscope run document (the JSON is not an object)");
    };
    match obj.get("schema") {
        Some(Value::String(s)) => check_schema(s)?,
        Some(_) => bail!("not a cpuscope run document (\"schema\" is not a string)"),
        None => bail!("not a cpuscope run document (no \"schema\" field)"),
    }
    let run: Run =
        serde_json::from_value(v).map_err(|e| anyhow::anyhow!("invalid run document: {e}"))?;
    validate_run(&run)?;
    Ok(run)
}

fn check_time(what: &str, t: &str) -> Result<()> {
    let d = DateTime::parse_from_rfc3339(t)
        .with_context(|| format!("{what} '{t}' is not an RFC 3339 time"))?;
    if d.offset().local_minus_utc() != 0 {
        bail!("{what} '{t}' is not in UTC");
    }
    Ok(())
}

/// Check a run id: non-empty, at most 200 characters of `[A-Za-z0-9._:+-]`,
/// and not the reserved word `latest`.
pub fn validate_run_id(id: &str) -> Result<()> {
    if id.is_empty() {
        bail!("run id is empty");
    }
    if id.len() > 200 {
        bail!("run id is longer than 200 characters");
    }
    if id == "latest" {
        bail!("run id 'latest' is reserved");
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "._:+-".contains(*c)))
    {
        bail!("run id '{}' holds the character {c:?}", id.escape_debug());
    }
    Ok(())
}

/// Check the run-level fields (not the results).
pub fn validate_run_header(run: &Run) -> Result<()> {
    check_schema(&run.schema)?;
    validate_run_id(&run.id)?;
    let id = &run.id;
    if run.tool_version.trim().is_empty() {
        bail!("run {id}: tool_version is empty");
    }
    check_time(&format!("run {id}: started_at"), &run.started_at)?;
    if let Some(f) = &run.finished_at {
        check_time(&format!("run {id}: finished_at"), f)?;
    }
    if run.host.trim().is_empty() {
        bail!("run {id}: host is empty");
    }
    if run.profile.trim().is_empty() {
        bail!("run {id}: profile is empty");
    }
    for l in [&run.environment.load_start, &run.environment.load_end]
        .into_iter()
        .flatten()
    {
        check_time(&format!("run {id}: environment load time"), &l.at)?;
    }
    Ok(())
}

/// Check one result record.
pub fn validate_record(r: &ResultRecord) -> Result<()> {
    let k = if r.key.is_empty() { "?" } else { &r.key };
    for (name, v) in [
        ("experiment", &r.experiment),
        ("key", &r.key),
        ("metric", &r.metric),
        ("unit", &r.unit),
    ] {
        if v.trim().is_empty() {
            bail!("result {k}: {name} is empty");
        }
    }
    match (r.value, &r.unavailable_reason) {
        (Some(v), _) if !v.is_finite() => bail!("result {k}: value is not a finite number"),
        (None, None) => bail!("result {k}: value is null but no unavailable_reason says why"),
        (None, Some(reason)) if reason.trim().is_empty() => {
            bail!("result {k}: value is null and unavailable_reason is empty")
        }
        _ => {}
    }
    if r.samples.iter().any(|x| !x.is_finite()) {
        bail!("result {k}: a sample is not a finite number");
    }
    Ok(())
}

/// Check a whole run: schema, required fields, every result, unique keys.
pub fn validate_run(run: &Run) -> Result<()> {
    validate_run_header(run)?;
    let mut keys = BTreeSet::new();
    for (i, r) in run.results.iter().enumerate() {
        validate_record(r).with_context(|| format!("run {}: result #{}", run.id, i + 1))?;
        if !keys.insert(r.key.as_str()) {
            bail!("run {}: result key '{}' appears twice", run.id, r.key);
        }
    }
    Ok(())
}

/// A kernel knob's value from a stored run's machine snapshot
/// (`cpuscope.info/1` JSON, `knobs.knobs[].value`), if recorded.
pub fn machine_knob(m: &serde_json::Value, name: &str) -> Option<String> {
    use serde_json::Value;
    m.pointer("/knobs/knobs")?
        .as_array()?
        .iter()
        .find(|k| k.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod tests;

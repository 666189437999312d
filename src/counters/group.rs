//! Counter groups: a leader and members opened together so the kernel
//! schedules them as a unit, read together with
//! `PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID`.
//!
//! A [`CounterGroup`] holds one or more kernel groups opened on one or more
//! targets (the calling thread, tasks, CPUs). Opening never fails hard for an
//! event: an event that cannot be opened keeps its errno and reason, an
//! event that was opened but never scheduled is "not counted", and counts of
//! multiplexed groups are scaled by enabled/running time as perf does.

use super::env::{PerfEnv, Reason};
use super::events::Event;
use super::raw::{self, PerfEventAttr};
use super::topdown_model::TopdownStatus;
use crate::base::Sysroot;
use serde::Serialize;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

/// Where counters count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// The calling thread only.
    ThisThread,
    /// One task (thread id); with `inherit`, also the threads and processes
    /// it creates after opening. `enable_on_exec` starts counting at its next exec.
    Task {
        tid: i32,
        inherit: bool,
        enable_on_exec: bool,
    },
    /// Everything that runs on one CPU.
    Cpu(u32),
}

impl Target {
    fn pid_cpu(&self) -> (i32, i32) {
        match *self {
            Target::ThisThread => (0, -1),
            Target::Task { tid, .. } => (tid, -1),
            Target::Cpu(c) => (-1, c as i32),
        }
    }
    pub fn label(&self) -> String {
        match *self {
            Target::ThisThread => "self".into(),
            Target::Task { tid, .. } => format!("tid {tid}"),
            Target::Cpu(c) => format!("CPU{c}"),
        }
    }
}

/// Support state of one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventState {
    /// Opened, scheduled, value available (scaled if multiplexed).
    Counted,
    /// Opened but never scheduled (or never enabled): no value.
    NotCounted,
    /// Could not be opened, or the PMU returns zeros: no value.
    NotSupported,
}

impl EventState {
    /// "counted", "not counted", "not supported".
    pub fn words(&self) -> &'static str {
        match self {
            EventState::Counted => "counted",
            EventState::NotCounted => "not counted",
            EventState::NotSupported => "not supported",
        }
    }

    /// perf's marker for the text output.
    pub fn marker(&self) -> &'static str {
        match self {
            EventState::Counted => "",
            EventState::NotCounted => "<not counted>",
            EventState::NotSupported => "<not supported>",
        }
    }
}

/// Raw count of one event on one target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RawCount {
    pub value: u64,
    pub enabled: u64,
    pub running: u64,
}

impl RawCount {
    pub fn saturating_sub(&self, o: &RawCount) -> RawCount {
        RawCount {
            value: self.value.saturating_sub(o.value),
            enabled: self.enabled.saturating_sub(o.enabled),
            running: self.running.saturating_sub(o.running),
        }
    }
}

/// One event on one target at one read.
#[derive(Clone, Debug, PartialEq)]
pub enum Sample {
    /// Not opened on this target (see the open failure).
    Unopened,
    /// Opened, but reading the group failed with this errno.
    ReadFailed(i32),
    Count(RawCount),
}

/// A group read parsed from the kernel's buffer:
/// `nr, time_enabled, time_running, {value, id} * nr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRead {
    pub enabled: u64,
    pub running: u64,
    pub values: Vec<(u64, u64)>,
}

impl GroupRead {
    /// Value of the event with kernel id `id`.
    pub fn value_of(&self, id: u64) -> Option<u64> {
        self.values.iter().find(|(_, i)| *i == id).map(|(v, _)| *v)
    }
}

/// Parse a `PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID` read.
pub fn parse_group_read(words: &[u64]) -> Result<GroupRead, String> {
    if words.len() < 3 {
        return Err(format!("group read too short: {} words", words.len()));
    }
    let nr = words[0] as usize;
    if nr > 4096 {
        return Err(format!("group read claims {nr} events"));
    }
    let need = 3 + 2 * nr;
    if words.len() < need {
        return Err(format!(
            "group read truncated: {nr} events need {need} words, got {}",
            words.len()
        ));
    }
    let values = (0..nr)
        .map(|i| (words[3 + 2 * i], words[4 + 2 * i]))
        .collect();
    Ok(GroupRead {
        enabled: words[1],
        running: words[2],
        values,
    })
}

/// The reading of one event, aggregated over targets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventReading {
    pub name: String,
    /// Canonical name metrics use.
    pub key: String,
    /// Index of the counter group the event was opened in.
    pub group: usize,
    pub state: EventState,
    /// Count scaled for multiplexing (`raw * enabled / running`) and by the
    /// event's scale; `null` unless counted.
    pub value: Option<f64>,
    /// Unscaled count; `null` unless counted.
    pub raw: Option<u64>,
    pub unit: Option<String>,
    pub time_enabled_ns: Option<u64>,
    pub time_running_ns: Option<u64>,
    /// `running / enabled` in percent (perf's multiplexing figure).
    pub running_pct: Option<f64>,
    pub errno: Option<i32>,
    pub errno_name: Option<String>,
    /// Short reason code (`no-pmu`, `permission`, `returns-zeros`, `not-scheduled`, ...).
    pub reason_code: Option<String>,
    /// Why there is no value, in a sentence.
    pub reason: Option<String>,
    /// Counted by a hardware PMU (subject to the zero-PMU check).
    pub hardware: bool,
}

impl EventReading {
    /// Human description of a missing value ("cycles not supported: ...").
    pub fn why_missing(&self) -> String {
        match &self.reason {
            Some(r) => format!("{} {}: {r}", self.name, self.state.words()),
            None => format!("{} {}", self.name, self.state.words()),
        }
    }
}

/// All events of a [`CounterGroup`] at one read (or between two reads).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Readings {
    pub events: Vec<EventReading>,
    /// Wall time the counters were enabled, when the group measured it.
    pub wall_ns: Option<u64>,
    #[serde(skip)]
    pub topdown: TopdownStatus,
}

impl Readings {
    /// The first reading with canonical key `key`.
    pub fn get(&self, key: &str) -> Option<&EventReading> {
        self.events.iter().find(|e| e.key == key)
    }

    /// The scaled value of `key`, or why there is none ("cycles not supported: ...").
    pub fn value(&self, key: &str) -> Result<f64, String> {
        match self.get(key) {
            Some(r) if r.state == EventState::Counted && r.value.is_some() => {
                Ok(r.value.unwrap_or_default())
            }
            _ => Err(format!("{key} {}", self.why(key))),
        }
    }

    /// Why `key` has no value, without the event name ("not measured",
    /// "not supported: ENOENT: ..."); empty when it has one.
    pub fn why(&self, key: &str) -> String {
        match self.get(key) {
            None => "not measured".into(),
            Some(r) => match (r.state, &r.reason) {
                (EventState::Counted, _) if r.value.is_some() => String::new(),
                (EventState::Counted, _) => "has no value".into(),
                (st, Some(reason)) => format!("{}: {reason}", st.words()),
                (st, None) => st.words().into(),
            },
        }
    }
}

/// Below this much running time a zero cycle count proves nothing.
pub const ZERO_CHECK_MIN_RUNNING_NS: u64 = 500_000;

/// Aggregate per-target samples into readings. `failures[e]` is the first
/// open failure of event `e`, `groups[e]` its group index. Counts are summed
/// over targets and scaled as perf does: `sum(value) * sum(enabled) /
/// sum(running)`.
pub fn aggregate(
    events: &[Event],
    groups: &[usize],
    failures: &[Option<(i32, Reason)>],
    samples: &[Vec<Sample>],
    env: &PerfEnv,
) -> Vec<EventReading> {
    let mut out = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        let mut r = blank_reading(ev, groups.get(i).copied().unwrap_or(0));
        let TargetSum {
            sum,
            opened,
            read_err,
        } = sum_over_targets(samples, i);
        if opened == 0 {
            let (errno, reason) = failures
                .get(i)
                .cloned()
                .flatten()
                .unwrap_or((0, Reason::new("not-opened", "not opened on any target")));
            if errno != 0 {
                r.errno = Some(errno);
                r.errno_name = Some(raw::errno_name(errno));
            }
            r.reason_code = Some(reason.code);
            r.reason = Some(reason.text);
            out.push(r);
            continue;
        }
        r.time_enabled_ns = Some(sum.enabled);
        r.time_running_ns = Some(sum.running);
        if sum.running == 0 {
            r.state = EventState::NotCounted;
            explain_not_counted(&mut r, read_err, sum.enabled, env);
            out.push(r);
            continue;
        }
        r.state = EventState::Counted;
        r.raw = Some(sum.value);
        let factor = sum.enabled.max(sum.running) as f64 / sum.running as f64;
        r.value = Some(sum.value as f64 * factor * ev.scale);
        r.running_pct = Some(if sum.enabled == 0 {
            100.0
        } else {
            (sum.running as f64 / sum.enabled as f64 * 100.0).min(100.0)
        });
        out.push(r);
    }
    mark_zero_pmu(&mut out);
    out
}

/// The reading of `ev` (in group `group`) before anything is known: not supported, no value.
fn blank_reading(ev: &Event, group: usize) -> EventReading {
    EventReading {
        name: ev.name.clone(),
        key: ev.key.clone(),
        group,
        state: EventState::NotSupported,
        value: None,
        raw: None,
        unit: ev.unit.clone(),
        time_enabled_ns: None,
        time_running_ns: None,
        running_pct: None,
        errno: None,
        errno_name: None,
        reason_code: None,
        reason: None,
        hardware: ev.is_hardware(),
    }
}

/// One event's samples over all targets.
struct TargetSum {
    /// Counts summed over the targets that read.
    sum: RawCount,
    /// Targets where the event is open (read or not).
    opened: usize,
    /// The first read error.
    read_err: Option<i32>,
}

/// Sum event `i`'s samples over the targets.
fn sum_over_targets(samples: &[Vec<Sample>], i: usize) -> TargetSum {
    let mut sum = RawCount::default();
    let mut opened = 0usize;
    let mut read_err: Option<i32> = None;
    for inst in samples {
        match inst.get(i) {
            Some(Sample::Count(c)) => {
                opened += 1;
                sum.value = sum.value.saturating_add(c.value);
                sum.enabled = sum.enabled.saturating_add(c.enabled);
                sum.running = sum.running.saturating_add(c.running);
            }
            Some(Sample::ReadFailed(e)) => {
                opened += 1;
                read_err.get_or_insert(*e);
            }
            _ => {}
        }
    }
    TargetSum {
        sum,
        opened,
        read_err,
    }
}

/// Why an open event never ran: a read error, never enabled, or never scheduled.
fn explain_not_counted(r: &mut EventReading, read_err: Option<i32>, enabled: u64, env: &PerfEnv) {
    if let Some(e) = read_err {
        r.errno = Some(e);
        r.errno_name = Some(raw::errno_name(e));
        r.reason_code = Some("read-failed".into());
        r.reason = Some(format!("reading the group failed: {}", raw::errno_name(e)));
    } else if enabled == 0 {
        r.reason_code = Some("not-enabled".into());
        r.reason =
            Some("enabled time 0: the counted task never ran (or counting never started)".into());
    } else {
        r.reason_code = Some("not-scheduled".into());
        r.reason = Some(env.not_scheduled_hint());
    }
}

/// Detect a PMU that opens and schedules but counts nothing (a virtual PMU
/// returning zeros): cycles or instructions were scheduled for at least
/// `ZERO_CHECK_MIN_RUNNING_NS` and every counted hardware event reads 0.
/// Such readings become "not supported" with reason `returns-zeros`.
pub fn mark_zero_pmu(readings: &mut [EventReading]) {
    let probe = readings.iter().find(|r| {
        r.hardware
            && r.state == EventState::Counted
            && matches!(
                r.key.as_str(),
                "cycles" | "instructions" | "cpu_cycles" | "inst_retired"
            )
            && r.time_running_ns.unwrap_or(0) >= ZERO_CHECK_MIN_RUNNING_NS
    });
    let Some(probe) = probe else { return };
    let ran_ms = probe.time_running_ns.unwrap_or(0) as f64 / 1e6;
    let all_zero = readings
        .iter()
        .filter(|r| r.hardware && r.state == EventState::Counted)
        .all(|r| r.raw == Some(0));
    if !all_zero {
        return;
    }
    let text = format!(
        "the PMU opened and ran for {ran_ms:.1} ms but every hardware event counted 0: a virtual \
         PMU that returns zeros (the hypervisor does not pass counters through)"
    );
    for r in readings
        .iter_mut()
        .filter(|r| r.hardware && r.state == EventState::Counted)
    {
        r.state = EventState::NotSupported;
        r.value = None;
        r.raw = None;
        r.reason_code = Some("returns-zeros".into());
        r.reason = Some(text.clone());
    }
}

struct Member {
    event: usize,
    fd: Option<OwnedFd>,
    id: u64,
}

struct KernelGroup {
    /// Index into `members` of the leader (first event that opened).
    leader: Option<usize>,
    members: Vec<Member>,
}

struct Instance {
    target: Target,
    groups: Vec<KernelGroup>,
}

/// Whether the kernel accepts `inherit` together with `PERF_FORMAT_GROUP`
/// (Linux >= 4.13): probed once with a software dummy event on this thread.
pub fn inherit_with_group_reads() -> bool {
    static OK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OK.get_or_init(|| {
        const PERF_COUNT_SW_DUMMY: u64 = 9;
        let mut a = PerfEventAttr::counting(raw::PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
        a.set_flag(raw::FLAG_DISABLED | raw::FLAG_INHERIT, true);
        a.set_flag(raw::FLAG_EXCLUDE_KERNEL | raw::FLAG_EXCLUDE_HV, true);
        // Any failure other than EINVAL (permissions, no perf) says nothing
        // about this combination: assume the modern behaviour.
        !matches!(raw::perf_event_open(&a, 0, -1, -1), Err(libc::EINVAL))
    })
}

/// Counter groups opened on one or more targets. See the module docs.
pub struct CounterGroup {
    events: Vec<Event>,
    group_of: Vec<usize>,
    failures: Vec<Option<(i32, Reason)>>,
    instances: Vec<Instance>,
    env: PerfEnv,
    topdown: TopdownStatus,
    enabled_at: Option<Instant>,
    wall_ns: u64,
    notes: Vec<String>,
    /// Events that fell back to user space only, with the reason.
    user_only: Vec<(String, String)>,
}

/// A target that could not be counted at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// Every task of the target exited before counters were attached.
    Gone,
    /// Not allowed to count the target (errno, reason).
    Denied(i32, String),
}

/// A snapshot of raw counts of every event on every target.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// `[target][event]`.
    pub samples: Vec<Vec<Sample>>,
    /// Wall time the group has been enabled up to this snapshot.
    pub wall_ns: Option<u64>,
}

impl Snapshot {
    /// Counts between `prev` and `self` (for interval mode).
    pub fn delta(&self, prev: &Snapshot) -> Snapshot {
        let samples = self
            .samples
            .iter()
            .enumerate()
            .map(|(t, row)| {
                row.iter()
                    .enumerate()
                    .map(
                        |(e, s)| match (s, prev.samples.get(t).and_then(|r| r.get(e))) {
                            (Sample::Count(c), Some(Sample::Count(p))) => {
                                Sample::Count(c.saturating_sub(p))
                            }
                            (other, _) => other.clone(),
                        },
                    )
                    .collect()
            })
            .collect();
        let wall_ns = match (self.wall_ns, prev.wall_ns) {
            (Some(a), Some(b)) => Some(a.saturating_sub(b)),
            (a, _) => a,
        };
        Snapshot { samples, wall_ns }
    }
}

impl CounterGroup {
    /// Open `events` on the calling thread, disabled. Software events share
    /// one group; hardware events are packed `MAX_AUTO_GROUP` per group.
    /// Never fails: events that cannot be opened carry their state and reason.
    pub fn open_self(events: &[Event]) -> CounterGroup {
        let sys = Sysroot::new("/").ok();
        let env = sys.as_ref().map(PerfEnv::detect).unwrap_or_default();
        let groups = super::events::pack(events);
        match CounterGroup::open(&groups, &[Target::ThisThread], env) {
            Ok(g) => g,
            // ThisThread cannot be gone; keep the signature total anyway.
            Err(_) => CounterGroup::empty(events),
        }
    }

    fn empty(events: &[Event]) -> CounterGroup {
        let n = events.len();
        CounterGroup {
            events: events.to_vec(),
            group_of: (0..n).collect(),
            failures: vec![Some((0, Reason::new("not-opened", "no target to count"))); n],
            instances: Vec::new(),
            env: PerfEnv::default(),
            topdown: TopdownStatus::NotRequested,
            enabled_at: None,
            wall_ns: 0,
            notes: Vec::new(),
            user_only: Vec::new(),
        }
    }

    /// Open `groups` (each a leader followed by members) on every target,
    /// disabled (with `enable_on_exec` for such task targets). Fails only
    /// when no target can be counted at all (all tasks gone, or denied).
    pub fn open(
        groups: &[Vec<Event>],
        targets: &[Target],
        env: PerfEnv,
    ) -> Result<CounterGroup, TargetError> {
        let mut events = Vec::new();
        let mut group_of = Vec::new();
        let mut layout: Vec<Vec<usize>> = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let mut idx = Vec::new();
            for e in g {
                idx.push(events.len());
                events.push(e.clone());
                group_of.push(gi);
            }
            layout.push(idx);
        }
        let mut cg = CounterGroup {
            failures: vec![None; events.len()],
            events,
            group_of,
            instances: Vec::new(),
            env,
            topdown: TopdownStatus::NotRequested,
            enabled_at: None,
            wall_ns: 0,
            notes: Vec::new(),
            user_only: Vec::new(),
        };
        let mut gone = 0usize;
        let mut denied: Option<(i32, String)> = None;
        let mut targets = targets.to_vec();
        cg.drop_inherit_if_refused(&mut targets);
        let targets = &targets[..];
        for t in targets {
            match cg.open_instance(*t, &layout) {
                Ok(inst) => cg.instances.push(inst),
                Err(TargetError::Gone) => gone += 1,
                Err(TargetError::Denied(e, r)) => {
                    denied.get_or_insert((e, r));
                }
            }
        }
        cg.note_user_only_fallbacks();
        if cg.instances.is_empty() && !targets.is_empty() {
            if let Some((e, r)) = denied {
                return Err(TargetError::Denied(e, r));
            }
            if gone > 0 {
                return Err(TargetError::Gone);
            }
        }
        Ok(cg)
    }

    /// On a kernel that rejects inherit with group reads, count `targets`
    /// without inherit, and say so.
    fn drop_inherit_if_refused(&mut self, targets: &mut [Target]) {
        if targets
            .iter()
            .any(|t| matches!(t, Target::Task { inherit: true, .. }))
            && !inherit_with_group_reads()
        {
            for t in targets.iter_mut() {
                if let Target::Task { inherit, .. } = t {
                    *inherit = false;
                }
            }
            self.notes.push(
                "this kernel (< 4.13) rejects inherit with group reads: children and threads \
                 created later are not counted"
                    .into(),
            );
        }
    }

    /// One note per reason for the user-space-only fallbacks.
    fn note_user_only_fallbacks(&mut self) {
        let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
        for (name, why) in std::mem::take(&mut self.user_only) {
            match by_reason.iter_mut().find(|(w, _)| *w == why) {
                Some((_, names)) if !names.contains(&name) => names.push(name),
                Some(_) => {}
                None => by_reason.push((why, vec![name])),
            }
        }
        for (why, names) in by_reason {
            self.notes
                .push(format!("{} count user space only: {why}", names.join(", ")));
        }
    }

    fn attr_for(&self, ev: &Event, target: Target, leader: bool) -> PerfEventAttr {
        let mut a = PerfEventAttr::counting(ev.type_, ev.config);
        a.config1 = ev.config1;
        a.config2 = ev.config2;
        a.set_flag(raw::FLAG_EXCLUDE_USER, ev.exclude_user);
        a.set_flag(raw::FLAG_EXCLUDE_KERNEL, ev.exclude_kernel);
        a.set_flag(raw::FLAG_EXCLUDE_HV, ev.exclude_hv);
        if let Target::Task {
            inherit,
            enable_on_exec,
            ..
        } = target
        {
            a.set_flag(raw::FLAG_INHERIT, inherit);
            if leader {
                a.set_flag(raw::FLAG_ENABLE_ON_EXEC, enable_on_exec);
            }
        }
        if leader {
            a.set_flag(raw::FLAG_DISABLED, true);
        }
        a
    }

    fn open_instance(
        &mut self,
        target: Target,
        layout: &[Vec<usize>],
    ) -> Result<Instance, TargetError> {
        let mut inst = Instance {
            target,
            groups: Vec::new(),
        };
        let mut any_open = false;
        let mut first_denied: Option<(i32, String)> = None;
        for idx in layout {
            let kg = self.open_kernel_group(target, idx, &mut any_open, &mut first_denied)?;
            inst.groups.push(kg);
        }
        if !any_open {
            if let Some((e, r)) = first_denied {
                return Err(TargetError::Denied(e, r));
            }
        }
        Ok(inst)
    }

    /// Open the events `idx` of one group on `target`, the first that opens
    /// leading. Sets `any_open` when one opens; `first_denied` keeps the
    /// first permission refusal on a task; `failures` the first error of each event.
    fn open_kernel_group(
        &mut self,
        target: Target,
        idx: &[usize],
        any_open: &mut bool,
        first_denied: &mut Option<(i32, String)>,
    ) -> Result<KernelGroup, TargetError> {
        let (pid, cpu) = target.pid_cpu();
        let per_cpu = matches!(target, Target::Cpu(_));
        let mut kg = KernelGroup {
            leader: None,
            members: Vec::new(),
        };
        for &ei in idx {
            let leader_fd = kg
                .leader
                .and_then(|l| kg.members[l].fd.as_ref())
                .map(|f| f.as_raw_fd())
                .unwrap_or(-1);
            let is_leader = kg.leader.is_none();
            let attr = self.attr_for(&self.events[ei], target, is_leader);
            let mut res = raw::perf_event_open(&attr, pid, cpu, leader_fd);
            if let Err(e) = res {
                if e == libc::ESRCH && pid > 0 {
                    return Err(TargetError::Gone);
                }
                res = self.retry_user_space_only(ei, target, is_leader, leader_fd, e);
            }
            match res {
                Ok(fd) => {
                    let id = raw::event_id(fd.as_raw_fd()).unwrap_or(u64::MAX);
                    if kg.leader.is_none() {
                        kg.leader = Some(kg.members.len());
                    }
                    *any_open = true;
                    kg.members.push(Member {
                        event: ei,
                        fd: Some(fd),
                        id,
                    });
                }
                Err(e) => {
                    let reason = self.env.explain_open_error(&self.events[ei], e, per_cpu);
                    if (e == libc::EACCES || e == libc::EPERM) && pid > 0 {
                        first_denied.get_or_insert((e, reason.text.clone()));
                    }
                    if self.failures[ei].is_none() {
                        self.failures[ei] = Some((e, reason));
                    }
                    kg.members.push(Member {
                        event: ei,
                        fd: None,
                        id: 0,
                    });
                }
            }
        }
        Ok(kg)
    }

    /// Event `ei` failed to open on `target` with errno `e`: open its
    /// user-space-only form instead when that may help (the event then
    /// becomes that form, noted in `user_only`); else the errno to report.
    fn retry_user_space_only(
        &mut self,
        ei: usize,
        target: Target,
        is_leader: bool,
        leader_fd: i32,
        e: i32,
    ) -> Result<OwnedFd, i32> {
        let (pid, cpu) = target.pid_cpu();
        let per_cpu = matches!(target, Target::Cpu(_));
        let mut res = Err(e);
        // Like perf: without the right to count kernel space, count user space only.
        if (e == libc::EACCES || e == libc::EPERM)
            && !self.events[ei].exclude_kernel
            && !self.env.privileged()
        {
            let uo = self.events[ei].user_only();
            let a2 = self.attr_for(&uo, target, is_leader);
            match raw::perf_event_open(&a2, pid, cpu, leader_fd) {
                Ok(fd) => {
                    let why = self
                        .env
                        .explain_open_error(&self.events[ei], e, per_cpu)
                        .text;
                    self.user_only.push((uo.name.clone(), why));
                    self.events[ei] = uo;
                    res = Ok(fd);
                }
                // The user-space-only retry shows the deeper cause (no PMU, no such event).
                Err(e2) if e2 != libc::EACCES && e2 != libc::EPERM => res = Err(e2),
                Err(_) => {}
            }
        }
        res
    }

    /// Set how top-down metrics are computed from these readings.
    pub fn set_topdown(&mut self, status: TopdownStatus) {
        self.topdown = status;
    }

    /// The events, in order (after any user-space-only fallback).
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Notes gathered while opening (fallbacks applied).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    pub fn env(&self) -> &PerfEnv {
        &self.env
    }

    /// Number of targets opened.
    pub fn targets(&self) -> Vec<Target> {
        self.instances.iter().map(|i| i.target).collect()
    }

    fn for_each_leader(&self, request: u64) {
        for inst in &self.instances {
            for g in &inst.groups {
                if let Some(fd) = g.leader.and_then(|l| g.members[l].fd.as_ref()) {
                    let _ = raw::ioctl_arg(fd.as_raw_fd(), request, raw::PERF_IOC_FLAG_GROUP);
                }
            }
        }
    }

    /// Start counting (all groups).
    pub fn enable(&mut self) {
        self.for_each_leader(raw::PERF_EVENT_IOC_ENABLE);
        self.enabled_at = Some(Instant::now());
    }

    /// Stop counting (all groups).
    pub fn disable(&mut self) {
        self.for_each_leader(raw::PERF_EVENT_IOC_DISABLE);
        if let Some(t) = self.enabled_at.take() {
            self.wall_ns += t.elapsed().as_nanos() as u64;
        }
    }

    /// Zero the counts (times enabled/running are not reset by the kernel).
    pub fn reset(&mut self) {
        self.for_each_leader(raw::PERF_EVENT_IOC_RESET);
        self.wall_ns = 0;
        if self.enabled_at.is_some() {
            self.enabled_at = Some(Instant::now());
        }
    }

    /// Record that counting started now (for targets enabled by exec or by
    /// another party), so readings carry wall time.
    pub fn mark_started(&mut self) {
        self.enabled_at = Some(Instant::now());
    }

    /// Record that counting stopped now.
    pub fn mark_stopped(&mut self) {
        if let Some(t) = self.enabled_at.take() {
            self.wall_ns += t.elapsed().as_nanos() as u64;
        }
    }

    fn current_wall(&self) -> Option<u64> {
        let running = self
            .enabled_at
            .map(|t| t.elapsed().as_nanos() as u64)
            .unwrap_or(0);
        let w = self.wall_ns + running;
        if w == 0 && self.enabled_at.is_none() {
            None
        } else {
            Some(w)
        }
    }

    /// Raw counts of every event on every target.
    pub fn snapshot(&self) -> Snapshot {
        let n = self.events.len();
        let mut samples = Vec::with_capacity(self.instances.len());
        for inst in &self.instances {
            let mut row = vec![Sample::Unopened; n];
            for g in &inst.groups {
                let Some(lfd) = g.leader.and_then(|l| g.members[l].fd.as_ref()) else {
                    continue;
                };
                let opened = g.members.iter().filter(|m| m.fd.is_some()).count();
                let mut buf = vec![0u64; 3 + 2 * opened];
                let parsed = raw::read_words(lfd.as_raw_fd(), &mut buf)
                    .and_then(|w| parse_group_read(&buf[..w]).map_err(|_| libc::EIO));
                for m in g.members.iter().filter(|m| m.fd.is_some()) {
                    row[m.event] = match &parsed {
                        Ok(gr) => match gr.value_of(m.id) {
                            Some(v) => Sample::Count(RawCount {
                                value: v,
                                enabled: gr.enabled,
                                running: gr.running,
                            }),
                            None => Sample::ReadFailed(libc::EIO),
                        },
                        Err(e) => Sample::ReadFailed(*e),
                    };
                }
            }
            samples.push(row);
        }
        Snapshot {
            samples,
            wall_ns: self.current_wall(),
        }
    }

    /// Readings (aggregated over targets) from a snapshot or a delta of two.
    pub fn readings_from(&self, snap: &Snapshot) -> Readings {
        Readings {
            events: aggregate(
                &self.events,
                &self.group_of,
                &self.failures,
                &snap.samples,
                &self.env,
            ),
            wall_ns: snap.wall_ns,
            topdown: self.topdown.clone(),
        }
    }

    /// Readings per target (for per-CPU output), labelled.
    pub fn readings_per_target(&self, snap: &Snapshot) -> Vec<(Target, Readings)> {
        self.instances
            .iter()
            .zip(&snap.samples)
            .map(|(inst, row)| {
                let r = Readings {
                    events: aggregate(
                        &self.events,
                        &self.group_of,
                        &self.failures,
                        std::slice::from_ref(row),
                        &self.env,
                    ),
                    wall_ns: snap.wall_ns,
                    topdown: self.topdown.clone(),
                };
                (inst.target, r)
            })
            .collect()
    }

    /// Read all groups now.
    pub fn read(&self) -> Readings {
        self.readings_from(&self.snapshot())
    }
}

#[cfg(test)]
mod tests;

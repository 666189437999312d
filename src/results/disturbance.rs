//! What this process's cgroup took from a run while it measured, read like
//! steal time (two readings around what they cover): CPU-quota throttling
//! per figure (`cpu.stat` `nr_throttled`, `throttled_usec` / v1
//! `throttled_time` of the cgroup whose quota binds), which marks a figure
//! disturbed, and over the whole run the throttling and the CPU time of
//! the cgroup's other processes (a container's own other programs, which
//! the host-wide /proc/stat dilutes over every CPU of the host).

use super::schema::{CgroupActivity, ResultRecord};
use crate::base::Sysroot;
use crate::machine::limits::{self, CpuQuota, Limits, Throttling};
use std::time::{Duration, Instant};

/// Records handed over within this long of the previous one were measured
/// over the same span (an experiment that derives several figures from one
/// measurement hands them over together): they share its throttling.
const SAME_SPAN: Duration = Duration::from_millis(50);

/// The cgroup's readings over a run and over each figure.
#[derive(Debug)]
pub struct CgroupWatch {
    sys: Sysroot,
    quota: Option<CpuQuota>,
    usage_file: Option<String>,
    /// At the start of the run: throttling, the cgroup's CPU time (ns).
    run_start: (Option<Throttling>, Option<u64>),
    /// The current figure's span: when it began and the reading then.
    span: Option<(Instant, Throttling)>,
    /// The last record's span: when it ended, how long, its throttling.
    last: Option<(Instant, Duration, Throttling)>,
}

impl CgroupWatch {
    /// Start watching the cgroup `limits` describe, under `sys` (live).
    pub fn new(sys: &Sysroot, limits: &Limits) -> CgroupWatch {
        let quota = limits.cpu_quota.clone();
        let usage_file = limits.cpu_usage_file.clone();
        let run_start = (
            quota.as_ref().and_then(|q| limits::read_throttling(sys, q)),
            usage_file
                .as_deref()
                .and_then(|f| limits::read_cpu_usage_ns(sys, f)),
        );
        CgroupWatch {
            sys: sys.clone(),
            quota,
            usage_file,
            run_start,
            span: None,
            last: None,
        }
    }

    fn throttling(&self) -> Option<Throttling> {
        limits::read_throttling(&self.sys, self.quota.as_ref()?)
    }

    /// A figure (an experiment) begins now.
    pub fn begin(&mut self) {
        self.span = self.throttling().map(|t| (Instant::now(), t));
        self.last = None;
    }

    /// Mark `rec` with what the quota did while it was measured: the span
    /// since the previous record (or the experiment's start); a record
    /// handed over right after another shares that one's span. Throttled
    /// at least once: disturbed, with the periods and time. Also a note
    /// when the figure ran more threads than the quota's CPUs.
    pub fn mark(&mut self, mut rec: ResultRecord) -> ResultRecord {
        let Some(q) = self.quota.clone() else {
            return rec;
        };
        if let Some(n) = rec
            .params
            .get("threads")
            .and_then(|v| v.as_u64())
            .filter(|&n| n as f64 > q.cpus)
        {
            rec = rec.with_note(&format!(
                "{n} thread{} on the cgroup's CPU quota of {} CPUs ({}): the figure is bounded by the quota",
                if n == 1 { "" } else { "s" },
                crate::machine::limits::cpus_text(q.cpus),
                q.file
            ));
        }
        let now = Instant::now();
        let Some(reading) = self.throttling() else {
            return rec;
        };
        let (span, delta) = match (self.last, self.span) {
            (Some((at, span, d)), _) if now.duration_since(at) < SAME_SPAN => (span, d),
            (_, Some((t0, r0))) => (now.duration_since(t0), r0.since(&reading)),
            _ => (Duration::ZERO, Throttling::default()),
        };
        self.span = Some((now, reading));
        self.last = Some((now, span, delta));
        if delta.throttled == 0 {
            return rec;
        }
        rec.with_disturbed(&throttled_words(&q, &delta, span))
    }

    /// What the cgroup saw over the run: its other processes' CPU time
    /// (its CPU time now minus at the start, less `own_cpu_s`, cpuscope's
    /// own with its children) over `wall_s` on `usable` CPUs (or the
    /// quota's, when lower), and the quota's throttling. None when neither
    /// could be read (no cgroup of its own, no quota).
    pub fn activity(&self, own_cpu_s: f64, wall_s: f64, usable: usize) -> Option<CgroupActivity> {
        let cpus = match &self.quota {
            Some(q) => q.cpus.min(usable as f64),
            None => usable as f64,
        };
        let others = match (self.run_start.1, self.usage_file.as_deref()) {
            (Some(a), Some(f)) => limits::read_cpu_usage_ns(&self.sys, f)
                .map(|b| (b.saturating_sub(a) as f64 / 1e9 - own_cpu_s).max(0.0)),
            _ => None,
        };
        let throttled = match self.run_start.0 {
            Some(a) => self.throttling().map(|b| a.since(&b)),
            None => None,
        };
        if others.is_none() && throttled.is_none() {
            return None;
        }
        Some(CgroupActivity {
            cpus,
            others_cpu_s: others,
            others_share: others
                .filter(|_| wall_s > 0.0 && cpus > 0.0)
                .map(|o| o / (wall_s * cpus)),
            periods: throttled.map(|t| t.periods),
            throttled_periods: throttled.map(|t| t.throttled),
            throttled_s: throttled.map(|t| t.throttled_ns as f64 / 1e9),
        })
    }
}

/// "the cgroup's CPU quota (0.5 CPUs, /sys/fs/cgroup/x/cpu.max) throttled
/// it in 12 of 40 periods, 310 ms held back, over the 4.0 s it was
/// measured (cpu.stat)".
pub fn throttled_words(q: &CpuQuota, d: &Throttling, span: Duration) -> String {
    format!(
        "the cgroup's CPU quota ({} CPUs, {}) throttled it in {} of {} periods, {:.0} ms held back, over the {:.1} s it was measured (cpu.stat)",
        crate::machine::limits::cpus_text(q.cpus),
        q.file,
        d.throttled,
        d.periods,
        d.throttled_ns as f64 / 1e6,
        span.as_secs_f64()
    )
}

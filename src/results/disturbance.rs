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
    /// CPUs this process may use.
    usable: usize,
    /// At the start of the run: throttling, the cgroup's CPU time (ns).
    run_start: (Option<Throttling>, Option<u64>),
    /// The current figure's span: when it began and the reading then.
    span: Option<(Instant, Throttling)>,
    /// The last record's span: when it ended, how long, its throttling.
    last: Option<(Instant, Duration, Throttling)>,
}

impl CgroupWatch {
    /// Start watching the cgroup `limits` describe, under `sys` (live).
    pub fn new(sys: &Sysroot, limits: &Limits, usable: usize) -> CgroupWatch {
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
            usable,
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
        if let Some(what) = over_quota(&rec, q.cpus, self.usable) {
            rec = rec.with_note(&format!(
                "{what} on the cgroup's CPU quota of {} CPUs ({}): the figure is bounded by the quota",
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

/// The threads or copies of `rec` (its `threads` or `copies` param: a
/// number, `all` = the `usable` CPUs, `per_core` = at least one) when
/// they are more than the quota's `cpus`, in words ("2 threads", "all
/// copies"); None when not more, or not known.
fn over_quota(rec: &ResultRecord, cpus: f64, usable: usize) -> Option<String> {
    ["threads", "copies"].into_iter().find_map(|key| {
        let v = rec.params.get(key)?;
        let label = v
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        let n = match label.as_str() {
            "all" => usable as f64,
            "per_core" => 1.0,
            s => s.parse::<f64>().ok()?,
        };
        (n > cpus).then(|| match label.parse::<f64>() {
            Ok(1.0) if key == "copies" => "1 copy".to_string(),
            Ok(1.0) => "1 thread".to_string(),
            Ok(_) => format!("{label} {key}"),
            Err(_) => format!("{key} {label}"),
        })
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: &str, v: serde_json::Value) -> ResultRecord {
        ResultRecord::new("e", "m", "ns", false).with_param(key, v)
    }

    #[test]
    fn threads_and_copies_over_the_quota() {
        use serde_json::json;
        assert_eq!(
            over_quota(&rec("threads", json!(2)), 1.5, 4).as_deref(),
            Some("2 threads")
        );
        assert_eq!(over_quota(&rec("threads", json!(1)), 1.5, 4), None);
        assert_eq!(
            over_quota(&rec("threads", json!("all")), 1.5, 4).as_deref(),
            Some("threads all")
        );
        assert_eq!(over_quota(&rec("threads", json!("all")), 4.0, 4), None);
        assert_eq!(
            over_quota(&rec("copies", json!("1")), 0.5, 1).as_deref(),
            Some("1 copy")
        );
        assert_eq!(
            over_quota(&rec("copies", json!("per_core")), 0.5, 2).as_deref(),
            Some("copies per_core")
        );
        assert_eq!(over_quota(&rec("pages", json!(9)), 0.5, 2), None);
    }

    /// Throttling between two readings of `cpu.stat` marks the record
    /// handed over then, and one handed over right after it (the same
    /// span); a record after a span without throttling is left alone.
    #[test]
    fn throttled_spans_mark_their_figures() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sys/devices/system/cpu")).unwrap();
        std::fs::create_dir_all(root.join("cg")).unwrap();
        let stat = root.join("cg/cpu.stat");
        std::fs::write(&stat, "nr_periods 10\nnr_throttled 1\nthrottled_usec 100\n").unwrap();
        let sys = Sysroot::new(root).unwrap();
        let limits = Limits {
            cpu_quota: Some(CpuQuota {
                version: 2,
                cgroup: "/cg".into(),
                quota_us: 50_000,
                period_us: 100_000,
                cpus: 0.5,
                file: "/cg/cpu.max".into(),
                stat_file: "/cg/cpu.stat".into(),
            }),
            ..Limits::default()
        };
        let mut w = CgroupWatch::new(&sys, &limits, 1);
        w.begin();
        std::fs::write(
            &stat,
            "nr_periods 30\nnr_throttled 7\nthrottled_usec 250100\n",
        )
        .unwrap();
        let a = w.mark(ResultRecord::new("e", "a", "ns", false));
        assert!(a.is_disturbed() && a.is_flagged(), "{:?}", a.notes);
        let note = a
            .notes
            .iter()
            .find(|n| n.starts_with("disturbed: "))
            .unwrap();
        assert!(
            note.starts_with("disturbed: the cgroup's CPU quota (0.5 CPUs, /cg/cpu.max) throttled it in 6 of 20 periods, 250 ms held back"),
            "{note}"
        );
        let b = w.mark(ResultRecord::new("e", "b", "ns", false));
        assert!(b.is_disturbed(), "handed over with a: same span");
        std::thread::sleep(SAME_SPAN + Duration::from_millis(20));
        let c = w.mark(ResultRecord::new("e", "c", "ns", false));
        assert!(!c.is_disturbed(), "{:?}", c.notes);
        // Over the run: 6 throttled periods of 20.
        let act = w.activity(0.0, 1.0, 1).unwrap();
        assert_eq!((act.periods, act.throttled_periods), (Some(20), Some(6)));
        assert!((act.cpus - 0.5).abs() < 1e-9 && act.others_cpu_s.is_none());
        // No quota: nothing marked, no activity.
        let mut none = CgroupWatch::new(&sys, &Limits::default(), 1);
        none.begin();
        assert!(!none
            .mark(ResultRecord::new("e", "d", "ns", false))
            .is_disturbed());
        assert!(none.activity(0.0, 1.0, 1).is_none());
    }
}

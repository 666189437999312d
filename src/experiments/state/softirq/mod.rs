//! Network softirqs per CPU over a short sample (seed 002's NIC cases: the
//! softirqs of a 60-queue NIC ran on the first socket, so services bound
//! there were 25–30% slower than on the other socket until they moved):
//! `/proc/softirqs` NET_RX / NET_TX and the `softirq` column of `/proc/stat`
//! read twice, the interval timed here; per node, the share of the network
//! softirqs served there and the share of CPU time spent in softirq; per CPU
//! in `data`. The NICs' queues and IRQ placement (read, not measured) are in
//! `cpuscope info`; this sets the measured load beside them.

pub mod view;

use crate::base::CpuSet;
use crate::base::Sysroot;
use crate::experiments::experiment::{ExpCtx, Experiment, Profile, WithParams};
use crate::experiments::state::payload::{
    BusiestCpuData, NodeShareData, SoftirqRateData, SoftirqTimeData,
};
use crate::machine::devices::{read_softirqs, SoftirqReading};
use crate::machine::MachineInfo;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub struct Softirq;

pub const EXP: &str = "softirq";
/// Network softirqs per second over the sample (param kind: NET_RX, NET_TX).
pub const RATE: MetricId = MetricId::new(EXP, "net_softirq_rate");
/// Share of the kind's softirqs served on a node's CPUs, % (params kind, node).
pub const NODE_SHARE: MetricId = MetricId::new(EXP, "net_node_share");
/// Share of a node's CPU time spent in softirq (all kinds), % (param node).
pub const NODE_TIME: MetricId = MetricId::new(EXP, "softirq_time");
/// The CPU with the most softirq time, % of its time (data: every CPU).
pub const BUSIEST_CPU: MetricId = MetricId::new(EXP, "busiest_cpu_softirq_time");
const METHOD_VERSION: u32 = 1;
/// The kinds sampled.
pub const KINDS: [&str; 2] = ["NET_RX", "NET_TX"];

/// Length of the sample per profile.
pub fn sample(profile: Profile) -> Duration {
    match profile {
        Profile::Quick => Duration::from_millis(500),
        Profile::Standard => Duration::from_secs(1),
        Profile::Full => Duration::from_secs(3),
    }
}

/// Parameters of `cpuscope softirq`: the sample length.
#[derive(Clone, Debug)]
pub struct Params {
    pub seconds: Duration,
}

/// Per-CPU differences of two readings: (cpu, count) of `kind`.
pub fn kind_delta(a: &SoftirqReading, b: &SoftirqReading, kind: &str) -> BTreeMap<usize, u64> {
    let row = |r: &SoftirqReading| -> BTreeMap<usize, u64> {
        r.rows
            .iter()
            .find(|x| x.kind == kind)
            .map(|x| x.per_cpu.iter().copied().collect())
            .unwrap_or_default()
    };
    let (ra, rb) = (row(a), row(b));
    rb.iter()
        .map(|(c, v)| (*c, v.saturating_sub(*ra.get(c).unwrap_or(&0))))
        .collect()
}

/// Per-CPU (softirq ticks, all ticks) between two readings.
pub fn ticks_delta(a: &SoftirqReading, b: &SoftirqReading) -> BTreeMap<usize, (u64, u64)> {
    let ta: BTreeMap<usize, (u64, u64)> = a
        .ticks
        .iter()
        .map(|t| (t.cpu, (t.softirq, t.total)))
        .collect();
    b.ticks
        .iter()
        .map(|t| {
            let (s0, t0) = ta.get(&t.cpu).copied().unwrap_or((t.softirq, t.total));
            (
                t.cpu,
                (t.softirq.saturating_sub(s0), t.total.saturating_sub(t0)),
            )
        })
        .collect()
}

/// The records of one sample of `secs` seconds between readings `a` and `b`
/// on `machine` (only the CPUs in `cpus` are counted).
pub fn records(
    machine: &MachineInfo,
    cpus: &CpuSet,
    a: &SoftirqReading,
    b: &SoftirqReading,
    secs: f64,
) -> Vec<ResultRecord> {
    let mut out = Vec::new();
    let nodes: Vec<usize> = machine.numa_nodes.iter().map(|n| n.id).collect();
    let nic_nodes: Vec<String> = machine
        .devices
        .nics
        .iter()
        .filter(|n| !n.is_virtual)
        .map(|n| format!("{} ({})", n.name, n.numa_affinity))
        .collect();
    let method = format!(
        "/proc/softirqs read twice {secs:.2} s apart (interval timed here), per-CPU differences summed per NUMA node of the usable CPUs {cpus}"
    );
    for kind in KINDS {
        let d = kind_delta(a, b, kind);
        let d: BTreeMap<usize, u64> = d.into_iter().filter(|(c, _)| cpus.contains(*c)).collect();
        let total: u64 = d.values().sum();
        let mut r = ResultRecord::of(RATE, "softirqs/s", false)
            .with_param("kind", kind)
            .with_method(&method, METHOD_VERSION)
            .with_samples(vec![total as f64 / secs])
            .with_payload(&SoftirqRateData {
                per_cpu: d.clone(),
                seconds: secs,
                nics: nic_nodes.clone(),
            });
        if total == 0 {
            r = r.with_note(&format!(
                "no {kind} softirq during the {secs:.1} s sample: no network traffic was processed on these CPUs"
            ));
        }
        out.push(r);
        for &n in &nodes {
            out.push(node_share_record(machine, n, kind, &d, secs));
        }
    }
    // CPU time in softirq (all kinds), from /proc/stat.
    let t = ticks_delta(a, b);
    let t: BTreeMap<usize, (u64, u64)> = t.into_iter().filter(|(c, _)| cpus.contains(*c)).collect();
    let tick_method = "/proc/stat softirq ticks / all ticks of the CPUs over the same sample (USER_HZ resolution: short samples on idle CPUs read 0), in %";
    for &n in &nodes {
        out.push(node_time_record(machine, n, &t, secs, tick_method));
    }
    out.push(busiest_record(&t, secs, tick_method));
    out
}

/// `NODE_SHARE`'s record of `kind` on node `n`, from the counted CPUs'
/// softirqs `d` over the sample of `secs` seconds.
fn node_share_record(
    machine: &MachineInfo,
    n: usize,
    kind: &str,
    d: &BTreeMap<usize, u64>,
    secs: f64,
) -> ResultRecord {
    let total: u64 = d.values().sum();
    let on: u64 = d
        .iter()
        .filter(|(c, _)| machine.node_of(**c) == Some(n))
        .map(|(_, v)| *v)
        .sum();
    let s = ResultRecord::of(NODE_SHARE, "%", false)
        .with_param("kind", kind)
        .with_param("node", n)
        .with_method(
            &format!(
                "{kind} softirqs on node {n}'s CPUs / all {kind} softirqs over the sample, in %"
            ),
            METHOD_VERSION,
        );
    percent(
        s,
        on,
        total,
        &NodeShareData {
            count: on,
            total,
            seconds: secs,
        },
        &format!("no {kind} softirq during the {secs:.1} s sample: no share to divide"),
    )
}

/// `NODE_TIME`'s record of node `n`, from each counted CPU's (softirq
/// ticks, all ticks) `t` over the sample of `secs` seconds.
fn node_time_record(
    machine: &MachineInfo,
    n: usize,
    t: &BTreeMap<usize, (u64, u64)>,
    secs: f64,
    tick_method: &str,
) -> ResultRecord {
    let (s, all) = t
        .iter()
        .filter(|(c, _)| machine.node_of(**c) == Some(n))
        .fold((0u64, 0u64), |(a, b), (_, (s, x))| (a + s, b + x));
    let r = ResultRecord::of(NODE_TIME, "%", false)
        .with_param("node", n)
        .with_method(tick_method, METHOD_VERSION);
    percent(
        r,
        s,
        all,
        &SoftirqTimeData {
            softirq_ticks: s,
            ticks: all,
            seconds: secs,
        },
        "no tick of these CPUs elapsed in /proc/stat during the sample",
    )
}

/// `BUSIEST_CPU`'s record from each counted CPU's (softirq ticks, all
/// ticks) over the sample of `secs` seconds; not available when no tick
/// elapsed.
fn busiest_record(t: &BTreeMap<usize, (u64, u64)>, secs: f64, method: &str) -> ResultRecord {
    let busiest = t.iter().filter(|(_, (_, all))| *all > 0).max_by(|x, y| {
        let f = |(s, a): (u64, u64)| s as f64 / a as f64;
        f(*x.1).total_cmp(&f(*y.1))
    });
    let mut r = ResultRecord::of(BUSIEST_CPU, "%", false).with_method(method, METHOD_VERSION);
    match busiest {
        Some((_, (0, _))) => {
            r = r.with_samples(vec![0.0]).with_note(
                "no CPU spent a /proc/stat tick in softirq during the sample (USER_HZ resolution)",
            );
        }
        Some((cpu, (s, all))) => {
            r = r.with_samples(vec![*s as f64 / *all as f64 * 100.0]);
            let per: BTreeMap<usize, f64> = t
                .iter()
                .filter(|(_, (_, a))| *a > 0)
                .map(|(c, (s, a))| (*c, *s as f64 / *a as f64 * 100.0))
                .collect();
            r = r.with_param("cpu", *cpu).with_payload(&BusiestCpuData {
                cpu: *cpu,
                per_cpu_pct: per,
                seconds: secs,
            });
        }
        None => {
            r = ResultRecord::unavailable(
                BUSIEST_CPU.experiment,
                BUSIEST_CPU.metric,
                "%",
                "no tick elapsed in /proc/stat during the sample",
            )
        }
    }
    r
}

/// Where the softirqs ran against where the NICs are: one line each, from
/// the records and the machine.
pub fn advice(machine: &MachineInfo, recs: &[ResultRecord]) -> Vec<String> {
    let mut out = Vec::new();
    if machine.numa_nodes.len() < 2 {
        return out;
    }
    for nic in machine.devices.nics.iter().filter(|n| !n.is_virtual) {
        let Some(node) = nic.numa_node.filter(|n| *n >= 0).map(|n| n as usize) else {
            continue;
        };
        for kind in KINDS {
            let share = recs
                .iter()
                .find(|r| {
                    r.is(NODE_SHARE)
                        && r.params.get("kind").and_then(|v| v.as_str()) == Some(kind)
                        && r.params.get("node").and_then(|v| v.as_u64()) == Some(node as u64)
                })
                .and_then(|r| r.value);
            if let Some(s) = share.filter(|s| *s < 50.0) {
                out.push(format!(
                    "{}: {:.0}% of the {kind} softirqs ran off its node {node} during the sample: packets are processed remotely (move the IRQs to node {node}'s CPUs, or fewer queues)",
                    nic.name,
                    100.0 - s
                ));
            }
        }
    }
    out
}

impl Experiment for Softirq {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "network softirqs (NET_RX/NET_TX) and softirq CPU time per node and CPU over a short sample"
    }
    fn estimate_secs(&self, _machine: &MachineInfo, _cpus: &CpuSet, profile: Profile) -> f64 {
        sample(profile).as_secs_f64() + 0.05
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let mut p = Params {
            seconds: sample(ctx.profile),
        };
        self.run_with(ctx, &mut p, out)
    }
}

/// `cpuscope softirq`'s [`Params`].
impl WithParams for Softirq {
    type Params = Params;
    fn run_with(
        &self,
        ctx: &mut ExpCtx,
        p: &mut Params,
        out: &mut dyn FnMut(ResultRecord) -> Result<()>,
    ) -> Result<()> {
        let len = p.seconds;
        let sys = Sysroot::new("/")?;
        (ctx.step)(&format!(
            "sampling /proc/softirqs for {:.1} s",
            len.as_secs_f64()
        ));
        let unavailable =
            |e: &str| ResultRecord::unavailable(RATE.experiment, RATE.metric, "softirqs/s", e);
        let a = match read_softirqs(&sys) {
            Ok(r) => r,
            Err(e) => return out(unavailable(&e)),
        };
        let t0 = Instant::now();
        // Sleep in short steps so Ctrl-C ends the sample early.
        while t0.elapsed() < len && !ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20).min(len.saturating_sub(t0.elapsed())));
        }
        let b = match read_softirqs(&sys) {
            Ok(r) => r,
            Err(e) => return out(unavailable(&e)),
        };
        let secs = t0.elapsed().as_secs_f64();
        let mut recs = records(ctx.machine, &ctx.cpus, &a, &b, secs);
        let adv = advice(ctx.machine, &recs);
        if let Some(first) = recs.first_mut() {
            for a in adv {
                *first = first.clone().with_note(&a);
            }
        }
        for r in recs {
            out(r)?;
        }
        Ok(())
    }
}

/// `part / whole` in % as `rec`'s one sample (with `data`), or not
/// available with `why` when `whole` is 0.
fn percent<T: Serialize>(
    rec: ResultRecord,
    part: u64,
    whole: u64,
    data: &T,
    why: &str,
) -> ResultRecord {
    if whole == 0 {
        let mut r = rec;
        r.unavailable_reason = Some(why.to_string());
        return r;
    }
    rec.with_samples(vec![part as f64 / whole as f64 * 100.0])
        .with_payload(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::devices::{parse_softirqs, parse_stat_cpus};

    fn reading(rx: [u64; 2], soft: [u64; 2], total: [u64; 2]) -> SoftirqReading {
        SoftirqReading {
            rows: parse_softirqs(&format!(
                "   CPU0 CPU1\n NET_TX: 0 0\n NET_RX: {} {}\n",
                rx[0], rx[1]
            )),
            ticks: parse_stat_cpus(&format!(
                "cpu0 {} 0 0 0 0 0 {} 0 0 0\ncpu1 {} 0 0 0 0 0 {} 0 0 0\n",
                total[0] - soft[0],
                soft[0],
                total[1] - soft[1],
                soft[1]
            )),
        }
    }

    /// Two nodes of one CPU each: CPU i on node i.
    fn two_node_machine() -> MachineInfo {
        let node = |id: usize| crate::machine::numa::NumaNode {
            id,
            cpus: CpuSet::from_ids([id]),
            ..Default::default()
        };
        let thread = |cpu: usize| crate::machine::topology::Thread {
            cpu,
            node: Some(cpu),
            ..Default::default()
        };
        MachineInfo {
            numa_nodes: vec![node(0), node(1)],
            threads: vec![thread(0), thread(1)],
            ..MachineInfo::default()
        }
    }

    #[test]
    fn deltas_shares_and_idle_kinds() {
        let m = two_node_machine();
        let a = reading([100, 100], [10, 0], [1000, 1000]);
        let b = reading([400, 200], [30, 0], [1100, 1100]);
        let r = records(&m, &CpuSet::from_ids([0, 1]), &a, &b, 1.0);
        let rx = r
            .iter()
            .find(|x| x.is(RATE) && x.params["kind"] == "NET_RX")
            .unwrap();
        assert_eq!(rx.value, Some(400.0));
        let n0 = r
            .iter()
            .find(|x| x.is(NODE_SHARE) && x.params["kind"] == "NET_RX" && x.params["node"] == 0)
            .unwrap();
        assert_eq!(n0.value, Some(75.0));
        // No NET_TX at all: a rate of 0 measured, the shares not available.
        let tx = r
            .iter()
            .find(|x| x.is(NODE_SHARE) && x.params["kind"] == "NET_TX")
            .unwrap();
        assert!(tx.value.is_none() && tx.unavailable_reason.is_some());
        let t0 = r
            .iter()
            .find(|x| x.is(NODE_TIME) && x.params["node"] == 0)
            .unwrap();
        assert_eq!(t0.value, Some(20.0));
        let busy = r.iter().find(|x| x.is(BUSIEST_CPU)).unwrap();
        assert_eq!(busy.params["cpu"], 0);
        let nx = r
            .iter()
            .find(|x| x.is(NODE_SHARE) && x.params["kind"] == "NET_RX" && x.params["node"] == 1)
            .unwrap();
        check_payloads(rx, nx, t0, busy);
    }

    /// The typed payloads write what `json!` wrote before (integer
    /// counts, float seconds and shares, maps keyed by CPU id) and read
    /// back.
    fn check_payloads(
        rx: &ResultRecord,
        nx: &ResultRecord,
        t0: &ResultRecord,
        busy: &ResultRecord,
    ) {
        use serde_json::json;
        for (rec, old) in [
            (
                rx,
                json!({"per_cpu": {"0": 300, "1": 100}, "seconds": 1.0, "nics": []}),
            ),
            (nx, json!({"count": 100, "total": 400, "seconds": 1.0})),
            (
                t0,
                json!({"softirq_ticks": 20, "ticks": 100, "seconds": 1.0}),
            ),
            (
                busy,
                json!({"cpu": 0, "per_cpu_pct": {"0": 20.0, "1": 0.0}, "seconds": 1.0}),
            ),
        ] {
            assert_eq!(rec.data.as_ref(), Some(&old), "{}", rec.key);
        }
        let back = |d: Option<serde_json::Value>| d.expect("a payload reads back");
        assert_eq!(
            back(rx.data_as::<SoftirqRateData>().map(|d| json!(d))),
            rx.data.clone().unwrap()
        );
        assert_eq!(
            back(nx.data_as::<NodeShareData>().map(|d| json!(d))),
            nx.data.clone().unwrap()
        );
        assert_eq!(
            back(t0.data_as::<SoftirqTimeData>().map(|d| json!(d))),
            t0.data.clone().unwrap()
        );
        assert_eq!(
            back(busy.data_as::<BusiestCpuData>().map(|d| json!(d))),
            busy.data.clone().unwrap()
        );
    }
}

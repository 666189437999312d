//! Latency under load for each read/write mix: the loaded-latency curve
//! (one thread chases a random cycle in DRAM while 0..all other CPUs
//! stream) measured once per traffic mix, from all reads to all writes.
//! One loaded-latency curve hides how writes cut usable bandwidth (Mess,
//! MICRO 2024; Intel MLC's `--loaded_latency -W` traffic types): this sets
//! the mixes side by side. A mix is named by the share of reads in the
//! bytes the application moves (STREAM's counting): `read` 100%, `3:1`
//! 75% (two read blocks then a copy block, in turn), `2:1` (triad) 67%,
//! `1:1` (copy) 50%, `1:3` 25% (two write blocks then a copy block),
//! `write` 0%; `nt`: non-temporal stores,
//! which skip the read of each written line that a normal store makes the
//! memory do (write-allocate), so the bus's own read share differs from
//! the application's (docs/methods-memory.md, "Read/write mixes").

pub mod knee;
pub mod view;

use crate::base::CpuSet;
use crate::base::Stats;
use crate::experiments::experiment::{ExpCtx, Experiment, Profile};
use crate::experiments::memory::bandwidth::Variant;
use crate::experiments::memory::loaded_latency::{self, LoadedPlan, Measured, Traffic};
use crate::kernels::memory::{BwKernel, StoreKind, Width};
use crate::machine::MachineInfo;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::Result;
use serde::{Deserialize, Serialize};

pub struct RwMix;

pub const EXP: &str = "rw_mix";
/// Bandwidth the streams drew at the highest load, per mix (counted bytes).
pub const BANDWIDTH: MetricId = MetricId::new(EXP, "bandwidth");
/// The chase's latency at the highest load, per mix.
pub const LATENCY: MetricId = MetricId::new(EXP, "latency");
/// Loaded over unloaded latency at the highest load, per mix; the curve in data.
pub const CURVE: MetricId = MetricId::new(EXP, "curve");
/// Bandwidth at the knee (latency twice the idle one), per mix.
pub const KNEE: MetricId = MetricId::new(EXP, "knee_bandwidth");
const METHOD_VERSION: u32 = 1;
/// The params key naming a mix.
pub const MIX_PARAM: &str = "mix";

/// One traffic mix: the STREAM kernels a stream runs block after block, in
/// turn (one for the mixes a kernel has), and its stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    pub cycle: &'static [BwKernel],
    pub store: StoreKind,
}

/// 3:1 (75% reads): two read blocks, then a copy block.
const THREE_TO_ONE: &[BwKernel] = &[BwKernel::Read, BwKernel::Read, BwKernel::Copy];
/// 1:3 (25% reads): two write blocks, then a copy block.
const ONE_TO_THREE: &[BwKernel] = &[BwKernel::Write, BwKernel::Write, BwKernel::Copy];

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Mix {
    /// A mix of one kernel.
    const fn of(kernel: BwKernel, store: StoreKind) -> Mix {
        Mix {
            cycle: match kernel {
                BwKernel::Read => &[BwKernel::Read],
                BwKernel::Write => &[BwKernel::Write],
                BwKernel::Copy => &[BwKernel::Copy],
                BwKernel::Triad => &[BwKernel::Triad],
            },
            store,
        }
    }

    /// (loaded, stored) bytes per element over one turn of its kernels.
    fn counted_bytes(&self) -> (usize, usize) {
        self.cycle.iter().fold((0, 0), |(l, s), k| {
            let (kl, ks) = k.counted_bytes();
            (l + kl, s + ks)
        })
    }

    /// Its name: the read:write ratio of the counted bytes (`read`, `3:1`,
    /// `2:1`, `1:1`, `1:3`, `write`), with ` nt` for non-temporal stores.
    pub fn name(&self) -> String {
        let (l, s) = self.counted_bytes();
        let base = match (l, s) {
            (_, 0) => BwKernel::Read.name().to_string(),
            (0, _) => BwKernel::Write.name().to_string(),
            _ => {
                let g = gcd(l, s);
                format!("{}:{}", l / g, s / g)
            }
        };
        match self.store {
            StoreKind::NonTemporal if s > 0 => format!("{base} nt"),
            _ => base,
        }
    }

    /// Share of reads in the bytes the application moves, %.
    pub fn reads_pct(&self) -> f64 {
        let (l, s) = self.counted_bytes();
        100.0 * l as f64 / (l + s) as f64
    }

    /// What a stream runs, at `width`.
    pub fn traffic(&self, width: Width) -> Traffic {
        Traffic {
            cycle: self
                .cycle
                .iter()
                .map(|&k| Variant::new(k, width, self.store))
                .collect(),
        }
    }
}

/// All reads: the mix the loaded-latency curve measures.
pub const ALL_READS: Mix = Mix::of(BwKernel::Read, StoreKind::Normal);

/// The mixes a profile measures, reads first: the quick profile the four
/// a kernel has, the others also 3:1 and 1:3 (blocks of two kernels in
/// turn) and the non-temporal stores.
pub fn mixes(profile: Profile) -> Vec<Mix> {
    let no = StoreKind::Normal;
    let nt = StoreKind::NonTemporal;
    if profile == Profile::Quick {
        return vec![
            ALL_READS,
            Mix::of(BwKernel::Triad, no),
            Mix::of(BwKernel::Copy, no),
            Mix::of(BwKernel::Write, no),
        ];
    }
    vec![
        ALL_READS,
        Mix {
            cycle: THREE_TO_ONE,
            store: no,
        },
        Mix::of(BwKernel::Triad, no),
        Mix::of(BwKernel::Copy, no),
        Mix {
            cycle: ONE_TO_THREE,
            store: no,
        },
        Mix::of(BwKernel::Write, no),
        Mix::of(BwKernel::Copy, nt),
        Mix::of(BwKernel::Write, nt),
    ]
}

/// What the experiment measures: the loaded-latency plan (chaser, streams,
/// counts, chain and the bytes all of a mix's arrays take together) and the
/// mixes.
#[derive(Clone, Debug)]
pub struct RwMixPlan {
    pub loaded: LoadedPlan,
    pub mixes: Vec<Mix>,
    /// The DIMMs' theoretical bandwidth behind the CPUs and how it was
    /// made, or why it is not known.
    pub theory: Result<(f64, String), String>,
}

/// Injection delays per profile, µs after each 256 KiB block a stream
/// moves: from a light load (a block takes some 10–100 µs at full speed)
/// halving down towards full speed.
fn delays_us(profile: Profile) -> Vec<f64> {
    match profile {
        Profile::Quick => vec![200.0, 50.0, 12.5],
        Profile::Standard => vec![400.0, 200.0, 100.0, 50.0, 25.0, 12.5],
        Profile::Full => vec![800.0, 400.0, 200.0, 100.0, 50.0, 25.0, 12.5, 6.25, 3.0],
    }
}

pub fn plan(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> RwMixPlan {
    let mut loaded = loaded_latency::plan(machine, cpus, profile);
    // Fewer load levels than the loaded-latency curve: none, one stream,
    // half and all of them (the curve's knee and its end).
    let n = loaded.streamers.len();
    let mut counts = vec![0, 1.min(n), n.div_ceil(2), n];
    if profile == Profile::Quick {
        counts = vec![0, n];
    }
    counts.sort_unstable();
    counts.dedup();
    loaded.counts = counts;
    loaded.delays_us = delays_us(profile);
    RwMixPlan {
        loaded,
        mixes: mixes(profile),
        theory: crate::experiments::memory::bandwidth::dram_theory(machine, cpus),
    }
}

pub fn estimate(p: &RwMixPlan) -> f64 {
    loaded_latency::estimate(&p.loaded) * p.mixes.len() as f64
}

/// One mix's curve: its points (medians) and how much it moved.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MixCurveData {
    pub mix: String,
    pub reads_pct: f64,
    pub points: Vec<MixPoint>,
    /// Bytes of each of the mix's arrays (together they take the plan's bytes).
    pub array_bytes: usize,
    pub chain_bytes: usize,
}

/// One load level of a mix's curve (medians of the rounds).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MixPoint {
    pub streams: usize,
    /// µs each stream paused after each block (none: full speed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_us: Option<f64>,
    pub latency_ns: Option<f64>,
    pub bandwidth_gbs: Option<f64>,
}

/// The bandwidth record of the highest load: the rounds in which its
/// streams drew bandwidth (those that moved no byte left out, and said
/// so), or not available when none did.
fn load_bandwidth(p: &loaded_latency::LoadedPoint) -> ResultRecord {
    let ran = loaded_latency::drawn(&p.bandwidth_gbs);
    if ran.is_empty() {
        return ResultRecord::unavailable(
            BANDWIDTH.experiment,
            BANDWIDTH.metric,
            "GB/s",
            &starved(p.streams),
        );
    }
    let left_out = p.bandwidth_gbs.len() - ran.len();
    let r = ResultRecord::of(BANDWIDTH, "GB/s", true).with_samples(ran);
    if left_out == 0 {
        return r;
    }
    r.with_note(&format!(
        "{left_out} of {} rounds left out: the streams moved no byte in them (they got no CPU time: a busy machine)",
        p.bandwidth_gbs.len()
    ))
}

/// Why a load's bandwidth is not available when its streams moved no byte
/// in any round.
fn starved(streams: usize) -> String {
    format!(
        "the {streams} stream(s) moved no byte in any round: they got no CPU time while the chaser ran (a busy machine); no bandwidth to report, repeat on an idle machine"
    )
}

fn median(v: &[f64]) -> Option<f64> {
    Stats::from_samples(v).map(|s| s.median)
}

/// The records of one mix: bandwidth and latency at the highest load (with
/// their rounds as samples), and the curve.
fn mix_records(plan: &RwMixPlan, mix: &Mix, m: &Measured) -> Vec<ResultRecord> {
    let name = mix.name();
    let tag = |r: ResultRecord| {
        let mut r = r
            .with_param(MIX_PARAM, name.as_str())
            .with_param("reads_pct", format!("{:.0}", mix.reads_pct()).as_str())
            .with_param("store", mix.store.name())
            .with_method(&m.method, METHOD_VERSION);
        for n in &plan.loaded.notes {
            r = r.with_note(n);
        }
        r
    };
    let base = m.points.first().and_then(|p| median(&p.latency_ns));
    // The highest load: the most streams at full speed.
    let last = m
        .points
        .iter()
        .filter(|p| p.streams > 0 && p.delay_us == 0.0)
        .max_by_key(|p| p.streams);
    let mut out = Vec::new();
    let none = no_load_reason(plan);
    match last {
        Some(p) => {
            let streams = p.streams as u64;
            let bw = load_bandwidth(p);
            let bw = tag(bw).with_param("streams", streams);
            out.push(with_theory(bw, &plan.theory));
            let mut lat =
                tag(ResultRecord::of(LATENCY, "ns", false).with_samples(p.latency_ns.clone()))
                    .with_param("streams", streams);
            if let (Some(b), Some(v)) = (base, lat.value) {
                lat = lat.with_note(&format!("×{:.2} the unloaded latency ({b:.1} ns)", v / b));
            }
            out.push(lat);
        }
        None => {
            out.push(tag(ResultRecord::unavailable(
                BANDWIDTH.experiment,
                BANDWIDTH.metric,
                "GB/s",
                none,
            )));
            out.push(tag(ResultRecord::unavailable(
                LATENCY.experiment,
                LATENCY.metric,
                "ns",
                none,
            )));
        }
    }
    let points: Vec<MixPoint> = m
        .points
        .iter()
        .map(|p| MixPoint {
            streams: p.streams,
            delay_us: (p.delay_us > 0.0).then_some(p.delay_us),
            latency_ns: median(&p.latency_ns),
            bandwidth_gbs: (p.streams > 0)
                .then(|| median(&loaded_latency::drawn(&p.bandwidth_gbs)))
                .flatten(),
        })
        .collect();
    out.push(tag(knee_record(&points, base, none)));
    let loaded = last.and_then(|p| median(&p.latency_ns));
    let mut curve = tag(ResultRecord::of(CURVE, "ratio", false)).with_payload(&MixCurveData {
        mix: name.clone(),
        reads_pct: mix.reads_pct(),
        points,
        array_bytes: m.array_bytes,
        chain_bytes: plan.loaded.chain_bytes,
    });
    match (base, loaded) {
        (Some(b), Some(l)) => curve.value = Some(l / b),
        _ => curve.unavailable_reason = Some(none.into()),
    }
    out.push(curve);
    out
}

/// Why a mix has no loaded point: no CPU to load with, or it was cut short.
fn no_load_reason(plan: &RwMixPlan) -> &'static str {
    if plan.loaded.streamers.is_empty() {
        "no other usable CPU to generate load: only the unloaded point"
    } else {
        "stopped before a loaded point was measured (Ctrl-C, or a round given up)"
    }
}

/// The bandwidth record with its share of the DIMMs' theory, or why there
/// is none to compare with.
fn with_theory(r: ResultRecord, theory: &Result<(f64, String), String>) -> ResultRecord {
    let Some(v) = r.value else {
        return r;
    };
    let note = match theory {
        Ok((gbs, how)) => format!(
            "{:.0}% of the DIMMs' theoretical bandwidth ({how}; counted bytes: a write-allocating store also reads its line)",
            100.0 * v / gbs
        ),
        Err(why) => format!("share of the DIMMs' theory not known: {why}"),
    };
    r.with_note(&note)
}

/// The bandwidth at the knee of a mix's curve (latency twice the idle
/// one), from its points' medians, or the record saying why there is none
/// (`none`: no loaded point at all).
fn knee_record(points: &[MixPoint], idle: Option<f64>, none: &str) -> ResultRecord {
    let na = |why: &str| ResultRecord::unavailable(KNEE.experiment, KNEE.metric, "GB/s", why);
    let loaded: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.streams > 0)
        .filter_map(|p| Some((p.bandwidth_gbs?, p.latency_ns?)))
        .collect();
    let Some(b) = idle.and_then(|i| knee::bend(i, &loaded)) else {
        return na(none);
    };
    let sat = format!(
        "saturation: {:.1} GB/s at {:.0} ns (×{:.2} idle {:.0} ns), over {} loaded points",
        b.saturation_gbs,
        b.saturation_ns,
        b.saturation_ns / b.idle_ns,
        b.idle_ns,
        loaded.len()
    );
    match b.knee_gbs {
        Ok(k) => {
            let mut r = ResultRecord::of(KNEE, "GB/s", true).with_note(&format!(
                "latency reaches {}× idle ({:.0} ns) at ~{k:.1} GB/s, linear between the two points around it; {sat}",
                knee::KNEE_FACTOR,
                knee::KNEE_FACTOR * b.idle_ns
            ));
            r.value = Some(k);
            r
        }
        Err(why) => na(&why).with_note(&sat),
    }
}

impl Experiment for RwMix {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "DRAM latency under load for each read/write mix (all reads to all writes, latency vs bandwidth)"
    }
    fn estimate_secs(&self, machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> f64 {
        estimate(&plan(machine, cpus, profile))
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let p = plan(ctx.machine, &ctx.cpus, ctx.profile);
        if let Some(why) = &p.loaded.unavailable {
            for (id, unit) in [
                (BANDWIDTH, "GB/s"),
                (LATENCY, "ns"),
                (KNEE, "GB/s"),
                (CURVE, "ratio"),
            ] {
                out(ResultRecord::unavailable(
                    id.experiment,
                    id.metric,
                    unit,
                    why,
                ))?;
            }
            return Ok(());
        }
        let width = Width::widest().unwrap_or(Width::Scalar);
        // Every mix moves over the same bytes: its arrays share the plan's.
        let traffics: Vec<(Traffic, usize)> = p
            .mixes
            .iter()
            .map(|m| {
                let t = m.traffic(width);
                let bytes = p.loaded.array_bytes / t.arrays();
                (t, bytes)
            })
            .collect();
        let measured = loaded_latency::measure(ctx, &p.loaded, &traffics)?;
        for (mix, m) in p.mixes.iter().zip(&measured) {
            for r in mix_records(&p, mix, m) {
                out(r)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_are_named_by_their_read_share() {
        let names: Vec<(String, f64)> = mixes(Profile::Standard)
            .iter()
            .map(|m| (m.name(), m.reads_pct().round()))
            .collect();
        let (r, w) = (BwKernel::Read.name(), BwKernel::Write.name());
        assert_eq!(
            names,
            [
                (r.to_string(), 100.0),
                ("3:1".to_string(), 75.0),
                ("2:1".to_string(), 67.0),
                ("1:1".to_string(), 50.0),
                ("1:3".to_string(), 25.0),
                (w.to_string(), 0.0),
                ("1:1 nt".to_string(), 50.0),
                (format!("{w} nt"), 0.0),
            ]
        );
        assert_eq!(mixes(Profile::Quick)[0], ALL_READS);
        assert_eq!(mixes(Profile::Quick).len(), 4);
    }

    #[test]
    fn a_mix_without_load_says_why_and_keeps_its_idle_point() {
        let m = Measured {
            array_bytes: 1 << 20,
            points: vec![loaded_latency::LoadedPoint {
                streams: 0,
                delay_us: 0.0,
                latency_ns: vec![80.0, 81.0, 82.0],
                bandwidth_gbs: vec![0.0, 0.0, 0.0],
            }],
            method: "m".into(),
        };
        let machine = MachineInfo::default();
        let p = plan(&machine, &CpuSet::from_ids([0]), Profile::Quick);
        let recs = mix_records(&p, &p.mixes[0], &m);
        assert_eq!(recs.len(), 4);
        assert!(recs[0].value.is_none() && recs[0].unavailable_reason.is_some());
        assert!(recs[2].is(KNEE) && recs[2].value.is_none());
        let d = recs[3].data_as::<MixCurveData>().expect("curve data");
        assert_eq!(d.points.len(), 1);
        assert_eq!(d.points[0].latency_ns, Some(81.0));
        assert_eq!(d.points[0].bandwidth_gbs, None);
    }

    #[test]
    fn starved_streams_are_no_load_not_zero_bandwidth() {
        let m = Measured {
            array_bytes: 1 << 20,
            points: vec![
                point(0, 0.0, 100.0, 0.0),
                loaded_latency::LoadedPoint {
                    streams: 2,
                    delay_us: 0.0,
                    latency_ns: vec![120.0; 3],
                    bandwidth_gbs: vec![0.0, 0.0, 0.0],
                },
            ],
            method: "m".into(),
        };
        let machine = MachineInfo::default();
        let p = plan(&machine, &CpuSet::from_ids([0]), Profile::Quick);
        let recs = mix_records(&p, &p.mixes[0], &m);
        assert!(
            recs[0].is(BANDWIDTH) && recs[0].value.is_none(),
            "{:?}",
            recs[0]
        );
        assert!(recs[0]
            .unavailable_reason
            .as_deref()
            .is_some_and(|r| r.contains("moved no byte")));
        let d = recs[3].data_as::<MixCurveData>().expect("curve data");
        assert_eq!(d.points[1].bandwidth_gbs, None);
        // Some rounds starved: those are left out, and the record says so.
        let mut m = m;
        m.points[1].bandwidth_gbs = vec![0.0, 8.0, 9.0];
        let recs = mix_records(&p, &p.mixes[0], &m);
        assert_eq!(recs[0].value, Some(8.5));
        assert!(recs[0]
            .notes
            .iter()
            .any(|n| n.starts_with("1 of 3 rounds left out")));
    }

    fn point(streams: usize, delay_us: f64, ns: f64, gbs: f64) -> loaded_latency::LoadedPoint {
        loaded_latency::LoadedPoint {
            streams,
            delay_us,
            latency_ns: vec![ns; 3],
            bandwidth_gbs: vec![gbs; 3],
        }
    }

    #[test]
    fn the_highest_load_is_full_speed_and_the_sweep_finds_the_knee() {
        // Measured in plan order: counts at full speed, then the most
        // streams at each delay, lightest first.
        let m = Measured {
            array_bytes: 1 << 20,
            points: vec![
                point(0, 0.0, 100.0, 0.0),
                point(2, 0.0, 400.0, 40.0),
                point(2, 200.0, 110.0, 5.0),
                point(2, 50.0, 150.0, 20.0),
                point(2, 12.5, 250.0, 35.0),
            ],
            method: "m".into(),
        };
        let machine = MachineInfo::default();
        let p = plan(&machine, &CpuSet::from_ids([0, 1, 2]), Profile::Standard);
        assert_eq!(p.loaded.levels().len(), p.loaded.counts.len() + 6);
        assert!(p
            .loaded
            .levels()
            .iter()
            .skip(p.loaded.counts.len())
            .all(|l| l.0 == 2));
        let recs = mix_records(&p, &p.mixes[0], &m);
        let bw = recs.iter().find(|r| r.is(BANDWIDTH)).unwrap();
        assert_eq!(bw.value, Some(40.0));
        assert!(bw
            .notes
            .iter()
            .any(|n| n.contains("share of the DIMMs' theory not known")));
        let lat = recs.iter().find(|r| r.is(LATENCY)).unwrap();
        assert_eq!(lat.value, Some(400.0));
        // 200 ns lies halfway from (20 GB/s, 150 ns) to (35, 250).
        let knee = recs.iter().find(|r| r.is(KNEE)).unwrap();
        assert!((knee.value.unwrap() - 27.5).abs() < 1e-9, "{knee:?}");
        let d = recs
            .iter()
            .find_map(|r| r.data_as::<MixCurveData>())
            .unwrap();
        assert_eq!(d.points.len(), 5);
        assert_eq!(d.points[2].delay_us, Some(200.0));
        assert_eq!(d.points[1].delay_us, None);
        // With the DIMMs known, the bandwidth says its share of their theory.
        let mut p = p;
        p.theory = Ok((160.0, "160.0 GB/s: 8 channels".into()));
        let recs = mix_records(&p, &p.mixes[0], &m);
        let bw = recs.iter().find(|r| r.is(BANDWIDTH)).unwrap();
        assert!(
            bw.notes
                .iter()
                .any(|n| n.starts_with("25% of the DIMMs' theoretical bandwidth (160.0 GB/s")),
            "{:?}",
            bw.notes
        );
        // A mix cut short before its loaded points says so, not "no CPU".
        let cut = Measured {
            points: vec![point(0, 0.0, 100.0, 0.0)],
            ..m
        };
        let recs = mix_records(&p, &p.mixes[0], &cut);
        let why = recs[0].unavailable_reason.as_deref().unwrap_or_default();
        assert!(why.starts_with("stopped before a loaded point"), "{why}");
    }
}

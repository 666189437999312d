//! What bandwidth shows (docs/views.md): its place among the experiments, its
//! section of the summary, its charts in the report, its verdict lines, the
//! curves compare overlays, the figures the fleet compares across hosts and
//! its rules of advice.

use super::{DRAM_SCOPE, TRIAD};
use crate::base::fmt::fmt_num;
use crate::experiments::common::{Placement, PLACEMENT_PARAM};
use crate::experiments::memory::payload::BandwidthData;
use crate::experiments::memory::payload::SaturationData;
use crate::machine::dimm::MemoryDevices;
use crate::results::schema::{ResultRecord, Run};
use crate::view::finding::{ev, from_result, noisy_note, param_num, Finding, Severity};
use crate::view::verdict::{fig, has, na_part, short};
use crate::view::Curve;
use crate::view::{
    param_text, Axis, Block, Chart, ChartKind, Depth, KeyFigure, Rank, Rule, Scale, Section,
    Series, Ticks, VerdictLine, Views,
};
use std::collections::BTreeMap;

/// The views of this experiment (the registry holds it).
pub struct BandwidthViews;

impl Views for BandwidthViews {
    fn rules(&self) -> &'static [Rule] {
        RULES
    }

    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        bandwidth_line(run).into_iter().collect()
    }

    fn curves(&self, rec: &ResultRecord) -> Vec<Curve> {
        saturation_curve(rec)
    }

    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        crate::experiments::memory::text::summary_or_report(run, super::EXP, depth, || {
            vec![Block::Chart(threads_chart(run))]
        })
    }

    fn rank(&self) -> Rank {
        Rank(40)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// Triad with normal stores over a DRAM-sized buffer.
fn dram_triad(r: &ResultRecord) -> bool {
    has(r, "scope", DRAM_SCOPE) && has(r, "store", "normal")
}

/// [`dram_triad`] on one thread.
fn dram_triad_one_thread(r: &ResultRecord) -> bool {
    dram_triad(r) && has(r, "threads", "1")
}

/// The report's chart: GB/s as threads grow, one line per kernel, width
/// and placement of a saturation figure.
fn threads_chart(run: &Run) -> Chart {
    let mut series = Vec::new();
    for r in run.records_of(super::EXP) {
        if !r.is(super::SATURATION_THREADS) {
            continue;
        }
        let Some(d) = r.data_as::<SaturationData>() else {
            continue;
        };
        let points: Vec<(f64, f64)> = d
            .curve
            .iter()
            .filter_map(|&(n, g)| Some((n as f64, g?)))
            .collect();
        if points.len() > 1 {
            let p = |k: &str| param_text(r, k).unwrap_or_default();
            series.push(Series {
                name: Some(format!(
                    "{} {} {}",
                    p("kernel"),
                    p("width"),
                    p(PLACEMENT_PARAM)
                )),
                points,
                hue: None,
            });
        }
    }
    Chart {
        title: "Memory bandwidth vs threads (counted bytes)".into(),
        caption: None,
        kind: ChartKind::Lines {
            x: Axis {
                ticks: Ticks::Count,
                ..Axis::new("threads", "", Scale::Linear)
            },
            y: Axis::new("bandwidth", "GB/s", Scale::Linear),
            series,
            reference: None,
            marks: Vec::new(),
        },
    }
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: TRIAD,
        label: "triad, all threads",
        keep: dram_triad,
        top: Some("threads"),
    },
    KeyFigure {
        id: TRIAD,
        label: "triad, one thread",
        keep: dram_triad_one_thread,
        top: None,
    },
];

/// Its rules of advice ([`Views::rules`]).
const RULES: &[Rule] = &[
    Rule {
        id: "dimm-population",
        rank: 90,
        timed: false,
        find: dimm_population,
    },
    Rule {
        id: "memory-bandwidth-saturation",
        rank: 50,
        timed: true,
        find: memory_bandwidth_saturation,
    },
];

/// Memory bandwidth stops growing after k threads (of more measured).
pub fn memory_bandwidth_saturation(run: &Run) -> Vec<Finding> {
    let groups = thread_count_groups(run);
    // One finding per experiment, node and placement: the variant with the highest peak.
    let mut best: BTreeMap<String, (f64, Finding)> = BTreeMap::new();
    for (_, pts) in groups {
        let Some((where_key, max, f)) = saturation_finding(pts) else {
            continue;
        };
        if best.get(&where_key).is_none_or(|b| max > b.0) {
            best.insert(where_key, (max, f));
        }
    }
    best.into_values().map(|(_, f)| f).collect()
}

/// One bandwidth figure at a thread count: (threads, value, its record).
type ThreadPoint<'a> = (f64, f64, &'a ResultRecord);

/// Bandwidth records that differ only by a numeric thread count, grouped.
fn thread_count_groups(run: &Run) -> BTreeMap<String, Vec<ThreadPoint<'_>>> {
    let mut groups: BTreeMap<String, Vec<ThreadPoint>> = BTreeMap::new();
    for r in &run.results {
        let bw_unit = matches!(r.unit.as_str(), "GB/s" | "GiB/s" | "MB/s" | "MiB/s");
        if !bw_unit || !r.higher_is_better {
            continue;
        }
        // Cache-level bandwidth saturates for other reasons: memory only.
        if param_text(r, "scope").is_some_and(|sc| sc != super::DRAM_SCOPE && sc != "memory") {
            continue;
        }
        let Some(v) = r.value else { continue };
        let Some(k) = ["threads", "cores", "threads_per_node", "cores_per_node"]
            .iter()
            .find_map(|p| param_num(r, p))
        else {
            continue;
        };
        let mut rest = r.params.clone();
        for p in [
            "threads",
            "cores",
            "threads_per_node",
            "cores_per_node",
            "cpus",
        ] {
            rest.remove(p);
        }
        let g = format!(
            "{}:{}:{}:{}",
            r.experiment,
            r.metric,
            r.unit,
            serde_json::to_string(&rest).unwrap_or_default()
        );
        groups.entry(g).or_default().push((k, v, r));
    }
    groups
}

/// The saturation finding of one group of thread counts, with the key of
/// its experiment, node and placement and its peak; None when the curve
/// is too short, flat, or still growing at its last point.
fn saturation_finding(mut pts: Vec<ThreadPoint>) -> Option<(String, f64, Finding)> {
    const NEAR_MAX: f64 = 0.90;
    if pts.len() < 3 {
        return None;
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let max = pts.iter().map(|p| p.1).fold(0.0f64, f64::max);
    let kmax = pts.last().map(|p| p.0).unwrap_or(0.0);
    let sat = pts.iter().find(|p| p.1 >= NEAR_MAX * max)?;
    if sat.0 >= kmax || max <= 0.0 {
        return None;
    }
    // It must actually have grown before: a flat curve says nothing about saturation.
    if pts[0].1 > NEAR_MAX * max {
        return None;
    }
    let r = sat.2;
    let node = ["node", "mem_node", "cpu_node"]
        .iter()
        .find_map(|p| param_text(r, p));
    let scope = node
        .map(|n| format!("node {n}"))
        .unwrap_or_else(|| "the measured CPUs".into());
    let evidence = pts
        .iter()
        .map(|(k, v, rec)| {
            ev(
                format!("{}: {} with {k} thread(s)", rec.experiment, rec.metric),
                format!("{} {}", fmt_num(*v), rec.unit),
                from_result(rec),
            )
        })
        .collect();
    let recs: Vec<&ResultRecord> = pts.iter().map(|p| p.2).collect();
    let where_key = format!(
        "{}|{scope}|{}",
        r.experiment,
        param_text(r, PLACEMENT_PARAM).unwrap_or_default()
    );
    // Each placement is its own curve: say which one this is.
    let placed = param_text(r, PLACEMENT_PARAM)
        .map(|p| {
            let words = Placement::parse(&p).map(Placement::words).unwrap_or(&p);
            format!(" with threads {words}")
        })
        .unwrap_or_default();
    let f = Finding {
        rule: "memory-bandwidth-saturation",
        severity: Severity::Advice,
        title: format!(
            "memory bandwidth of {scope} saturates at {} thread(s){placed}: {} of {} {} peak ({} threads measured)",
            sat.0,
            fmt_num(sat.1),
            fmt_num(max),
            r.unit,
            kmax
        ),
        advice: format!(
            "More than {} memory-bound threads on {scope} add no bandwidth, only queueing. Spread \
             memory-bound work across nodes (each node's controllers give their own bandwidth) and use \
             the remaining cores for compute-bound work.{}",
            sat.0,
            noisy_note(&recs)
        ),
        evidence,
    };
    Some((where_key, max, f))
}

/// Channels empty while others hold DIMMs, or DIMMs of mixed sizes or
/// speeds: the controller interleaves over fewer or unequal channels, a
/// common cause of lost bandwidth. Not on a table a hypervisor invented.
pub fn dimm_population(run: &Run) -> Vec<Finding> {
    let m = run.machine_info();
    let md = &m.memory_devices;
    if md.dimms.is_empty() || md.notes.iter().any(|n| n.contains("invented")) {
        return Vec::new();
    }
    let s = &md.summary;
    let (all, empty_channels) = channels_and_empty(md);
    let mixed = s.sizes.len() > 1 || s.speeds_mts.len() > 1;
    if empty_channels.is_empty() && !mixed {
        return Vec::new();
    }
    let mut evidence = Vec::new();
    let mut what = Vec::new();
    if !empty_channels.is_empty() {
        what.push(format!(
            "{} of {} memory channels empty",
            empty_channels.len(),
            all.len()
        ));
        evidence.push(ev(
            "channels without a DIMM (from the slot locators)",
            empty_channels.join(", "),
            "machine memory_devices.dimms (SMBIOS type 17)",
        ));
    }
    if mixed {
        what.push(
            s.balance_note
                .clone()
                .unwrap_or_else(|| "mixed DIMMs".into()),
        );
        evidence.push(ev(
            "DIMM sizes and speeds",
            format!("{} size(s), speeds {:?} MT/s", s.sizes.len(), s.speeds_mts),
            "machine memory_devices.summary",
        ));
    }
    if let Some(b) = &md.theoretical_bandwidth {
        evidence.push(ev(
            "theoretical DRAM bandwidth of the populated channels",
            format!("{} GB/s", fmt_num(b.gbs)),
            "machine memory_devices.theoretical_bandwidth",
        ));
    }
    let eff = run
        .records(super::TRIAD)
        .filter(|r| r.value.is_some())
        .filter_map(|r| Some((r, r.data_as::<BandwidthData>()?.dram_efficiency?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((r, e)) = eff {
        evidence.push(ev(
            "best triad against that theoretical bandwidth",
            format!("{:.0}%", e * 100.0),
            from_result(r),
        ));
    }
    vec![Finding {
        rule: "dimm-population",
        severity: if empty_channels.is_empty() { Severity::Advice } else { Severity::Warning },
        title: format!("unbalanced memory population: {}", what.join("; ")),
        advice: "Memory bandwidth scales with the populated channels, and the controller interleaves evenly only over channels with the same capacity and speed: populate every channel of every socket alike (same size, rank and speed) before comparing this machine's bandwidth with its peers."
            .into(),
        evidence,
    }]
}

/// The memory channels named by the slot locators, and those of them
/// without a populated DIMM.
fn channels_and_empty(md: &MemoryDevices) -> (Vec<&str>, Vec<&str>) {
    let mut all: Vec<&str> = md
        .dimms
        .iter()
        .filter_map(|d| d.channel.as_deref())
        .collect();
    all.sort_unstable();
    all.dedup();
    let mut used: Vec<&str> = md
        .dimms
        .iter()
        .filter(|d| d.populated())
        .filter_map(|d| d.channel.as_deref())
        .collect();
    used.sort_unstable();
    used.dedup();
    let empty_channels: Vec<&str> = all.iter().filter(|c| !used.contains(c)).copied().collect();
    (all, empty_channels)
}

// ---------------------------------------------------------------- verdict

fn bandwidth_line(run: &Run) -> Option<VerdictLine> {
    let dram: Vec<&ResultRecord> = run
        .records(super::TRIAD)
        .filter(|r| r.value.is_some())
        .filter(|r| dram_triad(r))
        .filter(|r| !has(r, "width", "scalar"))
        .filter(|r| param_text(r, PLACEMENT_PARAM).is_none_or(|p| p == "compact"))
        .collect();
    let threads = |r: &&ResultRecord| {
        param_text(r, "threads")
            .and_then(|t| t.parse::<usize>().ok())
            .unwrap_or(0)
    };
    let Some(one) = dram.iter().find(|r| threads(r) == 1) else {
        // No DRAM figure (a container's memory limit): why, in one line.
        let dram_scope = |r: &ResultRecord| has(r, "scope", super::DRAM_SCOPE);
        let na = na_part(run, super::TRIAD, "DRAM triad", 60, dram_scope)?;
        return Some(VerdictLine::plain("Bandwidth", na));
    };
    let all = dram.iter().max_by_key(|r| threads(r))?;
    let mut t = format!("triad one core {}", fig(one));
    if threads(all) > 1 {
        t.push_str(&format!(" · {} threads {}", threads(all), fig(all)));
    }
    let bw = all.data_as::<BandwidthData>().unwrap_or_default();
    match bw.dram_efficiency {
        Some(e) => t.push_str(&format!(
            " = {:.0}% of the DIMMs' {} GB/s",
            e * 100.0,
            fmt_num(bw.theoretical_gbs.unwrap_or(0.0))
        )),
        None => {
            if let Some(n) = all
                .notes
                .iter()
                .find(|n| n.starts_with("theoretical DRAM bandwidth not available"))
            {
                let why = n.split_once(": ").map(|x| x.1).unwrap_or(n);
                t.push_str(&format!(" · theory n/a ({})", short(why, 60)));
            }
        }
    }
    Some(VerdictLine::plain("Bandwidth", t))
}

// ---------------------------------------------------------------- curves

/// `bandwidth.saturation_threads`: the sweep's median GB/s against the
/// thread count (counts without a figure left out).
pub fn saturation_curve(rec: &ResultRecord) -> Vec<Curve> {
    if !rec.is(super::SATURATION_THREADS) {
        return Vec::new();
    }
    let Some(d) = rec.data_as::<SaturationData>() else {
        return Vec::new();
    };
    let points = d
        .curve
        .iter()
        .filter_map(|&(n, g)| Some((n as f64, g?)))
        .collect();
    crate::view::curve("threads", "", "GB/s", points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_curve_skips_counts_without_a_figure() {
        let rec = ResultRecord::of(super::super::SATURATION_THREADS, "threads", false)
            .with_payload(&SaturationData {
                curve: vec![(1, Some(10.0)), (2, None), (4, Some(19.0))],
            });
        let c = saturation_curve(&rec);
        assert_eq!(c[0].points, vec![(1.0, 10.0), (4.0, 19.0)]);
        assert_eq!(
            (
                c[0].x_label.as_str(),
                c[0].x_unit.as_str(),
                c[0].y_unit.as_str()
            ),
            ("threads", "", "GB/s")
        );
    }
}

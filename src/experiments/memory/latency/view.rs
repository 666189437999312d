//! What the latency ladder shows (docs/views.md): its place among the
//! experiments, its section of the summary, its charts in the report, its
//! verdict lines, the curves compare overlays, the figures the fleet compares
//! across hosts and its rules of advice.

use super::{Pattern, DRAM, L1D, L2, L3};
use crate::base::fmt::{fmt_num, fmt_size};
use crate::experiments::common::LEVEL_NAMES;
use crate::experiments::memory::payload::CurveData;
use crate::experiments::memory::payload::{ClimbData, DramData, LevelData};
use crate::results::schema::{ResultRecord, Run};
use crate::view::finding::{ev, from_result, Finding, Severity};
use crate::view::verdict::{find, has, na_part, noisy_mark};
use crate::view::Curve;
use crate::view::{
    param_text, Axis, Block, Chart, ChartKind, Depth, KeyFigure, Rank, Rule, Scale, Section,
    Series, Ticks, VerdictLine, Views, XMark,
};

/// The views of this experiment (the registry holds it).
pub struct LatencyViews;

impl Views for LatencyViews {
    fn rules(&self) -> &'static [Rule] {
        RULES
    }

    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        latency_lines(run)
    }

    fn curves(&self, rec: &ResultRecord) -> Vec<Curve> {
        curve_of(rec)
    }

    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        crate::experiments::memory::text::summary_or_report(run, super::EXP, depth, || {
            vec![Block::Chart(curve_chart(run))]
        })
    }

    fn rank(&self) -> Rank {
        Rank(20)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// The report's chart: every curve of the run (fastest sample per size),
/// marked where the first curve's caches are declared and where it shows
/// an effective share, memory and a page-walk climb begin.
fn curve_chart(run: &Run) -> Chart {
    let mut series = Vec::new();
    let mut marks: Vec<XMark> = Vec::new();
    let mark = |x: usize, label: String| XMark { x: x as f64, label };
    for r in run.records_of(super::EXP).filter(|r| r.is(super::CURVE)) {
        let Some(d) = r.data_as::<CurveData>() else {
            continue;
        };
        let p = |k: &str| param_text(r, k).unwrap_or_default();
        series.push(Series {
            name: Some(format!("{} {}", p("pattern"), p("pages"))),
            points: d.points.iter().map(|p| (p.bytes as f64, p.min)).collect(),
            hue: None,
        });
        if marks.is_empty() {
            for l in &d.levels {
                marks.push(mark(l.declared_bytes, format!("{} (sysfs)", l.name)));
                if let (true, Some(e)) = (l.share, l.detected_bytes) {
                    marks.push(mark(e, format!("{} effective (measured)", l.name)));
                }
            }
            if let Some(m) = &d.memory {
                marks.push(mark(m.from_bytes, "memory (measured)".into()));
                if let Some(c) = &m.climb {
                    marks.push(mark(c.from_bytes, "page-walk climb".into()));
                }
            }
        }
    }
    Chart {
        title: "Load-to-use latency vs working set".into(),
        caption: Some("The fastest sample per size. Dashed: the cache sizes sysfs declares, and where the first curve shows an effective cache share, memory and a page-walk climb begin (measured).".into()),
        kind: ChartKind::Lines {
            x: Axis {
                ticks: Ticks::Bytes,
                ..Axis::new("working set", "bytes", Scale::Log)
            },
            y: Axis::new("latency", "ns", Scale::Log),
            series,
            reference: None,
            marks,
        },
    }
}

/// The random pointer chase (the ladder's figures; the sequential one is
/// the prefetcher's).
fn random_chase(r: &ResultRecord) -> bool {
    has(r, "pattern", Pattern::Random.name())
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: L1D,
        label: "L1d latency",
        keep: random_chase,
        top: None,
    },
    KeyFigure {
        id: L2,
        label: "L2 latency",
        keep: random_chase,
        top: None,
    },
    KeyFigure {
        id: L3,
        label: "L3 latency",
        keep: random_chase,
        top: None,
    },
    KeyFigure {
        id: DRAM,
        label: "DRAM latency",
        keep: random_chase,
        top: None,
    },
];

/// Its rules of advice ([`Views::rules`]).
const RULES: &[Rule] = &[Rule {
    id: "cache-latency-vs-published",
    rank: 100,
    timed: true,
    find: cache_latency_vs_published,
}];

/// A cache level's measured load-to-use cycles more than 20% off the
/// core's published figure (the latency experiment marks them).
pub fn cache_latency_vs_published(run: &Run) -> Vec<Finding> {
    use crate::experiments::memory::payload::PublishedData;
    let mut out = Vec::new();
    for id in [super::L1D_CYCLES, super::L2_CYCLES, super::L3_CYCLES] {
        // One finding per level: the 2 MiB-page curve first (no TLB cost).
        let mut recs: Vec<&ResultRecord> = run
            .records(id)
            .filter(|r| r.value.is_some())
            .filter(|r| r.data_as::<PublishedData>().and_then(|d| d.finding) == Some(true))
            .collect();
        recs.sort_by_key(|r| !has(r, "pages", "2m"));
        let Some(r) = recs.first() else {
            continue;
        };
        let d = r.data_as::<PublishedData>().unwrap_or_default();
        let (Some(m), Some(p)) = (r.value, d.published_cycles) else {
            continue;
        };
        let level = id.metric.trim_end_matches("_cycles");
        out.push(Finding {
            rule: "cache-latency-vs-published",
            severity: Severity::Advice,
            title: format!(
                "{level} latency measured {} cycles, published {} ({:+.0}%)",
                fmt_num(m),
                fmt_num(p),
                (m / p - 1.0) * 100.0
            ),
            advice: format!(
                "The measured {level} plateau is not what this core's documentation gives. In a VM the cache may be shared with other tenants or partitioned by the host; on 4 KiB pages the plateau may be TLB misses rather than the cache; a cache the kernel declares with a different size moves the step. Check the latency curve (cpuscope show RUN --all) before sizing work to this level. Published figure: {}.",
                d.published_source.as_deref().unwrap_or("knowledge base")
            ),
            evidence: vec![
                ev(format!("measured {level} load-to-use"), format!("{} cycles", fmt_num(m)), from_result(r)),
                ev(
                    format!("published {level} load-to-use"),
                    format!("{} cycles", fmt_num(p)),
                    "machine uarch (data/uarch/)",
                ),
            ],
        });
    }
    out
}

// ---------------------------------------------------------------- verdict

/// The latency line: the random-chase curve's levels and DRAM, on 2 MiB
/// pages (no TLB cost), else on 4 KiB pages.
fn latency_lines(run: &Run) -> Vec<VerdictLine> {
    let measured = |id, p: &str| {
        find(run, id, |r| {
            has(r, "pages", p) && has(r, "pattern", "random")
        })
        .is_some()
    };
    // A curve without a DRAM figure (a container's memory limit) still
    // shows its levels, and says why DRAM is not there.
    let pages = ["2m", "4k"];
    pages
        .into_iter()
        .find(|p| measured(super::DRAM, p))
        .or_else(|| pages.into_iter().find(|p| measured(super::L1D, p)))
        .map(|pg| curve_line(run, pg))
        .into_iter()
        .collect()
}

/// One line of the random-chase curve on `pg` pages: each cache level, DRAM
/// (on the memory plateau it is read on) and any page-walk climb beyond.
fn curve_line(run: &Run, pg: &str) -> VerdictLine {
    let on_pages = |r: &ResultRecord| has(r, "pages", pg) && has(r, "pattern", "random");
    let pick = |id| find(run, id, on_pages);
    let mut parts = Vec::new();
    for name in LEVEL_NAMES.iter().take(3) {
        let Some((ns_id, cy_id)) = super::level(name) else {
            continue;
        };
        parts.extend(na_part(run, ns_id, name, 40, on_pages));
        if let Some(ns) = pick(ns_id) {
            let cy = pick(cy_id)
                .and_then(|c| c.value)
                .map(|c| format!(" ({c:.0} c)"))
                .unwrap_or_default();
            let share = ns
                .data_as::<LevelData>()
                .map(|d| d.level)
                .filter(|m| m.share)
                .map(|m| {
                    format!(
                        " (effective ~{} of {} declared)",
                        fmt_size(m.detected_bytes.unwrap_or(0)),
                        fmt_size(m.declared_bytes)
                    )
                })
                .unwrap_or_default();
            parts.push(format!(
                "{name} {} ns{cy}{share}{}",
                fmt_num(ns.value.unwrap_or(0.0)),
                noisy_mark(ns)
            ));
        }
    }
    if let Some(d) = pick(super::DRAM) {
        let cy = pick(super::DRAM_CYCLES)
            .and_then(|c| c.value)
            .map(|c| format!(" ({c:.0} c)"))
            .unwrap_or_default();
        let plateau = d
            .data_as::<DramData>()
            .and_then(|p| p.memory_plateau_bytes)
            .map(|[a, b]| format!(" on {}–{}", fmt_size(a), fmt_size(b)))
            .unwrap_or_default();
        parts.push(format!(
            "DRAM {} ns{cy}{plateau}{}",
            fmt_num(d.value.unwrap_or(0.0)),
            noisy_mark(d)
        ));
    } else {
        parts.extend(na_part(run, super::DRAM, "DRAM", 40, on_pages));
    }
    if let Some(c) = pick(super::PAGE_WALK_CLIMB) {
        let from = c.data_as::<ClimbData>().map(|d| d.climb);
        if let (Some(v), Some(cl)) = (c.value, from) {
            parts.push(format!(
                "then {v:+.0} ns per doubling from {} (page walks, not DRAM)",
                fmt_size(cl.from_bytes)
            ));
        }
    }
    parts.extend(giant_part(run, pg));
    VerdictLine::plain(
        "Latency",
        format!(
            "{}   [{} pages, random chase]",
            parts.join(" · "),
            if pg == "2m" { "2 MiB" } else { "4 KiB" }
        ),
    )
}

/// What 1 GiB pages saved against the 2 MiB curve, when both were measured.
fn giant_part(run: &Run, pg: &str) -> Option<String> {
    use super::giant::GiantSavingData;
    if pg != "2m" {
        return None;
    }
    let r = find(run, super::GIANT_PAGE_SAVING, |_| true)?;
    let d = r.data_as::<GiantSavingData>()?;
    let v = r.value?;
    let at = fmt_size(d.bytes);
    Some(if d.within_noise {
        format!("1 GiB pages {:+.0} ns at {at}: within the noise", -v)
    } else if v > 0.0 {
        format!("1 GiB pages save {v:.0} ns at {at} (the page walks they avoid)")
    } else {
        format!("1 GiB pages {:+.0} ns at {at}, slower than 2 MiB pages", -v)
    })
}

// ---------------------------------------------------------------- curves

/// `latency.curve`: ns per load against the working set.
pub fn curve_of(rec: &ResultRecord) -> Vec<Curve> {
    if !rec.is(super::CURVE) {
        return Vec::new();
    }
    let Some(d) = rec.data_as::<CurveData>() else {
        return Vec::new();
    };
    let points = d.points.iter().map(|p| (p.bytes as f64, p.ns)).collect();
    crate::view::curve("working set", "bytes", "ns", points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::memory::payload::CurvePoint;

    #[test]
    fn latency_curve() {
        let p = |bytes, ns| CurvePoint {
            bytes,
            ns,
            ..CurvePoint::default()
        };
        let rec = ResultRecord::of(super::super::CURVE, "ns", false).with_payload(&CurveData {
            points: vec![p(4096, 1.1), p(1048576, 9.5)],
            ..CurveData::default()
        });
        let c = curve_of(&rec);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].points, vec![(4096.0, 1.1), (1048576.0, 9.5)]);
        assert_eq!(
            (
                c[0].x_label.as_str(),
                c[0].x_unit.as_str(),
                c[0].y_unit.as_str()
            ),
            ("working set", "bytes", "ns")
        );
        assert_eq!((c[0].name.clone(), c[0].log_x), (None, None));
        // One point is no curve; another metric's record is not read.
        let one = ResultRecord::of(super::super::CURVE, "ns", false).with_payload(&CurveData {
            points: vec![p(4096, 1.1)],
            ..CurveData::default()
        });
        assert!(curve_of(&one).is_empty());
        assert!(curve_of(&ResultRecord::of(super::super::DRAM, "ns", false)).is_empty());
    }
}

//! What the read/write mixes show (docs/views.md): typed sections (a table
//! of the mixes at the highest load, and in the report the latency-vs-
//! bandwidth curve of every mix as one chart), drawn by the printers; its
//! verdict line, the figures the fleet compares and the curves compare
//! overlays. The first experiment whose sections are typed: it writes no
//! text layout and no HTML.

use super::{MixCurveData, ALL_READS, BANDWIDTH, CURVE, KNEE, LATENCY, MIX_PARAM};
use crate::base::fmt::fmt_num;
use crate::experiments::render::figure_list;
use crate::results::schema::{ResultRecord, Run};
use crate::view::verdict::{fig, has, na_part};
use crate::view::{
    param_text, Align, Axis, Block, Cell, Chart, ChartKind, Curve, Depth, Figure, KeyFigure, Rank,
    Scale, Section, Series, Table, VerdictLine, Views,
};

/// The views of this experiment (the registry holds it).
pub struct RwMixViews;

impl Views for RwMixViews {
    fn rank(&self) -> Rank {
        Rank(43)
    }

    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        if run.records_of(super::EXP).next().is_none() {
            return Vec::new();
        }
        let curves = curves_of(run);
        let mut blocks = Vec::new();
        if depth == Depth::Summary {
            blocks.extend(figure_list(super::EXP, run).map(Block::Figures));
        }
        if !curves.is_empty() {
            blocks.push(Block::Table(mix_table(run, &curves)));
        }
        if depth == Depth::Report {
            if let Some(c) = mix_chart(&curves) {
                blocks.push(Block::Chart(c));
            }
        }
        if blocks.is_empty() {
            return Vec::new();
        }
        vec![Section {
            id: "rw-mix".into(),
            title: String::new(),
            blocks,
        }]
    }

    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        mix_line(run).into_iter().collect()
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }

    fn curves(&self, rec: &ResultRecord) -> Vec<Curve> {
        mix_curve(rec)
    }
}

/// Each mix's curve record with its data, in the order measured.
fn curves_of(run: &Run) -> Vec<(&ResultRecord, MixCurveData)> {
    run.records(CURVE)
        .filter_map(|r| Some((r, r.data_as::<MixCurveData>()?)))
        .collect()
}

/// The record of `id` for mix `mix` (measured or not).
fn of_mix<'a>(
    run: &'a Run,
    id: crate::results::schema::MetricId,
    mix: &str,
) -> Option<&'a ResultRecord> {
    run.records(id).find(|r| has(r, MIX_PARAM, mix))
}

fn figure(r: Option<&ResultRecord>, unit: &str) -> Cell {
    Cell::Figure(match r {
        Some(r) => Figure::of(r),
        None => Figure::na(unit, "not measured in this run"),
    })
}

/// The mixes at the highest load: reads share, idle latency, loaded
/// latency, bandwidth, the streams that drew it and, where the load was
/// swept by injection delay, the bandwidth at the knee.
fn mix_table(run: &Run, curves: &[(&ResultRecord, MixCurveData)]) -> Table {
    let swept = run.records(KNEE).next().is_some();
    let mut heads = vec!["mix", "reads", "idle", "loaded", "bandwidth", "streams"];
    if swept {
        heads.push("knee");
    }
    let mut t = Table::new(&heads);
    for (i, unit) in [(1, "%"), (2, "ns"), (3, "ns"), (4, "GB/s"), (6, "GB/s")] {
        if let Some(c) = t.columns.get_mut(i) {
            c.unit = Some(unit.into());
        }
    }
    for c in t.columns.iter_mut().skip(1) {
        c.align = Align::Right;
    }
    t.caption = Some("Read/write mixes at the highest load (latency vs bandwidth)".into());
    for (_, d) in curves {
        let idle = d
            .points
            .first()
            .and_then(|p| p.latency_ns)
            .map(|v| Figure::measured(v, "ns"));
        let bw = of_mix(run, BANDWIDTH, &d.mix);
        let streams = bw
            .and_then(|r| param_text(r, "streams"))
            .unwrap_or_else(|| "-".into());
        let mut row = vec![
            Cell::Text(d.mix.clone()),
            Cell::Text(format!("{:.0}", d.reads_pct)),
            Cell::Figure(idle.unwrap_or_else(|| Figure::na("ns", "no unloaded point"))),
            figure(of_mix(run, LATENCY, &d.mix), "ns"),
            figure(bw, "GB/s"),
            Cell::Text(streams),
        ];
        if swept {
            row.push(figure(of_mix(run, KNEE, &d.mix), "GB/s"));
        }
        let _ = t.push(row);
    }
    t
}

/// The latency-vs-bandwidth curve of every mix, one series each.
fn mix_chart(curves: &[(&ResultRecord, MixCurveData)]) -> Option<Chart> {
    let series: Vec<Series> = curves
        .iter()
        .filter_map(|(_, d)| Series::finite(Some(&d.mix), points(d)))
        .collect();
    if series.is_empty() {
        return None;
    }
    let swept = curves
        .iter()
        .any(|(_, d)| d.points.iter().any(|p| p.delay_us.is_some()));
    Some(Chart {
        title: "Latency under load per read/write mix".into(),
        caption: Some(format!(
            "Each line: one mix, its points at 0, 1, … streams{}; x: the bandwidth the streams drew (counted bytes), y: the chaser's DRAM latency meanwhile (medians of rounds).",
            if swept {
                " and the most streams at each injection delay, in order of bandwidth"
            } else {
                ""
            }
        )),
        kind: ChartKind::Lines {
            x: Axis::new("memory bandwidth", "GB/s", Scale::Linear),
            y: Axis::new("latency", "ns", Scale::Linear),
            series,
            reference: None,
            marks: Vec::new(),
        },
    })
}

/// A mix's points: (GB/s, ns), the unloaded one at 0 GB/s, in order of
/// bandwidth.
fn points(d: &MixCurveData) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = d
        .points
        .iter()
        .filter_map(|p| Some((p.bandwidth_gbs.unwrap_or(0.0), p.latency_ns?)))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// `Mixes  read 13.9 GB/s at 281 ns · 2:1 … (1 stream; idle 279 ns)`.
fn mix_line(run: &Run) -> Option<VerdictLine> {
    let curves = curves_of(run);
    let mut parts = Vec::new();
    let mut streams = None;
    for (_, d) in &curves {
        let Some(bw) = of_mix(run, BANDWIDTH, &d.mix).filter(|r| r.value.is_some()) else {
            continue;
        };
        streams = streams.or_else(|| param_text(bw, "streams"));
        let at = of_mix(run, LATENCY, &d.mix)
            .and_then(|r| r.value)
            .map(|v| format!(" at {} ns", fmt_num(v)))
            .unwrap_or_default();
        parts.push(format!("{} {}{at}", d.mix, fig(bw)));
    }
    if parts.is_empty() {
        let why = na_part(run, BANDWIDTH, "mixes", 60, |_| true)?;
        return Some(VerdictLine::plain("Mixes", why));
    }
    let idle = curves
        .first()
        .and_then(|(_, d)| d.points.first()?.latency_ns)
        .map(|v| format!("; idle {} ns", fmt_num(v)))
        .unwrap_or_default();
    let load = match streams.as_deref() {
        Some("1") => "with 1 stream".to_string(),
        Some(n) => format!("with {n} streams"),
        None => "at the highest load".to_string(),
    };
    Some(VerdictLine::plain(
        "Mixes",
        format!("{} ({load}{idle})", parts.join(" · ")),
    ))
}

fn mix_is(r: &ResultRecord, mix: &str) -> bool {
    has(r, MIX_PARAM, mix)
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: BANDWIDTH,
        label: "bandwidth, 1:1 read/write",
        keep: |r| mix_is(r, "1:1"),
        top: None,
    },
    KeyFigure {
        id: LATENCY,
        label: "loaded latency, all reads",
        keep: |r| mix_is(r, &ALL_READS.name()),
        top: None,
    },
];

/// A mix's curve for compare: ns against GB/s, named by the mix.
fn mix_curve(rec: &ResultRecord) -> Vec<Curve> {
    if !rec.is(CURVE) {
        return Vec::new();
    }
    let Some(d) = rec.data_as::<MixCurveData>() else {
        return Vec::new();
    };
    crate::view::curve("memory bandwidth", "GB/s", "ns", points(&d))
        .into_iter()
        .map(|mut c| {
            c.name = Some(d.mix.clone());
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::memory::rw_mix::MixPoint;
    use crate::results::schema::Run;

    fn run_of(records: Vec<ResultRecord>) -> Run {
        let mut run = Run::new(
            "h",
            "quick",
            serde_json::Value::Null,
            crate::results::schema::Environment::default(),
            serde_json::Value::Null,
            Vec::new(),
        );
        run.results = records;
        run
    }

    fn mix(name: &str, reads: f64, idle: f64, loaded: f64, gbs: f64) -> Vec<ResultRecord> {
        let tag = |r: ResultRecord| r.with_param(MIX_PARAM, name).with_param("streams", 1u64);
        vec![
            tag(ResultRecord::of(BANDWIDTH, "GB/s", true).with_samples(vec![gbs; 3])),
            tag(ResultRecord::of(LATENCY, "ns", false).with_samples(vec![loaded; 3])),
            tag(ResultRecord::of(CURVE, "ratio", false)).with_payload(&MixCurveData {
                mix: name.into(),
                reads_pct: reads,
                points: vec![
                    MixPoint {
                        streams: 0,
                        delay_us: None,
                        latency_ns: Some(idle),
                        bandwidth_gbs: None,
                    },
                    MixPoint {
                        streams: 1,
                        delay_us: None,
                        latency_ns: Some(loaded),
                        bandwidth_gbs: Some(gbs),
                    },
                ],
                array_bytes: 1 << 20,
                chain_bytes: 1 << 26,
            }),
        ]
    }

    #[test]
    fn the_summary_is_a_typed_table_and_the_report_adds_the_chart() {
        let reads = ALL_READS.name();
        let mut recs = mix(&reads, 100.0, 80.0, 95.0, 14.0);
        recs.extend(mix("1:1", 50.0, 81.0, 110.0, 9.5));
        let run = run_of(recs);
        let v = RwMixViews;
        let text = v.summary_text(&run);
        assert!(text.starts_with("== rw_mix\n"), "{text}");
        assert!(
            text.contains("Read/write mixes at the highest load"),
            "{text}"
        );
        assert!(
            text.contains(&reads) && text.contains("14.00") && text.contains("9.500"),
            "{text}"
        );
        let html = v.report_html(&run);
        assert!(html.contains("<table>") && html.contains("<svg"), "{html}");
        assert!(!v
            .sections(&run, Depth::Report)
            .iter()
            .flat_map(|s| &s.blocks)
            .any(|b| matches!(b, Block::Verbatim(_))));
        let line = mix_line(&run).expect("a verdict line");
        assert_eq!(line.heading, "Mixes");
        assert!(line.text.starts_with(&format!("{reads} 14.00 GB/s at 95.00 ns · 1:1 9.500 GB/s at 110.0 ns (with 1 stream; idle 80.00 ns)")), "{}", line.text);
        let c = mix_curve(&run.results[5]);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].name.as_deref(), Some("1:1"));
        assert_eq!(c[0].points, vec![(0.0, 81.0), (9.5, 110.0)]);
    }

    #[test]
    fn mixes_without_load_say_why_in_the_verdict() {
        let why = "no other usable CPU to generate load: only the unloaded point";
        let r = ResultRecord::unavailable(BANDWIDTH.experiment, BANDWIDTH.metric, "GB/s", why)
            .with_param(MIX_PARAM, "1:1");
        let line = mix_line(&run_of(vec![r])).expect("a line saying why");
        assert_eq!(line.heading, "Mixes");
        assert!(
            line.text.starts_with("mixes n/a (") && line.text.len() > "mixes n/a ()".len() + 20,
            "{}",
            line.text
        );
    }

    #[test]
    fn nothing_measured_shows_nothing() {
        let run = run_of(Vec::new());
        assert!(RwMixViews.summary_text(&run).is_empty());
        assert!(RwMixViews.report_html(&run).is_empty());
        assert!(mix_line(&run).is_none());
    }
}

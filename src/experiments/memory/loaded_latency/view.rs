//! What loaded latency shows (docs/views.md): its place among the experiments,
//! its section of the summary, its charts in the report and the curves compare
//! overlays.

use crate::experiments::memory::payload::LoadedCurveData;
use crate::results::schema::{ResultRecord, Run};
use crate::view::{
    Axis, Block, Chart, ChartKind, Curve, Depth, Rank, Scale, Section, Series, Ticks, Views,
};

/// The views of this experiment (the registry holds it).
pub struct LoadedLatencyViews;

impl Views for LoadedLatencyViews {
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        crate::experiments::memory::text::summary_or_report(run, super::EXP, depth, || {
            curve_charts(run).into_iter().map(Block::Chart).collect()
        })
    }

    fn curves(&self, rec: &ResultRecord) -> Vec<Curve> {
        loaded_curve(rec)
    }

    fn rank(&self) -> Rank {
        Rank(42)
    }
}

// ---------------------------------------------------------------- curves

/// `loaded_latency.curve`: the chase's ns against the bandwidth the
/// streams drew; against the stream count instead when the first point
/// with a latency has no bandwidth. Points without either are left out.
pub fn loaded_curve(rec: &ResultRecord) -> Vec<Curve> {
    if !rec.is(super::CURVE) {
        return Vec::new();
    }
    let Some(d) = rec.data_as::<LoadedCurveData>() else {
        return Vec::new();
    };
    let Some(first) = d.points.iter().find(|p| p.latency_ns.is_some()) else {
        return Vec::new();
    };
    if first.bandwidth_gbs.is_some() {
        let points = d
            .points
            .iter()
            .filter_map(|p| Some((p.bandwidth_gbs?, p.latency_ns?)))
            .collect();
        crate::view::curve("memory bandwidth", "GB/s", "ns", points)
    } else {
        let points = d
            .points
            .iter()
            .filter_map(|p| Some((p.streams as f64, p.latency_ns?)))
            .collect();
        crate::view::curve("streams", "streams", "ns", points)
    }
}

/// The report's charts: for each curve, the chaser's latency against the
/// bandwidth the streaming threads drew (its points are the
/// loaded_latency:latency figures).
fn curve_charts(run: &Run) -> Vec<Chart> {
    let mut charts = Vec::new();
    for r in run.records_of(super::EXP).filter(|r| r.is(super::CURVE)) {
        let Some(d) = r.data_as::<LoadedCurveData>() else {
            continue;
        };
        let points: Vec<(f64, f64)> = d
            .points
            .iter()
            .filter_map(|p| Some((p.bandwidth_gbs.unwrap_or(0.0), p.latency_ns?)))
            .collect();
        charts.push(Chart {
            title: "Loaded latency: chase latency vs bandwidth drawn by k streaming threads".into(),
            caption: None,
            kind: ChartKind::Lines {
                x: Axis {
                    ticks: Ticks::Tenths,
                    ..Axis::new("stream bandwidth", "GB/s", Scale::Linear)
                },
                y: Axis::new("latency", "ns", Scale::Linear),
                series: vec![Series {
                    name: Some(super::LATENCY.metric.to_string()),
                    points,
                    hue: None,
                }],
                reference: None,
                marks: Vec::new(),
            },
        });
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::memory::payload::LoadedCurvePoint;

    fn lp(streams: usize, ns: Option<f64>, gbs: Option<f64>) -> LoadedCurvePoint {
        LoadedCurvePoint {
            streams,
            latency_ns: ns,
            bandwidth_gbs: gbs,
        }
    }

    #[test]
    fn loaded_curve_axis_from_first_point() {
        let rec = |points| {
            ResultRecord::of(super::super::CURVE, "ratio", false).with_payload(&LoadedCurveData {
                points,
                ..LoadedCurveData::default()
            })
        };
        let c = loaded_curve(&rec(vec![
            lp(0, None, None),
            lp(1, Some(90.0), Some(1.0)),
            lp(2, Some(120.0), None),
            lp(3, Some(130.0), Some(9.0)),
        ]));
        assert_eq!(c[0].points, vec![(1.0, 90.0), (9.0, 130.0)]);
        assert_eq!(
            (
                c[0].x_label.as_str(),
                c[0].x_unit.as_str(),
                c[0].y_unit.as_str()
            ),
            ("memory bandwidth", "GB/s", "ns")
        );
        // The first point with a latency has no bandwidth: x is the streams.
        let c = loaded_curve(&rec(vec![
            lp(0, Some(90.0), None),
            lp(1, Some(120.0), Some(9.0)),
            lp(2, None, Some(12.0)),
        ]));
        assert_eq!(c[0].points, vec![(0.0, 90.0), (1.0, 120.0)]);
        assert_eq!(
            (c[0].x_label.as_str(), c[0].x_unit.as_str()),
            ("streams", "streams")
        );
        assert!(loaded_curve(&rec(vec![lp(0, None, Some(1.0))])).is_empty());
    }
}

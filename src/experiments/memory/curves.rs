//! The curves the memory family's records carry, as the comparison page
//! draws them (one line per run over the same record): the latency curve
//! (ns against working set), the bandwidth sweep (GB/s against threads) and
//! the loaded-latency curve (ns against the streams' bandwidth). Read from
//! the typed payloads; the registry declares these per experiment
//! (`Entry::curves`). Never measures.

use crate::experiments::memory::payload::{CurveData, LoadedCurveData, SaturationData};
use crate::experiments::memory::{bandwidth, latency, loaded_latency};
use crate::results::schema::ResultRecord;

/// One series of points and how its axes are labelled.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub name: Option<String>,
    pub x_label: String,
    pub x_unit: String,
    pub y_unit: String,
    /// Force (or forbid) a log x axis; None: the chart decides.
    pub log_x: Option<bool>,
    pub points: Vec<(f64, f64)>,
}

/// The curve of `points` (finite ones only), or none under two points.
fn curve(x_label: &str, x_unit: &str, y_unit: &str, points: Vec<(f64, f64)>) -> Vec<Curve> {
    let points: Vec<(f64, f64)> = points
        .into_iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if points.len() < 2 {
        return Vec::new();
    }
    vec![Curve {
        name: None,
        x_label: x_label.to_string(),
        x_unit: x_unit.to_string(),
        y_unit: y_unit.to_string(),
        log_x: None,
        points,
    }]
}

/// `latency.curve`: ns per load against the working set.
pub fn latency(rec: &ResultRecord) -> Vec<Curve> {
    if !rec.is(latency::CURVE) {
        return Vec::new();
    }
    let Some(d) = rec.data_as::<CurveData>() else {
        return Vec::new();
    };
    let points = d.points.iter().map(|p| (p.bytes as f64, p.ns)).collect();
    curve("working set", "bytes", "ns", points)
}

/// `bandwidth.saturation_threads`: the sweep's median GB/s against the
/// thread count (counts without a figure left out). Its axes keep the
/// labels the comparison page has always given it: x "x" without a unit,
/// y in the record's unit.
pub fn saturation(rec: &ResultRecord) -> Vec<Curve> {
    if !rec.is(bandwidth::SATURATION_THREADS) {
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
    curve("x", "", &rec.unit, points)
}

/// `loaded_latency.curve`: the chase's ns against the bandwidth the
/// streams drew; against the stream count instead when the first point
/// with a latency has no bandwidth. Points without either are left out.
pub fn loaded(rec: &ResultRecord) -> Vec<Curve> {
    if !rec.is(loaded_latency::CURVE) {
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
        curve("memory bandwidth", "GB/s", "ns", points)
    } else {
        let points = d
            .points
            .iter()
            .filter_map(|p| Some((p.streams as f64, p.latency_ns?)))
            .collect();
        curve("streams", "streams", "ns", points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::memory::payload::{CurvePoint, LoadedCurvePoint};

    fn lp(streams: usize, ns: Option<f64>, gbs: Option<f64>) -> LoadedCurvePoint {
        LoadedCurvePoint {
            streams,
            latency_ns: ns,
            bandwidth_gbs: gbs,
        }
    }

    #[test]
    fn latency_curve() {
        let p = |bytes, ns| CurvePoint {
            bytes,
            ns,
            ..CurvePoint::default()
        };
        let rec = ResultRecord::of(latency::CURVE, "ns", false).with_payload(&CurveData {
            points: vec![p(4096, 1.1), p(1048576, 9.5)],
            ..CurveData::default()
        });
        let c = latency(&rec);
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
        let one = ResultRecord::of(latency::CURVE, "ns", false).with_payload(&CurveData {
            points: vec![p(4096, 1.1)],
            ..CurveData::default()
        });
        assert!(latency(&one).is_empty());
        assert!(latency(&ResultRecord::of(latency::DRAM, "ns", false)).is_empty());
    }

    #[test]
    fn loaded_curve_axis_from_first_point() {
        let rec = |points| {
            ResultRecord::of(loaded_latency::CURVE, "ratio", false).with_payload(&LoadedCurveData {
                points,
                ..LoadedCurveData::default()
            })
        };
        let c = loaded(&rec(vec![
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
        let c = loaded(&rec(vec![
            lp(0, Some(90.0), None),
            lp(1, Some(120.0), Some(9.0)),
            lp(2, None, Some(12.0)),
        ]));
        assert_eq!(c[0].points, vec![(0.0, 90.0), (1.0, 120.0)]);
        assert_eq!(
            (c[0].x_label.as_str(), c[0].x_unit.as_str()),
            ("streams", "streams")
        );
        assert!(loaded(&rec(vec![lp(0, None, Some(1.0))])).is_empty());
    }

    #[test]
    fn saturation_curve() {
        let rec = ResultRecord::of(bandwidth::SATURATION_THREADS, "threads", false).with_payload(
            &SaturationData {
                curve: vec![(1, Some(10.0)), (2, None), (4, Some(19.0))],
            },
        );
        let c = saturation(&rec);
        assert_eq!(c[0].points, vec![(1.0, 10.0), (4.0, 19.0)]);
        assert_eq!(
            (
                c[0].x_label.as_str(),
                c[0].x_unit.as_str(),
                c[0].y_unit.as_str()
            ),
            ("x", "", "threads")
        );
    }
}

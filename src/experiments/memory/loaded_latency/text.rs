//! loaded_latency's text: a curve's points as a table.

use crate::experiments::memory::payload::LoadedCurveData;
use crate::experiments::memory::text::cell;
use crate::results::schema::ResultRecord;
use crate::view::{Align, Block, Cell, Table};

/// The curve of a loaded-latency record as a table: per stream count, the
/// latency and the streams' bandwidth; nothing without its data.
pub fn points(r: &ResultRecord) -> Vec<Block> {
    let Some(d) = r.data_as::<LoadedCurveData>() else {
        return Vec::new();
    };
    let mut t = Table::new(&["streams", "latency ns", "stream GB/s"]);
    for c in t.columns.iter_mut() {
        c.align = Align::Right;
    }
    t.caption = Some("Loaded latency (latency vs bandwidth)".into());
    for p in &d.points {
        let _ = t.push(vec![
            Cell::Text(p.streams.to_string()),
            Cell::Text(cell(p.latency_ns)),
            Cell::Text(cell(p.bandwidth_gbs)),
        ]);
    }
    vec![Block::Table(t)]
}

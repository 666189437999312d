//! bandwidth's text: a saturation sweep as a table.

use crate::experiments::memory::payload::SaturationData;
use crate::experiments::memory::text::cell;
use crate::experiments::render::params_text;
use crate::results::schema::ResultRecord;
use crate::view::{Align, Block, Cell, Table};

/// The sweep of a saturation record (threads, GB/s, gain over the step
/// before) as a table; nothing under two steps.
pub fn sweep(r: &ResultRecord) -> Vec<Block> {
    let Some(d) = r.data_as::<SaturationData>() else {
        return Vec::new();
    };
    if d.curve.len() < 2 {
        return Vec::new();
    }
    let mut t = Table::new(&["threads", "GB/s", "gain"]);
    for c in t.columns.iter_mut() {
        c.align = Align::Right;
    }
    t.caption = Some(format!("Bandwidth sweep: {}", params_text(r)));
    let mut prev: Option<f64> = None;
    for &(n, g) in &d.curve {
        let gain = match (prev, g) {
            (Some(a), Some(b)) if a > 0.0 => format!("{:+.1}%", (b / a - 1.0) * 100.0),
            _ => String::new(),
        };
        let _ = t.push(vec![
            Cell::Text(n.to_string()),
            Cell::Text(cell(g)),
            Cell::Text(gain),
        ]);
        prev = g;
    }
    vec![Block::Table(t)]
}

//! simd's summary (and `cpuscope simd`'s text): seed 004's table and peak's
//! figures per configuration (SMT, turbo), then SMT on against off, as a
//! typed section. Renders stored records; never measures.

use crate::base::fmt::fmt_num;
use crate::experiments::compute::text::{of, param, param_text};
use crate::experiments::compute::{peak, simd};
use crate::results::schema::ResultRecord;
use crate::view::{text, Align, Block, Cell, Section, Table};

/// The configuration a record was measured under (`simd --smt/--turbo`):
/// its `smt` and `turbo` params; (None, None) as found.
fn configuration(r: &ResultRecord) -> (Option<String>, Option<String>) {
    (param_text(r, "smt"), param_text(r, "turbo"))
}

/// `cpuscope simd`'s text: its section, drawn by the text printer.
pub fn render_simd_configurations(rs: &[ResultRecord]) -> String {
    text::sections(&sections_of(rs))
}

/// simd's and peak's blocks of one configuration.
fn one(rs: &[ResultRecord]) -> Vec<Block> {
    let mut out = super::table_view::summary_blocks(rs);
    out.extend(peak::text::summary_blocks(rs));
    out
}

/// Its section: simd's and peak's blocks once per configuration
/// (`smt=on/off`, `turbo=on/off`), each under its heading, then SMT on
/// against off per variant; records without those params as one.
pub fn sections_of(rs: &[ResultRecord]) -> Vec<Section> {
    let blocks = configuration_blocks(rs);
    if blocks.is_empty() {
        return Vec::new();
    }
    vec![Section {
        id: simd::EXP.to_string(),
        title: String::new(),
        blocks,
    }]
}

fn configuration_blocks(rs: &[ResultRecord]) -> Vec<Block> {
    let mut configs: Vec<(Option<String>, Option<String>)> = Vec::new();
    for r in rs
        .iter()
        .filter(|r| r.from_experiment(simd::EXP) || r.from_experiment(peak::EXP))
    {
        let c = configuration(r);
        if !configs.contains(&c) {
            configs.push(c);
        }
    }
    if configs.len() <= 1
        && configs
            .first()
            .is_none_or(|c| c.0.is_none() && c.1.is_none())
    {
        return one(rs);
    }
    let mut parts = Vec::new();
    for c in &configs {
        let sub: Vec<ResultRecord> = rs
            .iter()
            .filter(|r| configuration(r) == *c)
            .cloned()
            .collect();
        let name = [
            c.0.as_ref().map(|s| format!("SMT {s}")),
            c.1.as_ref().map(|t| format!("turbo {t}")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        let blocks = one(&sub);
        if !blocks.is_empty() {
            parts.push(Block::Heading(format!("configuration: {name}")));
            parts.extend(blocks);
        }
    }
    parts.extend(smt_on_off(rs).map(Block::Table));
    parts
}

/// Best throughput per variant with SMT on and with SMT off (same turbo).
fn smt_on_off(rs: &[ResultRecord]) -> Option<Table> {
    let thr: Vec<&ResultRecord> = of(rs, simd::THROUGHPUT)
        .into_iter()
        .filter(|r| r.value.is_some())
        .collect();
    let mut turbos: Vec<Option<String>> = Vec::new();
    for r in &thr {
        let t = param_text(r, "turbo");
        if !turbos.contains(&t) {
            turbos.push(t);
        }
    }
    let best = |v: &str, smt: &str, t: &Option<String>| {
        thr.iter()
            .filter(|r| {
                param(r, "variant") == Some(v)
                    && param(r, "smt") == Some(smt)
                    && param_text(r, "turbo") == *t
            })
            .max_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))
            .map(|r| {
                (
                    r.value.unwrap_or(0.0),
                    param(r, "threads").unwrap_or("?").to_string(),
                )
            })
    };
    let mut t = Table::new(&["variant", "turbo", "SMT on MB/s", "SMT off MB/s", "on/off"]);
    for c in t.columns.iter_mut().skip(2) {
        c.align = Align::Right;
    }
    t.caption = Some(
        "SMT on against off: best throughput over the thread points (the point in brackets)".into(),
    );
    for tb in &turbos {
        let mut variants: Vec<&str> = Vec::new();
        for r in &thr {
            if let Some(v) = param(r, "variant") {
                if !variants.contains(&v) {
                    variants.push(v);
                }
            }
        }
        for v in variants {
            if let (Some((on, pon)), Some((off, poff))) = (best(v, "on", tb), best(v, "off", tb)) {
                let _ = t.push(vec![
                    Cell::Text(v.to_string()),
                    Cell::Text(tb.clone().unwrap_or_else(|| "as found".into())),
                    Cell::Text(format!("{} ({pon})", fmt_num(on))),
                    Cell::Text(format!("{} ({poff})", fmt_num(off))),
                    Cell::Text(if off > 0.0 {
                        format!("{:.2}x", on / off)
                    } else {
                        "-".into()
                    }),
                ]);
            }
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::compute::payload::SimdThroughputData;

    fn thr(variant: &str, threads: &str, n: usize, mb_s: Option<f64>, smt: &str) -> ResultRecord {
        let r = match mb_s {
            Some(x) => ResultRecord::of(simd::THROUGHPUT, "MB/s", true)
                .with_samples(vec![x, x, x])
                .with_payload(&SimdThroughputData {
                    threads: n,
                    ghz: Some(2.5),
                    ..Default::default()
                }),
            None => ResultRecord::unavailable(simd::EXP, "throughput", "MB/s", "no SMT sibling"),
        };
        r.with_param("variant", variant)
            .with_param("threads", threads)
            .with_param("smt", smt)
    }

    #[test]
    fn each_configuration_is_a_table_then_smt_on_against_off() {
        let rs = vec![
            thr("scalar", "1", 1, Some(400.0), "on"),
            thr("scalar", "per_core", 2, Some(780.0), "on"),
            thr("scalar", "smt", 4, None, "on"),
            thr("scalar", "1", 1, Some(410.0), "off"),
            thr("scalar", "per_core", 2, Some(800.0), "off"),
        ];
        let s = sections_of(&rs);
        assert_eq!(s.len(), 1);
        let tables: Vec<&Table> = s[0]
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        // Two configurations' tables, then on against off.
        assert_eq!(tables.len(), 3, "{:?}", s[0].blocks);
        let heads: Vec<&str> = tables[0]
            .columns
            .iter()
            .map(|c| c.header.as_str())
            .collect();
        assert_eq!(heads, ["threads", "n", "GHz", "scalar MB/s", "efficiency"]);
        let text = text::sections(&s);
        assert!(text.contains("configuration: SMT on"), "{text}");
        assert!(text.contains("configuration: SMT off"), "{text}");
        // The point without a figure says why, under its table.
        assert!(
            text.contains("scalar threads=smt: not available: no SMT sibling"),
            "{text}"
        );
        // per_core ran 2 threads; SMT on 780 against off 800 at that point.
        assert!(text.contains("per_core  2"), "{text}");
        assert!(
            text.contains("780.0 (per_core)") && text.contains("0.97x"),
            "{text}"
        );
    }

    #[test]
    fn nothing_measured_is_no_section() {
        assert!(sections_of(&[]).is_empty());
        let only_na = vec![thr("scalar", "1", 1, None, "on")];
        assert!(sections_of(&only_na).is_empty());
    }
}

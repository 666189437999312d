//! The comparison as long-form CSV (`cpuscope compare --csv`).

use super::{CellState, Comparison};
use crate::base::fmt::csv_cell;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A text cell: [`csv_cell`] (one line, never a formula, RFC 4180 quoting).
fn csv_field(s: &str) -> String {
    csv_cell(s)
}

fn opt_num(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

/// Long-form CSV: one line per (result, run), then the published figures
/// (run = `published:<set>`), then the geometric mean (key `geomean`).
pub fn render(c: &Comparison) -> String {
    let mut out = String::from(
        "key,experiment,metric,params,unit,higher_is_better,run_label,run_id,host,state,value,relative_pct,cv,noisy,in_geomean,note\n",
    );
    for row in &c.rows {
        let lead = [
            csv_field(&row.key),
            csv_field(&row.experiment),
            csv_field(&row.metric),
            csv_field(&params_text(&row.params)),
            csv_field(&row.unit),
            row.higher_is_better.to_string(),
        ]
        .join(",");
        for (h, cell) in c.runs.iter().zip(&row.cells) {
            let state = match cell.state {
                CellState::Measured => "measured",
                CellState::Unavailable => "unavailable",
                CellState::Missing => "missing",
            };
            let note = cell
                .unavailable_reason
                .clone()
                .or_else(|| cell.relative_note.clone())
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{lead},{},{},{},{state},{},{},{},{},{},{}",
                h.label,
                csv_field(&h.id),
                csv_field(&h.host),
                opt_num(cell.value),
                opt_num(cell.relative_pct),
                opt_num(cell.cv),
                cell.noisy,
                row.in_geomean,
                csv_field(&note)
            );
        }
        for p in &row.published {
            let _ = writeln!(
                out,
                "{lead},published:{},,{},published,{},{},,false,false,{}",
                csv_field(&p.set),
                csv_field(&p.machine),
                opt_num(p.value),
                opt_num(p.relative_pct),
                csv_field(&format!("{} — {} (not measured here)", p.text, p.source))
            );
        }
    }
    geomean_lines(&mut out, c);
    out
}

/// A figure's params as `k=v` joined by `;` (strings unquoted).
fn params_text(p: &BTreeMap<String, Value>) -> String {
    p.iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            o => format!("{k}={o}"),
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// One line per run for the geometric mean (key `geomean`).
fn geomean_lines(out: &mut String, c: &Comparison) {
    for (h, g) in c.runs.iter().zip(&c.geomean.per_run) {
        let _ = writeln!(
            out,
            "geomean,,,,%,true,{},{},{},{},{},{},,false,true,{}",
            h.label,
            csv_field(&h.id),
            csv_field(&h.host),
            if g.is_some() {
                "measured"
            } else {
                "unavailable"
            },
            opt_num(*g),
            opt_num(*g),
            csv_field(&format!(
                "over {} of {} results",
                c.geomean.results_used, c.geomean.results_total
            ))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}

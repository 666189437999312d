//! Rate's summary (and `cpuscope rate`'s text): a table per workload of
//! jobs per hour per copy count and memory placement, as a typed section.
//! Renders stored records; never measures.

use crate::experiments::compute::payload::{PagesPerNode, RateData};
use crate::experiments::compute::rate;
use crate::experiments::compute::text::{of, param};
use crate::results::schema::ResultRecord;
use crate::view::{text, Align, Block, Cell, Figure, Section, Table};

/// `cpuscope rate`'s text: its section, drawn by the text printer.
pub fn render_rate(rs: &[ResultRecord]) -> String {
    text::sections(&sections_of(rs))
}

/// Its section: per workload, a table of its copy counts and their notes.
pub fn sections_of(rs: &[ResultRecord]) -> Vec<Section> {
    let j = of(rs, rate::JOBS_PER_HOUR);
    if j.is_empty() {
        return Vec::new();
    }
    let mut workloads: Vec<&str> = Vec::new();
    for r in &j {
        let w = param(r, "workload").unwrap_or("?");
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    let blocks = workloads
        .into_iter()
        .flat_map(|wl| rate_table(rs, &j, wl))
        .collect();
    vec![Section {
        id: rate::EXP.to_string(),
        title: String::new(),
        blocks,
    }]
}

/// One workload's table: a row per copy count (and memory placement), then
/// its notes once each.
fn rate_table(rs: &[ResultRecord], j: &[&ResultRecord], wl: &str) -> Vec<Block> {
    let recs: Vec<&&ResultRecord> = j
        .iter()
        .filter(|r| param(r, "workload").unwrap_or("?") == wl)
        .collect();
    let with_mem = recs.iter().any(|r| param(r, "mem").is_some());
    let mut head = vec!["copies"];
    if with_mem {
        head.push("memory");
    }
    head.extend(["CPUs", "completed", "slowest copy", "efficiency per copy"]);
    if with_mem {
        head.extend(["vs interleave", "pages (mem:N only, move_pages)"]);
    }
    let mut t = Table::new(&head);
    let figure = head.iter().position(|h| *h == "completed").unwrap_or(0);
    for c in figure..head.len() - usize::from(with_mem) {
        t.columns[c].align = Align::Right;
    }
    t.columns[figure].unit = Some(recs.first().map(|r| r.unit.clone()).unwrap_or_default());
    t.caption = Some(format!(
        "Rate (SPEC-rate style): {wl}{}",
        if with_mem {
            " by memory placement (seed 003)"
        } else {
            ""
        }
    ));
    let mut notes: Vec<String> = Vec::new();
    for r in recs {
        if let Err(e) = t.push(rate_row(rs, r, with_mem, &mut notes)) {
            notes.push(format!("a row left out: {e}"));
        }
    }
    let mut blocks = vec![Block::Table(t)];
    blocks.extend(notes.into_iter().map(|n| Block::Note(format!("note: {n}"))));
    blocks
}

/// One row of a rate table: copies, memory, CPUs, jobs/hour, the slowest
/// copy, the efficiency per copy and, by memory placement, the change
/// against interleave and the pages per node. Notes worth saying once go
/// to `notes`.
fn rate_row(
    rs: &[ResultRecord],
    r: &ResultRecord,
    with_mem: bool,
    notes: &mut Vec<String>,
) -> Vec<Cell> {
    let c = param(r, "copies").unwrap_or("?").to_string();
    let mem = param(r, "mem");
    let same = |e: &ResultRecord| {
        param(e, "copies") == Some(&c)
            && param(e, "workload") == param(r, "workload")
            && param(e, "mem") == mem
    };
    let mut row = vec![Cell::Text(format!(
        "{c}{}",
        r.data_as::<RateData>()
            .filter(|_| c.parse::<usize>().is_err())
            .map(|d| format!(" ({})", d.copies))
            .unwrap_or_default()
    ))];
    if with_mem {
        row.push(Cell::Text(mem.unwrap_or("default").to_string()));
    }
    // The matching record of `id` as text: Some("-") when it has no
    // value, None when there is none.
    let cell = |id, f: &dyn Fn(f64) -> String| {
        of(rs, id)
            .into_iter()
            .find(|e| same(e))
            .map(|e| e.value.map(f).unwrap_or_else(|| "-".into()))
    };
    match r.value {
        Some(_) => {
            let eff = cell(rate::EFFICIENCY, &|x| format!("{x:.1}%")).unwrap_or_else(|| {
                if c == "1" {
                    "100% (baseline)".into()
                } else {
                    "-".into()
                }
            });
            let d = r.data_as::<RateData>().unwrap_or_default();
            let slow = crate::base::Stats::from_samples(&d.makespan_s)
                .map(|s| format!("{:.3} s", s.median))
                .unwrap_or_default();
            row.extend([
                Cell::Text(d.cpus),
                Cell::Figure(Figure::of(r)),
                Cell::Text(slow),
                Cell::Text(eff),
            ]);
            if with_mem {
                let change =
                    cell(rate::MEM_CHANGE, &|x| format!("{x:+.1}%")).unwrap_or_else(|| {
                        if mem == Some("interleave") {
                            "(reference)".into()
                        } else {
                            "-".into()
                        }
                    });
                row.push(Cell::Text(change));
                row.push(Cell::Text(pages_cell(r, notes)));
            }
            for n in &r.notes {
                if (n.starts_with("one NUMA node") || n.contains("touches little memory"))
                    && !notes.contains(n)
                {
                    notes.push(n.clone());
                }
            }
        }
        // The CPUs column empty, the figure n/a with its reason under the table.
        None => row.extend([Cell::Empty, Cell::Figure(Figure::of(r))]),
    }
    row
}

/// The pages-per-node cell of a memory-placement row (share per node), or
/// why the pages were not counted (said once in `notes`).
fn pages_cell(r: &ResultRecord, notes: &mut Vec<String>) -> String {
    match r.data_as::<RateData>().and_then(|d| d.pages_per_node) {
        Some(PagesPerNode::NotCounted { not_available: e }) => {
            let n = format!("pages not counted: {e}");
            if !notes.contains(&n) {
                notes.push(n);
            }
            "n/a".into()
        }
        Some(PagesPerNode::Counted(o)) => {
            let total: f64 = o.values().map(|v| *v as f64).sum();
            o.iter()
                .filter(|_| total > 0.0)
                .map(|(k, v)| format!("N{k} {:.0}%", *v as f64 / total * 100.0))
                .collect::<Vec<_>>()
                .join(" ")
        }
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn jobs(copies: &str, mem: &str, jph: f64, pages: Option<PagesPerNode>) -> ResultRecord {
        let d = RateData {
            copies: 2,
            cpus: "0-1".into(),
            makespan_s: vec![0.5, 0.6, 0.7],
            mem: Some(mem.into()),
            pages_per_node: pages,
            ..RateData::default()
        };
        ResultRecord::of(rate::JOBS_PER_HOUR, "jobs/h", true)
            .with_param("workload", "nop")
            .with_param("copies", copies)
            .with_param("mem", mem)
            .with_samples(vec![jph])
            .with_payload(&d)
    }

    #[test]
    fn a_workload_is_a_table_of_copy_counts_with_placements_and_reasons() {
        let counted = PagesPerNode::Counted(BTreeMap::from([("0".into(), 3), ("1".into(), 1)]));
        let rs = vec![
            jobs("2", "interleave", 7200.0, None),
            jobs("2", "mem:0", 9000.0, Some(counted)),
            ResultRecord::of(rate::MEM_CHANGE, "%", true)
                .with_param("workload", "nop")
                .with_param("copies", "2")
                .with_param("mem", "mem:0")
                .with_samples(vec![25.0]),
            ResultRecord::unavailable(rate::EXP, "jobs_per_hour", "jobs/h", "no <second> node")
                .with_param("workload", "nop")
                .with_param("copies", "all")
                .with_param("mem", "mem:1"),
        ];
        let s = render_rate(&rs);
        assert!(
            s.starts_with("Rate (SPEC-rate style): nop by memory placement (seed 003)\n"),
            "{s}"
        );
        let words = |k: &str| -> Vec<String> {
            let l = s
                .lines()
                .skip(2)
                .find(|l| l.contains(k))
                .unwrap_or_default();
            l.split_whitespace().map(str::to_string).collect()
        };
        assert_eq!(
            words("interleave"),
            [
                "2",
                "interleave",
                "0-1",
                "7200",
                "0.600",
                "s",
                "-",
                "(reference)",
                "-"
            ],
            "{s}"
        );
        assert_eq!(
            words("mem:0"),
            ["2", "mem:0", "0-1", "9000", "0.600", "s", "-", "+25.0%", "N0", "75%", "N1", "25%"],
            "{s}"
        );
        assert!(s.contains("n/a (all): no <second> node"), "{s}");
        assert!(sections_of(&[]).is_empty());
    }
}

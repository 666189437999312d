//! What core-to-core latency shows (docs/views.md): its place among the
//! experiments, its section of the summary, its charts in the report, its
//! verdict lines and the figures the fleet compares across hosts.

use super::inference_view::inference_blocks;
use super::ONE_WAY_LATENCY;
use crate::base::fmt::fmt_num;
use crate::experiments::coherence::payload::MatrixData;
use crate::experiments::coherence::payload::MatrixData as Matrix;
use crate::results::schema::{ResultRecord, Run};
use crate::view::verdict::{fig, has};
use crate::view::{
    any, param_text, report_section, Block, Chart, ChartKind, Depth, Heatmap, KeyFigure, Rank,
    Section, Tone, VerdictLine, Views,
};

/// The views of this experiment (the registry holds it).
pub struct C2cViews;

impl Views for C2cViews {
    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        c2c_line(run).into_iter().collect()
    }

    /// The summary: a line per method, then its latency groups. The
    /// report: per matrix, its heat map, its disturbance and its groups.
    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Report => report_section(depth, super::EXP, || report_blocks(run)),
            Depth::Summary | Depth::Command => summary_sections(run),
        }
    }

    fn rank(&self) -> Rank {
        Rank(50)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

const KEY_FIGURES: &[KeyFigure] = &[KeyFigure {
    id: ONE_WAY_LATENCY,
    label: "core-to-core latency",
    keep: any,
    top: None,
}];

// ---------------------------------------------------------------- verdict

fn c2c_line(run: &Run) -> Option<VerdictLine> {
    fn words(rel: &str) -> &str {
        match rel {
            "smt_sibling" => "SMT siblings",
            "shared_l2" => "same L2",
            "shared_l3" => "same L3",
            "same_die" => "same die",
            "same_package" => "same socket",
            "cross_package" => "across sockets",
            "same_node" => "same node",
            "cross_node" => "across nodes",
            o => o,
        }
    }
    let mat = run.records(super::MATRIX).find(|r| has(r, "method", "cas"));
    // A disturbed measurement: the figure with by how much, not plainly.
    if let Some(t) = mat.and_then(c2c_disturbed) {
        return Some(VerdictLine {
            heading: "Core↔core".into(),
            text: t,
            tone: Tone::Warn,
        });
    }
    let recs: Vec<&ResultRecord> = run
        .records(super::ONE_WAY_LATENCY)
        .filter(|r| r.value.is_some() && has(r, "method", "cas"))
        .collect();
    if recs.is_empty() {
        return None;
    }
    let parts: Vec<String> = recs
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                words(&param_text(r, "relation").unwrap_or_default()),
                fig(r)
            )
        })
        .collect();
    // The matrix record's payload, typed (coherence::payload::MatrixData).
    let data = mat.and_then(ResultRecord::data_as::<MatrixData>);
    // SMT among the measured CPUs: the record's sibling pairs.
    let smt = data.as_ref().map(|d| !d.smt_siblings.is_empty());
    // The inferred latency groups, each with what it matches, else the
    // declared relations' medians.
    let levels: Vec<String> = data
        .as_ref()
        .and_then(|d| d.inference.as_ref())
        .map(|inf| inf.levels.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|l| {
            format!(
                "{} {} ns",
                c2c_group_label(&l.label, smt),
                fmt_num(l.latency_ns)
            )
        })
        .collect();
    let t = if levels.is_empty() {
        format!("one-way CAS: {}", parts.join(" · "))
    } else {
        format!(
            "one-way CAS, {} group(s): {}",
            levels.len(),
            levels.join(" · ")
        )
    };
    Some(VerdictLine::plain("Core↔core", t))
}

/// The c2c line of a disturbed CAS matrix record (`data.disturbance`):
/// the figure, by how many pairs and by how much steal time it was
/// disturbed; None when it was not.
fn c2c_disturbed(r: &ResultRecord) -> Option<String> {
    let d = r.data_as::<MatrixData>()?.disturbance?;
    if !d.disturbed {
        return None;
    }
    let steal = match &d.steal {
        None => "steal time not measured".to_string(),
        Some(s) if s.unavailable.is_some() => "steal time n/a".to_string(),
        Some(s) if s.ticks == 0 => "no steal time".to_string(),
        Some(s) => format!(
            "steal {:.1}% of CPU time ({} s)",
            s.share * 100.0,
            fmt_num(s.seconds)
        ),
    };
    let figure = match r.value {
        Some(_) => format!("{} (median of pairs)", fig(r)),
        None => "n/a".to_string(),
    };
    Some(format!(
        "one-way CAS {figure}, disturbed: {} of {} pairs preempted, {steal} during c2c; not a clean figure",
        d.pairs_preempted, d.pairs_measured
    ))
}

/// A latency group's label as a short phrase: a declared level's first
/// name ("shared L3 = same NUMA node" -> "shared L3"); a hidden level as
/// stored ("hidden level between shared L2 and shared L3"), or from the
/// older form ("not declared: between 'A = B' and 'C'"), quotes dropped, each
/// side by its first name. Without SMT among the measured CPUs (`smt`
/// false) no group is called SMT siblings.
fn c2c_group_label(label: &str, smt: Option<bool>) -> String {
    let hidden = label
        .strip_prefix("not declared: ")
        .or_else(|| label.strip_prefix("hidden level "));
    let mut t = match hidden {
        Some(rest) => {
            // Inside quotes (odd segments) keep the first name only.
            let phrase: String = rest
                .split('\'')
                .enumerate()
                .map(|(i, seg)| {
                    if i % 2 == 1 {
                        seg.split(" = ").next().unwrap_or(seg)
                    } else {
                        seg
                    }
                })
                .collect();
            format!("hidden level {}", phrase.replace("cuts across", "across"))
        }
        None => label.split(" = ").next().unwrap_or(label).to_string(),
    };
    if smt == Some(false) && t.contains("SMT siblings") {
        t = t
            .replace("between SMT siblings (same core) and ", "finer than ")
            .replace("SMT siblings (same core)", "one core")
            .replace("SMT siblings", "one core");
    }
    t
}

/// The summary's section: per method its line (CPUs, pairs, the median over
/// pairs, or why not available), how it was disturbed when it was, and its
/// latency groups; none without a matrix record.
fn summary_sections(run: &Run) -> Vec<Section> {
    let mats: Vec<&ResultRecord> = run.records(super::MATRIX).collect();
    if mats.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Heading(
        "Core-to-core latency (one-way = round trip / 2, median per pair)".into(),
    )];
    for r in mats {
        let method = param_text(r, "method").unwrap_or_else(|| "?".into());
        let Some(v) = r.value else {
            blocks.push(Block::NotAvailable(format!(
                "{method}: not available: {}",
                r.unavailable_reason
                    .as_deref()
                    .unwrap_or("no reason recorded")
            )));
            continue;
        };
        let d = super::text::matrix_data(r).unwrap_or_default();
        blocks.push(Block::Plain(format!(
            "{method}: {} CPUs, {} pair(s), median over pairs {} ns",
            d.cpus.len(),
            r.repetitions,
            fmt_num(v)
        )));
        if let Some(dist) = d.disturbance.as_ref().filter(|x| x.disturbed) {
            blocks.push(Block::Strong(dist.line()));
        }
        if let Some(inf) = &d.inference {
            blocks.extend(inference_blocks(inf, d.ghz_single));
        }
    }
    vec![Section {
        id: super::EXP.to_string(),
        title: String::new(),
        blocks,
    }]
}

/// The report's part: per matrix, its heat map, how disturbed it was and
/// the latency groups inferred from it, together.
fn report_blocks(run: &Run) -> Vec<Block> {
    run.records(super::MATRIX)
        .filter_map(super::text::matrix_data)
        .map(|d| {
            let mut group = vec![Block::Chart(matrix_chart(&d))];
            if let Some(dist) = &d.disturbance {
                group.push(match dist.disturbed {
                    true => Block::Strong(dist.line()),
                    false => Block::Plain(dist.line()),
                });
            }
            if let Some(inf) = &d.inference {
                group.extend(inference_blocks(inf, d.ghz_single));
            }
            Block::Group(group)
        })
        .collect()
}

/// The one-way latencies, CPU by CPU, SMT siblings outlined.
fn matrix_chart(d: &Matrix) -> Chart {
    let names: Vec<String> = d.cpus.iter().map(|c| c.to_string()).collect();
    let at = |cpu: usize| d.cpus.iter().position(|&c| c == cpu);
    let outlined = d
        .smt_siblings
        .iter()
        .filter_map(|p| Some((at(p[0])?, at(p[1])?)))
        .collect();
    Chart {
        title: format!("Core-to-core latency, one-way ns ({})", d.method),
        caption: None,
        kind: ChartKind::PairMatrix {
            map: Heatmap::filled(names.clone(), names, &d.matrix_ns, "ns")
                .labelled("CPU", "CPU", "CPUs"),
            outlined,
            outlined_label: "SMT siblings".into(),
        },
    }
}

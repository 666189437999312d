//! What the clock shows (docs/views.md): its place among the experiments, its
//! section of the summary, its charts in the report, its verdict lines, the
//! figures the fleet compares across hosts and its rules of advice.

use super::{ALL_CORES, SINGLE_CORE};
use crate::base::fmt::fmt_num;
use crate::experiments::state::payload::{DeclaredClock, SingleCoreData, TeamClockData};
use crate::results::schema::{ResultRecord, Run};
use crate::view::finding::{ev, from_result, measured, noisy_note, Evidence, Finding, Severity};
use crate::view::verdict::fig;
use crate::view::{
    any, report_section, Align, Bar, BarGroup, Block, Cell, Chart, ChartKind, Depth, Figure,
    KeyFigure, Rank, Rule, Scale, Section, Table, VerdictLine, Views,
};

/// The views of this experiment (the registry holds it).
pub struct FrequencyViews;

impl Views for FrequencyViews {
    fn rules(&self) -> &'static [Rule] {
        RULES
    }

    fn verdict(&self, run: &Run) -> Vec<VerdictLine> {
        clock_line(run).into_iter().collect()
    }

    fn sections(&self, run: &Run, depth: Depth) -> Vec<Section> {
        match depth {
            Depth::Report => report_section(depth, super::EXP, || {
                vec![Block::Chart(placement_bars(run))]
            }),
            Depth::Summary | Depth::Command => summary(&run.results).into_iter().collect(),
        }
    }

    fn rank(&self) -> Rank {
        Rank(10)
    }

    fn key_figures(&self) -> &'static [KeyFigure] {
        KEY_FIGURES
    }
}

/// Its section of the summary: a row per placement (the clock, its CV and
/// repetitions; not available with the reason under the table), and what
/// the machine declares, not measured, in a note.
fn summary(rs: &[ResultRecord]) -> Option<Section> {
    let f: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.from_experiment(super::EXP))
        .collect();
    if f.is_empty() {
        return None;
    }
    let mut t = Table::new(&["run on", "clock", "CV", "n"]);
    for c in 1..4 {
        t.columns[c].align = Align::Right;
    }
    for r in &f {
        let (cv, n) = match &r.stats {
            Some(s) if r.value.is_some() => (format!("{:.1}%", s.cv * 100.0), s.n.to_string()),
            _ => (String::new(), String::new()),
        };
        t.rows.push(vec![
            Cell::Text(r.metric.clone()),
            Cell::Figure(Figure::of(r)),
            Cell::Text(cv),
            Cell::Text(n),
        ]);
    }
    let mut blocks = vec![Block::Table(t)];
    if let Some(d) = f
        .iter()
        .find(|r| r.is(super::SINGLE_CORE))
        .and_then(|r| r.notes.iter().find(|n| n.starts_with("declared")))
    {
        blocks.push(Block::Note(d.clone()));
    }
    Some(Section {
        id: super::EXP.to_string(),
        title: "Effective frequency (measured; dependent add chain)".into(),
        blocks,
    })
}

/// The report's chart: the effective clock of each thread placement, as
/// bars.
fn placement_bars(run: &Run) -> Chart {
    let groups = run
        .records_of(super::EXP)
        .filter(|r| r.unit == "GHz")
        .filter_map(|r| {
            Some(BarGroup {
                label: r.metric.clone(),
                bars: vec![Bar::new("", r.value?)],
            })
        })
        .collect();
    Chart {
        title: "Effective frequency by thread placement".into(),
        caption: None,
        kind: ChartKind::Bars {
            unit: "GHz".into(),
            scale: Scale::Linear,
            groups,
            reference: None,
        },
    }
}

const KEY_FIGURES: &[KeyFigure] = &[
    KeyFigure {
        id: SINGLE_CORE,
        label: "single-core clock",
        keep: any,
        top: None,
    },
    KeyFigure {
        id: ALL_CORES,
        label: "all-core clock",
        keep: any,
        top: None,
    },
];

/// Its rules of advice ([`Views::rules`]).
const RULES: &[Rule] = &[
    Rule {
        id: "all-core-frequency-drop",
        rank: 70,
        timed: true,
        find: all_core_frequency_drop,
    },
    Rule {
        id: "declared-vs-measured-frequency",
        rank: 80,
        timed: true,
        find: declared_vs_measured_frequency,
    },
];

/// The clock falls when every core is busy (≥ 5% below one core).
pub fn all_core_frequency_drop(run: &Run) -> Vec<Finding> {
    const DROP: f64 = 0.05;
    let (Some(s), Some(a)) = (
        measured(run, super::SINGLE_CORE),
        measured(run, super::ALL_CORES),
    ) else {
        return Vec::new();
    };
    let (Some(vs), Some(va)) = (s.value, a.value) else {
        return Vec::new();
    };
    if vs <= 0.0 {
        return Vec::new();
    }
    let drop = 1.0 - va / vs;
    if drop < DROP {
        return Vec::new();
    }
    let n = a.data_as::<TeamClockData>().map(|d| d.per_thread_ghz.len());
    let threads = n
        .map(|n| format!("{n} cores"))
        .unwrap_or_else(|| "all cores".into());
    vec![Finding {
        rule: "all-core-frequency-drop",
        severity: Severity::Advice,
        title: format!(
            "the clock drops {:.0}% with {threads} busy: {} GHz on one core, {} GHz on all",
            drop * 100.0,
            fmt_num(vs),
            fmt_num(va)
        ),
        advice: format!(
            "Per-core throughput with every core busy is at most {:.0}% of a lone core's: size parallel \
             work (and read single-thread benchmarks) with the all-core clock, keep boost enabled, and do \
             not expect N threads to give N times one thread.{}",
            va / vs * 100.0,
            noisy_note(&[s, a])
        ),
        evidence: vec![
            ev("one core", format!("{} GHz", fmt_num(vs)), from_result(s)),
            ev(
                format!("{threads} at once, per core"),
                format!("{} GHz", fmt_num(va)),
                from_result(a),
            ),
        ],
    }]
}

/// How far off the measured clock may be from a declared one (5%).
const OFF: f64 = 0.05;

/// Declared clocks the measured one differs from, each as evidence with
/// the ratio measured / declared.
type OffClocks = Vec<(Evidence, f64)>;

/// The measured clock differs from what the machine declares (> 5%).
pub fn declared_vs_measured_frequency(run: &Run) -> Vec<Finding> {
    let Some(s) = measured(run, super::SINGLE_CORE) else {
        return Vec::new();
    };
    let Some(v) = s.value else {
        return Vec::new();
    };
    let Some(decl) = s.data_as::<SingleCoreData>().map(|d| d.declared) else {
        return Vec::new();
    };
    let mhz = v * 1000.0;
    let (below, above) = declared_clocks_off(s, mhz, &decl);
    let measured_ev = ev(
        "measured: one core",
        format!("{mhz:.0} MHz"),
        from_result(s),
    );
    let mut out = Vec::new();
    if !below.is_empty() {
        out.push(below_declared(run, s, measured_ev.clone(), below));
    }
    if !above.is_empty() {
        out.push(above_nominal(measured_ev, above));
    }
    out
}

/// The declared clocks that one core's measured `mhz` (result `s`) falls
/// below, and those it exceeds, by more than [`OFF`].
fn declared_clocks_off(s: &ResultRecord, mhz: f64, decl: &DeclaredClock) -> (OffClocks, OffClocks) {
    let mut below = Vec::new();
    let mut above = Vec::new();
    for (k, label, value) in [
        (
            "cpufreq_max_mhz",
            "cpufreq maximum (cpuinfo_max_freq)",
            decl.cpufreq_max_mhz,
        ),
        (
            "model_name_mhz",
            "the model name's clock",
            decl.model_name_mhz,
        ),
        ("cpuinfo_mhz", "/proc/cpuinfo 'cpu MHz'", decl.cpuinfo_mhz),
        (
            "cpufreq_base_mhz",
            "cpufreq base frequency",
            decl.cpufreq_base_mhz,
        ),
    ] {
        let Some(d) = value.filter(|d| *d > 0.0) else {
            continue;
        };
        let ratio = mhz / d;
        let e = ev(
            format!("declared: {label}"),
            format!("{d:.0} MHz"),
            format!("result {} (data.declared.{k})", s.key),
        );
        if ratio < 1.0 - OFF && k == "cpufreq_max_mhz" {
            below.push((e, ratio));
        } else if ratio > 1.0 + OFF && (k == "model_name_mhz" || k == "cpufreq_base_mhz") {
            above.push((e, ratio));
        } else if (ratio - 1.0).abs() > OFF && k == "cpuinfo_mhz" {
            if ratio < 1.0 {
                below.push((e, ratio));
            } else {
                above.push((e, ratio));
            }
        }
    }
    (below, above)
}

/// One core (result `s`) runs below the clocks in `below`: a warning.
fn below_declared(run: &Run, s: &ResultRecord, measured_ev: Evidence, below: OffClocks) -> Finding {
    let worst = below.iter().map(|b| b.1).fold(f64::INFINITY, f64::min);
    let gov = run.environment.governor.clone();
    let mut evidence = vec![measured_ev];
    evidence.extend(below.into_iter().map(|b| b.0));
    if let Some(g) = &gov {
        evidence.push(ev("cpufreq governor", g.clone(), "environment.governor"));
    }
    Finding {
        rule: "declared-vs-measured-frequency",
        severity: Severity::Warning,
        title: format!(
            "one core runs {:.0}% below the clock the machine declares",
            (1.0 - worst) * 100.0
        ),
        advice: format!(
            "The core does not reach its declared clock. Check the governor{} and energy preference \
             (performance), whether boost/turbo is disabled, power or thermal limits, and in a VM the \
             host's CPU quota. Use the measured GHz, not the declared one, to turn times into cycles.",
            gov.map(|g| format!(" (now {g})")).unwrap_or_default()
        ) + &noisy_note(&[s]),
        evidence,
    }
}

/// One core runs above the nominal clocks in `above` (turbo): advice.
fn above_nominal(measured_ev: Evidence, above: OffClocks) -> Finding {
    let best = above.iter().map(|b| b.1).fold(0.0f64, f64::max);
    let mut evidence = vec![measured_ev];
    evidence.extend(above.into_iter().map(|b| b.0));
    Finding {
        rule: "declared-vs-measured-frequency",
        severity: Severity::Advice,
        title: format!(
            "one core runs {:.0}% above the nominal clock (turbo)",
            (best - 1.0) * 100.0
        ),
        advice: "The nominal clock understates what one core runs at: turn times into cycles with the \
                 measured clock, and compare machines by measured, not nominal, frequency. Expect less \
                 with many cores busy (see the all-core figure)."
            .into(),
        evidence,
    }
}

// ---------------------------------------------------------------- verdict

fn clock_line(run: &Run) -> Option<VerdictLine> {
    let one = measured(run, super::SINGLE_CORE)?;
    let mut t = format!("one core {}", fig(one));
    if let Some(all) = measured(run, super::ALL_CORES) {
        let d = all.value.unwrap_or(0.0) / one.value.unwrap_or(1.0) - 1.0;
        t.push_str(&format!(" · all cores {} ({:+.0}%)", fig(all), d * 100.0));
    }
    let declared = one
        .data_as::<SingleCoreData>()
        .map(|d| d.declared)
        .unwrap_or_default();
    if let Some(mx) = declared.cpufreq_max_mhz {
        t.push_str(&format!(" · declared max {:.2} GHz", mx / 1000.0));
    }
    if let Some(b) = declared.cpufreq_base_mhz.or(declared.cpuinfo_mhz) {
        t.push_str(&format!(" · nominal {:.2} GHz", b / 1000.0));
    }
    Some(VerdictLine::plain("Clock", t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_a_row_per_placement_with_its_spread_and_the_declared_clock() {
        let rs = vec![
            ResultRecord::of(SINGLE_CORE, "GHz", true)
                .with_samples(vec![3.1, 3.2, 3.3])
                .with_note("declared, not measured: cpufreq max 3.5 GHz"),
            ResultRecord::unavailable(super::super::EXP, "smt_pair", "GHz", "no SMT"),
        ];
        let s = crate::view::text::sections(&summary(&rs).into_iter().collect::<Vec<_>>());
        let row = s
            .lines()
            .find(|l| l.contains("single_core"))
            .unwrap_or_default();
        let words: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(words, ["single_core", "3.200", "GHz", "3.1%", "3"], "{s}");
        assert!(s.contains("n/a (smt_pair): no SMT"), "{s}");
        assert!(
            s.contains("  declared, not measured: cpufreq max 3.5 GHz"),
            "{s}"
        );
        assert!(summary(&[]).is_none());
    }
}

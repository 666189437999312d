//! The format-neutral model of what a view shows: [`Figure`]s with their
//! marks and spread, [`Table`]s, [`Chart`]s, [`Section`]s, verdict lines,
//! key figures and ranks. Plain data: the experiments build it, the
//! printers ([`super::text`], [`super::html`]) draw it.

use crate::results::schema::{MetricId, ResultRecord};
use serde::Serialize;

// ---------------------------------------------------------------- figures

/// How a figure is marked beside its value (the verdict's `!` and `?`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Nothing to say.
    Clean,
    /// Spread above 5% CV, or disturbed while measured (quota throttling).
    Noisy,
    /// A check of its experiment found it implausible.
    Suspect,
}

impl Mark {
    /// What a printer writes after the value: ` !` noisy, ` ?` suspect
    /// (the verdict's marks).
    pub fn suffix(self) -> &'static str {
        match self {
            Mark::Clean => "",
            Mark::Noisy => " !",
            Mark::Suspect => " ?",
        }
    }
}

/// The spread of a figure's repetitions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    /// stddev / mean (a fraction).
    pub cv: f64,
}

/// One value as shown: measured (with its unit, mark and spread) or not
/// available, always with the reason.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    pub value: Option<f64>,
    pub unit: String,
    pub mark: Mark,
    pub spread: Option<Spread>,
    /// Why there is no value; `Some` exactly when `value` is `None`.
    pub na_reason: Option<String>,
}

/// The reason shown for a record that has no value and gave none.
pub const NO_REASON: &str = "no reason recorded";

impl Figure {
    /// A measured value without a spread (a derived figure).
    pub fn measured(value: f64, unit: &str) -> Figure {
        Figure {
            value: Some(value),
            unit: unit.to_string(),
            mark: Mark::Clean,
            spread: None,
            na_reason: None,
        }
    }

    /// No value, and why: the only way to make a figure without one.
    pub fn na(unit: &str, reason: &str) -> Figure {
        Figure {
            value: None,
            unit: unit.to_string(),
            mark: Mark::Clean,
            spread: None,
            na_reason: Some(reason.to_string()),
        }
    }

    /// A record as a figure: its value, unit, spread and mark (suspect
    /// before noisy or disturbed, as the verdict marks them); without a
    /// value, its reason (or [`NO_REASON`]).
    pub fn of(r: &ResultRecord) -> Figure {
        let Some(v) = r.value else {
            return Figure::na(
                &r.unit,
                r.unavailable_reason.as_deref().unwrap_or(NO_REASON),
            );
        };
        let mark = if r.is_suspect() {
            Mark::Suspect
        } else if r.is_noisy() || r.is_disturbed() {
            Mark::Noisy
        } else {
            Mark::Clean
        };
        Figure {
            mark,
            spread: r.stats.as_ref().map(|s| Spread {
                n: s.n,
                min: s.min,
                max: s.max,
                cv: s.cv,
            }),
            ..Figure::measured(v, &r.unit)
        }
    }
}

// ---------------------------------------------------------------- tables

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Align {
    Left,
    Right,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Column {
    pub header: String,
    pub align: Align,
    /// The unit every figure of the column has, shown once in the header.
    pub unit: Option<String>,
}

/// One cell of a table.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cell {
    Empty,
    Text(String),
    Figure(Figure),
    /// Text the experiment wrote at its own precision, in pieces, each
    /// marked for what it is (a noisy figure, a reason, a command).
    Spans(Vec<Span>),
    /// No figure here: `text` (a dash whose reason is said under the table,
    /// or the reason itself) over `span` columns, this one and the next
    /// `span - 1` (which the row leaves [`Cell::Empty`]).
    Absent {
        text: String,
        span: usize,
    },
}

/// What a piece of text is, for the printers that can mark it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    Plain,
    /// A figure (or its spread) above 5% CV.
    Noisy,
    /// A reason no figure is there.
    NotAvailable,
    /// A command line or a name to type.
    Code,
}

/// A piece of text and what it is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

impl Span {
    pub fn new(text: impl Into<String>, style: Style) -> Span {
        Span {
            text: text.into(),
            style,
        }
    }

    /// The pieces' text joined, unmarked (what a printer without marks shows).
    pub fn joined(spans: &[Span]) -> String {
        spans.iter().map(|s| s.text.as_str()).collect()
    }
}

/// A table: columns, and rows of exactly as many cells.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    pub caption: Option<String>,
}

impl Table {
    /// A table of these columns (left-aligned text), no rows.
    pub fn new(headers: &[&str]) -> Table {
        Table {
            columns: headers
                .iter()
                .map(|h| Column {
                    header: h.to_string(),
                    align: Align::Left,
                    unit: None,
                })
                .collect(),
            ..Table::default()
        }
    }

    /// Every figure without a value, with its reason, as (row, reason) in
    /// row then column order: what every printer lists under the table.
    pub fn missing(&self) -> impl Iterator<Item = (usize, &str)> {
        self.rows.iter().enumerate().flat_map(|(r, row)| {
            row.iter().filter_map(move |c| match c {
                Cell::Figure(Figure {
                    value: None,
                    na_reason: Some(why),
                    ..
                }) => Some((r, why.as_str())),
                _ => None,
            })
        })
    }

    /// Add a row; a short one is filled with [`Cell::Empty`]. A row with
    /// more cells than columns is refused (a view's bug, said with both
    /// counts).
    pub fn push(&mut self, mut row: Vec<Cell>) -> Result<(), String> {
        let n = self.columns.len();
        if row.len() > n {
            return Err(format!(
                "a row of {} cells in a table of {n} columns",
                row.len()
            ));
        }
        row.resize(n, Cell::Empty);
        self.rows.push(row);
        Ok(())
    }
}

// ---------------------------------------------------------------- charts

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    Linear,
    Log,
    /// The printer decides (log when the values span more than a decade or so).
    Auto,
}

/// How an axis's tick labels are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ticks {
    /// As every figure is ([`crate::base::fmt::fmt_num`]).
    #[default]
    Figure,
    /// Sizes in bytes, binary units (`32K`, `1M`).
    Bytes,
    /// Counts: whole numbers without a decimal, others with one.
    Count,
    /// One decimal.
    Tenths,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Axis {
    pub label: String,
    pub unit: String,
    pub scale: Scale,
    pub ticks: Ticks,
}

impl Axis {
    /// An axis of `label` in `unit` (either may be empty), its ticks
    /// written as figures.
    pub fn new(label: &str, unit: &str, scale: Scale) -> Axis {
        Axis {
            label: label.to_string(),
            unit: unit.to_string(),
            scale,
            ticks: Ticks::Figure,
        }
    }
}

/// A labelled vertical marker at a value of the x axis (a cache size).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct XMark {
    pub x: f64,
    pub label: String,
}

/// Which colour a line or bar takes: the palette's `Series(i)` (the runs
/// of a comparison keep theirs across charts), or the grey of a published
/// figure. None: the chart's own order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hue {
    Series(usize),
    Published,
}

/// A reference line across a chart (a baseline's 100%, a published or
/// theoretical figure) and what it is called beside it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reference {
    pub value: f64,
    pub label: String,
}

/// One named line of points.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    pub name: Option<String>,
    pub points: Vec<(f64, f64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hue: Option<Hue>,
}

impl Series {
    /// The series of the finite points of `points`, or none with fewer than
    /// two (nothing to draw a line through).
    pub fn finite(
        name: Option<&str>,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) -> Option<Series> {
        let points: Vec<(f64, f64)> = points
            .into_iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        (points.len() >= 2).then(|| Series {
            name: name.map(str::to_string),
            points,
            hue: None,
        })
    }
}

/// One bar.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// What is written beside it, when not the value itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hue: Option<Hue>,
}

impl Bar {
    /// A bar of `value`, written as its value, in the chart's colour.
    pub fn new(label: impl Into<String>, value: f64) -> Bar {
        Bar {
            label: label.into(),
            value,
            text: None,
            hue: None,
        }
    }
}

/// Bars side by side under one label (a single bar per group: a plain bar chart).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BarGroup {
    pub label: String,
    pub bars: Vec<Bar>,
}

impl BarGroup {
    /// A group of one bar (a plain bar chart's bar).
    pub fn single(label: impl Into<String>, value: f64) -> BarGroup {
        BarGroup {
            label: label.into(),
            bars: vec![Bar::new("", value)],
        }
    }
}

/// A matrix of values, rows by columns; `None`: not measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Heatmap {
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
    pub unit: String,
    /// The header over the row labels (`node`).
    pub corner: String,
    /// What a row and a column are, said in a cell's hover text before its
    /// label (`CPUs of node` 0, `memory` 1).
    pub row_label: String,
    pub col_label: String,
}

impl Heatmap {
    /// A heatmap whose cells are `rows` × `cols`, refused otherwise.
    pub fn new(
        rows: Vec<String>,
        cols: Vec<String>,
        cells: Vec<Vec<Option<f64>>>,
        unit: &str,
    ) -> Result<Heatmap, String> {
        if cells.len() != rows.len() || cells.iter().any(|r| r.len() != cols.len()) {
            return Err(format!(
                "heatmap cells are not {} rows of {} columns",
                rows.len(),
                cols.len()
            ));
        }
        Ok(Heatmap {
            rows,
            cols,
            cells,
            unit: unit.to_string(),
            corner: String::new(),
            row_label: String::new(),
            col_label: String::new(),
        })
    }

    /// The heatmap of `rows` × `cols` read from `m`, whatever its shape: a
    /// cell `m` lacks is not measured.
    pub fn filled(
        rows: Vec<String>,
        cols: Vec<String>,
        m: &[Vec<Option<f64>>],
        unit: &str,
    ) -> Heatmap {
        let cells = (0..rows.len())
            .map(|r| {
                (0..cols.len())
                    .map(|c| m.get(r).and_then(|row| row.get(c)).copied().flatten())
                    .collect()
            })
            .collect();
        Heatmap {
            rows,
            cols,
            cells,
            unit: unit.to_string(),
            corner: String::new(),
            row_label: String::new(),
            col_label: String::new(),
        }
    }

    /// The same, with its corner header and what its rows and columns are.
    pub fn labelled(self, corner: &str, row_label: &str, col_label: &str) -> Heatmap {
        Heatmap {
            corner: corner.to_string(),
            row_label: row_label.to_string(),
            col_label: col_label.to_string(),
            ..self
        }
    }
}

/// What a chart draws.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    Lines {
        x: Axis,
        y: Axis,
        series: Vec<Series>,
        /// A horizontal reference line (a published or theoretical figure).
        reference: Option<Reference>,
        /// Vertical markers, drawn dashed with their labels.
        marks: Vec<XMark>,
    },
    Bars {
        unit: String,
        scale: Scale,
        groups: Vec<BarGroup>,
        /// A vertical reference line across the bars (a baseline's 100%).
        reference: Option<Reference>,
    },
    Heatmap(Heatmap),
    /// A square matrix of pairs of the same things (CPU to CPU): drawn as
    /// coloured squares, low green to high red, the diagonal blank; the
    /// `outlined` pairs (row indices) marked as `outlined_label` says.
    PairMatrix {
        map: Heatmap,
        outlined: Vec<(usize, usize)>,
        outlined_label: String,
    },
    /// Estimates with their intervals, one row each, on a log axis around a
    /// reference (a ratio to a baseline: 1): a dot at the estimate, a
    /// whisker over the interval, the row's text after it.
    Intervals {
        /// What the intervals are, after the title (`95% intervals: s`).
        subtitle: String,
        rows: Vec<Interval>,
        reference: f64,
        reference_label: String,
    },
}

/// One row of an [`ChartKind::Intervals`] chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub label: String,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The estimate and interval as written beside the whisker.
    pub text: String,
    /// Drawn in the colour of the one that won.
    pub highlight: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    pub title: String,
    pub caption: Option<String>,
    pub kind: ChartKind,
}

impl Chart {
    /// A plain bar chart: `groups` in `unit` on a linear scale, no caption
    /// or reference.
    pub fn bars(title: impl Into<String>, unit: &str, groups: Vec<BarGroup>) -> Chart {
        Chart {
            title: title.into(),
            caption: None,
            kind: ChartKind::Bars {
                unit: unit.to_string(),
                scale: Scale::Linear,
                groups,
                reference: None,
            },
        }
    }
}

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
pub fn curve(x_label: &str, x_unit: &str, y_unit: &str, points: Vec<(f64, f64)>) -> Vec<Curve> {
    Series::finite(None, points)
        .map(|s| Curve {
            name: None,
            x_label: x_label.to_string(),
            x_unit: x_unit.to_string(),
            y_unit: y_unit.to_string(),
            log_x: None,
            points: s.points,
        })
        .into_iter()
        .collect()
}

// ---------------------------------------------------------------- figure lists

/// One figure of a list: what it is (its name and parameters), the figure
/// (marked noisy by its spread alone) and its notes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FigureItem {
    pub name: String,
    /// `k=v k=v`.
    pub params: String,
    pub figure: Figure,
    pub notes: Vec<String>,
}

/// Figures one per line, under the name of what they belong to (an
/// experiment) when they start its list.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FigureList {
    pub heading: Option<String>,
    pub items: Vec<FigureItem>,
}

impl FigureList {
    /// The list as a table (figure, parameters, value with its unit and
    /// spread): what the printers without a line layout of their own draw;
    /// the notes are [`FigureList::notes`].
    pub fn table(&self) -> Table {
        let mut t = Table::new(&["figure", "parameters", "value"]);
        t.columns[2].align = Align::Right;
        t.caption = self.heading.clone();
        for i in &self.items {
            t.rows.push(vec![
                Cell::Text(i.name.clone()),
                Cell::Text(i.params.clone()),
                Cell::Figure(i.figure.clone()),
            ]);
        }
        t
    }

    /// Each note with the figure it is about (`name params: note`).
    pub fn notes(&self) -> impl Iterator<Item = String> + '_ {
        self.items.iter().flat_map(|i| {
            let about = format!("{} {}", i.name, i.params);
            let about = about.trim_end().to_string();
            i.notes.iter().map(move |n| format!("{about}: {n}"))
        })
    }
}

// ---------------------------------------------------------------- sections

/// One part of a section's body.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    /// A heading inside the section (HTML: h3, as the report's figures).
    Heading(String),
    /// The heading of a part of the page that stands on its own (a tune
    /// run: HTML h2), in marked pieces (the command it measured).
    Title(Vec<Span>),
    /// Prose: a sentence, a note, a method.
    Para(String),
    Table(Table),
    Chart(Chart),
    /// A note on what is above it (a method, a caveat): HTML stacks notes
    /// without a paragraph's spacing.
    Note(String),
    /// A line saying what above lacks a figure and why (`what: not
    /// available: reason`): a note marked not available.
    NotAvailable(String),
    /// A sentence at the body's size (a `Para` reads as a note).
    Plain(String),
    /// A sentence that must not be missed (a disturbed measurement).
    Strong(String),
    /// Items of a list (findings).
    List(Vec<String>),
    /// Figures one per line (the memory experiments' records).
    Figures(FigureList),
    /// Blocks that belong together (a chart and what was found in it): HTML
    /// keeps them in one block, the other printers print them in order.
    Group(Vec<Block>),
    /// Lines already laid out as text: a section keeps its old output byte
    /// for byte while it migrates; text printers print them as they are,
    /// HTML as preformatted.
    Verbatim(Vec<String>),
}

/// What one experiment shows in the summary or the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Section {
    /// The HTML anchor; unique in a page.
    pub id: String,
    pub title: String,
    pub blocks: Vec<Block>,
}

/// The one untitled section of an experiment's report (`blocks` built
/// only at [`Depth::Report`]); none at the other depths.
pub fn report_section(depth: Depth, id: &str, blocks: impl FnOnce() -> Vec<Block>) -> Vec<Section> {
    match depth {
        Depth::Report => vec![Section {
            id: id.to_string(),
            title: String::new(),
            blocks: blocks(),
        }],
        Depth::Summary | Depth::Command => Vec::new(),
    }
}

/// How much of itself an experiment shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Its headline figures: the end of `run`, `show --summary`.
    Summary,
    /// Its charts and tables in the HTML report.
    Report,
    /// Everything its own command prints.
    Command,
}

// ---------------------------------------------------------------- verdict, findings, fleet

/// How a verdict line is emphasised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    Plain,
    Lead,
    Warn,
}

/// One line of the verdict: a heading (`Clock`, `Latency`, …) and its text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerdictLine {
    pub heading: String,
    pub text: String,
    pub tone: Tone,
}

impl VerdictLine {
    /// A plain line under `heading`.
    pub fn plain(heading: &str, text: impl Into<String>) -> VerdictLine {
        VerdictLine {
            heading: heading.to_string(),
            text: text.into(),
            tone: Tone::Plain,
        }
    }
}

/// The heading each line is printed with: its own, or empty where it
/// repeats the line before's (a continuation: the NUMA line under the
/// latency curve), so an experiment need not know what was printed before.
pub fn shown_headings(lines: &[VerdictLine]) -> Vec<&str> {
    let mut prev: Option<&str> = None;
    lines
        .iter()
        .map(|l| {
            let h = l.heading.as_str();
            let shown = if prev == Some(h) { "" } else { h };
            prev = Some(h);
            shown
        })
        .collect()
}

/// A figure the fleet and compare set side by side across hosts, and which
/// records of a run stand for it.
pub struct KeyFigure {
    pub id: MetricId,
    pub label: &'static str,
    /// Which records of the metric count.
    pub keep: fn(&ResultRecord) -> bool,
    /// A numeric param of which each host's largest is taken (its "all
    /// threads" figure); left out of the figure's identity.
    pub top: Option<&'static str>,
}

/// Every record of the metric stands for the key figure.
pub fn any(_: &ResultRecord) -> bool {
    true
}

/// A record's param as text (a string as is, any other value as JSON).
pub fn param_text(r: &ResultRecord, key: &str) -> Option<String> {
    r.params.get(key).map(|v| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// Where an experiment's verdict lines and key figures fall among
/// the others' (lower first; steps of 10 leave room). Run order is not
/// presentation order: frequency runs first for the others' sake, and a
/// figure may be shown before one that was measured earlier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank(pub u16);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::stats::Stats;

    const DEMO: MetricId = MetricId::new("demo", "figure");

    fn record(value: Option<f64>, cv: f64) -> ResultRecord {
        let mut r = ResultRecord::of(DEMO, "ns", false);
        r.value = value;
        r.stats = value.map(|v| Stats {
            n: 5,
            median: v,
            min: v * 0.9,
            max: v * 1.1,
            mean: v,
            stddev: v * cv,
            cv,
        });
        r
    }

    #[test]
    fn a_figure_without_a_value_always_has_a_reason() {
        let f = Figure::of(&record(None, 0.0));
        assert_eq!(f.value, None);
        assert_eq!(f.na_reason.as_deref(), Some(NO_REASON));
        let mut r = record(None, 0.0);
        r.unavailable_reason = Some("no SMT".into());
        assert_eq!(Figure::of(&r).na_reason.as_deref(), Some("no SMT"));
        let m = Figure::of(&record(Some(2.0), 0.01));
        assert_eq!(
            (m.value, m.na_reason, m.mark),
            (Some(2.0), None, Mark::Clean)
        );
        assert_eq!(m.spread.map(|s| (s.n, s.min, s.max)), Some((5, 1.8, 2.2)));
    }

    #[test]
    fn marks_follow_the_verdict() {
        assert_eq!(Figure::of(&record(Some(1.0), 0.2)).mark, Mark::Noisy);
        let suspect = record(Some(1.0), 0.2).with_suspect("faster than the clock");
        assert_eq!(Figure::of(&suspect).mark, Mark::Suspect);
        let disturbed = record(Some(1.0), 0.0).with_disturbed("quota");
        assert_eq!(Figure::of(&disturbed).mark, Mark::Noisy);
    }

    #[test]
    fn rows_fill_short_and_refuse_long() {
        let mut t = Table::new(&["a", "b", "c"]);
        t.push(vec![Cell::Text("x".into())]).unwrap();
        assert_eq!(
            t.rows[0],
            vec![Cell::Text("x".into()), Cell::Empty, Cell::Empty]
        );
        let e = t.push(vec![Cell::Empty; 4]).unwrap_err();
        assert!(e.contains("4 cells") && e.contains("3 columns"), "{e}");
        assert_eq!(t.rows.len(), 1);
    }

    #[test]
    fn series_keep_finite_points_and_need_two() {
        let s = Series::finite(
            Some("a"),
            [
                (1.0, 2.0),
                (f64::NAN, 1.0),
                (3.0, f64::INFINITY),
                (4.0, 5.0),
            ],
        );
        assert_eq!(s.unwrap().points, vec![(1.0, 2.0), (4.0, 5.0)]);
        assert!(Series::finite(None, [(1.0, 2.0), (2.0, f64::NAN)]).is_none());
    }

    #[test]
    fn heatmap_shape_is_checked() {
        let rows = vec!["0".to_string(), "1".to_string()];
        let cols = vec!["0".to_string()];
        assert!(Heatmap::new(
            rows.clone(),
            cols.clone(),
            vec![vec![Some(1.0)], vec![None]],
            "ns"
        )
        .is_ok());
        assert!(Heatmap::new(rows.clone(), cols.clone(), vec![vec![Some(1.0)]], "ns").is_err());
        assert!(Heatmap::new(rows, cols, vec![vec![None], vec![None, None]], "ns").is_err());
    }

    #[test]
    fn repeated_headings_are_continuations() {
        let l = |h: &str| VerdictLine {
            heading: h.into(),
            text: String::new(),
            tone: Tone::Plain,
        };
        let lines = [
            l("Clock"),
            l("Latency"),
            l("Latency"),
            l("Bandwidth"),
            l("Latency"),
        ];
        assert_eq!(
            shown_headings(&lines),
            ["Clock", "Latency", "", "Bandwidth", "Latency"]
        );
    }
}

//! Published reference figures: what the seed articles (and other named
//! sources) printed, kept as data files under `data/published/` and
//! embedded in the binary. They are shown beside a user's own results,
//! always labelled as published and never as measured on this run.
//!
//! Format (`cpuscope.published/1`): see docs/compare.md. One file holds one
//! source section (a table or a group of figures of one article); every
//! figure names its machine, metric, unit and direction, and either a value,
//! a range, or both. `mappings` declare which cpuscope results measure the
//! same workload, so that a figure can be put beside them.

use super::schema::ResultRecord;
use anyhow::{anyhow, bail, Context as _, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Name and version of a published-data file.
pub const PUBLISHED_SCHEMA: &str = "cpuscope.published/1";

/// The embedded files: (file name, text). To add a file, put it in
/// data/published/ and add one line here.
pub const FILES: &[(&str, &str)] = &[
    (
        "seed000-bc.json",
        include_str!("../../data/published/seed000-bc.json"),
    ),
    (
        "seed000-openssl.json",
        include_str!("../../data/published/seed000-openssl.json"),
    ),
    (
        "seed000-capacity.json",
        include_str!("../../data/published/seed000-capacity.json"),
    ),
    (
        "seed000-cpu-bound.json",
        include_str!("../../data/published/seed000-cpu-bound.json"),
    ),
    (
        "seed000-unixbench.json",
        include_str!("../../data/published/seed000-unixbench.json"),
    ),
    (
        "seed000-kunpeng-numa-tpmc.json",
        include_str!("../../data/published/seed000-kunpeng-numa-tpmc.json"),
    ),
    (
        "seed001-epyc7742.json",
        include_str!("../../data/published/seed001-epyc7742.json"),
    ),
    (
        "seed002-cacheline.json",
        include_str!("../../data/published/seed002-cacheline.json"),
    ),
    (
        "seed002-branch-order.json",
        include_str!("../../data/published/seed002-branch-order.json"),
    ),
    (
        "seed003-spec2000-opteron.json",
        include_str!("../../data/published/seed003-spec2000-opteron.json"),
    ),
    (
        "seed004-smt-simd-efficiency.json",
        include_str!("../../data/published/seed004-smt-simd-efficiency.json"),
    ),
    (
        "mess2024-bandwidth-latency.json",
        include_str!("../../data/published/mess2024-bandwidth-latency.json"),
    ),
];

/// Where a set of figures was published.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Seed file name (e.g. `000_3c293c0956d9f5d7.txt`), or another document's name.
    pub seed: String,
    /// Title of the article.
    pub document: String,
    /// The section (heading or table caption) the figures come from.
    pub section: String,
    /// Web address, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl Source {
    /// `seed 000_… § section`.
    pub fn cite(&self) -> String {
        format!("{} § {}", self.seed, self.section)
    }
}

/// How a published value is to be read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Qualifier {
    /// The figure as printed.
    #[default]
    Exact,
    /// "about", "~".
    Approx,
    /// An upper bound ("< 70 ns").
    AtMost,
    /// A lower bound.
    AtLeast,
    /// From a specification, not measured by the source.
    Declared,
    /// A theoretical peak.
    Theoretical,
}

impl Qualifier {
    /// Prefix for a printed value: "", "~", "≤ ", "≥ ", "declared ", "theoretical ".
    pub fn prefix(self) -> &'static str {
        match self {
            Qualifier::Exact => "",
            Qualifier::Approx => "~",
            Qualifier::AtMost => "≤ ",
            Qualifier::AtLeast => "≥ ",
            Qualifier::Declared => "declared ",
            Qualifier::Theoretical => "theoretical ",
        }
    }
}

/// One published figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// The machine as the source names it (a key of the set's `machines`).
    pub machine: String,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// The figure; null when the source gives only a range.
    pub value: Option<f64>,
    /// [low, high] when the source gives a range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "is_exact")]
    pub qualifier: Qualifier,
    /// What identifies the figure within the set (threads, block size...).
    #[serde(default)]
    pub params: BTreeMap<String, Value>,
    /// A cpuscope comparison key that measures exactly this (same method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn is_exact(q: &Qualifier) -> bool {
    *q == Qualifier::Exact
}

/// Which figures of a set a mapping applies to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Select {
    pub metric: String,
    /// Every one of these must equal the figure's param.
    #[serde(default)]
    pub params: BTreeMap<String, Value>,
}

/// Which cpuscope results a mapping applies to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultSelect {
    pub experiment: String,
    pub metric: String,
    pub unit: String,
    /// Every one of these must equal the result's param.
    #[serde(default)]
    pub params: BTreeMap<String, Value>,
}

/// A declared correspondence: these published figures measure the same
/// workload as these cpuscope results; published value × `scale` is in the
/// result's unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    pub select: Select,
    pub result: ResultSelect,
    #[serde(default = "one")]
    pub scale: f64,
}

fn one() -> f64 {
    1.0
}

/// One file: the figures of one source section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedSet {
    pub schema: String,
    /// Unique id, e.g. `seed000-bc`.
    pub id: String,
    pub title: String,
    pub source: Source,
    /// What was run (command line, conditions).
    pub workload: String,
    #[serde(default)]
    pub notes: Vec<String>,
    /// Machine name → description (cores, sockets, how the source names it).
    #[serde(default)]
    pub machines: BTreeMap<String, String>,
    #[serde(default)]
    pub mappings: Vec<Mapping>,
    pub figures: Vec<Figure>,
}

/// Loose equality of parameter values: equal JSON, or equal text when one
/// side is a string (`1` matches `"1"`).
pub fn param_eq(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        o => o.to_string(),
    };
    (a.is_string() || b.is_string()) && text(a) == text(b)
}

fn params_subset(want: &BTreeMap<String, Value>, have: &BTreeMap<String, Value>) -> bool {
    want.iter()
        .all(|(k, v)| have.get(k).is_some_and(|h| param_eq(v, h)))
}

impl Select {
    pub fn matches(&self, f: &Figure) -> bool {
        self.metric == f.metric && params_subset(&self.params, &f.params)
    }
}

impl ResultSelect {
    pub fn matches(&self, r: &ResultRecord) -> bool {
        self.experiment == r.experiment
            && self.metric == r.metric
            && self.unit == r.unit
            && params_subset(&self.params, &r.params)
    }
}

/// Check one parsed set. Errors are one line and name the set.
pub fn validate_set(s: &PublishedSet) -> Result<()> {
    let id = &s.id;
    if s.schema != PUBLISHED_SCHEMA {
        bail!(
            "published set '{id}': schema '{}' is not {PUBLISHED_SCHEMA}",
            s.schema
        );
    }
    if id.trim().is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        bail!("published set id '{id}' must be non-empty [A-Za-z0-9._-]");
    }
    for (what, v) in [
        ("title", &s.title),
        ("workload", &s.workload),
        ("source.seed", &s.source.seed),
        ("source.document", &s.source.document),
        ("source.section", &s.source.section),
    ] {
        if v.trim().is_empty() {
            bail!("published set '{id}': {what} is empty");
        }
    }
    if s.figures.is_empty() {
        bail!("published set '{id}' has no figures");
    }
    for (i, f) in s.figures.iter().enumerate() {
        let at = format!("published set '{id}': figure #{} ({})", i + 1, f.metric);
        if f.machine.trim().is_empty() || f.metric.trim().is_empty() || f.unit.trim().is_empty() {
            bail!("{at}: machine, metric and unit must be non-empty");
        }
        if !s.machines.is_empty() && !s.machines.contains_key(&f.machine) {
            bail!("{at}: machine '{}' is not listed in machines", f.machine);
        }
        match (f.value, f.range) {
            (None, None) => bail!("{at}: needs a value or a range"),
            (Some(v), _) if !v.is_finite() => bail!("{at}: value is not finite"),
            _ => {}
        }
        if let Some([lo, hi]) = f.range {
            if !lo.is_finite() || !hi.is_finite() || lo > hi {
                bail!("{at}: range [{lo}, {hi}] is not [low, high]");
            }
        }
    }
    for (i, m) in s.mappings.iter().enumerate() {
        let at = format!("published set '{id}': mapping #{}", i + 1);
        if !(m.scale.is_finite() && m.scale > 0.0) {
            bail!("{at}: scale must be a positive number");
        }
        if !s.figures.iter().any(|f| m.select.matches(f)) {
            bail!("{at}: selects no figure (metric '{}')", m.select.metric);
        }
        if m.result.experiment.trim().is_empty()
            || m.result.metric.trim().is_empty()
            || m.result.unit.trim().is_empty()
        {
            bail!("{at}: result experiment, metric and unit must be non-empty");
        }
    }
    Ok(())
}

/// Parse and check one file's text.
pub fn parse_set(name: &str, text: &str) -> Result<PublishedSet> {
    let s: PublishedSet =
        serde_json::from_str(text).map_err(|e| anyhow!("published data '{name}': {e}"))?;
    validate_set(&s).with_context(|| format!("published data '{name}'"))?;
    Ok(s)
}

/// Parse a list of files; ids must be unique.
pub fn parse_files(files: &[(&str, &str)]) -> Result<Vec<PublishedSet>> {
    let mut out = Vec::new();
    let mut ids = BTreeSet::new();
    for (name, text) in files {
        let s = parse_set(name, text)?;
        if !ids.insert(s.id.clone()) {
            bail!("published data '{name}': id '{}' is used twice", s.id);
        }
        out.push(s);
    }
    Ok(out)
}

/// Every embedded set (parsed once).
pub fn all() -> Result<&'static [PublishedSet]> {
    static SETS: OnceLock<std::result::Result<Vec<PublishedSet>, String>> = OnceLock::new();
    match SETS.get_or_init(|| parse_files(FILES).map_err(|e| format!("{e:#}"))) {
        Ok(v) => Ok(v.as_slice()),
        Err(e) => Err(anyhow!("{e}")),
    }
}

/// The set with this id.
pub fn by_id(id: &str) -> Result<&'static PublishedSet> {
    let sets = all()?;
    sets.iter().find(|s| s.id == id).ok_or_else(|| {
        let ids: Vec<&str> = sets.iter().map(|s| s.id.as_str()).collect();
        anyhow!(
            "no published set '{}' (known: {})",
            id.escape_debug(),
            ids.join(", ")
        )
    })
}

/// A published figure that measures the same workload as a result.
#[derive(Clone, Debug, Serialize)]
pub struct Match<'a> {
    pub set: &'a PublishedSet,
    pub figure: &'a Figure,
    /// The figure in the result's unit (× the mapping's scale).
    pub value: Option<f64>,
    pub range: Option<[f64; 2]>,
    /// How it was matched: "key" or "mapping".
    pub how: &'static str,
}

impl Match<'_> {
    /// "Intel Xeon Platinum 8269CY (published: seed 000_… § …)".
    pub fn label(&self) -> String {
        format!("{} (published, {})", self.figure.machine, self.set.id)
    }
}

/// The published figures matching `rec` among `sets` (same comparison key,
/// or a declared mapping).
pub fn matches_in<'a>(sets: &'a [PublishedSet], rec: &ResultRecord) -> Vec<Match<'a>> {
    let mut out = Vec::new();
    for s in sets {
        for f in &s.figures {
            if f.key.as_deref() == Some(rec.key.as_str()) {
                out.push(Match {
                    set: s,
                    figure: f,
                    value: f.value,
                    range: f.range,
                    how: "key",
                });
                continue;
            }
            if let Some(m) = s
                .mappings
                .iter()
                .find(|m| m.select.matches(f) && m.result.matches(rec))
            {
                out.push(Match {
                    set: s,
                    figure: f,
                    value: f.value.map(|v| v * m.scale),
                    range: f.range.map(|[a, b]| [a * m.scale, b * m.scale]),
                    how: "mapping",
                });
            }
        }
    }
    out
}

/// The embedded figures matching `rec`; none if the embedded data is damaged.
pub fn matches_for(rec: &ResultRecord) -> Vec<Match<'static>> {
    match all() {
        Ok(sets) => matches_in(sets, rec),
        Err(_) => Vec::new(),
    }
}

/// A published number as the source would print it: no more than 12
/// significant digits, no trailing zeros (`42`, `26.729972414`, `89.10165`).
pub fn fmt_published(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = (11 - v.abs().log10().floor() as i32).clamp(0, 14) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A figure's value as text: "~42", "≤ 70", "5.5 to 6.6", "~80 (66 to 114)".
pub fn value_text(value: Option<f64>, range: Option<[f64; 2]>, q: Qualifier) -> String {
    let n = fmt_published;
    let r = range.map(|[a, b]| {
        if a == b {
            n(a)
        } else {
            format!("{} to {}", n(a), n(b))
        }
    });
    match (value, r) {
        (Some(v), None) => format!("{}{}", q.prefix(), n(v)),
        (Some(v), Some(r)) => format!("{}{} ({r})", q.prefix(), n(v)),
        (None, Some(r)) => format!("{}{r}", q.prefix()),
        (None, None) => "not given".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_files_parse() {
        let sets = all().unwrap();
        assert_eq!(sets.len(), FILES.len());
        for s in sets {
            // A seed's file, or another source with its address.
            let seed = s.source.seed.ends_with(".txt") && s.source.seed.len() > 4;
            let other = s
                .source
                .url
                .as_deref()
                .is_some_and(|u| u.starts_with("https://"));
            assert!(seed || other, "{}", s.id);
        }
    }

    #[test]
    fn loose_params() {
        assert!(param_eq(&Value::from(1), &Value::from("1")));
        assert!(!param_eq(&Value::from(1), &Value::from(2)));
        assert!(param_eq(&Value::from("all"), &Value::from("all")));
    }

    #[test]
    fn bad_sets_are_refused() {
        let good = r#"{"schema":"cpuscope.published/1","id":"x","title":"t",
            "source":{"seed":"000_a.txt","document":"d","section":"s"},"workload":"w",
            "figures":[{"machine":"m","metric":"f","unit":"s","higher_is_better":false,"value":1}]}"#;
        parse_set("good", good).unwrap();
        let no_value = good.replace(r#","value":1"#, r#","value":null"#);
        let e = format!("{:#}", parse_set("nv", &no_value).unwrap_err());
        assert!(e.contains("needs a value or a range"), "{e}");
        let bad_schema = good.replace("published/1", "published/9");
        assert!(parse_set("bs", &bad_schema).is_err());
        let unknown = good.replace(r#""workload":"w""#, r#""workload":"w","extra":1"#);
        assert!(parse_set("u", &unknown).is_err());
        let bad_map = good.replace(
            r#""workload":"w""#,
            r#""workload":"w","mappings":[{"select":{"metric":"nope"},"result":{"experiment":"e","metric":"m","unit":"s"}}]"#,
        );
        let e = format!("{:#}", parse_set("bm", &bad_map).unwrap_err());
        assert!(e.contains("selects no figure"), "{e}");
        let e = parse_files(&[("a", good), ("b", good)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("used twice"), "{e}");
    }

    #[test]
    fn value_texts() {
        assert_eq!(value_text(Some(42.0), None, Qualifier::Approx), "~42");
        assert_eq!(
            value_text(None, Some([5.5, 6.6]), Qualifier::Exact),
            "5.5 to 6.6"
        );
        assert_eq!(fmt_published(89101.65 * 0.001), "89.10165");
        assert_eq!(fmt_published(26.729972414), "26.729972414");
        assert_eq!(fmt_published(-27.0), "-27");
    }
}

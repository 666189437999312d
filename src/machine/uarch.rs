//! The core knowledge base (`data/uarch/*.toml`, embedded at build time):
//! what the documentation says a core microarchitecture does, and which
//! entry this machine's cores are. Reads no file at run time and measures
//! nothing: the machine's identity (cpuinfo, MIDR, hybrid core kinds) is
//! matched against the entries' rules. See data/uarch/README.md for the
//! format and docs/uarch.md for the generated table.

use super::identity::Identity;
use super::isa::Isa;
use super::topology::CoreKind;
use crate::base::CpuSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// (file name, contents) of every `data/uarch/*.toml`, written by build.rs.
static FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/uarch_files.rs"));
/// Files of citations: `sources.toml`, `sources-intel.toml`, ...
const SOURCES_PREFIX: &str = "sources";

// ------------------------------------------------------------------ types

/// One citation of `sources.toml`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Source {
    /// Its key in sources.toml (filled in when read).
    pub key: String,
    pub title: String,
    pub publisher: String,
    /// `vendor`, `measurement` (a published third-party measurement) or `seed`.
    pub kind: String,
    pub url: Option<String>,
    pub note: Option<String>,
}

/// FP throughput of the core.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Fp {
    pub source: String,
    /// FMA units: each takes one FMA of up to `fma_bits` per cycle.
    pub fma_units: Option<f64>,
    pub fma_bits: Option<u32>,
    /// Cores without FMA: separate add and multiply units of `add_mul_bits`.
    pub add_units: Option<f64>,
    pub mul_units: Option<f64>,
    pub add_mul_bits: Option<u32>,
    /// The widest vector the core executes (bits).
    pub vector_bits: Option<u32>,
    /// SVE vector length (bits) where the core has SVE.
    pub sve_bits: Option<u32>,
    /// Per-width overrides of FMA instructions per cycle ("64", "128", ...).
    pub fma_per_cycle: BTreeMap<String, f64>,
    /// Widths whose throughput the sources do not give.
    pub unknown_bits: Vec<u32>,
    pub unknown_why: Option<String>,
    pub notes: Vec<String>,
    /// Per-field citations where they differ from `source`.
    pub sources: BTreeMap<String, String>,
}

/// Front-end widths.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Frontend {
    pub source: String,
    /// Instructions per cycle from the (legacy) decoders.
    pub decode: Option<f64>,
    /// µops per cycle from the µop cache (x86).
    pub uop_cache: Option<f64>,
    /// Rename/allocation/dispatch width: the vendor-documented (or measured)
    /// width cpuscope uses as seed 000's "issue width" (发射数/周期).
    pub dispatch: Option<f64>,
    /// The issue width a seed article states for this core in its own
    /// formula (seed 000: "6指令/周期" for the Xeon 8163, "4指令/周期" for the
    /// TaiShan core), kept beside the documented widths and labelled as the
    /// seed's, never used as the documented figure.
    pub seed_stated_issue_width: Option<f64>,
    pub taken_branches_per_cycle: Option<f64>,
    pub notes: Vec<String>,
    pub sources: BTreeMap<String, String>,
}

/// Published load-to-use latency, core cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Latency {
    pub source: String,
    pub l1d: Option<f64>,
    pub l2: Option<f64>,
    pub l3: Option<f64>,
    pub notes: Vec<String>,
    pub sources: BTreeMap<String, String>,
}

/// Cache sizes (KiB) and ways.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cache {
    pub source: String,
    pub l1d_kib: Option<u64>,
    pub l1d_ways: Option<u32>,
    pub l1i_kib: Option<u64>,
    pub l2_kib: Option<u64>,
    pub l2_ways: Option<u32>,
    pub l2_scope: Option<String>,
    pub l3_kib: Option<u64>,
    pub l3_ways: Option<u32>,
    pub l3_scope: Option<String>,
    pub notes: Vec<String>,
    pub sources: BTreeMap<String, String>,
}

/// An entry of the knowledge base, its variant applied.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Core {
    pub id: String,
    pub name: String,
    pub vendor: String,
    pub products: String,
    pub year: Option<u32>,
    /// Hardware threads per core.
    pub smt: Option<u32>,
    pub notes: Vec<String>,
    pub fp: Fp,
    pub frontend: Option<Frontend>,
    pub latency: Option<Latency>,
    pub cache: Option<Cache>,
    /// The SKU variant applied, if any.
    pub variant: Option<String>,
    /// Every citation the entry names, resolved.
    pub cited: Vec<Source>,
}

/// FP precision of a throughput figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    F64,
    F32,
}

impl Fp {
    /// FMA instructions per cycle at `bits` (64: scalar FP64, 32: scalar
    /// FP32), or why not known. Err also for cores without FMA.
    pub fn fma_per_cycle(&self, bits: u32) -> Result<f64, String> {
        let key = bits.max(64).to_string();
        if let Some(v) = self.fma_per_cycle.get(&key) {
            return Ok(*v);
        }
        if self.unknown_bits.contains(&bits.max(64)) {
            return Err(format!(
                "{}-bit FMA throughput not given by the sources{}",
                bits.max(64),
                self.unknown_why
                    .as_deref()
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default()
            ));
        }
        if self.vector_bits.is_some_and(|v| bits > v) {
            return Err(format!(
                "the core has no {bits}-bit vectors (widest {} bits)",
                self.vector_bits.unwrap_or(0)
            ));
        }
        match (self.fma_units, self.fma_bits) {
            (Some(u), Some(b)) => Ok(u * (b as f64 / bits.max(64) as f64).min(1.0)),
            _ => {
                Err("no FMA throughput in the entry (a core without FMA, or not documented)".into())
            }
        }
    }

    /// Theoretical FLOPs per cycle per core at vector width `bits` (64 =
    /// scalar) and precision `p`: FMA instructions × lanes × 2, or for cores
    /// without FMA, add + multiply instructions × lanes.
    pub fn flops_per_cycle(&self, bits: u32, p: Precision) -> Result<f64, String> {
        let elem = match p {
            Precision::F64 => 64,
            Precision::F32 => 32,
        };
        let lanes = (bits.max(elem) / elem) as f64;
        match self.fma_per_cycle(bits) {
            Ok(f) => Ok(f * lanes * 2.0),
            Err(e) => match (self.add_units, self.mul_units, self.add_mul_bits) {
                (Some(a), Some(m), Some(b)) if self.fma_units.is_none() => {
                    if self.vector_bits.is_some_and(|v| bits > v) {
                        return Err(e);
                    }
                    let per = (b as f64 / bits.max(64) as f64).min(1.0);
                    Ok((a + m) * per * lanes)
                }
                _ => Err(e),
            },
        }
    }
}

impl Core {
    /// The citation of a section's field: the per-field key, else the section's.
    pub fn cite(&self, key: &str) -> Option<&Source> {
        self.cited.iter().find(|s| s.key == key)
    }

    /// "title (publisher)" of a source key, or the key when unknown.
    pub fn cite_text(&self, key: &str) -> String {
        match self.cite(key) {
            Some(s) if s.kind == "vendor" => format!("{} ({})", s.title, s.publisher),
            Some(s) => format!("{} ({}, {})", s.title, s.publisher, kind_word(&s.kind)),
            None => key.to_string(),
        }
    }

    /// The citation text of field `field` in a section with `source` and
    /// per-field `sources`.
    pub fn field_source(
        &self,
        source: &str,
        sources: &BTreeMap<String, String>,
        field: &str,
    ) -> String {
        self.cite_text(sources.get(field).map(String::as_str).unwrap_or(source))
    }
}

fn kind_word(kind: &str) -> &str {
    match kind {
        "measurement" => "third-party measurement",
        "seed" => "seed article",
        k => k,
    }
}

// --------------------------------------------------------------- matching

/// A value or a range of CPUID values: `0x55`, `85`, `"0x10-0x1f"`.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum RangeSpec {
    Num(u32),
    Text(String),
}

fn parse_num(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

impl RangeSpec {
    fn bounds(&self) -> Result<(u32, u32), String> {
        match self {
            RangeSpec::Num(n) => Ok((*n, *n)),
            RangeSpec::Text(t) => match t.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (parse_num(a)?, parse_num(b)?);
                    if a > b {
                        return Err(format!("range '{t}' runs backwards"));
                    }
                    Ok((a, b))
                }
                None => parse_num(t).map(|n| (n, n)),
            },
        }
    }
}

/// One recognition rule (a `[[match]]` table, or a variant's `when`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RuleSpec {
    x86_vendor: Option<String>,
    family: Option<u32>,
    models: Vec<RangeSpec>,
    steppings: Vec<RangeSpec>,
    flags_all: Vec<String>,
    flags_none: Vec<String>,
    brand_any: Vec<String>,
    brand_none: Vec<String>,
    core_kind: Option<String>,
    midr_implementer: Option<u32>,
    midr_parts: Vec<u32>,
    priority: i32,
    why: Option<String>,
}

#[derive(Clone, Debug, Default)]
struct Rule {
    spec: RuleSpec,
    models: Vec<(u32, u32)>,
    steppings: Vec<(u32, u32)>,
}

/// What the matcher looks at: one kind of core of a machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoreIdentity {
    pub x86_vendor: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    /// CPU flags (cpuinfo), as in the machine's `isa.flags`: not stored again.
    #[serde(skip)]
    pub flags: Vec<String>,
    pub brand: Option<String>,
    /// "P-core" / "E-core" on hybrid x86 parts.
    pub core_kind: Option<String>,
    pub midr_implementer: Option<u32>,
    pub midr_part: Option<u32>,
}

impl CoreIdentity {
    /// In words, for "not in the knowledge base" reasons.
    pub fn describe(&self) -> String {
        if let (Some(i), Some(p)) = (self.midr_implementer, self.midr_part) {
            return format!("MIDR implementer {i:#x}, part {p:#x}");
        }
        let mut s = format!(
            "vendor {}, family {}, model {}",
            self.x86_vendor.as_deref().unwrap_or("?"),
            self.family.map(|f| format!("{f:#x}")).unwrap_or("?".into()),
            self.model.map(|m| format!("{m:#x}")).unwrap_or("?".into())
        );
        if let Some(k) = &self.core_kind {
            s.push_str(&format!(", {k}"));
        }
        s
    }
}

fn in_ranges(v: Option<u32>, r: &[(u32, u32)]) -> bool {
    r.is_empty() || v.is_some_and(|v| r.iter().any(|&(a, b)| a <= v && v <= b))
}

impl Rule {
    fn of(spec: RuleSpec) -> Result<Rule, String> {
        let models = spec
            .models
            .iter()
            .map(RangeSpec::bounds)
            .collect::<Result<_, _>>()?;
        let steppings = spec
            .steppings
            .iter()
            .map(RangeSpec::bounds)
            .collect::<Result<_, _>>()?;
        Ok(Rule {
            spec,
            models,
            steppings,
        })
    }

    fn matches(&self, id: &CoreIdentity) -> bool {
        let s = &self.spec;
        let brand = id.brand.as_deref().unwrap_or("");
        let has = |f: &String| id.flags.iter().any(|x| x == f);
        s.x86_vendor
            .as_ref()
            .is_none_or(|v| id.x86_vendor.as_ref() == Some(v))
            && s.family.is_none_or(|f| id.family == Some(f))
            && in_ranges(id.model, &self.models)
            && in_ranges(id.stepping, &self.steppings)
            && s.flags_all.iter().all(has)
            && !s.flags_none.iter().any(has)
            && (s.brand_any.is_empty() || s.brand_any.iter().any(|b| brand.contains(b.as_str())))
            && !s.brand_none.iter().any(|b| brand.contains(b.as_str()))
            && s.core_kind
                .as_ref()
                .is_none_or(|k| id.core_kind.as_ref() == Some(k))
            && s.midr_implementer
                .is_none_or(|i| id.midr_implementer == Some(i))
            && (s.midr_parts.is_empty() || id.midr_part.is_some_and(|p| s.midr_parts.contains(&p)))
    }

    /// Keys given: the more, the more specific.
    fn keys(&self) -> usize {
        let s = &self.spec;
        [
            s.x86_vendor.is_some(),
            s.family.is_some(),
            !s.models.is_empty(),
            !s.steppings.is_empty(),
            !s.flags_all.is_empty(),
            !s.flags_none.is_empty(),
            !s.brand_any.is_empty(),
            !s.brand_none.is_empty(),
            s.core_kind.is_some(),
            s.midr_implementer.is_some(),
            !s.midr_parts.is_empty(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }

    /// Identities this rule matches: one per end of each model range and
    /// per part (for the base's self-check and tests).
    fn examples(&self) -> Vec<CoreIdentity> {
        let s = &self.spec;
        let first = CoreIdentity {
            x86_vendor: s.x86_vendor.clone(),
            family: s.family,
            model: self.models.first().map(|r| r.0),
            stepping: self.steppings.first().map(|r| r.0),
            flags: s.flags_all.clone(),
            brand: s.brand_any.first().cloned(),
            core_kind: s.core_kind.clone(),
            midr_implementer: s.midr_implementer,
            midr_part: s.midr_parts.first().copied(),
        };
        let mut out = vec![first.clone()];
        for &(a, b) in &self.models {
            for m in [a, b] {
                out.push(CoreIdentity {
                    model: Some(m),
                    ..first.clone()
                });
            }
        }
        for &p in &s.midr_parts {
            out.push(CoreIdentity {
                midr_part: Some(p),
                ..first.clone()
            });
        }
        for b in &s.brand_any {
            out.push(CoreIdentity {
                brand: Some(b.clone()),
                ..first.clone()
            });
        }
        out
    }

    fn rank(&self) -> (i32, usize) {
        (self.spec.priority, self.keys())
    }

    /// The rule in words.
    fn describe(&self) -> String {
        let s = &self.spec;
        let mut p = Vec::new();
        if let Some(v) = &s.x86_vendor {
            p.push(format!("vendor {v}"));
        }
        if let Some(f) = s.family {
            p.push(format!("family {f:#x}"));
        }
        let ranges = |r: &[(u32, u32)]| {
            r.iter()
                .map(|&(a, b)| {
                    if a == b {
                        format!("{a:#x}")
                    } else {
                        format!("{a:#x}-{b:#x}")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.models.is_empty() {
            p.push(format!("model {}", ranges(&self.models)));
        }
        if !self.steppings.is_empty() {
            p.push(format!("stepping {}", ranges(&self.steppings)));
        }
        if !s.flags_all.is_empty() {
            p.push(format!("flags {}", s.flags_all.join(" ")));
        }
        if !s.flags_none.is_empty() {
            p.push(format!("without {}", s.flags_none.join(" ")));
        }
        if !s.brand_any.is_empty() {
            p.push(format!("brand with '{}'", s.brand_any.join("' or '")));
        }
        if !s.brand_none.is_empty() {
            p.push(format!("brand without '{}'", s.brand_none.join("' or '")));
        }
        if let Some(k) = &s.core_kind {
            p.push(k.clone());
        }
        if let Some(i) = s.midr_implementer {
            p.push(format!("MIDR implementer {i:#x}"));
        }
        if !s.midr_parts.is_empty() {
            let v: Vec<String> = s.midr_parts.iter().map(|x| format!("{x:#x}")).collect();
            p.push(format!("part {}", v.join(", ")));
        }
        let mut out = p.join(", ");
        if let Some(w) = &s.why {
            out.push_str(&format!(" ({w})"));
        }
        out
    }
}

// ------------------------------------------------------------ the base

/// One entry file, read.
#[derive(Clone, Debug)]
pub struct Entry {
    pub file: String,
    pub id: String,
    /// The entry without its rules and variants.
    table: toml::Table,
    rules: Vec<Rule>,
    variants: Vec<(Rule, Option<String>, toml::Table)>,
}

/// The whole knowledge base.
#[derive(Clone, Debug)]
pub struct Base {
    pub entries: Vec<Entry>,
    pub sources: BTreeMap<String, Source>,
}

fn take_array(t: &mut toml::Table, key: &str) -> Vec<toml::Value> {
    match t.remove(key) {
        Some(toml::Value::Array(a)) => a,
        Some(other) => vec![other],
        None => Vec::new(),
    }
}

/// Overlay `over` on `base`, table by table.
fn overlay(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => overlay(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn rule_of(v: toml::Value, what: &str) -> Result<Rule, String> {
    let spec: RuleSpec = v.try_into().map_err(|e| format!("{what}: {e}"))?;
    Rule::of(spec).map_err(|e| format!("{what}: {e}"))
}

fn parse_entry(file: &str, text: &str) -> Result<Entry, String> {
    let mut table: toml::Table = text.parse().map_err(|e| format!("{file}: {e}"))?;
    let mut rules = Vec::new();
    for (i, v) in take_array(&mut table, "match").into_iter().enumerate() {
        rules.push(rule_of(v, &format!("{file}: match {}", i + 1))?);
    }
    if rules.is_empty() {
        return Err(format!("{file}: no [[match]] rule"));
    }
    let mut variants = Vec::new();
    for (i, v) in take_array(&mut table, "variant").into_iter().enumerate() {
        let toml::Value::Table(mut vt) = v else {
            return Err(format!("{file}: variant {} is not a table", i + 1));
        };
        let when = vt
            .remove("when")
            .ok_or_else(|| format!("{file}: variant {} has no `when`", i + 1))?;
        let rule = rule_of(when, &format!("{file}: variant {} when", i + 1))?;
        let name = vt
            .remove("name")
            .and_then(|n| n.as_str().map(str::to_string));
        variants.push((rule, name, vt));
    }
    let id = table
        .get("id")
        .and_then(|v| v.as_str())
        .ok_or_else(|| format!("{file}: no id"))?
        .to_string();
    let e = Entry {
        file: file.to_string(),
        id,
        table,
        rules,
        variants,
    };
    // The entry and each variant must read as a Core.
    e.core(None, &BTreeMap::new())?;
    for i in 0..e.variants.len() {
        e.core(Some(i), &BTreeMap::new())?;
    }
    Ok(e)
}

/// Every source key a core's tables name.
fn source_keys(c: &Core) -> Vec<String> {
    let mut v = vec![c.fp.source.clone()];
    v.extend(c.fp.sources.values().cloned());
    if let Some(f) = &c.frontend {
        v.push(f.source.clone());
        v.extend(f.sources.values().cloned());
    }
    if let Some(l) = &c.latency {
        v.push(l.source.clone());
        v.extend(l.sources.values().cloned());
    }
    if let Some(k) = &c.cache {
        v.push(k.source.clone());
        v.extend(k.sources.values().cloned());
    }
    v.sort();
    v.dedup();
    v.retain(|k| !k.is_empty());
    v
}

impl Entry {
    /// The entry as a Core, with variant `variant` overlaid; citations
    /// resolved from `sources` (unchecked when empty).
    fn core(
        &self,
        variant: Option<usize>,
        sources: &BTreeMap<String, Source>,
    ) -> Result<Core, String> {
        let mut t = self.table.clone();
        let mut vname = None;
        let mut extra_source = None;
        if let Some(i) = variant {
            let (_, name, over) = &self.variants[i];
            let mut over = over.clone();
            extra_source = over
                .remove("source")
                .and_then(|s| s.as_str().map(str::to_string));
            overlay(&mut t, &over);
            vname = Some(name.clone().unwrap_or_else(|| format!("variant {}", i + 1)));
        }
        let mut c: Core = toml::Value::Table(t)
            .try_into()
            .map_err(|e| format!("{}: {e}", self.file))?;
        c.variant = vname;
        let mut keys = source_keys(&c);
        keys.extend(extra_source.clone());
        if !sources.is_empty() {
            for k in keys {
                let s = sources.get(&k).ok_or_else(|| {
                    format!("{}: source '{k}' is in no sources*.toml file", self.file)
                })?;
                c.cited.push(s.clone());
            }
        }
        if let (Some(s), Some(v)) = (extra_source, &c.variant) {
            c.notes.push(format!("{v}: {}", c.cite_text(&s)));
        }
        if c.fp.source.is_empty() {
            return Err(format!("{}: [fp] has no source", self.file));
        }
        Ok(c)
    }

    /// Each `[[match]]` rule in words.
    pub fn rules(&self) -> Vec<String> {
        self.rules.iter().map(Rule::describe).collect()
    }
}

impl Base {
    /// Read the embedded files; Err names the file and the fault.
    pub fn parse(files: &[(&str, &str)]) -> Result<Base, String> {
        let mut sources = BTreeMap::new();
        let mut entries: Vec<Entry> = Vec::new();
        for (name, text) in files {
            if name.starts_with(SOURCES_PREFIX) {
                let t: toml::Table = text.parse().map_err(|e| format!("{name}: {e}"))?;
                for (k, v) in t {
                    let mut s: Source = v.try_into().map_err(|e| format!("{name}: [{k}]: {e}"))?;
                    if !matches!(s.kind.as_str(), "vendor" | "measurement" | "seed") {
                        return Err(format!(
                            "{name}: [{k}]: kind '{}' is not vendor, measurement or seed",
                            s.kind
                        ));
                    }
                    s.key = k.clone();
                    if sources.insert(k.clone(), s).is_some() {
                        return Err(format!("{name}: source [{k}] is defined twice"));
                    }
                }
            } else {
                let e = parse_entry(name, text)?;
                if let Some(o) = entries.iter().find(|o| o.id == e.id) {
                    return Err(format!("{name}: id '{}' is also {}", e.id, o.file));
                }
                entries.push(e);
            }
        }
        let base = Base { entries, sources };
        for e in &base.entries {
            e.core(None, &base.sources)?;
            for i in 0..e.variants.len() {
                e.core(Some(i), &base.sources)?;
            }
        }
        Ok(base)
    }

    /// The embedded knowledge base (parsed once; tests/uarch.rs checks it).
    pub fn embedded() -> &'static Base {
        static BASE: OnceLock<Base> = OnceLock::new();
        BASE.get_or_init(|| {
            Base::parse(FILES).unwrap_or_else(|e| Base {
                entries: Vec::new(),
                sources: BTreeMap::from([(
                    "broken".to_string(),
                    Source {
                        key: "broken".into(),
                        title: e,
                        ..Source::default()
                    },
                )]),
            })
        })
    }

    /// The embedded base, or why it could not be read.
    pub fn embedded_checked() -> Result<&'static Base, String> {
        let b = Base::embedded();
        match b.sources.get("broken") {
            Some(s) if b.entries.is_empty() => Err(s.title.clone()),
            _ => Ok(b),
        }
    }

    /// The entry an identity matches, with its variant and the rule in
    /// words; Err: why none. Two rules of different entries at the same
    /// rank both matching is an error of the base (tests/uarch.rs).
    pub fn recognise(&self, id: &CoreIdentity) -> Result<(Core, String), String> {
        let mut best: Option<(&Entry, &Rule)> = None;
        let mut tie: Option<&Entry> = None;
        for e in &self.entries {
            for r in &e.rules {
                if !r.matches(id) {
                    continue;
                }
                match best {
                    Some((_, br)) if r.rank() < br.rank() => {}
                    Some((be, br)) if r.rank() == br.rank() => {
                        if be.id != e.id {
                            tie = Some(e);
                        }
                    }
                    _ => {
                        best = Some((e, r));
                        tie = None;
                    }
                }
            }
        }
        let Some((e, r)) = best else {
            return Err(format!(
                "core not in cpuscope's knowledge base ({})",
                id.describe()
            ));
        };
        if let Some(t) = tie {
            return Err(format!(
                "ambiguous in cpuscope's knowledge base: {} and {} both match ({})",
                e.id,
                t.id,
                id.describe()
            ));
        }
        let variant = e.variants.iter().position(|(w, _, _)| w.matches(id));
        let core = e.core(variant, &self.sources)?;
        Ok((core, r.describe()))
    }

    /// Problems of the base: a rule whose own examples resolve to another
    /// entry or to none (a tie), a variant no identity of its entry reaches.
    pub fn self_check(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in &self.entries {
            for (i, r) in e.rules.iter().enumerate() {
                for id in r.examples() {
                    match self.recognise(&id) {
                        Ok((c, _)) if c.id == e.id => {}
                        Ok((c, _)) => out.push(format!(
                            "{}: match {} ({}): {} resolves to {}",
                            e.file,
                            i + 1,
                            r.describe(),
                            id.describe(),
                            c.id
                        )),
                        Err(err) => out.push(format!("{}: match {}: {err}", e.file, i + 1)),
                    }
                }
            }
        }
        out
    }

    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// Every entry as a Core (no variant) and its variants.
    pub fn cores(&self) -> Vec<(&Entry, Core, Vec<Core>)> {
        self.entries
            .iter()
            .filter_map(|e| {
                let c = e.core(None, &self.sources).ok()?;
                let v = (0..e.variants.len())
                    .filter_map(|i| e.core(Some(i), &self.sources).ok())
                    .collect();
                Some((e, c, v))
            })
            .collect()
    }
}

// ------------------------------------------------------ this machine

/// One kind of core of a machine and what the base says about it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecognisedCore {
    /// The CPUs of this kind (all online CPUs on a homogeneous machine).
    pub cpus: CpuSet,
    /// "P-core"/"E-core" or the ARM part name on mixed machines; null when
    /// all cores are alike.
    pub kind: Option<String>,
    pub identity: CoreIdentity,
    /// The entry, when recognised.
    pub core: Option<Core>,
    /// The rule that matched, in words.
    pub matched_by: Option<String>,
    /// Why not recognised.
    pub unknown: Option<String>,
}

/// What the knowledge base says about this machine's cores.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Recognition {
    pub cores: Vec<RecognisedCore>,
}

impl Recognition {
    /// The core kind that runs `cpu`, else the first kind.
    pub fn for_cpu(&self, cpu: usize) -> Option<&RecognisedCore> {
        self.cores
            .iter()
            .find(|c| c.cpus.contains(cpu))
            .or_else(|| self.cores.first())
    }

    /// The entry of the core kind that runs `cpu`, or why there is none.
    pub fn core_for(&self, cpu: usize) -> Result<&Core, String> {
        match self.for_cpu(cpu) {
            Some(RecognisedCore { core: Some(c), .. }) => Ok(c),
            Some(RecognisedCore {
                unknown: Some(u), ..
            }) => Err(u.clone()),
            _ => Err("the core's identity could not be read".into()),
        }
    }

    /// The first kind's entry, or why there is none.
    pub fn primary(&self) -> Result<&Core, String> {
        match self.cores.first() {
            Some(RecognisedCore { core: Some(c), .. }) => Ok(c),
            Some(RecognisedCore {
                unknown: Some(u), ..
            }) => Err(u.clone()),
            _ => Err("the core's identity could not be read".into()),
        }
    }
}

/// Recognise the machine's cores: one identity per hybrid core kind or per
/// distinct ARM part, else one for all CPUs.
pub fn recognise(
    identity: &Identity,
    isa: &Isa,
    kinds: &[CoreKind],
    online: &CpuSet,
) -> Recognition {
    let base = match Base::embedded_checked() {
        Ok(b) => b,
        Err(e) => {
            return Recognition {
                cores: vec![RecognisedCore {
                    cpus: online.clone(),
                    unknown: Some(format!("cpuscope's knowledge base could not be read: {e}")),
                    ..RecognisedCore::default()
                }],
            }
        }
    };
    let parts = core_parts(identity, isa, kinds, online);
    let cores = parts
        .into_iter()
        .map(|(cpus, kind, id)| match base.recognise(&id) {
            Ok((core, by)) => RecognisedCore {
                cpus,
                kind,
                identity: id,
                core: Some(core),
                matched_by: Some(by),
                unknown: None,
            },
            Err(e) => RecognisedCore {
                cpus,
                kind,
                identity: id,
                unknown: Some(e),
                ..RecognisedCore::default()
            },
        })
        .collect();
    Recognition { cores }
}

/// The CPU sets to recognise, each with its kind name (on mixed machines)
/// and identity: one per distinct ARM part, else one per hybrid core kind,
/// else all online CPUs.
fn core_parts(
    identity: &Identity,
    isa: &Isa,
    kinds: &[CoreKind],
    online: &CpuSet,
) -> Vec<(CpuSet, Option<String>, CoreIdentity)> {
    let x86 = CoreIdentity {
        x86_vendor: identity
            .vendor
            .clone()
            .filter(|_| identity.arm_cores.is_empty()),
        family: identity.family,
        model: identity.model,
        stepping: identity.stepping,
        flags: if identity.arm_cores.is_empty() {
            isa.flags.clone()
        } else {
            Vec::new()
        },
        brand: identity.model_name.clone(),
        ..CoreIdentity::default()
    };
    let mut parts: Vec<(CpuSet, Option<String>, CoreIdentity)> = Vec::new();
    if !identity.arm_cores.is_empty() {
        let mixed = identity.arm_cores.len() > 1;
        for a in &identity.arm_cores {
            let id = CoreIdentity {
                midr_implementer: Some(a.implementer),
                midr_part: Some(a.part),
                brand: identity.model_name.clone(),
                flags: isa.flags.clone(),
                ..CoreIdentity::default()
            };
            let kind = mixed.then(|| a.part_name.clone().unwrap_or_else(|| a.part_hex.clone()));
            parts.push((a.cpus.clone(), kind, id));
        }
    } else if kinds.len() > 1 {
        for k in kinds {
            let id = CoreIdentity {
                core_kind: Some(k.name.clone()),
                ..x86.clone()
            };
            parts.push((k.cpus.clone(), Some(k.name.clone()), id));
        }
    } else {
        parts.push((online.clone(), None, x86));
    }
    parts
}

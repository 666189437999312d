//! `cpuscope uarch`: the knowledge base as a terminal table, one entry in
//! full, the Markdown table of docs/uarch.md, and JSON.

use crate::base::fmt::{columns, for_terminal, for_terminal_lines};
use crate::machine::uarch::{Base, Cache, Core, Frontend, Latency, Precision};
use serde_json::{json, Value};
use std::fmt::Write as _;

pub const SCHEMA: &str = "cpuscope.uarch/1";
const WIDTHS: [u32; 4] = [64, 128, 256, 512];

/// A table figure: whole numbers as such, others to two decimals at most.
fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').to_string()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "-".into())
}

/// FP64 FLOP/cycle per width, "-" where not known or not executed.
fn flops_cells(c: &Core) -> Vec<String> {
    WIDTHS
        .iter()
        .map(|&b| opt(c.fp.flops_per_cycle(b, Precision::F64).ok()))
        .collect()
}

/// The key figures of one core as table cells.
fn row(id: &str, c: &Core) -> Vec<String> {
    let fe = c.frontend.clone().unwrap_or_default();
    let l = c.latency.clone().unwrap_or_default();
    let k = c.cache.clone().unwrap_or_default();
    let mut r = vec![id.to_string(), c.name.clone()];
    r.extend(flops_cells(c));
    r.extend([
        opt(fe.dispatch),
        opt(fe.taken_branches_per_cycle),
        format!("{}/{}/{}", opt(l.l1d), opt(l.l2), opt(l.l3)),
        format!(
            "{}/{}",
            k.l1d_kib.map(|v| v.to_string()).unwrap_or("-".into()),
            k.l2_kib.map(|v| v.to_string()).unwrap_or("-".into())
        ),
        c.smt.map(|s| s.to_string()).unwrap_or("-".into()),
    ]);
    r
}

const HEAD: [&str; 11] = [
    "id",
    "core",
    "FP64 FLOP/c scalar",
    "128",
    "256",
    "512",
    "dispatch",
    "taken br/c",
    "lat L1d/L2/L3 (c)",
    "L1d/L2 KiB",
    "SMT",
];

/// One line per entry (and per variant).
pub fn render(base: &Base) -> String {
    let mut rows: Vec<Vec<String>> = vec![HEAD.iter().map(|s| s.to_string()).collect()];
    for (e, c, vs) in base.cores() {
        rows.push(row(&e.id, &c));
        for v in vs {
            let mut r = row("", &v);
            r[1] = format!("  {}", v.variant.clone().unwrap_or_default());
            rows.push(r);
        }
    }
    let mut out = columns(&rows, "");
    let _ = writeln!(
        out,
        "\n{} cores from {} sources. FLOP/c: FP64 FLOPs per cycle per core; lat: load-to-use cycles. \
         `cpuscope uarch ID` shows one entry with its sources.",
        base.entries.len(),
        base.sources.len()
    );
    out
}

fn section_sources(
    c: &Core,
    source: &str,
    sources: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut s = c.cite_text(source);
    for (f, k) in sources {
        s.push_str(&format!("; {f}: {}", c.cite_text(k)));
    }
    s
}

/// One entry in full: rules, figures, sources. The knowledge base is
/// compiled in; its text is escaped for the terminal all the same.
pub fn render_one(base: &Base, id: &str, c: &Core, variants: &[Core]) -> String {
    for_terminal_lines(&entry_text(base, id, c, variants)).into_owned()
}

fn entry_text(base: &Base, id: &str, c: &Core, variants: &[Core]) -> String {
    let mut out = String::new();
    entry_head(&mut out, base, id, c);
    fp_lines(&mut out, c);
    if let Some(f) = &c.frontend {
        frontend_lines(&mut out, c, f);
    }
    if let Some(l) = &c.latency {
        latency_lines(&mut out, c, l);
    }
    if let Some(k) = &c.cache {
        cache_lines(&mut out, c, k);
    }
    for v in variants {
        let vc = flops_cells(v);
        let _ = writeln!(
            out,
            "  variant:    {}: FP64 FLOP/cycle {} / {} / {} / {}",
            v.variant.as_deref().unwrap_or(""),
            vc[0],
            vc[1],
            vc[2],
            vc[3]
        );
    }
    let _ = writeln!(out, "  sources:");
    for s in &c.cited {
        let _ = writeln!(
            out,
            "    [{}] {} ({}; {}){}",
            s.key,
            s.title,
            s.publisher,
            s.kind,
            s.url
                .as_deref()
                .map(|u| format!(" {u}"))
                .unwrap_or_default()
        );
    }
    out
}

/// The entry's first lines: name, id and vendor; products; the rules that
/// recognise it; SMT; its notes.
fn entry_head(out: &mut String, base: &Base, id: &str, c: &Core) {
    let _ = writeln!(out, "{}  ({id}, {})", c.name, c.vendor);
    if !c.products.is_empty() {
        let _ = writeln!(out, "  products:   {}", c.products);
    }
    if let Some(e) = base.entry(id) {
        for r in e.rules() {
            let _ = writeln!(out, "  recognised: {r}");
        }
    }
    let _ = writeln!(
        out,
        "  SMT:        {}",
        c.smt.map(|s| s.to_string()).unwrap_or("-".into())
    );
    for n in &c.notes {
        let _ = writeln!(out, "  note:       {n}");
    }
}

/// The FP line: FP64 FLOP/cycle at each width, the FMA (or add and
/// multiply) units, SVE; its sources and notes.
fn fp_lines(out: &mut String, c: &Core) {
    let cells = flops_cells(c);
    let fp = &c.fp;
    let _ = writeln!(
        out,
        "  FP:         FP64 FLOP/cycle scalar {}, 128-bit {}, 256-bit {}, 512-bit {}{}{}",
        cells[0],
        cells[1],
        cells[2],
        cells[3],
        match (fp.fma_units, fp.fma_bits) {
            (Some(u), Some(b)) => format!(" ({} FMA units of {b} bits)", num(u)),
            _ => match (fp.add_units, fp.mul_units) {
                (Some(a), Some(m)) =>
                    format!(" (no FMA: {} add + {} multiply units)", num(a), num(m)),
                _ => String::new(),
            },
        },
        fp.sve_bits
            .map(|b| format!(", SVE {b} bits"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "              source: {}",
        section_sources(c, &fp.source, &fp.sources)
    );
    for n in &fp.notes {
        let _ = writeln!(out, "              {n}");
    }
}

/// The front-end line: decode, µop cache, dispatch, taken branches per
/// cycle, a seed's stated issue width; its sources and notes.
fn frontend_lines(out: &mut String, c: &Core, f: &Frontend) {
    let _ = writeln!(
        out,
        "  front end:  decode {}, µop cache {}, dispatch {}, taken branches/cycle {}",
        opt(f.decode),
        opt(f.uop_cache),
        opt(f.dispatch),
        opt(f.taken_branches_per_cycle)
    );
    if let Some(w) = f.seed_stated_issue_width {
        let _ = writeln!(
            out,
            "              issue width stated by a seed for its formula: {} ({}; not a documented width)",
            num(w),
            c.field_source(&f.source, &f.sources, "seed_stated_issue_width")
        );
    }
    let _ = writeln!(
        out,
        "              source: {}",
        section_sources(c, &f.source, &f.sources)
    );
    for n in &f.notes {
        let _ = writeln!(out, "              {n}");
    }
}

/// The load-to-use latency line (L1d, L2, L3 cycles); its sources and notes.
fn latency_lines(out: &mut String, c: &Core, l: &Latency) {
    let _ = writeln!(
        out,
        "  latency:    L1d {}, L2 {}, L3 {} cycles (load-to-use)",
        opt(l.l1d),
        opt(l.l2),
        opt(l.l3)
    );
    let _ = writeln!(
        out,
        "              source: {}",
        section_sources(c, &l.source, &l.sources)
    );
    for n in &l.notes {
        let _ = writeln!(out, "              {n}");
    }
}

/// The caches line (L1d, L2, L3 sizes, ways and scopes); its sources and
/// notes.
fn cache_lines(out: &mut String, c: &Core, k: &Cache) {
    let kib = |v: Option<u64>, w: Option<u32>| match (v, w) {
        (Some(v), Some(w)) => format!("{v} KiB {w}-way"),
        (Some(v), None) => format!("{v} KiB"),
        _ => "-".into(),
    };
    let _ = writeln!(
        out,
        "  caches:     L1d {}, L2 {}{}, L3 {}{}",
        kib(k.l1d_kib, k.l1d_ways),
        kib(k.l2_kib, k.l2_ways),
        k.l2_scope
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default(),
        kib(k.l3_kib, k.l3_ways),
        k.l3_scope
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "              source: {}",
        section_sources(c, &k.source, &k.sources)
    );
    for n in &k.notes {
        let _ = writeln!(out, "              {n}");
    }
}

fn md_cell(s: &str) -> String {
    for_terminal(s).replace('|', "\\|")
}

/// The generated table of docs/uarch.md.
pub fn markdown(base: &Base) -> String {
    let mut out = String::from(
        "# Cores in cpuscope's knowledge base\n\n\
         Generated by `cpuscope uarch --markdown` from `data/uarch/*.toml` (format: data/uarch/README.md); \
         tests/uarch.rs fails when this file is not current. FP64 FLOP/cycle per core at each vector width \
         (scalar, 128, 256, 512 bits; `-` not executed or not documented), the dispatch (rename) width that \
         seed 000's capacity formula uses, taken branches per cycle, published load-to-use latency in cycles, \
         L1d/L2 sizes in KiB, SMT ways. Each entry's sources follow the table; `cpuscope uarch ID` prints one \
         entry with the source of every figure.\n\n",
    );
    out.push_str("| ");
    out.push_str(&HEAD.join(" | "));
    out.push_str(" | recognised by |\n|");
    out.push_str(&"---|".repeat(HEAD.len() + 1));
    out.push('\n');
    for (e, c, vs) in base.cores() {
        let mut r = row(&e.id, &c);
        r.push(e.rules().join("; "));
        out.push_str(&format!(
            "| {} |\n",
            r.iter().map(|x| md_cell(x)).collect::<Vec<_>>().join(" | ")
        ));
        for v in vs {
            let mut r = row("", &v);
            r[1] = format!("↳ {}", v.variant.clone().unwrap_or_default());
            r.push(String::new());
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|x| md_cell(x)).collect::<Vec<_>>().join(" | ")
            ));
        }
    }
    out.push_str("\n## Sources per entry\n\n");
    for (e, c, _) in base.cores() {
        let keys: Vec<String> = c.cited.iter().map(|s| format!("[{}]", s.key)).collect();
        let _ = writeln!(out, "- `{}` {}: {}", e.id, c.name, keys.join(", "));
    }
    out.push_str("\n## Sources\n\n");
    for s in base.sources.values() {
        let _ = writeln!(
            out,
            "- [{}] {}, {} ({}){}",
            s.key,
            md_cell(&s.title),
            s.publisher,
            s.kind,
            s.url
                .as_deref()
                .map(|u| format!(", <{u}>"))
                .unwrap_or_default()
        );
    }
    out
}

/// Every entry as JSON.
pub fn json(base: &Base) -> Value {
    let cores: Vec<Value> = base
        .cores()
        .into_iter()
        .map(|(e, c, v)| json!({"file": e.file, "recognised_by": e.rules(), "core": c, "variants": v}))
        .collect();
    json!({"schema": SCHEMA, "cores": cores, "sources": base.sources})
}

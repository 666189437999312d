//! The caches of `cpuscope info`: one row per group of like instances (level,
//! type, size, ways, line, scope, CPUs), the table, and the notes under it.

use crate::base::fmt::{fmt_bytes, for_terminal};
use crate::machine::cache::CacheInstance;
use crate::machine::MachineInfo;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Above this many instances of a cache, only the first and last are listed.
pub(super) const CACHE_LIST_MAX: usize = 8;
pub(super) fn opt_bytes(b: Option<u64>) -> String {
    b.map(fmt_bytes).unwrap_or_else(|| "n/a".into())
}
/// Scopes one cache instance fits exactly: core, cluster, die, package.
pub(super) fn scopes(info: &MachineInfo, c: &CacheInstance) -> Vec<&'static str> {
    let s = &c.shared_cpu_list;
    let mut v = Vec::new();
    if info.cores.iter().any(|k| &k.cpus == s) {
        v.push("core");
    }
    if info.clusters.iter().any(|k| &k.cpus == s) {
        v.push("cluster");
    }
    if info.dies.iter().any(|d| &d.cpus == s) {
        v.push("die");
    }
    if info.packages.iter().any(|p| &p.cpus == s) {
        v.push("package");
    }
    v
}

/// How the instances of one group are shared: the first scope that fits them all
/// (per core, per package, per die, per cluster: a die or cluster that is the whole
/// package is called a package), else per N cores.
pub(super) fn group_scope(info: &MachineInfo, v: &[&CacheInstance]) -> String {
    let sets: Vec<Vec<&str>> = v.iter().map(|c| scopes(info, c)).collect();
    for cand in ["core", "package", "die", "cluster"] {
        if sets.iter().all(|s| s.contains(&cand)) {
            return match cand {
                "cluster" => {
                    let n: Vec<usize> = v.iter().map(|c| c.cores).collect();
                    if n.iter().all(|x| *x == n[0]) {
                        format!("per cluster ({} cores)", n[0])
                    } else {
                        "per cluster".into()
                    }
                }
                other => format!("per {other}"),
            };
        }
    }
    let n: Vec<usize> = v.iter().map(|c| c.cores).collect();
    if n.iter().all(|x| *x == n[0]) {
        if n[0] <= 1 {
            "per thread".into()
        } else {
            format!("per {} cores", n[0])
        }
    } else {
        "uneven".into()
    }
}

pub(super) fn caches(info: &MachineInfo) -> String {
    let mut out = String::from("Caches\n");
    if info.caches.is_empty() {
        let why = info
            .caches_unavailable
            .as_deref()
            .unwrap_or("none reported");
        let _ = writeln!(out, "  not available: {}", for_terminal(why));
        return out;
    }
    let mut rows: Vec<[String; 8]> = vec![[
        "level".into(),
        "size".into(),
        "line".into(),
        "ways".into(),
        "sets".into(),
        "count".into(),
        "scope".into(),
        "CPUs sharing each instance".into(),
    ]];
    rows.extend(cache_groups(info).iter().map(|v| cache_row(info, v)));
    cache_table(&mut out, &rows);
    cache_notes(&mut out, info);
    out
}

/// The cache instances grouped when they look alike (level, type, size,
/// line, ways, sets), the groups of one level and type in the order of their
/// first CPU.
pub(super) fn cache_groups(info: &MachineInfo) -> Vec<Vec<&CacheInstance>> {
    type Key = (u32, u8, Option<u64>, Option<u64>, Option<u64>, Option<u64>);
    let mut groups: BTreeMap<Key, Vec<&CacheInstance>> = BTreeMap::new();
    for c in &info.caches {
        let ko = match c.kind.as_str() {
            "Data" => 0,
            "Instruction" => 1,
            "Unified" => 2,
            _ => 3,
        };
        let key = (c.level, ko, c.size_bytes, c.line_bytes, c.ways, c.sets);
        groups.entry(key).or_default().push(c);
    }
    let mut ordered: Vec<(Key, Vec<&CacheInstance>)> = groups.into_iter().collect();
    ordered.sort_by_key(|(k, v)| (k.0, k.1, v[0].shared_cpu_list.first()));
    ordered.into_iter().map(|(_, v)| v).collect()
}

/// The table row of one group of alike instances: name, size (`*` when from
/// the knowledge base), line, ways, sets, count, scope, the CPUs sharing
/// each (elided when long; each core's share of a shared level).
pub(super) fn cache_row(info: &MachineInfo, v: &[&CacheInstance]) -> [String; 8] {
    let c = v[0];
    let scope = group_scope(info, v);
    let lists: Vec<String> = v.iter().map(|x| x.shared_cpu_list.to_string()).collect();
    let joined = lists.join(" | ");
    let mut shared = if lists.len() <= CACHE_LIST_MAX && joined.chars().count() <= 60 {
        joined
    } else {
        format!("{} | … | {}", lists[0], lists[lists.len() - 1])
    };
    if c.level >= 2 && c.cores > 1 {
        if let Some(pc) = c.per_core_bytes {
            let _ = write!(shared, "  ({} per core)", fmt_bytes(pc));
        }
    }
    let opt = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "n/a".into());
    [
        c.name(),
        // * : a size from the knowledge base (said below the table).
        format!(
            "{}{}",
            opt_bytes(c.size_bytes),
            if c.size_source.is_some() { "*" } else { "" }
        ),
        c.line_bytes
            .map(|l| format!("{l} B"))
            .unwrap_or_else(|| "n/a".into()),
        opt(c.ways),
        opt(c.sets),
        format!("×{}", v.len()),
        scope,
        shared,
    ]
}

/// The cache table, columns aligned: the figures (size to count) to the
/// right except in the header row.
pub(super) fn cache_table(out: &mut String, rows: &[[String; 8]]) {
    let mut w = [0usize; 8];
    for r in rows {
        for (i, cell) in r.iter().enumerate() {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    for r in rows {
        let mut line = String::from(" ");
        for (i, cell) in r.iter().enumerate() {
            let n = cell.chars().count();
            let right = matches!(i, 1..=5) && !r[0].starts_with("level");
            line.push(' ');
            if right {
                line.push_str(&" ".repeat(w[i] - n));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if i + 1 < r.len() {
                    line.push_str(&" ".repeat(w[i] - n));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The lines under the cache table: sizes from the knowledge base (once per
/// source), its notes, and the instances' oddities (once per cache name and
/// note, with how many instances).
pub(super) fn cache_notes(out: &mut String, info: &MachineInfo) {
    let mut documented: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for c in &info.caches {
        if let Some(src) = &c.size_source {
            let names = documented.entry(src.as_str()).or_default();
            if !names.contains(&c.name()) {
                names.push(c.name());
            }
        }
    }
    for (src, names) in documented {
        let _ = writeln!(
            out,
            "  * {}: {}",
            for_terminal(&names.join(", ")),
            for_terminal(src)
        );
    }
    for n in &info.caches_documented_notes {
        let _ = writeln!(out, "  note: {n}");
    }
    // One line per note, naming every cache that has it and in how many
    // instances (×N, as in the table), in the table's order.
    let mut odd: Vec<(String, Vec<(String, usize)>)> = Vec::new();
    for c in &info.caches {
        for n in &c.notes {
            let at = match odd.iter().position(|(note, _)| note == n) {
                Some(i) => i,
                None => {
                    odd.push((n.clone(), Vec::new()));
                    odd.len() - 1
                }
            };
            let names = &mut odd[at].1;
            match names.iter_mut().find(|(name, _)| *name == c.name()) {
                Some((_, count)) => *count += 1,
                None => names.push((c.name(), 1)),
            }
        }
    }
    for (note, names) in odd {
        let names: Vec<String> = names
            .iter()
            .map(|(name, count)| format!("{name} ×{count}"))
            .collect();
        let _ = writeln!(out, "  note: {note} ({})", names.join(", "));
    }
}

//! Topology, caches and NUMA read from hwloc's recorded Linux trees
//! (tests/fixtures/hwloc-linux/, every x86 and ARM case of hwloc's
//! tests/hwloc/linux/, see COPYING.hwloc), checked against what hwloc itself
//! printed for each (`.console`, or `.xml` for the cases hwloc checks as XML),
//! plus checks of the `info` command and its errors.
//!
//! Each `NAME.test` of hwloc names a tarball (`source:`), the expected output
//! (`target:`), and sometimes lstopo options or environment. The generic check
//! turns both hwloc's output and cpuscope's `MachineInfo` into the same facts
//! (PUs, cores and their threads, packages, NUMA nodes and memory, caches,
//! distances, CPUs not represented, CPU kinds) and compares them. Cases where
//! cpuscope answers differently on purpose are listed in `DOCUMENTED` below and
//! in docs/hwloc-trees.md, with cpuscope's answer asserted.
//!
//! hwloc shows only what the recorded process could use (CPUs outside its
//! cgroup cpuset and offline CPUs are left out, memory nodes outside its cpuset
//! mems too), so hwloc's facts are compared with the *usable* view of
//! `MachineInfo`; the full machine is checked per fixture further below.

#[path = "common/fake_root.rs"]
mod fake_root;
use fake_root::write;
#[path = "common/bin.rs"]
mod bin;
#[path = "common/hwloc_trees.rs"]
mod hwloc_trees;

use cpuscope::base::CpuSet;
use cpuscope::base::Sysroot;
use cpuscope::machine::cache::CacheInstance;
use cpuscope::machine::{discover, MachineInfo};
use hwloc_trees::{fixtures_dir, say, tree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A recorded machine, by tarball name; `None` when it cannot be unpacked here
/// (a `SKIP:` line was written).
fn load(name: &str) -> Option<MachineInfo> {
    let root = tree(name)?;
    let sys = Sysroot::new(&root).expect("fixture is a sysroot");
    Some(discover(&sys).expect("discover"))
}

fn set(s: &str) -> CpuSet {
    CpuSet::parse(s).expect("cpu list")
}

// ---------------------------------------------------------------------------
// hwloc's test cases.

/// One `NAME.test` of hwloc's suite.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    /// Tarball name without `.tar.bz2`.
    source: String,
    /// `NAME.console` or `NAME.xml`.
    target: String,
    options: String,
    env: Vec<String>,
}

impl Case {
    fn has(&self, opt: &str) -> bool {
        self.options.split_whitespace().any(|o| o == opt)
    }
}

fn cases() -> Vec<Case> {
    let mut v: Vec<Case> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let name = n.strip_suffix(".test")?.to_string();
            let text = std::fs::read_to_string(e.path()).expect("read .test");
            let field = |k: &str| -> Vec<String> {
                text.lines()
                    .filter_map(|l| l.strip_prefix(k))
                    .map(|r| r.trim().to_string())
                    .collect()
            };
            let one = |k: &str| field(k).into_iter().next().unwrap_or_default();
            Some(Case {
                source: one("source:")
                    .strip_suffix(".tar.bz2")
                    .expect("source is a .tar.bz2")
                    .to_string(),
                target: one("target:"),
                options: one("options:"),
                env: field("env:"),
                name,
            })
        })
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// Tarball names (one per recorded machine).
fn tree_names() -> Vec<String> {
    let v: BTreeSet<String> = cases().into_iter().map(|c| c.source).collect();
    v.into_iter().collect()
}

// ---------------------------------------------------------------------------
// Facts: what a topology says, as comparable strings, for hwloc and cpuscope alike.

type Facts = BTreeMap<String, String>;

/// hwloc's way of printing a size: KiB below 10 MiB, MiB below 10 GiB, else GiB.
fn hwloc_size(bytes: u64) -> String {
    let kib = (bytes + 512) / 1024;
    if kib < 10 * 1024 {
        format!("{kib}KiB")
    } else if kib < 10 * 1024 * 1024 {
        format!("{}MiB", (kib + 512) / 1024)
    } else {
        format!("{}GiB", (kib + 512 * 1024) / (1024 * 1024))
    }
}

/// hwloc bitmap text (`0x00000055,0x55555555`, `0xf...f,0x0000ffff`, `0x0`).
fn hwloc_mask(s: &str) -> CpuSet {
    let s = s.trim().trim_start_matches("0xf...f");
    let mut hex = String::new();
    for g in s.split(',') {
        // An empty group (`,,`) is a zero word.
        let g = g.trim().trim_start_matches("0x");
        hex.push_str(&format!("{g:0>8}"));
    }
    if hex.is_empty() {
        return CpuSet::new();
    }
    CpuSet::parse_mask(&hex).unwrap_or_else(|e| panic!("hwloc mask {s}: {e}"))
}

fn joined<I: IntoIterator<Item = String>>(it: I, sorted: bool) -> String {
    let mut v: Vec<String> = it.into_iter().collect();
    if sorted {
        v.sort();
    }
    v.join(" ")
}

/// One object of a topology: type, OS index, the PUs it covers, its size.
#[derive(Debug, Clone, Default)]
struct Obj {
    /// Package, Die, Group(Cluster), Core, PU, NUMANode, L1dCache, L2Cache, ...
    ty: String,
    os: Option<usize>,
    cpus: CpuSet,
    /// Cache size or NUMA local memory, as hwloc prints it.
    size: Option<String>,
}

/// Everything compared, from either side.
#[derive(Debug, Default)]
struct Topo {
    objs: Vec<Obj>,
    not_represented: CpuSet,
    /// NUMA node OS ids and latency matrix in that order.
    distances: Option<(Vec<usize>, Vec<Vec<u64>>)>,
    kinds: Vec<CpuSet>,
}

impl Topo {
    fn of(&self, ty: &str) -> Vec<&Obj> {
        self.objs.iter().filter(|o| o.ty == ty).collect()
    }

    fn types(&self) -> BTreeSet<String> {
        self.objs.iter().map(|o| o.ty.clone()).collect()
    }

    fn facts(&self) -> Facts {
        let mut f = Facts::new();
        let pus: CpuSet = self.of("PU").iter().filter_map(|o| o.os).collect();
        f.insert("PU".into(), pus.to_string());
        f.insert("not represented".into(), self.not_represented.to_string());
        for ty in self.types() {
            if ty == "PU" {
                continue;
            }
            let objs = self.of(&ty);
            f.insert(format!("{ty} count"), objs.len().to_string());
            if matches!(ty.as_str(), "Package" | "Core" | "NUMANode" | "Die") {
                f.insert(
                    format!("{ty} ids"),
                    joined(
                        objs.iter()
                            .map(|o| o.os.map_or("?".into(), |x| format!("{x:05}"))),
                        true,
                    ),
                );
            }
            if ty == "NUMANode" {
                // Narrowed in `compared_facts` to nodes that have CPUs.
                f.insert(
                    "NUMANode cpus".into(),
                    joined(
                        objs.iter()
                            .map(|o| format!("{}=[{}]", o.os.unwrap_or(usize::MAX), o.cpus)),
                        true,
                    ),
                );
            } else {
                f.insert(
                    format!("{ty} cpus"),
                    joined(objs.iter().map(|o| format!("[{}]", o.cpus)), true),
                );
            }
            if objs.iter().any(|o| o.size.is_some()) {
                let what = if ty == "NUMANode" { "memory" } else { "sizes" };
                let items = objs.iter().map(|o| match (ty.as_str(), o.os) {
                    ("NUMANode", Some(id)) => {
                        format!("{id}={}", o.size.clone().unwrap_or_default())
                    }
                    _ => o.size.clone().unwrap_or_else(|| "?".into()),
                });
                f.insert(format!("{ty} {what}"), joined(items, true));
            }
        }
        if let Some(core) = self.types().get("Core") {
            let per: Vec<usize> = self.of(core).iter().map(|o| o.cpus.len()).collect();
            let (lo, hi) = (
                per.iter().min().copied().unwrap_or(0),
                per.iter().max().copied().unwrap_or(0),
            );
            f.insert("SMT threads per core".into(), format!("{lo}-{hi}"));
        }
        if let Some((ids, m)) = &self.distances {
            // Re-ordered by OS id so that both sides agree on the order.
            let mut order: Vec<usize> = (0..ids.len()).collect();
            order.sort_by_key(|i| ids[*i]);
            let rows: Vec<String> = order
                .iter()
                .map(|i| {
                    let r: Vec<String> = order.iter().map(|j| m[*i][*j].to_string()).collect();
                    r.join(",")
                })
                .collect();
            f.insert("distances".into(), rows.join(" "));
        }
        if self.kinds.len() >= 2 {
            f.insert(
                "CPU kinds".into(),
                joined(self.kinds.iter().map(|k| format!("[{k}]")), true),
            );
        }
        f
    }
}

/// Parse lstopo's `-v` console output.
fn parse_console(text: &str) -> Topo {
    let mut t = Topo::default();
    // Stack of (indentation, object index) of the tree lines.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    // NUMA nodes take the CPUs of the object they hang from.
    let mut node_parent: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut matrix_ids: Vec<usize> = Vec::new();
    let mut logical_nodes: BTreeMap<usize, usize> = BTreeMap::new();
    let mut matrix: Option<Vec<Vec<u64>>> = None;
    let mut in_matrix = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if in_matrix {
            // The header gives the nodes' logical indexes, in the matrix's order.
            if let Some(h) = trimmed.strip_prefix("index") {
                matrix_ids = h
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
                continue;
            }
            let nums: Vec<u64> = trimmed
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if nums.len() > 1 {
                if let Some(m) = matrix.as_mut() {
                    m.push(nums[1..].to_vec());
                }
                continue;
            }
            in_matrix = false;
        }
        if trimmed.starts_with("Relative latency matrix (name NUMALatency") && matrix.is_none() {
            assert!(trimmed.contains("by logical indexes"), "{trimmed}");
            matrix = Some(Vec::new());
            in_matrix = true;
            continue;
        }
        if let Some(idx) = trimmed.find(" processors not represented in topology: ") {
            let mask = &trimmed[idx + " processors not represented in topology: ".len()..];
            t.not_represented = hwloc_mask(mask);
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("CPU kind #") {
            let mask = rest.split("cpuset ").nth(1).expect("kind cpuset");
            t.kinds.push(hwloc_mask(mask));
            continue;
        }
        // Tree lines: "Type L#n (P#m key=value ...)" indented by two spaces a level.
        let indent = line.len() - line.trim_start().len();
        let mut words = trimmed.splitn(3, ' ');
        let (Some(ty), Some(l)) = (words.next(), words.next()) else {
            continue;
        };
        let Some(logical) = l.strip_prefix("L#").and_then(|x| x.parse::<usize>().ok()) else {
            continue;
        };
        let attrs = words.next().unwrap_or("");
        if !attrs.is_empty() && !attrs.starts_with('(') {
            // Not a tree line (memory attributes: "NUMANode L#0 = 1000 from ...").
            continue;
        }
        // Memory tiers: "NUMANode(DRAM)", "NUMANode(HBM)".
        let ty = if ty.starts_with("NUMANode") {
            "NUMANode".to_string()
        } else {
            ty.to_string()
        };
        let attrs = attrs.trim_start_matches('(').trim_end_matches(')');
        let mut obj = Obj {
            ty: ty.clone(),
            ..Default::default()
        };
        for a in attrs.split_whitespace() {
            let a = a.trim_matches(|c| c == '(' || c == ')');
            if let Some(p) = a.strip_prefix("P#") {
                obj.os = p.parse().ok();
            }
            if let Some(sz) = a.strip_prefix("size=") {
                obj.size = Some(sz.to_string());
            }
            if let Some(m) = a.strip_prefix("local=") {
                obj.size = Some(m.to_string());
            }
        }
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let me = t.objs.len();
        if ty == "PU" {
            let p = obj.os.expect("PU P#");
            obj.cpus.insert(p);
            for (_, anc) in &stack {
                t.objs[*anc].cpus.insert(p);
            }
        }
        if ty == "NUMANode" {
            node_parent.push((me, stack.iter().map(|(_, i)| *i).collect()));
            logical_nodes.insert(logical, obj.os.expect("NUMANode P#"));
        }
        t.objs.push(obj);
        stack.push((indent, me));
    }
    for (node, ancestors) in node_parent {
        // The nearest ancestor with CPUs (a memory-side cache has none); the
        // machine line has no L#, so nodes under it have no ancestor here.
        let cpus = match ancestors
            .iter()
            .rev()
            .find(|a| !t.objs[**a].cpus.is_empty())
        {
            Some(p) => t.objs[*p].cpus.clone(),
            None => t.of("PU").iter().filter_map(|o| o.os).collect(),
        };
        t.objs[node].cpus = cpus;
    }
    if let Some(m) = matrix {
        assert_eq!(matrix_ids.len(), m.len(), "latency matrix header");
        let ids = matrix_ids.iter().map(|l| logical_nodes[l]).collect();
        t.distances = Some((ids, m));
    }
    keep_compared(&mut t);
    t
}

/// Machine-level "Group" objects are not compared; neither are I/O objects.
fn keep_compared(t: &mut Topo) {
    t.objs.retain(|o| {
        matches!(
            o.ty.as_str(),
            "Package" | "Die" | "Group(Cluster)" | "Core" | "PU" | "NUMANode"
        ) || is_cache_type(&o.ty)
    });
}

fn is_cache_type(ty: &str) -> bool {
    ty.starts_with('L') && ty.ends_with("Cache") && ty[1..2].parse::<u32>().is_ok()
}

/// `key="value"` attributes of one XML tag.
fn xml_attrs(tag: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq]
            .rsplit(|c: char| c.is_whitespace())
            .next()
            .unwrap_or("")
            .to_string();
        let after = &rest[eq + 2..];
        let end = after.find('"').unwrap_or(after.len());
        m.insert(key, after[..end].to_string());
        rest = &after[(end + 1).min(after.len())..];
    }
    m
}

/// Parse lstopo's XML output (hwloc 2 format).
fn parse_xml(text: &str) -> Topo {
    let mut t = Topo::default();
    let mut dist: Option<(usize, Vec<usize>, Vec<u64>)> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(tag) = l.strip_prefix("<object ") {
            let a = xml_attrs(tag);
            let ty = a.get("type").cloned().unwrap_or_default();
            let cpus = a.get("cpuset").map(|s| hwloc_mask(s)).unwrap_or_default();
            if ty == "Machine" {
                let complete = a
                    .get("complete_cpuset")
                    .map(|s| hwloc_mask(s))
                    .unwrap_or_default();
                t.not_represented = complete.difference(&cpus);
                continue;
            }
            let os = a.get("os_index").and_then(|x| x.parse().ok());
            let ty = match (ty.as_str(), a.get("cache_type").map(String::as_str)) {
                (c, Some("1")) if is_cache_type(c) => c.replacen("Cache", "dCache", 1),
                ("Group", _) if a.get("subtype").map(String::as_str) == Some("Cluster") => {
                    "Group(Cluster)".to_string()
                }
                _ => ty,
            };
            let size = a
                .get("cache_size")
                .or_else(|| a.get("local_memory"))
                .and_then(|x| x.parse::<u64>().ok())
                .map(hwloc_size);
            t.objs.push(Obj { ty, os, cpus, size });
        } else if let Some(tag) = l.strip_prefix("<distances2 ") {
            let a = xml_attrs(tag);
            if a.get("name").map(String::as_str) == Some("NUMALatency") && t.distances.is_none() {
                assert_eq!(a.get("indexing").map(String::as_str), Some("os"), "{l}");
                let n = a["nbobjs"].parse().expect("nbobjs");
                dist = Some((n, Vec::new(), Vec::new()));
            }
        } else if let Some((_, ids, vals)) = dist.as_mut() {
            let inner = l
                .split_once('>')
                .map(|x| x.1)
                .unwrap_or("")
                .split('<')
                .next()
                .unwrap_or("");
            let nums = inner
                .split_whitespace()
                .filter_map(|x| x.parse::<u64>().ok());
            if l.starts_with("<indexes") {
                ids.extend(nums.map(|x| x as usize));
            } else if l.starts_with("<u64values") {
                vals.extend(nums);
            } else if l.starts_with("</distances2") {
                let (n, ids, vals) = dist.take().expect("distances");
                let m = vals.chunks(n).map(<[u64]>::to_vec).collect();
                t.distances = Some((ids, m));
            }
        } else if let Some(tag) = l.strip_prefix("<cpukind ") {
            t.kinds.push(hwloc_mask(&xml_attrs(tag)["cpuset"]));
        }
    }
    keep_compared(&mut t);
    t
}

/// What hwloc printed for a case.
fn hwloc_topo(case: &Case) -> Topo {
    let text = std::fs::read_to_string(fixtures_dir().join(&case.target)).expect("target file");
    if case.target.ends_with(".xml") {
        parse_xml(&text)
    } else {
        parse_console(&text)
    }
}

fn console_cache_name(c: &CacheInstance) -> String {
    match (c.level, c.kind.as_str()) {
        (l, "Data") => format!("L{l}dCache"),
        (l, "Instruction") => format!("L{l}iCache"),
        (l, _) => format!("L{l}Cache"),
    }
}

/// cpuscope's answer for a case, as hwloc would show it (the usable part;
/// with `--disallowed`, every online CPU and node).
fn cpuscope_topo(info: &MachineInfo, case: &Case) -> Topo {
    let disallowed = case.has("--disallowed");
    let merged = case.has("--merge") || case.options.contains("all:structure");
    let shown = if disallowed {
        info.cpus.online.clone()
    } else {
        info.cpus.usable.clone()
    };
    let mut t = Topo {
        not_represented: info.cpus.present.difference(&shown),
        ..Default::default()
    };
    for c in shown.iter() {
        t.objs.push(Obj {
            ty: "PU".into(),
            os: Some(c),
            cpus: CpuSet::from_ids([c]),
            size: None,
        });
    }
    for c in &info.cores {
        let cpus = c.cpus.intersection(&shown);
        if !cpus.is_empty() {
            t.objs.push(Obj {
                ty: "Core".into(),
                os: Some(c.core_id),
                cpus,
                size: None,
            });
        }
    }
    let nodes: Vec<_> = info
        .numa_nodes
        .iter()
        .filter(|n| disallowed || n.usable)
        .collect();
    for n in &nodes {
        t.objs.push(Obj {
            ty: "NUMANode".into(),
            os: Some(n.id),
            cpus: n.cpus.intersection(&shown),
            size: n.memory_bytes.map(hwloc_size),
        });
    }
    // hwloc keeps an object with no shown CPU when a shown memory node hangs
    // from it (the node's CPUs are all inside the object's).
    let holds_node = |all: &CpuSet| -> bool {
        nodes.iter().any(|n| {
            let c = n.cpus.intersection(&info.cpus.online);
            !c.is_empty() && c.is_subset(all)
        })
    };
    for p in &info.packages {
        let cpus = p.cpus.intersection(&shown);
        if !cpus.is_empty() || holds_node(&p.cpus) {
            t.objs.push(Obj {
                ty: "Package".into(),
                os: Some(p.id),
                cpus,
                size: None,
            });
        }
    }
    let dies = info.dies.iter().map(|d| ("Die", d.id, &d.cpus));
    let clusters = info
        .clusters
        .iter()
        .map(|c| ("Group(Cluster)", c.id, &c.cpus));
    for (ty, id, all_cpus) in dies.chain(clusters) {
        let cpus = all_cpus.intersection(&shown);
        if !cpus.is_empty() {
            t.objs.push(Obj {
                ty: ty.into(),
                os: Some(id),
                cpus,
                size: None,
            });
        }
    }
    for c in &info.caches {
        let cpus = c.shared_cpu_list.intersection(&shown);
        // (With levels merged, the node hangs from the package instead.)
        if !cpus.is_empty() || (!merged && holds_node(&c.shared_cpu_list)) {
            t.objs.push(Obj {
                ty: console_cache_name(c),
                os: None,
                cpus,
                size: Some(c.size_bytes.map_or("?".into(), hwloc_size)),
            });
        }
    }
    let with_dist: Vec<_> = info
        .numa_nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| disallowed || n.usable)
        .collect();
    // hwloc prints no matrix for a single node.
    if with_dist.len() > 1 && info.numa_nodes.iter().all(|n| !n.distances.is_empty()) {
        let ids = with_dist.iter().map(|(_, n)| n.id).collect();
        let m = with_dist
            .iter()
            .map(|(_, n)| {
                with_dist
                    .iter()
                    .map(|(j, _)| u64::from(n.distances[*j]))
                    .collect()
            })
            .collect();
        t.distances = Some((ids, m));
    }
    t.kinds = info.core_kinds.iter().map(|k| k.cpus.clone()).collect();
    t
}

/// Facts of both sides, narrowed to what hwloc's options let it show.
fn compared_facts(case: &Case, hw: &Topo, ours: &Topo) -> (Facts, Facts) {
    let mut h = hw.facts();
    let mut o = ours.facts();
    let hw_types = hw.types();
    let keep = |key: &str| -> bool {
        let ty = key.split(' ').next().unwrap_or("");
        if is_cache_type(ty) {
            if case.has("--no-caches") {
                return false;
            }
            if case.has("--no-icaches") && ty.contains("iCache") {
                return false;
            }
        }
        // --merge and --filter all:structure drop levels that add no structure:
        // only levels hwloc kept are compared.
        let merged = case.has("--merge") || case.options.contains("all:structure");
        if merged && key != "PU" && key != "not represented" && key != "distances" {
            let ty = if key.starts_with("SMT") { "Core" } else { ty };
            if !hw_types.contains(ty) {
                return false;
            }
        }
        // Dies and clusters: hwloc shows them only when they add a level.
        if (ty == "Die" || ty == "Group(Cluster)") && !hw_types.contains(ty) {
            return false;
        }
        // CPU kinds: hwloc lists one for a homogeneous machine, cpuscope none.
        true
    };
    h.retain(|k, _| keep(k));
    o.retain(|k, _| keep(k));
    // Memory-only nodes take their parent's CPUs in hwloc: node CPUs are
    // compared for the nodes that have CPUs of their own.
    let with_cpus: BTreeSet<String> = o
        .get("NUMANode cpus")
        .map(|s| {
            s.split(' ')
                .filter(|x| !x.ends_with("=[]"))
                .filter_map(|x| x.split('=').next().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    for f in [&mut h, &mut o] {
        if let Some(v) = f.get_mut("NUMANode cpus") {
            *v = v
                .split(' ')
                .filter(|x| x.split('=').next().is_some_and(|id| with_cpus.contains(id)))
                .collect::<Vec<_>>()
                .join(" ");
        }
    }
    (h, o)
}

/// Differences as `field: hwloc A; cpuscope B`, in field order.
fn differences(h: &Facts, o: &Facts) -> Vec<(String, String, String)> {
    let keys: BTreeSet<&String> = h.keys().chain(o.keys()).collect();
    keys.into_iter()
        .filter(|k| h.get(*k) != o.get(*k))
        .map(|k| {
            (
                k.clone(),
                h.get(k).cloned().unwrap_or_else(|| "-".into()),
                o.get(k).cloned().unwrap_or_else(|| "-".into()),
            )
        })
        .collect()
}

/// Cases where cpuscope answers differently from hwloc, on purpose: case name,
/// and for each differing fact, cpuscope's answer. docs/hwloc-trees.md
/// explains each one; the test checks that both lists stay the same.
const DOCUMENTED: &[(&str, &[(&str, &str)])] = &[
    // hwloc is run with HWLOC_SHOW_ERRORS=none on a tree whose cpu2 L3
    // shared_cpu_map (0-3) was edited to conflict: hwloc loses package 3 and an L3.
    (
        "40intel64-4n10c+pci-conflicts",
        &[
            ("L3Cache count", "4"),
            ("L3Cache cpus", "[0,4,8,12,16,20,24,28,32,36] [1,5,9,13,17,21,25,29,33,37] [2,6,10,14,18,22,26,30,34,38] [3,7,11,15,19,23,27,31,35,39]"),
            ("L3Cache sizes", "30MiB 30MiB 30MiB 30MiB"),
            ("Package count", "4"),
            ("Package cpus", "[0,4,8,12,16,20,24,28,32,36] [1,5,9,13,17,21,25,29,33,37] [2,6,10,14,18,22,26,30,34,38] [3,7,11,15,19,23,27,31,35,39]"),
            ("Package ids", "00000 00001 00002 00003"),
        ],
    ),
    // Every node lists CPUs 0-7 (fake NUMA or a firmware bug): hwloc keeps node 0
    // only; cpuscope keeps the 8 nodes (their memory adds up to MemTotal) and says
    // the CPU lists overlap.
    (
        "8em64t-2s2ca2c-buggynuma",
        &[
            ("NUMANode count", "8"),
            (
                "NUMANode cpus",
                "0=[0-7] 1=[0-7] 2=[0-7] 3=[0-7] 4=[0-7] 5=[0-7] 6=[0-7] 7=[0-7]",
            ),
            ("NUMANode ids", "00000 00001 00002 00003 00004 00005 00006 00007"),
            ("NUMANode memory", "0=2048MiB 1=2047MiB 2=2048MiB 3=2048MiB 4=2048MiB 5=2048MiB 6=2048MiB 7=2048MiB"),
            ("distances", "10,10,10,10,10,10,10,10 10,10,10,10,10,10,10,10 10,10,10,10,10,10,10,10 10,10,10,10,10,10,10,10 10,10,10,10,10,10,10,10 10,10,10,10,10,10,10,10 10,10,10,10,10,10,10,10 10,10,10,10,10,10,10,10"),
        ],
    ),
    // hwloc groups ARM CPU kinds by MIDR part (2 kinds); cpuscope by
    // cpu_capacity (5 values), as hwloc itself does with HWLOC_CPUKINDS=midr=0
    // (nvidia-dgx-gb10-nomidr agrees).
    (
        "nvidia-dgx-gb10",
        &[("CPU kinds", "[0-4] [10-14] [15-18] [19] [5-9]")],
    ),
];

/// Cases run by hwloc with lstopo options or environment that change what it
/// shows (compared as filtered: see `compared_facts`).
fn with_options(case: &Case) -> bool {
    !case.options.is_empty() || !case.env.is_empty()
}

#[test]
fn every_hwloc_case_has_its_files() {
    let cases = cases();
    assert!(cases.len() >= 38, "cases found: {}", cases.len());
    for c in &cases {
        assert!(
            fixtures_dir()
                .join(format!("{}.tar.bz2", c.source))
                .is_file(),
            "{}: tarball {} missing",
            c.name,
            c.source
        );
        assert!(
            fixtures_dir().join(&c.target).is_file(),
            "{}: target {} missing",
            c.name,
            c.target
        );
    }
    assert!(fixtures_dir().join("COPYING.hwloc").is_file());
    // One copy of each tree: tarballs only, nothing unpacked in the source tree.
    let dirs: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(dirs.is_empty(), "unpacked trees committed: {dirs:?}");
}

#[test]
fn every_hwloc_case_matches_or_is_documented() {
    let mut agree = Vec::new();
    let mut agree_with_options = Vec::new();
    let mut documented = Vec::new();
    let mut failures = Vec::new();
    let mut skipped = 0;
    for case in cases() {
        let Some(info) = load(&case.source) else {
            skipped += 1;
            continue;
        };
        let (h, o) = compared_facts(&case, &hwloc_topo(&case), &cpuscope_topo(&info, &case));
        let diffs = differences(&h, &o);
        let doc = DOCUMENTED.iter().find(|(n, _)| *n == case.name);
        match doc {
            None if diffs.is_empty() => {
                if with_options(&case) {
                    agree_with_options.push(case.name.clone());
                } else {
                    agree.push(case.name.clone());
                }
            }
            None => failures.push(format!(
                "{}:\n{}",
                case.name,
                diffs
                    .iter()
                    .map(|(k, a, b)| format!("    {k}: hwloc {a}; cpuscope {b}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
            Some((_, expected)) => {
                let got: Vec<(&str, &str)> = diffs
                    .iter()
                    .map(|(k, _, b)| (k.as_str(), b.as_str()))
                    .collect();
                if got != *expected {
                    failures.push(format!(
                        "{}: documented differences changed:\n    documented {expected:?}\n    now        {got:?}\n{}",
                        case.name,
                        diffs
                            .iter()
                            .map(|(k, a, b)| format!("    {k}: hwloc {a}; cpuscope {b}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    ));
                }
                documented.push(case.name.clone());
            }
        }
    }
    say(&format!(
        "hwloc trees: {} agree ({} of them run by hwloc with options or environment), {} documented differences: [{}]{}",
        agree.len() + agree_with_options.len(),
        agree_with_options.len(),
        documented.len(),
        documented.join(", "),
        if skipped > 0 {
            format!(", {skipped} SKIPPED (trees not unpacked)")
        } else {
            String::new()
        }
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn documented_differences_are_in_the_docs() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hwloc-trees.md"))
            .expect("docs/hwloc-trees.md");
    for (name, _) in DOCUMENTED {
        assert!(
            doc.contains(&format!("`{name}`")),
            "{name} not in docs/hwloc-trees.md"
        );
    }
    for case in cases().iter().filter(|c| with_options(c)) {
        assert!(
            doc.contains(&format!("`{}`", case.name)),
            "{} (run with options) not in docs/hwloc-trees.md",
            case.name
        );
    }
}

#[test]
fn fact_parsers_read_both_formats() {
    assert_eq!(
        hwloc_mask("0x00000055,0x55555555").to_string(),
        "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38"
    );
    assert_eq!(hwloc_mask("0x0").to_string(), "");
    assert_eq!(hwloc_mask("0x00000001,,0x00000001").to_string(), "0,64");
    let c = parse_console(
        "Machine (P#0 total=2GiB)\n  Package L#0 (P#0)\n    NUMANode L#0 (P#0 local=2GiB)\n    L2Cache L#0 (size=1024KiB)\n      Core L#0 (P#0)\n        PU L#0 (P#0)\n        PU L#1 (P#2)\n",
    );
    let f = c.facts();
    assert_eq!(f["PU"], "0,2");
    assert_eq!(f["Core cpus"], "[0,2]");
    assert_eq!(f["L2Cache sizes"], "1024KiB");
    assert_eq!(f["NUMANode memory"], "0=2GiB");
    assert_eq!(f["SMT threads per core"], "2-2");
}

// ---------------------------------------------------------------------------
// Full machines, fixture by fixture.

fn caches_of<'a>(info: &'a MachineInfo, name: &str) -> Vec<&'a CacheInstance> {
    info.caches_named(name)
}

#[test]
fn cgroup_v1_cpuset_restricts_cpus_and_memory() {
    let Some(info) = load("16amd64-4n4c-cgroup-distance-merge") else {
        return;
    };
    assert_eq!(info.packages.len(), 4);
    assert_eq!(info.cores.len(), 16);
    assert_eq!(info.threads.len(), 16);
    assert_eq!(info.numa_nodes.len(), 4);
    assert_eq!(info.cpus.online, set("0-15"));
    assert!(info.cpus.offline.is_empty());
    assert_eq!(info.cpus.usable, set("0-3"));
    assert_eq!(info.cpus.allowed, Some(set("0-3")));
    assert!(info.cpus.allowed_source.contains("cgroup v1"));
    let cg = info.cpus.cgroup.as_ref().expect("cgroup cpuset");
    assert_eq!((cg.version, cg.path.as_str()), (1, "/prout"));
    assert_eq!(cg.mems, Some(set("2-3")));
    assert_eq!(info.numa.usable, set("2-3"));
    assert_eq!(info.numa_nodes[0].memory_bytes, Some(8387892 * 1024));
    assert_eq!(info.numa_nodes[0].distances, vec![10, 20, 20, 20]);
    assert_eq!(info.numa_nodes[1].cpus, set("4-7"));
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 4);
    assert!(l3
        .iter()
        .all(|c| c.size_bytes == Some(2 << 20) && c.ways == Some(32)));
    assert_eq!(l3[0].shared_cpu_list, set("0-3"));
    assert_eq!(l3[0].per_core_bytes, Some(512 << 10));
    assert_eq!(caches_of(&info, "L2").len(), 16);
    assert_eq!(caches_of(&info, "L1d").len(), 16);
    assert_eq!(caches_of(&info, "L1i").len(), 16);
    assert!(info
        .threads
        .iter()
        .filter(|t| t.usable)
        .all(|t| t.package == 0));
    assert_eq!(info.thread(9).and_then(|t| t.node), Some(2));
    assert_eq!(
        info.numa_nodes[0]
            .hugepages
            .first()
            .map(|h| (h.page_bytes, h.total)),
        Some((2 << 20, Some(512)))
    );
}

#[test]
fn eight_numa_nodes_of_two_cores() {
    let Some(info) = load("16amd64-8n2c") else {
        return;
    };
    assert_eq!(info.packages.len(), 8);
    assert!(info.packages.iter().all(|p| p.cores == 2 && p.dies == 1));
    assert_eq!(info.cores.len(), 16);
    assert_eq!(info.smt.threads_per_core, 1);
    assert!(!info.smt.active);
    assert_eq!(info.numa_nodes.len(), 8);
    for (i, n) in info.numa_nodes.iter().enumerate() {
        assert_eq!(n.id, i);
        assert_eq!(n.cpus, CpuSet::from_ids([2 * i, 2 * i + 1]));
        assert_eq!(n.distances.len(), 8);
        assert_eq!(n.distances[i], 10);
        assert!(n.usable);
    }
    assert_eq!(info.packages[3].nodes, set("3"));
    let total: u64 = info.numa_nodes.iter().filter_map(|n| n.memory_bytes).sum();
    assert_eq!(hwloc_size(total), "64GiB");
    for (name, size, ways) in [
        ("L1d", 64 << 10, 2),
        ("L1i", 64 << 10, 2),
        ("L2", 1 << 20, 16),
    ] {
        let v = caches_of(&info, name);
        assert_eq!(v.len(), 16, "{name}");
        assert!(v
            .iter()
            .all(|c| c.size_bytes == Some(size) && c.ways == Some(ways)));
        assert!(v
            .iter()
            .all(|c| c.shared_cpu_list.len() == 1 && c.cores == 1));
    }
    assert!(caches_of(&info, "L3").is_empty());
    assert_eq!(info.last_level(), Some(2));
}

#[test]
fn old_kernel_masks_and_smt() {
    let Some(info) = load("16em64t-4s2c2t") else {
        return;
    };
    assert_eq!(info.packages.len(), 4);
    assert_eq!(info.cores.len(), 8);
    assert_eq!(info.threads.len(), 16);
    assert_eq!(info.smt.threads_per_core, 2);
    assert_eq!(info.smt.min_threads_per_core, 2);
    assert!(info.smt.active);
    assert_eq!(info.cpus.online, set("0-15"));
    assert_eq!(info.core_of(0).map(|c| c.cpus.clone()), Some(set("0,8")));
    assert_eq!(info.thread(8).map(|t| t.smt), Some(1));
    assert_eq!(info.packages[1].cpus, set("1,5,9,13"));
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 4);
    assert_eq!(l3[0].shared_cpu_list, set("0,4,8,12"));
    assert_eq!(l3[0].cores, 2);
    assert_eq!(caches_of(&info, "L2").len(), 8);
    assert_eq!(caches_of(&info, "L1d").len(), 8);
    assert!(caches_of(&info, "L1i").is_empty());
    assert_eq!(info.numa_nodes.len(), 1);
    assert_eq!(info.numa_nodes[0].cpus, set("0-15"));
    // No online/possible files on this old kernel: said so.
    assert!(info
        .topology_notes
        .iter()
        .any(|n| n.contains("online is missing")));
}

#[test]
fn offline_cpus_are_left_out_of_cores_and_caches() {
    let Some(info) = load("16em64t-4s2c2t-offlines") else {
        return;
    };
    assert_eq!(info.cpus.offline, set("2,5,13-14"));
    assert_eq!(info.cpus.online.len(), 12);
    assert_eq!(info.cpus.usable.len(), 12);
    assert_eq!(info.packages.len(), 4);
    assert_eq!(info.cores.len(), 7);
    assert_eq!(info.threads.len(), 12);
    assert_eq!(info.smt.threads_per_core, 2);
    assert_eq!(info.smt.min_threads_per_core, 1);
    let p1 = info.packages.iter().find(|p| p.id == 1).expect("package 1");
    assert_eq!((p1.cores, p1.cpus.clone()), (1, set("1,9")));
    let p2 = info.packages.iter().find(|p| p.id == 2).expect("package 2");
    assert_eq!((p2.cores, p2.cpus.clone()), (2, set("6,10")));
    assert!(info.thread(2).is_none());
    assert_eq!(caches_of(&info, "L3").len(), 4);
    assert_eq!(caches_of(&info, "L2").len(), 7);
    assert_eq!(caches_of(&info, "L1d").len(), 7);
    assert!(info
        .caches
        .iter()
        .all(|c| c.shared_cpu_list.is_subset(&info.cpus.online)));
}

#[test]
fn hybrid_p_and_e_cores() {
    let Some(info) = load("20em64t-hybrid-1p6c2t+2ca4co1t") else {
        return;
    };
    assert_eq!(info.packages.len(), 1);
    assert_eq!(info.dies.len(), 1);
    assert_eq!(info.cores.len(), 14);
    assert_eq!(info.threads.len(), 20);
    assert_eq!(info.smt.control.as_deref(), Some("on"));
    assert_eq!(
        (info.smt.min_threads_per_core, info.smt.threads_per_core),
        (1, 2)
    );
    assert_eq!(info.core_kinds.len(), 2);
    let (p, e) = (&info.core_kinds[0], &info.core_kinds[1]);
    assert_eq!((p.cpus.clone(), p.cores), (set("0-11"), 6));
    assert_eq!((e.cpus.clone(), e.cores), (set("12-19"), 8));
    assert!(p.base_khz > e.base_khz);
    assert_eq!(info.thread(13).and_then(|t| t.kind), Some(1));
    assert_eq!(info.core_of(1).and_then(|c| c.kind), Some(0));
    // E cores come in clusters of four sharing an L2.
    let big: Vec<_> = info.clusters.iter().filter(|c| c.cores > 1).collect();
    assert_eq!(big.len(), 2);
    assert_eq!(big[0].cpus, set("12-15"));
    let l2: Vec<_> = caches_of(&info, "L2");
    assert_eq!(l2.len(), 8);
    assert_eq!(
        l2.iter()
            .filter(|c| c.size_bytes == Some(1280 << 10))
            .count(),
        6
    );
    let e_l2: Vec<_> = l2
        .iter()
        .filter(|c| c.size_bytes == Some(2 << 20))
        .collect();
    assert_eq!(e_l2.len(), 2);
    assert_eq!(e_l2[0].shared_cpu_list, set("12-15"));
    assert_eq!(e_l2[0].per_core_bytes, Some(512 << 10));
    let l1d = caches_of(&info, "L1d");
    assert_eq!(l1d.len(), 14);
    assert_eq!(
        l1d.iter()
            .filter(|c| c.size_bytes == Some(48 << 10))
            .count(),
        6
    );
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 1);
    assert_eq!(
        (l3[0].size_bytes, l3[0].ways, l3[0].cores),
        (Some(24 << 20), Some(12), 14)
    );
    assert_eq!(info.cpus.isolated, Some(CpuSet::new()));
    assert_eq!(info.numa_nodes[0].hugepages.len(), 2);
}

#[test]
fn arm_without_numa_or_caches_says_why() {
    let Some(info) = load("2arm-2c") else {
        return;
    };
    assert_eq!(info.packages.len(), 1);
    assert_eq!(info.packages[0].id, 3);
    assert_eq!(info.cores.len(), 2);
    assert_eq!(info.threads.len(), 2);
    assert!(info.core_kinds.is_empty());
    assert!(info.numa.implicit);
    assert!(info.numa.note.as_deref().unwrap_or("").contains("absent"));
    assert_eq!(info.numa_nodes.len(), 1);
    assert_eq!(info.numa_nodes[0].cpus, set("0-1"));
    assert_eq!(info.numa_nodes[0].memory_bytes, Some(280840 * 1024));
    assert!(info.numa_nodes[0].distances.is_empty());
    assert!(info.caches.is_empty());
    assert!(info.caches_unavailable.is_some());
    let text = cpuscope::report::info_text::render(&info);
    assert!(text.contains("not available"), "{text}");
}

#[test]
fn text_report_renders_every_fixture_compactly() {
    for name in tree_names() {
        let Some(info) = load(&name) else {
            return;
        };
        let text = cpuscope::report::info_text::render(&info);
        assert!(text.contains("Summary: "), "{name}");
        assert!(text.contains("Caches"), "{name}");
        assert!(text.contains("NUMA"), "{name}");
        // 8 NUMA nodes with a cgroup restriction and a distance matrix take
        // ~86; the NUMA memory section adds at most 3 + 4 lines (title, n/a
        // line, header, four nodes: beyond four it folds) and the NIC lines
        // their queues: the largest trees take 106. The memory tiers
        // section adds a title and a line per access class and memory-side
        // cache of each node with HMAT figures (access1 only where it
        // differs from access0): fakememinitiators, 11 nodes, takes 111.
        assert!(
            text.lines().count() < 115,
            "{name}: {} lines",
            text.lines().count()
        );
    }
    let text = cpuscope::report::info_text::render(&load("16em64t-4s2c2t").expect("loaded above"));
    assert!(
        text.contains("4 packages × 2 cores × 2 threads = 16 CPUs, 1 NUMA node"),
        "{text}"
    );
    let text = cpuscope::report::info_text::render(
        &load("16em64t-4s2c2t-offlines").expect("loaded above"),
    );
    assert!(text.contains("4 CPUs offline: 2,5,13-14"), "{text}");
    let text = cpuscope::report::info_text::render(
        &load("16amd64-4n4c-cgroup-distance-merge").expect("loaded above"),
    );
    assert!(text.contains("this process may use 4 of 16: 0-3"), "{text}");
}

// ---------------------------------------------------------------------------
// A synthetic big machine: 2 packages × 64 cores × 2 threads, 4 NUMA nodes.

fn fake_machine(root: &Path, packages: usize, cores: usize, threads: usize, nodes_per_pkg: usize) {
    let ncpu = packages * cores * threads;
    let cpu = "sys/devices/system/cpu";
    let all = format!("0-{}", ncpu - 1);
    for f in ["possible", "present", "online"] {
        write(root, &format!("{cpu}/{f}"), &format!("{all}\n"));
    }
    write(root, &format!("{cpu}/offline"), "\n");
    let cpu_of = |p: usize, c: usize, t: usize| t * packages * cores + p * cores + c;
    for p in 0..packages {
        let pkg: CpuSet = (0..cores)
            .flat_map(|c| (0..threads).map(move |t| (c, t)))
            .map(|(c, t)| cpu_of(p, c, t))
            .collect();
        for c in 0..cores {
            let core: CpuSet = (0..threads).map(|t| cpu_of(p, c, t)).collect();
            let ccx: CpuSet = (0..cores)
                .filter(|x| x / 8 == c / 8)
                .flat_map(|x| (0..threads).map(move |t| (x, t)))
                .map(|(x, t)| cpu_of(p, x, t))
                .collect();
            for t in 0..threads {
                let n = cpu_of(p, c, t);
                let d = format!("{cpu}/cpu{n}");
                write(root, &format!("{d}/online"), "1\n");
                write(
                    root,
                    &format!("{d}/topology/physical_package_id"),
                    &format!("{p}\n"),
                );
                write(root, &format!("{d}/topology/die_id"), "0\n");
                write(root, &format!("{d}/topology/core_id"), &format!("{c}\n"));
                write(
                    root,
                    &format!("{d}/topology/core_cpus_list"),
                    &format!("{core}\n"),
                );
                write(
                    root,
                    &format!("{d}/topology/thread_siblings_list"),
                    &format!("{core}\n"),
                );
                write(
                    root,
                    &format!("{d}/topology/package_cpus_list"),
                    &format!("{pkg}\n"),
                );
                for (i, (level, ty, size, shared)) in [
                    (1, "Data", "32K", &core),
                    (1, "Instruction", "32K", &core),
                    (2, "Unified", "1024K", &core),
                    (3, "Unified", "32768K", &ccx),
                ]
                .iter()
                .enumerate()
                {
                    let ix = format!("{d}/cache/index{i}");
                    write(root, &format!("{ix}/level"), &format!("{level}\n"));
                    write(root, &format!("{ix}/type"), &format!("{ty}\n"));
                    write(root, &format!("{ix}/size"), &format!("{size}\n"));
                    write(root, &format!("{ix}/coherency_line_size"), "64\n");
                    write(root, &format!("{ix}/ways_of_associativity"), "8\n");
                    write(
                        root,
                        &format!("{ix}/shared_cpu_list"),
                        &format!("{shared}\n"),
                    );
                }
            }
        }
    }
    let nn = packages * nodes_per_pkg;
    let per_node = cores / nodes_per_pkg;
    for node in 0..nn {
        let p = node / nodes_per_pkg;
        let first = (node % nodes_per_pkg) * per_node;
        let cpus: CpuSet = (first..first + per_node)
            .flat_map(|c| (0..threads).map(move |t| (c, t)))
            .map(|(c, t)| cpu_of(p, c, t))
            .collect();
        let d = format!("sys/devices/system/node/node{node}");
        write(root, &format!("{d}/cpulist"), &format!("{cpus}\n"));
        write(
            root,
            &format!("{d}/meminfo"),
            &format!("Node {node} MemTotal: 67108864 kB\nNode {node} MemFree: 60000000 kB\n"),
        );
        let dist: Vec<String> = (0..nn)
            .map(|o| {
                if o == node {
                    "10"
                } else if o / nodes_per_pkg == p {
                    "12"
                } else {
                    "32"
                }
                .to_string()
            })
            .collect();
        write(
            root,
            &format!("{d}/distance"),
            &format!("{}\n", dist.join(" ")),
        );
    }
}

/// The NUMA memory section on a recorded 8-node tree (hwloc's
/// 48amd64-4d2n6c-sparse has nodeN/meminfo with FilePages and nodeN/numastat,
/// no zoneinfo and no vm knobs), and NIC queues on one with PCI NICs.
#[test]
fn numa_memory_and_nic_queues_on_recorded_trees() {
    let Some(info) = load("48amd64-4pa2n6c-sparse") else {
        return;
    };
    let mm = &info.numa_memory;
    assert_eq!(mm.nodes.len(), 8);
    let n0 = &mm.nodes[0];
    // node0/meminfo: "Node 0 FilePages: 22860 kB", "Node 0 AnonPages: 1656 kB";
    // node0/numastat: "numa_hit 376346", "other_node 1298".
    assert_eq!(n0.file_bytes, Some(22_860 * 1024));
    assert_eq!(n0.anon_bytes, Some(1_656 * 1024));
    let st = n0.numastat.as_ref().unwrap();
    assert_eq!((st.numa_hit, st.other_node), (Some(376_346), Some(1_298)));
    assert!(n0.zones.is_empty());
    assert!(mm.unavailable["zoneinfo"].starts_with("not recorded"));
    let text = cpuscope::report::info_text::render(&info);
    let sec: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("NUMA memory"))
        .take_while(|l| !l.is_empty())
        .collect();
    // Folded: four rows at most (the three nodes with the least free
    // memory, then one line for the rest), plus title, header and the n/a line.
    assert!(sec.len() <= 7, "{sec:#?}");
    assert!(
        sec.iter()
            .any(|l| l.contains("5 more (1,33,45,72-73): free")),
        "{sec:#?}"
    );
    assert!(
        sec.iter()
            .any(|l| l.contains("n/a: vm reclaim knobs, /proc/zoneinfo")),
        "{sec:#?}"
    );
    assert!(sec.iter().all(|l| l.chars().count() <= 100), "{sec:#?}");

    let Some(info) = load("32em64t-2n8c+dax+nvme+mic+dimms") else {
        return;
    };
    let eth0 = info.devices.nics.iter().find(|n| n.name == "eth0").unwrap();
    assert_eq!((eth0.rx_queues, eth0.tx_queues), (Some(8), Some(8)));
    assert_eq!(eth0.numa_node, Some(0));
    let ib0 = info.devices.nics.iter().find(|n| n.name == "ib0").unwrap();
    assert_eq!((ib0.rx_queues, ib0.tx_queues), (Some(1), Some(1)));
    let text = cpuscope::report::info_text::render(&info);
    assert!(text.contains("queues 8 rx, 8 tx"), "{text}");
    // No /proc/interrupts in this tree: which CPUs served the IRQs is not known.
    assert!(text.contains("served on CPUs n/a"), "{text}");
}

#[test]
fn big_machine_report_stays_compact() {
    let dir = tempfile::tempdir().expect("tempdir");
    fake_machine(dir.path(), 2, 64, 2, 2);
    let info = discover(&Sysroot::new(dir.path()).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.online.len(), 256);
    assert_eq!(info.packages.len(), 2);
    assert_eq!(info.cores.len(), 128);
    assert_eq!(info.numa_nodes.len(), 4);
    assert_eq!(info.core_of(0).map(|c| c.cpus.clone()), Some(set("0,128")));
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 16);
    assert_eq!(l3[0].shared_cpu_list, set("0-7,128-135"));
    assert_eq!(l3[0].cores, 8);
    assert_eq!(l3[0].per_core_bytes, Some(4 << 20));
    assert_eq!(info.numa_nodes[1].cpus, set("32-63,160-191"));
    assert_eq!(info.numa_nodes[0].distances, vec![10, 12, 32, 32]);

    let text = cpuscope::report::info_text::render(&info);
    assert!(
        text.contains("2 packages × 64 cores × 2 threads = 256 CPUs, 4 NUMA nodes"),
        "{text}"
    );
    assert!(
        text.contains("64 cores × 2 threads: core n = CPU n, n+128"),
        "{text}"
    );
    // 60 lines before the memory devices section (4 lines when there is no DMI).
    assert!(
        text.lines().count() < 64,
        "{} lines:\n{text}",
        text.lines().count()
    );
    assert!(
        text.lines().all(|l| l.chars().count() <= 110),
        "a line is too long:\n{text}"
    );
}

// ---------------------------------------------------------------------------
// The binary.

#[test]
fn info_json_from_a_recorded_root() {
    let Some(dir) = tree("20em64t-hybrid-1p6c2t+2ca4co1t") else {
        return;
    };
    let out = bin::run(&["--sysroot", dir.to_str().expect("utf8"), "info", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(j["schema"], "cpuscope.info/1");
    assert_eq!(j["cpus"]["online"], "0-19");
    assert_eq!(j["cpus"]["offline"], "");
    assert_eq!(j["cpus"]["usable"], "0-19");
    assert_eq!(j["packages"].as_array().map(|a| a.len()), Some(1));
    assert_eq!(j["cores"].as_array().map(|a| a.len()), Some(14));
    assert_eq!(j["threads"].as_array().map(|a| a.len()), Some(20));
    assert_eq!(j["numa_nodes"].as_array().map(|a| a.len()), Some(1));
    assert_eq!(j["core_kinds"][0]["cpus"], "0-11");
    let caches = j["caches"].as_array().expect("caches");
    let l3: Vec<_> = caches.iter().filter(|c| c["level"] == 3).collect();
    assert_eq!(l3.len(), 1);
    assert_eq!(l3[0]["type"], "Unified");
    assert_eq!(l3[0]["size_bytes"], 24 * 1024 * 1024);
    assert_eq!(l3[0]["line_bytes"], 64);
    assert_eq!(l3[0]["shared_cpu_list"], "0-19");
}

#[test]
fn info_text_from_a_recorded_root() {
    let Some(dir) = tree("16amd64-8n2c") else {
        return;
    };
    let out = bin::run(&["--sysroot", dir.to_str().expect("utf8"), "info"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("8 packages × 2 cores × 1 thread = 16 CPUs, 8 NUMA nodes"),
        "{text}"
    );
    assert!(
        text.contains("distances: 10 local, 20 between every pair of nodes"),
        "{text}"
    );
}

fn assert_one_line_error(out: &std::process::Output, what: &str) {
    assert!(!out.status.success(), "{what}: should fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(err.starts_with("cpuscope: error: "), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: nothing on stdout");
}

#[test]
fn bad_sysroots_give_one_line_errors() {
    let out = bin::run(&["--sysroot", "/nonexistent/cpuscope-test", "info", "--json"]);
    assert_one_line_error(&out, "missing dir");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));

    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "etc/hostname", "x\n");
    let out = bin::run(&["--sysroot", dir.path().to_str().expect("utf8"), "info"]);
    assert_one_line_error(&out, "not a sysfs root");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a sysfs root"));

    // A cpu directory with nothing in it: no CPUs to report.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).expect("mkdir");
    let out = bin::run(&[
        "--sysroot",
        dir.path().to_str().expect("utf8"),
        "info",
        "--json",
    ]);
    assert_one_line_error(&out, "empty cpu dir");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no CPUs found"));
}

#[test]
fn garbage_files_do_not_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    let cpu = "sys/devices/system/cpu";
    write(r, &format!("{cpu}/online"), "0-1\n");
    write(r, &format!("{cpu}/possible"), "zz\n");
    write(
        r,
        &format!("{cpu}/cpu0/topology/physical_package_id"),
        "-1\n",
    );
    write(r, &format!("{cpu}/cpu0/topology/core_id"), "banana\n");
    write(
        r,
        &format!("{cpu}/cpu0/topology/thread_siblings_list"),
        "0-\n",
    );
    write(r, &format!("{cpu}/cpu0/cache/index0/level"), "1\n");
    write(r, &format!("{cpu}/cpu0/cache/index0/size"), "lots\n");
    write(r, "sys/devices/system/node/node0/distance", "10 20\n");
    write(r, "sys/devices/system/node/node0/meminfo", "nonsense\n");
    write(r, "proc/mounts", "cpuset /cg cgroup rw,cpuset 0 0\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.online, set("0-1"));
    assert_eq!(info.cores.len(), 2);
    assert_eq!(info.packages.len(), 1);
    assert!(info.numa_nodes[0].memory_bytes.is_none());
    assert!(info.numa_nodes[0].memory_note.is_some());
    assert!(info.numa_nodes[0].distances.is_empty());
    assert!(info.caches[0].size_bytes.is_none());
    assert!(!info.caches[0].notes.is_empty());
    assert!(info.topology_notes.iter().any(|n| n.contains("cgroup")));
    let text = cpuscope::report::info_text::render(&info);
    assert!(text.contains("Summary: "));
}

// ---------------------------------------------------------------------------
// cgroup cpusets recorded in other ways than the fixtures.

fn small_machine(root: &Path) {
    let cpu = "sys/devices/system/cpu";
    write(root, &format!("{cpu}/online"), "0-3\n");
    for c in 0..4 {
        write(
            root,
            &format!("{cpu}/cpu{c}/topology/physical_package_id"),
            "0\n",
        );
        write(
            root,
            &format!("{cpu}/cpu{c}/topology/core_id"),
            &format!("{c}\n"),
        );
    }
}

#[test]
fn cgroup_v2_cpuset_is_inherited_from_ancestors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    write(
        r,
        "proc/mounts",
        "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n",
    );
    write(r, "proc/self/cgroup", "0::/a/b\n");
    write(
        r,
        "sys/fs/cgroup/cgroup.controllers",
        "cpuset cpu io memory\n",
    );
    write(r, "sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
    write(r, "sys/fs/cgroup/cpuset.mems.effective", "0\n");
    write(r, "sys/fs/cgroup/a/cpuset.cpus.effective", "2-3\n");
    write(r, "sys/fs/cgroup/a/b/cgroup.procs", "1\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.usable, set("2-3"));
    let cg = info.cpus.cgroup.expect("cgroup");
    assert_eq!((cg.version, cg.path.as_str()), (2, "/a/b"));
    assert_eq!(
        cg.cpus_file.as_deref(),
        Some("/sys/fs/cgroup/a/cpuset.cpus.effective")
    );
    assert_eq!(cg.mems, Some(set("0")));
    assert_eq!(info.threads.iter().filter(|t| t.usable).count(), 2);
}

#[test]
fn cgroup_v2_without_cpuset_controller_restricts_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    write(r, "proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
    write(r, "proc/self/cgroup", "0::/user.slice\n");
    write(r, "sys/fs/cgroup/cgroup.controllers", "cpu io memory\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert!(info.cpus.cgroup.is_none());
    assert!(info.cpus.allowed.is_none());
    assert_eq!(info.cpus.usable, set("0-3"));
    assert!(info.cpus.unavailable.contains_key("allowed"));
}

#[test]
fn status_allowed_list_and_v1_container_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    // v1 cpuset where the recorded path is not visible under the mount (container).
    write(
        r,
        "proc/mounts",
        "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n",
    );
    write(r, "proc/self/cgroup", "4:cpuset:/docker/abc\n");
    write(r, "sys/fs/cgroup/cpuset/cpuset.cpus", "1-3\n");
    write(r, "sys/fs/cgroup/cpuset/cpuset.mems", "0\n");
    write(
        r,
        "proc/self/status",
        "Name:\tx\nCpus_allowed_list:\t0-2\nMems_allowed_list:\t0\n",
    );
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.usable, set("1-2"));
    assert!(info.cpus.allowed_source.contains("Cpus_allowed_list"));
    assert!(info.cpus.allowed_source.contains("cgroup v1"));
    assert_eq!(info.numa.usable, set("0"));
}

#[test]
fn core_kinds_from_pmu_devices_and_from_capacity() {
    // Intel hybrid PMUs: /sys/devices/cpu_core and /sys/devices/cpu_atom.
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    write(r, "sys/devices/cpu_core/cpus", "0-1\n");
    write(r, "sys/devices/cpu_atom/cpus", "2-3\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    let names: Vec<(&str, String)> = info
        .core_kinds
        .iter()
        .map(|k| (k.name.as_str(), k.cpus.to_string()))
        .collect();
    assert_eq!(
        names,
        vec![("P-core", "0-1".into()), ("E-core", "2-3".into())]
    );
    assert_eq!(info.thread(3).and_then(|t| t.kind), Some(1));

    // ARM big.LITTLE: cpu_capacity.
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    for (c, cap) in [(0, 446), (1, 446), (2, 1024), (3, 1024)] {
        write(
            r,
            &format!("sys/devices/system/cpu/cpu{c}/cpu_capacity"),
            &format!("{cap}\n"),
        );
    }
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.core_kinds.len(), 2);
    assert_eq!(info.core_kinds[0].cpus, set("2-3"));
    assert_eq!(info.core_kinds[0].capacity, Some(1024));
    assert_eq!(info.core_kinds[1].name, "little");
    let text = cpuscope::report::info_text::render(&info);
    assert!(
        text.contains("2 big × 1 thread + 2 little × 1 thread"),
        "{text}"
    );

    // Same capacity everywhere: homogeneous.
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    for c in 0..4 {
        write(
            r,
            &format!("sys/devices/system/cpu/cpu{c}/cpu_capacity"),
            "1024\n",
        );
    }
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert!(info.core_kinds.is_empty());
}

#[test]
fn no_cluster_from_the_kernels_no_cluster_values() {
    // x86 under QEMU: cluster_id 65535 (and -1, 2^32-1 elsewhere) means "no
    // cluster", not a cluster numbered 65535.
    for v in ["65535", "-1", "4294967295"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = dir.path();
        small_machine(r);
        for c in 0..4 {
            write(
                r,
                &format!("sys/devices/system/cpu/cpu{c}/topology/cluster_id"),
                &format!("{v}\n"),
            );
        }
        let info = discover(&Sysroot::new(r).unwrap()).unwrap();
        assert!(
            info.clusters.is_empty(),
            "cluster_id {v}: {:?}",
            info.clusters
        );
        let text = cpuscope::report::info_text::render(&info);
        assert!(
            !text.contains("cluster 65535") && !text.contains("4294967295"),
            "{text}"
        );
    }
}

// ---------------------------------------------------------------------------
// Memory tiers (machine/memory_tiers.rs, issue 36): hwloc's trees with HMAT
// access classes and memory-side caches.

#[test]
fn hmat_access_classes_and_side_caches_of_hwlocs_trees() {
    let Some(info) = load("fakememinitiators-1np2c+1npp+gi") else {
        return;
    };
    let t = &info.memory_tiers;
    assert!(t.declared, "{t:?}");
    // Nodes 0-4 are initiators (CPUs, a GPU node): their access dirs hold
    // only `targets/`, which declares nothing about their memory.
    let nodes: Vec<usize> = t.nodes.iter().map(|n| n.node).collect();
    assert_eq!(nodes, vec![5, 6, 7, 8, 9, 10]);
    let n7 = &t.nodes[2];
    assert_eq!(n7.access.len(), 2);
    let (a0, a1) = (&n7.access[0], &n7.access[1]);
    assert_eq!((a0.class, a0.initiators.to_string()), (0, "4".into()));
    assert_eq!(
        (a0.read_latency_ns, a0.read_bandwidth_mb_s),
        (Some(8), Some(8192))
    );
    assert_eq!((a1.class, a1.initiators.to_string()), (1, "0,2".into()));
    assert_eq!(
        (a1.read_latency_ns, a1.read_bandwidth_mb_s),
        (Some(77), Some(78644))
    );
    let text = cpuscope::report::info_text::render(&info);
    assert!(
        text.contains("access1 (CPUs, from nodes 0,2): read/write 77 ns, 78644 MB/s"),
        "{text}"
    );

    let info = load("memorysidecaches").expect("loaded as the other");
    let t = &info.memory_tiers;
    assert_eq!(t.nodes.len(), 4, "{t:?}");
    for n in &t.nodes {
        assert_eq!(n.side_caches.len(), 1, "{n:?}");
        assert_eq!(n.side_caches[0].size_bytes, Some(96 << 30));
        assert_eq!(n.side_caches[0].line_bytes, Some(64));
        // The kernel shows 0 where the firmware gave no figure: not a figure.
        assert!(
            n.access.iter().all(|a| a.read_latency_ns.is_none()),
            "{n:?}"
        );
    }
}

/// `run --list --sysroot`: the plan of a recorded machine (128 CPUs, 2
/// packages, 4 nodes), from the estimates `run` uses; nothing measured,
/// and a run that would measure a recorded tree is still refused.
#[test]
fn run_list_plans_a_recorded_machine() {
    let Some(root) = tree("128arm-2pa2n8cluster4co") else {
        return;
    };
    let root = root.to_str().expect("utf-8 path");
    let (code, out, err) =
        bin::run_text(&["run", "--list", "--profile", "quick", "--sysroot", root]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("plan for the machine recorded at ")
            && first.contains("128 CPUs (0-127), 4 NUMA node(s)"),
        "{out}"
    );
    let total = out
        .lines()
        .find(|l| l.starts_with("total"))
        .unwrap_or_else(|| panic!("no total: {out}"));
    assert!(total.contains("(profile quick)"), "{total}");
    // Every experiment selected has its line, and c2c plans for 128 CPUs.
    assert!(out.lines().any(|l| l.starts_with("c2c ")), "{out}");
    let (code, out, _) = bin::run_text(&[
        "run",
        "--list",
        "--only",
        "c2c",
        "--cpus",
        "0-7",
        "--sysroot",
        root,
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("8 CPUs (0-7)"), "{out}");
    // Measuring a recorded tree: one line, exit 1.
    let (code, _, err) = bin::run_text(&["run", "--only", "frequency", "--sysroot", root]);
    assert_eq!(code, 1);
    assert!(err.contains("--sysroot only applies to"), "{err}");
}

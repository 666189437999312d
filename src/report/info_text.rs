//! Human-readable rendering of `cpuscope info`: one report that covers what
//! lscpu, `numactl -H` and lstopo say, organised for a performance engineer and
//! kept compact on machines with hundreds of CPUs.

use crate::base::fmt::{fmt_bytes, for_terminal, for_terminal_lines};
use crate::base::CpuSet;
use crate::machine::numa_memory::{NodeMemory, NumaMemory};
use crate::machine::topology::{Core, CoreKind, Package, Smt};
use crate::machine::MachineInfo;
use crate::report::info_sections;
use std::fmt::Write as _;

mod caches;
use caches::*;
mod tiers;

/// Longest line we aim for.
const WIDTH: usize = 100;
/// Above this many cores in a package, cores are printed as a pattern or a grid.
const CORES_ONE_PER_LINE: usize = 8;

pub fn render(info: &MachineInfo) -> String {
    let mut out = String::new();
    let title = if info.sysroot.is_empty() || info.sysroot == "/" {
        "cpuscope info: this machine".to_string()
    } else {
        format!(
            "cpuscope info: recorded machine at {}",
            for_terminal(&info.sysroot)
        )
    };
    out.push_str(&title);
    out.push_str("\n\n");
    let sections = [
        info_sections::identity(info),
        summary(info),
        cpu_lists(info),
        super::info_limits::section(info),
        topology(info),
        caches(info),
        numa(info),
        numa_memory(info),
        tiers::section(&info.memory_tiers),
        info_sections::memory_devices(info),
        info_sections::isa(info),
        info_sections::frequency(info),
        info_sections::knobs(info),
        info_sections::devices(info),
        notes(info),
    ];
    for s in sections.iter().filter(|s| !s.trim().is_empty()) {
        // Every value was read under the root: whatever a section missed,
        // no control character of a recorded tree reaches the terminal.
        out.push_str(&for_terminal_lines(s.trim_end_matches('\n')));
        out.push_str("\n\n");
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// `n thing` / `n things`.
fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn list_or(s: &CpuSet, none: &str) -> String {
    if s.is_empty() {
        none.to_string()
    } else {
        s.to_string()
    }
}

/// The summary's first words: packages × cores × threads = CPUs, per core
/// kind when the cores are of several kinds, or the ranges when packages or
/// cores differ.
fn machine_shape(info: &MachineInfo) -> String {
    let npk = info.packages.len();
    let ncores = info.cores.len();
    let ncpus = info.cpus.online.len();
    let per_pkg: Vec<usize> = info.packages.iter().map(|p| p.cores).collect();
    let cpp_min = per_pkg.iter().copied().min().unwrap_or(0);
    let cpp_max = per_pkg.iter().copied().max().unwrap_or(0);
    let tpc_min = info.smt.min_threads_per_core;
    let tpc_max = info.smt.threads_per_core;
    let online_word = if info.cpus.offline.is_empty() {
        "CPUs"
    } else {
        "CPUs online"
    };
    if !info.core_kinds.is_empty() {
        let parts: Vec<String> = info
            .core_kinds
            .iter()
            .map(|k| {
                let (tmin, tmax) = kind_threads(info, k.index);
                let t = if tmin == tmax {
                    plural(tmax, "thread")
                } else {
                    format!("{tmin}-{tmax} threads")
                };
                format!("{} {} × {t}", k.cores, k.name)
            })
            .collect();
        format!(
            "{}, {} ({}) = {ncpus} {online_word}",
            plural(npk, "package"),
            plural(ncores, "core"),
            parts.join(" + ")
        )
    } else if cpp_min == cpp_max && tpc_min == tpc_max {
        format!(
            "{} × {} × {} = {ncpus} {online_word}",
            plural(npk, "package"),
            plural(cpp_max, "core"),
            plural(tpc_max, "thread")
        )
    } else {
        let mut extra = Vec::new();
        if cpp_min != cpp_max {
            extra.push(format!("{cpp_min}-{cpp_max} cores per package"));
        }
        if tpc_min != tpc_max {
            extra.push(format!("{tpc_min}-{tpc_max} threads per core"));
        }
        format!(
            "{}, {}, {ncpus} {online_word} ({})",
            plural(npk, "package"),
            plural(ncores, "core"),
            extra.join(", ")
        )
    }
}

fn summary(info: &MachineInfo) -> String {
    let ncpus = info.cpus.online.len();
    let mut line = machine_shape(info);
    let nn = info.numa_nodes.len();
    let _ = write!(line, ", {}", plural(nn, "NUMA node"));
    if info.numa.implicit {
        line.push_str(" (implicit)");
    }
    let mut out = format!("Summary: {line}\n");
    if !info.cpus.offline.is_empty() {
        let _ = writeln!(
            out,
            "         {} offline: {}",
            plural(info.cpus.offline.len(), "CPU"),
            info.cpus.offline
        );
    }
    if info.cpus.usable != info.cpus.online {
        let _ = writeln!(
            out,
            "         this process may use {} of {}: {}",
            info.cpus.usable.len(),
            ncpus,
            list_or(&info.cpus.usable, "none")
        );
    }
    if info.numa.usable.len() != nn {
        let _ = writeln!(
            out,
            "         this process may allocate memory on NUMA nodes {}",
            list_or(&info.numa.usable, "none")
        );
    }
    out
}

fn kind_threads(info: &MachineInfo, kind: usize) -> (usize, usize) {
    let v: Vec<usize> = info
        .cores
        .iter()
        .filter(|c| c.kind == Some(kind))
        .map(|c| c.cpus.len())
        .collect();
    (
        v.iter().copied().min().unwrap_or(0),
        v.iter().copied().max().unwrap_or(0),
    )
}

fn cpu_lists(info: &MachineInfo) -> String {
    let c = &info.cpus;
    let mut out = String::from("CPUs\n");
    let row = |out: &mut String, k: &str, v: String| {
        let _ = writeln!(out, "  {k:<10} {}", for_terminal(&v));
    };
    row(
        &mut out,
        "online",
        format!("{}  ({})", list_or(&c.online, "none"), c.online.len()),
    );
    row(
        &mut out,
        "offline",
        if c.offline.is_empty() {
            "none".into()
        } else {
            format!("{}  ({})", c.offline, c.offline.len())
        },
    );
    let why = if c.allowed.is_some() {
        format!("per {}", c.allowed_source)
    } else {
        c.allowed_source.clone()
    };
    row(
        &mut out,
        "usable",
        format!(
            "{}  ({})  {why}",
            list_or(&c.usable, "none"),
            c.usable.len()
        ),
    );
    row(
        &mut out,
        "possible",
        format!(
            "{}    present {}",
            list_or(&c.possible, "none"),
            list_or(&c.present, "none")
        ),
    );
    let opt = |s: &Option<CpuSet>| match s {
        Some(s) => list_or(s, "none"),
        None => "not reported".into(),
    };
    row(
        &mut out,
        "isolated",
        format!("{}    nohz_full {}", opt(&c.isolated), opt(&c.nohz_full)),
    );
    row(&mut out, "SMT", smt_state(&info.smt));
    if !info.core_kinds.is_empty() {
        for k in &info.core_kinds {
            row(
                &mut out,
                if k.index == 0 { "core kinds" } else { "" },
                core_kind_cell(k),
            );
        }
        if let Some(k) = info.core_kinds.first() {
            row(&mut out, "", format!("(kinds from {})", k.source));
        }
    }
    out
}

/// Threads per core (or their range), whether SMT is active, and
/// smt/control when the kernel says it.
fn smt_state(smt: &Smt) -> String {
    let mut s = if smt.threads_per_core == smt.min_threads_per_core {
        format!("{} per core", plural(smt.threads_per_core, "thread"))
    } else {
        format!(
            "{}-{} threads per core",
            smt.min_threads_per_core, smt.threads_per_core
        )
    };
    s.push_str(if smt.active {
        ", active"
    } else {
        ", not active"
    });
    if let Some(ctl) = &smt.control {
        let _ = write!(s, " (smt/control: {ctl})");
    }
    s
}

/// One core kind: name, CPUs, cores, and its base clock and capacity when known.
fn core_kind_cell(k: &CoreKind) -> String {
    let mut d = format!("{:<12} {}  ({})", k.name, k.cpus, plural(k.cores, "core"));
    if let Some(b) = k.base_khz {
        let _ = write!(d, ", base {:.2} GHz", b as f64 / 1e6);
    }
    if let Some(cap) = k.capacity {
        let _ = write!(d, ", capacity {cap}");
    }
    d
}

/// Short tag of a core kind for the topology listing.
fn kind_tag(info: &MachineInfo, kind: Option<usize>) -> String {
    match kind.and_then(|k| info.core_kinds.get(k)) {
        Some(k) => match k.name.as_str() {
            "P-core" => "P".into(),
            "E-core" => "E".into(),
            n => n
                .chars()
                .next()
                .map(|c| c.to_ascii_uppercase().to_string())
                .unwrap_or_default(),
        },
        None => String::new(),
    }
}

/// One core as `id:cpus` with kind tag and a `*` when some thread is not usable.
fn core_cell(info: &MachineInfo, c: &Core) -> String {
    let mut s = format!("{}:{}", c.core_id, c.cpus);
    let tag = kind_tag(info, c.kind);
    if !tag.is_empty() {
        let _ = write!(s, "[{tag}]");
    }
    if c.cpus.iter().any(|x| !info.cpus.usable.contains(x)) {
        s.push('*');
    }
    s
}

/// Pack cells into lines of at most WIDTH columns, in aligned columns.
fn grid(cells: &[String], indent: usize) -> String {
    let w = cells.iter().map(|c| c.chars().count()).max().unwrap_or(1) + 2;
    let per = ((WIDTH.saturating_sub(indent)) / w).max(1);
    let mut out = String::new();
    for chunk in cells.chunks(per) {
        out.push_str(&" ".repeat(indent));
        let line: String = chunk.iter().map(|c| format!("{c:<w$}")).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `n`, `n+64`, `2n+1`: the affine form a + s·n.
fn affine(a: usize, s: usize) -> String {
    let base = if s == 1 {
        "n".to_string()
    } else {
        format!("{s}n")
    };
    if a == 0 {
        base
    } else {
        format!("{base}+{a}")
    }
}

/// If the cores' CPUs follow `core n = CPUs a_t + s·n`, describe it in one line.
fn core_pattern(cores: &[&Core]) -> Option<String> {
    let first = cores.first()?;
    let t = first.cpus.len();
    if t == 0 || cores.iter().any(|c| c.cpus.len() != t) || cores.len() < 2 {
        return None;
    }
    let rows: Vec<Vec<usize>> = cores.iter().map(|c| c.cpus.to_vec()).collect();
    let s = rows[1][0].checked_sub(rows[0][0])?;
    if s == 0 {
        return None;
    }
    for (i, r) in rows.iter().enumerate() {
        for (k, cpu) in r.iter().enumerate() {
            if *cpu != rows[0][k] + s * i {
                return None;
            }
        }
    }
    let n = cores.len();
    let forms: Vec<String> = rows[0].iter().map(|a| affine(*a, s)).collect();
    let ids: Vec<usize> = cores.iter().map(|c| c.core_id).collect();
    let ids_note = if ids.windows(2).all(|w| w[1] == w[0] + 1) {
        format!(" (core_id {}-{})", ids[0], ids[n - 1])
    } else {
        String::new()
    };
    Some(format!(
        "{} × {}: core n = CPU {} for n = 0-{}{ids_note}",
        plural(n, "core"),
        plural(t, "thread"),
        forms.join(", "),
        n - 1
    ))
}

/// The cores of one group (package, die or cluster), compressed when many.
fn cores_block(info: &MachineInfo, cores: &[&Core], indent: usize) -> String {
    let pad = " ".repeat(indent);
    if cores.len() <= CORES_ONE_PER_LINE {
        let cells: Vec<String> = cores.iter().map(|c| core_cell(info, c)).collect();
        return grid(&cells, indent);
    }
    let uniform_kind = cores.iter().all(|c| c.kind == cores[0].kind);
    let all_usable = cores
        .iter()
        .all(|c| c.cpus.iter().all(|x| info.cpus.usable.contains(x)));
    if uniform_kind && all_usable {
        if let Some(p) = core_pattern(cores) {
            let tag = kind_tag(info, cores[0].kind);
            let tag = if tag.is_empty() {
                tag
            } else {
                format!(" [{tag}]")
            };
            return format!("{pad}{p}{tag}\n");
        }
    }
    let cells: Vec<String> = cores.iter().map(|c| core_cell(info, c)).collect();
    grid(&cells, indent)
}

fn topology(info: &MachineInfo) -> String {
    let mut out = String::from("Topology (package > die > cluster > cores as core_id:CPUs");
    if !info.core_kinds.is_empty() {
        out.push_str("; [kind]");
    }
    if info.cpus.usable != info.cpus.online {
        out.push_str("; * = not usable by this process");
    }
    out.push_str(")\n");
    let multi_die = info.packages.iter().any(|p| p.dies > 1);
    // Clusters matter only when some cluster groups several cores.
    let clusters_matter = info.clusters.iter().any(|c| c.cores > 1);
    for p in &info.packages {
        out.push_str(&package_head(p, info));
        out.push('\n');
        for d in info.dies.iter().filter(|d| d.package == p.id) {
            let mut indent = 4;
            if multi_die {
                let _ = writeln!(
                    out,
                    "    Die {}: {}, CPUs {}",
                    d.id,
                    plural(d.cores, "core"),
                    d.cpus
                );
                indent = 6;
            }
            let dcores: Vec<&Core> = info
                .cores
                .iter()
                .filter(|c| c.package == p.id && c.die == d.id)
                .collect();
            if clusters_matter {
                cores_by_cluster(&mut out, info, &dcores, indent);
            } else {
                out.push_str(&cores_block(info, &dcores, indent));
            }
        }
    }
    out
}

/// The line of one package: cores, CPUs, NUMA nodes, and what of it this
/// process may use.
fn package_head(p: &Package, info: &MachineInfo) -> String {
    let usable = p.cpus.intersection(&info.cpus.usable);
    let mut head = format!(
        "  Package {}: {}, {} {}",
        p.id,
        plural(p.cores, "core"),
        plural(p.cpus.len(), "CPU"),
        p.cpus
    );
    if !p.nodes.is_empty() {
        let _ = write!(
            head,
            ", NUMA node{} {}",
            if p.nodes.len() == 1 { "" } else { "s" },
            p.nodes
        );
    }
    if usable.is_empty() {
        head.push_str("  (not usable by this process)");
    } else if usable != p.cpus {
        let _ = write!(head, "  (usable: {usable})");
    }
    head
}

/// Group consecutive cores by cluster id, keeping core order.
fn consecutive_clusters<'a>(dcores: &[&'a Core]) -> Vec<(Option<usize>, Vec<&'a Core>)> {
    let mut groups: Vec<(Option<usize>, Vec<&Core>)> = Vec::new();
    for c in dcores {
        match groups.last_mut() {
            Some((cl, v)) if *cl == c.cluster => v.push(c),
            _ => groups.push((c.cluster, vec![c])),
        }
    }
    groups
}

/// The cores of one die listed by cluster: one line for many like clusters,
/// runs of one-core clusters together, else one line (or block) per cluster.
fn cores_by_cluster(out: &mut String, info: &MachineInfo, dcores: &[&Core], indent: usize) {
    let groups = consecutive_clusters(dcores);
    // Many clusters of the same size (Kunpeng 920: 16 × 4 cores per
    // package): one line for the clusters, then the cores as a block.
    let k = groups.first().map_or(0, |g| g.1.len());
    if groups.len() > 8 && k > 1 && groups.iter().all(|(cl, cs)| cl.is_some() && cs.len() == k) {
        let ids: Vec<usize> = groups.iter().filter_map(|g| g.0).collect();
        let _ = writeln!(
            out,
            "{}{} clusters × {} (cluster ids {} … {}):",
            " ".repeat(indent),
            groups.len(),
            plural(k, "core"),
            ids[0],
            ids[ids.len() - 1]
        );
        out.push_str(&cores_block(info, dcores, indent + 2));
        return;
    }
    // Runs of one-core clusters are listed together, without cluster ids.
    let mut singles: Vec<&Core> = Vec::new();
    let flush = |singles: &mut Vec<&Core>, out: &mut String| {
        if singles.is_empty() {
            return;
        }
        let _ = writeln!(out, "{}one core per cluster:", " ".repeat(indent));
        out.push_str(&cores_block(info, singles, indent + 2));
        singles.clear();
    };
    for (cl, cs) in groups {
        if cs.len() == 1 {
            singles.extend(cs);
            continue;
        }
        flush(&mut singles, out);
        let label = match cl {
            Some(id) => format!("cluster {id}:"),
            None => "no cluster:".into(),
        };
        let cells: Vec<String> = cs.iter().map(|c| core_cell(info, c)).collect();
        let line = format!("{}{label:<12} {}", " ".repeat(indent), cells.join("  "));
        if line.chars().count() <= WIDTH {
            out.push_str(&line);
            out.push('\n');
        } else {
            let _ = writeln!(out, "{}{label}", " ".repeat(indent));
            out.push_str(&cores_block(info, &cs, indent + 2));
        }
    }
    flush(&mut singles, out);
}

fn numa(info: &MachineInfo) -> String {
    let n = info.numa_nodes.len();
    let mut out = format!("NUMA: {}", plural(n, "node"));
    if info.numa.usable.len() != n {
        let _ = write!(
            out,
            "; this process may allocate on {} (from {})",
            list_or(&info.numa.usable, "none"),
            info.numa.usable_source
        );
    }
    out.push('\n');
    if let Some(note) = &info.numa.note {
        let _ = writeln!(out, "  note: {}", for_terminal(note));
    }
    out.push_str(&table(&numa_node_rows(info), 2));
    let mem_notes: Vec<String> = info
        .numa_nodes
        .iter()
        .filter_map(|x| {
            x.memory_note
                .as_ref()
                .map(|m| format!("node {}: memory {m}", x.id))
        })
        .collect();
    for m in mem_notes {
        let _ = writeln!(out, "  {}", for_terminal(&m));
    }
    numa_distances(&mut out, info);
    out
}

/// The node table: per node its CPUs (offline ones said), memory, free
/// memory, huge pages of each size (free), and whether this process may
/// allocate there when not on every node.
fn numa_node_rows(info: &MachineInfo) -> Vec<Vec<String>> {
    let show_usable = info.numa.usable.len() != info.numa_nodes.len();
    let sizes: Vec<u64> = {
        let mut v: Vec<u64> = info
            .numa_nodes
            .iter()
            .flat_map(|x| x.hugepages.iter().map(|h| h.page_bytes))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = vec![
        "node".to_string(),
        "CPUs".into(),
        "memory".into(),
        "free".into(),
    ];
    for s in &sizes {
        head.push(format!("{} pages (free)", fmt_bytes(*s).replace(' ', "")));
    }
    if show_usable {
        head.push("usable".into());
    }
    rows.push(head);
    for node in &info.numa_nodes {
        let mut cpus = list_or(&node.cpus, "none (memory only)");
        let off = node.cpus.difference(&info.cpus.online);
        if !off.is_empty() && !node.cpus.is_empty() {
            let _ = write!(cpus, " ({off} offline)");
        }
        let mut r = vec![
            node.id.to_string(),
            cpus,
            opt_bytes(node.memory_bytes),
            opt_bytes(node.free_bytes),
        ];
        for s in &sizes {
            r.push(match node.hugepages.iter().find(|h| h.page_bytes == *s) {
                Some(h) => format!(
                    "{} ({})",
                    h.total
                        .map(|x| x.to_string())
                        .unwrap_or_else(|| "n/a".into()),
                    h.free
                        .map(|x| x.to_string())
                        .unwrap_or_else(|| "n/a".into())
                ),
                None => "n/a".into(),
            });
        }
        if show_usable {
            r.push(if node.usable { "yes" } else { "no" }.into());
        }
        rows.push(r);
    }
    rows
}

/// The node distances: one line when one node or when every pair is alike
/// (more than 4 nodes), else the matrix; or that the kernel reports none.
fn numa_distances(out: &mut String, info: &MachineInfo) {
    let n = info.numa_nodes.len();
    let d: Vec<&Vec<u32>> = info.numa_nodes.iter().map(|x| &x.distances).collect();
    if !(d.iter().all(|r| r.len() == n) && n > 0) {
        let _ = writeln!(out, "  distances: not available (the kernel reports none)");
        return;
    }
    if n == 1 {
        let _ = writeln!(out, "  distance: {} (local)", d[0][0]);
        return;
    }
    let diag: Vec<u32> = (0..n).map(|i| d[i][i]).collect();
    let off: Vec<u32> = (0..n)
        .flat_map(|i| (0..n).filter(move |j| *j != i).map(move |j| (i, j)))
        .map(|(i, j)| d[i][j])
        .collect();
    let same_diag = diag.iter().all(|x| *x == diag[0]);
    let same_off = off.iter().all(|x| *x == off[0]);
    if same_diag && same_off && n > 4 {
        let _ = writeln!(
            out,
            "  distances: {} local, {} between every pair of nodes",
            diag[0], off[0]
        );
    } else {
        let mut rows = vec![std::iter::once("distances".to_string())
            .chain(info.numa_nodes.iter().map(|x| x.id.to_string()))
            .collect::<Vec<_>>()];
        for (i, node) in info.numa_nodes.iter().enumerate() {
            rows.push(
                std::iter::once(format!("{:>9}", node.id))
                    .chain(d[i].iter().map(|x| x.to_string()))
                    .collect(),
            );
        }
        out.push_str(&table_right(&rows, 2));
    }
}

/// A count as perf and numastat readers want it short: 129.6M, 23.7k, 812.
fn short_count(v: u64) -> String {
    let f = v as f64;
    if v >= 1_000_000_000 {
        format!("{:.1}G", f / 1e9)
    } else if v >= 1_000_000 {
        format!("{:.1}M", f / 1e6)
    } else if v >= 10_000 {
        format!("{:.1}k", f / 1e3)
    } else {
        v.to_string()
    }
}

/// Nodes shown one per line; beyond that the nodes with the least free
/// memory are shown and the rest folded into one line.
const NUMA_MEMORY_ROWS: usize = 4;

/// The NUMA memory section: the reclaim knobs decoded, one line per node
/// (free, page cache, anon, zone watermarks, numastat counters since boot),
/// folded beyond eight nodes to the ones with the least free memory, and the
/// advice. Nothing when none of it is known (recorded trees without these
/// files; the JSON says why).
fn numa_memory(info: &MachineInfo) -> String {
    let mm = &info.numa_memory;
    if mm.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "NUMA memory (nodeN/meminfo; zone watermarks, /proc/zoneinfo; nodeN/numastat, pages since boot)\n",
    );
    let mut missing: Vec<&str> = Vec::new();
    match reclaim_line(mm) {
        Some(line) => {
            for (i, l) in crate::base::fmt::wrap(&line, WIDTH - 12).iter().enumerate() {
                let _ = writeln!(out, "  {:<10}{l}", if i == 0 { "reclaim" } else { "" });
            }
        }
        None => missing.push("vm reclaim knobs"),
    }
    node_table(mm, &mut out);
    missing.extend(
        [
            ("numastat", mm.nodes.iter().all(|n| n.numastat.is_none())),
            (
                "/proc/zoneinfo",
                mm.nodes.iter().all(|n| n.zones.is_empty()),
            ),
            ("FilePages", mm.nodes.iter().all(|n| n.file_bytes.is_none())),
        ]
        .into_iter()
        .filter(|x| x.1)
        .map(|x| x.0),
    );
    if !missing.is_empty() {
        let why = if info.sysroot.is_empty() || info.sysroot == "/" {
            "not readable here"
        } else {
            "not recorded under this root"
        };
        let _ = writeln!(out, "  n/a: {} {why}", missing.join(", "));
    }
    numa_memory_advice(mm, &mut out);
    out
}

/// The reclaim knobs decoded on one line; None when a recorded root holds
/// none of them.
fn reclaim_line(mm: &crate::machine::numa_memory::NumaMemory) -> Option<String> {
    let na = |k: &str| {
        mm.unavailable
            .get(k)
            .map(|r| format!("n/a ({r})"))
            .unwrap_or_else(|| "n/a".into())
    };
    let unrecorded = |k: &str| {
        mm.unavailable
            .get(k)
            .is_some_and(|r| r.starts_with("not recorded"))
    };
    if ["zone_reclaim_mode", "min_free_kbytes", "min_unmapped_ratio"]
        .iter()
        .all(|k| unrecorded(k))
    {
        return None;
    }
    let zr = match &mm.zone_reclaim_mode {
        Some(z) => format!("zone_reclaim_mode {} = {}", z.value, z.meaning),
        None => format!("zone_reclaim_mode {}", na("zone_reclaim_mode")),
    };
    let knob = |v: Option<u64>, k: &str, unit: &str| match v {
        Some(x) => format!("{k} {x}{unit}"),
        None if unrecorded(k) => format!("{k} n/a"),
        None => format!("{k} {}", na(k)),
    };
    Some(format!(
        "{zr}; {}; {}",
        knob(mm.min_free_kbytes, "min_free_kbytes", " kB"),
        knob(mm.min_unmapped_ratio_pct, "min_unmapped_ratio", "%")
    ))
}

/// One row per node (free, page cache, anon, watermarks, numastat), folded
/// beyond [`NUMA_MEMORY_ROWS`] to the nodes with the least free memory and
/// one line for the rest.
fn node_table(mm: &NumaMemory, out: &mut String) {
    let mut rows = vec![[
        "node",
        "free",
        "cache",
        "anon",
        "min/low/high",
        "hit",
        "miss",
        "foreign",
        "intlv",
        "local",
        "other",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect::<Vec<String>>()];
    let mut order: Vec<&NodeMemory> = mm.nodes.iter().collect();
    let folded = order.len() > NUMA_MEMORY_ROWS;
    if folded {
        // The nodes with the least free memory first: where trouble starts.
        order.sort_by_key(|n| (n.free_bytes.unwrap_or(u64::MAX), n.node));
    }
    let shown = if folded {
        NUMA_MEMORY_ROWS - 1
    } else {
        usize::MAX
    };
    for n in order.iter().take(shown) {
        let mut r = vec![
            n.node.to_string(),
            opt_bytes(n.free_bytes),
            opt_bytes(n.file_bytes),
            opt_bytes(n.anon_bytes),
            watermarks(mm, n),
        ];
        r.extend((0..6).map(|i| numastat_cell(n, i)));
        rows.push(r);
    }
    out.push_str(&table(&rows, 2));
    if folded {
        folded_nodes_line(out, &order[NUMA_MEMORY_ROWS - 1..]);
    }
}

/// A node's min/low/high zone watermarks, in MiB when the page size is known.
fn watermarks(mm: &NumaMemory, n: &NodeMemory) -> String {
    match (
        n.watermark_pages("min"),
        n.watermark_pages("low"),
        n.watermark_pages("high"),
    ) {
        (Some(a), Some(b), Some(c)) => match mm.page_bytes {
            Some(pb) => {
                let mib = |p: u64| {
                    let m = p as f64 * pb as f64 / (1u64 << 20) as f64;
                    if m >= 10.0 {
                        format!("{m:.0}")
                    } else {
                        format!("{m:.1}")
                    }
                };
                format!("{}/{}/{} MiB", mib(a), mib(b), mib(c))
            }
            None => format!("{a}/{b}/{c} pages"),
        },
        _ => "n/a".into(),
    }
}

/// The `i`th numastat counter of a node, short.
fn numastat_cell(n: &NodeMemory, i: usize) -> String {
    n.numastat
        .as_ref()
        .and_then(|s| s.fields()[i].1)
        .map(short_count)
        .unwrap_or_else(|| "n/a".into())
}

/// One line for the nodes beyond the table: their ids and the range of their
/// free memory, page cache and anon memory.
fn folded_nodes_line(out: &mut String, rest: &[&NodeMemory]) {
    let range = |f: &dyn Fn(&NodeMemory) -> Option<u64>| {
        let v: Vec<u64> = rest.iter().filter_map(|n| f(n)).collect();
        match (v.iter().min(), v.iter().max()) {
            (Some(a), Some(b)) if a == b => fmt_bytes(*a),
            (Some(a), Some(b)) => format!("{}..{}", fmt_bytes(*a), fmt_bytes(*b)),
            _ => "n/a".into(),
        }
    };
    let ids: CpuSet = rest.iter().map(|n| n.node).collect();
    let _ = writeln!(
        out,
        "  {} more ({ids}): free {}, cache {}, anon {}",
        rest.len(),
        range(&|n| n.free_bytes),
        range(&|n| n.file_bytes),
        range(&|n| n.anon_bytes),
    );
}

/// The first advice lines, and how many more the JSON has.
fn numa_memory_advice(mm: &crate::machine::numa_memory::NumaMemory, out: &mut String) {
    const ADVICE_LINES: usize = 3;
    for a in mm.advice.iter().take(ADVICE_LINES) {
        for (i, l) in crate::base::fmt::wrap(a, WIDTH - 12).iter().enumerate() {
            let _ = writeln!(out, "  {:<10}{l}", if i == 0 { "advice" } else { "" });
        }
    }
    if mm.advice.len() > ADVICE_LINES {
        let _ = writeln!(
            out,
            "  {:<10}{} more in --json (numa_memory.advice)",
            "",
            mm.advice.len() - ADVICE_LINES
        );
    }
}

/// Left-aligned table.
fn table(rows: &[Vec<String>], indent: usize) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut w = vec![0usize; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = " ".repeat(indent);
        for (i, c) in r.iter().enumerate() {
            line.push_str(c);
            line.push_str(&" ".repeat(w[i] - c.chars().count() + 2));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Table with all but the first column right-aligned (for numbers).
fn table_right(rows: &[Vec<String>], indent: usize) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut w = vec![0usize; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = " ".repeat(indent);
        for (i, c) in r.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i == 0 {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad + 2));
                line.push_str(c);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn notes(info: &MachineInfo) -> String {
    if info.topology_notes.is_empty() && info.read_notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("Notes\n");
    for n in info.topology_notes.iter().chain(&info.read_notes) {
        let _ = writeln!(out, "  - {}", crate::base::fmt::for_terminal(n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_forms() {
        assert_eq!(affine(0, 1), "n");
        assert_eq!(affine(64, 1), "n+64");
        assert_eq!(affine(1, 2), "2n+1");
    }

    #[test]
    fn regular_cores_collapse_to_one_line() {
        let cores: Vec<Core> = (0..64)
            .map(|i| Core {
                index: i,
                core_id: i,
                cpus: CpuSet::from_ids([i, i + 64]),
                ..Default::default()
            })
            .collect();
        let refs: Vec<&Core> = cores.iter().collect();
        let p = core_pattern(&refs).expect("pattern");
        assert!(p.contains("64 cores × 2 threads"), "{p}");
        assert!(p.contains("n, n+64"), "{p}");
        assert!(p.contains("core_id 0-63"), "{p}");
    }
}

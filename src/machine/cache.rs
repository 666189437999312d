//! Cache instances: level, type, size, line, ways, and which CPUs share each.
//! Read from `/sys/devices/system/cpu/cpuN/cache/indexM` of every online CPU and
//! deduplicated: one instance per (level, type, set of CPUs sharing it).

use super::topology::Core;
use super::uarch;
use crate::base::CpuSet;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheInstance {
    pub level: u32,
    /// Data, Instruction or Unified.
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub line_bytes: Option<u64>,
    pub ways: Option<u64>,
    pub sets: Option<u64>,
    pub physical_line_partition: Option<u64>,
    /// `id` of the cache (newer kernels): unique per level and type.
    pub id: Option<u64>,
    /// Online CPUs sharing this instance.
    pub shared_cpu_list: CpuSet,
    /// Cores (entries of `MachineInfo::cores`) with a thread sharing this instance.
    pub cores: usize,
    /// size_bytes / cores: each core's share when all cores use it evenly.
    pub per_core_bytes: Option<u64>,
    /// Fields the kernel did not report, and other oddities.
    pub notes: Vec<String>,
    /// Where `size_bytes` comes from when not from the kernel: the core's
    /// knowledge-base entry and its source ([`fill_documented`]); None when
    /// the kernel reported it.
    pub size_source: Option<String>,
    /// True for a level the kernel does not list at all, added from the
    /// core's knowledge-base entry (a private per-core level only).
    pub documented_only: bool,
}

impl CacheInstance {
    /// Short name: L1d, L1i, L2, L3 (U for a unified L1, d/i for split higher levels).
    pub fn name(&self) -> String {
        let suffix = match (self.level, self.kind.as_str()) {
            (_, "Data") => "d",
            (_, "Instruction") => "i",
            (1, _) => "u",
            _ => "",
        };
        format!("L{}{}", self.level, suffix)
    }
}

/// Parse a sysfs cache size: `32K`, `1024K`, `8M`, `1G`, or plain bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let (num, mult) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 1u64 << 10),
        'M' | 'm' => (&t[..t.len() - 1], 1u64 << 20),
        'G' | 'g' => (&t[..t.len() - 1], 1u64 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// What each CPU's shared_cpu_list and shared_cpu_map say, per (cpu, level,
/// type): both come from one kernel mask, but recorded trees show them
/// disagreeing.
type SharingViews = BTreeMap<(usize, u64, String), [Option<CpuSet>; 2]>;

/// One `cpuN/cache/indexM` directory with a readable level.
struct IndexDir {
    cpu: usize,
    /// The directory's path under the sysroot.
    dir: String,
    level: u64,
    /// `type`, "Unknown" when unreadable.
    kind: String,
}

/// Read all cache instances seen by the online CPUs. Returns the instances
/// (sorted by level, type, first CPU) and, when there are none, why.
pub fn read(
    sys: &Sysroot,
    online: &CpuSet,
    cores: &[Core],
) -> (Vec<CacheInstance>, Option<String>) {
    let mut found: BTreeMap<(u32, String, CpuSet), CacheInstance> = BTreeMap::new();
    let (dirs, views, any_dir) = index_dirs(sys, online);
    for dir in dirs {
        let mut notes = Vec::new();
        let shared = sharing(&views, online, &dir, &mut notes);
        let key = (dir.level as u32, dir.kind.clone(), shared.clone());
        if found.contains_key(&key) {
            continue;
        }
        found.insert(key, instance(sys, dir, shared, cores, notes));
    }
    let mut v: Vec<CacheInstance> = found.into_values().collect();
    sort(&mut v);
    // arm64 kernels booted with a device tree that gives no line sizes: the
    // running CPU's CTR_EL0 says the smallest line (this machine, or as
    // `record` kept it).
    if v.iter().any(|c| c.line_bytes.is_none()) {
        if let Some(f) = super::live::facts(sys) {
            if let Some([d, i]) = f.facts.ctr_el0_lines {
                fill_ctr_el0_lines(&mut v, (d, i), f.mark());
            }
        }
    }
    let reason = if v.is_empty() {
        Some(if any_dir {
            "cpuN/cache/indexM directories hold no readable level".to_string()
        } else {
            "the kernel exports no cpuN/cache directories (common on older ARM kernels and some VMs)"
                .to_string()
        })
    } else {
        None
    };
    (v, reason)
}

/// Every cache index directory of the online CPUs with a readable level, in
/// CPU then index order; what each says of its sharing; and whether any
/// index directory exists at all.
fn index_dirs(sys: &Sysroot, online: &CpuSet) -> (Vec<IndexDir>, SharingViews, bool) {
    let mut any_dir = false;
    let mut views = SharingViews::new();
    let mut dirs = Vec::new();
    for cpu in online.iter() {
        let base = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
        for idx in sys.list_numbered(&base, "index") {
            any_dir = true;
            let d = format!("{base}/index{idx}");
            let Some(level) = sys.read_u64(&format!("{d}/level")) else {
                continue;
            };
            let kind = sys
                .read_string(&format!("{d}/type"))
                .unwrap_or_else(|| "Unknown".into());
            views.insert(
                (cpu, level, kind.clone()),
                [
                    sys.read_cpulist(&format!("{d}/shared_cpu_list")),
                    sys.read_cpumask(&format!("{d}/shared_cpu_map")),
                ],
            );
            dirs.push(IndexDir {
                cpu,
                dir: d,
                level,
                kind,
            });
        }
    }
    (dirs, views, any_dir)
}

/// Whether a sharing set `s` that `cpu` reports for (level, type) is
/// believable: every other online CPU in it says the same.
fn agreed(
    views: &SharingViews,
    online: &CpuSet,
    cpu: usize,
    (level, kind): (u64, &str),
    s: &CpuSet,
) -> bool {
    s.iter()
        .filter(|y| *y != cpu && online.contains(*y))
        .all(|y| {
            views
                .get(&(y, level, kind.to_string()))
                .is_some_and(|v| v.iter().flatten().any(|o| o == s))
        })
}

/// The online CPUs sharing the cache of `dir` (its own CPU always among
/// them), noting in `notes` when the list and the map disagree or both are
/// missing.
fn sharing(
    views: &SharingViews,
    online: &CpuSet,
    dir: &IndexDir,
    notes: &mut Vec<String>,
) -> CpuSet {
    let IndexDir {
        cpu, level, kind, ..
    } = dir;
    let (cpu, level) = (*cpu, *level);
    // When shared_cpu_list and shared_cpu_map disagree (an AMD Bulldozer
    // L2 listed as "0" with map 0x3; an L3 map edited to conflict with
    // the package), the one the other sharing CPUs confirm is used, the
    // map when both or neither are confirmed (hwloc reads the map).
    let [list, map] = views
        .get(&(cpu, level, kind.clone()))
        .cloned()
        .unwrap_or_default();
    let chosen = match (list, map) {
        (Some(l), Some(m)) if l != m => {
            let confirmed = |s: &CpuSet| agreed(views, online, cpu, (level, kind), s);
            let (use_list, which) = if !confirmed(&m) && confirmed(&l) {
                (true, "the list, which the other CPUs confirm, is used")
            } else {
                (false, "the map is used")
            };
            // Same words for every instance, so reports can group them.
            notes.push(format!(
                "shared_cpu_list and shared_cpu_map disagree: {which}"
            ));
            Some(if use_list { l } else { m })
        }
        (l, m) => m.or(l),
    };
    let shared = match chosen {
        Some(s) => s,
        None => {
            notes.push("shared_cpu_list/shared_cpu_map missing: assumed private to one CPU".into());
            CpuSet::from_ids([cpu])
        }
    };
    let mut shared = shared.intersection(online);
    shared.insert(cpu);
    shared
}

/// The cache instance of `dir` shared by `shared`: its size, line, ways and
/// sets as the kernel reports them (each one missing noted), and each core's
/// share of the size.
fn instance(
    sys: &Sysroot,
    dir: IndexDir,
    shared: CpuSet,
    cores: &[Core],
    mut notes: Vec<String>,
) -> CacheInstance {
    let d = &dir.dir;
    let field = |name: &str, notes: &mut Vec<String>| -> Option<u64> {
        let v = sys.read_u64(&format!("{d}/{name}"));
        if v.is_none() {
            notes.push(format!("{name}: not reported by the kernel"));
        }
        v
    };
    let size_bytes = match sys.read_string(&format!("{d}/size")) {
        Some(s) => {
            let v = parse_size(&s);
            if v.is_none() {
                notes.push(format!("size: unreadable value '{s}'"));
            }
            v
        }
        None => {
            notes.push("size: not reported by the kernel".into());
            None
        }
    };
    let line_bytes = field("coherency_line_size", &mut notes);
    let ways = field("ways_of_associativity", &mut notes);
    let sets = field("number_of_sets", &mut notes);
    let physical_line_partition = sys.read_u64(&format!("{d}/physical_line_partition"));
    let id = sys.read_u64(&format!("{d}/id"));
    let ncores = cores
        .iter()
        .filter(|c| c.cpus.iter().any(|x| shared.contains(x)))
        .count()
        .max(1);
    CacheInstance {
        level: dir.level as u32,
        kind: dir.kind,
        size_bytes,
        line_bytes,
        ways,
        sets,
        physical_line_partition,
        id,
        shared_cpu_list: shared,
        cores: ncores,
        per_core_bytes: size_bytes.map(|s| s / ncores as u64),
        notes,
        size_source: None,
        documented_only: false,
    }
}

/// Gives the instances with no line size the smallest line CTR_EL0 says
/// (`(DminLine, IminLine)` in bytes): IminLine for instruction caches,
/// DminLine for the others, replacing the "not reported" note.
fn fill_ctr_el0_lines(v: &mut [CacheInstance], (dmin, imin): (u64, u64), mark: &str) {
    for c in v.iter_mut().filter(|c| c.line_bytes.is_none()) {
        let (line, which) = if c.kind == "Instruction" {
            (imin, "IminLine: the smallest instruction-cache line")
        } else {
            (
                dmin,
                "DminLine: the smallest line of the data and unified caches",
            )
        };
        c.line_bytes = Some(line);
        c.notes.retain(|n| !n.starts_with("coherency_line_size:"));
        c.notes.push(format!(
            "line size from CTR_EL0{mark} {which} (the kernel reports none)"
        ));
    }
}

/// A level's documented size (KiB), ways and sharing from a knowledge-base
/// entry: (level, type) → (KiB, ways, scope, field name).
fn documented(
    c: &uarch::Core,
    level: u32,
    kind: &str,
) -> Option<(u64, Option<u32>, Option<String>, &'static str)> {
    let k = c.cache.as_ref()?;
    match (level, kind) {
        (1, "Data") => Some((k.l1d_kib?, k.l1d_ways, None, "l1d_kib")),
        (1, "Instruction") => Some((k.l1i_kib?, None, None, "l1i_kib")),
        (2, "Unified") => Some((k.l2_kib?, k.l2_ways, k.l2_scope.clone(), "l2_kib")),
        (3, "Unified") => Some((k.l3_kib?, k.l3_ways, k.l3_scope.clone(), "l3_kib")),
        _ => None,
    }
}

/// Fill what the kernel leaves out from the knowledge-base entry of the core
/// that owns each cache (`core_of(cpu)`): the size (and ways) of a level the
/// kernel lists without them (an arm64 kernel booted with a device tree that
/// describes no caches lists L1 with no size), and a private per-core level
/// the entry documents that the kernel does not list at all (one instance
/// per core, sharing = the core's CPUs). A shared level the kernel does not
/// list is not added (which CPUs share it is not known): the returned notes
/// say so. Every filled figure names its entry and source in `size_source`.
pub fn fill_documented<'a>(
    caches: &mut Vec<CacheInstance>,
    cores: &[Core],
    online: &CpuSet,
    core_of: impl Fn(usize) -> Option<&'a uarch::Core>,
) -> Vec<String> {
    let source = |c: &uarch::Core, field: &str| {
        c.cache
            .as_ref()
            .map(|k| c.field_source(&k.source, &k.sources, field))
            .unwrap_or_default()
    };
    let cite = |c: &uarch::Core, field: &str| {
        format!(
            "documented, not reported by the kernel: {} ({})",
            c.name,
            source(c, field)
        )
    };
    let mut notes = Vec::new();
    for inst in caches.iter_mut().filter(|i| i.size_bytes.is_none()) {
        let Some(c) = inst.shared_cpu_list.first().and_then(&core_of) else {
            continue;
        };
        let Some((kib, ways, _, field)) = documented(c, inst.level, &inst.kind) else {
            continue;
        };
        inst.size_bytes = Some(kib << 10);
        inst.per_core_bytes = Some((kib << 10) / inst.cores.max(1) as u64);
        if inst.ways.is_none() {
            inst.ways = ways.map(u64::from);
        }
        inst.size_source = Some(cite(c, field));
    }
    // Levels the entry documents and the kernel does not list.
    let listed = |level: u32| caches.iter().any(|i| i.level == level);
    let mut added = Vec::new();
    for level in [2u32, 3] {
        if listed(level) {
            continue;
        }
        let mut shared_note = None;
        for core in cores {
            let cpus = core.cpus.intersection(online);
            let Some(first) = cpus.first() else { continue };
            let Some(c) = core_of(first) else { continue };
            let Some((kib, ways, scope, field)) = documented(c, level, "Unified") else {
                continue;
            };
            if scope.as_deref() != Some("per core") {
                shared_note = Some(format!(
                    "L{level}: {} documents {} KiB per instance ({}; {}), but the kernel lists no L{level} and which CPUs share it is not known: not used",
                    c.name,
                    kib,
                    scope.as_deref().unwrap_or("sharing not stated"),
                    source(c, field)
                ));
                continue;
            }
            added.push(CacheInstance {
                level,
                kind: "Unified".into(),
                size_bytes: Some(kib << 10),
                ways: ways.map(u64::from),
                shared_cpu_list: cpus,
                cores: 1,
                per_core_bytes: Some(kib << 10),
                notes: vec!["not listed by the kernel (cpuN/cache has no such index)".into()],
                size_source: Some(cite(c, field)),
                documented_only: true,
                ..Default::default()
            });
        }
        notes.extend(shared_note);
    }
    caches.extend(added);
    sort(caches);
    notes
}

/// By level, then data/instruction/unified, then first CPU.
fn sort(v: &mut [CacheInstance]) {
    v.sort_by_key(|c| (c.level, kind_order(&c.kind), c.shared_cpu_list.first()));
}

fn kind_order(k: &str) -> u8 {
    match k {
        "Data" => 0,
        "Instruction" => 1,
        "Unified" => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("1024K"), Some(1 << 20));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }
}

//! Cache instances: level, type, size, line, ways, and which CPUs share each.
//! Read from `/sys/devices/system/cpu/cpuN/cache/indexM` of every online CPU and
//! deduplicated: one instance per (level, type, set of CPUs sharing it).

use super::topology::Core;
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

/// Read all cache instances seen by the online CPUs. Returns the instances
/// (sorted by level, type, first CPU) and, when there are none, why.
pub fn read(
    sys: &Sysroot,
    online: &CpuSet,
    cores: &[Core],
) -> (Vec<CacheInstance>, Option<String>) {
    let mut found: BTreeMap<(u32, String, CpuSet), CacheInstance> = BTreeMap::new();
    let mut any_dir = false;
    // What each CPU's shared_cpu_list and shared_cpu_map say, per (level, type):
    // both come from one kernel mask, but recorded trees show them disagreeing.
    let mut views: BTreeMap<(usize, u64, String), [Option<CpuSet>; 2]> = BTreeMap::new();
    // Every cache index directory of the online CPUs: (cpu, dir, level, type).
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
            dirs.push((cpu, d, level, kind));
        }
    }
    // A sharing set is believable when every other online CPU in it says the same.
    let agreed = |cpu: usize, level: u64, kind: &str, s: &CpuSet| -> bool {
        s.iter()
            .filter(|y| *y != cpu && online.contains(*y))
            .all(|y| {
                views
                    .get(&(y, level, kind.to_string()))
                    .is_some_and(|v| v.iter().flatten().any(|o| o == s))
            })
    };
    for (cpu, d, level, kind) in dirs {
        let mut notes = Vec::new();
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
                let (use_list, which) =
                    if !agreed(cpu, level, &kind, &m) && agreed(cpu, level, &kind, &l) {
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
                notes.push(
                    "shared_cpu_list/shared_cpu_map missing: assumed private to one CPU".into(),
                );
                CpuSet::from_ids([cpu])
            }
        };
        let mut shared = shared.intersection(online);
        shared.insert(cpu);
        let key = (level as u32, kind.clone(), shared.clone());
        if found.contains_key(&key) {
            continue;
        }
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
        found.insert(
            key,
            CacheInstance {
                level: level as u32,
                kind,
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
            },
        );
    }
    let mut v: Vec<CacheInstance> = found.into_values().collect();
    v.sort_by(|a, b| {
        (a.level, kind_order(&a.kind), a.shared_cpu_list.first()).cmp(&(
            b.level,
            kind_order(&b.kind),
            b.shared_cpu_list.first(),
        ))
    });
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

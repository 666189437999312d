//! Memory per NUMA node as the kernel accounts it (seed 002's diagnosis of a
//! process whose memory went to a remote node because page cache filled its
//! own): free, page cache and anonymous memory per node
//! (`/sys/devices/system/node/nodeN/meminfo`), the zone watermarks per zone
//! per node (`/proc/zoneinfo`: min/low/high), the reclaim knobs
//! (`vm.min_free_kbytes`, `vm.min_unmapped_ratio`, `vm.zone_reclaim_mode`
//! with its bits decoded) and the per-node allocation counters since boot
//! (`nodeN/numastat`: numa_hit, numa_miss, numa_foreign, interleave_hit,
//! local_node, other_node); then advice where page cache crowds a node or the
//! reclaim settings make remote allocation likely. Read only: every figure is
//! what the files say now (counters since boot), never measured here.

use super::identity::{unavailable, Unavailable};
use crate::base::fmt::fmt_bytes;
use crate::base::meminfo;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

const NODE_DIR: &str = "/sys/devices/system/node";

/// One zone of one node in /proc/zoneinfo (page counts).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Zone {
    /// `DMA`, `DMA32`, `Normal`, `Movable`, `Device`.
    pub name: String,
    pub free_pages: Option<u64>,
    pub min_pages: Option<u64>,
    pub low_pages: Option<u64>,
    pub high_pages: Option<u64>,
    /// Pages the buddy allocator manages in the zone (`managed`).
    pub managed_pages: Option<u64>,
}

/// Per-node allocation counters (`nodeN/numastat`, pages since boot).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct NumaStat {
    /// Allocated on this node as intended.
    pub numa_hit: Option<u64>,
    /// Allocated on this node although the process preferred another.
    pub numa_miss: Option<u64>,
    /// Intended for this node, allocated on another.
    pub numa_foreign: Option<u64>,
    /// Interleave policy allocations that landed on this node as intended.
    pub interleave_hit: Option<u64>,
    /// Allocated here by a process running on this node.
    pub local_node: Option<u64>,
    /// Allocated here by a process running on another node.
    pub other_node: Option<u64>,
}

impl NumaStat {
    /// The counters by their kernel names, in the kernel's order.
    pub fn fields(&self) -> [(&'static str, Option<u64>); 6] {
        [
            ("numa_hit", self.numa_hit),
            ("numa_miss", self.numa_miss),
            ("numa_foreign", self.numa_foreign),
            ("interleave_hit", self.interleave_hit),
            ("local_node", self.local_node),
            ("other_node", self.other_node),
        ]
    }

    /// Parse a numastat file (`numa_hit 376346` per line).
    pub fn parse(text: &str) -> NumaStat {
        let get = |k: &str| {
            text.lines().find_map(|l| {
                let mut it = l.split_whitespace();
                (it.next()? == k).then(|| it.next()?.parse().ok())?
            })
        };
        NumaStat {
            numa_hit: get("numa_hit"),
            numa_miss: get("numa_miss"),
            numa_foreign: get("numa_foreign"),
            interleave_hit: get("interleave_hit"),
            local_node: get("local_node"),
            other_node: get("other_node"),
        }
    }
}

/// One node's memory.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeMemory {
    pub node: usize,
    pub total_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// Page cache (`FilePages`: file-backed pages, including tmpfs/shmem).
    pub file_bytes: Option<u64>,
    /// Anonymous memory (`AnonPages`).
    pub anon_bytes: Option<u64>,
    /// File pages mapped into some process (`Mapped`).
    pub mapped_bytes: Option<u64>,
    /// `Active(file)` + `Inactive(file)` − `Mapped`: the unmapped page cache
    /// zone reclaim may drop (what `min_unmapped_ratio` is compared with).
    pub unmapped_file_bytes: Option<u64>,
    pub zones: Vec<Zone>,
    pub numastat: Option<NumaStat>,
    pub unavailable: Unavailable,
}

impl NodeMemory {
    /// Sum of a watermark over the node's zones, in pages (None when no zone has it).
    pub fn watermark_pages(&self, which: &str) -> Option<u64> {
        let vals: Vec<u64> = self
            .zones
            .iter()
            .filter_map(|z| match which {
                "min" => z.min_pages,
                "low" => z.low_pages,
                "high" => z.high_pages,
                _ => z.free_pages,
            })
            .collect();
        (!vals.is_empty()).then(|| vals.iter().sum())
    }
}

/// `vm.zone_reclaim_mode` decoded.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ZoneReclaim {
    pub value: u32,
    /// The bits set, by the kernel's names (`RECLAIM_ZONE` 1, `RECLAIM_WRITE`
    /// 2, `RECLAIM_UNMAP` 4).
    pub bits: Vec<String>,
    /// What the value does, one line.
    pub meaning: String,
}

impl ZoneReclaim {
    pub fn decode(value: u32) -> ZoneReclaim {
        let mut bits = Vec::new();
        if value & 1 != 0 {
            bits.push(
                "1 RECLAIM_ZONE: reclaim on the local node before allocating remotely".into(),
            );
        }
        if value & 2 != 0 {
            bits.push("2 RECLAIM_WRITE: write dirty pages out to reclaim".into());
        }
        if value & 4 != 0 {
            bits.push("4 RECLAIM_UNMAP: unmap (swap) pages to reclaim".into());
        }
        if value & !7 != 0 {
            bits.push(format!(
                "{:#x}: bits the kernel does not define",
                value & !7
            ));
        }
        let meaning = if value & 1 == 0 {
            if value == 0 {
                "off: a node that is full allocates from the other nodes (the default since Linux 3.16)"
                    .into()
            } else {
                "zone reclaim off (bit 1 clear): the write/unmap bits take effect only with bit 1"
                    .into()
            }
        } else {
            let how = match value & 6 {
                0 => "dropping clean unmapped page cache only",
                2 => "also writing dirty pages out",
                4 => "also unmapping and swapping pages",
                _ => "also writing dirty pages out and swapping",
            };
            format!("on: a full node first reclaims its own memory ({how}) before allocating remotely: allocation stalls in reclaim")
        };
        ZoneReclaim {
            value,
            bits,
            meaning,
        }
    }
}

/// Memory of every node, the reclaim knobs and the advice.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NumaMemory {
    pub nodes: Vec<NodeMemory>,
    pub zone_reclaim_mode: Option<ZoneReclaim>,
    /// `vm.min_free_kbytes`: the reserve the watermarks derive from.
    pub min_free_kbytes: Option<u64>,
    /// `vm.min_unmapped_ratio` (%): zone reclaim runs only when a zone's
    /// unmapped page cache exceeds this share of it.
    pub min_unmapped_ratio_pct: Option<u64>,
    /// `vm.watermark_scale_factor` (in 1/10000 of memory).
    pub watermark_scale_factor: Option<u64>,
    /// Bytes per page for the zoneinfo counts, and where it came from.
    pub page_bytes: Option<u64>,
    pub page_bytes_source: Option<String>,
    /// Where page cache crowds a node or reclaim makes remote allocation likely.
    pub advice: Vec<String>,
    pub unavailable: Unavailable,
}

impl NumaMemory {
    /// True when nothing beyond MemTotal/MemFree is known (recorded trees
    /// without these files): the section has nothing to say.
    pub fn is_empty(&self) -> bool {
        self.zone_reclaim_mode.is_none()
            && self.min_free_kbytes.is_none()
            && self
                .nodes
                .iter()
                .all(|n| n.file_bytes.is_none() && n.numastat.is_none() && n.zones.is_empty())
    }

    /// Bytes of `pages` pages, when the page size is known.
    pub fn pages_bytes(&self, pages: u64) -> Option<u64> {
        self.page_bytes.map(|b| pages * b)
    }
}

/// Parse /proc/zoneinfo into (node, zone) entries.
pub fn parse_zoneinfo(text: &str) -> Vec<(usize, Zone)> {
    let mut out: Vec<(usize, Zone)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Node ") {
            // "Node 0, zone   Normal"
            let Some((n, z)) = rest.split_once(',') else {
                continue;
            };
            let Ok(node) = n.trim().parse::<usize>() else {
                continue;
            };
            let name = z
                .trim()
                .strip_prefix("zone")
                .unwrap_or(z)
                .trim()
                .to_string();
            out.push((
                node,
                Zone {
                    name,
                    ..Zone::default()
                },
            ));
            continue;
        }
        let Some((_, zone)) = out.last_mut() else {
            continue;
        };
        let mut it = t.split_whitespace();
        let (k, v) = match (it.next(), it.next(), it.next()) {
            (Some("pages"), Some("free"), Some(v)) => ("free", v),
            (Some(k), Some(v), None) => (k, v),
            _ => continue,
        };
        let Ok(v) = v.parse::<u64>() else { continue };
        match k {
            "free" if zone.free_pages.is_none() => zone.free_pages = Some(v),
            "min" if zone.min_pages.is_none() => zone.min_pages = Some(v),
            "low" if zone.low_pages.is_none() => zone.low_pages = Some(v),
            "high" if zone.high_pages.is_none() => zone.high_pages = Some(v),
            "managed" if zone.managed_pages.is_none() => zone.managed_pages = Some(v),
            _ => {}
        }
    }
    out
}

fn read_knob(sys: &Sysroot, mm: &mut NumaMemory, file: &str, key: &str) -> Option<u64> {
    let v = sys.read_u64(file);
    if v.is_none() {
        unavailable(
            &mut mm.unavailable,
            key,
            if sys.exists(file) {
                format!("{file} is not a number")
            } else if sys.is_live() {
                format!("{file} is absent (kernel without NUMA or without this knob)")
            } else {
                format!("not recorded under this root ({file})")
            },
        );
    }
    v
}

/// Read the NUMA memory facts under `sys` for the nodes `ids`.
pub fn read(sys: &Sysroot, ids: &[usize]) -> NumaMemory {
    let mut mm = NumaMemory::default();
    read_vm_knobs(sys, &mut mm);
    let zones = match sys.read_raw("/proc/zoneinfo") {
        Some(t) => parse_zoneinfo(&t),
        None => {
            unavailable(
                &mut mm.unavailable,
                "zoneinfo",
                if sys.is_live() {
                    "/proc/zoneinfo is not readable".to_string()
                } else {
                    "not recorded under this root (/proc/zoneinfo)".to_string()
                },
            );
            Vec::new()
        }
    };
    for &id in ids {
        mm.nodes.push(read_node(sys, id, &zones));
    }
    page_size(sys, &mut mm);
    if mm.page_bytes.is_none() && !zones.is_empty() {
        unavailable(
            &mut mm.unavailable,
            "page_bytes",
            "page size of the recorded kernel not known: watermarks are given in pages",
        );
    }
    mm.advice = advice(&mm);
    mm
}

/// The reclaim and watermark knobs of /proc/sys/vm (each one missing noted).
fn read_vm_knobs(sys: &Sysroot, mm: &mut NumaMemory) {
    mm.zone_reclaim_mode = read_knob(
        sys,
        mm,
        "/proc/sys/vm/zone_reclaim_mode",
        "zone_reclaim_mode",
    )
    .map(|v| ZoneReclaim::decode(v as u32));
    mm.min_free_kbytes = read_knob(sys, mm, "/proc/sys/vm/min_free_kbytes", "min_free_kbytes");
    mm.min_unmapped_ratio_pct = read_knob(
        sys,
        mm,
        "/proc/sys/vm/min_unmapped_ratio",
        "min_unmapped_ratio",
    );
    mm.watermark_scale_factor = read_knob(
        sys,
        mm,
        "/proc/sys/vm/watermark_scale_factor",
        "watermark_scale_factor",
    );
}

/// Node `id`'s memory: its meminfo, numastat, and its zones among `zones`.
fn read_node(sys: &Sysroot, id: usize, zones: &[(usize, Zone)]) -> NodeMemory {
    let d = format!("{NODE_DIR}/node{id}");
    let mut n = NodeMemory {
        node: id,
        ..NodeMemory::default()
    };
    match sys.read_raw(&format!("{d}/meminfo")) {
        Some(t) => node_meminfo(&mut n, &d, &t),
        None => unavailable(
            &mut n.unavailable,
            "meminfo",
            format!("{d}/meminfo is missing"),
        ),
    }
    match sys.read_raw(&format!("{d}/numastat")) {
        Some(t) => n.numastat = Some(NumaStat::parse(&t)),
        None => unavailable(
            &mut n.unavailable,
            "numastat",
            if sys.is_live() {
                format!("{d}/numastat is missing")
            } else {
                format!("not recorded under this root ({d}/numastat)")
            },
        ),
    }
    n.zones = zones
        .iter()
        .filter(|(node, _)| *node == id)
        .map(|(_, z)| z.clone())
        .collect();
    n
}

/// The figures of a node's meminfo `t` (read from directory `d`): total,
/// free, file, anonymous, mapped and unmapped file memory, noting a missing
/// FilePages or AnonPages.
fn node_meminfo(n: &mut NodeMemory, d: &str, t: &str) {
    n.total_bytes = meminfo::field(t, "MemTotal");
    n.free_bytes = meminfo::field(t, "MemFree");
    n.file_bytes = meminfo::field(t, "FilePages");
    n.anon_bytes = meminfo::field(t, "AnonPages");
    n.mapped_bytes = meminfo::field(t, "Mapped");
    n.unmapped_file_bytes = match (
        meminfo::field(t, "Active(file)"),
        meminfo::field(t, "Inactive(file)"),
        n.mapped_bytes,
    ) {
        (Some(a), Some(i), Some(m)) => Some((a + i).saturating_sub(m)),
        _ => None,
    };
    for (k, v) in [("file_bytes", n.file_bytes), ("anon_bytes", n.anon_bytes)] {
        if v.is_none() {
            unavailable(
                &mut n.unavailable,
                k,
                format!(
                    "{d}/meminfo has no {}",
                    if k == "file_bytes" {
                        "FilePages"
                    } else {
                        "AnonPages"
                    }
                ),
            );
        }
    }
}

/// Page size for the zone counts: the running kernel's; for a recorded
/// tree, MemFree (kB) over the zones' free pages, rounded to a power of two
/// (left unknown when far from one).
fn page_size(sys: &Sysroot, mm: &mut NumaMemory) {
    if sys.is_live() {
        // SAFETY: sysconf has no memory-safety preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            mm.page_bytes = Some(p as u64);
            mm.page_bytes_source = Some("sysconf(_SC_PAGESIZE) of the running kernel".into());
        }
    } else if let Some((free, pages)) = mm.nodes.iter().find_map(|n| {
        let f = n.free_bytes?;
        let p = n.watermark_pages("free")?;
        (p > 0).then_some((f, p))
    }) {
        let raw = free as f64 / pages as f64;
        let p2 = (raw.log2().round()).exp2() as u64;
        if p2 >= 4096 && (raw / p2 as f64 - 1.0).abs() < 0.2 {
            mm.page_bytes = Some(p2);
            mm.page_bytes_source = Some(format!(
                "inferred: node MemFree over the zones' free pages = {raw:.0} bytes, nearest power of two"
            ));
        }
    }
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64 * 100.0
    }
}

/// Advice from the figures read: page cache crowding a node, reclaim
/// settings that send allocations to remote nodes, allocations that already
/// went elsewhere (numa_foreign). Each cites its figures and files.
pub fn advice(mm: &NumaMemory) -> Vec<String> {
    let mut out = Vec::new();
    let many = mm.nodes.len() > 1;
    let zr = mm.zone_reclaim_mode.as_ref().map(|z| z.value);
    for n in &mm.nodes {
        node_advice(n, mm.page_bytes, many, zr, &mut out);
    }
    // Zone reclaim on, yet the unmapped page cache is below min_unmapped_ratio:
    // zone reclaim finds nothing to drop and the allocation goes remote anyway.
    if let (Some(z), Some(ratio)) = (zr, mm.min_unmapped_ratio_pct) {
        zone_reclaim_advice(mm, z, ratio, many, &mut out);
    }
    out
}

/// `advice` for node `n` (`page_bytes`: the page size of the zone counts;
/// `many`: more than one node; `zr`: zone_reclaim_mode).
fn node_advice(
    n: &NodeMemory,
    page_bytes: Option<u64>,
    many: bool,
    zr: Option<u32>,
    out: &mut Vec<String>,
) {
    let (Some(total), Some(free)) = (n.total_bytes, n.free_bytes) else {
        return;
    };
    if total == 0 {
        return;
    }
    // Page cache crowding the node (seed 002: N6's memory taken by page
    // cache, the bound process's new memory went to N2).
    if let Some(file) = n.file_bytes {
        if pct(file, total) >= 50.0 && pct(free, total) < 15.0 {
            let then = match zr {
                Some(0) if many => "with zone_reclaim_mode=0 new memory of processes bound here comes from other nodes (remote)",
                Some(z) if z & 1 != 0 => "with zone reclaim on, allocations here stall while the kernel drops page cache",
                _ => "new allocations here compete with the page cache",
            };
            out.push(format!(
                "node {}: page cache holds {:.0}% of its memory ({} of {}) and {:.0}% is free: {then} — seed 002's N6 case; drop clean caches (echo 1 > /proc/sys/vm/drop_caches), place the service on a node with free memory, or start it before the cache grows",
                n.node,
                pct(file, total),
                fmt_bytes(file),
                fmt_bytes(total),
                pct(free, total)
            ));
        }
    }
    // Free memory at the watermarks: the next allocations go elsewhere
    // (zone reclaim off) or stall in reclaim (on).
    if let (Some(high), Some(pb)) = (n.watermark_pages("high"), page_bytes) {
        let high_b = high * pb;
        if many && high_b > 0 && free <= high_b.saturating_mul(2) {
            out.push(format!(
                "node {}: {} free is within twice its high watermark ({} summed over its zones, /proc/zoneinfo): {}",
                n.node,
                fmt_bytes(free),
                fmt_bytes(high_b),
                match zr {
                    Some(z) if z & 1 != 0 => "zone reclaim will reclaim locally first (stalls)",
                    _ => "allocations for this node are likely to be served by another node",
                }
            ));
        }
    }
    // Allocations meant for this node that went to another (since boot).
    if let Some(s) = &n.numastat {
        if let (Some(hit), Some(foreign)) = (s.numa_hit, s.numa_foreign) {
            if hit + foreign > 0 && pct(foreign, hit + foreign) >= 1.0 {
                out.push(format!(
                    "node {}: {:.1}% of the allocations meant for it went to another node since boot (numa_foreign {foreign} vs numa_hit {hit}, {NODE_DIR}/node{}/numastat): it ran short of free memory",
                    n.node,
                    pct(foreign, hit + foreign),
                    n.node
                ));
            }
        }
    }
}

/// `advice` when zone reclaim mode `z` is on and there is more than one
/// node: nodes whose unmapped page cache is below `ratio`%, and the mode itself.
fn zone_reclaim_advice(mm: &NumaMemory, z: u32, ratio: u64, many: bool, out: &mut Vec<String>) {
    if z & 1 != 0 && many {
        for n in &mm.nodes {
            if let (Some(u), Some(t)) = (n.unmapped_file_bytes, n.total_bytes) {
                if t > 0 && pct(u, t) < ratio as f64 {
                    out.push(format!(
                        "node {}: unmapped page cache is {:.1}% of the node, below min_unmapped_ratio {ratio}%: zone reclaim skips it and allocations go remote anyway",
                        n.node,
                        pct(u, t)
                    ));
                }
            }
        }
    }
    if z & 1 != 0 && many {
        out.push(format!(
            "zone_reclaim_mode={z}: a full node reclaims its own memory before allocating remotely; good for workloads partitioned per node, bad where page cache matters (file servers, databases on buffered I/O) — seed 002 and the kernel's vm.rst; 0 is the default since Linux 3.16"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoneinfo_watermarks() {
        // seed 002's excerpt (LinkedIn's article), with a DMA zone before it.
        let t = "Node 0, zone      DMA\n  pages free     3975\n        min      5\n        low      6\n        high     7\n        spanned  4095\n        present  3998\n        managed  3975\nNode 1, zone   Normal\n  pages free     17353\n        min      11284\n        low      14105\n        high     16926\n        scanned  0\n        spanned  6291456\n        present  6205440\n";
        let z = parse_zoneinfo(t);
        assert_eq!(z.len(), 2);
        assert_eq!(z[1].0, 1);
        assert_eq!(z[1].1.name, "Normal");
        assert_eq!(z[1].1.free_pages, Some(17353));
        assert_eq!(
            (z[1].1.min_pages, z[1].1.low_pages, z[1].1.high_pages),
            (Some(11284), Some(14105), Some(16926))
        );
        assert_eq!(z[0].1.managed_pages, Some(3975));
    }

    #[test]
    fn numastat_and_reclaim_bits() {
        // seed 002's numastat of the Xeon E5-2682 v4, node 0.
        let s = NumaStat::parse("numa_hit 129600200\nnuma_miss 0\nnuma_foreign 0\ninterleave_hit 108648\nlocal_node 129576548\nother_node 23652\n");
        assert_eq!(s.numa_hit, Some(129600200));
        assert_eq!(s.other_node, Some(23652));
        assert_eq!(ZoneReclaim::decode(0).bits.len(), 0);
        assert!(ZoneReclaim::decode(0).meaning.starts_with("off"));
        let z = ZoneReclaim::decode(3);
        assert_eq!(z.bits.len(), 2);
        assert!(z.meaning.starts_with("on"));
        assert!(ZoneReclaim::decode(2).meaning.contains("bit 1 clear"));
    }

    #[test]
    fn page_cache_crowding_is_advised() {
        let node = |id, total: u64, free: u64, file: u64| NodeMemory {
            node: id,
            total_bytes: Some(total),
            free_bytes: Some(free),
            file_bytes: Some(file),
            ..NodeMemory::default()
        };
        let g = 1u64 << 30;
        let mm = NumaMemory {
            nodes: vec![node(2, 32 * g, 20 * g, 2 * g), node(6, 32 * g, g, 28 * g)],
            zone_reclaim_mode: Some(ZoneReclaim::decode(0)),
            ..NumaMemory::default()
        };
        let a = advice(&mm);
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a[0].starts_with("node 6: page cache holds 88%"), "{a:?}");
        assert!(a[0].contains("other nodes"), "{a:?}");
    }
}

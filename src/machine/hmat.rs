//! The raw ACPI HMAT table (`/sys/firmware/acpi/tables/HMAT`, root only):
//! every initiator–target pair the firmware declares, where Linux's sysfs
//! (`nodeN/accessC/initiators/`) keeps each target's best initiators only
//! (hwloc issues #542, #586). Parsed from the ACPI 6.3+ layout: the System
//! Locality Latency and Bandwidth Information structures (type 1). Reading
//! is all this file does.
//!
//! Pairs are named by the firmware's proximity domains (PXM). Linux numbers
//! its nodes in the order the SRAT lists the domains, so node = PXM on most
//! machines (QEMU, every two-socket server seen so far); the JSON keeps the
//! PXM and says so.

use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// Where the table is.
pub const HMAT_PATH: &str = "/sys/firmware/acpi/tables/HMAT";

/// A table larger than this is not an HMAT any firmware writes.
const MAX_BYTES: u64 = 1 << 20;

/// One declared figure between an initiator and a target domain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub initiator_pxm: u32,
    pub target_pxm: u32,
    /// `memory`, or the memory-side cache level in front of it
    /// (`cache1`..`cache3`).
    pub hierarchy: String,
    /// `access_latency`, `read_latency`, `write_latency` (ns) or
    /// `access_bandwidth`, `read_bandwidth`, `write_bandwidth` (MB/s).
    pub data_type: String,
    /// Null for "unreachable" (0xFFFF).
    pub value: Option<f64>,
}

impl Pair {
    pub fn is_latency(&self) -> bool {
        self.data_type.ends_with("_latency")
    }
    /// A read figure (access figures are both read and write).
    pub fn is_read(&self) -> bool {
        self.data_type.starts_with("access_") || self.data_type.starts_with("read_")
    }
}

/// What the raw table gave, or why it was not read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HmatTable {
    /// True when the table was read and parsed.
    pub read: bool,
    pub bytes: usize,
    pub pairs: Vec<Pair>,
    /// Why not read (absent, root needed, malformed), or what was skipped.
    pub note: Option<String>,
}

/// Read and parse the table under `sys`.
pub fn read(sys: &Sysroot) -> HmatTable {
    match sys.read_bytes_capped(HMAT_PATH, MAX_BYTES) {
        Ok(b) => match parse(&b) {
            Ok(pairs) => HmatTable {
                read: true,
                bytes: b.len(),
                pairs,
                note: None,
            },
            Err(why) => HmatTable {
                bytes: b.len(),
                note: Some(format!("{HMAT_PATH}: {why}")),
                ..HmatTable::default()
            },
        },
        Err(e) => HmatTable {
            note: Some(match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("{HMAT_PATH} is absent: the firmware has no HMAT")
                }
                std::io::ErrorKind::PermissionDenied => format!(
                    "{HMAT_PATH} is readable by root only: each target's best initiators come from sysfs"
                ),
                _ => format!("{HMAT_PATH}: {e}"),
            }),
            ..HmatTable::default()
        },
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The pairs of every type-1 structure of a whole HMAT table.
pub fn parse(b: &[u8]) -> Result<Vec<Pair>, String> {
    if b.get(0..4) != Some(b"HMAT") {
        return Err("not an HMAT table (signature)".into());
    }
    let len = u32_at(b, 4).ok_or("shorter than its header")? as usize;
    if len > b.len() || len < 40 {
        return Err(format!(
            "length {len} in the header, {} bytes read",
            b.len()
        ));
    }
    let mut out = Vec::new();
    // The ACPI header (36 bytes) and 4 reserved bytes, then structures.
    let mut at = 40;
    while at + 8 <= len {
        let kind = u16_at(b, at).ok_or("truncated structure")?;
        let slen = u32_at(b, at + 4).ok_or("truncated structure")? as usize;
        if slen < 8 || at + slen > len {
            return Err(format!("structure at byte {at} has length {slen}"));
        }
        if kind == 1 {
            out.extend(locality(&b[at..at + slen])?);
        }
        at += slen;
    }
    Ok(out)
}

/// One System Locality Latency and Bandwidth Information structure.
fn locality(s: &[u8]) -> Result<Vec<Pair>, String> {
    let short = || "a latency/bandwidth structure shorter than it says".to_string();
    let flags = *s.get(8).ok_or_else(short)?;
    let data_type = *s.get(9).ok_or_else(short)?;
    let ni = u32_at(s, 12).ok_or_else(short)? as usize;
    let nt = u32_at(s, 16).ok_or_else(short)? as usize;
    let base = u64_at(s, 24).ok_or_else(short)?;
    let lists = 32usize;
    let entries = lists + 4 * (ni + nt);
    if ni > 4096 || nt > 4096 || entries + 2 * ni * nt > s.len() {
        return Err(short());
    }
    let hierarchy = match flags & 0x0f {
        0 => "memory".to_string(),
        l @ 1..=3 => format!("cache{l}"),
        l => format!("hierarchy{l}"),
    };
    let (name, latency) = match data_type {
        0 => ("access_latency", true),
        1 => ("read_latency", true),
        2 => ("write_latency", true),
        3 => ("access_bandwidth", false),
        4 => ("read_bandwidth", false),
        5 => ("write_bandwidth", false),
        _ => return Ok(Vec::new()),
    };
    let mut out = Vec::new();
    for i in 0..ni {
        for t in 0..nt {
            let e = u16_at(s, entries + 2 * (i * nt + t)).ok_or_else(short)?;
            if e == 0 {
                continue; // not given
            }
            let raw = e as f64 * base as f64;
            out.push(Pair {
                initiator_pxm: u32_at(s, lists + 4 * i).ok_or_else(short)?,
                target_pxm: u32_at(s, lists + 4 * (ni + t)).ok_or_else(short)?,
                hierarchy: hierarchy.clone(),
                data_type: name.to_string(),
                // Latency: base unit in picoseconds; bandwidth: MB/s.
                value: (e != 0xffff).then_some(if latency { raw / 1000.0 } else { raw }),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An HMAT with one latency structure: initiators {0, 1} × targets
    /// {0, 1, 2}, base 1000 ps, and one bandwidth structure (base 1 MB/s).
    fn table() -> Vec<u8> {
        let mut b = b"HMAT".to_vec();
        b.extend([0u8; 36]); // length patched below, rest of the header, reserved
        let mut st = |flags: u8, dt: u8, base: u64, ini: &[u32], tgt: &[u32], e: &[u16]| {
            let len = 32 + 4 * (ini.len() + tgt.len()) + 2 * e.len();
            let mut s = vec![1, 0, 0, 0];
            s.extend((len as u32).to_le_bytes());
            s.extend([flags, dt, 0, 0]);
            s.extend((ini.len() as u32).to_le_bytes());
            s.extend((tgt.len() as u32).to_le_bytes());
            s.extend([0u8; 4]);
            s.extend(base.to_le_bytes());
            ini.iter()
                .chain(tgt)
                .for_each(|p| s.extend(p.to_le_bytes()));
            e.iter().for_each(|v| s.extend(v.to_le_bytes()));
            b.extend(s);
        };
        st(
            0,
            0,
            1000,
            &[0, 1],
            &[0, 1, 2],
            &[10, 20, 250, 20, 10, 0xffff],
        );
        st(0, 3, 1, &[0], &[2], &[61440]);
        let n = b.len() as u32;
        b[4..8].copy_from_slice(&n.to_le_bytes());
        b
    }

    #[test]
    fn every_pair_of_every_structure() {
        let p = parse(&table()).unwrap();
        assert_eq!(p.len(), 7);
        let lat = |i, t| {
            p.iter()
                .find(|x| x.initiator_pxm == i && x.target_pxm == t && x.is_latency())
                .map(|x| x.value)
        };
        assert_eq!(lat(0, 2), Some(Some(250.0)));
        assert_eq!(lat(1, 0), Some(Some(20.0)));
        // 0xFFFF: unreachable.
        assert_eq!(lat(1, 2), Some(None));
        let bw = p.iter().find(|x| !x.is_latency()).unwrap();
        assert_eq!(
            (bw.initiator_pxm, bw.target_pxm, bw.value),
            (0, 2, Some(61440.0))
        );
        assert!(bw.is_read() && bw.hierarchy == "memory");
    }

    #[test]
    fn malformed_tables_are_refused_with_why() {
        let t = table();
        assert!(parse(b"SRAT").unwrap_err().contains("signature"));
        assert!(parse(&t[..50]).unwrap_err().contains("length"));
        let mut bad = t.clone();
        bad[44..48].copy_from_slice(&9999u32.to_le_bytes());
        assert!(parse(&bad).is_err());
        // Counts that overflow the structure.
        let mut bad = t;
        bad[52..56].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse(&bad).is_err());
    }
}

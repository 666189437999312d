//! PMUs as the kernel describes them under /sys/bus/event_source/devices:
//! each has a `type` (the `perf_event_attr.type` to use), `format/` files
//! mapping term names to bit ranges of config/config1/config2, and `events/`
//! files holding named encodings (`event=0x3c,umask=0x00,any=1`) with
//! optional `.scale` and `.unit` companions.

use crate::base::Sysroot;
use std::collections::BTreeMap;

pub const DEVICES: &str = "/sys/bus/event_source/devices";

/// The encoding a sysfs event resolves to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resolved {
    pub type_: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    pub scale: f64,
    pub unit: Option<String>,
    /// Display name given with a `name=` term.
    pub name: Option<String>,
    /// The sysfs event name when the terms named one (`cpu/topdown-retiring/`).
    pub event_name: Option<String>,
}

/// Which config word a format field lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    Config,
    Config1,
    Config2,
}

/// A format field: its config word and bit ranges (low bits of the value go
/// to the first range).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub word: Word,
    pub ranges: Vec<(u32, u32)>,
}

/// Names of the registered PMUs.
pub fn pmus(sys: &Sysroot) -> Vec<String> {
    sys.list_dir(DEVICES)
}

/// True for PMUs that count the CPU core (x86 `cpu`, hybrid `cpu_core` /
/// `cpu_atom`, ARM `armv8_*`/`armv9_*`, s390 `cpum_cf`).
pub fn is_core_pmu(name: &str) -> bool {
    matches!(name, "cpu" | "cpu_core" | "cpu_atom" | "cpum_cf")
        || name.starts_with("armv8_")
        || name.starts_with("armv9_")
        || name.starts_with("arm_cortex")
        || name.starts_with("arm_neoverse")
}

/// The core PMUs present.
pub fn core_pmus(sys: &Sysroot) -> Vec<String> {
    pmus(sys).into_iter().filter(|p| is_core_pmu(p)).collect()
}

/// `perf_event_attr.type` of a PMU.
pub fn pmu_type(sys: &Sysroot, pmu: &str) -> Option<u32> {
    sys.read_string(&format!("{DEVICES}/{pmu}/type"))?
        .parse()
        .ok()
}

/// Parse a format file: `config:0-7,32-35`, `config1:0-15`, `config:21`.
pub fn parse_format(s: &str) -> Result<Field, String> {
    let s = s.trim();
    let (w, bits) = s
        .split_once(':')
        .ok_or_else(|| format!("bad format '{s}'"))?;
    let word = match w {
        "config" => Word::Config,
        "config1" => Word::Config1,
        "config2" => Word::Config2,
        _ => return Err(format!("unsupported format word '{w}'")),
    };
    let mut ranges = Vec::new();
    for part in bits.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let lo: u32 = lo.parse().map_err(|_| format!("bad format '{s}'"))?;
        let hi: u32 = hi.parse().map_err(|_| format!("bad format '{s}'"))?;
        if hi < lo || hi > 63 {
            return Err(format!("bad format '{s}'"));
        }
        ranges.push((lo, hi));
    }
    if ranges.is_empty() {
        return Err(format!("bad format '{s}'"));
    }
    Ok(Field { word, ranges })
}

/// Place `value` into the field's bits; error when it does not fit.
pub fn apply_field(field: &Field, value: u64, words: &mut [u64; 3]) -> Result<(), String> {
    let mut v = value;
    let mut total = 0u32;
    let w = match field.word {
        Word::Config => 0,
        Word::Config1 => 1,
        Word::Config2 => 2,
    };
    for &(lo, hi) in &field.ranges {
        let width = hi - lo + 1;
        total += width;
        let mask = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        words[w] |= (v & mask) << lo;
        v = if width >= 64 { 0 } else { v >> width };
    }
    if v != 0 {
        return Err(format!("value {value:#x} does not fit in {total} bits"));
    }
    Ok(())
}

fn parse_num(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        s.parse()
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

/// Split `event=0x3c,umask=0x00,any=1` into (term, value) with bare terms = 1.
pub fn parse_terms(s: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out = Vec::new();
    for t in s.trim().split(',') {
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        match t.split_once('=') {
            Some((k, v)) => out.push((k.trim().to_string(), Some(v.trim().to_string()))),
            None => out.push((t.to_string(), None)),
        }
    }
    Ok(out)
}

/// Resolve the terms of `pmu/terms/` against the PMU's sysfs description.
pub fn resolve_terms(sys: &Sysroot, pmu: &str, terms: &str) -> Result<Resolved, String> {
    let base = format!("{DEVICES}/{pmu}");
    if !sys.exists(&base) {
        let have = pmus(sys);
        return Err(format!(
            "no PMU '{pmu}' in {DEVICES} (present: {})",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ));
    }
    let type_ =
        pmu_type(sys, pmu).ok_or_else(|| format!("PMU '{pmu}' has no readable type file"))?;
    let mut words = [0u64; 3];
    let mut res = Resolved {
        type_,
        scale: 1.0,
        ..Default::default()
    };
    let mut formats: BTreeMap<String, Field> = BTreeMap::new();
    for f in sys.list_dir(&format!("{base}/format")) {
        if let Some(s) = sys.read_string(&format!("{base}/format/{f}")) {
            if let Ok(field) = parse_format(&s) {
                formats.insert(f, field);
            }
        }
    }
    let mut expanded: Vec<(String, Option<String>)> = Vec::new();
    for (k, v) in parse_terms(terms)? {
        // A bare term naming an event of this PMU expands to its encoding.
        if v.is_none() && !formats.contains_key(&k) {
            let Some(enc) = sys.read_string(&format!("{base}/events/{k}")) else {
                return Err(format!("PMU '{pmu}' has no event or format term '{k}'"));
            };
            if enc.contains('?') {
                return Err(format!(
                    "event '{k}' of PMU '{pmu}' needs parameters ('{enc}')"
                ));
            }
            expanded.extend(parse_terms(&enc)?);
            if let Some(sc) = sys.read_string(&format!("{base}/events/{k}.scale")) {
                res.scale = sc
                    .parse()
                    .map_err(|_| format!("bad scale '{sc}' for '{k}'"))?;
            }
            res.unit = sys.read_string(&format!("{base}/events/{k}.unit"));
            res.event_name = Some(k);
            continue;
        }
        expanded.push((k, v));
    }
    for (k, v) in expanded {
        if k == "name" {
            res.name = v;
            continue;
        }
        let val = match &v {
            Some(s) => parse_num(s)?,
            None => 1,
        };
        match k.as_str() {
            "config" => words[0] |= val,
            "config1" => words[1] |= val,
            "config2" => words[2] |= val,
            _ => {
                let field = formats
                    .get(&k)
                    .ok_or_else(|| format!("PMU '{pmu}' has no format term '{k}'"))?;
                apply_field(field, val, &mut words).map_err(|e| format!("term '{k}': {e}"))?;
            }
        }
    }
    res.config = words[0];
    res.config1 = words[1];
    res.config2 = words[2];
    Ok(res)
}

/// Find a named event (`topdown-retiring`, `stall_slot`) in the core PMUs
/// first, then in the others.
pub fn find_named_event(sys: &Sysroot, name: &str) -> Option<(String, Resolved)> {
    if name.is_empty() || name.contains(['/', '.', ' ']) {
        return None;
    }
    let mut order = core_pmus(sys);
    for p in pmus(sys) {
        if !order.contains(&p) {
            order.push(p);
        }
    }
    for p in order {
        if sys.exists(&format!("{DEVICES}/{p}/events/{name}")) {
            if let Ok(mut r) = resolve_terms(sys, &p, name) {
                r.event_name = Some(name.to_string());
                return Some((p, r));
            }
        }
    }
    None
}

/// Named events of a PMU (without `.scale`/`.unit` companions).
pub fn pmu_event_names(sys: &Sysroot, pmu: &str) -> Vec<String> {
    sys.list_dir(&format!("{DEVICES}/{pmu}/events"))
        .into_iter()
        .filter(|n| !n.contains('.'))
        .collect()
}

#[cfg(test)]
pub(crate) mod testroot {
    //! Build fake sysfs trees for tests.
    use crate::base::Sysroot;
    use std::path::Path;

    pub struct FakeRoot {
        pub dir: tempfile::TempDir,
    }

    impl FakeRoot {
        pub fn new() -> FakeRoot {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).expect("mkdir");
            FakeRoot { dir }
        }
        pub fn write(&self, rel: &str, content: &str) -> &Self {
            let p = self.dir.path().join(rel.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap_or(Path::new("/"))).expect("mkdir");
            std::fs::write(p, content).expect("write a fake sysfs file");
            self
        }
        pub fn sys(&self) -> Sysroot {
            Sysroot::new(self.dir.path()).expect("sysroot")
        }
        /// An Intel-like `cpu` PMU with the usual format fields.
        pub fn intel_cpu_pmu(&self, pmu: &str) -> &Self {
            let b = format!("sys/bus/event_source/devices/{pmu}");
            self.write(&format!("{b}/type"), "4\n")
                .write(&format!("{b}/format/event"), "config:0-7\n")
                .write(&format!("{b}/format/umask"), "config:8-15\n")
                .write(&format!("{b}/format/any"), "config:21\n")
                .write(&format!("{b}/format/cmask"), "config:24-31\n")
                .write(&format!("{b}/format/edge"), "config:18\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testroot::FakeRoot;
    use super::*;

    #[test]
    fn format_fields() {
        let f = parse_format("config:0-7,32-35").unwrap();
        assert_eq!(f.ranges, vec![(0, 7), (32, 35)]);
        let mut w = [0u64; 3];
        apply_field(&f, 0x1a0, &mut w).unwrap();
        assert_eq!(w[0], 0xa0 | (1 << 32));
        let f = parse_format("config:21").unwrap();
        let mut w = [0u64; 3];
        apply_field(&f, 1, &mut w).unwrap();
        assert_eq!(w[0], 1 << 21);
        assert!(apply_field(&f, 2, &mut w).is_err());
        assert_eq!(parse_format("config1:0-15").unwrap().word, Word::Config1);
        assert!(parse_format("bogus").is_err());
        assert!(parse_format("config:7-3").is_err());
    }

    #[test]
    fn resolve_named_and_terms() {
        let r = FakeRoot::new();
        r.intel_cpu_pmu("cpu")
            .write(
                "sys/bus/event_source/devices/cpu/events/topdown-total-slots",
                "event=0x3c,umask=0x00,any=1\n",
            )
            .write(
                "sys/bus/event_source/devices/cpu/events/topdown-total-slots.scale",
                "2\n",
            )
            .write("sys/bus/event_source/devices/software/type", "1\n");
        let s = r.sys();
        let x = resolve_terms(&s, "cpu", "event=0x3c,umask=0x1,edge").unwrap();
        assert_eq!(x.type_, 4);
        assert_eq!(x.config, 0x3c | (1 << 8) | (1 << 18));
        let (pmu, n) = find_named_event(&s, "topdown-total-slots").unwrap();
        assert_eq!(pmu, "cpu");
        assert_eq!(n.config, 0x3c | (1 << 21));
        assert_eq!(n.scale, 2.0);
        let y = resolve_terms(&s, "cpu", "topdown-total-slots,name=slots").unwrap();
        assert_eq!(y.name.as_deref(), Some("slots"));
        assert!(resolve_terms(&s, "cpu", "bogus=1").is_err());
        assert!(resolve_terms(&s, "nopmu", "event=1")
            .unwrap_err()
            .contains("present: cpu, software"));
        assert!(resolve_terms(&s, "cpu", "event=0x1ff").is_err());
        assert_eq!(core_pmus(&s), vec!["cpu".to_string()]);
        assert_eq!(
            pmu_event_names(&s, "cpu"),
            vec!["topdown-total-slots".to_string()]
        );
    }
}

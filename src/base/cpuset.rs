//! CPU lists in the kernel's notation (`0-3,8,10-11`, with `a-b:s` strides),
//! and the hex masks found in /proc and sysfs (`ff,ffffffff`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// An ordered set of CPU (or node) ids.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuSet(BTreeSet<usize>);

/// Largest id we accept in a list: guards against `0-4000000000` eating memory.
pub const MAX_ID: usize = 1 << 16;

impl CpuSet {
    pub fn new() -> Self {
        CpuSet(BTreeSet::new())
    }

    /// Parse a list such as `0-3,8,10-11`, `0-15:2` (stride), or the empty string.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut set = BTreeSet::new();
        let t = s.trim();
        if t.is_empty() {
            return Ok(CpuSet(set));
        }
        for part in t.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(format!("bad CPU list '{s}': empty element"));
            }
            let (range, stride) = match part.split_once(':') {
                Some((r, st)) => {
                    let st: usize = st
                        .trim()
                        .parse()
                        .map_err(|_| format!("bad CPU list '{s}': bad stride in '{part}'"))?;
                    if st == 0 {
                        return Err(format!("bad CPU list '{s}': stride 0 in '{part}'"));
                    }
                    (r, st)
                }
                None => (part, 1),
            };
            let (a, b) = match range.split_once('-') {
                Some((a, b)) => (parse_id(a, s)?, parse_id(b, s)?),
                None => {
                    if stride != 1 {
                        return Err(format!(
                            "bad CPU list '{s}': stride needs a range in '{part}'"
                        ));
                    }
                    let v = parse_id(range, s)?;
                    (v, v)
                }
            };
            if b < a {
                return Err(format!("bad CPU list '{s}': range '{part}' runs backwards"));
            }
            let mut i = a;
            while i <= b {
                set.insert(i);
                i += stride;
            }
        }
        Ok(CpuSet(set))
    }

    /// Parse a kernel hex mask such as `00000000,0000000f` (lowest bits = CPU 0).
    pub fn parse_mask(s: &str) -> Result<Self, String> {
        let mut set = BTreeSet::new();
        let digits: String = s.trim().chars().filter(|c| *c != ',').collect();
        if digits.is_empty() {
            return Err(format!("bad CPU mask '{s}'"));
        }
        for (pos, ch) in digits.chars().rev().enumerate() {
            let v = ch
                .to_digit(16)
                .ok_or_else(|| format!("bad CPU mask '{s}': '{ch}' is not hex"))?;
            for bit in 0..4 {
                if v & (1 << bit) != 0 {
                    set.insert(pos * 4 + bit);
                }
            }
        }
        Ok(CpuSet(set))
    }

    pub fn from_ids<I: IntoIterator<Item = usize>>(ids: I) -> Self {
        CpuSet(ids.into_iter().collect())
    }
    pub fn insert(&mut self, id: usize) -> bool {
        self.0.insert(id)
    }
    pub fn contains(&self, id: usize) -> bool {
        self.0.contains(&id)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }
    pub fn first(&self) -> Option<usize> {
        self.0.iter().next().copied()
    }
    pub fn to_vec(&self) -> Vec<usize> {
        self.0.iter().copied().collect()
    }
    pub fn union(&self, o: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&o.0).copied().collect())
    }
    pub fn intersection(&self, o: &CpuSet) -> CpuSet {
        CpuSet(self.0.intersection(&o.0).copied().collect())
    }
    pub fn difference(&self, o: &CpuSet) -> CpuSet {
        CpuSet(self.0.difference(&o.0).copied().collect())
    }
    pub fn is_subset(&self, o: &CpuSet) -> bool {
        self.0.is_subset(&o.0)
    }
}

fn parse_id(t: &str, whole: &str) -> Result<usize, String> {
    let t = t.trim();
    let v: usize = t
        .parse()
        .map_err(|_| format!("bad CPU list '{whole}': '{t}' is not a number"))?;
    if v > MAX_ID {
        return Err(format!(
            "bad CPU list '{whole}': {v} is larger than {MAX_ID}"
        ));
    }
    Ok(v)
}

impl fmt::Display for CpuSet {
    /// Compact kernel notation: `0-3,8,10-11`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.to_vec();
        let mut i = 0;
        let mut first = true;
        while i < v.len() {
            let mut j = i;
            while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if j == i {
                write!(f, "{}", v[i])?;
            } else {
                write!(f, "{}-{}", v[i], v[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

impl std::str::FromStr for CpuSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CpuSet::parse(s)
    }
}

impl Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for CpuSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CpuSet::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        CpuSet(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_ranges() {
        let s = CpuSet::parse("0-3,8,10-11").unwrap();
        assert_eq!(s.to_vec(), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert_eq!(CpuSet::parse("").unwrap().len(), 0);
        assert_eq!(CpuSet::parse(" 5 ").unwrap().to_string(), "5");
    }

    #[test]
    fn parses_strides() {
        assert_eq!(CpuSet::parse("0-10:4").unwrap().to_vec(), vec![0, 4, 8]);
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "a",
            "1-",
            "-1",
            "3-1",
            "1,,2",
            "0-4:0",
            "5:2",
            "1-99999999",
            "0x3",
        ] {
            let e = CpuSet::parse(bad).unwrap_err();
            assert!(e.starts_with("bad CPU list"), "{bad}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn parses_masks() {
        assert_eq!(CpuSet::parse_mask("0000000f").unwrap().to_string(), "0-3");
        assert_eq!(
            CpuSet::parse_mask("00000001,00000000").unwrap().to_string(),
            "32"
        );
        assert!(CpuSet::parse_mask("zz").is_err());
    }
}

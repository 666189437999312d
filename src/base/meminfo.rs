//! The one parser of `meminfo` files: `/proc/meminfo` and the per-node
//! `/sys/devices/system/node/nodeN/meminfo` (`Node N MemTotal:  8387892 kB`).

/// A field of a meminfo text: bytes for `kB` fields, the plain count for
/// the others (`HugePages_Free`). None when the field is absent.
pub fn field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (head, rest) = l.split_once(':')?;
        if head.split_whitespace().last()? != name {
            return None;
        }
        let mut it = rest.split_whitespace();
        let v: u64 = it.next()?.parse().ok()?;
        let mult = match it.next() {
            Some("kB") | Some("KB") | Some("kb") => 1024,
            _ => 1,
        };
        v.checked_mul(mult)
    })
}

/// A field of this machine's /proc/meminfo now (see [`field`]).
pub fn live(name: &str) -> Option<u64> {
    field(&std::fs::read_to_string("/proc/meminfo").ok()?, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let t = "Node 0 MemTotal:       8387892 kB\nNode 0 MemFree:        6739740 kB\n";
        assert_eq!(field(t, "MemTotal"), Some(8387892 * 1024));
        assert_eq!(field(t, "MemFree"), Some(6739740 * 1024));
        assert_eq!(field(t, "MemUsed"), None);
        assert_eq!(
            field("MemTotal:  280840 kB\n", "MemTotal"),
            Some(280840 * 1024)
        );
        assert_eq!(
            field(
                "HugePages_Free:       3\nHugepagesize: 2048 kB\n",
                "HugePages_Free"
            ),
            Some(3)
        );
        assert_eq!(
            field("Hugepagesize:    2048 kB\n", "Hugepagesize"),
            Some(2 << 20)
        );
    }
}

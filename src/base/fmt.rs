//! Formatting of numbers and bytes, one copy of each rule. Each function
//! keeps the output its callers have always printed; where two rules differ
//! they are two functions, named for where they are used.

/// A number with about four significant digits (no exponent for ordinary
/// magnitudes): `1234`, `12.34`, `0.1234`; `n/a` when not finite. Every
/// figure in text, HTML, advice, comparison and chart labels.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e7).contains(&a) {
        return format!("{v:.3e}");
    }
    let digits = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.digits$}")
}

/// Bytes in binary units with up to three significant digits, trailing
/// zeros dropped: `48 KiB`, `1.25 MiB`, `7.99 GiB`, `512 B` (`info`).
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        return format!("{b} B");
    }
    let s = if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s} {}", UNITS[u])
}

/// A byte count of any width (`usize`, `u64`, or an `f64` read back from JSON).
pub trait ByteCount: Copy {
    fn as_f64(self) -> f64;
}

impl ByteCount for usize {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl ByteCount for u64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl ByteCount for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}

/// A buffer size, whole or with one decimal, up to GiB: `48 KiB`, `2 MiB`,
/// `1.5 GiB`, `512 B` (memory experiments and their reports).
pub fn fmt_size(b: impl ByteCount) -> String {
    const KIB: f64 = 1024.0;
    const MIB: f64 = (1u64 << 20) as f64;
    const GIB: f64 = (1u64 << 30) as f64;
    let b = b.as_f64();
    let (v, u) = if b >= GIB {
        (b / GIB, "GiB")
    } else if b >= MIB {
        (b / MIB, "MiB")
    } else if b >= KIB {
        (b / KIB, "KiB")
    } else {
        return format!("{b:.0} B");
    };
    if (v - v.round()).abs() < 0.05 {
        format!("{v:.0} {u}")
    } else {
        format!("{v:.1} {u}")
    }
}

/// A size in the largest binary unit that divides it exactly: `32 MiB`,
/// `48 KiB`, `1000 B` (facts compared between runs).
pub fn fmt_bytes_exact(b: u64) -> String {
    const M: u64 = 1 << 20;
    const K: u64 = 1 << 10;
    if b >= M && b.is_multiple_of(M) {
        format!("{} MiB", b / M)
    } else if b >= K && b.is_multiple_of(K) {
        format!("{} KiB", b / K)
    } else {
        format!("{b} B")
    }
}

/// A size as a short axis tick, whole units: `48K`, `2M`, `1G`, `512`.
pub fn fmt_bytes_axis(b: f64) -> String {
    if b >= (1u64 << 30) as f64 {
        format!("{:.0}G", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.0}M", b / (1u64 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.0}K", b / 1024.0)
    } else {
        format!("{b:.0}")
    }
}

/// Word-wrap `text` to lines of at most `width` characters.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_format() {
        assert_eq!(fmt_bytes(48 * 1024), "48 KiB");
        assert_eq!(fmt_bytes(1280 * 1024), "1.25 MiB");
        assert_eq!(fmt_bytes(24 << 20), "24 MiB");
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(8 << 30), "8 GiB");
    }

    #[test]
    fn size_format_is_the_same_for_every_width() {
        for b in [
            0usize,
            512,
            1024,
            48 << 10,
            1536 << 10,
            2 << 20,
            3 << 29,
            5 << 30,
        ] {
            assert_eq!(fmt_size(b), fmt_size(b as u64));
            assert_eq!(fmt_size(b), fmt_size(b as f64));
        }
        assert_eq!(fmt_size(48usize << 10), "48 KiB");
        assert_eq!(fmt_size(3usize << 29), "1.5 GiB");
        assert_eq!(fmt_size(512usize), "512 B");
    }

    #[test]
    fn exact_and_axis() {
        assert_eq!(fmt_bytes_exact(32 << 20), "32 MiB");
        assert_eq!(fmt_bytes_exact(1000), "1000 B");
        assert_eq!(fmt_bytes_axis(48.0 * 1024.0), "48K");
        assert_eq!(fmt_bytes_axis(512.0), "512");
    }

    #[test]
    fn numbers() {
        assert_eq!(fmt_num(1234.5678), "1235");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(f64::NAN), "n/a");
    }
}

/// Rows laid out as columns separated by two spaces, each line indented and
/// trimmed at the end; the last cell of a row is never padded.
pub fn columns(rows: &[Vec<String>], indent: &str) -> String {
    layout(rows, indent, false)
}

/// As [`columns`], but the last cell of each row is not counted in the
/// column widths either, so a long "not available" reason in a short row does
/// not widen the figures of the others.
pub fn columns_ragged(rows: &[Vec<String>], indent: &str) -> String {
    layout(rows, indent, true)
}

fn layout(rows: &[Vec<String>], indent: &str, ragged: bool) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut w = vec![0usize; n];
    for r in rows {
        let counted = if ragged {
            r.len().saturating_sub(1)
        } else {
            r.len()
        };
        for (i, c) in r.iter().enumerate().take(counted) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::from(indent);
        for (i, c) in r.iter().enumerate() {
            line.push_str(c);
            if i + 1 < r.len() {
                line.push_str(&" ".repeat(w[i] - c.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod column_tests {
    use super::*;

    fn rows(v: &[&[&str]]) -> Vec<Vec<String>> {
        v.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn last_cell_counts_or_not() {
        let r = rows(&[&["a", "a very long reason"], &["bb", "x", "y"]]);
        assert_eq!(
            columns(&r, " "),
            " a   a very long reason\n bb  x                   y\n"
        );
        assert_eq!(
            columns_ragged(&r, " "),
            " a   a very long reason\n bb  x  y\n"
        );
    }
}

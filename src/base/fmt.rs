//! Formatting of numbers and bytes, one copy of each rule. Each function
//! keeps the output its callers have always printed; where two rules differ
//! they are two functions, named for where they are used. Text from
//! outside reaches a terminal only through [`for_terminal`].

use std::borrow::Cow;
use std::fmt::Write as _;

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

/// Whether `c` must not reach a terminal as itself: C0 controls (newline,
/// carriage return, tab and ESC included), DEL, C1 controls (U+0080 to
/// U+009F: 8-bit CSI among them), the Unicode bidirectional overrides,
/// embeddings and isolates (U+202A to U+202E, U+2066 to U+2069) with the
/// implicit marks (U+061C, U+200E, U+200F), and the line and paragraph
/// separators (U+2028, U+2029). Every other character, U+FFFD included,
/// is text.
pub fn is_unsafe_on_terminal(c: char) -> bool {
    c.is_control() // C0, DEL, C1
        || matches!(
            c,
            '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// A string that came from outside (host name, CPU model, tag, note, path,
/// an imported document's field) made safe for one terminal line: each
/// control character and bidirectional formatting character (see
/// [`is_unsafe_on_terminal`]) is shown as a visible escape: `\n`, `\r`,
/// `\t`, `\x1b` for the other C0 controls and DEL, `\u{85}` for C1
/// controls, `\u{202e}` for the Unicode ones. Everything else, UTF-8 text in
/// any script included, is kept as it is; a string with nothing to escape is
/// returned without a copy. A backslash is left alone, so applying it twice
/// gives the same text as once (a renderer and the table layout may both
/// apply it).
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe_on_terminal) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe_on_terminal(c) {
            push_escape(&mut o, c, false);
        } else {
            o.push(c);
        }
    }
    Cow::Owned(o)
}

/// Append the visible escape of a character [`is_unsafe_on_terminal`]
/// flags: `\n`, `\r`, `\t`, `\x1b` for the other C0 controls and DEL, and
/// for the rest `\u{202e}` (`ansi_c` false) or bash's `\u202e` (`ansi_c`
/// true, inside `$'…'`).
pub fn push_escape(o: &mut String, c: char, ansi_c: bool) {
    match c {
        '\n' => o.push_str("\\n"),
        '\r' => o.push_str("\\r"),
        '\t' => o.push_str("\\t"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            let _ = write!(o, "\\x{:02x}", c as u32);
        }
        c if ansi_c => {
            let _ = write!(o, "\\u{:04x}", c as u32);
        }
        c => {
            let _ = write!(o, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// As [`for_terminal`] for a block of text whose line breaks are meant:
/// each line is escaped, the `\n` between lines kept. The backstop for a
/// block built elsewhere; a field from outside is escaped with
/// [`for_terminal`] before it goes into a block, or its own newline would
/// start a line here.
pub fn for_terminal_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe_on_terminal(c)) {
        return Cow::Borrowed(s);
    }
    let lines: Vec<Cow<'_, str>> = s.split('\n').map(for_terminal).collect();
    Cow::Owned(lines.join("\n"))
}

/// A CSV text cell (`compare --csv`, `stat --csv`): one line (control
/// characters and bidirectional overrides as visible escapes, as
/// [`for_terminal`]: the CSV goes to a terminal or a line-based tool as
/// often as to a spreadsheet), a leading `=`, `+`, `-` or `@` put behind a
/// `'` so that no spreadsheet takes the cell for a formula, and quoted as
/// RFC 4180 says when it holds a comma or a quote (or was neutralised).
/// Numbers are written as they are, not through this.
pub fn csv_cell(s: &str) -> String {
    let s = for_terminal(s);
    if s.starts_with(['=', '+', '-', '@']) {
        format!("\"'{}\"", s.replace('"', "\"\""))
    } else if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}

/// The most characters a run tag may have. A tag is a label (`baseline`,
/// `batch=2026-11`, `rack7/kernel-6.8`) shown in table cells of `show`,
/// `compare` and the fleet page and matched by `--tag` filters; 64 holds a
/// key=value pair with a date or a commit hash and keeps a cell narrow.
pub const TAG_MAX_CHARS: usize = 64;

/// Characters a tag may not hold besides the ones a terminal must not get
/// ([`is_unsafe_on_terminal`]): whitespace other than the space (it would
/// pass for a space), zero-width and invisible format characters, the byte
/// order mark, and the replacement character (a tag that was not UTF-8).
fn is_invisible_in_tag(c: char) -> bool {
    (c.is_whitespace() && c != ' ')
        || matches!(
            c,
            '\u{ad}'
                | '\u{200b}'..='\u{200d}'
                | '\u{2060}'..='\u{2064}'
                | '\u{feff}'
                | '\u{fffd}'
        )
}

/// At most the first `n` characters of `s`, escaped for a terminal, with
/// "…" when cut: a value quoted back in an error message.
pub fn quote_short(s: &str, n: usize) -> String {
    let mut q: String = s.chars().take(n).collect();
    if s.chars().nth(n).is_some() {
        q.push('…');
    }
    for_terminal(&q).into_owned()
}

/// Check one run tag (`run --tag`, `tune --tag`): not empty, no space at
/// either end, at most [`TAG_MAX_CHARS`] characters, printable (no control,
/// bidirectional or invisible character). The error is one line that
/// quotes the tag escaped and shortened.
pub fn check_tag(tag: &str) -> Result<(), String> {
    if tag.trim().is_empty() {
        return Err(if tag.is_empty() {
            "invalid --tag '': a tag may not be empty".into()
        } else {
            format!(
                "invalid --tag '{}': a tag may not be only spaces",
                quote_short(tag, 20)
            )
        });
    }
    let n = tag.chars().count();
    if n > TAG_MAX_CHARS {
        return Err(format!(
            "invalid --tag '{}' ({n} characters): a tag has at most {TAG_MAX_CHARS} characters",
            quote_short(tag, 20)
        ));
    }
    if let Some(c) = tag
        .chars()
        .find(|&c| is_unsafe_on_terminal(c) || is_invisible_in_tag(c))
    {
        let shown = match for_terminal(&c.to_string()) {
            Cow::Owned(e) => e,
            Cow::Borrowed(_) => format!("\\u{{{:x}}}", c as u32),
        };
        return Err(format!(
            "invalid --tag '{}': holds the character {shown} (a tag is printable text)",
            quote_short(tag, 40)
        ));
    }
    if tag.trim() != tag {
        return Err(format!(
            "invalid --tag '{}': a tag may not begin or end with a space",
            quote_short(tag, 40)
        ));
    }
    Ok(())
}

/// A run's tag list as every command takes it (`run --tag`, `tune --tag`,
/// `import`): each tag [`check_tag`]ed, each once. Gives the good tags, once
/// each in their order, and the first refusal (one line naming the tag).
pub fn screen_tags(tags: Vec<String>) -> (Vec<String>, Option<String>) {
    let mut kept: Vec<String> = Vec::with_capacity(tags.len());
    let mut refused: Option<String> = None;
    for t in tags {
        if let Err(e) = check_tag(&t) {
            refused.get_or_insert(e);
        } else if kept.contains(&t) {
            refused.get_or_insert_with(|| {
                format!(
                    "--tag '{}' is given twice (each tag once)",
                    quote_short(&t, 64)
                )
            });
        } else {
            kept.push(t);
        }
    }
    (kept, refused)
}

/// The most bytes of a run's host name: Linux's HOST_NAME_MAX, and the
/// most a `--host-label` may have.
pub const HOST_MAX_BYTES: usize = 64;

/// Check a run's host name as `run` records it (the machine's host name,
/// or a `--host-label`, which has a narrower rule on top): 1 to
/// [`HOST_MAX_BYTES`] bytes of printable text (no control, bidirectional
/// or invisible character, NUL included), no space at either end. The
/// error is one line that quotes the name escaped and shortened.
pub fn check_host(host: &str) -> Result<(), String> {
    let q = || quote_short(host, 40);
    if host.trim().is_empty() {
        return Err(format!("host name '{}' is empty", q()));
    }
    if host.len() > HOST_MAX_BYTES {
        return Err(format!(
            "host name '{}' ({} bytes) is longer than {HOST_MAX_BYTES} bytes",
            q(),
            host.len()
        ));
    }
    if let Some(c) = host
        .chars()
        .find(|&c| is_unsafe_on_terminal(c) || is_invisible_in_tag(c))
    {
        let shown = match for_terminal(&c.to_string()) {
            Cow::Owned(e) => e,
            Cow::Borrowed(_) => format!("\\u{{{:x}}}", c as u32),
        };
        return Err(format!(
            "host name '{}' holds the character {shown} (a host name is printable text)",
            q()
        ));
    }
    if host.trim() != host {
        return Err(format!("host name '{}' begins or ends with a space", q()));
    }
    Ok(())
}

/// The machine's own host name made to keep [`check_host`] (Linux takes any
/// bytes but NUL in one): control, bidirectional and invisible characters
/// as visible escapes, spaces at either end dropped, cut to
/// [`HOST_MAX_BYTES`] on a character boundary, `unknown` when nothing is
/// left. A name that keeps the rule is returned as it is.
pub fn clean_host(host: &str) -> String {
    if check_host(host).is_ok() {
        return host.to_string();
    }
    let mut o = String::new();
    for c in host.trim().chars() {
        if is_unsafe_on_terminal(c) || is_invisible_in_tag(c) {
            push_escape(&mut o, c, false);
        } else {
            o.push(c);
        }
    }
    let mut end = o.len().min(HOST_MAX_BYTES);
    while !o.is_char_boundary(end) {
        end -= 1;
    }
    o.truncate(end);
    let o = o.trim_end().to_string();
    if o.is_empty() {
        "unknown".into()
    } else {
        o
    }
}

/// The clap parser of a `--tag` value: [`check_tag`] at parse time (exit 2,
/// before anything is measured or stored). Its error is [`check_tag`]'s
/// message alone: clap's own would echo the raw value, control characters
/// and all, however long.
#[derive(Clone, Copy, Debug, Default)]
pub struct TagParser;

impl clap::builder::TypedValueParser for TagParser {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        use clap::error::ErrorKind;
        let Some(tag) = value.to_str() else {
            return Err(clap::Error::raw(
                ErrorKind::InvalidUtf8,
                format!(
                    "invalid --tag '{}': not UTF-8 text",
                    quote_short(&value.to_string_lossy(), 40)
                ),
            ));
        };
        check_tag(tag).map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, e))?;
        Ok(tag.to_string())
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
    // Every cell is one terminal line of text, whatever its source.
    let rows: Vec<Vec<Cow<'_, str>>> = rows
        .iter()
        .map(|r| r.iter().map(|c| for_terminal(c)).collect())
        .collect();
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut w = vec![0usize; n];
    for r in &rows {
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
    for r in &rows {
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

#[cfg(test)]
mod terminal_tests {
    use super::*;

    #[test]
    fn controls_and_bidi_become_visible_escapes() {
        assert_eq!(for_terminal("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(for_terminal("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
        assert_eq!(for_terminal("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
        assert_eq!(for_terminal("\0\x7f"), "\\x00\\x7f");
        assert_eq!(for_terminal("\u{9b}31m\u{85}"), "\\u{9b}31m\\u{85}");
        assert_eq!(
            for_terminal("a\u{202e}b\u{2066}c\u{2069}\u{200f}\u{2028}"),
            "a\\u{202e}b\\u{2066}c\\u{2069}\\u{200f}\\u{2028}"
        );
    }

    #[test]
    fn text_is_kept_and_not_copied() {
        for s in [
            "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
            "海光 C86 7285 32核处理器",
            "ü-tag \u{fffd} → ×1.2 · \u{a0}",
            "C:\\path\\x1b (a backslash stays)",
            "",
        ] {
            assert!(matches!(for_terminal(s), Cow::Borrowed(_)), "{s:?}");
            assert_eq!(for_terminal(s), s);
        }
    }

    #[test]
    fn twice_is_once_and_one_line() {
        let s = "host\nforged-row \x1b[2J\u{202e}\u{9b}";
        let once = for_terminal(s).into_owned();
        assert_eq!(for_terminal(&once), once);
        assert!(!once.chars().any(is_unsafe_on_terminal));
        assert_eq!(once.lines().count(), 1);
    }

    #[test]
    fn blocks_keep_their_line_breaks() {
        assert_eq!(
            for_terminal_lines("a\x1b[1m\n\tb\u{202e}\n"),
            "a\\x1b[1m\n\\tb\\u{202e}\n"
        );
        assert!(matches!(for_terminal_lines("a\nb\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn tags() {
        for ok in [
            "baseline",
            "batch=2026-11",
            "ü-tag",
            "海光 c86",
            &"x".repeat(64),
        ] {
            assert_eq!(check_tag(ok), Ok(()), "{ok:?}");
        }
        let long = "y".repeat(120 * 1024);
        for (bad, says) in [
            ("", "may not be empty"),
            ("   ", "only spaces"),
            (" a", "begin or end with a space"),
            (&long, "(122880 characters): a tag has at most 64"),
            ("a\x1b[31m", "holds the character \\x1b"),
            ("a\nb", "holds the character \\n"),
            ("a\u{202e}b", "holds the character \\u{202e}"),
            ("a\u{200b}b", "holds the character \\u{200b}"),
            ("a\u{a0}b", "holds the character \\u{a0}"),
        ] {
            let e = check_tag(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
            assert_eq!(for_terminal(&e), e, "{e}");
            assert!(e.len() < 200, "{e}");
        }
    }

    #[test]
    fn tag_lists_and_host_names() {
        let v = |s: &[&str]| s.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        assert_eq!(screen_tags(v(&["a", "b"])), (v(&["a", "b"]), None));
        let (kept, e) = screen_tags(v(&["a", "", "a", "b"]));
        assert_eq!(kept, v(&["a", "b"]));
        assert!(e.unwrap().contains("may not be empty"));
        let (_, e) = screen_tags(v(&["a", "a"]));
        assert!(e.unwrap().contains("given twice"));
        for ok in [
            "web-01",
            "3f2a9c1d0b7e",
            "ip-10-0-0-1.ec2.internal",
            "x_y",
            "Büro",
        ] {
            assert_eq!(check_host(ok), Ok(()), "{ok:?}");
        }
        assert_eq!(clean_host("web-01"), "web-01");
        assert_eq!(clean_host(" a\x1b[2Jb\u{202e} "), "a\\x1b[2Jb\\u{202e}");
        assert_eq!(clean_host("\x07"), "\\x07");
        assert_eq!(clean_host("  "), "unknown");
        let cut = clean_host(&"é".repeat(100));
        assert_eq!(cut, "é".repeat(32));
        for h in ["a\tb", &"x".repeat(500), "\u{200b}"] {
            assert_eq!(check_host(&clean_host(h)), Ok(()), "{h:?}");
        }
        let long = "h".repeat(100_000);
        for (bad, says) in [
            ("", "is empty"),
            (long.as_str(), "(100000 bytes) is longer than 64 bytes"),
            ("a\0b", "holds the character \\x00"),
            ("a\nb", "holds the character \\n"),
            ("a\u{202e}b", "holds the character \\u{202e}"),
            (" a", "begins or ends with a space"),
        ] {
            let e = check_host(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
            assert_eq!(for_terminal(&e), e, "{e}");
            assert!(e.len() < 200, "{e}");
        }
    }

    #[test]
    fn csv_cells_are_quoted_one_line_and_never_formulas() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_cell("a\nb\r"), "a\\nb\\r");
        assert_eq!(csv_cell("x\x1b[31m"), "x\\x1b[31m");
        assert_eq!(csv_cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        for lead in ["+1", "-1+2", "@SUM(A1)"] {
            assert_eq!(csv_cell(lead), format!("\"'{lead}\""));
        }
        assert_eq!(csv_cell("\tx"), "\\tx");
        assert_eq!(csv_cell("a=b"), "a=b");
    }

    #[test]
    fn table_cells_are_escaped_and_aligned() {
        let r = vec![
            vec!["a\nb".to_string(), "x".into()],
            vec!["cccc".to_string(), "y".into()],
        ];
        assert_eq!(columns(&r, ""), "a\\nb  x\ncccc  y\n");
    }
}

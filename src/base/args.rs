//! A command's arguments as the kernel takes them: bytes (`OsString`), not
//! text. `stat` and `tune` pass the arguments after `--` to exec exactly as
//! given, as `perf stat` does, a byte that is not UTF-8 (a Latin-1 file
//! name) included. What shows or stores them goes through here:
//!
//! - [`display`]: one terminal-safe line for messages: each byte that is not
//!   UTF-8 as `\xNN`, control and bidirectional characters escaped as
//!   `base::fmt::for_terminal` does;
//! - [`shell_line`]: a line that gives the same bytes when pasted into bash
//!   (a word that needs it in `$'...'` with `\xNN` escapes): lossless;
//! - [`lossy`]: JSON text (JSON strings are Unicode): each byte that is not
//!   UTF-8 becomes U+FFFD, and [`not_utf8_note`] says so and gives the
//!   exact [`shell_line`].

use super::fmt::{for_terminal, is_unsafe_on_terminal, push_escape};
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// `a` on one terminal line: UTF-8 text escaped as `for_terminal` does,
/// each other byte as `\xNN`.
pub fn display(a: &OsStr) -> String {
    let mut o = String::new();
    for chunk in a.as_bytes().utf8_chunks() {
        o.push_str(&for_terminal(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(o, "\\x{b:02x}");
        }
    }
    o
}

/// `a` as JSON-ready text: each byte that is not UTF-8 as U+FFFD.
pub fn lossy(a: &OsStr) -> String {
    a.to_string_lossy().into_owned()
}

/// Whether `a` holds `pat`.
pub fn contains(a: &OsStr, pat: &str) -> bool {
    let (h, n) = (a.as_bytes(), pat.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w == n)
}

/// `a` with every `pat` replaced by `with`, byte for byte.
pub fn replace(a: &OsStr, pat: &str, with: &str) -> OsString {
    let (mut h, n) = (a.as_bytes(), pat.as_bytes());
    if n.is_empty() {
        return a.to_os_string();
    }
    let mut o = Vec::with_capacity(h.len());
    while let Some(i) = h.windows(n.len()).position(|w| w == n) {
        o.extend_from_slice(&h[..i]);
        o.extend_from_slice(with.as_bytes());
        h = &h[i + n.len()..];
    }
    o.extend_from_slice(h);
    OsString::from_vec(o)
}

/// `a` as one word for a POSIX shell: as is when it holds only safe
/// characters; in single quotes (a `'` written `'\''`) when it is text
/// safe on a terminal; otherwise in bash's ANSI-C quoting `$'...'`, with
/// `\n`, `\xNN` (a control character, a byte that is not UTF-8) and
/// `\uNNNN` (a bidirectional character), so the word stays on one safe
/// line and gives the same bytes when pasted.
pub fn shell_word(a: &OsStr) -> String {
    match a.to_str() {
        Some(s) if !s.chars().any(is_unsafe_on_terminal) => {
            let safe = !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
            if safe {
                s.to_string()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        }
        _ => ansi_c_quote(a.as_bytes()),
    }
}

/// The bytes `a` in bash's ANSI-C quoting: `$'a\nb\xff'`.
fn ansi_c_quote(a: &[u8]) -> String {
    let mut o = String::from("$'");
    for chunk in a.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => o.push_str("\\\\"),
                '\'' => o.push_str("\\'"),
                c if is_unsafe_on_terminal(c) => push_escape(&mut o, c, true),
                c => o.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(o, "\\x{b:02x}");
        }
    }
    o.push('\'');
    o
}

/// A command as one shell line ([`shell_word`] for each argument).
pub fn shell_line<S: AsRef<OsStr>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| shell_word(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The arguments as JSON-ready text ([`lossy`]).
pub fn lossy_all<S: AsRef<OsStr>>(argv: &[S]) -> Vec<String> {
    argv.iter().map(|a| lossy(a.as_ref())).collect()
}

/// When some argument is not UTF-8: a note saying which, that the stored
/// text shows U+FFFD for its bytes, and the exact command line.
pub fn not_utf8_note<S: AsRef<OsStr>>(argv: &[S]) -> Option<String> {
    let bad: Vec<String> = argv
        .iter()
        .enumerate()
        .filter(|(_, a)| a.as_ref().to_str().is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if bad.is_empty() {
        return None;
    }
    Some(format!(
        "argument(s) {} of the command (0 = the program) are not UTF-8: the command ran with their exact bytes; the `command` text shows each such byte as U+FFFD; exactly, it is: {}",
        bad.join(", "),
        shell_line(argv)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(b: &[u8]) -> OsString {
        OsString::from_vec(b.to_vec())
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_escaped_and_quoted_exactly() {
        let a = os(b"caf\xe9\x1b[2J");
        assert_eq!(display(&a), "caf\\xe9\\x1b[2J");
        assert_eq!(lossy(&a), "caf\u{fffd}\u{1b}[2J");
        assert_eq!(shell_word(&a), "$'caf\\xe9\\x1b[2J'");
        assert_eq!(shell_word(&os(b"a b")), "'a b'");
        assert_eq!(shell_word(&os(b"it's")), "'it'\\''s'");
        assert_eq!(shell_word(&os(b"./x")), "./x");
        assert_eq!(shell_word(&os(b"\xff'\\")), "$'\\xff\\'\\\\'");
        let argv = [os(b"/bin/echo"), os(b"\xff")];
        assert_eq!(shell_line(&argv), "/bin/echo $'\\xff'");
        let note = not_utf8_note(&argv).unwrap();
        assert!(note.contains("argument(s) 1 ") && note.ends_with("/bin/echo $'\\xff'"));
        assert!(not_utf8_note(&[os(b"echo")]).is_none());
    }

    #[test]
    fn placeholders_are_replaced_byte_for_byte() {
        let a = os(b"-t{threads}\xff{threads}");
        assert!(contains(&a, "{threads}"));
        assert_eq!(replace(&a, "{threads}", "4"), os(b"-t4\xff4"));
        assert!(!contains(&os(b"\xff"), "{threads}"));
    }
}

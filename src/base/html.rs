//! HTML escaping, which every page and chart engine uses (the charts
//! themselves are drawn in `view/`, one engine per kind).

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Line breaks and tabs stay (pre-formatted blocks); any other
            // control character and the bidi overrides, which would reorder
            // the page's text, are shown escaped as on a terminal.
            '\n' | '\t' => o.push(c),
            c if super::fmt::is_unsafe_on_terminal(c) => {
                o.push_str(&super::fmt::for_terminal(c.encode_utf8(&mut [0; 4])))
            }
            _ => o.push(c),
        }
    }
    o
}

//! A small regular-expression engine for reading a figure out of a
//! program's output (`tune --score-regex 'tpmC: ([0-9.]+)'`), so that the
//! crate needs no regex dependency.
//!
//! Syntax (a subset of Perl/Rust `regex`): literals; `.` (any character but
//! a newline); classes `[abc]`, `[^a-z0-9_]`, with `\d \s \w` inside;
//! `\d \D \s \S \w \W`; escapes of `\ . + * ? ( ) [ ] { } | ^ $ /` and
//! `\t \n \r`; groups `( )` (capturing) and `(?: )`; alternation `|`;
//! repetition `* + ? {n} {n,} {n,m}`, greedy or lazy (`*?`...); `^` and `$`
//! match at the start and end of each line. Matching is a Pike VM:
//! leftmost-first like Perl, in time linear in the text (no catastrophic
//! backtracking). Characters are Unicode scalar values; classes compare
//! them by code point.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
enum ClassItem {
    Range(char, char),
    Digit(bool),
    Space(bool),
    Word(bool),
}

impl ClassItem {
    fn matches(&self, c: char) -> bool {
        match *self {
            ClassItem::Range(a, b) => a <= c && c <= b,
            ClassItem::Digit(neg) => c.is_ascii_digit() != neg,
            ClassItem::Space(neg) => c.is_whitespace() != neg,
            ClassItem::Word(neg) => (c.is_alphanumeric() || c == '_') != neg,
        }
    }
}

#[derive(Clone, Debug)]
enum Node {
    Empty,
    Char(char),
    Any,
    Class(Vec<ClassItem>, bool),
    LineStart,
    LineEnd,
    Group(Box<Node>, Option<usize>),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
}

/// A compiled pattern.
#[derive(Clone)]
pub struct Pattern {
    source: String,
    prog: Vec<Inst>,
    /// Capturing groups, group 0 (the whole match) included.
    groups: usize,
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.source)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[derive(Clone, Debug)]
enum Inst {
    Char(char),
    Any,
    Class(Vec<ClassItem>, bool),
    LineStart,
    LineEnd,
    Save(usize),
    Split(usize, usize),
    Jmp(usize),
    Match,
}

impl Inst {
    /// Does this character instruction take `cur` (None: the end of the text)?
    fn takes(&self, cur: Option<char>) -> bool {
        match (self, cur) {
            (Inst::Char(x), Some(c)) => *x == c,
            (Inst::Any, Some(c)) => c != '\n',
            (Inst::Class(items, neg), Some(c)) => items.iter().any(|i| i.matches(c)) != *neg,
            _ => false,
        }
    }
}

/// The character before byte `pos` of `text` (None at the start).
fn char_before(text: &str, pos: usize) -> Option<char> {
    if pos == 0 {
        None
    } else {
        text[..pos].chars().next_back()
    }
}

/// Most instructions a pattern may compile to (counted repetitions expand).
const MAX_PROGRAM: usize = 20_000;

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    groups: usize,
    src: &'a str,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        format!("bad pattern '{}': {what} at offset {}", self.src, self.pos)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn alt(&mut self) -> Result<Node, String> {
        let mut branches = vec![self.concat()?];
        while self.peek() == Some('|') {
            self.pos += 1;
            branches.push(self.concat()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    fn concat(&mut self) -> Result<Node, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.repeat(atom)?);
        }
        Ok(Node::Concat(items))
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        self.chars[start..self.pos]
            .iter()
            .collect::<String>()
            .parse()
            .ok()
    }

    fn repeat(&mut self, atom: Node) -> Result<Node, String> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                let save = self.pos;
                self.pos += 1;
                let Some(min) = self.number() else {
                    // A literal '{' (as in Perl when no count follows).
                    self.pos = save;
                    return Ok(atom);
                };
                let max = if self.peek() == Some(',') {
                    self.pos += 1;
                    self.number()
                } else {
                    Some(min)
                };
                if self.peek() != Some('}') {
                    return Err(self.err("unclosed repetition count"));
                }
                if max.is_some_and(|m| m < min) {
                    return Err(self.err("repetition count {n,m} with m < n"));
                }
                if min > 1000 || max.is_some_and(|m| m > 1000) {
                    return Err(self.err("repetition count above 1000"));
                }
                (min, max)
            }
            _ => return Ok(atom),
        };
        if matches!(atom, Node::LineStart | Node::LineEnd) {
            return Err(self.err("nothing to repeat"));
        }
        self.pos += 1;
        let greedy = if self.peek() == Some('?') {
            self.pos += 1;
            false
        } else {
            true
        };
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    fn escape_class(c: char) -> Option<ClassItem> {
        Some(match c {
            'd' => ClassItem::Digit(false),
            'D' => ClassItem::Digit(true),
            's' => ClassItem::Space(false),
            'S' => ClassItem::Space(true),
            'w' => ClassItem::Word(false),
            'W' => ClassItem::Word(true),
            _ => return None,
        })
    }

    fn escape_char(&self, c: char) -> Result<char, String> {
        Ok(match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            c if "\\.+*?()[]{}|^$/-#&~ \"'%,:;=<>!@`".contains(c) => c,
            _ => return Err(self.err(&format!("unknown escape \\{c}"))),
        })
    }

    fn atom(&mut self) -> Result<Node, String> {
        let Some(c) = self.peek() else {
            return Err(self.err("unexpected end"));
        };
        self.pos += 1;
        Ok(match c {
            '.' => Node::Any,
            '^' => Node::LineStart,
            '$' => Node::LineEnd,
            '*' | '+' | '?' => return Err(self.err("nothing to repeat")),
            '(' => {
                let index = if self.chars[self.pos..].starts_with(&['?', ':']) {
                    self.pos += 2;
                    None
                } else if self.peek() == Some('?') {
                    return Err(self.err("unsupported group kind (only ( ) and (?: ))"));
                } else {
                    self.groups += 1;
                    Some(self.groups)
                };
                let inner = self.alt()?;
                if self.peek() != Some(')') {
                    return Err(self.err("unclosed group"));
                }
                self.pos += 1;
                Node::Group(Box::new(inner), index)
            }
            ')' => return Err(self.err("unmatched ')'")),
            '[' => self.class()?,
            '\\' => {
                let Some(e) = self.peek() else {
                    return Err(self.err("trailing backslash"));
                };
                self.pos += 1;
                match Self::escape_class(e) {
                    Some(item) => Node::Class(vec![item], false),
                    None => Node::Char(self.escape_char(e)?),
                }
            }
            c => Node::Char(c),
        })
    }

    fn class(&mut self) -> Result<Node, String> {
        let negated = if self.peek() == Some('^') {
            self.pos += 1;
            true
        } else {
            false
        };
        let mut items = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("unclosed character class"));
            };
            self.pos += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' {
                let Some(e) = self.peek() else {
                    return Err(self.err("trailing backslash"));
                };
                self.pos += 1;
                if let Some(item) = Self::escape_class(e) {
                    items.push(item);
                    continue;
                }
                self.escape_char(e)?
            } else {
                c
            };
            // A range a-z (a '-' before ']' is literal).
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']') {
                self.pos += 1;
                let mut hi = self.chars[self.pos];
                self.pos += 1;
                if hi == '\\' {
                    let Some(e) = self.peek() else {
                        return Err(self.err("trailing backslash"));
                    };
                    self.pos += 1;
                    hi = self.escape_char(e)?;
                }
                if hi < lo {
                    return Err(self.err(&format!("class range {lo}-{hi} is reversed")));
                }
                items.push(ClassItem::Range(lo, hi));
            } else {
                items.push(ClassItem::Range(lo, lo));
            }
        }
        Ok(Node::Class(items, negated))
    }
}

struct Compiler {
    prog: Vec<Inst>,
}

impl Compiler {
    fn emit(&mut self, i: Inst) -> Result<usize, String> {
        if self.prog.len() >= MAX_PROGRAM {
            return Err("pattern too large (counted repetitions expand to too many steps)".into());
        }
        self.prog.push(i);
        Ok(self.prog.len() - 1)
    }

    fn node(&mut self, n: &Node) -> Result<(), String> {
        match n {
            Node::Empty => {}
            Node::Char(c) => {
                self.emit(Inst::Char(*c))?;
            }
            Node::Any => {
                self.emit(Inst::Any)?;
            }
            Node::Class(items, neg) => {
                self.emit(Inst::Class(items.clone(), *neg))?;
            }
            Node::LineStart => {
                self.emit(Inst::LineStart)?;
            }
            Node::LineEnd => {
                self.emit(Inst::LineEnd)?;
            }
            Node::Group(inner, idx) => {
                if let Some(i) = idx {
                    self.emit(Inst::Save(2 * i))?;
                }
                self.node(inner)?;
                if let Some(i) = idx {
                    self.emit(Inst::Save(2 * i + 1))?;
                }
            }
            Node::Concat(items) => {
                for i in items {
                    self.node(i)?;
                }
            }
            Node::Alt(branches) => self.alternation(branches)?,
            Node::Repeat {
                node,
                min,
                max,
                greedy,
            } => self.repetition(node, *min, *max, *greedy)?,
        }
        Ok(())
    }

    /// Alternatives, first preferred:
    /// split L1, next; L1: branch; jmp end; next: split ...
    fn alternation(&mut self, branches: &[Node]) -> Result<(), String> {
        let mut jumps = Vec::new();
        for (k, b) in branches.iter().enumerate() {
            if k + 1 < branches.len() {
                let split = self.emit(Inst::Split(0, 0))?;
                self.node(b)?;
                jumps.push(self.emit(Inst::Jmp(0))?);
                let next = self.prog.len();
                self.prog[split] = Inst::Split(split + 1, next);
            } else {
                self.node(b)?;
            }
        }
        let end = self.prog.len();
        for j in jumps {
            self.prog[j] = Inst::Jmp(end);
        }
        Ok(())
    }

    /// `node` repeated `min` to `max` (None: no bound) times, greedy or lazy.
    fn repetition(
        &mut self,
        node: &Node,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    ) -> Result<(), String> {
        for _ in 0..min {
            self.node(node)?;
        }
        match max {
            None => {
                // L: split body, end; body; jmp L
                let split = self.emit(Inst::Split(0, 0))?;
                self.node(node)?;
                self.emit(Inst::Jmp(split))?;
                let end = self.prog.len();
                self.prog[split] = if greedy {
                    Inst::Split(split + 1, end)
                } else {
                    Inst::Split(end, split + 1)
                };
            }
            Some(max) => {
                let mut splits = Vec::new();
                for _ in min..max {
                    splits.push(self.emit(Inst::Split(0, 0))?);
                    self.node(node)?;
                }
                let end = self.prog.len();
                for s in splits {
                    self.prog[s] = if greedy {
                        Inst::Split(s + 1, end)
                    } else {
                        Inst::Split(end, s + 1)
                    };
                }
            }
        }
        Ok(())
    }
}

/// One match: the byte spans of group 0 (the whole match) and of each
/// capturing group (None where the group did not take part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captures {
    spans: Vec<Option<(usize, usize)>>,
}

impl Captures {
    /// The byte span of group `i`.
    pub fn span(&self, i: usize) -> Option<(usize, usize)> {
        self.spans.get(i).copied().flatten()
    }
    /// The text of group `i` in `text` (the text that was searched).
    pub fn text<'t>(&self, text: &'t str, i: usize) -> Option<&'t str> {
        self.span(i).map(|(a, b)| &text[a..b])
    }
}

impl Pattern {
    /// Compile `src`; a one-line error naming the problem.
    pub fn new(src: &str) -> Result<Pattern, String> {
        let mut p = Parser {
            chars: src.chars().collect(),
            pos: 0,
            groups: 0,
            src,
        };
        let node = p.alt()?;
        if p.pos < p.chars.len() {
            return Err(p.err("unmatched ')'"));
        }
        let mut c = Compiler { prog: Vec::new() };
        c.emit(Inst::Save(0))?;
        c.node(&node)?;
        c.emit(Inst::Save(1))?;
        c.emit(Inst::Match)?;
        Ok(Pattern {
            source: src.to_string(),
            prog: c.prog,
            groups: p.groups + 1,
        })
    }

    /// Capturing groups, the whole match (group 0) included.
    pub fn group_count(&self) -> usize {
        self.groups
    }

    /// The leftmost-first match starting at byte `from` or later.
    pub fn find_at(&self, text: &str, from: usize) -> Option<Captures> {
        let nslots = 2 * self.groups;
        let mut clist: Vec<(usize, Vec<Option<usize>>)> = Vec::new();
        let mut nlist: Vec<(usize, Vec<Option<usize>>)> = Vec::new();
        let mut seen = vec![usize::MAX; self.prog.len()];
        let mut matched: Option<Vec<Option<usize>>> = None;
        let bytes = text.as_bytes();
        let mut pos = from;
        let mut step = 0usize;
        loop {
            let prev = char_before(text, pos);
            let cur = text[pos..].chars().next();
            if matched.is_none() {
                // A new thread starting here, lowest priority.
                self.add(
                    &mut clist,
                    &mut seen,
                    step,
                    0,
                    vec![None; nslots],
                    pos,
                    prev,
                    cur,
                );
            }
            step += 1;
            let next_pos = pos + cur.map_or(1, |c| c.len_utf8());
            if clist.is_empty() {
                if matched.is_some() || cur.is_none() {
                    break;
                }
                // Nothing alive here: try the next position.
                pos = next_pos;
                continue;
            }
            let after = if cur.is_some() {
                text[next_pos.min(bytes.len())..].chars().next()
            } else {
                None
            };
            for (pc, caps) in std::mem::take(&mut clist) {
                match &self.prog[pc] {
                    Inst::Match => {
                        matched = Some(caps);
                        // Lower-priority threads die.
                        break;
                    }
                    inst => {
                        if inst.takes(cur) {
                            self.add(
                                &mut nlist,
                                &mut seen,
                                step,
                                pc + 1,
                                caps,
                                next_pos,
                                cur,
                                after,
                            );
                        }
                    }
                }
            }
            std::mem::swap(&mut clist, &mut nlist);
            if cur.is_none() {
                // Threads left after the end only wait on Match, handled above.
                for (pc, caps) in std::mem::take(&mut clist) {
                    if matches!(self.prog[pc], Inst::Match) {
                        matched = Some(caps);
                        break;
                    }
                }
                break;
            }
            pos = next_pos;
        }
        matched.map(|caps| self.captures(&caps))
    }

    /// The group spans of a match from its capture slots.
    fn captures(&self, caps: &[Option<usize>]) -> Captures {
        Captures {
            spans: (0..self.groups)
                .map(|g| match (caps[2 * g], caps[2 * g + 1]) {
                    (Some(a), Some(b)) => Some((a, b)),
                    _ => None,
                })
                .collect(),
        }
    }

    /// Follow the empty transitions from `pc` at `pos` and queue the
    /// threads that wait on a character (or on Match).
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        list: &mut Vec<(usize, Vec<Option<usize>>)>,
        seen: &mut [usize],
        step: usize,
        pc: usize,
        mut caps: Vec<Option<usize>>,
        pos: usize,
        prev: Option<char>,
        cur: Option<char>,
    ) {
        // Explicit stack, highest priority last pushed = first explored.
        let mut stack: Vec<(usize, Vec<Option<usize>>)> = Vec::new();
        let mut pc = pc;
        loop {
            if seen[pc] != step {
                seen[pc] = step;
                match &self.prog[pc] {
                    Inst::Jmp(t) => {
                        pc = *t;
                        continue;
                    }
                    Inst::Split(a, b) => {
                        stack.push((*b, caps.clone()));
                        pc = *a;
                        continue;
                    }
                    Inst::Save(slot) => {
                        caps[*slot] = Some(pos);
                        pc += 1;
                        continue;
                    }
                    Inst::LineStart => {
                        if prev.is_none() || prev == Some('\n') {
                            pc += 1;
                            continue;
                        }
                    }
                    Inst::LineEnd => {
                        if cur.is_none() || cur == Some('\n') || cur == Some('\r') {
                            pc += 1;
                            continue;
                        }
                    }
                    _ => list.push((pc, caps.clone())),
                }
            }
            match stack.pop() {
                Some((p, c)) => {
                    pc = p;
                    caps = c;
                }
                None => break,
            }
        }
    }

    /// Every non-overlapping match, left to right.
    pub fn find_all(&self, text: &str) -> Vec<Captures> {
        let mut out = Vec::new();
        let mut from = 0;
        while from <= text.len() {
            let Some(m) = self.find_at(text, from) else {
                break;
            };
            let (a, b) = m.span(0).unwrap_or((from, from));
            out.push(m);
            from = if b > a {
                b
            } else {
                // An empty match: step over one character.
                match text[b..].chars().next() {
                    Some(c) => b + c.len_utf8(),
                    None => break,
                }
            };
        }
        out
    }

    /// The last match in `text`.
    pub fn last_match(&self, text: &str) -> Option<Captures> {
        self.find_all(text).pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(p: &str, t: &str, g: usize) -> Option<String> {
        let pat = Pattern::new(p).unwrap();
        pat.find_at(t, 0)
            .and_then(|m| m.text(t, g).map(str::to_string))
    }

    #[test]
    fn basics() {
        assert_eq!(
            first("tpmC: ([0-9.]+)", "x tpmC: 14460.5 y", 1).as_deref(),
            Some("14460.5")
        );
        assert_eq!(first(r"(\d+) ops", "at 12 ops", 1).as_deref(), Some("12"));
        assert_eq!(first("a|b", "xxb", 0).as_deref(), Some("b"));
        assert_eq!(first("colou?r", "color", 0).as_deref(), Some("color"));
        assert_eq!(first("a{2,3}", "aaaa", 0).as_deref(), Some("aaa"));
        assert_eq!(first("a{2,3}?", "aaaa", 0).as_deref(), Some("aa"));
        assert_eq!(first("a.*b", "a1b2b", 0).as_deref(), Some("a1b2b"));
        assert_eq!(first("a.*?b", "a1b2b", 0).as_deref(), Some("a1b"));
        assert_eq!(first("^x", "ax\nxb", 0).as_deref(), Some("x"));
        assert_eq!(
            first(r"(\w+)$", "one two\nthree", 1).as_deref(),
            Some("two")
        );
        assert_eq!(first("[^ ]+", "  hey you", 0).as_deref(), Some("hey"));
        assert_eq!(first(r"\$(\d+)", "cost $40", 1).as_deref(), Some("40"));
        assert_eq!(first("(?:ab)+(c)", "ababc", 1).as_deref(), Some("c"));
        assert_eq!(first("x{", "ax{", 0).as_deref(), Some("x{"));
        assert_eq!(first("(a)|(b)", "b", 1), None);
        assert_eq!(first("(a*)*b", "aaab", 0).as_deref(), Some("aaab"));
        assert_eq!(first("é+", "café", 0).as_deref(), Some("é"));
        assert_eq!(first("q", "abc", 0), None);
        assert_eq!(first("^b", "a\nab\nba", 0).as_deref(), Some("b"));
        assert_eq!(first("c$", "ca\nbc", 0).as_deref(), Some("c"));
    }

    #[test]
    fn last_and_all() {
        let p = Pattern::new(r"score (\d+)").unwrap();
        let t = "score 1\nscore 22\nscore 333\n";
        assert_eq!(p.find_all(t).len(), 3);
        assert_eq!(p.last_match(t).unwrap().text(t, 1), Some("333"));
        let e = Pattern::new("").unwrap();
        assert_eq!(e.find_all("ab").len(), 3);
    }

    #[test]
    fn errors() {
        for bad in ["(", ")", "[a", "*a", "a{3,2}", r"\q", "(?=x)", "a{2000}"] {
            assert!(Pattern::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn linear_on_pathological_input() {
        let p = Pattern::new("(a|a)*(a|a)*(a|a)*b").unwrap();
        let t = "a".repeat(3000);
        assert!(p.find_at(&t, 0).is_none());
    }
}

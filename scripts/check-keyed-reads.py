#!/usr/bin/env python3
"""String-keyed reads of JSON data in src/ (issue 26: records carry typed
payloads; readers use `record.data_as::<T>()`, never keys).

    python3 scripts/check-keyed-reads.py [--list] [--max N] [SRC_DIR]

Counts, in code (comments blanked; the key strings kept), the reads of a
JSON value by a literal key: `x["key"]` (an index, not an array literal),
`.get("key")`, `.pointer("/a/b")`. Not counted, each with its reason, and
the number of each printed so nothing is hidden:
  - the payload leaf files (`experiments/FAMILY/payload.rs`), where keys may
    be named (serde renames, the readers of older runs' shapes);
  - the rooms below `results/` (base, machine, placement, counters,
    kernels, harness): by the floors they cannot hold a record;
  - `results/schema.rs`: the run document's own reader (its schema field,
    the machine snapshot of older runs), and `results/payload.rs`, the
    typed payload's (`ResultRecord::payload`, `data_as`);
  - look-ups on receivers that are not a record's data (EXEMPT_RECEIVERS:
    a record's params, the run's options, maps of reasons).
Also counted: any other use of a record's raw `data` field (`r.data`
but `data_as`, `.is_none()`, `.is_some()`): a helper handed a key, an
iteration over its object. `.get("…")` is also a map look-up, so the count
is an upper bound.
Prints the total and the files by count (--list: every read). Exits 1 when
the total is above RATCHET below (or --max N): a ratchet that only goes
down; lower RATCHET whenever a change removes keyed reads. Run by
tests/floors.rs.
Python 3 standard library only.
"""

import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rust_lex  # noqa: E402  scripts/rust_lex.py, beside this script

# Leaf files of payload structs, where keys may be named (serde renames, the
# readers of older runs' shapes): src/experiments/FAMILY/payload.rs.
PAYLOAD_FILE = re.compile(r"^src/experiments/[a-z_]+/payload\.rs$")

# Rooms below results/: by the floors they cannot hold a ResultRecord.
BELOW_RESULTS = ("base", "machine", "placement", "counters", "kernels", "harness")

# Files that read the run document itself, not a record's data.
DOCUMENT_FILES = {
    "src/results/schema.rs": "the run document's own reader (schema field, older machine snapshots)",
    "src/results/payload.rs": "the typed payload's own reader (ResultRecord::payload, data_as)",
}

# `.get("…")` / `["…"]` on these receivers is not a read of record data.
EXEMPT_RECEIVERS = {
    "params": "a record's params (the figure's key, not its data)",
    "options": "the run's options",
    "unavailable": "a map of reasons",
    "missing": "a map of reasons",
}

# The most keyed reads src/ may hold (issue 26's goal: 0).
RATCHET = 0

KEYED = re.compile(r'\[\s*"[A-Za-z_][A-Za-z0-9_]*"\s*\]|\.get\(\s*"[^"]*"\s*\)|\.pointer\(')

# A record's raw `data` taken in hand (`r.data.as_ref()?.get(k)`, a helper
# that reads by a key it is given, `.as_object()` over it): any use of the
# field but `data_as`, `.is_none()`, `.is_some()`.
RAW_DATA = re.compile(r'\.data\b(?!_as)(?!\s*\.\s*is_(?:none|some)\(\))')


def receiver(text, start):
    """The identifier just before a `.get(`/`[` at `start` (whitespace and
    line breaks of a method chain skipped), or ''."""
    i = start
    if text[i] == ".":
        pass
    i -= 1
    while i >= 0 and text[i].isspace():
        i -= 1
    j = i
    while j >= 0 and (text[j].isalnum() or text[j] == "_"):
        j -= 1
    return text[j + 1:i + 1]


def is_index(text, start):
    """`x["k"]` is an index; `&["k"]`, `vec!["k"]`, `(["k"]` are literals."""
    i = start - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i >= 0 and (text[i].isalnum() or text[i] in "_)]")


def code_with_strings(text):
    """Comments blanked, strings kept (the keys are strings)."""
    return rust_lex.blank(text, kinds=("comment",))


def test_ranges(text):
    """Line ranges of `#[cfg(test)]` modules: tests build documents by key.
    (A module's `tests.rs` beside it is tests as a whole: see main.)"""
    out = []
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        out.append((m.start(), rust_lex.closing_brace(text, m.end() - 1)))
    return out


def main():
    # A closed pipe (`| head`) ends the listing quietly, as other tools do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = sys.argv[1:]
    show, limit, src = False, RATCHET, None
    while args:
        a = args.pop(0)
        if a == "--list":
            show = True
        elif a == "--max":
            limit = int(args.pop(0))
        elif a.startswith("-"):
            sys.exit(f"check-keyed-reads: unknown option {a}")
        else:
            src = a
    src = src or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    per_file, reads, exempt = {}, [], {}

    def skip(why):
        exempt[why] = exempt.get(why, 0) + 1

    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, os.path.join(src, "..")).replace(os.sep, "/")
            room = rel.split("/")[1] if rel.count("/") >= 2 else ""
            raw = open(p, encoding="utf-8").read()
            text = code_with_strings(raw)
            tests = test_ranges(rust_lex.blank(raw))
            if f == "tests.rs":
                # A module's unit tests beside it (`X/tests.rs`, declared
                # `#[cfg(test)] mod tests;`): the whole file is tests.
                tests = [(0, len(text))]
            hits = list(KEYED.finditer(text)) + list(RAW_DATA.finditer(text))
            for m in sorted(hits, key=lambda m: m.start()):
                if any(a <= m.start() <= b for a, b in tests):
                    continue
                if m.group(0).startswith("[") and not is_index(text, m.start()):
                    continue
                if PAYLOAD_FILE.match(rel):
                    skip("payload leaf files")
                    continue
                if room in BELOW_RESULTS:
                    skip("rooms below results/ (no record there)")
                    continue
                if rel in DOCUMENT_FILES:
                    skip(DOCUMENT_FILES[rel])
                    continue
                recv = receiver(text, m.start())
                if recv in EXEMPT_RECEIVERS and not m.group(0).startswith(".pointer"):
                    skip(EXEMPT_RECEIVERS[recv])
                    continue
                line = text.count("\n", 0, m.start()) + 1
                per_file[rel] = per_file.get(rel, 0) + 1
                reads.append(f"{rel}:{line}: {m.group(0)}")
    total = sum(per_file.values())
    verdict = "ok" if total <= limit else "FAIL"
    print(f"check-keyed-reads: {verdict}: {total} string-keyed read(s) of record data in {len(per_file)} file(s) (at most {limit})")
    for why, n in sorted(exempt.items()):
        print(f"  not counted: {n:3d}  {why}")
    for rel, n in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:4d}  {rel}")
    if show:
        print("\n".join(reads))
    if total > limit:
        print(f"check-keyed-reads: FAIL: {total} above the ratchet {limit}: read the record's typed payload (ResultRecord::data_as) instead")
        sys.exit(1)


if __name__ == "__main__":
    main()

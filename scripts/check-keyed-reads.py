#!/usr/bin/env python3
"""String-keyed reads of JSON data in src/ (issue 26: records carry typed
payloads; readers use `record.data_as::<T>()`, never keys).

    python3 scripts/check-keyed-reads.py [--list] [--max N] [SRC_DIR]

Counts, in code (comments blanked; the key strings kept), the reads of a
JSON value by a literal key: `x["key"]`, `.get("key")`, `.pointer("/a/b")`.
`.get("…")` is also a map look-up, so the count is an upper bound; files
that hold payload definitions (PAYLOAD_FILES below, none yet) are exempt.
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
# readers of older runs' shapes).
PAYLOAD_FILES = set()

# The most keyed reads src/ may hold (issue 26's goal: 0).
RATCHET = 154

KEYED = re.compile(r'\[\s*"[A-Za-z_][A-Za-z0-9_]*"\s*\]|\.get\(\s*"[^"]*"\s*\)|\.pointer\(')


def code_with_strings(text):
    """Comments blanked, strings kept (the keys are strings)."""
    return rust_lex.blank(text, kinds=("comment",))


def test_ranges(text):
    """Line ranges of `#[cfg(test)]` modules: tests build documents by key."""
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
    per_file, reads = {}, []
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, os.path.join(src, ".."))
            if rel in PAYLOAD_FILES:
                continue
            raw = open(p, encoding="utf-8").read()
            text = code_with_strings(raw)
            tests = test_ranges(rust_lex.blank(raw))
            for m in KEYED.finditer(text):
                if any(a <= m.start() <= b for a, b in tests):
                    continue
                line = text.count("\n", 0, m.start()) + 1
                per_file[rel] = per_file.get(rel, 0) + 1
                reads.append(f"{rel}:{line}: {m.group(0)}")
    total = sum(per_file.values())
    verdict = "ok" if total <= limit else "FAIL"
    print(f"check-keyed-reads: {verdict}: {total} string-keyed read(s) in {len(per_file)} file(s) (at most {limit})")
    for rel, n in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:4d}  {rel}")
    if show:
        print("\n".join(reads))
    if total > limit:
        print(f"check-keyed-reads: FAIL: {total} above the ratchet {limit}: read the record's typed payload (ResultRecord::data_as) instead")
        sys.exit(1)


if __name__ == "__main__":
    main()

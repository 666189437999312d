#!/usr/bin/env python3
"""The longest functions of src/ (issue 26: nothing over 120 lines; issue
35: nothing over FN_MAX = 80 lines outside the kernels, src/kernels/, whose
measured loops are unrolled on purpose), and files over FILE_MAX lines
(issue 35: none).

    python3 scripts/fn-lengths.py [--over N] [--top K] [--max N] [SRC_DIR]

Prints how many functions are over N lines (default 120) and the longest
("longest: FILE:LINE NAME N lines"), then each of them, longest first (at
most K, default all). Exits 1 when more functions than RATCHET below are
over 120 lines, or (--max N) when any is longer than N, or when a file is
over FILE_MAX lines (each is listed), or when a function outside src/kernels/
is over FN_MAX lines (each is listed): a ratchet that only goes down; lower RATCHET whenever a change splits a long function. Run by
tests/floors.rs. A function's
length is its lines from the `fn` line to its closing brace, comments and
blank lines included (what a reader scrolls through). Comments and string
literals are blanked first (scripts/rust_lex.py), so braces in them do not
count. Python 3 standard library only.
"""

import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rust_lex  # noqa: E402  scripts/rust_lex.py, beside this script

# The most functions over 120 lines src/ may hold (issue 26's goal: 0).
RATCHET = 0
# The most lines a file of src/ may hold (issue 35), tests included.
FILE_MAX = 1000
# The most lines a function of src/ may hold outside src/kernels/ (issue 35).
FN_MAX = 80
# Where longer functions are allowed: the measured loops (unrolled kernels).
KERNELS = os.path.join("src", "kernels") + os.sep

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(path):
    text = rust_lex.blank(open(path, encoding="utf-8").read())
    for m in FN.finditer(text):
        # The body starts at the first `{` after the signature, unless a `;`
        # comes first (a declaration in a trait or an extern block).
        i = m.end()
        depth_paren = 0
        while i < len(text):
            c = text[i]
            if c in "([<":
                depth_paren += 1
            elif c in ")]>":
                depth_paren -= 1
            elif c == ";" and depth_paren <= 0:
                i = -1
                break
            elif c == "{" and depth_paren <= 0:
                break
            i += 1
        if i < 0 or i >= len(text):
            continue
        j = rust_lex.closing_brace(text, i)
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, j) + 1
        yield m.group(1), first, last - first + 1


def main():
    # A closed pipe (`| head`) ends the listing quietly, as other tools do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = sys.argv[1:]
    over, top, limit, src = 120, None, None, None
    while args:
        a = args.pop(0)
        if a in ("--over", "--top", "--max"):
            if not args:
                sys.exit(f"fn-lengths: {a} needs a number")
            v = int(args.pop(0))
            if a == "--over":
                over = v
            elif a == "--top":
                top = v
            else:
                limit = v
        elif a.startswith("-"):
            sys.exit(f"fn-lengths: unknown option {a}")
        else:
            src = a
    src = src or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    found = []
    big = []
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith(".rs"):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, os.path.join(src, ".."))
                found += [(n, rel, line, name) for name, line, n in functions(p)]
                with open(p, encoding="utf-8") as fh:
                    lines = sum(1 for _ in fh)
                if lines > FILE_MAX:
                    big.append((lines, rel))
    if not found:
        sys.exit("fn-lengths: no functions found")
    found.sort(reverse=True)
    over120 = sum(1 for f in found if f[0] > 120)
    too_long = [f for f in found if f[0] > FN_MAX and not f[1].startswith(KERNELS)]
    fail = (over120 > RATCHET or (limit is not None and found[0][0] > limit) or bool(big)
            or bool(too_long))
    n, rel, line, name = found[0]
    print(f"fn-lengths: {'FAIL' if fail else 'ok'}: {over120} function(s) over 120 lines "
          f"(at most {RATCHET}) of {len(found)}; longest: {rel}:{line} {name} {n} lines")
    long = [f for f in found if f[0] > over]
    print(f"{len(long)} function(s) over {over} lines")
    for n, rel, line, name in long[:top]:
        print(f"  {n:4d}  {rel}:{line}  {name}")
    print(f"{len(too_long)} function(s) over {FN_MAX} lines outside {KERNELS}")
    for n, rel, line, name in too_long:
        print(f"  {n:4d}  {rel}:{line}  {name}")
    print(f"{len(big)} file(s) over {FILE_MAX} lines")
    for n, rel in sorted(big, reverse=True):
        print(f"  {n:5d}  {rel}")
    if fail:
        sys.exit(1)


if __name__ == "__main__":
    main()

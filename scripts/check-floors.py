#!/usr/bin/env python3
"""Check the import graph of src/ against the floors of docs/architecture.md.

Every `use` path and every inline `crate::…`, `super::…`, `self::…` path (and
paths through a child module, e.g. `cache::read` in machine/mod.rs) in
src/**/*.rs is resolved to the file of the deepest module it names. A file
belongs to a room: its first folder under src/ (src/machine/cache.rs is in
`machine`), or `lib` / `main` for src/lib.rs and src/main.rs.

Three rules:
  (a) floors: a room may import only from its own floor or a lower one;
      rooms on the same floor may not import each other either;
  (b) floors inside experiments/ (INNER_FLOORS below): the trait and its
      context, then the shared helpers and each family's payload leaf, then
      the experiments, then the renderers, then the registry; a file imports
      only from its own inner floor or a lower one;
  (c) no import cycle at all (a strongly connected component of the file
      graph with two or more files), inside one folder too, except the ones
      ALLOWED_CYCLES lists by name with the reason (docs/architecture.md
      lists the same).

Prints each violation and exits 1; otherwise prints a one-line summary and
exits 0. Python 3 standard library only. Run from anywhere:
    python3 scripts/check-floors.py [SRC_DIR] [--cycles]
`--cycles` also lists every import cycle, allowed or not.
"""

import os
import re
import sys

import rust_lex  # scripts/rust_lex.py, beside this script

# The floors, lowest first. A room imports only from floors below its own.
# Keep in step with docs/architecture.md ("Floors").
FLOORS = [
    ["base"],  # CpuSet, Stats, Sysroot, Timer, number and byte formatting
    # reads what the machine is; pinning, teams, memory policy, buffers,
    # machine switches; perf events. Side by side: none imports the others.
    ["machine", "placement", "counters"],
    ["kernels"],  # measured loops (the memory ones run in placement's buffers)
    ["harness"],  # timing, repetitions, counted regions
    ["results"],  # the run document, its records, the stores
    ["view"],  # format-neutral views of figures (docs/views.md); no printer yet
    ["experiments"],  # plan, run through the harness, return records
    ["report"],  # text, HTML, comparison, advice
    ["app"],  # one file per subcommand
    ["lib"],  # src/lib.rs: declares the rooms
    ["main"],  # src/main.rs: parses arguments, dispatches to app/
]

# Imports allowed despite the rules, each with its reason: (from_room, to_room, reason).
# Empty: every violation is fixed in the code.
EXCEPTIONS = []

FLOOR_OF = {room: i for i, rooms in enumerate(FLOORS) for room in rooms}

# Floors inside experiments/, lowest first: (name, test on the path
# relative to src/). The first floor whose test matches is the file's.
INNER_FLOORS = [
    ("the trait", lambda f: f == "experiments/experiment.rs"),
    ("shared helpers and payloads", lambda f: f == "experiments/common.rs" or f.endswith("/payload.rs")),
    ("renderers", lambda f: f == "experiments/render.rs" or f.endswith("/text.rs") or f.endswith("/html.rs") or f.endswith("/view.rs") or f.endswith("_view.rs")),
    ("the registry", lambda f: f in ("experiments/registry.rs", "experiments/mod.rs")),
    ("experiments", lambda f: True),
]
INNER_ORDER = ["the trait", "shared helpers and payloads", "experiments", "renderers", "the registry"]


def inner_floor(rel):
    """(rank, name) of a file of experiments/ among INNER_ORDER."""
    for name, test in INNER_FLOORS:
        if test(rel):
            return INNER_ORDER.index(name), name
    raise AssertionError(rel)


# Cycles allowed, each as (sorted tuple of files relative to src/, reason).
# Empty: every cycle is broken in the code.
ALLOWED_CYCLES = []


def strip_comments_and_strings(text):
    """Blank out comments, string and char literals (keeping newlines)."""
    return rust_lex.blank(text)


def expand_use_tree(tree):
    """`a::{b, c::{d, e as f}, self}` -> [[a,b], [a,c,d], [a,c,e], [a]]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    paths = []

    def walk(s, prefix):
        # split s at top-level commas
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for part in parts:
            if not part:
                continue
            brace = part.find("{")
            if brace >= 0:
                head = part[:brace].rstrip(":")
                inner = part[brace + 1:part.rfind("}")]
                segs = [x for x in head.split("::") if x]
                walk(inner, prefix + segs)
            else:
                segs = [x for x in part.split("::") if x]
                if segs and segs[-1] == "self":
                    segs = segs[:-1]
                if segs and segs[-1] == "*":
                    segs = segs[:-1]
                paths.append(prefix + segs)

    walk(tree, [])
    return paths


def main():
    args = [a for a in sys.argv[1:] if a != "--cycles"]
    src = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    src = os.path.normpath(src)

    # module path (tuple) -> file (relative to src)
    modules = {}
    files = []
    for dirpath, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), src).replace(os.sep, "/")
            files.append(rel)
    files.sort()
    for rel in files:
        parts = rel[:-3].split("/")
        if rel in ("lib.rs", "main.rs"):
            mod = ()
        elif parts[-1] == "mod":
            mod = tuple(parts[:-1])
        else:
            mod = tuple(parts)
        if rel == "main.rs":
            continue
        modules[mod] = rel
    module_of = {v: k for k, v in modules.items()}
    module_of["main.rs"] = ("<main>",)

    def room(rel):
        if "/" in rel:
            return rel.split("/", 1)[0]
        return rel[:-3]

    def folder(rel):
        return rel.rsplit("/", 1)[0] if "/" in rel else "."

    def resolve(segs):
        """Deepest known module named by an absolute path; its file."""
        segs = list(segs)
        for k in range(len(segs), -1, -1):
            if tuple(segs[:k]) in modules:
                return modules[tuple(segs[:k])]
        return None

    edges = {}  # file -> {file: first line}
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            raw = f.read()
        text = strip_comments_and_strings(raw)
        here = module_of[rel]
        is_main = rel == "main.rs"
        children = {m[-1] for m in modules if len(m) == len(here) + 1 and m[:len(here)] == here} if not is_main else set()

        # inline `mod name {` blocks: ranges, to resolve `super::` inside them
        inline = []
        for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
            j = rust_lex.closing_brace(text, m.end() - 1)
            inline.append((m.start(), j, m.group(1)))

        def current_module(pos):
            mod = list(here)
            for start, end, name in sorted(inline):
                if start <= pos <= end:
                    mod.append(name)
            return mod

        def absolute(segs, pos):
            if not segs:
                return None
            head = segs[0]
            if is_main:
                if head in ("cpuscope", "crate"):
                    return segs[1:]
                return None
            if head == "crate":
                return segs[1:]
            if head in ("self", "super"):
                mod = current_module(pos)
                rest = list(segs)
                if rest[0] == "self":
                    rest = rest[1:]
                while rest and rest[0] == "super":
                    if not mod:
                        return None
                    mod = mod[:-1]
                    rest = rest[1:]
                return mod + rest
            if head in children and current_module(pos) == list(here):
                return list(here) + segs
            return None

        out = edges.setdefault(rel, {})

        def add(segs, pos):
            target_mod = absolute(segs, pos)
            if target_mod is None:
                return
            target = resolve(target_mod)
            if target is None or target == rel:
                return
            line = text.count("\n", 0, pos) + 1
            out.setdefault(target, line)

        # use statements (blanked out afterwards so inline scanning skips them)
        text_wo_use = list(text)
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            for segs in expand_use_tree(m.group(1)):
                add(segs, m.start())
            for k in range(m.start(), m.end()):
                if text_wo_use[k] != "\n":
                    text_wo_use[k] = " "
        body = "".join(text_wo_use)
        heads = ["crate", "super", "self"] + (["cpuscope"] if is_main else sorted(children))
        pat = re.compile(r"(?<![\w:])(" + "|".join(map(re.escape, heads)) + r")((?:\s*::\s*\w+)+)")
        for m in pat.finditer(body):
            segs = [m.group(1)] + [s for s in re.split(r"\s*::\s*", m.group(2)) if s]
            add(segs, m.start())

    violations = []

    # (a) floors
    allowed = {(a, b) for a, b, _ in EXCEPTIONS}
    unknown = sorted({room(f) for f in files} - set(FLOOR_OF))
    for r in unknown:
        violations.append(f"room '{r}' has no floor: add it to FLOORS in scripts/check-floors.py")
    for a in sorted(edges):
        for b, line in sorted(edges[a].items()):
            ra, rb = room(a), room(b)
            if ra == rb or ra not in FLOOR_OF or rb not in FLOOR_OF or (ra, rb) in allowed:
                continue
            if FLOOR_OF[rb] >= FLOOR_OF[ra]:
                how = "a higher floor" if FLOOR_OF[rb] > FLOOR_OF[ra] else "the same floor"
                violations.append(f"floor: src/{a}:{line} ({ra}, floor {FLOOR_OF[ra]}) imports src/{b} ({rb}, {how} {FLOOR_OF[rb]})")

    # (b) floors inside experiments/
    for a in sorted(edges):
        if room(a) != "experiments":
            continue
        ra, na = inner_floor(a)
        for b, line in sorted(edges[a].items()):
            if room(b) != "experiments":
                continue
            rb, nb = inner_floor(b)
            if rb > ra:
                violations.append(f"inner floor: src/{a}:{line} ({na}) imports src/{b} ({nb}, a higher floor of experiments/)")

    # (c) cycles: Tarjan's strongly connected components
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        # iterative Tarjan
        work = [(v, iter(sorted(edges.get(v, {}))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    advanced = True
                    break
                elif w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                sccs.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    allowed_cycles = {tuple(files_) for files_, _ in ALLOWED_CYCLES}
    for comp in sccs:
        if len(comp) > 1 and tuple(comp) not in allowed_cycles:
            members = set(comp)
            via = [f"src/{a} -> src/{b}" for a in comp for b in sorted(edges.get(a, {})) if b in members]
            where = "across folders" if len({folder(f) for f in comp}) > 1 else "inside " + folder(comp[0]) + "/"
            violations.append(f"cycle {where}: " + ", ".join("src/" + f for f in comp) + " (via " + "; ".join(via) + ")")

    n_edges = sum(len(v) for v in edges.values())
    if "--cycles" in sys.argv:
        for comp in sccs:
            if len(comp) > 1:
                allowed = " (allowed)" if tuple(comp) in allowed_cycles else ""
                print("cycle: " + ", ".join(comp) + allowed)
    if violations:
        for v in violations:
            print(v)
        print(f"check-floors: {len(violations)} violation(s) in {len(files)} files, {n_edges} imports")
        return 1
    order = " < ".join("{" + ", ".join(f) + "}" if len(f) > 1 else f[0] for f in FLOORS)
    inner = " < ".join(INNER_ORDER)
    print(f"check-floors: ok: {len(files)} files, {n_edges} imports, no upward import, no cycle "
          f"({len(ALLOWED_CYCLES)} allowed) ({order}; inside experiments/: {inner})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

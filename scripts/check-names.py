#!/usr/bin/env python3
"""Check that no experiment or metric name is a string literal outside its
own module (issue 13): reports and advice find records through the typed
constants each experiment declares, never through string literals.

Names are read from src/experiments/**/*.rs:
  - an experiment's name from `pub const EXP: &str = "...";`
  - a metric's name from `MetricId::new(EXP, "...")` (a `pub const` of the
    module, e.g. `pub const CURVE: MetricId = MetricId::new(EXP, "curve");`).
A name's own modules are the files that declare it ("latency" is latency's
experiment and a metric of loaded_latency and numa_matrix: it may be
written in those three modules and nowhere else); an experiment that is a
folder (`experiments/memory/latency/mod.rs`) owns its names in every file
of its folder (its `view.rs`).

Then every string literal of src/**/*.rs (comments skipped; plain, raw and
byte strings) that equals a name is a violation outside the name's own
modules, except:
  (a) a JSON object key: a literal followed by `:` (only `json!({...})`
      has that form) names a field of a record's `data`, `counters` or of
      a document, not a record ("curve", "matrix", "ghz" are data fields);
  (b) a key look-up: a literal alone inside `[...]` (`d["matrix"]`) or as
      the only argument of `.get(...)` (`d.get("curve")`) reads a field of
      a JSON value or a params map, not a record (a map keyed by experiment
      names would pass too: none exists, records are found by `Run::records`
      and `ResultRecord::is`);
  (c) the counters' own namespace: the derived metrics of a counted region
      (`counters::metrics`: "ipc", "ghz", ...) are named in src/counters/,
      src/harness/counted.rs, src/harness/child.rs (a counted child command)
      and src/report/stat_text.rs; there "ipc" and
      "ghz" are the counters' names, which `simd`'s and `workloads`' figures
      of the same name take over;
  (d) the entries of ALLOW below, each with its reason.
Inside src/experiments/ a record must also be named through a constant: a
string literal as the metric of `ResultRecord::new(EXP, ...)` or
`ResultRecord::unavailable(EXP, ...)` is a violation (an undeclared name).

Prints each violation and exits 1; otherwise prints a one-line summary and
exits 0. `--except PATH...` (files or folders, relative to the repository
root or to src/) lists the violations found there as "excepted" without
failing: for files whose sweep is still to come. Python 3 standard library
only. Run from anywhere:
    python3 scripts/check-names.py [SRC_DIR] [--except PATH...]
"""

import argparse
import os
import re
import sys

import rust_lex  # scripts/rust_lex.py, beside this script

# Literals allowed outside their own modules, each with its reason:
# (file under src/, literals, context: a substring the literal's line must
# hold, reason). Each is a word in another role that happens to equal a
# name. Keep it short.
ALLOW = [
    ("kernels/memory.rs", ("read", "write", "copy", "triad"), "BwKernel::",
     "BwKernel::name(): a STREAM kernel's own name (CLI value, `kernel` param); "
     "bandwidth names its figures after its kernels (bandwidth::kernel_metric, tested)"),
    ("experiments/common.rs", ("L1d", "L2", "L3", "L4"), "pub const LEVEL_NAMES",
     "the cache levels CacheFacts looks up, by their `info` names (machine::cache); "
     "latency names its per-level figures after them (latency::LEVELS, tested)"),
    ("experiments/common.rs", ("placement",), "pub const PLACEMENT_PARAM",
     "the params key of a thread placement (bandwidth and sync write it, the reports "
     "read it through this constant), not the placement experiment"),
    ("experiments/memory/bandwidth/plan.rs", ("dram",), "pub const DRAM_SCOPE",
     "the `scope` param's value for arrays in DRAM: a place, not latency's figure"),
    ("experiments/compute/placement_study/mod.rs", ("triad",), "SetWorkload::Triad =>",
     "the placement study's own workload name (CLI value, `workload` param), not bandwidth's figure"),
    ("experiments/compute/rate/workload.rs", ("bc_pow", "bc_pi"), '"bc-p',
     "rate's command-line spellings of its workloads (`--workload bc_pow`), parsed, not a record's name"),
    ("machine/freq.rs", ("ghz",), "unit.starts_with",
     "a unit suffix parsed from a declared clock (\"2.40GHz\"), not a record"),
    ("machine/topology.rs", ("efficiency",), '"efficiency"]',
     "a core type's name (performance / efficiency cores), not a record"),
    ("report/compare/mod.rs", ("L3",), '("L3", l3)',
     "the machine facts' row for the L3 cache size (from the machine snapshot), not latency's figure"),
]

# (c): files of the counters' namespace, and the names they may write.
COUNTER_FILES = ("counters/", "harness/counted.rs", "harness/child.rs", "harness/child/", "report/stat_text.rs")
COUNTER_NAMES = {"ipc", "ghz"}


def literals(text):
    """Yield (start, end, content) of every string literal, comments skipped."""
    for kind, start, end, body in rust_lex.spans(text):
        if kind == "string":
            yield start, end, body


def in_folder_of(rel, owner):
    """An experiment that is a folder (`.../latency/mod.rs`) owns its names
    in every file of that folder (its `view.rs`, ...)."""
    if not owner.endswith("/mod.rs") or owner.count("/") < 3:
        return False
    return rel.startswith(owner[: -len("mod.rs")])


def declared(src):
    """{name: {file: 'experiment' | 'metric'}} from src/experiments/**/*.rs."""
    names = {}
    exp_dir = os.path.join(src, "experiments")
    paths = []
    for dirpath, _, fnames in os.walk(exp_dir):
        paths += [os.path.join(dirpath, n) for n in fnames if n.endswith(".rs")]
    for path in sorted(paths):
        rel = os.path.relpath(path, src).replace(os.sep, "/")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in re.finditer(r'pub\s+const\s+EXP\s*:\s*&(?:\'static\s+)?str\s*=\s*"([^"]+)"\s*;', text):
            names.setdefault(m.group(1), {})[rel] = "experiment"
        for m in re.finditer(r'MetricId::new\(\s*EXP\s*,\s*"([^"]+)"\s*\)', text):
            names.setdefault(m.group(1), {}).setdefault(rel, "metric")
    return names


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="no experiment or metric name as a string literal outside its own module")
    ap.add_argument("src", nargs="?", default=os.path.join(here, "..", "src"), help="the src/ folder (default: the repository's)")
    ap.add_argument("--except", dest="excepted", nargs="+", default=[], metavar="PATH",
                    help="files or folders (relative to the repository root or src/) whose violations are listed without failing")
    args = ap.parse_args()
    src = os.path.normpath(args.src)

    def under_src(p):
        p = p.replace(os.sep, "/").rstrip("/")
        return p[len("src/"):] if p.startswith("src/") else p

    excepted = [under_src(p) for p in args.excepted]
    for e in excepted:
        if not os.path.exists(os.path.join(src, e)):
            print(f"check-names: --except {e}: no such file or folder under {src}")
            return 2

    def is_excepted(rel):
        return any(rel == e or rel.startswith(e + "/") for e in excepted)

    names = declared(src)
    if not names:
        print(f"check-names: no experiment declares a name under {src}/experiments")
        return 1
    allow = {}
    for f, lits, ctx, _ in ALLOW:
        for lit in lits:
            allow.setdefault((f, lit), []).append(ctx)
    used_allow = set()
    exempt = {"json": 0, "counters": 0, "allow": 0}

    files = []
    for dirpath, _, fnames in os.walk(src):
        for name in fnames:
            if name.endswith(".rs"):
                files.append(os.path.relpath(os.path.join(dirpath, name), src).replace(os.sep, "/"))
    files.sort()

    violations, excused = [], []
    n_lits = 0
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        found = []
        for start, end, lit in literals(text):
            n_lits += 1
            line = text.count("\n", 0, start) + 1
            # inside the experiments: a record's metric written as a literal
            if rel.startswith("experiments/"):
                before = text[max(0, start - 80):start]
                if re.search(r"ResultRecord::(?:new|unavailable)\(\s*EXP\s*,\s*$", before):
                    found.append((line, f'"{lit}" names a record of {rel} without a declared MetricId (declare `pub const ...: MetricId = MetricId::new(EXP, "{lit}")`)'))
                    continue
            owners = names.get(lit)
            if not owners or rel in owners or any(in_folder_of(rel, o) for o in owners):
                continue
            prev = text[max(0, start - 6):start].rstrip()
            rest = text[end:end + 3].lstrip()
            if (rest.startswith(":") and not rest.startswith("::")) \
                    or (prev.endswith("[") and rest.startswith("]")) \
                    or (prev.endswith(".get(") and rest.startswith(")")):
                exempt["json"] += 1
                continue  # (a), (b): a JSON field
            if lit in COUNTER_NAMES and rel.startswith(COUNTER_FILES):
                exempt["counters"] += 1
                continue  # (c) the counters' namespace
            ctxs = allow.get((rel, lit), [])
            hit = next((c for c in ctxs if c in lines[line - 1]), None)
            if hit is not None:
                used_allow.add((rel, lit, hit))
                exempt["allow"] += 1
                continue  # (d) allowed, with its reason
            what = " and ".join(sorted({f"{kind} name" for kind in owners.values()}))
            found.append((line, f'"{lit}" is the {what} declared in ' + ", ".join("src/" + o for o in sorted(owners))))
        for line, msg in found:
            (excused if is_excepted(rel) else violations).append(f"src/{rel}:{line}: {msg}")

    stale = [(f, lit, ctx) for f, lits, ctx, _ in ALLOW for lit in lits if (f, lit, ctx) not in used_allow]
    for f, lit, ctx in stale:
        violations.append(f'ALLOW entry (src/{f}, "{lit}", {ctx!r}) matches nothing: remove it')

    n_exp = sum(1 for o in names.values() if "experiment" in o.values())
    n_met = sum(1 for o in names.values() if "metric" in o.values())
    tail = (f"{len(files)} files, {n_lits} literals, {n_exp} experiment and {n_met} metric names; "
            f"passed: {exempt['json']} JSON fields, {exempt['counters']} counters' names, "
            f"{exempt['allow']} allowed in {len(ALLOW)} entries")
    for e in excused:
        print(f"excepted: {e}")
    if excused:
        print(f"check-names: {len(excused)} excepted literal(s) in " + ", ".join(excepted))
    if violations:
        for v in violations:
            print(v)
        print(f"check-names: {len(violations)} violation(s) ({tail})")
        return 1
    print(f"check-names: ok: no experiment or metric name as a literal outside its own module ({tail})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

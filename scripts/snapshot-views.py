#!/usr/bin/env python3
"""Snapshot every view cpuscope prints of stored runs, and diff two snapshots.

    CPUSCOPE=BIN [RENDER_REPORT=BIN] python3 scripts/snapshot-views.py OUTDIR [RUN.json ...]
    CPUSCOPE=BIN python3 scripts/snapshot-views.py --fresh OUT.json
    python3 scripts/snapshot-views.py --diff A B

OUTDIR: imports the runs of tests/fixtures/runs (and each RUN.json given)
into a new SQLite store in a temporary directory and writes there, one file
per view, the standard output of: `show RUN`, `show RUN --all`, `show RUN
--summary`, `show RUN --json`, the run's HTML report, `compare` of every
pair and of all the runs (text, --json, --csv, --markdown, --html, and
--published as text), `fleet` (text, --json, --html) over the stored runs
and over a synthetic fleet, and `runs` (text, --json). A view whose
standard error is not empty, or whose exit status is not 0, also gets
VIEW.stderr / VIEW.rc. MANIFEST lists the files and the command of each.

The HTML report of a run has no command of its own (`run` writes it as it
measures): it is drawn by `examples/render_report.rs` (`cargo build
--example render_report`), found as RENDER_REPORT or beside CPUSCOPE in
target/*/examples/; without it the report views are left out and MANIFEST
says so.

The synthetic fleet: five copies of vm-2cpu-quick.json, hosts fleet-a to
fleet-e, with every value (and its stats) scaled by a fixed factor per host
(fleet-e ×0.6, so it stands out), so that `fleet` has a group large enough
for verdicts and outliers. Nothing is random.

Determinism: every command runs with TZ=UTC, LC_ALL=C, COLUMNS=100,
NO_COLOR=1, TERM=dumb and HOME, XDG_DATA_HOME and TMPDIR inside the
temporary directory, from that directory, with the store given as the
relative path `views.db` (so the store's name in `runs` and `fleet` is the
same on every machine). No view of a stored run embeds the time it was
drawn or a random id (checked by running twice: the two snapshots are
identical); `fleet --since`, which counts from now, is not used. The ids
and times of a run are its own (a `--fresh` run has a new id each time: make
it once and give the same file to both snapshots).

--fresh OUT.json: a quick run with CPUSCOPE (`run --profile quick --no-html`)
into a temporary store, exported to OUT.json. Its figures differ from run
to run; give it as RUN.json to the snapshots of both binaries.

--diff A B: names each view that differs (or is in one snapshot only), then
runs scripts/run-keys.py on every `show RUN --json` pair (the figure keys and
the data paths of each figure). Exits 1 if anything differs, 0 otherwise.

A before/after check of a change to the report code:

    CPUSCOPE=old/cpuscope scripts/snapshot-views.py --fresh /tmp/fresh-old.json
    CPUSCOPE=new/cpuscope scripts/snapshot-views.py --fresh /tmp/fresh-new.json
    python3 scripts/run-keys.py /tmp/fresh-old.json /tmp/fresh-new.json
    CPUSCOPE=old/cpuscope scripts/snapshot-views.py /tmp/snap-old /tmp/fresh-old.json
    CPUSCOPE=new/cpuscope scripts/snapshot-views.py /tmp/snap-new /tmp/fresh-old.json
    scripts/snapshot-views.py --diff /tmp/snap-old /tmp/snap-new

Python 3 standard library only.
"""

import copy
import difflib
import itertools
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "runs"
STORE = "views.db"
FLEET_STORE = "fleet.db"
# Host suffix and the factor every value of that host is scaled by.
FLEET = [("a", 1.00), ("b", 1.01), ("c", 0.99), ("d", 1.02), ("e", 0.60)]
STAT_FIELDS = ("median", "min", "max", "mean", "stddev")


def die(msg):
    print(f"snapshot-views: error: {msg}", file=sys.stderr)
    sys.exit(2)


def binary(name, default=None):
    path = os.environ.get(name, default)
    if not path:
        die(f"set {name} to the cpuscope binary to snapshot")
    p = pathlib.Path(path).resolve()
    if not os.access(p, os.X_OK):
        die(f"{name}={path} is not an executable file")
    return p


def renderer(cpuscope):
    env = os.environ.get("RENDER_REPORT")
    if env:
        return binary("RENDER_REPORT")
    for p in (cpuscope.parent / "examples" / "render_report",):
        if os.access(p, os.X_OK):
            return p
    return None


def environment(tmp):
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "XDG_DATA_HOME": str(tmp / "xdg"),
        "TMPDIR": str(tmp),
        "TERM": "dumb",
        "TZ": "UTC",
        "LC_ALL": "C",
        "COLUMNS": "100",
        "NO_COLOR": "1",
    }


class Snapshot:
    def __init__(self, out, tmp, cpuscope, render):
        self.out, self.tmp, self.bin, self.render = out, tmp, cpuscope, render
        self.env = environment(tmp)
        self.manifest = []

    def call(self, argv, check=True):
        p = subprocess.run(argv, cwd=self.tmp, env=self.env, capture_output=True)
        if check and p.returncode != 0:
            die(f"{' '.join(map(str, argv))}: exit {p.returncode}: {p.stderr.decode(errors='replace').strip()}")
        return p

    def view(self, name, args, store=STORE, files=()):
        """Run `cpuscope --store STORE ARGS` and keep its output as NAME."""
        argv = [str(self.bin), "--store", store, *args]
        p = self.call(argv, check=False)
        self.keep(name, p, "cpuscope --store " + store + " " + " ".join(args))
        for made, kept in files:
            src = self.tmp / made
            if src.exists():
                (self.out / kept).write_bytes(src.read_bytes())
                src.unlink()
                self.manifest.append(f"{kept}\t(written by the command of {name})")
            else:
                self.manifest.append(f"{kept}\tNOT WRITTEN by the command of {name}")

    def keep(self, name, p, what):
        dest = self.out / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(p.stdout)
        if p.stderr:
            (self.out / (name + ".stderr")).write_bytes(p.stderr)
        if p.returncode != 0:
            (self.out / (name + ".rc")).write_text(f"{p.returncode}\n")
        self.manifest.append(f"{name}\t{what}")

    def import_runs(self, docs, store):
        self.call([str(self.bin), "--store", store, "import", *map(str, docs)])


def scaled(doc, suffix, factor):
    """A copy of run DOC as host fleet-SUFFIX with every value times FACTOR."""
    d = copy.deepcopy(doc)
    d["host"] = f"fleet-{suffix}"
    d["id"] = d["id"].split("Z-")[0] + f"Z-fleet-{suffix}-000{FLEET.index((suffix, factor))}"
    for r in d["results"]:
        if isinstance(r.get("value"), (int, float)):
            r["value"] *= factor
        stats = r.get("stats") or {}
        for k in STAT_FIELDS:
            if isinstance(stats.get(k), (int, float)):
                stats[k] *= factor
    return d


def fleet_docs(tmp):
    base = json.loads((FIXTURES / "vm-2cpu-quick.json").read_text())
    paths = []
    for suffix, factor in FLEET:
        p = tmp / f"fleet-{suffix}.json"
        p.write_text(json.dumps(scaled(base, suffix, factor)))
        paths.append(p)
    return paths


def show_views(s, runs):
    for name, rid in runs:
        s.view(f"show/{name}.txt", ["show", rid])
        s.view(f"show/{name}.all.txt", ["show", rid, "--all"])
        s.view(f"show/{name}.summary.txt", ["show", rid, "--summary"])
        s.view(f"show/{name}.json", ["show", rid, "--json"])
        if s.render is None:
            s.manifest.append(f"report/{name}.html\tLEFT OUT: no render_report binary")
            continue
        doc = s.tmp / f"{name}.export.json"
        s.call([str(s.bin), "--store", STORE, "export", rid, "-o", str(doc)])
        p = s.call([str(s.render), str(doc)], check=False)
        s.keep(f"report/{name}.html", p, f"render_report (export {rid})")


def compare_views(s, runs):
    sets = [list(c) for c in itertools.combinations(runs, 2)] + [list(runs)]
    for group in sets:
        name = "compare/" + "+".join(n for n, _ in group)
        ids = [rid for _, rid in group]
        s.view(f"{name}.txt", ["compare", *ids, "--html", "cmp.html"], files=[("cmp.html", f"{name}.html")])
        s.view(f"{name}.json", ["compare", *ids, "--json"])
        s.view(f"{name}.csv", ["compare", *ids, "--csv"])
        s.view(f"{name}.md", ["compare", *ids, "--markdown"])
        s.view(f"{name}.published.txt", ["compare", *ids, "--published"])


def fleet_views(s, store, name):
    s.view(f"fleet/{name}.txt", ["fleet", "--html", "fleet.html"], store, [("fleet.html", f"fleet/{name}.html")])
    s.view(f"fleet/{name}.json", ["fleet", "--json"], store)


def stored_runs(s):
    p = s.call([str(s.bin), "--store", STORE, "runs", "--json"])
    return [r["id"] for r in json.loads(p.stdout)["runs"]]


def snapshot(out, extra):
    cpuscope = binary("CPUSCOPE")
    docs = sorted(FIXTURES.glob("*.json")) + [pathlib.Path(e).resolve() for e in extra]
    stems = [d.stem for d in docs]
    if len(set(stems)) != len(stems):
        die(f"two run documents share a file name (views are named after it): {', '.join(stems)}")
    out = pathlib.Path(out)
    if out.exists() and any(out.iterdir()):
        die(f"{out} exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cpuscope-views-") as t:
        tmp = pathlib.Path(t)
        s = Snapshot(out, tmp, cpuscope, renderer(cpuscope))
        s.import_runs(docs, STORE)
        ids = {json.loads(d.read_text())["id"]: d.stem for d in docs}
        runs = [(ids[rid], rid) for rid in stored_runs(s)]
        show_views(s, runs)
        compare_views(s, runs)
        fleet_views(s, STORE, "stored")
        s.import_runs(fleet_docs(tmp), FLEET_STORE)
        fleet_views(s, FLEET_STORE, "synthetic")
        s.view("runs.txt", ["runs"])
        s.view("runs.json", ["runs", "--json"])
    (out / "MANIFEST").write_text("\n".join(s.manifest) + "\n")
    print(f"snapshot-views: {len(s.manifest)} views of {len(runs)} runs in {out}")
    return 0


def fresh(out):
    cpuscope = binary("CPUSCOPE")
    with tempfile.TemporaryDirectory(prefix="cpuscope-fresh-") as t:
        tmp = pathlib.Path(t)
        s = Snapshot(tmp, tmp, cpuscope, None)
        s.call([str(cpuscope), "--store", STORE, "run", "--profile", "quick", "--no-html", "--quiet"])
        rid = stored_runs(s)[0]
        s.call([str(cpuscope), "--store", STORE, "export", rid, "-o", str(pathlib.Path(out).resolve())])
    print(f"snapshot-views: run {rid} written to {out}")
    return 0


def files(d):
    return {str(p.relative_to(d)) for p in pathlib.Path(d).rglob("*") if p.is_file()}


def diff(a, b):
    fa, fb = files(a), files(b)
    bad = 0
    for f in sorted(fa - fb):
        print(f"only in {a}: {f}")
        bad += 1
    for f in sorted(fb - fa):
        print(f"only in {b}: {f}")
        bad += 1
    same = 0
    for f in sorted(fa & fb):
        x, y = (pathlib.Path(a) / f).read_bytes(), (pathlib.Path(b) / f).read_bytes()
        if x == y:
            same += 1
            continue
        bad += 1
        lines = list(difflib.unified_diff(x.decode(errors="replace").splitlines(), y.decode(errors="replace").splitlines(), lineterm="", n=0))
        gone = sum(1 for l in lines if l.startswith("-") and not l.startswith("---"))
        new = sum(1 for l in lines if l.startswith("+") and not l.startswith("+++"))
        print(f"differs: {f} (-{gone} +{new} lines)")
    print(f"snapshot-views: {same} views identical, {bad} differ or are missing")
    keys_bad = 0
    for f in sorted(fa & fb):
        if f.startswith("show/") and f.endswith(".json"):
            p = subprocess.run([sys.executable, str(ROOT / "scripts" / "run-keys.py"), str(pathlib.Path(a) / f), str(pathlib.Path(b) / f)], capture_output=True, text=True)
            summary = [l for l in p.stdout.splitlines() if l.startswith("run-keys") or l.startswith("data-paths")]
            print(f"{f}: " + "; ".join(summary or [p.stdout.strip()]))
            keys_bad += p.returncode != 0
    return 1 if bad or keys_bad else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "--diff":
        if len(argv) != 4:
            die("usage: snapshot-views.py --diff A B")
        return diff(argv[2], argv[3])
    if len(argv) >= 2 and argv[1] == "--fresh":
        if len(argv) != 3:
            die("usage: snapshot-views.py --fresh OUT.json")
        return fresh(argv[2])
    if len(argv) < 2 or argv[1].startswith("-"):
        die("usage: snapshot-views.py OUTDIR [RUN.json ...] | --fresh OUT.json | --diff A B")
    return snapshot(argv[1], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

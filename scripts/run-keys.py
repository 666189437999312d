#!/usr/bin/env python3
"""Compare the figure keys of two `cpuscope run --json` documents.

    python3 scripts/run-keys.py BEFORE.json AFTER.json

Prints the keys only one of them has (each as experiment, metric and the
rest of the key) and a one-line count; then, for every figure both have,
the paths inside its `data` (objects by key, arrays as `[]`) only one has,
and a count. Exits 1 when a key of BEFORE, or a data path of a figure both
have, is gone from AFTER (a rename needs a migration for stored runs), 0
otherwise. A data path that is null in one document and an object or array
in the other shows as a difference of its inner paths. Keys
that only AFTER has are new figures. Figures whose presence depends on the
machine's timing (e.g. a level the curve did not show this time) can differ
between two runs of one binary: run each twice when in doubt.
Python 3 standard library only.
"""

import json
import sys


def keys(path):
    with open(path) as f:
        doc = json.load(f)
    return {r["key"]: (r["experiment"], r["metric"]) for r in doc["results"]}


def data_paths(path):
    """Figure key -> the set of paths inside its data."""
    with open(path) as f:
        doc = json.load(f)

    def walk(v, prefix, out):
        if isinstance(v, dict):
            for k, x in v.items():
                p = f"{prefix}.{k}" if prefix else k
                out.add(p)
                walk(x, p, out)
        elif isinstance(v, list):
            for x in v:
                walk(x, prefix + "[]", out)
        return out

    return {r["key"]: walk(r.get("data"), "", set()) for r in doc["results"]}


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = keys(argv[1]), keys(argv[2])
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))
    for k in gone:
        print(f"only in {argv[1]}: {k}")
    for k in new:
        print(f"only in {argv[2]}: {k}")
    kept = len(set(before) & set(after))
    print(f"run-keys: {kept} keys in both, {len(gone)} gone, {len(new)} new")
    db, da = data_paths(argv[1]), data_paths(argv[2])
    paths_gone = paths_new = paths_kept = 0
    for k in sorted(set(before) & set(after)):
        for p in sorted(db[k] - da[k]):
            print(f"data path only in {argv[1]}: {k}: {p}")
        for p in sorted(da[k] - db[k]):
            print(f"data path only in {argv[2]}: {k}: {p}")
        paths_gone += len(db[k] - da[k])
        paths_new += len(da[k] - db[k])
        paths_kept += len(db[k] & da[k])
    print(f"run-keys: data: {paths_kept} paths in both, {paths_gone} gone, {paths_new} new")
    return 1 if gone or paths_gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

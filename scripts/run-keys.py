#!/usr/bin/env python3
"""Compare the figure keys of two `cpuscope run --json` documents.

    python3 scripts/run-keys.py BEFORE.json AFTER.json

Prints the keys only one of them has (each as experiment, metric and the
rest of the key) and a one-line count; exits 1 when a key of BEFORE is gone
from AFTER (a rename needs a migration for stored runs), 0 otherwise. Keys
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
    return 1 if gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

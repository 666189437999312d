#!/usr/bin/env python3
"""The plan's estimate against the clock, per experiment (issue 38).

`cpuscope run` keeps, for every experiment it runs, the estimate it planned
with and the wall time it took (`environment.timings` of the run document).
This script prints them side by side with the ratio actual / estimated:

  scripts/estimate-vs-actual.py --profile quick          # runs cpuscope, then reports
  scripts/estimate-vs-actual.py --run RUN.json           # a run document already made
  scripts/estimate-vs-actual.py --profile standard --max-off 25   # exit 1 beyond ±25%

With --profile it runs `cpuscope run --profile P --json --no-html -q` (the
binary: $CPUSCOPE, else target/release/cpuscope) into a temporary store. The
goal is within ±25% on a quiet machine; the report says when the run was busy
(other programs' or the hypervisor's share of the CPUs), where no ratio means
much. Exit status: 0, or 1 with --max-off when an experiment of 1 s or more
is off by more than that many percent, 2 on bad input.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def load(args):
    if args.run:
        try:
            with open(args.run, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            sys.exit("estimate-vs-actual: cannot read %s: %s" % (args.run, e))
    exe = os.environ.get("CPUSCOPE") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "cpuscope")
    with tempfile.TemporaryDirectory() as d:
        cmd = [exe, "--store", os.path.join(d, "runs.db"), "run", "--profile", args.profile,
               "--json", "--no-html", "-q"]
        if args.only:
            cmd += ["--only", args.only]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=3600)
        if p.returncode not in (0, 3):  # 3: some figures not available; the run is whole
            sys.exit("estimate-vs-actual: %s exited %d: %s" % (" ".join(cmd), p.returncode,
                                                              p.stderr.decode(errors="replace")[-2000:]))
        return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--profile", choices=["quick", "standard", "full"])
    g.add_argument("--run", help="a run document (cpuscope export RUN, or run --json)")
    ap.add_argument("--only", help="experiments, as cpuscope run --only")
    ap.add_argument("--max-off", type=float, help="fail beyond this many percent (experiments of 1 s or more)")
    args = ap.parse_args()
    run = load(args)
    env = run.get("environment") or {}
    timings = env.get("timings") or []
    if not timings:
        sys.exit("estimate-vs-actual: run %s has no timings (made by an older cpuscope, or not by `run`)"
                 % run.get("id"))
    print("run %s, profile %s, host %s" % (run.get("id"), run.get("profile"), run.get("host")))
    act = env.get("activity") or {}
    if act:
        print("while it ran: other programs %.0f%% of the CPUs, steal %.1f%%" % (
            100 * (act.get("others_share") or 0), 100 * (act.get("steal_share") or 0)))
    print("%-15s %10s %10s %8s" % ("experiment", "estimated", "actual", "ratio"))
    bad = []
    te = ta = 0.0
    for t in timings:
        e, a = t["estimated_s"], t["actual_s"]
        te += e
        ta += a
        ratio = a / e if e > 0 else float("inf")
        off = abs(ratio - 1) * 100
        mark = ""
        if args.max_off is not None and max(a, e) >= 1.0 and off > args.max_off:
            mark = "  off by %.0f%%" % off
            bad.append(t["experiment"])
        print("%-15s %9.1fs %9.1fs %8.2f%s" % (t["experiment"], e, a, ratio, mark))
    print("%-15s %9.1fs %9.1fs %8.2f" % ("total", te, ta, ta / te if te > 0 else float("inf")))
    if bad:
        print("beyond ±%.0f%%: %s" % (args.max_off, ", ".join(bad)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Repeatability of the two headline memory figures: DRAM latency (the
# `latency` experiment's `dram` figure: random chase, 2 MiB pages, the
# samples of the final plateau's top octave up to 4 x LLC, pooled) and
# all-core triad bandwidth (vector width,
# normal stores, arrays 4 x LLC), each measured N times (default 5) as
# separate `cpuscope` invocations, interleaved. Prints each run and the CV
# (stddev/mean) across runs of the per-run medians, and of the per-run
# minima (latency) / best rounds (bandwidth), which a loaded machine
# disturbs less.
#
#   scripts/repeat-memory.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/cpuscope
[ -x "$BIN" ] || cargo build --release --quiet
RUNS=${1:-5}
NCPU=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
SIZE=$("$BIN" info --json | python3 -c '
import json,sys
m=json.load(sys.stdin); c=m.get("caches") or []
lvl=max((x["level"] for x in c if x.get("size_bytes")), default=0)
tot=sum(x["size_bytes"] for x in c if x["level"]==lvl and x.get("type")!="Instruction" and x.get("size_bytes"))
print("%dM" % max(64, (4*tot)>>20))')
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  runs: $RUNS  working set / array: $SIZE  threads: $NCPU"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
TMP=$(mktemp)
for i in $(seq 1 "$RUNS"); do
  "$BIN" latency --pages 2m --pattern random --profile standard -q --json | python3 -c '
import json,sys
r=[x for x in json.load(sys.stdin) if x["metric"]=="dram" and x.get("value") is not None]
print("lat", r[0]["value"], r[0]["stats"]["min"])' >> "$TMP"
  "$BIN" bandwidth --threads "$NCPU" --kernels triad --size "$SIZE" --no-levels --reps 10 --profile standard -q --json | python3 -c '
import json,sys
r=[x for x in json.load(sys.stdin) if x["metric"]=="triad" and x.get("value") is not None]
print("bw", r[0]["value"], r[0]["data"]["best_gbs"])' >> "$TMP"
  tail -2 "$TMP" | tr '\n' ' '; echo
done
python3 - "$TMP" <<'PY'
import sys, statistics as st
rows=[l.split() for l in open(sys.argv[1])]
for k, unit, second in (("lat","ns","min"),("bw","GB/s","best")):
    med=[float(r[1]) for r in rows if r[0]==k]; alt=[float(r[2]) for r in rows if r[0]==k]
    cv=lambda v: st.stdev(v)/st.mean(v)*100 if len(v)>1 else float("nan")
    name = "DRAM latency" if k=="lat" else "all-core triad"
    print(f"{name}: medians {', '.join('%.1f'%x for x in med)} {unit}: CV {cv(med):.2f}%;  {second}s {', '.join('%.1f'%x for x in alt)}: CV {cv(alt):.2f}%")
PY
rm -f "$TMP"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

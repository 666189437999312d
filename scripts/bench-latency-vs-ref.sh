#!/usr/bin/env bash
# DRAM latency reference check: `cpuscope latency` against an independent
# reference at the same working set and page size, interleaved, in one run.
# The reference is lmbench's `lat_mem_rd -t` when it is installed (not
# packaged for Debian), else scripts/ref/latref.c (an independent C pointer
# chase, documented in that file and in docs/methods-memory.md).
#
#   scripts/bench-latency-vs-ref.sh [SIZE] [REPEATS]
#
# Default SIZE: 4 x the total last-level cache; REPEATS: 3. Prints both
# figures (min and median ns per load) and cpuscope/reference ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/cpuscope
[ -x "$BIN" ] || cargo build --release --quiet
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
SIZE=${1:-}
REPEATS=${2:-3}
if [ -z "$SIZE" ]; then
  SIZE=$("$BIN" info --json | python3 -c '
import json,sys
m=json.load(sys.stdin); c=m.get("caches") or []
lvl=max((x["level"] for x in c if x.get("size_bytes")), default=0)
tot=sum(x["size_bytes"] for x in c if x["level"]==lvl and x.get("type")!="Instruction" and x.get("size_bytes"))
print("%dM" % max(64, (4*tot)>>20))')
fi
REF=/tmp/cpuscope-latref
cc -O2 -o "$REF" scripts/ref/latref.c
CPU=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "working set: $SIZE, CPU $CPU; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v lat_mem_rd >/dev/null; then
  echo "lmbench lat_mem_rd found: also printed (its figure is for its own sizes/strides)"
fi
printf '%-5s %-4s %10s %10s %10s %10s %8s\n' pages rep ref_min ref_med cs_min cs_med ratio_med
for rep in $(seq 1 "$REPEATS"); do
  for pages in 2m 4k; do
    out=$(taskset -c "$CPU" "$REF" "$SIZE" "$pages")
    rmin=$(echo "$out" | awk '{print $6}'); rmed=$(echo "$out" | awk '{print $8}')
    # Written to a file and read after cpuscope exits (a reader started in
    # a pipeline takes CPU time from the measurement); a run document
    # (`{"results": [...]}`), stored in a temporary store.
    "$BIN" latency --cpu "$CPU" --sizes "$SIZE" --pages "$pages" --pattern random --profile standard -q --json --store "$TMPD/runs.db" > "$TMPD/lat.json"
    read -r cmin cmed < <(python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
r=[x for x in d["results"] if x["metric"]=="curve" and x.get("data")]
p=r[0]["data"]["points"][-1]
print("%.2f %.2f" % (p["min"], p["ns"]))' "$TMPD/lat.json")
    ratio=$(python3 -c "import sys; print('%.3f' % (float(sys.argv[1])/float(sys.argv[2])))" "$cmed" "$rmed")
    printf '%-5s %-4s %10s %10s %10s %10s %8s\n' "$pages" "$rep" "$rmin" "$rmed" "$cmin" "$cmed" "$ratio"
  done
done
if command -v lat_mem_rd >/dev/null; then
  taskset -c "$CPU" lat_mem_rd -t "$(( ${SIZE%M} ))" 64 2>&1 | tail -3
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

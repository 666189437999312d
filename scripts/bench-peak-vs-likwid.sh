#!/usr/bin/env bash
# Peak FP64 FMA on one core: `cpuscope run --only peak` against likwid-bench's
# peakflops_avx_fma (256-bit) and peakflops_avx512_fma (512-bit) kernels
# (Debian package `likwid`), alternating run after run on the same CPU so both
# see the same machine state. Prints GFLOP/s of each and the ratio
# cpuscope / likwid-bench per width, then the median ratio over runs.
#
# likwid-bench's peakflops kernels stream a 16 kB (L1-resident) array with one
# load per FMA group; cpuscope's kernels are register-only FMA chains
# (docs/methods-compute.md). Both count 2 FLOPs per FMA lane.
#
#   scripts/bench-peak-vs-likwid.sh [RUNS] [CPU]      defaults: 5 runs, CPU 0
# Exit 0 when cpuscope reaches at least 95% of likwid-bench at every width
# (median over runs), 1 otherwise, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
CPU=${2:-0}
BIN=${CPUSCOPE:-target/release/cpuscope}
[ -x "$BIN" ] || cargo build --release --quiet
command -v likwid-bench >/dev/null || { echo "likwid-bench not found (apt install likwid)"; exit 2; }
STORE=$(mktemp -d)
trap 'rm -rf "$STORE"' EXIT
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  cpu: $CPU  runs: $RUNS"
echo "model: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
likwid() { # kernel -> GFLOP/s
  taskset -c "$CPU" likwid-bench -t "$1" -W "N:16kB:1" -s 2 2>/dev/null |
    awk '/^MFlops\/s/ {print $2/1000}'
}
OUT=$(mktemp)
for i in $(seq 1 "$RUNS"); do
  l256=$(likwid peakflops_avx_fma)
  l512=$(likwid peakflops_avx512_fma)
  "$BIN" run --only peak --profile standard --cpus "$CPU" --store "$STORE/runs.db" -q --json |
    python3 -c '
import json,sys
d=json.load(sys.stdin)
v={r["params"]["width"]: r["value"] for r in d["results"]
   if r["metric"]=="fma_flops" and r["params"].get("threads")=="1" and r.get("value")}
print(v.get("256","nan"), v.get("512","nan"))' > "$OUT.c"
  read -r c256 c512 < "$OUT.c"
  echo "$l256 $l512 $c256 $c512" >> "$OUT"
  printf 'run %d: 256-bit likwid %.2f cpuscope %.2f GFLOP/s (x%.3f)   512-bit likwid %.2f cpuscope %.2f GFLOP/s (x%.3f)\n' \
    "$i" "$l256" "$c256" "$(echo "$c256 / $l256" | bc -l)" "$l512" "$c512" "$(echo "$c512 / $l512" | bc -l)"
done
python3 - "$OUT" <<'PY'
import sys, statistics as st
rows=[[float(x) for x in l.split()] for l in open(sys.argv[1])]
ok=True
for name, li, ci in (("256-bit", 0, 2), ("512-bit", 1, 3)):
    r=[row[ci]/row[li] for row in rows]
    m=st.median(r); ok &= m >= 0.95
    print(f"{name}: cpuscope/likwid-bench median x{m:.3f} (min {min(r):.3f}, max {max(r):.3f}) over {len(r)} runs")
print("PASS: cpuscope >= 95% of likwid-bench at every width" if ok else "FAIL: below 95% of likwid-bench")
sys.exit(0 if ok else 1)
PY
rc=$?
rm -f "$OUT" "$OUT.c"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc

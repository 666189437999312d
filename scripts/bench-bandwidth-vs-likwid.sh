#!/usr/bin/env bash
# Bandwidth reference check: likwid-bench against `cpuscope bandwidth`, same
# thread counts, same array sizes, same instruction width, in one run,
# interleaved (likwid, then cpuscope, per thread count) so that drift of the
# machine hits both alike. Prints cpuscope / likwid per kernel and thread count.
#
#   scripts/bench-bandwidth-vs-likwid.sh [ARRAY_MiB] [THREAD_LIST] [REPEATS]
#
# Defaults: arrays of 4 x the total last-level cache (STREAM's rule), threads
# 1..all usable CPUs of socket 0, 3 repeats. Each repeat prints its pairs (the tool that
# goes first alternates); the verdict is on the median over the repeats of the
# per-pair ratio cpuscope/likwid (the machine drifts by +-15% between pairs). Needs likwid (Debian: apt-get install likwid)
# and python3. Builds cpuscope in release mode if target/release is missing.
#
# Mapping of kernels (both count bytes like STREAM, without write-allocate):
#   cpuscope triad  (a = b + q*c, 3 arrays)  <->  likwid-bench stream_<w>
#   cpuscope copy   (c = a, 2 arrays)        <->  likwid-bench copy_<w>
# (likwid-bench's own "triad" is the 4-array a = b + c*d and has no STREAM twin.)
#
# Same CPUs for both: likwid-bench's workgroup S0:SIZE:t runs on the first t
# hardware threads of socket 0, physical cores first; cpuscope gets exactly
# those CPUs (--cpus, one per core first, then the SMT siblings). cpuscope's
# runs go to a temporary store, never the user's; its JSON is the run document
# (`{"schema": "cpuscope.run/1", ..., "results": [records]}`).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v likwid-bench >/dev/null || { echo "likwid-bench not found: apt-get install likwid" >&2; exit 2; }
BIN=target/release/cpuscope
[ -x "$BIN" ] || cargo build --release --quiet
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cpuscope-bw-likwid.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
STORE=$TMPD/runs.db
# Socket 0's usable CPUs, one per core first (likwid's S0 order).
S0=$("$BIN" info --json | python3 -c '
import json, sys
m = json.load(sys.stdin)
def cpulist(s):
    out = []
    for part in (s or "").split(","):
        if part.strip():
            a, _, b = part.partition("-")
            out += range(int(a), int(b or a) + 1)
    return out
usable = set(cpulist(m["cpus"]["usable"]))
pk = min((c["package"] for c in m.get("cores") or []), default=0)
first, rest = [], []
for core in m.get("cores") or []:
    if core["package"] == pk:
        cs = [c for c in cpulist(core["cpus"]) if c in usable]
        first += cs[:1]
        rest += cs[1:]
print(",".join(map(str, first + rest)))')
NCPU=$(echo "$S0" | tr , '\n' | grep -c .)

if [ $# -ge 1 ] && [ -n "$1" ]; then
  ARRAY_MIB=$1
else
  # 4 x the sum of the last-level cache instances, as `cpuscope info` reads them.
  ARRAY_MIB=$("$BIN" info --json | python3 -c '
import json,sys
m=json.load(sys.stdin); c=m.get("caches") or []
lvl=max((x["level"] for x in c if x.get("size_bytes")), default=0)
tot=sum(x["size_bytes"] for x in c if x["level"]==lvl and x.get("type")!="Instruction" and x.get("size_bytes"))
print(max(64, (4*tot)>>20))')
fi
THREADS=${2:-$(seq -s, 1 "$NCPU")}
REPEATS=${3:-3}

if grep -qw avx512f /proc/cpuinfo; then W=avx512; CW=avx512
elif grep -qw avx /proc/cpuinfo; then W=avx; CW=avx
else W=sse; CW=sse2; fi

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "arrays: $ARRAY_MIB MiB each; threads: $THREADS; socket 0 CPUs (cores first): $S0; width: $W; likwid: $(dpkg-query -W -f='${Version}' likwid 2>/dev/null || echo unknown)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %-6s %12s %12s %8s\n' kernel threads likwid_MB/s cpuscope_MB/s ratio

# Each tool writes to a file that is read once it has exited: a reader started
# in a pipeline (python3 takes tens of milliseconds of CPU to start) would run
# on the measured CPUs during the measurement.
lw() { # test threads total_bytes -> MB/s (likwid counts 1 MB = 1e6 B)
  likwid-bench -t "$1" -w "S0:${3}B:$2" > "$TMPD/lw.txt" 2>/dev/null || true
  awk -F: '/^MByte\/s/ {gsub(/[ \t]/,"",$2); print $2}' "$TMPD/lw.txt"
}
cs() { # kernel threads -> MB/s median (GB/s x 1000), on the first THREADS CPUs of socket 0
  local cpus
  cpus=$(echo "$S0" | cut -d, -f"1-$2")
  "$BIN" bandwidth --store "$STORE" --cpus "$cpus" --threads "$2" --placement compact \
     --kernels "$1" --width "$CW" --stores normal --size "${ARRAY_MIB}M" \
     --no-levels --reps 10 --profile standard --json -q > "$TMPD/cs.json" || true
  python3 -c '
import json,sys
try:
    doc=json.load(open(sys.argv[3]))
except ValueError:
    print("nan"); sys.exit()
r=[x for x in doc["results"] if x["experiment"]=="bandwidth" and x["metric"]==sys.argv[1]
   and x["params"].get("threads")==int(sys.argv[2]) and x.get("value") is not None]
print("%.0f" % (r[0]["value"]*1000) if r else "nan")' "$1" "$2" "$TMPD/cs.json"
}

TMP=$TMPD/rows
IFS=, read -ra TL <<< "$THREADS"
for rep in $(seq 1 "$REPEATS"); do
  for t in "${TL[@]}"; do
    for k in triad copy; do
      case $k in triad) test=stream_$W; arrays=3;; copy) test=copy_$W; arrays=2;; esac
      bytes=$(( ARRAY_MIB * 1048576 * arrays ))
      # Alternate which tool goes first, so that a drift within a pair does
      # not always favour the same one.
      if [ $(( rep % 2 )) -eq 1 ]; then
        l=$(lw "$test" "$t" "$bytes"); c=$(cs "$k" "$t")
      else
        c=$(cs "$k" "$t"); l=$(lw "$test" "$t" "$bytes")
      fi
      ratio=$(python3 -c "import sys; l,c=float(sys.argv[1] or 'nan'),float(sys.argv[2]); print('%.3f' % (c/l) if l>0 else 'nan')" "$l" "$c")
      printf '%-7s %-6s %12s %12s %8s\n' "$k" "$t" "$l" "$c" "$ratio"
      echo "$k $t $l $c" >> "$TMP"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "summary (median over $REPEATS repeats; ratio = median of the per-pair ratios):"
python3 - "$TMP" <<'PY'
import sys, statistics as st
rows=[l.split() for l in open(sys.argv[1])]
keys=[]
for r in rows:
    if (r[0], r[1]) not in keys: keys.append((r[0], r[1]))
fail=False
print('%-7s %-6s %12s %12s %8s' % ('kernel','threads','likwid_MB/s','cpuscope_MB/s','ratio'))
for k,t in keys:
    l=st.median(float(r[2]) for r in rows if (r[0],r[1])==(k,t))
    c=st.median(float(r[3]) for r in rows if (r[0],r[1])==(k,t))
    # Median of the per-pair ratios: each pair ran back to back, so the
    # machine's drift between pairs cancels.
    ratio=st.median(float(r[3])/float(r[2]) for r in rows if (r[0],r[1])==(k,t) and float(r[2])>0)
    flag='' if ratio>=0.95 else '  < 0.95'
    fail|= ratio<0.95
    print('%-7s %-6s %12.0f %12.0f %8.3f%s' % (k,t,l,c,ratio,flag))
print("cpuscope fell below 95% of likwid-bench somewhere" if fail else "cpuscope reached >= 95% of likwid-bench at every thread count")
sys.exit(1 if fail else 0)
PY

#!/usr/bin/env bash
# All-core memory bandwidth against a plain reference at every thread count:
# `cpuscope bandwidth --kernels triad` against scripts/ref/triad.c, a small
# OpenMP STREAM triad (static schedule, arrays first-touched in parallel by the
# same threads, one thread per core, best of its passes), compiled here with
# the system's gcc -O3 -march=native -fopenmp.
#
#   scripts/bench-bandwidth-vs-openmp.sh [ARRAY_MiB] [THREAD_LIST] [REPEATS]
#
# ARRAY_MiB: bytes of each of the three arrays, both tools (default: 4 x the
#   total last-level cache, STREAM's rule and cpuscope's default, at least 64,
#   at most an eighth of MemAvailable).
# THREAD_LIST: e.g. 1,2,4,8 or 1-16 (default: 1, 2, ..., all usable CPUs).
# REPEATS: interleaved pairs per thread count (default 3).
# Environment: PASSES (timed passes per run, both tools, default 10: cpuscope's
#   --reps, the reference's inner repeats), PAGES (thp, default, or 4k: the
#   reference's pages; cpuscope asks for THP).
#
# The same CPUs for both: thread count t runs on the first t CPUs of a list
# that takes one CPU of every core first (in `cpuscope info` core order, so
# package by package), then the other SMT siblings; cpuscope gets them as
# --cpus (so its placement is exactly that set), the reference as explicit
# OMP_PLACES with OMP_PROC_BIND=close. Both count 24 B per element (STREAM,
# no write-allocate: the bus moves 32/24 of it for both).
#
# Per pair (the tool that goes first alternates by repeat): cpuscope's figure
# (the median of its rounds, what it reports) over the reference's figure (the
# best of its passes, what STREAM reports). The verdict per thread count is
# the median of its per-pair ratios: PASS at >= 0.95. Exit status 1 when any
# thread count fails, 2 on a usage or set-up error. Runs go to a temporary store, never the user's.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v gcc >/dev/null || { echo "gcc not found: apt-get install gcc" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 2; }
BIN=target/release/cpuscope
[ -x "$BIN" ] || cargo build --release --quiet
PASSES=${PASSES:-10}
PAGES=${PAGES:-thp}
REPEATS=${3:-3}

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cpuscope-bw-openmp.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
STORE=$TMPD/runs.db
REF=$TMPD/triad
CFLAGS=${CFLAGS:--O3 -march=native}
# shellcheck disable=SC2086
gcc $CFLAGS -fopenmp -o "$REF" scripts/ref/triad.c 2>"$TMPD/cc.log" || {
  echo "gcc $CFLAGS -fopenmp scripts/ref/triad.c failed:" >&2; cat "$TMPD/cc.log" >&2; exit 2; }

# CPU order (one per core first) and the default array size, from `cpuscope info`.
"$BIN" info --json > "$TMPD/info.json"
read -r ORDER NCPU LLC_MIB < <(python3 - "$TMPD/info.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
def cpulist(s):
    out = []
    for part in (s or "").split(","):
        if part.strip():
            a, _, b = part.partition("-")
            out += range(int(a), int(b or a) + 1)
    return out
usable = set(cpulist(m["cpus"]["usable"]))
first, rest = [], []
for core in m.get("cores") or []:
    cs = [c for c in cpulist(core["cpus"]) if c in usable]
    first += cs[:1]
    rest += cs[1:]
order = first + rest + sorted(usable - set(first) - set(rest))
c = m.get("caches") or []
lvl = max((x["level"] for x in c if x.get("size_bytes")), default=0)
tot = sum(x["size_bytes"] for x in c if x["level"] == lvl and x.get("type") != "Instruction" and x.get("size_bytes"))
print(",".join(map(str, order)), len(order), tot >> 20)
PY
)
if [ $# -ge 1 ] && [ -n "$1" ]; then
  ARRAY_MIB=$1
else
  AVAIL_MIB=$(awk '/^MemAvailable:/ {print int($2/1024)}' /proc/meminfo)
  ARRAY_MIB=$(( 4 * LLC_MIB > 64 ? 4 * LLC_MIB : 64 ))
  [ "$ARRAY_MIB" -le $(( AVAIL_MIB / 8 )) ] || ARRAY_MIB=$(( AVAIL_MIB / 8 ))
fi
THREADS=${2:-1-$NCPU}
THREADS=$(python3 -c '
import sys
out = []
for part in sys.argv[1].split(","):
    a, _, b = part.strip().partition("-")
    out += range(int(a), int(b or a) + 1)
n = int(sys.argv[2])
bad = [t for t in out if t < 1 or t > n]
if bad: sys.exit("thread counts %s: this process may use %d CPUs" % (bad, n))
print(",".join(map(str, out)))' "$THREADS" "$NCPU") || exit 2

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "arrays: 3 x $ARRAY_MIB MiB; threads: $THREADS; CPU order (one per core first): $ORDER; passes per run: $PASSES; reference pages: $PAGES"
echo "reference: $(gcc --version | head -1), gcc $CFLAGS -fopenmp scripts/ref/triad.c"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %-3s %-5s %10s %10s %10s %10s %8s\n' threads rep first ref_best ref_med cs_median cs_best ratio

# Each tool writes to a file that is read once it has exited: a reader started
# in a pipeline (python3 takes tens of milliseconds of CPU to start) would run
# on the measured CPUs during the measurement.
cs() { # CPUS THREADS -> "median best min cv"
  "$BIN" bandwidth --store "$STORE" --cpus "$1" --threads "$2" --placement compact \
    --kernels triad --width vector --stores normal --size "${ARRAY_MIB}M" --no-levels \
    --reps "$PASSES" --profile standard --json -q > "$TMPD/cs.json" || true
  python3 -c '
import json, sys
try:
    doc = json.load(open(sys.argv[2]))
except ValueError:
    print("nan nan nan nan"); sys.exit()
r = [x for x in doc["results"] if x["experiment"] == "bandwidth" and x["metric"] == "triad"
     and x["params"].get("threads") == int(sys.argv[1]) and x.get("value") is not None]
if not r:
    print("nan nan nan nan"); sys.exit()
x = r[0]
print("%.3f %.3f %.3f %.4f" % (x["value"], x["data"]["best_gbs"], x["stats"]["min"], x["stats"]["cv"]))' "$2" "$TMPD/cs.json"
}
ref() { # CPUS THREADS -> "best median"
  local places
  places=$(echo "$1" | sed 's/[0-9][0-9]*/{&}/g')
  OMP_NUM_THREADS=$2 OMP_PLACES=$places OMP_PROC_BIND=close OMP_DYNAMIC=false \
    "$REF" "${ARRAY_MIB}M" "$PAGES" "$PASSES" > "$TMPD/ref.txt" || true
  awk '{for (i = 1; i < NF; i++) { if ($i == "best") b = $(i+1); if ($i == "median") m = $(i+1) } print b, m}' "$TMPD/ref.txt"
}

ROWS=$TMPD/rows
IFS=, read -ra TL <<< "$THREADS"
IFS=, read -ra ORD <<< "$ORDER"
for rep in $(seq 1 "$REPEATS"); do
  for t in "${TL[@]}"; do
    cpus=$(IFS=,; echo "${ORD[*]:0:$t}")
    # Alternate which tool goes first, so that drift within a pair does not
    # always favour the same one.
    if [ $(( rep % 2 )) -eq 1 ]; then
      first=ref; read -r rb rm < <(ref "$cpus" "$t"); read -r cm cb cmin ccv < <(cs "$cpus" "$t")
    else
      first=cs; read -r cm cb cmin ccv < <(cs "$cpus" "$t"); read -r rb rm < <(ref "$cpus" "$t")
    fi
    rb=${rb:-nan}; rm=${rm:-nan}; cm=${cm:-nan}; cb=${cb:-nan}; cmin=${cmin:-nan}; ccv=${ccv:-nan}
    ratio=$(python3 -c 'import sys; c, r = float(sys.argv[1]), float(sys.argv[2]); print("%.3f" % (c / r) if r > 0 else "nan")' "$cm" "$rb")
    printf '%-7s %-3s %-5s %10s %10s %10s %10s %8s\n' "$t" "$rep" "$first" "$rb" "$rm" "$cm" "$cb" "$ratio"
    echo "$t $rep $rb $rm $cm $cb $cmin $ccv" >> "$ROWS"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "summary per thread count (GB/s, 24 B per element; ratio = median of the per-pair ratios cpuscope median / reference best):"
python3 - "$ROWS" <<'PY'
import math, statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
fail = False
print("%-7s %5s %10s %10s %10s %10s %8s %8s  %s" % ("threads", "pairs", "ref_best", "ref_med", "cs_median", "cs_best", "cs_cv%", "ratio", "verdict"))
for t in sorted({int(r[0]) for r in rows}):
    rs = [[float(v) for v in r[2:]] for r in rows if int(r[0]) == t]
    ok = [r for r in rs if r[0] > 0 and not math.isnan(r[2])]
    if not ok:
        print("%-7d %5d  no complete pair: FAIL" % (t, len(rs))); fail = True; continue
    ratio = st.median(r[2] / r[0] for r in ok)
    verdict = "PASS" if ratio >= 0.95 else "FAIL (< 0.95)"
    fail |= ratio < 0.95
    print("%-7d %5d %10.2f %10.2f %10.2f %10.2f %8.2f %8.3f  %s" % (
        t, len(ok), st.median(r[0] for r in ok), st.median(r[1] for r in ok),
        st.median(r[2] for r in ok), st.median(r[3] for r in ok),
        100 * st.median(r[5] for r in ok), ratio, verdict))
print("FAIL: cpuscope's median fell below 95% of the reference's best somewhere" if fail
      else "PASS: cpuscope's median reached >= 95% of the reference's best at every thread count")
sys.exit(1 if fail else 0)
PY

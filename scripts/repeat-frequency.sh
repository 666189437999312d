#!/usr/bin/env bash
# Repeatability of the frequency experiment: N separate
# `cpuscope run --only frequency` invocations (default 5, profile standard)
# into a scratch store. Prints each run's single-core clock (add chain), the
# xor chain, and their per-sample agreement ratio (xor_vs_add: each xor sample
# over the add-chain readings right before and after it), then the CV across
# runs of each. The clock itself moves with the host (turbo, neighbours); the
# agreement ratio is the method's own repeatability.
#
#   scripts/repeat-frequency.sh [RUNS] [PROFILE]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
PROFILE=${2:-standard}
BIN=${CPUSCOPE:-target/release/cpuscope}
[ -x "$BIN" ] || cargo build --release --quiet
STORE=$(mktemp -d)
trap 'rm -rf "$STORE"' EXIT
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  runs: $RUNS  profile: $PROFILE"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$RUNS"); do
  "$BIN" run --only frequency --profile "$PROFILE" --store "$STORE/runs.db" -q --json |
    python3 -c '
import json,sys
d=json.load(sys.stdin)
v={r["metric"]: r for r in d["results"] if r.get("value") is not None}
g=lambda m: v[m]["value"] if m in v else float("nan")
c=lambda m: v[m]["stats"]["cv"]*100 if m in v else float("nan")
print("%.4f %.4f %.5f %.2f %.2f %.2f" % (g("single_core"), g("single_core_xor"), g("xor_vs_add"), c("single_core"), c("single_core_xor"), c("xor_vs_add")))' >> "$STORE/rows"
  read -r a x r ca cx cr < <(tail -1 "$STORE/rows")
  echo "run $i: single_core $a GHz (CV $ca%)  xor $x GHz (CV $cx%)  xor_vs_add $r (CV $cr%)"
done
python3 - "$STORE/rows" <<'PY'
import sys, statistics as st
rows=[[float(x) for x in l.split()] for l in open(sys.argv[1])]
cv=lambda v: st.stdev(v)/st.mean(v)*100
for i,name in ((0,"single_core (add chain) GHz"),(1,"single_core_xor GHz"),(2,"xor_vs_add ratio")):
    v=[r[i] for r in rows]
    print(f"{name}: mean {st.mean(v):.4f}, CV across runs {cv(v):.2f}%")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

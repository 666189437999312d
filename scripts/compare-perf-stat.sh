#!/usr/bin/env bash
# Compare `cpuscope stat` with `perf stat` on the same workload and print the
# IPC each reports and their ratio (target: within 2%).
#
#   scripts/compare-perf-stat.sh            # workload: echo '7^99999' | bc
#   REPS=5 scripts/compare-perf-stat.sh
#   CPUSCOPE=./target/release/cpuscope WORKLOAD="echo '7^50000' | bc" scripts/compare-perf-stat.sh
#
# Exit status: 0 within tolerance, 1 outside, 2 when IPC is not available
# from one of the tools (no PMU, permissions: the reason is printed).
set -euo pipefail

REPS=${REPS:-3}
TOL_PCT=${TOL_PCT:-2}
WORKLOAD=${WORKLOAD:-"echo '7^99999' | bc"}
if [[ -z "${CPUSCOPE:-}" ]]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    # The newest of the release and debug builds, else one on PATH.
    CPUSCOPE=$(ls -t "$root/target/release/cpuscope" "$root/target/debug/cpuscope" 2>/dev/null | head -n 1 || true)
    [[ -n "$CPUSCOPE" ]] || CPUSCOPE=$(command -v cpuscope || true)
fi
[[ -n "${CPUSCOPE:-}" && -x "$CPUSCOPE" ]] || { echo "compare-perf-stat: cpuscope binary not found (cargo build, or set CPUSCOPE)" >&2; exit 2; }
command -v perf >/dev/null || { echo "compare-perf-stat: perf is not installed" >&2; exit 2; }
command -v bc >/dev/null || { echo "compare-perf-stat: bc is not installed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# perf -x, rows: value,unit,event,run_time,pct_running,...; names may carry
# a :u suffix (paranoid fallback) or a PMU prefix (hybrid cpu_core/cycles/).
perf_value() { # file event
    awk -F, -v ev="$2" '
        $0 ~ /^#/ || NF < 3 { next }
        { name = $3; sub(/^cpu_core\//, "", name); sub(/\/$/, "", name); sub(/:.*$/, "", name) }
        name == ev { print $1; exit }' "$1"
}

echo "workload: $WORKLOAD"
echo "cpuscope: $CPUSCOPE"
printf '%-4s %14s %14s %10s\n' rep perf_ipc cpuscope_ipc ratio
sum=0
for ((i = 1; i <= REPS; i++)); do
    perf stat -x, -e cycles,instructions -o "$tmp/perf.csv" -- sh -c "$WORKLOAD" >/dev/null
    "$CPUSCOPE" stat --csv -o "$tmp/cs.csv" -e cycles,instructions -- sh -c "$WORKLOAD" >/dev/null
    pc=$(perf_value "$tmp/perf.csv" cycles)
    pi=$(perf_value "$tmp/perf.csv" instructions)
    cs_ipc=$(awk -F, '$1 == "metric" && $2 == "ipc" { print $3 }' "$tmp/cs.csv")
    if ! [[ "$pc" =~ ^[0-9.]+$ && "$pi" =~ ^[0-9.]+$ ]]; then
        echo "perf: cycles='$pc' instructions='$pi': IPC not available from perf here" >&2
        awk -F, '$1 == "event" && $2 ~ /^(cycles|instructions)/ { print "cpuscope: " $2 ": " $5 " (" $9 ")" }' "$tmp/cs.csv" >&2
        exit 2
    fi
    if [[ -z "$cs_ipc" ]]; then
        echo "cpuscope: IPC absent: $(awk -F, '$1 == "metric" && $2 == "ipc" { print $0 }' "$tmp/cs.csv")" >&2
        exit 2
    fi
    read -r p_ipc ratio < <(awk -v c="$pc" -v n="$pi" -v s="$cs_ipc" 'BEGIN { p = n / c; printf "%.6f %.6f\n", p, s / p }')
    printf '%-4s %14s %14s %10s\n' "$i" "$p_ipc" "$cs_ipc" "$ratio"
    sum=$(awk -v a="$sum" -v b="$ratio" 'BEGIN { printf "%.6f", a + b }')
done
mean=$(awk -v s="$sum" -v n="$REPS" 'BEGIN { printf "%.4f", s / n }')
dev=$(awk -v m="$mean" 'BEGIN { d = (m - 1) * 100; if (d < 0) d = -d; printf "%.2f", d }')
echo "mean IPC ratio cpuscope/perf: $mean (off by ${dev}%, target within ${TOL_PCT}%)"
awk -v d="$dev" -v t="$TOL_PCT" 'BEGIN { exit !(d <= t) }'

#!/usr/bin/env bash
# Overhead of starting, counting and reporting a trivial command:
# `cpuscope stat -- true` next to `perf stat -- true` (and bare `true`).
# Uses hyperfine when installed, else a loop of N runs timed with date.
#
#   scripts/bench-stat-overhead.sh          # N=200
#   N=500 CPUSCOPE=./target/release/cpuscope scripts/bench-stat-overhead.sh
set -euo pipefail

N=${N:-200}
if [[ -z "${CPUSCOPE:-}" ]]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    # The newest of the release and debug builds, else one on PATH.
    CPUSCOPE=$(ls -t "$root/target/release/cpuscope" "$root/target/debug/cpuscope" 2>/dev/null | head -n 1 || true)
    [[ -n "$CPUSCOPE" ]] || CPUSCOPE=$(command -v cpuscope || true)
fi
[[ -n "${CPUSCOPE:-}" && -x "$CPUSCOPE" ]] || { echo "bench-stat-overhead: cpuscope binary not found (cargo build, or set CPUSCOPE)" >&2; exit 2; }
echo "cpuscope: $CPUSCOPE"
case "$CPUSCOPE" in *debug*) echo "note: this is a debug build; build with --release for representative figures" ;; esac

true_bin=$(type -P true)
cmds=("$true_bin" "$CPUSCOPE stat -o /dev/null -- true")
if command -v perf >/dev/null; then
    cmds+=("perf stat -o /dev/null -- true")
else
    echo "note: perf is not installed; timing cpuscope only"
fi

if command -v hyperfine >/dev/null; then
    hyperfine -N --warmup 10 --runs "$N" "${cmds[@]}"
    exit 0
fi

now_ns() { date +%s%N; }
printf '%-55s %12s\n' command "mean (ms)"
for c in "${cmds[@]}"; do
    read -r -a argv <<<"$c"
    for ((i = 0; i < 10; i++)); do "${argv[@]}" >/dev/null 2>&1 || true; done
    t0=$(now_ns)
    for ((i = 0; i < N; i++)); do "${argv[@]}" >/dev/null 2>&1 || true; done
    t1=$(now_ns)
    printf '%-55s %12.3f\n' "$c" "$(awk -v a="$t0" -v b="$t1" -v n="$N" 'BEGIN { print (b - a) / n / 1e6 }')"
done
echo "($N runs each, loop timed with date; install hyperfine for confidence intervals)"

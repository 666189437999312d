#!/usr/bin/env bash
# Fail when a binary needs a newer glibc than the floor:
#
#   scripts/check-glibc-floor.sh BINARY [FLOOR]        (default floor: 2.17)
#
# Reads the ELF version needs (readelf -V, any architecture): every GLIBC_x.y
# a dynamic symbol asks for must be <= FLOOR. Prints the highest one.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/check-glibc-floor.sh BINARY [FLOOR]" >&2; exit 2; }
bin=$1 floor=${2:-2.17}
[ -f "$bin" ] || { echo "check-glibc-floor: no file '$bin'" >&2; exit 2; }
command -v readelf >/dev/null || { echo "check-glibc-floor: readelf not found (binutils)" >&2; exit 2; }
needs=$(readelf -W -V "$bin" | grep -o 'Name: GLIBC_[0-9][0-9.]*' | sed 's/Name: GLIBC_//' | sort -u -V)
[ -n "$needs" ] || { echo "check-glibc-floor: $bin asks for no GLIBC_ version (static, or not a glibc binary)" >&2; exit 1; }
highest=$(printf '%s\n' "$needs" | tail -1)
over=$(printf '%s\n%s\n' "$needs" "$floor" | sort -u -V | sed -n "/^$(printf '%s' "$floor" | sed 's/\./\\./g')\$/,\$p" | tail -n +2)
if [ -n "$over" ]; then
  echo "check-glibc-floor: FAIL: $bin needs $(echo "$over" | sed 's/^/GLIBC_/' | tr '\n' ' ')above the floor GLIBC_$floor" >&2
  readelf -W --dyn-syms "$bin" | grep -E "GLIBC_($(echo "$over" | sed 's/\./\\./g' | paste -sd'|'))( |$)" | awk '{print "  " $8}' | sort -u | head -20 >&2
  exit 1
fi
echo "check-glibc-floor: ok: $bin: highest GLIBC_$highest (floor GLIBC_$floor)"

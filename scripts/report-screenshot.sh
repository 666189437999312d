#!/usr/bin/env bash
# Regenerate docs/report-example.png: a real `cpuscope run` of this machine
# (profile quick unless PROFILE is set), its HTML report, and a screenshot of
# it taken by headless Chromium. Needs chromium (apt-get install chromium).
#
#   scripts/report-screenshot.sh                  # uses target/release/cpuscope (built if missing)
#   CPUSCOPE=target/debug/cpuscope scripts/report-screenshot.sh
#   PROFILE=standard OUT=/tmp/report.png scripts/report-screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${PROFILE:-quick}
out=${OUT:-docs/report-example.png}
size=${SIZE:-1200,2100}
bin=${CPUSCOPE:-target/release/cpuscope}
if [ ! -x "$bin" ]; then
  cargo build --release --quiet
  bin=target/release/cpuscope
fi
chrome=""
for c in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$c" >/dev/null 2>&1; then chrome=$c; break; fi
done
if [ -z "$chrome" ]; then
  echo "report-screenshot: no chromium found (apt-get install chromium)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --store "$tmp/runs.db" run --profile "$profile" --quiet --html "$tmp/report.html" >"$tmp/run.txt"
"$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$tmp/profile" --window-size="$size" \
  --screenshot="$tmp/report.png" "file://$tmp/report.html" >/dev/null 2>&1
mkdir -p "$(dirname "$out")"
cp "$tmp/report.png" "$out"
echo "report-screenshot: $(grep -m1 '^stored as' "$tmp/run.txt" || echo 'run stored') -> $out"

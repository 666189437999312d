#!/usr/bin/env bash
# Regenerate the verdict screenshots of the README from a real run of this
# machine (profile standard unless PROFILE is set):
#   docs/verdict-terminal.png  the terminal as a person sees it: `cpuscope run`
#                              in a 100-column tmux pane (a TTY, so in colour),
#                              captured with `tmux capture-pane -e` and drawn by
#                              headless Chromium;
#   docs/verdict-example.txt   the same capture as plain text;
#   docs/report-example.png    the run's HTML report (verdict card first).
# Needs tmux and chromium (apt-get install tmux chromium).
#
#   scripts/verdict-screenshot.sh
#   PROFILE=quick scripts/verdict-screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${PROFILE:-standard}
bin=${CPUSCOPE:-target/release/cpuscope}
[ -x "$bin" ] || { cargo build --release --quiet; bin=target/release/cpuscope; }
bin=$(realpath "$bin")
chrome=""
for c in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$c" >/dev/null 2>&1; then chrome=$c; break; fi
done
[ -n "$chrome" ] || { echo "verdict-screenshot: no chromium (apt-get install chromium)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "verdict-screenshot: no tmux (apt-get install tmux)" >&2; exit 1; }

tmp=$(mktemp -d)
session="cpuscope-verdict-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$tmp"' EXIT
# A 100 × 50 pane; the run's progress goes to stderr (the same pane), then the verdict.
tmux new-session -d -s "$session" -x 100 -y 50 \
  "clear; '$bin' --store '$tmp/runs.db' run --profile $profile --html '$tmp/report.html' 2>/dev/null; touch '$tmp/done'; sleep 3600"
while [ ! -e "$tmp/done" ]; do sleep 2; done
sleep 1
tmux capture-pane -t "$session" -e -p > "$tmp/pane.ansi"
mkdir -p docs
sed 's/\x1b\[[0-9;]*m//g' "$tmp/pane.ansi" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > docs/verdict-example.txt

python3 - "$tmp/pane.ansi" "$tmp/pane.html" <<'EOF'
import html, re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read().rstrip("\n")
colours = {"1": "font-weight:bold", "33": "color:#e5c07b"}
out, open_spans = [], 0
for part in re.split(r"(\x1b\[[0-9;]*m)", text):
    m = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
    if not m:
        out.append(html.escape(part))
        continue
    codes = [c for c in m.group(1).split(";") if c]
    if not codes or codes == ["0"]:
        out.append("</span>" * open_spans)
        open_spans = 0
        continue
    style = ";".join(colours[c] for c in codes if c in colours)
    out.append(f'<span style="{style}">')
    open_spans += 1
out.append("</span>" * open_spans)
page = ('<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0;background:#1e1e1e}'
        'pre{margin:0;padding:14px 16px;color:#d4d4d4;font:14px/1.35 "DejaVu Sans Mono",monospace}</style>'
        '</head><body><pre>' + "".join(out) + '</pre></body></html>')
open(sys.argv[2], "w", encoding="utf-8").write(page)
EOF
lines=$(wc -l < docs/verdict-example.txt)
height=$(( lines * 19 + 40 ))
shoot() { # url, size, out
  "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$tmp/profile-$RANDOM" --window-size="$2" \
    --screenshot="$3" "$1" >/dev/null 2>&1
}
shoot "file://$tmp/pane.html" "880,$height" docs/verdict-terminal.png
shoot "file://$tmp/report.html" "1200,2100" docs/report-example.png
echo "verdict-screenshot: profile $profile, $lines lines -> docs/verdict-terminal.png, docs/verdict-example.txt, docs/report-example.png"

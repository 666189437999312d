#!/bin/sh
# Install Zig (PyPI's ziglang) and cargo-zigbuild (its prebuilt PyPI wheel:
# no compile from crates.io) into a virtual environment and print that
# environment's bin folder, where `cargo-zigbuild` is. Used by .ci/run for
# scripts/package.sh (docs/packaging.md).
#   CPUSCOPE_ZIGBUILD_VENV  where (default: ${XDG_CACHE_HOME:-~/.cache}/cpuscope/zigbuild)
set -eu
venv=${CPUSCOPE_ZIGBUILD_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cpuscope/zigbuild}
if ! [ -x "$venv/bin/cargo-zigbuild" ] || ! "$venv/bin/python3" -c 'import ziglang' >/dev/null 2>&1; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'ziglang==0.17.1' 'cargo-zigbuild==0.24.1' >&2
fi
"$venv/bin/cargo-zigbuild" --version >&2
echo "$venv/bin"

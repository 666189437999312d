#!/bin/sh
# Install the prometheus_client package (its strict OpenMetrics text parser)
# from PyPI into a virtual environment and print the path of that
# environment's python3. Used by tests/openmetrics.rs and .ci/run to check
# `cpuscope export --format openmetrics` with a real parser; cpuscope itself
# does not need it.
#   CPUSCOPE_PROM_VENV      where (default: ${XDG_CACHE_HOME:-~/.cache}/cpuscope/prometheus_client)
#   PROMETHEUS_CLIENT_SPEC  what to install (default: prometheus_client>=0.17,<1)
set -eu
venv=${CPUSCOPE_PROM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cpuscope/prometheus_client}
spec=${PROMETHEUS_CLIENT_SPEC:-prometheus_client>=0.17,<1}
if ! "$venv/bin/python3" -c 'import prometheus_client.openmetrics.parser' >/dev/null 2>&1; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$spec" >&2
fi
"$venv/bin/python3" -c 'import prometheus_client.openmetrics.parser' >&2
echo "$venv/bin/python3"

#!/usr/bin/env bash
# The cargo test selection that CI runs for aarch64 under qemu-user
# (.ci/run): the library's unit tests and every integration suite of tests/
# but the architecture-neutral ones listed here, printed as cargo arguments
# (`--lib --test NAME ...`). Those test stores, fleets, the deployment
# engines (Ansible, Slurm), report rendering (Chromium, OpenMetrics) and
# argument checks: code with nothing architecture-specific, run natively by
# the README's test command. Anything that measures, reads a machine or
# uses a kernel runs on aarch64 too; a new suite does unless named here.
# A name here without its tests/NAME.rs is an error (a stale list).
set -euo pipefail
cd "$(dirname "$0")/.."
native_only=(
  compare deploy_ansible deploy_slurm fleet floors html_chromium names openmetrics
  packaging postgres reliability_inputs reliability_pg reliability_store
)
for t in "${native_only[@]}"; do
  [ -f "tests/$t.rs" ] || { echo "aarch64-suites: tests/$t.rs does not exist: update the list" >&2; exit 2; }
done
args=(--lib)
for f in tests/*.rs; do
  t=$(basename "$f" .rs)
  case " ${native_only[*]} " in *" $t "*) ;; *) args+=(--test "$t") ;; esac
done
echo "${args[@]}"

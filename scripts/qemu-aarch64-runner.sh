#!/usr/bin/env bash
# Cargo's runner for the aarch64 test binaries (set by scripts/cargo-aarch64.sh):
# qemu-aarch64 with a time limit per test binary.
#
# qemu-user can deadlock a child that a multi-threaded program forks: an
# emulator lock held by another thread at the fork stays held in the child,
# whose threads then wait on a futex forever. Seen once in CI (2026-11-27,
# qemu-aarch64 7.2): a `tar` started by tests/hwloc_fixtures hung before its
# exec, and the suite with it. A test binary still running after
# $CPUSCOPE_QEMU_TEST_LIMIT seconds (default 300; the longest takes about
# 25 s) is killed with every process it started (timeout signals its own
# process group) and started once more, saying so on stderr; a second
# overrun fails the suite. Exit status: the test binary's. With
# $CPUSCOPE_QEMU_TIMES set, each binary's wall time is appended to that file
# ("seconds name"), to see where the suite's time goes.
set -u
qemu=${CPUSCOPE_QEMU:?"set by scripts/cargo-aarch64.sh"}
limit=${CPUSCOPE_QEMU_TEST_LIMIT:-300}
name=$(basename -- "${1:-?}")
for try in 1 2; do
  start=$SECONDS
  timeout --kill-after=10 "$limit" "$qemu" "$@"
  rc=$?
  [ -n "${CPUSCOPE_QEMU_TIMES:-}" ] && echo "$((SECONDS - start)) $name" >> "$CPUSCOPE_QEMU_TIMES"
  case $rc in
    124|137) echo "qemu-aarch64-runner: $name ran past ${limit} s under qemu-user (try $try of 2): killed" >&2 ;;
    *) exit $rc ;;
  esac
done
echo "qemu-aarch64-runner: $name ran past ${limit} s twice: failing" >&2
exit 124

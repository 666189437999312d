#!/usr/bin/env bash
# Start the portable binaries on an old userland: a minimal Debian 11
# (bullseye, glibc 2.31), bootstrapped from Debian's own packages with
# `debootstrap --variant=minbase` and cached in ~/.cache/cpuscope/ between
# runs; /proc, /sys and /dev bind-mounted. Needs root (chroot, mounts) and
# debootstrap; arm64 also qemu-user-static with its binfmt entry.
#
#   scripts/test-old-userland.sh [--expect-fail BINARY] [--deb ARCH=PACKAGE.deb]... ARCH=BINARY...
#   scripts/test-old-userland.sh --prepare ARCH...   (only bootstrap the roots: CI does it
#                                                    while the packages build)
#   e.g. scripts/test-old-userland.sh amd64=target/package/stage-amd64/cpuscope
#
# For each binary it runs, in the chroot: --version, `info`, `run --profile
# quick --only frequency` into a fresh store, and `runs` reading it back; and
# checks the stored run records the build (environment.build) and the
# chroot's glibc. --expect-fail BINARY (amd64) shows the test has teeth: a
# binary built against this machine's newer glibc must not start there.
# --deb ARCH=PACKAGE: that architecture's .deb is installed there with dpkg
# (its /usr/bin/cpuscope starts, its man page and completions are where
# Debian looks for them, dpkg's md5sums match), then removed.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "old-userland: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (chroot and bind mounts)"
export PATH=$PATH:/usr/sbin:/sbin
command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap)"
cache=${CPUSCOPE_CACHE:-$HOME/.cache/cpuscope}
mirror=${CPUSCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
expect_fail=
pairs=()
debs=()
prepare=()
while [ $# -gt 0 ]; do
  case $1 in
    --expect-fail) shift; expect_fail=$1;;
    --deb) shift; case ${1:-} in amd64=*.deb|arm64=*.deb) debs+=("$1");; *) die "--deb needs ARCH=PACKAGE.deb";; esac;;
    amd64=*|arm64=*) pairs+=("$1");;
    --prepare) shift; while [ $# -gt 0 ] && { [ "$1" = amd64 ] || [ "$1" = arm64 ]; }; do prepare+=("$1"); shift; done
               [ ${#prepare[@]} -gt 0 ] || die "--prepare needs amd64, arm64 or both"; continue;;
    *) die "unknown argument '$1' (ARCH=BINARY with ARCH amd64 or arm64, or --expect-fail BINARY)";;
  esac
  shift
done
[ ${#pairs[@]} -gt 0 ] || [ ${#prepare[@]} -gt 0 ] || die "no binary given (amd64=PATH, arm64=PATH)"

mounted=()
cleanup() {
  local i
  for ((i=${#mounted[@]}-1; i>=0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

rootfs() { # arch → a bullseye minbase root, made once
  local arch=$1 root=$cache/debian11-$1
  if [ ! -e "$root/.complete" ]; then
    rm -rf "$root"; mkdir -p "$cache"
    echo "old-userland: debootstrap --variant=minbase --arch=$arch bullseye (cached in $root)" >&2
    debootstrap --variant=minbase --arch="$arch" bullseye "$root" "$mirror" > "$cache/debootstrap-$arch.log" 2>&1 \
      || { tail -20 "$cache/debootstrap-$arch.log" >&2; die "debootstrap failed ($cache/debootstrap-$arch.log)"; }
    touch "$root/.complete"
  fi
  echo "$root"
}

if [ ${#prepare[@]} -gt 0 ]; then
  for arch in "${prepare[@]}"; do
    if [ "$arch" = arm64 ]; then why=$(scripts/binfmt-aarch64.sh 2>&1) || die "arm64: $why"; fi
    echo "old-userland: $arch: root ready in $(rootfs "$arch")"
  done
  [ ${#pairs[@]} -gt 0 ] || exit 0
fi

mount_in() { # root
  local r=$1 d
  for d in proc sys dev; do
    mountpoint -q "$r/$d" && continue
    mount --rbind "/$d" "$r/$d"; mount --make-rslave "$r/$d"; mounted+=("$r/$d")
  done
}

inroot() { chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp/cpuscope-test LANG=C.UTF-8 "$@"; }

fails=0
check() { # description, command...
  local what=$1; shift
  if "$@"; then echo "old-userland: ok: $what"; else echo "old-userland: FAIL: $what" >&2; fails=$((fails+1)); fi
}

for pair in "${pairs[@]}"; do
  arch=${pair%%=*} bin=${pair#*=}
  [ -f "$bin" ] || die "no binary '$bin'"
  if [ "$arch" = arm64 ]; then why=$(scripts/binfmt-aarch64.sh 2>&1) || die "arm64: $why"; fi
  root=$(rootfs "$arch")
  mount_in "$root"
  libc=$(chroot "$root" /usr/bin/ldd --version 2>/dev/null | head -1 | grep -o '[0-9]\+\.[0-9]\+$' || true)
  echo "old-userland: $arch: Debian $(cat "$root/etc/debian_version"), glibc $libc"
  work=$root/tmp/cpuscope-test
  rm -rf "$work"; mkdir -p "$work"
  cp "$bin" "$work/cpuscope"
  B=/tmp/cpuscope-test/cpuscope S=/tmp/cpuscope-test/runs.db
  t_info() { inroot $B info > "$work/info.txt" && grep -q . "$work/info.txt"; }
  t_runs() { inroot $B --store $S runs > "$work/runs.txt" && [ "$(grep -c . "$work/runs.txt")" -ge 2 ] && cat "$work/runs.txt"; }
  t_build() {
    inroot $B --store $S export latest > "$work/run.json" \
      && grep -Eq "\"glibc_running\": ?\"$libc\"" "$work/run.json" && grep -Eq '"glibc_floor": ?"2.17"' "$work/run.json"
  }
  check "$arch: --version starts on glibc $libc" inroot $B --version
  check "$arch: info" t_info
  check "$arch: run --profile quick --only frequency" inroot $B --store $S run --profile quick --only frequency --no-html --quiet
  check "$arch: runs lists the run" t_runs
  check "$arch: the run records the build (floor 2.17) and glibc $libc" t_build
  if [ "$arch" = amd64 ] && [ -n "$expect_fail" ]; then
    cp "$expect_fail" "$work/cpuscope-host"
    if inroot /tmp/cpuscope-test/cpuscope-host --version > "$work/host.txt" 2>&1; then
      echo "old-userland: FAIL: the binary built against this machine's glibc started on glibc $libc too: the test shows nothing" >&2
      fails=$((fails+1))
    else
      echo "old-userland: ok: the binary built against this machine's glibc does not start there: $(grep -o "version .GLIBC_[0-9.]*. not found" "$work/host.txt" | head -1)"
    fi
  fi
  for d in ${debs[@]+"${debs[@]}"}; do
    [ "${d%%=*}" = "$arch" ] || continue
    deb=${d#*=}
    [ -f "$deb" ] || die "no package '$deb'"
    cp "$deb" "$work/cpuscope.deb"
    t_deb() {
      inroot env PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg -i /tmp/cpuscope-test/cpuscope.deb >/dev/null \
        && inroot /usr/bin/cpuscope --version \
        && inroot test -s /usr/share/man/man1/cpuscope.1.gz \
        && inroot test -s /usr/share/man/man1/cpuscope-run.1.gz \
        && inroot test -s /usr/share/bash-completion/completions/cpuscope \
        && inroot test -s /usr/share/doc/cpuscope/copyright \
        && (cd "$root" && md5sum --quiet -c var/lib/dpkg/info/cpuscope.md5sums)
    }
    check "$arch: the .deb installs with dpkg, and its binary, man pages and completions are in place" t_deb
    inroot env PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg -r cpuscope >/dev/null 2>&1 || true
  done
  rm -rf "$work"
done
cleanup; mounted=()
[ "$fails" = 0 ] || { echo "old-userland: $fails check(s) failed" >&2; exit 1; }
echo "old-userland: all checks passed"

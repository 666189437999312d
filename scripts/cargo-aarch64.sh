#!/usr/bin/env bash
# Run a cargo command for aarch64-unknown-linux-gnu from an x86_64 machine:
#
#   scripts/cargo-aarch64.sh build --release        # target/cross/aarch64-unknown-linux-gnu/release/cpuscope
#   scripts/cargo-aarch64.sh test --release         # the test suite, run under qemu-aarch64
#   scripts/cargo-aarch64.sh clippy --all-targets -- -D warnings
#
# The toolchain: Debian's rustc/cargo with the aarch64 standard library when
# they are installed (packages rustc-web cargo-web libstd-rust-web-dev:arm64
# rust-web-clippy, what .ci/run installs), else rustup's with its
# aarch64-unknown-linux-gnu target. Linker and C compiler (the bundled SQLite):
# gcc-aarch64-linux-gnu. Tests run under qemu-aarch64 (qemu-user-static); the
# cpuscope binary they start runs through the kernel's binfmt_misc entry for
# aarch64, which this script registers when it is missing and it can (root).
# Artifacts go to target/cross/ ($CPUSCOPE_CROSS_TARGET_DIR), apart from the
# host build: the two compilers may differ.
set -euo pipefail
cd "$(dirname "$0")/.."
T=aarch64-unknown-linux-gnu

die() { echo "cargo-aarch64: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: scripts/cargo-aarch64.sh CARGO-SUBCOMMAND [ARGS...]"
command -v aarch64-linux-gnu-gcc >/dev/null || die "aarch64-linux-gnu-gcc not found (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"

if [ -d /usr/lib/rustlib/$T ] && [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; then
  CARGO=/usr/bin/cargo
  export RUSTC=/usr/bin/rustc
  [ -x /usr/bin/clippy-driver ] && export CLIPPY_DRIVER=/usr/bin/clippy-driver
  # Debian's cargo finds cargo-clippy on PATH: put /usr/bin first for it.
  export PATH=/usr/bin:$PATH
  which=debian
elif command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -qx $T; then
  CARGO=cargo
  which=rustup
else
  die "no Rust toolchain for $T: apt-get install rustc-web cargo-web libstd-rust-web-dev:arm64 (after dpkg --add-architecture arm64), or rustup target add $T"
fi

export CARGO_TARGET_DIR=${CPUSCOPE_CROSS_TARGET_DIR:-target/cross}
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar

sub=$1; shift
case $sub in
  test|run|bench)
    qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
    [ -n "$qemu" ] || die "qemu-aarch64 not found (apt-get install qemu-user-static)"
    # The aarch64 shared libraries: Debian's multiarch libc6:arm64, or the cross sysroot.
    if [ ! -e /lib/ld-linux-aarch64.so.1 ]; then export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu; fi
    # qemu-aarch64 with a time limit per test binary (a qemu-user fork
    # deadlock must not hang the suite): scripts/qemu-aarch64-runner.sh.
    export CPUSCOPE_QEMU=$qemu
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=$PWD/scripts/qemu-aarch64-runner.sh
    # Tests that need a syscall qemu-user lacks (perf_event_open, the NUMA
    # memory-policy calls) skip with a printed line when it really answers
    # ENOSYS (tests/common/emulator.rs); the ARM lab runs those paths.
    export CPUSCOPE_TEST_EMULATOR=qemu-user
    why=$(scripts/binfmt-aarch64.sh 2>&1) || die "$why: the tests start the aarch64 cpuscope binary"
    ;;
esac
echo "cargo-aarch64: $which toolchain ($(${RUSTC:-rustc} --version)), target dir $CARGO_TARGET_DIR" >&2
exec $CARGO "$sub" --target $T "$@"

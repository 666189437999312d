#!/usr/bin/env bash
# The aarch64 (arm64) release binary, built here on x86_64 for an ARM server
# that has no Rust toolchain:
#
#   scripts/build-aarch64.sh            # -> target/cross/cpuscope-aarch64 (stripped)
#
# Needs what scripts/cargo-aarch64.sh needs (Debian: dpkg --add-architecture
# arm64; apt-get install rustc-web cargo-web libstd-rust-web-dev:arm64
# gcc-aarch64-linux-gnu libc6-dev-arm64-cross; or rustup's
# aarch64-unknown-linux-gnu target). Copy the file to the server and run it:
# `./cpuscope-aarch64 run`. It is linked against this machine's glibc: the
# oldest glibc it needs is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/cargo-aarch64.sh build --release --bin cpuscope
dir=${CPUSCOPE_CROSS_TARGET_DIR:-target/cross}
src=$dir/aarch64-unknown-linux-gnu/release/cpuscope
out=$dir/cpuscope-aarch64
strip=$(command -v aarch64-linux-gnu-strip || true)
if [ -n "$strip" ]; then
  "$strip" -o "$out" "$src"
else
  cp "$src" "$out"
fi
need=$(aarch64-linux-gnu-objdump -T "$out" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -t. -k2,2n -u | tail -1 || true)
echo "$out"
echo "build-aarch64: $(du -h "$out" | cut -f1), needs ${need:-an unknown glibc} or newer on the target" >&2

#!/usr/bin/env bash
# Build cpuscope's portable binaries and packages:
#
#   scripts/package.sh [--arch amd64|arm64|all] [--out DIR]     (default: all, target/package/out)
#
# For each architecture:
#   - one binary that starts on glibc 2.17 and later (CentOS 7 onwards):
#     `cargo zigbuild --release --target <triple>.2.17` (cargo-zigbuild, with Zig
#     from the PyPI package ziglang); amd64 with the rustup toolchain, arm64 with
#     Debian's rustc and aarch64 standard library when installed (what .ci/run
#     installs), else rustup's aarch64 target;
#   - the floor check (scripts/check-glibc-floor.sh): no dynamic symbol may need
#     more than GLIBC_2.17;
#   - debug info split into cpuscope.debug (objcopy), the binary stripped and
#     linked to it (.gnu_debuglink);
#   - cpuscope-VERSION-linux-ARCH.tar.gz: bin/, share/man/man1 (one page per
#     sub-command, rendered by `cpuscope manpage` from the clap definitions),
#     bash/zsh/fish completions (`cpuscope completions`), README, licences;
#   - cpuscope_VERSION-1_ARCH.deb (dpkg-deb, from packaging/deb/control and
#     packaging/deb/copyright; the files at the paths of Debian's layout);
#   - cpuscope-VERSION-1.RPMARCH.rpm (rpmbuild, packaging/rpm/cpuscope.spec:
#     the same files, zsh's completion where RPM distributions look), checked:
#     `rpm -qlp` lists the .deb's files, and it installs into a scratch root
#     (`rpm --root DIR -i --nodeps`);
#   - cpuscope-VERSION-linux-ARCH.debug.tar.gz: the debug info.
# Tools: cargo-zigbuild and ziglang (scripts/install-zigbuild.sh puts both,
# prebuilt, from PyPI in a virtual environment: add its bin folder to PATH),
# dpkg-deb, rpmbuild (Debian's rpm package), binutils (readelf, objcopy;
# binutils-aarch64-linux-gnu for arm64); .ci/run installs them.
set -euo pipefail
cd "$(dirname "$0")/.."
FLOOR=2.17
arches=(amd64 arm64)
out=target/package/out
die() { echo "package: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --arch) shift; [ $# -gt 0 ] || die "--arch needs amd64, arm64 or all"
            case $1 in all) arches=(amd64 arm64);; amd64|arm64) arches=("$1");; *) die "unknown architecture '$1' (amd64, arm64, all)";; esac;;
    --out) shift; [ $# -gt 0 ] || die "--out needs a directory"; out=$1;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    *) die "unknown argument '$1' (see --help)";;
  esac
  shift
done

zigbuild=$(command -v cargo-zigbuild) || die "cargo-zigbuild not found: PATH=\$(scripts/install-zigbuild.sh):\$PATH"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found (apt-get install dpkg)"
command -v rpmbuild >/dev/null || die "rpmbuild not found (apt-get install rpm)"
# Zig: on PATH, else the PyPI package's binary, from the python3 beside
# cargo-zigbuild (install-zigbuild.sh's environment) or the one on PATH
# (cargo-zigbuild also tries `python3 -m ziglang`, but the arm64 build puts
# Debian's /usr/bin first).
if [ -z "${CARGO_ZIGBUILD_ZIG_PATH:-}" ] && ! command -v zig >/dev/null; then
  z=
  for py in "$(dirname "$zigbuild")/python3" python3; do
    z=$("$py" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null) && break
  done
  [ -n "$z" ] || die "zig not found: scripts/install-zigbuild.sh (or pip install ziglang)"
  export CARGO_ZIGBUILD_ZIG_PATH=$z
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=target/package/stage

build() { # arch → path of the binary
  local arch=$1 triple tdir
  case $arch in amd64) triple=x86_64-unknown-linux-gnu;; arm64) triple=aarch64-unknown-linux-gnu;; esac
  tdir=target/dist/$arch
  echo "package: building $arch ($triple, glibc >= $FLOOR)" >&2
  (
    export CARGO_TARGET_DIR=$tdir CPUSCOPE_GLIBC_FLOOR=$FLOOR
    # Debug info for the separate .debug file; stripped below.
    export CARGO_PROFILE_RELEASE_DEBUG=1 CARGO_PROFILE_RELEASE_STRIP=none
    if [ "$arch" = arm64 ] && [ -d /usr/lib/rustlib/$triple ] && [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; then
      export PATH=/usr/bin:$PATH RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo
    fi
    "$zigbuild" zigbuild --locked --release --target "$triple.$FLOOR" --bin cpuscope >&2
  )
  echo "$tdir/$triple/release/cpuscope"
}

tool() { # arch tool → the binutils tool that reads that architecture
  local t=$2
  if [ "$1" = arm64 ] && command -v "aarch64-linux-gnu-$t" >/dev/null; then echo "aarch64-linux-gnu-$t"; else echo "$t"; fi
}

# Man pages and completions come from the first binary that runs here.
docs() { # binary
  local bin=$1 name
  rm -rf "$stage/man" "$stage/completions"
  mkdir -p "$stage/man" "$stage/completions"
  for name in $("$bin" manpage --list); do
    if [ "$name" = cpuscope ]; then "$bin" manpage; else "$bin" manpage "${name#cpuscope-}"; fi \
      | gzip -9n > "$stage/man/$name.1.gz"
  done
  "$bin" completions bash > "$stage/completions/cpuscope.bash"
  "$bin" completions zsh > "$stage/completions/_cpuscope"
  "$bin" completions fish > "$stage/completions/cpuscope.fish"
}

# The .deb: the staged files at Debian's paths, packaging/deb/control with
# the version, architecture and installed size, the copyright file and the
# md5sums, built by dpkg-deb with root as every file's owner.
deb() { # arch out.deb
  local arch=$1 d=target/package/deb-$1 size
  rm -rf "$d"
  install -D -m 755 "$stage/bin/cpuscope" "$d/usr/bin/cpuscope"
  install -d "$d/usr/share/man/man1" "$d/usr/share/doc/cpuscope"
  install -m 644 "$stage"/man/*.1.gz "$d/usr/share/man/man1/"
  install -D -m 644 "$stage/completions/cpuscope.bash" "$d/usr/share/bash-completion/completions/cpuscope"
  install -D -m 644 "$stage/completions/_cpuscope" "$d/usr/share/zsh/vendor-completions/_cpuscope"
  install -D -m 644 "$stage/completions/cpuscope.fish" "$d/usr/share/fish/vendor_completions.d/cpuscope.fish"
  install -m 644 README.md LICENSE-MIT LICENSE-APACHE packaging/deb/copyright "$d/usr/share/doc/cpuscope/"
  size=$(du -sk "$d" | cut -f1)
  install -d "$d/DEBIAN"
  sed -e "s/@VERSION@/$version-1/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" packaging/deb/control > "$d/DEBIAN/control"
  (cd "$d" && find usr -type f | LC_ALL=C sort | xargs md5sum) > "$d/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zxz --build "$d" "$2" >/dev/null
}

# The .rpm: the .deb's staged tree (deb must run first) through
# packaging/rpm/cpuscope.spec; then its checks.
rpmpkg() { # arch out.rpm deb
  local arch=$1 rarch top
  case $arch in amd64) rarch=x86_64;; arm64) rarch=aarch64;; esac
  top=$(pwd)/target/package/rpm-$arch
  rm -rf "$top" && mkdir -p "$top/SPECS"
  sed -e "s/@VERSION@/$version/" packaging/rpm/cpuscope.spec > "$top/SPECS/cpuscope.spec"
  rpmbuild -bb --quiet --target "$rarch" --define "_topdir $top" \
    --define "stage $(pwd)/target/package/deb-$arch" "$top/SPECS/cpuscope.spec" >&2
  cp "$top/RPMS/$rarch/cpuscope-$version-1.$rarch.rpm" "$2"
  check_rpm "$arch" "$2" "$3"
}

# The .rpm holds the .deb's files (zsh's completion at its RPM path) and
# installs into a scratch root with the package's paths and modes.
check_rpm() { # arch rpm deb
  local root want got log
  want=$(dpkg-deb -c "$3" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./|/|; s|/zsh/vendor-completions/|/zsh/site-functions/|' | LC_ALL=C sort)
  got=$(rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$2" | awk '$1 !~ /^d/ {print $2}' | LC_ALL=C sort)
  [ "$want" = "$got" ] || die "$2: its files differ from the .deb's: $(diff <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
  root=$(mktemp -d)
  rpm --root "$root" --initdb
  # (Debian's rpm warns that dpkg owns its system: not this scratch root.)
  log=$(rpm --root "$root" -i --nodeps --ignorearch --nosignature "$2" 2>&1) \
    || { rm -rf "$root"; die "$2: rpm --root -i failed: $log"; }
  [ -x "$root/usr/bin/cpuscope" ] && [ -s "$root/usr/share/man/man1/cpuscope.1.gz" ] \
    && [ -s "$root/usr/share/zsh/site-functions/_cpuscope" ] \
    || { rm -rf "$root"; die "$2: installed, but its files are not in place"; }
  rm -rf "$root"
  echo "package: $1: $(basename "$2"): the .deb's $(echo "$want" | wc -l) files, installs with rpm --root" >&2
}

docs_from=
for arch in "${arches[@]}"; do
  bin=$(build "$arch")
  scripts/check-glibc-floor.sh "$bin" "$FLOOR"
  rm -rf "$stage/bin" && mkdir -p "$stage/bin"
  objcopy=$(tool "$arch" objcopy)
  "$objcopy" --only-keep-debug "$bin" "$stage/bin/cpuscope.debug"
  "$objcopy" --strip-debug --strip-unneeded --add-gnu-debuglink="$stage/bin/cpuscope.debug" "$bin" "$stage/bin/cpuscope"
  if [ -z "$docs_from" ] && "$stage/bin/cpuscope" --version >/dev/null 2>&1; then
    docs "$stage/bin/cpuscope"; docs_from=$arch
  fi
  [ -n "$docs_from" ] || die "no binary built so far runs here to render the man pages (build amd64 too, or register qemu-user)"

  name=cpuscope-$version-linux-$arch
  tree=target/package/$name
  rm -rf "$tree" && mkdir -p "$tree/bin" "$tree/share/man/man1" "$tree/share/doc/cpuscope" \
    "$tree/share/bash-completion/completions" "$tree/share/zsh/site-functions" "$tree/share/fish/vendor_completions.d"
  cp "$stage/bin/cpuscope" "$tree/bin/"
  cp "$stage"/man/*.1.gz "$tree/share/man/man1/"
  cp "$stage/completions/cpuscope.bash" "$tree/share/bash-completion/completions/cpuscope"
  cp "$stage/completions/_cpuscope" "$tree/share/zsh/site-functions/"
  cp "$stage/completions/cpuscope.fish" "$tree/share/fish/vendor_completions.d/"
  cp README.md LICENSE-MIT LICENSE-APACHE "$tree/share/doc/cpuscope/"
  tar -C target/package --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
  tar -C "$stage/bin" --owner=0 --group=0 -czf "$out/$name.debug.tar.gz" cpuscope.debug

  deb "$arch" "$out/cpuscope_${version}-1_$arch.deb"
  rpmpkg "$arch" "$out/cpuscope-$version-1.$([ "$arch" = amd64 ] && echo x86_64 || echo aarch64).rpm" \
    "$out/cpuscope_${version}-1_$arch.deb"

  printf 'package: %s: binary %s bytes (debug info %s bytes apart), %s, %s\n' "$arch" \
    "$(stat -c %s "$stage/bin/cpuscope")" "$(stat -c %s "$stage/bin/cpuscope.debug")" \
    "$(stat -c '%n %s bytes' "$out/$name.tar.gz" | sed "s|$out/||")" \
    "$(stat -c '%n %s bytes' "$out/cpuscope_${version}-1_$arch.deb" | sed "s|$out/||")"
done
echo "package: done: $out"

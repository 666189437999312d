#!/usr/bin/env bash
# deploy/ansible with cpuscope_install=package, on the packages that
# scripts/package.sh made (target/package/out, or DIR as the argument): three
# "hosts" on this machine (local connection), each installing into its own
# scratch root (cpuscope_package_root) so this machine's / is not touched:
#
#   deb-host   cpuscope_package_format=deb   dpkg --root R -i cpuscope_*.deb
#   rpm-host   cpuscope_package_format=rpm   rpm --root R -U cpuscope-*.rpm
#   auto-host  cpuscope_package_format=auto  this machine's family (Debian: deb)
#
# then runs the installed /usr/bin/cpuscope of each root (export mode, one
# experiment) and imports the three runs on the controller. Checks: the
# playbook succeeds; each root's package database lists cpuscope; the binary,
# man page and completions are where the package puts them; the three runs
# are in the central store. Needs ansible-playbook ($CPUSCOPE_ANSIBLE_PLAYBOOK
# or deploy/ansible/install-ansible.sh), dpkg and rpm; root (dpkg --root
# still wants it). Exit 0 when every check holds, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "test-ansible-packages: $*" >&2; exit 1; }
out=$(realpath "${1:-target/package/out}")
arch=$(uname -m)
case $arch in x86_64) deb=amd64 ;; aarch64) deb=arm64 ;; *) die "no package for $arch" ;; esac
ls "$out"/cpuscope_*_"$deb".deb >/dev/null 2>&1 || die "no .deb for $deb in $out (scripts/package.sh)"
ls "$out"/cpuscope-*."$arch".rpm >/dev/null 2>&1 || die "no .rpm for $arch in $out (scripts/package.sh)"
playbook=${CPUSCOPE_ANSIBLE_PLAYBOOK:-$(deploy/ansible/install-ansible.sh)}
[ -x "$playbook" ] || die "ansible-playbook not found ($playbook)"
# The controller's cpuscope, which imports: the .deb's binary, unpacked.
w=$(mktemp -d /tmp/cpuscope-ansible-pkg.XXXXXX)
trap 'rm -rf "$w"' EXIT
dpkg-deb -x "$out"/cpuscope_*_"$deb".deb "$w/controller"
for h in deb rpm auto; do
  r=$w/root-$h
  mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates"
  touch "$r/var/lib/dpkg/status"
  rpm --root "$r" --initdb
done
cat > "$w/inventory.ini" <<EOF
deb-host cpuscope_package_format=deb cpuscope_package_root=$w/root-deb cpuscope_dir=$w/hosts/deb
rpm-host cpuscope_package_format=rpm cpuscope_package_root=$w/root-rpm cpuscope_dir=$w/hosts/rpm
auto-host cpuscope_package_format=auto cpuscope_package_root=$w/root-auto cpuscope_dir=$w/hosts/auto

[all:vars]
ansible_connection=local
ansible_python_interpreter={{ ansible_playbook_python }}
cpuscope_install=package
cpuscope_package_dir=$out
cpuscope_mode=export
cpuscope_central_store=$w/central.db
cpuscope_controller_binary=$w/controller/usr/bin/cpuscope
cpuscope_fetch_dir=$w/fetched
cpuscope_lock_file=$w/cpuscope.lock
cpuscope_profile=quick
cpuscope_only=frequency
EOF
ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP=$w/ansible-tmp ANSIBLE_HOME=$w/ansible-home \
  "$playbook" -i "$w/inventory.ini" deploy/ansible/cpuscope.yml > "$w/play.log" 2>&1 \
  || { cat "$w/play.log"; die "ansible-playbook failed"; }
for h in deb rpm auto; do
  r=$w/root-$h
  for f in usr/bin/cpuscope usr/share/man/man1/cpuscope.1.gz usr/share/bash-completion/completions/cpuscope; do
    [ -f "$r/$f" ] || die "$h-host: no /$f in its root"
  done
  case $h in
    rpm) rpm --root "$r" -q cpuscope >/dev/null || die "rpm-host: rpm -q cpuscope: not installed" ;;
    *) dpkg --root="$r" -s cpuscope 2>/dev/null | grep -q '^Status: install ok installed' \
         || die "$h-host: dpkg -s cpuscope: not installed" ;;
  esac
done
runs=$("$w/controller/usr/bin/cpuscope" --store "$w/central.db" runs --json)
for h in deb-host rpm-host auto-host; do
  echo "$runs" | grep -q "\"inventory=$h\"" || die "no run of $h in the central store: $runs"
done
grep -E '^ok: |: ok, run |FAILED' "$w/play.log" | grep -E 'ok, run|FAILED' | sed 's/^/  /' || true
echo "test-ansible-packages: .deb (dpkg), .rpm (rpm) and auto ($(dpkg --version >/dev/null 2>&1 && echo deb)) hosts installed the package and ran it"

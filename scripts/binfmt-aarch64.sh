#!/usr/bin/env bash
# Make sure the kernel runs aarch64 ELF binaries through qemu-user
# (binfmt_misc): mount binfmt_misc and register qemu-user-static's entry
# (/usr/lib/binfmt.d/qemu-aarch64.conf, flags OPF: the interpreter is opened
# now, so it works inside a chroot too) when it is missing. Needs root to
# register; exits 0 when the entry is there, 1 with a reason when not.
bf=/proc/sys/fs/binfmt_misc
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
[ -e $bf/qemu-aarch64 ] && exit 0
if [ ! -e $bf/register ] && [ "$(id -u)" = 0 ]; then mount -t binfmt_misc binfmt_misc $bf 2>/dev/null || true; fi
if [ "$(id -u)" = 0 ] && [ -e $bf/register ] && [ -f $conf ]; then
  cat $conf > $bf/register 2>/dev/null && [ -e $bf/qemu-aarch64 ] && exit 0
  echo "cannot register $conf with binfmt_misc" >&2
  exit 1
fi
echo "no binfmt_misc entry for aarch64 (as root: mount binfmt_misc and write $conf, from qemu-user-static, to $bf/register)" >&2
exit 1

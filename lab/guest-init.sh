#!/bin/busybox sh
# PID 1 of a lab guest: mount the pseudo file systems, run the topology's
# guest script as root, then send everything under /out back to the host on
# the data serial port (tar, gzip, base64, between two marker lines) and
# power off. The kernel's own console is another port (LAB_CONSOLE).
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
# x86: console on the first 16550 (ttyS0), data on the second (ttyS1).
# aarch64 (QEMU virt): console on the PL011 (ttyAMA0), data on a PCI 16550
# (-device pci-serial), the only 8250 port with a device behind it: ttyS0.
case $(uname -m) in
  aarch64) LAB_CONSOLE=/dev/ttyAMA0 LAB_DATA=/dev/ttyS0 ;;
  *) LAB_CONSOLE=/dev/ttyS0 LAB_DATA=/dev/ttyS1 ;;
esac
export LAB_CONSOLE LAB_DATA
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /dev/hugepages && mount -t hugetlbfs hugetlbfs /dev/hugepages
mkdir -p /out /root
export HOME=/root XDG_DATA_HOME=/root/.local/share TERM=dumb NO_COLOR=1
cd /root
echo "lab: guest up, $(nproc) CPUs online, kernel $(uname -r)" > /out/guest.log
echo "lab-progress: [init] $(cut -d' ' -f1 /proc/uptime) s: guest up, $(nproc) CPUs online" > $LAB_CONSOLE
sh /lab/guest.sh >> /out/guest.log 2>&1
echo "guest.sh exit $?" >> /out/guest.log
{
  echo "=====LAB-OUT-BEGIN====="
  tar -c -C /out . | gzip | base64
  echo "=====LAB-OUT-END====="
} > $LAB_DATA
sync
poweroff -f

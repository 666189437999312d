#!/bin/busybox sh
# PID 1 of a lab guest: mount the pseudo file systems, run the topology's
# guest script as root, then send everything under /out back to the host on
# the second serial port (tar, gzip, base64, between two marker lines) and
# power off. The kernel's own console is the first serial port.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
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
echo "lab-progress: [init] $(cut -d' ' -f1 /proc/uptime) s: guest up, $(nproc) CPUs online" > /dev/ttyS0
sh /lab/guest.sh >> /out/guest.log 2>&1
echo "guest.sh exit $?" >> /out/guest.log
{
  echo "=====LAB-OUT-BEGIN====="
  tar -c -C /out . | gzip | base64
  echo "=====LAB-OUT-END====="
} > /dev/ttyS1
sync
poweroff -f

//! Per-process facts: /proc/PID/numa_maps, status, sched NUMA counters.

#!/usr/bin/env bash
# Compare `cpuscope info --json` on this machine with what lscpu, numactl -H and
# hwloc (lstopo-no-graphics / hwloc-calc) say: CPU counts, sockets, cores,
# threads per core, NUMA nodes (CPUs, memory, distances) and caches (size per
# instance, number of instances). Prints a table; exits 1 on any disagreement,
# 2 when it cannot run at all, 0 otherwise. A tool that is not installed is
# skipped with a message (Debian: apt-get install util-linux numactl hwloc-nox).
#
# Usage: scripts/compare-info.sh [path/to/cpuscope]
#        CPUSCOPE=path/to/cpuscope scripts/compare-info.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-${CPUSCOPE:-}}"
if [[ -z "$bin" ]]; then
    for c in "$here/target/debug/cpuscope" "$here/target/release/cpuscope"; do
        if [[ -x "$c" ]]; then bin="$c"; break; fi
    done
fi
if [[ -z "$bin" ]] && command -v cpuscope >/dev/null 2>&1; then
    bin="$(command -v cpuscope)"
fi
if [[ -z "$bin" ]]; then
    echo "compare-info: error: no cpuscope binary found (run 'cargo build' or pass its path)" >&2
    exit 2
fi
if [[ ! -x "$bin" ]]; then
    echo "compare-info: error: '$bin' is not an executable file" >&2
    exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "compare-info: error: python3 is needed to read the JSON outputs" >&2
    exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$bin" info --json >"$tmp/cpuscope.json" 2>"$tmp/cpuscope.err"; then
    echo "compare-info: error: '$bin info --json' failed: $(head -c 300 "$tmp/cpuscope.err")" >&2
    exit 2
fi

# Collect what each tool says; an empty or missing file means "not available".
skipped=()
if command -v lscpu >/dev/null 2>&1; then
    lscpu -J >"$tmp/lscpu.json" 2>/dev/null || rm -f "$tmp/lscpu.json"
    lscpu -p=CPU,CORE,SOCKET,NODE --online >"$tmp/lscpu.p" 2>/dev/null || rm -f "$tmp/lscpu.p"
    lscpu -C --bytes -J >"$tmp/lscpu-caches.json" 2>/dev/null || rm -f "$tmp/lscpu-caches.json"
else
    skipped+=("lscpu: not installed (Debian package util-linux)")
fi
if command -v numactl >/dev/null 2>&1; then
    if ! numactl -H >"$tmp/numactl.txt" 2>&1; then
        skipped+=("numactl: 'numactl -H' failed: $(head -n1 "$tmp/numactl.txt")")
        rm -f "$tmp/numactl.txt"
    fi
else
    skipped+=("numactl: not installed (Debian package numactl)")
fi
if command -v hwloc-calc >/dev/null 2>&1; then
    for t in pu core package numanode l1dcache l1icache l2cache l3cache; do
        hwloc-calc -N "$t" all >"$tmp/hwloc-$t.txt" 2>/dev/null || rm -f "$tmp/hwloc-$t.txt"
    done
else
    skipped+=("hwloc-calc: not installed (Debian package hwloc-nox)")
fi
if command -v lstopo-no-graphics >/dev/null 2>&1; then
    lstopo-no-graphics -v --no-io --of console >"$tmp/lstopo.txt" 2>/dev/null || rm -f "$tmp/lstopo.txt"
else
    skipped+=("lstopo-no-graphics: not installed (Debian package hwloc-nox)")
fi
for s in "${skipped[@]+"${skipped[@]}"}"; do
    echo "skipped: $s"
done

python3 - "$tmp" <<'PY'
import json, os, re, sys

tmp = sys.argv[1]

def path(name):
    p = os.path.join(tmp, name)
    return p if os.path.isfile(p) and os.path.getsize(p) > 0 else None

def read(name):
    p = path(name)
    return open(p, encoding="utf-8", errors="replace").read() if p else None

def cpulist(s):
    out = set()
    s = (s or "").strip()
    if not s:
        return out
    for part in s.split(","):
        part = part.strip()
        step = 1
        if ":" in part:
            part, st = part.split(":")
            step = int(st)
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1, step))
        else:
            out.add(int(part))
    return out

def fmt_set(s):
    v = sorted(s)
    out, i = [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        out.append(str(v[i]) if i == j else f"{v[i]}-{v[j]}")
        i = j + 1
    return ",".join(out) or "none"

cs = json.load(open(os.path.join(tmp, "cpuscope.json")))
online = cpulist(cs["cpus"]["online"])
usable = cpulist(cs["cpus"]["usable"])
cores = cs["cores"]
threads_per_core = max((len(cpulist(c["cpus"])) for c in cores), default=0)
nodes = cs["numa_nodes"]
usable_nodes = cpulist(cs.get("numa", {}).get("usable", ""))

def cache_name(c):
    t = c["type"]
    return f"L{c['level']}" + ("d" if t == "Data" else "i" if t == "Instruction" else "")

caches = {}
for c in cs["caches"]:
    caches.setdefault(cache_name(c), []).append(c)

rows = []          # (quantity, cpuscope, tool, tool value, verdict)
bad = 0

def check(quantity, ours, tool, theirs, ok=None):
    global bad
    if theirs is None:
        return
    if ok is None:
        ok = ours == theirs
    if not ok:
        bad += 1
    rows.append((quantity, str(ours), tool, str(theirs), "ok" if ok else "DIFFERS"))

def note(quantity, ours, tool, why):
    rows.append((quantity, str(ours), tool, "-", f"skipped: {why}"))

# ---- lscpu -------------------------------------------------------------
lp = read("lscpu.p")
if lp is not None:
    recs = []
    for line in lp.splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split(",")
        recs.append(f)
    cpus = {int(f[0]) for f in recs}
    check("online CPUs", fmt_set(online), "lscpu -p", fmt_set(cpus))
    sockets = {f[2] for f in recs if f[2] != ""}
    check("sockets", len(cs["packages"]), "lscpu -p", len(sockets))
    core_keys = {(f[2], f[1]) for f in recs if f[1] != ""}
    check("cores", len(cores), "lscpu -p", len(core_keys))
    per_core = {}
    for f in recs:
        per_core.setdefault((f[2], f[1]), 0)
        per_core[(f[2], f[1])] += 1
    check("threads per core (max)", threads_per_core, "lscpu -p", max(per_core.values(), default=0))
lj = read("lscpu.json")
if lj is not None:
    fields = {}
    for e in json.loads(lj).get("lscpu", []):
        fields[e.get("field", "").rstrip(":")] = e.get("data")
    if "NUMA node(s)" in fields:
        check("NUMA nodes", len(nodes), "lscpu", int(fields["NUMA node(s)"]))
    for n in nodes:
        k = f"NUMA node{n['id']} CPU(s)"
        if k in fields:
            ours = cpulist(n["cpus"]) & online
            check(f"node {n['id']} CPUs", fmt_set(ours), "lscpu", fmt_set(cpulist(fields[k])))
lc = read("lscpu-caches.json")
if lc is not None:
    for e in json.loads(lc).get("caches", []):
        name = e.get("name")
        ours = caches.get(name, [])
        one, total = int(e.get("one-size") or 0), int(e.get("all-size") or 0)
        sizes = sorted({c["size_bytes"] for c in ours if c["size_bytes"] is not None})
        our_total = sum(c["size_bytes"] or 0 for c in ours)
        check(f"{name} total size (bytes)", our_total, "lscpu -C", total)
        if len(sizes) == 1:
            check(f"{name} size per instance (bytes)", sizes[0], "lscpu -C", one)
            if one:
                check(f"{name} instances", len(ours), "lscpu -C", total // one)
        else:
            note(f"{name} size per instance", "/".join(map(str, sizes)), "lscpu -C",
                 "instances differ in size (hybrid): lscpu shows one")
elif lp is not None:
    rows.append(("caches", "-", "lscpu", "-", "skipped: 'lscpu -C' not supported (util-linux < 2.34)"))

# ---- numactl -H --------------------------------------------------------
nt = read("numactl.txt")
if nt is not None:
    ncpus, nsize, dist, dist_ids = {}, {}, [], None
    m = re.search(r"available:\s+(\d+)\s+nodes", nt)
    if m:
        check("NUMA nodes", len(nodes), "numactl -H", int(m.group(1)))
    for line in nt.splitlines():
        m = re.match(r"node (\d+) cpus:(.*)", line)
        if m:
            ncpus[int(m.group(1))] = {int(x) for x in m.group(2).split()}
        m = re.match(r"node (\d+) size: (\d+) MB", line)
        if m:
            nsize[int(m.group(1))] = int(m.group(2))
        m = re.match(r"node\s+((?:\d+\s*)+)$", line.strip())
        if m and dist_ids is None and line.strip().startswith("node "):
            dist_ids = [int(x) for x in m.group(1).split()]
            continue
        m = re.match(r"\s*(\d+):\s+((?:\d+\s*)+)$", line)
        if m and dist_ids is not None:
            dist.append([int(x) for x in m.group(2).split()])
    for n in nodes:
        i = n["id"]
        if i in ncpus:
            ours = cpulist(n["cpus"]) & online
            check(f"node {i} CPUs", fmt_set(ours), "numactl -H", fmt_set(ncpus[i] & online))
        if i in nsize:
            mb = (n["memory_bytes"] or 0) >> 20
            # numactl prints MemTotal >> 20; allow 1% for memory hot(un)plug between the two reads.
            check(f"node {i} memory (MiB)", mb, "numactl -H", nsize[i],
                  ok=abs(mb - nsize[i]) <= max(1, nsize[i] // 100))
    if dist:
        ours = [n["distances"] for n in nodes]
        check("node distances", ours, "numactl -H", dist)

# ---- hwloc -------------------------------------------------------------
def hw(t):
    s = read(f"hwloc-{t}.txt")
    try:
        return int(s.strip()) if s is not None else None
    except ValueError:
        return None

# Our affinity, seen by python (same process tree, same affinity as cpuscope had).
if hasattr(os, "sched_getaffinity"):
    check("usable CPUs", fmt_set(usable), "python sched_getaffinity",
          fmt_set(set(os.sched_getaffinity(0)) & online))

# hwloc shows what the cgroup cpuset allows (not the affinity, e.g. taskset), so
# compare with online CPUs inside the cgroup cpuset.
cg = cs["cpus"].get("cgroup") or {}
hwview = online & cpulist(cg["cpus"]) if cg.get("cpus") else set(online)
usable_cores = [c for c in cores if cpulist(c["cpus"]) & hwview]
usable_pk = {p["id"] for p in cs["packages"] if cpulist(p["cpus"]) & hwview}
for n in nodes:
    if n["id"] in usable_nodes:
        for p in cs["packages"]:
            if n["id"] in cpulist(p.get("nodes", "")):
                usable_pk.add(p["id"])
check("CPUs in cgroup (PU)", len(hwview), "hwloc-calc", hw("pu"))
check("cores in cgroup", len(usable_cores), "hwloc-calc", hw("core"))
check("packages in cgroup", len(usable_pk), "hwloc-calc", hw("package"))
check("NUMA nodes in cgroup", len(usable_nodes), "hwloc-calc", hw("numanode"))
for t, name in (("l1dcache", "L1d"), ("l1icache", "L1i"), ("l2cache", "L2"), ("l3cache", "L3")):
    ours = [c for c in caches.get(name, []) if cpulist(c["shared_cpu_list"]) & hwview]
    check(f"{name} instances in cgroup", len(ours), "hwloc-calc", hw(t))

lt = read("lstopo.txt")
if lt is not None:
    unit = {"B": 1, "KB": 1024, "KiB": 1024, "MB": 1 << 20, "MiB": 1 << 20, "GB": 1 << 30, "GiB": 1 << 30}
    seen = {}
    for m in re.finditer(r"\b(L\d)([di]?)Cache L#\d+ \([^)]*?size=(\d+)([KMG]i?B|B)", lt):
        name = m.group(1) + m.group(2)
        seen.setdefault(name, []).append(int(m.group(3)) * unit[m.group(4)])
    for name, sizes in sorted(seen.items()):
        ours = sorted(c["size_bytes"] or 0 for c in caches.get(name, [])
                      if cpulist(c["shared_cpu_list"]) & hwview)
        # lstopo rounds to its unit: compare in KiB.
        check(f"{name} sizes (KiB, in cgroup)", [s >> 10 for s in ours], "lstopo", sorted(s >> 10 for s in sizes))

# ---- table -------------------------------------------------------------
head = ("quantity", "cpuscope", "tool", "tool says", "verdict")
def clip(s, n=40):
    return s if len(s) <= n else s[: n - 1] + "…"
table = [head] + [tuple(clip(c) for c in r) for r in rows]
w = [max(len(r[i]) for r in table) for i in range(5)]
for r in table:
    print("  ".join(r[i].ljust(w[i]) for i in range(5)).rstrip())
checked = sum(1 for r in rows if not r[4].startswith("skipped"))
print(f"\n{checked} checks, {bad} disagreements")
if checked == 0:
    print("nothing to compare: none of lscpu, numactl, hwloc-calc, lstopo-no-graphics gave an answer")
sys.exit(1 if bad else 0)
PY

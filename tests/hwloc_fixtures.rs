//! Topology, caches and NUMA read from hwloc's recorded Linux sysfs trees
//! (tests/fixtures/hwloc-linux/, from hwloc's test suite, see COPYING.hwloc),
//! checked against what hwloc itself printed for each (the `.console` files),
//! plus checks of the `info` command and its errors.
//!
//! hwloc's `.console` shows only what the recorded process could use (CPUs
//! outside its cgroup cpuset and offline CPUs are left out, memory nodes outside
//! its cpuset mems too), so counts from it are compared with the *usable* view
//! of `MachineInfo`; the full machine is checked per fixture below.

use cpuscope::machine::cache::CacheInstance;
use cpuscope::machine::{discover, MachineInfo, Sysroot};
use cpuscope::placement::CpuSet;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hwloc-linux")
}

fn fixture_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".console").map(str::to_string)
        })
        .collect();
    v.sort();
    v
}

fn load(name: &str) -> MachineInfo {
    let sys = Sysroot::new(fixtures_dir().join(name)).expect("fixture is a sysroot");
    discover(&sys).expect("discover")
}

fn set(s: &str) -> CpuSet {
    CpuSet::parse(s).expect("cpu list")
}

// ---------------------------------------------------------------------------
// What hwloc printed.

#[derive(Debug, Default)]
struct Console {
    /// "Package" -> count, from the `depth N: count Type` lines.
    counts: BTreeMap<String, usize>,
    /// Type -> P# of each object in the tree.
    pids: BTreeMap<String, Vec<usize>>,
    /// Cache type -> sizes as printed ("2048KiB"), one per object.
    cache_sizes: BTreeMap<String, Vec<String>>,
    /// NUMA node P# -> local memory as printed.
    node_mem: BTreeMap<usize, String>,
    /// CPUs hwloc could not represent (offline or outside the cgroup).
    not_represented: CpuSet,
    /// cpusets of the CPU kinds.
    kinds: Vec<CpuSet>,
    /// Latency matrix between the shown NUMA nodes, by logical index.
    distances: Vec<Vec<u32>>,
}

fn parse_console(text: &str) -> Console {
    let mut c = Console::default();
    let mut in_matrix = false;
    for line in text.lines() {
        let t = line.trim();
        if in_matrix {
            if t.starts_with("index") {
                continue;
            }
            let nums: Vec<u32> = t
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if nums.len() > 1 {
                c.distances.push(nums[1..].to_vec());
                continue;
            }
            in_matrix = false;
        }
        if t.starts_with("Relative latency matrix") {
            in_matrix = true;
            continue;
        }
        if let Some(rest) = t
            .strip_prefix("Special depth ")
            .or_else(|| t.strip_prefix("depth "))
        {
            // "1:          3 Package (type #1)"
            if let Some((_, r)) = rest.split_once(':') {
                let mut it = r.split_whitespace();
                if let (Some(n), Some(ty)) = (it.next(), it.next()) {
                    if let Ok(n) = n.parse() {
                        c.counts.insert(ty.to_string(), n);
                    }
                }
            }
            continue;
        }
        if let Some(idx) = t.find(" processors not represented in topology: ") {
            let mask = &t[idx + " processors not represented in topology: ".len()..];
            c.not_represented = CpuSet::parse_mask(mask.trim_start_matches("0x")).expect("mask");
            continue;
        }
        if let Some(rest) = t.strip_prefix("CPU kind #") {
            let mask = rest.split("cpuset ").nth(1).expect("kind cpuset");
            c.kinds
                .push(CpuSet::parse_mask(mask.trim().trim_start_matches("0x")).expect("mask"));
            continue;
        }
        // Tree lines: "Type L#n (P#m key=value ...)".
        let mut words = t.splitn(3, ' ');
        let (Some(ty), Some(l)) = (words.next(), words.next()) else {
            continue;
        };
        if !l.starts_with("L#") {
            continue;
        }
        let attrs = words.next().unwrap_or("");
        let attrs = attrs.trim_start_matches('(').trim_end_matches(')');
        let mut pid = None;
        for a in attrs.split_whitespace() {
            if let Some(p) = a.strip_prefix("P#") {
                pid = p.parse().ok();
            }
            if let Some(sz) = a.strip_prefix("size=") {
                c.cache_sizes
                    .entry(ty.to_string())
                    .or_default()
                    .push(sz.to_string());
            }
            if ty == "NUMANode" {
                if let (Some(m), Some(p)) = (a.strip_prefix("local="), pid) {
                    c.node_mem.insert(p, m.to_string());
                }
            }
        }
        if let Some(p) = pid {
            c.pids.entry(ty.to_string()).or_default().push(p);
        }
    }
    c
}

fn console(name: &str) -> Console {
    let p = fixtures_dir().join(format!("{name}.console"));
    parse_console(&std::fs::read_to_string(p).expect("console file"))
}

/// hwloc's way of printing a size given in KiB: KiB below 10 MiB, MiB below 10 GiB, else GiB.
fn hwloc_size(bytes: u64) -> String {
    let kib = (bytes + 512) / 1024;
    if kib < 10 * 1024 {
        format!("{kib}KiB")
    } else if kib < 10 * 1024 * 1024 {
        format!("{}MiB", (kib + 512) / 1024)
    } else {
        format!("{}GiB", (kib + 512 * 1024) / (1024 * 1024))
    }
}

fn console_cache_name(c: &CacheInstance) -> String {
    match (c.level, c.kind.as_str()) {
        (l, "Data") => format!("L{l}dCache"),
        (l, "Instruction") => format!("L{l}iCache"),
        (l, _) => format!("L{l}Cache"),
    }
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

// ---------------------------------------------------------------------------
// Every fixture against its .console.

#[test]
fn every_fixture_has_a_console_and_a_tree() {
    let names = fixture_names();
    assert!(names.len() >= 6, "fixtures found: {names:?}");
    for n in &names {
        assert!(
            fixtures_dir()
                .join(n)
                .join("sys/devices/system/cpu")
                .is_dir(),
            "{n}: unpacked tree missing"
        );
    }
    assert!(fixtures_dir().join("COPYING.hwloc").is_file());
}

#[test]
fn every_fixture_matches_hwloc_console() {
    for name in fixture_names() {
        let info = load(&name);
        let con = console(&name);
        let usable = &info.cpus.usable;

        // PUs: exactly the usable CPUs.
        assert_eq!(
            con.counts.get("PU").copied(),
            Some(usable.len()),
            "{name}: PU count"
        );
        assert_eq!(
            sorted(con.pids.get("PU").cloned().unwrap_or_default()),
            usable.to_vec(),
            "{name}: PU ids"
        );
        // CPUs hwloc could not show = present but not usable.
        assert_eq!(
            con.not_represented,
            info.cpus.present.difference(usable),
            "{name}: CPUs not represented"
        );

        // Cores (when hwloc kept that level).
        if let Some(n) = con.counts.get("Core") {
            let ours: Vec<usize> = info.usable_cores().map(|c| c.core_id).collect();
            assert_eq!(ours.len(), *n, "{name}: Core count");
            assert_eq!(
                sorted(ours),
                sorted(con.pids["Core"].clone()),
                "{name}: core ids"
            );
        }

        // NUMA nodes: those this process may allocate on.
        let nodes: Vec<usize> = info
            .numa_nodes
            .iter()
            .filter(|n| n.usable)
            .map(|n| n.id)
            .collect();
        assert_eq!(
            con.counts.get("NUMANode").copied(),
            Some(nodes.len()),
            "{name}: NUMANode count"
        );
        assert_eq!(
            sorted(con.pids["NUMANode"].clone()),
            nodes,
            "{name}: node ids"
        );
        for n in info.numa_nodes.iter().filter(|n| n.usable) {
            let printed = con.node_mem.get(&n.id).expect("node memory printed");
            let ours = hwloc_size(n.memory_bytes.expect("node memory"));
            assert_eq!(&ours, printed, "{name}: node {} memory", n.id);
        }
        if !con.distances.is_empty() {
            let idx: Vec<usize> = info
                .numa_nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.usable)
                .map(|(i, _)| i)
                .collect();
            let ours: Vec<Vec<u32>> = info
                .numa_nodes
                .iter()
                .filter(|n| n.usable)
                .map(|n| idx.iter().map(|i| n.distances[*i]).collect())
                .collect();
            assert_eq!(ours, con.distances, "{name}: distances");
        }

        // Packages: those with a usable CPU or a usable memory node.
        let mut pk: BTreeSet<usize> = info.usable_packages().map(|p| p.id).collect();
        for n in info.numa_nodes.iter().filter(|n| n.usable) {
            for p in &info.packages {
                if p.nodes.contains(n.id) {
                    pk.insert(p.id);
                }
            }
        }
        assert_eq!(
            con.counts.get("Package").copied(),
            Some(pk.len()),
            "{name}: Package count"
        );
        assert_eq!(
            sorted(con.pids["Package"].clone()),
            pk.into_iter().collect::<Vec<_>>(),
            "{name}: package ids"
        );

        // Caches: every level hwloc kept, instance count and sizes.
        for (ty, sizes) in &con.cache_sizes {
            let ours: Vec<String> = info
                .caches
                .iter()
                .filter(|c| &console_cache_name(c) == ty)
                .filter(|c| c.shared_cpu_list.iter().any(|x| usable.contains(x)))
                .map(|c| hwloc_size(c.size_bytes.expect("cache size")))
                .collect();
            assert_eq!(
                con.counts.get(ty).copied(),
                Some(ours.len()),
                "{name}: {ty} count"
            );
            assert_eq!(sorted(ours), sorted(sizes.clone()), "{name}: {ty} sizes");
        }

        // Hybrid kinds: hwloc lists one kind per distinct kind; one kind = homogeneous.
        if con.kinds.len() >= 2 {
            let ours: BTreeSet<CpuSet> = info.core_kinds.iter().map(|k| k.cpus.clone()).collect();
            let theirs: BTreeSet<CpuSet> = con.kinds.iter().cloned().collect();
            assert_eq!(ours, theirs, "{name}: CPU kinds");
        } else {
            assert!(info.core_kinds.is_empty(), "{name}: no kinds expected");
        }
    }
}

// ---------------------------------------------------------------------------
// Full machines, fixture by fixture.

fn caches_of<'a>(info: &'a MachineInfo, name: &str) -> Vec<&'a CacheInstance> {
    info.caches_named(name)
}

#[test]
fn cgroup_v1_cpuset_restricts_cpus_and_memory() {
    let info = load("16amd64-4n4c-cgroup-distance-merge");
    assert_eq!(info.packages.len(), 4);
    assert_eq!(info.cores.len(), 16);
    assert_eq!(info.threads.len(), 16);
    assert_eq!(info.numa_nodes.len(), 4);
    assert_eq!(info.cpus.online, set("0-15"));
    assert!(info.cpus.offline.is_empty());
    assert_eq!(info.cpus.usable, set("0-3"));
    assert_eq!(info.cpus.allowed, Some(set("0-3")));
    assert!(info.cpus.allowed_source.contains("cgroup v1"));
    let cg = info.cpus.cgroup.as_ref().expect("cgroup cpuset");
    assert_eq!((cg.version, cg.path.as_str()), (1, "/prout"));
    assert_eq!(cg.mems, Some(set("2-3")));
    assert_eq!(info.numa.usable, set("2-3"));
    assert_eq!(info.numa_nodes[0].memory_bytes, Some(8387892 * 1024));
    assert_eq!(info.numa_nodes[0].distances, vec![10, 20, 20, 20]);
    assert_eq!(info.numa_nodes[1].cpus, set("4-7"));
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 4);
    assert!(l3
        .iter()
        .all(|c| c.size_bytes == Some(2 << 20) && c.ways == Some(32)));
    assert_eq!(l3[0].shared_cpu_list, set("0-3"));
    assert_eq!(l3[0].per_core_bytes, Some(512 << 10));
    assert_eq!(caches_of(&info, "L2").len(), 16);
    assert_eq!(caches_of(&info, "L1d").len(), 16);
    assert_eq!(caches_of(&info, "L1i").len(), 16);
    assert!(info
        .threads
        .iter()
        .filter(|t| t.usable)
        .all(|t| t.package == 0));
    assert_eq!(info.thread(9).and_then(|t| t.node), Some(2));
    assert_eq!(
        info.numa_nodes[0]
            .hugepages
            .first()
            .map(|h| (h.page_bytes, h.total)),
        Some((2 << 20, Some(512)))
    );
}

#[test]
fn eight_numa_nodes_of_two_cores() {
    let info = load("16amd64-8n2c");
    assert_eq!(info.packages.len(), 8);
    assert!(info.packages.iter().all(|p| p.cores == 2 && p.dies == 1));
    assert_eq!(info.cores.len(), 16);
    assert_eq!(info.smt.threads_per_core, 1);
    assert!(!info.smt.active);
    assert_eq!(info.numa_nodes.len(), 8);
    for (i, n) in info.numa_nodes.iter().enumerate() {
        assert_eq!(n.id, i);
        assert_eq!(n.cpus, CpuSet::from_ids([2 * i, 2 * i + 1]));
        assert_eq!(n.distances.len(), 8);
        assert_eq!(n.distances[i], 10);
        assert!(n.usable);
    }
    assert_eq!(info.packages[3].nodes, set("3"));
    let total: u64 = info.numa_nodes.iter().filter_map(|n| n.memory_bytes).sum();
    assert_eq!(hwloc_size(total), "64GiB");
    for (name, size, ways) in [
        ("L1d", 64 << 10, 2),
        ("L1i", 64 << 10, 2),
        ("L2", 1 << 20, 16),
    ] {
        let v = caches_of(&info, name);
        assert_eq!(v.len(), 16, "{name}");
        assert!(v
            .iter()
            .all(|c| c.size_bytes == Some(size) && c.ways == Some(ways)));
        assert!(v
            .iter()
            .all(|c| c.shared_cpu_list.len() == 1 && c.cores == 1));
    }
    assert!(caches_of(&info, "L3").is_empty());
    assert_eq!(info.last_level(), Some(2));
}

#[test]
fn old_kernel_masks_and_smt() {
    let info = load("16em64t-4s2c2t");
    assert_eq!(info.packages.len(), 4);
    assert_eq!(info.cores.len(), 8);
    assert_eq!(info.threads.len(), 16);
    assert_eq!(info.smt.threads_per_core, 2);
    assert_eq!(info.smt.min_threads_per_core, 2);
    assert!(info.smt.active);
    assert_eq!(info.cpus.online, set("0-15"));
    assert_eq!(info.core_of(0).map(|c| c.cpus.clone()), Some(set("0,8")));
    assert_eq!(info.thread(8).map(|t| t.smt), Some(1));
    assert_eq!(info.packages[1].cpus, set("1,5,9,13"));
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 4);
    assert_eq!(l3[0].shared_cpu_list, set("0,4,8,12"));
    assert_eq!(l3[0].cores, 2);
    assert_eq!(caches_of(&info, "L2").len(), 8);
    assert_eq!(caches_of(&info, "L1d").len(), 8);
    assert!(caches_of(&info, "L1i").is_empty());
    assert_eq!(info.numa_nodes.len(), 1);
    assert_eq!(info.numa_nodes[0].cpus, set("0-15"));
    // No online/possible files on this old kernel: said so.
    assert!(info
        .topology_notes
        .iter()
        .any(|n| n.contains("online is missing")));
}

#[test]
fn offline_cpus_are_left_out_of_cores_and_caches() {
    let info = load("16em64t-4s2c2t-offlines");
    assert_eq!(info.cpus.offline, set("2,5,13-14"));
    assert_eq!(info.cpus.online.len(), 12);
    assert_eq!(info.cpus.usable.len(), 12);
    assert_eq!(info.packages.len(), 4);
    assert_eq!(info.cores.len(), 7);
    assert_eq!(info.threads.len(), 12);
    assert_eq!(info.smt.threads_per_core, 2);
    assert_eq!(info.smt.min_threads_per_core, 1);
    let p1 = info.packages.iter().find(|p| p.id == 1).expect("package 1");
    assert_eq!((p1.cores, p1.cpus.clone()), (1, set("1,9")));
    let p2 = info.packages.iter().find(|p| p.id == 2).expect("package 2");
    assert_eq!((p2.cores, p2.cpus.clone()), (2, set("6,10")));
    assert!(info.thread(2).is_none());
    assert_eq!(caches_of(&info, "L3").len(), 4);
    assert_eq!(caches_of(&info, "L2").len(), 7);
    assert_eq!(caches_of(&info, "L1d").len(), 7);
    assert!(info
        .caches
        .iter()
        .all(|c| c.shared_cpu_list.is_subset(&info.cpus.online)));
}

#[test]
fn hybrid_p_and_e_cores() {
    let info = load("20em64t-hybrid-1p6c2t+2ca4co1t");
    assert_eq!(info.packages.len(), 1);
    assert_eq!(info.dies.len(), 1);
    assert_eq!(info.cores.len(), 14);
    assert_eq!(info.threads.len(), 20);
    assert_eq!(info.smt.control.as_deref(), Some("on"));
    assert_eq!(
        (info.smt.min_threads_per_core, info.smt.threads_per_core),
        (1, 2)
    );
    assert_eq!(info.core_kinds.len(), 2);
    let (p, e) = (&info.core_kinds[0], &info.core_kinds[1]);
    assert_eq!((p.cpus.clone(), p.cores), (set("0-11"), 6));
    assert_eq!((e.cpus.clone(), e.cores), (set("12-19"), 8));
    assert!(p.base_khz > e.base_khz);
    assert_eq!(info.thread(13).and_then(|t| t.kind), Some(1));
    assert_eq!(info.core_of(1).and_then(|c| c.kind), Some(0));
    // E cores come in clusters of four sharing an L2.
    let big: Vec<_> = info.clusters.iter().filter(|c| c.cores > 1).collect();
    assert_eq!(big.len(), 2);
    assert_eq!(big[0].cpus, set("12-15"));
    let l2: Vec<_> = caches_of(&info, "L2");
    assert_eq!(l2.len(), 8);
    assert_eq!(
        l2.iter()
            .filter(|c| c.size_bytes == Some(1280 << 10))
            .count(),
        6
    );
    let e_l2: Vec<_> = l2
        .iter()
        .filter(|c| c.size_bytes == Some(2 << 20))
        .collect();
    assert_eq!(e_l2.len(), 2);
    assert_eq!(e_l2[0].shared_cpu_list, set("12-15"));
    assert_eq!(e_l2[0].per_core_bytes, Some(512 << 10));
    let l1d = caches_of(&info, "L1d");
    assert_eq!(l1d.len(), 14);
    assert_eq!(
        l1d.iter()
            .filter(|c| c.size_bytes == Some(48 << 10))
            .count(),
        6
    );
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 1);
    assert_eq!(
        (l3[0].size_bytes, l3[0].ways, l3[0].cores),
        (Some(24 << 20), Some(12), 14)
    );
    assert_eq!(info.cpus.isolated, Some(CpuSet::new()));
    assert_eq!(info.numa_nodes[0].hugepages.len(), 2);
}

#[test]
fn arm_without_numa_or_caches_says_why() {
    let info = load("2arm-2c");
    assert_eq!(info.packages.len(), 1);
    assert_eq!(info.packages[0].id, 3);
    assert_eq!(info.cores.len(), 2);
    assert_eq!(info.threads.len(), 2);
    assert!(info.core_kinds.is_empty());
    assert!(info.numa.implicit);
    assert!(info.numa.note.as_deref().unwrap_or("").contains("absent"));
    assert_eq!(info.numa_nodes.len(), 1);
    assert_eq!(info.numa_nodes[0].cpus, set("0-1"));
    assert_eq!(info.numa_nodes[0].memory_bytes, Some(280840 * 1024));
    assert!(info.numa_nodes[0].distances.is_empty());
    assert!(info.caches.is_empty());
    assert!(info.caches_unavailable.is_some());
    let text = cpuscope::report::info_text::render(&info);
    assert!(text.contains("not available"), "{text}");
}

#[test]
fn text_report_renders_every_fixture_compactly() {
    for name in fixture_names() {
        let info = load(&name);
        let text = cpuscope::report::info_text::render(&info);
        assert!(text.contains("Summary: "), "{name}");
        assert!(text.contains("Caches"), "{name}");
        assert!(text.contains("NUMA"), "{name}");
        assert!(
            text.lines().count() < 80,
            "{name}: {} lines",
            text.lines().count()
        );
    }
    let text = cpuscope::report::info_text::render(&load("16em64t-4s2c2t"));
    assert!(
        text.contains("4 packages × 2 cores × 2 threads = 16 CPUs, 1 NUMA node"),
        "{text}"
    );
    let text = cpuscope::report::info_text::render(&load("16em64t-4s2c2t-offlines"));
    assert!(text.contains("4 CPUs offline: 2,5,13-14"), "{text}");
    let text = cpuscope::report::info_text::render(&load("16amd64-4n4c-cgroup-distance-merge"));
    assert!(text.contains("this process may use 4 of 16: 0-3"), "{text}");
}

// ---------------------------------------------------------------------------
// A synthetic big machine: 2 packages × 64 cores × 2 threads, 4 NUMA nodes.

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, content).expect("write");
}

fn fake_machine(root: &Path, packages: usize, cores: usize, threads: usize, nodes_per_pkg: usize) {
    let ncpu = packages * cores * threads;
    let cpu = "sys/devices/system/cpu";
    let all = format!("0-{}", ncpu - 1);
    for f in ["possible", "present", "online"] {
        write(root, &format!("{cpu}/{f}"), &format!("{all}\n"));
    }
    write(root, &format!("{cpu}/offline"), "\n");
    let cpu_of = |p: usize, c: usize, t: usize| t * packages * cores + p * cores + c;
    for p in 0..packages {
        let pkg: CpuSet = (0..cores)
            .flat_map(|c| (0..threads).map(move |t| (c, t)))
            .map(|(c, t)| cpu_of(p, c, t))
            .collect();
        for c in 0..cores {
            let core: CpuSet = (0..threads).map(|t| cpu_of(p, c, t)).collect();
            let ccx: CpuSet = (0..cores)
                .filter(|x| x / 8 == c / 8)
                .flat_map(|x| (0..threads).map(move |t| (x, t)))
                .map(|(x, t)| cpu_of(p, x, t))
                .collect();
            for t in 0..threads {
                let n = cpu_of(p, c, t);
                let d = format!("{cpu}/cpu{n}");
                write(root, &format!("{d}/online"), "1\n");
                write(
                    root,
                    &format!("{d}/topology/physical_package_id"),
                    &format!("{p}\n"),
                );
                write(root, &format!("{d}/topology/die_id"), "0\n");
                write(root, &format!("{d}/topology/core_id"), &format!("{c}\n"));
                write(
                    root,
                    &format!("{d}/topology/core_cpus_list"),
                    &format!("{core}\n"),
                );
                write(
                    root,
                    &format!("{d}/topology/thread_siblings_list"),
                    &format!("{core}\n"),
                );
                write(
                    root,
                    &format!("{d}/topology/package_cpus_list"),
                    &format!("{pkg}\n"),
                );
                for (i, (level, ty, size, shared)) in [
                    (1, "Data", "32K", &core),
                    (1, "Instruction", "32K", &core),
                    (2, "Unified", "1024K", &core),
                    (3, "Unified", "32768K", &ccx),
                ]
                .iter()
                .enumerate()
                {
                    let ix = format!("{d}/cache/index{i}");
                    write(root, &format!("{ix}/level"), &format!("{level}\n"));
                    write(root, &format!("{ix}/type"), &format!("{ty}\n"));
                    write(root, &format!("{ix}/size"), &format!("{size}\n"));
                    write(root, &format!("{ix}/coherency_line_size"), "64\n");
                    write(root, &format!("{ix}/ways_of_associativity"), "8\n");
                    write(
                        root,
                        &format!("{ix}/shared_cpu_list"),
                        &format!("{shared}\n"),
                    );
                }
            }
        }
    }
    let nn = packages * nodes_per_pkg;
    let per_node = cores / nodes_per_pkg;
    for node in 0..nn {
        let p = node / nodes_per_pkg;
        let first = (node % nodes_per_pkg) * per_node;
        let cpus: CpuSet = (first..first + per_node)
            .flat_map(|c| (0..threads).map(move |t| (c, t)))
            .map(|(c, t)| cpu_of(p, c, t))
            .collect();
        let d = format!("sys/devices/system/node/node{node}");
        write(root, &format!("{d}/cpulist"), &format!("{cpus}\n"));
        write(
            root,
            &format!("{d}/meminfo"),
            &format!("Node {node} MemTotal: 67108864 kB\nNode {node} MemFree: 60000000 kB\n"),
        );
        let dist: Vec<String> = (0..nn)
            .map(|o| {
                if o == node {
                    "10"
                } else if o / nodes_per_pkg == p {
                    "12"
                } else {
                    "32"
                }
                .to_string()
            })
            .collect();
        write(
            root,
            &format!("{d}/distance"),
            &format!("{}\n", dist.join(" ")),
        );
    }
}

#[test]
fn big_machine_report_stays_compact() {
    let dir = tempfile::tempdir().expect("tempdir");
    fake_machine(dir.path(), 2, 64, 2, 2);
    let info = discover(&Sysroot::new(dir.path()).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.online.len(), 256);
    assert_eq!(info.packages.len(), 2);
    assert_eq!(info.cores.len(), 128);
    assert_eq!(info.numa_nodes.len(), 4);
    assert_eq!(info.core_of(0).map(|c| c.cpus.clone()), Some(set("0,128")));
    let l3 = caches_of(&info, "L3");
    assert_eq!(l3.len(), 16);
    assert_eq!(l3[0].shared_cpu_list, set("0-7,128-135"));
    assert_eq!(l3[0].cores, 8);
    assert_eq!(l3[0].per_core_bytes, Some(4 << 20));
    assert_eq!(info.numa_nodes[1].cpus, set("32-63,160-191"));
    assert_eq!(info.numa_nodes[0].distances, vec![10, 12, 32, 32]);

    let text = cpuscope::report::info_text::render(&info);
    assert!(
        text.contains("2 packages × 64 cores × 2 threads = 256 CPUs, 4 NUMA nodes"),
        "{text}"
    );
    assert!(
        text.contains("64 cores × 2 threads: core n = CPU n, n+128"),
        "{text}"
    );
    assert!(
        text.lines().count() < 60,
        "{} lines:\n{text}",
        text.lines().count()
    );
    assert!(
        text.lines().all(|l| l.chars().count() <= 110),
        "a line is too long:\n{text}"
    );
}

// ---------------------------------------------------------------------------
// The binary.

fn cpuscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cpuscope"))
        .args(args)
        .output()
        .expect("run cpuscope")
}

#[test]
fn info_json_from_a_recorded_root() {
    let dir = fixtures_dir().join("20em64t-hybrid-1p6c2t+2ca4co1t");
    let out = cpuscope(&["--sysroot", dir.to_str().expect("utf8"), "info", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(j["schema"], "cpuscope.info/1");
    assert_eq!(j["cpus"]["online"], "0-19");
    assert_eq!(j["cpus"]["offline"], "");
    assert_eq!(j["cpus"]["usable"], "0-19");
    assert_eq!(j["packages"].as_array().map(|a| a.len()), Some(1));
    assert_eq!(j["cores"].as_array().map(|a| a.len()), Some(14));
    assert_eq!(j["threads"].as_array().map(|a| a.len()), Some(20));
    assert_eq!(j["numa_nodes"].as_array().map(|a| a.len()), Some(1));
    assert_eq!(j["core_kinds"][0]["cpus"], "0-11");
    let caches = j["caches"].as_array().expect("caches");
    let l3: Vec<_> = caches.iter().filter(|c| c["level"] == 3).collect();
    assert_eq!(l3.len(), 1);
    assert_eq!(l3[0]["type"], "Unified");
    assert_eq!(l3[0]["size_bytes"], 24 * 1024 * 1024);
    assert_eq!(l3[0]["line_bytes"], 64);
    assert_eq!(l3[0]["shared_cpu_list"], "0-19");
}

#[test]
fn info_text_from_a_recorded_root() {
    let dir = fixtures_dir().join("16amd64-8n2c");
    let out = cpuscope(&["--sysroot", dir.to_str().expect("utf8"), "info"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("8 packages × 2 cores × 1 thread = 16 CPUs, 8 NUMA nodes"),
        "{text}"
    );
    assert!(
        text.contains("distances: 10 local, 20 between every pair of nodes"),
        "{text}"
    );
}

fn assert_one_line_error(out: &std::process::Output, what: &str) {
    assert!(!out.status.success(), "{what}: should fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(err.starts_with("cpuscope: error: "), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: nothing on stdout");
}

#[test]
fn bad_sysroots_give_one_line_errors() {
    let out = cpuscope(&["--sysroot", "/nonexistent/cpuscope-test", "info", "--json"]);
    assert_one_line_error(&out, "missing dir");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));

    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "etc/hostname", "x\n");
    let out = cpuscope(&["--sysroot", dir.path().to_str().expect("utf8"), "info"]);
    assert_one_line_error(&out, "not a sysfs root");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a sysfs root"));

    // A cpu directory with nothing in it: no CPUs to report.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).expect("mkdir");
    let out = cpuscope(&[
        "--sysroot",
        dir.path().to_str().expect("utf8"),
        "info",
        "--json",
    ]);
    assert_one_line_error(&out, "empty cpu dir");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no CPUs found"));
}

#[test]
fn garbage_files_do_not_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    let cpu = "sys/devices/system/cpu";
    write(r, &format!("{cpu}/online"), "0-1\n");
    write(r, &format!("{cpu}/possible"), "zz\n");
    write(
        r,
        &format!("{cpu}/cpu0/topology/physical_package_id"),
        "-1\n",
    );
    write(r, &format!("{cpu}/cpu0/topology/core_id"), "banana\n");
    write(
        r,
        &format!("{cpu}/cpu0/topology/thread_siblings_list"),
        "0-\n",
    );
    write(r, &format!("{cpu}/cpu0/cache/index0/level"), "1\n");
    write(r, &format!("{cpu}/cpu0/cache/index0/size"), "lots\n");
    write(r, "sys/devices/system/node/node0/distance", "10 20\n");
    write(r, "sys/devices/system/node/node0/meminfo", "nonsense\n");
    write(r, "proc/mounts", "cpuset /cg cgroup rw,cpuset 0 0\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.online, set("0-1"));
    assert_eq!(info.cores.len(), 2);
    assert_eq!(info.packages.len(), 1);
    assert!(info.numa_nodes[0].memory_bytes.is_none());
    assert!(info.numa_nodes[0].memory_note.is_some());
    assert!(info.numa_nodes[0].distances.is_empty());
    assert!(info.caches[0].size_bytes.is_none());
    assert!(!info.caches[0].notes.is_empty());
    assert!(info.topology_notes.iter().any(|n| n.contains("cgroup")));
    let text = cpuscope::report::info_text::render(&info);
    assert!(text.contains("Summary: "));
}

// ---------------------------------------------------------------------------
// cgroup cpusets recorded in other ways than the fixtures.

fn small_machine(root: &Path) {
    let cpu = "sys/devices/system/cpu";
    write(root, &format!("{cpu}/online"), "0-3\n");
    for c in 0..4 {
        write(
            root,
            &format!("{cpu}/cpu{c}/topology/physical_package_id"),
            "0\n",
        );
        write(
            root,
            &format!("{cpu}/cpu{c}/topology/core_id"),
            &format!("{c}\n"),
        );
    }
}

#[test]
fn cgroup_v2_cpuset_is_inherited_from_ancestors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    write(
        r,
        "proc/mounts",
        "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n",
    );
    write(r, "proc/self/cgroup", "0::/a/b\n");
    write(
        r,
        "sys/fs/cgroup/cgroup.controllers",
        "cpuset cpu io memory\n",
    );
    write(r, "sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
    write(r, "sys/fs/cgroup/cpuset.mems.effective", "0\n");
    write(r, "sys/fs/cgroup/a/cpuset.cpus.effective", "2-3\n");
    write(r, "sys/fs/cgroup/a/b/cgroup.procs", "1\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.usable, set("2-3"));
    let cg = info.cpus.cgroup.expect("cgroup");
    assert_eq!((cg.version, cg.path.as_str()), (2, "/a/b"));
    assert_eq!(
        cg.cpus_file.as_deref(),
        Some("/sys/fs/cgroup/a/cpuset.cpus.effective")
    );
    assert_eq!(cg.mems, Some(set("0")));
    assert_eq!(info.threads.iter().filter(|t| t.usable).count(), 2);
}

#[test]
fn cgroup_v2_without_cpuset_controller_restricts_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    write(r, "proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
    write(r, "proc/self/cgroup", "0::/user.slice\n");
    write(r, "sys/fs/cgroup/cgroup.controllers", "cpu io memory\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert!(info.cpus.cgroup.is_none());
    assert!(info.cpus.allowed.is_none());
    assert_eq!(info.cpus.usable, set("0-3"));
    assert!(info.cpus.unavailable.contains_key("allowed"));
}

#[test]
fn status_allowed_list_and_v1_container_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    // v1 cpuset where the recorded path is not visible under the mount (container).
    write(
        r,
        "proc/mounts",
        "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n",
    );
    write(r, "proc/self/cgroup", "4:cpuset:/docker/abc\n");
    write(r, "sys/fs/cgroup/cpuset/cpuset.cpus", "1-3\n");
    write(r, "sys/fs/cgroup/cpuset/cpuset.mems", "0\n");
    write(
        r,
        "proc/self/status",
        "Name:\tx\nCpus_allowed_list:\t0-2\nMems_allowed_list:\t0\n",
    );
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.cpus.usable, set("1-2"));
    assert!(info.cpus.allowed_source.contains("Cpus_allowed_list"));
    assert!(info.cpus.allowed_source.contains("cgroup v1"));
    assert_eq!(info.numa.usable, set("0"));
}

#[test]
fn core_kinds_from_pmu_devices_and_from_capacity() {
    // Intel hybrid PMUs: /sys/devices/cpu_core and /sys/devices/cpu_atom.
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    write(r, "sys/devices/cpu_core/cpus", "0-1\n");
    write(r, "sys/devices/cpu_atom/cpus", "2-3\n");
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    let names: Vec<(&str, String)> = info
        .core_kinds
        .iter()
        .map(|k| (k.name.as_str(), k.cpus.to_string()))
        .collect();
    assert_eq!(
        names,
        vec![("P-core", "0-1".into()), ("E-core", "2-3".into())]
    );
    assert_eq!(info.thread(3).and_then(|t| t.kind), Some(1));

    // ARM big.LITTLE: cpu_capacity.
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    for (c, cap) in [(0, 446), (1, 446), (2, 1024), (3, 1024)] {
        write(
            r,
            &format!("sys/devices/system/cpu/cpu{c}/cpu_capacity"),
            &format!("{cap}\n"),
        );
    }
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert_eq!(info.core_kinds.len(), 2);
    assert_eq!(info.core_kinds[0].cpus, set("2-3"));
    assert_eq!(info.core_kinds[0].capacity, Some(1024));
    assert_eq!(info.core_kinds[1].name, "little");
    let text = cpuscope::report::info_text::render(&info);
    assert!(
        text.contains("2 big × 1 thread + 2 little × 1 thread"),
        "{text}"
    );

    // Same capacity everywhere: homogeneous.
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    small_machine(r);
    for c in 0..4 {
        write(
            r,
            &format!("sys/devices/system/cpu/cpu{c}/cpu_capacity"),
            "1024\n",
        );
    }
    let info = discover(&Sysroot::new(r).expect("sysroot")).expect("discover");
    assert!(info.core_kinds.is_empty());
}

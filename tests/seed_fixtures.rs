//! What `cpuscope info` must say for the seed machines of the requirements
//! documents (trees generated at test time by tests/fixtures/seed/gen.py from
//! the lscpu, numactl -H and cpuinfo excerpts of /work/shared/seeds; README.md
//! there maps every figure to its seed line). Without python3 every test here
//! prints a `SKIP:` line and returns (fails under CI).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/seed_trees.rs"]
mod seed_trees;

use cpuscope::base::Sysroot;
use cpuscope::machine::{discover, MachineInfo};
use std::path::PathBuf;

/// The generated tree, or `None` (after a visible SKIP line) without python3.
fn root(name: &str) -> Option<PathBuf> {
    seed_trees::tree(name)
}

fn load(name: &str) -> Option<MachineInfo> {
    let sys = Sysroot::new(root(name)?).expect("seed fixture is a sysroot");
    Some(discover(&sys).expect("discover"))
}

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

fn distances(info: &MachineInfo) -> Vec<Vec<u32>> {
    info.numa_nodes
        .iter()
        .map(|n| n.distances.clone())
        .collect()
}

fn cache(info: &MachineInfo, name: &str) -> (usize, Option<u64>, String) {
    let v = info.caches_named(name);
    let first = v.first().expect(name);
    (v.len(), first.size_bytes, first.shared_cpu_list.to_string())
}

fn info_text(name: &str) -> String {
    let out = bin::command()
        .arg("--sysroot")
        .arg(root(name).expect("seed tree (generated before by load)"))
        .arg("info")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every seed tree has the topology lscpu printed for it.
fn assert_counts(
    info: &MachineInfo,
    cpus: usize,
    packages: usize,
    cores: usize,
    tpc: usize,
    nodes: usize,
) {
    assert_eq!(info.cpus.online.len(), cpus, "CPUs");
    assert_eq!(info.threads.len(), cpus, "threads");
    assert_eq!(info.packages.len(), packages, "packages");
    assert_eq!(info.cores.len(), cores, "cores");
    assert_eq!(info.smt.threads_per_core, tpc, "threads per core");
    assert_eq!(info.numa_nodes.len(), nodes, "NUMA nodes");
    for p in &info.packages {
        assert_eq!(p.cores, cores / packages, "cores per package");
    }
}

// ------------------------------------------------------------------ Hygon

#[test]
fn hygon_c86_5280() {
    let Some(info) = load("hygon-c86-5280") else {
        return;
    };
    // lscpu: CPU(s) 64, Thread(s) per core 2, Core(s) per socket 16, Socket(s) 2, NUMA node(s) 4
    assert_counts(&info, 64, 2, 32, 2, 4);
    assert!(info.smt.active);
    // Two dies (= two nodes) per package: the "glued" design the article describes.
    assert_eq!(info.dies.len(), 4);
    // numactl -H node cpus
    let cpus: Vec<String> = info.numa_nodes.iter().map(|n| n.cpus.to_string()).collect();
    assert_eq!(
        cpus,
        ["0-7,32-39", "8-15,40-47", "16-23,48-55", "24-31,56-63"]
    );
    assert_eq!(
        distances(&info),
        vec![
            vec![10, 16, 28, 22],
            vec![16, 10, 22, 28],
            vec![28, 22, 10, 16],
            vec![22, 28, 16, 10]
        ]
    );
    assert_eq!(info.numa_nodes[0].memory_bytes, Some(128_854 * MIB));
    assert_eq!(info.numa_nodes[3].memory_bytes, Some(129_020 * MIB));
    // CPU 0 and 32 are the two threads of core 0 of package 0; 16 is package 1.
    let c0 = info.core_of(0).unwrap();
    assert_eq!(c0.cpus.to_string(), "0,32");
    assert_eq!(info.thread(16).unwrap().package, 1);
    assert_eq!(info.node_of(40), Some(1));
    // lscpu caches: L1d 32K, L1i 64K, L2 512K, L3 8192K (one per 4-core CCX)
    assert_eq!(cache(&info, "L1d"), (32, Some(32 * KIB), "0,32".into()));
    assert_eq!(cache(&info, "L1i").1, Some(64 * KIB));
    assert_eq!(cache(&info, "L2").1, Some(512 * KIB));
    assert_eq!(cache(&info, "L3"), (8, Some(8 * MIB), "0-3,32-35".into()));

    let id = &info.identity;
    assert_eq!(id.architecture, "x86_64");
    assert_eq!(id.vendor.as_deref(), Some("HygonGenuine"));
    assert_eq!(id.vendor_name.as_deref(), Some("Hygon"));
    assert_eq!(
        id.model_name.as_deref(),
        Some("Hygon C86 5280 16-core Processor")
    );
    assert_eq!(
        (id.family, id.model, id.stepping),
        (Some(24), Some(1), Some(1))
    );
    assert_eq!(id.virtualization.is_virtual, Some(false));

    // AVX2 + FMA, no AVX-512, no AES-NI in this part's flag list.
    assert_eq!(info.isa.widest_vector_bits, Some(256));
    assert!(info.isa.avx512.is_empty());
    assert!(info.isa.simd.contains(&"AVX2".to_string()));
    assert!(!info.isa.crypto.contains(&"AES-NI".to_string()));
    assert!(info.isa.crypto.contains(&"SHA".to_string()));

    let f = &info.frequency;
    assert!(f.cpufreq);
    assert_eq!((f.min_khz, f.max_khz), (Some(1_600_000), Some(2_500_000)));
    assert_eq!(f.nominal_mhz, None, "AMD-style names carry no clock");
    assert!(f.unavailable.contains_key("nominal_mhz"));
    let d = f.declared.as_ref().unwrap();
    assert_eq!(d.cpus, 64);
    assert!((d.mean_mhz - 2455.552).abs() < 1e-6);

    let text = info_text("hygon-c86-5280");
    assert!(text.contains("Hygon C86 5280 16-core Processor"));
    assert!(
        text.contains("2 packages × 16 cores × 2 threads = 64 CPUs, 4 NUMA nodes"),
        "{text}"
    );
    assert!(text.contains("0  10  16  28  22"));
}

// ------------------------------------------------------------ Xeon 8269CY

#[test]
fn xeon_platinum_8269cy() {
    let Some(info) = load("xeon-platinum-8269cy") else {
        return;
    };
    // 104 CPUs, 2 sockets x 26 cores x 2 threads, and one NUMA node (seed: "NUMA 节点: 1")
    assert_counts(&info, 104, 2, 52, 2, 1);
    assert_eq!(info.numa_nodes[0].cpus.to_string(), "0-103");
    assert_eq!(distances(&info), vec![vec![10]]);
    assert_eq!(info.numa_nodes[0].memory_bytes, Some(785_826 * MIB));
    assert_eq!(info.core_of(60).unwrap().cpus.to_string(), "8,60");
    assert_eq!(info.thread(26).unwrap().package, 1);
    // L1d 32K, L1i 32K, L2 1024K per core; L3 36608K per socket
    assert_eq!(cache(&info, "L1d"), (52, Some(32 * KIB), "0,52".into()));
    assert_eq!(cache(&info, "L2").1, Some(1024 * KIB));
    assert_eq!(
        cache(&info, "L3"),
        (2, Some(36_608 * KIB), "0-25,52-77".into())
    );

    let id = &info.identity;
    assert_eq!(id.vendor_name.as_deref(), Some("Intel"));
    assert_eq!(
        (id.family, id.model, id.stepping),
        (Some(6), Some(85), Some(7))
    );
    assert_eq!(
        id.model_name.as_deref(),
        Some("Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz")
    );

    // Cascade Lake: AVX-512 F CD BW DQ VL VNNI, 512-bit.
    assert_eq!(info.isa.widest_vector_bits, Some(512));
    assert_eq!(info.isa.avx512, ["F", "CD", "BW", "DQ", "VL", "VNNI"]);
    assert!(info.isa.amx.is_empty());
    assert!(info.isa.crypto.contains(&"AES-NI".to_string()));

    let f = &info.frequency;
    assert_eq!(f.nominal_mhz, Some(2500.0));
    assert_eq!(f.max_khz, Some(2_501_000));
    assert!(
        f.notes.iter().any(|n| n.contains("nominal + 1 MHz")),
        "2501 MHz is acpi-cpufreq's turbo placeholder: {:?}",
        f.notes
    );
    assert_eq!(f.declared.as_ref().unwrap().max_mhz, 1200.0);
    let tsc = f.tsc.as_ref().unwrap();
    assert!(tsc.constant && tsc.nonstop);

    let text = info_text("xeon-platinum-8269cy");
    assert!(
        text.contains("2 packages × 26 cores × 2 threads = 104 CPUs, 1 NUMA node"),
        "{text}"
    );
    assert!(text.contains("AVX-512 (F CD BW DQ VL VNNI);"), "{text}");
    assert!(text.contains("widest 512-bit"));
    assert!(text.contains("nominal + 1 MHz"));
}

// ------------------------------------------------------------ Xeon E5 v4

#[test]
fn xeon_e5_2682_v4() {
    let Some(info) = load("xeon-e5-2682v4") else {
        return;
    };
    assert_counts(&info, 64, 2, 32, 2, 2);
    assert_eq!(distances(&info), vec![vec![10, 21], vec![21, 10]]);
    let cpus: Vec<String> = info.numa_nodes.iter().map(|n| n.cpus.to_string()).collect();
    assert_eq!(cpus, ["0-15,32-47", "16-31,48-63"]);
    assert_eq!(cache(&info, "L2").1, Some(256 * KIB));
    assert_eq!(
        cache(&info, "L3"),
        (2, Some(40_960 * KIB), "0-15,32-47".into())
    );
    assert_eq!(info.isa.widest_vector_bits, Some(256));
    let f = &info.frequency;
    assert_eq!((f.nominal_mhz, f.max_khz), (Some(2500.0), Some(3_000_000)));
    assert!(f.notes.iter().all(|n| !n.contains("nominal + 1 MHz")));
}

// ---------------------------------------------------------- Kunpeng 920

#[test]
fn kunpeng_920_4826() {
    let Some(info) = load("kunpeng-920-4826") else {
        return;
    };
    // 96 cores, 2 sockets x 48, no SMT, 4 NUMA nodes (numactl -H)
    assert_counts(&info, 96, 2, 96, 1, 4);
    assert!(!info.smt.active);
    let cpus: Vec<String> = info.numa_nodes.iter().map(|n| n.cpus.to_string()).collect();
    assert_eq!(cpus, ["0-23", "24-47", "48-71", "72-95"]);
    assert_eq!(
        distances(&info),
        vec![
            vec![10, 12, 20, 22],
            vec![12, 10, 22, 24],
            vec![20, 22, 10, 12],
            vec![22, 24, 12, 10]
        ]
    );
    assert_eq!(info.numa_nodes[0].memory_bytes, Some(192_832 * MIB));
    // 4-core clusters.
    assert_eq!(info.clusters.len(), 24);
    assert!(info.clusters.iter().all(|c| c.cores == 4));
    // L1d 64K, L1i 64K, L2 512K per core; L3 48 MiB per socket
    assert_eq!(cache(&info, "L1d"), (96, Some(64 * KIB), "0".into()));
    assert_eq!(cache(&info, "L1i").1, Some(64 * KIB));
    assert_eq!(cache(&info, "L2").1, Some(512 * KIB));
    assert_eq!(cache(&info, "L3"), (2, Some(48 * MIB), "0-47".into()));

    // MIDR 0x481fd010 decoded: HiSilicon Kunpeng 920, raw ids kept.
    let id = &info.identity;
    assert_eq!(id.architecture, "aarch64");
    assert_eq!(id.vendor.as_deref(), Some("HiSilicon"));
    assert_eq!(id.arm_cores.len(), 1);
    let c = &id.arm_cores[0];
    assert_eq!(c.midr, "0x481fd010");
    assert_eq!(c.midr_raw.as_deref(), Some("0x00000000481fd010"));
    assert_eq!(
        (c.implementer, c.part, c.variant, c.revision),
        (0x48, 0xd01, 1, 0)
    );
    assert!(c.part_name.as_deref().unwrap().contains("Kunpeng 920"));
    assert_eq!(c.cpus.len(), 96);
    assert!(id.model_name.as_deref().unwrap().contains("Kunpeng 920"));
    assert_eq!(id.family, None);
    assert!(id.unavailable.contains_key("microcode"));

    // NEON + LSE atomics + dot product; 128-bit.
    assert_eq!(info.isa.simd, ["NEON"]);
    assert_eq!(info.isa.widest_vector_bits, Some(128));
    assert!(info.isa.other.contains(&"LSE atomics".to_string()));
    assert!(info.isa.other.contains(&"dot product".to_string()));

    let f = &info.frequency;
    assert_eq!((f.min_khz, f.max_khz), (Some(200_000), Some(2_600_000)));
    assert!(f.declared.is_none() && f.unavailable.contains_key("declared"));
    assert!(f.tsc.is_none());

    let text = info_text("kunpeng-920-4826");
    assert!(text.contains("HiSilicon Kunpeng 920 (TaiShan v110)"));
    assert!(text.contains("0x481fd010"));
    assert!(
        text.contains("2 packages × 48 cores × 1 thread = 96 CPUs, 4 NUMA nodes"),
        "{text}"
    );
}

// ------------------------------------------------------------ FT-2500

#[test]
fn phytium_ft2500() {
    let Some(info) = load("phytium-ft2500") else {
        return;
    };
    // 128 cores, 2 sockets x 64, 16 NUMA nodes of 8 CPUs
    assert_counts(&info, 128, 2, 128, 1, 16);
    for (i, n) in info.numa_nodes.iter().enumerate() {
        assert_eq!(n.id, i);
        assert_eq!(n.cpus.len(), 8);
        assert_eq!(n.cpus.first(), Some(i * 8));
        // No node sizes in the seed: memory not available, with a reason.
        assert_eq!(n.memory_bytes, None);
        assert!(n.memory_note.is_some());
    }
    let d = distances(&info);
    assert_eq!(d.len(), 16);
    assert_eq!(
        d[0],
        [10, 20, 40, 30, 20, 30, 50, 40, 100, 100, 100, 100, 100, 100, 100, 100]
    );
    assert_eq!(
        d[13],
        [100, 100, 100, 100, 100, 100, 100, 100, 30, 20, 50, 20, 50, 10, 50, 40]
    );
    for (i, row) in d.iter().enumerate() {
        assert_eq!(row.len(), 16);
        assert_eq!(row[i], 10);
        for (j, v) in row.iter().enumerate() {
            assert_eq!(
                *v == 100,
                (i < 8) != (j < 8),
                "cross-socket distance is 100"
            );
        }
    }
    // packages own nodes 0-7 and 8-15
    assert_eq!(info.packages[0].nodes.to_string(), "0-7");
    assert_eq!(info.packages[1].nodes.to_string(), "8-15");
    // L2 2 MiB per 4-core cluster, L3 64 MiB per socket
    assert_eq!(cache(&info, "L1d").1, Some(32 * KIB));
    assert_eq!(cache(&info, "L2"), (32, Some(2 * MIB), "0-3".into()));
    assert_eq!(cache(&info, "L3"), (2, Some(64 * MIB), "0-63".into()));
    assert_eq!(info.clusters.len(), 32);

    let id = &info.identity;
    assert_eq!(id.vendor.as_deref(), Some("Phytium"));
    let c = &id.arm_cores[0];
    assert_eq!((c.implementer, c.part, c.revision), (0x70, 0x663, 3));
    assert!(c.part_name.as_deref().unwrap().contains("FT-2500"));

    // No LSE atomics on FTC663, said explicitly.
    assert!(!info.isa.has_flag("atomics"));
    assert!(info.isa.other.iter().any(|o| o.starts_with("no LSE")));

    // No cpufreq: reported with a reason, never as zero.
    let f = &info.frequency;
    assert!(!f.cpufreq);
    assert_eq!(f.max_khz, None);
    assert!(f
        .cpufreq_reason
        .as_deref()
        .unwrap()
        .contains("no cpufreq driver"));

    let text = info_text("phytium-ft2500");
    assert!(
        text.contains("2 packages × 64 cores × 1 thread = 128 CPUs, 16 NUMA nodes"),
        "{text}"
    );
    assert!(text.contains("no LSE atomics"));
    assert!(text.contains("cpufreq:"));
    assert!(!text.contains("0 MHz -"), "no made-up zero clocks");
}

// ------------------------------------------------------------ all of them

#[test]
fn seed_json_and_nothing_unrecorded_is_invented() {
    for name in seed_trees::NAMES {
        let Some(root) = root(name) else {
            return;
        };
        let out = bin::command()
            .arg("--sysroot")
            .arg(root)
            .args(["info", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["schema"], "cpuscope.info/1");
        // The seeds record no host, kernel, knobs, vm reclaim knobs or
        // zoneinfo: null + reason. NICs only where seed 002 describes them
        // (the FT2500's two ConnectX-4 Lx ports).
        assert!(v["identity"]["hostname"].is_null());
        assert!(v["identity"]["unavailable"]["hostname"].is_string());
        assert!(v["knobs"]["pmu"]["present"].is_null(), "{name}");
        for k in v["knobs"]["knobs"].as_array().unwrap() {
            assert!(k["value"].is_null(), "{name}: {k}");
            assert_eq!(k["reason"], "not recorded under this root");
        }
        let mm = &v["numa_memory"];
        assert!(mm["zone_reclaim_mode"].is_null(), "{name}");
        assert!(mm["unavailable"]["zone_reclaim_mode"]
            .as_str()
            .unwrap()
            .starts_with("not recorded"));
        assert!(mm["unavailable"]["zoneinfo"].is_string(), "{name}");
        let nics = v["devices"]["nics"].as_array().unwrap();
        if name == "phytium-ft2500" {
            assert_eq!(nics.len(), 2, "{name}");
            // Its node is not in the seed: unknown, not -1 and not 0.
            assert!(nics.iter().all(|n| n["numa_node"].is_null()));
        } else {
            assert!(nics.is_empty(), "{name}");
            assert!(v["devices"]["unavailable"]["nics"].is_string());
        }
    }
}

// ------------------------------------------------- NUMA memory and NICs

/// Seed 002's numastat of the Xeon E5-2682 v4 ("#numastat ... numa_hit
/// 129600200 60501102 ... other_node 23652 106041", lines 801-808) in the
/// NUMA memory section, per node, and what the tree does not record said so.
#[test]
fn xeon_e5_numa_memory_from_seed_002_numastat() {
    let Some(info) = load("xeon-e5-2682v4") else {
        return;
    };
    let mm = &info.numa_memory;
    assert_eq!(mm.nodes.len(), 2);
    let s0 = mm.nodes[0].numastat.as_ref().expect("node 0 numastat");
    let s1 = mm.nodes[1].numastat.as_ref().expect("node 1 numastat");
    assert_eq!(
        (s0.numa_hit, s0.interleave_hit, s0.local_node, s0.other_node),
        (
            Some(129_600_200),
            Some(108_648),
            Some(129_576_548),
            Some(23_652)
        )
    );
    assert_eq!(
        (s1.numa_hit, s1.numa_miss, s1.numa_foreign, s1.other_node),
        (Some(60_501_102), Some(0), Some(0), Some(106_041))
    );
    // numactl -H "node 0 free: 240846 MB"; no FilePages, no zoneinfo, no
    // vm knobs recorded: not available, never 0.
    assert_eq!(mm.nodes[0].free_bytes, Some(240_846 * MIB));
    assert_eq!(mm.nodes[0].file_bytes, None);
    assert!(mm.nodes[0].unavailable.contains_key("file_bytes"));
    assert!(mm.zone_reclaim_mode.is_none());
    assert!(mm.unavailable["zone_reclaim_mode"].starts_with("not recorded"));
    let t = info_text("xeon-e5-2682v4");
    let sec: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.starts_with("NUMA memory"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(sec.len() <= 5, "one line per node: {sec:#?}");
    assert!(
        sec.iter()
            .any(|l| l.starts_with("  0 ") && l.contains("129.6M") && l.contains("23.7k")),
        "{sec:#?}"
    );
    assert!(
        sec.iter()
            .any(|l| l.starts_with("  1 ") && l.contains("60.5M") && l.contains("106.0k")),
        "{sec:#?}"
    );
    assert!(
        sec.iter()
            .any(|l| l.contains("n/a: vm reclaim knobs, /proc/zoneinfo, FilePages not recorded")),
        "{sec:#?}"
    );
}

/// Seed 002's FT2500 NICs: two ConnectX-4 Lx ports ("MT27710 Family
/// [ConnectX-4 Lx]"), 60 queues each ("默认网卡队列是60，基本都跑在前面60个core上"),
/// their IRQs on CPUs 0-59 (nodes 0-7, the first socket); the advice says the
/// queues outnumber any node's 8 CPUs and the IRQs load one socket.
#[test]
fn ft2500_nics_queues_against_its_nodes() {
    let Some(info) = load("phytium-ft2500") else {
        return;
    };
    let nics: Vec<&cpuscope::machine::devices::Nic> =
        info.devices.nics.iter().filter(|n| !n.is_virtual).collect();
    assert_eq!(nics.len(), 2);
    for n in &nics {
        assert_eq!(
            (n.rx_queues, n.tx_queues),
            (Some(60), Some(60)),
            "{}",
            n.name
        );
        assert_eq!(n.irqs.len(), 60);
        assert_eq!(n.affinity_cpus.to_string(), "0-59");
        assert_eq!(n.numa_node, None, "the seed does not say the NIC's node");
        let per: Vec<(usize, usize)> = n.irqs_per_node.iter().map(|x| (x.node, x.irqs)).collect();
        assert_eq!(
            per,
            [
                (0, 8),
                (1, 8),
                (2, 8),
                (3, 8),
                (4, 8),
                (5, 8),
                (6, 8),
                (7, 4)
            ]
        );
    }
    let adv = &info.devices.advice;
    assert!(
        adv.iter()
            .any(|a| a.starts_with("eth0, eth1: 60 queues, more than the 8 CPUs of any one node")),
        "{adv:?}"
    );
    assert!(
        adv.iter().any(|a| a.contains("sit on nodes 0-7 only")),
        "{adv:?}"
    );
    let t = info_text("phytium-ft2500");
    assert!(t.contains("queues 60 rx, 60 tx"), "{t}");
    assert!(t.contains("routed to CPUs 0-59 (node 0-7)"), "{t}");
    assert!(t.contains("served on CPUs n/a"), "{t}");
}

/// The total of a `run --list` plan, in seconds.
fn plan_total(out: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.starts_with("total"))
        .unwrap_or_else(|| panic!("no total: {out}"));
    line.split('~')
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no seconds in {line}"))
}

/// Issue 38's bounds: on the synthetic 384-CPU, 8-node servers (2 × 96 cores
/// with SMT, x86; 2 × 192 cores, Arm), `run --list` plans quick within a
/// minute and standard within five, every experiment selected.
#[test]
fn a_384_cpu_server_plans_quick_in_a_minute_and_standard_in_five() {
    for name in seed_trees::SYNTHETIC {
        let Some(root) = seed_trees::synthetic(name) else {
            return;
        };
        let root = root.to_str().expect("utf-8 path");
        for (profile, bound) in [("quick", 60.0), ("standard", 300.0)] {
            let (code, out, err) =
                bin::run_text(&["run", "--list", "--profile", profile, "--sysroot", root]);
            assert_eq!(code, 0, "{name}: {err}");
            assert!(
                out.lines()
                    .next()
                    .is_some_and(|l| l.contains("384 CPUs (0-383), 8 NUMA node(s)")),
                "{name}: {out}"
            );
            for exp in ["bandwidth", "numa_matrix", "c2c", "latency", "workloads"] {
                assert!(
                    out.lines().any(|l| l.starts_with(&format!("{exp} "))),
                    "{name} {profile}: no {exp} line\n{out}"
                );
            }
            let total = plan_total(&out);
            assert!(
                total <= bound,
                "{name}: {profile} plans {total:.1} s, over the bound of {bound} s\n{out}"
            );
        }
    }
}

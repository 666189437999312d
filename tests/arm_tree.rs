//! A machine recorded from a real arm64 kernel: Debian's 6.1 kernel booted
//! under `qemu-system-aarch64 -M virt -cpu neoverse-n1 -smp
//! 8,sockets=2,clusters=2,cores=2` with two NUMA nodes at distance 20 (the ARM
//! lab's `arm-kunpeng` topology; its `after` step copies the files cpuscope
//! reads into tests/fixtures/arm-virt/kunpeng-like/). Read through
//! `--sysroot` on any machine: the MIDR decoded and named, clusters and
//! packages as the kernel built them from the device tree's cpu-map, nodes
//! and distances, the virt board recognised, and the caches a device tree
//! leaves out taken from the core's knowledge-base entry with their source.

#[path = "common/bin.rs"]
mod bin;
use cpuscope::base::Sysroot;
use cpuscope::experiments::coherence::infer::Declared;
use cpuscope::machine::{discover, MachineInfo};

const TREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arm-virt/kunpeng-like"
);

fn machine() -> MachineInfo {
    discover(&Sysroot::new(TREE).unwrap()).unwrap()
}

#[test]
fn identity_and_core_from_the_midr() {
    let m = machine();
    assert_eq!(m.identity.architecture, "aarch64");
    let c = &m.identity.arm_cores;
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].midr, "0x414fd0c1");
    assert_eq!(c[0].part_name.as_deref(), Some("Neoverse-N1"));
    assert_eq!(c[0].stepping, "r4p1");
    assert_eq!(c[0].cpus.to_string(), "0-7");
    let core = m.uarch.primary().unwrap();
    assert_eq!(
        (core.id.as_str(), core.name.as_str()),
        ("neoverse-n1", "Arm Neoverse N1")
    );
    assert_eq!(m.identity.virtualization.is_virtual, Some(true));
    assert!(m.identity.virtualization.evidence[0].contains("linux,dummy-virt"));
}

#[test]
fn packages_clusters_cores_and_nodes_as_booted() {
    let m = machine();
    assert_eq!(m.packages.len(), 2);
    assert_eq!(m.cores.len(), 8);
    assert_eq!(m.smt.threads_per_core, 1);
    let clusters: Vec<String> = m.clusters.iter().map(|c| c.cpus.to_string()).collect();
    assert_eq!(clusters, ["0-1", "2-3", "4-5", "6-7"]);
    let nodes: Vec<(usize, String, Vec<u32>)> = m
        .numa_nodes
        .iter()
        .map(|n| (n.id, n.cpus.to_string(), n.distances.clone()))
        .collect();
    assert_eq!(
        nodes,
        [
            (0, "0-3".to_string(), vec![10, 20]),
            (1, "4-7".to_string(), vec![20, 10])
        ]
    );
    // The levels core-to-core latency is set against: the cluster between
    // the core and the package.
    let cpus: Vec<usize> = (0..8).collect();
    let d = Declared::from_machine(&m, &cpus);
    let ix = |c: usize| d.index_of(c).unwrap();
    assert_eq!(d.relation(ix(0), ix(1)), "same_cluster");
    assert_eq!(d.relation(ix(0), ix(2)), "same_die");
    assert_eq!(d.relation(ix(0), ix(4)), "cross_package");
    let labels: Vec<&str> = d.levels.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "SMT siblings (same core) = shared L2",
            "same cluster",
            "same die = same NUMA node = same package"
        ]
    );
}

#[test]
fn caches_the_device_tree_leaves_out_come_from_the_knowledge_base() {
    let m = machine();
    // What the kernel lists: L1d and L1i, level and type, no size.
    let listed: Vec<String> = m
        .caches
        .iter()
        .filter(|c| !c.documented_only)
        .map(|c| c.name())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(listed, ["L1d", "L1i"]);
    for c in &m.caches {
        let src = c.size_source.as_deref().unwrap_or_default();
        assert!(
            src.starts_with("documented, not reported by the kernel: Arm Neoverse N1"),
            "{src}"
        );
    }
    assert!(m
        .caches_named("L1d")
        .iter()
        .all(|c| c.size_bytes == Some(64 << 10)));
    let l2 = m.caches_named("L2");
    assert_eq!(l2.len(), 8);
    assert!(l2
        .iter()
        .all(|c| c.documented_only && c.size_bytes == Some(1 << 20)));
    // A recorded tree: the line size is not read from this CPU's CTR_EL0.
    assert!(m.caches.iter().all(|c| c.line_bytes.is_none()));
    let out = bin::command()
        .args(["info", "--sysroot", TREE])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "core:           Arm Neoverse N1 (figures and sources: cpuscope uarch neoverse-n1)",
        "    cluster 1:   0:2  1:3",
        "  L1d   64 KiB*",
        "* L1d, L1i: documented, not reported by the kernel: Arm Neoverse N1",
    ] {
        assert!(text.contains(want), "'{want}' not in:\n{text}");
    }
}

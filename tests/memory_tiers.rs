//! Memory tiers as the firmware declares them (machine/memory_tiers.rs,
//! issue 36), read from a fake root shaped like what Linux publishes for a
//! QEMU guest started with `-machine pc,hmat=on`, a CPU node 0 and a
//! memory-only node 1 (`-numa hmat-lb,... latency=250`, `hmat-cache`), and
//! from a root without HMAT.

#[path = "common/fake_root.rs"]
mod fake_root;
use cpuscope::base::Sysroot;
use cpuscope::machine::memory_tiers::{self, SideCache};
use cpuscope::machine::MachineInfo;
use fake_root::{fake_root, write};
use std::os::unix::fs::symlink;

const NODE: &str = "sys/devices/system/node";

/// Node 0 (CPUs and memory) and node 1 (memory only, behind a 1 GiB
/// memory-side cache, in a slower kernel tier), each with access0 figures
/// for initiator node 0; node 1 also access1.
fn hmat_root() -> tempfile::TempDir {
    let d = fake_root();
    let r = d.path();
    for (node, lat, bw) in [(0, 10, 204800), (1, 250, 61440)] {
        for class in if node == 1 { &[0, 1][..] } else { &[0][..] } {
            let dir = format!("{NODE}/node{node}/access{class}/initiators");
            write(r, &format!("{dir}/read_latency"), &format!("{lat}\n"));
            write(
                r,
                &format!("{dir}/write_latency"),
                &format!("{}\n", lat + 5),
            );
            write(r, &format!("{dir}/read_bandwidth"), &format!("{bw}\n"));
            write(
                r,
                &format!("{dir}/write_bandwidth"),
                &format!("{}\n", bw / 2),
            );
            symlink("../../../node0", r.join(format!("{dir}/node0"))).unwrap();
        }
    }
    let cache = format!("{NODE}/node1/memory_side_cache/index1");
    write(r, &format!("{cache}/size"), "1073741824\n");
    write(r, &format!("{cache}/line_size"), "64\n");
    write(r, &format!("{cache}/indexing"), "0\n");
    write(r, &format!("{cache}/write_policy"), "0\n");
    write(r, &format!("{NODE}/node0/cpulist"), "0-1\n");
    write(r, &format!("{NODE}/node1/cpulist"), "\n");
    let tiers = "sys/devices/virtual/memory_tiering";
    write(r, &format!("{tiers}/memory_tier4/nodelist"), "0\n");
    write(r, &format!("{tiers}/memory_tier22/nodelist"), "1\n");
    d
}

#[test]
fn hmat_figures_caches_and_tiers_are_read_per_node() {
    let d = hmat_root();
    let sys = Sysroot::new(d.path()).unwrap();
    let t = memory_tiers::read(&sys, &[0, 1]);
    assert!(t.declared && t.note.is_none(), "{t:?}");
    assert_eq!(t.nodes.len(), 2);
    let n1 = &t.nodes[1];
    assert_eq!((n1.node, n1.tier), (1, Some(22)));
    assert_eq!(n1.access.len(), 2);
    let a = &n1.access[0];
    assert_eq!(a.class, 0);
    assert_eq!(a.initiators.to_string(), "0");
    assert_eq!(a.read_latency_ns, Some(250));
    assert_eq!(a.write_latency_ns, Some(255));
    assert_eq!(a.read_bandwidth_mb_s, Some(61440));
    assert_eq!(a.write_bandwidth_mb_s, Some(30720));
    assert_eq!(
        n1.side_caches,
        vec![SideCache {
            level: 1,
            size_bytes: Some(1 << 30),
            line_bytes: Some(64),
            indexing: Some("direct-mapped".into()),
            write_policy: Some("write-back".into()),
        }]
    );
    assert_eq!(t.nodes[0].tier, Some(4));
    // What each node is, and whose figures are declared for which initiator.
    assert_eq!(t.nodes[0].memory_only, Some(false));
    assert_eq!(n1.memory_only, Some(true));
    assert_eq!(n1.kind(), Some("memory-only"));
    assert_eq!(n1.declared_for(0).map(|a| a.class), Some(1));
    assert!(n1.declared_for(1).is_none());
    assert_eq!(
        t.tiers.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        vec![4, 22]
    );
    // The JSON round-trips (a stored machine snapshot reads back the same).
    let back: memory_tiers::MemoryTiers =
        serde_json::from_value(serde_json::to_value(&t).unwrap()).unwrap();
    assert_eq!(back, t);
}

#[test]
fn info_text_shows_the_declared_figures_beside_each_node() {
    let d = hmat_root();
    let sys = Sysroot::new(d.path()).unwrap();
    let info = MachineInfo {
        memory_tiers: memory_tiers::read(&sys, &[0, 1]),
        ..MachineInfo::default()
    };
    let text = cpuscope::report::info_text::render(&info);
    assert!(
        text.contains("Memory tiers (declared by the firmware's HMAT"),
        "{text}"
    );
    assert!(
        text.contains("node 1 (memory_tier22)  memory-only node\n"),
        "{text}"
    );
    assert!(text.contains("CPUs and memory node\n"), "{text}");
    assert!(
        text.contains("access0 (any initiator = CPUs, from nodes 0): read 250 ns, 61440 MB/s, write 255 ns, 30720 MB/s"),
        "{text}"
    );
    // access1 equals access0 here: one line says both.
    assert!(!text.contains("access1"), "{text}");
    assert!(
        text.contains("memory-side cache 1: 1 GiB, line 64 B, direct-mapped, write-back"),
        "{text}"
    );
    assert!(
        text.contains("memory_tier4: nodes 0 · memory_tier22: nodes 1 (fastest first)"),
        "{text}"
    );
}

#[test]
fn without_hmat_nothing_is_declared_and_the_note_says_why() {
    let d = fake_root();
    write(d.path(), &format!("{NODE}/node0/cpulist"), "0-1\n");
    let sys = Sysroot::new(d.path()).unwrap();
    let t = memory_tiers::read(&sys, &[0]);
    assert!(!t.declared && t.nodes.is_empty() && t.is_empty(), "{t:?}");
    assert!(t.note.as_deref().unwrap().contains("no ACPI HMAT"), "{t:?}");
    let info = MachineInfo {
        memory_tiers: t,
        ..MachineInfo::default()
    };
    assert!(!cpuscope::report::info_text::render(&info).contains("Memory tiers"));
}

/// The lab's `hmat` guest, recorded (tests/fixtures/hmat/): sysfs lists the
/// memory-only node 2's best initiator only (node 0, 250 ns); the raw ACPI
/// table, read as root, holds every pair (node 1 → node 2: 300 ns, 51200
/// MB/s), and the declared figure of a cell comes from it.
#[test]
fn the_raw_hmat_table_holds_every_pair_that_sysfs_leaves_out() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hmat/qemu-hmat-3node.tar.gz"
    );
    let sys = Sysroot::new(std::path::Path::new(path)).unwrap();
    let t = memory_tiers::read(&sys, &[0, 1, 2]);
    assert!(t.declared, "{t:?}");
    let n2 = t.nodes.iter().find(|n| n.node == 2).unwrap();
    assert_eq!(n2.kind(), Some("memory-only"));
    assert_eq!(n2.access[0].initiators.to_string(), "0");
    assert_eq!(n2.access[0].read_latency_ns, Some(250));
    assert!(n2.declared_for(1).is_none(), "sysfs: node 0 only");
    let h = &t.hmat_table;
    assert!(h.read && h.bytes == 320, "{h:?}");
    assert_eq!(h.pairs.len(), 12, "{h:?}");
    assert_eq!(
        t.declared_read(1, 2, true).unwrap(),
        (
            300.0,
            "raw HMAT table, access_latency PXM 1 → PXM 2".to_string()
        )
    );
    assert_eq!(t.declared_read(1, 2, false).unwrap().0, 51200.0);
    // Without the raw table, sysfs cannot say, and the reason says why.
    let mut sysfs_only = t.clone();
    sysfs_only.hmat_table = Default::default();
    let why = sysfs_only.declared_read(1, 2, true).unwrap_err();
    assert!(why.contains("best initiators only"), "{why}");
    assert_eq!(sysfs_only.declared_read(0, 2, true).unwrap().0, 250.0);
}

//! Cache levels from recorded latency curves of cloud guests (issue 24):
//! the declared sizes name the levels, they do not veto them; memory starts
//! after the last step; a climb beyond the memory plateau is page walks.

use cpuscope::experiments::memory::latency::{
    analyse_curve, detect_plateaus, levels_of, match_levels, tlb_check,
};
use cpuscope::experiments::memory::payload::{LevelMatch, MemoryPart};

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

fn fixture(name: &str) -> serde_json::Value {
    let path = format!(
        "{}/tests/fixtures/latency/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn curve(doc: &serde_json::Value, k: &str) -> Vec<(usize, f64)> {
    doc[k]
        .as_array()
        .unwrap_or_else(|| panic!("no curve {k}"))
        .iter()
        .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_f64().unwrap()))
        .collect()
}

fn declared(doc: &serde_json::Value) -> Vec<(String, usize)> {
    doc["declared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l[0].as_str().unwrap().to_string(),
                l[1].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

fn ladder(xy: &[(usize, f64)], lv: &[(String, usize)]) -> (Vec<LevelMatch>, MemoryPart) {
    let (plateaus, memory) = analyse_curve(xy);
    let memory = memory.unwrap_or_else(|| panic!("no memory part: {plateaus:?}"));
    let (levels, _) = levels_of(&plateaus, Some(&memory), lv);
    (levels, memory)
}

fn ns(l: &LevelMatch) -> f64 {
    l.level_ns
        .filter(|_| l.plateau.is_some())
        .unwrap_or_else(|| panic!("{} has no figure: {}", l.name, l.note))
}

#[test]
fn emerald_rapids_guest_l3_is_its_share_and_dram_starts_at_26_mib() {
    let doc = fixture("emr16-guest-curves.json");
    let lv = declared(&doc);
    let (levels, mem) = ladder(&curve(&doc, "2m_random"), &lv);
    let l1 = ns(&levels[0]);
    let l2 = ns(&levels[1]);
    assert!(
        (1.5..1.8).contains(&l1) && levels[0].agrees,
        "{:?}",
        levels[0]
    );
    assert!(
        (5.0..5.6).contains(&l2) && levels[1].agrees,
        "{:?}",
        levels[1]
    );
    // L3: the 30–37 ns plateau from 2.8 to 8 MiB, its effective capacity
    // ~9 MiB of the 300 MiB declared.
    let l3 = &levels[2];
    let v = ns(l3);
    assert!((29.0..40.0).contains(&v), "{l3:?}");
    assert!(l3.share && !l3.agrees, "{l3:?}");
    let eff = l3.detected_bytes.unwrap();
    assert!((7 * MIB..14 * MIB).contains(&eff), "{l3:?}");
    assert!(l3.note.contains("effective ~"), "{}", l3.note);
    assert!(l3.note.contains("300 MiB declared"), "{}", l3.note);
    // Memory from ~26 MiB at 108–115 ns; flat to 1.2 GiB: no climb.
    assert!((19 * MIB..=33 * MIB).contains(&mem.from_bytes), "{mem:?}");
    assert!((105.0..118.0).contains(&mem.dram_ns), "{mem:?}");
    assert!(mem.climb.is_none(), "{mem:?}");
}

#[test]
fn emerald_rapids_guest_on_4k_pages_keeps_l3_and_names_the_tlb_climb() {
    let doc = fixture("emr16-guest-curves.json");
    let lv = declared(&doc);
    let (huge, hmem) = ladder(&curve(&doc, "2m_random"), &lv);
    let (mut small, mem) = ladder(&curve(&doc, "4k_random"), &lv);
    tlb_check(&mut small, &huge, Some(hmem.dram_ns));
    assert!(small[2].plateau.is_some(), "{:?}", small[2]);
    assert!((112.0..135.0).contains(&mem.dram_ns), "{mem:?}");
    // 4 KiB pages: latency climbs past ~300 MiB (162 ns at 1.2 GiB).
    let c = mem.climb.expect("a climb on 4 KiB pages");
    assert!(c.ns_per_doubling > 3.0 && c.ns_at_end > 150.0, "{c:?}");
}

#[test]
fn zen_guest_dram_is_where_memory_starts_not_the_climb() {
    // This project's 2-vCPU guest (AMD host), recorded 2026-11-26: memory
    // at ~116–125 ns from 32 MiB, then 138–158 ns to 1 GiB and 194 ns at
    // 4 GiB. The old rule took 212 ns at 4 GiB as DRAM.
    let doc = fixture("zen-guest-2m-climb.json");
    let lv = declared(&doc);
    let (levels, mem) = ladder(&curve(&doc, "huge"), &lv);
    for l in &levels {
        assert!(l.agrees && l.plateau.is_some(), "{l:?}");
    }
    assert!((10.0..14.0).contains(&ns(&levels[2])), "{:?}", levels[2]);
    assert_eq!(mem.from_bytes, 32 * MIB, "{mem:?}");
    assert!((110.0..130.0).contains(&mem.dram_ns), "{mem:?}");
    let c = mem.climb.expect("the climb past the memory plateau");
    assert!(c.from_bytes <= 128 * MIB, "{c:?}");
    assert!(c.ns_at_end > 180.0, "{c:?}");
    assert!((3.0..30.0).contains(&c.ns_per_doubling), "{c:?}");
}

/// The shape this project's 2-vCPU Sapphire Rapids guest showed (issue 24):
/// L3 36–38 ns from 3 to 8 MiB under a declared 480 MiB, memory ~115 ns from
/// 32 MiB, then a nested-page-walk climb to 190 ns at 512 MiB and 347 ns at
/// 1.9 GiB (the old rule called a step at ~695 MiB "L3", 166 ns).
fn sapphire_rapids_guest() -> Vec<(usize, f64)> {
    let mut out = Vec::new();
    let mut s = (4 * KIB) as f64;
    while s <= 1946.0 * MIB as f64 {
        let b = s as usize;
        let mib = s / MIB as f64;
        let v = if b <= 48 * KIB {
            1.3
        } else if b <= 1536 * KIB {
            4.6
        } else if b < 3 * MIB {
            20.0
        } else if b <= 8 * MIB {
            36.0 + 2.0 * (mib - 3.0) / 5.0
        } else if b <= 12 * MIB {
            44.0
        } else if b <= 16 * MIB {
            58.0
        } else if b <= 20 * MIB {
            80.0
        } else if b < 27 * MIB {
            100.0
        } else if b <= 64 * MIB {
            115.0
        } else {
            // 115 ns at 64 MiB, 190 at 512 MiB, 347 at 1.9 GiB.
            let d = (mib / 64.0).log2();
            if d <= 3.0 {
                115.0 + 25.0 * d
            } else {
                190.0 + 82.0 * (d - 3.0)
            }
        };
        out.push((b, v));
        s *= 2f64.powf(0.25);
    }
    out
}

#[test]
fn sapphire_rapids_guest_climb_is_not_a_cache_or_dram() {
    let lv = vec![
        ("L1d".to_string(), 48 * KIB),
        ("L2".to_string(), 2 * MIB),
        ("L3".to_string(), 480 * MIB),
    ];
    let (levels, mem) = ladder(&sapphire_rapids_guest(), &lv);
    let l3 = &levels[2];
    assert!((35.0..40.0).contains(&ns(l3)), "{l3:?}");
    assert!(l3.share, "{l3:?}");
    assert!(l3.detected_bytes.unwrap() < 20 * MIB, "{l3:?}");
    assert!((110.0..125.0).contains(&mem.dram_ns), "{mem:?}");
    let c = mem.climb.expect("a climb");
    assert!(c.from_bytes <= 128 * MIB && c.ns_at_end > 300.0, "{c:?}");
}

#[test]
fn a_curve_that_never_reaches_memory_has_no_memory_part_taken_from_a_climb() {
    // A slow climb alone (×1.3 per doubling) is never a step.
    let xy: Vec<(usize, f64)> = (0..20)
        .map(|i| ((4 * KIB) << i, 100.0 * 1.3f64.powi(i)))
        .collect();
    let (_, mem) = analyse_curve(&xy);
    assert!(mem.is_none(), "{mem:?}");
}

#[test]
fn zen5_guest_l2_is_its_plateau_not_the_step_short_of_the_declared_size() {
    // Issue 36: this project's Zen 5 guest (L2 1 MiB, published load-to-use
    // 14 cycles): flat at 3.4 ns from 54 KiB to ~620 KiB, then 4.3–5.1 ns
    // from 724 to 881 KiB. The old matcher took that short step (its edge
    // nearer the declared 1 MiB) and reported L2 4.39 ns / 18.5 cycles.
    let doc = fixture("zen5-guest-2vcpu-curves.json");
    let lv = declared(&doc);
    let ghz = doc["ghz"].as_f64().unwrap();
    for key in ["2m_random", "4k_random"] {
        let xy = curve(&doc, key);
        let (plateaus, memory) = analyse_curve(&xy);
        let (levels, unmatched) = levels_of(&plateaus, memory.as_ref(), &lv);
        let l2 = &levels[1];
        assert!(l2.agrees && !l2.share, "{key}: {l2:?}");
        let p = &plateaus[l2.plateau.expect("an L2 plateau")];
        // The figure the experiment records: the plateau's middle point
        // (its median sample).
        let mid = doc[key][(p.first + p.last) / 2][2].as_f64().unwrap();
        assert!((3.2..3.5).contains(&mid), "{key}: L2 {mid} ns: {p:?}");
        let cycles = mid * ghz;
        assert!((13.5..15.0).contains(&cycles), "{key}: {cycles} cycles");
        // The effective size is stated; the short step is explained, not a
        // step of its own.
        let eff = l2.detected_bytes.unwrap();
        assert!((600 * KIB..800 * KIB).contains(&eff), "{key}: {l2:?}");
        assert!(l2.note.contains("effective size"), "{key}: {}", l2.note);
        assert!(
            unmatched
                .iter()
                .all(|&u| !(700 * KIB..1300 * KIB).contains(&u)),
            "{key}: {unmatched:?}"
        );
        // L1d and L3 keep their figures.
        assert!(levels[0].agrees && ns(&levels[0]) < 1.0, "{:?}", levels[0]);
        assert!(levels[2].plateau.is_some(), "{key}: {:?}", levels[2]);
    }
}

#[test]
fn zen3_guest_l2_plateau_then_short_steps_to_the_declared_size_agrees() {
    // This project's 2-vCPU guest of an AMD EPYC (family 19h model 01h,
    // Zen 3; L2 512 KiB), 2026-12-07, 2 MiB pages, fastest samples (median
    // of 3 runs): flat at 3.9 ns from 38 to 185 KiB, then short steps at
    // 5.2, 7.5 and 12 ns up to 623 KiB before L3 (~18 ns).
    let xy: Vec<(usize, f64)> = [
        (4096, 1.333),
        (4864, 1.331),
        (5760, 1.338),
        (6848, 1.344),
        (8192, 1.343),
        (9728, 1.344),
        (11584, 1.352),
        (13760, 1.364),
        (16384, 1.402),
        (19456, 1.431),
        (23168, 1.562),
        (27520, 1.932),
        (32768, 2.731),
        (38912, 3.767),
        (46336, 3.849),
        (55104, 3.921),
        (65536, 3.931),
        (77888, 3.907),
        (92672, 3.946),
        (110208, 3.905),
        (131072, 4.070),
        (155840, 4.073),
        (185344, 4.196),
        (220416, 4.651),
        (262144, 5.173),
        (311680, 6.906),
        (370688, 7.487),
        (440832, 11.159),
        (524288, 12.007),
        (623424, 13.685),
        (741440, 14.108),
        (881728, 15.089),
        (1048576, 17.845),
        (1246912, 16.849),
        (1482880, 21.710),
        (1763456, 18.217),
        (2097152, 19.017),
    ]
    .to_vec();
    // As tests/memory.rs's live check reads a curve cut at 2 MiB (no
    // memory part): plateaus at 15%, every plateau a candidate.
    let lv = vec![("L1d".to_string(), 32 * KIB), ("L2".to_string(), 512 * KIB)];
    let plateaus = detect_plateaus(&xy, 0.15);
    let (levels, unmatched) = match_levels(&plateaus, &lv);
    let l2 = &levels[1];
    assert!(l2.agrees && !l2.share, "{l2:?}");
    assert!((3.7..4.3).contains(&ns(l2)), "{l2:?}");
    assert!(
        l2.note.contains("holds only in part"),
        "{}: {plateaus:?} {unmatched:?}",
        l2.note
    );
    assert!(
        unmatched.iter().all(|&u| u > 700 * KIB),
        "the short steps are L2's: {unmatched:?}"
    );
}

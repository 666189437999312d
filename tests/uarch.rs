//! The core knowledge base (data/uarch/): it parses, every rule recognises
//! its own entry and no other, every seed CPU resolves to the right core,
//! docs/uarch.md is current, and the theoretical figures follow the sources'
//! model (units × width).

#[path = "common/seed_trees.rs"]
mod seed_trees;

use cpuscope::base::Sysroot;
use cpuscope::machine::discover;
use cpuscope::machine::uarch::{Base, CoreIdentity, Precision};

fn base() -> &'static Base {
    Base::embedded_checked().unwrap_or_else(|e| panic!("knowledge base: {e}"))
}

fn x86(vendor: &str, family: u32, model: u32, brand: &str, flags: &[&str]) -> CoreIdentity {
    CoreIdentity {
        x86_vendor: Some(vendor.into()),
        family: Some(family),
        model: Some(model),
        brand: Some(brand.into()),
        flags: flags.iter().map(|s| s.to_string()).collect(),
        ..CoreIdentity::default()
    }
}

fn arm(implementer: u32, part: u32) -> CoreIdentity {
    CoreIdentity {
        midr_implementer: Some(implementer),
        midr_part: Some(part),
        ..CoreIdentity::default()
    }
}

/// The entry id an identity resolves to (panics with the reason if none).
fn id_of(i: &CoreIdentity) -> String {
    match base().recognise(i) {
        Ok((c, _)) => c.id,
        Err(e) => panic!("{}: {e}", i.describe()),
    }
}

fn fp64(i: &CoreIdentity, bits: u32) -> Option<f64> {
    let (c, _) = base().recognise(i).ok()?;
    c.fp.flops_per_cycle(bits, Precision::F64).ok()
}

#[test]
fn the_base_parses_and_every_rule_finds_its_own_entry() {
    let b = base();
    assert!(b.entries.len() >= 10, "{} entries", b.entries.len());
    let problems = b.self_check();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every entry has FP figures with a source, and every source it names exists.
    for (e, c, variants) in b.cores() {
        assert!(!c.fp.source.is_empty(), "{}: [fp] without a source", e.id);
        assert!(!c.cited.is_empty(), "{}: cites nothing", e.id);
        for k in c.cited.iter().map(|s| s.kind.as_str()) {
            assert!(
                ["vendor", "measurement", "seed"].contains(&k),
                "{}: {k}",
                e.id
            );
        }
        for v in variants {
            assert!(v.variant.is_some(), "{}: a variant without a name", e.id);
        }
    }
}

#[test]
fn docs_table_is_current() {
    let want = cpuscope::report::uarch_text::markdown(base());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/uarch.md");
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/uarch.md is not current: run `cargo run --release -- uarch --markdown > docs/uarch.md`"
    );
}

#[test]
fn a_bad_entry_is_refused_with_its_file() {
    let src = (
        "sources.toml",
        "[s]\ntitle = \"t\"\npublisher = \"p\"\nkind = \"vendor\"\n",
    );
    let ok = "id = \"a\"\nname = \"A\"\nvendor = \"V\"\n[[match]]\nmidr_implementer = 1\nmidr_parts = [2]\n[fp]\nsource = \"s\"\nfma_units = 2\nfma_bits = 128\n";
    assert!(Base::parse(&[src, ("a.toml", ok)]).is_ok());
    // An unknown source key, a missing rule, an unknown field, a duplicate id.
    let e = Base::parse(&[
        src,
        ("a.toml", &ok.replace("source = \"s\"", "source = \"nope\"")),
    ])
    .unwrap_err();
    assert!(e.contains("a.toml") && e.contains("nope"), "{e}");
    let e = Base::parse(&[
        src,
        (
            "a.toml",
            &ok.replace("[[match]]\nmidr_implementer = 1\nmidr_parts = [2]\n", ""),
        ),
    ])
    .unwrap_err();
    assert!(e.contains("no [[match]]"), "{e}");
    let e = Base::parse(&[src, ("a.toml", &ok.replace("fma_bits", "fma_bitz"))]).unwrap_err();
    assert!(e.contains("fma_bitz"), "{e}");
    let e = Base::parse(&[src, ("a.toml", ok), ("b.toml", ok)]).unwrap_err();
    assert!(e.contains("id 'a'"), "{e}");
    // Two entries claiming the same identity at the same rank: a tie, found by the self-check.
    let b = Base::parse(&[
        src,
        ("a.toml", ok),
        ("b.toml", &ok.replace("id = \"a\"", "id = \"b\"")),
    ])
    .unwrap();
    assert!(
        b.self_check().iter().any(|p| p.contains("ambiguous")),
        "{:?}",
        b.self_check()
    );
}

#[test]
fn variants_overlay_their_entry() {
    let src = ("sources.toml", "[s]\ntitle = \"t\"\npublisher = \"p\"\nkind = \"vendor\"\n[m]\ntitle = \"t\"\npublisher = \"p\"\nkind = \"measurement\"\n");
    let e = "id = \"a\"\nname = \"A\"\nvendor = \"V\"\n[[match]]\nx86_vendor = \"X\"\nfamily = 6\nmodels = [\"0x10-0x1f\"]\n[fp]\nsource = \"s\"\nfma_units = 2\nfma_bits = 512\nvector_bits = 512\n[[variant]]\nname = \"half\"\nwhen = { brand_any = [\"Silver\"] }\nsource = \"m\"\n[variant.fp]\nfma_bits = 256\n";
    let b = Base::parse(&[src, ("a.toml", e)]).unwrap();
    let gold = b.recognise(&x86("X", 6, 0x15, "Gold", &[])).unwrap().0;
    assert_eq!(gold.fp.flops_per_cycle(512, Precision::F64), Ok(32.0));
    assert_eq!(gold.fp.flops_per_cycle(512, Precision::F32), Ok(64.0));
    let silver = b.recognise(&x86("X", 6, 0x1f, "Silver", &[])).unwrap().0;
    assert_eq!(silver.variant.as_deref(), Some("half"));
    assert_eq!(silver.fp.flops_per_cycle(512, Precision::F64), Ok(16.0));
    assert_eq!(silver.fp.flops_per_cycle(256, Precision::F64), Ok(16.0));
    assert!(
        silver.cited.iter().any(|s| s.key == "m"),
        "the variant's source is cited"
    );
    assert!(b.recognise(&x86("X", 6, 0x20, "Gold", &[])).is_err());
}

#[test]
fn seed_machines_resolve_from_their_trees() {
    let want = [
        ("hygon-c86-5280", "dhyana"),
        ("xeon-platinum-8269cy", "skylake-sp"),
        ("xeon-e5-2682v4", "broadwell"),
        ("kunpeng-920-4826", "tsv110"),
        ("phytium-ft2500", "ftc663"),
    ];
    for (tree, core) in want {
        let Some(root) = seed_trees::tree(tree) else {
            return;
        };
        let m = discover(&Sysroot::new(&root).unwrap()).unwrap();
        let got = m.uarch.primary().map(|c| c.id.clone());
        assert!(
            got.as_deref().is_ok_and(|id| id.contains(core)),
            "{tree}: {got:?} (want an entry with '{core}' in its id)"
        );
    }
}

#[test]
fn seed_cpus_without_trees_resolve() {
    let intel = |m, b| x86("GenuineIntel", 6, m, b, &[]);
    // Seed 000 and 002: Skylake-SP/Cascade Lake Platinum parts, two 512-bit FMA units.
    for b in [
        "Intel(R) Xeon(R) Platinum 8163 CPU @ 2.50GHz",
        "Intel(R) Xeon(R) Platinum 8260 CPU @ 2.40GHz",
        "Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz",
    ] {
        assert!(id_of(&intel(0x55, b)).contains("skylake-sp"), "{b}");
        assert_eq!(fp64(&intel(0x55, b), 512), Some(32.0), "{b}");
    }
    // Seed 004: 10th-gen i7-10700 (Comet Lake) and 11th-gen i7-11700 (Rocket Lake).
    assert!(id_of(&intel(0xa5, "Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz")).contains("skylake"));
    assert!(id_of(&intel(
        0xa7,
        "11th Gen Intel(R) Core(TM) i7-11700 @ 2.50GHz"
    ))
    .contains("cypress"));
    // Seed 001: EPYC 7742 (Rome). Seed 000/002: Hygon C86 7185. Seed 003: Opteron 250/275 (K8).
    let amd = |f, m, b| x86("AuthenticAMD", f, m, b, &[]);
    assert!(id_of(&amd(0x17, 0x31, "AMD EPYC 7742 64-Core Processor")).contains("zen2"));
    assert!(id_of(&x86(
        "HygonGenuine",
        0x18,
        0x1,
        "Hygon C86 7185 32-core Processor",
        &[]
    ))
    .contains("dhyana"));
    for (m, b) in [
        (0x5, "AMD Opteron(tm) Processor 250"),
        (0x21, "Dual Core AMD Opteron(tm) Processor 275"),
    ] {
        assert!(id_of(&amd(0xf, m, b)).contains("k8"), "{b}");
    }
    // Seed 000/002: Kunpeng 920 and Phytium FT2500 by MIDR.
    assert!(id_of(&arm(0x48, 0xd01)).contains("tsv110"));
    assert!(id_of(&arm(0x70, 0x663)).contains("ftc663"));
}

#[test]
fn cores_of_the_brief_resolve() {
    let intel = |m| x86("GenuineIntel", 6, m, "Intel(R) Xeon(R)", &[]);
    let amd = |f, m| x86("AuthenticAMD", f, m, "AMD EPYC", &[]);
    // Zen 5 (EPYC 9005, family 1Ah): two 512-bit FMA units, 32 FP64 FLOP/cycle.
    assert_eq!(id_of(&amd(0x1a, 0x02)), "zen5");
    assert_eq!(fp64(&amd(0x1a, 0x02), 512), Some(32.0));
    assert!(id_of(&amd(0x1a, 0x11)).contains("zen5"), "Zen 5c");
    assert!(id_of(&amd(0x19, 0x11)).contains("zen4"));
    assert_eq!(
        fp64(&amd(0x19, 0x11), 512),
        Some(16.0),
        "Zen 4 splits 512-bit FMAs"
    );
    assert!(id_of(&amd(0x19, 0x01)).contains("zen3"));
    assert!(id_of(&amd(0x17, 0x01)).contains("zen1"));
    assert!(id_of(&intel(0x6a)).contains("ice-lake") || id_of(&intel(0x6a)).contains("sunny-cove"));
    assert!(id_of(&intel(0x8f)).contains("golden-cove"));
    assert!(id_of(&intel(0xcf)).contains("cove"));
    assert!(id_of(&intel(0xad)).contains("redwood-cove"));
    assert!(id_of(&intel(0xaf)).contains("crestmont"), "Sierra Forest");
    for (part, name) in [
        (0xd0c, "n1"),
        (0xd49, "n2"),
        (0xd8e, "n3"),
        (0xd40, "v1"),
        (0xd4f, "v2"),
        (0xd84, "v3"),
    ] {
        assert!(id_of(&arm(0x41, part)).contains(name), "Neoverse {name}");
    }
    assert!(id_of(&arm(0x70, 0x662)).contains("ftc662"));
    assert!(id_of(&arm(0xc0, 0xac3)).contains("ampereone"));
    assert!(id_of(&arm(0x46, 0x001)).contains("a64fx"));
    assert_eq!(
        fp64(&arm(0x46, 0x001), 512),
        Some(32.0),
        "A64FX: two 512-bit SVE FMA pipes"
    );
}

#[test]
fn hybrid_parts_resolve_per_core_kind() {
    let kind = |m, k: &str| CoreIdentity {
        core_kind: Some(k.into()),
        ..x86(
            "GenuineIntel",
            6,
            m,
            "12th Gen Intel(R) Core(TM) i7-12700",
            &[],
        )
    };
    assert!(id_of(&kind(0x97, "P-core")).contains("golden-cove"));
    assert!(id_of(&kind(0x97, "E-core")).contains("gracemont"));
    assert!(id_of(&kind(0xc6, "P-core")).contains("lion-cove"));
    assert!(id_of(&kind(0xc6, "E-core")).contains("skymont"));
}

#[test]
fn a_vm_with_a_masked_model_is_recognised_by_amx() {
    // A KVM guest on a Sapphire Rapids-class host shows model 0xa7 (Rocket
    // Lake's number) and a generic brand; AMX exists only on the Xeon server
    // cores since Sapphire Rapids.
    let vm = x86(
        "GenuineIntel",
        6,
        0xa7,
        "Intel(R) Xeon(R) Processor",
        &["avx512f", "amx_tile", "amx_bf16"],
    );
    assert!(id_of(&vm).contains("golden-cove-server"), "{}", id_of(&vm));
    assert_eq!(fp64(&vm, 512), Some(32.0));
    let (_, by) = base().recognise(&vm).unwrap();
    assert!(by.contains("amx_tile"), "{by}");
}

#[test]
fn unknown_cores_say_why() {
    let e = base().recognise(&arm(0x99, 0x123)).unwrap_err();
    assert!(
        e.contains("not in cpuscope's knowledge base") && e.contains("0x99"),
        "{e}"
    );
}

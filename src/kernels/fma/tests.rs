//! Unit tests of `fma` (beside it, to keep the module readable).

use super::*;

#[test]
fn supported_kernels_run_and_accumulate() {
    for w in Width::ALL.into_iter().filter(|w| w.supported()) {
        let a = run(w, 10);
        let b = run(w, 20);
        assert_ne!(a, 0, "{w:?}");
        assert_ne!(a, b, "{w:?}");
    }
}

#[test]
fn clock_probes_run_where_supported() {
    let mut probes = vec![ClockProbe {
        width: None,
        blocks: 1,
        quarters: 0,
    }];
    for w in Width::ALL {
        for q in PROBE_QUARTERS {
            probes.push(ClockProbe {
                width: Some(w),
                blocks: 1,
                quarters: q,
            });
        }
    }
    for p in probes.clone() {
        probes.push(ClockProbe { blocks: 2, ..p });
    }
    for p in probes {
        match p.unsupported_reason() {
            // The chain's value moves with every add: the loop ran.
            None => assert_ne!(p.run(3), p.run(5), "{p:?}"),
            Some(why) => {
                assert!(!why.is_empty());
                assert_eq!(p.run(3), 0, "{p:?} runs nothing");
            }
        }
    }
    // Shapes that were not built say so.
    let odd = ClockProbe {
        width: Some(Width::Scalar),
        blocks: 3,
        quarters: 4,
    };
    assert!(odd.unsupported_reason().is_some());
}

#[test]
fn clock_probe_accounting() {
    let p = ClockProbe {
        width: Some(Width::V512),
        blocks: 1,
        quarters: 6,
    };
    assert_eq!(p.chain_adds(), PROBE_ACCUMULATORS * 4);
    assert_eq!(p.fmas_per_iter(), PROBE_ACCUMULATORS * 6);
    assert_eq!(p.fmas_per_cycle(), 1.5);
    let two = ClockProbe { blocks: 2, ..p };
    assert_eq!(two.chain_adds(), 2 * p.chain_adds());
    assert_eq!(two.fmas_per_cycle(), p.fmas_per_cycle(), "same density");
    let alone = ClockProbe {
        width: None,
        blocks: 1,
        quarters: 6,
    };
    assert_eq!(alone.fmas_per_iter(), 0);
    assert!(alone.describe().contains("nothing else"));
    // An accumulator's FMAs (latency up to 9 cycles on A64FX, 4 on x86)
    // fit in one block of the chain.
    let lat = if cfg!(target_arch = "aarch64") { 9 } else { 4 };
    assert!(PROBE_QUARTERS
        .iter()
        .all(|q| (*q as u64) * lat < p.chain_adds()));
}

#[test]
fn probe_density_stays_under_the_units() {
    // Two FMA units (Golden Cove, Zen 5 at 512 bits): 1.5 per cycle.
    assert_eq!(probe_quarters_for(2.0), (6, true));
    assert_eq!(probe_quarters_for(1.9), (6, true));
    // A host whose sibling takes a unit: 1.64 per cycle measured.
    assert_eq!(probe_quarters_for(1.64), (4, true));
    // One unit (Zen 4 at 512 bits): 0.75 per cycle, above Intel's
    // heavy-instruction threshold of about one every two cycles.
    assert_eq!(probe_quarters_for(1.0), (3, true));
    assert_eq!(probe_quarters_for(0.95), (3, true));
    // Half a unit: the sparsest, said not to fit.
    assert_eq!(probe_quarters_for(0.5), (2, false));
    for r in [0.6, 0.9, 1.3, 2.0, 4.0] {
        let (q, fits) = probe_quarters_for(r);
        assert!(fits && q as f64 / 4.0 <= 0.85 * r + 1e-9, "{r}");
    }
}

#[test]
fn flops_accounting() {
    assert_eq!(Width::V512.lanes(), 8);
    assert_eq!(Width::Scalar.lanes(), 1);
    for w in Width::ALL {
        assert_eq!(
            w.flops_per_iter(),
            2.0 * w.lanes() as f64 * w.accumulators() as f64
        );
        assert_eq!(Width::parse(w.name()), Some(w));
    }
}

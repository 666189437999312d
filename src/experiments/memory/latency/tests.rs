//! The latency experiment's names.

use super::*;

#[test]
fn every_planned_cache_level_has_its_figures() {
    for (name, (ns, cycles)) in common::LEVEL_NAMES.iter().zip(LEVELS) {
        assert_eq!(level(name), Some((ns, cycles)), "{name}");
        assert_eq!(ns.metric, *name);
        assert_eq!(cycles.metric, format!("{name}_cycles"));
        assert_eq!((ns.experiment, cycles.experiment), (EXP, EXP));
    }
    assert_eq!(level("L1i"), None);
}

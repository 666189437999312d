//! Identity, ISA, frequency, knobs, devices and numa_maps parts of `machine`,
//! read from small fake roots and from the live machine.

use cpuscope::machine::{devices, freq, identity, isa, knobs, process, Sysroot};
use std::fs;
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn fake_root() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("sys/devices/system/cpu/cpu0")).unwrap();
    d
}

#[test]
fn live_sections_print() {
    let sys = Sysroot::new("/").unwrap();
    let info = cpuscope::machine::discover(&sys).unwrap();
    for s in [
        cpuscope::report::info_sections::identity(&info),
        cpuscope::report::info_sections::isa(&info),
        cpuscope::report::info_sections::frequency(&info),
        cpuscope::report::info_sections::knobs(&info),
        cpuscope::report::info_sections::devices(&info),
    ] {
        println!("{s}");
    }
}

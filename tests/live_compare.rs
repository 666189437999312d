//! On the live machine, `cpuscope info` must agree with lscpu, numactl -H and
//! hwloc: runs scripts/compare-info.sh with this build's binary. Tools that are
//! not installed are skipped by the script (CI installs them in .ci/run).

#[path = "common/bin.rs"]
mod bin;
use std::process::Command;

#[test]
fn info_agrees_with_lscpu_numactl_and_hwloc() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("bash")
        .arg(format!("{root}/scripts/compare-info.sh"))
        .arg(bin::PATH)
        .output()
        .expect("run compare-info.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    match out.status.code() {
        Some(0) => {}
        // 2: cannot run at all (python3 missing): say so, do not fail.
        Some(2) => eprintln!("compare-info could not run here: {text}"),
        other => panic!("cpuscope info disagrees with the reference tools ({other:?}):\n{text}"),
    }
}

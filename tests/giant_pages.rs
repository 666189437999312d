//! The latency curve on 1 GiB pages (issue 36): when the machine has 1 GiB
//! pages free, `run` chases on them beside 2 MiB pages and reports what
//! they save. The product never reserves them; this test does, as root on
//! a CPU that has them (`pdpe1gb`), for its own run, and puts the pool back
//! as it was.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/emulator.rs"]
mod emulator;
#[path = "common/skip.rs"]
mod skip;

use serde_json::Value;

const POOL: &str = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages";

/// The pool's size before the test, restored when dropped.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(POOL, &self.0);
    }
}

#[test]
fn a_latency_run_chases_on_reserved_1g_pages_and_splits_the_climb() {
    let Ok(before) = std::fs::read_to_string(POOL) else {
        skip::skip_hardware(
            "1 GiB pages: this kernel or CPU offers none (no hugepages-1048576kB pool)",
        );
        return;
    };
    let before = before.trim().to_string();
    let _restore = Restore(before.clone());
    let want = before.parse::<u64>().unwrap_or(0).max(1);
    let got = std::fs::write(POOL, want.to_string())
        .ok()
        .and_then(|_| std::fs::read_to_string(POOL).ok())
        .and_then(|s| s.trim().parse::<u64>().ok());
    if got != Some(want) {
        skip::skip_hardware(
            "1 GiB pages: none could be reserved here (not root, or no contiguous gigabyte free)",
        );
        return;
    }
    if emulator::lacks(
        emulator::Needs::GiantPages,
        "a latency run on reserved 1 GiB pages",
    ) {
        return;
    }
    let (verdict, run) =
        bin::run_and_show(&["--profile", "quick", "--only", "latency", "--no-html", "-q"]);
    let recs: Vec<&Value> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["experiment"] == "latency" && r["params"]["pages"] == "1g")
        .collect();
    let of = |m: &str| recs.iter().find(|r| r["metric"] == m).copied();
    let curve = of("curve").unwrap_or_else(|| panic!("a 1g curve: {recs:#?}"));
    assert!(curve["value"].as_f64().is_some(), "{curve}");
    let notes = curve["notes"].to_string();
    assert!(notes.contains("1 GiB pages by hugetlbfs"), "{notes}");
    assert!(of("dram").is_some(), "{recs:#?}");
    let saving = of("giant_page_saving").unwrap_or_else(|| panic!("{recs:#?}"));
    assert!(
        saving["value"].as_f64().is_some_and(f64::is_finite),
        "{saving}"
    );
    assert!(
        saving["notes"].to_string().contains("on 1 GiB pages"),
        "{saving}"
    );
    // No level figures from the 1 GiB curve: it starts past L2.
    assert!(of("L1d").is_none() && of("L2").is_none(), "{recs:#?}");
    // The verdict's latency line says what they saved, or that it is noise.
    let flat = verdict.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("1 GiB pages "), "{verdict}");
}

//! Unit tests of `workloads` (beside it, to keep the module readable).

use super::*;
use crate::results::published;
use std::path::PathBuf;

fn bc_rec(id: MetricId, param: (&str, u32)) -> ResultRecord {
    ResultRecord::of(id, "s", false).with_param(param.0, param.1)
}

#[test]
fn seed_references_come_from_the_one_loader() {
    for id in [OPENSSL_SET, CPU_BOUND_SET, BRANCH_ORDER_SET] {
        let s = published::by_id(id).unwrap();
        assert!(s.source.seed.starts_with(&id[4..7]), "{id}");
    }
    let r = serde_json::to_value(published_reference(CPU_BOUND_SET)).unwrap();
    assert_eq!(r["set"], CPU_BOUND_SET);
    assert!(r["label"].as_str().unwrap().contains("reference only"));
    assert!(r["source"].as_str().unwrap().starts_with("000_"));
    assert!(cpu_bound_note().contains("1.57") && cpu_bound_note().contains("0.45"));
    assert!(branch_order_note().contains("25560 ms / 23420 ms = 1.09"));
}

#[test]
fn time_comparison_is_relative_speed() {
    let c = serde_json::to_value(
        compare_times(&bc_rec(BC_POW, ("exp", 999_999)), 18.603323495).unwrap(),
    )
    .unwrap();
    assert_eq!(c["label"], PUBLISHED_LABEL);
    assert_eq!(c["set"], "seed000-bc");
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{c}");
    let intel = rows
        .iter()
        .find(|r| r["cpu"].as_str().unwrap().starts_with("Intel"))
        .unwrap();
    assert!((intel["this_machine_speed_pct"].as_f64().unwrap() - 100.0).abs() < 1e-9);
    assert_eq!(intel["published_ipc"], 2.19);
    assert_eq!(intel["published_ghz"], 2.5);
    // FT2500 pi: no time published, said so; its stated clock kept.
    let p = serde_json::to_value(compare_times(&bc_rec(BC_PI, ("scale", 5000)), 20.0).unwrap())
        .unwrap();
    let ft = p["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["cpu"] == "Phytium FT2500")
        .unwrap();
    assert!(ft["published_s"].is_null());
    assert!(ft["reason"].as_str().unwrap().contains("no time published"));
    assert_eq!(ft["published_ghz"], 2.1);
    // The pi row is the 8163's, not the 7^999999 table's Intel.
    assert!(p["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["cpu"] == "Intel Xeon Platinum 8163" && r["published_s"] == 22.979));
    // Another size than the seed's: nothing to compare.
    assert!(compare_times(&bc_rec(BC_POW, ("exp", 99_999)), 1.0).is_none());
    assert!(compare_times(&bc_rec(BC_PI, ("scale", 1000)), 1.0).is_none());
}

#[test]
fn openssl_comparison_per_copy_and_never_cbc_with_ige() {
    // Kunpeng single copy: 143196.16 kB/s = 143.19616 MB/s.
    let c = serde_json::to_value(compare_openssl("aes-256-ige", 1, 8192, 143.19616)).unwrap();
    assert!(c["label"].as_str().unwrap().starts_with(PUBLISHED_LABEL));
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9, "3 machines × 1, 32, all processes");
    let row = rows
        .iter()
        .find(|r| r["cpu"].as_str().unwrap().starts_with("Kunpeng") && r["published_copies"] == 1)
        .unwrap();
    assert!((row["this_machine_per_copy_pct"].as_f64().unwrap() - 100.0).abs() < 1e-6);
    // Every logical CPU: per copy over the real process count (96 on the Kunpeng).
    let all = rows
        .iter()
        .find(|r| {
            r["cpu"].as_str().unwrap().starts_with("Kunpeng") && r["published_processes"] == "all"
        })
        .unwrap();
    assert_eq!(all["published_copies"], 96);
    // CBC is never set beside the seed's IGE.
    let cbc = serde_json::to_value(compare_openssl("aes-256-cbc", 1, 8192, 1000.0)).unwrap();
    assert_eq!(cbc["label"], "not compared");
    assert!(cbc["rows"].is_null());
    assert!(cbc["reason"].as_str().unwrap().contains("aes-256-ige"));
    let rec = ResultRecord::of(OPENSSL_AES, "MB/s", true)
        .with_param("alg", "aes-256-cbc")
        .with_param("copies", "1")
        .with_param("bytes", 8192);
    assert!(published::matches_for(&rec).is_empty());
    let ige = rec.clone().with_param("alg", "aes-256-ige");
    assert_eq!(published::matches_for(&ige).len(), 3);
    // Every one of the seed's five block sizes and its 32 processes map.
    for bytes in SEED_BLOCK_BYTES {
        for copies in ["1", "32", "all"] {
            let r = ige
                .clone()
                .with_param("bytes", bytes)
                .with_param("copies", copies);
            assert_eq!(published::matches_for(&r).len(), 3, "{bytes} B, {copies}");
        }
        // Kunpeng, 16-byte blocks, 1 process: 133174.89 kB/s.
        let c = serde_json::to_value(compare_openssl("aes-256-ige", 1, bytes, 1.0)).unwrap();
        assert_eq!(c["rows"].as_array().unwrap().len(), 9, "{bytes}");
    }
    let c16 = serde_json::to_value(compare_openssl("aes-256-ige", 1, 16, 133.17489)).unwrap();
    let k16 = c16["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["cpu"].as_str().unwrap().starts_with("Kunpeng") && r["published_copies"] == 1)
        .unwrap()
        .clone();
    assert!((k16["this_machine_per_copy_pct"].as_f64().unwrap() - 100.0).abs() < 1e-6);
}

#[test]
fn openssl_sizes_per_profile() {
    assert_eq!(openssl_block_sizes(Profile::Quick), &[8192]);
    assert_eq!(openssl_block_sizes(Profile::Standard), &SEED_BLOCK_BYTES);
    assert_eq!(openssl_block_sizes(Profile::Full), &SEED_BLOCK_BYTES);
}

#[test]
fn counted_child_carries_figures_or_the_reason() {
    let stop = AtomicBool::new(false);
    let cmd = Cmd {
        program: find_in_path("sh").expect("sh in PATH"),
        args: vec!["-c".into(), "read x; echo \"got $x\"; echo err >&2".into()],
        stdin: Some("hello\n".into()),
    };
    let (r, c) = run_counted(&cmd, None, true, Duration::from_secs(20), &stop).unwrap();
    assert_eq!(r.code, Some(0));
    assert_eq!(r.stdout.trim(), "got hello");
    assert_eq!(r.stderr.trim(), "err");
    assert!(r.wall_s > 0.0 && r.cpu_s.is_some());
    assert_eq!(c.scope, COUNTED_SCOPE_CHILD);
    // task-clock is software: counted wherever perf_event_open is allowed.
    if let Ok(t) = c.value("task-clock") {
        assert!(t > 0.0);
    }
    // IPC is a figure or a reason: never 0.
    match c.ipc() {
        Ok(i) => assert!(i > 0.0),
        Err(w) => assert!(!w.is_empty()),
    }
    let d = serde_json::to_value(counted_data(std::slice::from_ref(&c))).unwrap();
    assert_eq!(d["ipc"].is_null(), c.ipc().is_err());
    assert_eq!(d["ipc_reason"].is_string(), c.ipc().is_err());
    let figs = counted_figures(
        (IPC, GHZ),
        &[("workload", json!(BC_POW.metric)), ("exp", json!(999_999))],
        std::slice::from_ref(&c),
        true,
    );
    assert_eq!(figs.len(), 2);
    for f in &figs {
        assert_eq!(f.value.is_none(), f.unavailable_reason.is_some());
        assert_ne!(f.value, Some(0.0));
    }
    // The counted IPC of 7^999999 sits beside seed 000's published IPCs.
    let ipc = figs.iter().find(|f| f.is(IPC)).unwrap();
    let m = published::matches_for(ipc);
    assert_eq!(m.len(), 5, "{}", ipc.key);
    assert!(m
        .iter()
        .all(|x| x.set.id == "seed000-bc" && x.figure.metric == "ipc"));
    // A failing start is an error, not a panic.
    let bad = Cmd {
        program: PathBuf::from("/nonexistent/cpuscope-no-such-program"),
        args: vec![],
        stdin: None,
    };
    let e = run_counted(&bad, None, false, Duration::from_secs(5), &stop).unwrap_err();
    assert!(format!("{e:#}").contains("cannot start"), "{e:#}");
}

#[test]
fn speed_mr_parsing() {
    let single = "+DT:aes-256-cbc:1:8192\n+R:50969:aes-256-cbc:0.9\n+H:8192\n+F:21:aes-256-cbc:927862328.89\n";
    assert_eq!(parse_speed_mr(single), Some(927862328.89));
    let multi = "Got: +F:21:aes-256-cbc:243967493.07 from 0\nGot: +F:21:aes-256-cbc:245362566.34 from 1\n+F:21:aes-256-cbc:489330059.41\n";
    assert_eq!(parse_speed_mr(multi), Some(489330059.41));
    assert_eq!(
        parse_speed_mr("speed: Unknown algorithm aes-256-ige\n"),
        None
    );
}

#[test]
fn quick_sizes_differ_from_the_seed_and_keys_differ() {
    let ((q, _), (qs, _)) = bc_sizes(Profile::Quick);
    let ((f, _), (fs, _)) = bc_sizes(Profile::Full);
    assert_ne!(q, f);
    assert_ne!(qs, fs);
    assert_eq!((f, fs), (999_999, 5000));
    // The standard profile runs the seed's pi too (scale=5000).
    assert_eq!(bc_sizes(Profile::Standard).1 .0, 5000);
    let a = ResultRecord::of(BC_POW, "s", false).with_param("exp", q);
    let b = ResultRecord::of(BC_POW, "s", false).with_param("exp", f);
    assert_ne!(a.key, b.key);
}

#[test]
fn missing_program_is_an_error_not_a_panic() {
    let stop = AtomicBool::new(false);
    let cmd = Cmd {
        program: PathBuf::from("/nonexistent/cpuscope-no-such-program"),
        args: vec![],
        stdin: None,
    };
    let copies = copy_bindings(&[0], None).unwrap();
    let e = run_copies(&cmd, &copies, Duration::from_secs(5), &stop).unwrap_err();
    assert!(format!("{e:#}").contains("cannot start"), "{e:#}");
}

//! Unit tests of `schema` (beside it, to keep the module readable).

use super::*;

#[test]
fn machine_snapshot_reads_typed_with_defaults() {
    let mut run = Run::new(
        "h",
        "quick",
        serde_json::json!({"identity": {"model_name": "X"}, "cpus": {"online": "0-3"},
                           "numa_nodes": [{"id": 0, "cpus": "0-3", "distances": [10]}]}),
        Environment::default(),
        Value::Null,
        Vec::new(),
    );
    let m = run.machine_info();
    assert_eq!(m.identity.model_name.as_deref(), Some("X"));
    assert_eq!(m.cpus.online.len(), 4);
    assert_eq!(m.numa_nodes[0].distances, vec![10]);
    assert!(m.threads.is_empty());
    run.machine = serde_json::json!({"model": 3});
    assert!(run.machine_info().numa_nodes.is_empty());
}

#[test]
fn key_format() {
    let r = ResultRecord::new("clock", "clock", "GHz", true).with_param("threads", 1);
    assert_eq!(r.key, "clock/threads=1/GHz/v1");
    let r = ResultRecord::new("stream", "load", "GB/s", true)
        .with_param("size", "1 MiB")
        .with_param("threads", 2)
        .with_method("stream-like", 3);
    assert_eq!(r.key, "stream:load/size=1 MiB,threads=2/GB%2Fs/v3");
    let u = ResultRecord::unavailable("pingpong", "delay", "ns", "one CPU");
    assert_eq!(u.key, "pingpong:delay/ns/v1");
    assert_eq!(u.value, None);
    validate_record(&u).unwrap();
}

#[test]
fn samples_fill_stats() {
    let r = ResultRecord::new("f", "f", "GHz", true).with_samples(vec![3.0, 1.0, 2.0]);
    assert_eq!(r.value, Some(2.0));
    assert_eq!(r.repetitions, 3);
    assert_eq!(r.stats.as_ref().map(|s| s.n), Some(3));
    let bad = ResultRecord::new("f", "f", "GHz", true).with_samples(vec![1.0, f64::NAN]);
    assert_eq!(bad.value, None);
    assert!(bad.unavailable_reason.is_some());
    validate_record(&bad).unwrap();
}

#[test]
fn schema_check() {
    check_schema("cpuscope.run/1").unwrap();
    assert!(check_schema("cpuscope.run/99").is_err());
    assert!(check_schema("cpuscope.info/1").is_err());
    assert!(check_schema("cpuscope.run/x").is_err());
    assert!(check_schema("cpuscope.run/01").is_err());
    assert!(check_schema("nothing").is_err());
}

#[test]
fn loadavg_parse() {
    let l = Load::parse("0.52 0.58 0.59 2/467 12345\n", "2026-01-01T00:00:00Z");
    assert_eq!(l.loadavg_1, Some(0.52));
    assert_eq!(l.loadavg_15, Some(0.59));
    assert_eq!((l.procs_running, l.procs_total), (Some(2), Some(467)));
    let e = Load::parse("", "t");
    assert_eq!(e.loadavg_1, None);
}

#[test]
fn environment_from_the_machine_snapshot() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("proc")).unwrap();
    std::fs::create_dir_all(d.path().join("sys/devices/system/cpu")).unwrap();
    std::fs::write(d.path().join("proc/loadavg"), "1.00 2.00 3.00 4/500 99\n").unwrap();
    let sys = crate::base::Sysroot::new(d.path()).unwrap();
    let mut m = crate::machine::MachineInfo::default();
    m.identity.kernel_release = Some("6.9.0-x".into());
    m.identity.virtualization.is_virtual = Some(true);
    for g in ["powersave", "performance", "powersave"] {
        m.frequency.governors.push(crate::machine::freq::Group {
            value: g.into(),
            cpus: crate::base::CpuSet::default(),
        });
    }
    let e = Environment::from_machine(&m, &sys);
    assert_eq!(e.kernel.as_deref(), Some("6.9.0-x"));
    assert_eq!(e.is_vm, Some(true));
    assert_eq!(e.governor.as_deref(), Some("performance,powersave"));
    let l = e.load_start.unwrap();
    assert_eq!((l.loadavg_5, l.procs_total), (Some(2.0), Some(500)));
    assert_eq!(e.load_end, None);
    let e = Environment::from_machine(&crate::machine::MachineInfo::default(), &sys);
    assert_eq!((e.is_vm, e.governor, e.kernel), (None, None, None));
}

#[test]
fn run_ids() {
    let t = DateTime::parse_from_rfc3339("2026-11-22T01:02:03Z")
        .unwrap()
        .with_timezone(&Utc);
    let id = new_run_id(t, "my host_1");
    assert!(id.starts_with("20261122T010203Z-my-host-1-"), "{id}");
    assert_eq!(id.len(), "20261122T010203Z-my-host-1-".len() + 4);
    validate_run_id(&id).unwrap();
    assert!(validate_run_id("latest").is_err());
    assert!(validate_run_id("a/b").is_err());
}

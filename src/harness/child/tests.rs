//! Unit tests of `child` (beside it, to keep the module readable).

use super::*;

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn usable_cpus() -> Vec<usize> {
    crate::placement::current_affinity()
        .map(|s| s.iter().collect())
        .unwrap_or_default()
}

#[test]
fn copies_run_together_each_bound_in_its_own_group() {
    let cpus: Vec<usize> = usable_cpus().into_iter().take(2).collect();
    assert!(!cpus.is_empty());
    let bindings: Vec<Binding> = cpus
        .iter()
        .map(|&c| Binding::new(Some(&crate::base::CpuSet::from_ids([c])), None).unwrap())
        .collect();
    // Its CPUs on stderr; stdout discarded; fails unless it leads its group.
    let argv = sh("grep Cpus_allowed_list /proc/self/status >&2; echo out; \
         test \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\"");
    let specs: Vec<ChildSpec> = bindings
        .iter()
        .map(|b| ChildSpec {
            output: Output::KeepErrors,
            timeout: Some(Duration::from_secs(20)),
            ..ChildSpec::new(&argv, b)
        })
        .collect();
    let runs = run_together(&specs, &AtomicBool::new(false));
    assert_eq!(runs.len(), cpus.len());
    for (r, c) in runs.iter().zip(&cpus) {
        assert!(r.succeeded(), "{:?}", r.failure());
        assert!(r.stdout.is_empty(), "{}", r.stdout);
        let allowed = r.stderr.split_whitespace().last().unwrap_or("");
        assert_eq!(allowed, c.to_string(), "{}", r.stderr);
        assert!(r.wall_s > 0.0 && r.cpu_s().is_some());
        assert!(r.counters.is_none());
    }
}

#[test]
fn input_text_output_kept_and_counted_or_the_reason() {
    let b = Binding::none();
    let argv = sh("read x; echo \"got $x\"; echo err >&2");
    let events = count_events();
    let spec = ChildSpec {
        stdin: Some("hello\n"),
        counters: Some(&events),
        ..ChildSpec::new(&argv, &b)
    };
    let r = run_once(&spec, &AtomicBool::new(false));
    assert!(r.succeeded(), "{:?}", r.failure());
    assert_eq!(r.stdout.trim(), "got hello");
    assert_eq!(r.stderr.trim(), "err");
    let c = r.counts().expect("counted");
    // IPC is a figure or a reason, never 0.
    assert_eq!(c.ipc.is_none(), c.missing.contains_key("ipc"), "{c:?}");
    assert_ne!(c.ipc, Some(0.0));
    // An input larger than the pipe takes is refused before anything runs.
    let big = "x".repeat(STDIN_MAX + 1);
    let spec = ChildSpec {
        stdin: Some(&big),
        ..ChildSpec::new(&argv, &b)
    };
    let r = run_once(&spec, &AtomicBool::new(false));
    let why = r.launch_error.expect("refused");
    assert!(why.contains("at most 32 KiB"), "{why}");
}

#[test]
fn kept_output_holds_its_tail_not_all_it_wrote() {
    use std::os::unix::fs::MetadataExt;
    let mut f = kept_file().unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..12 {
        f.write_all(&chunk).unwrap();
    }
    f.write_all(b"END").unwrap();
    let mut freed = 0;
    trim_head(&f, &mut freed);
    let md = f.metadata().unwrap();
    assert_eq!(md.len(), (12 << 20) + 3, "the size stays");
    assert!(freed >= 7 << 20, "freed {freed}");
    assert!(
        md.blocks() * 512 <= 2 * TAIL_BYTES,
        "{} bytes held",
        md.blocks() * 512
    );
    let (t, len) = tail_of(&mut f);
    assert_eq!(t.len() as u64, TAIL_BYTES);
    assert_eq!(len, (12 << 20) + 3);
    assert!(t.ends_with("aaEND") && !t.contains('\0'));
    // A command that writes 24 MiB: its run keeps the last 4 MiB.
    let b = Binding::none();
    let argv = sh("yes abcdefg | head -c 25165824; echo; echo END");
    let r = run_once(&ChildSpec::new(&argv, &b), &AtomicBool::new(false));
    assert!(r.succeeded(), "{:?}", r.failure());
    assert_eq!(r.stdout.len() as u64, TAIL_BYTES);
    assert_eq!(r.stdout_len, 25165824 + 5);
    assert!(r.stdout.ends_with("abcdefg\n\nEND\n"));
    assert!(!r.stdout.contains('\0'));
}

#[test]
fn kept_output_without_memfd_is_a_file_with_no_name() {
    use std::os::unix::fs::MetadataExt;
    let d = tempfile::tempdir().unwrap();
    let mut f = temp_output_in(d.path()).unwrap();
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "a name left"
    );
    f.write_all(&vec![b'b'; 12 << 20]).unwrap();
    f.write_all(b"END").unwrap();
    let mut freed = 0;
    trim_head(&f, &mut freed);
    if freed == 0 {
        // Past the harness's capture, as tests/common/skip.rs writes.
        let _ = writeln!(
            std::io::stderr(),
            "SKIP: the hole punch (this file system cannot punch holes; the tail is still kept)"
        );
    } else {
        let held = f.metadata().unwrap().blocks() * 512;
        assert!(held <= 2 * TAIL_BYTES, "{held} bytes held");
    }
    let (t, _) = tail_of(&mut f);
    assert_eq!(t.len() as u64, TAIL_BYTES);
    assert!(t.ends_with("bbEND") && !t.contains('\0'));
}

#[test]
fn one_that_cannot_start_stops_the_whole_set() {
    let d = tempfile::tempdir().unwrap();
    let flag = d.path().join("ran");
    let b = Binding::none();
    let first = sh(&format!("touch '{}'", flag.display()));
    let second = vec!["/nonexistent/cpuscope-no-such-program".to_string()];
    let specs = [ChildSpec::new(&first, &b), ChildSpec::new(&second, &b)];
    let runs = run_together(&specs, &AtomicBool::new(false));
    assert_eq!(runs.len(), 2);
    for r in &runs {
        let why = r.launch_error.as_deref().expect("not started");
        assert!(why.contains("no such file"), "{why}");
        assert!(!r.succeeded());
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(!flag.exists(), "the first command ran");
}

#[test]
fn time_limit_and_ctrl_c_kill_the_group() {
    let b = Binding::none();
    // A child left behind in the group (its pid on stderr) dies too.
    let argv = sh("sleep 30 & echo $! >&2; sleep 30");
    let spec = ChildSpec {
        timeout: Some(Duration::from_millis(300)),
        ..ChildSpec::new(&argv, &b)
    };
    let t = Instant::now();
    let r = run_once(&spec, &AtomicBool::new(false));
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(r.timed_out && !r.interrupted && r.exit.is_none());
    assert!(r.failure().unwrap().contains("limit"));
    let left: i32 = r.stderr.trim().parse().expect("pid of the one left behind");
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !crate::counters::workload::process_alive(left)
    });
    assert!(gone, "process {left} outlived its group");
    // Ctrl-C before the end: every run of the set is interrupted.
    let quiet = sh("sleep 30");
    let specs = [ChildSpec::new(&quiet, &b), ChildSpec::new(&quiet, &b)];
    let stop = AtomicBool::new(false);
    let runs = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Ordering::Relaxed);
        });
        run_together(&specs, &stop)
    });
    assert!(runs.iter().all(|r| r.interrupted && !r.succeeded()));
    assert!(t.elapsed() < Duration::from_secs(20));
    // After Ctrl-C nothing more starts.
    let d = tempfile::tempdir().unwrap();
    let flag = d.path().join("ran");
    let touch = sh(&format!("touch '{}'", flag.display()));
    let r = run_once(&ChildSpec::new(&touch, &b), &stop);
    assert!(r.interrupted && r.exit.is_none());
    std::thread::sleep(Duration::from_millis(100));
    assert!(!flag.exists(), "a command started after Ctrl-C");
}

#[test]
fn stat_fields() {
    let s = "123 (a (b) c) S 1 456 456 0 -1";
    assert_eq!(stat_field(s, 3), Some("S"));
    assert_eq!(stat_field(s, 5), Some("456"));
    assert_eq!(stat_field(s, 2), None);
}

#[test]
fn orders_are_permutations() {
    let live = [0, 1, 2, 3, 4];
    let mut seen = std::collections::BTreeSet::new();
    for r in 0..20 {
        let mut o = round_order(&live, r, 17);
        seen.insert(o.clone());
        o.sort_unstable();
        assert_eq!(o, live);
    }
    assert!(seen.len() > 10);
    assert_eq!(round_order(&live, 3, 17), round_order(&live, 3, 17));
}

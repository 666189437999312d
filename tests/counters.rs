//! Counters on the machine the tests run on, and `cpuscope stat` end to end.
//!
//! Assertions hold on any machine: where hardware counters exist they must
//! give values and metrics; where they do not (a VM without a PMU, a locked
//! down kernel) every hardware event must be "not supported" or "not
//! counted" WITH a reason, and no metric over them may have a value.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/emulator.rs"]
mod emulator;
use cpuscope::counters::{events, probe_hardware, CounterGroup, Event, EventState};
use serde_json::Value;
use std::process::{Command, Output};

fn stat(args: &[&str]) -> Output {
    bin::command()
        .arg("stat")
        .args(args)
        .output()
        .expect("run cpuscope")
}

/// stderr is exactly one line, a `cpuscope: error:` line.
fn assert_one_line_error(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {err}");
    assert!(lines[0].starts_with("cpuscope: error: "), "{err}");
    assert!(lines[0].contains(needle), "'{needle}' not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Run `cpuscope stat --json -o FILE ARGS` and parse the document.
fn stat_json(args: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stat.json");
    let mut all = vec!["--json", "-o", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = stat(&all);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o, v)
}

/// An event by its canonical key (its name may carry `:u` when the kernel
/// only allows user-space counting).
fn event<'a>(doc: &'a Value, key: &str) -> &'a Value {
    doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == key)
        .unwrap_or_else(|| panic!("no event {key}"))
}

fn busy_loop(n: u64) -> u64 {
    let mut acc = 1u64;
    for i in 0..n {
        acc = std::hint::black_box(acc.wrapping_mul(31).wrapping_add(i));
    }
    acc
}

#[test]
fn open_self_never_fails_and_states_are_explained() {
    if emulator::lacks(
        emulator::Needs::PerfEvents,
        "open_self_never_fails_and_states_are_explained",
    ) {
        return;
    }
    let mut g = CounterGroup::open_self(&events::harness_default());
    g.enable();
    std::hint::black_box(busy_loop(2_000_000));
    let v: Vec<u8> = vec![1u8; 4 << 20];
    std::hint::black_box(&v);
    g.disable();
    let r = g.read();
    assert_eq!(r.events.len(), events::harness_default().len());
    // Software events always count.
    let tc = r.get("task-clock").unwrap();
    assert_eq!(tc.state, EventState::Counted, "{tc:?}");
    assert!(tc.value.unwrap() > 0.0);
    let pf = r.get("page-faults").unwrap();
    assert_eq!(pf.state, EventState::Counted);
    assert!(
        pf.value.unwrap() >= 1.0,
        "touching 4 MiB must fault: {pf:?}"
    );
    assert!(r.wall_ns.unwrap() > 0);
    let m = r.metrics();
    for e in r.events.iter().filter(|e| e.hardware) {
        match e.state {
            EventState::Counted => assert!(e.value.is_some()),
            _ => {
                assert!(e.value.is_none(), "{e:?}");
                assert!(e.reason.as_deref().is_some_and(|s| !s.is_empty()), "{e:?}");
                assert!(e.reason_code.is_some(), "{e:?}");
            }
        }
    }
    let cycles = r.get("cycles").unwrap();
    let instr = r.get("instructions").unwrap();
    if cycles.state == EventState::Counted && instr.state == EventState::Counted {
        assert!(m.ipc.unwrap() > 0.0);
        assert!(m.ghz.unwrap() > 0.0);
    } else {
        assert_eq!(m.ipc, None, "IPC must be absent, never made up");
        assert_eq!(m.cpi, None);
        assert_eq!(m.ghz, None);
        assert!(m.missing["ipc"].contains("not"), "{:?}", m.missing);
    }
    // Serialises with nulls, not zeros.
    let j = serde_json::to_value(&m).unwrap();
    if m.ipc.is_none() {
        assert!(j["ipc"].is_null());
    }
}

#[test]
fn probe_reports_state_with_reason() {
    let p = probe_hardware();
    match p.state {
        EventState::Counted => assert!(p.ipc.unwrap() > 0.0),
        _ => {
            assert!(p.ipc.is_none());
            assert!(p.reason.unwrap().len() > 10);
        }
    }
}

#[test]
fn hardware_reasons_name_the_cause_on_a_machine_without_pmu() {
    if emulator::lacks(
        emulator::Needs::PerfEvents,
        "hardware_reasons_name_the_cause_on_a_machine_without_pmu",
    ) {
        return;
    }
    let has_core_pmu = std::fs::read_dir("/sys/bus/event_source/devices")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .any(|e| cpuscope::counters::sysfs::is_core_pmu(&e.file_name().to_string_lossy()))
        })
        .unwrap_or(false);
    if has_core_pmu {
        return; // covered by the generic assertions elsewhere
    }
    let g = CounterGroup::open_self(&[Event::named("cycles"), Event::named("instructions")]);
    let r = g.read();
    for e in &r.events {
        assert_eq!(e.state, EventState::NotSupported);
        assert_eq!(e.reason_code.as_deref(), Some("no-pmu"));
        assert!(e.errno.is_some());
        assert!(e.reason.as_ref().unwrap().contains("no hardware PMU"));
    }
}

/// The exit status of a `stat` whose command succeeded: 0, or 1 where no
/// event can be opened at all (qemu-user answers ENOSYS for
/// perf_event_open), which `stat` then says on stderr.
fn success_code(o: &std::process::Output) -> Option<i32> {
    if emulator::answers_enosys(emulator::Needs::PerfEvents) {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("no event could be counted"), "{err}");
        Some(1)
    } else {
        Some(0)
    }
}

#[test]
fn exit_code_is_passed_through() {
    let o = stat(&["-e", "task-clock", "--", "sh", "-c", "exit 3"]);
    assert_eq!(o.status.code(), Some(3));
    let o = stat(&["-e", "task-clock", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(o.status.code(), Some(137));
    let o = stat(&["-e", "task-clock", "--", "true"]);
    assert_eq!(o.status.code(), success_code(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Performance counter stats for 'true'"),
        "{err}"
    );
}

#[test]
fn command_not_found_is_127_not_executable_is_126() {
    let o = stat(&["--", "cpuscope-no-such-command-zz"]);
    assert_eq!(o.status.code(), Some(127));
    assert_one_line_error(&o, "command not found");

    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("not-exec.sh");
    std::fs::write(&f, "#!/bin/sh\nexit 0\n").unwrap();
    let o = stat(&["--", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(126));
    assert_one_line_error(&o, "permission denied");

    let o = stat(&["--", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(126));
    assert_one_line_error(&o, "is a directory");

    // Executable but not a valid program: exec fails after fork.
    let g = dir.path().join("garbage");
    std::fs::write(&g, [0x7fu8, b'E', b'L', b'F', 0, 0, 0, 0]).unwrap();
    std::fs::set_permissions(&g, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = stat(&["--", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(126));
    assert_one_line_error(&o, "cannot run");
}

#[test]
fn bad_input_gives_one_line_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-e", "nosuchevent", "--", "true"],
            "unknown event 'nosuchevent'",
        ),
        (&["-e", "cycles:z", "--", "true"], "unknown modifier"),
        (
            &["-e", "cycles,,instructions", "--", "true"],
            "empty event name",
        ),
        (&["-e", "nopmu/event=1/", "--", "true"], "no PMU 'nopmu'"),
        (&["-p", "abc"], "bad PID 'abc'"),
        (&["-p", "0"], "bad PID"),
        (&["-p", "2147483000"], "no process with PID 2147483000"),
        (&["-I", "5", "--", "true"], "at least 10 ms"),
        (&["-I", "x", "--", "true"], "bad -I"),
        (&["--duration", "1", "--", "true"], "--duration applies"),
        (&["--duration", "-1", "-p", "1"], "bad --duration"),
        (&["--cpus", "0-", "--", "true"], "--cpus"),
        (&["--cpus", "4000", "--", "true"], "not online"),
        (&["--per-cpu", "--", "true"], "--per-cpu needs --cpus"),
        (&[], "nothing to count"),
        (&["--json", "--csv", "--", "true"], "either --json or --csv"),
    ];
    for (args, needle) in cases {
        let o = stat(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_one_line_error(&o, needle);
    }
    // Also with a command given together with -p.
    let o = stat(&["-p", "1", "--", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert_one_line_error(&o, "either -p PID or a command");
}

/// Seed 000's perf event lists, verbatim: the Kunpeng 920 list of its
/// tpmC and bc runs, and the Yitian 710 list with perf's software
/// pseudo-events `bpf-output` and `dummy`.
const SEED000_KUNPENG_EVENTS: &str = "branch-misses,bus-cycles,cache-misses,cache-references,cpu-cycles,instructions,stalled-cycles-backend,stalled-cycles-frontend,L1-dcache-load-misses,L1-dcache-loads,L1-dcache-store-misses,L1-dcache-stores,L1-icache-load-misses,L1-icache-loads,branch-load-misses,branch-loads,dTLB-load-misses,dTLB-loads,iTLB-load-misses,iTLB-loads,cpu-migrations";
const SEED000_710_EVENTS: &str = "branch-misses,bus-cycles,cache-misses,cache-references,cpu-cycles,instructions,stalled-cycles-backend,stalled-cycles-frontend,alignment-faults,bpf-output,context-switches,cpu-clock,cpu-migrations,dummy,emulation-faults,major-faults,minor-faults,page-faults,task-clock,L1-dcache-load-misses,L1-dcache-loads,L1-icache-load-misses,L1-icache-loads,LLC-load-misses,LLC-loads,branch-load-misses,branch-loads,dTLB-load-misses,dTLB-loads,iTLB-load-misses,iTLB-loads";

#[test]
fn the_seeds_full_event_lists_are_accepted() {
    if emulator::lacks(
        emulator::Needs::PerfEvents,
        "the_seeds_full_event_lists_are_accepted",
    ) {
        return;
    }
    for list in [SEED000_KUNPENG_EVENTS, SEED000_710_EVENTS] {
        let (o, d) = stat_json(&["-e", list, "--", "true"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let n = list.split(',').count();
        assert_eq!(d["events"].as_array().unwrap().len(), n, "{list}");
        // Every hardware event has a value or a reason; stalled cycles per
        // insn has a value or says why.
        for e in d["events"].as_array().unwrap() {
            assert!(!e["value"].is_null() || !e["reason"].is_null(), "{e}");
        }
        let m = &d["metrics"];
        assert!(
            !m["stalled_cycles_per_insn"].is_null()
                || m["missing"]["stalled_cycles_per_insn"].is_string(),
            "{m}"
        );
    }
    // The pseudo-events count nothing, by definition, and a note says so once each.
    let (_, d) = stat_json(&["-e", SEED000_710_EVENTS, "--", "true"]);
    for k in ["dummy", "bpf-output"] {
        let e = event(&d, k);
        assert_eq!(e["value"], 0.0, "{e}");
    }
    let notes: Vec<&str> = d["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.contains("counts nothing"))
            .count(),
        2,
        "{notes:?}"
    );
    // In text: the note, and the derived-metrics line or its reason.
    let o = stat(&["-e", SEED000_710_EVENTS, "--", "true"]);
    let t = String::from_utf8_lossy(&o.stderr).to_string() + &String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("bpf-output") && t.contains("counts nothing"),
        "{t}"
    );
    assert!(t.contains("stalled cycles per insn"), "{t}");
}

#[test]
fn json_document_for_a_cpu_bound_command() {
    if emulator::lacks(
        emulator::Needs::PerfEvents,
        "json_document_for_a_cpu_bound_command",
    ) {
        return;
    }
    // A short CPU-bound shell loop (~0.1 s of CPU).
    let (o, d) = stat_json(&[
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(d["schema"], "cpuscope.stat/1");
    assert_eq!(d["target"]["kind"], "command");
    assert_eq!(d["mode"], "per-thread");
    assert_eq!(d["exit"]["code"], 0);
    let tc = event(&d, "task-clock");
    assert_eq!(tc["state"], "counted");
    let task_s = tc["value"].as_f64().unwrap() / 1e9;
    let cpu_s = d["exit"]["user_s"].as_f64().unwrap() + d["exit"]["sys_s"].as_f64().unwrap();
    let elapsed = d["elapsed_s"].as_f64().unwrap();
    // task-clock is the command's CPU time: it matches user+sys from
    // rusage, and a single-threaded command cannot exceed the wall time.
    assert!(task_s > 0.01, "task-clock {task_s}");
    assert!(
        (task_s - cpu_s).abs() <= 0.2 * cpu_s + 0.01,
        "task-clock {task_s} vs user+sys {cpu_s}"
    );
    assert!(task_s <= elapsed * 1.02 + 0.002, "{task_s} > {elapsed}");
    let pf = event(&d, "page-faults");
    assert!(pf["value"].as_f64().unwrap() > 0.0);
    // Hardware events: counted with a value, or no value and a reason.
    for e in d["events"].as_array().unwrap() {
        if e["state"] == "counted" {
            assert!(e["value"].is_number(), "{e}");
        } else {
            assert!(e["value"].is_null(), "{e}");
            assert!(e["reason"].as_str().is_some_and(|s| !s.is_empty()), "{e}");
        }
    }
    // Metrics: a value or null with a reason, never a made-up 0 IPC.
    let m = &d["metrics"];
    for k in [
        "ipc",
        "cpi",
        "ghz",
        "branch_miss_pct",
        "cache_miss_pct",
        "l1d_miss_pct",
    ] {
        if m[k].is_null() {
            assert!(m["missing"][k].is_string(), "{k}");
        }
    }
    if event(&d, "instructions")["state"] != "counted" {
        assert!(m["ipc"].is_null());
    } else {
        assert!(m["ipc"].as_f64().unwrap() > 0.0);
    }
    // Top-down: present or explained.
    if m["topdown"].is_null() {
        assert!(m["missing"]["topdown"].is_string());
    }
    assert!(d["environment"]["pmus"].is_array());
}

#[test]
fn page_faults_for_a_command_touching_memory() {
    if emulator::lacks(
        emulator::Needs::PerfEvents,
        "page_faults_for_a_command_touching_memory",
    ) {
        return;
    }
    let (_, d) = stat_json(&[
        "-e",
        "page-faults,task-clock",
        "--",
        "sh",
        "-c",
        "head -c 8000000 /dev/zero | wc -c >/dev/null",
    ]);
    let pf = event(&d, "page-faults")["value"].as_f64().unwrap();
    assert!(pf > 10.0, "page faults {pf}");
}

#[test]
fn csv_rows() {
    if emulator::lacks(emulator::Needs::PerfEvents, "csv_rows") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.csv");
    let o = stat(&[
        "--csv",
        "-o",
        path.to_str().unwrap(),
        "-e",
        "task-clock,cycles,instructions",
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let s = std::fs::read_to_string(&path).unwrap();
    let mut lines = s.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kind,name,value,unit,state,time_enabled_ns,time_running_ns,running_pct,reason_code,reason"
    );
    let tc = s
        .lines()
        .find(|l| l.starts_with("event,task-clock"))
        .unwrap();
    assert!(tc.contains(",counted,"), "{tc}");
    let ipc = s.lines().find(|l| l.starts_with("metric,ipc,")).unwrap();
    let cyc = s.lines().find(|l| l.starts_with("event,cycles")).unwrap();
    if cyc.contains(",counted,") {
        assert!(ipc.contains(",counted,"), "{ipc}");
    } else {
        assert!(
            ipc.starts_with("metric,ipc,,"),
            "absent IPC must be empty: {ipc}"
        );
        assert!(ipc.contains(",absent,"), "{ipc}");
    }
}

#[test]
fn attach_to_pid_for_a_duration() {
    if emulator::lacks(emulator::Needs::PerfEvents, "attach_to_pid_for_a_duration") {
        return;
    }
    let mut child = Command::new("sleep").arg("5").spawn().unwrap();
    let pid = child.id().to_string();
    let (o, d) = stat_json(&[
        "-p",
        &pid,
        "--duration",
        "0.3",
        "-e",
        "task-clock,context-switches",
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(d["target"]["kind"], "pid");
    assert_eq!(d["target"]["threads"], 1);
    let el = d["elapsed_s"].as_f64().unwrap();
    assert!((0.25..3.0).contains(&el), "elapsed {el}");
    // A sleeping process runs for no time: perf says <not counted>.
    let tc = event(&d, "task-clock");
    assert!(
        tc["state"] == "counted" || tc["reason_code"] == "not-enabled",
        "{tc}"
    );
}

#[test]
fn pid_that_exits_midway_ends_counting_with_a_note() {
    // Long enough for cpuscope to start and find it (under qemu-user the
    // binary takes longer than 0.3 s to start: the PID was gone by then).
    let mut child = Command::new("sleep").arg("2").spawn().unwrap();
    let pid = child.id().to_string();
    let reaper = std::thread::spawn(move || child.wait());
    let (o, d) = stat_json(&["-p", &pid, "--duration", "20", "-e", "task-clock"]);
    let _ = reaper.join();
    assert_eq!(o.status.code(), success_code(&o));
    let el = d["elapsed_s"].as_f64().unwrap();
    assert!(el < 15.0, "should stop when the process exits, took {el}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("exited after"), "{err}");
    let notes = d["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("before the requested")),
        "{notes:?}"
    );
}

#[test]
fn interval_mode_json() {
    let (o, d) = stat_json(&["-I", "50", "-e", "task-clock", "--", "sleep", "0.22"]);
    assert_eq!(o.status.code(), success_code(&o));
    let iv = d["intervals"].as_array().unwrap();
    assert!(iv.len() >= 2, "{} intervals", iv.len());
    let mut last = 0.0;
    for i in iv {
        let t = i["t_s"].as_f64().unwrap();
        assert!(t > last);
        last = t;
    }
}

#[test]
fn per_cpu_mode() {
    if emulator::lacks(emulator::Needs::PerfEvents, "per_cpu_mode") {
        return;
    }
    let (o, d) = stat_json(&[
        "--cpus",
        "0",
        "--per-cpu",
        "-e",
        "cpu-clock,context-switches",
        "--",
        "sleep",
        "0.05",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(d["mode"], "per-cpu");
    let cc = event(&d, "cpu-clock");
    if cc["state"] == "counted" {
        // A CPU's clock runs the whole wall time.
        let v = cc["value"].as_f64().unwrap() / 1e9;
        let el = d["elapsed_s"].as_f64().unwrap();
        assert!(v > 0.5 * el && v < 1.5 * el + 0.01, "cpu-clock {v} vs {el}");
        assert_eq!(d["per_cpu"][0]["cpu"], 0);
    } else {
        // Not permitted here (perf_event_paranoid without CAP_PERFMON).
        assert_eq!(cc["reason_code"], "permission", "{cc}");
    }
}

#[test]
fn list_shows_builtin_events() {
    let o = stat(&["--list"]);
    assert_eq!(o.status.code(), Some(0));
    let s = String::from_utf8_lossy(&o.stdout);
    for n in [
        "task-clock",
        "cycles",
        "L1-dcache-load-misses",
        "dTLB-load-misses",
    ] {
        assert!(s.contains(n), "{n}");
    }
}

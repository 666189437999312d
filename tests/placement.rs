//! Placement primitives on the live machine: pinning, teams, memory policy,
//! buffers. Properties only; nothing is timed.

use cpuscope::base::CpuSet;
use cpuscope::placement::buffer::{
    thp_mode, Buffer, BufferOptions, PageKind, PageRequest, Touch, Unavailable,
};
use cpuscope::placement::mempolicy::{
    bind_range, node_of_address, numa_unavailable_reason, online_nodes, page_nodes,
    set_thread_policy, thread_policy, BindFlags, MemPolicy,
};
use cpuscope::placement::pin::{
    current_affinity, current_cpu, pin_current_thread, set_affinity, AffinityGuard,
};
use cpuscope::placement::team::{run_once, Team};
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "common/emulator.rs"]
mod emulator;
#[path = "common/skip.rs"]
mod skip;

/// False, after a `SKIP:` line (a failure under CI, whose Debian kernel has
/// the NUMA syscalls even on one node), when the kernel lacks NUMA memory
/// policy; `test` names the test that needs it.
fn numa_or_skip(test: &str) -> bool {
    let Some(why) = numa_unavailable_reason() else {
        return true;
    };
    if emulator::lacks(emulator::Needs::MemPolicy, test) {
        return false;
    }
    skip::skip_or_fail(&format!("{test}: needs NUMA memory policy: {why}"));
    false
}

/// CPUs this test process may use.
fn usable() -> Vec<usize> {
    current_affinity()
        .expect("sched_getaffinity works")
        .to_vec()
}

/// Two CPUs for a team: two distinct ones when there are, else the same twice.
fn two_cpus() -> Vec<usize> {
    let u = usable();
    if u.len() >= 2 {
        vec![u[0], u[1]]
    } else {
        vec![u[0], u[0]]
    }
}

/// A CPU id that is certainly not usable here.
fn missing_cpu() -> usize {
    4095
}

/// Run `f` on a fresh thread so pinning and memory policy do not leak into
/// the test harness's threads.
fn on_fresh_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().expect("test thread panicked"))
}

#[test]
fn cpu_lists_round_trip() {
    for s in ["0", "0-3", "0-3,8,10-11", "1,3,5", "0-1023"] {
        let set = CpuSet::parse(s).unwrap();
        assert_eq!(set.to_string(), s);
        assert_eq!(CpuSet::parse(&set.to_string()).unwrap(), set);
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(serde_json::from_str::<CpuSet>(&json).unwrap(), set);
    }
    assert_eq!(CpuSet::parse("0-7:2").unwrap().to_string(), "0,2,4,6");
    assert_eq!(CpuSet::parse_mask("f0").unwrap().to_string(), "4-7");
}

#[test]
fn affinity_is_readable_and_nonempty() {
    let a = current_affinity().unwrap();
    assert!(!a.is_empty());
    let cpu = current_cpu().expect("sched_getcpu works on Linux");
    // The thread is running on one of the CPUs it may use (it is not pinned,
    // so it may move, but it never leaves its mask).
    assert!(a.contains(cpu), "running on CPU {cpu}, allowed {a}");
}

#[test]
fn pin_to_first_usable_cpu_then_getcpu_agrees() {
    let cpu = usable()[0];
    let (got, mask) = on_fresh_thread(|| {
        pin_current_thread(cpu).unwrap();
        (current_cpu(), current_affinity().unwrap())
    });
    assert_eq!(got, Some(cpu));
    assert_eq!(mask, CpuSet::from_ids([cpu]));
}

#[test]
fn pin_to_cpu0_when_usable() {
    if !usable().contains(&0) {
        skip::skip_or_fail(&format!(
            "pin_to_cpu0_when_usable: CPU 0 is not usable by this process (it may use {:?})",
            usable()
        ));
        return;
    }
    let got = on_fresh_thread(|| {
        pin_current_thread(0).unwrap();
        // Read several times: a pinned thread never leaves its CPU.
        (0..100).map(|_| current_cpu()).collect::<Vec<_>>()
    });
    assert!(got.iter().all(|c| *c == Some(0)), "{got:?}");
}

#[test]
fn pin_to_missing_cpu_is_a_clear_error() {
    let cpu = missing_cpu();
    let e = on_fresh_thread(|| pin_current_thread(cpu))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("CPU {cpu}")), "{e}");
    assert!(e.contains("EINVAL"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // Beyond the largest id we accept at all.
    let e = on_fresh_thread(|| pin_current_thread(1 << 20))
        .unwrap_err()
        .to_string();
    assert!(e.contains("CPU 1048576"), "{e}");
    // An empty set is refused before the syscall.
    let e = set_affinity(&CpuSet::new()).unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn affinity_guard_restores_the_mask() {
    let (before, during, after) = on_fresh_thread(|| {
        let before = current_affinity().unwrap();
        let cpu = before.first().unwrap();
        let during = {
            let g = AffinityGuard::pin(cpu).unwrap();
            assert_eq!(g.previous(), &before);
            current_affinity().unwrap()
        };
        (before.clone(), during, current_affinity().unwrap())
    });
    assert_eq!(during.len(), 1);
    assert_eq!(after, before);
}

#[test]
fn team_of_two_each_on_its_cpu() {
    let cpus = two_cpus();
    let round = run_once(&cpus, |ctx| {
        (ctx.index, ctx.cpu, ctx.team_size, current_cpu())
    })
    .unwrap();
    assert_eq!(round.results.len(), 2);
    for (i, (index, cpu, size, now)) in round.results.iter().enumerate() {
        assert_eq!(*index, i);
        assert_eq!(*cpu, cpus[i]);
        assert_eq!(*size, 2);
        assert_eq!(
            *now,
            Some(cpus[i]),
            "thread {i} runs on {now:?}, pinned to {}",
            cpus[i]
        );
    }
    assert_eq!(round.thread_ns.len(), 2);
    assert_eq!(round.start_skew_ns.len(), 2);
    assert!(round.elapsed_ns.is_finite() && round.elapsed_ns >= 0.0);
}

#[test]
fn team_rounds_repeat_without_respawning_and_keep_order() {
    let cpus = two_cpus();
    let mut team = Team::new(&cpus).unwrap();
    let mut tids = None;
    for r in 0..200u64 {
        let round = team
            .run_round(|ctx| (ctx.index as u64 * 1000 + r, std::thread::current().id()))
            .unwrap();
        let vals: Vec<u64> = round.results.iter().map(|x| x.0).collect();
        assert_eq!(vals, vec![r, 1000 + r]);
        let ids: Vec<_> = round.results.iter().map(|x| x.1).collect();
        match &tids {
            None => tids = Some(ids),
            Some(t) => assert_eq!(t, &ids, "threads were re-spawned"),
        }
    }
}

#[test]
fn team_barrier_separates_phases() {
    let cpus = two_cpus();
    let n = cpus.len();
    let mut team = Team::new(&cpus).unwrap();
    for _ in 0..20 {
        let counter = AtomicUsize::new(0);
        let round = team
            .run_round(|ctx| {
                let mut seen = Vec::new();
                for phase in 0..5 {
                    counter.fetch_add(1, Ordering::SeqCst);
                    ctx.wait();
                    // Everyone has incremented for this phase, and nobody has
                    // started the next one (there is a second barrier).
                    seen.push(counter.load(Ordering::SeqCst) == (phase + 1) * n);
                    ctx.wait();
                }
                seen
            })
            .unwrap();
        for seen in round.results {
            assert!(seen.iter().all(|x| *x), "{seen:?}");
        }
    }
}

#[test]
fn team_sharing_one_cpu_still_progresses() {
    // Three threads on one CPU: the barrier must yield, not spin forever.
    let cpu = usable()[0];
    let mut team = Team::new(&[cpu, cpu, cpu]).unwrap();
    for _ in 0..5 {
        let round = team
            .run_round(|ctx| {
                for _ in 0..3 {
                    ctx.wait();
                }
                current_cpu()
            })
            .unwrap();
        assert_eq!(round.results, vec![Some(cpu); 3]);
    }
}

#[test]
fn team_with_unusable_cpu_fails_before_running() {
    let ran = AtomicUsize::new(0);
    let mut cpus = vec![usable()[0]];
    cpus.push(missing_cpu());
    let e = match Team::new(&cpus) {
        Ok(mut t) => {
            let _ = t.run_round(|_| ran.fetch_add(1, Ordering::SeqCst));
            panic!("team on CPU {} was accepted", missing_cpu());
        }
        Err(e) => e.to_string(),
    };
    assert!(e.contains(&format!("CPU {}", missing_cpu())), "{e}");
    assert!(!e.contains('\n'));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(Team::new(&[])
        .unwrap_err()
        .to_string()
        .contains("at least one CPU"));
}

#[test]
fn worker_panic_becomes_an_error_and_team_survives() {
    let cpus = two_cpus();
    let mut team = Team::new(&cpus).unwrap();
    // Thread 1 panics while thread 0 waits for it in the barrier: thread 0
    // must not hang.
    let e = team
        .run_round(|ctx| {
            if ctx.index == 1 {
                panic!("kernel bug on purpose");
            }
            ctx.wait();
            7
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("worker thread 1"), "{e}");
    assert!(e.contains("kernel bug on purpose"), "{e}");
    assert!(e.contains("(at tests/placement.rs:"), "{e}");
    assert!(!e.contains('\n'));
    // The team is usable again.
    let round = team
        .run_round(|ctx| {
            ctx.wait();
            ctx.index
        })
        .unwrap();
    assert_eq!(round.results, vec![0, 1]);
}

#[test]
fn memory_policy_bind_node0_and_missing_node7() {
    if !numa_or_skip("memory_policy_bind_node0_and_missing_node7") {
        return;
    }
    let online = online_nodes().expect("node list readable when NUMA is available");
    assert!(online.contains(0));
    let (policy, placement) = on_fresh_thread(|| {
        set_thread_policy(&MemPolicy::Bind(CpuSet::from_ids([0]))).unwrap();
        let policy = thread_policy().unwrap();
        let buf = Buffer::new(
            1 << 20,
            &BufferOptions {
                touch: Touch::Here,
                ..Default::default()
            },
        )
        .unwrap();
        let placement = page_nodes(buf.as_ptr(), buf.len()).unwrap();
        set_thread_policy(&MemPolicy::Default).unwrap();
        (policy, placement)
    });
    assert_eq!(policy, MemPolicy::Bind(CpuSet::from_ids([0])));
    assert_eq!(
        placement.pages,
        (1 << 20) / cpuscope::placement::mempolicy::page_size()
    );
    assert!(placement.all_on(0), "{placement:?}");

    if !online.contains(7) {
        let e = on_fresh_thread(|| set_thread_policy(&MemPolicy::Bind(CpuSet::from_ids([7]))))
            .unwrap_err()
            .to_string();
        assert!(e.contains("node 7"), "{e}");
        assert!(e.contains("does not exist"), "{e}");
        assert!(!e.contains('\n'));
        let e = on_fresh_thread(|| set_thread_policy(&MemPolicy::Preferred(7)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("node 7"), "{e}");
    }
}

#[test]
fn memory_policy_modes_round_trip() {
    if !numa_or_skip("memory_policy_modes_round_trip") {
        return;
    }
    let got = on_fresh_thread(|| {
        let mut got = Vec::new();
        for p in ["preferred:0", "interleave:0", "local", "default"] {
            let p = MemPolicy::parse(p).unwrap();
            set_thread_policy(&p).unwrap();
            got.push((p, thread_policy().unwrap()));
        }
        got
    });
    for (want, have) in got {
        assert_eq!(want, have);
    }
}

#[test]
fn mbind_range_then_first_touch_lands_on_node0() {
    if !numa_or_skip("mbind_range_then_first_touch_lands_on_node0") {
        return;
    }
    let mut buf = Buffer::new(256 << 10, &BufferOptions::default()).unwrap();
    // Untouched pages are not present: the query must not fault them in.
    assert_eq!(node_of_address(buf.as_ptr()), None);
    let before = page_nodes(buf.as_ptr(), buf.len()).unwrap();
    assert_eq!(before.not_present, before.pages);
    bind_range(
        buf.as_mut_ptr(),
        buf.mapped_len(),
        &MemPolicy::Bind(CpuSet::from_ids([0])),
        BindFlags::default(),
    )
    .unwrap();
    buf.as_mut_slice::<u64>().fill(1);
    assert_eq!(node_of_address(buf.as_ptr()), Some(0));
    assert!(page_nodes(buf.as_ptr(), buf.len()).unwrap().all_on(0));
    // Misaligned and missing-node ranges are refused with a reason.
    let e = bind_range(
        buf.as_mut_ptr().wrapping_add(8),
        4096,
        &MemPolicy::Local,
        BindFlags::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("not aligned"), "{e}");
    if !online_nodes().unwrap().contains(7) {
        let e = bind_range(
            buf.as_mut_ptr(),
            4096,
            &MemPolicy::Interleave(CpuSet::from_ids([0, 7])),
            BindFlags::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("node 7 does not exist"), "{e}");
    }
}

#[test]
fn buffer_base_pages_first_touched_from_a_cpu() {
    let cpu = usable()[0];
    let opts = BufferOptions {
        pages: PageRequest::Base,
        policy: None,
        touch: Touch::FromCpu(cpu),
    };
    let mut buf = Buffer::new(1 << 20, &opts).unwrap();
    assert_eq!(buf.len(), 1 << 20);
    assert_eq!(buf.as_ptr() as usize % 4096, 0);
    let rep = buf.page_report();
    assert_eq!(rep.requested, PageRequest::Base);
    assert_eq!(rep.kind, PageKind::Base, "{rep:?}");
    assert_eq!(rep.huge_bytes, Some(0));
    assert_eq!(rep.resident_bytes, Some(1 << 20), "{rep:?}");
    if numa_unavailable_reason().is_none() {
        let node = node_of_address(buf.as_ptr()).expect("touched page has a node");
        assert!(online_nodes().unwrap().contains(node));
    }
    let s = buf.as_mut_slice::<u64>();
    assert_eq!(s.len(), (1 << 20) / 8);
    s.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64);
    assert_eq!(buf.as_slice::<u64>()[1000], 1000);
    assert_eq!(buf.as_slice::<u8>().len(), 1 << 20);
    // Report serialises for the results record.
    let json = serde_json::to_value(&rep).unwrap();
    assert_eq!(json["kind"], "base");
}

#[test]
fn buffer_untouched_reports_unknown_with_reason() {
    let buf = Buffer::new(64 << 10, &BufferOptions::default()).unwrap();
    let rep = buf.page_report();
    assert_eq!(rep.kind, PageKind::Unknown);
    assert!(rep.note.unwrap().contains("no page touched"));
}

#[test]
fn buffer_thp_reports_what_it_got() {
    let opts = BufferOptions {
        pages: PageRequest::Thp,
        policy: None,
        touch: Touch::Here,
    };
    match Buffer::new(8 << 20, &opts) {
        Ok(buf) => {
            assert_eq!(
                buf.as_ptr() as usize % (2 << 20),
                0,
                "THP buffer is huge-page aligned"
            );
            let rep = buf.page_report();
            assert!(
                matches!(
                    rep.kind,
                    PageKind::Thp | PageKind::MixedThp | PageKind::Base
                ),
                "{rep:?}"
            );
            assert!(rep.huge_bytes.is_some());
            if rep.kind != PageKind::Thp {
                assert!(
                    rep.note.is_some(),
                    "a THP shortfall carries a note: {rep:?}"
                );
            }
            eprintln!("THP request: {rep:?}");
        }
        Err(e) => {
            let u = e
                .downcast_ref::<Unavailable>()
                .expect("THP failure is Unavailable");
            assert!(thp_mode().is_none_or(|m| m == "never"), "{u}");
        }
    }
}

#[test]
fn buffer_hugetlb_fails_cleanly_or_works() {
    let opts = BufferOptions {
        pages: PageRequest::HugeTlb,
        policy: None,
        touch: Touch::Here,
    };
    match Buffer::new(2 << 20, &opts) {
        Ok(buf) => assert_eq!(buf.page_report().kind, PageKind::HugeTlb),
        Err(e) => {
            let u = e
                .downcast_ref::<Unavailable>()
                .unwrap_or_else(|| panic!("not an Unavailable: {e}"));
            assert!(u.reason.contains("nr_hugepages"), "{u}");
            assert!(
                e.to_string()
                    .starts_with("hugetlbfs huge pages not available"),
                "{e}"
            );
            assert!(!e.to_string().contains('\n'));
        }
    }
}

#[test]
fn buffer_with_policy_and_bad_inputs() {
    assert!(Buffer::new(0, &BufferOptions::default())
        .unwrap_err()
        .to_string()
        .contains("empty"));
    assert!(Buffer::new(usize::MAX, &BufferOptions::default()).is_err());
    if !numa_or_skip("buffer_with_policy_and_bad_inputs") {
        return;
    }
    let opts = BufferOptions {
        pages: PageRequest::Base,
        policy: Some(MemPolicy::Bind(CpuSet::from_ids([0]))),
        touch: Touch::Here,
    };
    let buf = Buffer::new(128 << 10, &opts).unwrap();
    assert!(page_nodes(buf.as_ptr(), buf.len()).unwrap().all_on(0));
    if !online_nodes().unwrap().contains(7) {
        let opts = BufferOptions {
            policy: Some(MemPolicy::Bind(CpuSet::from_ids([7]))),
            ..opts
        };
        let e = Buffer::new(128 << 10, &opts).unwrap_err().to_string();
        assert!(e.contains("node 7"), "{e}");
    }
}

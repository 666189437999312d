//! A memory-bound test workload for `cpuscope tune` (used by the topology
//! lab, lab/topologies/tune.toml): it allocates a buffer, touches it (so
//! the memory policy it inherited places its pages), then reads it pass
//! after pass and prints its rate.
//!
//!     numa_cost [--mib N] [--passes P] [--model none|distance]
//!
//! `--model none` (the default) is a plain strided read: on real hardware
//! remote pages cost what the interconnect costs. Under QEMU's TCG every
//! access costs the same wherever the page is (memory is the host's, NUMA is
//! only declared), so the lab uses `--model distance`: for each page the
//! workload reads as many cache lines as the kernel's SLIT distance from
//! the node it runs on to the page's node (10 local, 21 remote on the lab's
//! guest), i.e. it *models* remote memory at the declared distance. Where
//! the pages really are (move_pages) and where it runs (sched_getcpu) are
//! the kernel's, so the ranking tune finds still depends on the binding it
//! applied, and nothing else.

use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Node of each page of `[base, base + len)`, -1 when unknown.
fn page_nodes(base: *const u8, len: usize, page: usize) -> Vec<i32> {
    let n = len.div_ceil(page);
    let mut out = vec![-1i32; n];
    let mut i = 0;
    while i < n {
        let m = (n - i).min(4096);
        let mut addrs: Vec<*mut libc::c_void> = (0..m)
            .map(|k| (base as usize + (i + k) * page) as *mut libc::c_void)
            .collect();
        let mut status = vec![0i32; m];
        // SAFETY: m addresses and m status slots; nodes NULL = query only.
        let r = unsafe {
            libc::syscall(
                libc::SYS_move_pages,
                0 as libc::pid_t,
                m as libc::c_ulong,
                addrs.as_mut_ptr(),
                std::ptr::null::<libc::c_int>(),
                status.as_mut_ptr(),
                0 as libc::c_int,
            )
        };
        if r == 0 {
            out[i..i + m].copy_from_slice(&status);
        }
        i += m;
    }
    out
}

/// The SLIT distance matrix from sysfs (empty without NUMA).
fn distances() -> Vec<Vec<u32>> {
    let mut rows = Vec::new();
    for n in 0.. {
        let p = format!("/sys/devices/system/node/node{n}/distance");
        match std::fs::read_to_string(&p) {
            Ok(t) => rows.push(
                t.split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect(),
            ),
            Err(_) => break,
        }
    }
    rows
}

/// The node of `cpu` (sysfs `cpuN/nodeM`), 0 when unknown.
fn node_of_cpu(cpu: usize) -> usize {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .ok()
        .and_then(|rd| {
            rd.flatten().find_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_prefix("node")?
                    .parse::<usize>()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// [`node_of_cpu`], read once per CPU.
fn node_of_cpu_cached(cpu: usize, cache: &mut Vec<Option<usize>>) -> usize {
    if cache.len() <= cpu {
        cache.resize(cpu + 1, None);
    }
    *cache[cpu].get_or_insert_with(|| node_of_cpu(cpu))
}

/// Each page's cost from node `here`: its SLIT distance (10 = local) under
/// `--model distance`, else 10.
fn page_weights(nodes: &[i32], dist: &[Vec<u32>], here: usize, model: &str) -> Vec<usize> {
    nodes
        .iter()
        .map(|&pn| {
            if model == "distance" && pn >= 0 {
                dist.get(here)
                    .and_then(|r| r.get(pn as usize))
                    .copied()
                    .unwrap_or(10) as usize
            } else {
                10
            }
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = arg(&args, "--mib")
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let passes: usize = arg(&args, "--passes")
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let model = arg(&args, "--model").unwrap_or_else(|| "none".into());
    if model != "none" && model != "distance" {
        eprintln!("numa_cost: --model none|distance");
        std::process::exit(2);
    }
    let page = 4096usize;
    let words = mib * (1 << 20) / 8;
    let mut buf: Vec<u64> = Vec::with_capacity(words);
    // First touch, one write per word: the inherited policy places the pages.
    buf.extend((0..words as u64).map(|i| i ^ 0x5a));
    let nodes = page_nodes(buf.as_ptr() as *const u8, words * 8, page);
    let dist = distances();
    let lines_per_page = page / 64;
    let mut node_cache: Vec<Option<usize>> = Vec::new();
    let words_per_line = 8;
    let t0 = Instant::now();
    let mut sum = 0u64;
    let mut loads = 0u64;
    // Pages by weight, heaviest first, and how many weigh more than s.
    let mut by_weight: Vec<(usize, usize)> = Vec::new();
    let mut above: Vec<usize> = Vec::new();
    let mut weighed_for: Option<usize> = None;
    for pass in 0..passes {
        // SAFETY: sched_getcpu has no arguments.
        let cpu = unsafe { libc::sched_getcpu() }.max(0) as usize;
        let here = node_of_cpu_cached(cpu, &mut node_cache);
        if weighed_for != Some(here) {
            weighed_for = Some(here);
            let w = page_weights(&nodes, &dist, here, &model);
            by_weight = w.iter().copied().enumerate().collect();
            by_weight.sort_by_key(|&(p, w)| (std::cmp::Reverse(w), p));
            let max = by_weight.first().map(|x| x.1).unwrap_or(0);
            above = (0..max)
                .map(|s| by_weight.iter().take_while(|x| x.1 > s).count())
                .collect();
        }
        // Sweep s reads one line of each page that weighs more than s: a
        // page of weight w is read w times per pass, and every read costs
        // the same (no page is skipped inside a sweep).
        for (sweep, &n) in above.iter().enumerate() {
            let line = (sweep * 7 + pass) % lines_per_page;
            for &(p, _) in &by_weight[..n] {
                let idx = p * (page / 8) + line * words_per_line;
                if idx < words {
                    sum = sum.wrapping_add(std::hint::black_box(buf[idx]));
                    loads += 1;
                }
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut per_node = std::collections::BTreeMap::new();
    for n in &nodes {
        *per_node.entry(*n).or_insert(0usize) += 1;
    }
    println!(
        "numa_cost: {mib} MiB, {passes} passes, model {model}, pages per node {per_node:?}, checksum {}",
        sum % 1000
    );
    println!("rate: {:.3} Mloads/s", loads as f64 / secs / 1e6);
}

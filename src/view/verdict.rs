//! What the verdict's lines share (docs/views.md): finding a record by its
//! params, a figure with its noise mark, a reason's cause in a few words.
//! Each experiment writes its own lines in its folder's `view.rs`
//! ([`super::Views::verdict`]); `report/verdict.rs` lays them out with the
//! machine, busy, seeds, findings, noise and n/a lines. Nothing here
//! measures or knows an experiment.

use super::param_text;
use crate::base::fmt::fmt_num;
use crate::results::schema::{MetricId, ResultRecord, Run};

/// The record's param `k` is `v`.
pub fn has(r: &ResultRecord, k: &str, v: &str) -> bool {
    param_text(r, k).as_deref() == Some(v)
}

/// The first measured record of `id` whose params satisfy `f`.
pub fn find(run: &Run, id: MetricId, f: impl Fn(&ResultRecord) -> bool) -> Option<&ResultRecord> {
    run.records(id).filter(|r| r.value.is_some()).find(|r| f(r))
}

pub fn noisy_mark(r: &ResultRecord) -> &'static str {
    if r.is_suspect() {
        " ?"
    } else if r.is_noisy() || r.is_disturbed() {
        " !"
    } else {
        ""
    }
}

/// `value unit` with the noisy mark.
pub fn fig(r: &ResultRecord) -> String {
    format!(
        "{} {}{}",
        fmt_num(r.value.unwrap_or(f64::NAN)),
        r.unit,
        noisy_mark(r)
    )
}

/// The first `n` characters of `s` (at a word), with "…" when cut.
pub fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let cut: String = s.chars().take(n).collect();
    let cut = cut.rsplit_once(' ').map(|x| x.0).unwrap_or(&cut);
    format!("{cut}…")
}

/// The cause of an unavailable reason, in a few words: reasons that differ
/// only in detail (which counter, which errno text) share a cause.
pub fn cause(reason: &str) -> String {
    let l = reason.to_ascii_lowercase();
    let has = |k: &str| l.contains(k);
    if has("pmu") || (has("not supported") && (has("cycles") || has("instructions"))) {
        return if has("virtual machine") || has("hypervisor") {
            "no hardware counters (PMU) in this VM".into()
        } else {
            "hardware counters (PMU) not available".into()
        };
    }
    if has("perf_event_paranoid") || has("eacces") || has("permission") {
        return "not permitted to count (perf_event_paranoid)".into();
    }
    if has("memory limit") {
        return "the cgroup's memory limit".into();
    }
    if has("smt") || has("threads of one core") || has("hardware thread") {
        return "no SMT".into();
    }
    // NUMA: what the reason says of the nodes, most specific first (a
    // 2-node machine whose sockets hold one node each is not "one node").
    if has("holds two numa nodes") || has("no two numa nodes on different sockets") {
        return "one NUMA node per socket".into();
    }
    if has("no numa node holds") {
        return "NUMA nodes smaller than the placement set".into();
    }
    if has("same distance as the nearest") {
        return "one remote distance (no farther node)".into();
    }
    if has("one numa node")
        || has("one usable numa node")
        || has("no remote memory")
        || has("there is no remote")
        || has("numa nodes unknown")
    {
        return "one NUMA node".into();
    }
    if has("package") || has("socket") || has("one l3") {
        return "one socket / one L3".into();
    }
    if has("neon") || has("avx") || has("sve") || has("instruction set") {
        return "instruction set not on this CPU".into();
    }
    if has("not the cache") {
        return "4 KiB-page plateau is DRAM plus TLB misses (the 2 MiB-page curve has the level)"
            .into();
    }
    if has("of the memory plateau") {
        return "plateau at memory latency, not a cache (VM or sub-NUMA memory)".into();
    }
    if has("no step within") || has("no step of its own") {
        return "cache level without a step near its declared size".into();
    }
    if has("places threads exactly like") {
        return "placements identical on this machine".into();
    }
    if has("huge page") || has("hugetlb") {
        return "no huge pages".into();
    }
    if has("not saturated") || has("still growing") {
        return "bandwidth still growing at all CPUs".into();
    }
    short(reason.split(": ").next().unwrap_or(reason), 60)
}

/// `"{name} n/a ({cause})"` for the first record of `id` that `keep`
/// accepts and that has no value, its cause in at most `n` characters;
/// None when there is none.
pub fn na_part(
    run: &Run,
    id: MetricId,
    name: &str,
    n: usize,
    keep: impl Fn(&ResultRecord) -> bool,
) -> Option<String> {
    let r = run.records(id).find(|r| r.value.is_none() && keep(r))?;
    let why = r
        .unavailable_reason
        .as_deref()
        .map(cause)
        .unwrap_or_default();
    Some(format!("{name} n/a ({})", short(&why, n)))
}

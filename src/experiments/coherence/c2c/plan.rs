//! Which pairs c2c measures, in which rounds, with how many samples
//! (docs/methods-c2c.md, "Plan"): every pair of the CPUs or a sample spread
//! over the nodes, rounds of disjoint pairs by the circle method with
//! siblings of busy cores kept idle, samples and passes fitted to the
//! profile's budget. The plan runs on the harness (`harness::pairs`).

use crate::base::CpuSet;
use crate::experiments::coherence::infer::Declared;
use crate::experiments::experiment::Profile;
use crate::harness::pairs::Plan;
use crate::kernels::c2c::Method;
use crate::machine::MachineInfo;
use anyhow::{bail, Result};
use std::collections::BTreeMap;

/// Cost model of the planner (deliberately pessimistic).
/// Round trip assumed for planning: 2 × 250 ns, a slow cross-socket hop.
pub const PLAN_RTT_NS: f64 = 500.0;
/// Mapping, first touch, meeting the partner and unmapping, per pair.
pub const PAIR_OVERHEAD_S: f64 = 0.0005;
/// Waking the team and releasing it at the barrier, per round.
pub const ROUND_OVERHEAD_S: f64 = 0.0005;
/// Starting one pinned team thread.
pub const THREAD_START_S: f64 = 0.0002;
/// Fewest samples per pair the planner goes down to before shortening batches.
pub const MIN_SAMPLES: usize = 15;

/// Shortest batch (round trips per sample) before sampling pairs.
pub const MIN_ROUND_TRIPS: u64 = 200;

/// Time budget of the whole c2c experiment (all methods) per profile, seconds.
pub fn budget_secs(profile: Profile) -> f64 {
    match profile {
        Profile::Quick => 4.0,
        Profile::Standard => 30.0,
        Profile::Full => 300.0,
    }
}

/// What to plan.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    /// CPUs to measure (at least two).
    pub cpus: Vec<usize>,
    pub methods: Vec<Method>,
    pub budget_secs: f64,
    /// Most samples per pair (the planner may use fewer).
    pub max_samples: usize,
    /// Round trips per sample (the planner may use fewer, down to MIN_ROUND_TRIPS).
    pub round_trips: u64,
    /// Fixed samples / round trips: the planner does not reduce them.
    pub fixed: bool,
    /// Measure at most this many pairs (`--sample`).
    pub max_pairs: Option<usize>,
    /// At most this many pairs at once (1 = one pair at a time).
    pub max_parallel: Option<usize>,
    /// Most passes over the schedule (each pass measures every pair again,
    /// later in time; samples of all passes are pooled).
    pub max_passes: usize,
}

impl PlanRequest {
    /// The profile's defaults for these CPUs.
    pub fn for_profile(profile: Profile, cpus: &[usize], methods: &[Method]) -> PlanRequest {
        let (max_samples, round_trips) = match profile {
            Profile::Quick => (100, 1000),
            Profile::Standard => (300, 1000),
            Profile::Full => (300, 5000),
        };
        PlanRequest {
            cpus: cpus.to_vec(),
            methods: methods.to_vec(),
            budget_secs: budget_secs(profile),
            max_samples,
            round_trips,
            fixed: false,
            max_pairs: None,
            max_parallel: None,
            max_passes: match profile {
                Profile::Quick => 4,
                Profile::Standard => 24,
                Profile::Full => 16,
            },
        }
    }
}

/// Seconds one method takes with this schedule.
pub fn estimate_method_secs(rounds: usize, samples: usize, warmup: usize, round_trips: u64) -> f64 {
    let pair = ((samples + warmup) as f64) * round_trips as f64 * PLAN_RTT_NS * 1e-9;
    rounds as f64 * (pair + PAIR_OVERHEAD_S + ROUND_OVERHEAD_S)
}

fn warmup_for(samples: usize) -> usize {
    (samples / 10).clamp(2, 20)
}

/// Round of the circle method (round-robin tournament) in which players `i`
/// and `j` (indices, i != j) meet, for `n` players (padded to even).
pub fn circle_round(i: usize, j: usize, n: usize) -> usize {
    let m = if n.is_multiple_of(2) { n } else { n + 1 };
    let (i, j) = if i < j { (i, j) } else { (j, i) };
    if m < 2 {
        return 0;
    }
    let last = m - 1;
    if j == last {
        i
    } else {
        // i = r + k, j = r - k (mod m-1)  =>  r = (i + j) / 2 (mod m-1);
        // m-1 is odd, so the inverse of 2 is m/2.
        ((i + j) * (m / 2)) % last
    }
}

/// Pack pairs into rounds: pairs ordered by their circle-method round, then
/// each put in the first round where neither CPU's core is already busy (a
/// pair of SMT siblings occupies its one core) and fewer than `max_parallel`
/// pairs run. Without SMT and with every pair, this gives the circle
/// method's n-1 rounds of n/2 pairs. `cpus` gives the players' order. `core_of` maps a CPU id to its core; `index_of` a CPU id
/// to its index among the planned CPUs (for the circle order).
pub fn schedule(
    pairs: &[(usize, usize)],
    cpus: &[usize],
    core_of: &dyn Fn(usize) -> usize,
    max_parallel: usize,
) -> Vec<Vec<usize>> {
    let n_cpus = cpus.len();
    let index: BTreeMap<usize, usize> = cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let index_of = |c: usize| index.get(&c).copied().unwrap_or(0);
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by_cached_key(|&p| {
        let (a, b) = pairs[p];
        let (ia, ib) = (index_of(a), index_of(b));
        (circle_round(ia, ib, n_cpus), ia.min(ib), ia.max(ib))
    });
    // First fit: each pair, in that order, goes to the first round where
    // neither of its cores is busy and the round has room. Rounds are
    // bitmaps (64 per word) per core, so a pair costs O(rounds / 64).
    let max_core = pairs
        .iter()
        .flat_map(|&(a, b)| [core_of(a), core_of(b)])
        .max()
        .unwrap_or(0);
    let max_parallel = max_parallel.max(1);
    let mut used: Vec<Vec<u64>> = vec![Vec::new(); max_core + 1];
    let mut full: Vec<u64> = Vec::new();
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    let word = |v: &Vec<u64>, w: usize| v.get(w).copied().unwrap_or(0);
    let set = |v: &mut Vec<u64>, r: usize| {
        let w = r / 64;
        if v.len() <= w {
            v.resize(w + 1, 0);
        }
        v[w] |= 1 << (r % 64);
    };
    for p in order {
        let (a, b) = pairs[p];
        let (ca, cb) = (core_of(a), core_of(b));
        let mut w = 0;
        let r = loop {
            let m = word(&full, w) | word(&used[ca], w) | word(&used[cb], w);
            if m != u64::MAX {
                break w * 64 + (!m).trailing_zeros() as usize;
            }
            w += 1;
        };
        set(&mut used[ca], r);
        set(&mut used[cb], r);
        if rounds.len() <= r {
            rounds.resize(r + 1, Vec::new());
        }
        rounds[r].push(p);
        if rounds[r].len() >= max_parallel {
            set(&mut full, r);
        }
    }
    rounds
}

/// CPUs in an order that spreads over the given groups (round-robin over
/// groups, in CPU order within each): its first s entries are the subset
/// measured when the whole machine does not fit.
pub fn spread_order(cpus: &[usize], group_of: &dyn Fn(usize) -> usize) -> Vec<usize> {
    let mut by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &c in cpus {
        by.entry(group_of(c)).or_default().push(c);
    }
    let lists: Vec<Vec<usize>> = by.into_values().collect();
    let mut out = Vec::with_capacity(cpus.len());
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    for k in 0..longest {
        for l in &lists {
            if let Some(&c) = l.get(k) {
                out.push(c);
            }
        }
    }
    out
}

/// Plan a c2c run on `machine` (for core and node placement).
pub fn plan(machine: &MachineInfo, req: &PlanRequest) -> Result<Plan> {
    let mut cpus = req.cpus.clone();
    cpus.sort_unstable();
    cpus.dedup();
    check_request(req, &cpus)?;
    let decl = Declared::from_machine(machine, &cpus);
    let n = cpus.len();
    let index: BTreeMap<usize, usize> = cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let index_of = |c: usize| index.get(&c).copied().unwrap_or(0);
    let core_of = |c: usize| decl.core_of[index_of(c)];
    // Node (or package) of each CPU, to spread a subset over the machine.
    let spread_level = decl.levels.iter().find(|l| {
        l.names
            .iter()
            .any(|x| x == "same_node" || x == "same_package")
    });
    let group_of = |c: usize| spread_level.map(|l| l.group_of[index_of(c)]).unwrap_or(0);
    // CPUs in an order spread over the nodes: a subset is its first s entries.
    let order = spread_order(&cpus, &group_of);
    let max_parallel = req.max_parallel.unwrap_or(usize::MAX);
    let select =
        |s: usize| Selection::new(order[..s.min(order.len())].to_vec(), &core_of, max_parallel);
    let all_pairs = n * (n - 1) / 2;
    let mut notes = Vec::new();

    let mut chosen = select(sampled_size(n, req.max_pairs, &mut notes));
    let mut samples = req.max_samples;
    let mut rt = req.round_trips;
    if !req.fixed && !fits(req, &chosen, samples, rt) {
        (samples, rt) = shrink_batches(req, &chosen, &mut notes);
        // 3. fewer CPUs: the rounds, not the pairs, cost time (a round's
        // pairs run in parallel), and s CPUs need about s-1 rounds; so
        // measure every pair of a subset spread over the nodes.
        if !fits(req, &chosen, samples, rt) {
            chosen = fewer_cpus(req, chosen, (samples, rt), &select);
            notes.push(format!(
                "the full matrix over {n} CPUs ({all_pairs} pairs) does not fit the budget: measuring every pair of {} CPUs spread over the nodes ({})",
                chosen.cpus.len(),
                CpuSet::from_ids(chosen.cpus.iter().copied())
            ));
        }
    }
    let Selection {
        cpus: sel,
        pairs,
        rounds,
    } = chosen;
    let nm = req.methods.len();
    let warmup = warmup_for(samples);
    let one_pass = nm as f64 * estimate_method_secs(rounds.len(), samples, warmup, rt);
    let start = sel.len() as f64 * THREAD_START_S;
    let passes = passes_for(req, one_pass, start);
    let est = passes as f64 * one_pass + start;
    Ok(Plan {
        passes,
        full_matrix: pairs.len() == all_pairs,
        requested_cpus: n,
        cpus: sel,
        methods: req.methods.clone(),
        pairs,
        rounds,
        round_trips: rt,
        samples,
        warmup,
        est_secs: est,
        budget_secs: req.budget_secs,
        notes,
    })
}

/// The CPUs a plan measures, every pair of them, and their rounds.
struct Selection {
    /// The CPUs, sorted.
    cpus: Vec<usize>,
    pairs: Vec<(usize, usize)>,
    rounds: Vec<Vec<usize>>,
}

impl Selection {
    /// Every pair of `cpus`, scheduled in rounds (`core_of` maps a CPU id
    /// to its core).
    fn new(
        mut cpus: Vec<usize>,
        core_of: &dyn Fn(usize) -> usize,
        max_parallel: usize,
    ) -> Selection {
        cpus.sort_unstable();
        let pairs: Vec<(usize, usize)> = (0..cpus.len())
            .flat_map(|i| (i + 1..cpus.len()).map(move |j| (i, j)))
            .map(|(i, j)| (cpus[i], cpus[j]))
            .collect();
        let rounds = schedule(&pairs, &cpus, core_of, max_parallel);
        Selection {
            cpus,
            pairs,
            rounds,
        }
    }
}

/// Whether every method over `chosen`, with `s` samples of `r` round trips
/// per pair, fits the request's budget.
fn fits(req: &PlanRequest, chosen: &Selection, s: usize, r: u64) -> bool {
    let nm = req.methods.len();
    nm as f64 * estimate_method_secs(chosen.rounds.len(), s, warmup_for(s), r)
        + chosen.cpus.len() as f64 * THREAD_START_S
        <= req.budget_secs
}

/// Samples per pair and round trips per sample cut until `chosen` fits the
/// budget or they reach their floors, with a note when they were cut.
fn shrink_batches(req: &PlanRequest, chosen: &Selection, notes: &mut Vec<String>) -> (usize, u64) {
    let mut samples = req.max_samples;
    let mut rt = req.round_trips;
    // 1. fewer samples
    while samples > MIN_SAMPLES && !fits(req, chosen, samples, rt) {
        samples = (samples * 4 / 5).max(MIN_SAMPLES);
    }
    // 2. shorter batches
    while rt > MIN_ROUND_TRIPS && !fits(req, chosen, samples, rt) {
        rt = (rt * 4 / 5).max(MIN_ROUND_TRIPS);
    }
    if samples < req.max_samples || rt < req.round_trips {
        notes.push(format!(
            "to fit the {:.0} s budget: {samples} samples of {rt} round trips per pair (profile asks {} of {})",
            req.budget_secs, req.max_samples, req.round_trips
        ));
    }
    (samples, rt)
}

/// Fewer CPUs than `chosen` until the plan fits the budget (or two are
/// left): each try takes the first entries of the spread order (`select`).
fn fewer_cpus(
    req: &PlanRequest,
    mut chosen: Selection,
    (samples, rt): (usize, u64),
    select: &dyn Fn(usize) -> Selection,
) -> Selection {
    let nm = req.methods.len();
    let per_round = nm as f64 * estimate_method_secs(1, samples, warmup_for(samples), rt);
    while chosen.cpus.len() > 2 && !fits(req, &chosen, samples, rt) {
        let sel = &chosen.cpus;
        let afford = ((req.budget_secs - sel.len() as f64 * THREAD_START_S) / per_round).max(1.0);
        let want =
            ((sel.len() - 1) as f64 * afford / chosen.rounds.len() as f64).floor() as usize + 1;
        let size = want.clamp(2, sel.len() - 1);
        chosen = select(size);
    }
    chosen
}

/// Refuses a request that cannot be planned: fewer than two CPUs (`cpus`,
/// sorted and deduplicated), no method, zero sizes.
fn check_request(req: &PlanRequest, cpus: &[usize]) -> Result<()> {
    if cpus.len() < 2 {
        bail!(
            "core-to-core latency needs at least two usable CPUs (got {})",
            if cpus.is_empty() {
                "none".to_string()
            } else {
                format!("only CPU {}", cpus[0])
            }
        );
    }
    if req.methods.is_empty() {
        bail!("no ping-pong method chosen");
    }
    if req.max_samples == 0 || req.round_trips == 0 || req.max_passes == 0 {
        bail!("samples and round trips per sample must be at least 1");
    }
    if req.max_pairs == Some(0) {
        bail!("--sample must allow at least one pair");
    }
    Ok(())
}

/// How many of the `n` CPUs `--sample` (at most `max_pairs` pairs) leaves:
/// the largest s with s(s-1)/2 pairs within it, with a note when it cuts.
fn sampled_size(n: usize, max_pairs: Option<usize>, notes: &mut Vec<String>) -> usize {
    let all_pairs = n * (n - 1) / 2;
    let mut size = n;
    if let Some(p) = max_pairs {
        // Largest s with s(s-1)/2 <= p.
        while size > 2 && size * (size - 1) / 2 > p {
            size -= 1;
        }
        if size < n {
            notes.push(format!(
                "--sample {p}: every pair of {size} of the {n} CPUs, spread over the nodes ({} pairs of {all_pairs})",
                size * (size - 1) / 2
            ));
        }
    }
    size
}

/// Passes over the schedule: spare budget buys passes (the same pairs
/// measured again later, so that a pair's figure spans more of the
/// machine's slow drifts); one with fixed sizes.
fn passes_for(req: &PlanRequest, one_pass: f64, start: f64) -> usize {
    if req.fixed {
        1
    } else {
        (((req.budget_secs - start) / one_pass).floor() as usize).clamp(1, req.max_passes.max(1))
    }
}

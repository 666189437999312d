//! Which placements tune tries (docs/methods-tune.md): the candidates from
//! the placement planner, each with its binding and memory policy, and
//! the thread-count knob a command may take.

use crate::base::CpuSet;
use crate::experiments::compute::placement_plan::{memory_for_set, sized_sets, PlacementSet};
use crate::machine::MachineInfo;
use crate::placement::MemPolicy;
use serde::Serialize;

/// The memory name of a candidate that sets no memory policy.
pub const NO_POLICY: &str = "-";

/// The set name of the baseline (no binding).
pub const NO_BINDING: &str = "none";

/// The command's thread-count knob.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadKnob {
    /// Counts of the curve (without binding).
    pub counts: Vec<usize>,
    /// Environment variable set to the count (`OMP_NUM_THREADS`).
    pub env: Option<String>,
    /// The arguments hold `{threads}`.
    pub placeholder: bool,
}

/// The text a command's arguments use for the thread count.
pub const THREADS_PLACEHOLDER: &str = "{threads}";

/// One way to run the command.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// The planner's set name, or [`NO_BINDING`].
    pub set: String,
    /// The memory policy's name (`local`, `preferred`, `interleave`,
    /// `remote`), or [`NO_POLICY`].
    pub memory: String,
    /// Thread count given to the command (with a knob).
    pub threads: Option<usize>,
    /// What it is, in words.
    pub what: String,
    pub cpus: Option<CpuSet>,
    pub policy: Option<MemPolicy>,
    /// The baseline every ratio is taken against.
    pub baseline: bool,
    /// Other names the planner gave the same binding.
    pub also: Vec<String>,
}

impl Candidate {
    /// `none`, `one_node/local`, `none t=4`.
    pub fn label(&self) -> String {
        let mut s = self.set.clone();
        if self.memory != NO_POLICY {
            s.push('/');
            s.push_str(&self.memory);
        }
        if let Some(t) = self.threads {
            s.push_str(&format!(" t={t}"));
        }
        s
    }
}

/// The candidates for this machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TunePlan {
    /// CPUs per placement set.
    pub k: usize,
    pub candidates: Vec<Candidate>,
    /// Sets and policies this machine cannot offer: (name, reason).
    pub not_applicable: Vec<(String, String)>,
    pub notes: Vec<String>,
    pub threads: Option<ThreadKnob>,
}

/// The usable cores of the largest NUMA node (all usable cores when the
/// nodes are unknown): what "one node's CPUs" means by default.
pub fn default_cpus_needed(m: &MachineInfo, usable: &CpuSet) -> usize {
    let cores = crate::experiments::experiment::one_cpu_per_core(m, usable);
    let per_node = m
        .numa_nodes
        .iter()
        .map(|n| n.cpus.intersection(&cores).len())
        .max()
        .unwrap_or(0);
    if per_node > 0 {
        per_node
    } else {
        cores.len().max(1)
    }
}

/// Plan the candidates: the baseline, the planner's sets for `k` CPUs with
/// local memory, the one-node set with every memory policy, and the thread
/// curve. Identical bindings are run once (the others listed in `also`).
pub fn plan_candidates(
    m: &MachineInfo,
    usable: &CpuSet,
    k: usize,
    knob: Option<ThreadKnob>,
) -> TunePlan {
    let sized = sized_sets(m, usable, k);
    let mut notes = sized.notes.clone();
    let mut not_applicable = Vec::new();
    let k = sized.k;
    let placed_threads = knob.as_ref().map(|_| k);
    let mut cands: Vec<Candidate> = vec![Candidate {
        set: NO_BINDING.into(),
        memory: NO_POLICY.into(),
        threads: placed_threads,
        what: "no binding: the command as you would run it".into(),
        cpus: None,
        policy: None,
        baseline: true,
        also: Vec::new(),
    }];
    for s in &sized.sets {
        push_set_candidates(
            m,
            usable,
            s,
            placed_threads,
            &mut cands,
            &mut not_applicable,
        );
    }
    if let Some(kn) = &knob {
        push_thread_curve(kn, placed_threads, &mut cands);
        if placed_threads.is_some() {
            notes.push(format!(
                "the placement sets run the command with as many threads as CPUs in the set ({k}); \
                 the baseline too"
            ));
        }
    }
    TunePlan {
        k,
        candidates: merge_identical_bindings(cands),
        not_applicable,
        notes,
        threads: knob,
    }
}

/// The candidates of one placement set: one per wanted memory policy (every
/// policy for `one_node`, local memory for the others), or the CPUs alone
/// when no policy applies; a set without CPUs and the policies that do not
/// apply go to `not_applicable`.
fn push_set_candidates(
    m: &MachineInfo,
    usable: &CpuSet,
    s: &PlacementSet,
    placed_threads: Option<usize>,
    cands: &mut Vec<Candidate>,
    not_applicable: &mut Vec<(String, String)>,
) {
    let Some(cpus) = &s.cpus else {
        not_applicable.push((s.name.clone(), s.not_applicable.clone().unwrap_or_default()));
        return;
    };
    let mems = memory_for_set(m, usable, cpus);
    let wanted: &[&str] = if s.name == "one_node" {
        &["local", "preferred", "interleave", "remote"]
    } else {
        &["local"]
    };
    let mut any = false;
    for mp in mems.iter().filter(|mp| wanted.contains(&mp.name.as_str())) {
        match &mp.policy {
            Some(p) => {
                any = true;
                cands.push(Candidate {
                    set: s.name.clone(),
                    memory: mp.name.clone(),
                    threads: placed_threads.map(|_| cpus.len()),
                    what: format!("{}; {}", s.what, mp.what),
                    cpus: Some(cpus.clone()),
                    policy: Some(p.clone()),
                    baseline: false,
                    also: Vec::new(),
                });
            }
            None => not_applicable.push((
                format!("{}/{}", s.name, mp.name),
                mp.not_applicable.clone().unwrap_or_default(),
            )),
        }
    }
    if !any {
        // No memory policy at all (no NUMA information): CPUs only.
        cands.push(Candidate {
            set: s.name.clone(),
            memory: NO_POLICY.into(),
            threads: placed_threads.map(|_| cpus.len()),
            what: s.what.clone(),
            cpus: Some(cpus.clone()),
            policy: None,
            baseline: false,
            also: Vec::new(),
        });
    }
}

/// The thread curve without binding: one candidate per count of the knob,
/// except the count the placed candidates already run with.
fn push_thread_curve(kn: &ThreadKnob, placed_threads: Option<usize>, cands: &mut Vec<Candidate>) {
    for &t in &kn.counts {
        if Some(t) == placed_threads {
            continue;
        }
        cands.push(Candidate {
            set: NO_BINDING.into(),
            memory: NO_POLICY.into(),
            threads: Some(t),
            what: format!("no binding, {t} thread(s)"),
            cpus: None,
            policy: None,
            baseline: false,
            also: Vec::new(),
        });
    }
}

/// One run per distinct binding: a candidate with the same CPUs, policy and
/// thread count as an earlier one is listed in that one's `also`.
fn merge_identical_bindings(cands: Vec<Candidate>) -> Vec<Candidate> {
    // One run per distinct binding.
    let mut out: Vec<Candidate> = Vec::new();
    for c in cands {
        match out
            .iter_mut()
            .find(|o| o.cpus == c.cpus && o.policy == c.policy && o.threads == c.threads)
        {
            Some(o) => o.also.push(c.label()),
            None => out.push(c),
        }
    }
    out
}

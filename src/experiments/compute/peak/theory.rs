//! What the core should do (docs/methods-compute.md): FLOPs per cycle from
//! the knowledge base's FMA units and widths (with its source), FMA units
//! inferred from a measured figure when the core is not known, the capacity
//! formula of seed 000 and the nop loop's bound. No measurement here.

use crate::experiments::compute::payload::{KnownCore, Theory};
use crate::kernels::cpu_loops::NOP_LOOP_INSNS;
use crate::kernels::fma::Width;
use crate::machine::uarch::{Core, Precision};
use crate::machine::MachineInfo;
use serde_json::json;

/// The theoretical side of this run: the knowledge-base entry of the core
/// that measures (data/uarch/, `machine::uarch`), or why there is none.
pub type Spec = Result<Core, String>;

/// The entry of the core kind that runs `cpu`, or why there is none.
pub fn spec_for(machine: &MachineInfo, cpu: usize) -> Spec {
    machine.uarch.core_for(cpu).cloned()
}

/// Theoretical FP64 FLOPs per cycle per core at width `w`, or why not.
pub fn theoretical_flops_per_cycle(spec: &Spec, w: Width) -> Result<f64, String> {
    let c = spec.as_ref().map_err(Clone::clone)?;
    c.fp.flops_per_cycle(w.bits(), Precision::F64)
        .map_err(|e| format!("{}: {e}", c.name))
}

/// The citation of the FP figures, "entry name (variant): source".
pub(super) fn fp_source(c: &Core) -> String {
    format!(
        "{}{}: {}",
        c.name,
        c.variant
            .as_deref()
            .map(|v| format!(", {v}"))
            .unwrap_or_default(),
        c.field_source(&c.fp.source, &c.fp.sources, "fma_units")
    )
}

/// The knowledge base's entry as a record's `theory` data.
pub(super) fn theory_data(spec: &Spec, machine: &MachineInfo, cpu: usize) -> Theory {
    match spec {
        Ok(c) => Theory::Known(KnownCore {
            core: c.id.clone(),
            name: c.name.clone(),
            variant: c.variant.clone(),
            matched_by: machine
                .uarch
                .for_cpu(cpu)
                .and_then(|r| r.matched_by.clone()),
            fp: json!(c.fp),
            frontend: json!(c.frontend),
            source: fp_source(c),
        }),
        Err(e) => Theory::Unknown { reason: e.clone() },
    }
}

/// What a measured FLOP/cycle says about the FMA units when no documented
/// figure is at hand: the unit count (whole, or half a unit when a wide
/// instruction is split in two) that explains it, or why none does. The
/// measurement can be below the hardware's rate (a busy host, a low clock),
/// hardly above it: a count fits when the measured figure is 80–105% of it.
pub fn infer_fma_units(bits: u32, fpc: f64) -> Result<(f64, String), String> {
    let per_insn = (bits.max(64) / 64) as f64 * 2.0;
    let est = fpc / per_insn;
    let kind = if bits <= 64 {
        "scalar".to_string()
    } else {
        format!("{bits}-bit")
    };
    let words = |u: f64| {
        if u < 1.0 {
            format!("one FMA unit at half rate ({kind} FMAs split into two halves)")
        } else if u == 1.0 {
            format!("one {kind} FMA unit")
        } else {
            format!(
                "{} {kind} FMA units",
                ["two", "three", "four"]
                    .get(u as usize - 2)
                    .copied()
                    .unwrap_or("several")
            )
        }
    };
    let best = [0.5, 1.0, 2.0, 3.0, 4.0]
        .into_iter()
        .min_by(|a, b| (est / a - 1.0).abs().total_cmp(&(est / b - 1.0).abs()))
        .unwrap_or(1.0);
    let r = est / best;
    if (0.8..=1.05).contains(&r) {
        Ok((
            best,
            format!(
                "measured {fpc:.1} FLOP/cycle at {}: consistent with {} ({:.0}% of {} FLOP/cycle) — inferred from this measurement, not from a table",
                width_words(bits),
                words(best),
                r * 100.0,
                best * per_insn
            ),
        ))
    } else {
        Err(format!(
            "measured {fpc:.1} FLOP/cycle at {} = {est:.2} FMAs per cycle: no whole number of FMA units explains it within 80–105% (a busy or throttled core?) — nothing inferred",
            width_words(bits)
        ))
    }
}

fn width_words(bits: u32) -> String {
    if bits <= 64 {
        "scalar FP64".into()
    } else {
        format!("{bits}-bit")
    }
}

/// SMT factor of seed 000's formula: 1.0 without SMT, 1.3 for 2-way, 1.5 for 4-way.
pub fn smt_factor(threads_per_core: usize) -> f64 {
    match threads_per_core {
        0 | 1 => 1.0,
        2 | 3 => 1.3,
        _ => 1.5,
    }
}

/// Seed 000's capacity formula ("CPU性能验证公式：频率 x 核数 x 发射数/周期 x
/// 1.3/1.5(smt2/smt4)"): G instructions per second from the clock (GHz), the
/// cores, the issue width and the threads per core.
pub fn capacity(ghz: f64, cores: usize, issue_width: f64, threads_per_core: usize) -> f64 {
    ghz * cores as f64 * issue_width * smt_factor(threads_per_core)
}

/// Why an all-cores figure cannot be what the cores do together: `n` cores
/// measured below half of what one core alone did (`one`) a moment before.
/// Each core runs its own independent FMA chains, so together they can lose
/// to shared clocks and power, never fall under one core: such a figure says
/// the threads did not run at the same time (vCPUs the host descheduled, a
/// fresh guest's vCPUs waking up, CPUs busy with other work).
pub fn all_cores_implausible(all: Option<f64>, one: Option<f64>, n: usize) -> Option<String> {
    let (all, one) = (all?, one?);
    (n > 1 && all < 0.5 * one).then(|| {
        format!(
            "{n} cores together measured {} GFLOP/s, under half of one core alone ({} GFLOP/s): the threads did not run at the same time (vCPUs descheduled by the host, or CPUs busy with other work); not a figure of the hardware",
            crate::base::fmt::fmt_num(all),
            crate::base::fmt::fmt_num(one)
        )
    })
}

/// The most instructions per second the nop loop can retire on `cores`
/// cores at the all-core clock `ghz`.
pub struct NopBound {
    pub g_instr_s: f64,
    /// Instructions per cycle per core.
    pub per_cycle: f64,
    pub basis: String,
}

/// µops the core dispatches per iteration of the nop loop: x86 cores fuse
/// the decrement with the branch (Intel and AMD optimisation guides), the
/// Arm cores in the base are counted unfused (the conservative bound).
fn nop_loop_uops() -> f64 {
    if cfg!(target_arch = "x86_64") {
        4.0
    } else {
        NOP_LOOP_INSNS as f64
    }
}

/// The nop-loop bound: one taken branch per iteration caps a core at
/// `taken branches/cycle × 5` instructions per cycle, and the dispatch
/// width at `dispatch × 5 / µops per iteration`; SMT threads share both.
pub fn nop_bound(spec: &Spec, ghz: Option<f64>, cores: usize) -> Result<NopBound, String> {
    let c = spec.as_ref().map_err(Clone::clone)?;
    let fe = c
        .frontend
        .as_ref()
        .ok_or_else(|| format!("{} has no front-end figures in the knowledge base", c.name))?;
    let insns = NOP_LOOP_INSNS as f64;
    let mut limits = Vec::new();
    if let Some(t) = fe.taken_branches_per_cycle {
        limits.push((
            t * insns,
            format!("{t} taken branch(es)/cycle × {insns} instructions per iteration"),
            "taken_branches_per_cycle",
        ));
    }
    if let Some(d) = fe.dispatch {
        let u = nop_loop_uops();
        limits.push((
            d * insns / u,
            format!("dispatch {d} µops/cycle × {insns} instructions per {u} µops"),
            "dispatch",
        ));
    }
    let Some((per_cycle, why, field)) = limits.into_iter().min_by(|a, b| a.0.total_cmp(&b.0))
    else {
        return Err(format!(
            "{}: neither taken branches per cycle nor dispatch width is in the knowledge base",
            c.name
        ));
    };
    let g = ghz.ok_or("the all-core clock was not measured")?;
    Ok(NopBound {
        g_instr_s: per_cycle * g * cores as f64,
        per_cycle,
        basis: format!(
            "{per_cycle:.2} instructions/cycle per core from {why} ({}; source: {}) × {cores} cores × {g:.2} GHz",
            c.name,
            c.field_source(&fe.source, &fe.sources, field)
        ),
    })
}

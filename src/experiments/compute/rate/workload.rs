//! What `rate` runs and where its memory lives: the built-in workloads and a
//! user's command (`--workload`), and the memory placements of `--mem`
//! (docs/methods-compute.md, "rate").

use crate::base::CpuSet;
use crate::experiments::compute::workloads::Cmd;
use crate::kernels::chacha::Variant;
use crate::machine::MachineInfo;
use crate::placement::mempolicy::MemPolicy;
use anyhow::{bail, Result};

/// What each copy runs.
#[derive(Clone, Debug, PartialEq)]
pub enum RateWorkload {
    BcPow(u32),
    BcPi(u32),
    Chacha(Variant),
    Nop,
    /// Seed 002's `arr[i] *= 3` over a private array of this many MiB per copy.
    Mem(u32),
    Command(Cmd),
}

impl RateWorkload {
    /// Stable name used in result keys (`bc_pow_99999`, `chacha_avx2`...).
    pub fn key(&self) -> String {
        match self {
            RateWorkload::BcPow(e) => format!("bc_pow_{e}"),
            RateWorkload::BcPi(s) => format!("bc_pi_{s}"),
            RateWorkload::Chacha(v) => format!("chacha_{}", v.name()),
            RateWorkload::Nop => "nop".into(),
            RateWorkload::Mem(m) => format!("mem_{m}mib"),
            RateWorkload::Command(c) => format!("command:{}", c.display()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            RateWorkload::BcPow(e) => format!("echo \"7^{e}\" | bc (one process per copy)"),
            RateWorkload::BcPi(s) => {
                format!("echo \"scale={s}; 4*a(1)\" | bc -l -q (one process per copy)")
            }
            RateWorkload::Chacha(v) => format!(
                "ChaCha20 {} keystream, a fixed amount per copy (one pinned thread per copy)",
                v.name()
            ),
            RateWorkload::Nop => {
                "seed 000's nop loop, a fixed count per copy (one pinned thread per copy)".into()
            }
            RateWorkload::Mem(m) => format!(
                "seed 002's arr[i] *= 3 over a private {m} MiB i32 array per copy, a fixed number of passes (one pinned thread per copy, its array touched from its CPU)"
            ),
            RateWorkload::Command(c) => format!("`{}` (one process per copy)", c.display()),
        }
    }

    /// Touches enough memory for its placement to matter.
    pub fn uses_memory(&self) -> bool {
        !matches!(self, RateWorkload::Chacha(_) | RateWorkload::Nop)
    }

    pub fn is_process(&self) -> bool {
        matches!(
            self,
            RateWorkload::BcPow(_) | RateWorkload::BcPi(_) | RateWorkload::Command(_)
        )
    }
}

/// Parse `bc-pow[:E]`, `bc-pi[:S]`, `chacha[:VARIANT]`, `nop`.
pub fn parse_workload(s: &str) -> Result<RateWorkload> {
    let t = s.trim();
    let (name, arg) = match t.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (t, None),
    };
    // A number from 1 to `max`; the message names the range, so a number
    // too large is not called "not a positive integer".
    let num = |a: Option<&str>, default: u32, max: u32, what: &str| -> Result<u32> {
        match a {
            None => Ok(default),
            Some(x) => match x.trim().parse::<u64>() {
                Ok(v) if (1..=u64::from(max)).contains(&v) => Ok(v as u32),
                Ok(_) => bail!("bad workload '{s}': {what} must be from 1 to {max}"),
                Err(_) if !x.is_empty() && x.trim().bytes().all(|b| b.is_ascii_digit()) => {
                    bail!("bad workload '{s}': {what} must be from 1 to {max}")
                }
                Err(_) => {
                    bail!("bad workload '{s}': {what} must be a whole number from 1 to {max}")
                }
            },
        }
    };
    Ok(match name {
        "bc-pow" | "bc_pow" => {
            RateWorkload::BcPow(num(arg, 99_999, 100_000_000, "the exponent")?)
        }
        "bc-pi" | "bc_pi" => RateWorkload::BcPi(num(arg, 1000, 1_000_000, "the scale")?),
        "chacha" => {
            let v = match arg {
                None => Variant::Scalar,
                Some(a) => Variant::parse(a).ok_or_else(|| {
                    anyhow::anyhow!(
                        "bad workload '{s}': unknown variant '{a}' (scalar, sse2, avx2, avx512, neon, sve)"
                    )
                })?,
            };
            if let Some(r) = v.unsupported_reason() {
                bail!("workload '{s}': ChaCha20 {} not available: {r}", v.name());
            }
            RateWorkload::Chacha(v)
        }
        "nop" if arg.is_none() => RateWorkload::Nop,
        "mem" => {
            RateWorkload::Mem(num(arg, DEFAULT_MEM_MIB, 65_536, "the array size in MiB per copy")?)
        }
        _ => bail!(
            "unknown workload '{s}' (bc-pow[:EXP], bc-pi[:SCALE], chacha[:VARIANT], nop, mem[:MIB], or -- COMMAND ARGS)"
        ),
    })
}

/// MiB per copy of the `mem` workload by default: well above a core's share
/// of any last-level cache, small enough for one copy per CPU.
pub const DEFAULT_MEM_MIB: u32 = 64;

/// Where each copy's memory goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemPlacement {
    /// On the node of the copy's CPU (first touch from that CPU).
    Local,
    /// Round-robin over every node with memory this process may use
    /// (`numactl --interleave=all`; the BIOS "node interleave" of seed 003).
    Interleave,
    /// All of it on this node (`--membind`; seed 003's "4+0").
    Node(usize),
    /// This node first, others when it is full (`--preferred`).
    Preferred(usize),
}

impl MemPlacement {
    /// `local`, `interleave`, `node:N`, `preferred:N`.
    pub fn parse(s: &str) -> Result<MemPlacement> {
        let t = s.trim();
        let node = |a: &str| -> Result<usize> {
            a.trim()
                .parse::<usize>()
                .map_err(|_| anyhow::anyhow!("bad --mem '{t}': '{a}' is not a node number"))
        };
        Ok(match t.split_once(':') {
            None if t == "local" => MemPlacement::Local,
            None if t == "interleave" => MemPlacement::Interleave,
            Some(("node", a)) => MemPlacement::Node(node(a)?),
            Some(("preferred", a)) => MemPlacement::Preferred(node(a)?),
            _ => bail!("bad --mem '{t}' (local, interleave, node:N or preferred:N)"),
        })
    }

    /// The `mem` param value: `local`, `interleave`, `node:1`, `preferred:1`.
    pub fn label(&self) -> String {
        match self {
            MemPlacement::Local => "local".into(),
            MemPlacement::Interleave => "interleave".into(),
            MemPlacement::Node(n) => format!("node:{n}"),
            MemPlacement::Preferred(n) => format!("preferred:{n}"),
        }
    }

    /// The memory policy on a machine whose usable memory nodes are `nodes`;
    /// None for local (the default policy, pages follow the touching CPU).
    pub fn policy(&self, nodes: &CpuSet) -> Option<MemPolicy> {
        match self {
            MemPlacement::Local => None,
            MemPlacement::Interleave => Some(MemPolicy::Interleave(nodes.clone())),
            MemPlacement::Node(n) => Some(MemPolicy::Bind(CpuSet::from_ids([*n]))),
            MemPlacement::Preferred(n) => Some(MemPolicy::Preferred(*n)),
        }
    }

    pub fn describe(&self, nodes: &CpuSet) -> String {
        match self {
            MemPlacement::Local => {
                "memory local to each copy (default policy, touched from the copy's CPU)".into()
            }
            MemPlacement::Interleave => format!("memory interleaved over nodes {nodes}"),
            MemPlacement::Node(n) => format!("all memory bound to node {n}"),
            MemPlacement::Preferred(n) => format!("memory preferred on node {n}"),
        }
    }

    /// Why this placement is the same as local here, when it is.
    pub fn same_as_local(&self, nodes: &CpuSet) -> Option<String> {
        if nodes.len() != 1 || *self == MemPlacement::Local {
            return None;
        }
        let n = nodes.first().unwrap_or(0);
        Some(format!(
            "one NUMA node with memory ({n}): {} equals local, every page is on node {n}",
            self.label()
        ))
    }
}

/// The nodes with memory this process may allocate from (a node whose size
/// is not known counts: it may have memory).
pub fn mem_nodes(machine: &MachineInfo) -> CpuSet {
    let v: CpuSet = machine
        .numa_nodes
        .iter()
        .filter(|n| n.usable && n.memory_bytes != Some(0))
        .map(|n| n.id)
        .collect();
    if v.is_empty() {
        CpuSet::from_ids([0])
    } else {
        v
    }
}

/// `--mem` values checked against the machine: every node named exists,
/// has memory and is usable by this process.
pub fn mem_from(list: &[String], machine: &MachineInfo) -> Result<Vec<MemPlacement>> {
    let nodes = mem_nodes(machine);
    let mut out: Vec<MemPlacement> = Vec::new();
    for item in list {
        let m = MemPlacement::parse(item)?;
        if let MemPlacement::Node(n) | MemPlacement::Preferred(n) = m {
            if !nodes.contains(n) {
                let exists = machine.numa_nodes.iter().any(|x| x.id == n);
                bail!(
                    "--mem {}: NUMA node {n} {} (nodes with memory this process may use: {nodes})",
                    m.label(),
                    if exists {
                        "has no memory or is not allowed to this process"
                    } else {
                        "does not exist on this machine"
                    }
                );
            }
        }
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

//! The facts no file holds: what the running CPU and kernel answer directly
//! (`uname(2)`'s machine, x86 CPUID's hypervisor vendor leaf, arm64's
//! CTR_EL0 line sizes). Read on the live machine; `record` keeps them in its
//! manifest (`live`), and a recorded root gives them back, marked recorded,
//! so that `info --sysroot node.tar.gz` names the hypervisor as `info` did
//! on the node. Reading is all this file does.

use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// The manifest `record` writes at the root of its archive.
pub const MANIFEST: &str = "cpuscope-record.json";

/// What the running machine answers outside sysfs/procfs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveFacts {
    /// `uname(2)`'s machine field (`x86_64`, `aarch64`).
    pub uname_machine: Option<String>,
    /// CPUID leaf 0x40000000's vendor signature (`KVMKVMKVM`,
    /// `Microsoft Hv`), read only when leaf 1 sets the hypervisor bit; null
    /// on metal and on other architectures.
    pub cpuid_hypervisor_vendor: Option<String>,
    /// The smallest data and instruction cache lines, bytes, from arm64's
    /// CTR_EL0; null elsewhere.
    pub ctr_el0_lines: Option<[u64; 2]>,
}

/// Where a root's [`LiveFacts`] came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    pub facts: LiveFacts,
    /// True when they were read on another machine and kept by `record`.
    pub recorded: bool,
}

impl Facts {
    /// How evidence from these facts is marked: nothing live, " (recorded)"
    /// from an archive.
    pub fn mark(&self) -> &'static str {
        if self.recorded {
            " (recorded)"
        } else {
            ""
        }
    }
}

impl LiveFacts {
    /// Ask this machine.
    pub fn read() -> LiveFacts {
        LiveFacts {
            uname_machine: uname_machine(),
            cpuid_hypervisor_vendor: cpuid_hypervisor_signature(),
            ctr_el0_lines: ctr_el0_lines().map(|(d, i)| [d, i]),
        }
    }
}

/// The manifest's part that holds them (`record`'s `live`).
#[derive(Deserialize)]
struct ManifestLive {
    #[serde(default)]
    live: Option<LiveFacts>,
}

/// The facts of the machine under `sys`: asked now on the live root; on a
/// recorded root, what `record` kept in its manifest ([`MANIFEST`]); None
/// when nothing was kept (an older archive, a copied tree).
pub fn facts(sys: &Sysroot) -> Option<Facts> {
    if sys.is_live() {
        return Some(Facts {
            facts: LiveFacts::read(),
            recorded: false,
        });
    }
    let text = sys.read_raw(MANIFEST)?;
    let m: ManifestLive = serde_json::from_str(&text).ok()?;
    m.live.map(|f| Facts {
        facts: sane(f),
        recorded: true,
    })
}

/// Recorded facts as the live readers could have produced them (an archive
/// is outside input): a machine name of at most 32 letters, digits and `_`,
/// a vendor signature of at most 12 printable ASCII characters, line sizes
/// that are powers of two from 4 to 2048 bytes; anything else is dropped.
fn sane(f: LiveFacts) -> LiveFacts {
    let word = |s: &String| {
        !s.is_empty() && s.len() <= 32 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let sig = |s: &String| s.len() <= 12 && s.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    let line = |b: u64| b.is_power_of_two() && (4..=2048).contains(&b);
    LiveFacts {
        uname_machine: f.uname_machine.filter(word),
        cpuid_hypervisor_vendor: f.cpuid_hypervisor_vendor.filter(sig),
        ctr_el0_lines: f.ctr_el0_lines.filter(|l| l.iter().all(|b| line(*b))),
    }
}

fn uname_machine() -> Option<String> {
    // SAFETY: uname fills a caller-provided struct; zeroed is a valid start.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    // SAFETY: uname(2) NUL-terminates every field it fills.
    let machine = unsafe { std::ffi::CStr::from_ptr(u.machine.as_ptr()) };
    machine
        .to_str()
        .ok()
        .map(str::to_owned)
        .filter(|s| !s.is_empty())
}

/// CPUID leaf 0x40000000 vendor signature on the live x86 machine.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn cpuid_hypervisor_signature() -> Option<String> {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::__cpuid;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::__cpuid;
    // Leaf 1 ECX bit 31: a hypervisor is present. Only then is 0x40000000 defined.
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU and on the x86 CPUs Rust targets.
    let l1 = unsafe { __cpuid(1) };
    if l1.ecx & (1 << 31) == 0 {
        return None;
    }
    #[allow(unused_unsafe)]
    // SAFETY: as above; leaf 0x40000000 is reserved for hypervisors and harmless.
    let r = unsafe { __cpuid(0x4000_0000) };
    let mut bytes = Vec::with_capacity(12);
    for w in [r.ebx, r.ecx, r.edx] {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    let s: String = bytes
        .iter()
        .filter(|b| **b != 0)
        .map(|b| {
            if b.is_ascii_graphic() || *b == b' ' {
                *b as char
            } else {
                '?'
            }
        })
        .collect();
    Some(s)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn cpuid_hypervisor_signature() -> Option<String> {
    None
}

/// The smallest data and instruction cache lines in bytes from the running
/// CPU's Cache Type Register (CTR_EL0: DminLine bits 19:16, IminLine bits
/// 3:0, each log2 of 4-byte words). Linux lets user space read it (it traps
/// and emulates the read where the hardware would not).
#[cfg(target_arch = "aarch64")]
fn ctr_el0_lines() -> Option<(u64, u64)> {
    let ctr: u64;
    // SAFETY: reads a system register EL0 may read; no memory, no flags.
    unsafe {
        core::arch::asm!("mrs {0}, ctr_el0", out(reg) ctr, options(nomem, nostack, preserves_flags));
    }
    Some((4u64 << ((ctr >> 16) & 0xf), 4u64 << (ctr & 0xf)))
}

#[cfg(not(target_arch = "aarch64"))]
fn ctr_el0_lines() -> Option<(u64, u64)> {
    None
}

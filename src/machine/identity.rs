//! Who the CPU is: architecture, vendor, model, family/model/stepping,
//! microcode, ARM MIDR decoding, hypervisor detection, host name, kernel.
//!
//! Everything is read from files under the [`Sysroot`]; on the live root the
//! architecture also comes from `uname(2)` and, on x86, the hypervisor vendor
//! from CPUID leaf 0x40000000.
//!
//! This file also holds the `/proc/cpuinfo` parser ([`CpuInfo`]) and the
//! [`Unavailable`] map (field -> reason) that the other parts of `machine`
//! reuse, so every missing figure carries its reason into the JSON.

use super::live::{facts, Facts};
use crate::base::CpuSet;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Fields that could not be read, each with the reason (`field -> why`).
/// Serialized next to the `null` values so JSON readers see why.
pub type Unavailable = BTreeMap<String, String>;

/// Record that `field` is not available because of `why`.
pub fn unavailable(map: &mut Unavailable, field: &str, why: impl Into<String>) {
    map.insert(field.to_string(), why.into());
}

// ---------------------------------------------------------------------------
// /proc/cpuinfo
// ---------------------------------------------------------------------------

/// `/proc/cpuinfo`, split into per-processor blocks plus the lines that belong
/// to no processor (ARM kernels print `Features`, `CPU implementer`... once,
/// after the processors, on some versions; `Hardware`, `Serial` at the end).
#[derive(Clone, Debug, Default)]
pub struct CpuInfo {
    /// (logical CPU number, its `key: value` lines in order).
    pub processors: Vec<(usize, Vec<(String, String)>)>,
    /// Lines outside any numbered processor block.
    pub global: Vec<(String, String)>,
}

impl CpuInfo {
    /// Parse the text of `/proc/cpuinfo`.
    pub fn parse(text: &str) -> Self {
        let mut info = CpuInfo::default();
        let mut block: Vec<(String, String)> = Vec::new();
        let flush = |block: &mut Vec<(String, String)>, info: &mut CpuInfo| {
            if block.is_empty() {
                return;
            }
            let cpu = block
                .iter()
                .find(|(k, _)| k == "processor")
                .and_then(|(_, v)| v.parse::<usize>().ok());
            match cpu {
                Some(n) => {
                    // Lines before `processor` in the same block that are not
                    // per-CPU (old ARM: "Processor : ARMv7 ...") stay global too.
                    info.processors.push((n, std::mem::take(block)));
                }
                None => info.global.append(block),
            }
        };
        for line in text.lines() {
            if line.trim().is_empty() {
                flush(&mut block, &mut info);
                continue;
            }
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let key = k.trim().to_string();
            let val = v.trim().to_string();
            // A second `processor` line inside one block starts a new block
            // (seen on old ARM kernels that print no blank line between).
            if key == "processor" && block.iter().any(|(k, _)| k == "processor") {
                flush(&mut block, &mut info);
            }
            block.push((key, val));
        }
        flush(&mut block, &mut info);
        info
    }

    /// Read and parse `/proc/cpuinfo` under the root.
    pub fn read(sys: &Sysroot) -> Option<Self> {
        let text = sys.read_raw("/proc/cpuinfo")?;
        let info = Self::parse(&text);
        if info.processors.is_empty() && info.global.is_empty() {
            None
        } else {
            Some(info)
        }
    }

    /// Value of `key` for logical CPU `cpu`, falling back to the global lines.
    pub fn get(&self, cpu: usize, key: &str) -> Option<&str> {
        self.processors
            .iter()
            .find(|(n, _)| *n == cpu)
            .and_then(|(_, kv)| kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()))
            .or_else(|| self.global_get(key))
    }

    /// Value of `key` in the first processor block that has it, else global.
    pub fn first(&self, key: &str) -> Option<&str> {
        self.processors
            .iter()
            .find_map(|(_, kv)| kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()))
            .or_else(|| self.global_get(key))
    }

    /// Value of `key` among the lines that belong to no processor.
    pub fn global_get(&self, key: &str) -> Option<&str> {
        self.global
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `(cpu, value)` of `key` for every processor that has it (or the global value).
    pub fn per_cpu(&self, key: &str) -> Vec<(usize, &str)> {
        self.processors
            .iter()
            .filter_map(|(n, _)| self.get(*n, key).map(|v| (*n, v)))
            .collect()
    }

    /// Logical CPU numbers listed.
    pub fn cpus(&self) -> Vec<usize> {
        self.processors.iter().map(|(n, _)| *n).collect()
    }

    /// True when the text has the x86 shape (`vendor_id`, `flags`).
    pub fn looks_x86(&self) -> bool {
        self.first("vendor_id").is_some() || self.first("flags").is_some()
    }

    /// True when the text has the ARM shape (`CPU implementer`, `Features`).
    pub fn looks_arm(&self) -> bool {
        self.first("CPU implementer").is_some() || self.first("Features").is_some()
    }
}

/// Parse a number written in decimal or `0x` hex.
pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

// ---------------------------------------------------------------------------
// ARM MIDR decoding
// ---------------------------------------------------------------------------

/// The fields of an ARM Main ID Register (MIDR_EL1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Midr {
    pub implementer: u32,
    pub variant: u32,
    pub architecture: u32,
    pub part: u32,
    pub revision: u32,
}

impl Midr {
    /// Split a raw MIDR value into its fields.
    pub fn decode(raw: u64) -> Self {
        let raw = raw as u32;
        Midr {
            implementer: (raw >> 24) & 0xff,
            variant: (raw >> 20) & 0xf,
            architecture: (raw >> 16) & 0xf,
            part: (raw >> 4) & 0xfff,
            revision: raw & 0xf,
        }
    }

    /// Reassemble the 32-bit register value.
    pub fn raw(&self) -> u32 {
        (self.implementer << 24)
            | (self.variant << 20)
            | (self.architecture << 16)
            | (self.part << 4)
            | self.revision
    }

    /// ARM's usual `rNpM` stepping notation (variant, revision).
    pub fn stepping(&self) -> String {
        format!("r{}p{}", self.variant, self.revision)
    }
}

/// Name of an ARM implementer code (MIDR bits 31:24).
pub fn arm_implementer_name(id: u32) -> Option<&'static str> {
    Some(match id {
        // Reserved for software use (Arm ARM, MIDR_EL1): QEMU's `max` CPU.
        0x00 => "software-defined",
        0x41 => "ARM",
        0x42 => "Broadcom",
        0x43 => "Cavium (Marvell)",
        0x44 => "DEC",
        0x46 => "Fujitsu",
        0x48 => "HiSilicon",
        0x49 => "Infineon",
        0x4d => "Motorola/Freescale",
        0x4e => "NVIDIA",
        0x50 => "APM",
        0x51 => "Qualcomm",
        0x53 => "Samsung",
        0x56 => "Marvell",
        0x61 => "Apple",
        0x66 => "Faraday",
        0x69 => "Intel",
        0x6d => "Microsoft",
        0x70 => "Phytium",
        0xc0 => "Ampere",
        _ => return None,
    })
}

/// The project's table of ARM parts: (implementer, part, name).
/// Sources consulted: the Linux kernel's arch/arm64/include/asm/cputype.h,
/// util-linux lscpu-arm.c, Phytium's kernel drivers (FTC66x core names).
const ARM_PARTS: &[(u32, u32, &str)] = &[
    // Implementer 0 is reserved for software: QEMU's `-cpu max` sets part
    // 'Q' (0x51) there (target/arm/cpu64.c, aarch64_max_initfn), an emulated
    // CPU with every feature QEMU implements, not a product.
    (0x00, 0x051, "QEMU max (emulated)"),
    // ARM Ltd
    (0x41, 0xc05, "Cortex-A5"),
    (0x41, 0xc07, "Cortex-A7"),
    (0x41, 0xc08, "Cortex-A8"),
    (0x41, 0xc09, "Cortex-A9"),
    (0x41, 0xc0d, "Cortex-A17"),
    (0x41, 0xc0e, "Cortex-A17"),
    (0x41, 0xc0f, "Cortex-A15"),
    (0x41, 0xd02, "Cortex-A34"),
    (0x41, 0xd03, "Cortex-A53"),
    (0x41, 0xd04, "Cortex-A35"),
    (0x41, 0xd05, "Cortex-A55"),
    (0x41, 0xd06, "Cortex-A65"),
    (0x41, 0xd07, "Cortex-A57"),
    (0x41, 0xd08, "Cortex-A72"),
    (0x41, 0xd09, "Cortex-A73"),
    (0x41, 0xd0a, "Cortex-A75"),
    (0x41, 0xd0b, "Cortex-A76"),
    (0x41, 0xd0c, "Neoverse-N1"),
    (0x41, 0xd0d, "Cortex-A77"),
    (0x41, 0xd0e, "Cortex-A76AE"),
    (0x41, 0xd40, "Neoverse-V1"),
    (0x41, 0xd41, "Cortex-A78"),
    (0x41, 0xd42, "Cortex-A78AE"),
    (0x41, 0xd43, "Cortex-A65AE"),
    (0x41, 0xd44, "Cortex-X1"),
    (0x41, 0xd46, "Cortex-A510"),
    (0x41, 0xd47, "Cortex-A710"),
    (0x41, 0xd48, "Cortex-X2"),
    (0x41, 0xd49, "Neoverse-N2"),
    (0x41, 0xd4a, "Neoverse-E1"),
    (0x41, 0xd4b, "Cortex-A78C"),
    (0x41, 0xd4c, "Cortex-X1C"),
    (0x41, 0xd4d, "Cortex-A715"),
    (0x41, 0xd4e, "Cortex-X3"),
    (0x41, 0xd4f, "Neoverse-V2"),
    (0x41, 0xd80, "Cortex-A520"),
    (0x41, 0xd81, "Cortex-A720"),
    (0x41, 0xd82, "Cortex-X4"),
    (0x41, 0xd83, "Neoverse-V3AE"),
    (0x41, 0xd84, "Neoverse-V3"),
    (0x41, 0xd85, "Cortex-X925"),
    (0x41, 0xd87, "Cortex-A725"),
    (0x41, 0xd8e, "Neoverse-N3"),
    // Broadcom
    (0x42, 0x00f, "Brahma-B15"),
    (0x42, 0x100, "Brahma-B53"),
    (0x42, 0x516, "ThunderX2 (Vulcan)"),
    // Cavium
    (0x43, 0x0a0, "ThunderX"),
    (0x43, 0x0a1, "ThunderX 88xx"),
    (0x43, 0x0a2, "ThunderX 81xx"),
    (0x43, 0x0a3, "ThunderX 83xx"),
    (0x43, 0x0af, "ThunderX2 99xx"),
    (0x43, 0x0b8, "ThunderX3 T110"),
    // Fujitsu
    (0x46, 0x001, "A64FX"),
    // HiSilicon
    (0x48, 0xd01, "Kunpeng 920 (TaiShan v110)"),
    (0x48, 0xd02, "TaiShan v120"),
    // NVIDIA
    (0x4e, 0x000, "Denver"),
    (0x4e, 0x003, "Denver 2"),
    (0x4e, 0x004, "Carmel"),
    (0x4e, 0x010, "Olympus"),
    // APM
    (0x50, 0x000, "X-Gene"),
    // Qualcomm
    (0x51, 0x800, "Falkor V1/Kryo"),
    (0x51, 0x801, "Kryo V2"),
    (0x51, 0x802, "Kryo 3xx Gold"),
    (0x51, 0x803, "Kryo 3xx Silver"),
    (0x51, 0x804, "Kryo 4xx Gold"),
    (0x51, 0x805, "Kryo 4xx Silver"),
    (0x51, 0xc00, "Falkor"),
    (0x51, 0xc01, "Saphira"),
    // Samsung
    (0x53, 0x001, "Exynos M1"),
    (0x53, 0x002, "Exynos M3"),
    // Marvell
    (0x56, 0x131, "Feroceon 88FR131"),
    (0x56, 0x581, "PJ4/PJ4b"),
    (0x56, 0x584, "PJ4B-MP"),
    // Apple
    (0x61, 0x022, "Icestorm (M1)"),
    (0x61, 0x023, "Firestorm (M1)"),
    (0x61, 0x024, "Icestorm (M1 Pro)"),
    (0x61, 0x025, "Firestorm (M1 Pro)"),
    (0x61, 0x028, "Icestorm (M1 Max)"),
    (0x61, 0x029, "Firestorm (M1 Max)"),
    (0x61, 0x032, "Blizzard (M2)"),
    (0x61, 0x033, "Avalanche (M2)"),
    // Microsoft
    (0x6d, 0xd49, "Azure Cobalt 100"),
    // Phytium: core names; the chips each core is found in are Phytium's
    // public product lines (FTC662: FT-2000+/64; FTC663: FT-2500/S2500,
    // FT-2000/4, D2000 -- the FT-2500 of the seed reports part 0x663 rev 3).
    (0x70, 0x303, "FTC310"),
    (0x70, 0x660, "FTC660 (FT-1500A)"),
    (0x70, 0x661, "FTC661 (FT-2000A)"),
    (0x70, 0x662, "FTC662 (FT-2000+/64)"),
    (0x70, 0x663, "FTC663 (FT-2500/S2500, FT-2000/4, D2000)"),
    (0x70, 0x664, "FTC664"),
    (0x70, 0x862, "FTC862"),
    // Ampere (Altra/Altra Max report ARM 0xd0c Neoverse-N1)
    (0xc0, 0xac3, "AmpereOne"),
    (0xc0, 0xac4, "AmpereOne A"),
];

/// Name of an ARM part, from the project's table.
pub fn arm_part_name(implementer: u32, part: u32) -> Option<&'static str> {
    ARM_PARTS
        .iter()
        .find(|(i, p, _)| *i == implementer && *p == part)
        .map(|(_, _, n)| *n)
}

/// One kind of ARM core present (big.LITTLE machines have several).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ArmCore {
    /// The register as read (`0x00000000481fd010`), when read from sysfs.
    pub midr_raw: Option<String>,
    /// The 32-bit value, `0x481fd010`.
    pub midr: String,
    pub implementer: u32,
    pub implementer_hex: String,
    pub implementer_name: Option<String>,
    pub variant: u32,
    pub architecture: u32,
    pub part: u32,
    pub part_hex: String,
    /// From the project's table; null when the part is not in it.
    pub part_name: Option<String>,
    pub revision: u32,
    /// `rNpM`.
    pub stepping: String,
    /// CPUs with this MIDR.
    pub cpus: CpuSet,
    /// Where it was read: `sysfs midr_el1` or `/proc/cpuinfo`.
    pub source: String,
}

impl ArmCore {
    fn new(m: Midr, raw: Option<String>, cpus: CpuSet, source: &str) -> Self {
        ArmCore {
            midr_raw: raw,
            midr: format!("{:#010x}", m.raw()),
            implementer: m.implementer,
            implementer_hex: format!("{:#04x}", m.implementer),
            implementer_name: arm_implementer_name(m.implementer).map(str::to_string),
            variant: m.variant,
            architecture: m.architecture,
            part: m.part,
            part_hex: format!("{:#05x}", m.part),
            part_name: arm_part_name(m.implementer, m.part).map(str::to_string),
            revision: m.revision,
            stepping: m.stepping(),
            cpus,
            source: source.to_string(),
        }
    }

    /// "HiSilicon Kunpeng 920 (TaiShan v110)" or "implementer 0x48 part 0xd01".
    pub fn display_name(&self) -> String {
        let vendor = self
            .implementer_name
            .clone()
            .unwrap_or_else(|| format!("implementer {}", self.implementer_hex));
        match &self.part_name {
            // Implementer 0 is no vendor: the part names itself.
            Some(p) if self.implementer == 0 => p.clone(),
            Some(p) => format!("{vendor} {p}"),
            None => format!("{vendor} part {} (not in the part table)", self.part_hex),
        }
    }
}

/// Read every CPU's MIDR: sysfs `cpuN/regs/identification/midr_el1`, else
/// `/proc/cpuinfo` `CPU implementer/variant/part/revision`. Grouped by value.
pub fn read_arm_cores(sys: &Sysroot, cpuinfo: Option<&CpuInfo>) -> Vec<ArmCore> {
    type Group = (Midr, Option<String>, CpuSet, &'static str);
    let mut groups: Vec<Group> = Vec::new();
    fn add(groups: &mut Vec<Group>, m: Midr, raw: Option<String>, cpu: usize, src: &'static str) {
        if let Some(g) = groups.iter_mut().find(|g| g.0 == m) {
            g.2.insert(cpu);
        } else {
            groups.push((m, raw, CpuSet::from_ids([cpu]), src));
        }
    }
    for cpu in sys.list_numbered("/sys/devices/system/cpu", "cpu") {
        let p = format!("/sys/devices/system/cpu/cpu{cpu}/regs/identification/midr_el1");
        if let Some(raw) = sys.read_string(&p) {
            if let Some(v) = parse_num(&raw) {
                add(
                    &mut groups,
                    Midr::decode(v),
                    Some(raw),
                    cpu,
                    "sysfs regs/identification/midr_el1",
                );
            }
        }
    }
    if groups.is_empty() {
        if let Some(ci) = cpuinfo {
            let mut cpus = ci.cpus();
            if cpus.is_empty() && ci.global_get("CPU implementer").is_some() {
                cpus.push(0);
            }
            for cpu in cpus {
                let f = |k: &str| ci.get(cpu, k).and_then(parse_num);
                let (Some(imp), Some(part)) = (f("CPU implementer"), f("CPU part")) else {
                    continue;
                };
                let arch = ci
                    .get(cpu, "CPU architecture")
                    .and_then(|a| a.split_whitespace().next())
                    .and_then(parse_num)
                    .unwrap_or(0);
                // MIDR's architecture field reads 0xf ("see ID registers") on
                // ARMv7 and later; cpuinfo prints the architecture version.
                let arch_field = if arch >= 7 { 0xf } else { arch };
                let m = Midr {
                    implementer: imp as u32,
                    variant: f("CPU variant").unwrap_or(0) as u32,
                    architecture: arch_field as u32,
                    part: part as u32,
                    revision: f("CPU revision").unwrap_or(0) as u32,
                };
                add(
                    &mut groups,
                    m,
                    None,
                    cpu,
                    "/proc/cpuinfo CPU implementer/part",
                );
            }
        }
    }
    groups
        .into_iter()
        .map(|(m, raw, cpus, src)| ArmCore::new(m, raw, cpus, src))
        .collect()
}

// ---------------------------------------------------------------------------
// Hypervisor
// ---------------------------------------------------------------------------

/// Whether this runs in a virtual machine, and the evidence.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Virtualization {
    /// true: a VM; false: no sign of one where the sign is reliable (x86
    /// hypervisor bit); null: cannot tell (see `reason`).
    pub is_virtual: Option<bool>,
    /// Hypervisor name when known: KVM, Xen, VMware, Microsoft Hyper-V...
    pub hypervisor: Option<String>,
    /// Each fact that was read, e.g. `cpuinfo flag 'hypervisor'`.
    pub evidence: Vec<String>,
    pub reason: Option<String>,
}

/// Name of a CPUID 0x40000000 hypervisor vendor signature.
pub fn hypervisor_from_cpuid_vendor(sig: &str) -> Option<&'static str> {
    let s = sig.trim_matches(char::from(0)).trim();
    Some(match s {
        "KVMKVMKVM" => "KVM",
        "Microsoft Hv" => "Microsoft Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU (TCG emulation)",
        "ACRNACRNACRN" => "ACRN",
        "bhyve bhyve" => "bhyve",
        "lrpepyh  vr" | "prl hyperv" => "Parallels",
        "QNXQVMBSQG" => "QNX",
        "VBoxVBoxVBox" => "VirtualBox",
        "Jailhouse" => "Jailhouse",
        _ => return None,
    })
}

/// Hypervisor suggested by DMI vendor/product strings.
fn hypervisor_from_dmi(vendor: &str, product: &str) -> Option<&'static str> {
    let v = vendor.to_ascii_lowercase();
    let p = product.to_ascii_lowercase();
    if p.contains("kvm") || (v.contains("qemu") && !p.contains("metal")) {
        Some("KVM/QEMU")
    } else if p.contains("vmware") || v.contains("vmware") {
        Some("VMware")
    } else if p.contains("virtualbox") {
        Some("VirtualBox")
    } else if p == "virtual machine" && v.contains("microsoft") {
        Some("Microsoft Hyper-V")
    } else if p.contains("hvm domu") || v == "xen" {
        Some("Xen")
    } else if v.contains("bochs") {
        Some("Bochs/QEMU")
    } else {
        None
    }
}

/// The device tree's signs of a hypervisor (ARM guests), recorded in `v`;
/// `name` is set when still unknown. True when there is one.
fn device_tree_signs(sys: &Sysroot, v: &mut Virtualization, name: &mut Option<String>) -> bool {
    let mut positive = false;
    // Device-tree guests (ARM): /proc/device-tree/hypervisor/compatible ("xen,xen", "linux,kvm").
    if let Some(c) = sys.read_string("/proc/device-tree/hypervisor/compatible") {
        let c = c.replace('\0', " ").trim().to_string();
        if !c.is_empty() {
            v.evidence
                .push(format!("device-tree hypervisor compatible '{c}'"));
            positive = true;
            if name.is_none() {
                let lc = c.to_ascii_lowercase();
                *name = Some(if lc.contains("xen") {
                    "Xen".to_string()
                } else if lc.contains("kvm") {
                    "KVM".to_string()
                } else {
                    c
                });
            }
        }
    }
    // QEMU's `virt` board names itself in the device tree's root
    // compatible ("linux,dummy-virt"), under KVM and under emulation (TCG)
    // alike; no physical board uses that string.
    if let Some(c) = sys.read_string("/proc/device-tree/compatible") {
        let c = c.replace('\0', " ").trim().to_string();
        if c.split_whitespace().any(|x| x == "linux,dummy-virt") {
            v.evidence
                .push(format!("device-tree root compatible '{c}'"));
            positive = true;
            if name.is_none() {
                *name = Some("QEMU virt board (KVM or emulated)".into());
            }
        }
    }
    positive
}

fn detect_virtualization(
    sys: &Sysroot,
    cpuinfo: Option<&CpuInfo>,
    arch: &str,
    live: Option<&Facts>,
) -> Virtualization {
    let mut v = Virtualization::default();
    let mut name: Option<String> = None;
    let mut positive = false;
    let x86_flags = cpuinfo.and_then(|c| c.first("flags"));
    if let Some(flags) = x86_flags {
        if flags.split_whitespace().any(|f| f == "hypervisor") {
            v.evidence.push("cpuinfo flag 'hypervisor'".into());
            positive = true;
        }
    }
    let cpuid = live.filter(|_| arch.starts_with("x86")).and_then(|f| {
        f.facts
            .cpuid_hypervisor_vendor
            .clone()
            .map(|sig| (sig, f.mark()))
    });
    if let Some((sig, mark)) = cpuid {
        v.evidence
            .push(format!("cpuid 0x40000000 vendor '{sig}'{mark}"));
        positive = true;
        name = hypervisor_from_cpuid_vendor(&sig)
            .map(str::to_string)
            .or(Some(sig));
    }
    if let Some(t) = sys.read_string("/sys/hypervisor/type") {
        if !t.is_empty() {
            v.evidence.push(format!("/sys/hypervisor/type = {t}"));
            positive = true;
            if name.is_none() {
                name = Some(if t == "xen" { "Xen".into() } else { t });
            }
        }
    }
    if device_tree_signs(sys, &mut v, &mut name) {
        positive = true;
    }
    let dmi_vendor = sys.read_string("/sys/class/dmi/id/sys_vendor");
    let dmi_product = sys.read_string("/sys/class/dmi/id/product_name");
    if dmi_vendor.is_some() || dmi_product.is_some() {
        let vd = dmi_vendor.clone().unwrap_or_default();
        let pd = dmi_product.clone().unwrap_or_default();
        if let Some(h) = hypervisor_from_dmi(&vd, &pd) {
            v.evidence
                .push(format!("DMI sys_vendor '{vd}', product_name '{pd}'"));
            positive = true;
            if name.is_none() {
                name = Some(h.to_string());
            }
        }
    }
    if positive {
        v.is_virtual = Some(true);
        v.hypervisor = name;
        if v.hypervisor.is_none() {
            v.reason = Some("the hypervisor does not identify itself in the files read".into());
        }
    } else if x86_flags.is_some() {
        v.is_virtual = Some(false);
        v.evidence.push("no 'hypervisor' flag in cpuinfo".into());
    } else {
        v.is_virtual = None;
        v.reason = Some(
            "cannot tell: no hypervisor CPU flag on this architecture, no DMI or \
             /sys/hypervisor evidence"
                .into(),
        );
    }
    v
}

// ---------------------------------------------------------------------------
// Identity
// ---------------------------------------------------------------------------

/// Who the CPU is.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Identity {
    /// `x86_64`, `aarch64`, `arm`, or `unknown`.
    pub architecture: String,
    /// How the architecture was found: `uname` or `/proc/cpuinfo shape`.
    pub architecture_source: String,
    /// Vendor string as the kernel gives it (`GenuineIntel`, `HygonGenuine`)
    /// or the ARM implementer name (`HiSilicon`).
    pub vendor: Option<String>,
    /// Short vendor name: Intel, AMD, Hygon, Zhaoxin, HiSilicon, Phytium...
    pub vendor_name: Option<String>,
    /// Model name as printed by the kernel, or decoded from the MIDR on ARM.
    pub model_name: Option<String>,
    /// `/proc/cpuinfo model name` or `MIDR part table`.
    pub model_name_source: Option<String>,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    /// Microcode revision as the kernel prints it.
    pub microcode: Option<String>,
    /// ARM: each distinct MIDR with its CPUs (raw ids kept).
    pub arm_cores: Vec<ArmCore>,
    pub virtualization: Virtualization,
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    /// Fields that are null, with the reason.
    pub unavailable: Unavailable,
}

impl Identity {
    pub fn is_x86(&self) -> bool {
        self.architecture.starts_with("x86") || self.architecture == "i686"
    }
    pub fn is_arm(&self) -> bool {
        self.architecture == "aarch64" || self.architecture.starts_with("arm")
    }
}

fn x86_vendor_name(v: &str) -> Option<&'static str> {
    Some(match v {
        "GenuineIntel" => "Intel",
        "AuthenticAMD" => "AMD",
        "HygonGenuine" => "Hygon",
        "CentaurHauls" | "Shanghai" => "Zhaoxin/Centaur",
        "GenuineTMx86" => "Transmeta",
        _ => return None,
    })
}

/// Read the identity of the machine under `sys`.
pub fn read(sys: &Sysroot) -> Identity {
    let mut id = Identity::default();
    let cpuinfo = CpuInfo::read(sys);
    let ci = cpuinfo.as_ref();
    // What the machine answers outside its files: asked (or the manifest
    // parsed) once for the architecture and the hypervisor.
    let live = facts(sys);
    read_architecture(&mut id, sys, ci, live.as_ref());
    if ci.is_none() {
        unavailable(
            &mut id.unavailable,
            "cpuinfo",
            "/proc/cpuinfo is missing or unreadable",
        );
    }
    if id.is_x86() || ci.is_some_and(|c| c.looks_x86()) {
        read_x86(&mut id, ci);
    } else {
        read_arm(&mut id, sys, ci);
    }
    if id.model_name.is_none() && !id.unavailable.contains_key("model_name") {
        unavailable(
            &mut id.unavailable,
            "model_name",
            "no 'model name' in /proc/cpuinfo and no decodable MIDR",
        );
    }
    if id.vendor.is_none() && !id.unavailable.contains_key("vendor") {
        unavailable(
            &mut id.unavailable,
            "vendor",
            "no vendor_id or MIDR implementer found",
        );
    }

    // Microcode: cpuinfo, else sysfs.
    if id.microcode.is_none() {
        id.microcode = sys.read_string("/sys/devices/system/cpu/cpu0/microcode/version");
    }
    if id.microcode.is_none() {
        let is_arm = id.is_arm();
        unavailable(
            &mut id.unavailable,
            "microcode",
            if is_arm {
                "ARM kernels do not expose a microcode revision"
            } else {
                "no 'microcode' in /proc/cpuinfo and no sysfs cpu0/microcode/version"
            },
        );
    }

    id.virtualization = detect_virtualization(sys, ci, &id.architecture, live.as_ref());

    id.hostname = sys.read_string("/proc/sys/kernel/hostname");
    if id.hostname.is_none() {
        unavailable(
            &mut id.unavailable,
            "hostname",
            "proc/sys/kernel/hostname not under this root",
        );
    }
    id.kernel_release = sys.read_string("/proc/sys/kernel/osrelease");
    if id.kernel_release.is_none() {
        unavailable(
            &mut id.unavailable,
            "kernel_release",
            "proc/sys/kernel/osrelease not under this root",
        );
    }
    id
}

/// The architecture: uname on the live machine, else the shape of the files.
fn read_architecture(id: &mut Identity, sys: &Sysroot, ci: Option<&CpuInfo>, live: Option<&Facts>) {
    let midr_file = sys.exists("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
    let from_files = if midr_file {
        Some("aarch64")
    } else if let Some(c) = ci {
        if c.looks_x86() {
            Some("x86_64")
        } else if c.looks_arm() {
            let arch = c
                .first("CPU architecture")
                .and_then(|a| a.split_whitespace().next())
                .and_then(parse_num)
                .unwrap_or(0);
            Some(if arch >= 8 { "aarch64" } else { "arm" })
        } else {
            None
        }
    } else {
        None
    };
    let live = live.and_then(|f| f.facts.uname_machine.clone().map(|m| (m, f.mark())));
    match (&live, from_files) {
        (Some((m, mark)), _) => {
            id.architecture = m.clone();
            id.architecture_source = format!("uname{mark}");
        }
        (None, Some(a)) => {
            id.architecture = a.to_string();
            id.architecture_source = if midr_file {
                "sysfs midr_el1".into()
            } else {
                "/proc/cpuinfo shape".into()
            };
        }
        (None, None) => {
            id.architecture = "unknown".into();
            id.architecture_source = "none".into();
            unavailable(
                &mut id.unavailable,
                "architecture",
                "no /proc/cpuinfo and no sysfs MIDR under this root",
            );
        }
    }
}

/// Vendor, model name, family/model/stepping and microcode from an x86 /proc/cpuinfo.
fn read_x86(id: &mut Identity, ci: Option<&CpuInfo>) {
    if let Some(c) = ci {
        id.vendor = c.first("vendor_id").map(str::to_string);
        id.vendor_name = id
            .vendor
            .as_deref()
            .and_then(x86_vendor_name)
            .map(str::to_string)
            .or_else(|| id.vendor.clone());
        id.model_name = c.first("model name").map(str::to_string);
        if id.model_name.is_some() {
            id.model_name_source = Some("/proc/cpuinfo model name".into());
        }
        id.family = c.first("cpu family").and_then(|v| v.parse().ok());
        id.model = c.first("model").and_then(|v| v.parse().ok());
        id.stepping = c.first("stepping").and_then(|v| v.parse().ok());
        id.microcode = c.first("microcode").map(str::to_string);
    }
}

/// The ARM cores by MIDR, and the vendor and model name they give.
fn read_arm(id: &mut Identity, sys: &Sysroot, ci: Option<&CpuInfo>) {
    id.arm_cores = read_arm_cores(sys, ci);
    if let Some(core) = id.arm_cores.first() {
        id.vendor = core.implementer_name.clone();
        id.vendor_name = core.implementer_name.clone();
        if id.vendor.is_none() {
            unavailable(
                &mut id.unavailable,
                "vendor",
                format!("implementer {} is not in the table", core.implementer_hex),
            );
        }
    } else if id.is_arm() {
        unavailable(
            &mut id.unavailable,
            "arm_cores",
            "no sysfs midr_el1 and no 'CPU implementer' in /proc/cpuinfo",
        );
    }
    // Some ARM kernels print "model name" (ARMv7) or "Processor"; prefer
    // the MIDR decode, it names the core.
    let names: Vec<String> = id.arm_cores.iter().map(ArmCore::display_name).collect();
    if !names.is_empty() {
        id.model_name = Some(names.join(" + "));
        id.model_name_source = Some("MIDR part table".into());
    } else if let Some(c) = ci {
        if let Some(m) = c.first("model name").or_else(|| c.first("Processor")) {
            id.model_name = Some(m.to_string());
            id.model_name_source = Some("/proc/cpuinfo".into());
        }
    }
    if id.is_arm() {
        unavailable(
            &mut id.unavailable,
            "family",
            "ARM has no family/model/stepping; see arm_cores (MIDR)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midr_kunpeng() {
        let m = Midr::decode(0x481fd010);
        assert_eq!(m.implementer, 0x48);
        assert_eq!(m.part, 0xd01);
        assert_eq!(m.variant, 1);
        assert_eq!(m.revision, 0);
        assert_eq!(m.raw(), 0x481fd010);
        assert!(arm_part_name(0x48, 0xd01).unwrap().contains("Kunpeng 920"));
    }

    #[test]
    fn midr_qemu_max() {
        // QEMU's -cpu max (the ARM lab's SVE guest): implementer 0 is
        // reserved for software, part 'Q'.
        let m = Midr::decode(0x000f0510);
        assert_eq!((m.implementer, m.part), (0, 0x051));
        assert_eq!(arm_part_name(0, 0x051), Some("QEMU max (emulated)"));
    }

    #[test]
    fn midr_phytium() {
        let m = Midr::decode(0x701f6633);
        assert_eq!((m.implementer, m.part, m.revision), (0x70, 0x663, 3));
        assert!(arm_part_name(0x70, 0x663).unwrap().starts_with("FTC663"));
    }

    #[test]
    fn cpuinfo_old_arm_layout() {
        let t = "Processor\t: ARMv7 Processor rev 1 (v7l)\nprocessor\t: 0\nBogoMIPS\t: 1\n\n\
                 processor\t: 1\nBogoMIPS\t: 1\n\nFeatures\t: neon\nCPU implementer\t: 0x41\n\
                 CPU architecture: 7\nCPU part\t: 0xc09\n";
        let c = CpuInfo::parse(t);
        assert_eq!(c.cpus(), vec![0, 1]);
        assert_eq!(c.get(1, "CPU part"), Some("0xc09"));
        assert_eq!(c.first("Features"), Some("neon"));
    }

    #[test]
    fn cpuid_signatures() {
        assert_eq!(hypervisor_from_cpuid_vendor("KVMKVMKVM\0\0\0"), Some("KVM"));
        assert_eq!(
            hypervisor_from_cpuid_vendor("Microsoft Hv"),
            Some("Microsoft Hyper-V")
        );
        assert_eq!(hypervisor_from_cpuid_vendor("nothing"), None);
    }
}

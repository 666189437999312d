//! Text sections of `cpuscope info` for identity, ISA, frequency, knobs, devices.

use crate::machine::MachineInfo;

/// Identity section (architecture, vendor, model, MIDR, microcode, hypervisor).
pub fn identity(info: &MachineInfo) -> String {
    let _ = info;
    String::new()
}

/// ISA / SIMD section.
pub fn isa(info: &MachineInfo) -> String {
    let _ = info;
    String::new()
}

/// Frequency section.
pub fn frequency(info: &MachineInfo) -> String {
    let _ = info;
    String::new()
}

/// Kernel knobs section.
pub fn knobs(info: &MachineInfo) -> String {
    let _ = info;
    String::new()
}

/// Devices (NICs and IRQs) section.
pub fn devices(info: &MachineInfo) -> String {
    let _ = info;
    String::new()
}

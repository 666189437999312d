//! The measured loops, and nothing else: no I/O, no printing, no allocation.
//! Each kernel returns a value derived from its work so the compiler cannot
//! remove it, and the caller passes it through `black_box`.

pub mod c2c;
pub mod chacha;
pub mod chains;
pub mod cpu_loops;
pub mod fma;
pub mod memory;
pub mod sync;

/// The SVE vector length of the running thread in bits (Linux
/// `prctl(PR_SVE_GET_VL)`), or None when the CPU has no SVE (or this is
/// not aarch64). Read once: a process's length does not change unless it
/// asks (cpuscope never does).
pub fn sve_vector_bits() -> Option<u32> {
    static VL: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *VL.get_or_init(read_sve_vector_bits)
}

#[cfg(target_arch = "aarch64")]
fn read_sve_vector_bits() -> Option<u32> {
    /// `PR_SVE_GET_VL` from linux/prctl.h; the length in bytes is in the low 16 bits.
    const PR_SVE_GET_VL: libc::c_int = 51;
    const PR_SVE_VL_LEN_MASK: libc::c_int = 0xffff;
    if !std::arch::is_aarch64_feature_detected!("sve") {
        return None;
    }
    // SAFETY: PR_SVE_GET_VL takes no pointer arguments.
    let r = unsafe { libc::prctl(PR_SVE_GET_VL, 0, 0, 0, 0) };
    (r > 0).then(|| ((r & PR_SVE_VL_LEN_MASK) as u32) * 8)
}

#[cfg(not(target_arch = "aarch64"))]
fn read_sve_vector_bits() -> Option<u32> {
    None
}

/// Why the SVE kernels cannot run here (None when they can).
pub fn sve_unsupported_reason() -> Option<String> {
    if cfg!(not(target_arch = "aarch64")) {
        return Some(format!(
            "SVE is an aarch64 instruction set; this is {}",
            std::env::consts::ARCH
        ));
    }
    match sve_vector_bits() {
        Some(_) => None,
        None => Some("the CPU does not report SVE (no sve in HWCAP)".into()),
    }
}

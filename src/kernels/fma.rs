//! Peak floating-point kernels: chains of fused multiply-adds (FP64), one
//! kernel per SIMD width, with enough independent accumulators to cover the
//! FMA latency times the number of FMA units (latency 4 × 2 units = 8 on
//! current x86 and Arm server cores; the kernels use 12 or 24).
//!
//! On aarch64 the widths are scalar (`fmadd d`), NEON 128-bit (`fmla v.2d`)
//! and SVE at the CPU's own vector length (`fmla z.d`, predicated, all lanes
//! active), in inline assembly: SVE intrinsics are not stable in Rust.
//!
//! Each iteration of a kernel issues `accumulators` FMAs on `lanes` FP64
//! lanes: FLOPs per iteration = 2 × lanes × accumulators. The instructions
//! are written in `asm!` so the compiler can neither fuse, reorder nor drop
//! them; registers are zeroed first and only the multiplier/addend inputs
//! are read, so no denormals or overflow occur.

/// One FMA width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Width {
    /// Scalar FP64 FMA (`vfmadd231sd` / `fmadd d`).
    Scalar,
    /// 128-bit vectors (`vfmadd231pd xmm` / NEON `fmla v.2d`).
    V128,
    /// 256-bit vectors (`vfmadd231pd ymm`, AVX2+FMA).
    V256,
    /// 512-bit vectors (`vfmadd231pd zmm`, AVX-512F).
    V512,
    /// SVE at the running CPU's vector length (`fmla z.d`, predicated;
    /// 128 to 2048 bits: [`crate::kernels::sve_vector_bits`]).
    Sve,
}

impl Width {
    pub const ALL: [Width; 5] = [
        Width::Scalar,
        Width::V128,
        Width::V256,
        Width::V512,
        Width::Sve,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Width::Scalar => "scalar",
            Width::V128 => "128",
            Width::V256 => "256",
            Width::V512 => "512",
            Width::Sve => "sve",
        }
    }

    pub fn parse(s: &str) -> Option<Width> {
        Width::ALL.into_iter().find(|w| w.name() == s.trim())
    }

    /// Register width in bits (SVE: the running CPU's vector length, 0
    /// where there is no SVE).
    pub fn bits(self) -> u32 {
        match self {
            Width::Scalar => 64,
            Width::V128 => 128,
            Width::V256 => 256,
            Width::V512 => 512,
            Width::Sve => super::sve_vector_bits().unwrap_or(0),
        }
    }

    /// How a width is shown: "512-bit", "scalar", "SVE 256-bit";
    /// `name` as stored in a record's `width` parameter and `bits` its
    /// recorded register width (an SVE record's `vector_bits`).
    pub fn label(name: &str, bits: Option<u32>) -> String {
        match (name, bits) {
            ("scalar", _) => "scalar".into(),
            ("sve", Some(b)) => format!("SVE {b}-bit"),
            ("sve", None) => "SVE".into(),
            (n, _) => format!("{n}-bit"),
        }
    }

    /// FP64 lanes per instruction.
    pub fn lanes(self) -> u32 {
        self.bits() / 64
    }

    /// Independent accumulators (FMAs) per loop iteration.
    pub fn accumulators(self) -> u32 {
        match self {
            Width::V512 if cfg!(target_arch = "x86_64") => 24,
            _ if cfg!(target_arch = "aarch64") => 24,
            _ => 12,
        }
    }

    /// FP64 FLOPs per loop iteration (an FMA counts 2).
    pub fn flops_per_iter(self) -> f64 {
        2.0 * self.lanes() as f64 * self.accumulators() as f64
    }

    /// The instruction the kernel repeats.
    pub fn instruction(self) -> &'static str {
        if cfg!(target_arch = "aarch64") {
            match self {
                Width::Scalar => "fmadd d",
                Width::Sve => "fmla z.d, p/m",
                _ => "fmla v.2d",
            }
        } else {
            match self {
                Width::Scalar => "vfmadd231sd xmm",
                Width::V128 => "vfmadd231pd xmm",
                Width::V256 => "vfmadd231pd ymm",
                Width::V512 => "vfmadd231pd zmm",
                Width::Sve => "fmla z.d, p/m (aarch64)",
            }
        }
    }

    /// None when this CPU and build can run the kernel, else why not.
    pub fn unsupported_reason(self) -> Option<String> {
        reason(self)
    }

    pub fn supported(self) -> bool {
        self.unsupported_reason().is_none()
    }
}

#[cfg(target_arch = "x86_64")]
fn reason(w: Width) -> Option<String> {
    let fma = is_x86_feature_detected!("fma") && is_x86_feature_detected!("avx");
    match w {
        Width::Sve => super::sve_unsupported_reason(),
        Width::Scalar | Width::V128 | Width::V256 if !fma => {
            Some("the CPU does not support FMA3/AVX (VEX-encoded FMA)".into())
        }
        Width::V512 if !is_x86_feature_detected!("avx512f") => Some(
            "the CPU (or the OS: register state not enabled in XCR0) does not support AVX-512F"
                .into(),
        ),
        _ => None,
    }
}

#[cfg(target_arch = "aarch64")]
fn reason(w: Width) -> Option<String> {
    match w {
        Width::Scalar | Width::V128 => None,
        Width::Sve => super::sve_unsupported_reason(),
        _ => Some(format!(
            "{}-bit FMA: NEON is 128-bit; wider vectors on aarch64 are SVE, measured as width=sve at the CPU's own vector length",
            w.bits()
        )),
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn reason(_w: Width) -> Option<String> {
    Some(format!(
        "no FMA kernel for {} in this build",
        std::env::consts::ARCH
    ))
}

/// Run `iters` iterations of the kernel for `w`; returns a value derived from
/// the accumulators. An unsupported width returns 0 without executing.
#[inline(never)]
pub fn run(w: Width, iters: u64) -> u64 {
    if iters == 0 || !w.supported() {
        return 0;
    }
    // SAFETY: support was checked just above.
    unsafe { dispatch(w, iters) }
}

/// Accumulators of the clock probe: the FMAs of one block rotate over
/// them (12 on x86_64: xmm/ymm have 16 registers, two hold the inputs; 24
/// on aarch64, where FMA latency reaches 9 cycles on A64FX).
pub const PROBE_ACCUMULATORS: u64 = if cfg!(target_arch = "aarch64") {
    24
} else {
    12
};
/// Dependent adds per accumulator in a block of the clock probe: a block is
/// `4 × PROBE_ACCUMULATORS` chain cycles (48 on x86_64, 96 on aarch64).
pub const PROBE_ADDS_PER_ACCUMULATOR: u64 = 4;
/// FMA densities the probe is built with, in FMAs per 4 chain cycles
/// (= FMAs per accumulator per block): 1.5, 1, 0.75 and 0.5 FMAs per cycle.
pub const PROBE_QUARTERS: [u32; 4] = [6, 4, 3, 2];

/// The clock while FMAs of one width run, without counters: each loop
/// iteration is a chain of dependent `add reg, reg` (x86_64; `add x, x, x`
/// on aarch64: 1 cycle each on every modern core, and never folded at
/// rename as `add reg, imm` is on Golden Cove) with independent FMAs of the
/// width under test in its shadow. The FMAs keep the core in that width's
/// power licence; as long as they stay below the FMA units' throughput the
/// chain is the critical path, so one iteration takes exactly
/// [`ClockProbe::chain_adds`] cycles and GHz = adds × iterations / ns.
///
/// `width: None` is the chain alone (no FMA): the reference, which must read
/// the clock of `chains::Chain::Add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockProbe {
    /// The FMA width in the chain's shadow (None: the chain alone).
    pub width: Option<Width>,
    /// Blocks per iteration: 1, or 2 (twice the chain and twice the FMAs,
    /// the same density: the check that the chain is the critical path).
    pub blocks: u32,
    /// FMAs per 4 chain cycles, one of [`PROBE_QUARTERS`] (ignored without
    /// a width).
    pub quarters: u32,
}

impl ClockProbe {
    /// Dependent adds (= cycles) per iteration.
    pub fn chain_adds(&self) -> u64 {
        self.blocks as u64 * PROBE_ACCUMULATORS * PROBE_ADDS_PER_ACCUMULATOR
    }

    /// FMAs per iteration.
    pub fn fmas_per_iter(&self) -> u64 {
        match self.width {
            Some(_) => self.blocks as u64 * PROBE_ACCUMULATORS * self.quarters as u64,
            None => 0,
        }
    }

    /// FMAs issued per chain cycle (0 without a width).
    pub fn fmas_per_cycle(&self) -> f64 {
        self.fmas_per_iter() as f64 / self.chain_adds() as f64
    }

    /// None when this probe can run here, else why not.
    pub fn unsupported_reason(&self) -> Option<String> {
        if !matches!(self.blocks, 1 | 2) {
            return Some(format!("no clock probe with {} blocks", self.blocks));
        }
        match self.width {
            None if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) => None,
            None => Some(format!("no clock probe for {}", std::env::consts::ARCH)),
            Some(w) => w.unsupported_reason().or_else(|| {
                (!PROBE_QUARTERS.contains(&self.quarters)).then(|| {
                    format!(
                        "no clock probe with {} FMAs per 4 cycles (built: {PROBE_QUARTERS:?})",
                        self.quarters
                    )
                })
            }),
        }
    }

    /// Run `iters` iterations; returns the chain's value. An unsupported
    /// probe returns 0 without executing.
    #[inline(never)]
    pub fn run(&self, iters: u64) -> u64 {
        if iters == 0 || self.unsupported_reason().is_some() {
            return 0;
        }
        // SAFETY: support (CPU feature and shape) was checked just above.
        unsafe { probe_dispatch(self.width, self.blocks, self.quarters, iters) }
    }

    /// What the probe runs, for a record's method.
    pub fn describe(&self) -> String {
        let add = if cfg!(target_arch = "aarch64") {
            "add x, x, x"
        } else {
            "add reg, reg"
        };
        match self.width {
            None => format!(
                "a chain of {} dependent `{add}` per loop iteration (1 cycle each), nothing else",
                self.chain_adds()
            ),
            Some(w) => format!(
                "a chain of {} dependent `{add}` per loop iteration (1 cycle each) with {} independent `{}` ({:.2} per cycle, over {PROBE_ACCUMULATORS} accumulators) in its shadow",
                self.chain_adds(),
                self.fmas_per_iter(),
                w.instruction(),
                self.fmas_per_cycle()
            ),
        }
    }
}

/// The probe density for a width whose FMA units complete `fma_per_cycle`
/// FMA instructions per cycle (measured, or from the knowledge base): the
/// densest of [`PROBE_QUARTERS`] that keeps the units at most 85% busy, so
/// that the FMAs never become the critical path. Returns the quarters and
/// whether one fits (false: the sparsest, 0.5 per cycle, which may bind).
/// Intel counts 512-/256-bit FP as "heavy" for the licence only above
/// about one instruction every two cycles, so 0.5 per cycle is also the
/// least that holds the licence.
pub fn probe_quarters_for(fma_per_cycle: f64) -> (u32, bool) {
    let most = 0.85 * fma_per_cycle;
    match PROBE_QUARTERS
        .into_iter()
        .find(|q| *q as f64 / 4.0 <= most + 1e-9)
    {
        Some(q) => (q, true),
        None => (PROBE_QUARTERS[PROBE_QUARTERS.len() - 1], false),
    }
}

/// The probe's monomorphised kernel for (blocks, quarters), or 0.
macro_rules! probe_shapes {
    ($m:ident :: $f:ident, $blocks:expr, $q:expr, $iters:expr) => {
        match ($blocks, $q) {
            (1, 6) => $m::$f::<1, 6>($iters),
            (1, 4) => $m::$f::<1, 4>($iters),
            (1, 3) => $m::$f::<1, 3>($iters),
            (1, 2) => $m::$f::<1, 2>($iters),
            (2, 6) => $m::$f::<2, 6>($iters),
            (2, 4) => $m::$f::<2, 4>($iters),
            (2, 3) => $m::$f::<2, 3>($iters),
            (2, 2) => $m::$f::<2, 2>($iters),
            _ => 0,
        }
    };
}

#[cfg(target_arch = "x86_64")]
unsafe fn probe_dispatch(w: Option<Width>, blocks: u32, q: u32, iters: u64) -> u64 {
    match (w, blocks) {
        (None, 1) => x86::chain_only::<1>(iters),
        (None, _) => x86::chain_only::<2>(iters),
        (Some(Width::Scalar), _) => probe_shapes!(x86::probe_sd, blocks, q, iters),
        (Some(Width::V128), _) => probe_shapes!(x86::probe_xmm, blocks, q, iters),
        (Some(Width::V256), _) => probe_shapes!(x86::probe_ymm, blocks, q, iters),
        (Some(Width::V512), _) => probe_shapes!(x86::probe_zmm, blocks, q, iters),
        // An aarch64 instruction set: never reached (unsupported).
        (Some(Width::Sve), _) => 0,
    }
}

#[cfg(target_arch = "aarch64")]
unsafe fn probe_dispatch(w: Option<Width>, blocks: u32, q: u32, iters: u64) -> u64 {
    match (w, blocks) {
        (None, 1) => arm::chain_only::<1>(iters),
        (None, _) => arm::chain_only::<2>(iters),
        (Some(Width::Scalar), _) => probe_shapes!(arm::probe_d, blocks, q, iters),
        (Some(Width::Sve), _) => probe_shapes!(arm::probe_sve, blocks, q, iters),
        (Some(_), _) => probe_shapes!(arm::probe_v2d, blocks, q, iters),
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn probe_dispatch(_w: Option<Width>, _blocks: u32, _q: u32, _iters: u64) -> u64 {
    0
}

#[cfg(target_arch = "x86_64")]
unsafe fn dispatch(w: Width, iters: u64) -> u64 {
    match w {
        Width::Scalar => x86::fma_sd(iters),
        Width::V128 => x86::fma_xmm(iters),
        Width::V256 => x86::fma_ymm(iters),
        Width::V512 => x86::fma_zmm(iters),
        // Unsupported here (an aarch64 instruction set): never reached.
        Width::Sve => 0,
    }
}

#[cfg(target_arch = "aarch64")]
unsafe fn dispatch(w: Width, iters: u64) -> u64 {
    match w {
        Width::Scalar => arm::fma_d(iters),
        Width::Sve => arm::fma_sve(iters),
        _ => arm::fma_v2d(iters),
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn dispatch(_w: Width, _iters: u64) -> u64 {
    0
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::asm;

    const ONE: f64 = 1.0;
    const TINY: f64 = 1.0e-9;

    /// Twelve scalar accumulators xmm0..xmm11; xmm14 = 1.0, xmm15 = 1e-9.
    #[target_feature(enable = "avx,fma")]
    pub(super) unsafe fn fma_sd(iters: u64) -> u64 {
        let mut n = iters;
        let out: u64;
        asm!(
            "vxorpd xmm0, xmm0, xmm0", "vxorpd xmm1, xmm1, xmm1", "vxorpd xmm2, xmm2, xmm2",
            "vxorpd xmm3, xmm3, xmm3", "vxorpd xmm4, xmm4, xmm4", "vxorpd xmm5, xmm5, xmm5",
            "vxorpd xmm6, xmm6, xmm6", "vxorpd xmm7, xmm7, xmm7", "vxorpd xmm8, xmm8, xmm8",
            "vxorpd xmm9, xmm9, xmm9", "vxorpd xmm10, xmm10, xmm10", "vxorpd xmm11, xmm11, xmm11",
            "vmovsd xmm14, qword ptr [{one}]",
            "vmovsd xmm15, qword ptr [{tiny}]",
            "2:",
            "vfmadd231sd xmm0, xmm14, xmm15", "vfmadd231sd xmm1, xmm14, xmm15",
            "vfmadd231sd xmm2, xmm14, xmm15", "vfmadd231sd xmm3, xmm14, xmm15",
            "vfmadd231sd xmm4, xmm14, xmm15", "vfmadd231sd xmm5, xmm14, xmm15",
            "vfmadd231sd xmm6, xmm14, xmm15", "vfmadd231sd xmm7, xmm14, xmm15",
            "vfmadd231sd xmm8, xmm14, xmm15", "vfmadd231sd xmm9, xmm14, xmm15",
            "vfmadd231sd xmm10, xmm14, xmm15", "vfmadd231sd xmm11, xmm14, xmm15",
            "dec {n}",
            "jnz 2b",
            "vaddsd xmm0, xmm0, xmm11",
            "vmovq {out}, xmm0",
            n = inout(reg) n,
            out = lateout(reg) out,
            one = in(reg) &ONE,
            tiny = in(reg) &TINY,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm14") _, out("xmm15") _,
            options(nostack, readonly)
        );
        let _ = n;
        out
    }

    /// Twelve 128-bit accumulators.
    #[target_feature(enable = "avx,fma")]
    pub(super) unsafe fn fma_xmm(iters: u64) -> u64 {
        let mut n = iters;
        let out: u64;
        asm!(
            "vxorpd xmm0, xmm0, xmm0", "vxorpd xmm1, xmm1, xmm1", "vxorpd xmm2, xmm2, xmm2",
            "vxorpd xmm3, xmm3, xmm3", "vxorpd xmm4, xmm4, xmm4", "vxorpd xmm5, xmm5, xmm5",
            "vxorpd xmm6, xmm6, xmm6", "vxorpd xmm7, xmm7, xmm7", "vxorpd xmm8, xmm8, xmm8",
            "vxorpd xmm9, xmm9, xmm9", "vxorpd xmm10, xmm10, xmm10", "vxorpd xmm11, xmm11, xmm11",
            "vmovddup xmm14, qword ptr [{one}]",
            "vmovddup xmm15, qword ptr [{tiny}]",
            "2:",
            "vfmadd231pd xmm0, xmm14, xmm15", "vfmadd231pd xmm1, xmm14, xmm15",
            "vfmadd231pd xmm2, xmm14, xmm15", "vfmadd231pd xmm3, xmm14, xmm15",
            "vfmadd231pd xmm4, xmm14, xmm15", "vfmadd231pd xmm5, xmm14, xmm15",
            "vfmadd231pd xmm6, xmm14, xmm15", "vfmadd231pd xmm7, xmm14, xmm15",
            "vfmadd231pd xmm8, xmm14, xmm15", "vfmadd231pd xmm9, xmm14, xmm15",
            "vfmadd231pd xmm10, xmm14, xmm15", "vfmadd231pd xmm11, xmm14, xmm15",
            "dec {n}",
            "jnz 2b",
            "vaddpd xmm0, xmm0, xmm11",
            "vmovq {out}, xmm0",
            n = inout(reg) n,
            out = lateout(reg) out,
            one = in(reg) &ONE,
            tiny = in(reg) &TINY,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm14") _, out("xmm15") _,
            options(nostack, readonly)
        );
        let _ = n;
        out
    }

    /// Twelve 256-bit accumulators.
    #[target_feature(enable = "avx,fma")]
    pub(super) unsafe fn fma_ymm(iters: u64) -> u64 {
        let mut n = iters;
        let out: u64;
        asm!(
            "vxorpd ymm0, ymm0, ymm0", "vxorpd ymm1, ymm1, ymm1", "vxorpd ymm2, ymm2, ymm2",
            "vxorpd ymm3, ymm3, ymm3", "vxorpd ymm4, ymm4, ymm4", "vxorpd ymm5, ymm5, ymm5",
            "vxorpd ymm6, ymm6, ymm6", "vxorpd ymm7, ymm7, ymm7", "vxorpd ymm8, ymm8, ymm8",
            "vxorpd ymm9, ymm9, ymm9", "vxorpd ymm10, ymm10, ymm10", "vxorpd ymm11, ymm11, ymm11",
            "vbroadcastsd ymm14, qword ptr [{one}]",
            "vbroadcastsd ymm15, qword ptr [{tiny}]",
            "2:",
            "vfmadd231pd ymm0, ymm14, ymm15", "vfmadd231pd ymm1, ymm14, ymm15",
            "vfmadd231pd ymm2, ymm14, ymm15", "vfmadd231pd ymm3, ymm14, ymm15",
            "vfmadd231pd ymm4, ymm14, ymm15", "vfmadd231pd ymm5, ymm14, ymm15",
            "vfmadd231pd ymm6, ymm14, ymm15", "vfmadd231pd ymm7, ymm14, ymm15",
            "vfmadd231pd ymm8, ymm14, ymm15", "vfmadd231pd ymm9, ymm14, ymm15",
            "vfmadd231pd ymm10, ymm14, ymm15", "vfmadd231pd ymm11, ymm14, ymm15",
            "dec {n}",
            "jnz 2b",
            "vaddpd ymm0, ymm0, ymm11",
            "vmovq {out}, xmm0",
            "vzeroupper",
            n = inout(reg) n,
            out = lateout(reg) out,
            one = in(reg) &ONE,
            tiny = in(reg) &TINY,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack, readonly)
        );
        let _ = n;
        out
    }

    /// Twenty-four 512-bit accumulators zmm0..zmm23; zmm30 = 1.0, zmm31 = 1e-9.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn fma_zmm(iters: u64) -> u64 {
        let mut n = iters;
        let out: u64;
        asm!(
            "vpxorq zmm0, zmm0, zmm0", "vpxorq zmm1, zmm1, zmm1", "vpxorq zmm2, zmm2, zmm2",
            "vpxorq zmm3, zmm3, zmm3", "vpxorq zmm4, zmm4, zmm4", "vpxorq zmm5, zmm5, zmm5",
            "vpxorq zmm6, zmm6, zmm6", "vpxorq zmm7, zmm7, zmm7", "vpxorq zmm8, zmm8, zmm8",
            "vpxorq zmm9, zmm9, zmm9", "vpxorq zmm10, zmm10, zmm10", "vpxorq zmm11, zmm11, zmm11",
            "vpxorq zmm12, zmm12, zmm12", "vpxorq zmm13, zmm13, zmm13", "vpxorq zmm14, zmm14, zmm14",
            "vpxorq zmm15, zmm15, zmm15", "vpxorq zmm16, zmm16, zmm16", "vpxorq zmm17, zmm17, zmm17",
            "vpxorq zmm18, zmm18, zmm18", "vpxorq zmm19, zmm19, zmm19", "vpxorq zmm20, zmm20, zmm20",
            "vpxorq zmm21, zmm21, zmm21", "vpxorq zmm22, zmm22, zmm22", "vpxorq zmm23, zmm23, zmm23",
            "vbroadcastsd zmm30, qword ptr [{one}]",
            "vbroadcastsd zmm31, qword ptr [{tiny}]",
            "2:",
            "vfmadd231pd zmm0, zmm30, zmm31", "vfmadd231pd zmm1, zmm30, zmm31",
            "vfmadd231pd zmm2, zmm30, zmm31", "vfmadd231pd zmm3, zmm30, zmm31",
            "vfmadd231pd zmm4, zmm30, zmm31", "vfmadd231pd zmm5, zmm30, zmm31",
            "vfmadd231pd zmm6, zmm30, zmm31", "vfmadd231pd zmm7, zmm30, zmm31",
            "vfmadd231pd zmm8, zmm30, zmm31", "vfmadd231pd zmm9, zmm30, zmm31",
            "vfmadd231pd zmm10, zmm30, zmm31", "vfmadd231pd zmm11, zmm30, zmm31",
            "vfmadd231pd zmm12, zmm30, zmm31", "vfmadd231pd zmm13, zmm30, zmm31",
            "vfmadd231pd zmm14, zmm30, zmm31", "vfmadd231pd zmm15, zmm30, zmm31",
            "vfmadd231pd zmm16, zmm30, zmm31", "vfmadd231pd zmm17, zmm30, zmm31",
            "vfmadd231pd zmm18, zmm30, zmm31", "vfmadd231pd zmm19, zmm30, zmm31",
            "vfmadd231pd zmm20, zmm30, zmm31", "vfmadd231pd zmm21, zmm30, zmm31",
            "vfmadd231pd zmm22, zmm30, zmm31", "vfmadd231pd zmm23, zmm30, zmm31",
            "dec {n}",
            "jnz 2b",
            "vaddpd zmm0, zmm0, zmm23",
            "vmovq {out}, xmm0",
            "vzeroupper",
            n = inout(reg) n,
            out = lateout(reg) out,
            one = in(reg) &ONE,
            tiny = in(reg) &TINY,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm30") _, out("zmm31") _,
            options(nostack, readonly)
        );
        let _ = n;
        out
    }

    /// The clock probe's chain alone: `BLOCKS × 48` dependent `add reg, reg`
    /// per iteration (48 = 12 accumulators × 4 adds, the probe's block).
    pub(super) unsafe fn chain_only<const BLOCKS: usize>(iters: u64) -> u64 {
        let mut n = iters;
        let mut x: u64 = 1;
        asm!(
            ".p2align 5",
            "2:",
            ".rept {blocks}",
            ".rept 48",
            "add {x}, {k}",
            ".endr",
            ".endr",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) n,
            x = inout(reg) x,
            k = in(reg) 1u64,
            blocks = const BLOCKS,
            options(nostack, nomem)
        );
        let _ = n;
        x
    }

    /// One clock probe per x86 width: per iteration `BLOCKS` blocks, each
    /// block 12 accumulators × (4 dependent `add reg, reg` of the one chain,
    /// then `Q` FMAs into that accumulator): 48 chain cycles and 12 × Q
    /// FMAs. An accumulator's Q FMAs (latency 4) take 4Q ≤ 24 cycles of the
    /// block's 48, so the FMAs never wait on each other for longer than the
    /// chain; the loop counter is a separate chain.
    macro_rules! probe_x86 {
        ($name:ident, $feat:literal, $zero:literal, $in1:literal, $in2:literal, $fma:literal, [$($clob:tt),*]) => {
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $name<const BLOCKS: usize, const Q: usize>(iters: u64) -> u64 {
                let mut n = iters;
                let mut x: u64 = 1;
                asm!(
                    ".irp a, 0,1,2,3,4,5,6,7,8,9,10,11",
                    $zero,
                    ".endr",
                    $in1,
                    $in2,
                    ".p2align 5",
                    "2:",
                    ".rept {blocks}",
                    ".irp a, 0,1,2,3,4,5,6,7,8,9,10,11",
                    ".rept 4",
                    "add {x}, {k}",
                    ".endr",
                    ".rept {q}",
                    $fma,
                    ".endr",
                    ".endr",
                    ".endr",
                    "dec {n}",
                    "jnz 2b",
                    "vzeroupper",
                    n = inout(reg) n,
                    x = inout(reg) x,
                    k = in(reg) 1u64,
                    one = in(reg) &ONE,
                    tiny = in(reg) &TINY,
                    blocks = const BLOCKS,
                    q = const Q,
                    $(out($clob) _,)*
                    options(nostack, readonly)
                );
                let _ = n;
                x
            }
        };
    }

    probe_x86!(
        probe_sd,
        "avx,fma",
        "vxorpd xmm\\a, xmm\\a, xmm\\a",
        "vmovsd xmm14, qword ptr [{one}]",
        "vmovsd xmm15, qword ptr [{tiny}]",
        "vfmadd231sd xmm\\a, xmm14, xmm15",
        [
            "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
            "xmm10", "xmm11", "xmm14", "xmm15"
        ]
    );
    probe_x86!(
        probe_xmm,
        "avx,fma",
        "vxorpd xmm\\a, xmm\\a, xmm\\a",
        "vmovddup xmm14, qword ptr [{one}]",
        "vmovddup xmm15, qword ptr [{tiny}]",
        "vfmadd231pd xmm\\a, xmm14, xmm15",
        [
            "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
            "xmm10", "xmm11", "xmm14", "xmm15"
        ]
    );
    probe_x86!(
        probe_ymm,
        "avx,fma",
        "vxorpd ymm\\a, ymm\\a, ymm\\a",
        "vbroadcastsd ymm14, qword ptr [{one}]",
        "vbroadcastsd ymm15, qword ptr [{tiny}]",
        "vfmadd231pd ymm\\a, ymm14, ymm15",
        [
            "ymm0", "ymm1", "ymm2", "ymm3", "ymm4", "ymm5", "ymm6", "ymm7", "ymm8", "ymm9",
            "ymm10", "ymm11", "ymm14", "ymm15"
        ]
    );
    probe_x86!(
        probe_zmm,
        "avx512f",
        "vpxorq zmm\\a, zmm\\a, zmm\\a",
        "vbroadcastsd zmm30, qword ptr [{one}]",
        "vbroadcastsd zmm31, qword ptr [{tiny}]",
        "vfmadd231pd zmm\\a, zmm30, zmm31",
        [
            "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9",
            "zmm10", "zmm11", "zmm30", "zmm31"
        ]
    );
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use core::arch::asm;

    /// 24 scalar accumulators d0..d23; d30 = 1.0, d31 = 1e-9.
    pub(super) unsafe fn fma_d(iters: u64) -> u64 {
        let mut n = iters;
        let out: u64;
        asm!(
            "movi d0, #0", "movi d1, #0", "movi d2, #0", "movi d3, #0", "movi d4, #0", "movi d5, #0",
            "movi d6, #0", "movi d7, #0", "movi d8, #0", "movi d9, #0", "movi d10, #0", "movi d11, #0",
            "movi d12, #0", "movi d13, #0", "movi d14, #0", "movi d15, #0", "movi d16, #0", "movi d17, #0",
            "movi d18, #0", "movi d19, #0", "movi d20, #0", "movi d21, #0", "movi d22, #0", "movi d23, #0",
            "fmov d30, #1.0",
            "fmov d31, #0.125",
            "2:",
            "fmadd d0, d30, d31, d0", "fmadd d1, d30, d31, d1", "fmadd d2, d30, d31, d2",
            "fmadd d3, d30, d31, d3", "fmadd d4, d30, d31, d4", "fmadd d5, d30, d31, d5",
            "fmadd d6, d30, d31, d6", "fmadd d7, d30, d31, d7", "fmadd d8, d30, d31, d8",
            "fmadd d9, d30, d31, d9", "fmadd d10, d30, d31, d10", "fmadd d11, d30, d31, d11",
            "fmadd d12, d30, d31, d12", "fmadd d13, d30, d31, d13", "fmadd d14, d30, d31, d14",
            "fmadd d15, d30, d31, d15", "fmadd d16, d30, d31, d16", "fmadd d17, d30, d31, d17",
            "fmadd d18, d30, d31, d18", "fmadd d19, d30, d31, d19", "fmadd d20, d30, d31, d20",
            "fmadd d21, d30, d31, d21", "fmadd d22, d30, d31, d22", "fmadd d23, d30, d31, d23",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            "fadd d0, d0, d23",
            "fmov {out}, d0",
            n = inout(reg) n,
            out = lateout(reg) out,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _, out("v5") _,
            out("v6") _, out("v7") _, out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _, out("v16") _, out("v17") _,
            out("v18") _, out("v19") _, out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v30") _, out("v31") _,
            options(nostack, nomem)
        );
        let _ = n;
        out
    }

    /// 24 NEON accumulators v0..v23 (2 × FP64 each).
    pub(super) unsafe fn fma_v2d(iters: u64) -> u64 {
        let mut n = iters;
        let out: u64;
        asm!(
            "movi v0.2d, #0", "movi v1.2d, #0", "movi v2.2d, #0", "movi v3.2d, #0",
            "movi v4.2d, #0", "movi v5.2d, #0", "movi v6.2d, #0", "movi v7.2d, #0",
            "movi v8.2d, #0", "movi v9.2d, #0", "movi v10.2d, #0", "movi v11.2d, #0",
            "movi v12.2d, #0", "movi v13.2d, #0", "movi v14.2d, #0", "movi v15.2d, #0",
            "movi v16.2d, #0", "movi v17.2d, #0", "movi v18.2d, #0", "movi v19.2d, #0",
            "movi v20.2d, #0", "movi v21.2d, #0", "movi v22.2d, #0", "movi v23.2d, #0",
            "fmov v30.2d, #1.0",
            "fmov v31.2d, #0.125",
            "2:",
            "fmla v0.2d, v30.2d, v31.2d", "fmla v1.2d, v30.2d, v31.2d", "fmla v2.2d, v30.2d, v31.2d",
            "fmla v3.2d, v30.2d, v31.2d", "fmla v4.2d, v30.2d, v31.2d", "fmla v5.2d, v30.2d, v31.2d",
            "fmla v6.2d, v30.2d, v31.2d", "fmla v7.2d, v30.2d, v31.2d", "fmla v8.2d, v30.2d, v31.2d",
            "fmla v9.2d, v30.2d, v31.2d", "fmla v10.2d, v30.2d, v31.2d", "fmla v11.2d, v30.2d, v31.2d",
            "fmla v12.2d, v30.2d, v31.2d", "fmla v13.2d, v30.2d, v31.2d", "fmla v14.2d, v30.2d, v31.2d",
            "fmla v15.2d, v30.2d, v31.2d", "fmla v16.2d, v30.2d, v31.2d", "fmla v17.2d, v30.2d, v31.2d",
            "fmla v18.2d, v30.2d, v31.2d", "fmla v19.2d, v30.2d, v31.2d", "fmla v20.2d, v30.2d, v31.2d",
            "fmla v21.2d, v30.2d, v31.2d", "fmla v22.2d, v30.2d, v31.2d", "fmla v23.2d, v30.2d, v31.2d",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            "fadd v0.2d, v0.2d, v23.2d",
            "fmov {out}, d0",
            n = inout(reg) n,
            out = lateout(reg) out,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _, out("v5") _,
            out("v6") _, out("v7") _, out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _, out("v16") _, out("v17") _,
            out("v18") _, out("v19") _, out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v30") _, out("v31") _,
            options(nostack, nomem)
        );
        let _ = n;
        out
    }

    /// 24 SVE accumulators z0..z23 (VL/64 × FP64 each), all lanes active;
    /// z30 = 1.0, z31 = 0.125.
    #[target_feature(enable = "sve")]
    pub(super) unsafe fn fma_sve(iters: u64) -> u64 {
        let mut n = iters;
        let out: u64;
        asm!(
            "ptrue p0.d",
            "dup z0.d, #0", "dup z1.d, #0", "dup z2.d, #0", "dup z3.d, #0",
            "dup z4.d, #0", "dup z5.d, #0", "dup z6.d, #0", "dup z7.d, #0",
            "dup z8.d, #0", "dup z9.d, #0", "dup z10.d, #0", "dup z11.d, #0",
            "dup z12.d, #0", "dup z13.d, #0", "dup z14.d, #0", "dup z15.d, #0",
            "dup z16.d, #0", "dup z17.d, #0", "dup z18.d, #0", "dup z19.d, #0",
            "dup z20.d, #0", "dup z21.d, #0", "dup z22.d, #0", "dup z23.d, #0",
            "fmov z30.d, #1.0",
            "fmov z31.d, #0.125",
            "2:",
            "fmla z0.d, p0/m, z30.d, z31.d", "fmla z1.d, p0/m, z30.d, z31.d", "fmla z2.d, p0/m, z30.d, z31.d",
            "fmla z3.d, p0/m, z30.d, z31.d", "fmla z4.d, p0/m, z30.d, z31.d", "fmla z5.d, p0/m, z30.d, z31.d",
            "fmla z6.d, p0/m, z30.d, z31.d", "fmla z7.d, p0/m, z30.d, z31.d", "fmla z8.d, p0/m, z30.d, z31.d",
            "fmla z9.d, p0/m, z30.d, z31.d", "fmla z10.d, p0/m, z30.d, z31.d", "fmla z11.d, p0/m, z30.d, z31.d",
            "fmla z12.d, p0/m, z30.d, z31.d", "fmla z13.d, p0/m, z30.d, z31.d", "fmla z14.d, p0/m, z30.d, z31.d",
            "fmla z15.d, p0/m, z30.d, z31.d", "fmla z16.d, p0/m, z30.d, z31.d", "fmla z17.d, p0/m, z30.d, z31.d",
            "fmla z18.d, p0/m, z30.d, z31.d", "fmla z19.d, p0/m, z30.d, z31.d", "fmla z20.d, p0/m, z30.d, z31.d",
            "fmla z21.d, p0/m, z30.d, z31.d", "fmla z22.d, p0/m, z30.d, z31.d", "fmla z23.d, p0/m, z30.d, z31.d",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            "fadd z0.d, z0.d, z23.d",
            "fmov {out}, d0",
            n = inout(reg) n,
            out = lateout(reg) out,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _, out("v5") _,
            out("v6") _, out("v7") _, out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _, out("v16") _, out("v17") _,
            out("v18") _, out("v19") _, out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v30") _, out("v31") _,
            out("p0") _,
            options(nostack, nomem)
        );
        let _ = n;
        out
    }

    /// The clock probe's chain alone: `BLOCKS × 96` dependent `add x, x, x`
    /// per iteration (96 = 24 accumulators × 4 adds, the probe's block).
    pub(super) unsafe fn chain_only<const BLOCKS: usize>(iters: u64) -> u64 {
        let mut n = iters;
        let mut x: u64 = 1;
        asm!(
            ".p2align 5",
            "2:",
            ".rept {blocks}",
            ".rept 96",
            "add {x}, {x}, {k}",
            ".endr",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            n = inout(reg) n,
            x = inout(reg) x,
            k = in(reg) 1u64,
            blocks = const BLOCKS,
            options(nostack, nomem)
        );
        let _ = n;
        x
    }

    /// One clock probe per aarch64 width: per iteration `BLOCKS` blocks,
    /// each block 24 accumulators × (4 dependent `add x, x, x` of the one
    /// chain, then `Q` FMAs into that accumulator): 96 chain cycles and
    /// 24 × Q FMAs. An accumulator's Q FMAs take at most 6 × 9 = 54 cycles
    /// (A64FX's FMA latency) of the block's 96. `$irp` names the 24
    /// accumulators with their arrangement (`v0.2d`, `z0.d`): in `v\a.2d`
    /// the assembler reads a parameter named `a.2d`, and the `\()`
    /// separator did not survive the `.rept` nested in the `.irp`.
    macro_rules! probe_arm {
        ($(#[$attr:meta])* $name:ident, $irp:literal, $pre:literal, $zero:literal, $in1:literal, $in2:literal, $fma:literal, [$($clob:tt),*]) => {
            $(#[$attr])*
            pub(super) unsafe fn $name<const BLOCKS: usize, const Q: usize>(iters: u64) -> u64 {
                let mut n = iters;
                let mut x: u64 = 1;
                asm!(
                    $pre,
                    $irp,
                    $zero,
                    ".endr",
                    $in1,
                    $in2,
                    ".p2align 5",
                    "2:",
                    ".rept {blocks}",
                    $irp,
                    ".rept 4",
                    "add {x}, {x}, {k}",
                    ".endr",
                    ".rept {q}",
                    $fma,
                    ".endr",
                    ".endr",
                    ".endr",
                    "subs {n}, {n}, #1",
                    "b.ne 2b",
                    n = inout(reg) n,
                    x = inout(reg) x,
                    k = in(reg) 1u64,
                    blocks = const BLOCKS,
                    q = const Q,
                    $(out($clob) _,)*
                    options(nostack, nomem)
                );
                let _ = n;
                x
            }
        };
    }

    probe_arm!(
        probe_d,
        ".irp a, d0,d1,d2,d3,d4,d5,d6,d7,d8,d9,d10,d11,d12,d13,d14,d15,d16,d17,d18,d19,d20,d21,d22,d23",
        "",
        "movi \\a, #0",
        "fmov d30, #1.0",
        "fmov d31, #0.125",
        "fmadd \\a, d30, d31, \\a",
        [
            "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
            "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v30", "v31"
        ]
    );
    probe_arm!(
        probe_v2d,
        ".irp a, v0.2d,v1.2d,v2.2d,v3.2d,v4.2d,v5.2d,v6.2d,v7.2d,v8.2d,v9.2d,v10.2d,v11.2d,v12.2d,v13.2d,v14.2d,v15.2d,v16.2d,v17.2d,v18.2d,v19.2d,v20.2d,v21.2d,v22.2d,v23.2d",
        "",
        "movi \\a, #0",
        "fmov v30.2d, #1.0",
        "fmov v31.2d, #0.125",
        "fmla \\a, v30.2d, v31.2d",
        [
            "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
            "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v30", "v31"
        ]
    );
    probe_arm!(
        #[target_feature(enable = "sve")]
        probe_sve,
        ".irp a, z0.d,z1.d,z2.d,z3.d,z4.d,z5.d,z6.d,z7.d,z8.d,z9.d,z10.d,z11.d,z12.d,z13.d,z14.d,z15.d,z16.d,z17.d,z18.d,z19.d,z20.d,z21.d,z22.d,z23.d",
        "ptrue p0.d",
        "dup \\a, #0",
        "fmov z30.d, #1.0",
        "fmov z31.d, #0.125",
        "fmla \\a, p0/m, z30.d, z31.d",
        [
            "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
            "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v30", "v31",
            "p0"
        ]
    );
}

#[cfg(test)]
mod tests;

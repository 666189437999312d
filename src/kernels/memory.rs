//! Memory kernels: pointer chases (latency), streaming loops (bandwidth) and
//! the seeds' own loops. Measured loops only: no I/O, no allocation inside a
//! timed call. Chain *building* (not timed) lives here too because the chase
//! depends on its layout; it uses a scratch vector for the permutation.
//!
//! Safety model: a [`PointerChain`] owns the buffer its links point into, so
//! chasing it is safe. Streaming kernels take `&[f64]` / `&mut [f64]` slices
//! whose length is a multiple of [`BW_ELEMS_ALIGN`] and whose start is
//! 64-byte aligned (checked; a violation is a caller bug and returns an error).

use anyhow::{bail, Result};
use serde::Serialize;
use std::hint::black_box;

mod chain;
pub use chain::*;

/// Elements (f64) a streaming slice must be a multiple of: one unrolled
/// iteration of the widest kernel (8 zmm registers × 8 doubles).
pub const BW_ELEMS_ALIGN: usize = 64;

// ---------------------------------------------------------------------------
// Streaming kernels (STREAM semantics).

/// Which streaming loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BwKernel {
    /// `s += a[i]`
    Read,
    /// `a[i] = q`
    Write,
    /// `c[i] = a[i]`
    Copy,
    /// `a[i] = b[i] + q * c[i]`
    Triad,
}

impl BwKernel {
    pub const ALL: [BwKernel; 4] = [
        BwKernel::Read,
        BwKernel::Write,
        BwKernel::Copy,
        BwKernel::Triad,
    ];
    pub const fn name(self) -> &'static str {
        match self {
            BwKernel::Read => "read",
            BwKernel::Write => "write",
            BwKernel::Copy => "copy",
            BwKernel::Triad => "triad",
        }
    }
    pub fn parse(s: &str) -> Option<BwKernel> {
        BwKernel::ALL.into_iter().find(|k| k.name() == s)
    }
    /// Arrays the kernel touches.
    pub fn arrays(self) -> usize {
        match self {
            BwKernel::Read | BwKernel::Write => 1,
            BwKernel::Copy => 2,
            BwKernel::Triad => 3,
        }
    }
    /// (loaded, stored) bytes per element as the kernel counts them (STREAM).
    pub fn counted_bytes(self) -> (usize, usize) {
        match self {
            BwKernel::Read => (8, 0),
            BwKernel::Write => (0, 8),
            BwKernel::Copy => (8, 8),
            BwKernel::Triad => (16, 8),
        }
    }
    /// Bytes per element moved on the memory bus: a normal store first reads
    /// the line (write-allocate / RFO), a non-temporal one does not.
    pub fn bus_bytes(self, store: StoreKind) -> usize {
        let (l, s) = self.counted_bytes();
        match store {
            StoreKind::Normal => l + 2 * s,
            StoreKind::NonTemporal => l + s,
        }
    }
    pub fn has_stores(self) -> bool {
        self.counted_bytes().1 > 0
    }
}

/// Store flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    Normal,
    /// Streaming stores that bypass the caches (`movntpd`, `stnp`).
    NonTemporal,
}

impl StoreKind {
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Normal => "normal",
            StoreKind::NonTemporal => "nt",
        }
    }
}

/// Instruction width of a streaming kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Width {
    /// 64-bit scalar loads and stores (inline assembly, cannot be vectorised).
    Scalar,
    /// SSE2, 128 bit.
    Sse2,
    /// AVX, 256 bit.
    Avx,
    /// AVX-512F, 512 bit.
    Avx512,
    /// NEON / AdvSIMD, 128 bit.
    Neon,
}

impl Width {
    pub fn name(self) -> &'static str {
        match self {
            Width::Scalar => "scalar",
            Width::Sse2 => "sse2",
            Width::Avx => "avx",
            Width::Avx512 => "avx512",
            Width::Neon => "neon",
        }
    }
    pub fn bits(self) -> u32 {
        match self {
            Width::Scalar => 64,
            Width::Sse2 | Width::Neon => 128,
            Width::Avx => 256,
            Width::Avx512 => 512,
        }
    }
    pub fn parse(s: &str) -> Option<Width> {
        [
            Width::Scalar,
            Width::Sse2,
            Width::Avx,
            Width::Avx512,
            Width::Neon,
        ]
        .into_iter()
        .find(|w| w.name() == s)
    }
    /// Whether the running CPU can execute this width (runtime detection).
    pub fn supported(self) -> bool {
        match self {
            Width::Scalar => cfg!(any(target_arch = "x86_64", target_arch = "aarch64")),
            #[cfg(target_arch = "x86_64")]
            Width::Sse2 => is_x86_feature_detected!("sse2"),
            #[cfg(target_arch = "x86_64")]
            Width::Avx => is_x86_feature_detected!("avx"),
            #[cfg(target_arch = "x86_64")]
            Width::Avx512 => is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "aarch64")]
            Width::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
    /// The widest vector width the running CPU has, if any.
    pub fn widest() -> Option<Width> {
        [Width::Avx512, Width::Avx, Width::Sse2, Width::Neon]
            .into_iter()
            .find(|w| w.supported())
    }
}

/// Arrays of one streaming call: `a` (read by read/copy, written by
/// write/triad), `b`, `c`. Unused arrays may be empty.
pub struct Arrays<'a> {
    pub a: &'a mut [f64],
    pub b: &'a mut [f64],
    pub c: &'a mut [f64],
}

/// The scalar `q` of write and triad (STREAM's 3.0).
pub const SCALAR_Q: f64 = 3.0;

fn check_slice(name: &str, s: &[f64], n: usize) -> Result<()> {
    if s.len() < n {
        bail!(
            "streaming kernel: array {name} holds {} elements, {n} needed",
            s.len()
        );
    }
    if !(s.as_ptr() as usize).is_multiple_of(64) {
        bail!("streaming kernel: array {name} is not 64-byte aligned");
    }
    Ok(())
}

/// One pass of `kernel` over the first `n` elements (n a multiple of
/// [`BW_ELEMS_ALIGN`]). Returns a value derived from the work (the sum for
/// read, one stored element otherwise).
pub fn stream_pass(
    kernel: BwKernel,
    width: Width,
    store: StoreKind,
    arr: &mut Arrays<'_>,
    n: usize,
) -> Result<f64> {
    if n == 0 || !n.is_multiple_of(BW_ELEMS_ALIGN) {
        bail!("streaming kernel: {n} elements is not a positive multiple of {BW_ELEMS_ALIGN}");
    }
    if !width.supported() {
        bail!(
            "streaming kernel: width {} is not supported by this CPU",
            width.name()
        );
    }
    match kernel {
        BwKernel::Read | BwKernel::Write => check_slice("a", arr.a, n)?,
        BwKernel::Copy => {
            check_slice("a", arr.a, n)?;
            check_slice("c", arr.c, n)?;
        }
        BwKernel::Triad => {
            check_slice("a", arr.a, n)?;
            check_slice("b", arr.b, n)?;
            check_slice("c", arr.c, n)?;
        }
    }
    let nt = store == StoreKind::NonTemporal;
    let (a, b, c) = (arr.a.as_mut_ptr(), arr.b.as_mut_ptr(), arr.c.as_mut_ptr());
    // SAFETY: lengths and alignment checked above; the feature was detected.
    let r = unsafe { dispatch(kernel, width, nt, a, b, c, n) };
    Ok(black_box(r))
}

/// # Safety
/// Arrays valid for `n` elements, 64-byte aligned; `width` supported.
#[allow(unused_variables)]
unsafe fn dispatch(
    kernel: BwKernel,
    width: Width,
    nt: bool,
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
) -> f64 {
    match width {
        Width::Scalar => scalar::run(kernel, nt, a, b, c, n),
        #[cfg(target_arch = "x86_64")]
        Width::Avx512 => x86::avx512(kernel, nt, a, b, c, n),
        #[cfg(target_arch = "x86_64")]
        Width::Avx => x86::avx(kernel, nt, a, b, c, n),
        #[cfg(target_arch = "x86_64")]
        Width::Sse2 => x86::sse2(kernel, nt, a, b, c, n),
        #[cfg(target_arch = "aarch64")]
        Width::Neon => arm::neon(kernel, nt, a, b, c, n),
        #[allow(unreachable_patterns)]
        _ => f64::NAN,
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::BwKernel;
    use std::arch::x86_64::*;

    macro_rules! vector_kernels {
        ($name:ident, $feat:literal, $vec:ty, $lanes:expr,
         $load:ident, $store:ident, $stream:ident, $set1:ident, $zero:ident, $add:ident, $mul:ident,
         $fence:expr, $hsum:expr) => {
            #[target_feature(enable = $feat)]
            pub unsafe fn $name(
                kernel: BwKernel,
                nt: bool,
                a: *mut f64,
                b: *mut f64,
                c: *mut f64,
                n: usize,
            ) -> f64 {
                const L: usize = $lanes;
                const U: usize = 8; // vectors per unrolled iteration
                let q = $set1(super::SCALAR_Q);
                match kernel {
                    BwKernel::Read => {
                        let mut s: [$vec; U] = [$zero(); U];
                        let mut i = 0;
                        while i < n {
                            for u in 0..U {
                                s[u] = $add(s[u], $load(a.add(i + u * L)));
                            }
                            i += U * L;
                        }
                        let mut t = $zero();
                        for u in 0..U {
                            t = $add(t, s[u]);
                        }
                        $hsum(t)
                    }
                    BwKernel::Write => {
                        let mut i = 0;
                        if nt {
                            while i < n {
                                for u in 0..U {
                                    $stream(a.add(i + u * L), q);
                                }
                                i += U * L;
                            }
                            $fence;
                        } else {
                            while i < n {
                                for u in 0..U {
                                    $store(a.add(i + u * L), q);
                                }
                                i += U * L;
                            }
                        }
                        *a
                    }
                    BwKernel::Copy => {
                        let mut i = 0;
                        if nt {
                            while i < n {
                                for u in 0..U {
                                    $stream(c.add(i + u * L), $load(a.add(i + u * L)));
                                }
                                i += U * L;
                            }
                            $fence;
                        } else {
                            while i < n {
                                for u in 0..U {
                                    $store(c.add(i + u * L), $load(a.add(i + u * L)));
                                }
                                i += U * L;
                            }
                        }
                        *c
                    }
                    BwKernel::Triad => {
                        let mut i = 0;
                        if nt {
                            while i < n {
                                for u in 0..U {
                                    let v = $add(
                                        $load(b.add(i + u * L)),
                                        $mul(q, $load(c.add(i + u * L))),
                                    );
                                    $stream(a.add(i + u * L), v);
                                }
                                i += U * L;
                            }
                            $fence;
                        } else {
                            while i < n {
                                for u in 0..U {
                                    let v = $add(
                                        $load(b.add(i + u * L)),
                                        $mul(q, $load(c.add(i + u * L))),
                                    );
                                    $store(a.add(i + u * L), v);
                                }
                                i += U * L;
                            }
                        }
                        *a
                    }
                }
            }
        };
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn hsum512(v: __m512d) -> f64 {
        _mm512_reduce_add_pd(v)
    }
    #[target_feature(enable = "avx")]
    unsafe fn hsum256(v: __m256d) -> f64 {
        let mut t = [0.0f64; 4];
        _mm256_storeu_pd(t.as_mut_ptr(), v);
        t.iter().sum()
    }
    #[target_feature(enable = "sse2")]
    unsafe fn hsum128(v: __m128d) -> f64 {
        let mut t = [0.0f64; 2];
        _mm_storeu_pd(t.as_mut_ptr(), v);
        t[0] + t[1]
    }

    vector_kernels!(
        avx512,
        "avx512f",
        __m512d,
        8,
        _mm512_load_pd,
        _mm512_store_pd,
        _mm512_stream_pd,
        _mm512_set1_pd,
        _mm512_setzero_pd,
        _mm512_add_pd,
        _mm512_mul_pd,
        _mm_sfence(),
        hsum512
    );
    vector_kernels!(
        avx,
        "avx",
        __m256d,
        4,
        _mm256_load_pd,
        _mm256_store_pd,
        _mm256_stream_pd,
        _mm256_set1_pd,
        _mm256_setzero_pd,
        _mm256_add_pd,
        _mm256_mul_pd,
        _mm_sfence(),
        hsum256
    );
    vector_kernels!(
        sse2,
        "sse2",
        __m128d,
        2,
        _mm_load_pd,
        _mm_store_pd,
        _mm_stream_pd,
        _mm_set1_pd,
        _mm_setzero_pd,
        _mm_add_pd,
        _mm_mul_pd,
        _mm_sfence(),
        hsum128
    );
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use super::BwKernel;
    use std::arch::aarch64::*;

    /// NEON kernels. Non-temporal stores use `stnp` (a hint; many cores
    /// still allocate).
    #[target_feature(enable = "neon")]
    pub unsafe fn neon(
        kernel: BwKernel,
        nt: bool,
        a: *mut f64,
        b: *mut f64,
        c: *mut f64,
        n: usize,
    ) -> f64 {
        const L: usize = 2;
        const U: usize = 8;
        let q = vdupq_n_f64(super::SCALAR_Q);
        let st = |p: *mut f64, v: float64x2_t| {
            if nt {
                let lo = vgetq_lane_f64::<0>(v);
                let hi = vgetq_lane_f64::<1>(v);
                core::arch::asm!("stnp {lo}, {hi}, [{p}]", lo = in(reg) lo.to_bits(), hi = in(reg) hi.to_bits(), p = in(reg) p, options(nostack));
            } else {
                vst1q_f64(p, v);
            }
        };
        match kernel {
            BwKernel::Read => {
                let mut s = [vdupq_n_f64(0.0); U];
                let mut i = 0;
                while i < n {
                    for (u, acc) in s.iter_mut().enumerate() {
                        *acc = vaddq_f64(*acc, vld1q_f64(a.add(i + u * L)));
                    }
                    i += U * L;
                }
                let t = s.iter().fold(vdupq_n_f64(0.0), |t, v| vaddq_f64(t, *v));
                vaddvq_f64(t)
            }
            BwKernel::Write => {
                let mut i = 0;
                while i < n {
                    for u in 0..U {
                        st(a.add(i + u * L), q);
                    }
                    i += U * L;
                }
                *a
            }
            BwKernel::Copy => {
                let mut i = 0;
                while i < n {
                    for u in 0..U {
                        st(c.add(i + u * L), vld1q_f64(a.add(i + u * L)));
                    }
                    i += U * L;
                }
                *c
            }
            BwKernel::Triad => {
                let mut i = 0;
                while i < n {
                    for u in 0..U {
                        let v =
                            vfmaq_f64(vld1q_f64(b.add(i + u * L)), q, vld1q_f64(c.add(i + u * L)));
                        st(a.add(i + u * L), v);
                    }
                    i += U * L;
                }
                *a
            }
        }
    }
}

/// Scalar kernels in inline assembly so the compiler cannot vectorise them:
/// one 64-bit load or store per element, unrolled by 8.
mod scalar {
    use super::BwKernel;

    #[allow(unused_variables)]
    pub unsafe fn run(
        kernel: BwKernel,
        nt: bool,
        a: *mut f64,
        b: *mut f64,
        c: *mut f64,
        n: usize,
    ) -> f64 {
        #[cfg(target_arch = "x86_64")]
        {
            x86(kernel, nt, a, b, c, n)
        }
        #[cfg(target_arch = "aarch64")]
        {
            arm(kernel, nt, a, b, c, n)
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            f64::NAN
        }
    }

    /// One pass of `kernel` over the arrays in x86-64 assembly (each
    /// kernel's loop in its own function below; the loops are what is timed).
    #[cfg(target_arch = "x86_64")]
    unsafe fn x86(
        kernel: BwKernel,
        nt: bool,
        a: *mut f64,
        b: *mut f64,
        c: *mut f64,
        n: usize,
    ) -> f64 {
        let end_a = a.add(n);
        match kernel {
            BwKernel::Read => x86_read(a, end_a),
            BwKernel::Write => x86_write(nt, a, end_a),
            BwKernel::Copy => x86_copy(nt, a, c, end_a),
            BwKernel::Triad => x86_triad(nt, a, b, c, end_a),
        }
    }

    /// Read: integer adds of the bit patterns into 4 accumulators.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    unsafe fn x86_read(a: *mut f64, end_a: *mut f64) -> f64 {
        use core::arch::asm;
        // Integer adds of the bit patterns: 8 independent accumulators,
        // one 8-byte load each (the sum is a checksum, not a float sum).
        let (mut s0, mut s1, mut s2, mut s3) = (0u64, 0u64, 0u64, 0u64);
        asm!(
            "2:",
            "add {s0}, [{p}]",
            "add {s1}, [{p} + 8]",
            "add {s2}, [{p} + 16]",
            "add {s3}, [{p} + 24]",
            "add {s0}, [{p} + 32]",
            "add {s1}, [{p} + 40]",
            "add {s2}, [{p} + 48]",
            "add {s3}, [{p} + 56]",
            "add {p}, 64",
            "cmp {p}, {e}",
            "jb 2b",
            p = inout(reg) a => _,
            e = in(reg) end_a,
            s0 = inout(reg) s0, s1 = inout(reg) s1, s2 = inout(reg) s2, s3 = inout(reg) s3,
            options(nostack, readonly)
        );
        (s0.wrapping_add(s1).wrapping_add(s2).wrapping_add(s3)) as f64
    }

    /// Write: 8-byte stores (`movnti` with `nt`) of one value.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    unsafe fn x86_write(nt: bool, a: *mut f64, end_a: *mut f64) -> f64 {
        use core::arch::asm;
        let v = super::SCALAR_Q.to_bits();
        if nt {
            asm!(
                "2:",
                "movnti [{p}], {v}", "movnti [{p} + 8], {v}", "movnti [{p} + 16], {v}", "movnti [{p} + 24], {v}",
                "movnti [{p} + 32], {v}", "movnti [{p} + 40], {v}", "movnti [{p} + 48], {v}", "movnti [{p} + 56], {v}",
                "add {p}, 64", "cmp {p}, {e}", "jb 2b", "sfence",
                p = inout(reg) a => _, e = in(reg) end_a, v = in(reg) v, options(nostack)
            );
        } else {
            asm!(
                "2:",
                "mov [{p}], {v}", "mov [{p} + 8], {v}", "mov [{p} + 16], {v}", "mov [{p} + 24], {v}",
                "mov [{p} + 32], {v}", "mov [{p} + 40], {v}", "mov [{p} + 48], {v}", "mov [{p} + 56], {v}",
                "add {p}, 64", "cmp {p}, {e}", "jb 2b",
                p = inout(reg) a => _, e = in(reg) end_a, v = in(reg) v, options(nostack)
            );
        }
        *a
    }

    /// Copy: c[i] = a[i] (`movnti` stores with `nt`).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    unsafe fn x86_copy(nt: bool, a: *mut f64, c: *mut f64, end_a: *mut f64) -> f64 {
        use core::arch::asm;
        // c[i] = a[i]; index register runs over both arrays.
        let d = (c as isize) - (a as isize);
        macro_rules! copy_loop {
            ($st:literal) => {
                asm!(
                    "2:",
                    "mov {t0}, [{p}]", "mov {t1}, [{p} + 8]", "mov {t2}, [{p} + 16]", "mov {t3}, [{p} + 24]",
                    concat!($st, " [{p} + {d}], {t0}"), concat!($st, " [{p} + {d} + 8], {t1}"),
                    concat!($st, " [{p} + {d} + 16], {t2}"), concat!($st, " [{p} + {d} + 24], {t3}"),
                    "mov {t0}, [{p} + 32]", "mov {t1}, [{p} + 40]", "mov {t2}, [{p} + 48]", "mov {t3}, [{p} + 56]",
                    concat!($st, " [{p} + {d} + 32], {t0}"), concat!($st, " [{p} + {d} + 40], {t1}"),
                    concat!($st, " [{p} + {d} + 48], {t2}"), concat!($st, " [{p} + {d} + 56], {t3}"),
                    "add {p}, 64", "cmp {p}, {e}", "jb 2b",
                    p = inout(reg) a => _, e = in(reg) end_a, d = in(reg) d,
                    t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _, t3 = out(reg) _,
                    options(nostack)
                )
            };
        }
        if nt {
            copy_loop!("movnti");
            asm!("sfence", options(nostack));
        } else {
            copy_loop!("mov");
        }
        *c
    }

    /// Triad: a[i] = b[i] + q * c[i] (`movnti` stores with `nt`).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    unsafe fn x86_triad(nt: bool, a: *mut f64, b: *mut f64, c: *mut f64, end_a: *mut f64) -> f64 {
        use core::arch::asm;
        // a[i] = b[i] + q * c[i] with scalar double SSE2 (mulsd/addsd).
        let db = (b as isize) - (a as isize);
        let dc = (c as isize) - (a as isize);
        let q = super::SCALAR_Q;
        if nt {
            asm!(
                "2:",
                ".rept 8",
                "movsd {x0}, [{p} + {dc}]",
                "mulsd {x0}, {q}",
                "addsd {x0}, [{p} + {db}]",
                "movq {t}, {x0}",
                "movnti [{p}], {t}",
                "add {p}, 8",
                ".endr",
                "cmp {p}, {e}",
                "jb 2b",
                "sfence",
                p = inout(reg) a => _, e = in(reg) end_a, db = in(reg) db, dc = in(reg) dc,
                q = in(xmm_reg) q, x0 = out(xmm_reg) _, t = out(reg) _,
                options(nostack)
            );
        } else {
            asm!(
                "2:",
                ".rept 8",
                "movsd {x0}, [{p} + {dc}]",
                "mulsd {x0}, {q}",
                "addsd {x0}, [{p} + {db}]",
                "movsd [{p}], {x0}",
                "add {p}, 8",
                ".endr",
                "cmp {p}, {e}",
                "jb 2b",
                p = inout(reg) a => _, e = in(reg) end_a, db = in(reg) db, dc = in(reg) dc,
                q = in(xmm_reg) q, x0 = out(xmm_reg) _,
                options(nostack)
            );
        }
        *a
    }

    #[cfg(target_arch = "aarch64")]
    unsafe fn arm(
        kernel: BwKernel,
        _nt: bool,
        a: *mut f64,
        b: *mut f64,
        c: *mut f64,
        n: usize,
    ) -> f64 {
        // Volatile accesses: one 64-bit load/store each, never vectorised.
        // (No scalar non-temporal store on AArch64 apart from stnp of a pair.)
        match kernel {
            BwKernel::Read => {
                let mut s = [0u64; 4];
                for i in (0..n).step_by(4) {
                    for (k, acc) in s.iter_mut().enumerate() {
                        *acc = acc.wrapping_add((a.add(i + k) as *const u64).read_volatile());
                    }
                }
                s.iter().fold(0u64, |x, y| x.wrapping_add(*y)) as f64
            }
            BwKernel::Write => {
                for i in 0..n {
                    a.add(i).write_volatile(super::SCALAR_Q);
                }
                *a
            }
            BwKernel::Copy => {
                for i in 0..n {
                    c.add(i).write_volatile(a.add(i).read_volatile());
                }
                *c
            }
            BwKernel::Triad => {
                for i in 0..n {
                    a.add(i).write_volatile(
                        b.add(i).read_volatile() + super::SCALAR_Q * c.add(i).read_volatile(),
                    );
                }
                *a
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The seeds' loops.

/// Seed 002's cache-line loop: `arr[i] *= 3` over every element (`step` = 1)
/// or every 16th (`step` = 16) of an `i32` array. Volatile accesses keep the
/// loop scalar, as the C original compiles at -O1/-O2 without vectorisation.
#[inline(never)]
pub fn cacheline_loop(arr: &mut [i32], step: usize) -> i64 {
    let step = step.max(1);
    let p = arr.as_mut_ptr();
    let n = arr.len();
    let mut i = 0;
    while i < n {
        // SAFETY: i < n = arr.len().
        unsafe {
            let q = p.add(i);
            q.write_volatile(q.read_volatile().wrapping_mul(3));
        }
        i += step;
    }
    // SAFETY: non-empty check not needed for n == 0: then return 0.
    if n == 0 {
        0
    } else {
        arr[0] as i64
    }
}

/// Seed 000's `memory_bound()`: flush the line of a byte, then load it;
/// `iters` times. Returns the sum of the loaded bytes. None when the
/// architecture has no user-level cache flush implemented here.
#[inline(never)]
pub fn clflush_loop(byte: &u8, iters: u64) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        let p = byte as *const u8;
        let mut sum = 0u64;
        for _ in 0..iters {
            // SAFETY: p points to a live byte; clflush on a readable address is
            // always allowed; the volatile read is in bounds.
            unsafe {
                std::arch::x86_64::_mm_clflush(p);
                sum = sum.wrapping_add(p.read_volatile() as u64);
            }
        }
        Some(sum)
    }
    #[cfg(target_arch = "aarch64")]
    {
        let p = byte as *const u8;
        let mut sum = 0u64;
        for _ in 0..iters {
            // SAFETY: `dc civac` on a readable address is allowed at EL0 on
            // Linux (SCTLR_EL1.UCI set); the read is in bounds.
            unsafe {
                core::arch::asm!("dc civac, {p}", p = in(reg) p, options(nostack, preserves_flags));
                sum = sum.wrapping_add(p.read_volatile() as u64);
            }
        }
        Some(sum)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (byte, iters);
        None
    }
}

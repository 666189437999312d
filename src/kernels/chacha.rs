//! ChaCha20 keystream (RFC 8439) in scalar and SIMD forms: one real
//! algorithm whose vector forms do the same work as the scalar one, so the
//! throughput of each SIMD width can be compared like for like.
//!
//! - `Scalar`: one 64-byte block at a time in general-purpose registers
//!   (an empty `asm!` barrier after each quarter round keeps the state in
//!   general registers, so the compiler cannot vectorise the "scalar" form).
//! - `Sse2` (4 blocks), `Avx2` (8 blocks), `Avx512` (16 blocks) on x86_64 and
//!   `Neon` (4 blocks) on aarch64: the "vertical" layout, where vector
//!   register `i` holds state word `i` of several blocks (block counters
//!   `n, n+1, ...`), then a transpose writes whole blocks in order.
//! - `Sve` on aarch64 with SVE: the same vertical layout at the CPU's own
//!   vector length (VL/32 blocks: 4 at 128 bits, 16 at 512), written in
//!   vector-length-agnostic inline assembly (SVE intrinsics are not stable in
//!   Rust); rotations by 16 are `revh`, the others shift-shift-or, and each
//!   state word is written to its blocks with one scatter store.
//!
//! Every form writes exactly the same bytes for the same key, nonce and
//! counter; [`keystream`] checks that the form is supported by the running
//! CPU before it calls it. No allocation, no I/O.

/// Bytes per ChaCha20 block.
pub const BLOCK_BYTES: usize = 64;
/// Blocks per timed iteration of [`run`]: 4 KiB of keystream (stays in L1).
pub const CHUNK_BLOCKS: usize = 64;
/// Bytes per timed iteration of [`run`].
pub const CHUNK_BYTES: usize = CHUNK_BLOCKS * BLOCK_BYTES;

const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// One implementation of the block function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    Scalar,
    Sse2,
    Avx2,
    Avx512,
    Neon,
    Sve,
}

impl Variant {
    /// Every variant, narrowest first.
    pub const ALL: [Variant; 6] = [
        Variant::Scalar,
        Variant::Sse2,
        Variant::Avx2,
        Variant::Avx512,
        Variant::Neon,
        Variant::Sve,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Scalar => "scalar",
            Variant::Sse2 => "sse2",
            Variant::Avx2 => "avx2",
            Variant::Avx512 => "avx512",
            Variant::Neon => "neon",
            Variant::Sve => "sve",
        }
    }

    /// Parse a variant name (as printed by [`Variant::name`]).
    pub fn parse(s: &str) -> Option<Variant> {
        let t = s.trim().to_ascii_lowercase();
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == t || (t == "avx-512" && *v == Variant::Avx512))
    }

    /// Blocks computed together (SVE: the running CPU's vector length / 32;
    /// 0 where there is no SVE).
    pub fn lanes(self) -> usize {
        match self {
            Variant::Scalar => 1,
            Variant::Sse2 | Variant::Neon => 4,
            Variant::Avx2 => 8,
            Variant::Avx512 => 16,
            Variant::Sve => self.width_bits() as usize / 32,
        }
    }

    /// Register width used, in bits (32 for the scalar form: 32-bit words;
    /// SVE: the running CPU's vector length, 0 where there is no SVE).
    pub fn width_bits(self) -> u32 {
        match self {
            Variant::Scalar => 32,
            Variant::Sse2 | Variant::Neon => 128,
            Variant::Avx2 => 256,
            Variant::Avx512 => 512,
            Variant::Sve => super::sve_vector_bits().unwrap_or(0),
        }
    }

    /// None when the running CPU (and this build) can run the variant,
    /// else why not.
    pub fn unsupported_reason(self) -> Option<String> {
        match self {
            Variant::Scalar => None,
            Variant::Sse2 | Variant::Avx2 | Variant::Avx512 => x86_reason(self),
            Variant::Neon => neon_reason(),
            Variant::Sve => super::sve_unsupported_reason(),
        }
    }

    pub fn supported(self) -> bool {
        self.unsupported_reason().is_none()
    }
}

#[cfg(target_arch = "x86_64")]
fn x86_reason(v: Variant) -> Option<String> {
    let ok = match v {
        Variant::Sse2 => is_x86_feature_detected!("sse2"),
        Variant::Avx2 => is_x86_feature_detected!("avx2"),
        Variant::Avx512 => is_x86_feature_detected!("avx512f"),
        _ => true,
    };
    if ok {
        None
    } else {
        Some(format!(
            "the CPU (or the OS: register state not enabled in XCR0) does not support {}",
            match v {
                Variant::Sse2 => "SSE2",
                Variant::Avx2 => "AVX2",
                _ => "AVX-512F",
            }
        ))
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn x86_reason(v: Variant) -> Option<String> {
    Some(format!(
        "{} is an x86_64 instruction set; this is {}",
        v.name(),
        std::env::consts::ARCH
    ))
}

#[cfg(target_arch = "aarch64")]
fn neon_reason() -> Option<String> {
    if std::arch::is_aarch64_feature_detected!("neon") {
        None
    } else {
        Some("the CPU does not report Advanced SIMD (NEON)".into())
    }
}

#[cfg(not(target_arch = "aarch64"))]
fn neon_reason() -> Option<String> {
    Some(format!(
        "NEON is an aarch64 instruction set; this is {}",
        std::env::consts::ARCH
    ))
}

/// The 16-word initial state for a key, block counter and nonce.
pub fn initial_state(key: &[u8; 32], counter: u32, nonce: &[u8; 12]) -> [u32; 16] {
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&SIGMA);
    for i in 0..8 {
        s[4 + i] = u32::from_le_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]]);
    }
    s[12] = counter;
    for i in 0..3 {
        s[13 + i] = u32::from_le_bytes([
            nonce[4 * i],
            nonce[4 * i + 1],
            nonce[4 * i + 2],
            nonce[4 * i + 3],
        ]);
    }
    s
}

/// Write `out.len() / 64` keystream blocks for `key`/`nonce`, block counters
/// from `counter` up, with `variant`. `out.len()` must be a multiple of 64.
pub fn keystream(
    variant: Variant,
    key: &[u8; 32],
    nonce: &[u8; 12],
    counter: u32,
    out: &mut [u8],
) -> Result<(), String> {
    if let Some(r) = variant.unsupported_reason() {
        return Err(format!("ChaCha20 {} not available: {r}", variant.name()));
    }
    if !out.len().is_multiple_of(BLOCK_BYTES) {
        return Err(format!(
            "keystream length {} is not a multiple of {BLOCK_BYTES} bytes",
            out.len()
        ));
    }
    let st = initial_state(key, counter, nonce);
    // SAFETY: support was checked above; the length is a multiple of 64.
    unsafe { fill(variant, &st, out) };
    Ok(())
}

/// Fill `out` (a multiple of 64 bytes) with blocks starting at `st[12]`.
///
/// # Safety
/// `variant` must be supported by the running CPU.
#[inline]
unsafe fn fill(variant: Variant, st: &[u32; 16], out: &mut [u8]) {
    let nblocks = out.len() / BLOCK_BYTES;
    let lanes = variant.lanes();
    let mut s = *st;
    let mut b = 0;
    let p = out.as_mut_ptr();
    while b + lanes <= nblocks && lanes > 1 {
        let dst = p.add(b * BLOCK_BYTES);
        match variant {
            #[cfg(target_arch = "x86_64")]
            Variant::Sse2 => x86::blocks_sse2(&s, dst),
            #[cfg(target_arch = "x86_64")]
            Variant::Avx2 => x86::blocks_avx2(&s, dst),
            #[cfg(target_arch = "x86_64")]
            Variant::Avx512 => x86::blocks_avx512(&s, dst),
            #[cfg(target_arch = "aarch64")]
            Variant::Neon => arm::blocks_neon(&s, dst),
            #[cfg(target_arch = "aarch64")]
            Variant::Sve => arm::blocks_sve(&s, dst),
            _ => break,
        }
        s[12] = s[12].wrapping_add(lanes as u32);
        b += lanes;
    }
    while b < nblocks {
        let blk = &mut out[b * BLOCK_BYTES..(b + 1) * BLOCK_BYTES];
        block_scalar(&s, blk);
        s[12] = s[12].wrapping_add(1);
        b += 1;
    }
}

/// The operand modifier that names a register's 32-bit form (`eax`, `w0`),
/// so the barrier's comment reads true on both architectures.
#[cfg(target_arch = "x86_64")]
macro_rules! reg32 {
    () => {
        "e"
    };
}
#[cfg(target_arch = "aarch64")]
macro_rules! reg32 {
    () => {
        "w"
    };
}

/// Keep four words in general-purpose registers at this point: an empty
/// `asm!` with register operands emits no instruction but stops the
/// compiler from merging the scalar quarter rounds into vector code.
#[inline(always)]
fn gpr_barrier(a: &mut u32, b: &mut u32, c: &mut u32, d: &mut u32) {
    // SAFETY: the template is a comment; it only pins the operands to registers.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    unsafe {
        core::arch::asm!(
            concat!(
                "/* {0:",
                reg32!(),
                "} {1:",
                reg32!(),
                "} {2:",
                reg32!(),
                "} {3:",
                reg32!(),
                "} */"
            ),
            inout(reg) * a,
            inout(reg) * b,
            inout(reg) * c,
            inout(reg) * d,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (a, b, c, d);
    }
}

macro_rules! qr_scalar {
    ($x:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {{
        let (mut a, mut b, mut c, mut d) = ($x[$a], $x[$b], $x[$c], $x[$d]);
        a = a.wrapping_add(b);
        d = (d ^ a).rotate_left(16);
        c = c.wrapping_add(d);
        b = (b ^ c).rotate_left(12);
        a = a.wrapping_add(b);
        d = (d ^ a).rotate_left(8);
        c = c.wrapping_add(d);
        b = (b ^ c).rotate_left(7);
        gpr_barrier(&mut a, &mut b, &mut c, &mut d);
        $x[$a] = a;
        $x[$b] = b;
        $x[$c] = c;
        $x[$d] = d;
    }};
}

/// One block, scalar. `out` is 64 bytes.
fn block_scalar(st: &[u32; 16], out: &mut [u8]) {
    let mut x = *st;
    for _ in 0..10 {
        qr_scalar!(x, 0, 4, 8, 12);
        qr_scalar!(x, 1, 5, 9, 13);
        qr_scalar!(x, 2, 6, 10, 14);
        qr_scalar!(x, 3, 7, 11, 15);
        qr_scalar!(x, 0, 5, 10, 15);
        qr_scalar!(x, 1, 6, 11, 12);
        qr_scalar!(x, 2, 7, 8, 13);
        qr_scalar!(x, 3, 4, 9, 14);
    }
    for (i, w) in x.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.wrapping_add(st[i]).to_le_bytes());
    }
}

/// Quarter round on vector "registers" `$v[a..d]` with the given add, xor
/// and rotate functions (vertical layout: one state word per register).
macro_rules! qr_vec {
    ($v:ident, $add:ident, $xor:ident, $r16:ident, $r12:ident, $r8:ident, $r7:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {{
        $v[$a] = $add($v[$a], $v[$b]);
        $v[$d] = $r16($xor($v[$d], $v[$a]));
        $v[$c] = $add($v[$c], $v[$d]);
        $v[$b] = $r12($xor($v[$b], $v[$c]));
        $v[$a] = $add($v[$a], $v[$b]);
        $v[$d] = $r8($xor($v[$d], $v[$a]));
        $v[$c] = $add($v[$c], $v[$d]);
        $v[$b] = $r7($xor($v[$b], $v[$c]));
    }};
}

/// Twenty rounds (ten double rounds) on a vertical state.
macro_rules! rounds_vec {
    ($v:ident, $add:ident, $xor:ident, $r16:ident, $r12:ident, $r8:ident, $r7:ident) => {{
        for _ in 0..10 {
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 0, 4, 8, 12);
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 1, 5, 9, 13);
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 2, 6, 10, 14);
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 3, 7, 11, 15);
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 0, 5, 10, 15);
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 1, 6, 11, 12);
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 2, 7, 8, 13);
            qr_vec!($v, $add, $xor, $r16, $r12, $r8, $r7, 3, 4, 9, 14);
        }
    }};
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::needless_range_loop)] // word/block indices mirror the layout
mod x86 {
    use core::arch::x86_64::*;

    // ---- SSE2: 4 blocks ----
    #[inline(always)]
    unsafe fn add4(a: __m128i, b: __m128i) -> __m128i {
        _mm_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn xor4(a: __m128i, b: __m128i) -> __m128i {
        _mm_xor_si128(a, b)
    }
    #[inline(always)]
    unsafe fn r16_4(x: __m128i) -> __m128i {
        _mm_or_si128(_mm_slli_epi32::<16>(x), _mm_srli_epi32::<16>(x))
    }
    #[inline(always)]
    unsafe fn r12_4(x: __m128i) -> __m128i {
        _mm_or_si128(_mm_slli_epi32::<12>(x), _mm_srli_epi32::<20>(x))
    }
    #[inline(always)]
    unsafe fn r8_4(x: __m128i) -> __m128i {
        _mm_or_si128(_mm_slli_epi32::<8>(x), _mm_srli_epi32::<24>(x))
    }
    #[inline(always)]
    unsafe fn r7_4(x: __m128i) -> __m128i {
        _mm_or_si128(_mm_slli_epi32::<7>(x), _mm_srli_epi32::<25>(x))
    }

    /// 4x4 transpose of 32-bit words inside each 128-bit lane: returns,
    /// per lane, [a_i b_i c_i d_i] for i = 0..3.
    macro_rules! transpose4 {
        ($unlo32:ident, $unhi32:ident, $unlo64:ident, $unhi64:ident, $a:expr, $b:expr, $c:expr, $d:expr) => {{
            let t0 = $unlo32($a, $b);
            let t1 = $unlo32($c, $d);
            let t2 = $unhi32($a, $b);
            let t3 = $unhi32($c, $d);
            [
                $unlo64(t0, t1),
                $unhi64(t0, t1),
                $unlo64(t2, t3),
                $unhi64(t2, t3),
            ]
        }};
    }

    /// Four blocks from `st` (counters st[12]..st[12]+3) to `out` (256 bytes).
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn blocks_sse2(st: &[u32; 16], out: *mut u8) {
        let mut v = [_mm_setzero_si128(); 16];
        for (i, r) in v.iter_mut().enumerate() {
            *r = _mm_set1_epi32(st[i] as i32);
        }
        v[12] = _mm_add_epi32(v[12], _mm_setr_epi32(0, 1, 2, 3));
        let orig = v;
        rounds_vec!(v, add4, xor4, r16_4, r12_4, r8_4, r7_4);
        for i in 0..16 {
            v[i] = _mm_add_epi32(v[i], orig[i]);
        }
        for g in 0..4 {
            let r = transpose4!(
                _mm_unpacklo_epi32,
                _mm_unpackhi_epi32,
                _mm_unpacklo_epi64,
                _mm_unpackhi_epi64,
                v[4 * g],
                v[4 * g + 1],
                v[4 * g + 2],
                v[4 * g + 3]
            );
            for (b, x) in r.iter().enumerate() {
                _mm_storeu_si128(out.add(b * 64 + g * 16) as *mut __m128i, *x);
            }
        }
    }

    // ---- AVX2: 8 blocks ----
    #[inline(always)]
    unsafe fn add8(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn xor8(a: __m256i, b: __m256i) -> __m256i {
        _mm256_xor_si256(a, b)
    }
    #[inline(always)]
    unsafe fn r16_8(x: __m256i) -> __m256i {
        let m = _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11,
            8, 9, 14, 15, 12, 13,
        );
        _mm256_shuffle_epi8(x, m)
    }
    #[inline(always)]
    unsafe fn r12_8(x: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_slli_epi32::<12>(x), _mm256_srli_epi32::<20>(x))
    }
    #[inline(always)]
    unsafe fn r8_8(x: __m256i) -> __m256i {
        let m = _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9,
            10, 15, 12, 13, 14,
        );
        _mm256_shuffle_epi8(x, m)
    }
    #[inline(always)]
    unsafe fn r7_8(x: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_slli_epi32::<7>(x), _mm256_srli_epi32::<25>(x))
    }

    /// Eight blocks (counters st[12]..st[12]+7) to `out` (512 bytes).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn blocks_avx2(st: &[u32; 16], out: *mut u8) {
        let mut v = [_mm256_setzero_si256(); 16];
        for (i, r) in v.iter_mut().enumerate() {
            *r = _mm256_set1_epi32(st[i] as i32);
        }
        v[12] = _mm256_add_epi32(v[12], _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        let orig = v;
        rounds_vec!(v, add8, xor8, r16_8, r12_8, r8_8, r7_8);
        for i in 0..16 {
            v[i] = _mm256_add_epi32(v[i], orig[i]);
        }
        // Per group g of 4 words: t[g][b] = [block b words 4g.. | block b+4 words 4g..].
        let mut t = [[_mm256_setzero_si256(); 4]; 4];
        for (g, tg) in t.iter_mut().enumerate() {
            *tg = transpose4!(
                _mm256_unpacklo_epi32,
                _mm256_unpackhi_epi32,
                _mm256_unpacklo_epi64,
                _mm256_unpackhi_epi64,
                v[4 * g],
                v[4 * g + 1],
                v[4 * g + 2],
                v[4 * g + 3]
            );
        }
        for b in 0..4 {
            for half in 0..2 {
                let (x, y) = (t[2 * half][b], t[2 * half + 1][b]);
                let lo = _mm256_permute2x128_si256::<0x20>(x, y);
                let hi = _mm256_permute2x128_si256::<0x31>(x, y);
                _mm256_storeu_si256(out.add(b * 64 + half * 32) as *mut __m256i, lo);
                _mm256_storeu_si256(out.add((b + 4) * 64 + half * 32) as *mut __m256i, hi);
            }
        }
    }

    // ---- AVX-512: 16 blocks ----
    #[inline(always)]
    unsafe fn add16(a: __m512i, b: __m512i) -> __m512i {
        _mm512_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn xor16(a: __m512i, b: __m512i) -> __m512i {
        _mm512_xor_si512(a, b)
    }
    #[inline(always)]
    unsafe fn r16_16(x: __m512i) -> __m512i {
        _mm512_rol_epi32::<16>(x)
    }
    #[inline(always)]
    unsafe fn r12_16(x: __m512i) -> __m512i {
        _mm512_rol_epi32::<12>(x)
    }
    #[inline(always)]
    unsafe fn r8_16(x: __m512i) -> __m512i {
        _mm512_rol_epi32::<8>(x)
    }
    #[inline(always)]
    unsafe fn r7_16(x: __m512i) -> __m512i {
        _mm512_rol_epi32::<7>(x)
    }

    /// Sixteen blocks (counters st[12]..st[12]+15) to `out` (1024 bytes).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn blocks_avx512(st: &[u32; 16], out: *mut u8) {
        let mut v = [_mm512_setzero_si512(); 16];
        for (i, r) in v.iter_mut().enumerate() {
            *r = _mm512_set1_epi32(st[i] as i32);
        }
        v[12] = _mm512_add_epi32(
            v[12],
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        );
        let orig = v;
        rounds_vec!(v, add16, xor16, r16_16, r12_16, r8_16, r7_16);
        for i in 0..16 {
            v[i] = _mm512_add_epi32(v[i], orig[i]);
        }
        // t[g][b]: 128-bit chunks [blk b | blk b+4 | blk b+8 | blk b+12], words 4g..4g+3.
        let mut t = [[_mm512_setzero_si512(); 4]; 4];
        for (g, tg) in t.iter_mut().enumerate() {
            *tg = transpose4!(
                _mm512_unpacklo_epi32,
                _mm512_unpackhi_epi32,
                _mm512_unpacklo_epi64,
                _mm512_unpackhi_epi64,
                v[4 * g],
                v[4 * g + 1],
                v[4 * g + 2],
                v[4 * g + 3]
            );
        }
        for b in 0..4 {
            // Transpose the 4x4 matrix of 128-bit chunks (rows g, columns j).
            let a = _mm512_shuffle_i32x4::<0x44>(t[0][b], t[1][b]);
            let c = _mm512_shuffle_i32x4::<0x44>(t[2][b], t[3][b]);
            let bb = _mm512_shuffle_i32x4::<0xEE>(t[0][b], t[1][b]);
            let d = _mm512_shuffle_i32x4::<0xEE>(t[2][b], t[3][b]);
            let r0 = _mm512_shuffle_i32x4::<0x88>(a, c);
            let r1 = _mm512_shuffle_i32x4::<0xDD>(a, c);
            let r2 = _mm512_shuffle_i32x4::<0x88>(bb, d);
            let r3 = _mm512_shuffle_i32x4::<0xDD>(bb, d);
            _mm512_storeu_si512(out.add(b * 64) as *mut __m512i, r0);
            _mm512_storeu_si512(out.add((b + 4) * 64) as *mut __m512i, r1);
            _mm512_storeu_si512(out.add((b + 8) * 64) as *mut __m512i, r2);
            _mm512_storeu_si512(out.add((b + 12) * 64) as *mut __m512i, r3);
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use core::arch::aarch64::*;

    #[inline(always)]
    unsafe fn add4(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
        vaddq_u32(a, b)
    }
    #[inline(always)]
    unsafe fn xor4(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
        veorq_u32(a, b)
    }
    #[inline(always)]
    unsafe fn r16_4(x: uint32x4_t) -> uint32x4_t {
        vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(x)))
    }
    #[inline(always)]
    unsafe fn r12_4(x: uint32x4_t) -> uint32x4_t {
        vsriq_n_u32::<20>(vshlq_n_u32::<12>(x), x)
    }
    #[inline(always)]
    unsafe fn r8_4(x: uint32x4_t) -> uint32x4_t {
        vsriq_n_u32::<24>(vshlq_n_u32::<8>(x), x)
    }
    #[inline(always)]
    unsafe fn r7_4(x: uint32x4_t) -> uint32x4_t {
        vsriq_n_u32::<25>(vshlq_n_u32::<7>(x), x)
    }

    /// Four blocks (counters st[12]..st[12]+3) to `out` (256 bytes).
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn blocks_neon(st: &[u32; 16], out: *mut u8) {
        let mut v = [vdupq_n_u32(0); 16];
        for (i, r) in v.iter_mut().enumerate() {
            *r = vdupq_n_u32(st[i]);
        }
        let ctr: [u32; 4] = [0, 1, 2, 3];
        v[12] = vaddq_u32(v[12], vld1q_u32(ctr.as_ptr()));
        let orig = v;
        rounds_vec!(v, add4, xor4, r16_4, r12_4, r8_4, r7_4);
        for i in 0..16 {
            v[i] = vaddq_u32(v[i], orig[i]);
        }
        for g in 0..4 {
            let (a, b, c, d) = (v[4 * g], v[4 * g + 1], v[4 * g + 2], v[4 * g + 3]);
            let t0 = vreinterpretq_u64_u32(vtrn1q_u32(a, b));
            let t1 = vreinterpretq_u64_u32(vtrn2q_u32(a, b));
            let t2 = vreinterpretq_u64_u32(vtrn1q_u32(c, d));
            let t3 = vreinterpretq_u64_u32(vtrn2q_u32(c, d));
            let r = [
                vtrn1q_u64(t0, t2),
                vtrn1q_u64(t1, t3),
                vtrn2q_u64(t0, t2),
                vtrn2q_u64(t1, t3),
            ];
            for (blk, x) in r.iter().enumerate() {
                vst1q_u8(out.add(blk * 64 + g * 16), vreinterpretq_u8_u64(*x));
            }
        }
    }

    /// VL/32 blocks (counters st[12], st[12]+1, ...) to `out` (2 × VL bytes),
    /// SVE at the CPU's vector length. z0..z15 hold the state words (lane k
    /// = block k), z16..z19 the rotations' temporaries, z20 the lane index
    /// 0, 1, 2, ..., z22 the byte offset of each lane's block (64 × k).
    #[target_feature(enable = "sve")]
    pub(super) unsafe fn blocks_sve(st: &[u32; 16], out: *mut u8) {
        core::arch::asm!(
            "ptrue p0.s",
            "ld1rw {{z0.s}}, p0/z, [{st}, #0]", "ld1rw {{z1.s}}, p0/z, [{st}, #4]", "ld1rw {{z2.s}}, p0/z, [{st}, #8]", "ld1rw {{z3.s}}, p0/z, [{st}, #12]",
            "ld1rw {{z4.s}}, p0/z, [{st}, #16]", "ld1rw {{z5.s}}, p0/z, [{st}, #20]", "ld1rw {{z6.s}}, p0/z, [{st}, #24]", "ld1rw {{z7.s}}, p0/z, [{st}, #28]",
            "ld1rw {{z8.s}}, p0/z, [{st}, #32]", "ld1rw {{z9.s}}, p0/z, [{st}, #36]", "ld1rw {{z10.s}}, p0/z, [{st}, #40]", "ld1rw {{z11.s}}, p0/z, [{st}, #44]",
            "ld1rw {{z12.s}}, p0/z, [{st}, #48]", "ld1rw {{z13.s}}, p0/z, [{st}, #52]", "ld1rw {{z14.s}}, p0/z, [{st}, #56]", "ld1rw {{z15.s}}, p0/z, [{st}, #60]",
            "index z20.s, #0, #1",
            "add z12.s, z12.s, z20.s",
            "mov {n}, #10",
            "2:",
            // Column round.
            "add z0.s, z0.s, z4.s", "add z1.s, z1.s, z5.s", "add z2.s, z2.s, z6.s", "add z3.s, z3.s, z7.s",
            "eor z12.d, z12.d, z0.d", "eor z13.d, z13.d, z1.d", "eor z14.d, z14.d, z2.d", "eor z15.d, z15.d, z3.d",
            "revh z12.s, p0/m, z12.s", "revh z13.s, p0/m, z13.s", "revh z14.s, p0/m, z14.s", "revh z15.s, p0/m, z15.s",
            "add z8.s, z8.s, z12.s", "add z9.s, z9.s, z13.s", "add z10.s, z10.s, z14.s", "add z11.s, z11.s, z15.s",
            "eor z4.d, z4.d, z8.d", "eor z5.d, z5.d, z9.d", "eor z6.d, z6.d, z10.d", "eor z7.d, z7.d, z11.d",
            "lsl z16.s, z4.s, #12", "lsl z17.s, z5.s, #12", "lsl z18.s, z6.s, #12", "lsl z19.s, z7.s, #12",
            "lsr z4.s, z4.s, #20", "lsr z5.s, z5.s, #20", "lsr z6.s, z6.s, #20", "lsr z7.s, z7.s, #20",
            "orr z4.d, z4.d, z16.d", "orr z5.d, z5.d, z17.d", "orr z6.d, z6.d, z18.d", "orr z7.d, z7.d, z19.d",
            "add z0.s, z0.s, z4.s", "add z1.s, z1.s, z5.s", "add z2.s, z2.s, z6.s", "add z3.s, z3.s, z7.s",
            "eor z12.d, z12.d, z0.d", "eor z13.d, z13.d, z1.d", "eor z14.d, z14.d, z2.d", "eor z15.d, z15.d, z3.d",
            "lsl z16.s, z12.s, #8", "lsl z17.s, z13.s, #8", "lsl z18.s, z14.s, #8", "lsl z19.s, z15.s, #8",
            "lsr z12.s, z12.s, #24", "lsr z13.s, z13.s, #24", "lsr z14.s, z14.s, #24", "lsr z15.s, z15.s, #24",
            "orr z12.d, z12.d, z16.d", "orr z13.d, z13.d, z17.d", "orr z14.d, z14.d, z18.d", "orr z15.d, z15.d, z19.d",
            "add z8.s, z8.s, z12.s", "add z9.s, z9.s, z13.s", "add z10.s, z10.s, z14.s", "add z11.s, z11.s, z15.s",
            "eor z4.d, z4.d, z8.d", "eor z5.d, z5.d, z9.d", "eor z6.d, z6.d, z10.d", "eor z7.d, z7.d, z11.d",
            "lsl z16.s, z4.s, #7", "lsl z17.s, z5.s, #7", "lsl z18.s, z6.s, #7", "lsl z19.s, z7.s, #7",
            "lsr z4.s, z4.s, #25", "lsr z5.s, z5.s, #25", "lsr z6.s, z6.s, #25", "lsr z7.s, z7.s, #25",
            "orr z4.d, z4.d, z16.d", "orr z5.d, z5.d, z17.d", "orr z6.d, z6.d, z18.d", "orr z7.d, z7.d, z19.d",
            // Diagonal round.
            "add z0.s, z0.s, z5.s", "add z1.s, z1.s, z6.s", "add z2.s, z2.s, z7.s", "add z3.s, z3.s, z4.s",
            "eor z15.d, z15.d, z0.d", "eor z12.d, z12.d, z1.d", "eor z13.d, z13.d, z2.d", "eor z14.d, z14.d, z3.d",
            "revh z15.s, p0/m, z15.s", "revh z12.s, p0/m, z12.s", "revh z13.s, p0/m, z13.s", "revh z14.s, p0/m, z14.s",
            "add z10.s, z10.s, z15.s", "add z11.s, z11.s, z12.s", "add z8.s, z8.s, z13.s", "add z9.s, z9.s, z14.s",
            "eor z5.d, z5.d, z10.d", "eor z6.d, z6.d, z11.d", "eor z7.d, z7.d, z8.d", "eor z4.d, z4.d, z9.d",
            "lsl z16.s, z5.s, #12", "lsl z17.s, z6.s, #12", "lsl z18.s, z7.s, #12", "lsl z19.s, z4.s, #12",
            "lsr z5.s, z5.s, #20", "lsr z6.s, z6.s, #20", "lsr z7.s, z7.s, #20", "lsr z4.s, z4.s, #20",
            "orr z5.d, z5.d, z16.d", "orr z6.d, z6.d, z17.d", "orr z7.d, z7.d, z18.d", "orr z4.d, z4.d, z19.d",
            "add z0.s, z0.s, z5.s", "add z1.s, z1.s, z6.s", "add z2.s, z2.s, z7.s", "add z3.s, z3.s, z4.s",
            "eor z15.d, z15.d, z0.d", "eor z12.d, z12.d, z1.d", "eor z13.d, z13.d, z2.d", "eor z14.d, z14.d, z3.d",
            "lsl z16.s, z15.s, #8", "lsl z17.s, z12.s, #8", "lsl z18.s, z13.s, #8", "lsl z19.s, z14.s, #8",
            "lsr z15.s, z15.s, #24", "lsr z12.s, z12.s, #24", "lsr z13.s, z13.s, #24", "lsr z14.s, z14.s, #24",
            "orr z15.d, z15.d, z16.d", "orr z12.d, z12.d, z17.d", "orr z13.d, z13.d, z18.d", "orr z14.d, z14.d, z19.d",
            "add z10.s, z10.s, z15.s", "add z11.s, z11.s, z12.s", "add z8.s, z8.s, z13.s", "add z9.s, z9.s, z14.s",
            "eor z5.d, z5.d, z10.d", "eor z6.d, z6.d, z11.d", "eor z7.d, z7.d, z8.d", "eor z4.d, z4.d, z9.d",
            "lsl z16.s, z5.s, #7", "lsl z17.s, z6.s, #7", "lsl z18.s, z7.s, #7", "lsl z19.s, z4.s, #7",
            "lsr z5.s, z5.s, #25", "lsr z6.s, z6.s, #25", "lsr z7.s, z7.s, #25", "lsr z4.s, z4.s, #25",
            "orr z5.d, z5.d, z16.d", "orr z6.d, z6.d, z17.d", "orr z7.d, z7.d, z18.d", "orr z4.d, z4.d, z19.d",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            // Add the input state (word 12: each lane its own counter).
            "ld1rw {{z21.s}}, p0/z, [{st}, #0]", "add z0.s, z0.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #4]", "add z1.s, z1.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #8]", "add z2.s, z2.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #12]", "add z3.s, z3.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #16]", "add z4.s, z4.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #20]", "add z5.s, z5.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #24]", "add z6.s, z6.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #28]", "add z7.s, z7.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #32]", "add z8.s, z8.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #36]", "add z9.s, z9.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #40]", "add z10.s, z10.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #44]", "add z11.s, z11.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #48]", "add z12.s, z12.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #52]", "add z13.s, z13.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #56]", "add z14.s, z14.s, z21.s",
            "ld1rw {{z21.s}}, p0/z, [{st}, #60]", "add z15.s, z15.s, z21.s",
            "add z12.s, z12.s, z20.s",
            // Lane k is block k: word j goes to out + 64k + 4j (scatter, 32-bit offsets).
            "mov {t:w}, #64",
            "index z22.s, #0, {t:w}",
            "st1w {{z0.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z1.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z2.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z3.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z4.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z5.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z6.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z7.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z8.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z9.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z10.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z11.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z12.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z13.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z14.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            "st1w {{z15.s}}, p0, [{out}, z22.s, uxtw]", "add {out}, {out}, #4",
            st = in(reg) st.as_ptr(),
            out = inout(reg) out => _,
            n = out(reg) _,
            t = out(reg) _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _, out("v5") _,
            out("v6") _, out("v7") _, out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _, out("v16") _, out("v17") _,
            out("v18") _, out("v19") _, out("v20") _, out("v21") _, out("v22") _,
            out("p0") _,
            options(nostack)
        );
    }
}

#[repr(C, align(64))]
struct Chunk([u8; CHUNK_BYTES]);

/// Key and nonce used by the throughput kernel (any fixed values do).
const BENCH_KEY: [u8; 32] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
];
const BENCH_NONCE: [u8; 12] = [0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0];

/// Throughput kernel: `iters` chunks of [`CHUNK_BYTES`] keystream into a
/// stack buffer (block counters continue from `seed`); returns a value
/// derived from every chunk. The caller must have checked support
/// (an unsupported variant falls back to scalar rather than fault).
#[inline(never)]
pub fn run(variant: Variant, iters: u64, seed: u64) -> u64 {
    let v = if variant.supported() {
        variant
    } else {
        Variant::Scalar
    };
    let mut buf = Chunk([0u8; CHUNK_BYTES]);
    let mut st = initial_state(&BENCH_KEY, seed as u32, &BENCH_NONCE);
    let mut acc = 0u64;
    for _ in 0..iters {
        // SAFETY: `v` is supported (checked above); the buffer is a multiple of 64.
        unsafe { fill(v, &st, &mut buf.0) };
        std::hint::black_box(&mut buf);
        let w = u64::from_le_bytes([
            buf.0[0], buf.0[1], buf.0[2], buf.0[3], buf.0[4], buf.0[5], buf.0[6], buf.0[7],
        ]);
        acc = acc.rotate_left(5) ^ w;
        st[12] = st[12].wrapping_add(CHUNK_BLOCKS as u32);
    }
    acc
}

/// 64-bit FNV-1a digest of a byte string (to compare variants' output).
pub fn digest(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Digest of the verification stream: `blocks` blocks of the RFC 8439
/// section 2.3.2 key and nonce from counter 1 (`blocks` should be a
/// multiple of 16 plus a few, so every form runs its vector path and its
/// scalar tail). `buf` must hold `blocks * 64` bytes.
pub fn verification_digest(variant: Variant, buf: &mut [u8]) -> Result<u64, String> {
    keystream(variant, &RFC_KEY, &RFC_NONCE_232, 1, buf)?;
    Ok(digest(buf))
}

/// RFC 8439 section 2.3.2 key (00 01 .. 1f).
pub const RFC_KEY: [u8; 32] = BENCH_KEY;
/// RFC 8439 section 2.3.2 nonce.
pub const RFC_NONCE_232: [u8; 12] = [0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0];
/// RFC 8439 section 2.3.2 serialized block (key above, counter 1).
pub const RFC_BLOCK_232: [u8; 64] = [
    0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4,
    0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e,
    0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2,
    0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e,
];
/// RFC 8439 section 2.4.2 nonce (the "sunscreen" encryption example).
pub const RFC_NONCE_242: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0];
/// RFC 8439 section 2.4.2 plaintext.
pub const RFC_PLAINTEXT_242: &[u8] = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
/// RFC 8439 section 2.4.2 ciphertext (key as above, counter 1).
pub const RFC_CIPHERTEXT_242: [u8; 114] = [
    0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81,
    0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b,
    0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57,
    0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8,
    0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e,
    0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36,
    0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
    0x87, 0x4d,
];

/// Check a variant against the RFC 8439 test vectors (2.3.2 block function,
/// 2.4.2 encryption). The vector forms compute several blocks at once, so
/// each vector is placed at every lane position of a longer stream.
pub fn check_rfc8439(variant: Variant) -> Result<(), String> {
    let lanes = variant.lanes();
    // 2.3.2: block with counter 1, at lane position p (stream starts at 1 - p).
    // 128 blocks: two vector steps even at SVE's longest length (64 lanes).
    let mut buf = [0u8; 128 * BLOCK_BYTES];
    for p in 0..lanes {
        let start = 1u32.wrapping_sub(p as u32);
        keystream(variant, &RFC_KEY, &RFC_NONCE_232, start, &mut buf)?;
        if buf[p * 64..(p + 1) * 64] != RFC_BLOCK_232 {
            return Err(format!(
                "ChaCha20 {}: RFC 8439 2.3.2 block differs (lane {p})",
                variant.name()
            ));
        }
    }
    // 2.4.2: encrypt the sunscreen text (two blocks, counters 1 and 2).
    keystream(variant, &RFC_KEY, &RFC_NONCE_242, 1, &mut buf)?;
    let ct: Vec<u8> = RFC_PLAINTEXT_242
        .iter()
        .zip(&buf)
        .map(|(p, k)| p ^ k)
        .collect();
    if ct[..] != RFC_CIPHERTEXT_242[..] {
        return Err(format!(
            "ChaCha20 {}: RFC 8439 2.4.2 ciphertext differs",
            variant.name()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_matches_rfc() {
        check_rfc8439(Variant::Scalar).unwrap();
    }

    #[test]
    fn supported_variants_match_rfc_and_scalar() {
        let mut a = vec![0u8; 35 * 64];
        let mut b = vec![0u8; 35 * 64];
        let want = verification_digest(Variant::Scalar, &mut a).unwrap();
        for v in Variant::ALL.into_iter().filter(|v| v.supported()) {
            check_rfc8439(v).unwrap();
            assert_eq!(verification_digest(v, &mut b).unwrap(), want, "{v:?}");
            assert_eq!(a, b, "{v:?}");
        }
    }

    #[test]
    fn bad_length_is_refused() {
        let mut buf = [0u8; 65];
        let e = keystream(Variant::Scalar, &RFC_KEY, &RFC_NONCE_232, 0, &mut buf).unwrap_err();
        assert!(e.contains("multiple of 64"), "{e}");
    }

    #[test]
    fn names_round_trip() {
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()), Some(v));
        }
        assert_eq!(Variant::parse("AVX-512"), Some(Variant::Avx512));
        assert_eq!(Variant::parse("mmx"), None);
    }

    #[test]
    fn run_depends_on_output() {
        assert_ne!(run(Variant::Scalar, 2, 0), run(Variant::Scalar, 2, 7));
    }
}

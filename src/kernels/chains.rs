//! Dependent instruction chains whose latency is known in cycles, used to
//! measure the core clock: `CHAIN_LEN` instructions, each depending on the
//! previous one, per loop iteration. The loop counter runs on a separate
//! dependency chain, so one iteration costs `CHAIN_LEN × latency` cycles.

/// Dependent instructions per loop iteration.
pub const CHAIN_LEN: u64 = 256;

/// Which dependent chain to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chain {
    /// Integer add with an immediate: latency 1 cycle on every mainstream core.
    Add,
    /// Integer xor with a register: latency 1 cycle; an independent check of `Add`.
    Xor,
    /// 64-bit integer multiply: latency 3 cycles on x86 cores since Nehalem/K8 and
    /// on Neoverse N1/V1 (MUL, 64-bit: 2–3), reported but not used for the headline.
    Mul,
}

impl Chain {
    /// Latency of one link in cycles (architectural documentation).
    pub fn latency_cycles(self) -> f64 {
        match self {
            Chain::Add | Chain::Xor => 1.0,
            Chain::Mul => 3.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Chain::Add => "add",
            Chain::Xor => "xor",
            Chain::Mul => "imul",
        }
    }

    /// Run `iters` iterations of the chain; returns the chain's value.
    #[inline(never)]
    pub fn run(self, iters: u64, seed: u64) -> u64 {
        match self {
            Chain::Add => add_chain(iters, seed),
            Chain::Xor => xor_chain(iters, seed),
            Chain::Mul => mul_chain(iters, seed),
        }
    }

    /// Whether this chain has an implementation for the running architecture.
    pub fn supported(self) -> bool {
        cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
    }
}

/// One dependent chain: `.rept 256` of `$insn` (on `{x}`, with `{k}` as the
/// second operand) inside a counted loop; `$init` maps the seed to the start value.
macro_rules! chain_fn {
    ($name:ident, $insn:literal, $k:expr, $init:expr, $dec:literal, $jmp:literal) => {
        fn $name(iters: u64, seed: u64) -> u64 {
            let init: fn(u64) -> u64 = $init;
            let mut x = init(seed);
            let mut n = iters;
            let k: u64 = $k;
            if n == 0 {
                return x;
            }
            // SAFETY: register-only arithmetic, no memory or stack access.
            unsafe {
                core::arch::asm!(
                    "2:",
                    ".rept 256",
                    $insn,
                    ".endr",
                    $dec,
                    $jmp,
                    x = inout(reg) x,
                    n = inout(reg) n,
                    k = in(reg) k,
                    options(nomem, nostack)
                );
            }
            let _ = n;
            x
        }
    };
}

// x86_64: `add reg, reg`, not `add reg, imm` (immediate adds are folded at
// rename on Golden Cove and later and run faster than one per cycle).
#[cfg(target_arch = "x86_64")]
chain_fn!(add_chain, "add {x}, {k}", 1, |s| s, "dec {n}", "jnz 2b");
#[cfg(target_arch = "x86_64")]
chain_fn!(
    xor_chain,
    "xor {x}, {k}",
    0x9e37_79b9_7f4a_7c15,
    |s| s,
    "dec {n}",
    "jnz 2b"
);
#[cfg(target_arch = "x86_64")]
chain_fn!(
    mul_chain,
    "imul {x}, {k}",
    3,
    |s| s | 1,
    "dec {n}",
    "jnz 2b"
);

#[cfg(target_arch = "aarch64")]
chain_fn!(
    add_chain,
    "add {x}, {x}, {k}",
    1,
    |s| s,
    "subs {n}, {n}, #1",
    "b.ne 2b"
);
#[cfg(target_arch = "aarch64")]
chain_fn!(
    xor_chain,
    "eor {x}, {x}, {k}",
    0x9e37_79b9_7f4a_7c15,
    |s| s,
    "subs {n}, {n}, #1",
    "b.ne 2b"
);
#[cfg(target_arch = "aarch64")]
chain_fn!(
    mul_chain,
    "mul {x}, {x}, {k}",
    3,
    |s| s | 1,
    "subs {n}, {n}, #1",
    "b.ne 2b"
);

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn add_chain(iters: u64, seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..iters * CHAIN_LEN {
        x = core::hint::black_box(x.wrapping_add(1));
    }
    x
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn xor_chain(iters: u64, seed: u64) -> u64 {
    add_chain(iters, seed)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn mul_chain(iters: u64, seed: u64) -> u64 {
    add_chain(iters, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_compute_their_values() {
        assert_eq!(Chain::Add.run(3, 5), 5 + 3 * CHAIN_LEN);
        // 256 xors with the same key cancel out.
        assert_eq!(Chain::Xor.run(7, 42), 42);
        assert_eq!(Chain::Mul.run(1, 1), 3u64.wrapping_pow(CHAIN_LEN as u32));
        assert_eq!(Chain::Add.run(0, 9), 9);
    }
}

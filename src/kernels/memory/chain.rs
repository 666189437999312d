//! Pointer chasing: a seeded random generator, Sattolo's single-cycle
//! permutation, the chain layouts (random, sequential, strided) and the
//! dependent-load loop that times load-to-use latency.

use crate::placement::buffer::Buffer;
use anyhow::{bail, Result};
use serde::Serialize;

// ---------------------------------------------------------------------------
// Random numbers (setup only).

/// splitmix64: small, fast, good enough to shuffle.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0), Lemire's multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Sattolo's algorithm: a uniformly random cyclic permutation of `0..n`
/// (one single cycle through every element). `succ[i]` is the successor of `i`.
pub fn sattolo(n: usize, rng: &mut Rng) -> Vec<u32> {
    let mut a: Vec<u32> = (0..n as u32).collect();
    let mut i = n;
    while i > 1 {
        i -= 1;
        let j = rng.below(i); // 0..i, never i itself
        a.swap(i, j);
    }
    a
}

/// Fisher–Yates shuffle in place.
pub fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    let mut i = v.len();
    while i > 1 {
        let j = rng.below(i);
        i -= 1;
        v.swap(i, j);
    }
}

/// How the links of a chase are laid out over the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Layout {
    /// One random cycle through every `stride`-byte slot (Sattolo): every
    /// load misses whatever the working set does not hold, prefetchers
    /// cannot help, and on small pages nearly every load also misses the TLB.
    Random { stride: usize },
    /// Random order of `page`-byte pages; inside a page, a random order of its
    /// slots before moving on. One TLB miss per page instead of per load:
    /// separates the cache/DRAM latency from the page-walk cost.
    PageLocal { stride: usize, page: usize },
    /// Slot `i` points to slot `i + 1` (wrapping), like lmbench's lat_mem_rd
    /// without `-t`: prefetchers see a fixed stride.
    Sequential { stride: usize },
}

impl Layout {
    pub fn stride(&self) -> usize {
        match *self {
            Layout::Random { stride }
            | Layout::PageLocal { stride, .. }
            | Layout::Sequential { stride } => stride,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            Layout::Random { .. } => "random",
            Layout::PageLocal { .. } => "page_local",
            Layout::Sequential { .. } => "sequential",
        }
    }
}

/// A pointer chain written into a buffer it owns: slot `k` holds the address
/// of the next slot to visit. Chasing it is a sequence of dependent loads.
pub struct PointerChain {
    pub(super) buf: Buffer,
    pub(super) start: usize,
    pub(super) slots: usize,
    pub(super) bytes: usize,
    pub(super) layout: Layout,
}

impl std::fmt::Debug for PointerChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PointerChain")
            .field("slots", &self.slots)
            .field("bytes", &self.bytes)
            .field("layout", &self.layout)
            .finish()
    }
}

impl PointerChain {
    /// Write a chain over the first `bytes` bytes of `buf` (rounded down to
    /// whole slots; at least 2 slots). The buffer's pages are touched here.
    pub fn build(mut buf: Buffer, bytes: usize, layout: Layout, seed: u64) -> Result<PointerChain> {
        let stride = layout.stride();
        if stride < std::mem::size_of::<usize>()
            || !stride.is_multiple_of(std::mem::size_of::<usize>())
        {
            bail!("chase stride {stride} bytes must be a multiple of the pointer size");
        }
        if bytes > buf.len() {
            bail!(
                "chain of {bytes} bytes does not fit its {}-byte buffer",
                buf.len()
            );
        }
        let slots = bytes / stride;
        if slots < 2 {
            bail!("a chain needs at least 2 slots of {stride} bytes (got {bytes} bytes)");
        }
        if slots > u32::MAX as usize {
            bail!("chain of {slots} slots is too long");
        }
        let base = buf.as_mut_ptr() as usize;
        let addr = |i: usize| base + i * stride;
        let mut rng = Rng::new(seed);
        // Successor of each slot.
        let succ: Vec<u32> = match layout {
            Layout::Random { .. } => sattolo(slots, &mut rng),
            Layout::Sequential { .. } => (0..slots as u32)
                .map(|i| if i as usize + 1 == slots { 0 } else { i + 1 })
                .collect(),
            Layout::PageLocal { page, .. } => {
                if page < stride || page % stride != 0 {
                    bail!("page-local chase: page {page} is not a multiple of the stride {stride}");
                }
                let per = page / stride;
                let pages = slots.div_ceil(per);
                // Visit order: pages in a random cyclic order, slots of each page shuffled.
                let page_succ = sattolo(pages.max(1), &mut rng);
                let mut order: Vec<u32> = Vec::with_capacity(slots);
                let mut inner: Vec<u32> = Vec::with_capacity(per);
                let mut p = 0usize;
                for _ in 0..pages {
                    let lo = p * per;
                    let hi = ((p + 1) * per).min(slots);
                    inner.clear();
                    inner.extend(lo as u32..hi as u32);
                    shuffle(&mut inner, &mut rng);
                    order.extend_from_slice(&inner);
                    p = if pages > 1 { page_succ[p] as usize } else { 0 };
                }
                let mut succ = vec![0u32; slots];
                for k in 0..order.len() {
                    let next = order[(k + 1) % order.len()];
                    succ[order[k] as usize] = next;
                }
                succ
            }
        };
        let ptr = buf.as_mut_ptr();
        for (i, &s) in succ.iter().enumerate() {
            // SAFETY: i < slots and slots * stride <= bytes <= buf.len();
            // slot addresses are pointer-aligned (page-aligned base, stride a
            // multiple of the pointer size).
            unsafe { (ptr.add(i * stride) as *mut usize).write(addr(s as usize)) };
        }
        Ok(PointerChain {
            start: addr(0),
            buf,
            slots,
            bytes: slots * stride,
            layout,
        })
    }

    pub fn slots(&self) -> usize {
        self.slots
    }
    /// Bytes the chain spans (its working set).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    pub fn buffer(&self) -> &Buffer {
        &self.buf
    }
    /// Give the buffer back (to build another chain in it).
    pub fn into_buffer(self) -> Buffer {
        self.buf
    }

    /// Follow `steps` links from the start; returns where it ended (keep it
    /// with black_box). Each load depends on the previous one.
    #[inline(never)]
    pub fn chase(&self, steps: u64) -> usize {
        // SAFETY: every slot of the chain holds the address of another slot
        // of the same buffer (written by `build`, never modified since: the
        // buffer is owned and not handed out mutably), so every load is in
        // bounds and aligned.
        unsafe { chase_raw(self.start as *const usize, steps) }
    }

    /// Follow `steps` links from where a previous call ended.
    #[inline(never)]
    pub fn chase_from(&self, from: usize, steps: u64) -> usize {
        let p = if from == 0 { self.start } else { from };
        // SAFETY: as in `chase`; `from` is a value returned by this chain.
        unsafe { chase_raw(p as *const usize, steps) }
    }

    /// Walk the whole chain once and check that it is one cycle through
    /// every slot (setup check, not timed).
    pub fn verify_single_cycle(&self) -> bool {
        let base = self.buf.as_ptr() as usize;
        let stride = self.layout.stride();
        let mut seen = vec![false; self.slots];
        let mut p = self.start;
        for _ in 0..self.slots {
            if p < base || !(p - base).is_multiple_of(stride) || (p - base) / stride >= self.slots {
                return false;
            }
            let i = (p - base) / stride;
            if seen[i] {
                return false;
            }
            seen[i] = true;
            // SAFETY: p was just checked to be a slot of this buffer.
            p = unsafe { *(p as *const usize) };
        }
        p == self.start && seen.iter().all(|&s| s)
    }
}

/// # Safety
/// `p` must start a chain of valid, aligned pointers that never leaves memory
/// readable for the duration of the call.
#[inline(always)]
unsafe fn chase_raw(mut p: *const usize, steps: u64) -> usize {
    let mut n = steps / 8;
    while n > 0 {
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        p = *p as *const usize;
        n -= 1;
    }
    for _ in 0..steps % 8 {
        p = *p as *const usize;
    }
    p as usize
}

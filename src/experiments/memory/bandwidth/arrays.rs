//! The three STREAM arrays of one bandwidth point: allocated on the nodes
//! the placement asks for, staggered so they do not alias in the caches,
//! filled and checked (docs/methods-memory.md, "bandwidth").

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::kernels::memory::{stream_pass, Arrays, BwKernel, StoreKind, Width, BW_ELEMS_ALIGN};
use crate::placement::buffer::{Buffer, BufferOptions, PageRequest, Touch};
use crate::placement::mempolicy::MemPolicy;
use crate::placement::team::Team;
use anyhow::{bail, Result};
use serde::Serialize;

/// Three arrays shared by a team; with `n` threads, thread `t` owns chunk
/// `t` of `n` of each array.
pub struct StreamArrays {
    bufs: Vec<Buffer>,
    /// Elements of each array.
    pub elems: usize,
    /// Page kind obtained (thp, base, mixed_thp).
    pub pages: String,
}

impl StreamArrays {
    /// Map three arrays of about `array_bytes` and first-touch each thread's
    /// chunk from its own CPU (a team round) with STREAM's initial values
    /// (a = 1, b = 2, c = 0).
    pub fn new(team: &mut Team, array_bytes: usize, node: Option<usize>) -> Result<StreamArrays> {
        Self::with_count(team, array_bytes, node, 3)
    }

    /// Like [`new`](Self::new) with only the first `count` arrays (1: a only,
    /// enough for read and write; 2: a and c... mapped as a and b, c).
    pub fn with_count(
        team: &mut Team,
        array_bytes: usize,
        node: Option<usize>,
        count: usize,
    ) -> Result<StreamArrays> {
        let threads = team.size();
        let unit = BW_ELEMS_ALIGN * threads;
        let elems = array_bytes / 8 / unit * unit;
        if elems == 0 {
            bail!(
                "arrays of {} are too small for {threads} threads",
                fmt_size(array_bytes)
            );
        }
        let policy = node.map(|n| MemPolicy::Bind(CpuSet::from_ids([n])));
        let mut bufs = Vec::new();
        for _ in 0..count.clamp(1, 3) {
            let opts = BufferOptions {
                pages: PageRequest::Thp,
                policy: policy.clone(),
                touch: Touch::No,
            };
            let bytes = elems * 8 + ARRAY_STAGGER * 3;
            let b = match Buffer::new(bytes, &opts) {
                Ok(b) => b,
                Err(_) => Buffer::new(
                    bytes,
                    &BufferOptions {
                        pages: PageRequest::Base,
                        ..opts
                    },
                )?,
            };
            bufs.push(b);
        }
        let mut sa = StreamArrays {
            bufs,
            elems,
            pages: String::new(),
        };
        sa.reset(team)?;
        let rep = sa.bufs[0].page_report();
        sa.pages = format!("{:?}", rep.kind).to_lowercase();
        Ok(sa)
    }

    /// Elements per thread with `n` threads.
    pub fn chunk(&self, n: usize) -> usize {
        self.elems / n.max(1) / BW_ELEMS_ALIGN * BW_ELEMS_ALIGN
    }

    /// # Safety
    /// Callers must not hold two live chunks for the same (array, t, n).
    #[allow(clippy::mut_from_ref)]
    unsafe fn chunk_mut(&self, array: usize, t: usize, n: usize) -> &mut [f64] {
        if array >= self.bufs.len() {
            return &mut [];
        }
        let c = self.chunk(n);
        // Array k starts k x ARRAY_STAGGER bytes into its buffer (see there).
        let base = self.bufs[array].as_ptr().add(array * ARRAY_STAGGER) as *mut f64;
        std::slice::from_raw_parts_mut(base.add(t * c), c)
    }

    /// One pass of `v` over the first `len` elements of thread `t`'s chunks.
    pub fn pass(&self, v: &Variant, t: usize, n: usize, len: usize) -> f64 {
        // SAFETY: each team thread uses only its own index t.
        let (a, b, c) = unsafe {
            (
                self.chunk_mut(0, t, n),
                self.chunk_mut(1, t, n),
                self.chunk_mut(2, t, n),
            )
        };
        let mut arr = Arrays { a, b, c };
        stream_pass(v.kernel, v.width, v.store, &mut arr, len).unwrap_or(f64::NAN)
    }

    /// One pass of `v` over elements `off .. off + len` of thread `t`'s
    /// chunks (`len` a multiple of BW_ELEMS_ALIGN; clipped to the chunk).
    pub fn pass_range(&self, v: &Variant, t: usize, n: usize, off: usize, len: usize) -> f64 {
        let c = self.chunk(n);
        if off >= c {
            return 0.0;
        }
        let len = len.min(c - off) / BW_ELEMS_ALIGN * BW_ELEMS_ALIGN;
        if len == 0 {
            return 0.0;
        }
        // SAFETY: each team thread uses only its own index t.
        let (a, b, cc) = unsafe {
            (
                self.chunk_mut(0, t, n),
                self.chunk_mut(1, t, n),
                self.chunk_mut(2, t, n),
            )
        };
        fn sub(s: &mut [f64], off: usize, len: usize) -> &mut [f64] {
            if s.is_empty() {
                s
            } else {
                &mut s[off..off + len]
            }
        }
        let mut arr = Arrays {
            a: sub(a, off, len),
            b: sub(b, off, len),
            c: sub(cc, off, len),
        };
        stream_pass(v.kernel, v.width, v.store, &mut arr, len).unwrap_or(f64::NAN)
    }

    /// Check a few elements after passes of `v` over `len` elements per thread.
    pub fn check(&self, v: &Variant, n: usize, len: usize) -> Result<()> {
        let q = crate::kernels::memory::SCALAR_Q;
        for t in 0..n {
            // SAFETY: no team round is running.
            let (a, b, c) = unsafe {
                (
                    self.chunk_mut(0, t, n),
                    self.chunk_mut(1, t, n),
                    self.chunk_mut(2, t, n),
                )
            };
            for &i in &[0, len / 2, len - 1] {
                let ok = match v.kernel {
                    BwKernel::Read => true,
                    BwKernel::Write => a[i] == q,
                    BwKernel::Copy => c.is_empty() || c[i] == a[i],
                    BwKernel::Triad => c.is_empty() || a[i] == b[i] + q * c[i],
                };
                if !ok {
                    bail!(
                        "{} produced a wrong value at element {i} of thread {t}",
                        v.label()
                    );
                }
            }
        }
        Ok(())
    }

    /// (Re)write STREAM's values, each thread its own chunk.
    pub fn reset(&self, team: &mut Team) -> Result<()> {
        let n = team.size();
        team.run_round(|ctx| {
            for (k, v) in [1.0f64, 2.0, 0.0].iter().enumerate() {
                // SAFETY: each thread writes only its own chunk.
                unsafe { self.chunk_mut(k, ctx.index, n) }.fill(*v);
            }
        })?;
        Ok(())
    }
}

/// Arrays start this many bytes apart modulo 4 KiB and 2 MiB (array k at
/// k x ARRAY_STAGGER into its buffer; 17 cache lines, STREAM's OFFSET idea).
/// Buffers are 2 MiB-aligned, so without it a[i], b[i] and c[i] share their
/// low 21 address bits: loads then falsely alias earlier stores to the same
/// 4 KiB offset (4K aliasing) and the streams compete for the same cache sets.
pub const ARRAY_STAGGER: usize = 17 * 64;

/// One kernel flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    pub kernel: BwKernel,
    pub width: Width,
    pub store: StoreKind,
}

impl Variant {
    pub fn new(kernel: BwKernel, width: Width, store: StoreKind) -> Variant {
        Variant {
            kernel,
            width,
            store: if kernel.has_stores() {
                store
            } else {
                StoreKind::Normal
            },
        }
    }
    pub fn label(&self) -> String {
        format!(
            "{} {}{}",
            self.kernel.name(),
            self.width.name(),
            if self.store == StoreKind::NonTemporal {
                " nt"
            } else {
                ""
            }
        )
    }
}

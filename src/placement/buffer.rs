//! Page-aligned measurement buffers mapped with `mmap` (anonymous, private).
//!
//! Guarantees:
//! - The memory is page-aligned (huge-page aligned for THP and hugetlbfs), is
//!   not touched by [`Buffer::new`] unless [`Touch`] asks for it, and is
//!   unmapped on drop.
//! - A memory policy given in the options is applied to the range with `mbind`
//!   *before* any page is touched, so it decides where the pages land.
//! - First touch ([`Touch::FromCpu`]) writes one byte per base page from a
//!   thread pinned to that CPU; the default local policy then puts the pages on
//!   that CPU's node.
//! - [`PageRequest::Base`] asks for base pages and opts the range out of THP
//!   (`MADV_NOHUGEPAGE`), so a system with THP=always does not silently hand
//!   out huge pages. [`PageRequest::Thp`] asks with `MADV_HUGEPAGE`; the kernel
//!   may still give base pages, so [`Buffer::page_report`] reads
//!   `AnonHugePages` of the range from `/proc/self/smaps` and reports what was
//!   actually obtained. [`PageRequest::HugeTlb`] uses `MAP_HUGETLB` and fails
//!   with [`Unavailable`] (and the reason) when no huge pages are reserved.
//! - The page kind is never guessed: when it cannot be read it is reported as
//!   [`PageKind::Unknown`] with the reason.

use crate::placement::mempolicy::{bind_range, page_size, BindFlags, MemPolicy};
use crate::placement::pin::{errno_name, last_os_error, pin_current_thread};
use anyhow::{bail, Result};
use serde::Serialize;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which pages to ask the kernel for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageRequest {
    /// Base pages (4 KiB on x86_64), THP disabled for the range.
    #[default]
    Base,
    /// Transparent huge pages (`madvise(MADV_HUGEPAGE)`), best effort.
    Thp,
    /// hugetlbfs pages of the default huge page size (`MAP_HUGETLB`).
    HugeTlb,
    /// hugetlbfs pages of 1 GiB (`MAP_HUGETLB | MAP_HUGE_1GB`), from the
    /// pool reserved under `hugepages-1048576kB` (never reserved here).
    HugeTlb1G,
}

/// Which pages the buffer actually has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageKind {
    /// Base pages only.
    Base,
    /// Transparent huge pages over the whole buffer.
    Thp,
    /// Partly transparent huge pages, partly base pages.
    MixedThp,
    /// hugetlbfs pages.
    HugeTlb,
    /// Could not be read (see the reason).
    Unknown,
}

/// What the buffer asked for and what it got.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageReport {
    pub requested: PageRequest,
    pub kind: PageKind,
    /// Base page size of the system.
    pub base_page_bytes: usize,
    /// Huge page size relevant to the request (PMD size for THP, default
    /// hugetlbfs size for HugeTlb); None for base pages.
    pub huge_page_bytes: Option<usize>,
    /// Bytes of the buffer backed by huge pages; None when not read.
    pub huge_bytes: Option<u64>,
    /// Bytes of the buffer resident (touched).
    pub resident_bytes: Option<u64>,
    /// False when smaps merged the buffer with neighbouring memory, so the
    /// huge-page count was taken over a larger range and clamped (the
    /// resident bytes are then the buffer's own, from mincore(2)).
    pub exact: bool,
    /// Why the kind is unknown, or why THP was not fully obtained.
    pub note: Option<String>,
}

/// A resource (hugetlbfs pages, THP) is not available on this system; the
/// caller reports it as "not available" with [`Unavailable::reason`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    pub what: &'static str,
    pub reason: String,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} not available: {}", self.what, self.reason)
    }
}

impl std::error::Error for Unavailable {}

/// Who first writes the pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Touch {
    /// Leave the pages untouched (not yet allocated).
    #[default]
    No,
    /// Touch from the calling thread, wherever it runs.
    Here,
    /// Touch from a helper thread pinned to this CPU.
    FromCpu(usize),
}

/// How to build a [`Buffer`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BufferOptions {
    pub pages: PageRequest,
    /// Memory policy applied to the range before touching.
    pub policy: Option<MemPolicy>,
    pub touch: Touch,
}

impl BufferOptions {
    /// Base pages, no memory policy, touched by the calling thread (so its
    /// pages land where that thread runs under the default policy).
    pub fn base_here() -> BufferOptions {
        BufferOptions {
            pages: PageRequest::Base,
            policy: None,
            touch: Touch::Here,
        }
    }
}

/// Element types a buffer can be viewed as: plain data for which every bit
/// pattern (including all zeros) is a valid value.
///
/// # Safety
/// Implement only for types without padding, pointers or invalid bit patterns.
pub unsafe trait Plain: Copy + 'static {}
unsafe impl Plain for u8 {}
unsafe impl Plain for u16 {}
unsafe impl Plain for u32 {}
unsafe impl Plain for u64 {}
unsafe impl Plain for usize {}
unsafe impl Plain for i8 {}
unsafe impl Plain for i16 {}
unsafe impl Plain for i32 {}
unsafe impl Plain for i64 {}
unsafe impl Plain for isize {}
unsafe impl Plain for f32 {}
unsafe impl Plain for f64 {}

/// An mmap'ed, page-aligned buffer. Unmapped on drop.
pub struct Buffer {
    ptr: *mut u8,
    len: usize,
    mapped_len: usize,
    request: PageRequest,
    huge_page_bytes: Option<usize>,
}

// SAFETY: the buffer owns its mapping exclusively, like a Vec<u8>.
unsafe impl Send for Buffer {}
// SAFETY: shared access only hands out &[T]; mutation needs &mut self.
unsafe impl Sync for Buffer {}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

fn round_up(x: usize, to: usize) -> Option<usize> {
    x.checked_add(to - 1).map(|v| v / to * to)
}

/// `enabled` setting of THP, e.g. "madvise"; None when the kernel has no THP.
pub fn thp_mode() -> Option<String> {
    let s = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    let start = s.find('[')?;
    let end = s[start..].find(']')? + start;
    Some(s[start + 1..end].to_string())
}

/// THP size (PMD size), when the kernel says.
pub fn thp_page_bytes() -> Option<usize> {
    let s = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").ok()?;
    s.trim().parse().ok()
}

/// Default hugetlbfs page size in bytes.
pub fn hugetlb_page_bytes() -> Option<usize> {
    crate::base::meminfo::live("Hugepagesize").map(|b| b as usize)
}

/// Name the mapping so that smaps never merges it with a neighbour (kernel
/// 5.17+ with CONFIG_ANON_VMA_NAME; silently skipped elsewhere).
fn name_mapping(ptr: *mut u8, len: usize) {
    const PR_SET_VMA: libc::c_int = 0x5356_4d41;
    const PR_SET_VMA_ANON_NAME: libc::c_ulong = 0;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let name = format!("cpuscope-buf-{id}\0");
    // SAFETY: the name is NUL-terminated and outlives the call; the kernel
    // copies it. The range is our own mapping.
    unsafe {
        libc::prctl(
            PR_SET_VMA,
            PR_SET_VMA_ANON_NAME,
            ptr as libc::c_ulong,
            len as libc::c_ulong,
            name.as_ptr() as libc::c_ulong,
        );
    }
}

fn mmap_anon(len: usize, extra_flags: libc::c_int) -> std::result::Result<*mut u8, std::io::Error> {
    // SAFETY: anonymous private mapping, no fd; the kernel picks the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra_flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(last_os_error())
    } else {
        Ok(p as *mut u8)
    }
}

/// Map `len` bytes of base pages (`base` bytes each), THP refused: the
/// mapping, its length and no huge page size.
fn map_base_pages(len: usize, base: usize) -> Result<(*mut u8, usize, Option<usize>)> {
    let mapped = round_up(len, base)
        .ok_or_else(|| anyhow::anyhow!("buffer size {len} bytes is too large"))?;
    let p = mmap_anon(mapped, 0).map_err(|e| {
        anyhow::anyhow!(
            "cannot map {mapped} bytes: mmap failed ({})",
            errno_name(&e)
        )
    })?;
    // SAFETY: our own fresh mapping.
    unsafe { libc::madvise(p as *mut libc::c_void, mapped, libc::MADV_NOHUGEPAGE) };
    Ok((p, mapped, None))
}

/// Map `len` bytes aligned for transparent huge pages and ask for them
/// (`MADV_HUGEPAGE`): the mapping, its length and the THP size.
fn map_thp(len: usize) -> Result<(*mut u8, usize, Option<usize>)> {
    let mode = thp_mode().ok_or_else(|| Unavailable {
        what: "transparent huge pages",
        reason: "the kernel has no THP (/sys/kernel/mm/transparent_hugepage missing)".to_string(),
    })?;
    if mode == "never" {
        return Err(Unavailable {
            what: "transparent huge pages",
            reason: "THP is disabled (transparent_hugepage/enabled = never)".to_string(),
        }
        .into());
    }
    let huge = thp_page_bytes().unwrap_or(2 << 20);
    let mapped = round_up(len, huge)
        .ok_or_else(|| anyhow::anyhow!("buffer size {len} bytes is too large"))?;
    let p = map_aligned(mapped, huge)?;
    // SAFETY: our own fresh mapping.
    let r = unsafe { libc::madvise(p as *mut libc::c_void, mapped, libc::MADV_HUGEPAGE) };
    if r != 0 {
        let e = last_os_error();
        // SAFETY: unmapping what we just mapped.
        unsafe { libc::munmap(p as *mut libc::c_void, mapped) };
        return Err(Unavailable {
            what: "transparent huge pages",
            reason: format!("madvise(MADV_HUGEPAGE) failed ({})", errno_name(&e)),
        }
        .into());
    }
    Ok((p, mapped, Some(huge)))
}

/// 1 GiB.
const GIB: usize = 1 << 30;

/// Map `len` bytes of the reserved 1 GiB hugetlbfs pages: the mapping, its
/// length (whole pages) and the page size; unavailable, with the pool's
/// counts, when too few are free.
fn map_hugetlb_1g(len: usize) -> Result<(*mut u8, usize, Option<usize>)> {
    let mapped = round_up(len, GIB)
        .ok_or_else(|| anyhow::anyhow!("buffer size {len} bytes is too large"))?;
    // MAP_HUGE_1GB: log2(1 GiB) in the flags' page-size bits.
    let flags = libc::MAP_HUGETLB | (30 << libc::MAP_HUGE_SHIFT);
    let p = mmap_anon(mapped, flags).map_err(|e| -> anyhow::Error {
        let pool = "/sys/kernel/mm/hugepages/hugepages-1048576kB";
        let read = |f: &str| {
            std::fs::read_to_string(format!("{pool}/{f}"))
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "?".into())
        };
        match e.raw_os_error() {
            Some(libc::ENOMEM) | Some(libc::EINVAL) | Some(libc::ENOENT) => Unavailable {
                what: "1 GiB hugetlbfs pages",
                reason: format!(
                    "mmap(MAP_HUGETLB|MAP_HUGE_1GB) of {} GiB failed ({}); {} of {} reserved 1 GiB pages free (reserve them with {pool}/nr_hugepages or hugepagesz=1G hugepages=N at boot)",
                    mapped / GIB,
                    errno_name(&e),
                    read("free_hugepages"),
                    read("nr_hugepages")
                ),
            }
            .into(),
            _ => anyhow::anyhow!(
                "cannot map {mapped} bytes of 1 GiB pages: mmap(MAP_HUGETLB|MAP_HUGE_1GB) failed ({})",
                errno_name(&e)
            ),
        }
    })?;
    Ok((p, mapped, Some(GIB)))
}

/// Map `len` bytes of reserved hugetlbfs pages (`MAP_HUGETLB`): the
/// mapping, its length and the huge page size.
fn map_hugetlb(len: usize) -> Result<(*mut u8, usize, Option<usize>)> {
    let huge = hugetlb_page_bytes().ok_or_else(|| Unavailable {
        what: "hugetlbfs huge pages",
        reason: "no Hugepagesize in /proc/meminfo (kernel without hugetlbfs)".to_string(),
    })?;
    let mapped = round_up(len, huge)
        .ok_or_else(|| anyhow::anyhow!("buffer size {len} bytes is too large"))?;
    let p = mmap_anon(mapped, libc::MAP_HUGETLB).map_err(|e| -> anyhow::Error {
        match e.raw_os_error() {
            Some(libc::ENOMEM) | Some(libc::EINVAL) | Some(libc::ENOENT) => {
                let free = crate::base::meminfo::live("HugePages_Free");
                let total = crate::base::meminfo::live("HugePages_Total");
                Unavailable {
                    what: "hugetlbfs huge pages",
                    reason: format!(
                        "mmap(MAP_HUGETLB) of {} MiB failed ({}); {} of {} reserved {} KiB pages free (reserve more with sysctl vm.nr_hugepages)",
                        mapped >> 20,
                        errno_name(&e),
                        free.map_or("?".to_string(), |v| v.to_string()),
                        total.map_or("?".to_string(), |v| v.to_string()),
                        huge / 1024
                    ),
                }
                .into()
            }
            _ => anyhow::anyhow!(
                "cannot map {mapped} bytes of huge pages: mmap(MAP_HUGETLB) failed ({})",
                errno_name(&e)
            ),
        }
    })?;
    Ok((p, mapped, Some(huge)))
}

impl Buffer {
    /// Map `len` bytes (rounded up to the page granularity of the request),
    /// apply the policy, and touch as asked.
    pub fn new(len: usize, opts: &BufferOptions) -> Result<Buffer> {
        if len == 0 {
            bail!("cannot allocate an empty buffer");
        }
        let base = page_size();
        let (ptr, mapped_len, huge) = match opts.pages {
            PageRequest::Base => map_base_pages(len, base)?,
            PageRequest::Thp => map_thp(len)?,
            PageRequest::HugeTlb => map_hugetlb(len)?,
            PageRequest::HugeTlb1G => map_hugetlb_1g(len)?,
        };
        let buf = Buffer {
            ptr,
            len,
            mapped_len,
            request: opts.pages,
            huge_page_bytes: huge,
        };
        if !matches!(opts.pages, PageRequest::HugeTlb | PageRequest::HugeTlb1G) {
            name_mapping(buf.ptr, buf.mapped_len);
        }
        if let Some(policy) = &opts.policy {
            buf.apply_policy(policy)?;
        }
        match opts.touch {
            Touch::No => {}
            Touch::Here => buf.touch_here(),
            Touch::FromCpu(cpu) => buf.touch_from_cpu(cpu)?,
        }
        Ok(buf)
    }

    /// Set the memory policy of the whole mapping (`mbind`). Pages already
    /// touched are left where they are.
    pub fn apply_policy(&self, policy: &MemPolicy) -> Result<()> {
        bind_range(self.ptr, self.mapped_len, policy, BindFlags::default())
    }

    /// Write one byte per base page from the calling thread.
    pub fn touch_here(&self) {
        touch_range(self.ptr as usize, self.mapped_len);
    }

    /// Write one byte per base page from a thread pinned to `cpu`.
    pub fn touch_from_cpu(&self, cpu: usize) -> Result<()> {
        let addr = self.ptr as usize;
        let len = self.mapped_len;
        std::thread::scope(|s| {
            let h = s.spawn(move || -> Result<()> {
                pin_current_thread(cpu)?;
                touch_range(addr, len);
                Ok(())
            });
            match h.join() {
                Ok(r) => r,
                Err(_) => bail!("the first-touch thread on CPU {cpu} panicked"),
            }
        })
    }

    /// Requested length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Length of the mapping (request rounded up to the page granularity).
    pub fn mapped_len(&self) -> usize {
        self.mapped_len
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// The first `len / size_of::<T>()` elements.
    pub fn as_slice<T: Plain>(&self) -> &[T] {
        // SAFETY: the mapping is readable, page-aligned (so aligned for T),
        // zero-filled or written through &mut, and lives as long as self.
        unsafe {
            std::slice::from_raw_parts(self.ptr as *const T, self.len / std::mem::size_of::<T>())
        }
    }

    /// The first `len / size_of::<T>()` elements, mutable.
    pub fn as_mut_slice<T: Plain>(&mut self) -> &mut [T] {
        // SAFETY: as in as_slice, and &mut self gives exclusive access.
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr as *mut T, self.len / std::mem::size_of::<T>())
        }
    }

    /// What was asked for and what the kernel gave, read now (call it after
    /// touching: untouched memory has no pages yet).
    pub fn page_report(&self) -> PageReport {
        let mut rep = PageReport {
            requested: self.request,
            kind: PageKind::Unknown,
            base_page_bytes: page_size(),
            huge_page_bytes: self.huge_page_bytes,
            huge_bytes: None,
            resident_bytes: None,
            exact: true,
            note: None,
        };
        if matches!(self.request, PageRequest::HugeTlb | PageRequest::HugeTlb1G) {
            // MAP_HUGETLB succeeded: every page of this mapping is a hugetlbfs
            // page; there is no fallback to base pages.
            rep.kind = PageKind::HugeTlb;
            rep.huge_bytes = Some(self.mapped_len as u64);
            return rep;
        }
        let smaps = match std::fs::read_to_string("/proc/self/smaps") {
            Ok(s) => s,
            Err(e) => {
                rep.note = Some(format!("cannot read /proc/self/smaps: {e}"));
                return rep;
            }
        };
        let start = self.ptr as usize;
        let Some(r) = smaps_range(&smaps, start, start + self.mapped_len) else {
            rep.note = Some("the buffer's range is not in /proc/self/smaps".to_string());
            return rep;
        };
        let cap = self.mapped_len as u64;
        rep.exact = r.exact;
        // A mapping the kernel merged with a neighbour (no anonymous VMA
        // names before Linux 5.17) shares its smaps entry: the entry's Rss
        // counts the neighbour's pages too. mincore(2) counts the buffer's
        // own resident pages; its huge pages can only be bounded by them.
        let rss = match r.exact {
            true => r.rss,
            false => resident_bytes(self.ptr, self.mapped_len).unwrap_or(r.rss),
        }
        .min(cap);
        let huge = r.anon_huge.min(rss);
        rep.huge_bytes = Some(huge);
        rep.resident_bytes = Some(rss);
        if rss == 0 {
            rep.note = Some("no page touched yet".to_string());
            return rep;
        }
        rep.kind = if huge == 0 {
            PageKind::Base
        } else if huge >= rss && rss == cap {
            PageKind::Thp
        } else {
            PageKind::MixedThp
        };
        if self.request == PageRequest::Thp && rep.kind != PageKind::Thp {
            let defrag = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/defrag")
                .ok()
                .and_then(|s| {
                    let a = s.find('[')?;
                    let b = s[a..].find(']')? + a;
                    Some(s[a + 1..b].to_string())
                })
                .unwrap_or_else(|| "?".to_string());
            rep.note = Some(format!(
                "THP requested, {} of {} resident MiB are huge pages (enabled = {}, defrag = {defrag})",
                huge >> 20,
                rss >> 20,
                thp_mode().unwrap_or_else(|| "?".to_string())
            ));
        }
        rep
    }
}

/// Map `len` bytes aligned to `align` by over-mapping and trimming.
fn map_aligned(len: usize, align: usize) -> Result<*mut u8> {
    let total = len
        .checked_add(align)
        .ok_or_else(|| anyhow::anyhow!("buffer size {len} bytes is too large"))?;
    let p = mmap_anon(total, 0)
        .map_err(|e| anyhow::anyhow!("cannot map {len} bytes: mmap failed ({})", errno_name(&e)))?;
    let start = p as usize;
    let aligned = round_up(start, align).unwrap_or(start);
    let head = aligned - start;
    let tail = total - head - len;
    // SAFETY: trimming parts of our own fresh mapping outside [aligned, aligned+len).
    unsafe {
        if head > 0 {
            libc::munmap(p as *mut libc::c_void, head);
        }
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
    }
    Ok(aligned as *mut u8)
}

fn touch_range(addr: usize, len: usize) {
    let page = page_size();
    let mut off = 0;
    while off < len {
        // SAFETY: [addr, addr+len) is a live writable mapping owned by a
        // Buffer borrowed for the duration of this call.
        unsafe { ((addr + off) as *mut u8).write_volatile(0) };
        off += page;
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping exactly once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.mapped_len) };
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("mapped_len", &self.mapped_len)
            .field("request", &self.request)
            .finish()
    }
}

/// Totals of the smaps VMAs overlapping a range.
#[derive(Debug, PartialEq, Eq)]
struct SmapsRange {
    rss: u64,
    anon_huge: u64,
    /// False when an overlapping VMA reaches outside the range.
    exact: bool,
}

/// Sum `Rss` and `AnonHugePages` (bytes) of the VMAs overlapping
/// `[start, end)`. None when no VMA overlaps.
/// The bytes of `len` at `ptr` (page-aligned, mapped) that are resident,
/// by mincore(2); none when the call fails.
fn resident_bytes(ptr: *mut u8, len: usize) -> Option<u64> {
    let page = page_size();
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: `ptr..ptr+len` is this buffer's own mapping and `vec` holds
    // one byte per page of it, as mincore(2) requires.
    let rc = unsafe { libc::mincore(ptr.cast(), len, vec.as_mut_ptr()) };
    (rc == 0).then(|| vec.iter().filter(|&&b| b & 1 == 1).count() as u64 * page as u64)
}

fn smaps_range(smaps: &str, start: usize, end: usize) -> Option<SmapsRange> {
    let mut out = SmapsRange {
        rss: 0,
        anon_huge: 0,
        exact: true,
    };
    let mut found = false;
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                inside = a < end && b > start;
                if inside {
                    found = true;
                    if a < start || b > end {
                        out.exact = false;
                    }
                }
                continue;
            }
        }
        if !inside {
            continue;
        }
        let Some((key, val)) = line.split_once(':') else {
            continue;
        };
        let kb: u64 = match val.split_whitespace().next().and_then(|v| v.parse().ok()) {
            Some(v) => v,
            None => continue,
        };
        match key.trim() {
            "Rss" => out.rss += kb * 1024,
            "AnonHugePages" => out.anon_huge += kb * 1024,
            _ => {}
        }
    }
    found.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mincore_counts_the_touched_pages_of_a_range_only() {
        let page = page_size();
        // SAFETY: a private anonymous mapping of four pages, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let p = p.cast::<u8>();
        assert_eq!(resident_bytes(p, 4 * page), Some(0));
        // SAFETY: writing inside the mapping.
        unsafe {
            p.write_volatile(1);
            p.add(2 * page).write_volatile(1);
        }
        assert_eq!(resident_bytes(p, 4 * page), Some(2 * page as u64));
        // SAFETY: the second page onwards, inside the mapping.
        assert_eq!(resident_bytes(unsafe { p.add(page) }, page), Some(0));
        // SAFETY: unmapping the mapping made above, once.
        unsafe { libc::munmap(p.cast(), 4 * page) };
    }

    const SMAPS: &str = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0                          [anon:cpuscope-buf-3]
Size:               4096 kB
Rss:                4096 kB
AnonHugePages:      2048 kB
VmFlags: rd wr mr mw me ac hg
7f0000400000-7f0000800000 rw-p 00000000 00:00 0
Size:               4096 kB
Rss:                   8 kB
AnonHugePages:         0 kB
";

    #[test]
    fn smaps_sums_the_range() {
        let r = smaps_range(SMAPS, 0x7f00_0000_0000, 0x7f00_0040_0000).unwrap();
        assert_eq!(
            r,
            SmapsRange {
                rss: 4 << 20,
                anon_huge: 2 << 20,
                exact: true
            }
        );
        let r = smaps_range(SMAPS, 0x7f00_0010_0000, 0x7f00_0050_0000).unwrap();
        assert_eq!(r.rss, (4 << 20) + 8 * 1024);
        assert!(!r.exact);
        assert!(smaps_range(SMAPS, 0x1000, 0x2000).is_none());
    }

    #[test]
    fn rounding() {
        assert_eq!(round_up(1, 4096), Some(4096));
        assert_eq!(round_up(4096, 4096), Some(4096));
        assert_eq!(round_up(usize::MAX, 4096), None);
    }
}

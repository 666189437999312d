//! What the latency experiment measures on a machine: the curves (pattern,
//! pages, sizes, stride), their repetitions, and its time (docs/methods-memory.md);
//! `plan` for `run`, `plan_with` for the `latency` command's options.

use crate::base::fmt::fmt_size;
use crate::base::CpuSet;
use crate::experiments::common::{self, size_range, CacheFacts, DRAM_REACH, KIB, MIB};
use crate::experiments::experiment::Profile;
use crate::machine::MachineInfo;
use anyhow::{bail, Result};
use serde::Serialize;
use std::time::Duration;

/// Page size of a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pages {
    /// Base pages (4 KiB on x86_64), THP off for the range.
    Small,
    /// 2 MiB pages: THP by madvise, else hugetlbfs.
    Huge,
    /// 1 GiB hugetlbfs pages, from the pool the administrator reserved
    /// (never reserved here).
    Giant,
}

impl Pages {
    pub fn name(self) -> &'static str {
        match self {
            Pages::Small => "4k",
            Pages::Huge => "2m",
            Pages::Giant => "1g",
        }
    }
}

/// 1 GiB.
const GIB: usize = 1 << 30;

/// The 1 GiB pages a working set of `top` bytes takes.
pub fn giant_pages_for(top: usize) -> u64 {
    top.div_ceil(GIB) as u64
}

/// The 1 GiB pages free on the machine (its pool's `free_hugepages`), if
/// it has a pool.
pub fn giant_pages_free(m: &MachineInfo) -> Option<u64> {
    m.knobs
        .hugepages
        .iter()
        .find(|p| p.size_kb == 1 << 20)
        .and_then(|p| p.free)
}

/// The random curve on 1 GiB pages, from L2 up to `top`, when enough of
/// them are free (reserved by the administrator: nothing is reserved here):
/// set beside the 2 MiB curve, its climb is what is left without the
/// guest's own page walks (docs/methods-memory.md, "1 GiB pages").
fn giant_curve(m: &MachineInfo, main: &[usize], cf: &CacheFacts) -> Option<CurveSpec> {
    let top = main.iter().copied().max()?;
    if giant_pages_free(m)? < giant_pages_for(top) {
        return None;
    }
    let from = cf.l2.unwrap_or(MIB).max(256 * KIB);
    Some(CurveSpec {
        pattern: Pattern::Random,
        pages: Pages::Giant,
        sizes: main.iter().copied().filter(|&s| s >= from).collect(),
    })
}

/// Chase pattern of a curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Random,
    /// Random inside each 4 KiB page, pages in random order.
    PageLocal,
    /// Fixed stride (lmbench lat_mem_rd without -t).
    Sequential,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::PageLocal => "page_local",
            Pattern::Sequential => "sequential",
        }
    }
    pub fn parse(s: &str) -> Option<Pattern> {
        match s {
            "random" => Some(Pattern::Random),
            "page_local" | "page-local" | "tlb" => Some(Pattern::PageLocal),
            "sequential" | "stride" => Some(Pattern::Sequential),
            _ => None,
        }
    }
}

/// One curve to measure.
#[derive(Clone, Debug, Serialize)]
pub struct CurveSpec {
    pub pattern: Pattern,
    pub pages: Pages,
    pub sizes: Vec<usize>,
}

/// Everything the latency experiment will do.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyPlan {
    pub cpu: usize,
    /// Bind the memory to this node (None: local first touch).
    pub node: Option<usize>,
    pub stride: usize,
    pub curves: Vec<CurveSpec>,
    pub reps: usize,
    #[serde(skip)]
    pub min_sample: Duration,
    /// Measure the L3 plateau on one CPU of each L3 instance.
    pub per_l3_instance: bool,
    /// Why the DRAM figure is not available (the working set that reaches
    /// memory does not fit the memory this process may take); None when
    /// the curve reaches it.
    pub dram_unavailable: Option<String>,
    /// The note when memory cut the largest working set (the levels the
    /// curve then cannot reach say so).
    pub top_cut: Option<String>,
    pub notes: Vec<String>,
}

/// The default plan of a profile.
pub fn plan(machine: &MachineInfo, cpus: &CpuSet, profile: Profile) -> LatencyPlan {
    let cf = CacheFacts::of(machine);
    let mut notes = Vec::new();
    if let Some(n) = &cf.note {
        notes.push(n.clone());
    }
    let factor = if profile == Profile::Full { 16 } else { 4 };
    // The caches the chasing CPU can fill (its last-level instances).
    let cpu = cpus.first().unwrap_or(0);
    let serving = cf.llc_serving(machine, &CpuSet::from_ids([cpu]));
    let wanted = (serving * factor).max(64 * MIB);
    let room = common::memory_room();
    let cap = common::auto_cap_of(&room);
    let top = wanted.min(cap).max(8 * KIB);
    let top_cut =
        (top < wanted).then(|| common::capped_note("largest working set", top, wanted, &room));
    notes.extend(top_cut.clone());
    // The DRAM figure needs a working set well past the cache one CPU sees.
    let reach = cf.llc.saturating_mul(DRAM_REACH);
    let dram_unavailable = (top < reach).then(|| {
        common::fit_or_reason(
            &room,
            &format!(
                "the DRAM point needs ({DRAM_REACH} × the {} last-level cache)",
                fmt_size(cf.llc)
            ),
            reach,
        )
        .err()
        .unwrap_or_else(|| {
            format!(
                "the curve stops at {}: below {DRAM_REACH} × the last-level cache",
                fmt_size(top)
            )
        })
    });
    let mut curves = profile_curves(profile, top, &cf);
    if let Some(g) = giant_curve(machine, &curves[0].sizes, &cf) {
        curves.insert(1, g);
    }
    LatencyPlan {
        cpu,
        node: None,
        stride: 64,
        curves,
        // Many short samples: shorter than a scheduler slice, most samples
        // run undisturbed even when other tasks share the CPU, so the median
        // stays clean where long samples would all include foreign time.
        reps: match profile {
            Profile::Quick => 9,
            Profile::Standard => 15,
            Profile::Full => 25,
        },
        min_sample: match profile {
            Profile::Quick | Profile::Standard => Duration::from_micros(500),
            Profile::Full => Duration::from_millis(1),
        },
        per_l3_instance: profile != Profile::Quick,
        dram_unavailable,
        top_cut,
        notes,
    }
}

/// The curves of a profile up to the working set `top`: random on 2 MiB
/// and on 4 KiB pages, then the page-local and sequential variants.
fn profile_curves(profile: Profile, top: usize, cf: &CacheFacts) -> Vec<CurveSpec> {
    let (per, per_side) = match profile {
        Profile::Quick => (3, 1),
        Profile::Standard => (4, 2),
        Profile::Full => (8, 4),
    };
    let main = size_range(4 * KIB, top, per);
    let side = size_range(4 * KIB, top, per_side);
    let mut curves = vec![
        CurveSpec {
            pattern: Pattern::Random,
            pages: Pages::Huge,
            sizes: main.clone(),
        },
        CurveSpec {
            pattern: Pattern::Random,
            pages: Pages::Small,
            sizes: main,
        },
    ];
    // The TLB-separating and stride variants only matter past L2 in quick.
    let side_from = if profile == Profile::Quick {
        cf.l2.unwrap_or(MIB).max(256 * KIB)
    } else {
        4 * KIB
    };
    let side: Vec<usize> = side.into_iter().filter(|&s| s >= side_from).collect();
    curves.push(CurveSpec {
        pattern: Pattern::PageLocal,
        pages: Pages::Small,
        sizes: side.clone(),
    });
    curves.push(CurveSpec {
        pattern: Pattern::Sequential,
        pages: Pages::Small,
        sizes: side,
    });
    curves
}

/// Rough duration of a plan (s): per point sampling plus building the chains.
pub fn estimate(plan: &LatencyPlan) -> f64 {
    let per_point = plan.min_sample.as_secs_f64() * (plan.reps as f64 + 4.0) + 0.004;
    let mut t = 0.0;
    for c in &plan.curves {
        for &s in &c.sizes {
            t += per_point * (point_reps(plan.reps, s) as f64 + 4.0) / (plan.reps as f64 + 4.0);
        }
        // Building: ~6 ns per slot (Sattolo + link) plus faulting, per size.
        let bytes: usize = c.sizes.iter().sum();
        t += bytes as f64 / plan.stride as f64 * 8e-9
            + c.sizes.last().copied().unwrap_or(0) as f64 * 0.3e-9;
        // Pre-warm of large sizes.
        t += c.sizes.iter().filter(|&&s| s > 16 * MIB).count() as f64 * 0.03;
    }
    t
}

/// What `cpuscope latency` may change in a profile's plan (`None` or empty:
/// the profile's choice).
#[derive(Clone, Debug)]
pub struct Options {
    /// CPU that chases.
    pub cpu: Option<usize>,
    /// Working-set sizes: a list and/or ranges (`4K,64K`, `4K-512M`).
    pub sizes: Option<String>,
    /// Points per doubling for ranges in `sizes`.
    pub per_octave: usize,
    /// Page sizes (`4k`, `2m`, `1g`); `4k` and `2m`: the profile's curves.
    pub pages: Vec<String>,
    /// Chase patterns (random, page_local, sequential).
    pub patterns: Vec<String>,
    /// Bytes between chased slots.
    pub stride: usize,
    /// Bind the chased memory to this NUMA node.
    pub node: Option<String>,
}

/// The profile's plan with `o` applied; each error is one line naming the option.
pub fn plan_with(m: &MachineInfo, cpus: &CpuSet, p: Profile, o: &Options) -> Result<LatencyPlan> {
    let mut plan = plan(m, cpus, p);
    if let Some(c) = o.cpu {
        common::check_cpus(&CpuSet::from_ids([c]), cpus, "--cpu")?;
        plan.cpu = c;
    }
    if o.stride < 8 || !o.stride.is_multiple_of(8) {
        bail!(
            "--stride {}: must be a positive multiple of 8 bytes",
            o.stride
        );
    }
    plan.stride = o.stride;
    if let Some(n) = &o.node {
        plan.node = Some(common::one_node(n, m, "--node")?);
    }
    let pages = pages_option(&o.pages)?;
    let mut patterns = Vec::new();
    for p in &o.patterns {
        patterns.push(Pattern::parse(p).ok_or_else(|| {
            anyhow::anyhow!(
                "--pattern: unknown pattern '{p}' (expected random, page_local or sequential)"
            )
        })?);
    }
    if o.per_octave == 0 || o.per_octave > 64 {
        bail!("--per-octave {}: must be between 1 and 64", o.per_octave);
    }
    let sizes = match &o.sizes {
        Some(s) => Some(user_sizes(&mut plan, s, o.per_octave)?),
        None => None,
    };
    // Rebuild the curve list when the user chose patterns, pages or sizes.
    if sizes.is_some() || !patterns.is_empty() || o.pages.len() != 2 {
        let pats = if patterns.is_empty() {
            vec![Pattern::Random]
        } else {
            patterns
        };
        let default_sizes = plan
            .curves
            .first()
            .map(|c| c.sizes.clone())
            .unwrap_or_default();
        let sizes = sizes.unwrap_or(default_sizes);
        let mut curves = Vec::new();
        for pat in pats {
            for &pg in &pages {
                curves.push(CurveSpec {
                    pattern: pat,
                    pages: pg,
                    sizes: sizes.clone(),
                });
            }
        }
        plan.curves = curves;
    }
    Ok(plan)
}

/// `--pages`: each page size asked for.
fn pages_option(pages: &[String]) -> Result<Vec<Pages>> {
    let mut out = Vec::new();
    for p in pages {
        out.push(match p.as_str() {
            "4k" | "4K" | "small" => Pages::Small,
            "2m" | "2M" | "huge" => Pages::Huge,
            "1g" | "1G" | "giant" => Pages::Giant,
            o => bail!("--pages: unknown page size '{o}' (expected 4k, 2m or 1g)"),
        });
    }
    Ok(out)
}

/// `--sizes` (`s`, ranges at `per_octave` points per doubling): the
/// working sets, each checked to fit and to hold two slots.
fn user_sizes(plan: &mut LatencyPlan, s: &str, per_octave: usize) -> Result<Vec<usize>> {
    // The user's sizes: the DRAM figure is read at the largest, as asked.
    plan.dram_unavailable = None;
    plan.top_cut = None;
    let v = common::parse_size_list(s, per_octave)?;
    let max = v.iter().copied().max().unwrap_or(0);
    common::check_fits("--sizes", max)?;
    if let Some(&min) = v.iter().min() {
        if min < 2 * plan.stride {
            bail!(
                "--sizes: {} is smaller than two {}-byte slots",
                fmt_size(min),
                plan.stride
            );
        }
    }
    Ok(v)
}

/// Working sets from this size on get [`BIG_POINT_REPS_FACTOR`] times the
/// samples: they are the DRAM points (or the far end of a large L3), whose
/// latency moves most with other traffic on the machine, and their chains
/// take longer to build than the extra samples take to measure.
pub const BIG_POINT: usize = 64 * MIB;
pub const BIG_POINT_REPS_FACTOR: usize = 8;

/// Samples for one point of a curve.
pub fn point_reps(reps: usize, size: usize) -> usize {
    if size >= BIG_POINT {
        reps * BIG_POINT_REPS_FACTOR
    } else {
        reps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::knobs::HugePagePool;

    fn with_giant_pool(free: Option<u64>) -> MachineInfo {
        let mut m = MachineInfo::default();
        if let Some(f) = free {
            m.knobs.hugepages.push(HugePagePool {
                size_kb: 1 << 20,
                nr: Some(f),
                free: Some(f),
                reserved: None,
                surplus: None,
                per_node: Vec::new(),
            });
        }
        m
    }

    #[test]
    fn a_1g_curve_only_when_enough_reserved_pages_are_free() {
        let cpus = CpuSet::from_ids([0]);
        let giant = |m: &MachineInfo| {
            plan(m, &cpus, Profile::Quick)
                .curves
                .iter()
                .find(|c| c.pages == Pages::Giant)
                .cloned()
        };
        assert!(giant(&with_giant_pool(None)).is_none(), "no pool");
        assert!(giant(&with_giant_pool(Some(0))).is_none(), "none free");
        let p = plan(&with_giant_pool(Some(64)), &cpus, Profile::Quick);
        let top = p.curves[0].sizes.iter().copied().max().unwrap();
        let g = giant(&with_giant_pool(Some(giant_pages_for(top)))).expect("enough free");
        assert_eq!((g.pattern, g.curves_top()), (Pattern::Random, top));
        assert!(g.sizes.iter().all(|&s| s >= 256 * KIB), "{:?}", g.sizes);
        // Right after the 2 MiB curve, so the climb split reads both.
        assert_eq!(p.curves[1].pages, Pages::Giant);
        assert_eq!(pages_option(&["1g".into()]).unwrap(), vec![Pages::Giant]);
        assert!(pages_option(&["3m".into()])
            .unwrap_err()
            .to_string()
            .contains("4k, 2m or 1g"));
    }

    impl CurveSpec {
        fn curves_top(&self) -> usize {
            self.sizes.iter().copied().max().unwrap_or(0)
        }
    }
}

//! TLB reach: how many pages one core can touch before each load pays for a
//! page walk. Two random pointer chases with the same number of cache lines:
//! one line per base page ("spread", one TLB entry per load) and the same
//! lines packed into as few pages as they fill ("packed"). The cache sees the
//! same footprint in both, so the difference is the translation cost; it
//! steps up where the pages stop fitting a TLB level.
//!
//! Added as the worked example of docs/architecture.md's rule: this file and
//! one registry line in experiments/mod.rs (the chase kernel is
//! kernels/memory.rs's `PointerChain`, the timing `latency::chase_samples`).

pub mod view;

use crate::base::fmt::{fmt_num, fmt_size};
use crate::base::CpuSet;
use crate::experiments::experiment::{ExpCtx, Experiment, Profile};
use crate::experiments::memory::latency::chase_samples;
use crate::experiments::memory::payload::{PageWalkData, PageWalkPoint};
use crate::kernels::memory::{Layout, PointerChain};
use crate::machine::MachineInfo;
use crate::placement::buffer::{Buffer, BufferOptions};
use crate::placement::mempolicy::page_size;
use crate::placement::pin::AffinityGuard;
use crate::results::schema::{MetricId, ResultRecord};
use anyhow::{bail, Result};
use std::time::Duration;

pub struct TlbReach;

pub const EXP: &str = "tlb_reach";
/// Extra ns per load at the largest page count: a page walk beyond every TLB level.
pub const PAGE_WALK: MetricId = MetricId::new(EXP, "page_walk_cost");
/// Pages a TLB level covers (param `level`: first, last), inferred from the curve's steps.
pub const REACH: MetricId = MetricId::new(EXP, "reach");
const METHOD_VERSION: u32 = 1;
const LINE: usize = 64;

/// Page counts swept, by profile (4 KiB pages: 64 KiB to 32 MiB of pages).
fn page_counts(profile: Profile) -> Vec<usize> {
    let top = match profile {
        Profile::Quick => 4096,
        Profile::Standard => 8192,
        Profile::Full => 16384,
    };
    let mut v = Vec::new();
    let mut n = 16;
    while n <= top {
        v.push(n);
        v.push(n * 3 / 2);
        n *= 2;
    }
    v.retain(|&n| n <= top);
    v
}

fn reps(profile: Profile) -> (usize, Duration) {
    match profile {
        Profile::Quick => (5, Duration::from_millis(2)),
        Profile::Standard => (9, Duration::from_millis(4)),
        Profile::Full => (15, Duration::from_millis(8)),
    }
}

/// One chase of `lines` cache lines, `stride` bytes apart, on base pages: ns per load.
fn chase(lines: usize, stride: usize, reps: (usize, Duration), ctx: &ExpCtx) -> Result<Vec<f64>> {
    let bytes = lines * stride;
    let buf = Buffer::new(bytes, &BufferOptions::base_here())?;
    let chain = PointerChain::build(buf, bytes, Layout::Random { stride }, 0x71b ^ lines as u64)?;
    if !chain.verify_single_cycle() {
        bail!("the {lines}-line chain is not one cycle");
    }
    chase_samples(&chain, reps.0, reps.1, ctx.stop)
}

/// The page counts whose spread chase (one page of `stride` per line,
/// plus its 4-byte successor list) fits the memory this process may take
/// now, and the reason the larger ones were left out.
fn counts_that_fit(counts: Vec<usize>, stride: usize) -> (Vec<usize>, Option<String>) {
    let room = crate::experiments::common::memory_room();
    let need = |pages: usize| pages * (stride + 4);
    let (fit, out): (Vec<usize>, Vec<usize>) = counts
        .into_iter()
        .partition(|&p| crate::experiments::common::fit_or_reason(&room, "", need(p)).is_ok());
    let why = out.first().and_then(|&p| {
        crate::experiments::common::fit_or_reason(
            &room,
            &format!("the chase over {p} pages needs"),
            need(p),
        )
        .err()
    });
    (fit, why)
}

/// Both figures not available: no page count fits (`cut`: why).
fn none_fits(cut: Option<String>, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
    let why = cut.unwrap_or_else(|| "no page count to sweep".into());
    out(ResultRecord::unavailable(
        PAGE_WALK.experiment,
        PAGE_WALK.metric,
        "ns",
        &why,
    ))?;
    out(ResultRecord::unavailable(
        REACH.experiment,
        REACH.metric,
        "pages",
        &why,
    ))
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// The last page count of `extra` (pages, extra ns) before the extra cost
/// passes `limit`, or why there is none.
/// The last level's reach, or why there is none: a curve with one step
/// has only the first level's reach (said so, never skipped).
fn last_level(
    first: &std::result::Result<usize, String>,
    last: std::result::Result<usize, String>,
) -> std::result::Result<usize, String> {
    match (first, last) {
        (Ok(p), Ok(q)) if *p == q => Err(format!(
            "the curve has one step (after {p} pages, the first level's reach): no second TLB level seen within the sweep"
        )),
        (_, l) => l,
    }
}

fn reach_of(extra: &[(usize, f64)], limit: f64) -> std::result::Result<usize, String> {
    let top = extra.last().map_or(0, |p| p.0);
    match extra.iter().position(|(_, e)| *e > limit) {
        Some(0) => Err(format!(
            "already {} ns extra at {} pages, the sweep's start: this TLB level is smaller",
            fmt_num(extra[0].1),
            extra[0].0
        )),
        Some(i) => Ok(extra[i - 1].0),
        None => Err(format!(
            "the extra cost stays under {} ns up to {top} pages: the TLBs reach beyond this sweep",
            fmt_num(limit)
        )),
    }
}

/// Each page count's samples: (pages, spread ns per load, packed ns per load).
type PagePoint = (usize, Vec<f64>, Vec<f64>);

/// The spread and the packed chase at each page count of `counts`, until
/// the run is stopped.
fn sweep_pages(
    ctx: &mut ExpCtx,
    counts: Vec<usize>,
    page: usize,
    spread_stride: usize,
    r: (usize, Duration),
) -> Result<Vec<PagePoint>> {
    let mut points = Vec::new();
    for pages in counts {
        if ctx.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        (ctx.step)(&format!("{pages} pages of {}", fmt_size(page)));
        let spread = chase(pages, spread_stride, r, ctx)?;
        let packed = chase(pages, LINE, r, ctx)?;
        points.push((pages, spread, packed));
    }
    Ok(points)
}

/// The page-walk cost record: the extra ns per load at the largest page
/// count (`extra`: per page count), with the whole curve as its payload.
fn page_walk_record(
    points: &[PagePoint],
    extra: &[(usize, f64)],
    page: usize,
    method: &str,
    cut: &Option<String>,
) -> ResultRecord {
    let (top, walk) = *extra.last().expect("points is not empty");
    let (_, s_top, k_top) = points.last().expect("points is not empty");
    let data = PageWalkData {
        page_bytes: page,
        points: points
            .iter()
            .zip(extra)
            .map(|((p, s, k), (_, e))| PageWalkPoint {
                pages: *p,
                spread_ns: median(s),
                packed_ns: median(k),
                extra_ns: *e,
            })
            .collect(),
    };
    let mut rec = ResultRecord::of(PAGE_WALK, "ns", false)
        .with_param("pages", top as u64)
        .with_method(method, METHOD_VERSION)
        .with_note(&format!(
            "{} ns per load with one line per page, {} ns packed (derived from two medians of {} samples each)",
            fmt_num(median(s_top)),
            fmt_num(median(k_top)),
            s_top.len().min(k_top.len())
        ))
        .with_payload(&data);
    rec.value = Some(walk);
    rec.repetitions = s_top.len().min(k_top.len()) as u32;
    if let Some(c) = cut {
        rec = rec.with_note(&format!("larger page counts left out: {c}"));
    }
    rec
}

/// The reach record of one TLB `level` ("first", "last"): the page count
/// `found` below the extra cost `limit`, or not available with why.
fn reach_record(
    (level, limit, found): (&str, f64, std::result::Result<usize, String>),
    method: &str,
    page: usize,
    repetitions: u32,
) -> ResultRecord {
    match found {
        Ok(pages) => {
            let mut r = ResultRecord::of(REACH, "pages", true)
                .with_param("level", level)
                .with_method(
                    &format!(
                        "{method}; the last page count whose extra cost stays under {} ns \
                         (inferred from the curve, not read from the CPU)",
                        fmt_num(limit)
                    ),
                    METHOD_VERSION,
                )
                .with_note(&format!(
                    "{pages} pages = {} of memory mapped by the {level} TLB level",
                    fmt_size(pages * page)
                ));
            r.value = Some(pages as f64);
            r.repetitions = repetitions;
            r
        }
        Err(why) => {
            ResultRecord::unavailable(EXP, REACH.metric, "pages", &why).with_param("level", level)
        }
    }
}

impl Experiment for TlbReach {
    fn name(&self) -> &'static str {
        EXP
    }
    fn title(&self) -> &'static str {
        "TLB reach: one load per page vs the same lines packed, over a growing number of pages"
    }
    fn estimate_secs(&self, _m: &MachineInfo, _cpus: &CpuSet, profile: Profile) -> f64 {
        let (n, min) = reps(profile);
        page_counts(profile).len() as f64 * 2.0 * (n as f64 + 3.0) * min.as_secs_f64() * 1.5
    }
    fn run(&self, ctx: &mut ExpCtx, out: &mut dyn FnMut(ResultRecord) -> Result<()>) -> Result<()> {
        let Some(cpu) = ctx.cpus.first() else {
            return out(ResultRecord::unavailable(
                EXP,
                PAGE_WALK.metric,
                "ns",
                "no usable CPU",
            ));
        };
        let _pin = AffinityGuard::pin(cpu)?;
        let page = page_size();
        // One line per page, its offset moving by a line each page so the
        // lines spread over the cache sets as the packed ones do.
        let spread_stride = page + LINE;
        let r = reps(ctx.profile);
        let (counts, cut) = counts_that_fit(page_counts(ctx.profile), spread_stride);
        if counts.is_empty() {
            return none_fits(cut, out);
        }
        let points = sweep_pages(ctx, counts, page, spread_stride, r)?;
        if points.is_empty() {
            return Ok(());
        }
        let extra: Vec<(usize, f64)> = points
            .iter()
            .map(|(p, s, k)| (*p, median(s) - median(k)))
            .collect();
        let walk = extra.last().expect("points is not empty").1;
        let method = format!(
            "random chase over N lines on {} pages: one line per page minus the same N lines packed \
             ({LINE}-byte stride), medians of each; pinned to CPU {cpu}",
            fmt_size(page)
        );
        out(page_walk_record(&points, &extra, page, &method, &cut))?;

        // The reach of the first and of the last TLB level, inferred from
        // the curve: the last page count before the extra cost passes 2 ns
        // (first step) and a quarter of the final cost (last step).
        let repetitions = points.last().expect("points is not empty").1.len() as u32;
        let last_below = |limit: f64| reach_of(&extra, limit);
        let first = last_below(2.0);
        let last = last_below((walk / 4.0).max(2.0));
        for (level, limit, found) in [
            ("first", 2.0, first.clone()),
            ("last", (walk / 4.0).max(2.0), last.clone()),
        ] {
            let found = if level == "last" {
                last_level(&first, found)
            } else {
                found
            };
            out(reach_record(
                (level, limit, found),
                &method,
                page,
                repetitions,
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_leaves_the_last_level_not_available_with_why() {
        // The ARM lab's TCG guest once measured one step: the last level is
        // said to be unseen, not dropped (it used to be skipped silently).
        let why = last_level(&Ok(512), Ok(512)).unwrap_err();
        assert!(
            why.contains("one step") && why.contains("512 pages"),
            "{why}"
        );
        assert_eq!(last_level(&Ok(512), Ok(4096)), Ok(4096));
        assert_eq!(last_level(&Err("x".into()), Ok(4096)), Ok(4096));
    }

    #[test]
    fn reach_is_the_last_count_before_each_step() {
        let curve = [
            (16, 0.1),
            (32, 0.4),
            (64, 0.9),
            (96, 5.0),
            (1024, 4.0),
            (2048, 5.5),
            (3072, 25.0),
            (4096, 30.0),
        ];
        assert_eq!(reach_of(&curve, 2.0), Ok(64));
        assert_eq!(reach_of(&curve, 30.0 / 4.0), Ok(2048));
        assert!(reach_of(&curve, 50.0)
            .unwrap_err()
            .contains("beyond this sweep"));
        assert!(reach_of(&[(16, 9.0), (32, 9.0)], 2.0)
            .unwrap_err()
            .contains("smaller"));
    }

    #[test]
    fn sweep_grows_by_half_octaves_within_the_profile() {
        let q = page_counts(Profile::Quick);
        assert_eq!(&q[..4], &[16, 24, 32, 48]);
        assert_eq!(*q.last().unwrap(), 4096);
        assert!(q.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(*page_counts(Profile::Full).last().unwrap(), 16384);
    }
}

//! Monotonic high-resolution time for measured regions.
//!
//! Sources, in order of preference:
//! - x86_64: the TSC, read as `LFENCE; RDTSC; LFENCE` (the fences keep the read
//!   from drifting into or out of the timed code), used only when
//!   `/proc/cpuinfo` lists both `constant_tsc` and `nonstop_tsc` (invariant
//!   TSC: same rate at every P-/C-state, so ticks are wall time). Its rate is
//!   calibrated against `CLOCK_MONOTONIC_RAW` over ~30 ms at first use.
//! - aarch64: the virtual counter `CNTVCT_EL0` (read after `ISB`), at the rate
//!   `CNTFRQ_EL0` states.
//! - otherwise: `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
//!
//! Guarantees: ticks never go backwards on one CPU; `ns()` converts with the
//! calibrated rate. The resolution (smallest non-zero step seen between
//! back-to-back reads) and the overhead (median cost of one read) are measured
//! at calibration and reported in [`TimerInfo`], together with the source and,
//! when a better source was refused, why. Ticks taken on different CPUs are
//! comparable only as far as the hardware keeps the counters in sync (the
//! invariant TSC and the arm generic timer are specified to be).

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Where ticks come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerSource {
    /// x86 time-stamp counter (invariant).
    Tsc,
    /// arm generic timer, virtual count.
    Cntvct,
    /// clock_gettime(CLOCK_MONOTONIC).
    ClockMonotonic,
}

impl TimerSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            TimerSource::Tsc => "tsc",
            TimerSource::Cntvct => "cntvct",
            TimerSource::ClockMonotonic => "clock_monotonic",
        }
    }
}

/// A raw timestamp; only meaningful with the [`Timer`] that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tick(pub u64);

/// What the timer is and how fine it is, for the results record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    pub source: TimerSource,
    /// Counter ticks per nanosecond (1.0 for clock_monotonic).
    pub ticks_per_ns: f64,
    /// Smallest non-zero step seen between back-to-back reads, in ns.
    pub resolution_ns: f64,
    /// Median cost of one read (delta of back-to-back reads), in ns.
    pub overhead_ns: f64,
    /// How the rate was obtained ("calibrated against CLOCK_MONOTONIC_RAW over 30.0 ms",
    /// "CNTFRQ_EL0", "nanoseconds").
    pub rate_from: String,
    /// Why a better source was not used; None when the best one is in use.
    pub fallback_reason: Option<String>,
}

/// A calibrated clock. [`Timer::new`] calibrates once per process and returns
/// a clone of the cached result afterwards; [`Timer::global`] borrows it.
#[derive(Clone, Debug)]
pub struct Timer {
    source: TimerSource,
    ns_per_tick: f64,
    info: TimerInfo,
}

static GLOBAL: OnceLock<Timer> = OnceLock::new();

impl Default for Timer {
    fn default() -> Self {
        Timer::new()
    }
}

impl Timer {
    /// The process-wide timer: the best source, calibrated at first call
    /// (~30 ms, sleeping), cached afterwards.
    pub fn new() -> Timer {
        Timer::global().clone()
    }

    /// The process-wide timer, borrowed (calibrated at first call).
    pub fn global() -> &'static Timer {
        GLOBAL.get_or_init(Timer::calibrate_best)
    }

    /// A timer on a given source, calibrated now (not cached). For tests and
    /// for comparing sources. Falls back to clock_monotonic when the source
    /// does not exist on this machine.
    pub fn with_source(source: TimerSource) -> Timer {
        match source {
            TimerSource::ClockMonotonic => {
                Timer::finish(TimerSource::ClockMonotonic, 1.0, "nanoseconds".into(), None)
            }
            _ => {
                let best = Timer::calibrate_best();
                if best.source == source {
                    best
                } else {
                    let why = format!("{} is not available here", source.as_str());
                    Timer::finish(
                        TimerSource::ClockMonotonic,
                        1.0,
                        "nanoseconds".into(),
                        Some(why),
                    )
                }
            }
        }
    }

    fn calibrate_best() -> Timer {
        match hw_counter() {
            Ok((source, ticks_per_ns, rate_from)) => {
                Timer::finish(source, ticks_per_ns, rate_from, None)
            }
            Err(why) => Timer::finish(
                TimerSource::ClockMonotonic,
                1.0,
                "nanoseconds".into(),
                Some(why),
            ),
        }
    }

    fn finish(
        source: TimerSource,
        ticks_per_ns: f64,
        rate_from: String,
        fallback_reason: Option<String>,
    ) -> Timer {
        let mut t = Timer {
            source,
            ns_per_tick: 1.0 / ticks_per_ns,
            info: TimerInfo {
                source,
                ticks_per_ns,
                resolution_ns: f64::NAN,
                overhead_ns: f64::NAN,
                rate_from,
                fallback_reason,
            },
        };
        let (res, ovh) = t.measure_resolution();
        t.info.resolution_ns = res;
        t.info.overhead_ns = ovh;
        t
    }

    /// Read the clock.
    #[inline(always)]
    pub fn now(&self) -> Tick {
        match self.source {
            TimerSource::Tsc => Tick(read_tsc()),
            TimerSource::Cntvct => Tick(read_cntvct()),
            TimerSource::ClockMonotonic => Tick(read_monotonic_ns()),
        }
    }

    /// Nanoseconds from `start` to `end`. Negative only when `end` was read
    /// before `start` (e.g. on another CPU with an unsynchronised counter).
    #[inline]
    pub fn ns(&self, start: Tick, end: Tick) -> f64 {
        (end.0 as i128 - start.0 as i128) as f64 * self.ns_per_tick
    }

    /// Convert a tick count to nanoseconds.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick
    }

    /// Nanoseconds elapsed since `start`.
    #[inline]
    pub fn since(&self, start: Tick) -> f64 {
        self.ns(start, self.now())
    }

    pub fn source(&self) -> TimerSource {
        self.source
    }

    pub fn info(&self) -> TimerInfo {
        self.info.clone()
    }

    /// (resolution, overhead) in ns from back-to-back reads.
    fn measure_resolution(&self) -> (f64, f64) {
        const N: usize = 2000;
        let mut deltas = Vec::with_capacity(N);
        let mut min_step = u64::MAX;
        for _ in 0..N {
            let a = self.now();
            let b = self.now();
            let d = b.0.saturating_sub(a.0);
            deltas.push(d);
            if d > 0 {
                min_step = min_step.min(d);
            }
        }
        // A coarse clock may show no step in back-to-back reads: wait for one.
        if min_step == u64::MAX {
            for _ in 0..20 {
                let a = self.now();
                let mut b = self.now();
                let mut spins = 0u32;
                while b == a && spins < 10_000_000 {
                    b = self.now();
                    spins += 1;
                }
                let d = b.0.saturating_sub(a.0);
                if d > 0 {
                    min_step = min_step.min(d);
                }
            }
        }
        deltas.sort_unstable();
        let median = deltas[N / 2];
        let res = if min_step == u64::MAX {
            f64::NAN
        } else {
            self.ticks_to_ns(min_step)
        };
        (res, self.ticks_to_ns(median))
    }
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC(_RAW) exists on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn read_monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

#[allow(dead_code)]
fn read_monotonic_raw_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC_RAW)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_tsc() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: LFENCE and RDTSC exist on every x86_64 CPU (SSE2 is baseline).
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn read_tsc() -> u64 {
    read_monotonic_ns()
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn read_cntvct() -> u64 {
    let v: u64;
    // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux (the kernel enables it
    // for the vDSO); ISB orders the read after preceding instructions.
    unsafe { std::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack)) };
    v
}

#[cfg(not(target_arch = "aarch64"))]
#[inline(always)]
fn read_cntvct() -> u64 {
    read_monotonic_ns()
}

/// The CPU's hardware counter: (source, ticks per ns, how the rate was found),
/// or why it cannot be used.
#[cfg(target_arch = "x86_64")]
fn hw_counter() -> Result<(TimerSource, f64, String), String> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo")
        .map_err(|e| format!("cannot read /proc/cpuinfo to check for an invariant TSC: {e}"))?;
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().collect::<Vec<_>>())
        .ok_or_else(|| "no flags line in /proc/cpuinfo".to_string())?;
    let missing: Vec<&str> = ["tsc", "constant_tsc", "nonstop_tsc"]
        .into_iter()
        .filter(|f| !flags.contains(f))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "TSC is not invariant (missing CPU flags: {})",
            missing.join(", ")
        ));
    }
    // A preempted calibration shows as spread between its windows: retry.
    let mut attempt = calibrate_tsc();
    for _ in 0..2 {
        if attempt.is_ok() {
            break;
        }
        attempt = calibrate_tsc();
    }
    let (tpn, window_ms) = attempt?;
    Ok((
        TimerSource::Tsc,
        tpn,
        format!("calibrated against CLOCK_MONOTONIC_RAW over {window_ms:.1} ms"),
    ))
}

/// Ticks per ns of the TSC, from two (CLOCK_MONOTONIC_RAW, TSC) pairs ~30 ms
/// apart. Each pair is the tightest of several tries: the TSC read is
/// bracketed by two clock reads and the pair with the smallest bracket wins.
#[cfg(target_arch = "x86_64")]
fn calibrate_tsc() -> Result<(f64, f64), String> {
    fn pair() -> (f64, u64) {
        let mut best = (u64::MAX, 0.0, 0u64);
        for _ in 0..16 {
            let c0 = read_monotonic_raw_ns();
            let t = read_tsc();
            let c1 = read_monotonic_raw_ns();
            let gap = c1.saturating_sub(c0);
            if gap < best.0 {
                best = (gap, (c0 as f64 + c1 as f64) / 2.0, t);
            }
        }
        (best.1, best.2)
    }
    let mut estimates = Vec::with_capacity(3);
    let mut window = 0.0;
    for _ in 0..3 {
        let (c0, t0) = pair();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let (c1, t1) = pair();
        let dns = c1 - c0;
        let dt = t1.wrapping_sub(t0) as f64;
        if dns <= 0.0 || dt <= 0.0 {
            return Err("TSC calibration failed: the clock or the TSC did not advance".to_string());
        }
        window += dns / 1e6;
        estimates.push(dt / dns);
    }
    estimates.sort_by(|a, b| a.total_cmp(b));
    let tpn = estimates[1];
    let spread = (estimates[2] - estimates[0]) / tpn;
    if !(0.05..=20.0).contains(&tpn) {
        return Err(format!(
            "TSC calibration gave an implausible rate of {tpn:.4} ticks/ns"
        ));
    }
    if spread > 0.01 {
        return Err(format!(
            "TSC rate is unstable across calibration windows ({:.2}% spread)",
            spread * 100.0
        ));
    }
    Ok((tpn, window))
}

#[cfg(target_arch = "aarch64")]
fn hw_counter() -> Result<(TimerSource, f64, String), String> {
    let freq: u64;
    // SAFETY: CNTFRQ_EL0 is readable from EL0.
    unsafe { std::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) freq, options(nomem, nostack)) };
    if freq == 0 {
        return Err("CNTFRQ_EL0 reads 0 (firmware did not set the counter frequency)".to_string());
    }
    Ok((
        TimerSource::Cntvct,
        freq as f64 / 1e9,
        format!("CNTFRQ_EL0 = {freq} Hz"),
    ))
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn hw_counter() -> Result<(TimerSource, f64, String), String> {
    Err(format!(
        "no cycle counter support for {} in cpuscope",
        std::env::consts::ARCH
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_fallback_is_nanoseconds() {
        let t = Timer::with_source(TimerSource::ClockMonotonic);
        assert_eq!(t.source(), TimerSource::ClockMonotonic);
        assert_eq!(t.info().ticks_per_ns, 1.0);
        let a = t.now();
        let b = t.now();
        assert!(b >= a);
        assert_eq!(t.ns(Tick(100), Tick(350)), 250.0);
        assert_eq!(t.ns(Tick(350), Tick(100)), -250.0);
    }
}

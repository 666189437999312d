//! CPU time of the whole machine and of this process, read from /proc at one
//! moment (two readings make a run's activity: what other programs used,
//! and the time the hypervisor stole). Reading is all this file does.

use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// One reading of /proc/stat's `cpu` line and /proc/self/stat, in clock
/// ticks (USER_HZ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    /// Every column of the `cpu` line summed (user … steal; the guest
    /// columns are already inside user and nice).
    pub total: u64,
    /// idle + iowait.
    pub idle: u64,
    /// The steal column (0 where the kernel has none).
    pub steal: u64,
    /// This process: utime + stime + cutime + cstime (its waited-for
    /// children included).
    pub own: u64,
}

impl CpuTimes {
    /// Ticks the CPUs were busy (neither idle nor stolen).
    pub fn busy(&self) -> u64 {
        self.total.saturating_sub(self.idle + self.steal)
    }
}

/// Parse the aggregate `cpu ` line of /proc/stat: (total, idle + iowait, steal).
pub fn parse_stat_total(text: &str) -> Option<(u64, u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    if v.len() < 4 {
        return None;
    }
    let total = v.iter().take(8).sum();
    let idle = v[3] + v.get(4).copied().unwrap_or(0);
    let steal = v.get(7).copied().unwrap_or(0);
    Some((total, idle, steal))
}

/// Parse utime + stime + cutime + cstime (fields 14–17) of a /proc/PID/stat
/// line; the command name (field 2) may hold spaces and parentheses.
pub fn parse_self_ticks(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): fields 14..=17 are indices 11..=14.
    let mut sum = 0u64;
    for i in 11..=14 {
        sum += f.get(i)?.parse::<u64>().ok()?;
    }
    Some(sum)
}

/// Read both under `sys` now; None when either is unreadable.
pub fn read(sys: &Sysroot) -> Option<CpuTimes> {
    let (total, idle, steal) = parse_stat_total(&sys.read_raw("/proc/stat")?)?;
    let own = parse_self_ticks(&sys.read_raw("/proc/self/stat")?)?;
    Some(CpuTimes {
        total,
        idle,
        steal,
        own,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_total_and_self() {
        let t = "cpu  100 5 50 800 20 1 2 30 0 0\ncpu0 1 2 3 4\n";
        assert_eq!(parse_stat_total(t), Some((1008, 820, 30)));
        assert_eq!(parse_stat_total("cpu  1 2\n"), None);
        assert_eq!(parse_stat_total("intr 5\n"), None);
        let s = "4242 (a (b) c) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17";
        // utime=11 stime=12 cutime=13 cstime=14
        assert_eq!(parse_self_ticks(s), Some(50));
        assert_eq!(parse_self_ticks("1 (x) R 1 2"), None);
        let c = CpuTimes {
            total: 1008,
            idle: 820,
            steal: 30,
            own: 0,
        };
        assert_eq!(c.busy(), 158);
    }
}

//! What decides whether counters work here: registered PMUs,
//! `kernel.perf_event_paranoid`, capabilities, hypervisor, NMI watchdog. Used
//! to turn an `perf_event_open` errno into the likely reason.

use super::events::Event;
use super::raw::errno_name;
use super::sysfs;
use crate::base::Sysroot;
use serde::Serialize;

const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// The counting environment of this machine and process.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PerfEnv {
    /// PMUs registered in /sys/bus/event_source/devices.
    pub pmus: Vec<String>,
    /// Those that count the CPU core (cpu, cpu_core, armv8_pmuv3_0, ...).
    pub core_pmus: Vec<String>,
    /// kernel.perf_event_paranoid, when readable.
    pub paranoid: Option<i64>,
    /// CAP_PERFMON in the effective set.
    pub cap_perfmon: bool,
    /// CAP_SYS_ADMIN in the effective set.
    pub cap_sys_admin: bool,
    /// The CPU reports a hypervisor (`hypervisor` cpuinfo flag).
    pub hypervisor: bool,
    /// kernel.nmi_watchdog (holds one counter on x86 when on).
    pub nmi_watchdog: Option<bool>,
}

/// Why an event has no value: a short code for tables and a full sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub code: String,
    pub text: String,
}

impl Reason {
    pub fn new(code: &str, text: impl Into<String>) -> Reason {
        Reason {
            code: code.to_string(),
            text: text.into(),
        }
    }
}

impl PerfEnv {
    /// Read the environment from a root (live: `/`).
    pub fn detect(sys: &Sysroot) -> PerfEnv {
        let pmus = sysfs::pmus(sys);
        let core_pmus = pmus
            .iter()
            .filter(|p| sysfs::is_core_pmu(p))
            .cloned()
            .collect();
        let paranoid = sys.read_i64("/proc/sys/kernel/perf_event_paranoid");
        let nmi_watchdog = sys
            .read_i64("/proc/sys/kernel/nmi_watchdog")
            .map(|v| v != 0);
        let hypervisor = sys.has_hypervisor_sign();
        let capeff = if sys.is_live() {
            sys.read_raw("/proc/self/status").and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("CapEff:"))
                    .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            })
        } else {
            None
        }
        .unwrap_or(0);
        PerfEnv {
            pmus,
            core_pmus,
            paranoid,
            cap_perfmon: capeff & (1 << CAP_PERFMON) != 0,
            cap_sys_admin: capeff & (1 << CAP_SYS_ADMIN) != 0,
            hypervisor,
            nmi_watchdog,
        }
    }

    /// Privileged enough to ignore perf_event_paranoid.
    pub fn privileged(&self) -> bool {
        self.cap_perfmon || self.cap_sys_admin
    }

    /// The likely reason `perf_event_open` failed with `errno` for `ev`.
    /// `per_cpu` tells whether the event was opened CPU-wide.
    pub fn explain_open_error(&self, ev: &Event, errno: i32, per_cpu: bool) -> Reason {
        let en = errno_name(errno);
        match errno {
            libc::EACCES | libc::EPERM => self.permission_reason(&en, per_cpu),
            libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV if ev.is_hardware() && self.core_pmus.is_empty() => {
                self.no_pmu_reason(&en)
            }
            libc::ENOENT => self.no_event_reason(ev, &en),
            libc::EOPNOTSUPP => Reason::new(
                "not-supported",
                format!("{en}: the PMU does not support this event or one of its attributes"),
            ),
            libc::ENODEV => Reason::new(
                "no-device",
                format!("{en}: the event's PMU does not exist for this CPU or CPU type"),
            ),
            libc::EINVAL => Reason::new(
                "invalid",
                format!(
                    "{en}: the kernel rejected the event encoding or attributes for this PMU"
                ),
            ),
            libc::EBUSY => Reason::new(
                "busy",
                format!("{en}: the counter is held by another user (another profiler, the hypervisor)"),
            ),
            libc::ENOSPC => Reason::new(
                "no-counter",
                format!("{en}: no free hardware counter for this event"),
            ),
            libc::EMFILE | libc::ENFILE => Reason::new(
                "fd-limit",
                format!("{en}: out of file descriptors (raise `ulimit -n`)"),
            ),
            libc::E2BIG => Reason::new(
                "attr-size",
                format!("{en}: the kernel does not accept this perf_event_attr size"),
            ),
            libc::ENOSYS => Reason::new(
                "no-perf",
                format!(
                    "{en}: perf_event_open is unavailable (kernel without CONFIG_PERF_EVENTS, or blocked by seccomp)"
                ),
            ),
            _ => Reason::new("open-failed", format!("{en}: perf_event_open failed")),
        }
    }

    /// Why opening was not permitted: a security module, the paranoid
    /// setting, or what counting whole CPUs or kernel space needs.
    fn permission_reason(&self, en: &str, per_cpu: bool) -> Reason {
        let p = self
            .paranoid
            .map(|p| format!("kernel.perf_event_paranoid={p}"))
            .unwrap_or_else(|| "perf_event_paranoid unknown".into());
        let text = if self.privileged() {
            format!(
                "{en}: permission denied although the process has CAP_PERFMON/CAP_SYS_ADMIN \
                 (a security module or seccomp filter blocks perf events?)"
            )
        } else if self.paranoid.is_some_and(|p| p >= 3) {
            format!(
                "{en}: {p} forbids all unprivileged perf events (Debian/Android setting); \
                 lower it (sysctl kernel.perf_event_paranoid=1) or grant CAP_PERFMON"
            )
        } else if per_cpu {
            format!("{en}: {p}; counting whole CPUs needs perf_event_paranoid <= 0 or CAP_PERFMON")
        } else {
            format!(
                "{en}: {p}; counting kernel space needs perf_event_paranoid <= 1 or CAP_PERFMON \
                 (or use the :u modifier)"
            )
        };
        Reason::new("permission", text)
    }

    /// A hardware event on a machine with no core PMU (a VM without a virtual PMU?).
    fn no_pmu_reason(&self, en: &str) -> Reason {
        let present = if self.pmus.is_empty() {
            "none".to_string()
        } else {
            self.pmus.join(", ")
        };
        let vm = if self.hypervisor {
            "; this is a virtual machine whose hypervisor exposes no virtual PMU"
        } else {
            ""
        };
        Reason::new(
            "no-pmu",
            format!("{en}: no hardware PMU is registered (event sources: {present}){vm}"),
        )
    }

    /// ENOENT: the kernel or the PMU has no such event.
    fn no_event_reason(&self, ev: &Event, en: &str) -> Reason {
        if ev.is_software() {
            Reason::new(
                "no-event",
                format!("{en}: this kernel has no such software event"),
            )
        } else {
            Reason::new(
                "no-event",
                format!(
                    "{en}: the PMU ({}) has no generic mapping for this event on this CPU",
                    self.core_pmus.join(", ")
                ),
            )
        }
    }

    /// Hint appended when a group was opened but never scheduled.
    pub fn not_scheduled_hint(&self) -> String {
        let mut s = String::from(
            "opened but never scheduled on the PMU: the group may need more counters than are free",
        );
        if self.nmi_watchdog == Some(true) {
            s.push_str(" (the NMI watchdog holds one; sysctl kernel.nmi_watchdog=0 frees it)");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::sysfs::testroot::FakeRoot;
    use super::*;

    fn vm_env() -> PerfEnv {
        let r = FakeRoot::new();
        r.write("proc/sys/kernel/perf_event_paranoid", "2\n")
            .write(
                "proc/cpuinfo",
                "processor\t: 0\nflags\t\t: fpu sse hypervisor avx\n",
            )
            .write("sys/bus/event_source/devices/software/type", "1\n")
            .write("sys/bus/event_source/devices/tracepoint/type", "2\n");
        PerfEnv::detect(&r.sys())
    }

    #[test]
    fn vm_without_pmu() {
        let env = vm_env();
        assert!(env.hypervisor);
        assert!(env.core_pmus.is_empty());
        assert_eq!(env.paranoid, Some(2));
        let r = env.explain_open_error(&Event::named("cycles"), libc::ENOENT, false);
        assert_eq!(r.code, "no-pmu");
        assert!(r.text.starts_with("ENOENT"));
        assert!(r.text.contains("software, tracepoint"));
        assert!(r.text.contains("virtual machine"));
    }

    #[test]
    fn permission_reasons() {
        let mut env = vm_env();
        let ev = Event::named("instructions");
        let r = env.explain_open_error(&ev, libc::EACCES, false);
        assert_eq!(r.code, "permission");
        assert!(r.text.contains("perf_event_paranoid=2"));
        assert!(r.text.contains("kernel space"));
        let r = env.explain_open_error(&ev, libc::EACCES, true);
        assert!(r.text.contains("whole CPUs"));
        env.paranoid = Some(3);
        assert!(env
            .explain_open_error(&ev, libc::EPERM, false)
            .text
            .contains("forbids all"));
        env.cap_perfmon = true;
        assert!(env
            .explain_open_error(&ev, libc::EPERM, false)
            .text
            .contains("CAP_PERFMON"));
    }

    #[test]
    fn pmu_present_reasons() {
        let mut env = vm_env();
        env.core_pmus = vec!["cpu".into()];
        let r = env.explain_open_error(
            &Event::named("stalled-cycles-frontend"),
            libc::ENOENT,
            false,
        );
        assert_eq!(r.code, "no-event");
        assert_eq!(
            env.explain_open_error(&Event::named("cycles"), libc::EBUSY, false)
                .code,
            "busy"
        );
        assert_eq!(
            env.explain_open_error(&Event::named("cycles"), 12345, false)
                .code,
            "open-failed"
        );
        env.nmi_watchdog = Some(true);
        assert!(env.not_scheduled_hint().contains("nmi_watchdog"));
    }
}

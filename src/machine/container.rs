//! Whether this process runs in a container, and which signs say so: the
//! files runtimes leave (`/.dockerenv`, `/run/.containerenv`,
//! `/run/systemd/container`), `container=` in the environment of PID 1
//! (`/proc/1/environ`, readable by root), a cgroup path naming a runtime
//! (docker, kubepods, containerd, libpod, lxc, nspawn), and a PID namespace
//! (more than one PID on the `NSpid:` line of `/proc/self/status`; the
//! older sign, `/proc/1/sched` naming a process other than init with a host
//! PID, is read too). Pure reading under a `Sysroot`; none of these alone
//! proves a container, so every sign seen is kept with the file it came
//! from.

use super::cgroup::self_cgroups;
use super::limits::Limits;
use super::topology::CpuLists;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// What cpuscope found about running in a container.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Container {
    /// True when at least one sign was seen.
    pub detected: bool,
    /// The runtime a sign names (`docker`, `podman`, `kubernetes`,
    /// `containerd`, `lxc`, `systemd-nspawn`, or what `container=` says);
    /// null when no sign names one.
    pub runtime: Option<String>,
    /// Every sign seen, one line each with the file it came from.
    pub signs: Vec<String>,
}

impl Container {
    /// `in a container (docker: /.dockerenv exists)`, or None when no sign.
    pub fn summary(&self) -> Option<String> {
        if !self.detected {
            return None;
        }
        let first = self.signs.first().map(String::as_str).unwrap_or("");
        Some(match &self.runtime {
            Some(r) => format!("in a container ({r}: {first})"),
            None => format!("in a container ({first})"),
        })
    }
}

/// One line of what confines this process: the container, the cgroup's
/// cpuset, CPU quota and memory limit (`in a container (docker: /.dockerenv
/// exists) · cgroup v2 cpuset 0 (1 of 2 online CPUs) · 0.5 CPUs of quota on
/// 1 usable CPU · memory limit 256 MiB (180 MiB left)`); None when nothing
/// applies.
pub fn confinement_line(c: &Container, cpus: &CpuLists, limits: &Limits) -> Option<String> {
    use crate::base::fmt::fmt_size;
    let mut parts: Vec<String> = c.summary().into_iter().collect();
    if let Some((cg, set)) = cpus
        .cgroup
        .as_ref()
        .and_then(|cg| cg.cpus.as_ref().map(|s| (cg, s)))
        .filter(|(_, s)| !cpus.online.is_empty() && **s != cpus.online)
    {
        parts.push(format!(
            "cgroup v{} cpuset {set} ({} of {} online CPUs)",
            cg.version,
            set.intersection(&cpus.online).len(),
            cpus.online.len()
        ));
    }
    if let Some(q) = &limits.cpu_quota {
        let usable = cpus.usable.len();
        parts.push(format!(
            "{} CPU{} of quota on {usable} usable CPU{}{}",
            crate::machine::limits::cpus_text(q.cpus),
            if (q.cpus - 1.0).abs() < 1e-9 { "" } else { "s" },
            if usable == 1 { "" } else { "s" },
            if q.cpus < usable as f64 {
                " (figures on more CPUs than the quota are bounded by it)"
            } else {
                ""
            }
        ));
    }
    if let Some((m, b)) = limits
        .memory
        .as_ref()
        .and_then(|m| m.effective_bytes().map(|b| (m, b)))
    {
        parts.push(format!(
            "{} {}{}",
            m.effective_name(),
            fmt_size(b),
            m.left_bytes
                .map(|l| format!(" ({} left)", fmt_size(l)))
                .unwrap_or_default()
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// Runtime names in a cgroup path, most specific first.
const CGROUP_NAMES: &[(&str, &str)] = &[
    ("kubepods", "kubernetes"),
    ("libpod", "podman"),
    ("docker", "docker"),
    ("cri-containerd", "containerd"),
    ("containerd", "containerd"),
    ("crio", "cri-o"),
    ("lxc", "lxc"),
    ("machine.slice/machine-", "systemd-nspawn"),
];

/// The runtime a cgroup path names, if any.
fn runtime_in_path(path: &str) -> Option<&'static str> {
    CGROUP_NAMES
        .iter()
        .find(|(k, _)| path.contains(k))
        .map(|(_, r)| *r)
}

/// `container=VALUE` in a NUL-separated environment block.
fn container_var(environ: &str) -> Option<String> {
    environ
        .split('\0')
        .find_map(|kv| kv.strip_prefix("container="))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Read the signs under `sys`.
pub fn read(sys: &Sysroot) -> Container {
    let mut signs: Vec<String> = Vec::new();
    let mut runtime: Option<String> = None;
    let name = |r: &str, runtime: &mut Option<String>| {
        if runtime.is_none() {
            *runtime = Some(r.to_string());
        }
    };
    if sys.exists("/.dockerenv") {
        signs.push("/.dockerenv exists".into());
        name("docker", &mut runtime);
    }
    if sys.exists("/run/.containerenv") {
        let engine = sys.read_raw("/run/.containerenv").and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("engine=").map(|v| {
                    v.trim_matches('"')
                        .split('-')
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
            })
        });
        signs.push("/run/.containerenv exists".into());
        name(
            engine
                .as_deref()
                .filter(|e| !e.is_empty())
                .unwrap_or("podman"),
            &mut runtime,
        );
    }
    if let Some(v) = sys
        .read_string("/run/systemd/container")
        .filter(|v| !v.is_empty())
    {
        signs.push(format!("/run/systemd/container says {v}"));
        name(&v, &mut runtime);
    }
    if let Some(v) = sys
        .read_raw("/proc/1/environ")
        .and_then(|e| container_var(&e))
    {
        signs.push(format!(
            "container={v} in the environment of PID 1 (/proc/1/environ)"
        ));
        name(&v, &mut runtime);
    }
    if let Some((path, r)) = self_cgroups(sys)
        .iter()
        .find_map(|l| runtime_in_path(&l.path).map(|r| (l.path.clone(), r)))
    {
        signs.push(format!("cgroup path {path} names {r} (/proc/self/cgroup)"));
        name(r, &mut runtime);
    }
    if let Some(n) = pid_namespace_sign(sys) {
        signs.push(n);
    }
    Container {
        detected: !signs.is_empty(),
        runtime,
        signs,
    }
}

/// A PID namespace: `NSpid:` of `/proc/self/status` lists this process's
/// PID in each nested namespace (more than one: not the machine's); else
/// the first line of `/proc/1/sched` (`name (pid, #threads: n)`) naming a
/// process that is neither init nor systemd with a PID other than 1 (older
/// kernels print the host's PID there).
fn pid_namespace_sign(sys: &Sysroot) -> Option<String> {
    if let Some(status) = sys.read_raw("/proc/self/status") {
        if let Some(ids) = status.lines().find_map(|l| l.strip_prefix("NSpid:")) {
            let n = ids.split_whitespace().count();
            return (n > 1).then(|| {
                format!(
                    "in a PID namespace: NSpid of /proc/self/status lists {n} PIDs ({})",
                    ids.split_whitespace().collect::<Vec<_>>().join(" ")
                )
            });
        }
    }
    let line = sys.read_raw("/proc/1/sched")?;
    let first = line.lines().next()?.trim();
    let (name, rest) = first.split_once(" (")?;
    let pid: u64 = rest.split(',').next()?.trim().parse().ok()?;
    (pid != 1 && name != "init" && name != "systemd")
        .then(|| format!("in a PID namespace: /proc/1/sched names {name} with PID {pid}, not init"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_variables() {
        assert_eq!(
            runtime_in_path("/kubepods/burstable/pod1/abc"),
            Some("kubernetes")
        );
        assert_eq!(
            runtime_in_path("/system.slice/docker-ab12.scope"),
            Some("docker")
        );
        assert_eq!(runtime_in_path("/user.slice/user-0.slice"), None);
        assert_eq!(
            container_var("PATH=/bin\0container=podman\0HOME=/"),
            Some("podman".into())
        );
        assert_eq!(container_var("PATH=/bin\0"), None);
    }
}

#[cfg(test)]
mod tree_tests {
    use super::*;
    use crate::machine::limits::tests::tree;

    #[test]
    fn signs_are_named_with_their_files() {
        let (_d, sys) = tree(&[
            (".dockerenv", ""),
            ("proc/self/cgroup", "0::/system.slice/docker-ab12.scope\n"),
            ("proc/self/status", "Name:\tcpuscope\nNSpid:\t4242\t7\n"),
        ]);
        let c = read(&sys);
        assert!(c.detected);
        assert_eq!(c.runtime.as_deref(), Some("docker"));
        assert_eq!(c.signs[0], "/.dockerenv exists");
        assert!(
            c.signs
                .iter()
                .any(|s| s.contains("docker-ab12.scope names docker")),
            "{c:?}"
        );
        assert!(
            c.signs
                .iter()
                .any(|s| s.contains("NSpid") && s.contains("4242 7")),
            "{c:?}"
        );
        assert_eq!(
            c.summary().as_deref(),
            Some("in a container (docker: /.dockerenv exists)")
        );
        let (_d, host) = tree(&[
            (
                "proc/self/cgroup",
                "0::/user.slice/user-0.slice/session-1.scope\n",
            ),
            ("proc/self/status", "NSpid:\t4242\n"),
            ("proc/1/sched", "systemd (1, #threads: 1)\n"),
        ]);
        assert_eq!(read(&host), Container::default());
        let (_d, podman) = tree(&[
            ("run/.containerenv", "engine=\"podman-4.3.1\"\n"),
            ("proc/1/environ", "PATH=/bin\0container=podman\0"),
        ]);
        let p = read(&podman);
        assert_eq!(p.runtime.as_deref(), Some("podman"));
        assert_eq!(p.signs.len(), 2, "{p:?}");
        // An old kernel without NSpid: /proc/1/sched with the host's PID.
        let (_d, old) = tree(&[("proc/1/sched", "bash (31337, #threads: 1)\n")]);
        assert!(read(&old).signs[0].contains("bash with PID 31337"));
    }
}

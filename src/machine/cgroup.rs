//! The cgroup cpuset that confines this process (cgroup v1 or v2), read from
//! `/proc/self/cgroup`, `/proc/self/cpuset`, `/proc/mounts` and the cgroup
//! filesystem under a `Sysroot`. Pure reading: on a recorded root this is the
//! only way to know which CPUs and memory nodes the recorded process could use.

use crate::base::CpuSet;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};

/// The cpuset of the cgroup this process belongs to.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CgroupCpuset {
    /// 1 (legacy `cpuset` hierarchy) or 2 (unified hierarchy).
    pub version: u8,
    /// The cgroup path, as `/proc/self/cgroup` or `/proc/self/cpuset` names it.
    pub path: String,
    /// The file the CPU list was read from (absolute path on the recorded machine); null if none.
    pub cpus_file: Option<String>,
    /// CPUs the cgroup allows; null if the cgroup sets no CPU list.
    pub cpus: Option<CpuSet>,
    /// The file the memory node list was read from; null if none.
    pub mems_file: Option<String>,
    /// Memory nodes the cgroup allows; null if the cgroup sets no node list.
    pub mems: Option<CpuSet>,
}

/// One line of `/proc/mounts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    pub mountpoint: String,
    pub fstype: String,
    pub options: Vec<String>,
}

/// Parse `/proc/mounts` text (octal escapes such as `\040` are decoded).
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let _dev = f.next()?;
            let mp = f.next()?;
            let fstype = f.next()?;
            let opts = f.next().unwrap_or("");
            Some(Mount {
                mountpoint: unescape_octal(mp),
                fstype: fstype.to_string(),
                options: opts.split(',').map(str::to_string).collect(),
            })
        })
        .collect()
}

fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            let oct = &b[i + 1..i + 4];
            if oct.iter().all(|c| (b'0'..=b'7').contains(c)) {
                let v = oct.iter().fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                if let Ok(byte) = u8::try_from(v) {
                    out.push(byte);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Paths of this process in the v1 cpuset hierarchy and the v2 hierarchy,
/// from `/proc/self/cgroup` lines `N:ctrl,ctrl:/path` and `0::/path`.
pub(super) fn self_cgroup_paths(sys: &Sysroot) -> (Option<String>, Option<String>) {
    let mut v1 = None;
    let mut v2 = None;
    if let Some(text) = sys.read_raw("/proc/self/cgroup") {
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(id), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if id == "0" && ctrls.is_empty() {
                v2 = Some(path.to_string());
            } else if ctrls.split(',').any(|c| c == "cpuset") {
                v1 = Some(path.to_string());
            }
        }
    }
    (v1, v2)
}

/// One line of `/proc/self/cgroup`: hierarchy id, controllers, path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelfCgroup {
    pub id: String,
    pub controllers: Vec<String>,
    pub path: String,
}

/// The lines of `/proc/self/cgroup` under `sys`.
pub fn self_cgroups(sys: &Sysroot) -> Vec<SelfCgroup> {
    let Some(text) = sys.read_raw("/proc/self/cgroup") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut p = l.splitn(3, ':');
            let (id, ctrls, path) = (p.next()?, p.next()?, p.next()?);
            Some(SelfCgroup {
                id: id.to_string(),
                controllers: ctrls
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path: path.to_string(),
            })
        })
        .collect()
}

pub(super) fn join_cg(mountpoint: &str, path: &str) -> String {
    let mp = mountpoint.trim_end_matches('/');
    let p = path.trim_start_matches('/');
    if p.is_empty() {
        if mp.is_empty() {
            "/".to_string()
        } else {
            mp.to_string()
        }
    } else {
        format!("{mp}/{p}")
    }
}

/// Parent of a cgroup path (`/a/b` -> `/a`, `/a` -> `/`).
pub(super) fn parent(p: &str) -> String {
    match p.trim_end_matches('/').rsplit_once('/') {
        Some((parent, _)) if !parent.is_empty() => parent.to_string(),
        _ => "/".to_string(),
    }
}

/// First readable list among `names` in `dir`: (file, set).
fn first_list(sys: &Sysroot, dir: &str, names: &[&str]) -> Option<(String, CpuSet)> {
    names.iter().find_map(|n| {
        let f = format!("{dir}/{n}");
        let s = sys.read_string(&f)?;
        if s.is_empty() {
            // An empty cpuset.cpus in v2 means "inherit from parent": not a restriction.
            return None;
        }
        CpuSet::parse(&s).ok().map(|set| (f, set))
    })
}

/// Read the cpuset of this process's cgroup. `Ok(None)` means no cpuset
/// hierarchy is mounted (no restriction recorded); `Err(reason)` means one is
/// mounted but could not be read.
pub fn read_cpuset(sys: &Sysroot) -> Result<Option<CgroupCpuset>, String> {
    let mounts = match sys.read_raw("/proc/mounts") {
        Some(t) => parse_mounts(&t),
        None => return Ok(None),
    };
    let (v1_path, v2_path) = self_cgroup_paths(sys);
    let cpuset_path = sys
        .read_string("/proc/self/cpuset")
        .filter(|s| s.starts_with('/'));

    // cgroup v1: the `cpuset` controller mounted on its own hierarchy, or the
    // cpuset filesystem of kernels before cgroups (`none /dev/cpuset cpuset`),
    // whose files have the same names without the `cpuset.` prefix.
    if let Some(m) = mounts.iter().find(|m| {
        (m.fstype == "cgroup" && m.options.iter().any(|o| o == "cpuset")) || m.fstype == "cpuset"
    }) {
        let path = v1_path
            .or(cpuset_path)
            .ok_or("cgroup v1 cpuset is mounted but neither /proc/self/cgroup nor /proc/self/cpuset names this process's cpuset")?;
        return read_v1_cpuset(sys, m, path).map(Some);
    }

    // cgroup v2: the unified hierarchy, if the cpuset controller is available on it.
    if let Some(m) = mounts.iter().find(|m| m.fstype == "cgroup2") {
        return read_v2_cpuset(sys, m, v2_path.or(cpuset_path));
    }
    Ok(None)
}

/// The cpuset of cgroup `path` on the v1 hierarchy (or old cpuset
/// filesystem) mounted at `m`.
fn read_v1_cpuset(sys: &Sysroot, m: &Mount, path: String) -> Result<CgroupCpuset, String> {
    // Inside a container without a cgroup namespace the recorded path may not
    // exist under the mount (the mount shows the container's own cgroup as
    // its root): use the deepest ancestor that exists.
    let mut cur = path.clone();
    let dir = loop {
        let d = join_cg(&m.mountpoint, &cur);
        if sys.is_dir(&d) {
            break d;
        }
        if cur == "/" || cur.is_empty() {
            return Err(format!(
                "cgroup v1 cpuset directory {} is missing",
                join_cg(&m.mountpoint, &path)
            ));
        }
        cur = parent(&cur);
    };
    let cpus = first_list(
        sys,
        &dir,
        &[
            "cpuset.effective_cpus",
            "effective_cpus",
            "cpuset.cpus",
            "cpus",
        ],
    );
    let mems = first_list(
        sys,
        &dir,
        &[
            "cpuset.effective_mems",
            "effective_mems",
            "cpuset.mems",
            "mems",
        ],
    );
    Ok(cgroup_cpuset(1, path, cpus, mems))
}

/// The cpuset of this process's cgroup (`path`, when known) on the v2
/// hierarchy mounted at `m`; `Ok(None)` when the cpuset controller is not
/// available there.
fn read_v2_cpuset(
    sys: &Sysroot,
    m: &Mount,
    path: Option<String>,
) -> Result<Option<CgroupCpuset>, String> {
    let controllers = sys
        .read_string(&format!("{}/cgroup.controllers", m.mountpoint))
        .unwrap_or_default();
    if !controllers.split_whitespace().any(|c| c == "cpuset") {
        return Ok(None);
    }
    let path = path
        .ok_or("cgroup v2 is mounted but /proc/self/cgroup does not name this process's cgroup")?;
    // Walk from the process's cgroup up to the root: a cgroup without the
    // cpuset controller enabled inherits its parent's effective sets.
    let mut cur = path.clone();
    let mut cpus = None;
    let mut mems = None;
    loop {
        let dir = join_cg(&m.mountpoint, &cur);
        if cpus.is_none() {
            cpus = first_list(sys, &dir, &["cpuset.cpus.effective", "cpuset.cpus"]);
        }
        if mems.is_none() {
            mems = first_list(sys, &dir, &["cpuset.mems.effective", "cpuset.mems"]);
        }
        if (cpus.is_some() && mems.is_some()) || cur == "/" || cur.is_empty() {
            break;
        }
        cur = parent(&cur);
    }
    Ok(Some(cgroup_cpuset(2, path, cpus, mems)))
}

/// A `CgroupCpuset` from the (file, set) of its CPU and memory lists.
fn cgroup_cpuset(
    version: u8,
    path: String,
    cpus: Option<(String, CpuSet)>,
    mems: Option<(String, CpuSet)>,
) -> CgroupCpuset {
    CgroupCpuset {
        version,
        path,
        cpus_file: cpus.as_ref().map(|c| c.0.clone()),
        cpus: cpus.map(|c| c.1),
        mems_file: mems.as_ref().map(|c| c.0.clone()),
        mems: mems.map(|c| c.1),
    }
}

/// `Cpus_allowed_list` and `Mems_allowed_list` from `/proc/self/status`.
pub fn status_allowed(sys: &Sysroot) -> (Option<CpuSet>, Option<CpuSet>) {
    let mut cpus = None;
    let mut mems = None;
    if let Some(text) = sys.read_raw("/proc/self/status") {
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("Cpus_allowed_list:") {
                cpus = CpuSet::parse(v.trim()).ok();
            } else if let Some(v) = line.strip_prefix("Mems_allowed_list:") {
                mems = CpuSet::parse(v.trim()).ok();
            }
        }
    }
    (cpus, mems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_are_parsed_and_unescaped() {
        let m = parse_mounts(
            "cpuset /dev/cpuset cgroup rw,relatime,cpuset,noprefix 0 0\n\
             cgroup2 /sys/fs/my\\040cg cgroup2 rw 0 0\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].fstype, "cgroup");
        assert!(m[0].options.iter().any(|o| o == "cpuset"));
        assert_eq!(m[1].mountpoint, "/sys/fs/my cg");
    }

    #[test]
    fn old_cpuset_filesystem_is_a_v1_cpuset() {
        let dir = std::env::temp_dir().join(format!("cpuscope-cpusetfs-{}", std::process::id()));
        let w = |rel: &str, s: &str| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        w("sys/devices/system/cpu/cpu0/online", "1\n");
        w("proc/mounts", "none /dev/cpuset cpuset rw 0 0\n");
        w("proc/self/cpuset", "/dummy\n");
        w("dev/cpuset/dummy/cpus", "0-6,12-15\n");
        w("dev/cpuset/dummy/mems", "1-4\n");
        let sys = Sysroot::new(&dir).unwrap();
        let cg = read_cpuset(&sys).unwrap().expect("cpuset");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((cg.version, cg.path.as_str()), (1, "/dummy"));
        assert_eq!(cg.cpus_file.as_deref(), Some("/dev/cpuset/dummy/cpus"));
        assert_eq!(cg.cpus.map(|s| s.to_string()).as_deref(), Some("0-6,12-15"));
        assert_eq!(cg.mems.map(|s| s.to_string()).as_deref(), Some("1-4"));
    }

    #[test]
    fn joins_cgroup_paths() {
        assert_eq!(join_cg("/dev/cpuset", "/prout"), "/dev/cpuset/prout");
        assert_eq!(join_cg("/sys/fs/cgroup", "/"), "/sys/fs/cgroup");
        assert_eq!(join_cg("/sys/fs/cgroup/", "/a/b"), "/sys/fs/cgroup/a/b");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
        assert_eq!(parent("/"), "/");
    }
}

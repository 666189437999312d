//! The `info` section "Container and cgroup limits", and the same rows for
//! the HTML report's machine table: whether cpuscope runs in a container
//! (and the signs seen), the cgroup's cpuset, CPU quota, memory limit and
//! what is left under it (`machine::container`, `machine::limits`).

use crate::base::fmt::fmt_size;
use crate::machine::MachineInfo;

/// The rows: (label, value). `all`: also the rows that say "none" (the
/// `info` section); without it only what applies (the HTML table).
pub fn rows(info: &MachineInfo, all: bool) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    let c = &info.container;
    if c.detected {
        rows.push((
            "container".into(),
            format!(
                "yes{}: {}",
                c.runtime
                    .as_ref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default(),
                c.signs.join("; ")
            ),
        ));
    } else if all {
        rows.push((
            "container".into(),
            "no sign of one (/.dockerenv, /run/.containerenv, /run/systemd/container, container= of PID 1, cgroup path, PID namespace)".into(),
        ));
    }
    rows.extend(cpuset_row(info, all));
    rows.extend(quota_row(info, all));
    memory_rows(info, all, &mut rows);
    let l = &info.limits;
    if all {
        rows.push((
            "cgroup CPU time".into(),
            match &l.cpu_usage_file {
                Some(f) => format!("{f} (its other processes count as other programs in a run)"),
                None => {
                    "not read: this process is in the machine's root cgroup, or no file holds it"
                        .into()
                }
            },
        ));
    }
    for n in &l.notes {
        rows.push(("note".into(), n.clone()));
    }
    rows
}

fn cpuset_row(info: &MachineInfo, all: bool) -> Option<(String, String)> {
    let cpus = &info.cpus;
    let v = match cpus.cgroup.as_ref() {
        Some(cg) => match &cg.cpus {
            Some(set) => {
                let restricts = *set != cpus.online;
                if !restricts && !all {
                    return None;
                }
                format!(
                    "{set} ({} of {} online CPUs), cgroup v{} {} ({})",
                    set.intersection(&cpus.online).len(),
                    cpus.online.len(),
                    cg.version,
                    cg.path,
                    cg.cpus_file.as_deref().unwrap_or("?")
                )
            }
            None if all => format!("cgroup v{} {} sets no CPU list", cg.version, cg.path),
            None => return None,
        },
        None if all => "no cpuset controller for this process".into(),
        None => return None,
    };
    Some(("cgroup cpuset".into(), v))
}

fn quota_row(info: &MachineInfo, all: bool) -> Option<(String, String)> {
    let usable = info.cpus.usable.len();
    let v = match &info.limits.cpu_quota {
        Some(q) => format!(
            "{} CPUs of quota on {usable} usable CPU{} ({} µs per {} µs period, cgroup v{}, {}){}",
            crate::machine::limits::cpus_text(q.cpus),
            if usable == 1 { "" } else { "s" },
            q.quota_us,
            q.period_us,
            q.version,
            q.file,
            if q.cpus < usable as f64 {
                ": figures that use more CPUs than that are bounded by the quota, and throttling marks a figure disturbed"
            } else {
                ""
            }
        ),
        None if all => "none".into(),
        None => return None,
    };
    Some(("CPU quota".into(), v))
}

fn memory_rows(info: &MachineInfo, all: bool, rows: &mut Vec<(String, String)>) {
    let Some(m) = &info.limits.memory else {
        if all {
            rows.push((
                "memory limit".into(),
                "none (no memory controller for this process)".into(),
            ));
        }
        return;
    };
    match (m.limit_bytes, &m.limit_file) {
        (Some(b), Some(f)) => rows.push(("memory limit".into(), format!("{} ({f})", fmt_size(b)))),
        _ if all => rows.push((
            "memory limit".into(),
            format!(
                "none on cgroup v{} {} or its ancestors",
                m.version, m.cgroup
            ),
        )),
        _ => {}
    }
    if let (Some(b), Some(f)) = (m.high_bytes, &m.high_file) {
        rows.push(("memory.high".into(), format!("{} ({f})", fmt_size(b))));
    }
    if let (Some(left), Some(at)) = (m.left_bytes, &m.left_at) {
        rows.push((
            "memory left".into(),
            format!(
                "{} = {} {} − usage {}{} (at {at}): cpuscope sizes every buffer within it, with headroom",
                fmt_size(left),
                m.effective_name(),
                fmt_size(m.effective_bytes().unwrap_or(0)),
                fmt_size(m.usage_bytes.unwrap_or(0)),
                match m.reclaimable_bytes {
                    Some(r) => format!(" + reclaimable page cache {}", fmt_size(r)),
                    None => " (reclaimable page cache not read)".into(),
                }
            ),
        ));
    }
}

/// The `info` section.
pub fn section(info: &MachineInfo) -> String {
    let mut out = String::from("Container and cgroup limits\n");
    for (k, v) in rows(info, true) {
        super::info_sections::kv(&mut out, &k, &v);
    }
    out
}

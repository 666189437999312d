//! The `info` section "Container and cgroup limits", and the same rows for
//! the HTML report's machine table: whether cpuscope runs in a container
//! (and the signs seen), the cgroup's cpuset, CPU quota, memory limit and
//! what is left under it (`machine::container`, `machine::limits`).

use crate::base::fmt::fmt_size;
use crate::machine::MachineInfo;

/// The rows that apply: (label, value); what does not apply has no row
/// (`section` names it on one line).
pub fn rows(info: &MachineInfo) -> Vec<(String, String)> {
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
    }
    rows.extend(cpuset_row(info));
    rows.extend(quota_row(info));
    memory_rows(info, &mut rows);
    let l = &info.limits;
    if let Some(f) = &l.cpu_usage_file {
        rows.push((
            "cgroup CPU time".into(),
            format!("{f} (its other processes count as other programs in a run)"),
        ));
    }
    for n in &l.notes {
        rows.push(("note".into(), n.clone()));
    }
    rows
}

fn cpuset_row(info: &MachineInfo) -> Option<(String, String)> {
    let cpus = &info.cpus;
    let v = match cpus.cgroup.as_ref() {
        Some(cg) => match &cg.cpus {
            Some(set) => {
                let restricts = *set != cpus.online;
                if !restricts {
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
            None => return None,
        },
        None => return None,
    };
    Some(("cgroup cpuset".into(), v))
}

fn quota_row(info: &MachineInfo) -> Option<(String, String)> {
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
        None => return None,
    };
    Some(("CPU quota".into(), v))
}

fn memory_rows(info: &MachineInfo, rows: &mut Vec<(String, String)>) {
    let Some(m) = &info.limits.memory else {
        return;
    };
    if let (Some(b), Some(f)) = (m.limit_bytes, &m.limit_file) {
        rows.push(("memory limit".into(), format!("{} ({f})", fmt_size(b))));
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

/// The `info` section: the rows that apply, then one line naming what does
/// not (no container sign, no cpuset restriction, no quota, no memory
/// limit); one line in all when nothing applies, so a bare machine's report
/// stays short.
pub fn section(info: &MachineInfo) -> String {
    let rows = rows(info);
    let mut absent: Vec<&str> = Vec::new();
    if !info.container.detected {
        absent.push("container sign");
    }
    let restricts = |r: &&(String, String)| r.0 == "cgroup cpuset";
    if !rows.iter().any(|r| restricts(&r)) {
        absent.push("cpuset restriction");
    }
    if info.limits.cpu_quota.is_none() {
        absent.push("CPU quota");
    }
    if !rows.iter().any(|r| r.0 == "memory limit") {
        absent.push("memory limit");
    }
    let none = match absent.as_slice() {
        [] => String::new(),
        [one] => format!("no {one}"),
        [head @ .., last] => format!("no {} or {last}", head.join(", ")),
    };
    if rows.is_empty() {
        return format!("Container and cgroup limits: none ({none})\n");
    }
    let mut out = String::from("Container and cgroup limits\n");
    for (k, v) in rows {
        super::info_sections::kv(&mut out, &k, &v);
    }
    if !none.is_empty() {
        super::info_sections::kv(&mut out, "not set", &none);
    }
    out
}

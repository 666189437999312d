//! Network interfaces and their interrupts: driver, PCI address, NUMA node,
//! speed, the IRQs of each interface, where those IRQs are routed and served,
//! per-CPU and per-node interrupt totals from `/proc/interrupts`, and a
//! warning when a NIC's interrupts are served on another node than its own.

use super::identity::{unavailable, Unavailable};
use crate::base::CpuSet;
use crate::base::Sysroot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One interrupt line of a NIC.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NicIrq {
    pub irq: u32,
    /// The action name in /proc/interrupts (`eth0-TxRx-3`, `virtio2-input.0`).
    pub name: Option<String>,
    /// `/proc/irq/N/smp_affinity_list`: where it may be delivered.
    pub smp_affinity_list: Option<CpuSet>,
    /// `/proc/irq/N/effective_affinity_list`: where it is delivered now.
    pub effective_affinity_list: Option<CpuSet>,
    /// Total count over all CPUs since boot.
    pub total: Option<u64>,
    /// CPUs that have served it at least once since boot.
    pub served_cpus: CpuSet,
}

/// One network interface.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Nic {
    pub name: String,
    /// Software interface (lo excluded): bridge, veth, bond, tun, ifb...
    pub is_virtual: bool,
    pub driver: Option<String>,
    /// PCI address of the device (`0000:3b:00.0`), for PCI NICs.
    pub pci_address: Option<String>,
    /// `device/numa_node` as read (`-1` = no affinity).
    pub numa_node: Option<i64>,
    /// "node 1" or "no affinity (-1)" or why unknown.
    pub numa_affinity: String,
    /// Link speed in Mb/s; null when the link is down or the driver does not say.
    pub speed_mbps: Option<u64>,
    pub operstate: Option<String>,
    pub irqs: Vec<NicIrq>,
    /// Union of the IRQs' effective (else configured) affinity.
    pub affinity_cpus: CpuSet,
    /// Union of the CPUs that served the IRQs.
    pub served_cpus: CpuSet,
    /// NUMA nodes of `served_cpus` (else of `affinity_cpus`).
    pub irq_nodes: Vec<usize>,
    /// Receive and transmit queues (`queues/rx-N`, `queues/tx-N`).
    pub rx_queues: Option<usize>,
    pub tx_queues: Option<usize>,
    /// IRQs per NUMA node, by where each is routed (effective affinity,
    /// else the configured one); an IRQ routed to CPUs of several nodes
    /// counts on each.
    pub irqs_per_node: Vec<NodeIrqs>,
    pub warning: Option<String>,
    /// Queues against the cores of the NIC's node, IRQs on remote nodes.
    pub queue_advice: Vec<String>,
    pub unavailable: Unavailable,
}

/// IRQs of a NIC routed to one node.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct NodeIrqs {
    pub node: usize,
    pub irqs: usize,
}

/// Interrupt totals of one CPU.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuInterrupts {
    pub cpu: usize,
    /// Numbered (device) interrupts.
    pub device: u64,
    /// Every row, including timer (LOC), rescheduling (RES), call-function...
    pub all: u64,
}

/// Interrupt totals of one NUMA node.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeInterrupts {
    pub node: usize,
    pub cpus: CpuSet,
    pub device: u64,
    pub all: u64,
}

/// `/proc/interrupts` summed per CPU and per node.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct InterruptTotals {
    pub per_cpu: Vec<CpuInterrupts>,
    pub per_node: Vec<NodeInterrupts>,
}

/// Network devices and interrupts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Devices {
    pub nics: Vec<Nic>,
    pub interrupts: Option<InterruptTotals>,
    pub warnings: Vec<String>,
    /// The NICs' queue advice, together.
    pub advice: Vec<String>,
    pub unavailable: Unavailable,
}

/// One row of /proc/interrupts.
#[derive(Clone, Debug, Default)]
pub struct IrqRow {
    /// `24`, `NMI`, `LOC`...
    pub label: String,
    /// (cpu, count) for the CPUs in the header.
    pub counts: Vec<(usize, u64)>,
    /// Everything after the counts: chip, hwirq, action names.
    pub description: String,
}

impl IrqRow {
    pub fn irq(&self) -> Option<u32> {
        self.label.parse().ok()
    }
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, c)| c).sum()
    }
}

/// Parse /proc/interrupts: header of `CPUn` columns, then one row per source.
pub fn parse_interrupts(text: &str) -> Vec<IrqRow> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cpus: Vec<usize> = header
        .split_whitespace()
        .filter_map(|t| t.strip_prefix("CPU")?.parse().ok())
        .collect();
    let mut rows = Vec::new();
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let mut counts = Vec::new();
        let mut toks = rest.split_whitespace().peekable();
        while counts.len() < cpus.len() {
            match toks.peek().and_then(|t| t.parse::<u64>().ok()) {
                Some(v) => {
                    counts.push((cpus[counts.len()], v));
                    toks.next();
                }
                None => break,
            }
        }
        let description = toks.collect::<Vec<_>>().join(" ");
        rows.push(IrqRow {
            label: label.trim().to_string(),
            counts,
            description,
        });
    }
    rows
}

/// NUMA node -> CPUs, from sys/devices/system/node/nodeN/cpulist.
pub fn node_cpulists(sys: &Sysroot) -> Vec<(usize, CpuSet)> {
    sys.list_numbered("/sys/devices/system/node", "node")
        .into_iter()
        .filter_map(|n| {
            let cpus = sys.read_cpulist(&format!("/sys/devices/system/node/node{n}/cpulist"))?;
            Some((n, cpus))
        })
        .collect()
}

fn nodes_of(cpus: &CpuSet, nodes: &[(usize, CpuSet)]) -> Vec<usize> {
    nodes
        .iter()
        .filter(|(_, set)| !set.intersection(cpus).is_empty())
        .map(|(n, _)| *n)
        .collect()
}

fn is_pci_address(s: &str) -> bool {
    // dddd:bb:dd.f
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && s.chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// The PCI device directory behind an interface (its `device` link, or the
/// parent of a virtio device), resolved within the root: a path from it
/// (`/sys/devices/pci0000:00/0000:00:03.0`).
fn pci_dir(sys: &Sysroot, ifname: &str) -> Option<PathBuf> {
    let dev = sys
        .canonicalize(&format!("/sys/class/net/{ifname}/device"))
        .ok()?;
    let mut p: &Path = &dev;
    loop {
        if p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_pci_address)
        {
            return Some(p.to_path_buf());
        }
        p = p.parent()?;
    }
}

/// Does `desc` name `word` as a whole token part (`eth1` must not match `eth10`)?
fn names(desc: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let mut start = 0;
    while let Some(pos) = desc[start..].find(word) {
        let a = start + pos;
        let b = a + word.len();
        let before_ok = a == 0 || !desc.as_bytes()[a - 1].is_ascii_alphanumeric();
        let after_ok = b == desc.len() || !desc.as_bytes()[b].is_ascii_alphanumeric();
        if before_ok && after_ok {
            return true;
        }
        start = a + 1;
    }
    false
}

fn read_nic(sys: &Sysroot, name: &str, rows: &[IrqRow], nodes: &[(usize, CpuSet)]) -> Nic {
    let base = format!("/sys/class/net/{name}");
    let mut nic = Nic {
        name: name.to_string(),
        ..Nic::default()
    };
    let link = sys.read_link(&base).ok();
    let has_device = sys.exists(&format!("{base}/device"));
    nic.is_virtual = link
        .as_ref()
        .map(|l| l.to_string_lossy().contains("/devices/virtual/"))
        .unwrap_or(false)
        || sys.exists(&format!("/sys/devices/virtual/net/{name}"))
        || !has_device;
    nic.operstate = sys.read_string(&format!("{base}/operstate"));
    nic.driver = sys
        .read_link(&format!("{base}/device/driver"))
        .ok()
        .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
    let pci = if has_device { pci_dir(sys, name) } else { None };
    nic.pci_address = pci
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    nic.numa_node = sys
        .read_i64(&format!("{base}/device/numa_node"))
        .or_else(|| {
            pci.as_ref()
                .and_then(|p| sys.read_i64(&format!("{}/numa_node", p.display())))
        });
    nic.numa_affinity = match nic.numa_node {
        Some(n) if n >= 0 => format!("node {n}"),
        Some(_) => "no affinity: numa_node is -1, the firmware ties this device to no node".into(),
        None if nic.is_virtual => "none: software interface".into(),
        None => "unknown: no numa_node file for this device".into(),
    };
    match sys.read_i64(&format!("{base}/speed")) {
        Some(s) if s > 0 => nic.speed_mbps = Some(s as u64),
        Some(_) => unavailable(
            &mut nic.unavailable,
            "speed_mbps",
            "the driver reports -1, unknown: typical of virtual NICs",
        ),
        None => unavailable(
            &mut nic.unavailable,
            "speed_mbps",
            if nic.is_virtual {
                "software interface: no link speed"
            } else {
                "speed not readable: link down or the driver does not report it"
            },
        ),
    }
    if nic.is_virtual {
        return nic;
    }

    let irqs = irq_numbers(
        sys,
        &base,
        name,
        pci.as_deref(),
        nic.pci_address.as_deref(),
        rows,
    );
    read_irqs(&mut nic, sys, irqs, rows);
    if nic.irqs.is_empty() {
        unavailable(
            &mut nic.unavailable,
            "irqs",
            "no MSI vectors, no INTx line and no /proc/interrupts row names this interface",
        );
    }
    irq_locality(&mut nic, nodes);
    read_queues(&mut nic, sys, &base);
    queue_advice(&mut nic, nodes);
    nic
}

/// Count the interface's rx and tx queues.
fn read_queues(nic: &mut Nic, sys: &Sysroot, base: &str) {
    let dir = format!("{base}/queues");
    if !sys.exists(&dir) {
        unavailable(
            &mut nic.unavailable,
            "queues",
            format!("no {dir} directory under this root"),
        );
        return;
    }
    let names = sys.list_dir(&dir);
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    nic.rx_queues = Some(count("rx-"));
    nic.tx_queues = Some(count("tx-"));
}

/// IRQs per node, and advice when the queues outnumber the CPUs of the
/// NIC's node or its IRQs sit on other nodes (seed 002: 60 queues on the
/// first 60 cores of a 128-core machine, one socket doing all the
/// networking; 60 → 6 queues gained about 10%).
fn queue_advice(nic: &mut Nic, nodes: &[(usize, CpuSet)]) {
    let name = nic.name.clone();
    for (n, cpus) in nodes {
        let k = nic
            .irqs
            .iter()
            .filter(|i| {
                i.effective_affinity_list
                    .as_ref()
                    .or(i.smp_affinity_list.as_ref())
                    .is_some_and(|a| !a.intersection(cpus).is_empty())
            })
            .count();
        if k > 0 {
            nic.irqs_per_node.push(NodeIrqs { node: *n, irqs: k });
        }
    }
    let queues = nic.rx_queues.unwrap_or(0).max(nic.tx_queues.unwrap_or(0));
    let own = nic
        .numa_node
        .filter(|n| *n >= 0)
        .map(|n| n as usize)
        .and_then(|n| nodes.iter().find(|(id, _)| *id == n).cloned());
    if let Some((node, cpus)) = &own {
        if queues > cpus.len() && nodes.len() > 1 {
            nic.queue_advice.push(format!(
                "{name}: {queues} queues for the {} CPUs of its node {node}: at least {} queues are served by CPUs of other nodes (remote) or share CPUs — seed 002 cut 60 queues to 6 and gained about 10%",
                cpus.len(),
                queues - cpus.len()
            ));
        }
        let remote: usize = nic
            .irqs_per_node
            .iter()
            .filter(|x| x.node != *node)
            .map(|x| x.irqs)
            .sum();
        if remote > 0 {
            nic.queue_advice.push(format!(
                "{name}: {remote} of its {} IRQs are routed to CPUs off its node {node}: their packets are processed across the interconnect (set their smp_affinity to node {node}'s CPUs {cpus})",
                nic.irqs.len()
            ));
        }
    } else if nodes.len() > 1 {
        let most = nodes.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
        if queues > most && most > 0 {
            nic.queue_advice.push(format!(
                "{name}: {queues} queues, more than the {most} CPUs of any one node: wherever it sits (its node is not known), at least {} queues are served by other nodes' CPUs — seed 002 cut 60 queues to 6 and gained about 10%",
                queues - most
            ));
        }
        let on: Vec<usize> = nic.irqs_per_node.iter().map(|x| x.node).collect();
        if !on.is_empty() && on.len() < nodes.len() {
            let set: CpuSet = on.iter().copied().collect();
            nic.queue_advice.push(format!(
                "{name}: its {} IRQs sit on nodes {set} only: their softirqs load those CPUs and services bound there compete with packet processing — seed 002: the other socket was 25-30% faster until the softirqs moved",
                nic.irqs.len()
            ));
        }
    }
}

/// Softirq counts of one kind per CPU (`/proc/softirqs`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct SoftirqRow {
    /// `NET_RX`, `NET_TX`, `TIMER`...
    pub kind: String,
    /// (cpu, count since boot).
    pub per_cpu: Vec<(usize, u64)>,
}

/// Parse `/proc/softirqs`: a `CPUn` header, then one row per kind.
pub fn parse_softirqs(text: &str) -> Vec<SoftirqRow> {
    parse_interrupts(text)
        .into_iter()
        .map(|r| SoftirqRow {
            kind: r.label,
            per_cpu: r.counts,
        })
        .collect()
}

/// One CPU's time in /proc/stat (USER_HZ ticks since boot).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CpuTicks {
    pub cpu: usize,
    /// Every column summed (user … steal).
    pub total: u64,
    /// The `softirq` column.
    pub softirq: u64,
}

/// Parse the `cpuN` lines of /proc/stat.
pub fn parse_stat_cpus(text: &str) -> Vec<CpuTicks> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let cpu: usize = it.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal (guest columns
            // are already inside user/nice).
            let softirq = *v.get(6)?;
            let total = v.iter().take(8).sum();
            Some(CpuTicks {
                cpu,
                total,
                softirq,
            })
        })
        .collect()
}

/// One CPU's steal time in /proc/stat (USER_HZ ticks since boot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuSteal {
    pub cpu: usize,
    /// The `steal` column (the 8th; 0 where the kernel has no such column).
    pub steal: u64,
    /// Every column summed (user … steal).
    pub total: u64,
}

/// Parse the steal column of the `cpuN` lines of /proc/stat.
pub fn parse_stat_steal(text: &str) -> Vec<CpuSteal> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let cpu: usize = it.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
            Some(CpuSteal {
                cpu,
                steal: v.get(7).copied().unwrap_or(0),
                total: v.iter().take(8).sum(),
            })
        })
        .collect()
}

/// Read the steal column of /proc/stat under `sys` now (a sample of steal
/// time is two readings; taking them is the experiment's).
pub fn read_stat_steal(sys: &Sysroot) -> Result<Vec<CpuSteal>, String> {
    let t = sys
        .read_raw("/proc/stat")
        .ok_or("/proc/stat is not readable")?;
    Ok(parse_stat_steal(&t))
}

/// One reading of the softirq counters and CPU times (for a measured sample:
/// two readings and the time between them make the rate; reading them is
/// all this room does).
#[derive(Clone, Debug, Default)]
pub struct SoftirqReading {
    pub rows: Vec<SoftirqRow>,
    pub ticks: Vec<CpuTicks>,
}

/// Read /proc/softirqs and /proc/stat under `sys` now.
pub fn read_softirqs(sys: &Sysroot) -> Result<SoftirqReading, String> {
    let s = sys
        .read_raw("/proc/softirqs")
        .ok_or("/proc/softirqs is not readable")?;
    let t = sys
        .read_raw("/proc/stat")
        .ok_or("/proc/stat is not readable")?;
    Ok(SoftirqReading {
        rows: parse_softirqs(&s),
        ticks: parse_stat_cpus(&t),
    })
}

/// IRQ numbers of a NIC: MSI vectors of the device (or its PCI parent), the
/// legacy INTx line, and /proc/interrupts rows naming the interface, its PCI
/// address or its virtio device.
fn irq_numbers(
    sys: &Sysroot,
    base: &str,
    name: &str,
    pci: Option<&std::path::Path>,
    pci_address: Option<&str>,
    rows: &[IrqRow],
) -> Vec<u32> {
    let mut irqs: Vec<u32> = Vec::new();
    let mut msi_dirs = vec![PathBuf::from(format!("{base}/device/msi_irqs"))];
    if let Some(p) = pci {
        msi_dirs.push(p.join("msi_irqs"));
    }
    for d in msi_dirs {
        if let Ok(names) = sys.read_dir(&d) {
            for n in names {
                if let Ok(n) = n.to_string_lossy().parse::<u32>() {
                    irqs.push(n);
                }
            }
        }
    }
    if irqs.is_empty() {
        if let Some(n) = sys
            .read_u64(&format!("{base}/device/irq"))
            .filter(|n| *n > 0)
        {
            irqs.push(n as u32);
        }
    }
    let dev_name = sys
        .canonicalize(&format!("{base}/device"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| n.starts_with("virtio"));
    for r in rows {
        let Some(n) = r.irq() else { continue };
        let d = &r.description;
        if names(d, name)
            || pci_address.is_some_and(|a| d.contains(a))
            || dev_name.as_deref().is_some_and(|v| names(d, v))
        {
            irqs.push(n);
        }
    }
    irqs.sort_unstable();
    irqs.dedup();

    irqs
}

/// Each IRQ's affinity and the CPUs that served it, and their unions on the NIC.
fn read_irqs(nic: &mut Nic, sys: &Sysroot, irqs: Vec<u32>, rows: &[IrqRow]) {
    for n in irqs {
        let row = rows.iter().find(|r| r.irq() == Some(n));
        let mut irq = NicIrq {
            irq: n,
            name: row.and_then(|r| r.description.split_whitespace().last().map(str::to_string)),
            smp_affinity_list: sys.read_cpulist(&format!("/proc/irq/{n}/smp_affinity_list")),
            effective_affinity_list: sys
                .read_cpulist(&format!("/proc/irq/{n}/effective_affinity_list")),
            total: row.map(IrqRow::total),
            served_cpus: CpuSet::new(),
        };
        if let Some(r) = row {
            irq.served_cpus = r
                .counts
                .iter()
                .filter(|(_, c)| *c > 0)
                .map(|(cpu, _)| *cpu)
                .collect();
        }
        if let Some(a) = irq
            .effective_affinity_list
            .as_ref()
            .or(irq.smp_affinity_list.as_ref())
        {
            nic.affinity_cpus = nic.affinity_cpus.union(a);
        }
        nic.served_cpus = nic.served_cpus.union(&irq.served_cpus);
        nic.irqs.push(irq);
    }
}

/// The nodes serving the NIC's IRQs, and a warning when they are not its own.
fn irq_locality(nic: &mut Nic, nodes: &[(usize, CpuSet)]) {
    let name = nic.name.clone();
    let basis = if !nic.served_cpus.is_empty() {
        &nic.served_cpus
    } else {
        &nic.affinity_cpus
    };
    nic.irq_nodes = nodes_of(basis, nodes);
    if let Some(node) = nic.numa_node.filter(|n| *n >= 0).map(|n| n as usize) {
        let own = nodes
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, c)| c.clone());
        if let Some(own) = own {
            let away_served = nic.served_cpus.difference(&own);
            let away_aff = nic.affinity_cpus.difference(&own);
            if !away_served.is_empty() || !away_aff.is_empty() {
                let (what, cpus) = if !away_served.is_empty() {
                    ("are served", away_served)
                } else {
                    ("are routed", away_aff)
                };
                let other = nodes_of(&cpus, nodes)
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                nic.warning = Some(format!(
                    "{name} sits on node {node} but its interrupts {what} on CPUs {cpus} \
                     (node {other}): packet processing crosses the interconnect"
                ));
            }
        }
    }
}

/// Read network devices and interrupt totals of the machine under `sys`.
pub fn read(sys: &Sysroot) -> Devices {
    let mut dv = Devices::default();
    let nodes = node_cpulists(sys);
    let rows = match sys.read_raw("/proc/interrupts") {
        Some(t) => parse_interrupts(&t),
        None => {
            unavailable(
                &mut dv.unavailable,
                "interrupts",
                "/proc/interrupts is not under this root",
            );
            Vec::new()
        }
    };
    if !rows.is_empty() {
        dv.interrupts = Some(interrupt_totals(&rows, &nodes));
    }
    let ifaces = sys.list_dir("/sys/class/net");
    if ifaces.is_empty() {
        unavailable(
            &mut dv.unavailable,
            "nics",
            "no sys/class/net under this root",
        );
    }
    for name in ifaces {
        if name == "lo" || name.starts_with('.') || name == "bonding_masters" {
            continue;
        }
        let nic = read_nic(sys, &name, &rows, &nodes);
        if let Some(w) = &nic.warning {
            dv.warnings.push(w.clone());
        }
        merge_queue_advice(&mut dv.advice, &name, &nic);
        dv.nics.push(nic);
    }
    dv
}

/// Device and all interrupts of each CPU and of each node, from the rows
/// of /proc/interrupts.
fn interrupt_totals(rows: &[IrqRow], nodes: &[(usize, CpuSet)]) -> InterruptTotals {
    let mut per: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    for r in rows {
        let dev = r.irq().is_some();
        for (cpu, c) in &r.counts {
            let e = per.entry(*cpu).or_default();
            e.1 += c;
            if dev {
                e.0 += c;
            }
        }
    }
    let per_cpu: Vec<CpuInterrupts> = per
        .iter()
        .map(|(cpu, (d, a))| CpuInterrupts {
            cpu: *cpu,
            device: *d,
            all: *a,
        })
        .collect();
    let per_node = nodes
        .iter()
        .map(|(n, cpus)| {
            let (d, a) = per_cpu
                .iter()
                .filter(|c| cpus.contains(c.cpu))
                .fold((0, 0), |(d, a), c| (d + c.device, a + c.all));
            NodeInterrupts {
                node: *n,
                cpus: cpus.clone(),
                device: d,
                all: a,
            }
        })
        .collect();
    InterruptTotals { per_cpu, per_node }
}

/// Add the queue advice of NIC `name` to `advice`.
fn merge_queue_advice(advice: &mut Vec<String>, name: &str, nic: &Nic) {
    // NICs with the same advice (the ports of one card) share one line.
    for a in &nic.queue_advice {
        let rest = a.strip_prefix(&format!("{name}: ")).unwrap_or(a);
        match advice
            .iter_mut()
            .find(|x| x.split_once(": ").is_some_and(|(_, r)| r == rest))
        {
            Some(x) => {
                let (names, r) = x.split_once(": ").unwrap_or((x.as_str(), ""));
                *x = format!("{names}, {name}: {r}");
            }
            None => advice.push(a.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rows() {
        let t = "           CPU0       CPU1\n 38:          0       2274 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n\
                 LOC:      46245      41054   Local timer interrupts\nERR:          0\n";
        let rows = parse_interrupts(t);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].irq(), Some(38));
        assert_eq!(rows[0].counts, vec![(0, 0), (1, 2274)]);
        assert!(rows[0].description.ends_with("virtio2-input.0"));
        assert_eq!(rows[1].total(), 46245 + 41054);
        assert_eq!(rows[2].counts, vec![(0, 0)]);
    }

    #[test]
    fn stat_steal_column() {
        let t = "cpu  10 0 5 100 0 0 1 7 0 0\ncpu0 4 0 2 50 0 0 1 3 0 0\ncpu1 6 0 3 50 0 0 0 4\nintr 1\n";
        let v = parse_stat_steal(t);
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0],
            CpuSteal {
                cpu: 0,
                steal: 3,
                total: 60
            }
        );
        assert_eq!(v[1].steal, 4);
        assert_eq!(parse_stat_steal("cpu0 1 2 3 4")[0].steal, 0);
    }

    #[test]
    fn softirqs_and_stat() {
        let s = "                    CPU0       CPU1\n          HI:          1          0\n      NET_TX:         10          2\n      NET_RX:       1500        300\n";
        let rows = parse_softirqs(s);
        let rx = rows.iter().find(|r| r.kind == "NET_RX").unwrap();
        assert_eq!(rx.per_cpu, vec![(0, 1500), (1, 300)]);
        let t = "cpu  10 0 5 100 0 0 3 0 0 0\ncpu0 5 0 2 50 0 0 2 0 0 0\ncpu1 5 0 3 50 0 0 1 0 0 0\nintr 1\n";
        let c = parse_stat_cpus(t);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].cpu, c[0].softirq, c[0].total), (0, 2, 59));
    }

    #[test]
    fn token_match() {
        assert!(names("eth1-TxRx-0", "eth1"));
        assert!(!names("eth10-TxRx-0", "eth1"));
        assert!(names("i40e-eth1-TxRx-3", "eth1"));
        assert!(is_pci_address("0000:3b:00.0"));
        assert!(!is_pci_address("virtio2"));
    }
}

//! Packages, dies, clusters, cores, hardware threads; online/offline/usable CPUs;
//! SMT; hybrid core kinds. Read from `/sys/devices/system/cpu` under a `Sysroot`.
//!
//! Pitfalls handled (learned from real machines and hwloc's recorded trees):
//! - old kernels have no `online`/`possible`/`present` files: CPUs are then the
//!   `cpuN` directories, and `cpuN/online` says which are off (cpu0 often has none);
//! - old kernels have only hex masks (`thread_siblings`), not `*_list` files;
//! - `die_id`, `cluster_id`, `core_cpus_list`, `die_cpus_list` exist only on newer kernels;
//! - offline CPUs have no `topology/` directory at all;
//! - some ARM kernels report `-1` for `physical_package_id` or `cluster_id`;
//! - what this process may use is online ∩ its affinity (live) or its recorded cgroup cpuset.

use super::cgroup::{self, CgroupCpuset};
use crate::base::CpuSet;
use crate::base::Sysroot;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The CPU lists of the machine and of this process.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuLists {
    /// CPUs the kernel could ever bring up (`possible`).
    pub possible: CpuSet,
    /// CPUs physically present (`present`).
    pub present: CpuSet,
    /// CPUs running now.
    pub online: CpuSet,
    /// Present CPUs that are turned off (present − online).
    pub offline: CpuSet,
    /// CPUs this process may run on: online ∩ `allowed` (all online CPUs when `allowed` is null).
    pub usable: CpuSet,
    /// CPUs this process is allowed (affinity or cgroup cpuset); null when nothing restricts
    /// it or it could not be read (`allowed_source` says which).
    pub allowed: Option<CpuSet>,
    /// Where `allowed` came from, or why it is null.
    pub allowed_source: String,
    /// The cpuset of this process's cgroup, if a cpuset hierarchy is mounted.
    pub cgroup: Option<CgroupCpuset>,
    /// CPUs isolated from the scheduler (`isolated`, from `isolcpus=`); null if the kernel does not say.
    pub isolated: Option<CpuSet>,
    /// Tickless CPUs (`nohz_full`); null if the kernel does not say.
    pub nohz_full: Option<CpuSet>,
    /// Why a field above is null: field name -> reason.
    pub unavailable: BTreeMap<String, String>,
}

impl CpuLists {
    /// CPUs that `--cpus` may name: the usable ones, plus isolated CPUs
    /// (`isolcpus=`) that are online and inside this process's cgroup
    /// cpuset. The kernel leaves isolated CPUs out of the default affinity,
    /// but pinning a benchmark to them is what they are for.
    pub fn pinnable(&self) -> CpuSet {
        let mut extra = self
            .isolated
            .clone()
            .unwrap_or_default()
            .intersection(&self.online);
        if let Some(c) = self.cgroup.as_ref().and_then(|c| c.cpus.as_ref()) {
            extra = extra.intersection(c);
        }
        self.usable.union(&extra)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Package {
    /// `physical_package_id`.
    pub id: usize,
    /// Online CPUs of the package.
    pub cpus: CpuSet,
    pub dies: usize,
    pub cores: usize,
    /// NUMA nodes holding CPUs of this package.
    pub nodes: CpuSet,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Die {
    pub package: usize,
    /// `die_id` (0 when the kernel does not report dies).
    pub id: usize,
    pub cpus: CpuSet,
    pub cores: usize,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Cluster {
    pub package: usize,
    pub die: usize,
    /// `cluster_id` as the kernel reports it.
    pub id: usize,
    pub cpus: CpuSet,
    pub cores: usize,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Core {
    /// Position in `MachineInfo::cores`.
    pub index: usize,
    pub package: usize,
    pub die: usize,
    pub cluster: Option<usize>,
    /// `core_id` as the kernel reports it (unique within a package and die only).
    pub core_id: usize,
    /// Online hardware threads of the core.
    pub cpus: CpuSet,
    /// Index into `MachineInfo::core_kinds`; null on homogeneous machines.
    pub kind: Option<usize>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Thread {
    pub cpu: usize,
    pub package: usize,
    pub die: usize,
    pub cluster: Option<usize>,
    pub core_id: usize,
    /// Index into `MachineInfo::cores`.
    pub core: usize,
    /// Position of this thread among its core's threads (0 = first sibling).
    pub smt: usize,
    /// NUMA node holding this CPU; null if no node lists it.
    pub node: Option<usize>,
    /// Index into `MachineInfo::core_kinds`; null on homogeneous machines.
    pub kind: Option<usize>,
    /// May this process run here (in `cpus.usable`)?
    pub usable: bool,
}

/// Simultaneous multithreading summary.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Smt {
    /// Most hardware threads on one core.
    pub threads_per_core: usize,
    /// Fewest hardware threads on one core (differs on hybrid parts or with offline siblings).
    pub min_threads_per_core: usize,
    /// True when some core runs more than one thread now.
    pub active: bool,
    /// `smt/control` (on, off, forceoff, notsupported, notimplemented); null if absent.
    pub control: Option<String>,
    /// Why `control` is null.
    pub control_note: Option<String>,
}

/// A kind of core on a hybrid machine (P/E cores, big.LITTLE).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CoreKind {
    /// 0 = the most performant kind.
    pub index: usize,
    pub name: String,
    /// How the kind was recognised.
    pub source: String,
    pub cpus: CpuSet,
    pub cores: usize,
    /// `cpu_capacity` (ARM), when that is how kinds were told apart.
    pub capacity: Option<u64>,
    /// cpufreq `base_frequency` in kHz, when that is how kinds were told apart.
    pub base_khz: Option<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub cpus: CpuLists,
    pub packages: Vec<Package>,
    pub dies: Vec<Die>,
    pub clusters: Vec<Cluster>,
    pub cores: Vec<Core>,
    pub threads: Vec<Thread>,
    pub smt: Smt,
    pub core_kinds: Vec<CoreKind>,
    /// Memory nodes this process may allocate from; null if unknown or unrestricted.
    pub mems_allowed: Option<CpuSet>,
    pub mems_allowed_source: String,
    /// Things that were missing or odd while reading.
    pub notes: Vec<String>,
}

/// What one online CPU's `topology/` directory says.
struct RawCpu {
    cpu: usize,
    package: usize,
    die: usize,
    cluster: Option<usize>,
    core_id: usize,
    /// The kernel gave a real `core_id` (not missing or negative).
    core_id_known: bool,
    siblings: Option<CpuSet>,
}

fn read_id(sys: &Sysroot, rel: &str) -> Option<i64> {
    sys.read_i64(rel)
}

/// A list file, falling back to `None` if missing, unparsable or empty.
fn nonempty_list(sys: &Sysroot, rel: &str) -> Option<CpuSet> {
    sys.read_cpulist(rel).filter(|s| !s.is_empty())
}

pub fn read(sys: &Sysroot) -> Result<Topology> {
    let mut notes = Vec::new();
    let (possible, present, online) = read_cpu_lists(sys, &mut notes)?;
    let offline = present.difference(&online);
    let raw = read_raw_cpus(sys, &online, &mut notes);
    let mut cores = group_cores(&raw, &online, &mut notes);
    let core_of_cpu = core_index_of_cpus(&cores);
    // Hybrid core kinds.
    let (core_kinds, kind_of_cpu) = read_core_kinds(sys, &online, &cores);
    for c in cores.iter_mut() {
        c.kind = c.cpus.first().and_then(|f| kind_of_cpu.get(&f).copied());
    }

    // Who may we run on?
    let allowed = read_allowed(sys);
    notes.extend(allowed.notes.iter().cloned());
    let usable = match &allowed.cpus {
        Some(a) => online.intersection(a),
        None => online.clone(),
    };

    let threads = build_threads(&raw, &cores, &core_of_cpu, &kind_of_cpu, &usable);

    let (packages, dies, clusters) = group_levels(&threads, &cores);
    let smt = read_smt(sys, &cores);
    let isolated = sys.read_cpulist(&format!("{CPU_DIR}/isolated"));
    let nohz_full = sys.read_cpulist(&format!("{CPU_DIR}/nohz_full"));
    let unavailable = unavailable_lists(&allowed, isolated.as_ref(), nohz_full.as_ref());

    Ok(Topology {
        cpus: CpuLists {
            possible,
            present,
            online,
            offline,
            usable,
            allowed: allowed.cpus,
            allowed_source: allowed.cpus_source,
            cgroup: allowed.cgroup,
            isolated,
            nohz_full,
            unavailable,
        },
        packages,
        dies,
        clusters,
        cores,
        threads,
        smt,
        core_kinds,
        mems_allowed: allowed.mems,
        mems_allowed_source: allowed.mems_source,
        notes,
    })
}

/// The index of the core of each CPU.
fn core_index_of_cpus(cores: &[Core]) -> BTreeMap<usize, usize> {
    let mut core_of_cpu: BTreeMap<usize, usize> = BTreeMap::new();
    for c in cores {
        for cpu in c.cpus.iter() {
            core_of_cpu.insert(cpu, c.index);
        }
    }
    core_of_cpu
}

/// One `Thread` per online CPU read, with its core, SMT sibling index, kind
/// and whether this process may run on it.
fn build_threads(
    raw: &[RawCpu],
    cores: &[Core],
    core_of_cpu: &BTreeMap<usize, usize>,
    kind_of_cpu: &BTreeMap<usize, usize>,
    usable: &CpuSet,
) -> Vec<Thread> {
    raw.iter()
        .map(|r| {
            let core = core_of_cpu.get(&r.cpu).copied().unwrap_or(0);
            let smt = cores
                .get(core)
                .map(|c| c.cpus.iter().position(|x| x == r.cpu).unwrap_or(0))
                .unwrap_or(0);
            Thread {
                cpu: r.cpu,
                package: r.package,
                die: r.die,
                cluster: r.cluster,
                core_id: r.core_id,
                core,
                smt,
                node: None,
                kind: kind_of_cpu.get(&r.cpu).copied(),
                usable: usable.contains(r.cpu),
            }
        })
        .collect()
}

/// Threads per core and the SMT control file.
fn read_smt(sys: &Sysroot, cores: &[Core]) -> Smt {
    let max_t = cores.iter().map(|c| c.cpus.len()).max().unwrap_or(0);
    let min_t = cores.iter().map(|c| c.cpus.len()).min().unwrap_or(0);
    let control = sys.read_string(&format!("{CPU_DIR}/smt/control"));
    Smt {
        threads_per_core: max_t,
        min_threads_per_core: min_t,
        active: max_t > 1,
        control_note: control
            .is_none()
            .then(|| format!("{CPU_DIR}/smt/control is absent (kernel older than 4.19)")),
        control,
    }
}

/// Why the allowed, isolated and nohz_full lists are missing, for those that are.
fn unavailable_lists(
    allowed: &Allowed,
    isolated: Option<&CpuSet>,
    nohz_full: Option<&CpuSet>,
) -> BTreeMap<String, String> {
    let mut unavailable = BTreeMap::new();
    if allowed.cpus.is_none() {
        unavailable.insert("allowed".to_string(), allowed.cpus_source.clone());
    }
    if isolated.is_none() {
        unavailable.insert(
            "isolated".to_string(),
            format!("{CPU_DIR}/isolated is absent (kernel older than 4.2)"),
        );
    }
    if nohz_full.is_none() {
        unavailable.insert(
            "nohz_full".to_string(),
            format!("{CPU_DIR}/nohz_full is absent (kernel built without NO_HZ_FULL)"),
        );
    }
    unavailable
}

/// possible, present and online CPUs (online from cpuN/online on old kernels).
fn read_cpu_lists(sys: &Sysroot, notes: &mut Vec<String>) -> Result<(CpuSet, CpuSet, CpuSet)> {
    let dirs: CpuSet = sys.list_numbered(CPU_DIR, "cpu").into_iter().collect();
    let possible =
        nonempty_list(sys, &format!("{CPU_DIR}/possible")).unwrap_or_else(|| dirs.clone());
    let present = nonempty_list(sys, &format!("{CPU_DIR}/present")).unwrap_or_else(|| dirs.clone());
    let online = match nonempty_list(sys, &format!("{CPU_DIR}/online")) {
        Some(s) => s,
        None => {
            if !dirs.is_empty() {
                notes.push(format!(
                    "{CPU_DIR}/online is missing (old kernel): online CPUs taken from cpuN/online"
                ));
            }
            dirs.iter()
                .filter(|c| {
                    sys.read_string(&format!("{CPU_DIR}/cpu{c}/online"))
                        .as_deref()
                        != Some("0")
                })
                .collect()
        }
    };
    if online.is_empty() {
        bail!(
            "no CPUs found under '{}': {CPU_DIR} has no cpuN directories and no online list",
            sys.root().display()
        );
    }
    let not_present = possible.difference(&present);
    if !not_present.is_empty() {
        notes.push(format!(
            "CPUs {not_present} are possible but not present (hot-pluggable slots)"
        ));
    }

    Ok((possible, present, online))
}

/// The ids each online CPU's topology directory gives, with notes on what is missing.
fn read_raw_cpus(sys: &Sysroot, online: &CpuSet, notes: &mut Vec<String>) -> Vec<RawCpu> {
    let mut raw = Vec::new();
    let mut missing_topo = CpuSet::new();
    let mut negative_pkg = false;
    let mut no_core_id = CpuSet::new();
    let mut have_die = false;
    for cpu in online.iter() {
        let t = format!("{CPU_DIR}/cpu{cpu}/topology");
        if !sys.is_dir(&t) {
            missing_topo.insert(cpu);
        }
        let pkg = read_id(sys, &format!("{t}/physical_package_id"));
        if pkg.is_some_and(|p| p < 0) {
            negative_pkg = true;
        }
        let die = read_id(sys, &format!("{t}/die_id"));
        have_die |= die.is_some();
        let cluster = read_id(sys, &format!("{t}/cluster_id"));
        let core_id = read_id(sys, &format!("{t}/core_id"));
        if core_id.is_none_or(|c| c < 0) {
            no_core_id.insert(cpu);
        }
        let siblings = sys
            .read_cpulist(&format!("{t}/core_cpus_list"))
            .or_else(|| sys.read_cpulist_or_mask(&format!("{t}/thread_siblings")))
            .or_else(|| sys.read_cpumask(&format!("{t}/core_cpus")));
        raw.push(RawCpu {
            cpu,
            package: pkg.filter(|p| *p >= 0).unwrap_or(0) as usize,
            die: die.filter(|d| *d >= 0).unwrap_or(0) as usize,
            // -1, and 65535 / 2^32-1 (the kernel's "no cluster" on x86 and
            // under QEMU), name no cluster.
            cluster: cluster
                .filter(|c| *c >= 0 && *c != 0xffff && *c != 0xffff_ffff)
                .map(|c| c as usize),
            core_id: core_id
                .filter(|c| *c >= 0)
                .map(|c| c as usize)
                .unwrap_or(cpu),
            core_id_known: core_id.is_some_and(|c| c >= 0),
            siblings,
        });
    }
    if !missing_topo.is_empty() {
        notes.push(format!(
            "online CPUs {missing_topo} have no topology directory: each is counted as its own core in package 0"
        ));
    }
    if !no_core_id.is_empty() && no_core_id.len() != missing_topo.len() {
        notes.push(format!(
            "CPUs {no_core_id} have no usable core_id: their CPU number is used as core_id"
        ));
    }
    if negative_pkg {
        notes.push(
            "the kernel reports physical_package_id -1 (unknown): counted as package 0".into(),
        );
    }
    if !have_die {
        notes.push(
            "the kernel reports no die_id (older than 5.2 or not x86): one die per package assumed"
                .into(),
        );
    }

    raw
}

/// Group threads into cores, indexed in (package, die, first CPU) order.
fn group_cores(raw: &[RawCpu], online: &CpuSet, notes: &mut Vec<String>) -> Vec<Core> {
    // Group threads into cores: by sibling set when every CPU has one, else by ids.
    // Threads of one core share its core_id: siblings with different core_ids
    // are separate cores sharing a module (AMD Bulldozer compute units, whose
    // old kernels list both cores as thread siblings), so the core_id splits them.
    let all_siblings = raw.iter().all(|r| r.siblings.is_some());
    let mut core_key_of: BTreeMap<usize, String> = BTreeMap::new();
    let mut module_split = CpuSet::new();
    for r in raw {
        let key = match (&r.siblings, all_siblings) {
            (Some(s), true) => {
                let mut s = s.intersection(online);
                s.insert(r.cpu);
                let split = r.core_id_known
                    && s.iter().any(|o| {
                        raw.iter()
                            .any(|x| x.cpu == o && x.core_id_known && x.core_id != r.core_id)
                    });
                if split {
                    module_split.insert(r.cpu);
                    format!("{}/{}/s{}/c{}", r.package, r.die, s, r.core_id)
                } else {
                    format!("{}/{}/s{}", r.package, r.die, s)
                }
            }
            _ => format!("{}/{}/c{}", r.package, r.die, r.core_id),
        };
        core_key_of.insert(r.cpu, key);
    }
    if !module_split.is_empty() {
        notes.push(format!(
            "CPUs {module_split} are listed as thread siblings of CPUs with another core_id: \
             taken as separate cores sharing a module (e.g. AMD compute units), not SMT threads"
        ));
    }
    let mut core_members: BTreeMap<&String, CpuSet> = BTreeMap::new();
    for (cpu, key) in &core_key_of {
        core_members.entry(key).or_default().insert(*cpu);
    }
    let raw_of: BTreeMap<usize, &RawCpu> = raw.iter().map(|r| (r.cpu, r)).collect();
    let mut cores: Vec<Core> = core_members
        .values()
        .filter_map(|cpus| {
            let first = raw_of.get(&cpus.first()?)?;
            Some(Core {
                index: 0,
                package: first.package,
                die: first.die,
                cluster: first.cluster,
                core_id: first.core_id,
                cpus: cpus.clone(),
                kind: None,
            })
        })
        .collect();
    cores.sort_by_key(|c| (c.package, c.die, c.cpus.first()));
    for (i, c) in cores.iter_mut().enumerate() {
        c.index = i;
    }

    cores
}

/// Packages, dies and clusters with their CPUs and core counts.
fn group_levels(threads: &[Thread], cores: &[Core]) -> (Vec<Package>, Vec<Die>, Vec<Cluster>) {
    let mut packages: BTreeMap<usize, Package> = BTreeMap::new();
    let mut dies: BTreeMap<(usize, usize), Die> = BTreeMap::new();
    let mut clusters: BTreeMap<(usize, usize, usize), Cluster> = BTreeMap::new();
    for t in threads {
        let p = packages.entry(t.package).or_insert_with(|| Package {
            id: t.package,
            ..Default::default()
        });
        p.cpus.insert(t.cpu);
        let d = dies.entry((t.package, t.die)).or_insert_with(|| Die {
            package: t.package,
            id: t.die,
            ..Default::default()
        });
        d.cpus.insert(t.cpu);
        if let Some(cl) = t.cluster {
            let c = clusters
                .entry((t.package, t.die, cl))
                .or_insert_with(|| Cluster {
                    package: t.package,
                    die: t.die,
                    id: cl,
                    ..Default::default()
                });
            c.cpus.insert(t.cpu);
        }
    }
    for c in cores {
        if let Some(p) = packages.get_mut(&c.package) {
            p.cores += 1;
        }
        if let Some(d) = dies.get_mut(&(c.package, c.die)) {
            d.cores += 1;
        }
        if let Some(cl) = c.cluster {
            if let Some(x) = clusters.get_mut(&(c.package, c.die, cl)) {
                x.cores += 1;
            }
        }
    }
    for d in dies.values() {
        if let Some(p) = packages.get_mut(&d.package) {
            p.dies += 1;
        }
    }

    (
        packages.into_values().collect(),
        dies.into_values().collect(),
        clusters.into_values().collect(),
    )
}

/// Record which NUMA node holds each thread and each package.
pub fn assign_nodes(topo: &mut Topology, nodes: &[super::numa::NumaNode]) {
    for t in topo.threads.iter_mut() {
        t.node = nodes.iter().find(|n| n.cpus.contains(t.cpu)).map(|n| n.id);
    }
    for p in topo.packages.iter_mut() {
        p.nodes = topo
            .threads
            .iter()
            .filter(|t| t.package == p.id)
            .filter_map(|t| t.node)
            .collect();
    }
}

struct Allowed {
    cpus: Option<CpuSet>,
    cpus_source: String,
    mems: Option<CpuSet>,
    mems_source: String,
    cgroup: Option<CgroupCpuset>,
    notes: Vec<String>,
}

fn read_allowed(sys: &Sysroot) -> Allowed {
    let mut notes = Vec::new();
    let cg = match cgroup::read_cpuset(sys) {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("cgroup cpuset not read: {e}"));
            None
        }
    };
    let (st_cpus, st_mems) = cgroup::status_allowed(sys);

    let (cpus, cpus_source) = if sys.is_live() {
        match live_affinity() {
            Ok(s) => (Some(s), "sched_getaffinity of this process".to_string()),
            Err(e) => (None, format!("not known: sched_getaffinity failed: {e}")),
        }
    } else {
        let mut set: Option<CpuSet> = None;
        let mut src = Vec::new();
        if let Some(c) = cg.as_ref().and_then(|c| c.cpus.as_ref().map(|s| (c, s))) {
            set = Some(c.1.clone());
            src.push(format!(
                "cgroup v{} cpuset {} ({})",
                c.0.version,
                c.0.path,
                c.0.cpus_file.as_deref().unwrap_or("?")
            ));
        }
        if let Some(s) = &st_cpus {
            set = Some(match set {
                Some(x) => x.intersection(s),
                None => s.clone(),
            });
            src.push("/proc/self/status Cpus_allowed_list".to_string());
        }
        if src.is_empty() {
            (
                None,
                "no restriction recorded (no cgroup cpuset, no /proc/self/status)".to_string(),
            )
        } else {
            (set, src.join(" ∩ "))
        }
    };

    let mut mems: Option<CpuSet> = None;
    let mut msrc = Vec::new();
    if let Some(c) = cg.as_ref().and_then(|c| c.mems.as_ref().map(|s| (c, s))) {
        mems = Some(c.1.clone());
        msrc.push(format!(
            "cgroup v{} cpuset {} ({})",
            c.0.version,
            c.0.path,
            c.0.mems_file.as_deref().unwrap_or("?")
        ));
    }
    if let Some(s) = &st_mems {
        mems = Some(match mems {
            Some(x) => x.intersection(s),
            None => s.clone(),
        });
        msrc.push("/proc/self/status Mems_allowed_list".to_string());
    }
    let mems_source = if msrc.is_empty() {
        "no restriction recorded (no cgroup cpuset mems, no /proc/self/status)".to_string()
    } else {
        msrc.join(" ∩ ")
    };
    Allowed {
        cpus,
        cpus_source,
        mems,
        mems_source,
        cgroup: cg,
        notes,
    }
}

/// CPUs this (live) process may run on.
fn live_affinity() -> std::result::Result<CpuSet, String> {
    let mut words: usize = 16; // 1024 CPUs
    loop {
        let mut buf = vec![0u64; words];
        // SAFETY: the kernel writes at most `words * 8` bytes into `buf`, which we own.
        let r = unsafe {
            libc::sched_getaffinity(
                0,
                words * std::mem::size_of::<u64>(),
                buf.as_mut_ptr().cast::<libc::cpu_set_t>(),
            )
        };
        if r == 0 {
            let mut set = CpuSet::new();
            for (w, bits) in buf.iter().enumerate() {
                for b in 0..64 {
                    if bits & (1u64 << b) != 0 {
                        set.insert(w * 64 + b);
                    }
                }
            }
            return Ok(set);
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINVAL) && words < (1 << 12) {
            words *= 2;
            continue;
        }
        return Err(err.to_string());
    }
}

/// A group of CPUs of one kind: (name, source, cpus, capacity, base_khz).
type KindGroup = (String, String, CpuSet, Option<u64>, Option<u64>);

/// Kinds of cores on hybrid machines, most performant first, and the kind of each CPU.
/// Sources in order: Intel's `cpu_core`/`cpu_atom` PMU devices, ARM `cpu_capacity`,
/// then cpufreq `base_frequency` (hybrid Intel parts give P and E cores different base
/// frequencies; max frequencies differ even on homogeneous parts, so they are not used).
fn read_core_kinds(
    sys: &Sysroot,
    online: &CpuSet,
    cores: &[Core],
) -> (Vec<CoreKind>, BTreeMap<usize, usize>) {
    let groups = kind_groups(sys, online);
    let mut kind_of = BTreeMap::new();
    let mut kinds = Vec::new();
    for (i, (name, source, cpus, capacity, base_khz)) in groups.into_iter().enumerate() {
        for c in cpus.iter() {
            kind_of.insert(c, i);
        }
        let ncores = cores
            .iter()
            .filter(|c| c.cpus.first().is_some_and(|f| cpus.contains(f)))
            .count();
        kinds.push(CoreKind {
            index: i,
            name,
            source,
            cpus,
            cores: ncores,
            capacity,
            base_khz,
        });
    }
    (kinds, kind_of)
}

/// The kind groups, most performant first: from the `cpu_core`/`cpu_atom`
/// PMU devices when both exist, else from per-CPU values.
fn kind_groups(sys: &Sysroot, online: &CpuSet) -> Vec<KindGroup> {
    let p = nonempty_list(sys, "/sys/devices/cpu_core/cpus");
    let e = nonempty_list(sys, "/sys/devices/cpu_atom/cpus");
    let (Some(p), Some(e)) = (p, e) else {
        return kind_groups_by_value(sys, online);
    };
    vec![
        (
            "P-core".into(),
            "/sys/devices/cpu_core/cpus".into(),
            p.intersection(online),
            None,
            None,
        ),
        (
            "E-core".into(),
            "/sys/devices/cpu_atom/cpus".into(),
            e.intersection(online),
            None,
            None,
        ),
    ]
}

/// Kind groups from `cpu_capacity`, else cpufreq `base_frequency`: used when
/// the values differ and every online CPU has one.
fn kind_groups_by_value(sys: &Sysroot, online: &CpuSet) -> Vec<KindGroup> {
    let mut groups: Vec<KindGroup> = Vec::new();
    let by = |file: &str| -> BTreeMap<u64, CpuSet> {
        let mut m: BTreeMap<u64, CpuSet> = BTreeMap::new();
        for cpu in online.iter() {
            if let Some(v) = sys.read_u64(&format!("{CPU_DIR}/cpu{cpu}/{file}")) {
                m.entry(v).or_default().insert(cpu);
            }
        }
        m
    };
    let caps = by("cpu_capacity");
    let bases = by("cpufreq/base_frequency");
    let covered =
        |m: &BTreeMap<u64, CpuSet>| m.values().map(|s| s.len()).sum::<usize>() == online.len();
    if caps.len() > 1 && covered(&caps) {
        let names = names_for(caps.len(), &["big", "little"], &["big", "medium", "little"]);
        for ((v, set), name) in caps.iter().rev().zip(names) {
            groups.push((
                name,
                format!("{CPU_DIR}/cpuN/cpu_capacity"),
                set.clone(),
                Some(*v),
                None,
            ));
        }
    } else if bases.len() > 1 && covered(&bases) {
        let names = names_for(
            bases.len(),
            &["performance", "efficiency"],
            &["performance", "mid", "efficiency"],
        );
        for ((v, set), name) in bases.iter().rev().zip(names) {
            groups.push((
                name,
                format!("{CPU_DIR}/cpuN/cpufreq/base_frequency"),
                set.clone(),
                None,
                Some(*v),
            ));
        }
    }
    groups
}

fn names_for(n: usize, two: &[&str], three: &[&str]) -> Vec<String> {
    match n {
        2 => two.iter().map(|s| s.to_string()).collect(),
        3 => three.iter().map(|s| s.to_string()).collect(),
        _ => (0..n).map(|i| format!("kind {i}")).collect(),
    }
}

//! Event names and their `perf_event_attr` encodings: the generic hardware,
//! software and hardware-cache events the kernel defines, raw `rNNNN`
//! encodings, and PMU events described in sysfs (`cpu/event=0x3c,umask=0/`,
//! `topdown-retiring`). Parsing `-e` lists, with `{a,b}` groups.

use super::raw::{PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE};
use super::sysfs;
use crate::base::Sysroot;
use anyhow::{bail, Result};
use serde::Serialize;

/// What kind of counter an event is; decides grouping and whether the
/// "PMU returns zeros" check applies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventClass {
    /// Kernel software event (always available).
    Software,
    /// Generic hardware event (`PERF_TYPE_HARDWARE`).
    Hardware,
    /// Generic hardware cache event (`PERF_TYPE_HW_CACHE`).
    HwCache,
    /// Raw core PMU encoding (`rNNNN`).
    Raw,
    /// Event of a named PMU from sysfs; `core` when it is a CPU core PMU.
    Pmu { pmu: String, core: bool },
}

/// One countable event: its display name, the key metrics look it up by,
/// and its `perf_event_attr` encoding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    /// Name as displayed (canonical name plus modifiers, e.g. `cycles:u`).
    pub name: String,
    /// Canonical name without modifiers (`cycles`); derived metrics look events up by it.
    pub key: String,
    #[serde(rename = "type")]
    pub type_: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    /// Multiplier applied to counts (sysfs `.scale` files; 1 otherwise).
    pub scale: f64,
    /// Unit of the scaled count (`ns` for clocks, sysfs `.unit`), if any.
    pub unit: Option<String>,
    pub class: EventClass,
    pub exclude_user: bool,
    pub exclude_kernel: bool,
    pub exclude_hv: bool,
}

/// Generic hardware events: canonical name, aliases, `PERF_COUNT_HW_*` id.
const HARDWARE: &[(&str, &[&str], u64)] = &[
    ("cycles", &["cpu-cycles"], 0),
    ("instructions", &[], 1),
    ("cache-references", &[], 2),
    ("cache-misses", &[], 3),
    ("branches", &["branch-instructions"], 4),
    ("branch-misses", &[], 5),
    ("bus-cycles", &[], 6),
    ("stalled-cycles-frontend", &["idle-cycles-frontend"], 7),
    ("stalled-cycles-backend", &["idle-cycles-backend"], 8),
    ("ref-cycles", &[], 9),
];

/// Software events: canonical name, aliases, `PERF_COUNT_SW_*` id, unit.
const SOFTWARE: &[(&str, &[&str], u64, Option<&str>)] = &[
    ("cpu-clock", &[], 0, Some("ns")),
    ("task-clock", &[], 1, Some("ns")),
    ("page-faults", &["faults"], 2, None),
    ("context-switches", &["cs"], 3, None),
    ("cpu-migrations", &["migrations"], 4, None),
    ("minor-faults", &[], 5, None),
    ("major-faults", &[], 6, None),
    ("alignment-faults", &[], 7, None),
    ("emulation-faults", &[], 8, None),
    // perf's pseudo-events: they exist to carry something else (a sideband
    // record, BPF output) and count nothing; accepted so perf command lines
    // work unchanged (seed 000 lists both), with a note (`pseudo_event_note`).
    ("dummy", &[], 9, None),
    ("bpf-output", &[], 10, None),
];

/// Why a software pseudo-event counts nothing, for the events perf lists
/// that never count (`dummy`, `bpf-output`); None for every other event.
pub fn pseudo_event_note(key: &str) -> Option<&'static str> {
    match key {
        "dummy" => Some(
            "dummy is perf's placeholder software event (PERF_COUNT_SW_DUMMY): it carries sideband records and counts nothing, so it reads 0 by definition",
        ),
        "bpf-output" => Some(
            "bpf-output is the channel a BPF program writes samples to (PERF_COUNT_SW_BPF_OUTPUT): without such a program it counts nothing, so it reads 0 by definition",
        ),
        _ => None,
    }
}

/// Hardware cache ids (`PERF_COUNT_HW_CACHE_*`).
const CACHES: &[(&str, u64)] = &[
    ("L1-dcache", 0),
    ("L1-icache", 1),
    ("LLC", 2),
    ("dTLB", 3),
    ("iTLB", 4),
    ("branch", 5),
    ("node", 6),
];

/// Cache operations: singular, plural, `PERF_COUNT_HW_CACHE_OP_*`.
const CACHE_OPS: &[(&str, &str, u64)] = &[
    ("load", "loads", 0),
    ("store", "stores", 1),
    ("prefetch", "prefetches", 2),
];

impl Event {
    fn base(name: &str, type_: u32, config: u64, class: EventClass) -> Event {
        Event {
            name: name.to_string(),
            key: name.to_string(),
            type_,
            config,
            config1: 0,
            config2: 0,
            scale: 1.0,
            unit: None,
            class,
            exclude_user: false,
            exclude_kernel: false,
            exclude_hv: false,
        }
    }

    /// A built-in (generic hardware, software or cache) event by name, without
    /// modifiers. Case-insensitive, accepts perf's aliases (`cpu-cycles`, `cs`).
    pub fn builtin(name: &str) -> Option<Event> {
        let lname = name.to_ascii_lowercase();
        for (canon, aliases, id) in HARDWARE {
            if lname == *canon || aliases.contains(&lname.as_str()) {
                return Some(Event::base(
                    canon,
                    PERF_TYPE_HARDWARE,
                    *id,
                    EventClass::Hardware,
                ));
            }
        }
        for (canon, aliases, id, unit) in SOFTWARE {
            if lname == *canon || aliases.contains(&lname.as_str()) {
                let mut e = Event::base(canon, PERF_TYPE_SOFTWARE, *id, EventClass::Software);
                e.unit = unit.map(str::to_string);
                return Some(e);
            }
        }
        for (cache, cid) in CACHES {
            let lc = cache.to_ascii_lowercase();
            let Some(rest) = lname.strip_prefix(&lc).and_then(|r| r.strip_prefix('-')) else {
                continue;
            };
            for (op, ops, oid) in CACHE_OPS {
                let (result, canon) = if rest == *ops {
                    (0u64, format!("{cache}-{ops}"))
                } else if rest == format!("{op}-misses") {
                    (1u64, format!("{cache}-{op}-misses"))
                } else {
                    continue;
                };
                let config = cid | (oid << 8) | (result << 16);
                return Some(Event::base(
                    &canon,
                    PERF_TYPE_HW_CACHE,
                    config,
                    EventClass::HwCache,
                ));
            }
        }
        None
    }

    /// Like [`Event::builtin`] for names known to exist; for code that builds
    /// fixed event lists. Unknown names give a software `dummy` event that
    /// counts nothing rather than a panic (keyed `unknown:NAME`).
    pub fn named(name: &str) -> Event {
        Event::builtin(name).unwrap_or_else(|| {
            let mut e = Event::base(name, PERF_TYPE_SOFTWARE, 9, EventClass::Software);
            e.key = format!("unknown:{name}");
            e
        })
    }

    /// Parse one event specification: a built-in name, `rNNNN`, `pmu/terms/`,
    /// or an event name from a PMU's sysfs `events/` directory; each with
    /// optional modifiers (`:u`, `:k`, `:uk`, or `pmu/.../u`).
    pub fn parse(spec: &str, sys: &Sysroot) -> Result<Event> {
        let spec = spec.trim();
        if spec.is_empty() {
            bail!("empty event name in the event list");
        }
        // pmu/terms/[mods]
        if let Some(slash) = spec.find('/') {
            let pmu = &spec[..slash];
            let rest = &spec[slash + 1..];
            let Some(end) = rest.rfind('/') else {
                bail!(
                    "bad event '{spec}': PMU event must look like pmu/terms/ (missing closing '/')"
                );
            };
            let terms = &rest[..end];
            let mods = rest[end + 1..].trim_start_matches(':');
            if pmu.is_empty() {
                bail!("bad event '{spec}': missing PMU name before '/'");
            }
            let r = sysfs::resolve_terms(sys, pmu, terms)
                .map_err(|e| anyhow::anyhow!("bad event '{spec}': {e}"))?;
            let core = sysfs::is_core_pmu(pmu);
            let name = r.name.clone().unwrap_or_else(|| format!("{pmu}/{terms}/"));
            let key = r.event_name.clone().unwrap_or_else(|| name.clone());
            let mut e = Event::base(
                &name,
                r.type_,
                r.config,
                EventClass::Pmu {
                    pmu: pmu.to_string(),
                    core,
                },
            );
            e.key = key;
            e.config1 = r.config1;
            e.config2 = r.config2;
            e.scale = r.scale;
            e.unit = r.unit;
            apply_modifiers(&mut e, mods, spec)?;
            return Ok(e);
        }
        let (base, mods) = match spec.split_once(':') {
            Some((b, m)) => (b, m),
            None => (spec, ""),
        };
        let mut e = if let Some(e) = Event::builtin(base) {
            e
        } else if let Some(hex) = raw_hex(base) {
            let config = u64::from_str_radix(hex, 16)
                .map_err(|_| anyhow::anyhow!("bad raw event '{base}': not a hex number"))?;
            Event::base(&format!("r{hex}"), PERF_TYPE_RAW, config, EventClass::Raw)
        } else if let Some((pmu, r)) = sysfs::find_named_event(sys, base) {
            let core = sysfs::is_core_pmu(&pmu);
            let mut e = Event::base(base, r.type_, r.config, EventClass::Pmu { pmu, core });
            e.config1 = r.config1;
            e.config2 = r.config2;
            e.scale = r.scale;
            e.unit = r.unit;
            e
        } else {
            bail!(
                "unknown event '{base}' (see `cpuscope stat --list` for the events of this machine)"
            );
        };
        apply_modifiers(&mut e, mods, spec)?;
        Ok(e)
    }

    /// True for events counted by a hardware PMU (everything but software events).
    pub fn is_hardware(&self) -> bool {
        match &self.class {
            EventClass::Software => false,
            EventClass::Pmu { core, .. } => *core,
            _ => true,
        }
    }

    pub fn is_software(&self) -> bool {
        self.class == EventClass::Software
    }

    /// Suffix describing the privilege filter (`:u`, `:k`), empty when none.
    pub fn modifier_suffix(&self) -> String {
        if !self.exclude_user && !self.exclude_kernel && !self.exclude_hv {
            return String::new();
        }
        let mut s = String::from(":");
        if !self.exclude_user {
            s.push('u');
        }
        if !self.exclude_kernel {
            s.push('k');
        }
        if !self.exclude_hv {
            s.push('h');
        }
        s
    }

    /// Restrict to user space (the fallback under perf_event_paranoid >= 2).
    pub fn user_only(&self) -> Event {
        let mut e = self.clone();
        e.exclude_kernel = true;
        e.exclude_hv = true;
        e.exclude_user = false;
        e.name = format!("{}{}", strip_mods(&e.name), e.modifier_suffix());
        e
    }
}

fn strip_mods(name: &str) -> &str {
    if name.contains('/') {
        return name;
    }
    name.split(':').next().unwrap_or(name)
}

/// `r1a8` -> `1a8` when the rest is hex.
fn raw_hex(s: &str) -> Option<&str> {
    let h = s.strip_prefix('r')?;
    if !h.is_empty() && h.len() <= 16 && h.chars().all(|c| c.is_ascii_hexdigit()) {
        Some(h)
    } else {
        None
    }
}

fn apply_modifiers(e: &mut Event, mods: &str, spec: &str) -> Result<()> {
    if mods.is_empty() {
        return Ok(());
    }
    let (mut u, mut k, mut h) = (false, false, false);
    for c in mods.chars() {
        match c {
            'u' => u = true,
            'k' => k = true,
            'h' => h = true,
            _ => bail!("bad event '{spec}': unknown modifier '{c}' (supported: u, k, h)"),
        }
    }
    e.exclude_user = !u;
    e.exclude_kernel = !k;
    e.exclude_hv = !h;
    let suffix = e.modifier_suffix();
    if e.name.contains('/') {
        e.name = format!("{}{}", e.name, suffix);
    } else {
        e.name = format!("{}{}", strip_mods(&e.name), suffix);
    }
    Ok(())
}

/// Split an `-e` list into groups: `a,b,{c,d},e` gives `[[a],[b],[c,d],[e]]`
/// as written (ungrouped events are single-element groups here; the caller
/// decides how to pack them). Commas inside `pmu/.../` do not split.
pub fn split_event_list(list: &str) -> Result<Vec<(bool, Vec<String>)>> {
    let mut out: Vec<(bool, Vec<String>)> = Vec::new();
    let mut cur = String::new();
    let mut in_slash = false;
    let mut in_group = false;
    let mut group: Vec<String> = Vec::new();
    let push_item = |cur: &mut String,
                     in_group: bool,
                     group: &mut Vec<String>,
                     out: &mut Vec<(bool, Vec<String>)>|
     -> Result<()> {
        let item = cur.trim().to_string();
        cur.clear();
        if item.is_empty() {
            bail!("empty event name in the event list '{list}'");
        }
        if in_group {
            group.push(item);
        } else {
            out.push((false, vec![item]));
        }
        Ok(())
    };
    let mut after_group = false;
    for c in list.chars() {
        match c {
            '/' => {
                in_slash = !in_slash;
                cur.push(c);
            }
            ',' if !in_slash => {
                if after_group {
                    after_group = false;
                    if !cur.trim().is_empty() {
                        bail!(
                            "bad event list '{list}': modifiers on a {{group}} are not supported"
                        );
                    }
                    cur.clear();
                    continue;
                }
                push_item(&mut cur, in_group, &mut group, &mut out)?;
            }
            '{' if !in_slash => {
                if in_group || !cur.trim().is_empty() {
                    bail!("bad event list '{list}': unexpected '{{'");
                }
                in_group = true;
            }
            '}' if !in_slash => {
                if !in_group {
                    bail!("bad event list '{list}': '}}' without '{{'");
                }
                push_item(&mut cur, true, &mut group, &mut out)?;
                out.push((true, std::mem::take(&mut group)));
                in_group = false;
                after_group = true;
            }
            _ => cur.push(c),
        }
    }
    if in_group {
        bail!("bad event list '{list}': '{{' without '}}'");
    }
    if in_slash {
        bail!("bad event list '{list}': unbalanced '/'");
    }
    if after_group {
        if !cur.trim().is_empty() {
            bail!("bad event list '{list}': modifiers on a {{group}} are not supported");
        }
    } else {
        push_item(&mut cur, false, &mut group, &mut out)?;
    }
    Ok(out)
}

/// Largest number of hardware events cpuscope puts in one automatic group.
/// Intel has 4 general counters per hyperthread (8 without SMT) plus fixed
/// counters, AMD Zen 6, Neoverse 6: 4 always fits.
pub const MAX_AUTO_GROUP: usize = 4;

/// Parse `-e` lists into counter groups. Explicit `{...}` groups are kept as
/// written; other software events share one group; other hardware events are
/// packed in order, `MAX_AUTO_GROUP` per group.
pub fn parse_event_lists(lists: &[String], sys: &Sysroot) -> Result<Vec<Vec<Event>>> {
    let mut explicit: Vec<Vec<Event>> = Vec::new();
    let mut loose: Vec<Event> = Vec::new();
    let mut order: Vec<(bool, usize)> = Vec::new();
    for list in lists {
        for (is_group, names) in split_event_list(list)? {
            let evs = names
                .iter()
                .map(|n| Event::parse(n, sys))
                .collect::<Result<Vec<_>>>()?;
            if is_group {
                order.push((true, explicit.len()));
                explicit.push(evs);
            } else {
                for e in evs {
                    order.push((false, loose.len()));
                    loose.push(e);
                }
            }
        }
    }
    let mut groups = pack(&loose);
    groups.extend(explicit);
    if groups.iter().all(|g| g.is_empty()) {
        bail!("no events given");
    }
    Ok(groups)
}

/// Pack loose events: software together, hardware `MAX_AUTO_GROUP` at a time.
pub fn pack(events: &[Event]) -> Vec<Vec<Event>> {
    let sw: Vec<Event> = events.iter().filter(|e| e.is_software()).cloned().collect();
    let hw: Vec<Event> = events
        .iter()
        .filter(|e| !e.is_software())
        .cloned()
        .collect();
    let mut groups = Vec::new();
    if !sw.is_empty() {
        groups.push(sw);
    }
    for chunk in hw.chunks(MAX_AUTO_GROUP) {
        groups.push(chunk.to_vec());
    }
    groups
}

/// The default `cpuscope stat` event groups (like `perf stat -d -d`):
/// software events, then hardware groups that keep each metric's inputs
/// together. `per_cpu` uses `cpu-clock` instead of `task-clock`.
pub fn default_groups(per_cpu: bool) -> Vec<Vec<Event>> {
    let clock = if per_cpu { "cpu-clock" } else { "task-clock" };
    let names: &[&[&str]] = &[
        &[clock, "context-switches", "cpu-migrations", "page-faults"],
        &["cycles", "instructions", "branches", "branch-misses"],
        &["stalled-cycles-frontend", "stalled-cycles-backend"],
        &[
            "cache-references",
            "cache-misses",
            "bus-cycles",
            "ref-cycles",
        ],
        &[
            "L1-dcache-loads",
            "L1-dcache-load-misses",
            "L1-icache-loads",
            "L1-icache-load-misses",
        ],
        &["LLC-loads", "LLC-load-misses"],
        &[
            "dTLB-loads",
            "dTLB-load-misses",
            "iTLB-loads",
            "iTLB-load-misses",
        ],
    ];
    names
        .iter()
        .map(|g| g.iter().map(|n| Event::named(n)).collect())
        .collect()
}

/// A small set for wrapping measured regions in the harness: task clock,
/// page faults, cycles, instructions, branches and misses, cache refs/misses.
pub fn harness_default() -> Vec<Event> {
    [
        "task-clock",
        "page-faults",
        "cycles",
        "instructions",
        "branches",
        "branch-misses",
        "cache-references",
        "cache-misses",
    ]
    .iter()
    .map(|n| Event::named(n))
    .collect()
}

/// Every built-in event name (for `--list`).
pub fn builtin_names() -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for (n, _, _, _) in SOFTWARE {
        v.push((n.to_string(), "software"));
    }
    for (n, _, _) in HARDWARE {
        v.push((n.to_string(), "hardware"));
    }
    for (c, _) in CACHES {
        for (op, ops, _) in CACHE_OPS {
            v.push((format!("{c}-{ops}"), "hw-cache"));
            v.push((format!("{c}-{op}-misses"), "hw-cache"));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::super::sysfs::testroot::FakeRoot;
    use super::*;

    #[test]
    fn builtin_names_and_aliases() {
        let c = Event::builtin("cpu-cycles").unwrap();
        assert_eq!((c.name.as_str(), c.type_, c.config), ("cycles", 0, 0));
        let t = Event::builtin("task-clock").unwrap();
        assert_eq!((t.type_, t.config), (1, 1));
        assert_eq!(t.unit.as_deref(), Some("ns"));
        assert_eq!(Event::builtin("cs").unwrap().name, "context-switches");
        assert_eq!(Event::builtin("ref-cycles").unwrap().config, 9);
        assert!(Event::builtin("bogus").is_none());
    }

    #[test]
    fn cache_event_encoding() {
        let e = Event::builtin("L1-dcache-load-misses").unwrap();
        assert_eq!(e.type_, 3);
        assert_eq!(e.config, 0x10000); // L1D | READ<<8 | MISS<<16
        let e = Event::builtin("dtlb-loads").unwrap();
        assert_eq!(e.name, "dTLB-loads");
        assert_eq!(e.config, 3);
        let e = Event::builtin("iTLB-load-misses").unwrap();
        assert_eq!(e.config, 4 | (1 << 16));
        let e = Event::builtin("LLC-store-misses").unwrap();
        assert_eq!(e.config, 2 | (1 << 8) | (1 << 16));
        assert!(Event::builtin("L1-dcache-bogus").is_none());
    }

    #[test]
    fn modifiers_and_raw() {
        let r = FakeRoot::new();
        let s = r.sys();
        let e = Event::parse("cycles:u", &s).unwrap();
        assert!(e.exclude_kernel && e.exclude_hv && !e.exclude_user);
        assert_eq!(e.name, "cycles:u");
        assert_eq!(e.key, "cycles");
        let e = Event::parse("instructions:k", &s).unwrap();
        assert!(e.exclude_user && !e.exclude_kernel);
        let e = Event::parse("r01c2", &s).unwrap();
        assert_eq!((e.type_, e.config), (4, 0x1c2));
        assert!(Event::parse("cycles:z", &s).is_err());
        let err = Event::parse("nosuchevent", &s).unwrap_err().to_string();
        assert!(err.contains("unknown event 'nosuchevent'"), "{err}");
        assert!(Event::parse("cpu/event=1", &s).is_err());
    }

    #[test]
    fn pmu_events_from_sysfs() {
        let r = FakeRoot::new();
        r.intel_cpu_pmu("cpu").write(
            "sys/bus/event_source/devices/cpu/events/topdown-retiring",
            "event=0x00,umask=0x80",
        );
        let s = r.sys();
        let e = Event::parse("cpu/event=0x3c,umask=0x1/u", &s).unwrap();
        assert_eq!((e.type_, e.config), (4, 0x13c));
        assert!(e.exclude_kernel && !e.exclude_user);
        assert!(e.is_hardware(), "core PMU events are hardware");
        assert_eq!(e.name, "cpu/event=0x3c,umask=0x1/:u");
        let e = Event::parse("topdown-retiring", &s).unwrap();
        assert_eq!((e.key.as_str(), e.config), ("topdown-retiring", 0x8000));
        let e = Event::parse("cpu/topdown-retiring/", &s).unwrap();
        assert_eq!(e.key, "topdown-retiring");
        let e = Event::parse("cpu/event=0xc0,name=my_insn/", &s).unwrap();
        assert_eq!((e.name.as_str(), e.key.as_str()), ("my_insn", "my_insn"));
        let err = Event::parse("cpu/bogus=1/", &s).unwrap_err().to_string();
        assert!(err.contains("no format term 'bogus'"), "{err}");
    }

    #[test]
    fn list_splitting() {
        let v = split_event_list("cycles,{instructions,branches},cpu/event=0x3c,umask=0/,faults")
            .unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v[1], (true, vec!["instructions".into(), "branches".into()]));
        assert_eq!(v[2].1, vec!["cpu/event=0x3c,umask=0/".to_string()]);
        assert!(split_event_list("cycles,,instructions").is_err());
        assert!(split_event_list("{cycles").is_err());
        assert!(split_event_list("cycles}").is_err());
        assert!(split_event_list("").is_err());
    }

    #[test]
    fn packing_keeps_software_apart() {
        let r = FakeRoot::new();
        let s = r.sys();
        let g = parse_event_lists(
            &["task-clock,cycles,instructions,branches,branch-misses,cache-misses,faults".into()],
            &s,
        )
        .unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].len(), 2);
        assert!(g[0].iter().all(|e| e.is_software()));
        assert_eq!(g[1].len(), 4);
        assert_eq!(g[2][0].name, "cache-misses");
    }

    #[test]
    fn defaults_cover_issue_events() {
        let names: Vec<String> = default_groups(false)
            .into_iter()
            .flatten()
            .map(|e| e.name)
            .collect();
        for n in [
            "task-clock",
            "cycles",
            "instructions",
            "branch-misses",
            "cache-misses",
            "L1-dcache-load-misses",
            "L1-icache-load-misses",
            "LLC-load-misses",
            "dTLB-load-misses",
            "iTLB-load-misses",
            "stalled-cycles-frontend",
            "bus-cycles",
            "ref-cycles",
            "page-faults",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} missing");
        }
        assert!(default_groups(true)[0]
            .iter()
            .any(|e| e.name == "cpu-clock"));
        assert!(default_groups(false)
            .iter()
            .all(|g| g.len() <= MAX_AUTO_GROUP));
    }
}

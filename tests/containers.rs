//! Containers, read and respected (issue 34): cpuscope run inside real
//! cgroups made for each test — cgroup v2 where the unified hierarchy has
//! the cpuset, memory and cpu controllers, else the v1 hierarchies — with
//! `cpuset.cpus` set to one CPU (the first this process may use, CPU 0 on
//! most machines), a 256 MiB memory limit (no swap) and, where a test asks,
//! a CPU quota. The test's child is moved into the cgroups by a small shell
//! (`echo $$ > cgroup.procs; exec cpuscope ...`). Every cgroup is removed
//! when its test ends, failed or not (`TestCgroup`'s drop kills what is
//! left in it first). Not root, or no such controllers: `skip_or_fail`.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/skip.rs"]
mod skip;

use serde_json::Value;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The memory limit of the tests' cgroups.
const MEM_LIMIT: u64 = 256 << 20;
/// A run may take this long before `timeout` kills it (a hang fails).
const RUN_LIMIT_S: u32 = 1200;

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// What a test cgroup sets besides its one CPU.
#[derive(Clone, Copy, Default)]
struct Want {
    /// The 256 MiB memory limit.
    memory: bool,
    /// A CPU quota, µs per 100 ms period.
    quota_us: Option<u64>,
    /// The cgroup's CPU time must be readable (v1: the cpuacct controller).
    cpuacct: bool,
}

/// A cgroup made for one test: v2 one directory, v1 one per hierarchy.
struct TestCgroup {
    version: u8,
    /// The directories made, in order.
    dirs: Vec<PathBuf>,
    /// The CPU it allows.
    cpu: usize,
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        for d in self.dirs.iter().rev() {
            for _ in 0..100 {
                kill_members(d);
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if d.exists() {
                let _ = writeln_err(&format!("could not remove test cgroup {}", d.display()));
            }
        }
    }
}

fn writeln_err(s: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    writeln!(std::io::stderr(), "{s}")
}

/// SIGKILL every process left in test cgroup `dir` (a test that failed
/// half-way); only processes the test started are ever there.
fn kill_members(dir: &Path) {
    let Ok(t) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    for pid in t.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        // SAFETY: kill has no memory effects; the pid is one this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

fn write(p: &Path, v: &str) -> Result<(), String> {
    std::fs::write(p, v).map_err(|e| format!("cannot write '{v}' to {}: {e}", p.display()))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The first id of a list such as `0-3,8`.
fn first_of(list: &str) -> Option<usize> {
    list.split([',', '-']).next()?.trim().parse().ok()
}

/// This process's first allowed CPU (`Cpus_allowed_list`).
fn first_cpu() -> usize {
    let st = read(Path::new("/proc/self/status"));
    st.lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|v| first_of(v.trim()))
        .unwrap_or(0)
}

impl TestCgroup {
    /// Make the cgroup, or why it cannot be made here.
    fn make(want: Want) -> Result<TestCgroup, String> {
        // SAFETY: geteuid has no memory effects.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: making cgroups needs root".into());
        }
        let mounts = read(Path::new("/proc/self/mounts"));
        let name = format!(
            "cpuscope-test-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let v2 = mounts.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"cgroup2")).then(|| PathBuf::from(f[1]))
        });
        if let Some(mp) = v2 {
            let ctrls = read(&mp.join("cgroup.controllers"));
            let has = |c: &str| ctrls.split_whitespace().any(|x| x == c);
            if has("cpuset") && has("memory") && has("cpu") {
                return Self::make_v2(&mp, &name, want);
            }
        }
        Self::make_v1(&mounts, &name, want)
    }

    fn make_v2(mp: &Path, name: &str, want: Want) -> Result<TestCgroup, String> {
        // The root may delegate every controller (no process rule there).
        let _ = std::fs::write(mp.join("cgroup.subtree_control"), "+cpuset +memory +cpu");
        let dir = mp.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let mut cg = TestCgroup {
            version: 2,
            dirs: vec![dir.clone()],
            cpu: first_cpu(),
        };
        let mems = first_of(&read(&mp.join("cpuset.mems.effective"))).unwrap_or(0);
        write(&dir.join("cpuset.cpus"), &cg.cpu.to_string())?;
        write(&dir.join("cpuset.mems"), &mems.to_string())?;
        if want.memory {
            write(&dir.join("memory.max"), &MEM_LIMIT.to_string())?;
            if dir.join("memory.swap.max").exists() {
                write(&dir.join("memory.swap.max"), "0")?;
            }
        }
        if let Some(q) = want.quota_us {
            write(&dir.join("cpu.max"), &format!("{q} 100000"))?;
        }
        cg.cpu = first_of(&read(&dir.join("cpuset.cpus.effective"))).unwrap_or(cg.cpu);
        Ok(cg)
    }

    fn make_v1(mounts: &str, name: &str, want: Want) -> Result<TestCgroup, String> {
        let own = read(Path::new("/proc/self/cgroup"));
        let mut cg = TestCgroup {
            version: 1,
            dirs: Vec::new(),
            cpu: first_cpu(),
        };
        let mut needed = vec!["cpuset"];
        if want.memory {
            needed.push("memory");
        }
        if want.quota_us.is_some() {
            needed.push("cpu");
        }
        if want.cpuacct {
            needed.push("cpuacct");
        }
        for ctrl in needed {
            let mp = mounts
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|f| f.get(2) == Some(&"cgroup") && f[3].split(',').any(|o| o == ctrl))
                .map(|f| PathBuf::from(f[1]))
                .ok_or_else(|| format!("no cgroup v2 with cpuset, memory and cpu, and no cgroup v1 {ctrl} hierarchy"))?;
            // Under this process's own cgroup there, as the kernel nests it
            // (its limits stay above ours), else under the mount's root.
            let path = own
                .lines()
                .filter_map(|l| {
                    let mut f = l.splitn(3, ':');
                    f.next();
                    f.next().zip(f.next())
                })
                .find(|(c, _)| c.split(',').any(|x| x == ctrl))
                .map(|(_, p)| p.trim_start_matches('/').to_string())
                .unwrap_or_default();
            let base = if mp.join(&path).is_dir() {
                mp.join(&path)
            } else {
                mp.clone()
            };
            let dir = base.join(name);
            if cg.dirs.contains(&dir) {
                continue; // co-mounted (cpu,cpuacct)
            }
            std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
            cg.dirs.push(dir.clone());
            match ctrl {
                "cpuset" => {
                    let cpus = read(&base.join("cpuset.cpus"));
                    let cpus = cpus
                        .split(',')
                        .flat_map(|r| match r.split_once('-') {
                            Some((a, b)) => {
                                (a.parse().unwrap_or(0)..=b.parse().unwrap_or(0)).collect()
                            }
                            None => r.parse().ok().into_iter().collect::<Vec<usize>>(),
                        })
                        .collect::<Vec<usize>>();
                    if !cpus.contains(&cg.cpu) {
                        cg.cpu = cpus.first().copied().unwrap_or(0);
                    }
                    let mems = first_of(&read(&base.join("cpuset.mems"))).unwrap_or(0);
                    write(&dir.join("cpuset.cpus"), &cg.cpu.to_string())?;
                    write(&dir.join("cpuset.mems"), &mems.to_string())?;
                }
                "memory" => {
                    write(&dir.join("memory.limit_in_bytes"), &MEM_LIMIT.to_string())?;
                    if dir.join("memory.memsw.limit_in_bytes").exists() {
                        write(
                            &dir.join("memory.memsw.limit_in_bytes"),
                            &MEM_LIMIT.to_string(),
                        )?;
                    }
                }
                "cpu" => {
                    if let Some(q) = want.quota_us {
                        write(&dir.join("cpu.cfs_period_us"), "100000")?;
                        write(&dir.join("cpu.cfs_quota_us"), &q.to_string())?;
                    }
                }
                _ => {}
            }
        }
        Ok(cg)
    }

    /// The shell lines that move the shell itself into every directory.
    fn enter(&self) -> String {
        let mut s = String::new();
        for d in &self.dirs {
            s.push_str(&format!(
                "echo $$ > '{}' || exit 97\n",
                d.join("cgroup.procs").display()
            ));
        }
        s
    }

    /// `cpuscope ARGS` inside the cgroup, to its end (killed past the limit).
    fn cpuscope(&self, args: &[&str]) -> Output {
        let script = format!(
            "{}exec timeout -s KILL {RUN_LIMIT_S} \"$0\" \"$@\"",
            self.enter()
        );
        let o = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(bin::PATH)
            .args(args)
            .output()
            .expect("spawn sh");
        assert_ne!(o.status.code(), Some(97), "could not enter the test cgroup");
        o
    }

    /// A busy loop inside the cgroup (another process of the "container").
    fn spinner(&self) -> Child {
        Command::new("sh")
            .arg("-c")
            .arg(format!("{}exec sh -c 'while :; do :; done'", self.enter()))
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn spinner")
    }

    /// What the memory controller saw: (max usage, failcnt), v1 only.
    fn memory_seen(&self) -> String {
        self.dirs
            .iter()
            .find(|d| {
                d.join("memory.max_usage_in_bytes").exists() || d.join("memory.peak").exists()
            })
            .map(|d| {
                format!(
                    "peak {} bytes, failcnt {}, events {}",
                    read(&d.join("memory.max_usage_in_bytes")) + &read(&d.join("memory.peak")),
                    read(&d.join("memory.failcnt")),
                    read(&d.join("memory.events")).replace('\n', ", ")
                )
            })
            .unwrap_or_default()
    }
}

/// The cgroup, or None after `skip_or_fail`.
fn cgroup(want: Want) -> Option<TestCgroup> {
    match TestCgroup::make(want) {
        Ok(c) => Some(c),
        Err(e) => {
            skip::skip_or_fail(&format!("tests/containers.rs: {e}"));
            None
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {:?} (signal {:?})\nstdout:\n{}\nstderr (tail):\n{}",
        o.status.code(),
        o.status.signal(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    )
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", text(o)))
}

/// The experiments `run --profile quick` runs, from `run --list`.
fn quick_experiments() -> Vec<String> {
    let o = bin::command()
        .args(["run", "--list", "--profile", "quick"])
        .output()
        .expect("run --list");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "total")
        .map(str::to_string)
        .collect()
}

/// The stored run `id` of `store`, as `show --json` gives it.
fn stored(store: &Path, id: &str) -> Value {
    let o = bin::with_store(store, &["show", id, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    json_of(&o)
}

/// The run id of `run`'s last lines (`stored as ID in STORE`).
fn run_id(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .find_map(|l| l.strip_prefix("stored as "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no 'stored as':\n{}", text(o)))
        .to_string()
}

/// Issue 34's probe: `run --profile quick` in a 256 MiB cgroup on one CPU
/// was OOM-killed (exit 137; bandwidth sized 3 arrays from the host's
/// MemAvailable). Now it completes, exit 0, every experiment present with
/// each figure measured or not available with its reason, the run stored
/// complete, its environment and verdict naming the limit.
#[test]
fn quick_run_completes_in_a_256_mib_cgroup_on_one_cpu() {
    let Some(cg) = cgroup(Want {
        memory: true,
        ..Want::default()
    }) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let store_s = store.to_str().unwrap();
    let o = cg.cpuscope(&["--store", store_s, "run", "--profile", "quick", "--no-html"]);
    let seen = cg.memory_seen();
    assert_eq!(o.status.signal(), None, "killed ({seen}):\n{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "({seen})\n{}", text(&o));
    let verdict = String::from_utf8_lossy(&o.stdout).to_string();
    let flat = verdict.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("memory limit 256 MiB ("), "{verdict}");
    assert!(
        flat.contains(&format!("cpuset {} (1 of", cg.cpu)),
        "the Machine line names the cpuset:\n{verdict}"
    );
    let run = stored(&store, &run_id(&o));
    assert_eq!(run["status"], "complete", "{}", run["environment"]);
    let env = &run["environment"];
    let notes: Vec<&str> = env["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        !notes.iter().any(|n| n.starts_with("experiment failed")),
        "{notes:?}"
    );
    assert_eq!(
        env["limits"]["memory"]["limit_bytes"].as_u64(),
        Some(MEM_LIMIT),
        "{env}"
    );
    let results = run["results"].as_array().unwrap();
    for exp in quick_experiments() {
        assert!(
            results.iter().any(|r| r["experiment"] == exp.as_str()),
            "no figure of {exp} ({seen})"
        );
    }
    for r in results {
        let measured = r["value"].is_number();
        let why = r["unavailable_reason"].as_str().unwrap_or("");
        assert!(
            measured || !why.trim().is_empty(),
            "a figure neither measured nor n/a with a reason: {r}"
        );
    }
    // A DRAM figure the limit ruled out is said in the verdict's own line,
    // not left out with its line (the levels measured are still shown).
    let limited = |exp: &str, metric: &str| {
        results.iter().any(|r| {
            r["experiment"] == exp
                && r["metric"] == metric
                && r["unavailable_reason"]
                    .as_str()
                    .is_some_and(|w| w.contains("memory limit") && w.contains("DRAM"))
        })
    };
    if limited("latency", "dram") {
        assert!(
            flat.contains("DRAM n/a (the cgroup's memory limit)"),
            "{verdict}"
        );
    }
    if limited("bandwidth", "triad") {
        assert!(
            flat.contains("Bandwidth DRAM triad n/a (the cgroup's memory limit)"),
            "{verdict}"
        );
    }
    // What did not fit says so, naming the limit, instead of being killed.
    let by_limit: Vec<&str> = results
        .iter()
        .filter_map(|r| r["unavailable_reason"].as_str())
        .filter(|w| w.contains("256 MiB memory limit"))
        .collect();
    let capped = results.iter().any(|r| {
        r["notes"].as_array().is_some_and(|n| {
            n.iter().any(|n| {
                n.as_str()
                    .is_some_and(|n| n.contains("256 MiB memory limit"))
            })
        })
    });
    assert!(
        !by_limit.is_empty() || capped,
        "no figure says the memory limit shaped it ({seen})"
    );
    println!(
        "{seen}; {} figures, {} n/a by the limit",
        results.len(),
        by_limit.len()
    );
}

/// `info` inside the cgroup, text and JSON: the cpuset, the memory limit
/// and what is left under it.
#[test]
fn info_shows_the_cpuset_and_the_memory_limit() {
    let Some(cg) = cgroup(Want {
        memory: true,
        ..Want::default()
    }) else {
        return;
    };
    let o = cg.cpuscope(&["info", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let info = json_of(&o);
    assert_eq!(
        info["cpus"]["usable"],
        cg.cpu.to_string().as_str(),
        "{}",
        info["cpus"]
    );
    let mem = &info["limits"]["memory"];
    assert_eq!(
        mem["version"].as_u64(),
        Some(u64::from(cg.version)),
        "{mem}"
    );
    assert_eq!(mem["limit_bytes"].as_u64(), Some(MEM_LIMIT), "{mem}");
    let left = mem["left_bytes"].as_u64().expect("left");
    assert!(left > 0 && left <= MEM_LIMIT, "{mem}");
    if cg.version == 1 || info["cpus"]["cgroup"].is_object() {
        assert_eq!(info["cpus"]["cgroup"]["cpus"], cg.cpu.to_string().as_str());
    }
    let o = cg.cpuscope(&["info"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    let section: String = t
        .split("Container and cgroup limits\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no limits section:\n{t}"))
        .split("\n\n")
        .next()
        .unwrap()
        .to_string();
    let flat = section.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("cgroup cpuset {} (1 of", cg.cpu)),
        "{section}"
    );
    assert!(flat.contains("memory limit 256 MiB ("), "{section}");
    assert!(flat.contains("memory left "), "{section}");
    assert!(flat.contains("= memory limit 256 MiB − usage"), "{section}");
    // `record` in the cgroup copies what was read: the archive reads back
    // the same container signs, cpuset and memory limit (usage moves).
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("in-cgroup.tar.gz");
    let o = cg.cpuscope(&["record", archive.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = bin::command()
        .args(["--sysroot", archive.to_str().unwrap(), "info", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let back = json_of(&o);
    assert_eq!(back["container"], info["container"]);
    assert_eq!(back["cpus"]["cgroup"], info["cpus"]["cgroup"]);
    for k in ["version", "cgroup", "limit_bytes", "limit_file", "left_at"] {
        assert_eq!(
            back["limits"]["memory"][k], mem[k],
            "{k}: {}",
            back["limits"]
        );
    }
    // A size the user asks for that does not fit the limit: one line.
    let o = cg.cpuscope(&["latency", "--sizes", "200M"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cpuscope: error: --sizes: 200 MiB does not fit in memory (the cgroup's 256 MiB memory limit ("),
        "{err}"
    );
}

/// A CPU quota of a tenth of a CPU (low enough that cpuscope meets it
/// even on a machine busy with other work): `info` says "0.1 CPUs of quota
/// on 1 usable CPU", and the figures it throttled while they were measured
/// are marked disturbed, with the throttled time; the run's activity has
/// the throttling.
#[test]
fn a_cpu_quota_is_shown_and_throttling_marks_figures_disturbed() {
    let Some(cg) = cgroup(Want {
        quota_us: Some(10_000),
        ..Want::default()
    }) else {
        return;
    };
    let o = cg.cpuscope(&["info"]);
    assert!(o.status.success(), "{}", text(&o));
    let flat = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("CPU quota 0.1 CPUs of quota on 1 usable CPU"),
        "{flat}"
    );
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let o = cg.cpuscope(&[
        "--store",
        store.to_str().unwrap(),
        "run",
        "--profile",
        "quick",
        "--only",
        "frequency,tlb_reach",
        "--no-html",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let verdict = String::from_utf8_lossy(&o.stdout).to_string();
    let vflat = verdict.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        vflat.contains("0.1 CPUs of quota on 1 usable CPU"),
        "{verdict}"
    );
    assert!(vflat.contains("disturbed while measured"), "{verdict}");
    let run = stored(&store, &run_id(&o));
    let disturbed: Vec<&Value> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["notes"].as_array().is_some_and(|n| {
                n.iter().any(|n| {
                    n.as_str().is_some_and(|n| {
                        n.starts_with("disturbed: the cgroup's CPU quota (0.1 CPUs")
                            && n.contains("ms held back")
                    })
                })
            })
        })
        .collect();
    assert!(
        !disturbed.is_empty(),
        "no figure marked disturbed:\n{verdict}"
    );
    let cga = &run["environment"]["activity"]["cgroup"];
    assert!(cga["throttled_periods"].as_u64().unwrap_or(0) > 0, "{cga}");
    assert!(cga["throttled_s"].as_f64().unwrap_or(0.0) > 0.0, "{cga}");
    assert!(
        (cga["cpus"].as_f64().unwrap_or(0.0) - 0.1).abs() < 1e-9,
        "{cga}"
    );
}

/// CPU time of process `pid` so far (utime + stime of /proc/PID/stat), s.
fn cpu_s_of(pid: u32) -> f64 {
    let st = read(Path::new(&format!("/proc/{pid}/stat")));
    let rest = st.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) as f64 / hz
}

/// Another process of the cgroup (a busy loop beside cpuscope, as another
/// program of the same container) counts as other programs: the run's
/// activity has its CPU time (the loop's own, within a margin) against the
/// cgroup's one CPU, and a share above 10% makes the run busy. (How much
/// the loop gets depends on what else the host runs on that CPU, so the
/// test compares with the loop's own CPU time rather than a fixed share.)
#[test]
fn the_cgroups_other_processes_count_as_other_programs() {
    let Some(cg) = cgroup(Want {
        memory: true,
        cpuacct: true,
        ..Want::default()
    }) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let mut spin = cg.spinner();
    std::thread::sleep(Duration::from_millis(200));
    let before = cpu_s_of(spin.id());
    let o = cg.cpuscope(&[
        "--store",
        store.to_str().unwrap(),
        "run",
        "--profile",
        "quick",
        "--only",
        "frequency,tlb_reach",
        "--json",
        "--no-html",
    ]);
    let spun = cpu_s_of(spin.id()) - before;
    let _ = spin.kill();
    let _ = spin.wait();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let run = json_of(&o);
    let a = &run["environment"]["activity"];
    let c = &a["cgroup"];
    let others = c["others_cpu_s"]
        .as_f64()
        .expect("the cgroup's other processes");
    assert!(
        others > 0.05 && others <= spun + 0.3 && others >= spun * 0.5 - 0.1,
        "the cgroup's others {others:.2} CPU-s vs the loop's {spun:.2} CPU-s: {a}"
    );
    assert_eq!(c["cpus"].as_f64(), Some(1.0), "{a}");
    let wall = a["wall_s"].as_f64().unwrap();
    let share = c["others_share"].as_f64().unwrap();
    assert!((share - others / wall).abs() < 1e-6, "{a}");
    if share > 0.1 {
        assert_eq!(a["busy"], true, "{a}");
    }
    assert!(a.to_string().contains("others_share"), "{a}");
}

/// The busy rule on the cgroup's part alone: a quiet machine whose
/// container's other processes took half of its one CPU is busy, and the
/// summary says so.
#[test]
fn a_busy_container_makes_a_busy_run() {
    use cpuscope::machine::activity::CpuTimes;
    use cpuscope::results::schema::{Activity, CgroupActivity};
    let a = CpuTimes::default();
    let b = CpuTimes {
        total: 12_000,
        idle: 11_900,
        steal: 0,
        own: 50,
    };
    let quiet = Activity::between(&a, &b, 60.0, 2, 100.0).unwrap();
    assert!(!quiet.busy, "{quiet:?}");
    let busy = quiet.clone().with_cgroup(CgroupActivity {
        cpus: 1.0,
        others_cpu_s: Some(30.0),
        others_share: Some(0.5),
        ..CgroupActivity::default()
    });
    assert!(busy.busy);
    assert!(
        busy.summary()
            .contains("other processes of this cgroup 30.0 CPU-s (50% of its 1 CPU)"),
        "{}",
        busy.summary()
    );
    let calm = quiet.with_cgroup(CgroupActivity {
        cpus: 1.0,
        others_cpu_s: Some(1.0),
        others_share: Some(1.0 / 60.0),
        ..CgroupActivity::default()
    });
    assert!(!calm.busy);
}

/// Runs stored before these fields existed still read: no container, no
/// limits, nothing added to their Machine line.
#[test]
fn older_runs_without_the_fields_still_read() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/vm-2cpu-quick.json");
    let text = std::fs::read_to_string(p).unwrap();
    assert!(!text.contains("\"confinement\""));
    let run: cpuscope::results::Run = serde_json::from_str(&text).expect("an older run reads");
    assert!(run.environment.container.is_none() && run.environment.limits.is_none());
    let m = run.machine_info();
    assert_eq!(m.limits, cpuscope::machine::limits::Limits::default());
    assert!(!m.container.detected);
    let v = cpuscope::report::verdict::render(
        &run,
        None,
        &cpuscope::report::verdict::Style::plain(100),
    );
    let machine = v.lines().find(|l| l.starts_with("Machine")).unwrap();
    assert!(
        !machine.contains("quota")
            && !machine.contains("memory limit")
            && !machine.contains("container"),
        "{machine}"
    );
}

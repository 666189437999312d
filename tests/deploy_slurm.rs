//! deploy/slurm for real: a single-node Slurm cluster started by the test
//! (Debian's slurm-wlm and munge: munged, slurmctld and slurmd in the
//! foreground as children of the test, with their own key, socket, ports,
//! state and spool under a temporary directory; the node line from
//! `slurmd -C`), then `sbatch --wait --array=0-1` of deploy/slurm/cpuscope.sbatch:
//!
//! 1. into a SQLite store (a shared filesystem's stand-in): two runs, tagged
//!    with the array job id, the task ids and the node name, recorded under
//!    the node name, one after the other (--exclusive);
//! 2. export mode: each task exports its run to a folder, imported afterwards.
//!
//! Needs root (slurmd runs jobs as their user; SlurmUser=root keeps the set-up
//! in one directory). Without the daemons or without root it fails under CI
//! and prints SKIP elsewhere (tests/common/skip.rs); .ci/run installs
//! slurm-wlm and munge.

#[path = "common/bin.rs"]
mod bin;
#[path = "common/skip.rs"]
mod skip;

use cpuscope::results::sqlite::SqliteStore;
use cpuscope::results::store::{RunSummary, Store};
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const TOOLS: &[&str] = &[
    "munged",
    "munge",
    "slurmctld",
    "slurmd",
    "sbatch",
    "sinfo",
    "scontrol",
];

fn find(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/bin", "/sbin"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// munged, slurmctld and slurmd, killed (and reaped) on drop.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    node: String,
    children: Vec<(&'static str, Child)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // slurmd first, munged last; each our own child, by its pid.
        for (_, c) in self.children.iter_mut().rev() {
            unsafe {
                libc::kill(c.id() as libc::pid_t, libc::SIGTERM);
            }
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = c.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Cluster {
    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn logs(&self) -> String {
        let mut s = String::new();
        for f in ["munged.log", "slurmctld.log", "slurmd.log"] {
            let t = std::fs::read_to_string(self.path(f)).unwrap_or_default();
            let tail: Vec<&str> = t.lines().rev().take(15).collect();
            s.push_str(&format!(
                "--- {f} (last lines)\n{}\n",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        s
    }

    fn cmd(&self, tool: &str) -> Command {
        let mut c = Command::new(find(tool).unwrap());
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn spawn(&mut self, name: &'static str, mut c: Command) -> Result<(), String> {
        let log = std::fs::File::create(self.path(&format!("{name}.out"))).unwrap();
        let child = c
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        self.children.push((name, child));
        Ok(())
    }

    /// Start the three daemons and wait for the node to be idle.
    fn start() -> Result<Cluster, String> {
        let dir = tempfile::Builder::new()
            .prefix("cpuscope-slurm-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let d = dir.path().to_path_buf();
        for sub in ["state", "spool", "munge"] {
            std::fs::create_dir_all(d.join(sub)).map_err(|e| e.to_string())?;
        }
        std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o700))
            .map_err(|e| e.to_string())?;
        let key = d.join("munge/munge.key");
        let mut bytes = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            .map_err(|e| e.to_string())?;
        std::fs::File::create(&key)
            .and_then(|mut f| f.write_all(&bytes))
            .map_err(|e| e.to_string())?;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400))
            .map_err(|e| e.to_string())?;
        let socket = d.join("munge/munge.socket");

        // The node as slurmd sees it (CPUs, sockets, cores, threads, memory).
        let probe = Command::new(find("slurmd").unwrap())
            .arg("-C")
            .output()
            .map_err(|e| format!("slurmd -C: {e}"))?;
        let node_line = String::from_utf8_lossy(&probe.stdout)
            .lines()
            .find(|l| l.starts_with("NodeName="))
            .map(str::to_string)
            .ok_or_else(|| format!("slurmd -C printed no NodeName line: {}", text(&probe)))?;
        let node = node_line
            .split_whitespace()
            .next()
            .and_then(|f| f.strip_prefix("NodeName="))
            .unwrap_or("localhost")
            .to_string();
        let (ctl_port, d_port) = (free_port(), free_port());
        let conf = d.join("slurm.conf");
        let p = |s: &str| d.join(s).display().to_string();
        let text_conf = format!(
            "ClusterName=cpuscopetest\n\
             SlurmctldHost={node}(127.0.0.1)\n\
             SlurmUser=root\nSlurmdUser=root\n\
             SlurmctldPort={ctl_port}\nSlurmdPort={d_port}\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={sock}\n\
             StateSaveLocation={state}\nSlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={cpid}\nSlurmdPidFile={dpid}\n\
             SlurmctldLogFile={clog}\nSlurmdLogFile={dlog}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             JobCompType=jobcomp/none\nMpiDefault=none\n\
             SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             ReturnToService=2\nSlurmctldTimeout=30\nSlurmdTimeout=30\n\
             {node_line} NodeAddr=127.0.0.1 State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            sock = socket.display(),
            state = p("state"),
            spool = p("spool"),
            cpid = p("slurmctld.pid"),
            dpid = p("slurmd.pid"),
            clog = p("slurmctld.log"),
            dlog = p("slurmd.log"),
        );
        std::fs::write(&conf, text_conf).map_err(|e| e.to_string())?;
        let mut c = Cluster {
            dir,
            conf: conf.clone(),
            node,
            children: Vec::new(),
        };

        let mut munged = Command::new(find("munged").unwrap());
        munged
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", p("munged.pid")))
            .arg(format!("--log-file={}", p("munged.log")))
            .arg(format!("--seed-file={}", p("munged.seed")));
        c.spawn("munged", munged)?;
        wait_for(Duration::from_secs(15), || socket.exists())
            .map_err(|_| format!("munged did not create its socket\n{}", c.logs()))?;

        let mut ctld = Command::new(find("slurmctld").unwrap());
        ctld.args(["-D", "-i", "-f"]).arg(&conf);
        c.spawn("slurmctld", ctld)?;
        let mut slurmd = Command::new(find("slurmd").unwrap());
        slurmd.args(["-D", "-f"]).arg(&conf).args(["-N", &c.node]);
        c.spawn("slurmd", slurmd)?;
        let idle = wait_for(Duration::from_secs(60), || {
            c.cmd("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        if idle.is_err() {
            let s = c
                .cmd("sinfo")
                .output()
                .map(|o| text(&o))
                .unwrap_or_default();
            return Err(format!(
                "the node never became idle (sinfo: {s})\n{}",
                c.logs()
            ));
        }
        Ok(c)
    }

    /// `sbatch --wait` of the cpuscope batch script with `env` exported;
    /// returns the array job id.
    fn sbatch(&self, name: &str, env: &[(&str, String)]) -> u64 {
        let mut export = "ALL".to_string();
        for (k, v) in env {
            export.push_str(&format!(",{k}={v}"));
        }
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/cpuscope.sbatch");
        let mut child = self
            .cmd("sbatch")
            .args(["--wait", "--array=0-1", "--parsable"])
            .arg(format!(
                "--output={}/{name}-%A_%a.out",
                self.dir.path().display()
            ))
            .arg(format!("--export={export}"))
            .arg(&script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start sbatch");
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(240) {
                let _ = child.kill();
                let q = self
                    .cmd("squeue")
                    .output()
                    .map(|o| text(&o))
                    .unwrap_or_default();
                panic!(
                    "sbatch --wait: no end after 240 s\nsqueue: {q}\n{}",
                    self.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let o = child.wait_with_output().unwrap();
        let outs = self.job_outputs(name);
        eprintln!(
            "sbatch {name}: {status} in {:.1} s\n{outs}",
            t.elapsed().as_secs_f64()
        );
        assert!(
            status.success(),
            "sbatch failed: {}\n{outs}\n{}",
            text(&o),
            self.logs()
        );
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .split(';')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no job id from sbatch --parsable: {}", text(&o)))
    }

    fn job_outputs(&self, name: &str) -> String {
        let mut s = String::new();
        if let Ok(rd) = std::fs::read_dir(self.dir.path()) {
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&format!("{name}-")))
                })
                .collect();
            files.sort();
            for f in files {
                s.push_str(&format!(
                    "--- {}\n{}",
                    f.display(),
                    std::fs::read_to_string(&f).unwrap_or_default()
                ));
            }
        }
        s
    }
}

fn wait_for(limit: Duration, mut ok: impl FnMut() -> bool) -> Result<(), ()> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(())
}

fn tag_value<'a>(r: &'a RunSummary, key: &str) -> Option<&'a str> {
    r.tags
        .iter()
        .find_map(|t| t.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
}

/// Two runs of one array job on the node, one after the other.
fn check_array(runs: &[RunSummary], job: u64, node: &str) {
    assert_eq!(runs.len(), 2, "{runs:?}");
    let mut tasks: Vec<&str> = runs
        .iter()
        .filter_map(|r| tag_value(r, "slurm_task"))
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["0", "1"], "{runs:?}");
    for r in runs {
        assert_eq!(
            tag_value(r, "slurm_job"),
            Some(job.to_string().as_str()),
            "{r:?}"
        );
        assert_eq!(tag_value(r, "node"), Some(node), "{r:?}");
        assert!(tag_value(r, "slurm_jobid").is_some_and(|j| j.parse::<u64>().is_ok()));
        assert_eq!(r.host, node);
        assert!(r.id.contains(&format!("-{node}-")), "{}", r.id);
    }
    let mut spans: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r.started_at.as_str(),
                r.finished_at.as_deref().unwrap_or(""),
            )
        })
        .collect();
    spans.sort();
    assert!(
        spans[1].0 >= spans[0].1,
        "exclusive tasks overlapped: {spans:?}"
    );
}

#[test]
fn batch_script_on_a_single_node_cluster() {
    if let Some(t) = TOOLS.iter().find(|t| find(t).is_none()) {
        skip::skip_or_fail(&format!(
            "{t} is not installed (apt-get install slurm-wlm munge)"
        ));
        return;
    }
    if unsafe { libc::geteuid() } != 0 {
        skip::skip_or_fail("the single-node Slurm cluster needs root (slurmd)");
        return;
    }
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => panic!("the Slurm cluster did not start: {why}"),
    };
    let bin = bin::PATH.to_string();
    let common = |extra: (&'static str, String)| {
        vec![
            ("CPUSCOPE", bin.clone()),
            ("CPUSCOPE_PROFILE", "quick".to_string()),
            ("CPUSCOPE_ONLY", "frequency".to_string()),
            ("CPUSCOPE_BATCH", "slurm-test".to_string()),
            extra,
        ]
    };

    // 1. Into a store.
    let db = cluster.path("runs.db");
    let job = cluster.sbatch(
        "store",
        &common(("CPUSCOPE_STORE", db.display().to_string())),
    );
    let runs = SqliteStore::open(&db).unwrap().list_runs().unwrap();
    check_array(&runs, job, &cluster.node);
    assert!(runs
        .iter()
        .all(|r| r.tags.iter().any(|t| t == "batch=slurm-test")
            && r.tags.iter().any(|t| t == "partition=test")));

    // 2. Export mode: documents in a folder, imported afterwards.
    let exported = cluster.path("exported");
    let job2 = cluster.sbatch(
        "export",
        &common(("CPUSCOPE_EXPORT_DIR", exported.display().to_string())),
    );
    assert_ne!(job, job2);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&exported)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with(&format!("{job2}_0-")));
    let central = cluster.path("central.db");
    let o = Command::new(&bin)
        .arg("--store")
        .arg(&central)
        .arg("import")
        .args(&files)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let runs = SqliteStore::open(&central).unwrap().list_runs().unwrap();
    check_array(&runs, job2, &cluster.node);
}

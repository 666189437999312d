//! deploy/ansible for real: `ansible-playbook` (ansible-core from PyPI, in a
//! virtual environment made by deploy/ansible/install-ansible.sh when none is
//! on PATH or in CPUSCOPE_ANSIBLE_PLAYBOOK) against an inventory of four
//! "hosts" on this machine (local connection, each with its own `--cpus`,
//! host label and work directory; one with a bad binary path), storing into
//! a PostgreSQL server started by the test (tests/common/pg.rs):
//!
//! 1. every good host's run lands, one per host per invocation, tagged with
//!    its groups, rack, inventory name and batch; the bad host is reported
//!    in the summary and the playbook exits non-zero; the runs never overlap
//!    in time (the per-machine lock: Ansible starts them together);
//! 2. a second invocation adds one more run per host;
//! 3. export mode: each host exports its run, the controller fetches and
//!    imports it into a central SQLite store (and again: runs are added);
//! 4. `cpuscope fleet` reads the batch from PostgreSQL.
//!
//! Without Ansible (and no way to install it), flock or a PostgreSQL server it
//! fails under CI and prints SKIP elsewhere (tests/common/skip.rs).

#[path = "common/bin.rs"]
mod bin;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/skip.rs"]
mod skip;

use cpuscope::results::postgres::PgStore;
use cpuscope::results::sqlite::SqliteStore;
use cpuscope::results::store::{RunSummary, Store};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// ansible-playbook, installed into a virtual environment if need be.
fn ansible_playbook() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CPUSCOPE_ANSIBLE_PLAYBOOK").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = on_path("ansible-playbook") {
        return Ok(p);
    }
    let o = Command::new("sh")
        .arg(repo().join("deploy/ansible/install-ansible.sh"))
        .output()
        .map_err(|e| format!("cannot run install-ansible.sh: {e}"))?;
    let path = String::from_utf8_lossy(&o.stdout).trim().to_string();
    if !o.status.success() || !Path::new(&path).is_file() {
        return Err(format!(
            "ansible-core could not be installed from PyPI: {}",
            pg::text(&o)
        ));
    }
    Ok(PathBuf::from(path))
}

struct Fixture {
    dir: tempfile::TempDir,
    playbook_bin: PathBuf,
}

impl Fixture {
    /// A package as scripts/package.sh makes it (same names, same layout:
    /// cpuscope-VERSION-linux-ARCH/bin/cpuscope), holding the binary under
    /// test; and, beside it, an older version's name that must not be chosen.
    fn package_dir(&self) -> PathBuf {
        let d = self.dir.path().join("packages");
        if d.is_dir() {
            return d;
        }
        // The architecture the role reads on the host (`uname -m`), which is
        // not this test's own when it runs under qemu-user (an aarch64 test
        // on an x86_64 host: its aarch64 binary runs there through binfmt).
        let uname = Command::new("uname").arg("-m").output().expect("uname -m");
        let machine = String::from_utf8_lossy(&uname.stdout).trim().to_string();
        let arch = match machine.as_str() {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        };
        let name = format!("cpuscope-{}-linux-{arch}", env!("CARGO_PKG_VERSION"));
        let tree = self.dir.path().join("package-tree");
        std::fs::create_dir_all(tree.join(&name).join("bin")).unwrap();
        std::fs::copy(bin::PATH, tree.join(&name).join("bin/cpuscope")).unwrap();
        std::fs::create_dir_all(&d).unwrap();
        let o = Command::new("tar")
            .arg("-C")
            .arg(&tree)
            .arg("-czf")
            .arg(d.join(format!("{name}.tar.gz")))
            .arg(&name)
            .output()
            .expect("tar");
        assert!(o.status.success(), "{}", pg::text(&o));
        std::fs::write(
            d.join(format!("cpuscope-0.0.1-linux-{arch}.tar.gz")),
            b"not this one",
        )
        .unwrap();
        d
    }

    fn inventory(&self, first: &str, last: &str, all: &str) -> PathBuf {
        let d = self.dir.path();
        let host = |name: &str, cpus: &str, rack: &str, extra: &str| {
            format!(
                "{name} cpuscope_host_label={name} cpuscope_cpus={cpus} rack={rack} cpuscope_dir={}{extra}\n",
                d.join("hosts").join(name).display()
            )
        };
        let text = format!(
            "[rack_a]\n{}{}[rack_b]\n{}{}\n[all:vars]\n\
             ansible_connection=local\n\
             ansible_python_interpreter={{{{ ansible_playbook_python }}}}\n\
             cpuscope_binary={}\n\
             cpuscope_controller_binary={4}\n\
             cpuscope_lock_file={}\n\
             cpuscope_profile=quick\n\
             cpuscope_only=[\"frequency\"]\n",
            host("node-a", first, "a", ""),
            host("node-b", last, "a", ""),
            // node-c gets cpuscope as users do: the package of its
            // architecture, found in cpuscope_package_dir and unpacked.
            host(
                "node-c",
                all,
                "b",
                &format!(
                    " cpuscope_binary='' cpuscope_package_dir={}",
                    self.package_dir().display()
                )
            ),
            host(
                "node-bad",
                first,
                "b",
                " cpuscope_binary=/nonexistent/bin/cpuscope"
            ),
            bin::PATH,
            d.join("cpuscope.lock").display(),
        );
        let p = d.join("inventory.ini");
        std::fs::write(&p, text).unwrap();
        p
    }

    fn play(&self, inv: &Path, extra: &[(&str, String)], limit: Option<&str>) -> Output {
        let mut c = Command::new(&self.playbook_bin);
        c.arg("-i")
            .arg(inv)
            .arg(repo().join("deploy/ansible/cpuscope.yml"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_HOST_KEY_CHECKING", "False")
            .env("ANSIBLE_LOCAL_TEMP", self.dir.path().join("ansible-tmp"))
            .env("ANSIBLE_HOME", self.dir.path().join("ansible-home"));
        for (k, v) in extra {
            c.arg("-e").arg(format!("{k}={v}"));
        }
        if let Some(l) = limit {
            c.arg("--limit").arg(l);
        }
        let t = std::time::Instant::now();
        let o = c.output().expect("cannot start ansible-playbook");
        eprintln!(
            "ansible-playbook {extra:?} limit {limit:?}: exit {:?} in {:.1} s",
            o.status.code(),
            t.elapsed().as_secs_f64()
        );
        o
    }
}

fn with_tag<'a>(runs: &'a [RunSummary], tag: &str) -> Vec<&'a RunSummary> {
    runs.iter()
        .filter(|r| r.tags.iter().any(|t| t == tag))
        .collect()
}

fn hosts_of(runs: &[&RunSummary]) -> Vec<String> {
    let mut h: Vec<String> = runs.iter().map(|r| r.host.clone()).collect();
    h.sort();
    h
}

/// The runs one after another: each starts when (or after) the one before finished.
fn never_overlap(runs: &[&RunSummary]) {
    let mut v: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r.started_at.as_str(),
                r.finished_at.as_deref().unwrap_or(""),
            )
        })
        .collect();
    v.sort();
    for w in v.windows(2) {
        assert!(
            w[1].0 >= w[0].1,
            "two runs overlapped on one machine: {:?} and {:?}",
            w[0],
            w[1]
        );
    }
}

fn summary_lines(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn playbook_runs_every_host_reports_the_failed_one_and_lands_the_rest() {
    let playbook_bin = match ansible_playbook() {
        Ok(p) => p,
        Err(why) => {
            skip::skip_or_fail(&format!("no ansible-playbook: {why}"));
            return;
        }
    };
    if on_path("flock").is_none() {
        skip::skip_or_fail("flock (util-linux) is not installed");
        return;
    }
    let srv = match pg::server() {
        Ok(s) => s,
        Err(why) => {
            skip::skip_or_fail(&format!("no PostgreSQL server: {why}"));
            return;
        }
    };
    let fx = Fixture {
        dir: tempfile::tempdir().unwrap(),
        playbook_bin,
    };
    let cpus = cpuscope::placement::current_affinity().unwrap();
    let list: Vec<usize> = cpus.iter().collect();
    let (first, last) = (list[0].to_string(), list[list.len() - 1].to_string());
    let inv = fx.inventory(&first, &last, &cpus.to_string());
    let pg = PgStore::open(&srv.url).unwrap();

    // 1. PostgreSQL mode, every host, one with a bad binary path.
    let o = fx.play(
        &inv,
        &[
            ("cpuscope_store", srv.url.clone()),
            ("cpuscope_batch", "b1".into()),
        ],
        None,
    );
    let out = summary_lines(&o);
    assert!(
        !o.status.success(),
        "a host failed: the playbook says so\n{out}"
    );
    for h in ["node-a", "node-b", "node-c"] {
        assert!(out.contains(&format!("\"{h}: ok, run ")), "{h}\n{out}");
    }
    // What cpuscope's playbook says, not ansible-core's own wording (which
    // changes between releases): the task, and the path that was missing.
    let bad = out
        .lines()
        .find(|l| l.contains("node-bad: FAILED at \\\"Copy the cpuscope binary\\\": "))
        .unwrap_or_else(|| panic!("no summary line for node-bad\n{out}"));
    assert!(bad.contains("/nonexistent/bin/cpuscope"), "{bad}");
    assert!(!bad.contains("Unexpected"), "{bad}");
    assert!(out.contains("fatal: [node-bad]: FAILED!"), "{out}");
    assert!(out.contains("(the other hosts' runs have landed)"), "{out}");
    assert!(out.contains(&format!("(stored in {})", srv.url)), "{out}");
    let all = pg.list_runs().unwrap();
    let b1 = with_tag(&all, "batch=b1");
    assert_eq!(hosts_of(&b1), ["node-a", "node-b", "node-c"], "{all:?}");
    never_overlap(&b1);
    let a = b1.iter().find(|r| r.host == "node-a").unwrap();
    for t in ["group=rack_a", "rack=a", "inventory=node-a", "batch=b1"] {
        assert!(a.tags.iter().any(|x| x == t), "{t} in {:?}", a.tags);
    }
    let doc = pg.get_run(&a.id).unwrap();
    assert_eq!(doc.options["cpus"], first.as_str());
    assert_eq!(doc.options["only"][0], "frequency");
    let c = b1.iter().find(|r| r.host == "node-c").unwrap();
    assert!(c.tags.iter().any(|x| x == "group=rack_b"));

    // 2. Again, the good hosts only: one more run each.
    let o = fx.play(
        &inv,
        &[
            ("cpuscope_store", srv.url.clone()),
            ("cpuscope_batch", "b2".into()),
            // The string forms of the lists.
            ("cpuscope_only", "frequency".into()),
            ("cpuscope_tags", "'extra-1 extra-2'".into()),
        ],
        Some("node-a,node-b,node-c"),
    );
    assert!(o.status.success(), "{}", pg::text(&o));
    let all = pg.list_runs().unwrap();
    for r in with_tag(&all, "batch=b2") {
        assert!(r.tags.iter().any(|t| t == "extra-2"), "{:?}", r.tags);
        let doc = pg.get_run(&r.id).unwrap();
        assert!(
            doc.results.iter().all(|x| x.experiment == "frequency"),
            "--only frequency"
        );
    }
    assert_eq!(
        hosts_of(&with_tag(&all, "batch=b2")),
        ["node-a", "node-b", "node-c"]
    );
    assert_eq!(all.len(), 6, "two runs per host");
    never_overlap(&all.iter().collect::<Vec<_>>());

    // 3. Export mode: export, fetch, import into a central SQLite store.
    let central = fx.dir.path().join("central.db");
    let fetched = fx.dir.path().join("fetched");
    let export = |batch: &str, limit: Option<&str>| {
        fx.play(
            &inv,
            &[
                ("cpuscope_mode", "export".to_string()),
                ("cpuscope_central_store", central.display().to_string()),
                ("cpuscope_fetch_dir", fetched.display().to_string()),
                ("cpuscope_batch", batch.to_string()),
            ],
            limit,
        )
    };
    let o = export("b3", None);
    let out = summary_lines(&o);
    assert!(
        !o.status.success(),
        "node-bad fails in export mode too\n{out}"
    );
    assert!(out.contains("node-bad: FAILED at"), "{out}");
    assert!(out.contains("Import the fetched runs"), "{out}");
    assert!(
        out.contains("ok, run ") && out.contains("(fetched to "),
        "{out}"
    );
    let lite = SqliteStore::open(&central).unwrap();
    let got = lite.list_runs().unwrap();
    assert_eq!(
        hosts_of(&with_tag(&got, "batch=b3")),
        ["node-a", "node-b", "node-c"]
    );
    for r in &got {
        let f = fetched.join(&r.host).join(format!("{}.json", r.id));
        assert!(f.is_file(), "{} fetched", f.display());
        // The host's own store holds the same run.
        let local =
            SqliteStore::open(&fx.dir.path().join("hosts").join(&r.host).join("runs.db")).unwrap();
        assert_eq!(local.get_run(&r.id).unwrap(), lite.get_run(&r.id).unwrap());
    }
    let o = export("b4", Some("node-a,node-b,node-c"));
    assert!(o.status.success(), "{}", pg::text(&o));
    let got = lite.list_runs().unwrap();
    assert_eq!(got.len(), 6, "re-running adds runs: {got:?}");
    assert_eq!(
        hosts_of(&with_tag(&got, "batch=b4")),
        ["node-a", "node-b", "node-c"]
    );
    assert_eq!(
        pg.list_runs().unwrap().len(),
        6,
        "export mode leaves PostgreSQL alone"
    );

    // 4. The fleet view of one batch, from PostgreSQL.
    let o = bin::command()
        .args(["--store", &srv.url, "fleet", "--tag", "batch=b2"])
        .output()
        .unwrap();
    let out = summary_lines(&o);
    eprintln!("{out}");
    assert!(o.status.success(), "{}", pg::text(&o));
    assert!(out.contains("Fleet: 3 host(s)"), "{out}");
    assert!(out.contains("node-a, node-b, node-c"), "{out}");
    if first != last {
        assert!(
            out.contains("CPUs used"),
            "--cpus differs between the hosts: {out}"
        );
    }
}

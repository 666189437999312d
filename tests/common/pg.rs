//! A throwaway PostgreSQL server for a test: initdb + pg_ctl into a
//! temporary directory, on a free loopback port (run as `postgres`, or
//! `nobody`, through runuser when the test runs as root), stopped on drop;
//! or the server named by CPUSCOPE_TEST_PG_URL. Used by tests/postgres.rs
//! and tests/deploy_ansible.rs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A PostgreSQL server for one test: started here (and stopped on drop), or given.
pub struct Server {
    pub url: String,
    stop: Option<(PathBuf, Option<String>, PathBuf)>, // (pg_ctl, run-as user, data dir)
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some((pg_ctl, user, data)) = &self.stop {
            let args = [
                "-D".to_string(),
                data.display().to_string(),
                "-m".into(),
                "immediate".into(),
                "-w".into(),
                "stop".into(),
            ];
            let _ = as_user(user.as_deref(), pg_ctl, &args).output();
        }
    }
}

fn as_user(user: Option<&str>, prog: &Path, args: &[String]) -> Command {
    match user {
        Some(u) => {
            let mut c = Command::new("runuser");
            c.arg("-u").arg(u).arg("--").arg(prog).args(args);
            c
        }
        None => {
            let mut c = Command::new(prog);
            c.args(args);
            c
        }
    }
}

/// Directory holding initdb, pg_ctl and postgres.
fn pg_bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut v: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .collect();
        v.sort();
        v.reverse(); // newest major version first
        dirs.extend(v);
    }
    dirs.into_iter().find(|d| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|b| d.join(b).is_file())
    })
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn uid_of(user: &str) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 3 && f[0] == user).then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
    .replace('\n', " | ")
}

/// A server to test against, or why there is none.
pub fn server() -> Result<Server, String> {
    if let Ok(url) = std::env::var("CPUSCOPE_TEST_PG_URL") {
        if !url.trim().is_empty() {
            return Ok(Server {
                url,
                stop: None,
                _dir: None,
            });
        }
    }
    let bin = pg_bin_dir().ok_or(
        "no PostgreSQL server binaries (initdb, pg_ctl, postgres) on PATH or in \
         /usr/lib/postgresql/*/bin, and CPUSCOPE_TEST_PG_URL is not set",
    )?;
    // PostgreSQL refuses to run as root: run it as `postgres` (or `nobody`).
    let is_root = unsafe { libc::geteuid() } == 0;
    let user = if is_root {
        let u = ["postgres", "nobody"]
            .into_iter()
            .find(|u| uid_of(u).is_some())
            .ok_or(
                "running as root and there is no 'postgres' or 'nobody' user to run the server as",
            )?;
        if Command::new("runuser").arg("--help").output().is_err() {
            return Err("running as root and runuser is missing".into());
        }
        Some(u.to_string())
    } else {
        None
    };
    let dir = tempfile::Builder::new()
        .prefix("cpuscope-pg-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    if let Some(u) = &user {
        let (uid, gid) = uid_of(u).ok_or("no uid")?;
        std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).map_err(|e| e.to_string())?;
    }
    let init = as_user(
        user.as_deref(),
        &bin.join("initdb"),
        &[
            "-D".into(),
            data.display().to_string(),
            "-A".into(),
            "trust".into(),
            "-U".into(),
            "cpuscope".into(),
            "-E".into(),
            "UTF8".into(),
            "--no-locale".into(),
        ],
    )
    .output()
    .map_err(|e| format!("cannot run initdb: {e}"))?;
    if !init.status.success() {
        return Err(format!("initdb failed: {}", text(&init)));
    }
    let port = free_port();
    let opts = format!(
        "-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=40",
        dir.path().display()
    );
    let log = dir.path().join("server.log");
    let start = as_user(
        user.as_deref(),
        &bin.join("pg_ctl"),
        &[
            "-D".into(),
            data.display().to_string(),
            "-o".into(),
            opts,
            "-l".into(),
            log.display().to_string(),
            "-w".into(),
            "-t".into(),
            "60".into(),
            "start".into(),
        ],
    )
    .output()
    .map_err(|e| format!("cannot run pg_ctl: {e}"))?;
    let server = Server {
        url: format!("postgres://cpuscope@127.0.0.1:{port}/postgres"),
        stop: Some((bin.join("pg_ctl"), user, data)),
        _dir: Some(dir),
    };
    if !start.status.success() {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        return Err(format!("pg_ctl start failed: {} {log}", text(&start)));
    }
    Ok(server)
}

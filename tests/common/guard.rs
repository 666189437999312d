//! A store with runs in it, and the proof that a command left them alone:
//! `PRAGMA integrity_check` says ok and `export` of every earlier run gives
//! the very bytes it gave before. Every test of tests/reliability*.rs ends
//! with [`Guarded::assert_intact`].

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The two recorded runs every guarded store starts with.
pub const FIXTURE_RUNS: [&str; 2] = [
    "tests/fixtures/runs/vm-2cpu-quick.json",
    "tests/fixtures/runs/lab-2s2c2t-quick.json",
];

/// A SQLite store in a temporary directory holding the fixture runs, and
/// each run's export as it was right after import.
pub struct Guarded {
    pub dir: tempfile::TempDir,
    pub store: PathBuf,
    exports: Vec<(String, Vec<u8>)>,
}

/// `cpuscope --store STORE ARGS...`
pub fn cpuscope(store: &Path, args: &[&str]) -> Output {
    crate::bin::with_store(store, args)
}

impl Guarded {
    pub fn new() -> Guarded {
        let dir = tempfile::tempdir().expect("tempdir");
        Guarded::in_dir(dir)
    }

    /// A guarded store named `runs.db` in `dir`.
    pub fn in_dir(dir: tempfile::TempDir) -> Guarded {
        let store = dir.path().join("runs.db");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files: Vec<String> = FIXTURE_RUNS
            .iter()
            .map(|f| root.join(f).display().to_string())
            .collect();
        let mut args = vec!["import"];
        args.extend(files.iter().map(String::as_str));
        let o = cpuscope(&store, &args);
        assert!(
            o.status.success(),
            "import fixtures: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut g = Guarded {
            dir,
            store,
            exports: Vec::new(),
        };
        g.exports = g.export_all();
        assert_eq!(g.exports.len(), 2);
        g
    }

    /// `cpuscope --store <this store> ARGS...`
    pub fn run(&self, args: &[&str]) -> Output {
        cpuscope(&self.store, args)
    }

    /// Every stored run's id and export, in `runs` order.
    fn export_all(&self) -> Vec<(String, Vec<u8>)> {
        let o = self.run(&["runs", "--json"]);
        assert!(
            o.status.success(),
            "runs --json: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("runs --json");
        doc["runs"]
            .as_array()
            .expect("runs array")
            .iter()
            .map(|r| {
                let id = r["id"].as_str().expect("id").to_string();
                let e = self.run(&["export", &id]);
                assert!(
                    e.status.success(),
                    "export {id}: {}",
                    String::from_utf8_lossy(&e.stderr)
                );
                (id, e.stdout)
            })
            .collect()
    }

    /// The store passes `PRAGMA integrity_check` and every run stored at
    /// the start exports to the same bytes as then.
    pub fn assert_intact(&self) {
        let conn = rusqlite::Connection::open_with_flags(
            &self.store,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open the store read-only");
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("integrity_check");
        assert_eq!(check, "ok", "store damaged");
        drop(conn);
        for (id, before) in &self.exports {
            let e = self.run(&["export", id]);
            assert!(
                e.status.success(),
                "run {id} lost: {}",
                String::from_utf8_lossy(&e.stderr)
            );
            assert!(e.stdout == *before, "run {id} changed");
        }
    }
}

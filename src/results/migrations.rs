//! The store's table layout, one versioned step at a time, for both backends.
//! The SQL is written once here in the SQLite spelling; the PostgreSQL backend
//! applies it through `postgres::pg_dialect` (64-bit column types).

use super::backend::Sql;
use super::codec::{Cells, Value};
use anyhow::{bail, Context as _, Result};

/// One step of the store's table layout. Steps are applied in order, each
/// in the same transaction as its `schema_migrations` row. Never edit a
/// released step: add a new one. The SQL sticks to what PostgreSQL also
/// accepts (TEXT, INTEGER, REAL, no SQLite-only column types).
pub struct Migration {
    pub version: u32,
    pub description: &'static str,
    pub sql: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "runs and results",
        sql: "
CREATE TABLE runs (
    id           TEXT PRIMARY KEY,
    schema       TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    status       TEXT NOT NULL
                 CHECK (status IN ('running', 'complete', 'partial', 'failed')),
    host         TEXT NOT NULL,
    cpu_model    TEXT,
    profile      TEXT NOT NULL,
    tags         TEXT NOT NULL,
    machine      TEXT NOT NULL,
    environment  TEXT NOT NULL,
    options      TEXT NOT NULL,
    writer_pid   INTEGER,
    writer_start INTEGER,
    writer_boot  TEXT,
    writer_host  TEXT
);
CREATE INDEX runs_started_at ON runs (started_at, id);
CREATE TABLE results (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    experiment TEXT NOT NULL,
    key        TEXT NOT NULL,
    metric     TEXT NOT NULL,
    unit       TEXT NOT NULL,
    value      REAL,
    doc        TEXT NOT NULL,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, key)
);
CREATE INDEX results_key ON results (key);
",
    },
    Migration {
        version: 2,
        description: "the order runs were stored in (latest = stored last)",
        // Runs stored before this step are numbered in start-time order,
        // the order `latest` followed until then.
        sql: "
ALTER TABLE runs ADD COLUMN stored_seq INTEGER;
UPDATE runs SET stored_seq = (
    SELECT COUNT(*) FROM runs AS o
    WHERE o.started_at < runs.started_at
       OR (o.started_at = runs.started_at AND o.id <= runs.id)
);
CREATE INDEX runs_stored_seq ON runs (stored_seq);
",
    },
    Migration {
        version: 3,
        description: "the lock a run's writer holds while it writes",
        // NULL for every run stored before: the process rule decides for
        // them (src/results/liveness.rs).
        sql: "
ALTER TABLE runs ADD COLUMN writer_lock TEXT;
",
    },
    Migration {
        version: 4,
        description: "runs by host (runs --host, compare --host, fleet at thousands of hosts)",
        // An index only: readers of older layouts select the same columns.
        sql: "
CREATE INDEX runs_host ON runs (host, started_at, id);
",
    },
];

/// Version of the table layout this build writes.
pub const STORE_SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The table that records which steps a store has had. SQLite keeps this
/// text as written (sqlite_master): leave its spacing as released.
const SCHEMA_MIGRATIONS: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
                version     INTEGER PRIMARY KEY,
                description TEXT NOT NULL,
                applied_at  TEXT NOT NULL
            )";

/// The newest step recorded in `schema_migrations` (0 when it is empty).
/// The backend checks first that the table exists (its catalogs differ).
pub(crate) fn recorded_version(sql: &mut dyn Sql) -> Result<u32> {
    let rows = sql.query("SELECT MAX(version) FROM schema_migrations", &[])?;
    let v = Cells::first(sql.shown(), rows).opt_int()?;
    // A step number past u32 is from a far newer cpuscope: refused as newer.
    Ok(v.map_or(0, |v| u32::try_from(v.max(0)).unwrap_or(u32::MAX)))
}

/// Accept a layout version this build can use (equal or older). `v` is None
/// for a database that holds other tables and no `schema_migrations`;
/// `foreign` says what it is, after "store '…' ".
pub(crate) fn check_version(shown: &str, v: Option<u32>, foreign: &str) -> Result<u32> {
    const NEWEST: u32 = STORE_SCHEMA_VERSION;
    match v {
        None => bail!("store '{shown}' {foreign}"),
        Some(v) if v > NEWEST => bail!(
            "store '{shown}' has layout version {v}, newer than this cpuscope \
             understands ({NEWEST}); upgrade cpuscope"
        ),
        Some(v) => Ok(v),
    }
}

/// Bring a store at layout version `have` up to date, inside the caller's
/// transaction: `schema_migrations` if missing, then every later step with
/// its row. `dialect` turns the SQL text into the backend's spelling.
pub(crate) fn apply(sql: &mut dyn Sql, have: u32, dialect: fn(&str) -> String) -> Result<()> {
    sql.batch(&dialect(SCHEMA_MIGRATIONS))?;
    for m in MIGRATIONS.iter().filter(|m| m.version > have) {
        sql.batch(&dialect(m.sql))
            .with_context(|| format!("migration {} ({})", m.version, m.description))?;
        sql.execute(
            "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?1, ?2, ?3)",
            &[
                Value::Int(Some(i64::from(m.version))),
                Value::text(m.description),
                Value::text(super::schema::now_rfc3339()),
            ],
        )?;
    }
    Ok(())
}

/// The SQLite spelling: the text as written.
pub(crate) fn as_written(sql: &str) -> String {
    sql.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_numbered_in_order() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{}", m.description);
        }
        assert_eq!(STORE_SCHEMA_VERSION as usize, MIGRATIONS.len());
    }

    #[test]
    fn versions() {
        assert_eq!(check_version("s", Some(0), "x").unwrap(), 0);
        let e = check_version("s", None, "is something else").unwrap_err();
        assert_eq!(e.to_string(), "store 's' is something else");
        let e = check_version("s", Some(STORE_SCHEMA_VERSION + 1), "x").unwrap_err();
        assert!(e.to_string().contains("upgrade cpuscope"), "{e}");
    }
}

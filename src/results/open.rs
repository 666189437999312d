//! Opening the store a `--store` value names: a SQLite file (the default
//! one, or a path) or a PostgreSQL database. Apart from `store.rs` (the
//! `Store` trait and the path rules) so that the trait does not import the
//! back ends that implement it.

use super::store::{default_store_path, store_path_of, NoStore, Store};
use anyhow::{anyhow, bail, Result};

/// Open the store named by `--store` for reading only: nothing is created
/// or changed (no file, no directory, no table, no journal mode). A SQLite
/// file that is read-only, or in a directory this user may not write (a
/// read-only mount, another user's store), is still read. A store that does
/// not exist yet is a [`NoStore`] error; so is an empty SQLite file.
///
/// A PostgreSQL store is opened as [`open_store`] opens it.
pub fn open_store_read(spec: Option<&str>) -> Result<Box<dyn Store>> {
    if let Some(url) = spec.filter(|s| super::postgres::is_postgres_url(s)) {
        return Ok(Box::new(super::postgres::PgStore::open(url)?));
    }
    let (path, named) = match spec {
        None => (default_store_path()?, false),
        Some(s) => (store_path_of(s)?, true),
    };
    let shown = path.display().to_string();
    match std::fs::metadata(&path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A `--store` in a directory that is not there is more likely a
            // typo than a store still to be made.
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                if named && !dir.is_dir() {
                    bail!(
                        "cannot open store '{shown}': directory '{}' does not exist",
                        dir.display()
                    );
                }
            }
            return Err(anyhow!(NoStore { shown }));
        }
        Err(e) => bail!("cannot read store '{shown}': {e}"),
    }
    Ok(Box::new(super::sqlite::SqliteStore::open_read_only(&path)?))
}

/// Open the store named by `--store` to write to it: None → the default
/// SQLite file; a path (or `sqlite://PATH`) → that SQLite file;
/// `postgres://…` or `postgresql://…` → that PostgreSQL database
/// (src/results/postgres.rs). A SQLite store (and the default store's
/// directory) is created on first use.
pub fn open_store(spec: Option<&str>) -> Result<Box<dyn Store>> {
    if let Some(url) = spec.filter(|s| super::postgres::is_postgres_url(s)) {
        return Ok(Box::new(super::postgres::PgStore::open(url)?));
    }
    let path = match spec {
        None => {
            let p = default_store_path()?;
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).map_err(|e| {
                    anyhow::anyhow!("cannot create store directory '{}': {e}", dir.display())
                })?;
            }
            p
        }
        Some(s) => store_path_of(s)?,
    };
    Ok(Box::new(super::sqlite::SqliteStore::open(&path)?))
}

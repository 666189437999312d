//! The PostgreSQL store (`--store postgres://user@host/db`): the fleet
//! store that many machines write to at once. Same tables, same columns and
//! the same migration list as the SQLite store (src/results/migrations.rs);
//! the migration SQL is applied with PostgreSQL's 64-bit column types
//! (INTEGER → BIGINT, REAL → DOUBLE PRECISION, `pg_dialect`) so that process
//! start times and figures keep their full range and precision. The store's
//! rules are backend.rs's; this file connects, runs transactions, locks,
//! and maps PostgreSQL's cells to `codec::Value`s.
//!
//! Concurrency: every write is one transaction; migrations take a
//! transaction-level advisory lock so that machines starting together do
//! not migrate twice; a write locks the run row it reads (`FOR UPDATE`) so
//! that the sequence numbers of one run never collide. Connections are plain
//! TCP or a Unix socket (no TLS in this build).

use super::backend::{Backend, Sql};
use super::codec::{Cells, Value};
use super::migrations::{self, STORE_SCHEMA_VERSION};
use anyhow::{anyhow, Result};
use postgres::types::{ToSql, Type};
use postgres::{Client, GenericClient, NoTls, Row};
use std::cell::RefCell;
use std::time::Duration;

/// Advisory lock key taken while migrating ("CPUS").
const MIGRATION_LOCK: i64 = 0x4350_5553;

/// How long to wait for the server to accept a connection, unless the URL says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct PgStore {
    client: RefCell<Client>,
    /// The URL without its password.
    shown: String,
}

/// True when a `--store` value names a PostgreSQL database.
pub fn is_postgres_url(spec: &str) -> bool {
    let lower = spec.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// A URL with any password removed (for messages and `location()`).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{user}@{host}")
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| !kv.to_ascii_lowercase().starts_with("password="))
                .collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// The migration SQL with PostgreSQL's 64-bit types: whole words `INTEGER`
/// become `BIGINT` and `REAL` becomes `DOUBLE PRECISION`; nothing else changes.
pub fn pg_dialect(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match word.as_str() {
            "INTEGER" => out.push_str("BIGINT"),
            "REAL" => out.push_str("DOUBLE PRECISION"),
            w => out.push_str(w),
        }
        word.clear();
    };
    for c in sql.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// One line from a PostgreSQL error.
fn pg_err(shown: &str, e: postgres::Error) -> anyhow::Error {
    if let Some(db) = e.as_db_error() {
        let mut s = db.message().to_string();
        if let Some(d) = db.detail() {
            s.push_str(&format!(" ({d})"));
        }
        return anyhow!(
            "store '{shown}': {} [{}]",
            s.replace('\n', " "),
            db.code().code()
        );
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(&e);
    while let Some(x) = src {
        let t = x.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = x.source();
    }
    anyhow!("store '{shown}': {}", s.replace('\n', " "))
}

/// The neutral SQL's parameters `?1`, `?2`… as PostgreSQL writes them
/// (`$1`, `$2`…). The store's SQL has no `?` anywhere else (values are
/// always parameters, never literals).
pub fn pg_params(sql: &str) -> String {
    sql.replace('?', "$")
}

/// A parameter as PostgreSQL binds it (a NULL keeps its type).
fn bind(v: &Value) -> &(dyn ToSql + Sync) {
    match v {
        Value::Text(s) => s,
        Value::Int(n) => n,
        Value::Real(x) => x,
    }
}

/// Cell `i` of a row, by its column's type: integers and booleans as
/// integers, floats as reals, anything else read as text (a type without a
/// text reading fails with the driver's message).
fn cell(r: &Row, i: usize) -> Result<Value, postgres::Error> {
    let ty = r.columns()[i].type_();
    Ok(if *ty == Type::INT8 {
        Value::Int(r.try_get(i)?)
    } else if *ty == Type::INT4 {
        Value::Int(r.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if *ty == Type::INT2 {
        Value::Int(r.try_get::<_, Option<i16>>(i)?.map(i64::from))
    } else if *ty == Type::BOOL {
        Value::Int(r.try_get::<_, Option<bool>>(i)?.map(i64::from))
    } else if *ty == Type::FLOAT8 {
        Value::Real(r.try_get(i)?)
    } else if *ty == Type::FLOAT4 {
        Value::Real(r.try_get::<_, Option<f32>>(i)?.map(f64::from))
    } else {
        Value::Text(r.try_get(i)?)
    })
}

/// Statements on the connection or on its open transaction.
struct Pg<'a, C: GenericClient> {
    client: &'a mut C,
    shown: &'a str,
    /// In a write transaction (rows read for update are locked).
    in_tx: bool,
}

impl<C: GenericClient> Sql for Pg<'_, C> {
    fn shown(&self) -> &str {
        self.shown
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client
            .batch_execute(sql)
            .map_err(|e| pg_err(self.shown, e))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let params: Vec<_> = params.iter().map(bind).collect();
        self.client
            .execute(pg_params(sql).as_str(), &params)
            .map_err(|e| pg_err(self.shown, e))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let e = |e: postgres::Error| pg_err(self.shown, e);
        let params: Vec<_> = params.iter().map(bind).collect();
        let rows = self
            .client
            .query(pg_params(sql).as_str(), &params)
            .map_err(e)?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| cell(r, i)).collect())
            .collect::<Result<_, _>>()
            .map_err(e)
    }

    fn row_lock(&self) -> &'static str {
        if self.in_tx {
            " FOR UPDATE"
        } else {
            ""
        }
    }
}

impl PgStore {
    /// Connect to the database a `postgres://` URL names and bring its
    /// tables up to date. Errors are one line and never show the password.
    pub fn open(url: &str) -> Result<PgStore> {
        let shown = redact_url(url.trim());
        let mut cfg: postgres::Config = url
            .trim()
            .parse()
            .map_err(|e| anyhow!("store '{shown}' is not a valid PostgreSQL URL: {e}"))?;
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(CONNECT_TIMEOUT);
        }
        if cfg.get_application_name().is_none() {
            cfg.application_name("cpuscope");
        }
        let client = cfg.connect(NoTls).map_err(|e| pg_err(&shown, e))?;
        let mut s = PgStore {
            client: RefCell::new(client),
            shown,
        };
        s.migrate()?;
        Ok(s)
    }

    /// The layout version: 0 for a database without cpuscope tables; None
    /// when it has a `runs` table that is not ours (no schema_migrations).
    fn schema_version(sql: &mut dyn Sql) -> Result<Option<u32>> {
        fn has(sql: &mut dyn Sql, table: &str) -> Result<bool> {
            let rows = sql.query(
                "SELECT to_regclass(CAST(?1 AS TEXT)) IS NOT NULL",
                &[Value::text(table)],
            )?;
            Ok(Cells::first(sql.shown(), rows).int()? != 0)
        }
        if has(sql, "schema_migrations")? {
            return migrations::recorded_version(sql).map(Some);
        }
        Ok(if has(sql, "runs")? { None } else { Some(0) })
    }

    fn migrate(&mut self) -> Result<()> {
        let shown = self.shown.clone();
        self.write(|sql| {
            sql.execute(
                "SELECT pg_advisory_xact_lock(?1)",
                &[Value::Int(Some(MIGRATION_LOCK))],
            )?;
            let have = migrations::check_version(
                &shown,
                Self::schema_version(sql)?,
                "has a 'runs' table that is not a cpuscope store's \
                 (no schema_migrations); use another database or schema",
            )?;
            if have < STORE_SCHEMA_VERSION {
                migrations::apply(sql, have, pg_dialect)?;
            }
            Ok(())
        })
    }
}

impl Backend for PgStore {
    fn shown(&self) -> String {
        self.shown.clone()
    }

    fn write<T>(&mut self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
        let shown = self.shown.as_str();
        let client = self.client.get_mut();
        let mut tx = client.transaction().map_err(|e| pg_err(shown, e))?;
        let out = f(&mut Pg {
            client: &mut tx,
            shown,
            in_tx: true,
        })?;
        tx.commit().map_err(|e| pg_err(shown, e))?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&mut dyn Sql) -> Result<T>) -> Result<T> {
        let mut client = self.client.borrow_mut();
        f(&mut Pg {
            client: &mut *client,
            shown: &self.shown,
            in_tx: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialect_changes_only_types() {
        let s = pg_dialect("a INTEGER, b REAL, c TEXT, INTEGERS x, real_y REAL);");
        assert_eq!(
            s,
            "a BIGINT, b DOUBLE PRECISION, c TEXT, INTEGERS x, real_y DOUBLE PRECISION);"
        );
        for m in migrations::MIGRATIONS {
            let p = pg_dialect(m.sql);
            assert!(!p.contains(" INTEGER") && !p.contains(" REAL"), "{p}");
        }
    }

    #[test]
    fn params_are_numbered_with_dollars() {
        assert_eq!(
            pg_params("UPDATE runs SET status = ?2 WHERE id = ?1 AND x = ?10"),
            "UPDATE runs SET status = $2 WHERE id = $1 AND x = $10"
        );
    }

    #[test]
    fn urls() {
        assert!(is_postgres_url("postgres://u@h/db"));
        assert!(is_postgres_url("PostgreSQL://h/db"));
        assert!(!is_postgres_url("/tmp/x.db"));
        assert_eq!(
            redact_url("postgres://u:secret@h:5432/db?sslmode=disable&password=x"),
            "postgres://u@h:5432/db?sslmode=disable"
        );
        assert_eq!(redact_url("postgres://h/db"), "postgres://h/db");
        assert_eq!(
            redact_url("postgresql://u:p@%2Ftmp:5/db"),
            "postgresql://u@%2Ftmp:5/db"
        );
    }

    #[test]
    fn bad_url_is_one_line() {
        let e = match PgStore::open("postgres://u:pw@h:notaport/db") {
            Err(e) => format!("{e:#}"),
            Ok(_) => panic!("opened a bad URL"),
        };
        assert!(!e.contains('\n') && !e.contains("pw"), "{e}");
    }
}

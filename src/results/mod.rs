//! Results: the versioned run document (schema.rs), run documents on disk
//! and the choice of runs (document.rs), and where runs are kept
//! (store.rs: the `Store` trait and the store paths; open.rs: `open_store`,
//! which picks the back end; backend.rs: the store's
//! rules over any SQL backend; codec.rs: rows ↔ runs; migrations.rs: the
//! table layout; sqlite.rs and postgres.rs: the two backends; liveness.rs:
//! the lock a run's writer holds while it writes; payload.rs: a record's
//! typed payload read back, and the error of one that does not parse).

pub mod backend;
pub mod codec;
pub mod disturbance;
pub mod document;
pub mod liveness;
pub mod migrations;
pub mod open;
pub mod payload;
pub mod postgres;
pub mod published;
pub mod schema;
pub mod sqlite;
pub mod store;

pub use open::{open_store, open_store_read};
pub use schema::{
    now_rfc3339, parse_run, result_key, validate_run, Environment, Load, ResultRecord, Run,
    RunStatus, RUN_SCHEMA,
};
pub use store::{NoStore, RunSummary, Store};

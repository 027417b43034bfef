//! The utility ledger: an append-only store of `memory_utility_observation_v0` deliveries
//! with materialized per-subject state, on SQLite (one file) or PostgreSQL (shared).
//!
//! Owns the storage model shared by both backends, the [`LedgerBackend`] trait they
//! implement ([`sqlite`], [`postgres`]), the location rules, the ledger's packets and the
//! rank prior's view of stored subjects ([`view`]); the `utility-ledger` handlers are in
//! the shell and never reach below this module's public items. The rules of utility live
//! in [`crate::utility::reducer`] only: [`engine`] hands each touched subject's
//! deliveries to the reducer and stores what it returns; nothing here re-implements
//! precedence, noisy-OR or review logic. Deliveries are never updated or deleted; every
//! other table is derived data that `verify` rebuilds and compares.
//!
//! The files, bottom up (each imports only files below it; this one declares and
//! re-exports): `rows.rs` (the stored rows, order keys, column lists) and `error.rs`
//! ([`LedgerError`]); `backend.rs` (the trait, the `ledger_meta` checks, read snapshots),
//! `location.rs` ([`Location`], the trust rule), `partition.rs` (the typed partition
//! input, [`PartitionInput`]), [`packets`] (one typed model per packet, and the reports
//! they are filled from); [`sqlite`] and [`postgres`]; [`engine`]; [`validate`] (the
//! readback of a ledger projection), [`input`] (the append input reader) and [`view`].
//!
//! Storage model (the same tables in both backends):
//! * `ledger_meta`: `ledger_schema_version` (see [`LEDGER_SCHEMA_VERSION`]);
//! * `partitions`: one row per (scope, retrieval snapshot, policy snapshot) with exact
//!   counters;
//! * `deliveries`: every valid delivery, in ledger order (`seq`), normalized;
//! * `observations`: one row per `observation_id`, keyed by (partition, subject, id):
//!   delivery and version counts, the first fingerprint, the representative delivery
//!   (smallest order key) and the reducer's inputs of it, so that a subject is recomputed
//!   from its own rows without reading deliveries;
//! * `conflict_versions`: every fingerprint of an id delivered with two or more;
//! * `subjects`: the reduced subject (compact text), its latest order key and the
//!   sequences of its latest history entries;
//! * `subject_digests`: digest → set/none subject, for `subject` look-ups (an item
//!   subject's id is computed from its digest);
//! * `batches`: one row per committed append;
//! * `ledger_meta` also holds `ledger_id` (`mul_` + 32 hex), written by the first write
//!   transaction of a ledger that has none: what a `ledger` verdict is bound to;
//! * `evaluation_verdicts` and `evaluation_verdict_partitions`: verdicts recorded by
//!   `rank-evaluate --record` ([`verdicts`]), created by the first one;
//! * `batch_provenance`: how a batch arrived ([`Provenance`]), one row per batch that did
//!   not arrive by import; created by the first such batch (a ledger without it, such as
//!   one written before provenance existed, reads as all import);
//! * `traffic_partitions`, `traffic_events`: the traffic log ([`traffic`]): recall, apply
//!   and outcome events, created by the first traffic write; never read by `verify` or
//!   `export`.

mod backend;
pub mod engine;
mod error;
pub mod input;
mod location;
pub mod packets;
mod partition;
pub mod postgres;
mod provenance;
mod rows;
pub mod sqlite;
pub mod traffic;
pub mod validate;
pub mod verdicts;
pub mod view;

pub use backend::{
    LEDGER_FORMAT, LedgerBackend, check_format, check_version, merge_observations, merge_subjects,
};
pub use error::{LedgerError, LedgerResult};
pub use location::{Location, check_sqlite_trust, default_sqlite_path};
pub use partition::{PartitionInput, check_public_safe};
pub use provenance::Provenance;
pub use rows::{
    BATCH_COLUMNS, BatchRow, COUNTER_COLUMNS, ConflictRow, Counters, DELIVERY_COLUMNS,
    DELIVERY_COLUMNS_D, DeliveryRow, HISTORY_PER_SUBJECT, LEDGER_SCHEMA_VERSION, ObservationKey,
    ObservationRow, PARTITION_COLUMNS, PartitionKey, PartitionRow, SubjectKey, SubjectRow,
    format_seqs, order_key_text, order_prefix, parse_seqs, split_order_key,
};

/// Opens the backend of a location. SQLite files are opened lazily by the backend;
/// PostgreSQL connects here.
pub fn open(location: &Location, pg_env: &postgres::PgEnv) -> LedgerResult<Box<dyn LedgerBackend>> {
    match location {
        Location::Sqlite(path) => Ok(Box::new(sqlite::SqliteLedger::new(path.clone()))),
        Location::Postgres(url) => Ok(Box::new(postgres::PgLedger::connect(url, pg_env)?)),
    }
}

#[cfg(test)]
mod props;

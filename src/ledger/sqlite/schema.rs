//! The SQLite ledger's schema and the column lists its statements and row decoders share.

/// Schema version 2. Identifiers (`muo_`, `muof_`, `mui_`/`mus_`/`mul_` + 64 hex) are
/// stored as their 32 bytes (subjects with a leading level byte `i`, `s` or `l`), whose
/// byte order is the text order; order keys as an 8-byte big-endian instant, the raw
/// `created_at` and (for subjects) `0x01` and the observation id's bytes. Observation
/// aggregates are keyed by (partition, subject, observation) and carry the reducer's
/// inputs of their representative delivery, so that a subject is recomputed from one
/// contiguous key range, without reading deliveries. Observations and subjects are
/// `WITHOUT ROWID` tables (their rows live in their primary key's b-tree, with no second
/// index to maintain); ledgers created before hold them as rowid tables with the same
/// columns and keys, which every statement reads and writes alike.
pub(super) const SCHEMA: &str = "
CREATE TABLE ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE partitions (
    partition_id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    corpus_id TEXT NOT NULL,
    surface_id TEXT NOT NULL,
    retrieval_snapshot_ref TEXT NOT NULL,
    policy_snapshot_ref TEXT NOT NULL,
    delivery_count INTEGER NOT NULL DEFAULT 0,
    accepted_count INTEGER NOT NULL DEFAULT 0,
    duplicate_count INTEGER NOT NULL DEFAULT 0,
    conflicting_count INTEGER NOT NULL DEFAULT 0,
    rejected_count INTEGER NOT NULL DEFAULT 0,
    subject_count INTEGER NOT NULL DEFAULT 0,
    item_subject_count INTEGER NOT NULL DEFAULT 0,
    set_subject_count INTEGER NOT NULL DEFAULT 0,
    none_subject_count INTEGER NOT NULL DEFAULT 0,
    conflict_subject_count INTEGER NOT NULL DEFAULT 0,
    latest_key TEXT NOT NULL DEFAULT '',
    UNIQUE (agent_id, project_id, corpus_id, surface_id, retrieval_snapshot_ref, policy_snapshot_ref)
);
CREATE TABLE batches (
    batch_id INTEGER PRIMARY KEY,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    received INTEGER NOT NULL,
    appended INTEGER NOT NULL,
    duplicate INTEGER NOT NULL,
    conflicting INTEGER NOT NULL,
    refused INTEGER NOT NULL
);
CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY,
    batch_id INTEGER NOT NULL,
    partition_id INTEGER NOT NULL,
    observation_id BLOB NOT NULL,
    application_receipt_id TEXT NOT NULL,
    memory_ref_digests TEXT NOT NULL,
    outcome_ref TEXT NOT NULL,
    utility_label INTEGER NOT NULL,
    attribution_level INTEGER NOT NULL,
    evidence_basis INTEGER NOT NULL,
    confidence REAL NOT NULL,
    reason_codes TEXT NOT NULL,
    evidence_refs TEXT NOT NULL,
    evaluator_ref TEXT NOT NULL,
    evaluation_version TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE observations (
    partition_id INTEGER NOT NULL,
    subject_id BLOB NOT NULL,
    observation_id BLOB NOT NULL,
    version_count INTEGER NOT NULL,
    delivery_count INTEGER NOT NULL,
    fingerprint BLOB NOT NULL,
    rep_seq INTEGER NOT NULL,
    rep_order BLOB NOT NULL,
    utility_label INTEGER NOT NULL,
    evidence_basis INTEGER NOT NULL,
    confidence REAL NOT NULL,
    PRIMARY KEY (partition_id, subject_id, observation_id)
) WITHOUT ROWID;
CREATE INDEX observations_conflicting ON observations (partition_id, observation_id)
    WHERE version_count > 1;
CREATE TABLE conflict_versions (
    observation_id BLOB NOT NULL,
    fingerprint BLOB NOT NULL,
    PRIMARY KEY (observation_id, fingerprint)
) WITHOUT ROWID;
CREATE TABLE subjects (
    partition_id INTEGER NOT NULL,
    subject_id BLOB NOT NULL,
    review_state TEXT NOT NULL,
    observation_count INTEGER NOT NULL,
    last_key BLOB NOT NULL,
    state TEXT NOT NULL,
    history_seqs TEXT NOT NULL,
    PRIMARY KEY (partition_id, subject_id)
) WITHOUT ROWID;
CREATE TABLE subject_digests (
    partition_id INTEGER NOT NULL,
    memory_ref_digest TEXT NOT NULL,
    subject_id BLOB NOT NULL,
    PRIMARY KEY (partition_id, memory_ref_digest, subject_id)
) WITHOUT ROWID;
";

/// The deliveries' partition index (a partition's deliveries in ledger order). Not in
/// [`SCHEMA`]: the transaction that creates the schema builds it just before its commit, in
/// one sorted pass over the deliveries it stored, instead of entry by entry as they are
/// stored (a fresh ledger's first append of 1M deliveries spent about a second more on the
/// entries than on the sorted build).
pub(super) const DELIVERY_INDEX: &str =
    "CREATE INDEX deliveries_by_partition ON deliveries (partition_id, seq);";

/// The batch-provenance table, created by the first batch that did not arrive by import
/// (inside its write transaction), so that a ledger of imports only keeps the layout it
/// had before provenance existed and older readers still read it. `kind` is `attribute`
/// or `correct`; `reference` the evaluator id or the checkpoint ref.
pub(super) const PROVENANCE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS batch_provenance (
    batch_id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    reference TEXT NOT NULL
);
";

pub(super) const SUBJECT_COLUMNS: &str = "partition_id, subject_id, review_state, observation_count, \
    last_key, state, history_seqs";

pub(super) const SUBJECT_COLUMNS_S: &str = "s.partition_id, s.subject_id, s.review_state, \
    s.observation_count, s.last_key, s.state, s.history_seqs";

pub(super) const OBSERVATION_COLUMNS: &str = "partition_id, subject_id, observation_id, version_count, \
    delivery_count, fingerprint, rep_seq, rep_order, utility_label, evidence_basis, confidence";

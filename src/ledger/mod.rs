//! The utility ledger: an append-only store of `memory_utility_observation_v0` deliveries
//! with materialized per-subject state, on SQLite (one file) or PostgreSQL (shared).
//!
//! Owns the storage model shared by both backends, the [`LedgerBackend`] trait they
//! implement ([`sqlite`], [`postgres`]), the location rules and the rank prior's view of
//! stored subjects ([`view`]); the `utility-ledger` handlers are in the shell. The rules
//! of utility live in
//! [`crate::utility::reducer`] only: [`engine`] hands each touched subject's deliveries to
//! the reducer and stores what it returns; nothing here re-implements precedence,
//! noisy-OR or review logic. Deliveries are never updated or deleted; every other table
//! is derived data that `verify` rebuilds and compares.
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
//! * `batches`: one row per committed append.

pub mod engine;
pub mod input;
pub mod packets;
pub mod postgres;
pub mod sqlite;
pub mod sqlite_file;
pub mod validate;
pub mod view;

use crate::wire::json::Text;
use std::path::PathBuf;

use crate::utility::observation::{
    AttributionLevel, EvidenceBasis, Observation, Scope, UtilityLabel,
};
use crate::wire::timestamp::{self, Instant};

/// The storage schema version this binary reads and writes. Version 1 (text ids, a
/// subject index beside the observations) is refused with [`LedgerError::OlderSchema`].
pub const LEDGER_SCHEMA_VERSION: i64 = 2;
/// Most history entries kept per subject in ledger packets.
pub const HISTORY_PER_SUBJECT: usize = 16;

/// A ledger failure. Messages say what to fix and never carry credentials or paths,
/// except [`LedgerError::Untrusted`], which names the SQLite file or directory to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// The read commands found no ledger at the location.
    #[error("utility ledger does not exist yet: utility-ledger append creates it")]
    Missing,
    /// A directory (or another non-file) sits at the ledger path.
    #[error("utility ledger location is a directory, not a ledger file")]
    NotAFile,
    /// The file is not a SQLite database, or its pages are damaged.
    #[error("utility ledger is corrupt or not a SQLite database: {0}")]
    Corrupt(String),
    /// The file fails `PRAGMA quick_check` (or a read met a damaged page): nothing is
    /// written to it.
    #[error(
        "utility ledger file is damaged, SQLite found corrupt pages ({detail}){}: copy out its readable deliveries with `utility-ledger export --salvage` and append them to a new ledger, or restore a backup",
        nothing_appended_note(.nothing_appended)
    )]
    Damaged {
        /// SQLite's account of the damage.
        detail: String,
        /// Reported by an append (which then wrote nothing).
        nothing_appended: bool,
    },
    /// A database without `ledger_meta`.
    #[error("utility ledger location holds a database that is not a utility ledger")]
    NotALedger,
    /// A ledger whose `ledger_meta` lacks a row every ledger has.
    #[error(
        "utility ledger location holds a database that is not a complete utility ledger (ledger_meta has no {0} row): restore a backup of the ledger"
    )]
    Incomplete(&'static str),
    /// Written by a newer binary.
    #[error(
        "utility ledger schema version {0} is newer than this reward-memory supports ({LEDGER_SCHEMA_VERSION}): upgrade reward-memory"
    )]
    NewerSchema(i64),
    /// Written by an older binary in a layout this one no longer reads.
    #[error(
        "utility ledger schema version {0} is older than this reward-memory reads ({LEDGER_SCHEMA_VERSION}): export it with the reward-memory that wrote it and append the export to a new ledger"
    )]
    OlderSchema(i64),
    /// A `ledger_meta` value this binary cannot read.
    #[error("utility ledger schema version is unknown: {0}")]
    UnknownSchema(String),
    /// The file, its directory or its file system refuses writes (or a read that needs
    /// one).
    #[error("utility ledger cannot be written: {0}")]
    ReadOnly(String),
    /// The disk is full; nothing of the batch was committed.
    #[error("utility ledger disk is full: the batch was not committed")]
    DiskFull,
    /// Another appender held the ledger for longer than the busy timeout.
    #[error("utility ledger is busy: another append holds it, retry later")]
    Busy,
    /// A read without locks (a ledger on a read-only location) saw the file change.
    #[error("utility ledger changed while it was read without locks: retry the read")]
    ChangedDuringRead,
    /// The PostgreSQL server could not be reached.
    #[error("PostgreSQL ledger is unreachable: {0}")]
    Unreachable(String),
    /// The PostgreSQL server refused the credentials.
    #[error("PostgreSQL ledger refused the credentials: {0}")]
    Auth(String),
    /// A bad `--ledger` value.
    #[error("{0}")]
    Location(String),
    /// Any other storage failure.
    #[error("utility ledger storage failed: {0}")]
    Storage(String),
    /// A bad request to a ledger command (flags, input shape).
    #[error("{0}")]
    Request(String),
    /// The SQLite ledger, a file beside it or a directory above it fails the trust rule
    /// ([`check_sqlite_trust`]); the message names the path and the fix.
    #[error("{0}")]
    Untrusted(String),
}

fn nothing_appended_note(nothing_appended: &bool) -> &'static str {
    if *nothing_appended {
        ", nothing was appended"
    } else {
        ""
    }
}

impl LedgerError {
    /// A damaged file, as a read or a check found it.
    pub fn damaged(detail: impl Into<String>) -> LedgerError {
        LedgerError::Damaged {
            detail: detail.into(),
            nothing_appended: false,
        }
    }
}

/// Result of a ledger operation.
pub type LedgerResult<T> = Result<T, LedgerError>;

/// Where a ledger lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://` or `postgresql://`), credentials included.
    Postgres(String),
}

impl Location {
    /// Reads a `--ledger` value: a PostgreSQL URL, else a file path (`~` expanded by the
    /// caller).
    pub fn parse(text: &str, expand: impl Fn(&str) -> PathBuf) -> LedgerResult<Location> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(LedgerError::Location(
                "--ledger must name a SQLite file or a postgres:// URL".into(),
            ));
        }
        let lower = trimmed.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return Ok(Location::Postgres(trimmed.to_owned()));
        }
        if lower.contains("://") {
            return Err(LedgerError::Location(
                "--ledger must name a SQLite file or a postgres:// URL (other URL schemes are not supported)"
                    .into(),
            ));
        }
        Ok(Location::Sqlite(expand(text)))
    }

    /// The location as a person may see it (`--detail`): a SQLite path as given, a
    /// PostgreSQL URL reduced to `scheme://host:port/database`, without the user, the
    /// password or query parameters (which may carry either).
    pub fn public_display(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => {
                let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
                let host = rest.rfind('@').map_or(rest, |at| &rest[at + 1..]);
                let host = host.split('?').next().unwrap_or_default();
                format!("{scheme}://{host}")
            }
        }
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        match self {
            Location::Sqlite(_) => "sqlite",
            Location::Postgres(_) => "postgres",
        }
    }
}

/// `<runtime_root>/reward-memory/utility-ledger.sqlite3`, next to the embedded store.
pub fn default_sqlite_path(runtime_root: &std::path::Path) -> PathBuf {
    runtime_root
        .join("reward-memory")
        .join("utility-ledger.sqlite3")
}

/// The trust rule ([`crate::io::trust`]) for a SQLite ledger at `path`, applied where the
/// location is resolved, before any backend opens the file: the file and the files SQLite
/// keeps beside it (`-wal`, `-shm`, `-journal`) must not be links, files of another user
/// (root's are fine) or writable by group or others; at the default location (`root`:
/// the runtime root) so must the directories from the runtime root down. What does not
/// exist yet passes (an append creates the file 0600 and its directories 0700); a
/// directory at the path keeps its own error ([`LedgerError::NotAFile`]).
pub fn check_sqlite_trust(
    path: &std::path::Path,
    root: Option<&std::path::Path>,
) -> LedgerResult<()> {
    use crate::io::trust::{self, Kind, Untrusted};
    let refusal = |result: Result<bool, Untrusted>| match result {
        Err(err) if err.is_refusal() => Err(LedgerError::Untrusted(err.to_string())),
        _ => Ok(()),
    };
    if let Some(root) = root
        && let Some(parent) = path.parent()
    {
        refusal(trust::check_private_dirs(
            root,
            parent,
            "utility ledger directory",
        ))?;
    }
    refusal(trust::check(path, Kind::File, "utility ledger"))?;
    for suffix in ["-wal", "-shm", "-journal", "-checked"] {
        let mut sibling = path.as_os_str().to_owned();
        sibling.push(suffix);
        refusal(trust::check(
            std::path::Path::new(&sibling),
            Kind::File,
            "utility ledger file",
        ))?;
    }
    Ok(())
}

/// The partition of an observation: its scope and its two snapshot refs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionKey {
    pub agent_id: String,
    pub project_id: String,
    pub corpus_id: String,
    pub surface_id: String,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

impl PartitionKey {
    /// The partition an observation belongs to.
    pub fn of(observation: &Observation) -> PartitionKey {
        PartitionKey {
            agent_id: observation.scope.agent_id.to_string(),
            project_id: observation.scope.project_id.to_string(),
            corpus_id: observation.scope.corpus_id.to_string(),
            surface_id: observation.scope.surface_id.to_string(),
            retrieval_snapshot_ref: observation.retrieval_snapshot_ref.to_string(),
            policy_snapshot_ref: observation.policy_snapshot_ref.to_string(),
        }
    }

    /// True when `observation` belongs to this partition.
    pub fn holds(&self, observation: &Observation) -> bool {
        self.agent_id == observation.scope.agent_id
            && self.project_id == observation.scope.project_id
            && self.corpus_id == observation.scope.corpus_id
            && self.surface_id == observation.scope.surface_id
            && self.retrieval_snapshot_ref == observation.retrieval_snapshot_ref
            && self.policy_snapshot_ref == observation.policy_snapshot_ref
    }

    /// A hash of an observation's partition fields (the same for every observation of
    /// one partition), for look-ups that do not build the key.
    pub fn hash_of(observation: &Observation) -> u64 {
        Self::hash_fields([
            &observation.scope.agent_id,
            &observation.scope.project_id,
            &observation.scope.corpus_id,
            &observation.scope.surface_id,
            &observation.retrieval_snapshot_ref,
            &observation.policy_snapshot_ref,
        ])
    }

    /// [`PartitionKey::hash_of`] of the key's own observations.
    pub fn hash_of_key(&self) -> u64 {
        Self::hash_fields([
            &self.agent_id,
            &self.project_id,
            &self.corpus_id,
            &self.surface_id,
            &self.retrieval_snapshot_ref,
            &self.policy_snapshot_ref,
        ])
    }

    fn hash_fields(fields: [&str; 6]) -> u64 {
        use std::hash::{Hash as _, Hasher as _};
        let mut h = std::hash::DefaultHasher::new();
        for f in fields {
            f.hash(&mut h);
        }
        h.finish()
    }

    /// The scope part.
    pub fn scope(&self) -> Scope {
        Scope {
            agent_id: self.agent_id.as_str().into(),
            project_id: self.project_id.as_str().into(),
            corpus_id: self.corpus_id.as_str().into(),
            surface_id: self.surface_id.as_str().into(),
        }
    }
}

/// Exact counters of one partition (also used as signed deltas).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub deliveries: i64,
    pub accepted: i64,
    pub duplicate: i64,
    pub conflicting: i64,
    pub rejected: i64,
    pub subjects: i64,
    pub item_subjects: i64,
    pub set_subjects: i64,
    pub none_subjects: i64,
    pub conflict_subjects: i64,
}

impl Counters {
    /// Adds `delta` field by field.
    pub fn add(&mut self, delta: &Counters) {
        self.deliveries += delta.deliveries;
        self.accepted += delta.accepted;
        self.duplicate += delta.duplicate;
        self.conflicting += delta.conflicting;
        self.rejected += delta.rejected;
        self.subjects += delta.subjects;
        self.item_subjects += delta.item_subjects;
        self.set_subjects += delta.set_subjects;
        self.none_subjects += delta.none_subjects;
        self.conflict_subjects += delta.conflict_subjects;
    }

    /// The counters as an array, in column order.
    pub fn to_array(&self) -> [i64; 10] {
        [
            self.deliveries,
            self.accepted,
            self.duplicate,
            self.conflicting,
            self.rejected,
            self.subjects,
            self.item_subjects,
            self.set_subjects,
            self.none_subjects,
            self.conflict_subjects,
        ]
    }

    /// Counters from an array in column order.
    pub fn from_array(a: [i64; 10]) -> Counters {
        Counters {
            deliveries: a[0],
            accepted: a[1],
            duplicate: a[2],
            conflicting: a[3],
            rejected: a[4],
            subjects: a[5],
            item_subjects: a[6],
            set_subjects: a[7],
            none_subjects: a[8],
            conflict_subjects: a[9],
        }
    }

    /// True when every counter is zero.
    pub fn is_zero(&self) -> bool {
        self.to_array().iter().all(|v| *v == 0)
    }
}

/// Column names of [`Counters`], in order.
pub const COUNTER_COLUMNS: [&str; 10] = [
    "delivery_count",
    "accepted_count",
    "duplicate_count",
    "conflicting_count",
    "rejected_count",
    "subject_count",
    "item_subject_count",
    "set_subject_count",
    "none_subject_count",
    "conflict_subject_count",
];

/// One stored partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRow {
    pub partition_id: i64,
    pub key: PartitionKey,
    pub counters: Counters,
    /// [`order_key_text`] of the partition's latest accepted observation (empty when none).
    pub latest_key: String,
}

/// One stored delivery: a normalized observation without its partition fields.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRow {
    pub seq: i64,
    pub batch_id: i64,
    pub partition_id: i64,
    pub observation_id: String,
    pub application_receipt_id: String,
    /// Sorted digests joined by `,` (no digest contains one).
    pub memory_ref_digests: String,
    pub outcome_ref: String,
    pub utility_label: String,
    pub attribution_level: String,
    pub evidence_basis: String,
    pub confidence: f64,
    /// Sorted codes joined by `,` (opaque refs never contain one).
    pub reason_codes: String,
    /// Sorted refs joined by `,`.
    pub evidence_refs: String,
    pub evaluator_ref: String,
    pub evaluation_version: String,
    pub created_at: String,
}

fn join(items: &[String]) -> String {
    items.join(",")
}

fn split(text: &str) -> Vec<String> {
    if text.is_empty() {
        Vec::new()
    } else {
        text.split(',').map(str::to_owned).collect()
    }
}

impl DeliveryRow {
    /// The row of a validated observation.
    pub fn from_observation(
        observation: &Observation,
        seq: i64,
        batch_id: i64,
        partition_id: i64,
    ) -> DeliveryRow {
        DeliveryRow {
            seq,
            batch_id,
            partition_id,
            observation_id: observation.observation_id.to_string(),
            application_receipt_id: observation.application_receipt_id.to_string(),
            memory_ref_digests: join(&observation.memory_ref_digests),
            outcome_ref: observation.outcome_ref.to_string(),
            utility_label: observation.utility_label.as_str().to_owned(),
            attribution_level: observation.attribution_level.as_str().to_owned(),
            evidence_basis: observation.evidence_basis.as_str().to_owned(),
            confidence: observation.confidence,
            reason_codes: join(&observation.reason_codes),
            evidence_refs: join(&observation.evidence_refs),
            evaluator_ref: observation.evaluator_ref.to_string(),
            evaluation_version: observation.evaluation_version.to_string(),
            created_at: observation.created_at.to_string(),
        }
    }

    /// The row of a validated observation, taking its strings (what is left of the
    /// observation is for the caller to drop, possibly on another thread).
    pub fn take_from(
        observation: &mut Observation,
        seq: i64,
        batch_id: i64,
        partition_id: i64,
    ) -> DeliveryRow {
        let take = |text: &mut Text| std::mem::take(text).into_string();
        DeliveryRow {
            seq,
            batch_id,
            partition_id,
            observation_id: take(&mut observation.observation_id),
            application_receipt_id: take(&mut observation.application_receipt_id),
            memory_ref_digests: join(&observation.memory_ref_digests),
            outcome_ref: take(&mut observation.outcome_ref),
            utility_label: observation.utility_label.as_str().to_owned(),
            attribution_level: observation.attribution_level.as_str().to_owned(),
            evidence_basis: observation.evidence_basis.as_str().to_owned(),
            confidence: observation.confidence,
            reason_codes: join(&observation.reason_codes),
            evidence_refs: join(&observation.evidence_refs),
            evaluator_ref: take(&mut observation.evaluator_ref),
            evaluation_version: take(&mut observation.evaluation_version),
            created_at: take(&mut observation.created_at),
        }
    }

    /// The observation this row stores, in its partition. `None` when a stored value is
    /// not one the validator could have produced (a damaged row).
    pub fn observation(&self, key: &PartitionKey) -> Option<Observation> {
        Some(Observation {
            observation_id: self.observation_id.as_str().into(),
            scope: key.scope(),
            application_receipt_id: self.application_receipt_id.as_str().into(),
            memory_ref_digests: split(&self.memory_ref_digests),
            retrieval_snapshot_ref: key.retrieval_snapshot_ref.as_str().into(),
            policy_snapshot_ref: key.policy_snapshot_ref.as_str().into(),
            outcome_ref: self.outcome_ref.as_str().into(),
            utility_label: UtilityLabel::parse(&self.utility_label)?,
            attribution_level: AttributionLevel::parse(&self.attribution_level)?,
            evidence_basis: EvidenceBasis::parse(&self.evidence_basis)?,
            confidence: self.confidence,
            reason_codes: split(&self.reason_codes),
            evidence_refs: split(&self.evidence_refs),
            evaluator_ref: self.evaluator_ref.as_str().into(),
            evaluation_version: self.evaluation_version.as_str().into(),
            created_at: self.created_at.as_str().into(),
            created_instant: timestamp::parse_aware(&self.created_at).ok()?,
        })
    }
}

/// The aggregate of one `observation_id`, with the reducer's inputs of its
/// representative delivery (so that a subject is recomputed from these rows alone).
#[derive(Debug, Clone, PartialEq)]
pub struct ObservationRow {
    pub observation_id: String,
    pub partition_id: i64,
    pub subject_id: String,
    /// Distinct fingerprints delivered (1 = accepted, ≥ 2 = conflicting).
    pub version_count: i64,
    pub delivery_count: i64,
    /// The fingerprint of the first delivery.
    pub fingerprint: String,
    /// The delivery with the smallest order key among the first fingerprint's.
    pub rep_seq: i64,
    /// [`order_prefix`] of the representative delivery.
    pub rep_order: String,
    /// Every fingerprint, sorted, when `version_count` ≥ 2 (else empty).
    pub fingerprints: Vec<String>,
    /// The first fingerprint's label (the same in every delivery of that fingerprint).
    pub utility_label: UtilityLabel,
    /// The first fingerprint's evidence basis.
    pub evidence_basis: EvidenceBasis,
    /// The first fingerprint's confidence.
    pub confidence: f64,
}

impl ObservationRow {
    /// What the reducer reads of this observation: its id, label, basis, confidence and
    /// the representative's `created_at` (from [`ObservationRow::rep_order`]); the other
    /// fields are left empty. `None` when `rep_order` is damaged.
    pub fn reducer_input(&self, level: AttributionLevel) -> Option<Observation> {
        let (micros, created_at) = self.rep_order.split_once('\u{1}')?;
        Some(Observation {
            observation_id: self.observation_id.as_str().into(),
            scope: Scope {
                agent_id: Text::default(),
                project_id: Text::default(),
                corpus_id: Text::default(),
                surface_id: Text::default(),
            },
            application_receipt_id: Text::default(),
            memory_ref_digests: Vec::new(),
            retrieval_snapshot_ref: Text::default(),
            policy_snapshot_ref: Text::default(),
            outcome_ref: Text::default(),
            utility_label: self.utility_label,
            attribution_level: level,
            evidence_basis: self.evidence_basis,
            confidence: self.confidence,
            reason_codes: Vec::new(),
            evidence_refs: Vec::new(),
            evaluator_ref: Text::default(),
            evaluation_version: Text::default(),
            created_at: Text::from(created_at),
            created_instant: Instant {
                micros: micros.parse().ok()?,
            },
        })
    }
}

/// (partition id, subject id, observation id): where an observation's aggregate lives.
pub type ObservationKey = (i64, String, String);

/// One reduced subject as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectRow {
    pub partition_id: i64,
    pub subject_id: String,
    pub attribution_level: String,
    pub review_state: String,
    pub observation_count: i64,
    /// [`order_key_text`] of the subject's latest observation.
    pub last_key: String,
    /// The reduced state in the compact text of [`engine::encode_state`].
    pub state: String,
    /// Sequences of the latest [`HISTORY_PER_SUBJECT`] accepted deliveries, oldest first.
    pub history_seqs: Vec<i64>,
}

/// One committed append.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchRow {
    pub batch_id: i64,
    pub first_seq: i64,
    pub last_seq: i64,
    pub received: i64,
    pub appended: i64,
    pub duplicate: i64,
    pub conflicting: i64,
    pub refused: i64,
}

/// A conflicting observation id of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictRow {
    pub observation_id: String,
    pub delivery_count: i64,
    /// Sorted; at most 17 (enough to tell whether more than 16 exist).
    pub fingerprints: Vec<String>,
    pub version_count: i64,
}

/// (partition id, subject id).
pub type SubjectKey = (i64, String);

/// A sortable text of the order key's first two parts: the UTC instant (fixed width)
/// then the raw `created_at`, separated by `\x01` (below every timestamp character), so
/// that text order equals the reducer's order.
pub fn order_prefix(instant: Instant, created_at: &str) -> String {
    format!("{:020}\u{1}{created_at}", instant.micros.max(0))
}

/// [`order_prefix`] plus the observation id: the reducer's complete order key as text.
pub fn order_key_text(observation: &Observation) -> String {
    format!(
        "{}\u{1}{}",
        order_prefix(observation.created_instant, &observation.created_at),
        observation.observation_id
    )
}

/// `(created_at, observation_id)` of an [`order_key_text`].
pub fn split_order_key(text: &str) -> Option<(String, String)> {
    let mut parts = text.splitn(3, '\u{1}');
    let _instant = parts.next()?;
    let created_at = parts.next()?;
    let id = parts.next()?;
    Some((created_at.to_owned(), id.to_owned()))
}

/// What every backend stores and reads. Write methods run inside the transaction opened
/// by [`LedgerBackend::begin_write`] (which holds the ledger's one write lock until
/// [`LedgerBackend::commit`] or [`LedgerBackend::rollback`]); read methods inside
/// [`LedgerBackend::begin_read`] (one consistent snapshot).
pub trait LedgerBackend {
    /// `sqlite` or `postgres`.
    fn backend_name(&self) -> &'static str;
    /// How many subjects an append aggregates and recomputes per storage round: small
    /// where a round trip is cheap (pages stay cached between the writes and the reads),
    /// large where it is not.
    fn subject_window(&self) -> usize;

    /// Starts the append transaction: creates the schema on a fresh ledger, checks the
    /// schema version, takes the write lock.
    fn begin_write(&mut self) -> LedgerResult<()>;
    /// Makes the transaction durable.
    fn commit(&mut self) -> LedgerResult<()>;
    /// Abandons the transaction.
    fn rollback(&mut self);
    /// Starts a read snapshot (fails with [`LedgerError::Missing`] on a ledger that was
    /// never created).
    fn begin_read(&mut self) -> LedgerResult<()>;
    /// Ends the read snapshot; fails when what was read cannot be trusted (a SQLite
    /// ledger read without locks changed meanwhile).
    fn end_read(&mut self) -> LedgerResult<()>;
    /// The storage's own integrity check, inside the read snapshot (SQLite:
    /// `PRAGMA quick_check`): `Some` of the first problems when it fails. `None` where
    /// the backend has none to run (PostgreSQL keeps its own page checksums).
    fn integrity_problem(&mut self) -> LedgerResult<Option<String>> {
        Ok(None)
    }
    /// Reads what can still be read of a damaged ledger, in its own read snapshot: every
    /// delivery after `after_seq` that the storage can read, in sequence order, with its
    /// partition key when that is readable, skipping what it cannot read. Returns the
    /// greatest sequence the ledger records having reached (`None` when no record of it
    /// is readable).
    fn salvage(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow, Option<&PartitionKey>) -> LedgerResult<()>,
    ) -> LedgerResult<Option<i64>> {
        let _ = (after_seq, visit);
        Err(LedgerError::Request(format!(
            "--salvage reads damaged SQLite ledger files; a {} ledger is repaired by its server: use export without --salvage, or restore a backup",
            self.backend_name()
        )))
    }

    /// The greatest delivery sequence (0 when empty).
    fn high_water(&mut self) -> LedgerResult<i64>;
    /// The greatest batch id (0 when none).
    fn last_batch_id(&mut self) -> LedgerResult<i64>;
    /// Records a committed batch.
    fn record_batch(&mut self, batch: &BatchRow) -> LedgerResult<()>;

    /// The partition with this key.
    fn find_partition(&mut self, key: &PartitionKey) -> LedgerResult<Option<PartitionRow>>;
    /// [`LedgerBackend::find_partition`] of several keys (one storage round where the
    /// backend can).
    fn find_partitions(
        &mut self,
        keys: &[PartitionKey],
    ) -> LedgerResult<Vec<Option<PartitionRow>>> {
        keys.iter().map(|k| self.find_partition(k)).collect()
    }
    /// Every partition, by id.
    fn partitions(&mut self) -> LedgerResult<Vec<PartitionRow>>;
    /// Creates a partition with zero counters and returns its id.
    fn insert_partition(&mut self, key: &PartitionKey) -> LedgerResult<i64>;
    /// Adds deltas to partition counters.
    fn add_counters(&mut self, deltas: &[(i64, Counters)]) -> LedgerResult<()>;
    /// Sets partitions' latest order keys.
    fn set_latest(&mut self, latest: &[(i64, String)]) -> LedgerResult<()>;
    /// The greatest subject `last_key` of a partition, read from its subjects.
    fn scan_latest(&mut self, partition_id: i64) -> LedgerResult<Option<String>>;

    /// The aggregates of these observations (those that exist), with fingerprints of
    /// conflicting ones. Keys come sorted.
    fn load_observations(&mut self, keys: &[ObservationKey]) -> LedgerResult<Vec<ObservationRow>>;
    /// Appends deliveries, upserts observation aggregates, adds conflict fingerprints.
    fn write_chunk(
        &mut self,
        deliveries: &[DeliveryRow],
        observations: &[ObservationRow],
        conflict_versions: &[(String, String)],
    ) -> LedgerResult<()>;

    /// For each key, the aggregates of its accepted observations (`version_count` 1) in
    /// `observation_id` order. A backend may leave `subject_id` and `fingerprint` empty
    /// and `delivery_count` at 1: only the reducer's inputs and `rep_seq` are read.
    fn subject_members(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Vec<ObservationRow>>>;
    /// For each key, the stored subject when it exists.
    fn load_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Option<SubjectRow>>>;
    /// Inserts or replaces subjects; `digests` are added to the digest index (set and
    /// none subjects only).
    fn put_subjects(
        &mut self,
        rows: &[SubjectRow],
        digests: &[(i64, String, String)],
    ) -> LedgerResult<()>;
    /// Removes subjects (every observation of theirs became conflicting) and their
    /// digest rows.
    fn delete_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<()>;

    /// Visits a partition's deliveries in ledger order.
    fn partition_deliveries(
        &mut self,
        partition_id: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Visits every delivery after `after_seq` in ledger order.
    fn all_deliveries(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Deliveries by sequence (those that exist), in sequence order.
    fn deliveries_by_seq(&mut self, seqs: &[i64]) -> LedgerResult<Vec<DeliveryRow>>;
    /// A page of a partition's subjects in `subject_id` order after `after`.
    fn subjects_page(
        &mut self,
        partition_id: i64,
        after: Option<&str>,
        limit: usize,
    ) -> LedgerResult<Vec<SubjectRow>>;
    /// Set and none subjects of a partition that contain `digest`.
    fn subjects_with_digest(
        &mut self,
        partition_id: i64,
        digest: &str,
    ) -> LedgerResult<Vec<SubjectRow>>;
    /// The first `limit` conflicting ids of a partition, by id.
    fn conflicts(&mut self, partition_id: i64, limit: usize) -> LedgerResult<Vec<ConflictRow>>;

    /// Visits every `observation_id` in id order: its deliveries in sequence order (empty
    /// when only an aggregate row exists) and its stored aggregate (with fingerprints).
    fn verify_observations(
        &mut self,
        visit: &mut dyn FnMut(Vec<DeliveryRow>, Option<ObservationRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Visits every subject key in (partition id, subject id) order: the representative
    /// deliveries of its accepted observations in id order, and its stored row.
    fn verify_subjects(
        &mut self,
        visit: &mut dyn FnMut(SubjectKey, Vec<DeliveryRow>, Option<SubjectRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Every digest-index row ordered by (partition id, subject id, digest).
    fn all_subject_digests(&mut self) -> LedgerResult<Vec<(i64, String, String)>>;
    /// Every batch, by id.
    fn batches(&mut self) -> LedgerResult<Vec<BatchRow>>;
}

/// Merges two streams sorted by the same key into groups: every key of either stream,
/// with the left items of that key (in stream order) and the right item when present.
/// A key out of order in either stream is a storage error.
pub fn merge_sorted<K: Ord + Clone, L, R>(
    left: impl Iterator<Item = LedgerResult<L>>,
    right: impl Iterator<Item = LedgerResult<R>>,
    left_key: impl Fn(&L) -> K,
    right_key: impl Fn(&R) -> K,
    visit: &mut dyn FnMut(K, Vec<L>, Option<R>) -> LedgerResult<()>,
) -> LedgerResult<()> {
    let mut left = left.peekable();
    let mut right = right.peekable();
    loop {
        let lk = match left.peek() {
            Some(Ok(l)) => Some(left_key(l)),
            Some(Err(_)) => {
                return Err(left
                    .next()
                    .and_then(Result::err)
                    .unwrap_or(LedgerError::Storage("read failed".into())));
            }
            None => None,
        };
        let rk = match right.peek() {
            Some(Ok(r)) => Some(right_key(r)),
            Some(Err(_)) => {
                return Err(right
                    .next()
                    .and_then(Result::err)
                    .unwrap_or(LedgerError::Storage("read failed".into())));
            }
            None => None,
        };
        let key = match (&lk, &rk) {
            (None, None) => return Ok(()),
            (Some(a), None) => a.clone(),
            (None, Some(b)) => b.clone(),
            (Some(a), Some(b)) => a.min(b).clone(),
        };
        let mut group = Vec::new();
        while let Some(Ok(l)) = left.peek() {
            let k = left_key(l);
            if k != key {
                if k < key {
                    return Err(LedgerError::Storage("rows are not in key order".into()));
                }
                break;
            }
            if let Some(Ok(l)) = left.next() {
                group.push(l);
            }
        }
        let stored = if rk.as_ref() == Some(&key) {
            right.next().transpose()?
        } else {
            None
        };
        visit(key, group, stored)?;
    }
}

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

#[cfg(test)]
mod location_tests {
    use super::Location;

    #[test]
    fn public_display_never_shows_credentials() {
        let shown = |url: &str| Location::Postgres(url.to_owned()).public_display();
        assert_eq!(
            shown("postgres://ledger:s3cret@db.internal:5432/utility_ledger"),
            "postgres://db.internal:5432/utility_ledger"
        );
        assert_eq!(
            shown("postgresql://u:p@ss@w0rd@host/db?password=x&user=y"),
            "postgresql://host/db"
        );
        assert_eq!(shown("postgres:///db?host=/run/pg"), "postgres:///db");
        assert_eq!(
            Location::Sqlite("/tmp/l.sqlite3".into()).public_display(),
            "/tmp/l.sqlite3"
        );
    }
}

//! Where the evaluation keeps utility evidence: every delivery goes through
//! [`EvaluationLedger::deliver`], and arms 3 and 4 read the reduced subjects of their
//! partition back from it.
//!
//! Two stores sit behind one type:
//! * the utility ledger ([`crate::ledger`]) on any [`LedgerBackend`], in practice
//!   a SQLite file in a private temporary directory ([`SqliteOpener`]): deliveries are
//!   appended in batches through [`engine::append`], which validates each one and keeps
//!   materialized subjects; they are read back page by page;
//! * the in-memory reducer seam ([`ReducerOpener`]): deliveries kept per partition and per
//!   `observation_id` (an identical retry is a duplicate, a different payload under one
//!   id a conflict excluded from subject state), subjects computed by the reducer's
//!   [`reduce_subject`] in the reducer's order. Tests use it to cross-check the ledger.
//!
//! Both return the projection's 19-key subject objects, so a partition within the v0 caps
//! reads back exactly the subjects `utility-project` prints (tests compare them); read
//! back under `memory_utility_reducer_v1` ([`EvaluationLedger::read_back_under`]) they are
//! the subjects of a `memory_utility_projection_v1` (the 19 keys, then `posterior`), each
//! reduced by the v1 rules from the same accepted observations. A partition's subjects
//! never include another partition's deliveries.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::ledger::engine::{self, Record};
use crate::ledger::sqlite::SqliteLedger;
use crate::ledger::{LedgerBackend, LedgerError, SubjectKey};
use crate::ranking::prior::{self as rank_prior, Partition, SubjectUtility};
use crate::utility::observation::{
    AttributionLevel, EvidenceBasis, Observation, Scope, UtilityLabel,
};
use crate::utility::reducer::v1::{reduce_subject_v1, subject_value};
use crate::utility::reducer::{Rules, reduce_subject, subject_id};
use crate::wire::json::{self, Value};

use super::error::RankEvaluateError;

/// Deliveries per append batch (one transaction each).
pub const BATCH: usize = 20_000;

/// The identity of a partition as deliveries carry it (scope ids and snapshot pair).
pub type PartitionKey = (String, String, String, String, String, String);

/// The partition key of a scope and snapshot pair.
pub fn partition_key(scope: &Scope, retrieval: &str, policy: &str) -> PartitionKey {
    (
        scope.agent_id.to_string(),
        scope.project_id.to_string(),
        scope.corpus_id.to_string(),
        scope.surface_id.to_string(),
        retrieval.to_owned(),
        policy.to_owned(),
    )
}

/// The partition key of a ranking partition.
pub fn key_of(partition: &Partition) -> PartitionKey {
    partition_key(
        &partition.scope,
        &partition.retrieval_snapshot_ref,
        &partition.policy_snapshot_ref,
    )
}

fn ledger_error(e: LedgerError) -> RankEvaluateError {
    RankEvaluateError::Ledger(e.to_string())
}

/// Delivery counters of a ledger (the ledger's meanings, summed over partitions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Every delivery received.
    pub deliveries: usize,
    /// Distinct observations accepted into subject state.
    pub accepted: usize,
    /// Extra deliveries of an already stored semantic statement.
    pub duplicate: usize,
    /// Observation ids delivered with more than one payload (excluded).
    pub conflicting: usize,
}

/// Opens fresh, empty ledgers for one evaluation run.
pub trait LedgerOpener {
    /// A new empty ledger.
    fn open(&self) -> Result<EvaluationLedger, RankEvaluateError>;
}

/// Opens SQLite ledgers as numbered files in a directory the caller owns (and removes).
pub struct SqliteOpener {
    dir: PathBuf,
    next: Cell<u64>,
}

impl SqliteOpener {
    /// Ledgers will be created inside `dir`, which must exist and be private.
    pub fn new(dir: PathBuf) -> SqliteOpener {
        SqliteOpener {
            dir,
            next: Cell::new(0),
        }
    }
}

impl LedgerOpener for SqliteOpener {
    fn open(&self) -> Result<EvaluationLedger, RankEvaluateError> {
        let n = self.next.get();
        self.next.set(n + 1);
        let path = self.dir.join(format!("ledger-{n:04}.sqlite3"));
        Ok(EvaluationLedger::with_backend(Box::new(SqliteLedger::new(
            path,
        ))))
    }
}

/// Opens in-memory reducer stores.
pub struct ReducerOpener;

impl LedgerOpener for ReducerOpener {
    fn open(&self) -> Result<EvaluationLedger, RankEvaluateError> {
        Ok(EvaluationLedger::in_memory())
    }
}

#[derive(Debug, Default)]
struct Deliveries {
    /// fingerprint → (representative with the smallest order key, count)
    versions: BTreeMap<String, (Observation, usize)>,
}

enum Store {
    Reducer(BTreeMap<PartitionKey, BTreeMap<String, Deliveries>>),
    Backend {
        backend: Box<dyn LedgerBackend>,
        pending: Vec<Vec<u8>>,
        line: u64,
    },
}

/// One ledger of an evaluation run.
pub struct EvaluationLedger {
    store: Store,
    deliveries: usize,
}

impl EvaluationLedger {
    /// A ledger on a utility-ledger backend.
    pub fn with_backend(backend: Box<dyn LedgerBackend>) -> EvaluationLedger {
        EvaluationLedger {
            store: Store::Backend {
                backend,
                pending: Vec::new(),
                line: 0,
            },
            deliveries: 0,
        }
    }

    /// The in-memory reducer seam.
    pub fn in_memory() -> EvaluationLedger {
        EvaluationLedger {
            store: Store::Reducer(BTreeMap::new()),
            deliveries: 0,
        }
    }

    /// The name of the storage, as the verdict reports it.
    pub fn backend(&self) -> &'static str {
        match &self.store {
            Store::Reducer(_) => "reducer_in_memory",
            Store::Backend { backend, .. } => backend.backend_name(),
        }
    }

    /// Sends one delivery to the ledger (the only way evidence enters it).
    pub fn deliver(&mut self, observation: &Observation) -> Result<(), RankEvaluateError> {
        self.deliveries += 1;
        match &mut self.store {
            Store::Reducer(partitions) => {
                let key = partition_key(
                    &observation.scope,
                    &observation.retrieval_snapshot_ref,
                    &observation.policy_snapshot_ref,
                );
                let fingerprint = observation.fingerprint();
                let by_id = partitions.entry(key).or_default();
                let entry = by_id
                    .entry(observation.observation_id.to_string())
                    .or_default();
                match entry.versions.get_mut(&fingerprint) {
                    Some((prior, count)) => {
                        *count += 1;
                        if observation.order_key() < prior.order_key() {
                            *prior = observation.clone();
                        }
                    }
                    None => {
                        entry.versions.insert(fingerprint, (observation.clone(), 1));
                    }
                }
                Ok(())
            }
            Store::Backend { pending, .. } => {
                pending.push(json::dumps(&observation.to_value(), engine::COMPACT).into_bytes());
                if pending.len() >= BATCH {
                    return self.flush();
                }
                Ok(())
            }
        }
    }

    /// Commits pending deliveries as one append batch; every delivery must be accepted
    /// by the ledger's validator.
    pub fn flush(&mut self) -> Result<(), RankEvaluateError> {
        let Store::Backend {
            backend,
            pending,
            line,
        } = &mut self.store
        else {
            return Ok(());
        };
        if pending.is_empty() {
            return Ok(());
        }
        let start = *line;
        *line += pending.len() as u64;
        let records = std::mem::take(pending)
            .into_iter()
            .enumerate()
            .map(move |(i, bytes)| {
                Ok(Record::Item {
                    line: start + i as u64 + 1,
                    bytes,
                })
            });
        let report = engine::append(backend.as_mut(), Box::new(records)).map_err(ledger_error)?;
        if report.batch.refused > 0 {
            let first = report
                .refusals
                .first()
                .map(|r| r.error.clone())
                .unwrap_or_default();
            return Err(RankEvaluateError::Ledger(format!(
                "the ledger refused {} deliveries: {first}",
                report.batch.refused
            )));
        }
        Ok(())
    }

    /// Every partition's reduced subjects (the projection's subject objects, in its
    /// order) and the summed counters. Pending deliveries are committed first.
    pub fn read_back(
        &mut self,
    ) -> Result<(BTreeMap<PartitionKey, Vec<Value>>, Counters), RankEvaluateError> {
        self.read_back_under(Rules::V0)
    }

    /// [`EvaluationLedger::read_back`] with the subjects reduced by `rules`: v0's, or
    /// `memory_utility_reducer_v1`'s (with its parameters) from the same accepted
    /// observations. The counters do not depend on the rules.
    pub fn read_back_under(
        &mut self,
        rules: Rules,
    ) -> Result<(BTreeMap<PartitionKey, Vec<Value>>, Counters), RankEvaluateError> {
        self.flush()?;
        let mut out = BTreeMap::new();
        let mut counters = Counters {
            deliveries: self.deliveries,
            ..Counters::default()
        };
        match &mut self.store {
            Store::Reducer(partitions) => {
                for (key, by_id) in partitions.iter() {
                    for d in by_id.values() {
                        counters.duplicate +=
                            d.versions.values().map(|(_, n)| n - 1).sum::<usize>();
                        if d.versions.len() > 1 {
                            counters.conflicting += 1;
                        } else {
                            counters.accepted += 1;
                        }
                    }
                    out.insert(key.clone(), reduce_partition(by_id, rules));
                }
            }
            Store::Backend { backend, .. } => {
                if self.deliveries == 0 {
                    return Ok((out, counters));
                }
                backend.begin_read().map_err(ledger_error)?;
                let result = read_backend(backend.as_mut(), &mut out, &mut counters, rules);
                let ended = backend.end_read();
                result?;
                ended.map_err(ledger_error)?;
            }
        }
        Ok((out, counters))
    }
}

fn read_backend(
    backend: &mut dyn LedgerBackend,
    out: &mut BTreeMap<PartitionKey, Vec<Value>>,
    counters: &mut Counters,
    rules: Rules,
) -> Result<(), RankEvaluateError> {
    let to_usize = |v: i64| usize::try_from(v).unwrap_or(0);
    for row in backend.partitions().map_err(ledger_error)? {
        counters.accepted += to_usize(row.counters.accepted);
        counters.duplicate += to_usize(row.counters.duplicate);
        counters.conflicting += to_usize(row.counters.conflicting);
        let k = &row.key;
        let key = (
            k.agent_id.clone(),
            k.project_id.clone(),
            k.corpus_id.clone(),
            k.surface_id.clone(),
            k.retrieval_snapshot_ref.clone(),
            k.policy_snapshot_ref.clone(),
        );
        // Pages come in subject_id order; the projection lists subjects by (level, digest
        // tuple), or (level, subject id) for `none`, which is the order kept here.
        let mut subjects: Vec<((String, Vec<String>), Value)> = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = backend
                .subjects_page(row.partition_id, after.as_deref(), 1000)
                .map_err(ledger_error)?;
            let Some(last) = page.last() else {
                break;
            };
            after = Some(last.subject_id.clone());
            // Under v1, the accepted observations of the page's subjects, in one round.
            let members = match rules {
                Rules::V0 => Vec::new(),
                Rules::V1(_) => {
                    let keys: Vec<SubjectKey> = page
                        .iter()
                        .map(|s| (row.partition_id, s.subject_id.clone()))
                        .collect();
                    backend.subject_members(&keys).map_err(ledger_error)?
                }
            };
            for (i, subject) in page.iter().enumerate() {
                let state = crate::ledger::engine::decode_state(subject).ok_or_else(|| {
                    RankEvaluateError::Ledger(format!(
                        "the stored state of subject {} is damaged",
                        subject.subject_id
                    ))
                })?;
                let tail = if subject.attribution_level == "none" {
                    vec![subject.subject_id.clone()]
                } else {
                    state.memory_ref_digests.clone()
                };
                let value = match rules {
                    Rules::V0 => state.to_value(),
                    Rules::V1(params) => {
                        let own = members.get(i).map_or(&[][..], Vec::as_slice);
                        let (v1, posterior) =
                            engine::upgrade_stored_v1(&state, own, params).map_err(ledger_error)?;
                        subject_value(&v1, &posterior)
                    }
                };
                subjects.push(((subject.attribution_level.clone(), tail), value));
            }
        }
        subjects.sort_by(|a, b| a.0.cmp(&b.0));
        out.insert(key, subjects.into_iter().map(|(_, v)| v).collect());
    }
    Ok(())
}

type Groups<'a> = BTreeMap<(&'static str, Vec<String>), (String, Vec<&'a Observation>)>;

/// Accepted observations (ordered by id, conflicts excluded), grouped by subject exactly
/// as the reducer groups them, each reduced by [`reduce_subject`] (or, under the v1
/// rules, [`reduce_subject_v1`]).
fn reduce_partition(by_id: &BTreeMap<String, Deliveries>, rules: Rules) -> Vec<Value> {
    let mut groups: Groups<'_> = BTreeMap::new();
    for deliveries in by_id.values() {
        if deliveries.versions.len() != 1 {
            continue;
        }
        let Some((observation, _)) = deliveries.versions.values().next() else {
            continue;
        };
        let id = subject_id(observation);
        let level = observation.attribution_level;
        let tail = if level == AttributionLevel::None {
            vec![id.clone()]
        } else {
            observation.memory_ref_digests.clone()
        };
        groups
            .entry((level.as_str(), tail))
            .or_insert_with(|| (id, Vec::new()))
            .1
            .push(observation);
    }
    groups
        .values()
        .filter_map(|(id, members)| {
            let first = members.first()?;
            let (level, digests) = (first.attribution_level, &first.memory_ref_digests);
            Some(match rules {
                Rules::V0 => reduce_subject(id, level, digests, members).to_value(),
                Rules::V1(params) => {
                    let (state, posterior) = reduce_subject_v1(id, level, digests, members, params);
                    subject_value(&state, &posterior)
                }
            })
        })
        .collect()
}

/// What the evaluation reads of one reduced subject object.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectFacts {
    /// What the rank prior reads (`effective_support` as a projection defines it:
    /// observations at the effective tier carrying the effective label).
    pub utility: SubjectUtility,
    /// `evaluator_inference` observations per label, in `UtilityLabel::ALL` order.
    pub inference_labels: [usize; 4],
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Reads one subject object of a projection (or of the ledger).
pub fn subject_facts(subject: &Value) -> Result<SubjectFacts, RankEvaluateError> {
    let utility = rank_prior::subject_from_packet(subject)
        .map_err(|e| RankEvaluateError::Ledger(format!("a stored subject is invalid: {e}")))?;
    let mut inference_labels = [0usize; 4];
    for pair in subject
        .get("evidence_label_summary")
        .and_then(Value::as_array)
        .unwrap_or(&[])
    {
        let count = match pair.get("observation_count") {
            Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        let basis = EvidenceBasis::parse(text(pair, "evidence_basis"));
        if let (Some(EvidenceBasis::EvaluatorInference), Some(label)) =
            (basis, UtilityLabel::parse(text(pair, "utility_label")))
        {
            inference_labels[label.index()] += count;
        }
    }
    Ok(SubjectFacts {
        utility,
        inference_labels,
    })
}

/// True for an observation that arm 4 leaves out of its ledger.
pub fn is_inference(observation: &Observation) -> bool {
    observation.evidence_basis == EvidenceBasis::EvaluatorInference
}

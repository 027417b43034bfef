//! The ledger's reads of one partition: its projection (the exact `utility-project`
//! packet within the v0 caps, else a paged `memory_utility_ledger_projection_v0`) and
//! the subjects that contain given digests. A partition whose reducer version names
//! `memory_utility_reducer_v1` is read under the v1 rules from the same rows: within the
//! caps the `memory_utility_projection_v1` of its deliveries, else a paged
//! `memory_utility_ledger_projection_v1`, and `memory_utility_ledger_subject_v1`; each
//! subject's v1 state is reduced from its stored observation aggregates as it is read.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::utility::observation::{AttributionLevel, Observation};
use crate::utility::reducer::{
    self, MAX_CONFLICT_FINGERPRINTS, MAX_OBSERVATIONS, MAX_REJECTIONS, MAX_SUBJECTS,
    ProjectionRequest, ReducerContext, Rules,
};
use crate::wire::json::{self, Value};

use super::super::backend::{LedgerBackend, with_read};
use super::super::error::{LedgerError, LedgerResult};
use super::super::packets::{
    self, LedgerProjectionPacket, LedgerProjectionPacketV1, LedgerSubjectPacket,
    LedgerSubjectPacketV1, Page, StoredSubject,
};
use super::super::provenance::Provenance;
use super::super::rows::{
    ConflictRow, Counters, DeliveryRow, PartitionKey, PartitionRow, SubjectKey, SubjectRow,
    split_order_key,
};
use super::state::{decode_state, reduce_members_v1};

/// A page request of the ledger projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paging {
    pub limit: usize,
    pub after: Option<String>,
}

/// What `project` prints: the exact `utility-project` packet within the v0 caps, else a
/// page of the ledger projection.
#[derive(Debug, Clone, PartialEq)]
pub enum Projected {
    /// The `memory_utility_projection_v0` packet `utility-project` prints for the
    /// partition's deliveries (LoopX's bytes, from the reducer).
    V0(Value),
    /// A `memory_utility_ledger_projection_v0` page.
    Page(Box<LedgerProjectionPacket>),
    /// The `memory_utility_projection_v1` packet of a v1 partition's deliveries.
    V1(Value),
    /// A `memory_utility_ledger_projection_v1` page.
    PageV1(Box<LedgerProjectionPacketV1>),
}

impl Projected {
    /// The packet as the ordered value the output layer prints.
    pub fn into_value(self) -> LedgerResult<Value> {
        match self {
            Projected::V0(value) | Projected::V1(value) => Ok(value),
            Projected::Page(page) => page.into_value(),
            Projected::PageV1(page) => page.into_value(),
        }
    }
}

/// The subject rules a context's reducer version names; a version that starts like a
/// v1 name but is none is a request error.
pub fn rules_of(context: &ReducerContext) -> LedgerResult<Rules> {
    Rules::of(&context.reducer_version).map_err(|e| LedgerError::Request(e.to_string()))
}

/// True when `utility-project` would reduce this partition (not refuse it at a cap).
pub fn within_v0_caps(counters: &Counters) -> bool {
    counters.deliveries <= MAX_OBSERVATIONS as i64 && counters.subjects <= MAX_SUBJECTS as i64
}

/// Projects one partition: the exact `utility-project` packet within the v0 caps (and
/// without paging), else a `memory_utility_ledger_projection_v0` page.
pub fn project(
    backend: &mut dyn LedgerBackend,
    context: &ReducerContext,
    paging: Option<&Paging>,
) -> LedgerResult<Projected> {
    let rules = rules_of(context)?;
    with_read(backend, |backend| {
        let key = PartitionKey::of_context(context);
        let partition = backend.find_partition(&key)?;
        let counters = partition.as_ref().map(|p| p.counters).unwrap_or_default();
        if let Rules::V1(_) = rules {
            if paging.is_none() && within_v0_caps(&counters) {
                let mut observations: Vec<Observation> = Vec::new();
                if let Some(p) = &partition {
                    backend.partition_deliveries(p.partition_id, &mut |row| {
                        observations.push(row.observation(&key).ok_or_else(|| {
                            LedgerError::Storage(format!("delivery {} is damaged", row.seq))
                        })?);
                        Ok(())
                    })?;
                }
                return reducer::project_with(context, &observations, rules)
                    .map(|projection| Projected::V1(projection.to_value()))
                    .map_err(|e| {
                        LedgerError::Storage(format!("projection failed its readback: {e}"))
                    });
            }
            let paging = paging.cloned().unwrap_or(Paging {
                limit: packets::MAX_PAGE,
                after: None,
            });
            let parts = page_parts(backend, context, partition.as_ref(), &paging, rules)?;
            return Ok(Projected::PageV1(Box::new(
                LedgerProjectionPacketV1::new_v1(
                    context,
                    &parts.counters,
                    parts.page,
                    parts.subjects,
                    parts.conflicts,
                    parts.last,
                ),
            )));
        }
        if paging.is_none() && within_v0_caps(&counters) {
            let mut values = Vec::new();
            if let Some(p) = &partition {
                backend.partition_deliveries(p.partition_id, &mut |row| {
                    let observation = row.observation(&key).ok_or_else(|| {
                        LedgerError::Storage(format!("delivery {} is damaged", row.seq))
                    })?;
                    values.push(observation.to_value());
                    Ok(())
                })?;
            }
            return v0_projection(context, &values).map(Projected::V0);
        }
        let paging = paging.cloned().unwrap_or(Paging {
            limit: packets::MAX_PAGE,
            after: None,
        });
        let parts = page_parts(backend, context, partition.as_ref(), &paging, rules)?;
        Ok(Projected::Page(Box::new(LedgerProjectionPacket::new(
            context,
            &parts.counters,
            parts.page,
            parts.subjects,
            parts.conflicts,
            parts.last,
        ))))
    })
}

/// `utility-project` over `observations` in this context.
pub fn v0_projection(context: &ReducerContext, observations: &[Value]) -> LedgerResult<Value> {
    let scope = Value::Object(context.scope.to_map());
    let retrieval = Value::from(context.retrieval_snapshot_ref.as_str());
    let policy = Value::from(context.policy_snapshot_ref.as_str());
    let version = Value::from(context.reducer_version.as_str());
    reducer::reduce(&ProjectionRequest {
        observations,
        scope: &scope,
        retrieval_snapshot_ref: &retrieval,
        policy_snapshot_ref: &policy,
        reducer_version: &version,
        previous_projection: None,
    })
    .map_err(|e| LedgerError::Storage(format!("projection failed its readback: {e}")))
}

/// A stored subject with its bounded history, as ledger packets print it; with
/// `with_provenance` (the subject packet) each history entry also says how its delivery
/// arrived (`provenance`, see [`Provenance`]).
fn subject_with_history(
    backend: &mut dyn LedgerBackend,
    partition: &PartitionKey,
    row: &SubjectRow,
    with_provenance: bool,
) -> LedgerResult<StoredSubject> {
    let state = decode_state(row).ok_or_else(|| {
        LedgerError::Storage(format!("subject {} state is damaged", row.subject_id))
    })?;
    let found = backend.deliveries_by_seq(&row.history_seqs)?;
    let by_seq: HashMap<i64, &DeliveryRow> = found.iter().map(|d| (d.seq, d)).collect();
    let provenance: HashMap<i64, Provenance> = if with_provenance {
        let batches: Vec<i64> = found.iter().map(|d| d.batch_id).collect();
        backend.batch_provenance(&batches)?.into_iter().collect()
    } else {
        HashMap::new()
    };
    let mut history = Vec::with_capacity(row.history_seqs.len());
    for seq in &row.history_seqs {
        let observation = by_seq
            .get(seq)
            .and_then(|d| d.observation(partition))
            .ok_or_else(|| {
                LedgerError::Storage(format!(
                    "history delivery {seq} of {} is missing",
                    row.subject_id
                ))
            })?;
        let mut entry = reducer::history_entry(&observation, &row.subject_id);
        if with_provenance
            && let (Value::Object(map), Some(delivery)) = (&mut entry, by_seq.get(seq))
        {
            let arrived = provenance
                .get(&delivery.batch_id)
                .unwrap_or(&Provenance::Import);
            map.insert("provenance", arrived.to_value());
        }
        history.push(entry);
    }
    let history_truncated = row.observation_count > history.len() as i64;
    Ok(StoredSubject {
        state,
        posterior: None,
        history,
        history_truncated,
    })
}

/// Replaces each stored subject's v0 state by its v1 state under `rules` (one read of
/// their observation aggregates); nothing changes under the v0 rules.
fn apply_rules(
    backend: &mut dyn LedgerBackend,
    partition_id: i64,
    subjects: &mut [StoredSubject],
    rules: Rules,
) -> LedgerResult<()> {
    let Rules::V1(params) = rules else {
        return Ok(());
    };
    let keys: Vec<SubjectKey> = subjects
        .iter()
        .map(|s| (partition_id, s.state.subject_id.clone()))
        .collect();
    let members = backend.subject_members(&keys)?;
    for ((subject, key), rows) in subjects.iter_mut().zip(&keys).zip(members) {
        let (state, posterior) =
            reduce_members_v1(key, &subject.state.memory_ref_digests, &rows, params)?.ok_or_else(
                || LedgerError::Storage(format!("subject {} has no accepted observation", key.1)),
            )?;
        subject.state = state;
        subject.posterior = Some(posterior);
    }
    Ok(())
}

fn conflict_record(c: &ConflictRow) -> Value {
    let fingerprints: Vec<&String> = c
        .fingerprints
        .iter()
        .take(MAX_CONFLICT_FINGERPRINTS)
        .collect();
    Value::Object(crate::obj! {
        "observation_id" => c.observation_id.as_str(),
        "reason_codes" => json::str_list(&[reducer::reason::CONFLICTING_DELIVERY]),
        "delivery_count" => c.delivery_count,
        "delivery_fingerprints" => json::str_list(&fingerprints),
        "delivery_fingerprints_truncated" => c.version_count > MAX_CONFLICT_FINGERPRINTS as i64,
        "quarantine_proposed" => true,
        "automatic_deletion" => false,
        "action_authority_granted" => false,
    })
}

/// What a page of the ledger projection is built from.
struct PageParts {
    counters: Counters,
    page: Page,
    subjects: Vec<StoredSubject>,
    conflicts: Vec<Value>,
    last: Option<(String, String)>,
}

fn page_parts(
    backend: &mut dyn LedgerBackend,
    context: &ReducerContext,
    partition: Option<&PartitionRow>,
    paging: &Paging,
    rules: Rules,
) -> LedgerResult<PageParts> {
    let key = PartitionKey::of_context(context);
    let counters = partition.map(|p| p.counters).unwrap_or_default();
    let mut subjects = Vec::new();
    let mut next_after = None;
    let mut conflicts = Vec::new();
    let mut last = None;
    if let Some(p) = partition {
        let after_key = match &paging.after {
            None => None,
            Some(after) => {
                let found = backend.load_subjects(&[(p.partition_id, after.clone())])?;
                match found.into_iter().next().flatten() {
                    Some(row) => Some(row.subject_id),
                    None => {
                        return Err(LedgerError::Request(
                            "--after must name a subject_id of this partition (the next_after of the previous page)"
                                .into(),
                        ));
                    }
                }
            }
        };
        let mut rows =
            backend.subjects_page(p.partition_id, after_key.as_deref(), paging.limit + 1)?;
        if rows.len() > paging.limit {
            rows.truncate(paging.limit);
            next_after = rows.last().map(|r| r.subject_id.clone());
        }
        for row in &rows {
            subjects.push(subject_with_history(backend, &key, row, false)?);
        }
        apply_rules(backend, p.partition_id, &mut subjects, rules)?;
        conflicts = backend
            .conflicts(p.partition_id, MAX_REJECTIONS)?
            .iter()
            .map(conflict_record)
            .collect();
        last = split_order_key(&p.latest_key);
    } else if paging.after.is_some() {
        return Err(LedgerError::Request(
            "--after must name a subject_id of this partition (the next_after of the previous page)"
                .into(),
        ));
    }
    let page = Page {
        limit: paging.limit as u64,
        after: paging.after.clone(),
        returned: subjects.len() as u64,
        next_after,
    };
    Ok(PageParts {
        counters,
        page,
        subjects,
        conflicts,
        last,
    })
}

/// What `subject` prints: `memory_utility_ledger_subject_v0`, or `_v1` for a v1
/// partition.
#[derive(Debug, Clone, PartialEq)]
pub enum SubjectLookup {
    V0(LedgerSubjectPacket),
    V1(LedgerSubjectPacketV1),
}

impl SubjectLookup {
    /// The packet as the ordered value the output layer prints.
    pub fn into_value(self) -> LedgerResult<Value> {
        match self {
            SubjectLookup::V0(packet) => packet.into_value(),
            SubjectLookup::V1(packet) => packet.into_value(),
        }
    }
}

/// The subjects of a partition that contain any of `digests` (sorted, unique).
pub fn subjects(
    backend: &mut dyn LedgerBackend,
    context: &ReducerContext,
    digests: &[String],
) -> LedgerResult<SubjectLookup> {
    let rules = rules_of(context)?;
    with_read(backend, |backend| {
        let key = PartitionKey::of_context(context);
        let mut found: BTreeMap<String, SubjectRow> = BTreeMap::new();
        let mut matched: BTreeSet<String> = BTreeSet::new();
        let stored_partition = backend.find_partition(&key)?;
        if let Some(p) = &stored_partition {
            let item_keys: Vec<SubjectKey> = digests
                .iter()
                .map(|d| {
                    (
                        p.partition_id,
                        reducer::subject_id_for(
                            AttributionLevel::Item,
                            std::slice::from_ref(d),
                            "",
                        ),
                    )
                })
                .collect();
            for (d, row) in digests.iter().zip(backend.load_subjects(&item_keys)?) {
                if let Some(row) = row {
                    matched.insert(d.clone());
                    found.insert(row.subject_id.clone(), row);
                }
            }
            for d in digests {
                for row in backend.subjects_with_digest(p.partition_id, d)? {
                    matched.insert(d.clone());
                    found.insert(row.subject_id.clone(), row);
                }
            }
        }
        let mut stored = Vec::with_capacity(found.len());
        for row in found.values() {
            stored.push(subject_with_history(backend, &key, row, true)?);
        }
        if let Some(p) = &stored_partition {
            apply_rules(backend, p.partition_id, &mut stored, rules)?;
        }
        let missing: Vec<String> = digests
            .iter()
            .filter(|d| !matched.contains(*d))
            .cloned()
            .collect();
        Ok(match rules {
            Rules::V0 => {
                SubjectLookup::V0(LedgerSubjectPacket::new(context, digests, missing, stored))
            }
            Rules::V1(_) => SubjectLookup::V1(LedgerSubjectPacketV1::new_v1(
                context, digests, missing, stored,
            )),
        })
    })
}

//! `memory_utility_ledger_projection_v0` (one page of a partition's projection, exact
//! uncapped counters) and `memory_utility_ledger_subject_v0` (the subjects that contain
//! given digests): the two packets of stored subjects; their `_v1` versions are the same
//! packets for a `memory_utility_reducer_v1` partition, whose subjects follow the v1
//! rules and carry their posterior.
//!
//! Generic over what they embed of the LoopX projection contract, the subject (`S`), the
//! conflict record (`R`) and the review proposal (`P`): built, these are the values the
//! reducer's typed printer makes ([`SubjectWithHistory`], [`Value`]); described,
//! [`crate::schema`] instantiates the packets with LoopX's schema types. One field list
//! either way.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::utility::reducer::{MAX_REJECTIONS, Posterior, ReducerContext, SubjectState, v1};
use crate::wire::json::Value;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

use super::super::error::LedgerResult;
use super::super::rows::{Counters, HISTORY_PER_SUBJECT};
use super::base::{
    LedgerProjectionV1Version, LedgerProjectionVersion, LedgerReducerVersion,
    LedgerSubjectV1Version, LedgerSubjectVersion, PacketVersion, ledger_identity, to_value,
};

/// A stored subject as the engine read it: the reducer's state (with its posterior under
/// the v1 rules), its latest history entries (oldest first) and whether the subject has
/// older ones.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSubject {
    pub state: SubjectState,
    pub posterior: Option<Posterior>,
    pub history: Vec<Value>,
    pub history_truncated: bool,
}

/// A subject of a ledger packet: the reducer's 19-key subject (its typed printer's
/// bytes), then its latest history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubjectWithHistory {
    #[serde(flatten)]
    pub subject: Value,
    /// The subject's latest accepted observations (at most 16), oldest first.
    pub observation_history: Vec<Value>,
    /// True when the subject has more observations than its history shows.
    pub observation_history_truncated: bool,
}

impl SubjectWithHistory {
    /// The subject as printed, built by moving its parts in: the same value as
    /// [`to_value`] of it, without copying the history.
    pub fn into_value(self) -> Value {
        let mut value = self.subject;
        if let Value::Object(map) = &mut value {
            map.insert(
                "observation_history",
                Value::Array(self.observation_history.into_boxed_slice()),
            );
            map.insert(
                "observation_history_truncated",
                self.observation_history_truncated,
            );
        }
        value
    }
}

impl From<StoredSubject> for SubjectWithHistory {
    fn from(stored: StoredSubject) -> SubjectWithHistory {
        SubjectWithHistory {
            subject: match &stored.posterior {
                None => stored.state.to_value(),
                Some(posterior) => v1::subject_value(&stored.state, posterior),
            },
            observation_history: stored.history,
            observation_history_truncated: stored.history_truncated,
        }
    }
}

/// The page of a ledger projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Page {
    /// 1 to 128.
    pub limit: u64,
    #[schemars(with = "Nullable<String>")]
    pub after: Option<String>,
    pub returned: u64,
    /// The `--after` of the next page; null on the last page.
    #[schemars(with = "Nullable<String>")]
    pub next_after: Option<String>,
}

/// `ready`, `empty` or `review_required`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LedgerProjectionStatus {
    Ready,
    Empty,
    ReviewRequired,
}

// With `V` = `LedgerProjectionV1Version` this is `memory_utility_ledger_projection_v1`, the
// page of a `memory_utility_reducer_v1` partition (its subjects carry their posterior).
/// `memory_utility_ledger_projection_v0`: one page of a partition's projection with exact,
/// uncapped counters (printed beyond the v0 caps or when a page is asked for).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields, rename = "LedgerProjectionPacket")]
pub struct LedgerProjectionPacket<
    S = SubjectWithHistory,
    R = Value,
    P = Value,
    V = LedgerProjectionVersion,
> {
    pub ok: AlwaysTrue,
    pub schema_version: V,
    pub status: LedgerProjectionStatus,
    pub projection_ready: bool,
    pub ledger_reducer_version: LedgerReducerVersion,
    /// The subject rules' version (default `memory_utility_reducer_v0`).
    pub reducer_version: String,
    /// `mur_` + 64 hex over the ledger packet's identity (never a v0 identity).
    pub reducer_identity: String,
    #[schemars(with = "BTreeMap<String, String>")]
    pub scope: Value,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    #[schemars(with = "u64")]
    pub delivery_count: i64,
    #[schemars(with = "u64")]
    pub accepted_observation_count: i64,
    #[schemars(with = "u64")]
    pub duplicate_observation_count: i64,
    #[schemars(with = "u64")]
    pub conflicting_observation_count: i64,
    #[schemars(with = "u64")]
    pub rejected_observation_count: i64,
    #[schemars(with = "u64")]
    pub lineage_observation_count: i64,
    #[schemars(with = "u64")]
    pub subject_count: i64,
    #[schemars(with = "u64")]
    pub item_subject_count: i64,
    #[schemars(with = "u64")]
    pub set_subject_count: i64,
    #[schemars(with = "u64")]
    pub unresolved_lineage_count: i64,
    #[schemars(with = "u64")]
    pub conflict_subject_count: i64,
    #[schemars(with = "Nullable<String>")]
    pub last_observed_at: Option<String>,
    #[schemars(with = "Nullable<String>")]
    pub last_observation_id: Option<String>,
    pub page: Page,
    /// 16.
    pub history_per_subject: u64,
    pub subjects: Vec<S>,
    /// The first 64 conflicting ids, by id.
    pub rejections: Vec<R>,
    pub rejections_truncated: bool,
    /// For the subjects of this page.
    pub review_proposals: Vec<P>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// The review proposals of subjects whose review state is not `none`, in their order.
fn review_proposals(subjects: &[StoredSubject]) -> Vec<Value> {
    subjects
        .iter()
        .filter(|s| s.state.review.state != "none")
        .map(|s| s.state.proposal_value())
        .collect()
}

/// [`LedgerProjectionPacket`] of a `memory_utility_reducer_v1` partition.
pub type LedgerProjectionPacketV1 =
    LedgerProjectionPacket<SubjectWithHistory, Value, Value, LedgerProjectionV1Version>;

impl LedgerProjectionPacket {
    /// One page of the partition of `context`: its exact counters, the page's subjects
    /// (and their review proposals), the first conflict records (`rejections`) and the
    /// partition's latest observation (`last`: its `created_at` and id).
    pub fn new(
        context: &ReducerContext,
        c: &Counters,
        page: Page,
        subjects: Vec<StoredSubject>,
        rejections: Vec<Value>,
        last: Option<(String, String)>,
    ) -> LedgerProjectionPacket {
        Self::of_version(context, c, page, subjects, rejections, last)
    }
}

impl LedgerProjectionPacketV1 {
    /// [`LedgerProjectionPacket::new`] for a v1 partition (its subjects carry posteriors).
    pub fn new_v1(
        context: &ReducerContext,
        c: &Counters,
        page: Page,
        subjects: Vec<StoredSubject>,
        rejections: Vec<Value>,
        last: Option<(String, String)>,
    ) -> LedgerProjectionPacketV1 {
        Self::of_version(context, c, page, subjects, rejections, last)
    }
}

impl<V: PacketVersion> LedgerProjectionPacket<SubjectWithHistory, Value, Value, V> {
    fn of_version(
        context: &ReducerContext,
        c: &Counters,
        page: Page,
        subjects: Vec<StoredSubject>,
        rejections: Vec<Value>,
        last: Option<(String, String)>,
    ) -> Self {
        let review_required = c.conflicting > 0 || c.conflict_subjects > 0;
        let status = if review_required {
            LedgerProjectionStatus::ReviewRequired
        } else if c.accepted > 0 {
            LedgerProjectionStatus::Ready
        } else {
            LedgerProjectionStatus::Empty
        };
        let review_proposals = review_proposals(&subjects);
        let (last_observed_at, last_observation_id) = last.unzip();
        LedgerProjectionPacket {
            ok: AlwaysTrue,
            schema_version: V::default(),
            status,
            projection_ready: c.accepted > 0 && !review_required,
            ledger_reducer_version: LedgerReducerVersion,
            reducer_version: context.reducer_version.clone(),
            reducer_identity: ledger_identity(context, V::NAME),
            scope: Value::Object(context.scope.to_sorted_map()),
            retrieval_snapshot_ref: context.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: context.policy_snapshot_ref.clone(),
            delivery_count: c.deliveries,
            accepted_observation_count: c.accepted,
            duplicate_observation_count: c.duplicate,
            conflicting_observation_count: c.conflicting,
            rejected_observation_count: c.rejected,
            lineage_observation_count: c.accepted,
            subject_count: c.subjects,
            item_subject_count: c.item_subjects,
            set_subject_count: c.set_subjects,
            unresolved_lineage_count: c.none_subjects,
            conflict_subject_count: c.conflict_subjects,
            last_observed_at,
            last_observation_id,
            page,
            history_per_subject: HISTORY_PER_SUBJECT as u64,
            subjects: subjects.into_iter().map(SubjectWithHistory::from).collect(),
            rejections,
            rejections_truncated: c.conflicting > MAX_REJECTIONS as i64,
            review_proposals,
            read_only: AlwaysTrue,
            grants_new_action_authority: AlwaysFalse,
            provider_write_performed: AlwaysFalse,
            external_writes_performed: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        }
    }
}

impl<V: PacketVersion> LedgerProjectionPacket<SubjectWithHistory, Value, Value, V> {
    /// The packet as printed, its subjects, conflict records and review proposals moved
    /// in rather than copied: the same value as [`to_value`] of it (a page holds
    /// up to 128 subjects with 16 history entries each).
    pub fn into_value(mut self) -> LedgerResult<Value> {
        let subjects = std::mem::take(&mut self.subjects);
        let rejections = std::mem::take(&mut self.rejections);
        let proposals = std::mem::take(&mut self.review_proposals);
        let mut value = to_value(&self)?;
        if let Value::Object(map) = &mut value {
            map.insert("subjects", printed_subjects(subjects));
            map.insert("rejections", Value::Array(rejections.into_boxed_slice()));
            map.insert(
                "review_proposals",
                Value::Array(proposals.into_boxed_slice()),
            );
        }
        Ok(value)
    }
}

fn printed_subjects(subjects: Vec<SubjectWithHistory>) -> Value {
    Value::Array(
        subjects
            .into_iter()
            .map(SubjectWithHistory::into_value)
            .collect(),
    )
}

/// `found` or `not_found`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubjectStatus {
    Found,
    NotFound,
}

// With `V` = `LedgerSubjectV1Version` this is `memory_utility_ledger_subject_v1`.
/// `memory_utility_ledger_subject_v0`: the subjects of a partition that contain digests.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields, rename = "LedgerSubjectPacket")]
pub struct LedgerSubjectPacket<S = SubjectWithHistory, V = LedgerSubjectVersion> {
    pub ok: AlwaysTrue,
    pub schema_version: V,
    pub status: SubjectStatus,
    pub ledger_reducer_version: LedgerReducerVersion,
    pub reducer_version: String,
    pub reducer_identity: String,
    #[schemars(with = "BTreeMap<String, String>")]
    pub scope: Value,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    /// The requested digests, sorted and unique.
    pub memory_ref_digests: Vec<String>,
    /// Requested digests no subject contains.
    pub missing_memory_ref_digests: Vec<String>,
    pub subject_count: u64,
    pub history_per_subject: u64,
    /// Ordered by `subject_id`.
    pub subjects: Vec<S>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// [`LedgerSubjectPacket`] of a `memory_utility_reducer_v1` partition.
pub type LedgerSubjectPacketV1 = LedgerSubjectPacket<SubjectWithHistory, LedgerSubjectV1Version>;

impl LedgerSubjectPacket {
    /// The subjects of the partition of `context` that contain any of `digests`, and the
    /// digests none contains (`missing`).
    pub fn new(
        context: &ReducerContext,
        digests: &[String],
        missing: Vec<String>,
        subjects: Vec<StoredSubject>,
    ) -> LedgerSubjectPacket {
        Self::of_version(context, digests, missing, subjects)
    }
}

impl LedgerSubjectPacketV1 {
    /// [`LedgerSubjectPacket::new`] for a v1 partition (its subjects carry posteriors).
    pub fn new_v1(
        context: &ReducerContext,
        digests: &[String],
        missing: Vec<String>,
        subjects: Vec<StoredSubject>,
    ) -> LedgerSubjectPacketV1 {
        Self::of_version(context, digests, missing, subjects)
    }
}

impl<V: PacketVersion> LedgerSubjectPacket<SubjectWithHistory, V> {
    fn of_version(
        context: &ReducerContext,
        digests: &[String],
        missing: Vec<String>,
        subjects: Vec<StoredSubject>,
    ) -> Self {
        LedgerSubjectPacket {
            ok: AlwaysTrue,
            schema_version: V::default(),
            status: if subjects.is_empty() {
                SubjectStatus::NotFound
            } else {
                SubjectStatus::Found
            },
            ledger_reducer_version: LedgerReducerVersion,
            reducer_version: context.reducer_version.clone(),
            reducer_identity: ledger_identity(context, V::NAME),
            scope: Value::Object(context.scope.to_sorted_map()),
            retrieval_snapshot_ref: context.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: context.policy_snapshot_ref.clone(),
            memory_ref_digests: digests.to_vec(),
            missing_memory_ref_digests: missing,
            subject_count: subjects.len() as u64,
            history_per_subject: HISTORY_PER_SUBJECT as u64,
            subjects: subjects.into_iter().map(SubjectWithHistory::from).collect(),
            read_only: AlwaysTrue,
            grants_new_action_authority: AlwaysFalse,
            provider_write_performed: AlwaysFalse,
            external_writes_performed: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        }
    }
}

impl<V: PacketVersion> LedgerSubjectPacket<SubjectWithHistory, V> {
    /// The packet as printed, its subjects moved in rather than copied: the same value as
    /// [`to_value`] of it.
    pub fn into_value(mut self) -> LedgerResult<Value> {
        let subjects = std::mem::take(&mut self.subjects);
        let mut value = to_value(&self)?;
        if let Value::Object(map) = &mut value {
            map.insert("subjects", printed_subjects(subjects));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utility::observation::AttributionLevel;
    use crate::utility::reducer;
    use crate::utility::testkit::{self, Spec};

    fn context() -> ReducerContext {
        let input = testkit::context();
        let field = |key: &str| input.get(key).cloned().unwrap_or(Value::Null);
        ReducerContext::strict(
            &field("scope"),
            &field("retrieval_snapshot_ref"),
            &field("policy_snapshot_ref"),
            &Value::from(reducer::DEFAULT_REDUCER_VERSION),
        )
        .expect("valid context")
    }

    /// Two stored subjects: one reviewed (a harmful owner correction), one not.
    fn stored() -> Vec<StoredSubject> {
        [
            ("harmful", "owner_correction"),
            ("helpful", "evaluator_inference"),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, (label, basis))| {
            let observation = Spec::item(label, basis, 0.5, &format!("v{i}")).build();
            let subject_id = reducer::subject_id(&observation);
            let state = reducer::reduce_subject(
                &subject_id,
                AttributionLevel::Item,
                &observation.memory_ref_digests,
                &[&observation],
            );
            StoredSubject {
                history: vec![reducer::history_entry(&observation, &subject_id)],
                history_truncated: i == 1,
                state,
                posterior: None,
            }
        })
        .collect()
    }

    /// Moving the lists in builds exactly the value serde builds of the whole packet.
    #[test]
    fn a_packet_moved_into_its_value_is_the_packet_serialized() {
        let counters = Counters {
            deliveries: 3,
            accepted: 2,
            conflicting: 1,
            rejected: 1,
            subjects: 2,
            item_subjects: 2,
            ..Counters::default()
        };
        let page = Page {
            limit: 2,
            after: None,
            returned: 2,
            next_after: Some("mui_next".into()),
        };
        let conflict = Value::Object(crate::obj! { "observation_id" => "muo_x" });
        let last = Some(("2026-08-15T00:00:00Z".to_owned(), "muo_y".to_owned()));
        let packet = LedgerProjectionPacket::new(
            &context(),
            &counters,
            page,
            stored(),
            vec![conflict],
            last,
        );
        assert!(
            !packet.review_proposals.is_empty(),
            "a reviewed subject proposes"
        );
        let serialized = to_value(&packet).expect("printable");
        assert_eq!(packet.into_value().expect("printable"), serialized);

        let digests = vec![testkit::DIGEST_A.to_owned()];
        let packet = LedgerSubjectPacket::new(&context(), &digests, Vec::new(), stored());
        let serialized = to_value(&packet).expect("printable");
        assert_eq!(packet.into_value().expect("printable"), serialized);
    }
}

//! The projection packet as typed data: the field tables of a subject, a review, a
//! proposal, a history entry and the whole `memory_utility_projection_v0` packet (or
//! `_v1`, whose subjects end with their posterior).
//!
//! Each table is built on the stack from the reducer's typed results ([`Json`] borrowed
//! views), then either printed directly ([`Projection::write_pretty_line`], the
//! `--format json` output of `utility-project`) or turned into a [`Value`]
//! ([`Projection::to_value`], for markdown, validation and the other callers). Both come
//! from the same table, so they are the same packet; long lists ([`JsonItems`]) are made
//! item by item while printing, so a large packet needs no value per record. Pure.

use std::borrow::Cow;

use crate::wire::json::{self, Json, JsonItems, Value};

use super::super::bounds::{UTILITY_MAX, UTILITY_MIN};
use super::super::observation::{AttributionLevel, EvidenceBasis, Observation, UtilityLabel};
use super::context::ReducerContext;
use super::subject::{Review, SubjectState, SummaryPair};
use super::v1::Posterior;

/// A count as printed (counts here never come near `i64::MAX`).
pub(super) fn count(n: usize) -> Json<'static> {
    Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

impl Review {
    /// The review object as printed in a subject.
    pub fn to_value(&self) -> Value {
        self.with_json(|json| json.to_value())
    }

    /// Hands `f` the review object as printed in a subject, borrowed.
    fn with_json<R>(&self, f: impl FnOnce(&Json<'_>) -> R) -> R {
        f(&Json::Object(&[
            ("state", Json::Str(self.state)),
            ("proposed_action", Json::Str(self.proposed_action)),
            ("reason_codes", Json::StrRefs(&self.reason_codes)),
            (
                "quarantine_proposed",
                Json::Bool(self.quarantine_proposed()),
            ),
            ("automatic_deletion", Json::Bool(false)),
            ("action_authority_granted", Json::Bool(false)),
        ]))
    }
}

impl SubjectState {
    fn with_support<R>(&self, f: impl FnOnce(&Json<'_>) -> R) -> R {
        let mut entries = [("", Json::Null); 4];
        for ((slot, label), n) in entries.iter_mut().zip(UtilityLabel::ALL).zip(self.support) {
            *slot = (label.as_str(), count(n));
        }
        f(&Json::Object(&entries))
    }

    fn with_evidence_strength<R>(&self, f: impl FnOnce(&Json<'_>) -> R) -> R {
        let mut entries = [("", Json::Null); 5];
        for ((slot, basis), n) in entries
            .iter_mut()
            .zip(EvidenceBasis::ALL)
            .zip(self.evidence_strength)
        {
            *slot = (basis.as_str(), count(n));
        }
        f(&Json::Object(&entries))
    }

    /// The 19-key subject packet.
    pub fn to_value(&self) -> Value {
        self.with_json(|json| json.to_value())
    }

    /// Hands `f` the 19-key subject packet, borrowed.
    fn with_json<R>(&self, f: impl FnOnce(&Json<'_>) -> R) -> R {
        self.with_json_and(None, f)
    }

    /// Hands `f` the subject packet, borrowed: the 19 v0 keys, then `posterior` when one
    /// is given (a `memory_utility_reducer_v1` subject).
    fn with_json_and<R>(&self, posterior: Option<&Posterior>, f: impl FnOnce(&Json<'_>) -> R) -> R {
        let posterior_values = posterior.map(Posterior::values);
        let mut posterior_entries = [("", Json::Null); 8];
        if let Some(values) = posterior_values {
            for ((slot, key), value) in posterior_entries
                .iter_mut()
                .zip(super::v1::POSTERIOR_FIELDS)
                .zip(values)
            {
                *slot = (key, Json::Float(value));
            }
        }
        let keys = if posterior.is_some() { 20 } else { 19 };
        self.with_support(|support| {
            self.with_evidence_strength(|strength| {
                self.review.with_json(|review| {
                    let entries = [
                        ("subject_id", Json::Str(&self.subject_id)),
                        ("attribution_level", Json::Str(self.level.as_str())),
                        ("memory_ref_digests", Json::Strs(&self.memory_ref_digests)),
                        ("utility_estimate", Json::Float(self.utility_estimate)),
                        (
                            "utility_bounds",
                            Json::Object(&[
                                ("min", Json::Float(UTILITY_MIN)),
                                ("max", Json::Float(UTILITY_MAX)),
                            ]),
                        ),
                        (
                            "effective_utility_label",
                            Json::Str(self.effective_label.as_str()),
                        ),
                        (
                            "effective_evidence_basis",
                            Json::Str(self.effective_basis.as_str()),
                        ),
                        ("confidence", Json::Float(self.confidence)),
                        ("uncertainty", Json::Float(self.uncertainty)),
                        ("support", *support),
                        ("evidence_strength", *strength),
                        (
                            "evidence_label_summary",
                            Json::Items(&SummaryItems(&self.summary)),
                        ),
                        ("observation_count", count(self.observation_count)),
                        ("last_observed_at", Json::Str(&self.last_observed_at)),
                        ("last_observation_id", Json::Str(&self.last_observation_id)),
                        ("review", *review),
                        ("read_only", Json::Bool(true)),
                        ("automatic_deletion", Json::Bool(false)),
                        ("action_authority_granted", Json::Bool(false)),
                        ("posterior", Json::Object(&posterior_entries)),
                    ];
                    f(&Json::Object(&entries[..keys]))
                })
            })
        })
    }

    /// The review proposal of a subject whose review state is not `none`.
    pub fn proposal_value(&self) -> Value {
        self.with_proposal(|json| json.to_value())
    }

    fn with_proposal<R>(&self, f: impl FnOnce(&Json<'_>) -> R) -> R {
        f(&Json::Object(&[
            ("subject_id", Json::Str(&self.subject_id)),
            ("attribution_level", Json::Str(self.level.as_str())),
            ("memory_ref_digests", Json::Strs(&self.memory_ref_digests)),
            ("state", Json::Str(self.review.state)),
            ("proposed_action", Json::Str(self.review.proposed_action)),
            ("reason_codes", Json::StrRefs(&self.review.reason_codes)),
            (
                "quarantine_proposed",
                Json::Bool(self.review.quarantine_proposed()),
            ),
            ("automatic_deletion", Json::Bool(false)),
            ("action_authority_granted", Json::Bool(false)),
        ]))
    }
}

/// A subject's joint evidence summary, printed pair by pair.
struct SummaryItems<'a>(&'a [SummaryPair]);

impl JsonItems for SummaryItems<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn for_each_item(&self, each: &mut dyn FnMut(&Json<'_>)) {
        for pair in self.0 {
            each(&Json::Object(&[
                ("evidence_basis", Json::Str(pair.basis.as_str())),
                ("utility_label", Json::Str(pair.label.as_str())),
                ("observation_count", count(pair.count)),
                ("combined_confidence", Json::Float(pair.combined_confidence)),
            ]));
        }
    }
}

/// Every subject, printed one by one (with its posterior, when the packet has them).
struct SubjectItems<'a>(&'a [SubjectState], &'a [Posterior]);

impl JsonItems for SubjectItems<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn for_each_item(&self, each: &mut dyn FnMut(&Json<'_>)) {
        for (i, subject) in self.0.iter().enumerate() {
            subject.with_json_and(self.1.get(i), |json| each(json));
        }
    }
}

/// The review proposals: every subject whose review state is not `none`.
struct ProposalItems<'a>(&'a [SubjectState]);

impl JsonItems for ProposalItems<'_> {
    fn count(&self) -> usize {
        self.0.iter().filter(|s| s.review.state != "none").count()
    }

    fn for_each_item(&self, each: &mut dyn FnMut(&Json<'_>)) {
        for subject in self.0.iter().filter(|s| s.review.state != "none") {
            subject.with_proposal(|json| each(json));
        }
    }
}

/// One history entry (15 keys).
pub fn history_entry(observation: &Observation, subject_id: &str) -> Value {
    with_history_entry(
        observation,
        &observation.fingerprint(),
        subject_id,
        |json| json.to_value(),
    )
}

/// Hands `f` the history entry of `observation`, whose fingerprint is already known,
/// borrowed.
pub(super) fn with_history_entry<R>(
    observation: &Observation,
    fingerprint: &str,
    subject_id: &str,
    f: impl FnOnce(&Json<'_>) -> R,
) -> R {
    f(&Json::Object(&[
        ("observation_id", Json::Str(&observation.observation_id)),
        ("observation_fingerprint", Json::Str(fingerprint)),
        ("subject_id", Json::Str(subject_id)),
        (
            "application_receipt_id",
            Json::Str(&observation.application_receipt_id),
        ),
        ("outcome_ref", Json::Str(&observation.outcome_ref)),
        (
            "memory_ref_digests",
            Json::Strs(&observation.memory_ref_digests),
        ),
        (
            "attribution_level",
            Json::Str(observation.attribution_level.as_str()),
        ),
        (
            "utility_label",
            Json::Str(observation.utility_label.as_str()),
        ),
        (
            "evidence_basis",
            Json::Str(observation.evidence_basis.as_str()),
        ),
        ("confidence", Json::Float(observation.confidence)),
        ("reason_codes", Json::Strs(&observation.reason_codes)),
        ("evidence_refs", Json::Strs(&observation.evidence_refs)),
        ("evaluator_ref", Json::Str(&observation.evaluator_ref)),
        (
            "evaluation_version",
            Json::Str(&observation.evaluation_version),
        ),
        ("created_at", Json::Str(&observation.created_at)),
    ]))
}

/// One kept history entry: the observation, its fingerprint and its subject's position.
pub(super) struct HistoryEntry<'a> {
    pub(super) observation: &'a Observation,
    pub(super) fingerprint: String,
    pub(super) subject: usize,
}

/// The kept history, printed entry by entry.
struct HistoryItems<'a> {
    entries: &'a [HistoryEntry<'a>],
    subjects: &'a [SubjectState],
}

impl JsonItems for HistoryItems<'_> {
    fn count(&self) -> usize {
        self.entries.len()
    }

    fn for_each_item(&self, each: &mut dyn FnMut(&Json<'_>)) {
        for entry in self.entries {
            let subject = self
                .subjects
                .get(entry.subject)
                .map_or("", |s| s.subject_id.as_str());
            with_history_entry(entry.observation, &entry.fingerprint, subject, |json| {
                each(json);
            });
        }
    }
}

#[derive(Default)]
pub(super) struct Counts {
    pub(super) accepted: usize,
    pub(super) duplicate: usize,
    pub(super) conflicting: usize,
    pub(super) rejected: usize,
}

/// A projection packet as typed data: printed from its fields ([`Projection::write_pretty_line`])
/// or turned into a [`Value`] ([`Projection::to_value`]); both come from one borrowed
/// field table, so they are the same packet.
pub struct Projection<'a> {
    /// `memory_utility_projection_v0`, or `memory_utility_projection_v1` (whose subjects
    /// carry their posteriors).
    pub(super) schema_version: &'static str,
    pub(super) context: Cow<'a, ReducerContext>,
    pub(super) ok: bool,
    pub(super) status: &'static str,
    pub(super) ready: bool,
    pub(super) counts: Counts,
    pub(super) subjects: Vec<SubjectState>,
    /// One per subject in a v1 packet; empty in a v0 packet.
    pub(super) posteriors: Vec<Posterior>,
    pub(super) history: Vec<HistoryEntry<'a>>,
    pub(super) truncated: bool,
    /// A list value: one `{reason_codes}` record of a rejected packet, or the conflicts.
    pub(super) rejections: Value,
    pub(super) last: Option<(&'a str, &'a str)>,
}

impl Projection<'_> {
    /// The packet's `ok`.
    pub fn ok(&self) -> bool {
        self.ok
    }

    /// The packet as a value.
    pub fn to_value(&self) -> Value {
        self.with_json(|json| json.to_value())
    }

    /// Appends the packet as the command prints it (pretty JSON and a newline) to `out`.
    pub fn write_pretty_line<S: json::Sink + ?Sized>(&self, out: &mut S) {
        self.with_json(|packet| json::write_json(out, packet, json::DumpOptions::PRETTY));
        out.push_str("\n");
    }

    /// Hands `f` the packet, borrowed from the typed fields.
    fn with_json<R>(&self, f: impl FnOnce(&Json<'_>) -> R) -> R {
        let context = &*self.context;
        let level_count =
            |level: AttributionLevel| self.subjects.iter().filter(|s| s.level == level).count();
        let (last_at, last_id) = match self.last {
            Some((at, id)) => (Json::Str(at), Json::Str(id)),
            None => (Json::Null, Json::Null),
        };
        let identity = context.identity();
        let scope = Value::Object(context.scope_map.clone());
        let subjects = SubjectItems(&self.subjects, &self.posteriors);
        let history = HistoryItems {
            entries: &self.history,
            subjects: &self.subjects,
        };
        let proposals = ProposalItems(&self.subjects);
        f(&Json::Object(&[
            ("ok", Json::Bool(self.ok)),
            ("schema_version", Json::Str(self.schema_version)),
            ("status", Json::Str(self.status)),
            ("projection_ready", Json::Bool(self.ready)),
            ("reducer_version", Json::Str(&context.reducer_version)),
            ("reducer_identity", Json::Str(&identity)),
            ("scope", Json::Value(&scope)),
            (
                "retrieval_snapshot_ref",
                Json::Str(&context.retrieval_snapshot_ref),
            ),
            (
                "policy_snapshot_ref",
                Json::Str(&context.policy_snapshot_ref),
            ),
            ("accepted_observation_count", count(self.counts.accepted)),
            ("duplicate_observation_count", count(self.counts.duplicate)),
            (
                "conflicting_observation_count",
                count(self.counts.conflicting),
            ),
            ("rejected_observation_count", count(self.counts.rejected)),
            ("lineage_observation_count", count(self.counts.accepted)),
            ("subject_count", count(self.subjects.len())),
            (
                "item_subject_count",
                count(level_count(AttributionLevel::Item)),
            ),
            (
                "set_subject_count",
                count(level_count(AttributionLevel::Set)),
            ),
            (
                "unresolved_lineage_count",
                count(level_count(AttributionLevel::None)),
            ),
            ("last_observed_at", last_at),
            ("last_observation_id", last_id),
            ("subjects", Json::Items(&subjects)),
            ("observation_history", Json::Items(&history)),
            ("observation_history_truncated", Json::Bool(self.truncated)),
            ("rejections", Json::Value(&self.rejections)),
            ("review_proposals", Json::Items(&proposals)),
            ("read_only", Json::Bool(true)),
            ("grants_new_action_authority", Json::Bool(false)),
            ("provider_write_performed", Json::Bool(false)),
            ("external_writes_performed", Json::Bool(false)),
            ("raw_content_captured", Json::Bool(false)),
        ]))
    }
}

//! The readback validator of `memory_utility_projection_v0`, and of our
//! `memory_utility_projection_v1` (the same packet whose subjects follow the v1 rules).
//!
//! Checks a projection packet (our own output, a caller's `previous_projection`, or any
//! packet given to `utility-validate`) rule by rule in the reference's order and reports
//! the first violated rule with the reference's message. Where the reference compares
//! with Python `==`, so does this module: `1` equals `1.0`, object key order
//! is ignored. It re-derives history fingerprints and subject state but never repairs or
//! normalizes the packet. Pure.
//!
//! This file holds the packet's field tables, the header rules (`check_header` and the
//! pieces the ledger packet's validator shares) and the whole-packet order of the
//! rules; one subject's rules are `subjects`, a history entry's `history`, the rejection
//! records and review proposals `records`. It imports the reducer's context and subject
//! reduction, never the reducer itself (which calls this module).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

use crate::wire::json::{Map, Value};
use crate::wire::text::{FieldError, FieldResult};

use super::bounds::{MAX_HISTORY, MAX_OBSERVATIONS, MAX_SUBJECTS};
use super::observation::{AttributionLevel, Observation};
use super::reducer::context::{PROJECTION_SCHEMA_VERSION, ReducerContext};
use super::reducer::subject;
use super::reducer::v1::{PROJECTION_V1_SCHEMA_VERSION, REDUCER_V1, Rules};
use super::strict::{
    enum_str, exact_fields, non_negative_int, object, observation_ref, strict_timestamp,
};

mod history;
mod records;
mod subjects;

pub(crate) use history::{observation_from_history, validate_history_entry};
pub(crate) use records::{validate_proposals, validate_rejections};
pub(crate) use subjects::{
    SubjectView, check_reduced_fields, expected_subject, validate_aggregate, validate_aggregate_v1,
    validate_subject,
};

pub(super) const PROJECTION_FIELDS: [&str; 30] = [
    "ok",
    "schema_version",
    "status",
    "projection_ready",
    "reducer_version",
    "reducer_identity",
    "scope",
    "retrieval_snapshot_ref",
    "policy_snapshot_ref",
    "accepted_observation_count",
    "duplicate_observation_count",
    "conflicting_observation_count",
    "rejected_observation_count",
    "lineage_observation_count",
    "subject_count",
    "item_subject_count",
    "set_subject_count",
    "unresolved_lineage_count",
    "last_observed_at",
    "last_observation_id",
    "subjects",
    "observation_history",
    "observation_history_truncated",
    "rejections",
    "review_proposals",
    "read_only",
    "grants_new_action_authority",
    "provider_write_performed",
    "external_writes_performed",
    "raw_content_captured",
];

pub(super) const COUNTERS: [&str; 9] = [
    "accepted_observation_count",
    "duplicate_observation_count",
    "conflicting_observation_count",
    "rejected_observation_count",
    "lineage_observation_count",
    "subject_count",
    "item_subject_count",
    "set_subject_count",
    "unresolved_lineage_count",
];

pub(super) const SUBJECT_FIELDS: [&str; 19] = [
    "subject_id",
    "attribution_level",
    "memory_ref_digests",
    "utility_estimate",
    "utility_bounds",
    "effective_utility_label",
    "effective_evidence_basis",
    "confidence",
    "uncertainty",
    "support",
    "evidence_strength",
    "evidence_label_summary",
    "observation_count",
    "last_observed_at",
    "last_observation_id",
    "review",
    "read_only",
    "automatic_deletion",
    "action_authority_granted",
];

/// The keys of a v1 subject: the v0 subject's, then its posterior.
pub(super) const SUBJECT_FIELDS_V1: [&str; 20] = {
    let mut keys = [""; 20];
    let mut i = 0;
    while i < SUBJECT_FIELDS.len() {
        keys[i] = SUBJECT_FIELDS[i];
        i += 1;
    }
    keys[SUBJECT_FIELDS.len()] = "posterior";
    keys
};

pub(super) const REVIEW_FIELDS: [&str; 6] = [
    "state",
    "proposed_action",
    "reason_codes",
    "quarantine_proposed",
    "automatic_deletion",
    "action_authority_granted",
];

pub(super) const SUMMARY_FIELDS: [&str; 4] = [
    "evidence_basis",
    "utility_label",
    "observation_count",
    "combined_confidence",
];

pub(super) const HISTORY_FIELDS: [&str; 15] = [
    "observation_id",
    "observation_fingerprint",
    "subject_id",
    "application_receipt_id",
    "outcome_ref",
    "memory_ref_digests",
    "attribution_level",
    "utility_label",
    "evidence_basis",
    "confidence",
    "reason_codes",
    "evidence_refs",
    "evaluator_ref",
    "evaluation_version",
    "created_at",
];

pub(super) const REJECTION_FIELDS: [&str; 8] = [
    "observation_id",
    "reason_codes",
    "delivery_count",
    "delivery_fingerprints",
    "delivery_fingerprints_truncated",
    "quarantine_proposed",
    "automatic_deletion",
    "action_authority_granted",
];

pub(super) const PROPOSAL_FIELDS: [&str; 9] = [
    "subject_id",
    "attribution_level",
    "memory_ref_digests",
    "state",
    "proposed_action",
    "reason_codes",
    "quarantine_proposed",
    "automatic_deletion",
    "action_authority_granted",
];

pub(super) const STATUSES: [&str; 4] = ["ready", "empty", "review_required", "rejected"];
pub(super) const REVIEW_STATES: [&str; 4] = [
    "none",
    "attenuation_proposed",
    "conflict",
    "unresolved_attribution",
];
pub(super) const REVIEW_ACTIONS: [&str; 4] = [
    "none",
    "attenuate_or_review",
    "manual_review",
    "collect_attribution",
];

/// `{parent}[{index}]`, formatted only when a message needs it.
pub(super) struct Indexed<'a>(&'a dyn Display, usize);

impl Display for Indexed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// `{parent}.{key}`, formatted only when a message needs it.
pub(super) struct Field<'a>(&'a dyn Display, &'static str);

impl Display for Field<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

pub(super) fn fail<T>(message: impl Into<String>) -> FieldResult<T> {
    Err(FieldError(message.into()))
}

pub(super) fn get<'a>(map: &'a Map, key: &str) -> &'a Value {
    map.get(key).unwrap_or(&Value::Null)
}

pub(super) fn is_false(v: &Value) -> bool {
    *v == Value::Bool(false)
}

pub(super) fn is_true(v: &Value) -> bool {
    *v == Value::Bool(true)
}

fn counter(raw: &Map, key: &str) -> i128 {
    non_negative_int(get(raw, key)).unwrap_or(0)
}

/// Whether [`check_header`] also requires the packet's four booleans to be booleans (the
/// full readback does; the subject-only readback never looked at them).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Booleans {
    Checked,
    Unchecked,
}

/// What the header rules of a projection packet yield.
struct Header<'a> {
    status: &'a str,
    context: ReducerContext,
    /// The subject rules of the packet: v0 for a v0 packet (whatever its reducer
    /// version), the named v1 parameters for a v1 packet.
    rules: Rules,
}

/// Which projection packet a validation expects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Packet {
    /// `memory_utility_projection_v0` (LoopX's).
    V0,
    /// `memory_utility_projection_v1`.
    V1,
}

/// The header rules of a `memory_utility_projection_v0` packet, in the reference's order:
/// the exact fields, the schema version, the status, (with [`Booleans::Checked`]) the
/// four booleans, `read_only`, the boundary flags, the strict context and its reducer
/// identity. A v1 packet has the same header, its own schema version and a reducer
/// version that names the v1 rules.
fn check_header(raw: &Map, booleans: Booleans, packet: Packet) -> FieldResult<Header<'_>> {
    exact_fields(raw, &PROJECTION_FIELDS, "projection")?;
    let schema_version = match packet {
        Packet::V0 => PROJECTION_SCHEMA_VERSION,
        Packet::V1 => PROJECTION_V1_SCHEMA_VERSION,
    };
    if get(raw, "schema_version").as_str() != Some(schema_version) {
        return fail("projection.schema_version mismatch");
    }
    let status = enum_str(get(raw, "status"), &STATUSES, "projection.status")?;
    if booleans == Booleans::Checked {
        check_booleans(
            raw,
            &[
                "ok",
                "projection_ready",
                "observation_history_truncated",
                "read_only",
            ],
        )?;
    }
    if !is_true(get(raw, "read_only")) {
        return fail("projection.read_only must be true");
    }
    check_boundary_flags(raw)?;
    let context = packet_context(raw)?;
    if get(raw, "reducer_identity").as_str() != Some(context.identity().as_str()) {
        return fail("projection.reducer_identity is invalid");
    }
    let rules = match packet {
        Packet::V0 => Rules::V0,
        Packet::V1 => match Rules::of(&context.reducer_version) {
            Ok(rules @ Rules::V1(_)) => rules,
            _ => {
                return fail(format!(
                    "projection.reducer_version must name {REDUCER_V1} in a {PROJECTION_V1_SCHEMA_VERSION} packet"
                ));
            }
        },
    };
    Ok(Header {
        status,
        context,
        rules,
    })
}

/// One subject's rules under `rules` (see [`validate_subject`], [`validate_aggregate`]
/// and [`validate_aggregate_v1`]).
fn subject_rules<'a>(
    subject: &'a Map,
    index: usize,
    seen: &mut BTreeSet<&'a str>,
    rules: Rules,
) -> FieldResult<SubjectView<'a>> {
    let view = validate_subject(subject, index, seen, rules)?;
    match rules {
        Rules::V0 => validate_aggregate(subject, Indexed(&"projection.subjects", index))?,
        Rules::V1(_) => validate_aggregate_v1(subject, Indexed(&"projection.subjects", index))?,
    }
    Ok(view)
}

/// `projection.{key} must be a boolean` for the first of `keys` that is not one.
pub(crate) fn check_booleans(raw: &Map, keys: &[&str]) -> FieldResult<()> {
    match keys.iter().find(|key| get(raw, key).as_bool().is_none()) {
        Some(key) => fail(format!("projection.{key} must be a boolean")),
        None => Ok(()),
    }
}

/// `projection.{key} must be false` for the first of the four boundary flags of a
/// projection packet (`grants_new_action_authority`, `provider_write_performed`,
/// `external_writes_performed`, `raw_content_captured`) that is not `false`.
pub(crate) fn check_boundary_flags(raw: &Map) -> FieldResult<()> {
    for key in [
        "grants_new_action_authority",
        "provider_write_performed",
        "external_writes_performed",
        "raw_content_captured",
    ] {
        if !is_false(get(raw, key)) {
            return fail(format!("projection.{key} must be false"));
        }
    }
    Ok(())
}

/// The strict reducer context of a projection packet's `scope`, snapshot pair and
/// `reducer_version`.
pub(crate) fn packet_context(raw: &Map) -> FieldResult<ReducerContext> {
    ReducerContext::strict(
        get(raw, "scope"),
        get(raw, "retrieval_snapshot_ref"),
        get(raw, "policy_snapshot_ref"),
        get(raw, "reducer_version"),
    )
}

/// The rules of [`validate_projection`] that need no observation history: the exact
/// fields, schema version, status and boundary flags, the reducer identity of the scope,
/// snapshot pair and reducer version, and each subject's own rules (fields, digests,
/// bounds, and label, estimate, confidence and review against its evidence summary).
/// For readers of a projection, such as the rank prior, that must not pay for
/// re-deriving the history; `utility-validate` runs the full readback.
pub fn validate_projection_subjects(value: &Value) -> FieldResult<()> {
    subjects_of(value, Packet::V0)
}

/// [`validate_projection_subjects`] of a `memory_utility_projection_v1` packet: each
/// subject's v1 rules (`validate_aggregate_v1`: its posterior against its summary, its
/// label and review against its interval), without the history.
pub fn validate_projection_v1_subjects(value: &Value) -> FieldResult<()> {
    subjects_of(value, Packet::V1)
}

fn subjects_of(value: &Value, packet: Packet) -> FieldResult<()> {
    let raw = object(value, "projection")?;
    let Header { rules, .. } = check_header(raw, Booleans::Unchecked, packet)?;
    let subjects = match get(raw, "subjects") {
        Value::Array(items) if items.len() <= MAX_SUBJECTS => items,
        _ => return fail("projection.subjects must be a bounded list"),
    };
    let mut seen = BTreeSet::new();
    for (index, subject) in subjects.iter().enumerate() {
        let subject = object(subject, format_args!("projection.subjects[{index}]"))?;
        subject_rules(subject, index, &mut seen, rules)?;
    }
    Ok(())
}

/// Validates a `memory_utility_projection_v0` packet; the error is the first violated
/// rule, worded as the reference words it.
pub fn validate_projection(value: &Value) -> FieldResult<()> {
    validate_packet(value, Packet::V0)
}

/// Validates a `memory_utility_projection_v1` packet: the rules of
/// [`validate_projection`] with the v1 subject rules, each complete subject reduced
/// again by the v1 rules (its posterior included).
pub fn validate_projection_v1(value: &Value) -> FieldResult<()> {
    validate_packet(value, Packet::V1)
}

fn validate_packet(value: &Value, packet: Packet) -> FieldResult<()> {
    let raw = object(value, "projection")?;
    let Header {
        status,
        context,
        rules,
    } = check_header(raw, Booleans::Checked, packet)?;
    for key in COUNTERS {
        if non_negative_int(get(raw, key)).is_none() {
            return fail(format!("projection.{key} must be a non-negative integer"));
        }
    }
    let limit = MAX_OBSERVATIONS as i128;
    let accepted = counter(raw, "accepted_observation_count");
    let duplicate = counter(raw, "duplicate_observation_count");
    let conflicting = counter(raw, "conflicting_observation_count");
    let rejected = counter(raw, "rejected_observation_count");
    if accepted > limit {
        return fail("projection.accepted_observation_count exceeds the input limit");
    }
    if duplicate > limit - accepted {
        return fail("projection.duplicate_observation_count exceeds delivery limit");
    }
    if conflicting > limit {
        return fail("projection.conflicting_observation_count exceeds the input limit");
    }
    if rejected > limit {
        return fail("projection.rejected_observation_count exceeds the input limit");
    }
    let last_at = get(raw, "last_observed_at");
    if !last_at.is_null() {
        strict_timestamp(last_at, "projection.last_observed_at")?;
    }
    let last_id = get(raw, "last_observation_id");
    if !last_id.is_null() {
        observation_ref(last_id, "projection.last_observation_id")?;
    }

    // Subjects.
    let subjects_raw = match get(raw, "subjects") {
        Value::Array(items) if items.len() <= MAX_SUBJECTS => items,
        _ => return fail("projection.subjects must be a bounded list"),
    };
    let mut seen = BTreeSet::new();
    let mut subjects: Vec<SubjectView<'_>> = Vec::with_capacity(subjects_raw.len());
    for (index, subject) in subjects_raw.iter().enumerate() {
        let subject = object(subject, format_args!("projection.subjects[{index}]"))?;
        let view = subject_rules(subject, index, &mut seen, rules)?;
        subjects.push(view);
    }
    let by_id: BTreeMap<&str, usize> = subjects
        .iter()
        .enumerate()
        .map(|(i, s)| (s.subject_id, i))
        .collect();
    let level_count =
        |level: AttributionLevel| subjects.iter().filter(|s| s.level == level).count() as i128;
    if counter(raw, "subject_count") != subjects.len() as i128 {
        return fail("projection.subject_count does not match subjects");
    }
    if counter(raw, "item_subject_count") != level_count(AttributionLevel::Item) {
        return fail("projection.item_subject_count does not match subjects");
    }
    if counter(raw, "set_subject_count") != level_count(AttributionLevel::Set) {
        return fail("projection.set_subject_count does not match subjects");
    }
    if counter(raw, "unresolved_lineage_count") != level_count(AttributionLevel::None) {
        return fail("projection.unresolved_lineage_count does not match subjects");
    }
    let observed_total = subjects
        .iter()
        .fold(0i128, |a, s| a.saturating_add(s.observation_count));
    if accepted != observed_total {
        return fail("projection.accepted_observation_count does not match subjects");
    }
    if counter(raw, "lineage_observation_count") != accepted {
        return fail("projection.lineage_observation_count does not match accepted observations");
    }

    // Status.
    let ok = is_true(get(raw, "ok"));
    let ready = is_true(get(raw, "projection_ready"));
    if status == "rejected" {
        if ok || ready {
            return fail("rejected projection has invalid readiness state");
        }
        let accepted_state = [
            "accepted_observation_count",
            "duplicate_observation_count",
            "conflicting_observation_count",
            "lineage_observation_count",
            "subject_count",
            "item_subject_count",
            "set_subject_count",
            "unresolved_lineage_count",
        ];
        if accepted_state.iter().any(|k| counter(raw, k) != 0) {
            return fail("rejected projection must not contain accepted state");
        }
        if !subjects.is_empty() || !last_at.is_null() || !last_id.is_null() {
            return fail("rejected projection must not contain subjects or history");
        }
    } else if !ok {
        return fail("accepted projection must have ok=true");
    }
    if status == "ready" && (accepted < 1 || conflicting != 0 || rejected != 0 || !ready) {
        return fail("ready projection has conflicting state");
    }
    if status == "review_required" {
        if ready {
            return fail("review-required projection must not be ready");
        }
        if conflicting == 0 && !subjects.iter().any(|s| s.review_state == "conflict") {
            return fail("review-required projection has no review trigger");
        }
    }
    if status == "empty"
        && (accepted != 0
            || duplicate != 0
            || conflicting != 0
            || rejected != 0
            || !subjects.is_empty()
            || ready)
    {
        return fail("empty projection has observation state");
    }

    // History.
    let history = match get(raw, "observation_history") {
        Value::Array(items) if items.len() <= MAX_HISTORY => items,
        _ => return fail("projection.observation_history must be bounded"),
    };
    if status == "rejected" && !history.is_empty() {
        return fail("rejected projection must not contain observation history");
    }
    let mut observations: Vec<Observation> = Vec::with_capacity(history.len());
    let mut by_subject: Vec<Vec<usize>> = vec![Vec::new(); subjects.len()];
    for (index, entry) in history.iter().enumerate() {
        let entry = object(
            entry,
            format_args!("projection.observation_history[{index}]"),
        )?;
        validate_history_entry(entry, index)?;
        let Some(observation) = observation_from_history(entry, &context) else {
            return fail(format!(
                "projection.observation_history[{index}] is not canonical"
            ));
        };
        if get(entry, "observation_fingerprint").as_str() != Some(&observation.fingerprint()) {
            return fail(format!(
                "projection.observation_history[{index}].observation_fingerprint is invalid"
            ));
        }
        let expected_subject = subject::subject_id(&observation);
        if get(entry, "subject_id").as_str() != Some(expected_subject.as_str()) {
            return fail(format!(
                "projection.observation_history[{index}].subject_id is invalid"
            ));
        }
        let Some(&subject_index) = by_id.get(expected_subject.as_str()) else {
            return fail(format!(
                "projection.observation_history[{index}] references an unknown subject"
            ));
        };
        by_subject[subject_index].push(observations.len());
        observations.push(observation);
    }
    let mut ids = BTreeSet::new();
    if !observations
        .iter()
        .all(|o| ids.insert(o.observation_id.as_str()))
    {
        return fail("projection.observation_history contains duplicate ids");
    }
    let truncated = is_true(get(raw, "observation_history_truncated"));
    let expected_truncated = accepted > MAX_HISTORY as i128;
    if truncated != expected_truncated {
        return fail("projection.observation_history_truncated is inconsistent");
    }
    let expected_length = if expected_truncated {
        MAX_HISTORY as i128
    } else {
        accepted
    };
    if history.len() as i128 != expected_length {
        return fail("projection.observation_history length is inconsistent");
    }
    if observations
        .windows(2)
        .any(|w| w[0].order_key() > w[1].order_key())
    {
        return fail("projection.observation_history is not chronologically ordered");
    }
    if subjects
        .iter()
        .zip(&by_subject)
        .any(|(s, members)| members.len() as i128 > s.observation_count)
    {
        return fail("projection history exceeds subject observation count");
    }
    for (subject, members) in subjects.iter().zip(&by_subject) {
        let id = subject.subject_id;
        if members.is_empty() {
            return fail(format!(
                "projection subject {id} is missing observation history"
            ));
        }
        if subject.observation_count != members.len() as i128 && !truncated {
            return fail(format!(
                "projection subject {id} observation count is inconsistent"
            ));
        }
        let members: Vec<&Observation> = members.iter().map(|&i| &observations[i]).collect();
        for entry in &members {
            if entry.attribution_level != subject.level {
                return fail(format!(
                    "projection subject {id} attribution level is inconsistent"
                ));
            }
            if entry.memory_ref_digests != subject.digests {
                return fail(format!(
                    "projection subject {id} memory digests are inconsistent"
                ));
            }
        }
        if !truncated {
            let expected = expected_subject(id, subject.level, &subject.digests, &members, rules);
            check_reduced_fields(id, subject.raw, &expected)?;
        }
        let last = subject::latest(&members);
        if get(subject.raw, "last_observed_at").as_str() != last.map(|o| o.created_at.as_str())
            || get(subject.raw, "last_observation_id").as_str()
                != last.map(|o| o.observation_id.as_str())
        {
            return fail(format!(
                "projection subject {id} latest observation fields are inconsistent"
            ));
        }
    }
    let all: Vec<&Observation> = observations.iter().collect();
    if let Some(last) = subject::latest(&all) {
        if last_at.as_str() != Some(last.created_at.as_str())
            || last_id.as_str() != Some(last.observation_id.as_str())
        {
            return fail("projection latest observation fields are inconsistent");
        }
    } else if !last_at.is_null() || !last_id.is_null() {
        return fail("projection latest observation fields require history");
    }

    validate_rejections(raw, status, conflicting, duplicate, rejected)?;
    validate_proposals(raw, status, &subjects, &by_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utility::testkit::{Spec, history_overflow, project};

    fn tamper(projection: &Value, edit: impl FnOnce(&mut Map)) -> Value {
        let mut out = projection.clone();
        if let Value::Object(m) = &mut out {
            edit(m);
        }
        out
    }

    /// The projection of one helpful deterministic-effect item observation.
    fn one_helpful_item() -> Value {
        project(&[Spec::item("helpful", "deterministic_effect", 0.5, "v")
            .build()
            .to_value()])
    }

    fn subject_mut(m: &mut Map) -> &mut Map {
        match m.get_mut("subjects") {
            Some(Value::Array(items)) => match items.first_mut() {
                Some(Value::Object(s)) => s,
                _ => panic!("subject"),
            },
            _ => panic!("subjects"),
        }
    }

    fn harmful_correction_with_history_overflow() -> Value {
        project(&history_overflow(Spec::item(
            "harmful",
            "owner_correction",
            0.8,
            "owner",
        )))
    }

    #[test]
    fn relabelled_truncated_subject_fails_the_joint_evidence_rule() {
        let projection = harmful_correction_with_history_overflow();
        let tampered = tamper(&projection, |m| {
            let s = subject_mut(m);
            s.insert("effective_utility_label", "helpful");
            s.insert("utility_estimate", 0.8);
            s.insert(
                "review",
                Value::Object(crate::obj! {
                    "state" => "none", "proposed_action" => "none",
                    "reason_codes" => Value::Array(Box::default()), "quarantine_proposed" => false,
                    "automatic_deletion" => false, "action_authority_granted" => false,
                }),
            );
        });
        assert_eq!(
            validate_projection(&tampered).expect_err("tampered").0,
            "projection.subjects[0].effective_utility_label has no supporting observation in the strongest-tier joint evidence summary"
        );
    }

    #[test]
    fn accepts_integer_bounds_like_python_equality() {
        let projection = one_helpful_item();
        let relaxed = tamper(&projection, |m| {
            subject_mut(m).insert(
                "utility_bounds",
                Value::Object(crate::obj! {"min" => -1, "max" => true}),
            );
        });
        assert_eq!(validate_projection(&relaxed), Ok(()));
    }

    #[test]
    fn rejects_a_changed_counter() {
        let projection = one_helpful_item();
        let tampered = tamper(&projection, |m| {
            m.insert("duplicate_observation_count", true)
        });
        assert_eq!(
            validate_projection(&tampered).expect_err("bool counter").0,
            "projection.duplicate_observation_count must be a non-negative integer"
        );
        let tampered = tamper(&projection, |m| m.insert("subject_count", 2));
        assert_eq!(
            validate_projection(&tampered).expect_err("count").0,
            "projection.subject_count does not match subjects"
        );
    }

    #[test]
    fn rejects_a_history_fingerprint_that_does_not_match() {
        let projection = one_helpful_item();
        let tampered = tamper(&projection, |m| {
            if let Some(Value::Array(h)) = m.get_mut("observation_history")
                && let Some(Value::Object(e)) = h.first_mut()
            {
                e.insert(
                    "observation_fingerprint",
                    format!("muof_{}", "0".repeat(64)),
                );
            }
        });
        assert_eq!(
            validate_projection(&tampered).expect_err("fingerprint").0,
            "projection.observation_history[0].observation_fingerprint is invalid"
        );
    }
}

//! The readback validator of `memory_utility_ledger_projection_v0` and `_v1`.
//!
//! Reuses the subject (v0 or v1), aggregate, history-entry, rejection and proposal rules
//! of [`crate::utility::validate`] and adds the ledger packet's own: exact uncapped
//! counters that must agree with each other, the reducer identity, page fields, subjects
//! in `subject_id` order, history bounded per subject (recomputed and compared when it is
//! complete). Pure; reports the first violated rule.

use std::collections::{BTreeMap, BTreeSet};

use crate::utility::observation::{AttributionLevel, Observation};
use crate::utility::reducer::{self, MAX_REJECTIONS, ReducerContext, Rules};
use crate::utility::strict::{
    enum_str, exact_fields, non_negative_int, object, observation_ref, strict_ref, strict_timestamp,
};
use crate::utility::validate::{
    SubjectView, check_reduced_fields, expected_subject, observation_from_history,
    validate_aggregate, validate_aggregate_v1, validate_history_entry, validate_proposals,
    validate_rejections, validate_subject,
};
use crate::wire::json::{Map, Value};
use crate::wire::text::{FieldError, FieldResult};

use super::packets::{
    LEDGER_REDUCER_VERSION, MAX_PAGE, PROJECTION_SCHEMA_VERSION, PROJECTION_V1_SCHEMA_VERSION,
    ledger_identity,
};
use super::rows::HISTORY_PER_SUBJECT;

const FIELDS: [&str; 34] = [
    "ok",
    "schema_version",
    "status",
    "projection_ready",
    "ledger_reducer_version",
    "reducer_version",
    "reducer_identity",
    "scope",
    "retrieval_snapshot_ref",
    "policy_snapshot_ref",
    "delivery_count",
    "accepted_observation_count",
    "duplicate_observation_count",
    "conflicting_observation_count",
    "rejected_observation_count",
    "lineage_observation_count",
    "subject_count",
    "item_subject_count",
    "set_subject_count",
    "unresolved_lineage_count",
    "conflict_subject_count",
    "last_observed_at",
    "last_observation_id",
    "page",
    "history_per_subject",
    "subjects",
    "rejections",
    "rejections_truncated",
    "review_proposals",
    "read_only",
    "grants_new_action_authority",
    "provider_write_performed",
    "external_writes_performed",
    "raw_content_captured",
];

const COUNTERS: [&str; 11] = [
    "delivery_count",
    "accepted_observation_count",
    "duplicate_observation_count",
    "conflicting_observation_count",
    "rejected_observation_count",
    "lineage_observation_count",
    "subject_count",
    "item_subject_count",
    "set_subject_count",
    "unresolved_lineage_count",
    "conflict_subject_count",
];

fn fail<T>(message: impl Into<String>) -> FieldResult<T> {
    Err(FieldError(message.into()))
}

fn get<'a>(map: &'a Map, key: &str) -> &'a Value {
    map.get(key).unwrap_or(&Value::Null)
}

fn counter(raw: &Map, key: &str) -> i128 {
    non_negative_int(get(raw, key)).unwrap_or(0)
}

/// Validates a `memory_utility_ledger_projection_v0` packet.
pub fn validate_ledger_projection(value: &Value) -> FieldResult<()> {
    validate_page(value, PROJECTION_SCHEMA_VERSION)
}

/// Validates a `memory_utility_ledger_projection_v1` packet: the v0 packet's rules with
/// the v1 subject rules (each complete history reduced again by them).
pub fn validate_ledger_projection_v1(value: &Value) -> FieldResult<()> {
    validate_page(value, PROJECTION_V1_SCHEMA_VERSION)
}

fn validate_page(value: &Value, schema_version: &str) -> FieldResult<()> {
    let raw = object(value, "projection")?;
    exact_fields(raw, &FIELDS, "projection")?;
    if get(raw, "schema_version").as_str() != Some(schema_version) {
        return fail("projection.schema_version mismatch");
    }
    if get(raw, "ledger_reducer_version").as_str() != Some(LEDGER_REDUCER_VERSION) {
        return fail("projection.ledger_reducer_version is invalid");
    }
    let status = enum_str(
        get(raw, "status"),
        &["ready", "empty", "review_required"],
        "projection.status",
    )?;
    for key in [
        "ok",
        "projection_ready",
        "rejections_truncated",
        "read_only",
    ] {
        if get(raw, key).as_bool().is_none() {
            return fail(format!("projection.{key} must be a boolean"));
        }
    }
    if get(raw, "ok") != &Value::Bool(true) || get(raw, "read_only") != &Value::Bool(true) {
        return fail("projection.ok and projection.read_only must be true");
    }
    for key in [
        "grants_new_action_authority",
        "provider_write_performed",
        "external_writes_performed",
        "raw_content_captured",
    ] {
        if get(raw, key) != &Value::Bool(false) {
            return fail(format!("projection.{key} must be false"));
        }
    }
    let context = ReducerContext::strict(
        get(raw, "scope"),
        get(raw, "retrieval_snapshot_ref"),
        get(raw, "policy_snapshot_ref"),
        get(raw, "reducer_version"),
    )?;
    if get(raw, "reducer_identity").as_str()
        != Some(ledger_identity(&context, schema_version).as_str())
    {
        return fail("projection.reducer_identity is invalid");
    }
    let rules = if schema_version == PROJECTION_V1_SCHEMA_VERSION {
        match Rules::of(&context.reducer_version) {
            Ok(rules @ Rules::V1(_)) => rules,
            _ => {
                return fail(format!(
                    "projection.reducer_version must name {} in a {schema_version} packet",
                    reducer::v1::REDUCER_V1
                ));
            }
        }
    } else {
        Rules::V0
    };
    for key in COUNTERS {
        if non_negative_int(get(raw, key)).is_none() {
            return fail(format!("projection.{key} must be a non-negative integer"));
        }
    }
    let deliveries = counter(raw, "delivery_count");
    let accepted = counter(raw, "accepted_observation_count");
    let duplicate = counter(raw, "duplicate_observation_count");
    let conflicting = counter(raw, "conflicting_observation_count");
    let rejected = counter(raw, "rejected_observation_count");
    let subject_count = counter(raw, "subject_count");
    let conflict_subjects = counter(raw, "conflict_subject_count");
    if counter(raw, "lineage_observation_count") != accepted {
        return fail("projection.lineage_observation_count does not match accepted observations");
    }
    if subject_count
        != counter(raw, "item_subject_count")
            + counter(raw, "set_subject_count")
            + counter(raw, "unresolved_lineage_count")
    {
        return fail("projection.subject_count does not match its levels");
    }
    if subject_count > accepted || (subject_count == 0) != (accepted == 0) {
        return fail("projection.subject_count is inconsistent with accepted observations");
    }
    if conflict_subjects > subject_count {
        return fail("projection.conflict_subject_count exceeds subject_count");
    }
    // deliveries = accepted + duplicate + Σ versions of conflicting ids, and each
    // conflicting id has between 2 and all of its deliveries as versions.
    let versions = deliveries - accepted - duplicate;
    if versions < 2 * conflicting || versions > rejected || (conflicting == 0) != (rejected == 0) {
        return fail("projection delivery counters are inconsistent");
    }
    let review_required = conflicting > 0 || conflict_subjects > 0;
    let expected_status = if review_required {
        "review_required"
    } else if accepted > 0 {
        "ready"
    } else {
        "empty"
    };
    if status != expected_status {
        return fail("projection.status is inconsistent with its counters");
    }
    if get(raw, "projection_ready") != &Value::Bool(accepted > 0 && !review_required) {
        return fail("projection.projection_ready is inconsistent");
    }
    if non_negative_int(get(raw, "history_per_subject")) != Some(HISTORY_PER_SUBJECT as i128) {
        return fail("projection.history_per_subject is invalid");
    }
    let last_at = get(raw, "last_observed_at");
    let last_id = get(raw, "last_observation_id");
    if last_at.is_null() != last_id.is_null() || last_at.is_null() != (accepted == 0) {
        return fail("projection latest observation fields are inconsistent");
    }
    let last_instant = if last_at.is_null() {
        None
    } else {
        let instant = strict_timestamp(last_at, "projection.last_observed_at")?;
        observation_ref(last_id, "projection.last_observation_id")?;
        Some(instant)
    };

    // Page.
    let page = object(get(raw, "page"), "projection.page")?;
    exact_fields(
        page,
        &["limit", "after", "returned", "next_after"],
        "projection.page",
    )?;
    let limit = match non_negative_int(get(page, "limit")) {
        Some(l) if (1..=MAX_PAGE as i128).contains(&l) => l,
        _ => return fail("projection.page.limit is invalid"),
    };
    for key in ["after", "next_after"] {
        let v = get(page, key);
        if !v.is_null() {
            strict_ref(v, format!("projection.page.{key}"))?;
        }
    }
    let subjects_raw = match get(raw, "subjects") {
        Value::Array(items) if items.len() as i128 <= limit => items,
        _ => return fail("projection.subjects must be a list no longer than the page limit"),
    };
    if non_negative_int(get(page, "returned")) != Some(subjects_raw.len() as i128) {
        return fail("projection.page.returned does not match subjects");
    }
    let next_after = get(page, "next_after");
    if !next_after.is_null() {
        let last = subjects_raw.last().and_then(|s| s.get("subject_id"));
        if subjects_raw.len() as i128 != limit || last != Some(next_after) {
            return fail("projection.page.next_after must be the last subject of a full page");
        }
    }

    // Subjects.
    let mut seen = BTreeSet::new();
    let mut views: Vec<SubjectView<'_>> = Vec::with_capacity(subjects_raw.len());
    let mut previous_key: Option<String> = None;
    let mut observed_total: i128 = 0;
    let mut page_conflicts: i128 = 0;
    let mut stripped: Vec<Map> = Vec::with_capacity(subjects_raw.len());
    for (index, subject) in subjects_raw.iter().enumerate() {
        let label = format!("projection.subjects[{index}]");
        let subject = object(subject, &label)?;
        let mut core = subject.clone();
        core.remove("observation_history");
        core.remove("observation_history_truncated");
        if core.len() + 2 != subject.len() {
            return fail(format!(
                "{label} must carry observation_history and observation_history_truncated"
            ));
        }
        stripped.push(core);
    }
    for (index, core) in stripped.iter().enumerate() {
        let label = format!("projection.subjects[{index}]");
        let view = validate_subject(core, index, &mut seen, rules)?;
        match rules {
            Rules::V0 => validate_aggregate(core, &label)?,
            Rules::V1(_) => validate_aggregate_v1(core, &label)?,
        }
        let key = view.subject_id.to_owned();
        if previous_key.as_ref().is_some_and(|p| *p >= key) {
            return fail("projection.subjects are not ordered by subject_id");
        }
        previous_key = Some(key);
        observed_total = observed_total.saturating_add(view.observation_count);
        if view.review_state == "conflict" {
            page_conflicts += 1;
        }
        views.push(view);
    }
    if observed_total > accepted || page_conflicts > conflict_subjects {
        return fail("projection page exceeds the partition counters");
    }
    if views.len() as i128 > subject_count {
        return fail("projection page has more subjects than subject_count");
    }
    for (index, (subject, view)) in subjects_raw.iter().zip(&views).enumerate() {
        validate_subject_history(subject, view, index, &context, last_instant.as_ref(), rules)?;
    }

    // Rejections: the v0 rules with the ledger's uncapped counters.
    let rejections = match get(raw, "rejections") {
        Value::Array(items) => items,
        _ => return fail("projection.rejections must be a list"),
    };
    if get(raw, "rejections_truncated") != &Value::Bool(conflicting > MAX_REJECTIONS as i128) {
        return fail("projection.rejections_truncated is inconsistent");
    }
    if rejections.len() as i128 != conflicting.min(MAX_REJECTIONS as i128) {
        return fail("projection rejection count does not match conflicts");
    }
    let mut rejection_view = Map::new();
    rejection_view.insert("rejections", Value::Array(rejections.clone()));
    validate_rejections(&rejection_view, status, conflicting, duplicate, rejected)?;
    let mut previous_id: Option<&Value> = None;
    for record in rejections {
        let id = record.get("observation_id");
        if let (Some(Value::Str(a)), Some(Value::Str(b))) = (previous_id, id)
            && a >= b
        {
            return fail("projection.rejections are not ordered by observation_id");
        }
        previous_id = id;
    }

    let by_id: BTreeMap<&str, usize> = views
        .iter()
        .enumerate()
        .map(|(i, s)| (s.subject_id, i))
        .collect();
    let mut proposal_view = Map::new();
    proposal_view.insert("review_proposals", get(raw, "review_proposals").clone());
    validate_proposals(&proposal_view, status, &views, &by_id)
}

fn validate_subject_history(
    subject: &Value,
    view: &SubjectView<'_>,
    index: usize,
    context: &ReducerContext,
    packet_last: Option<&crate::wire::timestamp::Instant>,
    rules: Rules,
) -> FieldResult<()> {
    let id = view.subject_id;
    let history = match subject.get("observation_history") {
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= HISTORY_PER_SUBJECT => {
            items
        }
        _ => {
            return fail(format!(
                "projection subject {id} history must hold 1 to {HISTORY_PER_SUBJECT} entries"
            ));
        }
    };
    let truncated = match subject.get("observation_history_truncated") {
        Some(Value::Bool(b)) => *b,
        _ => {
            return fail(format!(
                "projection subject {id} history truncation flag is invalid"
            ));
        }
    };
    if truncated != (view.observation_count > history.len() as i128) {
        return fail(format!(
            "projection subject {id} history truncation flag is inconsistent"
        ));
    }
    let mut members: Vec<Observation> = Vec::with_capacity(history.len());
    for (j, entry) in history.iter().enumerate() {
        let entry = object(
            entry,
            format!("projection.subjects[{index}].observation_history[{j}]"),
        )?;
        validate_history_entry(entry, j)?;
        let Some(observation) = observation_from_history(entry, context) else {
            return fail(format!(
                "projection subject {id} history entry {j} is not canonical"
            ));
        };
        if get(entry, "observation_fingerprint").as_str() != Some(&observation.fingerprint()) {
            return fail(format!(
                "projection subject {id} history entry {j} fingerprint is invalid"
            ));
        }
        if reducer::subject_id(&observation) != id
            || observation.attribution_level != view.level
            || observation.memory_ref_digests != view.digests
        {
            return fail(format!(
                "projection subject {id} history entry {j} belongs to another subject"
            ));
        }
        members.push(observation);
    }
    if members
        .windows(2)
        .any(|w| w[0].order_key() >= w[1].order_key())
    {
        return fail(format!(
            "projection subject {id} history is not chronologically ordered"
        ));
    }
    let latest = members.last();
    if get(view.raw, "last_observed_at").as_str() != latest.map(|o| o.created_at.as_str())
        || get(view.raw, "last_observation_id").as_str()
            != latest.map(|o| o.observation_id.as_str())
    {
        return fail(format!(
            "projection subject {id} latest observation fields are inconsistent"
        ));
    }
    if let (Some(last), Some(packet_last)) = (latest, packet_last)
        && last.created_instant > *packet_last
    {
        return fail("projection latest observation fields are inconsistent");
    }
    if !truncated {
        let mut by_id: Vec<&Observation> = members.iter().collect();
        by_id.sort_by(|a, b| a.observation_id.cmp(&b.observation_id));
        let expected = expected_subject(id, view.level, &view.digests, &by_id, rules);
        check_reduced_fields(id, view.raw, &expected)?;
    }
    if view.level == AttributionLevel::Item && view.digests.len() != 1 {
        return fail(format!(
            "projection subject {id} item attribution must contain one digest"
        ));
    }
    Ok(())
}

/// `utility-validate` on an already parsed input: a ledger projection packet (by its
/// `schema_version`, v0 or v1) is checked here, a `memory_utility_projection_v1` with the
/// v1 rules, any other as a `utility-project` projection
/// ([`crate::utility::validate::validate_projection`]); the packet's `ok` says whether
/// the projection is valid.
pub fn validate_input(input: &Value) -> Value {
    let result = match input.get("schema_version").and_then(Value::as_str) {
        Some(PROJECTION_SCHEMA_VERSION) => validate_ledger_projection(input),
        Some(PROJECTION_V1_SCHEMA_VERSION) => validate_ledger_projection_v1(input),
        Some(reducer::v1::PROJECTION_V1_SCHEMA_VERSION) => {
            crate::utility::validate::validate_projection_v1(input)
        }
        _ => crate::utility::validate_projection(input),
    };
    crate::utility::validation_packet(&result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::packets::{self, LedgerProjectionPacket, Page};
    use crate::ledger::rows::Counters;
    use crate::utility::testkit;

    /// The validator and the typed packet are one description: it accepts exactly the
    /// keys the packet prints, in the packet's order.
    #[test]
    fn the_readback_knows_exactly_the_keys_of_the_typed_packet() {
        let input = testkit::context();
        let field = |key: &str| input.get(key).cloned().unwrap_or(Value::Null);
        let context = ReducerContext::strict(
            &field("scope"),
            &field("retrieval_snapshot_ref"),
            &field("policy_snapshot_ref"),
            &Value::from(reducer::DEFAULT_REDUCER_VERSION),
        )
        .expect("valid context");
        let page = Page {
            limit: 1,
            after: None,
            returned: 0,
            next_after: None,
        };
        let packet = LedgerProjectionPacket::new(
            &context,
            &Counters::default(),
            page,
            Vec::new(),
            Vec::new(),
            None,
        );
        let value = packets::to_value(&packet).expect("printable");
        let keys: Vec<&str> = value
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, FIELDS);
        assert!(COUNTERS.iter().all(|k| FIELDS.contains(k)));
        validate_ledger_projection(&value).expect("an empty page passes its readback");
    }
}

//! The readback validator of `memory_utility_projection_v0`.
//!
//! Checks a projection packet (our own output, a caller's `previous_projection`, or any
//! packet given to `utility-validate`) rule by rule in the reference's order and reports
//! the first violated rule with the reference's message. Where the reference compares
//! with Python `==`, so does this module: `1` equals `1.0`, object key order
//! is ignored. It re-derives history fingerprints and subject state but never repairs or
//! normalizes the packet. Pure.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

use crate::wire::json::{Map, Value};
use crate::wire::text::{FieldError, FieldResult};

use super::bounds::{
    MAX_CONFLICT_FINGERPRINTS, MAX_HISTORY, MAX_HISTORY_EVIDENCE_REFS, MAX_OBSERVATIONS,
    MAX_REJECTIONS, MAX_REVIEW_REASON_CODES, MAX_SUBJECTS, UTILITY_MAX, UTILITY_MIN,
};
use super::observation::{
    AttributionLevel, EvidenceBasis, Observation, UtilityLabel, validate_observation_fields,
};
use super::reducer::context::{PROJECTION_SCHEMA_VERSION, ReducerContext, reason};
use super::reducer::subject;
use super::strict::{
    bounded, check_memory_digests, check_opaque_refs, enum_str, exact_fields, finite_float,
    is_fingerprint, memory_digests, non_negative_int, object, observation_ref, opaque_refs, py_eq,
    strict_ref, strict_timestamp,
};

const PROJECTION_FIELDS: [&str; 30] = [
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

const COUNTERS: [&str; 9] = [
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

const SUBJECT_FIELDS: [&str; 19] = [
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

const REVIEW_FIELDS: [&str; 6] = [
    "state",
    "proposed_action",
    "reason_codes",
    "quarantine_proposed",
    "automatic_deletion",
    "action_authority_granted",
];

const SUMMARY_FIELDS: [&str; 4] = [
    "evidence_basis",
    "utility_label",
    "observation_count",
    "combined_confidence",
];

const HISTORY_FIELDS: [&str; 15] = [
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

const REJECTION_FIELDS: [&str; 8] = [
    "observation_id",
    "reason_codes",
    "delivery_count",
    "delivery_fingerprints",
    "delivery_fingerprints_truncated",
    "quarantine_proposed",
    "automatic_deletion",
    "action_authority_granted",
];

const PROPOSAL_FIELDS: [&str; 9] = [
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

const STATUSES: [&str; 4] = ["ready", "empty", "review_required", "rejected"];
const REVIEW_STATES: [&str; 4] = [
    "none",
    "attenuation_proposed",
    "conflict",
    "unresolved_attribution",
];
const REVIEW_ACTIONS: [&str; 4] = [
    "none",
    "attenuate_or_review",
    "manual_review",
    "collect_attribution",
];

/// `{parent}[{index}]`, formatted only when a message needs it.
struct Indexed<'a>(&'a dyn Display, usize);

impl Display for Indexed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// `{parent}.{key}`, formatted only when a message needs it.
struct Field<'a>(&'a dyn Display, &'static str);

impl Display for Field<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

fn fail<T>(message: impl Into<String>) -> FieldResult<T> {
    Err(FieldError(message.into()))
}

fn get<'a>(map: &'a Map, key: &str) -> &'a Value {
    map.get(key).unwrap_or(&Value::Null)
}

fn is_false(v: &Value) -> bool {
    *v == Value::Bool(false)
}

fn is_true(v: &Value) -> bool {
    *v == Value::Bool(true)
}

/// The parts of a subject the later rules need.
pub(crate) struct SubjectView<'a> {
    pub(crate) raw: &'a Map,
    pub(crate) subject_id: &'a str,
    pub(crate) level: AttributionLevel,
    pub(crate) digests: Vec<String>,
    pub(crate) review_state: &'a str,
    pub(crate) observation_count: i128,
}

/// One validated evidence-label summary item.
struct SummaryItem<'a> {
    basis: EvidenceBasis,
    label: UtilityLabel,
    count: i128,
    combined_confidence: &'a Value,
}

fn counts(v: &Value, keys: &[&str], label: impl Display) -> FieldResult<Vec<i128>> {
    let map = object(v, &label)?;
    exact_fields(map, keys, &label)?;
    keys.iter()
        .map(|key| {
            non_negative_int(get(map, key))
                .ok_or_else(|| FieldError(format!("{label}.{key} must be a non-negative integer")))
        })
        .collect()
}

fn evidence_label_summary<'a>(
    v: &'a Value,
    label: impl Display,
) -> FieldResult<Vec<SummaryItem<'a>>> {
    let items = match v {
        Value::Array(items) if (1..=20).contains(&items.len()) => items,
        _ => return fail(format!("{label} must be a bounded non-empty list")),
    };
    let mut out: Vec<SummaryItem<'a>> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let item_label = Indexed(&label, index);
        let item = object(item, &item_label)?;
        exact_fields(item, &SUMMARY_FIELDS, &item_label)?;
        let basis = enum_str(
            get(item, "evidence_basis"),
            EvidenceBasis::NAMES,
            format_args!("{item_label}.evidence_basis"),
        )?;
        let utility_label = enum_str(
            get(item, "utility_label"),
            UtilityLabel::NAMES,
            format_args!("{item_label}.utility_label"),
        )?;
        let count = match non_negative_int(get(item, "observation_count")) {
            Some(c) if c >= 1 => c,
            _ => return fail(format!("{item_label}.observation_count is invalid")),
        };
        let confidence = finite_float(
            get(item, "combined_confidence"),
            format_args!("{item_label}.combined_confidence"),
        )?;
        if !(0.0..=1.0).contains(&confidence) {
            return fail(format!("{item_label}.combined_confidence is out of bounds"));
        }
        let (Some(basis), Some(utility_label)) = (
            EvidenceBasis::parse(basis),
            UtilityLabel::parse(utility_label),
        ) else {
            return fail(format!("{item_label}.evidence_basis is invalid"));
        };
        if out
            .iter()
            .any(|p| p.basis == basis && p.label == utility_label)
        {
            return fail(format!("{label} contains a duplicate evidence-label pair"));
        }
        out.push(SummaryItem {
            basis,
            label: utility_label,
            count,
            combined_confidence: get(item, "combined_confidence"),
        });
    }
    if out
        .windows(2)
        .any(|w| (w[0].basis, w[0].label) > (w[1].basis, w[1].label))
    {
        return fail(format!("{label} is not canonically ordered"));
    }
    Ok(out)
}

fn validate_review(review: &Map, label: impl Display) -> FieldResult<()> {
    exact_fields(review, &REVIEW_FIELDS, &label)?;
    let state = enum_str(
        get(review, "state"),
        &REVIEW_STATES,
        format_args!("{label}.state"),
    )?;
    enum_str(
        get(review, "proposed_action"),
        &REVIEW_ACTIONS,
        format_args!("{label}.proposed_action"),
    )?;
    let reasons = opaque_refs(
        get(review, "reason_codes"),
        format_args!("{label}.reason_codes"),
        0,
        MAX_REVIEW_REASON_CODES,
    )?;
    if (state != "none") == reasons.is_empty() {
        return fail(format!("{label}.reason_codes are inconsistent with state"));
    }
    let Value::Bool(quarantine) = get(review, "quarantine_proposed") else {
        return fail(format!("{label}.quarantine_proposed is invalid"));
    };
    if *quarantine != (state == "conflict") {
        return fail(format!("{label}.quarantine_proposed is inconsistent"));
    }
    if !is_false(get(review, "automatic_deletion"))
        || !is_false(get(review, "action_authority_granted"))
    {
        return fail(format!("{label} boundary is invalid"));
    }
    Ok(())
}

pub(crate) fn validate_subject<'a>(
    subject: &'a Map,
    index: usize,
    seen: &mut BTreeSet<&'a str>,
) -> FieldResult<SubjectView<'a>> {
    let label = Indexed(&"projection.subjects", index);
    exact_fields(subject, &SUBJECT_FIELDS, &label)?;
    let subject_id = strict_ref(
        get(subject, "subject_id"),
        format_args!("{label}.subject_id"),
    )?;
    if !seen.insert(subject_id) {
        return fail("projection subjects must be unique");
    }
    let level = enum_str(
        get(subject, "attribution_level"),
        AttributionLevel::NAMES,
        format_args!("{label}.attribution_level"),
    )?;
    let level = AttributionLevel::parse(level).unwrap_or(AttributionLevel::None);
    let digests = memory_digests(
        get(subject, "memory_ref_digests"),
        format_args!("{label}.memory_ref_digests"),
    )?;
    if level == AttributionLevel::Item && digests.len() != 1 {
        return fail(format!("{label}.item attribution must contain one digest"));
    }
    let numbers = (
        finite_float(get(subject, "utility_estimate"), "utility_estimate"),
        finite_float(get(subject, "confidence"), "confidence"),
        finite_float(get(subject, "uncertainty"), "uncertainty"),
    );
    let (Ok(utility), Ok(confidence), Ok(uncertainty)) = numbers else {
        return fail(format!("{label} numeric fields are invalid"));
    };
    if !(UTILITY_MIN..=UTILITY_MAX).contains(&utility) {
        return fail(format!("{label}.utility_estimate is out of bounds"));
    }
    if !(0.0..=1.0).contains(&confidence) || !(0.0..=1.0).contains(&uncertainty) {
        return fail(format!("{label} confidence is out of bounds"));
    }
    let utility_label = enum_str(
        get(subject, "effective_utility_label"),
        UtilityLabel::NAMES,
        format_args!("{label}.effective_utility_label"),
    )?;
    let basis = enum_str(
        get(subject, "effective_evidence_basis"),
        EvidenceBasis::NAMES,
        format_args!("{label}.effective_evidence_basis"),
    )?;
    let bounds_label = Field(&label, "utility_bounds");
    let bounds = object(get(subject, "utility_bounds"), &bounds_label)?;
    exact_fields(bounds, &["min", "max"], &bounds_label)?;
    if !py_eq(get(bounds, "min"), &Value::Float(UTILITY_MIN))
        || !py_eq(get(bounds, "max"), &Value::Float(UTILITY_MAX))
    {
        return fail(format!("{label}.utility_bounds are invalid"));
    }
    let support = counts(
        get(subject, "support"),
        UtilityLabel::NAMES,
        format_args!("{label}.support"),
    )?;
    let strength = counts(
        get(subject, "evidence_strength"),
        EvidenceBasis::NAMES,
        format_args!("{label}.evidence_strength"),
    )?;
    let summary = evidence_label_summary(
        get(subject, "evidence_label_summary"),
        format_args!("{label}.evidence_label_summary"),
    )?;
    let count = match non_negative_int(get(subject, "observation_count")) {
        Some(c) if c >= 1 => c,
        _ => return fail(format!("{label}.observation_count is invalid")),
    };
    let sum = |xs: &[i128]| xs.iter().fold(0i128, |a, b| a.saturating_add(*b));
    if sum(&support) != count {
        return fail(format!("{label}.support does not match observation_count"));
    }
    if sum(&strength) != count {
        return fail(format!(
            "{label}.evidence_strength does not match observation_count"
        ));
    }
    let mut summary_support = [0i128; 4];
    let mut summary_strength = [0i128; 5];
    for item in &summary {
        let s = &mut summary_support[item.label.index()];
        *s = s.saturating_add(item.count);
        let e = &mut summary_strength[item.basis.index()];
        *e = e.saturating_add(item.count);
    }
    if summary_support[..] != support[..] {
        return fail(format!(
            "{label}.evidence_label_summary does not match support"
        ));
    }
    if summary_strength[..] != strength[..] {
        return fail(format!(
            "{label}.evidence_label_summary does not match evidence_strength"
        ));
    }
    let basis = EvidenceBasis::parse(basis).unwrap_or(EvidenceBasis::Insufficient);
    if strength[basis.index()] < 1 {
        return fail(format!(
            "{label}.effective_evidence_basis has no supporting observation"
        ));
    }
    let utility_label = UtilityLabel::parse(utility_label).unwrap_or(UtilityLabel::Unknown);
    let expected_utility = match utility_label {
        UtilityLabel::Helpful => bounded(confidence, UTILITY_MIN, UTILITY_MAX),
        UtilityLabel::Harmful => bounded(-confidence, UTILITY_MIN, UTILITY_MAX),
        UtilityLabel::Neutral | UtilityLabel::Unknown => 0.0,
    };
    if utility != expected_utility {
        return fail(format!(
            "{label}.utility_estimate is inconsistent with label"
        ));
    }
    if uncertainty != bounded(1.0 - confidence, 0.0, 1.0) {
        return fail(format!(
            "{label}.uncertainty is inconsistent with confidence"
        ));
    }
    strict_timestamp(
        get(subject, "last_observed_at"),
        format_args!("{label}.last_observed_at"),
    )?;
    observation_ref(
        get(subject, "last_observation_id"),
        format_args!("{label}.last_observation_id"),
    )?;
    let review_label = Field(&label, "review");
    let review = object(get(subject, "review"), &review_label)?;
    validate_review(review, &review_label)?;
    let review_state = get(review, "state").as_str().unwrap_or_default();
    let review_action = get(review, "proposed_action").as_str().unwrap_or_default();
    let known = support[..3].iter().fold(0i128, |a, b| a.saturating_add(*b));
    let expected_review = if level == AttributionLevel::None {
        ("unresolved_attribution", "collect_attribution")
    } else if utility_label == UtilityLabel::Harmful {
        ("attenuation_proposed", "attenuate_or_review")
    } else if utility_label == UtilityLabel::Unknown && known > 0 {
        ("conflict", "manual_review")
    } else {
        ("none", "none")
    };
    if (review_state, review_action) != expected_review {
        return fail(format!(
            "{label}.review is inconsistent with effective utility"
        ));
    }
    if !is_true(get(subject, "read_only"))
        || !is_false(get(subject, "automatic_deletion"))
        || !is_false(get(subject, "action_authority_granted"))
    {
        return fail(format!("{label} boundary is invalid"));
    }
    Ok(SubjectView {
        raw: subject,
        subject_id,
        level,
        digests,
        review_state,
        observation_count: count,
    })
}

/// Rules that still hold after history truncation: the label, confidence and review
/// must follow from the strongest tier of the joint evidence summary.
pub(crate) fn validate_aggregate(subject: &Map, label: impl Display) -> FieldResult<()> {
    let strength = counts(
        get(subject, "evidence_strength"),
        EvidenceBasis::NAMES,
        format_args!("{label}.evidence_strength"),
    )?;
    let strongest = EvidenceBasis::ALL
        .iter()
        .copied()
        .rev()
        .find(|b| strength[b.index()] > 0)
        .unwrap_or(EvidenceBasis::Insufficient);
    if get(subject, "effective_evidence_basis").as_str() != Some(strongest.as_str()) {
        return fail(format!("{label}.effective_evidence_basis is inconsistent"));
    }
    let summary = evidence_label_summary(
        get(subject, "evidence_label_summary"),
        format_args!("{label}.evidence_label_summary"),
    )?;
    let strongest_labels: BTreeSet<UtilityLabel> = summary
        .iter()
        .filter(|p| p.basis == strongest)
        .map(|p| p.label)
        .collect();
    let directional: Vec<UtilityLabel> = strongest_labels
        .iter()
        .copied()
        .filter(|l| l.direction().is_some())
        .collect();
    let lower_direction = summary
        .iter()
        .any(|p| p.label.direction().is_some() && p.basis < strongest);
    let zero = Value::Float(0.0);
    let (expected_label, expected_confidence, expected_review): (
        UtilityLabel,
        &Value,
        (&str, &str, Vec<&str>),
    ) = if get(subject, "attribution_level").as_str() == Some("none") {
        (
            UtilityLabel::Unknown,
            &zero,
            (
                "unresolved_attribution",
                "collect_attribution",
                vec!["attribution_not_established"],
            ),
        )
    } else if strongest_labels.contains(&UtilityLabel::Unknown) {
        let mut reasons = Vec::new();
        if !directional.is_empty() || lower_direction {
            reasons.push("strongest_evidence_unknown");
        }
        if directional.len() > 1 {
            reasons.push("same_evidence_tier_conflict");
        }
        reasons.sort_unstable();
        let (state, action) = if reasons.is_empty() {
            ("none", "none")
        } else {
            ("conflict", "manual_review")
        };
        (UtilityLabel::Unknown, &zero, (state, action, reasons))
    } else if directional.len() != 1 {
        (
            UtilityLabel::Unknown,
            &zero,
            (
                "conflict",
                "manual_review",
                vec!["same_evidence_tier_conflict"],
            ),
        )
    } else {
        let only = directional[0];
        let confidence = summary
            .iter()
            .find(|p| p.basis == strongest && p.label == only)
            .map_or(&zero, |p| p.combined_confidence);
        let review = if only == UtilityLabel::Harmful {
            (
                "attenuation_proposed",
                "attenuate_or_review",
                vec!["negative_utility_requires_review"],
            )
        } else {
            ("none", "none", Vec::new())
        };
        (only, confidence, review)
    };
    let observed_label = get(subject, "effective_utility_label")
        .as_str()
        .and_then(UtilityLabel::parse)
        .unwrap_or(UtilityLabel::Unknown);
    if observed_label.direction().is_some()
        && !summary
            .iter()
            .any(|p| p.basis == strongest && p.label == observed_label)
    {
        return fail(format!(
            "{label}.effective_utility_label has no supporting observation in the strongest-tier joint evidence summary"
        ));
    }
    let review = get(subject, "review");
    let observed_reasons = get(review.as_object().unwrap_or(&Map::new()), "reason_codes").clone();
    let review_matches = review.get("state").and_then(Value::as_str) == Some(expected_review.0)
        && review.get("proposed_action").and_then(Value::as_str) == Some(expected_review.1)
        && py_eq(
            &observed_reasons,
            &crate::wire::json::str_list(&expected_review.2),
        );
    if observed_label != expected_label
        || !py_eq(get(subject, "confidence"), expected_confidence)
        || !review_matches
    {
        return fail(format!(
            "{label} is inconsistent with joint evidence summary"
        ));
    }
    Ok(())
}

pub(crate) fn validate_history_entry(entry: &Map, index: usize) -> FieldResult<()> {
    exact_fields(
        entry,
        &HISTORY_FIELDS,
        format_args!("projection.observation_history[{index}]"),
    )?;
    observation_ref(get(entry, "observation_id"), "history.observation_id")?;
    for key in [
        "subject_id",
        "application_receipt_id",
        "outcome_ref",
        "evaluator_ref",
        "evaluation_version",
    ] {
        strict_ref(get(entry, key), format_args!("history.{key}"))?;
    }
    match get(entry, "observation_fingerprint") {
        Value::Str(s) if is_fingerprint(s) => {}
        _ => return fail("history.observation_fingerprint is invalid"),
    }
    check_memory_digests(
        get(entry, "memory_ref_digests"),
        "history.memory_ref_digests",
    )?;
    enum_str(
        get(entry, "attribution_level"),
        AttributionLevel::NAMES,
        "history attribution_level",
    )?;
    enum_str(
        get(entry, "utility_label"),
        UtilityLabel::NAMES,
        "history utility_label",
    )?;
    enum_str(
        get(entry, "evidence_basis"),
        EvidenceBasis::NAMES,
        "history evidence_basis",
    )?;
    check_opaque_refs(
        get(entry, "reason_codes"),
        "history.reason_codes",
        0,
        MAX_REVIEW_REASON_CODES,
    )?;
    check_opaque_refs(
        get(entry, "evidence_refs"),
        "history.evidence_refs",
        0,
        MAX_HISTORY_EVIDENCE_REFS,
    )?;
    match finite_float(get(entry, "confidence"), "history.confidence") {
        Ok(c) if (0.0..=1.0).contains(&c) => {}
        _ => return fail("history confidence is invalid"),
    }
    strict_timestamp(get(entry, "created_at"), "history.created_at")?;
    Ok(())
}

/// Rebuilds the full observation a history entry stands for, in the packet's context:
/// the entry's fields plus the context's scope and snapshots, fixed schema version and
/// false boundary flags, validated as
/// [`validate_observation`](super::observation::validate_observation) validates that packet.
pub(crate) fn observation_from_history(
    entry: &Map,
    context: &ReducerContext,
) -> Option<Observation> {
    let scope = Value::Object(context.scope.to_sorted_map());
    let retrieval = Value::from(context.retrieval_snapshot_ref.as_str());
    let policy = Value::from(context.policy_snapshot_ref.as_str());
    validate_observation_fields(|key| match key {
        "scope" => &scope,
        "retrieval_snapshot_ref" => &retrieval,
        "policy_snapshot_ref" => &policy,
        _ => get(entry, key),
    })
    .ok()
}

/// The fields of a printed subject that the reducer derives from its observations.
const REDUCED_FIELDS: [&str; 10] = [
    "utility_estimate",
    "effective_utility_label",
    "effective_evidence_basis",
    "confidence",
    "uncertainty",
    "support",
    "evidence_strength",
    "evidence_label_summary",
    "observation_count",
    "review",
];

/// Checks that a printed subject `raw` carries the values of `expected`, the reducer's
/// subject recomputed from its observations, in every derived field.
pub(crate) fn check_reduced_fields(id: &str, raw: &Map, expected: &Value) -> FieldResult<()> {
    for key in REDUCED_FIELDS {
        let want = expected.get(key).unwrap_or(&Value::Null);
        if !py_eq(get(raw, key), want) {
            return fail(format!("projection subject {id} {key} is inconsistent"));
        }
    }
    Ok(())
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
}

/// The header rules of a `memory_utility_projection_v0` packet, in the reference's order:
/// the exact fields, the schema version, the status, (with [`Booleans::Checked`]) the
/// four booleans, `read_only`, the boundary flags, the strict context and its reducer
/// identity.
fn check_header(raw: &Map, booleans: Booleans) -> FieldResult<Header<'_>> {
    exact_fields(raw, &PROJECTION_FIELDS, "projection")?;
    if get(raw, "schema_version").as_str() != Some(PROJECTION_SCHEMA_VERSION) {
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
    Ok(Header { status, context })
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
    let raw = object(value, "projection")?;
    check_header(raw, Booleans::Unchecked)?;
    let subjects = match get(raw, "subjects") {
        Value::Array(items) if items.len() <= MAX_SUBJECTS => items,
        _ => return fail("projection.subjects must be a bounded list"),
    };
    let mut seen = BTreeSet::new();
    for (index, subject) in subjects.iter().enumerate() {
        let subject = object(subject, format_args!("projection.subjects[{index}]"))?;
        validate_subject(subject, index, &mut seen)?;
        validate_aggregate(subject, Indexed(&"projection.subjects", index))?;
    }
    Ok(())
}

/// Validates a `memory_utility_projection_v0` packet; the error is the first violated
/// rule, worded as the reference words it.
pub fn validate_projection(value: &Value) -> FieldResult<()> {
    let raw = object(value, "projection")?;
    let Header { status, context } = check_header(raw, Booleans::Checked)?;
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
        let view = validate_subject(subject, index, &mut seen)?;
        validate_aggregate(subject, Indexed(&"projection.subjects", index))?;
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
            let expected = subject::reduce_subject(id, subject.level, &subject.digests, &members);
            check_reduced_fields(id, subject.raw, &expected.to_value())?;
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

pub(crate) fn validate_rejections(
    raw: &Map,
    status: &str,
    conflicting: i128,
    duplicate: i128,
    rejected: i128,
) -> FieldResult<()> {
    let rejections = match get(raw, "rejections") {
        Value::Array(items) if items.len() <= MAX_REJECTIONS => items,
        _ => return fail("projection.rejections must be bounded"),
    };
    let mut ids: Vec<&str> = Vec::new();
    let mut delivery_counts: Vec<i128> = Vec::new();
    let mut known_duplicates: i128 = 0;
    for (index, item) in rejections.iter().enumerate() {
        let item = object(item, format_args!("projection.rejections[{index}]"))?;
        if item.keys().any(|k| !REJECTION_FIELDS.contains(&k)) || !item.contains_key("reason_codes")
        {
            return fail("projection rejection shape is invalid");
        }
        if status == "rejected" {
            if item.len() != 1 {
                return fail("rejected projection has delivery details");
            }
        } else if conflicting != 0 && item.len() != REJECTION_FIELDS.len() {
            return fail("conflicting projection rejection shape is invalid");
        }
        if let Some(id) = item.get("observation_id") {
            ids.push(observation_ref(id, "projection rejection observation_id")?);
        }
        let reasons = opaque_refs(
            get(item, "reason_codes"),
            format_args!("projection.rejections[{index}].reason_codes"),
            1,
            MAX_REVIEW_REASON_CODES,
        )?;
        if conflicting != 0 && !reasons.iter().any(|r| r == reason::CONFLICTING_DELIVERY) {
            return fail("conflicting rejection reason is missing");
        }
        let mut delivery_count = None;
        if let Some(v) = item.get("delivery_count") {
            match non_negative_int(v) {
                Some(c) if c >= 2 => {
                    delivery_count = Some(c);
                    delivery_counts.push(c);
                }
                _ => return fail("projection rejection delivery_count is invalid"),
            }
        }
        let truncated = item.get("delivery_fingerprints_truncated");
        if truncated.is_some_and(|t| t.as_bool().is_none()) {
            return fail("projection rejection truncation flag is invalid");
        }
        if let Some(v) = item.get("delivery_fingerprints") {
            let fingerprints = opaque_refs(
                v,
                format_args!("projection.rejections[{index}].delivery_fingerprints"),
                2,
                MAX_CONFLICT_FINGERPRINTS,
            )?;
            if fingerprints.iter().any(|f| !is_fingerprint(f)) {
                return fail("projection rejection fingerprint is invalid");
            }
            let listed = fingerprints.len() as i128;
            if delivery_count.is_some_and(|c| c < listed) {
                return fail("projection rejection delivery_count is too small");
            }
            match (truncated.and_then(Value::as_bool), delivery_count) {
                (Some(false), Some(c)) => {
                    known_duplicates = known_duplicates.saturating_add(c - listed)
                }
                (Some(true), _)
                    if fingerprints.len() != MAX_CONFLICT_FINGERPRINTS
                        || delivery_count.is_some_and(|c| c <= listed) =>
                {
                    return fail("projection rejection truncation flag is inconsistent");
                }
                _ => {}
            }
        } else if conflicting != 0 {
            return fail("conflicting rejection fingerprints are missing");
        }
        if conflicting != 0 {
            if !is_true(get(item, "quarantine_proposed")) {
                return fail("conflicting rejection must propose quarantine");
            }
            if !is_false(get(item, "automatic_deletion"))
                || !is_false(get(item, "action_authority_granted"))
            {
                return fail("conflicting rejection boundary is invalid");
            }
        }
    }
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    if unique.len() != ids.len() {
        return fail("projection rejections contain duplicate observation ids");
    }
    if duplicate < known_duplicates {
        return fail("projection duplicate count is below known delivery duplicates");
    }
    if conflicting == 0 {
        if status == "rejected" {
            if rejections.is_empty() || rejected < 1 {
                return fail("rejected projection must include a rejection reason");
            }
        } else if !rejections.is_empty() || rejected != 0 {
            return fail("projection has rejected deliveries without conflicts");
        }
    } else {
        let expected_records = conflicting.min(MAX_REJECTIONS as i128);
        if rejections.len() as i128 != expected_records {
            return fail("projection rejection count does not match conflicts");
        }
        if rejected < conflicting.saturating_mul(2) {
            return fail("projection rejected count is inconsistent with conflicts");
        }
        let total = delivery_counts
            .iter()
            .fold(0i128, |a, b| a.saturating_add(*b));
        if rejections.len() as i128 == conflicting
            && delivery_counts.len() == rejections.len()
            && rejected != total
        {
            return fail("projection rejected count does not match delivery facts");
        }
    }
    Ok(())
}

pub(crate) fn validate_proposals(
    raw: &Map,
    status: &str,
    subjects: &[SubjectView<'_>],
    by_id: &BTreeMap<&str, usize>,
) -> FieldResult<()> {
    let proposals = match get(raw, "review_proposals") {
        Value::Array(items) if items.len() <= MAX_SUBJECTS => items,
        _ => return fail("projection.review_proposals must be bounded"),
    };
    let expected: BTreeSet<&str> = subjects
        .iter()
        .filter(|s| s.review_state != "none")
        .map(|s| s.subject_id)
        .collect();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (index, proposal) in proposals.iter().enumerate() {
        let label = Indexed(&"projection.review_proposals", index);
        let proposal = object(proposal, &label)?;
        exact_fields(proposal, &PROPOSAL_FIELDS, &label)?;
        let subject_id = strict_ref(get(proposal, "subject_id"), "review proposal subject_id")?;
        if !seen.insert(subject_id) {
            return fail("projection review proposals contain duplicate subjects");
        }
        let Some(&subject_index) = by_id.get(subject_id) else {
            return fail("review proposal references an unknown subject");
        };
        let subject = &subjects[subject_index];
        if subject.review_state == "none" {
            return fail("review proposal references a subject without review");
        }
        enum_str(
            get(proposal, "attribution_level"),
            AttributionLevel::NAMES,
            "review proposal attribution_level",
        )?;
        memory_digests(
            get(proposal, "memory_ref_digests"),
            "review proposal memory_ref_digests",
        )?;
        let state = enum_str(
            get(proposal, "state"),
            &REVIEW_STATES,
            "review proposal state",
        )?;
        enum_str(
            get(proposal, "proposed_action"),
            &REVIEW_ACTIONS,
            "review proposal action",
        )?;
        opaque_refs(
            get(proposal, "reason_codes"),
            format_args!("{label}.reason_codes"),
            0,
            MAX_REVIEW_REASON_CODES,
        )?;
        let Value::Bool(quarantine) = get(proposal, "quarantine_proposed") else {
            return fail("review proposal quarantine flag is invalid");
        };
        if *quarantine != (state == "conflict") {
            return fail("review proposal quarantine flag is inconsistent");
        }
        if !is_false(get(proposal, "automatic_deletion"))
            || !is_false(get(proposal, "action_authority_granted"))
        {
            return fail("review proposal boundary is invalid");
        }
        if !py_eq(
            get(proposal, "attribution_level"),
            get(subject.raw, "attribution_level"),
        ) {
            return fail("review proposal attribution level is inconsistent");
        }
        if !py_eq(
            get(proposal, "memory_ref_digests"),
            get(subject.raw, "memory_ref_digests"),
        ) {
            return fail("review proposal memory digests are inconsistent");
        }
        let review = get(subject.raw, "review");
        for key in [
            "state",
            "proposed_action",
            "reason_codes",
            "quarantine_proposed",
        ] {
            if !py_eq(get(proposal, key), review.get(key).unwrap_or(&Value::Null)) {
                return fail(format!("review proposal {key} is inconsistent"));
            }
        }
    }
    if seen != expected {
        return fail("review proposals do not match subject review state");
    }
    if status == "rejected" && !proposals.is_empty() {
        return fail("rejected projection must not contain review proposals");
    }
    Ok(())
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

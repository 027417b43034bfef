//! The readback rules of a projection's rejection records (conflicting deliveries, or
//! the reasons of a rejected packet) and its review proposals.

use std::collections::{BTreeMap, BTreeSet};

use crate::wire::json::{Map, Value};
use crate::wire::text::FieldResult;

use crate::utility::bounds::{
    MAX_CONFLICT_FINGERPRINTS, MAX_REJECTIONS, MAX_REVIEW_REASON_CODES, MAX_SUBJECTS,
};
use crate::utility::observation::AttributionLevel;
use crate::utility::reducer::context::reason;
use crate::utility::strict::{
    enum_str, exact_fields, is_fingerprint, memory_digests, non_negative_int, object,
    observation_ref, opaque_refs, py_eq, strict_ref,
};

use super::subjects::SubjectView;
use super::{
    Indexed, PROPOSAL_FIELDS, REJECTION_FIELDS, REVIEW_ACTIONS, REVIEW_STATES, fail, get, is_false,
    is_true,
};

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

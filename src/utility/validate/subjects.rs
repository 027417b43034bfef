//! The readback rules of one printed subject: its fields, digests, bounds and review,
//! its joint evidence summary against its label, estimate and confidence, and (with
//! the history) the derived fields the reducer recomputes.

use std::collections::BTreeSet;
use std::fmt::Display;

use crate::wire::json::{Map, Value};
use crate::wire::text::{FieldError, FieldResult};

use crate::utility::bounds::{MAX_REVIEW_REASON_CODES, UTILITY_MAX, UTILITY_MIN};
use crate::utility::observation::{AttributionLevel, EvidenceBasis, Observation, UtilityLabel};
use crate::utility::reducer::subject::{self, reduce_subject};
use crate::utility::reducer::v1::{self, Posterior, Rules};
use crate::utility::strict::{
    bounded, enum_str, exact_fields, finite_float, memory_digests, non_negative_int, object,
    observation_ref, opaque_refs, py_eq, strict_ref, strict_timestamp,
};

use super::{
    Field, Indexed, REVIEW_ACTIONS, REVIEW_FIELDS, REVIEW_STATES, SUBJECT_FIELDS,
    SUBJECT_FIELDS_V1, SUMMARY_FIELDS, fail, get, is_false, is_true,
};

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
pub(super) struct SummaryItem<'a> {
    basis: EvidenceBasis,
    label: UtilityLabel,
    count: i128,
    combined_confidence: &'a Value,
}

pub(super) fn counts(v: &Value, keys: &[&str], label: impl Display) -> FieldResult<Vec<i128>> {
    let map = object(v, &label)?;
    exact_fields(map, keys, &label)?;
    keys.iter()
        .map(|key| {
            non_negative_int(get(map, key))
                .ok_or_else(|| FieldError(format!("{label}.{key} must be a non-negative integer")))
        })
        .collect()
}

pub(super) fn evidence_label_summary<'a>(
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

pub(super) fn validate_review(review: &Map, label: impl Display) -> FieldResult<()> {
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

/// The rules of one printed subject that hold under `rules`: the v0 rules (fields,
/// digests, bounds, counts, estimate against label and confidence, review against the
/// effective utility), or for a v1 subject the same rules over its 20 fields, its review
/// left to [`validate_aggregate_v1`].
pub(crate) fn validate_subject<'a>(
    subject: &'a Map,
    index: usize,
    seen: &mut BTreeSet<&'a str>,
    rules: Rules,
) -> FieldResult<SubjectView<'a>> {
    let label = Indexed(&"projection.subjects", index);
    match rules {
        Rules::V0 => exact_fields(subject, &SUBJECT_FIELDS, &label)?,
        Rules::V1(_) => exact_fields(subject, &SUBJECT_FIELDS_V1, &label)?,
    }
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
    if rules == Rules::V0 && (review_state, review_action) != expected_review {
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

/// The `posterior` of a printed v1 subject, each value a finite number.
fn printed_posterior(subject: &Map, label: impl Display) -> FieldResult<Posterior> {
    let posterior_label = Field(&label, "posterior");
    let raw = object(get(subject, "posterior"), &posterior_label)?;
    exact_fields(raw, &v1::POSTERIOR_FIELDS, &posterior_label)?;
    let mut values = [0.0; 8];
    for (slot, key) in values.iter_mut().zip(v1::POSTERIOR_FIELDS) {
        *slot = finite_float(get(raw, key), format_args!("{posterior_label}.{key}"))?;
    }
    let [h, k, z, alpha, beta, mean, lower, upper] = values;
    Ok(Posterior {
        helpful_weight: h,
        harmful_weight: k,
        neutral_weight: z,
        alpha,
        beta,
        mean_utility: mean,
        lower_utility: lower,
        upper_utility: upper,
    })
}

/// Whether `bound` (on the utility scale) is the `level`-quantile of Beta(`alpha`,
/// `beta`) to within the rounding of the printed values.
fn is_quantile(bound: f64, level: f64, alpha: f64, beta: f64) -> bool {
    const SLACK: f64 = 2e-6;
    let x = (1.0 + bound) / 2.0;
    let ln_b = v1::beta::ln_beta(alpha, beta);
    let below = v1::beta::inc_beta((x - SLACK).max(0.0), alpha, beta, ln_b);
    let above = v1::beta::inc_beta((x + SLACK).min(1.0), alpha, beta, ln_b);
    below <= level + 1e-9 && above >= level - 1e-9
}

/// `|a − b|` within the rounding of printed values of magnitude `scale`.
fn near(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 2e-6 * scale.max(1.0)
}

/// The rules of a v1 subject that still hold after history truncation: its effective
/// tier, posterior, label, estimate, confidence and review must follow from its joint
/// evidence summary and its printed posterior (the weights within the tier's counts,
/// the Beta parameters from the weights, the mean and the interval from the
/// parameters, the label and the review from the interval).
pub(crate) fn validate_aggregate_v1(subject: &Map, label: impl Display) -> FieldResult<()> {
    let inconsistent = || fail(format!("{label} is inconsistent with its posterior"));
    let strength = counts(
        get(subject, "evidence_strength"),
        EvidenceBasis::NAMES,
        format_args!("{label}.evidence_strength"),
    )?;
    let summary = evidence_label_summary(
        get(subject, "evidence_label_summary"),
        format_args!("{label}.evidence_label_summary"),
    )?;
    let posterior = printed_posterior(subject, &label)?;
    let none_level = get(subject, "attribution_level").as_str() == Some("none");
    let tier = summary
        .iter()
        .filter(|p| p.label.direction().is_some())
        .map(|p| p.basis)
        .max()
        .filter(|_| !none_level);
    let strongest = EvidenceBasis::ALL
        .iter()
        .copied()
        .rev()
        .find(|b| strength[b.index()] > 0)
        .unwrap_or(EvidenceBasis::Insufficient);
    let basis = tier.unwrap_or(strongest);
    if get(subject, "effective_evidence_basis").as_str() != Some(basis.as_str()) {
        return fail(format!("{label}.effective_evidence_basis is inconsistent"));
    }
    let observed_label = get(subject, "effective_utility_label")
        .as_str()
        .and_then(UtilityLabel::parse)
        .unwrap_or(UtilityLabel::Unknown);
    let review = get(subject, "review");
    let review_is = |state: &str, action: &str, reasons: &[&str]| {
        review.get("state").and_then(Value::as_str) == Some(state)
            && review.get("proposed_action").and_then(Value::as_str) == Some(action)
            && py_eq(
                review.get("reason_codes").unwrap_or(&Value::Null),
                &crate::wire::json::str_list(reasons),
            )
    };
    let Some(tier) = tier else {
        let review_ok = if none_level {
            review_is(
                "unresolved_attribution",
                "collect_attribution",
                &["attribution_not_established"],
            )
        } else {
            review_is("none", "none", &[])
        };
        if posterior != Posterior::PRIOR
            || observed_label != UtilityLabel::Unknown
            || !py_eq(get(subject, "confidence"), &Value::Float(0.0))
            || !review_ok
        {
            return inconsistent();
        }
        return Ok(());
    };
    let count_of = |l: UtilityLabel| {
        summary
            .iter()
            .find(|p| p.basis == tier && p.label == l)
            .map_or(0, |p| p.count)
    };
    let (helpful, harmful, neutral) = (
        count_of(UtilityLabel::Helpful),
        count_of(UtilityLabel::Harmful),
        count_of(UtilityLabel::Neutral),
    );
    let p = &posterior;
    let scale = v1::tier_scale(tier);
    let weight_ok =
        |w: f64, n: i128| w >= 0.0 && w <= n as f64 * scale + 1e-6 && (n > 0 || w == 0.0);
    if !weight_ok(p.helpful_weight, helpful)
        || !weight_ok(p.harmful_weight, harmful)
        || !weight_ok(p.neutral_weight, neutral)
    {
        return inconsistent();
    }
    let (alpha, beta) = (p.alpha, p.beta);
    let expected_alpha = v1::PRIOR_WEIGHT + p.helpful_weight + p.neutral_weight / 2.0;
    let expected_beta = v1::PRIOR_WEIGHT + p.harmful_weight + p.neutral_weight / 2.0;
    let ordered = UTILITY_MIN <= p.lower_utility
        && p.lower_utility <= p.mean_utility
        && p.mean_utility <= p.upper_utility
        && p.upper_utility <= UTILITY_MAX;
    let derived = near(alpha, expected_alpha, alpha)
        && near(beta, expected_beta, beta)
        && near(p.mean_utility, (alpha - beta) / (alpha + beta), 1.0)
        && is_quantile(p.lower_utility, 1.0 - v1::CREDIBLE_LEVEL, alpha, beta)
        && is_quantile(p.upper_utility, v1::CREDIBLE_LEVEL, alpha, beta);
    if !ordered || !derived {
        return inconsistent();
    }
    let zero = Value::Float(0.0);
    let neutral_confidence = summary
        .iter()
        .find(|s| s.basis == tier && s.label == UtilityLabel::Neutral)
        .map_or(&zero, |s| s.combined_confidence);
    let (expected_label, expected_confidence, review_ok) = if p.lower_utility > 0.0 {
        (
            UtilityLabel::Helpful,
            Value::Float(p.lower_utility),
            review_is("none", "none", &[]),
        )
    } else if p.upper_utility < 0.0 {
        (
            UtilityLabel::Harmful,
            Value::Float(-p.upper_utility),
            review_is(
                "attenuation_proposed",
                "attenuate_or_review",
                &["negative_utility_requires_review"],
            ),
        )
    } else if helpful == 0 && harmful == 0 {
        (
            UtilityLabel::Neutral,
            neutral_confidence.clone(),
            review_is("none", "none", &[]),
        )
    } else {
        let split = v1::is_split(
            usize::try_from(helpful).unwrap_or(usize::MAX),
            usize::try_from(harmful).unwrap_or(usize::MAX),
            p,
        );
        let review_ok = if split {
            review_is(
                "conflict",
                "manual_review",
                &["same_evidence_tier_conflict"],
            )
        } else {
            review_is("none", "none", &[])
        };
        (UtilityLabel::Unknown, zero.clone(), review_ok)
    };
    if observed_label != expected_label
        || !py_eq(get(subject, "confidence"), &expected_confidence)
        || !review_ok
    {
        return inconsistent();
    }
    Ok(())
}

/// The reducer's subject recomputed from `members` (its observations) under `rules`, as
/// printed.
pub(crate) fn expected_subject(
    id: &str,
    level: AttributionLevel,
    digests: &[String],
    members: &[&Observation],
    rules: Rules,
) -> Value {
    let state = reduce_subject(id, level, digests, members);
    expected_value(state, members, rules)
}

fn expected_value(
    mut state: subject::SubjectState,
    members: &[&Observation],
    rules: Rules,
) -> Value {
    match rules {
        Rules::V0 => state.to_value(),
        Rules::V1(params) => {
            let posterior = v1::apply_v1(&mut state, members, params);
            v1::subject_value(&state, &posterior)
        }
    }
}

/// The fields of a printed subject that the reducer derives from its observations.
pub(super) const REDUCED_FIELDS: [&str; 10] = [
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
/// subject recomputed from its observations, in every derived field (and, for a v1
/// subject, its posterior).
pub(crate) fn check_reduced_fields(id: &str, raw: &Map, expected: &Value) -> FieldResult<()> {
    let posterior = expected.get("posterior").map(|_| "posterior");
    for key in REDUCED_FIELDS.into_iter().chain(posterior) {
        let want = expected.get(key).unwrap_or(&Value::Null);
        if !py_eq(get(raw, key), want) {
            return fail(format!("projection subject {id} {key} is inconsistent"));
        }
    }
    Ok(())
}

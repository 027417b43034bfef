//! The deterministic utility reducer: a complete observation stream in, one read-only
//! `memory_utility_projection_v0` out (or, under the [`v1`] rules, which only change how a
//! subject's utility is reduced, a `memory_utility_projection_v1`; see [`project_with`]).
//!
//! Owns context checks, the previous-projection identity guard, batch validation,
//! duplicate versus conflicting deliveries, item/set/none subjects, evidence-tier
//! precedence, noisy-OR confidence, the history budget, review proposals, counters and
//! status. Every packet it returns has passed the readback validator. It never merges a
//! previous projection, never calls a provider and never deletes or ranks anything. Pure.
//!
//! A packet is built as a typed [`Projection`]; the submodule `packet` holds its field
//! tables, from which it is printed directly or turned into a value. The partition
//! identity is [`context`], one subject's reduction [`subject`] and the caps
//! [`super::bounds`]: the readback validator ([`super::validate`]) shares those three, so it
//! never imports this module, which calls it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::obj;
use crate::wire::json::{self, Value};
use crate::wire::text::FieldResult;

use super::observation::{AttributionLevel, Observation, validate_observation};
use super::strict::py_eq;
use super::validate::validate_projection;

pub mod context;
mod packet;
pub mod subject;
pub mod v1;

pub use super::bounds::{
    MAX_CONFLICT_FINGERPRINTS, MAX_HISTORY, MAX_HISTORY_EVIDENCE_REFS, MAX_OBSERVATIONS,
    MAX_REJECTIONS, MAX_REVIEW_REASON_CODES, MAX_SUBJECTS, UTILITY_MAX, UTILITY_MIN,
};
pub use context::{
    DEFAULT_REDUCER_VERSION, PROJECTION_SCHEMA_VERSION, ReducerContext, reason, reducer_identity,
};
use packet::{Counts, HistoryEntry};
pub use packet::{Projection, history_entry};
pub use subject::{
    Review, SubjectState, SummaryPair, combined_confidence, latest, reduce_subject, subject_id,
    subject_id_for,
};
pub use v1::{Posterior, Rules, RulesError, V1Input, V1Params};

/// One reduction request: the complete stream plus the caller's context.
#[derive(Debug, Clone, Copy)]
pub struct ProjectionRequest<'a> {
    /// Every delivery, in any order (retries and conflicting versions included).
    pub observations: &'a [Value],
    pub scope: &'a Value,
    pub retrieval_snapshot_ref: &'a Value,
    pub policy_snapshot_ref: &'a Value,
    pub reducer_version: &'a Value,
    /// An earlier projection, used only as an identity guard.
    pub previous_projection: Option<&'a Value>,
}

// ---------------------------------------------------------------------------------------
// Packets
// ---------------------------------------------------------------------------------------

/// A fail-closed rejected packet: no subjects, one `{reason_codes}` record.
pub fn rejected_projection(
    context: Option<&ReducerContext>,
    reason_codes: &[&str],
    rejected_count: usize,
) -> FieldResult<Value> {
    let value = rejected(context, reason_codes, rejected_count, Rules::V0).to_value();
    validate_projection(&value)?;
    Ok(value)
}

/// [`rejected_projection`] as typed data, not yet validated.
fn rejected<'a>(
    context: Option<&'a ReducerContext>,
    reason_codes: &[&str],
    rejected_count: usize,
    rules: Rules,
) -> Projection<'a> {
    let context = context.map_or_else(|| Cow::Owned(ReducerContext::fallback()), Cow::Borrowed);
    let codes: BTreeSet<&str> = reason_codes.iter().copied().collect();
    let codes: Vec<&str> = codes.into_iter().collect();
    Projection {
        schema_version: rules.projection_schema_version(),
        context,
        ok: false,
        status: "rejected",
        ready: false,
        counts: Counts {
            rejected: rejected_count,
            ..Counts::default()
        },
        subjects: Vec::new(),
        posteriors: Vec::new(),
        history: Vec::new(),
        truncated: false,
        rejections: Value::Array(
            vec![Value::Object(
                obj! {"reason_codes" => json::str_list(&codes)},
            )]
            .into(),
        ),
        last: None,
    }
}

/// Why a batch could not be reduced: rejection reason codes for the packet.
struct BatchRejection(Vec<&'static str>);

fn validate_batch(
    observations: &[Value],
    context: &ReducerContext,
) -> Result<Vec<Observation>, BatchRejection> {
    if observations.len() > MAX_OBSERVATIONS {
        return Err(BatchRejection(vec![reason::MALFORMED]));
    }
    let mut out = Vec::with_capacity(observations.len());
    for raw in observations {
        if raw.as_object().is_none() {
            return Err(BatchRejection(vec![reason::MALFORMED]));
        }
        let item = validate_observation(raw).map_err(|e| BatchRejection(vec![e.reason.code()]))?;
        let mut mismatches = Vec::new();
        if item.scope != context.scope {
            mismatches.push(reason::SCOPE_MISMATCH);
        }
        if item.retrieval_snapshot_ref != context.retrieval_snapshot_ref {
            mismatches.push(reason::RETRIEVAL_MISMATCH);
        }
        if item.policy_snapshot_ref != context.policy_snapshot_ref {
            mismatches.push(reason::POLICY_MISMATCH);
        }
        if !mismatches.is_empty() {
            return Err(BatchRejection(mismatches));
        }
        out.push(item);
    }
    Ok(out)
}

/// The deliveries of one `observation_id`, grouped by fingerprint.
#[derive(Default)]
struct Deliveries {
    /// fingerprint → (delivery with the smallest order key, delivery count)
    versions: BTreeMap<String, (usize, usize)>,
    total: usize,
}

struct Deduplicated {
    /// Accepted observations (positions in the delivered list), ordered by
    /// `observation_id`, each with its fingerprint when deduplication already computed it.
    accepted: Vec<(usize, Option<String>)>,
    conflicts: Vec<Value>,
    conflicting_ids: usize,
    duplicate: usize,
    conflicting_deliveries: usize,
}

/// The first 16 bytes of `text` as a big-endian integer, zero-padded: two texts whose
/// values differ are ordered as the texts are (a zero byte sorts first, as a shorter
/// text does), and equal values leave the order to the whole texts.
fn leading_bytes(text: &str) -> u128 {
    let mut bytes = [0u8; 16];
    for (slot, byte) in bytes.iter_mut().zip(text.bytes()) {
        *slot = byte;
    }
    u128::from_be_bytes(bytes)
}

/// A level's position in the sort order of its name (`item` < `none` < `set`): subjects
/// are ordered as the reference orders them, by name, without comparing the names.
fn level_rank(level: AttributionLevel) -> u8 {
    match level {
        AttributionLevel::Item => 0,
        AttributionLevel::None => 1,
        AttributionLevel::Set => 2,
    }
}

fn deduplicate(items: &[Observation]) -> Deduplicated {
    // Deliveries of one id side by side, ids in order (a stable sort: one id's deliveries
    // stay in delivery order). An id delivered once is accepted as it is: only repeated
    // ids need fingerprints to tell retries from conflicts.
    let count = items.len();
    // Sorted by (id, delivery position); the ids' leading bytes decide almost every
    // comparison as one integer comparison, the whole ids only the rest.
    let mut keyed: Vec<(u128, usize)> = items
        .iter()
        .enumerate()
        .map(|(index, item)| (leading_bytes(&item.observation_id), index))
        .collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| items[a.1].observation_id.cmp(&items[b.1].observation_id))
            .then(a.1.cmp(&b.1))
    });
    let order: Vec<usize> = keyed.into_iter().map(|(_, index)| index).collect();
    let mut out = Deduplicated {
        accepted: Vec::with_capacity(count),
        conflicts: Vec::new(),
        conflicting_ids: 0,
        duplicate: 0,
        conflicting_deliveries: 0,
    };
    let mut rest = order.into_iter().peekable();
    while let Some(first) = rest.next() {
        let id = items[first].observation_id.as_str();
        if rest
            .peek()
            .is_none_or(|&next| items[next].observation_id != id)
        {
            out.accepted.push((first, None));
            continue;
        }
        let mut deliveries = Deliveries::default();
        let mut next = Some(first);
        while let Some(index) = next {
            let item = &items[index];
            let fingerprint = item.fingerprint();
            deliveries.total += 1;
            match deliveries.versions.get_mut(&fingerprint) {
                Some((prior, count)) => {
                    *count += 1;
                    if item.order_key() < items[*prior].order_key() {
                        *prior = index;
                    }
                }
                None => {
                    deliveries.versions.insert(fingerprint, (index, 1));
                }
            }
            next = rest.next_if(|&o| items[o].observation_id == id);
        }
        out.duplicate += deliveries
            .versions
            .values()
            .map(|(_, count)| count - 1)
            .sum::<usize>();
        if deliveries.versions.len() > 1 {
            out.conflicting_ids += 1;
            out.conflicting_deliveries += deliveries.total;
            if out.conflicts.len() < MAX_REJECTIONS {
                let fingerprints: Vec<&String> = deliveries
                    .versions
                    .keys()
                    .take(MAX_CONFLICT_FINGERPRINTS)
                    .collect();
                out.conflicts.push(Value::Object(obj! {
                    "observation_id" => id,
                    "reason_codes" => json::str_list(&[reason::CONFLICTING_DELIVERY]),
                    "delivery_count" => deliveries.total,
                    "delivery_fingerprints" => json::str_list(&fingerprints),
                    "delivery_fingerprints_truncated" =>
                        deliveries.versions.len() > MAX_CONFLICT_FINGERPRINTS,
                    "quarantine_proposed" => true,
                    "automatic_deletion" => false,
                    "action_authority_granted" => false,
                }));
            }
            continue;
        }
        if let Some((fingerprint, (index, _))) = deliveries.versions.into_iter().next() {
            out.accepted.push((index, Some(fingerprint)));
        }
    }
    out
}

/// Keeps every subject's latest entry, then the newest others, up to [`MAX_HISTORY`].
/// `subjects` holds each entry's subject position (below `subject_count`), entries
/// sorted by order key; the kept indices come back sorted.
fn bound_history(subjects: &[usize], subject_count: usize) -> (Vec<usize>, bool) {
    if subjects.len() <= MAX_HISTORY {
        return ((0..subjects.len()).collect(), false);
    }
    let mut latest: Vec<Option<usize>> = vec![None; subject_count];
    for (index, &subject) in subjects.iter().enumerate() {
        if let Some(slot) = latest.get_mut(subject) {
            *slot = Some(index);
        }
    }
    let mut keep = vec![false; subjects.len()];
    let mut kept = 0;
    for index in latest.into_iter().flatten() {
        keep[index] = true;
        kept += 1;
    }
    for index in (0..subjects.len()).rev() {
        if kept >= MAX_HISTORY {
            break;
        }
        if !keep[index] {
            keep[index] = true;
            kept += 1;
        }
    }
    ((0..subjects.len()).filter(|&i| keep[i]).collect(), true)
}

/// Accepted observations (positions in the accepted list) grouped by subject key — the
/// sorted digests, or the subject id for `none` — with the subject id once known.
/// The level is keyed by [`level_rank`].
type SubjectGroups<'a> = BTreeMap<(u8, Cow<'a, [String]>), (Option<String>, Vec<usize>)>;

/// Reduces a complete observation stream into a validated projection packet.
///
/// Every input problem after the CLI's shape checks yields a rejected packet (`ok:
/// false`), never an error. An error means the finished packet failed its own readback
/// validation, which the reference also reports as a request error.
pub fn reduce(request: &ProjectionRequest<'_>) -> FieldResult<Value> {
    let Ok(context) = ReducerContext::strict(
        request.scope,
        request.retrieval_snapshot_ref,
        request.policy_snapshot_ref,
        request.reducer_version,
    ) else {
        return rejected_projection(None, &[reason::MALFORMED], 1);
    };
    let identity = context.identity();
    if let Some(previous) = request.previous_projection {
        if validate_projection(previous).is_err() {
            return rejected_projection(Some(&context), &[reason::MALFORMED], 1);
        }
        let same = previous
            .get("scope")
            .is_some_and(|s| py_eq(s, &Value::Object(context.scope_map.clone())))
            && previous
                .get("retrieval_snapshot_ref")
                .and_then(Value::as_str)
                == Some(context.retrieval_snapshot_ref.as_str())
            && previous.get("policy_snapshot_ref").and_then(Value::as_str)
                == Some(context.policy_snapshot_ref.as_str())
            && previous.get("reducer_version").and_then(Value::as_str)
                == Some(context.reducer_version.as_str())
            && previous.get("reducer_identity").and_then(Value::as_str) == Some(identity.as_str());
        if !same {
            return rejected_projection(Some(&context), &[reason::REDUCER_IDENTITY_MISMATCH], 1);
        }
    }
    match validate_batch(request.observations, &context) {
        Ok(items) => reduce_validated(&context, &items),
        Err(BatchRejection(codes)) => rejected_projection(Some(&context), &codes, 1),
    }
}

/// Whether an observation is reducible in `context`: the batch rule's context checks
/// (scope and both snapshots) after [`validate_observation`].
pub fn fits_context(observation: &Observation, context: &ReducerContext) -> bool {
    observation.scope == context.scope
        && observation.retrieval_snapshot_ref == context.retrieval_snapshot_ref
        && observation.policy_snapshot_ref == context.policy_snapshot_ref
}

/// [`reduce`] from the point where the batch rule has passed: at most
/// [`MAX_OBSERVATIONS`] valid observations, each [fitting](fits_context) `context`, in
/// delivery order, with no previous projection to check.
pub fn reduce_validated(context: &ReducerContext, items: &[Observation]) -> FieldResult<Value> {
    project_validated(context, items).map(|projection| projection.to_value())
}

/// [`reduce_validated`] as typed data, for a caller that prints the packet without
/// building its value.
pub fn project_validated<'a>(
    context: &'a ReducerContext,
    items: &'a [Observation],
) -> FieldResult<Projection<'a>> {
    project_with(context, items, Rules::V0)
}

/// [`project_validated`] under `rules`: with [`Rules::V0`] the `memory_utility_projection_v0`
/// packet (LoopX's), with [`Rules::V1`] the `memory_utility_projection_v1` packet of the
/// same deliveries: the same deduplication, conflicts, subjects, history and counters,
/// each subject reduced by the v1 rules ([`v1::apply_v1`]) and printed with its posterior.
pub fn project_with<'a>(
    context: &'a ReducerContext,
    items: &'a [Observation],
    rules: Rules,
) -> FieldResult<Projection<'a>> {
    let dedup = deduplicate(items);
    let accepted: Vec<(&Observation, Option<String>)> = dedup
        .accepted
        .into_iter()
        .map(|(index, fingerprint)| (&items[index], fingerprint))
        .collect();

    // Group by (level, digest tuple) — or (level, subject id) for `none` — in the
    // reference's sort order of those keys. Item and set subjects hash their id once.
    let mut groups: SubjectGroups<'_> = BTreeMap::new();
    for (index, entry) in accepted.iter().enumerate() {
        let observation = entry.0;
        let level = observation.attribution_level;
        let (key_tail, id) = if level == AttributionLevel::None {
            let id = subject_id(observation);
            (Cow::Owned(vec![id.clone()]), Some(id))
        } else {
            (Cow::Borrowed(&observation.memory_ref_digests[..]), None)
        };
        groups
            .entry((level_rank(level), key_tail))
            .or_insert_with(|| (id, Vec::new()))
            .1
            .push(index);
    }
    if groups.len() > MAX_SUBJECTS {
        let packet = rejected(
            Some(context),
            &[reason::SUBJECT_LIMIT],
            accepted.len(),
            rules,
        );
        validate_with(&packet.to_value(), rules)?;
        return Ok(packet);
    }

    let mut subjects = Vec::with_capacity(groups.len());
    let mut posteriors = Vec::new();
    // (position in `accepted`, subject position) of every accepted observation.
    let mut history: Vec<(usize, usize)> = Vec::with_capacity(accepted.len());
    for (subject_index, (_, (id, members))) in groups.iter().enumerate() {
        let Some(&first) = members.first() else {
            continue;
        };
        let first = accepted[first].0;
        let id = id.clone().unwrap_or_else(|| subject_id(first));
        let observations: Vec<&Observation> = members.iter().map(|&m| accepted[m].0).collect();
        let mut subject = reduce_subject(
            &id,
            first.attribution_level,
            &first.memory_ref_digests,
            &observations,
        );
        if let Rules::V1(params) = rules {
            posteriors.push(v1::apply_v1(&mut subject, &observations, params));
        }
        history.extend(members.iter().map(|&m| (m, subject_index)));
        subjects.push(subject);
    }
    // By order key; its first part, the instant, settles almost every comparison.
    history.sort_by(|a, b| {
        let (x, y) = (accepted[a.0].0, accepted[b.0].0);
        x.created_instant
            .cmp(&y.created_instant)
            .then_with(|| x.order_key().cmp(&y.order_key()))
    });
    let order: Vec<usize> = history.iter().map(|&(_, s)| s).collect();
    let (kept, truncated) = bound_history(&order, subjects.len());
    let mut accepted = accepted;
    let kept_history: Vec<HistoryEntry<'a>> = kept
        .iter()
        .map(|&i| {
            let (m, subject) = history[i];
            let (observation, fingerprint) = &mut accepted[m];
            let fingerprint = fingerprint
                .take()
                .unwrap_or_else(|| observation.fingerprint());
            HistoryEntry {
                observation,
                fingerprint,
                subject,
            }
        })
        .collect();

    let subject_conflict = subjects.iter().any(|s| s.review.state == "conflict");
    let status = if dedup.conflicting_ids > 0 || subject_conflict {
        "review_required"
    } else if !accepted.is_empty() {
        "ready"
    } else {
        "empty"
    };
    let last = history.last().map(|&(m, _)| {
        let o = accepted[m].0;
        (o.created_at.as_str(), o.observation_id.as_str())
    });
    let projection = Projection {
        schema_version: rules.projection_schema_version(),
        context: Cow::Borrowed(context),
        ok: true,
        status,
        ready: !accepted.is_empty() && dedup.conflicting_ids == 0 && !subject_conflict,
        counts: Counts {
            accepted: accepted.len(),
            duplicate: dedup.duplicate,
            conflicting: dedup.conflicting_ids,
            rejected: dedup.conflicting_deliveries,
        },
        subjects,
        posteriors,
        history: kept_history,
        truncated,
        rejections: Value::Array(dedup.conflicts.into()),
        last,
    };
    // Step K: the readback validator accepts every packet that the steps above build
    // from valid observations, so this is an invariant of the function, asserted rather
    // than re-checked. Debug builds (every test, proptest and fuzz run) check each packet;
    // release builds skip the walk, which took about 0.65 ms at the contract's cap.
    debug_assert_eq!(validate_with(&projection.to_value(), rules), Ok(()));
    Ok(projection)
}

/// The readback validator of the packet `rules` print.
fn validate_with(value: &Value, rules: Rules) -> FieldResult<()> {
    match rules {
        Rules::V0 => validate_projection(value),
        Rules::V1(_) => super::validate::validate_projection_v1(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utility::testkit::{Spec, history_overflow, project, subjects};
    use crate::wire::pyfmt::float_repr;

    fn num(v: &Value, key: &str) -> String {
        match v.get(key) {
            Some(Value::Float(f)) => float_repr(*f),
            other => panic!("{key}: {other:?}"),
        }
    }

    #[test]
    fn arithmetic_table_of_a_single_harmful_observation() {
        let table = [
            (0.0, "-0.0", "0.0", "1.0"),
            (1e-7, "-0.0", "0.0", "1.0"),
            (5e-7, "-0.0", "0.0", "1.0"),
            (1.5e-6, "-1e-06", "1e-06", "0.999999"),
            (0.9999995, "-1.0", "1.0", "0.0"),
            (1.0, "-1.0", "1.0", "0.0"),
            (0.123456789, "-0.123457", "0.123457", "0.876543"),
        ];
        for (input, utility, confidence, uncertainty) in table {
            let o = Spec::item("harmful", "deterministic_effect", input, "v").build();
            let projection = project(&[o.to_value()]);
            let subject = &subjects(&projection)[0];
            assert_eq!(num(subject, "utility_estimate"), utility, "{input}");
            assert_eq!(num(subject, "confidence"), confidence, "{input}");
            assert_eq!(num(subject, "uncertainty"), uncertainty, "{input}");
        }
    }

    #[test]
    fn weaker_contrary_evidence_is_ignored_without_review() {
        let stream: Vec<Value> = [
            Spec::item("helpful", "deterministic_effect", 0.5, "a"),
            Spec::item("helpful", "deterministic_effect", 0.3, "b"),
            Spec::item("harmful", "evaluator_inference", 0.9, "c"),
        ]
        .iter()
        .map(|s| s.build().to_value())
        .collect();
        let projection = project(&stream);
        let subject = &subjects(&projection)[0];
        assert_eq!(num(subject, "confidence"), "0.65");
        assert_eq!(num(subject, "utility_estimate"), "0.65");
        assert_eq!(
            subject.get("review").and_then(|r| r.get("state")),
            Some(&Value::from("none"))
        );
    }

    #[test]
    fn three_replays_combine_by_noisy_or() {
        let stream: Vec<Value> = (0..3)
            .map(|i| {
                Spec::item("helpful", "controlled_replay", 0.7, &format!("r{i}"))
                    .build()
                    .to_value()
            })
            .collect();
        let projection = project(&stream);
        let subject = &subjects(&projection)[0];
        assert_eq!(num(subject, "confidence"), "0.973");
        assert_eq!(num(subject, "uncertainty"), "0.027");
    }

    #[test]
    fn conflicting_delivery_is_quarantined_and_counted() {
        let base = Spec::item("helpful", "evaluator_inference", 0.4, "v");
        let mut changed = base.clone();
        changed.label = "harmful";
        let retry = base.clone().at("2026-08-15T03:00:00Z");
        let stream: Vec<Value> = [base, changed, retry]
            .iter()
            .map(|s| s.build().to_value())
            .collect();
        let projection = project(&stream);
        let count = |k: &str| projection.get(k).cloned();
        assert_eq!(count("status"), Some(Value::from("review_required")));
        assert_eq!(count("accepted_observation_count"), Some(Value::Int(0)));
        assert_eq!(count("duplicate_observation_count"), Some(Value::Int(1)));
        assert_eq!(count("conflicting_observation_count"), Some(Value::Int(1)));
        assert_eq!(count("rejected_observation_count"), Some(Value::Int(3)));
    }

    #[test]
    fn history_budget_keeps_every_subject_latest_entry() {
        let projection = project(&history_overflow(Spec::item(
            "helpful",
            "deterministic_effect",
            0.1,
            "first",
        )));
        assert_eq!(
            projection.get("observation_history_truncated"),
            Some(&Value::Bool(true))
        );
        let history = projection
            .get("observation_history")
            .and_then(Value::as_array)
            .expect("history");
        assert_eq!(history.len(), 256);
        assert!(
            history
                .iter()
                .all(|e| e.get("evaluation_version") != Some(&Value::from("first")))
        );
        assert_eq!(
            subjects(&projection)[0].get("effective_evidence_basis"),
            Some(&Value::from("deterministic_effect"))
        );
    }

    #[test]
    fn more_than_the_delivery_limit_is_rejected() {
        let one = Spec::item("helpful", "evaluator_inference", 0.4, "v")
            .build()
            .to_value();
        let stream = vec![one; MAX_OBSERVATIONS + 1];
        let projection = project(&stream);
        assert_eq!(projection.get("status"), Some(&Value::from("rejected")));
        assert_eq!(
            projection.get("rejections"),
            Some(
                &crate::wire::json::parse(r#"[{"reason_codes": ["observation_malformed"]}]"#)
                    .expect("json")
            )
        );
    }

    /// The history budget as the rule states it: every subject's latest entry, then the
    /// newest entries, until 256 are kept.
    fn bound_history_model(subjects: &[usize]) -> (Vec<usize>, bool) {
        if subjects.len() <= MAX_HISTORY {
            return ((0..subjects.len()).collect(), false);
        }
        let mut latest = BTreeMap::new();
        for (index, subject) in subjects.iter().enumerate() {
            latest.insert(subject, index);
        }
        let mut kept: BTreeSet<usize> = latest.into_values().collect();
        for index in (0..subjects.len()).rev() {
            if kept.len() >= MAX_HISTORY {
                break;
            }
            kept.insert(index);
        }
        (kept.into_iter().collect(), true)
    }

    #[test]
    fn history_budget_matches_its_rule() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(state >> 33).expect("31 bits") % n
        };
        for _ in 0..200 {
            let subject_count = 1 + next(MAX_SUBJECTS);
            let len = next(MAX_OBSERVATIONS + 1);
            let subjects: Vec<usize> = (0..len).map(|_| next(subject_count)).collect();
            assert_eq!(
                bound_history(&subjects, subject_count),
                bound_history_model(&subjects),
                "{subjects:?}"
            );
        }
    }

    #[test]
    fn level_ranks_follow_the_level_names() {
        let levels = [
            AttributionLevel::Item,
            AttributionLevel::Set,
            AttributionLevel::None,
        ];
        for a in levels {
            for b in levels {
                assert_eq!(
                    level_rank(a).cmp(&level_rank(b)),
                    a.as_str().cmp(b.as_str()),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn leading_bytes_order_texts_as_the_texts_are_ordered() {
        let texts = [
            "",
            "a",
            "a\u{0}",
            "ab",
            "abc",
            "muo_0",
            "muo_00",
            "muo_0123456789ab",
            "muo_0123456789abc",
            "muo_0123456789abd",
            "muo_0123456789ac",
            "\u{e9}",
            "z",
        ];
        for a in texts {
            for b in texts {
                let (ka, kb) = (leading_bytes(a), leading_bytes(b));
                if ka != kb {
                    assert_eq!(ka.cmp(&kb), a.cmp(b), "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn fallback_context_identity_matches_the_spec() {
        assert_eq!(
            ReducerContext::fallback().identity(),
            "mur_e36d676c5ee9f6d18ab7b1e7b119ce2e4a9a4bb8a7453c9a47fea81282e41b76"
        );
    }
}

//! A subject as the ledger stores it: recomputed from its accepted observations by the
//! reducer's own subject rules, kept as compact text beside its key columns, decoded back
//! into the reducer's [`SubjectState`] for the packets and the rank prior.

use crate::utility::observation::{AttributionLevel, EvidenceBasis, Observation, UtilityLabel};
use crate::utility::reducer::{
    self, Posterior, Review, SubjectState, SummaryPair, V1Input, V1Params,
};
use crate::wire::decimal::Digits;
use crate::wire::pyfmt::{FloatBuf, float_repr_in};

use super::super::error::{LedgerError, LedgerResult};
use super::super::rows::{
    Counters, DeliveryRow, HISTORY_PER_SUBJECT, ObservationRow, PartitionKey, SubjectKey,
    SubjectRow, order_key_text, order_prefix, split_order_key,
};

/// The attribution level a subject id names (`mui_`, `mus_`, `mul_`).
pub fn subject_level(subject_id: &str) -> Option<AttributionLevel> {
    match subject_id.get(..4)? {
        "mui_" => Some(AttributionLevel::Item),
        "mus_" => Some(AttributionLevel::Set),
        "mul_" => Some(AttributionLevel::None),
        _ => None,
    }
}

/// The aggregate row a representative delivery stands for, as far as the reducer and
/// the history read it (verify rebuilds subjects from deliveries this way).
pub fn member_of_delivery(row: &DeliveryRow, partition: &PartitionKey) -> Option<ObservationRow> {
    let observation = row.observation(partition)?;
    Some(ObservationRow {
        observation_id: row.observation_id.clone(),
        partition_id: row.partition_id,
        subject_id: String::new(),
        version_count: 1,
        delivery_count: 1,
        fingerprint: String::new(),
        rep_seq: row.seq,
        rep_order: order_prefix(observation.created_instant, &observation.created_at),
        fingerprints: Vec::new(),
        utility_label: observation.utility_label,
        evidence_basis: observation.evidence_basis,
        confidence: observation.confidence,
    })
}

/// The reduced state of one subject from its representative deliveries (in
/// `observation_id` order), or `None` when it has no accepted observation.
pub fn reduce_stored_subject(
    key: &SubjectKey,
    partition: &PartitionKey,
    rows: &[DeliveryRow],
) -> LedgerResult<Option<SubjectRow>> {
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let mut members = Vec::with_capacity(rows.len());
    for row in rows {
        members.push(member_of_delivery(row, partition).ok_or_else(|| {
            LedgerError::Storage(format!("delivery {} is not a valid observation", row.seq))
        })?);
    }
    reduce_members(key, &first.memory_ref_digests, &members)
}

/// The reduced state of one subject from the aggregates of its accepted observations
/// (in `observation_id` order; `digests` its sorted digests joined by `,`), or `None`
/// when it has none. The rules are [`reducer::reduce_subject`]'s, on the inputs it reads.
pub fn reduce_members(
    key: &SubjectKey,
    digests: &str,
    members: &[ObservationRow],
) -> LedgerResult<Option<SubjectRow>> {
    if members.is_empty() {
        return Ok(None);
    }
    let level = subject_level(&key.1)
        .ok_or_else(|| LedgerError::Storage(format!("subject id {} is damaged", key.1)))?;
    let mut observations = Vec::with_capacity(members.len());
    for m in members {
        observations.push(m.reducer_input(level).ok_or_else(|| {
            LedgerError::Storage(format!("observation {} is damaged", m.observation_id))
        })?);
    }
    let digests: Vec<String> = digests.split(',').map(str::to_owned).collect();
    let refs: Vec<&Observation> = observations.iter().collect();
    let state = reducer::reduce_subject(&key.1, level, &digests, &refs);
    let mut order: Vec<usize> = (0..observations.len()).collect();
    order.sort_by(|&a, &b| {
        observations[a]
            .order_key()
            .cmp(&observations[b].order_key())
            .then(members[a].rep_seq.cmp(&members[b].rep_seq))
    });
    let start = order.len().saturating_sub(HISTORY_PER_SUBJECT);
    let history_seqs: Vec<i64> = order[start..].iter().map(|&i| members[i].rep_seq).collect();
    let last = order
        .last()
        .map(|&i| order_key_text(&observations[i]))
        .unwrap_or_default();
    Ok(Some(SubjectRow {
        partition_id: key.0,
        subject_id: key.1.clone(),
        attribution_level: level.as_str().to_owned(),
        review_state: state.review.state.to_owned(),
        observation_count: i64::try_from(state.observation_count).unwrap_or(i64::MAX),
        last_key: last,
        state: encode_state(&state),
        history_seqs,
    }))
}

/// The `memory_utility_reducer_v1` state of one subject from the aggregates of its
/// accepted observations (as for [`reduce_members`]), or `None` when it has none: the v1
/// rules are not stored, they are applied to the same rows the v0 state is kept from,
/// whenever a v1 partition is read.
pub fn reduce_members_v1(
    key: &SubjectKey,
    digests: &[String],
    members: &[ObservationRow],
    params: V1Params,
) -> LedgerResult<Option<(SubjectState, Posterior)>> {
    if members.is_empty() {
        return Ok(None);
    }
    let level = subject_level(&key.1)
        .ok_or_else(|| LedgerError::Storage(format!("subject id {} is damaged", key.1)))?;
    let mut observations = Vec::with_capacity(members.len());
    for m in members {
        observations.push(m.reducer_input(level).ok_or_else(|| {
            LedgerError::Storage(format!("observation {} is damaged", m.observation_id))
        })?);
    }
    let refs: Vec<&Observation> = observations.iter().collect();
    Ok(Some(reducer::v1::reduce_subject_v1(
        &key.1, level, digests, &refs, params,
    )))
}

/// [`reduce_members_v1`] of a stored subject whose v0 `state` was reduced from exactly
/// `members` (its stored row): the lineage is taken from `state` instead of being reduced
/// again, only the v1 utility is computed.
pub fn upgrade_stored_v1(
    state: &SubjectState,
    members: &[ObservationRow],
    params: V1Params,
) -> LedgerResult<(SubjectState, Posterior)> {
    let mut sorted: Vec<&ObservationRow> = members.iter().collect();
    sorted.sort_by(|a, b| a.observation_id.cmp(&b.observation_id));
    let mut inputs = Vec::with_capacity(members.len());
    for m in sorted {
        inputs.push(m.v1_input().ok_or_else(|| {
            LedgerError::Storage(format!("observation {} is damaged", m.observation_id))
        })?);
    }
    upgrade_stored_v1_inputs(state, &inputs, params)
}

/// [`upgrade_stored_v1`] of the stored subject's [`V1Input`]s, in `observation_id` order
/// ([`super::super::LedgerBackend::subject_v1_inputs`]).
pub fn upgrade_stored_v1_inputs(
    state: &SubjectState,
    inputs: &[V1Input],
    params: V1Params,
) -> LedgerResult<(SubjectState, Posterior)> {
    if inputs.len() != state.observation_count {
        return Err(LedgerError::Storage(format!(
            "subject {} has {} accepted observations but its state counts {}",
            state.subject_id,
            inputs.len(),
            state.observation_count
        )));
    }
    let mut upgraded = state.clone();
    let posterior = reducer::v1::apply_v1_sorted(&mut upgraded, inputs, params);
    Ok((upgraded, posterior))
}

const REVIEW_WORDS: [&str; 12] = [
    "none",
    "attenuation_proposed",
    "conflict",
    "unresolved_attribution",
    "attenuate_or_review",
    "manual_review",
    "collect_attribution",
    "negative_utility_requires_review",
    "same_evidence_tier_conflict",
    "strongest_evidence_unknown",
    "attribution_not_established",
    "",
];

fn review_word(text: &str) -> Option<&'static str> {
    REVIEW_WORDS
        .iter()
        .copied()
        .find(|w| *w == text && !w.is_empty())
}

/// The compact stored text of a reduced subject: the values `reduce_subject` computed,
/// `;`-separated (floats in Python repr, which parses back to the same double). The
/// subject id, level, observation count and latest observation live in their own columns.
pub fn encode_state(state: &SubjectState) -> String {
    // Built by hand, without `write!`: one is encoded per recomputed subject, and the
    // formatting machinery cost more than the rest of the encoding.
    fn push_count(out: &mut String, n: usize) {
        match char::from_digit(u32::try_from(n).unwrap_or(u32::MAX), 10) {
            // Most counts and indices are one digit.
            Some(digit) => out.push(digit),
            None => out.push_str(Digits::of(n as u128).as_str()),
        }
    }
    fn push_counts(out: &mut String, items: &[usize]) {
        for (i, &item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_count(out, item);
        }
    }
    fn push_texts<T: AsRef<str>>(out: &mut String, items: &[T]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(item.as_ref());
        }
    }
    let mut buf = FloatBuf::new();
    let mut out = String::with_capacity(256);
    out.push_str(float_repr_in(state.utility_estimate, &mut buf));
    out.push(';');
    push_count(&mut out, state.effective_label.index());
    out.push(';');
    push_count(&mut out, state.effective_basis.index());
    out.push(';');
    out.push_str(float_repr_in(state.confidence, &mut buf));
    out.push(';');
    out.push_str(float_repr_in(state.uncertainty, &mut buf));
    out.push(';');
    push_counts(&mut out, &state.support);
    out.push(';');
    push_counts(&mut out, &state.evidence_strength);
    out.push(';');
    for (i, p) in state.summary.iter().enumerate() {
        if i > 0 {
            out.push('|');
        }
        push_count(&mut out, p.basis.index());
        out.push(':');
        push_count(&mut out, p.label.index());
        out.push(':');
        push_count(&mut out, p.count);
        out.push(':');
        out.push_str(float_repr_in(p.combined_confidence, &mut buf));
    }
    out.push(';');
    out.push_str(state.review.state);
    out.push(';');
    out.push_str(state.review.proposed_action);
    out.push(';');
    push_texts(&mut out, &state.review.reason_codes);
    out.push(';');
    push_texts(&mut out, &state.memory_ref_digests);
    out
}

/// The subject a stored row describes (`None` when the row is damaged).
pub fn decode_state(row: &SubjectRow) -> Option<SubjectState> {
    let parts: Vec<&str> = row.state.split(';').collect();
    if parts.len() != 12 {
        return None;
    }
    let float = |t: &str| t.parse::<f64>().ok().filter(|f| f.is_finite());
    let nums = |t: &str| -> Option<Vec<usize>> { t.split(',').map(|n| n.parse().ok()).collect() };
    let label = |t: &str| UtilityLabel::ALL.get(t.parse::<usize>().ok()?).copied();
    let basis = |t: &str| EvidenceBasis::ALL.get(t.parse::<usize>().ok()?).copied();
    let support: [usize; 4] = nums(parts[5])?.try_into().ok()?;
    let strength: [usize; 5] = nums(parts[6])?.try_into().ok()?;
    let mut summary = Vec::new();
    for item in parts[7].split('|').filter(|p| !p.is_empty()) {
        let f: Vec<&str> = item.split(':').collect();
        if f.len() != 4 {
            return None;
        }
        summary.push(SummaryPair {
            basis: basis(f[0])?,
            label: label(f[1])?,
            count: f[2].parse().ok()?,
            combined_confidence: float(f[3])?,
        });
    }
    let mut reason_codes = Vec::new();
    for code in parts[10].split(',').filter(|c| !c.is_empty()) {
        reason_codes.push(review_word(code)?);
    }
    let (last_at, last_id) = split_order_key(&row.last_key)?;
    Some(SubjectState {
        subject_id: row.subject_id.clone(),
        level: AttributionLevel::parse(&row.attribution_level)?,
        memory_ref_digests: parts[11].split(',').map(str::to_owned).collect(),
        utility_estimate: float(parts[0])?,
        effective_label: label(parts[1])?,
        effective_basis: basis(parts[2])?,
        confidence: float(parts[3])?,
        uncertainty: float(parts[4])?,
        support,
        evidence_strength: strength,
        summary,
        observation_count: usize::try_from(row.observation_count).ok()?,
        last_observed_at: last_at,
        last_observation_id: last_id,
        review: Review {
            state: review_word(parts[8])?,
            proposed_action: review_word(parts[9])?,
            reason_codes,
        },
    })
}

/// How a subject row contributes to its partition's subject counters.
pub(super) fn subject_counters(row: &SubjectRow, sign: i64) -> Counters {
    let mut c = Counters {
        subjects: sign,
        ..Counters::default()
    };
    match row.attribution_level.as_str() {
        "item" => c.item_subjects = sign,
        "set" => c.set_subjects = sign,
        _ => c.none_subjects = sign,
    }
    if row.review_state == "conflict" {
        c.conflict_subjects = sign;
    }
    c
}

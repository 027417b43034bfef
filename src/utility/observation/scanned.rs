//! Observations read as text: `utility-project`'s direct reading hands each
//! observation's fields over as borrowed strings ([`ObservationText`]) and gets the same
//! normalized [`Observation`] the value path builds, without a value tree.

use crate::wire::json::{Text, Value};
use crate::wire::pyfmt::{self};
use crate::wire::timestamp::{self};

use crate::utility::strict::is_memory_digest;

use super::kinds::{AttributionLevel, EvidenceBasis, Scope, UtilityLabel};
use super::rules::{confidence, judgment_rules, sorted_unique, text_ref};
use super::{MAX_EVIDENCE_REFS, MAX_MEMORY_DIGESTS, MAX_REASON_CODES, Observation};

/// The most items any list field of an observation may hold.
pub(crate) const MAX_LIST_ITEMS: usize = 16;

/// The string items of one list field, borrowed; at most [`MAX_LIST_ITEMS`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TextList<'a> {
    items: [&'a str; MAX_LIST_ITEMS],
    len: usize,
}

impl<'a> TextList<'a> {
    /// Adds an item; `false` when the list is full (no list field may hold more).
    pub fn push(&mut self, item: &'a str) -> bool {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = item;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Empties the list for reuse.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    fn as_slice(&self) -> &[&'a str] {
        &self.items[..self.len]
    }
}

/// One observation packet whose every value is a string without escapes (the lists:
/// strings only; `confidence`: a number), with `schema_version` already equal to
/// [`OBSERVATION_SCHEMA_VERSION`] and the four boundary flags already `false`. A reader
/// that finds anything else leaves the packet to [`validate_observation`].
#[derive(Debug, Clone, Default)]
pub(crate) struct ObservationText<'a> {
    pub observation_id: &'a str,
    /// In [`SCOPE_KEYS`] order.
    pub scope: [&'a str; 4],
    pub application_receipt_id: &'a str,
    pub memory_ref_digests: TextList<'a>,
    pub retrieval_snapshot_ref: &'a str,
    pub policy_snapshot_ref: &'a str,
    pub outcome_ref: &'a str,
    pub utility_label: &'a str,
    pub attribution_level: &'a str,
    pub evidence_basis: &'a str,
    pub confidence: Value,
    pub reason_codes: TextList<'a>,
    pub evidence_refs: TextList<'a>,
    pub evaluator_ref: &'a str,
    pub evaluation_version: &'a str,
    pub created_at: &'a str,
}

/// [`lenient_refs`] of a list of strings.
pub(super) fn text_refs(list: &TextList<'_>, min: usize, max: usize) -> Option<Vec<String>> {
    if !(min..=max).contains(&list.len) {
        return None;
    }
    let out = list
        .as_slice()
        .iter()
        .map(|s| text_ref(s).map(str::to_owned))
        .collect::<Option<Vec<String>>>()?;
    sorted_unique(out)
}

/// The observation [`validate_observation`] returns for the packet `text` describes,
/// or `None` where it refuses that packet. The same rules on the same strings, without
/// the value tree: a string field is what the lenient rules make of a JSON string
/// (`str(value).strip()`), so each rule below is its lenient twin restricted to strings.
pub(crate) fn observation_from_text(text: &ObservationText<'_>) -> Option<Observation> {
    let [agent_id, project_id, corpus_id, surface_id] = text.scope;
    let scope = Scope {
        agent_id: Text::from(text_ref(agent_id)?),
        project_id: Text::from(text_ref(project_id)?),
        corpus_id: Text::from(text_ref(corpus_id)?),
        surface_id: Text::from(text_ref(surface_id)?),
    };
    let memory_ref_digests = text_refs(&text.memory_ref_digests, 1, MAX_MEMORY_DIGESTS)?;
    if !memory_ref_digests.iter().all(|d| is_memory_digest(d)) {
        return None;
    }
    let utility_label = UtilityLabel::parse(pyfmt::py_strip(text.utility_label))?;
    let attribution_level = AttributionLevel::parse(pyfmt::py_strip(text.attribution_level))?;
    let evidence_basis = EvidenceBasis::parse(pyfmt::py_strip(text.evidence_basis))?;
    let evidence_refs = text_refs(&text.evidence_refs, 0, MAX_EVIDENCE_REFS)?;
    judgment_rules(
        utility_label,
        attribution_level,
        evidence_basis,
        !evidence_refs.is_empty(),
    )
    .ok()?;
    let created_at = pyfmt::py_strip(text.created_at);
    let created_instant = timestamp::parse_aware(created_at).ok()?;
    let observation = Observation {
        observation_id: Text::from(text_ref(text.observation_id)?),
        scope,
        application_receipt_id: Text::from(text_ref(text.application_receipt_id)?),
        memory_ref_digests,
        retrieval_snapshot_ref: Text::from(text_ref(text.retrieval_snapshot_ref)?),
        policy_snapshot_ref: Text::from(text_ref(text.policy_snapshot_ref)?),
        outcome_ref: Text::from(text_ref(text.outcome_ref)?),
        utility_label,
        attribution_level,
        evidence_basis,
        confidence: confidence(&text.confidence).ok()?,
        reason_codes: text_refs(&text.reason_codes, 0, MAX_REASON_CODES)?,
        evidence_refs,
        evaluator_ref: Text::from(text_ref(text.evaluator_ref)?),
        evaluation_version: Text::from(text_ref(text.evaluation_version)?),
        created_at: Text::from(created_at),
        created_instant,
    };
    (observation.observation_id == observation.computed_id()).then_some(observation)
}

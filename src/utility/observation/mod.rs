//! `memory_utility_observation_v0`: building one observation from trusted facts and an
//! evaluator proposal, structure-only validation with typed reason codes, and the
//! reproducible `observation_id`.
//!
//! Validation here is *lenient* like the reference: string fields go through Python's
//! `str(value or "").strip()` coercion, lists are sorted, an integer confidence becomes a
//! float. The result is always a normalized [`Observation`]. This module never reduces,
//! ranks or stores anything, and does no I/O.
//!
//! By concern: the value kinds (labels, levels, tiers, the scope; `kinds`), the lenient
//! field rules (`rules`), the trusted facts a proposal is bound to (`facts`), building
//! an observation (`build`) and reading one from borrowed text (`scanned`); this file
//! holds the field tables, the [`Observation`] itself, validation and its reason codes.

use std::sync::LazyLock;

use crate::wire::credential;
use crate::wire::digest;
use crate::wire::json::{Json, Map, Text, Value};
use crate::wire::text::{FieldError, FieldResult};
use crate::wire::timestamp::Instant;

use super::strict::exact_fields;

/// Schema version of every observation.
pub const OBSERVATION_SCHEMA_VERSION: &str = "memory_utility_observation_v0";
pub use crate::recall::APPLICATION_RECEIPT_SCHEMA_VERSION;
/// At most this many memory digests per observation or receipt.
pub const MAX_MEMORY_DIGESTS: usize = 16;
/// At most this many reason codes per observation.
pub const MAX_REASON_CODES: usize = 12;
/// At most this many evidence references per observation.
pub const MAX_EVIDENCE_REFS: usize = 16;

/// The 21 observation fields in contract order.
pub(crate) const OBSERVATION_FIELDS: [&str; 21] = [
    "schema_version",
    "observation_id",
    "scope",
    "application_receipt_id",
    "memory_ref_digests",
    "retrieval_snapshot_ref",
    "policy_snapshot_ref",
    "outcome_ref",
    "utility_label",
    "attribution_level",
    "evidence_basis",
    "confidence",
    "reason_codes",
    "evidence_refs",
    "evaluator_ref",
    "evaluation_version",
    "created_at",
    "grants_new_action_authority",
    "provider_write_performed",
    "external_writes_performed",
    "raw_content_captured",
];

/// Positions in [`OBSERVATION_FIELDS`] in code-point order of the names: the order in
/// which canonical JSON prints the fields.
static SORTED_FIELDS: LazyLock<[usize; 21]> = LazyLock::new(|| {
    let mut order: [usize; 21] = std::array::from_fn(|i| i);
    order.sort_by_key(|&i| OBSERVATION_FIELDS[i]);
    order
});

const WRITE_BOUNDARY_FIELDS: [&str; 4] = [
    "grants_new_action_authority",
    "provider_write_performed",
    "external_writes_performed",
    "raw_content_captured",
];

const IDENTITY_FIELDS: [&str; 12] = [
    "schema_version",
    "scope",
    "application_receipt_id",
    "memory_ref_digests",
    "retrieval_snapshot_ref",
    "policy_snapshot_ref",
    "outcome_ref",
    "attribution_level",
    "evidence_basis",
    "evidence_refs",
    "evaluator_ref",
    "evaluation_version",
];

const QUERY_EVIDENCE_FIELDS: [&str; 3] = ["query_digest", "query_summary", "exact_query_exposed"];
const VERIFIED_OUTCOME_FIELDS: [&str; 4] =
    ["verified", "outcome_ref", "artifact_ref", "outcome_status"];
const ATTRIBUTION_CONTEXT_FIELDS: [&str; 3] =
    ["scope", "retrieval_snapshot_ref", "policy_snapshot_ref"];
const PROPOSAL_FIELDS: [&str; 16] = [
    "scope",
    "application_id",
    "artifact_ref",
    "outcome_ref",
    "outcome_status",
    "retrieval_snapshot_ref",
    "policy_snapshot_ref",
    "memory_ref_digests",
    "utility_label",
    "attribution_level",
    "evidence_basis",
    "confidence",
    "reason_codes",
    "evidence_refs",
    "evaluator_ref",
    "evaluation_version",
];

mod build;
mod facts;
mod kinds;
mod rules;
mod scanned;

pub use build::{build_observation, build_observation_with};
pub use facts::{
    ApplicationReceipt, AttributionContext, ReceiptFields, SCOPE_MISMATCH_CODE, VerifiedOutcome,
    application_receipt, application_receipt_with, attribution_context, verified_outcome,
};
use facts::{validate_attribution_subject, validate_bindings};
pub use kinds::{AttributionLevel, EvidenceBasis, Scope, UtilityLabel};
pub use rules::memory_ref_digests;
use rules::{
    false_boundary, field, lenient_object, lenient_ref, lenient_scope, lenient_timestamp,
    utility_fields,
};
pub(crate) use scanned::{ObservationText, TextList, observation_from_text};

/// One normalized, validated `memory_utility_observation_v0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub observation_id: Text,
    pub scope: Scope,
    pub application_receipt_id: Text,
    /// 1–16 canonical digests, sorted and unique.
    pub memory_ref_digests: Vec<String>,
    pub retrieval_snapshot_ref: Text,
    pub policy_snapshot_ref: Text,
    pub outcome_ref: Text,
    pub utility_label: UtilityLabel,
    pub attribution_level: AttributionLevel,
    pub evidence_basis: EvidenceBasis,
    /// Finite, within `[0, 1]`.
    pub confidence: f64,
    pub reason_codes: Vec<String>,
    pub evidence_refs: Vec<String>,
    pub evaluator_ref: Text,
    pub evaluation_version: Text,
    /// The timestamp text as supplied (stripped), never re-formatted.
    pub created_at: Text,
    /// `created_at` as a UTC instant, for ordering.
    pub created_instant: Instant,
}

impl Observation {
    /// The packet: the 21 fields in contract order.
    pub fn to_value(&self) -> Value {
        Value::Object(self.to_map(true))
    }

    /// The fields in contract order, borrowed; `scope` holds [`Scope::entries`].
    fn fields<'a>(&'a self, scope: &'a [(&'a str, Json<'a>); 4]) -> [(&'static str, Json<'a>); 21] {
        [
            ("schema_version", Json::Str(OBSERVATION_SCHEMA_VERSION)),
            ("observation_id", Json::Str(&self.observation_id)),
            ("scope", Json::Object(scope)),
            (
                "application_receipt_id",
                Json::Str(&self.application_receipt_id),
            ),
            ("memory_ref_digests", Json::Strs(&self.memory_ref_digests)),
            (
                "retrieval_snapshot_ref",
                Json::Str(&self.retrieval_snapshot_ref),
            ),
            ("policy_snapshot_ref", Json::Str(&self.policy_snapshot_ref)),
            ("outcome_ref", Json::Str(&self.outcome_ref)),
            ("utility_label", Json::Str(self.utility_label.as_str())),
            (
                "attribution_level",
                Json::Str(self.attribution_level.as_str()),
            ),
            ("evidence_basis", Json::Str(self.evidence_basis.as_str())),
            ("confidence", Json::Float(self.confidence)),
            ("reason_codes", Json::Strs(&self.reason_codes)),
            ("evidence_refs", Json::Strs(&self.evidence_refs)),
            ("evaluator_ref", Json::Str(&self.evaluator_ref)),
            ("evaluation_version", Json::Str(&self.evaluation_version)),
            ("created_at", Json::Str(&self.created_at)),
            ("grants_new_action_authority", Json::Bool(false)),
            ("provider_write_performed", Json::Bool(false)),
            ("external_writes_performed", Json::Bool(false)),
            ("raw_content_captured", Json::Bool(false)),
        ]
    }

    fn to_map(&self, with_created_at: bool) -> Map {
        let scope = self.scope.entries();
        self.fields(&scope)
            .iter()
            .filter(|(k, _)| with_created_at || *k != "created_at")
            .map(|(k, v)| (*k, v.to_value()))
            .collect()
    }

    /// The digest of the fields `keep` selects, hashed from the borrowed fields (the
    /// canonical printer sorts the keys, so contract order is fine).
    fn digest_of(&self, prefix: &str, keep: impl Fn(&str) -> bool) -> String {
        // The canonical printer sorts the scope's keys too; sorted, it is written as is.
        let scope = self.scope.sorted_entries();
        let fields = self.fields(&scope);
        let mut selected = [("", Json::Null); 21];
        let mut n = 0;
        // In key order already, so the printer need not sort them.
        for entry in SORTED_FIELDS.iter().map(|&i| fields[i]) {
            if keep(entry.0) {
                selected[n] = entry;
                n += 1;
            }
        }
        digest::prefixed_canonical_fields(prefix, &selected[..n])
    }

    /// `muo_` + SHA-256 of the canonical JSON of the 12 identity fields.
    pub fn computed_id(&self) -> String {
        self.digest_of("muo_", |k| IDENTITY_FIELDS.contains(&k))
    }

    /// `muof_` + SHA-256 of the canonical JSON of every field except `created_at`: two
    /// deliveries with the same fingerprint are the same semantic statement.
    pub fn fingerprint(&self) -> String {
        self.digest_of("muof_", |k| k != "created_at")
    }

    /// The ordering key of the reducer: UTC instant, then the raw text, then the id.
    pub fn order_key(&self) -> (Instant, &str, &str) {
        (
            self.created_instant,
            self.created_at.as_str(),
            self.observation_id.as_str(),
        )
    }

    /// This port's stricter public-safe rule ([`credential`]) on every text field a
    /// person chose (scope ids, refs, reason codes): the rule of `utility-observe`,
    /// `utility-ledger append` and `rank-evaluate`, never of the reference's validation
    /// that `utility-project` runs.
    pub fn credential_free(&self, label: &str) -> FieldResult<()> {
        let check = |text: &str, field: &str| {
            credential::check_labelled(text, || format!("{label}.{field}"))
        };
        for (key, id) in self.scope.ids() {
            credential::check_labelled(id, || format!("{label}.scope.{key}"))?;
        }
        check(&self.retrieval_snapshot_ref, "retrieval_snapshot_ref")?;
        check(&self.policy_snapshot_ref, "policy_snapshot_ref")?;
        check(&self.outcome_ref, "outcome_ref")?;
        for code in &self.reason_codes {
            check(code, "reason_codes")?;
        }
        for reference in &self.evidence_refs {
            check(reference, "evidence_refs")?;
        }
        check(&self.evaluator_ref, "evaluator_ref")?;
        check(&self.evaluation_version, "evaluation_version")
    }
}

/// Why structure-only validation rejected an observation, derived from the input's
/// typed fields (never from the message text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ObservationReason {
    Malformed,
    SchemaMismatch,
    WriteBoundaryViolation,
    MalformedScope,
    MalformedSnapshot,
    IdentityInvalid,
}

impl ObservationReason {
    /// The reducer's rejection reason code.
    pub fn code(self) -> &'static str {
        match self {
            ObservationReason::Malformed => "observation_malformed",
            ObservationReason::SchemaMismatch => "observation_schema_mismatch",
            ObservationReason::WriteBoundaryViolation => "observation_write_boundary_violation",
            ObservationReason::MalformedScope => "observation_malformed_scope",
            ObservationReason::MalformedSnapshot => "observation_malformed_snapshot",
            ObservationReason::IdentityInvalid => "observation_identity_invalid",
        }
    }
}

/// A structure-only validation failure: the reference's message plus a typed reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ObservationError {
    pub reason: ObservationReason,
    pub message: String,
}

// ---------------------------------------------------------------------------------------
// Validate
// ---------------------------------------------------------------------------------------

fn normalize_observation(value: &Value) -> FieldResult<Observation> {
    let raw = lenient_object(value, "observation")?;
    exact_fields(raw, &OBSERVATION_FIELDS, "observation")?;
    if raw.get("schema_version").and_then(Value::as_str) != Some(OBSERVATION_SCHEMA_VERSION) {
        return Err(FieldError::new(
            "observation.schema_version must be memory_utility_observation_v0",
        ));
    }
    for key in WRITE_BOUNDARY_FIELDS {
        false_boundary(raw, key, "observation")?;
    }
    normalize_fields(|key| field(raw, key))
}

/// The lenient rules of every field but the schema version and the boundary flags, in
/// the reference's order, then the identity check; `field` reads one field (`null` when
/// absent).
fn normalize_fields<'a>(field: impl Fn(&str) -> &'a Value) -> FieldResult<Observation> {
    let observation_id = lenient_ref(field("observation_id"), "observation.observation_id")?;
    let scope = lenient_scope(field("scope"), "observation.scope")?;
    let application_receipt_id = lenient_ref(
        field("application_receipt_id"),
        "observation.application_receipt_id",
    )?;
    let digests = memory_ref_digests(
        field("memory_ref_digests"),
        "observation.memory_ref_digests",
        1,
    )?;
    let retrieval_snapshot_ref = lenient_ref(
        field("retrieval_snapshot_ref"),
        "observation.retrieval_snapshot_ref",
    )?;
    let policy_snapshot_ref = lenient_ref(
        field("policy_snapshot_ref"),
        "observation.policy_snapshot_ref",
    )?;
    let outcome_ref = lenient_ref(field("outcome_ref"), "observation.outcome_ref")?;
    let utility = utility_fields(&field)?;
    let (created_at, created_instant) =
        lenient_timestamp(field("created_at"), "observation.created_at")?;
    let observation = Observation {
        observation_id: Text::from(observation_id),
        scope,
        application_receipt_id: Text::from(application_receipt_id),
        memory_ref_digests: digests,
        retrieval_snapshot_ref: Text::from(retrieval_snapshot_ref),
        policy_snapshot_ref: Text::from(policy_snapshot_ref),
        outcome_ref: Text::from(outcome_ref),
        utility_label: utility.utility_label,
        attribution_level: utility.attribution_level,
        evidence_basis: utility.evidence_basis,
        confidence: utility.confidence,
        reason_codes: utility.reason_codes,
        evidence_refs: utility.evidence_refs,
        evaluator_ref: Text::from(utility.evaluator_ref),
        evaluation_version: Text::from(utility.evaluation_version),
        created_at: Text::from(created_at),
        created_instant,
    };
    if observation.observation_id != observation.computed_id() {
        return Err(FieldError::new(
            "observation.observation_id does not match canonical identity",
        ));
    }
    Ok(observation)
}

/// Validates the observation whose schema version and boundary flags are fixed (a
/// projection's history entry completed by its context) and whose other fields `field`
/// reads: exactly what [`validate_observation`] accepts for the complete packet, without
/// building it.
pub(crate) fn validate_observation_fields<'a>(
    field: impl Fn(&str) -> &'a Value,
) -> FieldResult<Observation> {
    normalize_fields(field)
}

/// Classifies a rejected observation from its typed input fields (§4.6 precedence).
fn classify(value: &Value) -> ObservationReason {
    let Some(raw) = value.as_object() else {
        return ObservationReason::Malformed;
    };
    if raw.get("schema_version").and_then(Value::as_str) != Some(OBSERVATION_SCHEMA_VERSION) {
        return ObservationReason::SchemaMismatch;
    }
    if WRITE_BOUNDARY_FIELDS
        .iter()
        .any(|k| raw.get(k).is_some_and(|v| *v != Value::Bool(false)))
    {
        return ObservationReason::WriteBoundaryViolation;
    }
    if lenient_scope(field(raw, "scope"), "observation.scope").is_err() {
        return ObservationReason::MalformedScope;
    }
    if lenient_ref(
        field(raw, "retrieval_snapshot_ref"),
        "observation.retrieval_snapshot_ref",
    )
    .is_err()
        || lenient_ref(
            field(raw, "policy_snapshot_ref"),
            "observation.policy_snapshot_ref",
        )
        .is_err()
    {
        return ObservationReason::MalformedSnapshot;
    }
    let Ok(observation_id) =
        lenient_ref(field(raw, "observation_id"), "observation.observation_id")
    else {
        return ObservationReason::IdentityInvalid;
    };
    if IDENTITY_FIELDS.iter().all(|k| raw.contains_key(k)) {
        let identity: Map = IDENTITY_FIELDS
            .iter()
            .map(|k| ((*k).to_owned(), field(raw, k).clone()))
            .collect();
        if observation_id != digest::prefixed_canonical("muo_", &Value::Object(identity)) {
            return ObservationReason::IdentityInvalid;
        }
    }
    ObservationReason::Malformed
}

/// Structure-only validation of one observation (the reducer's input rule).
///
/// Normalizes like the reference (strip, coerce, sort, float confidence) and checks that
/// `observation_id` matches the canonical identity. A failure carries the first violated
/// rule's message and a reason code derived from the input's typed fields.
pub fn validate_observation(value: &Value) -> Result<Observation, ObservationError> {
    normalize_observation(value).map_err(|err| ObservationError {
        reason: classify(value),
        message: err.0,
    })
}

/// Structure validation plus every binding to the three trusted facts.
pub fn validate_observation_with_facts(
    value: &Value,
    application_receipt: &Value,
    verified_outcome: &Value,
    attribution_context: &Value,
) -> FieldResult<Observation> {
    validate_observation_with_facts_with(
        value,
        application_receipt,
        verified_outcome,
        attribution_context,
        ReceiptFields::Reference,
    )
}

/// [`validate_observation_with_facts`] reading the receipt with `fields`.
pub fn validate_observation_with_facts_with(
    value: &Value,
    application_receipt: &Value,
    verified_outcome: &Value,
    attribution_context: &Value,
    fields: ReceiptFields,
) -> FieldResult<Observation> {
    let observation = validate_observation(value).map_err(|e| FieldError(e.message))?;
    let receipt = application_receipt_with(application_receipt, 1, fields)?;
    let outcome = self::verified_outcome(verified_outcome)?;
    let context = self::attribution_context(attribution_context)?;
    validate_bindings(&receipt, &outcome, &context)?;
    let expected = [
        ("scope", observation.scope == context.scope),
        (
            "application_receipt_id",
            observation.application_receipt_id == receipt.receipt_id,
        ),
        (
            "retrieval_snapshot_ref",
            observation.retrieval_snapshot_ref == context.retrieval_snapshot_ref,
        ),
        (
            "policy_snapshot_ref",
            observation.policy_snapshot_ref == context.policy_snapshot_ref,
        ),
        (
            "outcome_ref",
            observation.outcome_ref == outcome.outcome_ref,
        ),
    ];
    for (key, matches) in expected {
        if !matches {
            return Err(FieldError(format!(
                "observation.{key} does not match trusted context"
            )));
        }
    }
    validate_attribution_subject(
        &observation.memory_ref_digests,
        observation.attribution_level,
        &receipt.memory_ref_digests,
    )?;
    Ok(observation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utility::testkit::{DIGEST_A, Spec, context, outcome, receipt};

    fn stage2() -> Spec {
        let mut spec = Spec::item("unknown", "insufficient", 0.0, "evaluation:stage2");
        spec.evidence_ref = String::new();
        spec
    }

    fn stage2_proposal() -> Value {
        let mut proposal = stage2().proposal();
        if let Value::Object(m) = &mut proposal {
            m.insert("evidence_refs", Value::Array(Box::default()));
        }
        proposal
    }

    fn with(mut v: Value, key: &str, value: Value) -> Value {
        if let Value::Object(m) = &mut v {
            m.insert(key, value);
        }
        v
    }

    /// Builds from the testkit's receipt, outcome and context at the spec's time.
    fn build_with(proposal: &Value) -> FieldResult<Observation> {
        build_observation(
            &receipt(&[DIGEST_A]),
            &outcome(),
            &context(),
            proposal,
            &Value::from("2026-08-15T00:00:00Z"),
        )
    }

    /// The error of the testkit receipt with `key` set to `value`.
    fn receipt_error(key: &str, value: Value) -> String {
        application_receipt(&with(receipt(&[DIGEST_A]), key, value), 1)
            .expect_err(key)
            .0
    }

    #[test]
    fn builds_the_spec_example_with_its_identifiers() {
        let observation = build_with(&stage2_proposal()).expect("spec example builds");
        assert_eq!(
            observation.application_receipt_id,
            "rma_9dd4fc76d0ef477d23aeb81711ad17d0dc18cddd0ca231875b6de2b8270b96d4"
        );
        assert_eq!(
            observation.observation_id,
            "muo_24445b026bc98c8a88317fe27d27138dbe9b3638c6d835b0125ace2c1c0a34e8"
        );
        assert_eq!(
            observation.fingerprint(),
            "muof_b69ef1146c0bbc413f1e63f91b8ef2dfcc70d005bd47af634cda4d7cede0e55f"
        );
        let keys: Vec<String> = observation
            .to_value()
            .as_object()
            .expect("object")
            .keys()
            .map(str::to_owned)
            .collect();
        assert_eq!(keys, OBSERVATION_FIELDS);
    }

    #[test]
    fn identifiers_hash_the_same_bytes_as_the_packet_fields() {
        // The digests hash borrowed fields; the definition is the canonical JSON of the
        // packet's own fields, selected from the printed observation.
        let mut specs = vec![stage2()];
        let mut set = Spec::item("helpful", "controlled_replay", 0.123456789, "v:2");
        set.evidence_ref = "evidence:x".into();
        specs.push(set);
        specs.push(
            Spec::item("harmful", "owner_correction", 1.0, "v:3").at("2026-08-16T00:00:00+02:00"),
        );
        for spec in specs {
            let observation = spec.build();
            let packet = observation.to_value();
            let map = packet.as_object().expect("object");
            let pick = |keep: &dyn Fn(&str) -> bool| -> Value {
                Value::Object(
                    map.iter()
                        .filter(|(k, _)| keep(k))
                        .map(|(k, v)| (k, v.clone()))
                        .collect(),
                )
            };
            assert_eq!(
                observation.computed_id(),
                digest::prefixed_canonical("muo_", &pick(&|k| IDENTITY_FIELDS.contains(&k)))
            );
            assert_eq!(
                observation.fingerprint(),
                digest::prefixed_canonical("muof_", &pick(&|k| k != "created_at"))
            );
        }
    }

    #[test]
    fn retry_with_another_created_at_keeps_the_id() {
        let a = stage2().build();
        let b = stage2().at("2026-08-16T00:00:00+02:00").build();
        assert_eq!(a.observation_id, b.observation_id);
        assert_eq!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn rejects_helpful_label_on_insufficient_evidence() {
        let proposal = with(stage2_proposal(), "utility_label", Value::from("helpful"));
        let err = build_with(&proposal).expect_err("insufficient cannot be helpful");
        assert_eq!(err.0, "insufficient evidence must produce unknown utility");
    }

    #[test]
    fn rejects_a_proposal_echo_that_differs_from_trusted_context() {
        let proposal = with(stage2_proposal(), "outcome_status", Value::from("failed"));
        let err = build_with(&proposal).expect_err("echo mismatch");
        assert_eq!(
            err.0,
            "evaluator_proposal.outcome_status does not match trusted context"
        );
    }

    #[test]
    fn rejects_receipt_with_unsorted_digests() {
        assert_eq!(
            receipt_error(
                "memory_ref_digests",
                crate::wire::json::str_list(&["fedcba9876543210", DIGEST_A])
            ),
            "application_receipt.memory_ref_digests must be sorted and canonical"
        );
    }

    #[test]
    fn rejects_non_finite_snapshot_in_receipt_hash() {
        assert_eq!(
            receipt_error("retrieval_snapshot_ref", Value::Float(f64::NAN)),
            "application_receipt must be canonical JSON data"
        );
    }

    #[test]
    fn classifies_structure_failures_from_typed_fields() {
        let good = stage2().build().to_value();
        let cases = [
            (
                "schema_version",
                Value::from("memory_utility_observation_v99"),
                ObservationReason::SchemaMismatch,
            ),
            (
                "raw_content_captured",
                Value::Bool(true),
                ObservationReason::WriteBoundaryViolation,
            ),
            (
                "policy_snapshot_ref",
                Value::from("a b"),
                ObservationReason::MalformedSnapshot,
            ),
            (
                "utility_label",
                Value::from("great"),
                ObservationReason::Malformed,
            ),
            (
                "confidence",
                Value::BigInt("1".repeat(400).into()),
                ObservationReason::Malformed,
            ),
            (
                "observation_id",
                Value::from(format!("muo_{}", "0".repeat(64))),
                ObservationReason::IdentityInvalid,
            ),
        ];
        for (key, value, reason) in cases {
            let err = validate_observation(&with(good.clone(), key, value)).expect_err(key);
            assert_eq!(err.reason, reason, "{key}: {}", err.message);
        }
        let mut scope = crate::utility::testkit::scope();
        if let Value::Object(m) = &mut scope {
            m.insert("agent_id", "/abs");
        }
        let err = validate_observation(&with(good, "scope", scope)).expect_err("scope");
        assert_eq!(err.reason, ObservationReason::MalformedScope);
        assert_eq!(
            err.message,
            "observation.scope.agent_id must be an opaque public-safe reference"
        );
    }

    #[test]
    fn json_true_is_not_read_as_the_reference_true() {
        let proposal = with(stage2_proposal(), "evaluator_ref", Value::Bool(true));
        let err = build_with(&proposal).expect_err("true is not a reference");
        assert_eq!(
            err.0,
            "evaluator_ref must be an opaque public-safe reference"
        );
        // A number keeps the reference's coercion: 7 becomes "7".
        let proposal = with(stage2_proposal(), "evaluator_ref", Value::Int(7));
        let observation = build_with(&proposal).expect("numbers are coerced");
        assert_eq!(observation.evaluator_ref, "7");
    }

    #[test]
    fn integer_confidence_normalizes_to_float() {
        let good = stage2().build().to_value();
        let mut raw = with(good, "confidence", Value::Int(0));
        // Changing confidence keeps the id: it is not an identity field.
        let observation = validate_observation(&raw).expect("int confidence is valid");
        assert_eq!(observation.confidence, 0.0);
        raw = with(raw, "confidence", Value::Bool(false));
        assert_eq!(
            validate_observation(&raw).expect_err("bool").message,
            "confidence must be a finite number between 0 and 1"
        );
    }

    /// The testkit receipt as this port's `apply` records it: with the route's scope.
    fn scoped_receipt(agent_id: &str, project_id: &str) -> Value {
        with(
            with(receipt(&[DIGEST_A]), "agent_id", Value::from(agent_id)),
            "project_id",
            Value::from(project_id),
        )
    }

    fn build_scoped(receipt: &Value) -> FieldResult<Observation> {
        build_observation_with(
            receipt,
            &outcome(),
            &context(),
            &stage2_proposal(),
            &Value::from("2026-08-15T00:00:00Z"),
            ReceiptFields::Scoped,
        )
    }

    #[test]
    fn only_our_readers_accept_the_receipt_scope_and_it_must_match_the_context() {
        let scoped = scoped_receipt("agent:stage2", "project:loopx");
        // LoopX's reader (dogfood-evaluate) keeps the reference envelope.
        assert_eq!(
            application_receipt(&scoped, 1).expect_err("reference").0,
            "application_receipt has invalid fields: missing=[], unknown=['agent_id', 'project_id']"
        );
        assert!(
            build_observation(
                &scoped,
                &outcome(),
                &context(),
                &stage2_proposal(),
                &Value::from("2026-08-15T00:00:00Z")
            )
            .is_err()
        );
        let built = build_scoped(&scoped).expect("the matching scope builds");
        assert_eq!(built.scope.agent_id, "agent:stage2");
        // A receipt without the scope binds nothing more than before.
        assert!(build_scoped(&receipt(&[DIGEST_A])).is_ok());
        for (receipt, key) in [
            (scoped_receipt("agent:other", "project:loopx"), "agent_id"),
            (
                scoped_receipt("agent:stage2", "project:other"),
                "project_id",
            ),
        ] {
            let message = build_scoped(&receipt).expect_err(key).0;
            assert!(
                message.starts_with(&format!("attribution_context.scope.{key} must match"))
                    && message.ends_with(&format!("({SCOPE_MISMATCH_CODE})")),
                "{message}"
            );
        }
    }
}

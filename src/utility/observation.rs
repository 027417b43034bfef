//! `memory_utility_observation_v0`: building one observation from trusted facts and an
//! evaluator proposal, structure-only validation with typed reason codes, and the
//! reproducible `observation_id`.
//!
//! Validation here is *lenient* like the reference: string fields go through Python's
//! `str(value or "").strip()` coercion, lists are sorted, an integer confidence becomes a
//! float. The result is always a normalized [`Observation`]. This module never reduces,
//! ranks or stores anything, and does no I/O.

use std::sync::LazyLock;

use crate::obj;
use crate::recall::{
    APPLICATION_OUTCOMES, APPLICATION_QUERY_KINDS, APPLICATION_RECEIPT_FIELDS,
    APPLICATION_RECEIPT_OPTIONAL_FIELDS, RECALL_MODES, contains_non_finite,
};
use crate::wire::credential;
use crate::wire::digest;
use crate::wire::json::{Json, Map, Text, Value};
use crate::wire::keys;
use crate::wire::pyfmt::{self, pystr_strip, pystr_strip_cow};
use crate::wire::text::{self, FieldError, FieldResult, is_ref, is_token};
use crate::wire::timestamp::{self, Instant};

use super::strict::{SCOPE_KEYS, exact_fields, is_memory_digest};

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

macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value in the contract's canonical order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every wire spelling in the contract's canonical order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the wire spelling.
            pub fn parse(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }

            /// Position in [`Self::ALL`].
            pub fn index(self) -> usize {
                self as usize
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}

/// The JSON Schema of one of the string enums above: its wire spellings in `names`.
macro_rules! enum_schema {
    ($name:ident, $description:literal, $names:expr) => {
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                crate::schema::types::string_enum($description, $names)
            }
        }
    };
}

string_enum!(
    /// The evaluator's judgment of one memory (or set) for one outcome.
    UtilityLabel {
        Helpful => "helpful",
        Harmful => "harmful",
        Neutral => "neutral",
        Unknown => "unknown",
    }
);

string_enum!(
    /// What the evidence can tell apart: one memory, the whole set, or nothing.
    AttributionLevel {
        Item => "item",
        Set => "set",
        None => "none",
    }
);

string_enum!(
    /// Evidence tiers, weakest first: the derived `Ord` is the precedence order.
    EvidenceBasis {
        Insufficient => "insufficient",
        EvaluatorInference => "evaluator_inference",
        DeterministicEffect => "deterministic_effect",
        ControlledReplay => "controlled_replay",
        OwnerCorrection => "owner_correction",
    }
);

enum_schema!(
    UtilityLabel,
    "`helpful`, `harmful`, `neutral` or `unknown`.",
    UtilityLabel::NAMES.iter().copied()
);
enum_schema!(
    AttributionLevel,
    "`item`, `set` or `none`.",
    AttributionLevel::NAMES.iter().copied()
);
enum_schema!(
    EvidenceBasis,
    "Evidence tiers, strongest first: owner correction, controlled replay, deterministic\neffect, evaluator inference, insufficient.",
    EvidenceBasis::NAMES.iter().rev().copied()
);

impl UtilityLabel {
    /// helpful +1, harmful −1, neutral 0; unknown has no direction.
    pub fn direction(self) -> Option<f64> {
        match self {
            UtilityLabel::Helpful => Some(1.0),
            UtilityLabel::Harmful => Some(-1.0),
            UtilityLabel::Neutral => Some(0.0),
            UtilityLabel::Unknown => None,
        }
    }
}

impl EvidenceBasis {
    /// The three tiers that require at least one evidence reference.
    pub fn is_strong(self) -> bool {
        matches!(
            self,
            EvidenceBasis::OwnerCorrection
                | EvidenceBasis::ControlledReplay
                | EvidenceBasis::DeterministicEffect
        )
    }
}

/// The four scope ids of an observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub agent_id: Text,
    pub project_id: Text,
    pub corpus_id: Text,
    pub surface_id: Text,
}

impl Scope {
    /// The four ids with their keys, in declaration order.
    pub fn ids(&self) -> [(&'static str, &str); 4] {
        [
            ("agent_id", &self.agent_id),
            ("project_id", &self.project_id),
            ("corpus_id", &self.corpus_id),
            ("surface_id", &self.surface_id),
        ]
    }

    /// [`credential::check`] on the four ids, labelled `{label}.agent_id` and so on.
    pub fn credential_free(&self, label: &str) -> FieldResult<()> {
        for (key, id) in self.ids() {
            credential::check_labelled(id, || format!("{label}.{key}"))?;
        }
        Ok(())
    }

    /// The scope object in declaration order (`agent_id, project_id, corpus_id, surface_id`).
    pub fn to_map(&self) -> Map {
        obj! {
            "agent_id" => self.agent_id.as_str(),
            "project_id" => self.project_id.as_str(),
            "corpus_id" => self.corpus_id.as_str(),
            "surface_id" => self.surface_id.as_str(),
        }
    }

    /// The scope entries in declaration order, borrowed.
    pub fn entries(&self) -> [(&'static str, Json<'_>); 4] {
        [
            ("agent_id", Json::Str(&self.agent_id)),
            ("project_id", Json::Str(&self.project_id)),
            ("corpus_id", Json::Str(&self.corpus_id)),
            ("surface_id", Json::Str(&self.surface_id)),
        ]
    }

    /// The scope entries in sorted key order, borrowed.
    pub fn sorted_entries(&self) -> [(&'static str, Json<'_>); 4] {
        [
            ("agent_id", Json::Str(&self.agent_id)),
            ("corpus_id", Json::Str(&self.corpus_id)),
            ("project_id", Json::Str(&self.project_id)),
            ("surface_id", Json::Str(&self.surface_id)),
        ]
    }

    /// The scope object in sorted key order, as projections print it.
    pub fn to_sorted_map(&self) -> Map {
        obj! {
            "agent_id" => self.agent_id.as_str(),
            "corpus_id" => self.corpus_id.as_str(),
            "project_id" => self.project_id.as_str(),
            "surface_id" => self.surface_id.as_str(),
        }
    }

    /// Reads a scope whose four values were already validated as strings.
    pub fn from_map(map: &Map) -> Scope {
        let get = |k: &str| {
            map.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Scope {
            agent_id: Text::from(get("agent_id")),
            project_id: Text::from(get("project_id")),
            corpus_id: Text::from(get("corpus_id")),
            surface_id: Text::from(get("surface_id")),
        }
    }
}

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
// Lenient field rules
// ---------------------------------------------------------------------------------------

fn field<'a>(map: &'a Map, key: &str) -> &'a Value {
    map.get(key).unwrap_or(&Value::Null)
}

fn lenient_object<'a>(v: &'a Value, label: &str) -> FieldResult<&'a Map> {
    v.as_object()
        .ok_or_else(|| FieldError(format!("{label} must be an object")))
}

/// `str(value or "").strip()` matching `REF`. JSON `true` is refused rather than read as
/// the reference `"True"` (a deliberate divergence, see docs/compatibility.md).
fn lenient_ref(v: &Value, label: impl std::fmt::Display) -> FieldResult<String> {
    let text = match v {
        Value::Str(s) => text_ref(s).map(str::to_owned),
        Value::Bool(true) => None,
        other => text_ref(&pystr_strip_cow(Some(other))).map(str::to_owned),
    };
    text.ok_or_else(|| FieldError(format!("{label} must be an opaque public-safe reference")))
}

/// `str(value or "").strip()` matching `TOKEN`; JSON `true` is refused like in
/// [`lenient_ref`].
fn lenient_token(v: &Value, label: impl std::fmt::Display) -> FieldResult<String> {
    let s = pystr_strip_cow(Some(v));
    if *v != Value::Bool(true) && is_token(&s) {
        Ok(s.into_owned())
    } else {
        Err(FieldError(format!(
            "{label} must be a compact public-safe token"
        )))
    }
}

/// A list of `min..=max` lenient refs, returned sorted; duplicates rejected.
fn lenient_refs(v: &Value, label: &str, min: usize, max: usize) -> FieldResult<Vec<String>> {
    let items = match v {
        Value::Array(items) if (min..=max).contains(&items.len()) => items,
        _ => {
            return Err(FieldError(format!(
                "{label} must be a list containing between {min} and {max} opaque references"
            )));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(lenient_ref(item, label)?);
    }
    sorted_unique(out).ok_or_else(|| FieldError(format!("{label} must not contain duplicates")))
}

/// A list of references sorted, or `None` when one repeats.
fn sorted_unique(mut items: Vec<String>) -> Option<Vec<String>> {
    items.sort();
    (!items.windows(2).any(|w| w[0] == w[1])).then_some(items)
}

/// Normalizes a memory digest list (sorted, unique, canonical digests).
pub fn memory_ref_digests(v: &Value, label: &str, min: usize) -> FieldResult<Vec<String>> {
    let out = lenient_refs(v, label, min, MAX_MEMORY_DIGESTS)?;
    if out.iter().any(|d| !is_memory_digest(d)) {
        return Err(FieldError(format!(
            "{label} must contain only canonical opaque memory digests"
        )));
    }
    Ok(out)
}

fn lenient_scope(v: &Value, label: &str) -> FieldResult<Scope> {
    let map = lenient_object(v, label)?;
    exact_fields(map, &SCOPE_KEYS, label)?;
    let get = |key: &str| lenient_ref(field(map, key), format_args!("{label}.{key}"));
    Ok(Scope {
        agent_id: Text::from(get("agent_id")?),
        project_id: Text::from(get("project_id")?),
        corpus_id: Text::from(get("corpus_id")?),
        surface_id: Text::from(get("surface_id")?),
    })
}

fn lenient_timestamp(v: &Value, label: &str) -> FieldResult<(String, Instant)> {
    timestamp::timestamp_field(Some(v), label)
}

fn false_boundary(map: &Map, key: &str, label: &str) -> FieldResult<()> {
    if map.get(key) == Some(&Value::Bool(false)) {
        Ok(())
    } else {
        Err(FieldError(format!("{label}.{key} must be false")))
    }
}

fn boolean(map: &Map, key: &str, label: &str) -> FieldResult<bool> {
    match map.get(key) {
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(FieldError(format!("{label}.{key} must be a boolean"))),
    }
}

fn strict_compact_text(v: &Value, label: &str, max: usize) -> FieldResult<String> {
    let fail = || FieldError(format!("{label} must be compact public-safe text"));
    let Value::Str(s) = v else {
        return Err(fail());
    };
    let t = pyfmt::py_strip(s);
    if t.is_empty() || t.chars().count() > max || t.contains(['\r', '\n']) {
        return Err(fail());
    }
    Ok(t.to_owned())
}

const CONFIDENCE_ERROR: &str = "confidence must be a finite number between 0 and 1";

fn confidence(v: &Value) -> FieldResult<f64> {
    let f = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        // Outside i64: Python either overflows or gets a float far outside [0, 1].
        Value::BigInt(_) => return Err(FieldError::new(CONFIDENCE_ERROR)),
        _ => return Err(FieldError::new(CONFIDENCE_ERROR)),
    };
    if f.is_finite() && (0.0..=1.0).contains(&f) {
        Ok(f)
    } else {
        Err(FieldError::new(CONFIDENCE_ERROR))
    }
}

/// The judgment fields shared by proposals and observations, checked in contract order.
struct UtilityFields {
    utility_label: UtilityLabel,
    attribution_level: AttributionLevel,
    evidence_basis: EvidenceBasis,
    confidence: f64,
    reason_codes: Vec<String>,
    evidence_refs: Vec<String>,
    evaluator_ref: String,
    evaluation_version: String,
}

/// The rules that tie the label, the attribution level, the evidence tier and the
/// presence of evidence together, in contract order.
fn judgment_rules(
    label: UtilityLabel,
    level: AttributionLevel,
    basis: EvidenceBasis,
    has_evidence: bool,
) -> FieldResult<()> {
    if basis == EvidenceBasis::Insufficient && label != UtilityLabel::Unknown {
        return Err(FieldError::new(
            "insufficient evidence must produce unknown utility",
        ));
    }
    if basis.is_strong() && !has_evidence {
        return Err(FieldError::new(
            "strong evidence basis requires evidence_refs",
        ));
    }
    if level == AttributionLevel::None && label != UtilityLabel::Unknown {
        return Err(FieldError::new(
            "none attribution must produce unknown utility",
        ));
    }
    if label != UtilityLabel::Unknown && !has_evidence {
        return Err(FieldError::new(
            "non-unknown utility requires evidence_refs",
        ));
    }
    Ok(())
}

fn utility_fields<'a>(map: impl Fn(&str) -> &'a Value) -> FieldResult<UtilityFields> {
    let field = |key: &str| map(key);
    let label = UtilityLabel::parse(&pystr_strip_cow(Some(field("utility_label"))))
        .ok_or_else(|| FieldError::new("utility_label is invalid"))?;
    let level = AttributionLevel::parse(&pystr_strip_cow(Some(field("attribution_level"))))
        .ok_or_else(|| FieldError::new("attribution_level is invalid"))?;
    let basis = EvidenceBasis::parse(&pystr_strip_cow(Some(field("evidence_basis"))))
        .ok_or_else(|| FieldError::new("evidence_basis is invalid"))?;
    let evidence_refs = lenient_refs(
        field("evidence_refs"),
        "evidence_refs",
        0,
        MAX_EVIDENCE_REFS,
    )?;
    judgment_rules(label, level, basis, !evidence_refs.is_empty())?;
    Ok(UtilityFields {
        utility_label: label,
        attribution_level: level,
        evidence_basis: basis,
        confidence: confidence(field("confidence"))?,
        reason_codes: lenient_refs(field("reason_codes"), "reason_codes", 0, MAX_REASON_CODES)?,
        evidence_refs,
        evaluator_ref: lenient_ref(field("evaluator_ref"), "evaluator_ref")?,
        evaluation_version: lenient_ref(field("evaluation_version"), "evaluation_version")?,
    })
}

// ---------------------------------------------------------------------------------------
// Trusted facts
// ---------------------------------------------------------------------------------------

/// The normalized facts of a `reward_memory_application_receipt_v0`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplicationReceipt {
    pub application_id: String,
    pub artifact_ref: String,
    pub corpus_id: String,
    pub surface_id: String,
    pub outcome: String,
    pub memory_ref_digests: Vec<String>,
    pub retrieval_snapshot_ref: Option<String>,
    pub policy_snapshot_ref: Option<String>,
    /// `rma_` + SHA-256 of the canonical JSON of the complete raw receipt.
    pub receipt_id: String,
}

fn validate_receipt_envelope(raw: &Map) -> FieldResult<()> {
    let missing: Vec<&str> = APPLICATION_RECEIPT_FIELDS
        .iter()
        .copied()
        .filter(|k| !raw.contains_key(k))
        .collect();
    let unknown: Vec<&str> = raw
        .keys()
        .filter(|k| {
            !APPLICATION_RECEIPT_FIELDS.contains(k)
                && !APPLICATION_RECEIPT_OPTIONAL_FIELDS.contains(k)
        })
        .collect();
    if !missing.is_empty() || !unknown.is_empty() {
        return Err(FieldError(format!(
            "application_receipt has invalid fields: missing={}, unknown={}",
            keys::repr_list(missing),
            keys::repr_list(unknown)
        )));
    }
    if !RECALL_MODES.contains(&pystr_strip(raw.get("mode")).as_str()) {
        return Err(FieldError::new("application_receipt.mode is invalid"));
    }
    if !APPLICATION_QUERY_KINDS.contains(&pystr_strip(raw.get("query_kind")).as_str()) {
        return Err(FieldError::new("application_receipt.query_kind is invalid"));
    }
    let evidence = match raw.get("query_evidence") {
        Some(Value::Array(items)) if items.len() <= 3 => items,
        _ => {
            return Err(FieldError::new(
                "application_receipt.query_evidence must be a bounded list",
            ));
        }
    };
    for (index, item) in evidence.iter().enumerate() {
        let label = format!("application_receipt.query_evidence[{index}]");
        let item = lenient_object(item, &label)?;
        exact_fields(item, &QUERY_EVIDENCE_FIELDS, &label)?;
        if !text::is_hex_digest(&pystr_strip(item.get("query_digest")), 16) {
            return Err(FieldError(format!(
                "{label}.query_digest must be a canonical digest"
            )));
        }
        strict_compact_text(
            field(item, "query_summary"),
            &format!("{label}.query_summary"),
            220,
        )?;
        if item.get("exact_query_exposed") != Some(&Value::Bool(false)) {
            return Err(FieldError(format!(
                "{label}.exact_query_exposed must be false"
            )));
        }
    }
    strict_compact_text(
        field(raw, "reasoning_summary"),
        "application_receipt.reasoning_summary",
        500,
    )?;
    boolean(raw, "current_artifact_verified", "application_receipt")?;
    boolean(raw, "result_readback_verified", "application_receipt")?;
    if !boolean(raw, "model_reasoning_preserved", "application_receipt")? {
        return Err(FieldError::new(
            "application_receipt.model_reasoning_preserved must be true",
        ));
    }
    let count_ok = match raw.get("provider_call_count") {
        Some(Value::Int(i)) => *i >= 0,
        Some(Value::BigInt(s)) => !s.starts_with('-'),
        _ => false,
    };
    if !count_ok {
        return Err(FieldError::new(
            "application_receipt.provider_call_count must be a non-negative integer",
        ));
    }
    Ok(())
}

/// Validates a complete application receipt and derives its `rma_` id.
///
/// `min_digests` is 1 when an observation is built from the receipt and 0 when only the
/// receipt id is needed (dogfood settlement). Every message is the reference's.
pub fn application_receipt(value: &Value, min_digests: usize) -> FieldResult<ApplicationReceipt> {
    let raw = lenient_object(value, "application_receipt")?;
    if raw.get("schema_version").and_then(Value::as_str) != Some(APPLICATION_RECEIPT_SCHEMA_VERSION)
    {
        return Err(FieldError::new(
            "application_receipt must use reward_memory_application_receipt_v0",
        ));
    }
    validate_receipt_envelope(raw)?;
    let outcome = pystr_strip(raw.get("outcome"));
    if !APPLICATION_OUTCOMES.contains(&outcome.as_str()) {
        return Err(FieldError::new("application_receipt.outcome is invalid"));
    }
    let label = "application_receipt.memory_ref_digests";
    let digests = memory_ref_digests(field(raw, "memory_ref_digests"), label, min_digests)?;
    let canonical = match raw.get("memory_ref_digests") {
        Some(Value::Array(items)) => {
            items.len() == digests.len()
                && items
                    .iter()
                    .zip(&digests)
                    .all(|(item, d)| item.as_str() == Some(d.as_str()))
        }
        _ => false,
    };
    if !canonical {
        return Err(FieldError(format!("{label} must be sorted and canonical")));
    }
    let application_id = lenient_token(
        field(raw, "application_id"),
        "application_receipt.application_id",
    )?;
    let artifact_ref = lenient_token(
        field(raw, "artifact_ref"),
        "application_receipt.artifact_ref",
    )?;
    let corpus_id = lenient_ref(field(raw, "corpus_id"), "application_receipt.corpus_id")?;
    let surface_id = lenient_ref(field(raw, "surface_id"), "application_receipt.surface_id")?;
    for key in [
        "grants_new_action_authority",
        "external_writes_performed",
        "raw_content_captured",
    ] {
        false_boundary(raw, key, "application_receipt")?;
    }
    let optional = |key: &str| -> FieldResult<Option<String>> {
        raw.get(key)
            .map(|v| lenient_ref(v, format!("application_receipt.{key}")))
            .transpose()
    };
    let retrieval_snapshot_ref = optional("retrieval_snapshot_ref")?;
    let policy_snapshot_ref = optional("policy_snapshot_ref")?;
    if contains_non_finite(value) {
        return Err(FieldError::new(
            "application_receipt must be canonical JSON data",
        ));
    }
    Ok(ApplicationReceipt {
        application_id,
        artifact_ref,
        corpus_id,
        surface_id,
        outcome,
        memory_ref_digests: digests,
        retrieval_snapshot_ref,
        policy_snapshot_ref,
        receipt_id: digest::application_receipt_id(value),
    })
}

/// The normalized verified work outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedOutcome {
    pub outcome_ref: String,
    pub artifact_ref: String,
    pub outcome_status: String,
}

/// Validates `{verified: true, outcome_ref, artifact_ref, outcome_status}`.
pub fn verified_outcome(value: &Value) -> FieldResult<VerifiedOutcome> {
    let raw = lenient_object(value, "verified_outcome")?;
    exact_fields(raw, &VERIFIED_OUTCOME_FIELDS, "verified_outcome")?;
    if raw.get("verified") != Some(&Value::Bool(true)) {
        return Err(FieldError::new("verified_outcome.verified must be true"));
    }
    Ok(VerifiedOutcome {
        outcome_ref: lenient_ref(field(raw, "outcome_ref"), "verified_outcome.outcome_ref")?,
        artifact_ref: lenient_token(field(raw, "artifact_ref"), "verified_outcome.artifact_ref")?,
        outcome_status: lenient_ref(
            field(raw, "outcome_status"),
            "verified_outcome.outcome_status",
        )?,
    })
}

/// The trusted execution context: scope and the snapshots visible during execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributionContext {
    pub scope: Scope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

/// Validates `{scope, retrieval_snapshot_ref, policy_snapshot_ref}`.
pub fn attribution_context(value: &Value) -> FieldResult<AttributionContext> {
    let raw = lenient_object(value, "attribution_context")?;
    exact_fields(raw, &ATTRIBUTION_CONTEXT_FIELDS, "attribution_context")?;
    Ok(AttributionContext {
        scope: lenient_scope(field(raw, "scope"), "attribution_context.scope")?,
        retrieval_snapshot_ref: lenient_ref(
            field(raw, "retrieval_snapshot_ref"),
            "attribution_context.retrieval_snapshot_ref",
        )?,
        policy_snapshot_ref: lenient_ref(
            field(raw, "policy_snapshot_ref"),
            "attribution_context.policy_snapshot_ref",
        )?,
    })
}

fn validate_bindings(
    receipt: &ApplicationReceipt,
    outcome: &VerifiedOutcome,
    context: &AttributionContext,
) -> FieldResult<()> {
    if outcome.artifact_ref != receipt.artifact_ref {
        return Err(FieldError::new(
            "verified_outcome.artifact_ref must match the application receipt",
        ));
    }
    if context.scope.corpus_id != receipt.corpus_id {
        return Err(FieldError::new(
            "attribution_context.scope.corpus_id must match the application receipt",
        ));
    }
    if context.scope.surface_id != receipt.surface_id {
        return Err(FieldError::new(
            "attribution_context.scope.surface_id must match the application receipt",
        ));
    }
    let snapshots = [
        (
            "retrieval_snapshot_ref",
            &receipt.retrieval_snapshot_ref,
            &context.retrieval_snapshot_ref,
        ),
        (
            "policy_snapshot_ref",
            &receipt.policy_snapshot_ref,
            &context.policy_snapshot_ref,
        ),
    ];
    for (key, expected, actual) in snapshots {
        if expected.as_ref().is_some_and(|e| e != actual) {
            return Err(FieldError(format!(
                "attribution_context.{key} must match the application receipt"
            )));
        }
    }
    Ok(())
}

fn validate_attribution_subject(
    digests: &[String],
    level: AttributionLevel,
    receipt_digests: &[String],
) -> FieldResult<()> {
    if level == AttributionLevel::Item {
        if digests.len() != 1 || !receipt_digests.contains(&digests[0]) {
            return Err(FieldError::new(
                "item attribution must bind exactly one digest from the application receipt",
            ));
        }
        return Ok(());
    }
    if digests != receipt_digests {
        return Err(FieldError::new(
            "set or none attribution must bind the complete application memory set",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Build
// ---------------------------------------------------------------------------------------

/// Builds one observation by binding an untrusted evaluator proposal to trusted facts.
///
/// * `application_receipt`: the complete Stage-3 receipt exactly as supplied (its raw
///   canonical JSON is hashed into `application_receipt_id`, so any change changes the id);
///   it must bind at least one memory digest.
/// * `verified_outcome`: `{verified: true, outcome_ref, artifact_ref, outcome_status}`.
/// * `attribution_context`: `{scope, retrieval_snapshot_ref, policy_snapshot_ref}` from the
///   execution boundary.
/// * `evaluator_proposal`: the 16-key proposal; its echoes must match the trusted facts.
/// * `created_at`: an aware ISO timestamp (kept verbatim after stripping).
///
/// The observation is then validated again, structure plus all trusted facts, exactly as
/// the reference does. Errors carry the reference's message; the `dogfood-evaluate`
/// utility sub-flow maps any error to `utility_attribution_rejected`.
pub fn build_observation(
    application_receipt: &Value,
    verified_outcome: &Value,
    attribution_context: &Value,
    evaluator_proposal: &Value,
    created_at: &Value,
) -> FieldResult<Observation> {
    let receipt = self::application_receipt(application_receipt, 1)?;
    let outcome = self::verified_outcome(verified_outcome)?;
    let context = self::attribution_context(attribution_context)?;
    validate_bindings(&receipt, &outcome, &context)?;
    let proposal = evaluator_proposal_fields(evaluator_proposal, &receipt, &outcome, &context)?;
    let (created_at, created_instant) = lenient_timestamp(created_at, "created_at")?;
    let mut observation = Observation {
        observation_id: Text::default(),
        scope: context.scope.clone(),
        application_receipt_id: receipt.receipt_id.as_str().into(),
        memory_ref_digests: proposal.memory_ref_digests,
        retrieval_snapshot_ref: context.retrieval_snapshot_ref.as_str().into(),
        policy_snapshot_ref: context.policy_snapshot_ref.as_str().into(),
        outcome_ref: outcome.outcome_ref.as_str().into(),
        utility_label: proposal.utility.utility_label,
        attribution_level: proposal.utility.attribution_level,
        evidence_basis: proposal.utility.evidence_basis,
        confidence: proposal.utility.confidence,
        reason_codes: proposal.utility.reason_codes,
        evidence_refs: proposal.utility.evidence_refs,
        evaluator_ref: Text::from(proposal.utility.evaluator_ref),
        evaluation_version: Text::from(proposal.utility.evaluation_version),
        created_at: Text::from(created_at),
        created_instant,
    };
    observation.observation_id = Text::from(observation.computed_id());
    validate_observation_with_facts(
        &observation.to_value(),
        application_receipt,
        verified_outcome,
        attribution_context,
    )
}

struct Proposal {
    memory_ref_digests: Vec<String>,
    utility: UtilityFields,
}

fn evaluator_proposal_fields(
    value: &Value,
    receipt: &ApplicationReceipt,
    outcome: &VerifiedOutcome,
    context: &AttributionContext,
) -> FieldResult<Proposal> {
    let raw = lenient_object(value, "evaluator_proposal")?;
    exact_fields(raw, &PROPOSAL_FIELDS, "evaluator_proposal")?;
    let label = |key: &str| format!("evaluator_proposal.{key}");
    let scope = lenient_scope(field(raw, "scope"), &label("scope"))?;
    let application_id = lenient_token(field(raw, "application_id"), label("application_id"))?;
    let artifact_ref = lenient_token(field(raw, "artifact_ref"), label("artifact_ref"))?;
    let outcome_ref = lenient_ref(field(raw, "outcome_ref"), label("outcome_ref"))?;
    let outcome_status = lenient_ref(field(raw, "outcome_status"), label("outcome_status"))?;
    let retrieval = lenient_ref(
        field(raw, "retrieval_snapshot_ref"),
        label("retrieval_snapshot_ref"),
    )?;
    let policy = lenient_ref(
        field(raw, "policy_snapshot_ref"),
        label("policy_snapshot_ref"),
    )?;
    let digests = memory_ref_digests(
        field(raw, "memory_ref_digests"),
        &label("memory_ref_digests"),
        1,
    )?;
    let utility = utility_fields(|k| field(raw, k))?;
    let echoes = [
        ("scope", scope == context.scope),
        ("application_id", application_id == receipt.application_id),
        ("artifact_ref", artifact_ref == outcome.artifact_ref),
        ("outcome_ref", outcome_ref == outcome.outcome_ref),
        ("outcome_status", outcome_status == outcome.outcome_status),
        (
            "retrieval_snapshot_ref",
            retrieval == context.retrieval_snapshot_ref,
        ),
        ("policy_snapshot_ref", policy == context.policy_snapshot_ref),
    ];
    for (key, matches) in echoes {
        if !matches {
            return Err(FieldError(format!(
                "evaluator_proposal.{key} does not match trusted context"
            )));
        }
    }
    validate_attribution_subject(
        &digests,
        utility.attribution_level,
        &receipt.memory_ref_digests,
    )?;
    Ok(Proposal {
        memory_ref_digests: digests,
        utility,
    })
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

// ---------------------------------------------------------------------------------------
// Observations read as text
// ---------------------------------------------------------------------------------------

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

/// `str(value).strip()` of a string when it is a reference: the rule of [`lenient_ref`].
fn text_ref(s: &str) -> Option<&str> {
    let t = pyfmt::py_strip(s);
    is_ref(t).then_some(t)
}

/// [`lenient_refs`] of a list of strings.
fn text_refs(list: &TextList<'_>, min: usize, max: usize) -> Option<Vec<String>> {
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
    let observation = validate_observation(value).map_err(|e| FieldError(e.message))?;
    let receipt = self::application_receipt(application_receipt, 1)?;
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
}

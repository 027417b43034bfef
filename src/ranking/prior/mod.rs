//! The bounded rank prior (attribution RFC §6 end, Stage 3): re-orders semantically
//! selected recall candidates by `rank_score = relevance × modifier`, where the modifier is
//! a bounded, monotone function of one memory's item-level utility.
//!
//! Owns the profile (`memory_utility_rank_prior_profile_v0`) and its digest, the
//! per-subject utility view (built from a `memory_utility_projection_v0` packet, or from
//! any other source of reduced subject state such as a ledger), the modifier function
//! `memory_utility_rank_prior_modifier_v0` with its reason codes, the two-stage ranking and
//! the `memory_utility_rank_prior_v0` packet. Pure: no I/O, no clock, no hash-map order.
//!
//! It must not: rescue a candidate the semantic stage dropped, let set-level credit move an
//! item, remove a memory for negative utility (it attenuates and proposes review), apply
//! utility of another scope or snapshot pair, or override freshness, lifecycle, permission
//! and authority filters (candidates arrive already filtered; the prior can only re-order
//! them). The design is written down in `docs/rank-prior.md`. The `rank-prior` request
//! and its effect receipt are [`request`].

pub mod request;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use crate::obj;
use crate::wire::credential;
use crate::wire::digest;
use crate::wire::json::{self, Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt;
use crate::wire::text::FieldError;

use crate::utility::observation::{AttributionLevel, EvidenceBasis, Scope, UtilityLabel};
use crate::utility::reducer::{
    DEFAULT_REDUCER_VERSION, PROJECTION_SCHEMA_VERSION, UTILITY_MAX, UTILITY_MIN, reducer_identity,
};
use crate::utility::strict;

/// Schema version of the rank-prior packet.
pub const RANK_PRIOR_SCHEMA_VERSION: &str = "memory_utility_rank_prior_v0";
/// Schema version of a rank-prior profile (optional in the profile object).
pub const PROFILE_SCHEMA_VERSION: &str = "memory_utility_rank_prior_profile_v0";
/// Version of the modifier function below; part of every profile digest.
pub const MODIFIER_VERSION: &str = "memory_utility_rank_prior_modifier_v0";
/// At most this many candidates per ranking (and the largest `candidate_pool`).
pub const MAX_CANDIDATES: usize = 10_000;
/// The largest accepted `relevance_score`.
pub const MAX_RELEVANCE: f64 = 1e12;
/// The largest accepted upper modifier bound.
pub const MAX_UPPER_BOUND: f64 = 1e6;
/// The largest accepted `min_support`.
pub const MAX_MIN_SUPPORT: i64 = 1_000_000;

/// What went wrong with a rank-prior input; each message says what to fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RankPriorError {
    /// A field of the profile, partition, candidates or utility source is invalid.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The utility source belongs to another partition: it must never apply.
    #[error(
        "utility {what} does not match the partition: the projection must come from the same scope, snapshot pair and reducer version"
    )]
    PartitionMismatch { what: &'static str },
}

fn field(message: impl Into<String>) -> RankPriorError {
    RankPriorError::Field(FieldError(message.into()))
}

// ---------------------------------------------------------------------------------------
// Candidates and the partition
// ---------------------------------------------------------------------------------------

/// One semantic candidate: an opaque memory digest and the provider's relevance score.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// 16 lowercase hex characters or `sha256:` + 64 (as in application receipts).
    pub memory_ref_digest: String,
    /// Finite, in `[0, MAX_RELEVANCE]`; higher is more relevant.
    pub relevance: f64,
}

impl Candidate {
    /// A checked candidate.
    pub fn new(memory_ref_digest: &str, relevance: f64) -> Result<Candidate, RankPriorError> {
        if !is_memory_digest(memory_ref_digest) {
            return Err(field(
                "memory_ref_digest must be 16 lowercase hex characters or sha256: and 64",
            ));
        }
        check_relevance(relevance)?;
        Ok(Candidate {
            memory_ref_digest: memory_ref_digest.to_owned(),
            relevance,
        })
    }
}

/// `^(?:[0-9a-f]{16}|sha256:[0-9a-f]{64})$` (the canonical memory digest), without a regex.
pub fn is_memory_digest(text: &str) -> bool {
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    hex(text, 16)
        || text
            .strip_prefix("sha256:")
            .is_some_and(|rest| hex(rest, 64))
}

fn check_relevance(relevance: f64) -> Result<(), RankPriorError> {
    if !relevance.is_finite() {
        return Err(field(
            "relevance_score must be a finite number (NaN and Infinity are refused)",
        ));
    }
    if !(0.0..=MAX_RELEVANCE).contains(&relevance) {
        return Err(field(format!(
            "relevance_score must be between 0 and {MAX_RELEVANCE:e}"
        )));
    }
    Ok(())
}

/// The partition a ranking happens in: the four scope ids, the snapshot pair and the
/// reducer version. Utility applies only when its source has exactly this identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub scope: Scope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub reducer_version: String,
}

impl Partition {
    /// Reads `{scope, retrieval_snapshot_ref, policy_snapshot_ref, [reducer_version]}`
    /// strictly (canonical opaque refs, exactly the four scope keys).
    pub fn from_value(value: &Value) -> Result<Partition, RankPriorError> {
        let map = strict::object(value, "partition")?;
        reject_unknown(
            map,
            "partition",
            &[
                "scope",
                "retrieval_snapshot_ref",
                "policy_snapshot_ref",
                "reducer_version",
            ],
        )?;
        let get = |k: &str| map.get(k).unwrap_or(&Value::Null);
        let scope = strict::strict_scope(get("scope"), "partition.scope")?;
        let retrieval = strict::strict_ref(
            get("retrieval_snapshot_ref"),
            "partition.retrieval_snapshot_ref",
        )?;
        let policy =
            strict::strict_ref(get("policy_snapshot_ref"), "partition.policy_snapshot_ref")?;
        let reducer_version = match map.get("reducer_version") {
            None => DEFAULT_REDUCER_VERSION,
            Some(v) => strict::strict_ref(v, "partition.reducer_version")?,
        };
        let scope = Scope::from_map(&scope);
        scope.credential_free("partition.scope")?;
        credential::check(retrieval, "partition.retrieval_snapshot_ref")?;
        credential::check(policy, "partition.policy_snapshot_ref")?;
        credential::check(reducer_version, "partition.reducer_version")?;
        Ok(Partition {
            scope,
            retrieval_snapshot_ref: retrieval.to_owned(),
            policy_snapshot_ref: policy.to_owned(),
            reducer_version: reducer_version.to_owned(),
        })
    }

    /// The `mur_` reducer identity of this partition (the projection's identity).
    pub fn reducer_identity(&self) -> String {
        reducer_identity(
            &self.scope,
            &self.retrieval_snapshot_ref,
            &self.policy_snapshot_ref,
            &self.reducer_version,
        )
    }

    /// The first part that differs from `other`, for the mismatch message.
    fn mismatch(&self, other: &Partition) -> Option<&'static str> {
        if self.scope != other.scope {
            Some("scope")
        } else if self.retrieval_snapshot_ref != other.retrieval_snapshot_ref {
            Some("retrieval_snapshot_ref")
        } else if self.policy_snapshot_ref != other.policy_snapshot_ref {
            Some("policy_snapshot_ref")
        } else if self.reducer_version != other.reducer_version {
            Some("reducer_version")
        } else {
            None
        }
    }
}

fn reject_unknown(map: &Map, label: &str, allowed: &[&str]) -> Result<(), RankPriorError> {
    let unknown: Vec<&str> = map.keys().filter(|k| !allowed.contains(k)).collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(field(format!(
        "{label} contains unsupported fields: {}",
        keys::list(unknown)
    )))
}

// ---------------------------------------------------------------------------------------
// The utility view
// ---------------------------------------------------------------------------------------

/// The reduced state of one subject, as far as ranking needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectUtility {
    pub level: AttributionLevel,
    /// Sorted and unique; exactly one for an item subject.
    pub memory_ref_digests: Vec<String>,
    /// In `[-1, 1]`: direction × confidence of the strongest directional tier.
    pub utility_estimate: f64,
    pub effective_label: UtilityLabel,
    /// The strongest tier the subject has evidence at (it governs the direction).
    pub effective_basis: EvidenceBasis,
    /// Observations at `effective_basis` carrying `effective_label`.
    pub effective_support: usize,
}

/// The utility of one partition, per memory digest: what the prior reads. Built from a
/// projection packet ([`UtilityView::from_projection`]) or from any reduced subject
/// state of the same partition ([`UtilityView::new`], e.g. a ledger's subjects).
#[derive(Debug, Clone, PartialEq)]
pub struct UtilityView {
    partition: Partition,
    /// Item subjects by their one digest.
    items: BTreeMap<String, SubjectUtility>,
    /// Digests that appear in set-level or unresolved subjects.
    grouped: BTreeSet<String>,
}

impl UtilityView {
    /// A view over reduced subjects of `partition`. Item subjects must bind exactly one
    /// digest, at most one item subject per digest; estimates must be within the reducer's
    /// bounds and agree in sign with their label.
    pub fn new(
        partition: Partition,
        subjects: impl IntoIterator<Item = SubjectUtility>,
    ) -> Result<UtilityView, RankPriorError> {
        let mut items = BTreeMap::new();
        let mut grouped = BTreeSet::new();
        for subject in subjects {
            for d in &subject.memory_ref_digests {
                if !is_memory_digest(d) {
                    return Err(field(
                        "subject memory_ref_digests must be canonical memory digests",
                    ));
                }
            }
            let u = subject.utility_estimate;
            if !u.is_finite() || !(UTILITY_MIN..=UTILITY_MAX).contains(&u) {
                return Err(field("subject utility_estimate must be within [-1, 1]"));
            }
            let consistent = match subject.effective_label {
                UtilityLabel::Helpful => u >= 0.0,
                UtilityLabel::Harmful => u <= 0.0,
                UtilityLabel::Neutral | UtilityLabel::Unknown => u == 0.0,
            };
            if !consistent {
                return Err(field(
                    "subject utility_estimate must agree with its effective label",
                ));
            }
            match subject.level {
                AttributionLevel::Item => {
                    let [digest] = subject.memory_ref_digests.as_slice() else {
                        return Err(field("an item subject must bind exactly one digest"));
                    };
                    let digest = digest.clone();
                    if items.insert(digest, subject).is_some() {
                        return Err(field("two item subjects bind the same digest"));
                    }
                }
                AttributionLevel::Set | AttributionLevel::None => {
                    grouped.extend(subject.memory_ref_digests.iter().cloned());
                }
            }
        }
        Ok(UtilityView {
            partition,
            items,
            grouped,
        })
    }

    /// A view with no utility at all (every modifier is exactly 1.0).
    pub fn empty(partition: Partition) -> UtilityView {
        UtilityView {
            partition,
            items: BTreeMap::new(),
            grouped: BTreeSet::new(),
        }
    }

    /// Reads a `memory_utility_projection_v0` packet. It must pass the readback rules
    /// that need no history (exact fields, boundary flags, reducer identity, every
    /// subject's own consistency; see
    /// [`crate::utility::validate::validate_projection_subjects`]) and must not be `rejected`.
    pub fn from_projection(projection: &Value) -> Result<UtilityView, RankPriorError> {
        if projection.get("schema_version").and_then(Value::as_str)
            != Some(PROJECTION_SCHEMA_VERSION)
        {
            return Err(field(
                "projection must be a memory_utility_projection_v0 packet",
            ));
        }
        crate::utility::validate::validate_projection_subjects(projection)
            .map_err(|e| field(format!("projection is not a valid projection: {}", e.0)))?;
        if projection.get("status").and_then(Value::as_str) == Some("rejected") {
            return Err(field(
                "projection is rejected: reduce an accepted observation stream first",
            ));
        }
        let partition = Partition::from_value(&Value::Object(obj! {
            "scope" => projection.get("scope").cloned().unwrap_or_default(),
            "retrieval_snapshot_ref" => projection.get("retrieval_snapshot_ref").cloned().unwrap_or_default(),
            "policy_snapshot_ref" => projection.get("policy_snapshot_ref").cloned().unwrap_or_default(),
            "reducer_version" => projection.get("reducer_version").cloned().unwrap_or_default(),
        }))?;
        let subjects = projection
            .get("subjects")
            .and_then(Value::as_array)
            .unwrap_or(&[][..]);
        let parsed = subjects
            .iter()
            .map(subject_from_packet)
            .collect::<Result<Vec<_>, _>>()?;
        UtilityView::new(partition, parsed)
    }

    /// The partition this utility belongs to.
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// The item subject of `digest`, if any.
    pub fn item(&self, digest: &str) -> Option<&SubjectUtility> {
        self.items.get(digest)
    }

    /// True when `digest` appears in a set-level or unresolved subject.
    pub fn in_group(&self, digest: &str) -> bool {
        self.grouped.contains(digest)
    }

    /// Every digest the view knows, sorted.
    pub fn digests(&self) -> BTreeSet<&str> {
        self.items
            .keys()
            .chain(self.grouped.iter())
            .map(String::as_str)
            .collect()
    }
}

/// One subject of a (validated) projection packet: what the rank prior reads of it.
pub fn subject_from_packet(subject: &Value) -> Result<SubjectUtility, RankPriorError> {
    let text = |k: &str| subject.get(k).and_then(Value::as_str).unwrap_or_default();
    let level = AttributionLevel::parse(text("attribution_level"))
        .ok_or_else(|| field("projection subject attribution_level is invalid"))?;
    let label = UtilityLabel::parse(text("effective_utility_label"))
        .ok_or_else(|| field("projection subject effective_utility_label is invalid"))?;
    let basis = EvidenceBasis::parse(text("effective_evidence_basis"))
        .ok_or_else(|| field("projection subject effective_evidence_basis is invalid"))?;
    let digests: Vec<String> = subject
        .get("memory_ref_digests")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let utility = match subject.get("utility_estimate") {
        Some(Value::Float(f)) => *f,
        Some(Value::Int(i)) => *i as f64,
        _ => {
            return Err(field(
                "projection subject utility_estimate must be a number",
            ));
        }
    };
    let support = subject
        .get("evidence_label_summary")
        .and_then(Value::as_array)
        .and_then(|pairs| {
            pairs.iter().find(|p| {
                p.get("evidence_basis").and_then(Value::as_str) == Some(basis.as_str())
                    && p.get("utility_label").and_then(Value::as_str) == Some(label.as_str())
            })
        })
        .and_then(|p| match p.get("observation_count") {
            Some(Value::Int(n)) => usize::try_from(*n).ok(),
            _ => None,
        })
        .unwrap_or(0);
    Ok(SubjectUtility {
        level,
        memory_ref_digests: digests,
        utility_estimate: utility,
        effective_label: label,
        effective_basis: basis,
        effective_support: support,
    })
}

// ---------------------------------------------------------------------------------------
// The profile
// ---------------------------------------------------------------------------------------

/// A rank-prior profile: the semantic stage, the modifier bounds and which evidence may
/// move the prior.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub profile_id: String,
    /// Candidates with a lower relevance never enter the pool. In `[0, 1]`.
    pub semantic_floor: f64,
    /// At most this many candidates (the most relevant) form the pool.
    pub candidate_pool: usize,
    /// `0 < lower ≤ 1`.
    pub lower: f64,
    /// `1 ≤ upper ≤ MAX_UPPER_BOUND`.
    pub upper: f64,
    /// The weakest tier that may move the prior.
    pub min_evidence_basis: EvidenceBasis,
    /// Model inference may move the prior only when this is true (RFC §4.2).
    pub allow_evaluator_inference: bool,
    /// Fewer observations than this at the effective tier and label: no movement.
    pub min_support: usize,
}

const PROFILE_FIELDS: [&str; 8] = [
    "schema_version",
    "profile_id",
    "semantic_floor",
    "candidate_pool",
    "modifier_bounds",
    "min_evidence_basis",
    "allow_evaluator_inference",
    "min_support",
];

fn number(v: Option<&Value>, label: &str) -> Result<f64, RankPriorError> {
    let f = match v {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        Some(Value::BigInt(s)) => strict::bigint_to_f64(s),
        _ => return Err(field(format!("{label} must be a number"))),
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(field(format!(
            "{label} must be finite (NaN and Infinity are refused)"
        )))
    }
}

fn integer(v: Option<&Value>, label: &str, min: i64, max: i64) -> Result<i64, RankPriorError> {
    match v {
        Some(Value::Int(i)) if (min..=max).contains(i) => Ok(*i),
        _ => Err(field(format!(
            "{label} must be an integer between {min} and {max}"
        ))),
    }
}

impl Profile {
    /// Reads a profile object strictly (unknown keys refused).
    pub fn from_value(value: &Value) -> Result<Profile, RankPriorError> {
        let map = strict::object(value, "profile")?;
        reject_unknown(map, "profile", &PROFILE_FIELDS)?;
        let required = [
            "profile_id",
            "semantic_floor",
            "candidate_pool",
            "modifier_bounds",
            "min_evidence_basis",
            "min_support",
        ];
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|k| !map.contains_key(k))
            .collect();
        if !missing.is_empty() {
            return Err(field(format!(
                "profile is missing: {}",
                keys::list(missing)
            )));
        }
        if let Some(version) = map.get("schema_version")
            && version.as_str() != Some(PROFILE_SCHEMA_VERSION)
        {
            return Err(field(format!(
                "profile.schema_version must be {PROFILE_SCHEMA_VERSION}"
            )));
        }
        let profile_id = strict::strict_ref(
            map.get("profile_id").unwrap_or(&Value::Null),
            "profile.profile_id",
        )?
        .to_owned();
        credential::check(&profile_id, "profile.profile_id")?;
        let floor = number(map.get("semantic_floor"), "profile.semantic_floor")?;
        if !(0.0..=1.0).contains(&floor) {
            return Err(field("profile.semantic_floor must be between 0 and 1"));
        }
        let pool = integer(
            map.get("candidate_pool"),
            "profile.candidate_pool",
            1,
            MAX_CANDIDATES as i64,
        )?;
        let bounds = match map.get("modifier_bounds") {
            Some(Value::Array(items)) if items.len() == 2 => items,
            _ => {
                return Err(field(
                    "profile.modifier_bounds must be a list [lower, upper]",
                ));
            }
        };
        let lower = number(bounds.first(), "profile.modifier_bounds[0]")?;
        let upper = number(bounds.get(1), "profile.modifier_bounds[1]")?;
        if !(lower > 0.0 && lower <= 1.0 && upper >= 1.0) {
            return Err(field(
                "profile.modifier_bounds must contain 1: 0 < lower <= 1 <= upper",
            ));
        }
        if upper > MAX_UPPER_BOUND {
            return Err(field(format!(
                "profile.modifier_bounds upper must be at most {MAX_UPPER_BOUND:e}"
            )));
        }
        let allow_inference = match map.get("allow_evaluator_inference") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(field("profile.allow_evaluator_inference must be a boolean"));
            }
        };
        let basis = map
            .get("min_evidence_basis")
            .and_then(Value::as_str)
            .and_then(EvidenceBasis::parse)
            .filter(|b| *b != EvidenceBasis::Insufficient)
            .ok_or_else(|| {
                field(
                    "profile.min_evidence_basis must be evaluator_inference, deterministic_effect, controlled_replay or owner_correction",
                )
            })?;
        if basis == EvidenceBasis::EvaluatorInference && !allow_inference {
            return Err(field(
                "profile.min_evidence_basis evaluator_inference needs allow_evaluator_inference: true",
            ));
        }
        let support = integer(
            map.get("min_support"),
            "profile.min_support",
            1,
            MAX_MIN_SUPPORT,
        )?;
        Ok(Profile {
            profile_id,
            semantic_floor: floor,
            candidate_pool: usize::try_from(pool).unwrap_or(MAX_CANDIDATES),
            lower,
            upper,
            min_evidence_basis: basis,
            allow_evaluator_inference: allow_inference,
            min_support: usize::try_from(support).unwrap_or(usize::MAX),
        })
    }

    /// The normalized profile object (the digest covers exactly this plus the modifier
    /// version).
    pub fn to_value(&self) -> Value {
        Value::Object(obj! {
            "schema_version" => PROFILE_SCHEMA_VERSION,
            "profile_id" => self.profile_id.as_str(),
            "semantic_floor" => self.semantic_floor,
            "candidate_pool" => self.candidate_pool,
            "modifier_bounds" => Value::Array((vec![Value::Float(self.lower), Value::Float(self.upper)]).into()),
            "min_evidence_basis" => self.min_evidence_basis.as_str(),
            "allow_evaluator_inference" => self.allow_evaluator_inference,
            "min_support" => self.min_support,
        })
    }

    /// `murp_` + SHA-256 of the canonical `{modifier_version, profile}`: names this exact
    /// ranking behaviour (an evaluation verdict and a provider effect are bound to it).
    pub fn digest(&self) -> String {
        digest::prefixed_canonical(
            "murp_",
            &Value::Object(obj! {
                "modifier_version" => MODIFIER_VERSION,
                "profile" => self.to_value(),
            }),
        )
    }

    /// True when evidence at `basis` may move the prior.
    pub fn admits(&self, basis: EvidenceBasis) -> bool {
        if basis == EvidenceBasis::EvaluatorInference && !self.allow_evaluator_inference {
            return false;
        }
        basis != EvidenceBasis::Insufficient && basis >= self.min_evidence_basis
    }
}

// ---------------------------------------------------------------------------------------
// The modifier
// ---------------------------------------------------------------------------------------

/// Why a candidate's modifier has its value. Exactly one primary reason per candidate,
/// plus [`Reason::ReviewProposed`] with an attenuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// No subject of the partition mentions the memory: 1.0.
    NoUtilityEvidence,
    /// Only set-level (or unresolved) subjects mention it; set credit never moves an
    /// item: 1.0.
    SetLevelCreditOnly,
    /// Its item subject's effective label is unknown (including same-tier conflicts): 1.0.
    UtilityUnknown,
    /// Its effective evidence is model inference and the profile excludes it: 1.0.
    EvaluatorInferenceExcluded,
    /// Its effective evidence tier is below the profile's minimum: 1.0.
    EvidenceTierBelowMinimum,
    /// Fewer observations than `min_support` at its effective tier and label: 1.0.
    SupportBelowMinimum,
    /// Neutral (or zero-strength) utility: 1.0.
    NeutralUtility,
    /// Positive admitted utility: above 1.0, at most the upper bound.
    PositiveUtilityBoost,
    /// Negative admitted utility: below 1.0, at least the lower bound; never removed.
    NegativeUtilityAttenuation,
    /// Accompanies an attenuation: the memory is proposed for review (no deletion).
    ReviewProposed,
}

impl Reason {
    /// Every reason code, in this order.
    pub const ALL: [Reason; 10] = [
        Reason::NoUtilityEvidence,
        Reason::SetLevelCreditOnly,
        Reason::UtilityUnknown,
        Reason::EvaluatorInferenceExcluded,
        Reason::EvidenceTierBelowMinimum,
        Reason::SupportBelowMinimum,
        Reason::NeutralUtility,
        Reason::PositiveUtilityBoost,
        Reason::NegativeUtilityAttenuation,
        Reason::ReviewProposed,
    ];

    /// The wire code.
    pub fn code(self) -> &'static str {
        match self {
            Reason::NoUtilityEvidence => "no_utility_evidence",
            Reason::SetLevelCreditOnly => "set_level_credit_only",
            Reason::UtilityUnknown => "utility_unknown",
            Reason::EvaluatorInferenceExcluded => "evaluator_inference_excluded",
            Reason::EvidenceTierBelowMinimum => "evidence_tier_below_minimum",
            Reason::SupportBelowMinimum => "support_below_minimum",
            Reason::NeutralUtility => "neutral_utility",
            Reason::PositiveUtilityBoost => "positive_utility_boost",
            Reason::NegativeUtilityAttenuation => "negative_utility_attenuation",
            Reason::ReviewProposed => "review_proposed",
        }
    }
}

/// A modifier value with the reasons that explain it.
#[derive(Debug, Clone, PartialEq)]
pub struct Modifier {
    /// Within `[lower, upper]`; exactly 1.0 unless admitted directional utility exists.
    pub value: f64,
    pub reasons: Vec<Reason>,
}

impl Modifier {
    fn neutral(reason: Reason) -> Modifier {
        Modifier {
            value: 1.0,
            reasons: vec![reason],
        }
    }
}

/// Weight of an effective evidence tier in the modifier (1.0 for an owner correction).
pub fn tier_weight(basis: EvidenceBasis) -> f64 {
    match basis {
        EvidenceBasis::OwnerCorrection => 1.0,
        EvidenceBasis::ControlledReplay => 0.85,
        EvidenceBasis::DeterministicEffect => 0.7,
        EvidenceBasis::EvaluatorInference => 0.4,
        EvidenceBasis::Insufficient => 0.0,
    }
}

/// Weight of `n` supporting observations: `n / (n + 1)` (½ for one, → 1).
pub fn support_weight(n: usize) -> f64 {
    let n = n as f64;
    n / (n + 1.0)
}

/// The modifier of one memory under `profile` (see `docs/rank-prior.md`):
///
/// `s = utility_estimate × tier_weight(effective tier) × support_weight(support)`, then
/// `m = 1 + s·(upper − 1)` for `s > 0`, `m = 1 + s·(1 − lower)` for `s < 0`, rounded to
/// six decimals and clamped to `[lower, upper]`. Exactly 1.0 for unknown, no-utility,
/// set-level-only, neutral, excluded-tier and below-support memories.
pub fn modifier(view: &UtilityView, digest: &str, profile: &Profile) -> Modifier {
    let Some(subject) = view.item(digest) else {
        return Modifier::neutral(if view.in_group(digest) {
            Reason::SetLevelCreditOnly
        } else {
            Reason::NoUtilityEvidence
        });
    };
    if subject.effective_label == UtilityLabel::Unknown {
        return Modifier::neutral(Reason::UtilityUnknown);
    }
    if !profile.admits(subject.effective_basis) {
        return Modifier::neutral(
            if subject.effective_basis == EvidenceBasis::EvaluatorInference
                && !profile.allow_evaluator_inference
            {
                Reason::EvaluatorInferenceExcluded
            } else {
                Reason::EvidenceTierBelowMinimum
            },
        );
    }
    if subject.effective_support < profile.min_support {
        return Modifier::neutral(Reason::SupportBelowMinimum);
    }
    let strength = subject.utility_estimate
        * tier_weight(subject.effective_basis)
        * support_weight(subject.effective_support);
    if subject.effective_label == UtilityLabel::Neutral || strength == 0.0 {
        return Modifier::neutral(Reason::NeutralUtility);
    }
    let raw = if strength > 0.0 {
        1.0 + strength * (profile.upper - 1.0)
    } else {
        1.0 + strength * (1.0 - profile.lower)
    };
    let value = pyfmt::round6(raw).clamp(profile.lower, profile.upper);
    if strength > 0.0 {
        Modifier {
            value,
            reasons: vec![Reason::PositiveUtilityBoost],
        }
    } else {
        Modifier {
            value,
            reasons: vec![Reason::NegativeUtilityAttenuation, Reason::ReviewProposed],
        }
    }
}

// ---------------------------------------------------------------------------------------
// Ranking
// ---------------------------------------------------------------------------------------

/// One candidate inside the semantic stage, after the prior.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub memory_ref_digest: String,
    pub relevance: f64,
    /// 1-based position in the semantic order (relevance desc, then digest).
    pub semantic_rank: usize,
    pub modifier: Modifier,
    /// `relevance × modifier`.
    pub rank_score: f64,
    /// 1-based position after the prior (rank score desc, relevance desc, digest).
    pub final_rank: usize,
}

/// A finished ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    pub input_count: usize,
    /// Candidates dropped because their relevance is below the semantic floor.
    pub below_floor_count: usize,
    /// Candidates above the floor but outside the pool.
    pub outside_pool_count: usize,
    /// The pool, in final order.
    pub ranked: Vec<Ranked>,
}

impl Ranking {
    /// True when the prior changed the order of the pool.
    pub fn order_changed(&self) -> bool {
        self.ranked.iter().any(|r| r.final_rank != r.semantic_rank)
    }

    /// The pool's digests in final order.
    pub fn order(&self) -> Vec<&str> {
        self.ranked
            .iter()
            .map(|r| r.memory_ref_digest.as_str())
            .collect()
    }
}

/// The semantic order: relevance descending, then digest ascending.
fn semantic_cmp(a: &Candidate, b: &Candidate) -> Ordering {
    b.relevance
        .total_cmp(&a.relevance)
        .then_with(|| a.memory_ref_digest.cmp(&b.memory_ref_digest))
}

/// Checks a utility view against the partition of the ranking: utility of another scope,
/// snapshot pair or reducer version never applies.
pub fn check_partition(view: &UtilityView, partition: &Partition) -> Result<(), RankPriorError> {
    match view.partition().mismatch(partition) {
        Some(what) => Err(RankPriorError::PartitionMismatch { what }),
        None => Ok(()),
    }
}

/// Ranks `candidates` in `partition` with `view`'s utility under `profile`.
///
/// Stage 1 (semantic, relevance alone): drop candidates below `semantic_floor`, sort by
/// relevance (ties by digest), keep the first `candidate_pool`. Stage 2 (the prior):
/// `rank_score = relevance × modifier`; sort the pool by rank score, then relevance, then
/// digest. Errors: a view of another partition, duplicate digests, too many candidates.
pub fn rank(
    candidates: &[Candidate],
    view: &UtilityView,
    partition: &Partition,
    profile: &Profile,
) -> Result<Ranking, RankPriorError> {
    check_partition(view, partition)?;
    if candidates.len() > MAX_CANDIDATES {
        return Err(field(format!(
            "at most {MAX_CANDIDATES} candidates can be ranked at once"
        )));
    }
    let mut seen = BTreeSet::new();
    for c in candidates {
        check_relevance(c.relevance)?;
        if !is_memory_digest(&c.memory_ref_digest) {
            return Err(field(
                "memory_ref_digest must be 16 lowercase hex characters or sha256: and 64",
            ));
        }
        if !seen.insert(c.memory_ref_digest.as_str()) {
            return Err(field(format!(
                "candidates must not list memory_ref_digest {} twice",
                c.memory_ref_digest
            )));
        }
    }
    let mut stage: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.relevance >= profile.semantic_floor)
        .collect();
    let below_floor_count = candidates.len() - stage.len();
    stage.sort_by(|a, b| semantic_cmp(a, b));
    let outside_pool_count = stage.len().saturating_sub(profile.candidate_pool);
    stage.truncate(profile.candidate_pool);
    let mut ranked: Vec<Ranked> = stage
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let m = modifier(view, &c.memory_ref_digest, profile);
            Ranked {
                memory_ref_digest: c.memory_ref_digest.clone(),
                relevance: c.relevance,
                semantic_rank: i + 1,
                rank_score: c.relevance * m.value,
                modifier: m,
                final_rank: 0,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.rank_score
            .total_cmp(&a.rank_score)
            .then_with(|| b.relevance.total_cmp(&a.relevance))
            .then_with(|| a.memory_ref_digest.cmp(&b.memory_ref_digest))
    });
    for (i, r) in ranked.iter_mut().enumerate() {
        r.final_rank = i + 1;
    }
    Ok(Ranking {
        input_count: candidates.len(),
        below_floor_count,
        outside_pool_count,
        ranked,
    })
}

/// The modifier of every item subject of the view whose modifier is not exactly 1.0,
/// sorted by digest: the table a provider effect stores (RFC §6, §8.1).
pub fn modifier_table(view: &UtilityView, profile: &Profile) -> Vec<(String, Modifier)> {
    view.items
        .keys()
        .map(|d| (d.clone(), modifier(view, d, profile)))
        .filter(|(_, m)| m.value != 1.0)
        .collect()
}

// ---------------------------------------------------------------------------------------
// Evaluation gate (`rank-evaluate` fills it; `recall --rank-prior` requires it)
// ---------------------------------------------------------------------------------------

/// Schema version of a ranking evaluation verdict.
pub const EVALUATION_SCHEMA_VERSION: &str = "memory_utility_ranking_evaluation_v0";

/// Why `recall --rank-prior` left the prior off: no `--evaluation` verdict was given.
/// Ranking influence stays default-off until a `qualified` verdict for the profile is
/// supplied (attribution RFC §9 Stage 4; `docs/recall.md`).
pub const EVALUATION_MISSING: &str = "rank_prior_evaluation_missing";

/// The parts of a `memory_utility_ranking_evaluation_v0` verdict the gate reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `verdict == "qualified"`.
    pub qualified: bool,
    /// The `murp_` digest of the profile the evaluation qualified.
    pub profile_digest: String,
}

impl Verdict {
    /// Reads a verdict packet: `schema_version`, a string `verdict` and a string
    /// `profile_digest` are required; other fields belong to the evaluation.
    pub fn from_value(value: &Value) -> Result<Verdict, RankPriorError> {
        let map = strict::object(value, "evaluation")?;
        if map.get("schema_version").and_then(Value::as_str) != Some(EVALUATION_SCHEMA_VERSION) {
            return Err(field(format!(
                "evaluation must be a {EVALUATION_SCHEMA_VERSION} packet"
            )));
        }
        let verdict = map
            .get("verdict")
            .and_then(Value::as_str)
            .ok_or_else(|| field("evaluation.verdict must be a string"))?;
        let profile_digest = map
            .get("profile_digest")
            .and_then(Value::as_str)
            .ok_or_else(|| field("evaluation.profile_digest must be a string"))?;
        Ok(Verdict {
            qualified: verdict == "qualified",
            profile_digest: profile_digest.to_owned(),
        })
    }

    /// `None` when this verdict lets `profile` apply, else the reason code that keeps
    /// the prior off: `ranking_evaluation_profile_mismatch` or
    /// `ranking_evaluation_not_qualified`.
    pub fn blocks(&self, profile: &Profile) -> Option<&'static str> {
        if self.profile_digest != profile.digest() {
            Some("ranking_evaluation_profile_mismatch")
        } else if !self.qualified {
            Some("ranking_evaluation_not_qualified")
        } else {
            None
        }
    }
}

fn reason_list(reasons: &[Reason]) -> Value {
    Value::Array(reasons.iter().map(|r| Value::from(r.code())).collect())
}

/// The `memory_utility_rank_prior_v0` packet of a ranking.
pub fn packet(ranking: &Ranking, partition: &Partition, profile: &Profile) -> Value {
    let candidates: Vec<Value> = ranking
        .ranked
        .iter()
        .map(|r| {
            Value::Object(obj! {
                "memory_ref_digest" => r.memory_ref_digest.as_str(),
                "relevance_score" => r.relevance,
                "semantic_rank" => r.semantic_rank,
                "modifier" => r.modifier.value,
                "rank_score" => r.rank_score,
                "final_rank" => r.final_rank,
                "reason_codes" => reason_list(&r.modifier.reasons),
            })
        })
        .collect();
    let reviews: Vec<Value> = ranking
        .ranked
        .iter()
        .filter(|r| r.modifier.reasons.contains(&Reason::ReviewProposed))
        .map(|r| {
            Value::Object(obj! {
                "memory_ref_digest" => r.memory_ref_digest.as_str(),
                "proposed_action" => "attenuate_or_review",
                "reason_codes" => json::str_list(&[Reason::NegativeUtilityAttenuation.code()]),
                "automatic_deletion" => false,
                "action_authority_granted" => false,
            })
        })
        .collect();
    let moved = ranking
        .ranked
        .iter()
        .filter(|r| r.modifier.value != 1.0)
        .count();
    Value::Object(obj! {
        "ok" => true,
        "schema_version" => RANK_PRIOR_SCHEMA_VERSION,
        "status" => if ranking.ranked.is_empty() { "empty" } else { "ranked" },
        "modifier_version" => MODIFIER_VERSION,
        "profile_id" => profile.profile_id.as_str(),
        "profile_digest" => profile.digest(),
        "reducer_identity" => partition.reducer_identity(),
        "scope" => partition.scope.to_sorted_map(),
        "retrieval_snapshot_ref" => partition.retrieval_snapshot_ref.as_str(),
        "policy_snapshot_ref" => partition.policy_snapshot_ref.as_str(),
        "reducer_version" => partition.reducer_version.as_str(),
        "semantic_stage" => obj! {
            "semantic_floor" => profile.semantic_floor,
            "candidate_pool" => profile.candidate_pool,
            "input_count" => ranking.input_count,
            "below_floor_count" => ranking.below_floor_count,
            "outside_pool_count" => ranking.outside_pool_count,
            "pool_count" => ranking.ranked.len(),
        },
        "modifier_bounds" => Value::Array((vec![Value::Float(profile.lower), Value::Float(profile.upper)]).into()),
        "modified_count" => moved,
        "order_changed" => ranking.order_changed(),
        "candidates" => Value::Array(candidates.into()),
        "review_proposals" => Value::Array(reviews.into()),
        "read_only" => true,
        "automatic_deletion" => false,
        "grants_new_action_authority" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

#[cfg(test)]
mod tests;

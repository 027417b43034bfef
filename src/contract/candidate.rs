//! Stage-2 memory candidates: the shared candidate builder, its deterministic guard,
//! the human review of a candidate, and the Issue Fix field-mapping adapter.
//!
//! Owns `reward_memory_candidate_v0`, `reward_memory_candidate_review_v0`,
//! `issue_fix_reward_memory_candidate_adapter_v0`, the `candidate_ref` identity and the
//! fixture cases of `candidate-review`. It validates compact, public-safe fields and never
//! persists anything: callers (ingest, operator control, evaluation) decide what to do
//! with a reviewed record. Pure: no file, clock or environment access.

use std::collections::BTreeSet;

use crate::obj;
use crate::wire::digest;
use crate::wire::json::{Map, Value, str_items};
use crate::wire::pyfmt::{pystr, pystr_strip};
use crate::wire::text::{
    FieldError, FieldResult, compact, object, optional_token, strict_bool, token,
};
use crate::wire::timestamp;

/// Schema of a candidate packet and of the candidate record inside it.
pub const CANDIDATE_SCHEMA_VERSION: &str = "reward_memory_candidate_v0";
/// Schema of a review packet.
pub const REVIEW_SCHEMA_VERSION: &str = "reward_memory_candidate_review_v0";
/// Schema of the Issue Fix adapter packet.
pub const ISSUE_FIX_ADAPTER_SCHEMA_VERSION: &str = "issue_fix_reward_memory_candidate_adapter_v0";

/// The classes a candidate may target (the durable, reusable ones).
pub const TARGET_CLASSES: &[&str] = &["hard_policy", "soft_preference", "procedural_experience"];
/// Review decisions, sorted as the candidate packet advertises them.
pub const REVIEW_DECISIONS: &[&str] = &["accept", "edit", "no_write", "reject", "retire"];

crate::choice! {
    /// A review decision (`decision` of a review request).
    pub enum ReviewDecision {
        Accept => "accept",
        Edit => "edit",
        Reject => "reject",
        Retire => "retire",
        NoWrite => "no_write",
    }
}

crate::choice! {
    /// A built-in fixture case of `candidate-review`.
    pub enum CandidateCase {
        /// The Issue Fix event of a verified repository contributor ([`fixture_event`]).
        IssueFixVerifiedContributor => "issue-fix-verified-contributor",
    }
}

/// Why a `candidate-review` packet could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CandidateError {
    /// The candidate or the review is invalid; the message is the reference's.
    #[error(transparent)]
    Field(#[from] FieldError),
}
/// Actor roles allowed to derive a hard policy.
pub const ELIGIBLE_POLICY_ACTOR_ROLES: &[&str] = &[
    "verified_repository_core_contributor",
    "verified_project_owner_or_operator",
];
/// The guard's rule text.
pub const GUARD_RULE: &str =
    "model_proposes_meaning_deterministic_guards_verify_scope_privacy_and_no_authority_expansion";
/// `persistence_next_step` when the caller must write and read back.
pub const PERSIST_THEN_READBACK: &str = "caller_uses_declared_corpus_write_authority_then_readback";

const CONFIDENCE_LEVELS: &[&str] = &["low", "medium", "high"];
const SOURCE_FRESHNESS_STATES: &[&str] = &["current", "stale", "unknown"];
const CONFLICT_STATES: &[&str] = &["clear", "unresolved"];
const IDENTITY_SCOPE_FIELDS: &[&str] = &["user_ref", "peer_ref", "session_ref"];
const MAX_SURFACES: usize = 12;
const MAX_ACTION_SCOPES: usize = 12;
/// The candidate fields whose J1 encoding is hashed into `candidate_ref`.
const IDENTITY_FIELDS: &[&str] = &[
    "target_class",
    "content_summary",
    "source",
    "scope",
    "guard_context",
    "requested_action_scopes",
];

fn fail(message: impl Into<String>) -> FieldError {
    FieldError::new(message)
}

/// A value that must be a JSON boolean; the label is the bare key.
fn boolean(map: &Map, key: &str) -> FieldResult<bool> {
    strict_bool(map.get(key), key)
}

/// Stripped `str(v or "")` that must be one of `allowed`.
fn member(v: Option<&Value>, allowed: &[&str], message: &str) -> FieldResult<String> {
    let s = pystr_strip(v);
    if allowed.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(fail(message))
    }
}

/// A bounded, de-duplicated, sorted token list. A falsy value is the empty list; any
/// other non-list value is rejected.
fn bounded_tokens(v: Option<&Value>, label: &str, maximum: usize) -> FieldResult<Vec<String>> {
    let items = match v {
        Some(Value::Array(items)) => &items[..],
        Some(other) if other.is_truthy() => {
            return Err(fail(format!("{label} must be a bounded token list")));
        }
        _ => &[],
    };
    if items.len() > maximum {
        return Err(fail(format!(
            "{label} must contain at most {maximum} items"
        )));
    }
    let mut unique = BTreeSet::new();
    for item in items {
        unique.insert(token(Some(item), label)?);
    }
    if unique.len() != items.len() {
        return Err(fail(format!("{label} must not contain duplicates")));
    }
    Ok(unique.into_iter().collect())
}

fn optional_timestamp(v: Option<&Value>, label: &str) -> FieldResult<Option<String>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(s)) if s.is_empty() => Ok(None),
        Some(_) => timestamp::timestamp_field(v, label).map(|(text, _)| Some(text)),
    }
}

fn scope(raw: Option<&Value>) -> FieldResult<Map> {
    let raw = object(raw, "scope")?;
    let surfaces = bounded_tokens(raw.get("surface_ids"), "scope.surface_ids", MAX_SURFACES)?;
    if surfaces.is_empty()
        || surfaces
            .iter()
            .any(|s| !crate::wire::text::is_surface_id(s))
    {
        return Err(fail(
            "scope.surface_ids must contain module-qualified tokens",
        ));
    }
    let mut out = obj! {
        "workspace_ref" => token(raw.get("workspace_ref"), "scope.workspace_ref")?,
        "project_ref" => token(raw.get("project_ref"), "scope.project_ref")?,
        "surface_ids" => surfaces,
        "revision_ref" => optional_token(raw.get("revision_ref"), "scope.revision_ref")?,
    };
    for field in IDENTITY_SCOPE_FIELDS {
        if let Some(value) = optional_token(raw.get(field), &format!("scope.{field}"))? {
            out.insert(*field, value);
        }
    }
    Ok(out)
}

fn source(raw: Option<&Value>) -> FieldResult<Map> {
    let raw = object(raw, "source")?;
    Ok(obj! {
        "source_kind" => token(raw.get("source_kind"), "source.source_kind")?,
        "source_ref" => compact(raw.get("source_ref"), "source.source_ref", 240)?,
        "actor_ref" => token(raw.get("actor_ref"), "source.actor_ref")?,
        "actor_role" => token(raw.get("actor_role"), "source.actor_role")?,
    })
}

fn reasoning(raw: Option<&Value>) -> FieldResult<Map> {
    let raw = object(raw, "reasoning")?;
    let confidence = member(
        raw.get("confidence"),
        CONFIDENCE_LEVELS,
        "reasoning.confidence must be low, medium, or high",
    )?;
    Ok(obj! {
        "summary" => compact(raw.get("summary"), "reasoning.summary", 500)?,
        "confidence" => confidence,
    })
}

fn guard_context(raw: Option<&Value>) -> FieldResult<Map> {
    let raw = object(raw, "guard_context")?;
    let freshness = member(
        raw.get("source_freshness"),
        SOURCE_FRESHNESS_STATES,
        "guard_context.source_freshness is invalid",
    )?;
    let conflict = member(
        raw.get("conflict_state"),
        CONFLICT_STATES,
        "guard_context.conflict_state is invalid",
    )?;
    Ok(obj! {
        "source_freshness" => freshness,
        "conflict_state" => conflict,
        "current_artifact_verified" => boolean(raw, "current_artifact_verified")?,
    })
}

/// A normalized authority checkpoint (who verified which action scopes for which
/// project). Absent means "nothing verified".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorityCheckpoint {
    pub verified: bool,
    pub source_ref: Option<String>,
    pub actor_ref: Option<String>,
    pub actor_role: Option<String>,
    pub project_ref: Option<String>,
    /// Sorted, unique.
    pub action_scopes: Vec<String>,
}

impl AuthorityCheckpoint {
    /// Normalizes a checkpoint; `None` or JSON `null` is the unverified default.
    pub fn from_value(raw: Option<&Value>) -> FieldResult<AuthorityCheckpoint> {
        let raw = match raw {
            None | Some(Value::Null) => return Ok(AuthorityCheckpoint::default()),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(fail("authority_checkpoint must be an object")),
        };
        Ok(AuthorityCheckpoint {
            verified: boolean(raw, "verified")?,
            source_ref: optional_token(raw.get("source_ref"), "authority_checkpoint.source_ref")?,
            actor_ref: optional_token(raw.get("actor_ref"), "authority_checkpoint.actor_ref")?,
            actor_role: optional_token(raw.get("actor_role"), "authority_checkpoint.actor_role")?,
            project_ref: optional_token(
                raw.get("project_ref"),
                "authority_checkpoint.project_ref",
            )?,
            action_scopes: bounded_tokens(
                raw.get("action_scopes"),
                "authority_checkpoint.action_scopes",
                MAX_ACTION_SCOPES,
            )?,
        })
    }

    /// The checkpoint as printed in the candidate packet.
    pub fn to_map(&self) -> Map {
        obj! {
            "verified" => self.verified,
            "source_ref" => self.source_ref.clone(),
            "actor_ref" => self.actor_ref.clone(),
            "actor_role" => self.actor_role.clone(),
            "project_ref" => self.project_ref.clone(),
            "action_scopes" => self.action_scopes.clone(),
        }
    }
}

fn str_at<'a>(map: &'a Map, path: &[&str]) -> Option<&'a str> {
    map.at(path)?.as_str()
}

/// The deterministic guard's reason codes for a freshly built candidate, in the
/// reference order (not sorted). Empty means the guard passed.
pub fn guard_reasons(candidate: &Map, checkpoint: &AuthorityCheckpoint) -> Vec<&'static str> {
    let mut reasons = Vec::new();
    let requested: BTreeSet<String> = str_items(candidate.get("requested_action_scopes"))
        .into_iter()
        .collect();
    let target_class = str_at(candidate, &["target_class"]).unwrap_or_default();
    if str_at(candidate, &["guard_context", "source_freshness"]) != Some("current") {
        reasons.push("source_freshness_not_current");
    }
    if str_at(candidate, &["guard_context", "conflict_state"]) != Some("clear") {
        reasons.push("unresolved_higher_authority_conflict");
    }
    let artifact_verified = candidate
        .get("guard_context")
        .and_then(|g| g.get("current_artifact_verified"))
        == Some(&Value::Bool(true));
    if target_class == "procedural_experience" && !artifact_verified {
        reasons.push("procedural_experience_current_artifact_unverified");
    }
    if target_class != "hard_policy" && !requested.is_empty() {
        reasons.push("advisory_class_requested_action_authority");
    }
    if target_class == "hard_policy" {
        let actor_ref = str_at(candidate, &["source", "actor_ref"]);
        let actor_role = str_at(candidate, &["source", "actor_role"]);
        let project_ref = str_at(candidate, &["scope", "project_ref"]);
        if requested.is_empty() {
            reasons.push("hard_policy_missing_action_scope");
        }
        if !checkpoint.verified || checkpoint.source_ref.is_none() {
            reasons.push("authority_checkpoint_unverified");
        }
        if checkpoint.actor_ref.as_deref() != actor_ref {
            reasons.push("authority_actor_mismatch");
        }
        if checkpoint.actor_role.as_deref() != actor_role {
            reasons.push("authority_actor_role_mismatch");
        }
        if !actor_role.is_some_and(|r| ELIGIBLE_POLICY_ACTOR_ROLES.contains(&r)) {
            reasons.push("actor_role_cannot_derive_hard_policy");
        }
        if checkpoint.project_ref.as_deref() != project_ref {
            reasons.push("authority_project_mismatch");
        }
        if requested
            .iter()
            .any(|scope| !checkpoint.action_scopes.contains(scope))
        {
            reasons.push("requested_action_scope_exceeds_verified_authority");
        }
    }
    reasons
}

/// `candidate:` + 20 hex of J1 over the record's identity fields (`target_class`,
/// `content_summary`, `source`, `scope`, `guard_context`, `requested_action_scopes`).
///
/// Fails when the record lacks one of them (the reference crashes there).
pub fn candidate_ref(record: &Map) -> FieldResult<String> {
    let mut identity = Map::new();
    for key in IDENTITY_FIELDS {
        let value = record
            .get(key)
            .ok_or_else(|| fail(format!("candidate record is missing {key}")))?;
        identity.insert(*key, value.clone());
    }
    Ok(digest::candidate_ref(&Value::Object(identity)))
}

/// Builds one `reward_memory_candidate_v0` packet from a proposal and an optional
/// authority checkpoint (`None`/`null` = unverified). Validation runs in the reference
/// order and the first failure is returned with its reference error string. The packet
/// is `review_ready` when the guard passes, else `guard_blocked`; nothing is persisted.
pub fn build_candidate(proposal: &Map, authority_checkpoint: Option<&Value>) -> FieldResult<Map> {
    if boolean(proposal, "raw_content_captured")? {
        return Err(fail(
            "reward-memory candidates must not capture raw content",
        ));
    }
    let target_class = member(
        proposal.get("target_class"),
        TARGET_CLASSES,
        "target_class must be a durable reusable memory class",
    )?;
    let mut lifecycle =
        obj! {"state" => "candidate", "supersedes_refs" => Value::Array(Box::default())};
    if let Some(expires_at) = optional_timestamp(proposal.get("expires_at"), "expires_at")? {
        lifecycle.insert("expires_at", expires_at);
    }
    let mut candidate = obj! {
        "schema_version" => CANDIDATE_SCHEMA_VERSION,
        "target_class" => target_class,
        "content_summary" => compact(proposal.get("content_summary"), "content_summary", 500)?,
        "source" => source(proposal.get("source"))?,
        "scope" => scope(proposal.get("scope"))?,
        "reasoning" => reasoning(proposal.get("reasoning"))?,
        "guard_context" => guard_context(proposal.get("guard_context"))?,
        "requested_action_scopes" => bounded_tokens(
            proposal.get("requested_action_scopes"),
            "requested_action_scopes",
            MAX_ACTION_SCOPES,
        )?,
        "lifecycle" => lifecycle,
        "privacy" => obj! {"raw_content_captured" => false},
    };
    let reference = candidate_ref(&candidate)?;
    candidate.insert("candidate_ref", reference);
    let checkpoint = AuthorityCheckpoint::from_value(authority_checkpoint)?;
    let reasons = guard_reasons(&candidate, &checkpoint);
    let passed = reasons.is_empty();
    Ok(obj! {
        "ok" => true,
        "schema_version" => CANDIDATE_SCHEMA_VERSION,
        "status" => if passed { "review_ready" } else { "guard_blocked" },
        "candidate" => candidate,
        "authority_checkpoint" => checkpoint.to_map(),
        "guard" => obj! {
            "passed" => passed,
            "reason_codes" => reasons,
            "rule" => GUARD_RULE,
            "semantic_reasoning_preserved" => true,
        },
        "available_review_decisions" => REVIEW_DECISIONS.to_vec(),
        "candidate_persisted" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

/// How large one field of a stored candidate record may be.
#[derive(Clone, Copy)]
enum Bound {
    /// A scalar, or a string of at most this many characters.
    Text(usize),
    /// Absent/null, or a list of at most this many strings of at most 200 characters.
    Tokens(usize),
    /// An object whose keys are all listed, each within its own bound.
    Object(&'static [(&'static str, Bound)]),
}

const TOKEN_CHARS: usize = 200;
const TOKEN: Bound = Bound::Text(TOKEN_CHARS);

/// The candidate record (`reward_memory_candidate_v0`) as the builder and the review
/// step make it, with the builder's limits: 500 characters of summary, 240 of
/// `source_ref`, 200 per token, 12 surfaces, action scopes or superseded refs.
const RECORD_BOUNDS: &[(&str, Bound)] = &[
    ("schema_version", TOKEN),
    ("target_class", TOKEN),
    ("content_summary", Bound::Text(500)),
    (
        "source",
        Bound::Object(&[
            ("source_kind", TOKEN),
            ("source_ref", Bound::Text(240)),
            ("actor_ref", TOKEN),
            ("actor_role", TOKEN),
        ]),
    ),
    (
        "scope",
        Bound::Object(&[
            ("workspace_ref", TOKEN),
            ("project_ref", TOKEN),
            ("surface_ids", Bound::Tokens(MAX_SURFACES)),
            ("revision_ref", TOKEN),
            ("user_ref", TOKEN),
            ("peer_ref", TOKEN),
            ("session_ref", TOKEN),
        ]),
    ),
    (
        "reasoning",
        Bound::Object(&[("summary", Bound::Text(500)), ("confidence", TOKEN)]),
    ),
    (
        "guard_context",
        Bound::Object(&[
            ("source_freshness", TOKEN),
            ("conflict_state", TOKEN),
            ("current_artifact_verified", TOKEN),
        ]),
    ),
    ("requested_action_scopes", Bound::Tokens(MAX_ACTION_SCOPES)),
    (
        "lifecycle",
        Bound::Object(&[
            ("state", TOKEN),
            ("supersedes_refs", Bound::Tokens(MAX_ACTION_SCOPES)),
            ("expires_at", TOKEN),
            ("retired_reason", TOKEN),
        ]),
    ),
    ("privacy", Bound::Object(&[("raw_content_captured", TOKEN)])),
    ("candidate_ref", TOKEN),
];

/// At most this many keys outside [`RECORD_BOUNDS`] are echoed, each holding a scalar or
/// a string of at most 500 characters.
const MAX_EXTRA_KEYS: usize = 12;

fn within(value: &Value, bound: Bound) -> bool {
    let short = |s: &str, max: usize| s.len() <= max || s.chars().count() <= max;
    match (bound, value) {
        (_, Value::Null) => true,
        (Bound::Text(max), Value::Str(s)) => short(s, max),
        (Bound::Text(_), Value::Bool(_) | Value::Int(_) | Value::Float(_)) => true,
        (Bound::Tokens(max), Value::Array(items)) => {
            items.len() <= max
                && items
                    .iter()
                    .all(|item| matches!(item, Value::Str(s) if short(s, TOKEN_CHARS)))
        }
        (Bound::Object(fields), Value::Object(map)) => map.iter().all(|(k, v)| {
            fields
                .iter()
                .find(|(name, _)| *name == k)
                .is_some_and(|(_, bound)| within(v, *bound))
        }),
        _ => false,
    }
}

/// Checks that a stored record stays inside the candidate contract's bounds, so that a
/// packet echoing it (the operator-control decision) cannot carry more than the contract
/// allows: every candidate field within `RECORD_BOUNDS` (a record the builder produced
/// always is), and at most `MAX_EXTRA_KEYS` other keys holding short scalars. The
/// values themselves are the review step's business; only their size is checked here.
pub fn check_record_bounds(record: &Map) -> FieldResult<()> {
    let mut extra = 0usize;
    for (key, value) in record.iter() {
        let ok = match RECORD_BOUNDS.iter().find(|(name, _)| *name == key) {
            Some((_, bound)) => within(value, *bound),
            None => {
                extra += 1;
                extra <= MAX_EXTRA_KEYS
                    && within(&Value::from(key), TOKEN)
                    && within(value, Bound::Text(500))
            }
        };
        if !ok {
            let label = if RECORD_BOUNDS.iter().any(|(name, _)| *name == key) {
                key
            } else {
                "extra field"
            };
            return Err(fail(format!(
                "reviewed record {label} is outside the candidate contract bounds"
            )));
        }
    }
    Ok(())
}

/// The record under review and whether its guard passed, from either a candidate packet
/// or an earlier review packet.
fn review_target(target: &Map) -> FieldResult<(Map, bool)> {
    match target.get("schema_version").and_then(Value::as_str) {
        Some(CANDIDATE_SCHEMA_VERSION) => match (target.get("candidate"), target.get("guard")) {
            (Some(Value::Object(candidate)), Some(Value::Object(guard))) => Ok((
                candidate.clone(),
                guard.get("passed") == Some(&Value::Bool(true)),
            )),
            _ => Err(fail("candidate packet is incomplete")),
        },
        Some(REVIEW_SCHEMA_VERSION) => match target.get("record") {
            Some(Value::Object(record)) => Ok((
                record.clone(),
                target.get("guard_passed") == Some(&Value::Bool(true)),
            )),
            _ => Err(fail("review packet does not contain a record")),
        },
        _ => Err(fail("review target must be a candidate or review packet")),
    }
}

/// Python's `list(value or [])` for a lifecycle's `supersedes_refs`.
fn supersedes_list(v: Option<&Value>) -> FieldResult<Vec<Value>> {
    match v {
        Some(value) if !value.is_truthy() => Ok(Vec::new()),
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.to_vec()),
        Some(Value::Str(s)) => Ok(s.chars().map(|c| Value::from(c.to_string())).collect()),
        Some(Value::Object(m)) => Ok(m.keys().map(Value::from).collect()),
        // The reference crashes with a TypeError on a number or `true`.
        Some(_) => Err(fail("lifecycle.supersedes_refs must be a list")),
    }
}

/// Applies one review decision (`review` holds `decision`, `reviewer_ref`, `review_ref`,
/// `reasoning_summary` and, for `edit`, `edited_content_summary`) to a candidate packet
/// or a previous review packet, and returns the `reward_memory_candidate_review_v0`
/// packet.
///
/// A failed guard turns `accept`/`edit` into an effective `no_write` with status
/// `guard_blocked` and leaves the record untouched. Persisting the reviewed record is the
/// caller's job (`persistence_next_step`).
pub fn review_candidate(target: &Map, review: &Map) -> FieldResult<Map> {
    let (mut record, guard_passed) = review_target(target)?;
    let decision = ReviewDecision::from_name(&pystr_strip(review.get("decision")))
        .ok_or_else(|| fail("decision must be accept, edit, reject, retire, or no_write"))?;
    let reviewer_ref = token(review.get("reviewer_ref"), "review.reviewer_ref")?;
    let review_ref = token(review.get("review_ref"), "review.review_ref")?;
    let reasoning_summary = compact(
        review.get("reasoning_summary"),
        "review.reasoning_summary",
        500,
    )?;
    let lifecycle = record.get("lifecycle").and_then(Value::as_object).cloned();
    let state = lifecycle.as_ref().and_then(|l| l.get("state")).cloned();
    let supersedes = match &lifecycle {
        Some(l) => supersedes_list(l.get("supersedes_refs"))?,
        None => Vec::new(),
    };
    let expires_at = lifecycle
        .as_ref()
        .and_then(|l| l.get("expires_at"))
        .filter(|v| v.is_truthy())
        .cloned();
    let state_is = |s: &str| state.as_ref().and_then(Value::as_str) == Some(s);
    if decision == ReviewDecision::Retire && !state_is("active") {
        return Err(fail("retire requires an active reviewed record"));
    }
    if decision != ReviewDecision::Retire && !state_is("candidate") {
        return Err(fail(
            "accept, edit, reject, and no_write require a candidate",
        ));
    }

    let retired = |reason: &str| {
        obj! {
            "state" => "retired",
            "supersedes_refs" => Value::Array(supersedes.clone().into()),
            "retired_reason" => reason,
        }
    };
    let mut effective = decision;
    let status =
        if !guard_passed && matches!(decision, ReviewDecision::Accept | ReviewDecision::Edit) {
            effective = ReviewDecision::NoWrite;
            "guard_blocked"
        } else {
            match decision {
                ReviewDecision::Accept => {
                    let mut next = obj! {
                        "state" => "active",
                        "supersedes_refs" => Value::Array(supersedes.clone().into()),
                    };
                    if let Some(e) = &expires_at {
                        next.insert("expires_at", e.clone());
                    }
                    record.insert("lifecycle", next);
                    "active"
                }
                ReviewDecision::Edit => {
                    let old_ref = pystr(record.get("candidate_ref"));
                    let edited = compact(
                        review.get("edited_content_summary"),
                        "review.edited_content_summary",
                        500,
                    )?;
                    record.insert("content_summary", edited);
                    let new_ref = candidate_ref(&record)?;
                    record.insert("candidate_ref", new_ref);
                    let mut next = obj! {
                        "state" => "candidate",
                        "supersedes_refs" => vec![old_ref],
                    };
                    if let Some(e) = &expires_at {
                        next.insert("expires_at", e.clone());
                    }
                    record.insert("lifecycle", next);
                    "review_ready"
                }
                ReviewDecision::Reject => {
                    record.insert("lifecycle", retired("rejected_in_review"));
                    "rejected"
                }
                ReviewDecision::Retire => {
                    record.insert("lifecycle", retired("reviewed_retirement"));
                    "retired"
                }
                ReviewDecision::NoWrite => {
                    record.insert("lifecycle", retired("no_write_rationale"));
                    "no_write"
                }
            }
        };
    let persist = matches!(effective, ReviewDecision::Accept | ReviewDecision::Retire);
    Ok(obj! {
        "ok" => true,
        "schema_version" => REVIEW_SCHEMA_VERSION,
        "status" => status,
        "requested_decision" => decision.as_str(),
        "effective_decision" => effective.as_str(),
        "guard_passed" => guard_passed,
        "review" => obj! {
            "reviewer_ref" => reviewer_ref,
            "review_ref" => review_ref,
            "reasoning_summary" => reasoning_summary,
        },
        "record" => record,
        "persistence_next_step" => if persist { PERSIST_THEN_READBACK } else { "none" },
        "grants_new_action_authority" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

fn field(event: &Map, key: &str) -> Value {
    event.get(key).cloned().unwrap_or(Value::Null)
}

/// Maps a compact Issue Fix event onto the shared candidate contract and returns the
/// `issue_fix_reward_memory_candidate_adapter_v0` packet. `issue_ref` (compact, ≤160) is
/// checked first; `surface_id` becomes the only scope surface.
pub fn issue_fix_candidate(event: &Map, authority_checkpoint: Option<&Value>) -> FieldResult<Map> {
    let issue_ref = compact(event.get("issue_ref"), "issue_ref", 160)?;
    let requested = match event.get("requested_action_scopes") {
        Some(v) if v.is_truthy() => v.clone(),
        _ => Value::Array(Box::default()),
    };
    let proposal = obj! {
        "target_class" => field(event, "target_class"),
        "content_summary" => field(event, "content_summary"),
        "source" => field(event, "source"),
        "scope" => obj! {
            "workspace_ref" => field(event, "workspace_ref"),
            "project_ref" => field(event, "repository_ref"),
            "surface_ids" => Value::from(vec![field(event, "surface_id")]),
            "revision_ref" => field(event, "revision_ref"),
        },
        "reasoning" => field(event, "reasoning"),
        "guard_context" => field(event, "guard_context"),
        "requested_action_scopes" => requested,
        "raw_content_captured" => field(event, "raw_content_captured"),
    };
    let packet = build_candidate(&proposal, authority_checkpoint)?;
    let surface_id = packet
        .get("candidate")
        .and_then(|c| c.get("scope"))
        .and_then(|s| s.get("surface_ids"))
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or(Value::Null);
    Ok(obj! {
        "ok" => true,
        "schema_version" => ISSUE_FIX_ADAPTER_SCHEMA_VERSION,
        "issue_ref" => issue_ref,
        "surface_id" => surface_id,
        "shared_candidate" => packet,
        "adapter_role" => "field_mapping_only_shared_core_owns_semantics_and_lifecycle",
        "fresh_execution_context_source" => "existing_loopx_control_plane",
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

/// The public Issue Fix event of the `issue-fix-verified-contributor` fixture.
pub fn fixture_event() -> Map {
    obj! {
        "issue_ref" => "github:example/repository#42",
        "workspace_ref" => "workspace:example",
        "repository_ref" => "repository:example",
        "surface_id" => "issue_fix.patch_planning",
        "revision_ref" => "revision:abc123",
        "target_class" => "hard_policy",
        "content_summary" =>
            "Keep focused fixes within the affected module unless broader evidence is present.",
        "source" => obj! {
            "source_kind" => "maintainer_correction",
            "source_ref" => "github:example/repository#42:comment:1",
            "actor_ref" => "github:user:maintainer",
            "actor_role" => "verified_repository_core_contributor",
        },
        "reasoning" => obj! {
            "summary" => "The correction consistently constrains issue-fix scope; it does not grant repository write authority.",
            "confidence" => "high",
        },
        "guard_context" => obj! {
            "source_freshness" => "current",
            "conflict_state" => "clear",
            "current_artifact_verified" => true,
        },
        "requested_action_scopes" => vec!["issue_fix:scope_selection"],
        "raw_content_captured" => false,
    }
}

/// The verified-contributor authority checkpoint of the fixture.
pub fn fixture_checkpoint() -> Map {
    obj! {
        "verified" => true,
        "source_ref" => "repository:authority-map",
        "actor_ref" => "github:user:maintainer",
        "actor_role" => "verified_repository_core_contributor",
        "project_ref" => "repository:example",
        "action_scopes" => vec!["issue_fix:scope_selection"],
    }
}

/// The adapter packet of a built-in candidate fixture.
pub fn fixture_adapter(case: CandidateCase) -> FieldResult<Map> {
    match case {
        CandidateCase::IssueFixVerifiedContributor => {
            issue_fix_candidate(&fixture_event(), Some(&Value::Object(fixture_checkpoint())))
        }
    }
}

/// The fixture review request the CLI applies for `decision`.
pub fn fixture_review(decision: ReviewDecision) -> Map {
    let name = decision.as_str();
    let mut review = obj! {
        "decision" => name,
        "reviewer_ref" => "github:user:maintainer",
        "review_ref" => format!("review:fixture:{name}"),
        "reasoning_summary" => "The compact evidence and scope were reviewed.",
    };
    if decision == ReviewDecision::Edit {
        review.insert(
            "edited_content_summary",
            "Keep focused fixes within the affected module unless current evidence requires a broader surface.",
        );
    }
    review
}

/// The `candidate-review` packet: the fixture candidate reviewed with `decision`
/// (`retire` first accepts it), with the adapter packet appended as `adapter`.
pub fn candidate_review_packet(
    case: CandidateCase,
    decision: ReviewDecision,
) -> Result<Map, CandidateError> {
    let adapter = fixture_adapter(case)?;
    let mut target = adapter
        .get("shared_candidate")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let review = fixture_review(decision);
    if decision == ReviewDecision::Retire {
        let accept = review
            .clone()
            .with("decision", "accept")
            .with("review_ref", "review:fixture:accept-before-retire");
        target = review_candidate(&target, &accept)?;
    }
    let mut packet = review_candidate(&target, &review)?;
    packet.insert("adapter", adapter);
    Ok(packet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{DumpOptions, dumps, parse};

    fn fixture_candidate() -> Map {
        let adapter = fixture_adapter(CandidateCase::IssueFixVerifiedContributor).expect("fixture");
        adapter.object("shared_candidate").clone()
    }

    trait At {
        fn object(&self, key: &str) -> &Map;
    }

    impl At for Map {
        fn object(&self, key: &str) -> &Map {
            self.get(key)
                .and_then(Value::as_object)
                .expect("object key")
        }
    }

    fn proposal(json: &str) -> Map {
        parse(json)
            .expect("json")
            .as_object()
            .cloned()
            .expect("object")
    }

    fn base_proposal() -> Map {
        let candidate = fixture_candidate();
        candidate
            .object("candidate")
            .clone()
            .with("raw_content_captured", false)
    }

    #[test]
    fn fixture_candidate_ref_matches_the_worked_example() {
        let packet = fixture_candidate();
        let record = &packet.object("candidate");
        let identity: Map = IDENTITY_FIELDS
            .iter()
            .map(|k| ((*k).to_owned(), record.get(k).cloned().expect("field")))
            .collect();
        assert_eq!(
            dumps(&Value::Object(identity), DumpOptions::LEGACY_RAW),
            r#"{"content_summary": "Keep focused fixes within the affected module unless broader evidence is present.", "guard_context": {"conflict_state": "clear", "current_artifact_verified": true, "source_freshness": "current"}, "requested_action_scopes": ["issue_fix:scope_selection"], "scope": {"project_ref": "repository:example", "revision_ref": "revision:abc123", "surface_ids": ["issue_fix.patch_planning"], "workspace_ref": "workspace:example"}, "source": {"actor_ref": "github:user:maintainer", "actor_role": "verified_repository_core_contributor", "source_kind": "maintainer_correction", "source_ref": "github:example/repository#42:comment:1"}, "target_class": "hard_policy"}"#
        );
        assert_eq!(
            record.get("candidate_ref").and_then(Value::as_str),
            Some("candidate:0e073f348a2a6c3ffc3c")
        );
        assert_eq!(packet.get("status"), Some(&Value::from("review_ready")));
    }

    #[test]
    fn non_ascii_summary_is_hashed_as_raw_utf8() {
        let p = base_proposal().with("content_summary", "Keep it — 中文 summary ✓");
        let packet = build_candidate(&p, None).expect("valid");
        assert_eq!(
            packet.object("candidate").get("candidate_ref"),
            Some(&Value::from("candidate:832247940beb2db359f2"))
        );
    }

    #[test]
    fn hard_policy_without_checkpoint_is_guard_blocked_with_ordered_reasons() {
        let packet = build_candidate(&base_proposal(), None).expect("valid");
        assert_eq!(packet.get("status"), Some(&Value::from("guard_blocked")));
        assert_eq!(
            packet.object("guard").get("reason_codes"),
            Some(&Value::from(vec![
                "authority_checkpoint_unverified",
                "authority_actor_mismatch",
                "authority_actor_role_mismatch",
                "authority_project_mismatch",
                "requested_action_scope_exceeds_verified_authority",
            ]))
        );
        assert_eq!(
            packet.object("authority_checkpoint").get("action_scopes"),
            Some(&Value::Array(Box::default()))
        );
    }

    #[test]
    fn advisory_class_with_action_scopes_is_blocked() {
        let mut p = base_proposal().with("target_class", "procedural_experience");
        p.insert(
            "guard_context",
            obj! {"source_freshness" => "stale", "conflict_state" => "unresolved", "current_artifact_verified" => false},
        );
        let packet = build_candidate(&p, None).expect("valid");
        assert_eq!(
            packet.object("guard").get("reason_codes"),
            Some(&Value::from(vec![
                "source_freshness_not_current",
                "unresolved_higher_authority_conflict",
                "procedural_experience_current_artifact_unverified",
                "advisory_class_requested_action_authority",
            ]))
        );
    }

    #[test]
    fn builder_reports_the_first_failure_in_reference_order() {
        let cases: &[(&str, &str)] = &[
            (r#"{}"#, "raw_content_captured must be a boolean"),
            (
                r#"{"raw_content_captured": true}"#,
                "reward-memory candidates must not capture raw content",
            ),
            (
                r#"{"raw_content_captured": false, "target_class": "working_context"}"#,
                "target_class must be a durable reusable memory class",
            ),
            (
                r#"{"raw_content_captured": false, "target_class": "hard_policy", "expires_at": "2026-07-16"}"#,
                "expires_at must include a timezone",
            ),
            (
                r#"{"raw_content_captured": false, "target_class": "hard_policy", "content_summary": "/home/u/secret"}"#,
                "content_summary must be compact and public-safe",
            ),
            (
                r#"{"raw_content_captured": false, "target_class": "hard_policy", "content_summary": "x", "source": []}"#,
                "source must be an object",
            ),
        ];
        for (json, message) in cases {
            assert_eq!(
                build_candidate(&proposal(json), None).expect_err(json).0,
                *message,
                "{json}"
            );
        }
    }

    #[test]
    fn token_lists_are_bounded_unique_and_module_qualified() {
        let with_surfaces = |v: Value| {
            let mut p = base_proposal();
            let scope = p.object("scope").clone().with("surface_ids", v);
            p.insert("scope", scope);
            build_candidate(&p, None)
                .map(|_| ())
                .expect_err("invalid")
                .0
        };
        assert_eq!(
            with_surfaces(Value::from("a.b")),
            "scope.surface_ids must be a bounded token list"
        );
        assert_eq!(
            with_surfaces(Value::from(vec!["a.b"; 13])),
            "scope.surface_ids must contain at most 12 items"
        );
        assert_eq!(
            with_surfaces(Value::from(vec!["a.b", "a.b"])),
            "scope.surface_ids must not contain duplicates"
        );
        assert_eq!(
            with_surfaces(Value::from(vec!["plain"])),
            "scope.surface_ids must contain module-qualified tokens"
        );
        assert_eq!(
            with_surfaces(Value::Array(Box::default())),
            "scope.surface_ids must contain module-qualified tokens"
        );
        assert_eq!(
            with_surfaces(Value::Array(vec![Value::Null].into())),
            "scope.surface_ids must be a compact public-safe token"
        );
    }

    #[test]
    fn identity_scope_fields_appear_only_when_present() {
        let mut p = base_proposal();
        let scope = p
            .object("scope")
            .clone()
            .with("session_ref", "session:x")
            .with("user_ref", "");
        p.insert("scope", scope);
        let packet = build_candidate(&p, None).expect("valid");
        let keys: Vec<&str> = packet.object("candidate").object("scope").keys().collect();
        assert_eq!(
            keys,
            [
                "workspace_ref",
                "project_ref",
                "surface_ids",
                "revision_ref",
                "session_ref"
            ]
        );
    }

    fn review(decision: &str) -> Map {
        obj! {
            "decision" => decision,
            "reviewer_ref" => "github:user:maintainer",
            "review_ref" => "review:test",
            "reasoning_summary" => "Reviewed.",
            "edited_content_summary" => "A new summary.",
        }
    }

    #[test]
    fn decision_table_sets_status_lifecycle_and_persistence() {
        let candidate = fixture_candidate();
        let rows = [
            ("accept", "active", "active", PERSIST_THEN_READBACK),
            ("edit", "review_ready", "candidate", "none"),
            ("reject", "rejected", "retired", "none"),
            ("no_write", "no_write", "retired", "none"),
        ];
        for (decision, status, state, next) in rows {
            let packet = review_candidate(&candidate, &review(decision)).expect(decision);
            assert_eq!(
                packet.get("status"),
                Some(&Value::from(status)),
                "{decision}"
            );
            assert_eq!(
                packet.object("record").object("lifecycle").get("state"),
                Some(&Value::from(state)),
                "{decision}"
            );
            assert_eq!(
                packet.get("persistence_next_step"),
                Some(&Value::from(next))
            );
        }
    }

    #[test]
    fn edit_recomputes_the_ref_and_supersedes_the_old_one() {
        let packet = candidate_review_packet(
            CandidateCase::IssueFixVerifiedContributor,
            ReviewDecision::Edit,
        )
        .expect("edit");
        let record = &packet.object("record");
        assert_eq!(
            record.get("candidate_ref"),
            Some(&Value::from("candidate:3dbad6ddf5caa1ed814f"))
        );
        assert_eq!(
            record.object("lifecycle").get("supersedes_refs"),
            Some(&Value::from(vec!["candidate:0e073f348a2a6c3ffc3c"]))
        );
    }

    #[test]
    fn retire_needs_an_accepted_record() {
        let candidate = fixture_candidate();
        assert_eq!(
            review_candidate(&candidate, &review("retire"))
                .expect_err("not active")
                .0,
            "retire requires an active reviewed record"
        );
        let accepted = review_candidate(&candidate, &review("accept")).expect("accept");
        assert_eq!(
            review_candidate(&accepted, &review("accept"))
                .expect_err("not candidate")
                .0,
            "accept, edit, reject, and no_write require a candidate"
        );
        let retired = review_candidate(&accepted, &review("retire")).expect("retire");
        assert_eq!(retired.get("status"), Some(&Value::from("retired")));
        assert_eq!(
            retired
                .object("record")
                .object("lifecycle")
                .get("retired_reason"),
            Some(&Value::from("reviewed_retirement"))
        );
    }

    #[test]
    fn failed_guard_turns_accept_into_no_write_and_keeps_the_record() {
        let blocked = build_candidate(&base_proposal(), None).expect("valid");
        let packet = review_candidate(&blocked, &review("accept")).expect("review");
        assert_eq!(packet.get("status"), Some(&Value::from("guard_blocked")));
        assert_eq!(
            packet.get("effective_decision"),
            Some(&Value::from("no_write"))
        );
        assert_eq!(
            packet.get("persistence_next_step"),
            Some(&Value::from("none"))
        );
        assert_eq!(packet.object("record"), blocked.object("candidate"));
    }

    #[test]
    fn review_rejects_unknown_targets_and_decisions() {
        assert_eq!(
            review_candidate(&obj! {"schema_version" => "x"}, &review("accept"))
                .expect_err("target")
                .0,
            "review target must be a candidate or review packet"
        );
        assert_eq!(
            review_candidate(&fixture_candidate(), &review("approve"))
                .expect_err("decision")
                .0,
            "decision must be accept, edit, reject, retire, or no_write"
        );
    }

    #[test]
    fn issue_fix_adapter_checks_issue_ref_first_and_needs_a_surface() {
        let event = fixture_event()
            .with("issue_ref", "")
            .with("target_class", "bogus");
        assert_eq!(
            issue_fix_candidate(&event, None).expect_err("issue_ref").0,
            "issue_ref must be compact and public-safe"
        );
        let mut event = fixture_event();
        event.remove("surface_id");
        assert_eq!(
            issue_fix_candidate(&event, None).expect_err("surface").0,
            "scope.surface_ids must be a compact public-safe token"
        );
    }
}

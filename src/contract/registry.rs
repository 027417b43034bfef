//! Stage-1 corpus declarations: normalization of one corpus and the reference registry.
//!
//! Owns the corpus record contract (ids, class, authorities, scope, freshness, lifecycle,
//! retrieval, maintenance, privacy), its error strings and the seven built-in reference
//! corpora printed by `corpus-registry`. Normalization is idempotent and pure; one
//! corpus's ([`normalize_corpus`], a field validator returning the wire layer's
//! [`FieldError`]) is reused by `health-check`, `ingest-event`, recall, experiment config
//! and operator control; a list's ([`normalize_corpora`]) fails with a [`RegistryError`].

use std::sync::LazyLock;

use crate::contract::architecture::CLASS_IDS;
use crate::obj;
use crate::wire::json::{self, Map, Value};
use crate::wire::pyfmt::pystr_strip;
use crate::wire::text::{self, FieldError, FieldResult, optional_token, token};

pub const READ_AUTHORITIES: &[&str] = &[
    "goal_run_scoped",
    "authority_scoped",
    "module_scoped",
    "actor_scoped",
    "session_scoped",
];
pub const WRITE_AUTHORITIES: &[&str] = &[
    "append_only_overlay",
    "authorized_policy_source",
    "provider_managed",
    "read_only",
    "ephemeral_runtime",
];
pub const FRESHNESS_MODES: &[&str] = &[
    "source_truth_bound",
    "revision_bound",
    "time_bound",
    "session_archive_bound",
    "execution_bound",
];
pub const LIFECYCLE_STATES: &[&str] = &["active", "superseded", "retired"];
pub const VISIBILITIES: &[&str] = &["private", "workspace", "public_safe"];

fn fail(message: impl Into<String>) -> FieldError {
    FieldError::new(message)
}

fn normalize_scope(v: Option<&Value>) -> FieldResult<Map> {
    let scope = text::object(v, "corpus scope")?;
    let surfaces = match scope.get("surface_ids") {
        Some(Value::Array(items)) if items.len() <= 20 => items,
        _ => return Err(fail("scope.surface_ids must be a bounded list")),
    };
    let mut surface_ids = Vec::with_capacity(surfaces.len());
    for item in surfaces {
        let s = pystr_strip(Some(item));
        if !text::is_surface_id(&s) {
            return Err(fail("scope.surface_ids contains an invalid token"));
        }
        surface_ids.push(s);
    }
    let mut sorted = surface_ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != surface_ids.len() {
        return Err(fail("scope.surface_ids must not contain duplicates"));
    }
    if sorted.is_empty() {
        return Err(fail("scope.surface_ids must not be empty"));
    }
    let workspace_ref = token(scope.get("workspace_ref"), "scope.workspace_ref")?;
    let project_ref = token(scope.get("project_ref"), "scope.project_ref")?;
    let user_ref = optional_token(scope.get("user_ref"), "scope.user_ref")?;
    let peer_ref = optional_token(scope.get("peer_ref"), "scope.peer_ref")?;
    let session_ref = optional_token(scope.get("session_ref"), "scope.session_ref")?;
    Ok(obj! {
        "workspace_ref" => workspace_ref,
        "project_ref" => project_ref,
        "surface_ids" => sorted,
        "user_ref" => user_ref,
        "peer_ref" => peer_ref,
        "session_ref" => session_ref,
    })
}

fn normalize_freshness(v: Option<&Value>) -> FieldResult<Map> {
    let freshness = text::object(v, "corpus freshness")?;
    let mode = text::one_of(
        freshness.get("mode"),
        FRESHNESS_MODES,
        "freshness.mode is invalid",
    )?;
    let max_age = match freshness.get("max_age_seconds") {
        None | Some(Value::Null) => None,
        Some(Value::Int(n)) if *n >= 1 => Some(Value::Int(*n)),
        Some(Value::BigInt(s)) if !s.starts_with('-') => Some(Value::BigInt(s.clone())),
        Some(_) => return Err(fail("freshness.max_age_seconds must be a positive integer")),
    };
    let source_revision = optional_token(
        freshness.get("source_revision"),
        "freshness.source_revision",
    )?;
    if (mode == "revision_bound" || mode == "session_archive_bound") && source_revision.is_none() {
        return Err(fail(format!(
            "freshness mode {mode} requires source_revision"
        )));
    }
    if mode == "time_bound" && max_age.is_none() {
        return Err(fail("time_bound freshness requires max_age_seconds"));
    }
    Ok(obj! {
        "mode" => mode,
        "source_revision" => source_revision,
        "max_age_seconds" => max_age.unwrap_or(Value::Null),
    })
}

fn normalize_lifecycle(v: Option<&Value>) -> FieldResult<Map> {
    let lifecycle = text::object(v, "corpus lifecycle")?;
    let state = text::one_of(
        lifecycle.get("state"),
        LIFECYCLE_STATES,
        "lifecycle.state is invalid",
    )?;
    let supersedes = text::token_list(
        lifecycle.get("supersedes"),
        "lifecycle.supersedes",
        50,
        text::is_token,
        true,
    )?;
    if supersedes.iter().any(|s| !text::is_corpus_id(s)) {
        return Err(fail("lifecycle.supersedes must contain corpus ids"));
    }
    let superseded_by = optional_token(lifecycle.get("superseded_by"), "lifecycle.superseded_by")?;
    if let Some(s) = &superseded_by
        && !text::is_corpus_id(s)
    {
        return Err(fail("lifecycle.superseded_by must be a corpus id"));
    }
    let retirement_reason = optional_token(
        lifecycle.get("retirement_reason"),
        "lifecycle.retirement_reason",
    )?;
    if state == "superseded" && superseded_by.is_none() {
        return Err(fail("superseded corpus requires lifecycle.superseded_by"));
    }
    if state == "retired" && retirement_reason.is_none() {
        return Err(fail("retired corpus requires lifecycle.retirement_reason"));
    }
    Ok(obj! {
        "state" => state,
        "supersedes" => supersedes,
        "superseded_by" => superseded_by,
        "retirement_reason" => retirement_reason,
    })
}

fn normalize_retrieval(v: Option<&Value>) -> FieldResult<Map> {
    let retrieval = text::object(v, "corpus retrieval")?;
    let mut out = Map::new();
    for key in [
        "index_required",
        "readback_required",
        "application_receipt_required",
    ] {
        out.insert(key, text::strict_bool(retrieval.get(key), key)?);
    }
    Ok(out)
}

fn normalize_maintenance(v: Option<&Value>) -> FieldResult<Map> {
    let maintenance = text::object(v, "corpus maintenance")?;
    let triggers = text::token_list(
        maintenance.get("writeback_triggers"),
        "maintenance.writeback_triggers",
        10,
        text::is_token,
        true,
    )?;
    let closure_policy = token(
        maintenance.get("closure_policy"),
        "maintenance.closure_policy",
    )?;
    let retirement_authority = token(
        maintenance.get("retirement_authority"),
        "maintenance.retirement_authority",
    )?;
    Ok(obj! {
        "writeback_triggers" => triggers,
        "closure_policy" => closure_policy,
        "retirement_authority" => retirement_authority,
    })
}

fn normalize_privacy(v: Option<&Value>) -> FieldResult<Map> {
    let privacy = text::object(v, "corpus privacy")?;
    let visibility = text::one_of(
        privacy.get("visibility"),
        VISIBILITIES,
        "privacy.visibility is invalid",
    )?;
    let raw = text::strict_bool(
        privacy.get("raw_content_in_registry"),
        "raw_content_in_registry",
    )?;
    if raw {
        return Err(fail(
            "reward-memory registry must not contain raw memory content",
        ));
    }
    Ok(obj! {"visibility" => visibility, "raw_content_in_registry" => false})
}

/// Normalizes one corpus declaration (unknown keys ignored), or fails with the first
/// violated rule's reference error string.
pub fn normalize_corpus(value: &Value) -> FieldResult<Map> {
    let corpus = match value {
        Value::Object(m) => m,
        _ => return Err(fail("corpus must be an object")),
    };
    let corpus_id = pystr_strip(corpus.get("corpus_id"));
    if !text::is_corpus_id(&corpus_id) {
        return Err(fail("corpus_id must be a lower-snake token"));
    }
    let class_id = text::one_of(
        corpus.get("class_id"),
        CLASS_IDS,
        "class_id is not a Stage-0 reward-memory class",
    )?;
    let read_authority = text::one_of(
        corpus.get("read_authority"),
        READ_AUTHORITIES,
        "read_authority is invalid",
    )?;
    let write_authority = text::one_of(
        corpus.get("write_authority"),
        WRITE_AUTHORITIES,
        "write_authority is invalid",
    )?;
    let provider_id = token(corpus.get("provider_id"), "provider_id")?;
    let owner_ref = token(corpus.get("owner_ref"), "owner_ref")?;
    let source_of_truth = token(corpus.get("source_of_truth"), "source_of_truth")?;
    let scope = normalize_scope(corpus.get("scope"))?;
    let freshness = normalize_freshness(corpus.get("freshness"))?;
    let lifecycle = normalize_lifecycle(corpus.get("lifecycle"))?;
    let retrieval = normalize_retrieval(corpus.get("retrieval"))?;
    let maintenance = normalize_maintenance(corpus.get("maintenance"))?;
    let privacy = normalize_privacy(corpus.get("privacy"))?;
    let mut out = obj! {
        "corpus_id" => corpus_id,
        "class_id" => class_id,
        "provider_id" => provider_id,
        "owner_ref" => owner_ref,
        "source_of_truth" => source_of_truth,
        "read_authority" => read_authority,
        "write_authority" => write_authority,
        "scope" => scope,
        "freshness" => freshness,
        "lifecycle" => lifecycle,
        "retrieval" => retrieval,
        "maintenance" => maintenance,
        "privacy" => privacy,
    };
    if let Some(digest) = optional_token(
        corpus.get("provider_scope_ref_digest"),
        "provider_scope_ref_digest",
    )? {
        out.insert("provider_scope_ref_digest", digest);
    }
    if let Some(role) = optional_token(corpus.get("read_role"), "read_role")? {
        out.insert("read_role", role);
    }
    Ok(out)
}

/// Why a list of corpora is not a registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The list is empty or longer than 50.
    #[error("corpora must contain between 1 and 50 items")]
    Size,
    /// One corpus is invalid; the message is the reference's.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// Two corpora have the same id.
    #[error("corpus_id values must be unique")]
    DuplicateId,
    /// A corpus supersedes itself or is superseded by itself.
    #[error("corpus lifecycle must not reference itself")]
    SelfReference,
    /// A lifecycle names a corpus that is not in the list.
    #[error("corpus lifecycle references an unknown corpus_id")]
    UnknownReference,
}

/// Normalizes a list of corpora and checks ids and lifecycle references.
pub fn normalize_corpora(corpora: &[Value]) -> Result<Vec<Map>, RegistryError> {
    if corpora.is_empty() || corpora.len() > 50 {
        return Err(RegistryError::Size);
    }
    let normalized: Vec<Map> = corpora
        .iter()
        .map(normalize_corpus)
        .collect::<FieldResult<_>>()?;
    let ids: Vec<String> = normalized.iter().map(corpus_id_of).collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != ids.len() {
        return Err(RegistryError::DuplicateId);
    }
    for corpus in &normalized {
        let own = corpus_id_of(corpus);
        let lifecycle = corpus.get("lifecycle");
        let mut refs = json::str_items(lifecycle.and_then(|l| l.get("supersedes")));
        if let Some(by) = lifecycle
            .and_then(|l| l.get("superseded_by"))
            .and_then(Value::as_str)
        {
            refs.push(by.to_owned());
        }
        if refs.contains(&own) {
            return Err(RegistryError::SelfReference);
        }
        if refs.iter().any(|r| !ids.contains(r)) {
            return Err(RegistryError::UnknownReference);
        }
    }
    Ok(normalized)
}

fn corpus_id_of(corpus: &Map) -> String {
    corpus
        .get("corpus_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The seven built-in reference corpora, normalized.
pub static REFERENCE_CORPORA: LazyLock<Vec<Map>> = LazyLock::new(|| {
    let parsed = json::parse(include_str!("../assets/reference_corpora.json"));
    let items = match parsed {
        Ok(Value::Array(items)) => items,
        other => panic!("built-in reference corpora must be a JSON list: {other:?}"),
    };
    match normalize_corpora(&items) {
        Ok(list) => list,
        Err(err) => panic!("built-in reference corpora must normalize: {err}"),
    }
});

/// Looks a reference corpus up by id.
pub fn reference_corpus(corpus_id: &str) -> Option<&'static Map> {
    REFERENCE_CORPORA
        .iter()
        .find(|c| c.get("corpus_id").and_then(Value::as_str) == Some(corpus_id))
}

/// The `reward_memory_corpus_registry_v0` packet for normalized corpora.
pub fn registry_packet(corpora: &[Map], status: &str) -> Value {
    let mut coverage = Map::new();
    for class_id in CLASS_IDS {
        let mut ids: Vec<String> = corpora
            .iter()
            .filter(|c| c.get("class_id").and_then(Value::as_str) == Some(class_id))
            .map(corpus_id_of)
            .collect();
        ids.sort_unstable();
        coverage.insert(*class_id, ids);
    }
    let corpora_values: Vec<Value> = corpora.iter().cloned().map(Value::Object).collect();
    Value::Object(obj! {
        "ok" => true,
        "schema_version" => "reward_memory_corpus_registry_v0",
        "status" => status,
        "registry_role" => "stateless_read_model_not_memory_source_of_truth",
        "corpus_count" => corpora.len(),
        "corpora" => Value::Array(corpora_values.into()),
        "class_coverage" => coverage,
        "maintenance_contract" => obj! {
            "inventory_owner" => "provider_or_canonical_source_owner",
            "write_rule" => "write_only_through_declared_write_authority",
            "freshness_rule" => "verify_source_truth_revision_or_archive_before_use",
            "supersession_rule" => "preserve_lineage_and_stop_recalling_inactive_items",
            "retirement_rule" => "retain_compact_reason_without_raw_content",
            "scope_rule" => "fail_closed_on_project_or_surface_mismatch",
        },
        "provider_alignment" => obj! {
            "openviking" => obj! {
                "content_source_of_truth" => "agfs_content",
                "index_role" => "derived_retrieval_reference",
                "preferences" => "scoped_preferences",
                "trajectories" => "execution_trajectories",
                "experiences" => "distilled_experiences",
                "working_memory" => "session_working_memory",
                "cases" => "evaluation_fixture_not_registered_as_executable_memory",
            },
        },
        "raw_memory_captured" => false,
        "registry_persisted" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
    })
}

/// The `corpus-registry` packet.
pub fn reference_registry_packet() -> Value {
    registry_packet(&REFERENCE_CORPORA, "reference_registry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_corpora_are_seven_and_idempotent() {
        assert_eq!(REFERENCE_CORPORA.len(), 7);
        for corpus in REFERENCE_CORPORA.iter() {
            let again = normalize_corpus(&Value::Object(corpus.clone())).expect("normalizes");
            assert_eq!(&again, corpus);
        }
    }

    #[test]
    fn rejects_bad_corpus_fields_in_spec_order() {
        let mut corpus = REFERENCE_CORPORA[0].clone();
        corpus.insert("corpus_id", "Bad Id");
        corpus.insert("class_id", "nope");
        let err = normalize_corpus(&Value::Object(corpus.clone())).expect_err("invalid id");
        assert_eq!(err.0, "corpus_id must be a lower-snake token");
        corpus.insert("corpus_id", "ok_id");
        let err = normalize_corpus(&Value::Object(corpus)).expect_err("invalid class");
        assert_eq!(err.0, "class_id is not a Stage-0 reward-memory class");
    }

    #[test]
    fn a_list_of_corpora_is_checked_as_a_whole() {
        let first = Value::Object(REFERENCE_CORPORA[0].clone());
        assert_eq!(normalize_corpora(&[]), Err(RegistryError::Size));
        assert_eq!(
            normalize_corpora(&[first.clone(), first.clone()]),
            Err(RegistryError::DuplicateId)
        );
        let mut superseded = REFERENCE_CORPORA[0].clone();
        let id = corpus_id_of(&superseded);
        let lifecycle = obj! {"state" => "superseded", "superseded_by" => id.as_str()};
        superseded.insert("lifecycle", lifecycle);
        let err = normalize_corpora(&[Value::Object(superseded)]).expect_err("itself");
        assert_eq!(
            err.to_string(),
            "corpus lifecycle must not reference itself"
        );
    }

    #[test]
    fn raw_content_in_registry_is_refused() {
        let mut corpus = REFERENCE_CORPORA[0].clone();
        corpus.insert(
            "privacy",
            obj! {"visibility" => "private", "raw_content_in_registry" => true},
        );
        let err = normalize_corpus(&Value::Object(corpus)).expect_err("raw content");
        assert_eq!(
            err.0,
            "reward-memory registry must not contain raw memory content"
        );
    }
}

//! The active record envelope (`reward_memory_active_record_v0`, §10.3): what a declared
//! corpus owner may persist for an accepted, guard-passed review. Pure.

use crate::contract::ingest::policy::IDENTITY_SCOPE_FIELDS;
use crate::contract::registry::normalize_corpus;
use crate::obj;
use crate::wire::digest::{activation_ref, j3};
use crate::wire::json::{Map, Value};
use crate::wire::text::{self, FieldError, FieldResult};
use crate::wire::timestamp::timestamp_field;

/// Schema of an active record.
pub const ACTIVE_RECORD_SCHEMA_VERSION: &str = "reward_memory_active_record_v0";
/// Schema of a review packet.
pub const REVIEW_SCHEMA_VERSION: &str = "reward_memory_candidate_review_v0";

/// True when a record scope stays inside the corpus: same workspace, project and identity
/// refs (absent = null), surfaces ⊆ corpus surfaces.
pub fn scope_matches(scope: &Map, corpus: &Map) -> bool {
    let corpus_scope = corpus.get("scope").and_then(Value::as_object);
    let Some(corpus_scope) = corpus_scope else {
        return false;
    };
    let field = |m: &Map, k: &str| m.get(k).cloned().unwrap_or(Value::Null);
    let corpus_surfaces = corpus_scope
        .get("surface_ids")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let surfaces_ok = match scope.get("surface_ids") {
        None => true,
        Some(v) if !v.is_truthy() => true,
        Some(Value::Array(items)) => items.iter().all(|s| corpus_surfaces.contains(s)),
        // Python would iterate a string by characters (never inside a corpus of dotted
        // surfaces) or crash on a number; both mean "not inside".
        Some(_) => false,
    };
    field(scope, "workspace_ref") == field(corpus_scope, "workspace_ref")
        && field(scope, "project_ref") == field(corpus_scope, "project_ref")
        && IDENTITY_SCOPE_FIELDS
            .iter()
            .all(|f| field(scope, f) == field(corpus_scope, f))
        && surfaces_ok
}

/// Builds the envelope from an accepted review packet (§10.3) with `activated_at` as its
/// activation time (validated like `observed_at`).
pub fn build_active_record(review: &Map, corpus: &Value, activated_at: &str) -> FieldResult<Map> {
    build_active_record_normalized(review, &normalize_corpus(corpus)?, activated_at)
}

/// [`build_active_record`] for a corpus that [`normalize_corpus`] already returned (the
/// ingest core's, normalized once per event): normalizing it again gives it back as it is.
pub fn build_active_record_normalized(
    review: &Map,
    corpus: &Map,
    activated_at: &str,
) -> FieldResult<Map> {
    if review.get("schema_version").and_then(Value::as_str) != Some(REVIEW_SCHEMA_VERSION) {
        return Err(FieldError::new(
            "reviewed_candidate must use reward_memory_candidate_review_v0",
        ));
    }
    if review.get("effective_decision").and_then(Value::as_str) != Some("accept")
        || review.get("guard_passed") != Some(&Value::Bool(true))
        || review.get("status").and_then(Value::as_str) != Some("active")
    {
        return Err(FieldError::new(
            "only a guard-passed accepted candidate can become active",
        ));
    }
    let record = review
        .get("record")
        .and_then(Value::as_object)
        .ok_or_else(|| FieldError::new("reviewed candidate record is missing"))?;
    let lifecycle = record.get("lifecycle").and_then(Value::as_object);
    if lifecycle
        .and_then(|l| l.get("state"))
        .and_then(Value::as_str)
        != Some("active")
    {
        return Err(FieldError::new("reviewed candidate record must be active"));
    }
    if record.get("target_class") != corpus.get("class_id") {
        return Err(FieldError::new(
            "candidate class must match the selected corpus",
        ));
    }
    let scope = record.get("scope").and_then(Value::as_object);
    let Some(scope) = scope.filter(|s| scope_matches(s, corpus)) else {
        return Err(FieldError::new(
            "candidate scope must stay inside the selected corpus",
        ));
    };
    let freshness = corpus.get("freshness");
    if freshness
        .and_then(|f| f.get("mode"))
        .and_then(Value::as_str)
        == Some("revision_bound")
        && scope.get("revision_ref").cloned().unwrap_or_default()
            != freshness
                .and_then(|f| f.get("source_revision"))
                .cloned()
                .unwrap_or_default()
    {
        return Err(FieldError::new(
            "candidate revision must match the selected corpus",
        ));
    }
    let (activated, _) = timestamp_field(Some(&Value::from(activated_at)), "observed_at")?;
    let candidate_ref = text::token(record.get("candidate_ref"), "candidate_ref")?;
    let corpus_id = corpus.get("corpus_id").cloned().unwrap_or_default();
    let activation = activation_ref(&Value::Object(obj! {
        "corpus_id" => corpus_id.clone(),
        "candidate_ref" => candidate_ref.as_str(),
        "activated_at" => activated.as_str(),
    }));
    let mut active_lifecycle = obj! {"state" => "active"};
    if let Some(expires) = lifecycle
        .and_then(|l| l.get("expires_at"))
        .filter(|v| v.is_truthy())
    {
        active_lifecycle.insert("expires_at", expires.clone());
    }
    let review_obj = review
        .get("review")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let review_ref = review_obj.get("review_ref").cloned().unwrap_or_default();
    Ok(obj! {
        "schema_version" => ACTIVE_RECORD_SCHEMA_VERSION,
        "activation_ref" => activation,
        "activated_at" => activated,
        "corpus_id" => corpus_id,
        "candidate_ref" => candidate_ref,
        "target_class" => corpus.get("class_id").cloned().unwrap_or_default(),
        "content_summary" => text::compact(record.get("content_summary"), "content_summary", 500)?,
        "scope" => scope.clone(),
        "source" => record.get("source").cloned().unwrap_or_default(),
        "review" => review_obj,
        "activation_lineage" => obj! {
            "effective_decision" => "accept",
            "guard_passed" => true,
            "review_ref" => review_ref,
        },
        "lifecycle" => active_lifecycle,
        "privacy" => obj! {"raw_content_captured" => false},
        "provider_write_performed" => false,
        "external_writes_performed" => false,
    })
}

/// The stored form: canonical JSON (sorted keys, `,`/`:` separators, raw UTF-8).
pub fn serialize_record(record: &Map) -> String {
    j3(&Value::Object(record.clone()))
}

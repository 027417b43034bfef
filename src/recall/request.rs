//! The explicit recall request (`reward_memory_recall_request_v0`, §10.2) and its
//! read-authority checkpoint. Builds and guards the request; never calls a provider.

use crate::contract::architecture::DURABLE_CLASS_IDS;
use crate::contract::ingest::policy::IDENTITY_SCOPE_FIELDS;
use crate::contract::registry::normalize_corpus;
use crate::obj;
use crate::wire::credential;
use crate::wire::digest::short16;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr_strip;
use crate::wire::text::{self, FieldError, FieldResult};
use crate::wire::timestamp::timestamp_field;

/// Schema of a recall request packet.
pub const RECALL_REQUEST_SCHEMA_VERSION: &str = "reward_memory_recall_request_v0";
/// The two recall modes.
pub const RECALL_MODES: [&str; 2] = ["function_boundary", "bounded_agentic_search"];
/// At most this many queries in `bounded_agentic_search`.
pub const MAX_QUERY_STEPS: usize = 3;
/// At most this many results per recall.
pub const MAX_RESULTS: i64 = 8;

const REQUEST_RULE: &str = "caller_supplies_queries_and_reasoning_deterministic_code_checks_scope_authority_privacy_freshness_and_conflict";

fn strict_bool_key(map: &Map, key: &str) -> FieldResult<bool> {
    text::strict_bool(map.get(key), key)
}

fn queries(raw: Option<&Value>, mode: &str) -> FieldResult<Vec<Value>> {
    let items = match raw {
        Some(Value::Array(items)) => items,
        _ => return Err(FieldError::new("queries must be a bounded list")),
    };
    let maximum = if mode == "function_boundary" {
        1
    } else {
        MAX_QUERY_STEPS
    };
    if items.is_empty() || items.len() > maximum {
        return Err(FieldError(format!(
            "{mode} requires between 1 and {maximum} queries"
        )));
    }
    items
        .iter()
        .map(|item| {
            let item = item
                .as_object()
                .ok_or_else(|| FieldError::new("queries must contain objects"))?;
            Ok(Value::Object(obj! {
                "query" => text::compact(item.get("query"), "query", 500)?,
                "query_summary" => text::compact(item.get("query_summary"), "query_summary", 220)?,
            }))
        })
        .collect()
}

/// This port's stricter public-safe rule ([`credential`]) on a request packet
/// [`build_recall_request`] built: every string of its `request` (queries, summaries,
/// refs) and of its `read_authority_checkpoint`. The `recall` command runs it; the
/// reference's own users of the builder (`ingest-event`'s readback, `evaluate`) do not.
pub fn credential_free(packet: &Map) -> FieldResult<()> {
    let part = |key: &str| packet.get(key).unwrap_or(&Value::Null);
    credential::check_strings(part("request"), "")?;
    credential::check_strings(
        part("read_authority_checkpoint"),
        "read_authority_checkpoint",
    )
}

/// `query_evidence`: per query its 16-hex digest and summary, never the query itself.
pub fn query_evidence(queries: &[Value]) -> Vec<Value> {
    queries
        .iter()
        .map(|q| {
            Value::Object(obj! {
                "query_digest" => short16(q.get("query").and_then(Value::as_str).unwrap_or_default()),
                "query_summary" => q.get("query_summary").cloned().unwrap_or_default(),
                "exact_query_exposed" => false,
            })
        })
        .collect()
}

fn scope<'a>(corpus: &'a Map, key: &str) -> Option<&'a Value> {
    corpus.get("scope").and_then(|s| s.get(key))
}

fn freshness<'a>(corpus: &'a Map, key: &str) -> Option<&'a Value> {
    corpus.get("freshness").and_then(|s| s.get(key))
}

fn freshness_reasons(corpus: &Map, context: &Map) -> FieldResult<Vec<String>> {
    let mut reasons = Vec::new();
    let mode = freshness(corpus, "mode")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let current = strict_bool_key(context, "source_truth_current")?;
    let revision = text::optional_token(
        context.get("source_revision"),
        "freshness_context.source_revision",
    )?;
    let age = match context.get("age_seconds") {
        None | Some(Value::Null) => None,
        Some(Value::Int(i)) if *i >= 0 => Some(i128::from(*i)),
        Some(Value::BigInt(b)) if !b.starts_with('-') => Some(i128::MAX),
        _ => {
            return Err(FieldError::new(
                "freshness_context.age_seconds must be a non-negative integer",
            ));
        }
    };
    if matches!(mode, "source_truth_bound" | "execution_bound") && !current {
        reasons.push("source_truth_not_current".to_owned());
    }
    let source_revision = freshness(corpus, "source_revision").and_then(Value::as_str);
    if matches!(mode, "revision_bound" | "session_archive_bound")
        && revision.as_deref() != source_revision
    {
        reasons.push("source_revision_mismatch".to_owned());
    }
    if mode == "time_bound" {
        let max_age = match freshness(corpus, "max_age_seconds") {
            Some(Value::Int(i)) => i128::from(*i),
            _ => i128::MAX,
        };
        if age.is_none_or(|a| a > max_age) {
            reasons.push("source_age_exceeded".to_owned());
        }
    }
    Ok(reasons)
}

/// Normalizes the checkpoint and returns it with its guard reasons.
fn authority_checkpoint(
    raw: Option<&Value>,
    corpus: &Map,
    request: &Map,
) -> FieldResult<(Map, Vec<String>)> {
    let raw = match raw {
        Some(Value::Object(m)) => m,
        _ => {
            return Err(FieldError::new(
                "read_authority_checkpoint must be an object",
            ));
        }
    };
    let mut checkpoint = obj! {
        "verified" => strict_bool_key(raw, "verified")?,
        "corpus_id" => text::token(raw.get("corpus_id"), "checkpoint.corpus_id")?,
        "workspace_ref" => text::token(raw.get("workspace_ref"), "checkpoint.workspace_ref")?,
        "project_ref" => text::token(raw.get("project_ref"), "checkpoint.project_ref")?,
        "surface_id" => text::token(raw.get("surface_id"), "checkpoint.surface_id")?,
        "read_authority" => text::token(raw.get("read_authority"), "checkpoint.read_authority")?,
        "source_ref" => text::optional_token(raw.get("source_ref"), "checkpoint.source_ref")?,
    };
    let declared: Vec<(&str, &Value)> = IDENTITY_SCOPE_FIELDS
        .iter()
        .filter_map(|f: &&str| scope(corpus, f).filter(|v| v.is_truthy()).map(|v| (*f, v)))
        .collect();
    for (field, _) in &declared {
        checkpoint.insert(
            *field,
            text::optional_token(raw.get(field), &format!("checkpoint.{field}"))?,
        );
    }
    let mut reasons = Vec::new();
    let mut expected: Vec<(&str, Value)> = vec![
        (
            "corpus_id",
            corpus.get("corpus_id").cloned().unwrap_or_default(),
        ),
        (
            "workspace_ref",
            request.get("workspace_ref").cloned().unwrap_or_default(),
        ),
        (
            "project_ref",
            request.get("project_ref").cloned().unwrap_or_default(),
        ),
        (
            "surface_id",
            request.get("surface_id").cloned().unwrap_or_default(),
        ),
        (
            "read_authority",
            corpus.get("read_authority").cloned().unwrap_or_default(),
        ),
    ];
    for (field, value) in &declared {
        expected.push((field, (*value).clone()));
        if request.get(field) != Some(*value) {
            reasons.push(format!("read_authority_{field}_scope_mismatch"));
        }
    }
    if checkpoint.get("verified") != Some(&Value::Bool(true)) {
        reasons.push("read_authority_unverified".to_owned());
    }
    if !checkpoint.get("source_ref").is_some_and(Value::is_truthy) {
        reasons.push("read_authority_source_missing".to_owned());
    }
    for (key, value) in &expected {
        if checkpoint.get(key) != Some(value) {
            reasons.push(format!("read_authority_{key}_mismatch"));
        }
    }
    Ok((checkpoint, reasons))
}

/// Builds one explicit, exact-corpus recall request packet without running a provider.
///
/// `request` holds `mode, surface_id, workspace_ref, project_ref, revision_ref, queries,
/// limit, observed_at, conflict_state, [identity refs], query_kind, freshness_context,
/// raw_content_captured`; `checkpoint` is the read-authority checkpoint. Validation
/// errors are returned in the reference's order; scope, freshness and authority
/// mismatches become `guard_blocked` instead.
pub fn build_recall_request(
    corpus: &Value,
    request: &Map,
    checkpoint: Option<&Value>,
) -> FieldResult<Map> {
    build_recall_request_normalized(normalize_corpus(corpus)?, request, checkpoint)
}

/// [`build_recall_request`] for a corpus that [`normalize_corpus`] already returned (the
/// ingest readback's): normalizing it again gives it back as it is.
pub fn build_recall_request_normalized(
    corpus: Map,
    request: &Map,
    checkpoint: Option<&Value>,
) -> FieldResult<Map> {
    let mode = pystr_strip(request.get("mode"));
    if !RECALL_MODES.contains(&mode.as_str()) {
        return Err(FieldError::new(
            "mode must be function_boundary or bounded_agentic_search",
        ));
    }
    let surface = pystr_strip(request.get("surface_id"));
    if !text::is_surface_id(&surface) {
        return Err(FieldError::new("surface_id must be module-qualified"));
    }
    let workspace_ref = text::token(request.get("workspace_ref"), "workspace_ref")?;
    let project_ref = text::token(request.get("project_ref"), "project_ref")?;
    let revision_ref = text::optional_token(request.get("revision_ref"), "revision_ref")?;
    let queries = queries(request.get("queries"), &mode)?;
    let limit = request.get("limit").cloned().unwrap_or(Value::Int(5));
    let (observed_at, _) = timestamp_field(request.get("observed_at"), "observed_at")?;
    let conflict_state = pystr_strip(request.get("conflict_state"));
    let mut normalized = obj! {
        "workspace_ref" => workspace_ref,
        "project_ref" => project_ref,
        "surface_id" => surface.as_str(),
        "revision_ref" => revision_ref,
        "mode" => mode.as_str(),
        "queries" => Value::Array(queries.clone().into()),
        "limit" => limit.clone(),
        "observed_at" => observed_at,
        "conflict_state" => conflict_state.as_str(),
    };
    for field in IDENTITY_SCOPE_FIELDS {
        if let Some(value) = text::optional_token(request.get(field), field)? {
            normalized.insert(field, value);
        }
    }
    let query_kind = {
        let kind = pystr_strip(request.get("query_kind"));
        if kind.is_empty() {
            "business_recall".to_owned()
        } else {
            kind
        }
    };
    if query_kind != "business_recall" && query_kind != "ingest_verification" {
        return Err(FieldError::new(
            "query_kind must be business_recall or ingest_verification",
        ));
    }
    normalized.insert("query_kind", query_kind);
    normalized.insert(
        "query_evidence",
        Value::Array(query_evidence(&queries).into()),
    );
    if !matches!(limit, Value::Int(l) if (1..=MAX_RESULTS).contains(&l)) {
        return Err(FieldError(format!(
            "limit must be between 1 and {MAX_RESULTS}"
        )));
    }
    let freshness_context = request
        .get("freshness_context")
        .and_then(Value::as_object)
        .ok_or_else(|| FieldError::new("freshness_context must be an object"))?;
    if strict_bool_key(request, "raw_content_captured")? {
        return Err(FieldError::new(
            "recall requests must not capture raw content",
        ));
    }

    let mut reasons: Vec<String> = Vec::new();
    let class = corpus
        .get("class_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !DURABLE_CLASS_IDS.contains(&class) {
        reasons.push("corpus_class_not_durable_recall_memory".to_owned());
    }
    if corpus
        .get("lifecycle")
        .and_then(|l| l.get("state"))
        .and_then(Value::as_str)
        != Some("active")
    {
        reasons.push("corpus_not_active".to_owned());
    }
    if normalized.get("workspace_ref") != scope(&corpus, "workspace_ref") {
        reasons.push("workspace_scope_mismatch".to_owned());
    }
    if normalized.get("project_ref") != scope(&corpus, "project_ref") {
        reasons.push("project_scope_mismatch".to_owned());
    }
    for field in IDENTITY_SCOPE_FIELDS {
        if let Some(expected) = scope(&corpus, field).filter(|v| v.is_truthy())
            && normalized.get(field) != Some(expected)
        {
            reasons.push(format!("{field}_scope_mismatch"));
        }
    }
    let surfaces = scope(&corpus, "surface_ids").and_then(Value::as_array);
    if !surfaces.is_some_and(|s| s.iter().any(|v| v.as_str() == Some(surface.as_str()))) {
        reasons.push("surface_scope_mismatch".to_owned());
    }
    if conflict_state != "clear" {
        reasons.push("unresolved_conflict".to_owned());
    }
    reasons.extend(freshness_reasons(&corpus, freshness_context)?);
    if freshness(&corpus, "mode").and_then(Value::as_str) == Some("revision_bound")
        && normalized.get("revision_ref") != freshness(&corpus, "source_revision")
    {
        reasons.push("request_revision_mismatch".to_owned());
    }
    let (checkpoint, authority_reasons) = authority_checkpoint(checkpoint, &corpus, &normalized)?;
    reasons.extend(authority_reasons);
    let passed = reasons.is_empty();
    Ok(obj! {
        "ok" => true,
        "schema_version" => RECALL_REQUEST_SCHEMA_VERSION,
        "status" => if passed { "ready" } else { "guard_blocked" },
        "corpus" => corpus,
        "request" => normalized,
        "read_authority_checkpoint" => checkpoint,
        "guard" => obj! {
            "passed" => passed,
            "reason_codes" => crate::wire::json::str_list(&reasons),
            "semantic_reasoning_preserved" => true,
            "rule" => REQUEST_RULE,
        },
        "automatic_recall" => false,
        "provider_call_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

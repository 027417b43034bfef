//! Recall execution (`reward_memory_recall_v0`, §10.4): runs a guarded request against one
//! provider and keeps only exact, active, in-scope records. Provider content stays in the
//! returned [`RecallSession`] (in-process); the public packet carries opaque refs only.

use crate::obj;
use crate::provider::{
    ContextProvider, ProviderConfig, ProviderError, ProviderFactory, ResultCap, RetrieveRequest,
    RetrievedItem,
};
use crate::wire::digest::{content_digest, opaque_provider_ref};
use crate::wire::json::{Map, Value};
use crate::wire::text::{self, FieldError, FieldResult};
use crate::wire::timestamp::parse_aware;

use super::binding::{normalize_binding, timeout_seconds};
use super::record::{ACTIVE_RECORD_SCHEMA_VERSION, scope_matches};
use super::request::RECALL_REQUEST_SCHEMA_VERSION;

/// Schema of a recall packet.
pub const RECALL_SCHEMA_VERSION: &str = "reward_memory_recall_v0";

/// One recalled record, transient and in-process only.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallItem {
    /// The raw provider resource ref (never printed; see `memory_ref` in the packet).
    pub memory_ref: String,
    pub candidate_ref: String,
    pub target_class: String,
    pub content_summary: String,
    /// 64-hex digest of the canonical content text.
    pub content_digest: String,
    /// The provider's relevance for this item (see [`ContextProvider::relevance`]); only
    /// the `recall` command prints it.
    pub relevance: Option<f64>,
}

/// A recall's public packet plus the transient items the caller reasons over.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallSession {
    pub packet: Map,
    pub items: Vec<RecallItem>,
    /// `retrieval:<provider>:<hex>` ([`super::snapshot::retrieval_snapshot_ref`]) when the
    /// provider answered every call with its snapshot token; never part of the packet.
    pub retrieval_snapshot_ref: Option<String>,
    /// Hits the provider left out for their lifecycle (retired, revoked, superseded or
    /// expired), summed over the calls; never part of the §10.4 packet.
    pub lifecycle_skipped: usize,
}

/// Where recall gets its provider: an already built one (ingest readback reuses its
/// sync provider; tests inject doubles) or a factory, asked only when the guard passed.
pub enum ProviderSource<'a> {
    Injected(&'a dyn ContextProvider),
    Factory(&'a dyn ProviderFactory),
}

/// How many results a recall asks of each provider call and keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// The request's `limit` (§10.4), within the provider's reference cap.
    Limit,
    /// `recall --rank-prior`'s semantic pool: this many (never fewer than the request's
    /// `limit`), beyond the provider's reference cap up to
    /// [`crate::provider::MAX_POOL_RESULTS`]. The packet then holds every fetched result;
    /// the command ranks them and cuts to the limit.
    Pool(usize),
}

/// The `limit` of a built §10.2 request packet (1 when it has none, as §10.4 reads it).
pub fn request_limit(recall_request: &Map) -> usize {
    match recall_request.get("request").and_then(|r| r.get("limit")) {
        Some(Value::Int(l)) if *l > 0 => usize::try_from(*l).unwrap_or(1),
        _ => 1,
    }
}

/// Recall failures that are not fail-open outcomes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecallError {
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The binding names a provider the factory does not know (the reference raises this
    /// outside its fail-open block).
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

fn str_of<'a>(m: &'a Map, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or_default()
}

/// Turns one provider hit into a recall item, or `None` to skip it. An envelope that is
/// otherwise valid but has a bad `candidate_ref`/`content_summary` is skipped like any
/// other unusable record: the reference raises there, which turns a provider's content
/// into a request error after a write already happened and breaks fail-open.
pub fn active_item(
    item: &RetrievedItem,
    corpus: &Map,
    surface_id: &str,
    observed_at: &str,
) -> FieldResult<Option<RecallItem>> {
    let Ok(envelope) = crate::wire::json::parse(&item.content) else {
        return Ok(None);
    };
    let Some(envelope) = envelope.as_object() else {
        return Ok(None);
    };
    let scope = envelope.get("scope").and_then(Value::as_object);
    let lifecycle = envelope.get("lifecycle").and_then(Value::as_object);
    let surface_listed = scope
        .and_then(|s| s.get("surface_ids"))
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(surface_id)));
    let accepted = envelope.get("schema_version").and_then(Value::as_str)
        == Some(ACTIVE_RECORD_SCHEMA_VERSION)
        && envelope.get("corpus_id") == corpus.get("corpus_id")
        && envelope.get("target_class") == corpus.get("class_id")
        && scope.is_some_and(|s| scope_matches(s, corpus))
        && surface_listed
        && lifecycle
            .and_then(|l| l.get("state"))
            .and_then(Value::as_str)
            == Some("active");
    if !accepted {
        return Ok(None);
    }
    if let Some(expires) = lifecycle
        .and_then(|l| l.get("expires_at"))
        .filter(|v| v.is_truthy())
    {
        let expires = crate::wire::pyfmt::pystr(Some(expires));
        match (parse_aware(&expires), parse_aware(observed_at)) {
            (Ok(expires), Ok(observed)) if observed < expires => {}
            _ => return Ok(None),
        }
    }
    let (Ok(candidate_ref), Ok(content_summary)) = (
        text::token(envelope.get("candidate_ref"), "candidate_ref"),
        text::compact(envelope.get("content_summary"), "content_summary", 500),
    ) else {
        return Ok(None);
    };
    Ok(Some(RecallItem {
        memory_ref: item.resource_ref.clone(),
        candidate_ref,
        target_class: str_of(envelope, "target_class").to_owned(),
        content_summary,
        content_digest: content_digest(&item.content),
        relevance: item.score.filter(|s| s.is_finite()),
    }))
}

/// Executes a recall request packet (§10.4) with a provider binding.
///
/// Guard-blocked requests never reach a provider. Provider trouble is a
/// `provider_unavailable` packet with the binding's setup hints, never an error.
pub fn execute_recall(
    recall_request: &Map,
    provider_binding: &Map,
    provider: ProviderSource<'_>,
) -> Result<RecallSession, RecallError> {
    fetch_recall(recall_request, provider_binding, provider, Fetch::Limit)
}

/// [`execute_recall`] asking each provider call for `fetch` results: with
/// [`Fetch::Limit`] exactly §10.4; with [`Fetch::Pool`] the walk over the queries keeps
/// up to the pool's count (the packet says how many calls it made and holds every kept
/// result).
pub fn fetch_recall(
    recall_request: &Map,
    provider_binding: &Map,
    provider: ProviderSource<'_>,
    fetch: Fetch,
) -> Result<RecallSession, RecallError> {
    if str_of(recall_request, "schema_version") != RECALL_REQUEST_SCHEMA_VERSION {
        return Err(
            FieldError::new("recall_request must use reward_memory_recall_request_v0").into(),
        );
    }
    let (Some(corpus), Some(request), Some(guard)) = (
        recall_request.get("corpus").and_then(Value::as_object),
        recall_request.get("request").and_then(Value::as_object),
        recall_request.get("guard").and_then(Value::as_object),
    ) else {
        return Err(FieldError::new("recall_request is incomplete").into());
    };
    let binding = normalize_binding(provider_binding, corpus)?;
    let base = obj! {
        "ok" => true,
        "schema_version" => RECALL_SCHEMA_VERSION,
        "corpus_id" => corpus.get("corpus_id").cloned().unwrap_or_default(),
        "surface_id" => request.get("surface_id").cloned().unwrap_or_default(),
        "mode" => request.get("mode").cloned().unwrap_or_default(),
        "query_kind" => request.get("query_kind").cloned().unwrap_or_default(),
        "query_evidence" => request.get("query_evidence").cloned().unwrap_or(Value::Array(Box::default())),
        "provider_id" => binding.get("provider_id").cloned().unwrap_or_default(),
        "result_count" => 0,
        "results" => Value::Array(Box::default()),
        "result_readback_verified" => false,
        "provider_call_count" => 0,
        "automatic_recall" => false,
        "fail_open" => true,
        "provider_failure_is_user_gate" => false,
        "external_writes_performed" => false,
        "raw_provider_payload_captured" => false,
        "raw_content_persisted" => false,
    };
    if guard.get("passed") != Some(&Value::Bool(true)) {
        let reasons = guard.get("reason_codes").filter(|v| v.is_truthy()).cloned();
        return Ok(RecallSession {
            packet: base.merged(&obj! {
                "status" => "guard_blocked",
                "reason_codes" => reasons.unwrap_or(Value::Array(Box::default())),
            }),
            items: Vec::new(),
            retrieval_snapshot_ref: None,
            lifecycle_skipped: 0,
        });
    }
    let built;
    let provider: &dyn ContextProvider = match provider {
        ProviderSource::Injected(p) => p,
        ProviderSource::Factory(factory) => {
            built = factory.build(&ProviderConfig::from_binding(&binding))?;
            built.as_ref()
        }
    };
    let (limit, cap) = match fetch {
        Fetch::Limit => (request_limit(recall_request), ResultCap::Reference),
        Fetch::Pool(count) => (count.max(request_limit(recall_request)), ResultCap::Pool),
    };
    let namespace = str_of(&binding, "namespace");
    let scope_ref = str_of(&binding, "scope_ref");
    let observed_at = str_of(request, "observed_at");
    let surface_id = str_of(request, "surface_id");
    let queries: &[Value] = request
        .get("queries")
        .and_then(Value::as_array)
        .unwrap_or(&[]);
    let mut results: Vec<RecallItem> = Vec::new();
    let mut calls = 0usize;
    let mut unavailable: Option<String> = None;
    let mut snapshots: Vec<Option<String>> = Vec::new();
    let mut lifecycle_skipped = 0usize;
    for query in queries {
        calls += 1;
        let retrieve = RetrieveRequest {
            namespace: namespace.to_owned(),
            scope_ref: scope_ref.to_owned(),
            query: query
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            query_summary: query
                .get("query_summary")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            max_results: limit,
            cap,
            timeout_seconds: timeout_seconds(&binding),
            observed_at: observed_at.to_owned(),
        };
        let retrieval = match provider.try_retrieve(&retrieve) {
            Ok(r) => r,
            Err(_) => {
                unavailable = Some("provider_execution_failed".to_owned());
                break;
            }
        };
        if retrieval.status != "completed" {
            unavailable = Some(
                retrieval
                    .reason_code
                    .unwrap_or_else(|| "provider_unavailable".to_owned()),
            );
            break;
        }
        if !retrieval.items.is_empty() && !retrieval.read_performed {
            unavailable = Some("provider_result_readback_unverified".to_owned());
            break;
        }
        snapshots.push(retrieval.snapshot.clone());
        lifecycle_skipped += retrieval.lifecycle_skipped;
        for item in &retrieval.items {
            if results.iter().any(|r| r.memory_ref == item.resource_ref) {
                continue;
            }
            if let Some(mut active) = active_item(item, corpus, surface_id, observed_at)? {
                active.relevance = provider.relevance(item.score);
                results.push(active);
                if results.len() >= limit {
                    break;
                }
            }
        }
        if results.len() >= limit {
            break;
        }
    }
    if let Some(reason) = unavailable {
        return Ok(RecallSession {
            packet: base.merged(&obj! {
                "status" => "provider_unavailable",
                "reason_code" => reason,
                "provider_call_count" => calls,
                "setup_hints" => binding.get("setup_hints").cloned().unwrap_or_default(),
            }),
            items: Vec::new(),
            retrieval_snapshot_ref: None,
            lifecycle_skipped: 0,
        });
    }
    let expose = corpus
        .get("privacy")
        .and_then(|p| p.get("visibility"))
        .and_then(Value::as_str)
        == Some("public_safe");
    let provider_id = str_of(&binding, "provider_id");
    let public: Vec<Value> = results
        .iter()
        .map(|item| {
            Value::Object(obj! {
                "memory_ref" => opaque_provider_ref(provider_id, namespace, &item.memory_ref),
                "candidate_ref" => item.candidate_ref.as_str(),
                "target_class" => item.target_class.as_str(),
                "content_summary" => expose.then(|| item.content_summary.clone()),
                "content_exposed" => expose,
            })
        })
        .collect();
    let found = !results.is_empty();
    Ok(RecallSession {
        packet: base.merged(&obj! {
            "status" => if found { "completed" } else { "empty" },
            "reason_code" => (!found).then_some("no_active_exact_corpus_results"),
            "result_count" => results.len(),
            "results" => Value::Array(public.into()),
            "result_readback_verified" => found,
            "provider_call_count" => calls,
        }),
        items: results,
        retrieval_snapshot_ref: super::snapshot::retrieval_snapshot_ref(
            provider_id,
            namespace,
            scope_ref,
            &snapshots,
        ),
        lifecycle_skipped,
    })
}

//! The pure parts of the `recall` command: its explicit input ([`RecallInput`], also
//! that input's JSON Schema), the §10.2 request the configured form builds for one
//! corpus of the goal's surface route ([`configured_request`]), the configured form's
//! checks of its queries and limit, and the printed packet ([`finish_packet`]): the
//! §10.4 packet with each result's digest, relevance and rank and the command's session
//! and rank-prior fields.
//!
//! The printed packet embeds LoopX's `reward_memory_recall_v0` (§10.4) byte for byte, so
//! it stays an ordered [`Value`] built from that packet (its schema is the schema-only
//! `crate::schema::recall::RecallPacket`). Pure: the shell reads the files, resolves the
//! route, builds the provider factory and stores the session.

use schemars::JsonSchema;

use crate::contract::experiment::{CorpusEntry, SurfaceRoute};
use crate::contract::ingest::policy::IDENTITY_SCOPE_FIELDS;
use crate::obj;
use crate::wire::digest::short16;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::collapse_ws;
use crate::wire::text::{self, FieldError};

use super::execute::RecallSession;
use super::request::{MAX_RESULTS, build_recall_request, credential_free};

/// Why the `recall` command cannot run its request; each message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecallCommandError {
    /// The request does not fit: the input's keys, the configured form's queries,
    /// limit or surface, or the rank prior's partition.
    #[error("{0}")]
    Request(String),
    /// A rule of §10.2 (the request and checkpoint) or this port's credential rule.
    #[error(transparent)]
    Field(#[from] FieldError),
}

fn request_error(message: impl Into<String>) -> RecallCommandError {
    RecallCommandError::Request(message.into())
}

/// `recall --input`: the explicit form.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(rename = "RecallInput", deny_unknown_fields)]
pub struct RecallInput {
    /// A corpus (§4.2 shape).
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub corpus: Value,
    /// The §10.2 request: `workspace_ref`, `project_ref`, `surface_id`, `revision_ref`,
    /// `mode`, `queries`, `limit`, `observed_at`, `conflict_state`, identity refs,
    /// `query_kind`, `freshness_context`, `raw_content_captured`.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub request: Map,
    /// The read-authority checkpoint (§10.2).
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub read_authority_checkpoint: Option<Value>,
    /// The provider binding (§10.1).
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub provider_binding: Map,
}

const RECALL_INPUT_FIELDS: [&str; 4] = [
    "corpus",
    "request",
    "read_authority_checkpoint",
    "provider_binding",
];

impl RecallInput {
    /// Reads the explicit form's object: no other keys; `request` and
    /// `provider_binding` must be objects (the corpus and checkpoint are checked by the
    /// request builder).
    pub fn from_value(input: &Value) -> Result<RecallInput, RecallCommandError> {
        let empty = Map::new();
        let map = input.as_object().unwrap_or(&empty);
        text::reject_unknown(map, "recall input", &RECALL_INPUT_FIELDS)
            .map_err(|e| request_error(e.0))?;
        let request = text::object(map.get("request"), "request")?.clone();
        let provider_binding =
            text::object(map.get("provider_binding"), "provider_binding")?.clone();
        Ok(RecallInput {
            corpus: map.get("corpus").cloned().unwrap_or_default(),
            request,
            read_authority_checkpoint: map.get("read_authority_checkpoint").cloned(),
            provider_binding,
        })
    }

    /// The §10.2 request packet of this input, credential-free.
    pub fn request_packet(&self) -> Result<Map, RecallCommandError> {
        let packet = build_recall_request(
            &self.corpus,
            &self.request,
            self.read_authority_checkpoint.as_ref(),
        )?;
        credential_free(&packet)?;
        Ok(packet)
    }
}

fn or_null(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(Value::Null)
}

/// The configured form's queries: one `--query-summary` per `--query`, at most the
/// surface's recall profile allows.
pub fn configured_queries(
    queries: &[String],
    summaries: &[String],
    route: &SurfaceRoute,
) -> Result<Vec<Value>, RecallCommandError> {
    if queries.is_empty() {
        return Err(request_error(
            "the configured form needs --query and --query-summary",
        ));
    }
    if queries.len() != summaries.len() {
        return Err(request_error(
            "give one --query-summary for each --query, in the same order",
        ));
    }
    let max = usize::try_from(route.recall_profile.max_queries).unwrap_or(1);
    if queries.len() > max {
        return Err(request_error(format!(
            "the surface's recall profile allows at most {max} queries"
        )));
    }
    for (flag, items, bound) in [
        ("--query", queries, MAX_QUERY_CHARS),
        ("--query-summary", summaries, MAX_QUERY_SUMMARY_CHARS),
    ] {
        for (i, item) in items.iter().enumerate() {
            let length = collapse_ws(item).chars().count();
            if length > bound {
                return Err(request_error(format!(
                    "{flag} #{} is {length} characters (whitespace collapsed); the most is {bound}: shorten it",
                    i + 1
                )));
            }
            // The contract's public-safe rule refuses these too, without saying why.
            let unsafe_text = if crate::wire::text::has_local_path(item) {
                Some("a local file path (such as /home/... or C:\\Users\\...)")
            } else if crate::wire::text::has_secret(item) {
                Some("something that looks like a credential (a token, key or bearer value)")
            } else {
                None
            };
            if let Some(what) = unsafe_text {
                return Err(request_error(format!(
                    "{flag} #{} holds {what}; queries and their summaries must be public-safe text: leave it out",
                    i + 1
                )));
            }
        }
    }
    Ok(queries
        .iter()
        .zip(summaries)
        .map(|(q, s)| Value::Object(obj! {"query" => q.as_str(), "query_summary" => s.as_str()}))
        .collect())
}

/// The most results the configured form shows (`recall --limit`). The §10.2 request's
/// own `limit` keeps LoopX's bound ([`MAX_RESULTS`]); a larger `--limit` is fetched
/// beyond it (the packet's `candidate_fetch` says how many were asked and cut).
pub const MAX_RECALL_LIMIT: i64 = 50;

/// The longest query (and query summary) the configured form takes, in characters after
/// collapsing whitespace: the §10.2 request's own bounds, which would otherwise shorten
/// the text silently.
pub const MAX_QUERY_CHARS: usize = 500;
/// See [`MAX_QUERY_CHARS`].
pub const MAX_QUERY_SUMMARY_CHARS: usize = 220;

/// The configured form's limit: `--limit` (1 to [`MAX_RECALL_LIMIT`]), by default the
/// surface's recall profile limit.
pub fn configured_limit(
    limit: Option<i64>,
    route: &SurfaceRoute,
) -> Result<i64, RecallCommandError> {
    let limit = limit.unwrap_or(route.recall_profile.limit);
    if !(1..=MAX_RECALL_LIMIT).contains(&limit) {
        return Err(request_error(format!(
            "--limit must be between 1 and {MAX_RECALL_LIMIT} (got {limit})"
        )));
    }
    Ok(limit)
}

/// The `limit` a configured §10.2 request carries: the shown limit within the request's
/// own bound.
pub fn request_limit_for(limit: i64) -> i64 {
    limit.min(MAX_RESULTS)
}

/// The §10.2 request and checkpoint for one configured corpus: the corpus's own scope,
/// its declared source revision as current, and the route's read authority (the
/// standing policy's `authority_source_ref`), as `ingest-event`'s readback builds them.
pub fn configured_request(
    entry: &CorpusEntry,
    surface_id: &str,
    mode: &str,
    queries: &[Value],
    limit: i64,
    observed_at: &str,
) -> Result<Map, RecallCommandError> {
    let corpus = &entry.corpus;
    let scope = corpus
        .get("scope")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let revision = corpus
        .get("freshness")
        .and_then(|f| f.get("source_revision"));
    let mut request = obj! {
        "workspace_ref" => or_null(scope.get("workspace_ref")),
        "project_ref" => or_null(scope.get("project_ref")),
    };
    let mut checkpoint = obj! {
        "verified" => true,
        "corpus_id" => or_null(corpus.get("corpus_id")),
        "workspace_ref" => or_null(scope.get("workspace_ref")),
        "project_ref" => or_null(scope.get("project_ref")),
    };
    for f in IDENTITY_SCOPE_FIELDS {
        if let Some(v) = scope.get(f).filter(|v| v.is_truthy()) {
            request.insert(f, v.clone());
            checkpoint.insert(f, v.clone());
        }
    }
    let request = request.merged(&obj! {
        "surface_id" => surface_id,
        "revision_ref" => or_null(revision),
        "mode" => mode,
        "query_kind" => "business_recall",
        "queries" => Value::Array(queries.to_vec().into()),
        "limit" => limit,
        "observed_at" => observed_at,
        "freshness_context" => obj! {
            "source_truth_current" => true,
            "source_revision" => or_null(revision),
            "age_seconds" => 0,
        },
        "conflict_state" => "clear",
        "raw_content_captured" => false,
    });
    let checkpoint = checkpoint.merged(&obj! {
        "surface_id" => surface_id,
        "read_authority" => or_null(corpus.get("read_authority")),
        "source_ref" => or_null(entry.standing_policy.get("authority_source_ref")),
    });
    let packet = build_recall_request(
        &Value::Object(corpus.clone()),
        &request,
        Some(&Value::Object(checkpoint)),
    )?;
    credential_free(&packet)?;
    Ok(packet)
}

/// The opaque `memory_ref` of each result of a recall packet, in result order.
pub fn opaque_refs(session: &RecallSession) -> Vec<String> {
    session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .map(|x| crate::wire::pyfmt::pystr(x.get("memory_ref")))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
}

/// True when the recall completed with results: the only case that stores a session.
pub fn has_results(session: &RecallSession) -> bool {
    session.packet.get("status").and_then(Value::as_str) == Some("completed")
        && !session.items.is_empty()
}

/// `candidate_fetch`: what the recall asked the provider for and what `--limit` cut
/// after it. Present when the recall fetched more than the §10.2 request's own `limit`:
/// with `--rank-prior` (the profile's semantic pool) or with a configured `--limit`
/// above 8. A recall within the request's limit fetches its limit and
/// has no such member.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CandidateFetch {
    /// The profile's `candidate_pool` (`null` without `--rank-prior`).
    #[schemars(with = "crate::wire::schema::Nullable<u32>")]
    pub candidate_pool: Option<usize>,
    /// `--limit`: the most results shown.
    #[schemars(with = "u32")]
    pub limit: usize,
    /// The §10.2 request's `limit` (`--limit` within its bound of 8).
    #[schemars(with = "u32")]
    pub request_limit: usize,
    /// The results asked of each provider call: the larger of `candidate_pool` and
    /// `limit` with `--rank-prior`, else `limit`.
    #[schemars(with = "u32")]
    pub requested_count: usize,
    /// The active, exact-corpus results the provider returned, over the recall's queries
    /// without repeats: the prior's candidates (its `semantic_stage.input_count` when it
    /// was applied). 0 when the recall did not complete.
    #[schemars(with = "u32")]
    pub fetched_count: usize,
    /// The results `--limit` left out: members of the prior's pool ranked after the
    /// limit when it was applied (the floor and the pool drop the others, counted in
    /// `rank_prior.semantic_stage`), else the fetched results after the limit in the
    /// provider's order.
    #[schemars(with = "u32")]
    pub cut_count: usize,
}

/// The command's fields after the §10.4 packet: the session (or why there is none), the
/// rank prior (its packet, or why it stayed off), the candidate fetch of a rank prior and
/// the snapshot refs.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandFields {
    pub session_ref: Option<String>,
    pub session_expires_at: Option<String>,
    pub session_reason_code: Option<&'static str>,
    /// The `memory_utility_rank_prior_v0` packet when the prior was applied.
    pub rank_prior: Option<Value>,
    pub rank_prior_reason_code: Option<&'static str>,
    /// `--rank-prior`: the pool fetched and the cut to `--limit` (absent otherwise).
    pub candidate_fetch: Option<CandidateFetch>,
    /// The snapshot refs the session keeps for the receipt (null without a completed
    /// recall).
    pub retrieval_snapshot_ref: Option<String>,
    pub policy_snapshot_ref: Option<String>,
}

/// The printed `recall` packet: the §10.4 packet whose results carry their
/// `memory_ref_digest`, `relevance_score` and `rank`, then the command's fields
/// (`candidate_fetch` after `rank_prior`, only when there is one), last
/// `lifecycle_skipped_count`.
pub fn finish_packet(session: RecallSession, fields: CommandFields) -> Value {
    let lifecycle_skipped = session.lifecycle_skipped;
    let results: Vec<Value> = session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default()
        .into_iter()
        .zip(&session.items)
        .enumerate()
        .map(|(i, (result, item))| {
            let base = result.as_object().cloned().unwrap_or_default();
            Value::Object(base.merged(&obj! {
                "memory_ref_digest" => short16(&item.memory_ref),
                "relevance_score" => item.relevance,
                "rank" => i + 1,
            }))
        })
        .collect();
    let applied = fields.rank_prior.is_some();
    let mut packet = session.packet.merged(&obj! {
        "results" => Value::Array(results.into()),
        "recall_session_ref" => fields.session_ref,
        "recall_session_expires_at" => fields.session_expires_at,
        "recall_session_reason_code" => fields.session_reason_code,
        "rank_prior_applied" => applied,
        "rank_prior_reason_code" => fields.rank_prior_reason_code,
        "rank_prior" => fields.rank_prior.unwrap_or(Value::Null),
    });
    if let Some(fetch) = &fields.candidate_fetch {
        // A struct of counts always serializes.
        packet.insert(
            "candidate_fetch",
            crate::wire::json::to_value(fetch).unwrap_or_default(),
        );
    }
    Value::Object(packet.merged(&obj! {
        "retrieval_snapshot_ref" => fields.retrieval_snapshot_ref,
        "policy_snapshot_ref" => fields.policy_snapshot_ref,
        "lifecycle_skipped_count" => lifecycle_skipped,
    }))
}

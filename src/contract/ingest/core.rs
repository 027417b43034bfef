//! The ingest core (§9.6): candidate → standing-policy guard → accept review → active
//! record → (on execute) provider sync → exact function-boundary readback.
//!
//! [`prepare`] is pure and yields either a finished `guard_blocked` receipt or a
//! [`Prepared`] write. [`planned`] finishes a dry run. [`execute`] performs the write with
//! an injected provider, handing it the record's exact bytes (a provider that needs a
//! local file stages them itself); every provider failure fails open into a receipt
//! status, never an error. A store failure's cause code (`provider_store_cause_*`)
//! follows the sync's reason code in the receipt's `reason_codes`.

use crate::contract::candidate::{CANDIDATE_SCHEMA_VERSION, review_candidate};
use crate::contract::registry::normalize_corpus;
use crate::obj;
use crate::provider::{ContextProvider, Sync, SyncRequest, SyncResource, SyncSource};
use crate::recall::{
    ProviderSource, RecallError, build_active_record_normalized, build_recall_request_normalized,
    execute_recall, normalize_binding, serialize_record, timeout_seconds,
};
use crate::wire::digest::{content_digest, opaque_provider_ref, policy_digest};
use crate::wire::json::{Map, Value};
use crate::wire::text::{self, FieldError, FieldResult};

use super::policy::IDENTITY_SCOPE_FIELDS;

/// Schema of the ingest receipt.
pub const INGEST_RECEIPT_SCHEMA_VERSION: &str = "reward_memory_ingest_receipt_v0";

const POLICY_RULE: &str = "standing_policy_checks_exact_owner_class_source_actor_scope_and_authority_without_semantic_routing";
const READBACK_QUERY_SUMMARY: &str = "Verify the just-activated reward-memory record.";
const ACCEPT_SUMMARY: &str = "Standing exact-scope policy accepted this compact candidate.";

fn str_set(v: Option<&Value>) -> Vec<Value> {
    match v {
        Some(Value::Array(items)) => items.to_vec(),
        _ => Vec::new(),
    }
}

fn subset(a: &[Value], b: &[Value]) -> bool {
    a.iter().all(|x| b.contains(x))
}

fn or_null(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(Value::Null)
}

/// `{who}_{field}_{against}_mismatch` for each scope field where `scope` and `other`
/// differ: `workspace`, `project`, then the identity fields (`user_ref`, ...); a missing
/// field is `null`.
fn scope_mismatches(scope: &Map, other: &Map, who: &str, against: &str) -> Vec<String> {
    let fields = [("workspace_ref", "workspace"), ("project_ref", "project")]
        .into_iter()
        .chain(IDENTITY_SCOPE_FIELDS.iter().map(|f| (*f, *f)));
    fields
        .filter(|(key, _)| or_null(scope.get(key)) != or_null(other.get(key)))
        .map(|(_, name)| format!("{who}_{name}_{against}_mismatch"))
        .collect()
}

/// The standing-policy guard (§9.6 step 5): sorted, de-duplicated reason codes.
pub fn policy_guard(candidate_packet: &Map, corpus: &Map, policy: &Map) -> FieldResult<Map> {
    let (Some(candidate), Some(guard)) = (
        candidate_packet.get("candidate").and_then(Value::as_object),
        candidate_packet.get("guard").and_then(Value::as_object),
    ) else {
        return Err(FieldError::new("candidate packet is incomplete"));
    };
    let (Some(source), Some(scope)) = (
        candidate.get("source").and_then(Value::as_object),
        candidate.get("scope").and_then(Value::as_object),
    ) else {
        return Err(FieldError::new(
            "candidate source and scope must be objects",
        ));
    };
    let mut reasons: Vec<String> = str_set(guard.get("reason_codes").filter(|v| v.is_truthy()))
        .iter()
        .map(crate::wire::pyfmt::py_str_value)
        .collect();
    let mut push = |r: &str| reasons.push(r.to_owned());
    if guard.get("passed") != Some(&Value::Bool(true))
        && str_set(guard.get("reason_codes")).is_empty()
    {
        push("candidate_guard_not_passed");
    }
    if policy.get("enabled") != Some(&Value::Bool(true)) {
        push("standing_policy_disabled");
    }
    if policy.get("auto_activate") != Some(&Value::Bool(true)) {
        push("standing_policy_requires_manual_review");
    }
    if policy.get("owner_ref") != corpus.get("owner_ref") {
        push("standing_policy_owner_mismatch");
    }
    let corpus_scope = corpus
        .get("scope")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let policy_scope = policy
        .get("scope")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut candidate_surfaces = str_set(scope.get("surface_ids").filter(|v| v.is_truthy()));
    candidate_surfaces.dedup();
    let policy_surfaces = str_set(policy_scope.get("surface_ids"));
    let corpus_surfaces = str_set(corpus_scope.get("surface_ids"));
    for code in scope_mismatches(&policy_scope, &corpus_scope, "standing_policy", "corpus") {
        push(&code);
    }
    if !subset(&policy_surfaces, &corpus_surfaces) {
        push("standing_policy_surface_exceeds_corpus");
    }
    if corpus.at(&["lifecycle", "state"]).and_then(Value::as_str) != Some("active") {
        push("corpus_not_active");
    }
    if matches!(
        corpus.get("write_authority").and_then(Value::as_str),
        Some("read_only" | "ephemeral_runtime")
    ) {
        push("corpus_write_authority_not_durable");
    }
    if corpus.at(&["retrieval", "readback_required"]) != Some(&Value::Bool(true)) {
        push("corpus_exact_readback_not_required");
    }
    let target_class = or_null(candidate.get("target_class"));
    let class_id = or_null(corpus.get("class_id"));
    if target_class != class_id {
        push("candidate_class_corpus_mismatch");
    }
    let allowed_classes = str_set(policy.get("allowed_target_classes"));
    if allowed_classes != vec![class_id.clone()] {
        push("standing_policy_class_not_exact_for_corpus");
    }
    if !allowed_classes.contains(&target_class) {
        push("candidate_class_not_allowed");
    }
    if !str_set(policy.get("allowed_source_kinds")).contains(&or_null(source.get("source_kind"))) {
        push("candidate_source_kind_not_allowed");
    }
    if !str_set(policy.get("allowed_actor_roles")).contains(&or_null(source.get("actor_role"))) {
        push("candidate_actor_role_not_allowed");
    }
    for code in scope_mismatches(scope, &policy_scope, "candidate", "policy") {
        push(&code);
    }
    if candidate_surfaces.len() != 1 {
        push("candidate_surface_count_not_one");
    }
    if !subset(&candidate_surfaces, &policy_surfaces) {
        push("candidate_surface_not_allowed");
    }
    for code in scope_mismatches(scope, &corpus_scope, "candidate", "corpus") {
        push(&code);
    }
    if !subset(&candidate_surfaces, &corpus_surfaces) {
        push("candidate_surface_corpus_mismatch");
    }
    if corpus.at(&["freshness", "mode"]).and_then(Value::as_str) == Some("revision_bound")
        && or_null(scope.get("revision_ref"))
            != or_null(corpus.at(&["freshness", "source_revision"]))
    {
        push("candidate_revision_corpus_mismatch");
    }
    let requested = str_set(
        candidate
            .get("requested_action_scopes")
            .filter(|v| v.is_truthy()),
    );
    if !subset(&requested, &str_set(policy.get("allowed_action_scopes"))) {
        push("candidate_action_scope_not_allowed");
    }
    reasons.sort_unstable();
    reasons.dedup();
    Ok(obj! {
        "passed" => reasons.is_empty(),
        "reason_codes" => crate::wire::json::str_list(&reasons),
        "semantic_reasoning_preserved" => true,
        "rule" => POLICY_RULE,
    })
}

/// Everything an activated write needs, computed without touching a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The receipt so far (base keys, `activation_ref`, `provider_ref`, planned `write`,
    /// `next_recall`), without `status`.
    pub receipt: Map,
    pub corpus: Map,
    pub policy: Map,
    pub binding: Map,
    pub candidate: Map,
    pub candidate_ref: String,
    /// `reward-memory-<policy digest>-<candidate digest>.json`.
    pub filename: String,
    /// `<scope_ref>/<filename>`: where the record must be readable.
    pub target_ref: String,
    /// The active record as canonical JSON (one line, no trailing newline).
    pub serialized: String,
    /// 64-hex digest of the canonical serialized record.
    pub expected_digest: String,
    /// `observed_at` as given (unstripped).
    pub observed_at: String,
    /// The whole memory text to index when the record's `content_summary` is shorter than
    /// the event's (ours: set by the adapters for the embedded store).
    pub search_text: Option<String>,
    /// The readback's recall request ([`readback_request`]), when it was built ahead of
    /// the write (a JSON Lines ingest builds it on its staging thread); `None`: the
    /// readback builds it.
    pub readback_request: Option<Map>,
}

/// The first, pure part of ingest.
#[derive(Debug, Clone, PartialEq)]
pub enum Preparation {
    /// The guard blocked the candidate: the finished receipt (`status: guard_blocked`).
    Blocked(Map),
    /// The write is ready to be planned or executed.
    Ready(Box<Prepared>),
}

/// Steps 1–12 of §9.6 for an already built candidate packet; `policy` is the standing
/// policy as [`super::policy::normalize_standing_policy`] returned it (each adapter
/// normalizes it before its candidate is built; normalizing it again gives it back as it
/// is).
pub fn prepare(
    candidate_packet: &Map,
    corpus: &Value,
    policy: &Map,
    provider_binding: &Map,
    observed_at: &str,
) -> FieldResult<Preparation> {
    if candidate_packet
        .get("schema_version")
        .and_then(Value::as_str)
        != Some(CANDIDATE_SCHEMA_VERSION)
    {
        return Err(FieldError::new(
            "candidate_packet must use reward_memory_candidate_v0",
        ));
    }
    let corpus = normalize_corpus(corpus)?;
    let binding = normalize_binding(provider_binding, &corpus)?;
    let scope_ref = binding
        .get("scope_ref")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if scope_ref.trim_end_matches('/').ends_with(".json") {
        return Err(FieldError::new(
            "provider_binding.scope_ref must identify a collection",
        ));
    }
    let candidate = candidate_packet
        .get("candidate")
        .and_then(Value::as_object)
        .ok_or_else(|| FieldError::new("candidate packet does not contain a candidate"))?;
    let candidate_ref = text::token(candidate.get("candidate_ref"), "candidate_ref")?;
    let scope = candidate
        .get("scope")
        .and_then(Value::as_object)
        .ok_or_else(|| FieldError::new("candidate scope must be an object"))?;
    let surfaces = Value::from(str_set(scope.get("surface_ids").filter(|v| v.is_truthy())));
    let guard = policy_guard(candidate_packet, &corpus, policy)?;
    let passed = guard.get("passed") == Some(&Value::Bool(true));
    let corpus_id = or_null(corpus.get("corpus_id"));
    let base = obj! {
        "ok" => true,
        "schema_version" => INGEST_RECEIPT_SCHEMA_VERSION,
        "candidate_ref" => candidate_ref.as_str(),
        "corpus_id" => corpus_id.clone(),
        "policy_id" => or_null(policy.get("policy_id")),
        "surface_ids" => surfaces.clone(),
        "guard" => guard,
        "deduplicated" => false,
        "exact_readback_verified" => false,
        "memory_available_for_recall" => false,
        "fail_open" => true,
        "provider_failure_is_user_gate" => false,
        "grants_new_action_authority" => false,
        "raw_content_captured" => false,
        "raw_provider_payload_captured" => false,
        "external_writes_performed" => false,
    };
    if !passed {
        return Ok(Preparation::Blocked(
            base.merged(&obj! {"status" => "guard_blocked"}),
        ));
    }
    let policy_id = policy
        .get("policy_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let policy_hash = policy_digest(policy_id);
    let candidate_hash = candidate_ref
        .split_once(':')
        .map_or(candidate_ref.as_str(), |(_, d)| d)
        .to_owned();
    let review = review_candidate(
        candidate_packet,
        &obj! {
            "decision" => "accept",
            "reviewer_ref" => or_null(policy.get("reviewer_ref")),
            "review_ref" => format!("review:{policy_hash}:{candidate_hash}"),
            "reasoning_summary" => ACCEPT_SUMMARY,
        },
    )?;
    let active = build_active_record_normalized(&review, &corpus, observed_at)?;
    let filename = format!("reward-memory-{policy_hash}-{candidate_hash}.json");
    let target_ref = format!("{}/{filename}", scope_ref.trim_end_matches('/'));
    let serialized = serialize_record(&active);
    let expected_digest = content_digest(&serialized);
    let provider_id = binding
        .get("provider_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let namespace = binding
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let planned = Sync::planned(provider_id, namespace, observed_at, 1);
    let receipt = base.merged(&obj! {
        "activation_ref" => or_null(active.get("activation_ref")),
        "provider_ref" => opaque_provider_ref(provider_id, namespace, &target_ref),
        "write" => planned.public_packet(),
        "next_recall" => obj! {
            "corpus_id" => corpus_id,
            "surface_ids" => surfaces,
            "mode" => "function_boundary",
            "automatic_recall" => false,
        },
    });
    Ok(Preparation::Ready(Box::new(Prepared {
        receipt,
        corpus,
        policy: policy.clone(),
        binding,
        candidate: candidate.clone(),
        candidate_ref,
        filename,
        target_ref,
        serialized,
        expected_digest,
        observed_at: observed_at.to_owned(),
        search_text: None,
        readback_request: None,
    })))
}

/// A dry run's receipt: `status: planned`.
pub fn planned(prepared: &Prepared) -> Map {
    prepared
        .receipt
        .clone()
        .merged(&obj! {"status" => "planned"})
}

fn sync_failed(prepared: &Prepared) -> Map {
    prepared.receipt.clone().merged(&obj! {
        "status" => "provider_unavailable",
        "reason_codes" => crate::wire::json::str_list(&["provider_sync_execution_failed"]),
    })
}

/// Steps 14–19 of §9.6: sync the record, then read it back through a function-boundary
/// recall with the same provider. `provider` is `Err` when the factory could not build
/// one (reported as `provider_sync_execution_failed`, like every failure of the sync call).
pub fn execute(
    prepared: &Prepared,
    provider: Result<&dyn ContextProvider, crate::provider::ProviderError>,
) -> Result<Map, RecallError> {
    let Ok(provider) = provider else {
        return Ok(sync_failed(prepared));
    };
    let payload = format!("{}\n", prepared.serialized);
    let namespace = prepared
        .binding
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let request = SyncRequest {
        namespace: namespace.to_owned(),
        resources: vec![SyncResource {
            source: SyncSource::Bytes(payload.into_bytes()),
            target_ref: prepared.target_ref.clone(),
            search_text: prepared.search_text.clone(),
        }],
        timeout_seconds: timeout_seconds(&prepared.binding),
        observed_at: prepared.observed_at.clone(),
        execute: true,
    };
    let Ok(sync) = provider.try_sync(&request) else {
        return Ok(sync_failed(prepared));
    };
    let synced = prepared.receipt.clone().merged(&obj! {
        "write" => sync.public_packet(),
        "deduplicated" => sync.status == "completed" && sync.write_count == 0,
        "external_writes_performed" => sync.write_count > 0,
    });
    // The sync's reason, then the store failure's cause code when there is one.
    let reason = |fallback: &str| {
        let mut codes = vec![
            sync.reason_code
                .clone()
                .unwrap_or_else(|| fallback.to_owned()),
        ];
        codes.extend(sync.cause_code.clone());
        crate::wire::json::str_list(&codes)
    };
    if sync.status == "committed_pending" {
        return Ok(synced.merged(&obj! {
            "status" => "committed_pending",
            "reason_codes" => reason("provider_commit_pending"),
        }));
    }
    if sync.status != "completed" || !sync.result_refs.contains(&prepared.target_ref) {
        return Ok(synced.merged(&obj! {
            "status" => "provider_unavailable",
            "reason_codes" => reason("provider_sync_unverified"),
        }));
    }
    let (recall, verified) = readback(prepared, provider)?;
    let mut reasons: Vec<String> = Vec::new();
    if !verified {
        reasons.push("exact_provider_readback_unverified".to_owned());
        // A store that stayed locked or unusable through the readback says so.
        if let Some(store) = recall
            .get("reason_code")
            .and_then(Value::as_str)
            .filter(|code| code.starts_with("provider_store_"))
        {
            reasons.push(store.to_owned());
        }
    }
    Ok(synced.merged(&obj! {
        "status" => if verified { "activated" } else { "readback_unverified" },
        "readback" => recall,
        "exact_readback_verified" => verified,
        "memory_available_for_recall" => verified,
        "reason_codes" => crate::wire::json::str_list(&reasons),
    }))
}

/// The exact readback (§9.6 step 18): the recall packet and whether the just-written
/// record came back with the same ref, candidate and content digest.
pub fn readback(
    prepared: &Prepared,
    provider: &dyn ContextProvider,
) -> Result<(Map, bool), RecallError> {
    let built;
    let recall_request = match &prepared.readback_request {
        Some(request) => request,
        None => {
            built = readback_request(prepared)?;
            &built
        }
    };
    let session = execute_recall(
        recall_request,
        &prepared.binding,
        ProviderSource::Injected(provider),
    )?;
    let descendant = format!("{}/", prepared.target_ref.trim_end_matches('/'));
    let exact = session.items.iter().any(|item| {
        (item.memory_ref == prepared.target_ref || item.memory_ref.starts_with(&descendant))
            && item.candidate_ref == prepared.candidate_ref
            && item.content_digest == prepared.expected_digest
    });
    Ok((session.packet, exact))
}

/// The recall request of a prepared write's readback: the record's own scope and
/// surface, its candidate ref and summary as the query, at most three results. Pure.
pub fn readback_request(prepared: &Prepared) -> FieldResult<Map> {
    let scope = prepared
        .candidate
        .get("scope")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let corpus = &prepared.corpus;
    let surface_id = prepared
        .candidate
        .at(&["scope", "surface_ids"])
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .map(crate::wire::pyfmt::py_str_value)
        .unwrap_or_default();
    let summary = crate::wire::pyfmt::pystr(prepared.candidate.get("content_summary"));
    let revision = scope.get("revision_ref").filter(|v| v.is_truthy()).cloned();
    let source_revision = revision
        .clone()
        .unwrap_or_else(|| or_null(corpus.at(&["freshness", "source_revision"])));
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
        request.insert(f, or_null(scope.get(f)));
        checkpoint.insert(f, or_null(scope.get(f)));
    }
    let request = request.merged(&obj! {
        "surface_id" => surface_id.as_str(),
        "revision_ref" => or_null(scope.get("revision_ref")),
        "mode" => "function_boundary",
        "query_kind" => "ingest_verification",
        "queries" => Value::from(vec![Value::Object(obj! {
            "query" => format!("{} {summary}", prepared.candidate_ref),
            "query_summary" => READBACK_QUERY_SUMMARY,
        })]),
        "limit" => 3,
        "observed_at" => prepared.observed_at.as_str(),
        "freshness_context" => obj! {
            "source_truth_current" => true,
            "source_revision" => source_revision,
            "age_seconds" => 0,
        },
        "conflict_state" => "clear",
        "raw_content_captured" => false,
    });
    let checkpoint = checkpoint.merged(&obj! {
        "surface_id" => surface_id.as_str(),
        "read_authority" => or_null(corpus.get("read_authority")),
        "source_ref" => or_null(prepared.policy.get("authority_source_ref")),
    });
    build_recall_request_normalized(corpus.clone(), &request, Some(&Value::Object(checkpoint)))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    /// The ingest normalizes each part once per event and hands the normalized corpus
    /// and policy on (`prepare`, `build_active_record_normalized`,
    /// `build_recall_request_normalized`): sound only if normalizing a normalized part
    /// gives it back as it is. Checked on every ingest fixture whose parts normalize.
    #[test]
    fn normalized_parts_are_fixed_points() {
        use super::super::policy::normalize_standing_policy;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/ingest_event");
        let mut checked = 0;
        for sub in ["valid", "invalid"] {
            let mut paths: Vec<_> = std::fs::read_dir(format!("{dir}/{sub}"))
                .expect("fixture directory")
                .map(|e| e.expect("entry").path())
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path).expect("fixture");
                let Ok(Value::Object(input)) = crate::wire::json::parse(&text) else {
                    continue;
                };
                let (Some(corpus), Some(policy), Some(Value::Object(binding))) = (
                    input.get("corpus"),
                    input.get("standing_policy"),
                    input.get("provider_binding"),
                ) else {
                    continue;
                };
                if let Ok(once) = normalize_corpus(corpus) {
                    let again = normalize_corpus(&Value::Object(once.clone()));
                    assert_eq!(again.as_ref(), Ok(&once), "corpus of {}", path.display());
                    if let Ok(bound) = normalize_binding(binding, &once) {
                        assert_eq!(normalize_binding(&bound, &once), Ok(bound.clone()));
                    }
                    checked += 1;
                }
                if let Ok(once) = normalize_standing_policy(policy) {
                    let again = normalize_standing_policy(&Value::Object(once.clone()));
                    assert_eq!(again.as_ref(), Ok(&once), "policy of {}", path.display());
                    checked += 1;
                }
            }
        }
        assert!(checked >= 20, "only {checked} parts checked");
    }

    use super::*;
    use crate::contract::ingest::adapters::{Mode, Route, ingest_issue_fix_event};
    use crate::provider::{ProviderError, Retrieval, RetrieveRequest, RetrievedItem};

    const FIXTURE: &str =
        include_str!("../../../fixtures/ingest_event/valid/issue-fix-planned.json");

    /// A provider double: a scripted sync outcome, and a retrieve that returns whatever
    /// the last sync wrote (optionally altered).
    struct Double {
        sync_status: &'static str,
        report_target: bool,
        fail_sync: bool,
        tamper: Option<(&'static str, &'static str)>,
        /// The reason of a retrieve that fails (status `unavailable`).
        retrieve_failure: Option<&'static str>,
        /// The cause code of a sync that fails.
        sync_cause: Option<&'static str>,
        written: RefCell<Vec<(String, String)>>,
    }

    impl Double {
        fn new(sync_status: &'static str) -> Double {
            Double {
                sync_status,
                report_target: true,
                fail_sync: false,
                tamper: None,
                retrieve_failure: None,
                sync_cause: None,
                written: RefCell::new(Vec::new()),
            }
        }
    }

    impl ContextProvider for Double {
        fn provider_id(&self) -> &str {
            "openviking"
        }
        fn retrieve(&self, request: &RetrieveRequest) -> Retrieval {
            let items = self
                .written
                .borrow()
                .iter()
                .map(|(r, c)| RetrievedItem {
                    resource_ref: r.clone(),
                    summary: "s".to_owned(),
                    content: match self.tamper {
                        Some((from, to)) => c.replace(from, to),
                        None => c.clone(),
                    },
                    score: None,
                })
                .collect();
            Retrieval {
                provider: "openviking".to_owned(),
                namespace: request.namespace.clone(),
                status: if self.retrieve_failure.is_some() {
                    "unavailable"
                } else {
                    "completed"
                }
                .to_owned(),
                query_summary: request.query_summary.clone(),
                observed_at: request.observed_at.clone(),
                search_performed: true,
                read_performed: true,
                items,
                reason_code: self.retrieve_failure.map(str::to_owned),
                provider_version: None,
                latency_ms: 0,
                requested_limit: 3,
                snapshot: None,
                lifecycle_skipped: 0,
            }
        }
        fn sync(&self, request: &SyncRequest) -> Sync {
            let mut sync = Sync::planned("openviking", &request.namespace, &request.observed_at, 1);
            let resource = &request.resources[0];
            let content = match &resource.source {
                SyncSource::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                SyncSource::File(path) => std::fs::read_to_string(path).unwrap_or_default(),
            };
            self.written
                .borrow_mut()
                .push((resource.target_ref.clone(), content));
            sync.status = self.sync_status.to_owned();
            sync.write_count = 1;
            sync.reason_code = match self.sync_status {
                "committed_pending" => Some("provider_sync_committed_pending".to_owned()),
                "unavailable" => Some("provider_store_unavailable".to_owned()),
                _ => None,
            };
            sync.cause_code = self.sync_cause.map(str::to_owned);
            sync.retry_disposition = "no_retry".to_owned();
            if self.report_target {
                sync.result_refs = vec![resource.target_ref.clone()];
            }
            sync
        }
        fn try_sync(&self, request: &SyncRequest) -> Result<Sync, ProviderError> {
            if self.fail_sync {
                return Err(ProviderError::Invalid(
                    "sync targets must stay under viking://resources/".to_owned(),
                ));
            }
            Ok(self.sync(request))
        }
    }

    fn run(provider: &Double) -> Map {
        let input = crate::wire::json::parse(FIXTURE).expect("valid fixture");
        let binding = input
            .get("provider_binding")
            .and_then(Value::as_object)
            .cloned()
            .expect("binding");
        let route = Route {
            corpus: input.get("corpus").expect("corpus"),
            standing_policy: input.get("standing_policy").expect("policy"),
            provider_binding: &binding,
            observed_at: "2026-07-16T00:30:00+00:00",
        };
        let write = |prepared: &Prepared| -> Result<Map, crate::contract::ingest::IngestError> {
            Ok(execute(prepared, Ok(provider as &dyn ContextProvider))?)
        };
        let event = input.get("event").expect("event");
        ingest_issue_fix_event(event, &route, &Mode::Execute(&write)).expect("ingests")
    }

    /// Asserts the receipt's `status` and `reason_codes`.
    fn assert_status(m: &Map, status: &str, reason_codes: &[&str]) {
        assert_eq!(
            (m.get("status"), m.get("reason_codes")),
            (
                Some(&Value::from(status)),
                Some(&crate::wire::json::str_list(reason_codes))
            )
        );
    }

    #[test]
    fn completed_sync_with_exact_readback_activates() {
        let receipt = run(&Double::new("completed"));
        assert_status(&receipt, "activated", &[]);
        assert_eq!(
            receipt.get("external_writes_performed"),
            Some(&Value::Bool(true))
        );
        assert_eq!(
            receipt
                .get("readback")
                .and_then(|r| r.get("results"))
                .and_then(Value::as_array)
                .and_then(|r| r.first())
                .and_then(|r| r.get("memory_ref")),
            receipt.get("provider_ref")
        );
    }

    #[test]
    fn committed_pending_is_reported_with_the_sync_reason() {
        let receipt = run(&Double::new("committed_pending"));
        assert_status(
            &receipt,
            "committed_pending",
            &["provider_sync_committed_pending"],
        );
        assert!(!receipt.contains_key("readback"));
    }

    #[test]
    fn a_sync_that_does_not_report_the_target_is_unverified() {
        let double = Double {
            report_target: false,
            ..Double::new("completed")
        };
        let receipt = run(&double);
        assert_status(
            &receipt,
            "provider_unavailable",
            &["provider_sync_unverified"],
        );
    }

    #[test]
    fn a_failing_sync_call_keeps_the_planned_write() {
        let double = Double {
            fail_sync: true,
            ..Double::new("completed")
        };
        let receipt = run(&double);
        assert_status(
            &receipt,
            "provider_unavailable",
            &["provider_sync_execution_failed"],
        );
        assert_eq!(
            receipt.get("write").and_then(|w| w.get("status")),
            Some(&Value::from("planned"))
        );
    }

    #[test]
    fn a_store_failure_lists_its_cause_after_the_reason() {
        let double = Double {
            sync_cause: Some("provider_store_cause_disk_full"),
            report_target: false,
            ..Double::new("unavailable")
        };
        let receipt = run(&double);
        assert_status(
            &receipt,
            "provider_unavailable",
            &[
                "provider_store_unavailable",
                "provider_store_cause_disk_full",
            ],
        );
        assert_eq!(
            receipt.get("write").and_then(|w| w.get("reason_code")),
            Some(&Value::from("provider_store_unavailable")),
            "the sync packet keeps its one reason code"
        );
    }

    #[test]
    fn a_store_locked_through_the_readback_says_so() {
        let double = Double {
            retrieve_failure: Some("provider_store_busy"),
            ..Double::new("completed")
        };
        let receipt = run(&double);
        assert_status(
            &receipt,
            "readback_unverified",
            &["exact_provider_readback_unverified", "provider_store_busy"],
        );
        // Other providers' readback reasons are not copied.
        let other = Double {
            retrieve_failure: Some("provider_search_failed"),
            ..Double::new("completed")
        };
        assert_status(
            &run(&other),
            "readback_unverified",
            &["exact_provider_readback_unverified"],
        );
    }

    #[test]
    fn a_readback_with_different_content_is_unverified() {
        let double = Double {
            tamper: Some(("Standing exact-scope", "Standing  exact-scope")),
            ..Double::new("completed")
        };
        let receipt = run(&double);
        assert_status(
            &receipt,
            "readback_unverified",
            &["exact_provider_readback_unverified"],
        );
        assert_eq!(
            receipt
                .get("execution_evidence")
                .and_then(|e| e.get("verified_result")),
            Some(&Value::Str(
                "ingest_exact_readback_verified".to_owned().into()
            )),
            "the recall itself verified a record; only the digest differs"
        );
    }

    #[test]
    fn scope_mismatches_name_the_field_and_both_sides() {
        let scope = crate::obj! {
            "workspace_ref" => "w",
            "project_ref" => "p",
            "user_ref" => "u",
        };
        let other = crate::obj! {"workspace_ref" => "w", "project_ref" => "q"};
        assert_eq!(
            scope_mismatches(&scope, &other, "candidate", "policy"),
            [
                "candidate_project_policy_mismatch",
                "candidate_user_ref_policy_mismatch"
            ]
        );
        assert!(scope_mismatches(&scope, &scope, "candidate", "corpus").is_empty());
    }

    #[test]
    fn policy_guard_sorts_and_deduplicates_reasons() {
        let input = crate::wire::json::parse(FIXTURE).expect("valid fixture");
        let mut policy = input.get("standing_policy").cloned().expect("policy");
        if let Value::Object(p) = &mut policy {
            p.insert("enabled", false);
            p.insert("auto_activate", false);
        }
        let route_binding = input
            .get("provider_binding")
            .and_then(Value::as_object)
            .cloned()
            .expect("binding");
        let route = Route {
            corpus: input.get("corpus").expect("corpus"),
            standing_policy: &policy,
            provider_binding: &route_binding,
            observed_at: "not a timestamp",
        };
        let receipt =
            ingest_issue_fix_event(input.get("event").expect("event"), &route, &Mode::DryRun)
                .expect("blocked, not an error");
        assert_eq!(
            receipt.get("guard").and_then(|g| g.get("reason_codes")),
            Some(&crate::wire::json::str_list(&[
                "authority_checkpoint_unverified",
                "standing_policy_disabled",
                "standing_policy_requires_manual_review",
            ]))
        );
    }
}

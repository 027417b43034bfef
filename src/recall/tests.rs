//! Seam tests against vectors recorded from the reference (fixtures/recall/expected.json):
//! the same corpus, request, provider hits and model decision must give the same request,
//! recall and application packets, receipt id and execution evidence.

use std::cell::Cell;

use super::*;
use crate::obj;
use crate::provider::{
    ContextProvider, MAX_POOL_RESULTS, ProviderError, ResultCap, Retrieval, RetrieveRequest,
    RetrievedItem, Sync, SyncRequest,
};
use crate::wire::json::{self, Map, Value};

const CORPUS: &str = include_str!("../../fixtures/recall/corpus.json");
const RECORD: &str = include_str!("../../fixtures/recall/record-content.txt");
const EXPECTED: &str = include_str!("../../fixtures/recall/expected.json");

/// A provider double returning fixed hits (or a status) and counting calls.
struct Double {
    items: Vec<RetrievedItem>,
    status: &'static str,
    fail: bool,
    calls: Cell<usize>,
    /// The `max_results` and cap of the last call.
    asked: Cell<Option<(usize, ResultCap)>>,
}

impl Double {
    fn hits(items: Vec<RetrievedItem>) -> Double {
        Double {
            items,
            status: "completed",
            fail: false,
            calls: Cell::new(0),
            asked: Cell::new(None),
        }
    }
}

impl ContextProvider for Double {
    fn provider_id(&self) -> &str {
        "embedded"
    }
    fn retrieve(&self, request: &RetrieveRequest) -> Retrieval {
        self.calls.set(self.calls.get() + 1);
        self.asked.set(Some((request.max_results, request.cap)));
        Retrieval {
            provider: "embedded".to_owned(),
            namespace: request.namespace.clone(),
            status: self.status.to_owned(),
            query_summary: request.query_summary.clone(),
            observed_at: request.observed_at.clone(),
            search_performed: true,
            read_performed: true,
            items: self.items.clone(),
            reason_code: (self.status != "completed").then(|| "provider_search_failed".to_owned()),
            provider_version: None,
            latency_ms: 0,
            requested_limit: 3,
            snapshot: None,
            lifecycle_skipped: 0,
        }
    }
    fn sync(&self, request: &SyncRequest) -> Sync {
        Sync::planned("embedded", &request.namespace, &request.observed_at, 1)
    }
    fn try_retrieve(&self, request: &RetrieveRequest) -> Result<Retrieval, ProviderError> {
        if self.fail {
            self.calls.set(self.calls.get() + 1);
            return Err(ProviderError::Invalid("bad call".to_owned()));
        }
        Ok(self.retrieve(request))
    }
}

fn item(resource_ref: &str, content: &str) -> RetrievedItem {
    RetrievedItem {
        resource_ref: resource_ref.to_owned(),
        summary: "s".to_owned(),
        content: content.to_owned(),
        score: None,
    }
}

fn parse_map(text: &str) -> Map {
    json::parse(text)
        .expect("valid json")
        .as_object()
        .cloned()
        .expect("object")
}

fn expected() -> Map {
    parse_map(EXPECTED)
}

fn request() -> Map {
    parse_map(
        r#"{"workspace_ref": "workspace:exact", "project_ref": "project:exact", "surface_id": "agent_workflow.turn_admission",
            "mode": "function_boundary", "queries": [{"query": "guidance", "query_summary": "turn admission"}],
            "observed_at": "2026-07-16T00:30:00Z", "conflict_state": "clear",
            "freshness_context": {"source_truth_current": true}, "raw_content_captured": false}"#,
    )
}

fn checkpoint() -> Value {
    json::parse(
        r#"{"verified": true, "corpus_id": "example_prefs", "workspace_ref": "workspace:exact", "project_ref": "project:exact",
            "surface_id": "agent_workflow.turn_admission", "read_authority": "module_scoped", "source_ref": "policy:x"}"#,
    )
    .expect("valid")
}

fn binding() -> Map {
    parse_map(
        r#"{"corpus_id": "example_prefs", "provider_id": "embedded", "namespace": "reward_memory", "scope_ref": "embedded://rm/example",
            "setup_hints": {"install": "Run the installer.", "configure": "/home/u/secret"}}"#,
    )
}

fn corpus() -> Value {
    json::parse(CORPUS).expect("valid")
}

fn session(provider: &Double) -> RecallSession {
    let req =
        build_recall_request(&corpus(), &request(), Some(&checkpoint())).expect("valid request");
    execute_recall(&req, &binding(), ProviderSource::Injected(provider)).expect("recall runs")
}

fn hits() -> Double {
    Double::hits(vec![
        item("embedded://rm/example/m.json", RECORD),
        item("embedded://rm/example/junk.json", "not json"),
    ])
}

#[test]
fn request_recall_application_receipt_and_evidence_match_the_reference() {
    let expected = expected();
    let req =
        build_recall_request(&corpus(), &request(), Some(&checkpoint())).expect("valid request");
    assert_eq!(Some(&Value::Object(req)), expected.get("request"));
    let provider = hits();
    let s = session(&provider);
    assert_eq!(
        Some(&Value::Object(s.packet.clone())),
        expected.get("recall")
    );
    assert_eq!(s.items.len(), 1, "the unparseable hit is skipped");
    let apply = |_: &Value, items: &[RecallItem]| -> Result<Value, String> {
        Ok(Value::Object(obj! {
            "output" => obj! {"plan" => "changed"},
            "outcome" => "applied",
            "memory_refs" => json::str_list(&[items[0].memory_ref.as_str()]),
            "current_artifact_verified" => true,
            "reasoning_summary" => "The preference matched the turn.",
        }))
    };
    let base = Value::Object(obj! {"plan" => "base"});
    let app = apply_recall(&base, &s, "recall:test", Some("pr:1"), Some(&apply)).expect("applies");
    assert_eq!(
        Some(&Value::Object(app.clone())),
        expected.get("application")
    );
    let receipt = app
        .get("receipt")
        .and_then(Value::as_object)
        .expect("receipt");
    assert_eq!(
        application_receipt_id(receipt).expect("valid receipt"),
        expected
            .get("receipt_id")
            .and_then(Value::as_str)
            .expect("id")
    );
    let evidence = execution_evidence(Some(&s.packet), Some(&app), None);
    assert_eq!(Some(&Value::Object(evidence)), expected.get("evidence"));
}

#[test]
fn a_guard_blocked_request_never_calls_the_provider() {
    let mut req = request();
    req.insert("workspace_ref", "workspace:other");
    req.insert("conflict_state", "");
    let packet = build_recall_request(&corpus(), &req, Some(&Value::Object(obj! {
        "verified" => false, "corpus_id" => "example_prefs", "workspace_ref" => "workspace:other",
        "project_ref" => "project:exact", "surface_id" => "agent_workflow.turn_admission", "read_authority" => "module_scoped",
    })))
    .expect("valid request");
    assert_eq!(packet.get("status"), Some(&Value::from("guard_blocked")));
    assert_eq!(
        packet.get("guard").and_then(|g| g.get("reason_codes")),
        Some(&json::str_list(&[
            "workspace_scope_mismatch",
            "unresolved_conflict",
            "read_authority_unverified",
            "read_authority_source_missing",
        ]))
    );
    let provider = hits();
    let s = execute_recall(&packet, &binding(), ProviderSource::Injected(&provider)).expect("runs");
    assert_eq!(provider.calls.get(), 0);
    assert_eq!(s.packet.get("status"), Some(&Value::from("guard_blocked")));
    assert!(s.packet.contains_key("reason_codes") && !s.packet.contains_key("reason_code"));
}

/// Ten active records of the corpus, by distinct refs and candidate refs.
fn ten_records() -> Double {
    Double::hits(
        (0..10)
            .map(|i| {
                let content = RECORD.replace(
                    "candidate:b7ca26ca6356dd695b21",
                    &format!("candidate:b7ca26ca6356dd695b{i:02}"),
                );
                item(&format!("embedded://rm/example/m{i}.json"), &content)
            })
            .collect(),
    )
}

/// §10.4 asks each call for the request's limit within the provider's reference cap; a
/// rank-prior pool asks for its count, past that cap, and keeps every result.
#[test]
fn a_pool_fetch_asks_for_the_pool_and_keeps_it_and_a_plain_recall_its_limit() {
    let mut req = request();
    req.insert("limit", 3);
    let packet = build_recall_request(&corpus(), &req, Some(&checkpoint())).expect("valid");
    assert_eq!(request_limit(&packet), 3);
    let provider = ten_records();
    let plain =
        execute_recall(&packet, &binding(), ProviderSource::Injected(&provider)).expect("runs");
    assert_eq!(provider.asked.get(), Some((3, ResultCap::Reference)));
    assert_eq!(plain.items.len(), 3);
    assert_eq!(plain.packet.get("result_count"), Some(&Value::from(3)));
    let pool = fetch_recall(
        &packet,
        &binding(),
        ProviderSource::Injected(&provider),
        Fetch::Pool(8),
    )
    .expect("runs");
    assert_eq!(provider.asked.get(), Some((8, ResultCap::Pool)));
    assert_eq!(pool.items.len(), 8);
    assert_eq!(pool.packet.get("result_count"), Some(&Value::from(8)));
    assert_eq!(
        pool.items[..3],
        plain.items[..],
        "the pool begins with the limit"
    );
    // A pool smaller than the limit still fetches the limit.
    fetch_recall(
        &packet,
        &binding(),
        ProviderSource::Injected(&provider),
        Fetch::Pool(2),
    )
    .expect("runs");
    assert_eq!(provider.asked.get(), Some((3, ResultCap::Pool)));
}

/// The cut to `--limit` keeps the first results of the final order, with their opaque
/// refs, and leaves a recall of at most the limit byte for byte as it was.
#[test]
fn the_cut_to_the_limit_keeps_the_first_results_and_counts_the_rest() {
    let mut req = request();
    req.insert("limit", 3);
    let packet = build_recall_request(&corpus(), &req, Some(&checkpoint())).expect("valid");
    let provider = ten_records();
    let mut pool = fetch_recall(
        &packet,
        &binding(),
        ProviderSource::Injected(&provider),
        Fetch::Pool(8),
    )
    .expect("runs");
    let mut opaque = command::opaque_refs(&pool);
    let first: Vec<RecallItem> = pool.items[..3].to_vec();
    let refs: Vec<String> = opaque[..3].to_vec();
    assert_eq!(prior::cut_to_limit(&mut pool, &mut opaque, 3), 5);
    assert_eq!(pool.items, first);
    assert_eq!(opaque, refs);
    assert_eq!(command::opaque_refs(&pool), refs);
    assert_eq!(pool.packet.get("result_count"), Some(&Value::from(3)));
    let before = pool.clone();
    assert_eq!(prior::cut_to_limit(&mut pool, &mut opaque, 3), 0);
    assert_eq!(pool, before);
}

/// The providers' pool bound is the rank prior's bound on candidates.
#[test]
fn the_providers_pool_bound_is_the_rank_priors_candidate_bound() {
    assert_eq!(MAX_POOL_RESULTS, crate::ranking::prior::MAX_CANDIDATES);
}

#[test]
fn provider_failures_fail_open_with_setup_hints() {
    let failing = Double {
        fail: true,
        ..hits()
    };
    let s = session(&failing);
    assert_eq!(
        s.packet.get("reason_code"),
        Some(&Value::from("provider_execution_failed"))
    );
    assert_eq!(
        s.packet.get("setup_hints"),
        Some(&Value::Object(obj! {"install" => "Run the installer."})),
        "the unsafe hint is dropped"
    );
    let down = Double {
        status: "unavailable",
        ..hits()
    };
    let s = session(&down);
    assert_eq!(
        s.packet.get("status"),
        Some(&Value::from("provider_unavailable"))
    );
    assert_eq!(
        s.packet.get("reason_code"),
        Some(&Value::from("provider_search_failed"))
    );
    let base = Value::Object(obj! {"plan" => "base"});
    let app = apply_recall(&base, &s, "recall:test", None, None).expect("fails open");
    assert_eq!(app.get("status"), Some(&Value::from("not_available")));
    assert_eq!(
        app.get("receipt").and_then(|r| r.get("reasoning_summary")),
        Some(&Value::from("recall_provider_unavailable"))
    );
}

#[test]
fn an_unknown_provider_id_is_an_error_outside_fail_open() {
    let req =
        build_recall_request(&corpus(), &request(), Some(&checkpoint())).expect("valid request");
    let factory = crate::provider::DefaultFactory::at(std::path::Path::new("/nonexistent"));
    let mut b = binding();
    b.insert("provider_id", "mystery");
    let mut c = corpus();
    if let Value::Object(m) = &mut c {
        m.insert("provider_id", "mystery");
    }
    let req2 = build_recall_request(&c, &request(), Some(&checkpoint())).expect("valid request");
    let err =
        execute_recall(&req2, &b, ProviderSource::Factory(&factory)).expect_err("unknown provider");
    assert_eq!(err.to_string(), "unsupported context provider: mystery");
    // The embedded id is known: an absent store is an empty recall.
    let s = execute_recall(&req, &binding(), ProviderSource::Factory(&factory)).expect("runs");
    assert_eq!(s.packet.get("status"), Some(&Value::from("empty")));
}

#[test]
fn expired_wrong_scope_and_inactive_records_are_skipped() {
    let expired = RECORD.replace("2027-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
    let other_surface = RECORD.replace(
        "\"surface_ids\": [\"agent_workflow.turn_admission\"]",
        "\"surface_ids\": [\"x.y\"]",
    );
    let retired = RECORD.replace("\"state\": \"active\"", "\"state\": \"retired\"");
    let provider = Double::hits(vec![
        item("embedded://rm/example/a.json", &expired),
        item("embedded://rm/example/b.json", &other_surface),
        item("embedded://rm/example/c.json", &retired),
    ]);
    let s = session(&provider);
    assert_eq!(s.packet.get("status"), Some(&Value::from("empty")));
    assert_eq!(
        s.packet.get("reason_code"),
        Some(&Value::Str(
            "no_active_exact_corpus_results".to_owned().into()
        ))
    );
}

#[test]
fn an_active_record_with_a_bad_candidate_ref_is_skipped_not_an_error() {
    let bad = RECORD.replace("candidate:b7ca26ca6356dd695b21", "bad ref");
    let provider = Double::hits(vec![item("embedded://rm/example/a.json", &bad)]);
    let req =
        build_recall_request(&corpus(), &request(), Some(&checkpoint())).expect("valid request");
    let session =
        execute_recall(&req, &binding(), ProviderSource::Injected(&provider)).expect("fails open");
    assert!(session.items.is_empty());
    assert_eq!(
        session.packet.get("status").and_then(Value::as_str),
        Some("empty")
    );
}

#[test]
fn invalid_application_decisions_fail_open() {
    let provider = hits();
    let s = session(&provider);
    let base = Value::Object(obj! {"plan" => "base"});
    let foreign = |_: &Value, _: &[RecallItem]| -> Result<Value, String> {
        Ok(Value::Object(obj! {
            "output" => obj! {"plan" => "changed"}, "outcome" => "applied",
            "memory_refs" => json::str_list(&["embedded://elsewhere"]), "current_artifact_verified" => true,
            "reasoning_summary" => "x",
        }))
    };
    let app =
        apply_recall(&base, &s, "recall:test", Some("pr:1"), Some(&foreign)).expect("fails open");
    assert_eq!(app.get("status"), Some(&Value::from("failed")));
    assert_eq!(app.get("output"), Some(&base));
    let raising =
        |_: &Value, _: &[RecallItem]| -> Result<Value, String> { Err("model crashed".to_owned()) };
    let app = apply_recall(&base, &s, "recall:test", None, Some(&raising)).expect("fails open");
    assert_eq!(
        app.get("fail_open_preserved_base"),
        Some(&Value::Bool(true))
    );
    let receipt = app
        .get("receipt")
        .and_then(Value::as_object)
        .expect("receipt");
    assert!(
        application_receipt_id(receipt).is_err(),
        "artifact_ref null has no id"
    );
    assert!(apply_recall(&base, &s, "bad id", None, None).is_err());
}

#[test]
fn active_record_envelope_requires_an_accepted_guard_passed_review() {
    let review = parse_map(
        r#"{"schema_version": "reward_memory_candidate_review_v0", "status": "rejected", "effective_decision": "reject", "guard_passed": true}"#,
    );
    assert_eq!(
        build_active_record(&review, &corpus(), "2026-07-16T00:30:00Z")
            .expect_err("rejected")
            .0,
        "only a guard-passed accepted candidate can become active"
    );
}

/// 870 mutations of a recall request and its checkpoint over three corpora (plain,
/// revision-bound with identity refs, time-bound non-durable retired), recorded from the
/// reference: each gives the same error text, or a packet with the same printed bytes.
#[test]
fn recall_request_mutations_match_the_reference() {
    let data = parse_map(include_str!("../../fixtures/recall/request-cases.json"));
    let base_request = data
        .get("request")
        .and_then(Value::as_object)
        .cloned()
        .expect("request");
    let base_checkpoint = data.get("checkpoint").cloned().expect("checkpoint");
    let corpora = data
        .get("corpora")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .expect("corpora");
    let cases = data
        .get("cases")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .expect("cases");
    assert!(cases.len() > 800);
    let mut diverged = 0usize;
    for (index, case) in cases.iter().enumerate() {
        let mut request = base_request.clone();
        let mut checkpoint = base_checkpoint.clone();
        let corpus_index = match case.get("corpus") {
            Some(Value::Int(i)) => usize::try_from(*i).expect("index"),
            _ => 0,
        };
        let key = case.get("key").and_then(Value::as_str).unwrap_or_default();
        let deleting = case.get("delete") == Some(&Value::Bool(true));
        match case.get("target").and_then(Value::as_str) {
            Some("request") if deleting => {
                request.remove(key);
            }
            Some("request") => request.insert(key, case.get("value").cloned().unwrap_or_default()),
            Some("checkpoint") if case.get("replace").is_some() => {
                checkpoint = case.get("replace").cloned().unwrap_or_default();
            }
            Some("checkpoint") => {
                if let Value::Object(m) = &mut checkpoint {
                    if deleting {
                        m.remove(key);
                    } else {
                        m.insert(key, case.get("value").cloned().unwrap_or_default());
                    }
                }
            }
            _ => {}
        }
        let result = build_recall_request(&corpora[corpus_index], &request, Some(&checkpoint));
        let expect = case.get("expect").expect("expect");
        if python_artefact(case) && result.is_err() && expect.get("error").is_none() {
            diverged += 1;
            continue;
        }
        match (result, expect.get("error").and_then(Value::as_str)) {
            (Err(err), Some(message)) => assert_eq!(err.0, message, "case {index}"),
            (Ok(packet), None) => {
                let printed = json::to_pretty_line(&Value::Object(packet));
                let digest = crate::wire::digest::sha256_hex(printed.trim_end_matches('\n'));
                assert_eq!(
                    Some(digest.as_str()),
                    expect.get("sha256").and_then(Value::as_str),
                    "case {index}: {printed}"
                );
            }
            (other, message) => panic!("case {index}: got {other:?}, expected error {message:?}"),
        }
    }
    // Only the deliberate artefact refusals may differ from the reference.
    assert!(
        diverged * 5 < cases.len(),
        "{diverged} of {} cases diverged",
        cases.len()
    );
}

/// True when a mutation puts a value that the reference reads through Python's `str()`
/// artefacts (`true` → "True", a list or object → its repr) into a field: this port
/// refuses those values on purpose (docs/compatibility.md), so the reference vector
/// does not apply.
fn python_artefact(case: &Value) -> bool {
    match case.get("value") {
        Some(Value::Bool(true)) => true,
        Some(Value::Array(items)) => !items.is_empty(),
        Some(Value::Object(map)) => !map.is_empty(),
        _ => false,
    }
}

/// Python's default `json.dumps` (insertion order, `", "`/`": "`, ASCII escapes).
const PY_DEFAULT: json::DumpOptions = json::DumpOptions {
    indent: None,
    item_sep: ", ",
    key_sep: ": ",
    sort_keys: false,
    ensure_ascii: true,
};

fn set_path(target: &mut Value, path: &[Value], value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = target;
    for key in parents {
        let Some(next) = key.as_str().and_then(|k| match node {
            Value::Object(m) => m.get_mut(k),
            _ => None,
        }) else {
            return;
        };
        node = next;
    }
    if let (Value::Object(m), Some(key)) = (node, last.as_str()) {
        match value {
            Some(v) => m.insert(key, v),
            None => {
                m.remove(key);
            }
        }
    }
}

/// 269 provider hits with a mutated active record (every field × 22 values, plus
/// unparseable contents), each paired with a valid record, recorded from the reference:
/// same recall packet bytes and content digests, or the same error.
#[test]
fn recall_execution_over_mutated_records_matches_the_reference() {
    let data = parse_map(include_str!("../../fixtures/recall/execute-cases.json"));
    let request = data
        .get("request")
        .and_then(Value::as_object)
        .cloned()
        .expect("request");
    let binding = data
        .get("binding")
        .and_then(Value::as_object)
        .cloned()
        .expect("binding");
    let record = data.get("record").cloned().expect("record");
    let base = json::dumps(&record, PY_DEFAULT);
    let cases = data
        .get("cases")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .expect("cases");
    assert!(cases.len() > 250);
    let mut diverged = 0usize;
    for (index, case) in cases.iter().enumerate() {
        let content = match case.get("raw").and_then(Value::as_str) {
            Some(raw) => raw.to_owned(),
            None => {
                let mut mutated = record.clone();
                let path = case
                    .get("path")
                    .and_then(Value::as_array)
                    .map(<[Value]>::to_vec)
                    .unwrap_or_default();
                let value = if case.get("delete") == Some(&Value::Bool(true)) {
                    None
                } else {
                    Some(case.get("value").cloned().unwrap_or_default())
                };
                set_path(&mut mutated, &path, value);
                json::dumps(&mutated, PY_DEFAULT)
            }
        };
        let provider = Double::hits(vec![
            item("embedded://rm/example/0.json", &content),
            item("embedded://rm/example/1.json", &base),
        ]);
        let result = execute_recall(&request, &binding, ProviderSource::Injected(&provider));
        let expect = case.get("expect").expect("expect");
        // A malformed record is skipped here where the reference raises (fail-open).
        let reference_raised_on_record = matches!(
            expect.get("error").and_then(Value::as_str),
            Some(
                "candidate_ref must be a compact public-safe token"
                    | "content_summary must be compact and public-safe"
            )
        );
        if reference_raised_on_record && result.is_ok() {
            diverged += 1;
            continue;
        }
        if python_artefact(case) && expect.get("error").is_none() {
            match &result {
                Err(_) => {
                    diverged += 1;
                    continue;
                }
                Ok(session)
                    if expect.get("sha256").and_then(Value::as_str)
                        != Some(
                            crate::wire::digest::sha256_hex(
                                json::to_pretty_line(&Value::Object(session.packet.clone()))
                                    .trim_end_matches('\n'),
                            )
                            .as_str(),
                        ) =>
                {
                    diverged += 1;
                    continue;
                }
                Ok(_) => {}
            }
        }
        match (result, expect.get("error").and_then(Value::as_str)) {
            (Err(err), Some(message)) => assert_eq!(err.to_string(), message, "case {index}"),
            (Ok(session), None) => {
                let printed = json::to_pretty_line(&Value::Object(session.packet.clone()));
                let digest = crate::wire::digest::sha256_hex(printed.trim_end_matches('\n'));
                assert_eq!(
                    Some(digest.as_str()),
                    expect.get("sha256").and_then(Value::as_str),
                    "case {index}: {content}\n{printed}"
                );
                let digests: Vec<&str> = session
                    .items
                    .iter()
                    .map(|i| i.content_digest.as_str())
                    .collect();
                assert_eq!(
                    Some(&json::str_list(&digests)),
                    expect.get("digests"),
                    "case {index}"
                );
            }
            (other, message) => {
                panic!("case {index}: {content}: got {other:?}, expected error {message:?}")
            }
        }
    }
    // Only the deliberate artefact refusals may differ from the reference.
    assert!(
        diverged * 5 < cases.len(),
        "{diverged} of {} cases diverged",
        cases.len()
    );
}

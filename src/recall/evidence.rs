//! Issue Fix execution evidence (`issue_fix_reward_memory_execution_evidence_v0`, §10.7):
//! the minimum proof behind a "recalled" or "applied" claim. Pure.

use crate::obj;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::{py_str_value, pystr};

/// Schema of the evidence packet.
pub const EXECUTION_EVIDENCE_SCHEMA_VERSION: &str = "issue_fix_reward_memory_execution_evidence_v0";

const CLAIM_POLICY: &str = "claim_recalled_only_after_query_provider_call_and_exact_readback_and_claim_applied_only_after_matching_verified_application_receipt";

/// Builds the evidence from a recall packet (absent = `{}`), an optional application
/// packet and an optional query-kind override (`ingest_verification` for ingest).
pub fn execution_evidence(
    recall: Option<&Map>,
    application: Option<&Map>,
    query_kind: Option<&str>,
) -> Map {
    let empty = Map::new();
    let recall = recall.unwrap_or(&empty);
    let receipt = application
        .and_then(|a| a.get("receipt"))
        .and_then(Value::as_object);
    let calls: i64 = match recall.get("provider_call_count") {
        Some(Value::Int(i)) => *i,
        Some(Value::Bool(true)) => 1,
        Some(Value::Float(f)) if f.is_finite() => *f as i64,
        _ => 0,
    };
    let kind = match query_kind {
        Some(k) if !k.is_empty() => k.to_owned(),
        _ => recall
            .get("query_kind")
            .filter(|v| v.is_truthy())
            .map_or_else(|| "business_recall".to_owned(), py_str_value),
    };
    let exact = recall.get("result_readback_verified") == Some(&Value::Bool(true));
    let query_evidence: Vec<Value> = match recall.get("query_evidence") {
        Some(Value::Array(items)) => items
            .iter()
            .filter(|i| i.as_object().is_some())
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    let qe_ok = !query_evidence.is_empty()
        && query_evidence.iter().all(|item| {
            pystr(item.get("query_digest")).chars().count() == 16
                && !crate::wire::pyfmt::py_strip(&pystr(item.get("query_summary"))).is_empty()
                && item.get("exact_query_exposed") == Some(&Value::Bool(false))
        });
    let recall_ok = calls > 0 && exact && qe_ok;
    let receipt_ok = receipt.is_some_and(|r| {
        kind == "business_recall"
            && r.get("schema_version").and_then(Value::as_str)
                == Some("reward_memory_application_receipt_v0")
            && r.get("query_kind").and_then(Value::as_str) == Some("business_recall")
            && r.get("query_evidence") == Some(&Value::Array(query_evidence.clone().into()))
            && r.get("provider_call_count") == Some(&Value::Int(calls))
            && recall_ok
            && r.get("outcome").and_then(Value::as_str) == Some("applied")
            && r.get("result_readback_verified") == Some(&Value::Bool(true))
            && r.get("current_artifact_verified") == Some(&Value::Bool(true))
            && r.get("memory_ref_digests").is_some_and(Value::is_truthy)
    });
    let ingest = kind == "ingest_verification";
    let verified_result = match () {
        _ if ingest && recall_ok => "ingest_exact_readback_verified",
        _ if ingest && calls != 0 => "ingest_provider_called_without_verified_readback",
        _ if ingest => "ingest_provider_not_called",
        _ if receipt_ok => "memory_applied",
        _ if recall_ok => "memory_recalled_not_applied",
        _ if calls != 0 => "provider_called_without_verified_recall",
        _ => "provider_not_called",
    };
    let mut unknowns: Vec<&str> = Vec::new();
    if calls == 0 {
        unknowns.push("provider_result_unknown");
    }
    if !qe_ok {
        unknowns.push("query_evidence_unknown");
    }
    if !exact {
        unknowns.push("exact_recall_readback_unknown");
    }
    if kind == "business_recall" && application.is_some() && !receipt_ok {
        unknowns.push("memory_application_effect_unknown");
    }
    obj! {
        "schema_version" => EXECUTION_EVIDENCE_SCHEMA_VERSION,
        "verified_result" => verified_result,
        "unknowns" => crate::wire::json::str_list(&unknowns),
        "minimum_evidence" => obj! {
            "query_kind" => kind,
            "query_evidence" => Value::Array(query_evidence.into()),
            "provider_call_count" => calls,
            "exact_readback_verified" => exact,
            "application_receipt" => receipt.cloned(),
        },
        "claim_policy" => CLAIM_POLICY,
        "raw_content_captured" => false,
    }
}

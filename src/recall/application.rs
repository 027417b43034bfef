//! Model-owned application of a recall (`reward_memory_application_v0`, §10.5), its
//! compact receipt (`reward_memory_application_receipt_v0`) and the receipt's stable
//! `rma_` id (§10.6). Every failure of the caller's callback fails open to the base output.

use std::sync::LazyLock;

use regex::Regex;

use crate::obj;
use crate::wire::digest::{application_receipt_id as rma_digest, short16};
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::{py_str_value, py_strip, pystr_strip};
use crate::wire::text::{self, FieldError, FieldResult};

use super::execute::{RecallItem, RecallSession};

/// Schema of the application packet.
pub const APPLICATION_SCHEMA_VERSION: &str = "reward_memory_application_v0";
/// Schema of the application receipt.
pub const APPLICATION_RECEIPT_SCHEMA_VERSION: &str = "reward_memory_application_receipt_v0";
/// Every receipt outcome.
pub const APPLICATION_OUTCOMES: [&str; 6] = [
    "applied",
    "ignored",
    "refuted",
    "failed",
    "not_available",
    "available_not_applied",
];

/// The caller's (model's) decision about recalled items. Return `Err` to fail open.
pub type Applier<'a> = dyn Fn(&Value, &[RecallItem]) -> Result<Value, String> + 'a;

fn receipt(
    session: &RecallSession,
    application_id: &str,
    artifact_ref: Option<&str>,
    outcome: &str,
    memory_refs: &[String],
    reasoning_summary: &str,
    current_artifact_verified: bool,
) -> FieldResult<Map> {
    let packet = &session.packet;
    let mut digests: Vec<String> = memory_refs.iter().map(|r| short16(r)).collect();
    digests.sort_unstable();
    digests.dedup();
    let query_kind = packet
        .get("query_kind")
        .filter(|v| v.is_truthy())
        .map_or_else(|| "business_recall".to_owned(), py_str_value);
    let query_evidence = match packet.get("query_evidence") {
        Some(v @ Value::Array(_)) => v.clone(),
        _ => Value::Array(Box::default()),
    };
    let calls = match packet.get("provider_call_count") {
        Some(Value::Int(i)) => *i,
        _ => 0,
    };
    Ok(obj! {
        "schema_version" => APPLICATION_RECEIPT_SCHEMA_VERSION,
        "application_id" => text::token(Some(&Value::from(application_id)), "application_id")?,
        "artifact_ref" => text::optional_token(artifact_ref.map(Value::from).as_ref(), "artifact_ref")?,
        "corpus_id" => packet.get("corpus_id").cloned().unwrap_or_default(),
        "surface_id" => packet.get("surface_id").cloned().unwrap_or_default(),
        "mode" => packet.get("mode").cloned().unwrap_or_default(),
        "query_kind" => query_kind,
        "query_evidence" => query_evidence,
        "outcome" => outcome,
        "memory_ref_digests" => crate::wire::json::str_list(&digests),
        "reasoning_summary" => text::compact(Some(&Value::from(reasoning_summary)), "reasoning_summary", 500)?,
        "current_artifact_verified" => current_artifact_verified,
        "result_readback_verified" => packet.get("result_readback_verified").is_some_and(Value::is_truthy),
        "provider_call_count" => calls,
        "model_reasoning_preserved" => true,
        "grants_new_action_authority" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

fn packet(status: &str, output: Value, receipt: Map, preserved: bool) -> Map {
    obj! {
        "ok" => true,
        "schema_version" => APPLICATION_SCHEMA_VERSION,
        "status" => status,
        "output" => output,
        "receipt" => receipt,
        "fail_open_preserved_base" => preserved,
    }
}

/// Checks a callback decision; `Err` means "invalid, fail open".
fn checked_decision(
    decision: &Value,
    base: &Value,
    session: &RecallSession,
) -> Result<(String, Value, Vec<String>, bool, String), ()> {
    let decision = decision.as_object().ok_or(())?;
    let output = decision.get("output").ok_or(())?;
    let outcome = pystr_strip(decision.get("outcome"));
    if !matches!(outcome.as_str(), "applied" | "ignored" | "refuted") {
        return Err(());
    }
    let refs = match decision.get("memory_refs") {
        None => Vec::new(),
        Some(v) if !v.is_truthy() => Vec::new(),
        Some(Value::Array(items)) => items.to_vec(),
        Some(_) => return Err(()),
    };
    let memory_refs: Vec<String> = refs
        .iter()
        .map(|r| py_strip(&py_str_value(r)).to_owned())
        .filter(|r| !r.is_empty())
        .collect();
    if memory_refs
        .iter()
        .any(|r| !session.items.iter().any(|i| &i.memory_ref == r))
    {
        return Err(());
    }
    let verified = match decision.get("current_artifact_verified") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(()),
    };
    if outcome == "applied" && (memory_refs.is_empty() || !verified) {
        return Err(());
    }
    if outcome != "applied" && output != base {
        return Err(());
    }
    let summary = text::public_safe_text(decision.get("reasoning_summary"), 500).ok_or(())?;
    Ok((outcome, output.clone(), memory_refs, verified, summary))
}

/// Runs the caller-owned application of a recall session and fails open to `base_output`.
///
/// An invalid `application_id` or `artifact_ref` is an error (not fail-open), as in the
/// reference.
pub fn apply_recall(
    base_output: &Value,
    session: &RecallSession,
    application_id: &str,
    artifact_ref: Option<&str>,
    apply: Option<&Applier<'_>>,
) -> FieldResult<Map> {
    let status = session.packet.get("status");
    if status.and_then(Value::as_str) != Some("completed") || session.items.is_empty() {
        let label = status
            .filter(|v| v.is_truthy())
            .map_or_else(|| "invalid".to_owned(), py_str_value);
        let r = receipt(
            session,
            application_id,
            artifact_ref,
            "not_available",
            &[],
            &format!("recall_{label}"),
            false,
        )?;
        return Ok(packet("not_available", base_output.clone(), r, true));
    }
    let Some(apply) = apply else {
        let r = receipt(
            session,
            application_id,
            artifact_ref,
            "available_not_applied",
            &[],
            "model_application_callback_not_supplied",
            false,
        )?;
        return Ok(packet(
            "available_not_applied",
            base_output.clone(),
            r,
            true,
        ));
    };
    let decided = apply(base_output, &session.items)
        .ok()
        .and_then(|d| checked_decision(&d, base_output, session).ok());
    match decided {
        Some((outcome, output, refs, verified, summary)) => {
            let r = receipt(
                session,
                application_id,
                artifact_ref,
                &outcome,
                &refs,
                &summary,
                verified,
            )?;
            let preserved = output == *base_output;
            Ok(packet(&outcome, output, r, preserved))
        }
        None => {
            let r = receipt(
                session,
                application_id,
                artifact_ref,
                "failed",
                &[],
                "application_boundary_failed",
                false,
            )?;
            Ok(packet("failed", base_output.clone(), r, true))
        }
    }
}

/// True when a float NaN/Infinity is anywhere inside (canonical JSON forbids them).
pub fn contains_non_finite(v: &Value) -> bool {
    match v {
        Value::Float(f) => !f.is_finite(),
        Value::Array(items) => items.iter().any(contains_non_finite),
        Value::Object(m) => m.iter().any(|(_, v)| contains_non_finite(v)),
        _ => false,
    }
}

/// [`MEMORY_DIGEST_RE`] without the regex engine (checked for every digest of every
/// observation; a property test holds it to the pattern).
pub fn is_memory_digest(s: &str) -> bool {
    text::is_prefixed_hex(s, "", 16) || text::is_prefixed_hex(s, "sha256:", 64)
}

/// `^(?:[0-9a-f]{16}|sha256:[0-9a-f]{64})$`: a canonical opaque memory digest.
pub static MEMORY_DIGEST_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[0-9a-f]{16}|sha256:[0-9a-f]{64})$").unwrap_or_else(|e| panic!("{e}"))
});

/// The fields every application receipt carries, in receipt order.
pub const APPLICATION_RECEIPT_FIELDS: [&str; 18] = [
    "schema_version",
    "application_id",
    "artifact_ref",
    "corpus_id",
    "surface_id",
    "mode",
    "query_kind",
    "query_evidence",
    "outcome",
    "memory_ref_digests",
    "reasoning_summary",
    "current_artifact_verified",
    "result_readback_verified",
    "provider_call_count",
    "model_reasoning_preserved",
    "grants_new_action_authority",
    "external_writes_performed",
    "raw_content_captured",
];
/// The fields an application receipt may add.
pub const APPLICATION_RECEIPT_OPTIONAL_FIELDS: [&str; 2] =
    ["retrieval_snapshot_ref", "policy_snapshot_ref"];
/// The fields this port's `apply` adds to a receipt beyond §10.5 (issue 21): the scope
/// of the route that produced the recall. LoopX's receipt has no such fields; only our
/// own readers (`apply`, `utility-observe`) accept them.
pub const APPLICATION_RECEIPT_SCOPE_FIELDS: [&str; 2] = ["agent_id", "project_id"];
/// Every receipt `query_kind`.
pub const APPLICATION_QUERY_KINDS: [&str; 2] = ["business_recall", "ingest_verification"];

fn receipt_text(v: Option<&Value>, label: &str, max: usize) -> FieldResult<()> {
    match v {
        Some(Value::Str(s)) => {
            let t = py_strip(s);
            if t.is_empty() || t.chars().count() > max || t.contains(['\r', '\n']) {
                Err(FieldError(format!(
                    "{label} must be compact public-safe text"
                )))
            } else {
                Ok(())
            }
        }
        _ => Err(FieldError(format!(
            "{label} must be compact public-safe text"
        ))),
    }
}

fn opaque(v: Option<&Value>, label: &str) -> FieldResult<String> {
    let s = pystr_strip(v);
    let windows_abs = s.len() >= 2
        && s.as_bytes()[1] == b':'
        && s.as_bytes()[0].is_ascii_alphabetic()
        && s[2..].starts_with(['\\', '/']);
    if !text::is_ref(&s) || s.contains("://") || s.starts_with('/') || windows_abs {
        return Err(FieldError(format!(
            "{label} must be an opaque public-safe reference"
        )));
    }
    Ok(s)
}

fn receipt_bool(r: &Map, key: &str) -> FieldResult<bool> {
    match r.get(key) {
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(FieldError(format!(
            "application_receipt.{key} must be a boolean"
        ))),
    }
}

/// The stable id of a complete, valid application receipt: `rma_` + SHA-256 of its
/// canonical JSON (§10.6). A receipt with `artifact_ref: null` has no id.
pub fn application_receipt_id(receipt: &Map) -> FieldResult<String> {
    let label = "application_receipt";
    if receipt.get("schema_version").and_then(Value::as_str)
        != Some(APPLICATION_RECEIPT_SCHEMA_VERSION)
    {
        return Err(FieldError::new(
            "application_receipt must use reward_memory_application_receipt_v0",
        ));
    }
    let keys: Vec<&str> = receipt.keys().collect();
    let missing: Vec<&str> = APPLICATION_RECEIPT_FIELDS
        .iter()
        .copied()
        .filter(|k| !keys.contains(k))
        .collect();
    let unknown: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| {
            !APPLICATION_RECEIPT_FIELDS.contains(k)
                && !APPLICATION_RECEIPT_OPTIONAL_FIELDS.contains(k)
                && !APPLICATION_RECEIPT_SCOPE_FIELDS.contains(k)
        })
        .collect();
    if !missing.is_empty() || !unknown.is_empty() {
        return Err(FieldError(format!(
            "application_receipt has invalid fields: missing={}, unknown={}",
            crate::wire::keys::repr_list(missing),
            crate::wire::keys::repr_list(unknown)
        )));
    }
    if !super::request::RECALL_MODES.contains(&pystr_strip(receipt.get("mode")).as_str()) {
        return Err(FieldError::new("application_receipt.mode is invalid"));
    }
    if !APPLICATION_QUERY_KINDS.contains(&pystr_strip(receipt.get("query_kind")).as_str()) {
        return Err(FieldError::new("application_receipt.query_kind is invalid"));
    }
    let evidence = match receipt.get("query_evidence") {
        Some(Value::Array(items)) if items.len() <= 3 => items,
        _ => {
            return Err(FieldError::new(
                "application_receipt.query_evidence must be a bounded list",
            ));
        }
    };
    for (index, item) in evidence.iter().enumerate() {
        let l = format!("{label}.query_evidence[{index}]");
        let item = item
            .as_object()
            .ok_or_else(|| FieldError(format!("{l} must be an object")))?;
        let mut item_keys: Vec<&str> = item.keys().collect();
        item_keys.sort_unstable();
        if item_keys != ["exact_query_exposed", "query_digest", "query_summary"] {
            return Err(FieldError(format!("{l} has invalid fields")));
        }
        let digest = pystr_strip(item.get("query_digest"));
        if !text::is_hex_digest(&digest, 16) {
            return Err(FieldError(format!(
                "{l}.query_digest must be a canonical digest"
            )));
        }
        receipt_text(
            item.get("query_summary"),
            &format!("{l}.query_summary"),
            220,
        )?;
        if item.get("exact_query_exposed") != Some(&Value::Bool(false)) {
            return Err(FieldError(format!("{l}.exact_query_exposed must be false")));
        }
    }
    receipt_text(
        receipt.get("reasoning_summary"),
        "application_receipt.reasoning_summary",
        500,
    )?;
    receipt_bool(receipt, "current_artifact_verified")?;
    receipt_bool(receipt, "result_readback_verified")?;
    if !receipt_bool(receipt, "model_reasoning_preserved")? {
        return Err(FieldError::new(
            "application_receipt.model_reasoning_preserved must be true",
        ));
    }
    if !matches!(receipt.get("provider_call_count"), Some(Value::Int(i)) if *i >= 0) {
        return Err(FieldError::new(
            "application_receipt.provider_call_count must be a non-negative integer",
        ));
    }
    if !APPLICATION_OUTCOMES.contains(&pystr_strip(receipt.get("outcome")).as_str()) {
        return Err(FieldError::new("application_receipt.outcome is invalid"));
    }
    let digests_label = "application_receipt.memory_ref_digests";
    let digests = match receipt.get("memory_ref_digests") {
        Some(Value::Array(items)) if items.len() <= 16 => items,
        _ => {
            return Err(FieldError(format!(
                "{digests_label} must be a list containing between 0 and 16 opaque references"
            )));
        }
    };
    let mut normalized = digests
        .iter()
        .map(|d| opaque(Some(d), digests_label))
        .collect::<FieldResult<Vec<String>>>()?;
    normalized.sort_unstable();
    if normalized.windows(2).any(|w| w[0] == w[1]) {
        return Err(FieldError(format!(
            "{digests_label} must not contain duplicates"
        )));
    }
    if normalized.iter().any(|d| !is_memory_digest(d)) {
        return Err(FieldError(format!(
            "{digests_label} must contain only canonical opaque memory digests"
        )));
    }
    if Value::Array(normalized.into_iter().map(Value::from).collect())
        != Value::Array(digests.clone())
    {
        return Err(FieldError(format!(
            "{digests_label} must be sorted and canonical"
        )));
    }
    for key in ["application_id", "artifact_ref"] {
        if !text::is_token(&pystr_strip(receipt.get(key))) {
            return Err(FieldError(format!(
                "{label}.{key} must be a compact public-safe token"
            )));
        }
    }
    opaque(receipt.get("corpus_id"), "application_receipt.corpus_id")?;
    opaque(receipt.get("surface_id"), "application_receipt.surface_id")?;
    for key in [
        "grants_new_action_authority",
        "external_writes_performed",
        "raw_content_captured",
    ] {
        if receipt.get(key) != Some(&Value::Bool(false)) {
            return Err(FieldError(format!("{label}.{key} must be false")));
        }
    }
    for key in APPLICATION_RECEIPT_OPTIONAL_FIELDS
        .into_iter()
        .chain(APPLICATION_RECEIPT_SCOPE_FIELDS)
    {
        if receipt.contains_key(key) {
            opaque(receipt.get(key), &format!("{label}.{key}"))?;
        }
    }
    if contains_non_finite(&Value::Object(receipt.clone())) {
        return Err(FieldError::new(
            "application_receipt must be canonical JSON data",
        ));
    }
    Ok(rma_digest(&Value::Object(receipt.clone())))
}

//! Provider binding normalization (§10.1): one exact corpus ↔ provider scope binding.

use crate::obj;
use crate::provider::STORE_TOKENIZER_KEY;
use crate::provider::embedded::Tokenizer;
use crate::wire::digest::short16;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr;
use crate::wire::text::{self, FieldError, FieldResult};

const MAX_SETUP_HINT: usize = 500;

/// Normalizes a raw binding (unknown keys ignored) against a **normalized** corpus.
///
/// Output keys: `corpus_id, provider_id, namespace, scope_ref, timeout_seconds,
/// setup_hints, [provider_binary], [minimum_provider_version], [actor_peer_id],
/// [store_tokenizer]` (the last is ours: the embedded store's tokenizer, `unicode61` or
/// `porter`).
pub fn normalize_binding(raw: &Map, corpus: &Map) -> FieldResult<Map> {
    let empty = Value::Object(Map::new());
    let setup = match raw.get("setup_hints") {
        Some(v) if v.is_truthy() => v,
        _ => &empty,
    };
    let setup = setup
        .as_object()
        .ok_or_else(|| FieldError::new("provider_binding.setup_hints must be an object"))?;
    let mut hints = Map::new();
    for key in ["install", "configure"] {
        if let Some(text) = text::public_safe_text(setup.get(key), MAX_SETUP_HINT) {
            hints.insert(key, text);
        }
    }
    let corpus_id = text::token(raw.get("corpus_id"), "provider_binding.corpus_id")?;
    let provider_id = text::token(raw.get("provider_id"), "provider_binding.provider_id")?;
    let namespace = text::token(raw.get("namespace"), "provider_binding.namespace")?;
    let scope_ref = text::token(raw.get("scope_ref"), "provider_binding.scope_ref")?;
    let timeout = raw
        .get("timeout_seconds")
        .cloned()
        .unwrap_or(Value::Int(30));
    if Some(corpus_id.as_str()) != corpus.get("corpus_id").and_then(Value::as_str) {
        return Err(FieldError::new(
            "provider binding must select the exact corpus_id",
        ));
    }
    if Some(provider_id.as_str()) != corpus.get("provider_id").and_then(Value::as_str) {
        return Err(FieldError::new(
            "provider binding provider_id must match the corpus",
        ));
    }
    let seconds = match &timeout {
        Value::Int(i) => Some(*i as f64),
        Value::BigInt(_) => Some(f64::INFINITY),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    if !seconds.is_some_and(|t| (1.0..=120.0).contains(&t)) {
        return Err(FieldError::new(
            "provider binding timeout_seconds must be between 1 and 120",
        ));
    }
    if let Some(expected) = corpus
        .get("provider_scope_ref_digest")
        .filter(|v| v.is_truthy())
        && Some(short16(&scope_ref).as_str()) != expected.as_str()
    {
        return Err(FieldError::new(
            "provider binding scope_ref does not match the corpus digest",
        ));
    }
    let mut binding = obj! {
        "corpus_id" => corpus_id,
        "provider_id" => provider_id.as_str(),
        "namespace" => namespace,
        "scope_ref" => scope_ref.as_str(),
        "timeout_seconds" => timeout,
        "setup_hints" => hints,
    };
    for key in ["provider_binary", "minimum_provider_version"] {
        if let Some(v) = raw.get(key).filter(|v| v.is_truthy()) {
            binding.insert(key, pystr(Some(v)));
        }
    }
    let actor_peer_id =
        text::optional_token(raw.get("actor_peer_id"), "provider_binding.actor_peer_id")?;
    if let Some((_, rest)) = scope_ref.split_once("/peers/") {
        let peer = rest.split('/').next().unwrap_or_default();
        match &actor_peer_id {
            None => {
                return Err(FieldError::new(
                    "peer-scoped provider binding requires actor_peer_id",
                ));
            }
            Some(id) if id != peer => {
                return Err(FieldError::new(
                    "actor_peer_id must match the peer-scoped provider URI",
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(id) = actor_peer_id {
        binding.insert("actor_peer_id", id);
    }
    if let Some(tokenizer) = store_tokenizer(raw, &provider_id)? {
        binding.insert(STORE_TOKENIZER_KEY, tokenizer.name());
    }
    Ok(binding)
}

/// The embedded store's tokenizer named by `store_tokenizer` (ours; absent or `null`:
/// none). Refused for another provider and for a name that is not a tokenizer.
fn store_tokenizer(raw: &Map, provider_id: &str) -> FieldResult<Option<Tokenizer>> {
    let Some(value) = raw.get(STORE_TOKENIZER_KEY).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let names = Tokenizer::ALL.map(Tokenizer::name).join(" or ");
    if provider_id != crate::provider::embedded::PROVIDER_ID {
        return Err(FieldError(format!(
            "provider_binding.{STORE_TOKENIZER_KEY} is only for the embedded provider"
        )));
    }
    value
        .as_str()
        .and_then(Tokenizer::from_name)
        .map(Some)
        .ok_or_else(|| {
            FieldError(format!(
                "provider_binding.{STORE_TOKENIZER_KEY} must be {names}"
            ))
        })
}

/// The binding's timeout as seconds (`float(binding.timeout_seconds)`), 30 if unusable.
pub fn timeout_seconds(binding: &Map) -> f64 {
    match binding.get("timeout_seconds") {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        _ => 30.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(digest: Option<&str>) -> Map {
        let mut m = obj! {"corpus_id" => "c", "provider_id" => "embedded"};
        if let Some(d) = digest {
            m.insert("provider_scope_ref_digest", d);
        }
        m
    }

    fn raw(json: &str) -> Map {
        crate::wire::json::parse(json)
            .expect("valid")
            .as_object()
            .cloned()
            .expect("object")
    }

    #[test]
    fn defaults_timeout_and_keeps_key_order() {
        let b = normalize_binding(
            &raw(r#"{"corpus_id": "c", "provider_id": "embedded", "namespace": "n", "scope_ref": "embedded://x", "extra": 1}"#),
            &corpus(None),
        )
        .expect("valid");
        assert_eq!(
            b.keys().collect::<Vec<_>>(),
            [
                "corpus_id",
                "provider_id",
                "namespace",
                "scope_ref",
                "timeout_seconds",
                "setup_hints"
            ]
        );
        assert_eq!(b.get("timeout_seconds"), Some(&Value::Int(30)));
    }

    #[test]
    fn rejects_bad_timeouts_digests_and_peers() {
        let base = r#""corpus_id": "c", "provider_id": "embedded", "namespace": "n""#;
        let err = |json: String, c: Map| normalize_binding(&raw(&json), &c).expect_err("invalid").0;
        assert_eq!(
            err(
                format!(r#"{{{base}, "scope_ref": "embedded://x", "timeout_seconds": true}}"#),
                corpus(None)
            ),
            "provider binding timeout_seconds must be between 1 and 120"
        );
        assert_eq!(
            err(
                format!(r#"{{{base}, "scope_ref": "embedded://x", "timeout_seconds": null}}"#),
                corpus(None)
            ),
            "provider binding timeout_seconds must be between 1 and 120"
        );
        assert_eq!(
            err(
                format!(r#"{{{base}, "scope_ref": "embedded://x"}}"#),
                corpus(Some("0000000000000000"))
            ),
            "provider binding scope_ref does not match the corpus digest"
        );
        assert_eq!(
            err(
                format!(r#"{{{base}, "scope_ref": "viking://user/u/peers/p1/m"}}"#),
                corpus(None)
            ),
            "peer-scoped provider binding requires actor_peer_id"
        );
        assert_eq!(
            err(
                format!(
                    r#"{{{base}, "scope_ref": "viking://user/u/peers/p1/m", "actor_peer_id": "p2"}}"#
                ),
                corpus(None)
            ),
            "actor_peer_id must match the peer-scoped provider URI"
        );
    }

    #[test]
    fn store_tokenizer_is_kept_for_the_embedded_store_and_refused_otherwise() {
        let base = r#""corpus_id": "c", "provider_id": "embedded", "namespace": "n", "scope_ref": "embedded://x""#;
        let b = normalize_binding(
            &raw(&format!(r#"{{{base}, "store_tokenizer": "porter"}}"#)),
            &corpus(None),
        )
        .expect("valid");
        assert_eq!(b.get("store_tokenizer"), Some(&Value::from("porter")));
        let err = normalize_binding(
            &raw(&format!(r#"{{{base}, "store_tokenizer": "trigram"}}"#)),
            &corpus(None),
        )
        .expect_err("invalid");
        assert_eq!(
            err.0,
            "provider_binding.store_tokenizer must be unicode61 or porter"
        );
        let other = obj! {"corpus_id" => "c", "provider_id" => "openviking"};
        let err = normalize_binding(
            &raw(r#"{"corpus_id": "c", "provider_id": "openviking", "namespace": "n", "scope_ref": "viking://x", "store_tokenizer": "porter"}"#),
            &other,
        )
        .expect_err("invalid");
        assert_eq!(
            err.0,
            "provider_binding.store_tokenizer is only for the embedded provider"
        );
    }

    #[test]
    fn fractional_timeouts_pass() {
        let b = normalize_binding(
            &raw(r#"{"corpus_id": "c", "provider_id": "embedded", "namespace": "n", "scope_ref": "embedded://x", "timeout_seconds": 30.5}"#),
            &corpus(None),
        )
        .expect("valid");
        assert_eq!(timeout_seconds(&b), 30.5);
    }
}

//! The snapshot refs a recall captures for its application receipt (attribution RFC:
//! the partition a utility observation belongs to): `retrieval_snapshot_ref` names what
//! the provider's answer was computed from, `policy_snapshot_ref` the configuration that
//! shaped it. Pure digests of typed inputs; the provider reports its own snapshot token
//! ([`crate::provider::Retrieval::snapshot`]) and the `recall` command gathers the
//! policy's documents. Same inputs, same ref; any change of an input, another ref.

use crate::obj;
use crate::wire::digest::{j3, sha256_prefix};
use crate::wire::json::{Map, Value};

/// Hex digits of the digest in each ref (128 bits).
pub const SNAPSHOT_HEX: usize = 32;
/// Schema marker hashed into every policy snapshot.
pub const POLICY_SNAPSHOT_SCHEMA: &str = "reward_memory_policy_snapshot_v0";
/// Schema marker hashed into every retrieval snapshot.
pub const RETRIEVAL_SNAPSHOT_SCHEMA: &str = "reward_memory_retrieval_snapshot_v0";

/// The provider id as it may appear inside a ref (`embedded`, `openviking`); anything
/// else is `provider`.
fn ref_segment(provider_id: &str) -> &str {
    let plain = !provider_id.is_empty()
        && provider_id.len() <= 40
        && provider_id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if plain { provider_id } else { "provider" }
}

/// `retrieval:<provider_id>:<32 hex>`: the first 32 hex digits of the SHA-256 of the J3
/// text of `{"schema_version": "reward_memory_retrieval_snapshot_v0", "provider_id",
/// "namespace", "scope_ref", "snapshots"}`, where `snapshots` are the provider's tokens of
/// each call of the recall in call order (the embedded store's generation digest;
/// OpenViking's response digest). `None` when a call reported no token.
pub fn retrieval_snapshot_ref(
    provider_id: &str,
    namespace: &str,
    scope_ref: &str,
    snapshots: &[Option<String>],
) -> Option<String> {
    let tokens: Option<Vec<Value>> = snapshots
        .iter()
        .map(|s| s.as_deref().map(Value::from))
        .collect();
    let tokens = tokens.filter(|t| !t.is_empty())?;
    let document = Value::Object(obj! {
        "schema_version" => RETRIEVAL_SNAPSHOT_SCHEMA,
        "provider_id" => provider_id,
        "namespace" => namespace,
        "scope_ref" => scope_ref,
        "snapshots" => Value::Array(tokens.into()),
    });
    Some(format!(
        "retrieval:{}:{}",
        ref_segment(provider_id),
        sha256_prefix(&j3(&document), SNAPSHOT_HEX)
    ))
}

/// What the policy of one recall consists of.
#[derive(Debug, Clone, Copy)]
pub struct PolicyInputs<'a> {
    /// The surface route's own settings: `surface_id`, `adapter` and the recall profile
    /// (the explicit form: the request's `surface_id` and `mode`).
    pub surface: &'a Map,
    /// The corpus that answered, as normalized by the config (or given by `--input`).
    pub corpus: &'a Map,
    /// Its provider binding.
    pub provider_binding: &'a Map,
    /// The corpus's standing policy (`None` in the explicit form, which has none).
    pub standing_policy: Option<&'a Map>,
    /// The rank-prior profile, when the prior was applied to this recall's results.
    pub rank_prior_profile: Option<&'a Value>,
}

/// `policy:<32 hex>`: the first 32 hex digits of the SHA-256 of the J3 text of
/// `{"schema_version": "reward_memory_policy_snapshot_v0", "surface", "corpus",
/// "provider_binding", "standing_policy", "rank_prior_profile"}` (absent ones null).
pub fn policy_snapshot_ref(inputs: PolicyInputs<'_>) -> String {
    let document = Value::Object(obj! {
        "schema_version" => POLICY_SNAPSHOT_SCHEMA,
        "surface" => inputs.surface.clone(),
        "corpus" => inputs.corpus.clone(),
        "provider_binding" => inputs.provider_binding.clone(),
        "standing_policy" => inputs.standing_policy.cloned().map_or(Value::Null, Value::Object),
        "rank_prior_profile" => inputs.rank_prior_profile.cloned().unwrap_or(Value::Null),
    });
    format!("policy:{}", sha256_prefix(&j3(&document), SNAPSHOT_HEX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::text::is_ref;

    fn map(key: &str, value: &str) -> Map {
        obj! { key => value }
    }

    #[test]
    fn a_retrieval_ref_names_the_provider_and_changes_with_any_token() {
        let one = retrieval_snapshot_ref("embedded", "ns", "embedded://c", &[Some("a".into())])
            .expect("ref");
        assert!(one.starts_with("retrieval:embedded:"), "{one}");
        assert_eq!(one.len(), "retrieval:embedded:".len() + SNAPSHOT_HEX);
        assert!(is_ref(&one));
        let again = retrieval_snapshot_ref("embedded", "ns", "embedded://c", &[Some("a".into())]);
        assert_eq!(again.as_deref(), Some(one.as_str()));
        for other in [
            retrieval_snapshot_ref("embedded", "ns", "embedded://c", &[Some("b".into())]),
            retrieval_snapshot_ref("embedded", "ns", "embedded://d", &[Some("a".into())]),
            retrieval_snapshot_ref("embedded", "nt", "embedded://c", &[Some("a".into())]),
            retrieval_snapshot_ref("openviking", "ns", "embedded://c", &[Some("a".into())]),
            retrieval_snapshot_ref(
                "embedded",
                "ns",
                "embedded://c",
                &[Some("a".into()), Some("a".into())],
            ),
        ] {
            assert_ne!(other.as_deref(), Some(one.as_str()));
        }
        assert_eq!(
            retrieval_snapshot_ref("embedded", "ns", "c", &[Some("a".into()), None]),
            None
        );
        assert_eq!(retrieval_snapshot_ref("embedded", "ns", "c", &[]), None);
        let odd =
            retrieval_snapshot_ref("Odd Provider/x", "ns", "c", &[Some("a".into())]).expect("ref");
        assert!(
            odd.starts_with("retrieval:provider:") && is_ref(&odd),
            "{odd}"
        );
    }

    #[test]
    fn a_policy_ref_changes_with_each_input_and_only_then() {
        let surface = map("surface_id", "s");
        let corpus = map("corpus_id", "c");
        let binding = map("provider_id", "embedded");
        let policy = map("policy_id", "p");
        let profile = Value::Object(map("profile_id", "r"));
        let base = PolicyInputs {
            surface: &surface,
            corpus: &corpus,
            provider_binding: &binding,
            standing_policy: Some(&policy),
            rank_prior_profile: None,
        };
        let reference = policy_snapshot_ref(base);
        assert!(reference.starts_with("policy:") && is_ref(&reference));
        assert_eq!(reference.len(), "policy:".len() + SNAPSHOT_HEX);
        assert_eq!(policy_snapshot_ref(base), reference);
        let other = map("x", "y");
        let other_value = Value::Object(other.clone());
        for changed in [
            PolicyInputs {
                surface: &other,
                ..base
            },
            PolicyInputs {
                corpus: &other,
                ..base
            },
            PolicyInputs {
                provider_binding: &other,
                ..base
            },
            PolicyInputs {
                standing_policy: Some(&other),
                ..base
            },
            PolicyInputs {
                standing_policy: None,
                ..base
            },
            PolicyInputs {
                rank_prior_profile: Some(&profile),
                ..base
            },
            PolicyInputs {
                rank_prior_profile: Some(&other_value),
                ..base
            },
        ] {
            assert_ne!(policy_snapshot_ref(changed), reference);
        }
    }
}

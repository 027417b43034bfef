//! The partition a ledger read names, as one typed value: the `--input` object of
//! `utility-ledger project|subject|export` (`memory_utility_ledger_partition_input`, a
//! `utility-project` input without observations) or the six ids given one by one, with the
//! reducer version. [`PartitionInput`] is both what the parser returns and what the
//! committed schema is generated from.
//!
//! Parsing checks the shape only (keys, JSON types, a non-empty reducer version) and
//! refuses unknown keys with our own wording ([`crate::wire::keys`]); the strict rules of a
//! reducer context (LoopX's messages) apply afterwards ([`PartitionInput::context`]), then
//! this port's public-safe rule ([`check_public_safe`]). Pure.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::obj;
use crate::utility::reducer::{self, DEFAULT_REDUCER_VERSION, ProjectionRequest, ReducerContext};
use crate::wire::credential;
use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt;
use crate::wire::text::FieldResult;

use super::error::{LedgerError, LedgerResult};

/// The `--input` of `utility-ledger project|subject|export`: a partition.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PartitionInput {
    #[schemars(with = "BTreeMap<String, String>")]
    pub scope: Map,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    /// Defaults to `memory_utility_reducer_v0`.
    pub reducer_version: Option<String>,
}

/// The keys a partition input must have, in the order a refusal names them.
const REQUIRED: [&str; 3] = ["scope", "retrieval_snapshot_ref", "policy_snapshot_ref"];
/// The key it may have besides.
const OPTIONAL: [&str; 1] = ["reducer_version"];

fn refuse<T>(message: impl Into<String>) -> LedgerResult<T> {
    Err(LedgerError::Request(message.into()))
}

impl PartitionInput {
    /// A partition from its parts; a reducer version, when given, must be a non-empty
    /// string.
    pub fn new(
        scope: Map,
        retrieval_snapshot_ref: String,
        policy_snapshot_ref: String,
        reducer_version: Option<String>,
    ) -> LedgerResult<PartitionInput> {
        if reducer_version
            .as_deref()
            .is_some_and(|v| pyfmt::py_strip(v).is_empty())
        {
            return refuse("reducer_version must be a non-empty string when provided");
        }
        Ok(PartitionInput {
            scope,
            retrieval_snapshot_ref,
            policy_snapshot_ref,
            reducer_version,
        })
    }

    /// The partition of an `--input` object: the three required keys present, no other
    /// key than `reducer_version`, each of the JSON type the schema names.
    pub fn from_value(value: &Value) -> LedgerResult<PartitionInput> {
        let empty = Map::new();
        let map = value.as_object().unwrap_or(&empty);
        let missing: Vec<&str> = REQUIRED
            .iter()
            .copied()
            .filter(|k| !map.contains_key(k))
            .collect();
        if !missing.is_empty() {
            return refuse(format!(
                "ledger partition input is missing: {}",
                keys::list(missing)
            ));
        }
        let extra: Vec<&str> = map
            .keys()
            .filter(|k| !REQUIRED.contains(k) && !OPTIONAL.contains(k))
            .collect();
        if !extra.is_empty() {
            return refuse(format!(
                "ledger partition input contains unsupported fields: {}",
                keys::list(extra)
            ));
        }
        let Some(Value::Object(scope)) = map.get("scope") else {
            return refuse("scope must be an object");
        };
        let Some(retrieval) = map.get("retrieval_snapshot_ref").and_then(Value::as_str) else {
            return refuse("retrieval_snapshot_ref must be a string");
        };
        let Some(policy) = map.get("policy_snapshot_ref").and_then(Value::as_str) else {
            return refuse("policy_snapshot_ref must be a string");
        };
        let reducer_version = match map.get("reducer_version") {
            None => None,
            Some(Value::Str(s)) => Some(s.to_string()),
            Some(_) => return refuse("reducer_version must be a non-empty string when provided"),
        };
        PartitionInput::new(
            scope.clone(),
            retrieval.to_owned(),
            policy.to_owned(),
            reducer_version,
        )
    }

    /// The partition of the six ids (`agent_id`, `project_id`, `corpus_id`, `surface_id`,
    /// `retrieval_snapshot_ref`, `policy_snapshot_ref`) and a reducer version.
    pub fn from_ids(ids: [&str; 6], reducer_version: Option<&str>) -> LedgerResult<PartitionInput> {
        let [agent, project, corpus, surface, retrieval, policy] = ids;
        PartitionInput::new(
            obj! {
                "agent_id" => agent,
                "project_id" => project,
                "corpus_id" => corpus,
                "surface_id" => surface,
            },
            retrieval.to_owned(),
            policy.to_owned(),
            reducer_version.map(str::to_owned),
        )
    }

    /// The reducer version it names (the default when it names none).
    pub fn reducer_version(&self) -> &str {
        self.reducer_version
            .as_deref()
            .unwrap_or(DEFAULT_REDUCER_VERSION)
    }

    /// Scope, snapshot refs and reducer version as the values `utility-project` receives.
    fn values(&self) -> [Value; 4] {
        [
            Value::Object(self.scope.clone()),
            Value::from(self.retrieval_snapshot_ref.as_str()),
            Value::from(self.policy_snapshot_ref.as_str()),
            Value::from(self.reducer_version()),
        ]
    }

    /// The strictly validated reducer context (the reference's messages).
    pub fn context(&self) -> FieldResult<ReducerContext> {
        let [scope, retrieval, policy, version] = self.values();
        ReducerContext::strict(&scope, &retrieval, &policy, &version)
    }

    /// What `utility-project` prints for this partition and no observations: for a
    /// partition whose context is invalid, the rejected packet (no ledger partition can
    /// match it).
    pub fn empty_projection(&self) -> FieldResult<Value> {
        let [scope, retrieval, policy, version] = self.values();
        reducer::reduce(&ProjectionRequest {
            observations: &[],
            scope: &scope,
            retrieval_snapshot_ref: &retrieval,
            policy_snapshot_ref: &policy,
            reducer_version: &version,
            previous_projection: None,
        })
    }
}

/// This port's stricter public-safe rule ([`credential`]) on a valid partition: the
/// ledger's packets are ours, so no id of the partition may look like a credential.
pub fn check_public_safe(context: &ReducerContext) -> LedgerResult<()> {
    let request = |e: crate::wire::text::FieldError| LedgerError::Request(e.0);
    context.scope.credential_free("scope").map_err(request)?;
    credential::check(&context.retrieval_snapshot_ref, "retrieval_snapshot_ref")
        .map_err(request)?;
    credential::check(&context.policy_snapshot_ref, "policy_snapshot_ref").map_err(request)?;
    credential::check(&context.reducer_version, "reducer_version").map_err(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json;

    fn refusal(text: &str) -> String {
        let value = json::parse(text).expect("json");
        match PartitionInput::from_value(&value) {
            Err(LedgerError::Request(message)) => message,
            other => panic!("{text}: {other:?}"),
        }
    }

    /// The parser and the committed schema are one description: it requires exactly the
    /// schema's required keys and accepts exactly its properties.
    #[test]
    fn the_partition_input_accepts_exactly_what_its_schema_describes() {
        let schema = schemars::schema_for!(PartitionInput);
        let names = |key: &str| -> Vec<String> {
            let value = schema.get(key).cloned().unwrap_or_default();
            match value {
                serde_json::Value::Array(items) => items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect(),
                serde_json::Value::Object(map) => map.keys().cloned().collect(),
                _ => Vec::new(),
            }
        };
        assert_eq!(names("required"), REQUIRED);
        let mut properties = names("properties");
        properties.sort();
        let mut known: Vec<&str> = REQUIRED.iter().chain(&OPTIONAL).copied().collect();
        known.sort();
        assert_eq!(properties, known);
        assert_eq!(
            schema.get("additionalProperties"),
            Some(&serde_json::Value::Bool(false))
        );

        let full = r#"{"scope": {"agent_id": "a", "project_id": "p", "corpus_id": "c", "surface_id": "s"}, "retrieval_snapshot_ref": "r", "policy_snapshot_ref": "q", "reducer_version": "v"}"#;
        let parsed = PartitionInput::from_value(&json::parse(full).expect("json")).expect("valid");
        assert_eq!(parsed.reducer_version(), "v");
        assert_eq!(
            PartitionInput::from_ids(["a", "p", "c", "s", "r", "q"], Some("v")).expect("valid"),
            parsed
        );
        for key in REQUIRED {
            let mut value = json::parse(full).expect("json");
            if let Value::Object(map) = &mut value {
                map.remove(key);
            }
            let text = json::to_pretty_line(&value);
            assert_eq!(
                refusal(&text),
                format!("ledger partition input is missing: {}", keys::list([key]))
            );
        }
        let extra = full.replacen('{', r#"{"observations": [], "#, 1);
        assert_eq!(
            refusal(&extra),
            format!(
                "ledger partition input contains unsupported fields: {}",
                keys::list(["observations"])
            )
        );
    }

    #[test]
    fn a_partition_input_names_the_first_key_of_the_wrong_type() {
        let base = |scope: &str, retrieval: &str, version: &str| {
            format!(
                r#"{{"scope": {scope}, "retrieval_snapshot_ref": {retrieval}, "policy_snapshot_ref": "q"{version}}}"#
            )
        };
        assert_eq!(refusal(&base("[]", "1", "")), "scope must be an object");
        assert_eq!(
            refusal(&base("{}", "1", "")),
            "retrieval_snapshot_ref must be a string"
        );
        for version in [
            r#", "reducer_version": null"#,
            r#", "reducer_version": " ""#,
        ] {
            assert_eq!(
                refusal(&base("{}", r#""r""#, version)),
                "reducer_version must be a non-empty string when provided"
            );
        }
        let defaulted =
            PartitionInput::from_value(&json::parse(&base("{}", r#""r""#, "")).expect("json"))
                .expect("shape is fine");
        assert_eq!(defaulted.reducer_version(), DEFAULT_REDUCER_VERSION);
    }
}

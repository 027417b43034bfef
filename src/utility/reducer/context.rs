//! The reducer's context: the partition a projection belongs to (scope, snapshot pair,
//! reducer version), checked strictly, its `mur_` reducer identity, and the rejection
//! reason codes a projection can carry. Shared by the reducer and the readback validator.
//! Pure.

use crate::obj;
use crate::wire::digest;
use crate::wire::json::{Map, Value};
use crate::wire::text::FieldResult;

use super::super::observation::Scope;
use super::super::strict;

/// Schema version of every projection packet.
pub const PROJECTION_SCHEMA_VERSION: &str = "memory_utility_projection_v0";
/// The reducer version used when the caller names none.
pub const DEFAULT_REDUCER_VERSION: &str = "memory_utility_reducer_v0";

/// Every rejection reason code a projection can carry.
pub mod reason {
    pub const MALFORMED: &str = "observation_malformed";
    pub const REDUCER_IDENTITY_MISMATCH: &str = "reducer_identity_mismatch";
    pub const SUBJECT_LIMIT: &str = "projection_subject_limit_exceeded";
    pub const CONFLICTING_DELIVERY: &str = "conflicting_observation_delivery";
    pub const SCOPE_MISMATCH: &str = "scope_mismatch";
    pub const RETRIEVAL_MISMATCH: &str = "retrieval_snapshot_mismatch";
    pub const POLICY_MISMATCH: &str = "policy_snapshot_mismatch";
}

/// A validated reducer context. `scope` is printed as stored: sorted keys for a caller's
/// context, declaration order for the fallback context of a rejected packet.
#[derive(Debug, Clone, PartialEq)]
pub struct ReducerContext {
    pub scope: Scope,
    pub scope_map: Map,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub reducer_version: String,
}

impl ReducerContext {
    /// Strictly validates a caller context (no coercion; messages are the reference's).
    pub fn strict(
        scope: &Value,
        retrieval_snapshot_ref: &Value,
        policy_snapshot_ref: &Value,
        reducer_version: &Value,
    ) -> FieldResult<ReducerContext> {
        let scope_map = strict::strict_scope(scope, "scope")?;
        let retrieval = strict::strict_ref(retrieval_snapshot_ref, "retrieval_snapshot_ref")?;
        let policy = strict::strict_ref(policy_snapshot_ref, "policy_snapshot_ref")?;
        let version = strict::strict_ref(reducer_version, "reducer_version")?;
        Ok(ReducerContext {
            scope: Scope::from_map(&scope_map),
            scope_map,
            retrieval_snapshot_ref: retrieval.to_owned(),
            policy_snapshot_ref: policy.to_owned(),
            reducer_version: version.to_owned(),
        })
    }

    /// The context of a packet rejected before any caller context was valid.
    pub fn fallback() -> ReducerContext {
        let scope = Scope {
            agent_id: "rejected".into(),
            project_id: "rejected".into(),
            corpus_id: "rejected".into(),
            surface_id: "rejected".into(),
        };
        ReducerContext {
            scope_map: scope.to_map(),
            scope,
            retrieval_snapshot_ref: "rejected".into(),
            policy_snapshot_ref: "rejected".into(),
            reducer_version: DEFAULT_REDUCER_VERSION.into(),
        }
    }

    /// `mur_` + SHA-256 of the canonical identity object.
    pub fn identity(&self) -> String {
        reducer_identity(
            &self.scope,
            &self.retrieval_snapshot_ref,
            &self.policy_snapshot_ref,
            &self.reducer_version,
        )
    }
}

/// `mur_` + SHA-256 of canonical `{policy_snapshot_ref, reducer_version,
/// retrieval_snapshot_ref, schema_version, scope}`.
pub fn reducer_identity(
    scope: &Scope,
    retrieval_snapshot_ref: &str,
    policy_snapshot_ref: &str,
    reducer_version: &str,
) -> String {
    let identity = obj! {
        "schema_version" => PROJECTION_SCHEMA_VERSION,
        "scope" => scope.to_sorted_map(),
        "retrieval_snapshot_ref" => retrieval_snapshot_ref,
        "policy_snapshot_ref" => policy_snapshot_ref,
        "reducer_version" => reducer_version,
    };
    digest::prefixed_canonical("mur_", &Value::Object(identity))
}

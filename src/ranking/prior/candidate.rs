//! What the prior ranks and where: one semantic [`Candidate`] (a memory digest and its
//! relevance) and the [`Partition`] a ranking happens in (scope, snapshot pair, reducer
//! version), both read strictly from their request objects; each type is also the JSON
//! Schema of that object. Pure.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::utility::observation::Scope;
use crate::utility::reducer::Rules;
use crate::utility::reducer::context::{DEFAULT_REDUCER_VERSION, reducer_identity};
use crate::utility::strict;
use crate::wire::credential;
use crate::wire::json::Value;
use crate::wire::text;

use super::error::{RankPriorError, field};

/// At most this many candidates per ranking (and the largest `candidate_pool`).
pub const MAX_CANDIDATES: usize = 10_000;
/// The largest accepted `relevance_score`.
pub const MAX_RELEVANCE: f64 = 1e12;

/// One semantic candidate: an opaque memory digest and the provider's relevance score.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(rename = "RankPriorInputCandidate", deny_unknown_fields)]
pub struct Candidate {
    /// 16 lowercase hex characters or `sha256:` + 64 (as in application receipts).
    pub memory_ref_digest: String,
    /// Finite, `0 ≤ r ≤ 1e12`.
    #[serde(rename = "relevance_score")]
    pub relevance: f64,
}

impl Candidate {
    /// A checked candidate.
    pub fn new(memory_ref_digest: &str, relevance: f64) -> Result<Candidate, RankPriorError> {
        if !is_memory_digest(memory_ref_digest) {
            return Err(field(
                "memory_ref_digest must be 16 lowercase hex characters or sha256: and 64",
            ));
        }
        check_relevance(relevance)?;
        Ok(Candidate {
            memory_ref_digest: memory_ref_digest.to_owned(),
            relevance,
        })
    }
}

/// `^(?:[0-9a-f]{16}|sha256:[0-9a-f]{64})$` (the canonical memory digest), without a regex.
pub fn is_memory_digest(text: &str) -> bool {
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    hex(text, 16)
        || text
            .strip_prefix("sha256:")
            .is_some_and(|rest| hex(rest, 64))
}

/// A relevance score is finite and in `[0, MAX_RELEVANCE]`.
pub(super) fn check_relevance(relevance: f64) -> Result<(), RankPriorError> {
    if !relevance.is_finite() {
        return Err(field(
            "relevance_score must be a finite number (NaN and Infinity are refused)",
        ));
    }
    if !(0.0..=MAX_RELEVANCE).contains(&relevance) {
        return Err(field(format!(
            "relevance_score must be between 0 and {MAX_RELEVANCE:e}"
        )));
    }
    Ok(())
}

/// The partition a ranking happens in: the four scope ids, the snapshot pair and the
/// reducer version. Utility applies only when its source has exactly this identity.
/// The same object is an episode's partition (`rank-evaluate`) and `recall --partition`.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[schemars(rename = "RankPriorPartition", deny_unknown_fields)]
pub struct Partition {
    /// Exactly `agent_id`, `project_id`, `corpus_id`, `surface_id`.
    #[schemars(with = "BTreeMap<String, String>")]
    pub scope: Scope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    // `memory_utility_reducer_v1` (or `memory_utility_reducer_v1:half_life_days:N`) reads
    // the partition's utility under the v1 rules (docs/rank-prior.md).
    /// Default `memory_utility_reducer_v0`.
    #[schemars(with = "Option<String>")]
    pub reducer_version: String,
}

impl Partition {
    /// Reads `{scope, retrieval_snapshot_ref, policy_snapshot_ref, [reducer_version]}`
    /// strictly (canonical opaque refs, exactly the four scope keys; a reducer version that
    /// starts like a v1 name must be one).
    pub fn from_value(value: &Value) -> Result<Partition, RankPriorError> {
        let map = strict::object(value, "partition")?;
        text::reject_unknown(
            map,
            "partition",
            &[
                "scope",
                "retrieval_snapshot_ref",
                "policy_snapshot_ref",
                "reducer_version",
            ],
        )?;
        let get = |k: &str| map.get(k).unwrap_or(&Value::Null);
        let scope = strict::strict_scope(get("scope"), "partition.scope")?;
        let retrieval = strict::strict_ref(
            get("retrieval_snapshot_ref"),
            "partition.retrieval_snapshot_ref",
        )?;
        let policy =
            strict::strict_ref(get("policy_snapshot_ref"), "partition.policy_snapshot_ref")?;
        let reducer_version = match map.get("reducer_version") {
            None => DEFAULT_REDUCER_VERSION,
            Some(v) => strict::strict_ref(v, "partition.reducer_version")?,
        };
        Rules::of(reducer_version).map_err(|e| field(format!("partition.{e}")))?;
        let scope = Scope::from_map(&scope);
        scope.credential_free("partition.scope")?;
        credential::check(retrieval, "partition.retrieval_snapshot_ref")?;
        credential::check(policy, "partition.policy_snapshot_ref")?;
        credential::check(reducer_version, "partition.reducer_version")?;
        Ok(Partition {
            scope,
            retrieval_snapshot_ref: retrieval.to_owned(),
            policy_snapshot_ref: policy.to_owned(),
            reducer_version: reducer_version.to_owned(),
        })
    }

    /// The `mur_` reducer identity of this partition (the projection's identity).
    pub fn reducer_identity(&self) -> String {
        reducer_identity(
            &self.scope,
            &self.retrieval_snapshot_ref,
            &self.policy_snapshot_ref,
            &self.reducer_version,
        )
    }

    /// The first part that differs from `other`, for the mismatch message.
    pub(super) fn mismatch(&self, other: &Partition) -> Option<&'static str> {
        if self.scope != other.scope {
            Some("scope")
        } else if self.retrieval_snapshot_ref != other.retrieval_snapshot_ref {
            Some("retrieval_snapshot_ref")
        } else if self.policy_snapshot_ref != other.policy_snapshot_ref {
            Some("policy_snapshot_ref")
        } else if self.reducer_version != other.reducer_version {
            Some("reducer_version")
        } else {
            None
        }
    }
}

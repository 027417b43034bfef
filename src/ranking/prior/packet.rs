//! The `memory_utility_rank_prior_v0` packet as typed data: one struct per object, in key
//! order, that the packet is built from ([`packet`]) and whose JSON Schema is the packet's
//! ([`RankPriorPacket`]). Pure.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::wire::json::{self, Value};
use crate::wire::schema::{AlwaysFalse, AlwaysTrue};

use super::candidate::Partition;
use super::modifier::Reason;
use super::profile::{ModifierVersion, Profile};
use super::rank::Ranking;

/// Schema version of the rank-prior packet.
pub const RANK_PRIOR_SCHEMA_VERSION: &str = RankPriorVersion::VALUE;

const_string!(RankPriorVersion, "memory_utility_rank_prior_v0");

/// The semantic candidate stage.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SemanticStage {
    pub semantic_floor: f64,
    #[schemars(with = "u32")]
    pub candidate_pool: usize,
    #[schemars(with = "u32")]
    pub input_count: usize,
    #[schemars(with = "u32")]
    pub below_floor_count: usize,
    #[schemars(with = "u32")]
    pub outside_pool_count: usize,
    #[schemars(with = "u32")]
    pub pool_count: usize,
}

/// One candidate of the pool, in final order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(rename = "RankPriorCandidate", deny_unknown_fields)]
pub struct RankedCandidate {
    pub memory_ref_digest: String,
    pub relevance_score: f64,
    #[schemars(with = "u32")]
    pub semantic_rank: usize,
    /// Within the profile's bounds; exactly 1.0 unless admitted directional utility.
    pub modifier: f64,
    /// `relevance_score × modifier`.
    pub rank_score: f64,
    #[schemars(with = "u32")]
    pub final_rank: usize,
    pub reason_codes: Vec<Reason>,
}

/// A review proposal for an attenuated memory (never a deletion).
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(rename = "RankPriorReview", deny_unknown_fields)]
pub struct ReviewProposal {
    pub memory_ref_digest: String,
    pub proposed_action: &'static str,
    pub reason_codes: Vec<Reason>,
    pub automatic_deletion: AlwaysFalse,
    pub action_authority_granted: AlwaysFalse,
}

/// `memory_utility_rank_prior_v0`: a bounded utility re-ordering of semantic candidates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RankPriorPacket {
    pub ok: AlwaysTrue,
    pub schema_version: RankPriorVersion,
    /// `ranked`, or `empty` when no candidate passed the semantic stage.
    pub status: &'static str,
    pub modifier_version: ModifierVersion,
    pub profile_id: String,
    /// `murp_` + 64 hex.
    pub profile_digest: String,
    /// `mur_` + 64 hex of the partition.
    pub reducer_identity: String,
    /// The four scope ids, in sorted key order.
    #[schemars(with = "BTreeMap<String, String>")]
    pub scope: Value,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub reducer_version: String,
    pub semantic_stage: SemanticStage,
    pub modifier_bounds: [f64; 2],
    #[schemars(with = "u32")]
    pub modified_count: usize,
    pub order_changed: bool,
    pub candidates: Vec<RankedCandidate>,
    pub review_proposals: Vec<ReviewProposal>,
    pub read_only: AlwaysTrue,
    pub automatic_deletion: AlwaysFalse,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

impl RankPriorPacket {
    /// The packet of a ranking.
    pub fn new(ranking: &Ranking, partition: &Partition, profile: &Profile) -> RankPriorPacket {
        let candidates = ranking
            .ranked
            .iter()
            .map(|r| RankedCandidate {
                memory_ref_digest: r.memory_ref_digest.clone(),
                relevance_score: r.relevance,
                semantic_rank: r.semantic_rank,
                modifier: r.modifier.value,
                rank_score: r.rank_score,
                final_rank: r.final_rank,
                reason_codes: r.modifier.reasons.clone(),
            })
            .collect();
        let review_proposals = ranking
            .ranked
            .iter()
            .filter(|r| r.modifier.reasons.contains(&Reason::ReviewProposed))
            .map(|r| ReviewProposal {
                memory_ref_digest: r.memory_ref_digest.clone(),
                proposed_action: "attenuate_or_review",
                reason_codes: vec![Reason::NegativeUtilityAttenuation],
                automatic_deletion: AlwaysFalse,
                action_authority_granted: AlwaysFalse,
            })
            .collect();
        let modified_count = ranking
            .ranked
            .iter()
            .filter(|r| r.modifier.value != 1.0)
            .count();
        RankPriorPacket {
            ok: AlwaysTrue,
            schema_version: RankPriorVersion,
            status: if ranking.ranked.is_empty() {
                "empty"
            } else {
                "ranked"
            },
            modifier_version: ModifierVersion,
            profile_id: profile.profile_id.clone(),
            profile_digest: profile.digest(),
            reducer_identity: partition.reducer_identity(),
            scope: Value::Object(partition.scope.to_sorted_map()),
            retrieval_snapshot_ref: partition.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: partition.policy_snapshot_ref.clone(),
            reducer_version: partition.reducer_version.clone(),
            semantic_stage: SemanticStage {
                semantic_floor: profile.semantic_floor,
                candidate_pool: profile.candidate_pool,
                input_count: ranking.input_count,
                below_floor_count: ranking.below_floor_count,
                outside_pool_count: ranking.outside_pool_count,
                pool_count: ranking.ranked.len(),
            },
            modifier_bounds: profile.modifier_bounds,
            modified_count,
            order_changed: ranking.order_changed(),
            candidates,
            review_proposals,
            read_only: AlwaysTrue,
            automatic_deletion: AlwaysFalse,
            grants_new_action_authority: AlwaysFalse,
            provider_write_performed: AlwaysFalse,
            external_writes_performed: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        }
    }

    /// The packet as an ordered value.
    pub fn to_value(&self) -> Value {
        // Serializing a struct of strings and numbers cannot fail.
        json::to_value(self).unwrap_or_default()
    }
}

/// The `memory_utility_rank_prior_v0` packet of a ranking, as a value.
pub fn packet(ranking: &Ranking, partition: &Partition, profile: &Profile) -> Value {
    RankPriorPacket::new(ranking, partition, profile).to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking::prior::{Candidate, UtilityView, rank};
    use crate::utility::observation::Scope;
    use crate::wire::json::to_pretty_line;

    fn partition() -> Partition {
        Partition {
            scope: Scope {
                agent_id: "agent:a".into(),
                project_id: "project:p".into(),
                corpus_id: "corpus_c".into(),
                surface_id: "surface.s".into(),
            },
            retrieval_snapshot_ref: "retrieval:1".into(),
            policy_snapshot_ref: "policy:1".into(),
            reducer_version: "memory_utility_reducer_v0".into(),
        }
    }

    /// The typed packet prints as the `obj!` tree it replaced: integral floats stay
    /// floats (`1.0`, `2.0`), counts and ranks are integers, the scope is sorted.
    #[test]
    fn the_typed_packet_prints_floats_as_floats_and_counts_as_integers() {
        let profile = Profile::from_value(
            &crate::wire::json::parse(
                r#"{"profile_id": "profile:p", "semantic_floor": 0, "candidate_pool": 2,
                "modifier_bounds": [1, 2], "min_evidence_basis": "owner_correction",
                "min_support": 1}"#,
            )
            .expect("JSON"),
        )
        .expect("profile");
        let candidates = [
            Candidate::new("0123456789abcdef", 1.0).expect("candidate"),
            Candidate::new("fedcba9876543210", 0.5).expect("candidate"),
        ];
        let view = UtilityView::empty(partition());
        let ranking = rank(&candidates, &view, &partition(), &profile).expect("ranking");
        let value = packet(&ranking, &partition(), &profile);
        let text = to_pretty_line(&value);
        assert!(text.contains("\"semantic_floor\": 0.0,"), "{text}");
        assert!(
            text.contains("\"modifier_bounds\": [\n    1.0,\n    2.0\n  ],"),
            "{text}"
        );
        assert!(text.contains("\"modifier\": 1.0,"), "{text}");
        assert!(text.contains("\"final_rank\": 2,"), "{text}");
        assert!(text.contains("\"candidate_pool\": 2,"), "{text}");
        let scope: Vec<&str> = value
            .get("scope")
            .and_then(Value::as_object)
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(scope, ["agent_id", "corpus_id", "project_id", "surface_id"]);
    }
}

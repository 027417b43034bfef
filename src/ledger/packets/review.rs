//! `memory_utility_ledger_review_v0`: the open review proposals of a ledger (attenuation,
//! quarantine of conflicts, unresolved attribution), each with its subject, support and
//! strongest tier and the commands that resolve it.

use schemars::JsonSchema;
use serde::Serialize;

use crate::const_string;
use crate::utility::observation::UtilityLabel;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue};

use super::super::engine::review::{Proposal, ReviewQueue};
use super::base::BackendName;

const_string!(LedgerReviewVersion, "memory_utility_ledger_review_v0");

/// The most proposals one review packet lists (all are counted in `open_count`).
pub const MAX_REVIEW_PROPOSALS: usize = 1000;

/// The partition a proposal belongs to, in the shape `--partition FILE` (and the
/// `--input` of `utility-ledger subject`) takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReviewPartition {
    pub scope: ReviewScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

/// The partition's scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReviewScope {
    pub agent_id: String,
    pub project_id: String,
    pub corpus_id: String,
    pub surface_id: String,
}

/// The subject's accepted observations per utility label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReviewSupport {
    #[schemars(with = "u32")]
    pub helpful: usize,
    #[schemars(with = "u32")]
    pub harmful: usize,
    #[schemars(with = "u32")]
    pub neutral: usize,
    #[schemars(with = "u32")]
    pub unknown: usize,
}

/// One way to resolve a proposal: what it does and the command (placeholders in capitals).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Resolution {
    /// `owner_correction` (an owner's correction through the attribution runtime, which
    /// decides the subject at the strongest tier) or `retire` (the memory retired on the
    /// store through `operator-control --execute`).
    pub action: String,
    pub command: String,
}

/// One open proposal.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReviewProposal {
    pub partition: ReviewPartition,
    pub subject_id: String,
    /// `item` or `set`.
    pub attribution_level: String,
    pub memory_ref_digests: Vec<String>,
    /// `attenuation_proposed`, `conflict` or `unresolved_attribution`.
    pub review_state: String,
    pub proposed_action: String,
    /// True for a conflict (quarantine until it is decided).
    pub quarantine_proposed: bool,
    pub reason_codes: Vec<String>,
    pub effective_label: String,
    pub utility_estimate: f64,
    /// The strongest evidence tier among the subject's observations (the reducer's
    /// effective basis).
    pub strongest_tier: String,
    pub support: ReviewSupport,
    #[schemars(with = "u32")]
    pub observation_count: usize,
    pub last_observed_at: String,
    /// The commands that resolve it, the one the state calls for first.
    pub resolve: Vec<Resolution>,
}

/// `memory_utility_ledger_review_v0`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerReviewPacket {
    pub ok: AlwaysTrue,
    pub schema_version: LedgerReviewVersion,
    #[schemars(with = "BackendName")]
    pub ledger_backend: &'static str,
    /// The partitions read: the named one (0 when the ledger has none such), else all.
    #[schemars(with = "u32")]
    pub partition_count: usize,
    /// The open proposals in all.
    #[schemars(with = "u32")]
    pub open_count: usize,
    /// True when `proposals` holds fewer than `open_count` (the first
    /// [`MAX_REVIEW_PROPOSALS`] in (partition, subject) order).
    pub truncated: bool,
    pub proposals: Vec<ReviewProposal>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

fn resolutions(review_state: &str) -> Vec<Resolution> {
    let correct = Resolution {
        action: "owner_correction".to_owned(),
        command: "reward-memory utility-correct --input CORRECTION.json".to_owned(),
    };
    let retire = Resolution {
        action: "retire".to_owned(),
        command: "reward-memory operator-control --input CONTROL.json --action retire --control-ref CONTROL_REF --reasoning-summary TEXT --goal-id GOAL --agent-id AGENT --execute".to_owned(),
    };
    if review_state == "attenuation_proposed" {
        vec![retire, correct]
    } else {
        vec![correct, retire]
    }
}

fn proposal(p: &Proposal) -> ReviewProposal {
    let s = &p.state;
    let count = |label: UtilityLabel| {
        UtilityLabel::ALL
            .iter()
            .position(|l| *l == label)
            .and_then(|i| s.support.get(i).copied())
            .unwrap_or(0)
    };
    ReviewProposal {
        partition: ReviewPartition {
            scope: ReviewScope {
                agent_id: p.partition.agent_id.clone(),
                project_id: p.partition.project_id.clone(),
                corpus_id: p.partition.corpus_id.clone(),
                surface_id: p.partition.surface_id.clone(),
            },
            retrieval_snapshot_ref: p.partition.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: p.partition.policy_snapshot_ref.clone(),
        },
        subject_id: s.subject_id.clone(),
        attribution_level: s.level.as_str().to_owned(),
        memory_ref_digests: s.memory_ref_digests.clone(),
        review_state: s.review.state.to_owned(),
        proposed_action: s.review.proposed_action.to_owned(),
        quarantine_proposed: s.review.quarantine_proposed(),
        reason_codes: s
            .review
            .reason_codes
            .iter()
            .map(|c| (*c).to_owned())
            .collect(),
        effective_label: s.effective_label.as_str().to_owned(),
        utility_estimate: s.utility_estimate,
        strongest_tier: s.effective_basis.as_str().to_owned(),
        support: ReviewSupport {
            helpful: count(UtilityLabel::Helpful),
            harmful: count(UtilityLabel::Harmful),
            neutral: count(UtilityLabel::Neutral),
            unknown: count(UtilityLabel::Unknown),
        },
        observation_count: s.observation_count,
        last_observed_at: s.last_observed_at.clone(),
        resolve: resolutions(s.review.state),
    }
}

impl LedgerReviewPacket {
    /// The queue as printed.
    pub fn new(backend: &'static str, queue: &ReviewQueue) -> LedgerReviewPacket {
        LedgerReviewPacket {
            ok: AlwaysTrue,
            schema_version: LedgerReviewVersion,
            ledger_backend: backend,
            partition_count: queue.partitions_read,
            open_count: queue.open_count,
            truncated: queue.proposals.len() < queue.open_count,
            proposals: queue.proposals.iter().map(proposal).collect(),
            read_only: AlwaysTrue,
            grants_new_action_authority: AlwaysFalse,
            provider_write_performed: AlwaysFalse,
            external_writes_performed: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        }
    }
}

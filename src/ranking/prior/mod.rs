//! The bounded rank prior (attribution RFC §6 end, Stage 3): re-orders semantically
//! selected recall candidates by `rank_score = relevance × modifier`, where the modifier is
//! a bounded, monotone function of one memory's item-level utility.
//!
//! Owns, one file each: the candidates and the partition ([`candidate`]), the profile
//! `memory_utility_rank_prior_profile_v0` and its digest ([`profile`]), the per-subject
//! utility view built from a `memory_utility_projection_v0` packet or from any other
//! source of reduced subject state such as a ledger ([`view`]), the modifier function
//! `memory_utility_rank_prior_modifier_v0` with its reason codes ([`mod@modifier`]), the
//! two-stage ranking ([`mod@rank`]), the evaluation gate a verdict opens ([`verdict`]), the
//! `memory_utility_rank_prior_v0` packet ([`mod@packet`]) and the `rank-prior` request with
//! its effect receipt ([`request`]). The inputs, the packet and the receipt are typed
//! structs that are also their JSON Schemas. Pure: no I/O, no clock, no hash-map order;
//! every error is a [`RankPriorError`].
//!
//! It must not: rescue a candidate the semantic stage dropped, let set-level credit move an
//! item, remove a memory for negative utility (it attenuates and proposes review), apply
//! utility of another scope or snapshot pair, or override freshness, lifecycle, permission
//! and authority filters (candidates arrive already filtered; the prior can only re-order
//! them). The design is written down in `docs/rank-prior.md`.

pub mod candidate;
mod error;
pub mod modifier;
pub mod packet;
pub mod profile;
pub mod rank;
pub mod request;
pub mod verdict;
pub mod view;

pub use candidate::{Candidate, MAX_CANDIDATES, MAX_RELEVANCE, Partition, is_memory_digest};
pub use error::RankPriorError;
pub use modifier::{Modifier, Reason, modifier, support_weight, tier_weight};
pub use packet::{RANK_PRIOR_SCHEMA_VERSION, RankPriorPacket, packet};
pub use profile::{
    MAX_MIN_SUPPORT, MAX_UPPER_BOUND, MODIFIER_VERSION, PROFILE_SCHEMA_VERSION, Profile,
};
pub use rank::{Ranked, Ranking, check_partition, modifier_table, rank};
pub use verdict::{
    EVALUATION_MISSING, EVALUATION_SCHEMA_VERSION, GateContext, LedgerState, Verdict,
};
pub use view::{SubjectUtility, UtilityView, subject_from_packet};

#[cfg(test)]
mod tests;

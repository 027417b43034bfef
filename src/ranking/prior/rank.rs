//! The two-stage ranking: the semantic stage (floor, then pool by relevance) and the
//! prior's re-ordering of the pool by `relevance × modifier`, plus the modifier table a
//! provider effect stores. Pure.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use super::candidate::{Candidate, MAX_CANDIDATES, Partition, check_relevance, is_memory_digest};
use super::error::{RankPriorError, field};
use super::modifier::{Modifier, modifier};
use super::profile::Profile;
use super::view::UtilityView;

/// One candidate inside the semantic stage, after the prior.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub memory_ref_digest: String,
    pub relevance: f64,
    /// 1-based position in the semantic order (relevance desc, then digest).
    pub semantic_rank: usize,
    pub modifier: Modifier,
    /// `relevance × modifier`.
    pub rank_score: f64,
    /// 1-based position after the prior (rank score desc, relevance desc, digest).
    pub final_rank: usize,
}

/// A finished ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    pub input_count: usize,
    /// Candidates dropped because their relevance is below the semantic floor.
    pub below_floor_count: usize,
    /// Candidates above the floor but outside the pool.
    pub outside_pool_count: usize,
    /// The pool, in final order.
    pub ranked: Vec<Ranked>,
}

impl Ranking {
    /// True when the prior changed the order of the pool.
    pub fn order_changed(&self) -> bool {
        self.ranked.iter().any(|r| r.final_rank != r.semantic_rank)
    }

    /// The pool's digests in final order.
    pub fn order(&self) -> Vec<&str> {
        self.ranked
            .iter()
            .map(|r| r.memory_ref_digest.as_str())
            .collect()
    }
}

/// The semantic order: relevance descending, then digest ascending.
fn semantic_cmp(a: &Candidate, b: &Candidate) -> Ordering {
    b.relevance
        .total_cmp(&a.relevance)
        .then_with(|| a.memory_ref_digest.cmp(&b.memory_ref_digest))
}

/// Checks a utility view against the partition of the ranking: utility of another scope,
/// snapshot pair or reducer version never applies.
pub fn check_partition(view: &UtilityView, partition: &Partition) -> Result<(), RankPriorError> {
    match view.partition().mismatch(partition) {
        Some(what) => Err(RankPriorError::PartitionMismatch { what }),
        None => Ok(()),
    }
}

/// Ranks `candidates` in `partition` with `view`'s utility under `profile`.
///
/// Stage 1 (semantic, relevance alone): drop candidates below `semantic_floor`, sort by
/// relevance (ties by digest), keep the first `candidate_pool`. Stage 2 (the prior):
/// `rank_score = relevance × modifier`; sort the pool by rank score, then relevance, then
/// digest. Errors: a view of another partition, duplicate digests, too many candidates.
pub fn rank(
    candidates: &[Candidate],
    view: &UtilityView,
    partition: &Partition,
    profile: &Profile,
) -> Result<Ranking, RankPriorError> {
    check_partition(view, partition)?;
    if candidates.len() > MAX_CANDIDATES {
        return Err(field(format!(
            "at most {MAX_CANDIDATES} candidates can be ranked at once"
        )));
    }
    let mut seen = BTreeSet::new();
    for c in candidates {
        check_relevance(c.relevance)?;
        if !is_memory_digest(&c.memory_ref_digest) {
            return Err(field(
                "memory_ref_digest must be 16 lowercase hex characters or sha256: and 64",
            ));
        }
        if !seen.insert(c.memory_ref_digest.as_str()) {
            return Err(field(format!(
                "candidates must not list memory_ref_digest {} twice",
                c.memory_ref_digest
            )));
        }
    }
    let mut stage: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.relevance >= profile.semantic_floor)
        .collect();
    let below_floor_count = candidates.len() - stage.len();
    stage.sort_by(|a, b| semantic_cmp(a, b));
    let outside_pool_count = stage.len().saturating_sub(profile.candidate_pool);
    stage.truncate(profile.candidate_pool);
    let mut ranked: Vec<Ranked> = stage
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let m = modifier(view, &c.memory_ref_digest, profile);
            Ranked {
                memory_ref_digest: c.memory_ref_digest.clone(),
                relevance: c.relevance,
                semantic_rank: i + 1,
                rank_score: c.relevance * m.value,
                modifier: m,
                final_rank: 0,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.rank_score
            .total_cmp(&a.rank_score)
            .then_with(|| b.relevance.total_cmp(&a.relevance))
            .then_with(|| a.memory_ref_digest.cmp(&b.memory_ref_digest))
    });
    for (i, r) in ranked.iter_mut().enumerate() {
        r.final_rank = i + 1;
    }
    Ok(Ranking {
        input_count: candidates.len(),
        below_floor_count,
        outside_pool_count,
        ranked,
    })
}

/// The modifier of every item subject of the view whose modifier is not exactly 1.0,
/// sorted by digest: the table a provider effect stores (RFC §6, §8.1).
pub fn modifier_table(view: &UtilityView, profile: &Profile) -> Vec<(String, Modifier)> {
    view.item_digests()
        .map(|d| (d.to_owned(), modifier(view, d, profile)))
        .filter(|(_, m)| m.value != 1.0)
        .collect()
}

//! The rank prior inside `recall --rank-prior`: the setup the shell reads and checks
//! before any provider call ([`PriorSetup`]: profile, partition, verdict and where the
//! utility comes from), how many candidates the recall fetches for it
//! ([`PriorSetup::fetch_count`]: the profile's semantic pool), whether it applies to a
//! finished recall, the re-ordering of the recall's items, results and opaque refs by the
//! prior's ranking, and the cut to `--limit` after it ([`cut_to_limit`]).
//!
//! Ranking influence is earned: without a sealed, qualified verdict bound to this profile
//! and partition (`ranking::prior::verdict`) the prior stays off and the recall is
//! printed unranked with the reason code (fail-open).
//! Pure: the ledger's utility ([`PriorUtility::Ledger`]) is read by the shell for the
//! digests [`prior_candidates`] returns, and handed to [`apply_prior`] as a view. Shadow
//! mode (issue 22): when only the gate keeps the prior off and the traffic log is on,
//! [`shadow_candidates`] and [`shadow_order`] compute the prior's ranking for the log,
//! without changing the recall.

use crate::obj;
use crate::ranking::prior::verdict::refusal;
use crate::ranking::prior::{
    self as rank_prior, Candidate, GateContext, LedgerState, Partition, Profile, RankPriorError,
    UtilityView, Verdict,
};
use crate::wire::digest::short16;
use crate::wire::json::Value;
use crate::wire::pyfmt::pystr;

use super::command::RecallCommandError;
use super::execute::RecallSession;

/// Why the prior stayed off when the ledger could not be read after the recall (it was
/// readable before the provider call): recall fails open.
pub const LEDGER_UNAVAILABLE: &str = "utility_ledger_unavailable";

/// Where the prior's utility comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PriorUtility {
    /// A projection packet (`--projection`), already checked against the partition.
    Projection(Box<UtilityView>),
    /// The utility ledger (`--ledger`), read by the shell for the results' digests once
    /// they are known.
    Ledger,
}

/// Everything `--rank-prior` needs, read and checked before any provider call.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorSetup {
    pub profile: Profile,
    pub partition: Partition,
    pub utility: PriorUtility,
    /// The `--evaluation` file's verdict.
    pub verdict: Option<Verdict>,
    /// What the gate checks the verdicts against, beyond the profile and partition.
    pub gate: GateInputs,
}

/// The ledger's side of the evaluation gate and the shell's clock reading, filled by the
/// shell before the provider call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateInputs {
    /// The newest verdict recorded in the ledger for the profile and partition.
    pub recorded: Option<Verdict>,
    /// The ledger's identity and high-water mark, when the utility comes from a ledger.
    pub ledger: Option<(Option<String>, u64)>,
    /// Microseconds since 0001-01-01 (the shell's clock).
    pub now_micros: i128,
    /// `--allow-simulated-evaluation`.
    pub allow_simulated: bool,
}

impl PriorSetup {
    /// `None` when a verdict lets the profile apply to this partition, else the reason
    /// code that keeps the prior off. The newest recorded verdict is used when no
    /// `--evaluation` file is given; a file's verdict is refused when a recorded `hold`
    /// for the same profile and partition is newer than it.
    pub fn gate_refusal(&self) -> Option<&'static str> {
        let identity = self.partition.reducer_identity();
        let ctx = GateContext {
            profile: &self.profile,
            partition_identity: &identity,
            ledger: self.gate.ledger.as_ref().map(|(id, high)| LedgerState {
                ledger_id: id.as_deref(),
                high_water_seq: *high,
            }),
            now_micros: self.gate.now_micros,
            allow_simulated: self.gate.allow_simulated,
        };
        match (&self.verdict, &self.gate.recorded) {
            (None, None) => Some(rank_prior::EVALUATION_MISSING),
            (None, Some(recorded)) => recorded.blocks(&ctx),
            (Some(file), Some(recorded))
                if recorded.defect.is_none()
                    && !recorded.qualified
                    && recorded.verdict_digest != file.verdict_digest
                    && !file.newer_than(recorded) =>
            {
                Some(refusal::SUPERSEDED)
            }
            (Some(file), _) => file.blocks(&ctx),
        }
    }
}

/// The prior's input documents, as read by the shell.
#[derive(Debug, Clone, Copy)]
pub struct PriorDocuments<'a> {
    pub profile: &'a Value,
    pub partition: &'a Value,
    /// The projection packet; `None` when the utility comes from the ledger.
    pub projection: Option<&'a Value>,
    pub evaluation: Option<&'a Value>,
}

impl PriorSetup {
    /// Parses and checks the prior's documents: the profile, the partition, the
    /// projection against the partition (or the ledger as the source) and the verdict.
    pub fn parse(documents: PriorDocuments<'_>) -> Result<PriorSetup, RankPriorError> {
        let profile = Profile::from_value(documents.profile)?;
        let partition = Partition::from_value(documents.partition)?;
        let utility = match documents.projection {
            Some(projection) => {
                let view = UtilityView::from_projection(projection)?;
                rank_prior::check_partition(&view, &partition)?;
                PriorUtility::Projection(Box::new(view))
            }
            None => PriorUtility::Ledger,
        };
        let verdict = documents.evaluation.map(Verdict::from_value);
        Ok(PriorSetup {
            profile,
            partition,
            utility,
            verdict,
            gate: GateInputs::default(),
        })
    }

    /// How many candidates a recall of `limit` results fetches for the prior: the
    /// profile's `candidate_pool`, never fewer than `limit` (at most
    /// [`rank_prior::MAX_CANDIDATES`], the profile's own bound). The prior ranks them (or,
    /// when it stays off, the shadow does) and [`cut_to_limit`] keeps `limit`.
    pub fn fetch_count(&self, limit: usize) -> usize {
        self.profile
            .candidate_pool
            .max(limit)
            .min(rank_prior::MAX_CANDIDATES)
    }

    /// The partition must name the recalled surface and one of the recallable corpora.
    pub fn check_target(
        &self,
        surface_id: &str,
        corpus_ids: &[String],
    ) -> Result<(), RecallCommandError> {
        if self.partition.scope.surface_id != surface_id {
            return Err(RecallCommandError::Request(
                "partition scope surface_id must be the recalled surface".to_owned(),
            ));
        }
        if !corpus_ids
            .iter()
            .any(|c| *c == self.partition.scope.corpus_id)
        {
            return Err(RecallCommandError::Request(
                "partition scope corpus_id must be a corpus this recall reads".to_owned(),
            ));
        }
        Ok(())
    }
}

/// The prior's gate on a finished recall: the candidates to rank (one per item, with its
/// relevance), or the reason code that keeps the prior off.
pub fn prior_candidates(
    session: &RecallSession,
    prior: &PriorSetup,
) -> Result<Vec<Candidate>, &'static str> {
    check_recall(session, prior)?;
    // Ranking influence is earned: without a sealed, consistent, qualified verdict for
    // exactly this profile and partition the prior stays off (fail-open: the recall
    // itself is still printed).
    if let Some(reason) = prior.gate_refusal() {
        return Err(reason);
    }
    candidates_of(session)
}

/// The candidates of the shadow ranking (shadow mode, issue 22): those of
/// [`prior_candidates`] when the prior stayed off for want of a qualified verdict; the
/// other reasons keep the shadow off too.
pub fn shadow_candidates(
    session: &RecallSession,
    prior: &PriorSetup,
) -> Result<Vec<Candidate>, &'static str> {
    check_recall(session, prior)?;
    candidates_of(session)
}

/// True for the reason codes of the evaluation gate (no verdict, or one the gate
/// refused: another profile's, a `hold`, an unbound, edited, stale or simulated one): the
/// prior stays off only because ranking influence is not earned yet.
pub fn is_gate_reason(reason: &str) -> bool {
    reason == rank_prior::EVALUATION_MISSING || reason.starts_with("ranking_evaluation_")
}

/// The prior's final order of the semantic stage (digests) with utility `view`: the
/// shadow ranking, computed and logged, never shown.
pub fn shadow_order(
    candidates: &[Candidate],
    prior: &PriorSetup,
    view: &UtilityView,
) -> Option<Vec<String>> {
    let ranking = rank_prior::rank(candidates, view, &prior.partition, &prior.profile).ok()?;
    Some(ranking.order().into_iter().map(str::to_owned).collect())
}

/// The profile's semantic stage (floor, then pool) of `candidates`, in semantic order:
/// the pool `--explore` randomizes when a profile is given.
pub fn semantic_pool(candidates: &[Candidate], prior: &PriorSetup) -> Option<Vec<String>> {
    shadow_order(
        candidates,
        prior,
        &UtilityView::empty(prior.partition.clone()),
    )
}

fn check_recall(session: &RecallSession, prior: &PriorSetup) -> Result<(), &'static str> {
    let packet = &session.packet;
    if packet.get("status").and_then(Value::as_str) != Some("completed") {
        return Err("recall_not_completed");
    }
    if pystr(packet.get("corpus_id")) != prior.partition.scope.corpus_id {
        return Err("partition_corpus_not_recalled");
    }
    Ok(())
}

fn candidates_of(session: &RecallSession) -> Result<Vec<Candidate>, &'static str> {
    session
        .items
        .iter()
        .map(|item| {
            let relevance = item.relevance.ok_or("relevance_scores_unavailable")?;
            Candidate::new(&short16(&item.memory_ref), relevance)
                .map_err(|_| "relevance_scores_unusable")
        })
        .collect()
}

/// Shows the session's items, results and opaque refs in `order` (indices into the
/// current items; a permutation): `--explore`'s random order.
pub fn show_in_order(session: &mut RecallSession, opaque: &mut Vec<String>, order: &[usize]) {
    let results: Vec<Value> = session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let pick = |i: usize, v: &[Value]| v.get(i).cloned().unwrap_or_default();
    let items = order
        .iter()
        .filter_map(|&i| session.items.get(i).cloned())
        .collect();
    let kept: Vec<Value> = order.iter().map(|&i| pick(i, &results)).collect();
    *opaque = order
        .iter()
        .map(|&i| opaque.get(i).cloned().unwrap_or_default())
        .collect();
    session.items = items;
    let packet = std::mem::take(&mut session.packet);
    session.packet = packet.merged(&obj! {"results" => Value::Array(kept.into())});
}

/// Keeps the first `limit` of the session's items, results and opaque refs (the order is
/// final: after the prior and `--explore`) and returns how many it cut. A recall that
/// fetched the prior's pool shows only `--limit` of it; a session of at most `limit`
/// items is left untouched.
pub fn cut_to_limit(session: &mut RecallSession, opaque: &mut Vec<String>, limit: usize) -> usize {
    let cut = session.items.len().saturating_sub(limit);
    if cut == 0 {
        return 0;
    }
    session.items.truncate(limit);
    opaque.truncate(limit);
    let mut results: Vec<Value> = session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    results.truncate(limit);
    let packet = std::mem::take(&mut session.packet);
    session.packet = packet.merged(&obj! {
        "result_count" => session.items.len(),
        "results" => Value::Array(results.into()),
    });
    cut
}

/// Applies the prior to a finished recall with the utility `view`: reorders (and filters
/// to the pool) the session's items, results and opaque refs and returns the
/// `memory_utility_rank_prior_v0` packet, or the reason code when it stays off.
pub fn apply_prior(
    session: &mut RecallSession,
    opaque: &mut Vec<String>,
    prior: &PriorSetup,
    candidates: &[Candidate],
    view: &UtilityView,
) -> Result<Value, &'static str> {
    let ranking = rank_prior::rank(candidates, view, &prior.partition, &prior.profile)
        .map_err(|_| "relevance_scores_unusable")?;
    let results: Vec<Value> = session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let mut items = Vec::new();
    let mut kept_results = Vec::new();
    let mut kept_opaque = Vec::new();
    for ranked in &ranking.ranked {
        if let Some(i) = candidates
            .iter()
            .position(|c| c.memory_ref_digest == ranked.memory_ref_digest)
        {
            items.push(session.items[i].clone());
            kept_results.push(results.get(i).cloned().unwrap_or_default());
            kept_opaque.push(opaque.get(i).cloned().unwrap_or_default());
        }
    }
    let found = !items.is_empty();
    session.items = items;
    *opaque = kept_opaque;
    let count = kept_results.len();
    let packet = std::mem::take(&mut session.packet);
    session.packet = packet.merged(&obj! {
        "result_count" => count,
        "results" => Value::Array(kept_results.into()),
        "result_readback_verified" => found,
    });
    if !found {
        session.packet = std::mem::take(&mut session.packet).merged(&obj! {
            "status" => "empty",
            "reason_code" => "rank_prior_semantic_stage_empty",
        });
    }
    Ok(rank_prior::packet(
        &ranking,
        &prior.partition,
        &prior.profile,
    ))
}

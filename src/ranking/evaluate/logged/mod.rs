//! `rank-evaluate --ledger`: the held-out evaluation on the deployment's own traffic
//! (issue 22). Builds training and held-out episodes from the ledger's traffic log with a
//! time split ([`episodes`]), rebuilds the utility the arms may know from the deliveries
//! up to the split (through the evaluation's ledger seam, [`super::ledger`]), estimates
//! every arm's value off-policy from the verified outcomes of what was actually applied
//! ([`estimate`]) and gates the bounded prior on it ([`packet`]). No oracle labels: the
//! only reward is the outcome `utility-attribute` verified for the receipt.
//!
//! The arms are the standard ones ([`super::arms::standard_arms`]), fed from the log:
//! semantic relevance, hotness from the training recalls' accesses, the bounded prior
//! with the training-time utility (with and without evaluator inference, and under
//! `memory_utility_reducer_v1`), MemRL's Q from the training rewards. The partitions are
//! read under the reducer `--partition` names (v0 by default): the verdict names them by
//! their `mur_` identities under it and gates that reducer's bounded-utility arm, so a
//! v1 partition's verdict binds `recall --rank-prior` for that v1 partition.
//! `--export-episodes` writes what was built ([`episodes::write_jsonl`]) and
//! `rank-evaluate --input` of that file gives the same figures. Reads the ledger
//! through [`LedgerBackend`]; otherwise pure.

pub mod episodes;
pub mod estimate;
pub mod packet;

use crate::ledger::traffic::{self as log, Selection};
use crate::ledger::{LedgerBackend, LedgerError, PartitionKey};
use crate::ranking::prior::verdict::{VERDICT_DIGEST_KEY, verdict_digest};
use crate::recall::traffic::TrafficPartition;
use crate::utility::observation::Scope;
use crate::utility::reducer::context::reducer_identity;
use crate::wire::json::Value;

use super::error::RankEvaluateError;
use super::ledger::LedgerOpener;
use super::profile::EvaluationProfile;
use episodes::{LoggedData, LoggedSplit};
use packet::{LoggedSource, LoggedSourceKind, SourceLedger};

fn ledger_error(e: LedgerError) -> RankEvaluateError {
    RankEvaluateError::Ledger(e.to_string())
}

/// What was read from a ledger, besides the data.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRead {
    pub data: LoggedData,
    pub backend: &'static str,
    pub high_water_seq: i64,
    pub traffic_high_water_seq: i64,
    pub split_seq: i64,
    /// The evaluated partitions, sorted.
    pub partitions: Vec<TrafficPartition>,
}

/// The `mur_` identity of a traffic partition read under `reducer_version`.
pub fn partition_identity(partition: &TrafficPartition, reducer_version: &str) -> String {
    let s = &partition.scope;
    let scope = Scope {
        agent_id: s.agent_id.as_str().into(),
        project_id: s.project_id.as_str().into(),
        corpus_id: s.corpus_id.as_str().into(),
        surface_id: s.surface_id.as_str().into(),
    };
    reducer_identity(
        &scope,
        &partition.retrieval_snapshot_ref,
        &partition.policy_snapshot_ref,
        reducer_version,
    )
}

/// Reads the traffic log of `selection` and the training deliveries of its partitions
/// (sequence at most the split) from `backend`; the episodes are marked as evaluated under
/// `reducer_version`.
pub fn read_ledger(
    backend: &mut dyn LedgerBackend,
    selection: &Selection,
    reducer_version: &str,
) -> Result<LedgerRead, RankEvaluateError> {
    // Events are parsed as they are read: the log's text is never held whole.
    let mut builder = episodes::Builder::default();
    let mut failed: Option<RankEvaluateError> = None;
    let read = log::read(backend, selection, &mut |row| match builder.push(&row) {
        Ok(()) => Ok(()),
        Err(e) => {
            failed = Some(e);
            Err(LedgerError::Request(
                "a traffic event is malformed".to_owned(),
            ))
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let snapshot = read.map_err(ledger_error)?;
    let built = builder.finish(snapshot.delivery_high_water);
    let keys: Vec<PartitionKey> = match selection {
        Selection::All => snapshot.partitions.clone(),
        Selection::Only(keys) => {
            let mut keys = keys.clone();
            keys.sort();
            keys.dedup();
            keys
        }
    };
    let mut deliveries = Vec::new();
    backend.begin_read().map_err(ledger_error)?;
    let read = (|| -> Result<(), RankEvaluateError> {
        for key in &keys {
            let Some(row) = backend.find_partition(key).map_err(ledger_error)? else {
                continue;
            };
            let mut damaged = false;
            backend
                .partition_deliveries(row.partition_id, &mut |d| {
                    if d.seq <= built.split_seq {
                        match d.observation(key) {
                            Some(o) => deliveries.push((d.seq, o)),
                            None => damaged = true,
                        }
                    }
                    Ok(())
                })
                .map_err(ledger_error)?;
            if damaged {
                return Err(RankEvaluateError::Ledger(
                    "a stored delivery cannot be read back: run utility-ledger verify".to_owned(),
                ));
            }
        }
        Ok(())
    })();
    let ended = backend.end_read();
    read?;
    ended.map_err(ledger_error)?;
    deliveries.sort_by_key(|(seq, _)| *seq);
    Ok(LedgerRead {
        data: LoggedData {
            episodes: built.episodes,
            deliveries: deliveries.into_iter().map(|(_, o)| o).collect(),
        }
        .under_reducer(reducer_version),
        backend: snapshot.backend,
        high_water_seq: snapshot.delivery_high_water,
        traffic_high_water_seq: snapshot.traffic_high_water,
        split_seq: built.split_seq,
        partitions: keys.iter().map(TrafficPartition::of_key).collect(),
    })
}

/// Where the logged data came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    Ledger {
        backend: &'static str,
        ledger_id: Option<String>,
        high_water_seq: i64,
        traffic_high_water_seq: i64,
        split_seq: i64,
        partitions: Vec<TrafficPartition>,
    },
    EpisodesFile {
        input_sha256: String,
        observation_lines: usize,
    },
}

/// Evaluates logged data and returns the verdict packet.
pub fn evaluate(
    data: &LoggedData,
    profile: &EvaluationProfile,
    origin: &Origin,
    opener: &dyn LedgerOpener,
) -> Result<Value, RankEvaluateError> {
    let reducer_version = data.reducer_version()?;
    let estimates = estimate::estimate(data, profile, profile.seed, opener)?;
    let u64_of = |v: i64| u64::try_from(v).unwrap_or(0);
    let held: Vec<&episodes::LoggedEpisode> = data
        .episodes
        .iter()
        .filter(|e| e.split == LoggedSplit::HeldOut)
        .collect();
    let (kind, input_sha256, observation_lines, ledger, partitions) = match origin {
        Origin::Ledger {
            backend,
            ledger_id,
            high_water_seq,
            traffic_high_water_seq,
            split_seq,
            partitions,
        } => (
            LoggedSourceKind::Ledger,
            None,
            None,
            Some(SourceLedger {
                backend,
                ledger_id: ledger_id.clone(),
                high_water_seq: u64_of(*high_water_seq),
                split_seq: u64_of(*split_seq),
                traffic_high_water_seq: u64_of(*traffic_high_water_seq),
            }),
            partitions.clone(),
        ),
        Origin::EpisodesFile {
            input_sha256,
            observation_lines,
        } => {
            let mut partitions: Vec<TrafficPartition> =
                data.episodes.iter().map(|e| e.partition.clone()).collect();
            partitions.sort();
            partitions.dedup();
            (
                LoggedSourceKind::EpisodesFile,
                Some(input_sha256.clone()),
                Some(*observation_lines as u64),
                None,
                partitions,
            )
        }
    };
    let mut partitions: Vec<String> = partitions
        .iter()
        .map(|p| partition_identity(p, reducer_version))
        .collect();
    partitions.sort();
    partitions.dedup();
    let source = LoggedSource {
        kind,
        seed: profile.seed,
        input_sha256,
        observation_lines,
        ledger,
        partitions,
        observed_until: episodes::latest_utc(held.iter().map(|e| e.observed_at.clone())),
        training_episodes: estimates.counts.training_recalls as u64,
        held_out_episodes: estimates.counts.held_out_recalls as u64,
    };
    let typed = packet::packet(&estimates, profile, source);
    let mut value = crate::wire::json::to_value(&typed)
        .map_err(|_| RankEvaluateError::Internal("the verdict packet does not serialize"))?;
    if let Value::Object(map) = &mut value {
        let seal = verdict_digest(map);
        map.insert(VERDICT_DIGEST_KEY, seal);
    }
    Ok(value)
}

#[cfg(test)]
mod tests;

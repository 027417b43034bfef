//! `verify`: the storage's integrity check, then every observation aggregate, subject,
//! digest-index row, partition counter and batch recomputed from the raw deliveries and
//! compared with what is stored; the first difference is reported.

use std::collections::BTreeMap;

use crate::utility::observation::{EvidenceBasis, UtilityLabel, validate_observation};
use crate::utility::reducer;

use super::super::backend::{LedgerBackend, with_read};
use super::super::error::LedgerResult;
use super::super::packets::VerifyReport;
use super::super::rows::{
    Counters, DeliveryRow, ObservationRow, PartitionRow, SubjectRow, order_prefix,
};
use super::state::{reduce_stored_subject, subject_counters};

/// Runs the storage's integrity check, then recomputes every aggregate, subject and
/// counter from the raw deliveries and compares.
pub fn verify(backend: &mut dyn LedgerBackend) -> LedgerResult<VerifyReport> {
    with_read(backend, |backend| {
        if let Some(problem) = backend.integrity_problem()? {
            return Ok(VerifyReport {
                backend: backend.backend_name(),
                damage: Some(problem),
                ..VerifyReport::default()
            });
        }
        verify_in_snapshot(backend)
    })
}

fn verify_in_snapshot(backend: &mut dyn LedgerBackend) -> LedgerResult<VerifyReport> {
    let mut report = VerifyReport {
        backend: backend.backend_name(),
        high_water: backend.high_water()?,
        ..VerifyReport::default()
    };
    let partitions: BTreeMap<i64, PartitionRow> = backend
        .partitions()?
        .into_iter()
        .map(|p| (p.partition_id, p))
        .collect();
    report.partitions = partitions.len() as i64;
    let mut expected: BTreeMap<i64, Counters> = BTreeMap::new();
    let mut diff: Option<String> = None;

    // Phase 1: every observation aggregate from its deliveries.
    backend.verify_observations(&mut |group, stored| {
        if diff.is_some() {
            return Ok(());
        }
        report.deliveries += group.len() as i64;
        if stored.is_some() {
            report.observations += 1;
        }
        diff = check_observation(&partitions, &group, stored.as_ref(), &mut expected);
        Ok(())
    })?;
    // Phase 2: every subject from its accepted observations.
    let mut latest: BTreeMap<i64, String> = BTreeMap::new();
    let mut digest_rows: Vec<(i64, String, String)> = Vec::new();
    if diff.is_none() {
        backend.verify_subjects(&mut |key, rows, stored| {
            if diff.is_some() {
                return Ok(());
            }
            if stored.is_some() {
                report.subjects += 1;
            }
            let Some(partition) = partitions.get(&key.0) else {
                diff = Some(format!("subject {} has no partition", key.1));
                return Ok(());
            };
            let recomputed = match reduce_stored_subject(&key, &partition.key, &rows) {
                Ok(r) => r,
                Err(e) => {
                    diff = Some(e.to_string());
                    return Ok(());
                }
            };
            match (&recomputed, &stored) {
                (None, Some(_)) => {
                    diff = Some(format!("subject {} has no accepted observation", key.1));
                }
                (Some(_), None) => {
                    diff = Some(format!("subject {} is missing", key.1));
                }
                (Some(want), Some(have)) if want != have => {
                    diff = Some(format!(
                        "subject {} differs from its recomputed state{}",
                        key.1,
                        subject_field_difference(want, have)
                    ));
                }
                _ => {}
            }
            if let Some(row) = &recomputed {
                expected
                    .entry(key.0)
                    .or_default()
                    .add(&subject_counters(row, 1));
                let slot = latest.entry(key.0).or_default();
                if row.last_key > *slot {
                    *slot = row.last_key.clone();
                }
                if row.attribution_level != "item"
                    && let Some(first) = rows.first()
                {
                    for d in first.memory_ref_digests.split(',') {
                        digest_rows.push((key.0, key.1.clone(), d.to_owned()));
                    }
                }
            }
            Ok(())
        })?;
    }
    if diff.is_none() {
        digest_rows.sort();
        let stored_digests = backend.all_subject_digests()?;
        if stored_digests != digest_rows {
            diff = Some("the digest index differs from the subjects' digests".into());
        }
    }
    if diff.is_none() {
        for (id, p) in &partitions {
            let want = expected.get(id).copied().unwrap_or_default();
            if want != p.counters {
                diff = Some(format!(
                    "partition {id} counters differ: stored {:?}, recomputed {:?}",
                    p.counters.to_array(),
                    want.to_array()
                ));
                break;
            }
            if p.latest_key != latest.get(id).cloned().unwrap_or_default() {
                diff = Some(format!("partition {id} latest observation differs"));
                break;
            }
        }
    }
    if diff.is_none()
        && let Some(extra) = expected.keys().find(|id| !partitions.contains_key(id))
    {
        diff = Some(format!(
            "deliveries name partition {extra}, which does not exist"
        ));
    }
    let batches = backend.batches()?;
    report.batches = batches.len() as i64;
    if diff.is_none() {
        let stored: i64 = batches
            .iter()
            .map(|b| b.appended + b.duplicate + b.conflicting)
            .sum();
        let max_seq = batches.iter().map(|b| b.last_seq).max().unwrap_or(0);
        if stored != report.deliveries {
            diff = Some(format!(
                "batches account for {stored} deliveries, the ledger holds {}",
                report.deliveries
            ));
        } else if max_seq != report.high_water {
            diff = Some(format!(
                "the last batch ends at sequence {max_seq}, the ledger's high water is {}",
                report.high_water
            ));
        }
    }
    report.first_difference = diff;
    Ok(report)
}

fn subject_field_difference(want: &SubjectRow, have: &SubjectRow) -> String {
    let fields = [
        (
            "attribution_level",
            want.attribution_level != have.attribution_level,
        ),
        ("review_state", want.review_state != have.review_state),
        (
            "observation_count",
            want.observation_count != have.observation_count,
        ),
        ("last_key", want.last_key != have.last_key),
        ("state", want.state != have.state),
        ("history", want.history_seqs != have.history_seqs),
    ];
    fields
        .iter()
        .find(|(_, differs)| *differs)
        .map(|(name, _)| format!(" ({name})"))
        .unwrap_or_default()
}

/// Recomputes one id's aggregate from its deliveries (sequence order) and compares.
fn check_observation(
    partitions: &BTreeMap<i64, PartitionRow>,
    group: &[DeliveryRow],
    stored: Option<&ObservationRow>,
    expected: &mut BTreeMap<i64, Counters>,
) -> Option<String> {
    let Some(first) = group.first() else {
        return stored.map(|s| format!("observation {} has no delivery", s.observation_id));
    };
    let id = &first.observation_id;
    let Some(stored) = stored else {
        return Some(format!("observation {id} has deliveries but no aggregate"));
    };
    let mut fingerprints: Vec<String> = Vec::new();
    let mut rep: Option<(String, i64)> = None;
    let mut subject = String::new();
    let mut inputs: Option<(UtilityLabel, EvidenceBasis, f64)> = None;
    for row in group {
        let Some(partition) = partitions.get(&row.partition_id) else {
            return Some(format!("delivery {} names an unknown partition", row.seq));
        };
        let Some(observation) = row.observation(&partition.key) else {
            return Some(format!("delivery {} is not a valid observation", row.seq));
        };
        match validate_observation(&observation.to_value()) {
            Ok(again) if again == observation => {}
            _ => return Some(format!("delivery {} is not a valid observation", row.seq)),
        }
        if row.partition_id != first.partition_id {
            return Some(format!("observation {id} spans two partitions"));
        }
        let fp = observation.fingerprint();
        if fingerprints.is_empty() || !fingerprints.contains(&fp) {
            fingerprints.push(fp.clone());
        }
        if fp == fingerprints[0] {
            inputs.get_or_insert((
                observation.utility_label,
                observation.evidence_basis,
                observation.confidence,
            ));
            let order = order_prefix(observation.created_instant, &observation.created_at);
            if rep.as_ref().is_none_or(|(o, _)| order < *o) {
                rep = Some((order, row.seq));
            }
        }
        subject = reducer::subject_id(&observation);
    }
    let deliveries = group.len() as i64;
    let versions = fingerprints.len() as i64;
    let delta = expected.entry(first.partition_id).or_default();
    delta.deliveries += deliveries;
    delta.duplicate += deliveries - versions;
    if versions > 1 {
        delta.conflicting += 1;
        delta.rejected += deliveries;
    } else {
        delta.accepted += 1;
    }
    let (rep_order, rep_seq) = rep.unwrap_or_default();
    let (utility_label, evidence_basis, confidence) =
        inputs.unwrap_or((UtilityLabel::Unknown, EvidenceBasis::Insufficient, 0.0));
    let mut sorted = fingerprints.clone();
    sorted.sort();
    let want_fingerprints = if versions > 1 { sorted } else { Vec::new() };
    let want = ObservationRow {
        observation_id: id.clone(),
        partition_id: first.partition_id,
        subject_id: subject,
        version_count: versions,
        delivery_count: deliveries,
        fingerprint: fingerprints[0].clone(),
        rep_seq,
        rep_order,
        fingerprints: want_fingerprints,
        utility_label,
        evidence_basis,
        confidence,
    };
    (want != *stored).then(|| format!("observation {id} aggregate differs from its deliveries"))
}

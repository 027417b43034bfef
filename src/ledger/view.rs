//! The rank prior's utility from the ledger: a [`UtilityView`] of one partition built
//! from the stored subject state of the candidates' digests only.
//!
//! Owns which stored rows a ranking reads, never the rules: each row is decoded with
//! [`engine::decode_state`] (the values the reducer computed) and handed to
//! [`UtilityView::new`], the same constructor a projection feeds. Per digest it reads the
//! item subject (its id is computed from the digest) and the set and unresolved subjects
//! of the digest index: what [`super::engine::subjects`] reads for `utility-ledger
//! subject`, without the history. A partition with no more subjects than there are
//! digests is read in one pass over its subjects instead, keeping those that mention a
//! digest: the same rows, for less than one look-up per digest. When the partition's
//! reducer version names `memory_utility_reducer_v1`, each found subject is reduced by
//! the v1 rules from its observation aggregates instead ([`engine::upgrade_stored_v1`],
//! as `subject` and `project` do), the aggregates of every found subject read in one
//! round. The cost grows with the number of candidates (and a found subject's
//! observations), never with the ledger's size. The partition is the look-up key, so
//! utility of another scope or snapshot pair can never enter the view.

use std::collections::{BTreeMap, BTreeSet};

use crate::ranking::prior::{Partition, SubjectUtility, UtilityView};
use crate::utility::observation::{AttributionLevel, EvidenceBasis};
use crate::utility::reducer::{self, Rules, SubjectState};

use super::backend::{LedgerBackend, with_read};
use super::engine;
use super::error::{LedgerError, LedgerResult};
use super::rows::{ObservationRow, PartitionKey, SubjectKey, SubjectRow};

/// Item subjects looked up per storage round.
const ROUND: usize = 512;
/// Subjects per page of a partition scan.
const SCAN_PAGE: usize = 1000;
/// The `;` separators of a stored subject state (its twelve fields, see
/// `engine::encode_state`).
const STATE_SEPARATORS: usize = 11;

/// The ledger's partition key of a ranking partition (scope and snapshot pair; the
/// reducer version only names the rules the ledger applies to the partition's rows).
pub fn partition_key(partition: &Partition) -> PartitionKey {
    PartitionKey {
        agent_id: partition.scope.agent_id.to_string(),
        project_id: partition.scope.project_id.to_string(),
        corpus_id: partition.scope.corpus_id.to_string(),
        surface_id: partition.scope.surface_id.to_string(),
        retrieval_snapshot_ref: partition.retrieval_snapshot_ref.clone(),
        policy_snapshot_ref: partition.policy_snapshot_ref.clone(),
    }
}

/// What the rank prior reads of a reduced subject: `effective_support` is the joint
/// summary's count at the effective tier and label, as a projection defines it.
pub fn subject_utility(state: &SubjectState) -> SubjectUtility {
    let support = state
        .summary
        .iter()
        .find(|p| p.basis == state.effective_basis && p.label == state.effective_label)
        .map_or(0, |p| p.count);
    SubjectUtility {
        level: state.level,
        memory_ref_digests: state.memory_ref_digests.clone(),
        utility_estimate: state.utility_estimate,
        effective_label: state.effective_label,
        effective_basis: state.effective_basis,
        effective_support: support,
    }
}

fn decode_row(row: &SubjectRow) -> LedgerResult<SubjectState> {
    engine::decode_state(row)
        .ok_or_else(|| LedgerError::Storage(format!("subject {} state is damaged", row.subject_id)))
}

/// What the prior reads of stored subjects, by subject id; with `attested_only`, a
/// subject with evidence above `evaluator_inference` is reduced again from its accepted
/// observations without those above `evaluator_inference` whose representative delivery
/// arrived by import (left out when nothing is left of it). Under the v1 rules every
/// subject is reduced from its accepted observations (after the same filter). The
/// aggregates of every subject that needs them are read in one round.
fn decode_all(
    backend: &mut dyn LedgerBackend,
    rows: &[SubjectRow],
    attested_only: bool,
    rules: Rules,
    found: &mut BTreeMap<String, SubjectUtility>,
) -> LedgerResult<()> {
    let mut pending: Vec<(SubjectKey, SubjectState, bool)> = Vec::new();
    for row in rows {
        let state = decode_row(row)?;
        let filter = attested_only && state.summary.iter().any(|p| attestable(p.basis));
        if rules == Rules::V0 && !filter {
            found.insert(row.subject_id.clone(), subject_utility(&state));
        } else {
            pending.push(((row.partition_id, row.subject_id.clone()), state, filter));
        }
    }
    if pending.is_empty() {
        return Ok(());
    }
    let mismatch =
        || LedgerError::Storage("the storage returned the aggregates of other subjects".to_owned());
    // Under v1 without the attestation filter only the v1 inputs are read (the stored
    // state keeps the lineage); otherwise the whole aggregates.
    let (lean, whole): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|(_, _, filter)| !filter && rules != Rules::V0);
    if let Rules::V1(params) = rules
        && !lean.is_empty()
    {
        let keys: Vec<SubjectKey> = lean.iter().map(|(key, _, _)| key.clone()).collect();
        let inputs = backend.subject_v1_inputs(&keys)?;
        if inputs.len() != keys.len() {
            return Err(mismatch());
        }
        for ((key, state, _), inputs) in lean.into_iter().zip(inputs) {
            let (v1_state, _) = engine::upgrade_stored_v1_inputs(&state, &inputs, params)?;
            found.insert(key.1, subject_utility(&v1_state));
        }
    }
    if whole.is_empty() {
        return Ok(());
    }
    let keys: Vec<SubjectKey> = whole.iter().map(|(key, _, _)| key.clone()).collect();
    let members = backend.subject_members(&keys)?;
    if members.len() != keys.len() {
        return Err(mismatch());
    }
    for ((key, state, filter), members) in whole.into_iter().zip(members) {
        if let Some(subject) = decode_members(backend, &key, &state, filter, members, rules)? {
            found.insert(key.1, subject);
        }
    }
    Ok(())
}

/// [`decode_all`] of one subject whose aggregates have been read.
fn decode_members(
    backend: &mut dyn LedgerBackend,
    key: &SubjectKey,
    state: &SubjectState,
    filter: bool,
    mut members: Vec<ObservationRow>,
    rules: Rules,
) -> LedgerResult<Option<SubjectUtility>> {
    if filter {
        members = attested_members(backend, members)?;
    }
    match rules {
        // The stored state was reduced from exactly these members: only the v1 utility
        // is computed.
        Rules::V1(params) if !filter => Ok(Some(subject_utility(
            &engine::upgrade_stored_v1(state, &members, params)?.0,
        ))),
        Rules::V1(params) => {
            Ok(
                engine::reduce_members_v1(key, &state.memory_ref_digests, &members, params)?
                    .map(|(v1_state, _)| subject_utility(&v1_state)),
            )
        }
        Rules::V0 => {
            let digests = state.memory_ref_digests.join(",");
            match engine::reduce_members(key, &digests, &members)? {
                None => Ok(None),
                Some(reduced) => Ok(Some(subject_utility(&decode_row(&reduced)?))),
            }
        }
    }
}

/// Evidence that only the runtime can attest: above `evaluator_inference`.
fn attestable(basis: EvidenceBasis) -> bool {
    basis > EvidenceBasis::EvaluatorInference
}

/// `members` without those above `evaluator_inference` whose representative delivery
/// arrived by import.
fn attested_members(
    backend: &mut dyn LedgerBackend,
    members: Vec<ObservationRow>,
) -> LedgerResult<Vec<ObservationRow>> {
    let seqs: Vec<i64> = members
        .iter()
        .filter(|m| attestable(m.evidence_basis))
        .map(|m| m.rep_seq)
        .collect();
    let batch_of: BTreeMap<i64, i64> = backend
        .deliveries_by_seq(&seqs)?
        .into_iter()
        .map(|d| (d.seq, d.batch_id))
        .collect();
    let batches: Vec<i64> = batch_of.values().copied().collect();
    let attested: BTreeSet<i64> = backend
        .batch_provenance(&batches)?
        .into_iter()
        .filter(|(_, p)| p.is_attested())
        .map(|(id, _)| id)
        .collect();
    Ok(members
        .into_iter()
        .filter(|m| {
            !attestable(m.evidence_basis)
                || batch_of
                    .get(&m.rep_seq)
                    .is_some_and(|batch| attested.contains(batch))
        })
        .collect())
}

/// Checks that the ledger exists and can be read, without reading any subject (so that
/// a wrong location is refused before anything else runs).
pub fn check_readable(backend: &mut dyn LedgerBackend, partition: &Partition) -> LedgerResult<()> {
    with_read(backend, |backend| {
        backend
            .find_partition(&partition_key(partition))
            .map(|_| ())
    })
}

/// The utility of `partition` for `digests`, from one read snapshot of the ledger: every
/// subject that mentions one of them. A partition the ledger has never seen gives a view
/// without utility (every modifier exactly 1.0), as the `empty` projection of `project`
/// does. With `attested_only` (a profile's `require_attested_tiers`) evidence above
/// `evaluator_inference` counts only when the runtime produced it (provenance
/// `attribute` or `correct`), and the view says its tiers are attested. A partition whose
/// reducer version names `memory_utility_reducer_v1` gets the v1 state of each subject.
pub fn utility_view(
    backend: &mut dyn LedgerBackend,
    partition: &Partition,
    digests: &[&str],
    attested_only: bool,
) -> Result<UtilityView, LedgerError> {
    let rules = Rules::of(&partition.reducer_version)
        .map_err(|e| LedgerError::Request(format!("partition.{e}")))?;
    let subjects = with_read(backend, |backend| {
        read_subjects(backend, partition, digests, attested_only, rules)
    })?;
    let view = UtilityView::new(partition.clone(), subjects.into_values())
        .map_err(|e| LedgerError::Storage(format!("stored subject state is not usable: {e}")))?;
    Ok(if attested_only {
        view.with_attested_tiers()
    } else {
        view
    })
}

fn read_subjects(
    backend: &mut dyn LedgerBackend,
    partition: &Partition,
    digests: &[&str],
    attested_only: bool,
    rules: Rules,
) -> LedgerResult<BTreeMap<String, SubjectUtility>> {
    let mut found = BTreeMap::new();
    let Some(stored) = backend.find_partition(&partition_key(partition))? else {
        return Ok(found);
    };
    let subjects = usize::try_from(stored.counters.subjects).unwrap_or(usize::MAX);
    let read = Read {
        partition_id: stored.partition_id,
        digests,
        attested_only,
        rules,
    };
    if subjects <= digests.len() {
        read.by_scan(backend, &mut found)?;
    } else {
        read.by_lookups(backend, &mut found)?;
    }
    Ok(found)
}

/// One read of a stored partition's subjects for some digests.
struct Read<'a> {
    partition_id: i64,
    digests: &'a [&'a str],
    attested_only: bool,
    rules: Rules,
}

impl Read<'_> {
    /// One pass over the partition's subjects ([`scan_subjects`]).
    fn by_scan(
        &self,
        backend: &mut dyn LedgerBackend,
        found: &mut BTreeMap<String, SubjectUtility>,
    ) -> LedgerResult<()> {
        let rows = scan_subjects(backend, self.partition_id, self.digests)?;
        decode_all(backend, &rows, self.attested_only, self.rules, found)
    }

    /// Per digest: the item subject by its id, then the set and unresolved subjects of
    /// the digest index.
    fn by_lookups(
        &self,
        backend: &mut dyn LedgerBackend,
        found: &mut BTreeMap<String, SubjectUtility>,
    ) -> LedgerResult<()> {
        let (id, digests) = (self.partition_id, self.digests);
        let (attested_only, rules) = (self.attested_only, self.rules);
        for round in digests.chunks(ROUND) {
            let keys: Vec<SubjectKey> = round
                .iter()
                .map(|d| {
                    let one = [(*d).to_owned()];
                    (
                        id,
                        reducer::subject_id_for(AttributionLevel::Item, &one, ""),
                    )
                })
                .collect();
            let rows: Vec<SubjectRow> = backend
                .load_subjects(&keys)?
                .into_iter()
                .flatten()
                .collect();
            decode_all(backend, &rows, attested_only, rules, found)?;
        }
        let mut grouped: Vec<SubjectRow> = Vec::new();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for d in digests {
            for row in backend.subjects_with_digest(id, d)? {
                if !found.contains_key(&row.subject_id) && seen.insert(row.subject_id.clone()) {
                    grouped.push(row);
                }
            }
        }
        decode_all(backend, &grouped, attested_only, rules, found)
    }
}

/// Every subject of partition `id` that mentions one of `digests`, in one pass over the
/// partition's subjects (pages in subject id order): the rows the per-digest look-ups
/// find. A row's digests are the last field of its stored state.
fn scan_subjects(
    backend: &mut dyn LedgerBackend,
    id: i64,
    digests: &[&str],
) -> LedgerResult<Vec<SubjectRow>> {
    let mut wanted: Vec<&str> = digests.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut rows = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = backend.subjects_page(id, after.as_deref(), SCAN_PAGE)?;
        let Some(last) = page.last() else {
            break;
        };
        after = Some(last.subject_id.clone());
        let full = page.len() == SCAN_PAGE;
        // A row whose state does not have the stored fields is kept: decoding it then
        // reports the damage, as the per-digest look-ups would, instead of the scan
        // passing over it in silence.
        rows.extend(page.into_iter().filter(|row| {
            row.state.matches(';').count() != STATE_SEPARATORS
                || row
                    .state
                    .rsplit(';')
                    .next()
                    .is_some_and(|tail| tail.split(',').any(|d| wanted.binary_search(&d).is_ok()))
        }));
        if !full {
            break;
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::ledger::props::{append_all, deliveries, stage2_context};
    use crate::ledger::sqlite::SqliteLedger;
    use crate::ranking::prior::{self as rank_prior, Candidate, Profile};
    use crate::utility::observation::EvidenceBasis;
    use crate::wire::json;

    fn partition_of(context: &crate::utility::reducer::ReducerContext) -> Partition {
        Partition {
            scope: context.scope.clone(),
            retrieval_snapshot_ref: context.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: context.policy_snapshot_ref.clone(),
            reducer_version: context.reducer_version.clone(),
        }
    }

    fn profile() -> impl Strategy<Value = Profile> {
        (
            0usize..4,
            any::<bool>(),
            1usize..3,
            0.1f64..=1.0,
            1.0f64..4.0,
        )
            .prop_map(|(basis, inference, support, lower, upper)| {
                let min = [
                    EvidenceBasis::EvaluatorInference,
                    EvidenceBasis::DeterministicEffect,
                    EvidenceBasis::ControlledReplay,
                    EvidenceBasis::OwnerCorrection,
                ][basis];
                Profile {
                    schema_version: Default::default(),
                    profile_id: "profile:ledger-view".into(),
                    semantic_floor: 0.0,
                    candidate_pool: 16,
                    modifier_bounds: [lower, upper],
                    min_evidence_basis: min,
                    allow_evaluator_inference: inference
                        || min == EvidenceBasis::EvaluatorInference,
                    min_support: support,
                    require_attested_tiers: false,
                    verdict_max_age_days: None,
                    verdict_max_new_deliveries: None,
                }
            })
    }

    /// Every digest of the generated streams, plus one no subject mentions.
    const DIGESTS: [&str; 4] = [
        "0123456789abcdef",
        "1111222233334444",
        "fedcba9876543210",
        "00000000000000ff",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The prior computed from the ledger's stored subjects equals the prior computed
        /// from the ledger's own v0 projection of the same partition, for any stream
        /// (retries, conflicting versions, every level) and any profile.
        #[test]
        fn prior_from_the_ledger_equals_prior_from_its_projection(
            stream in deliveries(),
            relevances in prop::collection::vec(0.0f64..=1.0, 4),
            profile in profile(),
        ) {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
            let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
            append_all(&mut ledger, &stream);
            let context = stage2_context();
            let partition = partition_of(&context);
            let projection = engine::project(&mut ledger, &context, None)
                .and_then(engine::Projected::into_value)
                .unwrap_or_else(|e| panic!("project: {e}"));
            let from_projection = UtilityView::from_projection(&projection)
                .unwrap_or_else(|e| panic!("view: {e}\n{}", json::to_pretty_line(&projection)));
            let from_ledger = utility_view(&mut ledger, &partition, &DIGESTS, false)
                .unwrap_or_else(|e| panic!("ledger view: {e}"));
            let candidates: Vec<Candidate> = DIGESTS
                .iter()
                .zip(&relevances)
                .map(|(d, r)| Candidate::new(d, *r).unwrap_or_else(|e| panic!("{e}")))
                .collect();
            let rank = |view: &UtilityView| {
                let ranking = rank_prior::rank(&candidates, view, &partition, &profile)
                    .unwrap_or_else(|e| panic!("rank: {e}"));
                json::to_pretty_line(&rank_prior::packet(&ranking, &partition, &profile))
            };
            prop_assert_eq!(rank(&from_ledger), rank(&from_projection));
            for d in DIGESTS {
                prop_assert_eq!(from_ledger.item(d), from_projection.item(d));
                prop_assert_eq!(from_ledger.in_group(d), from_projection.in_group(d));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Under `memory_utility_reducer_v1` too: the prior computed from the ledger (each
        /// found subject reduced by the v1 rules as it is read) equals the prior computed
        /// from the ledger's own `memory_utility_projection_v1` of the partition, and every
        /// modifier stays within the profile's bounds.
        #[test]
        fn v1_prior_from_the_ledger_equals_prior_from_its_v1_projection(
            stream in deliveries(),
            relevances in prop::collection::vec(0.0f64..=1.0, 4),
            profile in profile(),
            params in crate::utility::reducer::v1::props::params(),
        ) {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
            let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
            append_all(&mut ledger, &stream);
            let context = crate::utility::reducer::v1::props::v1_context(params);
            let partition = partition_of(&context);
            let projection = engine::project(&mut ledger, &context, None)
                .and_then(engine::Projected::into_value)
                .unwrap_or_else(|e| panic!("project: {e}"));
            let from_projection = UtilityView::from_projection(&projection)
                .unwrap_or_else(|e| panic!("view: {e}\n{}", json::to_pretty_line(&projection)));
            let from_ledger = utility_view(&mut ledger, &partition, &DIGESTS, false)
                .unwrap_or_else(|e| panic!("ledger view: {e}"));
            let candidates: Vec<Candidate> = DIGESTS
                .iter()
                .zip(&relevances)
                .map(|(d, r)| Candidate::new(d, *r).unwrap_or_else(|e| panic!("{e}")))
                .collect();
            let rank = |view: &UtilityView| {
                let ranking = rank_prior::rank(&candidates, view, &partition, &profile)
                    .unwrap_or_else(|e| panic!("rank: {e}"));
                for ranked in &ranking.ranked {
                    assert!(
                        (profile.lower()..=profile.upper()).contains(&ranked.modifier.value),
                        "{ranked:?}"
                    );
                }
                json::to_pretty_line(&rank_prior::packet(&ranking, &partition, &profile))
            };
            prop_assert_eq!(rank(&from_ledger), rank(&from_projection));
            for d in DIGESTS {
                prop_assert_eq!(from_ledger.item(d), from_projection.item(d));
                prop_assert_eq!(from_ledger.in_group(d), from_projection.in_group(d));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Both plans of a read, one pass over the partition's subjects and the
        /// per-digest look-ups, find the same subjects and read them alike, for any
        /// stream and any of the digests, under v0 and v1, with and without
        /// `require_attested_tiers`.
        #[test]
        fn a_scan_and_per_digest_look_ups_read_the_same_subjects(
            stream in deliveries(),
            take in 0usize..=4,
            v1 in any::<bool>(),
            attested_only in any::<bool>(),
            params in crate::utility::reducer::v1::props::params(),
        ) {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
            let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
            append_all(&mut ledger, &stream);
            let partition = partition_of(&stage2_context());
            let rules = if v1 { Rules::V1(params) } else { Rules::V0 };
            let digests = &DIGESTS[..take];
            let (scanned, looked_up) = with_read(&mut ledger, |backend| {
                let (mut scanned, mut looked_up) = (BTreeMap::new(), BTreeMap::new());
                if let Some(stored) = backend.find_partition(&partition_key(&partition))? {
                    let read = Read {
                        partition_id: stored.partition_id,
                        digests,
                        attested_only,
                        rules,
                    };
                    read.by_scan(backend, &mut scanned)?;
                    read.by_lookups(backend, &mut looked_up)?;
                }
                Ok((scanned, looked_up))
            })
            .unwrap_or_else(|e| panic!("read: {e}"));
            prop_assert_eq!(scanned, looked_up);
        }
    }

    #[test]
    fn a_partition_the_ledger_never_saw_has_no_utility() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
        append_all(&mut ledger, &[]);
        let mut partition = partition_of(&stage2_context());
        partition.retrieval_snapshot_ref = "retrieval:other".into();
        let view = utility_view(&mut ledger, &partition, &DIGESTS, false)
            .unwrap_or_else(|e| panic!("ledger view: {e}"));
        assert_eq!(view, UtilityView::empty(partition.clone()));
        assert!(check_readable(&mut ledger, &partition).is_ok());
        let mut missing = SqliteLedger::new(dir.path().join("absent.sqlite3"));
        assert_eq!(
            utility_view(&mut missing, &partition, &DIGESTS, false),
            Err(LedgerError::Missing)
        );
        assert_eq!(
            check_readable(&mut missing, &partition),
            Err(LedgerError::Missing)
        );
    }

    fn append_as(
        ledger: &mut SqliteLedger,
        batch: &[crate::utility::testkit::Spec],
        p: &Provenance,
    ) {
        let records: Vec<_> = batch
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                Ok(engine::Record::Item {
                    line: i as u64 + 1,
                    bytes: json::dumps(&spec.build().to_value(), engine::COMPACT).into_bytes(),
                })
            })
            .collect();
        let report = engine::append_with(ledger, Box::new(records.into_iter()), p).expect("append");
        assert_eq!(report.batch.refused, 0);
    }

    fn attested_profile(require: bool) -> Profile {
        Profile {
            schema_version: Default::default(),
            profile_id: "profile:attested".into(),
            semantic_floor: 0.0,
            candidate_pool: 16,
            modifier_bounds: [0.5, 2.0],
            min_evidence_basis: EvidenceBasis::DeterministicEffect,
            allow_evaluator_inference: false,
            min_support: 1,
            require_attested_tiers: require,
            verdict_max_age_days: None,
            verdict_max_new_deliveries: None,
        }
    }

    fn codes_for(ledger: &mut SqliteLedger, require: bool) -> (f64, Vec<&'static str>) {
        let partition = partition_of(&stage2_context());
        let profile = attested_profile(require);
        let view = utility_view(
            ledger,
            &partition,
            &[DIGEST_A],
            profile.require_attested_tiers,
        )
        .expect("view");
        let m = rank_prior::modifier(&view, DIGEST_A, &profile);
        (m.value, m.reasons.iter().map(|r| r.code()).collect())
    }

    use crate::ledger::Provenance;
    use crate::utility::testkit::{DIGEST_A, Spec};

    /// An imported deterministic_effect observation moves the prior without the option
    /// and not with it; the same tier appended by the runtime (provenance attribute)
    /// moves it either way.
    #[test]
    fn require_attested_tiers_ignores_imported_tiers_and_counts_attributed_ones() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
        append_as(
            &mut ledger,
            &[Spec::item(
                "helpful",
                "deterministic_effect",
                0.9,
                "v:import",
            )],
            &Provenance::Import,
        );
        let (value, codes) = codes_for(&mut ledger, false);
        assert!(value > 1.0, "{codes:?}");
        assert_eq!(codes, ["positive_utility_boost"]);
        assert_eq!(
            codes_for(&mut ledger, true),
            (1.0, vec!["no_utility_evidence"])
        );

        append_as(
            &mut ledger,
            &[Spec::item(
                "harmful",
                "deterministic_effect",
                0.8,
                "v:attributed",
            )],
            &Provenance::Attribute {
                evaluator_id: "evaluator:deterministic".into(),
            },
        );
        let (value, codes) = codes_for(&mut ledger, true);
        assert!(
            value < 1.0,
            "only the attributed harmful observation counts: {codes:?}"
        );
        assert_eq!(codes, ["negative_utility_attenuation", "review_proposed"]);
        // Without the option both count (a same-tier conflict: unknown).
        assert_eq!(
            codes_for(&mut ledger, false),
            (1.0, vec!["utility_unknown"])
        );
    }

    /// Under `memory_utility_reducer_v1` the option filters the same observations before
    /// the v1 reduction: of five imported harmful observations and one attributed helpful
    /// one, only the helpful one counts with it (too little to decide: unknown), and the
    /// harmful majority attenuates without it.
    #[test]
    fn require_attested_tiers_filters_before_the_v1_reduction() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
        let imported: Vec<Spec> = (0..5)
            .map(|i| Spec::item("harmful", "deterministic_effect", 1.0, &format!("v:imp{i}")))
            .collect();
        append_as(&mut ledger, &imported, &Provenance::Import);
        append_as(
            &mut ledger,
            &[Spec::item(
                "helpful",
                "deterministic_effect",
                1.0,
                "v:attributed",
            )],
            &Provenance::Attribute {
                evaluator_id: "evaluator:deterministic".into(),
            },
        );
        let context = crate::utility::reducer::v1::props::v1_context(Default::default());
        let partition = partition_of(&context);
        let codes = |ledger: &mut SqliteLedger, require: bool| {
            let profile = attested_profile(require);
            let view = utility_view(ledger, &partition, &[DIGEST_A], require).expect("view");
            let m = rank_prior::modifier(&view, DIGEST_A, &profile);
            (
                m.value,
                m.reasons.iter().map(|r| r.code()).collect::<Vec<_>>(),
            )
        };
        let (value, without) = codes(&mut ledger, false);
        assert!(value < 1.0, "{without:?}");
        assert_eq!(without, ["negative_utility_attenuation", "review_proposed"]);
        assert_eq!(codes(&mut ledger, true), (1.0, vec!["utility_unknown"]));
    }

    /// A projection carries no provenance: with the option, a memory whose effective
    /// tier is above evaluator_inference is not counted and says why.
    #[test]
    fn require_attested_tiers_cannot_attest_a_projection() {
        let projection = crate::utility::testkit::project(&[Spec::item(
            "helpful",
            "deterministic_effect",
            0.9,
            "v:projection",
        )
        .build()
        .to_value()]);
        let view = UtilityView::from_projection(&projection).expect("view");
        let m = rank_prior::modifier(&view, DIGEST_A, &attested_profile(true));
        assert_eq!(m.value, 1.0);
        assert_eq!(m.reasons, [rank_prior::Reason::EvidenceTierUnattested]);
        let m = rank_prior::modifier(&view, DIGEST_A, &attested_profile(false));
        assert!(m.value > 1.0);
    }
}

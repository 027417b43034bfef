//! Property tests of the ledger: for random streams within the v0 caps (duplicates,
//! retries with another `created_at`, conflicting versions), appending them in one batch
//! or in random batches and projecting gives exactly the `utility-project` bytes, and
//! `verify` finds no difference.

use proptest::prelude::*;

use crate::utility::props::spec_with;
use crate::utility::testkit::{Spec, context, project};
use crate::wire::json::{self, Value};

use super::engine::{self, COMPACT, Record};
use super::sqlite::SqliteLedger;
use crate::utility::reducer::ReducerContext;

/// A delivery stream: base observations, retries (same statement, later time) and
/// conflicting versions (same id, another label or confidence).
pub(super) fn deliveries() -> impl Strategy<Value = Vec<Value>> {
    (
        prop::collection::vec(spec_with(&["item", "set", "none"]), 0..20),
        prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, 0u8..24), 0..16),
    )
        .prop_map(|(specs, extra)| {
            let mut out: Vec<Value> = specs.iter().map(|s| s.build().to_value()).collect();
            if specs.is_empty() {
                return out;
            }
            for (pick, kind, hour) in extra {
                let base: &Spec = &specs[pick.index(specs.len())];
                let mut variant = base.clone();
                match kind {
                    // A retry: the same statement delivered again at another time.
                    0 => variant.created_at = format!("2026-08-16T{hour:02}:00:00Z"),
                    // A different payload under the same id.
                    1 => {
                        variant.confidence = (base.confidence + 0.25) % 1.0;
                    }
                    _ => {
                        if variant.level != "none" && variant.basis != "insufficient" {
                            variant.label = if base.label == "helpful" {
                                "harmful"
                            } else {
                                "helpful"
                            };
                        }
                    }
                }
                out.push(variant.build().to_value());
            }
            out
        })
        .prop_shuffle()
}

pub(super) fn stage2_context() -> ReducerContext {
    let c = context();
    ReducerContext::strict(
        c.get("scope").unwrap_or(&Value::Null),
        c.get("retrieval_snapshot_ref").unwrap_or(&Value::Null),
        c.get("policy_snapshot_ref").unwrap_or(&Value::Null),
        &Value::from("memory_utility_reducer_v0"),
    )
    .unwrap_or_else(|e| panic!("context: {e}"))
}

pub(super) fn append_all(ledger: &mut SqliteLedger, batch: &[Value]) {
    let records: Vec<_> = batch
        .iter()
        .enumerate()
        .map(|(i, v)| {
            Ok(Record::Item {
                line: i as u64 + 1,
                bytes: json::dumps(v, COMPACT).into_bytes(),
            })
        })
        .collect();
    let report = engine::append(ledger, Box::new(records.into_iter()))
        .unwrap_or_else(|e| panic!("append: {e}"));
    assert_eq!(report.batch.refused, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn ledger_projection_equals_utility_project(
        stream in deliveries(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
    ) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let expected = json::to_pretty_line(&project(&stream));
        let context = stage2_context();

        let mut one = SqliteLedger::new(dir.path().join("one.sqlite3"));
        append_all(&mut one, &stream);
        let got = engine::project(&mut one, &context, None)
            .and_then(engine::Projected::into_value)
            .unwrap_or_else(|e| panic!("{e}"));
        prop_assert_eq!(&json::to_pretty_line(&got), &expected);

        let mut many = SqliteLedger::new(dir.path().join("many.sqlite3"));
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
        bounds.push(0);
        bounds.push(stream.len());
        bounds.sort_unstable();
        for pair in bounds.windows(2) {
            append_all(&mut many, &stream[pair[0]..pair[1]]);
        }
        let got = engine::project(&mut many, &context, None)
            .and_then(engine::Projected::into_value)
            .unwrap_or_else(|e| panic!("{e}"));
        prop_assert_eq!(&json::to_pretty_line(&got), &expected);

        for ledger in [&mut one, &mut many] {
            let report = engine::verify(ledger).unwrap_or_else(|e| panic!("{e}"));
            prop_assert_eq!(report.first_difference, None);
        }
    }
}

/// `spec`'s observation in another partition of the same scope (retrieval snapshot
/// `retrieval:other`).
fn in_other_partition(spec: &Spec) -> Value {
    use crate::utility::testkit::{outcome, receipt};
    let digests: Vec<&str> = spec.receipt_digests.iter().map(String::as_str).collect();
    let mut context = crate::utility::testkit::context();
    let mut proposal = spec.proposal();
    for v in [&mut context, &mut proposal] {
        if let Value::Object(map) = v {
            map.insert("retrieval_snapshot_ref", "retrieval:other");
        }
    }
    crate::utility::observation::build_observation(
        &receipt(&digests),
        &outcome(),
        &context,
        &proposal,
        &Value::from(spec.created_at.as_str()),
    )
    .unwrap_or_else(|e| panic!("fixture must build: {e}"))
    .to_value()
}

/// A v1 subject as a ledger page prints it, without its history.
fn without_history(subject: &Value) -> Value {
    let mut subject = subject.clone();
    if let Value::Object(map) = &mut subject {
        map.remove("observation_history");
        map.remove("observation_history_truncated");
    }
    subject
}

/// The subjects of a v1 projection in a ledger page's order (by `subject_id`).
fn by_subject_id(projection: &Value) -> Vec<Value> {
    let mut subjects: Vec<Value> = crate::utility::testkit::subjects(projection).to_vec();
    subjects.sort_by(|a, b| {
        let id = |v: &Value| {
            v.get("subject_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        id(a).cmp(&id(b))
    });
    subjects
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The ledger serves `memory_utility_reducer_v1` from the same deliveries: within the
    /// caps its projection is exactly the v1 reduction of the stream (one batch or many),
    /// and its paged projection holds the same subjects, reduced as they are read from
    /// the stored aggregates; the v0 projection of the same ledger is untouched.
    #[test]
    fn ledger_v1_projection_equals_the_v1_reduction(
        stream in deliveries(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        params in crate::utility::reducer::v1::props::params(),
    ) {
        use crate::utility::reducer::v1::props::{project_v1, v1_context};
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let expected = project_v1(&stream, params);
        let context = v1_context(params);

        let mut one = SqliteLedger::new(dir.path().join("one.sqlite3"));
        append_all(&mut one, &stream);
        let mut many = SqliteLedger::new(dir.path().join("many.sqlite3"));
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c.index(stream.len() + 1)).collect();
        bounds.push(0);
        bounds.push(stream.len());
        bounds.sort_unstable();
        for pair in bounds.windows(2) {
            append_all(&mut many, &stream[pair[0]..pair[1]]);
        }
        for ledger in [&mut one, &mut many] {
            let got = engine::project(ledger, &context, None)
                .and_then(engine::Projected::into_value)
                .unwrap_or_else(|e| panic!("{e}"));
            prop_assert_eq!(json::to_pretty_line(&got), json::to_pretty_line(&expected));
            let paging = engine::Paging { limit: 128, after: None };
            let page = engine::project(ledger, &context, Some(&paging))
                .and_then(engine::Projected::into_value)
                .unwrap_or_else(|e| panic!("{e}"));
            prop_assert_eq!(super::validate::validate_ledger_projection_v1(&page), Ok(()));
            let paged: Vec<Value> = page
                .get("subjects")
                .and_then(Value::as_array)
                .unwrap_or(&[])
                .iter()
                .map(without_history)
                .collect();
            prop_assert_eq!(
                json::to_pretty_line(&Value::Array(paged.into())),
                json::to_pretty_line(&Value::Array(by_subject_id(&expected).into()))
            );
            let v0 = engine::project(ledger, &stage2_context(), None)
                .and_then(engine::Projected::into_value)
                .unwrap_or_else(|e| panic!("{e}"));
            prop_assert_eq!(json::to_pretty_line(&v0), json::to_pretty_line(&project(&stream)));
        }
    }

    /// Scope partitions: deliveries of another partition never change a partition's v1
    /// subjects.
    #[test]
    fn another_partition_never_changes_v1_subjects(
        stream in deliveries(),
        others in prop::collection::vec(spec_with(&["item", "set", "none"]), 1..12),
        params in crate::utility::reducer::v1::props::params(),
    ) {
        use crate::utility::reducer::v1::props::{project_v1, v1_context};
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
        let mut mixed = stream.clone();
        mixed.extend(others.iter().map(in_other_partition));
        append_all(&mut ledger, &mixed);
        let got = engine::project(&mut ledger, &v1_context(params), None)
            .and_then(engine::Projected::into_value)
            .unwrap_or_else(|e| panic!("{e}"));
        prop_assert_eq!(
            json::to_pretty_line(&got),
            json::to_pretty_line(&project_v1(&stream, params))
        );
    }
}

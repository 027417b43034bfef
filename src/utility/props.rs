//! Property tests of the RFC invariants: order independence, idempotent replay, bounded
//! utility, no set-to-item credit copying, tier precedence, and readback validity.

use proptest::prelude::*;

use crate::wire::json::{self, Value};

use super::testkit::{Spec, project, subjects};
use super::validate::validate_projection;

const POOL: [&str; 3] = ["0123456789abcdef", "1111222233334444", "fedcba9876543210"];
const LABELS: [&str; 4] = ["helpful", "harmful", "neutral", "unknown"];
const BASES: [&str; 5] = [
    "insufficient",
    "evaluator_inference",
    "deterministic_effect",
    "controlled_replay",
    "owner_correction",
];

fn confidence() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(1.0),
        Just(5e-7),
        Just(0.9999995),
        0.0f64..=1.0,
    ]
}

pub(crate) fn spec_with(levels: &'static [&'static str]) -> impl Strategy<Value = Spec> {
    (
        1usize..8,
        0..levels.len(),
        0usize..4,
        0usize..5,
        confidence(),
        0u8..6,
        0u8..3,
        0u8..24,
        0usize..3,
        any::<bool>(),
    )
        .prop_map(
            move |(
                mask,
                level,
                label,
                basis,
                confidence,
                version,
                evidence,
                hour,
                pick,
                offset,
            )| {
                let receipt_digests: Vec<String> = POOL
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, d)| (*d).to_owned())
                    .collect();
                let level = levels[level];
                let basis = BASES[basis];
                let label = if level == "none" || basis == "insufficient" {
                    "unknown"
                } else {
                    LABELS[label]
                };
                let item_digest = receipt_digests[pick % receipt_digests.len()].clone();
                // The same instant written two ways exercises the order-key tie-breaker.
                let created_at = if offset {
                    format!("2026-08-15T{:02}:30:00+01:00", hour)
                } else {
                    format!("2026-08-15T{:02}:30:00Z", hour)
                };
                Spec {
                    receipt_digests,
                    level,
                    item_digest,
                    label,
                    basis,
                    confidence,
                    version: format!("evaluation:v{version}"),
                    evidence_ref: format!("evidence:{evidence}"),
                    created_at,
                }
            },
        )
}

fn stream(max: usize) -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(spec_with(&["item", "set", "none"]), 0..max)
        .prop_map(|specs| specs.iter().map(|s| s.build().to_value()).collect())
}

fn text(v: &Value) -> String {
    json::to_pretty_line(v)
}

fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&Value::Null)
}

fn item_view(projection: &Value) -> (Vec<Value>, Vec<Value>) {
    let items: Vec<Value> = subjects(projection)
        .iter()
        .filter(|s| field(s, "attribution_level").as_str() == Some("item"))
        .cloned()
        .collect();
    let history: Vec<Value> = field(projection, "observation_history")
        .as_array()
        .map(|h| {
            h.iter()
                .filter(|e| field(e, "attribution_level").as_str() == Some("item"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    (items, history)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn projection_does_not_depend_on_input_order(
        (original, shuffled) in stream(24).prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
    ) {
        prop_assert_eq!(text(&project(&original)), text(&project(&shuffled)));
    }

    #[test]
    fn replaying_an_observation_is_a_no_op(observations in stream(24), pick in any::<prop::sample::Index>()) {
        prop_assume!(!observations.is_empty());
        let before = project(&observations);
        let mut replayed = observations.clone();
        replayed.push(observations[pick.index(observations.len())].clone());
        let after = project(&replayed);
        for key in ["status", "accepted_observation_count", "conflicting_observation_count",
                    "subjects", "observation_history", "review_proposals",
                    "last_observed_at", "last_observation_id"] {
            prop_assert_eq!(text(field(&before, key)), text(field(&after, key)), "{}", key);
        }
        let dup = |p: &Value| match field(p, "duplicate_observation_count") {
            Value::Int(n) => *n,
            _ => -1,
        };
        prop_assert_eq!(dup(&before) + 1, dup(&after));
    }

    #[test]
    fn utility_stays_within_bounds(observations in stream(32)) {
        let projection = project(&observations);
        for subject in subjects(&projection) {
            let num = |k: &str| match field(subject, k) {
                Value::Float(f) => *f,
                other => panic!("{k} must be a float, got {other:?}"),
            };
            let (utility, confidence, uncertainty) =
                (num("utility_estimate"), num("confidence"), num("uncertainty"));
            prop_assert!((-1.0..=1.0).contains(&utility));
            prop_assert!((0.0..=1.0).contains(&confidence));
            prop_assert!((0.0..=1.0).contains(&uncertainty));
            match field(subject, "effective_utility_label").as_str() {
                Some("helpful") => prop_assert!(utility >= 0.0),
                Some("harmful") => prop_assert!(utility <= 0.0),
                _ => prop_assert_eq!(utility, 0.0),
            }
        }
    }

    #[test]
    fn set_level_credit_is_never_copied_into_item_subjects(
        items in prop::collection::vec(spec_with(&["item"]), 0..16),
        sets in prop::collection::vec(spec_with(&["set", "none"]), 1..16),
    ) {
        let item_values: Vec<Value> = items.iter().map(|s| s.build().to_value()).collect();
        let mut all = item_values.clone();
        all.extend(sets.iter().map(|s| s.build().to_value()));
        let only_items = item_view(&project(&item_values));
        let mixed = item_view(&project(&all));
        prop_assert_eq!(text(&Value::Array(only_items.0.into())), text(&Value::Array(mixed.0.into())));
        prop_assert_eq!(text(&Value::Array(only_items.1.into())), text(&Value::Array(mixed.1.into())));
    }

    #[test]
    fn weaker_tier_never_overrides_a_stronger_one(
        tier in 2usize..5,
        label in 0usize..3,
        strong in prop::collection::vec(confidence(), 1..5),
        weak in prop::collection::vec((0usize..5, 0usize..4, confidence()), 0..12),
    ) {
        let strong_specs: Vec<Spec> = strong
            .iter()
            .enumerate()
            .map(|(i, c)| Spec::item(LABELS[label], BASES[tier], *c, &format!("strong:{i}")))
            .collect();
        let weak_specs: Vec<Spec> = weak
            .iter()
            .enumerate()
            .map(|(i, (t, l, c))| {
                let basis = BASES[t % tier];
                let l = if basis == "insufficient" { "unknown" } else { LABELS[*l] };
                Spec::item(l, basis, *c, &format!("weak:{i}"))
            })
            .collect();
        let core: Vec<Value> = strong_specs.iter().map(|s| s.build().to_value()).collect();
        let mut with_weak = core.clone();
        with_weak.extend(weak_specs.iter().map(|s| s.build().to_value()));
        let a = project(&core);
        let b = project(&with_weak);
        let (sa, sb) = (&subjects(&a)[0], &subjects(&b)[0]);
        for key in ["effective_utility_label", "effective_evidence_basis", "utility_estimate",
                    "confidence", "uncertainty", "review"] {
            prop_assert_eq!(text(field(sa, key)), text(field(sb, key)), "{}", key);
        }
        prop_assert_eq!(field(sb, "effective_utility_label").as_str(), Some(LABELS[label]));
    }

    #[test]
    fn every_emitted_projection_passes_the_validator(observations in stream(32)) {
        let projection = project(&observations);
        prop_assert_eq!(validate_projection(&projection), Ok(()));
    }
}

//! Property tests of `memory_utility_reducer_v1`: every law of the v0 reducer
//! (`src/utility/props.rs`) holds for v1 — order independence, idempotent replay,
//! bounded utility, no set-to-item credit copying, tier dominance, unknown attribution
//! adds lineage only, readback validity — plus its own: unknown labels add lineage only
//! at any tier, a single outcome observation never decides a subject, and consistent
//! evidence only ever moves the estimate its way.

use proptest::prelude::*;

use crate::utility::observation::{Observation, validate_observation};
use crate::utility::props::spec_with;
use crate::utility::reducer::{ReducerContext, project_with};
use crate::utility::testkit::{Spec, context, subjects};
use crate::utility::validate::{validate_projection_v1, validate_projection_v1_subjects};
use crate::wire::json::{self, Value};

use super::{Rules, V1Params};

const LABELS: [&str; 4] = ["helpful", "harmful", "neutral", "unknown"];
const BASES: [&str; 5] = [
    "insufficient",
    "evaluator_inference",
    "deterministic_effect",
    "controlled_replay",
    "owner_correction",
];
/// The keys a v1 subject derives from its directional evidence.
const UTILITY_KEYS: [&str; 7] = [
    "effective_utility_label",
    "effective_evidence_basis",
    "utility_estimate",
    "confidence",
    "uncertainty",
    "posterior",
    "review",
];

pub(crate) fn v1_context(params: V1Params) -> ReducerContext {
    let c = context();
    ReducerContext::strict(
        c.get("scope").unwrap_or(&Value::Null),
        c.get("retrieval_snapshot_ref").unwrap_or(&Value::Null),
        c.get("policy_snapshot_ref").unwrap_or(&Value::Null),
        &Value::from(params.reducer_version().as_str()),
    )
    .unwrap_or_else(|e| panic!("context: {e}"))
}

/// The `memory_utility_projection_v1` of a stream of the testkit's partition.
pub(crate) fn project_v1(stream: &[Value], params: V1Params) -> Value {
    let observations: Vec<Observation> = stream
        .iter()
        .map(|v| validate_observation(v).unwrap_or_else(|e| panic!("observation: {}", e.message)))
        .collect();
    let context = v1_context(params);
    project_with(&context, &observations, Rules::V1(params))
        .unwrap_or_else(|e| panic!("project: {e}"))
        .to_value()
}

pub(crate) fn params() -> impl Strategy<Value = V1Params> {
    prop_oneof![Just(None), (1u32..48).prop_map(Some)]
        .prop_map(|half_life_days| V1Params { half_life_days })
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

fn num(v: &Value, key: &str) -> f64 {
    match field(v, key) {
        Value::Float(f) => *f,
        other => panic!("{key} must be a float, got {other:?}"),
    }
}

fn items_of(projection: &Value, level: &str) -> Vec<Value> {
    subjects(projection)
        .iter()
        .filter(|s| field(s, "attribution_level").as_str() == Some(level))
        .cloned()
        .collect()
}

fn history_of(projection: &Value, level: &str) -> Vec<Value> {
    field(projection, "observation_history")
        .as_array()
        .map(|h| {
            h.iter()
                .filter(|e| field(e, "attribution_level").as_str() == Some(level))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn list(values: Vec<Value>) -> String {
    text(&Value::Array(values.into()))
}

/// A subject's utility fields, by subject id.
fn utility_fields(projection: &Value) -> Vec<(String, String)> {
    subjects(projection)
        .iter()
        .map(|s| {
            let id = field(s, "subject_id")
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let fields: Vec<String> = UTILITY_KEYS.iter().map(|k| text(field(s, k))).collect();
            (id, fields.join(""))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn v1_projection_does_not_depend_on_input_order(
        (original, shuffled) in stream(24).prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
        params in params(),
    ) {
        prop_assert_eq!(text(&project_v1(&original, params)), text(&project_v1(&shuffled, params)));
    }

    #[test]
    fn v1_replaying_an_observation_is_a_no_op(
        observations in stream(24),
        pick in any::<prop::sample::Index>(),
        params in params(),
    ) {
        prop_assume!(!observations.is_empty());
        let before = project_v1(&observations, params);
        let mut replayed = observations.clone();
        replayed.push(observations[pick.index(observations.len())].clone());
        let after = project_v1(&replayed, params);
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

    /// Bounds: utility, confidence and uncertainty in range, the utility is the interval
    /// bound nearest zero (0 when the interval holds 0), its sign is the label's.
    #[test]
    fn v1_utility_stays_within_bounds_and_is_a_credible_bound(
        observations in stream(32),
        params in params(),
    ) {
        let projection = project_v1(&observations, params);
        for subject in subjects(&projection) {
            let (utility, confidence, uncertainty) =
                (num(subject, "utility_estimate"), num(subject, "confidence"), num(subject, "uncertainty"));
            prop_assert!((-1.0..=1.0).contains(&utility));
            prop_assert!((0.0..=1.0).contains(&confidence));
            prop_assert!((0.0..=1.0).contains(&uncertainty));
            let posterior = field(subject, "posterior");
            let (lower, mean, upper) = (
                num(posterior, "lower_utility"),
                num(posterior, "mean_utility"),
                num(posterior, "upper_utility"),
            );
            prop_assert!(-1.0 <= lower && lower <= mean && mean <= upper && upper <= 1.0);
            match field(subject, "effective_utility_label").as_str() {
                Some("helpful") => {
                    prop_assert!(utility > 0.0);
                    prop_assert_eq!(utility, lower);
                }
                Some("harmful") => {
                    prop_assert!(utility < 0.0);
                    prop_assert_eq!(utility, upper);
                }
                _ => {
                    prop_assert_eq!(utility, 0.0);
                    prop_assert!(lower <= 0.0 && upper >= 0.0);
                }
            }
        }
    }

    #[test]
    fn v1_set_level_credit_is_never_copied_into_item_subjects(
        items in prop::collection::vec(spec_with(&["item"]), 0..16),
        sets in prop::collection::vec(spec_with(&["set", "none"]), 1..16),
        params in params(),
    ) {
        let item_values: Vec<Value> = items.iter().map(|s| s.build().to_value()).collect();
        let mut all = item_values.clone();
        all.extend(sets.iter().map(|s| s.build().to_value()));
        let only = project_v1(&item_values, params);
        let mixed = project_v1(&all, params);
        prop_assert_eq!(list(items_of(&only, "item")), list(items_of(&mixed, "item")));
        prop_assert_eq!(list(history_of(&only, "item")), list(history_of(&mixed, "item")));
    }

    /// Unresolved attribution (`none`) adds lineage only: item and set subjects, and
    /// their history, are what they were without it.
    #[test]
    fn v1_unknown_attribution_adds_lineage_only(
        resolved in prop::collection::vec(spec_with(&["item", "set"]), 0..16),
        unresolved in prop::collection::vec(spec_with(&["none"]), 1..8),
        params in params(),
    ) {
        let base: Vec<Value> = resolved.iter().map(|s| s.build().to_value()).collect();
        let mut all = base.clone();
        all.extend(unresolved.iter().map(|s| s.build().to_value()));
        let (a, b) = (project_v1(&base, params), project_v1(&all, params));
        for level in ["item", "set"] {
            prop_assert_eq!(list(items_of(&a, level)), list(items_of(&b, level)));
            prop_assert_eq!(list(history_of(&a, level)), list(history_of(&b, level)));
        }
        for subject in items_of(&b, "none") {
            prop_assert_eq!(field(&subject, "effective_utility_label").as_str(), Some("unknown"));
            prop_assert_eq!(num(&subject, "utility_estimate"), 0.0);
        }
    }

    /// An `unknown` label adds lineage only, at any tier: a subject with directional
    /// evidence keeps every utility field.
    #[test]
    fn v1_unknown_labels_add_lineage_only(
        known in prop::collection::vec((0usize..3, 1usize..5, 0.0f64..=1.0), 1..10),
        unknown in prop::collection::vec((0usize..5, 0.0f64..=1.0), 1..6),
        params in params(),
    ) {
        let specs: Vec<Spec> = known
            .iter()
            .enumerate()
            .map(|(i, (l, b, c))| Spec::item(LABELS[*l], BASES[*b], *c, &format!("k{i}")))
            .collect();
        let base: Vec<Value> = specs.iter().map(|s| s.build().to_value()).collect();
        let mut all = base.clone();
        all.extend(unknown.iter().enumerate().map(|(i, (b, c))| {
            Spec::item("unknown", BASES[*b], *c, &format!("u{i}")).build().to_value()
        }));
        prop_assert_eq!(utility_fields(&project_v1(&base, params)), utility_fields(&project_v1(&all, params)));
    }

    /// Tier dominance: evidence below the strongest directional tier (any label) never
    /// changes a subject's utility.
    #[test]
    fn v1_weaker_tier_never_overrides_a_stronger_one(
        tier in 2usize..5,
        strong in prop::collection::vec((0usize..3, 0.0f64..=1.0), 1..8),
        weak in prop::collection::vec((0usize..5, 0usize..4, 0.0f64..=1.0), 0..12),
        params in params(),
    ) {
        let core: Vec<Value> = strong
            .iter()
            .enumerate()
            .map(|(i, (l, c))| Spec::item(LABELS[*l], BASES[tier], *c, &format!("strong:{i}")).build().to_value())
            .collect();
        let mut with_weak = core.clone();
        with_weak.extend(weak.iter().enumerate().map(|(i, (t, l, c))| {
            let basis = BASES[t % tier];
            let l = if basis == "insufficient" { "unknown" } else { LABELS[*l] };
            Spec::item(l, basis, *c, &format!("weak:{i}")).build().to_value()
        }));
        let (a, b) = (project_v1(&core, params), project_v1(&with_weak, params));
        prop_assert_eq!(utility_fields(&a), utility_fields(&b));
        prop_assert_eq!(field(&subjects(&b)[0], "effective_evidence_basis").as_str(), Some(BASES[tier]));
    }

    /// One outcome observation alone never decides a subject (an owner correction, a
    /// judgment, may).
    #[test]
    fn v1_a_single_observation_decides_nothing(
        spec in spec_with(&["item", "set", "none"]),
        params in params(),
    ) {
        prop_assume!(spec.basis != "owner_correction");
        let projection = project_v1(&[spec.build().to_value()], params);
        let subject = &subjects(&projection)[0];
        prop_assert_eq!(num(subject, "utility_estimate"), 0.0);
        prop_assert!(matches!(
            field(subject, "effective_utility_label").as_str(),
            Some("unknown" | "neutral")
        ));
    }

    /// Consistent evidence only moves the estimate its way: one more helpful observation
    /// at the effective tier never lowers it, one more harmful never raises it (without
    /// decay, where every observation keeps its weight).
    #[test]
    fn v1_consistent_evidence_moves_the_estimate_its_way(
        tier in 2usize..5,
        base in prop::collection::vec((0usize..3, 0.0f64..=1.0), 1..12),
        extra_label in 0usize..2,
        extra_confidence in 0.0f64..=1.0,
    ) {
        let params = V1Params::default();
        let mut stream: Vec<Value> = base
            .iter()
            .enumerate()
            .map(|(i, (l, c))| Spec::item(LABELS[*l], BASES[tier], *c, &format!("b{i}")).build().to_value())
            .collect();
        let before = num(&subjects(&project_v1(&stream, params))[0], "utility_estimate");
        stream.push(Spec::item(LABELS[extra_label], BASES[tier], extra_confidence, "extra").build().to_value());
        let after = num(&subjects(&project_v1(&stream, params))[0], "utility_estimate");
        if extra_label == 0 {
            prop_assert!(after >= before, "{} then {}", before, after);
        } else {
            prop_assert!(after <= before, "{} then {}", before, after);
        }
    }

    #[test]
    fn every_emitted_v1_projection_passes_the_v1_validator(
        observations in stream(32),
        params in params(),
    ) {
        let projection = project_v1(&observations, params);
        prop_assert_eq!(validate_projection_v1(&projection), Ok(()));
        prop_assert_eq!(validate_projection_v1_subjects(&projection), Ok(()));
    }
}

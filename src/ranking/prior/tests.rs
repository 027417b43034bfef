//! Unit and property tests of the rank prior: bounds, the semantic stage, exact 1.0 for
//! evidence that must not move, partition isolation and deterministic ties.

use std::cmp::Ordering;

use proptest::prelude::*;

use super::profile::ProfileVersion;
use super::*;
use crate::utility::observation::{AttributionLevel, EvidenceBasis, Scope, UtilityLabel};
use crate::utility::reducer::DEFAULT_REDUCER_VERSION;
use crate::wire::json::Value;

const AGENT: &str = "agent:a";

fn partition() -> Partition {
    partition_with(AGENT, "retrieval:1")
}

fn partition_with(agent: &str, retrieval: &str) -> Partition {
    Partition {
        scope: Scope {
            agent_id: agent.into(),
            project_id: "project:p".into(),
            corpus_id: "corpus_c".into(),
            surface_id: "surface.s".into(),
        },
        retrieval_snapshot_ref: retrieval.into(),
        policy_snapshot_ref: "policy:1".into(),
        reducer_version: DEFAULT_REDUCER_VERSION.into(),
    }
}

fn profile() -> Profile {
    Profile {
        schema_version: ProfileVersion,
        profile_id: "profile:test".into(),
        semantic_floor: 0.1,
        candidate_pool: 5,
        modifier_bounds: [0.5, 2.0],
        min_evidence_basis: EvidenceBasis::DeterministicEffect,
        allow_evaluator_inference: false,
        min_support: 1,
        require_attested_tiers: false,
        verdict_max_age_days: None,
        verdict_max_new_deliveries: None,
    }
}

fn digest(i: usize) -> String {
    format!("{i:016x}")
}

fn item(
    d: &str,
    label: UtilityLabel,
    basis: EvidenceBasis,
    u: f64,
    support: usize,
) -> SubjectUtility {
    SubjectUtility {
        level: AttributionLevel::Item,
        memory_ref_digests: vec![d.to_owned()],
        utility_estimate: u,
        effective_label: label,
        effective_basis: basis,
        effective_support: support,
    }
}

fn candidates(scores: &[f64]) -> Vec<Candidate> {
    scores
        .iter()
        .enumerate()
        .map(|(i, s)| Candidate {
            memory_ref_digest: digest(i),
            relevance: *s,
        })
        .collect()
}

fn codes(m: &Modifier) -> Vec<&'static str> {
    m.reasons.iter().map(|r| r.code()).collect()
}

#[test]
fn every_reason_code_has_a_case() {
    let p = profile();
    let d = |i| digest(i);
    let view = UtilityView::new(
        partition(),
        [
            SubjectUtility {
                level: AttributionLevel::Set,
                memory_ref_digests: vec![d(1), d(2)],
                utility_estimate: 0.9,
                effective_label: UtilityLabel::Helpful,
                effective_basis: EvidenceBasis::OwnerCorrection,
                effective_support: 3,
            },
            item(
                &d(3),
                UtilityLabel::Unknown,
                EvidenceBasis::OwnerCorrection,
                0.0,
                1,
            ),
            item(
                &d(4),
                UtilityLabel::Helpful,
                EvidenceBasis::EvaluatorInference,
                0.9,
                4,
            ),
            item(
                &d(5),
                UtilityLabel::Helpful,
                EvidenceBasis::DeterministicEffect,
                0.9,
                1,
            ),
            item(
                &d(6),
                UtilityLabel::Neutral,
                EvidenceBasis::OwnerCorrection,
                0.0,
                2,
            ),
            item(
                &d(7),
                UtilityLabel::Helpful,
                EvidenceBasis::OwnerCorrection,
                0.8,
                1,
            ),
            item(
                &d(8),
                UtilityLabel::Harmful,
                EvidenceBasis::ControlledReplay,
                -0.6,
                2,
            ),
        ],
    )
    .expect("valid view");
    let strict = Profile {
        min_evidence_basis: EvidenceBasis::ControlledReplay,
        ..p.clone()
    };
    let needs_two = Profile {
        min_support: 2,
        ..p.clone()
    };
    assert_eq!(codes(&modifier(&view, &d(0), &p)), ["no_utility_evidence"]);
    assert_eq!(
        codes(&modifier(&view, &d(1), &p)),
        ["set_level_credit_only"]
    );
    assert_eq!(codes(&modifier(&view, &d(3), &p)), ["utility_unknown"]);
    assert_eq!(
        codes(&modifier(&view, &d(4), &p)),
        ["evaluator_inference_excluded"]
    );
    assert_eq!(
        codes(&modifier(&view, &d(5), &strict)),
        ["evidence_tier_below_minimum"]
    );
    assert_eq!(
        codes(&modifier(&view, &d(5), &needs_two)),
        ["support_below_minimum"]
    );
    assert_eq!(codes(&modifier(&view, &d(6), &p)), ["neutral_utility"]);
    let boost = modifier(&view, &d(7), &p);
    assert_eq!(codes(&boost), ["positive_utility_boost"]);
    // s = 0.8 × 1.0 × ½ = 0.4 → 1 + 0.4 × (2 − 1)
    assert_eq!(boost.value, 1.4);
    let cut = modifier(&view, &d(8), &p);
    assert_eq!(
        codes(&cut),
        ["negative_utility_attenuation", "review_proposed"]
    );
    // s = −0.6 × 0.85 × ⅔ = −0.34 → 1 − 0.34 × (1 − 0.5)
    assert_eq!(cut.value, 0.83);
    for i in [0, 1, 3, 4, 6] {
        assert_eq!(modifier(&view, &d(i), &p).value, 1.0);
    }
}

#[test]
fn utility_reorders_inside_the_pool_and_ties_break_by_relevance_then_digest() {
    let d = |i| digest(i);
    let view = UtilityView::new(
        partition(),
        [item(
            &d(1),
            UtilityLabel::Helpful,
            EvidenceBasis::OwnerCorrection,
            1.0,
            9,
        )],
    )
    .expect("valid view");
    let ranking = rank(
        &candidates(&[0.8, 0.7, 0.05]),
        &view,
        &partition(),
        &profile(),
    )
    .expect("ranked");
    assert_eq!(ranking.order(), [d(1).as_str(), d(0).as_str()]);
    assert!(ranking.order_changed());
    assert_eq!(ranking.below_floor_count, 1);
    // Equal relevance and no utility: the digest decides.
    let tied = rank(
        &[
            Candidate {
                memory_ref_digest: d(9),
                relevance: 0.5,
            },
            Candidate {
                memory_ref_digest: d(2),
                relevance: 0.5,
            },
        ],
        &UtilityView::empty(partition()),
        &partition(),
        &profile(),
    )
    .expect("ranked");
    assert_eq!(tied.order(), [d(2).as_str(), d(9).as_str()]);
    assert!(!tied.order_changed());
}

#[test]
fn another_partition_never_applies() {
    let view = UtilityView::empty(partition_with("agent:other", "retrieval:1"));
    let err = rank(&candidates(&[0.5]), &view, &partition(), &profile()).expect_err("mismatch");
    assert_eq!(err, RankPriorError::PartitionMismatch { what: "scope" });
    let view = UtilityView::empty(partition_with(AGENT, "retrieval:2"));
    let err = rank(&candidates(&[0.5]), &view, &partition(), &profile()).expect_err("mismatch");
    assert_eq!(
        err.to_string(),
        "utility retrieval_snapshot_ref does not match the partition: the projection must come from the same scope, snapshot pair and reducer version"
    );
}

#[test]
fn profile_rules_are_enforced_with_clear_messages() {
    let base = r#""profile_id": "p:1", "semantic_floor": 0.2, "candidate_pool": 4, "min_evidence_basis": "deterministic_effect", "min_support": 1"#;
    let parse = |extra: &str| {
        let text = format!("{{{base}, {extra}}}");
        Profile::from_value(&crate::wire::json::parse(&text).expect("json"))
    };
    assert!(parse(r#""modifier_bounds": [0.5, 2]"#).is_ok());
    assert!(parse(r#""modifier_bounds": [1, 1]"#).is_ok());
    for bad in [
        "[1.5, 2]",
        "[0, 2]",
        "[0.5, 0.9]",
        "[0.5, NaN]",
        "[-Infinity, 2]",
        "[0.5]",
    ] {
        let err = parse(&format!(r#""modifier_bounds": {bad}"#)).expect_err(bad);
        assert!(
            err.to_string().starts_with("profile.modifier_bounds"),
            "{bad}: {err}"
        );
    }
    let err = parse(r#""modifier_bounds": [0.5, 2], "min_evidence_basis": "evaluator_inference""#)
        .map(|p| p.min_evidence_basis);
    // A duplicate key keeps the last value, as Python does.
    assert_eq!(
        err.expect_err("needs the flag").to_string(),
        "profile.min_evidence_basis evaluator_inference needs allow_evaluator_inference: true"
    );
    let ok = parse(
        r#""modifier_bounds": [0.5, 2], "min_evidence_basis": "evaluator_inference", "allow_evaluator_inference": true"#,
    )
    .expect("allowed");
    assert!(ok.admits(EvidenceBasis::EvaluatorInference));
    assert_ne!(ok.digest(), profile().digest());
    assert!(ok.digest().starts_with("murp_"));
}

#[test]
fn a_projection_packet_feeds_the_view() {
    use crate::utility::testkit::{Spec, project};
    let helpful = Spec::item("helpful", "owner_correction", 0.9, "evaluation:a");
    let set = Spec {
        level: "set",
        receipt_digests: vec![helpful.item_digest.clone(), "fedcba9876543210".to_owned()],
        ..Spec::item("helpful", "owner_correction", 0.9, "evaluation:b")
    };
    let projection = project(&[helpful.build().to_value(), set.build().to_value()]);
    let view = UtilityView::from_projection(&projection).expect("view");
    let item = view.item(&helpful.item_digest).expect("item subject");
    assert_eq!(item.effective_label, UtilityLabel::Helpful);
    assert_eq!(item.effective_support, 1);
    for d in &set.receipt_digests {
        assert!(view.in_group(d));
    }
    let mut wrong = projection.clone();
    if let Value::Object(m) = &mut wrong {
        m.insert("retrieval_snapshot_ref", "retrieval:elsewhere");
    }
    assert!(UtilityView::from_projection(&wrong).is_err());
}

// ---------------------------------------------------------------------------------------
// Laws
// ---------------------------------------------------------------------------------------

const BASES: [EvidenceBasis; 5] = [
    EvidenceBasis::Insufficient,
    EvidenceBasis::EvaluatorInference,
    EvidenceBasis::DeterministicEffect,
    EvidenceBasis::ControlledReplay,
    EvidenceBasis::OwnerCorrection,
];

fn basis() -> impl Strategy<Value = EvidenceBasis> {
    (0usize..5).prop_map(|i| BASES[i])
}

fn subject_for(d: String) -> impl Strategy<Value = SubjectUtility> {
    (0usize..4, basis(), 0.0f64..=1.0, 0usize..6).prop_map(move |(label, basis, c, support)| {
        let label = UtilityLabel::ALL[label];
        let basis = if label == UtilityLabel::Unknown {
            basis
        } else if basis == EvidenceBasis::Insufficient {
            EvidenceBasis::EvaluatorInference
        } else {
            basis
        };
        let u = match label {
            UtilityLabel::Helpful => c,
            UtilityLabel::Harmful => -c,
            _ => 0.0,
        };
        item(&d, label, basis, u, support)
    })
}

fn profile_strategy() -> impl Strategy<Value = Profile> {
    (
        prop_oneof![Just(0.0), 0.0f64..=1.0],
        1usize..12,
        prop_oneof![Just(1.0), 1e-6f64..=1.0],
        prop_oneof![Just(1.0), 1.0f64..=50.0],
        1usize..5,
        any::<bool>(),
        1usize..4,
    )
        .prop_map(|(floor, pool, lower, upper, min, allow, support)| {
            let min_evidence_basis = if BASES[min] == EvidenceBasis::EvaluatorInference && !allow {
                EvidenceBasis::DeterministicEffect
            } else {
                BASES[min]
            };
            Profile {
                schema_version: ProfileVersion,
                profile_id: "profile:prop".into(),
                semantic_floor: floor,
                candidate_pool: pool,
                modifier_bounds: [lower, upper],
                min_evidence_basis,
                allow_evaluator_inference: allow,
                min_support: support,
                require_attested_tiers: false,
                verdict_max_age_days: None,
                verdict_max_new_deliveries: None,
            }
        })
}

fn relevance() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(0.5), Just(1.0), 0.0f64..=1.0, 0.0f64..=40.0]
}

/// Up to 24 candidates (some relevance ties) and item subjects for a random subset of them.
fn world() -> impl Strategy<Value = (Vec<Candidate>, Vec<SubjectUtility>)> {
    prop::collection::vec((relevance(), any::<bool>()), 0..24).prop_flat_map(|rows| {
        let candidates: Vec<Candidate> = rows
            .iter()
            .enumerate()
            .map(|(i, (r, _))| Candidate {
                memory_ref_digest: digest(i * 7919),
                relevance: *r,
            })
            .collect();
        let subjects: Vec<BoxedStrategy<SubjectUtility>> = rows
            .iter()
            .enumerate()
            .filter(|(_, (_, has))| *has)
            .map(|(i, _)| subject_for(digest(i * 7919)).boxed())
            .collect();
        (Just(candidates), subjects)
    })
}

fn stage(candidates: &[Candidate], profile: &Profile) -> Vec<String> {
    let mut kept: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.relevance >= profile.semantic_floor)
        .collect();
    kept.sort_by(|a, b| {
        b.relevance
            .partial_cmp(&a.relevance)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.memory_ref_digest.cmp(&b.memory_ref_digest))
    });
    kept.into_iter()
        .take(profile.candidate_pool)
        .map(|c| c.memory_ref_digest.clone())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn modifier_is_always_within_the_bounds(
        subject in subject_for(digest(1)),
        profile in profile_strategy(),
    ) {
        let view = UtilityView::new(partition(), [subject]).expect("valid");
        let m = modifier(&view, &digest(1), &profile);
        prop_assert!(m.value >= profile.lower() && m.value <= profile.upper(), "{m:?} {profile:?}");
        prop_assert!(!m.reasons.is_empty());
    }

    #[test]
    fn modifier_is_monotone_in_utility(
        a in 0.0f64..=1.0,
        b in 0.0f64..=1.0,
        basis in 2usize..5,
        support in 1usize..6,
        profile in profile_strategy(),
    ) {
        // From most harmful to most helpful at one tier and support.
        let value = |u: f64| {
            let label = if u > 0.0 {
                UtilityLabel::Helpful
            } else if u < 0.0 {
                UtilityLabel::Harmful
            } else {
                UtilityLabel::Neutral
            };
            let view = UtilityView::new(partition(), [item(&digest(1), label, BASES[basis], u, support)])
                .expect("valid");
            modifier(&view, &digest(1), &profile).value
        };
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        for (x, y) in [(lo, hi), (-hi, -lo), (-lo, hi)] {
            prop_assert!(value(x) <= value(y), "u {x} -> {}, u {y} -> {}", value(x), value(y));
        }
    }

    #[test]
    fn a_candidate_outside_the_semantic_stage_never_appears(
        (candidates, subjects) in world(),
        profile in profile_strategy(),
    ) {
        let view = UtilityView::new(partition(), subjects).expect("valid");
        let ranking = rank(&candidates, &view, &partition(), &profile).expect("ranked");
        let expected = stage(&candidates, &profile);
        for r in &ranking.ranked {
            prop_assert!(expected.contains(&r.memory_ref_digest), "{} outside the stage", r.memory_ref_digest);
        }
        prop_assert_eq!(ranking.ranked.len(), expected.len());
        prop_assert_eq!(
            ranking.below_floor_count + ranking.outside_pool_count + ranking.ranked.len(),
            candidates.len()
        );
    }

    #[test]
    fn reordering_happens_only_among_the_pool(
        (candidates, subjects) in world(),
        profile in profile_strategy(),
    ) {
        let with_utility = rank(&candidates, &UtilityView::new(partition(), subjects).expect("valid"), &partition(), &profile)
            .expect("ranked");
        let without = rank(&candidates, &UtilityView::empty(partition()), &partition(), &profile)
            .expect("ranked");
        let mut a = with_utility.order();
        let mut b = without.order();
        a.sort_unstable();
        b.sort_unstable();
        prop_assert_eq!(a, b, "utility changed the membership of the pool");
        for r in &with_utility.ranked {
            prop_assert!(r.final_rank >= 1 && r.final_rank <= with_utility.ranked.len());
        }
    }

    #[test]
    fn unknown_or_absent_evidence_gives_exactly_the_semantic_order(
        (candidates, subjects) in world(),
        profile in profile_strategy(),
        as_sets in any::<bool>(),
    ) {
        // Keep the subjects but strip anything that may move: unknown labels, or the
        // same digests only as set-level credit.
        let stripped: Vec<SubjectUtility> = subjects
            .into_iter()
            .map(|s| if as_sets {
                SubjectUtility { level: AttributionLevel::Set, ..s }
            } else {
                SubjectUtility { effective_label: UtilityLabel::Unknown, utility_estimate: 0.0, ..s }
            })
            .collect();
        let view = UtilityView::new(partition(), stripped).expect("valid");
        let ranking = rank(&candidates, &view, &partition(), &profile).expect("ranked");
        let expected = stage(&candidates, &profile);
        prop_assert_eq!(ranking.order(), expected.iter().map(String::as_str).collect::<Vec<_>>());
        for r in &ranking.ranked {
            prop_assert_eq!(r.modifier.value, 1.0);
            prop_assert_eq!(r.rank_score, r.relevance);
            prop_assert_eq!(r.final_rank, r.semantic_rank);
        }
        prop_assert!(!ranking.order_changed());
    }

    #[test]
    fn evaluator_inference_only_subjects_do_not_move_when_excluded(
        (candidates, subjects) in world(),
        profile in profile_strategy(),
    ) {
        let profile = Profile {
            allow_evaluator_inference: false,
            min_evidence_basis: if profile.min_evidence_basis == EvidenceBasis::EvaluatorInference {
                EvidenceBasis::DeterministicEffect
            } else {
                profile.min_evidence_basis
            },
            ..profile
        };
        let inferred: Vec<SubjectUtility> = subjects
            .into_iter()
            .map(|s| SubjectUtility { effective_basis: EvidenceBasis::EvaluatorInference, ..s })
            .collect();
        let view = UtilityView::new(partition(), inferred).expect("valid");
        let ranking = rank(&candidates, &view, &partition(), &profile).expect("ranked");
        for r in &ranking.ranked {
            prop_assert_eq!(r.modifier.value, 1.0);
            prop_assert_eq!(r.final_rank, r.semantic_rank);
        }
    }

    #[test]
    fn utility_of_another_scope_or_snapshot_never_applies(
        (candidates, subjects) in world(),
        profile in profile_strategy(),
        which in 0usize..4,
    ) {
        let mut other = partition();
        match which {
            0 => other.scope.agent_id = "agent:b".into(),
            1 => other.scope.corpus_id = "corpus_other".into(),
            2 => other.retrieval_snapshot_ref = "retrieval:2".into(),
            _ => other.policy_snapshot_ref = "policy:2".into(),
        }
        let view = UtilityView::new(other, subjects).expect("valid");
        let result = rank(&candidates, &view, &partition(), &profile);
        prop_assert!(
            matches!(result, Err(RankPriorError::PartitionMismatch { .. })),
            "{result:?}"
        );
    }

    #[test]
    fn ranking_is_deterministic_whatever_the_input_order(
        (candidates, subjects) in world(),
        profile in profile_strategy(),
        seed in any::<u64>(),
    ) {
        let view = UtilityView::new(partition(), subjects).expect("valid");
        let mut shuffled = candidates.clone();
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let a = rank(&candidates, &view, &partition(), &profile).expect("ranked");
        let b = rank(&shuffled, &view, &partition(), &profile).expect("ranked");
        prop_assert_eq!(a, b);
    }
}

#[test]
fn the_digest_check_matches_the_receipt_pattern() {
    use crate::recall::MEMORY_DIGEST_RE;
    for text in [
        "0123456789abcdef",
        "0123456789ABCDEF",
        "0123456789abcde",
        "0123456789abcdef0",
        &format!("sha256:{}", "a".repeat(64)),
        &format!("sha256:{}", "a".repeat(63)),
        &format!("SHA256:{}", "a".repeat(64)),
        "0123456789abcdeg",
        "",
    ] {
        assert_eq!(
            is_memory_digest(text),
            MEMORY_DIGEST_RE.is_match(text),
            "{text}"
        );
    }
}

/// The modifier of one memory with `helpful` and `harmful` deterministic-effect
/// observations at confidence 0.8, reduced by `rules` (the figures of docs/rank-prior.md).
fn documented_modifier(helpful: usize, harmful: usize, v1: bool) -> f64 {
    documented_modifier_at(helpful, harmful, v1, "deterministic_effect", 0.8)
}

fn documented_modifier_at(
    helpful: usize,
    harmful: usize,
    v1: bool,
    basis: &'static str,
    confidence: f64,
) -> f64 {
    use crate::utility::observation::Observation;
    use crate::utility::reducer::{self, V1Params};
    use crate::utility::testkit::{DIGEST_A, Spec};
    let mut specs: Vec<Spec> = (0..helpful)
        .map(|i| Spec::item("helpful", basis, confidence, &format!("good{i}")))
        .collect();
    specs
        .extend((0..harmful).map(|i| Spec::item("harmful", basis, confidence, &format!("bad{i}"))));
    let built: Vec<Observation> = specs.iter().map(Spec::build).collect();
    let refs: Vec<&Observation> = built.iter().collect();
    let id = reducer::subject_id(&built[0]);
    let digests = [DIGEST_A.to_owned()];
    let state = if v1 {
        reducer::v1::reduce_subject_v1(
            &id,
            AttributionLevel::Item,
            &digests,
            &refs,
            V1Params::default(),
        )
        .0
    } else {
        reducer::reduce_subject(&id, AttributionLevel::Item, &digests, &refs)
    };
    let view = UtilityView::new(partition(), [crate::ledger::view::subject_utility(&state)])
        .expect("view");
    modifier(&view, DIGEST_A, &profile()).value
}

/// The worked example and the "where v1 loses" table of docs/rank-prior.md.
#[test]
fn the_v1_figures_of_the_rank_prior_docs_hold() {
    assert_eq!(documented_modifier(1, 7, false), 1.0);
    assert_eq!(documented_modifier(1, 7, true), 0.940278);
    assert_eq!(documented_modifier(2, 14, false), 1.0);
    assert_eq!(documented_modifier(2, 14, true), 0.874221);
    let table = [
        (1, 1.28, 1.0, 0.86, 1.0),
        (2, 1.448, 1.0, 0.776, 1.0),
        (3, 1.5208, 1.008423, 0.7396, 0.995788),
        (5, 1.583147, 1.152784, 0.708427, 0.923608),
        (8, 1.62222, 1.289453, 0.68889, 0.855273),
        (20, 1.666667, 1.497768, 0.666667, 0.751116),
    ];
    // One owner correction at confidence 1.0 weighs ten outcome observations.
    let owner = |helpful, harmful, v1| {
        documented_modifier_at(helpful, harmful, v1, "owner_correction", 1.0)
    };
    assert_eq!(owner(1, 0, false), 1.5);
    assert_eq!(owner(1, 0, true), 1.311131);
    assert_eq!(owner(0, 1, false), 0.75);
    assert_eq!(owner(0, 1, true), 0.844434);
    assert_eq!(owner(1, 1, true), 1.0);
    for (n, v0_helpful, v1_helpful, v0_harmful, v1_harmful) in table {
        assert_eq!(documented_modifier(n, 0, false), v0_helpful, "{n}");
        assert_eq!(documented_modifier(n, 0, true), v1_helpful, "{n}");
        assert_eq!(documented_modifier(0, n, false), v0_harmful, "{n}");
        assert_eq!(documented_modifier(0, n, true), v1_harmful, "{n}");
    }
}

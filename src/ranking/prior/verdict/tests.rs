use crate::obj;
use crate::ranking::prior::Profile;
use crate::wire::json::{Map, Value};
use crate::wire::timestamp::parse_aware;

use super::*;

fn profile() -> Profile {
    Profile::from_value(&Value::Object(obj! {
        "profile_id" => "profile:gate",
        "semantic_floor" => 0.05,
        "candidate_pool" => 8,
        "modifier_bounds" => Value::Array(vec![Value::Float(0.5), Value::Float(2.0)].into()),
        "min_evidence_basis" => "deterministic_effect",
        "min_support" => 1,
    }))
    .expect("a valid profile")
}

const PARTITION: &str = "mur_partition-a";
const LEDGER: &str = "mul_0123456789abcdef0123456789abcdef";
const OBSERVED: &str = "2026-11-30T00:00:00Z";

fn micros(text: &str) -> i128 {
    parse_aware(text).expect("a timestamp").micros
}

/// A sealed, consistent verdict of `kind` (`qualified` when `qualified`).
fn packet(kind: &str, qualified: bool) -> Map {
    let verdict = if qualified { "qualified" } else { "hold" };
    let ledger = if kind == "ledger" {
        Value::Object(obj! {
            "backend" => "sqlite", "ledger_id" => LEDGER, "high_water_seq" => 100,
            "split_seq" => 60,
        })
    } else {
        Value::Null
    };
    let reasons: Vec<Value> = if qualified {
        Vec::new()
    } else {
        vec![Value::from("ndcg_gain_interval_not_above_zero")]
    };
    let mut map = obj! {
        "ok" => qualified,
        "schema_version" => EVALUATION_SCHEMA_VERSION,
        "status" => verdict,
        "verdict" => verdict,
        "reason_codes" => Value::Array(reasons.into()),
        "profile_digest" => profile().digest(),
        "source" => Value::Object(obj! {
            "kind" => kind,
            "ledger" => ledger,
            "partitions" => Value::Array(vec![Value::from(PARTITION)].into()),
            "observed_until" => OBSERVED,
        }),
        "gate" => Value::Object(obj! {
            "ndcg_gain" => Value::Object(obj! {
                "passed" => qualified,
                "difference" => Value::Object(obj! {
                    "estimate" => if qualified { 0.2 } else { -0.1 },
                    "lower" => if qualified { 0.1 } else { -0.2 },
                    "upper" => 0.3,
                }),
            }),
            "scope_leaks" => Value::Object(obj! {"passed" => true, "count" => 0}),
        }),
    };
    seal(&mut map);
    map
}

fn seal(map: &mut Map) {
    let digest = verdict_digest(map);
    map.insert(VERDICT_DIGEST_KEY, digest);
}

fn read(map: &Map) -> Verdict {
    Verdict::from_value(&Value::Object(map.clone()))
}

fn blocks(verdict: &Verdict, ledger: Option<LedgerState<'_>>, allow: bool) -> Option<&'static str> {
    let profile = profile();
    verdict.blocks(&GateContext {
        profile: &profile,
        partition_identity: PARTITION,
        ledger,
        now_micros: micros("2026-12-01T00:00:00Z"),
        allow_simulated: allow,
    })
}

fn this_ledger(high_water_seq: u64) -> Option<LedgerState<'static>> {
    Some(LedgerState {
        ledger_id: Some(LEDGER),
        high_water_seq,
    })
}

#[test]
fn a_sealed_qualified_ledger_verdict_of_this_ledger_and_partition_opens_the_gate() {
    let verdict = read(&packet("ledger", true));
    assert_eq!(verdict.defect, None);
    assert_eq!(blocks(&verdict, this_ledger(120), false), None);
}

#[test]
fn a_hand_written_three_key_verdict_never_opens_the_gate() {
    for schema in [
        "memory_utility_ranking_evaluation_v1",
        EVALUATION_SCHEMA_VERSION,
    ] {
        let forged = Value::Object(obj! {
            "schema_version" => schema,
            "verdict" => "qualified",
            "profile_digest" => profile().digest(),
        });
        let verdict = Verdict::from_value(&forged);
        let expected = if schema == EVALUATION_SCHEMA_VERSION {
            refusal::DIGEST_MISMATCH
        } else {
            refusal::UNBOUND
        };
        assert_eq!(blocks(&verdict, this_ledger(120), true), Some(expected));
    }
    // Not even an object.
    let verdict = Verdict::from_value(&Value::from("qualified"));
    assert_eq!(
        blocks(&verdict, this_ledger(120), true),
        Some(refusal::UNBOUND)
    );
}

#[test]
fn an_edited_hold_fails_its_seal() {
    let mut edited = packet("ledger", false);
    edited.insert("verdict", "qualified");
    assert_eq!(
        blocks(&read(&edited), this_ledger(120), false),
        Some(refusal::DIGEST_MISMATCH)
    );
}

#[test]
fn a_resealed_verdict_whose_figures_contradict_it_is_inconsistent() {
    // status hold, ok false, a negative lower bound, and `verdict: qualified`, resealed.
    let mut contradicting = packet("ledger", false);
    contradicting.insert("verdict", "qualified");
    seal(&mut contradicting);
    assert_eq!(
        blocks(&read(&contradicting), this_ledger(120), false),
        Some(refusal::INCONSISTENT)
    );
    // Every field agrees with "qualified" except one failed check.
    let mut failed_check = packet("ledger", true);
    let mut gate = failed_check
        .get("gate")
        .and_then(Value::as_object)
        .cloned()
        .expect("a gate");
    gate.insert(
        "scope_leaks",
        Value::Object(obj! {"passed" => false, "count" => 3}),
    );
    failed_check.insert("gate", Value::Object(gate));
    seal(&mut failed_check);
    assert_eq!(read(&failed_check).defect, Some(refusal::INCONSISTENT));
}

#[test]
fn a_simulation_verdict_needs_the_explicit_switch() {
    let verdict = read(&packet("simulation", true));
    assert_eq!(blocks(&verdict, None, false), Some(refusal::SIMULATED));
    assert_eq!(blocks(&verdict, None, true), None);
    let hold = read(&packet("simulation", false));
    assert_eq!(blocks(&hold, None, true), Some(refusal::NOT_QUALIFIED));
}

#[test]
fn a_verdict_is_bound_to_its_partition_profile_and_ledger() {
    let verdict = read(&packet("ledger", true));
    let profile = profile();
    let other_partition = verdict.blocks(&GateContext {
        profile: &profile,
        partition_identity: "mur_partition-b",
        ledger: this_ledger(120),
        now_micros: micros("2026-12-01T00:00:00Z"),
        allow_simulated: false,
    });
    assert_eq!(other_partition, Some(refusal::PARTITION_MISMATCH));
    let mut other_profile = profile.clone();
    other_profile.min_support = 2;
    let refused = verdict.blocks(&GateContext {
        profile: &other_profile,
        partition_identity: PARTITION,
        ledger: this_ledger(120),
        now_micros: micros("2026-12-01T00:00:00Z"),
        allow_simulated: false,
    });
    assert_eq!(refused, Some(refusal::PROFILE_MISMATCH));
    let other_ledger = Some(LedgerState {
        ledger_id: Some("mul_ffffffffffffffffffffffffffffffff"),
        high_water_seq: 120,
    });
    assert_eq!(
        blocks(&verdict, other_ledger, false),
        Some(refusal::LEDGER_MISMATCH)
    );
    // Without its ledger (a projection), and on a ledger that has fewer deliveries than
    // the verdict read (a copy, or another ledger with the same identity).
    assert_eq!(
        blocks(&verdict, None, false),
        Some(refusal::LEDGER_MISMATCH)
    );
    assert_eq!(
        blocks(&verdict, this_ledger(99), false),
        Some(refusal::LEDGER_MISMATCH)
    );
}

#[test]
fn an_old_verdict_is_stale_by_days_and_by_new_deliveries() {
    let verdict = read(&packet("ledger", true));
    let mut profile = profile();
    let at = |now: &str, profile: &Profile, high: u64| {
        verdict.blocks(&GateContext {
            profile,
            partition_identity: PARTITION,
            ledger: this_ledger(high),
            now_micros: micros(now),
            allow_simulated: false,
        })
    };
    // The default bound is 30 days after the last held-out episode.
    assert_eq!(at("2026-12-30T00:00:00Z", &profile, 100), None);
    assert_eq!(
        at("2026-12-31T00:00:01Z", &profile, 100),
        Some(refusal::STALE)
    );
    profile.verdict_max_age_days = Some(1);
    let digest_profile = profile.clone();
    // A different bound is a different profile (and digest): re-seal for it.
    let mut sealed = packet("ledger", true);
    sealed.insert("profile_digest", digest_profile.digest());
    seal(&mut sealed);
    let rebound = read(&sealed);
    let check = |now: &str, high: u64, profile: &Profile| {
        rebound.blocks(&GateContext {
            profile,
            partition_identity: PARTITION,
            ledger: this_ledger(high),
            now_micros: micros(now),
            allow_simulated: false,
        })
    };
    assert_eq!(check("2026-12-01T00:00:00Z", 100, &profile), None);
    assert_eq!(
        check("2026-12-01T00:00:01Z", 100, &profile),
        Some(refusal::STALE)
    );
    profile.verdict_max_age_days = None;
    profile.verdict_max_new_deliveries = Some(10);
    sealed.insert("profile_digest", profile.digest());
    seal(&mut sealed);
    let rebound = read(&sealed);
    let refused = |high: u64| {
        rebound.blocks(&GateContext {
            profile: &profile,
            partition_identity: PARTITION,
            ledger: this_ledger(high),
            now_micros: micros("2026-12-01T00:00:00Z"),
            allow_simulated: false,
        })
    };
    assert_eq!(refused(110), None);
    assert_eq!(refused(111), Some(refusal::STALE));
}

#[test]
fn a_hold_keeps_the_prior_off_after_its_bindings_pass() {
    let verdict = read(&packet("ledger", false));
    assert_eq!(verdict.defect, None);
    assert_eq!(
        blocks(&verdict, this_ledger(120), false),
        Some(refusal::NOT_QUALIFIED)
    );
}

#[test]
fn newer_data_of_the_same_ledger_is_newer() {
    let older = read(&packet("ledger", false));
    let mut newer_packet = packet("ledger", true);
    let mut source = newer_packet
        .get("source")
        .and_then(Value::as_object)
        .cloned()
        .expect("a source");
    source.insert(
        "ledger",
        Value::Object(obj! {
            "backend" => "sqlite", "ledger_id" => LEDGER, "high_water_seq" => 150,
            "split_seq" => 90,
        }),
    );
    newer_packet.insert("source", Value::Object(source));
    seal(&mut newer_packet);
    let newer = read(&newer_packet);
    assert!(newer.newer_than(&older));
    assert!(!older.newer_than(&newer));
    assert!(!read(&packet("simulation", true)).newer_than(&older));
}

//! Tests of the evaluation on logged traffic: the time split, the estimators on a world
//! whose answer is known, support, too little traffic, and the export round trip.

use crate::ledger::traffic::TrafficRow;
use crate::ranking::evaluate::ledger::ReducerOpener;
use crate::ranking::evaluate::profile::EvaluationProfile;
use crate::ranking::evaluate::rng::Rng;
use crate::recall::traffic::{
    ApplyEvent, ApplyEventKind, ExplorationDraw, LoggingPolicyKind, RecallFacts, Shown,
    TrafficEvent, TrafficEventVersion, TrafficPartition, TrafficScope, explore, outcome_event,
    recall_event,
};
use crate::utility::observation::Observation;
use crate::utility::testkit::Spec;
use crate::wire::json::Value;

use super::episodes::{self, LoggedData, LoggedSplit};
use super::{Origin, evaluate};

/// The testkit's partition (its observations land there).
fn partition() -> TrafficPartition {
    TrafficPartition {
        scope: TrafficScope {
            agent_id: "agent:stage2".into(),
            project_id: "project:loopx".into(),
            corpus_id: "reward-memory-corpus".into(),
            surface_id: "loopx.issue_fix".into(),
        },
        retrieval_snapshot_ref: "retrieval:stage2".into(),
        policy_snapshot_ref: "policy:stage2".into(),
    }
}

fn memory(i: usize) -> String {
    format!("{:016x}", 0xa0 + i)
}

/// The memory that truly helps: shown first it succeeds 90% of the time, every other
/// memory 30%.
const GOOD: usize = 2;

fn minute(i: usize) -> String {
    format!(
        "2026-09-{:02}T{:02}:{:02}:00Z",
        1 + i / 1440,
        (i / 60) % 24,
        i % 60
    )
}

/// A helpful deterministic-effect observation of the good memory (what a verified test
/// tied to it gives), delivered before any recall.
fn evidence() -> Vec<Observation> {
    let mut spec = Spec::item("helpful", "deterministic_effect", 0.8, "v1");
    spec.item_digest = memory(GOOD);
    spec.receipt_digests = vec![memory(GOOD)];
    vec![spec.build()]
}

struct Event {
    event: TrafficEvent,
}

/// `n` recalls of five memories (relevance 0.60, 0.55, 0.50, 0.45, 0.40; semantic order
/// puts the good one third), shown in semantic order or, with probability `epsilon`, in
/// a random order; the agent applies the shown top; the outcome follows the truth above.
fn world(n: usize, epsilon: f64, seed: u64) -> Vec<TrafficRow> {
    let candidates: Vec<(String, Option<f64>)> = (0..5)
        .map(|i| (memory(i), Some(0.6 - 0.05 * i as f64)))
        .collect();
    let mut events: Vec<Event> = Vec::new();
    for i in 0..n {
        let mut rng = Rng::stream(seed, "logged-world", i as u64);
        let draw = ExplorationDraw {
            coin: rng.unit(),
            seed: rng.next_u64(),
        };
        let policy: Vec<usize> = (0..5).collect();
        let (shown_order, explored) = explore(&policy, |_| true, epsilon, draw);
        let shown = Shown {
            candidates: candidates.clone(),
            policy_order: policy,
            shown_order: shown_order.clone(),
            in_pool: vec![true; 5],
            epsilon,
        };
        let recall_id = format!("rms_{i:032x}");
        events.push(Event {
            event: recall_event(RecallFacts {
                recall_id: &recall_id,
                observed_at: &minute(3 * i),
                partition: partition(),
                kind: LoggingPolicyKind::Semantic,
                profile_digest: None,
                explored,
                shown: &shown,
                shadow: None,
            }),
        });
        let top = shown_order[0];
        let receipt = format!("rma_{i:064x}");
        events.push(Event {
            event: TrafficEvent::Apply(ApplyEvent {
                schema_version: TrafficEventVersion,
                event_kind: ApplyEventKind,
                recall_id,
                observed_at: minute(3 * i + 1),
                application_receipt_id: receipt.clone(),
                outcome: "applied".into(),
                applied: vec![memory(top)],
                partition: partition(),
            }),
        });
        let success = rng.chance(if top == GOOD { 0.9 } else { 0.3 });
        events.push(Event {
            event: outcome_event(
                &receipt,
                &format!("effect:{i}"),
                if success { "succeeded" } else { "failed" },
                partition(),
                &minute(3 * i + 2),
            ),
        });
    }
    rows(events.into_iter().map(|e| e.event).collect())
}

fn rows(events: Vec<TrafficEvent>) -> Vec<TrafficRow> {
    events
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let a = e.to_append();
            TrafficRow {
                seq: i as i64 + 1,
                delivery_seq: 1,
                kind: a.kind,
                partition: a.partition,
                recall_id: a.recall_id,
                application_receipt_id: a.application_receipt_id,
                observed_at: a.observed_at,
                event: a.event,
            }
        })
        .collect()
}

fn data_of(rows: &[TrafficRow]) -> LoggedData {
    let built = episodes::build(rows, 1).expect("episodes");
    LoggedData {
        episodes: built.episodes,
        deliveries: evidence(),
    }
}

fn origin() -> Origin {
    Origin::Ledger {
        backend: "sqlite",
        ledger_id: Some("mul_0123456789abcdef0123456789abcdef".to_owned()),
        high_water_seq: 1,
        traffic_high_water_seq: 0,
        split_seq: 1,
        partitions: vec![partition()],
    }
}

fn verdict(data: &LoggedData) -> Value {
    let mut profile = EvaluationProfile::defaults();
    profile.evaluation.bootstrap_resamples = 200.0;
    evaluate(data, &profile, &origin(), &ReducerOpener).expect("evaluation")
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    v.as_object()?.at(path)
}

fn num(v: &Value, path: &[&str]) -> f64 {
    match at(v, path) {
        Some(Value::Float(f)) => *f,
        Some(Value::Int(i)) => *i as f64,
        other => panic!("{path:?} is {other:?}"),
    }
}

fn arm<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get("arms")
        .and_then(Value::as_array)
        .and_then(|arms| {
            arms.iter()
                .find(|a| a.get("arm").and_then(Value::as_str) == Some(key))
        })
        .expect("arm")
}

fn reasons(v: &Value) -> Vec<String> {
    crate::wire::json::str_items(v.get("reason_codes"))
}

#[test]
fn the_split_holds_out_the_latest_usable_recalls_and_hides_later_outcomes_from_training() {
    let mut events: Vec<TrafficEvent> = Vec::new();
    let all = world(10, 0.0, 3);
    let parsed: Vec<TrafficEvent> = all
        .iter()
        .map(|r| crate::recall::traffic::parse_event(&r.event).expect("event"))
        .collect();
    // Recall 6's outcome (index 6·3 + 2) is logged only after recall 8 (index 24).
    for (i, e) in parsed.iter().enumerate() {
        if i == 20 {
            continue;
        }
        events.push(e.clone());
        if i == 24 {
            events.push(parsed[20].clone());
        }
    }
    let mut rows = rows(events);
    // The deliveries grow as the log does: each row recorded the high water of its time.
    for (i, r) in rows.iter_mut().enumerate() {
        r.delivery_seq = i as i64;
    }
    let built = episodes::build(&rows, 99).expect("episodes");
    let splits: Vec<LoggedSplit> = built.episodes.iter().map(|e| e.split).collect();
    let held = LoggedSplit::HeldOut;
    let train = LoggedSplit::Training;
    // 10 usable episodes: the latest ceil(0.3 · 10) = 3 are held out.
    assert_eq!(
        splits,
        vec![
            train, train, train, train, train, train, train, held, held, held
        ]
    );
    // Recall 8 (the first held out) was row 21 (recall 7's outcome moved later): every
    // delivery up to the high water it recorded may train.
    assert_eq!(built.split_seq, 20);
    // Recall 6 applied before the split, but its outcome was logged after it: training
    // does not know it.
    assert_eq!(built.episodes[6].outcome_status, None);
    assert!(built.episodes[6].applied.is_some());
    assert!(built.episodes[5].outcome_status.is_some());
    // Held-out episodes keep what followed them.
    assert!(
        built.episodes[7..]
            .iter()
            .all(|e| e.outcome_status.is_some())
    );
}

#[test]
fn exploration_lets_the_estimators_recover_the_value_of_each_top_memory() {
    let data = data_of(&world(2000, 0.5, 1));
    let v = verdict(&data);
    assert_eq!(
        v.get("verdict").and_then(Value::as_str),
        Some("qualified"),
        "{:?}",
        reasons(&v)
    );
    assert_eq!(
        at(&v, &["source", "kind"]).and_then(Value::as_str),
        Some("ledger")
    );
    // The truth: 0.9 with the good memory first (the bounded prior's top), 0.3 with the
    // semantic top.
    let bounded = arm(&v, "bounded_utility");
    let semantic = arm(&v, "semantic");
    for (a, truth) in [(bounded, 0.9), (semantic, 0.3)] {
        for estimator in ["snips", "ips", "doubly_robust"] {
            let e = num(a, &[estimator, "estimate"]);
            assert!((e - truth).abs() < 0.12, "{estimator}: {e} vs {truth}");
            let (lo, hi) = (num(a, &[estimator, "lower"]), num(a, &[estimator, "upper"]));
            assert!(lo <= e && e <= hi, "{estimator}: {lo} {e} {hi}");
        }
    }
    assert!(num(&v, &["gate", "snips_gain", "difference", "lower"]) > 0.3);
    assert!(num(bounded, &["effective_sample_size"]) >= 30.0);
    assert_eq!(
        at(&v, &["gate", "best_arm_by_snips"]).and_then(Value::as_str),
        Some("bounded_utility")
    );
    // The logging policy itself earned about 0.5·0.3 + 0.5·(0.2·0.9 + 0.8·0.3) = 0.36.
    let logged = num(&v, &["held_out", "logged_value", "estimate"]);
    assert!((logged - 0.36).abs() < 0.06, "{logged}");
}

#[test]
fn without_exploration_the_prior_has_no_off_policy_support_and_holds() {
    let data = data_of(&world(400, 0.0, 2));
    let v = verdict(&data);
    assert_eq!(v.get("verdict").and_then(Value::as_str), Some("hold"));
    let r = reasons(&v);
    assert!(
        r.contains(&"insufficient_off_policy_support".to_owned()),
        "{r:?}"
    );
    assert!(!r.contains(&"insufficient_held_out_traffic".to_owned()));
    let bounded = arm(&v, "bounded_utility");
    assert_eq!(num(bounded, &["matched_episodes"]), 0.0);
    assert_eq!(num(bounded, &["unsupported_episodes"]), 120.0);
    assert!(at(bounded, &["snips", "estimate"]).is_some_and(Value::is_null));
}

#[test]
fn too_little_traffic_is_a_hold_that_says_so_and_nothing_else() {
    for n in [0, 1, 20] {
        let data = data_of(&world(n, 0.5, 4));
        let v = verdict(&data);
        assert_eq!(v.get("verdict").and_then(Value::as_str), Some("hold"));
        assert_eq!(
            reasons(&v),
            vec!["insufficient_held_out_traffic".to_owned()]
        );
        assert_eq!(v.get("ok"), Some(&Value::Bool(false)));
    }
}

#[test]
fn an_export_read_back_gives_the_same_figures() {
    let data = data_of(&world(300, 0.3, 5));
    let text = episodes::write_jsonl(&data).expect("export");
    assert!(episodes::is_logged_file(text.as_bytes()));
    let parsed = episodes::parse_jsonl(text.as_bytes()).expect("parse");
    assert_eq!(parsed.data, data);
    assert_eq!(parsed.observation_lines, 1);
    let (a, b) = (verdict(&data), verdict(&parsed.data));
    for key in [
        "verdict",
        "reason_codes",
        "traffic",
        "held_out",
        "ledger",
        "arms",
        "differences",
        "gate",
    ] {
        assert_eq!(a.get(key), b.get(key), "{key}");
    }
    // One malformed line names its number.
    let broken = text.replacen("\"split\": \"training\"", "\"split\": \"later\"", 1);
    let err = episodes::parse_jsonl(broken.as_bytes()).expect_err("malformed");
    assert!(
        err.to_string()
            .contains("line 2: split must be training or held_out"),
        "{err}"
    );
}

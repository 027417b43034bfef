//! The traffic log (issue 22) through the binary: `recall`, `apply` and
//! `utility-attribute` append public-safe events to the ledger they are given; shadow
//! mode changes nothing in the printed recall; `--explore` randomizes within the pool and
//! logs propensities; a logging failure never fails the recall; and `rank-evaluate
//! --ledger` turns the log into a verdict whose `source.kind` is `ledger` (a `hold` with
//! `insufficient_held_out_traffic` on a small loop, never an error packet; sane estimates
//! on enough traffic; `--export-episodes` read back gives the same figures).
//!
//! The tests named `traffic_log_*` that take a backend also run against PostgreSQL when
//! `REWARD_MEMORY_TEST_PG_URL` is set (`scripts/postgres-it.sh`).

use serde_json::{Value, json};

use reward_memory::ledger::engine::{self, Record};
use reward_memory::ledger::{LedgerError, Location};
use reward_memory::ranking::evaluate::rng::Rng;
use reward_memory::recall::traffic::{
    ApplyEvent, ApplyEventKind, ExplorationDraw, LoggingPolicyKind, RecallFacts, Shown,
    TrafficEvent, TrafficEventVersion, TrafficPartition, TrafficScope, explore, outcome_event,
    recall_event,
};
use reward_memory::utility::observation::{
    AttributionLevel, EvidenceBasis, Observation, Scope, UtilityLabel,
};
use reward_memory::wire::timestamp::parse_aware;

use crate::recall::{ingest_memories, loop_setup, recall, routed};
use crate::support::{Run, Scratch, mask_session, pretty, schema_named};
use crate::utility_ledger::{Backend, backends, fresh_ledger};

fn conforms(run: &Run) {
    let packet = reward_memory::wire::json::parse(&run.stdout).expect("JSON");
    if let Err(err) = reward_memory::schema::check(
        &packet,
        &schema_named("memory_utility_ranking_evaluation_v1"),
    ) {
        panic!("the verdict does not conform: {err}");
    }
}

/// `apply --outcome applied` of the recall's first result, logged in `ledger`.
pub fn apply_first(s: &Scratch, packet: &Value, ledger: &str, n: usize) -> Value {
    let session = packet["recall_session_ref"].as_str().expect("session");
    let memory_ref = packet["results"][0]["memory_ref"].as_str().expect("ref");
    let run = routed(
        s,
        &[
            "apply",
            "--recall-session",
            session,
            "--application-id",
            &format!("application:traffic-{n}"),
            "--artifact-ref",
            &format!("pr:traffic-{n}"),
            "--outcome",
            "applied",
            "--memory-ref",
            memory_ref,
            "--reasoning-summary",
            "Ran the focused test suite before pushing",
            "--current-artifact-verified",
            "--ledger",
            ledger,
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(run.stderr, "", "the apply event was logged");
    run.json()
}

/// `utility-attribute` of an apply's receipt: a verified success of its memory, into
/// `ledger`.
pub fn attribute(s: &Scratch, applied: &Value, ledger: &str, n: usize) -> Value {
    s.write(&format!("apply-{n}.json"), &pretty(applied));
    let digest = applied["receipt"]["memory_ref_digests"][0]
        .as_str()
        .expect("digest");
    let run = routed(
        s,
        &[
            "utility-attribute",
            "--receipt",
            &format!("apply-{n}.json"),
            "--outcome-ref",
            &format!("effect:traffic-{n}"),
            "--outcome-status",
            "succeeded",
            "--verified",
            "--evidence",
            &format!("test:ci-{n}:passed:{digest}"),
            "--ledger",
            ledger,
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(run.stderr, "", "the outcome event was logged");
    run.json()
}

/// The traffic log's events, in sequence order.
pub fn stored_events(s: &Scratch, backend: &Backend, ledger: &str) -> Vec<Value> {
    match backend {
        Backend::Sqlite => {
            let db = rusqlite::Connection::open(s.path.join(ledger)).expect("ledger");
            let mut stmt = db
                .prepare("SELECT event FROM traffic_events ORDER BY seq")
                .expect("traffic table");
            stmt.query_map([], |r| r.get::<_, String>(0))
                .expect("rows")
                .map(|t| serde_json::from_str(&t.expect("row")).expect("JSON"))
                .collect()
        }
        Backend::Postgres(_) => {
            let mut client = postgres::Client::connect(ledger, postgres::NoTls).expect("db");
            client
                .query(
                    "SELECT event FROM utility_ledger_traffic_events ORDER BY seq",
                    &[],
                )
                .expect("rows")
                .iter()
                .map(|r| serde_json::from_str(r.get::<_, &str>(0)).expect("JSON"))
                .collect()
        }
    }
}

/// The acceptance loop: real `recall`, `apply` and `utility-attribute` calls build the
/// log; `rank-evaluate --ledger` prints a `hold` verdict from the ledger (too little
/// traffic), exit 2, never an error packet.
#[test]
fn traffic_log_a_loop_of_real_calls_gives_a_ledger_verdict_that_holds_on_too_little_traffic() {
    for backend in backends() {
        let s = loop_setup();
        ingest_memories(&s);
        let ledger = fresh_ledger(&s, &backend, "ledger");
        // The first round creates the ledger (traffic only: the prior would need it to exist).
        let first = recall(&s, &["--ledger", &ledger]);
        assert_eq!(first.code, 0, "{}", first.transcript());
        assert_eq!(first.stderr, "", "the recall event was logged");
        let applied = apply_first(&s, &first.json(), &ledger, 0);
        let attributed = attribute(&s, &applied, &ledger, 0);
        s.write(
            "attributed-partition.json",
            &pretty(&attributed["attributions"][0]["partition"]),
        );
        let prior = [
            "--rank-prior",
            "profile.json",
            "--partition",
            "attributed-partition.json",
        ];
        for n in 1..4 {
            // Shadow mode: the prior stays off (no verdict), its ranking is logged, and the
            // printed recall is the one without a ledger.
            let mut with_ledger = prior.to_vec();
            with_ledger.extend(["--ledger", ledger.as_str()]);
            let shadowed = recall(&s, &with_ledger);
            assert_eq!(shadowed.code, 0, "{}", shadowed.transcript());
            assert_eq!(shadowed.stderr, "");
            let packet = shadowed.json();
            assert_eq!(packet["rank_prior_applied"], false);
            assert_eq!(
                packet["rank_prior_reason_code"],
                "rank_prior_evaluation_missing"
            );
            let projected = routed(
                &s,
                &[
                    "utility-ledger",
                    "project",
                    "--ledger",
                    &ledger,
                    "--input",
                    "attributed-partition.json",
                    "--format",
                    "json",
                ],
            );
            s.write("projection.json", &projected.stdout);
            let mut without = prior.to_vec();
            without.extend(["--projection", "projection.json"]);
            let plain = recall(&s, &without);
            assert_eq!(
                mask_session(&shadowed.stdout),
                mask_session(&plain.stdout),
                "shadow mode changes nothing in the printed recall"
            );
            let applied = apply_first(&s, &packet, &ledger, n);
            attribute(&s, &applied, &ledger, n);
        }

        let events = stored_events(&s, &backend, &ledger);
        let kinds: Vec<&str> = events
            .iter()
            .map(|e| e["event_kind"].as_str().expect("kind"))
            .collect();
        assert_eq!(kinds.iter().filter(|k| **k == "recall").count(), 4);
        assert_eq!(kinds.iter().filter(|k| **k == "apply").count(), 4);
        assert_eq!(kinds.iter().filter(|k| **k == "outcome").count(), 4);
        let shadows: Vec<&Value> = events
            .iter()
            .filter(|e| e["event_kind"] == "recall" && !e["shadow"].is_null())
            .collect();
        assert_eq!(shadows.len(), 3, "the three prior recalls logged a shadow");
        assert_eq!(
            shadows[0]["shadow"]["ranks"].as_array().map(Vec::len),
            Some(2)
        );
        // Public-safe: no query text or summary, no opaque or raw ref, no content.
        let text = serde_json::to_string(&events).expect("text");
        for secret in [
            "test commits",
            "review habits",
            "provider-",
            "candidate:",
            "embedded:",
        ] {
            let hits = text.matches(secret).count();
            let allowed = if secret == "embedded:" {
                // The retrieval snapshot ref names the provider.
                text.matches("retrieval:embedded:").count()
            } else {
                0
            };
            assert_eq!(hits, allowed, "{secret} in {text}");
        }
        for e in events.iter().filter(|e| e["event_kind"] == "recall") {
            for c in e["candidates"].as_array().expect("candidates") {
                assert_eq!(c["memory_ref_digest"].as_str().map(str::len), Some(16));
                assert_eq!(c["propensity"], 1.0);
            }
        }

        // The verdict from the ledger: a hold, with the reason, exit 2.
        let args = [
            "rank-evaluate",
            "--ledger",
            ledger.as_str(),
            "--partition",
            "attributed-partition.json",
            "--format",
            "json",
        ];
        let verdict = s.run(&args, None);
        assert_eq!(verdict.code, 2, "{}", verdict.transcript());
        conforms(&verdict);
        let v = verdict.json();
        assert_eq!(v["schema_version"], "memory_utility_ranking_evaluation_v1");
        assert_eq!(v["verdict"], "hold");
        assert_eq!(v["status"], "hold");
        assert_eq!(v["reason_codes"], json!(["insufficient_held_out_traffic"]));
        assert_eq!(v["source"]["kind"], "ledger");
        let name = match backend {
            Backend::Sqlite => "sqlite",
            Backend::Postgres(_) => "postgres",
        };
        assert_eq!(v["source"]["ledger"]["backend"], name);
        let ledger_id = v["source"]["ledger"]["ledger_id"]
            .as_str()
            .expect("the ledger has an identity")
            .to_owned();
        assert!(ledger_id.starts_with("mul_"), "{ledger_id}");
        assert!(
            v["verdict_digest"]
                .as_str()
                .is_some_and(|d| d.starts_with("murv_"))
        );
        assert_eq!(v["source"]["ledger"]["high_water_seq"], 4);
        assert_eq!(v["source"]["ledger"]["traffic_high_water_seq"], 12);
        assert_eq!(v["traffic"]["recalls"], 4);
        assert_eq!(v["traffic"]["shadow_recalls"], 3);
        assert_eq!(v["source"]["partitions"].as_array().map(Vec::len), Some(1));
        assert!(
            v["source"]["observed_until"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
        // ceil(0.3 · 4) = 2 held out; training saw the deliveries before the first of them.
        assert_eq!(v["source"]["held_out_episodes"], 2);
        assert_eq!(v["source"]["training_episodes"], 2);
        assert_eq!(v["source"]["ledger"]["split_seq"], 2);
        assert_eq!(v["ledger"]["deliveries"], 2);
        let markdown = s.run(&args[..args.len() - 2], None);
        assert_eq!(markdown.code, 2);
        assert!(
            markdown
                .stderr
                .contains("reward-memory: hold: insufficient_held_out_traffic"),
            "{}",
            markdown.stderr
        );
        assert!(markdown.stdout.contains("## Gate"), "{}", markdown.stdout);

        // Every partition of the log, and a partition without traffic, also hold.
        let all = s.run(
            &[
                "rank-evaluate",
                "--ledger",
                &ledger,
                "--all-partitions",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(all.code, 2, "{}", all.transcript());
        assert_eq!(all.json()["traffic"]["recalls"], 4);
        let mut other: Value = serde_json::from_str(
            &std::fs::read_to_string(s.path.join("attributed-partition.json")).expect("partition"),
        )
        .expect("JSON");
        other["policy_snapshot_ref"] = json!("policy:elsewhere");
        s.write("other-partition.json", &pretty(&other));
        let none = s.run(
            &[
                "rank-evaluate",
                "--ledger",
                &ledger,
                "--partition",
                "other-partition.json",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(none.code, 2, "{}", none.transcript());
        assert_eq!(none.json()["verdict"], "hold");
        assert_eq!(
            none.json()["reason_codes"],
            json!(["insufficient_held_out_traffic"])
        );

        // Recorded in the ledger it was computed from, the hold is the verdict a recall of
        // that partition finds (no --evaluation file): bound to this ledger, the
        // partition and the profile, it keeps the prior off as a hold.
        // The loop's recalls happened in July 2026: a profile that accepts verdicts up to
        // ten years old, and its evaluation profile.
        let mut aged: Value = serde_json::from_str(
            &std::fs::read_to_string(s.path.join("profile.json")).expect("profile"),
        )
        .expect("JSON");
        aged["verdict_max_age_days"] = json!(3650);
        s.write("profile-aged.json", &pretty(&aged));
        s.write(
            "evaluation-profile-aged.json",
            &pretty(&json!({"rank_prior": aged})),
        );
        let mut record = args[..args.len() - 2].to_vec();
        record.extend(["--profile", "evaluation-profile-aged.json", "--record"]);
        let recorded = s.run(&record, None);
        assert_eq!(recorded.code, 2, "{}", recorded.transcript());
        assert!(
            recorded.stderr.contains(&format!("(ledger {ledger_id})")),
            "{}",
            recorded.stderr
        );
        let gated = [
            "--rank-prior",
            "profile-aged.json",
            "--partition",
            "attributed-partition.json",
            "--ledger",
            ledger.as_str(),
        ];
        let held = recall(&s, &gated);
        assert_eq!(held.code, 0, "{}", held.transcript());
        assert_eq!(
            held.json()["rank_prior_reason_code"],
            "ranking_evaluation_not_qualified"
        );

        // The ledger's own checks ignore the traffic tables.
        let verify = s.run(&["utility-ledger", "verify", "--ledger", &ledger], None);
        assert_eq!(verify.code, 0, "{}", verify.transcript());
        let export = s.run(&["utility-ledger", "export", "--ledger", &ledger], None);
        assert_eq!(export.code, 0, "{}", export.transcript());
        assert_eq!(export.stdout.lines().count(), 4);
    }
}

#[test]
fn traffic_log_an_applied_prior_is_the_logging_policy_and_has_no_shadow() {
    for backend in backends() {
        let s = loop_setup();
        ingest_memories(&s);
        let ledger = fresh_ledger(&s, &backend, "ledger");
        let first = recall(&s, &["--ledger", &ledger]).json();
        let applied = apply_first(&s, &first, &ledger, 0);
        let attributed = attribute(&s, &applied, &ledger, 0);
        s.write(
            "attributed-partition.json",
            &pretty(&attributed["attributions"][0]["partition"]),
        );
        let run = recall(
            &s,
            &[
                "--rank-prior",
                "profile.json",
                "--partition",
                "attributed-partition.json",
                "--ledger",
                &ledger,
                "--evaluation",
                "evaluation.json",
                "--allow-simulated-evaluation",
            ],
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert_eq!(run.stderr, "");
        let packet = run.json();
        assert_eq!(packet["rank_prior_applied"], true);
        let events = stored_events(&s, &backend, &ledger);
        let last = events.last().expect("the recall event");
        assert_eq!(last["event_kind"], "recall");
        assert_eq!(last["logging_policy"]["kind"], "rank_prior");
        assert_eq!(
            last["logging_policy"]["profile_digest"],
            packet["rank_prior"]["profile_digest"]
        );
        assert_eq!(last["shadow"], Value::Null);
        // The applied profile is part of the policy: another partition than the first
        // recall's.
        assert_eq!(
            last["partition"]["policy_snapshot_ref"],
            packet["policy_snapshot_ref"]
        );
        assert_ne!(
            last["partition"]["policy_snapshot_ref"],
            events[0]["partition"]["policy_snapshot_ref"]
        );
        let shown: Vec<i64> = last["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .filter_map(|c| c["shown_rank"].as_i64())
            .collect();
        assert_eq!(
            shown.len(),
            packet["results"].as_array().map_or(0, Vec::len)
        );
    }
}

/// A traffic append is not synced and leaves the write-ahead log beside the ledger (no
/// checkpoint on close); the next delivery append, synced and checkpointed, folds it in.
#[test]
fn a_traffic_append_leaves_the_wal_and_the_next_delivery_append_folds_it_in() {
    let s = loop_setup();
    ingest_memories(&s);
    let wal = s.path.join("ledger.sqlite3-wal");
    let first = recall(&s, &["--ledger", "ledger.sqlite3"]).json();
    let applied = apply_first(&s, &first, "ledger.sqlite3", 0);
    assert!(
        std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0),
        "the traffic log's events wait in the -wal"
    );
    attribute(&s, &applied, "ledger.sqlite3", 0);
    // utility-attribute's own outcome event waits there too; a plain delivery append (the
    // export re-appended: a duplicate) checkpoints it all on close.
    let export = s.run(
        &["utility-ledger", "export", "--ledger", "ledger.sqlite3"],
        None,
    );
    s.write("export.jsonl", &export.stdout);
    let append = s.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            "ledger.sqlite3",
            "--input",
            "export.jsonl",
        ],
        None,
    );
    assert_eq!(append.code, 0, "{}", append.transcript());
    assert!(
        std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
        "the delivery append checkpointed them into the file"
    );
    let events = stored_events(&s, &Backend::Sqlite, "ledger.sqlite3");
    assert_eq!(events.len(), 3, "recall, apply and outcome");
    let verify = s.run(
        &["utility-ledger", "verify", "--ledger", "ledger.sqlite3"],
        None,
    );
    assert_eq!(verify.code, 0, "{}", verify.transcript());
}

#[test]
fn traffic_log_a_ledger_without_traffic_keeps_its_layout() {
    let s = loop_setup();
    ingest_memories(&s);
    let packet = recall(&s, &[]).json();
    let session = packet["recall_session_ref"].as_str().expect("session");
    let memory_ref = packet["results"][0]["memory_ref"].as_str().expect("ref");
    let applied = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            session,
            "--application-id",
            "application:plain",
            "--artifact-ref",
            "pr:plain",
            "--outcome",
            "applied",
            "--memory-ref",
            memory_ref,
            "--reasoning-summary",
            "Ran the focused test suite before pushing",
            "--current-artifact-verified",
            "--format",
            "json",
        ],
    )
    .json();
    attribute(&s, &applied, "ledger.sqlite3", 0);
    let db = rusqlite::Connection::open(s.path.join("ledger.sqlite3")).expect("ledger");
    let traffic: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'traffic%'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(traffic, 0, "no traffic table without traffic");
}

#[test]
fn traffic_log_explore_randomizes_within_the_pool_and_logs_propensities() {
    for backend in backends() {
        let s = loop_setup();
        ingest_memories(&s);
        let ledger = fresh_ledger(&s, &backend, "ledger");
        let semantic = recall(&s, &[]).json();
        let order = |p: &Value| -> Vec<String> {
            p["results"]
                .as_array()
                .expect("results")
                .iter()
                .map(|r| r["candidate_ref"].as_str().expect("ref").to_owned())
                .collect()
        };
        let mut changed = false;
        for _ in 0..16 {
            let run = recall(&s, &["--ledger", &ledger, "--explore", "1"]);
            assert_eq!(run.code, 0, "{}", run.transcript());
            assert_eq!(run.stderr, "");
            let p = run.json();
            let mut a = order(&p);
            let mut b = order(&semantic);
            changed |= a != b;
            a.sort();
            b.sort();
            assert_eq!(a, b, "exploration only re-orders the pool");
            let ranks: Vec<i64> = p["results"]
                .as_array()
                .expect("results")
                .iter()
                .map(|r| r["rank"].as_i64().expect("rank"))
                .collect();
            assert_eq!(ranks, vec![1, 2]);
        }
        assert!(
            changed,
            "sixteen uniform permutations of two kept the order"
        );
        let events = stored_events(&s, &backend, &ledger);
        assert_eq!(events.len(), 16);
        for e in &events {
            assert_eq!(e["logging_policy"]["epsilon"], 1.0);
            assert_eq!(e["logging_policy"]["explored"], true);
            assert_eq!(e["logging_policy"]["pool_size"], 2);
            for c in e["candidates"].as_array().expect("candidates") {
                assert_eq!(c["propensity"], 0.5, "{e}");
                assert_eq!(c["in_pool"], true);
            }
        }
    }
}

#[test]
fn explore_is_validated_and_needs_the_traffic_log() {
    let s = loop_setup();
    for bad in ["1.5", "-0.1", "x"] {
        let run = recall(&s, &["--ledger", "ledger.sqlite3", "--explore", bad]);
        assert_eq!(run.code, 2, "{}", run.transcript());
        assert!(
            run.stderr
                .contains("--explore must be a number from 0 to 1"),
            "{}",
            run.stderr
        );
    }
    let run = recall(&s, &["--explore", "0.2"]);
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert_eq!(
        run.json()["error"],
        "--explore needs the traffic log, which records the random order's propensities: give --ledger [LOCATION] or set REWARD_MEMORY_LEDGER"
    );
}

#[test]
fn a_traffic_log_that_cannot_be_written_does_not_fail_the_recall_or_the_apply() {
    let s = loop_setup();
    ingest_memories(&s);
    s.write(
        "not-a-ledger.sqlite3",
        "this is not a database, it is a text file\n",
    );
    let plain = recall(&s, &[]);
    let run = recall(&s, &["--ledger", "not-a-ledger.sqlite3"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(mask_session(&run.stdout), mask_session(&plain.stdout));
    assert!(
        run.stderr
            .starts_with("reward-memory: warning: the recall's traffic event was not logged: "),
        "{}",
        run.stderr
    );
    let packet = run.json();
    let applied = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            packet["recall_session_ref"].as_str().expect("session"),
            "--application-id",
            "application:x",
            "--artifact-ref",
            "pr:x",
            "--outcome",
            "ignored",
            "--reasoning-summary",
            "Not relevant here",
            "--ledger",
            "not-a-ledger.sqlite3",
            "--format",
            "json",
        ],
    );
    assert_eq!(applied.code, 0, "{}", applied.transcript());
    assert!(
        applied
            .stderr
            .contains("reward-memory: warning: the apply event was not logged: "),
        "{}",
        applied.stderr
    );
    assert_eq!(
        std::fs::read_to_string(s.path.join("not-a-ledger.sqlite3")).expect("file"),
        "this is not a database, it is a text file\n"
    );
}

// ---------------------------------------------------------------------------------------
// Enough traffic: a log built through the public append functions
// ---------------------------------------------------------------------------------------

fn partition() -> TrafficPartition {
    TrafficPartition {
        scope: TrafficScope {
            agent_id: "agent:traffic".into(),
            project_id: "project:traffic".into(),
            corpus_id: "traffic-corpus".into(),
            surface_id: "loopx.issue_fix".into(),
        },
        retrieval_snapshot_ref: "retrieval:traffic".into(),
        policy_snapshot_ref: "policy:traffic".into(),
    }
}

fn memory(i: usize) -> String {
    format!("{:016x}", 0xb0 + i)
}

/// The log's clock: minute `i` after `start`.
fn minute_after(start: &chrono::DateTime<chrono::Utc>, i: usize) -> String {
    (*start + chrono::Duration::minutes(i as i64))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn september() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-09-01T00:00:00Z")
        .expect("time")
        .to_utc()
}

/// What a built log holds.
struct LogWorld {
    partition: TrafficPartition,
    recalls: usize,
    epsilon: f64,
    /// Verified tests tied to the good memory: helpful deterministic-effect items.
    checks: usize,
    /// The first recall's time.
    start: chrono::DateTime<chrono::Utc>,
}

/// The `i`-th verified test tied to the good memory (before the first recall): one
/// helpful deterministic-effect item.
fn evidence(world: &LogWorld, good: usize, i: usize) -> Vec<u8> {
    let at = minute_after(&(world.start - chrono::Duration::days(1)), i);
    let p = &world.partition;
    let mut o = Observation {
        observation_id: Default::default(),
        scope: Scope {
            agent_id: p.scope.agent_id.as_str().into(),
            project_id: p.scope.project_id.as_str().into(),
            corpus_id: p.scope.corpus_id.as_str().into(),
            surface_id: p.scope.surface_id.as_str().into(),
        },
        application_receipt_id: format!("rma_{}", "cd".repeat(32)).into(),
        memory_ref_digests: vec![memory(good)],
        retrieval_snapshot_ref: p.retrieval_snapshot_ref.as_str().into(),
        policy_snapshot_ref: p.policy_snapshot_ref.as_str().into(),
        outcome_ref: "effect:traffic".into(),
        utility_label: UtilityLabel::Helpful,
        attribution_level: AttributionLevel::Item,
        evidence_basis: EvidenceBasis::DeterministicEffect,
        confidence: 0.8,
        reason_codes: vec!["deterministic_check_passed".to_owned()],
        evidence_refs: vec![format!("test:ci-{}", i + 1)],
        evaluator_ref: "evaluator:deterministic".into(),
        evaluation_version: "memory_utility_attribution_v0".into(),
        created_at: at.as_str().into(),
        created_instant: parse_aware(&at).expect("timestamp"),
    };
    o.observation_id = o.computed_id().into();
    reward_memory::wire::json::dumps(&o.to_value(), engine::COMPACT).into_bytes()
}

/// `recalls` recalls of five memories in semantic order (the good one third) explored
/// with probability `epsilon`; the agent applies the shown top; the outcome succeeds 90%
/// of the time with the good memory first, 30% otherwise. Appended through
/// `ledger::traffic::append` (and the evidence, one verified test, through the ledger's
/// append engine).
fn build_log(location: &Location, recalls: usize, epsilon: f64) -> Result<(), LedgerError> {
    // The partition's only verified test is a day before the first recall.
    let start = september();
    build_world(
        location,
        &LogWorld {
            partition: partition(),
            recalls,
            epsilon,
            checks: 1,
            start,
        },
    )
}

/// [`build_log`] of any partition, number of verified tests and start.
fn build_world(location: &Location, world: &LogWorld) -> Result<(), LedgerError> {
    let good = 2;
    let (recalls, epsilon) = (world.recalls, world.epsilon);
    let mut backend = reward_memory::ledger::open(location, &Default::default())?;
    let records: Vec<_> = (0..world.checks)
        .map(|i| {
            Ok(Record::Item {
                line: i as u64 + 1,
                bytes: evidence(world, good, i),
            })
        })
        .collect();
    engine::append(backend.as_mut(), Box::new(records.into_iter()))?;
    let candidates: Vec<(String, Option<f64>)> = (0..5)
        .map(|i| (memory(i), Some(0.6 - 0.05 * i as f64)))
        .collect();
    let mut events = Vec::new();
    for i in 0..recalls {
        let mut rng = Rng::stream(7, "cli-traffic-world", i as u64);
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
        let receipt = format!("rma_{i:064x}");
        let top = shown_order[0];
        let success = rng.chance(if top == good { 0.9 } else { 0.3 });
        let minute = |m: usize| minute_after(&world.start, m);
        events.push(recall_event(RecallFacts {
            recall_id: &recall_id,
            observed_at: &minute(3 * i),
            partition: world.partition.clone(),
            kind: LoggingPolicyKind::Semantic,
            profile_digest: None,
            explored,
            shown: &shown,
            shadow: None,
        }));
        events.push(TrafficEvent::Apply(ApplyEvent {
            schema_version: TrafficEventVersion,
            event_kind: ApplyEventKind,
            recall_id,
            observed_at: minute(3 * i + 1),
            application_receipt_id: receipt.clone(),
            outcome: "applied".into(),
            applied: vec![memory(top)],
            partition: world.partition.clone(),
        }));
        events.push(outcome_event(
            &receipt,
            &format!("effect:{i}"),
            if success { "succeeded" } else { "failed" },
            world.partition.clone(),
            &minute(3 * i + 2),
        ));
    }
    for chunk in events.chunks(600) {
        let rows: Vec<_> = chunk.iter().map(TrafficEvent::to_append).collect();
        reward_memory::ledger::traffic::append(backend.as_mut(), &rows)?;
    }
    Ok(())
}

#[test]
fn traffic_log_with_enough_explored_traffic_estimates_are_sane_and_the_export_agrees() {
    for backend in backends() {
        let s = Scratch::new();
        let ledger = fresh_ledger(&s, &backend, "ledger");
        let location = match &backend {
            Backend::Sqlite => Location::Sqlite(s.path.join(&ledger)),
            Backend::Postgres(_) => Location::Postgres(ledger.clone()),
        };
        build_log(&location, 1500, 0.5).expect("log");
        s.write(
            "partition.json",
            &pretty(&json!({
                "scope": {"agent_id": "agent:traffic", "project_id": "project:traffic",
                          "corpus_id": "traffic-corpus", "surface_id": "loopx.issue_fix"},
                "retrieval_snapshot_ref": "retrieval:traffic",
                "policy_snapshot_ref": "policy:traffic",
            })),
        );
        let run = s.run(
            &[
                "rank-evaluate",
                "--ledger",
                &ledger,
                "--partition",
                "partition.json",
                "--export-episodes",
                "episodes.jsonl",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        conforms(&run);
        let v = run.json();
        assert_eq!(v["verdict"], "qualified", "{}", v["reason_codes"]);
        assert_eq!(v["source"]["kind"], "ledger");
        assert_eq!(v["held_out"]["episodes"], 450);
        let arm = |key: &str| -> Value {
            v["arms"]
                .as_array()
                .expect("arms")
                .iter()
                .find(|a| a["arm"] == key)
                .cloned()
                .expect("arm")
        };
        let (bounded, semantic) = (arm("bounded_utility"), arm("semantic"));
        for (a, truth) in [(&bounded, 0.9), (&semantic, 0.3)] {
            for estimator in ["snips", "ips", "doubly_robust"] {
                let e = a[estimator]["estimate"].as_f64().expect("estimate");
                assert!((e - truth).abs() < 0.12, "{estimator} {e} vs {truth}");
            }
        }
        assert!(
            v["gate"]["snips_gain"]["difference"]["lower"]
                .as_f64()
                .is_some_and(|l| l > 0.2)
        );
        assert_eq!(v["gate"]["best_arm_by_snips"], "bounded_utility");

        // The export evaluates to the same figures.
        let again = s.run(
            &[
                "rank-evaluate",
                "--input",
                "episodes.jsonl",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(again.code, 0, "{}", again.transcript());
        conforms(&again);
        let w = again.json();
        assert_eq!(w["source"]["kind"], "episodes_file");
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
            assert_eq!(v[key], w[key], "{key}");
        }
        if matches!(backend, Backend::Sqlite) {
            let markdown = s.run(
                &[
                    "rank-evaluate",
                    "--ledger",
                    &ledger,
                    "--partition",
                    "partition.json",
                    "--detail",
                ],
                None,
            );
            crate::snap!("traffic_log_rank_evaluate_ledger_qualified", markdown);
        }
    }
}

#[test]
fn traffic_log_without_exploration_the_shadow_prior_lacks_off_policy_support() {
    for backend in backends() {
        let s = Scratch::new();
        let ledger = fresh_ledger(&s, &backend, "ledger");
        let location = match &backend {
            Backend::Sqlite => Location::Sqlite(s.path.join(&ledger)),
            Backend::Postgres(_) => Location::Postgres(ledger.clone()),
        };
        build_log(&location, 300, 0.0).expect("log");
        let run = s.run(
            &[
                "rank-evaluate",
                "--ledger",
                &ledger,
                "--all-partitions",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(run.code, 2, "{}", run.transcript());
        let v = run.json();
        assert_eq!(v["verdict"], "hold");
        assert_eq!(
            v["reason_codes"][0], "insufficient_off_policy_support",
            "{}",
            v["reason_codes"]
        );
    }
}

/// `fixtures/rank_evaluate/logged/explored.jsonl` (the fuzz seed of the logged-episodes
/// reader and an example of the format) is what `--export-episodes` writes for a
/// 30-recall explored log; `rank-evaluate --input` of it holds on too little traffic.
#[test]
fn the_committed_logged_episodes_fixture_is_what_the_export_writes() {
    let s = Scratch::new();
    let ledger = s.path.join("ledger.sqlite3");
    build_log(&Location::Sqlite(ledger.clone()), 30, 0.5).expect("log");
    let run = s.run(
        &[
            "rank-evaluate",
            "--ledger",
            &ledger.to_string_lossy(),
            "--all-partitions",
            "--export-episodes",
            "explored.jsonl",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert_eq!(
        run.json()["reason_codes"],
        json!(["insufficient_held_out_traffic"])
    );
    let written = std::fs::read_to_string(s.path.join("explored.jsonl")).expect("export");
    let path = crate::support::fixtures_dir().join("rank_evaluate/logged/explored.jsonl");
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
        std::fs::write(&path, &written).expect("write fixture");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == written,
        "regenerate {} with UPDATE_FIXTURES=1 cargo test --test cli the_committed_logged",
        path.display()
    );
    let again = crate::support::run(&[
        "rank-evaluate",
        "--input",
        &path.to_string_lossy(),
        "--format",
        "json",
    ]);
    assert_eq!(again.code, 2, "{}", again.transcript());
    assert_eq!(again.json()["source"]["kind"], "episodes_file");
    assert_eq!(again.json()["traffic"], run.json()["traffic"]);
}

/// Issue 23: a partition read under `memory_utility_reducer_v1` gets a ledger verdict of
/// its own. `rank-evaluate --ledger --partition P` with P naming the v1 reducer reads the
/// same traffic, gates `bounded_utility_v1`, names the partition by its v1 `mur_`
/// identity and records the verdict; `recall --rank-prior --ledger` applies the prior for
/// that v1 partition, and the v0 partition (another identity) still has no verdict.
#[test]
fn a_v1_partitions_ledger_verdict_gates_its_own_bounded_arm_and_binds_recall_for_it() {
    let s = loop_setup();
    ingest_memories(&s);
    let partition: Value = serde_json::from_str(
        &std::fs::read_to_string(s.path.join("partition.json")).expect("partition"),
    )
    .expect("JSON");
    let scope = &partition["scope"];
    let text = |v: &Value| v.as_str().expect("text").to_owned();
    let world = LogWorld {
        partition: TrafficPartition {
            scope: TrafficScope {
                agent_id: text(&scope["agent_id"]),
                project_id: text(&scope["project_id"]),
                corpus_id: text(&scope["corpus_id"]),
                surface_id: text(&scope["surface_id"]),
            },
            retrieval_snapshot_ref: text(&partition["retrieval_snapshot_ref"]),
            policy_snapshot_ref: text(&partition["policy_snapshot_ref"]),
        },
        recalls: 1500,
        epsilon: 0.5,
        // Enough consistent evidence for v1's credible bound to promote the good memory
        // past the semantic top (one check, as in build_log, moves v1 not at all).
        checks: 10,
        // Recent traffic, so that the verdict is not stale.
        start: chrono::Utc::now() - chrono::Duration::days(4),
    };
    let ledger = s.path.join("ledger.sqlite3");
    build_world(&Location::Sqlite(ledger.clone()), &world).expect("log");
    let ledger = ledger.to_string_lossy().into_owned();
    let mut v1 = partition.clone();
    v1["reducer_version"] = json!("memory_utility_reducer_v1");
    s.write("partition-v1.json", &pretty(&v1));
    let profile = crate::support::fixtures_dir()
        .join("recall/loop/evaluation-profile.json")
        .to_string_lossy()
        .into_owned();
    let evaluate = |partition: &str, record: bool| {
        let mut args = vec![
            "rank-evaluate",
            "--ledger",
            ledger.as_str(),
            "--partition",
            partition,
            "--profile",
            profile.as_str(),
            "--format",
            "json",
        ];
        if record {
            args.extend(["--record", "--export-episodes", "episodes-v1.jsonl"]);
        }
        routed(&s, &args)
    };

    let run = evaluate("partition-v1.json", true);
    assert_eq!(run.code, 0, "{}", run.transcript());
    conforms(&run);
    let v = run.json();
    assert_eq!(v["verdict"], "qualified", "{}", v["reason_codes"]);
    assert_eq!(v["reducer_version"], "memory_utility_reducer_v1");
    assert_eq!(v["gate"]["arm"], "bounded_utility_v1");
    let v1_identity = reward_memory::ranking::prior::Partition::from_value(
        &reward_memory::wire::json::parse(&v1.to_string()).expect("JSON"),
    )
    .expect("partition")
    .reducer_identity();
    assert_eq!(v["source"]["partitions"], json!([v1_identity]));
    assert_eq!(v["reducer_comparison"]["arm"], "bounded_utility_v1");
    assert!(
        run.stderr.contains("qualified verdict murv_"),
        "{}",
        run.stderr
    );
    // The export names the reducer on every episode line and evaluates the same way.
    let export = std::fs::read_to_string(s.path.join("episodes-v1.jsonl")).expect("export");
    assert!(
        export
            .lines()
            .filter(|l| l.contains("memory_utility_logged_episode_v0"))
            .all(|l| l.contains(r#""reducer_version": "memory_utility_reducer_v1""#))
    );
    let again = routed(
        &s,
        &[
            "rank-evaluate",
            "--input",
            "episodes-v1.jsonl",
            "--profile",
            &profile,
            "--format",
            "json",
        ],
    );
    assert_eq!(again.code, 0, "{}", again.transcript());
    let w = again.json();
    for key in [
        "verdict",
        "reducer_version",
        "arms",
        "reducer_comparison",
        "gate",
    ] {
        assert_eq!(v[key], w[key], "{key}");
    }
    assert_eq!(v["source"]["partitions"], w["source"]["partitions"]);
    // The same traffic under v0: another identity, arm 3 gated.
    let v0 = evaluate("partition.json", false).json();
    assert_eq!(v0["gate"]["arm"], "bounded_utility");
    assert_ne!(v0["source"]["partitions"], v["source"]["partitions"]);
    let arm = |packet: &Value, key: &str| -> Value {
        packet["arms"]
            .as_array()
            .expect("arms")
            .iter()
            .find(|a| a["arm"] == key)
            .cloned()
            .expect("arm")
    };
    assert_eq!(
        arm(&v0, "bounded_utility_v1"),
        arm(&v, "bounded_utility_v1"),
        "the same arms on the same logged episodes, whichever reducer is gated"
    );

    let recall_with = |partition: &str| {
        let run = recall(
            &s,
            &[
                "--rank-prior",
                "profile.json",
                "--partition",
                partition,
                "--ledger",
                &ledger,
            ],
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        run.json()
    };
    let applied = recall_with("partition-v1.json");
    assert_eq!(
        applied["rank_prior_applied"], true,
        "{}",
        applied["rank_prior_reason_code"]
    );
    assert_eq!(
        applied["rank_prior"]["reducer_version"],
        "memory_utility_reducer_v1"
    );
    let v0_recall = recall_with("partition.json");
    assert_eq!(v0_recall["rank_prior_applied"], false);
    assert_eq!(
        v0_recall["rank_prior_reason_code"],
        "rank_prior_evaluation_missing"
    );
}

//! `recall`: the explicit form (fixtures), the configured form on the embedded store, the
//! private session, and the whole attribution loop through the binary: ingest → recall →
//! apply → utility-observe → utility-project → recall --rank-prior (off without a
//! qualified `rank-evaluate` verdict; with one, order changed) → rank-prior --execute
//! (exact readback, idempotent).

use std::os::unix::fs::PermissionsExt as _;

use serde_json::{Value, json};

use crate::ingest_event::conforms;
use crate::support::mask_session;
use crate::support::{
    Run, Scratch, assert_invalid_request, file_stem as stem, fixture_files, fixtures_dir, pretty,
    read_json, run_with_file,
};
use crate::{snap, snap_masked};

fn recall_file(path: &std::path::Path) -> Run {
    let args = ["recall", "--input", "input.json", "--format", "json"];
    run_with_file(path, "input.json", &args)
}

#[test]
fn valid_explicit_requests_recall_fail_open() {
    let files = fixture_files("recall", "valid");
    assert!(!files.is_empty());
    for path in files {
        let run = recall_file(&path);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stdout);
        conforms("reward_memory_recall_v0", &run);
        let packet = run.json();
        assert_eq!(packet["recall_session_ref"], Value::Null);
        assert_eq!(packet["rank_prior_applied"], false);
        snap_masked!(format!("recall_valid_{}", stem(&path)), run, mask_session);
    }
}

#[test]
fn invalid_explicit_requests_print_an_invalid_request_packet() {
    let files = fixture_files("recall", "invalid");
    assert!(!files.is_empty());
    for path in files {
        let run = recall_file(&path);
        assert_invalid_request(&run, &path);
        snap!(format!("recall_invalid_{}", stem(&path)), run);
    }
}

// ---------------------------------------------------------------------------------------
// The embedded loop
// ---------------------------------------------------------------------------------------

/// A scratch dir with the embedded example route (registry repo `project`), the loop's
/// three memory events, profile, partition, observation template and the `rank-evaluate`
/// verdict that qualifies the profile (`fixtures/recall/loop/evaluation.json`).
pub fn loop_setup() -> Scratch {
    let s = Scratch::new();
    let embedded = fixtures_dir().join("ingest_event/embedded");
    let mut registry = read_json(&embedded.join("registry.json"));
    registry["goals"][0]["repo"] = json!("project");
    s.write("registry.json", &pretty(&registry));
    let config_rel = "project/.loopx/config/reward-memory/experiment.json";
    s.write(config_rel, &pretty(&read_json(&embedded.join(config_rel))));
    for name in [
        "event-a.json",
        "event-b.json",
        "event-c.json",
        "profile.json",
        "partition.json",
        "observe.json",
        "evaluation.json",
    ] {
        s.write(
            name,
            &pretty(&read_json(&fixtures_dir().join("recall/loop").join(name))),
        );
    }
    s
}

/// `--registry registry.json --runtime-root rt <args>`.
pub fn routed(s: &Scratch, args: &[&str]) -> Run {
    let mut all = vec!["--registry", "registry.json", "--runtime-root", "rt"];
    all.extend_from_slice(args);
    s.run(&all, None)
}

/// Ingests the three loop memories with `--execute`.
pub fn ingest_memories(s: &Scratch) {
    for event in ["event-a.json", "event-b.json", "event-c.json"] {
        let run = routed(
            s,
            &[
                "ingest-event",
                "--input",
                event,
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--execute",
                "--format",
                "json",
            ],
        );
        assert_eq!(run.json()["status"], "activated", "{}", run.stdout);
    }
}

/// A sealed `memory_utility_ranking_evaluation_v1` verdict (`qualified` or `hold`) of an
/// episodes file for the profile in `profile_file` and the loop's partition, whose last
/// held-out episode is `observed_until`: the parts the gate reads, sealed as
/// `rank-evaluate` seals them.
pub fn sealed_verdict(
    s: &Scratch,
    profile_file: &str,
    verdict: &str,
    observed_until: &str,
) -> String {
    use reward_memory::ranking::prior::{Partition, Profile, verdict::verdict_digest};
    use reward_memory::wire::json as wire;
    let parse = |file: &str| {
        wire::parse(&std::fs::read_to_string(s.path.join(file)).expect("readable")).expect("JSON")
    };
    let profile = Profile::from_value(&parse(profile_file)).expect("profile");
    let partition = Partition::from_value(&parse("partition.json")).expect("partition");
    let qualified = verdict == "qualified";
    let mut packet = json!({
        "ok": qualified,
        "schema_version": "memory_utility_ranking_evaluation_v1",
        "status": verdict,
        "verdict": verdict,
        "reason_codes": if qualified { json!([]) } else { json!(["ndcg_gain_interval_not_above_zero"]) },
        "profile_digest": profile.digest(),
        "source": {
            "kind": "episodes_file",
            "ledger": null,
            "partitions": [partition.reducer_identity()],
            "observed_until": observed_until,
        },
        "gate": {
            "ndcg_gain": {"passed": qualified, "difference": {"lower": if qualified { 0.1 } else { -0.1 }}},
            "scope_leaks": {"passed": true, "count": 0},
        },
    });
    let ours = wire::parse(&packet.to_string()).expect("JSON");
    packet["verdict_digest"] = json!(verdict_digest(ours.as_object().expect("object")));
    packet.to_string()
}

/// Writes `evaluation.json`: [`sealed_verdict`] observed now.
pub fn write_verdict(s: &Scratch, profile_file: &str, verdict: &str) {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    s.write(
        "evaluation.json",
        &sealed_verdict(s, profile_file, verdict, &now),
    );
}

/// The configured recall of the loop (`test commits`), plus `extra` flags.
pub fn recall(s: &Scratch, extra: &[&str]) -> Run {
    let mut args = vec![
        "recall",
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
        "--query",
        "test commits",
        "--query-summary",
        "review habits",
        "--observed-at",
        "2026-07-16T01:00:00+00:00",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    routed(s, &args)
}

fn candidates(packet: &Value) -> Vec<String> {
    packet["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["candidate_ref"].as_str().expect("string").to_owned())
        .collect()
}

/// Every byte of every file under `dir` (recursively) but the embedded store's, for a
/// search.
fn all_bytes_under(dir: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            out.extend(all_bytes_under(&path));
        } else if name.starts_with("embedded.sqlite3") {
            continue;
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.extend(bytes);
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn deliver_content_hands_the_caller_each_summary_and_stores_it_nowhere() {
    let s = loop_setup();
    ingest_memories(&s);
    // The summaries are in the store: measure what the runtime root held before.
    let summaries = [
        "Run the focused test suite before pushing a branch.",
        "Prefer small reversible commits over sweeping rewrites.",
    ];
    let plain = recall(&s, &["--ledger", "ledger.sqlite3"]);
    assert!(
        !plain.stdout.contains("delivered_content"),
        "{}",
        plain.stdout
    );
    let run = recall(&s, &["--deliver-content", "--ledger", "ledger.sqlite3"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    conforms("reward_memory_recall_v0", &run);
    let packet = run.json();
    let results = packet["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    let mut delivered: Vec<&str> = Vec::new();
    for result in results {
        // The corpus is private: the public field stays null.
        assert_eq!(result["content_summary"], Value::Null);
        let content = &result["delivered_content"];
        assert_eq!(
            content["schema_version"],
            "reward_memory_delivered_content_v0"
        );
        assert_eq!(content["visibility"], "caller_private");
        assert_eq!(content["persisted"], false);
        delivered.push(content["content_summary"].as_str().expect("summary"));
    }
    delivered.sort_unstable();
    let mut expected = summaries.to_vec();
    expected.sort_unstable();
    assert_eq!(delivered, expected);
    // apply on the delivered recall, with the traffic log.
    let session = packet["recall_session_ref"].as_str().expect("session");
    let memory_ref = results[0]["memory_ref"].as_str().expect("ref");
    let apply = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            session,
            "--application-id",
            "application:deliver-1",
            "--artifact-ref",
            "pr:deliver-1",
            "--outcome",
            "applied",
            "--memory-ref",
            memory_ref,
            "--reasoning-summary",
            "Ran the focused suite",
            "--current-artifact-verified",
            "--ledger",
            "ledger.sqlite3",
            "--format",
            "json",
        ],
    );
    assert_eq!(apply.code, 0, "{}", apply.stdout);
    // Neither the session, the stored receipt, the traffic log nor the ledger holds a
    // summary: only the embedded store (where ingest wrote the memory) does.
    let mut stored = all_bytes_under(&s.path.join("rt"));
    for name in ["ledger.sqlite3", "ledger.sqlite3-wal"] {
        stored.extend(std::fs::read(s.path.join(name)).unwrap_or_default());
    }
    assert!(
        contains(&stored, "rms_"),
        "the session and the traffic log were written"
    );
    for summary in summaries {
        assert!(!contains(&stored, summary), "{summary} was stored");
        assert!(
            !apply.stdout.contains(summary),
            "{summary} is in the receipt"
        );
    }
}

#[test]
fn the_attribution_loop_runs_through_the_binary_and_utility_changes_the_order() {
    let s = loop_setup();
    ingest_memories(&s);

    // recall: two memories match; the commits memory ranks first on relevance.
    let first = recall(&s, &[]);
    assert_eq!(first.code, 0, "{}", first.stdout);
    conforms("reward_memory_recall_v0", &first);
    assert!(!first.stdout.contains("embedded://"), "no raw provider ref");
    let packet = first.json();
    assert_eq!(packet["status"], "completed");
    let semantic = candidates(&packet);
    assert_eq!(semantic.len(), 2);
    let r0 = packet["results"][0]["relevance_score"]
        .as_f64()
        .expect("score");
    let r1 = packet["results"][1]["relevance_score"]
        .as_f64()
        .expect("score");
    assert!(0.0 < r1 && r1 <= r0 && r0 < 1.0, "{r0} {r1}");
    assert_eq!(packet["results"][1]["rank"], 2);
    let session = packet["recall_session_ref"]
        .as_str()
        .expect("session")
        .to_owned();
    let file = s
        .path
        .join("rt/reward-memory/recall-sessions")
        .join(format!("{session}.json"));
    let meta = std::fs::metadata(&file).expect("session file");
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o600,
        "the session is private"
    );
    let dir_mode = std::fs::metadata(file.parent().expect("dir"))
        .expect("session dir")
        .permissions()
        .mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    assert!(
        meta.modified().expect("mtime") > std::time::SystemTime::now(),
        "the modification time is the expiry"
    );
    snap_masked!("recall_loop_first", first, mask_session);

    // apply: the agent used the second memory (the test-suite habit).
    let memory_ref = packet["results"][1]["memory_ref"].as_str().expect("ref");
    let applied = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            &session,
            "--application-id",
            "application:loop-1",
            "--artifact-ref",
            "pr:loop-1",
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
    );
    assert_eq!(applied.code, 0, "{}", applied.stdout);
    conforms("reward_memory_application_v0", &applied);
    let application = applied.json();
    assert_eq!(application["status"], "applied");
    assert_eq!(
        application["receipt"]["memory_ref_digests"],
        json!([packet["results"][1]["memory_ref_digest"]])
    );
    snap_masked!("recall_loop_apply", applied, mask_session);

    // utility-observe accepts the receipt unchanged.
    let mut observe = read_json(&fixtures_dir().join("recall/loop/observe.json"));
    observe["application_receipt"] = application["receipt"].clone();
    observe["evaluator_proposal"]["memory_ref_digests"] =
        application["receipt"]["memory_ref_digests"].clone();
    s.write("observe-filled.json", &pretty(&observe));
    let observed = s.run(
        &[
            "utility-observe",
            "--input",
            "observe-filled.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(observed.code, 0, "{}", observed.stdout);
    let observation = observed.json();
    assert_eq!(
        observation["application_receipt_id"],
        application["application_receipt_id"]
    );

    // utility-project reduces it (the ledger append joins here once it lands).
    let mut project = read_json(&fixtures_dir().join("recall/loop/partition.json"));
    project["observations"] = json!([observation]);
    s.write("project.json", &pretty(&project));
    let projected = s.run(
        &[
            "utility-project",
            "--input",
            "project.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(projected.json()["status"], "ready", "{}", projected.stdout);
    s.write("projection.json", &projected.stdout);

    // recall --rank-prior without a verdict: the prior stays off (fail-open), the
    // semantic order stands and the packet says why.
    let prior_flags = [
        "--rank-prior",
        "profile.json",
        "--projection",
        "projection.json",
        "--partition",
        "partition.json",
    ];
    let ungated = recall(&s, &prior_flags);
    assert_eq!(ungated.code, 0, "{}", ungated.stdout);
    conforms("reward_memory_recall_v0", &ungated);
    let ungated = ungated.json();
    assert_eq!(ungated["rank_prior_applied"], false);
    assert_eq!(
        ungated["rank_prior_reason_code"],
        "rank_prior_evaluation_missing"
    );
    assert_eq!(ungated["rank_prior"], Value::Null);
    assert_eq!(candidates(&ungated), semantic);

    // With the qualified verdict `rank-evaluate` printed for this profile: the applied,
    // helpful memory now ranks first.
    let gated: Vec<&str> = prior_flags
        .iter()
        .copied()
        .chain([
            "--evaluation",
            "evaluation.json",
            "--allow-simulated-evaluation",
        ])
        .collect();
    let second = recall(&s, &gated);
    assert_eq!(second.code, 0, "{}", second.stdout);
    conforms("reward_memory_recall_v0", &second);
    let reranked = second.json();
    assert_eq!(reranked["rank_prior_applied"], true);
    assert_eq!(reranked["rank_prior"]["order_changed"], true);
    let mut expected = semantic.clone();
    expected.reverse();
    assert_eq!(candidates(&reranked), expected);
    assert_eq!(
        reranked["rank_prior"]["candidates"][0]["reason_codes"],
        json!(["positive_utility_boost"])
    );
    snap_masked!("recall_loop_rank_prior", second, mask_session);

    // The default stays off: the same recall without --rank-prior keeps the old order.
    assert_eq!(candidates(&recall(&s, &[]).json()), semantic);

    // Utility cannot rescue a memory below the semantic floor: with a floor between the
    // two relevances the boosted memory is dropped, and apply refuses its ref. (Another
    // floor is another profile digest: the loop's verdict does not cover it, so the test
    // writes one for it.)
    let mut strict = read_json(&s.path.join("profile.json"));
    strict["semantic_floor"] = json!((r0 + r1) / 2.0);
    s.write("profile-floor.json", &pretty(&strict));
    let floor_flags = [
        "--rank-prior",
        "profile-floor.json",
        "--projection",
        "projection.json",
        "--partition",
        "partition.json",
        "--evaluation",
        "evaluation.json",
    ];
    assert_eq!(
        recall(&s, &floor_flags).json()["rank_prior_reason_code"],
        "ranking_evaluation_profile_mismatch"
    );
    write_verdict(&s, "profile-floor.json", "qualified");
    let floored = recall(&s, &floor_flags).json();
    assert_eq!(candidates(&floored), semantic[..1].to_vec());
    assert_eq!(
        floored["rank_prior"]["semantic_stage"]["below_floor_count"],
        1
    );
    let dropped = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            floored["recall_session_ref"].as_str().expect("session"),
            "--application-id",
            "application:loop-2",
            "--artifact-ref",
            "pr:loop-2",
            "--outcome",
            "applied",
            "--memory-ref",
            memory_ref,
            "--reasoning-summary",
            "Tried the dropped memory",
            "--current-artifact-verified",
            "--format",
            "json",
        ],
    );
    assert_eq!(dropped.code, 2, "{}", dropped.stdout);

    // rank-prior --execute: a versioned effect in the store, read back exactly.
    let request = json!({
        "profile": read_json(&s.path.join("profile.json")),
        "partition": read_json(&s.path.join("partition.json")),
        "projection": projected.json(),
        "recall": packet,
    });
    s.write("rank-prior.json", &pretty(&request));
    let pure = s.run(
        &[
            "rank-prior",
            "--input",
            "rank-prior.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(pure.json()["order_changed"], true, "{}", pure.stdout);
    let execute = [
        "rank-prior",
        "--input",
        "rank-prior.json",
        "--execute",
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
        "--format",
        "json",
    ];
    let effect = routed(&s, &execute);
    conforms("memory_utility_rank_prior_effect_v0", &effect);
    let receipt = effect.json();
    assert_eq!(receipt["status"], "applied", "{}", effect.stdout);
    assert_eq!(receipt["exact_readback_verified"], true);
    assert_eq!(receipt["effect_version"], 1);
    assert_eq!(receipt["provider_write_performed"], true);
    snap_masked!("rank_prior_effect_applied_embedded", effect, mask_session);
    let retry = routed(&s, &execute).json();
    assert_eq!(
        (
            &retry["status"],
            &retry["effect_version"],
            &retry["deduplicated"]
        ),
        (&json!("applied"), &json!(1), &json!(true))
    );
    assert_eq!(retry["provider_write_performed"], false);
    let db = rusqlite::Connection::open(s.path.join("rt/reward-memory/embedded.sqlite3"))
        .expect("store");
    let rows: i64 = db
        .query_row("SELECT count(*) FROM rank_prior_effects", [], |r| r.get(0))
        .expect("effects");
    assert_eq!(rows, 1);
    let payload: Vec<u8> = db
        .query_row("SELECT payload FROM rank_prior_effects", [], |r| r.get(0))
        .expect("payload");
    assert_eq!(
        format!(
            "sha256:{}",
            reward_memory::wire::digest::sha256_hex(&String::from_utf8(payload).expect("utf8"))
        ),
        receipt["table_digest"].as_str().expect("digest")
    );
    let memories: i64 = db
        .query_row("SELECT count(*) FROM resources", [], |r| r.get(0))
        .expect("resources");
    assert_eq!(memories, 3, "utility is never written into memory rows");
}

#[test]
fn an_unwritable_session_store_does_not_fail_the_recall() {
    let s = loop_setup();
    ingest_memories(&s);
    s.write("rt/reward-memory/recall-sessions", "not a directory");
    let run = recall(&s, &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let packet = run.json();
    assert_eq!(packet["status"], "completed");
    assert_eq!(packet["recall_session_ref"], Value::Null);
    assert_eq!(
        packet["recall_session_reason_code"],
        "recall_session_store_unavailable"
    );
}

#[test]
fn a_projection_of_another_partition_is_refused_before_recall() {
    let s = loop_setup();
    let mut other = read_json(&fixtures_dir().join("recall/loop/partition.json"));
    other["observations"] = json!([]);
    other["policy_snapshot_ref"] = json!("policy:other");
    s.write("project.json", &pretty(&other));
    let projection = s.run(
        &[
            "utility-project",
            "--input",
            "project.json",
            "--format",
            "json",
        ],
        None,
    );
    s.write("projection.json", &projection.stdout);
    let run = recall(
        &s,
        &[
            "--rank-prior",
            "profile.json",
            "--projection",
            "projection.json",
            "--partition",
            "partition.json",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.json()["status"], "invalid_request");
    assert!(!s.path.join("rt").exists(), "no provider was called");
    snap_masked!("recall_rank_prior_other_partition", run, mask_session);
}

#[test]
fn an_unqualified_evaluation_keeps_the_prior_off() {
    let s = loop_setup();
    ingest_memories(&s);
    let mut project = read_json(&fixtures_dir().join("recall/loop/partition.json"));
    project["observations"] = json!([]);
    s.write("project.json", &pretty(&project));
    let projection = s.run(
        &[
            "utility-project",
            "--input",
            "project.json",
            "--format",
            "json",
        ],
        None,
    );
    s.write("projection.json", &projection.stdout);
    let gated = |extra: &[&str]| {
        let mut flags = vec![
            "--rank-prior",
            "profile.json",
            "--projection",
            "projection.json",
            "--partition",
            "partition.json",
            "--evaluation",
            "evaluation.json",
        ];
        flags.extend_from_slice(extra);
        let run = recall(&s, &flags);
        assert_eq!(run.code, 0, "fail-open: {}", run.transcript());
        run.json()
    };
    write_verdict(&s, "profile.json", "qualified");
    let qualified = gated(&[]);
    assert_eq!(qualified["rank_prior_applied"], true, "{qualified}");
    assert_eq!(qualified["rank_prior_reason_code"], Value::Null);
    write_verdict(&s, "profile.json", "hold");
    let held = gated(&[]);
    assert_eq!(held["rank_prior_applied"], false);
    assert_eq!(
        held["rank_prior_reason_code"],
        "ranking_evaluation_not_qualified"
    );
    // A real hold edited to qualified: the seal no longer matches.
    let hold = sealed_verdict(&s, "profile.json", "hold", "2026-11-30T00:00:00Z");
    s.write(
        "evaluation.json",
        &hold.replace("\"verdict\":\"hold\"", "\"verdict\":\"qualified\""),
    );
    assert_eq!(
        gated(&[])["rank_prior_reason_code"],
        "ranking_evaluation_digest_mismatch"
    );
    // Three hand-written keys, of the old or the new version: never a verdict.
    let digest = qualified["rank_prior"]["profile_digest"].clone();
    for (schema, reason) in [
        (
            "memory_utility_ranking_evaluation_v0",
            "ranking_evaluation_unbound",
        ),
        (
            "memory_utility_ranking_evaluation_v1",
            "ranking_evaluation_digest_mismatch",
        ),
    ] {
        s.write(
            "evaluation.json",
            &json!({"schema_version": schema, "verdict": "qualified", "profile_digest": digest})
                .to_string(),
        );
        let forged = gated(&["--allow-simulated-evaluation"]);
        assert_eq!(forged["rank_prior_applied"], false);
        assert_eq!(forged["rank_prior_reason_code"], reason, "{schema}");
    }
    // The loop's simulated verdict needs the explicit switch.
    s.write(
        "evaluation.json",
        &std::fs::read_to_string(fixtures_dir().join("recall/loop/evaluation.json"))
            .expect("fixture"),
    );
    assert_eq!(
        gated(&[])["rank_prior_reason_code"],
        "ranking_evaluation_simulated"
    );
    assert_eq!(
        gated(&["--allow-simulated-evaluation"])["rank_prior_applied"],
        true
    );
    // Another profile's verdict, and one too old for the default 30-day bound.
    write_verdict(&s, "profile.json", "qualified");
    let mut other = read_json(&s.path.join("profile.json"));
    other["min_support"] = json!(7);
    s.write("profile-other.json", &pretty(&other));
    s.write(
        "evaluation.json",
        &sealed_verdict(
            &s,
            "profile-other.json",
            "qualified",
            "2026-11-30T00:00:00Z",
        ),
    );
    assert_eq!(
        gated(&[])["rank_prior_reason_code"],
        "ranking_evaluation_profile_mismatch"
    );
    s.write(
        "evaluation.json",
        &sealed_verdict(&s, "profile.json", "qualified", "2020-01-01T00:00:00Z"),
    );
    assert_eq!(
        gated(&[])["rank_prior_reason_code"],
        "ranking_evaluation_stale"
    );
    // An object of another kind: fail-open, with the reason.
    s.write("evaluation.json", r#"{"verdict": "qualified"}"#);
    assert_eq!(
        gated(&[])["rank_prior_reason_code"],
        "ranking_evaluation_unbound"
    );
}

/// 501 characters: one past the configured form's query bound.
const LONG_QUERY: &str = concat!(
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "a"
);

#[test]
fn configured_recall_request_errors_are_clear() {
    let s = loop_setup();
    let cases: &[(&str, &[&str])] = &[
        (
            "recall_configured_without_query",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
            ],
        ),
        (
            "recall_configured_summary_count",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--query",
                "a",
            ],
        ),
        (
            "recall_configured_limit_above_fifty",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--query",
                "a",
                "--query-summary",
                "a",
                "--limit",
                "51",
            ],
        ),
        (
            "recall_configured_query_too_long",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--query",
                LONG_QUERY,
                "--query-summary",
                "a",
            ],
        ),
        (
            "recall_configured_query_holds_a_path",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--query",
                "why does /home/alice/project/build.sh fail",
                "--query-summary",
                "a",
            ],
        ),
        (
            "recall_configured_summary_holds_a_credential",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--query",
                "a",
                "--query-summary",
                "retry with token=abcdefghijklmnop",
            ],
        ),
        (
            "recall_configured_session_ttl_zero",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--query",
                "a",
                "--query-summary",
                "a",
                "--session-ttl",
                "0",
            ],
        ),
        (
            "recall_configured_agent_not_enabled",
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "meta",
                "--query",
                "a",
                "--query-summary",
                "a",
            ],
        ),
    ];
    for (name, args) in cases {
        let mut with_format = args.to_vec();
        with_format.extend(["--format", "json"]);
        let run = routed(&s, &with_format);
        assert_eq!(run.code, 2, "{name}: {}", run.stdout);
        assert_eq!(run.json()["status"], "invalid_request", "{name}");
        snap_masked!(*name, run, mask_session);
    }
}

#[test]
fn credential_shaped_queries_are_refused_before_any_provider_call() {
    let s = loop_setup();
    let cases = [
        (
            "test commits",
            "api_key=sk-123456789",
            "queries[0].query_summary",
            "api_key=...",
        ),
        (
            "test commits",
            "password: hunter2",
            "queries[0].query_summary",
            "password=...",
        ),
        (
            "postgres://u:pw@h/db",
            "review habits",
            "queries[0].query",
            "scheme://user:password@host",
        ),
    ];
    for (query, summary, label, shape) in cases {
        let run = routed(
            &s,
            &[
                "recall",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--query",
                query,
                "--query-summary",
                summary,
                "--observed-at",
                "2026-07-16T01:00:00+00:00",
                "--format",
                "json",
            ],
        );
        assert_eq!(run.code, 2, "{summary}: {}", run.stdout);
        assert_eq!(
            run.json()["error"],
            format!(
                "{label} looks like it holds a credential ({shape}): remove the secret; \
                 packets must be public-safe"
            )
        );
        for leak in ["hunter2", "sk-123456789", "pw@h"] {
            assert!(!run.stdout.contains(leak), "{}", run.stdout);
        }
    }
    assert!(
        !s.path.join("rt/reward-memory/recall-sessions").exists(),
        "no session is stored for a refused request"
    );
    // Ordinary text still recalls (fail-open, exit 0).
    assert_eq!(recall(&s, &[]).code, 0);
}

#[test]
fn a_prior_without_a_verdict_stays_off_and_markdown_says_why() {
    let s = loop_setup();
    ingest_memories(&s);
    let mut project = read_json(&fixtures_dir().join("recall/loop/partition.json"));
    project["observations"] = json!([]);
    s.write("project.json", &pretty(&project));
    let projection = s.run(
        &[
            "utility-project",
            "--input",
            "project.json",
            "--format",
            "json",
        ],
        None,
    );
    s.write("projection.json", &projection.stdout);
    let run = routed(
        &s,
        &[
            "recall",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--query",
            "test commits",
            "--query-summary",
            "review habits",
            "--observed-at",
            "2026-07-16T01:00:00+00:00",
            "--rank-prior",
            "profile.json",
            "--projection",
            "projection.json",
            "--partition",
            "partition.json",
        ],
    );
    assert_eq!(run.code, 0, "fail-open: {}", run.transcript());
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("- rank_prior_reason_code: `rank_prior_evaluation_missing`\n"),
        "{}",
        run.stdout
    );
    snap_masked!("recall_rank_prior_evaluation_missing", run, mask_session);
}

#[test]
fn detail_reports_a_guard_blocked_recall_under_the_summary() {
    let path = fixtures_dir().join("recall/valid/guard-blocked-other-workspace.json");
    let plain = run_with_file(&path, "input.json", &["recall", "--input", "input.json"]);
    assert!(
        plain.stdout.contains(
            "- reason_codes: `workspace_scope_mismatch, read_authority_workspace_ref_mismatch`"
        ),
        "{}",
        plain.stdout
    );
    let detail = run_with_file(
        &path,
        "input.json",
        &["recall", "--input", "input.json", "--detail"],
    );
    let rest = detail
        .stdout
        .strip_prefix(&plain.stdout)
        .expect("the summary comes first");
    assert!(rest.starts_with("## "), "{rest}");
    snap!("recall_detail_guard_blocked", detail);
}

#[test]
fn recall_reads_the_utility_from_the_ledger_as_from_its_projection() {
    let s = loop_setup();
    ingest_memories(&s);
    let packet = recall(&s, &[]).json();
    let session = packet["recall_session_ref"].as_str().expect("session");
    let memory_ref = packet["results"][1]["memory_ref"].as_str().expect("ref");
    let applied = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            session,
            "--application-id",
            "application:loop-1",
            "--artifact-ref",
            "pr:loop-1",
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
    let mut observe = read_json(&fixtures_dir().join("recall/loop/observe.json"));
    observe["application_receipt"] = applied["receipt"].clone();
    observe["evaluator_proposal"]["memory_ref_digests"] =
        applied["receipt"]["memory_ref_digests"].clone();
    s.write("observe-filled.json", &pretty(&observe));
    let observation = s
        .run(
            &[
                "utility-observe",
                "--input",
                "observe-filled.json",
                "--format",
                "json",
            ],
            None,
        )
        .json();
    s.write(
        "observations.json",
        &pretty(&json!({"observations": [observation]})),
    );
    // The ledger under the runtime root (the default location, --ledger without a value).
    let appended = routed(
        &s,
        &[
            "utility-ledger",
            "append",
            "--input",
            "observations.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(appended.json()["appended"], 1, "{}", appended.stdout);
    let projected = routed(
        &s,
        &[
            "utility-ledger",
            "project",
            "--input",
            "partition.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        projected.json()["schema_version"],
        "memory_utility_projection_v0"
    );
    s.write("projection.json", &projected.stdout);
    let gate = [
        "--rank-prior",
        "profile.json",
        "--partition",
        "partition.json",
        "--evaluation",
        "evaluation.json",
        "--allow-simulated-evaluation",
    ];
    let with = |source: &[&str]| -> Value {
        let mut flags = gate.to_vec();
        flags.extend_from_slice(source);
        let run = recall(&s, &flags);
        assert_eq!(run.code, 0, "{}", run.transcript());
        conforms("reward_memory_recall_v0", &run);
        run.json()
    };
    let from_projection = with(&["--projection", "projection.json"]);
    let from_ledger = with(&["--ledger"]);
    let explicit = with(&["--ledger", "rt/reward-memory/utility-ledger.sqlite3"]);
    assert_eq!(from_ledger["rank_prior_applied"], true);
    assert_eq!(from_ledger["rank_prior"], from_projection["rank_prior"]);
    assert_eq!(explicit["rank_prior"], from_projection["rank_prior"]);
    assert_eq!(candidates(&from_ledger), candidates(&from_projection));
    let mut semantic = candidates(&packet);
    semantic.reverse();
    assert_eq!(
        candidates(&from_ledger),
        semantic,
        "utility changed the order"
    );

    // A ledger that does not exist is a request error before the provider is called.
    let mut flags = gate.to_vec();
    flags.extend(["--ledger", "nowhere.sqlite3"]);
    let missing = recall(&s, &flags);
    assert_eq!(missing.code, 2, "{}", missing.transcript());
    assert_eq!(
        missing.json()["error"],
        "utility ledger does not exist yet: utility-ledger append creates it"
    );

    // A stored subject that cannot be read after the recall keeps the prior off
    // (fail-open): the recall is printed in semantic order and says why.
    let db = rusqlite::Connection::open(s.path.join("rt/reward-memory/utility-ledger.sqlite3"))
        .expect("ledger");
    db.execute("UPDATE subjects SET state = 'damaged'", [])
        .expect("damage");
    drop(db);
    let damaged = with(&["--ledger"]);
    assert_eq!(damaged["rank_prior_applied"], false);
    assert_eq!(
        damaged["rank_prior_reason_code"],
        "utility_ledger_unavailable"
    );
    assert_eq!(candidates(&damaged), candidates(&packet));
}

// ---------------------------------------------------------------------------------------
// Snapshot refs and the receipt's scope (issue 21)
// ---------------------------------------------------------------------------------------

/// The two snapshot refs of a recall packet.
fn snapshot_refs(packet: &Value) -> (String, String) {
    let text = |key: &str| {
        packet[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key} is a string: {packet}"))
            .to_owned()
    };
    (text("retrieval_snapshot_ref"), text("policy_snapshot_ref"))
}

/// `apply --outcome applied` of the recall's first result.
fn apply_first(s: &Scratch, packet: &Value) -> Value {
    let run = routed(
        s,
        &[
            "apply",
            "--recall-session",
            packet["recall_session_ref"].as_str().expect("session"),
            "--application-id",
            "application:snapshot",
            "--artifact-ref",
            "pr:snapshot",
            "--outcome",
            "applied",
            "--memory-ref",
            packet["results"][0]["memory_ref"].as_str().expect("ref"),
            "--reasoning-summary",
            "Applied in the snapshot test",
            "--current-artifact-verified",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    run.json()
}

#[test]
fn snapshot_refs_follow_the_store_and_the_policy_and_go_into_the_receipt() {
    let s = loop_setup();
    ingest_memories(&s);
    let first = recall(&s, &[]).json();
    let (retrieval, policy) = snapshot_refs(&first);
    let hex32 = regex::Regex::new("^[0-9a-f]{32}$").expect("pattern");
    let retrieval_hex = retrieval
        .strip_prefix("retrieval:embedded:")
        .expect("an embedded retrieval ref");
    assert!(hex32.is_match(retrieval_hex), "{retrieval}");
    assert!(
        hex32.is_match(policy.strip_prefix("policy:").expect("a policy ref")),
        "{policy}"
    );

    // The same route and store: the same refs.
    let again = recall(&s, &[]).json();
    assert_eq!(snapshot_refs(&again), (retrieval.clone(), policy.clone()));

    // The receipt records both and the route's scope; its id covers them.
    let applied = apply_first(&s, &first);
    let receipt = &applied["receipt"];
    assert_eq!(receipt["retrieval_snapshot_ref"], retrieval.as_str());
    assert_eq!(receipt["policy_snapshot_ref"], policy.as_str());
    assert_eq!(receipt["agent_id"], "pilot");
    assert_eq!(receipt["project_id"], "repository:example");
    let receipt_a = applied["application_receipt_id"].clone();

    // Another memory in the store: another retrieval ref, the same policy.
    let mut event = read_json(&fixtures_dir().join("recall/loop/event-c.json"));
    event["event"]["content_summary"] = json!("Run the focused test commits before each push.");
    s.write("event-d.json", &pretty(&event));
    let ingested = routed(
        &s,
        &[
            "ingest-event",
            "--input",
            "event-d.json",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--execute",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        ingested.json()["status"],
        "activated",
        "{}",
        ingested.stdout
    );
    let after = recall(&s, &[]).json();
    let (retrieval_after, policy_after) = snapshot_refs(&after);
    assert_ne!(
        retrieval_after, retrieval,
        "a store change is a new snapshot"
    );
    assert_eq!(policy_after, policy);
    let applied_after = apply_first(&s, &after);
    assert_eq!(
        applied_after["receipt"]["retrieval_snapshot_ref"],
        retrieval_after.as_str()
    );
    assert_ne!(applied_after["application_receipt_id"], receipt_a);

    // Another recall profile in the config: another policy ref, the same retrieval.
    let config_rel = "project/.loopx/config/reward-memory/experiment.json";
    let mut config = read_json(&s.path.join(config_rel));
    config["surfaces"][0]["recall_profile"]["limit"] = json!(4);
    s.write(config_rel, &pretty(&config));
    let reconfigured = recall(&s, &[]).json();
    let (retrieval_cfg, policy_cfg) = snapshot_refs(&reconfigured);
    assert_eq!(retrieval_cfg, retrieval_after);
    assert_ne!(
        policy_cfg, policy,
        "a config change is a new policy snapshot"
    );
}

#[test]
fn a_recall_without_results_has_no_snapshot_refs() {
    let s = loop_setup();
    let empty = recall(&s, &[]).json();
    assert_eq!(empty["status"], "empty");
    assert_eq!(empty["retrieval_snapshot_ref"], Value::Null);
    assert_eq!(empty["policy_snapshot_ref"], Value::Null);
}

#[test]
fn utility_observe_refuses_a_context_of_another_agent_or_project_than_the_receipt() {
    let s = loop_setup();
    ingest_memories(&s);
    let packet = recall(&s, &[]).json();
    let applied = apply_first(&s, &packet);
    let mut observe = read_json(&fixtures_dir().join("recall/loop/observe.json"));
    observe["application_receipt"] = applied["receipt"].clone();
    observe["verified_outcome"]["artifact_ref"] = json!("pr:snapshot");
    observe["evaluator_proposal"]["artifact_ref"] = json!("pr:snapshot");
    observe["evaluator_proposal"]["application_id"] = json!("application:snapshot");
    observe["evaluator_proposal"]["memory_ref_digests"] =
        applied["receipt"]["memory_ref_digests"].clone();
    let run_with = |observe: &Value| {
        s.write("observe-scope.json", &pretty(observe));
        s.run(
            &[
                "utility-observe",
                "--input",
                "observe-scope.json",
                "--format",
                "json",
            ],
            None,
        )
    };
    let accepted = run_with(&observe);
    assert_eq!(accepted.code, 0, "{}", accepted.stdout);
    assert_eq!(accepted.json()["scope"]["agent_id"], "pilot");
    for (key, other) in [
        ("agent_id", "other-agent"),
        ("project_id", "repository:other"),
    ] {
        let mut changed = observe.clone();
        changed["attribution_context"]["scope"][key] = json!(other);
        changed["evaluator_proposal"]["scope"][key] = json!(other);
        let refused = run_with(&changed);
        assert_eq!(refused.code, 2, "{key}: {}", refused.stdout);
        let error = refused.json();
        assert_eq!(error["status"], "invalid_request");
        assert_eq!(
            error["error"],
            format!(
                "attribution_context.scope.{key} must match the application receipt's {key}, \
                 the route that produced the recall (application_receipt_scope_mismatch)"
            )
        );
    }
}

/// `EPISODES.jsonl` of a few training and held-out episodes in the loop's partition,
/// observed in the last days.
pub fn loop_episodes(s: &Scratch) -> String {
    let partition = read_json(&s.path.join("partition.json"));
    let day = |ago: i64| {
        (chrono::Utc::now() - chrono::Duration::days(ago))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    let mut lines = Vec::new();
    for i in 0..6 {
        lines.push(json!({
            "schema_version": "memory_utility_ranking_episode_v0",
            "episode_id": format!("ep:t{i}"), "split": "training", "observed_at": day(10 - i),
            "partition": partition,
            "candidates": [{"memory_ref_digest": "aaaaaaaaaaaaaaaa", "used": true},
                           {"memory_ref_digest": "bbbbbbbbbbbbbbbb"}],
            "terminal_reward": 1,
        }));
    }
    for i in 0..3 {
        lines.push(json!({
            "schema_version": "memory_utility_ranking_episode_v0",
            "episode_id": format!("ep:h{i}"), "split": "held_out", "observed_at": day(3 - i),
            "partition": partition,
            "candidates": [
                {"memory_ref_digest": "aaaaaaaaaaaaaaaa", "relevance_score": 0.5, "ground_truth": "helpful"},
                {"memory_ref_digest": "bbbbbbbbbbbbbbbb", "relevance_score": 0.6, "ground_truth": "neutral"}],
        }));
    }
    lines
        .iter()
        .map(|l| l.to_string() + "\n")
        .collect::<String>()
}

#[test]
fn a_recorded_verdict_gates_recall_and_a_newer_recorded_hold_supersedes_a_file_verdict() {
    let s = loop_setup();
    ingest_memories(&s);
    s.write("episodes.jsonl", &loop_episodes(&s));
    let profile = fixtures_dir().join("recall/loop/evaluation-profile.json");
    let profile = profile.to_string_lossy();
    let evaluate = [
        "rank-evaluate",
        "--input",
        "episodes.jsonl",
        "--profile",
        &profile,
        "--record",
        "ledger.sqlite3",
        "--format",
        "json",
    ];
    let recorded = routed(&s, &evaluate);
    let packet = recorded.json();
    assert_eq!(
        packet["source"]["kind"], "episodes_file",
        "{}",
        recorded.stdout
    );
    assert_eq!(packet["verdict"], "hold", "{}", recorded.stdout);
    assert_eq!(recorded.code, 2);
    let digest = packet["verdict_digest"]
        .as_str()
        .expect("sealed")
        .to_owned();
    assert!(
        recorded
            .stderr
            .contains(&format!("hold verdict {digest} recorded in ")),
        "{}",
        recorded.stderr
    );
    let again = routed(&s, &evaluate);
    assert!(
        again.stderr.contains("was already recorded"),
        "{}",
        again.stderr
    );

    let gate = |extra: &[&str]| {
        let mut flags = vec![
            "--rank-prior",
            "profile.json",
            "--partition",
            "partition.json",
            "--ledger",
            "ledger.sqlite3",
        ];
        flags.extend_from_slice(extra);
        let run = recall(&s, &flags);
        assert_eq!(run.code, 0, "{}", run.transcript());
        run.json()
    };
    // No --evaluation: the recorded hold for this profile and partition is the verdict.
    let held = gate(&[]);
    assert_eq!(held["rank_prior_applied"], false);
    assert_eq!(
        held["rank_prior_reason_code"],
        "ranking_evaluation_not_qualified"
    );
    // A qualified file verdict does not outrank the newer recorded hold.
    write_verdict(&s, "profile.json", "qualified");
    let superseded = gate(&["--evaluation", "evaluation.json"]);
    assert_eq!(
        superseded["rank_prior_reason_code"],
        "ranking_evaluation_superseded_by_hold"
    );
    // Another partition has no recorded verdict.
    let mut other = read_json(&s.path.join("partition.json"));
    other["policy_snapshot_ref"] = json!("policy:another");
    s.write("partition-other.json", &pretty(&other));
    let run = recall(
        &s,
        &[
            "--rank-prior",
            "profile.json",
            "--partition",
            "partition-other.json",
            "--ledger",
            "ledger.sqlite3",
        ],
    );
    assert_eq!(
        run.json()["rank_prior_reason_code"],
        "rank_prior_evaluation_missing",
        "{}",
        run.stdout
    );
    // A simulation is never recorded.
    let simulated = routed(
        &s,
        &[
            "rank-evaluate",
            "--simulate",
            "--episodes",
            "50",
            "--record",
            "ledger.sqlite3",
        ],
    );
    assert_eq!(simulated.code, 2);
    assert!(
        simulated
            .stdout
            .contains("--record stores verdicts of real episodes"),
        "{}",
        simulated.transcript()
    );
}

// ---------------------------------------------------------------------------------------
// The semantic pool (issue 23 part 3)
// ---------------------------------------------------------------------------------------

/// The nine words of the pool memories: memory `i` holds `POOL_WORDS[i]` once, in a
/// summary that grows with `i`, so a query of all nine ranks them `0, 1, ..., 8` by
/// relevance.
const POOL_WORDS: [&str; 9] = [
    "quartz", "walnut", "ember", "fjord", "cobalt", "saffron", "tundra", "maple", "onyx",
];

/// The configured recall of `query`, plus `extra` flags.
fn recall_of(s: &Scratch, query: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "recall",
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
        "--query",
        query,
        "--query-summary",
        "pool memories",
        "--observed-at",
        "2026-07-16T01:00:00+00:00",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let run = routed(s, &args);
    assert_eq!(run.code, 0, "{}", run.transcript());
    conforms("reward_memory_recall_v0", &run);
    run
}

/// The memory refs' digests of a recall's results, in order.
fn digests(packet: &Value) -> Vec<String> {
    packet["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["memory_ref_digest"].as_str().expect("digest").to_owned())
        .collect()
}

/// Issue 23 part 3: `recall --rank-prior` fetches the profile's `candidate_pool` (8), ranks
/// it and then cuts to `--limit` (3), so a memory at semantic rank 4 with a boost is
/// shown; without the prior the recall is what it was (the first three by relevance); a
/// boosted memory below the floor never appears; the packet says what was fetched and
/// cut; the traffic log logs the pool the prior ranked.
#[test]
fn the_prior_ranks_the_fetched_pool_and_then_cuts_to_the_limit() {
    let s = loop_setup();
    let template = read_json(&fixtures_dir().join("recall/loop/event-a.json"));
    for (i, word) in POOL_WORDS.iter().enumerate() {
        let mut event = template.clone();
        event["event"]["content_summary"] = json!(format!(
            "Recall the {word} habit{}.",
            " carefully".repeat(4 * i)
        ));
        event["event"]["source"]["source_ref"] =
            json!(format!("github:example/repository#42:comment:{}", 10 + i));
        s.write(&format!("pool-{i}.json"), &pretty(&event));
        let run = routed(
            &s,
            &[
                "ingest-event",
                "--input",
                &format!("pool-{i}.json"),
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--execute",
                "--format",
                "json",
            ],
        );
        assert_eq!(run.json()["status"], "activated", "{}", run.stdout);
    }
    let all = POOL_WORDS.join(" ");
    let ledger = "ledger.sqlite3";
    // Each memory alone (its own word): its digest; memories 3 and 5 are applied and
    // succeed, so the prior boosts both.
    let mut memory = Vec::new();
    for (i, word) in POOL_WORDS.iter().enumerate() {
        let alone = recall_of(&s, word, &["--ledger", ledger]).json();
        assert_eq!(alone["result_count"], 1, "{alone}");
        memory.push(digests(&alone)[0].clone());
        if i == 3 || i == 5 {
            let applied = crate::traffic_log::apply_first(&s, &alone, ledger, i);
            let attributed = crate::traffic_log::attribute(&s, &applied, ledger, i);
            s.write(
                "partition.json",
                &pretty(&attributed["attributions"][0]["partition"]),
            );
        }
    }

    // Without the prior: the first three by relevance, exactly as before.
    let plain = recall_of(&s, &all, &["--limit", "3"]);
    let plain_packet = plain.json();
    assert_eq!(digests(&plain_packet), memory[..3].to_vec());
    assert!(
        plain_packet.get("candidate_fetch").is_none(),
        "{plain_packet}"
    );
    assert_eq!(plain_packet["provider_call_count"], 1);
    assert_eq!(
        digests(&recall_of(&s, &all, &[]).json()),
        memory[..5].to_vec()
    );
    // A --limit above the request's own 8 (issue 24 part 3): every memory, in the
    // provider's order, the request keeping its limit of 8 and the packet saying what was
    // fetched beyond it.
    let wide = recall_of(&s, &all, &["--limit", "20"]).json();
    assert_eq!(digests(&wide), memory, "{wide}");
    assert_eq!(wide["result_count"], POOL_WORDS.len());
    assert_eq!(
        wide["candidate_fetch"],
        json!({"candidate_pool": null, "limit": 20, "request_limit": 8, "requested_count": 20,
               "fetched_count": POOL_WORDS.len(), "cut_count": 0})
    );
    let narrow = recall_of(&s, &all, &["--limit", "8"]).json();
    assert_eq!(digests(&narrow), memory[..8].to_vec());
    assert!(narrow.get("candidate_fetch").is_none(), "{narrow}");

    // With the qualified prior: the pool of 8 is fetched, ranked, cut to 3.
    let prior = [
        "--limit",
        "3",
        "--rank-prior",
        "profile.json",
        "--partition",
        "partition.json",
        "--ledger",
        ledger,
        "--evaluation",
        "evaluation.json",
        "--allow-simulated-evaluation",
    ];
    let ranked = recall_of(&s, &all, &prior);
    assert_eq!(ranked.stderr, "", "{}", ranked.transcript());
    let packet = ranked.json();
    assert_eq!(packet["rank_prior_applied"], true, "{packet}");
    assert_eq!(
        digests(&packet),
        [memory[3].clone(), memory[5].clone(), memory[0].clone()]
    );
    assert_eq!(packet["result_count"], 3);
    assert_eq!(
        packet["candidate_fetch"],
        json!({"candidate_pool": 8, "limit": 3, "request_limit": 3, "requested_count": 8, "fetched_count": 8, "cut_count": 5})
    );
    let stage = &packet["rank_prior"]["semantic_stage"];
    assert_eq!(
        (
            &stage["input_count"],
            &stage["pool_count"],
            &stage["below_floor_count"]
        ),
        (&json!(8), &json!(8), &json!(0))
    );
    let boosted = &packet["rank_prior"]["candidates"][0];
    assert_eq!(boosted["memory_ref_digest"], json!(memory[3]));
    assert_eq!(boosted["semantic_rank"], 4);
    assert!(boosted["modifier"].as_f64().expect("modifier") > 1.0);
    // The ninth memory is past the pool: never fetched, never shown.
    let ranked_digests: Vec<&Value> = packet["rank_prior"]["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| &c["memory_ref_digest"])
        .collect();
    assert!(!ranked_digests.contains(&&json!(memory[8])));
    // The session keeps exactly the three shown: apply refuses a cut memory.
    let session = packet["recall_session_ref"].as_str().expect("session");
    let cut = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            session,
            "--application-id",
            "application:pool-cut",
            "--artifact-ref",
            "pr:pool-cut",
            "--outcome",
            "applied",
            "--memory-ref",
            plain_packet["results"][1]["memory_ref"]
                .as_str()
                .expect("ref"),
            "--reasoning-summary",
            "Tried a memory the limit cut",
            "--current-artifact-verified",
            "--format",
            "json",
        ],
    );
    assert_eq!(cut.code, 2, "{}", cut.transcript());

    // The traffic log has the pool the prior ranked: 8 candidates, all in the pool, 3 shown.
    let events =
        crate::traffic_log::stored_events(&s, &crate::utility_ledger::Backend::Sqlite, ledger);
    let event = events
        .iter()
        .rev()
        .find(|e| e["event_kind"] == "recall")
        .expect("the recall event");
    assert_eq!(event["logging_policy"]["kind"], "rank_prior");
    assert_eq!(event["logging_policy"]["pool_size"], 8);
    let logged = event["candidates"].as_array().expect("candidates");
    assert_eq!(logged.len(), 8);
    assert!(logged.iter().all(|c| c["in_pool"] == true));
    assert_eq!(
        logged.iter().filter(|c| !c["shown_rank"].is_null()).count(),
        3
    );
    assert!(logged.iter().all(|c| !c["policy_rank"].is_null()));

    // The prior requested without a verdict: the pool is fetched and cut in the
    // provider's order, the same three as without the prior; the shadow ranks the pool.
    let ungated = recall_of(
        &s,
        &all,
        &[
            "--limit",
            "3",
            "--rank-prior",
            "profile.json",
            "--partition",
            "partition.json",
            "--ledger",
            ledger,
        ],
    )
    .json();
    assert_eq!(
        ungated["rank_prior_reason_code"],
        "rank_prior_evaluation_missing"
    );
    assert_eq!(digests(&ungated), digests(&plain_packet));
    assert_eq!(ungated["candidate_fetch"]["cut_count"], 5);
    let events =
        crate::traffic_log::stored_events(&s, &crate::utility_ledger::Backend::Sqlite, ledger);
    let shadow = &events.last().expect("the recall event")["shadow"];
    assert_eq!(shadow["ranks"][0], json!(memory[3]), "{shadow}");
    assert_eq!(shadow["ranks"].as_array().map(Vec::len), Some(8));

    // A floor between the fifth and the sixth relevance: the boosted sixth memory never
    // appears, the boosted fourth still does.
    let relevance = |digest: &str| {
        packet["rank_prior"]["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .find(|c| c["memory_ref_digest"] == digest)
            .and_then(|c| c["relevance_score"].as_f64())
            .expect("relevance")
    };
    let mut floored = read_json(&s.path.join("profile.json"));
    floored["semantic_floor"] = json!((relevance(&memory[4]) + relevance(&memory[5])) / 2.0);
    s.write("profile-floor.json", &pretty(&floored));
    write_verdict(&s, "profile-floor.json", "qualified");
    let floor = recall_of(
        &s,
        &all,
        &[
            "--limit",
            "3",
            "--rank-prior",
            "profile-floor.json",
            "--partition",
            "partition.json",
            "--ledger",
            ledger,
            "--evaluation",
            "evaluation.json",
        ],
    )
    .json();
    assert_eq!(floor["rank_prior_applied"], true, "{floor}");
    assert_eq!(
        digests(&floor),
        [memory[3].clone(), memory[0].clone(), memory[1].clone()]
    );
    assert_eq!(
        floor["rank_prior"]["semantic_stage"]["below_floor_count"],
        3
    );
    assert_eq!(floor["candidate_fetch"]["cut_count"], 2);
    assert!(!floor.to_string().contains(&memory[5]), "{floor}");
}

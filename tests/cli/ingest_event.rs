//! `ingest-event`: both input forms, both adapters, guard outcomes, request errors, and
//! executed writes against the embedded SQLite store (no server involved).

use std::path::Path;

use serde_json::{Value, json};

use crate::snap_masked;
use crate::support::{
    Run, Scratch, assert_invalid_request, fixture_files, fixtures_dir, mask_latency, pretty,
    read_json, run_with_file, schema_named, snake_stem as stem,
};

/// Checks a printed packet against its committed schema.
pub fn conforms(schema_version: &str, run: &Run) {
    let packet = reward_memory::wire::json::parse(&run.stdout).expect("stdout is JSON");
    if let Err(err) = reward_memory::schema::check(&packet, &schema_named(schema_version)) {
        panic!(
            "packet does not conform to {schema_version}: {err}\n{}",
            run.stdout
        );
    }
}

pub fn embedded(rel: &str) -> Value {
    read_json(&fixtures_dir().join("ingest_event/embedded").join(rel))
}

fn run_full_form(path: &Path) -> Run {
    let args = ["ingest-event", "--input", "input.json", "--format", "json"];
    run_with_file(path, "input.json", &args)
}

#[test]
fn valid_full_form_fixtures_are_planned_or_guard_blocked() {
    let files = fixture_files("ingest_event", "valid");
    assert!(files.len() >= 5);
    for path in files {
        let out = run_full_form(&path);
        assert_eq!(out.code, 0, "{}", path.display());
        let status = out.json()["status"].clone();
        assert!(
            status == "planned" || status == "guard_blocked",
            "{}: {status}",
            path.display()
        );
        assert_eq!(out.json()["external_writes_performed"], false);
        conforms("reward_memory_ingest_receipt_v0", &out);
        snap_masked!(
            format!("ingest_event_valid_{}", stem(&path)),
            out,
            mask_latency
        );
    }
}

#[test]
fn invalid_full_form_fixtures_are_request_errors() {
    let files = fixture_files("ingest_event", "invalid");
    assert!(files.len() >= 10);
    for path in files {
        let out = run_full_form(&path);
        assert_invalid_request(&out, &path);
        snap_masked!(
            format!("ingest_event_invalid_{}", stem(&path)),
            out,
            mask_latency
        );
    }
}

#[test]
fn markdown_shows_status_and_reason_codes_only_when_present() {
    let path = fixtures_dir().join("ingest_event/valid/issue-fix-planned.json");
    let s = Scratch::new();
    s.write(
        "input.json",
        &std::fs::read_to_string(path).expect("fixture"),
    );
    snap_masked!(
        "ingest_event_markdown_planned",
        s.run(&["ingest-event", "--input", "input.json"], None),
        mask_latency
    );
}

#[test]
fn stdin_input_is_accepted() {
    let path = fixtures_dir().join("ingest_event/valid/scoped-feedback-planned.json");
    let text = std::fs::read_to_string(path).expect("fixture");
    let out = Scratch::new().run(
        &["ingest-event", "--input", "-", "--format", "json"],
        Some(&text),
    );
    assert_eq!(out.code, 0);
    assert_eq!(
        out.json()["candidate_ref"],
        "candidate:bbbfe94d56e238033bda"
    );
}

#[test]
fn execute_without_a_route_and_half_a_route_are_refused() {
    let path = fixtures_dir().join("ingest_event/valid/issue-fix-planned.json");
    let s = Scratch::new();
    s.write(
        "input.json",
        &std::fs::read_to_string(path).expect("fixture"),
    );
    let out = s.run(
        &[
            "ingest-event",
            "--input",
            "input.json",
            "--execute",
            "--format",
            "json",
        ],
        None,
    );
    snap_masked!("ingest_event_execute_without_route", out, mask_latency);
    let out = s.run(
        &[
            "ingest-event",
            "--input",
            "input.json",
            "--goal-id",
            "g",
            "--format",
            "json",
        ],
        None,
    );
    snap_masked!("ingest_event_goal_without_agent", out, mask_latency);
}

// ---------------------------------------------------------------------------------------
// Configured form with the embedded store
// ---------------------------------------------------------------------------------------

/// A scratch dir holding the embedded example: registry (repo `project`), config and the
/// two events. `edit_config` may change the config before it is written.
pub fn embedded_setup(edit_config: impl FnOnce(&mut Value)) -> Scratch {
    let s = Scratch::new();
    let mut registry = embedded("registry.json");
    registry["goals"][0]["repo"] = json!("project");
    s.write("registry.json", &pretty(&registry));
    let mut config = embedded("project/.loopx/config/reward-memory/experiment.json");
    edit_config(&mut config);
    s.write(
        "project/.loopx/config/reward-memory/experiment.json",
        &pretty(&config),
    );
    s.write("event.json", &pretty(&embedded("event.json")));
    s.write(
        "event-conflict.json",
        &pretty(&embedded("event-conflict.json")),
    );
    s
}

pub fn configured(s: &Scratch, input: &str, execute: bool) -> Run {
    let mut args = vec![
        "--registry",
        "registry.json",
        "--runtime-root",
        "rt",
        "ingest-event",
        "--input",
        input,
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
        "--format",
        "json",
    ];
    if execute {
        args.push("--execute");
    }
    s.run(&args, None)
}

pub fn store(s: &Scratch) -> rusqlite::Connection {
    rusqlite::Connection::open(s.path.join("rt/reward-memory/embedded.sqlite3"))
        .expect("store opens")
}

#[test]
fn configured_dry_run_is_planned_and_writes_nothing() {
    let s = embedded_setup(|_| {});
    let out = configured(&s, "event.json", false);
    assert_eq!(out.json()["status"], "planned");
    assert!(
        !s.path.join("rt").exists(),
        "a dry run never creates the store"
    );
    conforms("reward_memory_ingest_receipt_v0", &out);
    snap_masked!("ingest_event_embedded_planned", out, mask_latency);
}

#[test]
fn execute_activates_with_exact_readback_then_is_idempotent() {
    let s = embedded_setup(|_| {});
    let first = configured(&s, "event.json", true);
    let packet = first.json();
    assert_eq!(packet["status"], "activated");
    assert_eq!(packet["exact_readback_verified"], true);
    assert_eq!(packet["memory_available_for_recall"], true);
    assert_eq!(packet["write"]["write_count"], 1);
    assert_eq!(packet["readback"]["result_count"], 1);
    assert_eq!(
        packet["readback"]["results"][0]["memory_ref"],
        packet["provider_ref"]
    );
    assert_eq!(
        packet["execution_evidence"]["verified_result"],
        "ingest_exact_readback_verified"
    );
    conforms("reward_memory_ingest_receipt_v0", &first);
    snap_masked!("ingest_event_embedded_activated", first, mask_latency);

    // The stored bytes are exactly the canonical record plus one newline.
    let (count, content): (i64, Vec<u8>) = store(&s)
        .query_row("SELECT count(*), content FROM resources", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("one row");
    assert_eq!(count, 1);
    let text = String::from_utf8(content).expect("utf-8");
    assert!(text.ends_with("}\n") && text.matches('\n').count() == 1);
    assert!(text.starts_with("{\"activated_at\":\"2026-07-16T00:30:00+00:00\""));

    let second = configured(&s, "event.json", true);
    let packet = second.json();
    assert_eq!(packet["status"], "activated");
    assert_eq!(packet["deduplicated"], true);
    assert_eq!(packet["write"]["write_count"], 0);
    assert_eq!(packet["external_writes_performed"], false);
    conforms("reward_memory_ingest_receipt_v0", &second);
    snap_masked!("ingest_event_embedded_idempotent", second, mask_latency);
    let count: i64 = store(&s)
        .query_row("SELECT count(*) FROM resources", [], |r| r.get(0))
        .expect("count");
    assert_eq!(count, 1, "no second write");
}

#[test]
fn a_conflicting_payload_at_the_same_ref_is_not_overwritten() {
    let s = embedded_setup(|_| {});
    assert_eq!(
        configured(&s, "event.json", true).json()["status"],
        "activated"
    );
    let before: Vec<u8> = store(&s)
        .query_row("SELECT content FROM resources", [], |r| r.get(0))
        .expect("row");
    let out = configured(&s, "event-conflict.json", true);
    let packet = out.json();
    assert_eq!(packet["status"], "provider_unavailable");
    assert_eq!(
        packet["reason_codes"],
        json!(["provider_sync_revision_conflict"])
    );
    assert_eq!(packet["write"]["status"], "partial");
    conforms("reward_memory_ingest_receipt_v0", &out);
    snap_masked!("ingest_event_embedded_revision_conflict", out, mask_latency);
    let after: Vec<u8> = store(&s)
        .query_row("SELECT content FROM resources", [], |r| r.get(0))
        .expect("row");
    assert_eq!(before, after);
}

#[test]
fn guard_blocked_execute_never_touches_the_store() {
    let s = embedded_setup(|c| c["corpora"][0]["standing_policy"]["enabled"] = json!(false));
    let out = configured(&s, "event.json", true);
    assert_eq!(out.json()["status"], "guard_blocked");
    assert!(!s.path.join("rt").exists());
    conforms("reward_memory_ingest_receipt_v0", &out);
    snap_masked!("ingest_event_embedded_guard_blocked", out, mask_latency);
}

#[test]
fn an_unknown_provider_id_fails_open_as_provider_unavailable() {
    let s = embedded_setup(|c| {
        c["project_provider_binding"]["provider_id"] = json!("memory_service");
        c["corpora"][0]["corpus"]["provider_id"] = json!("memory_service");
    });
    let out = configured(&s, "event.json", true);
    let packet = out.json();
    assert_eq!(out.code, 0);
    assert_eq!(packet["status"], "provider_unavailable");
    assert_eq!(
        packet["reason_codes"],
        json!(["provider_sync_execution_failed"])
    );
    assert_eq!(packet["write"]["status"], "planned");
    conforms("reward_memory_ingest_receipt_v0", &out);
    snap_masked!("ingest_event_unsupported_provider", out, mask_latency);
}

#[test]
fn an_unusable_store_location_fails_open() {
    let s = embedded_setup(|c| {
        c["project_provider_binding"]["provider_binary"] = json!("blocker/embedded.sqlite3");
    });
    s.write("blocker", "not a directory");
    let out = configured(&s, "event.json", true);
    let packet = out.json();
    assert_eq!(packet["status"], "provider_unavailable");
    assert_eq!(
        packet["reason_codes"],
        json!([
            "provider_store_unavailable",
            "provider_store_cause_not_a_file"
        ])
    );
    assert_eq!(packet["write"]["reason_code"], "provider_store_unavailable");
    assert_eq!(packet["write"]["retry_disposition"], "no_retry");
}

#[test]
fn a_readback_the_recall_guard_refuses_is_readback_unverified() {
    // session_archive_bound: ingest does not compare revisions, the readback does.
    let s = embedded_setup(|c| {
        c["corpora"][0]["corpus"]["freshness"] =
            json!({"mode": "session_archive_bound", "source_revision": "archive:completed"});
    });
    let out = configured(&s, "event.json", true);
    let packet = out.json();
    assert_eq!(packet["status"], "readback_unverified");
    assert_eq!(
        packet["reason_codes"],
        json!(["exact_provider_readback_unverified"])
    );
    assert_eq!(packet["readback"]["status"], "guard_blocked");
    assert_eq!(packet["write"]["write_count"], 1);
    conforms("reward_memory_ingest_receipt_v0", &out);
    snap_masked!(
        "ingest_event_embedded_readback_unverified",
        out,
        mask_latency
    );
}

#[test]
fn configured_form_rejects_full_packet_fields_and_unknown_surfaces() {
    let s = embedded_setup(|_| {});
    let mut input = embedded("event.json");
    input["corpus"] = json!({});
    s.write("bad.json", &pretty(&input));
    snap_masked!(
        "ingest_event_configured_rejects_corpus",
        configured(&s, "bad.json", true),
        mask_latency
    );
    let mut input = embedded("event.json");
    input["event"]["surface_id"] = json!("issue_fix.diagnosis");
    s.write("bad.json", &pretty(&input));
    snap_masked!(
        "ingest_event_configured_unknown_surface",
        configured(&s, "bad.json", true),
        mask_latency
    );
    let mut input = embedded("event.json");
    input["adapter"] = json!("scoped_feedback");
    s.write("bad.json", &pretty(&input));
    snap_masked!(
        "ingest_event_configured_adapter_mismatch",
        configured(&s, "bad.json", true),
        mask_latency
    );
}

#[test]
fn an_unavailable_experiment_refuses_the_write() {
    let s = embedded_setup(|c| c["automation"] = json!({"fail_open": false}));
    let out = configured(&s, "event.json", true);
    snap_masked!("ingest_event_experiment_config_invalid", out, mask_latency);
    assert!(!s.path.join("rt").exists());
}

#[test]
fn bad_events_never_reach_the_store_even_with_execute() {
    let s = embedded_setup(|_| {});
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 5] = [
        ("raw comment", |v| {
            v["event"]["raw_comment"] = json!("the whole thread")
        }),
        ("wrong type", |v| {
            v["event"]["guard_context"]["current_artifact_verified"] = json!("yes")
        }),
        ("raw content", |v| {
            v["event"]["raw_content_captured"] = json!(true)
        }),
        ("oversized token", |v| {
            v["event"]["revision_ref"] = json!("r".repeat(201))
        }),
        ("bad timestamp", |v| {
            v["observed_at"] = json!("2026-07-16T00:30:00")
        }),
    ];
    for (label, edit) in edits {
        let mut input = embedded("event.json");
        edit(&mut input);
        s.write("bad.json", &pretty(&input));
        let out = configured(&s, "bad.json", true);
        assert_eq!(out.code, 2, "{label}");
        assert_eq!(out.json()["status"], "invalid_request", "{label}");
    }
    let mut stale = embedded("event.json");
    stale["event"]["guard_context"]["source_freshness"] = json!("stale");
    s.write("stale.json", &pretty(&stale));
    let out = configured(&s, "stale.json", true);
    assert_eq!(out.json()["status"], "guard_blocked");
    assert_eq!(
        out.json()["guard"]["reason_codes"],
        json!(["source_freshness_not_current"])
    );
    assert!(!s.path.join("rt").exists(), "no store was created");
}

#[test]
fn parallel_executions_on_a_fresh_store_write_the_record_once() {
    let s = embedded_setup(|_| {});
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| configured(&s, "event.json", true)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let mut writes = 0;
    for run in &runs {
        let packet = run.json();
        assert_eq!(packet["status"], "activated", "{}", run.stdout);
        writes += packet["write"]["write_count"].as_u64().expect("count");
    }
    assert_eq!(writes, 1);
}

/// The reference reads `true` as the token "True" and a list as its Python repr; this
/// port refuses both (docs/compatibility.md).
#[test]
fn python_str_artefacts_are_refused_not_accepted_as_text() {
    let base = read_json(&fixtures_dir().join("ingest_event/valid/issue-fix-planned.json"));
    let cases: [(&str, Value, &str); 3] = [
        (
            "workspace_ref",
            json!(true),
            "must be a compact public-safe token",
        ),
        ("issue_ref", json!(["a"]), "must be compact and public-safe"),
        (
            "content_summary",
            json!({"a": 1}),
            "must be compact and public-safe",
        ),
    ];
    for (field, value, message) in cases {
        let mut input = base.clone();
        input["event"][field] = value;
        let s = Scratch::new();
        s.write("input.json", &pretty(&input));
        let out = s.run(
            &["ingest-event", "--input", "input.json", "--format", "json"],
            None,
        );
        assert_eq!(out.code, 2, "{field}: {}", out.stdout);
        let packet = out.json();
        assert_eq!(packet["status"], "invalid_request", "{field}");
        assert!(
            packet["error"]
                .as_str()
                .unwrap_or_default()
                .ends_with(message),
            "{field}: {}",
            packet["error"]
        );
    }
}

// JSON Lines: many events in one process

/// `events.jsonl` in the embedded example's scratch dir: one compact input per entry of
/// `lines` (`None` writes the text as it is), and the lines' file.
fn write_jsonl(s: &Scratch, name: &str, lines: &[Result<Value, &str>]) {
    let text: String = lines
        .iter()
        .map(|line| match line {
            Ok(value) => format!("{value}\n"),
            Err(raw) => format!("{raw}\n"),
        })
        .collect();
    s.write(name, &text);
}

/// The example event with its own summary (so its own record).
fn event_variant(i: usize) -> Value {
    let mut event = embedded("event.json");
    event["event"]["content_summary"] = json!(format!(
        "Keep memory-core changes focused, bulk variant {i}."
    ));
    event
}

/// `ingest-event --input INPUT` in the configured form (the example route), with `extra`.
pub fn bulk(s: &Scratch, input: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "--registry",
        "registry.json",
        "--runtime-root",
        "rt",
        "ingest-event",
        "--input",
        input,
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
    ];
    args.extend_from_slice(extra);
    s.run(&args, None)
}

/// Stdout's lines, each parsed.
fn lines_of(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// Seven input lines: three good events (1, 2, 7), invalid JSON (3), a blank line (4),
/// an input with an unknown key (5) and an event the guard blocks (6).
fn mixed_file(s: &Scratch) {
    let mut blocked = event_variant(6);
    blocked["event"]["source"]["actor_role"] = json!("bystander");
    let mut unknown = event_variant(5);
    unknown["extra"] = json!(1);
    write_jsonl(
        s,
        "events.jsonl",
        &[
            Ok(event_variant(1)),
            Ok(event_variant(2)),
            Err("{\"adapter\": "),
            Err("   "),
            Ok(unknown),
            Ok(blocked),
            Ok(event_variant(7)),
        ],
    );
}

fn stored_count(s: &Scratch) -> i64 {
    store(s)
        .query_row("SELECT count(*) FROM resources", [], |r| r.get(0))
        .expect("count")
}

#[test]
fn jsonl_ingest_prints_a_line_per_event_refuses_bad_lines_and_summarizes() {
    let s = embedded_setup(|_| {});
    mixed_file(&s);
    let run = bulk(&s, "events.jsonl", &["--execute", "--batch-size", "2"]);
    assert_eq!(run.code, 2, "a refused line makes the run exit 2");
    let lines = lines_of(&run);
    assert_eq!(lines.len(), 7, "six non-blank lines and the summary");
    let statuses: Vec<&str> = lines[..6]
        .iter()
        .map(|l| l["status"].as_str().expect("status"))
        .collect();
    assert_eq!(
        statuses,
        [
            "activated",
            "activated",
            "refused",
            "refused",
            "guard_blocked",
            "activated"
        ]
    );
    assert_eq!(
        lines[2]["schema_version"],
        "reward_memory_ingest_line_refused_v0"
    );
    assert_eq!(lines[2]["line"], 3);
    assert_eq!(lines[3]["line"], 5);
    assert_eq!(
        lines[3]["error"],
        "ingest input contains unsupported fields: extra"
    );
    for receipt in [&lines[0], &lines[1], &lines[5]] {
        assert_eq!(receipt["schema_version"], "reward_memory_ingest_receipt_v0");
        assert_eq!(receipt["exact_readback_verified"], true);
        assert_eq!(receipt["write"]["write_count"], 1);
    }
    assert_eq!(
        stored_count(&s),
        3,
        "the refused and blocked lines wrote nothing"
    );
    let summary = run.stdout.lines().last().expect("summary").to_owned();
    let summary = Run {
        code: run.code,
        stdout: format!(
            "{}\n",
            pretty(&serde_json::from_str(&summary).expect("json"))
        ),
        stderr: run.stderr.clone(),
    };
    snap_masked!("ingest_event_jsonl_summary", summary, mask_latency);
}

/// The lines are staged on a second thread up to 128 ahead of the writer: far past that,
/// with batches that end anywhere, every output line is still its own input line's, in
/// order (a refusal names its line, a receipt its event's issue ref).
#[test]
fn jsonl_lines_far_past_the_staging_lookahead_keep_their_order() {
    let s = embedded_setup(|_| {});
    let mut text = String::new();
    let mut expected: Vec<(usize, &str)> = Vec::new();
    for number in 1..=400usize {
        if number % 11 == 0 {
            text.push('\n');
            continue;
        }
        if number % 5 == 0 {
            text.push_str("{\"adapter\": \n");
            expected.push((number, "refused"));
            continue;
        }
        let mut event = event_variant(number);
        event["event"]["issue_ref"] = json!(format!("github:example/repository#{number}"));
        text.push_str(&format!("{event}\n"));
        expected.push((number, "activated"));
    }
    s.write("events.jsonl", &text);
    let run = bulk(&s, "events.jsonl", &["--execute", "--batch-size", "7"]);
    assert_eq!(run.code, 2, "refused lines make the run exit 2");
    let lines = lines_of(&run);
    assert_eq!(
        lines.len(),
        expected.len() + 1,
        "one line per non-blank line and the summary"
    );
    for (line, (number, status)) in lines.iter().zip(&expected) {
        assert_eq!(line["status"], *status, "line {number}");
        if *status == "refused" {
            assert_eq!(line["line"], *number);
        } else {
            assert_eq!(
                line["issue_ref"],
                format!("github:example/repository#{number}"),
                "the receipt of line {number}"
            );
            assert_eq!(line["exact_readback_verified"], true);
        }
    }
    let activated = expected.iter().filter(|(_, s)| *s == "activated").count();
    assert_eq!(stored_count(&s), activated as i64);
    let summary = lines.last().expect("summary");
    assert_eq!(summary["lines"], expected.len());
    assert_eq!(summary["status_counts"]["activated"], activated);
}

#[test]
fn jsonl_rerun_of_the_same_file_reports_every_event_already_stored() {
    let s = embedded_setup(|_| {});
    write_jsonl(
        &s,
        "events.jsonl",
        &[Ok(event_variant(1)), Ok(event_variant(2))],
    );
    let first = bulk(&s, "events.jsonl", &["--execute"]);
    assert_eq!(first.code, 0, "{}", first.stdout);
    let generation = |s: &Scratch| -> String {
        store(s)
            .query_row(
                "SELECT value FROM store_meta WHERE key = 'generation'",
                [],
                |r| r.get(0),
            )
            .expect("generation")
    };
    let after_first = generation(&s);
    let second = bulk(&s, "events.jsonl", &["--execute"]);
    assert_eq!(second.code, 0, "{}", second.stdout);
    let lines = lines_of(&second);
    for receipt in &lines[..2] {
        assert_eq!(receipt["status"], "activated");
        assert_eq!(receipt["deduplicated"], true);
        assert_eq!(receipt["external_writes_performed"], false);
    }
    assert_eq!(lines[2]["records_written"], 0);
    assert_eq!(lines[2]["records_already_stored"], 2);
    assert_eq!(stored_count(&s), 2, "nothing duplicated");
    assert_eq!(
        generation(&s),
        after_first,
        "nothing written, same generation"
    );
}

#[test]
fn a_jsonl_receipt_is_the_single_ingest_receipt_and_the_store_the_same() {
    let s = embedded_setup(|_| {});
    s.write("one.json", &pretty(&event_variant(1)));
    write_jsonl(&s, "one.jsonl", &[Ok(event_variant(1))]);
    let single = configured(&s, "one.json", true);
    let single_store: (Vec<u8>, String) = store(&s)
        .query_row(
            "SELECT r.content, m.value FROM resources r, store_meta m WHERE m.key = 'generation'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("row");
    std::fs::remove_dir_all(s.path.join("rt")).expect("fresh store");
    let run = bulk(&s, "one.jsonl", &["--execute", "--format", "jsonl"]);
    let compact: Value = serde_json::from_str(&single.stdout).expect("json");
    let mut bulk_receipt = lines_of(&run).remove(0);
    let mut single_receipt = compact;
    for receipt in [&mut bulk_receipt, &mut single_receipt] {
        receipt["write"]["telemetry"]["latency_ms"] = json!(0);
    }
    assert_eq!(bulk_receipt, single_receipt);
    let bulk_store: (Vec<u8>, String) = store(&s)
        .query_row(
            "SELECT r.content, m.value FROM resources r, store_meta m WHERE m.key = 'generation'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("row");
    assert_eq!(bulk_store, single_store, "same bytes, same generation");
}

#[test]
fn jsonl_dry_run_plans_every_line_and_creates_no_store() {
    let s = embedded_setup(|_| {});
    write_jsonl(
        &s,
        "events.txt",
        &[Ok(event_variant(1)), Ok(event_variant(2))],
    );
    let run = bulk(&s, "events.txt", &["--jsonl"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let lines = lines_of(&run);
    assert_eq!(lines[0]["status"], "planned");
    assert_eq!(lines[1]["status"], "planned");
    assert_eq!(lines[2]["mode"], "dry_run");
    assert_eq!(lines[2]["status_counts"], json!({"planned": 2}));
    assert!(!s.path.join("rt/reward-memory/embedded.sqlite3").exists());
}

#[test]
fn jsonl_conflicting_lines_keep_the_first_record() {
    let s = embedded_setup(|_| {});
    let conflict = embedded("event-conflict.json");
    write_jsonl(
        &s,
        "events.jsonl",
        &[Ok(embedded("event.json")), Ok(conflict)],
    );
    let run = bulk(&s, "events.jsonl", &["--execute"]);
    let lines = lines_of(&run);
    assert_eq!(lines[0]["status"], "activated");
    assert_eq!(lines[1]["status"], "provider_unavailable");
    assert_eq!(
        lines[1]["reason_codes"],
        json!(["provider_sync_revision_conflict"])
    );
    assert_eq!(lines[2]["first_not_ok_lines"], json!([2]));
    assert_eq!(run.code, 2);
    assert_eq!(stored_count(&s), 1);
}

#[test]
fn jsonl_limit_applies_to_each_line_not_the_whole_file() {
    let s = embedded_setup(|_| {});
    let mut long = event_variant(2);
    long["event"]["content_summary"] = json!("x ".repeat(3_000));
    write_jsonl(
        &s,
        "events.jsonl",
        &[Ok(event_variant(1)), Ok(long), Ok(event_variant(3))],
    );
    let file_bytes = std::fs::metadata(s.path.join("events.jsonl"))
        .expect("file")
        .len();
    let limit = "4096";
    assert!(file_bytes > 4096, "the whole file is above the limit");
    let run = bulk(
        &s,
        "events.jsonl",
        &["--execute", "--max-input-bytes", limit],
    );
    assert_eq!(run.code, 2, "the long line is refused: {}", run.stderr);
    let lines = lines_of(&run);
    assert_eq!(lines.len(), 4, "three lines and the summary");
    assert_eq!(lines[0]["status"], "activated");
    assert_eq!(lines[2]["status"], "activated");
    assert_eq!(lines[1]["status"], "refused");
    assert_eq!(lines[1]["line"], 2);
    let error = lines[1]["error"].as_str().expect("error");
    assert!(
        error.starts_with("line is larger than the 4096-byte limit (")
            && error.ends_with("bytes); split the event or raise --max-input-bytes"),
        "{error}"
    );
    assert_eq!(stored_count(&s), 2);
}

#[test]
fn jsonl_refused_lines_and_the_summary_conform_to_their_schemas() {
    let s = embedded_setup(|_| {});
    mixed_file(&s);
    let run = bulk(&s, "events.jsonl", &["--execute"]);
    let mut checked = 0;
    for line in run.stdout.lines() {
        let packet = reward_memory::wire::json::parse(line).expect("a JSON line");
        let version = packet
            .get("schema_version")
            .and_then(|v| v.as_str())
            .expect("schema_version")
            .to_owned();
        if version == "reward_memory_ingest_receipt_v0" {
            continue;
        }
        if let Err(err) =
            reward_memory::schema::check(&packet, &crate::support::schema_named(&version))
        {
            panic!("{line} does not conform to {version}: {err}");
        }
        checked += 1;
    }
    assert_eq!(checked, 3, "two refused lines and the summary");
}

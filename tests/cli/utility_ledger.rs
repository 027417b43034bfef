//! `utility-ledger`: equivalence with `utility-project` on every public golden case
//! (one batch, one by one, shuffled), the round trip, refusals, the paged projection
//! beyond the caps, concurrency, durability under SIGKILL and bad locations.
//!
//! Every test runs against a SQLite ledger; when `REWARD_MEMORY_TEST_PG_URL` names a
//! PostgreSQL server (an admin URL; `scripts/postgres-it.sh` starts a throw-away one) the
//! same tests also run against a fresh database of that server.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use reward_memory::utility::observation::{
    AttributionLevel, EvidenceBasis, Observation, Scope, UtilityLabel,
};
use reward_memory::wire::json::{self, Value};
use reward_memory::wire::timestamp::parse_aware;

use crate::snap;
use crate::support::{Run, Scratch};

/// Where one test's ledger lives.
#[derive(Debug, Clone)]
pub enum Backend {
    Sqlite,
    Postgres(String),
}

pub fn backends() -> Vec<Backend> {
    // scripts/postgres-it.sh sets REWARD_MEMORY_TEST_PG_ONLY: SQLite already ran in
    // `cargo test`.
    let mut out = if std::env::var_os("REWARD_MEMORY_TEST_PG_ONLY").is_some() {
        Vec::new()
    } else {
        vec![Backend::Sqlite]
    };
    if let Ok(url) = std::env::var("REWARD_MEMORY_TEST_PG_URL")
        && !url.is_empty()
    {
        out.push(Backend::Postgres(url));
    }
    out
}

/// A fresh, empty ledger location for `backend`.
pub fn fresh_ledger(scratch: &Scratch, backend: &Backend, name: &str) -> String {
    match backend {
        Backend::Sqlite => scratch
            .path
            .join(format!("{name}.sqlite3"))
            .to_string_lossy()
            .into_owned(),
        Backend::Postgres(admin) => {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let db = format!(
                "rmtest_{}_{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
            );
            let mut client =
                postgres::Client::connect(admin, postgres::NoTls).expect("admin connection");
            client
                .batch_execute(&format!("CREATE DATABASE {db}"))
                .expect("create database");
            let mut config: postgres::Config = admin.parse().expect("admin url");
            config.dbname(&db);
            // Rebuild the URL with the new database name.
            match admin.rfind('/') {
                Some(i) if admin[..i].contains("://") && admin[i + 1..].find('?').is_none() => {
                    format!("{}/{db}", &admin[..i])
                }
                _ => format!(
                    "{}{}dbname={db}",
                    admin,
                    if admin.contains('?') { "&" } else { "?" }
                ),
            }
        }
    }
}

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reward-memory"));
    cmd.env_remove("LOOPX_REGISTRY")
        .env_remove("REWARD_MEMORY_LEDGER")
        .env_remove("PGPASSWORD");
    cmd
}

fn run_in(scratch: &Scratch, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut cmd = bin();
    cmd.current_dir(&scratch.path)
        .env("HOME", scratch.path.join(".home"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("binary runs");
    if let Some(mut pipe) = child.stdin.take() {
        use std::io::Write as _;
        if let Some(bytes) = stdin {
            let _ = pipe.write_all(bytes);
        }
    }
    let output = child.wait_with_output().expect("binary finishes");
    let clean = |b: &[u8]| {
        String::from_utf8_lossy(b).replace(&*scratch.path.to_string_lossy(), "@CASE_DIR@")
    };
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: clean(&output.stdout),
        stderr: clean(&output.stderr),
    }
}

fn append(scratch: &Scratch, ledger: &str, input: &str, stdin: Option<&[u8]>) -> Run {
    run_in(
        scratch,
        &[
            "utility-ledger",
            "append",
            "--ledger",
            ledger,
            "--input",
            input,
            "--format",
            "json",
        ],
        stdin,
    )
}

fn ledger_cmd(scratch: &Scratch, sub: &str, ledger: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "utility-ledger",
        sub,
        "--ledger",
        ledger,
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    run_in(scratch, &args, None)
}

fn golden_cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/utility_ledger/golden");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("golden fixtures")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

/// The partition object of a `utility-project` input (no observations).
fn partition_of(input: &Value) -> String {
    let mut map = reward_memory::wire::json::Map::new();
    for key in [
        "scope",
        "retrieval_snapshot_ref",
        "policy_snapshot_ref",
        "reducer_version",
    ] {
        if let Some(v) = input.get(key) {
            map.insert(key, v.clone());
        }
    }
    json::to_pretty_line(&Value::Object(map))
}

fn observations_of(input: &Value) -> Vec<Value> {
    input
        .get("observations")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default()
}

fn jsonl(items: &[Value]) -> String {
    items
        .iter()
        .map(|v| json::dumps(v, reward_memory::ledger::engine::COMPACT) + "\n")
        .collect()
}

/// A deterministic shuffle (xorshift).
fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
    let mut out = items.to_vec();
    let mut state = seed | 1;
    for i in (1..out.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = usize::try_from(state % (i as u64 + 1)).unwrap_or(0);
        out.swap(i, j);
    }
    out
}

#[test]
fn every_ledger_subcommand_has_help() {
    let scratch = Scratch::new();
    for sub in ["append", "project", "subject", "export", "verify"] {
        let out = run_in(&scratch, &["utility-ledger", sub, "--help"], None);
        assert_eq!(out.code, 0, "{sub} --help");
        assert!(
            out.stdout.contains("--ledger"),
            "{sub} --help names --ledger"
        );
        for needle in [
            "--runtime-root <DIR>",
            "$REWARD_MEMORY_LEDGER",
            "RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3",
            "~/.codex/loopx",
            "PGPASSWORD",
            "--format <FORMAT>",
            "--detail",
        ] {
            assert!(out.stdout.contains(needle), "{sub} --help lacks {needle}");
        }
    }
    snap!(
        "utility_ledger_help",
        run_in(&scratch, &["utility-ledger", "--help"], None)
    );
}

#[test]
fn golden_cases_project_byte_identically_in_one_batch_one_by_one_and_shuffled() {
    let cases = golden_cases();
    assert!(cases.len() >= 20, "golden fixtures are missing");
    for backend in backends() {
        for case in &cases {
            let name = case.file_name().and_then(|n| n.to_str()).unwrap_or("case");
            let text = std::fs::read_to_string(case.join("input.json")).expect("input");
            let expected = std::fs::read_to_string(case.join("expected.json")).expect("expected");
            let input = json::parse(&text).expect("golden input is JSON");
            let observations = observations_of(&input);
            let scratch = Scratch::new();
            scratch.write("input.json", &text);
            scratch.write("partition.json", &partition_of(&input));

            // One batch: the utility-project input file itself.
            let one = fresh_ledger(&scratch, &backend, "one");
            let receipt = append(&scratch, &one, "input.json", None);
            assert_eq!(receipt.code, 0, "{name}: {}", receipt.stdout);
            let got = ledger_cmd(&scratch, "project", &one, &["--input", "partition.json"]);
            assert_eq!(got.code, 0, "{name}: {}", got.stdout);
            assert!(
                got.stdout == expected,
                "{name} ({backend:?}): one batch differs"
            );

            // One delivery per append (on PostgreSQL only for the smaller cases: each
            // append is a new connection), then all of them shuffled in one batch.
            let one_by_one = matches!(backend, Backend::Sqlite) || observations.len() <= 64;
            let single = fresh_ledger(&scratch, &backend, "single");
            // An empty append creates the ledger (the empty case has no delivery).
            assert_eq!(append(&scratch, &single, "-", Some(b"")).code, 0);
            for o in observations.iter().filter(|_| one_by_one) {
                let line = jsonl(std::slice::from_ref(o));
                let r = append(&scratch, &single, "-", Some(line.as_bytes()));
                assert_eq!(r.code, 0, "{name}: {}", r.stdout);
            }
            let got = ledger_cmd(&scratch, "project", &single, &["--input", "partition.json"]);
            assert!(
                !one_by_one || got.stdout == expected,
                "{name} ({backend:?}): one by one differs"
            );

            let mixed = fresh_ledger(&scratch, &backend, "shuffled");
            let lines = jsonl(&shuffled(
                &observations,
                0x9e37_79b9 + observations.len() as u64,
            ));
            scratch.write("shuffled.jsonl", &lines);
            let r = append(&scratch, &mixed, "shuffled.jsonl", None);
            assert_eq!(r.code, 0, "{name}: {}", r.stdout);
            let got = ledger_cmd(&scratch, "project", &mixed, &["--input", "partition.json"]);
            assert!(
                got.stdout == expected,
                "{name} ({backend:?}): shuffled differs"
            );

            for ledger in [&one, &single, &mixed] {
                let v = ledger_cmd(&scratch, "verify", ledger, &[]);
                assert_eq!(v.code, 0, "{name}: {}", v.stdout);
            }
        }
    }
}

#[test]
fn round_trip_append_twice_project_subject_export_verify() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/utility_project/valid/mixed-levels.json");
    let text = std::fs::read_to_string(&fixture).expect("fixture");
    let input = json::parse(&text).expect("json");
    for backend in backends() {
        let scratch = Scratch::new();
        scratch.write("input.json", &text);
        scratch.write("partition.json", &partition_of(&input));
        let ledger = fresh_ledger(&scratch, &backend, "ledger");
        let first = append(&scratch, &ledger, "input.json", None);
        let second = append(&scratch, &ledger, "input.json", None);
        let project = ledger_cmd(&scratch, "project", &ledger, &["--input", "partition.json"]);
        let subject = ledger_cmd(
            &scratch,
            "subject",
            &ledger,
            &[
                "--input",
                "partition.json",
                "--memory-ref-digest",
                "0123456789abcdef",
                "--memory-ref-digest",
                "0000000000000000",
            ],
        );
        let verify = ledger_cmd(&scratch, "verify", &ledger, &[]);
        if matches!(backend, Backend::Sqlite) {
            snap!("utility_ledger_append_first", first);
            snap!("utility_ledger_append_second", second);
            snap!("utility_ledger_subject", subject);
            snap!("utility_ledger_verify", verify);
        } else {
            assert_eq!(first.code, 0);
            assert_eq!(second.json()["duplicate"], 4);
            assert_eq!(subject.json()["subject_count"], 3);
            assert_eq!(verify.json()["status"], "verified");
        }
        // Appending the same file twice equals utility-project over both copies.
        let mut doubled = input.clone();
        if let Value::Object(map) = &mut doubled {
            let mut twice = observations_of(&input);
            twice.extend(observations_of(&input));
            map.insert("observations", Value::from(twice));
        }
        scratch.write("doubled.json", &json::to_pretty_line(&doubled));
        let reference = run_in(
            &scratch,
            &[
                "utility-project",
                "--input",
                "doubled.json",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(project.stdout, reference.stdout);
        // export | append into an empty ledger reproduces the projection.
        let export = ledger_cmd(&scratch, "export", &ledger, &[]);
        assert_eq!(export.code, 0);
        assert_eq!(export.stdout.lines().count(), 8);
        let copy = fresh_ledger(&scratch, &backend, "copy");
        let replay = append(&scratch, &copy, "-", Some(export.stdout.as_bytes()));
        assert_eq!(replay.json()["appended"], 4);
        assert_eq!(replay.json()["duplicate"], 4);
        let again = ledger_cmd(&scratch, "project", &copy, &["--input", "partition.json"]);
        assert_eq!(again.stdout, project.stdout);
        let export_again = ledger_cmd(&scratch, "export", &copy, &[]);
        assert_eq!(export_again.stdout, export.stdout);
    }
}

/// The handlers take plain typed requests: the same request as JSON (what another front
/// end such as an MCP server sends) runs exactly as its command line, packet for packet,
/// refusal for refusal.
#[test]
fn a_ledger_request_from_json_runs_as_its_command_line() {
    use reward_memory::commands::Context;
    use reward_memory::commands::utility_ledger::{self, LedgerRequest};

    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/utility_project/valid/mixed-levels.json");
    let text = std::fs::read_to_string(&fixture).expect("fixture");
    let input = json::parse(&text).expect("json");
    for backend in backends() {
        let scratch = Scratch::new();
        scratch.write("input.json", &text);
        scratch.write("partition.json", &partition_of(&input));
        let path = |name: &str| scratch.path.join(name).to_string_lossy().into_owned();
        let (input_file, partition_file) = (path("input.json"), path("partition.json"));
        let by_cli = fresh_ledger(&scratch, &backend, "cli");
        let by_request = fresh_ledger(&scratch, &backend, "request");
        let ctx = Context {
            env: reward_memory::io::Env {
                home: Some(scratch.path.join(".home")),
                cwd: scratch.path.clone(),
                ..reward_memory::io::Env::default()
            },
            registry: None,
            runtime_root: None,
            format: reward_memory::cli::Format::Json,
        };
        let request = |text: String| -> LedgerRequest {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
        };
        let location = |ledger: &str| json::dumps(&Value::from(ledger), COMPACT_JSON);
        let cases: Vec<(Vec<&str>, String)> = vec![
            (
                vec!["append", "--input", &input_file],
                format!(
                    r#"{{"command": "append", "input": {}}}"#,
                    location(&input_file)
                ),
            ),
            (
                vec!["project", "--input", &partition_file, "--limit", "2"],
                format!(
                    r#"{{"command": "project", "partition": {{"input": {}}}, "limit": 2}}"#,
                    location(&partition_file)
                ),
            ),
            (
                vec![
                    "subject",
                    "--input",
                    &partition_file,
                    "--memory-ref-digest",
                    "0123456789abcdef",
                ],
                format!(
                    r#"{{"command": "subject", "partition": {{"input": {}}}, "memory_ref_digests": ["0123456789abcdef"]}}"#,
                    location(&partition_file)
                ),
            ),
            (vec!["verify"], r#"{"command": "verify"}"#.to_owned()),
            (
                vec!["project", "--input", &partition_file, "--limit", "0"],
                format!(
                    r#"{{"command": "project", "partition": {{"input": {}}}, "limit": 0}}"#,
                    location(&partition_file)
                ),
            ),
            (
                vec!["subject", "--agent-id", "agent:a"],
                r#"{"command": "subject", "partition": {"agent_id": "agent:a"}}"#.to_owned(),
            ),
        ];
        for (args, body) in cases {
            let cli = ledger_cmd(&scratch, args[0], &by_cli, &args[1..]);
            let mut request = request(body.clone());
            set_ledger(&mut request, &by_request);
            compare(&cli, utility_ledger::run(&request, &ctx), &body);
        }
    }

    fn set_ledger(request: &mut LedgerRequest, ledger: &str) {
        let location = match request {
            LedgerRequest::Append(r) => &mut r.location,
            LedgerRequest::Project(r) => &mut r.location,
            LedgerRequest::Subject(r) => &mut r.location,
            LedgerRequest::Export(r) => &mut r.location,
            LedgerRequest::Verify(r) => &mut r.location,
            LedgerRequest::Review(r) => &mut r.location,
        };
        location.ledger = Some(ledger.to_owned());
    }

    fn compare(
        cli: &Run,
        got: Result<reward_memory::commands::Outcome, reward_memory::error::Error>,
        body: &str,
    ) {
        let printed = json::parse(&cli.stdout).unwrap_or_else(|e| panic!("{body}: {e}"));
        match got {
            Ok(outcome) => {
                assert_eq!(outcome.packet, printed, "{body}");
                assert_eq!(outcome.exit.code(), cli.code, "{body}");
            }
            Err(err) => {
                let field = |key: &str| printed.get(key).and_then(Value::as_str).map(str::to_owned);
                assert_eq!(
                    field("status").as_deref(),
                    Some("invalid_request"),
                    "{body}"
                );
                assert_eq!(field("error"), Some(err.to_string()), "{body}");
                assert_eq!(err.exit().code(), cli.code, "{body}");
            }
        }
    }
}

/// Compact JSON for building request bodies.
const COMPACT_JSON: json::DumpOptions = reward_memory::ledger::engine::COMPACT;

// ---------------------------------------------------------------------------------------
// Generated observations
// ---------------------------------------------------------------------------------------

/// A valid item observation of `agent`'s partition.
fn observation(
    agent: &str,
    digest: &str,
    version: &str,
    label: &str,
    confidence: f64,
    at: &str,
) -> Value {
    let mut o = Observation {
        observation_id: Default::default(),
        scope: Scope {
            agent_id: agent.into(),
            project_id: "project:ledger".into(),
            corpus_id: "ledger-corpus".into(),
            surface_id: "loopx.issue_fix".into(),
        },
        application_receipt_id: format!("rma_{}", "ab".repeat(32)).into(),
        memory_ref_digests: vec![digest.to_owned()],
        retrieval_snapshot_ref: "retrieval:ledger".into(),
        policy_snapshot_ref: "policy:ledger".into(),
        outcome_ref: "effect:ledger".into(),
        utility_label: UtilityLabel::parse(label).expect("label"),
        attribution_level: AttributionLevel::Item,
        evidence_basis: EvidenceBasis::DeterministicEffect,
        confidence,
        reason_codes: vec!["ledger_test".to_owned()],
        evidence_refs: vec![format!("evidence:{version}")],
        evaluator_ref: "evaluator:ledger".into(),
        evaluation_version: version.into(),
        created_at: at.into(),
        created_instant: parse_aware(at).expect("timestamp"),
    };
    o.observation_id = o.computed_id().into();
    let value = o.to_value();
    assert!(
        reward_memory::utility::validate_observation(&value).is_ok(),
        "generated observation must be valid"
    );
    value
}

fn digest(i: usize) -> String {
    format!("{i:016x}")
}

fn partition_flags(agent: &str) -> Vec<String> {
    [
        ("--agent-id", agent),
        ("--project-id", "project:ledger"),
        ("--corpus-id", "ledger-corpus"),
        ("--surface-id", "loopx.issue_fix"),
        ("--retrieval-snapshot-ref", "retrieval:ledger"),
        ("--policy-snapshot-ref", "policy:ledger"),
    ]
    .iter()
    .flat_map(|(f, v)| [(*f).to_owned(), (*v).to_owned()])
    .collect()
}

#[test]
fn refused_deliveries_report_line_and_reason_and_are_never_stored() {
    for backend in backends() {
        let scratch = Scratch::new();
        let ledger = fresh_ledger(&scratch, &backend, "ledger");
        let good = observation(
            "agent:a",
            &digest(1),
            "v1",
            "helpful",
            0.5,
            "2026-08-15T00:00:00Z",
        );
        let mut bad_label = good.clone();
        if let Value::Object(m) = &mut bad_label {
            m.insert("utility_label", "great");
        }
        let mut bad_id = good.clone();
        if let Value::Object(m) = &mut bad_id {
            m.insert("observation_id", format!("muo_{}", "0".repeat(64)));
        }
        let other = observation(
            "agent:a",
            &digest(2),
            "v2",
            "harmful",
            0.7,
            "2026-08-15T01:00:00Z",
        );
        let text = format!(
            "{}\n{{not json\n\n[1, 2]\n{}\n{}\n{}\n",
            json::dumps(&good, reward_memory::ledger::engine::COMPACT),
            json::dumps(&bad_label, reward_memory::ledger::engine::COMPACT),
            json::dumps(&bad_id, reward_memory::ledger::engine::COMPACT),
            json::dumps(&other, reward_memory::ledger::engine::COMPACT),
        );
        scratch.write("mixed.jsonl", &text);
        let receipt = append(&scratch, &ledger, "mixed.jsonl", None);
        assert_eq!(receipt.code, 2);
        if matches!(backend, Backend::Sqlite) {
            snap!("utility_ledger_append_refusals", receipt);
        }
        let export = ledger_cmd(&scratch, "export", &ledger, &[]);
        assert_eq!(
            export.stdout.lines().count(),
            2,
            "only the valid deliveries are stored"
        );
        // A structurally broken object form stores nothing at all.
        scratch.write("broken.json", "{\"observations\": [{\"a\": 1}, ");
        let broken = append(&scratch, &ledger, "broken.json", None);
        assert_eq!(broken.code, 2);
        assert_eq!(broken.json()["schema_version"], "reward_memory_error_v0");
        let after = ledger_cmd(&scratch, "export", &ledger, &[]);
        assert_eq!(after.stdout, export.stdout);
    }
}

#[test]
fn credential_shaped_deliveries_and_partitions_are_refused() {
    let scratch = Scratch::new();
    let ledger = fresh_ledger(&scratch, &Backend::Sqlite, "ledger");
    let good = observation(
        "agent:a",
        &digest(1),
        "v1",
        "helpful",
        0.5,
        "2026-08-15T00:00:00Z",
    );
    // `reason_codes` is outside the identity, so the id stays canonical: only the
    // credential rule refuses these (the reference's validation accepts them).
    let mut lines = vec![json::dumps(&good, reward_memory::ledger::engine::COMPACT)];
    for code in ["password:hunter2", "api_key:sk-123456789", "token:abc123"] {
        let mut bad = good.clone();
        if let Value::Object(m) = &mut bad {
            m.insert("reason_codes", Value::from(vec![code]));
        }
        assert!(reward_memory::utility::validate_observation(&bad).is_ok());
        lines.push(json::dumps(&bad, reward_memory::ledger::engine::COMPACT));
    }
    scratch.write("lines.jsonl", &format!("{}\n", lines.join("\n")));
    let receipt = append(&scratch, &ledger, "lines.jsonl", None);
    assert_eq!(receipt.code, 2, "{}", receipt.stdout);
    assert!(!receipt.stdout.contains("hunter2"), "{}", receipt.stdout);
    let packet = receipt.json();
    assert_eq!(packet["appended"], 1);
    assert_eq!(packet["refused"], 3);
    let refusals = packet["refusals"].as_array().expect("refusals");
    let shapes = ["password=...", "api_key=...", "token=..."];
    for (refusal, shape) in refusals.iter().zip(shapes) {
        assert_eq!(refusal["reason_code"], "observation_not_public_safe");
        assert_eq!(
            refusal["error"],
            format!(
                "observation.reason_codes looks like it holds a credential ({shape}): \
                 remove the secret; packets must be public-safe"
            )
        );
    }
    // A partition named by a credential-shaped ref is refused before any read.
    let mut flags = partition_flags("agent:a");
    flags[9] = "password:hunter2".to_owned();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    for sub in ["project", "subject"] {
        let mut extra = flags.clone();
        if sub == "subject" {
            extra.extend(["--memory-ref-digest", "0000000000000001"]);
        }
        let run = ledger_cmd(&scratch, sub, &ledger, &extra);
        assert_eq!(run.code, 2, "{sub}: {}", run.stdout);
        assert_eq!(
            run.json()["error"],
            "retrieval_snapshot_ref looks like it holds a credential (password=...): \
             remove the secret; packets must be public-safe",
            "{sub}"
        );
    }
}

#[test]
fn beyond_the_caps_prints_the_ledger_packet_and_pages_cover_every_subject_once() {
    for backend in backends() {
        let scratch = Scratch::new();
        let ledger = fresh_ledger(&scratch, &backend, "ledger");
        let mut items = Vec::new();
        for i in 0..300 {
            let label = ["helpful", "harmful", "neutral"][i % 3];
            items.push(observation(
                "agent:big",
                &digest(i % 150),
                &format!("v{i}"),
                label,
                0.1 + (i % 7) as f64 / 10.0,
                &format!("2026-08-15T{:02}:{:02}:00Z", i / 60, i % 60),
            ));
        }
        // Two conflicting versions and a retry.
        let conflict = observation(
            "agent:big",
            &digest(3),
            "v3",
            "unknown",
            0.2,
            "2026-08-15T00:03:00Z",
        );
        items.push(conflict);
        items.push(items[10].clone());
        scratch.write("big.jsonl", &jsonl(&items));
        let receipt = append(&scratch, &ledger, "big.jsonl", None);
        assert_eq!(receipt.code, 0, "{}", receipt.stdout);
        let flags = partition_flags("agent:big");
        let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
        let whole = ledger_cmd(&scratch, "project", &ledger, &flag_refs);
        assert_eq!(whole.code, 0, "{}", whole.stdout);
        let packet = whole.json();
        assert_eq!(
            packet["schema_version"],
            "memory_utility_ledger_projection_v0"
        );
        assert_eq!(packet["delivery_count"], 302);
        assert_eq!(packet["accepted_observation_count"], 299);
        assert_eq!(packet["conflicting_observation_count"], 1);
        assert_eq!(packet["rejected_observation_count"], 2);
        assert_eq!(packet["duplicate_observation_count"], 1);
        assert_eq!(packet["subject_count"], 150);
        assert_eq!(packet["status"], "review_required");
        // Pages of 40 cover the 150 subjects exactly once, in order.
        let mut seen = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let mut args = flag_refs.clone();
            args.extend(["--limit", "40"]);
            let after_value;
            if let Some(a) = &after {
                after_value = a.clone();
                args.extend(["--after", after_value.as_str()]);
            }
            let page = ledger_cmd(&scratch, "project", &ledger, &args);
            assert_eq!(page.code, 0, "{}", page.stdout);
            let p = page.json();
            for s in p["subjects"].as_array().expect("subjects") {
                seen.push(s["subject_id"].as_str().expect("id").to_owned());
            }
            match p["page"]["next_after"].as_str() {
                Some(next) => after = Some(next.to_owned()),
                None => break,
            }
        }
        assert_eq!(seen.len(), 150);
        let unique: std::collections::BTreeSet<&String> = seen.iter().collect();
        assert_eq!(unique.len(), 150);
        // The printed packet passes its own validator.
        scratch.write("packet.json", &whole.stdout);
        let check = run_in(
            &scratch,
            &[
                "utility-validate",
                "--input",
                "packet.json",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(check.code, 0, "{}", check.stdout);
    }
}

// ---------------------------------------------------------------------------------------
// Concurrency and durability
// ---------------------------------------------------------------------------------------

/// 8 appenders × 1000 deliveries over 16 partitions: overlapping duplicates, retries
/// and conflicting versions. Every delivery is stored once, the counters are exact and
/// each partition projects exactly as `utility-project` over its union.
fn concurrent_appenders(backend: &Backend) {
    let scratch = Scratch::new();
    let ledger = fresh_ledger(&scratch, backend, "ledger");
    let pool: Vec<(String, usize, String)> = (0..16)
        .flat_map(|p| (0..240).map(move |i| (format!("agent:p{p}"), i % 60, format!("v{i}"))))
        .collect();
    let mut all: Vec<Value> = Vec::new();
    let mut per_process: Vec<Vec<Value>> = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..8 {
        let mut batch = Vec::new();
        for _ in 0..1000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let (agent, d, version) =
                &pool[usize::try_from(state % pool.len() as u64).unwrap_or(0)];
            let kind = state % 20;
            let label = if kind == 0 { "harmful" } else { "helpful" };
            let at = if kind == 1 {
                "2026-08-16T00:00:00Z"
            } else {
                "2026-08-15T00:00:00Z"
            };
            batch.push(observation(agent, &digest(*d), version, label, 0.6, at));
        }
        all.extend(batch.iter().cloned());
        per_process.push(batch);
    }
    let mut children = Vec::new();
    for (k, batch) in per_process.iter().enumerate() {
        // Each process appends its deliveries in 4 batches.
        let name = format!("p{k}.jsonl");
        scratch.write(&name, &jsonl(batch));
        let script = format!(
            "set -e; for part in 0 1 2 3; do sed -n \"$((part*250+1)),$((part*250+250))p\" {name} | \"$0\" utility-ledger append --ledger \"$1\" --input - --format json; done"
        );
        let mut sh = Command::new("sh");
        sh.current_dir(&scratch.path)
            .env("HOME", scratch.path.join(".home"))
            .env_remove("REWARD_MEMORY_LEDGER")
            .arg("-c")
            .arg(&script)
            .arg(env!("CARGO_BIN_EXE_reward-memory"))
            .arg(&ledger)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        children.push(sh.spawn().expect("appender starts"));
    }
    let mut totals = [0i64; 4];
    for child in children {
        let out = child.wait_with_output().expect("appender finishes");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // Four pretty-printed receipts back to back.
        for receipt in text.split("\n}\n").filter(|s| !s.trim().is_empty()) {
            let v: serde_json::Value =
                serde_json::from_str(&format!("{receipt}\n}}")).expect("receipt JSON");
            for (i, k) in ["received", "appended", "duplicate", "conflicting"]
                .iter()
                .enumerate()
            {
                totals[i] += v[k].as_i64().expect("count");
            }
        }
    }
    assert_eq!(totals[0], 8000);
    assert_eq!(totals[1] + totals[2] + totals[3], 8000);
    let distinct: std::collections::BTreeSet<String> = all
        .iter()
        .filter_map(|o| {
            o.get("observation_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(
        totals[1] as usize,
        distinct.len(),
        "each observation appended once"
    );
    let verify = ledger_cmd(&scratch, "verify", &ledger, &[]);
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    assert_eq!(verify.json()["delivery_count"], 8000);
    for p in 0..16 {
        let agent = format!("agent:p{p}");
        let union: Vec<Value> = all
            .iter()
            .filter(|o| {
                o.get("scope")
                    .and_then(|s| s.get("agent_id"))
                    .and_then(Value::as_str)
                    == Some(agent.as_str())
            })
            .cloned()
            .collect();
        let input = reward_memory::obj! {
            "observations" => Value::from(union),
            "scope" => reward_memory::obj! {
                "agent_id" => agent.as_str(),
                "project_id" => "project:ledger",
                "corpus_id" => "ledger-corpus",
                "surface_id" => "loopx.issue_fix",
            },
            "retrieval_snapshot_ref" => "retrieval:ledger",
            "policy_snapshot_ref" => "policy:ledger",
        };
        scratch.write("union.json", &json::to_pretty_line(&Value::Object(input)));
        let reference = run_in(
            &scratch,
            &[
                "utility-project",
                "--input",
                "union.json",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(reference.code, 0, "{}", reference.stdout);
        let flags = partition_flags(&agent);
        let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
        let got = ledger_cmd(&scratch, "project", &ledger, &flag_refs);
        assert!(
            got.stdout == reference.stdout,
            "partition {p} differs from utility-project"
        );
    }
}

#[test]
fn eight_concurrent_appenders_store_every_delivery_once() {
    for backend in backends() {
        concurrent_appenders(&backend);
    }
}

#[test]
fn sigkill_during_append_never_corrupts_or_half_commits() {
    let scratch = Scratch::new();
    let ledger = scratch.path.join("ledger.sqlite3");
    let ledger_text = ledger.to_string_lossy().into_owned();
    let mut batches: Vec<Vec<String>> = Vec::new();
    let mut printed: Vec<bool> = Vec::new();
    let mut state = 0x1234_5678_9abc_def1u64;
    // The ledger exists before the first kill.
    scratch.write(
        "seed.jsonl",
        &jsonl(&[observation(
            "agent:k0",
            &digest(999),
            "seed",
            "helpful",
            0.3,
            "2026-08-15T00:00:00Z",
        )]),
    );
    assert_eq!(append(&scratch, &ledger_text, "seed.jsonl", None).code, 0);
    for round in 0..110usize {
        // 150 deliveries unique to this batch (its own evaluation versions).
        let batch: Vec<Value> = (0..150)
            .map(|i| {
                observation(
                    &format!("agent:k{}", round % 4),
                    &digest(i % 50),
                    &format!("r{round}-{i}"),
                    "helpful",
                    0.3,
                    "2026-08-15T00:00:00Z",
                )
            })
            .collect();
        batches.push(
            batch
                .iter()
                .filter_map(|o| {
                    o.get("observation_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .collect(),
        );
        scratch.write("batch.jsonl", &jsonl(&batch));
        let mut child = bin()
            .current_dir(&scratch.path)
            .env("HOME", scratch.path.join(".home"))
            .args([
                "utility-ledger",
                "append",
                "--ledger",
                &ledger_text,
                "--input",
                "batch.jsonl",
                "--format",
                "json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("appender starts");
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::thread::sleep(std::time::Duration::from_micros(state % 400_000));
        let _ = child.kill(); // SIGKILL
        let out = child.wait_with_output().expect("appender ends");
        printed.push(String::from_utf8_lossy(&out.stdout).contains("\"status\": \"committed\""));
    }
    assert!(batches.len() >= 100);
    let check = reward_memory::ledger::sqlite::integrity_check(&ledger).expect("integrity");
    assert_eq!(check, "ok");
    let verify = ledger_cmd(&scratch, "verify", &ledger_text, &[]);
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    let export = ledger_cmd(&scratch, "export", &ledger_text, &[]);
    let stored: std::collections::BTreeSet<String> = export
        .stdout
        .lines()
        .filter_map(|l| json::parse(l).ok())
        .filter_map(|v| {
            v.get("observation_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    let mut committed = 0;
    for (ids, was_printed) in batches.iter().zip(&printed) {
        let present = ids.iter().filter(|id| stored.contains(*id)).count();
        assert!(
            present == 0 || present == ids.len(),
            "a batch is half visible ({present}/{})",
            ids.len()
        );
        if *was_printed {
            assert_eq!(
                present,
                ids.len(),
                "a batch whose receipt was printed is missing"
            );
        }
        if present > 0 {
            committed += 1;
        }
    }
    // Kills land before, during and after commits: both kinds must occur in 110 rounds.
    assert!(
        committed > 0,
        "no batch committed: the kills came too early"
    );
}

/// A `PRAGMA` of a ledger file (`journal_mode`, `page_size`), read without changing it.
fn pragma<T: rusqlite::types::FromSql>(path: &Path, name: &str) -> T {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("opens");
    conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
        .expect(name)
}

#[test]
fn a_new_ledger_is_filled_under_a_rollback_journal_and_left_with_write_ahead_logging() {
    let scratch = Scratch::new();
    let ledger = scratch.path.join("first.sqlite3");
    let ledger_text = ledger.to_string_lossy().into_owned();
    // Enough deliveries to spill the page cache into the file before the commit.
    scratch.write("many.jsonl", &jsonl(&deliveries(20_000)));
    let mut child = bin()
        .current_dir(&scratch.path)
        .env("HOME", scratch.path.join(".home"))
        .args([
            "utility-ledger",
            "append",
            "--ledger",
            &ledger_text,
            "--input",
            "many.jsonl",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("appender starts");
    // Killed once its rollback journal exists (a first write journals into `-journal`,
    // never `-wal`), unless it commits first.
    let journal = scratch.path.join("first.sqlite3-journal");
    let start = std::time::Instant::now();
    let mut killed = false;
    while start.elapsed() < std::time::Duration::from_secs(60) {
        if journal.exists() {
            let _ = child.kill(); // SIGKILL
            killed = true;
            break;
        }
        if child.try_wait().expect("waits").is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        !scratch.path.join("first.sqlite3-wal").exists(),
        "a first write keeps no log"
    );
    let export = ledger_cmd(&scratch, "export", &ledger_text, &[]);
    if killed {
        // The journal rolls the file back to what it held: nothing.
        assert_ne!(export.code, 0, "{}", export.stdout);
        assert!(
            error_text(&export).contains("does not exist yet"),
            "{}",
            export.stdout
        );
    }
    // The next append completes the ledger, and leaves it with write-ahead logging.
    scratch.write("one.jsonl", &jsonl(&deliveries(3)));
    assert_eq!(append(&scratch, &ledger_text, "one.jsonl", None).code, 0);
    assert!(!journal.exists());
    assert_eq!(pragma::<String>(&ledger, "journal_mode"), "wal");
    assert_eq!(
        pragma::<i64>(&ledger, "page_size"),
        16_384,
        "a new ledger has 16 KiB pages"
    );
    let check = reward_memory::ledger::sqlite::integrity_check(&ledger).expect("integrity");
    assert_eq!(check, "ok");
    let verify = ledger_cmd(&scratch, "verify", &ledger_text, &[]);
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    let exported = ledger_cmd(&scratch, "export", &ledger_text, &[])
        .stdout
        .lines()
        .count();
    assert_eq!(exported, if killed { 3 } else { 20_000 });
}

// ---------------------------------------------------------------------------------------
// Bad locations and faults
// ---------------------------------------------------------------------------------------

fn error_text(run: &Run) -> String {
    let v = run.json();
    assert_eq!(
        v["schema_version"], "reward_memory_error_v0",
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 2);
    v["error"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn bad_ledger_files_are_error_packets_and_are_never_replaced() {
    let scratch = Scratch::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/utility_project/valid/helpful-item.json");
    scratch.write(
        "input.json",
        &std::fs::read_to_string(fixture).expect("fixture"),
    );
    let path = |n: &str| scratch.path.join(n).to_string_lossy().into_owned();

    // A directory at the ledger path.
    std::fs::create_dir_all(scratch.path.join("dir.sqlite3")).expect("dir");
    let e = error_text(&append(&scratch, &path("dir.sqlite3"), "input.json", None));
    assert!(e.contains("directory"), "{e}");

    // A file that is not a database.
    scratch.write("garbage.sqlite3", "this is not a ledger\n");
    let e = error_text(&append(
        &scratch,
        &path("garbage.sqlite3"),
        "input.json",
        None,
    ));
    assert!(e.contains("corrupt or not a SQLite database"), "{e}");
    assert_eq!(
        std::fs::read_to_string(scratch.path.join("garbage.sqlite3")).expect("kept"),
        "this is not a ledger\n"
    );

    // A SQLite database of something else.
    {
        let conn = rusqlite::Connection::open(scratch.path.join("other.sqlite3")).expect("db");
        conn.execute_batch("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('keep');")
            .expect("table");
    }
    let before = std::fs::read(scratch.path.join("other.sqlite3")).expect("bytes");
    let e = error_text(&append(
        &scratch,
        &path("other.sqlite3"),
        "input.json",
        None,
    ));
    assert!(e.contains("not a utility ledger"), "{e}");
    assert!(
        std::fs::read(scratch.path.join("other.sqlite3")).expect("bytes") == before,
        "a foreign database must stay unchanged"
    );

    // A ledger written by a newer version.
    let newer = path("newer.sqlite3");
    assert_eq!(append(&scratch, &newer, "input.json", None).code, 0);
    {
        let conn = rusqlite::Connection::open(&newer).expect("db");
        conn.execute(
            "UPDATE ledger_meta SET value = '7' WHERE key = 'ledger_schema_version'",
            [],
        )
        .expect("bump");
    }
    let e = error_text(&append(&scratch, &newer, "input.json", None));
    assert!(e.contains("newer than this reward-memory supports"), "{e}");
    let e = error_text(&ledger_cmd(&scratch, "verify", &newer, &[]));
    assert!(e.contains("newer"), "{e}");

    // A ledger in the first layout (schema version 1): refused with what to do, untouched.
    let older = path("older.sqlite3");
    assert_eq!(append(&scratch, &older, "input.json", None).code, 0);
    {
        let conn = rusqlite::Connection::open(&older).expect("db");
        conn.execute(
            "UPDATE ledger_meta SET value = '1' WHERE key = 'ledger_schema_version'",
            [],
        )
        .expect("downgrade");
    }
    let before = std::fs::read(&older).expect("bytes");
    let e = error_text(&append(&scratch, &older, "input.json", None));
    assert!(
        e.contains("schema version 1 is older than this reward-memory reads (2)")
            && e.contains("append the export to a new ledger"),
        "{e}"
    );
    let e = error_text(&ledger_cmd(&scratch, "export", &older, &[]));
    assert!(e.contains("older"), "{e}");
    assert!(
        std::fs::read(&older).expect("bytes") == before,
        "an older ledger must stay unchanged"
    );

    // A truncated ledger: reported, never rebuilt.
    let truncated = path("truncated.sqlite3");
    let big: Vec<Value> = (0..400)
        .map(|i| {
            observation(
                "agent:t",
                &digest(i),
                &format!("t{i}"),
                "helpful",
                0.4,
                "2026-08-15T00:00:00Z",
            )
        })
        .collect();
    scratch.write("big.jsonl", &jsonl(&big));
    assert_eq!(append(&scratch, &truncated, "big.jsonl", None).code, 0);
    let len = std::fs::metadata(&truncated).expect("meta").len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&truncated)
        .expect("open");
    file.set_len(len / 3).expect("truncate");
    drop(file);
    let bytes = std::fs::read(&truncated).expect("bytes");
    let appended = append(&scratch, &truncated, "input.json", None);
    let verified = ledger_cmd(&scratch, "verify", &truncated, &[]);
    assert!(
        appended.code == 2 || verified.code == 2,
        "a truncated ledger must be reported: {} / {}",
        appended.stdout,
        verified.stdout
    );
    if appended.code == 2 {
        assert!(
            error_text(&appended).contains("corrupt"),
            "{}",
            appended.stdout
        );
        assert!(
            std::fs::read(&truncated).expect("bytes") == bytes,
            "never rewritten"
        );
    }

    // The read commands never create a ledger.
    let absent = path("absent/ledger.sqlite3");
    for sub in ["verify", "export"] {
        let e = error_text(&ledger_cmd(&scratch, sub, &absent, &[]));
        assert!(e.contains("does not exist yet"), "{e}");
    }
    let flags = partition_flags("agent:x");
    let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    let e = error_text(&ledger_cmd(&scratch, "project", &absent, &flag_refs));
    assert!(e.contains("does not exist yet"), "{e}");
    assert!(!scratch.path.join("absent").exists());
}

#[test]
fn new_ledger_file_is_private_and_lives_under_the_runtime_root() {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = Scratch::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/utility_project/valid/helpful-item.json");
    scratch.write(
        "input.json",
        &std::fs::read_to_string(fixture).expect("fixture"),
    );
    let root = scratch.path.join("root");
    let run = run_in(
        &scratch,
        &[
            "--runtime-root",
            &root.to_string_lossy(),
            "utility-ledger",
            "append",
            "--input",
            "input.json",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let file = root.join("reward-memory/utility-ledger.sqlite3");
    let mode = std::fs::metadata(&file)
        .expect("ledger created")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // REWARD_MEMORY_LEDGER points elsewhere.
    let other = scratch.path.join("env.sqlite3");
    let mut cmd = bin();
    let out = cmd
        .current_dir(&scratch.path)
        .env("HOME", scratch.path.join(".home"))
        .env("REWARD_MEMORY_LEDGER", &other)
        .args(["utility-ledger", "append", "--input", "input.json"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert!(other.is_file());
}

/// Runs `script` as root in a private mount namespace (tmpfs mounts vanish with it);
/// `None` when the machine does not allow it.
fn in_mount_namespace(scratch: &Scratch, script: &str) -> Option<std::process::Output> {
    let probe = Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    Command::new("unshare")
        .current_dir(&scratch.path)
        .env("HOME", scratch.path.join(".home"))
        .env("BIN", env!("CARGO_BIN_EXE_reward-memory"))
        .env_remove("REWARD_MEMORY_LEDGER")
        .args(["-m", "sh", "-c", script])
        .output()
        .ok()
}

#[test]
fn full_disk_and_read_only_file_system_are_error_packets() {
    let scratch = Scratch::new();
    let small: Vec<Value> = (0..3)
        .map(|i| {
            observation(
                "agent:f",
                &digest(i),
                &format!("f{i}"),
                "helpful",
                0.4,
                "2026-08-15T00:00:00Z",
            )
        })
        .collect();
    let big: Vec<Value> = (0..3000)
        .map(|i| {
            observation(
                "agent:f",
                &digest(i),
                &format!("g{i}"),
                "neutral",
                0.4,
                "2026-08-15T01:00:00Z",
            )
        })
        .collect();
    scratch.write("small.jsonl", &jsonl(&small));
    scratch.write("big.jsonl", &jsonl(&big));
    std::fs::create_dir_all(scratch.path.join("mnt")).expect("mount point");
    let script = r#"
set -u
mount -t tmpfs -o size=400k tmpfs mnt || exit 90
"$BIN" utility-ledger append --ledger mnt/l.sqlite3 --input small.jsonl --format json > small.out; echo "small=$?"
"$BIN" utility-ledger append --ledger mnt/l.sqlite3 --input big.jsonl --format json > full.out; echo "full=$?"
mount -o remount,size=64m mnt
"$BIN" utility-ledger verify --ledger mnt/l.sqlite3 --format json > verify.out; echo "verify=$?"
"$BIN" utility-ledger export --ledger mnt/l.sqlite3 > export.out; echo "export=$?"
mount -o remount,ro mnt
"$BIN" utility-ledger append --ledger mnt/l.sqlite3 --input small.jsonl --format json > ro.out; echo "ro=$?"
"$BIN" utility-ledger append --ledger mnt/new.sqlite3 --input small.jsonl --format json > ro-new.out; echo "ronew=$?"
"#;
    let Some(out) = in_mount_namespace(&scratch, script) else {
        // This machine does not allow a private tmpfs mount: nothing to check here.
        return;
    };
    let status = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        status.contains("small=0"),
        "{status} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(status.contains("full=2"), "{status}");
    let read = |n: &str| std::fs::read_to_string(scratch.path.join(n)).unwrap_or_default();
    let full = json::parse(&read("full.out")).expect("error packet");
    assert_eq!(
        full.get("schema_version").and_then(Value::as_str),
        Some("reward_memory_error_v0")
    );
    assert!(
        full.get("error")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .contains("disk is full"),
        "{}",
        read("full.out")
    );
    assert!(
        status.contains("verify=0"),
        "{status} {}",
        read("verify.out")
    );
    assert_eq!(
        read("export.out").lines().count(),
        3,
        "the full-disk batch left nothing behind"
    );
    assert!(status.contains("ro=2"), "{status}");
    assert!(read("ro.out").contains("read-only"), "{}", read("ro.out"));
    assert!(status.contains("ronew=2"), "{status}");
    assert!(
        read("ro-new.out").contains("reward_memory_error_v0"),
        "{}",
        read("ro-new.out")
    );
}

#[test]
fn unreachable_postgres_is_an_error_packet_without_credentials() {
    let scratch = Scratch::new();
    let url = "postgres://ledger_user:s3cret-pass@127.0.0.1:1/ledger";
    let run = ledger_cmd(&scratch, "verify", url, &[]);
    let e = error_text(&run);
    assert!(e.contains("unreachable"), "{e}");
    assert!(!run.stdout.contains("s3cret-pass") && !run.stderr.contains("s3cret-pass"));
}

#[test]
fn wrong_postgres_password_is_an_error_packet_without_credentials() {
    let Some(Backend::Postgres(admin)) = backends()
        .into_iter()
        .find(|b| matches!(b, Backend::Postgres(_)))
    else {
        // REWARD_MEMORY_TEST_PG_URL is not set (scripts/postgres-it.sh sets it).
        return;
    };
    let scratch = Scratch::new();
    let ledger = fresh_ledger(&scratch, &Backend::Postgres(admin.clone()), "auth");
    let _ = ledger;
    let config: postgres::Config = admin.parse().expect("admin url");
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    // A role that must authenticate with its password (scripts/postgres-it.sh).
    let mut client = postgres::Client::connect(&admin, postgres::NoTls).expect("admin");
    let _ = client.batch_execute("CREATE ROLE ledger_auth LOGIN PASSWORD 'right-password-456'");
    let url = format!("postgres://ledger_auth:wrong-password-123@{host}:{port}/postgres");
    let run = ledger_cmd(&scratch, "verify", &url, &[]);
    let e = error_text(&run);
    assert!(e.contains("refused the credentials"), "{e}");
    assert!(!run.stdout.contains("wrong-password-123"));
}

#[test]
fn printed_ledger_packets_conform_to_their_schemas() {
    let scratch = Scratch::new();
    let ledger = scratch
        .path
        .join("ledger.sqlite3")
        .to_string_lossy()
        .into_owned();
    let mut items: Vec<Value> = (0..200)
        .map(|i| {
            observation(
                "agent:s",
                &digest(i % 130),
                &format!("s{i}"),
                "helpful",
                0.5,
                "2026-08-15T00:00:00Z",
            )
        })
        .collect();
    items.push(observation(
        "agent:s",
        &digest(1),
        "s1",
        "harmful",
        0.5,
        "2026-08-15T00:00:00Z",
    ));
    scratch.write("items.jsonl", &format!("{}not json\n", jsonl(&items)));
    let flags = partition_flags("agent:s");
    let mut flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    let checks = [
        (
            "memory_utility_ledger_append_v0",
            append(&scratch, &ledger, "items.jsonl", None),
        ),
        (
            "memory_utility_ledger_projection_v0",
            ledger_cmd(&scratch, "project", &ledger, &flag_refs),
        ),
        (
            "memory_utility_ledger_verify_v0",
            ledger_cmd(&scratch, "verify", &ledger, &[]),
        ),
        ("memory_utility_ledger_subject_v0", {
            let d1 = digest(1);
            let d2 = digest(2);
            flag_refs.extend([
                "--memory-ref-digest",
                d1.as_str(),
                "--memory-ref-digest",
                d2.as_str(),
            ]);
            ledger_cmd(&scratch, "subject", &ledger, &flag_refs)
        }),
    ];
    for (schema_version, run) in checks {
        let packet = json::parse(&run.stdout).unwrap_or_else(|e| panic!("{schema_version}: {e}"));
        assert_eq!(
            packet.get("schema_version").and_then(Value::as_str),
            Some(schema_version)
        );
        if let Err(err) =
            reward_memory::schema::check(&packet, &crate::support::schema_named(schema_version))
        {
            panic!("{schema_version} does not conform: {err}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Damaged files, read-only copies, incomplete metadata and append statuses
// ---------------------------------------------------------------------------------------

/// `count` valid deliveries over three agents and 200 memories, every tenth a retry.
fn deliveries(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| {
            let version = if i % 10 == 9 { i - 1 } else { i };
            observation(
                &format!("agent:d{}", version % 3),
                &digest(version % 200),
                &format!("d{version}"),
                ["helpful", "harmful", "neutral"][version % 3],
                0.5,
                if i % 10 == 9 {
                    "2026-08-15T01:00:00Z"
                } else {
                    "2026-08-15T00:00:00Z"
                },
            )
        })
        .collect()
}

/// Overwrites page `page` (1-based) of a SQLite file with zeros: plain file writes.
fn zero_page(path: &Path, page: u64, page_size: u64) {
    use std::os::unix::fs::FileExt as _;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open ledger");
    file.write_all_at(&vec![0u8; page_size as usize], (page - 1) * page_size)
        .expect("zero page");
    file.sync_all().expect("sync");
}

/// A leaf page of the `deliveries` table in the middle of the file, and the page size.
fn a_deliveries_leaf(path: &Path) -> (u64, u64) {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let size: u64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .expect("page size");
    let pages: Vec<u64> = conn
        .prepare("SELECT pageno FROM dbstat WHERE name = 'deliveries' AND pagetype = 'leaf' ORDER BY pageno")
        .expect("dbstat")
        .query_map([], |r| r.get(0))
        .expect("pages")
        .collect::<Result<_, _>>()
        .expect("pages");
    assert!(pages.len() > 10, "{pages:?}");
    (pages[pages.len() / 2], size)
}

/// The sequences a salvage summary names as lost.
fn lost_sequences(summary: &str) -> Vec<usize> {
    let Some((_, list)) = summary
        .trim()
        .rsplit_once("could not be exported: sequences ")
    else {
        return Vec::new();
    };
    list.split(", ")
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => {
                (a.parse::<usize>().expect("from")..=b.parse::<usize>().expect("to")).collect()
            }
            None => vec![part.parse::<usize>().expect("sequence")],
        })
        .collect()
}

#[test]
fn damaged_ledger_refuses_appends_and_salvage_exports_every_readable_delivery() {
    let scratch = Scratch::new();
    let path = |n: &str| scratch.path.join(n).to_string_lossy().into_owned();
    let ledger = path("ledger.sqlite3");
    scratch.write("all.jsonl", &jsonl(&deliveries(3000)));
    scratch.write(
        "more.jsonl",
        &jsonl(&[observation(
            "agent:d0",
            &digest(7),
            "more",
            "helpful",
            0.5,
            "2026-08-16T00:00:00Z",
        )]),
    );
    assert_eq!(append(&scratch, &ledger, "all.jsonl", None).code, 0);
    let original = ledger_cmd(&scratch, "export", &ledger, &[]);
    assert_eq!(original.code, 0);
    let lines: Vec<&str> = original.stdout.lines().collect();
    assert_eq!(lines.len(), 3000);
    let sound_copy = path("sound.sqlite3");
    std::fs::copy(&ledger, &sound_copy).expect("copy");

    let (page, page_size) = a_deliveries_leaf(Path::new(&ledger));
    zero_page(Path::new(&ledger), page, page_size);
    let damaged = std::fs::read(&ledger).expect("bytes");

    // An append is refused with the cause and what to do; the file stays as it was.
    let refused = append(&scratch, &ledger, "more.jsonl", None);
    let e = error_text(&refused);
    assert!(
        e.contains("utility ledger file is damaged")
            && e.contains("nothing was appended")
            && e.contains("utility-ledger export --salvage")
            && e.contains("restore a backup"),
        "{e}"
    );
    assert!(
        std::fs::read(&ledger).expect("bytes") == damaged,
        "a refused append writes nothing"
    );

    // Verify reports the damage.
    let verified = ledger_cmd(&scratch, "verify", &ledger, &[]);
    assert_eq!(verified.code, 2, "{}", verified.stdout);
    let packet = verified.json();
    assert_eq!(packet["status"], "damaged", "{}", verified.stdout);
    assert_eq!(packet["ok"], false);
    let difference = packet["first_difference"].as_str().unwrap_or_default();
    assert!(
        difference.contains("quick_check") && difference.contains("--salvage"),
        "{difference}"
    );

    // The salvage exports every readable delivery, in order, and names the lost ones.
    let salvaged = ledger_cmd(&scratch, "export", &ledger, &["--salvage"]);
    assert_eq!(salvaged.code, 2, "an incomplete salvage is not ok");
    assert!(
        salvaged.stderr.contains("salvage incomplete: exported "),
        "{}",
        salvaged.stderr
    );
    let lost = lost_sequences(&salvaged.stderr);
    assert!(
        !lost.is_empty() && lost.len() < 100,
        "one page holds a few deliveries: {}",
        salvaged.stderr
    );
    let expected: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !lost.contains(&(i + 1)))
        .map(|(_, l)| *l)
        .collect();
    let got: Vec<&str> = salvaged.stdout.lines().collect();
    assert_eq!(got.len(), expected.len());
    assert!(
        got == expected,
        "salvaged lines are the readable export lines"
    );
    assert!(
        salvaged.stderr.contains(&format!(
            "exported {} of 3000 deliveries after sequence 0 (sequences 1-3000); {} could not be exported",
            expected.len(),
            lost.len()
        )),
        "{}",
        salvaged.stderr
    );
    assert!(
        std::fs::read(&ledger).expect("bytes") == damaged,
        "a salvage writes nothing"
    );

    // Appended to a new ledger, the salvaged deliveries verify.
    scratch.write("salvaged.jsonl", &salvaged.stdout);
    let fresh = path("fresh.sqlite3");
    let receipt = append(&scratch, &fresh, "salvaged.jsonl", None);
    assert_eq!(receipt.code, 0, "{}", receipt.stdout);
    let check = ledger_cmd(&scratch, "verify", &fresh, &[]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert_eq!(check.json()["status"], "verified");
    assert_eq!(
        check.json()["delivery_count"].as_u64(),
        Some(expected.len() as u64)
    );
    // The new ledger takes appends again.
    assert_eq!(append(&scratch, &fresh, "more.jsonl", None).code, 0);

    // On a sound ledger a salvage is the export, and says that it is complete.
    let sound = ledger_cmd(&scratch, "export", &sound_copy, &["--salvage"]);
    assert_eq!(sound.code, 0, "{}", sound.stderr);
    assert_eq!(sound.stdout, original.stdout);
    assert!(
        sound.stderr.contains(
            "salvage complete: exported all 3000 deliveries after sequence 0 (sequences 1-3000)"
        ),
        "{}",
        sound.stderr
    );

    // --salvage is a whole-ledger export.
    let flags = partition_flags("agent:d0");
    let mut args: Vec<&str> = flags.iter().map(String::as_str).collect();
    args.push("--salvage");
    let e = error_text(&ledger_cmd(&scratch, "export", &ledger, &args));
    assert!(e.contains("--salvage exports the whole ledger"), "{e}");
}

#[test]
fn append_checks_a_ledger_changed_outside_reward_memory_before_writing() {
    let scratch = Scratch::new();
    let ledger = scratch
        .path
        .join("ledger.sqlite3")
        .to_string_lossy()
        .into_owned();
    scratch.write("all.jsonl", &jsonl(&deliveries(400)));
    scratch.write(
        "one.jsonl",
        &jsonl(&[observation(
            "agent:d1",
            &digest(3),
            "one",
            "helpful",
            0.5,
            "2026-08-16T00:00:00Z",
        )]),
    );
    assert_eq!(append(&scratch, &ledger, "all.jsonl", None).code, 0);
    let record = scratch.path.join("ledger.sqlite3-checked");
    let recorded = std::fs::read_to_string(&record).expect("an append records the file it left");
    // The next append finds the file as recorded (no check) and records it again.
    assert_eq!(append(&scratch, &ledger, "one.jsonl", None).code, 0);
    let again = std::fs::read_to_string(&record).expect("record");
    assert_ne!(recorded, again, "the record follows each append");
    // A ledger file replaced by another (a restored copy) is checked before writing.
    let copy = scratch.path.join("copy.sqlite3");
    std::fs::copy(&ledger, &copy).expect("copy");
    std::fs::rename(&copy, &ledger).expect("replace");
    std::fs::remove_file(&record).expect("no record");
    assert_eq!(append(&scratch, &ledger, "one.jsonl", None).code, 0);
    assert!(record.is_file());
    let verified = ledger_cmd(&scratch, "verify", &ledger, &[]);
    assert_eq!(verified.json()["status"], "verified", "{}", verified.stdout);
}

/// Runs the binary as user `nobody` (65534) through `setpriv` when this process is root,
/// directly otherwise; `None` when root cannot change user here.
fn as_another_user(scratch: &Scratch, args: &[&str]) -> Option<Run> {
    let root = rustix::process::geteuid().is_root();
    let mut cmd = if root {
        let probe = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
            .output()
            .ok()?;
        if !probe.status.success() {
            return None;
        }
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_reward-memory"));
        cmd
    } else {
        Command::new(env!("CARGO_BIN_EXE_reward-memory"))
    };
    let output = cmd
        .current_dir(&scratch.path)
        .env("HOME", scratch.path.join(".home"))
        .env_remove("REWARD_MEMORY_LEDGER")
        .env_remove("LOOPX_REGISTRY")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let clean = |b: &[u8]| {
        String::from_utf8_lossy(b).replace(&*scratch.path.to_string_lossy(), "@CASE_DIR@")
    };
    Some(Run {
        code: output.status.code().unwrap_or(-1),
        stdout: clean(&output.stdout),
        stderr: clean(&output.stderr),
    })
}

/// The read commands over one ledger, in JSON: (name, args).
fn read_commands(ledger: &str) -> Vec<(&'static str, Vec<String>)> {
    let flags = partition_flags("agent:d1");
    let with = |head: &[&str], tail: &[String]| -> Vec<String> {
        head.iter()
            .map(|s| (*s).to_owned())
            .chain(tail.iter().cloned())
            .collect()
    };
    let location = ["--ledger".to_owned(), ledger.to_owned()];
    let json = ["--format".to_owned(), "json".to_owned()];
    vec![
        (
            "verify",
            with(
                &["utility-ledger", "verify"],
                &[&location[..], &json].concat(),
            ),
        ),
        ("export", with(&["utility-ledger", "export"], &location)),
        (
            "project",
            with(
                &["utility-ledger", "project"],
                &[&location[..], &json, &flags].concat(),
            ),
        ),
        (
            "subject",
            with(
                &[
                    "utility-ledger",
                    "subject",
                    "--memory-ref-digest",
                    &digest(1),
                ],
                &[&location[..], &json, &flags].concat(),
            ),
        ),
        (
            "rank-prior",
            with(
                &["rank-prior", "--input", "rank.json"],
                &[&location[..], &json].concat(),
            ),
        ),
    ]
}

/// A small ledger at `dir/l.sqlite3` and the rank-prior request of its partition.
fn read_only_fixture(scratch: &Scratch, dir: &str) -> String {
    std::fs::create_dir_all(scratch.path.join(dir)).expect("dir");
    scratch.write("few.jsonl", &jsonl(&deliveries(60)));
    let ledger = format!("{dir}/l.sqlite3");
    assert_eq!(append(scratch, &ledger, "few.jsonl", None).code, 0);
    let request = serde_json::json!({
        "profile": {
            "profile_id": "profile:read-only",
            "semantic_floor": 0.0,
            "candidate_pool": 64,
            "modifier_bounds": [0.5, 2.0],
            "min_evidence_basis": "evaluator_inference",
            "allow_evaluator_inference": true,
            "min_support": 1,
        },
        "partition": {
            "scope": {
                "agent_id": "agent:d1",
                "project_id": "project:ledger",
                "corpus_id": "ledger-corpus",
                "surface_id": "loopx.issue_fix",
            },
            "retrieval_snapshot_ref": "retrieval:ledger",
            "policy_snapshot_ref": "policy:ledger",
        },
        "candidates": [
            {"memory_ref_digest": digest(1), "relevance_score": 0.6},
            {"memory_ref_digest": digest(4), "relevance_score": 0.5},
        ],
    });
    scratch.write("rank.json", &request.to_string());
    ledger
}

#[test]
fn read_only_copy_is_readable_by_another_user_and_appends_say_why_not() {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = Scratch::new();
    let ledger = read_only_fixture(&scratch, "copy");
    let expected: Vec<Run> = read_commands(&ledger)
        .iter()
        .map(|(_, args)| {
            run_in(
                &scratch,
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
                None,
            )
        })
        .collect();
    let set_mode = |rel: &str, mode: u32| {
        std::fs::set_permissions(
            scratch.path.join(rel),
            std::fs::Permissions::from_mode(mode),
        )
        .expect("chmod");
    };
    set_mode(".", 0o755);
    set_mode("copy/l.sqlite3", 0o444);
    set_mode("copy", 0o555);
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(scratch.path.join("copy"))
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let mut checked = 0;
    for ((name, args), want) in read_commands(&ledger).iter().zip(&expected) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let Some(got) = as_another_user(&scratch, &args) else {
            set_mode("copy", 0o755);
            return; // root may not change user here: nothing to check
        };
        assert_eq!(want.code, 0, "{name}: {}", want.transcript());
        assert_eq!(got.transcript(), want.transcript(), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 5);
    let e = error_text(
        &as_another_user(
            &scratch,
            &[
                "utility-ledger",
                "append",
                "--ledger",
                &ledger,
                "--input",
                "few.jsonl",
                "--format",
                "json",
            ],
        )
        .expect("runs"),
    );
    assert!(
        e.contains("the ledger file is not writable by this user") && !e.contains("create"),
        "{e}"
    );
    let e = error_text(
        &as_another_user(
            &scratch,
            &[
                "utility-ledger",
                "append",
                "--ledger",
                "copy/new.sqlite3",
                "--input",
                "few.jsonl",
                "--format",
                "json",
            ],
        )
        .expect("runs"),
    );
    assert!(
        e.contains("cannot create the ledger file: its directory is not writable"),
        "{e}"
    );
    assert_eq!(listing(), before, "reads leave nothing beside the copy");
    set_mode("copy", 0o755);
}

#[test]
fn ledger_on_a_read_only_mount_is_readable_and_appends_name_the_file_system() {
    let scratch = Scratch::new();
    let ledger = read_only_fixture(&scratch, "src");
    let commands = read_commands("ro/l.sqlite3");
    let expected: Vec<Run> = read_commands(&ledger)
        .iter()
        .map(|(_, args)| {
            run_in(
                &scratch,
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
                None,
            )
        })
        .collect();
    // A copy whose write-ahead log still holds a batch: a connection kept open while the
    // batch is appended leaves it un-checkpointed.
    std::fs::create_dir_all(scratch.path.join("walsrc")).expect("dir");
    std::fs::copy(
        scratch.path.join(&ledger),
        scratch.path.join("walsrc/l.sqlite3"),
    )
    .expect("copy");
    {
        let holder =
            rusqlite::Connection::open(scratch.path.join("walsrc/l.sqlite3")).expect("open");
        // An open read transaction: the appender's close cannot checkpoint the WAL away.
        holder
            .execute_batch("BEGIN; SELECT count(*) FROM deliveries;")
            .expect("read");
        scratch.write(
            "late.jsonl",
            &jsonl(&[observation(
                "agent:d1",
                &digest(9),
                "late",
                "helpful",
                0.5,
                "2026-08-16T00:00:00Z",
            )]),
        );
        assert_eq!(
            append(&scratch, "walsrc/l.sqlite3", "late.jsonl", None).code,
            0
        );
        std::fs::create_dir_all(scratch.path.join("walcopy")).expect("dir");
        for suffix in ["", "-wal"] {
            std::fs::copy(
                scratch.path.join(format!("walsrc/l.sqlite3{suffix}")),
                scratch.path.join(format!("walcopy/l.sqlite3{suffix}")),
            )
            .expect("copy with its WAL");
        }
        assert!(
            std::fs::metadata(scratch.path.join("walcopy/l.sqlite3-wal"))
                .expect("wal")
                .len()
                > 0
        );
    }
    std::fs::create_dir_all(scratch.path.join("ro")).expect("mount point");
    std::fs::create_dir_all(scratch.path.join("rowal")).expect("mount point");
    let mut script = String::from(
        "set -u\nmount --bind src ro && mount -o remount,bind,ro ro || exit 90\n\
         mount --bind walcopy rowal && mount -o remount,bind,ro rowal || exit 91\n",
    );
    for (i, (_, args)) in commands.iter().enumerate() {
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        script.push_str(&format!(
            "\"$BIN\" {} > out-{i} 2> err-{i}; echo $? > code-{i}\n",
            quoted.join(" ")
        ));
    }
    script.push_str(
        "\"$BIN\" utility-ledger append --ledger ro/l.sqlite3 --input few.jsonl --format json > append.out\n\
         \"$BIN\" utility-ledger append --ledger ro/new.sqlite3 --input few.jsonl --format json > new.out\n\
         \"$BIN\" utility-ledger verify --ledger rowal/l.sqlite3 --format json > wal.out\n\
         ls -a ro > ro.list\n",
    );
    let Some(out) = in_mount_namespace(&scratch, &script) else {
        return; // no private mount namespace on this machine: nothing to check here
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |n: &str| std::fs::read_to_string(scratch.path.join(n)).unwrap_or_default();
    for (i, ((name, _), want)) in commands.iter().zip(&expected).enumerate() {
        assert_eq!(want.code, 0, "{name}: {}", want.transcript());
        assert_eq!(
            read(&format!("code-{i}")).trim(),
            "0",
            "{name}: {}",
            read(&format!("out-{i}"))
        );
        let got = read(&format!("out-{i}"));
        assert_eq!(
            got.replace("ro/l.sqlite3", "src/l.sqlite3"),
            want.stdout,
            "{name}"
        );
    }
    for file in ["append.out", "new.out"] {
        let packet = json::parse(&read(file)).expect("error packet");
        let error = packet
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        assert!(
            error.contains("the ledger's file system is read-only") && !error.contains("create"),
            "{file}: {error}"
        );
    }
    let wal = read("wal.out");
    assert!(
        wal.contains("write-ahead log") && wal.contains("reward_memory_error_v0"),
        "an immutable read would miss the batch in the -wal: {wal}"
    );
    let list = read("ro.list");
    let listed: Vec<&str> = list.split_whitespace().collect();
    assert_eq!(
        listed,
        [".", "..", "l.sqlite3", "l.sqlite3-checked"],
        "reads leave no -wal or -shm beside a read-only ledger"
    );
}

#[test]
fn ledger_without_its_format_row_is_refused_as_incomplete() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/utility_project/valid/helpful-item.json");
    for backend in backends() {
        let scratch = Scratch::new();
        scratch.write(
            "input.json",
            &std::fs::read_to_string(&fixture).expect("fixture"),
        );
        let ledger = fresh_ledger(&scratch, &backend, "format");
        assert_eq!(append(&scratch, &ledger, "input.json", None).code, 0);
        match &backend {
            Backend::Sqlite => {
                let conn = rusqlite::Connection::open(&ledger).expect("db");
                conn.execute("DELETE FROM ledger_meta WHERE key = 'ledger_format'", [])
                    .expect("delete");
            }
            Backend::Postgres(_) => {
                let mut client = postgres::Client::connect(&ledger, postgres::NoTls).expect("db");
                client
                    .execute(
                        "DELETE FROM utility_ledger_meta WHERE key = 'ledger_format'",
                        &[],
                    )
                    .expect("delete");
            }
        }
        let bytes = match &backend {
            Backend::Sqlite => std::fs::read(&ledger).ok(),
            Backend::Postgres(_) => None,
        };
        let e = error_text(&append(&scratch, &ledger, "input.json", None));
        assert!(
            e.contains("not a complete utility ledger (ledger_meta has no ledger_format row)"),
            "{e}"
        );
        let e = error_text(&ledger_cmd(&scratch, "verify", &ledger, &[]));
        assert!(e.contains("not a complete utility ledger"), "{e}");
        if let Some(bytes) = bytes {
            assert!(std::fs::read(&ledger).ok() == Some(bytes), "left untouched");
        }
    }
}

#[test]
fn append_that_stores_nothing_is_refused_not_committed_with_refusals() {
    for backend in backends() {
        let scratch = Scratch::new();
        let ledger = fresh_ledger(&scratch, &backend, "refused");
        scratch.write("bad.jsonl", "{not json\n[1]\n");
        let receipt = append(&scratch, &ledger, "bad.jsonl", None);
        assert_eq!(receipt.code, 2, "{}", receipt.stdout);
        let packet = receipt.json();
        assert_eq!(packet["status"], "refused", "{}", receipt.stdout);
        assert_eq!(packet["ok"], false);
        assert_eq!(packet["appended"], 0);
        assert_eq!(packet["refused"], 2);
        // Markdown says so on stderr too.
        let markdown = run_in(
            &scratch,
            &[
                "utility-ledger",
                "append",
                "--ledger",
                &ledger,
                "--input",
                "bad.jsonl",
            ],
            None,
        );
        assert_eq!(markdown.code, 2);
        assert!(
            markdown.stderr.starts_with("reward-memory: refused: "),
            "{}",
            markdown.stderr
        );
        // A retry that only repeats stored deliveries still stored them.
        let good = observation(
            "agent:r",
            &digest(1),
            "r1",
            "helpful",
            0.5,
            "2026-08-15T00:00:00Z",
        );
        scratch.write("good.jsonl", &jsonl(std::slice::from_ref(&good)));
        assert_eq!(append(&scratch, &ledger, "good.jsonl", None).code, 0);
        scratch.write("retry.jsonl", &format!("{}{{not json\n", jsonl(&[good])));
        let retry = append(&scratch, &ledger, "retry.jsonl", None);
        assert_eq!(retry.json()["duplicate"], 1);
        assert_eq!(retry.json()["status"], "committed_with_refusals");
        if let Backend::Postgres(_) = backend {
            // A salvage reads SQLite files; PostgreSQL keeps its own pages.
            let e = error_text(&ledger_cmd(&scratch, "export", &ledger, &["--salvage"]));
            assert!(
                e.contains("--salvage reads damaged SQLite ledger files"),
                "{e}"
            );
        }
    }
}

#[test]
fn a_pretty_printed_observation_is_appended_as_one_delivery() {
    let scratch = Scratch::new();
    let ledger = scratch
        .path
        .join("ledger.sqlite3")
        .to_string_lossy()
        .into_owned();
    let good = observation(
        "agent:p",
        &digest(1),
        "p1",
        "helpful",
        0.5,
        "2026-08-15T00:00:00Z",
    );
    // What `utility-observe --format json` prints: one pretty object and a newline.
    let pretty = json::to_pretty_line(&good);
    assert!(pretty.lines().count() > 10);
    let receipt = append(&scratch, &ledger, "-", Some(pretty.as_bytes()));
    assert_eq!(receipt.code, 0, "{}", receipt.stdout);
    let packet = receipt.json();
    assert_eq!(packet["received"], 1, "{}", receipt.stdout);
    assert_eq!(packet["appended"], 1);
    assert_eq!(packet["refused"], 0);
    // The same observation as a JSON line is a duplicate of it.
    let line = json::dumps(&good, json::DumpOptions::COMPACT);
    scratch.write("line.jsonl", &format!("{line}\n"));
    let again = append(&scratch, &ledger, "line.jsonl", None);
    assert_eq!(again.json()["duplicate"], 1, "{}", again.stdout);
    // A pretty object followed by JSON lines: the lines are read as before.
    let other = observation(
        "agent:p",
        &digest(2),
        "p2",
        "helpful",
        0.5,
        "2026-08-15T00:00:00Z",
    );
    let mixed = format!(
        "{}{}\n",
        json::to_pretty_line(&other),
        json::dumps(&good, json::DumpOptions::COMPACT)
    );
    let receipt = append(&scratch, &ledger, "-", Some(mixed.as_bytes()));
    let packet = receipt.json();
    assert_eq!(
        (packet["appended"].clone(), packet["duplicate"].clone()),
        (serde_json::json!(1), serde_json::json!(1)),
        "{}",
        receipt.stdout
    );
}

#[test]
fn postgres_server_starting_up_is_unreachable_and_retryable() {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("address").port();
    // A stand-in server: answers every start-up with FATAL 57P03, as PostgreSQL does
    // while it starts up or shuts down.
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            loop {
                let mut len = [0u8; 4];
                if stream.read_exact(&mut len).is_err() {
                    break;
                }
                let mut body = vec![0u8; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
                if stream.read_exact(&mut body).is_err() {
                    break;
                }
                if body.starts_with(&80_877_103u32.to_be_bytes()) {
                    let _ = stream.write_all(b"N"); // no TLS
                    continue;
                }
                let mut fields = Vec::new();
                for (tag, text) in [
                    (b'S', "FATAL"),
                    (b'V', "FATAL"),
                    (b'C', "57P03"),
                    (b'M', "the database system is starting up"),
                ] {
                    fields.push(tag);
                    fields.extend_from_slice(text.as_bytes());
                    fields.push(0);
                }
                fields.push(0);
                let mut message = vec![b'E'];
                message.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
                message.extend_from_slice(&fields);
                let _ = stream.write_all(&message);
                break;
            }
        }
    });
    let scratch = Scratch::new();
    scratch.write("one.jsonl", &jsonl(&deliveries(1)));
    let url = format!("postgres://ledger_user:s3cret-pass@127.0.0.1:{port}/ledger");
    for run in [
        ledger_cmd(&scratch, "verify", &url, &[]),
        append(&scratch, &url, "one.jsonl", None),
    ] {
        let e = error_text(&run);
        assert!(
            e.starts_with("PostgreSQL ledger is unreachable: ")
                && e.contains("retry later")
                && e.contains("57P03"),
            "{e}"
        );
        assert!(!e.contains("storage failed"), "{e}");
        assert!(!run.stdout.contains("s3cret-pass") && !run.stderr.contains("s3cret-pass"));
    }
}

#[test]
fn reading_a_read_only_ledger_leaves_nothing_that_later_refuses_its_owner() {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = Scratch::new();
    let ledger = read_only_fixture(&scratch, "own");
    let dir = scratch.path.join("own");
    let file = scratch.path.join(&ledger);
    std::fs::set_permissions(&scratch.path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    if rustix::process::geteuid().is_root() {
        // The ledger and its directory belong to the user the commands run as.
        for path in [&dir, &file] {
            rustix::fs::chown(
                path,
                Some(rustix::fs::Uid::from_raw(65534)),
                Some(rustix::fs::Gid::from_raw(65534)),
            )
            .expect("chown");
        }
        let _ = std::fs::remove_file(scratch.path.join("own/l.sqlite3-checked"));
    }
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let args = |sub: &'static str| -> Vec<String> {
        [
            "utility-ledger",
            sub,
            "--ledger",
            &ledger,
            "--format",
            "json",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    };
    let verify: Vec<String> = args("verify");
    let verify: Vec<&str> = verify.iter().map(String::as_str).collect();
    let Some(read) = as_another_user(&scratch, &verify) else {
        return; // root may not change user here: nothing to check
    };
    assert_eq!(read.code, 0, "{}", read.transcript());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["l.sqlite3"],
        "a read creates no -wal or -shm beside the ledger"
    );
    // The owner makes the ledger writable again and appends.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let mut append_args = args("append");
    append_args.extend(["--input".to_owned(), "few.jsonl".to_owned()]);
    let append_args: Vec<&str> = append_args.iter().map(String::as_str).collect();
    let appended = as_another_user(&scratch, &append_args).expect("runs");
    assert_eq!(appended.code, 0, "{}", appended.transcript());
    assert_eq!(appended.json()["status"], "committed");
}

/// The observation line `utility-correct` appends for `fixtures/utility_correct/valid`,
/// read back from a ledger it wrote.
fn corrected_ledger(scratch: &Scratch, name: &str) -> (String, String) {
    let ledger = scratch
        .path
        .join(format!("{name}.sqlite3"))
        .to_string_lossy()
        .into_owned();
    let input = crate::support::fixtures_dir().join("utility_correct/valid/harmful.json");
    let run = scratch.run(
        &[
            "utility-correct",
            "--input",
            &input.to_string_lossy(),
            "--ledger",
            &ledger,
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let export = scratch.run(
        &[
            "utility-ledger",
            "export",
            "--ledger",
            &ledger,
            "--provenance",
        ],
        None,
    );
    assert_eq!(export.code, 0, "{}", export.transcript());
    (ledger, export.stdout)
}

fn provenance_kinds(scratch: &Scratch, ledger: &str) -> Vec<String> {
    let export = scratch.run(
        &[
            "utility-ledger",
            "export",
            "--ledger",
            ledger,
            "--provenance",
        ],
        None,
    );
    assert_eq!(export.code, 0, "{}", export.transcript());
    export
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            v["provenance"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// `utility-ledger append` stores imports only: a delivery line that claims provenance
/// `correct` (what `export --provenance` prints) and an observation carrying a
/// `provenance` key are refused, and what it does store reads as `import`.
#[test]
fn append_cannot_claim_attribute_or_correct() {
    let scratch = Scratch::new();
    let (_, delivery_lines) = corrected_ledger(&scratch, "corrected");
    let claimed: serde_json::Value =
        serde_json::from_str(delivery_lines.lines().next().expect("one line")).expect("json");
    assert_eq!(claimed["provenance"]["kind"], "correct");
    let mut attributed = claimed.clone();
    attributed["provenance"] =
        serde_json::json!({"kind": "attribute", "evaluator_id": "evaluator:x"});
    let mut inline = claimed["observation"].clone();
    inline["provenance"] = serde_json::json!("correct");
    let input = format!("{claimed}\n{attributed}\n{inline}\n");
    scratch.write("claims.jsonl", &input);
    let target = scratch
        .path
        .join("target.sqlite3")
        .to_string_lossy()
        .into_owned();
    let run = scratch.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            &target,
            "--input",
            "claims.jsonl",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, 2, "{}", run.transcript());
    let receipt = run.json();
    assert_eq!(receipt["refused"], 3, "{receipt}");
    assert_eq!(receipt["appended"], 0, "{receipt}");
    assert!(provenance_kinds(&scratch, &target).is_empty());

    // The observation itself appends, as an import.
    scratch.write("plain.jsonl", &format!("{}\n", claimed["observation"]));
    let run = scratch.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            &target,
            "--input",
            "plain.jsonl",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(provenance_kinds(&scratch, &target), ["import"]);
}

/// A ledger file in the layout written before provenance existed (no batch-provenance
/// table) opens, reads as import, takes imports without a layout change, and takes a
/// correction (which adds the table in its own write transaction).
#[test]
fn a_ledger_written_before_provenance_opens_reads_as_import_and_appends() {
    let scratch = Scratch::new();
    let legacy = scratch.path.join("legacy.sqlite3");
    {
        let sql = std::fs::read_to_string(
            crate::support::fixtures_dir()
                .join("utility_ledger/legacy/schema-v2-before-provenance.sql"),
        )
        .expect("legacy schema");
        let conn = rusqlite::Connection::open(&legacy).expect("open");
        conn.execute_batch(&sql).expect("legacy schema");
        conn.execute_batch(
            "INSERT INTO ledger_meta (key, value) VALUES ('ledger_schema_version', '2'), \
             ('ledger_format', 'reward_memory_utility_ledger')",
        )
        .expect("meta");
    }
    let legacy = legacy.to_string_lossy().into_owned();
    let tables = |path: &str| -> Vec<String> {
        let conn = rusqlite::Connection::open(path).expect("open");
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .expect("prepare");
        stmt.query_map([], |r| r.get::<_, String>(0))
            .expect("query")
            .map(|r| r.expect("row"))
            .collect()
    };
    let before = tables(&legacy);
    let legacy_page: i64 = pragma(Path::new(&legacy), "page_size");
    assert_eq!(legacy_page, 4096, "the fixture has SQLite's default pages");
    let (_, lines) = corrected_ledger(&scratch, "source");
    let line: serde_json::Value =
        serde_json::from_str(lines.lines().next().expect("line")).expect("json");
    // An imported observation of another id: built from the corrected one, re-identified.
    let observation = reward_memory::utility::observation::validate_observation(
        &reward_memory::wire::json::parse(&line["observation"].to_string()).expect("parse"),
    )
    .expect("valid");
    let mut imported = observation.clone();
    imported.evaluation_version = "import:v1".into();
    imported.observation_id = imported.computed_id().into();
    scratch.write(
        "import.jsonl",
        &format!(
            "{}\n",
            reward_memory::wire::json::dumps(
                &imported.to_value(),
                reward_memory::ledger::engine::COMPACT
            )
        ),
    );
    let run = scratch.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            &legacy,
            "--input",
            "import.jsonl",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(tables(&legacy), before, "an import keeps the old layout");
    assert_eq!(
        pragma::<i64>(Path::new(&legacy), "page_size"),
        legacy_page,
        "an existing ledger keeps its page size"
    );
    assert_eq!(provenance_kinds(&scratch, &legacy), ["import"]);

    let input = crate::support::fixtures_dir().join("utility_correct/valid/harmful.json");
    let run = scratch.run(
        &[
            "utility-correct",
            "--input",
            &input.to_string_lossy(),
            "--ledger",
            &legacy,
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(provenance_kinds(&scratch, &legacy), ["import", "correct"]);
    let verify = scratch.run(&["utility-ledger", "verify", "--ledger", &legacy], None);
    assert_eq!(verify.code, 0, "{}", verify.transcript());
}

#[test]
fn verdicts_are_recorded_once_and_gate_recall_on_every_backend() {
    use crate::recall::{ingest_memories, loop_episodes, loop_setup, recall, routed};
    for backend in backends() {
        let s = loop_setup();
        ingest_memories(&s);
        s.write("episodes.jsonl", &loop_episodes(&s));
        let ledger = fresh_ledger(&s, &backend, "verdicts");
        let profile = crate::support::fixtures_dir().join("recall/loop/evaluation-profile.json");
        let profile = profile.to_string_lossy();
        let evaluate = [
            "rank-evaluate",
            "--input",
            "episodes.jsonl",
            "--profile",
            &profile,
            "--record",
            &ledger,
            "--format",
            "json",
        ];
        let first = routed(&s, &evaluate);
        assert_eq!(first.code, 2, "{backend:?}: {}", first.transcript());
        assert!(
            first.stderr.contains(" recorded in "),
            "{backend:?}: {}",
            first.stderr
        );
        assert!(
            first.stderr.contains("as record 1 (ledger mul_"),
            "{}",
            first.stderr
        );
        let second = routed(&s, &evaluate);
        assert!(
            second.stderr.contains("was already recorded") && second.stderr.contains("record 1 "),
            "{backend:?}: {}",
            second.stderr
        );
        let gated = recall(
            &s,
            &[
                "--rank-prior",
                "profile.json",
                "--partition",
                "partition.json",
                "--ledger",
                &ledger,
            ],
        );
        assert_eq!(gated.code, 0, "{backend:?}: {}", gated.transcript());
        assert_eq!(
            gated.json()["rank_prior_reason_code"],
            "ranking_evaluation_not_qualified",
            "{backend:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// memory_utility_reducer_v1 from the same deliveries
// ---------------------------------------------------------------------------------------

fn field_of<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    static NULL: Value = Value::Null;
    path.iter().try_fold(v, |v, k| v.get(k)).unwrap_or(&NULL)
}

/// The subject of `packet` whose `memory_ref_digests` is exactly `[digest]`.
fn item_subject<'a>(packet: &'a Value, digest: &str) -> &'a Value {
    field_of(packet, &["subjects"])
        .as_array()
        .and_then(|subjects| {
            subjects.iter().find(|s| {
                field_of(s, &["memory_ref_digests"])
                    .as_array()
                    .is_some_and(|d| d.len() == 1 && d[0].as_str() == Some(digest))
            })
        })
        .unwrap_or_else(|| panic!("no item subject of {digest}"))
}

fn float_of(v: &Value, path: &[&str]) -> f64 {
    match field_of(v, path) {
        Value::Float(f) => *f,
        other => panic!("{path:?}: {other:?}"),
    }
}

/// The ledger serves both reducers from the same deliveries: with `--reducer-version
/// memory_utility_reducer_v1` `project` prints `memory_utility_projection_v1` within the
/// caps and `memory_utility_ledger_projection_v1` pages, `subject` prints
/// `memory_utility_ledger_subject_v1`; each validates and conforms to its schema, the v0
/// packets stay what they were, and the next append shows at the next read.
#[test]
fn the_ledger_serves_reducer_v1_from_the_same_deliveries() {
    for backend in backends() {
        let scratch = Scratch::new();
        let ledger = fresh_ledger(&scratch, &backend, "v1");
        let noisy = digest(7);
        let mut items: Vec<Value> = (0..7)
            .map(|i| {
                let version = format!("bad{i}");
                observation(
                    "agent:v1",
                    &noisy,
                    &version,
                    "harmful",
                    0.8,
                    "2026-08-15T00:00:00Z",
                )
            })
            .collect();
        items.push(observation(
            "agent:v1",
            &noisy,
            "good0",
            "helpful",
            0.8,
            "2026-08-15T01:00:00Z",
        ));
        for i in 0..3 {
            let d = digest(100 + i);
            items.push(observation(
                "agent:v1",
                &d,
                &format!("other{i}"),
                "helpful",
                0.9,
                "2026-08-15T02:00:00Z",
            ));
        }
        scratch.write("items.jsonl", &jsonl(&items));
        assert_eq!(append(&scratch, &ledger, "items.jsonl", None).code, 0);
        let flags = partition_flags("agent:v1");
        let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
        let with = |extra: &[&str]| -> Vec<String> {
            flag_refs
                .iter()
                .copied()
                .chain(extra.iter().copied())
                .map(str::to_owned)
                .collect()
        };
        let run = |sub: &str, args: &[String]| {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            ledger_cmd(&scratch, sub, &ledger, &refs)
        };
        let v1 = ["--reducer-version", "memory_utility_reducer_v1"];

        let v0 = run("project", &with(&[]));
        assert_eq!(v0.code, 0, "{}", v0.transcript());
        let v0 = json::parse(&v0.stdout).expect("json");
        assert_eq!(
            field_of(&v0, &["schema_version"]).as_str(),
            Some("memory_utility_projection_v0")
        );
        assert_eq!(
            field_of(item_subject(&v0, &noisy), &["effective_utility_label"]).as_str(),
            Some("unknown")
        );

        let projected = run("project", &with(&v1));
        assert_eq!(projected.code, 0, "{}", projected.transcript());
        let projection = json::parse(&projected.stdout).expect("json");
        assert_eq!(
            field_of(&projection, &["schema_version"]).as_str(),
            Some("memory_utility_projection_v1")
        );
        let subject = item_subject(&projection, &noisy);
        assert_eq!(
            field_of(subject, &["effective_utility_label"]).as_str(),
            Some("harmful")
        );
        assert_eq!(float_of(subject, &["utility_estimate"]), -0.195012);
        assert_eq!(float_of(subject, &["posterior", "harmful_weight"]), 5.6);
        // Three subjects, each with one helpful observation: too little to decide.
        assert_eq!(
            field_of(
                item_subject(&projection, &digest(100)),
                &["effective_utility_label"]
            )
            .as_str(),
            Some("unknown")
        );

        let page = run("project", &with(&[v1[0], v1[1], "--limit", "2"]));
        assert_eq!(page.code, 0, "{}", page.transcript());
        let page = json::parse(&page.stdout).expect("json");
        assert_eq!(
            field_of(&page, &["schema_version"]).as_str(),
            Some("memory_utility_ledger_projection_v1")
        );
        assert_eq!(field_of(&page, &["page", "returned"]), &Value::Int(2));

        let looked_up = run(
            "subject",
            &with(&[v1[0], v1[1], "--memory-ref-digest", noisy.as_str()]),
        );
        assert_eq!(looked_up.code, 0, "{}", looked_up.transcript());
        let looked_up = json::parse(&looked_up.stdout).expect("json");
        assert_eq!(
            field_of(&looked_up, &["schema_version"]).as_str(),
            Some("memory_utility_ledger_subject_v1")
        );
        let stored = item_subject(&looked_up, &noisy);
        assert_eq!(float_of(stored, &["utility_estimate"]), -0.195012);
        let history = field_of(stored, &["observation_history"])
            .as_array()
            .expect("history");
        assert_eq!(history.len(), 8);
        assert_eq!(
            field_of(&history[0], &["provenance", "kind"]).as_str(),
            Some("import")
        );

        for (schema_version, packet) in [
            ("memory_utility_projection_v1", &projection),
            ("memory_utility_ledger_projection_v1", &page),
            ("memory_utility_ledger_subject_v1", &looked_up),
        ] {
            if let Err(err) =
                reward_memory::schema::check(packet, &crate::support::schema_named(schema_version))
            {
                panic!("{schema_version} does not conform: {err}");
            }
        }
        for packet in [&projection, &page] {
            scratch.write("packet.json", &json::to_pretty_line(packet));
            let validated = run_in(
                &scratch,
                &[
                    "utility-validate",
                    "--input",
                    "packet.json",
                    "--format",
                    "json",
                ],
                None,
            );
            assert_eq!(validated.code, 0, "{}", validated.transcript());
        }
        // An edited v1 subject fails its readback.
        let mut edited: serde_json::Value = serde_json::from_str(&projected.stdout).expect("json");
        edited["subjects"][0]["posterior"]["upper_utility"] = serde_json::json!(0.5);
        scratch.write("edited.json", &edited.to_string());
        let refused = run_in(
            &scratch,
            &[
                "utility-validate",
                "--input",
                "edited.json",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(refused.code, 2, "{}", refused.transcript());

        // The next append shows at the next read: one more harmful observation.
        let more = [observation(
            "agent:v1",
            &noisy,
            "bad7",
            "harmful",
            0.8,
            "2026-08-15T03:00:00Z",
        )];
        scratch.write("more.jsonl", &jsonl(&more));
        assert_eq!(append(&scratch, &ledger, "more.jsonl", None).code, 0);
        let again = json::parse(&run("project", &with(&v1)).stdout).expect("json");
        assert!(float_of(item_subject(&again, &noisy), &["utility_estimate"]) < -0.195012);

        // A version that starts like a v1 name must be one.
        let bad = run(
            "project",
            &with(&[
                "--reducer-version",
                "memory_utility_reducer_v1:half_life_days:x",
            ]),
        );
        assert_eq!(bad.code, 2, "{}", bad.transcript());
        assert!(
            bad.stdout
                .contains("is not a memory_utility_reducer_v1 name: use memory_utility_reducer_v1"),
            "{}",
            bad.stdout
        );
    }
}

/// Issue 25 part 3: `utility-ledger review` lists a same-tier conflict (quarantine
/// proposed, owner correction first) and a harmful memory (attenuation, retirement
/// first) with their partition, support and strongest tier; an owner correction at
/// the strongest tier decides the conflict and it leaves the queue; a partition file
/// restricts the queue to its partition.
#[test]
fn the_review_queue_lists_open_proposals_until_an_owner_correction_decides_them() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/utility_ledger/golden");
    let observations = |case: &str| {
        let text = std::fs::read_to_string(golden.join(case).join("input.json")).expect("input");
        jsonl(&observations_of(
            &json::parse(&text).expect("golden input is JSON"),
        ))
    };
    use serde_json::json;
    for backend in backends() {
        let scratch = Scratch::new();
        let ledger = fresh_ledger(&scratch, &backend, "review");
        // Like every read, a ledger that does not exist yet is an error that says so.
        let missing = ledger_cmd(&scratch, "review", &ledger, &[]);
        if matches!(backend, Backend::Sqlite) {
            assert_eq!(missing.code, 2, "{}", missing.transcript());
            assert!(
                missing.stdout.contains("does not exist yet"),
                "{}",
                missing.stdout
            );
        }

        scratch.write("conflict.jsonl", &observations("same-tier-conflict"));
        assert_eq!(append(&scratch, &ledger, "conflict.jsonl", None).code, 0);
        let queue = ledger_cmd(&scratch, "review", &ledger, &[]);
        crate::ingest_event::conforms("memory_utility_ledger_review_v0", &queue);
        let packet = queue.json();
        assert_eq!(packet["open_count"], 1, "{packet}");
        let proposal = &packet["proposals"][0];
        assert_eq!(proposal["review_state"], "conflict");
        assert_eq!(proposal["quarantine_proposed"], true);
        assert_eq!(
            proposal["reason_codes"],
            json!(["same_evidence_tier_conflict"])
        );
        assert_eq!(proposal["memory_ref_digests"], json!(["0123456789abcdef"]));
        assert_eq!(
            proposal["support"],
            json!({"helpful": 1, "harmful": 1, "neutral": 0, "unknown": 0})
        );
        assert_eq!(proposal["strongest_tier"], "controlled_replay");
        assert_eq!(proposal["resolve"][0]["action"], "owner_correction");
        assert_eq!(proposal["partition"]["scope"]["agent_id"], "agent:stage2");

        // The proposal's partition is a partition file: it selects the same queue.
        scratch.write(
            "partition.json",
            &serde_json::to_string_pretty(&proposal["partition"]).expect("partition"),
        );
        let one = ledger_cmd(&scratch, "review", &ledger, &["--input", "partition.json"]);
        assert_eq!(
            one.json()["proposals"],
            packet["proposals"],
            "{}",
            one.transcript()
        );

        // An owner correction decides the conflict: the queue is empty.
        scratch.write("owner.jsonl", &observations("basis-owner-correction"));
        assert_eq!(append(&scratch, &ledger, "owner.jsonl", None).code, 0);
        let after = ledger_cmd(&scratch, "review", &ledger, &[]).json();
        assert_eq!(
            (&after["open_count"], &after["partition_count"]),
            (&json!(0), &json!(1)),
            "{after}"
        );

        // A harmful memory proposes attenuation, its retirement first.
        let harmful = fresh_ledger(&scratch, &backend, "harmful");
        scratch.write("harmful.jsonl", &observations("harmful-item"));
        assert_eq!(append(&scratch, &harmful, "harmful.jsonl", None).code, 0);
        let queue = run_in(
            &scratch,
            &[
                "utility-ledger",
                "review",
                "--ledger",
                &harmful,
                "--format",
                "markdown",
            ],
            None,
        );
        assert_eq!(queue.code, 0, "{}", queue.transcript());
        assert!(
            queue.stdout.contains("attenuation_proposed"),
            "{}",
            queue.stdout
        );
        let packet = ledger_cmd(&scratch, "review", &harmful, &[]).json();
        assert_eq!(
            packet["proposals"][0]["review_state"],
            "attenuation_proposed"
        );
        assert_eq!(packet["proposals"][0]["resolve"][0]["action"], "retire");
        assert_eq!(
            packet["proposals"][0]["strongest_tier"],
            "deterministic_effect"
        );
    }
}

//! Error text across commands: bounded (a few keys and a count, at most 1 KiB per
//! message), and never echoing an input key that is not a plain identifier (issue 19,
//! item 4). Short lists of plain keys keep the reference's exact wording (the recorded
//! conformance cases and the per-command snapshots hold that).

use serde_json::{Value, json};

use crate::support::{Run, Scratch, fixtures_dir, read_json};

/// Keys no message may repeat: a connection string with a password and a local path.
const SECRET_KEY: &str = "postgres://ledger:hunter2@db.internal/utility_ledger";
const PATH_KEY: &str = "/home/victim/.ssh/id_rsa";

/// Neither stream names a key that is not a plain identifier, and both are short.
fn assert_nothing_echoed(what: &str, run: &Run) {
    for text in [&run.stdout, &run.stderr] {
        for leak in [
            "hunter2",
            "postgres://",
            "db.internal",
            "/home/victim",
            "id_rsa",
        ] {
            assert!(!text.contains(leak), "{what} echoes {leak}:\n{text}");
        }
        assert!(text.len() <= 4096, "{what}: {} bytes", text.len());
    }
}

/// `base` (an object) with the two unsafe keys and one plain unknown key added.
fn with_bad_keys(mut base: Value) -> Value {
    let map = base.as_object_mut().expect("object");
    map.insert(SECRET_KEY.to_owned(), json!(1));
    map.insert(PATH_KEY.to_owned(), json!(2));
    map.insert("plain_extra".to_owned(), json!(3));
    base
}

fn observation() -> Value {
    let text =
        std::fs::read_to_string(fixtures_dir().join("utility_ledger/append/every-refusal.jsonl"))
            .expect("fixture");
    serde_json::from_str(text.lines().next().expect("a line")).expect("JSON")
}

#[test]
fn a_million_unknown_keys_give_a_short_error_that_counts_them() {
    let mut text = String::with_capacity(16 << 20);
    text.push('{');
    for i in 0..1_000_000 {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&format!("\"unknown_key_{i}\": 1"));
    }
    text.push('}');
    let s = Scratch::new();
    s.write("big.json", &text);
    let run = s.run(&["ingest-event", "--input", "big.json"], None);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stdout.len() <= 2048,
        "stdout: {} bytes",
        run.stdout.len()
    );
    assert!(
        run.stderr.len() <= 2048,
        "stderr: {} bytes",
        run.stderr.len()
    );
    let expected = "ingest input contains unsupported fields: unknown_key_0, unknown_key_1, \
         unknown_key_10, unknown_key_100, unknown_key_1000, unknown_key_10000, \
         unknown_key_100000, unknown_key_100001 and 999992 more";
    assert!(run.stdout.contains(expected), "{}", run.stdout);
    assert_eq!(run.stderr, format!("reward-memory: {expected}\n"));
    let json = s.run(
        &["ingest-event", "--input", "big.json", "--format", "json"],
        None,
    );
    assert_eq!(json.json()["error"], expected);
}

#[test]
fn keys_that_are_not_plain_identifiers_are_counted_never_echoed() {
    let s = Scratch::new();
    let observe = read_json(&fixtures_dir().join("recall/loop/observe.json"));
    let inputs: &[(&str, Value)] = &[
        ("ingest.json", with_bad_keys(json!({}))),
        (
            "project.json",
            with_bad_keys(json!({
                "observations": [],
                "scope": {},
                "retrieval_snapshot_ref": "r",
                "policy_snapshot_ref": "p",
            })),
        ),
        ("observe.json", with_bad_keys(observe)),
        ("plain.json", with_bad_keys(json!({}))),
        (
            "append.json",
            with_bad_keys(json!({"observations": [observation()]})),
        ),
    ];
    for (name, value) in inputs {
        s.write(name, &value.to_string());
    }
    let ledger = s.path.join("ledger.sqlite3").to_string_lossy().into_owned();
    let cases: &[(&str, Vec<&str>, &str)] = &[
        (
            "ingest-event",
            vec!["ingest-event", "--input", "ingest.json"],
            "ingest input contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
        (
            "utility-project",
            vec!["utility-project", "--input", "project.json"],
            "utility projection input contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
        (
            "utility-observe",
            vec!["utility-observe", "--input", "observe.json"],
            "utility observation input contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
        (
            "utility-ledger append",
            vec![
                "utility-ledger",
                "append",
                "--ledger",
                &ledger,
                "--input",
                "append.json",
            ],
            "append input contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
        (
            "recall",
            vec!["recall", "--input", "plain.json"],
            "recall input contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
        (
            "apply",
            vec!["apply", "--input", "plain.json"],
            "apply input contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
        (
            "rank-prior",
            vec!["rank-prior", "--input", "plain.json"],
            "rank-prior input contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
        (
            "rank-evaluate profile",
            vec!["rank-evaluate", "--simulate", "--profile", "plain.json"],
            "profile contains unsupported fields: plain_extra and 2 keys that are not plain identifiers",
        ),
    ];
    for (what, args, expected) in cases {
        let markdown = s.run(args, None);
        assert_eq!(markdown.code, 2, "{what}: {}", markdown.transcript());
        assert_nothing_echoed(what, &markdown);
        assert_eq!(
            markdown.stderr,
            format!("reward-memory: {expected}\n"),
            "{what}"
        );
        let mut json_args = args.clone();
        json_args.extend(["--format", "json"]);
        let json = s.run(&json_args, None);
        assert_nothing_echoed(what, &json);
        assert_eq!(json.json()["error"], *expected, "{what}");
    }
}

#[test]
fn ledger_lines_with_thousands_of_unknown_scope_keys_give_a_small_receipt() {
    let mut lines = String::new();
    for _ in 0..100 {
        let mut line = observation();
        let scope = line["scope"].as_object_mut().expect("scope");
        for j in 0..9000 {
            scope.insert(format!("extra_scope_key_{j}"), json!(1));
        }
        scope.insert(SECRET_KEY.to_owned(), json!(1));
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let s = Scratch::new();
    s.write("lines.jsonl", &lines);
    let ledger = s.path.join("ledger.sqlite3").to_string_lossy().into_owned();
    let run = s.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            &ledger,
            "--input",
            "lines.jsonl",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.len() <= 64 * 1024, "{} bytes", run.stdout.len());
    assert!(!run.stdout.contains("hunter2"), "{}", run.stdout);
    let receipt = run.json();
    assert_eq!(receipt["refused"], 100);
    let refusals = receipt["refusals"].as_array().expect("refusals");
    assert_eq!(refusals[0]["reason_code"], "observation_malformed_scope");
    assert_eq!(
        refusals[0]["error"],
        "observation.scope has invalid fields: missing=[], unknown=['extra_scope_key_0', \
         'extra_scope_key_1', 'extra_scope_key_10', 'extra_scope_key_100', \
         'extra_scope_key_1000', 'extra_scope_key_1001', 'extra_scope_key_1002', \
         'extra_scope_key_1003', 8992 more and 1 key that is not a plain identifier]"
    );
    for refusal in refusals {
        let error = refusal["error"].as_str().expect("error text");
        assert!(error.len() <= 1024, "{} bytes", error.len());
    }
}

//! `rank-prior`: one fixture per reason code (valid), bad requests (invalid), and the
//! provider effect refused where no rank-prior contract exists.

use serde_json::json;

use crate::snap;
use crate::support::{
    Run, Scratch, assert_invalid_request, file_stem as stem, fixture_files, fixtures_dir, pretty,
    read_json, run_with_file,
};

fn rank_file(path: &std::path::Path) -> Run {
    let args = ["rank-prior", "--input", "input.json", "--format", "json"];
    run_with_file(path, "input.json", &args)
}

#[test]
fn valid_fixtures_rank_and_explain_every_modifier() {
    let files = fixture_files("rank_prior", "valid");
    assert!(files.len() >= 10, "one fixture per reason code");
    let mut codes = std::collections::BTreeSet::new();
    for path in files {
        let run = rank_file(&path);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stdout);
        crate::ingest_event::conforms("memory_utility_rank_prior_v0", &run);
        let packet = run.json();
        for c in packet["candidates"].as_array().expect("candidates") {
            let modifier = c["modifier"].as_f64().expect("number");
            assert!((0.5..=2.0).contains(&modifier), "{}", path.display());
            for code in c["reason_codes"].as_array().expect("codes") {
                codes.insert(code.as_str().expect("string").to_owned());
            }
        }
        snap!(format!("rank_prior_valid_{}", stem(&path)), run);
    }
    let expected = [
        "evaluator_inference_excluded",
        "evidence_tier_below_minimum",
        "negative_utility_attenuation",
        "neutral_utility",
        "no_utility_evidence",
        "positive_utility_boost",
        "review_proposed",
        "set_level_credit_only",
        "support_below_minimum",
        "utility_unknown",
    ];
    assert_eq!(codes.into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn invalid_fixtures_print_an_invalid_request_packet() {
    let files = fixture_files("rank_prior", "invalid");
    assert!(!files.is_empty());
    for path in files {
        let run = rank_file(&path);
        assert_invalid_request(&run, &path);
        assert!(run.stderr.is_empty(), "{}: {}", path.display(), run.stderr);
        snap!(format!("rank_prior_invalid_{}", stem(&path)), run);
    }
}

#[test]
fn the_semantic_stage_keeps_a_high_utility_candidate_below_the_floor_out() {
    let run = rank_file(&fixtures_dir().join("rank_prior/valid/semantic-stage.json"));
    let packet = run.json();
    let helpful = "0000000000000002";
    assert!(
        packet["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .all(|c| c["memory_ref_digest"] != helpful)
    );
    assert_eq!(packet["semantic_stage"]["below_floor_count"], 1);
    assert_eq!(packet["semantic_stage"]["outside_pool_count"], 1);
}

/// The OpenViking example route: the effect is refused and nothing is written.
#[test]
fn the_effect_is_refused_on_openviking_and_nothing_is_written() {
    let s = Scratch::new();
    let base = fixtures_dir().join("ingest_event/openviking");
    let mut registry = read_json(&base.join("registry.json"));
    registry["goals"][0]["repo"] = json!("project");
    s.write("registry.json", &pretty(&registry));
    let config_rel = "project/.loopx/config/reward-memory/experiment.json";
    let config = std::fs::read_to_string(base.join(config_rel)).expect("config");
    s.write(config_rel, &config.replace("@OV_BIN@", "/nonexistent/ov"));
    let partition = json!({
        "scope": {
            "agent_id": "pilot",
            "project_id": "project:example",
            "corpus_id": "example_reviewer_artifact_policy",
            "surface_id": "reviewer_artifact.summary",
        },
        "retrieval_snapshot_ref": "retrieval:ov",
        "policy_snapshot_ref": "policy:ov",
    });
    let mut project = partition.clone();
    project["observations"] = json!([]);
    s.write("project.json", &project.to_string());
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
    assert_eq!(projection.json()["status"], "empty");
    let request = json!({
        "profile": read_json(&fixtures_dir().join("recall/loop/profile.json")),
        "partition": partition,
        "projection": projection.json(),
    });
    s.write("request.json", &request.to_string());
    let args = [
        "--registry",
        "registry.json",
        "--runtime-root",
        "rt",
        "rank-prior",
        "--input",
        "request.json",
        "--execute",
        "--goal-id",
        "reward-memory-goal",
        "--agent-id",
        "pilot",
        "--format",
        "json",
    ];
    let run = s.run(&args, None);
    assert_eq!(run.code, 0, "{}", run.stdout);
    crate::ingest_event::conforms("memory_utility_rank_prior_effect_v0", &run);
    let packet = run.json();
    assert_eq!(packet["status"], "refused");
    assert_eq!(packet["reason_code"], "provider_rank_prior_contract_absent");
    assert_eq!(packet["provider_write_performed"], false);
    assert_eq!(packet["ranking"], "local_only");
    assert!(!s.path.join("rt").exists(), "nothing is written");
    snap!("rank_prior_effect_refused_openviking", run);
}

#[test]
fn execute_needs_the_route() {
    let run = crate::support::run(&["rank-prior", "--input", "x.json", "--execute"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--goal-id"), "{}", run.stderr);
}

#[test]
fn markdown_shows_the_refusal_and_says_it_on_stderr() {
    let path = fixtures_dir().join("rank_prior/invalid/bounds-exclude-one.json");
    let run = run_with_file(
        &path,
        "input.json",
        &["rank-prior", "--input", "input.json"],
    );
    assert_eq!(run.code, 2);
    let message = "profile.modifier_bounds must contain 1: 0 < lower <= 1 <= upper";
    assert!(
        run.stdout.contains(&format!("- error: `{message}`")),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, format!("reward-memory: {message}\n"));
}

#[test]
fn detail_reports_the_ranking_under_the_summary() {
    let path = fixtures_dir().join("rank_prior/valid/positive-utility-boost.json");
    let plain = run_with_file(
        &path,
        "input.json",
        &["rank-prior", "--input", "input.json"],
    );
    let detail = run_with_file(
        &path,
        "input.json",
        &["rank-prior", "--input", "input.json", "--detail"],
    );
    assert_eq!(detail.code, 0);
    let rest = detail
        .stdout
        .strip_prefix(&plain.stdout)
        .expect("the summary comes first");
    assert!(rest.starts_with("## "), "{rest}");
    snap!("rank_prior_detail", detail);
}

/// A profile under which every admissible tier moves the prior.
fn permissive_profile() -> serde_json::Value {
    json!({
        "profile_id": "profile:ledger-equivalence",
        "semantic_floor": 0.0,
        "candidate_pool": 64,
        "modifier_bounds": [0.5, 2.0],
        "min_evidence_basis": "evaluator_inference",
        "allow_evaluator_inference": true,
        "min_support": 1,
    })
}

/// Every memory digest the observations of a `utility-project` input mention, sorted.
fn digests_of(input: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = input["observations"]
        .as_array()
        .map(|obs| {
            obs.iter()
                .filter_map(|o| o["memory_ref_digests"].as_array())
                .flatten()
                .filter_map(|d| d.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

#[test]
fn prior_from_the_ledger_equals_prior_from_its_projection_on_every_golden_case() {
    let golden = fixtures_dir().join("utility_ledger/golden");
    let mut cases: Vec<std::path::PathBuf> = std::fs::read_dir(&golden)
        .expect("golden cases")
        .filter_map(|e| Some(e.ok()?.path()))
        .collect();
    cases.sort();
    let (mut compared, mut moved) = (0, 0);
    for case in cases {
        let name = stem(&case);
        let input = read_json(&case.join("input.json"));
        let s = Scratch::new();
        s.write("input.json", &pretty(&input));
        let mut partition = serde_json::Map::new();
        for key in [
            "scope",
            "retrieval_snapshot_ref",
            "policy_snapshot_ref",
            "reducer_version",
        ] {
            if let Some(v) = input.get(key) {
                partition.insert(key.to_owned(), v.clone());
            }
        }
        let partition = serde_json::Value::Object(partition);
        s.write("partition.json", &pretty(&partition));
        let ledger = ["--ledger", "ledger.sqlite3"];
        let append = s.run(
            &[
                &["utility-ledger", "append", "--input", "input.json"][..],
                &ledger,
            ]
            .concat(),
            None,
        );
        assert!(
            append.code == 0 || append.code == 2,
            "{name}: {}",
            append.transcript()
        );
        let projected = s.run(
            &[
                &["utility-ledger", "project", "--input", "partition.json"][..],
                &ledger,
                &["--format", "json"],
            ]
            .concat(),
            None,
        );
        if projected.code != 0 {
            continue; // a context the strict reducer rejects has no utility to compare
        }
        // Every digest of the case plus one nobody mentions, at spread relevances.
        let mut digests = digests_of(&input);
        digests.push("00000000000000ff".to_owned());
        let candidates: Vec<serde_json::Value> = digests
            .iter()
            .enumerate()
            .map(|(i, d)| json!({"memory_ref_digest": d, "relevance_score": 0.9 - 0.05 * i as f64}))
            .collect();
        let request = json!({
            "profile": permissive_profile(),
            "partition": partition,
            "candidates": candidates,
        });
        let mut with_projection = request.clone();
        with_projection["projection"] = projected.json();
        s.write("from-projection.json", &pretty(&with_projection));
        s.write("from-ledger.json", &pretty(&request));
        for format in ["json", "markdown"] {
            let a = s.run(
                &[
                    "rank-prior",
                    "--input",
                    "from-projection.json",
                    "--format",
                    format,
                ],
                None,
            );
            let b = s.run(
                &[
                    &[
                        "rank-prior",
                        "--input",
                        "from-ledger.json",
                        "--format",
                        format,
                    ][..],
                    &ledger,
                ]
                .concat(),
                None,
            );
            assert_eq!(a.transcript(), b.transcript(), "{name} ({format})");
            if format == "json" && a.code == 0 {
                compared += 1;
                if a.json()["modified_count"].as_u64() > Some(0) {
                    moved += 1;
                }
            }
        }
    }
    assert!(compared >= 20, "only {compared} golden cases compared");
    assert!(moved >= 5, "only {moved} cases move a modifier");
}

#[test]
fn ledger_utility_requests_are_checked() {
    let s = Scratch::new();
    let case = fixtures_dir().join("utility_ledger/golden/helpful-item/input.json");
    s.write("input.json", &pretty(&read_json(&case)));
    let input = read_json(&case);
    let partition = json!({
        "scope": input["scope"],
        "retrieval_snapshot_ref": input["retrieval_snapshot_ref"],
        "policy_snapshot_ref": input["policy_snapshot_ref"],
    });
    let request = json!({
        "profile": permissive_profile(),
        "partition": partition,
        "candidates": [{"memory_ref_digest": "0123456789abcdef", "relevance_score": 0.5}],
    });
    s.write("request.json", &pretty(&request));
    let rank = |extra: &[&str]| {
        s.run(
            &[
                &["rank-prior", "--input", "request.json", "--format", "json"][..],
                extra,
            ]
            .concat(),
            None,
        )
    };
    // The ledger must exist: read commands never create one.
    let missing = rank(&["--ledger", "ledger.sqlite3"]);
    assert_eq!(missing.code, 2);
    assert_eq!(
        missing.json()["error"],
        "utility ledger does not exist yet: utility-ledger append creates it"
    );
    assert!(!s.path.join("ledger.sqlite3").exists());
    let appended = s.run(
        &[
            "utility-ledger",
            "append",
            "--input",
            "input.json",
            "--ledger",
            "ledger.sqlite3",
        ],
        None,
    );
    assert_eq!(appended.code, 0, "{}", appended.transcript());
    let ranked = rank(&["--ledger", "ledger.sqlite3"]);
    assert_eq!(ranked.code, 0, "{}", ranked.transcript());
    assert_eq!(
        ranked.json()["candidates"][0]["reason_codes"],
        json!(["positive_utility_boost"])
    );
    // --detail names the ledger the utility came from.
    let detail = s.run(
        &[
            "rank-prior",
            "--input",
            "request.json",
            "--ledger",
            "ledger.sqlite3",
            "--detail",
        ],
        None,
    );
    assert!(
        detail
            .stdout
            .contains("## Rank prior\n\n- ledger: ledger.sqlite3 (sqlite)\n- profile_id: "),
        "{}",
        detail.stdout
    );
    // Without a value: $REWARD_MEMORY_LEDGER, then the runtime root's ledger.
    let root = s.path.join("rt/reward-memory");
    std::fs::create_dir_all(&root).expect("runtime root");
    std::fs::copy(
        s.path.join("ledger.sqlite3"),
        root.join("utility-ledger.sqlite3"),
    )
    .expect("copy");
    let default = rank(&["--runtime-root", "rt", "--ledger"]);
    assert_eq!(default.stdout, ranked.stdout, "{}", default.transcript());
    // A projection and --ledger together, or --ledger with --execute, are refused.
    let mut both = request.clone();
    both["projection"] = json!({});
    s.write("both.json", &pretty(&both));
    let refused = s.run(
        &[
            "rank-prior",
            "--input",
            "both.json",
            "--ledger",
            "ledger.sqlite3",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(refused.code, 2);
    assert!(
        refused.json()["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("give either a projection or --ledger")),
        "{}",
        refused.stdout
    );
    let execute = rank(&[
        "--ledger",
        "ledger.sqlite3",
        "--execute",
        "--goal-id",
        "g",
        "--agent-id",
        "a",
    ]);
    assert_eq!(execute.code, 2);
    assert!(execute.stdout.is_empty(), "an argument error");
    assert!(
        execute.stderr.contains("'--execute' cannot be used with")
            || execute.stderr.contains("cannot be used with '--execute"),
        "{}",
        execute.stderr
    );
    // Another partition of the same ledger has no utility: nothing moves.
    let mut other = request.clone();
    other["partition"]["retrieval_snapshot_ref"] = json!("retrieval:other");
    s.write("other.json", &pretty(&other));
    let isolated = s.run(
        &[
            "rank-prior",
            "--input",
            "other.json",
            "--ledger",
            "ledger.sqlite3",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(
        isolated.json()["candidates"][0]["reason_codes"],
        json!(["no_utility_evidence"])
    );
}

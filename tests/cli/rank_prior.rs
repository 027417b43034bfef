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
    let (compared, moved) = ledger_and_projection_priors_agree(None);
    assert!(compared >= 20, "only {compared} golden cases compared");
    assert!(moved >= 5, "only {moved} cases move a modifier");
}

/// The same under `memory_utility_reducer_v1`: the ledger's `memory_utility_projection_v1`
/// given as the projection ranks exactly as `--ledger` does.
#[test]
fn v1_prior_from_the_ledger_equals_prior_from_its_v1_projection_on_every_golden_case() {
    // The golden cases hold one or two observations per subject, which decide nothing
    // under v1 (see the noisy-memory tests below for modifiers that move).
    let (compared, _) = ledger_and_projection_priors_agree(Some("memory_utility_reducer_v1"));
    assert!(compared >= 20, "only {compared} golden cases compared");
}

/// Ranks every golden case's digests with the ledger's projection of the case and with
/// `--ledger` (under `reducer_version`, when given) and asserts the same transcript;
/// returns how many cases were compared and in how many a modifier moved.
fn ledger_and_projection_priors_agree(reducer_version: Option<&str>) -> (usize, usize) {
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
        if let Some(version) = reducer_version {
            partition.insert("reducer_version".to_owned(), json!(version));
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
    (compared, moved)
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

// ---------------------------------------------------------------------------------------
// memory_utility_reducer_v1: a noisy harmful memory stays attenuated
// ---------------------------------------------------------------------------------------

/// The noisy memory of the v1 checks.
const NOISY: &str = "00000000000000aa";
/// A memory nobody observed.
const QUIET: &str = "00000000000000bb";

/// One `deterministic_effect` item observation of `NOISY` in the stage-2 partition
/// (distinct ids through `version`).
fn noisy_observation(label: &str, confidence: f64, version: &str) -> serde_json::Value {
    use reward_memory::utility::observation::{
        AttributionLevel, EvidenceBasis, Observation, Scope, UtilityLabel,
    };
    let at = "2026-08-15T00:00:00Z";
    let mut o = Observation {
        observation_id: Default::default(),
        scope: Scope {
            agent_id: "agent:stage2".into(),
            project_id: "project:loopx".into(),
            corpus_id: "reward-memory-corpus".into(),
            surface_id: "loopx.issue_fix".into(),
        },
        application_receipt_id: format!("rma_{}", "cd".repeat(32)).into(),
        memory_ref_digests: vec![NOISY.to_owned()],
        retrieval_snapshot_ref: "retrieval:stage2".into(),
        policy_snapshot_ref: "policy:stage2".into(),
        outcome_ref: "effect:noisy".into(),
        utility_label: UtilityLabel::parse(label).expect("label"),
        attribution_level: AttributionLevel::Item,
        evidence_basis: EvidenceBasis::DeterministicEffect,
        confidence,
        reason_codes: vec!["artifact_distinguishes_memory".to_owned()],
        evidence_refs: vec![format!("evidence:{version}")],
        evaluator_ref: "evaluator:noisy".into(),
        evaluation_version: version.into(),
        created_at: at.into(),
        created_instant: reward_memory::wire::timestamp::parse_aware(at).expect("timestamp"),
    };
    o.observation_id = o.computed_id().into();
    let value = o.to_value();
    assert!(reward_memory::utility::validate_observation(&value).is_ok());
    serde_json::from_str(&reward_memory::wire::json::to_pretty_line(&value))
        .expect("observation JSON")
}

/// A ledger holding `harmful` harmful and `helpful` helpful observations of `NOISY`.
fn noisy_ledger(s: &Scratch, harmful: usize, helpful: usize, confidence: f64) {
    let mut lines = String::new();
    for i in 0..harmful {
        let o = noisy_observation("harmful", confidence, &format!("evaluation:bad-{i}"));
        lines.push_str(&format!("{o}\n"));
    }
    for i in 0..helpful {
        let o = noisy_observation("helpful", confidence, &format!("evaluation:good-{i}"));
        lines.push_str(&format!("{o}\n"));
    }
    s.write("noisy.jsonl", &lines);
    let append = s.run(
        &[
            "utility-ledger",
            "append",
            "--input",
            "noisy.jsonl",
            "--ledger",
            "ledger.sqlite3",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(append.code, 0, "{}", append.transcript());
    assert_eq!(
        append.json()["appended"].as_u64(),
        Some((harmful + helpful) as u64)
    );
}

/// `rank-prior --ledger` of `NOISY` (most relevant) and `QUIET` in the stage-2 partition,
/// under `reducer_version` (absent: the default v0).
fn rank_noisy(s: &Scratch, reducer_version: Option<&str>) -> Run {
    let mut partition = json!({
        "scope": {
            "agent_id": "agent:stage2",
            "project_id": "project:loopx",
            "corpus_id": "reward-memory-corpus",
            "surface_id": "loopx.issue_fix",
        },
        "retrieval_snapshot_ref": "retrieval:stage2",
        "policy_snapshot_ref": "policy:stage2",
    });
    if let Some(version) = reducer_version {
        partition["reducer_version"] = json!(version);
    }
    let request = json!({
        "profile": {
            "profile_id": "profile:noisy",
            "semantic_floor": 0.05,
            "candidate_pool": 8,
            "modifier_bounds": [0.5, 2.0],
            "min_evidence_basis": "deterministic_effect",
            "min_support": 1,
        },
        "partition": partition,
        "candidates": [
            {"memory_ref_digest": NOISY, "relevance_score": 0.9},
            {"memory_ref_digest": QUIET, "relevance_score": 0.88},
        ],
    });
    s.write("noisy-request.json", &pretty(&request));
    s.run(
        &[
            "rank-prior",
            "--input",
            "noisy-request.json",
            "--ledger",
            "ledger.sqlite3",
            "--format",
            "json",
        ],
        None,
    )
}

fn candidate_of<'a>(packet: &'a serde_json::Value, digest: &str) -> &'a serde_json::Value {
    packet["candidates"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["memory_ref_digest"] == digest))
        .expect("candidate")
}

/// The issue-23 check: 7 harmful and 1 helpful `deterministic_effect` observations of one
/// memory (and 14 and 2) leave it at exactly 1.0 under v0 (a same-tier disagreement makes
/// the subject unknown) and attenuate it under `memory_utility_reducer_v1`, with a review
/// proposal; the profile (and its digest) is the same for both.
#[test]
fn v1_keeps_a_noisy_harmful_memory_attenuated_where_v0_flips_it_to_unknown() {
    for (harmful, helpful) in [(7, 1), (14, 2)] {
        for confidence in [0.8, 1.0] {
            let s = Scratch::new();
            noisy_ledger(&s, harmful, helpful, confidence);
            let case = format!("{harmful} harmful + {helpful} helpful at {confidence}");

            let v0 = rank_noisy(&s, None);
            assert_eq!(v0.code, 0, "{case}: {}", v0.transcript());
            let v0 = v0.json();
            let noisy = candidate_of(&v0, NOISY);
            assert_eq!(noisy["modifier"], json!(1.0), "{case}");
            assert_eq!(noisy["reason_codes"], json!(["utility_unknown"]), "{case}");
            assert_eq!(noisy["final_rank"], json!(1), "{case}");
            assert_eq!(v0["reducer_version"], json!("memory_utility_reducer_v0"));

            let v1 = rank_noisy(&s, Some("memory_utility_reducer_v1"));
            assert_eq!(v1.code, 0, "{case}: {}", v1.transcript());
            let v1 = v1.json();
            let noisy = candidate_of(&v1, NOISY);
            let modifier = noisy["modifier"].as_f64().expect("modifier");
            assert!((0.5..1.0).contains(&modifier), "{case}: {modifier}");
            assert_eq!(
                noisy["reason_codes"],
                json!(["negative_utility_attenuation", "review_proposed"]),
                "{case}"
            );
            assert_eq!(candidate_of(&v1, QUIET)["modifier"], json!(1.0));
            assert_eq!(v1["review_proposals"][0]["memory_ref_digest"], json!(NOISY));
            assert_eq!(v1["reducer_version"], json!("memory_utility_reducer_v1"));
            assert_eq!(v1["profile_digest"], v0["profile_digest"], "{case}");
            assert_ne!(v1["reducer_identity"], v0["reducer_identity"], "{case}");
            // Consistent harmful evidence moves it further: 14 + 2 below 7 + 1.
            if harmful == 7 {
                let s14 = Scratch::new();
                noisy_ledger(&s14, 14, 2, confidence);
                let more = rank_noisy(&s14, Some("memory_utility_reducer_v1")).json();
                let further = candidate_of(&more, NOISY)["modifier"]
                    .as_f64()
                    .expect("modifier");
                assert!(further < modifier, "{case}: {further} vs {modifier}");
            }
        }
    }
    // The figures the worked example of docs/rank-prior.md shows.
    let s = Scratch::new();
    noisy_ledger(&s, 7, 1, 0.8);
    snap!(
        "rank_prior_v1_noisy_harmful",
        rank_noisy(&s, Some("memory_utility_reducer_v1"))
    );
}

/// A reducer version that starts like a v1 name must be one; the half-life form works.
#[test]
fn v1_reducer_versions_are_checked_and_the_half_life_form_is_accepted() {
    let s = Scratch::new();
    noisy_ledger(&s, 7, 1, 0.8);
    let bad = rank_noisy(&s, Some("memory_utility_reducer_v1:half_life_days:0"));
    assert_eq!(bad.code, 2, "{}", bad.transcript());
    assert!(
        bad.json()["error"].as_str().is_some_and(|e| e.starts_with(
            "partition.reducer_version memory_utility_reducer_v1:half_life_days:0 is not a memory_utility_reducer_v1 name"
        )),
        "{}",
        bad.stdout
    );
    // Every observation has the same time: a half-life changes nothing here.
    let decayed = rank_noisy(&s, Some("memory_utility_reducer_v1:half_life_days:30")).json();
    let flat = rank_noisy(&s, Some("memory_utility_reducer_v1")).json();
    assert_eq!(
        candidate_of(&decayed, NOISY)["modifier"],
        candidate_of(&flat, NOISY)["modifier"]
    );
    assert_eq!(
        decayed["reducer_version"],
        json!("memory_utility_reducer_v1:half_life_days:30")
    );
}

/// The noisy memory ranks the same from the ledger's `memory_utility_projection_v1` (given
/// as the request's projection) as with `--ledger`, and a v0 projection packet that
/// names the v1 reducer is refused: its subjects follow the v0 rules.
#[test]
fn v1_projection_and_ledger_rank_the_noisy_memory_alike() {
    let s = Scratch::new();
    noisy_ledger(&s, 7, 1, 0.8);
    let from_ledger = rank_noisy(&s, Some("memory_utility_reducer_v1"));
    let mut request = read_json(&s.path.join("noisy-request.json"));
    s.write("partition.json", &pretty(&request["partition"]));
    let projected = s.run(
        &[
            "utility-ledger",
            "project",
            "--input",
            "partition.json",
            "--ledger",
            "ledger.sqlite3",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(projected.code, 0, "{}", projected.transcript());
    assert_eq!(
        projected.json()["schema_version"],
        json!("memory_utility_projection_v1")
    );
    request["projection"] = projected.json();
    s.write("from-projection.json", &pretty(&request));
    let from_projection = s.run(
        &[
            "rank-prior",
            "--input",
            "from-projection.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(from_projection.transcript(), from_ledger.transcript());
    assert_eq!(from_ledger.json()["modified_count"], json!(1));

    // utility-project labels its (v0) packet with any reducer version: not a v1 projection.
    let mut v0_input = request["projection"].clone();
    v0_input = json!({
        "observations": [],
        "scope": v0_input["scope"],
        "retrieval_snapshot_ref": v0_input["retrieval_snapshot_ref"],
        "policy_snapshot_ref": v0_input["policy_snapshot_ref"],
        "reducer_version": "memory_utility_reducer_v1",
    });
    s.write("v0-input.json", &pretty(&v0_input));
    let v0_packet = s.run(
        &[
            "utility-project",
            "--input",
            "v0-input.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(
        v0_packet.json()["schema_version"],
        json!("memory_utility_projection_v0")
    );
    request["projection"] = v0_packet.json();
    s.write("mislabelled.json", &pretty(&request));
    let refused = s.run(
        &[
            "rank-prior",
            "--input",
            "mislabelled.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(refused.code, 2, "{}", refused.transcript());
    assert!(
        refused.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("whose subjects follow the v0 rules")),
        "{}",
        refused.stdout
    );
}

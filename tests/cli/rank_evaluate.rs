//! `rank-evaluate`: the simulator's verdict in markdown and JSON, byte-identical for a
//! seed, schema-conformant and accepted by the rank prior's evaluation gate; the honest
//! simulator's boundary worlds (memories that cause nothing, inference alone under
//! confounding) hold; tuned baselines and the best arm in the packet; sweeps; the SVG
//! chart; `EPISODES.jsonl` fixtures (valid ones evaluate, malformed ones list their line
//! numbers); profile and argument errors.

use std::path::{Path, PathBuf};

use reward_memory::ranking::prior::{Profile, Verdict};
use reward_memory::wire::json;

use crate::snap;
use crate::support::{Scratch, fixtures_dir, schema_named, snake_stem};

/// A small simulation: 300 training and 60 held-out episodes, seed 7.
const SMALL: &[&str] = &[
    "rank-evaluate",
    "--simulate",
    "--episodes",
    "300",
    "--seed",
    "7",
];

fn with(base: &[&str], extra: &[&str]) -> Vec<String> {
    base.iter().chain(extra).map(|s| (*s).to_owned()).collect()
}

fn run(scratch: &Scratch, args: &[String]) -> crate::support::Run {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    scratch.run(&refs, None)
}

fn jsonl_fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = fixtures_dir().join("rank_evaluate").join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("jsonl"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn copy_into(scratch: &Scratch, path: &Path, name: &str) {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    scratch.write(name, &text);
}

#[test]
fn a_small_simulation_prints_the_verdict_table_in_markdown() {
    let scratch = Scratch::new();
    snap!(
        "rank_evaluate_simulate_markdown",
        run(&scratch, &with(SMALL, &[]))
    );
}

/// The gate's answer for a simulation verdict (bound to no partition or ledger).
fn simulated_gate(verdict: &Verdict, profile: &Profile, allow: bool) -> Option<&'static str> {
    verdict.blocks(&reward_memory::ranking::prior::GateContext {
        profile,
        partition_identity: "",
        ledger: None,
        now_micros: 0,
        allow_simulated: allow,
    })
}

#[test]
fn the_json_verdict_is_byte_identical_for_a_seed_conforms_and_gates_recall() {
    let scratch = Scratch::new();
    let args = with(SMALL, &["--format", "json"]);
    let first = run(&scratch, &args);
    let second = run(&scratch, &args);
    assert_eq!(first.stdout, second.stdout, "same seed, same bytes");
    let packet = json::parse(&first.stdout).expect("JSON");
    reward_memory::schema::check(
        &packet,
        &schema_named("memory_utility_ranking_evaluation_v1"),
    )
    .unwrap_or_else(|e| panic!("does not conform: {e}"));
    let qualified = packet.get("verdict").and_then(|v| v.as_str()) == Some("qualified");
    assert_eq!(first.code, if qualified { 0 } else { 2 });
    // The verdict is what `recall --rank-prior --evaluation` reads, for this profile.
    let verdict = Verdict::from_value(&packet);
    assert_eq!(verdict.defect, None, "sealed and consistent");
    let profile = Profile::from_value(
        packet
            .get("profile")
            .and_then(|p| p.get("rank_prior"))
            .expect("profile echo"),
    )
    .expect("profile");
    assert_eq!(verdict.profile_digest, profile.digest());
    assert_eq!(
        simulated_gate(&verdict, &profile, true).is_none(),
        qualified
    );
    assert_eq!(
        simulated_gate(&verdict, &profile, false),
        Some("ranking_evaluation_simulated"),
        "a simulation opens the gate only with --allow-simulated-evaluation"
    );
    let other = run(
        &scratch,
        &with(&SMALL[..4], &["--seed", "8", "--format", "json"]),
    );
    assert_ne!(other.stdout, first.stdout, "another seed, other episodes");
}

#[test]
fn a_sweep_adds_one_row_per_value_and_keeps_the_base_verdict() {
    let scratch = Scratch::new();
    let args = with(
        &[
            "rank-evaluate",
            "--simulate",
            "--episodes",
            "200",
            "--seed",
            "3",
        ],
        &["--sweep", "evaluator_accuracy=0.3333333333333333,1"],
    );
    snap!("rank_evaluate_sweep_markdown", run(&scratch, &args));
    let json_run = run(
        &scratch,
        &with(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            &["--format", "json"],
        ),
    );
    let packet = json::parse(&json_run.stdout).expect("JSON");
    reward_memory::schema::check(
        &packet,
        &schema_named("memory_utility_ranking_evaluation_v1"),
    )
    .unwrap_or_else(|e| panic!("does not conform: {e}"));
    let points = packet
        .get("sweep")
        .and_then(|s| s.get("points"))
        .and_then(|p| p.as_array())
        .map_or(0, <[_]>::len);
    assert_eq!(points, 2);
}

#[test]
fn plot_writes_an_svg_whose_text_needs_no_font_files() {
    let scratch = Scratch::new();
    let args = with(
        SMALL,
        &[
            "--plot",
            "chart.svg",
            "--sweep",
            "exploration_rate=0,0.2,0.5",
        ],
    );
    let run = run(&scratch, &args);
    assert!(run.code == 0 || run.code == 2, "{}", run.transcript());
    let svg = std::fs::read_to_string(scratch.path.join("chart.svg")).expect("chart written");
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    assert!(
        svg.contains("<text") && svg.contains("nDCG@3"),
        "labels are SVG text"
    );
    for arm in [
        "+ hotness",
        "x bounded utility",
        "x utility, no inference",
        "MemRL",
        "MemRL on-policy",
    ] {
        assert!(svg.contains(arm), "legend names {arm}");
    }
    let plain = crate::support::Scratch::new();
    let single = plain.run(
        &[
            "rank-evaluate",
            "--simulate",
            "--episodes",
            "100",
            "--plot",
            "one.svg",
        ],
        None,
    );
    assert!(single.code == 0 || single.code == 2);
    let one = std::fs::read_to_string(plain.path.join("one.svg")).expect("chart written");
    assert!(one.contains("per arm") && one.contains("1 semantic"));
}

/// `--plot` onto a full file system (a 16 KiB tmpfs in a private mount namespace, where
/// `unshare -rm` can make one): the command fails with the plot error and the file keeps
/// its old content; with no old file, none is left (no 0-byte SVG, no temporary).
#[test]
fn plot_on_a_full_disk_leaves_the_old_file_whole() {
    if !std::process::Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success())
    {
        crate::support::note(
            "skipped: `unshare -rm` (a private mount namespace) is not available here",
        );
        return;
    }
    let scratch = Scratch::new();
    let disk = scratch.path.join("disk");
    std::fs::create_dir(&disk).expect("mount point");
    let script = r#"set -u
mount -t tmpfs -o size=16k tmpfs "$1" || exit 97
printf OLD > "$1/old.svg"
"$2" rank-evaluate --simulate --episodes 100 --plot "$1/old.svg" --format json > "$1/../old.out"
echo "old-exit=$?"
"$2" rank-evaluate --simulate --episodes 100 --plot "$1/new.svg" --format json > "$1/../new.out"
echo "new-exit=$?"
printf 'old=%s
' "$(cat "$1/old.svg")"
ls -A "$1"
"#;
    let out = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", script, "sh"])
        .arg(&disk)
        .arg(env!("CARGO_BIN_EXE_reward-memory"))
        .output()
        .expect("unshare runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.is_empty() && out.status.code() == Some(97) {
        crate::support::note("skipped: cannot mount a tmpfs in the namespace");
        return;
    }
    assert_eq!(
        stdout,
        "old-exit=2\nnew-exit=2\nold=OLD\nold.svg\n",
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["old.out", "new.out"] {
        let packet = std::fs::read_to_string(scratch.path.join(name)).expect("packet");
        assert!(
            packet.contains("\"error\": \"cannot write the plot "),
            "{name}: {packet}"
        );
    }
}

#[test]
fn valid_episode_files_evaluate() {
    let files = jsonl_fixtures("valid");
    assert!(!files.is_empty());
    for path in files {
        let scratch = Scratch::new();
        copy_into(&scratch, &path, "episodes.jsonl");
        let run = scratch.run(
            &[
                "rank-evaluate",
                "--input",
                "episodes.jsonl",
                "--format",
                "json",
            ],
            None,
        );
        let packet = json::parse(&run.stdout).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        reward_memory::schema::check(
            &packet,
            &schema_named("memory_utility_ranking_evaluation_v1"),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let markdown = scratch.run(&["rank-evaluate", "--input", "episodes.jsonl"], None);
        snap!(
            format!("rank_evaluate_valid_{}", snake_stem(&path)),
            markdown
        );
    }
}

#[test]
fn malformed_episode_files_list_each_line_and_reason() {
    let files = jsonl_fixtures("invalid");
    assert!(!files.is_empty());
    for path in files {
        let scratch = Scratch::new();
        copy_into(&scratch, &path, "episodes.jsonl");
        let run = scratch.run(
            &[
                "rank-evaluate",
                "--input",
                "episodes.jsonl",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(run.code, 2, "{}", path.display());
        let error = run.json()["error"].as_str().expect("error").to_owned();
        assert_eq!(
            run.json()["status"],
            "invalid_request",
            "{}",
            path.display()
        );
        assert!(run.stderr.is_empty(), "JSON mode keeps stderr empty");
        // A person sees the same error in markdown, and once more on stderr.
        let markdown = scratch.run(&["rank-evaluate", "--input", "episodes.jsonl"], None);
        assert_eq!(markdown.code, 2);
        assert!(
            markdown.stdout.contains(&format!("- error: `{error}`\n")),
            "{}",
            markdown.stdout
        );
        assert_eq!(markdown.stderr, format!("reward-memory: {error}\n"));
        snap!(
            format!("rank_evaluate_invalid_{}", snake_stem(&path)),
            markdown
        );
    }
}

#[test]
fn the_recall_loop_verdict_is_what_rank_evaluate_prints_for_the_loop_profile() {
    // `fixtures/recall/loop/evaluation.json` is the verdict the recall tests, the README
    // loop and the OpenViking check hand to `recall --rank-prior --evaluation`: it must be
    // a real rank-evaluate run, not a hand-written packet.
    let profile = fixtures_dir().join("recall/loop/evaluation-profile.json");
    let run = Scratch::new().run(
        &[
            "rank-evaluate",
            "--simulate",
            "--episodes",
            "1000",
            "--profile",
            &profile.to_string_lossy(),
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, 0, "the loop profile qualifies: {}", run.stdout);
    let committed = std::fs::read_to_string(fixtures_dir().join("recall/loop/evaluation.json"))
        .expect("verdict fixture");
    assert_eq!(
        run.stdout, committed,
        "regenerate fixtures/recall/loop/evaluation.json with this command"
    );
    let packet = json::parse(&committed).expect("JSON");
    let loop_profile =
        std::fs::read_to_string(fixtures_dir().join("recall/loop/profile.json")).expect("profile");
    let loop_profile =
        Profile::from_value(&json::parse(&loop_profile).expect("JSON")).expect("profile");
    let verdict = Verdict::from_value(&packet);
    assert_eq!(
        simulated_gate(&verdict, &loop_profile, true),
        None,
        "it qualifies profile:loop"
    );
}

#[test]
fn episodes_come_from_standard_input_too() {
    let path = fixtures_dir().join("rank_evaluate/valid/episodes-only.jsonl");
    let text = std::fs::read_to_string(path).expect("fixture");
    let run = Scratch::new().run(
        &["rank-evaluate", "--input", "-", "--format", "json"],
        Some(&text),
    );
    assert_eq!(run.json()["source"]["held_out_episodes"], 2);
}

#[test]
fn an_off_profile_holds_with_exit_2() {
    // Bounds [1, 1] switch the prior off: arm 3 equals arm 1, so its gain is not above 0.
    let scratch = Scratch::new();
    scratch.write(
        "profile.json",
        r#"{"rank_prior": {"profile_id": "profile:off", "semantic_floor": 0.05, "candidate_pool": 8,
            "modifier_bounds": [1, 1], "min_evidence_basis": "deterministic_effect", "min_support": 1},
            "evaluation": {"bootstrap_resamples": 200}}"#,
    );
    let run = run(
        &scratch,
        &with(SMALL, &["--profile", "profile.json", "--format", "json"]),
    );
    assert_eq!(run.code, 2);
    let packet = run.json();
    assert_eq!(packet["verdict"], "hold");
    assert_eq!(
        packet["reason_codes"][0],
        "ndcg_gain_interval_not_above_zero"
    );
    assert_eq!(packet["ok"], false);
}

#[test]
fn profile_sweep_and_argument_errors_say_what_to_fix() {
    let scratch = Scratch::new();
    scratch.write(
        "profile.json",
        r#"{"simulator": {"evaluator_accuracy": 1.5}}"#,
    );
    snap!(
        "rank_evaluate_profile_out_of_range",
        run(
            &scratch,
            &with(SMALL, &["--profile", "profile.json", "--format", "json"])
        )
    );
    snap!(
        "rank_evaluate_sweep_unknown_parameter",
        run(
            &scratch,
            &with(SMALL, &["--sweep", "nope=1,2", "--format", "json"])
        )
    );
    snap!(
        "rank_evaluate_needs_a_source",
        scratch.run(&["rank-evaluate"], None)
    );
    snap!(
        "rank_evaluate_sweep_of_a_tuned_value",
        run(
            &scratch,
            &with(
                SMALL,
                &["--sweep", "memrl.alpha=0.1,0.3", "--format", "json"]
            )
        )
    );
    snap!(
        "rank_evaluate_sweep_needs_simulate",
        scratch.run(
            &[
                "rank-evaluate",
                "--input",
                "x.jsonl",
                "--sweep",
                "corpora=1",
                "--format",
                "json"
            ],
            None
        )
    );
}

/// The verdict of `rank-evaluate --simulate` with `profile` (and `extra` arguments).
fn verdict_of(profile: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    let scratch = Scratch::new();
    scratch.write("profile.json", profile);
    let mut args = vec!["rank-evaluate", "--simulate", "--profile", "profile.json"];
    args.extend(extra);
    args.extend(["--format", "json"]);
    let run = scratch.run(&args, None);
    (run.code, run.json())
}

#[test]
fn a_world_where_memories_cause_nothing_holds_with_exit_2() {
    // The issue's proof that evidence used to be a copy of the hidden label: with no causal
    // effect, nothing is truly helpful, so nothing can be gained, and the verdict holds.
    let (code, packet) = verdict_of(
        r#"{"simulator": {"helpful_effect": 0, "harmful_effect": 0}}"#,
        &["--episodes", "2000"],
    );
    assert_eq!(code, 2, "{packet}");
    assert_eq!(packet["verdict"], "hold");
    assert_eq!(packet["held_out"]["answerable_episodes"], 0);
    let reasons = packet["reason_codes"].as_array().expect("reason codes");
    assert!(
        reasons.contains(&serde_json::json!("no_answerable_held_out_episodes")),
        "{reasons:?}"
    );
}

#[test]
fn inference_alone_in_a_strongly_confounded_world_holds_with_exit_2() {
    // No replay, no deterministic check, no owner: only a judge that reads outcomes, half
    // of the memories recalled mostly for easy tasks, and tasks whose base success spans
    // the whole range. Default episodes, as the acceptance check runs it.
    let (code, packet) = verdict_of(
        r#"{"simulator": {"deterministic_effect_rate": 0, "controlled_replay_rate": 0,
            "owner_correction_rate": 0, "confounding": 0.5, "difficulty_spread": 1.0}}"#,
        &[],
    );
    assert_eq!(code, 2, "{packet}");
    assert_eq!(packet["verdict"], "hold");
    for tier in [
        "deterministic_effect",
        "controlled_replay",
        "owner_correction",
    ] {
        assert_eq!(packet["ledger"]["evidence_runs"][tier], 0, "{tier}");
    }
}

#[test]
fn the_packet_reports_tuned_baselines_and_which_arm_wins() {
    let scratch = Scratch::new();
    let packet = run(&scratch, &with(SMALL, &["--format", "json"])).json();
    let arms = packet["arms"].as_array().expect("arms");
    let keys: Vec<&str> = arms.iter().filter_map(|a| a["arm"].as_str()).collect();
    assert_eq!(
        keys,
        [
            "semantic",
            "semantic_hotness",
            "bounded_utility",
            "bounded_utility_without_inference",
            "memrl",
            "bounded_utility_v1",
            "memrl_on_policy"
        ]
    );
    assert_eq!(packet["gate"]["arm"], "bounded_utility", "v0 partitions");
    assert_eq!(packet["reducer_version"], "memory_utility_reducer_v0");
    assert_eq!(packet["reducer_comparison"]["arm"], "bounded_utility_v1");
    assert_eq!(packet["reducer_comparison"]["versus"], "bounded_utility");
    for arm in arms {
        let key = arm["arm"].as_str().unwrap_or_default();
        let learned = matches!(key, "semantic_hotness" | "memrl" | "memrl_on_policy");
        assert_eq!(arm["tuning"].is_object(), learned, "{key}");
        if learned {
            assert_eq!(arm["tuning"]["method"], "validation_grid", "{key}");
            assert_eq!(
                arm["tuning"]["validation_episodes"], 60,
                "{key}: 20% of the 300 training episodes, none of the held-out ones"
            );
        }
    }
    let best = packet["gate"]["best_arm"]["arm"]
        .as_str()
        .expect("best arm");
    assert!(keys.contains(&best));
    let beating = packet["gate"]["arms_beating_gated_arm"]
        .as_array()
        .expect("list");
    let markdown = run(&scratch, &with(SMALL, &[]));
    assert!(
        markdown.stdout.contains(&format!(
            "- not a check: the best arm on nDCG@3 is {best}: "
        )),
        "{}",
        markdown.stdout
    );
    let plain = if beating.is_empty() {
        "no other arm beats bounded_utility"
    } else {
        "bounded_utility is beaten on nDCG@3"
    };
    assert!(markdown.stdout.contains(plain), "{}", markdown.stdout);
}

/// Issue 23: an episodes file whose partitions name `memory_utility_reducer_v1` is
/// evaluated under v1: the gate qualifies `bounded_utility_v1`, the verdict names the v1
/// identities; one file names one reducer (a second one is refused with its line), and a
/// malformed v1 name is refused as the rank prior refuses it.
#[test]
fn an_episodes_file_of_v1_partitions_gates_the_v1_arm_and_one_file_names_one_reducer() {
    let path = fixtures_dir().join("rank_evaluate/valid/episodes-only.jsonl");
    let text = std::fs::read_to_string(path).expect("fixture");
    let named = |version: &str, only_first: bool| {
        let mut out = String::new();
        let mut done = false;
        for line in text.lines() {
            let mut v: serde_json::Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(_) => {
                    out.push_str(line);
                    out.push('\n');
                    continue;
                }
            };
            if v["schema_version"] == "memory_utility_ranking_episode_v0" && !(only_first && done) {
                v["partition"]["reducer_version"] = serde_json::json!(version);
                done = true;
            }
            out.push_str(&v.to_string());
            out.push('\n');
        }
        out
    };
    let scratch = Scratch::new();
    scratch.write("v1.jsonl", &named("memory_utility_reducer_v1", false));
    let v1 = scratch.run(
        &["rank-evaluate", "--input", "v1.jsonl", "--format", "json"],
        None,
    );
    let packet = v1.json();
    assert_eq!(packet["reducer_version"], "memory_utility_reducer_v1");
    assert_eq!(packet["gate"]["arm"], "bounded_utility_v1");
    let plain = scratch.run(
        &[
            "rank-evaluate",
            "--input",
            &fixtures_dir()
                .join("rank_evaluate/valid/episodes-only.jsonl")
                .to_string_lossy(),
            "--format",
            "json",
        ],
        None,
    );
    let v0 = plain.json();
    assert_eq!(v0["gate"]["arm"], "bounded_utility");
    assert_ne!(v0["source"]["partitions"], packet["source"]["partitions"]);
    assert_eq!(v0["arms"], packet["arms"], "the same arms either way");

    scratch.write("mixed.jsonl", &named("memory_utility_reducer_v1", true));
    let mixed = scratch.run(
        &[
            "rank-evaluate",
            "--input",
            "mixed.jsonl",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(mixed.code, 2, "{}", mixed.transcript());
    let error = mixed.json()["error"].as_str().expect("error").to_owned();
    assert!(
        error.contains("partition.reducer_version is memory_utility_reducer_v0, but line 1 names memory_utility_reducer_v1: every episode of one file names the same reducer"),
        "{error}"
    );
    scratch.write(
        "bad.jsonl",
        &named("memory_utility_reducer_v1:half_life_days:0", false),
    );
    let bad = scratch.run(
        &["rank-evaluate", "--input", "bad.jsonl", "--format", "json"],
        None,
    );
    assert_eq!(bad.code, 2, "{}", bad.transcript());
    assert!(
        bad.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("is not a memory_utility_reducer_v1 name")),
        "{}",
        bad.stdout
    );
}

//! `init DIR`: a working setup for one goal and agent (issue 26): the registry, the
//! experiment config with its two corpora and standing policies, and an example lesson,
//! written under DIR with absolute paths ([`crate::contract::experiment::starter`] builds
//! them); the packet names the files and the three shell commands that ingest the
//! lesson, recall it (with its text) and apply it.
//!
//! Nothing is overwritten: a file that is already there refuses the whole run before
//! anything is written. The runtime root the commands use is `DIR/runtime` (created by
//! the first command that needs it). `init --demo` runs the loop once on such a setup
//! through the same handlers as the subcommands and prints each step
//! (`reward_memory_demo_v0`).

use std::path::{Path, PathBuf};

use crate::cli::InitArgs;
use crate::contract::experiment::starter::{
    self, CONFIG_PATH, DemoPacket, DemoStep, InitCommands, InitPacket, LEARNINGS_SURFACE,
    StarterError, StarterSetup,
};
use crate::error::Error;
use crate::io;
use crate::wire::json;
use crate::wire::schema::AlwaysTrue;

use super::apply::{self, ApplyRequest};
use super::context::{Context, Outcome};
use super::ingest_event::{self, IngestEventRequest};
use super::rank_evaluate::{self, RankEvaluateRequest};
use super::recall;
use super::utility_attribute::{self, UtilityAttributeRequest};
use super::utility_ledger::{self, LedgerRequest, LedgerSubjectRequest};

/// What `init` is asked to write.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitRequest {
    /// The directory to write into (created when missing); relative to the working
    /// directory. Optional with `demo` (then a temporary one, removed afterwards).
    #[serde(default)]
    pub directory: Option<PathBuf>,
    /// Run the whole loop once on the setup and print each step.
    #[serde(default)]
    pub demo: bool,
    /// The goal's id in the registry.
    #[serde(default = "default_goal")]
    pub goal_id: String,
    /// The agent registered and enabled for the goal.
    #[serde(default = "default_agent")]
    pub agent_id: String,
    /// The workspace both corpora are scoped to.
    #[serde(default = "default_workspace")]
    pub workspace_ref: String,
    /// The project both corpora are scoped to.
    #[serde(default = "default_project")]
    pub project_ref: String,
}

fn default_goal() -> String {
    "my-goal".to_owned()
}

fn default_agent() -> String {
    "agent".to_owned()
}

fn default_workspace() -> String {
    "workspace:local".to_owned()
}

fn default_project() -> String {
    "project:local".to_owned()
}

impl From<&InitArgs> for InitRequest {
    fn from(args: &InitArgs) -> InitRequest {
        InitRequest {
            directory: args.directory.clone(),
            demo: args.demo,
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
            workspace_ref: args.workspace_ref.clone(),
            project_ref: args.project_ref.clone(),
        }
    }
}

/// `text` as one shell word: as it is when it holds only safe characters, else in single
/// quotes.
fn shell_word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if safe {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The three commands, each a shell line that runs as printed.
fn commands(exe: &str, paths: &Paths, request: &InitRequest) -> InitCommands {
    let base = format!(
        "{} --registry {} --runtime-root {}",
        shell_word(exe),
        shell_word(&shown(&paths.registry)),
        shell_word(&shown(&paths.runtime_root)),
    );
    let route = format!(
        "--goal-id {} --agent-id {}",
        shell_word(&request.goal_id),
        shell_word(&request.agent_id)
    );
    let recall_file = shell_word(&shown(&paths.recall));
    InitCommands {
        ingest: format!(
            "{base} ingest-event --input {} {route} --execute",
            shell_word(&shown(&paths.lesson))
        ),
        recall: format!(
            "{base} recall {route} --surface-id {LEARNINGS_SURFACE} --query 'focused tests before committing' \
             --query-summary 'testing habits' --deliver-content --format json | tee {recall_file}"
        ),
        apply: format!(
            "{base} apply --recall-session \"$(jq -r .recall_session_ref {recall_file})\" \
             --application-id application:first --artifact-ref artifact:first --outcome applied \
             --memory-ref \"$(jq -r '.results[0].memory_ref' {recall_file})\" \
             --reasoning-summary 'Ran the focused tests before committing' --current-artifact-verified"
        ),
    }
}

/// Where `init` writes.
struct Paths {
    directory: PathBuf,
    registry: PathBuf,
    config: PathBuf,
    lesson: PathBuf,
    runtime_root: PathBuf,
    /// Where the printed recall command saves its packet for the apply command.
    recall: PathBuf,
}

fn write(path: &Path, value: &json::Value) -> Result<(), StarterError> {
    let failed = |e: std::io::Error| StarterError::Write {
        path: shown(path),
        reason: e.to_string(),
    };
    if let Some(parent) = path.parent() {
        io::create_private_dir_all(parent).map_err(failed)?;
    }
    io::write_file(path, json::to_pretty_line(value).as_bytes()).map_err(failed)
}

/// Runs `init`: the files written and the packet that names them and the commands; with
/// `demo`, the whole loop once on that setup (`demo`).
pub fn run(request: &InitRequest, ctx: &Context) -> Result<Outcome, Error> {
    if request.demo {
        return demo(request, ctx);
    }
    let Some(directory) = &request.directory else {
        return Err(StarterError::Field(crate::wire::text::FieldError::new(
            "init needs a directory (DIR), or --demo",
        ))
        .into());
    };
    write_setup(request, directory, ctx).map(|(packet, _)| packet)
}

/// Writes the setup into `directory`: the `init` packet, and the paths.
fn write_setup(
    request: &InitRequest,
    directory: &Path,
    ctx: &Context,
) -> Result<(Outcome, Paths), Error> {
    let directory = if directory.is_absolute() {
        directory.to_path_buf()
    } else {
        ctx.env.cwd.join(directory)
    };
    let paths = Paths {
        registry: directory.join("registry.json"),
        config: directory.join(CONFIG_PATH),
        lesson: directory.join("lesson.json"),
        runtime_root: directory.join("runtime"),
        recall: directory.join("recall.json"),
        directory,
    };
    let setup = StarterSetup {
        repo: shown(&paths.directory),
        goal_id: request.goal_id.clone(),
        agent_id: request.agent_id.clone(),
        workspace_ref: request.workspace_ref.clone(),
        project_ref: request.project_ref.clone(),
        observed_at: io::utc_now_iso(),
    };
    starter::check_setup(&setup)?;
    for path in [&paths.registry, &paths.config, &paths.lesson] {
        if io::exists(path) {
            return Err(StarterError::Exists(shown(path)).into());
        }
    }
    let documents = starter::starter(&setup);
    write(&paths.registry, &documents.registry)?;
    write(&paths.config, &documents.config)?;
    write(&paths.lesson, &documents.lesson)?;
    let exe = ctx
        .env
        .exe
        .as_deref()
        .map_or_else(|| "reward-memory".to_owned(), shown);
    let packet = InitPacket {
        ok: AlwaysTrue,
        schema_version: starter::InitVersion,
        status: starter::Initialized,
        directory: shown(&paths.directory),
        goal_id: request.goal_id.clone(),
        agent_id: request.agent_id.clone(),
        registry: shown(&paths.registry),
        experiment_config: shown(&paths.config),
        lesson_event: shown(&paths.lesson),
        runtime_root: shown(&paths.runtime_root),
        corpora: starter::declared_corpora(),
        commands: commands(&exe, &paths, request),
    };
    Ok((Outcome::success(packet_value(&packet)?), paths))
}

fn packet_value<T: serde::Serialize>(packet: &T) -> Result<json::Value, StarterError> {
    json::to_value(packet).map_err(|e| StarterError::Write {
        path: "the packet".to_owned(),
        reason: e.to_string(),
    })
}

// ---------------------------------------------------------------------------------------
// init --demo: the loop once, through the same handlers
// ---------------------------------------------------------------------------------------

/// The demo's steps so far, and the context its commands run in.
struct Demo {
    ctx: Context,
    steps: Vec<DemoStep>,
}

impl Demo {
    /// Runs one handler; records the step; the packet when it passed.
    fn step(
        &mut self,
        step: &str,
        command: &str,
        result: Result<Outcome, Error>,
        check: impl Fn(&json::Value) -> Option<String>,
    ) -> Option<json::Value> {
        let (status, packet) = match result {
            // A receipt without a status of its own (`utility-attribute`) shows its first
            // evaluator's.
            Ok(outcome) => (
                [
                    &["status"][..],
                    &["attributions", "0", "evaluators", "0", "status"],
                ]
                .iter()
                .map(|path| status_at(&outcome.packet, path))
                .find(|s| !s.is_empty())
                .unwrap_or_default(),
                Some(outcome.packet),
            ),
            Err(err) => (format!("error: {err}"), None),
        };
        let proved = packet.as_ref().and_then(&check);
        let passed = proved.is_some();
        self.steps.push(DemoStep {
            step: step.to_owned(),
            command: command.to_owned(),
            status,
            passed,
            proved: proved.unwrap_or_else(|| {
                "not what the loop expects: see the command's own output".to_owned()
            }),
        });
        packet.filter(|_| passed)
    }
}

/// The text at `path` (object keys, or list indices as digits) of `value`.
fn status_at(value: &json::Value, path: &[&str]) -> String {
    let mut at = Some(value);
    for key in path {
        at = at.and_then(|v| match (v, key.parse::<usize>()) {
            (json::Value::Array(items), Ok(i)) => items.get(i),
            _ => v.get(key),
        });
    }
    crate::wire::pyfmt::pystr(at)
}

fn request_of<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, Error> {
    serde_json::from_value(value).map_err(|e| {
        StarterError::Write {
            path: "the demo's request".to_owned(),
            reason: e.to_string(),
        }
        .into()
    })
}

fn candidates(packet: &json::Value) -> Vec<String> {
    packet
        .get("results")
        .and_then(json::Value::as_array)
        .map(|results| {
            results
                .iter()
                .map(|r| crate::wire::pyfmt::pystr(r.get("candidate_ref")))
                .collect()
        })
        .unwrap_or_default()
}

/// `init --demo [DIR]`: writes the setup (into a temporary directory when none is given,
/// removed at the end), then ingests three lessons, recalls, applies the second result,
/// attributes a verified test to it, reads its subject from the ledger, evaluates the
/// demo profile in the simulator, and recalls with the prior (which now ranks the
/// applied lesson first) and without it (relevance order, as before).
fn demo(request: &InitRequest, ctx: &Context) -> Result<Outcome, Error> {
    use serde_json::json;
    let temporary =
        match &request.directory {
            Some(_) => None,
            None => Some(io::private_temp_dir("reward-memory-demo-").map_err(|e| {
                StarterError::Write {
                    path: "a temporary directory".to_owned(),
                    reason: e.to_string(),
                }
            })?),
        };
    let directory = match (&request.directory, &temporary) {
        (Some(dir), _) => dir.clone(),
        (None, Some(temp)) => temp.path().join("setup"),
        (None, None) => PathBuf::from("setup"),
    };
    let (_, paths) = write_setup(request, &directory, ctx)?;
    let mut demo = Demo {
        ctx: Context {
            registry: Some(paths.registry.clone()),
            runtime_root: Some(paths.runtime_root.clone()),
            ..ctx.clone()
        },
        steps: Vec::new(),
    };
    let setup = StarterSetup {
        repo: shown(&paths.directory),
        goal_id: request.goal_id.clone(),
        agent_id: request.agent_id.clone(),
        workspace_ref: request.workspace_ref.clone(),
        project_ref: request.project_ref.clone(),
        observed_at: io::utc_now_iso(),
    };
    let file = |name: &str| paths.directory.join(name);
    let (goal, agent) = (request.goal_id.as_str(), request.agent_id.as_str());
    let ledger = shown(&file("ledger.sqlite3"));
    let finish = |demo: Demo| -> Result<Outcome, Error> {
        let ok = demo.steps.iter().all(|s| s.passed) && demo.steps.len() == 8;
        let packet = DemoPacket {
            ok,
            schema_version: starter::DemoVersion,
            status: if ok { "completed" } else { "failed" }.to_owned(),
            directory: shown(&paths.directory),
            kept: temporary.is_none(),
            steps: demo.steps,
        };
        Ok(Outcome::by_ok(packet_value(&packet)?))
    };

    // 1. ingest three lessons.
    let mut activated = 0;
    for (i, lesson) in starter::demo_lessons(&setup).iter().enumerate() {
        let path = file(&format!("lesson-{}.json", i + 1));
        write(&path, lesson)?;
        let request: IngestEventRequest = request_of(json!({
            "input": {"path": shown(&path)}, "goal_id": goal, "agent_id": agent, "execute": true,
        }))?;
        if let Ok(outcome) = ingest_event::run(&request, &demo.ctx)
            && outcome.packet.get("status").and_then(json::Value::as_str) == Some("activated")
        {
            activated += 1;
        }
    }
    demo.steps.push(DemoStep {
        step: "ingest".to_owned(),
        command: format!("ingest-event --input lesson-N.json --goal-id {goal} --agent-id {agent} --execute (x3)"),
        status: if activated == 3 { "activated" } else { "guard_blocked" }.to_owned(),
        passed: activated == 3,
        proved: "the agent's own lessons pass LoopX's guards as advisory procedural_experience and read back exactly".to_owned(),
    });
    if activated != 3 {
        return finish(demo);
    }

    // 2. recall, with the lessons' text.
    let recall_args = json!({
        "goal_id": goal, "agent_id": agent, "surface_id": LEARNINGS_SURFACE,
        "query": ["tests commits"], "query_summary": ["testing and commit habits"],
        "deliver_content": true, "ledger": ledger,
    });
    let command = format!(
        "recall --goal-id {goal} --agent-id {agent} --surface-id {LEARNINGS_SURFACE} --query 'tests commits' --query-summary '...' --deliver-content --ledger ledger.sqlite3"
    );
    let first = demo.step(
        "recall",
        &command,
        recall::run(&request_of(recall_args.clone())?, &demo.ctx),
        |p| {
            let results = p.get("results").and_then(json::Value::as_array)?;
            let texts = results
                .iter()
                .filter(|r| r.get("delivered_content").is_some())
                .count();
            (results.len() >= 2 && texts == results.len()).then(|| {
                format!(
                    "{} lessons match, each with its text delivered to the caller (private, never stored)",
                    results.len()
                )
            })
        },
    );
    let Some(first) = first else {
        return finish(demo);
    };
    let order = candidates(&first);
    let second = first
        .get("results")
        .and_then(json::Value::as_array)
        .and_then(|r| r.get(1))
        .cloned()
        .unwrap_or_default();
    let text = |v: &json::Value, k: &str| crate::wire::pyfmt::pystr(v.get(k));

    // 3. apply the second result.
    let apply_request: ApplyRequest = request_of(json!({
        "recall_session": text(&first, "recall_session_ref"),
        "application_id": "application:demo-1", "artifact_ref": "artifact:demo-1",
        "outcome": "applied", "memory_ref": [text(&second, "memory_ref")],
        "reasoning_summary": "Applied the second lesson", "current_artifact_verified": true,
        "ledger": ledger,
    }))?;
    let applied = demo.step(
        "apply",
        "apply --recall-session rms_... --outcome applied --memory-ref <second result> --current-artifact-verified",
        apply::run(&apply_request, &demo.ctx),
        |p| {
            p.get("application_receipt_id")
                .and_then(json::Value::as_str)
                .map(|id| format!("the decision is an application receipt {id}, bound to the recall's snapshots"))
        },
    );
    let Some(applied) = applied else {
        return finish(demo);
    };
    let digest = text(&second, "memory_ref_digest");

    // 4. attribute a verified test to the applied lesson.
    let attribute_request: UtilityAttributeRequest = request_of(json!({
        "receipt_id": text(&applied, "application_receipt_id"),
        "outcome_ref": "effect:demo-1", "outcome_status": "succeeded", "verified": true,
        "evidence": [format!("test:demo-ci:passed:{digest}")], "ledger": ledger,
    }))?;
    let attribution = demo.step(
        "attribute",
        "utility-attribute --receipt-id rma_... --outcome-status succeeded --verified --evidence test:demo-ci:passed:<digest> --ledger ledger.sqlite3",
        utility_attribute::run(&attribute_request, &demo.ctx),
        |p| {
            let evaluator = p.get("attributions")?.as_array()?.first()?.get("evaluators")?.as_array()?.first()?;
            (evaluator.get("status").and_then(json::Value::as_str) == Some("appended")).then(|| {
                "the verified outcome became a deterministic_effect observation in the utility ledger".to_owned()
            })
        },
    );
    let Some(attribution) = attribution else {
        return finish(demo);
    };
    let partition = attribution
        .get("attributions")
        .and_then(json::Value::as_array)
        .and_then(|a| a.first())
        .and_then(|a| a.get("partition"))
        .cloned()
        .unwrap_or_default();
    write(&file("partition.json"), &partition)?;

    // 5. the ledger's view of the lesson.
    let subject_request: LedgerSubjectRequest = request_of(json!({
        "partition": {"input": shown(&file("partition.json"))},
        "memory_ref_digests": [digest], "location": {"ledger": ledger},
    }))?;
    if demo
        .step(
            "ledger",
            "utility-ledger subject --input partition.json --memory-ref-digest <digest> --ledger ledger.sqlite3",
            utility_ledger::run(&LedgerRequest::Subject(subject_request), &demo.ctx),
            |p| {
                let subjects = p.get("subjects")?.as_array()?;
                (!subjects.is_empty()).then(|| {
                    format!(
                        "the ledger holds the lesson's utility: {}, estimate {} from {} evidence",
                        text(&subjects[0], "effective_utility_label"),
                        text(&subjects[0], "utility_estimate"),
                        text(&subjects[0], "effective_evidence_basis")
                    )
                })
            },
        )
        .is_none()
    {
        return finish(demo);
    }

    // 6. evaluate the profile (the simulator: a demo has no traffic of its own).
    let (profile, evaluation_profile) = starter::demo_profiles();
    write(&file("profile.json"), &profile)?;
    write(&file("evaluation-profile.json"), &evaluation_profile)?;
    let evaluate_request: RankEvaluateRequest = request_of(json!({
        "simulate": true, "episodes": 1000,
        "profile": shown(&file("evaluation-profile.json")),
    }))?;
    let verdict = demo.step(
        "evaluate",
        "rank-evaluate --simulate --episodes 1000 --profile evaluation-profile.json",
        rank_evaluate::run(&evaluate_request, &demo.ctx),
        |p| {
            (p.get("verdict").and_then(json::Value::as_str) == Some("qualified")).then(|| {
                "held out, the bounded prior beats relevance alone, so it may influence ranking"
                    .to_owned()
            })
        },
    );
    let Some(verdict) = verdict else {
        return finish(demo);
    };
    write(&file("evaluation.json"), &verdict)?;

    // 7. recall with the prior: the applied lesson first.
    let mut with_prior = recall_args.clone();
    with_prior["rank_prior"] = json!(shown(&file("profile.json")));
    with_prior["partition"] = json!(shown(&file("partition.json")));
    with_prior["evaluation"] = json!(shown(&file("evaluation.json")));
    with_prior["allow_simulated_evaluation"] = json!(true);
    let applied_ref = order.get(1).cloned().unwrap_or_default();
    if demo
        .step(
            "recall_with_prior",
            "recall ... --rank-prior profile.json --partition partition.json --ledger ledger.sqlite3 --evaluation evaluation.json --allow-simulated-evaluation",
            recall::run(&request_of(with_prior)?, &demo.ctx),
            |p| {
                let ranked = candidates(p);
                (p.get("rank_prior_applied") == Some(&json::Value::Bool(true))
                    && ranked.first() == Some(&applied_ref))
                    .then(|| "the applied lesson's verified utility now ranks it first".to_owned())
            },
        )
        .is_none()
    {
        return finish(demo);
    }

    // 8. recall without the prior: relevance order, as at first.
    demo.step(
        "recall_without_prior",
        &command,
        recall::run(&request_of(recall_args)?, &demo.ctx),
        |p| {
            (candidates(p) == order).then(|| {
                "without the prior the order is relevance alone: utility changes ranking only when asked for and earned".to_owned()
            })
        },
    );
    finish(demo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_with_other_characters_is_single_quoted() {
        assert_eq!(shell_word("/tmp/a-b/c.json"), "/tmp/a-b/c.json");
        assert_eq!(shell_word("/tmp/my dir"), "'/tmp/my dir'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}

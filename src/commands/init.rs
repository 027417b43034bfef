//! `init DIR`: a working setup for one goal and agent (issue 26): the registry, the
//! experiment config with its two corpora and standing policies, and an example lesson,
//! written under DIR with absolute paths ([`crate::contract::experiment::starter`] builds
//! them); the packet names the files and the three shell commands that ingest the
//! lesson, recall it (with its text) and apply it.
//!
//! Nothing is overwritten: a file that is already there refuses the whole run before
//! anything is written. The runtime root the commands use is `DIR/runtime` (created by
//! the first command that needs it).

use std::path::{Path, PathBuf};

use crate::cli::InitArgs;
use crate::contract::experiment::starter::{
    self, CONFIG_PATH, InitCommands, InitPacket, LEARNINGS_SURFACE, StarterError, StarterSetup,
};
use crate::error::Error;
use crate::io;
use crate::wire::json;
use crate::wire::schema::AlwaysTrue;

use super::context::{Context, Outcome};

/// What `init` is asked to write.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitRequest {
    /// The directory to write into (created when missing); relative to the working
    /// directory.
    pub directory: PathBuf,
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

/// Runs `init`: the files written and the packet that names them and the commands.
pub fn run(request: &InitRequest, ctx: &Context) -> Result<Outcome, Error> {
    let directory = if request.directory.is_absolute() {
        request.directory.clone()
    } else {
        ctx.env.cwd.join(&request.directory)
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
    let value = json::to_value(&packet).map_err(|e| StarterError::Write {
        path: "the init packet".to_owned(),
        reason: e.to_string(),
    })?;
    Ok(Outcome::success(value))
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

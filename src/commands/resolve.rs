//! The resolve step of the shell: what a command needs from the global options and the
//! environment before it calls a contract — the runtime root, the registry file (§1.5),
//! the experiment route read from them, the provider factory rooted there, and the utility
//! ledger's location, checked and opened.
//!
//! The file reads of the experiment route happen here, and so does the JSON parse of
//! what they read; what the documents mean is [`crate::contract::experiment`]'s. It also
//! names the `--input` file of a request ([`InputFile`]) and reads it. A ledger location
//! comes from `--ledger`, then `REWARD_MEMORY_LEDGER` (captured by [`crate::io`]), then
//! `<runtime_root>/reward-memory/utility-ledger.sqlite3`; a SQLite ledger is checked by the
//! trust rule ([`crate::ledger::check_sqlite_trust`]) as soon as its location is resolved,
//! by every command that opens it (`utility-ledger`, `recall --ledger`, `rank-prior
//! --ledger`).

use std::path::PathBuf;

use crate::contract::experiment::{self, ExperimentError, Resolution};
use crate::error::Error;
use crate::io::{self, InputError};
use crate::ledger::{self, LedgerBackend, LedgerError, Location};

use crate::provider::DefaultFactory;

use crate::wire::json::Value;

use super::context::Context;
use crate::output::notes::Notes;

/// The runtime root: `--runtime-root` (with `~` expanded) or `~/.codex/loopx`.
pub fn runtime_root(ctx: &Context) -> PathBuf {
    match &ctx.runtime_root {
        Some(root) => ctx.env.expand_user(&root.to_string_lossy()),
        None => ctx.env.expand_user("~/.codex/loopx"),
    }
}

/// Resolves the registry file: `--registry`, then `$LOOPX_REGISTRY`, then
/// `.loopx/registry.json` in the working directory, then
/// `<runtime_root>/registry.global.json` when that exists, else `.loopx/registry.json`.
pub fn registry_path(ctx: &Context) -> PathBuf {
    if let Some(path) = &ctx.registry {
        return ctx.env.expand_user(&path.to_string_lossy());
    }
    if let Some(path) = &ctx.env.loopx_registry {
        return ctx.env.expand_user(path);
    }
    let local = PathBuf::from(".loopx/registry.json");
    if io::is_file(&ctx.env.cwd.join(&local)) {
        return local;
    }
    let global = runtime_root(ctx).join("registry.global.json");
    if io::is_file(&global) {
        return global;
    }
    local
}

/// Resolves the experiment of `goal_id`/`agent_id` through the registry route of `ctx`
/// (§8.1): the one place that reads the registry and config files. The agent id is
/// checked before the registry is read.
pub fn experiment(
    ctx: &Context,
    goal_id: &str,
    agent_id: &str,
) -> Result<Resolution, ExperimentError> {
    experiment::check_agent_id(agent_id)?;
    let path = registry_path(ctx);
    let bytes = io::read_path(&path).map_err(ExperimentError::RegistryUnreadable)?;
    let registry =
        io::parse_document(&bytes).map_err(|e| ExperimentError::RegistryInvalid(e.to_string()))?;
    experiment::resolve(
        &registry,
        goal_id,
        agent_id,
        // A missing or relative repo resolves against the working directory.
        |repo| ctx.env.expand_user(repo),
        // An unreadable config and one that is not JSON are the same `config_invalid`;
        // the reason goes to stderr.
        |path| {
            let bytes = io::read_path(path).map_err(|e| format!("cannot read it: {e}"))?;
            io::parse_document(&bytes).map_err(|e| format!("it is not JSON: {e}"))
        },
    )
}

/// The JSON input file a request names: `-` is standard input; a larger file than
/// `max_bytes` is refused before it is read (`--max-input-bytes`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// The path, or `-` for standard input.
    pub path: String,
    /// The largest input accepted, in bytes.
    #[serde(default = "default_max_input_bytes")]
    pub max_bytes: u64,
}

fn default_max_input_bytes() -> u64 {
    crate::cli::DEFAULT_MAX_INPUT_BYTES
}

impl From<&crate::cli::InputArgs> for InputFile {
    fn from(args: &crate::cli::InputArgs) -> InputFile {
        InputFile {
            path: args.input.clone(),
            max_bytes: args.input_limit.max_input_bytes,
        }
    }
}

impl InputFile {
    /// The file `path` with the default limit.
    pub fn new(path: impl Into<String>) -> InputFile {
        InputFile {
            path: path.into(),
            max_bytes: default_max_input_bytes(),
        }
    }

    /// Reads the file and requires one JSON object.
    pub fn read_object(&self, ctx: &Context) -> Result<Value, InputError> {
        io::read_input_object(&ctx.env, &self.path, self.max_bytes)
    }
}

/// The provider factory for the runtime root and environment of a command.
pub fn provider_factory(ctx: &Context) -> DefaultFactory {
    DefaultFactory {
        runtime_root: runtime_root(ctx),
        env: ctx.env.clone(),
    }
}

/// The ledger location of a command: `ledger` (a `--ledger` value), else
/// `REWARD_MEMORY_LEDGER`, else the runtime root's SQLite file.
pub fn ledger_location(ledger: Option<&str>, ctx: &Context) -> Result<Location, LedgerError> {
    let expand = |p: &str| ctx.env.expand_user(p);
    match ledger.or(ctx.env.ledger.as_deref()) {
        Some(text) => Location::parse(text, expand),
        None => Ok(Location::Sqlite(ledger::default_sqlite_path(
            &runtime_root(ctx),
        ))),
    }
}

/// An opened ledger and the notes that name it (without credentials) for `--detail`.
pub struct OpenedLedger {
    pub backend: Box<dyn LedgerBackend>,
    pub notes: Notes,
}

/// Opens the ledger of `ledger` (a `--ledger` value; else `REWARD_MEMORY_LEDGER`, else the
/// runtime root's), after the trust rule: a SQLite ledger that is a link, another user's
/// file or writable by others is refused with the path and the fix.
pub fn open_ledger(ledger: Option<&str>, ctx: &Context) -> Result<OpenedLedger, Error> {
    let location = ledger_location(ledger, ctx)?;
    if let Location::Sqlite(path) = &location {
        let default = ledger.is_none() && ctx.env.ledger.is_none();
        let root = default.then(|| runtime_root(ctx));
        ledger::check_sqlite_trust(path, root.as_deref())?;
    }
    let notes = Notes {
        ledger: Some(format!(
            "{} ({})",
            location.public_display(),
            location.backend_name()
        )),
        ..Notes::default()
    };
    Ok(OpenedLedger {
        backend: ledger::open(&location, &ctx.env.pg)?,
        notes,
    })
}

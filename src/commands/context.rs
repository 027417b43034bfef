//! What every handler shares: the [`Context`] of a run (global options and the
//! environment), the [`Outcome`] it returns, and the empty request of the commands that
//! take no arguments ([`NoArguments`]).

use std::path::PathBuf;

use crate::cli::{self, Format};
use crate::error::Exit;
use crate::io;
use crate::output::notes::Notes;
use crate::wire::json::Value;

/// What a command produced: the packet, whether it counts as ok, and what the `--detail`
/// view may show beyond the packet.
#[derive(Debug)]
pub struct Outcome {
    pub packet: Value,
    pub exit: Exit,
    pub notes: Notes,
    /// The packet's JSON output (pretty JSON and a newline), when the command printed it
    /// from typed data because the output format is JSON; `packet` is then `null`.
    pub json: Option<io::OutputBuffer>,
}

impl Outcome {
    /// A packet with an explicit exit.
    pub fn new(packet: Value, exit: Exit) -> Outcome {
        Outcome {
            packet,
            exit,
            notes: Notes::default(),
            json: None,
        }
    }

    /// A packet the command printed itself as `--format json` output, with the packet's
    /// `ok`: exit 0 when it is `true`, else 2 (as [`Outcome::by_ok`]).
    pub fn printed_json(text: io::OutputBuffer, ok: bool) -> Outcome {
        Outcome {
            json: Some(text),
            ..Outcome::new(Value::Null, Exit::by_ok(ok))
        }
    }

    /// A packet that always exits 0.
    pub fn success(packet: Value) -> Outcome {
        Outcome::new(packet, Exit::Success)
    }

    /// The command printed its own output (a stream); nothing more is printed.
    pub fn streamed() -> Outcome {
        Outcome::new(Value::Null, Exit::Success)
    }

    /// Exit 0 when the packet's `ok` is `true`, else 2.
    pub fn by_ok(packet: Value) -> Outcome {
        let ok = packet.get("ok") == Some(&Value::Bool(true));
        Outcome::new(packet, Exit::by_ok(ok))
    }

    /// The same outcome with `notes` for the detail view.
    pub fn with_notes(self, notes: Notes) -> Outcome {
        Outcome { notes, ..self }
    }
}

/// The request of a subcommand that takes no arguments (`architecture`,
/// `corpus-registry`, `evaluate`): an empty object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

impl From<&cli::FormatArg> for NoArguments {
    fn from(_: &cli::FormatArg) -> NoArguments {
        NoArguments {}
    }
}

/// Global options and the environment, resolved once before any command runs.
#[derive(Debug, Clone)]
pub struct Context {
    pub env: io::Env,
    pub registry: Option<PathBuf>,
    pub runtime_root: Option<PathBuf>,
    /// The output format: a command whose packet is large may print JSON itself.
    pub format: Format,
}

impl Context {
    /// The context of a subcommand that takes `--registry`/`--runtime-root` after its
    /// name: those win over the global ones given before it.
    pub fn with_route(&self, route: &cli::RouteArgs) -> Context {
        Context {
            env: self.env.clone(),
            registry: route.registry.clone().or_else(|| self.registry.clone()),
            runtime_root: route
                .runtime_root
                .clone()
                .or_else(|| self.runtime_root.clone()),
            format: self.format,
        }
    }
}

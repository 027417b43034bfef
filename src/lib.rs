//! `reward-memory`: the LoopX Reward Memory contracts as one Rust binary.
//!
//! The binary prints packets that are byte-compatible with `loopx reward-memory`. This
//! crate root only routes: [`run`] resolves the output format, hands typed arguments to
//! one command module and renders the packet it returns.
//!
//! The layers, top to bottom (arrows point down only):
//! * the process shell: [`cli`] (clap types), [`io`] (the only file, stdin, stdout,
//!   environment and clock access), [`output`] (JSON or markdown rendering), [`error`]
//!   (the one exit-code mapping);
//! * the contracts, pure modules taking typed input: [`architecture`], [`registry`],
//!   [`health`], [`candidate`], [`route`], [`experiment`], [`ingest`], [`recall`],
//!   [`evaluation`], [`dogfood`], [`operator`], [`utility`], with [`schema`] describing
//!   their packets; providers under [`provider`] are the edge adapters they call through
//!   a trait;
//! * the wire layer, [`wire`]: Python-compatible JSON, float formatting, timestamps,
//!   digests and text guards.

pub mod architecture;
pub mod candidate;
pub mod cli;
pub mod dogfood;
pub mod error;
pub mod evaluation;
pub mod experiment;
pub mod health;
pub mod ingest;
pub mod io;
pub mod operator;
pub mod output;
pub mod provider;
pub mod recall;
pub mod registry;
pub mod route;
pub mod schema;
pub mod utility;
pub mod wire;

use std::path::PathBuf;

use cli::{Cli, Command, Format};
use error::{Error, Exit};
use wire::json::Value;

/// What a command produced: the packet and whether it counts as ok.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub packet: Value,
    pub exit: Exit,
}

impl Outcome {
    /// A packet that always exits 0.
    pub fn success(packet: Value) -> Outcome {
        Outcome {
            packet,
            exit: Exit::Success,
        }
    }

    /// The command printed its own output (a stream); nothing more is printed.
    pub fn streamed() -> Outcome {
        Outcome {
            packet: Value::Null,
            exit: Exit::Success,
        }
    }

    /// Exit 0 when the packet's `ok` is `true`, else 2.
    pub fn by_ok(packet: Value) -> Outcome {
        let ok = packet.get("ok") == Some(&Value::Bool(true));
        Outcome {
            packet,
            exit: if ok { Exit::Success } else { Exit::NotOk },
        }
    }
}

/// Global options and the environment, resolved once before any command runs.
#[derive(Debug, Clone)]
pub struct Context {
    pub env: io::Env,
    pub registry: Option<PathBuf>,
    pub runtime_root: Option<PathBuf>,
}

/// The `reward_memory_error_v0` packet for a request error.
pub fn error_packet(message: &str) -> Value {
    Value::Object(obj! {
        "ok" => false,
        "schema_version" => "reward_memory_error_v0",
        "status" => "invalid_request",
        "error" => message,
    })
}

fn dispatch(command: Command, ctx: &Context) -> Result<Outcome, Error> {
    match command {
        Command::Architecture(_) => Ok(Outcome::success(architecture::packet())),
        Command::CorpusRegistry(_) => Ok(Outcome::success(registry::reference_registry_packet())),
        Command::HealthCheck(args) => health::command(&args).map(Outcome::success),
        Command::CandidateReview(args) => candidate::command(&args).map(Outcome::success),
        Command::RouteCheck(args) => route::command(&args).map(Outcome::success),
        Command::ExperimentStatus(args) => experiment::command(&args, ctx).map(Outcome::success),
        Command::IngestEvent(args) => ingest::command(&args, ctx).map(Outcome::success),
        Command::Evaluate(_) => evaluation::command().map(Outcome::by_ok),
        Command::DogfoodEvaluate(args) => dogfood::command(&args, ctx).map(Outcome::by_ok),
        Command::OperatorControl(args) => operator::command(&args, ctx).map(Outcome::success),
        Command::UtilityProject(args) => utility::project_command(&args, ctx).map(Outcome::by_ok),
        Command::UtilityObserve(args) => utility::observe_command(&args, ctx),
        Command::UtilityValidate(args) => utility::validate_command(&args, ctx),
        Command::Recall(args) => recall::command::recall(&args, ctx).map(Outcome::success),
        Command::Apply(args) => recall::command::apply(&args, ctx).map(Outcome::success),
        Command::RankPrior(args) => utility::rank_prior_command(&args, ctx).map(Outcome::success),
        Command::RankEvaluate(args) => utility::rank_evaluate::command(&args, ctx),
        Command::UtilityLedger(args) => utility::ledger::command::run(&args, ctx),
    }
}

fn subcommand_format(command: &Command) -> Option<Format> {
    match command {
        Command::Architecture(a) | Command::CorpusRegistry(a) | Command::Evaluate(a) => a.format,
        Command::HealthCheck(a) => a.format.format,
        Command::CandidateReview(a) => a.format.format,
        Command::RouteCheck(a) => a.format.format,
        Command::ExperimentStatus(a) => a.format.format,
        Command::IngestEvent(a) => a.format.format,
        Command::OperatorControl(a) => a.format.format,
        Command::DogfoodEvaluate(a)
        | Command::UtilityProject(a)
        | Command::UtilityObserve(a)
        | Command::UtilityValidate(a) => a.format.format,
        Command::Recall(a) => a.format.format,
        Command::Apply(a) => a.format.format,
        Command::RankPrior(a) => a.format.format,
        Command::RankEvaluate(a) => a.format.format,
        Command::UtilityLedger(a) => match &a.command {
            cli::LedgerCommand::Append(a) => a.format.format,
            cli::LedgerCommand::Project(a) => a.format.format,
            cli::LedgerCommand::Subject(a) => a.format.format,
            cli::LedgerCommand::Export(a) => a.format.format,
            cli::LedgerCommand::Verify(a) => a.format.format,
        },
    }
}

/// Runs one parsed command line and returns the process exit status.
pub fn run(cli: Cli, env: io::Env) -> i32 {
    let format = subcommand_format(&cli.command)
        .or(cli.format)
        .unwrap_or(Format::Markdown);
    let ctx = Context {
        env,
        registry: cli.registry,
        runtime_root: cli.runtime_root,
    };
    let (packet, exit) = match dispatch(cli.command, &ctx) {
        Ok(outcome) if outcome.packet.is_null() => return outcome.exit.code(),
        Ok(outcome) => (outcome.packet, outcome.exit),
        Err(err) if err.is_request_error() => (error_packet(&err.to_string()), err.exit()),
        Err(err) => {
            io::write_stderr_line(&format!("reward-memory: error: {err}"));
            return err.exit().code();
        }
    };
    match io::write_stdout(&output::render(&packet, format)) {
        Ok(()) => exit.code(),
        Err(err) => {
            let err = Error::Output(err);
            io::write_stderr_line(&format!("reward-memory: error: {err}"));
            err.exit().code()
        }
    }
}

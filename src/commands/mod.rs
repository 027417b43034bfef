//! The process shell: the subcommand handlers, one module per subcommand (named after
//! it), their shared resolve step ([`resolve`]: runtime root, registry, experiment route,
//! provider factory) and the run of one command line: [`run`] picks the output format,
//! dispatches the parsed arguments to a handler and prints the [`Outcome`] it returns
//! through [`crate::output`].
//!
//! A handler reads its input (through [`crate::io`]), calls the contracts and the
//! attribution loop with typed values and returns the packet; the shell is the only code
//! besides [`crate::cli`] and `main.rs` that knows clap. Every handler takes a plain
//! request (`<Sub>Request`, serde-deserializable, converted from the clap arguments in the
//! handler's file; [`NoArguments`] for the three commands that take none) and the
//! [`Context`], so that another front end can call them with the same results.

pub mod apply;
pub mod architecture;
pub mod candidate_review;
pub mod completions;
pub mod context;
pub mod corpus_registry;
pub mod dogfood_evaluate;
pub mod evaluate;
pub mod experiment_status;
pub mod health_check;
pub mod ingest_event;
pub mod init;
pub mod man;
pub mod mcp;
pub mod operator_control;
pub mod rank_evaluate;
pub mod rank_prior;
pub mod recall;
pub mod resolve;
pub mod route_check;
pub mod utility_attribute;
pub mod utility_correct;
pub mod utility_ledger;
pub mod utility_observe;
pub mod utility_project;
pub mod utility_validate;

use crate::cli::{self, Cli, Command, Format};
use crate::error::{Error, Exit};
use crate::wire::json::Value;
use crate::{io, output, wire};

pub use crate::output::notes::Notes;
pub use context::{Context, NoArguments, Outcome};

pub use crate::output::error_packet;

/// Hands one parsed subcommand to its handler. `completions` and `man` print text, not a
/// packet: [`run`] answers them before dispatching.
fn dispatch(command: Command, ctx: &Context) -> Result<Outcome, Error> {
    match command {
        Command::Architecture(args) => architecture::run(&(&args).into(), ctx),
        Command::CorpusRegistry(args) => corpus_registry::run(&(&args).into(), ctx),
        Command::HealthCheck(args) => {
            health_check::run(&(&args).into(), &ctx.with_route(&args.route))
        }
        Command::CandidateReview(args) => candidate_review::run(&(&args).into(), ctx),
        Command::RouteCheck(args) => route_check::run(&(&args).into(), ctx),
        Command::ExperimentStatus(args) => {
            experiment_status::run(&(&args).into(), &ctx.with_route(&args.route))
        }
        Command::IngestEvent(args) if ingest_event::bulk::is_bulk(&args) => {
            ingest_event::bulk::run(&(&args).into(), &ctx.with_route(&args.route))
        }
        Command::IngestEvent(args) => {
            ingest_event::run(&(&args).into(), &ctx.with_route(&args.route))
        }
        Command::Evaluate(args) => evaluate::run(&(&args).into(), ctx),
        Command::DogfoodEvaluate(args) => dogfood_evaluate::run(&(&args).into(), ctx),
        Command::OperatorControl(args) => {
            operator_control::run(&(&args).into(), &ctx.with_route(&args.route))
        }
        Command::UtilityProject(args) => utility_project::run(&(&args).into(), ctx),
        Command::UtilityObserve(args) => utility_observe::run(&(&args).into(), ctx),
        Command::UtilityValidate(args) => utility_validate::run(&(&args).into(), ctx),
        Command::Recall(args) => recall::run(&(&args).into(), &ctx.with_route(&args.route)),
        Command::Apply(args) => apply::run(&(&args).into(), &ctx.with_route(&args.route)),
        Command::RankPrior(args) => rank_prior::run(&(&args).into(), &ctx.with_route(&args.route)),
        Command::RankEvaluate(args) => rank_evaluate::run(&(&args).into(), ctx),
        Command::UtilityLedger(args) => utility_ledger::run(&(&args).into(), ctx),
        Command::UtilityAttribute(args) => {
            let ctx = Context {
                runtime_root: args
                    .location
                    .runtime_root
                    .clone()
                    .or_else(|| ctx.runtime_root.clone()),
                ..ctx.clone()
            };
            utility_attribute::run(&(&args).into(), &ctx)
        }
        Command::UtilityCorrect(args) => utility_correct::run(&(&args).into(), ctx),
        Command::Init(args) => init::run(&(&args).into(), ctx),
        // Text commands and the MCP server print no packet; `run` answers them before
        // dispatching.
        Command::Completions(_) | Command::Man(_) | Command::Mcp(_) => {
            Ok(Outcome::success(Value::Null))
        }
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
        Command::UtilityAttribute(a) => a.format.format,
        Command::UtilityCorrect(a) => a.format.format,
        Command::Init(a) => a.format.format,
        Command::UtilityLedger(a) => match &a.command {
            cli::LedgerCommand::Append(a) => a.format.format,
            cli::LedgerCommand::Project(a) => a.format.format,
            cli::LedgerCommand::Subject(a) => a.format.format,
            cli::LedgerCommand::Export(a) => a.format.format,
            cli::LedgerCommand::Verify(a) => a.format.format,
            cli::LedgerCommand::Review(a) => a.format.format,
        },
        Command::Completions(_) | Command::Man(_) | Command::Mcp(_) => None,
    }
}

/// `completions` and `man`: generated text instead of a packet.
fn text_command(command: &Command) -> Option<Result<Vec<u8>, Error>> {
    match command {
        Command::Completions(args) => Some(completions::run(&args.into())),
        Command::Man(args) => Some(man::run(&args.into())),
        _ => None,
    }
}

/// Writes the output; a failure is reported on stderr and exits 1.
fn emit(text: &[u8], exit: Exit) -> i32 {
    match io::write_stdout_bytes(text) {
        Ok(()) => exit.code(),
        Err(err) => {
            let err = Error::Output(err);
            io::write_stderr_line(&format!("reward-memory: error: {err}"));
            err.exit().code()
        }
    }
}

/// Reports a command line that clap did not accept and returns the process exit
/// status: `--help` and `--version` print their text on stdout (exit 0), anything else
/// is one line on stderr ([`cli::argument_error_line`]).
pub fn argument_error(err: &clap::Error) -> i32 {
    if err.use_stderr() {
        io::write_stderr_line(&cli::argument_error_line(err));
        Exit::Usage.code()
    } else {
        let _ = err.print();
        Exit::Success.code()
    }
}

/// Runs one parsed command line and returns the process exit status.
pub fn run(cli: Cli, env: io::Env) -> i32 {
    if let Some(text) = text_command(&cli.command) {
        return match text {
            Ok(bytes) => emit(String::from_utf8_lossy(&bytes).as_bytes(), Exit::Success),
            Err(err) => {
                io::write_stderr_line(&format!("reward-memory: error: {err}"));
                err.exit().code()
            }
        };
    }
    if let Command::Mcp(args) = &cli.command {
        let ctx = Context {
            env,
            registry: cli.registry.clone(),
            runtime_root: cli.runtime_root.clone(),
            format: Format::Json,
        }
        .with_route(&args.route);
        return match mcp::serve(&ctx) {
            Ok(()) => Exit::Success.code(),
            // The session itself failed (not a request): nothing more to print.
            Err(err) => {
                io::write_stderr_line(&format!("reward-memory: error: {err}"));
                Exit::Failure.code()
            }
        };
    }
    let format = subcommand_format(&cli.command)
        .or(cli.format)
        .unwrap_or(Format::Markdown);
    let ctx = Context {
        env,
        registry: cli.registry,
        runtime_root: cli.runtime_root,
        format,
    };
    let outcome = match dispatch(cli.command, &ctx) {
        // The packet printed from typed data (`utility-project --format json`).
        Ok(Outcome {
            json: Some(text),
            exit,
            ..
        }) => {
            let code = emit(text.as_bytes(), exit);
            io::leave_to_exit(text);
            return code;
        }
        // A streaming command (utility-ledger export) already wrote its output.
        Ok(outcome) if outcome.packet.is_null() => return outcome.exit.code(),
        Ok(outcome) => outcome,
        Err(err) if err.is_request_error() => {
            Outcome::new(error_packet(&err.to_string()), err.exit())
        }
        Err(err) => {
            io::write_stderr_line(&format!("reward-memory: error: {err}"));
            return err.exit().code();
        }
    };
    let text = output::render_view(&outcome.packet, &outcome.notes, format, cli.detail);
    let code = emit(text.as_bytes(), outcome.exit);
    for warning in &outcome.notes.warnings {
        io::write_stderr_line(&format!("reward-memory: warning: {warning}"));
    }
    for notice in &outcome.notes.notices {
        io::write_stderr_line(&format!("reward-memory: {notice}"));
    }
    // In markdown a refusal also says why on stderr; stdout keeps the packet.
    if format == Format::Markdown
        && outcome.exit == Exit::NotOk
        && code == Exit::NotOk.code()
        && let Some(message) = output::refusal(&outcome.packet)
    {
        io::write_stderr_line(&format!("reward-memory: {}", wire::keys::bound(&message)));
    }
    io::leave_to_exit((outcome, text));
    code
}

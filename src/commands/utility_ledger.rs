//! `utility-ledger`: the resolve step of its leaves (ledger location, partition, input)
//! and one handler per leaf (`append`, `project`, `subject`, `export`, `verify`) over
//! [`crate::ledger`].
//!
//! The location comes from `--ledger`, then `REWARD_MEMORY_LEDGER` (captured by
//! [`crate::io`]), then `<runtime_root>/reward-memory/utility-ledger.sqlite3`. A SQLite
//! ledger is checked by the trust rule ([`crate::ledger::check_sqlite_trust`]) as soon as its
//! location is resolved, by every command that opens it (`recall --ledger` and
//! `rank-prior --ledger` included). Files and standard streams are reached only through
//! [`crate::io`].

use crate::cli::{
    LedgerAppendArgs, LedgerCommand, LedgerExportArgs, LedgerLocationArg, LedgerProjectArgs,
    LedgerSubjectArgs, LedgerVerifyArgs, PartitionArgs, RouteArgs, UtilityLedgerArgs,
};
use crate::error::Error;
use crate::io;
use crate::utility::observation::memory_ref_digests;
use crate::utility::reducer::{self, ReducerContext};
use crate::wire::credential;
use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt;

use crate::ledger::engine::{self, Paging};
use crate::ledger::packets::{self, MAX_PAGE};
use crate::ledger::{LedgerError, Location, PartitionKey};

use super::{Context, Notes, Outcome};

/// Runs one `utility-ledger` subcommand. A `--runtime-root` given after the leaf wins
/// over the one given before `utility-ledger`.
pub fn run(args: &UtilityLedgerArgs, ctx: &Context) -> Result<Outcome, Error> {
    let location = match &args.command {
        LedgerCommand::Append(a) => &a.location,
        LedgerCommand::Project(a) => &a.location,
        LedgerCommand::Subject(a) => &a.location,
        LedgerCommand::Export(a) => &a.location,
        LedgerCommand::Verify(a) => &a.location,
    };
    let ctx = &ctx.with_route(&RouteArgs {
        registry: None,
        runtime_root: location.runtime_root.clone(),
    });
    match &args.command {
        LedgerCommand::Append(a) => append(a, ctx),
        LedgerCommand::Project(a) => project(a, ctx),
        LedgerCommand::Subject(a) => subject(a, ctx),
        LedgerCommand::Export(a) => export(a, ctx),
        LedgerCommand::Verify(a) => verify(a, ctx),
    }
}

/// The ledger location of a command.
pub fn location(ledger: Option<&str>, ctx: &Context) -> Result<Location, LedgerError> {
    let expand = |p: &str| ctx.env.expand_user(p);
    match ledger.or(ctx.env.ledger.as_deref()) {
        Some(text) => Location::parse(text, expand),
        None => Ok(Location::Sqlite(crate::ledger::default_sqlite_path(
            &super::resolve::runtime_root(ctx),
        ))),
    }
}

/// An opened ledger and the notes that name it (without credentials) for `--detail`.
pub struct Opened {
    pub backend: Box<dyn crate::ledger::LedgerBackend>,
    pub notes: Notes,
}

/// Opens the ledger of `--ledger` (else `REWARD_MEMORY_LEDGER`, else the runtime root's),
/// after the trust rule: a SQLite ledger that is a link, another user's file or writable
/// by others is refused with the path and the fix.
pub fn open(arg: &LedgerLocationArg, ctx: &Context) -> Result<Opened, Error> {
    let location = location(arg.ledger.as_deref(), ctx)?;
    if let Location::Sqlite(path) = &location {
        let default = arg.ledger.is_none() && ctx.env.ledger.is_none();
        let root = default.then(|| super::resolve::runtime_root(ctx));
        crate::ledger::check_sqlite_trust(path, root.as_deref())?;
    }
    let notes = Notes {
        ledger: Some(format!(
            "{} ({})",
            location.public_display(),
            location.backend_name()
        )),
        ..Notes::default()
    };
    Ok(Opened {
        backend: crate::ledger::open(&location, &ctx.env.pg)?,
        notes,
    })
}

fn request(message: impl Into<String>) -> Error {
    Error::from(LedgerError::Request(message.into()))
}

fn append(args: &LedgerAppendArgs, ctx: &Context) -> Result<Outcome, Error> {
    let reader = io::open_input_stream(&ctx.env, &args.input)?;
    let mut opened = open(&args.location, ctx)?;
    let mut records = crate::ledger::input::records(reader);
    let report = engine::append(opened.backend.as_mut(), &mut records)?;
    Ok(Outcome::by_ok(packets::append_receipt(&report)).with_notes(opened.notes))
}

/// The partition and reducer version a command names, before strict validation: the raw
/// values `utility-project` would receive.
struct RawContext {
    scope: Value,
    retrieval_snapshot_ref: Value,
    policy_snapshot_ref: Value,
    reducer_version: Value,
}

const PARTITION_FLAGS: [&str; 6] = [
    "--agent-id",
    "--project-id",
    "--corpus-id",
    "--surface-id",
    "--retrieval-snapshot-ref",
    "--policy-snapshot-ref",
];

fn flag_values(p: &PartitionArgs) -> [Option<&String>; 6] {
    [
        p.agent_id.as_ref(),
        p.project_id.as_ref(),
        p.corpus_id.as_ref(),
        p.surface_id.as_ref(),
        p.retrieval_snapshot_ref.as_ref(),
        p.policy_snapshot_ref.as_ref(),
    ]
}

/// The partition of `--input` or the six flags; `None` when neither was given.
fn raw_context(p: &PartitionArgs, ctx: &Context) -> Result<Option<RawContext>, Error> {
    let values = flag_values(p);
    if let Some(input) = &p.input {
        let value = io::read_input_object(&ctx.env, input, p.input_limit.max_input_bytes)?;
        let empty = Map::new();
        let map = value.as_object().unwrap_or(&empty);
        let required = ["scope", "retrieval_snapshot_ref", "policy_snapshot_ref"];
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|k| !map.contains_key(k))
            .collect();
        if !missing.is_empty() {
            return Err(request(format!(
                "ledger partition input is missing: {}",
                keys::list(missing)
            )));
        }
        let extra: Vec<&str> = map
            .keys()
            .filter(|k| !required.contains(k) && *k != "reducer_version")
            .collect();
        if !extra.is_empty() {
            return Err(request(format!(
                "ledger partition input contains unsupported fields: {}",
                keys::list(extra)
            )));
        }
        let get = |k: &str| map.get(k).cloned().unwrap_or(Value::Null);
        if get("scope").as_object().is_none() {
            return Err(request("scope must be an object"));
        }
        if get("retrieval_snapshot_ref").as_str().is_none() {
            return Err(request("retrieval_snapshot_ref must be a string"));
        }
        if get("policy_snapshot_ref").as_str().is_none() {
            return Err(request("policy_snapshot_ref must be a string"));
        }
        let reducer_version = match map.get("reducer_version") {
            None => Value::from(reducer::DEFAULT_REDUCER_VERSION),
            Some(v @ Value::Str(s)) if !pyfmt::py_strip(s).is_empty() => v.clone(),
            Some(_) => {
                return Err(request(
                    "reducer_version must be a non-empty string when provided",
                ));
            }
        };
        return Ok(Some(RawContext {
            scope: get("scope"),
            retrieval_snapshot_ref: get("retrieval_snapshot_ref"),
            policy_snapshot_ref: get("policy_snapshot_ref"),
            reducer_version,
        }));
    }
    if values.iter().all(Option::is_none) {
        return Ok(None);
    }
    let missing: Vec<&str> = PARTITION_FLAGS
        .iter()
        .zip(values)
        .filter(|(_, v)| v.is_none())
        .map(|(f, _)| *f)
        .collect();
    if !missing.is_empty() {
        return Err(request(format!(
            "a partition needs all six flags (or --input); missing: {}",
            missing.join(", ")
        )));
    }
    let text = |v: Option<&String>| Value::from(v.map(String::as_str).unwrap_or_default());
    let reducer_version = match &p.reducer_version {
        None => Value::from(reducer::DEFAULT_REDUCER_VERSION),
        Some(s) if !pyfmt::py_strip(s).is_empty() => Value::from(s.as_str()),
        Some(_) => {
            return Err(request(
                "reducer_version must be a non-empty string when provided",
            ));
        }
    };
    Ok(Some(RawContext {
        scope: Value::Object(crate::obj! {
            "agent_id" => text(values[0]),
            "project_id" => text(values[1]),
            "corpus_id" => text(values[2]),
            "surface_id" => text(values[3]),
        }),
        retrieval_snapshot_ref: text(values[4]),
        policy_snapshot_ref: text(values[5]),
        reducer_version,
    }))
}

fn strict(raw: &RawContext) -> Result<ReducerContext, crate::wire::text::FieldError> {
    ReducerContext::strict(
        &raw.scope,
        &raw.retrieval_snapshot_ref,
        &raw.policy_snapshot_ref,
        &raw.reducer_version,
    )
}

/// This port's stricter public-safe rule ([`credential`]) on a valid partition: the
/// ledger's packets are ours.
fn credential_free(context: &ReducerContext) -> Result<(), Error> {
    let check = |text: &str, label: &str| credential::check(text, label).map_err(|e| request(e.0));
    context
        .scope
        .credential_free("scope")
        .map_err(|e| request(e.0))?;
    check(&context.retrieval_snapshot_ref, "retrieval_snapshot_ref")?;
    check(&context.policy_snapshot_ref, "policy_snapshot_ref")?;
    check(&context.reducer_version, "reducer_version")
}

fn required_context(p: &PartitionArgs, ctx: &Context) -> Result<ReducerContext, Error> {
    let Some(raw) = raw_context(p, ctx)? else {
        return Err(request(
            "name the partition with --input FILE or the six flags --agent-id, --project-id, \
             --corpus-id, --surface-id, --retrieval-snapshot-ref, --policy-snapshot-ref",
        ));
    };
    let context = strict(&raw).map_err(|e| request(e.0))?;
    credential_free(&context)?;
    Ok(context)
}

fn project(args: &LedgerProjectArgs, ctx: &Context) -> Result<Outcome, Error> {
    let Some(raw) = raw_context(&args.partition, ctx)? else {
        return Err(request(
            "name the partition with --input FILE or the six flags --agent-id, --project-id, \
             --corpus-id, --surface-id, --retrieval-snapshot-ref, --policy-snapshot-ref",
        ));
    };
    let paging = if args.limit.is_some() || args.after.is_some() {
        let limit = args.limit.unwrap_or(MAX_PAGE);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(request(format!("--limit must be between 1 and {MAX_PAGE}")));
        }
        Some(Paging {
            limit,
            after: args.after.clone(),
        })
    } else {
        None
    };
    let context = match strict(&raw) {
        Ok(context) => context,
        Err(_) => {
            // No partition can match an invalid context: print exactly what
            // `utility-project` prints for it (a rejected packet, exit 2).
            let packet = reducer::reduce(&reducer::ProjectionRequest {
                observations: &[],
                scope: &raw.scope,
                retrieval_snapshot_ref: &raw.retrieval_snapshot_ref,
                policy_snapshot_ref: &raw.policy_snapshot_ref,
                reducer_version: &raw.reducer_version,
                previous_projection: None,
            })
            .map_err(Error::from)?;
            return Ok(Outcome::by_ok(packet));
        }
    };
    credential_free(&context)?;
    let mut opened = open(&args.location, ctx)?;
    let packet = engine::project(opened.backend.as_mut(), &context, paging.as_ref())?;
    if packet.get("schema_version").and_then(Value::as_str)
        == Some(packets::PROJECTION_SCHEMA_VERSION)
    {
        crate::ledger::validate::validate_ledger_projection(&packet).map_err(|e| {
            Error::from(LedgerError::Storage(format!(
                "ledger projection failed its readback: {e}"
            )))
        })?;
    }
    Ok(Outcome::by_ok(packet).with_notes(opened.notes))
}

fn subject(args: &LedgerSubjectArgs, ctx: &Context) -> Result<Outcome, Error> {
    let context = required_context(&args.partition, ctx)?;
    if args.memory_ref_digest.is_empty() {
        return Err(request("name at least one --memory-ref-digest"));
    }
    let list = Value::Array(
        args.memory_ref_digest
            .iter()
            .map(|d| Value::from(d.as_str()))
            .collect(),
    );
    let digests = memory_ref_digests(&list, "--memory-ref-digest", 1).map_err(|e| {
        request(e.0.replace(
            "must be a list containing between 1 and 16 opaque references",
            "takes between 1 and 16 digests",
        ))
    })?;
    let mut opened = open(&args.location, ctx)?;
    let packet = engine::subjects(opened.backend.as_mut(), &context, &digests)?;
    Ok(Outcome::success(packet).with_notes(opened.notes))
}

fn export(args: &LedgerExportArgs, ctx: &Context) -> Result<Outcome, Error> {
    let partition = match raw_context(&args.partition, ctx)? {
        None => None,
        Some(raw) => Some(engine::partition_key(
            &strict(&raw).map_err(|e| request(e.0))?,
        )),
    };
    if partition.is_some() && args.after_sequence.is_some() {
        return Err(request(
            "--after-sequence applies to a whole-ledger export, not to one partition",
        ));
    }
    if partition.is_some() && args.salvage {
        return Err(request(
            "--salvage exports the whole ledger: leave out the partition and filter its output",
        ));
    }
    let mut opened = open(&args.location, ctx)?;
    let mut out = io::StdoutStream::new();
    if args.salvage {
        let result = engine::salvage(
            opened.backend.as_mut(),
            args.after_sequence.unwrap_or(0),
            &mut |line| {
                out.write(line)
                    .map_err(|e| LedgerError::Storage(format!("cannot write output: {}", e.kind())))
            },
        );
        let flushed = out.finish();
        let report = result?;
        flushed.map_err(Error::Output)?;
        io::write_stderr_line(&format!(
            "reward-memory: {}",
            packets::salvage_summary(&report)
        ));
        return Ok(Outcome::new(
            Value::Null,
            crate::error::Exit::by_ok(report.complete()),
        ));
    }
    let result = engine::export(
        opened.backend.as_mut(),
        partition.as_ref().map(|k: &PartitionKey| k),
        args.after_sequence.unwrap_or(0),
        &mut |line| {
            out.write(line)
                .map_err(|e| LedgerError::Storage(format!("cannot write output: {}", e.kind())))
        },
    );
    let flushed = out.finish();
    result?;
    flushed.map_err(Error::Output)?;
    Ok(Outcome::streamed())
}

fn verify(args: &LedgerVerifyArgs, ctx: &Context) -> Result<Outcome, Error> {
    let mut opened = open(&args.location, ctx)?;
    let report = engine::verify(opened.backend.as_mut())?;
    Ok(Outcome::by_ok(packets::verify_packet(&report)).with_notes(opened.notes))
}

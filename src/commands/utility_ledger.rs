//! `utility-ledger`: one handler per leaf (`append`, `project`, `subject`, `export`,
//! `verify`) over [`crate::ledger`], each taking a plain typed request
//! ([`LedgerRequest`]: what the command line says, or what another front end such as the
//! MCP server sends), converted from the clap arguments here.
//!
//! A handler resolves first, then calls the ledger: the partition input is read
//! (through [`crate::io`]) and parsed into a [`PartitionInput`], the ledger location
//! resolved and opened ([`super::resolve::open_ledger`]: `--ledger`, then
//! `REWARD_MEMORY_LEDGER`, then `<runtime_root>/reward-memory/utility-ledger.sqlite3`,
//! with the trust rule for a SQLite file). Ledger failures convert into
//! [`crate::error::Error`] through `#[from]`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::cli::{
    DEFAULT_MAX_INPUT_BYTES, LedgerAppendArgs, LedgerCommand, LedgerExportArgs, LedgerLocationArg,
    LedgerProjectArgs, LedgerSubjectArgs, LedgerVerifyArgs, PartitionArgs, RouteArgs,
    UtilityLedgerArgs,
};
use crate::error::{Error, Exit};
use crate::io;
use crate::ledger::engine::{self, Paging, Projected};
use crate::ledger::packets::{self, AppendReceipt, LedgerVerifyPacket, MAX_PAGE, salvage_summary};
use crate::ledger::{LedgerError, PartitionInput, PartitionKey, check_public_safe};
use crate::utility::observation::memory_ref_digests;
use crate::utility::reducer::ReducerContext;
use crate::wire::json::Value;

use super::context::{Context, Outcome};
use super::resolve::open_ledger;

/// Where a ledger command reads or writes: a `--ledger` location (a SQLite file or a
/// `postgres://` URL) and the runtime root of the default one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerLocation {
    #[serde(default)]
    pub ledger: Option<String>,
    /// Wins over the runtime root of the context.
    #[serde(default)]
    pub runtime_root: Option<PathBuf>,
}

/// The partition a ledger read names: an input file holding a
/// `memory_utility_ledger_partition_input` object (`-`: standard input), or the six ids,
/// with the reducer version.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PartitionRequest {
    #[serde(default)]
    pub input: Option<String>,
    /// Largest input file read, in bytes.
    #[serde(default = "default_max_input_bytes")]
    pub max_input_bytes: u64,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub project_id: Option<String>,
    #[serde(default)]
    pub corpus_id: Option<String>,
    #[serde(default)]
    pub surface_id: Option<String>,
    #[serde(default)]
    pub retrieval_snapshot_ref: Option<String>,
    #[serde(default)]
    pub policy_snapshot_ref: Option<String>,
    #[serde(default)]
    pub reducer_version: Option<String>,
}

fn default_max_input_bytes() -> u64 {
    DEFAULT_MAX_INPUT_BYTES
}

impl Default for PartitionRequest {
    fn default() -> PartitionRequest {
        PartitionRequest {
            input: None,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            agent_id: None,
            project_id: None,
            corpus_id: None,
            surface_id: None,
            retrieval_snapshot_ref: None,
            policy_snapshot_ref: None,
            reducer_version: None,
        }
    }
}

/// `append`: the observations of `input` (a file, `-` for standard input) as one batch.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerAppendRequest {
    pub input: String,
    #[serde(default)]
    pub location: LedgerLocation,
}

/// `project`: one partition, the v0 packet within the caps, else (or with `limit` or
/// `after`) a page of the ledger projection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerProjectRequest {
    #[serde(default)]
    pub partition: PartitionRequest,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub after: Option<String>,
    #[serde(default)]
    pub location: LedgerLocation,
}

/// `subject`: the subjects of one partition that contain the given digests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerSubjectRequest {
    #[serde(default)]
    pub partition: PartitionRequest,
    #[serde(default)]
    pub memory_ref_digests: Vec<String>,
    #[serde(default)]
    pub location: LedgerLocation,
}

/// `export`: every delivery (of one partition, or all after a sequence) as JSON Lines
/// on standard output; `salvage` reads a damaged SQLite file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerExportRequest {
    #[serde(default)]
    pub partition: PartitionRequest,
    #[serde(default)]
    pub after_sequence: Option<i64>,
    #[serde(default)]
    pub salvage: bool,
    /// Lines with each delivery's sequence and provenance around its observation.
    #[serde(default)]
    pub provenance: bool,
    #[serde(default)]
    pub location: LedgerLocation,
}

/// `verify`: every materialized state recomputed from the deliveries and compared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerVerifyRequest {
    #[serde(default)]
    pub location: LedgerLocation,
}

/// `review`: the open review proposals of one partition, or of every partition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerReviewRequest {
    #[serde(default)]
    pub partition: PartitionRequest,
    #[serde(default)]
    pub location: LedgerLocation,
}

/// One `utility-ledger` request.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum LedgerRequest {
    Append(LedgerAppendRequest),
    Project(LedgerProjectRequest),
    Subject(LedgerSubjectRequest),
    Export(LedgerExportRequest),
    Verify(LedgerVerifyRequest),
    Review(LedgerReviewRequest),
}

impl LedgerRequest {
    /// Where the request's ledger is.
    pub fn location(&self) -> &LedgerLocation {
        match self {
            LedgerRequest::Append(r) => &r.location,
            LedgerRequest::Project(r) => &r.location,
            LedgerRequest::Subject(r) => &r.location,
            LedgerRequest::Export(r) => &r.location,
            LedgerRequest::Verify(r) => &r.location,
            LedgerRequest::Review(r) => &r.location,
        }
    }
}

impl From<&LedgerLocationArg> for LedgerLocation {
    fn from(arg: &LedgerLocationArg) -> LedgerLocation {
        LedgerLocation {
            ledger: arg.ledger.clone(),
            runtime_root: arg.runtime_root.clone(),
        }
    }
}

impl From<&PartitionArgs> for PartitionRequest {
    fn from(p: &PartitionArgs) -> PartitionRequest {
        PartitionRequest {
            input: p.input.clone(),
            max_input_bytes: p.input_limit.max_input_bytes,
            agent_id: p.agent_id.clone(),
            project_id: p.project_id.clone(),
            corpus_id: p.corpus_id.clone(),
            surface_id: p.surface_id.clone(),
            retrieval_snapshot_ref: p.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: p.policy_snapshot_ref.clone(),
            reducer_version: p.reducer_version.clone(),
        }
    }
}

impl From<&LedgerAppendArgs> for LedgerAppendRequest {
    fn from(a: &LedgerAppendArgs) -> LedgerAppendRequest {
        LedgerAppendRequest {
            input: a.input.clone(),
            location: (&a.location).into(),
        }
    }
}

impl From<&LedgerProjectArgs> for LedgerProjectRequest {
    fn from(a: &LedgerProjectArgs) -> LedgerProjectRequest {
        LedgerProjectRequest {
            partition: (&a.partition).into(),
            limit: a.limit,
            after: a.after.clone(),
            location: (&a.location).into(),
        }
    }
}

impl From<&LedgerSubjectArgs> for LedgerSubjectRequest {
    fn from(a: &LedgerSubjectArgs) -> LedgerSubjectRequest {
        LedgerSubjectRequest {
            partition: (&a.partition).into(),
            memory_ref_digests: a.memory_ref_digest.clone(),
            location: (&a.location).into(),
        }
    }
}

impl From<&LedgerExportArgs> for LedgerExportRequest {
    fn from(a: &LedgerExportArgs) -> LedgerExportRequest {
        LedgerExportRequest {
            partition: (&a.partition).into(),
            after_sequence: a.after_sequence,
            salvage: a.salvage,
            provenance: a.provenance,
            location: (&a.location).into(),
        }
    }
}

impl From<&LedgerVerifyArgs> for LedgerVerifyRequest {
    fn from(a: &LedgerVerifyArgs) -> LedgerVerifyRequest {
        LedgerVerifyRequest {
            location: (&a.location).into(),
        }
    }
}

impl From<&UtilityLedgerArgs> for LedgerRequest {
    fn from(args: &UtilityLedgerArgs) -> LedgerRequest {
        match &args.command {
            LedgerCommand::Append(a) => LedgerRequest::Append(a.into()),
            LedgerCommand::Project(a) => LedgerRequest::Project(a.into()),
            LedgerCommand::Subject(a) => LedgerRequest::Subject(a.into()),
            LedgerCommand::Export(a) => LedgerRequest::Export(a.into()),
            LedgerCommand::Verify(a) => LedgerRequest::Verify(a.into()),
            LedgerCommand::Review(a) => LedgerRequest::Review(LedgerReviewRequest {
                partition: (&a.partition).into(),
                location: (&a.location).into(),
            }),
        }
    }
}

/// Runs one `utility-ledger` request. The request's runtime root (`--runtime-root` after
/// the leaf) wins over the context's (given before `utility-ledger`).
pub fn run(request: &LedgerRequest, ctx: &Context) -> Result<Outcome, Error> {
    let ctx = &ctx.with_route(&RouteArgs {
        registry: None,
        runtime_root: request.location().runtime_root.clone(),
    });
    match request {
        LedgerRequest::Append(r) => append(r, ctx),
        LedgerRequest::Project(r) => project(r, ctx),
        LedgerRequest::Subject(r) => subject(r, ctx),
        LedgerRequest::Export(r) => export(r, ctx),
        LedgerRequest::Verify(r) => verify(r, ctx),
        LedgerRequest::Review(r) => review(r, ctx),
    }
}

fn request(message: impl Into<String>) -> Error {
    Error::from(LedgerError::Request(message.into()))
}

fn append(r: &LedgerAppendRequest, ctx: &Context) -> Result<Outcome, Error> {
    let reader = io::open_input_stream(&ctx.env, &r.input)?;
    let mut opened = open_ledger(r.location.ledger.as_deref(), ctx)?;
    let progress = io::progress::Progress::counter(None, "utility-ledger append: records read");
    let ticker = progress.ticker();
    let records = crate::ledger::input::records(reader).inspect(move |_| ticker.inc(1));
    let report = engine::append(opened.backend.as_mut(), Box::new(records))?;
    let receipt = packets::to_value(&AppendReceipt::new(&report))?;
    Ok(Outcome::by_ok(receipt).with_notes(opened.notes))
}

const PARTITION_FLAGS: [&str; 6] = [
    "--agent-id",
    "--project-id",
    "--corpus-id",
    "--surface-id",
    "--retrieval-snapshot-ref",
    "--policy-snapshot-ref",
];

const NAME_THE_PARTITION: &str = "name the partition with --input FILE or the six flags --agent-id, --project-id, \
     --corpus-id, --surface-id, --retrieval-snapshot-ref, --policy-snapshot-ref";

/// The partition of the input file or the six ids, before the strict rules of a context;
/// `None` when neither was given.
fn partition(p: &PartitionRequest, ctx: &Context) -> Result<Option<PartitionInput>, Error> {
    if let Some(input) = &p.input {
        let value = io::read_input_object(&ctx.env, input, p.max_input_bytes)?;
        return Ok(Some(PartitionInput::from_value(&value)?));
    }
    let ids = [
        p.agent_id.as_deref(),
        p.project_id.as_deref(),
        p.corpus_id.as_deref(),
        p.surface_id.as_deref(),
        p.retrieval_snapshot_ref.as_deref(),
        p.policy_snapshot_ref.as_deref(),
    ];
    if ids.iter().all(Option::is_none) {
        return Ok(None);
    }
    let missing: Vec<&str> = PARTITION_FLAGS
        .iter()
        .zip(ids)
        .filter(|(_, v)| v.is_none())
        .map(|(f, _)| *f)
        .collect();
    if !missing.is_empty() {
        return Err(request(format!(
            "a partition needs all six flags (or --input); missing: {}",
            missing.join(", ")
        )));
    }
    let ids = ids.map(Option::unwrap_or_default);
    Ok(Some(PartitionInput::from_ids(
        ids,
        p.reducer_version.as_deref(),
    )?))
}

/// The strictly valid, public-safe context of a partition the request must name.
fn required_context(p: &PartitionRequest, ctx: &Context) -> Result<ReducerContext, Error> {
    let Some(input) = partition(p, ctx)? else {
        return Err(request(NAME_THE_PARTITION));
    };
    let context = input.context().map_err(|e| request(e.0))?;
    check_public_safe(&context)?;
    Ok(context)
}

fn project(r: &LedgerProjectRequest, ctx: &Context) -> Result<Outcome, Error> {
    let Some(input) = partition(&r.partition, ctx)? else {
        return Err(request(NAME_THE_PARTITION));
    };
    let paging = if r.limit.is_some() || r.after.is_some() {
        let limit = r.limit.unwrap_or(MAX_PAGE);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(request(format!("--limit must be between 1 and {MAX_PAGE}")));
        }
        Some(Paging {
            limit,
            after: r.after.clone(),
        })
    } else {
        None
    };
    let Ok(context) = input.context() else {
        // No partition can match an invalid context: print exactly what
        // `utility-project` prints for it (a rejected packet, exit 2).
        return Ok(Outcome::by_ok(input.empty_projection()?));
    };
    check_public_safe(&context)?;
    let mut opened = open_ledger(r.location.ledger.as_deref(), ctx)?;
    let readback = |e: crate::wire::text::FieldError| {
        LedgerError::Storage(format!("ledger projection failed its readback: {e}"))
    };
    let packet = match engine::project(opened.backend.as_mut(), &context, paging.as_ref())? {
        Projected::V0(packet) | Projected::V1(packet) => packet,
        Projected::Page(page) => {
            let packet = page.into_value()?;
            crate::ledger::validate::validate_ledger_projection(&packet).map_err(readback)?;
            packet
        }
        Projected::PageV1(page) => {
            let packet = page.into_value()?;
            crate::ledger::validate::validate_ledger_projection_v1(&packet).map_err(readback)?;
            packet
        }
    };
    Ok(Outcome::by_ok(packet).with_notes(opened.notes))
}

fn subject(r: &LedgerSubjectRequest, ctx: &Context) -> Result<Outcome, Error> {
    let context = required_context(&r.partition, ctx)?;
    if r.memory_ref_digests.is_empty() {
        return Err(request("name at least one --memory-ref-digest"));
    }
    let list = Value::Array(
        r.memory_ref_digests
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
    let mut opened = open_ledger(r.location.ledger.as_deref(), ctx)?;
    let packet = engine::subjects(opened.backend.as_mut(), &context, &digests)?;
    Ok(Outcome::success(packet.into_value()?).with_notes(opened.notes))
}

fn review(r: &LedgerReviewRequest, ctx: &Context) -> Result<Outcome, Error> {
    let partition = match partition(&r.partition, ctx)? {
        None => None,
        Some(input) => Some(PartitionKey::of_context(
            &input.context().map_err(|e| request(e.0))?,
        )),
    };
    let mut opened = open_ledger(r.location.ledger.as_deref(), ctx)?;
    let queue = engine::review::review_queue(
        opened.backend.as_mut(),
        partition.as_ref(),
        packets::MAX_REVIEW_PROPOSALS,
    )?;
    let packet = packets::LedgerReviewPacket::new(opened.backend.backend_name(), &queue);
    Ok(Outcome::success(packets::to_value(&packet)?).with_notes(opened.notes))
}

fn export(r: &LedgerExportRequest, ctx: &Context) -> Result<Outcome, Error> {
    let partition = match partition(&r.partition, ctx)? {
        None => None,
        Some(input) => Some(PartitionKey::of_context(
            &input.context().map_err(|e| request(e.0))?,
        )),
    };
    if partition.is_some() && r.after_sequence.is_some() {
        return Err(request(
            "--after-sequence applies to a whole-ledger export, not to one partition",
        ));
    }
    if partition.is_some() && r.salvage {
        return Err(request(
            "--salvage exports the whole ledger: leave out the partition and filter its output",
        ));
    }
    if r.salvage && r.provenance {
        return Err(request(
            "--salvage reads rows of a damaged ledger without their provenance: leave out --provenance",
        ));
    }
    let mut opened = open_ledger(r.location.ledger.as_deref(), ctx)?;
    let mut out = io::StdoutStream::new();
    let mut write = |line: &str| {
        out.write(line)
            .map_err(|e| LedgerError::Storage(format!("cannot write output: {}", e.kind())))
    };
    let after = r.after_sequence.unwrap_or(0);
    if r.salvage {
        let result = engine::salvage(opened.backend.as_mut(), after, &mut write);
        let flushed = out.finish();
        let report = result?;
        flushed.map_err(Error::Output)?;
        io::write_stderr_line(&format!("reward-memory: {}", salvage_summary(&report)));
        return Ok(Outcome::new(Value::Null, Exit::by_ok(report.complete())));
    }
    let result = engine::export(
        opened.backend.as_mut(),
        partition.as_ref(),
        after,
        r.provenance,
        &mut write,
    );
    let flushed = out.finish();
    result?;
    flushed.map_err(Error::Output)?;
    Ok(Outcome::streamed())
}

fn verify(r: &LedgerVerifyRequest, ctx: &Context) -> Result<Outcome, Error> {
    let mut opened = open_ledger(r.location.ledger.as_deref(), ctx)?;
    let report = engine::verify(opened.backend.as_mut())?;
    let packet = packets::to_value(&LedgerVerifyPacket::new(&report))?;
    Ok(Outcome::by_ok(packet).with_notes(opened.notes))
}

//! `mcp`: the attribution loop as a Model Context Protocol server over stdio (issue 26),
//! on the official Rust SDK (`rmcp`).
//!
//! Each tool is one subcommand's handler: its arguments are that subcommand's plain
//! request (`<Sub>Request`, the same serde type the CLI converts its flags into, whose
//! JSON Schema is the tool's input schema), it calls the same `run` with the server's
//! [`Context`] (built once, like the CLI's: `--registry`/`--runtime-root` given to `mcp`
//! apply to every call) and answers the same packet as one line of compact JSON text.
//! A refusal (a request error, or a packet the CLI exits 2 on) is a tool error
//! (`isError`) carrying that packet; whatever the CLI fails open on, the tool does too,
//! and its warnings go to stderr as the CLI's do and follow the packet as text.
//!
//! Standard input is the protocol's, so a command that reads `-` gets the document the
//! tool call carries inline (`ingest`'s `event`/`events`, `correct`'s `correction`) or an
//! empty one, never the protocol stream. Tokio lives here only: the server runs on a
//! current-thread runtime and the handlers, which are synchronous, run on it one call at
//! a time; the rest of the crate never sees the runtime.

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde::de::DeserializeOwned;

use crate::error::{Error, Exit};
use crate::io;
use crate::wire::json;

use super::apply::{self, ApplyRequest};
use super::experiment_status::{self, ExperimentStatusRequest};
use super::ingest_event::{self, IngestEventRequest};
use super::rank_evaluate::{self, RankEvaluateRequest};
use super::recall::{self, RecallRequest};
use super::utility_attribute::{self, UtilityAttributeRequest};
use super::utility_correct::{self, UtilityCorrectRequest};
use super::utility_ledger::{self, LedgerRequest, LedgerReviewRequest, LedgerSubjectRequest};
use super::{Context, Outcome, error_packet};

/// What the server tells a client about itself at `initialize`.
const INSTRUCTIONS: &str = "\
Reward Memory: recall memories for a task, record what you did with them, and let verified \
outcomes shape later rankings. The loop: `recall` (goal_id, agent_id, query, query_summary) \
returns results with opaque memory_refs and each memory's text under delivered_content \
(private to you); `apply` records your decision on that recall (recall_session, \
application_id, artifact_ref, outcome applied|ignored|refuted, memory_ref, reasoning_summary, \
current_artifact_verified); `attribute` attributes a verified outcome to the receipt \
(receipt_id from apply, outcome_ref, outcome_status, verified, evidence) and appends the \
observations to the utility ledger; `ingest` stores new memories (one event or a batch); \
`ledger_subject` shows what the ledger learned about memories and `ledger_review` what \
awaits an owner's decision; `rank_evaluate` decides whether \
the utility prior has earned its influence on ranking; `experiment_status` says whether the \
goal's route is available. Every tool answers the packet of the matching reward-memory \
subcommand as JSON text; a refusal is a tool error carrying a reward_memory_error_v0 packet.";

/// One tool: its name, what it does, its input schema and its call.
struct ToolSpec {
    name: &'static str,
    description: &'static str,
    read_only: bool,
    schema: fn() -> JsonObject,
    call: fn(&Context, JsonObject) -> Reply,
}

/// The tools, in the order `tools/list` gives them.
const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "recall",
        description: "Recall active memories of the goal's corpus for a query (the recall \
            subcommand, always with deliver_content: each result's text is in \
            results[].delivered_content.content_summary, private to the caller). Give \
            goal_id, agent_id, query and query_summary (lists, one summary per query). Keep \
            recall_session_ref and the results' memory_ref for apply. A provider problem is \
            status provider_unavailable, not an error (fail-open).",
        read_only: false,
        schema: schema_of::<RecallRequest>,
        call: call_recall,
    },
    ToolSpec {
        name: "apply",
        description: "Record what you did with an earlier recall (the apply subcommand): \
            recall_session (the recall_session_ref), application_id and artifact_ref \
            (public-safe tokens), outcome (applied, ignored or refuted), memory_ref (the \
            opaque refs you used), reasoning_summary, current_artifact_verified (required for \
            applied). Returns the application receipt and its application_receipt_id.",
        read_only: false,
        schema: schema_of::<ApplyRequest>,
        call: call_apply,
    },
    ToolSpec {
        name: "attribute",
        description: "Attribute a verified outcome to the memories an application receipt \
            applied and append the observations to the utility ledger (the \
            utility-attribute subcommand): receipt_id (the application_receipt_id of apply), \
            outcome_ref, outcome_status (succeeded, failed or partial), verified, evidence \
            (KIND:REF:RESULT:DIGEST items, e.g. test:ci-17:passed:<memory_ref_digest>), \
            ledger (a SQLite file or postgres:// URL; default the runtime root's).",
        read_only: false,
        schema: schema_of::<UtilityAttributeRequest>,
        call: call_attribute,
    },
    ToolSpec {
        name: "correct",
        description: "Record an owner correction of one memory's utility under an authorized \
            operator checkpoint (the utility-correct subcommand): the correction document \
            inline as correction (or a file as input), ledger.",
        read_only: false,
        schema: correct_schema,
        call: call_correct,
    },
    ToolSpec {
        name: "ingest",
        description: "Turn a compact feedback event into a guarded memory write (the \
            ingest-event subcommand): one event object as event, or several as events (one \
            receipt each, in order), with goal_id, agent_id and execute true to write to \
            the goal's provider (a dry run otherwise); or a file as input.path.",
        read_only: false,
        schema: ingest_schema,
        call: call_ingest,
    },
    ToolSpec {
        name: "ledger_subject",
        description: "What the utility ledger holds about memories (the utility-ledger subject \
            subcommand): the subjects of one partition (the partition object attribute \
            printed, as partition.input file or its six ids) that contain the given \
            memory_ref_digests, with label, estimate, support and review.",
        read_only: true,
        schema: schema_of::<LedgerSubjectRequest>,
        call: call_ledger_subject,
    },
    ToolSpec {
        name: "ledger_review",
        description: "The utility ledger's review queue (the utility-ledger review \
            subcommand): subjects whose state proposes attenuation (found harmful), \
            quarantine (a conflict) or more attribution, each with its partition, memory \
            digests, support, strongest evidence tier and the commands that resolve it. \
            Give a partition to read one, or nothing to read every partition.",
        read_only: true,
        schema: schema_of::<LedgerReviewRequest>,
        call: call_ledger_review,
    },
    ToolSpec {
        name: "rank_evaluate",
        description: "Held-out evaluation of the bounded utility prior (the rank-evaluate \
            subcommand): simulate, input (episodes file) or ledger with partition (the \
            deployment's own traffic); record stores the verdict in the ledger, where recall \
            with rank_prior finds it. The verdict is qualified or hold (a hold is a tool \
            error, as the CLI exits 2 on it, carrying the verdict packet).",
        read_only: false,
        schema: schema_of::<RankEvaluateRequest>,
        call: call_rank_evaluate,
    },
    ToolSpec {
        name: "experiment_status",
        description: "Resolve the reward-memory experiment of one goal and registered agent \
            (the experiment-status subcommand): whether the route is available, and why not.",
        read_only: true,
        schema: schema_of::<ExperimentStatusRequest>,
        call: call_experiment_status,
    },
];

/// The names of the tools, in `tools/list` order.
pub fn tool_names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

/// A tool's answer: the packets (one per command run), whether the call failed as the
/// CLI would have exited non-zero, and the run's warnings.
struct Reply {
    packets: Vec<String>,
    is_error: bool,
    warnings: Vec<String>,
}

impl Reply {
    /// A refusal before any command ran: the error packet.
    fn refused(message: &str) -> Reply {
        Reply {
            packets: vec![json::to_compact_line(&error_packet(message))],
            is_error: true,
            warnings: Vec::new(),
        }
    }

    /// No packet yet.
    fn empty() -> Reply {
        Reply {
            packets: Vec::new(),
            is_error: false,
            warnings: Vec::new(),
        }
    }

    /// The answer of one command run, as the CLI would print and exit it.
    fn of(result: Result<Outcome, Error>) -> Reply {
        let mut reply = Reply::empty();
        reply.push(result);
        reply
    }

    fn push(&mut self, result: Result<Outcome, Error>) {
        match result {
            Ok(Outcome {
                json: Some(text),
                exit,
                ..
            }) => {
                let text = String::from_utf8_lossy(text.as_bytes());
                match json::parse(&text) {
                    Ok(packet) => self.packets.push(json::to_compact_line(&packet)),
                    Err(_) => self.packets.push(text.into_owned()),
                }
                self.is_error |= exit != Exit::Success;
            }
            Ok(outcome) => {
                self.packets.push(json::to_compact_line(&outcome.packet));
                self.is_error |= outcome.exit != Exit::Success;
                self.warnings.extend(outcome.notes.warnings);
            }
            Err(err) if err.is_request_error() => {
                self.packets
                    .push(json::to_compact_line(&error_packet(&err.to_string())));
                self.is_error = true;
            }
            Err(err) => {
                self.packets.push(format!("reward-memory: error: {err}"));
                self.is_error = true;
            }
        }
    }

    fn into_result(self) -> CallToolResult {
        for warning in &self.warnings {
            io::write_stderr_line(&format!("reward-memory: warning: {warning}"));
        }
        let mut content: Vec<ContentBlock> = self
            .packets
            .into_iter()
            .map(|p| ContentBlock::text(p.trim_end().to_owned()))
            .collect();
        content.extend(
            self.warnings
                .iter()
                .map(|w| ContentBlock::text(format!("reward-memory: warning: {w}"))),
        );
        if self.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
    }
}

/// The input schema of a request type, as a JSON Schema object (draft 2020-12).
fn schema_of<T: schemars::JsonSchema + 'static>() -> JsonObject {
    (*schema_for_type::<T>()).clone()
}

/// The schema of `T` with inline document properties that stand in for `input`.
fn with_inline<T: schemars::JsonSchema + 'static>(
    inline: &[(&str, serde_json::Value)],
) -> JsonObject {
    let mut schema = schema_of::<T>();
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in inline {
            properties.insert((*name).to_owned(), property.clone());
        }
    }
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        required.retain(|r| r.as_str() != Some("input"));
    }
    schema
}

fn ingest_schema() -> JsonObject {
    with_inline::<IngestEventRequest>(&[
        (
            "event",
            serde_json::json!({
                "type": "object",
                "description": "One compact feedback event (or full public fixture), inline instead of input",
            }),
        ),
        (
            "events",
            serde_json::json!({
                "type": "array",
                "items": {"type": "object"},
                "description": "Several events, ingested one after the other (one receipt each)",
            }),
        ),
    ])
}

fn correct_schema() -> JsonObject {
    with_inline::<UtilityCorrectRequest>(&[(
        "correction",
        serde_json::json!({
            "type": "object",
            "description": "The memory_utility_correction_input document, inline instead of input",
        }),
    )])
}

/// The arguments as the request `T`, or the refusal saying what does not fit.
fn parse<T: DeserializeOwned>(tool: &str, args: JsonObject) -> Result<T, Reply> {
    serde_json::from_value(serde_json::Value::Object(args))
        .map_err(|e| Reply::refused(&format!("the arguments of tool {tool} do not fit: {e}")))
}

/// `ctx` whose standard input is `document` (the inline document a tool call carries).
fn with_stdin(ctx: &Context, document: &serde_json::Value) -> Context {
    let mut ctx = ctx.clone();
    ctx.env.stdin = Some(Arc::from(document.to_string().into_bytes()));
    ctx
}

fn call_recall(ctx: &Context, args: JsonObject) -> Reply {
    match parse::<RecallRequest>("recall", args) {
        Ok(mut request) => {
            // The agent needs the text to decide: always delivered, never stored.
            request.deliver_content = true;
            Reply::of(recall::run(&request, ctx))
        }
        Err(reply) => reply,
    }
}

fn call_apply(ctx: &Context, args: JsonObject) -> Reply {
    match parse::<ApplyRequest>("apply", args) {
        Ok(request) => Reply::of(apply::run(&request, ctx)),
        Err(reply) => reply,
    }
}

fn call_attribute(ctx: &Context, args: JsonObject) -> Reply {
    match parse::<UtilityAttributeRequest>("attribute", args) {
        Ok(request) => Reply::of(utility_attribute::run(&request, ctx)),
        Err(reply) => reply,
    }
}

/// Takes the inline document `name` out of `args`; `input` then reads it as `input_value`.
fn take_inline(
    args: &mut JsonObject,
    name: &str,
    input_value: serde_json::Value,
) -> Result<Option<serde_json::Value>, String> {
    let Some(document) = args.remove(name) else {
        return Ok(None);
    };
    if args.contains_key("input") {
        return Err(format!("give {name} or input, not both"));
    }
    args.insert("input".to_owned(), input_value);
    Ok(Some(document))
}

fn call_correct(ctx: &Context, mut args: JsonObject) -> Reply {
    let inline = match take_inline(&mut args, "correction", serde_json::json!("-")) {
        Ok(inline) => inline,
        Err(message) => return Reply::refused(&message),
    };
    let request = match parse::<UtilityCorrectRequest>("correct", args) {
        Ok(request) => request,
        Err(reply) => return reply,
    };
    match inline {
        Some(document) => Reply::of(utility_correct::run(&request, &with_stdin(ctx, &document))),
        None => Reply::of(utility_correct::run(&request, ctx)),
    }
}

fn call_ingest(ctx: &Context, mut args: JsonObject) -> Reply {
    if args.contains_key("event") && args.contains_key("events") {
        return Reply::refused("give event or events, not both");
    }
    let stdin = serde_json::json!({"path": "-"});
    let inline = match take_inline(&mut args, "event", stdin.clone()) {
        Ok(Some(event)) => Some(vec![event]),
        Ok(None) => match take_inline(&mut args, "events", stdin) {
            Ok(Some(serde_json::Value::Array(events))) if !events.is_empty() => {
                Some(events.to_vec())
            }
            Ok(Some(_)) => return Reply::refused("events must be a non-empty list of events"),
            Ok(None) => None,
            Err(message) => return Reply::refused(&message),
        },
        Err(message) => return Reply::refused(&message),
    };
    let request = match parse::<IngestEventRequest>("ingest", args) {
        Ok(request) => request,
        Err(reply) => return reply,
    };
    let Some(documents) = inline else {
        return Reply::of(ingest_event::run(&request, ctx));
    };
    let mut reply = Reply::empty();
    for document in &documents {
        reply.push(ingest_event::run(&request, &with_stdin(ctx, document)));
    }
    reply
}

fn call_ledger_subject(ctx: &Context, args: JsonObject) -> Reply {
    match parse::<LedgerSubjectRequest>("ledger_subject", args) {
        Ok(request) => Reply::of(utility_ledger::run(&LedgerRequest::Subject(request), ctx)),
        Err(reply) => reply,
    }
}

fn call_ledger_review(ctx: &Context, args: JsonObject) -> Reply {
    match parse::<LedgerReviewRequest>("ledger_review", args) {
        Ok(request) => Reply::of(utility_ledger::run(&LedgerRequest::Review(request), ctx)),
        Err(reply) => reply,
    }
}

fn call_rank_evaluate(ctx: &Context, args: JsonObject) -> Reply {
    match parse::<RankEvaluateRequest>("rank_evaluate", args) {
        Ok(request) => Reply::of(rank_evaluate::run(&request, ctx)),
        Err(reply) => reply,
    }
}

fn call_experiment_status(ctx: &Context, args: JsonObject) -> Reply {
    match parse::<ExperimentStatusRequest>("experiment_status", args) {
        Ok(request) => Reply::of(experiment_status::run(&request, ctx)),
        Err(reply) => reply,
    }
}

/// The server: the run's context and the tool list, built once.
struct Server {
    ctx: Context,
    tools: Vec<Tool>,
}

impl Server {
    fn new(ctx: Context) -> Server {
        let tools = TOOLS
            .iter()
            .map(|spec| {
                let mut annotations = ToolAnnotations::new();
                annotations.read_only_hint = Some(spec.read_only);
                annotations.open_world_hint = Some(false);
                Tool::new(spec.name, spec.description, Arc::new((spec.schema)()))
                    .with_annotations(annotations)
            })
            .collect();
        Server { ctx, tools }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "reward-memory",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(spec) = TOOLS.iter().find(|t| t.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool {}: the tools are {}",
                    request.name,
                    tool_names().join(", ")
                ),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        Ok((spec.call)(&self.ctx, args).into_result().into())
    }
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the MCP server's runtime could not start: {0}")]
    Runtime(std::io::Error),
    #[error("the MCP session could not start: {0}")]
    Start(String),
    #[error("the MCP session ended with an error: {0}")]
    Session(String),
}

/// Serves the tools over stdin/stdout until the client closes the connection.
pub fn serve(ctx: &Context) -> Result<(), McpError> {
    // The server's stderr is its client's log: no progress lines in it.
    crate::io::progress::suppress();
    let mut ctx = ctx.clone();
    // `-` never reads the protocol stream.
    ctx.env.stdin = Some(Arc::from(Vec::new()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    runtime.block_on(async move {
        let service = Server::new(ctx)
            .serve(rmcp::transport::io::stdio_pipes())
            .await
            .map_err(|e| McpError::Start(e.to_string()))?;
        service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| McpError::Session(e.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::Value;

    /// The value of the first packet of a reply.
    fn packet_of(reply: &Reply) -> Value {
        json::parse(reply.packets[0].trim_end()).unwrap_or(Value::Null)
    }

    fn ctx() -> Context {
        Context {
            env: io::Env::default(),
            registry: None,
            runtime_root: None,
            format: crate::output::Format::Json,
        }
    }

    #[test]
    fn the_loop_tools_are_listed_with_object_schemas() {
        let names = tool_names();
        for name in ["recall", "apply", "attribute", "ingest", "correct"] {
            assert!(names.contains(&name), "{name}");
        }
        for spec in TOOLS {
            let schema = (spec.schema)();
            assert_eq!(schema.get("type"), Some(&serde_json::json!("object")));
        }
        let ingest = ingest_schema();
        let required = ingest.get("required").cloned().unwrap_or_default();
        assert!(!required.to_string().contains("\"input\""), "{required}");
        assert!(ingest["properties"].get("events").is_some());
    }

    #[test]
    fn arguments_that_do_not_fit_are_a_refusal_with_the_error_packet() {
        let mut args = JsonObject::new();
        args.insert("goal_idd".to_owned(), serde_json::json!("g"));
        let reply = call_recall(&ctx(), args);
        assert!(reply.is_error);
        let packet = packet_of(&reply);
        assert_eq!(
            packet.get("schema_version").and_then(Value::as_str),
            Some("reward_memory_error_v0")
        );
        let error = packet.get("error").and_then(Value::as_str).unwrap_or("");
        assert!(error.contains("goal_idd"), "{error}");
    }

    #[test]
    fn an_inline_document_and_an_input_file_together_are_refused() {
        let mut args = JsonObject::new();
        args.insert("event".to_owned(), serde_json::json!({}));
        args.insert("input".to_owned(), serde_json::json!({"path": "e.json"}));
        let reply = call_ingest(&ctx(), args);
        assert!(reply.is_error);
        let mut args = JsonObject::new();
        args.insert("event".to_owned(), serde_json::json!({}));
        args.insert("events".to_owned(), serde_json::json!([{}]));
        assert!(call_ingest(&ctx(), args).is_error);
    }

    #[test]
    fn standard_input_of_a_tool_call_is_its_inline_document() {
        let ctx = with_stdin(&ctx(), &serde_json::json!({"a": 1}));
        let bytes = io::read_bytes(&ctx.env, "-", 1024).expect("bytes");
        assert_eq!(bytes, br#"{"a":1}"#);
    }
}

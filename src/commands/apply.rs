//! `apply`: records the agent's decision about an earlier recall (§10.5) as an
//! application receipt. The decision comes from the request's fields or from its
//! `--input` object ([`crate::recall::decision`]); the opaque refs are mapped back through
//! the recall session that `recall` stored under the runtime root, read back and checked
//! by the session store ([`crate::runtime::sessions`]). A ref the recall did not return, an
//! unknown, expired, untrusted or modified session are request errors.
//!
//! The handler takes a plain [`ApplyRequest`]; the input file and the session are read
//! before the decision is recorded. With a ledger configured (`--ledger` or
//! `REWARD_MEMORY_LEDGER`) the apply event goes to the ledger's traffic log
//! ([`crate::recall::traffic`]); a failure there is a warning, never a failed apply.

use crate::cli::ApplyArgs;
use crate::error::Error;
use crate::io;
use crate::recall::decision::{self, ApplyError, ApplyOutcome, Decision};
use crate::recall::traffic;
use crate::wire::json::Value;

use super::context::{Context, Outcome};
use super::resolve;

/// What `apply` is asked to record: the decision's fields, or an `input` file holding
/// them as one object.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyRequest {
    /// All the fields below as one JSON object file; `-` reads standard input.
    pub input: Option<String>,
    /// The `recall_session_ref` printed by recall.
    pub recall_session: Option<String>,
    /// Public-safe token naming this application (part of the receipt id).
    pub application_id: Option<String>,
    /// Public-safe token of the artifact the memory was applied to.
    pub artifact_ref: Option<String>,
    /// What the agent did with the recalled memories.
    pub outcome: Option<ApplyOutcome>,
    /// Opaque `memory_ref`s from the recall's results.
    #[serde(default)]
    pub memory_ref: Vec<String>,
    /// Compact public-safe reason for the decision (at most 500 characters).
    pub reasoning_summary: Option<String>,
    /// The current artifact was verified after applying (required for applied).
    #[serde(default)]
    pub current_artifact_verified: bool,
    /// Largest JSON input accepted, in bytes.
    #[serde(default = "default_max_input_bytes")]
    pub max_input_bytes: u64,
    /// A utility ledger location (`--ledger`; empty: the default): with it (or
    /// `REWARD_MEMORY_LEDGER`) the receipt is also queued for `utility-attribute
    /// --pending` and the apply event is appended to the ledger's traffic log.
    #[serde(default)]
    pub ledger: Option<String>,
}

fn default_max_input_bytes() -> u64 {
    crate::cli::DEFAULT_MAX_INPUT_BYTES
}

impl From<&ApplyArgs> for ApplyRequest {
    fn from(args: &ApplyArgs) -> ApplyRequest {
        ApplyRequest {
            input: args.input.clone(),
            recall_session: args.recall_session.clone(),
            application_id: args.application_id.clone(),
            artifact_ref: args.artifact_ref.clone(),
            outcome: args.outcome,
            memory_ref: args.memory_ref.clone(),
            reasoning_summary: args.reasoning_summary.clone(),
            current_artifact_verified: args.current_artifact_verified,
            max_input_bytes: args.input_limit.max_input_bytes,
            ledger: args.ledger.clone(),
        }
    }
}

fn decision_from_fields(request: &ApplyRequest) -> Result<Decision, ApplyError> {
    let missing = ApplyError::MissingFlag;
    Ok(Decision {
        session_ref: request
            .recall_session
            .clone()
            .ok_or_else(|| missing("--recall-session"))?,
        application_id: request
            .application_id
            .clone()
            .ok_or_else(|| missing("--application-id"))?,
        artifact_ref: request
            .artifact_ref
            .clone()
            .ok_or_else(|| missing("--artifact-ref"))?,
        outcome: request.outcome.ok_or_else(|| missing("--outcome"))?,
        memory_refs: request.memory_ref.clone(),
        reasoning_summary: request
            .reasoning_summary
            .clone()
            .ok_or_else(|| missing("--reasoning-summary"))?,
        current_artifact_verified: request.current_artifact_verified,
    })
}

/// Runs `apply` on the context with its route applied: the application packet, exit 0.
pub fn run(request: &ApplyRequest, ctx: &Context) -> Result<Outcome, Error> {
    let decision = match &request.input {
        Some(spec) => decision::decision_from_value(&io::read_input_object(
            &ctx.env,
            spec,
            request.max_input_bytes,
        )?)?,
        None => decision_from_fields(request)?,
    };
    let summary = decision::check_decision(&decision)?;
    let root = resolve::runtime_root(ctx);
    let stored = crate::runtime::sessions::load(&root, &decision.session_ref)?;
    let packet = decision::application(&decision, &summary, &stored)?;
    let queue = request.ledger.is_some() || ctx.env.ledger.is_some();
    let mut warnings = keep_receipt(&root, &packet, queue);
    if queue && let Some(warning) = log_apply(request, ctx, &packet) {
        warnings.push(warning);
    }
    Ok(Outcome::success(packet).with_notes(super::Notes {
        warnings,
        ..super::Notes::default()
    }))
}

/// Appends the apply event to the configured ledger's traffic log (issue 22); the warning
/// when it was not logged (fail-open: the packet is printed all the same).
fn log_apply(request: &ApplyRequest, ctx: &Context, packet: &Value) -> Option<String> {
    let Some(event) = traffic::apply_event(packet, &io::utc_now_iso()) else {
        return Some(
            "the apply event was not logged: the receipt names no agent or project (a recall of the explicit form), so it has no utility partition"
                .to_owned(),
        );
    };
    let explicit = request.ledger.as_deref().filter(|l| !l.is_empty());
    let result = resolve::open_ledger(explicit, ctx).and_then(|mut opened| {
        crate::ledger::traffic::append(opened.backend.as_mut(), &[event.to_append()])
            .map_err(Error::from)
    });
    result
        .err()
        .map(|err| format!("the apply event was not logged: {err}"))
}

/// Stores the receipt the packet printed (and, when `queue`, its pending attribution)
/// under the runtime root, for `utility-attribute --receipt-id` and `--pending`. Fails
/// open: the packet is printed unchanged and a failure is a warning naming the fix.
fn keep_receipt(root: &std::path::Path, packet: &Value, queue: bool) -> Vec<String> {
    let (Some(id), Some(receipt)) = (
        packet.get("application_receipt_id").and_then(Value::as_str),
        packet.get("receipt").filter(|r| r.as_object().is_some()),
    ) else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    if let Err(err) = crate::runtime::receipts::store_receipt(root, id, receipt) {
        warnings.push(format!("the application receipt was not stored: {err}"));
        return warnings;
    }
    if queue {
        let window = crate::attribution::pending::DEFAULT_PENDING_WINDOW_SECONDS;
        let stored = crate::attribution::PendingEntry::new(id, &io::utc_now_iso(), window)
            .ok_or_else(|| "the clock reading is not a timestamp".to_owned())
            .and_then(|entry| {
                crate::runtime::receipts::store_pending(root, &entry).map_err(|e| e.to_string())
            });
        if let Err(err) = stored {
            warnings.push(format!("the pending attribution was not recorded: {err}"));
        }
    }
    warnings
}

//! `operator-control`: reads `{reviewed_record, corpus, operator_checkpoint}` and prepares
//! an authorized edit or retirement ([`crate::contract::operator`]), writing nothing; with
//! `--execute` it performs the control on the goal's configured store
//! ([`crate::contract::lifecycle`], [`crate::provider::embedded::lifecycle`]) and prints
//! the `reward_memory_lifecycle_receipt_v0` receipt.
//!
//! The execute path is the shell's: it resolves the goal's experiment route, finds the
//! target record in the embedded store, reads the clock (`--observed-at` overrides it)
//! and performs the change. A provider other than the embedded store is
//! `provider_lifecycle_contract_absent` with nothing written.

use std::time::Duration;

use crate::cli::OperatorControlArgs;
use crate::contract::lifecycle::{self, LifecyclePlan, Refusal, StoreResult};
use crate::contract::operator::{self, ControlRequest, OperatorAction};
use crate::error::Error;
use crate::io;
use crate::provider::ProviderConfig;
use crate::provider::embedded::{self, lifecycle as store_lifecycle};
use crate::recall::{normalize_binding, timeout_seconds};
use crate::wire::digest::opaque_provider_ref;
use crate::wire::json::Value;

use super::context::{Context, Outcome};
use super::resolve::{self, InputFile};

/// The control `operator-control` prepares, and the file with the record it targets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorControlRequest {
    /// `{"reviewed_record", "corpus", "operator_checkpoint"}` JSON.
    pub input: InputFile,
    pub action: OperatorAction,
    /// Public-safe reference of this control.
    pub control_ref: String,
    /// Compact reason for the control.
    pub reasoning_summary: String,
    /// Replacement content summary (an edit needs it).
    #[serde(default)]
    pub edited_content_summary: Option<String>,
    /// `--execute`: the goal whose configured corpus the control changes.
    #[serde(default)]
    pub goal_id: Option<String>,
    /// `--execute`: the allowlisted agent id of that goal.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Perform the control on the configured store and read it back.
    #[serde(default)]
    pub execute: bool,
    /// The aware ISO timestamp of the change (default: now).
    #[serde(default)]
    pub observed_at: Option<String>,
}

impl From<&OperatorControlArgs> for OperatorControlRequest {
    fn from(args: &OperatorControlArgs) -> OperatorControlRequest {
        OperatorControlRequest {
            input: InputFile {
                path: args.input.clone(),
                max_bytes: args.input_limit.max_input_bytes,
            },
            action: args.action,
            control_ref: args.control_ref.clone(),
            reasoning_summary: args.reasoning_summary.clone(),
            edited_content_summary: args.edited_content_summary.clone(),
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
            execute: args.execute,
            observed_at: args.observed_at.clone(),
        }
    }
}

/// Runs `operator-control`: the control packet, exit 0.
pub fn run(request: &OperatorControlRequest, ctx: &Context) -> Result<Outcome, Error> {
    let source = request.input.read_object(ctx)?;
    let control = ControlRequest {
        action: request.action,
        control_ref: &request.control_ref,
        reasoning_summary: &request.reasoning_summary,
        edited_content_summary: request.edited_content_summary.as_deref(),
    };
    if request.execute {
        return execute(request, &source, &control, ctx);
    }
    Ok(Outcome::success(operator::control_input(
        &source, &control,
    )?))
}

/// `--execute`: the plan against the goal's configured corpus, then the store change.
fn execute(
    request: &OperatorControlRequest,
    source: &Value,
    control: &ControlRequest<'_>,
    ctx: &Context,
) -> Result<Outcome, Error> {
    let (Some(goal), Some(agent)) = (request.goal_id.as_deref(), request.agent_id.as_deref())
    else {
        return Err(Error::Field(crate::wire::text::FieldError::new(
            "operator-control --execute needs --goal-id and --agent-id",
        )));
    };
    let refused = |refusal: Refusal| {
        Ok(Outcome::by_ok(lifecycle::refusal_receipt(
            &refusal, control, goal, agent,
        )))
    };
    let resolution = resolve::experiment(ctx, goal, agent)?;
    let Some(config) = resolution.config else {
        return refused(Refusal {
            reason_code: "experiment_unavailable",
            message: format!(
                "the Reward Memory experiment is unavailable for this agent: {}",
                resolution.status_name()
            ),
        });
    };
    let input_corpus = source
        .get("corpus")
        .and_then(|c| c.get("corpus_id"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(entry) = config.corpus(input_corpus) else {
        return refused(Refusal {
            reason_code: "operator_control_corpus_not_configured",
            message: format!(
                "the goal's experiment config declares no corpus {input_corpus:?}; name one of its corpora"
            ),
        });
    };
    let observed_at = request.observed_at.clone().unwrap_or_else(io::utc_now_iso);
    let plan = match lifecycle::plan(source, control, &entry.corpus, &observed_at) {
        Ok(plan) => plan,
        Err(refusal) => return refused(refusal),
    };
    let binding = normalize_binding(&entry.provider_binding, &entry.corpus)?;
    let text = |key: &str| {
        binding
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (provider_id, namespace, scope_ref) =
        (text("provider_id"), text("namespace"), text("scope_ref"));
    let mut result = StoreResult {
        status: "provider_unavailable",
        reason_code: Some("provider_lifecycle_contract_absent"),
        provider_id: provider_id.clone(),
        target_memory_ref: None,
        successor_memory_ref: None,
        prior_state: None,
        result_state: None,
        lifecycle_sequence: None,
        write_performed: false,
        deduplicated: false,
        exact_readback_verified: false,
        cause_code: None,
        observed_at,
    };
    if provider_id == embedded::PROVIDER_ID {
        let store = resolve::provider_factory(ctx)
            .embedded_store(&ProviderConfig::from_binding(&entry.provider_binding));
        let timeout = Duration::from_secs_f64(timeout_seconds(&binding).clamp(1.0, 120.0));
        perform(&store, &plan, &namespace, &scope_ref, timeout, &mut result);
    }
    let packet = lifecycle::receipt(&plan, goal, agent, &result);
    Ok(Outcome::by_ok(packet))
}

/// Finds the target in the store and performs the plan, filling `result`.
fn perform(
    store: &embedded::EmbeddedStore,
    plan: &LifecyclePlan,
    namespace: &str,
    scope_ref: &str,
    timeout: Duration,
    result: &mut StoreResult,
) {
    let opaque = |r: &str| opaque_provider_ref(embedded::PROVIDER_ID, namespace, r);
    let target = match store_lifecycle::find_candidate(
        store,
        namespace,
        scope_ref,
        &plan.target_candidate_ref,
        timeout,
    ) {
        Ok(Some((target_ref, _))) => target_ref,
        Ok(None) => {
            result.status = "refused";
            result.reason_code = Some("lifecycle_target_not_found");
            return;
        }
        Err(cause) => {
            result.reason_code = Some(cause.reason_code());
            result.cause_code = Some(cause.code());
            return;
        }
    };
    let successor = plan.successor.as_ref().map(|(candidate_ref, bytes)| {
        let name = lifecycle::successor_file_name(&plan.control_ref, candidate_ref);
        (
            format!("{}/{name}", scope_ref.trim_end_matches('/')),
            bytes.clone(),
        )
    });
    let change = store_lifecycle::LifecycleChange {
        namespace: namespace.to_owned(),
        target_ref: target.clone(),
        action: match plan.change {
            "revoke" => store_lifecycle::LifecycleAction::Revoke,
            "supersede" => store_lifecycle::LifecycleAction::Supersede,
            _ => store_lifecycle::LifecycleAction::Retire,
        },
        control_ref: plan.control_ref.clone(),
        operator_ref: plan.operator_ref.clone(),
        authority_ref: plan.authority_ref.clone(),
        successor: successor.clone(),
        observed_at: result.observed_at.clone(),
    };
    let outcome = store_lifecycle::apply(store, &change, timeout);
    result.status = outcome.status;
    result.reason_code = outcome.reason_code;
    result.cause_code = outcome.cause_code;
    result.target_memory_ref = Some(opaque(&target));
    result.successor_memory_ref = successor.map(|(r, _)| opaque(&r));
    result.prior_state = outcome.prior_state;
    result.result_state = outcome.result_state;
    result.lifecycle_sequence = outcome.sequence;
    result.write_performed = outcome.write_performed;
    result.deduplicated = outcome.deduplicated;
    result.exact_readback_verified = outcome.exact_readback_verified;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let argv = [
            "operator-control",
            "--input",
            "control.json",
            "--action",
            "retire",
            "--control-ref",
            "control:1",
            "--reasoning-summary",
            "Outdated.",
        ];
        let Command::OperatorControl(args) = parse_command(&argv) else {
            panic!("operator-control");
        };
        let json: OperatorControlRequest = serde_json::from_str(
            r#"{"input": {"path": "control.json"}, "action": "retire",
                "control_ref": "control:1", "reasoning_summary": "Outdated."}"#,
        )
        .expect("request");
        assert_eq!(OperatorControlRequest::from(&args), json);
        assert_eq!(json.action, OperatorAction::Retire);
    }
}

//! The agent's `apply` decision (§10.5 through the binary): its outcome
//! ([`ApplyOutcome`]), its fields from an `--input` object, the checks that need no
//! session, and the application packet with its receipt id for a decision on a live
//! session. Pure: the `apply` handler of the shell reads the input and the session file,
//! and checks that the session is live. Errors are [`ApplyError`]s.

use std::str::FromStr;

use crate::obj;
use crate::wire::credential;
use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::text::{self, FieldError};

use super::application::{APPLICATION_SCHEMA_VERSION, application_receipt_id, apply_recall};
use super::session::{self, SessionContext, SessionError, StoredSession};

/// Why a decision cannot be recorded; each message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// A decision field that has no `--input` object is missing (the flag is named).
    #[error("apply needs {0} (or --input)")]
    MissingFlag(&'static str),
    /// The `apply --input` object has an unsupported key, or a key of the wrong type.
    #[error("{0}")]
    Input(String),
    /// A field breaks a rule of §10.5 (tokens, the public-safe summary, what `applied`
    /// needs) or this port's credential rule.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The session ref is malformed, or a memory ref is not one the session returned.
    #[error(transparent)]
    Session(#[from] SessionError),
}

fn input_error(message: impl Into<String>) -> ApplyError {
    ApplyError::Input(message.into())
}

fn field_error(message: impl Into<String>) -> ApplyError {
    ApplyError::Field(FieldError(message.into()))
}

/// What the agent did with the recalled memories: `applied`, `ignored` or `refuted`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ApplyOutcome {
    Applied,
    Ignored,
    Refuted,
}

impl ApplyOutcome {
    /// Every outcome, in the order help texts list them.
    pub const ALL: [ApplyOutcome; 3] = [
        ApplyOutcome::Applied,
        ApplyOutcome::Ignored,
        ApplyOutcome::Refuted,
    ];

    /// The outcome as the receipt spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyOutcome::Applied => "applied",
            ApplyOutcome::Ignored => "ignored",
            ApplyOutcome::Refuted => "refuted",
        }
    }
}

impl crate::wire::choice::Choice for ApplyOutcome {
    const ALL: &'static [ApplyOutcome] = &ApplyOutcome::ALL;

    fn as_str(self) -> &'static str {
        ApplyOutcome::as_str(self)
    }
}

impl FromStr for ApplyOutcome {
    type Err = ApplyError;

    fn from_str(text: &str) -> Result<ApplyOutcome, ApplyError> {
        ApplyOutcome::ALL
            .into_iter()
            .find(|o| o.as_str() == text)
            .ok_or_else(|| input_error("outcome must be applied, ignored or refuted"))
    }
}

/// `apply --input`: the agent's decision about an earlier recall, the same fields as
/// `apply`'s flags.
#[derive(Debug, Clone, PartialEq, Eq, schemars::JsonSchema)]
#[schemars(rename = "ApplyInput", deny_unknown_fields)]
pub struct Decision {
    /// The `recall_session_ref` printed by recall.
    #[serde(rename = "recall_session_ref")]
    pub session_ref: String,
    /// Public-safe token naming this application (part of the receipt id).
    pub application_id: String,
    /// Public-safe token of the artifact the memory was applied to.
    pub artifact_ref: String,
    pub outcome: ApplyOutcome,
    /// Opaque `memory_ref`s of the recall's results (at least one for `applied`).
    #[schemars(with = "Option<Vec<String>>")]
    pub memory_refs: Vec<String>,
    /// Compact public-safe reason for the decision (at most 500 characters).
    pub reasoning_summary: String,
    /// The current artifact was verified after applying (required for `applied`).
    #[schemars(with = "Option<bool>")]
    pub current_artifact_verified: bool,
}

/// The decision of an `apply --input` object (`io::read_input_object` has already
/// refused anything that is not an object).
pub fn decision_from_value(input: &Value) -> Result<Decision, ApplyError> {
    let empty = Map::new();
    let map = input.as_object().unwrap_or(&empty);
    let allowed = [
        "recall_session_ref",
        "application_id",
        "artifact_ref",
        "outcome",
        "memory_refs",
        "reasoning_summary",
        "current_artifact_verified",
    ];
    let extra: Vec<&str> = map.keys().filter(|k| !allowed.contains(k)).collect();
    if !extra.is_empty() {
        return Err(input_error(format!(
            "apply input contains unsupported fields: {}",
            keys::list(extra)
        )));
    }
    let string = |k: &str| -> Result<String, ApplyError> {
        map.get(k)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| input_error(format!("{k} must be a string")))
    };
    let outcome: ApplyOutcome = string("outcome")?.parse()?;
    let memory_refs = match map.get("memory_refs") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| input_error("memory_refs must be a list of strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(input_error("memory_refs must be a list of strings")),
    };
    let verified = match map.get("current_artifact_verified") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(input_error("current_artifact_verified must be a boolean")),
    };
    Ok(Decision {
        session_ref: string("recall_session_ref")?,
        application_id: string("application_id")?,
        artifact_ref: string("artifact_ref")?,
        outcome,
        memory_refs,
        reasoning_summary: string("reasoning_summary")?,
        current_artifact_verified: verified,
    })
}

/// The checks that need no session: tokens, the public-safe summary and what `applied`
/// requires. Returns the normalized reasoning summary.
pub fn check_decision(decision: &Decision) -> Result<String, ApplyError> {
    text::token(
        Some(&Value::from(decision.application_id.as_str())),
        "application_id",
    )?;
    text::token(
        Some(&Value::from(decision.artifact_ref.as_str())),
        "artifact_ref",
    )?;
    let summary =
        text::public_safe_text(Some(&Value::from(decision.reasoning_summary.as_str())), 500)
            .ok_or_else(|| field_error("reasoning_summary must be compact public-safe text"))?;
    // This port's stricter public-safe rule: the application packet is ours.
    credential::check(&decision.application_id, "application_id")?;
    credential::check(&decision.artifact_ref, "artifact_ref")?;
    credential::check(&summary, "reasoning_summary")?;
    if decision.outcome == ApplyOutcome::Applied {
        if decision.memory_refs.is_empty() {
            return Err(field_error(
                "outcome applied needs at least one --memory-ref from the recall's results",
            ));
        }
        if !decision.current_artifact_verified {
            return Err(field_error(
                "outcome applied needs --current-artifact-verified: verify the artifact after applying the memory",
            ));
        }
    }
    if !session::is_session_ref(&decision.session_ref) {
        return Err(SessionError::InvalidRef.into());
    }
    Ok(summary)
}

/// §10.5 for a checked decision on its live session: the application packet with its
/// receipt id. Pure.
pub fn application(
    decision: &Decision,
    summary: &str,
    stored: &StoredSession,
) -> Result<Value, ApplyError> {
    let raw = stored.raw_refs(&decision.memory_refs)?;
    let base = Value::Null;
    let reply = Value::Object(obj! {
        "output" => Value::Null,
        "outcome" => decision.outcome.as_str(),
        "memory_refs" => crate::wire::json::str_list(&raw),
        "current_artifact_verified" => decision.current_artifact_verified,
        "reasoning_summary" => summary,
    });
    let callback = move |_: &Value, _: &[crate::recall::RecallItem]| -> Result<Value, String> {
        Ok(reply.clone())
    };
    let packet = apply_recall(
        &base,
        &stored.session,
        &decision.application_id,
        Some(&decision.artifact_ref),
        Some(&callback),
    )?;
    let receipt = packet
        .get("receipt")
        .and_then(Value::as_object)
        .map(|r| with_context(r, &stored.context))
        .unwrap_or_default();
    let receipt_id = application_receipt_id(&receipt)?;
    debug_assert_eq!(
        packet.get("schema_version").and_then(Value::as_str),
        Some(APPLICATION_SCHEMA_VERSION)
    );
    Ok(Value::Object(packet.merged(&obj! {
        "receipt" => receipt,
        "application_receipt_id" => receipt_id,
        "recall_session_ref" => stored.session_ref.as_str(),
    })))
}

/// The §10.5 receipt with the session's context: `agent_id`, `project_id` before
/// `corpus_id` (the scope, in the observation scope's order) and `retrieval_snapshot_ref`,
/// `policy_snapshot_ref` after `surface_id`; a field the session has no value for is left
/// out (a session of the explicit form has no agent or project, an older one nothing),
/// so such a receipt is exactly the one `apply` printed before.
pub fn with_context(receipt: &Map, context: &SessionContext) -> Map {
    let [agent, project, retrieval, policy] = context.fields();
    let mut out = Map::new();
    for (key, value) in receipt.iter() {
        let before = match key {
            "corpus_id" => [agent, project],
            _ => [("", None), ("", None)],
        };
        for (k, v) in before {
            if let Some(v) = v {
                out.insert(k, v);
            }
        }
        out.insert(key, value.clone());
        if key == "surface_id" {
            for (k, v) in [retrieval, policy] {
                if let Some(v) = v {
                    out.insert(k, v);
                }
            }
        }
    }
    out
}

/// `apply --input` on an already parsed input against a session that was already read
/// back and found live: pure (the session file and the clock stay with the caller). A
/// decision naming another session is refused as that session not being found.
pub fn apply_input(input: &Value, stored: &StoredSession) -> Result<Value, ApplyError> {
    let decision = decision_from_value(input)?;
    let summary = check_decision(&decision)?;
    if decision.session_ref != stored.session_ref {
        return Err(SessionError::NotFound(decision.session_ref).into());
    }
    application(&decision, &summary, stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_parse_their_own_spelling_only() {
        for outcome in ApplyOutcome::ALL {
            assert_eq!(outcome.as_str().parse::<ApplyOutcome>(), Ok(outcome));
        }
        assert_eq!(
            "Applied".parse::<ApplyOutcome>().map_err(|e| e.to_string()),
            Err("outcome must be applied, ignored or refuted".to_owned())
        );
    }

    #[test]
    fn a_decision_without_a_flag_names_the_flag() {
        assert_eq!(
            ApplyError::MissingFlag("--outcome").to_string(),
            "apply needs --outcome (or --input)"
        );
    }
}

//! Post-outcome memory utility attribution (utility Stage 1 and Stage 2).
//!
//! * [`observation`]: building and validating `memory_utility_observation_v0`;
//! * [`reducer`]: reducing a complete observation stream into a read-only
//!   `memory_utility_projection_v0` (and, under our `memory_utility_reducer_v1`
//!   rules, [`reducer::v1`], a `memory_utility_projection_v1`);
//! * [`validate`]: the readback validator every projection passes through;
//! * [`bounds`]: the v0 caps both of them enforce;
//! * [`scan`]: `utility-project`'s direct reading of the common input shape from its text.
//!
//! The bounded rank prior (Stage 3), the held-out ranking evaluation (Stage 4) and the
//! durable ledger build on this module, in `ranking` and `ledger` above it.
//!
//! This module also owns the pure cores of the `utility-*` commands on an already parsed
//! input ([`project_input`], [`observe_input`], and [`validate_projection`] with
//! [`validation_packet`], which the ledger's `validate_input` calls for a `utility-project`
//! projection); their handlers in the shell read the input. Their request errors are
//! [`UtilityError`]s. The observation and the projection are LoopX's packets (built to the
//! reference's bytes; `schema::utility` describes them); the `utility-validate` packet is
//! ours and typed ([`ValidationPacket`]). Nothing here writes memory content or grants
//! authority.
//!
//! `utility-observe --input FILE|-` (our addition) reads one object with exactly
//! `application_receipt`, `verified_outcome`, `attribution_context`, `evaluator_proposal`
//! and `created_at`, and prints the built observation (exit 0) or an `invalid_request`
//! error packet (exit 2).
//!
//! `utility-validate --input FILE|-` (our addition) reads one projection packet (a
//! `memory_utility_projection_v0` or `_v1`, or a `memory_utility_ledger_projection_v0` or
//! `_v1` checked with the ledger packet's rules) and prints
//! `{"ok", "schema_version": "memory_utility_projection_validation_v0", "status":
//! "valid"|"invalid", "error"}`: exit 0 when valid, exit 2 with the first violated rule
//! otherwise.

pub mod bounds;
pub mod correction;
pub mod observation;
pub mod reducer;
pub mod scan;
pub(crate) mod strict;
pub mod validate;

use crate::const_string;
use crate::wire;
use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt;
use crate::wire::schema::Nullable;
use crate::wire::text;
use crate::wire::text::FieldError;

pub use observation::{
    AttributionLevel, EvidenceBasis, Observation, ObservationError, ObservationReason, Scope,
    UtilityLabel, build_observation, validate_observation, validate_observation_with_facts,
};
pub use reducer::{ProjectionRequest, reduce};
pub use validate::validate_projection;

/// Schema version of the `utility-validate` packet.
pub const VALIDATION_SCHEMA_VERSION: &str = ValidationVersion::VALUE;

/// A request error of the utility commands; the text is what the error packet prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UtilityError {
    /// The `utility-project` input does not have the §7.1 shape: a key is missing or
    /// unsupported, or a key's value has the wrong type.
    #[error("{0}")]
    ProjectionInput(String),
    /// The `utility-observe` input is missing one of its five keys or has another one.
    #[error("{0}")]
    ObserveInput(String),
    /// The observation built from the `utility-observe` inputs breaks a rule of the
    /// observation contract (or this port's credential rule).
    #[error(transparent)]
    Observation(FieldError),
    /// The reducer's finished packet failed its own readback validation, which the
    /// reference also reports as a request error.
    #[error(transparent)]
    Projection(FieldError),
}

/// The missing keys of `map` among `required`, else its keys outside `required` and
/// `optional`, as the message of the command's input error.
fn key_error(map: &Map, required: &[&str], optional: &[&str], what: &str) -> Option<String> {
    let allowed: Vec<&str> = required.iter().chain(optional).copied().collect();
    strict::reject_missing(map, what, required)
        .and_then(|()| text::reject_unknown(map, what, &allowed))
        .err()
        .map(|e| e.0)
}

fn input_error(message: impl Into<String>) -> UtilityError {
    UtilityError::ProjectionInput(message.into())
}

/// `utility-project` on an already parsed input.
pub fn project_input(input: &Value) -> Result<Value, UtilityError> {
    let empty = Map::new();
    let map = input.as_object().unwrap_or(&empty);
    if let Some(message) = key_error(
        map,
        &[
            "observations",
            "scope",
            "retrieval_snapshot_ref",
            "policy_snapshot_ref",
        ],
        &["reducer_version", "previous_projection"],
        "utility projection input",
    ) {
        return Err(input_error(message));
    }
    let Some(Value::Array(observations)) = map.get("observations") else {
        return Err(input_error("observations must be a list"));
    };
    let scope = map.get("scope").unwrap_or(&Value::Null);
    if scope.as_object().is_none() {
        return Err(input_error("scope must be an object"));
    }
    let retrieval = map.get("retrieval_snapshot_ref").unwrap_or(&Value::Null);
    if retrieval.as_str().is_none() {
        return Err(input_error("retrieval_snapshot_ref must be a string"));
    }
    let policy = map.get("policy_snapshot_ref").unwrap_or(&Value::Null);
    if policy.as_str().is_none() {
        return Err(input_error("policy_snapshot_ref must be a string"));
    }
    let previous = match map.get("previous_projection") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v),
        Some(_) => return Err(input_error("previous_projection must be an object")),
    };
    let default_version = Value::from(reducer::DEFAULT_REDUCER_VERSION);
    let reducer_version = match map.get("reducer_version") {
        None => &default_version,
        Some(v @ Value::Str(s)) if !pyfmt::py_strip(s).is_empty() => v,
        Some(_) => {
            return Err(input_error(
                "reducer_version must be a non-empty string when provided",
            ));
        }
    };
    let request = ProjectionRequest {
        observations,
        scope,
        retrieval_snapshot_ref: retrieval,
        policy_snapshot_ref: policy,
        reducer_version,
        previous_projection: previous,
    };
    reduce(&request).map_err(UtilityError::Projection)
}

/// `utility-observe` on an already parsed input.
pub fn observe_input(input: &Value) -> Result<Value, UtilityError> {
    let empty = Map::new();
    let map = input.as_object().unwrap_or(&empty);
    let keys = [
        "application_receipt",
        "verified_outcome",
        "attribution_context",
        "evaluator_proposal",
        "created_at",
    ];
    if let Some(message) = key_error(map, &keys, &[], "utility observation input") {
        return Err(UtilityError::ObserveInput(message));
    }
    let field = |k: &str| map.get(k).unwrap_or(&Value::Null);
    let observation = observation::build_observation_with(
        field("application_receipt"),
        field("verified_outcome"),
        field("attribution_context"),
        field("evaluator_proposal"),
        field("created_at"),
        observation::ReceiptFields::Scoped,
    )
    .map_err(UtilityError::Observation)?;
    observation
        .credential_free("observation")
        .map_err(UtilityError::Observation)?;
    Ok(observation.to_value())
}

const_string!(ValidationVersion, "memory_utility_projection_validation_v0");

/// `utility-validate`: the readback validator's verdict on a projection.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ValidationPacket {
    pub ok: bool,
    pub schema_version: ValidationVersion,
    /// `valid` or `invalid`.
    pub status: &'static str,
    /// The first violated rule, `null` when valid.
    #[schemars(with = "Nullable<String>")]
    pub error: Option<String>,
}

impl ValidationPacket {
    /// The packet of a validation result (an error text is bounded, [`keys::bound`]).
    pub fn new(result: &Result<(), FieldError>) -> ValidationPacket {
        let (ok, status, error) = match result {
            Ok(()) => (true, "valid", None),
            Err(err) => (false, "invalid", Some(keys::bound(&err.0).into_owned())),
        };
        ValidationPacket {
            ok,
            schema_version: ValidationVersion,
            status,
            error,
        }
    }

    /// The packet as an ordered value.
    pub fn to_value(&self) -> Value {
        // Serializing a struct of strings and a boolean cannot fail.
        wire::json::to_value(self).unwrap_or_default()
    }
}

/// The `utility-validate` packet for a validation result.
pub fn validation_packet(result: &Result<(), FieldError>) -> Value {
    ValidationPacket::new(result).to_value()
}

#[cfg(test)]
pub(crate) mod props;
#[cfg(test)]
pub(crate) mod testkit;

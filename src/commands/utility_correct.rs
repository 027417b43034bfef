//! `utility-correct`: records one owner correction ([`crate::contract::correction`]) in
//! the utility ledger with provenance `correct`, only under an operator checkpoint the
//! corpus declaration authorizes, and prints its `memory_utility_correction_receipt_v0`.
//!
//! The input is read, and the authority and the correction checked, before the ledger
//! is opened: a refused correction leaves the ledger untouched (not even created).

use crate::cli::UtilityCorrectArgs;
use crate::contract::correction::build_correction;
use crate::error::Error;
use crate::io;
use crate::ledger::engine::{self, Record};
use crate::ledger::packets::{self, CorrectionReceipt};
use crate::ledger::{LedgerError, Provenance};
use crate::wire::json;

use super::context::{Context, Outcome};
use super::resolve::open_ledger;

/// What `utility-correct` is asked to record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UtilityCorrectRequest {
    /// The `memory_utility_correction_input` JSON file; `-` reads standard input.
    pub input: String,
    /// Largest JSON input accepted, in bytes.
    #[serde(default = "default_max_input_bytes")]
    pub max_input_bytes: u64,
    /// The ledger location (empty: the default location).
    #[serde(default)]
    pub ledger: Option<String>,
    /// Wins over the runtime root of the context.
    #[serde(default)]
    pub runtime_root: Option<std::path::PathBuf>,
}

fn default_max_input_bytes() -> u64 {
    crate::cli::DEFAULT_MAX_INPUT_BYTES
}

impl From<&UtilityCorrectArgs> for UtilityCorrectRequest {
    fn from(args: &UtilityCorrectArgs) -> UtilityCorrectRequest {
        UtilityCorrectRequest {
            input: args.input.clone(),
            max_input_bytes: args.input_limit.max_input_bytes,
            ledger: args.location.ledger.clone(),
            runtime_root: args.location.runtime_root.clone(),
        }
    }
}

/// Runs `utility-correct`: the receipt, exit 0; a refused correction exits 2 and appends
/// nothing.
pub fn run(request: &UtilityCorrectRequest, ctx: &Context) -> Result<Outcome, Error> {
    let ctx = &ctx.with_route(&crate::cli::RouteArgs {
        registry: None,
        runtime_root: request.runtime_root.clone(),
    });
    let input = io::read_input_object(&ctx.env, &request.input, request.max_input_bytes)?;
    let correction = build_correction(&input)?;
    let provenance = Provenance::Correct {
        checkpoint_ref: correction.checkpoint_ref.clone(),
    };
    let line = json::dumps(&correction.observation.to_value(), engine::COMPACT);
    let records = std::iter::once(Ok(Record::Item {
        line: 1,
        bytes: line.into_bytes(),
    }));
    let mut opened = open_ledger(request.ledger.as_deref(), ctx)?;
    let report = engine::append_with(opened.backend.as_mut(), Box::new(records), &provenance)?;
    let receipt = CorrectionReceipt::new(&correction, &report).ok_or_else(|| {
        LedgerError::Storage(format!(
            "the ledger refused the correction: {}",
            report
                .refusals
                .first()
                .map_or("no reason given", |r| r.error.as_str())
        ))
    })?;
    Ok(Outcome::success(packets::to_value(&receipt)?).with_notes(opened.notes))
}

//! `utility-project` (alias `utility-reduce`): reads the projection request and reduces it
//! ([`crate::utility`]); exit 2 when the projection is rejected.
//!
//! The common input shape is reduced straight from its text ([`crate::utility::scan`])
//! and, for `--format json`, printed from the typed packet into the input's own buffer;
//! anything else is parsed and takes [`crate::utility::project_input`].

use crate::cli::{Format, InputArgs};
use crate::error::Error;
use crate::io;
use crate::utility::{UtilityError, project_input, scan};

use super::context::{Context, Outcome};

/// What `utility-project` is asked to read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
pub struct UtilityProjectRequest {
    /// The JSON input file; `-` reads standard input.
    pub input: String,
    /// Largest JSON input accepted, in bytes.
    pub max_input_bytes: u64,
}

impl From<&InputArgs> for UtilityProjectRequest {
    fn from(args: &InputArgs) -> UtilityProjectRequest {
        UtilityProjectRequest {
            input: args.input.clone(),
            max_input_bytes: args.input_limit.max_input_bytes,
        }
    }
}

/// Runs `utility-project` / `utility-reduce`: the §7.1 input rules, then the reducer.
pub fn run(request: &UtilityProjectRequest, ctx: &Context) -> Result<Outcome, Error> {
    let input = io::read_buffer(&ctx.env, &request.input, request.max_input_bytes)?;
    // The common shape is reduced straight from the text; anything else is parsed.
    if let Some(request) = std::str::from_utf8(input.as_bytes())
        .ok()
        .and_then(scan::scan_request)
    {
        if ctx.format != Format::Json {
            // The request owns its strings: the text's memory is free for the reduction.
            drop(input);
            let projection = request.project();
            io::leave_to_exit(request);
            return Ok(projection
                .map(Outcome::by_ok)
                .map_err(UtilityError::Projection)?);
        }
        let projection = request.project_typed().map_err(UtilityError::Projection)?;
        // JSON is printed from the typed packet into the input's buffer: its pages are
        // in memory already, and the packet needs no value tree.
        let mut out = input.into_output();
        projection.write_pretty_line(&mut out);
        debug_assert_eq!(
            out.as_bytes(),
            crate::wire::json::to_pretty_line(&projection.to_value()).as_bytes()
        );
        let ok = projection.ok();
        io::leave_to_exit(projection);
        io::leave_to_exit(request);
        return Ok(Outcome::printed_json(out, ok));
    }
    let parsed = io::parse_input_object(input.as_bytes())?;
    let projection = project_input(&parsed);
    io::leave_to_exit((input, parsed));
    Ok(projection.map(Outcome::by_ok)?)
}

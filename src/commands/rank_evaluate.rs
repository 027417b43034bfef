//! `rank-evaluate`: reads the evaluation profile and the held-out episodes (or simulates
//! them), runs the held-out ranking evaluation ([`crate::ranking::evaluate`]) on training
//! ledgers in a private temporary directory, optionally writes the SVG chart, and prints
//! the verdict (exit 0 `qualified`, 2 `hold`).

use crate::cli::RankEvaluateArgs;
use crate::error::Error;
use crate::io;
use crate::ranking::evaluate::ledger::SqliteOpener;
use crate::ranking::evaluate::profile::{EvaluationProfile, MAX_SEED, parse_sweep};
use crate::ranking::evaluate::report::Source;
use crate::ranking::evaluate::{RankEvaluateError, episodes, evaluate, plot, simulate};

use super::{Context, Outcome};

/// `rank-evaluate`: reads the profile and the episodes (or simulates them), evaluates,
/// optionally writes the chart, and prints the verdict (exit 0 `qualified`, 2 `hold`).
pub fn run(args: &RankEvaluateArgs, ctx: &Context) -> Result<Outcome, Error> {
    if !args.simulate && (args.episodes.is_some() || args.sweep.is_some()) {
        return Err(RankEvaluateError::Sweep(
            "--episodes and --sweep change the simulator: use them with --simulate".to_owned(),
        )
        .into());
    }
    let mut profile = match &args.profile {
        Some(path) => EvaluationProfile::from_value(&io::read_input_object(
            &ctx.env,
            path,
            args.input_limit.max_input_bytes,
        )?)?,
        None => EvaluationProfile::defaults(),
    };
    if let Some(seed) = args.seed {
        if seed > MAX_SEED {
            return Err(RankEvaluateError::Seed.into());
        }
        profile.seed = seed;
    }
    if let Some(episodes) = args.episodes {
        profile
            .set_param("training_episodes", episodes as f64)
            .map_err(|_| {
                RankEvaluateError::Profile(
                    "--episodes must be an integer between 1 and 1000000".to_owned(),
                )
            })?;
    }
    let sweep = args.sweep.as_deref().map(parse_sweep).transpose()?;
    let (dataset, source) = match (&args.input, args.simulate) {
        (Some(input), false) => {
            let bytes = io::read_bytes(&ctx.env, input, args.input_limit.max_input_bytes)?;
            let parsed = episodes::parse(&bytes)?;
            let source = Source::Episodes {
                input_sha256: sha256_hex_bytes(&bytes),
                observation_lines: parsed.observation_lines,
            };
            (parsed.dataset, source)
        }
        _ => (
            simulate::simulate(&profile)?,
            Source::Simulation { seed: profile.seed },
        ),
    };
    // The ledgers are SQLite files in a private temporary directory, removed on return.
    let dir = io::private_temp_dir("reward-memory-rank-evaluate-").map_err(|e| {
        RankEvaluateError::Ledger(format!("cannot create a temporary directory: {e}"))
    })?;
    let opener = SqliteOpener::new(dir.path().to_path_buf());
    let packet = evaluate(&dataset, &profile, &source, sweep.as_ref(), &opener)?;
    if let Some(path) = &args.plot {
        let svg = plot::render(&packet)?;
        io::write_file(path, svg.as_bytes()).map_err(|e| RankEvaluateError::PlotWrite {
            path: path.to_string_lossy().into_owned(),
            reason: e.to_string(),
        })?;
    }
    Ok(Outcome::by_ok(packet))
}

/// Lowercase hex SHA-256 of the raw input bytes (the file may not be UTF-8).
fn sha256_hex_bytes(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

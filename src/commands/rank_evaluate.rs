//! `rank-evaluate`: reads the evaluation profile and the held-out episodes (or simulates
//! them), runs the held-out ranking evaluation ([`crate::ranking::evaluate`]) on training
//! ledgers in a private temporary directory, optionally writes the SVG chart, and prints
//! the verdict (exit 0 `qualified`, 2 `hold`). The handler takes a plain
//! [`RankEvaluateRequest`]; the profile and the episodes are read before the evaluation.
//! `--ledger` evaluates the ledger's traffic log instead ([`crate::ranking::evaluate::logged`]),
//! and `--input` of a file of logged episodes (`--export-episodes`) evaluates those.

use std::path::PathBuf;

use crate::cli::RankEvaluateArgs;
use crate::error::Error;
use crate::io;
use crate::ledger::traffic::Selection;
use crate::ranking::evaluate::ledger::SqliteOpener;
use crate::ranking::evaluate::profile::{EvaluationProfile, MAX_SEED, parse_sweep};
use crate::ranking::evaluate::report::Source;
use crate::ranking::evaluate::{RankEvaluateError, episodes, evaluate, logged, plot, simulate};

use super::context::{Context, Outcome};
use super::resolve;
use crate::ledger::verdicts::{self, VerdictRow};
use crate::output::notes::Notes;
use crate::ranking::prior::verdict::VERDICT_DIGEST_KEY;
use crate::wire::json::{self, Value, canonical};

/// What `rank-evaluate` is asked to run: held-out episodes from a file, or the
/// simulator, with an optional profile, seed, sweep and chart.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RankEvaluateRequest {
    /// `EPISODES.jsonl`; `-` reads standard input.
    pub input: Option<String>,
    /// Generate the episodes with the deterministic simulator instead.
    #[serde(default)]
    pub simulate: bool,
    /// Seed of the simulator and of the bootstrap resamples.
    pub seed: Option<u64>,
    /// With `simulate`: the training episodes to simulate.
    pub episodes: Option<u64>,
    /// The `memory_utility_ranking_evaluation_profile_v0` file.
    pub profile: Option<String>,
    /// With `simulate`, `NAME=V1,V2,...`: rerun once per value of one parameter.
    pub sweep: Option<String>,
    /// Also write an SVG chart of nDCG@k to this file.
    pub plot: Option<PathBuf>,
    /// Evaluate on the traffic log of this utility ledger (empty: the default location).
    #[serde(default)]
    pub ledger: Option<String>,
    /// With `ledger`: the partition file to evaluate.
    #[serde(default)]
    pub partition: Option<String>,
    /// With `ledger`: every partition of the traffic log.
    #[serde(default)]
    pub all_partitions: bool,
    /// With `ledger`: write the built episodes to this JSON Lines file.
    #[serde(default)]
    pub export_episodes: Option<PathBuf>,
    /// Record the verdict in the utility ledger at this location (empty: the default).
    pub record: Option<String>,
    /// Largest JSON input accepted, in bytes.
    #[serde(default = "default_max_input_bytes")]
    pub max_input_bytes: u64,
}

fn default_max_input_bytes() -> u64 {
    crate::cli::DEFAULT_MAX_INPUT_BYTES
}

impl From<&RankEvaluateArgs> for RankEvaluateRequest {
    fn from(args: &RankEvaluateArgs) -> RankEvaluateRequest {
        RankEvaluateRequest {
            input: args.input.clone(),
            simulate: args.simulate,
            seed: args.seed,
            episodes: args.episodes,
            profile: args.profile.clone(),
            sweep: args.sweep.clone(),
            plot: args.plot.clone(),
            ledger: args.ledger.clone(),
            partition: args.partition.clone(),
            all_partitions: args.all_partitions,
            export_episodes: args.export_episodes.clone(),
            record: args.record.clone(),
            max_input_bytes: args.input_limit.max_input_bytes,
        }
    }
}

/// `rank-evaluate`: reads the profile and the episodes (or simulates them), evaluates,
/// optionally writes the chart, and prints the verdict (exit 0 `qualified`, 2 `hold`).
pub fn run(request: &RankEvaluateRequest, ctx: &Context) -> Result<Outcome, Error> {
    let _progress = io::progress::Progress::spinner(if request.ledger.is_some() {
        "rank-evaluate: reading the traffic log and running the held-out evaluation"
    } else {
        "rank-evaluate: running the held-out evaluation"
    });
    if request.simulate && request.record.is_some() {
        return Err(RankEvaluateError::Record(
            "--record stores verdicts of real episodes (--input, or the ledger's traffic): a simulation says nothing about a deployment; give its verdict to recall with --evaluation FILE --allow-simulated-evaluation instead".to_owned(),
        )
        .into());
    }
    if !request.simulate && (request.episodes.is_some() || request.sweep.is_some()) {
        return Err(RankEvaluateError::Sweep(
            "--episodes and --sweep change the simulator: use them with --simulate".to_owned(),
        )
        .into());
    }
    let mut profile = match &request.profile {
        Some(path) => EvaluationProfile::from_value(&io::read_input_object(
            &ctx.env,
            path,
            request.max_input_bytes,
        )?)?,
        None => EvaluationProfile::defaults(),
    };
    if let Some(seed) = request.seed {
        if seed > MAX_SEED {
            return Err(RankEvaluateError::Seed.into());
        }
        profile.seed = seed;
    }
    if let Some(episodes) = request.episodes {
        profile
            .set_param("training_episodes", episodes as f64)
            .map_err(|_| {
                RankEvaluateError::Profile(
                    "--episodes must be an integer between 1 and 1000000".to_owned(),
                )
            })?;
    }
    let sweep = request.sweep.as_deref().map(parse_sweep).transpose()?;
    if request.ledger.is_some() {
        return ranking_from_ledger(request, ctx, &profile);
    }
    let (dataset, source) = match (&request.input, request.simulate) {
        (Some(input), false) => {
            let bytes = io::read_bytes(&ctx.env, input, request.max_input_bytes)?;
            if logged::episodes::is_logged_file(&bytes) {
                if request.plot.is_some() {
                    return Err(no_plot());
                }
                let parsed = logged::episodes::parse_jsonl(&bytes)?;
                let origin = logged::Origin::EpisodesFile {
                    input_sha256: sha256_hex_bytes(&bytes),
                    observation_lines: parsed.observation_lines,
                };
                let outcome = evaluate_logged(&parsed.data, &profile, &origin)?;
                let notes = record_verdict(&outcome.packet, request.record.as_deref(), ctx)?;
                return Ok(outcome.with_notes(notes));
            }
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
    if let Some(path) = &request.plot {
        let svg = plot::render(&packet)?;
        io::write_file(path, svg.as_bytes()).map_err(|e| RankEvaluateError::PlotWrite {
            path: path.to_string_lossy().into_owned(),
            reason: e.to_string(),
        })?;
    }
    let notes = record_verdict(&packet, request.record.as_deref(), ctx)?;
    Ok(Outcome::by_ok(packet).with_notes(notes))
}

/// `--record`: appends the verdict to the ledger at `location` (empty: the default) and
/// says so in a notice.
fn record_verdict(packet: &Value, location: Option<&str>, ctx: &Context) -> Result<Notes, Error> {
    let mut notes = Notes::default();
    let Some(location) = location else {
        return Ok(notes);
    };
    let explicit = Some(location).filter(|l| !l.is_empty());
    let mut opened = resolve::open_ledger(explicit, ctx)?;
    let row = verdict_row(packet)?;
    let recorded = verdicts::record(opened.backend.as_mut(), &row)?;
    notes.notices.push(format!(
        "{} verdict {} {} in {} as record {} (ledger {})",
        row.verdict,
        row.verdict_digest,
        if recorded.appended {
            "recorded"
        } else {
            "was already recorded"
        },
        opened.notes.ledger.clone().unwrap_or_default(),
        recorded.record_seq,
        recorded.ledger_id
    ));
    notes.ledger = opened.notes.ledger.take();
    Ok(notes)
}

/// The stored row of a sealed verdict packet.
fn verdict_row(packet: &Value) -> Result<VerdictRow, RankEvaluateError> {
    let missing = || RankEvaluateError::Internal("the verdict packet lacks a bound field");
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let source = packet.get("source");
    Ok(VerdictRow {
        verdict_digest: text(packet.get(VERDICT_DIGEST_KEY)).ok_or_else(missing)?,
        profile_digest: text(packet.get("profile_digest")).ok_or_else(missing)?,
        verdict: text(packet.get("verdict")).ok_or_else(missing)?,
        source_kind: text(source.and_then(|s| s.get("kind"))).ok_or_else(missing)?,
        partitions: json::str_items(source.and_then(|s| s.get("partitions"))),
        packet: canonical(packet),
    })
}

fn no_plot() -> Error {
    RankEvaluateError::Sweep(
        "--plot draws nDCG@k against ground truth: an evaluation of logged traffic has no chart"
            .to_owned(),
    )
    .into()
}

/// Evaluates logged episodes on training ledgers in a private temporary directory.
fn evaluate_logged(
    data: &logged::episodes::LoggedData,
    profile: &EvaluationProfile,
    origin: &logged::Origin,
) -> Result<Outcome, Error> {
    let dir = io::private_temp_dir("reward-memory-rank-evaluate-").map_err(|e| {
        RankEvaluateError::Ledger(format!("cannot create a temporary directory: {e}"))
    })?;
    let opener = SqliteOpener::new(dir.path().to_path_buf());
    Ok(Outcome::by_ok(logged::evaluate(
        data, profile, origin, &opener,
    )?))
}

/// `rank-evaluate --ledger`: reads the traffic log of the partition (or of every one),
/// optionally exports the episodes, and evaluates them.
fn ranking_from_ledger(
    request: &RankEvaluateRequest,
    ctx: &Context,
    profile: &EvaluationProfile,
) -> Result<Outcome, Error> {
    if request.plot.is_some() {
        return Err(no_plot());
    }
    let (selection, reducer_version) = match (&request.partition, request.all_partitions) {
        (Some(path), false) => {
            let value = io::read_input_object(&ctx.env, path, request.max_input_bytes)?;
            let (partition, reducer_version) = logged::episodes::partition_of_value(&value)?;
            (Selection::Only(vec![partition.key()]), reducer_version)
        }
        (None, true) => (
            Selection::All,
            crate::utility::reducer::DEFAULT_REDUCER_VERSION.to_owned(),
        ),
        _ => {
            return Err(RankEvaluateError::Sweep(
                "--ledger needs the partition to evaluate: --partition P.json or --all-partitions"
                    .to_owned(),
            )
            .into());
        }
    };
    let explicit = request.ledger.as_deref().filter(|l| !l.is_empty());
    let mut opened = super::resolve::open_ledger(explicit, ctx)?;
    let read = logged::read_ledger(opened.backend.as_mut(), &selection, &reducer_version)?;
    if let Some(path) = &request.export_episodes {
        let text = logged::episodes::write_jsonl(&read.data)?;
        io::write_file(path, text.as_bytes()).map_err(|e| {
            RankEvaluateError::Ledger(format!(
                "cannot write the episodes to {}: {e}",
                path.to_string_lossy()
            ))
        })?;
    }
    let ledger_id = verdicts::ledger_id(opened.backend.as_mut())?;
    let origin = logged::Origin::Ledger {
        backend: read.backend,
        ledger_id,
        high_water_seq: read.high_water_seq,
        traffic_high_water_seq: read.traffic_high_water_seq,
        split_seq: read.split_seq,
        partitions: read.partitions.clone(),
    };
    let outcome = evaluate_logged(&read.data, profile, &origin)?;
    // `--record` without a location records in the ledger that was read.
    let record = match &request.record {
        Some(location) if location.is_empty() => request.ledger.clone(),
        other => other.clone(),
    };
    let mut notes = record_verdict(&outcome.packet, record.as_deref(), ctx)?;
    notes.ledger = opened.notes.ledger.take();
    Ok(outcome.with_notes(notes))
}

/// Lowercase hex SHA-256 of the raw input bytes (the file may not be UTF-8).
fn sha256_hex_bytes(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

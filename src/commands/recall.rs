//! `recall`: the Stage-3 seam (§10.2–10.4) through the binary.
//!
//! `recall` builds the §10.2 request (from the goal's experiment route, or an explicit
//! `--input`), runs §10.4 against the route's provider and prints the public packet with
//! each result's relevance score and rank; it keeps the raw refs in a private recall
//! session ([`crate::runtime::sessions`], the document rules in [`crate::recall::session`])
//! that `apply` ([`super::apply`]) reads back, and, with `--rank-prior`, fetches the
//! profile's semantic pool (`candidate_pool` candidates, at least `--limit`), re-orders
//! it with the bounded utility prior ([`crate::recall::prior`]), whose utility is a
//! projection packet or the utility ledger (the stored subjects of the results' digests,
//! [`crate::ledger::view`]), and cuts it to `--limit` (the packet's `candidate_fetch`
//! says how many were fetched and cut). The session also keeps what the receipt records
//! beyond §10.5: the route's agent and project and the recall's snapshot refs
//! ([`crate::recall::snapshot`]), which the packet prints too.
//!
//! The handler takes a plain [`RecallRequest`]. Its resolve step reads every input file
//! (the rank prior's profile, partition, projection and verdict, the explicit input) and
//! opens the ledger before any contract runs; the experiment route is read next (the
//! configured form), the provider factory is rooted at the runtime root, and the clock
//! and randomness go through [`crate::io`]. What the documents mean is the pure code's
//! ([`crate::recall::command`], [`crate::recall::prior`]). Design: `docs/recall.md`.
//!
//! Fail-open: an untrusted session store gives no session (`recall_session_store_untrusted`,
//! a warning naming the path on stderr) and an untrusted embedded store
//! `provider_unavailable` (the same kind of warning); the recall itself is printed.

use crate::cli::RecallArgs;
use crate::contract::experiment::{self, SurfaceRoute};
use crate::error::Error;
use crate::io;
use crate::ledger::LedgerBackend;
use crate::ledger::traffic as ledger_traffic;
use crate::ledger::verdicts;
use crate::ledger::view as ledger_view;
use crate::obj;
use crate::provider::{DefaultFactory, ProviderConfig};
use crate::ranking::prior::{Candidate, UtilityView, Verdict};
use crate::recall::command::{
    CandidateFetch, CommandFields, RecallCommandError, RecallInput, configured_limit,
    configured_queries, configured_request, finish_packet, has_results, opaque_refs,
    request_limit_for,
};
use crate::recall::delivery;
use crate::recall::prior::{
    LEDGER_UNAVAILABLE, PriorDocuments, PriorSetup, PriorUtility, apply_prior, cut_to_limit,
    is_gate_reason, prior_candidates, semantic_pool, shadow_candidates, shadow_order,
    show_in_order,
};
use crate::recall::session::{self, SessionContext, SessionError};
use crate::recall::snapshot::{PolicyInputs, policy_snapshot_ref};
use crate::recall::traffic::{self, Shadow};
use crate::recall::{Fetch, ProviderSource, RecallSession, fetch_recall, request_limit};
use crate::wire::digest::short16;
use crate::wire::json::{self, Map, Value};
use crate::wire::pyfmt::pystr;
use crate::wire::timestamp::parse_aware;

use super::context::{Context, Outcome};
use super::resolve;
use crate::output::notes::Notes;

/// What `recall` is asked to do: the explicit form (`input`) or the configured form
/// (`goal_id`, `agent_id`, the queries), and optionally the rank prior.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    /// Explicit form: the `{"corpus", "request", "read_authority_checkpoint",
    /// "provider_binding"}` JSON file; `-` reads standard input.
    pub input: Option<String>,
    /// Configured form: the goal whose experiment route selects corpus and provider.
    pub goal_id: Option<String>,
    /// Configured form: the allowlisted agent id of that goal.
    pub agent_id: Option<String>,
    /// Configured form: the surface (needed when the config declares several).
    pub surface_id: Option<String>,
    /// Configured form: the query texts (never printed; at most 500 characters each).
    #[serde(default)]
    pub query: Vec<String>,
    /// Configured form: a public-safe summary of each query, in the same order (at most
    /// 220 characters each).
    #[serde(default)]
    pub query_summary: Vec<String>,
    /// Configured form: the most results to return (1-50; default: the surface's recall
    /// profile limit).
    pub limit: Option<i64>,
    /// Configured form: the aware ISO timestamp of the recall (default: now).
    pub observed_at: Option<String>,
    /// Seconds the recall session stays usable by `apply` (1-604800).
    #[serde(default = "default_session_ttl")]
    pub session_ttl: u64,
    /// Deliver each result's content summary to the caller (`delivered_content`, private
    /// to the caller; never stored).
    #[serde(default)]
    pub deliver_content: bool,
    /// The rank-prior profile file (`memory_utility_rank_prior_profile_v0`).
    pub rank_prior: Option<String>,
    /// The `memory_utility_projection_v0` file whose utility the prior uses.
    pub projection: Option<String>,
    /// Read the utility from the utility ledger at this location (empty: the default).
    pub ledger: Option<String>,
    /// The utility partition file of this recall.
    pub partition: Option<String>,
    /// The `memory_utility_ranking_evaluation_v1` verdict file for the profile (default:
    /// the newest recorded in the ledger).
    pub evaluation: Option<String>,
    /// Let a simulation verdict open the gate (demos and tests).
    #[serde(default)]
    pub allow_simulated_evaluation: bool,
    /// `--explore EPSILON`: the probability (0-1) of a uniformly random order within the
    /// semantic pool; needs the traffic log.
    #[serde(default)]
    pub explore: Option<f64>,
    /// Largest JSON input accepted, in bytes.
    #[serde(default = "default_max_input_bytes")]
    pub max_input_bytes: u64,
}

fn default_session_ttl() -> u64 {
    3600
}

fn default_max_input_bytes() -> u64 {
    crate::cli::DEFAULT_MAX_INPUT_BYTES
}

impl From<&RecallArgs> for RecallRequest {
    fn from(args: &RecallArgs) -> RecallRequest {
        RecallRequest {
            input: args.input.clone(),
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
            surface_id: args.surface_id.clone(),
            query: args.query.clone(),
            query_summary: args.query_summary.clone(),
            limit: args.limit,
            observed_at: args.observed_at.clone(),
            session_ttl: args.session_ttl,
            deliver_content: args.deliver_content,
            rank_prior: args.rank_prior.clone(),
            projection: args.projection.clone(),
            ledger: args.ledger.clone(),
            partition: args.partition.clone(),
            evaluation: args.evaluation.clone(),
            allow_simulated_evaluation: args.allow_simulated_evaluation,
            explore: args.explore,
            max_input_bytes: args.input_limit.max_input_bytes,
        }
    }
}

fn request_error(message: impl Into<String>) -> Error {
    Error::from(RecallCommandError::Request(message.into()))
}

// ---------------------------------------------------------------------------------------
// The resolve step: every file read and the ledger opened before any contract runs
// ---------------------------------------------------------------------------------------

/// The rank prior's documents as read, and the ledger when it is the utility source.
struct PriorFiles {
    profile: Value,
    partition: Value,
    projection: Option<Value>,
    evaluation: Option<Value>,
    ledger: Option<Box<dyn LedgerBackend>>,
}

/// Everything `recall` reads before a contract runs.
struct Resolved {
    prior: Option<PriorFiles>,
    /// The explicit form's input object.
    input: Option<Value>,
}

fn read_object(ctx: &Context, spec: &str, limit: u64) -> Result<Value, Error> {
    Ok(io::read_input_object(&ctx.env, spec, limit)?)
}

fn resolve_inputs(request: &RecallRequest, ctx: &Context) -> Result<Resolved, Error> {
    let limit = request.max_input_bytes;
    let prior = match (&request.rank_prior, &request.partition) {
        (Some(profile), Some(partition)) => {
            let profile = read_object(ctx, profile, limit)?;
            let partition = read_object(ctx, partition, limit)?;
            let (projection, ledger) = match (&request.projection, &request.ledger) {
                (Some(projection), _) => (Some(read_object(ctx, projection, limit)?), None),
                (None, Some(location)) => {
                    let explicit = Some(location.as_str()).filter(|l| !l.is_empty());
                    (
                        None,
                        Some(super::resolve::open_ledger(explicit, ctx)?.backend),
                    )
                }
                (None, None) => {
                    return Err(request_error(
                        "--rank-prior needs the utility: --projection FILE or --ledger [LOCATION]",
                    ));
                }
            };
            let evaluation = match &request.evaluation {
                Some(path) => Some(read_object(ctx, path, limit)?),
                None => None,
            };
            Some(PriorFiles {
                profile,
                partition,
                projection,
                evaluation,
                ledger,
            })
        }
        _ => None,
    };
    let input = match &request.input {
        Some(spec) => Some(read_object(ctx, spec, limit)?),
        None => None,
    };
    Ok(Resolved { prior, input })
}

/// The prior's setup from its documents; a ledger source must be readable at the
/// partition before the provider is called, and gives the evaluation gate its identity,
/// high-water mark and newest recorded verdict.
fn prior_setup(
    files: &mut PriorFiles,
    request: &RecallRequest,
) -> Result<(PriorSetup, Option<Box<dyn LedgerBackend>>), Error> {
    let mut setup = PriorSetup::parse(PriorDocuments {
        profile: &files.profile,
        partition: &files.partition,
        projection: files.projection.as_ref(),
        evaluation: files.evaluation.as_ref(),
    })?;
    setup.gate.now_micros = parse_aware(&io::utc_now_iso()).map_or(0, |at| at.micros);
    setup.gate.allow_simulated = request.allow_simulated_evaluation;
    let mut ledger = files.ledger.take();
    if let Some(backend) = ledger.as_mut() {
        ledger_view::check_readable(backend.as_mut(), &setup.partition)?;
        let state = verdicts::newest(
            backend.as_mut(),
            &setup.profile.digest(),
            &setup.partition.reducer_identity(),
        )
        .map_err(|e| {
            request_error(format!(
                "the ledger's recorded verdicts cannot be read: {e}"
            ))
        })?;
        setup.gate.ledger = Some((
            state.ledger_id,
            u64::try_from(state.high_water_seq).unwrap_or(0),
        ));
        // A recorded verdict that no longer parses is refused by the gate like any
        // other unreadable verdict.
        setup.gate.recorded = state
            .newest_verdict
            .map(|text| Verdict::from_value(&json::parse(&text).unwrap_or(Value::Null)));
    }
    Ok((setup, ledger))
}

// ---------------------------------------------------------------------------------------
// recall
// ---------------------------------------------------------------------------------------

fn route_for(
    request: &RecallRequest,
    ctx: &Context,
    goal: &str,
    agent: &str,
) -> Result<SurfaceRoute, Error> {
    let resolution = resolve::experiment(ctx, goal, agent)?;
    let Some(config) = resolution.config else {
        let status = pystr(resolution.status.get("status"));
        let why = resolution
            .problem
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        return Err(request_error(format!(
            "Reward Memory experiment is unavailable for this agent: {}{why}",
            if status.is_empty() {
                "unavailable"
            } else {
                &status
            }
        )));
    };
    let surface_id = match (&request.surface_id, config.surfaces.as_slice()) {
        (Some(s), _) => s.clone(),
        (None, [only]) => only.surface_id.clone(),
        (None, _) => {
            return Err(request_error(
                "--surface-id is required: the experiment config declares several surfaces",
            ));
        }
    };
    Ok(experiment::surface_route(&config, &surface_id, None)?)
}

/// A finished recall with what its receipt's scope and policy snapshot are made of.
struct Answered {
    session: RecallSession,
    /// The most results shown: `--limit` in the configured form (up to
    /// [`crate::recall::command::MAX_RECALL_LIMIT`]), else the request's `limit`.
    limit: usize,
    /// The §10.2 request's own `limit` (at most 8).
    request_limit: usize,
    /// The recall's `observed_at`.
    observed_at: String,
    /// The route's agent and the answering corpus's project (the configured form).
    agent_id: Option<String>,
    project_id: Option<String>,
    /// The surface's own settings, the answering corpus, its binding and standing policy.
    surface: Map,
    corpus: Map,
    provider_binding: Map,
    standing_policy: Option<Map>,
}

impl Answered {
    /// The context the session keeps for the receipt; the rank-prior profile counts
    /// when the prior was applied to the results.
    fn context(&self, rank_prior_profile: Option<&Value>) -> SessionContext {
        SessionContext {
            agent_id: self.agent_id.clone(),
            project_id: self.project_id.clone(),
            retrieval_snapshot_ref: self.session.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: Some(policy_snapshot_ref(PolicyInputs {
                surface: &self.surface,
                corpus: &self.corpus,
                provider_binding: &self.provider_binding,
                standing_policy: self.standing_policy.as_ref(),
                rank_prior_profile,
            })),
        }
    }
}

/// The surface route's own settings that shape a recall (the policy snapshot's
/// `surface`).
fn route_settings(route: &SurfaceRoute) -> Map {
    let profile = &route.recall_profile;
    obj! {
        "surface_id" => route.surface_id.as_str(),
        "adapter" => route.adapter.as_str(),
        "recall_profile" => obj! {
            "profile_id" => profile.profile_id.as_str(),
            "mode" => profile.mode.as_str(),
            "max_queries" => profile.max_queries,
            "limit" => profile.limit,
        },
    }
}

/// What a recall asks of the provider: with `--rank-prior` the profile's semantic pool
/// (whether the gate then lets the prior apply or not, so that the printed recall never
/// depends on the ledger, and the shadow ranking sees the pool the applied prior would);
/// a `limit` beyond the request's own (`recall --limit` above 8) as a pool of that size;
/// else the request's limit.
fn fetch_for(prior: Option<&PriorSetup>, limit: usize, packet: &Map) -> Fetch {
    match prior {
        Some(prior) => Fetch::Pool(prior.fetch_count(limit)),
        None if limit > request_limit(packet) => Fetch::Pool(limit),
        None => Fetch::Limit,
    }
}

/// Runs the configured form: each corpus of the surface in configured order until one
/// recall is not `empty` (§10.8's walk).
fn recall_configured(
    request: &RecallRequest,
    ctx: &Context,
    prior: Option<&PriorSetup>,
    warnings: &mut Vec<String>,
) -> Result<Answered, Error> {
    let (Some(goal), Some(agent)) = (request.goal_id.as_deref(), request.agent_id.as_deref())
    else {
        return Err(request_error(
            "recall needs --input, or --goal-id and --agent-id with --query",
        ));
    };
    let route = route_for(request, ctx, goal, agent)?;
    let queries = configured_queries(&request.query, &request.query_summary, &route)?;
    let limit = configured_limit(request.limit, &route)?;
    // The results shown: `--limit`, which may exceed the request's own limit.
    let shown = usize::try_from(limit).unwrap_or(1);
    let observed_at = match &request.observed_at {
        Some(t) => t.clone(),
        None => io::utc_now_iso(),
    };
    if let Some(prior) = prior {
        prior.check_target(&route.surface_id, &route.corpus_ids)?;
    }
    let factory = resolve::provider_factory(ctx);
    let mut last: Option<(
        RecallSession,
        usize,
        &crate::contract::experiment::CorpusEntry,
    )> = None;
    for entry in &route.recall_corpora {
        let packet = configured_request(
            entry,
            &route.surface_id,
            &route.recall_profile.mode,
            &queries,
            request_limit_for(limit),
            &observed_at,
        )?;
        let session = fetch_recall(
            &packet,
            &entry.provider_binding,
            ProviderSource::Factory(&factory),
            fetch_for(prior, shown, &packet),
        )?;
        warn_of_store(&factory, &entry.provider_binding, warnings);
        let empty = session.packet.get("status").and_then(Value::as_str) == Some("empty");
        last = Some((session, shown, entry));
        if !empty {
            break;
        }
    }
    let (session, limit, entry) =
        last.ok_or_else(|| request_error("the surface has no recall corpus"))?;
    Ok(Answered {
        session,
        limit,
        request_limit: usize::try_from(request_limit_for(i64::try_from(limit).unwrap_or(1)))
            .unwrap_or(1),
        observed_at,
        agent_id: Some(agent.to_owned()),
        project_id: entry
            .corpus
            .at(&["scope", "project_ref"])
            .and_then(Value::as_str)
            .map(str::to_owned),
        surface: route_settings(&route),
        corpus: entry.corpus.clone(),
        provider_binding: entry.provider_binding.clone(),
        standing_policy: Some(entry.standing_policy.clone()),
    })
}

/// Runs the explicit form on its input object.
fn recall_explicit(
    input: &Value,
    ctx: &Context,
    prior: Option<&PriorSetup>,
    warnings: &mut Vec<String>,
) -> Result<Answered, Error> {
    let input = RecallInput::from_value(input)?;
    let packet = input.request_packet()?;
    let corpus_id = pystr(packet.get("corpus").and_then(|c| c.get("corpus_id")));
    let surface_id = pystr(packet.get("request").and_then(|r| r.get("surface_id")));
    if let Some(prior) = prior {
        prior.check_target(&surface_id, &[corpus_id])?;
    }
    let factory = resolve::provider_factory(ctx);
    let session = fetch_recall(
        &packet,
        &input.provider_binding,
        ProviderSource::Factory(&factory),
        fetch_for(prior, request_limit(&packet), &packet),
    )?;
    warn_of_store(&factory, &input.provider_binding, warnings);
    let request = packet.get("request").and_then(Value::as_object);
    let surface = obj! {
        "surface_id" => surface_id.as_str(),
        "mode" => request.and_then(|r| r.get("mode")).cloned().unwrap_or_default(),
    };
    Ok(Answered {
        observed_at: request
            .and_then(|r| r.get("observed_at"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        session,
        limit: request_limit(&packet),
        request_limit: request_limit(&packet),
        agent_id: None,
        project_id: None,
        surface,
        corpus: input.corpus.as_object().cloned().unwrap_or_default(),
        provider_binding: input.provider_binding.clone(),
        standing_policy: None,
    })
}

/// Adds the reason the embedded store of `binding` was not trusted, once.
fn warn_of_store(factory: &DefaultFactory, binding: &Map, warnings: &mut Vec<String>) {
    if let Some(problem) = factory.store_trust_problem(&ProviderConfig::from_binding(binding))
        && !warnings.contains(&problem)
    {
        warnings.push(problem);
    }
}

/// What the prior did on a finished recall.
#[derive(Default)]
struct PriorRun {
    /// The `memory_utility_rank_prior_v0` packet when it was applied.
    packet: Option<Value>,
    /// Why it stayed off.
    reason: Option<&'static str>,
    /// Shadow mode: the prior's order, computed for the traffic log when only the gate
    /// kept it off.
    shadow: Option<Shadow>,
    /// The profile's semantic stage (digests), the pool `--explore` randomizes.
    pool: Option<Vec<String>>,
}

/// The utility view of `candidates` (the projection's, or read from the ledger for their
/// digests only).
fn prior_view(
    prior: &PriorSetup,
    candidates: &[Candidate],
    ledger: Option<&mut Box<dyn LedgerBackend>>,
) -> Result<UtilityView, &'static str> {
    match (&prior.utility, ledger) {
        (PriorUtility::Projection(view), _) => Ok((**view).clone()),
        (PriorUtility::Ledger, Some(backend)) => {
            let digests: Vec<&str> = candidates
                .iter()
                .map(|c| c.memory_ref_digest.as_str())
                .collect();
            ledger_view::utility_view(
                backend.as_mut(),
                &prior.partition,
                &digests,
                prior.profile.require_attested_tiers,
            )
            .map_err(|_| LEDGER_UNAVAILABLE)
        }
        (PriorUtility::Ledger, None) => Err(LEDGER_UNAVAILABLE),
    }
}

/// The prior on a finished recall: its packet, or the reason code that kept it off. The
/// ledger (when it is the source) is read here, for the results' digests only. With
/// `shadow` (the traffic log is on) a prior that only the gate kept off is computed all
/// the same and returned as the shadow ranking; the recall is not changed.
fn run_prior(
    session: &mut RecallSession,
    opaque: &mut Vec<String>,
    prior: &PriorSetup,
    mut ledger: Option<&mut Box<dyn LedgerBackend>>,
    shadow: bool,
    warnings: &mut Vec<String>,
) -> PriorRun {
    match prior_candidates(session, prior) {
        Ok(candidates) => {
            let view = match prior_view(prior, &candidates, ledger) {
                Ok(view) => view,
                Err(reason) => {
                    return PriorRun {
                        reason: Some(reason),
                        pool: semantic_pool(&candidates, prior),
                        ..PriorRun::default()
                    };
                }
            };
            match apply_prior(session, opaque, prior, &candidates, &view) {
                Ok(packet) => PriorRun {
                    packet: Some(packet),
                    pool: Some(
                        session
                            .items
                            .iter()
                            .map(|i| short16(&i.memory_ref))
                            .collect(),
                    ),
                    ..PriorRun::default()
                },
                Err(reason) => PriorRun {
                    reason: Some(reason),
                    ..PriorRun::default()
                },
            }
        }
        Err(reason) => {
            let mut run = PriorRun {
                reason: Some(reason),
                ..PriorRun::default()
            };
            if !(shadow && is_gate_reason(reason)) {
                return run;
            }
            let Ok(candidates) = shadow_candidates(session, prior) else {
                return run;
            };
            run.pool = semantic_pool(&candidates, prior);
            match prior_view(prior, &candidates, ledger.take()) {
                Ok(view) => {
                    run.shadow = shadow_order(&candidates, prior, &view).map(|ranks| Shadow {
                        profile_digest: prior.profile.digest(),
                        ranks,
                    });
                }
                Err(_) => warnings.push(
                    "the shadow ranking was not computed: the utility ledger could not be read after the recall".to_owned(),
                ),
            }
            run
        }
    }
}

/// `--explore`: with probability ε shows the pool in a random order (the randomness from
/// the operating system); returns whether it did. Fails open: without randomness the
/// recall keeps the policy order and says so.
fn explore_recall(
    session: &mut RecallSession,
    opaque: &mut Vec<String>,
    pool: &[String],
    epsilon: f64,
    warnings: &mut Vec<String>,
) -> bool {
    if epsilon <= 0.0 || session.items.len() < 2 {
        return false;
    }
    let draw = match io::random_bytes16() {
        Ok(bytes) => traffic::ExplorationDraw::from_bytes(bytes),
        Err(err) => {
            warnings.push(format!(
                "--explore kept the policy order: no randomness from the operating system ({err})"
            ));
            return false;
        }
    };
    let digests: Vec<String> = session
        .items
        .iter()
        .map(|i| short16(&i.memory_ref))
        .collect();
    let order: Vec<usize> = (0..digests.len()).collect();
    let (shown, explored) = traffic::explore(
        &order,
        |i| digests.get(i).is_some_and(|d| pool.contains(d)),
        epsilon,
        draw,
    );
    if explored {
        show_in_order(session, opaque, &shown);
    }
    explored
}

/// What the traffic log needs of a finished recall, kept until its session ref is known.
struct TrafficDraft {
    shown: traffic::Shown,
    kind: traffic::LoggingPolicyKind,
    profile_digest: Option<String>,
    explored: bool,
    shadow: Option<Shadow>,
}

/// Indices into `provider` of the current items (by digest).
fn positions(provider: &[(String, Option<f64>)], session: &RecallSession) -> Vec<usize> {
    session
        .items
        .iter()
        .filter_map(|item| {
            let d = short16(&item.memory_ref);
            provider.iter().position(|(p, _)| *p == d)
        })
        .collect()
}

/// Appends the recall's event to the ledger's traffic log; a warning when it was not
/// logged (fail-open).
fn log_recall(
    ledger: Option<&mut Box<dyn LedgerBackend>>,
    request: &RecallRequest,
    ctx: &Context,
    event: &traffic::TrafficEvent,
) -> Option<String> {
    let mut opened;
    let backend = match ledger {
        Some(backend) => backend,
        None => {
            let explicit = request.ledger.as_deref().filter(|l| !l.is_empty());
            match resolve::open_ledger(explicit, ctx) {
                Ok(o) => {
                    opened = o.backend;
                    &mut opened
                }
                Err(err) => {
                    return Some(format!("the recall's traffic event was not logged: {err}"));
                }
            }
        }
    };
    ledger_traffic::append(backend.as_mut(), &[event.to_append()])
        .err()
        .map(|err| format!("the recall's traffic event was not logged: {err}"))
}

/// Runs `recall` on the context with its route applied: the packet, and warnings naming
/// what it failed open on.
pub fn run(request: &RecallRequest, ctx: &Context) -> Result<Outcome, Error> {
    if !(1..=session::MAX_TTL_SECONDS).contains(&request.session_ttl) {
        return Err(SessionError::Ttl.into());
    }
    // The traffic log is on when a ledger is configured: --ledger or REWARD_MEMORY_LEDGER.
    let traffic_on = request.ledger.is_some() || ctx.env.ledger.is_some();
    let epsilon = match request.explore {
        None => 0.0,
        Some(e) => {
            traffic::parse_epsilon(&e.to_string()).map_err(request_error)?;
            if !traffic_on {
                return Err(request_error(
                    "--explore needs the traffic log, which records the random order's propensities: give --ledger [LOCATION] or set REWARD_MEMORY_LEDGER",
                ));
            }
            e
        }
    };
    let mut resolved = resolve_inputs(request, ctx)?;
    let (prior, mut ledger) = match resolved.prior.as_mut() {
        Some(files) => {
            let (setup, ledger) = prior_setup(files, request)?;
            (Some(setup), ledger)
        }
        None => (None, None),
    };
    let mut warnings = Vec::new();
    let mut answered = match &resolved.input {
        Some(input) => recall_explicit(input, ctx, prior.as_ref(), &mut warnings)?,
        None => recall_configured(request, ctx, prior.as_ref(), &mut warnings)?,
    };
    let mut opaque = opaque_refs(&answered.session);
    // Every provider result, before the prior drops any: the traffic event's candidates.
    let provider: Vec<(String, Option<f64>)> = answered
        .session
        .items
        .iter()
        .map(|i| (short16(&i.memory_ref), i.relevance))
        .collect();
    let prior_run = match &prior {
        None => PriorRun {
            reason: Some("rank_prior_not_requested"),
            ..PriorRun::default()
        },
        Some(prior) => run_prior(
            &mut answered.session,
            &mut opaque,
            prior,
            ledger.as_mut(),
            traffic_on,
            &mut warnings,
        ),
    };
    let policy_order = positions(&provider, &answered.session);
    let pool: Vec<String> = match &prior_run.pool {
        Some(pool) => pool.clone(),
        None => answered
            .session
            .items
            .iter()
            .map(|i| short16(&i.memory_ref))
            .collect(),
    };
    let explored = explore_recall(
        &mut answered.session,
        &mut opaque,
        &pool,
        epsilon,
        &mut warnings,
    );
    // With --rank-prior (or a --limit above the request's) a pool was fetched: --limit
    // is what is shown, in the final order (the prior's, or the provider's when it stayed
    // off; after exploration).
    let limit = answered.limit;
    let requested_count = match prior.as_ref() {
        Some(prior) => Some(prior.fetch_count(limit)),
        None => (limit > answered.request_limit).then_some(limit),
    };
    let candidate_fetch = requested_count.map(|requested_count| CandidateFetch {
        candidate_pool: prior.as_ref().map(|p| p.profile.candidate_pool),
        limit,
        request_limit: answered.request_limit,
        requested_count,
        fetched_count: provider.len(),
        cut_count: cut_to_limit(&mut answered.session, &mut opaque, limit),
    });
    let draft = TrafficDraft {
        shown: traffic::Shown {
            in_pool: provider.iter().map(|(d, _)| pool.contains(d)).collect(),
            shown_order: positions(&provider, &answered.session),
            policy_order,
            candidates: provider,
            epsilon,
        },
        kind: if prior_run.packet.is_some() {
            traffic::LoggingPolicyKind::RankPrior
        } else {
            traffic::LoggingPolicyKind::Semantic
        },
        profile_digest: prior
            .as_ref()
            .filter(|_| prior_run.packet.is_some())
            .map(|p| p.profile.digest()),
        explored,
        shadow: prior_run.shadow,
    };
    let (rank_prior, rank_prior_reason_code) = (prior_run.packet, prior_run.reason);
    // The profile is part of the policy only when it re-ordered the results.
    let applied_profile = resolved
        .prior
        .as_ref()
        .filter(|_| rank_prior.is_some())
        .map(|files| &files.profile);
    let context = answered.context(applied_profile);
    let session = answered.session;
    // The session is a convenience for `apply`: failing to store it never fails the
    // recall (fail-open); the packet says why there is none.
    let mut fields = CommandFields {
        session_ref: None,
        session_expires_at: None,
        session_reason_code: None,
        rank_prior,
        rank_prior_reason_code,
        candidate_fetch,
        retrieval_snapshot_ref: None,
        policy_snapshot_ref: None,
    };
    if !has_results(&session) {
        fields.session_reason_code = Some("recall_not_completed");
    } else {
        fields.retrieval_snapshot_ref = context.retrieval_snapshot_ref.clone();
        fields.policy_snapshot_ref = context.policy_snapshot_ref.clone();
        let root = resolve::runtime_root(ctx);
        match crate::runtime::sessions::store(
            &root,
            &session,
            &opaque,
            &context,
            request.session_ttl,
        ) {
            Ok((session_ref, expires)) => {
                fields.session_ref = Some(session_ref);
                fields.session_expires_at = Some(expires);
            }
            Err(err) => {
                fields.session_reason_code = Some(match err {
                    SessionError::Untrusted(_) => "recall_session_store_untrusted",
                    _ => "recall_session_store_unavailable",
                });
                warnings.push(format!("no recall session was stored: {err}"));
            }
        }
    }
    // The traffic log (issue 22): a recall that `apply` can name (it has a session) in a
    // complete partition. Fail-open: a failure is a warning, never a failed recall.
    if traffic_on && let Some(recall_id) = &fields.session_ref {
        let partition = traffic_partition(&session, &context);
        match partition {
            None => warnings.push(
                "the recall's traffic event was not logged: the explicit form (--input) names no agent or project, so the recall has no utility partition".to_owned(),
            ),
            Some(partition) => {
                let event = traffic::recall_event(traffic::RecallFacts {
                    recall_id,
                    observed_at: &answered.observed_at,
                    partition,
                    kind: draft.kind,
                    profile_digest: draft.profile_digest,
                    explored: draft.explored,
                    shown: &draft.shown,
                    shadow: draft.shadow,
                });
                if let Some(warning) = log_recall(ledger.as_mut(), request, ctx, &event) {
                    warnings.push(warning);
                }
            }
        }
    }
    let notes = Notes {
        warnings,
        ..Notes::default()
    };
    // Taken from the transient items after the session, the receipt's context and the
    // traffic event were built: the summaries reach the printed packet only.
    let summaries: Option<Vec<String>> = request.deliver_content.then(|| {
        session
            .items
            .iter()
            .map(|item| item.content_summary.clone())
            .collect()
    });
    let packet = finish_packet(session, fields);
    let packet = match summaries {
        Some(summaries) => delivery::deliver(packet, &summaries),
        None => packet,
    };
    Ok(Outcome::success(packet).with_notes(notes))
}

/// The recall's utility partition: the route's agent and project, the answering corpus
/// and surface, the session's snapshot refs; `None` when one is unknown.
fn traffic_partition(
    session: &RecallSession,
    context: &SessionContext,
) -> Option<traffic::TrafficPartition> {
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Some(traffic::TrafficPartition {
        scope: traffic::TrafficScope {
            agent_id: context.agent_id.clone()?,
            project_id: context.project_id.clone()?,
            corpus_id: text(session.packet.get("corpus_id"))?,
            surface_id: text(session.packet.get("surface_id"))?,
        },
        retrieval_snapshot_ref: context.retrieval_snapshot_ref.clone()?,
        policy_snapshot_ref: context.policy_snapshot_ref.clone()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another front end (the MCP server, `commands/mcp.rs`) sends the request as JSON.
    #[test]
    fn a_request_reads_from_json_with_its_defaults() {
        let request: RecallRequest = serde_json::from_str(
            r#"{"goal_id": "goal:g", "agent_id": "agent:a", "query": ["q"],
                "query_summary": ["s"], "session_ttl": 60, "max_input_bytes": 1024}"#,
        )
        .expect("request");
        assert_eq!(request.query, ["q"]);
        assert_eq!(request.input, None);
        assert_eq!(request.rank_prior, None);
        assert_eq!(request.session_ttl, 60);
    }
}

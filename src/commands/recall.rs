//! `recall`: the Stage-3 seam (§10.2–10.4) through the binary, and the recall session
//! store that `apply` ([`super::apply`]) reads back.
//!
//! `recall` builds the §10.2 request (from the goal's experiment route, or an explicit
//! `--input`), runs §10.4 against the route's provider and prints the public packet with
//! each result's relevance score and rank; it keeps the raw refs in a private recall
//! session (see [`crate::recall::session`]) and, with `--rank-prior`, re-orders the results with
//! the bounded utility prior, whose utility is a projection packet or the utility ledger
//! (the stored subjects of the results' digests, [`crate::ledger::view`]).
//! `apply` maps the agent's opaque refs back through that session and runs §10.5
//! ([`crate::recall::decision`]). Files, the clock and randomness go through
//! [`crate::io`]; the rules live in the pure modules this one calls. Design:
//! `docs/recall.md`.
//!
//! Trust ([`crate::io::trust`]): the session directories from the runtime root down are
//! checked before a session is written or read, the session key and each session are
//! opened without following links and checked, and the expiry sweep removes only our
//! own `rms_<hex>.json` files (and our stale temporaries), never through a link.
//! `recall` fails open on an untrusted session store (no session,
//! `recall_session_store_untrusted`, a warning naming the path on stderr) and on an
//! untrusted embedded store (`provider_unavailable`, the same kind of warning); `apply`
//! refuses an untrusted or modified session as a request error.

use std::path::Path;

use crate::cli::RecallArgs;
use crate::contract::experiment::{self, CorpusEntry, SurfaceRoute};
use crate::contract::ingest::policy::IDENTITY_SCOPE_FIELDS;
use crate::error::Error;
use crate::io;
use crate::io::trust::{self, TrustedDirError, Untrusted};
use crate::ledger::LedgerBackend;
use crate::ledger::view as ledger_view;
use crate::obj;
use crate::provider::{DefaultFactory, ProviderConfig};
use crate::ranking::prior::{
    self as rank_prior, Candidate, Partition, Profile, UtilityView, Verdict,
};
use crate::wire::digest::short16;
use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt::pystr;
use crate::wire::text::{self, FieldError};
use crate::wire::timestamp::parse_aware;

use crate::recall::session::{self, SessionError, SessionKey, StoredSession};
use crate::recall::{
    ProviderSource, RecallSession, build_recall_request, credential_free, execute_recall,
};

use super::{Context, Notes, Outcome, resolve};

fn request_error(message: impl Into<String>) -> Error {
    Error::from(FieldError(message.into()))
}

fn read_object(ctx: &Context, spec: &str, limit: u64) -> Result<Value, Error> {
    Ok(io::read_input_object(&ctx.env, spec, limit)?)
}

// ---------------------------------------------------------------------------------------
// The rank-prior setup of a recall
// ---------------------------------------------------------------------------------------

/// Where the prior's utility comes from.
enum Utility {
    /// A projection packet (`--projection`), already checked against the partition.
    Projection(UtilityView),
    /// The utility ledger (`--ledger`), read for the results' digests once they are known.
    Ledger(Box<dyn LedgerBackend>),
}

/// Everything `--rank-prior` needs, read and checked before any provider call.
struct PriorSetup {
    profile: Profile,
    partition: Partition,
    utility: Utility,
    verdict: Option<Verdict>,
}

/// Why the prior stayed off when the ledger could not be read after the recall (it was
/// readable before the provider call): recall fails open.
pub const LEDGER_UNAVAILABLE: &str = "utility_ledger_unavailable";

fn load_prior(args: &RecallArgs, ctx: &Context) -> Result<Option<PriorSetup>, Error> {
    let (Some(profile), Some(partition)) = (&args.rank_prior, &args.partition) else {
        return Ok(None);
    };
    let limit = args.input_limit.max_input_bytes;
    let profile = Profile::from_value(&read_object(ctx, profile, limit)?)?;
    let partition = Partition::from_value(&read_object(ctx, partition, limit)?)?;
    let utility = match (&args.projection, &args.ledger) {
        (Some(projection), _) => {
            let view = UtilityView::from_projection(&read_object(ctx, projection, limit)?)?;
            rank_prior::check_partition(&view, &partition)?;
            Utility::Projection(view)
        }
        (None, Some(location)) => {
            let arg = crate::cli::LedgerLocationArg {
                ledger: Some(location.clone()).filter(|l| !l.is_empty()),
                runtime_root: None,
            };
            let mut opened = super::resolve::open_ledger(arg.ledger.as_deref(), ctx)?;
            ledger_view::check_readable(opened.backend.as_mut(), &partition)?;
            Utility::Ledger(opened.backend)
        }
        (None, None) => {
            return Err(request_error(
                "--rank-prior needs the utility: --projection FILE or --ledger [LOCATION]",
            ));
        }
    };
    let verdict = match &args.evaluation {
        Some(path) => Some(Verdict::from_value(&read_object(ctx, path, limit)?)?),
        None => None,
    };
    Ok(Some(PriorSetup {
        profile,
        partition,
        utility,
        verdict,
    }))
}

/// The partition must name the recalled surface and one of the recallable corpora.
fn check_prior_target(
    prior: Option<&PriorSetup>,
    surface_id: &str,
    corpus_ids: &[String],
) -> Result<(), Error> {
    let Some(prior) = prior else {
        return Ok(());
    };
    if prior.partition.scope.surface_id != surface_id {
        return Err(request_error(
            "partition scope surface_id must be the recalled surface",
        ));
    }
    if !corpus_ids
        .iter()
        .any(|c| *c == prior.partition.scope.corpus_id)
    {
        return Err(request_error(
            "partition scope corpus_id must be a corpus this recall reads",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// recall
// ---------------------------------------------------------------------------------------

fn or_null(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(Value::Null)
}

/// The §10.2 request and checkpoint for one configured corpus: the corpus's own scope,
/// its declared source revision as current, and the route's read authority (the
/// standing policy's `authority_source_ref`), as `ingest-event`'s readback builds them.
fn configured_request(
    entry: &CorpusEntry,
    surface_id: &str,
    mode: &str,
    queries: &[Value],
    limit: i64,
    observed_at: &str,
) -> Result<Map, Error> {
    let corpus = &entry.corpus;
    let scope = corpus
        .get("scope")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let revision = corpus
        .get("freshness")
        .and_then(|f| f.get("source_revision"));
    let mut request = obj! {
        "workspace_ref" => or_null(scope.get("workspace_ref")),
        "project_ref" => or_null(scope.get("project_ref")),
    };
    let mut checkpoint = obj! {
        "verified" => true,
        "corpus_id" => or_null(corpus.get("corpus_id")),
        "workspace_ref" => or_null(scope.get("workspace_ref")),
        "project_ref" => or_null(scope.get("project_ref")),
    };
    for f in IDENTITY_SCOPE_FIELDS {
        if let Some(v) = scope.get(f).filter(|v| v.is_truthy()) {
            request.insert(f, v.clone());
            checkpoint.insert(f, v.clone());
        }
    }
    let request = request.merged(&obj! {
        "surface_id" => surface_id,
        "revision_ref" => or_null(revision),
        "mode" => mode,
        "query_kind" => "business_recall",
        "queries" => Value::Array(queries.to_vec().into()),
        "limit" => limit,
        "observed_at" => observed_at,
        "freshness_context" => obj! {
            "source_truth_current" => true,
            "source_revision" => or_null(revision),
            "age_seconds" => 0,
        },
        "conflict_state" => "clear",
        "raw_content_captured" => false,
    });
    let checkpoint = checkpoint.merged(&obj! {
        "surface_id" => surface_id,
        "read_authority" => or_null(corpus.get("read_authority")),
        "source_ref" => or_null(entry.standing_policy.get("authority_source_ref")),
    });
    let packet = build_recall_request(
        &Value::Object(corpus.clone()),
        &request,
        Some(&Value::Object(checkpoint)),
    )?;
    credential_free(&packet)?;
    Ok(packet)
}

fn route_for(
    args: &RecallArgs,
    ctx: &Context,
    goal: &str,
    agent: &str,
) -> Result<SurfaceRoute, Error> {
    let resolution = resolve::experiment(ctx, goal, agent)?;
    let Some(config) = resolution.config else {
        let status = pystr(resolution.status.get("status"));
        return Err(request_error(format!(
            "Reward Memory experiment is unavailable for this agent: {}",
            if status.is_empty() {
                "unavailable"
            } else {
                &status
            }
        )));
    };
    let surface_id = match (&args.surface_id, config.surfaces.as_slice()) {
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

fn configured_queries(args: &RecallArgs, route: &SurfaceRoute) -> Result<Vec<Value>, Error> {
    if args.query.is_empty() {
        return Err(request_error(
            "the configured form needs --query and --query-summary",
        ));
    }
    if args.query.len() != args.query_summary.len() {
        return Err(request_error(
            "give one --query-summary for each --query, in the same order",
        ));
    }
    let max = usize::try_from(route.recall_profile.max_queries).unwrap_or(1);
    if args.query.len() > max {
        return Err(request_error(format!(
            "the surface's recall profile allows at most {max} queries"
        )));
    }
    Ok(args
        .query
        .iter()
        .zip(&args.query_summary)
        .map(|(q, s)| Value::Object(obj! {"query" => q.as_str(), "query_summary" => s.as_str()}))
        .collect())
}

/// Runs the configured form: each corpus of the surface in configured order until one
/// recall is not `empty` (§10.8's walk). Returns the session and its corpus id.
fn recall_configured(
    args: &RecallArgs,
    ctx: &Context,
    prior: Option<&PriorSetup>,
    warnings: &mut Vec<String>,
) -> Result<RecallSession, Error> {
    let (Some(goal), Some(agent)) = (args.goal_id.as_deref(), args.agent_id.as_deref()) else {
        return Err(request_error(
            "recall needs --input, or --goal-id and --agent-id with --query",
        ));
    };
    let route = route_for(args, ctx, goal, agent)?;
    let queries = configured_queries(args, &route)?;
    let profile_limit = route.recall_profile.limit;
    let limit = args.limit.unwrap_or(profile_limit);
    if limit > profile_limit {
        return Err(request_error(format!(
            "--limit must not exceed the surface's recall profile limit ({profile_limit})"
        )));
    }
    let observed_at = match &args.observed_at {
        Some(t) => t.clone(),
        None => io::utc_now_iso(),
    };
    check_prior_target(prior, &route.surface_id, &route.corpus_ids)?;
    let factory = resolve::provider_factory(ctx);
    let mut last: Option<RecallSession> = None;
    for entry in &route.recall_corpora {
        let request = configured_request(
            entry,
            &route.surface_id,
            &route.recall_profile.mode,
            &queries,
            limit,
            &observed_at,
        )?;
        let session = execute_recall(
            &request,
            &entry.provider_binding,
            ProviderSource::Factory(&factory),
        )?;
        warn_of_store(&factory, &entry.provider_binding, warnings);
        let empty = session.packet.get("status").and_then(Value::as_str) == Some("empty");
        last = Some(session);
        if !empty {
            break;
        }
    }
    last.ok_or_else(|| request_error("the surface has no recall corpus"))
}

/// Runs the explicit form: `{"corpus", "request", "read_authority_checkpoint",
/// "provider_binding"}`.
fn recall_explicit(
    spec: &str,
    ctx: &Context,
    prior: Option<&PriorSetup>,
    limit: u64,
    warnings: &mut Vec<String>,
) -> Result<RecallSession, Error> {
    let map = match read_object(ctx, spec, limit)? {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let allowed = [
        "corpus",
        "request",
        "read_authority_checkpoint",
        "provider_binding",
    ];
    let extra: Vec<&str> = map.keys().filter(|k| !allowed.contains(k)).collect();
    if !extra.is_empty() {
        return Err(request_error(format!(
            "recall input contains unsupported fields: {}",
            keys::list(extra)
        )));
    }
    let corpus = map.get("corpus").cloned().unwrap_or_default();
    let request = text::object(map.get("request"), "request")?;
    let binding = text::object(map.get("provider_binding"), "provider_binding")?;
    let packet = build_recall_request(&corpus, request, map.get("read_authority_checkpoint"))?;
    credential_free(&packet)?;
    let corpus_id = pystr(packet.get("corpus").and_then(|c| c.get("corpus_id")));
    let surface_id = pystr(packet.get("request").and_then(|r| r.get("surface_id")));
    check_prior_target(prior, &surface_id, &[corpus_id])?;
    let factory = resolve::provider_factory(ctx);
    let session = execute_recall(&packet, binding, ProviderSource::Factory(&factory))?;
    warn_of_store(&factory, binding, warnings);
    Ok(session)
}

/// Adds the reason the embedded store of `binding` was not trusted, once.
fn warn_of_store(factory: &DefaultFactory, binding: &Map, warnings: &mut Vec<String>) {
    if let Some(problem) = factory.store_trust_problem(&ProviderConfig::from_binding(binding))
        && !warnings.contains(&problem)
    {
        warnings.push(problem);
    }
}

/// Applies the prior to a finished recall; returns the reason code when it stays off,
/// else the ranking (and reorders/filters the session's items and results).
fn apply_prior(
    session: &mut RecallSession,
    opaque: &mut Vec<String>,
    prior: &mut PriorSetup,
) -> Result<Value, &'static str> {
    let packet = &session.packet;
    if packet.get("status").and_then(Value::as_str) != Some("completed") {
        return Err("recall_not_completed");
    }
    if pystr(packet.get("corpus_id")) != prior.partition.scope.corpus_id {
        return Err("partition_corpus_not_recalled");
    }
    // Ranking influence is earned: without a qualified verdict for exactly this
    // profile the prior stays off (fail-open: the recall itself is still printed).
    match &prior.verdict {
        None => return Err(rank_prior::EVALUATION_MISSING),
        Some(verdict) => {
            if let Some(reason) = verdict.blocks(&prior.profile) {
                return Err(reason);
            }
        }
    }
    let mut candidates = Vec::with_capacity(session.items.len());
    for item in &session.items {
        let relevance = item.relevance.ok_or("relevance_scores_unavailable")?;
        candidates.push(
            Candidate::new(&short16(&item.memory_ref), relevance)
                .map_err(|_| "relevance_scores_unusable")?,
        );
    }
    let from_ledger;
    let view = match &mut prior.utility {
        Utility::Projection(view) => &*view,
        Utility::Ledger(backend) => {
            let digests: Vec<&str> = candidates
                .iter()
                .map(|c| c.memory_ref_digest.as_str())
                .collect();
            from_ledger = ledger_view::utility_view(backend.as_mut(), &prior.partition, &digests)
                .map_err(|_| LEDGER_UNAVAILABLE)?;
            &from_ledger
        }
    };
    let ranking = rank_prior::rank(&candidates, view, &prior.partition, &prior.profile)
        .map_err(|_| "relevance_scores_unusable")?;
    let results: Vec<Value> = session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let mut items = Vec::new();
    let mut kept_results = Vec::new();
    let mut kept_opaque = Vec::new();
    for ranked in &ranking.ranked {
        if let Some(i) = candidates
            .iter()
            .position(|c| c.memory_ref_digest == ranked.memory_ref_digest)
        {
            items.push(session.items[i].clone());
            kept_results.push(results.get(i).cloned().unwrap_or_default());
            kept_opaque.push(opaque.get(i).cloned().unwrap_or_default());
        }
    }
    let found = !items.is_empty();
    session.items = items;
    *opaque = kept_opaque;
    let count = kept_results.len();
    let packet = std::mem::take(&mut session.packet);
    session.packet = packet.merged(&obj! {
        "result_count" => count,
        "results" => Value::Array(kept_results.into()),
        "result_readback_verified" => found,
    });
    if !found {
        session.packet = std::mem::take(&mut session.packet).merged(&obj! {
            "status" => "empty",
            "reason_code" => "rank_prior_semantic_stage_empty",
        });
    }
    Ok(rank_prior::packet(
        &ranking,
        &prior.partition,
        &prior.profile,
    ))
}

/// Most bytes read from a session file or the session key.
const MAX_SESSION_BYTES: u64 = 4 << 20;

/// What the trust rule's messages call the session directory (and those above it).
const SESSION_DIR: &str = "recall session directory";
/// ... the session key.
const SESSION_KEY: &str = "recall session key";
/// ... a session file.
const SESSION_FILE: &str = "recall session";

/// A trust failure of the session store: a refusal is [`SessionError::Untrusted`]; a path
/// of the wrong kind or one that cannot be inspected is the plain failure `other`.
fn trust_error(err: Untrusted, other: impl Fn(String) -> SessionError) -> SessionError {
    if err.is_refusal() {
        SessionError::Untrusted(err.to_string())
    } else {
        other(err.to_string())
    }
}

/// Reads the runtime root's session key (`None`: there is none yet); a failure that is
/// not a trust refusal becomes `other`.
fn read_key(
    path: &Path,
    other: impl Fn(String) -> SessionError,
) -> Result<Option<SessionKey>, SessionError> {
    let opened = trust::open_secret_file(path, SESSION_KEY);
    let file = match opened {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(None),
        Err(err) => return Err(trust_error(err, &other)),
    };
    let bytes = trust::read_opened(file, MAX_SESSION_BYTES, SESSION_KEY, path)
        .map_err(|err| trust_error(err, &other))?;
    SessionKey::parse(&bytes)
        .map(Some)
        .ok_or_else(|| SessionError::BadKey(path.display().to_string()))
}

/// The runtime root's session key, created (0600) by the first recall.
fn write_key(path: &Path) -> Result<SessionKey, SessionError> {
    if let Some(key) = read_key(path, SessionError::Store)? {
        return Ok(key);
    }
    let store = |e: std::io::Error| SessionError::Store(e.kind().to_string());
    let random = io::random_hex(session::KEY_BYTES).map_err(store)?;
    io::create_private_file_once(path, SessionKey::file_text(&random).as_bytes()).map_err(store)?;
    // Ours, or the one a concurrent recall created first.
    read_key(path, SessionError::Store)?
        .ok_or_else(|| SessionError::Store("the session key vanished".to_owned()))
}

/// What the sweep of the session directory may remove: our sessions and temporaries.
fn sweepable(name: &str) -> Option<io::Sweepable> {
    if session::is_session_file_name(name) {
        return Some(io::Sweepable::Expiring);
    }
    session::temporary_pid(name).map(|pid| io::Sweepable::Temporary { pid })
}

/// Stores the session (mode 0600) and removes expired ones; returns the ref and expiry.
/// The directories from the runtime root down are checked (and created 0700) first.
fn store_session(
    session: &RecallSession,
    opaque: &[String],
    ctx: &Context,
    ttl: u64,
) -> Result<(String, String), SessionError> {
    let store = |e: std::io::Error| SessionError::Store(e.kind().to_string());
    let root = resolve::runtime_root(ctx);
    let dir = session::session_dir(&root);
    trust::ensure_private_dirs(&root, &dir, SESSION_DIR).map_err(|err| match err {
        TrustedDirError::Untrusted(err) => trust_error(err, SessionError::Store),
        TrustedDirError::Create(e) => store(e),
    })?;
    io::sweep_private_files(&dir, sweepable);
    let key = write_key(&session::key_path(&root))?;
    let created = io::utc_now_iso();
    let random = io::random_hex(session::SESSION_REF_BYTES).map_err(store)?;
    let session_ref = session::session_ref(&random);
    let expires = session::expiry(&created, ttl)
        .ok_or_else(|| SessionError::Store("the clock reading is not a timestamp".to_owned()))?;
    let bytes = session::encode(session, opaque, &session_ref, &created, &expires, &key);
    let expires_time = chrono::DateTime::parse_from_rfc3339(&expires)
        .ok()
        .map(std::time::SystemTime::from);
    io::replace_private_file(
        &session::session_path(&dir, &session_ref),
        bytes.as_bytes(),
        expires_time,
    )
    .map_err(store)?;
    Ok((session_ref, expires))
}

/// Runs `recall` on the context with its route applied: the packet, and warnings naming
/// what it failed open on.
pub fn run(args: &RecallArgs, ctx: &Context) -> Result<Outcome, Error> {
    if !(1..=session::MAX_TTL_SECONDS).contains(&args.session_ttl) {
        return Err(SessionError::Ttl.into());
    }
    let mut prior = load_prior(args, ctx)?;
    let mut warnings = Vec::new();
    let mut session = match &args.input {
        Some(spec) => recall_explicit(
            spec,
            ctx,
            prior.as_ref(),
            args.input_limit.max_input_bytes,
            &mut warnings,
        )?,
        None => recall_configured(args, ctx, prior.as_ref(), &mut warnings)?,
    };
    let mut opaque: Vec<String> = session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .map(|x| pystr(x.get("memory_ref")))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let (prior_packet, prior_reason) = match &mut prior {
        None => (Value::Null, Value::from("rank_prior_not_requested")),
        Some(prior) => match apply_prior(&mut session, &mut opaque, prior) {
            Ok(packet) => (packet, Value::Null),
            Err(reason) => (Value::Null, Value::from(reason)),
        },
    };
    let applied = !prior_packet.is_null();
    let results: Vec<Value> = session
        .packet
        .get("results")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default()
        .into_iter()
        .zip(&session.items)
        .enumerate()
        .map(|(i, (result, item))| {
            let base = result.as_object().cloned().unwrap_or_default();
            Value::Object(base.merged(&obj! {
                "memory_ref_digest" => short16(&item.memory_ref),
                "relevance_score" => item.relevance,
                "rank" => i + 1,
            }))
        })
        .collect();
    let completed = session.packet.get("status").and_then(Value::as_str) == Some("completed")
        && !session.items.is_empty();
    // The session is a convenience for `apply`: failing to store it never fails the
    // recall (fail-open); the packet says why there is none.
    let (session_ref, expires, session_reason) = if !completed {
        (
            Value::Null,
            Value::Null,
            Value::from("recall_not_completed"),
        )
    } else {
        match store_session(&session, &opaque, ctx, args.session_ttl) {
            Ok((r, e)) => (Value::from(r), Value::from(e), Value::Null),
            Err(err) => {
                let code = match err {
                    SessionError::Untrusted(_) => "recall_session_store_untrusted",
                    _ => "recall_session_store_unavailable",
                };
                warnings.push(format!("no recall session was stored: {err}"));
                (Value::Null, Value::Null, Value::from(code))
            }
        }
    };
    let packet = session.packet.merged(&obj! {
        "results" => Value::Array(results.into()),
        "recall_session_ref" => session_ref,
        "recall_session_expires_at" => expires,
        "recall_session_reason_code" => session_reason,
        "rank_prior_applied" => applied,
        "rank_prior_reason_code" => prior_reason,
        "rank_prior" => prior_packet,
    });
    let notes = Notes {
        warnings,
        ..Notes::default()
    };
    Ok(Outcome::success(Value::Object(packet)).with_notes(notes))
}

/// Reads a live session back: the directories from the runtime root down, the session
/// file and the key must pass the trust rule, and the document its integrity check.
pub(super) fn load_session(session_ref: &str, ctx: &Context) -> Result<StoredSession, Error> {
    if !session::is_session_ref(session_ref) {
        return Err(SessionError::InvalidRef.into());
    }
    let not_found = || SessionError::NotFound(session_ref.to_owned());
    let unreadable = |_: String| SessionError::Unreadable(session_ref.to_owned());
    let root = resolve::runtime_root(ctx);
    let dir = session::session_dir(&root);
    match trust::check_private_dirs(&root, &dir, SESSION_DIR) {
        Ok(true) => {}
        Ok(false) => return Err(not_found().into()),
        Err(err) => return Err(trust_error(err, unreadable).into()),
    }
    let path = session::session_path(&dir, session_ref);
    let file = match trust::open_trusted_file(&path, SESSION_FILE) {
        Ok(Some(file)) => file,
        Ok(None) => return Err(not_found().into()),
        Err(err) => return Err(trust_error(err, unreadable).into()),
    };
    let bytes = trust::read_opened(file, MAX_SESSION_BYTES, SESSION_FILE, &path)
        .map_err(|err| trust_error(err, unreadable))?;
    let key_path = session::key_path(&root);
    let key = read_key(&key_path, unreadable)?.ok_or_else(|| SessionError::Unverified {
        session: session_ref.to_owned(),
        why: format!("the session key {} is missing", key_path.display()),
    })?;
    let stored = session::decode(&bytes, session_ref, &key)?;
    let now = parse_aware(&io::utc_now_iso())
        .map_err(|_| SessionError::Unreadable(session_ref.to_owned()))?;
    stored.check_live(now)?;
    Ok(stored)
}

//! `utility-attribute`: attributes a verified outcome to the memories of an application
//! receipt. The receipt comes from `--receipt FILE` or the receipt store
//! ([`crate::runtime::receipts`]); the facts, the deterministic evaluator, the proposal check
//! and the quota and sample decisions are [`crate::attribution`]'s; this shell runs the
//! external evaluators ([`crate::io::evaluator`]), keeps their quota state, appends the
//! observations to the ledger and prints `memory_utility_attribution_receipt_v0`.
//!
//! Fail-open: an evaluator that times out, prints garbage, is missing, claims too much,
//! is sampled out or over quota gets its status and writes nothing; the command still
//! exits 0. A bad request (flags, receipt, profile, evidence) is exit 2.
//!
//! In a ledger that keeps a traffic log (issue 22) each attributed receipt's verified
//! outcome is appended to it too ([`crate::recall::traffic::OutcomeEvent`]): the reward
//! `rank-evaluate --ledger` estimates from. A failure there is a warning.
//!
//! `--pending --outcomes FILE.jsonl` settles the receipts `apply` queued: entries past
//! their window are moved aside as expired, then every outcome line (up to `--max`) is
//! attributed like one run, each evaluator's observations appended in batches of its
//! `batch_size`; the ledger's observation ids make a re-run append nothing (`duplicate`).

use std::path::Path;
use std::time::Duration;

use crate::attribution::packet::{
    Attribution, EvaluatorResult, Partition, PendingSummary, ScopeIds,
};
use crate::attribution::profile::{ControlledReplay, Evaluator, External, Quota};
use crate::attribution::proposal;
use crate::attribution::schedule;
use crate::attribution::{
    AttributionError, AttributionReceipt, EvidenceItem, Facts, Judgment, OutcomeStatus, Profile,
    Status,
};
use crate::cli::UtilityAttributeArgs;
use crate::error::Error;
use crate::io;
use crate::io::evaluator::{self, RunEnd};
use crate::ledger::engine::{self, Record};
use crate::ledger::{LedgerBackend, LedgerResult, Provenance};
use crate::obj;
use crate::recall::traffic::{TrafficPartition, TrafficScope, outcome_event};
use crate::runtime::receipts;
use crate::utility::observation::{AttributionLevel, EvidenceBasis};
use crate::wire::json::{self, Value};
use crate::wire::schema::AlwaysTrue;

use super::{Context, Outcome, resolve};

/// What `utility-attribute` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UtilityAttributeRequest {
    /// A file holding the receipt object (or the whole apply packet); `-` is stdin.
    pub receipt: Option<String>,
    /// The rma_ id of a receipt stored under the runtime root.
    pub receipt_id: Option<String>,
    pub outcome_ref: Option<String>,
    /// `succeeded`, `failed` or `partial`.
    pub outcome_status: Option<String>,
    #[serde(default)]
    pub verified: bool,
    /// `KIND:REF:RESULT:DIGEST` items.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Default: the receipt's.
    pub agent_id: Option<String>,
    /// Default: the receipt's.
    pub project_id: Option<String>,
    pub profile: Option<String>,
    pub evaluator_command: Option<String>,
    /// Timeout of `evaluator_command` in milliseconds (default 10000).
    #[serde(default = "default_evaluator_timeout_ms")]
    pub evaluator_timeout_ms: u64,
    #[serde(default)]
    pub pending: bool,
    pub outcomes: Option<String>,
    pub max: Option<u64>,
    pub ledger: Option<String>,
    #[serde(default = "default_max_input_bytes")]
    pub max_input_bytes: u64,
}

fn default_evaluator_timeout_ms() -> u64 {
    10_000
}

fn default_max_input_bytes() -> u64 {
    crate::cli::DEFAULT_MAX_INPUT_BYTES
}

impl From<&UtilityAttributeArgs> for UtilityAttributeRequest {
    fn from(a: &UtilityAttributeArgs) -> UtilityAttributeRequest {
        UtilityAttributeRequest {
            receipt: a.receipt.clone(),
            receipt_id: a.receipt_id.clone(),
            outcome_ref: a.outcome_ref.clone(),
            outcome_status: a.outcome_status.clone(),
            verified: a.verified,
            evidence: a.evidence.clone(),
            agent_id: a.agent_id.clone(),
            project_id: a.project_id.clone(),
            profile: a.profile.clone(),
            evaluator_command: a.evaluator_command.clone(),
            evaluator_timeout_ms: a.evaluator_timeout_ms,
            pending: a.pending,
            outcomes: a.outcomes.clone(),
            max: a.max,
            ledger: a.location.ledger.clone(),
            max_input_bytes: a.input_limit.max_input_bytes,
        }
    }
}

fn request_error(message: impl Into<String>) -> Error {
    Error::Attribution(AttributionError::Request(message.into()))
}

/// The receipt object of a file: the receipt itself, or an apply packet's `receipt`.
fn receipt_of(value: Value) -> Value {
    let is_packet = value.get("schema_version").and_then(Value::as_str)
        == Some(crate::recall::APPLICATION_SCHEMA_VERSION);
    match (is_packet, value.get("receipt")) {
        (true, Some(receipt)) => receipt.clone(),
        _ => value,
    }
}

fn outcome_status(text: &str) -> Result<OutcomeStatus, Error> {
    OutcomeStatus::parse(text).ok_or_else(|| {
        request_error(format!(
            "outcome_status {text:?} must be succeeded, failed or partial"
        ))
    })
}

fn evidence_items(texts: &[String]) -> Result<Vec<EvidenceItem>, Error> {
    Ok(texts
        .iter()
        .map(|t| EvidenceItem::parse(t))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Observations ready to append: each id with its JSON bytes.
type Ready = Vec<(String, Vec<u8>)>;

/// One attribution to make: its facts.
struct Job {
    facts: Facts,
}

/// One evaluator's part of one job before the append: a final status, or observations
/// to append.
enum Part {
    Done(Status, Option<&'static str>),
    Observations(Ready),
}

/// What the shell passes the pure rules: the clock reading, once.
struct Clock {
    iso: String,
    unix: i64,
}

/// An evaluator's quota bookkeeping during one run.
struct QuotaBook {
    runs: Vec<i64>,
    added: Vec<i64>,
    used: u64,
}

/// Runs the profile's evaluators over the jobs, appends, and builds the receipt.
struct Runner<'a> {
    profile: &'a Profile,
    root: &'a Path,
    clock: Clock,
}

fn observations_of(
    facts: &Facts,
    judgments: &[Judgment],
    evaluator_id: &str,
    created_at: &str,
) -> Result<Ready, AttributionError> {
    judgments
        .iter()
        .map(|j| {
            let observation = facts.observation(j, evaluator_id, created_at)?;
            let bytes = json::canonical(&observation.to_value()).into_bytes();
            Ok((observation.observation_id.to_string(), bytes))
        })
        .collect()
}

/// The public-safe request an external evaluator reads on stdin. `history` is empty in
/// this version (the partition's ledger history is not read yet).
fn evaluator_request(facts: &Facts, evaluator_id: &str, max_tier: EvidenceBasis) -> Vec<u8> {
    let evidence: Vec<Value> = facts
        .evidence
        .iter()
        .map(|e| Value::from(e.to_text()))
        .collect();
    let request = Value::Object(obj! {
        "schema_version" => "memory_utility_attribution_request_v0",
        "evaluator_id" => evaluator_id,
        "max_tier" => max_tier.as_str(),
        "application_receipt_id" => facts.receipt_id.as_str(),
        "application_receipt" => facts.receipt.clone(),
        "verified_outcome" => facts.verified_outcome(),
        "attribution_context" => facts.context(),
        "evidence" => Value::Array(evidence.into()),
        "permitted_evidence_refs" => json::str_list(&facts.permitted_refs()),
        "history" => Value::Array(Box::default()),
        "proposal_fields" => json::str_list(&["utility_label", "attribution_level", "evidence_basis", "confidence", "reason_codes", "evidence_refs", "memory_ref_digests"]),
    });
    json::canonical(&request).into_bytes()
}

/// The command's view of one external process: an external evaluator or the replay.
struct Command<'a> {
    id: &'a str,
    argv: &'a [String],
    timeout_ms: u64,
    max_output_bytes: u64,
    max_tier: EvidenceBasis,
    sample_rate: f64,
    quota: Option<Quota>,
}

impl<'a> Command<'a> {
    fn external(e: &'a External) -> Command<'a> {
        Command {
            id: &e.evaluator_id,
            argv: &e.argv,
            timeout_ms: e.timeout_ms,
            max_output_bytes: e.max_output_bytes,
            max_tier: e.max_tier,
            sample_rate: e.sample_rate,
            quota: e.quota,
        }
    }

    fn replay(r: &'a ControlledReplay) -> Command<'a> {
        Command {
            id: &r.evaluator_id,
            argv: &r.argv,
            timeout_ms: r.timeout_ms,
            max_output_bytes: r.max_output_bytes,
            max_tier: EvidenceBasis::ControlledReplay,
            sample_rate: 1.0,
            quota: r.quota,
        }
    }
}

impl Runner<'_> {
    fn book(&self, id: &str, quota: Option<Quota>) -> Result<QuotaBook, Error> {
        let runs = match quota {
            Some(_) => receipts::load_quota_runs(self.root, id)?,
            None => Vec::new(),
        };
        let used = quota.map_or(0, |q| {
            schedule::runs_in_window(&runs, self.clock.unix, q.window_seconds)
        });
        Ok(QuotaBook {
            runs,
            added: Vec::new(),
            used,
        })
    }

    fn save_book(&self, id: &str, quota: Option<Quota>, book: &QuotaBook) -> Result<(), Error> {
        if let Some(q) = quota
            && !book.added.is_empty()
        {
            let kept =
                schedule::kept_runs(&book.runs, self.clock.unix, q.window_seconds, &book.added);
            receipts::store_quota_runs(self.root, id, &kept)?;
        }
        Ok(())
    }

    /// One external run for one job.
    fn run_command(
        &self,
        cmd: &Command<'_>,
        job: &Job,
        book: &mut QuotaBook,
        replay: bool,
    ) -> Result<Part, Error> {
        let facts = &job.facts;
        let key = schedule::sample_key(&facts.receipt_id, cmd.id, &facts.outcome_ref);
        if !schedule::sampled_in(&key, cmd.sample_rate) {
            return Ok(Part::Done(Status::SampledOut, Some("sample_rate")));
        }
        if !schedule::quota_allows(book.used, cmd.quota) {
            return Ok(Part::Done(
                Status::QuotaExhausted,
                Some("quota_window_full"),
            ));
        }
        book.used += 1;
        book.added.push(self.clock.unix);
        let request = evaluator_request(facts, cmd.id, cmd.max_tier);
        let end = evaluator::run(
            cmd.argv,
            &request,
            Duration::from_millis(cmd.timeout_ms),
            cmd.max_output_bytes,
        );
        let output = match end {
            RunEnd::Output(bytes) => bytes,
            RunEnd::Timeout => return Ok(Part::Done(Status::Timeout, Some("evaluator_timeout"))),
            RunEnd::Unavailable => {
                return Ok(Part::Done(
                    Status::Unavailable,
                    Some("evaluator_not_executable"),
                ));
            }
            RunEnd::TooLarge => return Ok(Part::Done(Status::Malformed, Some("output_too_large"))),
            RunEnd::Failed => {
                return Ok(Part::Done(
                    Status::Malformed,
                    Some("evaluator_exit_nonzero"),
                ));
            }
        };
        let judgment = match proposal::check(&output, facts, cmd.id, cmd.max_tier) {
            Ok(j) => j,
            Err(rejection) => return Ok(Part::Done(rejection.status, Some(rejection.reason))),
        };
        if replay
            && (judgment.basis != EvidenceBasis::ControlledReplay
                || judgment.level != AttributionLevel::Item)
        {
            return Ok(Part::Done(
                Status::Malformed,
                Some("replay_must_be_controlled_replay_item"),
            ));
        }
        Ok(
            match observations_of(facts, &[judgment], cmd.id, &self.clock.iso) {
                Ok(obs) => Part::Observations(obs),
                Err(_) => Part::Done(Status::Malformed, Some("proposal_invalid")),
            },
        )
    }

    /// Every evaluator's parts over every job: one column per evaluator (and the
    /// replay), one row per job.
    fn evaluate(&self, jobs: &[Job]) -> Result<Vec<(String, u64, Vec<Part>)>, Error> {
        let mut columns: Vec<(String, u64, Vec<Part>)> = Vec::new();
        // Which jobs the deterministic evaluator left at set level (replay selects those).
        let mut set_level = vec![false; jobs.len()];
        for evaluator in &self.profile.evaluators {
            let mut parts = Vec::with_capacity(jobs.len());
            match evaluator {
                Evaluator::Deterministic { evaluator_id } => {
                    for (i, job) in jobs.iter().enumerate() {
                        let f = &job.facts;
                        if f.memory_ref_digests.is_empty() {
                            parts
                                .push(Part::Done(Status::Refused, Some("receipt_binds_no_memory")));
                            continue;
                        }
                        let judgments = crate::attribution::judgment::deterministic(
                            &f.memory_ref_digests,
                            f.applied,
                            f.outcome_status,
                            &f.evidence,
                        );
                        set_level[i] |= f.memory_ref_digests.len() > 1
                            && judgments.iter().all(|j| j.level == AttributionLevel::Set);
                        parts.push(Part::Observations(observations_of(
                            f,
                            &judgments,
                            evaluator_id,
                            &self.clock.iso,
                        )?));
                    }
                    columns.push((evaluator_id.clone(), 1024, parts));
                }
                Evaluator::External(e) => {
                    let cmd = Command::external(e);
                    let mut book = self.book(cmd.id, cmd.quota)?;
                    for (i, job) in jobs.iter().enumerate() {
                        if job.facts.memory_ref_digests.is_empty() {
                            parts
                                .push(Part::Done(Status::Refused, Some("receipt_binds_no_memory")));
                        } else if u64::try_from(i).unwrap_or(u64::MAX) >= e.batch_size {
                            parts.push(Part::Done(
                                Status::QuotaExhausted,
                                Some("batch_size_reached"),
                            ));
                        } else {
                            parts.push(self.run_command(&cmd, job, &mut book, false)?);
                        }
                    }
                    self.save_book(cmd.id, cmd.quota, &book)?;
                    columns.push((e.evaluator_id.clone(), e.batch_size, parts));
                }
            }
        }
        if let Some(r) = &self.profile.controlled_replay {
            let cmd = Command::replay(r);
            let mut book = self.book(cmd.id, cmd.quota)?;
            let mut parts = Vec::with_capacity(jobs.len());
            for (i, job) in jobs.iter().enumerate() {
                if set_level[i] {
                    parts.push(self.run_command(&cmd, job, &mut book, true)?);
                } else {
                    parts.push(Part::Done(Status::NotSelected, Some("not_set_level")));
                }
            }
            self.save_book(cmd.id, cmd.quota, &book)?;
            columns.push((r.evaluator_id.clone(), 1024, parts));
        }
        Ok(columns)
    }
}

/// Appends one column's observations in batches; each job's result.
fn append_column(
    backend: &mut dyn LedgerBackend,
    evaluator_id: &str,
    batch: u64,
    parts: Vec<Part>,
) -> Result<Vec<EvaluatorResult>, Error> {
    let mut results: Vec<Option<EvaluatorResult>> = Vec::with_capacity(parts.len());
    let mut pending: Vec<(usize, Ready)> = Vec::new();
    for (i, part) in parts.into_iter().enumerate() {
        match part {
            Part::Done(status, reason) => results.push(Some(EvaluatorResult {
                evaluator_id: evaluator_id.to_owned(),
                status,
                reason: reason.map(str::to_owned),
                observation_ids: Vec::new(),
            })),
            Part::Observations(obs) => {
                results.push(None);
                pending.push((i, obs));
            }
        }
    }
    let batch = usize::try_from(batch.max(1)).unwrap_or(usize::MAX);
    for chunk in pending.chunks(batch) {
        let mut line = 0u64;
        let records: Vec<LedgerResult<Record>> = chunk
            .iter()
            .flat_map(|(_, obs)| obs.iter())
            .map(|(_, bytes)| {
                line += 1;
                Ok(Record::Item {
                    line,
                    bytes: bytes.clone(),
                })
            })
            .collect();
        let provenance = Provenance::Attribute {
            evaluator_id: evaluator_id.to_owned(),
        };
        let report = engine::append_with(backend, Box::new(records.into_iter()), &provenance)?;
        if report.batch.refused > 0 {
            let why = report
                .refusals
                .first()
                .map_or_else(String::new, |r| r.error.clone());
            return Err(request_error(format!(
                "the ledger refused an attribution observation: {why}"
            )));
        }
        let (status, reason) = match (
            report.batch.appended,
            report.batch.duplicate + report.batch.conflicting,
        ) {
            (_, 0) => (Status::Appended, None),
            (0, _) => (Status::Duplicate, None),
            _ => (Status::Appended, Some("batch_partly_duplicate")),
        };
        for (i, obs) in chunk {
            let mut ids: Vec<String> = obs.iter().map(|(id, _)| id.clone()).collect();
            ids.sort();
            results[*i] = Some(EvaluatorResult {
                evaluator_id: evaluator_id.to_owned(),
                status,
                reason: reason.map(str::to_owned),
                observation_ids: ids,
            });
        }
    }
    Ok(results.into_iter().flatten().collect())
}

fn high_water(backend: &mut dyn LedgerBackend) -> Result<i64, Error> {
    backend.begin_read()?;
    let high = backend.high_water();
    let ended = backend.end_read();
    let high = high?;
    ended?;
    Ok(high)
}

fn partition_of(facts: &Facts) -> Partition {
    Partition {
        scope: ScopeIds {
            agent_id: facts.scope.agent_id.to_string(),
            project_id: facts.scope.project_id.to_string(),
            corpus_id: facts.scope.corpus_id.to_string(),
            surface_id: facts.scope.surface_id.to_string(),
        },
        retrieval_snapshot_ref: facts.retrieval_snapshot_ref.clone(),
        policy_snapshot_ref: facts.policy_snapshot_ref.clone(),
    }
}

/// One line of `--outcomes`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OutcomeLine {
    application_receipt_id: String,
    outcome_ref: String,
    outcome_status: String,
    verified: bool,
    #[serde(default)]
    evidence: Vec<String>,
}

fn load_profile(request: &UtilityAttributeRequest, ctx: &Context) -> Result<Profile, Error> {
    match &request.profile {
        Some(path) => {
            let bytes = io::read_bytes(&ctx.env, path, request.max_input_bytes)?;
            Ok(Profile::parse(&bytes)?)
        }
        None => Ok(Profile::ad_hoc(
            request.evaluator_command.as_deref(),
            request.evaluator_timeout_ms,
        )),
    }
}

/// The jobs of `--pending --outcomes FILE`, the expired entries moved aside, and the
/// queue's counts.
fn pending_jobs(
    request: &UtilityAttributeRequest,
    ctx: &Context,
    root: &Path,
    now: &str,
) -> Result<(Vec<Job>, Vec<String>, PendingSummary), Error> {
    let spec = request
        .outcomes
        .as_deref()
        .ok_or_else(|| request_error("--pending needs --outcomes FILE.jsonl"))?;
    let bytes = io::read_bytes(&ctx.env, spec, request.max_input_bytes)?;
    let (entries, _skipped) = receipts::list_pending(root)?;
    let mut summary = PendingSummary::default();
    let mut live: Vec<String> = Vec::with_capacity(entries.len());
    for entry in &entries {
        if entry.expired_at(now) {
            receipts::expire_pending(root, &entry.application_receipt_id)?;
            summary.expired.push(entry.application_receipt_id.clone());
        } else {
            live.push(entry.application_receipt_id.clone());
        }
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| request_error(format!("{spec} is not UTF-8 text")))?;
    let max = request.max.unwrap_or(u64::MAX);
    let mut jobs = Vec::new();
    let mut settled_ids = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if u64::try_from(jobs.len()).unwrap_or(u64::MAX) >= max {
            break;
        }
        let bad = |why: String| {
            request_error(format!(
                "{spec} line {}: {why}: each line is {{\"application_receipt_id\", \"outcome_ref\", \"outcome_status\", \"verified\": true, \"evidence\": [...]}}",
                n + 1
            ))
        };
        let line: OutcomeLine = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        if !line.verified {
            return Err(bad(
                "verified must be true (only verified outcomes are attributed)".to_owned(),
            ));
        }
        if summary.expired.contains(&line.application_receipt_id) {
            continue;
        }
        let receipt = receipts::load_receipt(root, &line.application_receipt_id)?;
        let facts = Facts::new(
            &receipt,
            request.agent_id.as_deref(),
            request.project_id.as_deref(),
            &line.outcome_ref,
            outcome_status(&line.outcome_status)?,
            evidence_items(&line.evidence)?,
        )?;
        if live.binary_search(&line.application_receipt_id).is_ok() {
            settled_ids.push(line.application_receipt_id.clone());
        } else {
            summary.not_pending += 1;
        }
        jobs.push(Job { facts });
    }
    summary.waiting =
        u64::try_from(live.len().saturating_sub(settled_ids.len())).unwrap_or(u64::MAX);
    Ok((jobs, settled_ids, summary))
}

/// Runs `utility-attribute`: the attribution receipt, exit 0 (also when evaluators fail).
pub fn run(request: &UtilityAttributeRequest, ctx: &Context) -> Result<Outcome, Error> {
    let profile = load_profile(request, ctx)?;
    let root = resolve::runtime_root(ctx);
    let clock = Clock {
        iso: io::utc_now_iso(),
        unix: chrono::Utc::now().timestamp(),
    };
    let progress = io::progress::Progress::spinner("utility-attribute: evaluating outcomes");
    let (jobs, settled_ids, summary) = if request.pending {
        progress.set_message("utility-attribute --pending: reading the queued receipts");
        pending_jobs(request, ctx, &root, &clock.iso)?
    } else {
        if !request.verified {
            return Err(request_error(
                "utility-attribute needs --verified: attribute only an outcome that was verified",
            ));
        }
        let receipt = match (&request.receipt, &request.receipt_id) {
            (Some(spec), _) => receipt_of(io::read_input_object(
                &ctx.env,
                spec,
                request.max_input_bytes,
            )?),
            (None, Some(id)) => receipts::load_receipt(&root, id)?,
            (None, None) => {
                return Err(request_error(
                    "utility-attribute needs --receipt FILE or --receipt-id rma_...",
                ));
            }
        };
        let status = outcome_status(request.outcome_status.as_deref().unwrap_or_default())?;
        let outcome_ref = request
            .outcome_ref
            .as_deref()
            .ok_or_else(|| request_error("utility-attribute needs --outcome-ref"))?;
        let facts = Facts::new(
            &receipt,
            request.agent_id.as_deref(),
            request.project_id.as_deref(),
            outcome_ref,
            status,
            evidence_items(&request.evidence)?,
        )?;
        (vec![Job { facts }], Vec::new(), PendingSummary::default())
    };
    let mut opened = resolve::open_ledger(request.ledger.as_deref(), ctx)?;
    let runner = Runner {
        profile: &profile,
        root: &root,
        clock,
    };
    progress.set_message(&format!(
        "utility-attribute: running the evaluators on {} outcome(s)",
        jobs.len()
    ));
    let columns = runner.evaluate(&jobs)?;
    progress.set_message("utility-attribute: appending the observations to the ledger");
    let mut per_job: Vec<Vec<EvaluatorResult>> = vec![Vec::new(); jobs.len()];
    for (id, batch, parts) in columns {
        for (i, result) in append_column(opened.backend.as_mut(), &id, batch, parts)?
            .into_iter()
            .enumerate()
        {
            per_job[i].push(result);
        }
    }
    let mut summary = summary;
    for id in &settled_ids {
        receipts::settle_pending(&root, id)?;
        summary.settled += 1;
    }
    let attributions = jobs
        .iter()
        .zip(per_job)
        .map(|(job, evaluators)| Attribution {
            application_receipt_id: job.facts.receipt_id.clone(),
            outcome_ref: job.facts.outcome_ref.clone(),
            outcome_status: job.facts.outcome_status.as_str().to_owned(),
            partition: partition_of(&job.facts),
            evaluators,
        })
        .collect();
    let packet = AttributionReceipt {
        ok: AlwaysTrue,
        schema_version: crate::attribution::packet::AttributionReceiptVersion,
        profile_id: profile.profile_id.clone(),
        attributions,
        pending: summary,
        high_water_sequence: high_water(opened.backend.as_mut())?,
    };
    let value = json::to_value(&packet).map_err(|e| request_error(e.to_string()))?;
    let mut notes = opened.notes;
    if let Some(warning) = log_outcomes(opened.backend.as_mut(), &jobs, &runner.clock.iso) {
        notes.warnings.push(warning);
    }
    Ok(Outcome::success(value).with_notes(notes))
}

/// Appends one outcome event per attributed receipt to the ledger's traffic log (issue 22),
/// the verified outcome status `rank-evaluate --ledger` rewards with; only in a ledger
/// that keeps a traffic log (a ledger without one keeps its layout). The warning when
/// they were not logged (fail-open).
fn log_outcomes(
    backend: &mut dyn LedgerBackend,
    jobs: &[Job],
    observed_at: &str,
) -> Option<String> {
    if jobs.is_empty() {
        return None;
    }
    let events: Vec<_> = jobs
        .iter()
        .map(|job| {
            let f = &job.facts;
            let partition = TrafficPartition {
                scope: TrafficScope {
                    agent_id: f.scope.agent_id.to_string(),
                    project_id: f.scope.project_id.to_string(),
                    corpus_id: f.scope.corpus_id.to_string(),
                    surface_id: f.scope.surface_id.to_string(),
                },
                retrieval_snapshot_ref: f.retrieval_snapshot_ref.clone(),
                policy_snapshot_ref: f.policy_snapshot_ref.clone(),
            };
            outcome_event(
                &f.receipt_id,
                &f.outcome_ref,
                f.outcome_status.as_str(),
                partition,
                observed_at,
            )
            .to_append()
        })
        .collect();
    let logged = crate::ledger::traffic::has_traffic(backend).and_then(|has| {
        if has {
            crate::ledger::traffic::append(backend, &events).map(|_| ())
        } else {
            Ok(())
        }
    });
    logged
        .err()
        .map(|err| format!("the outcome events were not logged in the traffic log: {err}"))
}

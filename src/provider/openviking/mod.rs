//! The OpenViking provider: drives the `ov` CLI of an OpenViking server (spec §11.2–§11.5).
//!
//! An edge adapter like [`crate::io`]: it spawns `ov` child processes (stderr appended to
//! stdout, stdin detached, every call bounded by a timeout that kills the child) and reads
//! the local sync sources. Sources given as bytes ([`SyncSource::Bytes`], what ingest
//! passes) are staged for `ov` in a private directory under the staging root the factory
//! sets (`<runtime_root>/reward-memory/staging`, see [`crate::io::stage_bytes`]) and
//! removed when the sync ends. It must not print, read the environment or decide anything
//! about reward memory: recall/ingest only see the [`ContextProvider`] packets it returns.
//!
//! Protocol. Before every retrieve and every executed sync it runs the preflight
//! (`--version`, then `status`). The version decides the write protocol:
//! * below 0.5.1 (legacy): the reference sequence, ending in
//!   `add-resource SRC --to TARGET --wait --timeout N`;
//! * 0.5.1 and later (exact): `ov add-resource` lost `--timeout` in 0.5.1 and turns
//!   `X.json` into a directory holding `X.md`, so the write is
//!   `write TARGET --from-file SRC --mode create --wait`, which stores the exact bytes at
//!   exactly TARGET. Neither command refuses an overwrite, so the target is always read
//!   first. Search adds `-L 2` (files only) and drops generated level-0/1 rows
//!   (`.abstract.md`, `.overview.md`), which would otherwise use up result slots.
//!
//! Failures are reported as a status plus a reason code. What the reference raises (a
//! refused request, an OS error while spawning, undecodable output, unusable version text)
//! is an error of [`ContextProvider::try_retrieve`] / [`ContextProvider::try_sync`]; the
//! plain `retrieve` / `sync` report it as status `unavailable` with reason
//! [`RETRIEVE_EXECUTION_FAILED`] or [`SYNC_EXECUTION_FAILED`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use regex::Regex;

use super::{
    ContextProvider, ProviderConfig, ProviderError, Retrieval, RetrieveRequest, RetrievedItem,
    Sync, SyncRequest, SyncSource,
};
use crate::wire::json::{self, Map, Value};
use crate::wire::pyfmt::{self, pystr, pystr_strip};
use crate::wire::text::public_safe_text;

/// The provider id this adapter registers under.
pub const PROVIDER_ID: &str = "openviking";
/// The minimum `ov` version when the binding names none.
pub const DEFAULT_MINIMUM_VERSION: &str = "0.4.9";
/// The reason a recall reports when retrieve refused the request or failed unexpectedly.
pub const RETRIEVE_EXECUTION_FAILED: &str = "provider_execution_failed";
/// The reason an ingest reports when sync refused the request or failed unexpectedly.
pub const SYNC_EXECUTION_FAILED: &str = "provider_sync_execution_failed";

const MAX_RESULTS: usize = 6;
use super::{DEFAULT_SUMMARY, MAX_SYNC_RESOURCES};
/// The first version whose `add-resource` rejects `--timeout`; from here on the exact
/// `write` protocol is used.
const EXACT_WRITE_SINCE: [u128; 3] = [0, 5, 1];

static ACTOR_PEER_ID_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")
        .unwrap_or_else(|err| panic!("built-in pattern must compile: {err}"))
});
static VERSION_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([0-9]+)\.([0-9]+)\.([0-9]+)")
        .unwrap_or_else(|err| panic!("built-in pattern must compile: {err}"))
});

/// What the reference raises instead of returning a packet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenVikingError {
    #[error("actor_peer_id must be a compact public-safe token")]
    ActorPeerId,
    /// An argument check of retrieve or sync failed; the text is the reference's.
    #[error("{0}")]
    Request(&'static str),
    /// The executable does not exist (translated only by the `--version` step).
    #[error("provider executable not found")]
    ExecutableNotFound,
    /// Spawning or waiting for `ov` failed for another OS reason.
    #[error("cannot run the provider executable: {0}")]
    Os(String),
    /// `ov` printed text that is not UTF-8.
    #[error("provider output is not valid UTF-8")]
    Decode,
    /// `ov --version` printed nothing usable (empty, or a local path or secret).
    #[error("provider version output is empty or not public-safe")]
    UnusableVersion,
    /// The bytes of a sync source could not be staged in a local file (the OS error kind).
    #[error("cannot stage the sync source: {0}")]
    Staging(String),
}

impl From<OpenVikingError> for ProviderError {
    fn from(err: OpenVikingError) -> Self {
        ProviderError::Invalid(err.to_string())
    }
}

/// The `ov` CLI of one OpenViking server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenVikingProvider {
    executable: String,
    minimum_version: String,
    actor_peer_id: Option<String>,
    /// Where byte sources are staged as files for `ov` (see [`crate::io::stage_bytes`]).
    staging_root: Option<PathBuf>,
}

impl OpenVikingProvider {
    /// A provider for `executable` (the reference's constructor). An `actor_peer_id` that is
    /// blank after stripping counts as none.
    pub fn new(
        executable: &str,
        minimum_version: &str,
        actor_peer_id: Option<&str>,
    ) -> Result<Self, OpenVikingError> {
        let peer = pyfmt::py_strip(actor_peer_id.unwrap_or("")).to_owned();
        if !peer.is_empty() && !ACTOR_PEER_ID_RE.is_match(&peer) {
            return Err(OpenVikingError::ActorPeerId);
        }
        Ok(OpenVikingProvider {
            executable: executable.to_owned(),
            minimum_version: minimum_version.to_owned(),
            actor_peer_id: (!peer.is_empty()).then_some(peer),
            staging_root: None,
        })
    }

    /// The same provider staging [`SyncSource::Bytes`] under `staging_root` (the factory
    /// uses `<runtime_root>/reward-memory/staging`). Without one, only file sources are
    /// accepted.
    pub fn with_staging_root(mut self, staging_root: PathBuf) -> Self {
        self.staging_root = Some(staging_root);
        self
    }

    /// The builder of §11.2 over its input object
    /// `{provider, provider_binary, minimum_provider_version, actor_peer_id}`:
    /// executable `str(provider_binary or "")` or `ov`, minimum version likewise or
    /// `0.4.9`, actor peer id stripped. (`provider` is the registry's lookup key.)
    pub fn from_builder_input(config: &Map) -> Result<Self, OpenVikingError> {
        let executable = non_empty_or(pystr(config.get("provider_binary")), "ov");
        let minimum = non_empty_or(
            pystr(config.get("minimum_provider_version")),
            DEFAULT_MINIMUM_VERSION,
        );
        let peer = pystr_strip(config.get("actor_peer_id"));
        OpenVikingProvider::new(&executable, &minimum, Some(&peer))
    }

    /// The factory's builder (§11.2) over an already extracted [`ProviderConfig`].
    pub fn from_config(config: &ProviderConfig) -> Result<Self, OpenVikingError> {
        OpenVikingProvider::new(
            config.provider_binary.as_deref().unwrap_or("ov"),
            config
                .minimum_provider_version
                .as_deref()
                .unwrap_or(DEFAULT_MINIMUM_VERSION),
            config.actor_peer_id.as_deref(),
        )
    }

    /// The executable that is run.
    pub fn executable(&self) -> &str {
        &self.executable
    }

    /// The configured actor peer id, if any.
    pub fn actor_peer_id(&self) -> Option<&str> {
        self.actor_peer_id.as_deref()
    }

    /// Runs `ov` with `args` (the actor flag inserted when configured), bounded by
    /// `max(1, timeout)` seconds.
    fn run(&self, args: &[&str], timeout_seconds: f64) -> Result<Run, OpenVikingError> {
        let mut command = Command::new(&self.executable);
        if let Some(peer) = &self.actor_peer_id
            && !matches!(args.first(), Some(&"--version") | Some(&"status"))
        {
            command.arg("--actor-peer-id").arg(peer);
        }
        command.args(args);
        run_merged(command, timeout_seconds.max(1.0))
    }

    /// Runs `args` and parses the output, treating a non-zero exit as a failure.
    fn run_json(&self, args: &[&str], timeout: f64) -> Result<Step, OpenVikingError> {
        Ok(match self.run(args, timeout)? {
            Run::TimedOut => Step::TimedOut,
            Run::Exited { success: false, .. } => Step::Failed,
            Run::Exited { output, .. } => match extract_json(&output) {
                Ok(value) => Step::Parsed(value),
                Err(_) => Step::Unparseable,
            },
        })
    }

    /// The preflight (§11.3): `(version, blocker)`.
    fn preflight(&self, timeout: f64) -> Result<Preflight, OpenVikingError> {
        let version_run = match self.run(&["--version"], timeout) {
            Err(OpenVikingError::ExecutableNotFound) | Ok(Run::TimedOut) => {
                return Ok(Preflight::blocked(None, "provider_cli_unavailable"));
            }
            other => other?,
        };
        let output = match version_run {
            Run::Exited {
                success: true,
                output,
            } => output,
            _ => {
                return Ok(Preflight::blocked(
                    None,
                    "provider_version_preflight_failed",
                ));
            }
        };
        let version = public_safe_text(Some(&Value::Str(output.into())), 80)
            .ok_or(OpenVikingError::UnusableVersion)?;
        let (found, minimum) = match (
            version_triple(&version),
            version_triple(&self.minimum_version),
        ) {
            (Some(found), Some(minimum)) => (found, minimum),
            _ => {
                return Ok(Preflight::blocked(
                    Some(version),
                    "provider_version_unparseable",
                ));
            }
        };
        if found < minimum {
            return Ok(Preflight::blocked(
                Some(version),
                "provider_version_incompatible",
            ));
        }
        let protocol = if found >= EXACT_WRITE_SINCE {
            Protocol::Exact
        } else {
            Protocol::Legacy
        };
        match self.run(&["status", "-o", "json", "-c", "true"], timeout)? {
            Run::TimedOut => Ok(Preflight::blocked(
                Some(version),
                "provider_service_timeout",
            )),
            Run::Exited { success: false, .. } => Ok(Preflight::blocked(
                Some(version),
                "provider_service_unavailable",
            )),
            Run::Exited { .. } => Ok(Preflight {
                version: Some(version),
                blocker: None,
                protocol,
            }),
        }
    }

    /// Retrieve (§11.4), returning what the reference raises as an error.
    pub fn checked_retrieve(
        &self,
        request: &RetrieveRequest,
    ) -> Result<Retrieval, OpenVikingError> {
        let started = Instant::now();
        let namespace = safe(&request.namespace, 120);
        let query = safe(&request.query, 500);
        let query_summary = safe(&request.query_summary, 220);
        let requested_limit = request.limit(MAX_RESULTS);
        let (Some(namespace), Some(query), Some(query_summary)) = (namespace, query, query_summary)
        else {
            return Err(OpenVikingError::Request(
                "namespace, query, and query_summary are required",
            ));
        };
        let scope_ref = request.scope_ref.as_str();
        if !scope_ref.starts_with("viking://") {
            return Err(OpenVikingError::Request(
                "OpenViking scope_ref must use viking://",
            ));
        }
        let timeout = request.timeout_seconds;
        let mut packet = Retrieval {
            provider: PROVIDER_ID.to_owned(),
            namespace,
            status: "unavailable".to_owned(),
            query_summary,
            observed_at: request.observed_at.clone(),
            search_performed: false,
            read_performed: false,
            items: Vec::new(),
            reason_code: None,
            provider_version: None,
            latency_ms: 0,
            requested_limit,
            snapshot: None,
            lifecycle_skipped: 0,
        };
        let finish = |mut packet: Retrieval, reason: Option<&str>| {
            packet.reason_code = reason.map(str::to_owned);
            packet.latency_ms = elapsed_ms(started);
            Ok(packet)
        };

        let preflight = self.preflight(timeout)?;
        packet.provider_version = preflight.version.clone();
        if let Some(blocker) = preflight.blocker {
            return finish(packet, Some(blocker));
        }
        let limit_text = requested_limit.to_string();
        let mut args = vec![
            "search",
            query.as_str(),
            "-u",
            scope_ref,
            "-n",
            limit_text.as_str(),
        ];
        if preflight.protocol == Protocol::Exact {
            args.extend(["-L", "2"]);
        }
        args.extend(["-o", "json", "-c", "true"]);
        let answer = match self.run_json(&args, timeout)? {
            Step::TimedOut => return finish(packet, Some("provider_search_timeout")),
            Step::Failed => {
                packet.search_performed = true;
                return finish(packet, Some("provider_search_failed"));
            }
            Step::Unparseable => {
                packet.search_performed = true;
                return finish(packet, Some("provider_search_parse_failed"));
            }
            Step::Parsed(value) => value,
        };
        packet.search_performed = true;

        let scope_prefix = format!("{}/", scope_ref.trim_end_matches('/'));
        let mut seen: Vec<String> = Vec::new();
        for row in rows(&answer) {
            if preflight.protocol == Protocol::Exact && is_generated_row(row) {
                continue;
            }
            let Some(uri) = row_uri(row) else { continue };
            if !(uri == scope_ref || uri.starts_with(&scope_prefix)) || seen.contains(&uri) {
                continue;
            }
            seen.push(uri.clone());
            packet.read_performed = true;
            let remaining = remaining(timeout, started);
            let content =
                match self.run_json(&["read", &uri, "-o", "json", "-c", "true"], remaining)? {
                    Step::Parsed(value) => content(&value),
                    _ => continue,
                };
            if content.is_empty() {
                continue;
            }
            packet.items.push(RetrievedItem {
                resource_ref: uri,
                summary: row_summary(row),
                content,
                score: row_score(row),
            });
            if packet.items.len() >= requested_limit {
                break;
            }
        }
        packet.status = "completed".to_owned();
        packet.snapshot = Some(response_snapshot(
            &packet.items,
            reported_policy_snapshot_id(&answer),
        ));
        let reason =
            (packet.read_performed && packet.items.is_empty()).then_some("provider_reads_unusable");
        finish(packet, reason)
    }

    /// Sync (§11.5), returning what the reference raises as an error.
    pub fn checked_sync(&self, request: &SyncRequest) -> Result<Sync, OpenVikingError> {
        let started = Instant::now();
        let namespace = safe(&request.namespace, 120);
        if request.resources.len() > MAX_SYNC_RESOURCES {
            return Err(OpenVikingError::Request(
                "OpenViking sync supports at most 24 resources",
            ));
        }
        let Some(namespace) = namespace else {
            return Err(OpenVikingError::Request("namespace is required"));
        };
        if request.resources.is_empty() {
            return Err(OpenVikingError::Request(
                "at least one resource is required",
            ));
        }
        for resource in &request.resources {
            let basename = match &resource.source {
                SyncSource::File(source) if source.is_file() => {
                    source.file_name().and_then(|name| name.to_str())
                }
                // Staged under the target's own name, when there is somewhere to stage.
                SyncSource::Bytes(_) if self.staging_root.is_some() => {
                    Some(last_segment(&resource.target_ref)).filter(|name| !name.is_empty())
                }
                _ => {
                    return Err(OpenVikingError::Request(
                        "every sync source must be an existing file",
                    ));
                }
            };
            if !resource.target_ref.starts_with("viking://resources/") {
                return Err(OpenVikingError::Request(
                    "sync targets must stay under viking://resources/",
                ));
            }
            if basename != Some(last_segment(&resource.target_ref)) {
                return Err(OpenVikingError::Request(
                    "sync target basename must match source basename",
                ));
            }
        }
        let requested_count = request.resources.len();
        let mut packet = Sync::planned(
            PROVIDER_ID,
            &namespace,
            &request.observed_at,
            requested_count,
        );
        if !request.execute {
            packet.latency_ms = elapsed_ms(started);
            return Ok(packet);
        }
        let timeout = request.timeout_seconds;
        let preflight = self.preflight(timeout)?;
        packet.provider_version = preflight.version.clone();
        packet.retry_disposition = "no_retry".to_owned();
        if let Some(blocker) = preflight.blocker {
            packet.status = "unavailable".to_owned();
            packet.reason_code = Some(blocker.to_owned());
            packet.latency_ms = elapsed_ms(started);
            return Ok(packet);
        }

        // Byte sources become private files for `ov`, removed when `_staged` is dropped.
        let mut _staged: Vec<crate::io::StagedFile> = Vec::new();
        let mut sources: Vec<PathBuf> = Vec::with_capacity(requested_count);
        for resource in &request.resources {
            match (&resource.source, &self.staging_root) {
                (SyncSource::File(path), _) => sources.push(path.clone()),
                (SyncSource::Bytes(bytes), Some(root)) => {
                    let file =
                        crate::io::stage_bytes(root, last_segment(&resource.target_ref), bytes)
                            .map_err(|err| OpenVikingError::Staging(err.kind().to_string()))?;
                    sources.push(file.path().to_path_buf());
                    _staged.push(file);
                }
                (SyncSource::Bytes(_), None) => {
                    return Err(OpenVikingError::Request(
                        "every sync source must be an existing file",
                    ));
                }
            }
        }
        let mut completed: Vec<String> = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let mut stop_reason: Option<&'static str> = None;
        for (resource, source) in request.resources.iter().zip(&sources) {
            let target = resource.target_ref.as_str();
            match self.sync_one(source, target, timeout, started, preflight.protocol)? {
                ResourceOutcome::Present => completed.push(target.to_owned()),
                ResourceOutcome::Written { reconciled } => {
                    packet.reconciliation_performed |= reconciled;
                    packet.write_count += 1;
                    completed.push(target.to_owned());
                }
                ResourceOutcome::Pending => {
                    packet.reconciliation_performed = true;
                    packet.write_count += 1;
                    packet.retry_disposition = "wait_and_reconcile".to_owned();
                    pending.push(target.to_owned());
                }
                ResourceOutcome::Stopped {
                    reason,
                    reconciled,
                    retry,
                } => {
                    packet.reconciliation_performed |= reconciled;
                    if let Some(retry) = retry {
                        packet.retry_disposition = retry.to_owned();
                    }
                    stop_reason = Some(reason);
                    break;
                }
            }
        }
        let (status, reason) = if completed.len() == requested_count {
            ("completed", None)
        } else if completed.len() + pending.len() == requested_count && !pending.is_empty() {
            ("committed_pending", Some("provider_sync_committed_pending"))
        } else {
            (
                "partial",
                Some(stop_reason.unwrap_or("provider_sync_incomplete")),
            )
        };
        packet.status = status.to_owned();
        packet.reason_code = reason.map(str::to_owned);
        packet.completed_count = completed.len();
        packet.pending_count = pending.len();
        packet.result_refs = completed.into_iter().chain(pending).collect();
        packet.latency_ms = elapsed_ms(started);
        Ok(packet)
    }

    /// Steps 1–8 of §11.5 for one resource.
    fn sync_one(
        &self,
        source: &Path,
        target: &str,
        timeout: f64,
        started: Instant,
        protocol: Protocol,
    ) -> Result<ResourceOutcome, OpenVikingError> {
        let stop = |reason| ResourceOutcome::Stopped {
            reason,
            reconciled: false,
            retry: None,
        };
        let Some(source_text) = read_source_text(source) else {
            return Ok(stop("provider_sync_source_read_failed"));
        };
        let remaining = remaining(timeout, started);

        match self.run(&["read", target, "-o", "json", "-c", "true"], remaining)? {
            Run::TimedOut => return Ok(stop("provider_sync_timeout")),
            Run::Exited {
                success: true,
                output,
            } => {
                let Ok(value) = extract_json(&output) else {
                    return Ok(stop("provider_sync_existing_read_failed"));
                };
                if !matches(&content(&value), &source_text) {
                    return Ok(stop("provider_sync_revision_conflict"));
                }
                return Ok(ResourceOutcome::Present);
            }
            Run::Exited { .. } => {}
        }

        let tree_refs = match self.run(
            &["tree", target, "-L", "3", "-o", "json", "-c", "true"],
            remaining,
        )? {
            Run::TimedOut => return Ok(stop("provider_sync_timeout")),
            Run::Exited {
                success: true,
                output,
            } => match extract_json(&output) {
                Ok(value) => rows(&value).into_iter().filter_map(row_uri).collect(),
                Err(_) => return Ok(stop("provider_sync_tree_parse_failed")),
            },
            Run::Exited { .. } => Vec::new(),
        };
        let mut tree_contents: Vec<String> = Vec::new();
        for uri in &tree_refs {
            match self.run_json(&["read", uri, "-o", "json", "-c", "true"], remaining)? {
                Step::TimedOut => return Ok(stop("provider_sync_timeout")),
                Step::Parsed(value) => tree_contents.push(content(&value)),
                Step::Failed | Step::Unparseable => {}
            }
        }
        if covers(&tree_contents, &source_text) {
            return Ok(ResourceOutcome::Present);
        }
        if !tree_refs.is_empty() {
            return Ok(stop("provider_sync_revision_conflict"));
        }

        let parent = parent_ref(target);
        match self.run(
            &["ls", parent, "-n", "1", "-o", "json", "-c", "true"],
            remaining,
        )? {
            Run::TimedOut => return Ok(stop("provider_sync_timeout")),
            Run::Exited { success: true, .. } => {}
            Run::Exited { .. } => {
                match self.run(&["mkdir", parent, "-o", "json", "-c", "true"], remaining)? {
                    Run::TimedOut => return Ok(stop("provider_sync_timeout")),
                    Run::Exited { success: true, .. } => {}
                    Run::Exited { .. } => return Ok(stop("provider_sync_parent_create_failed")),
                }
            }
        }

        let reserve = (remaining * 0.2).clamp(1.0, 15.0);
        let write_timeout = (remaining - reserve).max(1.0);
        let source_arg = source.to_string_lossy();
        let seconds = (write_timeout.floor() as u64).max(1).to_string();
        let args: Vec<&str> = match protocol {
            Protocol::Legacy => vec![
                "add-resource",
                &source_arg,
                "--to",
                target,
                "--wait",
                "--timeout",
                &seconds,
                "-o",
                "json",
                "-c",
                "true",
            ],
            Protocol::Exact => vec![
                "write",
                target,
                "--from-file",
                &source_arg,
                "--mode",
                "create",
                "--wait",
                "-o",
                "json",
                "-c",
                "true",
            ],
        };
        let timed_out = match self.run(&args, write_timeout)? {
            Run::Exited { success: true, .. } => {
                return Ok(ResourceOutcome::Written { reconciled: false });
            }
            Run::Exited { .. } => false,
            Run::TimedOut => true,
        };
        Ok(
            match self.reconcile(target, parent, &source_text, reserve)? {
                Reconciled::VerifiedSuccess => ResourceOutcome::Written { reconciled: true },
                Reconciled::CommittedPending => ResourceOutcome::Pending,
                Reconciled::AbsentSafeToRetry => ResourceOutcome::Stopped {
                    reason: if timed_out {
                        "provider_sync_write_timeout_absent"
                    } else {
                        "provider_sync_write_failed_absent"
                    },
                    reconciled: true,
                    retry: Some("safe_to_retry"),
                },
                Reconciled::Unavailable => ResourceOutcome::Stopped {
                    reason: "provider_sync_reconciliation_unavailable",
                    reconciled: true,
                    retry: Some("manual_reconcile"),
                },
            },
        )
    }

    /// Classifies an uncertain write without writing again (§11.5 step 8).
    fn reconcile(
        &self,
        target: &str,
        parent: &str,
        source_text: &str,
        timeout: f64,
    ) -> Result<Reconciled, OpenVikingError> {
        match self.run(&["read", target, "-o", "json", "-c", "true"], timeout)? {
            Run::TimedOut => return Ok(Reconciled::Unavailable),
            Run::Exited {
                success: true,
                output,
            } => {
                let found = extract_json(&output)
                    .map(|value| content(&value))
                    .unwrap_or_default();
                return Ok(if !found.is_empty() && matches(&found, source_text) {
                    Reconciled::VerifiedSuccess
                } else {
                    Reconciled::CommittedPending
                });
            }
            Run::Exited { .. } => {}
        }
        match self.run(
            &["tree", target, "-L", "3", "-o", "json", "-c", "true"],
            timeout,
        )? {
            Run::TimedOut => return Ok(Reconciled::Unavailable),
            Run::Exited {
                success: true,
                output,
            } => {
                let refs: Vec<String> = extract_json(&output)
                    .map(|value| rows(&value).into_iter().filter_map(row_uri).collect())
                    .unwrap_or_default();
                if !refs.is_empty() {
                    let mut contents = Vec::new();
                    for uri in &refs {
                        if let Step::Parsed(value) =
                            self.run_json(&["read", uri, "-o", "json", "-c", "true"], timeout)?
                        {
                            let found = content(&value);
                            if !found.is_empty() {
                                contents.push(found);
                            }
                        }
                    }
                    return Ok(if covers(&contents, source_text) {
                        Reconciled::VerifiedSuccess
                    } else {
                        Reconciled::CommittedPending
                    });
                }
            }
            Run::Exited { .. } => {}
        }
        match self.run(
            &["ls", parent, "-n", "100", "-o", "json", "-c", "true"],
            timeout,
        )? {
            Run::TimedOut => Ok(Reconciled::Unavailable),
            Run::Exited {
                success: true,
                output,
            } => {
                let Ok(value) = extract_json(&output) else {
                    return Ok(Reconciled::Unavailable);
                };
                let below = format!("{}/", target.trim_end_matches('/'));
                let listed = rows(&value)
                    .into_iter()
                    .filter_map(row_uri)
                    .any(|uri| uri == target || uri.starts_with(&below));
                Ok(if listed {
                    Reconciled::CommittedPending
                } else {
                    Reconciled::AbsentSafeToRetry
                })
            }
            Run::Exited { .. } => Ok(Reconciled::AbsentSafeToRetry),
        }
    }
}

impl ContextProvider for OpenVikingProvider {
    fn provider_id(&self) -> &str {
        PROVIDER_ID
    }

    fn try_retrieve(&self, request: &RetrieveRequest) -> Result<Retrieval, ProviderError> {
        self.checked_retrieve(request).map_err(ProviderError::from)
    }

    fn try_sync(&self, request: &SyncRequest) -> Result<Sync, ProviderError> {
        self.checked_sync(request).map_err(ProviderError::from)
    }

    fn retrieve(&self, request: &RetrieveRequest) -> Retrieval {
        self.checked_retrieve(request).unwrap_or_else(|_| {
            Retrieval::refused(
                PROVIDER_ID,
                request,
                RETRIEVE_EXECUTION_FAILED,
                None,
                request.limit(MAX_RESULTS),
            )
        })
    }

    fn sync(&self, request: &SyncRequest) -> Sync {
        self.checked_sync(request).unwrap_or_else(|_| Sync {
            provider: PROVIDER_ID.to_owned(),
            namespace: request.namespace.clone(),
            status: "unavailable".to_owned(),
            observed_at: request.observed_at.clone(),
            requested_count: request.resources.len(),
            completed_count: 0,
            write_count: 0,
            reason_code: Some(SYNC_EXECUTION_FAILED.to_owned()),
            provider_version: None,
            latency_ms: 0,
            result_refs: Vec::new(),
            pending_count: 0,
            reconciliation_performed: false,
            retry_disposition: "no_retry".to_owned(),
            cause_code: None,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Process running
// ---------------------------------------------------------------------------------------

/// How one `ov` call ended.
#[derive(Debug)]
enum Run {
    TimedOut,
    Exited { success: bool, output: String },
}

/// One call's output after parsing.
enum Step {
    TimedOut,
    Failed,
    Unparseable,
    Parsed(Value),
}

/// Spawns `command`, collects stdout and then stderr as one text (the reference merges
/// the two streams; keeping stdout first puts the payload before any diagnostics), and
/// waits at most `timeout` seconds, killing the child when the time is up.
fn run_merged(mut command: Command, timeout: f64) -> Result<Run, OpenVikingError> {
    let os = |err: std::io::Error| OpenVikingError::Os(err.to_string());
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(OpenVikingError::ExecutableNotFound);
        }
        Err(err) => return Err(os(err)),
    };
    let stdout = collect(child.stdout.take());
    let stderr = collect(child.stderr.take());
    let deadline = Instant::now() + Duration::from_secs_f64(timeout);
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait().map_err(os)? {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                // Ending a child that exited on its own meanwhile is not a failure.
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Run::TimedOut);
            }
            None => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
        }
    };
    // A grandchild may still hold a pipe open; wait for the output only until the
    // deadline (with a short grace period).
    let mut bytes = Vec::new();
    for receiver in [stdout, stderr] {
        let wait = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(200));
        match receiver.recv_timeout(wait) {
            Ok(Ok(chunk)) => bytes.extend(chunk),
            Ok(Err(err)) => return Err(os(err)),
            Err(_) => return Ok(Run::TimedOut),
        }
    }
    let output = String::from_utf8(bytes).map_err(|_| OpenVikingError::Decode)?;
    Ok(Run::Exited {
        success: status.success(),
        output,
    })
}

/// Reads a child's pipe to the end on its own thread.
fn collect<R: std::io::Read + Send + 'static>(
    pipe: Option<R>,
) -> mpsc::Receiver<std::io::Result<Vec<u8>>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = match pipe {
            Some(mut pipe) => pipe.read_to_end(&mut bytes).map(|_| bytes),
            None => Ok(bytes),
        };
        // The receiver may have given up already; nothing to do then.
        let _ = sender.send(result);
    });
    receiver
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// `max(1, timeout - elapsed)` in seconds.
fn remaining(timeout: f64, started: Instant) -> f64 {
    (timeout - started.elapsed().as_secs_f64()).max(1.0)
}

// ---------------------------------------------------------------------------------------
// Pure parts: versions, JSON extraction, rows, content, canonical matching
// ---------------------------------------------------------------------------------------

/// Which write/search commands the server's version calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Legacy,
    Exact,
}

struct Preflight {
    version: Option<String>,
    blocker: Option<&'static str>,
    protocol: Protocol,
}

impl Preflight {
    fn blocked(version: Option<String>, blocker: &'static str) -> Self {
        Preflight {
            version,
            blocker: Some(blocker),
            protocol: Protocol::Legacy,
        }
    }
}

enum ResourceOutcome {
    /// Already there with matching content: no write.
    Present,
    Written {
        reconciled: bool,
    },
    Pending,
    Stopped {
        reason: &'static str,
        reconciled: bool,
        retry: Option<&'static str>,
    },
}

enum Reconciled {
    VerifiedSuccess,
    CommittedPending,
    AbsentSafeToRetry,
    Unavailable,
}

fn non_empty_or(value: String, default: &str) -> String {
    if value.is_empty() {
        default.to_owned()
    } else {
        value
    }
}

fn safe(text: &str, limit: usize) -> Option<String> {
    public_safe_text(Some(&Value::from(text)), limit)
}

/// The first `x.y.z` triple of `text` as integers.
pub fn version_triple(text: &str) -> Option<[u128; 3]> {
    let caps = VERSION_RE.captures(text)?;
    let mut triple = [0u128; 3];
    for (slot, index) in triple.iter_mut().zip(1..=3) {
        let digits = caps.get(index)?.as_str().trim_start_matches('0');
        // A component longer than u128 compares above any real version.
        *slot = if digits.is_empty() {
            0
        } else {
            digits.parse().unwrap_or(u128::MAX)
        };
    }
    Some(triple)
}

/// The JSON in a command's output (§11.3): the whole stripped text, or else the first
/// `{`/`[` from which one JSON value decodes.
pub fn extract_json(output: &str) -> Result<Value, &'static str> {
    let stripped = pyfmt::py_strip(output);
    if stripped.is_empty() {
        return Err("provider returned empty output");
    }
    if let Ok(value) = json::parse(stripped) {
        return Ok(value);
    }
    stripped
        .char_indices()
        .filter(|(_, c)| matches!(c, '{' | '['))
        .find_map(|(index, _)| json::parse_prefix(&stripped[index..]).ok())
        .ok_or("provider output did not contain JSON")
}

/// The `policy_snapshot_id` a search answer reports, at its top or in its `result` or
/// `data` object. OpenViking 0.5.2's search result (`memories`, `resources`, `skills`,
/// `query_plan`, `query_results`, `total`) reports none; a later server that does is
/// covered without a change here.
pub fn reported_policy_snapshot_id(answer: &Value) -> Option<&str> {
    fn id(v: &Value) -> Option<&str> {
        v.get("policy_snapshot_id").and_then(Value::as_str)
    }
    id(answer).or_else(|| {
        ["result", "data"]
            .into_iter()
            .find_map(|key| answer.get(key).and_then(id))
    })
}

/// The digest of what a search actually retrieved, for the recall's
/// `retrieval_snapshot_ref`: SHA-256 hex of the J3 text of
/// `{"items": [{"resource_ref", "content_digest"}...], "policy_snapshot_id"}` (items in
/// the order kept, the content digest of each item's exact text, the server's policy
/// snapshot id or null). Scores are left out: the same records read back the same way are
/// the same snapshot, whatever floating-point noise a ranking carries.
pub fn response_snapshot(items: &[RetrievedItem], policy_snapshot_id: Option<&str>) -> String {
    let items: Vec<Value> = items
        .iter()
        .map(|item| {
            Value::Object(crate::obj! {
                "resource_ref" => item.resource_ref.as_str(),
                "content_digest" => crate::wire::digest::content_digest(&item.content),
            })
        })
        .collect();
    let document = crate::obj! {
        "items" => Value::Array(items.into()),
        "policy_snapshot_id" => policy_snapshot_id,
    };
    crate::wire::digest::sha256_hex(&crate::wire::digest::j3(&Value::Object(document)))
}

/// The object rows of a provider answer (§11.3 row discovery).
pub fn rows(value: &Value) -> Vec<&Map> {
    let mut found = Vec::new();
    collect_rows(value, &mut found);
    found
}

fn collect_rows<'a>(value: &'a Value, found: &mut Vec<&'a Map>) {
    match value {
        Value::Object(map) => {
            for key in ["resources", "memories", "skills", "results", "items"] {
                if let Some(Value::Array(list)) = map.get(key) {
                    found.extend(list.iter().filter_map(Value::as_object));
                }
            }
            for key in ["result", "data"] {
                if let Some(nested) = map.get(key) {
                    collect_rows(nested, found);
                }
            }
        }
        Value::Array(list) => found.extend(list.iter().filter_map(Value::as_object)),
        _ => {}
    }
}

/// The first `viking://` URI among `uri`, `resource_uri`, `path`, `url`.
pub fn row_uri(row: &Map) -> Option<String> {
    ["uri", "resource_uri", "path", "url"]
        .iter()
        .map(|key| pystr_strip(row.get(key)))
        .find(|value| value.starts_with("viking://"))
}

/// The row's compact public-safe summary, or the default sentence.
pub fn row_summary(row: &Map) -> String {
    ["abstract", "summary", "overview", "description", "title"]
        .iter()
        .find_map(|key| public_safe_text(row.get(key), 220))
        .unwrap_or_else(|| DEFAULT_SUMMARY.to_owned())
}

/// The first numeric `score`, `similarity` or `distance` (booleans are not numbers).
pub fn row_score(row: &Map) -> Option<f64> {
    ["score", "similarity", "distance"]
        .iter()
        .find_map(|key| match row.get(key) {
            Some(Value::Int(n)) => Some(*n as f64),
            Some(Value::BigInt(text)) => text.parse().ok(),
            Some(Value::Float(f)) => Some(*f),
            _ => None,
        })
}

/// A search row OpenViking generated from a directory (level 0 abstract or level 1
/// overview) rather than a stored file.
fn is_generated_row(row: &Map) -> bool {
    let level_not_file = matches!(row.get("level"), Some(Value::Int(level)) if *level != 2);
    let name = row_uri(row).map(|uri| last_segment(&uri).to_owned());
    level_not_file || matches!(name.as_deref(), Some(".abstract.md" | ".overview.md"))
}

/// The text content of a read answer (§11.3 read content).
pub fn content(value: &Value) -> String {
    match value {
        Value::Str(text) => text.to_string(),
        Value::Object(map) => {
            for key in ["content", "text"] {
                if let Some(Value::Str(text)) = map.get(key) {
                    return text.to_string();
                }
            }
            ["result", "data"]
                .iter()
                .filter_map(|key| map.get(key))
                .map(content)
                .find(|text| !text.is_empty())
                .unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// `canonical_text`: CRLF → LF, then one trailing LF dropped.
pub fn canonical_text(text: &str) -> String {
    let unified = text.replace("\r\n", "\n");
    match unified.strip_suffix('\n') {
        Some(head) => head.to_owned(),
        None => unified,
    }
}

/// Python's `str.splitlines()` line boundaries.
fn is_line_boundary(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `str.splitlines()` (a `\r\n` pair is one boundary; no trailing empty line).
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        if is_line_boundary(c) {
            lines.push(&text[start..index]);
            let mut end = index + c.len_utf8();
            if c == '\r' && matches!(chars.peek(), Some(&(_, '\n'))) {
                chars.next();
                end += 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The non-blank lines of the canonical text, each right-stripped.
pub fn canonical_lines(text: &str) -> Vec<String> {
    split_lines(&canonical_text(text))
        .into_iter()
        .filter(|line| !pyfmt::py_strip(line).is_empty())
        .map(|line| line.trim_end_matches(pyfmt::is_py_space).to_owned())
        .collect()
}

/// Whether `candidate` (provider content) stands for `source` (§11.5): equal canonical
/// texts, or a parser-split chunk of at least 3 lines and 80 characters whose lines are
/// 98% source lines.
pub fn matches(candidate: &str, source: &str) -> bool {
    if canonical_text(candidate) == canonical_text(source) {
        return true;
    }
    let candidate_lines = canonical_lines(candidate);
    if candidate_lines.len() < 3 || candidate.chars().count() < 80 {
        return false;
    }
    let source_lines = canonical_lines(source);
    let found = candidate_lines
        .iter()
        .filter(|line| source_lines.contains(line))
        .count();
    found as f64 / candidate_lines.len() as f64 >= 0.98
}

/// Tree contents verify the source: at least one, all match, and they cover ≥ 80% of
/// the source's distinct lines.
fn covers(contents: &[String], source: &str) -> bool {
    if contents.is_empty() || !contents.iter().all(|found| matches(found, source)) {
        return false;
    }
    let mut source_lines = canonical_lines(source);
    source_lines.sort();
    source_lines.dedup();
    let found: std::collections::BTreeSet<String> = contents
        .iter()
        .flat_map(|found| canonical_lines(found))
        .filter(|line| source_lines.binary_search(line).is_ok())
        .collect();
    found.len() as f64 / source_lines.len().max(1) as f64 >= 0.8
}

/// The URI's last path segment (after removing trailing `/`).
fn last_segment(uri: &str) -> &str {
    let trimmed = uri.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// The URI up to its last `/` (after removing trailing `/`).
fn parent_ref(uri: &str) -> &str {
    let trimmed = uri.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(index) => &trimmed[..index],
        None => trimmed,
    }
}

/// The source file as Python's `read_text(encoding="utf-8")` sees it (universal
/// newlines), or `None` when it cannot be read or decoded.
fn read_source_text(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.replace("\r\n", "\n").replace('\r', "\n"))
}

#[cfg(test)]
mod tests;

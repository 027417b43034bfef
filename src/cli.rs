//! Command-line surface: clap derive types only; their doc comments are the help text.
//!
//! Global options (`--format`, `--registry`, `--runtime-root`) come before the subcommand;
//! every subcommand also takes its own `--format`, which wins, and the subcommands that
//! read the registry route (`experiment-status`, `ingest-event`, `recall`, `apply`,
//! `rank-prior`) also take `--registry` and `--runtime-root` after their name, the
//! `utility-ledger` leaves `--runtime-root` (the default ledger's root). Every command that reads `--input` also takes
//! `--max-input-bytes` ([`InputLimitArg`]). `--detail` is accepted anywhere. Nothing here
//! validates domain values beyond what the reference's argument parser checks. Besides
//! the clap types, this module owns what is derived from them alone: the one-line
//! argument error, shell completions and the man page, and the value parser of an option
//! whose values are a contract's domain enum ([`ChoiceParser`]: the contracts do not know
//! clap).
//!
//! A run declares only the arguments of the subcommand it invokes (`#[command(defer)]`
//! on [`Command`]; building all of them took about 0.3 ms of every run). The argument
//! structs therefore carry plain `//` comments, not doc comments: clap turns a struct's
//! doc comment into an about text, and a deferred subcommand's arguments are declared
//! after its own about text is set, so the struct's text would replace it.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use crate::contract::candidate::{CandidateCase, ReviewDecision};
use crate::contract::health::HealthCase;
use crate::contract::operator::OperatorAction;
use crate::contract::route::{BehaviorStatus, Complexity, RouteCase};
/// The output format the `--format` options parse into (declared by [`crate::output`]).
pub use crate::output::Format;
use crate::recall::decision::ApplyOutcome;
use crate::wire::choice::Choice;

/// The `-V` text (also the man page's): crate version and the commit it was built from
/// (`unknown` outside a git checkout; see `build.rs`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("REWARD_MEMORY_GIT_COMMIT"),
    ")"
);

/// The LoopX reference whose packets this build mirrors (docs/compatibility.md).
macro_rules! loopx_reference {
    () => {
        "loopx reward-memory 0.5.1 (2026-08-23 snapshot; utility reducer bde1cae8)"
    };
}

/// The LoopX reference whose packets this build mirrors.
pub const LOOPX_REFERENCE: &str = loopx_reference!();

/// The `--version` text: [`VERSION`] and [`LOOPX_REFERENCE`].
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("REWARD_MEMORY_GIT_COMMIT"),
    ")\nmirrors ",
    loopx_reference!()
);

/// Exit statuses, printed at the end of the top-level help.
const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  success, including outcomes such as guard_blocked, planned or provider_unavailable
  1  the output could not be written (a closed pipe is not an error)
  2  argument error: nothing on stdout, one line on stderr
  2  invalid request: stdout carries a reward_memory_error_v0 packet
  2  a packet that is not ok: evaluate (release gate not passed), dogfood-evaluate (hold),
     utility-project (rejected), utility-validate (invalid), rank-evaluate (hold),
     utility-ledger append (committed_with_refusals: the valid deliveries are committed;
     refused: nothing was stored), utility-ledger export --salvage (deliveries were lost),
     utility-ledger verify (mismatch) or (damaged), utility-ledger project (rejected partition)
In markdown mode an exit-2 packet also prints one line `reward-memory: <reason>` on stderr.";

/// Registry lookup order, printed at the end of the help of the commands that read it.
macro_rules! route_help {
    () => {
        "\
The registry is --registry PATH, else $LOOPX_REGISTRY, else .loopx/registry.json in the
working directory, else RUNTIME_ROOT/registry.global.json (RUNTIME_ROOT: --runtime-root,
default ~/.codex/loopx; `~` is expanded with $HOME). --registry and --runtime-root may be
given before the subcommand or after it; after it wins."
    };
}

/// `experiment-status` help epilogue.
const ROUTE_HELP: &str = route_help!();

/// `ingest-event` help epilogue: the route and where an executed write goes.
const INGEST_HELP: &str = concat!(
    "\
Without --goal-id/--agent-id the input carries its own corpus, standing policy and provider
binding, and the result is a dry run. With them the route comes from the experiment config
of the goal in the registry, and --execute writes to its provider: `embedded` keeps records
in the binding's provider_binary file when set, else in
RUNTIME_ROOT/reward-memory/embedded.sqlite3; `openviking` runs the `ov` CLI (provider_binary,
default `ov` on $PATH).

",
    route_help!()
);

/// `utility-ledger` leaves' help epilogue: where the ledger is.
const LEDGER_HELP: &str = "\
The ledger is --ledger LOCATION, else $REWARD_MEMORY_LEDGER, else
RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3 (RUNTIME_ROOT: --runtime-root, given before
`utility-ledger` or after the leaf, after wins; default ~/.codex/loopx; `~` is expanded with
$HOME). A location starting with postgres:// or postgresql:// is a PostgreSQL database
(settings missing from the URL come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE;
no TLS); anything else is a SQLite file. Credentials are never printed: --detail shows the
location without them.";

/// Reward Memory contracts of LoopX as one fast binary.
///
/// Each subcommand prints one packet: a markdown summary by default (`--detail` adds a
/// readable report under it), the exact JSON packet with `--format json`.
#[derive(Debug, Parser)]
#[command(
    name = "reward-memory",
    version = VERSION,
    long_version = LONG_VERSION,
    about,
    long_about,
    propagate_version = true,
    after_help = EXIT_STATUS_HELP
)]
pub struct Cli {
    /// Output format when the subcommand does not set its own
    #[arg(long, value_parser = described(format_help), value_name = "FORMAT", env = "REWARD_MEMORY_FORMAT")]
    pub format: Option<Format>,

    /// Registry file for goal/agent routes (default: $LOOPX_REGISTRY, then
    /// .loopx/registry.json, then RUNTIME_ROOT/registry.global.json); read by the
    /// subcommands whose help lists it (experiment-status, ingest-event)
    #[arg(long, value_name = "PATH", env = "REWARD_MEMORY_REGISTRY")]
    pub registry: Option<PathBuf>,

    /// Runtime root holding registry.global.json and the embedded memory store
    /// (default: ~/.codex/loopx); read by the subcommands whose help lists it
    #[arg(long, value_name = "DIR", env = "REWARD_MEMORY_RUNTIME_ROOT")]
    pub runtime_root: Option<PathBuf>,

    /// Markdown only: add a readable report (tables of cases, subjects, receipts, ...)
    /// under the summary; the JSON packet is unchanged
    #[arg(long, global = true)]
    pub detail: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// The `--format` help of each value.
fn format_help(format: Format) -> &'static str {
    match format {
        Format::Markdown => "A short human summary of the packet",
        Format::Json => "The packet itself, byte-compatible with LoopX",
        Format::Jsonl => "The same packet as one line of compact JSON (JSON Lines)",
    }
}

// The per-subcommand `--format` option.
#[derive(Debug, Clone, Args)]
pub struct FormatArg {
    /// Output format (overrides the global --format)
    #[arg(long, value_parser = described(format_help), value_name = "FORMAT")]
    pub format: Option<Format>,
}

/// The value parser of an option whose values are a domain enum ([`Choice`]): the
/// enum's spellings, in [`Choice::ALL`] order, are the possible values that `--help`,
/// the man page and completions list, and any other value is clap's `invalid value`
/// error naming them (with a `similar value` tip), exactly as for a [`clap::ValueEnum`].
#[derive(Clone)]
pub struct ChoiceParser<T> {
    /// The description of each value, shown by `--help`.
    help: Option<fn(T) -> &'static str>,
}

/// The [`ChoiceParser`] of `T`, without value descriptions.
pub fn choice<T: Choice>() -> ChoiceParser<T> {
    ChoiceParser { help: None }
}

/// The [`ChoiceParser`] of `T`, each value described by `help`.
fn described<T: Choice>(help: fn(T) -> &'static str) -> ChoiceParser<T> {
    ChoiceParser { help: Some(help) }
}

impl<T: Choice> ChoiceParser<T> {
    fn values(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        T::ALL.iter().map(|&value| {
            let possible = PossibleValue::new(value.as_str());
            match self.help {
                Some(help) => possible.help(help(value)),
                None => possible,
            }
        })
    }
}

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        // A value that is not UTF-8 is reported lossily, as a `ValueEnum` reports it.
        let lossy = value.to_string_lossy();
        let name = PossibleValuesParser::new(self.values()).parse_ref(
            cmd,
            arg,
            std::ffi::OsStr::new(lossy.as_ref()),
        )?;
        let ignore_case = arg.is_some_and(clap::Arg::is_ignore_case_set);
        T::ALL
            .iter()
            .copied()
            .find(|v| PossibleValue::new(v.as_str()).matches(&name, ignore_case))
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.values()))
    }
}

/// The subcommands. Each one's arguments are declared only when it is the one invoked
/// (or when help, a man page or completions need the whole tree): `defer` keeps the
/// start of every run from building about a hundred arguments it will not parse.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Print the Stage-0 architecture contract: memory classes, precedence, delegation
    Architecture(FormatArg),
    /// Print the Stage-1 reference corpus registry (seven normalized corpora)
    CorpusRegistry(FormatArg),
    /// Classify a fixture corpus's retrieval health (Stage 1)
    HealthCheck(HealthCheckArgs),
    /// Build and review the Issue Fix fixture candidate (Stage 2)
    CandidateReview(CandidateReviewArgs),
    /// Decide pilot fix, evidence hold or meta design gate for a change (PR #3237 guard)
    RouteCheck(RouteCheckArgs),
    /// Resolve the reward-memory experiment of one goal and registered agent
    #[command(after_help = ROUTE_HELP)]
    ExperimentStatus(ExperimentStatusArgs),
    /// Turn one compact feedback event into a guarded memory write (dry run by default)
    #[command(after_help = INGEST_HELP)]
    IngestEvent(IngestEventArgs),
    /// Run the Stage-4 contract suite and release gate (exit 2 unless ready)
    Evaluate(FormatArg),
    /// Evaluate Stage-5 dogfood observations and operator controls (exit 2 unless ready)
    DogfoodEvaluate(InputArgs),
    /// Prepare an authorized edit or retirement of one active reviewed record (no write)
    OperatorControl(OperatorControlArgs),
    /// Reduce utility observations into a read-only projection (exit 2 when rejected)
    #[command(alias = "utility-reduce")]
    UtilityProject(InputArgs),
    /// Build and validate one memory_utility_observation_v0 from its inputs
    UtilityObserve(InputArgs),
    /// Check a utility projection packet with the readback validator (exit 2 if invalid)
    UtilityValidate(InputArgs),
    /// Recall active memories of one exact corpus for a query (Stage 3 seam, fail-open)
    ///
    /// Prints reward_memory_recall_v0; a provider problem is a status with exit 0. Each
    /// result also carries memory_ref_digest, relevance_score and rank. When the recall
    /// completed with results, the raw provider refs behind the opaque memory_refs are
    /// kept in a private session file (mode 0600) under --runtime-root (default
    /// ~/.codex/loopx), named by the printed recall_session_ref, which `apply` takes. The
    /// configured form resolves its route through --registry; the embedded store lives
    /// under the runtime root unless the binding names a file. --rank-prior re-orders the
    /// results only when --evaluation supplies a qualified `rank-evaluate` verdict for the
    /// same profile: ranking influence stays off until it is earned.
    Recall(RecallArgs),
    /// Record the agent's decision about an earlier recall as an application receipt
    ///
    /// Prints reward_memory_application_v0 with its reward_memory_application_receipt_v0
    /// receipt and the receipt's application_receipt_id (rma_...), which utility-observe
    /// accepts unchanged. Opaque refs are mapped back through the recall session under
    /// --runtime-root (the same one recall used); a ref the recall did not return, an
    /// unknown or expired session are refused (exit 2).
    Apply(ApplyArgs),
    /// Re-rank recall candidates with the bounded utility prior (--execute stores its table)
    ///
    /// Input: {"profile", "partition", "projection", "candidates" | "recall"}, where
    /// candidates is [{"memory_ref_digest", "relevance_score"}] and recall is a packet printed
    /// by `recall`; with --ledger the utility comes from the utility ledger's stored
    /// subjects of the partition instead, and the input has no projection. A partition
    /// whose reducer_version is memory_utility_reducer_v1 (or
    /// memory_utility_reducer_v1:half_life_days:N) ranks on the v1 rules: its projection is
    /// a memory_utility_projection_v1, and --ledger reduces each subject under them. Prints
    /// memory_utility_rank_prior_v0. With --execute, the partition's
    /// modifier table is written to the provider of its corpus, found through --goal-id,
    /// --agent-id, --registry and --runtime-root: an exact-readback, versioned
    /// effect on the embedded store; refused on OpenViking (provider_rank_prior_contract_absent,
    /// nothing written). Prints memory_utility_rank_prior_effect_v0. Needs no evaluation
    /// verdict: it only prints (or stores) a ranking and never changes what `recall`
    /// returns; `recall --rank-prior` is the gated path.
    RankPrior(RankPriorArgs),
    /// Held-out ranking evaluation of the bounded utility prior against the other arms
    /// (exit 2 unless qualified)
    ///
    /// Six arms rank the same semantic pool of every held-out episode: 1 semantic
    /// relevance alone, 2 relevance plus access hotness (OpenViking's blend), 3 relevance
    /// times the bounded utility modifier (the rank prior, reducer v0), 4 the same with
    /// every evaluator_inference observation removed from the ledger, 5 a MemRL-style
    /// Q-value arm, 6 arm 3 with the ledger reduced by memory_utility_reducer_v1 (a
    /// simulation adds 7, MemRL on-policy). The gate qualifies arm 3, or arm 6 when the
    /// evaluated partitions name memory_utility_reducer_v1 (their reducer_version).
    /// Prints memory_utility_ranking_evaluation_v1: nDCG@k, success@1, harmful@k, task
    /// cost, false attenuation (with seeded bootstrap intervals), scope leaks and
    /// evaluator disagreement per arm, differences against arm 1, v1 against v0 on the
    /// same resamples, and the verdict for the rank-prior profile's digest. Exit 0 when qualified, 2 when hold (or on an invalid
    /// request). A qualified verdict is what `recall --rank-prior --evaluation` needs to
    /// apply the same profile. Markdown shows the verdict, one table of arms by metrics with
    /// intervals and the gate's checks; --detail adds the differences against arm 1, the
    /// sweep points, the held-out counts, the training ledger and the evaluated profile.
    /// Reads no registry or provider (nor, without --ledger, the runtime root): the
    /// training ledger is a private temporary SQLite file, removed at the end.
    ///
    /// --ledger L --partition P.json (or --all-partitions) evaluates the deployment's own
    /// traffic instead: the recall, apply and outcome events of the ledger's traffic log,
    /// split in time, no ground truth; a P that names reducer_version
    /// memory_utility_reducer_v1 is evaluated (and its verdict bound) under v1. Each arm's value of choosing the memory shown
    /// first is estimated off-policy from the verified outcomes (IPS, self-normalized
    /// IPS, doubly robust, effective sample size, paired bootstrap against semantic); the
    /// prior qualifies only when its SNIPS gain has a lower bound above 0 with enough
    /// held-out traffic and off-policy support (see docs/rank-evaluate.md). The packet's
    /// source.kind is ledger.
    RankEvaluate(RankEvaluateArgs),
    /// Attribute a verified outcome to the memories an application receipt applied: run
    /// the evaluators, append their observations to the utility ledger
    ///
    /// The receipt is --receipt FILE (the `receipt` object apply printed, or the whole apply
    /// packet) or --receipt-id rma_... (stored by apply under --runtime-root); scope
    /// (corpus, surface), application id, artifact, snapshots and digests come from it,
    /// agent and project from --agent-id/--project-id. The built-in deterministic evaluator
    /// reads typed --evidence; --profile FILE (memory_utility_attribution_profile_v0) or
    /// --evaluator-command adds external evaluators. Prints
    /// memory_utility_attribution_receipt_v0: per evaluator appended, duplicate,
    /// sampled_out, quota_exhausted, timeout, malformed, unavailable, refused or
    /// not_selected, with the reason and the observation ids, and the ledger's
    /// high_water_sequence. Fail-open: an evaluator failure exits 0 and writes nothing.
    /// --pending --outcomes FILE.jsonl settles the receipts apply queued.
    UtilityAttribute(UtilityAttributeArgs),
    /// Durable utility ledger: append observations, project, look up, export, verify
    UtilityLedger(UtilityLedgerArgs),
    /// Record an owner correction of one memory's utility under an authorized operator checkpoint
    ///
    /// Reads {corpus, operator_checkpoint, partition, memory_ref_digest, utility_label,
    /// reason_code, evidence_refs?, created_at}: the corpus declaration and checkpoint as
    /// operator-control takes them (checkpoint action "correct", authority the corpus
    /// owner_ref). Appends one owner_correction item observation with provenance correct
    /// and prints memory_utility_correction_receipt_v0; an unauthorized checkpoint exits 2
    /// and appends nothing.
    UtilityCorrect(UtilityCorrectArgs),
    /// Write a working setup for one goal and agent into DIR and print the commands that use it
    ///
    /// Writes DIR/registry.json (the goal, its repo DIR, the agent registered and enabled),
    /// DIR/.loopx/config/reward-memory/experiment.json (two corpora on the embedded store,
    /// each with its standing policy: issue_fix_patch_policy, the Issue Fix policy corpus
    /// of maintainer corrections, and agent_learnings, where the agent's own distilled
    /// experience is admitted as advisory procedural_experience: source kind
    /// agent_observation, actor role agent_self, no action scope) and DIR/lesson.json (an
    /// example lesson), all with absolute paths. Prints reward_memory_init_v0 with the
    /// files and three shell commands: ingest the lesson, recall it with its text
    /// (--deliver-content), apply it. The runtime root is DIR/runtime. Refuses (exit 2,
    /// nothing written) when one of the files exists.
    Init(InitArgs),
    /// Serve the attribution loop to an agent over the Model Context Protocol (stdio)
    ///
    /// Reads JSON-RPC messages on stdin and answers on stdout until stdin closes. Tools:
    /// recall (always with each result's text under delivered_content), apply, attribute,
    /// correct, ingest (one event or a batch), ledger_subject, rank_evaluate and
    /// experiment_status; each takes the JSON request of its subcommand and answers its
    /// packet as JSON text, a refusal as a tool error carrying the error packet.
    /// --registry and --runtime-root (before or after `mcp`) apply to every call. See
    /// docs/mcp.md for registering it with an agent.
    Mcp(McpArgs),
    /// Print a shell completion script to stdout
    Completions(CompletionsArgs),
    /// Print the man page (roff) of reward-memory or of one subcommand to stdout
    Man(ManArgs),
}

// `init DIR`.
#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// Directory to write the setup into (created when missing); optional with --demo
    #[arg(value_name = "DIR", required_unless_present = "demo")]
    pub directory: Option<PathBuf>,
    /// Run the whole loop once on the setup (in a temporary directory unless DIR is
    /// given): ingest three lessons, recall, apply, attribute a verified test, read the
    /// ledger, evaluate the prior in the simulator, recall with and without the prior;
    /// prints reward_memory_demo_v0 with each step and what it proved (exit 2 if a step
    /// failed)
    #[arg(long)]
    pub demo: bool,
    /// Goal id of the new registry entry
    #[arg(long, value_name = "ID", default_value = "my-goal")]
    pub goal_id: String,
    /// Agent id registered and enabled for the goal
    #[arg(long, value_name = "ID", default_value = "agent")]
    pub agent_id: String,
    /// Workspace both corpora are scoped to
    #[arg(long, value_name = "REF", default_value = "workspace:local")]
    pub workspace_ref: String,
    /// Project both corpora are scoped to
    #[arg(long, value_name = "REF", default_value = "project:local")]
    pub project_ref: String,
    #[command(flatten)]
    pub format: FormatArg,
}

// `mcp`: the registry route of every tool call.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub route: RouteArgs,
}

// `completions SHELL`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// Shell to complete for; e.g. `reward-memory completions bash > ~/.local/share/bash-completion/completions/reward-memory`
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

// `man [SUBCOMMAND]`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Subcommand whose page to print (default: the page of reward-memory itself); e.g.
    /// `reward-memory man > reward-memory.1 && man -l reward-memory.1`
    #[arg(value_parser = parse_subcommand_name, value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
}

// The registry route of a subcommand that reads it, given after the subcommand name.
#[derive(Debug, Clone, Default, Args)]
pub struct RouteArgs {
    /// Registry file for goal/agent routes; also accepted before the subcommand (default:
    /// $LOOPX_REGISTRY, then .loopx/registry.json, then RUNTIME_ROOT/registry.global.json)
    #[arg(long, value_name = "PATH")]
    pub registry: Option<PathBuf>,
    /// Runtime root holding registry.global.json and the embedded memory store
    /// reward-memory/embedded.sqlite3; also accepted before the subcommand (default:
    /// ~/.codex/loopx)
    #[arg(long, value_name = "DIR")]
    pub runtime_root: Option<PathBuf>,
}

// `--input FILE|-` plus `--format`.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// JSON input file; `-` reads standard input
    #[arg(long, value_name = "FILE")]
    pub input: String,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
}

/// Default of `--max-input-bytes`: 64 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

// The `--max-input-bytes` option of every command that reads `--input`.
#[derive(Debug, Clone, Copy, Args)]
pub struct InputLimitArg {
    /// Largest JSON input accepted (--input and every other JSON file the command reads),
    /// in bytes (default 64 MiB). A larger file is refused before it is read, and
    /// standard input is not read past the limit: the command prints an invalid_request
    /// packet and exits 2. Parsing needs at most 12 bytes of memory per input byte
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = DEFAULT_MAX_INPUT_BYTES,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_input_bytes: u64,
}

#[derive(Debug, Clone, Args)]
pub struct HealthCheckArgs {
    /// Health fixture to classify
    #[arg(long = "case", value_parser = choice::<HealthCase>(), default_value = "retrieval-verified")]
    pub case: HealthCase,
    /// Probe the goal's configured corpus instead of a fixture (needs --agent-id)
    #[arg(long, requires = "agent_id", conflicts_with = "case")]
    pub goal_id: Option<String>,
    /// Allowlisted agent id of that goal
    #[arg(long, requires = "goal_id")]
    pub agent_id: Option<String>,
    /// Surface to probe (needed when the config declares several)
    #[arg(long, requires = "goal_id")]
    pub surface_id: Option<String>,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub route: RouteArgs,
}

#[derive(Debug, Clone, Args)]
pub struct CandidateReviewArgs {
    /// Candidate fixture to review
    #[arg(
        long = "case",
        value_parser = choice::<CandidateCase>(),
        default_value = "issue-fix-verified-contributor"
    )]
    pub case: CandidateCase,
    /// Review decision to apply
    #[arg(long, value_parser = choice::<ReviewDecision>(), default_value = "accept")]
    pub decision: ReviewDecision,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Args)]
pub struct RouteCheckArgs {
    /// Use a recorded regression fixture instead of the flags below
    #[arg(long = "case", value_parser = choice::<RouteCase>())]
    pub case: Option<RouteCase>,
    /// Whether the behaviour is a confirmed bug
    #[arg(long, value_parser = choice::<BehaviorStatus>(), default_value = "bug_confirmed")]
    pub behavior_status: BehaviorStatus,
    /// Number of surfaces the change touches (1-20; Python int syntax)
    #[arg(long, value_parser = parse_python_int, allow_hyphen_values = true, default_value = "1")]
    pub surface_count: i64,
    /// The change alters a semantic contract
    #[arg(long)]
    pub semantic_contract_change: bool,
    /// The change puts product-specific policy in a generic boundary
    #[arg(long)]
    pub generic_boundary_for_specific_policy: bool,
    /// The change is visible to users
    #[arg(long)]
    pub user_visible_behavior_change: bool,
    /// The change touches a hot path or storage behaviour
    #[arg(long)]
    pub hot_path_or_storage_change: bool,
    /// The change claims retrieval or memory quality
    #[arg(long)]
    pub retrieval_or_memory_quality_claim: bool,
    /// A reproduction is named
    #[arg(long)]
    pub named_reproduction: bool,
    /// A validation is named
    #[arg(long)]
    pub named_validation: bool,
    /// Effect evidence is present
    #[arg(long)]
    pub effect_evidence: bool,
    /// UX evidence is present
    #[arg(long)]
    pub ux_evidence: bool,
    /// Benchmark evidence is present
    #[arg(long)]
    pub benchmark_evidence: bool,
    /// Performance evidence is present
    #[arg(long)]
    pub performance_evidence: bool,
    /// Edge-case complexity of the change
    #[arg(long, value_parser = choice::<Complexity>(), default_value = "low")]
    pub edge_case_complexity: Complexity,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Args)]
pub struct ExperimentStatusArgs {
    /// Goal id in the registry
    #[arg(long, required = true)]
    pub goal_id: String,
    /// Registered agent id of that goal
    #[arg(long, required = true)]
    pub agent_id: String,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub route: RouteArgs,
}

#[derive(Debug, Clone, Args)]
pub struct IngestEventArgs {
    /// Full public fixture or compact event (JSON); `-` reads standard input. A file
    /// name ending in `.jsonl` (or --jsonl) is JSON Lines: one such object per line
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Goal id of the configured experiment route
    #[arg(long)]
    pub goal_id: Option<String>,
    /// Allowlisted agent id of the configured experiment route
    #[arg(long)]
    pub agent_id: Option<String>,
    /// Write to the declared provider and read it back (needs --goal-id and --agent-id)
    #[arg(long)]
    pub execute: bool,
    /// Read --input as JSON Lines whatever its name: one receipt line per event, then a
    /// summary line (exit 2 unless every event was activated, or planned in a dry run)
    #[arg(long)]
    pub jsonl: bool,
    /// Events per store transaction of a JSON Lines ingest; a batch's receipts are
    /// printed once it committed
    #[arg(long, value_name = "N", default_value_t = 500,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batch_size: u32,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub route: RouteArgs,
}

#[derive(Debug, Clone, Args)]
pub struct OperatorControlArgs {
    /// `{"reviewed_record", "corpus", "operator_checkpoint"}` JSON; `-` reads standard input
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Control to prepare
    #[arg(long, value_parser = choice::<OperatorAction>())]
    pub action: OperatorAction,
    /// Public-safe reference of this control
    #[arg(long)]
    pub control_ref: String,
    /// Compact reason for the control
    #[arg(long)]
    pub reasoning_summary: String,
    /// Replacement content summary for an edit
    #[arg(long)]
    pub edited_content_summary: Option<String>,
    /// Goal id of the configured experiment route whose corpus the control changes
    #[arg(long, requires = "agent_id")]
    pub goal_id: Option<String>,
    /// Allowlisted agent id of that goal
    #[arg(long, requires = "goal_id")]
    pub agent_id: Option<String>,
    /// Perform the control on the configured store (retire, revoke, or supersede with the
    /// edited record) in one transaction and read it back (needs --goal-id and --agent-id)
    #[arg(long, requires = "goal_id")]
    pub execute: bool,
    /// Aware ISO timestamp of the change (default: now)
    #[arg(long, requires = "execute")]
    pub observed_at: Option<String>,
    #[command(flatten)]
    pub route: RouteArgs,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `recall`: a configured form (goal/agent route) or an explicit `--input` request.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("utility_source").multiple(true)))]
pub struct RecallArgs {
    /// Explicit form: `{"corpus", "request", "read_authority_checkpoint",
    /// "provider_binding"}` JSON (§10.1/§10.2 shapes); `-` reads standard input
    #[arg(long, value_name = "FILE", conflicts_with_all = ["goal_id", "agent_id", "surface_id", "query", "query_summary", "limit", "observed_at"])]
    pub input: Option<String>,
    /// Configured form: goal id whose experiment route selects corpus, provider and
    /// read authority (as `ingest-event --goal-id`)
    #[arg(long, requires = "agent_id")]
    pub goal_id: Option<String>,
    /// Configured form: allowlisted agent id of that goal
    #[arg(long, requires = "goal_id")]
    pub agent_id: Option<String>,
    /// Configured form: the surface to recall for (needed when the experiment config
    /// declares several surfaces)
    #[arg(long, value_name = "SURFACE")]
    pub surface_id: Option<String>,
    /// Configured form: query text (never printed, only its digest; at most 500
    /// characters); repeat it for a bounded_agentic_search surface (at most the profile's
    /// max_queries)
    #[arg(long, value_name = "TEXT")]
    pub query: Vec<String>,
    /// Configured form: public-safe summary of each --query, in the same order (at most
    /// 220 characters)
    #[arg(long, value_name = "TEXT")]
    pub query_summary: Vec<String>,
    /// Configured form: most results to return (1-50; default: the surface's recall
    /// profile limit). Above 8, the §10.2 request keeps its limit of 8 and the results
    /// beyond it are fetched as a pool (the packet's candidate_fetch says so)
    #[arg(long, value_name = "N")]
    pub limit: Option<i64>,
    /// Configured form: aware ISO timestamp of the recall (default: now, UTC); record
    /// expiry is checked against it
    #[arg(long, value_name = "ISO")]
    pub observed_at: Option<String>,
    /// Seconds the recall session stays usable by `apply` (1-604800)
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub session_ttl: u64,
    /// Deliver each result's content summary to the caller: every result gets a
    /// delivered_content object (visibility caller_private) with the summary, also for a
    /// corpus whose privacy keeps content_summary null. Printed only: never written to the
    /// recall session, the receipt, the traffic log or the ledger
    #[arg(long)]
    pub deliver_content: bool,
    /// Re-rank the results with this rank-prior profile
    /// (memory_utility_rank_prior_profile_v0); off by default. Needs --partition and the
    /// utility (--projection or --ledger), and applies only with a qualified verdict bound
    /// to this profile and partition (--evaluation, or one recorded in the ledger);
    /// otherwise the recall is printed unranked with rank_prior_applied false and
    /// rank_prior_reason_code saying why (exit 0)
    #[arg(long, value_name = "PROFILE.json", requires_all = ["partition", "utility_source"])]
    pub rank_prior: Option<String>,
    /// The memory_utility_projection_v0 packet whose utility the prior uses
    #[arg(
        long,
        value_name = "FILE",
        requires = "rank_prior",
        group = "utility_source"
    )]
    pub projection: Option<String>,
    /// The utility ledger: the recall appends its traffic event to the ledger's traffic
    /// log (candidate digests, relevance, ranks, propensities, the shadow ranking; no
    /// query text or content; a failure is a warning, never a failed recall), and, with
    /// --rank-prior and no --projection, the prior reads its utility there (the stored
    /// subjects of the partition that mention a recalled memory; the ledger must then
    /// exist). LOCATION is a SQLite file or a postgres:// URL (settings it lacks come
    /// from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE); without a value,
    /// $REWARD_MEMORY_LEDGER, then RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3
    /// (RUNTIME_ROOT: --runtime-root, default ~/.codex/loopx). $REWARD_MEMORY_LEDGER alone
    /// also turns the traffic log on
    #[arg(
        long,
        value_name = "LOCATION",
        num_args = 0..=1,
        default_missing_value = "",
        group = "utility_source"
    )]
    pub ledger: Option<String>,
    /// Exploration, off by default: with probability EPSILON (0-1) the recall shows its
    /// semantic pool (the prior profile's, else every result) in a uniformly random order,
    /// and the traffic event logs the propensities, so that `rank-evaluate --ledger` can
    /// estimate other rankings off-policy. Needs the traffic log (--ledger or
    /// $REWARD_MEMORY_LEDGER)
    #[arg(long, value_name = "EPSILON", allow_negative_numbers = true, value_parser = crate::recall::traffic::parse_epsilon)]
    pub explore: Option<f64>,
    /// `{"scope", "retrieval_snapshot_ref", "policy_snapshot_ref", ["reducer_version"]}`
    /// (the object `utility-ledger project --input` takes): the utility partition of this
    /// recall; a projection must have exactly this identity, a ledger is read at this
    /// partition, and the scope must name the recalled corpus and surface
    #[arg(long, value_name = "FILE", requires = "rank_prior")]
    pub partition: Option<String>,
    /// A memory_utility_ranking_evaluation_v1 verdict file of `rank-evaluate` for the
    /// profile. Without it, the newest verdict that `rank-evaluate --record` stored in the
    /// --ledger for this profile and partition is used. The prior applies only when the
    /// verdict is sealed (its verdict_digest), consistent, qualified, for this profile's
    /// murp_ digest and partition, from this ledger (a ledger verdict), not older than the
    /// profile's staleness bound, not superseded by a newer recorded hold, and not a
    /// simulation (unless --allow-simulated-evaluation); otherwise rank_prior_reason_code
    /// says which check failed (rank_prior_evaluation_missing, ranking_evaluation_*)
    #[arg(long, value_name = "FILE", requires = "rank_prior")]
    pub evaluation: Option<String>,
    /// Let a verdict of `rank-evaluate --simulate` open the gate: for demos and tests
    /// only (a simulation says nothing about this deployment's traffic)
    #[arg(long, requires = "rank_prior")]
    pub allow_simulated_evaluation: bool,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub route: RouteArgs,
}

// `utility-ledger`: the durable, append-only utility observation ledger.
//
// The ledger is a SQLite file (default `RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3`,
// next to the embedded memory store; `--runtime-root` moves it) or a
// PostgreSQL database shared by several machines (`--ledger postgres://...`). Within the
// v0 caps (1024 deliveries, 128 subjects per partition) `project` prints exactly what
// `utility-project` prints for the partition's deliveries.
#[derive(Debug, Args)]
pub struct UtilityLedgerArgs {
    #[command(subcommand)]
    pub command: LedgerCommand,
}

// The `utility-ledger` subcommands. (A plain comment: a doc comment here would become the
// group's about text, over the one of `Command::UtilityLedger`.)
#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Append observations (one batch, one transaction); prints the receipt after commit
    /// (exit 2 when any delivery was refused)
    ///
    /// Prints memory_utility_ledger_append_v0. Markdown shows the counts (received,
    /// appended, duplicate, conflicting, refused), the high-water sequence and every listed
    /// refusal with its line, reason code and error; exit 2 when any delivery was refused
    /// (the valid ones are committed all the same).
    #[command(after_help = LEDGER_HELP)]
    Append(LedgerAppendArgs),
    /// Project one partition: the utility-project packet within the v0 caps, else a paged
    /// memory_utility_ledger_projection_v0
    ///
    /// Exit 2 when the partition context is invalid (the rejected packet utility-project
    /// prints for it). With --reducer-version memory_utility_reducer_v1 the same deliveries
    /// are projected under the v1 rules: memory_utility_projection_v1 within the caps, else
    /// (or with a page asked for) memory_utility_ledger_projection_v1. Markdown of a ledger
    /// projection shows its counters and page; --detail adds the subjects table.
    #[command(after_help = LEDGER_HELP)]
    Project(LedgerProjectArgs),
    /// The subjects of one partition that contain the given memory digests
    ///
    /// Prints memory_utility_ledger_subject_v0 (exit 0, also when nothing is found), or
    /// memory_utility_ledger_subject_v1 with --reducer-version memory_utility_reducer_v1.
    /// Markdown shows each subject's label, estimate, support, strongest tier and review;
    /// --detail adds the partition and each subject's latest observations.
    #[command(after_help = LEDGER_HELP)]
    Subject(LedgerSubjectArgs),
    /// Every delivery (of one partition, or all) as JSON Lines in ledger order
    ///
    /// With --salvage, what can still be read of a damaged ledger file, with a summary of
    /// what was lost on stderr.
    #[command(after_help = LEDGER_HELP)]
    Export(LedgerExportArgs),
    /// Recompute every materialized state from the raw deliveries and compare (exit 2 on a
    /// difference)
    ///
    /// Prints memory_utility_ledger_verify_v0: what was checked and, on a mismatch, the
    /// first difference (also on stderr in markdown).
    #[command(after_help = LEDGER_HELP)]
    Verify(LedgerVerifyArgs),
    /// The review queue: subjects whose state proposes attenuation, quarantine (a
    /// conflict) or more attribution, with the commands that resolve each
    ///
    /// Prints memory_utility_ledger_review_v0 (exit 0, also when the queue is empty): per
    /// open proposal its partition, subject, memory digests, review state and reason
    /// codes, support per label, strongest evidence tier, and the resolutions (an owner
    /// correction through utility-correct, a retirement through operator-control
    /// --execute). A proposal leaves the queue once the subject's state proposes nothing
    /// (an owner correction decided it). Without a partition every partition is read;
    /// at most 1000 proposals are listed (open_count counts them all).
    #[command(after_help = LEDGER_HELP)]
    Review(LedgerReviewArgs),
}

// `utility-correct` (help text on [`Command::UtilityCorrect`]).
#[derive(Debug, Clone, Args)]
pub struct UtilityCorrectArgs {
    /// memory_utility_correction_input JSON file; `-` reads standard input
    #[arg(long, value_name = "FILE")]
    pub input: String,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub location: LedgerLocationArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `--ledger LOCATION` and the `--runtime-root` of its default.
#[derive(Debug, Clone, Default, Args)]
pub struct LedgerLocationArg {
    /// Ledger location: a SQLite file path or a postgres://USER:PASSWORD@HOST:PORT/DB URL
    /// (default: $REWARD_MEMORY_LEDGER, then RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3
    /// under --runtime-root, default ~/.codex/loopx). PostgreSQL settings missing
    /// from the URL come from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE; no TLS
    #[arg(long, value_name = "LOCATION")]
    pub ledger: Option<String>,
    /// Runtime root whose reward-memory/utility-ledger.sqlite3 is the default ledger (when
    /// neither --ledger nor $REWARD_MEMORY_LEDGER is set); also accepted before the
    /// subcommand (default: ~/.codex/loopx)
    #[arg(long, value_name = "DIR")]
    pub runtime_root: Option<PathBuf>,
}

// The partition (scope plus snapshots) a command reads: `--input` or six flags.
#[derive(Debug, Clone, Args)]
pub struct PartitionArgs {
    /// JSON object with scope, retrieval_snapshot_ref, policy_snapshot_ref and optional
    /// reducer_version (a utility-project input without observations); `-` reads standard
    /// input. Alternative to the six partition flags
    #[arg(long, value_name = "FILE", conflicts_with_all = ["agent_id", "project_id", "corpus_id", "surface_id", "retrieval_snapshot_ref", "policy_snapshot_ref", "reducer_version"])]
    pub input: Option<String>,
    /// Scope agent id of the partition
    #[arg(long, value_name = "REF")]
    pub agent_id: Option<String>,
    /// Scope project id of the partition
    #[arg(long, value_name = "REF")]
    pub project_id: Option<String>,
    /// Scope corpus id of the partition
    #[arg(long, value_name = "REF")]
    pub corpus_id: Option<String>,
    /// Scope surface id of the partition
    #[arg(long, value_name = "REF")]
    pub surface_id: Option<String>,
    /// Retrieval snapshot ref of the partition
    #[arg(long, value_name = "REF")]
    pub retrieval_snapshot_ref: Option<String>,
    /// Policy snapshot ref of the partition
    #[arg(long, value_name = "REF")]
    pub policy_snapshot_ref: Option<String>,
    /// Reducer version of the partition (default memory_utility_reducer_v0).
    /// memory_utility_reducer_v1 reads the same deliveries under the v1 rules (per-tier
    /// evidence weighed in a Beta posterior, the utility a credible bound);
    /// memory_utility_reducer_v1:half_life_days:N also halves an observation's weight for
    /// every N days it is older than its tier's newest
    #[arg(long, value_name = "VERSION")]
    pub reducer_version: Option<String>,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
}

// `utility-ledger append`.
#[derive(Debug, Clone, Args)]
pub struct LedgerAppendArgs {
    /// Observations: one object {"observations": [...]} (other utility-project input keys
    /// are ignored), JSON Lines, one memory_utility_observation_v0 per line, or one
    /// pretty-printed observation (what utility-observe prints) before them; `-` reads
    /// standard input. Read as a stream: memory stays bounded whatever the size
    #[arg(long, value_name = "FILE")]
    pub input: String,
    #[command(flatten)]
    pub location: LedgerLocationArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `apply`: §10.5 with the agent's decision about the results of one `recall`.
#[derive(Debug, Clone, Args)]
pub struct ApplyArgs {
    /// All fields below as one JSON object (`recall_session_ref`, `application_id`,
    /// `artifact_ref`, `outcome`, `memory_refs`, `reasoning_summary`,
    /// `current_artifact_verified`); `-` reads standard input
    #[arg(long, value_name = "FILE", conflicts_with_all = ["recall_session", "application_id", "artifact_ref", "outcome", "memory_ref", "reasoning_summary", "current_artifact_verified"])]
    pub input: Option<String>,
    /// The `recall_session_ref` printed by recall
    #[arg(long, value_name = "REF", required_unless_present = "input")]
    pub recall_session: Option<String>,
    /// Public-safe token naming this application (part of the receipt id)
    #[arg(long, value_name = "ID", required_unless_present = "input")]
    pub application_id: Option<String>,
    /// Public-safe token of the artifact the memory was applied to
    #[arg(long, value_name = "REF", required_unless_present = "input")]
    pub artifact_ref: Option<String>,
    /// What the agent did with the recalled memories
    #[arg(
        long,
        value_parser = choice::<ApplyOutcome>(),
        required_unless_present = "input"
    )]
    pub outcome: Option<ApplyOutcome>,
    /// An opaque `memory_ref` from the recall's results (repeatable; at least one for
    /// applied)
    #[arg(long, value_name = "OPAQUE_REF")]
    pub memory_ref: Vec<String>,
    /// Compact public-safe reason for the decision (at most 500 characters)
    #[arg(long, value_name = "TEXT", required_unless_present = "input")]
    pub reasoning_summary: Option<String>,
    /// The current artifact was verified after applying (required for applied)
    #[arg(long)]
    pub current_artifact_verified: bool,
    /// Utility ledger location (file or postgres:// URL; without a value or without the
    /// flag, $REWARD_MEMORY_LEDGER, then RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3):
    /// with one configured (the flag or $REWARD_MEMORY_LEDGER), the stored receipt is also
    /// queued for `utility-attribute --pending`, and the apply event (receipt id, applied
    /// digests) is appended to the ledger's traffic log (a failure is a warning)
    #[arg(long, value_name = "LOCATION", num_args = 0..=1, default_missing_value = "")]
    pub ledger: Option<String>,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub route: RouteArgs,
}

// `utility-attribute`.
#[derive(Debug, Clone, Args)]
pub struct UtilityAttributeArgs {
    /// The application receipt: the `receipt` object apply printed, or the whole apply
    /// packet (its `receipt` is used); `-` reads standard input
    #[arg(long, value_name = "FILE", conflicts_with_all = ["receipt_id", "pending"], required_unless_present_any = ["receipt_id", "pending"])]
    pub receipt: Option<String>,
    /// The rma_ id of a receipt apply stored under --runtime-root
    #[arg(long, value_name = "RMA_ID", conflicts_with = "pending")]
    pub receipt_id: Option<String>,
    /// Opaque public-safe reference of the verified outcome (e.g. effect:ci-17)
    #[arg(long, value_name = "REF", required_unless_present = "pending")]
    pub outcome_ref: Option<String>,
    /// The outcome's status: succeeded, failed or partial
    #[arg(long, value_name = "STATUS", value_parser = ["succeeded", "failed", "partial"], required_unless_present = "pending")]
    pub outcome_status: Option<String>,
    /// The outcome was verified (required: only verified outcomes are attributed)
    #[arg(long)]
    pub verified: bool,
    /// Typed evidence KIND:REF:RESULT:DIGEST, e.g. test:ci-17:passed:0123456789abcdef
    /// (RESULT passed or failed; DIGEST a memory_ref_digest of the receipt, or `set`);
    /// repeatable
    #[arg(long, value_name = "ITEM")]
    pub evidence: Vec<String>,
    /// Agent id of the partition the observations land in; default: the one the receipt
    /// records (apply records the route's), which this may only repeat
    #[arg(long, value_name = "REF")]
    pub agent_id: Option<String>,
    /// Project id of the partition the observations land in; default: the one the
    /// receipt records, which this may only repeat
    #[arg(long, value_name = "REF")]
    pub project_id: Option<String>,
    /// Attribution profile (memory_utility_attribution_profile_v0); default: the built-in
    /// deterministic evaluator only
    #[arg(long, value_name = "FILE", conflicts_with = "evaluator_command")]
    pub profile: Option<String>,
    /// An external evaluator program (no arguments, no shell) run as the one evaluator, at
    /// max tier evaluator_inference, without a profile
    #[arg(long, value_name = "PROGRAM")]
    pub evaluator_command: Option<String>,
    /// Timeout of --evaluator-command in milliseconds
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 10_000,
        requires = "evaluator_command"
    )]
    pub evaluator_timeout_ms: u64,
    /// Settle the pending attributions apply queued, with outcomes from --outcomes
    #[arg(long, requires = "outcomes")]
    pub pending: bool,
    /// JSON Lines of outcomes, one {application_receipt_id, outcome_ref, outcome_status,
    /// verified, evidence} per line (with --pending)
    #[arg(long, value_name = "FILE", requires = "pending")]
    pub outcomes: Option<String>,
    /// Settle at most N outcome lines (with --pending)
    #[arg(long, value_name = "N", requires = "pending")]
    pub max: Option<u64>,
    #[command(flatten)]
    pub location: LedgerLocationArg,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `utility-ledger project`.
#[derive(Debug, Clone, Args)]
pub struct LedgerProjectArgs {
    #[command(flatten)]
    pub partition: PartitionArgs,
    /// Page size of the ledger projection (1-128); asking for a page always prints
    /// memory_utility_ledger_projection_v0 (_v1 for a v1 reducer version)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Start the page after this subject_id (the next_after of the previous page)
    #[arg(long, value_name = "SUBJECT_ID")]
    pub after: Option<String>,
    #[command(flatten)]
    pub location: LedgerLocationArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `utility-ledger subject`.
#[derive(Debug, Clone, Args)]
pub struct LedgerSubjectArgs {
    #[command(flatten)]
    pub partition: PartitionArgs,
    /// Memory digest (16 hex or sha256:64 hex) whose subjects to print; repeatable
    #[arg(long, value_name = "DIGEST")]
    pub memory_ref_digest: Vec<String>,
    #[command(flatten)]
    pub location: LedgerLocationArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `rank-prior`: the pure bounded rank prior, or with `--execute` its provider effect.
#[derive(Debug, Clone, Args)]
pub struct RankPriorArgs {
    /// The request JSON; `-` reads standard input
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Write the modifier table as a versioned provider effect and read it back (needs
    /// --goal-id and --agent-id; uses --registry and --runtime-root)
    #[arg(long, requires_all = ["goal_id", "agent_id"])]
    pub execute: bool,
    /// Goal id of the experiment route that names the corpus's provider (--execute)
    #[arg(long, requires = "execute")]
    pub goal_id: Option<String>,
    /// Allowlisted agent id of that goal (--execute)
    #[arg(long, requires = "execute")]
    pub agent_id: Option<String>,
    /// Read the utility from the utility ledger instead of the request's projection: the
    /// stored subjects of the request's partition that mention a candidate (the request
    /// then has no projection). LOCATION is a SQLite file or a postgres:// URL (settings it
    /// lacks come from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE); without a value,
    /// $REWARD_MEMORY_LEDGER, then RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3
    /// (RUNTIME_ROOT: --runtime-root, default ~/.codex/loopx). Not with --execute, whose
    /// effect table covers every subject of a projection
    #[arg(
        long,
        value_name = "LOCATION",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with = "execute"
    )]
    pub ledger: Option<String>,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
    #[command(flatten)]
    pub route: RouteArgs,
}

// `utility-ledger export`.
#[derive(Debug, Clone, Args)]
pub struct LedgerExportArgs {
    /// Export one partition only (else every delivery of the ledger)
    #[command(flatten)]
    pub partition: PartitionArgs,
    /// Export only deliveries after this sequence (whole-ledger export)
    #[arg(long, value_name = "SEQ")]
    pub after_sequence: Option<i64>,
    /// Read a damaged SQLite ledger row by row: export every delivery that can still be
    /// read (each re-validated), skip what cannot, and say on stderr how many were
    /// exported and which sequences were lost (exit 2 unless every one was exported).
    /// Append the output to a new ledger. Whole-ledger only
    #[arg(long)]
    pub salvage: bool,
    /// Write each delivery as a `memory_utility_ledger_delivery_v0` line with its sequence
    /// and provenance (import, attribute, correct) around the observation; such lines are
    /// a report, not `append` input (plain export lines re-append as imports)
    #[arg(long, conflicts_with = "salvage")]
    pub provenance: bool,
    #[command(flatten)]
    pub location: LedgerLocationArg,
    /// Output format of an error packet (the export itself is always JSON Lines)
    #[command(flatten)]
    pub format: FormatArg,
}

// `rank-evaluate`: the held-out ranking evaluation (help text on [`Command::RankEvaluate`]).
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("episodes_source").required(true).args(["input", "simulate", "ledger"])))]
pub struct RankEvaluateArgs {
    /// Held-out episodes from real use: JSON Lines of memory_utility_ranking_episode_v0
    /// episodes (split training or held_out) and memory_utility_observation_v0 deliveries;
    /// `-` reads standard input. Malformed lines are listed with their numbers (exit 2)
    #[arg(long, value_name = "EPISODES.jsonl")]
    pub input: Option<String>,
    /// Generate training and held-out episodes with the deterministic simulator instead
    #[arg(long)]
    pub simulate: bool,
    /// Seed of the simulator and of the bootstrap resamples (default: the profile's seed,
    /// else 1); the same seed gives byte-identical output
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// With --simulate: training episodes to simulate (1-1000000; default 10000); the
    /// held-out episodes are held_out_ratio of them (default 0.2)
    #[arg(long, value_name = "N")]
    pub episodes: Option<u64>,
    /// memory_utility_ranking_evaluation_profile_v0 JSON: the rank-prior profile to
    /// evaluate, metric and gate settings, hotness and MemRL settings, simulator
    /// parameters (every key optional; see docs/rank-evaluate.md)
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// With --simulate, NAME=V1,V2,...: rerun the simulation once per value of one
    /// simulator parameter (or hotness.NAME, memrl.NAME), e.g.
    /// evaluator_accuracy=0.5,0.6,0.7,0.8,0.9; the verdict and exit status stay those of
    /// the profile's own run
    #[arg(long, value_name = "NAME=V1,V2,...")]
    pub sweep: Option<String>,
    /// Also write an SVG chart of nDCG@k per arm (and per sweep point) to this file
    #[arg(long, value_name = "FILE.svg", conflicts_with = "ledger")]
    pub plot: Option<std::path::PathBuf>,
    /// Evaluate on the deployment's own traffic: the traffic log that recall, apply and
    /// utility-attribute append to this utility ledger. Training and held-out episodes
    /// are split in time (the latest 30% of the recalls with a verified outcome are held
    /// out; training sees only what was logged before them), every arm's value is
    /// estimated off-policy (IPS, self-normalized IPS, doubly robust; rewards succeeded 1,
    /// partial 0.5, failed 0) and too little traffic is a hold
    /// (insufficient_held_out_traffic). LOCATION as for utility-ledger; without a value,
    /// $REWARD_MEMORY_LEDGER, then RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3
    #[arg(long, value_name = "LOCATION", num_args = 0..=1, default_missing_value = "", conflicts_with_all = ["input", "simulate"])]
    pub ledger: Option<String>,
    /// With --ledger: the partition to evaluate, `{"scope", "retrieval_snapshot_ref",
    /// "policy_snapshot_ref"}` (the object utility-attribute prints and utility-ledger
    /// project takes)
    #[arg(
        long,
        value_name = "P.json",
        requires = "ledger",
        conflicts_with = "all_partitions"
    )]
    pub partition: Option<String>,
    /// With --ledger: evaluate every partition of the traffic log together (each episode
    /// ranked with its own partition's utility)
    #[arg(long, requires = "ledger")]
    pub all_partitions: bool,
    /// With --ledger: also write the episodes built from the log (JSON Lines: the
    /// training deliveries, then memory_utility_logged_episode_v0 lines); `rank-evaluate
    /// --input FILE` of it gives the same figures
    #[arg(long, value_name = "FILE.jsonl", requires = "ledger")]
    pub export_episodes: Option<std::path::PathBuf>,
    /// Record the verdict in the utility ledger at LOCATION (without a value:
    /// $REWARD_MEMORY_LEDGER, then RUNTIME_ROOT/reward-memory/utility-ledger.sqlite3), where
    /// `recall --rank-prior --ledger` finds the newest verdict for its profile and
    /// partition. Only a verdict of real episodes is recorded (--input, or the ledger's own
    /// traffic); a simulation is refused. Appended, never replaced: a later hold
    /// supersedes an earlier qualified verdict
    #[arg(
        long,
        value_name = "LOCATION",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub record: Option<String>,
    #[command(flatten)]
    pub input_limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `utility-ledger review`.
#[derive(Debug, Clone, Args)]
pub struct LedgerReviewArgs {
    #[command(flatten)]
    pub partition: PartitionArgs,
    #[command(flatten)]
    pub location: LedgerLocationArg,
    #[command(flatten)]
    pub format: FormatArg,
}

// `utility-ledger verify`.
#[derive(Debug, Clone, Args)]
pub struct LedgerVerifyArgs {
    #[command(flatten)]
    pub location: LedgerLocationArg,
    #[command(flatten)]
    pub format: FormatArg,
}

/// A one-line description of an argument error: what was wrong, which flag, the allowed
/// values when there is a fixed set, clap's tips (e.g. `a similar subcommand exists:
/// 'evaluate'`) and, for a global option given after a subcommand that does not read it,
/// where it belongs.
pub fn argument_error_line(err: &clap::Error) -> String {
    use clap::error::ErrorKind;
    use clap::error::{ContextKind, ContextValue};
    if matches!(
        err.kind(),
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return format!(
            "reward-memory: error: a subcommand is required (one of: {})",
            subcommand_names().join(", ")
        );
    }
    let rendered = err.to_string();
    // Paragraphs: the message first, then clap's `tip:` lines, then the usage block.
    let paragraphs: Vec<String> = rendered
        .split("\n\n")
        .map(|p| {
            p.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|p| !p.is_empty())
        .collect();
    let first = paragraphs
        .first()
        .map(|p| p.trim_start_matches("error: ").to_owned())
        .unwrap_or_default();
    let mut line = format!("reward-memory: error: {first}");
    if let Some(ContextValue::Strings(values)) = err.get(ContextKind::ValidValue)
        && !values.is_empty()
        && !first.contains("possible values")
    {
        line.push_str(&format!(" (allowed: {})", values.join(", ")));
    }
    let global_hint = match (err.kind(), err.get(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(ContextValue::String(arg))) => global_option_hint(arg),
        _ => None,
    };
    let mut tips: Vec<&str> = paragraphs
        .iter()
        .map(String::as_str)
        .filter(|p| p.starts_with("tip: "))
        .collect();
    if let Some(hint) = &global_hint {
        // A global option is not meant as a positional value.
        tips.retain(|t| !t.contains("as a value"));
        tips.push(hint);
    }
    for tip in tips {
        line.push_str("; ");
        line.push_str(tip);
    }
    line
}

/// The whole command tree, built, every subcommand's arguments declared, as
/// completions and argument hints need it.
///
/// [`Command`] defers each subcommand's arguments until that subcommand is built, and a
/// parent derives its `help SUBCOMMAND...` tree before building its children, so one
/// build would leave `help utility-ledger` without its leaves. The subcommands of one
/// built tree are therefore put under a fresh top level, which is then built.
pub fn full_command() -> clap::Command {
    use clap::CommandFactory;
    let mut built = Cli::command();
    built.build();
    let mut cmd = Cli::command().mut_subcommands(|stub| {
        built
            .find_subcommand(stub.get_name())
            .cloned()
            .unwrap_or(stub)
    });
    cmd.build();
    cmd
}

/// Names of the subcommands, in help order.
pub fn subcommand_names() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect()
}

/// The hint for `--registry`/`--runtime-root` (or any other top-level option) typed after
/// a subcommand that does not take it.
fn global_option_hint(arg: &str) -> Option<String> {
    let name = arg.split('=').next().unwrap_or(arg).strip_prefix("--")?;
    let cli = full_command();
    let global = cli
        .get_arguments()
        .find(|a| a.get_long() == Some(name) && !a.is_global_set())?;
    let reads = |cmd: &clap::Command| {
        cmd.get_arguments()
            .any(|a| a.get_id() == global.get_id() && a.get_long() == Some(name))
    };
    // A command group (utility-ledger) reads it when its leaves do.
    let readers: Vec<&str> = cli
        .get_subcommands()
        .filter(|sub| reads(sub) || sub.get_subcommands().any(&reads))
        .map(|sub| sub.get_name())
        .collect();
    let mut hint = format!("tip: --{name} is a global option: give it before the subcommand");
    match readers.as_slice() {
        [] => {}
        [one] => hint.push_str(&format!(
            " (only {one} reads it, and also accepts it after its name)"
        )),
        [first @ .., last] => hint.push_str(&format!(
            " (only {} and {last} read it, and also accept it after their name)",
            first.join(", ")
        )),
    }
    Some(hint)
}

/// The `man SUBCOMMAND` value: one of the subcommand names.
fn parse_subcommand_name(raw: &str) -> Result<String, String> {
    let names = subcommand_names();
    if names.iter().any(|n| n == raw) {
        Ok(raw.to_owned())
    } else {
        Err(format!(
            "no subcommand '{raw}' (one of: {})",
            names.join(", ")
        ))
    }
}

/// The completion script of `shell` for the whole command line.
///
/// clap_complete's bash script spells the state of a subcommand of a hyphenated binary
/// two ways (`reward__memory__subcmd__X` in the dispatch loop, `reward__subcmd__memory__...`
/// in the case arms; clap-rs/clap#6421, unfixed in 4.6.12), so no subcommand option would
/// ever complete; the arms are respelled to match the loop.
pub fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = full_command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "reward-memory", &mut out);
    if shell == clap_complete::Shell::Bash {
        let text =
            String::from_utf8_lossy(&out).replace("reward__subcmd__memory", "reward__memory");
        return text.into_bytes();
    }
    out
}

/// The roff man page of `reward-memory`, or of one of its subcommands (a page named
/// `reward-memory-<subcommand>`).
pub fn man_page(subcommand: Option<&str>) -> Result<Vec<u8>, std::io::Error> {
    use clap::CommandFactory;
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let page = match subcommand.and_then(|name| cmd.find_subcommand(name)) {
        Some(sub) => sub.clone(),
        None => cmd,
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    Ok(out)
}

/// Python `int()` on a command-line string: surrounding whitespace, a sign, underscores
/// between digits and any Unicode decimal digits.
pub fn parse_python_int(raw: &str) -> Result<i64, String> {
    let invalid = || format!("invalid int value: '{raw}'");
    let s = crate::wire::pyfmt::py_strip(raw);
    let (negative, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if body.is_empty() || body.starts_with('_') || body.ends_with('_') || body.contains("__") {
        return Err(invalid());
    }
    let mut value: i64 = 0;
    for c in body.chars() {
        if c == '_' {
            continue;
        }
        let digit = c
            .to_digit(10)
            .or_else(|| unicode_decimal(c))
            .ok_or_else(invalid)?;
        // Python ints are unbounded; saturating keeps every huge value out of any
        // bounded range check, so it fails that check rather than the parse.
        value = value.saturating_mul(10).saturating_add(i64::from(digit));
    }
    Ok(if negative { -value } else { value })
}

/// The subcommand of `reward-memory ARGS...`, for tests of what a command line asks for.
#[cfg(test)]
pub(crate) fn parse_command(args: &[&str]) -> Command {
    let argv = std::iter::once("reward-memory").chain(args.iter().copied());
    match Cli::try_parse_from(argv) {
        Ok(cli) => cli.command,
        Err(err) => panic!("{args:?} does not parse: {err}"),
    }
}

/// The value of a non-ASCII Unicode decimal digit (Nd blocks laid out as 0-9 runs).
fn unicode_decimal(c: char) -> Option<u32> {
    const ZEROS: &[u32] = &[
        0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
        0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0,
        0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0,
        0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450,
        0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x16A60, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
        0x1D7EC, 0x1D7F6, 0x1E950,
    ];
    let u = c as u32;
    ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&u))
        .map(|zero| u - zero)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_int_accepts_python_forms() {
        assert_eq!(parse_python_int(" 5_0 "), Ok(50));
        assert_eq!(parse_python_int("+3"), Ok(3));
        assert_eq!(parse_python_int("-2"), Ok(-2));
        assert_eq!(parse_python_int("٣"), Ok(3));
        assert!(parse_python_int("two").is_err());
        assert!(parse_python_int("5__0").is_err());
        assert!(parse_python_int("").is_err());
        assert_eq!(parse_python_int("99999999999999999999"), Ok(i64::MAX));
        assert_eq!(parse_python_int("-99999999999999999999"), Ok(-i64::MAX));
    }

    /// The possible values `--help`, completions and the man page list for an option.
    fn listed(subcommand: Option<&str>, long: &str) -> Vec<String> {
        let cli = full_command();
        let cmd = match subcommand {
            Some(name) => cli.find_subcommand(name).expect("subcommand").clone(),
            None => cli,
        };
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_long() == Some(long))
            .expect("option");
        arg.get_possible_values()
            .iter()
            .map(|v| v.get_name().to_owned())
            .collect()
    }

    #[test]
    fn domain_enum_options_list_their_spellings_in_order() {
        let rows: [(Option<&str>, &str, Vec<&str>); 8] = [
            (None, "format", Format::names()),
            (Some("health-check"), "case", HealthCase::names()),
            (Some("candidate-review"), "case", CandidateCase::names()),
            (
                Some("candidate-review"),
                "decision",
                ReviewDecision::names(),
            ),
            (Some("route-check"), "case", RouteCase::names()),
            (
                Some("route-check"),
                "behavior-status",
                BehaviorStatus::names(),
            ),
            (
                Some("route-check"),
                "edge-case-complexity",
                Complexity::names(),
            ),
            (Some("operator-control"), "action", OperatorAction::names()),
        ];
        for (subcommand, long, names) in rows {
            assert_eq!(listed(subcommand, long), names, "{subcommand:?} --{long}");
        }
        assert_eq!(
            listed(Some("health-check"), "case")[3..5],
            ["wrong-project", "wrong-surface"]
        );
        assert_eq!(listed(Some("candidate-review"), "decision")[4], "no_write");
    }

    #[test]
    fn every_spelling_parses_into_its_value() {
        for &case in HealthCase::ALL {
            let cli =
                Cli::try_parse_from(["reward-memory", "health-check", "--case", case.as_str()])
                    .expect("parses");
            let Command::HealthCheck(args) = cli.command else {
                panic!("health-check");
            };
            assert_eq!(args.case, case);
        }
        for &decision in ReviewDecision::ALL {
            let argv = [
                "reward-memory",
                "candidate-review",
                "--decision",
                decision.as_str(),
            ];
            let cli = Cli::try_parse_from(argv).expect("parses");
            let Command::CandidateReview(args) = cli.command else {
                panic!("candidate-review");
            };
            assert_eq!(args.decision, decision);
        }
        let cli = Cli::try_parse_from(["reward-memory", "--format", "json", "architecture"])
            .expect("parses");
        assert_eq!(cli.format, Some(Format::Json));
    }

    #[test]
    fn an_unknown_spelling_is_an_invalid_value_with_a_tip() {
        let err = Cli::try_parse_from(["reward-memory", "health-check", "--case", "Stale"])
            .expect_err("unknown");
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
        let line = argument_error_line(&err);
        assert!(
            line.ends_with("applied-verified]; tip: a similar value exists: 'stale'"),
            "{line}"
        );
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}

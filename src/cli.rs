//! Command-line surface: clap derive types only; their doc comments are the help text.
//!
//! Global options (`--format`, `--registry`, `--runtime-root`) come before the subcommand;
//! every subcommand also takes its own `--format`, which wins. Every command that reads
//! `--input` also takes `--max-input-bytes` ([`InputLimitArg`]). Nothing here validates
//! domain values beyond what the reference's argument parser checks.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Reward Memory contracts of LoopX as one fast binary.
///
/// Each subcommand prints one packet: markdown by default, the exact JSON packet with
/// `--format json`. Exit status: 0 success, 2 invalid request (a `reward_memory_error_v0`
/// packet on stdout) or argument error (a message on stderr), 2 when `evaluate`,
/// `dogfood-evaluate` or `utility-project` print a packet that is not ok.
#[derive(Debug, Parser)]
#[command(
    name = "reward-memory",
    version,
    about,
    long_about,
    propagate_version = true
)]
pub struct Cli {
    /// Output format when the subcommand does not set its own
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Registry file for goal/agent routes (default: $LOOPX_REGISTRY, then
    /// .loopx/registry.json, then RUNTIME_ROOT/registry.global.json)
    #[arg(long, value_name = "PATH")]
    pub registry: Option<PathBuf>,

    /// Runtime root holding registry.global.json and the embedded memory store
    /// (default: ~/.codex/loopx)
    #[arg(long, value_name = "DIR")]
    pub runtime_root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// Output format of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A short human summary of the packet
    Markdown,
    /// The packet itself, byte-compatible with LoopX
    Json,
}

/// The per-subcommand `--format` option.
#[derive(Debug, Clone, Args)]
pub struct FormatArg {
    /// Output format (overrides the global --format)
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
}

#[derive(Debug, Subcommand)]
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
    ExperimentStatus(ExperimentStatusArgs),
    /// Turn one compact feedback event into a guarded memory write (dry run by default)
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
    /// Check a memory_utility_projection_v0 with the readback validator (exit 2 if invalid)
    UtilityValidate(InputArgs),
}

/// `--input FILE|-` plus `--format`.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// JSON input file; `-` reads standard input
    #[arg(long, value_name = "FILE")]
    pub input: String,
    #[command(flatten)]
    pub limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
}

/// Default of `--max-input-bytes`: 64 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// The `--max-input-bytes` option of every command that reads `--input`.
#[derive(Debug, Clone, Copy, Args)]
pub struct InputLimitArg {
    /// Largest --input accepted, in bytes (default 64 MiB). A larger file is refused
    /// before it is read, and standard input is not read past the limit: the command
    /// prints an invalid_request packet and exits 2. Parsing needs at most 12 bytes of
    /// memory per input byte
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = DEFAULT_MAX_INPUT_BYTES,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_input_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HealthCase {
    Unavailable,
    Empty,
    Stale,
    WrongProject,
    WrongSurface,
    IndexUnavailable,
    RetrievalFailed,
    ReadbackUnverified,
    RetrievalVerified,
    AppliedVerified,
}

#[derive(Debug, Clone, Args)]
pub struct HealthCheckArgs {
    /// Health fixture to classify
    #[arg(long = "case", value_enum, default_value = "retrieval-verified")]
    pub case: HealthCase,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CandidateCase {
    IssueFixVerifiedContributor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviewDecision {
    Accept,
    Edit,
    Reject,
    Retire,
    #[value(name = "no_write")]
    NoWrite,
}

#[derive(Debug, Clone, Args)]
pub struct CandidateReviewArgs {
    /// Candidate fixture to review
    #[arg(
        long = "case",
        value_enum,
        default_value = "issue-fix-verified-contributor"
    )]
    pub case: CandidateCase,
    /// Review decision to apply
    #[arg(long, value_enum, default_value = "accept")]
    pub decision: ReviewDecision,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RouteCase {
    #[value(name = "pr-3237")]
    Pr3237,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BehaviorStatus {
    #[value(name = "bug_confirmed")]
    BugConfirmed,
    #[value(name = "by_design")]
    ByDesign,
    #[value(name = "uncertain")]
    Uncertain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Complexity {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, Args)]
pub struct RouteCheckArgs {
    /// Use a recorded regression fixture instead of the flags below
    #[arg(long = "case", value_enum)]
    pub case: Option<RouteCase>,
    /// Whether the behaviour is a confirmed bug
    #[arg(long, value_enum, default_value = "bug_confirmed")]
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
    #[arg(long, value_enum, default_value = "low")]
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
}

#[derive(Debug, Clone, Args)]
pub struct IngestEventArgs {
    /// Full public fixture or compact event (JSON); `-` reads standard input
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
    #[command(flatten)]
    pub limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OperatorAction {
    Edit,
    Retire,
}

#[derive(Debug, Clone, Args)]
pub struct OperatorControlArgs {
    /// `{"reviewed_record", "corpus", "operator_checkpoint"}` JSON; `-` reads standard input
    #[arg(long, value_name = "FILE")]
    pub input: String,
    /// Control to prepare
    #[arg(long, value_enum)]
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
    #[command(flatten)]
    pub limit: InputLimitArg,
    #[command(flatten)]
    pub format: FormatArg,
}

/// A one-line description of an argument error: what was wrong, which flag, and the
/// allowed values when there is a fixed set.
pub fn argument_error_line(err: &clap::Error) -> String {
    use clap::error::ErrorKind;
    use clap::error::{ContextKind, ContextValue};
    if matches!(
        err.kind(),
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        use clap::CommandFactory;
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        return format!(
            "reward-memory: error: a subcommand is required (one of: {})",
            names.join(", ")
        );
    }
    let rendered = err.to_string();
    // The message is the first paragraph; continuation lines are indented.
    let first = rendered
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_owned();
    let mut line = format!("reward-memory: error: {first}");
    if let Some(ContextValue::Strings(values)) = err.get(ContextKind::ValidValue)
        && !first.contains("possible values")
    {
        line.push_str(&format!(" (allowed: {})", values.join(", ")));
    }
    line
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

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}

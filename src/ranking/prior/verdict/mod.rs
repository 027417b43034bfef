//! The evaluation gate of `recall --rank-prior`: a `memory_utility_ranking_evaluation_v1`
//! verdict as read ([`Verdict`]: its seal, its figures against its verdict, what it is
//! bound to) and whether it lets a profile apply to one recall ([`Verdict::blocks`]).
//! `rank-evaluate` writes the verdict and seals it with [`verdict_digest`]. Pure: the
//! shell supplies the clock reading and the ledger's identity.

use crate::wire::digest::prefixed_canonical;
use crate::wire::json::{Map, Value};
use crate::wire::timestamp::parse_aware;

use super::profile::Profile;

/// Schema version of a ranking evaluation verdict.
pub const EVALUATION_SCHEMA_VERSION: &str = "memory_utility_ranking_evaluation_v1";

/// The prefix of a verdict's `verdict_digest`.
pub const VERDICT_DIGEST_PREFIX: &str = "murv_";

/// The key of the seal.
pub const VERDICT_DIGEST_KEY: &str = "verdict_digest";

/// Why `recall --rank-prior` left the prior off: no verdict was given or recorded.
/// Ranking influence stays default-off until a `qualified` verdict for the profile and
/// partition exists (attribution RFC §9 Stage 4; `docs/recall.md`).
pub const EVALUATION_MISSING: &str = "rank_prior_evaluation_missing";

/// Every reason code a verdict can keep the prior off with (fail-open: the recall is
/// still printed), in the order [`Verdict::blocks`] checks them.
pub mod refusal {
    /// Not a `memory_utility_ranking_evaluation_v1` packet (a `v0` verdict carries no
    /// binding and no seal, so it never opens the gate).
    pub const UNBOUND: &str = "ranking_evaluation_unbound";
    /// `verdict_digest` is missing or is not the digest of the packet's content.
    pub const DIGEST_MISMATCH: &str = "ranking_evaluation_digest_mismatch";
    /// The packet's figures contradict its verdict (a failed check, an interval not above
    /// zero, reasons on a `qualified` verdict, `ok`/`status` that disagree, …).
    pub const INCONSISTENT: &str = "ranking_evaluation_inconsistent";
    /// The verdict is about another profile digest.
    pub const PROFILE_MISMATCH: &str = "ranking_evaluation_profile_mismatch";
    /// A simulation verdict, without `--allow-simulated-evaluation`.
    pub const SIMULATED: &str = "ranking_evaluation_simulated";
    /// The recall's partition is not one the verdict evaluated.
    pub const PARTITION_MISMATCH: &str = "ranking_evaluation_partition_mismatch";
    /// A ledger verdict of another ledger, or used without its ledger (`--ledger`).
    pub const LEDGER_MISMATCH: &str = "ranking_evaluation_ledger_mismatch";
    /// Older than the profile's staleness bound (days, or new deliveries since).
    pub const STALE: &str = "ranking_evaluation_stale";
    /// A newer recorded verdict for the profile and partition says `hold`.
    pub const SUPERSEDED: &str = "ranking_evaluation_superseded_by_hold";
    /// The verdict is `hold`.
    pub const NOT_QUALIFIED: &str = "ranking_evaluation_not_qualified";
}

/// The default staleness bound in days when the profile names none.
pub const DEFAULT_MAX_AGE_DAYS: u32 = 30;

const MICROS_PER_DAY: i128 = 86_400_000_000;

/// `murv_` + SHA-256 of the canonical JSON of `packet` without its `verdict_digest`.
pub fn verdict_digest(packet: &Map) -> String {
    let mut content = packet.clone();
    content.remove(VERDICT_DIGEST_KEY);
    prefixed_canonical(VERDICT_DIGEST_PREFIX, &Value::Object(content))
}

/// Where the verdict's episodes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Simulation,
    EpisodesFile,
    Ledger,
}

impl SourceKind {
    fn parse(text: &str) -> Option<SourceKind> {
        match text {
            "simulation" => Some(SourceKind::Simulation),
            "episodes_file" => Some(SourceKind::EpisodesFile),
            "ledger" => Some(SourceKind::Ledger),
            _ => None,
        }
    }
}

/// A verdict as read: what it says and what it is bound to, or the defect that makes it
/// unusable whatever the recall.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// `verdict == "qualified"`.
    pub qualified: bool,
    /// The `murp_` digest of the profile the evaluation is about.
    pub profile_digest: String,
    pub source: SourceKind,
    /// The `mur_` identities of the evaluated partitions.
    pub partitions: Vec<String>,
    /// A ledger verdict's ledger identity and last delivery sequence number read.
    pub ledger_id: Option<String>,
    pub high_water_seq: Option<u64>,
    /// When the last held-out episode happened (microseconds since 0001-01-01).
    pub observed_until: Option<i128>,
    /// The packet's seal as written.
    pub verdict_digest: String,
    /// Why the packet itself cannot open the gate: `UNBOUND`, `DIGEST_MISMATCH` or
    /// `INCONSISTENT`.
    pub defect: Option<&'static str>,
}

/// What a verdict is checked against for one recall.
#[derive(Debug, Clone, Copy)]
pub struct GateContext<'a> {
    pub profile: &'a Profile,
    /// The recall partition's `mur_` identity.
    pub partition_identity: &'a str,
    /// The ledger the recall reads its utility from, when it does.
    pub ledger: Option<LedgerState<'a>>,
    /// The shell's clock reading (microseconds since 0001-01-01).
    pub now_micros: i128,
    /// `--allow-simulated-evaluation`: a simulation verdict may open the gate (for demos
    /// and tests; it is bound to no deployment, so partitions, ledger and age are not
    /// checked for it).
    pub allow_simulated: bool,
}

/// The identity and high-water mark of the ledger a recall reads.
#[derive(Debug, Clone, Copy)]
pub struct LedgerState<'a> {
    pub ledger_id: Option<&'a str>,
    pub high_water_seq: u64,
}

fn str_at<'a>(map: &'a Map, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

fn object_at<'a>(map: &'a Map, key: &str) -> Option<&'a Map> {
    map.get(key).and_then(Value::as_object)
}

fn number(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn unsigned(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::Int(i) => u64::try_from(*i).ok(),
        _ => None,
    }
}

/// True when the packet's figures agree with its verdict.
fn consistent(map: &Map, qualified: bool) -> bool {
    let verdict = if qualified { "qualified" } else { "hold" };
    if str_at(map, "status") != Some(verdict) || map.get("ok") != Some(&Value::Bool(qualified)) {
        return false;
    }
    let Some(reasons) = map.get("reason_codes").and_then(Value::as_array) else {
        return false;
    };
    if reasons.is_empty() != qualified || !reasons.iter().all(|r| r.as_str().is_some()) {
        return false;
    }
    let Some(gate) = object_at(map, "gate") else {
        return false;
    };
    // The checks are the gate's objects with a `passed` flag; other members (e.g. which
    // arm wins) describe the evaluation and are not checks.
    let checks: Vec<&Map> = gate
        .iter()
        .filter_map(|(_, member)| member.as_object())
        .filter(|check| check.contains_key("passed"))
        .collect();
    if checks.is_empty() {
        return false;
    }
    if !qualified {
        return true;
    }
    // A qualified verdict: every check passed, every interval of a gain lies above zero,
    // no scope leak.
    checks.iter().all(|check| {
        let passed = check.get("passed") == Some(&Value::Bool(true));
        let interval = match check.get("difference").and_then(Value::as_object) {
            Some(d) => number(d.get("lower")).is_some_and(|lower| lower > 0.0),
            None => true,
        };
        let leaks = match check.get("count") {
            Some(count) => unsigned(Some(count)) == Some(0),
            None => true,
        };
        passed && interval && leaks
    })
}

impl Verdict {
    /// Reads a verdict packet. Never fails: a packet that cannot open the gate carries
    /// its [`Verdict::defect`].
    pub fn from_value(value: &Value) -> Verdict {
        let mut verdict = Verdict {
            qualified: false,
            profile_digest: String::new(),
            source: SourceKind::Simulation,
            partitions: Vec::new(),
            ledger_id: None,
            high_water_seq: None,
            observed_until: None,
            verdict_digest: String::new(),
            defect: Some(refusal::UNBOUND),
        };
        let Some(map) = value.as_object() else {
            return verdict;
        };
        if str_at(map, "schema_version") != Some(EVALUATION_SCHEMA_VERSION) {
            return verdict;
        }
        verdict.verdict_digest = str_at(map, VERDICT_DIGEST_KEY).unwrap_or("").to_owned();
        if verdict.verdict_digest != verdict_digest(map) {
            verdict.defect = Some(refusal::DIGEST_MISMATCH);
            return verdict;
        }
        verdict.defect = Some(refusal::INCONSISTENT);
        let qualified = match str_at(map, "verdict") {
            Some("qualified") => true,
            Some("hold") => false,
            _ => return verdict,
        };
        let (Some(profile_digest), Some(source)) =
            (str_at(map, "profile_digest"), object_at(map, "source"))
        else {
            return verdict;
        };
        let Some(kind) = str_at(source, "kind").and_then(SourceKind::parse) else {
            return verdict;
        };
        let Some(partitions) = source.get("partitions").and_then(Value::as_array) else {
            return verdict;
        };
        let partitions: Option<Vec<String>> = partitions
            .iter()
            .map(|p| p.as_str().map(str::to_owned))
            .collect();
        let Some(partitions) = partitions else {
            return verdict;
        };
        let observed_until = match source.get("observed_until") {
            None | Some(Value::Null) => None,
            Some(Value::Str(text)) => match parse_aware(text.as_ref()) {
                Ok(at) => Some(at.micros),
                Err(_) => return verdict,
            },
            Some(_) => return verdict,
        };
        let ledger = object_at(source, "ledger");
        if (kind == SourceKind::Ledger) != ledger.is_some() {
            return verdict;
        }
        if let Some(ledger) = ledger {
            verdict.ledger_id = str_at(ledger, "ledger_id").map(str::to_owned);
            verdict.high_water_seq = unsigned(ledger.get("high_water_seq"));
            if verdict.high_water_seq.is_none() {
                return verdict;
            }
        }
        if !consistent(map, qualified) {
            return verdict;
        }
        verdict.qualified = qualified;
        verdict.profile_digest = profile_digest.to_owned();
        verdict.source = kind;
        verdict.partitions = partitions;
        verdict.observed_until = observed_until;
        verdict.defect = None;
        verdict
    }

    /// `None` when this verdict lets the profile apply to the recall of `ctx`, else the
    /// reason code ([`refusal`]) that keeps the prior off.
    pub fn blocks(&self, ctx: &GateContext<'_>) -> Option<&'static str> {
        if let Some(defect) = self.defect {
            return Some(defect);
        }
        if self.profile_digest != ctx.profile.digest() {
            return Some(refusal::PROFILE_MISMATCH);
        }
        if self.source == SourceKind::Simulation {
            // Bound to no deployment: only the explicit demo switch lets it through.
            return if !ctx.allow_simulated {
                Some(refusal::SIMULATED)
            } else if !self.qualified {
                Some(refusal::NOT_QUALIFIED)
            } else {
                None
            };
        }
        if !self.partitions.iter().any(|p| p == ctx.partition_identity) {
            return Some(refusal::PARTITION_MISMATCH);
        }
        if self.source == SourceKind::Ledger {
            let Some(ledger) = ctx.ledger else {
                return Some(refusal::LEDGER_MISMATCH);
            };
            if ledger.ledger_id.is_none() || self.ledger_id.as_deref() != ledger.ledger_id {
                return Some(refusal::LEDGER_MISMATCH);
            }
            let high_water = self.high_water_seq.unwrap_or(0);
            if high_water > ledger.high_water_seq {
                return Some(refusal::LEDGER_MISMATCH);
            }
            if let Some(bound) = ctx.profile.verdict_max_new_deliveries
                && ledger.high_water_seq - high_water > bound
            {
                return Some(refusal::STALE);
            }
        }
        let max_age = i128::from(
            ctx.profile
                .verdict_max_age_days
                .unwrap_or(DEFAULT_MAX_AGE_DAYS),
        ) * MICROS_PER_DAY;
        match self.observed_until {
            Some(at) if ctx.now_micros - at <= max_age => {}
            _ => return Some(refusal::STALE),
        }
        if !self.qualified {
            return Some(refusal::NOT_QUALIFIED);
        }
        None
    }

    /// True when `self` was computed on this ledger from more deliveries than `other`:
    /// newer data, so a recorded `hold` of older data does not supersede it.
    pub fn newer_than(&self, other: &Verdict) -> bool {
        self.source == SourceKind::Ledger
            && self.ledger_id.is_some()
            && self.ledger_id == other.ledger_id
            && self.high_water_seq > other.high_water_seq
    }
}

#[cfg(test)]
mod tests;

//! The utility the prior reads: per memory digest, the reduced state of its item subject
//! and whether set-level or unresolved subjects mention it ([`UtilityView`]), built from a
//! `memory_utility_projection_v0` or `memory_utility_projection_v1` packet or from any
//! other reduced subject state of the same partition (a ledger's subjects). Pure.

use std::collections::{BTreeMap, BTreeSet};

use crate::obj;
use crate::utility::bounds::{UTILITY_MAX, UTILITY_MIN};
use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};
use crate::utility::reducer::Rules;
use crate::utility::reducer::context::PROJECTION_SCHEMA_VERSION;
use crate::utility::reducer::v1::{PROJECTION_V1_SCHEMA_VERSION, REDUCER_V1};
use crate::wire::json::Value;

use super::candidate::{Partition, is_memory_digest};
use super::error::{RankPriorError, field};

/// The reduced state of one subject, as far as ranking needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectUtility {
    pub level: AttributionLevel,
    /// Sorted and unique; exactly one for an item subject.
    pub memory_ref_digests: Vec<String>,
    /// In `[-1, 1]`: direction × confidence of the strongest directional tier.
    pub utility_estimate: f64,
    pub effective_label: UtilityLabel,
    /// The strongest tier the subject has evidence at (it governs the direction).
    pub effective_basis: EvidenceBasis,
    /// Observations at `effective_basis` carrying `effective_label`.
    pub effective_support: usize,
}

/// The utility of one partition, per memory digest: what the prior reads. Built from a
/// projection packet ([`UtilityView::from_projection`]) or from any reduced subject
/// state of the same partition ([`UtilityView::new`], e.g. a ledger's subjects).
#[derive(Debug, Clone, PartialEq)]
pub struct UtilityView {
    partition: Partition,
    /// Item subjects by their one digest.
    items: BTreeMap<String, SubjectUtility>,
    /// Digests that appear in set-level or unresolved subjects.
    grouped: BTreeSet<String>,
    /// True when evidence above `evaluator_inference` in this view is known to be the
    /// runtime's (a ledger read with `require_attested_tiers`); a projection packet
    /// carries no provenance, so a view of one never is.
    tiers_attested: bool,
}

impl UtilityView {
    /// A view over reduced subjects of `partition`. Item subjects must bind exactly one
    /// digest, at most one item subject per digest; estimates must be within the reducer's
    /// bounds and agree in sign with their label.
    pub fn new(
        partition: Partition,
        subjects: impl IntoIterator<Item = SubjectUtility>,
    ) -> Result<UtilityView, RankPriorError> {
        let mut items = BTreeMap::new();
        let mut grouped = BTreeSet::new();
        for subject in subjects {
            for d in &subject.memory_ref_digests {
                if !is_memory_digest(d) {
                    return Err(field(
                        "subject memory_ref_digests must be canonical memory digests",
                    ));
                }
            }
            let u = subject.utility_estimate;
            if !u.is_finite() || !(UTILITY_MIN..=UTILITY_MAX).contains(&u) {
                return Err(field("subject utility_estimate must be within [-1, 1]"));
            }
            let consistent = match subject.effective_label {
                UtilityLabel::Helpful => u >= 0.0,
                UtilityLabel::Harmful => u <= 0.0,
                UtilityLabel::Neutral | UtilityLabel::Unknown => u == 0.0,
            };
            if !consistent {
                return Err(field(
                    "subject utility_estimate must agree with its effective label",
                ));
            }
            match subject.level {
                AttributionLevel::Item => {
                    let [digest] = subject.memory_ref_digests.as_slice() else {
                        return Err(field("an item subject must bind exactly one digest"));
                    };
                    let digest = digest.clone();
                    if items.insert(digest, subject).is_some() {
                        return Err(field("two item subjects bind the same digest"));
                    }
                }
                AttributionLevel::Set | AttributionLevel::None => {
                    grouped.extend(subject.memory_ref_digests.iter().cloned());
                }
            }
        }
        Ok(UtilityView {
            partition,
            items,
            grouped,
            tiers_attested: false,
        })
    }

    /// A view with no utility at all (every modifier is exactly 1.0).
    pub fn empty(partition: Partition) -> UtilityView {
        UtilityView {
            partition,
            items: BTreeMap::new(),
            grouped: BTreeSet::new(),
            tiers_attested: false,
        }
    }

    /// The view marked as holding only attested evidence above `evaluator_inference`
    /// (its source dropped every such observation the runtime did not produce).
    pub fn with_attested_tiers(mut self) -> UtilityView {
        self.tiers_attested = true;
        self
    }

    /// True when evidence above `evaluator_inference` in this view is attested
    /// ([`UtilityView::with_attested_tiers`]).
    pub fn tiers_attested(&self) -> bool {
        self.tiers_attested
    }

    /// Reads a `memory_utility_projection_v0` packet, or a `memory_utility_projection_v1`
    /// (`utility-ledger project` of a v1 partition). It must pass the readback rules that
    /// need no history (exact fields, boundary flags, reducer identity, every subject's
    /// own consistency; see [`crate::utility::validate::validate_projection_subjects`] and
    /// its v1 form) and must not be `rejected`. A v0 packet holds v0 subjects whatever its
    /// reducer version says, so one that names the v1 reducer is refused.
    pub fn from_projection(projection: &Value) -> Result<UtilityView, RankPriorError> {
        let invalid = |e: crate::wire::text::FieldError| {
            field(format!("projection is not a valid projection: {}", e.0))
        };
        match projection.get("schema_version").and_then(Value::as_str) {
            Some(PROJECTION_SCHEMA_VERSION) => {
                let version = projection.get("reducer_version").and_then(Value::as_str);
                if version.is_some_and(|v| Rules::of(v) != Ok(Rules::V0)) {
                    return Err(field(format!(
                        "projection is a memory_utility_projection_v0 packet, whose subjects follow the v0 rules whatever its reducer_version: for {REDUCER_V1} give the {PROJECTION_V1_SCHEMA_VERSION} packet of utility-ledger project, or use --ledger"
                    )));
                }
                crate::utility::validate::validate_projection_subjects(projection)
                    .map_err(invalid)?;
            }
            Some(PROJECTION_V1_SCHEMA_VERSION) => {
                crate::utility::validate::validate_projection_v1_subjects(projection)
                    .map_err(invalid)?;
            }
            _ => {
                return Err(field(
                    "projection must be a memory_utility_projection_v0 or memory_utility_projection_v1 packet",
                ));
            }
        }
        if projection.get("status").and_then(Value::as_str) == Some("rejected") {
            return Err(field(
                "projection is rejected: reduce an accepted observation stream first",
            ));
        }
        let partition = Partition::from_value(&Value::Object(obj! {
            "scope" => projection.get("scope").cloned().unwrap_or_default(),
            "retrieval_snapshot_ref" => projection.get("retrieval_snapshot_ref").cloned().unwrap_or_default(),
            "policy_snapshot_ref" => projection.get("policy_snapshot_ref").cloned().unwrap_or_default(),
            "reducer_version" => projection.get("reducer_version").cloned().unwrap_or_default(),
        }))?;
        let subjects = projection
            .get("subjects")
            .and_then(Value::as_array)
            .unwrap_or(&[][..]);
        let parsed = subjects
            .iter()
            .map(subject_from_packet)
            .collect::<Result<Vec<_>, _>>()?;
        UtilityView::new(partition, parsed)
    }

    /// The partition this utility belongs to.
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// The item subject of `digest`, if any.
    pub fn item(&self, digest: &str) -> Option<&SubjectUtility> {
        self.items.get(digest)
    }

    /// True when `digest` appears in a set-level or unresolved subject.
    pub fn in_group(&self, digest: &str) -> bool {
        self.grouped.contains(digest)
    }

    /// The digests of the item subjects, sorted.
    pub fn item_digests(&self) -> impl Iterator<Item = &str> {
        self.items.keys().map(String::as_str)
    }

    /// Every digest the view knows, sorted.
    pub fn digests(&self) -> BTreeSet<&str> {
        self.items
            .keys()
            .chain(self.grouped.iter())
            .map(String::as_str)
            .collect()
    }
}

/// One subject of a (validated) projection packet: what the rank prior reads of it.
pub fn subject_from_packet(subject: &Value) -> Result<SubjectUtility, RankPriorError> {
    let text = |k: &str| subject.get(k).and_then(Value::as_str).unwrap_or_default();
    let level = AttributionLevel::parse(text("attribution_level"))
        .ok_or_else(|| field("projection subject attribution_level is invalid"))?;
    let label = UtilityLabel::parse(text("effective_utility_label"))
        .ok_or_else(|| field("projection subject effective_utility_label is invalid"))?;
    let basis = EvidenceBasis::parse(text("effective_evidence_basis"))
        .ok_or_else(|| field("projection subject effective_evidence_basis is invalid"))?;
    let digests: Vec<String> = subject
        .get("memory_ref_digests")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let utility = match subject.get("utility_estimate") {
        Some(Value::Float(f)) => *f,
        Some(Value::Int(i)) => *i as f64,
        _ => {
            return Err(field(
                "projection subject utility_estimate must be a number",
            ));
        }
    };
    let support = subject
        .get("evidence_label_summary")
        .and_then(Value::as_array)
        .and_then(|pairs| {
            pairs.iter().find(|p| {
                p.get("evidence_basis").and_then(Value::as_str) == Some(basis.as_str())
                    && p.get("utility_label").and_then(Value::as_str) == Some(label.as_str())
            })
        })
        .and_then(|p| match p.get("observation_count") {
            Some(Value::Int(n)) => usize::try_from(*n).ok(),
            _ => None,
        })
        .unwrap_or(0);
    Ok(SubjectUtility {
        level,
        memory_ref_digests: digests,
        utility_estimate: utility,
        effective_label: label,
        effective_basis: basis,
        effective_support: support,
    })
}

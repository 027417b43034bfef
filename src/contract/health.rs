//! Stage-1 corpus health (`reward_memory_corpus_health_v0`) and `health-check`.
//!
//! Owns the observation of one corpus's retrieval pipeline (provider, inventory, index,
//! query, readback, application), its consistency rules, the first-match classification
//! into a health state with one reason code, and the ten built-in fixture cases. It keeps
//! inventory, retrieval and use states apart and never grants write or patch authority.
//! Pure: no I/O.

use crate::contract::registry::{normalize_corpus, reference_corpus};
use crate::obj;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr_strip;
use crate::wire::text::{FieldError, FieldResult, optional_token, strict_bool, token};

crate::choice! {
    /// A built-in fixture case of `health-check`: the `retrieval-verified` observation
    /// with the case's overrides ([`fixture_observation`]).
    pub enum HealthCase {
        Unavailable => "unavailable",
        Empty => "empty",
        Stale => "stale",
        WrongProject => "wrong-project",
        WrongSurface => "wrong-surface",
        IndexUnavailable => "index-unavailable",
        RetrievalFailed => "retrieval-failed",
        ReadbackUnverified => "readback-unverified",
        RetrievalVerified => "retrieval-verified",
        AppliedVerified => "applied-verified",
    }
}

/// Schema of the health packet.
pub const HEALTH_SCHEMA_VERSION: &str = "reward_memory_corpus_health_v0";
/// The reference corpus every fixture case is classified against.
pub const FIXTURE_CORPUS_ID: &str = "distilled_experiences";

/// Why a health packet could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HealthError {
    /// The corpus or the observation is invalid; the message is the reference's.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The reference corpus the fixture cases are classified against is not in the
    /// built-in registry (a build error, not a request error).
    #[error("reference corpus {0} is missing")]
    MissingReferenceCorpus(&'static str),
}

fn fail(message: impl Into<String>) -> FieldError {
    FieldError::new(message)
}

/// A validated health observation of one corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthObservation {
    pub requested_project_ref: String,
    pub requested_surface: String,
    pub current_source_revision: Option<String>,
    pub provider_available: bool,
    pub corpus_present: bool,
    /// A non-negative JSON integer, kept as given (it may exceed `i64`).
    pub record_count: Value,
    pub index_present: bool,
    pub retrieval_query_succeeded: bool,
    pub result_readback_verified: bool,
    pub memory_applied_with_receipt: bool,
    pub freshness_window_satisfied: bool,
}

fn boolean(map: &Map, key: &str) -> FieldResult<bool> {
    strict_bool(map.get(key), key)
}

impl HealthObservation {
    /// Validates an observation: field checks first, then the pipeline consistency
    /// rules (no records without a corpus, no retrieval without a provider and corpus,
    /// no readback without retrieval, no receipt without readback).
    pub fn from_map(observation: &Map) -> FieldResult<HealthObservation> {
        let requested_project_ref = token(
            observation.get("requested_project_ref"),
            "requested_project_ref",
        )?;
        let requested_surface = pystr_strip(observation.get("requested_surface"));
        if !crate::wire::text::is_surface_id(&requested_surface) {
            return Err(fail("requested_surface must be a module-qualified token"));
        }
        let current_source_revision = optional_token(
            observation.get("current_source_revision"),
            "current_source_revision",
        )?;
        let provider_available = boolean(observation, "provider_available")?;
        let corpus_present = boolean(observation, "corpus_present")?;
        let index_present = boolean(observation, "index_present")?;
        let retrieval_query_succeeded = boolean(observation, "retrieval_query_succeeded")?;
        let result_readback_verified = boolean(observation, "result_readback_verified")?;
        let memory_applied_with_receipt = boolean(observation, "memory_applied_with_receipt")?;
        let freshness_window_satisfied = boolean(observation, "freshness_window_satisfied")?;
        let record_count = match observation.get("record_count") {
            Some(Value::Int(n)) if *n >= 0 => Value::Int(*n),
            Some(Value::BigInt(s)) if !s.starts_with('-') => Value::BigInt(s.clone()),
            _ => return Err(fail("record_count must be a non-negative integer")),
        };
        if !corpus_present && record_count.is_truthy() {
            return Err(fail(
                "record_count must be zero when corpus_present is false",
            ));
        }
        if retrieval_query_succeeded && (!provider_available || !corpus_present) {
            return Err(fail(
                "retrieval success requires an available present corpus",
            ));
        }
        if result_readback_verified && !retrieval_query_succeeded {
            return Err(fail("readback verification requires retrieval success"));
        }
        if memory_applied_with_receipt && !result_readback_verified {
            return Err(fail("application receipt requires verified readback"));
        }
        Ok(HealthObservation {
            requested_project_ref,
            requested_surface,
            current_source_revision,
            provider_available,
            corpus_present,
            record_count,
            index_present,
            retrieval_query_succeeded,
            result_readback_verified,
            memory_applied_with_receipt,
            freshness_window_satisfied,
        })
    }
}

/// The outcome of classifying an observation against a normalized corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthClassification {
    /// `wrong_project`, `wrong_surface`, `unavailable`, `empty`, `stale`,
    /// `index_unavailable`, `retrieval_failed`, `readback_unverified`,
    /// `applied_verified` or `retrieval_verified`.
    pub health_state: &'static str,
    /// Exactly one reason code.
    pub reason_code: String,
    pub project_matches: bool,
    pub surface_matches: bool,
    pub source_revision_matches: bool,
}

impl HealthClassification {
    /// Only verified retrieval (applied or not) lets a caller apply memory.
    pub fn may_apply_memory(&self) -> bool {
        matches!(self.health_state, "retrieval_verified" | "applied_verified")
    }
}

fn str_at<'a>(map: &'a Map, outer: &str, inner: &str) -> Option<&'a str> {
    map.at(&[outer, inner])?.as_str()
}

fn bool_at(map: &Map, outer: &str, inner: &str) -> bool {
    map.at(&[outer, inner]) == Some(&Value::Bool(true))
}

/// Classifies an observation against a **normalized** corpus; the first matching rule
/// wins (scope, availability, inventory, lifecycle and freshness, index, retrieval,
/// readback, application).
pub fn classify(corpus: &Map, o: &HealthObservation) -> HealthClassification {
    let project_matches =
        str_at(corpus, "scope", "project_ref") == Some(o.requested_project_ref.as_str());
    let surface_matches = corpus
        .get("scope")
        .and_then(|s| s.get("surface_ids"))
        .and_then(Value::as_array)
        .is_some_and(|ids| {
            ids.iter()
                .any(|id| id.as_str() == Some(&o.requested_surface))
        });
    let source_revision = str_at(corpus, "freshness", "source_revision");
    let source_revision_matches =
        source_revision.is_none() || o.current_source_revision.as_deref() == source_revision;
    let lifecycle_state = str_at(corpus, "lifecycle", "state").unwrap_or_default();
    let (health_state, reason_code) = if !project_matches {
        (
            "wrong_project",
            "requested_project_outside_corpus_scope".to_owned(),
        )
    } else if !surface_matches {
        (
            "wrong_surface",
            "requested_surface_outside_corpus_scope".to_owned(),
        )
    } else if !o.provider_available {
        ("unavailable", "provider_unavailable".to_owned())
    } else if !o.corpus_present {
        ("unavailable", "corpus_missing".to_owned())
    } else if !o.record_count.is_truthy() {
        ("empty", "corpus_present_without_records".to_owned())
    } else if lifecycle_state != "active" {
        ("stale", format!("lifecycle_{lifecycle_state}"))
    } else if !source_revision_matches {
        ("stale", "source_revision_mismatch_or_unverified".to_owned())
    } else if !o.freshness_window_satisfied {
        ("stale", "freshness_window_unsatisfied".to_owned())
    } else if bool_at(corpus, "retrieval", "index_required") && !o.index_present {
        ("index_unavailable", "required_index_missing".to_owned())
    } else if !o.retrieval_query_succeeded {
        (
            "retrieval_failed",
            "retrieval_query_failed_or_not_run".to_owned(),
        )
    } else if bool_at(corpus, "retrieval", "readback_required") && !o.result_readback_verified {
        (
            "readback_unverified",
            "retrieval_result_not_read_back".to_owned(),
        )
    } else if o.memory_applied_with_receipt {
        (
            "applied_verified",
            "verified_result_has_application_receipt".to_owned(),
        )
    } else {
        (
            "retrieval_verified",
            "verified_result_not_yet_applied".to_owned(),
        )
    };
    HealthClassification {
        health_state,
        reason_code,
        project_matches,
        surface_matches,
        source_revision_matches,
    }
}

/// Normalizes `corpus`, validates `observation` and returns the
/// `reward_memory_corpus_health_v0` packet.
pub fn health_packet(corpus: &Value, observation: &Map) -> Result<Map, HealthError> {
    let item = normalize_corpus(corpus)?;
    let o = HealthObservation::from_map(observation)?;
    let c = classify(&item, &o);
    let field = |key: &str| item.get(key).cloned().unwrap_or(Value::Null);
    let lifecycle_state = item
        .get("lifecycle")
        .and_then(|l| l.get("state"))
        .cloned()
        .unwrap_or(Value::Null);
    Ok(obj! {
        "ok" => true,
        "schema_version" => HEALTH_SCHEMA_VERSION,
        "corpus_id" => field("corpus_id"),
        "class_id" => field("class_id"),
        "health_state" => c.health_state,
        "reason_codes" => vec![c.reason_code.clone()],
        "scope_check" => obj! {
            "project_matches" => c.project_matches,
            "surface_matches" => c.surface_matches,
        },
        "freshness_check" => obj! {
            "lifecycle_state" => lifecycle_state,
            "source_revision_matches" => c.source_revision_matches,
            "freshness_window_satisfied" => o.freshness_window_satisfied,
        },
        "pipeline" => obj! {
            "provider_available" => o.provider_available,
            "corpus_present" => o.corpus_present,
            "record_count" => o.record_count.clone(),
            "index_required" => bool_at(&item, "retrieval", "index_required"),
            "index_present" => o.index_present,
            "retrieval_query_succeeded" => o.retrieval_query_succeeded,
            "result_readback_verified" => o.result_readback_verified,
            "memory_applied_with_receipt" => o.memory_applied_with_receipt,
        },
        "may_apply_memory" => c.may_apply_memory(),
        "memory_patch_authority" => false,
        "external_write_authorized" => false,
        "raw_memory_captured" => false,
    })
}

/// The observation of one built-in fixture case (the `retrieval-verified` baseline with
/// the case's overrides).
pub fn fixture_observation(case: HealthCase) -> Map {
    let mut o = obj! {
        "requested_project_ref" => "project:exact",
        "requested_surface" => "issue_fix.routing",
        "current_source_revision" => "revision:observed",
        "provider_available" => true,
        "corpus_present" => true,
        "record_count" => 1,
        "index_present" => true,
        "retrieval_query_succeeded" => true,
        "result_readback_verified" => true,
        "memory_applied_with_receipt" => false,
        "freshness_window_satisfied" => true,
    };
    let overrides: Vec<(&str, Value)> = match case {
        HealthCase::Unavailable => vec![
            ("provider_available", false.into()),
            ("corpus_present", false.into()),
            ("record_count", 0.into()),
            ("index_present", false.into()),
            ("retrieval_query_succeeded", false.into()),
            ("result_readback_verified", false.into()),
        ],
        HealthCase::Empty => vec![("record_count", 0.into())],
        HealthCase::Stale => vec![("current_source_revision", "revision:newer".into())],
        HealthCase::WrongProject => vec![("requested_project_ref", "project:other".into())],
        HealthCase::WrongSurface => vec![("requested_surface", "content_ops.draft".into())],
        HealthCase::IndexUnavailable => vec![
            ("index_present", false.into()),
            ("retrieval_query_succeeded", false.into()),
            ("result_readback_verified", false.into()),
        ],
        HealthCase::RetrievalFailed => vec![
            ("retrieval_query_succeeded", false.into()),
            ("result_readback_verified", false.into()),
        ],
        HealthCase::ReadbackUnverified => vec![("result_readback_verified", false.into())],
        HealthCase::RetrievalVerified => vec![],
        HealthCase::AppliedVerified => vec![("memory_applied_with_receipt", true.into())],
    };
    for (key, value) in overrides {
        o.insert(key, value);
    }
    o
}

/// The health packet of one built-in fixture case.
pub fn fixture_packet(case: HealthCase) -> Result<Map, HealthError> {
    let corpus = reference_corpus(FIXTURE_CORPUS_ID)
        .ok_or(HealthError::MissingReferenceCorpus(FIXTURE_CORPUS_ID))?;
    health_packet(&Value::Object(corpus.clone()), &fixture_observation(case))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_and_reason(case: HealthCase) -> (String, Vec<Value>) {
        let packet = fixture_packet(case).expect("fixture");
        (
            packet
                .get("health_state")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            packet
                .get("reason_codes")
                .and_then(Value::as_array)
                .map(<[Value]>::to_vec)
                .unwrap_or_default(),
        )
    }

    #[test]
    fn every_fixture_case_lands_on_its_row() {
        let rows = [
            (
                HealthCase::WrongProject,
                "wrong_project",
                "requested_project_outside_corpus_scope",
            ),
            (
                HealthCase::WrongSurface,
                "wrong_surface",
                "requested_surface_outside_corpus_scope",
            ),
            (
                HealthCase::Unavailable,
                "unavailable",
                "provider_unavailable",
            ),
            (HealthCase::Empty, "empty", "corpus_present_without_records"),
            (
                HealthCase::Stale,
                "stale",
                "source_revision_mismatch_or_unverified",
            ),
            (
                HealthCase::IndexUnavailable,
                "index_unavailable",
                "required_index_missing",
            ),
            (
                HealthCase::RetrievalFailed,
                "retrieval_failed",
                "retrieval_query_failed_or_not_run",
            ),
            (
                HealthCase::ReadbackUnverified,
                "readback_unverified",
                "retrieval_result_not_read_back",
            ),
            (
                HealthCase::RetrievalVerified,
                "retrieval_verified",
                "verified_result_not_yet_applied",
            ),
            (
                HealthCase::AppliedVerified,
                "applied_verified",
                "verified_result_has_application_receipt",
            ),
        ];
        for (case, state, reason) in rows {
            assert_eq!(
                state_and_reason(case),
                (state.to_owned(), vec![Value::from(reason)]),
                "{case:?}"
            );
        }
    }

    fn corpus_with(outer: &str, inner: &str, value: Value) -> Map {
        let mut corpus = reference_corpus(FIXTURE_CORPUS_ID)
            .cloned()
            .expect("corpus");
        let nested = corpus
            .get(outer)
            .and_then(Value::as_object)
            .cloned()
            .expect("nested")
            .with(inner, value);
        corpus.insert(outer, nested);
        corpus
    }

    fn observe(corpus: &Map, overrides: &[(&str, Value)]) -> HealthClassification {
        let mut o = fixture_observation(HealthCase::RetrievalVerified);
        for (k, v) in overrides {
            o.insert(*k, v.clone());
        }
        classify(corpus, &HealthObservation::from_map(&o).expect("valid"))
    }

    #[test]
    fn corpus_rows_cover_lifecycle_freshness_and_retrieval_flags() {
        let retired = corpus_with("lifecycle", "state", "retired".into());
        let c = observe(&retired, &[]);
        assert_eq!(
            (c.health_state, c.reason_code.as_str()),
            ("stale", "lifecycle_retired")
        );

        let base = reference_corpus(FIXTURE_CORPUS_ID)
            .cloned()
            .expect("corpus");
        let c = observe(&base, &[("freshness_window_satisfied", false.into())]);
        assert_eq!(c.reason_code, "freshness_window_unsatisfied");

        let c = observe(
            &base,
            &[
                ("provider_available", false.into()),
                ("retrieval_query_succeeded", false.into()),
                ("result_readback_verified", false.into()),
            ],
        );
        assert_eq!(c.reason_code, "provider_unavailable");

        let c = observe(
            &base,
            &[
                ("corpus_present", false.into()),
                ("record_count", 0.into()),
                ("retrieval_query_succeeded", false.into()),
                ("result_readback_verified", false.into()),
            ],
        );
        assert_eq!(c.reason_code, "corpus_missing");

        let no_index = corpus_with("retrieval", "index_required", false.into());
        let c = observe(&no_index, &[("index_present", false.into())]);
        assert_eq!(c.health_state, "retrieval_verified");

        let no_readback = corpus_with("retrieval", "readback_required", false.into());
        let c = observe(&no_readback, &[("result_readback_verified", false.into())]);
        assert_eq!(c.health_state, "retrieval_verified");
        assert!(c.may_apply_memory());
    }

    #[test]
    fn corpus_without_source_revision_matches_any_revision() {
        let mut corpus = corpus_with("freshness", "source_revision", Value::Null);
        let freshness = corpus
            .get("freshness")
            .and_then(Value::as_object)
            .cloned()
            .expect("freshness")
            .with("mode", "source_truth_bound");
        corpus.insert("freshness", freshness);
        let c = observe(&corpus, &[("current_source_revision", Value::Null)]);
        assert!(c.source_revision_matches);
        assert_eq!(c.health_state, "retrieval_verified");
    }

    #[test]
    fn observation_errors_use_the_reference_strings() {
        let rows: Vec<(Vec<(&str, Value)>, &str)> = vec![
            (
                vec![("requested_project_ref", "a b".into())],
                "requested_project_ref must be a compact public-safe token",
            ),
            (
                vec![("requested_surface", "plain".into())],
                "requested_surface must be a module-qualified token",
            ),
            (
                vec![("current_source_revision", false.into())],
                "current_source_revision must be a compact public-safe token",
            ),
            (
                vec![("index_present", 1.into())],
                "index_present must be a boolean",
            ),
            (
                vec![("record_count", (-1).into())],
                "record_count must be a non-negative integer",
            ),
            (
                vec![("record_count", true.into())],
                "record_count must be a non-negative integer",
            ),
            (
                vec![("record_count", Value::Float(1.0))],
                "record_count must be a non-negative integer",
            ),
            (
                vec![
                    ("corpus_present", false.into()),
                    ("retrieval_query_succeeded", false.into()),
                    ("result_readback_verified", false.into()),
                ],
                "record_count must be zero when corpus_present is false",
            ),
            (
                vec![("provider_available", false.into())],
                "retrieval success requires an available present corpus",
            ),
            (
                vec![("retrieval_query_succeeded", false.into())],
                "readback verification requires retrieval success",
            ),
            (
                vec![
                    ("result_readback_verified", false.into()),
                    ("retrieval_query_succeeded", true.into()),
                    ("memory_applied_with_receipt", true.into()),
                ],
                "application receipt requires verified readback",
            ),
        ];
        for (overrides, message) in rows {
            let mut o = fixture_observation(HealthCase::RetrievalVerified);
            for (k, v) in overrides {
                o.insert(k, v);
            }
            assert_eq!(
                HealthObservation::from_map(&o).expect_err(message).0,
                message
            );
        }
    }

    #[test]
    fn invalid_corpus_fails_before_the_observation() {
        let corpus = Value::Object(corpus_with("scope", "project_ref", "".into()));
        assert_eq!(
            health_packet(&corpus, &Map::new())
                .expect_err("corpus")
                .to_string(),
            "scope.project_ref must be a compact public-safe token"
        );
    }
}

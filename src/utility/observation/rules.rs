//! The lenient field rules of the observation contract: Python's `str(value or
//! "").strip()` coercion for strings, sorted and unique lists, the confidence, the
//! write-boundary flags, and the label/level/tier rules of a judgment.

use crate::wire::json::{Map, Text, Value};
use crate::wire::pyfmt::{self, pystr_strip_cow};
use crate::wire::text::{FieldError, FieldResult, is_ref, is_token};
use crate::wire::timestamp::{self, Instant};

use crate::utility::strict::{SCOPE_KEYS, exact_fields, is_memory_digest};

use super::kinds::{AttributionLevel, EvidenceBasis, Scope, UtilityLabel};
use super::{MAX_EVIDENCE_REFS, MAX_MEMORY_DIGESTS, MAX_REASON_CODES};

pub(super) fn field<'a>(map: &'a Map, key: &str) -> &'a Value {
    map.get(key).unwrap_or(&Value::Null)
}

pub(super) fn lenient_object<'a>(v: &'a Value, label: &str) -> FieldResult<&'a Map> {
    v.as_object()
        .ok_or_else(|| FieldError(format!("{label} must be an object")))
}

/// `str(value).strip()` of a string when it is a reference: the rule of [`lenient_ref`]
/// for text that is not a value.
pub(super) fn text_ref(s: &str) -> Option<&str> {
    let t = pyfmt::py_strip(s);
    is_ref(t).then_some(t)
}

/// `str(value or "").strip()` matching `REF`. JSON `true` is refused rather than read as
/// the reference `"True"` (a deliberate divergence, see docs/compatibility.md).
pub(super) fn lenient_ref(v: &Value, label: impl std::fmt::Display) -> FieldResult<String> {
    let text = match v {
        Value::Str(s) => text_ref(s).map(str::to_owned),
        Value::Bool(true) => None,
        other => text_ref(&pystr_strip_cow(Some(other))).map(str::to_owned),
    };
    text.ok_or_else(|| FieldError(format!("{label} must be an opaque public-safe reference")))
}

/// `str(value or "").strip()` matching `TOKEN`; JSON `true` is refused like in
/// [`lenient_ref`].
pub(super) fn lenient_token(v: &Value, label: impl std::fmt::Display) -> FieldResult<String> {
    let s = pystr_strip_cow(Some(v));
    if *v != Value::Bool(true) && is_token(&s) {
        Ok(s.into_owned())
    } else {
        Err(FieldError(format!(
            "{label} must be a compact public-safe token"
        )))
    }
}

/// A list of `min..=max` lenient refs, returned sorted; duplicates rejected.
pub(super) fn lenient_refs(
    v: &Value,
    label: &str,
    min: usize,
    max: usize,
) -> FieldResult<Vec<String>> {
    let items = match v {
        Value::Array(items) if (min..=max).contains(&items.len()) => items,
        _ => {
            return Err(FieldError(format!(
                "{label} must be a list containing between {min} and {max} opaque references"
            )));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(lenient_ref(item, label)?);
    }
    sorted_unique(out).ok_or_else(|| FieldError(format!("{label} must not contain duplicates")))
}

/// A list of references sorted, or `None` when one repeats.
pub(super) fn sorted_unique(mut items: Vec<String>) -> Option<Vec<String>> {
    items.sort();
    (!items.windows(2).any(|w| w[0] == w[1])).then_some(items)
}

/// Normalizes a memory digest list (sorted, unique, canonical digests).
pub fn memory_ref_digests(v: &Value, label: &str, min: usize) -> FieldResult<Vec<String>> {
    let out = lenient_refs(v, label, min, MAX_MEMORY_DIGESTS)?;
    if out.iter().any(|d| !is_memory_digest(d)) {
        return Err(FieldError(format!(
            "{label} must contain only canonical opaque memory digests"
        )));
    }
    Ok(out)
}

pub(super) fn lenient_scope(v: &Value, label: &str) -> FieldResult<Scope> {
    let map = lenient_object(v, label)?;
    exact_fields(map, &SCOPE_KEYS, label)?;
    let get = |key: &str| lenient_ref(field(map, key), format_args!("{label}.{key}"));
    Ok(Scope {
        agent_id: Text::from(get("agent_id")?),
        project_id: Text::from(get("project_id")?),
        corpus_id: Text::from(get("corpus_id")?),
        surface_id: Text::from(get("surface_id")?),
    })
}

pub(super) fn lenient_timestamp(v: &Value, label: &str) -> FieldResult<(String, Instant)> {
    timestamp::timestamp_field(Some(v), label)
}

pub(super) fn false_boundary(map: &Map, key: &str, label: &str) -> FieldResult<()> {
    if map.get(key) == Some(&Value::Bool(false)) {
        Ok(())
    } else {
        Err(FieldError(format!("{label}.{key} must be false")))
    }
}

pub(super) fn boolean(map: &Map, key: &str, label: &str) -> FieldResult<bool> {
    match map.get(key) {
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(FieldError(format!("{label}.{key} must be a boolean"))),
    }
}

pub(super) fn strict_compact_text(v: &Value, label: &str, max: usize) -> FieldResult<String> {
    let fail = || FieldError(format!("{label} must be compact public-safe text"));
    let Value::Str(s) = v else {
        return Err(fail());
    };
    let t = pyfmt::py_strip(s);
    if t.is_empty() || t.chars().count() > max || t.contains(['\r', '\n']) {
        return Err(fail());
    }
    Ok(t.to_owned())
}

pub(super) const CONFIDENCE_ERROR: &str = "confidence must be a finite number between 0 and 1";

pub(super) fn confidence(v: &Value) -> FieldResult<f64> {
    let f = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        // Outside i64: Python either overflows or gets a float far outside [0, 1].
        Value::BigInt(_) => return Err(FieldError::new(CONFIDENCE_ERROR)),
        _ => return Err(FieldError::new(CONFIDENCE_ERROR)),
    };
    if f.is_finite() && (0.0..=1.0).contains(&f) {
        Ok(f)
    } else {
        Err(FieldError::new(CONFIDENCE_ERROR))
    }
}

/// The judgment fields shared by proposals and observations, checked in contract order.
pub(super) struct UtilityFields {
    pub(super) utility_label: UtilityLabel,
    pub(super) attribution_level: AttributionLevel,
    pub(super) evidence_basis: EvidenceBasis,
    pub(super) confidence: f64,
    pub(super) reason_codes: Vec<String>,
    pub(super) evidence_refs: Vec<String>,
    pub(super) evaluator_ref: String,
    pub(super) evaluation_version: String,
}

/// The rules that tie the label, the attribution level, the evidence tier and the
/// presence of evidence together, in contract order.
pub(super) fn judgment_rules(
    label: UtilityLabel,
    level: AttributionLevel,
    basis: EvidenceBasis,
    has_evidence: bool,
) -> FieldResult<()> {
    if basis == EvidenceBasis::Insufficient && label != UtilityLabel::Unknown {
        return Err(FieldError::new(
            "insufficient evidence must produce unknown utility",
        ));
    }
    if basis.is_strong() && !has_evidence {
        return Err(FieldError::new(
            "strong evidence basis requires evidence_refs",
        ));
    }
    if level == AttributionLevel::None && label != UtilityLabel::Unknown {
        return Err(FieldError::new(
            "none attribution must produce unknown utility",
        ));
    }
    if label != UtilityLabel::Unknown && !has_evidence {
        return Err(FieldError::new(
            "non-unknown utility requires evidence_refs",
        ));
    }
    Ok(())
}

pub(super) fn utility_fields<'a>(map: impl Fn(&str) -> &'a Value) -> FieldResult<UtilityFields> {
    let field = |key: &str| map(key);
    let label = UtilityLabel::parse(&pystr_strip_cow(Some(field("utility_label"))))
        .ok_or_else(|| FieldError::new("utility_label is invalid"))?;
    let level = AttributionLevel::parse(&pystr_strip_cow(Some(field("attribution_level"))))
        .ok_or_else(|| FieldError::new("attribution_level is invalid"))?;
    let basis = EvidenceBasis::parse(&pystr_strip_cow(Some(field("evidence_basis"))))
        .ok_or_else(|| FieldError::new("evidence_basis is invalid"))?;
    let evidence_refs = lenient_refs(
        field("evidence_refs"),
        "evidence_refs",
        0,
        MAX_EVIDENCE_REFS,
    )?;
    judgment_rules(label, level, basis, !evidence_refs.is_empty())?;
    Ok(UtilityFields {
        utility_label: label,
        attribution_level: level,
        evidence_basis: basis,
        confidence: confidence(field("confidence"))?,
        reason_codes: lenient_refs(field("reason_codes"), "reason_codes", 0, MAX_REASON_CODES)?,
        evidence_refs,
        evaluator_ref: lenient_ref(field("evaluator_ref"), "evaluator_ref")?,
        evaluation_version: lenient_ref(field("evaluation_version"), "evaluation_version")?,
    })
}

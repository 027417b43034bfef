//! Typed evidence items (`--evidence KIND:REF:RESULT:DIGEST`): a check of kind `KIND`
//! (`test`, `check`, ...) named `REF` that `passed` or `failed`, tied to one applied
//! memory's `memory_ref_digest` (16 hex digits) or to the whole applied `set`.

use crate::wire::text::{is_hex_digest, is_ref};

use super::AttributionError;

/// What the check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckResult {
    Passed,
    Failed,
}

/// Which applied memories the check is tied to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// One memory digest.
    Memory(String),
    /// The whole applied set (does not tell the memories apart).
    Set,
}

/// One evidence item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct EvidenceItem {
    pub kind: String,
    pub reference: String,
    pub result: CheckResult,
    pub target: Target,
}

/// The form every message names.
pub const EVIDENCE_FORM: &str = "KIND:REF:RESULT:DIGEST, e.g. test:ci-17:passed:0123456789abcdef (RESULT passed or failed, DIGEST a memory_ref_digest of the receipt or `set`)";

impl EvidenceItem {
    /// Parses `KIND:REF:RESULT:DIGEST` (REF may itself hold colons).
    pub fn parse(text: &str) -> Result<EvidenceItem, AttributionError> {
        let bad = |why: &str| {
            AttributionError::Evidence(format!("--evidence {text:?} {why}: use {EVIDENCE_FORM}"))
        };
        let (kind, rest) = text.split_once(':').ok_or_else(|| bad("has no KIND"))?;
        let (rest, digest) = rest.rsplit_once(':').ok_or_else(|| bad("has no DIGEST"))?;
        let (reference, result) = rest.rsplit_once(':').ok_or_else(|| bad("has no RESULT"))?;
        let kind_ok = kind.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
            && kind
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !kind_ok {
            return Err(bad("has a KIND that is not a lowercase word"));
        }
        let result = match result {
            "passed" => CheckResult::Passed,
            "failed" => CheckResult::Failed,
            _ => return Err(bad("has a RESULT other than passed or failed")),
        };
        let target = match digest {
            "set" => Target::Set,
            d if is_hex_digest(d, 16) => Target::Memory(d.to_owned()),
            _ => {
                return Err(bad(
                    "has a DIGEST that is not 16 lowercase hex digits or `set`",
                ));
            }
        };
        let item = EvidenceItem {
            kind: kind.to_owned(),
            reference: reference.to_owned(),
            result,
            target,
        };
        if reference.is_empty() || !is_ref(&item.evidence_ref()) {
            return Err(bad("has a REF that is not an opaque public-safe reference"));
        }
        Ok(item)
    }

    /// The observation's evidence reference: `KIND:REF`.
    pub fn evidence_ref(&self) -> String {
        format!("{}:{}", self.kind, self.reference)
    }

    /// The item as typed (`KIND:REF:RESULT:DIGEST`), for the evaluator request.
    pub fn to_text(&self) -> String {
        let result = match self.result {
            CheckResult::Passed => "passed",
            CheckResult::Failed => "failed",
        };
        let target = match &self.target {
            Target::Memory(d) => d.as_str(),
            Target::Set => "set",
        };
        format!("{}:{}:{result}:{target}", self.kind, self.reference)
    }
}

/// Checks that every memory an item names is one the receipt applied.
pub fn check_targets(items: &[EvidenceItem], applied: &[String]) -> Result<(), AttributionError> {
    for item in items {
        if let Target::Memory(d) = &item.target
            && !applied.contains(d)
        {
            return Err(AttributionError::Evidence(format!(
                "--evidence {} names memory {d}, which the receipt did not apply: use one of its memory_ref_digests ({})",
                item.to_text(),
                applied.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_parses_its_form_and_names_it_when_it_does_not() {
        let item = EvidenceItem::parse("test:ci:17:passed:0123456789abcdef").expect("item");
        assert_eq!(item.reference, "ci:17");
        assert_eq!(item.evidence_ref(), "test:ci:17");
        assert_eq!(item.target, Target::Memory("0123456789abcdef".into()));
        assert_eq!(item.to_text(), "test:ci:17:passed:0123456789abcdef");
        assert_eq!(
            EvidenceItem::parse("check:x:failed:set")
                .expect("set")
                .target,
            Target::Set
        );
        for bad in [
            "test",
            "test:ci:ok:0123456789abcdef",
            "test:ci:passed:xyz",
            "Test:ci:passed:set",
            "test::passed:set",
        ] {
            let err = EvidenceItem::parse(bad).expect_err(bad);
            assert!(err.to_string().contains("KIND:REF:RESULT:DIGEST"), "{err}");
        }
    }
}

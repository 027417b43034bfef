//! `operator-control`: an authorized edit or retirement decision for one active reviewed
//! record, and the `reward_memory_operator_control_v0` receipt that Stage-5 dogfood
//! batches count.
//!
//! Owns the authority and consistency checks (corpus state, reviewed-record state, class
//! and scope binding, operator checkpoint), the decision built through the shared
//! candidate-review step, the receipt, and the receipt validator used by
//! `dogfood-evaluate`. It writes nothing: persisting the decision is the corpus owner's
//! job. The decision echoes the reviewed record only inside the candidate contract's
//! bounds ([`crate::contract::candidate::check_record_bounds`]). Pure: [`control_input`]
//! takes the parsed input, which the `operator-control` handler of the shell reads.

use crate::contract::candidate::{self, REVIEW_SCHEMA_VERSION};
use crate::contract::registry;
use crate::obj;
use crate::wire::digest;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr_strip;
use crate::wire::text::{FieldError, FieldResult, compact, object, strict_bool, token};

/// Schema of the control packet and of its receipt.
pub const OPERATOR_CONTROL_SCHEMA_VERSION: &str = "reward_memory_operator_control_v0";
/// `receipt.next_step` of an edit.
pub const EDIT_NEXT_STEP: &str = "review_replacement_then_owner_write_and_exact_readback";
/// `receipt.next_step` of a retirement.
pub const RETIRE_NEXT_STEP: &str = "owner_write_retirement_then_exact_readback";
/// Why `--action revoke` is refused without `--execute`.
pub const REVOKE_NEEDS_EXECUTE: &str =
    "--action revoke is performed on the store only: add --execute with --goal-id and --agent-id";

crate::choice! {
    /// The operator controls: LoopX's `edit` and `retire`, and this port's `revoke`
    /// (performed only by `operator-control --execute`, [`crate::contract::lifecycle`]).
    pub enum OperatorAction {
        Edit => "edit",
        Retire => "retire",
        Revoke => "revoke",
    }
}

/// The controls `operator-control` prepares without `--execute` (LoopX's), the ones a
/// Stage-5 dogfood batch counts.
pub const PREPARED_ACTIONS: [OperatorAction; 2] = [OperatorAction::Edit, OperatorAction::Retire];

impl OperatorAction {
    /// The lifecycle state of the decision record after this control.
    pub fn result_state(self) -> &'static str {
        match self {
            OperatorAction::Edit => "candidate",
            OperatorAction::Retire => "retired",
            OperatorAction::Revoke => "revoked",
        }
    }
}

/// Why an operator control could not be prepared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperatorError {
    /// The input, the corpus, the record or the checkpoint is invalid; the message is the
    /// reference's.
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// What the operator asks for: the action and the operator-authored texts.
#[derive(Debug, Clone)]
pub struct ControlRequest<'a> {
    pub action: OperatorAction,
    pub control_ref: &'a str,
    pub reasoning_summary: &'a str,
    /// Required (compact, ≤500) for an edit; ignored for a retirement.
    pub edited_content_summary: Option<&'a str>,
}

fn fail(message: &str) -> FieldError {
    FieldError::new(message)
}

fn str_eq(v: Option<&Value>, expected: &str) -> bool {
    v.and_then(Value::as_str) == Some(expected)
}

/// The normalized corpus field at `path` as text (normalization guarantees it exists).
fn corpus_str<'a>(corpus: &'a Map, path: &[&str]) -> &'a str {
    corpus.at(path).and_then(Value::as_str).unwrap_or_default()
}

/// True when every `surface_ids` entry of the record is a surface of the corpus.
///
/// A falsy value is the empty set. Only a list of strings is otherwise accepted: the
/// reference crashes on a number, `true` or a nested list/object entry and treats a
/// string as its characters and an object as its keys; all of those are a mismatch here.
fn surfaces_within(record_surfaces: Option<&Value>, corpus_surfaces: &[Value]) -> bool {
    match record_surfaces {
        None => true,
        Some(v) if !v.is_truthy() => true,
        Some(Value::Array(items)) => items.iter().all(|item| {
            matches!(item, Value::Str(_)) && corpus_surfaces.iter().any(|surface| surface == item)
        }),
        Some(_) => false,
    }
}

/// The checks of a revocation, which only `operator-control --execute` performs: the
/// corpus active and writable, the reviewed record active and bound to it (as for the
/// other controls), and a checkpoint for `revoke` naming the corpus owner. Returns the
/// reviewed record's inner `record` and the authority.
pub(crate) fn revoke_checks<'a>(
    reviewed_record: &'a Map,
    corpus: &Map,
    checkpoint: &Map,
) -> FieldResult<(&'a Map, OperatorAuthority)> {
    if corpus_str(corpus, &["lifecycle", "state"]) != "active" {
        return Err(fail("operator control corpus must be active"));
    }
    if corpus_str(corpus, &["write_authority"]) == "read_only" {
        return Err(fail("operator control corpus is read-only"));
    }
    let record = active_record(reviewed_record, corpus)?;
    let authority = operator_authority(checkpoint, corpus, OperatorAction::Revoke)?;
    Ok((record, authority))
}

/// The record scope is inside the corpus scope (and at its revision when revision-bound).
fn scope_matches(record: &Map, corpus: &Map) -> bool {
    let Some(Value::Object(scope)) = record.get("scope") else {
        return false;
    };
    let corpus_surfaces = corpus
        .get("scope")
        .and_then(|s| s.get("surface_ids"))
        .and_then(Value::as_array)
        .unwrap_or_default();
    let base = str_eq(
        scope.get("workspace_ref"),
        corpus_str(corpus, &["scope", "workspace_ref"]),
    ) && str_eq(
        scope.get("project_ref"),
        corpus_str(corpus, &["scope", "project_ref"]),
    ) && surfaces_within(scope.get("surface_ids"), corpus_surfaces);
    if !base {
        return false;
    }
    if corpus_str(corpus, &["freshness", "mode"]) == "revision_bound" {
        return str_eq(
            scope.get("revision_ref"),
            corpus_str(corpus, &["freshness", "source_revision"]),
        );
    }
    true
}

/// The reviewed record's inner `record`, after the reviewed-record and corpus binding
/// checks (§6.2 steps 5–10).
fn active_record<'a>(reviewed_record: &'a Map, corpus: &Map) -> FieldResult<&'a Map> {
    if !str_eq(reviewed_record.get("schema_version"), REVIEW_SCHEMA_VERSION) {
        return Err(fail("operator control requires an active reviewed record"));
    }
    if !str_eq(reviewed_record.get("status"), "active")
        || reviewed_record.get("guard_passed") != Some(&Value::Bool(true))
    {
        return Err(fail(
            "operator control requires a guard-passed active record",
        ));
    }
    let Some(Value::Object(record)) = reviewed_record.get("record") else {
        return Err(fail("reviewed record is incomplete"));
    };
    let active = matches!(
        record.get("lifecycle"),
        Some(Value::Object(lifecycle)) if str_eq(lifecycle.get("state"), "active")
    );
    if !active {
        return Err(fail("operator control target must be active"));
    }
    if !str_eq(
        record.get("target_class"),
        corpus_str(corpus, &["class_id"]),
    ) {
        return Err(fail("operator control corpus class does not match"));
    }
    if !scope_matches(record, corpus) {
        return Err(fail("operator control corpus scope does not match"));
    }
    Ok(record)
}

/// The operator checkpoint, verified and bound to the corpus and the action.
pub(crate) struct OperatorAuthority {
    pub(crate) operator_ref: String,
    pub(crate) authority_ref: String,
    pub(crate) source_ref: String,
}

fn operator_authority(
    checkpoint: &Map,
    corpus: &Map,
    action: OperatorAction,
) -> FieldResult<OperatorAuthority> {
    let expected = match action {
        OperatorAction::Edit | OperatorAction::Revoke => corpus_str(corpus, &["owner_ref"]),
        OperatorAction::Retire => corpus_str(corpus, &["maintenance", "retirement_authority"]),
    };
    checkpoint_authority(checkpoint, corpus, action.as_str(), expected)
}

/// The checks of an operator checkpoint against a normalized corpus declaration, in the
/// reference's order and wording: verified, its refs tokens, bound to the corpus id, the
/// corpus project and `action`, and naming `expected_authority` (the authority the corpus
/// declares for that action). `operator-control` and `utility-correct` share it.
pub(crate) fn checkpoint_authority(
    checkpoint: &Map,
    corpus: &Map,
    action: &str,
    expected_authority: &str,
) -> FieldResult<OperatorAuthority> {
    if !strict_bool(checkpoint.get("verified"), "verified")? {
        return Err(fail("operator authority checkpoint must be verified"));
    }
    let field = |key: &str| token(checkpoint.get(key), &format!("operator_checkpoint.{key}"));
    let operator_ref = field("operator_ref")?;
    let authority_ref = field("authority_ref")?;
    let source_ref = field("source_ref")?;
    let corpus_id = field("corpus_id")?;
    let project_ref = field("project_ref")?;
    let checkpoint_action = pystr_strip(checkpoint.get("action"));
    if corpus_id != corpus_str(corpus, &["corpus_id"]) {
        return Err(fail("operator authority corpus does not match"));
    }
    if project_ref != corpus_str(corpus, &["scope", "project_ref"]) {
        return Err(fail("operator authority project does not match"));
    }
    if checkpoint_action != action {
        return Err(fail("operator authority action does not match"));
    }
    if authority_ref != expected_authority {
        return Err(fail(
            "operator authority does not match the corpus declaration",
        ));
    }
    Ok(OperatorAuthority {
        operator_ref,
        authority_ref,
        source_ref,
    })
}

/// The corpus's owner (`owner_ref`) of a normalized corpus declaration: the authority an
/// owner correction of its memories' utility needs.
pub(crate) fn corpus_owner(corpus: &Map) -> &str {
    corpus_str(corpus, &["owner_ref"])
}

/// The corpus's id (`corpus_id`) of a normalized corpus declaration.
pub(crate) fn corpus_id(corpus: &Map) -> &str {
    corpus_str(corpus, &["corpus_id"])
}

/// True when a normalized corpus declaration's lifecycle state is `active`.
pub(crate) fn corpus_active(corpus: &Map) -> bool {
    corpus_str(corpus, &["lifecycle", "state"]) == "active"
}

/// Builds the `reward_memory_operator_control_v0` packet (`decision` + `receipt`) for
/// one reviewed record, corpus declaration and operator checkpoint.
///
/// Checks run in the reference order and the first failure is returned with its error
/// string. The decision is the shared candidate-review step applied to a copy of the
/// reviewed record (an edit first turns the copy back into a candidate superseding the
/// old ref); nothing is written.
pub fn build_operator_control(
    reviewed_record: &Map,
    corpus: &Value,
    checkpoint: &Map,
    request: &ControlRequest<'_>,
) -> Result<Map, OperatorError> {
    let corpus = registry::normalize_corpus(corpus)?;
    let action = request.action;
    if action == OperatorAction::Revoke {
        return Err(fail(REVOKE_NEEDS_EXECUTE).into());
    }
    if corpus_str(&corpus, &["lifecycle", "state"]) != "active" {
        return Err(fail("operator control corpus must be active").into());
    }
    if corpus_str(&corpus, &["write_authority"]) == "read_only" {
        return Err(fail("operator control corpus is read-only").into());
    }
    let record = active_record(reviewed_record, &corpus)?;
    let authority = operator_authority(checkpoint, &corpus, action)?;

    let mut target = reviewed_record.clone();
    if action == OperatorAction::Edit {
        let old_ref = token(record.get("candidate_ref"), "candidate_ref")?;
        if let Some(Value::Object(target_record)) = target.get_mut("record") {
            target_record.insert(
                "lifecycle",
                obj! {"state" => "candidate", "supersedes_refs" => vec![old_ref]},
            );
        }
    }
    let control_ref = token(Some(&Value::from(request.control_ref)), "control_ref")?;
    let reasoning_summary = compact(
        Some(&Value::from(request.reasoning_summary)),
        "reasoning_summary",
        360,
    )?;
    let mut review = obj! {
        "decision" => action.as_str(),
        "reviewer_ref" => authority.operator_ref.clone(),
        "review_ref" => control_ref.clone(),
        "reasoning_summary" => reasoning_summary.clone(),
    };
    if action == OperatorAction::Edit {
        let edited = compact(
            request.edited_content_summary.map(Value::from).as_ref(),
            "edited_content_summary",
            500,
        )?;
        review.insert("edited_content_summary", edited);
    }
    let decision = candidate::review_candidate(&target, &review)?;
    let old_ref = token(record.get("candidate_ref"), "candidate_ref")?;
    let decision_record = decision.get("record").and_then(Value::as_object);
    let new_ref = token(
        decision_record.and_then(|r| r.get("candidate_ref")),
        "decision.candidate_ref",
    )?;
    let result_state = decision_record
        .and_then(|r| r.get("lifecycle"))
        .and_then(|l| l.get("state"))
        .cloned()
        .unwrap_or(Value::Null);
    // The decision echoes the record: keep it inside the candidate contract's bounds.
    candidate::check_record_bounds(record)?;
    let receipt = obj! {
        "schema_version" => OPERATOR_CONTROL_SCHEMA_VERSION,
        "control_ref" => control_ref,
        "action" => action.as_str(),
        "effective_action" => decision.get("effective_decision").cloned().unwrap_or(Value::Null),
        "operator_ref" => authority.operator_ref,
        "authority_ref" => authority.authority_ref,
        "authority_source_ref" => authority.source_ref,
        "authority_verified" => true,
        "corpus_id" => corpus_str(&corpus, &["corpus_id"]),
        "prior_candidate_ref_digest" => digest::short16(&old_ref),
        "result_candidate_ref_digest" => digest::short16(&new_ref),
        "result_state" => result_state,
        "reasoning_summary" => reasoning_summary,
        "provider_write_performed" => false,
        "readback_verified" => false,
        "next_step" => match action {
            OperatorAction::Edit => EDIT_NEXT_STEP,
            OperatorAction::Retire | OperatorAction::Revoke => RETIRE_NEXT_STEP,
        },
        "grants_new_action_authority" => false,
        "raw_content_captured" => false,
        "external_writes_performed" => false,
    };
    Ok(obj! {
        "ok" => true,
        "schema_version" => OPERATOR_CONTROL_SCHEMA_VERSION,
        "status" => "control_ready",
        "decision" => decision,
        "receipt" => receipt,
    })
}

/// Validates one operator control receipt as a dogfood batch counts it (extra keys are
/// allowed) and returns its action. A valid receipt is exactly the `receipt` object of
/// an `operator-control` packet.
pub fn validate_control_receipt(raw: &Map) -> FieldResult<OperatorAction> {
    if !str_eq(raw.get("schema_version"), OPERATOR_CONTROL_SCHEMA_VERSION) {
        return Err(fail("operator control receipt schema is invalid"));
    }
    let action = OperatorAction::from_name(&pystr_strip(raw.get("action")))
        .filter(|a| PREPARED_ACTIONS.contains(a))
        .ok_or_else(|| fail("operator control receipt action is invalid"))?;
    if !strict_bool(raw.get("authority_verified"), "authority_verified")? {
        return Err(fail("operator control authority must be verified"));
    }
    if strict_bool(
        raw.get("provider_write_performed"),
        "provider_write_performed",
    )? {
        return Err(fail("Stage-5 control receipt must precede provider write"));
    }
    if pystr_strip(raw.get("effective_action")) != action.as_str() {
        return Err(fail("operator control effective action is invalid"));
    }
    if pystr_strip(raw.get("result_state")) != action.result_state() {
        return Err(fail("operator control result state is invalid"));
    }
    for key in [
        "control_ref",
        "operator_ref",
        "authority_ref",
        "authority_source_ref",
        "corpus_id",
        "prior_candidate_ref_digest",
        "result_candidate_ref_digest",
    ] {
        token(raw.get(key), key)?;
    }
    for (key, message) in [
        (
            "grants_new_action_authority",
            "operator control cannot grant action authority",
        ),
        (
            "raw_content_captured",
            "operator control cannot contain raw content",
        ),
        (
            "external_writes_performed",
            "operator control cannot perform external writes",
        ),
    ] {
        if strict_bool(raw.get(key), key)? {
            return Err(fail(message));
        }
    }
    Ok(action)
}

/// The command on an already parsed `{reviewed_record, corpus, operator_checkpoint}`.
pub fn control_input(source: &Value, request: &ControlRequest<'_>) -> Result<Value, OperatorError> {
    let reviewed_record = object(source.get("reviewed_record"), "reviewed_record")?;
    let corpus = source
        .get("corpus")
        .filter(|v| v.as_object().is_some())
        .ok_or_else(|| fail("corpus must be an object"))?;
    let checkpoint = object(source.get("operator_checkpoint"), "operator_checkpoint")?;
    let packet = build_operator_control(reviewed_record, corpus, checkpoint, request)?;
    Ok(Value::Object(packet))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    fn fixture() -> Map {
        let text = include_str!("../../fixtures/operator_control/valid/edit.json");
        match parse(text) {
            Ok(Value::Object(m)) => m,
            other => panic!("fixture is an object: {other:?}"),
        }
    }

    fn parts(source: &Map) -> (Map, Value, Map) {
        let get = |k: &str| source.get(k).cloned().unwrap_or(Value::Null);
        let as_map = |v: Value| match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        (
            as_map(get("reviewed_record")),
            get("corpus"),
            as_map(get("operator_checkpoint")),
        )
    }

    fn edit_request() -> ControlRequest<'static> {
        ControlRequest {
            action: OperatorAction::Edit,
            control_ref: "control:cli:edit",
            reasoning_summary: "The owner narrowed the preference.",
            edited_content_summary: Some("Prefer a focused current-artifact-verified change."),
        }
    }

    fn run(source: &Map, request: &ControlRequest<'_>) -> Result<Map, OperatorError> {
        let (record, corpus, checkpoint) = parts(source);
        build_operator_control(&record, &corpus, &checkpoint, request)
    }

    #[test]
    fn edit_receipt_digests_match_the_worked_example() {
        let packet = run(&fixture(), &edit_request()).expect("edit is ready");
        let receipt = packet.get("receipt").expect("receipt");
        assert_eq!(
            receipt.get("prior_candidate_ref_digest"),
            Some(&Value::from("7bd34534f5e1ee2d"))
        );
        assert_eq!(
            receipt.get("result_candidate_ref_digest"),
            Some(&Value::from("3b7623f3ea4c4ff4"))
        );
        let receipt_map = receipt.as_object().expect("object");
        assert_eq!(
            validate_control_receipt(receipt_map),
            Ok(OperatorAction::Edit)
        );
    }

    #[test]
    fn a_record_without_source_is_refused_instead_of_crashing() {
        let mut source = fixture();
        if let Some(Value::Object(rr)) = source.get_mut("reviewed_record")
            && let Some(Value::Object(record)) = rr.get_mut("record")
        {
            record.remove("source");
        }
        assert_eq!(
            run(&source, &edit_request())
                .expect_err("missing source")
                .to_string(),
            "candidate record is missing source"
        );
    }

    #[test]
    fn non_list_surface_ids_are_a_scope_mismatch() {
        for bad in [
            Value::Int(1),
            Value::Bool(true),
            Value::from("module.owned_surface"),
        ] {
            let mut source = fixture();
            if let Some(Value::Object(rr)) = source.get_mut("reviewed_record")
                && let Some(Value::Object(record)) = rr.get_mut("record")
                && let Some(Value::Object(scope)) = record.get_mut("scope")
            {
                scope.insert("surface_ids", bad);
            }
            assert_eq!(
                run(&source, &edit_request())
                    .expect_err("scope")
                    .to_string(),
                "operator control corpus scope does not match"
            );
        }
    }

    #[test]
    fn receipt_validation_rejects_a_mismatched_result_state() {
        let packet = run(&fixture(), &edit_request()).expect("edit is ready");
        let mut receipt = packet
            .get("receipt")
            .and_then(Value::as_object)
            .cloned()
            .expect("receipt");
        receipt.insert("result_state", "retired");
        assert_eq!(
            validate_control_receipt(&receipt).expect_err("state").0,
            "operator control result state is invalid"
        );
    }
}

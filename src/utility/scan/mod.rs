//! The direct reading of a `utility-project` input in its common shape: observations
//! read field by field from the text into typed [`Observation`]s, with no value tree.
//!
//! The common shape is an object with `observations` (at most [`MAX_OBSERVATIONS`]
//! observation packets whose every value is a string without escapes, a list of such
//! strings, a number for `confidence` and `false` for the four boundary flags), `scope`,
//! `retrieval_snapshot_ref`, `policy_snapshot_ref`, optionally `reducer_version` and a
//! `null` `previous_projection`, no key twice, every observation valid and fitting the
//! context. [`project_text`] reduces such an input and returns `None` for every other
//! text — any other shape, a refusal of any kind, invalid JSON — so that the caller
//! parses the document and takes the general path, which decides and words it as
//! always. Accepting means exactly what the general path would do: the same rules run on
//! the same strings (`observation::observation_from_text`, crate-private), the context is
//! validated by the same [`ReducerContext::strict`], and the reduction is the same
//! [`reduce_validated`].
//!
//! Nothing here is refused that the general parser would accept for memory reasons:
//! this shape is far from the parser's density limit (every value is a string or a
//! short list of strings under a long key) and from its depth limit. Pure.

use crate::wire::json::{Cursor, Value};
use crate::wire::pyfmt;
use crate::wire::text::FieldResult;

use super::observation::{
    OBSERVATION_FIELDS, OBSERVATION_SCHEMA_VERSION, Observation, ObservationText, TextList,
    observation_from_text,
};
use super::reducer::{
    DEFAULT_REDUCER_VERSION, MAX_OBSERVATIONS, Projection, ReducerContext, fits_context,
    project_validated, reduce_validated,
};

/// The projection of `text`, when `text` is a `utility-project` input in the common shape
/// (see the module docs); `None` leaves it to the general path.
pub fn project_text(text: &str) -> Option<FieldResult<Value>> {
    scan_request(text).map(|request| request.project())
}

/// A `utility-project` input in the common shape, read and checked up to the reduction:
/// it owns everything it holds, so the text can go before [`ScannedRequest::project`].
#[derive(Debug)]
pub struct ScannedRequest {
    context: ReducerContext,
    observations: Vec<Observation>,
}

impl ScannedRequest {
    /// The projection: what the general path gives for the same text.
    pub fn project(&self) -> FieldResult<Value> {
        reduce_validated(&self.context, &self.observations)
    }

    /// [`ScannedRequest::project`] as typed data, to be printed without a value tree.
    pub fn project_typed(&self) -> FieldResult<Projection<'_>> {
        project_validated(&self.context, &self.observations)
    }
}

/// Reads `text` when it is a `utility-project` input in the common shape (see the module
/// docs); `None` leaves it to the general path.
pub fn scan_request(text: &str) -> Option<ScannedRequest> {
    let input = scan_input(text)?;
    let version = input
        .reducer_version
        .unwrap_or_else(|| Value::from(DEFAULT_REDUCER_VERSION));
    // The command's own shape rules, which the general path checks before reducing.
    if input.scope.as_object().is_none()
        || input.retrieval.as_str().is_none()
        || input.policy.as_str().is_none()
        || version
            .as_str()
            .is_none_or(|v| pyfmt::py_strip(v).is_empty())
    {
        return None;
    }
    let context =
        ReducerContext::strict(&input.scope, &input.retrieval, &input.policy, &version).ok()?;
    if !input.observations.iter().all(|o| fits_context(o, &context)) {
        return None;
    }
    Some(ScannedRequest {
        context,
        observations: input.observations,
    })
}

/// The top-level values of an input in the common shape.
struct ScannedInput {
    observations: Vec<Observation>,
    scope: Value,
    retrieval: Value,
    policy: Value,
    reducer_version: Option<Value>,
}

fn scan_input(text: &str) -> Option<ScannedInput> {
    let mut cursor = Cursor::new(text);
    if !cursor.eat(b'{') {
        return None;
    }
    let mut observations = None;
    let mut scope = None;
    let mut retrieval = None;
    let mut policy = None;
    let mut reducer_version = None;
    let mut previous_seen = false;
    loop {
        let key = cursor.plain_str()?;
        if !cursor.eat(b':') {
            return None;
        }
        let fresh = match key {
            "observations" => observations
                .replace(scan_observations(&mut cursor)?)
                .is_none(),
            "scope" => scope.replace(cursor.value()?).is_none(),
            "retrieval_snapshot_ref" => retrieval.replace(cursor.value()?).is_none(),
            "policy_snapshot_ref" => policy.replace(cursor.value()?).is_none(),
            "reducer_version" => reducer_version.replace(cursor.value()?).is_none(),
            "previous_projection" => {
                // Only an explicit null is the common shape; a projection to check is not.
                let fresh = !previous_seen;
                previous_seen = true;
                fresh && cursor.value()? == Value::Null
            }
            _ => return None,
        };
        if !fresh {
            return None;
        }
        if cursor.eat(b'}') {
            break;
        }
        if !cursor.eat(b',') {
            return None;
        }
    }
    if !cursor.at_end() {
        return None;
    }
    Some(ScannedInput {
        observations: observations?,
        scope: scope?,
        retrieval: retrieval?,
        policy: policy?,
        reducer_version,
    })
}

/// One observation packet in the common shape (see the module docs), read straight from
/// its text: the [`Observation`] that parsing the text and
/// [`super::observation::validate_observation`] give, without the value tree. `None`
/// (any other shape, trailing text, a refusal of any kind) leaves the text to that
/// general path, which decides and words it as always. `utility-ledger append` reads
/// each delivery this way.
pub fn observation_text(text: &str) -> Option<Observation> {
    let mut cursor = Cursor::new(text);
    let mut order = KeyOrder::new();
    let mut fields = ObservationText::default();
    scan_observation(&mut cursor, &mut order, &mut fields)?;
    if !cursor.at_end() {
        return None;
    }
    observation_from_text(&fields)
}

/// The observation list, each packet converted as soon as it is read.
///
/// Converting on a second thread (every other batch of 32 packets on a scoped helper)
/// was measured on the 2-vCPU machine this is benchmarked on: the same wall time on
/// average, about 0.9 ms more system time (the helper's allocator arena faults its pages
/// in anew) and twice the spread, so the list is converted on this thread.
fn scan_observations(cursor: &mut Cursor<'_>) -> Option<Vec<Observation>> {
    if !cursor.eat(b'[') {
        return None;
    }
    let mut out = Vec::new();
    if cursor.eat(b']') {
        return Some(out);
    }
    let mut order = KeyOrder::new();
    // One packet's fields, overwritten by each packet in turn (a packet sets every one).
    let mut text = ObservationText::default();
    loop {
        if out.len() == MAX_OBSERVATIONS {
            return None;
        }
        scan_observation(cursor, &mut order, &mut text)?;
        out.push(observation_from_text(&text)?);
        if cursor.eat(b']') {
            return Some(out);
        }
        if !cursor.eat(b',') {
            return None;
        }
    }
}

/// Field positions (in [`OBSERVATION_FIELDS`]) in a bit set of the fields seen.
const FIELD_COUNT: u32 = OBSERVATION_FIELDS.len() as u32;

/// The position of an observation field named `key`.
fn field_position(key: &str) -> Option<u32> {
    Some(match key {
        "schema_version" => 0,
        "observation_id" => 1,
        "scope" => 2,
        "application_receipt_id" => 3,
        "memory_ref_digests" => 4,
        "retrieval_snapshot_ref" => 5,
        "policy_snapshot_ref" => 6,
        "outcome_ref" => 7,
        "utility_label" => 8,
        "attribution_level" => 9,
        "evidence_basis" => 10,
        "confidence" => 11,
        "reason_codes" => 12,
        "evidence_refs" => 13,
        "evaluator_ref" => 14,
        "evaluation_version" => 15,
        "created_at" => 16,
        "grants_new_action_authority" => 17,
        "provider_write_performed" => 18,
        "external_writes_performed" => 19,
        "raw_content_captured" => 20,
        _ => return None,
    })
}

/// The key order of the packets read so far: after each field (or at the start of a
/// packet), the field that followed it last time. Packets written by one program list
/// their keys in one order, so the next key is usually known and is matched with one
/// comparison ([`Cursor::eat_key`]) instead of being scanned and looked up; a miss reads
/// the key as any other and learns the new order. Which keys a packet has and what their
/// values are is decided exactly as without it.
struct KeyOrder {
    /// Indexed by field position, [`FIELD_COUNT`] for the start of a packet.
    next: [Option<u32>; OBSERVATION_FIELDS.len() + 1],
}

impl KeyOrder {
    fn new() -> Self {
        KeyOrder {
            next: [None; OBSERVATION_FIELDS.len() + 1],
        }
    }

    /// The position of the key at the cursor, `after` the field at that position.
    fn read(&mut self, cursor: &mut Cursor<'_>, after: u32) -> Option<u32> {
        let slot = self.next.get_mut(after as usize)?;
        if let Some(expected) = *slot
            && cursor.eat_key(OBSERVATION_FIELDS[expected as usize])
        {
            return Some(expected);
        }
        let position = field_position(cursor.plain_str()?)?;
        *slot = Some(position);
        Some(position)
    }
}

/// Reads one observation packet into `out`, which holds every field afterwards; `None`
/// for anything but a packet in the common shape.
fn scan_observation<'a>(
    cursor: &mut Cursor<'a>,
    order: &mut KeyOrder,
    out: &mut ObservationText<'a>,
) -> Option<()> {
    if !cursor.eat(b'{') {
        return None;
    }
    let mut seen: u32 = 0;
    let mut previous = FIELD_COUNT;
    loop {
        let bit = order.read(cursor, previous)?;
        if !cursor.eat(b':') {
            return None;
        }
        match bit {
            0 => {
                if cursor.plain_str()? != OBSERVATION_SCHEMA_VERSION {
                    return None;
                }
            }
            1 => out.observation_id = cursor.plain_str()?,
            2 => out.scope = scan_scope(cursor)?,
            3 => out.application_receipt_id = cursor.plain_str()?,
            4 => scan_list(cursor, &mut out.memory_ref_digests)?,
            5 => out.retrieval_snapshot_ref = cursor.plain_str()?,
            6 => out.policy_snapshot_ref = cursor.plain_str()?,
            7 => out.outcome_ref = cursor.plain_str()?,
            8 => out.utility_label = cursor.plain_str()?,
            9 => out.attribution_level = cursor.plain_str()?,
            10 => out.evidence_basis = cursor.plain_str()?,
            11 => {
                if !matches!(cursor.peek(), Some(b'-' | b'0'..=b'9')) {
                    return None;
                }
                out.confidence = cursor.value()?;
            }
            12 => scan_list(cursor, &mut out.reason_codes)?,
            13 => scan_list(cursor, &mut out.evidence_refs)?,
            14 => out.evaluator_ref = cursor.plain_str()?,
            15 => out.evaluation_version = cursor.plain_str()?,
            16 => out.created_at = cursor.plain_str()?,
            // The four boundary flags.
            _ => {
                if !cursor.eat_false() {
                    return None;
                }
            }
        }
        if seen & (1 << bit) != 0 {
            return None;
        }
        seen |= 1 << bit;
        previous = bit;
        if cursor.eat(b'}') {
            break;
        }
        if !cursor.eat(b',') {
            return None;
        }
    }
    (seen == (1 << FIELD_COUNT) - 1).then_some(())
}

/// `{"agent_id", "project_id", "corpus_id", "surface_id"}` in any order, each once.
fn scan_scope<'a>(cursor: &mut Cursor<'a>) -> Option<[&'a str; 4]> {
    if !cursor.eat(b'{') {
        return None;
    }
    let mut out = [""; 4];
    let mut seen = 0u8;
    loop {
        let key = cursor.plain_str()?;
        let index = match key {
            "agent_id" => 0,
            "project_id" => 1,
            "corpus_id" => 2,
            "surface_id" => 3,
            _ => return None,
        };
        if !cursor.eat(b':') || seen & (1 << index) != 0 {
            return None;
        }
        seen |= 1 << index;
        out[index] = cursor.plain_str()?;
        if cursor.eat(b'}') {
            break;
        }
        if !cursor.eat(b',') {
            return None;
        }
    }
    (seen == 0b1111).then_some(out)
}

/// A list of plain strings that fits a [`TextList`], read into `out`.
fn scan_list<'a>(cursor: &mut Cursor<'a>, out: &mut TextList<'a>) -> Option<()> {
    if !cursor.eat(b'[') {
        return None;
    }
    out.clear();
    if cursor.eat(b']') {
        return Some(());
    }
    loop {
        if !out.push(cursor.plain_str()?) {
            return None;
        }
        if cursor.eat(b']') {
            return Some(());
        }
        if !cursor.eat(b',') {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{OBSERVATION_FIELDS, field_position};

    #[test]
    fn field_positions_are_the_table_positions() {
        for (position, key) in OBSERVATION_FIELDS.iter().enumerate() {
            assert_eq!(field_position(key), u32::try_from(position).ok(), "{key}");
        }
        assert_eq!(field_position("observation"), None);
    }
}

#[cfg(test)]
mod props;

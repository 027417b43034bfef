//! Every hashed identifier of the contracts, with the exact bytes each one hashes.
//!
//! All digests are lowercase hex SHA-256 over UTF-8 bytes. The JSON encodings are those of
//! [`crate::wire::json::DumpOptions`]:
//! * **J1** "legacy raw": keys sorted by code point, separators `", "` / `": "`, non-ASCII raw.
//! * **J2** "legacy ascii": as J1 but non-ASCII escaped `\uXXXX` (surrogate pairs above BMP).
//! * **J3** "canonical": keys sorted, separators `","` / `":"`, non-ASCII raw.
//!
//! | identifier | bytes hashed | printed as |
//! | --- | --- | --- |
//! | `candidate_ref` | J1 of `{content_summary, guard_context, requested_action_scopes, scope, source, target_class}` (nulls inside kept) | `candidate:` + first 20 hex |
//! | `activation_ref` | J2 of `{activated_at, candidate_ref, corpus_id}` | `activation:` + first 20 hex |
//! | policy digest | the policy id text | first 12 hex |
//! | opaque provider ref | `provider + "\n" + namespace + "\n" + resource_ref` | `provider-` + first 20 hex |
//! | content digest | canonical text: `\r\n` → `\n`, then one trailing `\n` removed | all 64 hex |
//! | `query_digest` | the compacted query text | first 16 hex |
//! | memory ref digest | the raw provider resource ref | first 16 hex |
//! | `event_summary_digest` | the public-safe compacted (≤500) event summary | first 16 hex |
//! | scope ref digest | the binding's `scope_ref` | first 16 hex |
//! | application receipt id | J3 of the complete receipt object | `rma_` + 64 hex |
//! | `observation_id` | J3 of the 12 identity fields of the normalized observation | `muo_` + 64 hex |
//! | observation fingerprint | J3 of the normalized observation without `created_at` | `muof_` + 64 hex |
//! | item / set / none subject | J3 of `{attribution_level, memory_ref_digests}` (+ `application_receipt_id` for none) | `mui_` / `mus_` / `mul_` + 64 hex |
//! | `reducer_identity` | J3 of `{policy_snapshot_ref, reducer_version, retrieval_snapshot_ref, schema_version, scope}` | `mur_` + 64 hex |
//! | dogfood `receipt_id` | J1 of the six receipt identity fields | `dogfood:` + first 20 hex |
//! | candidate ref digest | the `candidate_ref` text | first 16 hex |
//! | recall session integrity | HMAC-SHA256 ([`hmac_sha256`]) under the runtime root's session key of J3 of the session document without its `integrity` member | `hmac-sha256:` + 64 hex |

use sha2::{Digest, Sha256};

use crate::wire::json::{self, DumpOptions, Json, Sink, Value};

/// Lowercase hex SHA-256 of the UTF-8 bytes of `text`.
pub fn sha256_hex(text: &str) -> String {
    let mut out = String::with_capacity(64);
    push_hex(&mut out, &Sha256::digest(text.as_bytes()));
    out
}

/// Appends `bytes` to `out` as lowercase hex, the form every digest is printed in.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // A block of digits at a time: pushing them one `char` at a time cost ten times more
    // (ids are encoded for every delivery an append classifies).
    let mut digits = [0u8; 64];
    for block in bytes.chunks(32) {
        for (pair, &b) in digits.chunks_exact_mut(2).zip(block) {
            pair[0] = HEX[usize::from(b >> 4)];
            pair[1] = HEX[usize::from(b & 0xf)];
        }
        // Hex digits are ASCII: the block is always UTF-8.
        out.push_str(std::str::from_utf8(&digits[..block.len() * 2]).unwrap_or_default());
    }
}

/// Each byte's value as a lowercase hex digit; 0x10 marks every other byte.
const LOWER_HEX_VALUE: [u8; 256] = {
    let mut table = [0x10u8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// The 32 bytes of a full SHA-256 digest printed as 64 lowercase hex digits (the inverse
/// of [`push_hex`]); `None` for any other text, uppercase included. Without allocation: the
/// utility ledger converts every identifier of every delivery.
pub fn decode_hex32(hex: &[u8]) -> Option<[u8; 32]> {
    let digits: &[u8; 64] = hex.try_into().ok()?;
    let mut decoded = [0u8; 32];
    let mut bad = 0u8;
    for (byte, pair) in decoded.iter_mut().zip(digits.chunks_exact(2)) {
        let (hi, lo) = (
            LOWER_HEX_VALUE[usize::from(pair[0])],
            LOWER_HEX_VALUE[usize::from(pair[1])],
        );
        bad |= hi | lo;
        *byte = (hi << 4) | lo;
    }
    (bad & 0x10 == 0).then_some(decoded)
}

/// A SHA-256 state that JSON printers write into ([`Sink`]): the digest of a value's
/// JSON text without the text ever being held. Bytes are gathered in a small buffer and
/// hashed a block run at a time.
pub struct HashSink {
    hasher: Sha256,
    buf: [u8; HASH_BUFFER],
    len: usize,
}

const HASH_BUFFER: usize = 512;

impl HashSink {
    pub fn new() -> HashSink {
        HashSink {
            hasher: Sha256::new(),
            buf: [0; HASH_BUFFER],
            len: 0,
        }
    }

    /// `prefix` + lowercase hex of the digest of everything written.
    pub fn finish_prefixed(&mut self, prefix: &str) -> String {
        self.hasher.update(&self.buf[..self.len]);
        self.len = 0;
        let mut out = String::with_capacity(prefix.len() + 64);
        out.push_str(prefix);
        push_hex(&mut out, &self.hasher.finalize_reset());
        out
    }

    #[cold]
    fn push_slow(&mut self, bytes: &[u8]) {
        self.hasher.update(&self.buf[..self.len]);
        self.len = 0;
        if bytes.len() >= HASH_BUFFER {
            self.hasher.update(bytes);
        } else {
            self.buf[..bytes.len()].copy_from_slice(bytes);
            self.len = bytes.len();
        }
    }
}

impl Default for HashSink {
    fn default() -> Self {
        HashSink::new()
    }
}

impl Sink for HashSink {
    #[inline]
    fn push_str(&mut self, s: &str) {
        let bytes = s.as_bytes();
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.push_slow(bytes),
        }
    }
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, built on the crate's SHA-256: the
/// recall session's integrity tag.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    outer.finalize().into()
}

/// Compares two byte strings in time that depends only on their lengths (for tags).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The first `n` hex characters of [`sha256_hex`].
pub fn sha256_prefix(text: &str, n: usize) -> String {
    let mut full = sha256_hex(text);
    full.truncate(n);
    full
}

/// J1: legacy separators, sorted keys, raw UTF-8.
pub fn j1(value: &Value) -> String {
    json::dumps(value, DumpOptions::LEGACY_RAW)
}

/// J2: legacy separators, sorted keys, ASCII escapes.
pub fn j2(value: &Value) -> String {
    json::dumps(value, DumpOptions::LEGACY_ASCII)
}

/// J3: canonical separators, sorted keys, raw UTF-8.
pub fn j3(value: &Value) -> String {
    json::canonical(value)
}

/// `candidate:` + 20 hex of J1(identity).
pub fn candidate_ref(identity: &Value) -> String {
    format!("candidate:{}", sha256_prefix(&j1(identity), 20))
}

/// `activation:` + 20 hex of J2(`{corpus_id, candidate_ref, activated_at}`).
pub fn activation_ref(identity: &Value) -> String {
    format!("activation:{}", sha256_prefix(&j2(identity), 20))
}

/// The 12-hex digest of a standing policy id.
pub fn policy_digest(policy_id: &str) -> String {
    sha256_prefix(policy_id, 12)
}

/// The opaque public reference of a provider resource.
pub fn opaque_provider_ref(provider: &str, namespace: &str, resource_ref: &str) -> String {
    format!(
        "provider-{}",
        sha256_prefix(&format!("{provider}\n{namespace}\n{resource_ref}"), 20)
    )
}

/// `\r\n` → `\n`, then at most one trailing `\n` removed.
pub fn canonical_text(content: &str) -> String {
    let mut text = content.replace("\r\n", "\n");
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

/// Full 64-hex digest of the canonical text of provider content.
pub fn content_digest(content: &str) -> String {
    sha256_hex(&canonical_text(content))
}

/// 16-hex digest, used for query, memory ref, summary and scope digests.
pub fn short16(text: &str) -> String {
    sha256_prefix(text, 16)
}

/// `rma_` + 64 hex of J3(receipt).
pub fn application_receipt_id(receipt: &Value) -> String {
    prefixed_canonical("rma_", receipt)
}

/// A `prefix` + 64 hex of the canonical JSON of `value`, hashed as it is printed.
pub fn prefixed_canonical(prefix: &str, value: &Value) -> String {
    let mut sink = HashSink::new();
    json::write_value(&mut sink, value, DumpOptions::CANONICAL, 0);
    sink.finish_prefixed(prefix)
}

/// [`prefixed_canonical`] of the [`Value`] a borrowed [`Json`] stands for.
pub fn prefixed_canonical_json(prefix: &str, value: &Json<'_>) -> String {
    let mut bytes = Vec::with_capacity(1024);
    if json::write_canonical_plain(&mut bytes, value) {
        return prefixed_sha256(prefix, &bytes);
    }
    let mut sink = HashSink::new();
    json::write_json(&mut sink, value, DumpOptions::CANONICAL);
    sink.finish_prefixed(prefix)
}

/// [`prefixed_canonical_json`] of `Json::Object(entries)` for a static field table whose
/// keys are in ascending order and need no escape
/// ([`json::write_canonical_plain_fields`]).
pub fn prefixed_canonical_fields(prefix: &str, entries: &[(&'static str, Json<'_>)]) -> String {
    let mut bytes = Vec::with_capacity(1024);
    if json::write_canonical_plain_fields(&mut bytes, entries) {
        return prefixed_sha256(prefix, &bytes);
    }
    prefixed_canonical_json(prefix, &Json::Object(entries))
}

/// `prefix` + the 64 hex digits of the SHA-256 of `bytes`.
fn prefixed_sha256(prefix: &str, bytes: &[u8]) -> String {
    let mut out = String::with_capacity(prefix.len() + 64);
    out.push_str(prefix);
    push_hex(&mut out, &Sha256::digest(bytes));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        let hex = |bytes: [u8; 32]| {
            let mut out = String::new();
            push_hex(&mut out, &bytes);
            out
        };
        assert_eq!(
            hex(hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }

    #[test]
    fn push_hex_writes_every_length_as_two_lowercase_digits_a_byte() {
        for len in [0usize, 1, 31, 32, 33, 64, 70] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let mut out = String::from("x");
            push_hex(&mut out, &bytes);
            let want: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(out, format!("x{want}"), "{len} bytes");
        }
    }

    #[test]
    fn decode_hex32_inverts_push_hex_and_refuses_other_text() {
        let digest = Sha256::digest(b"reward-memory");
        let mut text = String::new();
        push_hex(&mut text, &digest);
        assert_eq!(
            decode_hex32(text.as_bytes()),
            Some(<[u8; 32]>::from(digest))
        );
        assert_eq!(decode_hex32(text.to_uppercase().as_bytes()), None);
        assert_eq!(decode_hex32(&text.as_bytes()[1..]), None);
        let mut bad = text.into_bytes();
        bad[63] = b'g';
        assert_eq!(decode_hex32(&bad), None);
    }

    #[test]
    fn canonical_text_drops_one_trailing_newline() {
        assert_eq!(canonical_text("a\r\nb\n\n"), "a\nb\n");
        assert_eq!(content_digest("x\n"), sha256_hex("x"));
    }

    #[test]
    fn observation_identity_example_from_the_spec() {
        let identity = r#"{"application_receipt_id":"rma_9dd4","attribution_level":"item"}"#;
        // Canonical bytes of a parsed object equal its compact sorted form.
        let v = json::parse(identity).expect("valid");
        assert_eq!(j3(&v), identity);
        let subject = json::parse(
            r#"{"memory_ref_digests":["0123456789abcdef"],"attribution_level":"item"}"#,
        )
        .expect("valid");
        assert_eq!(
            prefixed_canonical("mui_", &subject),
            "mui_3cea6d313a6ef79649d8d73259830e8cd4d06bb73fff4c4c7b58f19e06c858b2"
        );
    }

    #[test]
    fn activation_ref_escapes_non_ascii() {
        let v = crate::obj! {"corpus_id" => "c", "candidate_ref" => "candidate:x", "activated_at" => "é"};
        assert_eq!(
            j2(&Value::Object(v)),
            r#"{"activated_at": "\u00e9", "candidate_ref": "candidate:x", "corpus_id": "c"}"#
        );
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::{HashSink, sha256_hex};
    use crate::wire::json::{self, DumpOptions, Json, Map, Sink as _, Value};

    /// Any value the printers meet: big integers, every float, non-ASCII text, escapes
    /// and control characters, nested containers, and strings long enough to cross the
    /// hash buffer.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            "-?[1-9][0-9]{19,40}".prop_map(|s| Value::BigInt(s.into())),
            any::<f64>().prop_map(Value::Float),
            "(\\PC|[\\x00-\\x1f\\x7f\"\\\\/\u{e9}\u{2028}\u{1f600}]){0,24}".prop_map(Value::from),
            "[a-z]{500,1200}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
                prop::collection::vec(("[a-z\\u{e9}\"\\\\]{0,6}", inner), 0..8)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map>())),
            ]
        })
    }

    const DIALECTS: [DumpOptions; 4] = [
        DumpOptions::CANONICAL,
        DumpOptions::LEGACY_RAW,
        DumpOptions::LEGACY_ASCII,
        DumpOptions::PRETTY,
    ];

    fn streamed(opts: DumpOptions, write: impl FnOnce(&mut HashSink, DumpOptions)) -> String {
        let mut sink = HashSink::new();
        write(&mut sink, opts);
        sink.finish_prefixed("")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Hashing a value while it is printed gives the digest of the printed text, in
        /// every dump dialect, for a value and for a borrowed view of it.
        #[test]
        fn streamed_digest_equals_digest_of_the_printed_text(v in value()) {
            for opts in DIALECTS {
                let want = sha256_hex(&json::dumps(&v, opts));
                let got = streamed(opts, |sink, opts| json::write_value(sink, &v, opts, 0));
                prop_assert_eq!(&got, &want);
                let got = streamed(opts, |sink, opts| json::write_json(sink, &Json::Value(&v), opts));
                prop_assert_eq!(&got, &want);
            }
            if let Value::Object(map) = &v {
                // The same object as borrowed entries, in map order.
                let entries: Vec<(&str, Json<'_>)> =
                    map.iter().map(|(k, x)| (k, Json::Value(x))).collect();
                let view = Json::Object(&entries);
                prop_assert_eq!(view.to_value(), v.clone());
                for opts in DIALECTS {
                    let want = sha256_hex(&json::dumps(&v, opts));
                    let got = streamed(opts, |sink, opts| json::write_json(sink, &view, opts));
                    prop_assert_eq!(got, want);
                }
            }
        }

        /// Pieces of any size, split anywhere, hash like the whole text at once.
        #[test]
        fn hash_sink_buffers_any_split(text in "\\PC{0,2000}", cuts in prop::collection::vec(0usize..2000, 0..12)) {
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|c| text.is_char_boundary(*c) && *c <= text.len()).collect();
            cuts.sort_unstable();
            let mut sink = HashSink::new();
            let mut from = 0;
            for cut in cuts {
                sink.push_str(&text[from..cut]);
                from = cut;
            }
            sink.push_str(&text[from..]);
            prop_assert_eq!(sink.finish_prefixed("p_"), format!("p_{}", sha256_hex(&text)));
        }
    }

    #[test]
    fn borrowed_lists_print_like_string_values() {
        let items = vec!["b".to_owned(), "\u{e9}\"".to_owned()];
        let refs = ["x", "y\n"];
        let entries = [
            ("z", Json::Strs(&items)),
            ("a", Json::StrRefs(&refs)),
            ("m", Json::Float(1e16)),
            ("n", Json::Int(-7)),
            ("o", Json::Null),
            ("t", Json::Bool(true)),
        ];
        let view = Json::Object(&entries);
        let value = view.to_value();
        for opts in DIALECTS {
            let mut printed = String::new();
            json::write_json(&mut printed, &view, opts);
            assert_eq!(printed, json::dumps(&value, opts));
        }
        assert_eq!(
            json::canonical(&value),
            r#"{"a":["x","y\n"],"m":1e+16,"n":-7,"o":null,"t":true,"z":["b","é\""]}"#
        );
    }
}

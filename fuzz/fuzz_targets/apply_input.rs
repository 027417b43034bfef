//! `apply --input` on any input document, against the fixture recall session
//! (`fixtures/apply/session/`, sealed with `fixtures/apply/recall-session.key`; no
//! provider, no clock). No input panics; an accepted
//! decision prints an application packet whose receipt id is the receipt's §10.6 id and
//! whose receipt names only digests of refs the session returned.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use reward_memory::cli::Format;
use reward_memory::recall::session::{self, SessionKey, StoredSession};
use reward_memory::wire::json::Value;

const SESSION_REF: &str = "rms_0123456789abcdef0123456789abcdef";
const SESSION: &[u8] =
    include_bytes!("../../fixtures/apply/session/rms_0123456789abcdef0123456789abcdef.json");
const KEY: &[u8] = include_bytes!("../../fixtures/apply/recall-session.key");

fn stored() -> &'static StoredSession {
    static STORED: OnceLock<StoredSession> = OnceLock::new();
    STORED.get_or_init(|| {
        let key = SessionKey::parse(KEY).expect("the fixture key");
        session::decode(SESSION, SESSION_REF, &key).expect("the fixture session")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    let Ok(packet) = reward_memory::recall::decision::apply_input(&source, stored()) else {
        return;
    };
    let receipt = packet
        .get("receipt")
        .and_then(Value::as_object)
        .expect("an application packet carries its receipt");
    let id = reward_memory::recall::application_receipt_id(receipt).expect("receipt id");
    assert_eq!(
        packet.get("application_receipt_id").and_then(Value::as_str),
        Some(id.as_str())
    );
    let known: Vec<String> = stored()
        .session
        .items
        .iter()
        .map(|i| reward_memory::wire::digest::short16(&i.memory_ref))
        .collect();
    for d in receipt
        .get("memory_ref_digests")
        .and_then(Value::as_array)
        .unwrap_or_default()
    {
        assert!(
            d.as_str().is_some_and(|d| known.iter().any(|k| k == d)),
            "a receipt digest the session did not return: {d:?}"
        );
    }
    let _ = reward_memory::output::render(&packet, Format::Json);
    let _ = reward_memory::output::render(&packet, Format::Markdown);
});

//! ISO timestamps as `datetime.fromisoformat` reads them: no input panics, the field
//! guard accepts exactly the stripped text the parser accepts, and accepts its own
//! output again at the same instant.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::wire::json::Value;
use reward_memory::wire::timestamp;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = timestamp::parse_aware(reward_memory::wire::pyfmt::py_strip(text));
    let field = timestamp::timestamp_field(Some(&Value::from(text)), "created_at");
    assert_eq!(parsed.is_ok(), field.is_ok(), "field guard and parser agree");
    if let Ok((normalized, instant)) = field {
        let again = timestamp::timestamp_field(Some(&Value::from(normalized)), "created_at")
            .expect("a normalized timestamp is accepted again");
        assert_eq!(again.1, instant);
    }
});

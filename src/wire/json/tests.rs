//! Unit and property tests of the JSON value, parser and printers, against Python's
//! behaviour: layouts, escapes, error wording, dict semantics and the memory bounds.

use super::*;

/// A list made item by item while printing.
struct Numbers(Vec<i64>);

impl JsonItems for Numbers {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn for_each_item(&self, each: &mut dyn FnMut(&Json<'_>)) {
        for n in &self.0 {
            let inner = Numbers((0..*n).collect());
            each(&Json::Object(&[
                ("n", Json::Int(*n)),
                ("below", Json::Items(&inner)),
            ]));
        }
    }
}

#[test]
fn items_print_as_the_list_they_stand_for() {
    for numbers in [vec![], vec![0], vec![2, 0, 3]] {
        let items = Numbers(numbers);
        let json = Json::Object(&[("items", Json::Items(&items)), ("after", Json::Null)]);
        let value = json.to_value();
        for opts in [
            DumpOptions::PRETTY,
            DumpOptions::CANONICAL,
            DumpOptions::LEGACY_RAW,
        ] {
            let mut printed = String::new();
            write_json(&mut printed, &json, opts);
            assert_eq!(printed, dumps(&value, opts), "{opts:?}");
        }
    }
    let mut plain = Vec::new();
    assert!(!write_canonical_plain(
        &mut plain,
        &Json::Items(&Numbers(vec![1]))
    ));
}

#[test]
fn a_path_reaches_through_nested_objects_only() {
    let value = parse(r#"{"scope": {"project_ref": "p", "ids": [1]}, "n": 1}"#).expect("json");
    let map = value.as_object().expect("object");
    assert_eq!(map.at(&["scope", "project_ref"]), Some(&Value::from("p")));
    assert_eq!(map.at(&["n"]), Some(&Value::Int(1)));
    assert_eq!(map.at(&["n", "x"]), None);
    assert_eq!(map.at(&["scope", "ids", "0"]), None);
    assert_eq!(map.at(&["scope", "missing"]), None);
    assert_eq!(map.at(&[]), None);
}

#[test]
fn str_items_keeps_the_strings_of_a_list() {
    let value = parse(r#"{"l": ["a", 1, "b", null], "s": "a"}"#).expect("json");
    assert_eq!(str_items(value.get("l")), ["a", "b"]);
    assert!(str_items(value.get("s")).is_empty());
    assert!(str_items(None).is_empty());
    assert_eq!(str_items(Some(&str_list(&["x", "y"]))), ["x", "y"]);
}

fn roundtrip(text: &str) -> String {
    dumps(&parse(text).expect("valid"), DumpOptions::PRETTY)
}

#[test]
fn pretty_matches_python_layout() {
    let v = parse(r#"{"a": [1, 2.5, {"b": []}], "c": {}, "d": "é\n"}"#).expect("valid");
    assert_eq!(
        dumps(&v, DumpOptions::PRETTY),
        "{\n  \"a\": [\n    1,\n    2.5,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {},\n  \"d\": \"é\\n\"\n}"
    );
}

#[test]
fn duplicate_key_keeps_first_position_and_last_value() {
    let v = parse(r#"{"a": 1, "b": 2, "a": 3}"#).expect("valid");
    assert_eq!(dumps(&v, DumpOptions::CANONICAL), r#"{"a":3,"b":2}"#);
    let keys: Vec<&str> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["a", "b"]);
}

#[test]
fn built_maps_keep_dict_semantics_for_repeated_keys() {
    let map = Map::from_pairs(vec![
        (Text::from("a"), Value::Int(1)),
        (Text::from("bb"), Value::Int(2)),
        (Text::from("a"), Value::Int(3)),
    ]);
    let keys: Vec<&str> = map.keys().collect();
    assert_eq!(keys, ["a", "bb"]);
    assert_eq!(map.get("a"), Some(&Value::Int(3)));
    let distinct = Map::from_pairs(vec![
        (Text::from("b"), Value::Int(1)),
        (Text::from("a"), Value::Int(2)),
    ]);
    assert_eq!(distinct.keys().collect::<Vec<_>>(), ["b", "a"]);
}

#[test]
fn large_objects_keep_dict_semantics_past_the_index_threshold() {
    let n = Map::INDEXED_AT * 3;
    let mut text = String::from("{");
    for i in 0..n {
        text.push_str(&format!("\"k{i}\": {i}, "));
    }
    // Repeat every third key with a new value, then close.
    for i in (0..n).step_by(3) {
        text.push_str(&format!("\"k{i}\": \"again{i}\", "));
    }
    text.push_str("\"last\": true}");
    let v = parse(&text).expect("valid");
    let map = v.as_object().expect("object");
    assert!(map.is_indexed());
    assert_eq!(map.len(), n + 1);
    let keys: Vec<&str> = map.keys().collect();
    assert_eq!(keys[0], "k0");
    assert_eq!(keys[n - 1], format!("k{}", n - 1));
    assert_eq!(keys[n], "last");
    assert_eq!(map.get("k3"), Some(&Value::from("again3")));
    assert_eq!(map.get("k4"), Some(&Value::Int(4)));
    let mut small: Map = map.iter().map(|(k, v)| (k, v.clone())).take(3).collect();
    assert!(!small.is_indexed());
    assert_eq!(small.remove("k1"), Some(Value::Int(1)));
    assert_eq!(small.keys().collect::<Vec<_>>(), ["k0", "k2"]);
}

#[test]
fn map_insert_switches_to_the_index_and_keeps_order() {
    let mut map = Map::new();
    for i in 0..Map::INDEXED_AT * 2 {
        map.insert(format!("k{i}"), i);
    }
    map.insert("k0", "first");
    assert!(map.is_indexed());
    assert_eq!(map.keys().next(), Some("k0"));
    assert_eq!(map.get("k0"), Some(&Value::from("first")));
    assert_eq!(map.remove("k1"), Some(Value::Int(1)));
    assert_eq!(map.keys().nth(1), Some("k2"));
}

#[test]
fn refuses_documents_too_dense_to_hold() {
    // Chains of one-element arrays take about 16 bytes per input byte.
    let chain = format!("{}{}", "[".repeat(500), "]".repeat(500));
    let doc = format!("[{}]", vec![chain.as_str(); 2000].join(","));
    let err = parse(&doc).expect_err("too dense");
    assert!(
        err.message.starts_with("JSON document too dense"),
        "{}",
        err.message
    );
    // A flat list of one-digit numbers (12 bytes per byte) and ordinary shapes pass.
    let digits = format!("[{}]", vec!["0"; 200_000].join(","));
    assert!(parse(&digits).is_ok());
    let objects = format!("[{}]", vec![r#"{"a":"b"}"#; 100_000].join(","));
    assert!(parse(&objects).is_ok());
}

#[test]
fn refuses_nesting_deeper_than_the_limit_without_recursing_further() {
    let deep = "[".repeat(100_000);
    assert_eq!(
        parse(&deep).expect_err("deep").message,
        "JSON nesting deeper than 512 levels is not supported"
    );
    let ok = format!("{}{}", "[".repeat(512), "]".repeat(512));
    assert!(parse(&ok).is_ok());
}

#[test]
fn values_stay_compact() {
    assert_eq!(std::mem::size_of::<Value>(), 24);
    assert_eq!(std::mem::size_of::<Map>(), 16);
}

#[test]
fn keeps_ints_apart_from_floats() {
    assert_eq!(
        roundtrip("[1, 1.0, -0.0, 1e16, 1E-6, 100000000000000000000]"),
        "[\n  1,\n  1.0,\n  -0.0,\n  1e+16,\n  1e-06,\n  100000000000000000000\n]"
    );
}

#[test]
fn refuses_integers_longer_than_python_allows() {
    assert!(parse(&"9".repeat(4300)).is_ok());
    let err = parse(&format!("[-{}]", "1".repeat(4301))).expect_err("too long");
    assert_eq!(
        err.message,
        "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit"
    );
}

#[test]
fn accepts_python_literals() {
    assert_eq!(
        dumps(
            &parse("[NaN, Infinity, -Infinity, 1e999]").expect("valid"),
            DumpOptions::CANONICAL
        ),
        "[NaN,Infinity,-Infinity,Infinity]"
    );
}

#[test]
fn escapes_like_python() {
    let v = Value::Str(("\"\\\u{1}\u{7f}é😀/\u{2028}".to_owned()).into());
    assert_eq!(
        dumps(&v, DumpOptions::PRETTY),
        "\"\\\"\\\\\\u0001\u{7f}é😀/\u{2028}\""
    );
    assert_eq!(
        dumps(&v, DumpOptions::LEGACY_ASCII),
        "\"\\\"\\\\\\u0001\\u007f\\u00e9\\ud83d\\ude00/\\u2028\""
    );
}

#[test]
fn error_messages_match_python() {
    let cases = [
        ("", "Expecting value: line 1 column 1 (char 0)"),
        (
            "{'a': 1}",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (
            "{\"a\" 1}",
            "Expecting ':' delimiter: line 1 column 6 (char 5)",
        ),
        ("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"),
        ("{} x", "Extra data: line 1 column 4 (char 3)"),
        (
            "\"abc",
            "Unterminated string starting at: line 1 column 1 (char 0)",
        ),
        ("\"a\\x\"", "Invalid \\escape: line 1 column 3 (char 2)"),
        ("\n\n  [", "Expecting value: line 3 column 4 (char 5)"),
        ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
        (
            "\u{feff}{}",
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
        ),
        (
            "\"é\u{1}\"",
            "Invalid control character at: line 1 column 3 (char 2)",
        ),
        (
            "\"\\u12\"",
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
        ),
        (
            "{\"a\":1,}",
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
        ),
        ("1.", "Extra data: line 1 column 2 (char 1)"),
        ("[-]", "Expecting value: line 1 column 2 (char 1)"),
        ("01", "Extra data: line 1 column 2 (char 1)"),
    ];
    for (text, message) in cases {
        assert_eq!(
            parse(text).expect_err(text).message,
            message,
            "input {text:?}"
        );
    }
}

#[test]
fn utf8_errors_match_python_codec() {
    assert_eq!(
        decode_utf8(b"\xff{}").expect_err("invalid").message,
        "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"
    );
}

#[test]
fn merge_keeps_left_positions() {
    let a = crate::obj! {"x" => 1, "y" => 2};
    let b = crate::obj! {"z" => 3, "x" => 4};
    let keys: Vec<String> = a
        .merged(&b)
        .iter()
        .map(|(k, v)| format!("{k}={}", dumps(v, DumpOptions::CANONICAL)))
        .collect();
    assert_eq!(keys, ["x=4", "y=2", "z=3"]);
}

mod props {
    use proptest::prelude::*;

    use crate::wire::json::escape::{ESCAPE_ASCII, ESCAPE_RAW, plain_prefix};
    use crate::wire::json::{
        DumpOptions, Json, Map, Value, dumps, parse, write_canonical_plain,
        write_canonical_plain_fields, write_json, write_string,
    };

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::Float),
            "\\PC{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::vec(("[a-z\\u{e9}\\u{1f600}]{0,6}", inner), 0..6)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map>())),
            ]
        })
    }

    /// Python's escaping, one character at a time: the definition the fast printer keeps.
    fn escape_per_char(s: &str, ensure_ascii: bool) -> String {
        let mut out = String::from('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || (ensure_ascii && (c as u32) > 0x7e) => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// A leaf of the borrowed shapes digested records are made of.
    #[derive(Debug, Clone)]
    enum Leaf {
        Null,
        Bool(bool),
        Int(i64),
        Float(f64),
        Str(String),
        Strs(Vec<String>),
    }

    impl Leaf {
        fn json(&self) -> Json<'_> {
            match self {
                Leaf::Null => Json::Null,
                Leaf::Bool(b) => Json::Bool(*b),
                Leaf::Int(i) => Json::Int(*i),
                Leaf::Float(f) => Json::Float(*f),
                Leaf::Str(s) => Json::Str(s),
                Leaf::Strs(items) => Json::Strs(items),
            }
        }
    }

    fn leaf() -> impl Strategy<Value = Leaf> {
        // Mostly plain text, sometimes a character that must be escaped.
        let text = "[a-z0-9_.:\\-]{0,8}|[a-z\"\\\\\u{1}\u{e9}\u{7f}]{0,4}";
        prop_oneof![
            Just(Leaf::Null),
            any::<bool>().prop_map(Leaf::Bool),
            any::<i64>().prop_map(Leaf::Int),
            prop_oneof![any::<f64>(), 0.0..1.0f64].prop_map(Leaf::Float),
            text.prop_map(Leaf::Str),
            prop::collection::vec(text, 0..4).prop_map(Leaf::Strs),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Where the plain canonical writer answers, its bytes are the canonical
        /// printer's; sorted plain records always get an answer.
        #[test]
        fn plain_canonical_writer_matches_the_printer(
            outer in prop::collection::vec(("[a-z_\"]{0,6}", leaf()), 0..8),
            inner in prop::collection::vec(("[a-z_]{0,6}", leaf()), 0..5),
            sort in any::<bool>(),
        ) {
            let mut inner: Vec<(String, Leaf)> = inner;
            let mut outer: Vec<(String, Leaf)> = outer;
            if sort {
                inner.sort_by(|a, b| a.0.cmp(&b.0));
                inner.dedup_by(|a, b| a.0 == b.0);
                outer.sort_by(|a, b| a.0.cmp(&b.0));
                outer.dedup_by(|a, b| a.0 == b.0);
            }
            let inner_entries: Vec<(&str, Json<'_>)> =
                inner.iter().map(|(k, v)| (k.as_str(), v.json())).collect();
            let mut entries: Vec<(&str, Json<'_>)> =
                outer.iter().map(|(k, v)| (k.as_str(), v.json())).collect();
            entries.push(("~nested", Json::Object(&inner_entries)));
            let value = Json::Object(&entries);
            let mut printed = String::new();
            write_json(&mut printed, &value, DumpOptions::CANONICAL);
            let mut fast = Vec::new();
            let answered = write_canonical_plain(&mut fast, &value);
            if answered {
                prop_assert_eq!(std::str::from_utf8(&fast).ok(), Some(printed.as_str()));
            }
            let plain = |s: &str| !s.contains(['"', '\\']) && !s.chars().any(|c| c < ' ');
            let leaf_plain = |l: &Leaf| match l {
                Leaf::Str(s) => plain(s),
                Leaf::Strs(items) => items.iter().all(|s| plain(s)),
                Leaf::Float(f) => f.is_finite(),
                _ => true,
            };
            let all_plain = outer.iter().chain(&inner).all(|(k, v)| plain(k) && leaf_plain(v));
            let sorted_strictly = |list: &[(String, Leaf)]| list.windows(2).all(|w| w[0].0 < w[1].0);
            if sort && all_plain && sorted_strictly(&outer) && sorted_strictly(&inner)
                && outer.last().is_none_or(|(k, _)| k.as_str() < "~nested")
            {
                prop_assert!(answered);
            }
        }

        /// A static field table is written as the general plain writer writes the same
        /// object, and answers exactly when it does.
        #[test]
        fn field_table_writer_matches_the_plain_writer(
            leaves in prop::collection::vec(leaf(), 0..6),
        ) {
            const KEYS: [&str; 6] = ["a", "application_id", "b_c", "scope", "zeta", "~"];
            let entries: Vec<(&'static str, Json<'_>)> =
                KEYS.iter().zip(&leaves).map(|(k, v)| (*k, v.json())).collect();
            let mut general = Vec::new();
            let general_answer = write_canonical_plain(&mut general, &Json::Object(&entries));
            let mut fields = Vec::new();
            let fields_answer = write_canonical_plain_fields(&mut fields, &entries);
            prop_assert_eq!(fields_answer, general_answer);
            if general_answer {
                prop_assert_eq!(fields, general);
            }
        }

        /// The byte-run printer escapes exactly like the per-character definition.
        #[test]
        fn string_escaping_matches_the_per_character_rules(s in "(\\PC|[\\x00-\\x1f\\x7f\"\\\\])*") {
            for ensure_ascii in [false, true] {
                let mut out = String::new();
                write_string(&mut out, &s, ensure_ascii);
                prop_assert_eq!(out, escape_per_char(&s, ensure_ascii));
            }
        }

        /// Repeated keys keep Python's dict semantics (first position, last value) at
        /// any object size, whether or not the parser's seen-key mask flags them.
        #[test]
        fn repeated_keys_keep_first_position_and_last_value(
            keys in prop::collection::vec("[a-c]{0,3}|[a-z_]{20,30}", 0..60)
        ) {
            let mut text = String::from("{");
            let mut expected: Vec<(String, usize)> = Vec::new();
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                text.push_str(&format!("\"{key}\": {i}"));
                match expected.iter_mut().find(|(k, _)| k == key) {
                    Some(slot) => slot.1 = i,
                    None => expected.push((key.clone(), i)),
                }
            }
            text.push('}');
            let parsed = parse(&text).expect("valid");
            let map = parsed.as_object().expect("object");
            let got: Vec<(String, usize)> = map
                .iter()
                .map(|(k, v)| match v {
                    Value::Int(i) => (k.to_owned(), usize::try_from(*i).unwrap_or(usize::MAX)),
                    _ => (k.to_owned(), usize::MAX),
                })
                .collect();
            prop_assert_eq!(got, expected);
        }

        /// The word-at-a-time scan stops exactly where the byte-by-byte rule does.
        #[test]
        fn plain_prefix_stops_at_the_first_byte_to_escape(
            s in "[a-z ~\u{7f}\u{e9}\u{1f600}\"\\\\\u{0}-\u{1f}]{0,40}"
        ) {
            for ensure_ascii in [false, true] {
                let table = if ensure_ascii { &ESCAPE_ASCII } else { &ESCAPE_RAW };
                let want = s.bytes().position(|b| table[usize::from(b)]).unwrap_or(s.len());
                prop_assert_eq!(plain_prefix(s.as_bytes(), ensure_ascii), want);
            }
        }

        /// Every printer's output parses back to the same value (key order included for
        /// the insertion-order printers).
        #[test]
        fn printed_values_parse_back(v in value()) {
            for opts in [DumpOptions::PRETTY, DumpOptions::LEGACY_RAW, DumpOptions::LEGACY_ASCII] {
                let text = dumps(&v, opts);
                let back = parse(&text).expect("printed JSON parses");
                if !opts.sort_keys {
                    prop_assert_eq!(&back, &v);
                }
                prop_assert_eq!(dumps(&back, opts), text);
            }
        }
    }
}

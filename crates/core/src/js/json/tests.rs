//! Tests of the JSON model: parsing and stringifying with JavaScript's
//! semantics (numbers, escapes, key order), and round-trip properties.

use super::*;
use proptest::prelude::*;

fn js(s: &str) -> JsStr {
    JsStr::from(s)
}

fn round_trip(text: &str) -> Result<String, JsonError> {
    parse(text).map(|v| stringified(&v).to_string_lossy())
}

/// `JSON.stringify(JSON.parse(text))` as printed by Node 20.
const NODE_ROUND_TRIPS: &[(&str, &str)] = &[
    (
        "{\"b\":1,\"2\":2,\"a\":3,\"1\":4}",
        "{\"1\":4,\"2\":2,\"b\":1,\"a\":3}",
    ),
    ("{\"a\":1,\"a\":2}", "{\"a\":2}"),
    ("{\"x\":1,\"y\":2,\"x\":3}", "{\"x\":3,\"y\":2}"),
    ("[1e21,-0,0.1,1e-7,5e-324]", "[1e+21,0,0.1,1e-7,5e-324]"),
    ("\"\\ud800\"", "\"\\ud800\""),
    ("\"\\udfff\"", "\"\\udfff\""),
    ("\"\\u2028\\u2029\"", "\"\u{2028}\u{2029}\""),
    ("\"\u{2028}\u{2029}\"", "\"\u{2028}\u{2029}\""),
    ("\"\\u007f\"", "\"\u{7f}\""),
    ("\"\u{7f}\"", "\"\u{7f}\""),
    (
        "{\"4294967295\":1,\"4294967294\":2}",
        "{\"4294967294\":2,\"4294967295\":1}",
    ),
    (
        "\"\u{1f600}\u{65e5}\u{672c}\u{8a9e}\"",
        "\"\u{1f600}\u{65e5}\u{672c}\u{8a9e}\"",
    ),
    ("\"\\ud83d\\ude00\"", "\"\u{1f600}\""),
    ("\"\\uD83D\\uDE00\"", "\"\u{1f600}\""),
    ("\"\\udc00\\ud800\"", "\"\\udc00\\ud800\""),
    ("\"\\ud800\\ud800\\udc00\"", "\"\\ud800\u{10000}\""),
    ("\"\\ud83d\"", "\"\\ud83d\""),
    ("\"x\\ude00\"", "\"x\\ude00\""),
    (
        "\" \\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\\\/\"",
        "\" \\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\"",
    ),
    (
        "\"\\u0001\\u0010\\u001F\\u0020\\u0041\"",
        "\"\\u0001\\u0010\\u001f A\"",
    ),
    (
        "{\"01\":1,\"1\":2,\"-1\":3,\"1.0\":4,\"0\":5,\" 1\":6,\"\":7}",
        "{\"0\":5,\"1\":2,\"01\":1,\"-1\":3,\"1.0\":4,\" 1\":6,\"\":7}",
    ),
    (
        "{\"10\":1,\"9\":2,\"100\":3,\"b\":4,\"a\":5,\"4294967296\":6}",
        "{\"9\":2,\"10\":1,\"100\":3,\"b\":4,\"a\":5,\"4294967296\":6}",
    ),
    (
        "[1.0,1E2,1e+2,1e-2,-0.0,0e0,123456789012345678901234567890]",
        "[1,100,100,0.01,0,0,1.2345678901234568e+29]",
    ),
    ("1e400", "null"),
    ("-1e400", "null"),
    ("[1e-400,-1e-400]", "[0,0]"),
    (" \t\n\u{d}[ 1 , 2 ] \n", "[1,2]"),
    ("{\"__proto__\":1}", "{\"__proto__\":1}"),
    (
        "{\"a\":{\"b\":[{\"c\":null}]},\"d\":true,\"e\":false}",
        "{\"a\":{\"b\":[{\"c\":null}]},\"d\":true,\"e\":false}",
    ),
    ("\"\\u00e9\\u00E9\u{e9}\"", "\"\u{e9}\u{e9}\u{e9}\""),
    ("[]", "[]"),
    ("{}", "{}"),
    ("[[]]", "[[]]"),
    ("[{}]", "[{}]"),
    ("[[],{},\"\",0]", "[[],{},\"\",0]"),
    ("{ \"a\" : [ ] , \"b\" : { } }", "{\"a\":[],\"b\":{}}"),
    ("\"/\"", "\"/\""),
    ("\"\\/\"", "\"/\""),
    ("0", "0"),
    ("-0", "0"),
    ("\"a\"", "\"a\""),
    ("true", "true"),
    ("false", "false"),
    ("null", "null"),
    (
        "[9007199254740993,0.30000000000000004,1.7976931348623157e308,2.2250738585072011e-308]",
        "[9007199254740992,0.30000000000000004,1.7976931348623157e+308,2.225073858507201e-308]",
    ),
    (
        "[100,1e2,1.5e300,-123.456e-10,1E-7,0.000001,1e20]",
        "[100,100,1.5e+300,-1.23456e-8,1e-7,0.000001,100000000000000000000]",
    ),
    (
        "{\"b\":1,\"a\":2,\"b\":3,\"1\":4,\"a\":5,\"0\":6,\"1\":7}",
        "{\"0\":6,\"1\":7,\"b\":3,\"a\":5}",
    ),
    ("{\"\\u0061\":1,\"a\":2}", "{\"a\":2}"),
    (
        "{\"\\ud800\":1,\"\\ud800\":2,\"\\udc00\":3}",
        "{\"\\ud800\":2,\"\\udc00\":3}",
    ),
];

#[test]
fn parse_then_stringify_matches_node() {
    for &(text, want) in NODE_ROUND_TRIPS {
        assert_eq!(round_trip(text).as_deref(), Ok(want), "for {text:?}");
        let value = parse(text).unwrap();
        assert_eq!(
            stringify_len(&value),
            stringified(&value).len(),
            "for {text:?}"
        );
        let mut out = js("prefix:");
        stringify(&value, &mut out);
        assert_eq!(out.to_string_lossy(), format!("prefix:{want}"));
    }
}

/// Texts Node 20's `JSON.parse` rejects (its message in the comment).
const NODE_REJECTS: &[&str] = &[
    "[1,]",              // Unexpected token ']', "[1,]" is not valid JSON
    "{\"a\":1,}",        // Expected double-quoted property name in JSON at position 7
    "01",                // Unexpected number in JSON at position 1
    "1.",                // Unterminated fractional number in JSON at position 2
    ".5",                // Unexpected token '.', ".5" is not valid JSON
    "+1",                // Unexpected token '+', "+1" is not valid JSON
    "-",                 // No number after minus sign in JSON at position 1
    "1e",                // Exponent part is missing a number in JSON at position 2
    "1e+",               // Exponent part is missing a number in JSON at position 3
    "\"\\x\"",           // Bad escaped character in JSON at position 2
    "\"\\u12\"",         // Bad Unicode escape in JSON at position 5
    "\"\\u12G4\"",       // Bad Unicode escape in JSON at position 5
    "'a'",               // Unexpected token ''', "'a'" is not valid JSON
    "[1 2]",             // Expected ',' or ']' after array element in JSON at position 3
    "{\"a\" 1}",         // Expected ':' after property name in JSON at position 5
    "{a:1}",             // Expected property name or '}' in JSON at position 1
    "tru",               // Unexpected end of JSON input
    "nul",               // Unexpected end of JSON input
    "NaN",               // "NaN" is not valid JSON
    "Infinity",          // "Infinity" is not valid JSON
    "",                  // Unexpected end of JSON input
    "   ",               // Unexpected end of JSON input
    "\"abc",             // Unterminated string in JSON at position 4
    "\"a\tb\"",          // Bad control character in string literal in JSON at position 2
    "\"a\nb\"",          // Bad control character in string literal in JSON at position 2
    "\"a\u{0}b\"",       // Bad control character in string literal in JSON at position 2
    "\"\u{1f}\"",        // Bad control character in string literal in JSON at position 1
    "\u{feff}1",         // Unexpected token '﻿', "﻿1" is not valid JSON
    "1 2",               // Unexpected non-whitespace character after JSON at position 2
    "[1]]",              // Unexpected non-whitespace character after JSON at position 3
    "{}}",               // Unexpected non-whitespace character after JSON at position 2
    "\u{a0}1",           // Unexpected token ' ', " 1" is not valid JSON
    "\u{b}1",            // Unexpected token '', "1" is not valid JSON
    "-01",               // Unexpected number in JSON at position 2
    "1.e5",              // Unterminated fractional number in JSON at position 2
    "0x10",              // Unexpected non-whitespace character after JSON at position 1
    "\"\\U0041\"",       // Bad escaped character in JSON at position 2
    "[",                 // Unexpected end of JSON input
    "{\"a\":1",          // Expected ',' or '}' after property value in JSON at position 6
    "{\"a\"",            // Expected ':' after property name in JSON at position 4
    "{\"a\":}",          // Unexpected token '}', "{"a":}" is not valid JSON
    "[,1]",              // Unexpected token ',', "[,1]" is not valid JSON
    "[1,,2]",            // Unexpected token ',', "[1,,2]" is not valid JSON
    "{,}",               // Expected property name or '}' in JSON at position 1
    "{\"a\":1 \"b\":2}", // Expected ',' or '}' after property value in JSON at position 7
    "[\"a\":1]",         // Expected ',' or ']' after array element in JSON at position 4
    "{\"a\",1}",         // Expected ':' after property name in JSON at position 4
    "truex",             // Unexpected non-whitespace character after JSON at position 4
    "nullnull",          // Unexpected non-whitespace character after JSON at position 4
    "-a",                // No number after minus sign in JSON at position 1
    "--1",               // No number after minus sign in JSON at position 1
    "1e5.5",             // Unexpected non-whitespace character after JSON at position 3
    "\"\\",              // Unexpected end of JSON input
    "\"\\u",             // Bad Unicode escape in JSON at position 3
    "\"\\ud800\\u\"",    // Bad Unicode escape in JSON at position 9
    "[-]",               // No number after minus sign in JSON at position 2
    "[1e]",              // Exponent part is missing a number in JSON at position 3
    "undefined",         // "undefined" is not valid JSON
    "\u{2028}1",         // Unexpected token ' ', " 1" is not valid JSON
    "{\"a\":1}x",        // Unexpected non-whitespace character after JSON at position 7
    "\"\u{1f600}\" x",   // Unexpected non-whitespace character after JSON at position 5
    "/**/1",             // Unexpected token '/', "/**/1" is not valid JSON
];

#[test]
fn rejects_what_node_rejects() {
    for &text in NODE_REJECTS {
        assert!(parse(text).is_err(), "{text:?} should not parse");
    }
}

#[test]
fn errors_say_what_and_where_in_utf16_units() {
    let err = |text: &str| parse(text).unwrap_err();
    assert_eq!(
        err("[1,]"),
        JsonError {
            kind: JsonErrorKind::UnexpectedChar(']'),
            position: 3
        }
    );
    assert_eq!(
        err("[1,]").to_string(),
        "unexpected character ']' in JSON at position 3"
    );
    assert_eq!(err("\"😀\" x").position, 5);
    assert_eq!(err("[\"日本\",é]").kind, JsonErrorKind::UnexpectedChar('é'));
    assert_eq!(err("[\"日本\",é]").position, 6);
    assert_eq!(err("").kind, JsonErrorKind::UnexpectedEnd);
    assert_eq!(err("{\"a\":1").kind, JsonErrorKind::UnexpectedEnd);
    assert_eq!(err("{\"a\":1").position, 6);
    assert_eq!(err("\"abc").kind, JsonErrorKind::UnexpectedEnd);
    assert_eq!(err("\"\\x\"").kind, JsonErrorKind::BadEscape);
    assert_eq!(err("\"\\x\"").position, 2);
    assert_eq!(err("\"\\u12G4\"").kind, JsonErrorKind::BadEscape);
    assert_eq!(err("\"\\u12G4\"").position, 5);
    assert_eq!(err("\"a\tb\"").kind, JsonErrorKind::ControlCharacter);
    assert_eq!(err("\"a\tb\"").position, 2);
    assert_eq!(err("1 2").kind, JsonErrorKind::UnexpectedChar('2'));
    assert_eq!(err("1 2").position, 2);
    assert_eq!(
        err("\u{feff}1").kind,
        JsonErrorKind::UnexpectedChar('\u{feff}')
    );
}

#[test]
fn strings_keep_lone_surrogates_and_pairs_as_units() {
    let s = |text: &str| parse(text).unwrap().as_str().unwrap().as_units().to_vec();
    assert_eq!(s(r#""\ud800""#), [0xD800]);
    assert_eq!(s(r#""\uD83D\uDE00""#), [0xD83D, 0xDE00]);
    assert_eq!(s(r#""😀""#), [0xD83D, 0xDE00]);
    assert_eq!(s(r#""\ude00\ud83d""#), [0xDE00, 0xD83D]);
    assert_eq!(s(r#""a\u0000b""#), [0x61, 0, 0x62]);
    assert_eq!(s("\"日\u{7f}\u{2028}\""), [0x65E5, 0x7F, 0x2028]);
    assert_eq!(
        s(r#""\"\\\/\b\f\n\r\t""#),
        [0x22, 0x5C, 0x2F, 8, 12, 10, 13, 9]
    );
}

#[test]
fn numbers_parse_like_javascript() {
    let n = |text: &str| parse(text).unwrap().as_f64().unwrap();
    assert!(n("-0").is_sign_negative() && n("-0") == 0.0);
    assert!(n("0").is_sign_positive());
    assert_eq!(n("1e400"), f64::INFINITY);
    assert_eq!(n("-1e400"), f64::NEG_INFINITY);
    assert_eq!(n("1e-400"), 0.0);
    assert_eq!(n("0.1"), 0.1);
    assert_eq!(n("9007199254740993"), 9007199254740992.0);
    assert_eq!(n("2.2250738585072011e-308"), 2.225073858507201e-308);
    assert_eq!(n("123456789012345678901234567890"), 1.2345678901234568e29);
    assert_eq!(n("5e-324"), 5e-324);
    assert_eq!(n("1E+2"), 100.0);
}

#[test]
fn accessors() {
    let v = parse(r#"{"s":"x","n":2.5,"b":true,"z":null,"a":[1,"2"],"o":{"k":[]}}"#).unwrap();
    assert!(v.get("s").unwrap().as_str().unwrap().eq_str("x"));
    assert_eq!(v.get("n").and_then(Json::as_f64), Some(2.5));
    assert_eq!(v.get("b").and_then(Json::as_bool), Some(true));
    assert!(v.get("z").unwrap().is_null());
    assert_eq!(
        v.get("a").and_then(Json::as_array).map(<[Json]>::len),
        Some(2)
    );
    assert_eq!(
        v.get("o").and_then(|o| o.get("k")),
        Some(&Json::Array(vec![]))
    );
    assert_eq!(v.get("missing"), None);
    assert_eq!(v.get("s").unwrap().get("s"), None);
    assert_eq!(v.get("n").unwrap().as_str(), None);
    assert_eq!(v.get("s").unwrap().as_f64(), None);
    assert_eq!(v.get("s").unwrap().as_object(), None);
    assert_eq!(v.as_array(), None);
    let o = v.as_object().unwrap();
    assert_eq!(o.len(), 6);
    assert!(!o.is_empty());
    let keys: Vec<String> = o.keys().map(JsStr::to_string_lossy).collect();
    assert_eq!(keys, ["s", "n", "b", "z", "a", "o"]);
    assert_eq!(o.get_js(&js("n")), Some(&Json::Number(2.5)));
    assert_eq!(o.iter().count(), 6);
}

#[test]
fn object_keeps_javascript_property_order() {
    let mut o = JsonObject::new();
    for key in [
        "b",
        "10",
        "a",
        "2",
        "4294967295",
        "01",
        "4294967294",
        "0",
        "-1",
    ] {
        o.insert(js(key), Json::Null);
    }
    o.insert(js("b"), Json::Bool(true)); // replaced in place
    o.insert(js("2"), Json::Bool(false));
    let keys: Vec<String> = o.keys().map(JsStr::to_string_lossy).collect();
    assert_eq!(
        keys,
        [
            "0",
            "2",
            "10",
            "4294967294",
            "b",
            "a",
            "4294967295",
            "01",
            "-1"
        ]
    );
    assert_eq!(o.get("b"), Some(&Json::Bool(true)));
    assert_eq!(o.get("2"), Some(&Json::Bool(false)));
    assert_eq!(o.remove("b"), Some(Json::Bool(true)));
    assert_eq!(o.remove("b"), None);
    o.insert(js("b"), Json::Null); // a deleted key comes back at the end
    assert_eq!(
        o.keys().last().map(JsStr::to_string_lossy).as_deref(),
        Some("b")
    );
    let text = stringified(&Json::Object(o)).to_string_lossy();
    // Checked with Node: same keys assigned in the same order.
    assert_eq!(
        text,
        r#"{"0":null,"2":false,"10":null,"4294967294":null,"a":null,"4294967295":null,"01":null,"-1":null,"b":null}"#
    );
}

#[test]
fn big_objects_dedupe_and_order_like_small_ones() {
    // More than 16 keys takes the hashing path of `from_entries`.
    let mut text = String::from("{");
    for i in 0..40 {
        text.push_str(&format!("\"k{}\":{i},\"{}\":{i},", i % 7, (40 - i) % 9));
    }
    text.push_str("\"k3\":\"last\"}");
    // Expected output printed by Node 20 for the same text.
    assert_eq!(
        round_trip(&text).unwrap(),
        r#"{"0":31,"1":39,"2":38,"3":37,"4":36,"5":35,"6":34,"7":33,"8":32,"k0":35,"k1":36,"k2":37,"k3":"last","k4":39,"k5":33,"k6":34}"#
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["[", "{\"a\":", "[{\"a\":"] {
        let err = parse(&open.repeat(100_000)).unwrap_err();
        assert_eq!(err.kind, JsonErrorKind::TooDeep);
    }
    let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
    assert_eq!(round_trip(&ok).unwrap(), ok);
    let too_deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
    let err = parse(&too_deep).unwrap_err();
    assert_eq!(
        err,
        JsonError {
            kind: JsonErrorKind::TooDeep,
            position: MAX_DEPTH
        }
    );
}

#[test]
fn stringify_does_not_recurse() {
    let depth = 100_000;
    let mut v = Json::Null;
    for i in 0..depth {
        v = if i % 2 == 0 {
            Json::Array(vec![v])
        } else {
            Json::Object(JsonObject::from_entries(vec![(js("k"), v)]))
        };
    }
    let len = stringify_len(&v);
    let text = stringified(&v);
    assert_eq!(len, text.len());
    assert_eq!(len, 4 + depth / 2 * (2 + 6));
    assert!(text.to_string_lossy().starts_with("{\"k\":[{\"k\":["));
    // Taken apart by hand: the derived Drop would recurse 100,000 deep.
    loop {
        v = match v {
            Json::Array(mut items) => items.pop().unwrap_or(Json::Null),
            Json::Object(mut o) => o.remove("k").unwrap_or(Json::Null),
            _ => break,
        };
    }
}

#[test]
fn stringify_escapes_like_javascript() {
    let s = |units: &[u16]| {
        stringified(&Json::String(JsStr::from_units(units.to_vec()))).to_string_lossy()
    };
    assert_eq!(s(&[0xD800]), r#""\ud800""#);
    assert_eq!(s(&[0xDBFF, 0x41]), r#""\udbffA""#);
    assert_eq!(s(&[0x41, 0xDFFF]), r#""A\udfff""#);
    assert_eq!(s(&[0xD83D, 0xDE00]), "\"😀\"");
    assert_eq!(s(&[0xDE00, 0xD83D, 0xDE00]), "\"\\ude00😀\"");
    assert_eq!(s(&[0x1B, 0x7F, 0x2028, 0x2F]), "\"\\u001b\u{7f}\u{2028}/\"");
    assert_eq!(s(&[]), r#""""#);
    assert_eq!(
        stringify_len(&Json::String(JsStr::from_units(vec![0xD800, 0x0A]))),
        10
    );
    assert_eq!(
        stringified(&Json::Number(f64::NAN)).to_string_lossy(),
        "null"
    );
    assert_eq!(
        stringified(&Json::Number(f64::NEG_INFINITY)).to_string_lossy(),
        "null"
    );
    assert_eq!(stringified(&Json::Number(-0.0)).to_string_lossy(), "0");
}

fn arb_units() -> impl Strategy<Value = Vec<u16>> {
    let unit = prop_oneof![
        any::<u16>(),
        0xD800u16..0xE000,
        0u16..0x80,
        Just(0x22u16),
        Just(0x5Cu16),
        Just(0x2028u16),
    ];
    proptest::collection::vec(unit, 0..8)
}

fn arb_key() -> impl Strategy<Value = JsStr> {
    prop_oneof![
        arb_units().prop_map(JsStr::from_units),
        (0u64..5_000_000_000).prop_map(|n| js(&n.to_string())),
        (0u64..20).prop_map(|n| js(&n.to_string())),
        proptest::sample::select(vec![
            "0",
            "01",
            "-1",
            "1.0",
            "4294967294",
            "4294967295",
            "a",
            "b",
            ""
        ])
        .prop_map(js),
    ]
}

fn arb_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        (-1000i32..1000).prop_map(f64::from),
        proptest::sample::select(vec![
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            5e-324,
            1e21,
            1e-7,
            1e-6,
            f64::MAX,
            9007199254740993.0,
        ]),
    ]
}

fn arb_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        arb_number().prop_map(Json::Number),
        arb_units().prop_map(|u| Json::String(JsStr::from_units(u))),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            proptest::collection::vec((arb_key(), inner), 0..6)
                .prop_map(|e| Json::Object(JsonObject::from_entries(e))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn stringify_parse_stringify_is_a_fixed_point(v in arb_json()) {
        let text = stringified(&v);
        prop_assert_eq!(stringify_len(&v), text.len());
        // Well-formed stringify escapes lone surrogates, so this is lossless.
        let utf8 = text.to_string_lossy();
        prop_assert_eq!(JsStr::from(utf8.as_str()), text.clone());
        let back = parse(&utf8).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(stringified(&back), text);
    }

    #[test]
    fn from_entries_matches_repeated_insert(
        entries in proptest::collection::vec((arb_key(), any::<i8>()), 0..40)
    ) {
        let entries: Vec<(JsStr, Json)> =
            entries.into_iter().map(|(k, v)| (k, Json::Number(f64::from(v)))).collect();
        let mut one_by_one = JsonObject::new();
        for (k, v) in entries.clone() {
            one_by_one.insert(k, v);
        }
        let built = JsonObject::from_entries(entries);
        prop_assert_eq!(&built, &one_by_one);
        // Array indices first, ascending; the rest after them.
        let idx: Vec<Option<u32>> = built.keys().map(|k| array_index(k.as_units())).collect();
        let n = idx.iter().take_while(|i| i.is_some()).count();
        prop_assert!(idx[n..].iter().all(Option::is_none));
        prop_assert!(idx[..n].windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn parse_never_panics(text in ".{0,40}") {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_json_like_text(
        text in proptest::collection::vec(
            proptest::sample::select(vec![
                "[", "]", "{", "}", ",", ":", "\"", "\\", "u", "d800", "0", "1", "-", ".", "e",
                "+", " ", "\n", "true", "null", "é", "😀", "\u{1}", "a",
            ]),
            0..30,
        ).prop_map(|parts| parts.concat())
    ) {
        if let Ok(v) = parse(&text) {
            let again = stringified(&v).to_string_lossy();
            prop_assert_eq!(round_trip(&again).ok(), Some(again.clone()));
        }
    }
}

#[test]
fn array_index_keys() {
    let idx = |s: &str| array_index(js(s).as_units());
    assert_eq!(idx("0"), Some(0));
    assert_eq!(idx("7"), Some(7));
    assert_eq!(idx("4294967294"), Some(4294967294));
    for not in [
        "",
        "01",
        "00",
        "-1",
        "-0",
        "+1",
        "1.0",
        " 1",
        "1 ",
        "4294967295",
        "4294967296",
        "99999999999",
        "1e3",
        "٣",
    ] {
        assert_eq!(idx(not), None, "{not:?}");
    }
}

/// A tiny deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn gen_ws(rng: &mut Rng, out: &mut String) {
    if rng.below(4) == 0 {
        out.push_str(rng.pick(&[" ", "\t", "\n", "\r", "  \n "]));
    }
}

fn gen_string(rng: &mut Rng, out: &mut String) {
    out.push('"');
    for _ in 0..rng.below(8) {
        match rng.below(6) {
            0 => {
                out.push_str(rng.pick(&["\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\t"]))
            }
            1 => {
                let unit = match rng.below(3) {
                    0 => 0xD800 + rng.below(0x800),
                    1 => rng.below(0x80),
                    _ => rng.below(0x10000),
                };
                let hex = format!("{unit:04x}");
                out.push_str("\\u");
                out.push_str(&if rng.below(2) == 0 {
                    hex.to_uppercase()
                } else {
                    hex
                });
            }
            2 => out.push_str(rng.pick(&[
                "é",
                "日本",
                "😀",
                "\u{2028}",
                "\u{7f}",
                "\u{ffff}",
                "\u{10ffff}",
            ])),
            _ => match char::from(b' ' + rng.below(95) as u8) {
                '"' | '\\' => out.push('x'),
                c => out.push(c),
            },
        }
    }
    out.push('"');
}

fn gen_number(rng: &mut Rng, out: &mut String) {
    match rng.below(4) {
        0 => {
            let x = f64::from_bits(rng.next());
            if x.is_finite() {
                out.push_str(&format!("{x:e}"));
            } else {
                out.push_str("-0");
            }
        }
        1 => out.push_str(&format!("{}", rng.next() as i64 >> rng.below(64))),
        2 => out.push_str(rng.pick(&[
            "0",
            "-0",
            "0.0",
            "1e21",
            "1E+21",
            "1e-7",
            "0.000001",
            "1e400",
            "-1e-400",
            "123.4560",
            "0.1e1",
            "9007199254740993",
            "1.7976931348623157e308",
            "5e-324",
            "2.2250738585072011e-308",
        ])),
        _ => {
            let digits = format!("{}", rng.next());
            let e = rng.below(700) as i32 - 350;
            out.push_str(&format!("{}.{}e{e}", rng.below(10), digits));
        }
    }
}

fn gen_value(rng: &mut Rng, depth: usize, out: &mut String) {
    gen_ws(rng, out);
    match rng.below(if depth > 3 { 4 } else { 7 }) {
        0 => out.push_str(rng.pick(&["true", "false", "null"])),
        1 => gen_number(rng, out),
        2 | 3 => gen_string(rng, out),
        4 | 5 => {
            out.push('{');
            for i in 0..rng.below(6) {
                if i > 0 {
                    out.push(',');
                }
                gen_ws(rng, out);
                let key = rng.pick(&[
                    "a",
                    "b",
                    "0",
                    "1",
                    "10",
                    "2",
                    "01",
                    "-1",
                    "4294967294",
                    "4294967295",
                    "",
                    "é",
                ]);
                if rng.below(3) == 0 {
                    gen_string(rng, out);
                } else {
                    out.push_str(&format!("\"{key}\""));
                }
                gen_ws(rng, out);
                out.push(':');
                gen_value(rng, depth + 1, out);
            }
            out.push('}');
        }
        _ => {
            out.push('[');
            for i in 0..rng.below(6) {
                if i > 0 {
                    out.push(',');
                }
                gen_value(rng, depth + 1, out);
            }
            out.push(']');
        }
    }
    gen_ws(rng, out);
}

/// Compares parse + stringify with Node's `JSON.stringify(JSON.parse(text))`
/// on random texts, a quarter of them corrupted. Skipped without `node`.
#[test]
fn random_texts_match_node() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("node not on PATH: skipping the comparison with JavaScript");
        return;
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut texts = Vec::new();
    for _ in 0..600 {
        let mut text = String::new();
        gen_value(&mut rng, 0, &mut text);
        if rng.below(4) == 0 {
            let mut chars: Vec<char> = text.chars().collect();
            let at = rng.below(chars.len() + 1);
            if rng.below(2) == 0 && at < chars.len() {
                chars.remove(at);
            } else {
                let junk = rng.pick(&[
                    "[", "]", "{", "}", ",", ":", "\"", "\\", "0", "-", ".", "e", " ", "\u{1}",
                    "x", "é", "\u{a0}",
                ]);
                chars.insert(at, junk.chars().next().unwrap());
            }
            text = chars.into_iter().collect();
        }
        texts.push(text);
    }
    let script = "const t=require('fs').readFileSync(0,'utf8').split('\\0');\
        process.stdout.write(t.map(s=>{try{return JSON.stringify(JSON.parse(s))}catch(e){return '\\u0001'}}).join('\\0'))";
    let mut child = Command::new("node")
        .args(["-e", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = texts.join("\0");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success());
    let node_out = String::from_utf8(output.stdout).unwrap();
    let expected: Vec<&str> = node_out.split('\0').collect();
    assert_eq!(expected.len(), texts.len());
    let mut rejected = 0;
    for (text, want) in texts.iter().zip(expected) {
        let ours = match parse(text) {
            Ok(v) => {
                let s = stringified(&v);
                assert_eq!(stringify_len(&v), s.len());
                s.to_string_lossy()
            }
            Err(_) => {
                rejected += 1;
                "\u{1}".to_owned()
            }
        };
        assert_eq!(ours, want, "for {text:?}");
    }
    // The corpus must exercise both outcomes.
    assert!(rejected > 30 && rejected < 300, "{rejected} rejected");
}

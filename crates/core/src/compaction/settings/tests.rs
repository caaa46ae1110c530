//! Tests of the compaction settings: defaults, every field's validation
//! message, the JSON round trip and properties over generated inputs.

use super::*;
use crate::js::json::parse;
use proptest::prelude::*;

fn json(text: &str) -> Json {
    parse(text).expect("test JSON")
}

fn resolve(
    settings: &str,
    model: Option<&str>,
    window: Option<f64>,
) -> Result<CompactionSettings, SettingsError> {
    let model = model.map(JsStr::from);
    resolve_settings(Some(&json(settings)), model.as_ref(), window)
}

fn settings(enabled: bool, reserve_tokens: u64, keep_recent_tokens: u64) -> CompactionSettings {
    CompactionSettings {
        enabled,
        reserve_tokens,
        keep_recent_tokens,
    }
}

const MAX: u64 = MAX_SAFE_INTEGER;

#[test]
fn defaults_are_pis() {
    assert_eq!(DEFAULT, settings(true, 16384, 20000));
    assert_eq!(CompactionSettings::default(), DEFAULT);
    assert_eq!(resolve_settings(None, None, None), Ok(DEFAULT));
    assert_eq!(resolve_settings(Some(&Json::Null), None, None), Ok(DEFAULT));
    assert_eq!(resolve("{}", Some("a/b"), Some(200_000.0)), Ok(DEFAULT));
    // null means "not set", as pi's `?? default` reads it.
    let nulls =
        r#"{"enabled":null,"reserveTokens":null,"keepRecentTokens":null,"modelOverrides":null}"#;
    assert_eq!(resolve(nulls, Some("a/b"), None), Ok(DEFAULT));
    // Unknown keys are ignored.
    let unknown = r#"{"reserveTokens":100,"future":[1],"modelOverrides":{"a/b":{"other":"x"}}}"#;
    assert_eq!(
        resolve(unknown, Some("a/b"), None),
        Ok(settings(true, 100, 20000))
    );
}

#[test]
fn explicit_values_win_even_when_they_equal_the_default() {
    assert_eq!(
        resolve(
            r#"{"enabled":false,"reserveTokens":0,"keepRecentTokens":0}"#,
            None,
            None
        ),
        Ok(settings(false, 0, 0))
    );
    assert_eq!(
        resolve(
            r#"{"reserveTokens":16384,"keepRecentTokens":20000,"enabled":true}"#,
            None,
            None
        ),
        Ok(DEFAULT)
    );
    // An override that restates the default still beats the base value.
    let s = r#"{"reserveTokens":1000,"modelOverrides":{"a/b":{"reserveTokens":16384}}}"#;
    assert_eq!(resolve(s, Some("a/b"), None), Ok(DEFAULT));
    assert_eq!(
        resolve(
            &format!(r#"{{"reserveTokens":{MAX},"keepRecentTokens":-0}}"#),
            None,
            None
        ),
        Ok(settings(true, MAX, 0))
    );
    assert_eq!(
        resolve(r#"{"keepRecentTokens":1e3}"#, None, None),
        Ok(settings(true, 16384, 1000))
    );
}

#[test]
fn overrides_fall_back_field_by_field() {
    let s = r#"{
        "enabled": false, "reserveTokens": 1000, "keepRecentTokens": 2000,
        "modelOverrides": {
            "a/only-keep": { "keepRecentTokens": 500 },
            "a/only-enabled": { "enabled": true },
            "a/all": { "enabled": true, "reserveTokens": 10, "keepRecentTokens": 20 },
            "a/nulls": { "enabled": null, "reserveTokens": null, "keepRecentTokens": 7 },
            "a/none": null,
            "a/empty": {}
        }
    }"#;
    let base = settings(false, 1000, 2000);
    assert_eq!(resolve(s, None, None), Ok(base));
    assert_eq!(resolve(s, Some("a/unknown"), None), Ok(base));
    assert_eq!(
        resolve(s, Some("a/only-keep"), None),
        Ok(settings(false, 1000, 500))
    );
    assert_eq!(
        resolve(s, Some("a/only-enabled"), None),
        Ok(settings(true, 1000, 2000))
    );
    assert_eq!(resolve(s, Some("a/all"), None), Ok(settings(true, 10, 20)));
    assert_eq!(
        resolve(s, Some("a/nulls"), None),
        Ok(settings(false, 1000, 7))
    );
    assert_eq!(resolve(s, Some("a/none"), None), Ok(base));
    assert_eq!(resolve(s, Some("a/empty"), None), Ok(base));
    // Keys match exactly.
    assert_eq!(resolve(s, Some("A/ALL"), None), Ok(base));
    assert_eq!(resolve(s, Some("a/all "), None), Ok(base));
    // Without base values, an override falls back to the defaults.
    let s = r#"{"modelOverrides":{"p/m":{"reserveTokens":4096}}}"#;
    assert_eq!(
        resolve(s, Some("p/m"), None),
        Ok(settings(true, 4096, 20000))
    );
    // Keys with any characters, lone surrogates included.
    let s = r#"{"modelOverrides":{"p/\uD800":{"keepRecentTokens":1}}}"#;
    let key = JsStr::from_units(vec![0x70, 0x2F, 0xD800]);
    assert_eq!(
        resolve_settings(Some(&json(s)), Some(&key), None),
        Ok(settings(true, 16384, 1))
    );
}

/// (settings, error message, whether JavaScript sees a RangeError).
const INVALID: &[(&str, &str, bool)] = &[
    ("[]", "settings must be an object, got an array", false),
    ("5", "settings must be an object, got a number", false),
    (r#""x""#, "settings must be an object, got a string", false),
    ("true", "settings must be an object, got a boolean", false),
    (
        r#"{"enabled":"yes"}"#,
        "settings.enabled must be a boolean, got a string",
        false,
    ),
    (
        r#"{"enabled":1}"#,
        "settings.enabled must be a boolean, got a number",
        false,
    ),
    (
        r#"{"enabled":[]}"#,
        "settings.enabled must be a boolean, got an array",
        false,
    ),
    (
        r#"{"enabled":{}}"#,
        "settings.enabled must be a boolean, got an object",
        false,
    ),
    (
        r#"{"reserveTokens":-1}"#,
        "settings.reserveTokens must be a non-negative safe integer, got -1",
        true,
    ),
    (
        r#"{"reserveTokens":1.5}"#,
        "settings.reserveTokens must be a non-negative safe integer, got 1.5",
        true,
    ),
    (
        r#"{"reserveTokens":-0.5}"#,
        "settings.reserveTokens must be a non-negative safe integer, got -0.5",
        true,
    ),
    (
        r#"{"reserveTokens":9007199254740992}"#,
        "settings.reserveTokens must be a non-negative safe integer, got 9007199254740992",
        true,
    ),
    (
        r#"{"reserveTokens":1e21}"#,
        "settings.reserveTokens must be a non-negative safe integer, got 1e+21",
        true,
    ),
    (
        r#"{"reserveTokens":5e-324}"#,
        "settings.reserveTokens must be a non-negative safe integer, got 5e-324",
        true,
    ),
    (
        r#"{"reserveTokens":"100"}"#,
        "settings.reserveTokens must be a non-negative safe integer, got a string",
        false,
    ),
    (
        r#"{"reserveTokens":true}"#,
        "settings.reserveTokens must be a non-negative safe integer, got a boolean",
        false,
    ),
    (
        r#"{"reserveTokens":[1]}"#,
        "settings.reserveTokens must be a non-negative safe integer, got an array",
        false,
    ),
    (
        r#"{"keepRecentTokens":-1}"#,
        "settings.keepRecentTokens must be a non-negative safe integer, got -1",
        true,
    ),
    (
        r#"{"keepRecentTokens":0.1}"#,
        "settings.keepRecentTokens must be a non-negative safe integer, got 0.1",
        true,
    ),
    (
        r#"{"keepRecentTokens":{}}"#,
        "settings.keepRecentTokens must be a non-negative safe integer, got an object",
        false,
    ),
    (
        r#"{"modelOverrides":[]}"#,
        "settings.modelOverrides must be an object, got an array",
        false,
    ),
    (
        r#"{"modelOverrides":"a/b"}"#,
        "settings.modelOverrides must be an object, got a string",
        false,
    ),
    (
        r#"{"modelOverrides":false}"#,
        "settings.modelOverrides must be an object, got a boolean",
        false,
    ),
    (
        r#"{"modelOverrides":{"a/b":5}}"#,
        r#"settings.modelOverrides["a/b"] must be an object, got a number"#,
        false,
    ),
    (
        r#"{"modelOverrides":{"a/b":[]}}"#,
        r#"settings.modelOverrides["a/b"] must be an object, got an array"#,
        false,
    ),
    (
        r#"{"modelOverrides":{"a/b":"x"}}"#,
        r#"settings.modelOverrides["a/b"] must be an object, got a string"#,
        false,
    ),
    (
        r#"{"modelOverrides":{"anthropic/claude-sonnet-4-5":{"keepRecentTokens":-1}}}"#,
        r#"settings.modelOverrides["anthropic/claude-sonnet-4-5"].keepRecentTokens must be a non-negative safe integer, got -1"#,
        true,
    ),
    (
        r#"{"modelOverrides":{"a/b":{"reserveTokens":2.5}}}"#,
        r#"settings.modelOverrides["a/b"].reserveTokens must be a non-negative safe integer, got 2.5"#,
        true,
    ),
    (
        r#"{"modelOverrides":{"a\"b\\c\uD800\n":{"enabled":0}}}"#,
        r#"settings.modelOverrides["a\"b\\c\ud800\n"].enabled must be a boolean, got a number"#,
        false,
    ),
    // Base fields are checked before the overrides.
    (
        r#"{"modelOverrides":{"a/b":{"enabled":0}},"keepRecentTokens":-2}"#,
        "settings.keepRecentTokens must be a non-negative safe integer, got -2",
        true,
    ),
];

#[test]
fn every_invalid_value_is_an_error_naming_its_field() {
    for &(input, message, range) in INVALID {
        // Whatever the model: every override is checked.
        for model in [None, Some("a/b"), Some("other/model")] {
            match resolve(input, model, None) {
                Err(e) => {
                    assert_eq!(e.to_string(), message, "for {input}");
                    assert_eq!(e.is_range_error(), range, "for {input}");
                }
                Ok(s) => panic!("{input} resolved to {s:?}"),
            }
        }
    }
    // Numbers JSON cannot carry, from the boundary.
    for (x, text) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        let s = Json::Object(JsonObject::from_entries(vec![(
            JsStr::from("reserveTokens"),
            Json::Number(x),
        )]));
        let e = resolve_settings(Some(&s), None, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("settings.reserveTokens must be a non-negative safe integer, got {text}")
        );
        assert!(e.is_range_error());
    }
}

#[test]
fn an_invalid_context_window_is_an_error() {
    for (window, text) in [
        (0.0, "0"),
        (-0.0, "0"),
        (-1.0, "-1"),
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        let e = resolve("{}", None, Some(window)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("contextWindow must be a positive finite number, got {text}")
        );
        assert!(e.is_range_error());
    }
    // Settings errors come first.
    let e = resolve(r#"{"enabled":0}"#, None, Some(0.0)).unwrap_err();
    assert!(!e.is_range_error());
}

#[test]
fn the_window_must_leave_room_at_its_exact_boundaries() {
    let s = r#"{"reserveTokens":1000,"keepRecentTokens":500}"#;
    let ok = |w: f64| resolve(s, None, Some(w));
    assert_eq!(ok(1501.0), Ok(settings(true, 1000, 500)));
    assert_eq!(ok(1500.5), Ok(settings(true, 1000, 500)));
    assert!(matches!(
        ok(1500.0),
        Err(SettingsError::NothingToSummarize { .. })
    ));
    assert!(matches!(
        ok(1000.5),
        Err(SettingsError::NothingToSummarize { .. })
    ));
    assert!(matches!(
        ok(1000.0),
        Err(SettingsError::ReserveFillsWindow { .. })
    ));
    assert!(matches!(
        ok(999.5),
        Err(SettingsError::ReserveFillsWindow { .. })
    ));
    assert!(matches!(
        ok(0.5),
        Err(SettingsError::ReserveFillsWindow { .. })
    ));
    // With nothing to keep, only the reserve counts.
    let s = r#"{"reserveTokens":1000,"keepRecentTokens":0}"#;
    assert!(resolve(s, None, Some(1000.5)).is_ok());
    assert!(resolve(s, None, Some(1000.0)).is_err());
    let zero = r#"{"reserveTokens":0,"keepRecentTokens":0}"#;
    assert_eq!(resolve(zero, None, Some(0.001)), Ok(settings(true, 0, 0)));
    // The defaults need a window above 36384.
    assert_eq!(resolve("{}", None, Some(36385.0)), Ok(DEFAULT));
    assert!(resolve("{}", None, Some(36384.0)).is_err());
    // Exact above 2^53, where the sum is not a double: 2^53 + 3 < 2^53 + 4.
    let big = format!(r#"{{"reserveTokens":{MAX},"keepRecentTokens":4}}"#);
    assert!(resolve(&big, None, Some(9007199254740996.0)).is_ok());
    assert!(resolve(&big, None, Some(9007199254740994.0)).is_err());
    let max = format!(r#"{{"reserveTokens":{MAX},"keepRecentTokens":{MAX}}}"#);
    assert!(resolve(&max, None, Some(18014398509481984.0)).is_ok());
    assert!(resolve(&max, None, Some(18014398509481982.0)).is_err());
    assert!(resolve(&max, None, Some(f64::MAX)).is_ok());
    // Disabled settings are checked too: manual compaction uses them.
    assert!(resolve(r#"{"enabled":false}"#, None, Some(30000.0)).is_err());
}

#[test]
fn window_errors_name_the_three_numbers_and_where_they_came_from() {
    let e = resolve(
        r#"{"reserveTokens":32000,"keepRecentTokens":1000}"#,
        None,
        Some(32000.0),
    );
    assert_eq!(
        e.unwrap_err().to_string(),
        "settings.reserveTokens (32000) must be less than contextWindow (32000), with room \
         for settings.keepRecentTokens (1000): compaction starts when the context exceeds \
         contextWindow - reserveTokens = 0 tokens, so it would run on every turn"
    );
    let e = resolve("{}", None, Some(32000.0));
    assert_eq!(
        e.unwrap_err().to_string(),
        "the default reserveTokens (16384) + the default keepRecentTokens (20000) = 36384 \
         must be less than contextWindow (32000): compaction starts when the context \
         exceeds contextWindow - reserveTokens = 15616 tokens and keeps the most recent \
         20000, so it would find nothing to summarize"
    );
    let s = r#"{"keepRecentTokens":100,"modelOverrides":{"p/m":{"reserveTokens":8000.0}}}"#;
    let e = resolve(s, Some("p/m"), Some(8000.5)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "settings.modelOverrides[\"p/m\"].reserveTokens (8000) + settings.keepRecentTokens \
         (100) = 8100 must be less than contextWindow (8000.5): compaction starts when the \
         context exceeds contextWindow - reserveTokens = 0.5 tokens and keeps the most \
         recent 100, so it would find nothing to summarize"
    );
    assert!(e.is_range_error());
    let e = resolve(s, Some("p/m"), Some(7999.0)).unwrap_err();
    assert!(e
        .to_string()
        .ends_with("= -1 tokens, so it would run on every turn"));
}

// ---- Properties ------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Slot<T> {
    Absent,
    Null,
    Value(T),
}

impl<T: Copy> Slot<T> {
    fn value(self) -> Option<T> {
        match self {
            Slot::Value(v) => Some(v),
            _ => None,
        }
    }
}

fn arb_slot<T: Copy + std::fmt::Debug>(
    value: impl Strategy<Value = T>,
) -> impl Strategy<Value = Slot<T>> {
    prop_oneof![
        1 => Just(Slot::Absent),
        1 => Just(Slot::Null),
        3 => value.prop_map(Slot::Value),
    ]
}

fn arb_tokens() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..100_000, 0..=MAX, Just(0), Just(MAX)]
}

#[derive(Clone, Copy, Debug)]
struct Layer {
    enabled: Slot<bool>,
    reserve: Slot<u64>,
    keep: Slot<u64>,
}

fn arb_layer() -> impl Strategy<Value = Layer> {
    (
        arb_slot(any::<bool>()),
        arb_slot(arb_tokens()),
        arb_slot(arb_tokens()),
    )
        .prop_map(|(enabled, reserve, keep)| Layer {
            enabled,
            reserve,
            keep,
        })
}

const KEYS: [&str; 3] = ["a/x", "b/y", "c/z"];

#[derive(Clone, Debug)]
struct Input {
    base: Layer,
    overrides: Slot<Vec<(usize, Slot<Layer>)>>,
    model: Option<usize>,
}

fn arb_input() -> impl Strategy<Value = Input> {
    let overrides = prop_oneof![
        1 => Just(Slot::Absent),
        1 => Just(Slot::Null),
        4 => proptest::collection::vec(
            (0..KEYS.len(), prop_oneof![1 => Just(Slot::Null), 4 => arb_layer().prop_map(Slot::Value)]),
            0..4,
        )
        .prop_map(Slot::Value),
    ];
    (
        arb_layer(),
        overrides,
        proptest::option::of(0..KEYS.len() + 1),
    )
        .prop_map(|(base, overrides, model)| Input {
            base,
            overrides,
            model,
        })
}

fn put(o: &mut JsonObject, key: &str, slot: Slot<Json>) {
    match slot {
        Slot::Absent => {}
        Slot::Null => o.insert(JsStr::from(key), Json::Null),
        Slot::Value(v) => o.insert(JsStr::from(key), v),
    }
}

fn map<T>(slot: Slot<T>, f: impl FnOnce(T) -> Json) -> Slot<Json> {
    match slot {
        Slot::Absent => Slot::Absent,
        Slot::Null => Slot::Null,
        Slot::Value(v) => Slot::Value(f(v)),
    }
}

fn layer_json(layer: &Layer) -> JsonObject {
    let mut o = JsonObject::new();
    put(&mut o, "enabled", map(layer.enabled, Json::Bool));
    put(
        &mut o,
        "reserveTokens",
        map(layer.reserve, |n| Json::Number(n as f64)),
    );
    put(
        &mut o,
        "keepRecentTokens",
        map(layer.keep, |n| Json::Number(n as f64)),
    );
    o
}

fn to_json(input: &Input) -> JsonObject {
    let mut o = layer_json(&input.base);
    let overrides = match &input.overrides {
        Slot::Absent => Slot::Absent,
        Slot::Null => Slot::Null,
        Slot::Value(entries) => {
            let mut m = JsonObject::new();
            for (k, layer) in entries {
                // A repeated key: the last one wins, as in JavaScript.
                let v = match layer {
                    Slot::Value(l) => Json::Object(layer_json(l)),
                    _ => Json::Null,
                };
                m.insert(JsStr::from(KEYS[*k]), v);
            }
            Slot::Value(Json::Object(m))
        }
    };
    put(&mut o, "modelOverrides", overrides);
    o
}

/// What resolution must give: the matching override's field, else the
/// base field, else the default.
fn model_of(input: &Input) -> CompactionSettings {
    let matching = match (&input.overrides, input.model) {
        (Slot::Value(entries), Some(m)) => entries
            .iter()
            .rev()
            .find(|(k, _)| *k == m)
            .and_then(|(_, l)| l.value()),
        _ => None,
    };
    let pick = |f: &dyn Fn(&Layer) -> Option<u64>, default: u64| {
        matching
            .as_ref()
            .and_then(f)
            .or_else(|| f(&input.base))
            .unwrap_or(default)
    };
    CompactionSettings {
        enabled: matching
            .and_then(|l| l.enabled.value())
            .or(input.base.enabled.value())
            .unwrap_or(true),
        reserve_tokens: pick(&|l| l.reserve.value(), 16384),
        keep_recent_tokens: pick(&|l| l.keep.value(), 20000),
    }
}

fn model_key(input: &Input) -> Option<JsStr> {
    // Index KEYS.len() names a model without an override.
    input
        .model
        .map(|m| JsStr::from(KEYS.get(m).copied().unwrap_or("none/none")))
}

fn arb_bad_token() -> impl Strategy<Value = Json> {
    prop_oneof![
        (1u64..1_000_000).prop_map(|n| Json::Number(-(n as f64))),
        (0u64..1_000_000).prop_map(|n| Json::Number(n as f64 + 0.5)),
        (1u64..1000).prop_map(|n| Json::Number(MAX as f64 + n as f64 * 2.0)),
        Just(Json::Number(f64::NAN)),
        Just(Json::Number(f64::INFINITY)),
        Just(Json::Number(1e300)),
        Just(Json::from("1")),
        Just(Json::Bool(true)),
        Just(Json::Array(vec![])),
        Just(Json::Object(JsonObject::new())),
    ]
}

fn arb_not_object() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(Json::Array(vec![])),
        Just(Json::from("x")),
        Just(Json::Number(1.0)),
        Just(Json::Bool(false)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn valid_settings_always_resolve(
        input in arb_input(),
        window in proptest::option::of((1.0f64..1e6, any::<bool>())),
    ) {
        let want = model_of(&input);
        let settings = Json::Object(to_json(&input));
        // A window comfortably above the sum, sometimes fractional.
        let window = window.map(|(extra, frac)| {
            let sum = (want.reserve_tokens + want.keep_recent_tokens) as f64;
            let w = sum * 1.25 + extra;
            if frac { w } else { w.ceil() }
        });
        let got = resolve_settings(Some(&settings), model_key(&input).as_ref(), window);
        prop_assert_eq!(got, Ok(want));
    }

    #[test]
    fn a_window_without_room_always_errors(input in arb_input(), fraction in 0.0f64..=1.0) {
        let want = model_of(&input);
        let settings = Json::Object(to_json(&input));
        let sum = want.reserve_tokens + want.keep_recent_tokens;
        // At most the sum: above 2^53, round the sum down to a double first.
        let exact = if sum > 1 << 53 { sum - sum % 4 } else { sum };
        let window = exact as f64 * fraction;
        let got = resolve_settings(Some(&settings), model_key(&input).as_ref(), Some(window));
        let e = got.unwrap_err();
        prop_assert!(e.is_range_error());
        if window <= 0.0 {
            prop_assert!(matches!(e, SettingsError::InvalidContextWindow { .. }), "{:?}", e);
        } else if want.reserve_tokens as f64 >= window {
            prop_assert!(matches!(e, SettingsError::ReserveFillsWindow { .. }), "{:?}", e);
        } else {
            prop_assert!(matches!(e, SettingsError::NothingToSummarize { .. }), "{:?}", e);
        }
    }

    #[test]
    fn one_invalid_value_always_errors_naming_it(
        input in arb_input(),
        target in 0usize..8,
        key in 0..KEYS.len(),
        bad_token in arb_bad_token(),
        not_object in arb_not_object(),
    ) {
        let mut settings = to_json(&input);
        let field = ["enabled", "reserveTokens", "keepRecentTokens"][target % 3];
        let bad = if field == "enabled" { Json::Number(1.0) } else { bad_token.clone() };
        let name = match target {
            0..=2 => {
                settings.insert(JsStr::from(field), bad);
                format!("settings.{field} ")
            }
            3..=5 => {
                // An override for `key` (whether or not it is the model's).
                let mut layer = JsonObject::new();
                layer.insert(JsStr::from(field), bad);
                let mut overrides = match settings.get("modelOverrides") {
                    Some(Json::Object(m)) => m.clone(),
                    _ => JsonObject::new(),
                };
                overrides.insert(JsStr::from(KEYS[key]), Json::Object(layer));
                settings.insert(JsStr::from("modelOverrides"), Json::Object(overrides));
                // A base error would be reported first.
                for f in ["enabled", "reserveTokens", "keepRecentTokens"] {
                    settings.remove(f);
                }
                format!("settings.modelOverrides[\"{}\"].{field} ", KEYS[key])
            }
            6 => {
                settings.insert(JsStr::from("modelOverrides"), not_object.clone());
                "settings.modelOverrides must be an object".to_owned()
            }
            _ => {
                let mut overrides = JsonObject::new();
                overrides.insert(JsStr::from(KEYS[key]), not_object.clone());
                settings.insert(JsStr::from("modelOverrides"), Json::Object(overrides));
                for f in ["enabled", "reserveTokens", "keepRecentTokens"] {
                    settings.remove(f);
                }
                format!("settings.modelOverrides[\"{}\"] must be an object", KEYS[key])
            }
        };
        let settings = Json::Object(settings);
        let got = resolve_settings(Some(&settings), model_key(&input).as_ref(), Some(1e18));
        let e = got.unwrap_err();
        prop_assert!(e.to_string().starts_with(&name), "{} does not name {}", e, name);
    }

    #[test]
    fn arbitrary_json_never_panics(
        settings in arb_json(),
        model in proptest::option::of(proptest::sample::select(vec!["a/x", "", "b/y"])),
        window in proptest::option::of(any::<f64>()),
    ) {
        let model = model.map(JsStr::from);
        let _ = resolve_settings(Some(&settings), model.as_ref(), window);
    }
}

fn arb_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<f64>().prop_map(Json::Number),
        (0u64..=MAX + 2).prop_map(|n| Json::Number(n as f64)),
        Just(Json::from("a/x")),
    ];
    let key = proptest::sample::select(vec![
        "enabled",
        "reserveTokens",
        "keepRecentTokens",
        "modelOverrides",
        "a/x",
        "b/y",
    ]);
    leaf.prop_recursive(4, 48, 5, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            proptest::collection::vec((key.clone(), inner), 0..6).prop_map(|e| {
                Json::Object(JsonObject::from_entries(
                    e.into_iter().map(|(k, v)| (JsStr::from(k), v)).collect(),
                ))
            }),
        ]
    })
}

#[test]
fn a_model_is_a_key_string_or_an_object() {
    use crate::js::options::tests::{Fields, Js};
    use crate::js::options::Reader;
    let read = |value: Js, fields: Vec<(&'static str, Js)>| {
        let o = Fields::new(fields);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options.model",
            get: &get,
        };
        model_info(&value, &r, |t: &&str| JsStr::from(*t)).map_err(|e| e.to_string())
    };
    assert_eq!(read(Js::Undefined, vec![]), Ok(ModelInfo::default()));
    assert_eq!(read(Js::Null, vec![]), Ok(ModelInfo::default()));
    let got = read(Js::Str("anthropic/claude"), vec![]).unwrap();
    assert_eq!(
        (got.key.unwrap().to_string_lossy(), got.context_window),
        ("anthropic/claude".into(), None)
    );
    let got = read(
        Js::Obj,
        vec![
            ("provider", Js::Str("openai")),
            ("id", Js::Str("gpt")),
            ("contextWindow", Js::Num(8000.0)),
        ],
    )
    .unwrap();
    assert_eq!(
        (got.key.unwrap().to_string_lossy(), got.context_window),
        ("openai/gpt".into(), Some(8000.0))
    );
    assert_eq!(
        read(Js::Num(1.0), vec![]),
        Err(
            "options.model must be a \"provider/modelId\" string or a model object, got a number"
                .into()
        )
    );
    assert_eq!(
        read(
            Js::Obj,
            vec![("provider", Js::Str("p")), ("id", Js::Undefined)]
        ),
        Err("options.model.id must be a string, got undefined".into())
    );
    assert_eq!(
        read(
            Js::Obj,
            vec![
                ("provider", Js::Str("p")),
                ("id", Js::Str("i")),
                ("contextWindow", Js::Null)
            ]
        ),
        Err("options.model.contextWindow must be a number, got null".into())
    );
}

#[test]
fn resolve_options_give_the_window_or_the_models_own() {
    use crate::js::options::tests::{Fields, Js};
    use crate::js::options::Reader;
    let o = Fields::new(vec![("model", Js::Obj), ("contextWindow", Js::Undefined)]);
    let get = |k| o.get(k);
    let r = Reader {
        root: "options",
        get: &get,
    };
    let own = |_| {
        Ok(ModelInfo {
            key: None,
            context_window: Some(5.0),
        })
    };
    assert_eq!(model_options(&Js::Obj, &r, own).unwrap().1, Some(5.0));
    assert_eq!(*o.reads.borrow(), ["model", "contextWindow"]);
    let o = Fields::new(vec![("contextWindow", Js::Num(7.0))]);
    let get = |k| o.get(k);
    let r = Reader {
        root: "options",
        get: &get,
    };
    assert_eq!(model_options(&Js::Obj, &r, own).unwrap().1, Some(7.0));
    assert_eq!(
        model_options(&Js::Null, &r, own).unwrap(),
        (ModelInfo::default(), None)
    );
    assert_eq!(
        model_options(&Js::Bool(true), &r, own)
            .unwrap_err()
            .to_string(),
        "options must be an object, got a boolean"
    );
}

#[test]
fn non_finite_token_counts_are_range_errors_not_defaults() {
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut o = JsonObject::new();
        o.insert("reserveTokens".into(), Json::Number(x));
        let e = resolve_settings(Some(&Json::Object(o)), None, Some(200000.0)).unwrap_err();
        assert!(e.is_range_error());
        assert_eq!(
            e.to_string(),
            format!(
                "settings.reserveTokens must be a non-negative safe integer, got {}",
                number_to_string(x)
            )
        );
    }
}

#[test]
fn the_window_given_wins_then_the_models_then_the_current_one() {
    let with = ModelInfo {
        key: None,
        context_window: Some(200_000.0),
    };
    let without = ModelInfo::default();
    assert_eq!(with.window(Some(8_000.0), Some(1.0)), Ok(8_000.0));
    assert_eq!(with.window(None, Some(1.0)), Ok(200_000.0));
    assert_eq!(without.window(None, Some(32_000.0)), Ok(32_000.0));
    assert_eq!(without.window(None, None), Err(NO_CONTEXT_WINDOW));
}

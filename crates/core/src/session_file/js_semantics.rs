//! The bits of JavaScript's value semantics pi's loader relies on without
//! saying so: truthiness, `String.prototype.trim`, the number a value turns
//! into when compared with `<`, and identity of ids as `Map` keys.

use crate::js::json::{stringified, Json};
use crate::js::number::parse_decimal;
use crate::js::string::{ascii_string, JsStr};

/// JavaScript's WhiteSpace and LineTerminator code points (what `trim` removes).
pub fn is_js_whitespace(unit: u16) -> bool {
    matches!(
        unit,
        0x09..=0x0D
            | 0x20
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            | 0xFEFF
    )
}

/// `String.prototype.trim` over code units.
pub fn trim_units(units: &[u16]) -> &[u16] {
    let start = units
        .iter()
        .position(|&u| !is_js_whitespace(u))
        .unwrap_or(units.len());
    let end = units
        .iter()
        .rposition(|&u| !is_js_whitespace(u))
        .map_or(start, |i| i + 1);
    units.get(start..end).unwrap_or_default()
}

/// [`is_js_whitespace`] for a char (all JavaScript whitespace is in the
/// BMP, so char and code unit agree).
pub fn is_js_whitespace_char(c: char) -> bool {
    u16::try_from(u32::from(c)).is_ok_and(is_js_whitespace)
}

/// `String.prototype.trim` on UTF-8 text.
pub fn trim_str(text: &str) -> &str {
    text.trim_matches(is_js_whitespace_char)
}

/// `Boolean(value)`.
pub fn truthy(value: Option<&Json>) -> bool {
    match value {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(x)) => *x != 0.0 && !x.is_nan(),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(_) | Json::Object(_)) => true,
    }
}

/// StringToNumber: what `Number(text)` gives, NaN for anything else.
fn string_to_number(units: &[u16]) -> f64 {
    // A numeric literal is ASCII.
    let Some(text) = ascii_string(trim_units(units)) else {
        return f64::NAN;
    };
    if text.is_empty() {
        return 0.0;
    }
    let radix = |prefix: [&str; 2], base: u32| -> Option<f64> {
        let digits = prefix.iter().find_map(|p| text.strip_prefix(p))?;
        if digits.is_empty() {
            return Some(f64::NAN);
        }
        digits.chars().try_fold(0.0, |acc: f64, c| {
            c.to_digit(base)
                .map(|d| acc * f64::from(base) + f64::from(d))
                .or(Some(f64::NAN))
        })
    };
    if let Some(x) = radix(["0x", "0X"], 16)
        .or_else(|| radix(["0o", "0O"], 8))
        .or_else(|| radix(["0b", "0B"], 2))
    {
        return x;
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(&text);
    if unsigned == "Infinity" {
        return if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    // StrDecimalLiteral: digits with an optional point and exponent.
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (unsigned, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(int) && all_digits(frac) && !(int.is_empty() && frac.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    if !mantissa_ok || !exponent_ok {
        return f64::NAN;
    }
    parse_decimal(&text)
}

/// The number `value` becomes on one side of `<` with a number on the
/// other (ToPrimitive, then ToNumber). Arrays become the string of their
/// elements; nested single-element arrays are unwrapped without recursion.
pub fn to_number(value: &Json) -> f64 {
    let mut value = value;
    loop {
        return match value {
            Json::Null => 0.0,
            Json::Bool(b) => f64::from(u8::from(*b)),
            Json::Number(x) => *x,
            Json::String(s) => string_to_number(s.as_units()),
            Json::Object(_) => f64::NAN, // "[object Object]"
            Json::Array(items) => match items.as_slice() {
                [] => 0.0,           // ""
                [Json::Null] => 0.0, // "" too
                [Json::Bool(_)] => f64::NAN,
                [single] => {
                    value = single;
                    continue;
                }
                _ => f64::NAN, // "a,b"
            },
        };
    }
}

/// A short description of a value for error messages.
pub fn describe(value: Option<&Json>) -> String {
    match value {
        None => "undefined".into(),
        Some(Json::Null) => "null".into(),
        Some(Json::Bool(_)) => "a boolean".into(),
        Some(Json::Number(_)) => "a number".into(),
        Some(Json::String(_)) => "a string".into(),
        Some(Json::Array(_)) => "an array".into(),
        Some(Json::Object(_)) => "an object".into(),
    }
}

/// The JSON text of a value, shortened for an error message.
pub fn quote_for_error(value: &Json) -> String {
    const MAX: usize = 60;
    let text = stringified(value).to_string_lossy();
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// An entry id as a key of pi's `Map` (SameValueZero), which is also what
/// `===` between ids means here.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Undefined,
    Null,
    Bool(bool),
    /// The bits of the number, with -0 folded into 0.
    Number(u64),
    String(JsStr),
    /// A JSON object or array: equal only to itself, as objects are.
    Object(usize),
    /// An id pi's version-1 migration assigns; equal to no id in the file.
    Generated(usize),
}

impl Key {
    /// The key of a property value; `objects` numbers object identities.
    pub fn of(value: Option<&Json>, objects: &mut usize) -> Key {
        match value {
            None => Key::Undefined,
            Some(Json::Null) => Key::Null,
            Some(Json::Bool(b)) => Key::Bool(*b),
            Some(Json::Number(x)) => Key::Number((*x + 0.0).to_bits()),
            Some(Json::String(s)) => Key::String(s.clone()),
            Some(Json::Array(_) | Json::Object(_)) => {
                *objects += 1;
                Key::Object(*objects)
            }
        }
    }

    /// Whether `if (key)` takes the branch.
    pub fn is_truthy(&self) -> bool {
        match self {
            Key::Undefined | Key::Null => false,
            Key::Bool(b) => *b,
            Key::Number(bits) => {
                let x = f64::from_bits(*bits);
                x != 0.0 && !x.is_nan()
            }
            Key::String(s) => !s.is_empty(),
            Key::Object(_) | Key::Generated(_) => true,
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::js::json::parse;

    #[test]
    fn trims_javascript_whitespace() {
        assert_eq!(trim_str("\u{feff} \u{a0}{}\u{2028}\t"), "{}");
        assert_eq!(trim_str("\u{85}x"), "\u{85}x"); // NEL is not JS whitespace
        let units: Vec<u16> = "\u{3000}a b\u{205f}".encode_utf16().collect();
        assert_eq!(trim_units(&units), &[0x61, 0x20, 0x62]);
        assert!(trim_units(&[0x20, 0x0A]).is_empty());
    }

    #[test]
    fn truthiness() {
        for (text, want) in [
            ("0", false),
            ("-0", false),
            ("\"\"", false),
            ("null", false),
            ("false", false),
            ("1", true),
            ("\"0\"", true),
            ("[]", true),
            ("{}", true),
        ] {
            assert_eq!(truthy(Some(&parse(text).unwrap())), want, "{text}");
        }
        assert!(!truthy(None));
    }

    /// `Number(JSON.parse(text))`-like values, as `version < 2` sees them.
    #[test]
    fn numbers_from_values_like_javascript() {
        let n = |text: &str| to_number(&parse(text).unwrap());
        assert_eq!(n("3"), 3.0);
        assert_eq!(n("\"2\""), 2.0);
        assert_eq!(n("\" 2 \\n\""), 2.0);
        assert_eq!(n("\"\""), 0.0);
        assert_eq!(n("\"0x10\""), 16.0);
        assert_eq!(n("\"0b11\""), 3.0);
        assert_eq!(n("\"0o17\""), 15.0);
        assert_eq!(n("\"1e1\""), 10.0);
        assert_eq!(n("\".5\""), 0.5);
        assert_eq!(n("\"5.\""), 5.0);
        assert_eq!(n("\"-Infinity\""), f64::NEG_INFINITY);
        assert_eq!(n("true"), 1.0);
        assert_eq!(n("null"), 0.0);
        assert_eq!(n("[]"), 0.0);
        assert_eq!(n("[[\"3\"]]"), 3.0);
        assert_eq!(n("[null]"), 0.0);
        for nan in [
            "\"abc\"", "\"1e\"", "\".\"", "\"0x\"", "\"-0x1\"", "\"inf\"", "\"1_0\"", "{}",
            "[1,2]", "[true]", "\"e5\"", "\"+-1\"",
        ] {
            assert!(n(nan).is_nan(), "{nan}");
        }
    }

    #[test]
    fn keys_compare_like_map_keys() {
        let mut objects = 0;
        let mut key = |text: &str| Key::of(Some(&parse(text).unwrap()), &mut objects);
        assert_eq!(key("0"), key("-0"));
        assert_ne!(key("1"), key("\"1\""));
        assert_ne!(key("{}"), key("{}"));
        assert!(!key("0").is_truthy());
        assert!(!key("\"\"").is_truthy());
        assert!(key("{}").is_truthy());
        assert!(key("\"a\"").is_truthy());
        assert!(!Key::of(None, &mut objects).is_truthy());
    }
}

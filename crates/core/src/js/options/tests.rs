//! Native tests of the option readers, with a small stand-in for the
//! engine's values (shared with `compaction::options`' tests).

use super::*;
use std::cell::RefCell;

/// A JavaScript value, as far as the readers look.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Js {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(&'static str),
    Fun(&'static str),
    Obj,
    /// An `AbortSignal`.
    Signal,
}

impl Value for Js {
    type Text = &'static str;
    type Function = &'static str;
    fn is_undefined(&self) -> bool {
        *self == Js::Undefined
    }
    fn is_null(&self) -> bool {
        *self == Js::Null
    }
    fn is_object(&self) -> bool {
        matches!(self, Js::Obj | Js::Fun(_) | Js::Signal)
    }
    fn is_truthy(&self) -> bool {
        match self {
            Js::Undefined | Js::Null => false,
            Js::Bool(b) => *b,
            Js::Num(n) => *n != 0.0 && !n.is_nan(),
            Js::Str(s) => !s.is_empty(),
            Js::Fun(_) | Js::Obj | Js::Signal => true,
        }
    }
    fn number(&self) -> Option<f64> {
        match self {
            Js::Num(n) => Some(*n),
            _ => None,
        }
    }
    fn boolean(&self) -> Option<bool> {
        match self {
            Js::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn text(&self) -> Option<(&'static str, usize)> {
        match self {
            Js::Str(s) => Some((s, s.encode_utf16().count())),
            _ => None,
        }
    }
    fn name(&self) -> Option<String> {
        self.text().map(|(s, _)| s.to_owned())
    }
    fn function(&self) -> Option<&'static str> {
        match self {
            Js::Fun(f) => Some(f),
            _ => None,
        }
    }
    fn is_abort_signal(&self) -> bool {
        *self == Js::Signal
    }
    fn describe(&self) -> String {
        match self {
            Js::Undefined => "undefined".into(),
            Js::Null => "null".into(),
            Js::Bool(_) => "a boolean".into(),
            Js::Num(_) => "a number".into(),
            Js::Str(_) => "a string".into(),
            Js::Fun(_) => "a function".into(),
            Js::Obj | Js::Signal => "an object".into(),
        }
    }
}

/// An options object with these fields (others `undefined`; a field whose
/// value is `Str("THROWS")` has a throwing getter). `reads` records the
/// keys read, in order.
pub(crate) struct Fields {
    pub fields: Vec<(&'static str, Js)>,
    pub reads: RefCell<Vec<&'static str>>,
}

impl Fields {
    pub fn new(fields: Vec<(&'static str, Js)>) -> Fields {
        Fields {
            fields,
            reads: RefCell::new(Vec::new()),
        }
    }

    pub fn get(&self, key: &'static str) -> Result<Js, InputError> {
        self.reads.borrow_mut().push(key);
        match self.fields.iter().find(|(k, _)| *k == key) {
            Some((_, Js::Str("THROWS"))) => Err(InputError::Unreadable {
                path: FieldPath::argument("options").field(key),
                reason: "boom".into(),
            }),
            Some((_, v)) => Ok(v.clone()),
            None => Ok(Js::Undefined),
        }
    }
}

fn message<T: std::fmt::Debug>(r: Result<T, InputError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn each_kind_of_option_has_its_absent_values_and_its_error() {
    let o = Fields::new(vec![
        ("f", Js::Fun("f")),
        ("n", Js::Num(3.0)),
        ("nul", Js::Null),
        ("s", Js::Str("hi")),
        ("e", Js::Str("")),
        ("big", Js::Num(9.1e15)),
        ("t", Js::Str("THROWS")),
    ]);
    let get = |k| o.get(k);
    let r = Reader {
        root: "options",
        get: &get,
    };
    assert_eq!(r.function("f").unwrap(), Some("f"));
    assert_eq!(r.function("nul").unwrap(), None);
    assert_eq!(r.function("missing").unwrap(), None);
    assert_eq!(
        message(r.function("n")),
        "options.n must be a function, got a number"
    );
    assert_eq!(r.number("n").unwrap(), Some(3.0));
    assert_eq!(r.number("missing").unwrap(), None);
    assert_eq!(r.required_number("n").unwrap(), 3.0);
    assert_eq!(
        message(r.required_number("missing")),
        "options.missing must be a number, got undefined"
    );
    // null is not a number here.
    assert_eq!(
        message(r.number("nul")),
        "options.nul must be a number, got null"
    );
    assert_eq!(r.string("e").unwrap(), "");
    assert_eq!(
        message(r.string("nul")),
        "options.nul must be a string, got null"
    );
    assert_eq!(r.text("s").unwrap(), Some("hi"));
    assert_eq!(r.text("e").unwrap(), None);
    assert_eq!(r.text("nul").unwrap(), None);
    assert_eq!(
        message(r.text("n")),
        "options.n must be a string, got a number"
    );
    assert_eq!(r.token_count("n").unwrap(), Some(3));
    assert_eq!(r.token_count("nul").unwrap(), None);
    assert_eq!(
        message(r.token_count("big")),
        "options.big must be a non-negative safe integer, got 9100000000000000"
    );
    // A number out of range is a RangeError's text; another type a TypeError's.
    assert!(r.token_count("big").unwrap_err().is_range());
    assert!(!r.token_count("s").unwrap_err().is_range());
    assert!(r.truthy("s").unwrap());
    assert!(!r.truthy("e").unwrap());
    // A throwing getter is the read's own error.
    assert_eq!(message(r.truthy("t")), "options.t could not be read: boom");
    assert_eq!(message(r.text("t")), "options.t could not be read: boom");
}

#[test]
fn an_options_argument_must_be_an_object() {
    assert!(expect_object("options", &Js::Obj, "an object").is_ok());
    assert_eq!(
        message(expect_object(
            "options",
            &Js::Num(1.0),
            "an object or undefined"
        )),
        "options must be an object or undefined, got a number"
    );
}

#[test]
fn token_counts_are_non_negative_safe_integers() {
    assert_eq!(token_count_of(0.0), Some(0));
    assert_eq!(token_count_of(-0.0), Some(0));
    assert_eq!(token_count_of(42.0), Some(42));
    assert_eq!(
        token_count_of(MAX_SAFE_INTEGER),
        Some(MAX_SAFE_INTEGER as u64)
    );
    for x in [
        -1.0,
        1.5,
        MAX_SAFE_INTEGER + 1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        assert_eq!(token_count_of(x), None, "{x}");
    }
}

#[test]
fn a_number_out_of_range_is_shown_as_javascript_prints_it() {
    let path = || FieldPath::argument("options").field("limit");
    for (n, shown) in [
        (0.0, "0"),
        (-5.0, "-5"),
        (1.5, "1.5"),
        (f64::NAN, "NaN"),
        (1e21, "1e+21"),
    ] {
        let e = out_of_range(path(), "a whole number from 1 to 100", n);
        assert!(e.is_range());
        assert_eq!(
            e.to_string(),
            format!("options.limit must be a whole number from 1 to 100, got {shown}")
        );
    }
}
